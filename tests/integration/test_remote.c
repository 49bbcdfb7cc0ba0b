/*
 * test_remote.c: the cdp driver (space-actor/driver_cdp.c) and its
 * websocket transport (cdp_ws.c) on a real Chromium that the test runs
 * with a DevTools port, driven as the actor drives them: both endpoint
 * forms, a browser context per Space (no cookie crosses), a close that
 * leaves the browser running, a dropped connection and the reconnect, a
 * message over the bound refused, errors that never name the
 * endpoint, and a tab used on a browser another Space's idle actor is
 * on too.
 */
#include <criterion/criterion.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdp.h"
#include "cdp_ws.h"
#include "clock.h"
#include "driver.h"
#include "driver_fixture.h"
#include "pages.h"
#include "remote_fixture.h"

#define WAIT_MS 30000 /* the most one call may take here */

static struct cm_config cfg;
static struct tk_pages *pages;
static int port;
static struct rf_browser br;

static void
setup(void)
{
	memset(&cfg, 0, sizeof(cfg));
	memset(&br, 0, sizeof(br));
	cr_assert_not_null(pages = tk_pages_start(&port));
	rf_start(&br, 0);
}

static void
teardown(void)
{
	rf_stop(&br);
	tk_pages_stop(pages);
}

TestSuite(remote, .init = setup, .fini = teardown, .timeout = 240);

static void
env_for(struct act_env *env, const char *space, const char *endpoint)
{
	memset(env, 0, sizeof(*env));
	env->space_id = space;
	env->instance_id = "0190a0b0-0000-7000-8000-0000000000bb";
	env->driver = CM_DRIVER_CDP;
	env->endpoint = endpoint;
	env->cfg = &cfg;
}

/* The Spaces' drivers open on the browser: while a call runs on one,
 * the other is served, as its idle actor's loop would serve it (a client
 * of the browser that does not read holds every new page). */
static struct act_driver *spaces[2];

/* Runs one call to its end as the actor's loop would. */
static struct act_outcome
run(struct act_driver *d, const char *cap, const char *args_json,
    json_t **result)
{
	return df_run_beside(&act_driver_cdp, d,
	    spaces[0] != d ? spaces[0] : spaces[1], cap, args_json, result,
	    WAIT_MS);
}

static const char *
str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static void
go(struct act_driver *d, const char *path)
{
	char args[256];
	struct act_outcome o;

	snprintf(args, sizeof(args), "{\"url\":\"http://127.0.0.1:%d%s\"}",
	    port, path);
	o = run(d, "navigate", args, NULL);
	cr_assert_eq(o.err, CM_OK, "navigate %s: %s %s", path,
	    cm_err_code(o.err), o.message);
}

/* The text of what args selects on the page. */
static void
text_is(struct act_driver *d, const char *args, const char *want)
{
	struct act_outcome o;
	json_t *res;

	o = run(d, "extract_text", args, &res);
	cr_assert_eq(o.err, CM_OK, "extract_text: %s", o.message);
	cr_assert_str_eq(str(res, "text"), want);
	json_decref(res);
}

/* The cookie page's line of cookies (pages.h). */
#define JAR "{\"selector\":\"#c\"}"

static struct act_driver *
open_on(struct act_env *env)
{
	struct act_driver *d;
	char err[256];

	cr_assert_eq(
	    act_driver_cdp.open(env, &d, err, sizeof(err)), 0, "%s", err);
	return d;
}

Test(remote, two_spaces_on_one_browser_share_no_cookie_and_close_leaves_it)
{
	char http_ep[128], ws_ep[512];
	struct act_env a_env, b_env;
	struct act_driver *a, *b;
	struct act_outcome o;
	json_t *res;

	snprintf(http_ep, sizeof(http_ep), "http://127.0.0.1:%d", br.port);
	snprintf(
	    ws_ep, sizeof(ws_ep), "ws://127.0.0.1:%d%s", br.port, br.ws_path);
	env_for(&a_env, "0190a0b0-0000-7000-8000-000000000001", http_ep);
	env_for(&b_env, "0190a0b0-0000-7000-8000-000000000002", ws_ep);

	/* Space A, through /json/version: a snapshot of a real page. */
	spaces[0] = a = open_on(&a_env);
	go(a, "/");
	o = run(a, "snapshot", "{}", &res);
	cr_assert_eq(o.err, CM_OK, "snapshot: %s", o.message);
	cr_assert_str_eq(str(res, "title"), "Home");
	cr_assert_not_null(strstr(str(res, "snapshot"), "heading \"Welcome\""),
	    "%s", str(res, "snapshot"));
	json_decref(res);
	go(a, "/cookie?set=alpha");
	go(a, "/cookie");
	text_is(a, JAR, "cookies: alpha=1.");

	/* Space B, on the websocket URL itself: its own context. */
	spaces[1] = b = open_on(&b_env);
	go(b, "/cookie");
	text_is(b, JAR, "cookies: none.");

	/* Closing a Space closes its context, never the browser. */
	act_driver_cdp.close(a);
	act_driver_cdp.close(b);
	spaces[0] = spaces[1] = NULL;
	cr_assert(rf_running(&br), "closing a Space closed the browser");
	a = open_on(&a_env);
	go(a, "/cookie");
	text_is(a, JAR, "cookies: none.");
	act_driver_cdp.close(a);
	cr_assert(rf_running(&br));
}

