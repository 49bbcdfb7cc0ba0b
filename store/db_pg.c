/*
 * db_pg.c: the PostgreSQL backend of db.h, on libpq: its connections,
 * the COMMIT handed from the loop to the acker, and the backend's table.
 * Statements (prepared, bound, run in a savepoint) are in db_pg_stmt.c,
 * those sent ahead in db_pg_pipe.c, the rows of their results in
 * db_pg_row.c, sharing db_pg_int.h.
 *
 * Group commit off the loop.  The store's thread (the loop) would wait
 * in each group's COMMIT for the server to flush its WAL, about as long
 * as it takes to run the group.  So there are CM_PG_WRITERS (two) writing
 * connections, used in turn.  st_db_commit with a sync only sends the
 * COMMIT (PQsendQuery) and hands that connection to whoever finishes the
 * sync (st_db_sync, the loop's acker thread), which reads the COMMIT's
 * result, and only then are the group's replies and events let out
 * (acker.c); a COMMIT that failed has its writes answered
 * store_unavailable and publishes nothing, as one that fails in the loop.
 * Meanwhile the loop builds the next group on the other connection.
 * Before it uses a connection again it waits until the acker gave it back
 * (st_pg_own): at worst as long as it waited in COMMIT before.
 *
 * Ownership: the loop uses a connection, the acker owns it from the
 * COMMIT sent until its result is read, and the hand-over goes through
 * the connection's mutex (committing), so one thread at a time uses a
 * PGconn, as libpq requires.
 *
 * Why the next group may run beside an unfinished COMMIT: the two
 * connections are two writers on one database, as two hosts' stores are,
 * and the operations are already safe for those (notify.h).  The next
 * group cannot see rows of a COMMIT not yet done (READ COMMITTED reads
 * what was committed when each statement started), and where it would
 * conflict with them PostgreSQL makes its statement wait for that COMMIT:
 * the Space row's lock taken to allocate an event sequence (FOR UPDATE,
 * which then reads the committed row: no sequence is reused or skipped),
 * the partial unique indexes and store_ops' op_id (the insert waits, then
 * fails with the unique violation the operations already map to their
 * typed errors, or succeeds when the first rolled back).  The loop then
 * only stalls, as it did in COMMIT.  A COMMIT never waits for a lock, so
 * it finishes whatever the next group holds: no deadlock.  Replies and
 * events still leave in group order (the acker's ring), and none before
 * its own group's COMMIT returned.  A workspace's Space quota, checked by
 * counting, is counted under the workspace row's lock (ops_space.c).
 */
#include "db.h"
#include "db_backend.h"
#include "db_pg_int.h"

#include <errno.h>
#include <libpq-fe.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "limits.h"
#include "log.h"
#include "notify.h"

/*
 * The connection the loop uses, once the acker has given it back (the
 * first use after a commit may wait for that).
 */
PGconn *
st_pg_own(struct pg_db *db)
{
	struct pg_conn *c = &db->w[db->cur];

	if (!db->owned) {
		pthread_mutex_lock(&c->mtx);
		while (c->committing)
			pthread_cond_wait(&c->cv, &c->mtx);
		pthread_mutex_unlock(&c->mtx);
		db->owned = true;
	}
	return c->conn;
}

/* A server's message into err, without its newline. */
static void
pg_message(char *err, size_t len, const char *msg)
{
	size_t n;

	snprintf(err, len, "%s", msg ? msg : "unknown error");
	n = strlen(err);
	while (n > 0 && (err[n - 1] == '\n' || err[n - 1] == ' '))
		err[--n] = '\0';
}

/* Keeps the server's message for st_db_errmsg. */
static void
pg_keep_error(struct pg_db *db, const char *msg)
{
	pg_message(db->err, sizeof(db->err), msg);
}

/*
 * A failed result's code: SQLSTATE class 23 (integrity constraint
 * violation: unique 23505, foreign key 23503, check 23514, not null
 * 23502) is ST_CONSTRAINT, as SQLite's SQLITE_CONSTRAINT is.  A lost
 * connection ends the process: the supervisor starts a new store, which
 * connects again, and no half-known state lingers.
 */
