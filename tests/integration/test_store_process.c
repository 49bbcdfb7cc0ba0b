/*
 * The real spaced-store binary over nng: concurrent creates from separate
 * REQ sockets, publish-after-commit, op_id memory across a restart, and
 * durability across kill -9, the client's contexts across timeouts and
 * sockets, and a burst of more writes than one group commit holds.  A
 * kill -9 in the middle of concurrent writes is test_store_process_kill.c.
 */
#include <criterion/criterion.h>
#include <nng/nng.h>
#include <nng/protocol/pubsub0/sub.h>
#include <nng/protocol/reqrep0/req.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "ids.h"
#include "log.h"
#include "rpc.h"
#include "status.h"
#include "testkit.h"

struct racer {
	const char *url;
	const struct tk_world *w;
	size_t instance;
	pthread_barrier_t *start;
	enum cm_err result;
};

static void *
race_create(void *arg)
{
	struct racer *r = arg;
	nng_socket s;
	struct pr_req q;
	struct pr_rep rep;

	cr_assert_eq(cm_rpc_open(&s, r->url), 0);
	tk_req_create(&q, r->w, r->instance);
	pthread_barrier_wait(r->start);
	r->result = tk_call(s, &q, &rep);
	pr_rep_free(&rep);
	nng_close(s);
	return NULL;
}

static int64_t
count_spaces(nng_socket s, const struct tk_world *w, const char *instance)
{
	struct pr_req q;
	struct pr_rep r;
	int64_t n = 0;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SPACE_LIST;
	q.workspace_id = w->workspace_id;
	q.limit = 100;
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	for (size_t i = 0; i < r.n_spaces; i++)
		if (strcmp(r.spaces[i].browser_instance_id, instance) == 0)
			n++;
	pr_rep_free(&r);
	return n;
}

Test(store_process, concurrent_creates_one_winner, .fini = tk_cleanup)
{
	struct tk_proc p;
	struct tk_world w;
	char dir[128];
	nng_socket s;
	enum { ROUNDS = 16 };

	tk_tmpdir(dir, sizeof(dir), "race");
	cr_assert_eq(tk_store_start(&p, dir, NULL), 0);
	cr_assert_eq(cm_rpc_open(&s, p.store_url), 0);
	cr_assert_eq(tk_provision(s, &w, ROUNDS), 0);

	for (size_t i = 0; i < ROUNDS; i++) {
		pthread_barrier_t start;
		struct racer a = {p.store_url, &w, i, &start, 0};
		struct racer b = {p.store_url, &w, i, &start, 0};
		pthread_t ta, tb;

		pthread_barrier_init(&start, NULL, 2);
		pthread_create(&ta, NULL, race_create, &a);
		pthread_create(&tb, NULL, race_create, &b);
		pthread_join(ta, NULL);
		pthread_join(tb, NULL);
		pthread_barrier_destroy(&start);

		/* Exactly one wins; the loser leaves no row behind. */
		cr_assert(
		    (a.result == CM_OK && b.result == CM_E_INSTANCE_IN_USE) ||
		        (b.result == CM_OK && a.result == CM_E_INSTANCE_IN_USE),
		    "round %zu: %s / %s", i, cm_err_code(a.result),
		    cm_err_code(b.result));
		cr_assert_eq(count_spaces(s, &w, w.instance_id[i]), 1);
	}
	nng_close(s);
	tk_proc_stop(&p, SIGTERM);
	tk_rmrf(dir);
}

