/*
 * warm_bench: warm standby browsers, through the real supervisor (spaced)
 * with one managed instance on a real Chromium, on a temporary data dir.
 * Measured, never asserted.
 *
 *   warm_bench [RUNS]   (default 20 runs per mode)
 *
 *   create -> first snapshot   space.create sent -> its first task (a
 *               snapshot of the blank page, submitted as soon as the
 *               create replied) seen completed by task.get, polled every
 *               millisecond; each Space is closed (status closed) before
 *               the next create.  With warm_standby = true the create
 *               waits until the instance's new standby has had its
 *               browser running for WB_SETTLE_MS (the idle state a
 *               create meets: on a loaded machine a browser launched a
 *               second before is still starting, and its first snapshot
 *               took 2.6-4 s either way); with false, for WB_SETTLE_MS
 *               after the close.  One warm-up run first, not counted.
 *   standby memory   the Pss (smaps_rollup) summed over the idle standby
 *               browser's process group (the browser, its zygotes,
 *               renderer and utility processes), and the standby actor's
 *               own, after WB_IDLE_MS idle.
 *
 * Times are printed in ms truncated to the microsecond (never rounded).
 */
#include <dirent.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "testkit.h"

#define WB_RUNS_DEFAULT 20
#define WB_RUNS_MAX 200
#define WB_SETTLE_MS 5000
#define WB_IDLE_MS 2000
#define WB_WAIT_MS 60000 /* one task, one close, one standby */

struct wb {
	struct tk_proc p;
	char dir[128];
	nng_socket s;
	struct tk_world w;
	char inst[CM_ID_MAX + 1];
};

static void
wb_sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* A field of /proc/<pid>/stat after the command: 1 = state, 2 = ppid,
 * 3 = pgrp.  -1 when pid is gone. */
static long
wb_stat_field(pid_t pid, int field)
{
	char path[64], *text, *p;
	long v = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((text = tk_read_file(path, NULL)) == NULL)
		return -1;
	if ((p = strrchr(text, ')')) != NULL) {
		p += 2;
		for (int i = 1; i < field && p != NULL; i++)
			if ((p = strchr(p, ' ')) != NULL)
				p++;
		if (p != NULL)
			v = field == 1 ? (long)*p : strtol(p, NULL, 10);
	}
	free(text);
	return v;
}

/* The standby of the instance and its browser, once both run. */
static int
wb_standby(struct wb *b, pid_t *actor, pid_t *browser)
{
	char want[128];
	int64_t end = cm_mono_ms() + WB_WAIT_MS;

	snprintf(want, sizeof(want), " --standby=%s", b->inst);
	while (cm_mono_ms() < end) {
		if ((*actor = tk_child_with(b->p.pid, want, NULL, 0)) > 0 &&
		    (*browser = tk_child_with(
		         *actor, " --user-data-dir=", NULL, 0)) > 0)
			return 0;
		wb_sleep_ms(5);
	}
	fprintf(stderr, "warm_bench: no standby browser came\n");
	return -1;
}

static int
wb_start(struct wb *b, bool warm)
{
	const char *flags[] = {
	    warm ? "--warm-standby=true" : "--warm-standby=false", NULL};
	char out[200];
	struct pr_req q;
	struct pr_rep r;
	char bundle[CM_ID_MAX + 1] = "";

	memset(b, 0, sizeof(*b));
	tk_tmpdir(b->dir, sizeof(b->dir), "wb");
	snprintf(out, sizeof(out), "%s/spaced.out", b->dir);
	if (tk_spaced_start_logged(&b->p, b->dir, flags, out) != 0 ||
	    cm_rpc_open(&b->s, b->p.store_url) != 0 ||
	    tk_provision(b->s, &b->w, 0) != 0)
		return -1;
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_BUNDLE_LIST;
	if (tk_call(b->s, &q, &r) == CM_OK)
		for (size_t i = 0; i < r.n_bundles; i++)
			if (strcmp(r.bundles[i].name, "browser") == 0)
				snprintf(bundle, sizeof(bundle), "%s",
				    r.bundles[i].bundle_id);
	pr_rep_free(&r);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_INSTANCE_REGISTER;
	q.name = "chromium-bench";
	q.driver = "managed";
	q.bundle_id = bundle;
	if (bundle[0] == '\0' || tk_call(b->s, &q, &r) != CM_OK ||
	    r.n_instances != 1) {
		pr_rep_free(&r);
		fprintf(stderr, "warm_bench: no managed instance\n");
		return -1;
	}
	snprintf(
	    b->inst, sizeof(b->inst), "%s", r.instances[0].browser_instance_id);
	pr_rep_free(&r);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_BINDING_CREATE;
	q.workspace_id = b->w.workspace_id;
	q.browser_instance_id = b->inst;
	if (tk_call(b->s, &q, &r) != CM_OK) {
		pr_rep_free(&r);
		return -1;
	}
	pr_rep_free(&r);
	return 0;
}

