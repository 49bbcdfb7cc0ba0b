/*
 * router.c: method and path to handler.  Path segments that name ids are
 * checked for shape here; whether they exist is the store's answer.
 */
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "ids.h"
#include "live.h"
#include "log.h"
#include "mcp.h"

struct route {
	const char *method;
	const char *pattern; /* '*' segments are ids, captured in order */
	bool auth;
	void (*fn)(struct api_ctx *);
	bool named; /* its last '*' is a file name, not an id */
	/* It may run on the connection loop: it calls the store only
	 * through api_call, and only for what the view may hold (a Space's
	 * detail or list, or none), and does nothing that is not undone by
	 * dropping its answer (api_ctx.needs_store). */
	bool loop;
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
    {"GET", "/", false, api_console_index, false, false},
    {"GET", "/console/*", false, api_console_file, true, false},
    {"GET", "/healthz", false, route_healthz, false, true},
    {"GET", "/readyz", false, route_readyz, false, false},
    {"GET", "/metrics", false, api_metrics_get, false, false},
    {"GET", "/api/v1/openapi.json", false, api_openapi_get, false, false},
    {"GET", "/api/v1/me", true, api_me_get, false, true},
    {"GET", WS "/browser-spaces", true, api_space_list, false, true},
    {"POST", WS "/browser-spaces", true, api_space_create, false, false},
    {"GET", SP, true, api_space_get, false, true},
    {"GET", SP "/tasks", true, api_task_list, false, false},
    {"POST", SP "/tasks", true, api_task_submit, false, false},
    {"GET", SP "/tasks/*", true, api_task_get, false, false},
    {"GET", SP "/tasks/*/artifacts/*", true, api_artifact_get, true, false},
    {"POST", SP "/cancel", true, api_space_cancel, false, false},
    {"POST", SP "/close", true, api_space_close, false, false},
    {"POST", SP "/takeover", true, api_space_takeover, false, false},
    {"POST", SP "/release", true, api_space_release, false, false},
    {"GET", SP "/events", true, api_event_list, false, false},
    {"GET", SP "/live", true, api_live_route, false, false},
    {"POST", SP "/live/input", true, api_live_input, false, false},
    {"GET", WS "/browser-instances", true, api_instance_list, false, false},
    {"GET", WS "/runtime-bundles", true, api_bundle_list, false, false},
    {"GET", AD "/workspaces", true, api_admin_workspace_list, false, false},
    {"POST", AD "/workspaces", true, api_admin_workspace_create, false, false},
    {"PUT", AD "/workspaces/*/members/*", true, api_admin_member_put, false,
        false},
    {"DELETE", AD "/workspaces/*/members/*", true, api_admin_member_remove,
        false, false},
    {"GET", AD "/principals", true, api_admin_principal_list, false, false},
    {"POST", AD "/principals", true, api_admin_principal_create, false, false},
    {"POST", AD "/principals/*/tokens", true, api_admin_token_issue, false,
        false},
    {"DELETE", AD "/tokens/*", true, api_admin_token_revoke, false, false},
    {"GET", AD "/runtime-bundles", true, api_admin_bundle_list, false, false},
    {"POST", AD "/runtime-bundles", true, api_admin_bundle_create, false,
        false},
    {"GET", AD "/browser-instances", true, api_admin_instance_list, false,
        false},
    {"POST", AD "/browser-instances", true, api_admin_instance_register, false,
        false},
    {"POST", AD "/browser-instances/*/disable", true,
        api_admin_instance_disable, false, false},
    {"POST", AD "/browser-instances/*/enable", true, api_admin_instance_enable,
        false, false},
    {"POST", AD "/bindings", true, api_admin_binding_create, false, false},
    {"DELETE", AD "/bindings/*", true, api_admin_binding_delete, false, false},
    {"GET", AD "/status", true, api_admin_status, false, false},
    {"POST", SP "/mcp", true, api_mcp_post, false, false},
    {"DELETE", SP "/mcp", true, api_mcp_delete, false, false},
    {"POST", WS "/mcp", true, api_mcp_post, false, false},
    {"DELETE", WS "/mcp", true, api_mcp_delete, false, false},
    {"GET", SP "/files", true, api_file_list, false, false},
    {"PUT", SP "/files/*", true, api_file_put, true, false},
};