/* Every event that arrives on PUB can already be read over REQ. */
Test(store_process, event_published_only_after_commit, .fini = tk_cleanup)
{
	struct tk_proc p;
	struct tk_world w;
	char dir[128], rid[32];
	nng_socket s, sub;
	struct pr_req q;
	struct pr_rep r;
	char space_id[CM_ID_MAX + 1];
	int got = 0, fd;

	tk_tmpdir(dir, sizeof(dir), "pub");
	cr_assert_eq(tk_store_start(&p, dir, NULL), 0);
	cr_assert_eq(cm_rpc_open(&s, p.store_url), 0);
	cr_assert_eq(tk_provision(s, &w, 1), 0);

	cr_assert_eq(nng_sub0_open(&sub), 0);
	cr_assert_eq(nng_socket_set(sub, NNG_OPT_SUB_SUBSCRIBE, "ev/", 3), 0);
	cr_assert_eq(nng_socket_set_int(sub, NNG_OPT_RECVBUF, 1024), 0);
	cr_assert_eq(nng_dial(sub, p.events_url, NULL, 0), 0);
	cr_assert_eq(nng_socket_get_int(sub, NNG_OPT_RECVFD, &fd), 0);

	/* A subscription takes effect asynchronously: retry a ping-like
	 * create until its event is seen. */
	tk_req_create(&q, &w, 0);
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	snprintf(space_id, sizeof(space_id), "%s", r.spaces[0].space_id);
	pr_rep_free(&r);

	for (int i = 0; i < 50; i++) {
		snprintf(rid, sizeof(rid), "r%d", i);
		tk_req_submit(&q, w.workspace_id, space_id, rid);
		cr_assert_eq(tk_call(s, &q, &r), CM_OK);
		{
			struct pr_req c;
			struct pr_rep cr;
			memset(&c, 0, sizeof(c));
			c.op = PR_OP_TASK_CANCEL;
			c.workspace_id = w.workspace_id;
			c.space_id = space_id;
			c.task_id = r.tasks[0].task_id;
			cr_assert_eq(tk_call(s, &c, &cr), CM_OK);
			pr_rep_free(&cr);
		}
		pr_rep_free(&r);

		/* Drain whatever arrived; check each against the log. */
		for (;;) {
			nng_msg *m;
			struct pr_event ev;
			struct pr_arena arena = {0};
			char err[128];
			bool found = false;

			if (nng_recvmsg(sub, &m, NNG_FLAG_NONBLOCK) != 0)
				break;
			cr_assert_eq(
			    pr_pub_decode(nng_msg_body(m), nng_msg_len(m), &ev,
			        NULL, &arena, err, sizeof(err)),
			    0, "%s", err);
			memset(&q, 0, sizeof(q));
			q.op = PR_OP_EVENT_LIST;
			q.workspace_id = ev.workspace_id;
			q.space_id = ev.space_id;
			q.after_sequence = ev.sequence - 1;
			q.limit = 1;
			cr_assert_eq(tk_call(s, &q, &r), CM_OK);
			found = r.n_events == 1 &&
			        r.events[0].sequence == ev.sequence &&
			        strcmp(r.events[0].kind, ev.kind) == 0;
			cr_assert(found,
			    "event %lld (%s) not readable when published",
			    (long long)ev.sequence, ev.kind);
			pr_rep_free(&r);
			pr_arena_free(&arena);
			nng_msg_free(m);
			got++;
		}
	}
	cr_assert_gt(got, 0, "no event arrived on the PUB socket");
	nng_close(sub);
	nng_close(s);
	tk_proc_stop(&p, SIGTERM);
	tk_rmrf(dir);
}

/* A re-sent write (same op_id) is answered, not applied, even by a store
 * that restarted in between; and kill -9 loses no acknowledged write. */
static enum cm_err
get_task(nng_socket s, const struct tk_world *w, const char *space_id,
    const char *task_id, int timeout_ms, struct pr_rep *r)
{
	struct pr_req q;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_TASK_GET;
	q.workspace_id = w->workspace_id;
	q.space_id = space_id;
	q.task_id = task_id;
	return cm_rpc_call(s, &q, r, timeout_ms);
}

/* A store in a new dir (tag) with one world and one Space of it (its id
 * into space_id); returns a socket to it. */
static nng_socket
one_space(struct tk_proc *p, struct tk_world *w, char *dir, size_t len,
    const char *tag, char *space_id)
{
	struct pr_req q;
	struct pr_rep r;
	nng_socket s;

	tk_tmpdir(dir, len, tag);
	cr_assert_eq(tk_store_start(p, dir, NULL), 0);
	cr_assert_eq(cm_rpc_open(&s, p->store_url), 0);
	cr_assert_eq(tk_provision(s, w, 1), 0);
	tk_req_create(&q, w, 0);
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	snprintf(space_id, CM_ID_MAX + 1, "%s", r.spaces[0].space_id);
	pr_rep_free(&r);
	return s;
}

/*
 * cm_rpc_call keeps a context per thread and socket.  A call that timed out
 * must not hand its late reply to the next call, and a new socket in the
 * same thread must get a context of its own.
 */
