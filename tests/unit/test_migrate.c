/*
 * test_migrate.c: the embedded migrations and what the schema itself
 * enforces.  The schema checks go behind the engine's back, on a raw
 * sqlite3 connection to the same file: if a constraint holds there, no
 * code path can break it.
 */
#include "migrate.h"
#include "status.h"
#include "store_fixture.h"

static struct fx fx;

static void
setup(void)
{
	fx_setup(&fx, 0);
}

static void
teardown(void)
{
	fx_teardown(&fx);
}

TestSuite(migrate, .init = setup, .fini = teardown);

/* Runs sql on a raw connection and asserts its extended result code. */
static void
raw_expect_at(const char *sql, int want, const char *file, int line)
{
	int rc = fx_raw_exec(&fx, sql);

	cr_assert_eq(rc, want, "%s:%d: %s\n  gave %d (%s), want %d (%s)", file,
	    line, sql, rc, sqlite3_errstr(rc), want, sqlite3_errstr(want));
}
#define RAW_EXPECT(sql, want) raw_expect_at((sql), (want), __FILE__, __LINE__)

static void raw_expectf_at(int want, const char *file, int line,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
raw_expectf_at(int want, const char *file, int line, const char *fmt, ...)
{
	char sql[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	cr_assert(n > 0 && (size_t)n < sizeof(sql), "SQL too long");
	raw_expect_at(sql, want, file, line);
}
/* Formats a statement, runs it raw, asserts the result code. */
#define RAWF(want, ...) raw_expectf_at((want), __FILE__, __LINE__, __VA_ARGS__)

/* ---- heads ------------------------------------------------------------------
 */

Test(migrate, one_head_for_both_dialects)
{
	int sqlite_head = st_migrate_head("sqlite");
	int pg_head = st_migrate_head("postgres");

	cr_assert_gt(
	    sqlite_head, 0, "no sqlite migration (head %d)", sqlite_head);
	/* Both dialects migrate, to the same head. */
	cr_assert_eq(pg_head, sqlite_head,
	    "postgres head is %d, sqlite head is %d: the PostgreSQL "
	    "migrations are missing or out of step",
	    pg_head, sqlite_head);
}

Test(migrate, every_file_names_a_known_dialect)
{
	cr_assert_gt(st_n_migrations, 0);
	for (size_t i = 0; i < st_n_migrations; i++) {
		const struct st_migration *m = &st_migrations[i];

		cr_assert(strcmp(m->dialect, "") == 0 ||
		              strcmp(m->dialect, "sqlite") == 0 ||
		              strcmp(m->dialect, "postgres") == 0,
		    "migration %d_%s has dialect '%s'", m->version, m->name,
		    m->dialect);
		cr_assert_gt(m->version, 0);
		cr_assert_gt(
		    strlen(m->sql), 0, "migration %d is empty", m->version);
	}
}

/* Names of the tables, indexes and triggers a migration creates or drops,
 * and of the tables whose rows it mends: statements that begin a line, as
 * every one of the migrations does (a trigger's BEFORE UPDATE ON is none). */
#define NAMES_MAX 64
struct schema_names {
	size_t n;
	char v[NAMES_MAX][64];
};

static void
schema_names(const char *sql, struct schema_names *out)
{
	static const char *const kinds[] = {"CREATE TABLE ",
	    "CREATE UNIQUE INDEX ", "CREATE INDEX ", "CREATE TRIGGER ",
	    "DROP TABLE ", "DROP INDEX ", "DROP TRIGGER ", "UPDATE ",
	    "ALTER TABLE "};
	const size_t n_kinds = sizeof(kinds) / sizeof(kinds[0]);
	const char *p = sql;

	memset(out, 0, sizeof(*out));
	while (*p != '\0') {
		bool hit = false;

		if (p[0] == '-' && p[1] == '-') {
			while (*p != '\0' && *p != '\n')
				p++;
			continue;
		}
		for (size_t k = 0;
		     k < n_kinds && !hit && (p == sql || p[-1] == '\n'); k++) {
			size_t len = strlen(kinds[k]), n = 0;

			if (strncmp(p, kinds[k], len) != 0)
				continue;
			hit = true;
			p += len;
			cr_assert_lt(out->n, NAMES_MAX);
			while ((*p >= 'a' && *p <= 'z') ||
			       (*p >= '0' && *p <= '9') || *p == '_') {
				cr_assert_lt(n, sizeof(out->v[0]) - 1);
				out->v[out->n][n++] = *p++;
			}
			cr_assert_gt(n, 0, "an unnamed %s", kinds[k]);
			out->n++;
		}
		if (!hit)
			p++;
	}
}

static bool
has_name(const struct schema_names *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], name) == 0)
			return true;
	return false;
}

