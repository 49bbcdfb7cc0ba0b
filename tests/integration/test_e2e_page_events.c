/*
 * test_e2e_page_events.c: what the page does besides a task's result is in
 * the Space's log, read over HTTP, on a real Chromium through the whole
 * service.  A page left while it asks first gives a dialog event
 * (beforeunload, accepted) in the task that left it; alerts and prompts
 * as a page loads give dialog events (not accepted: each stays open until
 * handle_dialog answers it) with their text, the prompt's redacted; a
 * Space created with a dialog_policy has its confirm answered so, and the
 * page's script sees it; a link to a new tab gives a tab_opened event; a
 * navigation to an attachment gives two download events, its begin and
 * its end.  Every page event that names a task lies between that task's
 * started and its end.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "http_fixture.h"
#include "pages.h"
#include "token.h"

#define PE_WAIT_MS 60000 /* a browser task, on a loaded machine */

TestSuite(e2e_page_events, .timeout = 300);

/* The world of a test: spaced with a managed instance, one Space on it
 * granted navigate, click, handle_dialog and extract_text (with the
 * dialog policy policy; NULL: none), and the page server. */
static struct hf_env e;
static char space[CM_ID_MAX + 1];
static struct tk_pages *pages;
static int port;

static void
world_up_with(const char *tag, const char *policy)
{
	char inst[CM_ID_MAX + 1], rest[256];

	/* The create's body takes what follows its granted list as is. */
	snprintf(rest, sizeof(rest),
	    "[\"navigate\", \"click\", \"handle_dialog\", "
	    "\"extract_text\"]%s%s%s",
	    policy != NULL ? ", \"dialog_policy\": \"" : "",
	    policy != NULL ? policy : "", policy != NULL ? "\"" : "");
	cr_assert_not_null(pages = tk_pages_start(&port));
	hf_start(&e, tag, 0, NULL);
	hf_managed_instance(&e, "chromium-events", inst);
	cr_assert_eq(hf_create(&e, e.manager, inst, "operator",
	                 e.sf.w.operator_id, rest, space),
	    201);
}

static void
world_up(const char *tag)
{
	world_up_with(tag, NULL);
}

static void
world_down(void)
{
	hf_stop(&e);
	tk_pages_stop(pages);
	tk_cleanup();
}

/* Runs cap with args (JSON text) to completion; its id goes to task and
 * its result to *result (may be NULL; the caller decrefs). */
static void
run(const char *rid, const char *cap, const char *args, char *task,
    json_t **result)
{
	json_t *t;

	cr_assert_eq(
	    hf_submit(&e, e.manager, space, "", rid, cap, args, NULL, task),
	    202, "%s: not accepted", rid);
	cr_assert(hf_wait_task_for(&e, space, task, "completed", PE_WAIT_MS),
	    "%s did not complete", rid);
	t = hf_task(&e, space, task);
	if (result != NULL)
		*result = json_incref(json_object_get(t, "result"));
	json_decref(t);
}

/* Navigates to path on the page server. */
static void
go(const char *rid, const char *path, char *task, json_t **result)
{
	char args[160];

	snprintf(args, sizeof(args), "{\"url\": \"http://127.0.0.1:%d%s\"}",
	    port, path);
	run(rid, "navigate", args, task, result);
}

/* The sequence of task's event of kind (0: none). */
static json_int_t
seq_of(json_t *events, const char *kind, const char *task)
{
	json_int_t seq;

	return hf_event_count(events, kind, task, &seq) > 0 ? seq : 0;
}

/* Every page event of the log that names a task lies between the task's
 * started and its end, and each is one of the page's kinds. */
