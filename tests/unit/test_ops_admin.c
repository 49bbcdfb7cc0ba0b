/*
 * test_ops_admin.c: authentication and provisioning operations, and the
 * rule that an instance's secrets leave the store only through actor.load.
 */
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

TestSuite(admin, .init = setup, .fini = teardown);

static struct pr_rep *
issue(const char *principal, const char *hash, int64_t expires_at,
    enum cm_err want)
{
	struct pr_req q;

	fx_req(&fx, &q, PR_OP_TOKEN_ISSUE);
	q.principal_id = principal;
	q.token_hash = hash;
	q.label = "ci";
	q.expires_at = expires_at;
	return FX_CALL(&fx, &q, want);
}

static struct pr_rep *
resolve(const char *hash, enum cm_err want)
{
	struct pr_req q;

	fx_req(&fx, &q, PR_OP_AUTH_RESOLVE);
	q.token_hash = hash;
	return FX_CALL(&fx, &q, want);
}

/* ---- auth.resolve -------------------------------------------------------- */

Test(admin, resolve_valid_token_gives_principal_and_memberships)
{
	const char *h = fx_hash(&fx, 1);
	struct pr_rep *t, *r;

	fx_provision(&fx, 0);
	t = issue(fx.mgr, h, 0, CM_OK);
	cr_assert(t->created);
	cr_assert_eq(t->n_tokens, 1);
	cr_assert_str_eq(t->tokens[0].principal_id, fx.mgr);
	cr_assert_str_eq(t->tokens[0].label, "ci");
	cr_assert(!fx_rep_has(t, h), "token.issue echoes the token hash");

	r = resolve(h, CM_OK);
	cr_assert_eq(r->n_tokens, 1);
	cr_assert_str_eq(r->tokens[0].token_id, t->tokens[0].token_id);
	cr_assert_eq(r->n_principals, 1);
	cr_assert_str_eq(r->principals[0].principal_id, fx.mgr);
	cr_assert_str_eq(r->principals[0].kind, "operator");
	cr_assert_str_eq(r->principals[0].name, "alice");
	cr_assert_eq(r->n_memberships, 1);
	cr_assert_str_eq(r->memberships[0].workspace_id, fx.ws);
	cr_assert_str_eq(r->memberships[0].role, "manager");
}

Test(admin, resolve_unknown_revoked_and_expired_tokens_fail)
{
	const char *live = fx_hash(&fx, 1), *revoked = fx_hash(&fx, 2);
	const char *expiring = fx_hash(&fx, 3);
	struct pr_rep *t;
	struct pr_req q;

	fx_provision(&fx, 0);
	resolve(fx_hash(&fx, 99), CM_E_UNAUTHENTICATED);

	issue(fx.member, live, 0, CM_OK);
	t = issue(fx.member, revoked, 0, CM_OK);
	resolve(revoked, CM_OK);
	fx_req(&fx, &q, PR_OP_TOKEN_REVOKE);
	q.token_id = t->tokens[0].token_id;
	cr_assert_eq(FX_CALL(&fx, &q, CM_OK)->tokens[0].revoked_at, fx.now);
	resolve(revoked, CM_E_UNAUTHENTICATED);
	resolve(live, CM_OK);

	/* Expiry is a strict bound: valid until expires_at, not at it. */
	issue(fx.member, expiring, fx.now + 1000, CM_OK);
	fx_advance(&fx, 999);
	resolve(expiring, CM_OK);
	fx_advance(&fx, 1);
	resolve(expiring, CM_E_UNAUTHENTICATED);
	resolve(live, CM_OK);

	/* Revoking an unknown token is not_found. */
	fx_req(&fx, &q, PR_OP_TOKEN_REVOKE);
	q.token_id = "no-such-token";
	FX_CALL(&fx, &q, CM_E_NOT_FOUND);
}

Test(admin, token_issue_checks_hash_principal_and_uniqueness)
{
	fx_provision(&fx, 0);
	issue(fx.mgr, "ABCDEF", 0, CM_E_INVALID_REQUEST);
	issue(fx.mgr,
	    "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF",
	    0, CM_E_INVALID_REQUEST);
	issue("no-such-principal", fx_hash(&fx, 5), 0, CM_E_NOT_FOUND);
	issue(fx.mgr, fx_hash(&fx, 5), 0, CM_OK);
	issue(fx.member, fx_hash(&fx, 5), 0, CM_E_CONFLICT);
	cr_assert_eq(fx_sql_int(&fx, "SELECT count(*) FROM api_tokens",
	                 (const char *)NULL),
	    1);
}

