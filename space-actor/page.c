/*
 * page.c: each capability as a fixed sequence of CDP calls.
 *
 * A sequence is a chain of steps: each sends one command and names the
 * step that takes its reply (p->next).  Only one command is awaited at a
 * time, so abandoning a call is forgetting that command.  Errors of the
 * browser end the call with runtime_error; a connection that ends, with
 * runtime_crashed; a command past the task's deadline, with task_timeout.
 */
#include "page.h"
#include "page_int.h"

#include "outline.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "log.h"

/*
 * The constant scripts.  Each is a function called on an element (or the
 * document) with JSON arguments; none is ever built from input.
 */
static const char JS_QUERY[] = "function(s){return this.querySelector(s);}";
static const char JS_TEXT[] =
    "function(){return this.innerText === undefined ? this.textContent : "
    "this.innerText;}";
static const char JS_HAS_TEXT[] =
    "function(t){return !!(this.body&&this.body.innerText.includes(t));}";

/* ---- the call's end */

void
page_end(struct act_page *p, enum cm_err err, json_t *result)
{
	p->out.err = err;
	if (result != NULL) {
		p->out.result = json_dumps(result, JSON_COMPACT);
		json_decref(result);
		if (p->out.result == NULL && err == CM_OK) {
			p->out.err = CM_E_RUNTIME_ERROR;
			snprintf(p->out.message, sizeof(p->out.message),
			    "the result could not be serialized");
		}
	}
	p->done = true;
	p->next = NULL;
	p->want_load = false;
	p->poll_at_ms = -1;
}

void
page_fail(struct act_page *p, enum cm_err err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->out.message, sizeof(p->out.message), fmt, ap);
	va_end(ap);
	page_end(p, err, NULL);
}

void
page_not_found(struct act_page *p, const char *what)
{
	page_fail(p, CM_E_ELEMENT_NOT_FOUND,
	    "%s; take a new snapshot and use its refs", what);
}

/* ---- commands */

static void
page_reply(void *arg, const json_t *result, const json_t *error)
{
	struct act_page *p = arg;
	void (*next)(struct act_page *, const json_t *) = p->next;
	json_int_t code;

	p->cmd = 0;
	if (!p->busy || p->done)
		return;
	if (error != NULL) {
		code = json_integer_value(json_object_get(error, "code"));
		if (code == ACT_CDP_E_TIMEOUT)
			page_fail(p, CM_E_TASK_TIMEOUT,
			    "the browser did not answer in time");
		else if (code == ACT_CDP_E_CLOSED)
			page_fail(
			    p, CM_E_RUNTIME_CRASHED, "the browser went away");
		else if (p->look_again)
			/* A wait looks at a page that may be between two
			 * documents: a look that failed is made again. */
			p->poll_at_ms = cm_mono_ms() + CM_WAIT_POLL_MS;
		else
			page_fail(p, CM_E_RUNTIME_ERROR, "%s: %s",
			    p->capability,
			    json_is_string(json_object_get(error, "message"))
			        ? json_string_value(
			              json_object_get(error, "message"))
			        : "the browser refused the command");
		return;
	}
	p->next = NULL;
	next(p, result);
}

/* Sends method to the page's session (or the browser's, when browser is
 * true); its reply goes to next. */
void
page_send_to(struct act_page *p, bool browser, const char *method,
    json_t *params, void (*next)(struct act_page *, const json_t *))
{
	p->next = next;
	p->cmd = act_cdp_call(p->cdp, browser ? NULL : p->session, method,
	    params, p->deadline_ms, page_reply, p);
	if (p->cmd < 0) {
		p->cmd = 0;
		page_fail(p, CM_E_RUNTIME_CRASHED,
		    "the browser connection is broken");
	}
}

void
page_send(struct act_page *p, const char *method, json_t *params,
    void (*next)(struct act_page *, const json_t *))
{
	page_send_to(p, false, method, params, next);
}

/* Calls one of the constant scripts on object p->object with args (a
 * JSON array of plain values, or NULL); the value comes back by value
 * unless by_ref. */
