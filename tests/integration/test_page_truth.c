/*
 * test_page_truth.c: the managed driver on a real Chromium, on pages of
 * the test's own (pages.h) with the features of real sites.  A capability
 * says only what the page received: a click on an element something else
 * covers fails with element_obscured and names what covers it, one on a
 * hidden or disabled element with element_not_interactable, and type on
 * an element that takes no typed text with element_not_editable, naming
 * the capability that fits; none of them touches the page.  Every wait
 * ends on the page's own events: a move within the document (a
 * single-page app's link, and back from it) ends its call at once; a page
 * whose one picture never comes is read as it is, and navigate ends once
 * it has parsed, saying it is still loading; a click that loads a new
 * page ends once that page has parsed, so the snapshot after it reads it.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "capability.h"
#include "driver.h"
#include "driver_fixture.h"
#include "limits.h"
#include "page_fixture.h"
#include "pages.h"
#include "testkit.h"
#include "token.h"

#define WAIT_MS 30000 /* the most one call may take here */

static struct pf_page f;

static void
setup(void)
{
	pf_open(&f, "truth", "0190a0b0-0000-7000-8000-000000000002", WAIT_MS);
}

static void
teardown(void)
{
	pf_close(&f);
}

TestSuite(page_truth, .init = setup, .fini = teardown, .timeout = 240);

static struct act_outcome
run(const char *cap, const char *args_json, json_t **result)
{
	return pf_run(&f, cap, args_json, result);
}

static const char *
str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static void
open_page(const char *path, const char *title)
{
	char args[160];
	json_t *res;
	struct act_outcome o;

	snprintf(args, sizeof(args), "{\"url\":\"http://127.0.0.1:%d%s\"}",
	    f.w.port, path);
	o = run("navigate", args, &res);
	cr_assert_eq(
	    o.err, CM_OK, "navigate: %s %s", cm_err_code(o.err), o.message);
	cr_assert_str_eq(str(res, "title"), title);
	json_decref(res);
}

/* The page's title now, from a snapshot. */
static void
title_is(const char *want)
{
	json_t *res;
	struct act_outcome o = run("snapshot", "{}", &res);

	cr_assert_eq(o.err, CM_OK, "snapshot: %s", o.message);
	cr_assert_str_eq(str(res, "title"), want);
	json_decref(res);
}

static void
fails_with(
    const char *cap, const char *args, enum cm_err want, const char *words)
{
	struct act_outcome o = run(cap, args, NULL);

	cr_assert_eq(o.err, want, "%s %s: %s (%s)", cap, args,
	    cm_err_code(o.err), o.message);
	cr_assert_not_null(strstr(o.message, words),
	    "%s %s: \"%s\" lacks \"%s\"", cap, args, o.message, words);
}

/* Opens path (titled title) and makes the args of a click on its
 * button "Buy" by the ref a snapshot gives it. */
static void
buy_args(const char *path, const char *title, char *buy, size_t size)
{
	char ref[32];
	json_t *res;
	struct act_outcome o;

	open_page(path, title);
	o = run("snapshot", "{}", &res);
	cr_assert_eq(o.err, CM_OK, "snapshot: %s", o.message);
	df_ref_of(str(res, "snapshot"), "button \"Buy\"", ref, sizeof(ref));
	json_decref(res);
	snprintf(buy, size, "{\"ref\":\"%s\"}", ref);
}

Test(page_truth, a_covered_click_fails_and_names_what_covers_it)
{
	char buy[80];
	json_t *res;
	struct act_outcome o;

	buy_args("/banner", "Shop", buy, sizeof(buy));

	/* The banner would get the click: nothing is pressed. */
	fails_with("click", buy, CM_E_ELEMENT_OBSCURED,
	    "button \"Accept cookies\" covers the element");
	fails_with("click", "{\"selector\":\"#buy\"}", CM_E_ELEMENT_OBSCURED,
	    "button \"Accept cookies\"");
	title_is("Shop");

	/* Hidden and disabled: not acted on either. */
	fails_with("click", "{\"selector\":\"#off\"}",
	    CM_E_ELEMENT_NOT_INTERACTABLE, "disabled");
	fails_with("click", "{\"selector\":\"#ghost\"}",
	    CM_E_ELEMENT_NOT_INTERACTABLE, "not visible");

	/* Accept the cookies: the same ref's click now lands. */
	o = run("click", "{\"selector\":\"#bar button\"}", NULL);
	cr_assert_eq(o.err, CM_OK, "accept: %s", o.message);
	o = run("click", buy, &res);
	cr_assert_eq(o.err, CM_OK, "buy: %s", o.message);
	cr_assert(json_is_true(json_object_get(res, "clicked")));
	json_decref(res);
	title_is("Bought");
}