Test(remote, a_dropped_connection_fails_the_task_and_the_next_connects_again)
{
	char ep[128];
	struct act_env env;
	struct act_driver *d;
	struct act_outcome o;
	struct act_call call = {.task_id = "t", .request_id = "r"};
	json_t *args;
	int old_port = br.port;

	snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", br.port);
	env_for(&env, "0190a0b0-0000-7000-8000-000000000003", ep);
	d = open_on(&env);
	go(d, "/");

	/* A call in progress when the browser goes fails runtime_crashed. */
	args = json_loads(
	    "{\"text\":\"never there\",\"timeout_ms\":20000}", 0, NULL);
	call.capability = "wait_for";
	call.args = args;
	call.deadline_ms = cm_mono_ms() + WAIT_MS;
	cr_assert_eq(act_driver_cdp.start(d, &call), 0);
	rf_kill(&br);
	memset(&o, 0, sizeof(o));
	for (int64_t end = cm_mono_ms() + WAIT_MS;;) {
		struct pollfd fds[8];
		int64_t wake;
		int n = act_driver_cdp.pollfds(d, fds, 8, &wake);

		cr_assert_lt(cm_mono_ms(), end, "the call did not end");
		poll(fds, (nfds_t)n, 100);
		if (act_driver_cdp.step(d, fds, n, &o) == ACT_DONE)
			break;
	}
	json_decref(args);
	free(o.result);
	cr_assert_eq(o.err, CM_E_RUNTIME_CRASHED, "%s: %s", cm_err_code(o.err),
	    o.message);
	cr_assert_eq(act_driver_cdp.reset(d), 0);

	/* A browser on the same port again: the next call connects. */
	rf_start(&br, old_port);
	go(d, "/next");
	text_is(d, "{\"selector\":\"h1\"}", "Second page");
	act_driver_cdp.close(d);
}

Test(remote, an_endpoint_is_never_named_in_an_error)
{
	static const char *const bad[] = {"ftp://secret-host.invalid:9/",
	    "secret-host.invalid:9222", "http://user:pw@secret-host.invalid:1",
	    NULL};
	struct act_env env;
	struct act_driver *d;
	struct act_outcome o;
	char err[256];

	for (size_t i = 0; bad[i] != NULL; i++) {
		env_for(&env, "0190a0b0-0000-7000-8000-000000000004", bad[i]);
		cr_assert_neq(act_driver_cdp.open(&env, &d, err, sizeof(err)),
		    0, "%s", bad[i]);
		cr_assert_null(strstr(err, "secret-host"), "%s", err);
	}
	/* Nobody listens there: the call fails, naming no host or port. */
	env_for(
	    &env, "0190a0b0-0000-7000-8000-000000000004", "http://127.0.0.1:1");
	d = open_on(&env);
	o = run(d, "snapshot", "{}", NULL);
	cr_assert_eq(o.err, CM_E_RUNTIME_CRASHED, "%s", cm_err_code(o.err));
	cr_assert_null(strstr(o.message, "127.0.0.1"), "%s", o.message);
	cr_assert_null(strstr(o.message, ":1"), "%s", o.message);
	act_driver_cdp.close(d);
}

/* ---- the transport alone */

struct rig {
	struct act_ws *ws;
	struct act_cdp *cdp;
	int replies;
	json_int_t error_code;
	char last[128]; /* the last reply's targetId or sessionId */
};

static int
rig_send(void *arg, const char *msg, size_t len)
{
	struct rig *r = arg;

	return act_ws_send(r->ws, msg, len);
}

static int
rig_msg(void *arg, const char *msg, size_t len)
{
	struct rig *r = arg;

	return act_cdp_receive(r->cdp, msg, len);
}

