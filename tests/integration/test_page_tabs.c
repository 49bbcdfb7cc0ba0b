/*
 * test_page_tabs.c: the tabs a page opens, on a real Chromium with the
 * managed driver, under a policy that allows 127.0.0.1 and localhost and
 * so refuses sub.localhost.  A tab opened by a target=_blank link or by
 * window.open is held to the policy from its first request; it is
 * listed, selected, used (a snapshot, a click by ref) and closed, which
 * makes its opener current again; a ref of another tab is stale.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "limits.h"
#include "page_fixture.h"

#define POLL_MS 10000 /* the most a test waits for a tab to change */

static struct pf_page f;

static void
setup(void)
{
	pf_open_policy(&f, "tabs", "0190a0b0-0000-7000-8000-000000000017",
	    30000, "{\"allow_hosts\": [\"127.0.0.1\", \"localhost\"]}");
}

static void
teardown(void)
{
	pf_close(&f);
}

TestSuite(page_tabs, .init = setup, .fini = teardown, .timeout = 240);

static struct act_outcome
run(const char *cap, const char *args_json, json_t **result)
{
	return pf_run(&f, cap, args_json, result);
}

static json_t *
ok(const char *cap, const char *args_json)
{
	json_t *res = NULL;
	struct act_outcome o = run(cap, args_json, &res);

	cr_assert_eq(o.err, CM_OK, "%s %s: %s (%s)", cap, args_json,
	    cm_err_code(o.err), o.message);
	cr_assert_not_null(res);
	return res;
}

static const char *
str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static void
pause_ms(long ms)
{
	struct timespec t = {.tv_sec = 0, .tv_nsec = ms * 1000000L};

	nanosleep(&t, NULL);
}

/* The tab of index in a tabs list, or NULL. */
static const json_t *
tab_of(const json_t *tabs, int index)
{
	const json_t *t;
	size_t i;

	json_array_foreach(tabs, i, t) if (json_integer_value(json_object_get(
	                                       t, "index")) == index) return t;
	return NULL;
}

/* Lists the tabs until tab index has title, for at most POLL_MS. */
static void
tab_titled(int index, const char *title)
{
	int64_t end = cm_mono_ms() + POLL_MS;

	for (;;) {
		json_t *res = ok("tabs", "{\"action\":\"list\"}");
		const json_t *t = tab_of(json_object_get(res, "tabs"), index);

		if (t != NULL && strcmp(str(t, "title"), title) == 0) {
			json_decref(res);
			return;
		}
		cr_assert_lt(cm_mono_ms(), end, "tab %d is not \"%s\": %s",
		    index, title, json_dumps(res, 0));
		json_decref(res);
		pause_ms(50);
	}
}

/* Snapshots the current tab until it is done loading, for at most
 * POLL_MS. */
static void
loaded(void)
{
	int64_t end = cm_mono_ms() + POLL_MS;

	for (;;) {
		json_t *res = ok("snapshot", "{}");
		bool loading = json_is_true(
		    json_object_get(json_object_get(res, "page"), "loading"));

		json_decref(res);
		if (!loading)
			return;
		cr_assert_lt(cm_mono_ms(), end, "the tab never loaded");
		pause_ms(50);
	}
}

Test(page_tabs, a_tabs_first_requests_meet_the_policy)
{
	json_t *res;

	pf_navigate(&f, "/opens", "Opens");
	/* A link to a page that asks a refused host for a picture. */
	json_decref(ok("click", "{\"selector\":\"#tab\"}"));
	tab_titled(1, "Leaks");
	json_decref(ok("tabs", "{\"action\":\"select\",\"index\":1}"));
	loaded();
	/* A window opened straight at the refused host. */
	json_decref(ok("tabs", "{\"action\":\"select\",\"index\":0}"));
	res = ok("click", "{\"selector\":\"#win\"}");
	cr_assert_eq(json_integer_value(json_object_get(res, "tabs_opened")), 1,
	    "%s", json_dumps(res, 0));
	json_decref(res);
	{
		int64_t end = cm_mono_ms() + POLL_MS;

		for (;;) {
			res = ok("tabs", "{\"action\":\"list\"}");
			if (tab_of(json_object_get(res, "tabs"), 2) != NULL)
				break;
			cr_assert_lt(cm_mono_ms(), end, "no tab 2: %s",
			    json_dumps(res, 0));
			json_decref(res);
			pause_ms(50);
		}
		json_decref(res);
	}
	json_decref(ok("tabs", "{\"action\":\"select\",\"index\":2}"));
	loaded();
	cr_assert_eq(tk_pages_hits(f.w.pages, "/leaks"), 1);
	cr_assert_eq(tk_pages_hits(f.w.pages, "/tracker"), 0,
	    "a tab's request to a refused host went out");
}

