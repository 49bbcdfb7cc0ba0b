/*
 * store_fixture.h: what the store engine's unit tests share.
 *
 * A store on <tmpdir>/spaced.db with a fake clock (advance it instead of
 * sleeping), a recorder of every published event, a raw sqlite3 handle on
 * the same file for checks behind the engine's back, request and
 * provisioning helpers that go through st_store_call exactly as the
 * socket loop does, and an event-log checker.
 *
 * Header-only: every helper is static inline, so a test file uses what it
 * needs without unused-function warnings.  One struct fx per test process
 * (Criterion forks each test); it must not move once fx_setup has run,
 * because the store's clock points at it.  Every reply a helper returns
 * stays valid until fx_teardown.
 *
 * With SPACED_TEST_PG naming a cluster's state file (tests/pg/cluster.sh,
 * which ctest starts for the pg/ tests), the store is on PostgreSQL
 * instead, in a schema of its own that fx_teardown drops, and the raw
 * checks go through libpq: their ?N parameters become $N, and a failure's
 * SQLSTATE is reported as the SQLite code of the same constraint.
 */
#ifndef SPACED_STORE_FIXTURE_H
#define SPACED_STORE_FIXTURE_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
#include "limits.h"
#include "proto.h"
#include "status.h"
#include "store.h"

/* The fake clock starts at 2026-01-01T00:00:00Z. */
#define FX_T0 INT64_C(1767225600000)
#define FX_INST_MAX 40
#define FX_PATH_MAX 256
#define FX_DSN_MAX 512

/*
 * Canary secrets, given to every instance the fixture registers.  Only
 * actor.load may ever return them.
 */
#define FX_CANARY_ENDPOINT "canary-endpoint-5f2c"
#define FX_CANARY_CONFIG "canary-config-8d41"
#define FX_CANARY_PROFILE "canary-profile-a9e7"
#define FX_SECRET_ENDPOINT \
	"ws://10.9.8.7:9222/devtools/browser/" FX_CANARY_ENDPOINT
#define FX_SECRET_CONFIG "{\"api_key\":\"" FX_CANARY_CONFIG "\"}"
#define FX_SECRET_PROFILE "/var/lib/spaced/profiles/" FX_CANARY_PROFILE

/*
 * The fixture bundle: noop {}, sleep {ms: integer 0..600000, required},
 * navigate {url: http-url string, required} and type_text {selector,
 * text}; every args schema is a closed object.
 */
/* clang-format off */
#define FX_MANIFEST_NAMED(name)                                              \
	"{\"name\":\"" name "\",\"version\":\"1\",\"capabilities\":["        \
	"{\"name\":\"noop\",\"network\":false,\"args\":"                     \
	  "{\"type\":\"object\",\"additionalProperties\":false,"             \
	  "\"properties\":{}}},"                                             \
	"{\"name\":\"sleep\",\"network\":false,\"args\":"                    \
	  "{\"type\":\"object\",\"additionalProperties\":false,"             \
	  "\"required\":[\"ms\"],\"properties\":{\"ms\":"                    \
	  "{\"type\":\"integer\",\"minimum\":0,\"maximum\":600000}}}},"      \
	"{\"name\":\"navigate\",\"network\":true,\"args\":"                  \
	  "{\"type\":\"object\",\"additionalProperties\":false,"             \
	  "\"required\":[\"url\"],\"properties\":{\"url\":"                  \
	  "{\"type\":\"string\",\"format\":\"http-url\"}}}},"                \
	"{\"name\":\"type_text\",\"network\":false,\"args\":"                \
	  "{\"type\":\"object\",\"additionalProperties\":false,"             \
	  "\"required\":[\"selector\",\"text\"],\"properties\":{"            \
	  "\"selector\":{\"type\":\"string\",\"minLength\":1,"              \
	  "\"maxLength\":200},"                                               \
	  "\"text\":{\"type\":\"string\",\"maxLength\":1000}}}}]}"
/* clang-format on */
#define FX_MANIFEST FX_MANIFEST_NAMED("fx-bundle")

/*
 * A published message: a committed log event (sequence >= 1) or a wake-up
 * notice for the Space's actor (sequence 0, never stored; see proto.h).
 */
struct fx_pub {
	struct pr_event ev; /* strings in fx.arena */
	char *raw;          /* the message as published, in fx.arena */
	size_t raw_len;
	/* With pub_check_commit: another connection already saw its row (an
	 * event) or the state it announces (a notice) when it was published. */
	bool visible;
};

struct fx_rep {
	struct pr_rep *rep;
	enum pr_op op;
};

