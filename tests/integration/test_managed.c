/*
 * test_managed.c: the managed driver (space-actor/driver_managed.c) on a
 * real Chromium, driven as the actor drives it, against the page server
 * of pages.h: navigate, snapshot with refs, click and type by ref, back,
 * extract_text, wait_for and its cancel, a stale ref, a browser killed
 * mid-task and relaunched, and an ephemeral profile that is gone at
 * close.
 */
#include <criterion/criterion.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capability.h"
#include "clock.h"
#include "driver.h"
#include "driver_fixture.h"
#include "pages.h"
#include "testkit.h"

#define WAIT_MS 30000 /* the most one call may take here */

static struct df_world w;

static void
setup(void)
{
	df_world_setup(&w, "managed", "0190a0b0-0000-7000-8000-000000000001",
	    "0190a0b0-0000-7000-8000-0000000000aa");
}

static void
teardown(void)
{
	df_world_teardown(&w);
}

TestSuite(managed, .init = setup, .fini = teardown, .timeout = 240);

/* Runs one call to its end as the actor's loop would. */
static struct act_outcome
run(struct act_driver *d, const char *cap, const char *args_json,
    json_t **result)
{
	return df_run(&act_driver_managed, d, cap, args_json, result, WAIT_MS);
}

static const char *
str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static void
navigate_home(struct act_driver *d)
{
	char args[128];
	json_t *res;
	struct act_outcome o;

	snprintf(
	    args, sizeof(args), "{\"url\":\"http://127.0.0.1:%d/\"}", w.port);
	o = run(d, "navigate", args, &res);
	cr_assert_eq(
	    o.err, CM_OK, "navigate: %s %s", cm_err_code(o.err), o.message);
	cr_assert_str_eq(str(res, "title"), "Home");
	cr_assert_eq(json_integer_value(json_object_get(res, "status")), 200);
	json_decref(res);
}

