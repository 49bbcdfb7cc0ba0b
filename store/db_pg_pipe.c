/*
 * db_pg_pipe.c: the PostgreSQL backend's statements sent ahead (db.h,
 * "Sending ahead"), in libpq's pipeline mode.
 *
 * Every statement is a round trip to the server, and the store's loop
 * waits for each.  A write whose caller needs no answer but that it did
 * what it was for (an event's row, the Space's numbering, the op_id
 * memory) is, while the store defers, only sent: st_pg_send queues it on
 * the connection in pipeline mode, and its result is read with the next
 * statement whose answer is needed, which travels in the same round trip
 * (st_pg_run_piped), or when the group settles (st_pg_drain).  The
 * server runs statements in the order they are sent, so what runs after
 * a write sees it, as if it had been waited for.
 *
 * A statement sent ahead runs in no savepoint: when it fails, the server
 * aborts the transaction and skips everything up to the round trip's
 * end, each of those results PGRES_PIPELINE_ABORTED.  Its failure is
 * then known only after whatever the store did next, so it is the
 * failure of the whole pass: st_db_settle says so, nothing of the
 * transaction can commit (pg_commit refuses it), and store.c runs the
 * group again with every statement waited for.  A write that changes
 * another number of rows than it was sent for fails the same way, though
 * the server took it.
 *
 * No savepoint is also what makes these writes cheap on the server.  A
 * write in a savepoint of its own is a subtransaction; one that updates
 * a row its transaction locked (the Space row, FOR UPDATE) makes a
 * multixact of the two, and savepoints never released nest, each making
 * the next statement's checks longer.  The savepoint of a write that is
 * waited for is now released in the same round trip.
 *
 * Invariant: the loop's connection is in pipeline mode exactly while
 * statements sent ahead wait to be read (db->pending).  Anything that
 * waits for the server otherwise (PQexec, PQprepare, the COMMIT) drains
 * them first.
 */
#include "db.h"
#include "db_backend.h"
#include "db_pg_int.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits.h"
#include "log.h"

static _Noreturn void
pipe_lost(PGconn *conn)
{
	cm_fatalx("store: the PostgreSQL connection is lost: %s",
	    PQerrorMessage(conn));
}

static void
pipe_enter(PGconn *conn)
{
	if (PQpipelineStatus(conn) == PQ_PIPELINE_OFF &&
	    PQenterPipelineMode(conn) != 1)
		cm_fatalx("store: cannot enter pipeline mode: %s",
		    PQerrorMessage(conn));
}

/* The next statement's result, and the NULL that ends it. */
static PGresult *
pipe_next(PGconn *conn)
{
	PGresult *res = PQgetResult(conn), *more;

	if (res == NULL || PQstatus(conn) == CONNECTION_BAD)
		pipe_lost(conn);
	if (PQresultStatus(res) == PGRES_PIPELINE_SYNC ||
	    (more = PQgetResult(conn)) != NULL)
		cm_fatalx("store: PostgreSQL's results are out of step");
	return res;
}

/* Reads the round trip's end and leaves pipeline mode. */
static void
pipe_end(PGconn *conn)
{
	PGresult *res = PQgetResult(conn);

	if (res == NULL || PQstatus(conn) == CONNECTION_BAD)
		pipe_lost(conn);
	if (PQresultStatus(res) != PGRES_PIPELINE_SYNC)
		cm_fatalx("store: PostgreSQL's results are out of step");
	PQclear(res);
	if (PQexitPipelineMode(conn) != 1)
		cm_fatalx("store: cannot leave pipeline mode: %s",
		    PQerrorMessage(conn));
}

/* Reads the results of the statements sent ahead, in their order, and
 * notes the first that did not do what it was sent for. */
