/*
 * lifecycle_bench: the full life of a Space on a real Chromium through the
 * real spaced (targets: p50 <= 150 ms, and at most 1.1 x the direct
 * client on a fresh page, docs/performance.md), and the same
 * calls made by a minimal direct CDP client over a pipe
 * (tests/integration/cdp_rig.h), in the same run; measured and reported,
 * never asserted.
 *
 * One run through spaced: POST a Space on a managed instance, a navigate
 * to a page of the bench's own server on 127.0.0.1 and a snapshot (each
 * POST .../tasks?wait=30, answered once the task ended), and POST
 * close?wait=30, answered once the Space is closed (its browser and
 * profile are gone by then; should the wait run out, GET until it reads
 * closed); each of the four answers is timed from the one before it
 * ("spaced step.create", .navigate, .snapshot, .close).  One run of the direct
 * client: a browser context and a page in it, attach, Page.enable, navigate and
 * wait for the load event, Accessibility.getFullAXTree, close the page and
 * dispose of the context; "warm_browser" on a browser launched before the runs,
 * "cold" with a launch and a kill in each run, "warm_page" timing only what
 * follows Page.enable, on a page set up before the run, and "fresh_page" the
 * same on a browser launched for that run alone, its page set up and
 * left to settle LB_SETTLE_MS before.  A warm standby gives a Space what
 * fresh_page has: a page ready in a browser no Space used before (each
 * Space's browser is its own, discarded at the close); warm_page's
 * browser has served the runs before it.  The fresh_page runs alternate
 * with the runs through spaced, one after each, so that the two meet the
 * machine in the same state; the other modes follow.
 *
 *   lifecycle_bench
 *   LIFECYCLE_RUNS=N   runs of each, 2..1000 (default 20)
 *   LIFECYCLE_WARM=0|1 spaced with warm standby (1, the default, as
 *                      spaced runs by default) or without (0).  With it,
 *                      each run begins once the instance's new standby
 *                      has had its browser running for LB_SETTLE_MS:
 *                      the idle instance a create meets.
 *   LIFECYCLE_SPACED=0|1 the runs through spaced (1, the default) or only
 *                      the direct client's (0: where a browser's own
 *                      time goes, step by step).
 *
 * Figures are ms to the microsecond, truncated.  The
 * p50 and p99 are nearest-rank.  Exit: 0 measured, 1 a step failed, 2 a
 * bad knob or no chromium.
 */
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_world.h"
#include "cdp_rig.h"
#include "clock.h"
#include "pages.h"
#include "testkit.h"

#define LB_RUNS_MAX 1000
#define LB_SETTLE_MS 5000 /* a standby browser, launched, comes to rest */

#define fail(...) tk_fail("lifecycle_bench", __VA_ARGS__)

#define report(name, v, n) tk_report("lifecycle_bench", name, v, n)

/* ---- through spaced */

/* The steps of a lifecycle through spaced, each timed on its own (where
 * its time goes): each answer's arrival after the one before. */
enum lb_sstep {
	LB_S_CREATE,   /* POST the Space answered */
	LB_S_NAVIGATE, /* the navigate's ?wait= answered */
	LB_S_SNAPSHOT, /* the snapshot's ?wait= answered */
	LB_S_CLOSE,    /* close?wait= answered */
	LB_S_STEPS
};

static const char *const lb_sstep_name[LB_S_STEPS] = {
    "create", "navigate", "snapshot", "close"};

/* One lifecycle; *total gets its length, *to_close until close answered,
 * *to_snapshot from the create until the snapshot's answer, step[k][i]
 * the time of step k. */
