/*
 * An actor and a store that is slow, stopped or failing.  The store and the
 * actor run alone, started by the test, so that the test can stop the store
 * (SIGSTOP), signal the actor and read its exit status.  Where a request
 * must fail or be counted, the actor (and the api) talk to the store
 * through a proxy of the test's own: a REP socket in a run_dir of its own
 * that forwards every request to the real store, can answer one with an
 * error instead, and counts them by operation.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "limits.h"
#include "space_fixture.h"

#define SLEEP_LONG "{\"ms\": 60000}"
#define TIMEOUT_LONG_MS 120000
/* An actor told to stop exits within this, whatever the store does
 * (CM_ACTOR_STOP_MS, with room for a loaded machine). */
#define STOP_BOUND_MS 3000
#define NOOP_TASKS 10

/* --- the proxy ---------------------------------------------------------- */

/* Requests the proxy serves at once: an idle claim is held by the store
 * (CM_CLAIM_WAIT_MS) while other requests pass. */
#define PX_WORKERS 4

struct px {
	nng_socket rep; /* the actor's (and api's) store */
	nng_socket up;  /* the real store */
	pthread_t thr[PX_WORKERS];
	nng_ctx ctx[PX_WORKERS]; /* each worker's, opened by px_start */
	pthread_mutex_t mu;
	int count[PR_OP__COUNT];
	int fail_next[PR_OP__COUNT]; /* answer with store_unavailable */
	int claims_with_task;
	/* Claims that found nothing right after a finish: the round trip
	 * the finish reply makes needless. */
	int empty_claims_after_finish;
	enum pr_op last_actor_op;
	int64_t last_finish_ms;
	int claims_since_finish;
	/* Claims received (count[] counts answers), and their number when
	 * the first mark_closed came. */
	int claims_sent, claims_sent_at_mark_closed;
};

struct px_wait {
	struct px *p;
	const int *n;
	int want;
};

static bool
px_reached(void *arg)
{
	struct px_wait *w = arg;
	bool done;

	pthread_mutex_lock(&w->p->mu);
	done = *w->n >= w->want;
	pthread_mutex_unlock(&w->p->mu);
	return done;
}

/* Waits until the counter *n of p reaches want. */
static bool
px_wait_count(struct px *p, const int *n, int want, int timeout_ms)
{
	struct px_wait w = {p, n, want};

	return tk_wait_until(px_reached, &w, timeout_ms);
}

static bool
actor_op(enum pr_op op)
{
	return op == PR_OP_ACTOR_CLAIM || op == PR_OP_ACTOR_FINISH ||
	       op == PR_OP_ACTOR_HEARTBEAT;
}

/* Notes one request and its reply; call locked. */
static void
px_note(struct px *p, const struct pr_req *q, const struct pr_rep *r)
{
	p->count[q->op]++;
	if (q->op == PR_OP_ACTOR_CLAIM && r->n_tasks == 1)
		p->claims_with_task++;
	/* An idle actor's timer asks a second after the finish at the
	 * earliest; the claim that follows every finish comes at once. */
	if (q->op == PR_OP_ACTOR_CLAIM && r->n_tasks == 0 &&
	    p->last_actor_op == PR_OP_ACTOR_FINISH &&
	    cm_mono_ms() - p->last_finish_ms < CM_ACTOR_IDLE_POLL_MS / 2)
		p->empty_claims_after_finish++;
	if (actor_op(q->op))
		p->last_actor_op = q->op;
	if (q->op == PR_OP_ACTOR_CLAIM)
		p->claims_since_finish++;
	if (q->op == PR_OP_ACTOR_FINISH) {
		p->last_finish_ms = cm_mono_ms();
		p->claims_since_finish = 0;
	}
}