Test(store_process, client_contexts_survive_timeouts_and_sockets,
    .fini = tk_cleanup)
{
	struct tk_proc p;
	struct tk_world w;
	char dir[128], space_id[CM_ID_MAX + 1], first[CM_ID_MAX + 1];
	char second[CM_ID_MAX + 1];
	nng_socket s;
	struct pr_req q;
	struct pr_rep r;

	s = one_space(&p, &w, dir, sizeof(dir), "ctx", space_id);
	tk_req_submit(&q, w.workspace_id, space_id, "first");
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	snprintf(first, sizeof(first), "%s", r.tasks[0].task_id);
	pr_rep_free(&r);
	tk_req_claim(&q, space_id, "ctx-test");
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	pr_rep_free(&r);
	tk_req_finish(&q, first, "ctx-test");
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	pr_rep_free(&r);
	tk_req_submit(&q, w.workspace_id, space_id, "second");
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	snprintf(second, sizeof(second), "%s", r.tasks[0].task_id);
	pr_rep_free(&r);

	/* A stopped store: the call times out, its request still queued. */
	cr_assert_eq(kill(p.pid, SIGSTOP), 0);
	cr_assert_eq(
	    get_task(s, &w, space_id, first, 300, &r), CM_E_STORE_UNAVAILABLE);
	pr_rep_free(&r);
	cr_assert_eq(kill(p.pid, SIGCONT), 0);
	/* The store now answers both; this call gets its own answer. */
	cr_assert_eq(get_task(s, &w, space_id, second, 0, &r), CM_OK);
	cr_assert_eq(r.err, CM_OK);
	cr_assert_str_eq(r.tasks[0].task_id, second);
	pr_rep_free(&r);
	cr_assert_eq(get_task(s, &w, space_id, first, 0, &r), CM_OK);
	cr_assert_str_eq(r.tasks[0].task_id, first);
	pr_rep_free(&r);

	/* Another socket, from the same thread. */
	nng_close(s);
	cr_assert_eq(cm_rpc_open(&s, p.store_url), 0);
	cr_assert_eq(get_task(s, &w, space_id, second, 0, &r), CM_OK);
	cr_assert_str_eq(r.tasks[0].task_id, second);
	pr_rep_free(&r);

	nng_close(s);
	tk_proc_stop(&p, SIGTERM);
	tk_rmrf(dir);
}

/*
 * An idle claim that asks to wait is held by the store, and the task
 * submitted meanwhile is the answer; one whose time runs out is answered
 * with no task; and the held claim of a Space whose actor was declared
 * lost is never run: the next actor's claim takes the task.
 */
Test(
    store_process, an_idle_claim_is_held_until_a_task_comes, .fini = tk_cleanup)
{
	struct tk_proc p;
	struct tk_world w;
	struct tk_held h;
	char dir[128], space_id[CM_ID_MAX + 1], task[CM_ID_MAX + 1];
	nng_socket s;
	struct pr_req q;
	struct pr_rep r;

	s = one_space(&p, &w, dir, sizeof(dir), "held", space_id);

	/* Held, then given the task submitted after it. */
	cr_assert(
	    tk_held_send(&h, s, space_id, "held-1", CM_CLAIM_WAIT_MAX_MS));
	tk_req_submit(&q, w.workspace_id, space_id, "held-task");
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	snprintf(task, sizeof(task), "%s", r.tasks[0].task_id);
	pr_rep_free(&r);
	cr_assert_eq(
	    tk_held_answer(&h, 5000, &r), 1, "the held claim got no answer");
	cr_assert_eq(r.err, CM_OK);
	cr_assert_eq(r.n_tasks, 1, "the held claim did not get the task");
	cr_assert_str_eq(r.tasks[0].task_id, task);
	cr_assert_str_eq(r.tasks[0].status, "running");
	pr_rep_free(&r);
	tk_req_finish(&q, task, "held-1");
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	pr_rep_free(&r);

	/* Nothing comes: answered with no task once its wait is over. */
	cr_assert(tk_held_send(&h, s, space_id, "held-1", 100));
	cr_assert_eq(
	    tk_held_answer(&h, 5000, &r), 1, "the held claim got no answer");
	cr_assert_eq(r.err, CM_OK);
	cr_assert_eq(r.n_tasks, 0);
	pr_rep_free(&r);

	/* Its actor lost: the claim is dropped, and runs for nobody. */
	cr_assert(
	    tk_held_send(&h, s, space_id, "held-lost", CM_CLAIM_WAIT_MAX_MS));
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SUP_FINALIZE_LOST;
	q.space_id = space_id;
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	pr_rep_free(&r);
	tk_req_submit(&q, w.workspace_id, space_id, "after-loss");
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	snprintf(task, sizeof(task), "%s", r.tasks[0].task_id);
	pr_rep_free(&r);
	tk_req_claim(&q, space_id, "held-next");
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	cr_assert_eq(r.n_tasks, 1, "the lost actor's held claim took the task");
	cr_assert_str_eq(r.tasks[0].task_id, task);
	pr_rep_free(&r);
	cr_assert_eq(tk_held_answer(&h, CM_CLAIM_WAIT_MAX_MS + 500, &r), 0,
	    "a dropped claim was answered");

	nng_close(s);
	tk_proc_stop(&p, SIGTERM);
	tk_rmrf(dir);
}