struct fx {
	char dir[64];
	char path[FX_PATH_MAX];
	bool pg;              /* on PostgreSQL (SPACED_TEST_PG) */
	char schema[48];      /* PostgreSQL: the test's own schema */
	char dsn[FX_DSN_MAX]; /* PostgreSQL: the store's, into that schema */
	struct st_store *st;
	struct st_store_opts opts;
	int64_t now;
	unsigned long op_seq;
	struct pr_arena arena;
	/* Every published message, decoded, in publish order. */
	struct fx_pub *pubs;
	size_t n_pubs, cap_pubs;
	int64_t last_serial; /* of the last one (PR_REC_EVENT) */
	bool pub_check_commit;
	/* With opts.defer_sync: each call's sync is finished before the
	 * next, as the loop's acker does (PostgreSQL needs it). */
	bool sync_each;
	/* Every reply a helper returned, freed by fx_teardown. */
	struct fx_rep *reps;
	size_t n_reps, cap_reps;
	/* What fx_provision made. */
	const char *ws;       /* "ws-main" */
	const char *ws2;      /* "ws-other": nothing bound */
	const char *mgr;      /* operator, manager of ws */
	const char *member;   /* operator, member of ws */
	const char *agent;    /* runtime_agent, member of ws */
	const char *outsider; /* operator, member of ws2 only */
	const char *bundle;
	size_t n_inst;
	const char *inst[FX_INST_MAX];    /* fake instances "inst-<i>" */
	const char *binding[FX_INST_MAX]; /* their bindings to ws */
};

/* ---- setup ------------------------------------------------------------- */

static inline int64_t
fx_clock(void *arg)
{
	return ((struct fx *)arg)->now;
}

static inline void
fx_advance(struct fx *f, int64_t ms)
{
	f->now += ms;
}

/* Makes a fresh temporary directory, which fx_rmdir removes. */
static inline void
fx_mkdtemp(char *dir, size_t len)
{
	snprintf(dir, len, "%s", "/tmp/spaced-ut-XXXXXX");
	cr_assert_not_null(mkdtemp(dir), "mkdtemp failed");
}

/*
 * The cluster's DSN from SPACED_TEST_PG's state file into dsn, or false
 * when the tests run on SQLite.
 */
static inline bool
fx_pg_base(char *dsn, size_t len)
{
	const char *state = getenv("SPACED_TEST_PG");
	char line[FX_DSN_MAX];
	FILE *fp;

	dsn[0] = '\0';
	if (state == NULL || state[0] == '\0')
		return false;
	fp = fopen(state, "r");
	cr_assert_not_null(fp, "SPACED_TEST_PG: cannot read %s", state);
	while (fgets(line, sizeof(line), fp) != NULL)
		if (line[0] != '#' && line[0] != '\n')
			snprintf(
			    dsn, len, "%.*s", (int)strcspn(line, "\n"), line);
	fclose(fp);
	cr_assert_neq(dsn[0], '\0', "SPACED_TEST_PG: no DSN in %s", state);
	return true;
}

static inline void
fx_pg_quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

/* A connection to the test's schema (or the cluster's default one). */
static inline PGconn *
fx_pg_connect(const char *dsn)
{
	PGconn *c = PQconnectdb(dsn);

	cr_assert_eq(PQstatus(c), CONNECTION_OK, "cannot connect: %s",
	    PQerrorMessage(c));
	return c;
}

/* Runs pre then sql on a connection to the cluster. */
static inline void
fx_pg_admin_in(const char *pre, const char *sql)
{
	char base[FX_DSN_MAX];
	PGconn *c;
	PGresult *r;

	fx_pg_base(base, sizeof(base));
	c = fx_pg_connect(base);
	PQsetNoticeProcessor(c, fx_pg_quiet, NULL);
	r = PQexec(c, pre);
	PQclear(r);
	r = PQexec(c, sql);
	cr_assert_eq(PQresultStatus(r), PGRES_COMMAND_OK, "%s: %s", sql,
	    PQresultErrorMessage(r));
	PQclear(r);
	PQfinish(c);
}

static inline void
fx_pg_admin(const char *sql)
{
	fx_pg_admin_in("", sql);
}

/*
 * The few SQLite functions the tests' raw checks use, in the test's
 * schema, as far as the tests use them: printf of one %05d, instr as a
 * condition, hex and zeroblob.
 */
#define FX_PG_SHIMS                                                       \
	"CREATE FUNCTION printf(f text, i int) RETURNS text LANGUAGE sql" \
	" AS $$ SELECT replace(f, '%05d', lpad(i::text, 5, '0')) $$;"     \
	"CREATE FUNCTION instr(a text, b text) RETURNS boolean"           \
	" LANGUAGE sql AS $$ SELECT strpos(a, b) > 0 $$;"                 \
	"CREATE FUNCTION instr(a bytea, b text) RETURNS boolean"          \
	" LANGUAGE sql AS $$ SELECT position(convert_to(b, 'UTF8') in a)" \
	" > 0 $$;"                                                        \
	"CREATE FUNCTION hex(t text) RETURNS text LANGUAGE sql"           \
	" AS $$ SELECT upper(encode(convert_to(t, 'UTF8'), 'hex')) $$;"   \
	"CREATE FUNCTION zeroblob(n int) RETURNS bytea LANGUAGE sql"      \
	" AS $$ SELECT decode(repeat('00', n), 'hex') $$;"

/* On PostgreSQL: a fresh schema, and the store's DSN into it. */
static inline void
fx_pg_setup(struct fx *f)
{
	static unsigned n;
	char base[FX_DSN_MAX], sql[128];

	if (!(f->pg = fx_pg_base(base, sizeof(base))))
		return;
	snprintf(
	    f->schema, sizeof(f->schema), "ut_%ld_%u", (long)getpid(), n++);
	snprintf(sql, sizeof(sql), "CREATE SCHEMA %s", f->schema);
	fx_pg_admin(sql);
	snprintf(sql, sizeof(sql), "SET search_path = %s;", f->schema);
	fx_pg_admin_in(sql, FX_PG_SHIMS);
	snprintf(f->dsn, sizeof(f->dsn), "%.400s options='-csearch_path=%s'",
	    base, f->schema);
	f->opts.postgres_dsn = f->dsn;
}

