/*
 * density_bench: many open Spaces on managed Chromium on one host, a few
 * of them working at once, through the real spaced (its own config file,
 * db.conf: max_spaces_per_workspace, warm_standby, chromium_path);
 * measured and reported, never asserted (target: with 32 open and 8
 * working, task p99 <= 3 x the single Space's, docs/performance.md).
 *
 * The world is bw_setup's with --open N managed instances, each bound to
 * the workspace: an open Space holds its instance alone.  With warm
 * standby (the default) every instance's standby browser is running
 * before the first Space opens, so both phases run beside N browsers.
 *
 * A round, on one Space: navigate to the page server's home page,
 * snapshot, click the ref of its link "Next page" (the click must say it
 * navigated), snapshot (it must show "Second page"); each task a POST
 * .../tasks?wait=30, timed from its submit to its answer, by capability
 * and all together.  One untimed round comes first on each Space.
 *
 *   single    one open Space, working alone, --rounds rounds.
 *   density   --open Spaces in all (each one not working navigated once,
 *             so that every open Space holds a loaded page), --working of
 *             them running their rounds at once, a thread each, while
 *             another thread sweeps the routes once a second: the Space
 *             list, each open Space's detail and event log, /metrics and
 *             the supervisor's status.  Any answer not 2xx fails the run
 *             (exit 1), the route named.
 *   memory    all open and idle for DB_SETTLE_MS, then the Pss
 *             (smaps_rollup) of each Space's browser, summed over every
 *             process under it (the child of the Space's actor and its
 *             descendants; the process group is counted beside it and a
 *             Space where the two differ is named), and its private
 *             memory (Private_Clean + Private_Dirty: what does not
 *             depend on who else maps Chromium's files), its processes
 *             and renderers, its crash handlers (init's children, their
 *             count and Pss apart), the actor's own Pss, and the host's
 *             total (spaced, every child, every browser and their crash
 *             handlers) per open Space.
 *   leaks     before the single phase and after every Space is closed
 *             (each time once every standby browser runs and spaced and
 *             its browsers have used at most DB_QUIET_PCT % of a CPU over
 *             a second, DB_QUIET_MS at most: N browsers launched at once
 *             keep 2 CPUs busy for many seconds): the browser processes
 *             under spaced (those of standby actors apart), its
 *             browsers' crash handlers, and the fds and Pss of the
 *             supervisor, the store and the api.  A closed Space's
 *             browser process or crash handler still running after
 *             DB_GONE_MS, or
 *             a browser that is not a standby's, fails the run.
 *
 *   density_bench [--open N] [--working K] [--rounds R] [--no-standby]
 *                 [--chromium PATH]
 *   --open N        open Spaces in the density phase, 1..64 (default 32)
 *   --working K     of them working at once, 1..N (default 8)
 *   --rounds R      timed rounds per working Space, 2..1000 (default 20)
 *   --no-standby    warm_standby = false: each Space launches its browser
 *   --chromium PATH chromium_path, e.g. a script that execs
 *                   /usr/bin/chromium with flags of its own
 *
 * Figures are ms to the microsecond, truncated; the p50 and p99 are
 * nearest-rank.  Exit: 0 measured, 1 a step, a route or a leak check
 * failed, 2 a bad flag or no chromium.
 */
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_world.h"
#include "clock.h"
#include "config.h"
#include "limits.h"
#include "testkit.h"

#define DB_OPEN_MAX 64
#define DB_ROUNDS_MAX 1000
#define DB_SETTLE_MS 2000       /* idle before a memory reading */
#define DB_GONE_MS 30000        /* a closed Space's browser to be gone */
#define DB_QUIET_MS 120000      /* the host to be quiet ... */
#define DB_QUIET_PCT 20         /* ... under this % of a CPU */
#define DB_SWEEP_MS 1000        /* between two sweeps of the routes */
#define DB_ROUTE_SAMPLES 8192   /* timed answers kept per route */
#define DB_PS_MAX 8192          /* processes read at once */
#define DB_TREE_MAX 64          /* processes of one browser */
#define DB_ROWS_MAX 256         /* rows of the supervisor's status */
#define DB_LINK "Next page"     /* the home page's link ... */
#define DB_LANDED "Second page" /* ... and the heading it leads to */
#define DB_CAPS "[\"navigate\", \"snapshot\", \"click\"]"

#define fail(...) tk_fail("density_bench", __VA_ARGS__)

typedef char db_id[CM_ID_MAX + 1];

/* ---- the rounds */

enum db_kind { DB_NAV, DB_SNAP, DB_CLICK, DB_ALL, DB_KINDS };
static const char *const db_kind_name[DB_KINDS] = {
    "navigate", "snapshot", "click", "all_tasks"};
/* Tasks of each kind in a round. */
static const int db_per_round[DB_KINDS] = {1, 2, 1, 4};

/* The samples of one phase, each kind's for every working Space. */
struct db_phase {
	int64_t *v[DB_KINDS];
	int n[DB_KINDS];
};

/* One working Space: its rounds' samples go to v[kind][0..n). */
struct db_worker {
	struct bw_world *w;
	const char *space;
	const char *phase; /* in its request ids: the Space of the single
	                    * phase works again in the density phase */
	int rounds, rc;
	int64_t *v[DB_KINDS];
	int n[DB_KINDS];
	int64_t t_begin, t_end; /* its timed rounds, cm_mono_ns */
};

/* Pss in KiB of pid, 0 when it is gone. */
static long
db_pss(pid_t pid)
{
	long kib = tk_pss_kib(pid);

	return kib > 0 ? kib : 0;
}

