/*
 * test_ops_sup_list.c: the supervisor's lists: sup.list_active, the open
 * Spaces of a host page by page, and sup.list_cdp, the probe's view of a
 * host's CDP instances with their endpoints.
 */
#include "store_fixture.h"

static struct fx fx;
static const char *sp; /* a Space on instance 0 */

static void
setup(void)
{
	fx_setup(&fx, 0);
	fx_provision(&fx, 2);
	sp = fx_space(&fx, 0);
}

static void
teardown(void)
{
	fx_teardown(&fx);
	sp = NULL;
}

TestSuite(actor, .init = setup, .fini = teardown);

/* ---- list_active
 * ----------------------------------------------------------------------- */

static struct pr_rep *
list_active(const char *host)
{
	struct pr_req q;

	fx_req(&fx, &q, PR_OP_SUP_LIST_ACTIVE);
	q.host = host;
	return FX_CALL(&fx, &q, CM_OK);
}

static bool
lists(const struct pr_rep *r, const char *space)
{
	for (size_t i = 0; i < r->n_spaces; i++)
		if (strcmp(r->spaces[i].space_id, space) == 0)
			return true;
	return false;
}

Test(actor, list_active_lists_open_spaces_by_host)
{
	const char *inst_b, *on_b, *closed, *closing;
	struct pr_rep *r;

	inst_b = fx_instance(&fx, "inst-host-b", fx.bundle, "host-b");
	fx_binding(&fx, fx.ws, inst_b);
	fx.inst[2] = inst_b;
	on_b = fx_space(&fx, 2);
	closing = fx_space(&fx, 1);
	fx_close(&fx, closing);
	fx_mark_closed(&fx, sp);
	closed = sp;
	sp = fx_space(&fx, 0);

	r = list_active(NULL);
	cr_assert_eq(r->n_spaces, 3);
	cr_assert(lists(r, sp));
	cr_assert(lists(r, on_b));
	cr_assert(lists(r, closing), "a closing Space still needs its actor");
	cr_assert_not(lists(r, closed));

	r = list_active("host-a");
	cr_assert_eq(r->n_spaces, 2);
	cr_assert(lists(r, sp));
	cr_assert(lists(r, closing));
	r = list_active("host-b");
	cr_assert_eq(r->n_spaces, 1);
	cr_assert_str_eq(r->spaces[0].space_id, on_b);
	cr_assert_eq(list_active("host-c")->n_spaces, 0);
}

/* ---- list_cdp: the probe's view, endpoints included */

static const char *
cdp_instance(const char *name, const char *endpoint, const char *host)
{
	struct pr_req q;
	struct pr_rep *r;

	fx_req(&fx, &q, PR_OP_INSTANCE_REGISTER);
	q.name = name;
	q.driver = "cdp";
	q.bundle_id = fx.bundle;
	q.endpoint = endpoint;
	q.host = host;
	r = FX_CALL(&fx, &q, CM_OK);
	return r->instances[0].browser_instance_id;
}

Test(actor, list_cdp_gives_the_cdp_instances_of_a_host_with_endpoints)
{
	const char *a, *b;
	struct pr_req q;
	struct pr_rep *r;

	a = cdp_instance("cdp-a", "http://10.1.1.1:9222", "host-a");
	b = cdp_instance("cdp-b", "ws://10.1.1.2:9222/devtools/x", "host-b");
	fx_req(&fx, &q, PR_OP_SUP_LIST_CDP);
	q.host = "host-a";
	r = FX_CALL(&fx, &q, CM_OK);
	/* Only the cdp instance of host-a: the fake ones are not probed. */
	cr_assert_eq(r->n_instances, 1);
	cr_assert_eq(r->n_instance_secrets, 1);
	cr_assert_str_eq(r->instances[0].browser_instance_id, a);
	cr_assert_str_eq(r->instances[0].status, "ready");
	cr_assert_str_eq(
	    r->instance_secrets[0].endpoint, "http://10.1.1.1:9222");

	fx_req(&fx, &q, PR_OP_SUP_LIST_CDP);
	r = FX_CALL(&fx, &q, CM_OK);
	cr_assert_eq(r->n_instances, 2);
	cr_assert_eq(r->n_instance_secrets, 2);
	for (size_t i = 0; i < 2; i++)
		cr_assert_str_eq(r->instance_secrets[i].endpoint,
		    strcmp(r->instances[i].browser_instance_id, b) == 0
		        ? "ws://10.1.1.2:9222/devtools/x"
		        : "http://10.1.1.1:9222");
}