/*
 * Skips the test from its body, first tearing the fixture down: Criterion
 * runs no .fini for a test skipped there, so its directory and schema
 * would stay.  fx_teardown twice is harmless, should a .fini run too.
 */
#define FX_SKIP(f, ...)                    \
	do {                               \
		fx_teardown(f);            \
		cr_skip_test(__VA_ARGS__); \
	} while (0)

/* Skips the test on PostgreSQL: what it checks is SQLite's alone. */
#define FX_SQLITE_ONLY(f, why)                                  \
	do {                                                    \
		if ((f)->pg)                                    \
			FX_SKIP((f), "SQLite only: %s", (why)); \
	} while (0)

/* Skips the test on SQLite: what it checks is PostgreSQL's alone. */
#define FX_PG_ONLY(f, why)                                          \
	do {                                                        \
		if (!(f)->pg)                                       \
			FX_SKIP((f), "PostgreSQL only: %s", (why)); \
	} while (0)

/* Opens a store on a fresh temporary directory; max_spaces 0 is the
 * default quota. */
static inline void
fx_setup(struct fx *f, int max_spaces)
{
	memset(f, 0, sizeof(*f));
	fx_mkdtemp(f->dir, sizeof(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/spaced.db", f->dir);
	fx_pg_setup(f);
	f->now = FX_T0;
	f->opts.sqlite_path = f->path;
	f->opts.max_spaces_per_workspace = max_spaces;
	f->opts.host_id = "host-a";
	f->opts.now_ms = fx_clock;
	f->opts.now_arg = f;
	cr_assert_eq(st_store_open(&f->st, &f->opts), 0,
	    "st_store_open(%s) failed", f->path);
}

/* Closes the store and opens it again on the same file. */
static inline void
fx_reopen(struct fx *f)
{
	st_store_close(f->st);
	f->st = NULL;
	cr_assert_eq(st_store_open(&f->st, &f->opts), 0,
	    "st_store_open(%s) failed on reopen", f->path);
}

static inline void
fx_rmdir(const char *dir)
{
	char path[FX_PATH_MAX * 2];
	struct dirent *de;
	DIR *d;

	if (dir[0] == '\0' || strncmp(dir, "/tmp/spaced-ut-", 15) != 0)
		return;
	if ((d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(dir);
}

static inline void
fx_teardown(struct fx *f)
{
	st_store_close(f->st);
	f->st = NULL;
	for (size_t i = 0; i < f->n_reps; i++) {
		pr_rep_free(f->reps[i].rep);
		free(f->reps[i].rep);
	}
	free(f->reps);
	free(f->pubs);
	pr_arena_free(&f->arena);
	fx_rmdir(f->dir);
	if (f->pg) {
		char sql[128];

		snprintf(sql, sizeof(sql), "DROP SCHEMA %s CASCADE", f->schema);
		fx_pg_admin(sql);
	}
	memset(f, 0, sizeof(*f));
}

/* A string that lives until teardown. */
static inline const char *
fx_strdup(struct fx *f, const char *s)
{
	const char *d = pr_arena_strdup(&f->arena, s);

	cr_assert_not_null(d, "out of memory");
	return d;
}

/* ---- the raw database, behind the engine's back ------------------------ */

static inline sqlite3 *
fx_raw_open(struct fx *f)
{
	sqlite3 *db = NULL;

	cr_assert_eq(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READWRITE, NULL),
	    SQLITE_OK, "raw open of %s failed", f->path);
	sqlite3_extended_result_codes(db, 1);
	cr_assert_eq(
	    sqlite3_exec(db, "PRAGMA foreign_keys=ON", NULL, NULL, NULL),
	    SQLITE_OK);
	return db;
}

/* The SQLite extended result code of a PostgreSQL result. */
static inline int
fx_pg_code(const PGresult *r)
{
	const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);

	if (PQresultStatus(r) == PGRES_COMMAND_OK ||
	    PQresultStatus(r) == PGRES_TUPLES_OK)
		return SQLITE_OK;
	if (st == NULL)
		return SQLITE_ERROR;
	if (strcmp(st, "23514") == 0)
		return SQLITE_CONSTRAINT_CHECK;
	if (strcmp(st, "23505") == 0)
		return SQLITE_CONSTRAINT_UNIQUE;
	if (strcmp(st, "23503") == 0)
		return SQLITE_CONSTRAINT_FOREIGNKEY;
	if (strcmp(st, "23502") == 0)
		return SQLITE_CONSTRAINT_NOTNULL;
	if (strcmp(st, "P0001") == 0) /* RAISE EXCEPTION: a trigger's */
		return SQLITE_CONSTRAINT_TRIGGER;
	return SQLITE_ERROR;
}

/* sql with SQLite's ?N parameters as PostgreSQL's $N. */
static inline void
fx_pg_sql(char *out, size_t len, const char *sql)
{
	size_t i = 0;

	for (; *sql != '\0' && i + 1 < len; sql++)
		out[i++] = *sql == '?' ? '$' : *sql;
	out[i] = '\0';
	cr_assert_eq(*sql, '\0', "SQL too long for the fixture");
}

/* Runs sql on a fresh raw connection; returns the extended result code. */
static inline int
fx_raw_exec(struct fx *f, const char *sql)
{
	sqlite3 *db;

	if (f->pg) {
		PGconn *c = fx_pg_connect(f->dsn);
		PGresult *r = PQexec(c, sql);
		int rc = fx_pg_code(r);

		PQclear(r);
		PQfinish(c);
		return rc;
	}
	db = fx_raw_open(f);
	int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);

	rc = rc == SQLITE_OK ? SQLITE_OK : sqlite3_extended_errcode(db);
	sqlite3_close(db);
	return rc;
}

/*
 * The first column of the first row of sql, as an integer, with the text
 * parameters that follow (NULL-terminated) bound to ?1, ?2, ...  No row
 * gives -1.
 */
static inline int64_t
fx_sql_int(struct fx *f, const char *sql, ...)
{
	sqlite3 *db;
	sqlite3_stmt *s = NULL;
	const char *p;
	int64_t v = -1;
	va_list ap;
	int k = 1;

	if (f->pg) {
		const char *params[16];
		char q[4096];
		PGconn *c = fx_pg_connect(f->dsn);
		PGresult *r;
		int n = 0;

		fx_pg_sql(q, sizeof(q), sql);
		va_start(ap, sql);
		while ((p = va_arg(ap, const char *)) != NULL && n < 16)
			params[n++] = p;
		va_end(ap);
		r = PQexecParams(c, q, n, NULL, params, NULL, NULL, 0);
		cr_assert_eq(PQresultStatus(r), PGRES_TUPLES_OK, "%s: %s", q,
		    PQresultErrorMessage(r));
		if (PQntuples(r) > 0) {
			const char *t = PQgetvalue(r, 0, 0);

			/* NULL reads 0, as sqlite3_column_int64's. */
			v = t[0] == 't' || t[0] == 'f' ? t[0] == 't'
			                               : strtoll(t, NULL, 10);
		}
		PQclear(r);
		PQfinish(c);
		return v;
	}
	db = fx_raw_open(f);

	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK,
	    "prepare %s: %s", sql, sqlite3_errmsg(db));
	va_start(ap, sql);
	while ((p = va_arg(ap, const char *)) != NULL)
		sqlite3_bind_text(s, k++, p, -1, SQLITE_TRANSIENT);
	va_end(ap);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

/* ---- published events --------------------------------------------------- */

static inline void
fx_publish(void *arg, const char *space_id, const char *kind, const void *msg,
    size_t len, int64_t serial)
{
	struct fx *f = arg;
	struct fx_pub *p;
	char err[256] = "";

	if (f->n_pubs == f->cap_pubs) {
		size_t cap = f->cap_pubs ? f->cap_pubs * 2 : 64;
		struct fx_pub *np = realloc(f->pubs, cap * sizeof(*np));

		cr_assert_not_null(np, "out of memory");
		f->pubs = np;
		f->cap_pubs = cap;
	}
	p = &f->pubs[f->n_pubs];
	memset(p, 0, sizeof(*p));
	cr_assert_eq(
	    pr_pub_decode(msg, len, &p->ev, NULL, &f->arena, err, sizeof(err)),
	    0, "a published message does not decode: %s", err);
	/* Numbered without a gap, from 1 again in a store opened again. */
	cr_assert_eq(p->ev.serial, serial, "serial %lld published as %lld",
	    (long long)p->ev.serial, (long long)serial);
	cr_assert(serial == f->last_serial + 1 || serial == 1,
	    "serial %lld after %lld", (long long)serial,
	    (long long)f->last_serial);
	cr_assert_str_eq(
	    p->ev.kind, kind, "kind %s published as %s", p->ev.kind, kind);
	f->last_serial = serial;
	p->raw = pr_arena_alloc(&f->arena, len);
	cr_assert_not_null(p->raw);
	memcpy(p->raw, msg, len);
	p->raw_len = len;
	cr_assert_str_eq(space_id, p->ev.space_id,
	    "published with another Space than its own");
	if (f->pub_check_commit && p->ev.sequence > 0) {
		char seq[32];

		snprintf(seq, sizeof(seq), "%lld", (long long)p->ev.sequence);
		p->visible = fx_sql_int(f,
		                 "SELECT count(*) FROM browser_space_events"
		                 " WHERE space_id = ?1 AND sequence = ?2",
		                 p->ev.space_id, seq, (const char *)NULL) == 1;
	} else if (f->pub_check_commit) {
		/* A notice has no row: the state it announces must be there. */
		p->visible = strcmp(p->ev.kind, "close_requested") == 0 &&
		             fx_sql_int(f,
		                 "SELECT close_requested FROM browser_spaces"
		                 " WHERE id = ?1",
		                 p->ev.space_id, (const char *)NULL) == 1;
	}
	f->n_pubs++;
}

static inline bool
fx_is_notice(const struct fx_pub *p)
{
	return p->ev.sequence == 0;
}

/* Published log events (notices == false) or notices (true) since index
 * from, of one Space (NULL: any). */
static inline size_t
fx_pubs_count(
    const struct fx *f, size_t from, const char *space_id, bool notices)
{
	size_t n = 0;

	for (size_t i = from; i < f->n_pubs; i++)
		n += fx_is_notice(&f->pubs[i]) == notices &&
		     (space_id == NULL ||
		         strcmp(f->pubs[i].ev.space_id, space_id) == 0);
	return n;
}

/* ---- requests ------------------------------------------------------------ */

/* Zeroes q and sets its op; a write gets a fresh op_id. */
static inline void
fx_req(struct fx *f, struct pr_req *q, enum pr_op op)
{
	char id[32];

	memset(q, 0, sizeof(*q));
	q->op = op;
	if (pr_op_is_write(op)) {
		snprintf(id, sizeof(id), "fx-op-%lu", ++f->op_seq);
		q->op_id = fx_strdup(f, id);
	}
}

/* One request through st_store_call; the reply lives until teardown. */
static inline struct pr_rep *
fx_call_any(struct fx *f, const struct pr_req *q)
{
	struct pr_rep *rep = calloc(1, sizeof(*rep));
	int rc;

	cr_assert_not_null(rep, "out of memory");
	if (f->n_reps == f->cap_reps) {
		size_t cap = f->cap_reps ? f->cap_reps * 2 : 64;
		struct fx_rep *nr = realloc(f->reps, cap * sizeof(*nr));

		cr_assert_not_null(nr, "out of memory");
		f->reps = nr;
		f->cap_reps = cap;
	}
	f->reps[f->n_reps].rep = rep;
	f->reps[f->n_reps].op = q->op;
	f->n_reps++;
	rc = st_store_call(f->st, q, rep, fx_publish, f);
	cr_assert_eq(rc, 0, "%s: st_store_call returned %d (%s)",
	    pr_op_name(q->op), rc, cm_err_code(rep->err));
	if (f->sync_each && st_store_pending_sync(f->st) != NULL) {
		char *failed;
		size_t len;

		cr_assert_eq(st_store_sync(f->st, st_store_pending_sync(f->st),
		                 &failed, &len),
		    0, "%s: its commit failed", pr_op_name(q->op));
	}
	return rep;
}

static inline struct pr_rep *
fx_call_at(struct fx *f, const struct pr_req *q, enum cm_err want,
    const char *file, int line)
{
	struct pr_rep *rep = fx_call_any(f, q);

	cr_assert_eq(rep->err, want, "%s:%d: %s: expected %s, got %s (%s)",
	    file, line, pr_op_name(q->op), cm_err_code(want),
	    cm_err_code(rep->err), rep->msg ? rep->msg : "no message");
	return rep;
}

/* Calls the store and asserts the reply's error code (CM_OK for success). */
#define FX_CALL(f, q, want) fx_call_at((f), (q), (want), __FILE__, __LINE__)

/* Asserts a reply's error code, naming both codes and the message. */
#define FX_EXPECT(rep, want)                                         \
	cr_assert_eq((rep)->err, (want), "expected %s, got %s (%s)", \
	    cm_err_code(want), cm_err_code((rep)->err),              \
	    (rep)->msg ? (rep)->msg : "no message")

/* Runs n already encoded requests as one group; replies in items. */
static inline int
fx_exec(struct fx *f, struct st_item *items, size_t n)
{
	return st_store_exec(f->st, items, n, fx_publish, f);
}

/* Encodes q into a malloc'd buffer (the caller frees). */
static inline char *
fx_encode(const struct pr_req *q, size_t *len)
{
	char *buf = NULL;

	cr_assert_eq(pr_req_encode(q, &buf, len), 0, "%s does not encode",
	    pr_op_name(q->op));
	return buf;
}

/* Decodes an item's reply into a tracked pr_rep. */
static inline struct pr_rep *
fx_item_rep(struct fx *f, const struct st_item *it, enum pr_op op)
{
	struct pr_rep *rep = calloc(1, sizeof(*rep));
	char err[256] = "";

	cr_assert_not_null(rep, "out of memory");
	cr_assert_not_null(it->rep, "an item got no reply");
	cr_assert_eq(pr_rep_decode(it->rep, it->rep_len, rep, err, sizeof(err)),
	    0, "a reply does not decode: %s", err);
	if (f->n_reps == f->cap_reps) {
		size_t cap = f->cap_reps ? f->cap_reps * 2 : 64;
		struct fx_rep *nr = realloc(f->reps, cap * sizeof(*nr));

		cr_assert_not_null(nr, "out of memory");
		f->reps = nr;
		f->cap_reps = cap;
	}
	f->reps[f->n_reps].rep = rep;
	f->reps[f->n_reps].op = op;
	f->n_reps++;
	return rep;
}

/* A 64-digit lowercase hex token hash derived from seed. */
static inline const char *
fx_hash(struct fx *f, unsigned seed)
{
	char h[65];

	snprintf(h, sizeof(h), "%016x%016x%016x%016x", seed, seed * 7u + 1u,
	    seed * 13u + 2u, seed * 31u + 3u);
	return fx_strdup(f, h);
}

/* ---- byte searches ------------------------------------------------------- */

static inline bool
fx_mem_has(const void *buf, size_t len, const char *needle)
{
	const char *b = buf;
	size_t n = strlen(needle);

	if (n == 0 || len < n)
		return n == 0;
	for (size_t i = 0; i + n <= len; i++)
		if (b[i] == needle[0] && memcmp(b + i, needle, n) == 0)
			return true;
	return false;
}

/* True when the encoded reply contains needle anywhere. */
static inline bool
fx_rep_has(const struct pr_rep *rep, const char *needle)
{
	char *buf = NULL;
	size_t len = 0;
	bool has;

	cr_assert_eq(
	    pr_rep_encode(rep, &buf, &len), 0, "a reply does not re-encode");
	has = fx_mem_has(buf, len, needle);
	free(buf);
	return has;
}

/*
 * No reply the fixture saw, except actor.load's and sup.list_cdp's, and no
 * published message
 * carries any canary of the instances' secrets.  Returns how many replies
 * were checked.
 */
static inline size_t
fx_assert_no_secrets(const struct fx *f)
{
	static const char *const canaries[] = {
	    FX_CANARY_ENDPOINT, FX_CANARY_CONFIG, FX_CANARY_PROFILE};
	size_t checked = 0;

	for (size_t i = 0; i < f->n_reps; i++) {
		if (f->reps[i].op == PR_OP_ACTOR_LOAD ||
		    f->reps[i].op == PR_OP_SUP_LIST_CDP)
			continue;
		for (size_t c = 0; c < 3; c++)
			cr_assert(!fx_rep_has(f->reps[i].rep, canaries[c]),
			    "the reply to %s (#%zu) leaks %s",
			    pr_op_name(f->reps[i].op), i, canaries[c]);
		checked++;
	}
	for (size_t i = 0; i < f->n_pubs; i++)
		for (size_t c = 0; c < 3; c++)
			cr_assert(!fx_mem_has(f->pubs[i].raw,
			              f->pubs[i].raw_len, canaries[c]),
			    "published event %s leaks %s", f->pubs[i].ev.kind,
			    canaries[c]);
	return checked;
}

/* ---- provisioning ---------------------------------------------------------
 */

static inline const char *
fx_workspace(struct fx *f, const char *name)
{
	struct pr_req q;
	struct pr_rep *r;

	fx_req(f, &q, PR_OP_WORKSPACE_CREATE);
	q.name = name;
	r = FX_CALL(f, &q, CM_OK);
	cr_assert_eq(r->n_workspaces, 1);
	return r->workspaces[0].workspace_id;
}

static inline const char *
fx_principal(struct fx *f, const char *kind, const char *name)
{
	struct pr_req q;
	struct pr_rep *r;

	fx_req(f, &q, PR_OP_PRINCIPAL_CREATE);
	q.kind = kind;
	q.name = name;
	r = FX_CALL(f, &q, CM_OK);
	cr_assert_eq(r->n_principals, 1);
	return r->principals[0].principal_id;
}

static inline void
fx_member(struct fx *f, const char *ws, const char *principal, const char *role)
{
	struct pr_req q;

	fx_req(f, &q, PR_OP_MEMBER_PUT);
	q.workspace_id = ws;
	q.principal_id = principal;
	q.role = role;
	FX_CALL(f, &q, CM_OK);
}

static inline const char *
fx_bundle(struct fx *f, const char *manifest)
{
	struct pr_req q;
	struct pr_rep *r;

	fx_req(f, &q, PR_OP_BUNDLE_CREATE);
	q.manifest = manifest;
	r = FX_CALL(f, &q, CM_OK);
	cr_assert_eq(r->n_bundles, 1);
	return r->bundles[0].bundle_id;
}

/* A fake instance holding the canary secrets; host NULL is the store's. */
static inline const char *
fx_instance(
    struct fx *f, const char *name, const char *bundle, const char *host)
{
	struct pr_req q;
	struct pr_rep *r;

	fx_req(f, &q, PR_OP_INSTANCE_REGISTER);
	q.name = name;
	q.driver = "fake";
	q.bundle_id = bundle;
	q.endpoint = FX_SECRET_ENDPOINT;
	q.config = FX_SECRET_CONFIG;
	q.profile = FX_SECRET_PROFILE;
	q.profile_mode = "persistent";
	q.host = host;
	r = FX_CALL(f, &q, CM_OK);
	cr_assert_eq(r->n_instances, 1);
	return r->instances[0].browser_instance_id;
}

static inline const char *
fx_binding(struct fx *f, const char *ws, const char *instance)
{
	struct pr_req q;
	struct pr_rep *r;

	fx_req(f, &q, PR_OP_BINDING_CREATE);
	q.workspace_id = ws;
	q.browser_instance_id = instance;
	r = FX_CALL(f, &q, CM_OK);
	cr_assert_eq(r->n_bindings, 1);
	return r->bindings[0].binding_id;
}

/*
 * The standard world: workspaces ws-main and ws-other; a managing
 * operator, a member operator and a runtime agent in ws-main; an outsider
 * in ws-other; the fixture bundle; n fake instances bound to ws-main.
 */
static inline void
fx_provision(struct fx *f, size_t n)
{
	char name[32];

	cr_assert_leq(n, FX_INST_MAX);
	f->ws = fx_workspace(f, "ws-main");
	f->ws2 = fx_workspace(f, "ws-other");
	f->mgr = fx_principal(f, "operator", "alice");
	f->member = fx_principal(f, "operator", "bob");
	f->agent = fx_principal(f, "runtime_agent", "agent-1");
	f->outsider = fx_principal(f, "operator", "mallory");
	fx_member(f, f->ws, f->mgr, "manager");
	fx_member(f, f->ws, f->member, "member");
	fx_member(f, f->ws, f->agent, "member");
	fx_member(f, f->ws2, f->outsider, "manager");
	f->bundle = fx_bundle(f, FX_MANIFEST);
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "inst-%zu", i);
		f->inst[i] = fx_instance(f, name, f->bundle, NULL);
		f->binding[i] = fx_binding(f, f->ws, f->inst[i]);
	}
	f->n_inst = n;
}