/* What pid alone maps (smaps_rollup's Private_Clean + Private_Dirty), in
 * KiB, 0 when it is gone: what its end would free, whoever else maps
 * the same files.  Pss shares the rest among every process that maps
 * it, the host's other Chromiums too. */
static long
db_private(pid_t pid)
{
	static const char *const field[2] = {
	    "\nPrivate_Clean:", "\nPrivate_Dirty:"};
	char path[64], *text, *p;
	long kib = 0;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	if ((text = tk_read_file(path, NULL)) == NULL)
		return 0;
	for (int f = 0; f < 2; f++)
		if ((p = strstr(text, field[f])) != NULL)
			kib += strtol(p + strlen(field[f]), NULL, 10);
	free(text);
	return kib;
}

/* One task of kind k as request rid (made of tag and round i), timed
 * into k's samples unless untimed. */
static int
task(struct db_worker *k, enum db_kind kind, const char *tag, int i, bool timed,
    const char *args, json_t **data)
{
	char rid[48];
	int64_t t0, t;

	if ((size_t)snprintf(rid, sizeof(rid), "%s-%s-%s%d", k->phase, tag,
	        timed ? "" : "w", i) >= sizeof(rid))
		return fail("request id too long");
	t0 = cm_mono_ns();
	if (bw_task(k->w, k->space, rid, db_kind_name[kind], args, data) != 0)
		return fail("Space %s: %s failed", k->space, rid);
	t = cm_mono_ns() - t0;
	if (timed) {
		k->v[kind][k->n[kind]++] = t;
		k->v[DB_ALL][k->n[DB_ALL]++] = t;
	}
	return 0;
}

/* Round i of k's Space; untimed unless timed. */
static int
round_run(struct db_worker *k, int i, bool timed)
{
	char args[200], ref[32];
	json_t *data = NULL;
	const char *o;
	int rc;

	if ((size_t)snprintf(args, sizeof(args), "{\"url\": \"%s\"}",
	        k->w->url) >= sizeof(args) ||
	    task(k, DB_NAV, "nav", i, timed, args, NULL) != 0 ||
	    task(k, DB_SNAP, "snap", i, timed, "{}", &data) != 0)
		return -1;
	rc = bw_ref_of("density_bench", bw_outline(data),
	    "link \"" DB_LINK "\"", ref, sizeof(ref));
	json_decref(data);
	if (rc != 0)
		return -1;
	snprintf(args, sizeof(args), "{\"ref\": \"%s\"}", ref);
	if (task(k, DB_CLICK, "click", i, timed, args, &data) != 0)
		return -1;
	rc = json_is_true(
	         json_object_get(json_object_get(data, "result"), "navigated"))
	         ? 0
	         : fail("Space %s: the click did not navigate", k->space);
	json_decref(data);
	if (rc != 0 || task(k, DB_SNAP, "snap2", i, timed, "{}", &data) != 0)
		return -1;
	o = bw_outline(data);
	rc = o != NULL && strstr(o, DB_LANDED) != NULL
	         ? 0
	         : fail("Space %s: the snapshot after the click shows no "
	                "\"%s\":\n%s",
	               k->space, DB_LANDED, o ? o : "(none)");
	json_decref(data);
	return rc;
}

/* A worker's whole run: the untimed round, then its rounds. */
static void *
worker_main(void *arg)
{
	struct db_worker *k = arg;

	k->rc = round_run(k, 0, false);
	k->t_begin = cm_mono_ns();
	for (int i = 0; i < k->rounds && k->rc == 0; i++)
		k->rc = round_run(k, i, true);
	k->t_end = cm_mono_ns();
	return NULL;
}

/* Room in ph for nw Spaces of rounds each; worker j's samples are its
 * own slice.  Returns 0, or -1. */
static int
phase_alloc(struct db_phase *ph, struct db_worker *k, int nw, int rounds)
{
	memset(ph, 0, sizeof(*ph));
	for (int c = 0; c < DB_KINDS; c++) {
		size_t per = (size_t)rounds * (size_t)db_per_round[c];

		if ((ph->v[c] = calloc(per * (size_t)nw, sizeof(int64_t))) ==
		    NULL)
			return fail("out of memory");
		for (int j = 0; j < nw; j++)
			k[j].v[c] = ph->v[c] + per * (size_t)j;
	}
	return 0;
}

static void
phase_free(struct db_phase *ph)
{
	for (int c = 0; c < DB_KINDS; c++)
		free(ph->v[c]);
}

/* The workers' samples together, each slice full (every round ran). */
static void
phase_gather(struct db_phase *ph, const struct db_worker *k, int nw)
{
	for (int c = 0; c < DB_KINDS; c++) {
		ph->n[c] = 0;
		for (int j = 0; j < nw; j++)
			ph->n[c] += k[j].n[c];
	}
}

/* Each kind's figures of ph; returns the p99 of all tasks. */
static int64_t
phase_report(const char *phase, struct db_phase *ph)
{
	char name[64];
	int64_t p99 = 0;

	for (int c = 0; c < DB_KINDS; c++) {
		snprintf(name, sizeof(name), "%s %s", phase, db_kind_name[c]);
		tk_report("density_bench", name, ph->v[c], ph->n[c]);
		if (c == DB_ALL)
			p99 = tk_pct(ph->v[c], (size_t)ph->n[c], 99);
	}
	return p99;
}

/* ---- the routes, swept while the Spaces work */

