/*
 * The supervisor and its actors, end to end with the fake runtime: the
 * real spaced on a temporary data dir, processes counted from /proc,
 * faults injected with kill -9, SIGSTOP and SIGTERM, outcomes read from
 * the store and from the fake runtime's log.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "space_fixture.h"

#define SLEEP_LONG "{\"ms\": 60000}"
#define TIMEOUT_LONG_MS 120000

static pid_t
store_pid(struct sf_env *e)
{
	pid_t pids[4];
	int n = sf_children(e->p.pid, "spaced-store", NULL, pids, 4);

	cr_assert_eq(n, 1, "%d stores under spaced", n);
	return pids[0];
}

/* A long sleep task on space, submitted and seen started by the fake
 * runtime; its id to task. */
static void
long_task_running(struct sf_env *e, const char *space, char *task)
{
	cr_assert_eq(sf_submit(e, space, "long", "sleep", SLEEP_LONG,
	                 TIMEOUT_LONG_MS, task),
	    CM_OK);
	cr_assert(sf_wait_fake(e, "start", "task_id", task, SF_WAIT_MS));
}

Test(supervisor, one_actor_per_open_space, .fini = tk_cleanup)
{
	static struct sf_env e;
	char a[CM_ID_MAX + 1], b[CM_ID_MAX + 1], c[CM_ID_MAX + 1];
	char task[CM_ID_MAX + 1], status[33];
	pid_t actor_b;

	sf_start(&e, "life", 3);
	sf_create_ok(&e, 0, a);
	sf_create_ok(&e, 1, b);
	sf_create_ok(&e, 2, c);
	cr_assert_eq(sf_close(&e, c), CM_OK);
	cr_assert(sf_wait_space(&e, c, "closed", SF_WAIT_MS));
	cr_assert(sf_wait_actors(&e, a, 1, SF_WAIT_MS), "no actor for a");
	cr_assert_neq(actor_b = sf_wait_actor(&e, b, 0, SF_WAIT_MS), 0);
	cr_assert(sf_wait_actors(&e, c, 0, SF_WAIT_MS), "an actor for c");
	cr_assert(sf_wait_actors(&e, NULL, 2, SF_WAIT_MS));

	cr_assert_eq(sf_submit(&e, a, "r1", "noop", NULL, 0, task), CM_OK);
	cr_assert(sf_wait_task(&e, a, task, "completed", SF_WAIT_MS));

	/* The actor leaves once its Space is closed. */
	cr_assert_eq(sf_close(&e, a), CM_OK);
	cr_assert(sf_wait_actors(&e, a, 0, SF_WAIT_MS), "actor did not leave");
	sf_space_get(&e, a, status, NULL);
	cr_assert_str_eq(status, "closed");
	cr_assert_eq(sf_actor_pid(&e, b), actor_b, "b's actor was touched");
	cr_assert(sf_wait_actors(&e, NULL, 1, SF_WAIT_MS));

	/* A restarted spaced starts actors from the store: b only. */
	nng_close(e.s);
	tk_proc_stop(&e.p, SIGTERM);
	sf_spaced_start(&e);
	cr_assert(sf_wait_actors(&e, b, 1, SF_WAIT_MS), "no actor for b");
	cr_assert_eq(sf_actor_pid(&e, a), 0);
	cr_assert_eq(sf_actor_pid(&e, c), 0);
	cr_assert_eq(sf_children(e.p.pid, "spaced-actor", NULL, NULL, 0), 1);
	sf_stop(&e);
}