/* ---- Spaces and tasks ------------------------------------------------------
 */

/* Builds a create of a Space on instance i of ws, owned by the manager. */
static inline void
fx_create_req(struct fx *f, struct pr_req *q, size_t i)
{
	fx_req(f, q, PR_OP_SPACE_CREATE);
	q->workspace_id = f->ws;
	q->browser_instance_id = f->inst[i];
	q->owner_type = "operator";
	q->owner_id = f->mgr;
}

/* Creates a Space on instance i (every capability granted); its id. */
static inline const char *
fx_space(struct fx *f, size_t i)
{
	struct pr_req q;
	struct pr_rep *r;

	fx_create_req(f, &q, i);
	r = FX_CALL(f, &q, CM_OK);
	cr_assert_eq(r->n_spaces, 1);
	cr_assert(r->created);
	return r->spaces[0].space_id;
}

static inline struct pr_rep *
fx_submit_at(struct fx *f, const char *space, const char *request_id,
    const char *capability, const char *args, int64_t timeout_ms,
    enum cm_err want, const char *file, int line)
{
	struct pr_req q;

	fx_req(f, &q, PR_OP_TASK_SUBMIT);
	q.workspace_id = f->ws;
	q.space_id = space;
	q.request_id = request_id;
	q.capability = capability;
	q.args = args;
	q.timeout_ms = timeout_ms;
	return fx_call_at(f, &q, want, file, line);
}