enum db_route { RT_LIST, RT_DETAIL, RT_EVENTS, RT_METRICS, RT_STATUS, RTS };
static const char *const db_route_name[RTS] = {
    "space_list", "space_detail", "space_events", "metrics", "admin_status"};

struct db_routes {
	struct bw_world *w;
	db_id *spaces;
	int n;
	atomic_bool stop;
	long sweeps, failures;
	long code[RTS][4]; /* 2xx, 4xx, 5xx, none or other */
	int64_t *lat[RTS];
	int nlat[RTS];
};

static void
sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* One GET of route r at path, as token; its answer counted.  With the
 * Space list, it must hold every open Space. */
static void
route_get(
    struct db_routes *rs, enum db_route r, const char *path, const char *token)
{
	char *text = NULL;
	int64_t t0 = cm_mono_ns();
	int code = tk_http(&rs->w->p, "GET", path, token, NULL, NULL,
	    r == RT_LIST ? &text : NULL);
	int cls = code / 100 == 2   ? 0
	          : code / 100 == 4 ? 1
	          : code / 100 == 5 ? 2
	                            : 3;

	if (rs->nlat[r] < DB_ROUTE_SAMPLES)
		rs->lat[r][rs->nlat[r]++] = cm_mono_ns() - t0;
	rs->code[r][cls]++;
	if (cls != 0 && rs->failures++ < 20)
		fail("route %s: GET %s answered %d", db_route_name[r], path,
		    code);
	if (cls == 0 && r == RT_LIST) {
		json_t *res = json_loads(text, 0, NULL);
		size_t got = json_array_size(json_object_get(res, "data"));

		if (got != (size_t)rs->n && rs->failures++ < 20)
			fail("route %s: GET %s listed %zu Spaces of %d",
			    db_route_name[r], path, got, rs->n);
		json_decref(res);
	}
	free(text);
}

static void *
routes_main(void *arg)
{
	struct db_routes *rs = arg;
	struct bw_world *w = rs->w;
	char path[320];

	while (!atomic_load(&rs->stop)) {
		snprintf(path, sizeof(path),
		    "/api/v1/workspaces/%s/browser-spaces?limit=%d", w->ws,
		    CM_LIST_LIMIT_MAX);
		route_get(rs, RT_LIST, path, w->user);
		for (int i = 0; i < rs->n; i++) {
			snprintf(path, sizeof(path),
			    "/api/v1/workspaces/%s/browser-spaces/%s", w->ws,
			    rs->spaces[i]);
			route_get(rs, RT_DETAIL, path, w->user);
			snprintf(path, sizeof(path),
			    "/api/v1/workspaces/%s/browser-spaces/%s/"
			    "events?after_sequence=0&limit=%d",
			    w->ws, rs->spaces[i], CM_EVENTS_LIMIT_MAX);
			route_get(rs, RT_EVENTS, path, w->user);
		}
		route_get(rs, RT_METRICS, "/metrics", NULL);
		route_get(rs, RT_STATUS, "/api/v1/admin/status", w->admin);
		rs->sweeps++;
		for (int t = 0; t < DB_SWEEP_MS / 50 && !atomic_load(&rs->stop);
		     t++)
			sleep_ms(50);
	}
	return NULL;
}

static void
routes_report(struct db_routes *rs)
{
	char name[64];

	printf("density_bench: routes: %ld sweeps, %ld answers not as "
	       "expected\n",
	    rs->sweeps, rs->failures);
	for (int r = 0; r < RTS; r++) {
		printf("density_bench: route %s: 2xx=%ld 4xx=%ld 5xx=%ld "
		       "none_or_other=%ld\n",
		    db_route_name[r], rs->code[r][0], rs->code[r][1],
		    rs->code[r][2], rs->code[r][3]);
		snprintf(name, sizeof(name), "route %s", db_route_name[r]);
		if (rs->nlat[r] > 0)
			tk_report(
			    "density_bench", name, rs->lat[r], rs->nlat[r]);
	}
}

/* ---- processes */

static struct tk_ps db_ps[DB_PS_MAX];
static int db_nps;

/* The supervisor's rows: kind, Space, pid. */
struct db_row {
	char kind[16];
	db_id space;
	pid_t pid;
};

/* GET /api/v1/admin/status into rows.  Returns how many, or -1. */
static int
rows_read(struct bw_world *w, struct db_row *rows, int max)
{
	char *text = NULL;
	json_t *res, *v;
	size_t i;
	int n = 0;

	if (tk_http(&w->p, "GET", "/api/v1/admin/status", w->admin, NULL, NULL,
	        &text) != 200) {
		free(text);
		return fail("GET /api/v1/admin/status failed");
	}
	res = json_loads(text, 0, NULL);
	free(text);
	json_array_foreach(json_object_get(res, "data"), i, v)
	{
		const char *kind = bw_str(v, "kind"),
		           *sp = bw_str(v, "space_id");

		if (n == max || kind == NULL)
			break;
		snprintf(rows[n].kind, sizeof(rows[n].kind), "%s", kind);
		snprintf(
		    rows[n].space, sizeof(rows[n].space), "%s", sp ? sp : "");
		rows[n].pid =
		    (pid_t)json_integer_value(json_object_get(v, "pid"));
		n++;
	}
	json_decref(res);
	return n;
}

/* A row's pid of kind (and Space, unless NULL); 0 when none. */
static pid_t
row_pid(const struct db_row *rows, int n, const char *kind, const char *space)
{
	for (int i = 0; i < n; i++)
		if ((kind == NULL || strcmp(rows[i].kind, kind) == 0) &&
		    (space == NULL || strcmp(rows[i].space, space) == 0))
			return rows[i].pid;
	return 0;
}

