/*
 * powerfs.h: a SQLite VFS for tests that records every write, truncate
 * and sync of a database, its WAL and its journal, so that a power cut
 * can be simulated at any point afterwards (pf_replay_*).
 *
 * It sits on the unix VFS; the store's "spaced" VFS sits on it
 * (st_vfs_register_on(PF_VFS_NAME)).  The files on disk stay what the
 * page cache holds.  The record, an append-only log file, is what the
 * disk holds: a write is durable once a sync of its file that began
 * after it has returned.  The log outlives the process that writes it,
 * so a store that dies (abort) and a store started after it append to
 * the same log, and the test reads it when both are gone.
 *
 * A sync can be made to fail (pf_shared.fail_wal_syncs, in memory shared
 * with the test's other processes): it returns SQLITE_IOERR_FSYNC, and the
 * writes it covered are lost from the disk while the page cache keeps
 * them, as Linux does when writeback fails (the pages are marked clean).
 *
 * Header-only, for one test file; everything is static.
 */
#ifndef SPACED_POWERFS_H
#define SPACED_POWERFS_H

#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define PF_VFS_NAME "powerfs"
#define PF_SECTOR 512

enum pf_kind { PF_MAIN, PF_WAL, PF_JOURNAL, PF_KINDS };
enum pf_op { PF_OPEN, PF_WRITE, PF_TRUNC, PF_SYNC, PF_SYNC_FAIL, PF_DELETE };

/* One record of the log; a write's bytes follow it. */
struct pf_rec {
	uint32_t op;
	uint32_t kind;
	int64_t off;   /* a write's offset, a truncate's size */
	int64_t cover; /* a sync: the log's length when it began */
	uint32_t len;  /* bytes that follow */
	uint32_t pad;
};

/* In memory the test shares with the processes it forks. */
struct pf_shared {
	volatile int fail_wal_syncs; /* every WAL sync fails while set */
};

struct pf_file {
	sqlite3_file base;
	sqlite3_file *real;
	int kind; /* enum pf_kind, or -1: not recorded */
};

static sqlite3_vfs pf_vfs;
static sqlite3_vfs *pf_below;
static pthread_mutex_t pf_mtx = PTHREAD_MUTEX_INITIALIZER;
static int pf_log = -1;
static int64_t pf_log_end;
static struct pf_shared *pf_sh;

#define PF_REAL(f) (((struct pf_file *)(f))->real)
#define PF_RM(f) (PF_REAL(f)->pMethods)

static int
pf_kind_of(int flags)
{
	if (flags & SQLITE_OPEN_MAIN_DB)
		return PF_MAIN;
	if (flags & SQLITE_OPEN_WAL)
		return PF_WAL;
	if (flags & SQLITE_OPEN_MAIN_JOURNAL)
		return PF_JOURNAL;
	return -1;
}

static int
pf_kind_of_name(const char *name)
{
	size_t n = strlen(name);

	if (n > 4 && strcmp(name + n - 4, "-wal") == 0)
		return PF_WAL;
	if (n > 8 && strcmp(name + n - 8, "-journal") == 0)
		return PF_JOURNAL;
	return PF_MAIN;
}

/* The log's length now: where the next record goes. */
static int64_t
pf_mark(void)
{
	int64_t end;

	pthread_mutex_lock(&pf_mtx);
	end = pf_log_end;
	pthread_mutex_unlock(&pf_mtx);
	return end;
}

static void
pf_append(uint32_t op, int kind, int64_t off, int64_t cover, const void *buf,
    uint32_t len)
{
	struct pf_rec r = {op, (uint32_t)kind, off, cover, len, 0};
	struct iovec iov[2] = {{&r, sizeof(r)}, {(void *)buf, len}};
	ssize_t want = (ssize_t)(sizeof(r) + len);

	pthread_mutex_lock(&pf_mtx);
	if (writev(pf_log, iov, len ? 2 : 1) != want)
		abort(); /* a record cut short would be a lie */
	pf_log_end += want;
	pthread_mutex_unlock(&pf_mtx);
}

static int
pf_close(sqlite3_file *f)
{
	int rc = PF_RM(f)->xClose(PF_REAL(f));

	return rc;
}

static int
pf_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
	return PF_RM(f)->xRead(PF_REAL(f), buf, n, off);
}