Test(page_tabs, a_tab_is_listed_selected_used_and_closed)
{
	char ref[32], args[96];
	json_t *res, *t;
	const json_t *page;

	pf_navigate(&f, "/opens", "Opens");
	res = ok("tabs", "{\"action\":\"list\"}");
	cr_assert_eq(json_array_size(json_object_get(res, "tabs")), 1);
	json_decref(res);
	json_decref(ok("click", "{\"selector\":\"#tab\"}"));
	tab_titled(1, "Leaks");
	/* Listed: the Space's page is current until another is selected. */
	res = ok("tabs", "{\"action\":\"list\"}");
	t = json_object_get(res, "tabs");
	cr_assert_eq(json_array_size(t), 2, "%s", json_dumps(res, 0));
	cr_assert(json_is_true(json_object_get(tab_of(t, 0), "current")));
	cr_assert(json_is_false(json_object_get(tab_of(t, 1), "current")));
	cr_assert_not_null(strstr(str(tab_of(t, 1), "url"), "/leaks"));
	/* The header's list is the same table. */
	cr_assert(json_equal(
	    json_object_get(json_object_get(res, "page"), "tabs"), t));
	json_decref(res);

	/* Selected: every call acts on it from now on. */
	res = ok("tabs", "{\"action\":\"select\",\"index\":1}");
	page = json_object_get(res, "page");
	cr_assert_str_eq(str(page, "title"), "Leaks", "%s", json_dumps(res, 0));
	cr_assert(json_is_true(json_object_get(
	    tab_of(json_object_get(page, "tabs"), 1), "current")));
	json_decref(res);
	res = ok("snapshot", "{}");
	cr_assert_not_null(strstr(str(res, "snapshot"), "tab 1 (current): "),
	    "%s", str(res, "snapshot"));
	df_ref_of(df_outline(str(res, "snapshot")), "button \"Press\"", ref,
	    sizeof(ref));
	json_decref(res);
	snprintf(args, sizeof(args), "{\"ref\":\"%s\"}", ref);
	json_decref(ok("click", args));
	res = ok("extract_text", "{}");
	cr_assert_str_eq(str(json_object_get(res, "page"), "title"), "Pressed",
	    "%s", json_dumps(res, 0));
	json_decref(res);

	/* Closed: its opener is current again. */
	res = ok("tabs", "{\"action\":\"close\",\"index\":1}");
	t = json_object_get(res, "tabs");
	cr_assert_eq(json_array_size(t), 1, "%s", json_dumps(res, 0));
	cr_assert(json_is_true(json_object_get(tab_of(t, 0), "current")));
	cr_assert_str_eq(str(json_object_get(res, "page"), "title"), "Opens");
	json_decref(res);
	res = ok("extract_text", "{}");
	cr_assert_str_eq(str(json_object_get(res, "page"), "title"), "Opens");
	json_decref(res);
	df_fails_with(&act_driver_managed, f.drv, "tabs",
	    "{\"action\":\"select\",\"index\":1}", CM_E_NO_TAB,
	    "no tab has index 1", f.wait_ms);
	df_fails_with(&act_driver_managed, f.drv, "tabs",
	    "{\"action\":\"close\",\"index\":0}", CM_E_NO_TAB,
	    "cannot be closed", f.wait_ms);
}

Test(page_tabs, a_window_open_tab_is_used_like_a_links)
{
	json_t *res;

	pf_navigate(&f, "/popup", "Opener");
	json_decref(ok("click", "{\"selector\":\"#win\"}"));
	tab_titled(1, "Results");
	res = ok("tabs", "{\"action\":\"select\",\"index\":1}");
	cr_assert_eq(json_integer_value(json_object_get(res, "selected")), 1);
	json_decref(res);
	res = ok("extract_text", "{}");
	cr_assert_not_null(strstr(str(res, "text"), "You searched the site."),
	    "%s", json_dumps(res, 0));
	json_decref(res);
	/* Closing the current tab makes its opener current. */
	res = ok("tabs", "{\"action\":\"close\",\"index\":1}");
	cr_assert(json_is_true(json_object_get(
	    tab_of(json_object_get(res, "tabs"), 0), "current")));
	json_decref(res);
	json_decref(ok("click", "{\"selector\":\"#mark\"}"));
	res = ok("extract_text", "{}");
	cr_assert_str_eq(str(json_object_get(res, "page"), "title"), "Marked");
	json_decref(res);
}

Test(page_tabs, a_ref_of_another_tab_is_stale)
{
	char ref[32], args[96];
	json_t *res;

	pf_navigate(&f, "/opens", "Opens");
	res = ok("snapshot", "{}");
	df_ref_of(df_outline(str(res, "snapshot")), "link \"Leaky tab\"", ref,
	    sizeof(ref));
	json_decref(res);
	json_decref(ok("click", "{\"selector\":\"#tab\"}"));
	tab_titled(1, "Leaks");
	json_decref(ok("tabs", "{\"action\":\"select\",\"index\":1}"));
	snprintf(args, sizeof(args), "{\"ref\":\"%s\"}", ref);
	df_fails_with(&act_driver_managed, f.drv, "click", args,
	    CM_E_ELEMENT_NOT_FOUND, "stale", f.wait_ms);
	/* Nor does it come back on its own tab: refs are those of the
	 * snapshots since the last select. */
	json_decref(ok("tabs", "{\"action\":\"select\",\"index\":0}"));
	df_fails_with(&act_driver_managed, f.drv, "click", args,
	    CM_E_ELEMENT_NOT_FOUND, "stale", f.wait_ms);
	cr_assert_eq(tk_pages_hits(f.w.pages, "/leaks"), 1,
	    "the stale ref acted on the opener's link");
}
