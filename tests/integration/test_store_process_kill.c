/*
 * The real spaced-store binary, killed with SIGKILL again and again while
 * clients run task cycles against it: every acknowledged write survives,
 * and none is applied twice.
 */
#include <criterion/criterion.h>
#include <nng/nng.h>
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
#include "testkit.h"

/* ---- kill -9 under load ------------------------------------------------ */

#define KL_CLIENTS 8
#define KL_CYCLES 40

struct kl_client {
	const char *url;
	const struct tk_world *w;
	char space_id[CM_ID_MAX + 1];
	int id;
	int cycles; /* completed; read by the test thread */
	int retries;
	bool failed;
	pthread_mutex_t *mtx;
};

/*
 * One write until it is answered, re-sent with the same op_id whenever the
 * store does not answer (it is being killed and restarted), as every
 * client of the store does.  Bounded: 30 s.
 */
static bool
kl_call(struct kl_client *c, nng_socket s, struct pr_req *q, struct pr_rep *r)
{
	char op_id[CM_UUID_LEN];
	int64_t deadline = cm_mono_ms() + 30000;

	cm_uuid7(op_id);
	q->op_id = op_id;
	while (cm_mono_ms() < deadline) {
		enum cm_err e = cm_rpc_call(s, q, r, 1000);

		if (e == CM_OK && r->err == CM_OK)
			return true;
		if (e != CM_E_STORE_UNAVAILABLE) {
			cm_warnx("kill test: %s: %s", pr_op_name(q->op),
			    cm_err_code(r->err));
			pr_rep_free(r);
			return false;
		}
		pr_rep_free(r);
		__atomic_add_fetch(&c->retries, 1, __ATOMIC_RELAXED);
	}
	return false;
}

static void *
kl_run(void *arg)
{
	struct kl_client *c = arg;
	char rid[32], holder[32], task_id[CM_ID_MAX + 1];
	struct pr_req q;
	struct pr_rep r;
	nng_socket s;

	if (cm_rpc_open(&s, c->url) != 0) {
		c->failed = true;
		return NULL;
	}
	snprintf(holder, sizeof(holder), "kl-%d", c->id);
	for (int i = 0; i < KL_CYCLES; i++) {
		snprintf(rid, sizeof(rid), "kl-%d", i);
		tk_req_submit(&q, c->w->workspace_id, c->space_id, rid);
		if (!kl_call(c, s, &q, &r))
			break;
		snprintf(task_id, sizeof(task_id), "%s", r.tasks[0].task_id);
		pr_rep_free(&r);

		tk_req_claim(&q, c->space_id, holder);
		if (!kl_call(c, s, &q, &r))
			break;
		/* A re-sent claim gets its first reply: this very task. */
		if (r.n_tasks != 1 ||
		    strcmp(r.tasks[0].task_id, task_id) != 0) {
			pr_rep_free(&r);
			break;
		}
		pr_rep_free(&r);

		tk_req_finish(&q, task_id, holder);
		if (!kl_call(c, s, &q, &r))
			break;
		pr_rep_free(&r);
		__atomic_store_n(&c->cycles, i + 1, __ATOMIC_RELEASE);
	}
	if (__atomic_load_n(&c->cycles, __ATOMIC_ACQUIRE) != KL_CYCLES)
		c->failed = true;
	nng_close(s);
	return NULL;
}

static int
kl_done(struct kl_client *cl)
{
	int n = 0;

	for (int i = 0; i < KL_CLIENTS; i++)
		n += __atomic_load_n(&cl[i].cycles, __ATOMIC_ACQUIRE);
	return n;
}

static int kl_kills;

/* The next kill is due: one at each quarter of the work. */
static bool
kl_kill_due(void *arg)
{
	return kl_done(arg) >= KL_CLIENTS * KL_CYCLES * (kl_kills + 1) / 4;
}

