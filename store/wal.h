/*
 * wal.h: checkpoints of SQLite's write-ahead log on a thread of their own
 * (see wal.c).  Only db_sqlite.c uses it.
 */
#ifndef ST_WAL_H
#define ST_WAL_H

#include <sqlite3.h>

struct st_wal;

/*
 * Turns off the writer's automatic checkpoint and starts the checkpointer,
 * with its own connection to path.  Returns 0 or -1 (the writer is then
 * as it was).
 */
int st_wal_start(struct st_wal **out, sqlite3 *writer, const char *path);

/* After a commit, outside any deferral window: past CM_WAL_MAX_PAGES the
 * writer checkpoints itself. */
void st_wal_after_commit(struct st_wal *w);

/*
 * For tests that want many checkpoints and log restarts from few writes:
 * checkpoint every checkpoint_pages frames, the writer taking over past
 * max (0: the limits.h values).  Call it before any database opens.
 */
void st_wal_set_pages(int checkpoint_pages, int max);

/* Stops the checkpointer and closes its connection (NULL is a no-op). */
void st_wal_stop(struct st_wal *w);

#endif
