/*
 * db.h: the narrow boundary between the store's operations and its
 * database.  SQL is written once, with $1..$n parameters, in the common
 * subset of SQLite and PostgreSQL; a backend prepares, binds and steps it.
 *
 * Only the store process includes this header.
 */
#ifndef ST_DB_H
#define ST_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum st_rc {
	ST_OK = 0,
	ST_ROW = 1,         /* st_stmt_step: a row is ready */
	ST_DONE = 2,        /* st_stmt_step: no more rows */
	ST_ERROR = -1,      /* anything else; see st_db_errmsg */
	ST_CONSTRAINT = -2, /* a UNIQUE, CHECK or FOREIGN KEY constraint */
};

struct st_db;
struct st_stmt;

/*
 * Configures SQLite for this process, once: threading and memory
 * accounting.  It takes effect only before SQLite initialises;
 * st_db_open_sqlite calls it first.  Returns 0 when all of it is in place.
 */
int st_db_configure(void);

/* Opens (creating) a SQLite database with WAL, synchronous=FULL and
 * foreign keys on.  path may be ":memory:".  Returns ST_OK with *out
 * set, or ST_ERROR with *out NULL. */
int st_db_open_sqlite(struct st_db **out, const char *path);
/*
 * Connects to PostgreSQL with a libpq connection string.  The DSN is a
 * secret: it is never logged, and only libpq keeps it.  The schema is
 * whatever the DSN's search_path selects.  Opens CM_PG_WRITERS writing
 * connections.  Returns ST_OK with *out set, or ST_ERROR with *out NULL.
 */
int st_db_open_pg(struct st_db **out, const char *dsn);
/* Closes db and frees it, with its prepared statements; NULL is ignored. */
void st_db_close(struct st_db *db);
const char *st_db_dialect(const struct st_db *db); /* "sqlite", "postgres" */
/*
 * Whether other stores may write the same database at once (PostgreSQL):
 * then a value read outside a row lock may be stale by the next write.
 */
bool st_db_shared(const struct st_db *db);

/* Begins the group's write transaction: BEGIN IMMEDIATE on SQLite (the
 * write lock at once), BEGIN on PostgreSQL, sent ahead while deferring
 * (a BEGIN that then fails ends the process: the connection is in no
 * known state).  Returns ST_OK or ST_ERROR. */
int st_db_begin(struct st_db *db);

/* Runs one or more statements without parameters or rows. */
int st_db_exec(struct st_db *db, const char *sql);

/*
 * Prepares sql (cached by its address: pass string literals) and binds
 * parameters described by types, one character each: 's' const char *
 * (NULL binds NULL), 'i' int64_t, 'b' int used as 0/1, 'n' an int64_t
 * where 0 binds NULL (for nullable timestamps), 'B' a blob given as two
 * arguments, const void * and size_t.  Parameter k is $k.
 * Returns ST_OK with *out ready to step.  The statement stays busy until
 * st_stmt_done, so one SQL text cannot be open twice at once.  Strings and
 * blobs are bound without a copy: they must stay as they are until then.
 */
int st_db_query(struct st_db *db, struct st_stmt **out, const char *sql,
    const char *types, ...);
/* The next row: ST_ROW when one is ready, ST_DONE past the last,
 * ST_CONSTRAINT or ST_ERROR when the statement failed. */
int st_stmt_step(struct st_stmt *st);
/* Ends st's run, its parameters and rows released and the statement free
 * to be queried again; NULL is ignored. */
void st_stmt_done(struct st_stmt *st);

/* Column accessors for the current row.  text is NULL for SQL NULL and
 * valid until the next step or done. */
const char *st_col_text(struct st_stmt *st, int col);
int64_t st_col_int(struct st_stmt *st, int col);
const void *st_col_blob(struct st_stmt *st, int col, size_t *len);
bool st_col_null(struct st_stmt *st, int col);

/* Runs a statement that returns no rows (or ignores them).  Returns ST_DONE,
 * ST_CONSTRAINT or ST_ERROR. */
int st_db_run(struct st_db *db, const char *sql, const char *types, ...);
/*
 * Sending ahead.  A write whose caller needs no answer but that it did
 * what it was for may be sent and not waited for, with the statements
 * after it: on PostgreSQL each statement is a round trip, and a group's
 * writes so travel together (db_pg.c).  This is for a pass over a group
 * that runs again from the start when anything of it fails (store.c):
 * the failure of a write sent ahead is known only later, when whatever
 * ran after it has already run.
 *
 * st_db_defer turns sending ahead on or off (off at open).  While on,
 * st_db_send may only send its statement: it returns ST_DONE, and
 * st_db_changes and st_db_total_changes count the rows it is to change
 * (none for ST_ROWS_ANY).  A statement sent ahead that fails, or changes
 * another number of rows than it was sent to, makes every statement after
 * it fail and st_db_settle return ST_ERROR.  While off, st_db_send is
 * st_db_run.  On SQLite, whose statements cost no round trip, it always
 * is.
 */
