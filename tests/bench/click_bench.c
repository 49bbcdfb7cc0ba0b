/*
 * click_bench: a click that starts a navigation, then a snapshot, on a
 * real Chromium through the real spaced (target: p50 <= 1.2 x the direct
 * client, docs/performance.md), and the same done by a minimal direct
 * CDP client over a pipe (tests/integration/cdp_rig.h), in the same run,
 * a run of each in turn so that both meet the machine in the same state;
 * measured and reported, never asserted.
 *
 * Through spaced, one Space on a managed instance for every run: navigate
 * to the home page of the bench's page server (tests/integration/pages.h)
 * and snapshot it, the snapshot timed alone (snapshot_loaded: a loaded
 * page, for reference); then, timed, click the ref of its link "Next
 * page" and snapshot, each a POST .../tasks?wait=30, until the
 * snapshot's answer (click_then_snapshot, and its two parts).  The
 * click's result must say it navigated and the snapshot must show the
 * page the link leads to, or the run fails.
 *
 * The direct client, one browser launched before the runs and one page
 * on it for every run: navigate to the home page until its load event,
 * read the accessibility tree (timed alone: ax_tree_loaded) and take the
 * link's node from it; then, timed, the link's box (DOM.getBoxModel, as
 * a client that holds a node from a tree must find where it is now), a
 * left mousePressed and mouseReleased at its centre, the new document's
 * Page.domContentEventFired, Accessibility.getFullAXTree, which must
 * show the page the link leads to (click_then_tree, and each step).
 *
 * One run of each comes first, untimed: a browser's first navigation
 * starts the site's renderer.
 *
 *   click_bench [--runs N] [--hover] [--fetch]
 *   --runs N   timed runs of each, 2..1000 (default 20)
 *   --hover    the direct client moves the mouse to the link before it
 *              presses (mouseMoved), as the actor's click does
 *   --fetch    the direct client's page intercepts its requests
 *              (Fetch.enable, every request continued), as a Space's
 *              page does under its network policy; a Space's browser
 *              also sends them through the actor's egress proxy, which
 *              the direct client never does
 *
 * Figures are ms to the microsecond, truncated; the p50 and p99 are
 * nearest-rank.  Exit: 0 measured, 1 a step failed, 2 a bad flag or no
 * chromium.
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_world.h"
#include "cdp_rig.h"
#include "clock.h"
#include "page.h"
#include "pages.h"
#include "testkit.h"

#define CB_RUNS_MAX 1000
#define CB_LINK "Next page"     /* the home page's link ... */
#define CB_LANDED "Second page" /* ... and the heading it leads to */

#define fail(...) tk_fail("click_bench", __VA_ARGS__)

#define report(name, v, n) tk_report("click_bench", name, v, n)

/* The figures of one side, run by run. */
struct cb_spaced {
	int64_t loaded[CB_RUNS_MAX];     /* snapshot of the loaded home page */
	int64_t click[CB_RUNS_MAX];      /* click, submit to answer */
	int64_t click_task[CB_RUNS_MAX]; /* its start to its end, to the ms */
	int64_t after[CB_RUNS_MAX];      /* the snapshot that follows it */
	int64_t both[CB_RUNS_MAX];       /* click and snapshot, to its answer */
};

enum cb_step {
	CB_LOCATE,  /* DOM.getBoxModel answered */
	CB_HOVER,   /* mouseMoved answered (0 without --hover) */
	CB_PRESS,   /* mousePressed answered */
	CB_RELEASE, /* mouseReleased answered */
	CB_DCL,     /* then Page.domContentEventFired */
	CB_TREE,    /* Accessibility.getFullAXTree */
	CB_STEPS
};

static const char *const cb_step_name[CB_STEPS] = {
    "locate", "hover", "press", "release", "dcl", "ax_tree"};

struct cb_direct {
	int64_t loaded[CB_RUNS_MAX]; /* the tree of the loaded home page */
	int64_t both[CB_RUNS_MAX];   /* locate, click, DCL, the tree */
	int64_t step[CB_STEPS][CB_RUNS_MAX];
};

/* ---- through spaced */

/* The number in the n digits at s; -1 when they are not all digits. */
static int64_t
digits(const char *s, int n)
{
	int64_t v = 0;

	for (int k = 0; k < n; k++) {
		if (s[k] < '0' || s[k] > '9')
			return -1;
		v = v * 10 + (s[k] - '0');
	}
	return v;
}

/* The ms of the day of an api time ("YYYY-MM-DDTHH:MM:SS.mmmZ"); -1 when
 * it is not one. */