static const struct st_migration *
find_migration(int version, const char *dialect)
{
	for (size_t i = 0; i < st_n_migrations; i++)
		if (st_migrations[i].version == version &&
		    (st_migrations[i].dialect[0] == '\0' ||
		        strcmp(st_migrations[i].dialect, dialect) == 0))
			return &st_migrations[i];
	return NULL;
}

/*
 * The two dialects build the same schema: every table, index and trigger
 * of a SQLite migration exists, by the same name, in the PostgreSQL one of
 * that version, and the other way round.  (Applying the PostgreSQL files
 * needs a server; this is what can be checked without one.)
 */
Test(migrate, dialects_create_the_same_objects)
{
	int head = st_migrate_head("sqlite");
	struct schema_names sq, pg;

	cr_assert_gt(head, 0);
	for (int v = 1; v <= head; v++) {
		const struct st_migration *a = find_migration(v, "sqlite");
		const struct st_migration *b = find_migration(v, "postgres");

		cr_assert_not_null(a, "no sqlite migration %d", v);
		cr_assert_not_null(b, "no postgres migration %d", v);
		schema_names(a->sql, &sq);
		schema_names(b->sql, &pg);
		cr_assert_gt(sq.n, 0, "migration %d changes nothing", v);
		for (size_t i = 0; i < sq.n; i++)
			cr_assert(has_name(&pg, sq.v[i]),
			    "migration %d: postgres lacks %s", v, sq.v[i]);
		for (size_t i = 0; i < pg.n; i++)
			cr_assert(has_name(&sq, pg.v[i]),
			    "migration %d: sqlite lacks %s", v, pg.v[i]);
	}
	/* The invariants that must never differ between backends. */
	schema_names(find_migration(1, "postgres")->sql, &pg);
	cr_assert(has_name(&pg, "browser_spaces_active_instance"));
	cr_assert(has_name(&pg, "browser_space_tasks_active"));
	cr_assert(has_name(&pg, "browser_space_events_no_update"));
}

/* ---- applying
 * ----------------------------------------------------------------- */

Test(migrate, reopening_applies_nothing_twice)
{
	int head = st_migrate_head("sqlite");
	int64_t applied_at;

	cr_assert_gt(head, 0);
	cr_assert_eq(fx_sql_int(&fx, "SELECT count(*) FROM schema_migrations",
	                 (const char *)NULL),
	    head, "every version recorded once");
	cr_assert_eq(
	    fx_sql_int(&fx, "SELECT min(version) FROM schema_migrations",
	        (const char *)NULL),
	    1);
	cr_assert_eq(
	    fx_sql_int(&fx, "SELECT max(version) FROM schema_migrations",
	        (const char *)NULL),
	    head);
	applied_at =
	    fx_sql_int(&fx, "SELECT max(applied_at) FROM schema_migrations",
	        (const char *)NULL);
	fx_workspace(&fx, "survives");

	/* A migration run twice would fail (CREATE TABLE without IF NOT
	 * EXISTS) or record its version again. */
	fx_reopen(&fx);
	fx_reopen(&fx);
	cr_assert_eq(fx_sql_int(&fx, "SELECT count(*) FROM schema_migrations",
	                 (const char *)NULL),
	    head);
	cr_assert_eq(
	    fx_sql_int(&fx, "SELECT max(applied_at) FROM schema_migrations",
	        (const char *)NULL),
	    applied_at, "a migration was applied again on reopen");
	cr_assert_eq(
	    fx_sql_int(&fx, "SELECT count(*) FROM workspaces WHERE name = ?1",
	        "survives", (const char *)NULL),
	    1, "reopening lost data");
}

/* ---- CHECK constraints on enum columns
 * ---------------------------------------- */

