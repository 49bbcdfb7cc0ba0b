/*
 * db_backend.h: the table of one database backend behind db.h.  Only the
 * backends (db_sqlite.c, and db_pg*.c for PostgreSQL) and db.c (the
 * dispatch that db.h's functions are) include it.
 *
 * Every backend's struct st_db and struct st_stmt begins with a pointer
 * to its table, so the dispatch needs nothing else of either.  Each entry
 * has the contract of the db.h function of the same name; st_db_query and
 * st_db_run are built on vquery, step and done.
 */
#ifndef ST_DB_BACKEND_H
#define ST_DB_BACKEND_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct st_db;
struct st_stmt;
struct st_sync;

struct st_db_backend {
	const char *dialect;   /* "sqlite" or "postgres" (migrations) */
	const char *begin_sql; /* the write transaction's BEGIN */
	/* Whether allocating a Space's next event sequence must lock the
	 * Space row first: other stores may write the same database. */
	bool shared;
	/*
	 * Announces committed events to the other stores, inside the
	 * transaction: one parameter, the announcements one a line; NULL
	 * where no other store listens (SQLite).
	 */
	const char *announce_sql;
	bool sync_covers; /* st_db_sync_covers */
	void (*close)(struct st_db *db);
	int (*exec)(struct st_db *db, const char *sql);
	int (*vquery)(struct st_db *db, struct st_stmt **out, const char *sql,
	    const char *types, va_list ap);
	/* Sending ahead (db.h); NULL where every statement runs at once:
	 * st_db_send is then st_db_run, st_db_settle ST_DONE, and
	 * st_db_begin runs begin_sql. */
	int (*begin)(struct st_db *db);
	int (*vsend)(struct st_db *db, int64_t rows, const char *sql,
	    const char *types, va_list ap);
	void (*defer)(struct st_db *db, bool on);
	int (*settle)(struct st_db *db);
	int (*step)(struct st_stmt *st);
	void (*done)(struct st_stmt *st);
	const char *(*col_text)(struct st_stmt *st, int col);
	int64_t (*col_int)(struct st_stmt *st, int col);
	const void *(*col_blob)(struct st_stmt *st, int col, size_t *len);
	bool (*col_null)(struct st_stmt *st, int col);
	int (*commit)(struct st_db *db, struct st_sync **sync);
	int (*sync)(struct st_db *db, struct st_sync *sync, bool *full);
	int64_t (*total_changes)(struct st_db *db);
	int64_t (*work)(struct st_db *db);
	bool (*in_txn)(struct st_db *db);
	int64_t (*changes)(struct st_db *db);
	const char *(*errmsg)(struct st_db *db);
	bool (*disk_full)(struct st_db *db);
	bool (*conflict)(struct st_db *db);
	int (*synchronous)(struct st_db *db);
	size_t (*sessions)(struct st_db *db, int64_t *out, size_t max);
};

/* The table of a struct st_db or struct st_stmt (its first member). */
#define ST_DB_BACKEND(p) \
	(*(const struct st_db_backend *const *)(const void *)(p))

extern const struct st_db_backend st_db_sqlite_backend;
extern const struct st_db_backend st_db_pg_backend;

#endif
