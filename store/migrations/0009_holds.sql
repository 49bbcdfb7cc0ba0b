-- A Space's hold (an operator's take-over) and its call for help
-- (docs/api.md, "Take-over"); their events are 0010's.  held_by is the
-- holding principal, held_token the token it took the hold with
-- (revoking that token ends the hold), held_until its deadline (ms since
-- the epoch: BIGINT, an integer in both dialects); hold_pending is a
-- take-over asked while a task still ran: the hold begins once that task
-- has ended.  While held_by is
-- set and hold_pending is 0 the Space reads as held; its status column
-- keeps its own meaning (idle or running).
ALTER TABLE browser_spaces ADD COLUMN held_by TEXT CHECK (length(held_by) <= 64);
ALTER TABLE browser_spaces ADD COLUMN held_token TEXT CHECK (length(held_token) <= 64);
ALTER TABLE browser_spaces ADD COLUMN held_until BIGINT;
ALTER TABLE browser_spaces ADD COLUMN hold_pending INTEGER NOT NULL DEFAULT 0
  CHECK (hold_pending = 0 OR hold_pending = 1);
ALTER TABLE browser_spaces ADD COLUMN help_requested INTEGER NOT NULL DEFAULT 0
  CHECK (help_requested = 0 OR help_requested = 1);
-- The holds in force, for the deadline's sweep.
CREATE INDEX browser_spaces_held ON browser_spaces (held_until)
  WHERE held_by IS NOT NULL;
