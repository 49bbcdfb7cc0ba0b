/*
 * router.c: method and path to handler.  Path segments that name ids are
 * checked for shape here; whether they exist is the store's answer.
 */
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "ids.h"
#include "log.h"

struct route {
	const char *method;
	const char *pattern; /* '*' segments are ids, captured in order */
	bool auth;
	void (*fn)(struct api_ctx *);
};

static void
route_healthz(struct api_ctx *c)
{
	api_ok(c, 200, json_pack("{s:s}", "status", "ok"));
}

static void
route_readyz(struct api_ctx *c)
{
	struct pr_req q;
	struct pr_rep r;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_PING;
	if (api_call(c, &q, &r))
		api_ok(c, 200, json_pack("{s:s}", "status", "ready"));
	pr_rep_free(&r);
}

#define WS "/api/v1/workspaces/*"
#define SP WS "/browser-spaces/*"
#define AD "/api/v1/admin"

static const struct route routes[] = {
    {"GET", "/healthz", false, route_healthz},
    {"GET", "/readyz", false, route_readyz},
    {"GET", "/metrics", false, api_metrics_get},
    {"GET", "/api/v1/openapi.json", false, api_openapi_get},
    {"GET", WS "/browser-spaces", true, api_space_list},
    {"POST", WS "/browser-spaces", true, api_space_create},
    {"GET", SP, true, api_space_get},
    {"GET", SP "/tasks", true, api_task_list},
    {"POST", SP "/tasks", true, api_task_submit},
    {"GET", SP "/tasks/*", true, api_task_get},
    {"GET", SP "/tasks/*/artifacts/*", true, api_artifact_get},
    {"POST", SP "/cancel", true, api_space_cancel},
    {"POST", SP "/close", true, api_space_close},
    {"GET", SP "/events", true, api_event_list},
    {"GET", WS "/browser-instances", true, api_instance_list},
    {"GET", AD "/workspaces", true, api_admin_workspace_list},
    {"POST", AD "/workspaces", true, api_admin_workspace_create},
    {"PUT", AD "/workspaces/*/members/*", true, api_admin_member_put},
    {"DELETE", AD "/workspaces/*/members/*", true, api_admin_member_remove},
    {"GET", AD "/principals", true, api_admin_principal_list},
    {"POST", AD "/principals", true, api_admin_principal_create},
    {"POST", AD "/principals/*/tokens", true, api_admin_token_issue},
    {"DELETE", AD "/tokens/*", true, api_admin_token_revoke},
    {"GET", AD "/runtime-bundles", true, api_admin_bundle_list},
    {"POST", AD "/runtime-bundles", true, api_admin_bundle_create},
    {"GET", AD "/browser-instances", true, api_admin_instance_list},
    {"POST", AD "/browser-instances", true, api_admin_instance_register},
    {"POST", AD "/browser-instances/*/disable", true,
        api_admin_instance_disable},
    {"POST", AD "/browser-instances/*/enable", true, api_admin_instance_enable},
    {"POST", AD "/bindings", true, api_admin_binding_create},
    {"DELETE", AD "/bindings/*", true, api_admin_binding_delete},
    {"GET", AD "/status", true, api_admin_status},
};

/* An id segment: 1..CM_ID_MAX of [A-Za-z0-9_-]. */
static bool
id_ok(const char *s, size_t n)
{
	if (n == 0 || n > CM_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		        (ch >= '0' && ch <= '9') || ch == '-' || ch == '_'))
			return false;
	}
	return true;
}

/*
 * Matches path against pattern.  Returns 1 on a match (ids copied into
 * c->params), 0 on no match, -1 when it matches but an id is malformed.
 * The fourth '*' of a path (only an artifact's route has one) is an
 * artifact's name, which may hold a '.' (cm_artifact_name_valid).
 */
static int
match(struct api_ctx *c, const char *pattern, const char *path)
{
	int n = 0, bad = 0;

	while (*pattern != '\0' && *path != '\0') {
		if (*pattern == '*') {
			size_t len = strcspn(path, "/");

			if (n == 3 ? !cm_artifact_name_valid(path, len)
			           : !id_ok(path, len))
				bad = 1;
			else if (n < 4)
				snprintf(c->params[n], sizeof(c->params[n]),
				    "%.*s", (int)len, path);
			n++;
			path += len;
			pattern++;
			continue;
		}
		if (*pattern != *path)
			return 0;
		pattern++;
		path++;
	}
	if (*pattern != '\0' || *path != '\0')
		return 0;
	return bad ? -1 : 1;
}

void
api_dispatch(struct api_ctx *c)
{
	bool path_known = false;
	size_t i;
	int m;

	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		memset(c->params, 0, sizeof(c->params));
		if ((m = match(c, routes[i].pattern, c->req->path)) == 0)
			continue;
		path_known = true;
		c->route = routes[i].pattern; /* a 405 keeps its path's */
		if (strcmp(routes[i].method, c->req->method) != 0)
			continue;
		break;
	}
	if (i == sizeof(routes) / sizeof(routes[0])) {
		if (path_known)
			api_fail(c, 0, CM_E_METHOD_NOT_ALLOWED,
			    "method not allowed");
		else
			api_fail(c, 0, CM_E_NOT_FOUND, "no such route");
		return;
	}
	if (m < 0) {
		api_fail(c, 0, CM_E_NOT_FOUND, "no such resource");
		return;
	}
	c->workspace_id = c->params[0][0] ? c->params[0] : NULL;
	c->space_id = c->params[1][0] ? c->params[1] : NULL;
	c->task_id = c->params[2][0] ? c->params[2] : NULL;
	c->artifact_name = c->params[3][0] ? c->params[3] : NULL;
	if (routes[i].auth && !api_authenticate(c))
		return;
	routes[i].fn(c);
	/* Provisioning may have changed who a token is or may do. */
	if (strncmp(c->req->path, "/api/v1/admin/", 14) == 0 &&
	    strcmp(c->req->method, "GET") != 0)
		api_auth_cache_clear();
}

bool
api_route_at(size_t i, const char **method, const char **pattern, bool *auth)
{
	if (i >= sizeof(routes) / sizeof(routes[0]))
		return false;
	*method = routes[i].method;
	*pattern = routes[i].pattern;
	*auth = routes[i].auth;
	return true;
}