static void
page_events_in_order(json_t *events)
{
	json_t *ev;
	size_t i;

	json_array_foreach(events, i, ev)
	{
		const char *kind = sf_str(ev, "kind");
		const json_t *t = json_object_get(ev, "task_id");
		json_int_t seq =
		    json_integer_value(json_object_get(ev, "sequence"));
		json_int_t from, to;

		if (strcmp(kind, "dialog") != 0 &&
		    strcmp(kind, "tab_opened") != 0 &&
		    strcmp(kind, "download") != 0)
			continue;
		cr_assert(json_is_object(json_object_get(ev, "payload")),
		    "#%lld %s has no payload", (long long)seq, kind);
		if (json_is_null(t))
			continue;
		from = seq_of(events, "started", json_string_value(t));
		to = seq_of(events, "completed", json_string_value(t));
		cr_assert(from > 0 && from < seq && (to == 0 || seq < to),
		    "#%lld %s is not between #%lld started and #%lld, its "
		    "task's end",
		    (long long)seq, kind, (long long)from, (long long)to);
	}
}

/* The payloads of task's events of kind, in order, into out (at most
 * max); returns how many there are.  The log is checked first. */
static size_t
payloads(const char *task, const char *kind, json_t **out, size_t max)
{
	json_t *events = hf_all_events(&e, space), *ev;
	size_t i, n = 0;

	page_events_in_order(events);
	json_array_foreach(events, i, ev)
	{
		const char *t =
		    json_string_value(json_object_get(ev, "task_id"));

		if (strcmp(sf_str(ev, "kind"), kind) != 0 ||
		    (task != NULL && (t == NULL || strcmp(t, task) != 0)))
			continue;
		if (n < max)
			out[n] = json_incref(json_object_get(ev, "payload"));
		n++;
	}
	json_decref(events);
	return n;
}

/* Task's one event of kind: its payload (the caller decrefs). */
static json_t *
the_payload(const char *task, const char *kind)
{
	json_t *p = NULL;
	size_t n = payloads(task, kind, &p, 1);

	cr_assert_eq(n, 1, "%zu %s events in the task, want 1", n, kind);
	return p;
}

Test(e2e_page_events, a_page_left_while_it_asks_first_gives_a_dialog_event,
    .fini = world_down)
{
	char task[CM_ID_MAX + 1];
	json_t *res, *p;

	world_up("pe-leave");
	go("open", "/leave", task, NULL);
	/* The browser asks only of a page a person acted on. */
	run("edit", "click", "{\"selector\": \"#b\"}", task, NULL);
	go("leave", "/next", task, &res);
	cr_assert_str_eq(sf_str(json_object_get(res, "dialog"), "type"),
	    "beforeunload", "the result: %s", json_dumps(res, 0));
	json_decref(res);

	p = the_payload(task, "dialog");
	cr_assert_str_eq(sf_str(p, "type"), "beforeunload");
	cr_assert(json_is_true(json_object_get(p, "accepted")));
	cr_assert(json_is_string(json_object_get(p, "message")));
	cr_assert_null(json_object_get(p, "default_prompt"));
	json_decref(p);
}

Test(e2e_page_events, alerts_and_prompts_stay_open_and_are_logged_redacted,
    .fini = world_down)
{
	char task[CM_ID_MAX + 1];
	json_t *p, *events;
	char *text;

	world_up("pe-dialogs");
	go("alert", "/alert", task, NULL);
	p = the_payload(task, "dialog");
	cr_assert_str_eq(sf_str(p, "type"), "alert");
	cr_assert(json_is_false(json_object_get(p, "accepted")));
	cr_assert_str_eq(sf_str(p, "message"), "Your draft was saved");
	cr_assert_eq(json_object_size(p), 3, "an alert has no default");
	json_decref(p);
	/* It stays open until it is answered. */
	run("ok", "handle_dialog", "{\"accept\": true}", task, NULL);

	go("prompt", "/prompt", task, NULL);
	p = the_payload(task, "dialog");
	cr_assert_str_eq(sf_str(p, "type"), "prompt");
	cr_assert(json_is_false(json_object_get(p, "accepted")));
	cr_assert_str_eq(sf_str(p, "message"),
	    "Session expired: token=[REDACTED], sign in again");
	cr_assert_str_eq(sf_str(p, "default_prompt"), "password=[REDACTED]");
	json_decref(p);

	/* Nowhere in the log, nor in the stream's replay of it (which ends
	 * once the Space is closed). */
	events = hf_all_events(&e, space);
	text = json_dumps(events, 0);
	cr_assert_null(strstr(text, "tk-4f9a2c7e1b"), "%s", text);
	cr_assert_null(strstr(text, "hunter2hunter2"), "%s", text);
	free(text);
	json_decref(events);
	cr_assert(
	    hf_post(&e, e.manager, space, "close", NULL, NULL) / 100 == 2);
	cr_assert(hf_wait_space(&e, space, "closed"), "the Space never closed");
	cr_assert_eq(hf_sse(&e, e.manager, space, &text), 200);
	cr_assert_not_null(strstr(text, "event: dialog"), "%s", text);
	cr_assert_null(strstr(text, "tk-4f9a2c7e1b"), "%s", text);
	free(text);
}