Test(migrate, check_constraints_reject_unknown_enum_values)
{
	const char *sp, *task;

	fx_provision(&fx, 1);
	sp = fx_space(&fx, 0);
	task = fx_task(&fx, sp, "r1");

	/* principals.kind */
	RAW_EXPECT("INSERT INTO principals (id, kind, name, created_at)"
	           " VALUES ('p-ok', 'runtime_agent', 'n', 0)",
	    SQLITE_OK);
	RAW_EXPECT("INSERT INTO principals (id, kind, name, created_at)"
	           " VALUES ('p-bad', 'robot', 'n', 0)",
	    SQLITE_CONSTRAINT_CHECK);
	RAW_EXPECT("INSERT INTO principals (id, kind, name, is_admin,"
	           " created_at) VALUES ('p-bad2', 'operator', 'n', 2, 0)",
	    SQLITE_CONSTRAINT_CHECK);

	/* memberships.role */
	RAWF(SQLITE_OK,
	    "INSERT INTO memberships (workspace_id, principal_id, role,"
	    " created_at) VALUES ('%s', 'p-ok', 'member', 0)",
	    fx.ws2);
	RAWF(SQLITE_CONSTRAINT_CHECK,
	    "INSERT INTO memberships (workspace_id, principal_id, role,"
	    " created_at) VALUES ('%s', 'p-ok', 'owner', 0)",
	    fx.ws);

	/* browser_instances.driver, profile_mode, status */
#define INST_SQL                                                         \
	"INSERT INTO browser_instances (id, name, driver, profile_mode," \
	" bundle_id, status, host, created_at, updated_at)"              \
	" VALUES ('%s', '%s', '%s', '%s', '%s', '%s', 'h', 0, 0)"
	RAWF(SQLITE_OK, INST_SQL, "i-ok", "i-ok", "cdp", "persistent",
	    fx.bundle, "unavailable");
	RAWF(SQLITE_CONSTRAINT_CHECK, INST_SQL, "i-b1", "i-b1", "selenium",
	    "ephemeral", fx.bundle, "ready");
	RAWF(SQLITE_CONSTRAINT_CHECK, INST_SQL, "i-b2", "i-b2", "fake",
	    "shared", fx.bundle, "ready");
	RAWF(SQLITE_CONSTRAINT_CHECK, INST_SQL, "i-b3", "i-b3", "fake",
	    "ephemeral", fx.bundle, "broken");
#undef INST_SQL

	/* browser_spaces.status, owner_type (on instance i-ok, not in use) */
#define SPACE_SQL                                                            \
	"INSERT INTO browser_spaces (id, workspace_id, browser_instance_id," \
	" owner_type, owner_id, status, created_at, updated_at)"             \
	" VALUES ('%s', '%s', 'i-ok', '%s', 'o', '%s', 0, 0)"
	RAWF(SQLITE_OK, SPACE_SQL, "s-ok", fx.ws, "runtime_agent", "closed");
	RAWF(SQLITE_CONSTRAINT_CHECK, SPACE_SQL, "s-b1", fx.ws, "operator",
	    "open");
	RAWF(SQLITE_CONSTRAINT_CHECK, SPACE_SQL, "s-b2", fx.ws, "robot",
	    "closed");
#undef SPACE_SQL

	/* browser_space_tasks.status and the timeout range */
#define TASK_SQL                                                       \
	"INSERT INTO browser_space_tasks (id, space_id, workspace_id," \
	" request_id, operation_id, capability, timeout_ms, status,"   \
	" created_at, updated_at)"                                     \
	" VALUES ('%s', 's-ok', '%s', '%s', '%s', 'noop', %d, '%s', 0, 0)"
	RAWF(SQLITE_OK, TASK_SQL, "t-ok", fx.ws, "rq-ok", "op-ok", 1000,
	    "completed");
	RAWF(SQLITE_CONSTRAINT_CHECK, TASK_SQL, "t-b1", fx.ws, "rq-b1", "op-b1",
	    1000, "pending");
	RAWF(SQLITE_CONSTRAINT_CHECK, TASK_SQL, "t-b2", fx.ws, "rq-b2", "op-b2",
	    999, "completed");
	RAWF(SQLITE_CONSTRAINT_CHECK, TASK_SQL, "t-b3", fx.ws, "rq-b3", "op-b3",
	    600001, "completed");
#undef TASK_SQL

	/* browser_space_events.kind */
#define EVENT_SQL                                                        \
	"INSERT INTO browser_space_events (space_id, task_id, sequence," \
	" kind, created_at) VALUES ('s-ok', NULL, %d, '%s', 0)"
	RAWF(SQLITE_OK, EVENT_SQL, 1, "space_closed");
	RAWF(SQLITE_CONSTRAINT_CHECK, EVENT_SQL, 2, "exploded");
	RAWF(SQLITE_CONSTRAINT_CHECK, EVENT_SQL, 0, "space_opened");
	/* Every kind the log holds (all but the notice, never stored). */
	for (int k = 0; k < CM_EVENT_KIND__COUNT; k++)
		if (k != CM_EV_CLOSE_REQUESTED)
			RAWF(SQLITE_OK, EVENT_SQL, 10 + k,
			    cm_event_kind_name((enum cm_event_kind)k));
#undef EVENT_SQL

	/* The engine's own rows are untouched by all this. */
	cr_assert_str_eq(fx_task_get(&fx, sp, task)->tasks[0].status, "queued");
}

