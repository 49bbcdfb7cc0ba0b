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
 * own, rolled back to when it fails.  The SAVEPOINT and its RELEASE go
 * with the statement, in one round trip (st_pg_run_piped).  store.c's "op"
 * savepoints, released or rolled back to, take the ones made inside them
 * along.  A write sent ahead (st_db_send while deferring, db_pg_pipe.c)
 * has none: its failure fails the whole pass.
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
	PGresult *res;
	ExecStatusType st;
	int rc = ST_OK;

	st_pg_drain(db);
	res = PQexec(st_pg_own(db), sql);
	st = PQresultStatus(res);

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		rc = st_pg_fail(db, res);
		cm_warnx("store: %s", db->err);
	}
	PQclear(res);
	return rc;
}

/* Whether sql begins with one of the n verbs. */
static bool
pg_is_verb(const char *sql, const char *const *verbs, size_t n)
{
	sql += strspn(sql, " \t\n");
	for (size_t i = 0; i < n; i++)
		if (strncasecmp(sql, verbs[i], strlen(verbs[i])) == 0)
			return true;
	return false;
}

static bool
pg_is_write(const char *sql)
{
	static const char *const verbs[] = {"INSERT", "UPDATE", "DELETE"};

	return pg_is_verb(sql, verbs, sizeof(verbs) / sizeof(verbs[0]));
}

/*
 * Whether sql ends a transaction (or undoes to a savepoint).  After a
 * statement sent ahead failed, the server skips the rest of the round
 * trip: such a statement in it would not run.
 */
static bool
pg_is_end(const char *sql)
{
	static const char *const verbs[] = {"ROLLBACK", "COMMIT", "END"};

	return pg_is_verb(sql, verbs, sizeof(verbs) / sizeof(verbs[0]));
}

/*
 * Whether a Parse or Describe that failed did so only because the
 * transaction is aborted: the server then takes nothing but its end
 * (ROLLBACK, COMMIT), and any other statement is refused until then.
 */
static bool
pg_refused_in_abort(PGconn *conn, PGresult *res)
{
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

	return PQtransactionStatus(conn) == PQTRANS_INERROR && state != NULL &&
	       strcmp(state, "25P02") == 0; /* in_failed_sql_transaction */
}

/* Prepares s (cache slot slot) on the loop's connection.  Returns false
 * when the aborted transaction refused it. */
static bool
pg_prepare_one(struct pg_db *db, struct st_stmt *s, size_t slot)
{
	PGconn *conn = st_pg_own(db);
	PGresult *res;

	snprintf(s->name, sizeof(s->name), "st%zu", slot);
	res = PQprepare(conn, s->name, s->sql, 0, NULL);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		if (pg_refused_in_abort(conn, res)) {
			PQclear(res);
			return false;
		}
		cm_fatalx("store: cannot prepare \"%.60s\": %s", s->sql,
		    PQresultErrorMessage(res));
	}
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
	s->ends = pg_is_end(s->sql);
	db->w[db->cur].prepared[slot] = true;
	return true;
}

/*
 * The cached statement of sql, prepared on the loop's connection, with
 * *ready; *ready false when it is not prepared there yet and cannot be:
 * the transaction is aborted (by a statement sent ahead that failed), and
 * the server parses nothing but its end until then.
 */
static struct st_stmt *
pg_prepare(struct pg_db *db, const char *sql, bool *ready)
{
	size_t h = ((uintptr_t)sql >> 3) * 0x9E3779B97F4A7C15ull;
	size_t i = (h >> 32) & (CM_PG_STMT_CACHE - 1);

	for (size_t n = 0; n < CM_PG_STMT_CACHE; n++) {
		size_t slot = (i + n) & (CM_PG_STMT_CACHE - 1);
		struct st_stmt *s = &db->cache[slot];

		if (s->sql != NULL && s->sql != sql)
			continue;
		if (s->sql == NULL) {
			s->be = &st_db_pg_backend;
			s->sql = sql;
			s->db = db;
		}
		*ready = true;
		if (!db->w[db->cur].prepared[slot]) {
			st_pg_drain(db);
			*ready = pg_prepare_one(db, s, slot);
		}
		return s;
	}
	cm_fatalx("store: statement cache is full");
}

