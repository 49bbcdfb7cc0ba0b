/*
 * mcp.c: MCP's transport on the api (mcp.h): the checks every request
 * passes, the session's life, and the methods but the tools'
 * (mcp_tools.c).
 *
 * Order of the checks: the bearer token (the router's, as for every
 * route: the session is never an authentication), then Host and Origin
 * (a page of another site that reached this port through a rebound name
 * is refused before its message is read), then the message, then the
 * session, then the caller's right to the URL, on every message.
 */
#include "mcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api.h"
#include "clock.h"
#include "mcp_rpc.h"
#include "mcp_session.h"
#include "startup.h"

/* The revisions spoken, newest first. */
static const char *const versions[] = {"2025-11-25", "2025-06-18"};
/* Before MCP-Protocol-Version, clients sent none: they are taken. */
static const char version_assumed[] = "2025-03-26";

void
api_mcp_answer(struct api_ctx *c, int status, char *body)
{
	free(c->res->body);
	c->res->body_len = 0;
	c->res->content_type = NULL;
	if (body == NULL) {
		api_fail(c, 500, CM_E_INTERNAL, "out of memory");
		return;
	}
	c->res->status = status;
	c->res->body = body;
}

static void
answer_error(struct api_ctx *c, int status, const char *id, int code,
    const char *message)
{
	api_mcp_answer(c, status, api_rpc_error(id, code, message));
}

/* The host of a Host header's value (a name, an IPv4 address or a
 * bracketed IPv6 one, with an optional port) into out; false when it has
 * none that fits. */
static bool
host_of(const char *v, char *out, size_t len)
{
	const char *end;

	if (v == NULL || *v == '\0')
		return false;
	if (*v == '[')
		end = strchr(v, ']') != NULL ? strchr(v, ']') + 1 : NULL;
	else
		end = v + strcspn(v, ":");
	if (end == NULL || end == v || (size_t)(end - v) >= len)
		return false;
	if (*end != '\0' && *end != ':')
		return false;
	memcpy(out, v, (size_t)(end - v));
	out[end - v] = '\0';
	return true;
}

/* Whether host is one of list's names (public_hosts: comma-separated,
 * checked when the configuration was read). */
static bool
host_listed(const char *list, const char *host)
{
	size_t n = strlen(host);

	for (const char *v = list; *v != '\0'; v += *v == ',') {
		size_t len = strcspn(v, ",");

		if (len == n && strncasecmp(v, host, n) == 0)
			return true;
		v += len;
	}
	return false;
}

/* Whether host names this api: a loopback name, the host it listens on
 * (http_listen), when that is one, or a name of public_hosts. */
static bool
host_ours(const struct api_ctx *c, const char *host)
{
	char listen[CM_CONF_VALUE_MAX];

	if (strcasecmp(host, "localhost") == 0 ||
	    strcmp(host, "127.0.0.1") == 0 || strcmp(host, "[::1]") == 0)
		return true;
	if (c->cfg == NULL)
		return false;
	if (host_listed(c->cfg->public_hosts, host))
		return true;
	return host_of(c->cfg->http_listen, listen, sizeof(listen)) &&
	       strcmp(listen, "0.0.0.0") != 0 && strcmp(listen, "[::]") != 0 &&
	       strcasecmp(listen, host) == 0;
}

/*
 * DNS rebinding: a page of another site whose name was made to point at
 * this host sends its own name as Host, and its own origin as Origin.
 * Both must be this api's.  A client that is no browser sends no Origin.
 */
static bool
origin_ok(struct api_ctx *c)
{
	char host[CM_HOST_MAX + 3];
	const char *o = c->req->origin, *hp;

	if (!host_of(c->req->host, host, sizeof(host)) || !host_ours(c, host)) {
		answer_error(c, 403, "null", API_RPC_INVALID_REQUEST,
		    "Forbidden: the Host header does not name this server");
		return false;
	}
	if (o == NULL)
		return true;
	hp = strncmp(o, "http://", 7) == 0    ? o + 7
	     : strncmp(o, "https://", 8) == 0 ? o + 8
	                                      : NULL;
	if (hp == NULL || !host_of(hp, host, sizeof(host)) ||
	    !host_ours(c, host)) {
		answer_error(c, 403, "null", API_RPC_INVALID_REQUEST,
		    "Forbidden: requests from another origin are refused");
		return false;
	}
	return true;
}

