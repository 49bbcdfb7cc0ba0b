-- An instance's profile path is absolute, and only a persistent instance
-- has one.  A relative path was once taken as given, so its browser's
-- profile landed in the service's working directory: such a row keeps
-- its mode and its browser keeps its profile under
-- <data_dir>/profiles/instance-<id> from now on, but for a path that is
-- the name of a mode, which is that mode.
UPDATE browser_instances SET profile = '', profile_mode = 'ephemeral'
  WHERE profile = 'ephemeral';
UPDATE browser_instances SET profile = ''
  WHERE profile <> '' AND substr(profile, 1, 1) <> '/';
