/*
 * test_page_snapshot.c: the snapshot on pages too big to read whole, with
 * the managed driver on a real Chromium, as the actor runs it: a page of
 * 5,000 links (whose accessibility tree, read whole, was a reply over
 * CM_CDP_MSG_MAX and failed every snapshot) and one of 50,000 elements.
 * Each snapshot stays within max_chars, says it was cut and where, and
 * its refs name the elements their lines show: a click by ref goes where
 * that link leads.  The page's own scripts cannot change what the
 * snapshot sees.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "page_fixture.h"

#define SNAPSHOT_AGAIN 30 /* reads of one page, each after a navigation */

static struct pf_page f;

static void
setup(void)
{
	pf_open(&f, "snap", "0190a0b0-0000-7000-8000-000000000003", 60000);
}

static void
teardown(void)
{
	pf_close(&f);
}

TestSuite(page_snapshot, .init = setup, .fini = teardown, .timeout = 300);

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

/* A snapshot with args; it must succeed.  The caller decrefs. */
static json_t *
snapshot(const char *args)
{
	json_t *res;
	struct act_outcome o = run("snapshot", args, &res);

	cr_assert_eq(o.err, CM_OK, "snapshot %s: %s (%s)", args,
	    cm_err_code(o.err), o.message);
	cr_assert_not_null(res);
	/* The outline alone, which max_chars bounds: the header lines
	 * before it are test_page_modal's. */
	json_object_set_new(
	    res, "snapshot", json_string(df_outline(str(res, "snapshot"))));
	return res;
}

/* A cut outline: within max, whole lines, truncated, and a note that
 * says after which line, why, and what was not read. */
static void
cut_within(const json_t *res, size_t max, const char *why)
{
	const char *t = str(res, "snapshot"), *note = str(res, "note");
	size_t lines = 0;
	char want[64];

	cr_assert_not_null(t);
	cr_assert_leq(strlen(t), max, "%zu bytes", strlen(t));
	cr_assert(strlen(t) == 0 || t[strlen(t) - 1] == '\n');
	cr_assert(json_is_true(json_object_get(res, "truncated")));
	for (const char *s = t; (s = strchr(s, '\n')) != NULL; s++)
		lines++;
	cr_assert_not_null(note);
	snprintf(want, sizeof(want), "cut after line %zu (", lines);
	if (lines > 0)
		cr_assert_not_null(strstr(note, want), "%s", note);
	cr_assert_not_null(strstr(note, why), "%s", note);
	cr_assert_not_null(strstr(note, "elements were not read"), "%s", note);
}

/* The highest K of the lines `link "Link K"` of outline, with its ref. */
static long
last_link(const char *outline, char *ref, size_t len)
{
	const char *s = outline, *at = NULL;
	long k = 0;

	while ((s = strstr(s, "link \"Link ")) != NULL)
		at = s++;
	cr_assert_not_null(at, "no link in:\n%s", outline);
	k = strtol(at + 11, NULL, 10);
	cr_assert_gt(k, 0);
	df_ref_of(at, "link \"Link ", ref, len);
	return k;
}

/* Clicks ref: the browser goes to the page whose url ends in want (the
 * page that says "You followed the link."; the click may end before the
 * navigation it started is seen, so the test waits for that page). */
static void
click_goes_to_path(const char *ref, const char *want)
{
	char args[64];
	const char *url;
	json_t *res;
	struct act_outcome o;

	snprintf(args, sizeof(args), "{\"ref\":\"%s\"}", ref);
	o = run("click", args, NULL);
	cr_assert_eq(o.err, CM_OK, "click %s: %s (%s)", ref, cm_err_code(o.err),
	    o.message);
	o = run("wait_for",
	    "{\"text\":\"You followed the link.\",\"timeout_ms\":20000}", NULL);
	cr_assert_eq(o.err, CM_OK, "after click %s: %s", ref, o.message);
	res = snapshot("{}");
	url = str(res, "url");
	cr_assert_not_null(url);
	cr_assert(strlen(url) >= strlen(want) &&
	              strcmp(url + strlen(url) - strlen(want), want) == 0,
	    "%s went to %s, not %s", ref, url, want);
	cr_assert_str_eq(str(res, "title"), "Next");
	json_decref(res);
}

