/*
 * test_page_actions.c: what a person does on a form and with a pointer,
 * through the managed driver on a real Chromium, on pages of the test's
 * own (pages.h).  Each action's result is what the page holds after it,
 * read back, and each page logs the events it got into its own DOM, so
 * the test reads what the page received: fill replaces a field's value
 * (typed text, or a date, time, range or color as its picker sets it) and
 * refuses a value the field would not hold; select_option chooses options
 * by value or label and names those it cannot find; check clicks only
 * when the state differs, and fails when the click changed nothing.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capability.h"
#include "driver.h"
#include "driver_fixture.h"
#include "page_fixture.h"
#include "pages.h"
#include "testkit.h"

#define WAIT_MS 30000 /* the most one call may take here */

static struct pf_page f;

static void
setup(void)
{
	pf_open(&f, "actions", "0190a0b0-0000-7000-8000-000000000004", WAIT_MS);
}

static void
teardown(void)
{
	pf_close(&f);
}

TestSuite(page_actions, .init = setup, .fini = teardown, .timeout = 240);

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
	df_open(&act_driver_managed, f.drv, f.w.port, path, title, WAIT_MS);
}

/* Runs cap with args, which must succeed; its result (caller decrefs). */
static json_t *
ok(const char *cap, const char *args)
{
	json_t *res = NULL;
	struct act_outcome o = run(cap, args, &res);

	cr_assert_eq(o.err, CM_OK, "%s %s: %s (%s)", cap, args,
	    cm_err_code(o.err), o.message);
	cr_assert_not_null(res, "%s %s: no result", cap, args);
	return res;
}

static void
fails_with(
    const char *cap, const char *args, enum cm_err want, const char *words)
{
	df_fails_with(
	    &act_driver_managed, f.drv, cap, args, want, words, WAIT_MS);
}

/* The text of the page's element of selector (its log, say), malloc'd. */
static char *
text_of(const char *selector)
{
	char args[128];
	json_t *res;
	char *t;

	snprintf(args, sizeof(args), "{\"selector\":\"%s\"}", selector);
	res = ok("extract_text", args);
	t = strdup(str(res, "text"));
	json_decref(res);
	return t;
}

static void
log_has(const char *words)
{
	char *log = text_of("#log");

	cr_assert_not_null(strstr(log, words),
	    "the page's log \"%s\" lacks \"%s\"", log, words);
	free(log);
}

static void
log_lacks(const char *words)
{
	char *log = text_of("#log");

	cr_assert_null(
	    strstr(log, words), "the page's log \"%s\" has \"%s\"", log, words);
	free(log);
}

static void
log_ends(const char *words)
{
	char *log = text_of("#log");
	size_t n = strlen(log), k = strlen(words);

	cr_assert(n >= k && strcmp(log + n - k, words) == 0,
	    "the page's log \"%s\" does not end with \"%s\"", log, words);
	free(log);
}

/* ---- fill */

/* Fills the field of selector with value; the result reads back want. */
static void
fills(const char *selector, const char *value, const char *want)
{
	char args[256];
	json_t *res;

	snprintf(args, sizeof(args), "{\"selector\":\"%s\",\"value\":\"%s\"}",
	    selector, value);
	res = ok("fill", args);
	cr_assert_str_eq(str(res, "value"), want, "fill %s", args);
	json_decref(res);
}

Test(page_actions, fill_replaces_typed_text_with_the_events_of_typing)
{
	char ref[32], args[96];
	json_t *res;

	open_page("/form2", "Fill");
	/* The prefilled value is replaced, not added to. */
	fills("#t", "New", "New");
	log_has("input:t=New");
	fills("#a", "a new note", "a new note");
	log_has("input:a=a new note");
	res = ok("snapshot", "{}");
	df_ref_of(str(res, "snapshot"), "textbox \"Bio\"", ref, sizeof(ref));
	json_decref(res);
	snprintf(
	    args, sizeof(args), "{\"ref\":\"%s\",\"value\":\"Hello\"}", ref);
	res = ok("fill", args);
	cr_assert_str_eq(str(res, "value"), "Hello");
	json_decref(res);
	log_has("input:e=Hello");
	fills("#n", "-12.5", "-12.5");
	log_has("input:n=-12.5");
	/* An empty value clears the field, as deleting its text does. */
	fills("#t", "", "");
	log_ends("input:t=");
}

