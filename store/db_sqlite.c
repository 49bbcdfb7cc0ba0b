/*
 * db_sqlite.c: the SQLite backend of db.h.
 *
 * Prepared statements are cached by the address of their SQL text: every
 * operation passes a string literal, so the cache is a pointer hash with
 * no string compares, and a statement is prepared once per process.
 */
#include "db.h"
#include "db_backend.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits.h"
#include "log.h"
#include "vfs.h"
#include "wal.h"

#define ST_STMT_CACHE 256 /* power of two; well above the SQL texts we have */

#define ST_PARAMS_MAX 32

struct st_stmt {
	const struct st_db_backend *be; /* first: db_backend.h */
	const char *sql;
	sqlite3_stmt *stmt;
	struct st_db *db;
	int n_params;
	int idx[ST_PARAMS_MAX + 1]; /* $k is SQLite parameter idx[k] */
};

struct st_db {
	const struct st_db_backend *be; /* first: db_backend.h */
	sqlite3 *conn;
	struct st_wal *wal; /* the checkpointer; NULL in memory */
	int last_rc;
	bool full; /* SQLITE_FULL seen since st_db_disk_full last asked */
	struct st_stmt cache[ST_STMT_CACHE];
};

static int
db_rc(struct st_db *db, int rc)
{
	db->last_rc = rc;
	if ((rc & 0xff) == SQLITE_FULL)
		db->full = true;
	switch (rc & 0xff) {
	case SQLITE_OK:
		return ST_OK;
	case SQLITE_ROW:
		return ST_ROW;
	case SQLITE_DONE:
		return ST_DONE;
	case SQLITE_CONSTRAINT:
		return ST_CONSTRAINT;
	default:
		return ST_ERROR;
	}
}

static pthread_once_t configure_once = PTHREAD_ONCE_INIT;
static bool configured;

/*
 * Every connection is used by one thread only: the store's, and the
 * checkpointer's (wal.c).  Memory accounting would cost a lock per
 * allocation.  The allocator and the page cache are SQLite's own.
 */
static void
configure(void)
{
	configured = sqlite3_config(SQLITE_CONFIG_MULTITHREAD) == SQLITE_OK &&
	             sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK;
}

int
st_db_configure(void)
{
	pthread_once(&configure_once, configure);
	return configured ? 0 : -1;
}

int
st_db_open_sqlite(struct st_db **out, const char *path)
{
	struct st_db *db;
	const char *file;
	int rc;

	*out = NULL;
	if (st_db_configure() != 0)
		cm_warnx("store: SQLite started before the store could"
		         " configure it; it runs on its defaults");
	if (st_vfs_register() != 0) {
		cm_warnx("store: cannot register the SQLite VFS");
		return ST_ERROR;
	}
	if (strcmp(path, ":memory:") != 0 && st_vfs_rewrite_log(path) != 0) {
		cm_warnx(
		    "store: cannot rewrite the write-ahead log of %s", path);
		return ST_ERROR;
	}
	if ((db = calloc(1, sizeof(*db))) == NULL)
		return ST_ERROR;
	db->be = &st_db_sqlite_backend;
	rc = sqlite3_open_v2(path, &db->conn,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
	        SQLITE_OPEN_EXRESCODE,
	    ST_VFS_NAME);
	if (rc != SQLITE_OK) {
		cm_warnx("store: cannot open database: %s",
		    db->conn ? sqlite3_errmsg(db->conn) : sqlite3_errstr(rc));
		sqlite3_close(db->conn);
		free(db);
		return ST_ERROR;
	}
	/*
	 * synchronous=FULL: an acknowledged write survives power loss.  Group
	 * commit pays the fsync once per batch instead of once per request.
	 */
	if (st_db_exec(db,
	        "PRAGMA journal_mode=WAL;"
	        "PRAGMA synchronous=FULL;"
	        "PRAGMA foreign_keys=ON;"
	        /* Savepoint journals stay in memory: one savepoint
	         * per write in a group must not cost file I/O. */
	        "PRAGMA temp_store=MEMORY;"
	        "PRAGMA cache_size=-" CM_STR(
	            CM_DB_CACHE_KIB) ";"
	                             "PRAGMA busy_timeout=" CM_STR(
	                                 CM_DB_BUSY_TIMEOUT_MS) ";") != ST_OK) {
		st_db_close(db);
		return ST_ERROR;
	}
	file = sqlite3_db_filename(db->conn, "main");
	if (file != NULL && file[0] != '\0' &&
	    st_wal_start(&db->wal, db->conn, file) != 0) {
		st_db_close(db);
		return ST_ERROR;
	}
	*out = db;
	return ST_OK;
}

static void
sq_close(struct st_db *db)
{
	if (db == NULL)
		return;
	st_wal_stop(db->wal);
	for (size_t i = 0; i < ST_STMT_CACHE; i++)
		sqlite3_finalize(db->cache[i].stmt);
	sqlite3_close(db->conn);
	free(db);
}