/* Clicks ref: the browser goes to /next?i=k. */
static void
click_goes_to(const char *ref, long k)
{
	char want[32];

	snprintf(want, sizeof(want), "/next?i=%ld", k);
	click_goes_to_path(ref, want);
}

Test(page_snapshot, a_page_of_5000_links_is_read_within_its_bounds)
{
	char ref[32], line[64];
	json_t *res;
	long k;

	pf_navigate(&f, "/links?n=5000", "Links");
	res = snapshot("{}");
	cut_within(res, CM_SNAPSHOT_CHARS_DEFAULT, "max_chars (16000)");
	cr_assert_not_null(
	    strstr(str(res, "snapshot"), "- heading \"5000 links\"\n"
	                                 "- list\n"
	                                 "  - listitem\n"
	                                 "    - link \"Link 1\" [ref=e1]\n"),
	    "%s", str(res, "snapshot"));
	/* The last link shown leads where its line says. */
	k = last_link(str(res, "snapshot"), ref, sizeof(ref));
	snprintf(line, sizeof(line), "e%ld", k);
	cr_assert_str_eq(ref, line, "refs count the links in order");
	json_decref(res);
	click_goes_to(ref, k);

	/* The old page's refs are stale now. */
	snprintf(line, sizeof(line), "{\"ref\":\"%s\"}", ref);
	cr_assert_eq(run("click", line, NULL).err, CM_E_ELEMENT_NOT_FOUND);

	/* max_chars at its highest shows more, and is a bound too; a ref
	 * from the middle clicks its own link. */
	pf_navigate(&f, "/links?n=5000", "Links");
	res = snapshot("{\"max_chars\":40000}");
	cut_within(res, CM_SNAPSHOT_CHARS_MAX, "max_chars (40000)");
	cr_assert_gt(last_link(str(res, "snapshot"), ref, sizeof(ref)), k);
	df_ref_of(str(res, "snapshot"), "link \"Link 321\"", ref, sizeof(ref));
	json_decref(res);
	click_goes_to(ref, 321);
}

Test(page_snapshot, a_page_of_50000_elements_is_read_within_its_bounds)
{
	char ref[32];
	json_t *res;

	pf_navigate(&f, "/nodes?n=50000", "Nodes");
	res = snapshot("{}");
	cut_within(res, CM_SNAPSHOT_CHARS_DEFAULT, "max_chars");
	/* Text of one paragraph is one line, bold and all; a text that is
	 * its parent's whole name is not repeated. */
	cr_assert_not_null(strstr(str(res, "snapshot"),
	                       "- heading \"Section 1\"\n"
	                       "- paragraph\n"
	                       "  - text \"Text of section 1, bold, and\"\n"
	                       "  - link \"link 1\" [ref=e1]\n"
	                       "  - text \".\"\n"
	                       "- list\n"
	                       "  - listitem\n"
	                       "    - text \"Item 1\"\n"
	                       "  - listitem\n"
	                       "    - button \"Do 1\" [ref=e2]\n"
	                       "- textbox \"Field 1\" [ref=e3]\n"),
	    "%s", str(res, "snapshot"));
	json_decref(res);
	res = snapshot("{\"max_chars\":40000}");
	cut_within(res, CM_SNAPSHOT_CHARS_MAX, "max_chars");
	df_ref_of(str(res, "snapshot"), "button \"Do 7\"", ref, sizeof(ref));
	json_decref(res);
	/* Small bounds too, down to one where not even the first line
	 * fits. */
	res = snapshot("{\"max_chars\":100}");
	cut_within(res, 100, "max_chars (100)");
	json_decref(res);
	res = snapshot("{\"max_chars\":5}");
	cut_within(res, 5, "max_chars (5)");
	cr_assert_str_eq(str(res, "snapshot"), "");
	cr_assert_not_null(strstr(str(res, "note"), "nothing fit"));
	json_decref(res);
}