bool
api_id_ok(const char *s, size_t n)
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
 * Matches path against r's pattern.  Returns 1 on a match (ids copied
 * into c->params), 0 on no match, -1 when it matches but an id is
 * malformed.  The last '*' of a named route (an artifact's, a console
 * file's, a Space's file's) is a file name, which may hold a '.' but not
 * start with one (cm_file_name_valid; an artifact's is shorter, which its
 * handler checks); the path is not percent-decoded, so "%2e" is
 * no name either.
 */
static int
match(struct api_ctx *c, const struct route *r, const char *path)
{
	const char *pattern = r->pattern;
	int n = 0, bad = 0;

	while (*pattern != '\0' && *path != '\0') {
		if (*pattern == '*') {
			size_t len = strcspn(path, "/");

			if (r->named && pattern[1] == '\0'
			        ? !cm_file_name_valid(path, len)
			        : !api_id_ok(path, len))
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

/* A 405's Allow header: the methods of the routes of c's path (RFC
 * 9110, 15.5.6). */
static void
allow(struct api_ctx *c)
{
	char *b = c->res->header_buf;
	size_t len = sizeof(c->res->header_buf), used;

	used = (size_t)snprintf(b, len, "Allow:");
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		memset(c->params, 0, sizeof(c->params));
		if (match(c, &routes[i], c->req->path) != 0 && used < len)
			used += (size_t)snprintf(b + used, len - used, "%s %s",
			    used > 6 ? "," : "", routes[i].method);
	}
	if (used < len)
		used += (size_t)snprintf(
		    b + used, len - used, "\r\nCache-Control: no-store\r\n");
	if (used < len)
		c->res->headers = b;
}

void
api_dispatch(struct api_ctx *c)
{
	bool path_known = false;
	size_t i;
	int m = 0;

	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		memset(c->params, 0, sizeof(c->params));
		if ((m = match(c, &routes[i], c->req->path)) == 0)
			continue;
		path_known = true;
		c->route = routes[i].pattern; /* a 405 keeps its path's */
		if (strcmp(routes[i].method, c->req->method) != 0)
			continue;
		break;
	}
	/* Any other route, or an answer of none, is a worker's to give. */
	if (c->on_loop && (i == sizeof(routes) / sizeof(routes[0]) || m < 0 ||
	                      !routes[i].loop)) {
		c->needs_store = true;
		return;
	}
	if (i == sizeof(routes) / sizeof(routes[0])) {
		if (path_known) {
			api_fail(c, 0, CM_E_METHOD_NOT_ALLOWED,
			    "method not allowed");
			allow(c);
		} else
			api_fail(c, 0, CM_E_NOT_FOUND, "no such route");
		return;
	}
	if (m < 0) {
		api_fail(c, 0, CM_E_NOT_FOUND, "no such resource");
		return;
	}
	/* A console file's name is its params[0] too, and its handler reads
	 * nothing else. */
	c->workspace_id = c->params[0][0] ? c->params[0] : NULL;
	c->space_id = c->params[1][0] ? c->params[1] : NULL;
	c->task_id = c->params[2][0] ? c->params[2] : NULL;
	c->artifact_name = c->params[3][0] ? c->params[3] : NULL;
	if (routes[i].auth && !api_authenticate(c)) {
		/* A 401 names the scheme it wants (RFC 9110, 11.6.1). */
		if (c->res->status == 401)
			c->res->headers =
			    "WWW-Authenticate: Bearer realm=\"spaced\"\r\n"
			    "Cache-Control: no-store\r\n";
		return;
	}
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