/* ---- workspaces, principals, memberships
 * ------------------------------------- */

Test(admin, workspace_create_list_and_conflict)
{
	struct pr_req q;
	struct pr_rep *r;

	fx_workspace(&fx, "beta");
	fx_workspace(&fx, "alpha");
	fx_req(&fx, &q, PR_OP_WORKSPACE_CREATE);
	q.name = "alpha";
	FX_CALL(&fx, &q, CM_E_CONFLICT);
	fx_req(&fx, &q, PR_OP_WORKSPACE_CREATE);
	q.name = "";
	FX_CALL(&fx, &q, CM_E_INVALID_REQUEST);

	fx_req(&fx, &q, PR_OP_WORKSPACE_LIST);
	r = FX_CALL(&fx, &q, CM_OK);
	cr_assert_eq(r->n_workspaces, 2);
	cr_assert_str_eq(r->workspaces[0].name, "alpha");
	cr_assert_str_eq(r->workspaces[1].name, "beta");
	cr_assert_eq(r->workspaces[0].created_at, FX_T0);
}

Test(admin, principal_kinds_and_list)
{
	struct pr_req q;
	struct pr_rep *r;

	fx_req(&fx, &q, PR_OP_PRINCIPAL_CREATE);
	q.kind = "operator";
	q.name = "root";
	q.is_admin = true;
	r = FX_CALL(&fx, &q, CM_OK);
	cr_assert(r->principals[0].is_admin);
	cr_assert_not(r->principals[0].disabled);
	fx_principal(&fx, "runtime_agent", "bot");

	fx_req(&fx, &q, PR_OP_PRINCIPAL_CREATE);
	q.kind = "robot";
	q.name = "r2";
	FX_CALL(&fx, &q, CM_E_INVALID_REQUEST);
	fx_req(&fx, &q, PR_OP_PRINCIPAL_CREATE);
	q.kind = "operator";
	q.name = "";
	FX_CALL(&fx, &q, CM_E_INVALID_REQUEST);

	fx_req(&fx, &q, PR_OP_PRINCIPAL_LIST);
	r = FX_CALL(&fx, &q, CM_OK);
	cr_assert_eq(r->n_principals, 2);
	cr_assert_str_eq(r->principals[1].kind, "runtime_agent");
	cr_assert_not(r->principals[1].is_admin);
}

Test(admin, member_put_remove_roles_and_not_found)
{
	struct pr_req q;
	struct pr_rep *r;

	fx_provision(&fx, 0);
	fx_req(&fx, &q, PR_OP_MEMBER_PUT);
	q.workspace_id = fx.ws;
	q.principal_id = fx.member;
	q.role = "owner";
	FX_CALL(&fx, &q, CM_E_INVALID_REQUEST);
	fx_req(&fx, &q, PR_OP_MEMBER_PUT);
	q.workspace_id = "no-such-ws";
	q.principal_id = fx.member;
	q.role = "member";
	FX_CALL(&fx, &q, CM_E_NOT_FOUND);
	fx_req(&fx, &q, PR_OP_MEMBER_PUT);
	q.workspace_id = fx.ws;
	q.principal_id = "no-such-principal";
	q.role = "member";
	FX_CALL(&fx, &q, CM_E_NOT_FOUND);

	/* Putting again changes the role; there is still one row. */
	fx_req(&fx, &q, PR_OP_MEMBER_PUT);
	q.workspace_id = fx.ws;
	q.principal_id = fx.member;
	q.role = "manager";
	r = FX_CALL(&fx, &q, CM_OK);
	cr_assert_eq(r->n_memberships, 1);
	cr_assert_str_eq(r->memberships[0].role, "manager");
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT count(*) FROM memberships WHERE"
	                 " workspace_id = ?1 AND principal_id = ?2",
	                 fx.ws, fx.member, (const char *)NULL),
	    1);

	fx_req(&fx, &q, PR_OP_MEMBER_REMOVE);
	q.workspace_id = fx.ws;
	q.principal_id = fx.member;
	FX_CALL(&fx, &q, CM_OK);
	fx_req(&fx, &q, PR_OP_MEMBER_REMOVE);
	q.workspace_id = fx.ws;
	q.principal_id = fx.member;
	FX_CALL(&fx, &q, CM_E_NOT_FOUND);
}