static const struct tk_ps *
ps_of(pid_t pid)
{
	for (int i = 0; i < db_nps; i++)
		if (db_ps[i].pid == pid)
			return &db_ps[i];
	return NULL;
}

/* The child of root that pid is or descends from; 0 when it is not
 * under root. */
static pid_t
child_of(pid_t pid, pid_t root)
{
	const struct tk_ps *p;

	for (int depth = 0; depth < 64 && (p = ps_of(pid)) != NULL; depth++) {
		if (p->ppid == root)
			return pid;
		pid = p->ppid;
	}
	return 0;
}

/* True when pid is one of spaced's own programs (spaced-*), by its
 * comm. */
static bool
is_spaced(pid_t pid)
{
	char path[64], *text;
	bool yes;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if ((text = tk_read_file(path, NULL)) == NULL)
		return false;
	yes = strncmp(text, "spaced", 6) == 0;
	free(text);
	return yes;
}

/* True when pid's command line holds want. */
static bool
cmdline_has(pid_t pid, const char *want)
{
	char path[64], *text;
	size_t len = 0;
	bool yes;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if ((text = tk_read_file(path, &len)) == NULL)
		return false;
	for (size_t i = 0; i < len; i++)
		if (text[i] == '\0')
			text[i] = ' ';
	yes = strstr(text, want) != NULL;
	free(text);
	return yes;
}

/* Field 22 of pid's stat, its start time; -1 when it is gone or a
 * zombie. */
static long long
start_time(pid_t pid)
{
	char path[64], *text, *p;
	long long v = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((text = tk_read_file(path, NULL)) == NULL)
		return -1;
	if ((p = strrchr(text, ')')) != NULL && p[1] == ' ' && p[2] != 'Z') {
		/* After the comm: the state is field 3. */
		for (int f = 3; f < 22 && p != NULL; f++)
			if ((p = strchr(p + 1, ' ')) == NULL)
				break;
		if (p != NULL)
			v = strtoll(p + 1, NULL, 10);
	}
	free(text);
	return v;
}

/* Open fds of pid; -1 when it cannot be read. */
static long
fd_count(pid_t pid)
{
	char path[64];
	struct dirent *de;
	long n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* ---- memory */

/* One open Space's browser as read. */
struct db_tree {
	pid_t actor, leader;
	int n, group, renderers, crashpad;
	int all; /* pid[0..n) the tree, pid[n..all) its crash handlers */
	pid_t pid[DB_TREE_MAX];
	long long start[DB_TREE_MAX];
	long pss, priv, crashpad_pss, actor_pss;
};

/* True when pid is a crash handler (chrome_crashpad_handler) of a
 * browser whose files are under tmp: the browser starts two, which
 * leave its process tree and group (their parent is init), their
 * database in the browser's $HOME, <data_dir>/tmp/<actor>. */
static bool
is_crashpad(pid_t pid, const char *tmp)
{
	char path[64], *text;
	bool yes;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if ((text = tk_read_file(path, NULL)) == NULL)
		return false;
	yes = strncmp(text, "chrome_crashpad", 15) == 0;
	free(text);
	return yes && cmdline_has(pid, tmp);
}

/* pid into t's list (its start time with it); -1 when the list is full
 * (said). */
static int
tree_add(struct db_tree *t, pid_t pid, const char *space)
{
	if (t->all == DB_TREE_MAX)
		return fail("the browser of %s has over %d processes", space,
		    DB_TREE_MAX);
	t->pid[t->all] = pid;
	t->start[t->all++] = start_time(pid);
	return 0;
}

/* Space space's browser into t, from db_ps and rows, of the spaced on
 * data dir dir. */
static int
tree_read(const char *dir, const char *space, const struct db_row *rows,
    int nrows, struct db_tree *t)
{
	char tmp[CM_PATH_MAX];

	memset(t, 0, sizeof(*t));
	if ((t->actor = row_pid(rows, nrows, NULL, space)) <= 0)
		return fail("Space %s has no actor", space);
	for (int i = 0; i < db_nps; i++)
		if (db_ps[i].ppid == t->actor && db_ps[i].state != 'Z') {
			if (t->leader != 0)
				return fail(
				    "the actor of %s has two children", space);
			t->leader = db_ps[i].pid;
		}
	if (t->leader == 0)
		return fail("the actor of %s has no browser", space);
	for (int i = 0; i < db_nps; i++) {
		pid_t pid = db_ps[i].pid;

		if (db_ps[i].pgrp == t->leader)
			t->group++;
		if (pid != t->leader && child_of(pid, t->actor) != t->leader)
			continue;
		if (tree_add(t, pid, space) != 0)
			return -1;
		t->n++;
		t->pss += db_pss(pid);
		t->priv += db_private(pid);
		t->renderers += cmdline_has(pid, " --type=renderer");
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/tmp/%d/", dir,
	        (int)t->actor) >= sizeof(tmp))
		return fail("the data dir's path is too long");
	for (int i = 0; i < db_nps; i++) {
		if (db_ps[i].ppid != 1 || db_ps[i].state == 'Z' ||
		    !is_crashpad(db_ps[i].pid, tmp))
			continue;
		if (tree_add(t, db_ps[i].pid, space) != 0)
			return -1;
		t->crashpad++;
		t->crashpad_pss += db_pss(db_ps[i].pid);
	}
	t->actor_pss = db_pss(t->actor);
	return 0;
}