static int64_t
day_ms(const char *t)
{
	int64_t h, m, sec, ms;

	if (t == NULL || strlen(t) != 24 || t[10] != 'T' ||
	    (h = digits(t + 11, 2)) < 0 || (m = digits(t + 14, 2)) < 0 ||
	    (sec = digits(t + 17, 2)) < 0 || (ms = digits(t + 20, 3)) < 0)
		return -1;
	return ((h * 60 + m) * 60 + sec) * 1000 + ms;
}

/* A task's own time, from its start to its end as its data says (to the
 * ms), in ns; -1 when its data has no such times. */
static int64_t
task_ns(const json_t *data)
{
	int64_t a = day_ms(bw_str(data, "started_at"));
	int64_t b = day_ms(bw_str(data, "finished_at"));

	if (a < 0 || b < 0)
		return -1;
	return (b >= a ? b - a : b + 86400000 - a) * 1000000;
}

/* Run i in space, its tasks' request ids of the run's own (a request id
 * again would be answered with the task it named); with s NULL,
 * untimed. */
static int
spaced_run(struct bw_world *w, const char *space, int i, struct cb_spaced *s)
{
	char rid[32], args[200], ref[32];
	json_t *data = NULL;
	int64_t t0, t1, t2;
	int rc;

	snprintf(args, sizeof(args), "{\"url\": \"%s\"}", w->url);
	snprintf(rid, sizeof(rid), "nav-%s%d", s ? "" : "w", i);
	if (bw_task(w, space, rid, "navigate", args, NULL) != 0)
		return -1;
	snprintf(rid, sizeof(rid), "snap-%s%d", s ? "" : "w", i);
	t0 = cm_mono_ns();
	if (bw_task(w, space, rid, "snapshot", "{}", &data) != 0)
		return -1;
	t1 = cm_mono_ns();
	rc = bw_ref_of("click_bench", bw_outline(data), "link \"" CB_LINK "\"",
	    ref, sizeof(ref));
	json_decref(data);
	if (rc != 0)
		return -1;
	if (s != NULL)
		s->loaded[i] = t1 - t0;

	snprintf(args, sizeof(args), "{\"ref\": \"%s\"}", ref);
	snprintf(rid, sizeof(rid), "click-%s%d", s ? "" : "w", i);
	t0 = cm_mono_ns();
	if (bw_task(w, space, rid, "click", args, &data) != 0)
		return -1;
	t1 = cm_mono_ns();
	if (s != NULL)
		s->click_task[i] = task_ns(data);
	rc = json_is_true(
	         json_object_get(json_object_get(data, "result"), "navigated"))
	         ? 0
	         : fail("the click did not navigate");
	json_decref(data);
	snprintf(rid, sizeof(rid), "snap2-%s%d", s ? "" : "w", i);
	if (rc != 0 || bw_task(w, space, rid, "snapshot", "{}", &data) != 0)
		return -1;
	t2 = cm_mono_ns();
	rc = bw_outline(data) != NULL && strstr(bw_outline(data), CB_LANDED)
	         ? 0
	         : fail("the snapshot after the click shows no \"%s\":\n%s",
	               CB_LANDED,
	               bw_outline(data) ? bw_outline(data) : "(none)");
	json_decref(data);
	if (rc == 0 && s != NULL) {
		s->click[i] = t1 - t0;
		s->after[i] = t2 - t1;
		s->both[i] = t2 - t0;
	}
	return rc;
}

/* ---- the direct client */

struct cb_client {
	struct tk_rig r;
	struct bw_page pg;
	bool hover; /* a mouseMoved before the press */
};

/* The backend node id of the node of the tree v with role and name; 0
 * when there is none. */
static json_int_t
ax_node(const json_t *v, const char *role, const char *name)
{
	const json_t *node;
	size_t i;

	json_array_foreach(json_object_get(v, "nodes"), i, node)
	{
		const char *r = bw_str(json_object_get(node, "role"), "value");
		const char *n = bw_str(json_object_get(node, "name"), "value");

		if (r != NULL && n != NULL && strcmp(r, role) == 0 &&
		    strcmp(n, name) == 0)
			return json_integer_value(
			    json_object_get(node, "backendDOMNodeId"));
	}
	return 0;
}

