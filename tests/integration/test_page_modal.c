/*
 * test_page_modal.c: the page's dialogs as modal state, on the managed
 * driver and a real Chromium, on pages of the test's own (pages.h).  A
 * dialog stays open until handle_dialog answers it: the click whose
 * handler opened it ends at once and reports it, every other call but a
 * snapshot fails with dialog_open meanwhile, and the page's own script
 * then sees the answer (confirm's true or false, prompt's text).  An
 * alert as a page loads is reported by its navigate.  Every result
 * carries the page's header, and the snapshot begins with its lines.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	pf_open(&f, "modal", "0190a0b0-0000-7000-8000-000000000007", WAIT_MS);
}

static void
teardown(void)
{
	pf_close(&f);
}

TestSuite(page_modal, .init = setup, .fini = teardown, .timeout = 240);

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

/* Runs cap, which must succeed; its result (the caller decrefs). */
static json_t *
ok(const char *cap, const char *args)
{
	json_t *res = NULL;
	struct act_outcome o = run(cap, args, &res);

	cr_assert_eq(o.err, CM_OK, "%s %s: %s %s", cap, args,
	    cm_err_code(o.err), o.message);
	cr_assert_not_null(res, "%s: no result", cap);
	return res;
}

static json_t *
go(const char *path)
{
	char args[160];

	snprintf(args, sizeof(args), "{\"url\":\"http://127.0.0.1:%d%s\"}",
	    f.w.port, path);
	return ok("navigate", args);
}

/* The text of #out now. */
static void
out_is(const char *want)
{
	json_t *res = ok("extract_text", "{\"selector\":\"#out\"}");

	cr_assert_str_eq(str(res, "text"), want);
	json_decref(res);
}

static void
fails_with(const char *cap, const char *args, enum cm_err want)
{
	struct act_outcome o = run(cap, args, NULL);

	cr_assert_eq(o.err, want, "%s %s: %s (%s)", cap, args,
	    cm_err_code(o.err), o.message);
}

/* res reports an open dialog of type with message, in its own "dialog"
 * and in its header's. */
static void
reports_open(json_t *res, const char *type, const char *message)
{
	const json_t *d = json_object_get(res, "dialog");
	const json_t *h =
	    json_object_get(json_object_get(res, "page"), "dialog");
	char *text = json_dumps(res, 0);

	cr_assert_not_null(d, "no dialog in %s", text);
	cr_assert_str_eq(str(d, "type"), type, "%s", text);
	cr_assert_str_eq(str(d, "message"), message, "%s", text);
	cr_assert(json_is_true(json_object_get(d, "open")), "%s", text);
	cr_assert_not_null(h, "no dialog in the header: %s", text);
	cr_assert_str_eq(str(h, "type"), type, "%s", text);
	free(text);
}

/* Clicks #del and answers its confirm with accept. */
static void
confirm_answered(bool accept)
{
	json_t *res = ok("click", "{\"selector\":\"#del\"}");
	const json_t *h;

	/* The click landed: its handler opened the dialog. */
	cr_assert(json_is_true(json_object_get(res, "clicked")));
	reports_open(res, "confirm", "Delete the draft?");
	json_decref(res);

	/* Nothing else acts while it is open. */
	fails_with("click", "{\"selector\":\"#ask\"}", CM_E_DIALOG_OPEN);
	fails_with("extract_text", "{\"selector\":\"#out\"}", CM_E_DIALOG_OPEN);

	res = ok("handle_dialog",
	    accept ? "{\"accept\":true}" : "{\"accept\":false}");
	h = json_object_get(res, "handled");
	cr_assert_str_eq(str(h, "type"), "confirm");
	cr_assert_eq(json_is_true(json_object_get(h, "accepted")), accept);
	cr_assert_null(json_object_get(json_object_get(res, "page"), "dialog"),
	    "the dialog is answered");
	json_decref(res);
	out_is(accept ? "confirm=true" : "confirm=false");
}

Test(page_modal, a_confirm_stays_open_until_it_is_accepted_or_dismissed)
{
	json_decref(go("/confirm"));
	confirm_answered(true);
	confirm_answered(false);
}

Test(page_modal, a_prompt_gets_the_text_it_is_answered_with)
{
	json_t *res, *h;

	json_decref(go("/confirm"));
	res = ok("click", "{\"selector\":\"#ask\"}");
	reports_open(res, "prompt", "Your name?");
	cr_assert_str_eq(
	    str(json_object_get(res, "dialog"), "default_prompt"), "Ada");
	json_decref(res);

	res =
	    ok("handle_dialog", "{\"accept\":true,\"prompt_text\":\"Grace\"}");
	h = json_object_get(res, "handled");
	cr_assert_str_eq(str(h, "prompt_text"), "Grace");
	json_decref(res);
	out_is("prompt=Grace");
}

Test(page_modal,
    an_alert_as_the_page_loads_is_reported_and_blocks_until_answered)
{
	json_t *res;
	const char *text;

	res = go("/alert");
	reports_open(res, "alert", "Your draft was saved");
	json_decref(res);

	fails_with("click", "{\"selector\":\"h1\"}", CM_E_DIALOG_OPEN);
	/* A snapshot shows the dialog in its header. */
	res = ok("snapshot", "{}");
	text = str(res, "snapshot");
	cr_assert_not_null(
	    strstr(text, "dialog: alert \"Your draft was saved\" (open"), "%s",
	    text);
	json_decref(res);

	json_decref(ok("handle_dialog", "{\"accept\":true}"));
	res = ok("extract_text", "{\"selector\":\"h1\"}");
	cr_assert_str_eq(str(res, "text"), "Notice");
	json_decref(res);
	/* None is open now. */
	fails_with("handle_dialog", "{\"accept\":true}", CM_E_NO_DIALOG);
}

Test(page_modal, every_result_carries_the_page_header)
{
	char url[96], want[160];
	json_t *res, *page, *tab;
	const char *text;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/popup", f.w.port);
	res = go("/popup");
	page = json_object_get(res, "page");
	cr_assert_str_eq(str(page, "url"), url);
	cr_assert_str_eq(str(page, "title"), "Opener");
	cr_assert(json_is_false(json_object_get(page, "loading")), "%s",
	    json_dumps(res, 0));
	cr_assert_eq(json_array_size(json_object_get(page, "tabs")), 1);
	tab = json_array_get(json_object_get(page, "tabs"), 0);
	cr_assert_eq(json_integer_value(json_object_get(tab, "index")), 0);
	cr_assert(json_is_true(json_object_get(tab, "current")));
	cr_assert_str_eq(str(tab, "url"), url);
	cr_assert_null(json_object_get(page, "dialog"));
	json_decref(res);

	/* A click's result too, with the title the click gave the page. */
	res = ok("click", "{\"selector\":\"#mark\"}");
	page = json_object_get(res, "page");
	cr_assert_str_eq(str(page, "url"), url);
	cr_assert_str_eq(str(page, "title"), "Marked");
	json_decref(res);

	res = ok("snapshot", "{}");
	text = str(res, "snapshot");
	snprintf(want, sizeof(want), "url: %s\ntitle: Marked\n- ", url);
	cr_assert_eq(strncmp(text, want, strlen(want)), 0, "%s", text);
	json_decref(res);
}