int
st_pg_fail(struct pg_db *db, const PGresult *res)
{
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	PGconn *conn = st_pg_own(db);

	pg_keep_error(
	    db, res ? PQresultErrorMessage(res) : PQerrorMessage(conn));
	if (PQstatus(conn) == CONNECTION_BAD)
		cm_fatalx(
		    "store: the PostgreSQL connection is lost: %s", db->err);
	if (state != NULL && strcmp(state, "53100") == 0)
		db->full = true;
	/* deadlock_detected, serialization_failure: another writer's. */
	if (state != NULL &&
	    (strcmp(state, "40P01") == 0 || strcmp(state, "40001") == 0))
		db->conflict = true;
	if (state != NULL && strncmp(state, "23", 2) == 0)
		return ST_CONSTRAINT;
	return ST_ERROR;
}

/* Server notices (a table that exists, a savepoint that does not) are for
 * a person at psql, not for the store's log. */
static void
pg_no_notice(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

static void pg_close(struct st_db *d);

int
st_db_open_pg(struct st_db **out, const char *dsn)
{
	struct pg_db *db;

	*out = NULL;
	if ((db = calloc(1, sizeof(*db))) == NULL)
		return ST_ERROR;
	db->be = &st_db_pg_backend;
	db->owned = true;
	for (; db->n_w < CM_PG_WRITERS; db->n_w++) {
		struct pg_conn *c = &db->w[db->n_w];
		PGconn *conn = PQconnectdb(dsn);

		if (conn == NULL || PQstatus(conn) != CONNECTION_OK) {
			/* libpq's message names the server, never the
			 * password. */
			cm_warnx("store: cannot connect to PostgreSQL: %s",
			    conn ? PQerrorMessage(conn) : "out of memory");
			PQfinish(conn);
			pg_close((struct st_db *)(void *)db);
			return ST_ERROR;
		}
		PQsetNoticeProcessor(conn, pg_no_notice, NULL);
		c->conn = conn;
		c->pid = PQbackendPID(conn);
		pthread_mutex_init(&c->mtx, NULL);
		pthread_cond_init(&c->cv, NULL);
	}
	*out = (struct st_db *)(void *)db;
	return ST_OK;
}

static void
pg_close(struct st_db *d)
{
	struct pg_db *db = PG(d);

	for (size_t i = 0; i < CM_PG_STMT_CACHE; i++)
		st_pg_done(&db->cache[i]);
	for (int k = 0; k < db->n_w; k++) {
		PQfinish(db->w[k].conn);
		pthread_cond_destroy(&db->w[k].cv);
		pthread_mutex_destroy(&db->w[k].mtx);
	}
	free(db);
}

/* A COMMIT's result: ST_DONE, or why it failed, kept as st_pg_fail does. */
static int
pg_commit_result(PGresult *res, char *err, size_t len, bool *full)
{
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

	if (PQresultStatus(res) == PGRES_COMMAND_OK &&
	    strcmp(PQcmdStatus(res), "COMMIT") == 0)
		return ST_DONE;
	/* A COMMIT of a transaction an error aborted succeeds as a ROLLBACK:
	 * that is a failed commit here. */
	pg_message(err, len,
	    PQresultStatus(res) == PGRES_COMMAND_OK
	        ? "the transaction was aborted by an error"
	        : PQresultErrorMessage(res));
	*full = state != NULL && strcmp(state, "53100") == 0;
	return state != NULL && strncmp(state, "23", 2) == 0 ? ST_CONSTRAINT
	                                                     : ST_ERROR;
}

/*
 * COMMIT returns once the server has flushed the transaction's WAL
 * (synchronous_commit).  With sync it is only sent, and the connection
 * goes to whoever finishes it (pg_sync, see the top of this file); the
 * loop goes on with the next writer.  A transaction an error already
 * aborted is ended here, as a failed commit.
 */
static int
pg_commit(struct st_db *d, struct st_sync **sync)
{
	struct pg_db *db = PG(d);
	PGconn *conn = st_pg_own(db);
	struct pg_conn *c = &db->w[db->cur];
	PGresult *res;
	bool full = false;
	int rc;

	if (sync != NULL)
		*sync = NULL;
	st_pg_drain(db);
	/* A statement sent ahead failed, or changed what it was not sent to:
	 * nothing of the transaction stands (db_pg_pipe.c). */
	if (db->failed) {
		res = PQexec(conn, "ROLLBACK");
		if (PQstatus(conn) == CONNECTION_BAD)
			st_pg_fail(db, res);
		PQclear(res);
		return ST_ERROR;
	}
	if (sync != NULL && PQtransactionStatus(conn) == PQTRANS_INTRANS) {
		if (!PQsendQuery(conn, "COMMIT"))
			cm_fatalx("store: the PostgreSQL connection is lost:"
			          " %s",
			    PQerrorMessage(conn));
		pthread_mutex_lock(&c->mtx);
		c->committing = true;
		pthread_mutex_unlock(&c->mtx);
		*sync = (struct st_sync *)(void *)c;
		db->cur = (db->cur + 1) % db->n_w;
		db->owned = false;
		return ST_DONE;
	}
	res = PQexec(conn, "COMMIT");
	if (PQstatus(conn) == CONNECTION_BAD)
		st_pg_fail(db, res);
	rc = pg_commit_result(res, db->err, sizeof(db->err), &full);
	db->full = db->full || full;
	PQclear(res);
	return rc;
}

/* Waits (bounded) until c's next result can be read without blocking. */
static void
pg_await(struct pg_conn *c, int64_t deadline)
{
	while (PQisBusy(c->conn)) {
		struct pollfd p = {PQsocket(c->conn), POLLIN, 0};
		int64_t left = deadline - cm_mono_ms();

		if (left <= 0)
			cm_fatalx("store: PostgreSQL did not answer a COMMIT"
			          " in %d ms",
			    CM_PG_COMMIT_WAIT_MS);
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
			cm_fatalx("store: poll: %s", strerror(errno));
		if (!PQconsumeInput(c->conn))
			cm_fatalx("store: the PostgreSQL connection is lost:"
			          " %s",
			    PQerrorMessage(c->conn));
	}
}

/*
 * On the acker: reads the result of the COMMIT pg_commit sent on the
 * connection sync, then hands the connection back to the loop.  Touches
 * nothing of the struct pg_db the loop uses meanwhile.
 */
static int
pg_sync(struct st_db *d, struct st_sync *sync, bool *full)
{
	struct pg_conn *c = (struct pg_conn *)(void *)sync;
	int64_t deadline = cm_mono_ms() + CM_PG_COMMIT_WAIT_MS;
	char err[CM_PG_ERRMSG_MAX];
	PGresult *res;
	int rc;

	(void)d;
	pg_await(c, deadline);
	res = PQgetResult(c->conn);
	if (PQstatus(c->conn) == CONNECTION_BAD)
		cm_fatalx("store: the PostgreSQL connection is lost: %s",
		    PQerrorMessage(c->conn));
	rc = pg_commit_result(res, err, sizeof(err), full);
	PQclear(res);
	if (rc != ST_DONE)
		cm_warnx("store: commit failed: %s", err);
	/* The query's end: libpq reads it before it takes the next. */
	pg_await(c, deadline);
	while ((res = PQgetResult(c->conn)) != NULL)
		PQclear(res);
	pthread_mutex_lock(&c->mtx);
	c->committing = false;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mtx);
	return rc == ST_DONE ? ST_DONE : ST_ERROR;
}

