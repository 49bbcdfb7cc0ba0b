/*
 * Provisioning under /api/v1/admin over real HTTP, the real service
 * behind it, signed in with the token the bootstrap wrote.  Nothing here
 * talks to the store directly: every row is made through the api.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_fixture.h"
#include "clock.h"

TestSuite(admin, .timeout = 240);

Test(admin, provisioning_flow, .fini = tk_cleanup)
{
	struct af_env e;
	char ws[CM_ID_MAX + 1], mgr[CM_ID_MAX + 1], agent[CM_ID_MAX + 1];
	char tok_id[CM_ID_MAX + 1], tok[CM_TOKEN_MAX + 1];
	char bundle[CM_ID_MAX + 1], inst[CM_ID_MAX + 1], inst2[CM_ID_MAX + 1];
	char binding[CM_ID_MAX + 1], binding2[CM_ID_MAX + 1];
	char path[512], body[512], *text = NULL, *btext;
	json_t *res;
	int status;

	af_start(&e, "admin-flow");

	/* Workspace and principals. */
	af_create(&e, "/api/v1/admin/workspaces", "{\"name\": \"team-a\"}",
	    "workspace_id", ws);
	cr_assert_eq(af_call(&e, "POST", "/api/v1/admin/workspaces", e.admin,
	                 "{\"name\": \"team-a\"}", &res),
	    409);
	cr_assert_str_eq(af_error_code(res), "conflict");
	json_decref(res);
	cr_assert_eq(
	    af_call(&e, "GET", "/api/v1/admin/workspaces", e.admin, NULL, &res),
	    200);
	cr_assert_geq(af_find(af_data(res), "workspace_id", ws), 0);
	json_decref(res);

	af_principal(&e, "operator", "manager-a", mgr);
	af_principal(&e, "runtime_agent", "agent-a", agent);
	cr_assert_eq(
	    af_call(&e, "GET", "/api/v1/admin/principals", e.admin, NULL, &res),
	    200);
	cr_assert_str_eq(
	    json_string_value(json_object_get(
	        json_array_get(af_data(res),
	            (size_t)af_find(af_data(res), "principal_id", agent)),
	        "kind")),
	    "runtime_agent");
	json_decref(res);

	/* A token: shown once, it authenticates its principal. */
	af_issue(&e, mgr, "{\"label\": \"ci\", \"expires_in_seconds\": 3600}",
	    tok_id, tok);
	snprintf(
	    path, sizeof(path), "/api/v1/workspaces/%s/browser-spaces", ws);
	cr_assert_eq(af_call(&e, "GET", path, tok, NULL, &res), 403,
	    "an authenticated non-member is forbidden, not unauthenticated");
	json_decref(res);
	af_member_put(&e, ws, mgr, "manager");
	cr_assert_eq(af_call(&e, "GET", path, tok, NULL, &res), 200);
	cr_assert(json_is_array(af_data(res)));
	json_decref(res);

	/* Membership: put, put again (the role changes), delete. */
	af_member_put(&e, ws, agent, "member");
	af_member_put(&e, ws, agent, "manager");
	snprintf(path, sizeof(path), "/api/v1/admin/workspaces/%s/members/%s",
	    ws, agent);
	cr_assert_eq(af_call(&e, "DELETE", path, e.admin, NULL, &res), 200);
	cr_assert_str_eq(af_data_str(res, "workspace_id"), ws);
	cr_assert_str_eq(af_data_str(res, "principal_id"), agent);
	json_decref(res);
	cr_assert_eq(af_call(&e, "DELETE", path, e.admin, NULL, &res), 404);
	cr_assert_str_eq(af_error_code(res), "not_found");
	json_decref(res);

	/* Bundles: fake.json may be there from the bootstrap already. */
	btext = af_bundle_body(NULL, NULL);
	status = af_call(
	    &e, "POST", "/api/v1/admin/runtime-bundles", e.admin, btext, NULL);
	cr_assert(status == 201 || status == 409, "fake bundle: %d", status);
	free(btext);
	btext = af_bundle_body("fake-admin", "7");
	cr_assert_eq(af_call(&e, "POST", "/api/v1/admin/runtime-bundles",
	                 e.admin, btext, &res),
	    201);
	snprintf(bundle, sizeof(bundle), "%s", af_data_str(res, "bundle_id"));
	cr_assert_str_eq(af_data_str(res, "name"), "fake-admin");
	cr_assert_str_eq(af_data_str(res, "version"), "7");
	cr_assert(json_is_array(json_object_get(
	    json_object_get(af_data(res), "manifest"), "capabilities")));
	json_decref(res);
	cr_assert_eq(af_call(&e, "POST", "/api/v1/admin/runtime-bundles",
	                 e.admin, btext, &res),
	    409);
	cr_assert_str_eq(af_error_code(res), "conflict");
	json_decref(res);
	free(btext);
	cr_assert_eq(af_call(&e, "GET", "/api/v1/admin/runtime-bundles",
	                 e.admin, NULL, &res),
	    200);
	cr_assert_geq(af_find(af_data(res), "bundle_id", bundle), 0);
	cr_assert_geq(af_find(af_data(res), "name", "fake"), 0);
	json_decref(res);

	/* Instances: their secrets never come back. */
	af_instance(&e, "inst-a", bundle, inst);
	af_instance(&e, "inst-b", bundle, inst2);
	cr_assert_eq(af_call_text(&e, "GET", "/api/v1/admin/browser-instances",
	                 e.admin, NULL, &text),
	    200);
	cr_assert_null(strstr(text, "CANARY"), "list echoed: %s", text);
	res = json_loads(text, 0, NULL);
	cr_assert_geq(af_find(af_data(res), "browser_instance_id", inst), 0);
	cr_assert_geq(af_find(af_data(res), "browser_instance_id", inst2), 0);
	json_decref(res);
	free(text);

	snprintf(path, sizeof(path),
	    "/api/v1/admin/browser-instances/%s/disable", inst);
	cr_assert_eq(af_call(&e, "POST", path, e.admin, NULL, &res), 200);
	cr_assert_str_eq(af_data_str(res, "browser_instance_id"), inst);
	cr_assert_str_eq(af_data_str(res, "status"), "disabled");
	json_decref(res);
	snprintf(path, sizeof(path),
	    "/api/v1/admin/browser-instances/%s/enable", inst);
	cr_assert_eq(af_call_text(&e, "POST", path, e.admin, "{}", &text), 200);
	cr_assert_null(strstr(text, "CANARY"));
	res = json_loads(text, 0, NULL);
	cr_assert_str_eq(af_data_str(res, "status"), "ready");
	json_decref(res);
	free(text);

	/* Bindings, and a Space through the new workspace's manager. */
	snprintf(body, sizeof(body),
	    "{\"workspace_id\": \"%s\", \"browser_instance_id\": \"%s\"}", ws,
	    inst);
	af_create(&e, "/api/v1/admin/bindings", body, "binding_id", binding);
	cr_assert_eq(
	    af_call(&e, "POST", "/api/v1/admin/bindings", e.admin, body, &res),
	    409);
	json_decref(res);
	snprintf(
	    path, sizeof(path), "/api/v1/workspaces/%s/browser-instances", ws);
	cr_assert_eq(af_call_text(&e, "GET", path, tok, NULL, &text), 200);
	cr_assert_null(strstr(text, "CANARY"));
	res = json_loads(text, 0, NULL);
	cr_assert_eq(json_array_size(af_data(res)), 1);
	cr_assert_eq(af_find(af_data(res), "browser_instance_id", inst), 0);
	json_decref(res);
	free(text);

	snprintf(
	    path, sizeof(path), "/api/v1/workspaces/%s/browser-spaces", ws);
	snprintf(body, sizeof(body),
	    "{\"browser_instance_id\": \"%s\", \"owner_type\": \"operator\","
	    " \"owner_id\": \"%s\", \"granted_capabilities\": [\"noop\"]}",
	    inst, mgr);
	cr_assert_eq(af_call(&e, "POST", path, tok, body, &res), 201);
	cr_assert_str_eq(af_data_str(res, "workspace_id"), ws);
	cr_assert_str_eq(af_data_str(res, "owner_id"), mgr);
	cr_assert_str_eq(af_data_str(res, "binding_id"), binding);
	json_decref(res);

	/* An open Space keeps its binding; an unused one can go. */
	snprintf(path, sizeof(path), "/api/v1/admin/bindings/%s", binding);
	cr_assert_eq(af_call(&e, "DELETE", path, e.admin, NULL, &res), 409);
	cr_assert_str_eq(af_error_code(res), "conflict");
	json_decref(res);
	snprintf(body, sizeof(body),
	    "{\"workspace_id\": \"%s\", \"browser_instance_id\": \"%s\"}", ws,
	    inst2);
	af_create(&e, "/api/v1/admin/bindings", body, "binding_id", binding2);
	snprintf(path, sizeof(path), "/api/v1/admin/bindings/%s", binding2);
	cr_assert_eq(af_call(&e, "DELETE", path, e.admin, NULL, &res), 200);
	cr_assert_str_eq(af_data_str(res, "binding_id"), binding2);
	cr_assert(json_is_true(json_object_get(af_data(res), "deleted")));
	json_decref(res);
	cr_assert_eq(af_call(&e, "DELETE", path, e.admin, NULL, &res), 404);
	json_decref(res);

	/* Revoking the token: it stops working at once. */
	snprintf(path, sizeof(path), "/api/v1/admin/tokens/%s", tok_id);
	cr_assert_eq(af_call(&e, "DELETE", path, e.admin, NULL, &res), 200);
	cr_assert_str_eq(af_data_str(res, "token_id"), tok_id);
	cr_assert(json_is_string(json_object_get(af_data(res), "revoked_at")));
	cr_assert_null(json_object_get(af_data(res), "token"));
	json_decref(res);
	snprintf(
	    path, sizeof(path), "/api/v1/workspaces/%s/browser-spaces", ws);
	cr_assert_eq(af_call(&e, "GET", path, tok, NULL, &res), 401);
	cr_assert_str_eq(af_error_code(res), "unauthenticated");
	json_decref(res);

	/* Neither the token nor an instance secret reached any log. */
	text = tk_read_file(e.log, NULL);
	cr_assert_not_null(text);
	cr_assert_null(strstr(text, tok), "the token is in the log");
	cr_assert_null(strstr(text, "CANARY"), "a secret is in the log");
	free(text);
	af_stop(&e);
}