/* ---- data the migrations mend
 * ------------------------------------------------------ */

/* A relative profile path, written before the rule, never reaches an
 * actor: its row keeps its mode without the path (a mode's name is that
 * mode), and an absolute one is left as it is. */
Test(migrate, relative_profile_paths_are_dropped)
{
#define PROFILE_SQL                                                          \
	"INSERT INTO browser_instances (id, name, driver, profile,"          \
	" profile_mode, bundle_id, status, host, created_at, updated_at)"    \
	" VALUES ('%s', '%s', 'managed', '%s', 'persistent', '%s', 'ready'," \
	" 'h', 0, 0)"
	fx_provision(&fx, 0);
	RAWF(SQLITE_OK, PROFILE_SQL, "i-e", "i-e", "ephemeral", fx.bundle);
	RAWF(SQLITE_OK, PROFILE_SQL, "i-r", "i-r", "var/kept", fx.bundle);
	RAWF(SQLITE_OK, PROFILE_SQL, "i-a", "i-a", "/srv/kept", fx.bundle);
#undef PROFILE_SQL
	RAW_EXPECT(
	    "DELETE FROM schema_migrations WHERE version = 5", SQLITE_OK);
	fx_reopen(&fx);
	cr_assert_eq(
	    fx_sql_int(&fx,
	        "SELECT count(*) FROM browser_instances WHERE id ="
	        " 'i-e' AND profile = '' AND profile_mode = 'ephemeral'",
	        (const char *)NULL),
	    1);
	cr_assert_eq(
	    fx_sql_int(&fx,
	        "SELECT count(*) FROM browser_instances WHERE id ="
	        " 'i-r' AND profile = '' AND profile_mode = 'persistent'",
	        (const char *)NULL),
	    1);
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT count(*) FROM browser_instances WHERE id ="
	                 " 'i-a' AND profile = '/srv/kept'"
	                 " AND profile_mode = 'persistent'",
	                 (const char *)NULL),
	    1);
}

/* ---- the two partial unique indexes
 * -------------------------------------------- */

#define SPACE_ON_INST0                                                       \
	"INSERT INTO browser_spaces (id, workspace_id, browser_instance_id," \
	" owner_type, owner_id, status, created_at, updated_at)"             \
	" VALUES ('%s', '%s', '%s', 'operator', '%s', '%s', 0, 0)"

Test(migrate, an_instance_has_at_most_one_space_not_closed)
{
	const char *sp;

	fx_provision(&fx, 2);
	sp = fx_space(&fx, 0); /* idle, on inst 0 */

	/* Any second non-closed Space on the instance is refused. */
	RAWF(SQLITE_CONSTRAINT_UNIQUE, SPACE_ON_INST0, "x1", fx.ws, fx.inst[0],
	    fx.mgr, "idle");
	RAWF(SQLITE_CONSTRAINT_UNIQUE, SPACE_ON_INST0, "x2", fx.ws, fx.inst[0],
	    fx.mgr, "running");
	RAWF(SQLITE_CONSTRAINT_UNIQUE, SPACE_ON_INST0, "x3", fx.ws, fx.inst[0],
	    fx.mgr, "error");
	/* Even from another workspace. */
	RAWF(SQLITE_CONSTRAINT_UNIQUE, SPACE_ON_INST0, "x4", fx.ws2, fx.inst[0],
	    fx.outsider, "idle");
	/* Closed ones are not counted, however many. */
	RAWF(SQLITE_OK, SPACE_ON_INST0, "c1", fx.ws, fx.inst[0], fx.mgr,
	    "closed");
	RAWF(SQLITE_OK, SPACE_ON_INST0, "c2", fx.ws, fx.inst[0], fx.mgr,
	    "closed");
	/* Another instance is independent. */
	RAWF(
	    SQLITE_OK, SPACE_ON_INST0, "y1", fx.ws, fx.inst[1], fx.mgr, "idle");
	/* Reopening a closed one while another is open is refused too. */
	RAW_EXPECT("UPDATE browser_spaces SET status = 'idle' WHERE id = 'c1'",
	    SQLITE_CONSTRAINT_UNIQUE);

	/* Once the open one is closed, the slot is free. */
	RAWF(SQLITE_OK,
	    "UPDATE browser_spaces SET status = 'closed' WHERE id = '%s'", sp);
	RAWF(SQLITE_OK, SPACE_ON_INST0, "x5", fx.ws, fx.inst[0], fx.mgr,
	    "error");
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT count(*) FROM browser_spaces WHERE"
	                 " browser_instance_id = ?1 AND status <> 'closed'",
	                 fx.inst[0], (const char *)NULL),
	    1);
}

