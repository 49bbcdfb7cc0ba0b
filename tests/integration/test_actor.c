/*
 * The per-Space actors, end to end with the fake runtime: tasks one at a
 * time per Space and in parallel across Spaces, one runtime call per
 * request_id, cancel, failures, redaction and bounds, close.  The real
 * spaced runs on a temporary directory; outcomes are read from the store,
 * from the fake runtime's log and from the database file itself.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redact.h"
#include "space_fixture.h"

#define SLEEP_LONG "{\"ms\": 60000}"
#define TIMEOUT_LONG_MS 120000

Test(actor, one_task_at_a_time_per_space, .fini = tk_cleanup)
{
	static struct sf_env e;
	char space[CM_ID_MAX + 1], t1[CM_ID_MAX + 1], t2[CM_ID_MAX + 1];
	json_t *lines, *end1, *start2;

	sf_start(&e, "one", 1);
	sf_create_ok(&e, 0, space);
	cr_assert_eq(sf_submit(&e, space, "r1", "sleep", SLEEP_LONG,
	                 TIMEOUT_LONG_MS, t1),
	    CM_OK);
	cr_assert(sf_wait_fake(&e, "start", "request_id", "r1", SF_WAIT_MS),
	    "the first task never reached the runtime");

	/* While it runs, the Space takes no second task. */
	cr_assert_eq(sf_submit(&e, space, "r2", "noop", NULL, 0, NULL),
	    CM_E_TASK_IN_PROGRESS);
	cr_assert_eq(sf_fake_count(&e, "start", "request_id", "r2"), 0);

	cr_assert_eq(sf_cancel(&e, space, t1, NULL, NULL), CM_OK);
	cr_assert(sf_wait_task(&e, space, t1, "cancelled", SF_WAIT_MS));
	cr_assert_eq(sf_submit(&e, space, "r2", "noop", NULL, 0, t2), CM_OK);
	cr_assert(sf_wait_task(&e, space, t2, "completed", SF_WAIT_MS));

	/* In the runtime too: the second call began after the first ended. */
	lines = sf_fake_lines(&e);
	end1 = sf_fake_find(lines, "end", "task_id", t1, 0);
	start2 = sf_fake_find(lines, "start", "task_id", t2, 0);
	cr_assert(end1 != NULL && start2 != NULL);
	cr_assert_geq(sf_t_ns(start2), sf_t_ns(end1));
	cr_assert_eq(sf_fake_count(&e, "start", "request_id", "r1"), 1);
	json_decref(lines);
	sf_stop(&e);
}

Test(actor, spaces_on_two_instances_run_at_once, .fini = tk_cleanup)
{
	static struct sf_env e;
	char a[CM_ID_MAX + 1], b[CM_ID_MAX + 1];
	char ta[CM_ID_MAX + 1], tb[CM_ID_MAX + 1];
	json_t *lines, *sa, *ea, *sb, *eb;

	sf_start(&e, "par", 2);
	sf_create_ok(&e, 0, a);
	sf_create_ok(&e, 1, b);
	/* Both actors up and serving before the measured pair. */
	cr_assert_eq(sf_submit(&e, a, "warm-a", "noop", NULL, 0, ta), CM_OK);
	cr_assert_eq(sf_submit(&e, b, "warm-b", "noop", NULL, 0, tb), CM_OK);
	cr_assert(sf_wait_task(&e, a, ta, "completed", SF_WAIT_MS));
	cr_assert(sf_wait_task(&e, b, tb, "completed", SF_WAIT_MS));

	cr_assert_eq(
	    sf_submit(&e, a, "pa", "sleep", "{\"ms\": 300}", 0, ta), CM_OK);
	cr_assert_eq(
	    sf_submit(&e, b, "pb", "sleep", "{\"ms\": 300}", 0, tb), CM_OK);
	cr_assert(sf_wait_task(&e, a, ta, "completed", SF_WAIT_MS));
	cr_assert(sf_wait_task(&e, b, tb, "completed", SF_WAIT_MS));

	lines = sf_fake_lines(&e);
	sa = sf_fake_find(lines, "start", "request_id", "pa", 0);
	ea = sf_fake_find(lines, "end", "request_id", "pa", 0);
	sb = sf_fake_find(lines, "start", "request_id", "pb", 0);
	eb = sf_fake_find(lines, "end", "request_id", "pb", 0);
	cr_assert(sa && ea && sb && eb, "fake log lacks a start or an end");
	cr_assert_str_eq(sf_str(sa, "space_id"), a);
	cr_assert_str_eq(sf_str(sb, "space_id"), b);
	/* The two intervals overlap: each began before the other ended. */
	cr_assert_lt(sf_t_ns(sa), sf_t_ns(eb), "a started after b ended");
	cr_assert_lt(sf_t_ns(sb), sf_t_ns(ea), "b started after a ended");
	json_decref(lines);
	sf_stop(&e);
}