/* Submits capability(args) to a Space of ws (default timeout). */
#define FX_SUBMIT(f, sp, rid, cap, args, want) \
	fx_submit_at(                          \
	    (f), (sp), (rid), (cap), (args), 0, (want), __FILE__, __LINE__)

/* Submits and returns the new task's id. */
static inline const char *
fx_task(struct fx *f, const char *space, const char *request_id)
{
	struct pr_rep *r = fx_submit_at(
	    f, space, request_id, "noop", "{}", 0, CM_OK, __FILE__, __LINE__);

	cr_assert_eq(r->n_tasks, 1);
	return r->tasks[0].task_id;
}

static inline struct pr_rep *
fx_cancel_at(struct fx *f, const char *space, const char *task,
    enum cm_err want, const char *file, int line)
{
	struct pr_req q;

	fx_req(f, &q, PR_OP_TASK_CANCEL);
	q.workspace_id = f->ws;
	q.space_id = space;
	q.task_id = task;
	return fx_call_at(f, &q, want, file, line);
}
#define FX_CANCEL(f, sp, task, want) \
	fx_cancel_at((f), (sp), (task), (want), __FILE__, __LINE__)

static inline struct pr_rep *
fx_claim(struct fx *f, const char *space, const char *holder)
{
	struct pr_req q;

	fx_req(f, &q, PR_OP_ACTOR_CLAIM);
	q.space_id = space;
	q.lease_holder = holder;
	return FX_CALL(f, &q, CM_OK);
}

