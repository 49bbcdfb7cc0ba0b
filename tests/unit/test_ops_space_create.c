/*
 * test_ops_space_create.c: space.create: the instance's reservation, the
 * owner and the granted capabilities it checks, the workspace's quota,
 * idempotence by request_id, and the granted list as stored.
 */
#include <pthread.h>
#include <time.h>

#include "clock.h"
#include "ops.h"
#include "reply.h"
#include "store_fixture.h"

static struct fx fx;

static void
setup(void)
{
	fx_setup(&fx, 0);
	fx_provision(&fx, 3);
}

static void
teardown(void)
{
	fx_teardown(&fx);
}

/* The quota suite opens its store with max_spaces_per_workspace 2. */
static void
setup_quota(void)
{
	fx_setup(&fx, 2);
	fx_provision(&fx, 4);
}

TestSuite(space, .init = setup, .fini = teardown);
TestSuite(quota, .init = setup_quota, .fini = teardown);

static int64_t
spaces_on(const char *inst)
{
	return fx_sql_int(&fx,
	    "SELECT count(*) FROM browser_spaces WHERE browser_instance_id = "
	    "?1",
	    inst, (const char *)NULL);
}

static struct pr_strlist
names(const char **v, size_t n)
{
	struct pr_strlist l = {n, v};

	return l;
}

/* ---- create
 * ------------------------------------------------------------------ */

Test(space, create_returns_space_scoped_to_workspace_and_owner)
{
	static const char *granted[] = {"sleep", "noop", "sleep"};
	const struct pr_space *s;
	struct pr_req q;
	struct pr_rep *r;
	size_t pubs = fx.n_pubs;

	fx_create_req(&fx, &q, 0);
	q.owner_type = "runtime_agent";
	q.owner_id = fx.agent;
	q.granted = names(granted, 3);
	r = FX_CALL(&fx, &q, CM_OK);
	cr_assert(r->created);
	cr_assert_eq(r->n_spaces, 1);
	s = &r->spaces[0];
	cr_assert_str_eq(s->workspace_id, fx.ws);
	cr_assert_str_eq(s->browser_instance_id, fx.inst[0]);
	cr_assert_str_eq(s->binding_id, fx.binding[0]);
	cr_assert_str_eq(s->owner_type, "runtime_agent");
	cr_assert_str_eq(s->owner_id, fx.agent);
	cr_assert_str_eq(s->status, "idle");
	cr_assert_eq(s->revision, 1);
	cr_assert_not(s->close_requested);
	cr_assert_null(s->last_error_code);
	cr_assert_eq(s->created_at, FX_T0);
	cr_assert_eq(s->updated_at, FX_T0);
	cr_assert_eq(s->closed_at, 0);
	/* Sorted and without duplicates. */
	cr_assert_eq(s->granted.n, 2);
	cr_assert_str_eq(s->granted.v[0], "noop");
	cr_assert_str_eq(s->granted.v[1], "sleep");

	/* One space_opened event, published after commit. */
	cr_assert_eq(fx.n_pubs, pubs + 1);
	cr_assert_str_eq(fx.pubs[pubs].ev.kind, "space_opened");
	cr_assert_str_eq(fx.pubs[pubs].ev.space_id, s->space_id);
	cr_assert_str_eq(fx.pubs[pubs].ev.workspace_id, fx.ws);
	FX_LOG(&fx, s->space_id, "space_opened");

	/* Not visible from another workspace. */
	FX_EXPECT(fx_space_get(&fx, fx.ws2, s->space_id), CM_E_NOT_FOUND);
}

Test(space, create_without_granted_grants_the_whole_bundle)
{
	struct pr_rep *r = fx_space_get(&fx, fx.ws, fx_space(&fx, 0));

	FX_EXPECT(r, CM_OK);
	cr_assert_eq(r->spaces[0].granted.n, 4);
	cr_assert_str_eq(r->spaces[0].granted.v[0], "navigate");
	cr_assert_str_eq(r->spaces[0].granted.v[3], "type_text");
}

Test(space, second_create_on_an_instance_is_in_use_and_leaves_no_row)
{
	struct pr_req q;
	size_t pubs;

	fx_space(&fx, 0);
	pubs = fx.n_pubs;
	fx_create_req(&fx, &q, 0);
	q.owner_id = fx.member;
	FX_CALL(&fx, &q, CM_E_INSTANCE_IN_USE);
	cr_assert_eq(spaces_on(fx.inst[0]), 1);
	cr_assert_eq(fx.n_pubs, pubs, "a refused create published an event");
	/* Another instance is free. */
	fx_space(&fx, 1);
}