static int
spaced_run(struct bw_world *w, int i, int64_t *total, int64_t *to_close,
    int64_t *to_snapshot, int64_t (*step)[LB_RUNS_MAX])
{
	char space[CM_ID_MAX + 1], rid[32], args[200];
	int64_t t0 = cm_mono_ns(), t = t0, now;
	int code;

#define LAP(k) (now = cm_mono_ns(), step[k][i] = now - t, t = now)
	if (bw_space(w, "[\"navigate\", \"snapshot\"]", space) != 0)
		return -1;
	LAP(LB_S_CREATE);
	snprintf(args, sizeof(args), "{\"url\": \"%s\"}", w->url);
	snprintf(rid, sizeof(rid), "nav-%d", i);
	if (bw_task(w, space, rid, "navigate", args, NULL) != 0)
		return -1;
	LAP(LB_S_NAVIGATE);
	snprintf(rid, sizeof(rid), "snap-%d", i);
	if (bw_task(w, space, rid, "snapshot", "{}", NULL) != 0)
		return -1;
	LAP(LB_S_SNAPSHOT);
	*to_snapshot = t - t0;
	if ((code = bw_close(w, space)) < 0)
		return -1;
	LAP(LB_S_CLOSE);
#undef LAP
	*to_close = t - t0;
	if (code != 200 && bw_wait_closed(w, space) != 0)
		return -1;
	*total = cm_mono_ns() - t0;
	return 0;
}

/* ---- the direct client */

/* The steps of page_use, each timed on its own (where a run's time
 * goes). */
enum lb_step {
	LB_NAVIGATE, /* Page.navigate answered */
	LB_LOAD,     /* then Page.loadEventFired */
	LB_TREE,     /* Accessibility.getFullAXTree */
	LB_CLOSE,    /* Target.closeTarget */
	LB_DISPOSE,  /* Target.disposeBrowserContext */
	LB_STEPS
};

static const char *const lb_step_name[LB_STEPS] = {
    "navigate", "load", "ax_tree", "close_target", "dispose_context"};

/* The calls a lifecycle makes on a page: navigate and wait for the load,
 * the accessibility tree, then the page and its context closed; step[k]
 * gets the time of step k. */
static int
page_use(struct tk_rig *r, const struct bw_page *pg, const char *url,
    int64_t step[LB_STEPS])
{
	const json_t *nodes;
	json_t *v;
	int64_t t = cm_mono_ns(), now;

#define LAP(k) (now = cm_mono_ns(), step[k] = now - t, t = now)
	tk_rig_expect(r, "Page.loadEventFired");
	if (tk_rig_call(r, pg->sid, "Page.navigate",
	        json_pack("{s:s}", "url", url), BW_STEP_MS) == NULL)
		return fail("navigate failed");
	LAP(LB_NAVIGATE);
	if (!tk_rig_await(r, BW_STEP_MS))
		return fail("no load event");
	LAP(LB_LOAD);
	if ((v = tk_rig_call(r, pg->sid, "Accessibility.getFullAXTree", NULL,
	         BW_STEP_MS)) == NULL ||
	    (nodes = json_object_get(v, "nodes")) == NULL ||
	    json_array_size(nodes) == 0)
		return fail("getFullAXTree failed");
	LAP(LB_TREE);
	if (tk_rig_call(r, NULL, "Target.closeTarget",
	        json_pack("{s:s}", "targetId", pg->target), BW_STEP_MS) == NULL)
		return fail("closeTarget failed");
	LAP(LB_CLOSE);
	if (tk_rig_call(r, NULL, "Target.disposeBrowserContext",
	        json_pack("{s:s}", "browserContextId", pg->ctx),
	        BW_STEP_MS) == NULL)
		return fail("disposeBrowserContext failed");
	LAP(LB_DISPOSE);
#undef LAP
	return 0;
}

/* Runs the rig's loop for ms, answering what comes: a browser at
 * rest. */
static void
settle(struct tk_rig *r, int ms)
{
	int64_t end = cm_mono_ms() + ms;

	while (cm_mono_ms() < end && tk_rig_turn(r) == 0)
		;
}

/* What of a direct run is timed. */
enum lb_direct {
	LB_COLD,         /* launch, page, use, kill */
	LB_WARM_BROWSER, /* page and use, on a browser launched before */
	LB_WARM_PAGE,    /* use, on a page set up before (as a standby's) */
	LB_FRESH_PAGE,   /* use, on a page of a browser launched for this
	                  * run alone, LB_SETTLE_MS before (as a standby's) */
};

/* n direct runs of mode on one browser (a fresh one per run, cold);
 * steps[k][i], when steps is not NULL, the time of step k of run i. */