static void
rig_reply(void *arg, const json_t *result, const json_t *error)
{
	struct rig *r = arg;

	const char *id = json_string_value(json_object_get(result, "targetId"));

	if (id == NULL)
		id = json_string_value(json_object_get(result, "sessionId"));
	snprintf(r->last, sizeof(r->last), "%s", id ? id : "");
	r->replies++;
	r->error_code =
	    error ? json_integer_value(json_object_get(error, "code")) : 0;
}

/* Steps the transport until cond (replies reach want) or it breaks. */
static int
rig_until(struct rig *r, int want)
{
	for (int64_t end = cm_mono_ms() + WAIT_MS; r->replies < want;) {
		struct pollfd fds[2];
		int n = act_ws_pollfds(r->ws, fds, 2);

		cr_assert_lt(cm_mono_ms(), end, "no reply");
		poll(fds, (nfds_t)n, 100);
		if (act_ws_step(r->ws, fds, n, rig_msg, r) != 0)
			return -1;
	}
	return 0;
}

Test(remote, a_message_over_the_bound_fails_its_call_and_the_connection_stays)
{
	struct rig r = {0};
	char ep[128], err[256], expr[128], session[128];
	const char *why = NULL;

	snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", br.port);
	cr_assert_eq(
	    act_ws_open(ep, cm_mono_ms() + WAIT_MS, &r.ws, err, sizeof(err)), 0,
	    "%s", err);
	cr_assert_not_null(r.cdp = act_cdp_new(rig_send, NULL, &r));
	for (int64_t end = cm_mono_ms() + WAIT_MS; !act_ws_ready(r.ws);) {
		struct pollfd fds[2];
		int n = act_ws_pollfds(r.ws, fds, 2);

		cr_assert_lt(cm_mono_ms(), end, "the websocket never opened");
		poll(fds, (nfds_t)n, 100);
		cr_assert_eq(act_ws_step(r.ws, fds, n, rig_msg, &r), 0,
		    "the websocket failed");
	}
	/* Under the bound: a reply. */
	cr_assert_gt(act_cdp_call(r.cdp, NULL, "Browser.getVersion", NULL,
	                 cm_mono_ms() + WAIT_MS, rig_reply, &r),
	    0);
	cr_assert_eq(rig_until(&r, 1), 0);
	cr_assert_eq(r.error_code, 0);

	/* A page's reply one byte over CM_CDP_MSG_MAX of string alone. */
	snprintf(expr, sizeof(expr), "'x'.repeat(%d)", CM_CDP_MSG_MAX + 1);
	cr_assert_gt(act_cdp_call(r.cdp, NULL, "Target.createTarget",
	                 json_pack("{s:s}", "url", "about:blank"),
	                 cm_mono_ms() + WAIT_MS, rig_reply, &r),
	    0);
	cr_assert_eq(rig_until(&r, 2), 0);
	cr_assert_gt(
	    act_cdp_call(r.cdp, NULL, "Target.attachToTarget",
	        json_pack("{s:s, s:b}", "targetId", r.last, "flatten", 1),
	        cm_mono_ms() + WAIT_MS, rig_reply, &r),
	    0);
	cr_assert_eq(rig_until(&r, 3), 0);
	cr_assert_neq(r.last[0], '\0', "no session");
	snprintf(session, sizeof(session), "%s", r.last);
	cr_assert_gt(
	    act_cdp_call(r.cdp, session, "Runtime.evaluate",
	        json_pack("{s:s, s:b}", "expression", expr, "returnByValue", 1),
	        cm_mono_ms() + WAIT_MS, rig_reply, &r),
	    0);
	/* The reply is dropped: its call fails, the connection stays. */
	cr_assert_eq(rig_until(&r, 4), 0, "the connection broke");
	cr_assert_eq(r.error_code, ACT_CDP_E_TOO_BIG, "error %lld",
	    (long long)r.error_code);
	cr_assert_not(act_ws_broken(r.ws, &why), "%s", why ? why : "");

	/* The next call, on the same connection, and one just under the
	 * bound in many frames of Chromium's own making. */
	cr_assert_gt(act_cdp_call(r.cdp, NULL, "Browser.getVersion", NULL,
	                 cm_mono_ms() + WAIT_MS, rig_reply, &r),
	    0);
	cr_assert_eq(rig_until(&r, 5), 0);
	cr_assert_eq(r.error_code, 0);
	snprintf(expr, sizeof(expr), "'x'.repeat(%d)", CM_CDP_MSG_MAX - 4096);
	cr_assert_gt(
	    act_cdp_call(r.cdp, session, "Runtime.evaluate",
	        json_pack("{s:s, s:b}", "expression", expr, "returnByValue", 1),
	        cm_mono_ms() + WAIT_MS, rig_reply, &r),
	    0);
	cr_assert_eq(rig_until(&r, 6), 0);
	cr_assert_eq(r.error_code, 0, "error %lld", (long long)r.error_code);
	act_cdp_free(r.cdp);
	act_ws_free(r.ws);
	cr_assert(rf_running(&br));
}