Test(actor, one_request_id_one_runtime_call, .fini = tk_cleanup)
{
	static struct sf_env e;
	char space[CM_ID_MAX + 1], t1[CM_ID_MAX + 1], t1b[CM_ID_MAX + 1];
	char t1c[CM_ID_MAX + 1], t2[CM_ID_MAX + 1];

	sf_start(&e, "idem", 1);
	sf_create_ok(&e, 0, space);
	cr_assert_eq(
	    sf_submit(&e, space, "once", "sleep", "{\"ms\": 50}", 0, t1),
	    CM_OK);
	/* A repeat while it runs, and one after it ended: the same task. */
	cr_assert_eq(
	    sf_submit(&e, space, "once", "sleep", "{\"ms\": 50}", 0, t1b),
	    CM_OK);
	cr_assert_str_eq(t1b, t1);
	cr_assert(sf_wait_task(&e, space, t1, "completed", SF_WAIT_MS));
	cr_assert_eq(
	    sf_submit(&e, space, "once", "sleep", "{\"ms\": 50}", 0, t1c),
	    CM_OK);
	cr_assert_str_eq(t1c, t1);
	/* Other content under the same key is refused. */
	cr_assert_eq(
	    sf_submit(&e, space, "once", "sleep", "{\"ms\": 51}", 0, NULL),
	    CM_E_IDEMPOTENCY_REUSED);

	/* A later task has run, so a second call for "once" would show. */
	cr_assert_eq(sf_submit(&e, space, "after", "noop", NULL, 0, t2), CM_OK);
	cr_assert(sf_wait_task(&e, space, t2, "completed", SF_WAIT_MS));
	cr_assert_eq(sf_fake_count(&e, "start", "request_id", "once"), 1);
	cr_assert_eq(sf_fake_count(&e, "end", "request_id", "once"), 1);
	sf_stop(&e);
}

struct cancel_watch {
	struct sf_env *e;
	const char *space, *task;
	bool cleanup_seen; /* when the status first read cancelled */
};

/* Reads the log at the first sight of cancelled: the runtime's cleanup
 * line must already be there. */
static bool
cancelled_after_cleanup(void *arg)
{
	struct cancel_watch *w = arg;
	struct sf_task t;
	bool done;
	json_t *lines, *end;

	sf_task_get(w->e, w->space, w->task, &t);
	done = strcmp(t.status, "cancelled") == 0;
	sf_task_free(&t);
	if (!done)
		return false;
	lines = sf_fake_lines(w->e);
	end = sf_fake_find(lines, "end", "task_id", w->task, 0);
	w->cleanup_seen = end != NULL &&
	                  strcmp(sf_str(end, "outcome"), "cancelled") == 0 &&
	                  json_is_true(json_object_get(end, "cleanup"));
	json_decref(lines);
	return true;
}