Test(migrate, a_space_has_at_most_one_queued_or_running_task)
{
	const char *sp, *other;

	fx_provision(&fx, 2);
	sp = fx_space(&fx, 0);
	other = fx_space(&fx, 1);
	fx_task(&fx, sp, "r1"); /* queued */

#define TASK_SQL                                                       \
	"INSERT INTO browser_space_tasks (id, space_id, workspace_id," \
	" request_id, operation_id, capability, timeout_ms, status,"   \
	" created_at, updated_at)"                                     \
	" VALUES ('%s', '%s', '%s', '%s', '%s', 'noop', 60000, '%s', 0, 0)"
	RAWF(SQLITE_CONSTRAINT_UNIQUE, TASK_SQL, "t1", sp, fx.ws, "q1", "o1",
	    "queued");
	RAWF(SQLITE_CONSTRAINT_UNIQUE, TASK_SQL, "t2", sp, fx.ws, "q2", "o2",
	    "running");
	RAWF(SQLITE_OK, TASK_SQL, "t3", sp, fx.ws, "q3", "o3", "completed");
	RAWF(SQLITE_OK, TASK_SQL, "t4", sp, fx.ws, "q4", "o4", "failed");
	RAWF(SQLITE_OK, TASK_SQL, "t5", sp, fx.ws, "q5", "o5", "cancelled");
	/* Another Space is independent. */
	RAWF(SQLITE_OK, TASK_SQL, "t6", other, fx.ws, "q6", "o6", "running");
	/* A finished task cannot be revived next to the active one. */
	RAW_EXPECT("UPDATE browser_space_tasks SET status = 'queued'"
	           " WHERE id = 't3'",
	    SQLITE_CONSTRAINT_UNIQUE);
	/* UNIQUE(space_id, request_id) and UNIQUE(operation_id). */
	RAWF(SQLITE_CONSTRAINT_UNIQUE, TASK_SQL, "t7", sp, fx.ws, "q3", "o7",
	    "completed");
	RAWF(SQLITE_CONSTRAINT_UNIQUE, TASK_SQL, "t8", other, fx.ws, "q8", "o3",
	    "completed");
#undef TASK_SQL
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT count(*) FROM browser_space_tasks WHERE"
	                 " space_id = ?1 AND status IN ('queued', 'running')",
	                 sp, (const char *)NULL),
	    1);
}

/* ---- events are append-only
 * ------------------------------------------------------- */

Test(migrate, events_cannot_be_updated)
{
	const char *sp;

	fx_provision(&fx, 1);
	sp = fx_space(&fx, 0);
	fx_task(&fx, sp, "r1");
	cr_assert_eq(fx_count_events(&fx, sp), 2);

	RAWF(SQLITE_CONSTRAINT_TRIGGER,
	    "UPDATE browser_space_events SET kind = 'completed'"
	    " WHERE space_id = '%s' AND sequence = 2",
	    sp);
	RAWF(SQLITE_CONSTRAINT_TRIGGER,
	    "UPDATE browser_space_events SET payload = '{}', sequence = 9"
	    " WHERE space_id = '%s'",
	    sp);
	FX_LOG(&fx, sp, "space_opened", "queued");

	/* UNIQUE(space_id, sequence): a second row 2 cannot be slipped in. */
	RAWF(SQLITE_CONSTRAINT_UNIQUE,
	    "INSERT INTO browser_space_events (space_id, sequence, kind,"
	    " created_at) VALUES ('%s', 2, 'space_error', 0)",
	    sp);
	cr_assert_eq(fx_count_events(&fx, sp), 2);
}