Test(managed, an_agent_session_on_a_real_page)
{
	struct act_driver *d;
	struct act_outcome o;
	char err[256], ref[32], args[256];
	json_t *res;
	const char *outline;

	cr_assert_eq(act_driver_managed.open(&w.env, &d, err, sizeof(err)), 0,
	    "%s", err);
	navigate_home(d);

	/* The outline names the page's parts, with refs to act on. */
	o = run(d, "snapshot", "{}", &res);
	cr_assert_eq(o.err, CM_OK, "snapshot: %s", o.message);
	cr_assert_str_eq(str(res, "title"), "Home");
	outline = str(res, "snapshot");
	cr_assert_not_null(
	    strstr(outline, "heading \"Welcome\""), "%s", outline);
	cr_assert_not_null(
	    strstr(outline, "text \"The spaced test site.\""), "%s", outline);
	cr_assert(json_is_false(json_object_get(res, "truncated")));
	df_ref_of(outline, "link \"Next page\"", ref, sizeof(ref));
	json_decref(res);

	/* Click the link by its ref: the next page loads. */
	snprintf(args, sizeof(args), "{\"ref\":\"%s\"}", ref);
	o = run(d, "click", args, NULL);
	cr_assert_eq(o.err, CM_OK, "click: %s", o.message);
	snprintf(args, sizeof(args),
	    "{\"text\":\"You followed the link.\","
	    "\"timeout_ms\":10000}");
	o = run(d, "wait_for", args, NULL);
	cr_assert_eq(o.err, CM_OK, "wait_for: %s", o.message);
	cr_assert_eq(tk_pages_hits(w.pages, "/next"), 1);

	/* The old page's refs are stale now. */
	snprintf(args, sizeof(args), "{\"ref\":\"%s\"}", ref);
	o = run(d, "click", args, NULL);
	cr_assert_eq(o.err, CM_E_ELEMENT_NOT_FOUND);
	cr_assert_not_null(strstr(o.message, "snapshot"), "%s", o.message);
	o = run(d, "click", "{\"ref\":\"e999\"}", NULL);
	cr_assert_eq(o.err, CM_E_ELEMENT_NOT_FOUND);
	o = run(d, "click", "{\"selector\":\"#nothing-here\"}", NULL);
	cr_assert_eq(o.err, CM_E_ELEMENT_NOT_FOUND);

	/* Back to the home page; type into the field by ref and submit. */
	o = run(d, "back", "{}", &res);
	cr_assert_eq(o.err, CM_OK, "back: %s", o.message);
	cr_assert_str_eq(str(res, "title"), "Home");
	json_decref(res);
	o = run(d, "snapshot", "{}", &res);
	cr_assert_eq(o.err, CM_OK);
	df_ref_of(str(res, "snapshot"), "textbox \"Query\"", ref, sizeof(ref));
	json_decref(res);
	snprintf(args, sizeof(args),
	    "{\"ref\":\"%s\",\"text\":\"spaces\",\"submit\":true}", ref);
	o = run(d, "type", args, NULL);
	cr_assert_eq(o.err, CM_OK, "type: %s", o.message);
	o = run(d, "wait_for",
	    "{\"selector\":\"h1\",\"text\":\"You searched\","
	    "\"timeout_ms\":10000}",
	    NULL);
	cr_assert_eq(o.err, CM_OK, "wait_for: %s", o.message);
	cr_assert_eq(tk_pages_hits(w.pages, "/search"), 1);
	o = run(d, "extract_text", "{}", &res);
	cr_assert_eq(o.err, CM_OK);
	cr_assert_not_null(strstr(str(res, "text"), "You searched the site."),
	    "%s", str(res, "text"));
	json_decref(res);
	o = run(d, "extract_text", "{\"selector\":\"h1\"}", &res);
	cr_assert_eq(o.err, CM_OK);
	cr_assert_str_eq(str(res, "text"), "Results");
	json_decref(res);

	/* A bounded outline says it was cut; max_chars bounds the outline,
	 * under the page's header lines (url, title). */
	o = run(d, "snapshot", "{\"max_chars\":20}", &res);
	cr_assert_eq(o.err, CM_OK);
	cr_assert(json_is_true(json_object_get(res, "truncated")));
	cr_assert_eq(strncmp(str(res, "snapshot"), "url: ", 5), 0, "%s",
	    str(res, "snapshot"));
	/* The header's lines, then the outline's (each "- ", indented). */
	outline = str(res, "snapshot");
	while (*outline != '\0' && *outline != '-' && *outline != ' ')
		outline = strchr(outline, '\n') != NULL
		              ? strchr(outline, '\n') + 1
		              : outline + strlen(outline);
	cr_assert_leq(strlen(outline), 20, "%s", outline);
	json_decref(res);

	act_driver_managed.close(d);
}

/* Cancels what runs and steps the reset to its end (ACT_CLEAN, CM_OK),
 * as the actor's loop does; the abandoned call must report nothing. */
static void
rest(struct act_driver *d)
{
	struct act_outcome o;

	cr_assert_eq(act_driver_managed.cancel(d), 0);
	cr_assert_eq(act_driver_managed.reset(d), 1);
	for (int64_t end = cm_mono_ms() + WAIT_MS;;) {
		struct pollfd fds[8];
		int64_t wake, now = cm_mono_ms();
		int n = act_driver_managed.pollfds(d, fds, 8, &wake);
		enum act_state state;

		cr_assert_lt(now, end, "the reset never ended");
		poll(fds, (nfds_t)n,
		    wake < 0      ? 100
		    : wake <= now ? 0
		                  : (int)(wake - now));
		memset(&o, 0, sizeof(o));
		state = act_driver_managed.step(d, fds, n, &o);
		cr_assert_neq(state, ACT_DONE, "the cancelled call reported");
		if (state == ACT_CLEAN) {
			cr_assert_eq(o.err, CM_OK, "%s", cm_err_code(o.err));
			return;
		}
	}
}

/* The text of the cookie page's line of cookies. */
static void
jar_is(struct act_driver *d, const char *want)
{
	struct act_outcome o;
	json_t *res;

	o = run(d, "extract_text", "{\"selector\":\"#c\"}", &res);
	cr_assert_eq(o.err, CM_OK, "extract_text: %s", o.message);
	cr_assert_str_eq(str(res, "text"), want);
	json_decref(res);
}