Test(actor, cancel_running_task_waits_for_cleanup, .fini = tk_cleanup)
{
	static struct sf_env e;
	char space[CM_ID_MAX + 1], task[CM_ID_MAX + 1], status[33];
	struct cancel_watch w;
	int64_t req_seq, done_seq;
	bool changed;
	int n;

	sf_start(&e, "cancel", 1);
	sf_create_ok(&e, 0, space);
	cr_assert_eq(sf_submit(&e, space, "long", "sleep", SLEEP_LONG,
	                 TIMEOUT_LONG_MS, task),
	    CM_OK);
	cr_assert(sf_wait_fake(&e, "start", "task_id", task, SF_WAIT_MS));

	/* The request is on record when the cancel returns. */
	cr_assert_eq(sf_cancel(&e, space, task, &changed, NULL), CM_OK);
	cr_assert(changed);
	req_seq = sf_event_seq(&e, space, task, "cancel_requested", &n);
	cr_assert_eq(n, 1, "cancel_requested is not in the log at once");
	/* A second request while it still winds down writes nothing. */
	cr_assert_eq(sf_cancel(&e, space, task, &changed, NULL), CM_OK);
	cr_assert_not(changed);

	w = (struct cancel_watch){&e, space, task, false};
	cr_assert(tk_wait_until(cancelled_after_cleanup, &w, SF_WAIT_MS),
	    "the task never became cancelled");
	cr_assert(w.cleanup_seen,
	    "cancelled was reported before the runtime cleaned up");
	done_seq = sf_event_seq(&e, space, task, "cancelled", &n);
	cr_assert_eq(n, 1);
	cr_assert_gt(done_seq, req_seq);

	/* Cancel of a finished task: its state, and no event. */
	cr_assert_eq(sf_cancel(&e, space, task, &changed, status), CM_OK);
	cr_assert_not(changed);
	cr_assert_str_eq(status, "cancelled");
	sf_event_seq(&e, space, task, "cancel_requested", &n);
	cr_assert_eq(n, 1, "a repeated cancel wrote an event");
	sf_event_seq(&e, space, task, "cancelled", &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(sf_fake_count(&e, "start", "task_id", task), 1);
	sf_stop(&e);
}

Test(actor, runtime_failure_is_a_failed_task, .fini = tk_cleanup)
{
	static struct sf_env e;
	char space[CM_ID_MAX + 1], task[CM_ID_MAX + 1], t2[CM_ID_MAX + 1];
	char status[33];
	struct sf_task t;
	struct pr_rep r;
	int64_t started, failed;
	int n;

	sf_start(&e, "fail", 1);
	sf_create_ok(&e, 0, space);
	cr_assert_eq(sf_submit(&e, space, "f", "fail",
	                 "{\"code\": \"runtime_error\", \"message\": \"boom\"}",
	                 0, task),
	    CM_OK);
	cr_assert(sf_wait_task(&e, space, task, "failed", SF_WAIT_MS));
	sf_task_get(&e, space, task, &t);
	cr_assert_str_eq(t.error_code, "runtime_error");
	cr_assert_str_eq(t.error_message, "boom");
	cr_assert_null(t.result);
	sf_task_free(&t);

	started = sf_event_seq(&e, space, task, "started", &n);
	cr_assert_eq(n, 1);
	failed = sf_event_seq(&e, space, task, "failed", &n);
	cr_assert_eq(n, 1);
	cr_assert_gt(failed, started);
	sf_event_seq(&e, space, task, "completed", &n);
	cr_assert_eq(n, 0, "a failure was reported as completed");
	sf_events(&e, space, &r);
	cr_assert_not_null(strstr(
	    r.events[failed - 1].payload, "\"error_code\":\"runtime_error\""));
	pr_rep_free(&r);
	cr_assert(sf_wait_fake(&e, "end", "task_id", task, SF_WAIT_MS));

	/* A runtime error leaves the Space usable. */
	sf_space_get(&e, space, status, NULL);
	cr_assert_str_eq(status, "idle");
	cr_assert_eq(sf_submit(&e, space, "next", "noop", NULL, 0, t2), CM_OK);
	cr_assert(sf_wait_task(&e, space, t2, "completed", SF_WAIT_MS));
	sf_stop(&e);
}

static const char *const canaries[] = {
    "fake-cookie-canary-7f3a",
    "fake-bearer-canary-91c2",
    "fake-token-canary-55e1",
    "fake-pass-canary-0b9d",
    "canary-endpoint-1234",
    "canary-profile-5678",
    "canary-config-9abc",
};
#define N_CANARIES (sizeof(canaries) / sizeof(canaries[0]))
#define N_RUNTIME_CANARIES 4 /* the first four exist only in the runtime */

static void
assert_no_canary(const void *buf, size_t len, size_t n, const char *where)
{
	for (size_t i = 0; buf != NULL && i < n; i++)
		cr_assert_null(
		    memmem(buf, len, canaries[i], strlen(canaries[i])),
		    "%s holds %s", where, canaries[i]);
}

/* One value of the database: no canary, but in the instance's own
 * secret columns. */
static void
db_cell_clean(
    void *arg, const char *table, const char *col, const void *v, size_t n)
{
	char where[200];

	(*(int *)arg)++;
	if (strcmp(table, "browser_instances") == 0 &&
	    (strcmp(col, "endpoint") == 0 || strcmp(col, "config") == 0 ||
	        strcmp(col, "profile") == 0))
		return;
	snprintf(where, sizeof(where), "%s.%s", table, col);
	assert_no_canary(v, n, N_CANARIES, where);
}

/* Every column of every table of the database of the spaced on dir. */
static void
assert_db_clean(const char *dir)
{
	int checked = 0;

	cr_assert_gt(tk_db_each(dir, db_cell_clean, &checked), 0);
	cr_assert_gt(checked, 0);
}

/* The raw bytes of a file (absent is clean): runtime canaries only. */
static void
assert_file_clean(const char *path, size_t n)
{
	size_t len = 0;
	char *bytes = tk_read_file(path, &len);

	assert_no_canary(bytes, len, n, path);
	free(bytes);
}

Test(actor, leak_and_big_results_are_redacted_and_bounded, .fini = tk_cleanup)
{
	static struct sf_env e;
	char space[CM_ID_MAX + 1], inst[CM_ID_MAX + 1];
	char leak[CM_ID_MAX + 1], big[CM_ID_MAX + 1], cfg[400], path[300];
	struct pr_req q;
	struct pr_rep r;
	struct sf_task t;

	sf_start(&e, "leak", 0);
	snprintf(cfg, sizeof(cfg),
	    "{\"log_path\": \"%s\", \"canary_key\": \"canary-config-9abc\"}",
	    e.fake_log);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_INSTANCE_REGISTER;
	q.name = "canary";
	q.driver = "fake";
	q.bundle_id = e.w.bundle_id;
	q.endpoint = "ws://127.0.0.1:9/devtools/browser/canary-endpoint-1234";
	q.profile = "/srv/canary-profile-5678";
	q.profile_mode = "persistent";
	q.config = cfg;
	cr_assert_eq(tk_call(e.s, &q, &r), CM_OK);
	snprintf(inst, sizeof(inst), "%s", r.instances[0].browser_instance_id);
	pr_rep_free(&r);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_BINDING_CREATE;
	q.workspace_id = e.w.workspace_id;
	q.browser_instance_id = inst;
	cr_assert_eq(tk_call(e.s, &q, &r), CM_OK);
	pr_rep_free(&r);
	cr_assert_eq(sf_create(&e, inst, space), CM_OK);

	cr_assert_eq(
	    sf_submit(&e, space, "leak", "leak", NULL, 0, leak), CM_OK);
	cr_assert(sf_wait_task(&e, space, leak, "completed", SF_WAIT_MS));
	cr_assert_eq(sf_submit(&e, space, "big", "big", NULL, 0, big), CM_OK);
	cr_assert(sf_wait_task(&e, space, big, "completed", SF_WAIT_MS));

	sf_task_get(&e, space, leak, &t);
	cr_assert_not_null(t.result);
	/* Redacted, not dropped: the harmless parts are still there. */
	cr_assert_not_null(strstr(t.result, "example.test"), "%s", t.result);
	cr_assert_not_null(strstr(t.result, CM_REDACTED), "%s", t.result);
	assert_no_canary(t.result, strlen(t.result), N_CANARIES, "leak result");
	sf_task_free(&t);
	sf_task_get(&e, space, big, &t);
	cr_assert_str_eq(
	    t.result, "{\"truncated\":true,\"reason\":\"result_too_large\"}");
	sf_task_free(&t);

	sf_events(&e, space, &r);
	cr_assert_geq(r.n_events, 7); /* opened, 2 x (queued started done) */
	for (size_t i = 0; i < r.n_events; i++) {
		const char *pl = r.events[i].payload ? r.events[i].payload : "";

		cr_assert_leq(strlen(pl), CM_RESULT_MAX);
		assert_no_canary(pl, strlen(pl), N_CANARIES, "event payload");
	}
	pr_rep_free(&r);

	/* Stopped, so the database is complete on disk. */
	nng_close(e.s);
	tk_proc_stop(&e.p, SIGTERM);
	assert_db_clean(e.dir);
	snprintf(path, sizeof(path), "%s/spaced.db", e.dir);
	assert_file_clean(path, N_RUNTIME_CANARIES);
	snprintf(path, sizeof(path), "%s/spaced.db-wal", e.dir);
	assert_file_clean(path, N_RUNTIME_CANARIES);
	assert_file_clean(e.out, N_CANARIES);
	assert_file_clean(e.fake_log, N_CANARIES);
	tk_rmrf(e.dir);
}

Test(actor, close_releases_the_instance, .fini = tk_cleanup)
{
	static struct sf_env e;
	char idle[CM_ID_MAX + 1], busy[CM_ID_MAX + 1], again[CM_ID_MAX + 1];
	char task[CM_ID_MAX + 1], status[33];
	const char *inst;
	int64_t cancelled, closed;
	json_t *lines, *end;
	pid_t actor;
	int n;

	sf_start(&e, "close", 1);
	inst = e.w.instance_id[0];

	/* Idle: closed once the actor has gone; then the instance is free. */
	sf_create_ok(&e, 0, idle);
	cr_assert_neq(sf_wait_actor(&e, idle, 0, SF_WAIT_MS), 0);
	cr_assert_eq(sf_close(&e, idle), CM_OK);
	cr_assert_eq(sf_submit(&e, idle, "late", "noop", NULL, 0, NULL),
	    CM_E_SPACE_CLOSED);
	cr_assert(sf_wait_space(&e, idle, "closed", SF_WAIT_MS));
	cr_assert(sf_wait_actors(&e, idle, 0, SF_WAIT_MS));
	cr_assert_eq(sf_create(&e, inst, busy), CM_OK);

	/* Running, with its actor frozen: closing, not closed, reserved. */
	cr_assert_eq(sf_submit(&e, busy, "long", "sleep", SLEEP_LONG,
	                 TIMEOUT_LONG_MS, task),
	    CM_OK);
	cr_assert(sf_wait_fake(&e, "start", "task_id", task, SF_WAIT_MS));
	actor = sf_actor_pid(&e, busy);
	cr_assert_gt(actor, 0);
	cr_assert_eq(kill(actor, SIGSTOP), 0);
	cr_assert_eq(sf_close(&e, busy), CM_OK);
	cr_assert_eq(sf_submit(&e, busy, "late", "noop", NULL, 0, NULL),
	    CM_E_SPACE_CLOSED);
	sf_space_get(&e, busy, status, NULL);
	cr_assert_str_neq(status, "closed");
	cr_assert_eq(sf_create(&e, inst, NULL), CM_E_INSTANCE_IN_USE);
	sf_event_seq(&e, busy, task, "cancelled", &n);
	cr_assert_eq(n, 0, "cancelled before the runtime was told");

	/* Thawed, it cancels, tears down, and only then the Space closes. */
	cr_assert_eq(kill(actor, SIGCONT), 0);
	cr_assert(sf_wait_space(&e, busy, "closed", SF_WAIT_MS));
	cr_assert(sf_wait_task(&e, busy, task, "cancelled", SF_WAIT_MS));
	lines = sf_fake_lines(&e);
	end = sf_fake_find(lines, "end", "task_id", task, 0);
	cr_assert(end != NULL && json_is_true(json_object_get(end, "cleanup")),
	    "the runtime was not cleaned up");
	cr_assert_null(sf_fake_find(lines, "end", "task_id", task, 1));
	json_decref(lines);
	cancelled = sf_event_seq(&e, busy, task, "cancelled", &n);
	cr_assert_eq(n, 1);
	closed = sf_event_seq(&e, busy, NULL, "space_closed", &n);
	cr_assert_eq(n, 1);
	cr_assert_gt(closed, cancelled);
	cr_assert(sf_wait_actors(&e, busy, 0, SF_WAIT_MS));
	cr_assert_eq(sf_create(&e, inst, again), CM_OK);
	cr_assert_neq(sf_wait_actor(&e, again, 0, SF_WAIT_MS), 0);
	sf_stop(&e);
}

/* A call that outlives its task's timeout is aborted and cleaned up, and
 * the task fails with task_timeout; the Space runs the next task. */
Test(actor, task_timeout_aborts_the_call, .fini = tk_cleanup)
{
	static struct sf_env e;
	char space[CM_ID_MAX + 1], task[CM_ID_MAX + 1], t2[CM_ID_MAX + 1];
	struct sf_task t;
	json_t *lines, *end;
	int n;

	sf_start(&e, "tmo", 1);
	sf_create_ok(&e, 0, space);
	cr_assert_eq(sf_submit(&e, space, "slow", "sleep", "{\"ms\": 600000}",
	                 1000, task),
	    CM_OK);
	cr_assert(sf_wait_task(&e, space, task, "failed", SF_WAIT_MS));
	sf_task_get(&e, space, task, &t);
	cr_assert_str_eq(t.error_code, "task_timeout");
	cr_assert_null(t.result);
	sf_task_free(&t);
	sf_event_seq(&e, space, task, "failed", &n);
	cr_assert_eq(n, 1);

	/* The runtime was told to stop, and cleaned up, before the failure
	 * was recorded. */
	lines = sf_fake_lines(&e);
	end = sf_fake_find(lines, "end", "task_id", task, 0);
	cr_assert_not_null(end, "the call was never ended in the runtime");
	cr_assert(json_is_true(json_object_get(end, "cleanup")));
	json_decref(lines);

	cr_assert_eq(sf_submit(&e, space, "next", "noop", NULL, 0, t2), CM_OK);
	cr_assert(sf_wait_task(&e, space, t2, "completed", SF_WAIT_MS));
	sf_stop(&e);
}
