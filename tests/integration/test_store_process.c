/*
 * The real spaced-store binary over nng: concurrent creates from separate
 * REQ sockets, publish-after-commit, op_id memory across a restart, and
 * durability across kill -9.
 */
#include <criterion/criterion.h>
#include <nng/nng.h>
#include <nng/protocol/pubsub0/sub.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids.h"
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
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SPACE_CREATE;
	q.workspace_id = r->w->workspace_id;
	q.browser_instance_id = r->w->instance_id[r->instance];
	q.owner_type = "operator";
	q.owner_id = r->w->operator_id;
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
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SPACE_CREATE;
	q.workspace_id = w.workspace_id;
	q.browser_instance_id = w.instance_id[0];
	q.owner_type = "operator";
	q.owner_id = w.operator_id;
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	snprintf(space_id, sizeof(space_id), "%s", r.spaces[0].space_id);
	pr_rep_free(&r);

	for (int i = 0; i < 50; i++) {
		memset(&q, 0, sizeof(q));
		q.op = PR_OP_TASK_SUBMIT;
		q.workspace_id = w.workspace_id;
		q.space_id = space_id;
		snprintf(rid, sizeof(rid), "r%d", i);
		q.request_id = rid;
		q.capability = "noop";
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
			        &arena, err, sizeof(err)),
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
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SPACE_CREATE;
	q.op_id = op_id;
	q.workspace_id = w.workspace_id;
	q.browser_instance_id = w.instance_id[0];
	q.owner_type = "operator";
	q.owner_id = w.operator_id;
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	snprintf(space_id, sizeof(space_id), "%s", r.spaces[0].space_id);
	pr_rep_free(&r);

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_TASK_SUBMIT;
	q.workspace_id = w.workspace_id;
	q.space_id = space_id;
	q.request_id = "durable";
	q.capability = "noop";
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	snprintf(task_id, sizeof(task_id), "%s", r.tasks[0].task_id);
	pr_rep_free(&r);

	tk_proc_stop(&p, SIGKILL);
	cr_assert_eq(tk_store_start(&p, dir, NULL), 0);

	/* The same create again: the first reply, not a second Space and
	 * not browser_instance_in_use. */
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SPACE_CREATE;
	q.op_id = op_id;
	q.workspace_id = w.workspace_id;
	q.browser_instance_id = w.instance_id[0];
	q.owner_type = "operator";
	q.owner_id = w.operator_id;
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	cr_assert_str_eq(r.spaces[0].space_id, space_id);
	pr_rep_free(&r);
	cr_assert_eq(count_spaces(s, &w, w.instance_id[0]), 1);

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_TASK_GET;
	q.workspace_id = w.workspace_id;
	q.space_id = space_id;
	q.task_id = task_id;
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	cr_assert_str_eq(r.tasks[0].status, "queued");
	pr_rep_free(&r);

	nng_close(s);
	tk_proc_stop(&p, SIGTERM);
	tk_rmrf(dir);
}
