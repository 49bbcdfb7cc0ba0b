/*
 * mcp_tools.c: MCP's tools (mcp.h): one per capability the URL's Space
 * may use, each call one task through the task routes' own code.
 *
 * A tool call answers with what a model can read at once: the page
 * header and the task's result as text, the outline when there is one
 * (actions run with snapshot: true when their schema takes it and the
 * client did not say), a screenshot as an image.  A task that failed is
 * a tool result with isError and "code: message"; the protocol's own
 * refusals (an unknown tool) are JSON-RPC errors.
 */
#include "mcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "mcp_rpc.h"
#include "mcp_session.h"
#include "metrics.h"
#include "status.h"
#include "token.h"

#define TOOL_PREFIX "browser_"

/* What a model reads of each tool; the bundle's schema says the rest.
 * A capability not named here is described by its name alone. */
static const struct {
	const char *name, *text;
} blurbs[] = {
    {"navigate", "Opens a URL in the page and waits for it to load. "
                 "Returns the page's url, title and HTTP status."},
    {"snapshot",
        "Returns the page as an outline: one line per element, with a "
        "ref (e12, f1e3 in a frame) on each one you can act on, and the "
        "page header (url, title, tabs, an open dialog). Take one before "
        "acting, and again after element_not_found."},
    {"click", "Clicks the element of a ref (or CSS selector). Fails with "
              "element_obscured when something covers it, "
              "element_not_found when the ref is stale (take a new "
              "snapshot)."},
    {"type", "Types text into the element of a ref, as keys; submit: "
             "true presses Enter after."},
    {"fill", "Clears a field and sets its value (text, number, date, "
             "range, color, contenteditable)."},
    {"press", "Presses a key (Enter, Tab, ArrowDown, a letter, F1-F12), "
              "with modifiers."},
    {"select_option", "Chooses options of a select by values or labels."},
    {"check", "Checks or unchecks a checkbox, radio or switch."},
    {"hover", "Moves the pointer over an element (opens hover menus)."},
    {"drag", "Drags from one element to another."},
    {"scroll", "Scrolls the page or an element."},
    {"wait_for", "Waits until an element or text appears, or a bound."},
    {"extract_text", "Returns the text of the page or of an element."},
    {"screenshot", "Returns a PNG picture of the page's viewport."},
    {"back", "Goes back in the page's history."},
    {"forward", "Goes forward in the page's history."},
    {"reload", "Loads the page again."},
    {"handle_dialog", "Accepts or dismisses the page's open dialog "
                      "(alert, confirm, prompt with prompt_text)."},
    {"upload", "Sets files put on the Space on a file input."},
    {"tabs", "Lists, selects or closes the Space's tabs."},
    {"request_help",
        "Asks a person for help when you are stuck (a second factor, a "
        "captcha, a purchase that needs a human yes): ends at once and "
        "marks the Space for an operator. While one holds it, every "
        "call answers space_held; once they hand it back, take a new "
        "snapshot: the page is as they left it."},
};

static const char *
blurb(const char *cap)
{
	for (size_t i = 0; i < sizeof(blurbs) / sizeof(blurbs[0]); i++)
		if (strcmp(blurbs[i].name, cap) == 0)
			return blurbs[i].text;
	return NULL;
}

/* A context for one of the REST routes, as c's caller, with method,
 * body (may be NULL) and query.  rq and rs are the caller's. */
static void
sub(struct api_ctx *c, struct api_ctx *s, struct api_req *rq,
    struct api_res *rs, const char *body, const char *query)
{
	*s = *c;
	*rq = *c->req;
	memset(rs, 0, sizeof(*rs));
	rq->method = "POST";
	rq->body = body;
	rq->body_len = body != NULL ? strlen(body) : 0;
	rq->content_type = "application/json";
	snprintf(rq->query, sizeof(rq->query), "%s", query);
	s->req = rq;
	s->res = rs;
	s->later = API_LATER_NONE;
}

static void
answer_result(struct api_ctx *c, const char *id, json_t *result)
{
	api_mcp_answer(c, 200, api_rpc_result(id, result));
}

/* The error of a REST answer's body as "code: message". */
static void
error_text(const char *body, char *out, size_t len)
{
	json_t *b = body != NULL ? json_loads(body, 0, NULL) : NULL;
	const json_t *e = json_object_get(b, "error");

	snprintf(out, len, "%s: %s",
	    api_mcp_str(json_object_get(e, "code"), "internal"),
	    api_mcp_str(json_object_get(e, "message"), "no answer"));
	json_decref(b);
}

