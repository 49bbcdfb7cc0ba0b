/*
 * test_e2e_browser.c: SPEC acceptance 14 through the API, on a real
 * Chromium.  The admin registers a managed instance on the browser bundle
 * and binds it; the workspace's manager creates a Space, navigates to a
 * page served by the test on 127.0.0.1, snapshots it, clicks a link and
 * types into a field by ref, and closes the Space.  Afterwards the
 * Space's profile directory is gone, no browser of it runs, and nothing
 * the API returned names the profile.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "http_fixture.h"
#include "pages.h"

#define E2E_WAIT_MS 60000 /* a browser task, on a loaded machine */

TestSuite(e2e_browser, .timeout = 300);

struct settle {
	struct hf_env *e;
	const char *space, *task;
};

static bool
settled(void *arg)
{
	struct settle *w = arg;
	json_t *t = hf_task(w->e, w->space, w->task);
	bool done = hf_terminal(sf_str(t, "status"));

	json_decref(t);
	return done;
}

/* Submits cap with args and waits for it to end; returns its data. */
static json_t *
run_task(struct hf_env *e, const char *space, const char *rid, const char *cap,
    const char *args)
{
	char task[CM_ID_MAX + 1];
	json_t *t;
	int status;

	status =
	    hf_submit(e, e->manager, space, "", rid, cap, args, NULL, task);
	cr_assert_eq(status, 202, "%s: submit answered %d", cap, status);
	{
		struct settle w = {e, space, task};

		cr_assert(tk_wait_until(settled, &w, E2E_WAIT_MS),
		    "%s did not end", cap);
	}
	t = hf_task(e, space, task);
	return t;
}

static const char *
result_str(json_t *task, const char *key)
{
	return sf_str(json_object_get(task, "result"), key);
}

static void
expect_completed(json_t *task, const char *cap)
{
	cr_assert_str_eq(sf_str(task, "status"), "completed", "%s: %s (%s)",
	    cap, sf_str(task, "status"),
	    sf_str(json_object_get(task, "error"), "message"));
}

/* The ref on the outline's line that holds what. */
static void
ref_of(const char *outline, const char *what, char *ref, size_t len)
{
	const char *line = strstr(outline, what), *r;

	cr_assert_not_null(line, "no \"%s\" in:\n%s", what, outline);
	r = strstr(line, "[ref=");
	cr_assert(r != NULL && (size_t)(r - line) < strcspn(line, "\n"),
	    "no ref on \"%s\"", what);
	snprintf(ref, len, "%.*s", (int)strcspn(r + 5, "]"), r + 5);
}

static bool
no_browser_of(void *arg)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd),
	    "pgrep -f -- '--user-data-dir=%s( |$)' >/dev/null", (char *)arg);
	return system(cmd) != 0;
}

