/*
 * db_pg_int.h: what the PostgreSQL backend's files share: db_pg.c (the
 * connections, the COMMIT's hand-over to the acker, the backend table),
 * db_pg_stmt.c (preparing, binding and running statements),
 * db_pg_pipe.c (statements sent ahead) and db_pg_row.c (a result's rows
 * and columns).  Nothing outside the backend
 * includes it; everyone else sees db.h.
 */
#ifndef ST_DB_PG_INT_H
#define ST_DB_PG_INT_H

#include <libpq-fe.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "db_backend.h"
#include "limits.h"

#define PG_BYTEA_OID 17 /* pg_type.oid of bytea */

struct pg_db;

struct st_stmt {
	const struct st_db_backend *be; /* first: db_backend.h */
	const char *sql;
	struct pg_db *db;
	char name[16]; /* the prepared statement's name on the server */
	int n_params;
	bool write; /* INSERT, UPDATE or DELETE: may fail a constraint */
	/* ROLLBACK or COMMIT: runs only after what was sent ahead is read,
	 * never in the same round trip (db_pg_pipe.c). */
	bool ends;
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
	const struct st_db_backend *be; /* first: db_backend.h */
	struct pg_conn w[CM_PG_WRITERS];
	int n_w;    /* connected (st_db_open_pg) */
	int cur;    /* the writer the loop uses */
	bool owned; /* w[cur] is known to be the loop's (pg_own) */
	int64_t changes, total_changes;
	bool full;     /* disk_full (53100) seen since st_db_disk_full asked */
	bool conflict; /* 40P01 or 40001 seen since st_db_conflict asked */
	char err[CM_PG_ERRMSG_MAX];
	struct st_stmt cache[CM_PG_STMT_CACHE];
	/* Sending ahead (db_pg_pipe.c).  w[cur] is in pipeline mode exactly
	 * while pending is not 0. */
	bool defer;  /* st_db_defer */
	bool failed; /* a statement sent ahead failed since the BEGIN */
	int pending; /* statements sent ahead, their results unread */
	int64_t rows[CM_PG_PIPELINE_MAX]; /* what each is to change */
};

/* What a statement sent ahead is to do, besides succeed (rows[]): change
 * that many rows, any number (ST_ROWS_ANY), or begin the transaction. */
#define PG_SENT_BEGIN (-2)

#define PG(db) ((struct pg_db *)(void *)(db))

/*
 * The connection the loop uses, once the acker has given it back (the
 * first use after a commit may wait for that).  The loop's only.
 */
PGconn *st_pg_own(struct pg_db *db);

/*
 * A failed result's code (ST_CONSTRAINT for SQLSTATE class 23, else
 * ST_ERROR), its message kept for st_db_errmsg; a lost connection ends
 * the process.  res may be NULL (the connection's message is kept).
 */
int st_pg_fail(struct pg_db *db, const PGresult *res);

/*
 * Sending ahead (db_pg_pipe.c).  st_pg_send sends s with its values ahead
 * (or, NULL, the text sql), to change rows rows (rows[]).  st_pg_drain
 * reads every result sent ahead, and the connection leaves pipeline mode;
 * anything that waits for the server calls it first.  st_pg_run_piped
 * runs s after whatever was sent ahead, in one round trip, within a
 * savepoint of its own with guard (*saved then says whether that was
 * made): its result, the caller's to clear.
 */
void st_pg_send(struct pg_db *db, struct st_stmt *s, const char *sql,
    const char *const *values, const int *lengths, const int *formats,
    int64_t rows);
void st_pg_drain(struct pg_db *db);
PGresult *st_pg_run_piped(struct pg_db *db, struct st_stmt *s,
    const char *const *values, const int *lengths, const int *formats,
    bool guard, bool *saved);

/* Ends s's result: frees it and any unescaped bytes.  Safe twice. */
void st_pg_done(struct st_stmt *s);

/* The backend's exec and vquery (db_backend.h), on the loop's connection. */
int st_pg_exec(struct st_db *d, const char *sql);
int st_pg_vquery(struct st_db *d, struct st_stmt **out, const char *sql,
    const char *types, va_list ap);
int st_pg_vsend(struct st_db *d, int64_t rows, const char *sql,
    const char *types, va_list ap);

/* The backend's step and column reads (db_backend.h); a column is read only
 * on a row step returned. */
int st_pg_step(struct st_stmt *s);
const char *st_pg_col_text(struct st_stmt *s, int col);
int64_t st_pg_col_int(struct st_stmt *s, int col);
const void *st_pg_col_blob(struct st_stmt *s, int col, size_t *len);
bool st_pg_col_null(struct st_stmt *s, int col);

#endif
