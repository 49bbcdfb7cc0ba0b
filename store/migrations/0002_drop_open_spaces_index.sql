-- browser_spaces_open listed the Spaces that are not closed, and so does
-- browser_spaces_active_instance: both are partial on status <> 'closed',
-- and every query of open Spaces is served by the second.  The first only
-- cost each change of a Space's status two more index writes.
DROP INDEX browser_spaces_open;
