/*
 * vfs.c: the "spaced" SQLite VFS, the default one with a single change:
 * a commit may leave its WAL sync to the caller.
 *
 * At synchronous=FULL a WAL commit ends in an fdatasync of the WAL, and
 * the store's one thread would sit in it, idle, for most of a group's
 * time.  Inside a deferral window (st_vfs_defer_begin/end, around COMMIT)
 * the WAL's sync is only noted; the caller then makes the WAL durable on
 * another thread, through a handle of its own on the same file, while
 * the next group runs.  Nothing of a group may be acknowledged or
 * published before that sync returns, which keeps the store's promise:
 * an acknowledged write survives power loss.  A later group's data reaches
 * the WAL after an earlier group's, so a sync covers every group before
 * it too.
 *
 * Every other sync is done as SQLite asks, in particular a checkpoint's,
 * which syncs the WAL before it copies a page into the database file, and
 * the sync of a new log header (vfs_sync); a window defers one sync at
 * most.
 * The first sync of a WAL file is never deferred either: SQLite syncs the
 * directory with it, so that the file itself survives.
 *
 * Within a window the WAL's writes are also gathered, and reach the file
 * in one write instead of two per page.
 */
#include "vfs.h"

#include <sqlite3.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits.h"

/*
 * A WAL file has a second handle of its own, opened through the VFS below
 * (unix in production), on which another thread makes the log durable:
 * the unix VFS keeps no state of a handle's that another handle's sync
 * would touch, and a VFS below (a test's, that records every sync) sees
 * the deferred sync as the sync it is.
 */
struct vfs_file {
	sqlite3_file base;
	sqlite3_file *real;
	sqlite3_file *sync; /* a WAL file: the handle st_vfs_sync uses */
	/* Those SQLite gave the sync it deferred: set by the loop for each
	 * commit while the acker may be reading them for the one before. */
	atomic_int sync_flags;
	bool synced_once; /* a WAL file: SQLite has synced it for real */
};

/*
 * Within a window, the WAL's writes (two per frame: its header, then its
 * page) gather here and reach the file in one write when the window ends
 * or anything else touches the file.
 */
static _Thread_local struct {
	struct vfs_file *file;
	sqlite3_int64 off; /* of buf[0] in the file */
	unsigned char *buf;
	size_t len, cap;
} pend;

static sqlite3_vfs vfs;
static sqlite3_vfs *root;

/* The deferral window, the store thread's own (the checkpointer's
 * connection never defers). */
static _Thread_local bool deferring;
static _Thread_local struct vfs_file *deferred;

#define REAL(f) (((struct vfs_file *)(f))->real)
#define RM(f) (REAL(f)->pMethods)

/* Writes the gathered WAL bytes through to the file. */
static int
pend_flush(void)
{
	struct vfs_file *p = pend.file;
	int rc = SQLITE_OK;

	if (p == NULL || pend.len == 0)
		return SQLITE_OK;
	/* The unix VFS writes at most 128 KiB a call (it never needs more). */
	for (size_t at = 0; at < pend.len; at += ST_VFS_WRITE_MAX) {
		size_t n = pend.len - at;

		if (n > ST_VFS_WRITE_MAX)
			n = ST_VFS_WRITE_MAX;
		rc = p->real->pMethods->xWrite(p->real, pend.buf + at, (int)n,
		    pend.off + (sqlite3_int64)at);
		if (rc != SQLITE_OK)
			break;
	}
	pend.len = 0;
	pend.file = NULL;
	return rc;
}

/* Before anything else reaches a file, its gathered writes do. */
static int
pend_flush_for(sqlite3_file *f)
{
	return pend.file == (struct vfs_file *)f ? pend_flush() : SQLITE_OK;
}

static bool
pend_gather(struct vfs_file *p, const void *buf, int n, sqlite3_int64 off)
{
	size_t need;

	if (pend.file != NULL &&
	    (pend.file != p || off != pend.off + (sqlite3_int64)pend.len))
		return false;
	need = pend.len + (size_t)n;
	if (need > ST_VFS_GATHER_MAX)
		return false;
	if (need > pend.cap) {
		size_t cap = pend.cap ? pend.cap : 65536;
		unsigned char *b;

		while (cap < need)
			cap *= 2;
		if ((b = realloc(pend.buf, cap)) == NULL)
			return false;
		pend.buf = b;
		pend.cap = cap;
	}
	if (pend.file == NULL) {
		pend.file = p;
		pend.off = off;
	}
	memcpy(pend.buf + pend.len, buf, (size_t)n);
	pend.len += (size_t)n;
	return true;
}

static int
vfs_close(sqlite3_file *f)
{
	struct vfs_file *p = (struct vfs_file *)f;
	int rc = pend_flush_for(f);

	if (rc == SQLITE_OK)
		rc = RM(f)->xClose(p->real);
	else
		RM(f)->xClose(p->real);

	if (p->sync != NULL) {
		if (deferred == p)
			deferred = NULL;
		p->sync->pMethods->xClose(p->sync);
		sqlite3_free(p->sync);
		p->sync = NULL;
	}
	return rc;
}