static inline struct pr_rep *
fx_finish_at(struct fx *f, const char *task, const char *holder,
    const char *status, const char *result, const char *error_code,
    enum cm_err want, const char *file, int line)
{
	struct pr_req q;

	fx_req(f, &q, PR_OP_ACTOR_FINISH);
	q.task_id = task;
	q.lease_holder = holder;
	q.status = status;
	q.result = result;
	q.error_code = error_code;
	if (error_code != NULL)
		q.error_message = "it went wrong";
	return fx_call_at(f, &q, want, file, line);
}
#define FX_FINISH(f, task, holder, status, result, code, want)          \
	fx_finish_at((f), (task), (holder), (status), (result), (code), \
	    (want), __FILE__, __LINE__)

static inline struct pr_rep *
fx_space_get(struct fx *f, const char *ws, const char *space)
{
	struct pr_req q;

	fx_req(f, &q, PR_OP_SPACE_GET);
	q.workspace_id = ws;
	q.space_id = space;
	return fx_call_any(f, &q);
}

static inline struct pr_rep *
fx_task_get(struct fx *f, const char *space, const char *task)
{
	struct pr_req q;

	fx_req(f, &q, PR_OP_TASK_GET);
	q.workspace_id = f->ws;
	q.space_id = space;
	q.task_id = task;
	return FX_CALL(f, &q, CM_OK);
}