/* ---- bundles ---------------------------------------------------------------
 */

Test(admin, bundle_create_validates_and_conflicts)
{
	struct pr_req q;
	struct pr_rep *r;

	fx_bundle(&fx, FX_MANIFEST);
	fx_req(&fx, &q, PR_OP_BUNDLE_CREATE);
	q.manifest = FX_MANIFEST;
	FX_CALL(&fx, &q, CM_E_CONFLICT);
	fx_req(&fx, &q, PR_OP_BUNDLE_CREATE);
	q.manifest = "{\"name\": \"x\"";
	FX_CALL(&fx, &q, CM_E_INVALID_REQUEST);
	/* A schema that is not closed (additionalProperties must be false). */
	fx_req(&fx, &q, PR_OP_BUNDLE_CREATE);
	q.manifest = "{\"name\":\"open\",\"version\":\"1\",\"capabilities\":["
	             "{\"name\":\"noop\",\"network\":false,\"args\":"
	             "{\"type\":\"object\",\"additionalProperties\":true}}]}";
	FX_CALL(&fx, &q, CM_E_INVALID_REQUEST);
	fx_bundle(&fx, FX_MANIFEST_NAMED("fx-other"));

	fx_req(&fx, &q, PR_OP_BUNDLE_LIST);
	r = FX_CALL(&fx, &q, CM_OK);
	cr_assert_eq(r->n_bundles, 2);
	cr_assert_str_eq(r->bundles[0].name, "fx-bundle");
	cr_assert_str_eq(r->bundles[0].version, "1");
	cr_assert_str_eq(r->bundles[0].manifest, FX_MANIFEST);
	cr_assert_str_eq(r->bundles[1].name, "fx-other");
}

/* ---- instances and bindings
 * --------------------------------------------------- */

/* instance.register; profile_mode and profile come from *extra, when
 * given. */
static struct pr_rep *
register_as(const char *name, const char *driver, const char *bundle,
    const char *endpoint, const char *config, const struct pr_req *extra,
    enum cm_err want)
{
	struct pr_req q;

	fx_req(&fx, &q, PR_OP_INSTANCE_REGISTER);
	q.name = name;
	q.driver = driver;
	q.bundle_id = bundle;
	q.endpoint = endpoint;
	q.config = config;
	if (extra != NULL) {
		q.profile_mode = extra->profile_mode;
		q.profile = extra->profile;
	}
	return FX_CALL(&fx, &q, want);
}

static struct pr_rep *
register_inst(const char *name, const char *driver, const char *bundle,
    const char *endpoint, const char *config, enum cm_err want)
{
	return register_as(name, driver, bundle, endpoint, config, NULL, want);
}

Test(admin, instance_register_validates)
{
	struct pr_rep *r;

	fx_provision(&fx, 0);
	register_inst(
	    "i1", "selenium", fx.bundle, NULL, NULL, CM_E_INVALID_REQUEST);
	register_inst("i1", "cdp", fx.bundle, NULL, NULL, CM_E_INVALID_REQUEST);
	/* Not a form the cdp driver knows; the error names no endpoint. */
	r = register_inst("i1", "cdp", fx.bundle, "ftp://secret-5d1.invalid:21",
	    NULL, CM_E_INVALID_REQUEST);
	cr_assert_null(strstr(r->msg, "secret-5d1"), "%s", r->msg);
	register_inst("i1", "cdp", fx.bundle, "secret-5d1.invalid:9222", NULL,
	    CM_E_INVALID_REQUEST);
	register_inst(
	    "i1", "fake", fx.bundle, NULL, "[1, 2]", CM_E_INVALID_REQUEST);
	register_inst(
	    "i1", "fake", fx.bundle, NULL, "{not json", CM_E_INVALID_REQUEST);
	register_inst(
	    "i1", "fake", "no-such-bundle", NULL, NULL, CM_E_NOT_FOUND);
	cr_assert_eq(fx_sql_int(&fx, "SELECT count(*) FROM browser_instances",
	                 (const char *)NULL),
	    0, "a rejected register left a row");

	r = register_inst(
	    "i1", "cdp", fx.bundle, "http://10.0.0.5:9222", NULL, CM_OK);
	cr_assert(r->created);
	cr_assert_str_eq(r->instances[0].driver, "cdp");
	cr_assert_str_eq(r->instances[0].status, "ready");
	cr_assert_str_eq(r->instances[0].host, "host-a");
	cr_assert_str_eq(r->instances[0].profile_mode, "ephemeral");
	cr_assert_not(r->instances[0].in_use);
	register_inst("i1", "managed", fx.bundle, NULL, NULL, CM_E_CONFLICT);
	r = register_inst("i2", "managed", fx.bundle, NULL, NULL, CM_OK);
	cr_assert_str_eq(r->instances[0].driver, "managed");
}