/* The answer to in, or NULL for none (the client's attempt times out). */
static nng_msg *
px_answer(struct px *p, nng_msg *in)
{
	struct pr_req q;
	struct pr_rep r;
	char err[128], *buf = NULL;
	size_t len = 0;
	nng_msg *out = NULL;
	bool fail;

	if (pr_req_decode(
	        nng_msg_body(in), nng_msg_len(in), &q, err, sizeof(err)) != 0)
		return NULL;
	pthread_mutex_lock(&p->mu);
	if (q.op == PR_OP_ACTOR_CLAIM)
		p->claims_sent++;
	if (q.op == PR_OP_SPACE_MARK_CLOSED &&
	    p->count[PR_OP_SPACE_MARK_CLOSED] == 0)
		p->claims_sent_at_mark_closed = p->claims_sent;
	fail = p->fail_next[q.op] > 0;
	if (fail)
		p->fail_next[q.op]--;
	pthread_mutex_unlock(&p->mu);
	if (fail) {
		memset(&r, 0, sizeof(r));
		pr_rep_error(
		    &r, CM_E_STORE_UNAVAILABLE, "injected by the test");
	} else {
		cm_rpc_call(p->up, &q, &r, 5000);
	}
	pthread_mutex_lock(&p->mu);
	px_note(p, &q, &r);
	pthread_mutex_unlock(&p->mu);
	if (pr_rep_encode(&r, &buf, &len) != 0 || nng_msg_alloc(&out, 0) != 0 ||
	    nng_msg_append(out, buf, len) != 0) {
		if (out != NULL)
			nng_msg_free(out);
		out = NULL;
	}
	free(buf);
	pr_rep_free(&r);
	pr_req_free(&q);
	return out;
}

/* One of PX_WORKERS: a context of the REP socket, one request at a
 * time. */
struct px_worker {
	struct px *p;
	nng_ctx ctx;
};

static void *
px_main(void *arg)
{
	struct px_worker *w = arg;
	struct px *p = w->p;
	nng_ctx ctx = w->ctx;
	nng_aio *aio;
	nng_msg *in, *out;

	cr_assert_eq(nng_aio_alloc(&aio, NULL, NULL), 0);
	for (;;) {
		nng_ctx_recv(ctx, aio);
		nng_aio_wait(aio);
		if (nng_aio_result(aio) != 0)
			break;
		in = nng_aio_get_msg(aio);
		out = px_answer(p, in);
		nng_msg_free(in);
		if (out == NULL)
			continue;
		nng_aio_set_msg(aio, out);
		nng_ctx_send(ctx, aio);
		nng_aio_wait(aio);
		if (nng_aio_result(aio) != 0)
			nng_msg_free(nng_aio_get_msg(aio));
	}
	nng_aio_free(aio);
	return NULL;
}

/* Listens at <dir>/px/store.ipc, forwarding to the store of sp. */
static void
px_start(struct px *p, const struct sf_env *e, char *run_dir, size_t len)
{
	char url[CM_PATH_MAX], events[CM_PATH_MAX];

	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->mu, NULL);
	snprintf(run_dir, len, "%s/px", e->dir);
	cr_assert_eq(mkdir(run_dir, 0700), 0);
	/* The api also subscribes to the store's feed, in its run_dir. */
	snprintf(events, sizeof(events), "%s/store-events.ipc", run_dir);
	cr_assert_eq(symlink(e->p.events_url + strlen("ipc://"), events), 0);
	cr_assert_eq(cm_ipc_url(url, sizeof(url), run_dir, "store.ipc"), 0);
	cr_assert_eq(nng_rep0_open(&p->rep), 0);
	cr_assert_eq(
	    nng_socket_set_size(p->rep, NNG_OPT_RECVMAXSZ, CM_MSG_MAX), 0);
	cr_assert_eq(nng_listen(p->rep, url, NULL, 0), 0);
	cr_assert_eq(cm_rpc_open(&p->up, e->p.store_url), 0);
	for (int i = 0; i < PX_WORKERS; i++) {
		static struct px_worker w[PX_WORKERS];

		cr_assert_eq(nng_ctx_open(&p->ctx[i], p->rep), 0);
		w[i].p = p;
		w[i].ctx = p->ctx[i];
		cr_assert_eq(
		    pthread_create(&p->thr[i], NULL, px_main, &w[i]), 0);
	}
}