static void
pipe_collect(struct pg_db *db, PGconn *conn)
{
	for (int i = 0; i < db->pending; i++) {
		PGresult *res = pipe_next(conn);
		ExecStatusType st = PQresultStatus(res);
		int64_t rows = db->rows[i], got;

		if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
			got = strtoll(PQcmdTuples(res), NULL, 10);
			if (rows >= 0 && got != rows && !db->failed) {
				snprintf(db->err, sizeof(db->err),
				    "a write sent ahead changed %lld rows, "
				    "not %lld",
				    (long long)got, (long long)rows);
				db->failed = true;
			}
		} else if (rows == PG_SENT_BEGIN) {
			cm_fatalx("store: PostgreSQL refused a BEGIN: %s",
			    PQresultErrorMessage(res));
		} else if (st != PGRES_PIPELINE_ABORTED || !db->failed) {
			/* The first failure's message is the one kept: every
			 * result after it is only aborted. */
			if (st != PGRES_PIPELINE_ABORTED)
				st_pg_fail(db, res);
			db->failed = true;
		}
		PQclear(res);
	}
	db->pending = 0;
}

void
st_pg_send(struct pg_db *db, struct st_stmt *s, const char *sql,
    const char *const *values, const int *lengths, const int *formats,
    int64_t rows)
{
	PGconn *conn = st_pg_own(db);
	int ok;

	pipe_enter(conn);
	if (s != NULL)
		ok = PQsendQueryPrepared(
		    conn, s->name, s->n_params, values, lengths, formats, 0);
	else
		ok = PQsendQueryParams(conn, sql, 0, NULL, NULL, NULL, NULL, 0);
	if (ok != 1)
		pipe_lost(conn);
	db->rows[db->pending++] = rows;
	if (db->pending == CM_PG_PIPELINE_MAX)
		st_pg_drain(db);
}

void
st_pg_drain(struct pg_db *db)
{
	PGconn *conn;

	if (db->pending == 0)
		return;
	conn = st_pg_own(db);
	if (PQpipelineSync(conn) != 1)
		pipe_lost(conn);
	pipe_collect(db, conn);
	pipe_end(conn);
}

/* Queues sql, a statement of no parameters. */
static void
pipe_text(PGconn *conn, const char *sql)
{
	if (PQsendQueryParams(conn, sql, 0, NULL, NULL, NULL, NULL, 0) != 1)
		pipe_lost(conn);
}

PGresult *
st_pg_run_piped(struct pg_db *db, struct st_stmt *s, const char *const *values,
    const int *lengths, const int *formats, bool guard, bool *saved)
{
	PGconn *conn = st_pg_own(db);
	PGresult *sp = NULL, *res, *rel = NULL;

	pipe_enter(conn);
	if (guard)
		pipe_text(conn, "SAVEPOINT st_write");
	if (PQsendQueryPrepared(
	        conn, s->name, s->n_params, values, lengths, formats, 0) != 1)
		pipe_lost(conn);
	/* Released at once when the statement succeeds (else the server
	 * skips it): savepoints left open nest, and each costs the
	 * statements after it. */
	if (guard)
		pipe_text(conn, "RELEASE st_write");
	if (PQpipelineSync(conn) != 1)
		pipe_lost(conn);
	pipe_collect(db, conn);
	if (guard)
		sp = pipe_next(conn);
	res = pipe_next(conn);
	if (guard)
		rel = pipe_next(conn);
	pipe_end(conn);
	*saved = sp != NULL && PQresultStatus(sp) == PGRES_COMMAND_OK;
	/* A RELEASE that failed after the statement succeeded aborted the
	 * transaction: what follows fails, and its message is this. */
	if (rel != NULL &&
	    (PQresultStatus(res) == PGRES_COMMAND_OK ||
	        PQresultStatus(res) == PGRES_TUPLES_OK) &&
	    PQresultStatus(rel) != PGRES_COMMAND_OK)
		st_pg_fail(db, rel);
	PQclear(sp);
	PQclear(rel);
	return res;
}