/* ---- the tools of a URL -------------------------------------------- */

/* The capabilities (name: args schema, a new object) the bundles of the
 * workspace's instances offer, and with space (its reply) only those the
 * Space's instance's bundle has and the Space was granted.  NULL, with c
 * answered, when the store failed. */
static json_t *
capabilities(struct api_ctx *c, const struct pr_space *space)
{
	struct pr_req qi, qb;
	struct pr_rep ri, rb;
	json_t *caps = json_object();

	memset(&qi, 0, sizeof(qi));
	qi.op = PR_OP_INSTANCE_LIST;
	qi.workspace_id = c->workspace_id;
	memset(&qb, 0, sizeof(qb));
	qb.op = PR_OP_BUNDLE_LIST;
	memset(&ri, 0, sizeof(ri));
	memset(&rb, 0, sizeof(rb));
	if (!api_call(c, &qi, &ri) || ri.err != CM_OK ||
	    !api_call(c, &qb, &rb) || rb.err != CM_OK) {
		if (ri.err != CM_OK)
			api_fail_rep(c, &ri);
		else if (rb.err != CM_OK)
			api_fail_rep(c, &rb);
		json_decref(caps);
		caps = NULL;
		goto out;
	}
	for (size_t i = 0; caps != NULL && i < ri.n_instances; i++) {
		const struct pr_instance *in = &ri.instances[i];
		json_t *m, *list, *cap;
		size_t k;

		if (space != NULL &&
		    strcmp(in->browser_instance_id, space->browser_instance_id))
			continue;
		for (size_t b = 0; b < rb.n_bundles; b++) {
			if (strcmp(rb.bundles[b].bundle_id, in->bundle_id) !=
			        0 ||
			    (m = json_loads(rb.bundles[b].manifest, 0, NULL)) ==
			        NULL)
				continue;
			list = json_object_get(m, "capabilities");
			json_array_foreach(list, k, cap)
			{
				const char *name = json_string_value(
				    json_object_get(cap, "name"));
				bool granted = space == NULL;

				for (size_t g = 0;
				     space != NULL && g < space->granted.n; g++)
					granted |= name != NULL &&
					           strcmp(space->granted.v[g],
					               name) == 0;
				if (name != NULL && granted &&
				    json_is_object(
				        json_object_get(cap, "args")))
					json_object_set(caps, name,
					    json_object_get(cap, "args"));
			}
			json_decref(m);
		}
	}
out:
	pr_rep_free(&ri);
	pr_rep_free(&rb);
	return caps;
}

/* The capabilities of c's URL: the bound Space's (read as the caller),
 * or the workspace's.  NULL with c answered on failure. */
static json_t *
url_capabilities(struct api_ctx *c)
{
	struct pr_req q;
	struct pr_rep r;
	json_t *caps;

	if (c->space_id == NULL)
		return capabilities(c, NULL);
	if (!api_space_allowed(c, CM_ACT_SPACE_SUBMIT))
		return NULL;
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SPACE_GET;
	q.workspace_id = c->workspace_id;
	q.space_id = c->space_id;
	if (!api_call(c, &q, &r))
		return NULL;
	if (r.err != CM_OK) {
		api_fail_rep(c, &r);
		pr_rep_free(&r);
		return NULL;
	}
	caps = capabilities(c, &r.spaces[0]);
	pr_rep_free(&r);
	return caps;
}

void
api_mcp_tools_list(struct api_ctx *c, const char *id)
{
	json_t *caps = url_capabilities(c), *tools, *schema;
	const char *name;
	char tool[CM_CAPABILITY_MAX + sizeof(TOOL_PREFIX)], text[400];

	if (caps == NULL)
		return;
	tools = json_array();
	json_object_foreach(caps, name, schema)
	{
		const char *b = blurb(name);

		snprintf(tool, sizeof(tool), TOOL_PREFIX "%s", name);
		if (b == NULL)
			snprintf(text, sizeof(text),
			    "Runs the capability %s on the Space's browser.",
			    name);
		json_array_append_new(tools,
		    json_pack("{s:s, s:s, s:O}", "name", tool, "description",
		        b != NULL ? b : text, "inputSchema", schema));
	}
	if (c->space_id == NULL)
		json_array_append_new(tools,
		    json_pack("{s:s, s:s, s:{s:s, s:{}, s:b}}", "name",
		        "browser_space_close", "description",
		        "Closes your open Space in this workspace: its browser "
		        "and page go. The next tool call opens a new one.",
		        "inputSchema", "type", "object", "properties",
		        "additionalProperties", 0));
	json_decref(caps);
	answer_result(c, id, json_pack("{s:o}", "tools", tools));
}

