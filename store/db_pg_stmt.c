/*
 * db_pg_stmt.c: the PostgreSQL backend's statements: the cache of
 * statements prepared on each connection, binding a query's parameters,
 * and running it (a write inside a transaction in a savepoint of its own,
 * in one round trip); also plain SQL (exec) and a result's end (done).
 *
 * Statements are prepared on the server once per connection, named after
 * their slot in a cache keyed, as in db_sqlite.c, by the address of their
 * SQL text.  Parameters go as text (blobs in binary) and the server infers
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
 */
#include "db.h"
#include "db_backend.h"
#include "db_pg_int.h"

#include <libpq-fe.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "limits.h"
#include "log.h"

void
st_pg_done(struct st_stmt *s)
{
	PQclear(s->res);
	s->res = NULL;
	PQfreemem(s->bytes);
	s->bytes = NULL;
}

int
st_pg_exec(struct st_db *d, const char *sql)
{
	struct pg_db *db = PG(d);
	PGresult *res = PQexec(st_pg_own(db), sql);
	ExecStatusType st = PQresultStatus(res);
	int rc = ST_OK;

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		rc = st_pg_fail(db, res);
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
	PGconn *conn = st_pg_own(db);
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
		s->be = &st_db_pg_backend;
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
	PGconn *conn = st_pg_own(db);
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
	s->rc = st_pg_fail(db, s->res);
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

int
st_pg_vquery(struct st_db *d, struct st_stmt **out, const char *sql,
    const char *types, va_list ap)
{
	struct pg_db *db = PG(d);
	struct st_stmt *s = pg_prepare(db, sql);
	const char *values[CM_PG_PARAMS_MAX];
	int lengths[CM_PG_PARAMS_MAX], formats[CM_PG_PARAMS_MAX];
	int k;

	st_pg_done(s);
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