/* "min= p50= max=" of n values. */
static void
spread(const char *what, int64_t *v, int n)
{
	tk_sort_i64(v, (size_t)n);
	printf(" %s min=%lld p50=%lld max=%lld", what, (long long)v[0],
	    (long long)tk_pct(v, (size_t)n, 50), (long long)v[n - 1]);
}

/* Each open Space's browser into trees[0..n), and what it costs. */
static int
memory(struct bw_world *w, db_id *spaces, int n, struct db_tree *trees)
{
	static struct db_row rows[DB_ROWS_MAX];
	int64_t pss[DB_OPEN_MAX], priv[DB_OPEN_MAX], procs[DB_OPEN_MAX],
	    rend[DB_OPEN_MAX], crash[DB_OPEN_MAX], crash_pss[DB_OPEN_MAX],
	    actor[DB_OPEN_MAX];
	long host_spaced = db_pss(w->p.pid), host_browsers = 0, host_crash = 0;
	int nrows;

	if ((nrows = rows_read(w, rows, DB_ROWS_MAX)) < 0)
		return -1;
	db_nps = tk_ps_read(db_ps, DB_PS_MAX);
	for (int i = 0; i < n; i++) {
		if (tree_read(w->p.dir, spaces[i], rows, nrows, &trees[i]) != 0)
			return -1;
		if (trees[i].group != trees[i].n)
			printf("density_bench: Space %s: %d processes under "
			       "its browser, %d in its process group\n",
			    spaces[i], trees[i].n, trees[i].group);
		pss[i] = trees[i].pss;
		priv[i] = trees[i].priv;
		procs[i] = trees[i].n;
		rend[i] = trees[i].renderers;
		crash[i] = trees[i].crashpad;
		crash_pss[i] = trees[i].crashpad_pss;
		host_crash += trees[i].crashpad_pss;
		actor[i] = trees[i].actor_pss;
	}
	for (int i = 0; i < db_nps; i++) {
		if (child_of(db_ps[i].pid, w->p.pid) == 0)
			continue;
		if (is_spaced(db_ps[i].pid))
			host_spaced += db_pss(db_ps[i].pid);
		else
			host_browsers += db_pss(db_ps[i].pid);
	}
	printf("density_bench: memory, %d open Spaces idle %d ms, per open "
	       "Space:",
	    n, DB_SETTLE_MS);
	spread("browser_pss_kib", pss, n);
	spread("browser_private_kib", priv, n);
	spread("processes", procs, n);
	spread("renderers", rend, n);
	spread("crash_handlers", crash, n);
	spread("crash_handlers_pss_kib", crash_pss, n);
	spread("actor_pss_kib", actor, n);
	printf("\ndensity_bench: memory, host: Pss %ld KiB (spaced's "
	       "processes %ld, browsers %ld, their crash handlers %ld) = %ld "
	       "KiB per open Space\n",
	    host_spaced + host_browsers + host_crash, host_spaced,
	    host_browsers, host_crash,
	    (host_spaced + host_browsers + host_crash) / n);
	fflush(stdout);
	return 0;
}

/* ---- leaks */

static const char *const db_core_name[3] = {"supervisor", "store", "api"};

struct db_leak {
	int procs, standby_procs, browsers, standby_browsers, crashpad;
	pid_t core[3];
	long fds[3], pss[3];
};

/* The browser processes under spaced now, and its core processes. */
static int
leak_read(struct bw_world *w, struct db_leak *l)
{
	static struct db_row rows[DB_ROWS_MAX];
	char tmp[CM_PATH_MAX];
	int nrows;

	/* The processes first: every actor among them then has its row
	 * (the supervisor makes it before the fork), but one that exited
	 * since. */
	memset(l, 0, sizeof(*l));
	db_nps = tk_ps_read(db_ps, DB_PS_MAX);
	if ((nrows = rows_read(w, rows, DB_ROWS_MAX)) < 0)
		return -1;
	for (int i = 0; i < db_nps; i++) {
		pid_t pid = db_ps[i].pid, actor;
		bool standby, leader;

		/* A killed one, dying at SCHED_IDLE, runs no code again. */
		if (db_ps[i].state == 'Z' ||
		    (actor = child_of(pid, w->p.pid)) == 0 || actor == pid ||
		    is_spaced(pid) || tk_pid_ended(pid))
			continue;
		standby = false;
		for (int r = 0; r < nrows && !standby; r++)
			standby = rows[r].pid == actor &&
			          strcmp(rows[r].kind, "standby") == 0;
		leader = db_ps[i].ppid == actor;
		l->procs++;
		l->browsers += leader;
		l->standby_procs += standby;
		l->standby_browsers += standby && leader;
	}
	/* The browsers' crash handlers are init's children. */
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/tmp/", w->p.dir) >=
	    sizeof(tmp))
		return fail("the data dir's path is too long");
	for (int i = 0; i < db_nps; i++)
		l->crashpad += db_ps[i].ppid == 1 && db_ps[i].state != 'Z' &&
		               is_crashpad(db_ps[i].pid, tmp);
	l->core[0] = w->p.pid;
	l->core[1] = row_pid(rows, nrows, "store", NULL);
	l->core[2] = row_pid(rows, nrows, "api", NULL);
	for (int c = 0; c < 3; c++) {
		l->fds[c] = fd_count(l->core[c]);
		l->pss[c] = db_pss(l->core[c]);
	}
	return 0;
}