struct expiry {
	struct af_env *e;
	const char *token;
};

static bool
token_rejected(void *arg)
{
	struct expiry *x = arg;

	return tk_http(&x->e->p, "GET", "/api/v1/admin/workspaces", x->token,
	           NULL, NULL, NULL) == 401;
}

Test(admin, token_expiry, .fini = tk_cleanup)
{
	struct af_env e;
	char id[CM_ID_MAX + 1], tok_id[CM_ID_MAX + 1], tok[CM_TOKEN_MAX + 1];
	struct expiry x = {&e, tok};
	char path[256];
	json_t *res;

	af_start(&e, "admin-expiry");
	af_create(&e, "/api/v1/admin/principals",
	    "{\"kind\": \"operator\", \"name\": \"root-2\", \"is_admin\": "
	    "true}",
	    "principal_id", id);
	/* No expiry: expires_at is null, and an admin's token is an admin. */
	af_issue(&e, id, NULL, tok_id, tok);
	cr_assert_eq(
	    af_call(&e, "GET", "/api/v1/admin/workspaces", tok, NULL, &res),
	    200);
	json_decref(res);
	snprintf(path, sizeof(path), "/api/v1/admin/principals/%s/tokens", id);
	cr_assert_eq(af_call(&e, "POST", path, e.admin, "{}", &res), 201);
	cr_assert(json_is_null(json_object_get(af_data(res), "expires_at")));
	json_decref(res);

	af_issue(&e, id, "{\"expires_in_seconds\": 1}", tok_id, tok);
	cr_assert(tk_wait_until(token_rejected, &x, 10000),
	    "a token past its expiry still authenticates");
	af_stop(&e);
}