Test(page_actions, fill_sets_pickers_with_input_and_change)
{
	static const struct {
		const char *sel, *value, *want;
	} set[] = {
	    {"#d", "2024-02-29", "2024-02-29"},
	    {"#tm", "13:45", "13:45"},
	    {"#dl", "2024-01-02T03:04", "2024-01-02T03:04"},
	    {"#mo", "2024-05", "2024-05"},
	    {"#wk", "2024-W07", "2024-W07"},
	    {"#r", "7", "7"},
	    {"#co", "#12AB3f", "#12ab3f"},
	};
	char want[96];

	open_page("/form2", "Fill");
	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++) {
		fills(set[i].sel, set[i].value, set[i].want);
		snprintf(want, sizeof(want), "input:%s=%s change:%s=%s",
		    set[i].sel + 1, set[i].want, set[i].sel + 1, set[i].want);
		log_has(want);
	}
	/* A range holds what its bounds allow: 99 reads back as its max. */
	fills("#r", "99", "10");
}

Test(page_actions, fill_refuses_what_the_element_would_not_hold)
{
	open_page("/form2", "Fill");
	fails_with("fill", "{\"selector\":\"#d\",\"value\":\"hello\"}",
	    CM_E_INVALID_ARGS, "YYYY-MM-DD");
	fails_with("fill", "{\"selector\":\"#n\",\"value\":\"abc\"}",
	    CM_E_INVALID_ARGS, "refuses that value");
	fails_with("fill", "{\"selector\":\"#co\",\"value\":\"red\"}",
	    CM_E_INVALID_ARGS, "#rrggbb");
	fails_with("fill", "{\"selector\":\"#c\",\"value\":\"on\"}",
	    CM_E_ELEMENT_NOT_EDITABLE, "use check");
	fails_with("fill", "{\"selector\":\"#ro\",\"value\":\"x\"}",
	    CM_E_ELEMENT_NOT_INTERACTABLE, "read-only");
	/* None of them reached the page. */
	log_lacks("input:");
}

/* ---- select_option */

Test(page_actions, select_option_chooses_by_value_and_by_label)
{
	json_t *res;

	open_page("/select", "Pick");
	res = ok(
	    "select_option", "{\"selector\":\"#one\",\"labels\":[\"Medium\"]}");
	cr_assert_str_eq(json_string_value(json_array_get(
	                     json_object_get(res, "selected"), 0)),
	    "m");
	json_decref(res);
	log_has("input:one=m change:one=m");
	res = ok("select_option",
	    "{\"selector\":\"#many\",\"values\":[\"ch\",\"ol\",\"mu\"]}");
	cr_assert_eq(json_array_size(json_object_get(res, "selected")), 3);
	cr_assert_str_eq(json_string_value(json_array_get(
	                     json_object_get(res, "selected"), 2)),
	    "mu");
	json_decref(res);
	log_has("change:many=ch,ol,mu");
	/* Choosing again sets exactly those: one of the three stays. */
	res = ok("select_option",
	    "{\"selector\":\"#many\",\"labels\":[\"Olives\"]}");
	cr_assert_eq(json_array_size(json_object_get(res, "selected")), 1);
	json_decref(res);
}

Test(page_actions, select_option_refuses_what_the_select_lacks)
{
	open_page("/select", "Pick");
	fails_with("select_option",
	    "{\"selector\":\"#one\",\"values\":[\"s\",\"xl\",\"xxl\"]}",
	    CM_E_ELEMENT_NOT_FOUND, "\"xl\", \"xxl\"");
	fails_with("select_option", "{\"selector\":\"#t\",\"values\":[\"s\"]}",
	    CM_E_ELEMENT_NOT_INTERACTABLE, "not a select");
	fails_with("select_option",
	    "{\"selector\":\"#one\",\"values\":[\"s\",\"m\"]}",
	    CM_E_INVALID_ARGS, "takes one option");
	fails_with("select_option",
	    "{\"selector\":\"#one\",\"labels\":[\"Large\"]}",
	    CM_E_ELEMENT_NOT_INTERACTABLE, "disabled");
	log_lacks("change:");
}

/* ---- check */

/* check with args; the result says checked is want, and whether it
 * clicked. */
static void
checks(const char *args, bool want, bool clicked)
{
	json_t *res = ok("check", args);

	cr_assert_eq(json_is_true(json_object_get(res, "checked")), want,
	    "check %s", args);
	cr_assert_eq(json_is_true(json_object_get(res, "clicked")), clicked,
	    "check %s", args);
	json_decref(res);
}