static struct api_mcp_where
where_of(const struct api_ctx *c)
{
	struct api_mcp_where w = {
	    c->id.principal->principal_id, c->workspace_id, c->space_id};

	return w;
}

static bool
version_known(const char *v)
{
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (strcmp(v, versions[i]) == 0)
			return true;
	return strcmp(v, version_assumed) == 0;
}

/* Whether the caller may use this URL: the Space's own checks (as for a
 * task), or membership of the workspace. */
static bool
url_allowed(struct api_ctx *c)
{
	const char *why = NULL;
	enum cm_err e;

	if (c->space_id != NULL)
		return api_space_allowed(c, CM_ACT_SPACE_SUBMIT);
	e = cm_authz_check(
	    &c->id, CM_ACT_SPACE_LIST, c->workspace_id, NULL, NULL, NULL, &why);
	if (e == CM_OK)
		return true;
	api_fail(c, 0, e, why && *why ? why : NULL);
	return false;
}

static void
initialize(struct api_ctx *c, const struct api_rpc *m)
{
	const char *asked =
	    json_string_value(json_object_get(m->params, "protocolVersion"));
	const char *version = versions[0];
	struct api_mcp_where w = where_of(c);
	char sid[API_MCP_SID_LEN + 1];

	if (m->kind != API_RPC_REQUEST || asked == NULL) {
		answer_error(c, 400, m->id, API_RPC_INVALID_PARAMS,
		    "initialize is a request with params.protocolVersion");
		return;
	}
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (strcmp(asked, versions[i]) == 0)
			version = versions[i];
	if (!url_allowed(c))
		return;
	/* A principal at its bound ends its least recently used session
	 * (rc 1): that client's next message is answered 404, and it
	 * initializes again. */
	if (api_mcp_session_open(&w, version, cm_mono_ms() / 1000, sid) == 2) {
		api_fail(c, 503, CM_E_OVERLOADED,
		    "the server has 256 MCP sessions open");
		return;
	}
	api_mcp_answer(c, 200,
	    api_rpc_result(m->id,
	        json_pack("{s:s, s:{s:{s:b}, s:{}}, s:{s:s, s:s}, s:s}",
	            "protocolVersion", version, "capabilities", "tools",
	            "listChanged", 0, "logging", "serverInfo", "name", "spaced",
	            "version", cm_version(), "instructions",
	            c->space_id != NULL
	                ? "Each tool acts on this Space's browser, one task "
	                  "at a time. Take a snapshot to get refs, then act "
	                  "by ref."
	                : "Each tool acts on your own open Space in this "
	                  "workspace, opened by the first call. Take a "
	                  "snapshot to get refs, then act by ref.")));
	snprintf(c->res->header_buf, sizeof(c->res->header_buf),
	    "Mcp-Session-Id: %s\r\nCache-Control: no-store\r\n", sid);
	c->res->headers = c->res->header_buf;
}

/*
 * logging/setLevel: the session's level.  Its tool calls answered on an
 * event stream carry, as notifications/message, the Space's events of
 * that level or more severe committed while the call waits (wait.c).
 */
static void
set_level(struct api_ctx *c, const char *sid, const struct api_rpc *m)
{
	const char *name =
	    json_string_value(json_object_get(m->params, "level"));
	int level = api_mcp_log_level(name);
	struct api_mcp_where w = where_of(c);

	if (level == API_MCP_LOG_NONE) {
		answer_error(c, 200, m->id, API_RPC_INVALID_PARAMS,
		    "params.level is one of debug, info, notice, warning, "
		    "error, critical, alert, emergency");
		return;
	}
	if (!api_mcp_session_set_level(sid, &w, level)) {
		answer_error(c, 404, m->id, API_RPC_INVALID_REQUEST,
		    "Session not found: initialize a new one");
		return;
	}
	api_mcp_answer(c, 200, api_rpc_result(m->id, json_object()));
}