/* Every admin route, with ids that need not exist. */
static const struct {
	const char *method, *path, *body;
} admin_routes[] = {
    {"GET", "/api/v1/admin/workspaces", NULL},
    {"POST", "/api/v1/admin/workspaces", "{\"name\": \"x\"}"},
    {"PUT", "/api/v1/admin/workspaces/w1/members/p1", "{\"role\": \"member\"}"},
    {"DELETE", "/api/v1/admin/workspaces/w1/members/p1", NULL},
    {"GET", "/api/v1/admin/principals", NULL},
    {"POST", "/api/v1/admin/principals",
        "{\"kind\": \"operator\", \"name\": \"x\", \"is_admin\": true}"},
    {"POST", "/api/v1/admin/principals/p1/tokens", "{}"},
    {"DELETE", "/api/v1/admin/tokens/t1", NULL},
    {"GET", "/api/v1/admin/runtime-bundles", NULL},
    {"POST", "/api/v1/admin/runtime-bundles", "{\"manifest\": {}}"},
    {"GET", "/api/v1/admin/browser-instances", NULL},
    {"POST", "/api/v1/admin/browser-instances",
        "{\"name\": \"x\", \"driver\": \"fake\", \"bundle_id\": \"b1\"}"},
    {"POST", "/api/v1/admin/browser-instances/i1/disable", NULL},
    {"POST", "/api/v1/admin/browser-instances/i1/enable", NULL},
    {"POST", "/api/v1/admin/bindings",
        "{\"workspace_id\": \"w1\", \"browser_instance_id\": \"i1\"}"},
    {"DELETE", "/api/v1/admin/bindings/b1", NULL},
    {"GET", "/api/v1/admin/status", NULL},
    /* A body that would be a 422 for an admin is still a 403. */
    {"POST", "/api/v1/admin/workspaces", "{\"bogus\": 1}"},
};