static int64_t
pg_total_changes(struct st_db *d)
{
	return PG(d)->total_changes;
}

/* PostgreSQL tells its client nothing like SQLite's VM steps. */
static int64_t
pg_work(struct st_db *d)
{
	(void)d;
	return 0;
}

/* A transaction an error aborted can only roll back: it is not open for
 * anything more, as SQLite's after it rolled one back by itself. */
static bool
pg_in_txn(struct st_db *d)
{
	struct pg_db *db = PG(d);

	if (db->failed)
		return false;
	return db->pending > 0 ||
	       PQtransactionStatus(st_pg_own(db)) == PQTRANS_INTRANS;
}

/* BEGIN, sent ahead while deferring: the first statement waited for
 * carries it. */
static int
pg_begin(struct st_db *d)
{
	struct pg_db *db = PG(d);

	db->failed = false;
	if (db->defer) {
		st_pg_send(db, NULL, "BEGIN", NULL, NULL, NULL, PG_SENT_BEGIN);
		return ST_OK;
	}
	return st_pg_exec(d, "BEGIN") == ST_OK ? ST_OK : ST_ERROR;
}

static void
pg_defer(struct st_db *d, bool on)
{
	PG(d)->defer = on;
}

static int
pg_settle(struct st_db *d)
{
	struct pg_db *db = PG(d);

	st_pg_drain(db);
	return db->failed ? ST_ERROR : ST_DONE;
}