/* The snapshot's script runs where the page's cannot reach: what they
 * replaced or set is not what it uses, and the refs are its own. */
Test(page_snapshot, the_page_cannot_change_what_the_snapshot_sees)
{
	json_t *res;

	pf_navigate(&f, "/tamper", "Tamper");
	res = snapshot("{}");
	cr_assert_str_eq(str(res, "snapshot"),
	    "- heading \"Untouched\"\n"
	    "- link \"Next page\" [ref=e1]\n");
	cr_assert(json_is_false(json_object_get(res, "truncated")));
	cr_assert_null(json_object_get(res, "note"));
	json_decref(res);
	click_goes_to_path("e1", "/next");
}

/* A page that prints nothing for long is walked to its end, up to the
 * walk's own bound, which the note names. */
Test(page_snapshot, the_walk_is_bounded_too)
{
	json_t *res;

	pf_navigate(&f, "/quiet?n=1000", "Quiet");
	res = snapshot("{}");
	cr_assert_str_eq(str(res, "snapshot"), "- heading \"1000 quiet\"\n"
	                                       "- link \"End\" [ref=e1]\n");
	cr_assert(json_is_false(json_object_get(res, "truncated")));
	json_decref(res);
	pf_navigate(&f, "/quiet?n=200000", "Quiet");
	res = snapshot("{}");
	cut_within(res, CM_SNAPSHOT_CHARS_DEFAULT,
	    "the walk reached its 200000 nodes");
	cr_assert_null(strstr(str(res, "snapshot"), "End"));
	json_decref(res);
}

/* The line of outline that has what, without its indentation, or fails;
 * into line (cut to len). */
static void
line_of(const char *outline, const char *what, char *line, size_t len)
{
	const char *at = strstr(outline, what), *s;

	cr_assert_not_null(at, "no \"%s\" in:\n%s", what, outline);
	for (s = at; s > outline && s[-1] != '\n'; s--)
		;
	s += strspn(s, " ");
	snprintf(line, len, "%.*s", (int)strcspn(s, "\n"), s);
}

/* The line of outline that has what, with its ref replaced by "eN", is
 * want. */
static void
line_is(const char *outline, const char *what, const char *want)
{
	char line[512], out[512];
	const char *r;
	size_t n;

	line_of(outline, what, line, sizeof(line));
	r = strstr(line, "[ref=e");
	if (r != NULL) {
		n = (size_t)(r - line) + 6;
		snprintf(out, sizeof(out), "%.*sN%s", (int)n, line,
		    r + 6 + strspn(r + 6, "0123456789"));
	} else
		snprintf(out, sizeof(out), "%s", line);
	cr_assert_str_eq(out, want, "in:\n%s", outline);
}

/* Controls show their live state and value, set by script or by input;
 * a password's value never leaves the page. */