/* The centre of the content box of node, in the viewport, into x, y. */
static int
box_centre(struct tk_rig *r, const struct bw_page *pg, json_int_t node,
    double *x, double *y)
{
	const json_t *q;
	json_t *v;

	if ((v = tk_rig_call(r, pg->sid, "DOM.getBoxModel",
	         json_pack("{s:I}", "backendNodeId", node), BW_STEP_MS)) ==
	        NULL ||
	    json_array_size(q = json_object_get(
	                        json_object_get(v, "model"), "content")) != 8)
		return fail("DOM.getBoxModel failed");
	*x = *y = 0;
	for (size_t k = 0; k < 8; k += 2) {
		*x += json_number_value(json_array_get(q, k)) / 4;
		*y += json_number_value(json_array_get(q, k + 1)) / 4;
	}
	return 0;
}

/* A mouse event of type at x, y: the left button's, but for a move. */
static int
mouse(struct cb_client *c, const char *type, double x, double y)
{
	bool move = strcmp(type, "mouseMoved") == 0;

	if (tk_rig_call(&c->r, c->pg.sid, "Input.dispatchMouseEvent",
	        json_pack("{s:s, s:f, s:f, s:s, s:i}", "type", type, "x", x,
	            "y", y, "button", move ? "none" : "left", "clickCount",
	            move ? 0 : 1),
	        BW_STEP_MS) == NULL)
		return fail("%s failed", type);
	return 0;
}

/* Run i of c; with d NULL, untimed. */
static int
direct_run(struct cb_client *c, const char *url, int i, struct cb_direct *d)
{
	struct tk_rig *r = &c->r;
	const struct bw_page *pg = &c->pg;
	int64_t step[CB_STEPS], t0, t, now;
	json_int_t link;
	json_t *v;
	double x = 0, y = 0;

	tk_rig_expect(r, "Page.loadEventFired");
	if ((v = tk_rig_call(r, pg->sid, "Page.navigate",
	         json_pack("{s:s}", "url", url), BW_STEP_MS)) == NULL ||
	    bw_str(v, "errorText") != NULL || !tk_rig_await(r, BW_STEP_MS))
		return fail("navigate to %s failed", url);
	t0 = cm_mono_ns();
	v = tk_rig_call(
	    r, pg->sid, "Accessibility.getFullAXTree", NULL, BW_STEP_MS);
	now = cm_mono_ns();
	if (v == NULL || (link = ax_node(v, "link", CB_LINK)) == 0)
		return fail("no link \"%s\" in the tree", CB_LINK);
	if (d != NULL)
		d->loaded[i] = now - t0;

	t = t0 = cm_mono_ns();
#define LAP(k) (now = cm_mono_ns(), step[k] = now - t, t = now)
	if (box_centre(r, pg, link, &x, &y) != 0)
		return -1;
	LAP(CB_LOCATE);
	tk_rig_expect(r, "Page.domContentEventFired");
	if (c->hover && mouse(c, "mouseMoved", x, y) != 0)
		return -1;
	LAP(CB_HOVER);
	if (mouse(c, "mousePressed", x, y) != 0)
		return -1;
	LAP(CB_PRESS);
	if (mouse(c, "mouseReleased", x, y) != 0)
		return -1;
	LAP(CB_RELEASE);
	if (!tk_rig_await(r, BW_STEP_MS))
		return fail("no DOMContentLoaded after the click");
	LAP(CB_DCL);
	if ((v = tk_rig_call(r, pg->sid, "Accessibility.getFullAXTree", NULL,
	         BW_STEP_MS)) == NULL ||
	    ax_node(v, "heading", CB_LANDED) == 0)
		return fail(
		    "the tree after the click shows no \"%s\"", CB_LANDED);
	LAP(CB_TREE);
#undef LAP
	if (d != NULL) {
		d->both[i] = t - t0;
		for (int k = 0; k < CB_STEPS; k++)
			d->step[k][i] = step[k];
	}
	return 0;
}

/* ---- the run */

/* What the flags ask. */
struct cb_opts {
	int runs;
	bool hover, fetch;
};

/* The direct client's browser, its page ready (Fetch on with --fetch). */
static int
direct_open(struct cb_client *c, const struct cb_opts *o)
{
	char err[256];

	c->hover = o->hover;
	if (tk_rig_start(&c->r, err, sizeof(err)) != 0)
		return fail("launch: %s", err);
	if (bw_page_open("click_bench", &c->r, &c->pg) != 0 ||
	    (o->fetch &&
	        tk_rig_call(&c->r, c->pg.sid, "Fetch.enable",
	            act_page_fetch_params(false), BW_STEP_MS) == NULL)) {
		tk_rig_stop(&c->r);
		return fail("the direct client's page did not open");
	}
	return 0;
}