/* Navigate's status is the HTTP status of the document it ended on: where
 * a redirect led, a 404 as a 404, and none for a document that came from
 * no server. */
Test(managed, navigate_reports_the_documents_http_status)
{
	struct act_driver *d;
	struct act_outcome o;
	char err[256], args[128];
	json_t *res;

	cr_assert_eq(act_driver_managed.open(&w.env, &d, err, sizeof(err)), 0,
	    "%s", err);
	navigate_home(d);

	snprintf(args, sizeof(args),
	    "{\"url\":\"http://127.0.0.1:%d/redirect\"}", w.port);
	o = run(d, "navigate", args, &res);
	cr_assert_eq(o.err, CM_OK, "%s", o.message);
	cr_assert_str_eq(str(res, "title"), "Next");
	cr_assert_eq(json_integer_value(json_object_get(res, "status")), 200);
	json_decref(res);

	snprintf(args, sizeof(args),
	    "{\"url\":\"http://127.0.0.1:%d/no-such-page\"}", w.port);
	o = run(d, "navigate", args, &res);
	cr_assert_eq(o.err, CM_OK, "%s", o.message);
	cr_assert_eq(json_integer_value(json_object_get(res, "status")), 404);
	json_decref(res);

	o = run(d, "navigate",
	    "{\"url\":\"data:text/html,<title>Inline</title>\"}", &res);
	cr_assert_eq(o.err, CM_OK, "%s", o.message);
	cr_assert_str_eq(str(res, "title"), "Inline");
	cr_assert(json_is_null(json_object_get(res, "status")), "status %s",
	    json_dumps(json_object_get(res, "status"), JSON_ENCODE_ANY));
	json_decref(res);
	act_driver_managed.close(d);
}

Test(managed, a_page_that_never_comes_to_rest_is_replaced_in_its_browser)
{
	struct act_driver *d;
	struct act_outcome o;
	char err[256], args[128];
	pid_t browser;

	cr_assert_eq(act_driver_managed.open(&w.env, &d, err, sizeof(err)), 0,
	    "%s", err);
	snprintf(args, sizeof(args),
	    "{\"url\":\"http://127.0.0.1:%d/cookie?set=alpha\"}", w.port);
	o = run(d, "navigate", args, NULL);
	cr_assert_eq(o.err, CM_OK, "navigate: %s", o.message);
	browser = tk_child_with(getpid(), " --user-data-dir=", NULL, 0);
	cr_assert_gt(browser, 0, "no browser found");

	/* A page whose main thread blocks: the wait gets no answer, and
	 * neither do the reset's Page.stopLoading and
	 * Runtime.terminateExecution. */
	snprintf(args, sizeof(args), "{\"url\":\"http://127.0.0.1:%d/stuck\"}",
	    w.port);
	o = run(d, "navigate", args, NULL);
	cr_assert_eq(o.err, CM_OK, "navigate: %s", o.message);
	tk_pages_open_gate(w.pages);
	for (int64_t end = cm_mono_ms() + WAIT_MS;
	     tk_pages_hits(w.pages, "/hang") == 0;) {
		/* The page's requests go on only while a call runs. */
		cr_assert_lt(cm_mono_ms(), end, "the page never blocked");
		o = run(d, "wait_for",
		    "{\"text\":\"never there\",\"timeout_ms\":1500}", NULL);
		cr_assert_neq(
		    o.err, CM_OK, "a wait for what is not there ended well");
	}
	rest(d);

	/* A fresh page in the same browser, which kept the Space's cookie. */
	snprintf(args, sizeof(args), "{\"url\":\"http://127.0.0.1:%d/cookie\"}",
	    w.port);
	o = run(d, "navigate", args, NULL);
	cr_assert_eq(
	    o.err, CM_OK, "navigate: %s: %s", cm_err_code(o.err), o.message);
	jar_is(d, "cookies: alpha=1.");
	cr_assert_eq(tk_child_with(getpid(), " --user-data-dir=", NULL, 0),
	    browser, "the browser was replaced, not the page");
	act_driver_managed.close(d);
}