static void
wb_stop(struct wb *b)
{
	nng_close(b->s);
	tk_proc_stop(&b->p, SIGTERM);
	tk_rmrf(b->dir);
}

/* Polls task.get until the task ends; 0 when it completed. */
static int
wb_task_done(struct wb *b, const char *space, const char *task)
{
	int64_t end = cm_mono_ms() + WB_WAIT_MS;
	struct pr_req q;
	struct pr_rep r;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_TASK_GET;
	q.workspace_id = b->w.workspace_id;
	q.space_id = space;
	q.task_id = task;
	while (cm_mono_ms() < end) {
		const char *st = NULL;
		int rc = 1;

		if (tk_call(b->s, &q, &r) == CM_OK && r.n_tasks == 1)
			st = r.tasks[0].status;
		if (st != NULL && strcmp(st, "completed") == 0)
			rc = 0;
		else if (st != NULL && (strcmp(st, "failed") == 0 ||
		                           strcmp(st, "cancelled") == 0))
			rc = -1;
		pr_rep_free(&r);
		if (rc <= 0)
			return rc;
		wb_sleep_ms(1);
	}
	return -1;
}

/* space.close, then polls until the Space is closed. */
static int
wb_close(struct wb *b, const char *space)
{
	int64_t end = cm_mono_ms() + WB_WAIT_MS;
	struct pr_req q;
	struct pr_rep r;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SPACE_CLOSE;
	q.workspace_id = b->w.workspace_id;
	q.space_id = space;
	if (tk_call(b->s, &q, &r) != CM_OK) {
		pr_rep_free(&r);
		return -1;
	}
	pr_rep_free(&r);
	q.op = PR_OP_SPACE_GET;
	while (cm_mono_ms() < end) {
		bool closed;

		closed = tk_call(b->s, &q, &r) == CM_OK && r.n_spaces == 1 &&
		         strcmp(r.spaces[0].status, "closed") == 0;
		pr_rep_free(&r);
		if (closed)
			return 0;
		wb_sleep_ms(5);
	}
	return -1;
}