/* A layer comes over the button between the look at its point and the
 * press: the press reached the page, not the button, and the result says
 * so instead of "clicked". */
Test(page_truth, a_click_the_element_never_got_is_not_a_success)
{
	char buy[80];

	buy_args("/sneaky", "Sneaky", buy, sizeof(buy));
	fails_with("click", buy, CM_E_OUTCOME_UNKNOWN,
	    "another element of its document took it");
	title_is("Layer");
}

/* Types as args say, then reads the text of the element of selector. */
static void
typed_shows(const char *args, const char *selector, const char *want)
{
	char sel[64];
	json_t *res;
	struct act_outcome o = run("type", args, NULL);

	cr_assert_eq(o.err, CM_OK, "type %s: %s", args, o.message);
	snprintf(sel, sizeof(sel), "{\"selector\":\"%s\"}", selector);
	o = run("extract_text", sel, &res);
	cr_assert_eq(o.err, CM_OK, "extract_text: %s", o.message);
	cr_assert_str_eq(str(res, "text"), want);
	json_decref(res);
}

Test(page_truth, type_acts_only_on_what_takes_typed_text)
{
	static const struct {
		const char *selector, *fits;
	} none[] = {
	    {"#s", "use select_option"},
	    {"#r", "use fill"},
	    {"#d", "use fill"},
	    {"#f", "use upload"},
	    {"#c", "use check"},
	};
	char args[128], ref[32];
	json_t *res;
	struct act_outcome o;

	open_page("/controls", "Form");
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		snprintf(args, sizeof(args),
		    "{\"selector\":\"%s\",\"text\":\"2024-01-02\"}",
		    none[i].selector);
		fails_with(
		    "type", args, CM_E_ELEMENT_NOT_EDITABLE, none[i].fits);
	}
	fails_with("type", "{\"selector\":\"#ro\",\"text\":\"x\"}",
	    CM_E_ELEMENT_NOT_INTERACTABLE, "read-only");

	/* Text fields, a textarea and an editable element take it. */
	typed_shows("{\"selector\":\"#t\",\"text\":\"Ada\"}", "#echo", "t=Ada");
	typed_shows(
	    "{\"selector\":\"#a\",\"text\":\"a note\"}", "#echo", "a=a note");
	o = run("snapshot", "{}", &res);
	cr_assert_eq(o.err, CM_OK);
	df_ref_of(str(res, "snapshot"), "textbox \"Bio\"", ref, sizeof(ref));
	json_decref(res);
	snprintf(
	    args, sizeof(args), "{\"ref\":\"%s\",\"text\":\"Hello\"}", ref);
	typed_shows(args, "#e", "Hello");
}

static const char *
url_path(const json_t *res)
{
	const char *u = str(res, "url");
	const char *p = u != NULL ? strstr(u, "://") : NULL;

	cr_assert_not_null(p, "no url in the result: %s", json_dumps(res, 0));
	p = strchr(p + 3, '/');
	cr_assert_not_null(p, "%s", u);
	return p;
}

Test(page_truth, a_move_within_the_document_ends_at_once)
{
	json_t *res;
	struct act_outcome o;

	open_page("/spa", "Inbox");
	o = run("click", "{\"selector\":\"#go\"}", &res);
	cr_assert_eq(o.err, CM_OK, "click: %s", o.message);
	cr_assert(json_is_true(json_object_get(res, "navigated")));
	cr_assert_str_eq(url_path(res), "/spa/item");
	cr_assert_str_eq(str(res, "title"), "Item");
	json_decref(res);

	/* Back is a popstate: no document loads, and none is waited for. */
	o = run("back", "{}", &res);
	cr_assert_eq(
	    o.err, CM_OK, "back: %s (%s)", cm_err_code(o.err), o.message);
	cr_assert_str_eq(url_path(res), "/spa");
	cr_assert_str_eq(str(res, "title"), "Inbox");
	json_decref(res);
	cr_assert_eq(tk_pages_hits(f.w.pages, "/spa"), 1);
}