Test(space, after_mark_closed_the_instance_can_be_reserved_again)
{
	struct pr_req q;
	const char *first, *second;

	first = fx_space(&fx, 0);
	fx_close(&fx, first);
	/* Closing, not closed: still reserved. */
	fx_create_req(&fx, &q, 0);
	FX_CALL(&fx, &q, CM_E_INSTANCE_IN_USE);
	fx_mark_closed(&fx, first);
	second = fx_space(&fx, 0);
	cr_assert_str_neq(first, second);
	cr_assert_eq(fx_count_open_spaces(&fx, fx.inst[0]), 1);
	cr_assert_eq(spaces_on(fx.inst[0]), 2);
}

Test(space, two_creates_in_one_group_exactly_one_wins)
{
	struct pr_req q[2];
	struct st_item it[2];
	struct pr_rep *r[2];
	size_t pubs = fx.n_pubs;

	fx_create_req(&fx, &q[0], 0);
	fx_create_req(&fx, &q[1], 0);
	q[1].owner_type = "runtime_agent";
	q[1].owner_id = fx.agent;
	memset(it, 0, sizeof(it));
	for (size_t i = 0; i < 2; i++)
		it[i].req = fx_encode(&q[i], &it[i].req_len);
	cr_assert_eq(fx_exec(&fx, it, 2), 0);
	r[0] = fx_item_rep(&fx, &it[0], PR_OP_SPACE_CREATE);
	r[1] = fx_item_rep(&fx, &it[1], PR_OP_SPACE_CREATE);
	FX_EXPECT(r[0], CM_OK);
	FX_EXPECT(r[1], CM_E_INSTANCE_IN_USE);
	cr_assert_eq(r[1]->n_spaces, 0);
	cr_assert_eq(spaces_on(fx.inst[0]), 1);
	cr_assert_eq(fx.n_pubs, pubs + 1);
	for (size_t i = 0; i < 2; i++) {
		free((void *)it[i].req);
		free(it[i].rep);
	}
}

Test(space, foreign_instance_and_binding_mismatch_are_not_found)
{
	struct pr_req q;
	const char *unbound, *other;

	unbound = fx_instance(&fx, "unbound", fx.bundle, NULL);
	other = fx_instance(&fx, "other-ws-only", fx.bundle, NULL);
	fx_binding(&fx, fx.ws2, other);

	fx_create_req(&fx, &q, 0);
	q.browser_instance_id = unbound;
	FX_CALL(&fx, &q, CM_E_NOT_FOUND);
	fx_create_req(&fx, &q, 0);
	q.browser_instance_id = other;
	FX_CALL(&fx, &q, CM_E_NOT_FOUND);
	fx_create_req(&fx, &q, 0);
	q.browser_instance_id = "no-such-instance";
	FX_CALL(&fx, &q, CM_E_NOT_FOUND);
	/* The binding of another instance does not unlock this one. */
	fx_create_req(&fx, &q, 0);
	q.binding_id = fx.binding[1];
	FX_CALL(&fx, &q, CM_E_NOT_FOUND);
	cr_assert_eq(fx_sql_int(&fx, "SELECT count(*) FROM browser_spaces",
	                 (const char *)NULL),
	    0);
	/* The right binding, given explicitly, works. */
	fx_create_req(&fx, &q, 0);
	q.binding_id = fx.binding[0];
	cr_assert_str_eq(
	    FX_CALL(&fx, &q, CM_OK)->spaces[0].binding_id, fx.binding[0]);
}

Test(space, owner_must_be_a_member_of_that_kind)
{
	struct pr_req q;
	const char *loner = fx_principal(&fx, "operator", "loner");

	fx_create_req(&fx, &q, 0);
	q.owner_id = loner; /* no membership */
	FX_CALL(&fx, &q, CM_E_FORBIDDEN);
	fx_create_req(&fx, &q, 0);
	q.owner_id = fx.outsider; /* member elsewhere */
	FX_CALL(&fx, &q, CM_E_FORBIDDEN);
	fx_create_req(&fx, &q, 0);
	q.owner_type = "runtime_agent"; /* but mgr is an operator */
	FX_CALL(&fx, &q, CM_E_FORBIDDEN);
	fx_create_req(&fx, &q, 0);
	q.owner_type = "operator";
	q.owner_id = fx.agent; /* and agent is a runtime_agent */
	FX_CALL(&fx, &q, CM_E_FORBIDDEN);
	fx_create_req(&fx, &q, 0);
	q.owner_id = "no-such-principal";
	FX_CALL(&fx, &q, CM_E_FORBIDDEN);
	fx_create_req(&fx, &q, 0);
	q.owner_type = "robot";
	FX_CALL(&fx, &q, CM_E_INVALID_REQUEST);
	cr_assert_eq(spaces_on(fx.inst[0]), 0);
	/* A plain member may own a Space. */
	fx_create_req(&fx, &q, 0);
	q.owner_id = fx.member;
	FX_CALL(&fx, &q, CM_OK);
}

