/*
 * The supervisor never waits on its store: the store killed with -9 at
 * random moments (during the bootstrap of an empty data dir, a rescan, the
 * finalising of a lost actor's task) is running again within 500 ms and
 * work goes on; SIGTERM at random moments ends spaced within 3 s with no
 * process left; admin.token appears only once it authenticates, and
 * /readyz never says ready before it exists.
 *
 * Random moments come from a seed printed with every failure.  The pauses
 * before a fault are when to strike, not waits for a state: every wait is
 * a bounded poll.
 */
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "clock.h"
#include "limits.h"
#include "space_fixture.h"
#include "token.h"

#define STORE_BACK_MS 500 /* a killed store runs again within this */
/*
 * Then a task is submitted and completed within TASK_MS.  A store killed
 * as a client was connecting may come back with a listener nng stopped
 * (common/listen.h): it takes in no one new until its watchdog listens
 * again, within CM_LISTEN_LOOK_MS + CM_LISTEN_PROBE_MS + CM_LISTEN_LOOK_MS
 * (one such run: 3 s).  The bound is that, and a second for the task.
 */
#define TASK_MS (2 * CM_LISTEN_LOOK_MS + CM_LISTEN_PROBE_MS + 1000)
#define EXIT_MS 3000  /* SIGTERM: spaced is gone within this */
#define BOOT_KILLS 6  /* store kills during a bootstrap */
#define RUN_KILLS 14  /* store kills in a running spaced */
#define RUN_SPACEDS 4 /* spaced instances the kills rotate over */
#define TERMS 20      /* SIGTERMs */
/*
 * The store's restart policy backs off from the second failure within
 * 10 s (100 ms, then 200, 400...; the fifth gives up): kills of one
 * spaced's store are paced further apart than that, so that each is a
 * first failure and the 500 ms bound measures the supervisor, not the
 * policy's backoff.
 */
#define KILL_GAP_MS 10100

static unsigned seed;

static int
random_ms(int max)
{
	return max > 0 ? (int)(rand_r(&seed) % (unsigned)(max + 1)) : 0;
}

/* When to strike; not a wait for anything. */
static void
pause_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static void
seed_init(void)
{
	seed = (unsigned)cm_mono_ms() ^ (unsigned)getpid();
	cr_log_info("seed %u", seed);
}

static pid_t
store_of(pid_t spaced)
{
	pid_t pids[4];

	return sf_children(spaced, "spaced-store", NULL, pids, 4) == 1 ? pids[0]
	                                                               : 0;
}

struct store_wait {
	pid_t spaced, old, now;
};

static bool
store_replaced(void *arg)
{
	struct store_wait *w = arg;
	pid_t pid = store_of(w->spaced);

	if (pid == 0 || pid == w->old)
		return false;
	w->now = pid;
	return true;
}

/* Kills the store and checks a new one runs within STORE_BACK_MS.
 * Returns the time the new one was seen. */
static int64_t
kill_store(struct sf_env *e, struct store_wait *w, const char *when)
{
	int64_t t0;

	w->spaced = e->p.pid;
	w->old = w->now;
	t0 = cm_mono_ms();
	cr_assert_eq(kill(w->old, SIGKILL), 0);
	cr_assert(tk_wait_until(store_replaced, w, STORE_BACK_MS),
	    "%s: no new store within %d ms (seed %u, see %s)", when,
	    STORE_BACK_MS, seed, e->out);
	cr_log_info("%s: a new store after %lld ms", when,
	    (long long)(cm_mono_ms() - t0));
	return cm_mono_ms();
}

