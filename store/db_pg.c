/*
 * db_pg.c: the PostgreSQL backend of db.h, on libpq.
 *
 * Statements are prepared on the server once per connection, named after
 * their slot in a cache keyed, as in db.c, by the address of their SQL
 * text.  Parameters go as text (blobs in binary) and the server infers
 * their types from the statement; rows come back as text, and a bytea
 * column is unescaped when it is read.  A statement runs when it is
 * bound: stepping walks the rows of its result.
 *
 * PostgreSQL aborts the whole transaction on any error, where SQLite
 * undoes only the failing statement.  The operations rely on the latter
 * (a unique violation is an answer, and the request goes on), so inside a
 * transaction every INSERT, UPDATE and DELETE runs in a savepoint of its
 * own, rolled back to when it fails.  The SAVEPOINT goes with the
 * statement, in one round trip (pg_exec_saved), and it is never released:
 * a savepoint need not be before the next or the COMMIT, and a SAVEPOINT
 * and a RELEASE of their own were two more round trips for every write.
 * ROLLBACK TO finds the newest of that name, the failed statement's own;
 * store.c's "op" savepoints, released or rolled back to, take the ones made
 * inside them along.
 *
 * Group commit off the loop.  The store's thread (the loop) would wait
 * in each group's COMMIT for the server to flush its WAL, about as long
 * as it takes to run the group.  So there are CM_PG_WRITERS (two) writing
 * connections, used in turn.  st_db_commit with a sync only sends the
 * COMMIT (PQsendQuery) and hands that connection to whoever finishes the
 * sync (st_db_sync, the loop's acker thread), which reads the COMMIT's
 * result, and only then are the group's replies and events let out
 * (loop.c); a COMMIT that failed has its writes answered
 * store_unavailable and publishes nothing, as one that fails in the loop.
 * Meanwhile the loop builds the next group on the other connection.
 * Before it uses a connection again it waits until the acker gave it back
 * (pg_own): at worst as long as it waited in COMMIT before.
 *
 * Ownership: the loop uses a connection, the acker owns it from the
 * COMMIT sent until its result is read, and the hand-over goes through
 * the connection's mutex (committing), so one thread at a time uses a
 * PGconn, as libpq requires.
 *
 * Why the next group may run beside an unfinished COMMIT: the two
 * connections are two writers on one database, as two hosts' stores are,
 * and the operations are already safe for those (issue 17).  The next
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
#include "db_be.h"

#include <errno.h>
#include <libpq-fe.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "limits.h"
#include "log.h"
#include "notify.h"

#define PG_BYTEA_OID 17 /* pg_type.oid of bytea */

struct pg_db;

struct st_stmt {
	const struct st_db_be *be; /* first: db_be.h */
	const char *sql;
	struct pg_db *db;
	char name[16]; /* the prepared statement's name on the server */
	int n_params;
	bool write; /* INSERT, UPDATE or DELETE: may fail a constraint */
	bool blob[CM_PG_PARAMS_MAX + 1]; /* $k is bytea: sent in binary */
	PGresult *res;                   /* of the last run; NULL when done */
	int rc;                          /* ST_OK, or the run's error */
	int row, n_rows;
	unsigned char *bytes; /* the current row's unescaped bytea */
	int bytes_col;
	char ints[CM_PG_PARAMS_MAX][24]; /* integer parameters as text */
};

/*
 * One writing connection.  Its struct st_sync is the connection itself
 * while its COMMIT is on the way.
 */
struct pg_conn {
	PGconn *conn;
	int64_t pid; /* its server process (st_db_sessions) */
	/* Statement cache slot k is prepared on this connection. */
	bool prepared[CM_PG_STMT_CACHE];
	pthread_mutex_t mtx;
	pthread_cond_t cv;
	bool committing; /* under mtx: the acker's until the COMMIT's result */
};

struct pg_db {
	const struct st_db_be *be; /* first: db_be.h */
	struct pg_conn w[CM_PG_WRITERS];
	int n_w;    /* connected (st_db_open_pg) */
	int cur;    /* the writer the loop uses */
	bool owned; /* w[cur] is known to be the loop's (pg_own) */
	int64_t changes, total_changes;
	bool full; /* disk_full (53100) seen since st_db_disk_full asked */
	char err[CM_PG_ERRMSG_MAX];
	struct st_stmt cache[CM_PG_STMT_CACHE];
};

