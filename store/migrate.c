/*
 * migrate.c: applies the embedded migrations.
 *
 * A migration file applies to every backend unless its name carries a
 * dialect (0001_init.sqlite.sql); then the other dialect must have a file
 * of the same version, which st_migrate_head checks.
 */
#include "migrate.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "db.h"
#include "log.h"

static bool
for_dialect(const struct st_migration *m, const char *dialect)
{
	return m->dialect[0] == '\0' || strcmp(m->dialect, dialect) == 0;
}

int
st_migrate_head(const char *dialect)
{
	int head = 0;

	/* Files are sorted by name, so versions must rise by exactly one. */
	for (size_t i = 0; i < st_n_migrations; i++) {
		const struct st_migration *m = &st_migrations[i];

		if (!for_dialect(m, dialect))
			continue;
		if (m->version != head + 1)
			return -1;
		head = m->version;
	}
	return head;
}

int
st_migrate(struct st_db *db)
{
	static const char create[] =
	    "CREATE TABLE IF NOT EXISTS schema_migrations ("
	    " version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
	    " applied_at BIGINT NOT NULL)";
	static const char applied[] =
	    "SELECT 1 FROM schema_migrations WHERE version = $1";
	static const char record[] = "INSERT INTO schema_migrations"
	                             " (version, name, applied_at)"
	                             " VALUES ($1, $2, $3)";
	const char *dialect = st_db_dialect(db);
	struct st_stmt *s;

	if (st_migrate_head(dialect) < 0) {
		cm_warnx(
		    "store: the %s migrations do not form one line", dialect);
		return -1;
	}
	if (st_db_exec(db, create) != ST_OK)
		return -1;
	for (size_t i = 0; i < st_n_migrations; i++) {
		const struct st_migration *m = &st_migrations[i];
		bool done;

		if (!for_dialect(m, dialect))
			continue;
		if (st_db_query(db, &s, applied, "i", (int64_t)m->version) !=
		    ST_OK)
			return -1;
		done = st_stmt_step(s) == ST_ROW;
		st_stmt_done(s);
		if (done)
			continue;
		if (st_db_begin(db) != ST_OK)
			return -1;
		if (st_db_exec(db, m->sql) != ST_OK ||
		    st_db_run(db, record, "isi", (int64_t)m->version, m->name,
		        cm_now_ms()) != ST_DONE ||
		    st_db_exec(db, "COMMIT") != ST_OK) {
			cm_warnx("store: migration %04d_%s failed", m->version,
			    m->name);
			st_db_exec(db, "ROLLBACK");
			return -1;
		}
		cm_info(
		    "store: applied migration %04d_%s", m->version, m->name);
	}
	return 0;
}
