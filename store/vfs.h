/*
 * vfs.h: the "spaced" SQLite VFS, which lets a commit leave its WAL sync
 * to the caller (see vfs.c).  Only db.c uses it.
 */
#ifndef ST_VFS_H
#define ST_VFS_H

#define ST_VFS_NAME "spaced"

/* Registers the VFS (not as the default); idempotent.  Returns 0 or -1. */
int st_vfs_register(void);

/* Bytes of WAL writes gathered at most before they go to the file. */
#define ST_VFS_GATHER_MAX (4 * 1024 * 1024)
/* Bytes in one write to the file. */
#define ST_VFS_WRITE_MAX (64 * 1024)

/*
 * Around a COMMIT: the first WAL sync inside the window is not done but
 * noted, and the WAL's writes are gathered.  end writes what was gathered
 * and sets *fd to a descriptor on that WAL file, to fdatasync before
 * anything of the commit is acknowledged, or to -1 when the window
 * deferred nothing.  The descriptor stays open while the database is.
 * end returns -1 when the gathered writes failed: the commit is then not
 * in the file, whatever COMMIT said.
 */
void st_vfs_defer_begin(void);
int st_vfs_defer_end(int *fd);

#endif