Test(page_snapshot, lines_show_the_state_and_value_of_controls)
{
	char ref[32], args[96];
	json_t *res;
	const char *t;

	pf_navigate(&f, "/state", "State");
	res = snapshot("{}");
	t = str(res, "snapshot");
	line_is(t, "textbox \"Email\"",
	    "- textbox \"Email\" [required] [focused] [ref=eN]: you@y.org");
	line_is(t, "textbox \"Password\"",
	    "- textbox \"Password\" [ref=eN]: "
	    "\xe2\x80\xa2\xe2\x80\xa2\xe2\x80\xa2");
	cr_assert_null(strstr(t, "hunter2"), "%s", t);
	line_is(t, "checkbox \"Remember me\"",
	    "- checkbox \"Remember me\" [ref=eN]");
	line_is(t, "checkbox \"Some\"",
	    "- checkbox \"Some\" [checked=mixed] [ref=eN]");
	line_is(t, "combobox \"Size\"", "- combobox \"Size\" [ref=eN]: Small");
	line_is(
	    t, "option \"Small\"", "- option \"Small\" [selected] [ref=eN]");
	line_is(t, "slider \"Volume\"", "- slider \"Volume\" [ref=eN]: 3");
	line_is(t, "Date \"Day\"", "- Date \"Day\" [ref=eN]: 2024-05-06");
	line_is(t, "button \"Bold\"", "- button \"Bold\" [pressed] [ref=eN]");
	line_is(t, "button \"Menu\"", "- button \"Menu\" [collapsed] [ref=eN]");
	line_is(t, "button \"Send\"", "- button \"Send\" [disabled] [ref=eN]");
	line_is(
	    t, "textbox \"Notes\"", "- textbox \"Notes\" [ref=eN]: Draft text");

	/* Checked by a click, moved by a key: the lines change. */
	df_ref_of(t, "checkbox \"Remember me\"", ref, sizeof(ref));
	snprintf(args, sizeof(args), "{\"ref\":\"%s\"}", ref);
	cr_assert_eq(run("click", args, NULL).err, CM_OK);
	df_ref_of(t, "slider \"Volume\"", ref, sizeof(ref));
	snprintf(args, sizeof(args), "{\"ref\":\"%s\"}", ref);
	json_decref(res);
	cr_assert_eq(run("click", args, NULL).err, CM_OK);
	cr_assert_eq(run("press", "{\"key\":\"Home\"}", NULL).err, CM_OK);
	cr_assert_eq(run("press", "{\"key\":\"ArrowRight\"}", NULL).err, CM_OK);
	res = snapshot("{}");
	t = str(res, "snapshot");
	line_is(t, "checkbox \"Remember me\"",
	    "- checkbox \"Remember me\" [checked] [ref=eN]");
	line_is(t, "slider \"Volume\"",
	    "- slider \"Volume\" [focused] [ref=eN]: 1");
	line_is(t, "textbox \"Email\"",
	    "- textbox \"Email\" [required] [ref=eN]: you@y.org");
	json_decref(res);
}

/* What a person can click gets a ref, role or none; a ref clicks it. */
Test(page_snapshot, what_is_clickable_without_a_role_gets_a_ref)
{
	char ref[32], lone[32], deep[32], args[96];
	json_t *res;
	const char *t;

	pf_navigate(&f, "/clickables", "Clickables");
	res = snapshot("{}");
	t = str(res, "snapshot");
	line_is(t, "\"Open it\"", "- clickable \"Open it\" [ref=eN]");
	line_is(t, "\"Tab stop\"", "- clickable \"Tab stop\" [ref=eN]");
	line_is(t, "\"Old style\"", "- clickable \"Old style\" [ref=eN]");
	line_is(t, "- listitem", "- listitem [ref=eN]");
	line_is(t, "slider \"Level\"", "- slider \"Level\" [ref=eN]: 4");
	line_is(t, "Plain text", "- text \"Plain text\"");
	/* A listener alone makes an element clickable; the body's (a page's
	 * delegation) does not make the body one. */
	line_is(t, "\"Only a listener\"",
	    "- clickable \"Only a listener\" [ref=eN]");
	/* So does one inside an open shadow root. */
	line_is(t, "\"In a shadow\"", "- clickable \"In a shadow\" [ref=eN]");
	cr_assert_null(strstr(t, "\"Open\""), "%s", t);
	df_ref_of(t, "\"Open it\"", ref, sizeof(ref));
	df_ref_of(t, "\"Only a listener\"", lone, sizeof(lone));
	df_ref_of(t, "\"In a shadow\"", deep, sizeof(deep));
	json_decref(res);
	snprintf(args, sizeof(args), "{\"ref\":\"%s\"}", ref);
	cr_assert_eq(run("click", args, NULL).err, CM_OK);
	res = snapshot("{}");
	cr_assert_str_eq(str(res, "title"), "Opened");
	json_decref(res);
	snprintf(args, sizeof(args), "{\"ref\":\"%s\"}", lone);
	cr_assert_eq(run("click", args, NULL).err, CM_OK);
	res = snapshot("{}");
	cr_assert_str_eq(str(res, "title"), "Heard");
	json_decref(res);
	snprintf(args, sizeof(args), "{\"ref\":\"%s\"}", deep);
	cr_assert_eq(run("click", args, NULL).err, CM_OK);
	res = snapshot("{}");
	cr_assert_str_eq(str(res, "title"), "Deep");
	json_decref(res);
}