void
page_call_on(struct act_page *p, const char *script, json_t *args, bool by_ref,
    void (*next)(struct act_page *, const json_t *))
{
	json_t *wrapped = json_array();
	json_t *v;
	size_t i;

	if (args != NULL) {
		json_array_foreach(args, i, v) json_array_append_new(
		    wrapped, json_pack("{s:O}", "value", v));
		json_decref(args);
	}
	page_send(p, "Runtime.callFunctionOn",
	    json_pack("{s:s, s:s, s:o, s:b, s:b}", "objectId", p->object,
	        "functionDeclaration", script, "arguments", wrapped,
	        "returnByValue", !by_ref, "awaitPromise", 0),
	    next);
}

/* The value a by-value call returned, or NULL when it threw. */
const json_t *
page_value(struct act_page *p, const json_t *result)
{
	if (json_object_get(result, "exceptionDetails") != NULL) {
		page_fail(p, CM_E_RUNTIME_ERROR,
		    "%s: the page threw an exception", p->capability);
		return NULL;
	}
	return json_object_get(json_object_get(result, "result"), "value");
}

/* ---- url and title: the last step of most capabilities */

static void
page_info_done(struct act_page *p, const json_t *result)
{
	const json_t *info = json_object_get(result, "targetInfo");
	json_t *out = p->keep != NULL ? p->keep : json_object();

	p->keep = NULL;
	json_object_set(out, "url", json_object_get(info, "url"));
	json_object_set(out, "title", json_object_get(info, "title"));
	if (strcmp(p->capability, "navigate") == 0)
		json_object_set_new(out, "status",
		    p->http_status > 0 ? json_integer(p->http_status)
		                       : json_null());
	page_end(p, CM_OK, out);
}

static void
page_blocked(struct act_page *p)
{
	page_fail(p, CM_E_HOST_NOT_ALLOWED,
	    "the instance's network policy does not allow %s", p->blocked_host);
}

static void
page_info(struct act_page *p)
{
	/* A redirect may have led the document where it may not go. */
	if (p->blocked_host[0] != '\0') {
		page_blocked(p);
		return;
	}
	page_send_to(p, true, "Target.getTargetInfo",
	    json_pack("{s:s}", "targetId", p->target), page_info_done);
}

/* ---- elements: by ref or by selector, into p->object */

static void
page_resolved(struct act_page *p, const json_t *result)
{
	const char *id = json_string_value(
	    json_object_get(json_object_get(result, "object"), "objectId"));

	if (id == NULL || strlen(id) >= sizeof(p->object)) {
		page_not_found(p, "the element is gone");
		return;
	}
	snprintf(p->object, sizeof(p->object), "%s", id);
	p->then(p);
}

static void
page_queried(struct act_page *p, const json_t *result)
{
	const json_t *r = json_object_get(result, "result");
	const char *id = json_string_value(json_object_get(r, "objectId"));

	if (json_object_get(result, "exceptionDetails") != NULL) {
		page_fail(p, CM_E_INVALID_ARGS, "the selector is not valid");
		return;
	}
	if (id == NULL || strlen(id) >= sizeof(p->object)) {
		page_not_found(p, "no element matches the selector");
		return;
	}
	snprintf(p->object, sizeof(p->object), "%s", id);
	p->then(p);
}

static void
page_document(struct act_page *p, const json_t *result)
{
	const char *id = json_string_value(
	    json_object_get(json_object_get(result, "result"), "objectId"));
	const char *sel =
	    json_string_value(json_object_get(p->args, "selector"));

	if (id == NULL || strlen(id) >= sizeof(p->object)) {
		page_fail(p, CM_E_RUNTIME_ERROR, "the page has no document");
		return;
	}
	snprintf(p->object, sizeof(p->object), "%s", id);
	if (sel == NULL) { /* the document itself */
		p->then(p);
		return;
	}
	page_call_on(p, JS_QUERY, json_pack("[s]", sel), true, page_queried);
}

/* Finds the element the args name (ref, selector, or with neither and
 * whole_document, the document), then runs then. */