#define PG(db) ((struct pg_db *)(void *)(db))

/*
 * The connection the loop uses, once the acker has given it back (the
 * first use after a commit may wait for that).
 */
static PGconn *
pg_own(struct pg_db *db)
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
static int
pg_fail(struct pg_db *db, const PGresult *res)
{
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	PGconn *conn = pg_own(db);

	pg_keep_error(
	    db, res ? PQresultErrorMessage(res) : PQerrorMessage(conn));
	if (PQstatus(conn) == CONNECTION_BAD)
		cm_fatalx(
		    "store: the PostgreSQL connection is lost: %s", db->err);
	if (state != NULL && strcmp(state, "53100") == 0)
		db->full = true;
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
	db->be = &st_db_pg_be;
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
pg_done(struct st_stmt *s)
{
	PQclear(s->res);
	s->res = NULL;
	PQfreemem(s->bytes);
	s->bytes = NULL;
}

static void
pg_close(struct st_db *d)
{
	struct pg_db *db = PG(d);

	for (size_t i = 0; i < CM_PG_STMT_CACHE; i++)
		pg_done(&db->cache[i]);
	for (int k = 0; k < db->n_w; k++) {
		PQfinish(db->w[k].conn);
		pthread_cond_destroy(&db->w[k].cv);
		pthread_mutex_destroy(&db->w[k].mtx);
	}
	free(db);
}

static int
pg_exec(struct st_db *d, const char *sql)
{
	struct pg_db *db = PG(d);
	PGresult *res = PQexec(pg_own(db), sql);
	ExecStatusType st = PQresultStatus(res);
	int rc = ST_OK;

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		rc = pg_fail(db, res);
		cm_warnx("store: %s", db->err);
	}
	PQclear(res);
	return rc;
}

static bool
pg_is_write(const char *sql)
{
	static const char *const verbs[] = {"INSERT", "UPDATE", "DELETE"};

	sql += strspn(sql, " \t\n");
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strncasecmp(sql, verbs[i], strlen(verbs[i])) == 0)
			return true;
	return false;
}

/* Prepares s (cache slot slot) on the loop's connection. */
static void
pg_prepare_one(struct pg_db *db, struct st_stmt *s, size_t slot)
{
	PGconn *conn = pg_own(db);
	PGresult *res;

	snprintf(s->name, sizeof(s->name), "st%zu", slot);
	res = PQprepare(conn, s->name, s->sql, 0, NULL);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		cm_fatalx("store: cannot prepare \"%.60s\": %s", s->sql,
		    PQresultErrorMessage(res));
	PQclear(res);
	res = PQdescribePrepared(conn, s->name);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		cm_fatalx("store: cannot describe \"%.60s\": %s", s->sql,
		    PQresultErrorMessage(res));
	s->n_params = PQnparams(res);
	if (s->n_params > CM_PG_PARAMS_MAX)
		cm_fatalx("store: \"%.60s\" has more than %d parameters",
		    s->sql, CM_PG_PARAMS_MAX);
	for (int k = 1; k <= s->n_params; k++)
		s->blob[k] = PQparamtype(res, k - 1) == PG_BYTEA_OID;
	PQclear(res);
	s->write = pg_is_write(s->sql);
	db->w[db->cur].prepared[slot] = true;
}

static struct st_stmt *
pg_prepare(struct pg_db *db, const char *sql)
{
	size_t h = ((uintptr_t)sql >> 3) * 0x9E3779B97F4A7C15ull;
	size_t i = (h >> 32) & (CM_PG_STMT_CACHE - 1);

	for (size_t n = 0; n < CM_PG_STMT_CACHE; n++) {
		size_t slot = (i + n) & (CM_PG_STMT_CACHE - 1);
		struct st_stmt *s = &db->cache[slot];

		if (s->sql == sql) {
			if (!db->w[db->cur].prepared[slot])
				pg_prepare_one(db, s, slot);
			return s;
		}
		if (s->sql != NULL)
			continue;
		s->be = &st_db_pg_be;
		s->sql = sql;
		s->db = db;
		pg_prepare_one(db, s, slot);
		return s;
	}
	cm_fatalx("store: statement cache is full");
}

/*
 * Runs s in a savepoint of its own, in one round trip: the SAVEPOINT and
 * the statement go together, in libpq's pipeline mode for these two only.
 * Returns the statement's result, or when the SAVEPOINT failed (the
 * statement is then not run) the SAVEPOINT's, with *saved false.
 */