#define ST_ROWS_ANY (-1)
void st_db_defer(struct st_db *db, bool on);
/*
 * Runs (or, deferring, sends) a statement that changes exactly rows rows
 * when it does what it is for, or any number with ST_ROWS_ANY.  Returns
 * ST_DONE, ST_CONSTRAINT or ST_ERROR, as st_db_run.
 */
int st_db_send(
    struct st_db *db, int64_t rows, const char *sql, const char *types, ...);
/*
 * Waits for every statement sent ahead.  Returns ST_DONE when each did
 * what it was sent for, else ST_ERROR: the transaction is then aborted
 * (st_db_in_txn is false), and what ran in it must run again.
 */
int st_db_settle(struct st_db *db);

/*
 * COMMIT.  With sync, the commit does not wait: *sync is then what must
 * finish (st_db_sync) before anything of the transaction is acknowledged,
 * or NULL when nothing waits.  On SQLite that is the write-ahead log's
 * sync, the COMMIT itself being done; on PostgreSQL it is the COMMIT,
 * sent and not waited for, on a connection the next transaction does not
 * use (db_pg.c).  Returns ST_DONE (also when the COMMIT was only sent) or
 * the error of a COMMIT that failed here.
 */
struct st_sync;
int st_db_commit(struct st_db *db, struct st_sync **sync);
/*
 * Finishes what a commit left to finish (sync, from st_db_commit), on one
 * thread beside the one that uses db (the loop's acker).  Returns ST_DONE
 * once the transaction is committed and durable, or ST_ERROR when its
 * COMMIT failed (PostgreSQL): nothing of it stands, and *full says whether
 * for a full disk.  A log that cannot be synced (SQLite), a connection
 * lost or a COMMIT unanswered for CM_PG_COMMIT_WAIT_MS (PostgreSQL) end
 * the process: what the database holds is unknown, and nothing of it was
 * acknowledged.  On PostgreSQL the connection goes back to db's thread,
 * which waits for it until then; every sync must be finished, in the
 * order of its commits.
 */
int st_db_sync(struct st_db *db, struct st_sync *sync, bool *full);
/*
 * Whether finishing one commit's sync finishes every earlier commit's too
 * (SQLite: one log, synced to its end), rather than each its own
 * (PostgreSQL).
 */
bool st_db_sync_covers(const struct st_db *db);
/* Rows changed since the connection opened, by every statement. */
int64_t st_db_total_changes(struct st_db *db);
/*
 * Work done so far by every prepared statement, in SQLite virtual machine
 * steps: a measure of what a query costs that no clock disturbs.  Always
 * 0 on PostgreSQL, which reports nothing of the kind to its client.
 */
int64_t st_db_work(struct st_db *db);
/* Whether a transaction is open (SQLite may end one on its own after an
 * I/O error; on PostgreSQL one that an error aborted is no longer open). */
bool st_db_in_txn(struct st_db *db);
/* Rows changed by the last INSERT, UPDATE or DELETE. */
int64_t st_db_changes(struct st_db *db);
/* The message of the last failure on db, valid until its next call. */
const char *st_db_errmsg(struct st_db *db);
/* Whether a statement failed on a full disk since the last call, which
 * forgets it. */
bool st_db_disk_full(struct st_db *db);
/*
 * Whether a statement failed since the last call (which forgets it)
 * because the transaction met another writer's: a deadlock or a
 * serialization failure (PostgreSQL 40P01, 40001).  The statement failed
 * (and with it the transaction, unless it ran in a savepoint of its own),
 * and the same statements run again in a new transaction may succeed.
 * Never on SQLite, whose one writer meets nobody.
 */
bool st_db_conflict(struct st_db *db);

/*
 * Announces the group's events to every store listening on the same
 * database (store/notify.h), as part of the open transaction: lines holds
 * one announcement a line ("<space_id> <sequence>", or "<space_id> 0
 * <kind>" for a notice), and they are delivered only if the transaction
 * commits.  Returns ST_DONE (at once where nobody else listens: SQLite)
 * or ST_ERROR, which leaves the transaction to fail.
 */
int st_db_announce(struct st_db *db, const char *lines);
/*
 * The server processes of the writing connections (PostgreSQL's backend
 * pids, what a notification names as its sender) into out, at most max.
 * Returns how many: none on SQLite.
 */
size_t st_db_sessions(struct st_db *db, int64_t *out, size_t max);

/* PRAGMA synchronous (2 is FULL); on PostgreSQL 2 when every commit
 * waits for its WAL to be flushed (synchronous_commit and fsync on). */
int st_db_synchronous(struct st_db *db);

#endif