Test(page_truth, a_page_that_never_loads_is_read_as_it_is)
{
	char args[160];
	json_t *res;
	struct act_outcome o;

	/* navigate ends once the page has parsed, saying it still loads. */
	snprintf(args, sizeof(args),
	    "{\"url\":\"http://127.0.0.1:%d/pending\"}", f.w.port);
	o = run("navigate", args, &res);
	cr_assert_eq(
	    o.err, CM_OK, "navigate: %s (%s)", cm_err_code(o.err), o.message);
	cr_assert_str_eq(str(res, "title"), "Pending");
	cr_assert(json_is_true(json_object_get(res, "loading")));
	json_decref(res);

	/* The snapshot reads it at once, and says so too. */
	o = run("snapshot", "{}", &res);
	cr_assert_eq(
	    o.err, CM_OK, "snapshot: %s (%s)", cm_err_code(o.err), o.message);
	cr_assert_not_null(
	    strstr(str(res, "snapshot"), "heading \"Almost there\""), "%s",
	    str(res, "snapshot"));
	cr_assert(json_is_true(json_object_get(res, "loading")));
	json_decref(res);

	/* What it waits for is the caller's: commit, or parsed. */
	snprintf(args, sizeof(args),
	    "{\"url\":\"http://127.0.0.1:%d/pending?again\","
	    "\"wait_until\":\"domcontentloaded\"}",
	    f.w.port);
	o = run("navigate", args, &res);
	cr_assert_eq(o.err, CM_OK, "navigate: %s", o.message);
	cr_assert_str_eq(str(res, "title"), "Pending");
	json_decref(res);
	snprintf(args, sizeof(args),
	    "{\"url\":\"http://127.0.0.1:%d/next\",\"wait_until\":\"commit\"}",
	    f.w.port);
	o = run("navigate", args, &res);
	cr_assert_eq(o.err, CM_OK, "navigate: %s", o.message);
	cr_assert_str_eq(url_path(res), "/next");
	json_decref(res);
}

Test(page_truth, a_click_that_loads_a_page_ends_once_it_has_parsed)
{
	char ref[32], args[64];
	json_t *res;
	struct act_outcome o;

	open_page("/", "Home");
	o = run("snapshot", "{}", &res);
	cr_assert_eq(o.err, CM_OK);
	df_ref_of(str(res, "snapshot"), "link \"Next page\"", ref, sizeof(ref));
	json_decref(res);
	snprintf(args, sizeof(args), "{\"ref\":\"%s\"}", ref);
	o = run("click", args, &res);
	cr_assert_eq(o.err, CM_OK, "click: %s", o.message);
	cr_assert(json_is_true(json_object_get(res, "navigated")));
	cr_assert_str_eq(str(res, "title"), "Next");
	json_decref(res);
	/* No wait in between: the new page is there to read. */
	o = run("snapshot", "{}", &res);
	cr_assert_eq(o.err, CM_OK);
	cr_assert_not_null(
	    strstr(str(res, "snapshot"), "heading \"Second page\""), "%s",
	    str(res, "snapshot"));
	json_decref(res);

	/* A click that moves nothing says so. */
	open_page("/banner", "Shop");
	o = run("click", "{\"selector\":\"#bar button\"}", &res);
	cr_assert_eq(o.err, CM_OK, "click: %s", o.message);
	cr_assert_null(json_object_get(res, "navigated"));
	json_decref(res);
}