static PGresult *
pg_exec_saved(PGconn *conn, struct st_stmt *s, const char *const *values,
    const int *lengths, const int *formats, bool *saved)
{
	PGresult *res, *got[2] = {NULL, NULL};
	int n = 0, nulls = 0;

	if (PQenterPipelineMode(conn) != 1 ||
	    PQsendQueryParams(conn, "SAVEPOINT st_write", 0, NULL, NULL, NULL,
	        NULL, 0) != 1 ||
	    PQsendQueryPrepared(
	        conn, s->name, s->n_params, values, lengths, formats, 0) != 1 ||
	    PQpipelineSync(conn) != 1)
		cm_fatalx("store: the PostgreSQL connection is lost: %s",
		    PQerrorMessage(conn));
	/* Each query's result then NULL, twice, then the sync's. */
	for (;;) {
		if ((res = PQgetResult(conn)) == NULL) {
			if (++nulls > 2 || PQstatus(conn) == CONNECTION_BAD)
				cm_fatalx("store: the PostgreSQL connection is"
				          " lost: %s",
				    PQerrorMessage(conn));
			continue;
		}
		if (PQresultStatus(res) == PGRES_PIPELINE_SYNC) {
			PQclear(res);
			break;
		}
		if (n < 2)
			got[n++] = res;
		else
			PQclear(res);
	}
	if (PQexitPipelineMode(conn) != 1)
		cm_fatalx("store: cannot leave pipeline mode: %s",
		    PQerrorMessage(conn));
	*saved = PQresultStatus(got[0]) == PGRES_COMMAND_OK;
	if (*saved) {
		PQclear(got[0]);
		return got[1];
	}
	PQclear(got[1]); /* PGRES_PIPELINE_ABORTED */
	return got[0];
}

/* Runs s with its values; its result (or error) waits for the steps. */
static void
pg_run(struct pg_db *db, struct st_stmt *s, const char *const *values,
    const int *lengths, const int *formats)
{
	PGconn *conn = pg_own(db);
	bool guard = s->write && PQtransactionStatus(conn) == PQTRANS_INTRANS;
	bool saved = false;
	ExecStatusType st;

	s->rc = ST_OK;
	s->row = -1;
	s->n_rows = 0;
	if (guard)
		s->res =
		    pg_exec_saved(conn, s, values, lengths, formats, &saved);
	else
		s->res = PQexecPrepared(
		    conn, s->name, s->n_params, values, lengths, formats, 0);
	st = PQresultStatus(s->res);
	if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
		s->n_rows = st == PGRES_TUPLES_OK ? PQntuples(s->res) : 0;
		if (s->write) {
			db->changes = strtoll(PQcmdTuples(s->res), NULL, 10);
			db->total_changes += db->changes;
		}
		return;
	}
	s->rc = pg_fail(db, s->res);
	if (s->write)
		db->changes = 0;
	/* Undo only this statement, and keep its own error message.  (With
	 * no savepoint of its own, ROLLBACK TO would undo an earlier one.) */
	if (saved) {
		PGresult *res = PQexec(conn, "ROLLBACK TO st_write");

		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			cm_warnx("store: cannot undo a failed write: %s",
			    PQresultErrorMessage(res));
		PQclear(res);
	}
}