/*
 * kill -9, three times, in the middle of concurrent submit -> claim ->
 * finish cycles, with groups committed and waiting for their WAL sync and
 * requests in flight: once every client
 * has re-sent what went unanswered, each Space holds exactly its cycles'
 * tasks, all completed, and its event log has exactly their events with
 * no gap.  Nothing acknowledged was lost; nothing was applied twice.
 */
Test(store_process, kill_under_load_loses_nothing_and_repeats_nothing,
    .fini = tk_cleanup)
{
	static struct kl_client cl[KL_CLIENTS];
	pthread_t th[KL_CLIENTS];
	struct tk_proc p;
	struct tk_world w;
	struct pr_req q;
	struct pr_rep r;
	char dir[128];
	nng_socket s;
	int retries = 0;

	tk_tmpdir(dir, sizeof(dir), "killload");
	cr_assert_eq(tk_store_start(&p, dir, NULL), 0);
	cr_assert_eq(cm_rpc_open(&s, p.store_url), 0);
	cr_assert_eq(tk_provision(s, &w, KL_CLIENTS), 0);
	for (int i = 0; i < KL_CLIENTS; i++) {
		tk_req_create(&q, &w, (size_t)i);
		cr_assert_eq(tk_call(s, &q, &r), CM_OK);
		snprintf(cl[i].space_id, sizeof(cl[i].space_id), "%s",
		    r.spaces[0].space_id);
		pr_rep_free(&r);
		cl[i].url = p.store_url;
		cl[i].w = &w;
		cl[i].id = i;
	}
	for (int i = 0; i < KL_CLIENTS; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, kl_run, &cl[i]), 0);

	for (kl_kills = 0; kl_kills < 3; kl_kills++) {
		cr_assert(tk_wait_until(kl_kill_due, cl, 30000),
		    "the clients made no progress");
		tk_proc_stop(&p, SIGKILL);
		cr_assert_eq(tk_store_start(&p, dir, NULL), 0);
	}

	for (int i = 0; i < KL_CLIENTS; i++) {
		pthread_join(th[i], NULL);
		cr_assert(!cl[i].failed, "client %d stopped after %d cycles", i,
		    cl[i].cycles);
		retries += cl[i].retries;
	}
	cr_log_info("kill under load: %d re-sends", retries);

	for (int i = 0; i < KL_CLIENTS; i++) {
		int64_t after = 0, seq = 0;

		memset(&q, 0, sizeof(q));
		q.op = PR_OP_TASK_LIST;
		q.workspace_id = w.workspace_id;
		q.space_id = cl[i].space_id;
		q.limit = 100;
		cr_assert_eq(tk_call(s, &q, &r), CM_OK);
		cr_assert_eq(r.n_tasks, KL_CYCLES, "Space %d holds %zu tasks",
		    i, r.n_tasks);
		for (size_t t = 0; t < r.n_tasks; t++)
			cr_assert_str_eq(r.tasks[t].status, "completed");
		pr_rep_free(&r);

		/* space_opened, then queued, started, completed per task. */
		for (;;) {
			memset(&q, 0, sizeof(q));
			q.op = PR_OP_EVENT_LIST;
			q.workspace_id = w.workspace_id;
			q.space_id = cl[i].space_id;
			q.after_sequence = after;
			q.limit = 100;
			cr_assert_eq(tk_call(s, &q, &r), CM_OK);
			for (size_t e = 0; e < r.n_events; e++)
				cr_assert_eq(r.events[e].sequence, ++seq,
				    "Space %d: event %lld after %lld", i,
				    (long long)r.events[e].sequence,
				    (long long)(seq - 1));
			after = seq;
			if (r.n_events == 0) {
				pr_rep_free(&r);
				break;
			}
			pr_rep_free(&r);
		}
		cr_assert_eq(seq, 1 + 3 * KL_CYCLES, "Space %d: %lld events", i,
		    (long long)seq);
	}
	nng_close(s);
	tk_proc_stop(&p, SIGTERM);
	tk_rmrf(dir);
}