Test(managed, cancel_a_wait_and_survive_a_browser_crash)
{
	char cmd[600];
	pid_t browser;
	struct act_driver *d;
	struct act_outcome o;
	struct act_call call = {.task_id = "t", .request_id = "r"};
	char err[256], profile[512];
	json_t *args;
	struct stat st;

	cr_assert_eq(act_driver_managed.open(&w.env, &d, err, sizeof(err)), 0,
	    "%s", err);
	navigate_home(d);
	snprintf(
	    profile, sizeof(profile), "%s/profiles/%s", w.dir, w.env.space_id);
	cr_assert_eq(stat(profile, &st), 0, "no profile at %s", profile);

	/* A wait that never matches, cancelled: the next call works. */
	args =
	    json_pack("{s:s, s:i}", "text", "never there", "timeout_ms", 60000);
	call.capability = "wait_for";
	call.args = args;
	call.deadline_ms = cm_mono_ms() + WAIT_MS;
	cr_assert_eq(act_driver_managed.start(d, &call), 0);
	for (int i = 0; i < 5; i++) {
		struct pollfd fds[8];
		int64_t wake;
		int n = act_driver_managed.pollfds(d, fds, 8, &wake);

		poll(fds, (nfds_t)n, 50);
		cr_assert_eq(
		    act_driver_managed.step(d, fds, n, &o), ACT_PENDING);
	}
	/* The reset is a step of the loop: it ends with ACT_CLEAN once the
	 * browser confirmed it, and the abandoned wait reports nothing. */
	rest(d);
	json_decref(args);
	navigate_home(d);

	/* The browser killed mid-call, while the page is waiting for the
	 * text: runtime_crashed at once (not at the wait's end), then a
	 * new browser. */
	args =
	    json_pack("{s:s, s:i}", "text", "never there", "timeout_ms", 60000);
	call.args = args;
	call.deadline_ms = cm_mono_ms() + WAIT_MS;
	snprintf(cmd, sizeof(cmd), " --user-data-dir=%s", profile);
	browser = tk_child_with(getpid(), cmd, NULL, 0);
	cr_assert_gt(browser, 0, "no browser found");
	cr_assert_eq(act_driver_managed.start(d, &call), 0);
	/* Step until the wait has looked: the browser answered (the
	 * document the wait looks in), and the page's own wait is what is
	 * pending now, for the next 60 s. */
	for (int64_t end = cm_mono_ms() + 20000;;) {
		struct pollfd fds[8];
		int64_t wake;
		int n = act_driver_managed.pollfds(d, fds, 8, &wake);
		bool input = false;

		cr_assert_lt(cm_mono_ms(), end, "the wait never looked");
		poll(fds, (nfds_t)n, 1000);
		for (int i = 0; i < n; i++)
			input = input || (fds[i].revents & POLLIN) != 0;
		cr_assert_eq(
		    act_driver_managed.step(d, fds, n, &o), ACT_PENDING);
		if (input)
			break;
	}
	/* The browser leads a process group of its own: all of it. */
	cr_assert_eq(kill(-browser, SIGKILL), 0);
	for (int64_t end = cm_mono_ms() + 20000;;) {
		struct pollfd fds[8];
		int64_t wake, now = cm_mono_ms();
		int n = act_driver_managed.pollfds(d, fds, 8, &wake);

		cr_assert_lt(now, end, "the crash was not seen in 20 s");
		poll(fds, (nfds_t)n,
		    wake < 0      ? 100
		    : wake <= now ? 0
		                  : (int)(wake - now));
		memset(&o, 0, sizeof(o));
		if (act_driver_managed.step(d, fds, n, &o) == ACT_DONE)
			break;
	}
	free(o.result);
	json_decref(args);
	cr_assert_eq(o.err, CM_E_RUNTIME_CRASHED, "%s: %s", cm_err_code(o.err),
	    o.message);
	navigate_home(d);

	act_driver_managed.close(d);
	cr_assert_neq(stat(profile, &st), 0, "the profile outlived its Space");
	/* Discarded at close, removed by the sweep after it. */
	snprintf(profile, sizeof(profile), "%s/profiles", w.dir);
	cr_assert(
	    tk_dir_holds(profile, w.env.space_id), "nothing was discarded");
	act_managed_sweep(&w.cfg);
	cr_assert_not(tk_dir_holds(profile, w.env.space_id),
	    "the discarded profile outlived the sweep");
}