static int
pg_vquery(struct st_db *d, struct st_stmt **out, const char *sql,
    const char *types, va_list ap)
{
	struct pg_db *db = PG(d);
	struct st_stmt *s = pg_prepare(db, sql);
	const char *values[CM_PG_PARAMS_MAX];
	int lengths[CM_PG_PARAMS_MAX], formats[CM_PG_PARAMS_MAX];
	int k;

	pg_done(s);
	for (k = 0; types[k] != '\0'; k++) {
		char *num = s->ints[k];
		int64_t v;

		if (k >= s->n_params)
			cm_fatalx(
			    "store: too many parameters for \"%.60s\"", s->sql);
		lengths[k] = 0;
		formats[k] = 0;
		switch (types[k]) {
		case 's':
			values[k] = va_arg(ap, const char *);
			break;
		case 'i':
			snprintf(num, sizeof(s->ints[k]), "%lld",
			    (long long)va_arg(ap, int64_t));
			values[k] = num;
			break;
		case 'b':
			values[k] = va_arg(ap, int) != 0 ? "1" : "0";
			break;
		case 'n':
			v = va_arg(ap, int64_t);
			snprintf(num, sizeof(s->ints[k]), "%lld", (long long)v);
			values[k] = v ? num : NULL;
			break;
		case 'B': {
			const void *p = va_arg(ap, const void *);
			size_t len = va_arg(ap, size_t);

			if (len > (size_t)CM_ARTIFACT_MAX * 2)
				cm_fatalx("store: a blob of %zu bytes", len);
			/* Binary into bytea, as text into anything else. */
			values[k] = p != NULL && len == 0 ? "" : p;
			lengths[k] = (int)len;
			formats[k] = s->blob[k + 1] ? 1 : 0;
			break;
		}
		default:
			cm_fatalx("store: bad parameter type '%c'", types[k]);
		}
	}
	if (k != s->n_params)
		cm_fatalx("store: %d parameters for \"%.60s\", which has %d", k,
		    s->sql, s->n_params);
	pg_run(db, s, values, lengths, formats);
	*out = s;
	return ST_OK;
}

static int
pg_step(struct st_stmt *s)
{
	if (s->rc != ST_OK)
		return s->rc;
	PQfreemem(s->bytes);
	s->bytes = NULL;
	if (s->row + 1 < s->n_rows) {
		s->row++;
		return ST_ROW;
	}
	s->row = s->n_rows;
	return ST_DONE;
}

static const char *
pg_col_text(struct st_stmt *s, int col)
{
	if (PQgetisnull(s->res, s->row, col))
		return NULL;
	return PQgetvalue(s->res, s->row, col);
}

/* Booleans come back as t and f: they read as SQLite's 1 and 0. */
static int64_t
pg_col_int(struct st_stmt *s, int col)
{
	const char *v = PQgetvalue(s->res, s->row, col);

	if (v[0] == 't' || v[0] == 'f')
		return v[0] == 't';
	return strtoll(v, NULL, 10);
}

/*
 * A bytea column arrives escaped (text results) and is unescaped here;
 * the bytes stay valid until the next step or done, or until another
 * bytea column of the same row is read.
 */
static const void *
pg_col_blob(struct st_stmt *s, int col, size_t *len)
{
	const char *v;

	*len = 0;
	if (PQgetisnull(s->res, s->row, col))
		return NULL;
	v = PQgetvalue(s->res, s->row, col);
	if (PQftype(s->res, col) != PG_BYTEA_OID) {
		*len = (size_t)PQgetlength(s->res, s->row, col);
		return v;
	}
	if (s->bytes == NULL || s->bytes_col != col) {
		PQfreemem(s->bytes);
		s->bytes = PQunescapeBytea((const unsigned char *)v, len);
		s->bytes_col = col;
		if (s->bytes == NULL)
			*len = 0;
		return s->bytes;
	}
	return s->bytes;
}

static bool
pg_col_null(struct st_stmt *s, int col)
{
	return PQgetisnull(s->res, s->row, col) != 0;
}

/* A COMMIT's result: ST_DONE, or why it failed, kept as pg_fail does. */
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
	PGconn *conn = pg_own(db);
	struct pg_conn *c = &db->w[db->cur];
	PGresult *res;
	bool full = false;
	int rc;

	if (sync != NULL)
		*sync = NULL;
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
		pg_fail(db, res);
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
	return PQtransactionStatus(pg_own(PG(d))) == PQTRANS_INTRANS;
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
pg_setting_is(struct pg_db *db, const char *sql, const char *off)
{
	PGresult *res = PQexec(pg_own(db), sql);
	bool is = PQresultStatus(res) == PGRES_TUPLES_OK &&
	          PQntuples(res) == 1 &&
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

const struct st_db_be st_db_pg_be = {
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
    .exec = pg_exec,
    .vquery = pg_vquery,
    .step = pg_step,
    .done = pg_done,
    .col_text = pg_col_text,
    .col_int = pg_col_int,
    .col_blob = pg_col_blob,
    .col_null = pg_col_null,
    .commit = pg_commit,
    .sync = pg_sync,
    .total_changes = pg_total_changes,
    .work = pg_work,
    .in_txn = pg_in_txn,
    .changes = pg_changes,
    .errmsg = pg_errmsg,
    .disk_full = pg_disk_full,
    .synchronous = pg_synchronous,
    .sessions = pg_sessions,
};