/* The log holds a tab_opened event. */
static bool
tab_logged(void *arg)
{
	json_t *p = NULL;
	size_t n = payloads(NULL, "tab_opened", &p, 1);

	(void)arg;
	json_decref(p);
	return n > 0;
}

Test(e2e_page_events, a_tab_the_page_opens_gives_a_tab_opened_event,
    .fini = world_down)
{
	char task[CM_ID_MAX + 1], url[64];
	json_t *res, *p = NULL, *events, *ev;
	size_t i;

	world_up("pe-tab");
	go("open", "/popup", task, NULL);
	run("tab", "click", "{\"selector\": \"#tab\"}", task, &res);
	cr_assert_eq(json_integer_value(json_object_get(res, "tabs_opened")), 1,
	    "the result: %s", json_dumps(res, 0));
	json_decref(res);

	cr_assert(
	    tk_wait_until(tab_logged, NULL, PE_WAIT_MS), "no tab_opened event");
	cr_assert_eq(payloads(NULL, "tab_opened", &p, 1), 1);
	cr_assert(json_is_false(json_object_get(p, "closed")));
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/next", port);
	cr_assert_str_eq(sf_str(p, "url"), url, "the url the link opened");
	json_decref(p);
	/* The click's, if any task's: it opened the tab. */
	events = hf_all_events(&e, space);
	json_array_foreach(
	    events, i, ev) if (strcmp(sf_str(ev, "kind"), "tab_opened") == 0 &&
	                       !json_is_null(json_object_get(ev, "task_id")))
	    cr_assert_str_eq(sf_str(ev, "task_id"), task);
	json_decref(events);
}

Test(
    e2e_page_events, a_download_gives_its_begin_and_its_end, .fini = world_down)
{
	char task[CM_ID_MAX + 1];
	json_t *res, *p[3] = {NULL, NULL, NULL};

	world_up("pe-download");
	go("file", "/file", task, &res);
	cr_assert_str_eq(sf_str(json_object_get(res, "download"), "state"),
	    "completed", "the result: %s", json_dumps(res, 0));
	json_decref(res);

	/* The navigation waits for the download's end: both are its. */
	cr_assert_eq(payloads(task, "download", p, 3), 2);
	cr_assert_str_eq(sf_str(p[0], "name"), "report.txt");
	cr_assert_str_eq(sf_str(p[0], "state"), "in_progress");
	cr_assert_eq(json_integer_value(json_object_get(p[0], "bytes")), 0);
	cr_assert_str_eq(sf_str(p[1], "name"), "report.txt");
	cr_assert_str_eq(sf_str(p[1], "state"), "completed");
	cr_assert_eq(json_integer_value(json_object_get(p[1], "bytes")), 18);
	json_decref(p[0]);
	json_decref(p[1]);
}

/* A download during a task is the task's artifact: the result and the
 * download's end event name it with its sha256, and the artifact route
 * serves its bytes, as an attachment of the file's type. */