/* ---- tools/call ----------------------------------------------------- */

/*
 * The workspace URL's Space: the caller's own open one into out.
 * Returns 1 when there is one, 0 when none, 2 when several (their ids in
 * list), -1 with c answered when the store failed.
 */
static int
own_space(struct api_ctx *c, char out[CM_ID_MAX + 1], char *list, size_t len)
{
	struct pr_req q;
	struct pr_rep r;
	int n = 0;
	size_t used = 0;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SPACE_LIST;
	q.workspace_id = c->workspace_id;
	q.owner_id = c->id.principal->principal_id;
	q.limit = CM_LIST_LIMIT_MAX;
	if (!api_call(c, &q, &r))
		return -1;
	if (r.err != CM_OK) {
		api_fail_rep(c, &r);
		pr_rep_free(&r);
		return -1;
	}
	list[0] = '\0';
	for (size_t i = 0; i < r.n_spaces; i++) {
		/* Closed, or on its way (its close asked: it takes no task). */
		if (strcmp(r.spaces[i].status, "closed") == 0 ||
		    r.spaces[i].close_requested)
			continue;
		if (n++ == 0)
			snprintf(
			    out, CM_ID_MAX + 1, "%s", r.spaces[i].space_id);
		if (used < len)
			used += (size_t)snprintf(list + used, len - used,
			    "%s%s", used ? ", " : "", r.spaces[i].space_id);
	}
	pr_rep_free(&r);
	return n > 1 ? 2 : n;
}

/*
 * Opens a Space for the caller on a free instance of the workspace,
 * through the create route (the caller's own rights), its id into out.
 * An instance in use is passed over.  Returns true, or false with the
 * reason in why.
 */
static bool
open_space(struct api_ctx *c, const char *sid, const char *id,
    char out[CM_ID_MAX + 1], char *why, size_t len)
{
	struct pr_req q;
	struct pr_rep r;
	bool ok = false;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_INSTANCE_LIST;
	q.workspace_id = c->workspace_id;
	snprintf(why, len,
	    "no_instance: every browser instance of this workspace is in use");
	if (!api_call(c, &q, &r))
		return false;
	for (size_t i = 0; r.err == CM_OK && !ok && i < r.n_instances; i++) {
		char key[600], rid[CM_TOKEN_HASH_LEN], body[512];
		struct api_req rq;
		struct api_res rs;
		struct api_ctx s;
		json_t *b;

		/* A retry of this call opens no second Space on it. */
		snprintf(key, sizeof(key), "%s\n%s\n%s", sid, id,
		    r.instances[i].browser_instance_id);
		cm_sha256_hex(key, strlen(key), rid);
		snprintf(body, sizeof(body),
		    "{\"browser_instance_id\":\"%s\",\"owner_type\":\"%s\","
		    "\"owner_id\":\"%s\",\"request_id\":\"%.64s\"}",
		    r.instances[i].browser_instance_id, c->id.principal->kind,
		    c->id.principal->principal_id, rid);
		sub(c, &s, &rq, &rs, body, "");
		api_space_create(&s);
		if (rs.status == 200 || rs.status == 201) {
			b = json_loads(rs.body, 0, NULL);
			snprintf(out, CM_ID_MAX + 1, "%s",
			    api_mcp_str(
			        json_object_get(
			            json_object_get(b, "data"), "space_id"),
			        ""));
			json_decref(b);
			ok = out[0] != '\0';
		} else if (rs.status != 409) {
			error_text(rs.body, why, len);
		}
		free(rs.body);
	}
	if (r.err != CM_OK)
		snprintf(
		    why, len, "%s: %s", cm_err_code(r.err), r.msg ? r.msg : "");
	pr_rep_free(&r);
	return ok;
}