static int64_t
pg_changes(struct st_db *d)
{
	return PG(d)->changes;
}

static const char *
pg_errmsg(struct st_db *d)
{
	return PG(d)->err;
}

static bool
pg_disk_full(struct st_db *d)
{
	bool full = PG(d)->full;

	PG(d)->full = false;
	return full;
}

static bool
pg_conflict(struct st_db *d)
{
	bool conflict = PG(d)->conflict;

	PG(d)->conflict = false;
	return conflict;
}

static bool
pg_setting_is(struct pg_db *db, const char *sql, const char *off)
{
	PGresult *res;
	bool is;

	st_pg_drain(db);
	res = PQexec(st_pg_own(db), sql);
	is = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
	     strcmp(PQgetvalue(res, 0, 0), off) == 0;

	PQclear(res);
	return is;
}

static int
pg_synchronous(struct st_db *d)
{
	struct pg_db *db = PG(d);

	if (pg_setting_is(db, "SHOW fsync", "off") ||
	    pg_setting_is(db, "SHOW synchronous_commit", "off"))
		return 0;
	return 2;
}

static size_t
pg_sessions(struct st_db *d, int64_t *out, size_t max)
{
	struct pg_db *db = PG(d);
	size_t n = 0;

	for (; n < max && n < (size_t)db->n_w; n++)
		out[n] = db->w[n].pid;
	return n;
}

const struct st_db_backend st_db_pg_backend = {
    .dialect = "postgres",
    /* Writers on other hosts take their locks row by row. */
    .begin_sql = "BEGIN",
    .shared = true,
    /* Each COMMIT on its own connection, answered on its own. */
    .sync_covers = false,
    /* One notification an event, sent in one statement (store/notify.h
     * names the channel). */
    .announce_sql = "SELECT pg_notify('" ST_NOTIFY_CHANNEL "', line)"
                    " FROM regexp_split_to_table($1, E'\\n') AS line",
    .close = pg_close,
    .exec = st_pg_exec,
    .vquery = st_pg_vquery,
    .begin = pg_begin,
    .vsend = st_pg_vsend,
    .defer = pg_defer,
    .settle = pg_settle,
    .step = st_pg_step,
    .done = st_pg_done,
    .col_text = st_pg_col_text,
    .col_int = st_pg_col_int,
    .col_blob = st_pg_col_blob,
    .col_null = st_pg_col_null,
    .commit = pg_commit,
    .sync = pg_sync,
    .total_changes = pg_total_changes,
    .work = pg_work,
    .in_txn = pg_in_txn,
    .changes = pg_changes,
    .errmsg = pg_errmsg,
    .disk_full = pg_disk_full,
    .conflict = pg_conflict,
    .synchronous = pg_synchronous,
    .sessions = pg_sessions,
};