static void
leak_print(const char *when, const struct db_leak *l)
{
	printf("density_bench: %s: %d browser processes under spaced in %d "
	       "browsers (of standbys: %d in %d), and %d crash handlers of "
	       "its browsers",
	    when, l->procs, l->browsers, l->standby_procs, l->standby_browsers,
	    l->crashpad);
	for (int c = 0; c < 3; c++)
		printf("; %s pid %d fds=%ld pss_kib=%ld", db_core_name[c],
		    (int)l->core[c], l->fds[c], l->pss[c]);
	printf("\n");
	fflush(stdout);
}

/* The processes of trees[0..n) still there (the same pid and start
 * time), or with code, those of them that can still run code (not
 * exiting, no SIGKILL pending: tk_pid_ended); the first into *one. */
static int
trees_left(const struct db_tree *trees, int n, bool code, pid_t *one)
{
	int left = 0;

	for (int i = 0; i < n; i++)
		for (int k = 0; k < trees[i].all; k++) {
			pid_t pid = trees[i].pid[k];

			if (trees[i].start[k] < 0 ||
			    start_time(pid) != trees[i].start[k] ||
			    (code && tk_pid_ended(pid)))
				continue;
			if (left++ == 0)
				*one = pid;
		}
	return left;
}

/*
 * Waits at most DB_GONE_MS until no process of the closed Spaces'
 * browsers can run code and every browser under spaced is a standby's,
 * or fails; then, within the same bound, until those processes have left
 * the process table: killed, a browser's processes exit at SCHED_IDLE
 * (browser.c), so on busy CPUs they take long to free their memory,
 * which is said, not failed.
 */
static int
closed_gone(struct bw_world *w, const struct db_tree *trees, int n)
{
	int64_t t0 = cm_mono_ms(), ended = -1, standbys = -1, now;
	struct db_leak l = {0}; /* read only when no tree process is left */
	pid_t one = 0;
	int left = 0;

	while (standbys < 0) {
		now = cm_mono_ms();
		if ((left = trees_left(trees, n, true, &one)) == 0 && ended < 0)
			ended = now - t0;
		if (left == 0 && leak_read(w, &l) == 0 &&
		    l.procs == l.standby_procs)
			standbys = now - t0;
		else if (now - t0 > DB_GONE_MS) {
			if (left > 0)
				return fail("%d processes of closed Spaces' "
				            "browsers still run after %d ms "
				            "(pid %d among them)",
				    left, DB_GONE_MS, (int)one);
			return fail("%d browser processes under spaced are "
			            "not a standby's after %d ms",
			    l.procs - l.standby_procs, DB_GONE_MS);
		} else
			sleep_ms(100);
	}
	while ((left = trees_left(trees, n, false, &one)) > 0 &&
	       cm_mono_ms() - t0 <= DB_GONE_MS)
		sleep_ms(100);
	printf("density_bench: after the last close: no process of the closed "
	       "Spaces' browsers runs code %lld ms on, every browser under "
	       "spaced is a standby's %lld ms on; ",
	    (long long)ended, (long long)standbys);
	if (left == 0)
		printf("all of them gone %lld ms on\n",
		    (long long)(cm_mono_ms() - t0));
	else
		printf("%d of them still exiting %d ms on (pid %d among "
		       "them)\n",
		    left, DB_GONE_MS, (int)one);
	fflush(stdout);
	return 0;
}

/* ---- a quiet host */

static pid_t db_tick_pid[DB_PS_MAX];
static int64_t db_tick[DB_PS_MAX];

/* The CPU ticks spaced's processes and browsers used since the last
 * call (all of them at the first), those of each one now kept. */
static int64_t
ticks_since(pid_t spaced)
{
	static int n;
	int64_t used = 0;
	int m = 0;

	db_nps = tk_ps_read(db_ps, DB_PS_MAX);
	for (int i = 0; i < db_nps; i++) {
		pid_t pid = db_ps[i].pid;
		int64_t t;

		if (pid != spaced && child_of(pid, spaced) == 0)
			continue;
		t = tk_proc_ticks(pid);
		used += t;
		for (int k = 0; k < n; k++)
			if (db_tick_pid[k] == pid) {
				used -= db_tick[k] < t ? db_tick[k] : t;
				break;
			}
		db_tick_pid[m] = pid;
		db_tick[m++] = t;
	}
	n = m;
	return used;
}

/*
 * Waits, at most DB_QUIET_MS, until spaced and its browsers used at most
 * DB_QUIET_PCT % of a CPU over a second: N browsers launched at once
 * (the standbys) keep the CPUs busy for seconds after each runs, and a
 * phase measured then would measure their start.
 */
static void
quiet(struct bw_world *w, const char *when)
{
	long hz = sysconf(_SC_CLK_TCK);
	int64_t t0 = cm_mono_ms(), used;

	(void)ticks_since(w->p.pid);
	do {
		sleep_ms(1000);
		used = ticks_since(w->p.pid);
	} while (used * 100 > (int64_t)hz * DB_QUIET_PCT &&
	         cm_mono_ms() - t0 < DB_QUIET_MS);
	printf("density_bench: %s: spaced and its browsers used %lld of %ld "
	       "ticks in a second, %lld ms after the wait began\n",
	    when, (long long)used, hz, (long long)(cm_mono_ms() - t0));
	fflush(stdout);
}

/* ---- the run */

struct db_opts {
	int open, working, rounds;
	bool standby;
	char chromium[CM_PATH_MAX];
};