Test(managed, a_reply_over_the_bound_fails_its_call_and_not_the_browser)
{
	struct act_driver *d;
	struct act_outcome o;
	char err[256], args[128];
	json_t *res;

	cr_assert_eq(act_driver_managed.open(&w.env, &d, err, sizeof(err)), 0,
	    "%s", err);
	snprintf(args, sizeof(args), "{\"url\":\"http://127.0.0.1:%d/noise\"}",
	    w.port);
	o = run(d, "navigate", args, NULL);
	cr_assert_eq(o.err, CM_OK, "navigate: %s", o.message);

	/* The whole page as a PNG: megabytes of noise, over CM_CDP_MSG_MAX
	 * as base64.  The call fails; the browser stays. */
	o = run(
	    d, "screenshot", "{\"format\":\"png\",\"full_page\":true}", NULL);
	cr_assert_eq(
	    o.err, CM_E_RUNTIME_ERROR, "%s: %s", cm_err_code(o.err), o.message);
	cr_assert_not_null(strstr(o.message, "over"), "%s", o.message);

	/* The same page, on at once: no relaunch (a new browser would be
	 * on about:blank). */
	o = run(d, "snapshot", "{}", &res);
	cr_assert_eq(o.err, CM_OK, "snapshot: %s", o.message);
	cr_assert_str_eq(str(res, "title"), "Noise");
	json_decref(res);
	act_driver_managed.close(d);
}

Test(managed, the_network_policy_holds_inside_the_browser)
{
	struct act_driver *d;
	struct act_outcome o;
	struct cm_policy policy;
	char err[256], args[128];
	const char *allow = "{\"allow_hosts\": [\"127.0.0.1\"], "
	                    "\"deny_private_networks\": false}";
	json_t *res;

	cr_assert_eq(
	    cm_policy_parse(allow, strlen(allow), &policy, err, sizeof(err)), 0,
	    "%s", err);
	w.env.policy = &policy;
	cr_assert_eq(act_driver_managed.open(&w.env, &d, err, sizeof(err)), 0,
	    "%s", err);
	navigate_home(d);

	/* A redirect to a host the policy refuses. */
	snprintf(args, sizeof(args),
	    "{\"url\":\"http://127.0.0.1:%d/redirect\"}", w.port);
	o = run(d, "navigate", args, NULL);
	cr_assert_eq(o.err, CM_E_HOST_NOT_ALLOWED, "%s: %s", cm_err_code(o.err),
	    o.message);
	cr_assert_not_null(strstr(o.message, "localhost"), "%s", o.message);
	cr_assert_null(
	    strstr(o.message, "/next"), "the URL leaked: %s", o.message);
	cr_assert_eq(tk_pages_hits(w.pages, "/next"), 0,
	    "the refused redirect reached the server");

	/* A page whose picture comes from a refused host: the page loads,
	 * the picture is never fetched. */
	snprintf(args, sizeof(args), "{\"url\":\"http://127.0.0.1:%d/sub\"}",
	    w.port);
	o = run(d, "navigate", args, &res);
	cr_assert_eq(o.err, CM_OK, "%s", o.message);
	cr_assert_str_eq(str(res, "title"), "Sub");
	json_decref(res);
	cr_assert_eq(tk_pages_hits(w.pages, "/sub"), 1);
	cr_assert_eq(tk_pages_hits(w.pages, "/pixel"), 0,
	    "the refused subresource reached the server");

	/* The allowed host still works after refusals. */
	navigate_home(d);
	act_driver_managed.close(d);
}