static int
vfs_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
	int rc = pend_flush_for(f);

	return rc != SQLITE_OK ? rc : RM(f)->xRead(REAL(f), buf, n, off);
}

static int
vfs_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
	struct vfs_file *p = (struct vfs_file *)f;
	int rc;

	if (deferring && p->sync != NULL && n > 0) {
		if (pend_gather(p, buf, n, off))
			return SQLITE_OK;
		if ((rc = pend_flush()) != SQLITE_OK)
			return rc;
		if (pend_gather(p, buf, n, off))
			return SQLITE_OK;
	}
	return RM(f)->xWrite(REAL(f), buf, n, off);
}

static int
vfs_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	int rc = pend_flush_for(f);

	return rc != SQLITE_OK ? rc : RM(f)->xTruncate(REAL(f), size);
}

static int
vfs_sync(sqlite3_file *f, int flags)
{
	struct vfs_file *p = (struct vfs_file *)f;
	/*
	 * When the log starts over, SQLite writes its header at offset 0
	 * and syncs it before the first frame: the header's new salt must be
	 * on the disk before any frame that overwrites the old log, or a disk
	 * that writes the frames first leaves the old header over old frames
	 * and new ones, and recovery replays old frames over a database that
	 * is newer than they are.  That sync is never deferred; the commit's
	 * own sync, next in the window, is.
	 */
	bool header = pend.file == p && pend.off == 0;
	int rc;

	if ((rc = pend_flush_for(f)) != SQLITE_OK)
		return rc;
	/* Only a window's first WAL sync: a second one (a checkpoint's, run
	 * by the same COMMIT) must be real before pages reach the database. */
	if (deferring && deferred == NULL && p->sync != NULL &&
	    p->synced_once && !header) {
		deferred = p;
		atomic_store_explicit(
		    &p->sync_flags, flags, memory_order_relaxed);
		return SQLITE_OK;
	}
	rc = RM(f)->xSync(p->real, flags);
	if (rc == SQLITE_OK)
		p->synced_once = true;
	return rc;
}

static int
vfs_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	int rc = pend_flush_for(f);

	return rc != SQLITE_OK ? rc : RM(f)->xFileSize(REAL(f), size);
}

static int
vfs_lock(sqlite3_file *f, int lock)
{
	return RM(f)->xLock(REAL(f), lock);
}

static int
vfs_unlock(sqlite3_file *f, int lock)
{
	return RM(f)->xUnlock(REAL(f), lock);
}

static int
vfs_check_reserved_lock(sqlite3_file *f, int *out)
{
	return RM(f)->xCheckReservedLock(REAL(f), out);
}

static int
vfs_file_control(sqlite3_file *f, int op, void *arg)
{
	int rc = pend_flush_for(f);

	return rc != SQLITE_OK ? rc : RM(f)->xFileControl(REAL(f), op, arg);
}

static int
vfs_sector_size(sqlite3_file *f)
{
	return RM(f)->xSectorSize(REAL(f));
}

static int
vfs_device_characteristics(sqlite3_file *f)
{
	return RM(f)->xDeviceCharacteristics(REAL(f));
}

static int
vfs_shm_map(
    sqlite3_file *f, int page, int size, int extend, void volatile **out)
{
	return RM(f)->xShmMap(REAL(f), page, size, extend, out);
}

static int
vfs_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
	return RM(f)->xShmLock(REAL(f), offset, n, flags);
}

static void
vfs_shm_barrier(sqlite3_file *f)
{
	RM(f)->xShmBarrier(REAL(f));
}

static int
vfs_shm_unmap(sqlite3_file *f, int delete_flag)
{
	return RM(f)->xShmUnmap(REAL(f), delete_flag);
}

static int
vfs_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **out)
{
	if (RM(f)->iVersion < 3) {
		*out = NULL;
		return SQLITE_OK;
	}
	return RM(f)->xFetch(REAL(f), off, n, out);
}

static int
vfs_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	if (RM(f)->iVersion < 3)
		return SQLITE_OK;
	return RM(f)->xUnfetch(REAL(f), off, p);
}

static const sqlite3_io_methods vfs_methods = {
    .iVersion = 3,
    .xClose = vfs_close,
    .xRead = vfs_read,
    .xWrite = vfs_write,
    .xTruncate = vfs_truncate,
    .xSync = vfs_sync,
    .xFileSize = vfs_file_size,
    .xLock = vfs_lock,
    .xUnlock = vfs_unlock,
    .xCheckReservedLock = vfs_check_reserved_lock,
    .xFileControl = vfs_file_control,
    .xSectorSize = vfs_sector_size,
    .xDeviceCharacteristics = vfs_device_characteristics,
    .xShmMap = vfs_shm_map,
    .xShmLock = vfs_shm_lock,
    .xShmBarrier = vfs_shm_barrier,
    .xShmUnmap = vfs_shm_unmap,
    .xFetch = vfs_fetch,
    .xUnfetch = vfs_unfetch,
};