Test(admin, non_admins_are_refused, .fini = tk_cleanup)
{
	struct af_env e;
	char ws[CM_ID_MAX + 1], id[CM_ID_MAX + 1], tok_id[CM_ID_MAX + 1];
	char tok[CM_TOKEN_MAX + 1];
	json_t *res;

	af_start(&e, "admin-403");
	af_create(&e, "/api/v1/admin/workspaces", "{\"name\": \"w\"}",
	    "workspace_id", ws);
	af_principal(&e, "operator", "plain", id);
	af_member_put(&e, ws, id, "manager");
	af_issue(&e, id, NULL, tok_id, tok);

	for (size_t i = 0; i < sizeof(admin_routes) / sizeof(admin_routes[0]);
	     i++) {
		int status = af_call(&e, admin_routes[i].method,
		    admin_routes[i].path, tok, admin_routes[i].body, &res);

		cr_assert_eq(status, 403, "%s %s as a manager: %d",
		    admin_routes[i].method, admin_routes[i].path, status);
		cr_assert_str_eq(af_error_code(res), "forbidden");
		json_decref(res);
		status = af_call(&e, admin_routes[i].method,
		    admin_routes[i].path, NULL, admin_routes[i].body, &res);
		cr_assert_eq(status, 401, "%s %s without a token: %d",
		    admin_routes[i].method, admin_routes[i].path, status);
		cr_assert_str_eq(af_error_code(res), "unauthenticated");
		json_decref(res);
	}
	/* Nothing was created by the refused calls. */
	cr_assert_eq(
	    af_call(&e, "GET", "/api/v1/admin/workspaces", e.admin, NULL, &res),
	    200);
	cr_assert_lt(af_find(af_data(res), "name", "x"), 0);
	json_decref(res);
	af_stop(&e);
}