Test(supervisor, killed_actor_affects_no_other_space, .fini = tk_cleanup)
{
	static struct sf_env e;
	char a[CM_ID_MAX + 1], b[CM_ID_MAX + 1];
	char ta[CM_ID_MAX + 1], tb[CM_ID_MAX + 1], next[CM_ID_MAX + 1];
	struct sf_task t;
	pid_t actor_a, actor_b, again;
	int n;

	sf_start(&e, "kill", 2);
	sf_create_ok(&e, 0, a);
	sf_create_ok(&e, 1, b);
	cr_assert_neq(actor_a = sf_wait_actor(&e, a, 0, SF_WAIT_MS), 0);
	cr_assert_neq(actor_b = sf_wait_actor(&e, b, 0, SF_WAIT_MS), 0);

	cr_assert_eq(
	    sf_submit(&e, a, "long", "sleep", SLEEP_LONG, TIMEOUT_LONG_MS, ta),
	    CM_OK);
	cr_assert(sf_wait_fake(&e, "start", "task_id", ta, SF_WAIT_MS));
	cr_assert_eq(
	    sf_submit(&e, b, "short", "sleep", "{\"ms\": 500}", 0, tb), CM_OK);
	cr_assert_eq(kill(actor_a, SIGKILL), 0);

	cr_assert(sf_wait_task(&e, a, ta, "failed", SF_WAIT_MS));
	sf_task_get(&e, a, ta, &t);
	cr_assert_str_eq(t.error_code, "outcome_unknown");
	sf_task_free(&t);
	sf_event_seq(&e, a, ta, "failed", &n);
	cr_assert_eq(n, 1);

	cr_assert(sf_wait_task(&e, b, tb, "completed", SF_WAIT_MS));
	cr_assert_eq(sf_actor_pid(&e, b), actor_b, "b's actor was touched");

	/* a is served again by a new actor, and never re-runs the task. */
	cr_assert_neq(again = sf_wait_actor(&e, a, actor_a, SF_WAIT_MS), 0);
	cr_assert_eq(sf_submit(&e, a, "next", "noop", NULL, 0, next), CM_OK);
	cr_assert(sf_wait_task(&e, a, next, "completed", SF_WAIT_MS));
	cr_assert_eq(sf_actor_pid(&e, a), again);
	cr_assert_eq(sf_fake_count(&e, "start", "task_id", ta), 1);
	sf_stop(&e);
}

/* The supervisor's own table: is there a row (running or waiting to
 * restart) for this Space? */
static bool
supervisor_has_row(struct sf_env *e, const char *space)
{
	char url[300];
	nng_socket ctl;
	struct pr_req q;
	struct pr_rep r;
	bool found = false;

	cr_assert_eq(
	    cm_ipc_url(url, sizeof(url), e->p.run_dir, "supervisor.ipc"), 0);
	cr_assert_eq(cm_rpc_open(&ctl, url), 0);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SUP_STATUS;
	cr_assert_eq(tk_call(ctl, &q, &r), CM_OK);
	cr_assert_geq(r.n_children, 1); /* the store at least */
	for (size_t i = 0; i < r.n_children; i++)
		if (r.children[i].space_id != NULL &&
		    strcmp(r.children[i].space_id, space) == 0)
			found = true;
	pr_rep_free(&r);
	nng_close(ctl);
	return found;
}

Test(supervisor, crash_loop_puts_space_in_error, .fini = tk_cleanup)
{
	static struct sf_env e;
	char space[CM_ID_MAX + 1], task[CM_ID_MAX + 1], rid[16];
	char status[33], code[CM_ERROR_CODE_MAX + 1];
	struct sf_task t;
	int crashes;

	sf_start(&e, "loop", 1);
	sf_create_ok(&e, 0, space);
	/* Each crash ends its task as unknown; the Space stays usable up to
	 * three crashes in a minute, and the fourth is a crash loop. */
	for (crashes = 0; crashes < 4; crashes++) {
		snprintf(rid, sizeof(rid), "crash-%d", crashes);
		cr_assert_eq(sf_submit(&e, space, rid, "crash", NULL, 0, task),
		    CM_OK, "submit after %d crashes", crashes);
		cr_assert(sf_wait_task(&e, space, task, "failed", SF_WAIT_MS));
		sf_task_get(&e, space, task, &t);
		cr_assert_str_eq(t.error_code, "outcome_unknown");
		sf_task_free(&t);
		if (crashes < 3) {
			sf_space_get(&e, space, status, NULL);
			cr_assert_str_neq(status, "error");
		}
	}
	cr_assert(sf_wait_space(&e, space, "error", SF_WAIT_MS));
	sf_space_get(&e, space, status, code);
	cr_assert_str_eq(code, "actor_crash_loop");
	cr_assert_eq(sf_submit(&e, space, "after", "noop", NULL, 0, NULL),
	    CM_E_SPACE_UNUSABLE);
	cr_assert(sf_wait_actors(&e, space, 0, SF_WAIT_MS));
	cr_assert_not(supervisor_has_row(&e, space),
	    "the supervisor still means to restart the actor");
	cr_assert_eq(sf_fake_count(&e, "start", "space_id", space), 4);
	sf_stop(&e);
}

struct pid_wait {
	struct sf_env *e;
	pid_t old;
	pid_t now;
};