Test(e2e_page_events, a_download_is_served_as_the_tasks_artifact,
    .fini = world_down)
{
	char task[CM_ID_MAX + 1], path[512], sha[CM_TOKEN_HASH_LEN];
	char *body = NULL, *head = NULL;
	json_t *res, *dl, *p[3] = {NULL, NULL, NULL};
	size_t len = 0;

	world_up("pe-artifact");
	go("file", "/file", task, &res);
	dl = json_object_get(res, "download");
	cr_assert_str_eq(sf_str(dl, "artifact"), "report.txt", "the result: %s",
	    json_dumps(res, 0));
	snprintf(path, sizeof(path),
	    "/api/v1/workspaces/%s/browser-spaces/%s/tasks/%s/artifacts/%s",
	    hf_ws(&e), space, task, sf_str(dl, "artifact"));
	cr_assert_eq(
	    tk_http_bytes(&e.sf.p, path, e.manager, &body, &len, &head), 200);
	cr_assert_eq(len, 18);
	cr_assert_eq(memcmp(body, "quarterly figures\n", 18), 0);
	cr_assert_eq(cm_sha256_hex(body, len, sha), 0);
	cr_assert_str_eq(sf_str(dl, "sha256"), sha, "the result's sha256");
	cr_assert_eq(json_integer_value(json_object_get(dl, "size")), 18);
	cr_assert_not_null(
	    strstr(head, "Content-Type: text/plain\r\n"), "%s", head);
	cr_assert_not_null(strstr(head, "Content-Disposition: attachment; "
	                                "filename=\"report.txt\"\r\n"),
	    "%s", head);
	/* The end event says the same, and names no path. */
	cr_assert_eq(payloads(task, "download", p, 3), 2);
	cr_assert_str_eq(sf_str(p[1], "artifact"), "report.txt");
	cr_assert_str_eq(sf_str(p[1], "sha256"), sha);
	cr_assert_null(json_object_get(p[0], "artifact"));
	json_decref(p[0]);
	json_decref(p[1]);
	json_decref(res);
	free(body);
	free(head);
}

/* The Space's dialog policy answers the confirm behind /confirm's button
 * as it says: the page shows what confirm returned, and the dialog is in
 * the click's result and in the log, with that answer. */
static void
policy_answers(const char *policy, bool accepted)
{
	char task[CM_ID_MAX + 1];
	json_t *res, *p, *sp;
	const json_t *d;

	world_up_with(accepted ? "pe-accept" : "pe-dismiss", policy);
	sp = hf_space(&e, NULL, space);
	cr_assert_str_eq(sf_str(sp, "dialog_policy"), policy);
	json_decref(sp);
	go("open", "/confirm", task, NULL);
	run("del", "click", "{\"selector\": \"#del\"}", task, &res);
	d = json_object_get(res, "dialog");
	cr_assert_str_eq(
	    sf_str(d, "type"), "confirm", "the result: %s", json_dumps(res, 0));
	cr_assert_eq(json_is_true(json_object_get(d, "accepted")), accepted);
	cr_assert_null(json_object_get(json_object_get(res, "page"), "dialog"),
	    "none stays open");
	json_decref(res);

	p = the_payload(task, "dialog");
	cr_assert_str_eq(sf_str(p, "message"), "Delete the draft?");
	cr_assert_eq(json_is_true(json_object_get(p, "accepted")), accepted);
	json_decref(p);

	run("out", "extract_text", "{\"selector\": \"#out\"}", task, &res);
	cr_assert_str_eq(
	    sf_str(res, "text"), accepted ? "confirm=true" : "confirm=false");
	json_decref(res);
}

Test(e2e_page_events, a_space_that_accepts_dialogs_accepts_a_confirm,
    .fini = world_down)
{
	policy_answers("accept", true);
}

Test(e2e_page_events, a_space_that_dismisses_dialogs_dismisses_a_confirm,
    .fini = world_down)
{
	policy_answers("dismiss", false);
}