static struct pr_rep *
register_profile(
    const char *name, const char *mode, const char *profile, enum cm_err want)
{
	struct pr_req extra = {.profile_mode = mode, .profile = profile};

	return register_as(
	    name, "managed", fx.bundle, NULL, NULL, &extra, want);
}

/* profile_mode says what the instance's profile is; a path is absolute
 * and a persistent instance's only, and no refusal quotes it. */
Test(admin, instance_register_profile_modes)
{
	struct pr_rep *r;

	fx_provision(&fx, 0);
	r = register_profile(
	    "i1", NULL, "secret-9e2/profile", CM_E_INVALID_REQUEST);
	cr_assert_null(strstr(r->msg, "secret-9e2"), "%s", r->msg);
	r = register_profile(
	    "i1", "persistent", "secret-9e2/profile", CM_E_INVALID_REQUEST);
	cr_assert_not_null(strstr(r->msg, "absolute"), "%s", r->msg);
	r = register_profile(
	    "i1", "ephemeral", "/srv/secret-9e2", CM_E_INVALID_REQUEST);
	cr_assert_null(strstr(r->msg, "secret-9e2"), "%s", r->msg);
	register_profile("i1", "kept", NULL, CM_E_INVALID_REQUEST);
	cr_assert_eq(fx_sql_int(&fx, "SELECT count(*) FROM browser_instances",
	                 (const char *)NULL),
	    0, "a rejected register left a row");

	r = register_profile("i1", NULL, NULL, CM_OK);
	cr_assert_str_eq(r->instances[0].profile_mode, "ephemeral");
	r = register_profile("i2", "persistent", NULL, CM_OK);
	cr_assert_str_eq(r->instances[0].profile_mode, "persistent");
	r = register_profile("i3", "persistent", "/srv/secret-9e2", CM_OK);
	cr_assert_str_eq(r->instances[0].profile_mode, "persistent");
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT count(*) FROM browser_instances"
	                 " WHERE profile = ?1",
	                 "/srv/secret-9e2", (const char *)NULL),
	    1);
}

Test(admin, instance_set_status)
{
	struct pr_req q;
	struct pr_rep *r;

	fx_provision(&fx, 1);
	fx_advance(&fx, 5000);
	fx_req(&fx, &q, PR_OP_INSTANCE_SET_STATUS);
	q.browser_instance_id = fx.inst[0];
	q.status = "disabled";
	r = FX_CALL(&fx, &q, CM_OK);
	cr_assert_str_eq(r->instances[0].status, "disabled");
	cr_assert_eq(r->instances[0].updated_at, fx.now);
	cr_assert_eq(r->instances[0].created_at, FX_T0);
	fx_req(&fx, &q, PR_OP_INSTANCE_SET_STATUS);
	q.browser_instance_id = fx.inst[0];
	q.status = "broken";
	FX_CALL(&fx, &q, CM_E_INVALID_REQUEST);
	fx_req(&fx, &q, PR_OP_INSTANCE_SET_STATUS);
	q.browser_instance_id = "no-such-instance";
	q.status = "ready";
	FX_CALL(&fx, &q, CM_E_NOT_FOUND);
	/* The probe's write, from the status it read: a disable since then
	 * stands. */
	fx_req(&fx, &q, PR_OP_INSTANCE_SET_STATUS);
	q.browser_instance_id = fx.inst[0];
	q.status = "unavailable";
	q.if_status = "ready";
	FX_CALL(&fx, &q, CM_E_CONFLICT);
	fx_req(&fx, &q, PR_OP_INSTANCE_SET_STATUS);
	q.browser_instance_id = "no-such-instance";
	q.status = "unavailable";
	q.if_status = "ready";
	FX_CALL(&fx, &q, CM_E_NOT_FOUND);
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT count(*) FROM browser_instances"
	                 " WHERE id = ?1 AND status = 'disabled'",
	                 fx.inst[0], (const char *)NULL),
	    1);
}