/* Whether the loop's connection is inside a transaction an error has not
 * aborted (with statements sent ahead: as far as is known). */
static bool
pg_txn_open(struct pg_db *db, PGconn *conn)
{
	if (db->failed)
		return false;
	return db->pending > 0 || PQtransactionStatus(conn) == PQTRANS_INTRANS;
}

/* Runs s with its values; its result (or error) waits for the steps. */
static void
pg_run(struct pg_db *db, struct st_stmt *s, const char *const *values,
    const int *lengths, const int *formats)
{
	PGconn *conn = st_pg_own(db);
	bool guard = s->write && pg_txn_open(db, conn);
	bool saved = false;
	ExecStatusType st;

	s->rc = ST_OK;
	s->row = -1;
	s->n_rows = 0;
	if (s->ends)
		st_pg_drain(db);
	if (guard || db->pending > 0)
		s->res = st_pg_run_piped(
		    db, s, values, lengths, formats, guard, &saved);
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
	if (s->write)
		db->changes = 0;
	/* Skipped after a statement sent ahead failed: that one's message
	 * is the one kept. */
	if (st == PGRES_PIPELINE_ABORTED) {
		s->rc = ST_ERROR;
		return;
	}
	s->rc = st_pg_fail(db, s->res);
	/* Undo only this statement, and keep its own error message.  (With
	 * no savepoint of its own, ROLLBACK TO would undo an earlier one.) */
	if (saved) {
		PGresult *res =
		    PQexec(conn, "ROLLBACK TO st_write; RELEASE st_write");

		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			cm_warnx("store: cannot undo a failed write: %s",
			    PQresultErrorMessage(res));
		PQclear(res);
	}
}

/* Binds s's parameters, described by types, from ap into values,
 * lengths and formats, as libpq takes them. */
static void
pg_bind(struct st_stmt *s, const char *types, va_list ap, const char **values,
    int *lengths, int *formats)
{
	int k;

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
}

/* A statement the aborted transaction cannot prepare: it fails as the
 * ones prepared already do there, at its first step. */
static void
pg_refused(struct pg_db *db, struct st_stmt *s)
{
	s->rc = ST_ERROR;
	s->row = -1;
	s->n_rows = 0;
	if (!db->failed)
		snprintf(db->err, sizeof(db->err), "%s",
		    "the transaction is aborted");
}

int
st_pg_vquery(struct st_db *d, struct st_stmt **out, const char *sql,
    const char *types, va_list ap)
{
	struct pg_db *db = PG(d);
	bool ready;
	struct st_stmt *s = pg_prepare(db, sql, &ready);
	const char *values[CM_PG_PARAMS_MAX];
	int lengths[CM_PG_PARAMS_MAX], formats[CM_PG_PARAMS_MAX];

	st_pg_done(s);
	*out = s;
	if (!ready) {
		pg_refused(db, s);
		return ST_OK;
	}
	pg_bind(s, types, ap, values, lengths, formats);
	pg_run(db, s, values, lengths, formats);
	return ST_OK;
}

/*
 * st_db_send: sent ahead while deferring inside a transaction, the rows it
 * is to change counted as changed; otherwise run and waited for.
 */
int
st_pg_vsend(struct st_db *d, int64_t rows, const char *sql, const char *types,
    va_list ap)
{
	struct pg_db *db = PG(d);
	bool ready;
	struct st_stmt *s = pg_prepare(db, sql, &ready);
	const char *values[CM_PG_PARAMS_MAX];
	int lengths[CM_PG_PARAMS_MAX], formats[CM_PG_PARAMS_MAX];
	int rc;

	st_pg_done(s);
	if (!ready) {
		pg_refused(db, s);
		return ST_ERROR;
	}
	pg_bind(s, types, ap, values, lengths, formats);
	if (!db->defer || !pg_txn_open(db, st_pg_own(db))) {
		pg_run(db, s, values, lengths, formats);
		rc = s->rc != ST_OK ? s->rc : ST_DONE;
		st_pg_done(s);
		return rc;
	}
	st_pg_send(db, s, NULL, values, lengths, formats, rows);
	db->changes = rows > 0 ? rows : 0;
	db->total_changes += db->changes;
	return ST_DONE;
}