/* Looking at a page never crashes it: a page of a select, a range, a
 * date and a file input (a listener search asked from the snapshot's
 * world crashed Chromium's renderer on it in about one snapshot in five,
 * after a few navigations) is loaded, read twice, and loaded again, over
 * and over, and every read answers. */
Test(page_snapshot, a_page_read_again_and_again_never_crashes)
{
	for (int i = 0; i < SNAPSHOT_AGAIN; i++) {
		json_t *res;

		pf_navigate(&f, "/controls", "Form");
		for (int k = 0; k < 2; k++) {
			res = snapshot("{}");
			cr_assert_not_null(
			    strstr(str(res, "snapshot"), "\"Volume\""),
			    "read %d: %s", i, str(res, "snapshot"));
			json_decref(res);
		}
	}
}

/* A text past its bound is cut, marked, and counted. */
Test(page_snapshot, a_long_text_is_cut_and_counted)
{
	json_t *res;
	const char *t;

	pf_navigate(&f, "/article", "Article");
	res = snapshot("{}");
	t = str(res, "snapshot");
	cr_assert_not_null(strstr(t, "- text \"Lorem ipsum dolor sit amet"));
	cr_assert_not_null(strstr(t, "\xe2\x80\xa6\"\n"), "%s", t);
	cr_assert_null(strstr(t, "THE END"), "%s", t);
	cr_assert_not_null(strstr(t, "link \"Next page\" [ref=e1]"), "%s", t);
	cr_assert(json_is_true(json_object_get(res, "truncated")));
	cr_assert_eq(json_integer_value(json_object_get(res, "cut_texts")), 1);
	cr_assert_null(json_object_get(res, "next_offset"));
	cr_assert_not_null(strstr(str(res, "note"), "1 name or value"));
	json_decref(res);
}

/* A snapshot of a ref's subtree shows that element and what it holds. */
Test(page_snapshot, a_snapshot_of_a_ref_is_its_subtree)
{
	char ref[32], args[160], big[32];
	json_t *res;

	pf_navigate(&f, "/state", "State");
	res = snapshot("{}");
	df_ref_of(str(res, "snapshot"), "combobox \"Size\"", ref, sizeof(ref));
	df_ref_of(str(res, "snapshot"), "textbox \"Email\"", big, sizeof(big));
	json_decref(res);
	snprintf(args, sizeof(args), "{\"ref\":\"%s\"}", ref);
	res = snapshot(args);
	snprintf(args, sizeof(args),
	    "- combobox \"Size\" [ref=%s]: Small\n"
	    "  - option \"Small\" [selected] [ref=e",
	    ref);
	cr_assert_eq(strncmp(str(res, "snapshot"), args, strlen(args)), 0, "%s",
	    str(res, "snapshot"));
	cr_assert_null(strstr(str(res, "snapshot"), "Email"));
	cr_assert(json_is_false(json_object_get(res, "truncated")));
	json_decref(res);
	/* The refs of the whole page's snapshot still act. */
	snprintf(
	    args, sizeof(args), "{\"ref\":\"%s\",\"timeout_ms\":1000}", big);
	cr_assert_eq(run("wait_for", args, NULL).err, CM_OK);
	cr_assert_eq(run("snapshot", "{\"ref\":\"e9999\"}", NULL).err,
	    CM_E_ELEMENT_NOT_FOUND);
}

/* A page of 20,000 links is read to its end page by page, from each
 * cut's next_offset; every link shows, and the refs of all pages act:
 * the first page's first, and the last page's last. */
