/* migrate.h: embedded schema migrations (store/migrations/). */
#ifndef ST_MIGRATE_H
#define ST_MIGRATE_H

#include <stdbool.h>
#include <stddef.h>

struct st_migration {
	int version;
	const char *name;
	const char *dialect; /* "" for every backend, or "sqlite"/"postgres" */
	const char *sql;
};

/* Generated at build time from store/migrations, sorted by file name. */
extern const struct st_migration st_migrations[];
extern const size_t st_n_migrations;

struct st_db;

/*
 * The head of a dialect's migrations: the highest version, after checking
 * that its versions run 1..head with no gap and no duplicate.  Returns -1
 * when they do not (more than one head, or a hole).
 */
int st_migrate_head(const char *dialect);

/*
 * Applies, in order and each in its own transaction, every migration of
 * the database's dialect that schema_migrations does not record.  Returns
 * 0, or -1 (nothing of the failing migration is applied).
 */
int st_migrate(struct st_db *db);

#endif