Test(page_actions, check_clicks_only_when_the_state_differs)
{
	open_page("/checks", "Checks");
	checks("{\"selector\":\"#c\",\"checked\":true}", true, true);
	log_has("c=true");
	checks("{\"selector\":\"#c\",\"checked\":true}", true, false);
	checks("{\"selector\":\"#c\",\"checked\":false}", false, true);
	log_has("c=true c=false");
	/* A radio button: checking Blue unchecks Red. */
	checks("{\"selector\":\"#r2\",\"checked\":true}", true, true);
	checks("{\"selector\":\"#r1\",\"checked\":false}", false, false);
	fails_with("check", "{\"selector\":\"#r2\",\"checked\":false}",
	    CM_E_ELEMENT_NOT_INTERACTABLE, "check another one");
	/* A switch by role, which the page's script toggles. */
	checks("{\"selector\":\"#sw\",\"checked\":true}", true, true);
	log_has("sw=true");
}

Test(page_actions, check_fails_when_the_click_changes_nothing)
{
	open_page("/checks", "Checks");
	fails_with("check", "{\"selector\":\"#stuck\",\"checked\":true}",
	    CM_E_ELEMENT_NOT_INTERACTABLE, "still unchecked");
	fails_with("check", "{\"selector\":\"#t\",\"checked\":true}",
	    CM_E_ELEMENT_NOT_INTERACTABLE, "not a checkbox");
}

/* ---- hover and drag */

static void
title_is(const char *want)
{
	json_t *res = ok("snapshot", "{}");

	cr_assert_str_eq(str(res, "title"), want);
	json_decref(res);
}

Test(page_actions, hover_opens_a_menu_whose_item_a_click_then_finds)
{
	char ref[32], args[64];
	json_t *res;

	open_page("/menu", "Menu");
	res = ok("snapshot", "{}");
	cr_assert_null(strstr(str(res, "snapshot"), "Laptops"),
	    "the menu is open before the hover:\n%s", str(res, "snapshot"));
	json_decref(res);
	/* A menu of CSS's :hover. */
	res = ok("hover", "{\"selector\":\"#top\"}");
	cr_assert(json_is_true(json_object_get(res, "hovered")));
	json_decref(res);
	res = ok("snapshot", "{}");
	df_ref_of(str(res, "snapshot"), "link \"Laptops\"", ref, sizeof(ref));
	json_decref(res);
	snprintf(args, sizeof(args), "{\"ref\":\"%s\"}", ref);
	res = ok("click", args);
	cr_assert(json_is_true(json_object_get(res, "navigated")));
	cr_assert_str_eq(str(res, "title"), "Next");
	json_decref(res);
	/* A menu a mouseenter handler opens. */
	open_page("/menu", "Menu");
	fails_with("click", "{\"selector\":\"#out\"}",
	    CM_E_ELEMENT_NOT_INTERACTABLE, "not visible");
	json_decref(ok("hover", "{\"selector\":\"#acct\"}"));
	json_decref(ok("click", "{\"selector\":\"#out\"}"));
	title_is("Signed out");
}

Test(page_actions, drag_drops_an_html5_draggable_on_its_target)
{
	json_t *res;
	char *zone;

	open_page("/drag", "Drag");
	res = ok("drag", "{\"from\":{\"selector\":\"#apple\"},\"to\":{"
	                 "\"selector\":\"#zone\"}}");
	cr_assert(json_is_true(json_object_get(res, "dragged")));
	cr_assert(json_is_true(json_object_get(res, "dropped")));
	json_decref(res);
	title_is("Dropped apple");
	zone = text_of("#zone");
	cr_assert_not_null(strstr(zone, "Apple"), "the basket: %s", zone);
	cr_assert_null(strstr(zone, "Pear"), "the basket: %s", zone);
	free(zone);
}

/* A drag is what its elements got: a drop on an element that takes none
 * is no drop, and a release that something else took is no drag. */
Test(page_actions, a_drag_its_target_did_not_get_is_not_reported_done)
{
	json_t *res;
	char *list;

	open_page("/drag", "Drag");
	/* The pear takes no drop (no dragover handler accepts it). */
	res = ok("drag", "{\"from\":{\"selector\":\"#apple\"},\"to\":{"
	                 "\"selector\":\"#pear\"}}");
	cr_assert(json_is_false(json_object_get(res, "dropped")), "%s",
	    json_dumps(res, 0));
	json_decref(res);
	title_is("Drag");
	list = text_of("#zone");
	cr_assert_null(strstr(list, "Apple"), "the basket: %s", list);
	free(list);
	/* The sheet the press opened takes the release over the tray. */
	open_page("/dragcover", "Cover");
	fails_with("drag",
	    "{\"from\":{\"selector\":\"#card\"},\"to\":{"
	    "\"selector\":\"#tray\"}}",
	    CM_E_OUTCOME_UNKNOWN, "release");
	title_is("Cover");
}