Test(page_snapshot, a_long_page_is_read_to_its_end_by_offset)
{
	static bool seen[20001];
	char args[96], ref[32], first[32];
	json_int_t offset = 0, pages = 0;
	long k = 0;
	json_t *res;

	pf_navigate(&f, "/links?n=20000", "Links");
	for (;;) {
		const char *t, *s;
		const json_t *next;

		snprintf(args, sizeof(args),
		    "{\"max_chars\":40000,\"offset\":%lld}", (long long)offset);
		res = snapshot(args);
		t = str(res, "snapshot");
		cr_assert_leq(strlen(t), 40000);
		if (pages == 0)
			df_ref_of(t, "link \"Link 1\"", first, sizeof(first));
		else /* the path to where it goes on */
			cr_assert_eq(strncmp(t, "- list\n  - listitem\n",
			                 strlen("- list\n  - listitem\n")),
			    0, "%s", t);
		for (s = t; (s = strstr(s, "link \"Link ")) != NULL; s++)
			seen[strtol(s + 11, NULL, 10) % 20001] = true;
		k = last_link(t, ref, sizeof(ref));
		next = json_object_get(res, "next_offset");
		pages++;
		if (next == NULL) {
			cr_assert(
			    json_is_false(json_object_get(res, "truncated")),
			    "%s", str(res, "note"));
			json_decref(res);
			break;
		}
		cr_assert_gt(json_integer_value(next), offset);
		offset = json_integer_value(next);
		json_decref(res);
		cr_assert_lt(pages, 100);
	}
	cr_assert_eq(k, 20000);
	for (int i = 1; i <= 20000; i++)
		cr_assert(seen[i], "Link %d was on no page", i);
	cr_assert_gt(pages, 2);
	/* Past the end there is nothing more. */
	res = snapshot("{\"offset\":99999999}");
	cr_assert_str_eq(str(res, "snapshot"), "");
	cr_assert(json_is_false(json_object_get(res, "truncated")));
	cr_assert_not_null(strstr(str(res, "note"), "nothing more"));
	json_decref(res);
	snprintf(
	    args, sizeof(args), "{\"ref\":\"%s\",\"timeout_ms\":1000}", first);
	cr_assert_eq(run("wait_for", args, NULL).err, CM_OK, "%s", first);
	click_goes_to(ref, 20000);
}

/* snapshot: true on an action: its result carries the snapshot of the
 * page after it; a failed action has no result. */
Test(page_snapshot, an_action_with_snapshot_true_returns_one)
{
	char ref[32], args[96];
	json_t *res, *snap;
	struct act_outcome o;

	pf_navigate(&f, "/clickables", "Clickables");
	res = snapshot("{}");
	df_ref_of(str(res, "snapshot"), "\"Open it\"", ref, sizeof(ref));
	json_decref(res);
	snprintf(args, sizeof(args), "{\"ref\":\"%s\",\"snapshot\":true}", ref);
	o = run("click", args, &res);
	cr_assert_eq(o.err, CM_OK, "%s", o.message);
	cr_assert(json_is_true(json_object_get(res, "clicked")));
	snap = json_object_get(res, "snapshot");
	cr_assert(json_is_object(snap));
	cr_assert_str_eq(str(snap, "title"), "Opened");
	cr_assert_not_null(
	    strstr(str(snap, "text"), "- heading \"Clickables\"\n"), "%s",
	    str(snap, "text"));
	cr_assert(json_is_false(json_object_get(snap, "truncated")));
	json_decref(res);

	o = run("click", "{\"ref\":\"e9999\",\"snapshot\":true}", &res);
	cr_assert_eq(o.err, CM_E_ELEMENT_NOT_FOUND);
	cr_assert_null(res);

	snprintf(args, sizeof(args),
	    "{\"url\":\"http://127.0.0.1:%d/next\",\"snapshot\":true}",
	    f.w.port);
	o = run("navigate", args, &res);
	cr_assert_eq(o.err, CM_OK, "%s", o.message);
	cr_assert_not_null(strstr(str(json_object_get(res, "snapshot"), "text"),
	    "heading \"Second page\""));
	json_decref(res);
}