void
page_element(
    struct act_page *p, bool whole_document, void (*then)(struct act_page *p))
{
	const char *ref = json_string_value(json_object_get(p->args, "ref"));
	const char *sel =
	    json_string_value(json_object_get(p->args, "selector"));
	char *end;
	unsigned long n;

	p->then = then;
	if (ref != NULL) {
		if (ref[0] != 'e' || (n = strtoul(ref + 1, &end, 10)) == 0 ||
		    *end != '\0') {
			page_not_found(p, "that is not a ref of a snapshot");
			return;
		}
		for (size_t i = 0; i < p->n_refs; i++)
			if (p->refs[i].n == n) {
				page_send(p, "DOM.resolveNode",
				    json_pack("{s:I}", "backendNodeId",
				        (json_int_t)p->refs[i].backend_node_id),
				    page_resolved);
				return;
			}
		page_not_found(p, "the ref is stale or unknown");
		return;
	}
	if (sel == NULL && !whole_document) {
		page_fail(
		    p, CM_E_INVALID_ARGS, "name an element by ref or selector");
		return;
	}
	page_send(p, "Runtime.evaluate",
	    json_pack("{s:s}", "expression", "document"), page_document);
}

/* ---- navigate and back */

/*
 * True, with blocked_host set, when the egress proxy says it refused
 * host during this call: a CONNECT it refused gives the browser no
 * response to read its 403 from, only a tunnel error.
 */
static bool
page_proxy_refused(struct act_page *p, const char *host)
{
	if (p->proxy == NULL || p->proxy->refused == NULL || host[0] == '\0' ||
	    !p->proxy->refused(p->proxy->refused_arg, host, p->started_ms))
		return false;
	snprintf(p->blocked_host, sizeof(p->blocked_host), "%s", host);
	return true;
}

static void
page_navigated(struct act_page *p, const json_t *result)
{
	const char *err =
	    json_string_value(json_object_get(result, "errorText"));
	const char *loader =
	    json_string_value(json_object_get(result, "loaderId"));

	if (err != NULL && err[0] != '\0') {
		if (p->blocked_host[0] != '\0' ||
		    page_proxy_refused(p, p->doc_host))
			page_blocked(p);
		else
			page_fail(p, CM_E_RUNTIME_ERROR,
			    "navigation failed: %s", err);
		return;
	}
	if (loader == NULL) { /* within the document: nothing loads */
		page_info(p);
		return;
	}
	snprintf(p->loader, sizeof(p->loader), "%s", loader);
	if (strcmp(p->doc_loader, loader) == 0)
		p->http_status = p->doc_status;
	p->want_load = true;
}

static void
cap_navigate(struct act_page *p)
{
	p->http_status = 0;
	p->loader[0] = '\0';
	page_send(p, "Page.navigate",
	    json_pack("{s:O}", "url", json_object_get(p->args, "url")),
	    page_navigated);
}

static void
page_history_done(struct act_page *p, const json_t *result)
{
	(void)result;
	p->want_load = true; /* the entry's loader is not known: any load */
}

static void
page_history(struct act_page *p, const json_t *result)
{
	json_int_t cur =
	    json_integer_value(json_object_get(result, "currentIndex"));
	const json_t *entries = json_object_get(result, "entries");
	const json_t *prev;

	if (cur < 1 ||
	    (prev = json_array_get(entries, (size_t)cur - 1)) == NULL) {
		page_fail(
		    p, CM_E_RUNTIME_ERROR, "there is no page to go back to");
		return;
	}
	p->loader[0] = '\0';
	page_send(p, "Page.navigateToHistoryEntry",
	    json_pack("{s:O}", "entryId", json_object_get(prev, "id")),
	    page_history_done);
}

static void
cap_back(struct act_page *p)
{
	page_send(p, "Page.getNavigationHistory", NULL, page_history);
}

/* ---- snapshot */