/* A noop on space, submitted and completed by deadline (monotonic ms). */
static void
task_by(struct sf_env *e, const char *space, const char *rid, int64_t deadline,
    const char *when)
{
	char task[CM_ID_MAX + 1];
	int64_t t0 = cm_mono_ms();
	int left;

	cr_assert_eq(sf_submit(e, space, rid, "noop", NULL, 0, task), CM_OK,
	    "%s: submit", when);
	left = (int)(deadline - cm_mono_ms());
	cr_assert(
	    sf_wait_task(e, space, task, "completed", left > 0 ? left : 0),
	    "%s: the task did not complete within %d ms (seed %u, see %s)",
	    when, TASK_MS, seed, e->out);
	cr_log_info("%s: task completed %lld ms after submit", when,
	    (long long)(cm_mono_ms() - t0));
}

static void
spawn(struct sf_env *e, bool own_group, int *ready_fd)
{
	cr_assert_eq(tk_spaced_spawn(
	                 &e->p, e->dir, e->flags, e->out, own_group, ready_fd),
	    0);
}

/* Once spaced said ready: the world of sf_start. */
static void
provision(struct sf_env *e, size_t n_instances)
{
	cr_assert_eq(cm_rpc_open(&e->s, e->p.store_url), 0);
	sf_provision(e, n_instances);
}

/* auth.resolve of the token in admin.token: an enabled admin who manages
 * a workspace.  Store calls that may meet a store just restarted. */
static void
assert_token_works(const struct sf_env *e, nng_socket s, const char *when)
{
	char path[256], token[CM_TOKEN_LEN], hash[CM_TOKEN_HASH_LEN];
	struct pr_req q;
	struct pr_rep r;
	size_t len;
	char *text;
	enum cm_err err;

	snprintf(path, sizeof(path), "%s/admin.token", e->dir);
	cr_assert_not_null(
	    text = tk_read_file(path, &len), "%s: no %s", when, path);
	cr_assert_eq(
	    len, CM_TOKEN_LEN, "%s: %zu bytes in the token file", when, len);
	memcpy(token, text, len - 1);
	token[len - 1] = '\0';
	free(text);
	cr_assert_eq(cm_token_hash(token, strlen(token), hash), 0);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_AUTH_RESOLVE;
	q.token_hash = hash;
	err = cm_rpc_call(s, &q, &r, SF_WAIT_MS);
	cr_assert_eq(err, CM_OK, "%s: the store did not answer", when);
	cr_assert_eq(r.err, CM_OK,
	    "%s: admin.token exists and does not authenticate (%s)", when,
	    cm_err_code(r.err));
	cr_assert_eq(r.n_principals, 1);
	cr_assert(r.principals[0].is_admin);
	cr_assert_geq(
	    r.n_memberships, 1, "%s: the admin manages nothing", when);
	pr_rep_free(&r);
}

/* The store said it serves (in spaced's output). */
static bool
store_serving(void *arg)
{
	const struct sf_env *e = arg;
	char *out = tk_read_file(e->out, NULL);
	bool yes = out != NULL && strstr(out, "store: serving") != NULL;

	free(out);
	return yes;
}

Test(store_faults, store_killed_during_bootstrap, .fini = tk_cleanup)
{
	static struct sf_env e;
	char space[CM_ID_MAX + 1], when[80];
	struct store_wait w;
	int ready_fd, at;

	seed_init();
	for (int i = 0; i < BOOT_KILLS; i++) {
		sf_env_init(&e, "sfboot");
		spawn(&e, false, &ready_fd);
		w = (struct store_wait){e.p.pid, 0, 0};
		cr_assert(tk_wait_until(store_replaced, &w, SF_WAIT_MS),
		    "no store came up");
		/* Half the kills as the store starts, half once it serves:
		 * then the supervisor is in the bootstrap's first calls. */
		if (i % 2 == 1)
			cr_assert(tk_wait_until(store_serving, &e, SF_WAIT_MS));
		at = random_ms(i % 2 == 1 ? 20 : 50);
		snprintf(when, sizeof(when), "boot %d, kill %d ms after %s", i,
		    at, i % 2 == 1 ? "it serves" : "it starts");
		pause_ms(at);
		kill_store(&e, &w, when);
		cr_assert(tk_ready_wait(ready_fd, SF_WAIT_MS),
		    "%s: spaced never said ready (seed %u, see %s)", when, seed,
		    e.out);
		provision(&e, 1);
		assert_token_works(&e, e.s, when);
		sf_create_ok(&e, 0, space);
		cr_assert_neq(sf_wait_actor(&e, space, 0, SF_WAIT_MS), 0);
		task_by(&e, space, "after", cm_mono_ms() + TASK_MS, when);
		sf_stop(&e);
	}
}