static int
direct_runs(const char *url, enum lb_direct mode, int64_t *v,
    int64_t (*steps)[LB_RUNS_MAX], int n)
{
	int64_t step[LB_STEPS];

	char err[256];
	struct bw_page pg;
	/* A browser of its own for each run. */
	bool each = mode == LB_COLD || mode == LB_FRESH_PAGE;
	struct tk_rig r;
	int rc = 0;

	if (!each && tk_rig_start(&r, err, sizeof(err)) != 0)
		return fail("launch: %s", err);
	for (int i = 0; i < n && rc == 0; i++) {
		int64_t t0 = cm_mono_ns();

		if (each && tk_rig_start(&r, err, sizeof(err)) != 0)
			return fail("launch: %s", err);
		if (mode == LB_WARM_PAGE || mode == LB_FRESH_PAGE) {
			if ((rc = bw_page_open("lifecycle_bench", &r, &pg)) !=
			    0)
				break;
			if (mode == LB_FRESH_PAGE)
				settle(&r, LB_SETTLE_MS);
			t0 = cm_mono_ns();
		} else if ((rc = bw_page_open("lifecycle_bench", &r, &pg)) != 0)
			break;
		rc = page_use(&r, &pg, url, step);
		if (mode == LB_FRESH_PAGE)
			v[i] = cm_mono_ns() - t0;
		if (each)
			tk_rig_stop(&r);
		if (mode != LB_FRESH_PAGE)
			v[i] = cm_mono_ns() - t0;
		for (int k = 0; steps != NULL && k < LB_STEPS; k++)
			steps[k][i] = step[k];
	}
	if (!each || rc != 0)
		tk_rig_stop(&r);
	return rc;
}

/* Run i of the direct client on a fresh browser: v[i], steps[k][i]. */
static int
fresh_run(const char *url, int i, int64_t *v, int64_t (*steps)[LB_RUNS_MAX])
{
	static int64_t one_step[LB_STEPS][LB_RUNS_MAX];
	int64_t one;

	if (direct_runs(url, LB_FRESH_PAGE, &one, one_step, 1) != 0)
		return -1;
	v[i] = one;
	for (int k = 0; k < LB_STEPS; k++)
		steps[k][i] = one_step[k][0];
	return 0;
}

/*
 * n lifecycles through a spaced started in dir (its output in out), each
 * followed by run i of the direct client on a fresh browser (fresh,
 * fsteps): the two alternate, so that both meet the machine in the same
 * state.
 */
static int
spaced_runs(struct bw_world *w, const char *dir, const char *out,
    int warm_standby, int64_t *total, int64_t *to_close, int64_t *to_snap,
    int64_t (*ssteps)[LB_RUNS_MAX], int64_t *fresh,
    int64_t (*fsteps)[LB_RUNS_MAX], int n)
{
	const char *flags[] = {"--warm-standby=true", NULL};
	int rc = 0;

	if (tk_spaced_start_logged(
	        &w->p, dir, warm_standby ? flags : NULL, out) != 0)
		return fail("spaced did not start (see %s)", out);
	if (bw_setup(w) != 0)
		rc = -1;
	for (int i = 0; i < n && rc == 0; i++) {
		if (warm_standby && bw_standby_settled(w, LB_SETTLE_MS) != 0)
			rc = -1;
		else if (spaced_run(w, i, &total[i], &to_close[i], &to_snap[i],
		             ssteps) != 0 ||
		         fresh_run(w->url, i, fresh, fsteps) != 0)
			rc = -1;
	}
	tk_proc_stop(&w->p, SIGTERM);
	return rc;
}

/* The p50 of a direct mode's runs v, after each step's figures. */
static int64_t
report_steps(const char *mode, int64_t *v, int64_t (*steps)[LB_RUNS_MAX], int n)
{
	char name[64];
	int64_t p50;

	snprintf(name, sizeof(name), "direct_cdp %s", mode);
	p50 = report(name, v, n);
	for (int k = 0; k < LB_STEPS; k++) {
		snprintf(name, sizeof(name), "direct_cdp %s.%s", mode,
		    lb_step_name[k]);
		report(name, steps[k], n);
	}
	return p50;
}

