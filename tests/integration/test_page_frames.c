/*
 * test_page_frames.c: frames in the snapshot, with refs that act inside
 * them, on a real Chromium with the managed driver, under a policy that
 * allows 127.0.0.1 and localhost.  A frame of the same origin, one of the
 * same site on another port (a sign-in form, typed into and submitted by
 * refs), and one of another site, in a renderer of its own (localhost in
 * a 127.0.0.1 page): each one's content nests under its line, and a
 * click by ref lands in it.  A request of an out-of-process frame meets
 * the policy as the page's own do.  A snapshot reads at most
 * CM_FRAMES_MAX frames and says it left some out; a ref of a frame that
 * navigated is stale.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "limits.h"
#include "page_fixture.h"

#define POLL_MS 10000 /* the most a test waits for the page to change */

static struct pf_page f;

static void
setup(void)
{
	pf_open_policy(&f, "frames", "0190a0b0-0000-7000-8000-000000000007",
	    30000, "{\"allow_hosts\": [\"127.0.0.1\", \"localhost\"]}");
}

static void
teardown(void)
{
	pf_close(&f);
}

TestSuite(page_frames, .init = setup, .fini = teardown, .timeout = 240);

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

static json_t *
snapshot(void)
{
	json_t *res;
	struct act_outcome o = run("snapshot", "{}", &res);

	cr_assert_eq(
	    o.err, CM_OK, "snapshot: %s (%s)", cm_err_code(o.err), o.message);
	return res;
}

static void
pause_ms(long ms)
{
	struct timespec t = {.tv_sec = 0, .tv_nsec = ms * 1000000L};

	nanosleep(&t, NULL);
}

/* Snapshots until one shows what (a frame loads after its page's
 * navigate ends), for at most POLL_MS; returns it (the caller decrefs). */
static json_t *
snapshot_showing(const char *what)
{
	int64_t end = cm_mono_ms() + POLL_MS;

	for (;;) {
		json_t *res = snapshot();

		if (strstr(str(res, "snapshot"), what) != NULL)
			return res;
		cr_assert_lt(cm_mono_ms(), end, "no \"%s\" in:\n%s", what,
		    str(res, "snapshot"));
		json_decref(res);
		pause_ms(50);
	}
}

/* Whether line `what` of outline is nested deeper than line `under`,
 * and after it. */
static bool
nested_under(const char *outline, const char *under, const char *what)
{
	const char *u = strstr(outline, under), *x = strstr(outline, what);
	const char *ul, *xl;

	if (u == NULL || x == NULL || x < u)
		return false;
	for (ul = u; ul > outline && ul[-1] != '\n'; ul--)
		;
	for (xl = x; xl > outline && xl[-1] != '\n'; xl--)
		;
	return strspn(xl, " ") > strspn(ul, " ");
}

static void
click(const char *ref)
{
	char args[64];
	struct act_outcome o;

	snprintf(args, sizeof(args), "{\"ref\":\"%s\"}", ref);
	o = run("click", args, NULL);
	cr_assert_eq(o.err, CM_OK, "click %s: %s (%s)", ref, cm_err_code(o.err),
	    o.message);
}

/* A click by ref on the frame's button lands in the frame, and so does
 * one on an element of the frame that only a script's listener makes
 * clickable. */
static void
press_in_frame(const char *frame_line)
{
	char ref[32], lone[32];
	json_t *res = snapshot_showing("button \"Press me\"");
	const char *t = str(res, "snapshot");

	cr_assert(nested_under(t, frame_line, "heading \"Inside\""), "%s", t);
	cr_assert(nested_under(t, frame_line, "button \"Press me\""), "%s", t);
	cr_assert(
	    nested_under(t, frame_line, "clickable \"Only a listener\" [ref="),
	    "%s", t);
	df_ref_of(t, "button \"Press me\"", ref, sizeof(ref));
	df_ref_of(t, "clickable \"Only a listener\"", lone, sizeof(lone));
	json_decref(res);
	click(ref);
	res = snapshot_showing("button \"Pressed\"");
	cr_assert(nested_under(
	              str(res, "snapshot"), frame_line, "button \"Pressed\""),
	    "%s", str(res, "snapshot"));
	json_decref(res);
	click(lone);
	json_decref(snapshot_showing("\"Heard\""));
}

Test(page_frames, a_same_origin_frames_button_is_clicked_by_ref)
{
	pf_navigate(&f, "/framed", "Framed");
	press_in_frame("Iframe \"Inner\"");
}

Test(page_frames, an_out_of_process_frames_button_is_clicked_by_ref)
{
	pf_navigate(&f, "/oopif", "Other site");
	press_in_frame("Iframe \"Elsewhere\"");
}