Test(e2e_browser, acceptance_14_a_real_browser_through_the_api,
    .fini = tk_cleanup)
{
	static struct hf_env e;
	char bundle[CM_ID_MAX + 1] = "", inst[CM_ID_MAX + 1],
	                        bind[CM_ID_MAX + 1];
	char space[CM_ID_MAX + 1], body[1024], args[256], ref[32];
	char profile[600];
	struct tk_pages *pages;
	json_t *res, *t, *v;
	struct stat st;
	size_t i;
	int port;

	cr_assert_not_null(pages = tk_pages_start(&port));
	hf_start(&e, "e2e", 0, NULL);
	e.record = true;

	/* The admin registers a managed instance and binds it. */
	cr_assert_eq(af_call(&e.af, "GET", "/api/v1/admin/runtime-bundles",
	                 e.af.admin, NULL, &res),
	    200);
	json_array_foreach(
	    af_data(res), i, v) if (strcmp(sf_str(v, "name"), "browser") == 0)
	    snprintf(bundle, sizeof(bundle), "%s", sf_str(v, "bundle_id"));
	json_decref(res);
	cr_assert_neq(bundle[0], '\0', "no browser bundle");
	snprintf(body, sizeof(body),
	    "{\"name\": \"chromium-e2e\", \"driver\": \"managed\", "
	    "\"bundle_id\": \"%s\", \"network_policy\": {\"allow_hosts\": "
	    "[\"127.0.0.1\"], \"deny_private_networks\": false}}",
	    bundle);
	af_create(&e.af, "/api/v1/admin/browser-instances", body,
	    "browser_instance_id", inst);
	snprintf(body, sizeof(body),
	    "{\"workspace_id\": \"%s\", \"browser_instance_id\": \"%s\"}",
	    hf_ws(&e), inst);
	af_create(&e.af, "/api/v1/admin/bindings", body, "binding_id", bind);

	cr_assert_eq(
	    hf_create(&e, e.manager, inst, "operator", e.sf.w.operator_id,
	        "[\"navigate\", \"snapshot\", \"click\", \"type\", "
	        "\"wait_for\", \"extract_text\", \"back\"]",
	        space),
	    201);
	snprintf(profile, sizeof(profile), "%s/profiles/%s", e.sf.dir, space);

	/* Navigate to the test page. */
	snprintf(
	    args, sizeof(args), "{\"url\": \"http://127.0.0.1:%d/\"}", port);
	t = run_task(&e, space, "nav-1", "navigate", args);
	expect_completed(t, "navigate");
	cr_assert_str_eq(result_str(t, "title"), "Home");
	cr_assert_eq(json_integer_value(json_object_get(
	                 json_object_get(t, "result"), "status")),
	    200);
	json_decref(t);

	/* Snapshot: title, text and refs match the page. */
	t = run_task(&e, space, "snap-1", "snapshot", "{}");
	expect_completed(t, "snapshot");
	cr_assert_str_eq(result_str(t, "title"), "Home");
	cr_assert_not_null(
	    strstr(result_str(t, "snapshot"), "heading \"Welcome\""));
	cr_assert_not_null(strstr(
	    result_str(t, "snapshot"), "text \"The spaced test site.\""));
	ref_of(
	    result_str(t, "snapshot"), "link \"Next page\"", ref, sizeof(ref));
	json_decref(t);

	/* Click the link by ref, and see the new page. */
	snprintf(args, sizeof(args), "{\"ref\": \"%s\"}", ref);
	t = run_task(&e, space, "click-1", "click", args);
	expect_completed(t, "click");
	json_decref(t);
	t = run_task(&e, space, "wait-1", "wait_for",
	    "{\"text\": \"You followed the link.\", \"timeout_ms\": 20000}");
	expect_completed(t, "wait_for");
	json_decref(t);
	cr_assert_eq(tk_pages_hits(pages, "/next"), 1);

	/* Back, then type into the field by ref and submit. */
	t = run_task(&e, space, "back-1", "back", "{}");
	expect_completed(t, "back");
	json_decref(t);
	t = run_task(&e, space, "snap-2", "snapshot", "{}");
	expect_completed(t, "snapshot");
	ref_of(
	    result_str(t, "snapshot"), "textbox \"Query\"", ref, sizeof(ref));
	json_decref(t);
	snprintf(args, sizeof(args),
	    "{\"ref\": \"%s\", \"text\": \"spaces\", \"submit\": true}", ref);
	t = run_task(&e, space, "type-1", "type", args);
	expect_completed(t, "type");
	json_decref(t);
	t = run_task(&e, space, "wait-2", "wait_for",
	    "{\"text\": \"You searched the site.\", \"timeout_ms\": 20000}");
	expect_completed(t, "wait_for");
	json_decref(t);
	t = run_task(
	    &e, space, "text-1", "extract_text", "{\"selector\": \"h1\"}");
	expect_completed(t, "extract_text");
	cr_assert_str_eq(result_str(t, "text"), "Results");
	json_decref(t);

	/* A ref of a page that is gone fails with element_not_found. */
	snprintf(args, sizeof(args), "{\"ref\": \"%s\"}", ref);
	t = run_task(&e, space, "click-2", "click", args);
	cr_assert_str_eq(sf_str(t, "status"), "failed");
	cr_assert_str_eq(
	    sf_str(json_object_get(t, "error"), "code"), "element_not_found");
	json_decref(t);

	/* The browser is running now; close tears it down. */
	cr_assert_eq(stat(profile, &st), 0, "no profile at %s", profile);
	cr_assert_not(no_browser_of(profile), "no browser runs for the Space");
	cr_assert(
	    hf_post(&e, e.manager, space, "close", NULL, NULL) / 100 == 2);
	cr_assert(hf_wait_space(&e, space, "closed"), "the Space never closed");
	cr_assert(tk_wait_until(no_browser_of, profile, 20000),
	    "a browser outlived its Space");
	cr_assert_neq(stat(profile, &st), 0, "the profile outlived its Space");

	/* Nothing the API returned names the profile or the data dir. */
	cr_assert_gt(e.seen_len, 0, "no response was recorded");
	cr_assert_not(hf_contains(e.seen, e.seen_len, "profiles/"));
	cr_assert_not(hf_contains(e.seen, e.seen_len, e.sf.dir));
	cr_assert_not(hf_contains(e.seen, e.seen_len, "user-data-dir"));

	hf_stop(&e);
	tk_pages_stop(pages);
}