/* One spaced of the rotation, with a Space whose actor stays up. */
struct run {
	struct sf_env e;
	char base[CM_ID_MAX + 1];
	size_t next_instance; /* for a Space whose actor is to be killed */
	int64_t last_kill;
	struct store_wait w;
};

/*
 * Kills the store of r at a random moment: plain (a rescan or a sweep may
 * be under way), or just after killing an actor mid-task, so that the
 * store dies while the supervisor finalises that task.
 */
static void
kill_at_random(struct run *r, int k)
{
	struct sf_env *e = &r->e;
	char when[64], lost[CM_ID_MAX + 1] = "", task[CM_ID_MAX + 1], rid[16];
	char space[CM_ID_MAX + 1] = "";
	/* Each spaced alternates the two. */
	bool finalise = (k / RUN_SPACEDS + k) % 2 == 1 &&
	                r->next_instance < e->w.n_instances;
	struct sf_task t;
	pid_t actor = 0;
	int64_t back;
	int at;

	r->w.now = store_of(e->p.pid);
	cr_assert_neq(r->w.now, 0);
	if (finalise) {
		sf_create_ok(e, r->next_instance++, space);
		cr_assert_neq(
		    actor = sf_wait_actor(e, space, 0, SF_WAIT_MS), 0);
		cr_assert_eq(sf_submit(e, space, "long", "sleep",
		                 "{\"ms\": 60000}", 120000, lost),
		    CM_OK);
		cr_assert(
		    sf_wait_fake(e, "start", "task_id", lost, SF_WAIT_MS));
	}
	/* Paced for the store's restart policy (KILL_GAP_MS). */
	if (r->last_kill > 0 && cm_mono_ms() < r->last_kill + KILL_GAP_MS)
		pause_ms((int)(r->last_kill + KILL_GAP_MS - cm_mono_ms()));
	at = random_ms(finalise ? 20 : 1000);
	snprintf(when, sizeof(when), "kill %d (%s, %d ms)", k,
	    finalise ? "finalise" : "plain", at);
	if (finalise)
		cr_assert_eq(kill(actor, SIGKILL), 0);
	pause_ms(at);
	r->last_kill = cm_mono_ms();
	back = kill_store(e, &r->w, when);
	/* The test's own store socket, opened again: what is timed is the
	 * service's recovery, not how soon nng's dialer in the test finds
	 * the new store (one nng left without a pipe is replaced only after
	 * CM_RPC_RESEND_MS, common/rpc.c; once, that took 3.1 s). */
	nng_close(e->s);
	cr_assert_eq(cm_rpc_open(&e->s, e->p.store_url), 0);
	snprintf(rid, sizeof(rid), "k%d", k);
	task_by(e, r->base, rid, back + TASK_MS, when);
	if (!finalise)
		return;
	cr_assert(sf_wait_task(e, space, lost, "failed", SF_WAIT_MS),
	    "%s: the lost task was not finalised", when);
	sf_task_get(e, space, lost, &t);
	cr_assert_str_eq(t.error_code, "outcome_unknown");
	sf_task_free(&t);
	cr_assert_neq(sf_wait_actor(e, space, actor, SF_WAIT_MS), 0);
	cr_assert_eq(sf_submit(e, space, "next", "noop", NULL, 0, task), CM_OK);
	cr_assert(sf_wait_task(e, space, task, "completed", SF_WAIT_MS));
}

/* Not inlined: GCC would see runs[] where e->dir is, and warn that the
 * paths made from it may not fit. */