/*
 * The contexts are closed first, and the socket only once every worker
 * has left: a worker still forwarding a request then sends on a closed
 * context of a live socket, which fails, where a send racing the
 * socket's close crashed inside nng 1.5.2.
 */
static void
px_stop(struct px *p)
{
	for (int i = 0; i < PX_WORKERS; i++)
		nng_ctx_close(p->ctx[i]);
	for (int i = 0; i < PX_WORKERS; i++)
		pthread_join(p->thr[i], NULL);
	nng_close(p->rep);
	nng_close(p->up);
}

static void
px_fail_next(struct px *p, enum pr_op op, int n)
{
	pthread_mutex_lock(&p->mu);
	p->fail_next[op] = n;
	pthread_mutex_unlock(&p->mu);
}

/* --- the world -------------------------------------------------------- */

struct as_env {
	struct sf_env sf; /* p is the store */
	struct tk_proc actor;
	char space[CM_ID_MAX + 1];
	int wake[2]; /* the actor reads [0], as under the supervisor */
	char run_dir[160];
	struct px px;
	bool proxied;
};

/* Starts the store, provisions one fake instance and creates a Space. */
static void
as_start(struct as_env *e, const char *tag, bool proxied)
{
	struct sf_env *sf = &e->sf;
	char cfg[300];

	memset(e, 0, sizeof(*e));
	tk_tmpdir(sf->dir, sizeof(sf->dir), tag);
	snprintf(sf->fake_log, sizeof(sf->fake_log), "%s/fake.log", sf->dir);
	snprintf(sf->out, sizeof(sf->out), "%s/out.log", sf->dir);
	cr_assert_eq(tk_store_start(&sf->p, sf->dir, NULL), 0);
	cr_assert_eq(cm_rpc_open(&sf->s, sf->p.store_url), 0);
	snprintf(cfg, sizeof(cfg), "{\"log_path\": \"%s\"}", sf->fake_log);
	cr_assert_eq(tk_provision_with(sf->s, &sf->w, 1, cfg), 0);
	sf_create_ok(sf, 0, e->space);
	e->proxied = proxied;
	if (proxied)
		px_start(&e->px, sf, e->run_dir, sizeof(e->run_dir));
	/* The write end stays with the test; the read end is inherited. */
	cr_assert_eq(pipe(e->wake), 0);
	cr_assert_eq(fcntl(e->wake[1], F_SETFD, FD_CLOEXEC), 0);
	cr_assert_eq(fcntl(e->wake[0], F_SETFL, O_NONBLOCK), 0);
}

static void
as_actor_start(struct as_env *e)
{
	char space[CM_ID_MAX + 16], wake[32], run[200];
	const char *flags[] = {space, wake, "--allow-fake-driver=true",
	    e->proxied ? run : NULL, NULL};

	snprintf(space, sizeof(space), "--space=%s", e->space);
	snprintf(wake, sizeof(wake), "--wake-fd=%d", e->wake[0]);
	snprintf(run, sizeof(run), "--run-dir=%s", e->run_dir);
	cr_assert_eq(tk_bin_start(&e->actor, "spaced-actor", e->sf.dir, flags,
	                 e->sf.out),
	    0, "the actor did not start (see %s)", e->sf.out);
}

/* What the supervisor does on a queued task or a cancel: one byte. */
static void
as_wake(struct as_env *e)
{
	cr_assert_eq(write(e->wake[1], "w", 1), 1);
}

static void
as_stop(struct as_env *e)
{
	kill(e->sf.p.pid, SIGCONT);
	tk_proc_stop(&e->actor, SIGKILL);
	if (e->proxied)
		px_stop(&e->px);
	close(e->wake[0]);
	close(e->wake[1]);
	sf_stop(&e->sf);
}