/* notifications/cancelled: the call's task goes down the cancel path. */
static void
cancelled(struct api_ctx *c, const char *sid, const struct api_rpc *m)
{
	const json_t *rid = json_object_get(m->params, "requestId");
	struct api_mcp_where w = where_of(c);
	char id[CM_MCP_ID_MAX + 3], task[CM_ID_MAX + 1], body[CM_ID_MAX + 32];
	char *text;
	struct api_req rq;
	struct api_res rs;
	struct api_ctx s;

	if (rid == NULL ||
	    (text = json_dumps(rid, JSON_ENCODE_ANY | JSON_COMPACT)) == NULL)
		return;
	snprintf(id, sizeof(id), "%s", text);
	free(text);
	if (!api_mcp_session_task(sid, &w, id, task))
		return;
	snprintf(body, sizeof(body), "{\"task_id\":\"%s\"}", task);
	s = *c;
	rq = *c->req;
	memset(&rs, 0, sizeof(rs));
	rq.body = body;
	rq.body_len = strlen(body);
	rq.content_type = "application/json";
	s.req = &rq;
	s.res = &rs;
	api_space_cancel(&s);
	free(rs.body);
}

void
api_mcp_post(struct api_ctx *c)
{
	struct api_rpc m;
	const char *why = NULL, *sid = c->req->mcp_session;
	struct api_mcp_where w;
	char version[16];
	int rc;

	if (!origin_ok(c))
		return;
	if ((rc = api_rpc_parse(c->req->body, c->req->body_len, &m, &why)) !=
	    0) {
		answer_error(c, 400, m.id, rc, why);
		return;
	}
	if (m.kind == API_RPC_REQUEST && strcmp(m.method, "initialize") == 0) {
		initialize(c, &m);
		api_rpc_free(&m);
		return;
	}
	w = where_of(c);
	if (sid == NULL) {
		answer_error(c, 400, m.kind == API_RPC_REQUEST ? m.id : "null",
		    API_RPC_INVALID_REQUEST,
		    "Bad Request: an Mcp-Session-Id header is required (from "
		    "initialize)");
	} else if (!api_mcp_session_find(
	               sid, &w, cm_mono_ms() / 1000, version)) {
		answer_error(c, 404, m.kind == API_RPC_REQUEST ? m.id : "null",
		    API_RPC_INVALID_REQUEST,
		    "Session not found: initialize a new one");
	} else if (c->req->mcp_version != NULL &&
	           !version_known(c->req->mcp_version)) {
		answer_error(c, 400, m.kind == API_RPC_REQUEST ? m.id : "null",
		    API_RPC_INVALID_REQUEST,
		    "Bad Request: unsupported MCP-Protocol-Version");
	} else if (!url_allowed(c)) {
		/* Answered: the session is no right, and a right it was
		 * opened with may have gone since (a member removed). */
	} else if (m.kind != API_RPC_REQUEST) {
		if (m.kind == API_RPC_NOTIFICATION &&
		    strcmp(m.method, "notifications/cancelled") == 0)
			cancelled(c, sid, &m);
		api_mcp_answer(c, 202, strdup(""));
	} else if (strcmp(m.method, "ping") == 0) {
		api_mcp_answer(c, 200, api_rpc_result(m.id, json_object()));
	} else if (strcmp(m.method, "logging/setLevel") == 0) {
		set_level(c, sid, &m);
	} else if (strcmp(m.method, "tools/list") == 0) {
		api_mcp_tools_list(c, m.id);
	} else if (strcmp(m.method, "tools/call") == 0) {
		api_mcp_tools_call(c, sid, m.id, m.params);
	} else {
		answer_error(
		    c, 200, m.id, API_RPC_METHOD_NOT_FOUND, "Method not found");
	}
	api_rpc_free(&m);
}

void
api_mcp_delete(struct api_ctx *c)
{
	struct api_mcp_where w;

	if (!origin_ok(c))
		return;
	w = where_of(c);
	if (c->req->mcp_session == NULL) {
		api_fail(c, 400, CM_E_INVALID_REQUEST,
		    "an Mcp-Session-Id header is required");
		return;
	}
	if (!api_mcp_session_end(c->req->mcp_session, &w)) {
		api_fail(c, 404, CM_E_NOT_FOUND, "no such session");
		return;
	}
	api_mcp_answer(c, 204, strdup(""));
}