Test(space, granted_names_must_be_in_the_bundle)
{
	static const char *bad[] = {"noop", "evaluate_js"};
	static const char *empty[] = {""};
	struct pr_req q;

	fx_create_req(&fx, &q, 0);
	q.granted = names(bad, 2);
	FX_CALL(&fx, &q, CM_E_CAPABILITY_UNKNOWN);
	fx_create_req(&fx, &q, 0);
	q.granted = names(empty, 1);
	FX_CALL(&fx, &q, CM_E_INVALID_REQUEST);
	cr_assert_eq(spaces_on(fx.inst[0]), 0);
}

Test(quota, create_beyond_the_workspace_quota_is_refused)
{
	struct pr_req q;
	const char *a;

	a = fx_space(&fx, 0);
	fx_space(&fx, 1);
	fx_create_req(&fx, &q, 2);
	FX_CALL(&fx, &q, CM_E_QUOTA_EXCEEDED);
	cr_assert_eq(spaces_on(fx.inst[2]), 0);
	/* Closing (not yet closed) does not free quota; closed does. */
	fx_close(&fx, a);
	fx_create_req(&fx, &q, 2);
	FX_CALL(&fx, &q, CM_E_QUOTA_EXCEEDED);
	fx_mark_closed(&fx, a);
	fx_space(&fx, 2);
	fx_create_req(&fx, &q, 3);
	FX_CALL(&fx, &q, CM_E_QUOTA_EXCEEDED);
}

/* A create made by another thread, as the store's loop makes it. */
struct racing_create {
	struct pr_req q;
	enum cm_err err;
	bool done;
	pthread_mutex_t mtx;
};

static void *
racing_create_run(void *arg)
{
	struct racing_create *rc = arg;
	struct pr_rep *rep = fx_call_any(&fx, &rc->q);

	pthread_mutex_lock(&rc->mtx);
	rc->err = rep->err;
	rc->done = true;
	pthread_mutex_unlock(&rc->mtx);
	return NULL;
}

static bool
racing_create_done(struct racing_create *rc)
{
	bool done;

	pthread_mutex_lock(&rc->mtx);
	done = rc->done;
	pthread_mutex_unlock(&rc->mtx);
	return done;
}

static void
pg_ok(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);
	ExecStatusType st = PQresultStatus(r);

	cr_assert(st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK, "%s: %s",
	    sql, PQerrorMessage(c));
	PQclear(r);
}

/*
 * On PostgreSQL another writer (another host's store, or this store's
 * other connection while a COMMIT runs) may be creating a Space in the
 * workspace at the same moment.  Here a second connection holds such a
 * create uncommitted, taking the workspace row as the store's creates do;
 * the store's create waits for it and then counts it: the quota holds.
 * (SQLite has one writer: nothing to race.)
 */
Test(quota, a_concurrent_create_on_another_connection_counts)
{
	struct racing_create rc = {.mtx = PTHREAD_MUTEX_INITIALIZER};
	char sql[512];
	PGresult *r;
	pthread_t th;
	PGconn *other;
	bool waited = false;
	int64_t end;

	if (!fx.pg)
		return;
	fx_space(&fx, 0);
	other = fx_pg_connect(fx.dsn);
	pg_ok(other, "BEGIN");
	snprintf(sql, sizeof(sql),
	    "SELECT 1 FROM workspaces WHERE id = '%s' FOR NO KEY UPDATE",
	    fx.ws);
	pg_ok(other, sql);
	snprintf(sql, sizeof(sql),
	    "CREATE TEMP TABLE racing AS SELECT * FROM browser_spaces"
	    " WHERE browser_instance_id = '%s';"
	    " UPDATE racing SET id = 'racing-space', browser_instance_id ="
	    " '%s', binding_id = '%s', request_id = NULL,"
	    " request_digest = NULL;"
	    " INSERT INTO browser_spaces SELECT * FROM racing",
	    fx.inst[0], fx.inst[1], fx.binding[1]);
	pg_ok(other, sql);

	fx_create_req(&fx, &rc.q, 2);
	cr_assert_eq(pthread_create(&th, NULL, racing_create_run, &rc), 0);
	/* Until the store's create waits for a lock, or has answered. */
	end = cm_mono_ms() + 10000;
	while (!waited && !racing_create_done(&rc) && cm_mono_ms() < end) {
		struct timespec tick = {0, 2 * 1000 * 1000};

		r = PQexec(
		    other, "SELECT count(*) FROM pg_locks WHERE NOT granted");
		waited = PQresultStatus(r) == PGRES_TUPLES_OK &&
		         strcmp(PQgetvalue(r, 0, 0), "0") != 0;
		PQclear(r);
		if (!waited)
			nanosleep(&tick, NULL);
	}
	pg_ok(other, "COMMIT");
	pthread_join(th, NULL);
	PQfinish(other);
	cr_assert_eq(rc.err, CM_E_QUOTA_EXCEEDED,
	    "the create answered %s beside a create it could not see",
	    cm_err_code(rc.err));
	cr_assert(waited);
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT count(*) FROM browser_spaces WHERE"
	                 " workspace_id = ?1 AND status <> 'closed'",
	                 fx.ws, (const char *)NULL),
	    2);
}