/* Submits a long task and waits until the runtime runs it. */
static void
as_run_long(struct as_env *e, char *task)
{
	cr_assert_eq(sf_submit(&e->sf, e->space, "long", "sleep", SLEEP_LONG,
	                 TIMEOUT_LONG_MS, task),
	    CM_OK);
	as_wake(e);
	cr_assert(sf_wait_fake(&e->sf, "start", "task_id", task, SF_WAIT_MS),
	    "the task never reached the runtime");
}

/* --- tests ------------------------------------------------------------ */

/*
 * (a) A heartbeat to a stopped store does not stall the runtime: the task
 * still ends on time, and its outcome is recorded once, when the store is
 * back.
 */
Test(
    actor_store, a_stopped_store_does_not_stall_the_runtime, .fini = tk_cleanup)
{
	static struct as_env e;
	char task[CM_ID_MAX + 1];
	json_t *lines, *start, *end;
	int64_t slept_ms;

	as_start(&e, "astall", false);
	as_actor_start(&e);
	cr_assert_eq(sf_submit(&e.sf, e.space, "r1", "sleep", "{\"ms\": 1500}",
	                 TIMEOUT_LONG_MS, task),
	    CM_OK);
	as_wake(&e);
	cr_assert(sf_wait_fake(&e.sf, "start", "task_id", task, SF_WAIT_MS));

	/* A wake-up while it runs makes the actor ask the store at once. */
	cr_assert_eq(kill(e.sf.p.pid, SIGSTOP), 0);
	as_wake(&e);
	cr_assert(sf_wait_fake(&e.sf, "end", "task_id", task, 1500 + 2000),
	    "the runtime was not stepped while the store was stopped");
	lines = sf_fake_lines(&e.sf);
	start = sf_fake_find(lines, "start", "task_id", task, 0);
	end = sf_fake_find(lines, "end", "task_id", task, 0);
	slept_ms = (sf_t_ns(end) - sf_t_ns(start)) / 1000000;
	cr_assert_str_eq(sf_str(end, "outcome"), "completed");
	json_decref(lines);
	cr_log_info(
	    "sleep of 1500 ms ended after %lld ms", (long long)slept_ms);

	cr_assert_eq(kill(e.sf.p.pid, SIGCONT), 0);
	cr_assert(sf_wait_task(&e.sf, e.space, task, "completed", SF_WAIT_MS),
	    "the outcome was not recorded once the store was back");
	cr_assert_eq(sf_fake_count(&e.sf, "start", "task_id", task), 1,
	    "the task ran twice");
	as_stop(&e);
}

/*
 * (b) Stopping, the actor asks the store to record its cancel.  When the
 * store answers that request with an error, the actor asks again, and
 * the task ends cancelled: never left running.
 */
Test(actor_store, a_failed_cancel_request_is_retried, .fini = tk_cleanup)
{
	static struct as_env e;
	char task[CM_ID_MAX + 1];
	struct sf_task t;
	int status, n;

	as_start(&e, "acancel", true);
	as_actor_start(&e);
	as_run_long(&e, task);

	px_fail_next(&e.px, PR_OP_TASK_CANCEL, 1);
	cr_assert_eq(kill(e.actor.pid, SIGTERM), 0);
	cr_assert_eq(tk_proc_wait(&e.actor, SF_WAIT_MS, &status), 0,
	    "the actor did not exit");
	cr_assert(px_wait_count(&e.px, &e.px.count[PR_OP_TASK_CANCEL], 2, 0),
	    "the cancel was asked once");
	sf_task_get(&e.sf, e.space, task, &t);
	cr_assert_str_eq(t.status, "cancelled");
	sf_task_free(&t);
	sf_event_seq(&e.sf, e.space, task, "cancel_requested", &n);
	cr_assert_eq(n, 1);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "status %d: every outcome was recorded", status);
	as_stop(&e);
}