/*
 * More writes than one group commit holds arrive while the store is
 * stopped.  It runs them as several groups, the rest waiting on its socket,
 * and answers every one: none is left behind when no more requests come.
 * They come over a few sockets, none with more than CM_RPC_OUTSTANDING_MAX
 * outstanding.
 */
#define BURST (3 * CM_GROUP_COMMIT_MAX + 5)
#define BURST_SOCKETS 4
_Static_assert(
    (BURST + BURST_SOCKETS - 1) / BURST_SOCKETS <= CM_RPC_OUTSTANDING_MAX,
    "a burst socket with more requests outstanding than it may have");

Test(store_process, a_burst_larger_than_a_group_is_answered_in_full,
    .fini = tk_cleanup)
{
	static nng_ctx ctx[BURST];
	static nng_aio *aio[BURST];
	static char names[BURST][32];
	static char ids[BURST][CM_ID_MAX + 1];
	nng_socket s[BURST_SOCKETS];
	struct pr_req ping;
	struct pr_rep pong;
	struct tk_proc p;
	char dir[128];

	tk_tmpdir(dir, sizeof(dir), "burst");
	cr_assert_eq(tk_store_start(&p, dir, NULL), 0);
	memset(&ping, 0, sizeof(ping));
	ping.op = PR_OP_PING;
	for (int k = 0; k < BURST_SOCKETS; k++) {
		cr_assert_eq(cm_rpc_open(&s[k], p.store_url), 0);
		/* No re-send may stand in for a request left behind. */
		cr_assert_eq(
		    nng_socket_set_ms(s[k], NNG_OPT_REQ_RESENDTIME, 60000), 0);
		/* Its pipe is up before the store stops. */
		cr_assert_eq(tk_call(s[k], &ping, &pong), CM_OK);
		pr_rep_free(&pong);
	}
	for (int i = 0; i < BURST; i++) {
		cr_assert_eq(nng_ctx_open(&ctx[i], s[i % BURST_SOCKETS]), 0);
		cr_assert_eq(nng_aio_alloc(&aio[i], NULL, NULL), 0);
		nng_aio_set_timeout(aio[i], 10000);
	}
	cr_assert_eq(kill(p.pid, SIGSTOP), 0);
	for (int i = 0; i < BURST; i++) {
		struct pr_req q;
		nng_msg *m;

		snprintf(names[i], sizeof(names[i]), "burst-%d", i);
		memset(&q, 0, sizeof(q));
		q.op = PR_OP_WORKSPACE_CREATE;
		q.name = names[i];
		cr_assert_eq(cm_rpc_request(&q, &m), 0);
		nng_aio_set_msg(aio[i], m);
		nng_ctx_send(ctx[i], aio[i]);
	}
	for (int i = 0; i < BURST; i++) {
		nng_aio_wait(aio[i]);
		cr_assert_eq(nng_aio_result(aio[i]), 0);
	}
	cr_assert_eq(kill(p.pid, SIGCONT), 0);
	for (int i = 0; i < BURST; i++)
		nng_ctx_recv(ctx[i], aio[i]);
	for (int i = 0; i < BURST; i++) {
		struct pr_rep r;
		nng_msg *m;
		char err[128];

		nng_aio_wait(aio[i]);
		cr_assert_eq(nng_aio_result(aio[i]), 0,
		    "write %d of %d was not answered: %s", i, BURST,
		    nng_strerror(nng_aio_result(aio[i])));
		m = nng_aio_get_msg(aio[i]);
		cr_assert_eq(pr_rep_decode(nng_msg_body(m), nng_msg_len(m), &r,
		                 err, sizeof(err)),
		    0, "%s", err);
		nng_msg_free(m);
		cr_assert_eq(
		    r.err, CM_OK, "write %d: %s", i, cm_err_code(r.err));
		cr_assert_eq(r.n_workspaces, 1);
		cr_assert_str_eq(r.workspaces[0].name, names[i]);
		snprintf(
		    ids[i], sizeof(ids[i]), "%s", r.workspaces[0].workspace_id);
		pr_rep_free(&r);
		for (int k = 0; k < i; k++)
			cr_assert_str_neq(ids[k], ids[i]);
	}
	for (int i = 0; i < BURST; i++) {
		nng_aio_free(aio[i]);
		nng_ctx_close(ctx[i]);
	}
	for (int k = 0; k < BURST_SOCKETS; k++)
		nng_close(s[k]);
	tk_proc_stop(&p, SIGTERM);
	tk_rmrf(dir);
}