Test(admin, binding_create_delete_conflicts_and_not_found)
{
	struct pr_req q;
	const char *inst, *b, *sp;

	fx_provision(&fx, 1);
	inst = fx_instance(&fx, "spare", fx.bundle, NULL);

	fx_req(&fx, &q, PR_OP_BINDING_CREATE);
	q.workspace_id = "no-such-ws";
	q.browser_instance_id = inst;
	FX_CALL(&fx, &q, CM_E_NOT_FOUND);
	fx_req(&fx, &q, PR_OP_BINDING_CREATE);
	q.workspace_id = fx.ws;
	q.browser_instance_id = "no-such-instance";
	FX_CALL(&fx, &q, CM_E_NOT_FOUND);
	fx_req(&fx, &q, PR_OP_BINDING_CREATE);
	q.workspace_id = fx.ws;
	q.browser_instance_id = fx.inst[0];
	FX_CALL(&fx, &q, CM_E_CONFLICT);

	/* One instance may be bound to two workspaces. */
	b = fx_binding(&fx, fx.ws2, fx.inst[0]);

	/* An open Space keeps its binding. */
	sp = fx_space(&fx, 0);
	fx_req(&fx, &q, PR_OP_BINDING_DELETE);
	q.binding_id = fx.binding[0];
	FX_CALL(&fx, &q, CM_E_CONFLICT);
	/* ... but not the other workspace's binding to the same instance. */
	fx_req(&fx, &q, PR_OP_BINDING_DELETE);
	q.binding_id = b;
	FX_CALL(&fx, &q, CM_OK);
	fx_mark_closed(&fx, sp);
	fx_req(&fx, &q, PR_OP_BINDING_DELETE);
	q.binding_id = fx.binding[0];
	FX_CALL(&fx, &q, CM_OK);
	fx_req(&fx, &q, PR_OP_BINDING_DELETE);
	q.binding_id = fx.binding[0];
	FX_CALL(&fx, &q, CM_E_NOT_FOUND);

	/* Unbound now: the instance is foreign to the workspace. */
	fx_create_req(&fx, &q, 0);
	FX_CALL(&fx, &q, CM_E_NOT_FOUND);
}

static struct pr_rep *
instance_list(const char *ws)
{
	struct pr_req q;

	fx_req(&fx, &q, PR_OP_INSTANCE_LIST);
	q.workspace_id = ws;
	return FX_CALL(&fx, &q, CM_OK);
}

static const struct pr_instance *
find_instance(const struct pr_rep *r, const char *id)
{
	for (size_t i = 0; i < r->n_instances; i++)
		if (strcmp(r->instances[i].browser_instance_id, id) == 0)
			return &r->instances[i];
	return NULL;
}

Test(admin, instance_list_shows_bound_instances_with_in_use)
{
	const struct pr_instance *a, *b;
	struct pr_rep *r;
	const char *unbound, *sp;

	fx_provision(&fx, 2);
	unbound = fx_instance(&fx, "unbound", fx.bundle, NULL);

	r = instance_list(fx.ws);
	cr_assert_eq(r->n_instances, 2);
	cr_assert_null(
	    find_instance(r, unbound), "a foreign instance is listed");
	cr_assert_not(find_instance(r, fx.inst[0])->in_use);
	cr_assert_eq(instance_list(fx.ws2)->n_instances, 0);
	/* Without a workspace: every instance (the admin view). */
	cr_assert_eq(instance_list(NULL)->n_instances, 3);

	sp = fx_space(&fx, 0);
	r = instance_list(fx.ws);
	a = find_instance(r, fx.inst[0]);
	b = find_instance(r, fx.inst[1]);
	cr_assert_not_null(a);
	cr_assert_not_null(b);
	cr_assert(a->in_use, "a reserved instance shows in_use false");
	cr_assert_not(b->in_use);

	/* Closing requested: still reserved until the actor has torn down. */
	fx_close(&fx, sp);
	cr_assert(find_instance(instance_list(fx.ws), fx.inst[0])->in_use);
	fx_mark_closed(&fx, sp);
	cr_assert_not(find_instance(instance_list(fx.ws), fx.inst[0])->in_use);
}