/* Whether the close route's answer body shows its Space closed. */
static bool
space_closed(const char *body)
{
	json_t *b = body != NULL ? json_loads(body, 0, NULL) : NULL;
	bool closed = cm_space_status_is(
	    json_string_value(
	        json_object_get(json_object_get(b, "data"), "status")),
	    CM_SPACE_CLOSED);

	json_decref(b);
	return closed;
}

/* browser_space_close: the caller's open Space, through the close
 * route; the answer says what the route said.  Returns how it ended. */
static enum api_mcp_outcome
close_own(struct api_ctx *c, const char *id)
{
	char space[CM_ID_MAX + 1], list[1024], line[1200];
	struct api_req rq;
	struct api_res rs;
	struct api_ctx s;
	int n = own_space(c, space, list, sizeof(list));
	bool ok;

	if (n < 0)
		return API_MCP_ERROR;
	if (n == 0) {
		answer_result(c, id,
		    api_mcp_text_result(
		        "You have no open Space in this workspace.", false));
		return API_MCP_OK;
	}
	sub(c, &s, &rq, &rs, "{}", "");
	s.space_id = space;
	api_space_close(&s);
	ok = rs.status == 200 || rs.status == 202;
	if (ok)
		snprintf(line, sizeof(line), "The Space %s is %s.", space,
		    space_closed(rs.body)
		        ? "closed"
		        : "closing: it takes no more tasks, and its browser "
		          "goes once its last task has ended");
	else
		error_text(rs.body, line, sizeof(line));
	free(rs.body);
	answer_result(c, id, api_mcp_text_result(line, !ok));
	return ok ? API_MCP_OK : API_MCP_REFUSED;
}

/*
 * What a parked call of session sid streams, when its client takes an
 * event stream (Accept): the session's log level, and its progressToken
 * (params' _meta), a string or an integer, at most CM_MCP_ID_MAX as JSON
 * text; any other token is not followed, and the call is answered as one
 * without it.  With neither, the call is answered with one JSON body.
 */
static void
streamed(struct api_ctx *c, const char *sid, const json_t *params)
{
	const json_t *t =
	    json_object_get(json_object_get(params, "_meta"), "progressToken");
	char *text;

	c->later_progress[0] = '\0';
	c->later_log = API_MCP_LOG_NONE;
	if (c->req->accept == NULL ||
	    strstr(c->req->accept, "text/event-stream") == NULL)
		return;
	c->later_log = api_mcp_session_level(sid);
	if (!(json_is_string(t) || json_is_integer(t)) ||
	    (text = json_dumps(t, JSON_ENCODE_ANY | JSON_COMPACT)) == NULL)
		return;
	if (strlen(text) <= CM_MCP_ID_MAX)
		snprintf(
		    c->later_progress, sizeof(c->later_progress), "%s", text);
	free(text);
}

/* The task of rs (the submit route's answer) for id, now or parked.
 * Returns how the call ended, -1 when it is parked. */
static int
submitted(struct api_ctx *c, const char *sid, const char *id,
    const json_t *params, const struct api_ctx *s, const struct api_res *rs)
{
	json_t *b, *result;
	bool later;
	char line[CM_ERROR_MESSAGE_MAX + 200];
	int o;

	if (s->later == API_LATER_WAIT) {
		c->later = API_LATER_WAIT;
		c->later_closed = false;
		snprintf(
		    c->later_task, sizeof(c->later_task), "%s", s->later_task);
		snprintf(c->later_rpc, sizeof(c->later_rpc), "%s", id);
		streamed(c, sid, params);
		c->later_deadline_ms = s->later_deadline_ms;
		api_mcp_session_call(sid, id, s->later_task);
		return -1;
	}
	b = rs->body != NULL ? json_loads(rs->body, 0, NULL) : NULL;
	if (json_object_get(b, "data") != NULL &&
	    json_object_get(b, "error") == NULL) {
		o = (int)api_mcp_outcome(json_string_value(
		    json_object_get(json_object_get(b, "data"), "status")));
		result = api_mcp_task_result(
		    c, json_object_get(b, "data"), true, &later);
		answer_result(c, id,
		    result != NULL
		        ? result
		        : api_mcp_text_result("internal: out of memory", true));
	} else {
		error_text(rs->body, line, sizeof(line));
		o = strncmp(line, cm_err_code(CM_E_TASK_IN_PROGRESS),
		        strlen(cm_err_code(CM_E_TASK_IN_PROGRESS))) == 0
		        ? API_MCP_BUSY
		        : API_MCP_REFUSED;
		answer_result(c, id, api_mcp_text_result(line, true));
	}
	json_decref(b);
	return o;
}