/* One untimed run of each, then o->runs of each in turn. */
static int
runs(struct bw_world *w, const char *dir, const char *out,
    const struct cb_opts *o, struct cb_spaced *s, struct cb_direct *d)
{
	static struct cb_client c;
	char space[CM_ID_MAX + 1];
	int rc = 0;

	if (tk_spaced_start_logged(&w->p, dir, NULL, out) != 0)
		return fail("spaced did not start (see %s)", out);
	if (bw_setup(w) != 0 ||
	    bw_space(w, "[\"navigate\", \"snapshot\", \"click\"]", space) !=
	        0 ||
	    direct_open(&c, o) != 0) {
		tk_proc_stop(&w->p, SIGTERM);
		return -1;
	}
	rc = spaced_run(w, space, 0, NULL) != 0 ||
	             direct_run(&c, w->url, 0, NULL) != 0
	         ? -1
	         : 0;
	for (int i = 0; i < o->runs && rc == 0; i++)
		if (spaced_run(w, space, i, s) != 0 ||
		    direct_run(&c, w->url, i, d) != 0)
			rc = -1;
	tk_rig_stop(&c.r);
	tk_proc_stop(&w->p, SIGTERM);
	return rc;
}

/* The flags into o; -1 on a bad one. */
static int
flags(int argc, char **argv, struct cb_opts *o)
{
	for (int i = 1; i < argc; i++) {
		char *end;
		long v;

		if (strcmp(argv[i], "--hover") == 0) {
			o->hover = true;
			continue;
		}
		if (strcmp(argv[i], "--fetch") == 0) {
			o->fetch = true;
			continue;
		}
		if (strcmp(argv[i], "--runs") != 0 || i + 1 >= argc)
			return -1;
		errno = 0;
		v = strtol(argv[++i], &end, 10);
		if (end == argv[i] || *end != '\0' || errno != 0 || v < 2 ||
		    v > CB_RUNS_MAX)
			return -1;
		o->runs = (int)v;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static struct cb_spaced s;
	static struct cb_direct d;
	static struct bw_world w;
	struct tk_cpu m0, m1;
	struct tk_pages *pages;
	char dir[BW_DIR_MAX], out[BW_OUT_MAX], r1[32], r2[32];
	int64_t sp_both, sp_loaded, di_both, di_loaded;
	struct cb_opts o = {.runs = 20};
	bool machine;
	int n, rc;

	if (flags(argc, argv, &o) != 0) {
		fprintf(stderr,
		    "usage: click_bench [--runs 2..%d] [--hover] [--fetch]\n",
		    CB_RUNS_MAX);
		return 2;
	}
	n = o.runs;
	/* Every browser's single-instance directory (under $TMPDIR, left by
	 * each one killed) goes with dir. */
	if ((rc = bw_begin(&w, "click_bench", "cb", true, &pages, dir, out)) !=
	    0)
		return rc;
	printf("click_bench: %ld CPUs online, %d runs of each, direct client "
	       "%s hover, %s Fetch\n",
	    sysconf(_SC_NPROCESSORS_ONLN), n, o.hover ? "with" : "without",
	    o.fetch ? "with" : "without");
	bw_load_average("click_bench", "at the start");
	machine = tk_cpu_read(&m0) == 0;
	rc = runs(&w, dir, out, &o, &s, &d);
	machine = machine && tk_cpu_read(&m1) == 0;
	tk_pages_stop(pages);
	if (rc != 0) {
		fail("kept %s (log: %s)", dir, out);
		return 1;
	}
	bw_load_average("click_bench", "at the end");
	tk_rmrf(dir);
	if (machine)
		tk_cpu_print("click_bench", &m0, &m1);
	sp_loaded = report("spaced snapshot_loaded", s.loaded, n);
	report("spaced click", s.click, n);
	report("spaced click.started_to_finished", s.click_task, n);
	report("spaced snapshot_after_click", s.after, n);
	sp_both = report("spaced click_then_snapshot", s.both, n);
	di_loaded = report("direct_cdp ax_tree_loaded", d.loaded, n);
	di_both = report("direct_cdp click_then_tree", d.both, n);
	for (int k = 0; k < CB_STEPS; k++) {
		char name[64];

		snprintf(name, sizeof(name), "direct_cdp click_then_tree.%s",
		    cb_step_name[k]);
		report(name, d.step[k], n);
	}
	printf("click_bench: ratio spaced/direct p50 click_then_snapshot=%s "
	       "snapshot_loaded=%s (target: click then snapshot <= 1.2 x the "
	       "direct client)\n",
	    bw_ratio(sp_both, di_both, r1, sizeof(r1)),
	    bw_ratio(sp_loaded, di_loaded, r2, sizeof(r2)));
	return 0;
}