/*
 * (c) SIGTERM while the store is stopped: the actor cancels its task in
 * the runtime and exits within the bound, non-zero, since the outcome
 * could not be recorded (the supervisor then finalises the task).
 */
Test(actor_store, sigterm_with_the_store_stopped_exits_within_the_bound,
    .fini = tk_cleanup)
{
	static struct as_env e;
	char task[CM_ID_MAX + 1];
	int status;
	json_t *lines, *end;

	as_start(&e, "astop", false);
	as_actor_start(&e);
	as_run_long(&e, task);

	cr_assert_eq(kill(e.sf.p.pid, SIGSTOP), 0);
	cr_assert_eq(kill(e.actor.pid, SIGTERM), 0);
	cr_assert_eq(tk_proc_wait(&e.actor, STOP_BOUND_MS, &status), 0,
	    "the actor did not exit within %d ms of SIGTERM", STOP_BOUND_MS);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) != 0,
	    "status %d: an unrecorded outcome must not exit 0", status);
	lines = sf_fake_lines(&e.sf);
	end = sf_fake_find(lines, "end", "task_id", task, 0);
	cr_assert_not_null(end, "the runtime's call was not cancelled");
	cr_assert_str_eq(sf_str(end, "outcome"), "cancelled");
	json_decref(lines);
	as_stop(&e);
}

/* --- (d) round trips of a no-op task ---------------------------------- */

/*
 * Every store request a no-op task makes, from the api's submit to the
 * actor's last word on it, counted at the proxy: at most 3 (task.submit,
 * actor.claim, actor.finish).  auth.resolve is left out: the api caches
 * a token's resolution, so it is not a cost of each task.
 */