/* Bodies the api refuses before the store sees them, and store verdicts. */
static const struct {
	const char *method, *path, *body;
	int status;
	const char *code;
} bad_requests[] = {
    {"POST", "/api/v1/admin/workspaces", "{\"name\": \"a\", \"x\": 1}", 422,
        "invalid_request"},
    {"POST", "/api/v1/admin/workspaces", "{\"name\": 5}", 422,
        "invalid_request"},
    {"POST", "/api/v1/admin/workspaces", "{}", 422, "invalid_request"},
    {"POST", "/api/v1/admin/workspaces", "[1]", 422, "invalid_request"},
    {"POST", "/api/v1/admin/workspaces", "{\"name\": \"a\"", 422,
        "invalid_request"},
    {"POST", "/api/v1/admin/principals",
        "{\"kind\": \"operator\", \"name\": \"a\", \"is_admin\": \"yes\"}", 422,
        "invalid_request"},
    {"POST", "/api/v1/admin/principals",
        "{\"kind\": \"robot\", \"name\": "
        "\"a\"}",
        422, "invalid_request"},
    {"POST", "/api/v1/admin/principals/%P/tokens",
        "{\"expires_in_seconds\": 0}", 422, "invalid_request"},
    {"POST", "/api/v1/admin/principals/%P/tokens",
        "{\"expires_in_seconds\": -5}", 422, "invalid_request"},
    {"POST", "/api/v1/admin/principals/%P/tokens",
        "{\"expires_in_seconds\": 1.5}", 422, "invalid_request"},
    {"POST", "/api/v1/admin/principals/%P/tokens",
        "{\"expires_in_seconds\": \"60\"}", 422, "invalid_request"},
    {"POST", "/api/v1/admin/principals/%P/tokens",
        "{\"expires_in_seconds\": 315360001}", 422, "invalid_request"},
    {"POST", "/api/v1/admin/principals/%P/tokens", "{\"label\": 3}", 422,
        "invalid_request"},
    {"POST", "/api/v1/admin/principals/%P/tokens", "{\"token\": \"spd_x\"}",
        422, "invalid_request"},
    {"POST", "/api/v1/admin/principals/nobody/tokens", "{}", 404, "not_found"},
    {"DELETE", "/api/v1/admin/tokens/nothing", NULL, 404, "not_found"},
    {"PUT", "/api/v1/admin/workspaces/%W/members/%P", "{\"role\": \"boss\"}",
        422, "invalid_request"},
    {"PUT", "/api/v1/admin/workspaces/%W/members/%P", "{}", 422,
        "invalid_request"},
    {"PUT", "/api/v1/admin/workspaces/nowhere/members/%P",
        "{\"role\": \"member\"}", 404, "not_found"},
    {"DELETE", "/api/v1/admin/workspaces/%W/members/%P", NULL, 404,
        "not_found"},
    {"POST", "/api/v1/admin/runtime-bundles", "{\"manifest\": \"{}\"}", 422,
        "invalid_request"},
    {"POST", "/api/v1/admin/runtime-bundles", "{\"manifest\": {}}", 422,
        "invalid_request"},
    {"POST", "/api/v1/admin/runtime-bundles", "{}", 422, "invalid_request"},
    {"POST", "/api/v1/admin/browser-instances",
        "{\"name\": \"i\", \"driver\": \"fake\", \"bundle_id\": \"b\","
        " \"config\": \"{}\"}",
        422, "invalid_request"},
    {"POST", "/api/v1/admin/browser-instances",
        "{\"name\": \"i\", \"driver\": \"fake\", \"bundle_id\": \"b\","
        " \"network_policy\": [\"example.com\"]}",
        422, "invalid_request"},
    {"POST", "/api/v1/admin/browser-instances",
        "{\"name\": \"i\", \"driver\": \"quantum\", \"bundle_id\": \"b\"}", 422,
        "invalid_request"},
    {"POST", "/api/v1/admin/browser-instances",
        "{\"name\": \"i\", \"driver\": \"fake\", \"bundle_id\": \"nope\"}", 404,
        "not_found"},
    {"POST", "/api/v1/admin/browser-instances",
        "{\"name\": \"i\", \"driver\": \"fake\", \"bundle_id\": \"b\","
        " \"secret\": 1}",
        422, "invalid_request"},
    {"POST", "/api/v1/admin/browser-instances/nothing/disable", NULL, 404,
        "not_found"},
    {"POST", "/api/v1/admin/browser-instances/nothing/enable", "{\"x\": 1}",
        422, "invalid_request"},
    {"POST", "/api/v1/admin/bindings",
        "{\"workspace_id\": \"%W\", \"browser_instance_id\": \"nothing\"}", 404,
        "not_found"},
    {"POST", "/api/v1/admin/bindings", "{\"workspace_id\": \"%W\"}", 422,
        "invalid_request"},
    {"DELETE", "/api/v1/admin/bindings/nothing", NULL, 404, "not_found"},
    {"GET", "/api/v1/admin/tokens/t1", NULL, 405, "method_not_allowed"},
    {"POST", "/api/v1/admin/runtime-bundles/b1", NULL, 404, "not_found"},
    {"PATCH", "/api/v1/admin/bindings", NULL, 405, "method_not_allowed"},
};