/* db.conf in dir, its --config flag into flag. */
static int
config_write(const char *dir, const struct db_opts *o, char *flag, size_t len)
{
	char path[BW_DIR_MAX + 16];
	FILE *f;

	if ((size_t)snprintf(path, sizeof(path), "%s/db.conf", dir) >=
	        sizeof(path) ||
	    (size_t)snprintf(flag, len, "--config=%s", path) >= len)
		return fail("the config's path is too long");
	if ((f = fopen(path, "w")) == NULL ||
	    fprintf(f,
	        "max_spaces_per_workspace = %d\nwarm_standby = %s\n"
	        "chromium_path = \"%s\"\n",
	        DB_OPEN_MAX, o->standby ? "true" : "false", o->chromium) < 0 ||
	    fclose(f) != 0)
		return fail("cannot write %s", path);
	return 0;
}

/* Every instance's standby browser running (with warm standby), then
 * a quiet host. */
static int
settled(
    struct bw_world *w, const struct db_opts *o, db_id *ids, const char *when)
{
	for (int i = 0; o->standby && i < o->open; i++)
		if (bw_standby_on(w, ids[i], 0) != 0)
			return -1;
	quiet(w, when);
	return 0;
}

/* Runs k[0..nw) at once, each in a thread of its own (nw 1: this
 * one). */
static int
workers_run(struct db_worker *k, int nw)
{
	pthread_t th[DB_OPEN_MAX];
	int started = 0, rc = 0;

	if (nw == 1) {
		worker_main(&k[0]);
		return k[0].rc;
	}
	for (; started < nw; started++)
		if (pthread_create(
		        &th[started], NULL, worker_main, &k[started]) != 0) {
			rc = fail("pthread_create failed");
			break;
		}
	for (int j = 0; j < started; j++) {
		pthread_join(th[j], NULL);
		rc = k[j].rc != 0 ? -1 : rc;
	}
	return started == nw ? rc : -1;
}

/* Runs phase's workers k[0..nw) with open Spaces open, and says how
 * long their timed rounds took, from the first one's start to the last
 * one's end, and how busy the machine was over the whole phase. */
static int
phase_run(const char *phase, struct db_worker *k, int nw, int open)
{
	char ms[32], who[64];
	struct tk_cpu c0, c1;
	int64_t t0, t1;
	bool cpu = tk_cpu_read(&c0) == 0;
	int rc, tasks = 0;

	rc = workers_run(k, nw);
	cpu = cpu && tk_cpu_read(&c1) == 0;
	if (rc != 0)
		return -1;
	t0 = k[0].t_begin;
	t1 = k[0].t_end;
	for (int j = 0; j < nw; j++) {
		tasks += k[j].n[DB_ALL];
		t0 = k[j].t_begin < t0 ? k[j].t_begin : t0;
		t1 = k[j].t_end > t1 ? k[j].t_end : t1;
	}
	printf("density_bench: %s: %d open, %d working, %d timed tasks in %s "
	       "ms, %lld.%03lld tasks/s\n",
	    phase, open, nw, tasks, tk_ms(t1 - t0, ms, sizeof(ms)),
	    (long long)((int64_t)tasks * 1000000000 / (t1 - t0)),
	    (long long)((int64_t)tasks * 1000000000000 / (t1 - t0) % 1000));
	snprintf(
	    who, sizeof(who), "density_bench %s (warm-up included)", phase);
	if (cpu)
		tk_cpu_print(who, &c0, &c1);
	return 0;
}

/* The phases on the spaced already set up in w, instances ids[0..open). */
static int
phases(struct bw_world *w, const struct db_opts *o, db_id *ids, db_id *spaces)
{
	static struct db_worker k[DB_OPEN_MAX];
	static struct db_tree trees[DB_OPEN_MAX];
	static struct db_routes rs;
	struct db_phase single, density;
	struct db_leak before, after;
	pthread_t rth;
	int64_t p99_single, p99_density;
	char r[32];
	int rc = 0, n = o->open;

	if (settled(w, o, ids, "before") != 0 || leak_read(w, &before) != 0)
		return -1;
	leak_print("before", &before);

	/* single */
	if (bw_space_on(w, ids[0], DB_CAPS, spaces[0]) != 0)
		return -1;
	k[0] = (struct db_worker){
	    .w = w, .space = spaces[0], .phase = "single", .rounds = o->rounds};
	if (phase_alloc(&single, k, 1, o->rounds) != 0 ||
	    phase_run("single", k, 1, 1) != 0)
		return -1;
	phase_gather(&single, k, 1);
	p99_single = phase_report("single", &single);

	/* density */
	for (int i = 1; i < n; i++) {
		struct db_worker idle = {
		    .w = w, .space = spaces[i], .phase = "idle"};
		char args[200];

		snprintf(args, sizeof(args), "{\"url\": \"%s\"}", w->url);
		if (bw_space_on(w, ids[i], DB_CAPS, spaces[i]) != 0 ||
		    (i >= o->working &&
		        task(&idle, DB_NAV, "nav", 0, false, args, NULL) != 0))
			return -1;
	}
	for (int j = 0; j < o->working; j++)
		k[j] = (struct db_worker){.w = w,
		    .space = spaces[j],
		    .phase = "density",
		    .rounds = o->rounds};
	if (phase_alloc(&density, k, o->working, o->rounds) != 0)
		return -1;
	rs.w = w;
	rs.spaces = spaces;
	rs.n = n;
	for (int r2 = 0; r2 < RTS; r2++)
		if ((rs.lat[r2] = calloc(DB_ROUTE_SAMPLES, sizeof(int64_t))) ==
		    NULL)
			return fail("out of memory");
	if (pthread_create(&rth, NULL, routes_main, &rs) != 0)
		return fail("pthread_create failed");
	rc = phase_run("density", k, o->working, n);
	atomic_store(&rs.stop, true);
	pthread_join(rth, NULL);
	if (rc != 0)
		return -1;
	phase_gather(&density, k, o->working);
	p99_density = phase_report("density", &density);
	printf("density_bench: ratio p99 density/single = %s (target <= 3)\n",
	    bw_ratio(p99_density, p99_single, r, sizeof(r)));
	routes_report(&rs);
	rc = rs.failures > 0
	         ? fail("%ld route answers were not as expected", rs.failures)
	         : 0;
	phase_free(&single);
	phase_free(&density);

	/* memory */
	sleep_ms(DB_SETTLE_MS);
	if (memory(w, spaces, n, trees) != 0)
		return -1;

	/* leaks */
	for (int i = 0; i < n; i++)
		if (bw_close(w, spaces[i]) < 0)
			return -1;
	for (int i = 0; i < n; i++)
		if (bw_wait_closed(w, spaces[i]) != 0)
			return -1;
	if (closed_gone(w, trees, n) != 0)
		return -1;
	if (settled(w, o, ids, "after") != 0 || leak_read(w, &after) != 0)
		return -1;
	leak_print("after", &after);
	for (int r2 = 0; r2 < RTS; r2++)
		free(rs.lat[r2]);
	return rc;
}