/* One create -> first snapshot, in ns; -1 on failure. */
static int64_t
wb_once(struct wb *b, int run)
{
	static const char *granted[] = {"snapshot"};
	char space[CM_ID_MAX + 1], task[CM_ID_MAX + 1], rid[32];
	struct pr_req q;
	struct pr_rep r;
	int64_t t0, t1;

	tk_req_create(&q, &b->w, 0);
	q.browser_instance_id = b->inst;
	q.granted.n = 1;
	q.granted.v = granted;
	t0 = cm_mono_ns();
	if (tk_call(b->s, &q, &r) != CM_OK || r.n_spaces != 1) {
		pr_rep_free(&r);
		fprintf(stderr, "warm_bench: create refused\n");
		return -1;
	}
	snprintf(space, sizeof(space), "%s", r.spaces[0].space_id);
	pr_rep_free(&r);
	snprintf(rid, sizeof(rid), "snap-%d", run);
	tk_req_submit(&q, b->w.workspace_id, space, rid);
	q.capability = "snapshot";
	if (tk_call(b->s, &q, &r) != CM_OK || r.n_tasks != 1) {
		pr_rep_free(&r);
		fprintf(stderr, "warm_bench: submit refused\n");
		return -1;
	}
	snprintf(task, sizeof(task), "%s", r.tasks[0].task_id);
	pr_rep_free(&r);
	if (wb_task_done(b, space, task) != 0) {
		fprintf(stderr, "warm_bench: the snapshot did not complete\n");
		return -1;
	}
	t1 = cm_mono_ns();
	return wb_close(b, space) == 0 ? t1 - t0 : -1;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least pct% at or below it. */
static int64_t
wb_pct(const int64_t *v, int n, int pct)
{
	int rank = (pct * n + 99) / 100;

	return v[rank > 0 ? rank - 1 : 0];
}

static void
wb_ms(const char *label, int64_t ns)
{
	printf(" %s=%" PRId64 ".%03" PRId64, label, ns / 1000000,
	    (ns / 1000) % 1000);
}

static int
wb_create_runs(bool warm, int runs)
{
	int64_t v[WB_RUNS_MAX];
	pid_t actor = 0, browser = 0;
	struct wb b;
	int rc = -1;

	if (wb_start(&b, warm) != 0)
		goto out;
	for (int i = 0; i <= runs; i++) {
		int64_t t;

		if (warm && wb_standby(&b, &actor, &browser) != 0)
			goto out;
		wb_sleep_ms(WB_SETTLE_MS);
		if ((t = wb_once(&b, i)) < 0)
			goto out;
		if (i > 0)
			v[i - 1] = t; /* run 0 warms the machine up */
	}
	qsort(v, (size_t)runs, sizeof(v[0]), cmp_i64);
	printf("create -> first snapshot, warm_standby=%s, n=%d:",
	    warm ? "true" : "false", runs);
	wb_ms("min", v[0]);
	wb_ms("p50", wb_pct(v, runs, 50));
	wb_ms("p99", wb_pct(v, runs, 99));
	wb_ms("max", v[runs - 1]);
	printf(" ms\n");
	fflush(stdout);
	rc = 0;
out:
	wb_stop(&b);
	return rc;
}

static int
wb_memory(void)
{
	pid_t actor, browser;
	long group = 0, procs = 0;
	struct dirent *de;
	struct wb b;
	DIR *d;
	int rc = -1;

	if (wb_start(&b, true) != 0 || wb_standby(&b, &actor, &browser) != 0)
		goto out;
	wb_sleep_ms(WB_IDLE_MS);
	if ((d = opendir("/proc")) == NULL)
		goto out;
	while ((de = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10), kib;

		if (*end != '\0' || pid <= 0 ||
		    wb_stat_field((pid_t)pid, 3) != browser ||
		    (kib = tk_pss_kib((pid_t)pid)) < 0)
			continue;
		group += kib;
		procs++;
	}
	closedir(d);
	printf("idle standby browser: Pss %ld KiB summed over %ld processes "
	       "of its group; the standby actor itself: Pss %ld KiB\n",
	    group, procs, tk_pss_kib(actor));
	fflush(stdout);
	rc = procs > 0 ? 0 : -1;
out:
	wb_stop(&b);
	return rc;
}

int
main(int argc, char **argv)
{
	int runs = WB_RUNS_DEFAULT, rc = 0;

	if (argc > 1) {
		char *end;
		long v = strtol(argv[1], &end, 10);

		if (*end != '\0' || v < 1 || v > WB_RUNS_MAX) {
			fprintf(stderr, "usage: warm_bench [RUNS 1..%d]\n",
			    WB_RUNS_MAX);
			return 2;
		}
		runs = (int)v;
	}
	signal(SIGPIPE, SIG_IGN);
	printf("warm_bench: %ld CPUs online\n", sysconf(_SC_NPROCESSORS_ONLN));
	if (access("/usr/bin/chromium", X_OK) != 0) {
		fprintf(stderr, "warm_bench: no /usr/bin/chromium\n");
		return 1;
	}
	if (wb_create_runs(true, runs) != 0)
		rc = 1;
	if (wb_create_runs(false, runs) != 0)
		rc = 1;
	if (wb_memory() != 0)
		rc = 1;
	return rc;
}