static inline struct pr_rep *
fx_close(struct fx *f, const char *space)
{
	struct pr_req q;

	fx_req(f, &q, PR_OP_SPACE_CLOSE);
	q.workspace_id = f->ws;
	q.space_id = space;
	return FX_CALL(f, &q, CM_OK);
}

static inline struct pr_rep *
fx_mark_closed(struct fx *f, const char *space)
{
	struct pr_req q;

	fx_req(f, &q, PR_OP_SPACE_MARK_CLOSED);
	q.space_id = space;
	return FX_CALL(f, &q, CM_OK);
}

static inline struct pr_rep *
fx_sweep(struct fx *f)
{
	struct pr_req q;

	fx_req(f, &q, PR_OP_SUP_SWEEP_LEASES);
	return FX_CALL(f, &q, CM_OK);
}

/* Rows of a table that belong to a Space (space_id column). */
/* Spaces not closed on the instance inst: at most one may be. */
static inline int64_t
fx_count_open_spaces(struct fx *f, const char *inst)
{
	return fx_sql_int(f,
	    "SELECT count(*) FROM browser_spaces WHERE browser_instance_id = ?1"
	    " AND status <> 'closed'",
	    inst, (const char *)NULL);
}

static inline int64_t
fx_count_tasks(struct fx *f, const char *space)
{
	return fx_sql_int(f,
	    "SELECT count(*) FROM browser_space_tasks WHERE space_id = ?1",
	    space, (const char *)NULL);
}

