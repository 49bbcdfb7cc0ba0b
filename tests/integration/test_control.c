/*
 * The supervisor's control socket answers sup.status with its children.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "testkit.h"

struct status_wait {
	nng_socket ctl;
	const char *space_id;
	pid_t actor;
};

/* True once the status lists a ready store and a ready actor for the
 * Space. */
static bool
status_shows_actor(void *arg)
{
	struct status_wait *w = arg;
	struct pr_req q;
	struct pr_rep r;
	bool store = false, actor = false;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SUP_STATUS;
	if (cm_rpc_call(w->ctl, &q, &r, 2000) != CM_OK || r.err != CM_OK) {
		pr_rep_free(&r);
		return false;
	}
	for (size_t i = 0; i < r.n_children; i++) {
		const struct pr_child *c = &r.children[i];

		if (strcmp(c->kind, "store") == 0 &&
		    strcmp(c->state, "ready") == 0 && c->pid > 0)
			store = true;
		if (strcmp(c->kind, "actor") == 0 && c->space_id != NULL &&
		    strcmp(c->space_id, w->space_id) == 0 &&
		    strcmp(c->state, "ready") == 0 && c->pid > 0) {
			actor = true;
			w->actor = (pid_t)c->pid;
		}
	}
	pr_rep_free(&r);
	return store && actor;
}

Test(control, status_lists_children, .fini = tk_cleanup)
{
	struct tk_proc p;
	struct tk_world w;
	struct status_wait sw;
	char dir[128], url[256], space[CM_ID_MAX + 1];
	nng_socket s;
	struct pr_req q;
	struct pr_rep r;
	pid_t pids[4];

	tk_tmpdir(dir, sizeof(dir), "ctl");
	cr_assert_eq(tk_spaced_start(&p, dir, NULL), 0);
	cr_assert_eq(cm_rpc_open(&s, p.store_url), 0);
	cr_assert_eq(tk_provision(s, &w, 1), 0);

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SPACE_CREATE;
	q.workspace_id = w.workspace_id;
	q.browser_instance_id = w.instance_id[0];
	q.owner_type = "operator";
	q.owner_id = w.operator_id;
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	snprintf(space, sizeof(space), "%s", r.spaces[0].space_id);
	pr_rep_free(&r);

	cr_assert_eq(
	    cm_ipc_url(url, sizeof(url), p.run_dir, "supervisor.ipc"), 0);
	cr_assert_eq(cm_rpc_open(&sw.ctl, url), 0);
	sw.space_id = space;
	sw.actor = 0;
	cr_assert(tk_wait_until(status_shows_actor, &sw, 10000),
	    "status never showed a ready store and actor");
	/* The pid it reports is the actor /proc shows for that Space. */
	cr_assert_eq(tk_actor_pids(p.pid, space, pids, 4), 1);
	cr_assert_eq(pids[0], sw.actor);

	/* Anything but sup.status is refused. */
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_PING;
	cr_assert_eq(cm_rpc_call(sw.ctl, &q, &r, 2000), CM_OK);
	cr_assert_eq(r.err, CM_E_INVALID_REQUEST);
	pr_rep_free(&r);

	nng_close(sw.ctl);
	nng_close(s);
	tk_proc_stop(&p, SIGTERM);
	tk_rmrf(dir);
}
