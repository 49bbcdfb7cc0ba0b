/*
 * db.c: db.h's functions, each passed to the backend the database (or
 * statement) was opened with (db_backend.h).  What is the same on every
 * backend is written here once.
 */
#include "db.h"
#include "db_backend.h"

#include <stdarg.h>

void
st_db_close(struct st_db *db)
{
	if (db != NULL)
		ST_DB_BACKEND(db)->close(db);
}

const char *
st_db_dialect(const struct st_db *db)
{
	return ST_DB_BACKEND(db)->dialect;
}

bool
st_db_shared(const struct st_db *db)
{
	return ST_DB_BACKEND(db)->shared;
}

int
st_db_exec(struct st_db *db, const char *sql)
{
	return ST_DB_BACKEND(db)->exec(db, sql);
}

int
st_db_begin(struct st_db *db)
{
	if (ST_DB_BACKEND(db)->begin != NULL)
		return ST_DB_BACKEND(db)->begin(db);
	return st_db_run(db, ST_DB_BACKEND(db)->begin_sql, "") == ST_DONE
	           ? ST_OK
	           : ST_ERROR;
}

void
st_db_defer(struct st_db *db, bool on)
{
	if (ST_DB_BACKEND(db)->defer != NULL)
		ST_DB_BACKEND(db)->defer(db, on);
}

int
st_db_settle(struct st_db *db)
{
	if (ST_DB_BACKEND(db)->settle == NULL)
		return ST_DONE;
	return ST_DB_BACKEND(db)->settle(db);
}

int
st_db_query(struct st_db *db, struct st_stmt **out, const char *sql,
    const char *types, ...)
{
	va_list ap;
	int rc;

	va_start(ap, types);
	rc = ST_DB_BACKEND(db)->vquery(db, out, sql, types, ap);
	va_end(ap);
	return rc;
}

int
st_stmt_step(struct st_stmt *st)
{
	return ST_DB_BACKEND(st)->step(st);
}

void
st_stmt_done(struct st_stmt *st)
{
	if (st != NULL)
		ST_DB_BACKEND(st)->done(st);
}

const char *
st_col_text(struct st_stmt *st, int col)
{
	return ST_DB_BACKEND(st)->col_text(st, col);
}

int64_t
st_col_int(struct st_stmt *st, int col)
{
	return ST_DB_BACKEND(st)->col_int(st, col);
}

const void *
st_col_blob(struct st_stmt *st, int col, size_t *len)
{
	return ST_DB_BACKEND(st)->col_blob(st, col, len);
}

bool
st_col_null(struct st_stmt *st, int col)
{
	return ST_DB_BACKEND(st)->col_null(st, col);
}

/* st_db_run with a va_list. */
static int
db_vrun(struct st_db *db, const char *sql, const char *types, va_list ap)
{
	struct st_stmt *s;
	int rc;

	if ((rc = ST_DB_BACKEND(db)->vquery(db, &s, sql, types, ap)) != ST_OK)
		return rc;
	while ((rc = st_stmt_step(s)) == ST_ROW)
		;
	st_stmt_done(s);
	return rc;
}

int
st_db_run(struct st_db *db, const char *sql, const char *types, ...)
{
	va_list ap;
	int rc;

	va_start(ap, types);
	rc = db_vrun(db, sql, types, ap);
	va_end(ap);
	return rc;
}

int
st_db_send(
    struct st_db *db, int64_t rows, const char *sql, const char *types, ...)
{
	va_list ap;
	int rc;

	va_start(ap, types);
	if (ST_DB_BACKEND(db)->vsend != NULL)
		rc = ST_DB_BACKEND(db)->vsend(db, rows, sql, types, ap);
	else
		rc = db_vrun(db, sql, types, ap);
	va_end(ap);
	return rc;
}

int
st_db_commit(struct st_db *db, struct st_sync **sync)
{
	return ST_DB_BACKEND(db)->commit(db, sync);
}

int
st_db_sync(struct st_db *db, struct st_sync *sync, bool *full)
{
	*full = false;
	return ST_DB_BACKEND(db)->sync(db, sync, full);
}

bool
st_db_sync_covers(const struct st_db *db)
{
	return ST_DB_BACKEND(db)->sync_covers;
}

int64_t
st_db_total_changes(struct st_db *db)
{
	return ST_DB_BACKEND(db)->total_changes(db);
}

int64_t
st_db_work(struct st_db *db)
{
	return ST_DB_BACKEND(db)->work(db);
}

bool
st_db_in_txn(struct st_db *db)
{
	return ST_DB_BACKEND(db)->in_txn(db);
}

int64_t
st_db_changes(struct st_db *db)
{
	return ST_DB_BACKEND(db)->changes(db);
}

const char *
st_db_errmsg(struct st_db *db)
{
	return ST_DB_BACKEND(db)->errmsg(db);
}

bool
st_db_disk_full(struct st_db *db)
{
	return ST_DB_BACKEND(db)->disk_full(db);
}

bool
st_db_conflict(struct st_db *db)
{
	return ST_DB_BACKEND(db)->conflict(db);
}

int
st_db_announce(struct st_db *db, const char *lines)
{
	const char *sql = ST_DB_BACKEND(db)->announce_sql;

	return sql == NULL ? ST_DONE
	                   : st_db_send(db, ST_ROWS_ANY, sql, "s", lines);
}

size_t
st_db_sessions(struct st_db *db, int64_t *out, size_t max)
{
	return ST_DB_BACKEND(db)->sessions(db, out, max);
}

int
st_db_synchronous(struct st_db *db)
{
	return ST_DB_BACKEND(db)->synchronous(db);
}