static __attribute__((noinline)) void
run_start(struct run *r)
{
	sf_start(&r->e, "sfrun", 1 + RUN_KILLS / RUN_SPACEDS);
	sf_create_ok(&r->e, 0, r->base);
	r->next_instance = 1;
	cr_assert_neq(sf_wait_actor(&r->e, r->base, 0, SF_WAIT_MS), 0);
}

Test(store_faults, store_killed_at_random_moments, .fini = tk_cleanup)
{
	static struct run runs[RUN_SPACEDS];

	seed_init();
	for (int i = 0; i < RUN_SPACEDS; i++)
		run_start(&runs[i]);
	for (int k = 0; k < RUN_KILLS; k++)
		kill_at_random(&runs[k % RUN_SPACEDS], k);
	for (int i = 0; i < RUN_SPACEDS; i++)
		sf_stop(&runs[i].e);
}

/* A task's status, or "" when the store does not answer now. */
static void
task_status(struct sf_env *e, const char *space, const char *task, char *out)
{
	struct pr_req q = sf_req(e, PR_OP_TASK_GET, space);
	struct pr_rep r;

	out[0] = '\0';
	q.task_id = task;
	if (cm_rpc_call(e->s, &q, &r, 200) == CM_OK && r.n_tasks == 1)
		snprintf(out, 33, "%s", r.tasks[0].status);
	pr_rep_free(&r);
}

struct claim_watch {
	struct sf_env *e;
	const char *space, *task;
	pid_t old;
	bool early; /* a new actor ran while the task was still running */
};

/* Until the lost task is finalised: a new actor must not be there yet. */
static bool
finalised_first(void *arg)
{
	struct claim_watch *c = arg;
	pid_t pids[4];
	char status[33];
	bool actor = false;
	int n = sf_children(c->e->p.pid, "spaced-actor", c->space, pids, 4);

	for (int i = 0; i < n; i++)
		actor |= pids[i] != c->old;
	task_status(c->e, c->space, c->task, status);
	if (actor && strcmp(status, "running") == 0)
		c->early = true;
	return c->early || strcmp(status, "failed") == 0;
}

Test(store_faults, lost_task_finalised_once_the_store_is_back,
    .fini = tk_cleanup)
{
	static struct sf_env e;
	char space[CM_ID_MAX + 1], lost[CM_ID_MAX + 1], next[CM_ID_MAX + 1];
	struct claim_watch c;
	struct store_wait w;
	struct sf_task t;
	pid_t actor;
	int n;

	sf_start(&e, "sffin", 1);
	sf_create_ok(&e, 0, space);
	cr_assert_neq(actor = sf_wait_actor(&e, space, 0, SF_WAIT_MS), 0);
	cr_assert_eq(sf_submit(&e, space, "long", "sleep", "{\"ms\": 60000}",
	                 120000, lost),
	    CM_OK);
	cr_assert(sf_wait_fake(&e, "start", "task_id", lost, SF_WAIT_MS));

	/* The store first: the actor dies while nothing can finalise. */
	w = (struct store_wait){e.p.pid, 0, store_of(e.p.pid)};
	cr_assert_neq(w.now, 0);
	cr_assert_eq(kill(w.now, SIGKILL), 0);
	cr_assert_eq(kill(actor, SIGKILL), 0);
	w.old = w.now;
	cr_assert(tk_wait_until(store_replaced, &w, STORE_BACK_MS),
	    "no new store within %d ms", STORE_BACK_MS);

	c = (struct claim_watch){&e, space, lost, actor, false};
	cr_assert(tk_wait_until(finalised_first, &c, SF_WAIT_MS),
	    "the lost task was never finalised");
	cr_assert_not(c.early, "a new actor ran before the lost task ended");
	sf_task_get(&e, space, lost, &t);
	cr_assert_str_eq(t.status, "failed");
	cr_assert_str_eq(t.error_code, "outcome_unknown");
	sf_task_free(&t);
	sf_event_seq(&e, space, lost, "failed", &n);
	cr_assert_eq(n, 1);
	/* The Space is served again, and the lost task never re-runs. */
	cr_assert_neq(sf_wait_actor(&e, space, actor, SF_WAIT_MS), 0);
	cr_assert_eq(
	    sf_submit(&e, space, "next", "noop", NULL, 0, next), CM_OK);
	cr_assert(sf_wait_task(&e, space, next, "completed", SF_WAIT_MS));
	cr_assert_eq(sf_fake_count(&e, "start", "task_id", lost), 1);
	sf_stop(&e);
}