/* tools/call: how it ended (-1: parked, counted when answered), the
 * tool's name into *tool once it is one of the URL's. */
static int
call(struct api_ctx *c, const char *sid, const char *id, const json_t *params,
    const char **tool)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	const json_t *given = json_object_get(params, "arguments");
	char list[1024], line[1200], key[CM_MCP_ID_MAX + 80];
	char rid[CM_TOKEN_HASH_LEN], *body;
	json_t *caps, *schema, *args, *req;
	struct api_req rq;
	struct api_res rs;
	struct api_ctx s;
	int n;

	if (name == NULL || (given != NULL && !json_is_object(given))) {
		api_mcp_answer(c, 200,
		    api_rpc_error(id, API_RPC_INVALID_PARAMS,
		        "tools/call takes a tool's name and its arguments "
		        "(an object)"));
		return API_MCP_INVALID;
	}
	if (strncmp(name, TOOL_PREFIX, 8) != 0) {
		api_mcp_answer(c, 200,
		    api_rpc_error(id, API_RPC_INVALID_PARAMS,
		        "Unknown tool: spaced's tools are named "
		        "browser_<capability>; tools/list names them"));
		return API_MCP_INVALID;
	}
	if (c->space_id == NULL) {
		if (strcmp(name, "browser_space_close") == 0) {
			*tool = name;
			return (int)close_own(c, id);
		}
		n = own_space(c, c->params[1], list, sizeof(list));
		if (n < 0)
			return API_MCP_ERROR;
		if (n == 2) {
			snprintf(line, sizeof(line),
			    "several_spaces: you have several open Spaces in "
			    "this workspace (%s); use the URL of one, "
			    ".../browser-spaces/{space_id}/mcp",
			    list);
			answer_result(c, id, api_mcp_text_result(line, true));
			return API_MCP_REFUSED;
		}
		if (n == 0 &&
		    !open_space(c, sid, id, c->params[1], line, sizeof(line))) {
			answer_result(c, id, api_mcp_text_result(line, true));
			return API_MCP_REFUSED;
		}
		c->space_id = c->params[1];
	}
	if ((caps = url_capabilities(c)) == NULL)
		return API_MCP_ERROR;
	if ((schema = json_object_get(caps, name + 8)) == NULL) {
		json_decref(caps);
		api_mcp_answer(c, 200,
		    api_rpc_error(id, API_RPC_INVALID_PARAMS,
		        "Unknown tool: this Space has no such capability"));
		return API_MCP_INVALID;
	}
	*tool = name;
	args = given != NULL ? json_deep_copy(given) : json_object();
	/* The model sees what its action did, in the same call. */
	if (json_object_get(
	        json_object_get(schema, "properties"), "snapshot") &&
	    strcmp(name + 8, "snapshot") != 0 &&
	    json_object_get(args, "snapshot") == NULL)
		json_object_set_new(args, "snapshot", json_true());
	json_decref(caps);
	/* The same call retried is the same task. */
	snprintf(key, sizeof(key), "mcp\n%s\n%s", sid, id);
	cm_sha256_hex(key, strlen(key), rid);
	req = json_pack("{s:s, s:s, s:o}", "request_id", rid, "capability",
	    name + 8, "args", args);
	body = req != NULL ? json_dumps(req, JSON_COMPACT) : NULL;
	json_decref(req);
	if (body == NULL) {
		api_mcp_answer(c, 500, NULL);
		return API_MCP_ERROR;
	}
	sub(c, &s, &rq, &rs, body, "wait=" CM_STR(CM_WAIT_MAX_S));
	api_task_submit(&s);
	n = submitted(c, sid, id, params, &s, &rs);
	free(rs.body);
	free(body);
	return n;
}

void
api_mcp_tools_call(
    struct api_ctx *c, const char *sid, const char *id, const json_t *params)
{
	const char *tool = NULL;
	int o = call(c, sid, id, params, &tool);

	if (o >= 0)
		api_metrics_mcp_call(tool, (enum api_mcp_outcome)o);
}