static inline int64_t
fx_count_events(struct fx *f, const char *space)
{
	return fx_sql_int(f,
	    "SELECT count(*) FROM browser_space_events WHERE space_id = ?1",
	    space, (const char *)NULL);
}

/* ---- the event log ----------------------------------------------------------
 */

static inline bool
fx_is_space_kind(const char *kind)
{
	return strncmp(kind, "space_", 6) == 0;
}

/* A runtime event (network_blocked, the page's): it names the task it
 * happened during, or none. */
static inline bool
fx_is_runtime_kind(const char *kind)
{
	enum cm_event_kind k = cm_event_kind_parse(kind);

	return k == CM_EV_NETWORK_BLOCKED || cm_event_kind_of_page(k);
}

/*
 * Reads a Space's whole log through event.list, page pages of at most
 * page rows (page 0: the default limit), and checks it: sequences start
 * at 1 and rise by exactly 1, Space events carry no task_id and task
 * events do (a runtime event may or may not), and, when want is not
 * NULL, the kinds are exactly want.
 * Returns the number of events.
 */
static inline size_t
fx_check_log_at(struct fx *f, const char *ws, const char *space, int64_t page,
    const char *const *want, size_t n_want, const char *file, int line)
{
	int64_t after = 0;
	size_t total = 0;

	for (;;) {
		struct pr_req q;
		struct pr_rep *r;

		fx_req(f, &q, PR_OP_EVENT_LIST);
		q.workspace_id = ws;
		q.space_id = space;
		q.after_sequence = after;
		q.limit = page;
		r = fx_call_at(f, &q, CM_OK, file, line);
		cr_assert_leq(r->n_events,
		    (size_t)(page ? page : CM_EVENTS_LIMIT_DEFAULT),
		    "%s:%d: a page holds more than its limit", file, line);
		for (size_t i = 0; i < r->n_events; i++) {
			const struct pr_event *ev = &r->events[i];

			cr_assert_eq(ev->sequence, after + 1,
			    "%s:%d: event %zu has sequence %lld, want %lld",
			    file, line, total, (long long)ev->sequence,
			    (long long)(after + 1));
			cr_assert_str_eq(ev->space_id, space);
			if (fx_is_space_kind(ev->kind))
				cr_assert_null(ev->task_id,
				    "%s:%d: %s carries a task_id", file, line,
				    ev->kind);
			else if (!fx_is_runtime_kind(ev->kind))
				cr_assert_not_null(ev->task_id,
				    "%s:%d: %s has no task_id", file, line,
				    ev->kind);
			if (want != NULL) {
				cr_assert_lt(total, n_want,
				    "%s:%d: unexpected event %lld %s", file,
				    line, (long long)ev->sequence, ev->kind);
				cr_assert_str_eq(ev->kind, want[total],
				    "%s:%d: event %lld is %s, want %s", file,
				    line, (long long)ev->sequence, ev->kind,
				    want[total]);
			}
			after = ev->sequence;
			total++;
		}
		if (r->n_events == 0)
			break;
	}
	if (want != NULL)
		cr_assert_eq(total, n_want, "%s:%d: %zu events, want %zu", file,
		    line, total, n_want);
	return total;
}

/* Checks a Space of ws has exactly the events of the kinds listed. */
#define FX_LOG(f, sp, ...)                                                     \
	fx_check_log_at((f), (f)->ws, (sp), 0,                                 \
	    (const char *const[]){__VA_ARGS__},                                \
	    sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *), \
	    __FILE__, __LINE__)

/* Checks a Space's log is well-formed; returns its length. */
#define FX_LOG_LEN(f, sp) \
	fx_check_log_at((f), (f)->ws, (sp), 0, NULL, 0, __FILE__, __LINE__)

#endif