static int
pf_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
	struct pf_file *p = (struct pf_file *)f;
	int rc = PF_RM(f)->xWrite(p->real, buf, n, off);

	if (rc == SQLITE_OK && p->kind >= 0)
		pf_append(PF_WRITE, p->kind, off, 0, buf, (uint32_t)n);
	return rc;
}

static int
pf_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	struct pf_file *p = (struct pf_file *)f;
	int rc = PF_RM(f)->xTruncate(p->real, size);

	if (rc == SQLITE_OK && p->kind >= 0)
		pf_append(PF_TRUNC, p->kind, size, 0, NULL, 0);
	return rc;
}

static int
pf_sync(sqlite3_file *f, int flags)
{
	struct pf_file *p = (struct pf_file *)f;
	int64_t cover = pf_mark();

	if (p->kind == PF_WAL && pf_sh != NULL && pf_sh->fail_wal_syncs) {
		pf_append(PF_SYNC_FAIL, p->kind, 0, cover, NULL, 0);
		return SQLITE_IOERR_FSYNC;
	}
	/* The log is the disk: a real sync of a recorded file would only
	 * cost time. */
	if (p->kind < 0)
		return PF_RM(f)->xSync(p->real, flags);
	pf_append(PF_SYNC, p->kind, 0, cover, NULL, 0);
	return SQLITE_OK;
}

static int
pf_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return PF_RM(f)->xFileSize(PF_REAL(f), size);
}

static int
pf_lock(sqlite3_file *f, int lock)
{
	return PF_RM(f)->xLock(PF_REAL(f), lock);
}

static int
pf_unlock(sqlite3_file *f, int lock)
{
	return PF_RM(f)->xUnlock(PF_REAL(f), lock);
}

static int
pf_check_reserved_lock(sqlite3_file *f, int *out)
{
	return PF_RM(f)->xCheckReservedLock(PF_REAL(f), out);
}

static int
pf_file_control(sqlite3_file *f, int op, void *arg)
{
	return PF_RM(f)->xFileControl(PF_REAL(f), op, arg);
}

static int
pf_sector_size(sqlite3_file *f)
{
	return PF_RM(f)->xSectorSize(PF_REAL(f));
}

static int
pf_device_characteristics(sqlite3_file *f)
{
	return PF_RM(f)->xDeviceCharacteristics(PF_REAL(f));
}

static int
pf_shm_map(sqlite3_file *f, int page, int size, int extend, void volatile **out)
{
	return PF_RM(f)->xShmMap(PF_REAL(f), page, size, extend, out);
}

static int
pf_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
	return PF_RM(f)->xShmLock(PF_REAL(f), offset, n, flags);
}

static void
pf_shm_barrier(sqlite3_file *f)
{
	PF_RM(f)->xShmBarrier(PF_REAL(f));
}

static int
pf_shm_unmap(sqlite3_file *f, int delete_flag)
{
	return PF_RM(f)->xShmUnmap(PF_REAL(f), delete_flag);
}

/* No memory-mapped reads: every read goes through pf_read. */
static int
pf_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **out)
{
	(void)f;
	(void)off;
	(void)n;
	*out = NULL;
	return SQLITE_OK;
}

static int
pf_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	(void)f;
	(void)off;
	(void)p;
	return SQLITE_OK;
}

static const sqlite3_io_methods pf_methods = {
    .iVersion = 3,
    .xClose = pf_close,
    .xRead = pf_read,
    .xWrite = pf_write,
    .xTruncate = pf_truncate,
    .xSync = pf_sync,
    .xFileSize = pf_file_size,
    .xLock = pf_lock,
    .xUnlock = pf_unlock,
    .xCheckReservedLock = pf_check_reserved_lock,
    .xFileControl = pf_file_control,
    .xSectorSize = pf_sector_size,
    .xDeviceCharacteristics = pf_device_characteristics,
    .xShmMap = pf_shm_map,
    .xShmLock = pf_shm_lock,
    .xShmBarrier = pf_shm_barrier,
    .xShmUnmap = pf_shm_unmap,
    .xFetch = pf_fetch,
    .xUnfetch = pf_unfetch,
};