/* Replaces %W and %P in pattern with ws and principal. */
static void
expand(char *out, size_t len, const char *pattern, const char *ws,
    const char *principal_id)
{
	size_t n = 0;

	for (const char *p = pattern; *p != '\0' && n + 1 < len; p++) {
		if (p[0] == '%' && (p[1] == 'W' || p[1] == 'P')) {
			n += (size_t)snprintf(out + n, len - n, "%s",
			    p[1] == 'W' ? ws : principal_id);
			p++;
			continue;
		}
		out[n++] = *p;
	}
	out[n < len ? n : len - 1] = '\0';
}

Test(admin, strict_bodies_and_store_verdicts, .fini = tk_cleanup)
{
	struct af_env e;
	char ws[CM_ID_MAX + 1], id[CM_ID_MAX + 1], path[256], body[512];
	json_t *res;

	af_start(&e, "admin-422");
	af_create(&e, "/api/v1/admin/workspaces", "{\"name\": \"w\"}",
	    "workspace_id", ws);
	af_principal(&e, "operator", "someone", id);

	for (size_t i = 0; i < sizeof(bad_requests) / sizeof(bad_requests[0]);
	     i++) {
		int status;

		expand(path, sizeof(path), bad_requests[i].path, ws, id);
		if (bad_requests[i].body != NULL)
			expand(
			    body, sizeof(body), bad_requests[i].body, ws, id);
		status = af_call(&e, bad_requests[i].method, path, e.admin,
		    bad_requests[i].body ? body : NULL, &res);
		cr_assert_eq(status, bad_requests[i].status, "%s %s %s: %d",
		    bad_requests[i].method, path,
		    bad_requests[i].body ? body : "", status);
		cr_assert_str_eq(af_error_code(res), bad_requests[i].code,
		    "%s %s", bad_requests[i].method, path);
		json_decref(res);
	}
	af_stop(&e);
}

static json_t *
child_of_kind(json_t *rows, const char *kind)
{
	size_t i;
	json_t *row;

	json_array_foreach(rows, i, row)
	{
		if (strcmp(json_string_value(json_object_get(row, "kind")),
		        kind) == 0)
			return row;
	}
	return NULL;
}

/* GET /api/v1/admin/status: the supervisor's children, and a bounded 503
 * while the supervisor cannot answer, with the api still serving. */
Test(admin, status_is_the_supervisors_children, .fini = tk_cleanup)
{
	static const char *const keys[] = {
	    "kind", "space_id", "pid", "state", "restarts", "uptime_ms"};
	struct af_env e;
	json_t *res, *store, *api;
	int64_t t0;

	af_start(&e, "admin-status");
	cr_assert_eq(
	    af_call(&e, "GET", "/api/v1/admin/status", e.admin, NULL, &res),
	    200);
	cr_assert(json_is_array(af_data(res)));
	store = child_of_kind(af_data(res), "store");
	api = child_of_kind(af_data(res), "api");
	cr_assert(store != NULL && api != NULL, "no store or api row");
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		cr_assert(
		    json_object_get(store, keys[k]) != NULL, "no %s", keys[k]);
	cr_assert(json_is_null(json_object_get(store, "space_id")));
	cr_assert_str_eq(
	    json_string_value(json_object_get(store, "state")), "ready");
	/* The pids are the real processes: children of the supervisor. */
	cr_assert_gt(json_integer_value(json_object_get(store, "pid")), 0);
	cr_assert_eq(
	    kill((pid_t)json_integer_value(json_object_get(api, "pid")), 0), 0);
	json_decref(res);

	/* A supervisor that does not answer costs a bounded wait, and the
	 * api keeps serving other requests meanwhile. */
	cr_assert_eq(kill(e.p.pid, SIGSTOP), 0);
	t0 = cm_mono_ms();
	cr_assert_eq(
	    af_call(&e, "GET", "/api/v1/admin/status", e.admin, NULL, &res),
	    503);
	cr_assert_str_eq(af_error_code(res), "supervisor_unavailable");
	cr_assert_lt(cm_mono_ms() - t0, 10000, "the 503 took too long");
	json_decref(res);
	cr_assert_eq(af_call(&e, "GET", "/healthz", NULL, NULL, NULL), 200);
	cr_assert_eq(kill(e.p.pid, SIGCONT), 0);
	cr_assert_eq(
	    af_call(&e, "GET", "/api/v1/admin/status", e.admin, NULL, &res),
	    200);
	json_decref(res);
	af_stop(&e);
}
