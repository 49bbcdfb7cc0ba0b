/*
 * test_page_events.c: what the page did besides a call, on its way to the
 * Space's log: the page telling its tabs and downloads (page_events.c,
 * with no browser behind it), and the actor's queue of them with their
 * payloads bounded and redacted (page_log.c).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "page.h"
#include "page_log.h"

#define TOLD_MAX 32

/* What the page told, copied. */
static struct told {
	enum cm_event_kind kind;
	char name[CM_DOWNLOAD_NAME_MAX + 1], state[16], url[64];
	int64_t bytes;
	bool closed;
} told[TOLD_MAX];
static int n_told;

static void
record(void *arg, const struct act_page_event *ev)
{
	struct told *t = &told[n_told++];

	cr_assert_eq(arg, &told, "the page's on_event_arg was not passed");
	cr_assert_leq(n_told, TOLD_MAX);
	memset(t, 0, sizeof(*t));
	t->kind = ev->kind;
	if (ev->kind == CM_EV_DOWNLOAD) {
		snprintf(t->name, sizeof(t->name), "%s", ev->name);
		snprintf(t->state, sizeof(t->state), "%s", ev->state);
		t->bytes = ev->bytes;
	} else if (ev->kind == CM_EV_TAB_OPENED) {
		snprintf(t->url, sizeof(t->url), "%s", ev->url);
		t->closed = ev->closed;
	}
}

static struct act_page page;

static void
page_up(void)
{
	n_told = 0;
	act_page_init(&page, NULL, NULL, "session", "target");
	page.on_event = record;
	page.on_event_arg = &told;
}

/* A Browser.download* event of guid. */
static void
download(const char *method, const char *guid, const char *name,
    const char *state, json_int_t bytes)
{
	json_t *params = json_pack("{s:s}", "guid", guid);

	if (name != NULL)
		json_object_set_new(
		    params, "suggestedFilename", json_string(name));
	if (state != NULL) {
		json_object_set_new(params, "state", json_string(state));
		json_object_set_new(
		    params, "receivedBytes", json_integer(bytes));
	}
	act_page_download(&page, method, params);
	json_decref(params);
}

Test(page_events, a_download_is_told_as_it_begins_and_as_it_ends)
{
	page_up();
	download(
	    "Browser.downloadWillBegin", "g1", "../etc/report.txt", NULL, 0);
	cr_assert_eq(n_told, 1);
	cr_assert_eq(told[0].kind, CM_EV_DOWNLOAD);
	cr_assert_str_eq(told[0].name, ".._etc_report.txt", "a path in it");
	cr_assert_str_eq(told[0].state, "in_progress");
	cr_assert_eq(told[0].bytes, 0);
	/* Progress is not an event; another download's end is not this
	 * one's; a begin told twice is one download. */
	download("Browser.downloadProgress", "g1", NULL, "inProgress", 5);
	download("Browser.downloadProgress", "g9", NULL, "completed", 5);
	download("Browser.downloadWillBegin", "g1", "report.txt", NULL, 0);
	cr_assert_eq(n_told, 1);
	download("Browser.downloadProgress", "g1", NULL, "completed", 18);
	cr_assert_eq(n_told, 2);
	cr_assert_str_eq(told[1].name, ".._etc_report.txt");
	cr_assert_str_eq(told[1].state, "completed");
	cr_assert_eq(told[1].bytes, 18);
	/* Told once: it is forgotten. */
	download("Browser.downloadProgress", "g1", NULL, "completed", 18);
	cr_assert_eq(n_told, 2);
	download("Browser.downloadWillBegin", "g2", "b.bin", NULL, 0);
	download("Browser.downloadProgress", "g2", NULL, "canceled", 3);
	cr_assert_eq(n_told, 4);
	cr_assert_str_eq(told[3].state, "canceled");
	act_page_fini(&page);
}

Test(page_events, downloads_past_the_watched_ones_tell_their_begin_only)
{
	char guid[16];

	page_up();
	for (int i = 0; i < CM_PAGE_DOWNLOADS_MAX + 2; i++) {
		snprintf(guid, sizeof(guid), "g%d", i);
		download("Browser.downloadWillBegin", guid, "f", NULL, 0);
	}
	cr_assert_eq(n_told, CM_PAGE_DOWNLOADS_MAX + 2);
	for (int i = 0; i < CM_PAGE_DOWNLOADS_MAX + 2; i++) {
		snprintf(guid, sizeof(guid), "g%d", i);
		download(
		    "Browser.downloadProgress", guid, NULL, "completed", 1);
	}
	cr_assert_eq(n_told, 2 * CM_PAGE_DOWNLOADS_MAX + 2);
	act_page_fini(&page);
}