static void
page_snapshot_tree(struct act_page *p, const json_t *result)
{
	json_int_t max =
	    json_integer_value(json_object_get(p->args, "max_chars"));
	size_t limit = max <= 0                      ? CM_SNAPSHOT_CHARS_DEFAULT
	               : max < CM_SNAPSHOT_CHARS_MAX ? (size_t)max
	                                             : CM_SNAPSHOT_CHARS_MAX;
	char *text;
	bool cut;

	if (p->refs == NULL && (p->refs = calloc(CM_SNAPSHOT_REFS_MAX,
	                            sizeof(*p->refs))) == NULL) {
		page_fail(p, CM_E_RUNTIME_ERROR, "out of memory");
		return;
	}
	p->n_refs = 0;
	if (act_outline(json_object_get(result, "nodes"), limit, p->refs,
	        &p->n_refs, &text, &cut) != 0) {
		page_fail(p, CM_E_RUNTIME_ERROR,
		    "the page has no accessibility tree");
		return;
	}
	p->keep = json_pack("{s:s, s:b}", "snapshot", text, "truncated", cut);
	free(text);
	if (cut)
		json_object_set_new(p->keep, "note",
		    json_string("the outline was cut; raise max_chars or act "
		                "on the refs shown"));
	page_info(p);
}

static void
cap_snapshot(struct act_page *p)
{
	/* A document still loading has no stable tree: look again soon. */
	if (p->loading) {
		p->poll_at_ms = cm_mono_ms() + CM_WAIT_POLL_MS;
		return;
	}
	page_send(p, "Accessibility.getFullAXTree", NULL, page_snapshot_tree);
}

/* ---- extract_text */

