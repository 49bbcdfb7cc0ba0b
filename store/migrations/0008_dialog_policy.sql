-- dialog_policy: how a Space's page answers its dialogs ('accept' or
-- 'dismiss'); NULL, the default, leaves each open until the agent
-- answers it (handle_dialog).  The same text for SQLite and PostgreSQL.
ALTER TABLE browser_spaces ADD COLUMN dialog_policy TEXT
  CHECK (dialog_policy IS NULL OR dialog_policy = 'accept' OR
         dialog_policy = 'dismiss');