/* ---- secrets
 * ------------------------------------------------------------------ */

/*
 * An instance's endpoint, config and profile are its secrets: they appear
 * in no reply but actor.load's.  Drive every operation that returns an
 * instance, a Space, a task or an event, then search every encoded reply.
 */
Test(admin, instance_secrets_appear_only_in_actor_load)
{
	struct pr_req q;
	struct pr_rep *r;
	const char *sp, *task;
	size_t checked;

	fx_provision(&fx, 2);
	instance_list(fx.ws);
	instance_list(NULL);
	fx_req(&fx, &q, PR_OP_INSTANCE_SET_STATUS);
	q.browser_instance_id = fx.inst[1];
	q.status = "unavailable";
	FX_CALL(&fx, &q, CM_OK);
	fx_req(&fx, &q, PR_OP_BUNDLE_LIST);
	FX_CALL(&fx, &q, CM_OK);

	sp = fx_space(&fx, 0);
	fx_space_get(&fx, fx.ws, sp);
	fx_req(&fx, &q, PR_OP_SPACE_LIST);
	q.workspace_id = fx.ws;
	FX_CALL(&fx, &q, CM_OK);
	task = fx_task(&fx, sp, "r1");
	r = fx_claim(&fx, sp, "actor-1");
	cr_assert_eq(r->n_tasks, 1);
	FX_FINISH(&fx, task, "actor-1", "completed", "{\"title\":\"ok\"}", NULL,
	    CM_OK);
	fx_task_get(&fx, sp, task);
	fx_req(&fx, &q, PR_OP_TASK_LIST);
	q.workspace_id = fx.ws;
	q.space_id = sp;
	FX_CALL(&fx, &q, CM_OK);
	fx_req(&fx, &q, PR_OP_SUP_LIST_ACTIVE);
	FX_CALL(&fx, &q, CM_OK);
	fx_close(&fx, sp);
	fx_mark_closed(&fx, sp);
	FX_LOG(&fx, sp, "space_opened", "queued", "started", "completed",
	    "space_closed");

	/* The one reader of the secrets does return them. */
	sp = fx_space(&fx, 0);
	fx_req(&fx, &q, PR_OP_ACTOR_LOAD);
	q.space_id = sp;
	r = FX_CALL(&fx, &q, CM_OK);
	cr_assert_eq(r->n_instance_secrets, 1);
	cr_assert_str_eq(r->instance_secrets[0].endpoint, FX_SECRET_ENDPOINT);
	cr_assert_str_eq(r->instance_secrets[0].config, FX_SECRET_CONFIG);
	cr_assert_str_eq(r->instance_secrets[0].profile, FX_SECRET_PROFILE);
	/* So the search below would find them if they leaked. */
	cr_assert(fx_rep_has(r, FX_CANARY_ENDPOINT));
	cr_assert(fx_rep_has(r, FX_CANARY_CONFIG));
	cr_assert(fx_rep_has(r, FX_CANARY_PROFILE));

	checked = fx_assert_no_secrets(&fx);
	cr_assert_gt(checked, 20, "only %zu replies checked", checked);

	/* Nor any row but the instance's own secret columns. */
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT count(*) FROM browser_space_events"
	                 " WHERE instr(payload, ?1) OR instr(payload, ?2)"
	                 " OR instr(payload, ?3)",
	                 FX_CANARY_ENDPOINT, FX_CANARY_CONFIG,
	                 FX_CANARY_PROFILE, (const char *)NULL),
	    0);
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT count(*) FROM store_ops WHERE"
	                 " instr(reply, lower(hex(?1)))"
	                 " OR instr(reply, lower(hex(?2)))"
	                 " OR instr(reply, lower(hex(?3)))",
	                 FX_CANARY_ENDPOINT, FX_CANARY_CONFIG,
	                 FX_CANARY_PROFILE, (const char *)NULL),
	    0, "a remembered reply holds a secret");
}