Test(page_actions, drag_moves_a_slider_that_follows_the_mouse)
{
	json_t *res;
	char *out;
	int at = -1, moves = -1;

	open_page("/slider", "Slider");
	res = ok("drag", "{\"from\":{\"selector\":\"#knob\"},\"to\":{"
	                 "\"selector\":\"#end\"}}");
	cr_assert(json_is_true(json_object_get(res, "dragged")));
	cr_assert(json_is_false(json_object_get(res, "dropped")));
	json_decref(res);
	out = text_of("#out");
	cr_assert_eq(sscanf(out, "at %d after %d moves", &at, &moves), 2,
	    "the slider: %s", out);
	cr_assert_eq(at, 280, "the slider: %s", out);
	cr_assert_gt(moves, 1, "the slider: %s", out);
	cr_assert_not_null(strstr(out, ", released"), "the slider: %s", out);
	free(out);
}

/* ---- forward and reload */

Test(page_actions, forward_goes_where_back_came_from_and_no_further)
{
	json_t *res;

	open_page("/", "Home");
	/* Nothing ahead yet: a clear failure, not a success. */
	fails_with(
	    "forward", "{}", CM_E_RUNTIME_ERROR, "no page to go forward to");
	open_page("/next", "Next");
	json_decref(ok("back", "{}"));
	title_is("Home");
	res = ok("forward", "{}");
	cr_assert_str_eq(str(res, "title"), "Next");
	json_decref(res);
	fails_with(
	    "forward", "{}", CM_E_RUNTIME_ERROR, "no page to go forward to");
}

Test(page_actions, reload_loads_the_document_again)
{
	json_t *res;
	int before;

	open_page("/form2", "Fill");
	fills("#t", "typed before", "typed before");
	before = tk_pages_hits(f.w.pages, "/form2");
	res = ok("reload", "{}");
	cr_assert_str_eq(str(res, "title"), "Fill");
	cr_assert(json_is_false(json_object_get(res, "loading")), "%s",
	    json_dumps(res, 0));
	json_decref(res);
	/* A new document: the server was asked again, and the page's log
	 * of the fill went with the old one. */
	cr_assert_eq(tk_pages_hits(f.w.pages, "/form2"), before + 1);
	log_lacks("typed before");
	json_decref(ok("reload", "{\"wait_until\":\"commit\"}"));
	cr_assert_eq(tk_pages_hits(f.w.pages, "/form2"), before + 2);
}

/* ---- click's and press's options */

Test(page_actions, control_a_selects_all_and_a_character_types_itself)
{
	open_page("/keys", "Keys");
	json_decref(ok("click", "{\"selector\":\"#f\"}"));
	json_decref(ok("press", "{\"key\":\"a\",\"modifiers\":[\"Control\"]}"));
	/* All of it selected, and nothing typed. */
	log_has("keydown:a code=KeyA keyup:a+ctrl sel=0-11");
	log_lacks("input=");
	json_decref(ok("press", "{\"key\":\"End\"}"));
	json_decref(ok("press", "{\"key\":\"\xc3\xa9\"}"));
	log_has("input=hello world\xc3\xa9");
	json_decref(ok("press", "{\"key\":\"F2\"}"));
	log_has("keydown:F2 code=F2");
}

Test(page_actions, shift_click_selects_the_range_between_two_clicks)
{
	open_page("/keys", "Keys");
	json_decref(ok("click", "{\"selector\":\"#a\"}"));
	json_decref(
	    ok("click", "{\"selector\":\"#b\",\"modifiers\":[\"Shift\"]}"));
	/* From the middle of Alpha to the middle of Omega. */
	log_has("click:b detail=1 shift sel=\"ha then Om");
}

Test(page_actions, triple_click_selects_a_paragraph)
{
	open_page("/keys", "Keys");
	json_decref(ok("click", "{\"selector\":\"#para\",\"click_count\":3}"));
	log_has("click:para detail=1 ");
	log_has("click:para detail=2 ");
	log_has("click:para detail=3 sel=\"The first sentence of a "
	        "paragraph. Alpha then Omega end.");
}

Test(page_actions, right_and_middle_clicks_reach_the_page)
{
	json_t *res;

	open_page("/keys", "Keys");
	json_decref(
	    ok("click", "{\"selector\":\"#btn\",\"button\":\"right\"}"));
	log_has("contextmenu:btn");
	log_lacks(" click:btn");
	/* A middle click on a link opens it in a tab of its own; the page
	 * stays where it is, and takes the next call. */
	res = ok("click", "{\"selector\":\"#lnk\",\"button\":\"middle\"}");
	cr_assert(json_is_true(json_object_get(res, "clicked")));
	cr_assert_null(json_object_get(res, "navigated"));
	json_decref(res);
	log_has("auxclick:lnk button=1");
	title_is("Keys");
}
