/*
 * page_bench: each page capability on a loaded page, through the managed
 * driver on a real Chromium as the actor runs it (bw_driver_call), on the
 * test page server's pages (tests/integration/pages.h).  Measured, never
 * asserted.
 *
 *   page_bench [NAME...]   (default: every case; a NAME runs the cases
 *                           of that capability, "click" all the clicks)
 *   PAGE_BENCH_RUNS=N      timed runs of each case, 1..200 (default 20)
 *
 * Each case navigates once to its page and makes its set-up calls, then
 * makes N runs of its capability alone, each timed from the call's start
 * to its outcome.  What a run needs the page to be in first (a confirm
 * open for handle_dialog, the draggable back in its list for drag, a
 * page behind or ahead for back and forward) is done by an untimed call
 * before it.  A case whose runs would leave the page as it found it
 * alternates two args (check true then false, two values for fill), so
 * that every run changes the page.  Where the result says what the page
 * received (clicked, dropped, hovered), that must be true.  The first
 * run of a case is timed as the others (for the snapshot, it makes the
 * script's world).
 *
 * Prints "page_bench: <capability>[<variant>] <page> runs=N p50_ms=..
 * p99_ms=.. min_ms=.." (tk_report: nearest rank, ms truncated to the
 * microsecond; with 20 runs the p99 is the slowest).  A failed call
 * stops the bench (exit 1), named with its capability and error.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_world.h"
#include "clock.h"
#include "pages.h"
#include "testkit.h"

#define PB_RUNS_DEFAULT 20
#define PB_RUNS_MAX 200
#define PB_SETUP_MAX 2 /* set-up calls of a case */

/* A call a case makes: its capability and args (NULL cap: none). */
struct pb_step {
	const char *cap, *args;
};

struct pb_case {
	const char *cap;     /* the capability timed */
	const char *variant; /* printed in brackets after it, or NULL */
	const char *page;    /* the page navigated to first */
	const char *args[2]; /* run i takes args[i % 2] (args[1] NULL: [0]) */
	const char *truth;   /* a key of the result that must be true */
	struct pb_step setup[PB_SETUP_MAX]; /* once, after the navigate */
	struct pb_step before;              /* before every run */
};

/* The cases, in the order they run. */
static const struct pb_case pb_cases[] = {
    {.cap = "click",
        .page = "/keys",
        .args = {"{\"selector\":\"#btn\"}"},
        .truth = "clicked"},
    {.cap = "click",
        .variant = "Shift",
        .page = "/keys",
        .args = {"{\"selector\":\"#b\",\"modifiers\":[\"Shift\"]}"},
        .truth = "clicked"},
    {.cap = "click",
        .variant = "click_count=2",
        .page = "/keys",
        .args = {"{\"selector\":\"#para\",\"click_count\":2}"},
        .truth = "clicked"},
    {.cap = "click",
        .variant = "snapshot=true",
        .page = "/keys",
        .args = {"{\"selector\":\"#btn\",\"snapshot\":true}"},
        .truth = "clicked"},
    {.cap = "type",
        .page = "/form2",
        .args = {"{\"selector\":\"#t\",\"text\":\"abc\"}"}},
    /* Keys go to the focused field. */
    {.cap = "press",
        .page = "/keys",
        .args = {"{\"key\":\"a\"}"},
        .setup = {{"click", "{\"selector\":\"#f\"}"}}},
    {.cap = "press",
        .variant = "Control+a",
        .page = "/keys",
        .args = {"{\"key\":\"a\",\"modifiers\":[\"Control\"]}"},
        .setup = {{"click", "{\"selector\":\"#f\"}"}}},
    {.cap = "fill",
        .page = "/form2",
        .args = {"{\"selector\":\"#t\",\"value\":\"First value\"}",
            "{\"selector\":\"#t\",\"value\":\"Second value\"}"}},
    {.cap = "fill",
        .variant = "date",
        .page = "/form2",
        .args = {"{\"selector\":\"#d\",\"value\":\"2024-02-29\"}",
            "{\"selector\":\"#d\",\"value\":\"2024-03-01\"}"}},
    {.cap = "select_option",
        .page = "/select",
        .args = {"{\"selector\":\"#one\",\"values\":[\"m\"]}",
            "{\"selector\":\"#one\",\"values\":[\"s\"]}"}},
    {.cap = "select_option",
        .variant = "multiple",
        .page = "/select",
        .args = {"{\"selector\":\"#many\",\"values\":[\"ch\",\"mu\"]}",
            "{\"selector\":\"#many\",\"values\":[\"ol\"]}"}},
    {.cap = "check",
        .page = "/checks",
        .args = {"{\"selector\":\"#c\",\"checked\":true}",
            "{\"selector\":\"#c\",\"checked\":false}"},
        .truth = "clicked"},
    /* The menu :hover opens, then its item, in turn: an element after
     * the menu would move as it closes. */
    {.cap = "hover",
        .page = "/menu",
        .args = {"{\"selector\":\"#top\"}", "{\"selector\":\"#item\"}"},
        .truth = "hovered"},
    /* The apple dropped stays in the basket: a reload puts it back. */
    {.cap = "drag",
        .page = "/drag",
        .args = {"{\"from\":{\"selector\":\"#apple\"},"
                 "\"to\":{\"selector\":\"#zone\"}}"},
        .truth = "dropped",
        .before = {"reload", "{}"}},
    {.cap = "scroll",
        .page = "/nodes?n=1000",
        .args = {"{\"dy\":600}", "{\"dy\":-600}"}},
    {.cap = "extract_text",
        .page = "/article",
        .args = {"{\"selector\":\"p\"}"}},
    {.cap = "screenshot", .page = "/", .args = {"{}"}},
    {.cap = "snapshot", .page = "/", .args = {"{}"}},
    {.cap = "wait_for", .page = "/", .args = {"{\"selector\":\"h1\"}"}},
    /* History: the home page, then /next by its link. */
    {.cap = "back",
        .page = "/",
        .args = {"{}"},
        .setup = {{"click", "{\"selector\":\"a\"}"}, {"back", "{}"}},
        .before = {"forward", "{}"}},
    {.cap = "forward",
        .page = "/",
        .args = {"{}"},
        .setup = {{"click", "{\"selector\":\"a\"}"}},
        .before = {"back", "{}"}},
    {.cap = "reload", .page = "/", .args = {"{}"}},
    /* The confirm #del opens, answered in turn yes and no. */
    {.cap = "handle_dialog",
        .page = "/confirm",
        .args = {"{\"accept\":true}", "{\"accept\":false}"},
        .before = {"click", "{\"selector\":\"#del\"}"}},
};
#define PB_CASES (sizeof(pb_cases) / sizeof(pb_cases[0]))