Test(page_frames, a_sign_in_form_in_a_cross_origin_frame_is_filled_and_sent)
{
	int port2 = 0;
	struct tk_pages *other = tk_pages_start(&port2);
	char path[64], user[32], pw[32], args[128];
	json_t *res;
	struct act_outcome o;

	cr_assert_not_null(other);
	snprintf(path, sizeof(path), "/xlogin?n=%d", port2);
	pf_navigate(&f, path, "Framed sign-in");
	res = snapshot_showing("button \"Sign in\"");
	cr_assert(nested_under(str(res, "snapshot"), "Iframe \"Sign-in\"",
	              "textbox \"User\""),
	    "%s", str(res, "snapshot"));
	df_ref_of(str(res, "snapshot"), "textbox \"User\"", user, sizeof(user));
	df_ref_of(str(res, "snapshot"), "textbox \"Password\"", pw, sizeof(pw));
	json_decref(res);
	snprintf(
	    args, sizeof(args), "{\"ref\":\"%s\",\"text\":\"alice\"}", user);
	o = run("type", args, NULL);
	cr_assert_eq(o.err, CM_OK, "type: %s", o.message);
	snprintf(args, sizeof(args),
	    "{\"ref\":\"%s\",\"text\":\"s3cret\",\"submit\":true}", pw);
	o = run("type", args, NULL);
	cr_assert_eq(o.err, CM_OK, "type: %s", o.message);
	/* The frame shows where the form led, under the same top page, and
	 * the other server saw it sent. */
	res = snapshot_showing("heading \"Second page\"");
	cr_assert(nested_under(str(res, "snapshot"), "Iframe \"Sign-in\"",
	              "heading \"Second page\""),
	    "%s", str(res, "snapshot"));
	cr_assert_str_eq(str(res, "title"), "Framed sign-in");
	cr_assert_eq(tk_pages_hits(other, "/next"), 1);
	json_decref(res);
	tk_pages_stop(other);
}

Test(page_frames, an_out_of_process_frames_requests_meet_the_policy)
{
	int64_t end = cm_mono_ms() + POLL_MS;
	json_t *res;

	pf_navigate(&f, "/leaky", "Leaky");
	/* The frame's picture was answered or failed: the top page says so. */
	for (;;) {
		res = snapshot();
		if (strcmp(str(res, "title"), "Done") == 0)
			break;
		cr_assert_lt(cm_mono_ms(), end, "the frame never said");
		json_decref(res);
		pause_ms(50);
	}
	json_decref(res);
	cr_assert_geq(tk_pages_hits(f.w.pages, "/leak"), 1);
	cr_assert_eq(tk_pages_hits(f.w.pages, "/tracker"), 0,
	    "a request of the frame to a refused host went out");
}

Test(page_frames, a_snapshot_reads_at_most_its_frames_and_says_so)
{
	char path[32];
	json_t *res;
	const char *t, *note;
	int n = 0;

	snprintf(path, sizeof(path), "/frames?n=%d", CM_FRAMES_MAX + 1);
	pf_navigate(&f, path, "Frames");
	/* Each frame loads on its own: wait for the last one read. */
	res = snapshot();
	for (int64_t end = cm_mono_ms() + POLL_MS;;) {
		n = 0;
		for (t = str(res, "snapshot");
		     (t = strstr(t, "button \"Press me\"")) != NULL; t++)
			n++;
		if (n >= CM_FRAMES_MAX || cm_mono_ms() > end)
			break;
		json_decref(res);
		pause_ms(50);
		res = snapshot();
	}
	cr_assert_eq(n, CM_FRAMES_MAX, "%s", str(res, "snapshot"));
	cr_assert(json_is_true(json_object_get(res, "truncated")));
	note = str(res, "note");
	cr_assert_not_null(note);
	cr_assert_not_null(
	    strstr(note, "the content of 1 frames is not shown"), "%s", note);
	cr_assert_not_null(strstr(str(res, "snapshot"), "Iframe \"Frame 17\""));
	json_decref(res);
}

Test(page_frames, a_ref_of_a_frame_that_navigated_is_stale)
{
	char press[32], leave[32], args[64];
	json_t *res;
	struct act_outcome o;
	int64_t end;

	pf_navigate(&f, "/framed", "Framed");
	res = snapshot_showing("button \"Press me\"");
	df_ref_of(
	    str(res, "snapshot"), "button \"Press me\"", press, sizeof(press));
	df_ref_of(
	    str(res, "snapshot"), "link \"Leave frame\"", leave, sizeof(leave));
	json_decref(res);
	click(leave);
	/* The page runs only within calls: one that reads no ref lets the
	 * frame's navigation go on. */
	end = cm_mono_ms() + POLL_MS;
	while (tk_pages_hits(f.w.pages, "/next") < 1) {
		cr_assert_lt(cm_mono_ms(), end, "the frame did not leave");
		cr_assert_eq(run("extract_text", "{}", NULL).err, CM_OK);
		pause_ms(20);
	}
	/* Until its new document commits the old button is still there;
	 * from then on its ref names nothing. */
	snprintf(args, sizeof(args), "{\"ref\":\"%s\"}", press);
	for (;;) {
		o = run("click", args, NULL);
		if (o.err != CM_OK)
			break;
		cr_assert_lt(cm_mono_ms(), end, "the old ref still acts");
		pause_ms(20);
	}
	cr_assert_eq(o.err, CM_E_ELEMENT_NOT_FOUND, "%s: %s",
	    cm_err_code(o.err), o.message);
}