static bool
store_replaced(void *arg)
{
	struct pid_wait *w = arg;
	pid_t pids[4];

	if (sf_children(w->e->p.pid, "spaced-store", NULL, pids, 4) != 1 ||
	    pids[0] == w->old)
		return false;
	w->now = pids[0];
	return true;
}

Test(supervisor, killed_store_is_restarted_without_loss, .fini = tk_cleanup)
{
	static struct sf_env e;
	char a[CM_ID_MAX + 1], b[CM_ID_MAX + 1], c[CM_ID_MAX + 1];
	char ta[CM_ID_MAX + 1], tb[CM_ID_MAX + 1], ta2[CM_ID_MAX + 1];
	char tc[CM_ID_MAX + 1];
	struct pid_wait w;
	pid_t actor_a, actor_b;
	int n;

	sf_start(&e, "store", 3);
	sf_create_ok(&e, 0, a);
	sf_create_ok(&e, 1, b);
	cr_assert_neq(actor_a = sf_wait_actor(&e, a, 0, SF_WAIT_MS), 0);
	cr_assert_neq(actor_b = sf_wait_actor(&e, b, 0, SF_WAIT_MS), 0);

	/* a is mid-call when the store dies; b's task and Space c exist only
	 * as acknowledged writes (b's actor is frozen, so it cannot claim). */
	cr_assert_eq(
	    sf_submit(&e, a, "mid", "sleep", "{\"ms\": 1000}", 0, ta), CM_OK);
	cr_assert(sf_wait_fake(&e, "start", "task_id", ta, SF_WAIT_MS));
	cr_assert_eq(kill(actor_b, SIGSTOP), 0);
	cr_assert_eq(sf_submit(&e, b, "acked", "noop", NULL, 0, tb), CM_OK);
	sf_create_ok(&e, 2, c);
	w = (struct pid_wait){&e, store_pid(&e), 0};
	cr_assert_eq(kill(w.old, SIGKILL), 0);
	cr_assert(tk_wait_until(store_replaced, &w, SF_WAIT_MS),
	    "the store was not restarted");
	cr_assert_eq(kill(actor_b, SIGCONT), 0);

	cr_assert(sf_wait_task(&e, a, ta, "completed", SF_WAIT_MS));
	cr_assert(sf_wait_task(&e, b, tb, "completed", SF_WAIT_MS));
	cr_assert_neq(sf_wait_actor(&e, c, 0, SF_WAIT_MS), 0);
	cr_assert_eq(sf_submit(&e, c, "first", "noop", NULL, 0, tc), CM_OK);
	cr_assert(sf_wait_task(&e, c, tc, "completed", SF_WAIT_MS));
	sf_event_seq(&e, a, ta, "completed", &n);
	cr_assert_eq(n, 1);
	sf_event_seq(&e, b, tb, "queued", &n);
	cr_assert_eq(n, 1);
	sf_event_seq(&e, b, tb, "completed", &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(sf_fake_count(&e, "start", "task_id", ta), 1);
	cr_assert_eq(sf_fake_count(&e, "start", "task_id", tb), 1);

	/* The actors carried on: same pids, and they still take work. */
	cr_assert_eq(sf_submit(&e, a, "after", "noop", NULL, 0, ta2), CM_OK);
	cr_assert(sf_wait_task(&e, a, ta2, "completed", SF_WAIT_MS));
	cr_assert_eq(sf_actor_pid(&e, a), actor_a);
	cr_assert_eq(sf_actor_pid(&e, b), actor_b);
	cr_assert_eq(store_pid(&e), w.now);
	sf_stop(&e);
}

struct gone_wait {
	const pid_t *pids;
	int n;
};

static bool
all_gone(void *arg)
{
	struct gone_wait *w = arg;

	for (int i = 0; i < w->n; i++)
		if (!sf_pid_gone(w->pids[i]))
			return false;
	return true;
}

Test(supervisor, sigterm_leaves_nothing_behind, .fini = tk_cleanup)
{
	static struct sf_env e;
	static struct tk_proc store;
	char a[CM_ID_MAX + 1], b[CM_ID_MAX + 1], task[CM_ID_MAX + 1];
	struct gone_wait gw;
	pid_t pids[3];
	json_t *lines, *end;
	struct sf_task t;
	int64_t req_seq, done_seq;
	int n;

	sf_start(&e, "term", 2);
	sf_create_ok(&e, 0, a);
	sf_create_ok(&e, 1, b);
	cr_assert_neq(pids[0] = sf_wait_actor(&e, a, 0, SF_WAIT_MS), 0);
	cr_assert_neq(pids[1] = sf_wait_actor(&e, b, 0, SF_WAIT_MS), 0);
	pids[2] = store_pid(&e);
	long_task_running(&e, a, task);

	nng_close(e.s);
	tk_proc_stop(&e.p, SIGTERM);
	gw = (struct gone_wait){pids, 3};
	cr_assert(tk_wait_until(all_gone, &gw, SF_WAIT_MS),
	    "a child of spaced outlived it");

	/* The running task was cancelled by its actor, after cleanup. */
	lines = sf_fake_lines(&e);
	end = sf_fake_find(lines, "end", "task_id", task, 0);
	cr_assert(end != NULL && json_is_true(json_object_get(end, "cleanup")));
	cr_assert_str_eq(sf_str(end, "outcome"), "cancelled");
	json_decref(lines);

	/* Read the outcome from the store alone: nothing else may start. */
	cr_assert_eq(tk_store_start(&store, e.dir, NULL), 0);
	cr_assert_eq(cm_rpc_open(&e.s, store.store_url), 0);
	sf_task_get(&e, a, task, &t);
	cr_assert_str_eq(t.status, "cancelled");
	sf_task_free(&t);
	req_seq = sf_event_seq(&e, a, task, "cancel_requested", &n);
	cr_assert_eq(n, 1);
	done_seq = sf_event_seq(&e, a, task, "cancelled", &n);
	cr_assert_eq(n, 1);
	cr_assert_gt(done_seq, req_seq);
	nng_close(e.s);
	tk_proc_stop(&store, SIGTERM);
	tk_rmrf(e.dir);
}

/*
 * spaced killed with SIGKILL while a task runs (its actors and store die
 * with it) and started again on the same data dir: the restarted supervisor
 * knows its host's actors are gone, and ends the task failed with
 * outcome_unknown (a task whose outcome is unknown is never run again) as
 * soon as it has scanned, never lease_expired once the lease has run out;
 * the task is not run again and the Space serves the next one.
 */
Test(
    supervisor, restarted_spaced_ends_its_lost_task_at_once, .fini = tk_cleanup)
{
	static struct sf_env e;
	char space[CM_ID_MAX + 1], task[CM_ID_MAX + 1], next[CM_ID_MAX + 1];
	pid_t pids[2];
	struct gone_wait gw = {pids, 2};
	struct sf_task t;
	int status, n;
	int64_t t0;

	sf_start(&e, "reboot", 1);
	sf_create_ok(&e, 0, space);
	cr_assert_neq(pids[0] = sf_wait_actor(&e, space, 0, SF_WAIT_MS), 0);
	pids[1] = store_pid(&e);
	long_task_running(&e, space, task);

	nng_close(e.s);
	cr_assert_eq(kill(e.p.pid, SIGKILL), 0);
	cr_assert_eq(tk_proc_wait(&e.p, SF_WAIT_MS, &status), 0);
	cr_assert(tk_wait_until(all_gone, &gw, SF_WAIT_MS),
	    "a child outlived the killed spaced");

	sf_spaced_start(&e);
	t0 = cm_mono_ms();
	/* Waited for past the lease (and a sweep), so that without the
	 * restart's own finalisation the task ends lease_expired: the code,
	 * not the time, tells the two apart. */
	cr_assert(sf_wait_task(&e, space, task, "failed",
	    CM_LEASE_TTL_MS + CM_SUP_SWEEP_MS + SF_WAIT_MS));
	cr_log_info("the lost task ended %lld ms after the restart",
	    (long long)(cm_mono_ms() - t0));
	sf_task_get(&e, space, task, &t);
	cr_assert_str_eq(t.error_code, "outcome_unknown");
	sf_task_free(&t);
	sf_event_seq(&e, space, task, "failed", &n);
	cr_assert_eq(n, 1);

	cr_assert_neq(sf_wait_actor(&e, space, pids[0], SF_WAIT_MS), 0);
	cr_assert_eq(
	    sf_submit(&e, space, "next", "noop", NULL, 0, next), CM_OK);
	cr_assert(sf_wait_task(&e, space, next, "completed", SF_WAIT_MS));
	cr_assert_eq(sf_fake_count(&e, "start", "task_id", task), 1);
	sf_stop(&e);
}

/* Slow by nature: a lease lasts CM_LEASE_TTL_MS and the supervisor sweeps
 * every 5 s, so this waits about 20 s. */
Test(supervisor, unrenewed_lease_expires, .fini = tk_cleanup)
{
	static struct sf_env e;
	char space[CM_ID_MAX + 1], task[CM_ID_MAX + 1], next[CM_ID_MAX + 1];
	struct sf_task t;
	pid_t actor;
	int n;

	sf_start(&e, "lease", 1);
	sf_create_ok(&e, 0, space);
	cr_assert_neq(actor = sf_wait_actor(&e, space, 0, SF_WAIT_MS), 0);
	long_task_running(&e, space, task);

	/* Frozen: it can neither renew its lease nor die. */
	cr_assert_eq(kill(actor, SIGSTOP), 0);
	cr_assert(sf_wait_task(
	    &e, space, task, "failed", CM_LEASE_TTL_MS + 5000 + SF_WAIT_MS));
	sf_task_get(&e, space, task, &t);
	cr_assert_str_eq(t.error_code, "lease_expired");
	sf_task_free(&t);
	sf_event_seq(&e, space, task, "failed", &n);
	cr_assert_eq(n, 1);

	/* Thawed, it learns the task is gone and serves the next one. */
	cr_assert_eq(kill(actor, SIGCONT), 0);
	cr_assert_eq(
	    sf_submit(&e, space, "next", "noop", NULL, 0, next), CM_OK);
	cr_assert(sf_wait_task(&e, space, next, "completed", SF_WAIT_MS));
	cr_assert_eq(sf_actor_pid(&e, space), actor);
	sf_task_get(&e, space, task, &t);
	cr_assert_str_eq(t.status, "failed");
	cr_assert_str_eq(t.error_code, "lease_expired");
	sf_task_free(&t);
	cr_assert_eq(sf_fake_count(&e, "start", "task_id", task), 1);
	sf_stop(&e);
}

struct exit_wait {
	pid_t pid;
	int status;
	bool exited;
};

static bool
has_exited(void *arg)
{
	struct exit_wait *w = arg;

	w->exited = waitpid(w->pid, &w->status, WNOHANG) == w->pid;
	return w->exited;
}

Test(supervisor, second_spaced_on_same_data_dir_refuses, .fini = tk_cleanup)
{
	static struct sf_env e;
	char bin[300], data[200], pidtext[64], *out, *pidfile;
	char space[CM_ID_MAX + 1], task[CM_ID_MAX + 1];
	struct exit_wait w = {0, 0, false};
	int fd;

	sf_start(&e, "twice", 1);
	snprintf(bin, sizeof(bin), "%s/spaced", SPACED_BIN_DIR);
	snprintf(data, sizeof(data), "--data-dir=%s", e.dir);
	w.pid = fork();
	cr_assert_geq(w.pid, 0);
	if (w.pid == 0) {
		fd = open(e.out, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(127);
		execl(bin, bin, data, "--config=/dev/null", "--log-format=text",
		    "--allow-fake-driver=true", (char *)NULL);
		_exit(127);
	}
	/* Bounded: a second spaced that does not exit fails the test. */
	if (!tk_wait_until(has_exited, &w, SF_WAIT_MS)) {
		kill(w.pid, SIGKILL);
		waitpid(w.pid, NULL, 0);
	}
	cr_assert(w.exited, "the second spaced did not exit");
	cr_assert(WIFEXITED(w.status));
	cr_assert_eq(WEXITSTATUS(w.status), 100);
	out = tk_read_file(e.out, NULL);
	snprintf(pidtext, sizeof(pidtext), "another spaced (pid %ld)",
	    (long)e.p.pid);
	cr_assert_not_null(strstr(out, pidtext), "no clear message in %s", out);
	free(out);

	/* The first one is untouched: its lock, its store, its actors. */
	snprintf(data, sizeof(data), "%s/spaced.pid", e.p.run_dir);
	pidfile = tk_read_file(data, NULL);
	cr_assert_not_null(pidfile);
	cr_assert_eq(strtol(pidfile, NULL, 10), (long)e.p.pid);
	free(pidfile);
	sf_create_ok(&e, 0, space);
	cr_assert_eq(sf_submit(&e, space, "r", "noop", NULL, 0, task), CM_OK);
	cr_assert(sf_wait_task(&e, space, task, "completed", SF_WAIT_MS));
	sf_stop(&e);
}