/* Processes whose process group is pgid, read from /proc. */
static int
group_members(pid_t pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int found = 0;

	cr_assert_not_null(d);
	while ((de = readdir(d)) != NULL) {
		char path[300], *stat, *p, *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end != '\0' || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if ((stat = tk_read_file(path, NULL)) == NULL)
			continue;
		/* pid (comm) state ppid pgrp: comm may hold spaces. */
		if ((p = strrchr(stat, ')')) != NULL) {
			long ppid, pgrp;
			char state;

			if (sscanf(p + 1, " %c %ld %ld", &state, &ppid,
			        &pgrp) == 3 &&
			    pgrp == pgid && state != 'Z')
				found++;
		}
		free(stat);
	}
	closedir(d);
	return found;
}

struct term_wait {
	pid_t pid;
};

/* Exited, not reaped yet (tk_proc_stop reaps). */
static bool
exited(void *arg)
{
	struct term_wait *t = arg;
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)t->pid, &si, WEXITED | WNOHANG | WNOWAIT) ==
	           0 &&
	       si.si_pid == t->pid;
}

struct gone {
	pid_t pids[16];
	int n;
};

static bool
all_gone(void *arg)
{
	struct gone *g = arg;

	for (int i = 0; i < g->n; i++)
		if (!sf_pid_gone(g->pids[i]) || group_members(g->pids[i]) > 0)
			return false;
	return true;
}

/*
 * One SIGTERM to spaced's process group: 0 during the bootstrap of an
 * empty data dir, 1 right after spawning, 2 within a second of creating
 * a Space, 3 with a task running.
 */
static void
term_once(int i)
{
	static struct sf_env e;
	char space[CM_ID_MAX + 1], task[CM_ID_MAX + 1], when[64];
	struct store_wait w;
	struct term_wait tw;
	struct gone g;
	int ready_fd, kind = i % 4, at = 0;
	int64_t t0;

	sf_env_init(&e, "sfterm");
	spawn(&e, true, &ready_fd);
	if (kind == 0) {
		w = (struct store_wait){e.p.pid, 0, 0};
		cr_assert(tk_wait_until(store_replaced, &w, SF_WAIT_MS));
		at = random_ms(50);
	} else if (kind == 1) {
		at = random_ms(50);
	} else {
		cr_assert(tk_ready_wait(ready_fd, SF_WAIT_MS), "not ready");
		ready_fd = -1;
		provision(&e, 1);
		sf_create_ok(&e, 0, space);
		if (kind == 3) {
			cr_assert_neq(
			    sf_wait_actor(&e, space, 0, SF_WAIT_MS), 0);
			cr_assert_eq(sf_submit(&e, space, "long", "sleep",
			                 "{\"ms\": 60000}", 120000, task),
			    CM_OK);
			cr_assert(sf_wait_fake(
			    &e, "start", "task_id", task, SF_WAIT_MS));
		}
		at = random_ms(kind == 2 ? 1000 : 200);
	}
	pause_ms(at);
	/* Everything running now, and the groups its actors lead. */
	g.n = 0;
	g.pids[g.n++] = e.p.pid;
	g.n += sf_children(e.p.pid, "spaced-store", NULL, g.pids + g.n, 2);
	g.n += sf_children(e.p.pid, "spaced-api", NULL, g.pids + g.n, 2);
	g.n += sf_children(e.p.pid, "spaced-actor", NULL, g.pids + g.n, 8);
	cr_assert_leq(g.n, 16);
	snprintf(when, sizeof(when), "term %d (kind %d, %d ms)", i, kind, at);

	t0 = cm_mono_ms();
	cr_assert_eq(kill(-e.p.pid, SIGTERM), 0);
	tw.pid = e.p.pid;
	cr_assert(tk_wait_until(exited, &tw, EXIT_MS),
	    "%s: spaced still there %d ms after SIGTERM (seed %u, see %s)",
	    when, EXIT_MS, seed, e.out);
	cr_log_info(
	    "%s: exited after %lld ms", when, (long long)(cm_mono_ms() - t0));
	/* A process killed a moment ago may take a few ms to vanish. */
	cr_assert(tk_wait_until(all_gone, &g, 200),
	    "%s: a process of spaced outlived it (see %s)", when, e.out);
	if (ready_fd >= 0)
		close(ready_fd);
	if (kind >= 2)
		nng_close(e.s);
	tk_proc_stop(&e.p, SIGKILL);
	tk_rmrf(e.dir);
}