/* Leaving a page that asks first: navigate and back accept, and say so. */
Test(page_truth, a_page_that_asks_before_it_is_left_does_not_trap_the_space)
{
	char args[160];
	json_t *res, *d;
	struct act_outcome o;

	open_page("/leave", "Draft");
	o = run("click", "{\"selector\":\"#b\"}", NULL);
	cr_assert_eq(o.err, CM_OK, "click: %s", o.message);
	snprintf(args, sizeof(args), "{\"url\":\"http://127.0.0.1:%d/next\"}",
	    f.w.port);
	o = run("navigate", args, &res);
	cr_assert_eq(
	    o.err, CM_OK, "navigate: %s (%s)", cm_err_code(o.err), o.message);
	cr_assert_str_eq(str(res, "title"), "Next");
	d = json_object_get(res, "dialog");
	cr_assert_str_eq(
	    str(d, "type"), "beforeunload", "%s", json_dumps(res, 0));
	cr_assert(json_is_true(json_object_get(d, "accepted")));
	json_decref(res);

	/* Back to it, act on it again, and back away from it. */
	o = run("back", "{}", &res);
	cr_assert_eq(o.err, CM_OK, "back: %s", o.message);
	cr_assert_str_eq(str(res, "title"), "Draft");
	json_decref(res);
	o = run("click", "{\"selector\":\"#b\"}", NULL);
	cr_assert_eq(o.err, CM_OK, "click: %s", o.message);
	o = run("back", "{}", &res);
	cr_assert_eq(
	    o.err, CM_OK, "back: %s (%s)", cm_err_code(o.err), o.message);
	cr_assert_str_eq(
	    str(json_object_get(res, "dialog"), "type"), "beforeunload");
	json_decref(res);
}

/* Pages the Space's page opens never slow or block it. */
Test(page_truth, a_popup_leaves_the_page_as_it_was)
{
	json_t *res;
	struct act_outcome o;

	open_page("/popup", "Opener");
	o = run("click", "{\"selector\":\"#tab\"}", &res);
	cr_assert_eq(o.err, CM_OK, "click: %s", o.message);
	/* The new tab is not this page's navigation; the click says it
	 * opened one. */
	cr_assert_null(json_object_get(res, "navigated"));
	cr_assert_eq(json_integer_value(json_object_get(res, "tabs_opened")), 1,
	    "%s", json_dumps(res, 0));
	json_decref(res);
	/* Up to CM_TABS_MAX tabs stay open; past it, one is closed as it
	 * opens, and the click says so. */
	for (int i = 1; i <= CM_TABS_MAX; i++) {
		o = run("click", "{\"selector\":\"#win\"}", &res);
		cr_assert_eq(o.err, CM_OK, "click %d: %s", i, o.message);
		cr_assert_eq(
		    json_integer_value(json_object_get(
		        res, i < CM_TABS_MAX ? "tabs_opened" : "tabs_refused")),
		    1, "click %d: %s", i, json_dumps(res, 0));
		json_decref(res);
	}
	o = run("click", "{\"selector\":\"#mark\"}", NULL);
	cr_assert_eq(
	    o.err, CM_OK, "click: %s (%s)", cm_err_code(o.err), o.message);
	title_is("Marked");
	o = run("screenshot", "{}", NULL);
	cr_assert_eq(
	    o.err, CM_OK, "screenshot: %s (%s)", cm_err_code(o.err), o.message);
	free(o.artifact);
	cr_assert_eq(tk_pages_hits(f.w.pages, "/next"), 1);
	cr_assert_geq(tk_pages_hits(f.w.pages, "/search"), CM_TABS_MAX - 1);
}

/* The profile's downloads directory (driver_managed.c), and whether it
 * holds a file of want's bytes. */
static bool
downloaded(const char *want)
{
	char path[512], got[64];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(path, sizeof(path), "%s/profiles/%s/spaced-downloads", f.w.dir,
	    f.w.env.space_id);
	cr_assert_not_null(d = opendir(path), "no %s", path);
	while (!found && (de = readdir(d)) != NULL) {
		char file[800];
		FILE *in;
		size_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
		if ((in = fopen(file, "r")) == NULL)
			continue;
		n = fread(got, 1, sizeof(got) - 1, in);
		got[n] = '\0';
		fclose(in);
		found = strcmp(got, want) == 0;
	}
	closedir(d);
	return found;
}

/* A file the page offers is downloaded into the Space's own directory,
 * and the call says so: a navigate to it is no error. */