Test(actor_store, a_noop_task_takes_at_most_three_round_trips,
    .fini = tk_cleanup)
{
	static struct as_env e;
	struct tk_proc api;
	char token[CM_TOKEN_LEN], listen[64], run[200], path[300];
	char rid[32], body[128], task[CM_ID_MAX + 1];
	const char *flags[] = {listen, run, NULL};
	int port, total, per_op[PR_OP__COUNT];
	json_t *res;

	as_start(&e, "around", true);
	cr_assert_eq(tk_token_issue(e.sf.s, e.sf.w.operator_id, token), 0);
	port = tk_free_port();
	snprintf(listen, sizeof(listen), "--http-listen=127.0.0.1:%d", port);
	snprintf(run, sizeof(run), "--run-dir=%s", e.run_dir);
	cr_assert_eq(
	    tk_bin_start(&api, "spaced-api", e.sf.dir, flags, e.sf.out), 0,
	    "the api did not start (see %s)", e.sf.out);
	api.http_port = port;
	snprintf(
	    api.http_base, sizeof(api.http_base), "http://127.0.0.1:%d", port);
	as_actor_start(&e);
	/* The actor's load and first claim are not a task's. */
	cr_assert(px_wait_count(
	    &e.px, &e.px.count[PR_OP_ACTOR_CLAIM], 1, SF_WAIT_MS));
	pthread_mutex_lock(&e.px.mu);
	memset(e.px.count, 0, sizeof(e.px.count));
	e.px.claims_with_task = e.px.empty_claims_after_finish = 0;
	pthread_mutex_unlock(&e.px.mu);

	snprintf(path, sizeof(path),
	    "/api/v1/workspaces/%s/browser-spaces/%s/tasks",
	    e.sf.w.workspace_id, e.space);
	for (int i = 0; i < NOOP_TASKS; i++) {
		char *out = NULL;

		snprintf(rid, sizeof(rid), "noop-%d", i);
		snprintf(body, sizeof(body),
		    "{\"request_id\": \"%s\", \"capability\": \"noop\"}", rid);
		cr_assert_eq(
		    tk_http(&api, "POST", path, token, body, NULL, &out), 202,
		    "submit: %s", out ? out : "no answer");
		res = json_loads(out, 0, NULL);
		free(out);
		snprintf(task, sizeof(task), "%s",
		    json_string_value(json_object_get(
		        json_object_get(res, "data"), "task_id")));
		json_decref(res);
		as_wake(&e);
		/* Waited for at the proxy, so that the store serves nothing
		 * but the task path (its log counts requests and commits). */
		cr_assert(px_wait_count(
		    &e.px, &e.px.count[PR_OP_ACTOR_FINISH], i + 1, SF_WAIT_MS));
	}
	cr_assert(sf_wait_task(&e.sf, e.space, task, "completed", 0));
	/* The next claim after the last finish: at once when every finish
	 * is followed by one, otherwise the idle timer's. */
	cr_assert(px_wait_count(
	    &e.px, &e.px.count[PR_OP_ACTOR_FINISH], NOOP_TASKS, SF_WAIT_MS));
	cr_assert(
	    px_wait_count(&e.px, &e.px.claims_since_finish, 1, SF_WAIT_MS));

	pthread_mutex_lock(&e.px.mu);
	memcpy(per_op, e.px.count, sizeof(per_op));
	total = per_op[PR_OP_SPACE_GET] + per_op[PR_OP_TASK_SUBMIT] +
	        e.px.claims_with_task + e.px.empty_claims_after_finish +
	        per_op[PR_OP_ACTOR_FINISH];
	pthread_mutex_unlock(&e.px.mu);
	cr_log_info("%d no-op tasks: space.get %d, task.submit %d, claims "
	            "with a task %d, empty claims after a finish %d, finish %d",
	    NOOP_TASKS, per_op[PR_OP_SPACE_GET], per_op[PR_OP_TASK_SUBMIT],
	    e.px.claims_with_task, e.px.empty_claims_after_finish,
	    per_op[PR_OP_ACTOR_FINISH]);
	cr_assert_eq(per_op[PR_OP_TASK_SUBMIT], NOOP_TASKS);
	cr_assert_eq(per_op[PR_OP_ACTOR_FINISH], NOOP_TASKS);
	cr_assert_leq(total, 3 * NOOP_TASKS, "%d round trips for %d tasks",
	    total, NOOP_TASKS);
	tk_proc_stop(&api, SIGTERM);
	as_stop(&e);
}

/*
 * A close takes no claim of its own: the idle actor's claim, which the
 * store holds (CM_CLAIM_WAIT_MS), is answered with it when it commits, and
 * the close notice (the byte the supervisor writes when the store
 * publishes close_requested) asks nothing more.
 */
Test(actor_store, a_close_takes_no_claim_of_its_own, .fini = tk_cleanup)
{
	static struct as_env e;
	const char close = CM_WAKE_CLOSE;
	int claims;

	as_start(&e, "closeq", true);
	as_actor_start(&e);
	/* Its first claim, held: the next is asked once this one is
	 * answered. */
	cr_assert(px_wait_count(&e.px, &e.px.claims_sent, 1, SF_WAIT_MS));
	cr_assert_eq(sf_close(&e.sf, e.space), CM_OK);
	cr_assert_eq(write(e.wake[1], &close, 1), 1);
	pthread_mutex_lock(&e.px.mu);
	claims = e.px.claims_sent;
	pthread_mutex_unlock(&e.px.mu);
	cr_assert(sf_wait_space(&e.sf, e.space, "closed", SF_WAIT_MS));
	pthread_mutex_lock(&e.px.mu);
	cr_assert_eq(e.px.count[PR_OP_SPACE_MARK_CLOSED], 1);
	cr_assert_eq(e.px.claims_sent_at_mark_closed, claims,
	    "%d claims before the close, %d by its mark_closed", claims,
	    e.px.claims_sent_at_mark_closed);
	pthread_mutex_unlock(&e.px.mu);
	as_stop(&e);
}