static void
page_text(struct act_page *p, const json_t *result)
{
	const json_t *v = page_value(p, result);
	const char *s;
	size_t n;
	json_t *out;

	if (v == NULL)
		return;
	s = json_string_value(v) ? json_string_value(v) : "";
	n = strlen(s);
	if (n > CM_TEXT_MAX) {
		n = CM_TEXT_MAX;
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	out =
	    json_pack("{s:s%, s:b}", "text", s, n, "truncated", n < strlen(s));
	page_end(p, CM_OK, out);
}

static void
page_text_of(struct act_page *p)
{
	page_call_on(p, JS_TEXT, NULL, false, page_text);
}

static void
cap_extract_text(struct act_page *p)
{
	if (json_object_get(p->args, "ref") == NULL &&
	    json_object_get(p->args, "selector") == NULL) {
		/* The whole page: the body's text. */
		json_object_set_new(p->args, "selector", json_string("body"));
	}
	page_element(p, false, page_text_of);
}

/* ---- wait_for */

static void
page_wait_looked(struct act_page *p, const json_t *result)
{
	const json_t *v = page_value(p, result);
	bool found;

	if (p->done)
		return;
	found = json_object_get(p->args, "text") != NULL
	            ? json_is_true(v)
	            : json_is_true(v) || json_is_object(v);
	if (found) {
		page_end(p, CM_OK, json_pack("{s:b}", "found", 1));
		return;
	}
	if (cm_mono_ms() >= p->wait_end_ms) {
		page_fail(p, CM_E_ELEMENT_NOT_FOUND,
		    "nothing matched within timeout_ms");
		return;
	}
	p->poll_at_ms = cm_mono_ms() + CM_WAIT_POLL_MS;
}

static void
page_wait_doc(struct act_page *p, const json_t *result)
{
	const char *id = json_string_value(
	    json_object_get(json_object_get(result, "result"), "objectId"));
	const json_t *text = json_object_get(p->args, "text");
	const json_t *sel = json_object_get(p->args, "selector");

	if (id == NULL || strlen(id) >= sizeof(p->object)) {
		/* Between documents: look again. */
		json_t *none = json_object();

		page_wait_looked(p, none);
		json_decref(none);
		return;
	}
	snprintf(p->object, sizeof(p->object), "%s", id);
	if (text != NULL)
		page_call_on(p, JS_HAS_TEXT, json_pack("[O]", text), false,
		    page_wait_looked);
	else
		page_call_on(p,
		    "function(s){return this.querySelector(s)!==null;}",
		    json_pack("[O]", sel), false, page_wait_looked);
}

static void
page_wait_look(struct act_page *p)
{
	p->look_again = true;
	page_send(p, "Runtime.evaluate",
	    json_pack("{s:s}", "expression", "document"), page_wait_doc);
}

static void
cap_wait_for(struct act_page *p)
{
	json_int_t t =
	    json_integer_value(json_object_get(p->args, "timeout_ms"));

	if (json_object_get(p->args, "text") == NULL &&
	    json_object_get(p->args, "selector") == NULL) {
		page_fail(
		    p, CM_E_INVALID_ARGS, "wait_for needs text or a selector");
		return;
	}
	p->wait_end_ms = cm_mono_ms() + (t > 0 ? t : 0);
	if (t <= 0 || p->wait_end_ms > p->deadline_ms)
		p->wait_end_ms = p->deadline_ms;
	page_wait_look(p);
}

/* ---- the table */

static const struct {
	const char *name;
	void (*begin)(struct act_page *p);
} caps[] = {
    {"navigate", cap_navigate},
    {"back", cap_back},
    {"snapshot", cap_snapshot},
    {"extract_text", cap_extract_text},
    {"click", cap_click},
    {"type", cap_type},
    {"press", cap_press},
    {"wait_for", cap_wait_for},
    {"scroll", cap_scroll},
    {"screenshot", cap_screenshot},
};

#define N_CAPS (sizeof(caps) / sizeof(caps[0]))

bool
act_page_knows(const char *capability)
{
	for (size_t i = 0; i < N_CAPS; i++)
		if (strcmp(caps[i].name, capability) == 0)
			return true;
	return false;
}

json_t *
act_page_fetch_params(bool auth)
{
	/*
	 * Every request before it is sent, and every response: a redirect
	 * hop does not pause at the request stage, so its Location is
	 * checked when the 3xx arrives.
	 */
	return json_pack("{s:[{s:s, s:s}, {s:s, s:s}], s:b}", "patterns",
	    "urlPattern", "*", "requestStage", "Request", "urlPattern", "*",
	    "requestStage", "Response", "handleAuthRequests", auth);
}

/*
 * A challenge paused the request (Fetch.authRequired): the egress proxy's
 * own gets its credentials; any other (a server's, or another proxy's) is
 * cancelled, as nobody is there to answer it.  The secret goes to the
 * browser over the private CDP pipe only.
 */
static void
page_auth_required(struct act_page *p, const json_t *params)
{
	const char *id =
	    json_string_value(json_object_get(params, "requestId"));
	const json_t *ch = json_object_get(params, "authChallenge");
	const char *source = json_string_value(json_object_get(ch, "source"));
	const char *origin = json_string_value(json_object_get(ch, "origin"));
	json_t *answer;

	if (id == NULL)
		return;
	if (p->proxy != NULL && source != NULL && origin != NULL &&
	    strcmp(source, "Proxy") == 0 &&
	    strcmp(origin, p->proxy->origin) == 0)
		answer = json_pack("{s:s, s:s, s:s}", "response",
		    "ProvideCredentials", "username", p->proxy->user,
		    "password", p->proxy->password);
	else
		answer = json_pack("{s:s}", "response", "CancelAuth");
	act_cdp_call(p->cdp, p->session, "Fetch.continueWithAuth",
	    json_pack(
	        "{s:s, s:o}", "requestId", id, "authChallengeResponse", answer),
	    cm_mono_ms() + CM_BROWSER_START_MS, NULL, NULL);
}

/* True when a paused response is the egress proxy's refusal. */
static bool
page_egress_refused(const json_t *params)
{
	const json_t *h;
	size_t i;

	if (json_integer_value(json_object_get(params, "responseStatusCode")) !=
	    403)
		return false;
	json_array_foreach(json_object_get(params, "responseHeaders"), i, h)
	{
		const char *name =
		    json_string_value(json_object_get(h, "name"));

		if (name != NULL && strcasecmp(name, "x-spaced-egress") == 0)
			return true;
	}
	return false;
}

void
act_page_init(struct act_page *p, struct act_cdp *cdp,
    const struct cm_policy *policy, const char *session, const char *target)
{
	memset(p, 0, sizeof(*p));
	p->cdp = cdp;
	p->policy = policy;
	snprintf(p->session, sizeof(p->session), "%s", session);
	snprintf(p->target, sizeof(p->target), "%s", target);
	p->poll_at_ms = -1;
}

void
act_page_fini(struct act_page *p)
{
	act_page_abort(p);
	for (size_t i = 0; i < 2; i++)
		if (p->reset_cmd[i] > 0)
			act_cdp_forget(p->cdp, p->reset_cmd[i]);
	p->resetting = 0;
	free(p->refs);
	p->refs = NULL;
	p->n_refs = 0;
}

int
act_page_start(struct act_page *p, const char *capability, const json_t *args,
    int64_t deadline_ms)
{
	size_t i;

	if (p->busy)
		return -1;
	memset(&p->out, 0, sizeof(p->out));
	p->busy = true;
	p->done = false;
	p->started_ms = cm_mono_ms();
	p->deadline_ms = deadline_ms;
	p->poll_at_ms = -1;
	p->want_load = false;
	p->look_again = false;
	p->blocked_host[0] = '\0';
	p->doc_host[0] = '\0';
	snprintf(p->capability, sizeof(p->capability), "%s", capability);
	/* A copy: some capabilities fill in defaults. */
	p->args = json_is_object(args) ? json_deep_copy(args) : json_object();
	for (i = 0; i < N_CAPS; i++)
		if (strcmp(caps[i].name, capability) == 0)
			break;
	if (i == N_CAPS)
		page_fail(p, CM_E_CAPABILITY_UNKNOWN,
		    "the browser runtime has no such capability");
	else if (p->crashed)
		page_fail(p, CM_E_RUNTIME_CRASHED, "the page crashed");
	else
		caps[i].begin(p);
	return 0;
}

/*
 * The absolute http(s) URL a 3xx response sends its request to, or NULL
 * when it is not a redirect to another origin (a relative Location stays
 * on the host that was allowed already).
 */
static const char *
page_redirect_target(const json_t *params)
{
	json_int_t status =
	    json_integer_value(json_object_get(params, "responseStatusCode"));
	const json_t *h;
	size_t i;

	if (status < 300 || status > 399)
		return NULL;
	json_array_foreach(json_object_get(params, "responseHeaders"), i, h)
	{
		const char *name =
		    json_string_value(json_object_get(h, "name"));
		const char *value =
		    json_string_value(json_object_get(h, "value"));

		if (name != NULL && value != NULL &&
		    strcasecmp(name, "location") == 0 &&
		    (strncasecmp(value, "http://", 7) == 0 ||
		        strncasecmp(value, "https://", 8) == 0 ||
		        strncmp(value, "//", 2) == 0))
			return value;
	}
	return NULL;
}

/*
 * A request of the page paused (Fetch): let it through, or fail it as
 * blocked by the client.  Only its host is kept, never the URL.
 */
static void
page_request_paused(struct act_page *p, const json_t *params)
{
	const char *id =
	    json_string_value(json_object_get(params, "requestId"));
	const json_t *req = json_object_get(params, "request");
	const char *url = json_string_value(json_object_get(req, "url"));
	const char *type =
	    json_string_value(json_object_get(params, "resourceType"));
	const char *frame =
	    json_string_value(json_object_get(params, "frameId"));
	/* The page's own document: the call that led there fails. */
	bool doc = type != NULL && strcmp(type, "Document") == 0 &&
	           frame != NULL &&
	           (p->frame[0] == '\0' || strcmp(frame, p->frame) == 0);
	char host[CM_HOST_MAX + 3] = "";
	bool ok;

	if (id == NULL || url == NULL)
		return;
	if (json_object_get(params, "responseStatusCode") != NULL ||
	    json_object_get(params, "responseErrorReason") != NULL) {
		/* The response stage: the egress proxy refused the request
		 * (its host resolved to an address the policy refuses, say),
		 * or a redirect names where it leads. */
		if (page_egress_refused(params)) {
			cm_url_host(url, host, sizeof(host));
			goto refuse;
		}
		/* No response at all: a refused CONNECT, perhaps. */
		if (doc &&
		    json_object_get(params, "responseErrorReason") != NULL &&
		    cm_url_host(url, host, sizeof(host)) == 0)
			page_proxy_refused(p, host);
		url = page_redirect_target(params);
		if (url == NULL) {
			act_cdp_call(p->cdp, p->session,
			    "Fetch.continueResponse",
			    json_pack("{s:s}", "requestId", id),
			    cm_mono_ms() + CM_BROWSER_START_MS, NULL, NULL);
			return;
		}
	}
	if (strncmp(url, "data:", 5) == 0 || strncmp(url, "blob:", 5) == 0 ||
	    strncmp(url, "about:", 6) == 0)
		ok = true;
	else
		ok = p->policy == NULL ||
		     (cm_url_host(url, host, sizeof(host)) == 0 &&
		         cm_policy_allows_host(p->policy, host));
	if (ok) {
		if (doc && cm_url_host(url, host, sizeof(host)) == 0)
			snprintf(p->doc_host, sizeof(p->doc_host), "%s", host);
		act_cdp_call(p->cdp, p->session, "Fetch.continueRequest",
		    json_pack("{s:s}", "requestId", id),
		    cm_mono_ms() + CM_BROWSER_START_MS, NULL, NULL);
		return;
	}
refuse:
	p->blocked++;
	act_cdp_call(p->cdp, p->session, "Fetch.failRequest",
	    json_pack("{s:s, s:s}", "requestId", id, "errorReason",
	        "BlockedByClient"),
	    cm_mono_ms() + CM_BROWSER_START_MS, NULL, NULL);
	if (doc)
		snprintf(p->blocked_host, sizeof(p->blocked_host), "%s",
		    host[0] ? host : "a host that is not http(s)");
}

void
act_page_event(struct act_page *p, const char *session, const char *method,
    const json_t *params)
{
	const json_t *frame;
	const char *id;

	if (session == NULL || strcmp(session, p->session) != 0)
		return;
	if (strcmp(method, "Fetch.requestPaused") == 0) {
		page_request_paused(p, params);
	} else if (strcmp(method, "Fetch.authRequired") == 0) {
		page_auth_required(p, params);
	} else if (strcmp(method, "Page.frameNavigated") == 0) {
		frame = json_object_get(params, "frame");
		id = json_string_value(json_object_get(frame, "id"));
		if (id != NULL && json_object_get(frame, "parentId") == NULL) {
			snprintf(p->frame, sizeof(p->frame), "%s", id);
			p->n_refs = 0; /* a new document: refs are stale */
		}
	} else if (strcmp(method, "Page.frameStartedLoading") == 0 ||
	           strcmp(method, "Page.frameStoppedLoading") == 0) {
		id = json_string_value(json_object_get(params, "frameId"));
		if (id != NULL &&
		    (p->frame[0] == '\0' || strcmp(id, p->frame) == 0))
			p->loading =
			    strcmp(method, "Page.frameStartedLoading") == 0;
	} else if (strcmp(method, "Network.responseReceived") == 0) {
		id = json_string_value(json_object_get(params, "loaderId"));
		/* It may come before the reply that names the loader. */
		if (id != NULL && strlen(id) < sizeof(p->doc_loader) &&
		    json_is_string(json_object_get(params, "type")) &&
		    strcmp(json_string_value(json_object_get(params, "type")),
		        "Document") == 0) {
			snprintf(
			    p->doc_loader, sizeof(p->doc_loader), "%s", id);
			p->doc_status = (int)json_integer_value(json_object_get(
			    json_object_get(params, "response"), "status"));
			if (strcmp(id, p->loader) == 0)
				p->http_status = p->doc_status;
		}
	} else if (strcmp(method, "Page.loadEventFired") == 0) {
		if (p->busy && !p->done && p->want_load) {
			p->want_load = false;
			page_info(p);
		}
	} else if (strcmp(method, "Page.javascriptDialogOpening") == 0) {
		/* Nobody is there to answer a dialog: dismiss it. */
		act_cdp_call(p->cdp, p->session, "Page.handleJavaScriptDialog",
		    json_pack("{s:b}", "accept", 0),
		    cm_mono_ms() + CM_WAIT_POLL_MS * 10, NULL, NULL);
	} else if (strcmp(method, "Inspector.targetCrashed") == 0) {
		act_page_lost(p, "the page crashed");
	}
}

int64_t
act_page_tick(struct act_page *p, int64_t now_ms)
{
	if (!p->busy || p->done)
		return -1;
	if (now_ms >= p->deadline_ms && p->cmd == 0) {
		page_fail(p, CM_E_TASK_TIMEOUT, "the task's time ran out");
		return -1;
	}
	if (p->poll_at_ms >= 0 && now_ms >= p->poll_at_ms && p->cmd == 0) {
		p->poll_at_ms = -1;
		if (strcmp(p->capability, "snapshot") == 0)
			cap_snapshot(p);
		else
			page_wait_look(p);
	}
	if (p->done)
		return -1;
	return p->poll_at_ms >= 0 ? p->poll_at_ms : p->deadline_ms;
}

bool
act_page_take(struct act_page *p, struct act_outcome *out)
{
	if (!p->busy || !p->done)
		return false;
	*out = p->out;
	memset(&p->out, 0, sizeof(p->out));
	json_decref(p->args);
	p->args = NULL;
	json_decref(p->keep); /* a result that was being built when it failed */
	p->keep = NULL;
	p->busy = p->done = false;
	return true;
}

/* A reply to one of the reset's commands; any error means not clean. */
static void
page_reset_reply(void *arg, const json_t *result, const json_t *error)
{
	struct act_page *p = arg;

	(void)result;
	if (p->resetting == 0)
		return;
	/* A script ended by terminateExecution reports an error: that is
	 * the reset working.  Only silence or a lost browser is not. */
	if (error != NULL) {
		json_int_t code =
		    json_integer_value(json_object_get(error, "code"));

		if (code == ACT_CDP_E_TIMEOUT || code == ACT_CDP_E_CLOSED)
			p->reset_failed = true;
	}
	p->resetting--;
}

int
act_page_reset(struct act_page *p)
{
	static const char *const steps[] = {
	    "Page.stopLoading", "Runtime.terminateExecution"};
	int64_t deadline = cm_mono_ms() + CM_PAGE_RESET_MS;

	p->reset_failed = false;
	p->resetting = 0;
	for (size_t i = 0; i < 2; i++) {
		p->reset_cmd[i] = act_cdp_call(p->cdp, p->session, steps[i],
		    NULL, deadline, page_reset_reply, p);
		if (p->reset_cmd[i] < 0) {
			p->reset_cmd[i] = 0;
			p->reset_failed = true;
			return -1;
		}
		p->resetting++;
	}
	return 0;
}

bool
act_page_rested(struct act_page *p, bool *clean)
{
	*clean = !p->reset_failed;
	return p->resetting == 0;
}

void
act_page_lost(struct act_page *p, const char *why)
{
	p->crashed = true;
	if (p->busy && !p->done) {
		act_page_abort(p);
		p->busy = true;
		page_fail(p, CM_E_RUNTIME_CRASHED, "%s", why);
	}
}

void
act_page_abort(struct act_page *p)
{
	if (p->cmd > 0)
		act_cdp_forget(p->cdp, p->cmd);
	p->cmd = 0;
	p->next = NULL;
	p->want_load = false;
	p->poll_at_ms = -1;
	json_decref(p->keep);
	p->keep = NULL;
	json_decref(p->args);
	p->args = NULL;
	free(p->out.result);
	free(p->out.artifact);
	memset(&p->out, 0, sizeof(p->out));
	p->busy = p->done = false;
}