Test(page_truth, a_download_goes_to_the_space_and_is_reported)
{
	char args[160];
	json_t *res, *dl;
	struct act_outcome o;
	struct stat st;
	const char *home = getenv("HOME");
	char home_dl[512];
	bool had_home_dl;

	snprintf(home_dl, sizeof(home_dl), "%s/Downloads",
	    home != NULL ? home : "/root");
	had_home_dl = stat(home_dl, &st) == 0;
	snprintf(args, sizeof(args), "{\"url\":\"http://127.0.0.1:%d/file\"}",
	    f.w.port);
	o = run("navigate", args, &res);
	cr_assert_eq(
	    o.err, CM_OK, "navigate: %s (%s)", cm_err_code(o.err), o.message);
	dl = json_object_get(res, "download");
	cr_assert_str_eq(
	    str(dl, "name"), "report.txt", "%s", json_dumps(res, 0));
	cr_assert_str_eq(str(dl, "state"), "completed");
	cr_assert_eq(json_integer_value(json_object_get(dl, "bytes")), 18);
	/* It is the task's artifact, its bytes the file's, and it left the
	 * Space's directory. */
	cr_assert_str_eq(str(dl, "artifact"), "report.txt");
	cr_assert_str_eq(str(dl, "mime"), "text/plain");
	cr_assert_eq(json_integer_value(json_object_get(dl, "size")), 18);
	cr_assert_not_null(o.artifact, "no artifact in the outcome");
	cr_assert_eq(o.artifact_len, 18);
	cr_assert_eq(memcmp(o.artifact, "quarterly figures\n", 18), 0);
	cr_assert_str_eq(o.artifact_name, "report.txt");
	cr_assert_str_eq(o.artifact_mime, "text/plain");
	{
		char sha[CM_TOKEN_HASH_LEN];

		cr_assert_eq(cm_sha256_hex(o.artifact, o.artifact_len, sha), 0);
		cr_assert_str_eq(str(dl, "sha256"), sha);
	}
	free(o.artifact);
	json_decref(res);
	cr_assert_not(downloaded("quarterly figures\n"),
	    "the stored download is still in the Space's directory");

	/* A link to it: the click says a download began. */
	open_page("/files", "Files");
	o = run("click", "{\"selector\":\"#dl\"}", &res);
	cr_assert_eq(o.err, CM_OK, "click: %s", o.message);
	cr_assert_str_eq(str(json_object_get(res, "download"), "name"),
	    "report.txt", "%s", json_dumps(res, 0));
	/* The click waits for the download's end: it is its artifact. */
	cr_assert_str_eq(str(json_object_get(res, "download"), "state"),
	    "completed", "%s", json_dumps(res, 0));
	cr_assert_eq(o.artifact_len, 18);
	free(o.artifact);
	json_decref(res);
	cr_assert_eq(tk_pages_hits(f.w.pages, "/file"), 2);
	/* Nothing went to the browser's own place for downloads. */
	cr_assert_eq(
	    stat(home_dl, &st) == 0, had_home_dl, "%s appeared", home_dl);
}

/* True when directory arg holds nothing but "." and "..". */
static bool
dir_empty(void *arg)
{
	DIR *d = opendir(arg);
	struct dirent *de;
	bool empty = d != NULL;

	while (empty && (de = readdir(d)) != NULL)
		empty = de->d_name[0] == '.';
	if (d != NULL)
		closedir(d);
	return empty;
}

/* A download over what an artifact may hold is canceled and refused: the
 * result says it is too large, no byte of it is an artifact, and nothing
 * of it stays in the Space's directory. */
Test(page_truth, a_download_too_large_is_refused_and_not_kept)
{
	char args[160], path[512];
	json_t *res, *dl;
	struct act_outcome o;
	struct dirent *de;
	DIR *d;
	int left = 0;

	snprintf(args, sizeof(args),
	    "{\"url\":\"http://127.0.0.1:%d/bigfile\"}", f.w.port);
	o = run("navigate", args, &res);
	cr_assert_eq(
	    o.err, CM_OK, "navigate: %s (%s)", cm_err_code(o.err), o.message);
	dl = json_object_get(res, "download");
	cr_assert_str_eq(str(dl, "name"), "big.zip", "%s", json_dumps(res, 0));
	cr_assert(json_is_true(json_object_get(dl, "too_large")), "%s",
	    json_dumps(res, 0));
	cr_assert_null(json_object_get(dl, "artifact"));
	cr_assert_null(o.artifact, "a refused download became an artifact");
	json_decref(res);
	snprintf(path, sizeof(path), "%s/profiles/%s/spaced-downloads", f.w.dir,
	    f.w.env.space_id);
	cr_assert_not_null(d = opendir(path), "no %s", path);
	closedir(d);
	/* The browser removes a canceled download's partial file itself,
	 * after it says the download was canceled. */
	if (!tk_wait_until(dir_empty, path, 5000)) {
		cr_assert_not_null(d = opendir(path), "no %s", path);
		while ((de = readdir(d)) != NULL)
			left += de->d_name[0] != '.';
		closedir(d);
		cr_assert_eq(left, 0, "%d files left in %s", left, path);
	}
}