static int
vfs_open(sqlite3_vfs *v, sqlite3_filename name, sqlite3_file *f, int flags,
    int *out_flags)
{
	struct vfs_file *p = (struct vfs_file *)f;
	int rc;

	(void)v;
	memset(p, 0, sizeof(*p));
	p->real = (sqlite3_file *)&p[1];
	rc = root->xOpen(root, name, p->real, flags, out_flags);
	if (p->real->pMethods == NULL)
		return rc; /* base.pMethods stays NULL: nothing to close */
	p->base.pMethods = &vfs_methods;
	if (rc == SQLITE_OK && (flags & SQLITE_OPEN_WAL) && name != NULL) {
		/* The same file, which SQLite has just created or opened; not
		 * created again, so its directory needs no second sync. */
		int sync_flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_WAL;

		if ((p->sync = sqlite3_malloc(root->szOsFile)) != NULL) {
			memset(p->sync, 0, (size_t)root->szOsFile);
			if (root->xOpen(root, name, p->sync, sync_flags,
			        NULL) != SQLITE_OK) {
				if (p->sync->pMethods != NULL)
					p->sync->pMethods->xClose(p->sync);
				sqlite3_free(p->sync);
				p->sync = NULL;
			}
		}
		if (p->sync == NULL) {
			p->real->pMethods->xClose(p->real);
			p->base.pMethods = NULL;
			return SQLITE_CANTOPEN;
		}
	}
	return rc;
}

int
st_vfs_register(void)
{
	return st_vfs_register_on(NULL);
}

int
st_vfs_register_on(const char *below)
{
	if (root != NULL)
		return 0;
	if ((root = sqlite3_vfs_find(below)) == NULL)
		return -1;
	vfs = *root;
	vfs.szOsFile = (int)sizeof(struct vfs_file) + root->szOsFile;
	vfs.zName = ST_VFS_NAME;
	vfs.pNext = NULL;
	vfs.xOpen = vfs_open;
	if (sqlite3_vfs_register(&vfs, 0) != SQLITE_OK) {
		root = NULL;
		return -1;
	}
	return 0;
}

int
st_vfs_rewrite_log(const char *db_path)
{
	char wal[CM_PATH_MAX + 8];
	sqlite3_file *f;
	sqlite3_int64 size;
	unsigned char *buf;
	int exists = 0, rc;

	if (root == NULL ||
	    snprintf(wal, sizeof(wal), "%s-wal", db_path) >= (int)sizeof(wal))
		return -1;
	if (root->xAccess(root, wal, SQLITE_ACCESS_EXISTS, &exists) !=
	        SQLITE_OK ||
	    !exists)
		return 0;
	if ((f = sqlite3_malloc(root->szOsFile)) == NULL)
		return -1;
	memset(f, 0, (size_t)root->szOsFile);
	if ((buf = malloc(ST_VFS_WRITE_MAX)) == NULL) {
		sqlite3_free(f);
		return -1;
	}
	rc = root->xOpen(
	    root, wal, f, SQLITE_OPEN_READWRITE | SQLITE_OPEN_WAL, NULL);
	if (rc == SQLITE_OK)
		rc = f->pMethods->xFileSize(f, &size);
	for (sqlite3_int64 at = 0; rc == SQLITE_OK && at < size;
	     at += ST_VFS_WRITE_MAX) {
		int n = size - at < ST_VFS_WRITE_MAX ? (int)(size - at)
		                                     : ST_VFS_WRITE_MAX;

		if ((rc = f->pMethods->xRead(f, buf, n, at)) == SQLITE_OK)
			rc = f->pMethods->xWrite(f, buf, n, at);
	}
	if (rc == SQLITE_OK)
		rc = f->pMethods->xSync(f, SQLITE_SYNC_NORMAL);
	if (f->pMethods != NULL)
		f->pMethods->xClose(f);
	sqlite3_free(f);
	free(buf);
	return rc == SQLITE_OK ? 0 : -1;
}

void
st_vfs_defer_begin(void)
{
	deferring = true;
	deferred = NULL;
}

int
st_vfs_defer_end(struct st_sync **sync)
{
	int rc = pend_flush();

	*sync = (struct st_sync *)deferred;
	deferring = false;
	deferred = NULL;
	return rc == SQLITE_OK ? 0 : -1;
}

int
st_vfs_sync(struct st_sync *sync)
{
	struct vfs_file *p = (struct vfs_file *)sync;

	return p->sync->pMethods->xSync(p->sync,
	    atomic_load_explicit(&p->sync_flags, memory_order_relaxed));
}