static int
sq_exec(struct st_db *db, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(db->conn, sql, NULL, NULL, &msg);

	if (rc != SQLITE_OK) {
		cm_warnx("store: %s", msg ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
	}
	rc = db_rc(db, rc);
	return rc == ST_DONE ? ST_OK : rc;
}

/*
 * Parameters are $1..$n, as in PostgreSQL, in any order and repeated at
 * will.  Their SQLite indexes are looked up once, when the statement is
 * prepared, so binding needs no lookup.
 */
static void
db_map_params(struct st_stmt *s)
{
	int total = sqlite3_bind_parameter_count(s->stmt);
	char name[16];

	for (int k = 1; k <= ST_PARAMS_MAX; k++) {
		snprintf(name, sizeof(name), "$%d", k);
		if ((s->idx[k] = sqlite3_bind_parameter_index(s->stmt, name)) ==
		    0)
			break;
		s->n_params = k;
	}
	if (s->n_params != total)
		cm_fatalx("store: parameters of \"%.60s\" are not $1..$%d",
		    s->sql, total);
}

static struct st_stmt *
db_prepare(struct st_db *db, const char *sql)
{
	size_t h = ((uintptr_t)sql >> 3) * 0x9E3779B97F4A7C15ull;
	size_t i = (h >> 32) & (ST_STMT_CACHE - 1);
	int rc;

	for (size_t n = 0; n < ST_STMT_CACHE; n++) {
		struct st_stmt *s = &db->cache[(i + n) & (ST_STMT_CACHE - 1)];

		if (s->sql == sql)
			return s;
		if (s->sql != NULL)
			continue;
		rc = sqlite3_prepare_v3(db->conn, sql, -1,
		    SQLITE_PREPARE_PERSISTENT, &s->stmt, NULL);
		/* Short of memory, the request fails, not the store: the
		 * next use prepares the statement again. */
		if ((rc & 0xff) == SQLITE_NOMEM) {
			db_rc(db, rc);
			sqlite3_finalize(s->stmt);
			s->stmt = NULL;
			return NULL;
		}
		if (rc != SQLITE_OK) {
			db_rc(db, rc);
			cm_fatalx("store: cannot prepare \"%.60s\": %s", sql,
			    sqlite3_errmsg(db->conn));
		}
		s->be = &st_db_sqlite_backend;
		s->sql = sql;
		s->db = db;
		db_map_params(s);
		return s;
	}
	cm_fatalx("store: statement cache is full");
}

/*
 * Values are bound SQLITE_STATIC: the caller's memory outlives the
 * statement's use of it (db.h), and st_stmt_done clears the bindings, so
 * a copy per value, a malloc and a free each, buys nothing.
 */
static int
db_bind(struct st_stmt *s, const char *types, va_list ap)
{
	int n = s->n_params;
	int rc = SQLITE_OK;
	int k;

	for (k = 1; types[k - 1] != '\0' && rc == SQLITE_OK; k++) {
		int i = k <= n ? s->idx[k] : 0;

		if (i == 0)
			cm_fatalx(
			    "store: too many parameters for \"%.60s\"", s->sql);
		switch (types[k - 1]) {
		case 's': {
			const char *v = va_arg(ap, const char *);
			rc = v ? sqlite3_bind_text(
			             s->stmt, i, v, -1, SQLITE_STATIC)
			       : sqlite3_bind_null(s->stmt, i);
			break;
		}
		case 'i':
			rc =
			    sqlite3_bind_int64(s->stmt, i, va_arg(ap, int64_t));
			break;
		case 'B': {
			const void *v = va_arg(ap, const void *);
			size_t len = va_arg(ap, size_t);
			rc = sqlite3_bind_blob64(
			    s->stmt, i, v, len, SQLITE_STATIC);
			break;
		}
		case 'b':
			rc = sqlite3_bind_int(s->stmt, i, va_arg(ap, int) != 0);
			break;
		case 'n': {
			int64_t v = va_arg(ap, int64_t);
			rc = v ? sqlite3_bind_int64(s->stmt, i, v)
			       : sqlite3_bind_null(s->stmt, i);
			break;
		}
		default:
			cm_fatalx(
			    "store: bad parameter type '%c'", types[k - 1]);
		}
	}
	if (rc == SQLITE_OK && k - 1 != n)
		cm_fatalx("store: %d parameters for \"%.60s\", which has %d",
		    k - 1, s->sql, n);
	return db_rc(s->db, rc);
}

static int
db_vquery(struct st_db *db, struct st_stmt **out, const char *sql,
    const char *types, va_list ap)
{
	struct st_stmt *s = db_prepare(db, sql);
	int rc;

	if (s == NULL)
		return ST_ERROR;
	if ((rc = db_bind(s, types, ap)) != ST_OK) {
		st_stmt_done(s);
		return rc;
	}
	*out = s;
	return ST_OK;
}

static int
sq_stmt_step(struct st_stmt *s)
{
	return db_rc(s->db, sqlite3_step(s->stmt));
}

static void
sq_stmt_done(struct st_stmt *s)
{
	if (s == NULL)
		return;
	sqlite3_reset(s->stmt);
	sqlite3_clear_bindings(s->stmt);
}

static const char *
sq_col_text(struct st_stmt *s, int col)
{
	return (const char *)sqlite3_column_text(s->stmt, col);
}

static int64_t
sq_col_int(struct st_stmt *s, int col)
{
	return sqlite3_column_int64(s->stmt, col);
}

static const void *
sq_col_blob(struct st_stmt *s, int col, size_t *len)
{
	const void *v = sqlite3_column_blob(s->stmt, col);

	*len = (size_t)sqlite3_column_bytes(s->stmt, col);
	return v;
}

static bool
sq_col_null(struct st_stmt *s, int col)
{
	return sqlite3_column_type(s->stmt, col) == SQLITE_NULL;
}

static int64_t
sq_total_changes(struct st_db *db)
{
	return sqlite3_total_changes64(db->conn);
}

static int
sq_commit(struct st_db *db, struct st_sync **sync)
{
	static const char sql[] = "COMMIT";
	int rc;

	if (sync == NULL) {
		rc = st_db_run(db, sql, "");
	} else {
		st_vfs_defer_begin();
		rc = st_db_run(db, sql, "");
		/* SQLite already counts the commit in: a commit that is not in
		 * the file may only end the process, and recovery drops it. */
		if (st_vfs_defer_end(sync) != 0)
			cm_fatalx("store: cannot write the write-ahead log");
	}
	st_wal_after_commit(db->wal);
	return rc;
}

static int64_t
sq_work(struct st_db *db)
{
	int64_t n = 0;

	for (size_t i = 0; i < ST_STMT_CACHE; i++)
		if (db->cache[i].stmt != NULL)
			n += sqlite3_stmt_status(
			    db->cache[i].stmt, SQLITE_STMTSTATUS_VM_STEP, 0);
	return n;
}

static bool
sq_in_txn(struct st_db *db)
{
	return sqlite3_get_autocommit(db->conn) == 0;
}

static int64_t
sq_changes(struct st_db *db)
{
	return sqlite3_changes64(db->conn);
}

static bool
sq_disk_full(struct st_db *db)
{
	bool full = db->full;

	db->full = false;
	return full;
}

/* One writer: no transaction ever meets another's. */
static bool
sq_conflict(struct st_db *db)
{
	(void)db;
	return false;
}

static const char *
sq_errmsg(struct st_db *db)
{
	return sqlite3_errmsg(db->conn);
}

static int
sq_synchronous(struct st_db *db)
{
	sqlite3_stmt *s;
	int v = -1;

	if (sqlite3_prepare_v2(db->conn, "PRAGMA synchronous", -1, &s, NULL) !=
	    SQLITE_OK)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return v;
}

/*
 * A failed sync leaves the file's state unknown: crash, and let recovery
 * decide.  Nothing of the commits it covers was acknowledged; their
 * requesters re-send.
 */
static int
sq_sync(struct st_db *db, struct st_sync *sync, bool *full)
{
	int rc = st_vfs_sync(sync);

	(void)db;
	(void)full;
	if (rc != SQLITE_OK)
		cm_fatalx("store: the write-ahead log cannot be synced: %s",
		    sqlite3_errstr(rc));
	return ST_DONE;
}

/* One process owns the database: no other store hears of its events. */
static size_t
sq_sessions(struct st_db *d, int64_t *out, size_t max)
{
	(void)d;
	(void)out;
	(void)max;
	return 0;
}

const struct st_db_backend st_db_sqlite_backend = {
    .dialect = "sqlite",
    /* The write lock at once: a group never waits halfway through. */
    .begin_sql = "BEGIN IMMEDIATE",
    .shared = false,
    /* One log: its sync reaches every commit written before. */
    .sync_covers = true,
    .close = sq_close,
    .exec = sq_exec,
    .vquery = db_vquery,
    .step = sq_stmt_step,
    .done = sq_stmt_done,
    .col_text = sq_col_text,
    .col_int = sq_col_int,
    .col_blob = sq_col_blob,
    .col_null = sq_col_null,
    .commit = sq_commit,
    .sync = sq_sync,
    .total_changes = sq_total_changes,
    .work = sq_work,
    .in_txn = sq_in_txn,
    .changes = sq_changes,
    .errmsg = sq_errmsg,
    .disk_full = sq_disk_full,
    .conflict = sq_conflict,
    .synchronous = sq_synchronous,
    .sessions = sq_sessions,
};