int
main(void)
{
	static int64_t total[LB_RUNS_MAX], to_close[LB_RUNS_MAX];
	static int64_t to_snap[LB_RUNS_MAX], warm[LB_RUNS_MAX];
	static int64_t cold[LB_RUNS_MAX], page[LB_RUNS_MAX];
	static int64_t fresh[LB_RUNS_MAX], tail[LB_RUNS_MAX];
	static int64_t steps[LB_STEPS][LB_RUNS_MAX];
	static int64_t fsteps[LB_STEPS][LB_RUNS_MAX];
	static int64_t ssteps[LB_S_STEPS][LB_RUNS_MAX];
	static struct bw_world w;
	int n = tk_knob("LIFECYCLE_RUNS", 20, 2, LB_RUNS_MAX);
	int warm_standby = tk_knob("LIFECYCLE_WARM", 1, 0, 1);
	int through_spaced = tk_knob("LIFECYCLE_SPACED", 1, 0, 1);
	char dir[BW_DIR_MAX], out[BW_OUT_MAX];
	struct tk_pages *pages;
	int64_t p50, p50_page, p50_fresh, p50_warm, p50_cold;
	int rc;

	if (n < 0 || warm_standby < 0 || through_spaced < 0)
		return 2;
	if ((rc = bw_begin(
	         &w, "lifecycle_bench", "lb", false, &pages, dir, out)) != 0)
		return rc;
	printf("lifecycle_bench: %ld CPUs online, warm standby %s\n",
	    sysconf(_SC_NPROCESSORS_ONLN), warm_standby ? "on" : "off");
	fflush(stdout);
	if (through_spaced)
		rc = spaced_runs(&w, dir, out, warm_standby, total, to_close,
		    to_snap, ssteps, fresh, fsteps, n);
	else
		rc = direct_runs(w.url, LB_FRESH_PAGE, fresh, fsteps, n);
	if (rc == 0 &&
	    (direct_runs(w.url, LB_WARM_PAGE, page, steps, n) != 0 ||
	        direct_runs(w.url, LB_WARM_BROWSER, warm, NULL, n) != 0 ||
	        direct_runs(w.url, LB_COLD, cold, NULL, n) != 0))
		rc = 1;
	tk_pages_stop(pages);
	if (rc != 0) {
		fail("kept %s (log: %s)", dir, out);
		return 1;
	}
	tk_rmrf(dir);
	if (!through_spaced)
		p50 = 0;
	else {
		/* Before any report: each sorts its runs in place. */
		for (int i = 0; i < n; i++)
			tail[i] = total[i] - to_snap[i];
		report("spaced create_to_snapshot", to_snap, n);
		report("spaced create_to_close_answered", to_close, n);
		report("spaced snapshot_answered_to_closed", tail, n);
		p50 = report("spaced lifecycle_until_closed", total, n);
		for (int k = 0; k < LB_S_STEPS; k++) {
			char name[64];

			snprintf(name, sizeof(name), "spaced step.%s",
			    lb_sstep_name[k]);
			report(name, ssteps[k], n);
		}
	}
	p50_page = report_steps("warm_page", page, steps, n);
	p50_fresh = report_steps("fresh_page", fresh, fsteps, n);
	p50_warm = report("direct_cdp warm_browser", warm, n);
	p50_cold = report("direct_cdp cold_launch", cold, n);
	printf("lifecycle_bench: ratio spaced/direct p50 page=%lld.%03lld "
	       "fresh=%lld.%03lld warm=%lld.%03lld cold=%lld.%03lld (targets: "
	       "lifecycle p50 <= 150 ms, <= 1.1 x the direct client on a "
	       "fresh page)\n",
	    (long long)(p50 / p50_page),
	    (long long)(p50 * 1000 / p50_page % 1000),
	    (long long)(p50 / p50_fresh),
	    (long long)(p50 * 1000 / p50_fresh % 1000),
	    (long long)(p50 / p50_warm),
	    (long long)(p50 * 1000 / p50_warm % 1000),
	    (long long)(p50 / p50_cold),
	    (long long)(p50 * 1000 / p50_cold % 1000));
	return 0;
}