/*
 * n fake instances "pi-<i>" (every third on host-b, the rest on host-a)
 * and a Space "ps-<i>" on each, every tenth closed, made behind the
 * engine's back (no quota, no events): created_at runs against the ids,
 * so a listing that pages by creation time shows.
 */
static void
many_spaces(int n)
{
	char sql[2048];

	snprintf(sql, sizeof(sql),
	    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n"
	    " WHERE i < %d)"
	    " INSERT INTO browser_instances (id, name, driver, profile_mode,"
	    " bundle_id, status, host, created_at, updated_at)"
	    " SELECT printf('pi-%%05d', i), printf('page-inst-%%05d', i),"
	    " 'fake', 'ephemeral', '%s', 'ready',"
	    " CASE WHEN i %% 3 = 0 THEN 'host-b' ELSE 'host-a' END, 0, 0"
	    " FROM n;"
	    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n"
	    " WHERE i < %d)"
	    " INSERT INTO browser_spaces (id, workspace_id,"
	    " browser_instance_id, owner_type, owner_id, status, created_at,"
	    " updated_at, closed_at)"
	    " SELECT printf('ps-%%05d', i), '%s', printf('pi-%%05d', i),"
	    " 'operator', '%s',"
	    " CASE WHEN i %% 10 = 0 THEN 'closed' ELSE 'idle' END,"
	    " %d - i, %d - i, CASE WHEN i %% 10 = 0 THEN 1 END FROM n;",
	    n, fx.bundle, n, fx.ws, fx.mgr, n, n);
	cr_assert_eq(fx_raw_exec(&fx, sql), SQLITE_OK);
}

/*
 * Walks every page of sup.list_active on host (NULL: every host), as the
 * supervisor and the api do, checking each page; returns the Spaces
 * listed and counts the pages.
 */
static size_t
walk_active(const char *host, size_t *pages)
{
	char last[CM_ID_MAX + 1] = "";
	size_t total = 0;
	struct pr_rep *r;

	*pages = 0;
	do {
		struct pr_req q;

		fx_req(&fx, &q, PR_OP_SUP_LIST_ACTIVE);
		q.host = host;
		q.after_id = last[0] != '\0' ? last : NULL;
		r = FX_CALL(&fx, &q, CM_OK);
		cr_assert_leq(r->n_spaces, CM_ACTIVE_PAGE_MAX);
		for (size_t i = 0; i < r->n_spaces; i++) {
			const struct pr_space *p = &r->spaces[i];

			cr_assert_gt(strcmp(p->space_id, last), 0,
			    "%s after %s: not in id order", p->space_id, last);
			cr_assert_str_neq(p->status, "closed");
			snprintf(last, sizeof(last), "%s", p->space_id);
		}
		total += r->n_spaces;
		(*pages)++;
	} while (r->n_spaces == CM_ACTIVE_PAGE_MAX);
	return total;
}

Test(actor, list_active_pages_past_any_cap)
{
	/* 2,000 Spaces, 1,800 open: far past the old LIMIT 1024. */
	const int n = 2000;
	size_t pages, open_b = 0;

	many_spaces(n);
	cr_assert_eq(walk_active(NULL, &pages), (size_t)(n - n / 10) + 1,
	    "every open Space, sp included, once");
	cr_assert_eq(pages, (size_t)(n - n / 10 + 1) / CM_ACTIVE_PAGE_MAX + 1);
	for (int i = 3; i <= n; i += 3)
		open_b += i % 10 != 0;
	cr_assert_eq(walk_active("host-b", &pages), open_b);
	cr_assert_eq(pages, open_b / CM_ACTIVE_PAGE_MAX + 1);
}

Test(actor, list_active_after_id_is_exclusive)
{
	struct pr_req q;
	struct pr_rep *r;

	many_spaces(2 * CM_ACTIVE_PAGE_MAX);
	fx_req(&fx, &q, PR_OP_SUP_LIST_ACTIVE);
	q.after_id = "ps-00002";
	r = FX_CALL(&fx, &q, CM_OK);
	cr_assert_str_eq(r->spaces[0].space_id, "ps-00003");
	q.after_id = "ps-00009"; /* ps-00010 is closed */
	r = FX_CALL(&fx, &q, CM_OK);
	cr_assert_str_eq(r->spaces[0].space_id, "ps-00011");
	q.after_id = "ps-99999";
	cr_assert_eq(FX_CALL(&fx, &q, CM_OK)->n_spaces, 0, "past the last id");
	q.after_id = "";
	cr_assert_eq(FX_CALL(&fx, &q, CM_OK)->n_spaces, CM_ACTIVE_PAGE_MAX,
	    "a full first page");
}