Test(page_events, a_tab_is_told_kept_or_closed)
{
	page_up();
	act_page_tab_opened(&page, "http://127.0.0.1/next", false);
	act_page_tab_opened(&page, NULL, true);
	cr_assert_eq(n_told, 2);
	cr_assert_eq(told[0].kind, CM_EV_TAB_OPENED);
	cr_assert_str_eq(told[0].url, "http://127.0.0.1/next");
	cr_assert_not(told[0].closed);
	cr_assert_str_eq(told[1].url, "");
	cr_assert(told[1].closed);
	act_page_fini(&page);
}

/* A new tab's target shows no url yet: the tab gets the one the page
 * asked a window of, once. */
Test(page_events, a_tab_with_no_url_yet_has_the_one_its_page_asked_for)
{
	json_t *params = json_pack("{s:s}", "url", "http://127.0.0.1/next");

	page_up();
	act_page_event(&page, "session", "Page.windowOpen", params);
	json_decref(params);
	act_page_tab_opened(&page, "", false);
	act_page_tab_opened(&page, "", false);
	act_page_tab_opened(&page, "http://127.0.0.1/own", false);
	cr_assert_eq(n_told, 3);
	cr_assert_str_eq(told[0].url, "http://127.0.0.1/next");
	cr_assert_str_eq(told[1].url, "", "a url taken twice");
	cr_assert_str_eq(told[2].url, "http://127.0.0.1/own");
	act_page_fini(&page);
}

/* ---- the actor's side ---------------------------------------------------- */

static json_t *
payload_of(const struct act_page_event *ev, const struct cm_secrets *sec)
{
	char *text = act_page_log_payload(ev, sec);
	json_t *v;

	cr_assert_not_null(text, "no payload");
	v = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	cr_assert(json_is_object(v), "%s", text);
	free(text);
	return v;
}

static const char *
str_of(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	cr_assert_not_null(s, "no %s", key);
	return s;
}

Test(page_log, a_dialogs_text_is_redacted_then_bounded)
{
	struct cm_secrets sec = {0};
	struct act_page_event ev = {.kind = CM_EV_DIALOG, .type = "prompt"};
	char long_msg[2 * CM_DIALOG_MESSAGE_MAX + 2];
	json_t *o;

	cm_secrets_add(&sec, "canary-config-8d41");
	ev.message = "Sign in again: token=abc123def456 (canary-config-8d41)";
	ev.default_prompt = "password=hunter2hunter2";
	ev.accepted = false;
	o = payload_of(&ev, &sec);
	cr_assert_str_eq(str_of(o, "type"), "prompt");
	cr_assert_str_eq(str_of(o, "message"),
	    "Sign in again: token=[REDACTED] ([REDACTED])");
	cr_assert_str_eq(str_of(o, "default_prompt"), "password=[REDACTED]");
	cr_assert(json_is_false(json_object_get(o, "accepted")));
	cr_assert_eq(json_object_size(o), 4);
	json_decref(o);

	/* 2-byte characters: cut to the bound, on a character's edge. */
	for (size_t i = 0; i < CM_DIALOG_MESSAGE_MAX; i++)
		memcpy(long_msg + 2 * i, "\xc3\xa9", 2);
	long_msg[2 * CM_DIALOG_MESSAGE_MAX] = 'x';
	long_msg[2 * CM_DIALOG_MESSAGE_MAX + 1] = '\0';
	ev.type = "alert";
	ev.message = long_msg;
	ev.default_prompt = NULL;
	o = payload_of(&ev, NULL);
	cr_assert_eq(strlen(str_of(o, "message")), CM_DIALOG_MESSAGE_MAX);
	cr_assert_null(json_object_get(o, "default_prompt"));
	cr_assert_eq(json_object_size(o), 3);
	json_decref(o);

	ev.type = NULL;
	cr_assert_null(act_page_log_payload(&ev, NULL), "a dialog of no type");
}