Test(space, create_is_idempotent_by_request_id)
{
	static const char *g1[] = {"noop"};
	static const char *g2[] = {"noop", "sleep"};
	struct pr_req q;
	struct pr_rep *a, *b;
	size_t pubs;

	fx_create_req(&fx, &q, 0);
	q.request_id = "create-1";
	q.granted = names(g1, 1);
	a = FX_CALL(&fx, &q, CM_OK);
	cr_assert(a->created);

	pubs = fx.n_pubs;
	fx_advance(&fx, 1000);
	fx_create_req(&fx, &q, 0); /* a new op_id: a genuine repeat */
	q.request_id = "create-1";
	q.granted = names(g1, 1);
	b = FX_CALL(&fx, &q, CM_OK);
	cr_assert_not(b->created);
	cr_assert_str_eq(b->spaces[0].space_id, a->spaces[0].space_id);
	cr_assert_eq(b->spaces[0].created_at, FX_T0);
	cr_assert_eq(fx.n_pubs, pubs);

	/* Giving the binding explicitly is the same request. */
	fx_create_req(&fx, &q, 0);
	q.request_id = "create-1";
	q.binding_id = fx.binding[0];
	q.granted = names(g1, 1);
	cr_assert_not(FX_CALL(&fx, &q, CM_OK)->created);

	/* Different content under the same key. */
	fx_create_req(&fx, &q, 0);
	q.request_id = "create-1";
	q.granted = names(g2, 2);
	FX_CALL(&fx, &q, CM_E_IDEMPOTENCY_REUSED);
	fx_create_req(&fx, &q, 1);
	q.request_id = "create-1";
	q.granted = names(g1, 1);
	FX_CALL(&fx, &q, CM_E_IDEMPOTENCY_REUSED);
	fx_create_req(&fx, &q, 0);
	q.request_id = "create-1";
	q.owner_id = fx.member;
	q.granted = names(g1, 1);
	FX_CALL(&fx, &q, CM_E_IDEMPOTENCY_REUSED);

	cr_assert_eq(fx_sql_int(&fx, "SELECT count(*) FROM browser_spaces",
	                 (const char *)NULL),
	    1);
	FX_LOG(&fx, a->spaces[0].space_id, "space_opened");
}

/* ---- granted capabilities, as stored ------------------------------------ */

/*
 * The stored list is read without jansson when it is a plain array of
 * ASCII strings; anything else goes through the full parser, and the two
 * agree.
 */
Test(granted, plain_and_full_parsing_agree)
{
	static const struct {
		const char *json;
		int rc;
		size_t n;
		const char *first, *last;
	} cases[] = {
	    {"[]", 0, 0, NULL, NULL},
	    {" [ ] ", 0, 0, NULL, NULL},
	    {"[\"noop\"]", 0, 1, "noop", "noop"},
	    {"[\"noop\",\"sleep\",\"navigate\"]", 0, 3, "noop", "navigate"},
	    {"[ \"a]b\" , \"c,d\" ]", 0, 2, "a]b", "c,d"},
	    /* The full parser: escapes, non-ASCII, other values. */
	    {"[\"a\\\"b\",\"c\"]", 0, 2, "a\"b", "c"},
	    {"[\"caf\\u00e9\"]", 0, 1, "caf\xc3\xa9", "caf\xc3\xa9"},
	    {"[\"x\",1,\"y\"]", 0, 2, "x", "y"},
	    /* Not an array, or not JSON: refused by both. */
	    {"{}", -1, 0, NULL, NULL},
	    {"[\"open", -1, 0, NULL, NULL},
	    {"[\"a\"] x", -1, 0, NULL, NULL},
	    {"[\"a\",]", -1, 0, NULL, NULL},
	    {"", -1, 0, NULL, NULL},
	};
	struct pr_rep rep;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pr_strlist l;

		memset(&rep, 0, sizeof(rep));
		cr_assert_eq(st_strlist_from_json(&rep, cases[i].json, &l),
		    cases[i].rc, "%s", cases[i].json);
		if (cases[i].rc == 0) {
			cr_assert_eq(l.n, cases[i].n, "%s", cases[i].json);
			if (l.n > 0) {
				cr_assert_str_eq(l.v[0], cases[i].first);
				cr_assert_str_eq(l.v[l.n - 1], cases[i].last);
			}
		}
		pr_rep_free(&rep);
	}
}
