/*
 * vfs.h: the "spaced" SQLite VFS, which lets a commit leave its WAL sync
 * to the caller (see vfs.c).  db_sqlite.c uses it, and the loop's acker
 * syncs what a commit left (st_vfs_sync).
 */
#ifndef ST_VFS_H
#define ST_VFS_H

#define ST_VFS_NAME "spaced"

/* Registers the VFS (not as the default) over the default VFS;
 * idempotent.  Returns 0 or -1. */
int st_vfs_register(void);
/*
 * The same over the VFS registered as below (NULL: the default), for tests
 * that put a VFS of their own under the store's (one that records every
 * write and sync, or fails some).  Only the first registration counts:
 * call it before the store opens a database.
 */
int st_vfs_register_on(const char *below);

/*
 * Before SQLite opens the database at db_path: a write-ahead log left
 * there (the last store did not stop cleanly) is written again, every
 * byte as it reads, and synced.  Returns 0 (also when there is none) or
 * -1.
 *
 * A store stops when a sync of the log fails (acker.c), and Linux marks
 * the pages of a failed writeback clean: the next store reads the log's
 * frames from the page cache while the disk may not hold them.  Appending
 * to that log, it would acknowledge writes that a power cut loses, since
 * recovery stops at the first frame that is not on the disk.  Written
 * again, the pages are dirty once more and the sync makes them durable.
 * It needs no new space, so a store still starts on a full disk.
 */
int st_vfs_rewrite_log(const char *db_path);

/* A WAL file whose sync a commit left to the caller. */
struct st_sync;

/* Bytes of WAL writes gathered at most before they go to the file. */
#define ST_VFS_GATHER_MAX (4 * 1024 * 1024)
/* Bytes in one write to the file. */
#define ST_VFS_WRITE_MAX (64 * 1024)

/*
 * Around a COMMIT: the first WAL sync inside the window is not done but
 * noted, and the WAL's writes are gathered.  end writes what was gathered
 * and sets *sync to the WAL file to sync (st_vfs_sync) before anything of
 * the commit is acknowledged, or to NULL when the window deferred nothing.
 * It stays valid while the database is open.  end returns -1 when the
 * gathered writes failed: the commit is then not in the file, whatever
 * COMMIT said.
 */
void st_vfs_defer_begin(void);
int st_vfs_defer_end(struct st_sync **sync);

/*
 * Makes the WAL file durable, as the sync SQLite asked for and the window
 * deferred would have; any thread may call it, beside the one writing
 * the next commit.  Returns SQLITE_OK or SQLite's error code (the file's
 * state is then unknown).
 */
int st_vfs_sync(struct st_sync *sync);

#endif