/* wait_for waits on the page's own changes, across a navigation, for a
 * text, a selector or a ref's element, and ends at its bound. */
Test(page_truth, wait_for_ends_on_the_change_it_waits_for)
{
	char ref[32], args[96];
	json_t *res;
	struct act_outcome o;

	open_page("/later", "Later");
	o = run("snapshot", "{}", &res);
	cr_assert_eq(o.err, CM_OK);
	df_ref_of(str(res, "snapshot"), "button \"Reveal\"", ref, sizeof(ref));
	json_decref(res);
	/* A ref's element that is visible: found. */
	snprintf(
	    args, sizeof(args), "{\"ref\":\"%s\",\"timeout_ms\":5000}", ref);
	o = run("wait_for", args, NULL);
	cr_assert_eq(o.err, CM_OK, "wait_for ref: %s (%s)", cm_err_code(o.err),
	    o.message);

	/* A text that comes later. */
	o = run("click", "{\"selector\":\"#show\"}", NULL);
	cr_assert_eq(o.err, CM_OK);
	o = run("wait_for", "{\"text\":\"Ready\",\"timeout_ms\":10000}", NULL);
	cr_assert_eq(o.err, CM_OK, "wait_for text: %s", o.message);
	o = run(
	    "wait_for", "{\"selector\":\"#out\",\"timeout_ms\":10000}", NULL);
	cr_assert_eq(o.err, CM_OK, "wait_for selector: %s", o.message);

	/* A text of the next page, which a script leads to later. */
	o = run("click", "{\"selector\":\"#go\"}", &res);
	cr_assert_eq(o.err, CM_OK);
	json_decref(res);
	o = run("wait_for",
	    "{\"text\":\"You followed the link.\",\"timeout_ms\":10000}", NULL);
	cr_assert_eq(o.err, CM_OK, "wait_for across a navigation: %s (%s)",
	    cm_err_code(o.err), o.message);

	/* The old page's ref is stale: at once, not at the bound. */
	o = run("wait_for", args, NULL);
	cr_assert_eq(o.err, CM_E_ELEMENT_NOT_FOUND, "%s", cm_err_code(o.err));
	/* What never comes ends at the bound. */
	o = run("wait_for", "{\"text\":\"never\",\"timeout_ms\":300}", NULL);
	cr_assert_eq(o.err, CM_E_ELEMENT_NOT_FOUND, "%s", cm_err_code(o.err));
	cr_assert_not_null(strstr(o.message, "timeout_ms"), "%s", o.message);
}

/* The snapshot keeps every text a person sees: one that is part of the
 * page's title, or of a heading's name, stays. */
Test(page_truth, the_snapshot_keeps_text_the_title_repeats)
{
	json_t *res;
	struct act_outcome o;
	const char *t;

	open_page("/order", "Order summary for Alice");
	o = run("snapshot", "{}", &res);
	cr_assert_eq(o.err, CM_OK, "snapshot: %s", o.message);
	t = str(res, "snapshot");
	cr_assert_not_null(strstr(t, "heading \"Order summary\""), "%s", t);
	cr_assert_not_null(strstr(t, "text \"Alice\""), "%s", t);
	cr_assert_not_null(strstr(t, "text \"summary\""), "%s", t);
	/* A link's own label is its name, not a text of its own. */
	cr_assert_not_null(strstr(t, "link \"Pay now\" [ref="), "%s", t);
	cr_assert_null(strstr(t, "text \"Pay now\""), "%s", t);
	json_decref(res);
}