static int
pf_open(sqlite3_vfs *v, sqlite3_filename name, sqlite3_file *f, int flags,
    int *out_flags)
{
	struct pf_file *p = (struct pf_file *)f;
	int rc;

	(void)v;
	memset(p, 0, sizeof(*p));
	p->real = (sqlite3_file *)&p[1];
	p->kind = name != NULL ? pf_kind_of(flags) : -1;
	rc = pf_below->xOpen(pf_below, name, p->real, flags, out_flags);
	if (p->real->pMethods == NULL)
		return rc;
	p->base.pMethods = &pf_methods;
	if (rc == SQLITE_OK && p->kind >= 0)
		pf_append(PF_OPEN, p->kind, 0, 0, NULL, 0);
	return rc;
}

static int
pf_delete(sqlite3_vfs *v, const char *name, int dir_sync)
{
	int rc;

	(void)v;
	rc = pf_below->xDelete(pf_below, name, dir_sync);
	if (rc == SQLITE_OK)
		pf_append(PF_DELETE, pf_kind_of_name(name), 0, 0, NULL, 0);
	return rc;
}

/*
 * Registers the VFS (not as the default), recording to the log file at
 * log_path (appended to; created when missing).  sh may be NULL.  Call it
 * in the process that will open the database, after st_db_configure.
 */
static int
pf_register(const char *log_path, struct pf_shared *sh)
{
	struct stat st;

	if ((pf_below = sqlite3_vfs_find("unix")) == NULL)
		return -1;
	if ((pf_log = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
	         0600)) < 0 ||
	    fstat(pf_log, &st) != 0)
		return -1;
	pf_log_end = st.st_size;
	pf_sh = sh;
	pf_vfs = *pf_below;
	pf_vfs.zName = PF_VFS_NAME;
	pf_vfs.pNext = NULL;
	pf_vfs.szOsFile = (int)sizeof(struct pf_file) + pf_below->szOsFile;
	pf_vfs.xOpen = pf_open;
	pf_vfs.xDelete = pf_delete;
	return sqlite3_vfs_register(&pf_vfs, 0) == SQLITE_OK ? 0 : -1;
}

/* ---- replay: the disk at a cut --------------------------------------- */

/* A file's bytes. */
struct pf_img {
	unsigned char *buf;
	size_t size, cap;
	bool exists;
};

/* The log, read back, and the disk as of the records replayed so far. */
struct pf_replay {
	unsigned char *log;
	size_t len;
	size_t at;                    /* the next record to replay */
	struct pf_img disk[PF_KINDS]; /* what survives a cut here */
	/* Writes and truncates since the last sync of each file that
	 * covered them: offsets of their records in log. */
	size_t *pend[PF_KINDS];
	size_t n_pend[PF_KINDS], cap_pend[PF_KINDS];
};

static void
pf_img_grow(struct pf_img *m, size_t size)
{
	if (size > m->cap) {
		size_t cap = m->cap ? m->cap : 65536;

		while (cap < size)
			cap *= 2;
		m->buf = realloc(m->buf, cap);
		if (m->buf == NULL)
			abort();
		m->cap = cap;
	}
	if (size > m->size)
		memset(m->buf + m->size, 0, size - m->size);
	m->size = size;
}

/* Applies a write or truncate record to an image; a write only up to
 * keep bytes of it. */
static void
pf_img_apply(
    struct pf_img *m, const struct pf_rec *r, const void *data, size_t keep)
{
	m->exists = true;
	if (r->op == PF_TRUNC) {
		if ((size_t)r->off < m->size)
			m->size = (size_t)r->off;
		else
			pf_img_grow(m, (size_t)r->off);
		return;
	}
	if ((size_t)r->off + keep > m->size)
		pf_img_grow(m, (size_t)r->off + keep);
	memcpy(m->buf + r->off, data, keep);
}

