/*
 * wal.c: checkpoints of the write-ahead log, off the store's thread.
 *
 * SQLite's automatic checkpoint runs inside the COMMIT that crosses its
 * threshold: it copies the log's pages into the database file and syncs
 * both files, all on the one thread that serves requests.  Here the
 * writer's automatic checkpoint is off, and a thread of its own, with a
 * connection of its own, runs a PASSIVE checkpoint whenever the log has
 * grown by CM_WAL_CHECKPOINT_PAGES since the last one began.  A passive
 * checkpoint never blocks the writer, and it syncs the log before it
 * writes a page to the database.  Spacing them out is what makes them
 * cheap: the same hot pages (a Space's row, the tail of an index) are in
 * nearly every group, and one checkpoint copies each of them once however
 * many frames hold it.  Started after every commit instead, the
 * checkpointer cost a fifth of a core at 9,000 writes a second.
 *
 * The log starts over from its beginning only when a commit finds every
 * frame copied; a writer that never pauses can outrun a checkpointer that
 * runs beside it.  So past CM_WAL_MAX_PAGES the writer checkpoints itself
 * between two groups, alone, until a commit has started the log over: the
 * log never holds much more than CM_WAL_MAX_PAGES frames.  In the last
 * stretch before that bound the checkpointer runs after every commit, so
 * the writer finds little left to copy.
 */
#include "wal.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "limits.h"
#include "log.h"
#include "vfs.h"

/* The bounds in frames; a test may lower them (st_wal_set_pages). */
static int ckpt_pages = CM_WAL_CHECKPOINT_PAGES;
static int max_pages = CM_WAL_MAX_PAGES;

struct st_wal {
	sqlite3 *writer_conn;
	sqlite3 *conn; /* the checkpointer's own */
	pthread_t thread;
	pthread_mutex_t mtx;
	pthread_cond_t cv;
	int pages;    /* frames in the log after the last commit */
	int copied;   /* frames the last checkpoint set out to copy */
	bool wanted;  /* a checkpoint is due */
	bool running; /* a checkpoint is under way (one at a time) */
	bool writer;  /* the writer checkpoints until the log starts over */
	bool stop;
};

static int
wal_hook(void *arg, sqlite3 *conn, const char *name, int pages)
{
	struct st_wal *w = arg;

	(void)conn;
	(void)name;
	pthread_mutex_lock(&w->mtx);
	if (w->writer && pages < w->pages) {
		/* The log started over: the checkpointer may run again. */
		w->writer = false;
		w->running = false;
		pthread_cond_broadcast(&w->cv);
	}
	if (pages < w->pages)
		w->copied = 0;
	w->pages = pages;
	if (!w->writer && !w->wanted &&
	    (pages - w->copied >= ckpt_pages ||
	        (pages >= max_pages - ckpt_pages && pages > w->copied))) {
		w->wanted = true;
		pthread_cond_signal(&w->cv);
	}
	pthread_mutex_unlock(&w->mtx);
	return SQLITE_OK;
}

static void *
wal_run(void *arg)
{
	struct st_wal *w = arg;

	pthread_setname_np(pthread_self(), "store:ckpt");
	pthread_mutex_lock(&w->mtx);
	for (;;) {
		int rc;

		while ((!w->wanted || w->running) && !w->stop)
			pthread_cond_wait(&w->cv, &w->mtx);
		if (w->stop)
			break;
		w->running = true;
		w->copied = w->pages;
		pthread_mutex_unlock(&w->mtx);
		rc = sqlite3_wal_checkpoint_v2(
		    w->conn, "main", SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		if (rc != SQLITE_OK && rc != SQLITE_BUSY)
			cm_warnx("store: checkpoint failed: %s",
			    sqlite3_errmsg(w->conn));
		pthread_mutex_lock(&w->mtx);
		w->wanted = false;
		w->running = false;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mtx);
	return NULL;
}

int
st_wal_start(struct st_wal **out, sqlite3 *writer, const char *path)
{
	struct st_wal *w;
	char *err = NULL;

	*out = NULL;
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return -1;
	w->writer_conn = writer;
	pthread_mutex_init(&w->mtx, NULL);
	pthread_cond_init(&w->cv, NULL);
	if (sqlite3_open_v2(path, &w->conn,
	        SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX |
	            SQLITE_OPEN_EXRESCODE,
	        ST_VFS_NAME) != SQLITE_OK ||
	    sqlite3_exec(w->conn,
	        "PRAGMA synchronous=FULL; PRAGMA wal_autocheckpoint=0;", NULL,
	        NULL, &err) != SQLITE_OK ||
	    sqlite3_exec(writer, "PRAGMA wal_autocheckpoint=0;", NULL, NULL,
	        &err) != SQLITE_OK) {
		cm_warnx("store: cannot set up checkpoints: %s",
		    err ? err : sqlite3_errmsg(w->conn));
		sqlite3_free(err);
		sqlite3_close(w->conn);
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mtx);
		free(w);
		return -1;
	}
	sqlite3_wal_hook(writer, wal_hook, w);
	if (pthread_create(&w->thread, NULL, wal_run, w) != 0) {
		sqlite3_wal_hook(writer, NULL, NULL);
		sqlite3_exec(writer, "PRAGMA wal_autocheckpoint=1000;", NULL,
		    NULL, NULL);
		sqlite3_close(w->conn);
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mtx);
		free(w);
		return -1;
	}
	*out = w;
	return 0;
}

void
st_wal_after_commit(struct st_wal *w)
{
	if (w == NULL)
		return;
	pthread_mutex_lock(&w->mtx);
	if (w->pages < max_pages) {
		pthread_mutex_unlock(&w->mtx);
		return;
	}
	/*
	 * SQLite runs one checkpoint at a time and would not wait for the
	 * checkpointer's; and a checkpoint running while the next commit
	 * starts the log over would make that commit append instead.  So
	 * the writer takes the role over until the log has started over.
	 */
	if (!w->writer) {
		while (w->running)
			pthread_cond_wait(&w->cv, &w->mtx);
		w->running = true;
		w->writer = true;
		w->wanted = false;
	}
	pthread_mutex_unlock(&w->mtx);
	if (sqlite3_wal_checkpoint_v2(w->writer_conn, "main",
	        SQLITE_CHECKPOINT_PASSIVE, NULL, NULL) != SQLITE_OK)
		cm_warnx("store: checkpoint failed: %s",
		    sqlite3_errmsg(w->writer_conn));
}

void
st_wal_set_pages(int checkpoint_pages, int max)
{
	ckpt_pages =
	    checkpoint_pages > 0 ? checkpoint_pages : CM_WAL_CHECKPOINT_PAGES;
	max_pages = max > 0 ? max : CM_WAL_MAX_PAGES;
}

void
st_wal_stop(struct st_wal *w)
{
	if (w == NULL)
		return;
	pthread_mutex_lock(&w->mtx);
	w->stop = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mtx);
	pthread_join(w->thread, NULL);
	sqlite3_wal_hook(w->writer_conn, NULL, NULL);
	sqlite3_close(w->conn);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mtx);
	free(w);
}