static int port;

/* The case's name as printed: "<capability>[<variant>] <page>". */
static void
pb_name(const struct pb_case *c, char *out, size_t len)
{
	if (c->variant != NULL)
		snprintf(out, len, "%s[%s] %s", c->cap, c->variant, c->page);
	else
		snprintf(out, len, "%s %s", c->cap, c->page);
}

/*
 * One call, which must succeed; when truth is not NULL its result's
 * truth must be true.  A failure is said with the case's name.  Returns
 * 0, or -1.
 */
static int
pb_step(struct act_driver *d, const char *name, const char *cap,
    const char *args, const char *truth)
{
	char *text = NULL;
	struct act_outcome o =
	    bw_driver_call(d, cap, args, BW_STEP_MS, truth ? &text : NULL);
	json_t *r;
	int rc = 0;

	if (o.err != CM_OK)
		return tk_fail("page_bench", "%s: %s %s: %s %s", name, cap,
		    args, cm_err_code(o.err), o.message);
	if (truth == NULL)
		return 0;
	r = text != NULL ? json_loads(text, 0, NULL) : NULL;
	if (!json_is_true(json_object_get(r, truth)))
		rc = tk_fail("page_bench",
		    "%s: %s %s: the result's %s is not "
		    "true: %s",
		    name, cap, args, truth, text != NULL ? text : "(none)");
	json_decref(r);
	free(text);
	return rc;
}

static int
pb_run_case(struct act_driver *d, const struct pb_case *c, int runs)
{
	int64_t v[PB_RUNS_MAX];
	char name[128];

	pb_name(c, name, sizeof(name));
	if (bw_driver_navigate("page_bench", d, port, c->page) != 0)
		return tk_fail("page_bench", "%s: no page", name);
	for (int s = 0; s < PB_SETUP_MAX && c->setup[s].cap != NULL; s++)
		if (pb_step(d, name, c->setup[s].cap, c->setup[s].args, NULL) !=
		    0)
			return -1;
	for (int i = 0; i < runs; i++) {
		const char *args =
		    c->args[i % 2] != NULL ? c->args[i % 2] : c->args[0];
		int64_t t0;

		if (c->before.cap != NULL &&
		    pb_step(d, name, c->before.cap, c->before.args, NULL) != 0)
			return -1;
		t0 = cm_mono_ns();
		if (pb_step(d, name, c->cap, args, c->truth) != 0)
			return -1;
		v[i] = cm_mono_ns() - t0;
	}
	tk_report("page_bench", name, v, runs);
	fflush(stdout);
	return 0;
}

struct pb_plan {
	int runs;
	int argc;
	char **argv; /* capabilities to run; none: every case */
};

static bool
pb_wanted(const struct pb_plan *p, const char *cap)
{
	if (p->argc == 0)
		return true;
	for (int i = 0; i < p->argc; i++)
		if (strcmp(p->argv[i], cap) == 0)
			return true;
	return false;
}

static int
pb_all(struct act_driver *d, void *arg)
{
	const struct pb_plan *p = arg;
	int rc = 0;

	for (size_t i = 0; i < PB_CASES && rc == 0; i++)
		if (pb_wanted(p, pb_cases[i].cap))
			rc = pb_run_case(d, &pb_cases[i], p->runs);
	return rc;
}

int
main(int argc, char **argv)
{
	struct pb_plan plan = {
	    .runs = tk_knob("PAGE_BENCH_RUNS", PB_RUNS_DEFAULT, 1, PB_RUNS_MAX),
	    .argc = argc - 1,
	    .argv = argv + 1,
	};
	struct tk_pages *pages;
	int rc;

	signal(SIGPIPE, SIG_IGN); /* as the actor: a dead browser's pipe */
	for (int i = 1; i < argc; i++) {
		size_t k = 0;

		while (k < PB_CASES && strcmp(pb_cases[k].cap, argv[i]) != 0)
			k++;
		if (k == PB_CASES) {
			tk_fail("page_bench", "no case of %s", argv[i]);
			return 2;
		}
	}
	if ((pages = tk_pages_start(&port)) == NULL)
		return tk_fail("page_bench", "no page server") != 0;
	rc = bw_with_driver("page_bench", "pagebench", pb_all, &plan);
	tk_pages_stop(pages);
	return rc != 0;
}