/* The flags into o; -1 on a bad one. */
static int
flags(int argc, char **argv, struct db_opts *o)
{
	for (int i = 1; i < argc; i++) {
		int *to = NULL, lo = 1, hi = DB_OPEN_MAX;
		char *end;
		long v;

		if (strcmp(argv[i], "--no-standby") == 0) {
			o->standby = false;
			continue;
		}
		if (i + 1 >= argc)
			return -1;
		if (strcmp(argv[i], "--chromium") == 0) {
			const char *p = argv[++i];

			if ((size_t)snprintf(o->chromium, sizeof(o->chromium),
			        "%s", p) >= sizeof(o->chromium) ||
			    p[0] != '/' || strpbrk(p, "\"\n") != NULL)
				return -1;
			continue;
		}
		if (strcmp(argv[i], "--open") == 0)
			to = &o->open;
		else if (strcmp(argv[i], "--working") == 0)
			to = &o->working;
		else if (strcmp(argv[i], "--rounds") == 0) {
			to = &o->rounds;
			lo = 2;
			hi = DB_ROUNDS_MAX;
		} else
			return -1;
		errno = 0;
		v = strtol(argv[++i], &end, 10);
		if (end == argv[i] || *end != '\0' || errno != 0 || v < lo ||
		    v > hi)
			return -1;
		*to = (int)v;
	}
	return o->working <= o->open ? 0 : -1;
}

int
main(int argc, char **argv)
{
	static struct bw_world w;
	static db_id ids[DB_OPEN_MAX], spaces[DB_OPEN_MAX];
	struct db_opts o = {.open = 32,
	    .working = 8,
	    .rounds = 20,
	    .standby = true,
	    .chromium = TK_CHROMIUM};
	const char *start[3] = {NULL, NULL, NULL};
	char dir[BW_DIR_MAX], out[BW_OUT_MAX], conf[BW_DIR_MAX + 32];
	struct tk_cpu m0, m1;
	struct tk_pages *pages;
	bool machine;
	int rc;

	if (flags(argc, argv, &o) != 0) {
		fprintf(stderr,
		    "usage: density_bench [--open 1..%d] [--working 1..N] "
		    "[--rounds 2..%d] [--no-standby] [--chromium PATH]\n",
		    DB_OPEN_MAX, DB_ROUNDS_MAX);
		return 2;
	}
	if (access(o.chromium, X_OK) != 0) {
		fail("no chromium at %s", o.chromium);
		return 2;
	}
	/* Before any thread: libcurl's global state. */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fail("curl_global_init failed");
		return 1;
	}
	if ((rc = bw_begin(
	         &w, "density_bench", "db", true, &pages, dir, out)) != 0)
		return rc;
	printf("density_bench: %ld CPUs online, --open %d --working %d "
	       "--rounds %d, warm_standby=%s, chromium_path=%s\n",
	    sysconf(_SC_NPROCESSORS_ONLN), o.open, o.working, o.rounds,
	    o.standby ? "true" : "false", o.chromium);
	bw_load_average("density_bench", "at the start");
	machine = tk_cpu_read(&m0) == 0;
	/* testkit turns warm standby off unless a flag names it, and a flag
	 * wins over the file: the same value both ways. */
	start[0] = conf;
	start[1] = o.standby ? "--warm-standby=true" : "--warm-standby=false";
	if (config_write(dir, &o, conf, sizeof(conf)) != 0)
		rc = -1;
	else if (tk_spaced_start_logged(&w.p, dir, start, out) != 0)
		rc = fail("spaced did not start (see %s)", out);
	else {
		rc = bw_setup(&w);
		snprintf(ids[0], sizeof(ids[0]), "%s", w.inst);
		if (rc != 0 || bw_instances(&w, o.open - 1, ids + 1) != 0 ||
		    phases(&w, &o, ids, spaces) != 0)
			rc = -1;
		tk_proc_stop(&w.p, SIGTERM);
	}
	machine = machine && tk_cpu_read(&m1) == 0;
	tk_pages_stop(pages);
	bw_load_average("density_bench", "at the end");
	if (machine)
		tk_cpu_print("density_bench", &m0, &m1);
	if (rc != 0) {
		fail("kept %s (log: %s)", dir, out);
		return 1;
	}
	tk_rmrf(dir);
	return 0;
}