Test(store_process, op_id_memory_and_durability_across_kill, .fini = tk_cleanup)
{
	struct tk_proc p;
	struct tk_world w;
	char dir[128], op_id[CM_UUID_LEN], space_id[CM_ID_MAX + 1];
	char task_id[CM_ID_MAX + 1];
	nng_socket s;
	struct pr_req q;
	struct pr_rep r;

	tk_tmpdir(dir, sizeof(dir), "kill");
	cr_assert_eq(tk_store_start(&p, dir, NULL), 0);
	cr_assert_eq(cm_rpc_open(&s, p.store_url), 0);
	cr_assert_eq(tk_provision(s, &w, 1), 0);

	cm_uuid7(op_id);
	tk_req_create(&q, &w, 0);
	q.op_id = op_id;
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	snprintf(space_id, sizeof(space_id), "%s", r.spaces[0].space_id);
	pr_rep_free(&r);

	tk_req_submit(&q, w.workspace_id, space_id, "durable");
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	snprintf(task_id, sizeof(task_id), "%s", r.tasks[0].task_id);
	pr_rep_free(&r);

	tk_proc_stop(&p, SIGKILL);
	cr_assert_eq(tk_store_start(&p, dir, NULL), 0);

	/* The same create again: the first reply, not a second Space and
	 * not browser_instance_in_use. */
	tk_req_create(&q, &w, 0);
	q.op_id = op_id;
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	cr_assert_str_eq(r.spaces[0].space_id, space_id);
	pr_rep_free(&r);
	cr_assert_eq(count_spaces(s, &w, w.instance_id[0]), 1);

	cr_assert_eq(get_task(s, &w, space_id, task_id, 0, &r), CM_OK);
	cr_assert_eq(r.err, CM_OK);
	cr_assert_str_eq(r.tasks[0].status, "queued");
	pr_rep_free(&r);

	nng_close(s);
	tk_proc_stop(&p, SIGTERM);
	tk_rmrf(dir);
}

/* The supervisor's notices (store-notices.ipc), read into kinds of tasks:
 * waits up to timeout_ms for an event of kind (and task, unless NULL),
 * failing on any kind the supervisor never acts on.  Returns whether it
 * came; *queued_of counts the queued notices of task queued_task. */
static bool
notice_wait(nng_socket sub, const char *kind, const char *task,
    const char *queued_task, int *queued_of, int timeout_ms)
{
	int64_t t0 = cm_mono_ms();

	while (cm_mono_ms() - t0 < timeout_ms) {
		struct pr_arena arena = {0};
		struct pr_event ev;
		char err[128];
		nng_msg *m;
		bool hit;

		if (nng_recvmsg(sub, &m, NNG_FLAG_NONBLOCK) != 0) {
			struct pollfd pfd = {.events = POLLIN};

			cr_assert_eq(
			    nng_socket_get_int(sub, NNG_OPT_RECVFD, &pfd.fd),
			    0);
			(void)poll(&pfd, 1, 50);
			continue;
		}
		cr_assert_eq(pr_pub_decode(nng_msg_body(m), nng_msg_len(m), &ev,
		                 NULL, &arena, err, sizeof(err)),
		    0, "%s", err);
		cr_assert(
		    cm_event_kind_for_supervisor(cm_event_kind_parse(ev.kind)),
		    "a %s notice, which the supervisor never acts on", ev.kind);
		if (queued_task != NULL && ev.task_id != NULL &&
		    strcmp(ev.kind, "queued") == 0 &&
		    strcmp(ev.task_id, queued_task) == 0)
			(*queued_of)++;
		hit = strcmp(ev.kind, kind) == 0 &&
		      (task == NULL || (ev.task_id != NULL &&
		                           strcmp(ev.task_id, task) == 0));
		pr_arena_free(&arena);
		nng_msg_free(m);
		if (hit)
			return true;
	}
	return false;
}