/* Lists a's tabs until tab 1 is titled title, for at most WAIT_MS. */
static void
tab_one_titled(struct act_driver *a, const char *title)
{
	int64_t end = cm_mono_ms() + WAIT_MS;

	for (;;) {
		json_t *res;
		struct act_outcome o =
		    run(a, "tabs", "{\"action\":\"list\"}", &res);
		const json_t *t =
		    json_array_get(json_object_get(res, "tabs"), 1);

		cr_assert_eq(o.err, CM_OK, "tabs: %s", o.message);
		if (t != NULL && strcmp(str(t, "title"), title) == 0) {
			json_decref(res);
			return;
		}
		cr_assert_lt(cm_mono_ms(), end, "no tab \"%s\": %s", title,
		    json_dumps(res, 0));
		json_decref(res);
	}
}

/* A tab of a page on a shared browser is a page of the Space's: held to
 * the network policy before its first request, listed, selected and
 * closed, while another Space's actor on the browser, idle and served as
 * its loop serves it, holds none of it; and that Space's own pages still
 * work. */
Test(remote, a_tab_is_used_on_a_shared_browser)
{
	static const char rules[] =
	    "{\"allow_hosts\": [\"127.0.0.1\", \"localhost\"]}";
	char ep[128], err[256];
	struct cm_policy policy;
	struct act_env a_env, b_env;
	struct act_driver *a, *b;
	struct act_outcome o;
	json_t *res;

	cr_assert_eq(
	    cm_policy_parse(rules, strlen(rules), &policy, err, sizeof(err)), 0,
	    "%s", err);
	snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", br.port);
	env_for(&a_env, "0190a0b0-0000-7000-8000-000000000001", ep);
	env_for(&b_env, "0190a0b0-0000-7000-8000-000000000002", ep);
	a_env.policy = b_env.policy = &policy;
	b = open_on(&b_env);
	go(b, "/"); /* b is set up, then served as its idle loop would */
	spaces[0] = b;
	spaces[1] = a = open_on(&a_env);
	go(a, "/opens");
	o = run(a, "click", "{\"selector\":\"#tab\"}", NULL);
	cr_assert_eq(o.err, CM_OK, "click: %s", o.message);
	tab_one_titled(a, "Leaks");
	o = run(a, "tabs", "{\"action\":\"select\",\"index\":1}", &res);
	cr_assert_eq(o.err, CM_OK, "select: %s", o.message);
	cr_assert_str_eq(str(json_object_get(res, "page"), "title"), "Leaks");
	json_decref(res);
	o = run(a, "tabs", "{\"action\":\"close\",\"index\":1}", NULL);
	cr_assert_eq(o.err, CM_OK, "close: %s", o.message);
	o = run(a, "click", "{\"selector\":\"#win\"}", &res);
	cr_assert_eq(o.err, CM_OK, "click: %s", o.message);
	cr_assert_eq(json_integer_value(json_object_get(res, "tabs_opened")), 1,
	    "%s", json_dumps(res, 0));
	json_decref(res);
	o = run(a, "tabs", "{\"action\":\"list\"}", &res);
	cr_assert_eq(o.err, CM_OK, "tabs: %s", o.message);
	json_decref(res);
	cr_assert_eq(tk_pages_hits(pages, "/leaks"), 1);
	/* Neither the tab's picture nor the window opened straight at a
	 * refused host went out. */
	cr_assert_eq(tk_pages_hits(pages, "/tracker"), 0);
	/* b's page still works, and a tab of b's is b's own. */
	go(b, "/opens");
	o = run(b, "click", "{\"selector\":\"#tab\"}", NULL);
	cr_assert_eq(o.err, CM_OK, "click: %s", o.message);
	tab_one_titled(b, "Leaks");
	cr_assert_eq(tk_pages_hits(pages, "/tracker"), 0);
	spaces[0] = spaces[1] = NULL;
	act_driver_cdp.close(a);
	act_driver_cdp.close(b);
}