Test(page_log, a_tabs_url_and_a_downloads_name_are_redacted_and_bounded)
{
	struct act_page_event tab = {.kind = CM_EV_TAB_OPENED, .closed = true};
	struct act_page_event dl = {.kind = CM_EV_DOWNLOAD};
	static char url[CM_URL_MAX + 100];
	char name[CM_DOWNLOAD_NAME_MAX + 20];
	json_t *o;

	tab.url = "http://user:pw@127.0.0.1/next?access_token=t0k3n&x=1";
	o = payload_of(&tab, NULL);
	cr_assert_str_eq(str_of(o, "url"),
	    "http://[REDACTED]@127.0.0.1/next?access_token=[REDACTED]&x=1");
	cr_assert(json_is_true(json_object_get(o, "closed")));
	json_decref(o);
	memset(url, 'a', sizeof(url) - 1);
	memcpy(url, "http://", 7);
	tab.url = url;
	o = payload_of(&tab, NULL);
	cr_assert_eq(strlen(str_of(o, "url")), CM_URL_MAX);
	json_decref(o);

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	dl.name = name;
	dl.state = "completed";
	dl.bytes = 18;
	o = payload_of(&dl, NULL);
	cr_assert_eq(strlen(str_of(o, "name")), CM_DOWNLOAD_NAME_MAX);
	cr_assert_str_eq(str_of(o, "state"), "completed");
	cr_assert_eq(json_integer_value(json_object_get(o, "bytes")), 18);
	json_decref(o);
	dl.name = "secret=s3cr3tv4lue.txt";
	dl.bytes = -4;
	o = payload_of(&dl, NULL);
	cr_assert_str_eq(str_of(o, "name"), "secret=[REDACTED]");
	cr_assert_eq(json_integer_value(json_object_get(o, "bytes")), 0);
	json_decref(o);
}

Test(page_log, the_queue_keeps_the_task_and_is_bounded)
{
	struct act_page_event ev = {.kind = CM_EV_TAB_OPENED, .url = "u"};
	struct act_page_event bad = {.kind = CM_EV_STARTED};
	struct act_page_log l;
	int queued = 0;

	memset(&l, 0, sizeof(l));
	cr_assert_eq(act_page_log_add(&l, &ev, NULL, NULL, "sp-1"), 1);
	cr_assert_eq(l.n, 1);
	cr_assert_str_eq(l.ev[0].task_id, "", "between tasks: none");
	cr_assert_str_eq(l.ev[0].payload, "{\"url\":\"u\",\"closed\":false}");
	cr_assert_neq(l.ev[0].op_id[0], '\0');
	cr_assert_eq(act_page_log_add(&l, &ev, "task-1", NULL, "sp-1"), 1);
	cr_assert_str_eq(l.ev[1].task_id, "task-1");
	cr_assert_str_neq(l.ev[1].op_id, l.ev[0].op_id);
	/* Only the page's kinds, and only what its kind shows. */
	cr_assert_eq(act_page_log_add(&l, &bad, NULL, NULL, "sp-1"), 0);
	bad.kind = CM_EV_DOWNLOAD;
	cr_assert_eq(act_page_log_add(&l, &bad, NULL, NULL, "sp-1"), 0);
	cr_assert_eq(l.n, 2);
	/* Oldest first. */
	act_page_log_pop(&l);
	cr_assert_eq(l.n, 1);
	cr_assert_str_eq(l.ev[0].task_id, "task-1");
	act_page_log_clear(&l);
	cr_assert_eq(l.n, 0);

	/* Bounded: the queue, then what one second may queue. */
	memset(&l, 0, sizeof(l));
	while (act_page_log_add(&l, &ev, NULL, NULL, "sp-1") == 1)
		queued++;
	cr_assert_eq(l.n, CM_ACTOR_PAGE_EVENTS_MAX);
	cr_assert_eq(queued, CM_ACTOR_PAGE_EVENTS_MAX);
	act_page_log_clear(&l);
	while (act_page_log_add(&l, &ev, NULL, NULL, "sp-1") == 1)
		queued++;
	cr_assert_leq(queued, CM_ACTOR_PAGE_EVENTS_PER_S,
	    "%d queued in a second", queued);
	act_page_log_clear(&l);
	/* A new second, a new allowance. */
	l.window_ms -= 1000;
	cr_assert_eq(act_page_log_add(&l, &ev, NULL, NULL, "sp-1"), 1);
	act_page_log_clear(&l);
}