static void
cancel(
    nng_socket s, const struct tk_world *w, const char *space, const char *task)
{
	struct pr_req q;
	struct pr_rep r;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_TASK_CANCEL;
	q.workspace_id = w->workspace_id;
	q.space_id = space;
	q.task_id = task;
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	pr_rep_free(&r);
}

/*
 * The supervisor hears only what it acts on: space_opened, and a queued
 * task only when no claim of its Space is held or expected (a held
 * claim's answer wakes the actor itself; after a finish its actor claims
 * at once); cancel and close requests always; a task's start and end
 * never.
 */
Test(store_process, notices_carry_only_what_the_supervisor_acts_on,
    .fini = tk_cleanup)
{
	char dir[128], url[CM_PATH_MAX], space[CM_ID_MAX + 1];
	char t1[CM_ID_MAX + 1], t2[CM_ID_MAX + 1], t3[CM_ID_MAX + 1];
	struct tk_held held;
	struct tk_proc p;
	struct tk_world w;
	struct pr_req q;
	struct pr_rep r;
	nng_socket s, sub;
	bool opened = false;
	int queued = 0;

	tk_tmpdir(dir, sizeof(dir), "ntc");
	cr_assert_eq(tk_store_start(&p, dir, NULL), 0);
	cr_assert_eq(cm_rpc_open(&s, p.store_url), 0);
	cr_assert_eq(tk_provision(s, &w, 4), 0);
	cr_assert_eq(
	    cm_ipc_url(url, sizeof(url), p.run_dir, "store-notices.ipc"), 0);
	cr_assert_eq(nng_sub0_open(&sub), 0);
	cr_assert_eq(nng_socket_set(sub, NNG_OPT_SUB_SUBSCRIBE, "ev/", 3), 0);
	cr_assert_eq(nng_dial(sub, url, NULL, 0), 0);
	/* The store may take the pipe after the first notice: a Space a try
	 * until one's space_opened comes. */
	for (size_t i = 0; i < 4 && !opened; i++) {
		tk_req_create(&q, &w, i);
		cr_assert_eq(tk_call(s, &q, &r), CM_OK);
		snprintf(space, sizeof(space), "%s", r.spaces[0].space_id);
		pr_rep_free(&r);
		opened =
		    notice_wait(sub, "space_opened", NULL, NULL, NULL, 2000);
	}
	cr_assert(opened, "no space_opened notice came");

	/* No claim held: the queued task is the supervisor's to wake. */
	tk_req_submit(&q, w.workspace_id, space, "n1");
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	snprintf(t1, sizeof(t1), "%s", r.tasks[0].task_id);
	pr_rep_free(&r);
	cr_assert(notice_wait(sub, "queued", t1, NULL, NULL, 5000),
	    "no queued notice for a Space whose claim is not held");
	tk_req_claim(&q, space, "actor-1");
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	cr_assert_eq(r.n_tasks, 1);
	pr_rep_free(&r);
	tk_req_finish(&q, t1, "actor-1");
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	pr_rep_free(&r);

	/* Just after a finish its actor claims at once: no notice. */
	tk_req_submit(&q, w.workspace_id, space, "n2");
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	snprintf(t2, sizeof(t2), "%s", r.tasks[0].task_id);
	pr_rep_free(&r);
	cancel(s, &w, space, t2);
	cr_assert(notice_wait(sub, "cancel_requested", t2, t2, &queued, 5000),
	    "no cancel_requested notice");
	cr_assert_eq(queued, 0,
	    "a queued notice for a Space whose actor had just finished");

	/* A claim held: its answer carries the task; no notice. */
	cr_assert(tk_held_send(&held, s, space, "actor-1", 5000));
	tk_req_submit(&q, w.workspace_id, space, "n3");
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	snprintf(t3, sizeof(t3), "%s", r.tasks[0].task_id);
	pr_rep_free(&r);
	cr_assert_eq(tk_held_answer(&held, 5000, &r), 1);
	cr_assert_eq(r.n_tasks, 1, "the held claim did not get the task");
	cr_assert_str_eq(r.tasks[0].task_id, t3);
	pr_rep_free(&r);
	/* A cancel is the supervisor's again; every notice before it is in. */
	cancel(s, &w, space, t3);
	cr_assert(notice_wait(sub, "cancel_requested", t3, t3, &queued, 5000),
	    "no cancel_requested notice");
	cr_assert_eq(queued, 0,
	    "a queued notice for a Space whose claim the store held");

	nng_close(sub);
	nng_close(s);
	tk_proc_stop(&p, SIGTERM);
	tk_rmrf(dir);
}