Test(store_faults, sigterm_at_random_moments, .fini = tk_cleanup)
{
	seed_init();
	for (int i = 0; i < TERMS; i++)
		term_once(i);
}

struct token_watch {
	struct sf_env *e;
	nng_socket s;
	int ready_fd;
	bool file, ready, readyz;
	bool kill_store; /* once, 0..50 ms after the store appears */
	struct store_wait w;
	int kill_at;
	int64_t store_seen;
};

static bool
token_file_there(const struct sf_env *e)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/admin.token", e->dir);
	return stat(path, &st) == 0;
}

/* One look at the token file, /readyz and the readiness line. */
static bool
token_step(void *arg)
{
	struct token_watch *t = arg;
	struct pollfd pfd = {t->ready_fd, POLLIN, 0};

	if (t->kill_store) {
		if (t->store_seen == 0 && store_replaced(&t->w))
			t->store_seen = cm_mono_ms();
		if (t->store_seen > 0 &&
		    cm_mono_ms() >= t->store_seen + t->kill_at) {
			kill(t->w.now, SIGKILL);
			t->kill_store = false;
		}
	}
	if (!t->file && token_file_there(t->e)) {
		t->file = true;
		assert_token_works(
		    t->e, t->s, "the moment admin.token appeared");
	}
	if (!t->readyz && tk_http(&t->e->p, "GET", "/readyz", NULL, NULL, NULL,
	                      NULL) == 200) {
		t->readyz = true;
		cr_assert(token_file_there(t->e),
		    "/readyz said ready before admin.token existed");
	}
	if (!t->ready && poll(&pfd, 1, 0) == 1) {
		t->ready = tk_ready_wait(t->ready_fd, 0);
		t->ready_fd = -1;
		cr_assert(t->ready, "spaced exited before it was ready");
		cr_assert(token_file_there(t->e),
		    "spaced said ready before admin.token existed");
	}
	return t->ready && t->readyz;
}

Test(store_faults, token_file_appears_only_once_it_works, .fini = tk_cleanup)
{
	static struct sf_env e;
	struct token_watch t;

	seed_init();
	for (int i = 0; i < 3; i++) {
		sf_env_init(&e, "sftoken");
		memset(&t, 0, sizeof(t));
		t.e = &e;
		spawn(&e, false, &t.ready_fd);
		cr_assert_eq(cm_rpc_open(&t.s, e.p.store_url), 0);
		t.kill_store = i == 0;
		t.kill_at = random_ms(50);
		t.w = (struct store_wait){e.p.pid, 0, 0};
		cr_assert(tk_wait_until(token_step, &t, SF_WAIT_MS),
		    "start %d: not ready with /readyz (file %d, ready %d, "
		    "readyz %d; see %s)",
		    i, t.file, t.ready, t.readyz, e.out);
		cr_assert(t.file);
		nng_close(t.s);
		tk_proc_stop(&e.p, SIGTERM);
		tk_rmrf(e.dir);
	}
}