static int
pf_replay_open(struct pf_replay *rp, const char *log_path)
{
	struct stat st;
	int fd;

	memset(rp, 0, sizeof(*rp));
	if ((fd = open(log_path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(fd, &st) != 0 ||
	    (rp->log = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		return -1;
	}
	for (size_t got = 0; got < (size_t)st.st_size;) {
		ssize_t n = read(fd, rp->log + got, (size_t)st.st_size - got);

		if (n <= 0) {
			close(fd);
			return -1;
		}
		got += (size_t)n;
	}
	close(fd);
	/*
	 * The log ends after its last whole record.  A process killed
	 * while it appended (SIGKILL cuts a write to a file short) leaves a
	 * torn one, whose write never completed: as if the power went
	 * before it, so nothing of it is replayed or cut at.
	 */
	rp->len = 0;
	while (rp->len + sizeof(struct pf_rec) <= (size_t)st.st_size) {
		struct pf_rec r;

		memcpy(&r, rp->log + rp->len, sizeof(r));
		if (r.len > (size_t)st.st_size - rp->len - sizeof(r))
			break;
		rp->len += sizeof(r) + r.len;
	}
	return 0;
}

static void
pf_replay_free(struct pf_replay *rp)
{
	for (int k = 0; k < PF_KINDS; k++) {
		free(rp->disk[k].buf);
		free(rp->pend[k]);
	}
	free(rp->log);
	memset(rp, 0, sizeof(*rp));
}

/* The record at offset at (records are not aligned in the log), and
 * where its bytes are. */
static struct pf_rec
pf_rec_at(const struct pf_replay *rp, size_t at, const unsigned char **data)
{
	struct pf_rec r;

	memcpy(&r, rp->log + at, sizeof(r));
	if (data != NULL)
		*data = rp->log + at + sizeof(r);
	return r;
}

/* Where the record after the one at offset at begins. */
static size_t
pf_next(const struct pf_replay *rp, size_t at)
{
	return at + sizeof(struct pf_rec) + pf_rec_at(rp, at, NULL).len;
}

/* Replays one record: the disk as it stands once it has happened. */
static void
pf_replay_step(struct pf_replay *rp)
{
	struct pf_rec rec = pf_rec_at(rp, rp->at, NULL);
	const struct pf_rec *r = &rec;
	int k = (int)r->kind;
	struct pf_img *m = &rp->disk[k];
	size_t keep = 0;

	switch (r->op) {
	case PF_OPEN:
		m->exists = true;
		break;
	case PF_WRITE:
	case PF_TRUNC:
		if (rp->n_pend[k] == rp->cap_pend[k]) {
			rp->cap_pend[k] =
			    rp->cap_pend[k] ? 2 * rp->cap_pend[k] : 256;
			rp->pend[k] = realloc(
			    rp->pend[k], rp->cap_pend[k] * sizeof(size_t));
			if (rp->pend[k] == NULL)
				abort();
		}
		rp->pend[k][rp->n_pend[k]++] = rp->at;
		break;
	case PF_SYNC:
	case PF_SYNC_FAIL:
		/* What the sync covered reaches the disk, or, failed, is lost
		 * from it; what came after it is still pending. */
		for (size_t i = 0; i < rp->n_pend[k]; i++) {
			const unsigned char *data;
			struct pf_rec w = pf_rec_at(rp, rp->pend[k][i], &data);

			if ((int64_t)rp->pend[k][i] >= r->cover) {
				rp->pend[k][keep++] = rp->pend[k][i];
				continue;
			}
			if (r->op == PF_SYNC)
				pf_img_apply(m, &w, data, w.len);
		}
		rp->n_pend[k] = keep;
		break;
	case PF_DELETE:
		m->exists = false;
		m->size = 0;
		rp->n_pend[k] = 0;
		break;
	default:
		abort();
	}
	rp->at = pf_next(rp, rp->at);
}

/* Replays every record that ends at or before offset end. */
static void
pf_replay_to(struct pf_replay *rp, size_t end)
{
	while (rp->at < rp->len && pf_next(rp, rp->at) <= end)
		pf_replay_step(rp);
}

/* A small PRNG, seeded by the test (it prints the seed). */
static uint64_t
pf_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* What a power cut does to the writes pending on a file. */
enum pf_cut {
	PF_CUT_DROP,    /* all lost */
	PF_CUT_TORN,    /* a prefix kept, in order, its last write torn */
	PF_CUT_SCATTER, /* any sectors of any of them kept, in no order */
	PF_CUT_TAIL,    /* the sectors past a random offset kept, not those
	                   before: a disk that wrote back to front */
};
#define PF_CUTS 4

static const char *const pf_cut_name[PF_CUTS] = {
    "dropped", "torn", "scattered", "tail first"};

/* Where a write may be torn: a random sector boundary strictly inside it,
 * or its whole length when it has none. */
static size_t
pf_tear(const struct pf_rec *w, uint64_t *rng)
{
	int64_t first = (w->off / PF_SECTOR + 1) * PF_SECTOR;
	int64_t end = w->off + w->len;
	uint64_t n;

	if (first >= end)
		return w->len;
	n = (uint64_t)((end - 1 - first) / PF_SECTOR + 1);
	return (
	    size_t)(first + (int64_t)(pf_rand(rng) % n) * PF_SECTOR - w->off);
}

/* Applies what a cut keeps of file k's pending writes to m. */
static void
pf_cut_pending(struct pf_replay *rp, int k, struct pf_img *m, enum pf_cut how,
    uint64_t *rng)
{
	size_t upto = rp->n_pend[k];
	int64_t from = 0, lo = INT64_MAX, hi = 0;

	if (how == PF_CUT_DROP || upto == 0)
		return;
	if (how == PF_CUT_TORN)
		upto = (size_t)(pf_rand(rng) % (upto + 1));
	if (how == PF_CUT_TAIL) {
		for (size_t i = 0; i < upto; i++) {
			struct pf_rec w = pf_rec_at(rp, rp->pend[k][i], NULL);

			lo = w.off < lo ? w.off : lo;
			hi = w.off + w.len > hi ? w.off + w.len : hi;
		}
		lo = lo / PF_SECTOR;
		hi = (hi + PF_SECTOR - 1) / PF_SECTOR;
		from =
		    (lo + (int64_t)(pf_rand(rng) % (uint64_t)(hi - lo + 1))) *
		    PF_SECTOR;
	}
	for (size_t i = 0; i < upto; i++) {
		const unsigned char *data;
		struct pf_rec w = pf_rec_at(rp, rp->pend[k][i], &data);

		if (w.op != PF_WRITE) {
			if (how != PF_CUT_SCATTER || pf_rand(rng) % 2)
				pf_img_apply(m, &w, data, 0);
			continue;
		}
		if (how == PF_CUT_TORN) {
			pf_img_apply(m, &w, data,
			    i + 1 == upto ? pf_tear(&w, rng) : w.len);
			continue;
		}
		/* Scattered: each sector of the write, or not; tail first:
		 * the sectors from on. */
		for (int64_t at = w.off; at < w.off + w.len;) {
			int64_t next = (at / PF_SECTOR + 1) * PF_SECTOR;
			struct pf_rec part = w;

			if (next > w.off + w.len)
				next = w.off + w.len;
			part.off = at;
			part.len = (uint32_t)(next - at);
			if (how == PF_CUT_SCATTER ? pf_rand(rng) % 2 != 0
			                          : at >= from)
				pf_img_apply(
				    m, &part, data + (at - w.off), part.len);
			at = next;
		}
	}
}

/*
 * Writes the disk as a power cut here leaves it to path (the database),
 * path-wal and path-journal, and removes path-shm (memory, which a cut
 * empties); how says what becomes of the writes no sync covered yet.
 * Returns 0 or -1.
 */
static int
pf_replay_cut(
    struct pf_replay *rp, const char *path, enum pf_cut how, uint64_t *rng)
{
	static const char *const suffix[PF_KINDS] = {"", "-wal", "-journal"};
	char name[512];
	struct pf_img m = {0};
	int rc = 0;

	snprintf(name, sizeof(name), "%s-shm", path);
	unlink(name);
	for (int k = 0; k < PF_KINDS && rc == 0; k++) {
		const struct pf_img *d = &rp->disk[k];
		FILE *fp;

		snprintf(name, sizeof(name), "%s%s", path, suffix[k]);
		unlink(name);
		if (!d->exists)
			continue;
		m.size = 0;
		m.exists = true;
		pf_img_grow(&m, d->size);
		if (d->size)
			memcpy(m.buf, d->buf, d->size);
		pf_cut_pending(rp, k, &m, how, rng);
		if ((fp = fopen(name, "wb")) == NULL ||
		    (m.size && fwrite(m.buf, 1, m.size, fp) != m.size))
			rc = -1;
		if (fp != NULL && fclose(fp) != 0)
			rc = -1;
	}
	free(m.buf);
	return rc;
}

#endif
