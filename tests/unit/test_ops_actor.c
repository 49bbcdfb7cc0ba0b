/*
 * test_ops_actor.c: what actors and the supervisor ask of the store: load,
 * claim under a lease, heartbeat, finish, and the recovery of tasks whose
 * executor was lost (ended, and never queued again).  The supervisor's
 * lists are test_ops_sup_list.c.
 */
#include "store_fixture.h"

static struct fx fx;
static const char *sp; /* a Space on instance 0 */

static void
setup(void)
{
	fx_setup(&fx, 0);
	fx_provision(&fx, 2);
	sp = fx_space(&fx, 0);
}

static void
teardown(void)
{
	fx_teardown(&fx);
	sp = NULL;
}

TestSuite(actor, .init = setup, .fini = teardown);

static struct pr_rep *
heartbeat(const char *task, const char *holder, enum cm_err want)
{
	struct pr_req q;

	fx_req(&fx, &q, PR_OP_ACTOR_HEARTBEAT);
	q.task_id = task;
	q.lease_holder = holder;
	return FX_CALL(&fx, &q, want);
}

/* sup.finalize_lost as the supervisor of host sends it (NULL: any). */
static struct pr_rep *
finalize_lost_on(const char *space, const char *host)
{
	struct pr_req q;

	fx_req(&fx, &q, PR_OP_SUP_FINALIZE_LOST);
	q.space_id = space;
	q.host = host;
	return FX_CALL(&fx, &q, CM_OK);
}

static int64_t
lease_of(const char *task)
{
	return fx_sql_int(&fx,
	    "SELECT coalesce(lease_expires_at, 0) FROM browser_space_tasks"
	    " WHERE id = ?1",
	    task, (const char *)NULL);
}

/* ---- load -------------------------------------------------------------------
 */

Test(actor, load_returns_the_instance_with_its_secrets)
{
	struct pr_req q;
	struct pr_rep *r;

	fx_req(&fx, &q, PR_OP_ACTOR_LOAD);
	q.space_id = sp;
	r = FX_CALL(&fx, &q, CM_OK);
	cr_assert_eq(r->n_spaces, 1);
	cr_assert_str_eq(r->spaces[0].space_id, sp);
	cr_assert_eq(r->n_instances, 1);
	cr_assert_str_eq(r->instances[0].browser_instance_id, fx.inst[0]);
	cr_assert_str_eq(r->instances[0].driver, "fake");
	cr_assert_str_eq(r->instances[0].profile_mode, "persistent");
	cr_assert_eq(r->n_instance_secrets, 1);
	cr_assert_str_eq(r->instance_secrets[0].endpoint, FX_SECRET_ENDPOINT);
	cr_assert_str_eq(r->instance_secrets[0].config, FX_SECRET_CONFIG);
	cr_assert_str_eq(r->instance_secrets[0].profile, FX_SECRET_PROFILE);
	cr_assert_eq(r->n_bundles, 1);
	cr_assert_str_eq(r->bundles[0].bundle_id, fx.bundle);
	cr_assert_str_eq(r->bundles[0].manifest, FX_MANIFEST);

	fx_req(&fx, &q, PR_OP_ACTOR_LOAD);
	q.space_id = "no-such-space";
	FX_CALL(&fx, &q, CM_E_NOT_FOUND);
}

/* ---- claim
 * ---------------------------------------------------------------------- */

Test(actor, claim_runs_the_queued_task_and_returns_its_args)
{
	const char *task;
	struct pr_rep *r;
	size_t pubs;

	cr_assert_eq(fx_claim(&fx, sp, "actor-1")->n_tasks, 0,
	    "a claim with nothing queued returned a task");
	task = FX_SUBMIT(&fx, sp, "r1", "type_text",
	    "{\"text\": \"hi\", \"selector\": \"#q\"}", CM_OK)
	           ->tasks[0]
	           .task_id;
	fx_advance(&fx, 100);
	pubs = fx.n_pubs;
	r = fx_claim(&fx, sp, "actor-1");
	cr_assert_eq(r->n_tasks, 1);
	cr_assert_str_eq(r->tasks[0].task_id, task);
	cr_assert_str_eq(r->tasks[0].status, "running");
	cr_assert_eq(r->tasks[0].started_at, FX_T0 + 100);
	cr_assert_str_eq(r->spaces[0].status, "running");
	/* The args, canonical (sorted keys), for the executor only. */
	cr_assert_str_eq(r->args, "{\"selector\":\"#q\",\"text\":\"hi\"}");
	cr_assert_eq(fx.n_pubs, pubs + 1);
	cr_assert_str_eq(fx.pubs[pubs].ev.kind, "started");
	cr_assert_eq(lease_of(task), FX_T0 + 100 + CM_LEASE_TTL_MS);

	/* Running: a claim under another lease gets nothing. */
	cr_assert_eq(fx_claim(&fx, sp, "actor-2")->n_tasks, 0);
	/* Under the holder's own lease (a new op_id: the reply of the claim
	 * that took it was lost), the task again, with its args, and no
	 * second started event. */
	fx_advance(&fx, 100);
	pubs = fx.n_pubs;
	r = fx_claim(&fx, sp, "actor-1");
	cr_assert_eq(r->n_tasks, 1, "the holder's lost claim left its task");
	cr_assert_str_eq(r->tasks[0].task_id, task);
	cr_assert_str_eq(r->tasks[0].status, "running");
	cr_assert_eq(r->tasks[0].started_at, FX_T0 + 100);
	cr_assert_str_eq(r->args, "{\"selector\":\"#q\",\"text\":\"hi\"}");
	cr_assert_eq(fx.n_pubs, pubs);
	cr_assert_eq(lease_of(task), FX_T0 + 100 + CM_LEASE_TTL_MS);
	FX_LOG(&fx, sp, "space_opened", "queued", "started");
}

Test(actor, claim_on_a_closing_space_takes_nothing)
{
	const char *task;
	struct pr_rep *r;
	char sql[160];

	/* Close cancels a queued task itself; a task still queued when the
	 * close lands (a race the ops cannot produce in order) is made here
	 * behind the store's back.  It must not start. */
	task = fx_task(&fx, sp, "r1");
	snprintf(sql, sizeof(sql),
	    "UPDATE browser_spaces SET close_requested = 1 WHERE id = '%s'",
	    sp);
	cr_assert_eq(fx_raw_exec(&fx, sql), SQLITE_OK);
	r = fx_claim(&fx, sp, "actor-1");
	cr_assert_eq(r->n_tasks, 0, "a closing Space started a task");
	cr_assert(r->close_requested, "the actor is not told to close");
	cr_assert_str_eq(fx_task_get(&fx, sp, task)->tasks[0].status, "queued");
	FX_LOG(&fx, sp, "space_opened", "queued");
}

/* ---- heartbeat
 * ------------------------------------------------------------------ */

Test(actor, heartbeat_extends_the_lease_and_reports_requests)
{
	const char *task = fx_task(&fx, sp, "r1");
	struct pr_rep *r;

	fx_claim(&fx, sp, "actor-1");
	fx_advance(&fx, CM_LEASE_TTL_MS - 1000);
	r = heartbeat(task, "actor-1", CM_OK);
	cr_assert_not(r->cancel_requested);
	cr_assert_not(r->close_requested);
	cr_assert_eq(lease_of(task), fx.now + CM_LEASE_TTL_MS);

	/* Past the first lease, but renewed: the sweep leaves it alone. */
	fx_advance(&fx, 2000);
	cr_assert_eq(fx_sweep(&fx)->count, 0);
	cr_assert_str_eq(
	    fx_task_get(&fx, sp, task)->tasks[0].status, "running");

	FX_CANCEL(&fx, sp, task, CM_OK);
	r = heartbeat(task, "actor-1", CM_OK);
	cr_assert(r->cancel_requested);
	cr_assert_not(r->close_requested);
	fx_close(&fx, sp);
	r = heartbeat(task, "actor-1", CM_OK);
	cr_assert(r->close_requested);
}

Test(actor, wrong_lease_holder_is_lease_expired)
{
	const char *task = fx_task(&fx, sp, "r1");
	int64_t lease;

	fx_claim(&fx, sp, "actor-1");
	lease = lease_of(task);
	fx_advance(&fx, 1000);
	heartbeat(task, "actor-2", CM_E_LEASE_EXPIRED);
	cr_assert_eq(lease_of(task), lease, "a stranger renewed the lease");
	FX_FINISH(
	    &fx, task, "actor-2", "completed", NULL, NULL, CM_E_LEASE_EXPIRED);
	cr_assert_str_eq(
	    fx_task_get(&fx, sp, task)->tasks[0].status, "running");
	heartbeat("no-such-task", "actor-1", CM_E_NOT_FOUND);
	FX_LOG(&fx, sp, "space_opened", "queued", "started");
}

/* ---- finish
 * ---------------------------------------------------------------------- */

/* Whether two strings, either NULL, are the same. */
static bool
same_str(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

#define SAME_PR_STR(f) cr_expect(same_str(got->f, want->f), "%s differs", #f);
#define SAME_PR_INT(f) cr_expect_eq(got->f, want->f, "%s differs", #f);
#define SAME_PR_BOOL(f) cr_expect_eq(got->f, want->f, "%s differs", #f);
#define SAME_PR_STRLIST(f)                                             \
	do {                                                           \
		cr_expect_eq(got->f.n, want->f.n, "%s differs", #f);   \
		for (size_t k = 0; k < got->f.n && k < want->f.n; k++) \
			cr_expect(same_str(got->f.v[k], want->f.v[k]), \
			    "%s differs", #f);                         \
	} while (0);
#define SAME_FIELD(name, type, max) SAME_##type(name)

/*
 * The task a finish's event carries, which the api answers a waiting
 * request with, is the row as the finish left it, field by field: the
 * finish builds it from the row it read before its write, not from a read
 * after it.
 */
static void
expect_event_task_is_row(const char *task)
{
	const struct fx_pub *last = NULL;
	const struct pr_task *want;
	struct pr_task t, *got = &t;
	struct pr_event ev;
	struct pr_arena a;
	char err[128];

	for (size_t i = 0; i < fx.n_pubs; i++)
		if (!fx_is_notice(&fx.pubs[i]) &&
		    strcmp(fx.pubs[i].ev.space_id, sp) == 0)
			last = &fx.pubs[i];
	cr_assert_not_null(last);
	memset(&a, 0, sizeof(a));
	memset(&t, 0, sizeof(t));
	cr_assert_eq(pr_pub_decode(last->raw, last->raw_len, &ev, &t, &a, err,
	                 sizeof(err)),
	    0, "%s", err);
	cr_assert_str_eq(t.task_id, task, "the end's event carries no task");
	want = &fx_task_get(&fx, sp, task)->tasks[0];
	PR_REC_TASK(SAME_FIELD)
	pr_arena_free(&a);
}

Test(actor, a_finish_event_carries_the_task_as_stored)
{
	const char *task = fx_task(&fx, sp, "r1");

	fx_claim(&fx, sp, "actor-1");
	fx_advance(&fx, 700);
	FX_FINISH(&fx, task, "actor-1", "completed", "{\"title\":\"Example\"}",
	    NULL, CM_OK);
	expect_event_task_is_row(task);

	task = fx_task(&fx, sp, "r2");
	fx_claim(&fx, sp, "actor-1");
	fx_advance(&fx, 300);
	FX_FINISH(&fx, task, "actor-1", "failed", NULL, "runtime_error", CM_OK);
	expect_event_task_is_row(task);
}

Test(actor, finish_completed_stores_the_result)
{
	const char *task = fx_task(&fx, sp, "r1");
	struct pr_rep *r;

	fx_claim(&fx, sp, "actor-1");
	fx_advance(&fx, 700);
	r = FX_FINISH(&fx, task, "actor-1", "completed",
	    "{\"title\":\"Example\"}", NULL, CM_OK);
	cr_assert_str_eq(r->tasks[0].status, "completed");
	r = fx_task_get(&fx, sp, task);
	cr_assert_str_eq(r->tasks[0].status, "completed");
	cr_assert_str_eq(r->tasks[0].result, "{\"title\":\"Example\"}");
	cr_assert_null(r->tasks[0].error_code);
	cr_assert_eq(r->tasks[0].finished_at, FX_T0 + 700);
	cr_assert_eq(lease_of(task), 0, "the lease outlived the task");
	cr_assert_str_eq(
	    fx_space_get(&fx, fx.ws, sp)->spaces[0].status, "idle");

	/* The same finish re-sent (op_id memory lost): answered, no event. */
	r = FX_FINISH(&fx, task, "actor-1", "completed",
	    "{\"title\":\"Example\"}", NULL, CM_OK);
	cr_assert_str_eq(r->tasks[0].status, "completed");
	/* A different outcome for a finished task is refused. */
	FX_FINISH(&fx, task, "actor-1", "failed", NULL, "runtime_error",
	    CM_E_LEASE_EXPIRED);
	cr_assert_str_eq(
	    fx_task_get(&fx, sp, task)->tasks[0].status, "completed");
	FX_LOG(&fx, sp, "space_opened", "queued", "started", "completed");
}

Test(actor, finish_failed_requires_an_error_code)
{
	const char *task = fx_task(&fx, sp, "r1");
	struct pr_rep *r;

	fx_claim(&fx, sp, "actor-1");
	FX_FINISH(
	    &fx, task, "actor-1", "failed", NULL, NULL, CM_E_INVALID_REQUEST);
	FX_FINISH(&fx, task, "actor-1", "completed", NULL, "runtime_error",
	    CM_E_INVALID_REQUEST);
	FX_FINISH(&fx, task, "actor-1", "failed", "{}", "runtime_error",
	    CM_E_INVALID_REQUEST);
	FX_FINISH(
	    &fx, task, "actor-1", "running", NULL, NULL, CM_E_INVALID_REQUEST);
	/* Cancelled only after a cancel request. */
	FX_FINISH(&fx, task, "actor-1", "cancelled", NULL, NULL,
	    CM_E_INVALID_REQUEST);
	cr_assert_str_eq(
	    fx_task_get(&fx, sp, task)->tasks[0].status, "running");

	FX_FINISH(&fx, task, "actor-1", "failed", NULL, "task_timeout", CM_OK);
	r = fx_task_get(&fx, sp, task);
	cr_assert_str_eq(r->tasks[0].status, "failed");
	cr_assert_str_eq(r->tasks[0].error_code, "task_timeout");
	cr_assert_str_eq(r->tasks[0].error_message, "it went wrong");
	cr_assert_null(r->tasks[0].result);
	FX_LOG(&fx, sp, "space_opened", "queued", "started", "failed");
}

/* ---- lease sweep
 * ------------------------------------------------------------------- */

Test(actor, sweep_fails_a_task_whose_lease_ran_out)
{
	const char *task = fx_task(&fx, sp, "r1");
	struct pr_rep *r;

	fx_claim(&fx, sp, "actor-1");
	/* Due at claim + TTL, not before. */
	fx_advance(&fx, CM_LEASE_TTL_MS);
	cr_assert_eq(fx_sweep(&fx)->count, 0);
	fx_advance(&fx, 1);
	cr_assert_eq(fx_sweep(&fx)->count, 1);

	r = fx_task_get(&fx, sp, task);
	cr_assert_str_eq(r->tasks[0].status, "failed");
	cr_assert_str_eq(r->tasks[0].error_code, "lease_expired");
	cr_assert_not_null(r->tasks[0].error_message);
	cr_assert_str_eq(
	    fx_space_get(&fx, fx.ws, sp)->spaces[0].status, "idle");

	/* Never queued again, never run again. */
	cr_assert_eq(fx_claim(&fx, sp, "actor-2")->n_tasks, 0);
	cr_assert_eq(fx_sweep(&fx)->count, 0);
	heartbeat(task, "actor-1", CM_E_LEASE_EXPIRED);
	FX_FINISH(
	    &fx, task, "actor-1", "completed", NULL, NULL, CM_E_LEASE_EXPIRED);
	cr_assert_str_eq(fx_task_get(&fx, sp, task)->tasks[0].status, "failed");
	FX_LOG(&fx, sp, "space_opened", "queued", "started", "failed");
	/* The Space works on. */
	fx_task(&fx, sp, "r2");
}

Test(actor, sweep_of_a_cancel_requested_task_records_cancelled)
{
	const char *task = fx_task(&fx, sp, "r1");
	const char *other = fx_space(&fx, 1),
	           *task2 = fx_task(&fx, other, "r1");

	fx_claim(&fx, sp, "actor-1");
	FX_CANCEL(&fx, sp, task, CM_OK);
	fx_advance(&fx, 5000);
	fx_claim(&fx, other, "actor-2");
	fx_advance(&fx, CM_LEASE_TTL_MS - 4000);
	/* Only the first lease is due. */
	cr_assert_eq(fx_sweep(&fx)->count, 1);
	cr_assert_str_eq(
	    fx_task_get(&fx, sp, task)->tasks[0].status, "cancelled");
	cr_assert_str_eq(
	    fx_task_get(&fx, other, task2)->tasks[0].status, "running");
	FX_LOG(&fx, sp, "space_opened", "queued", "started", "cancel_requested",
	    "cancelled");
}

/* ---- finalize_lost
 * ------------------------------------------------------------------ */

Test(actor, finalize_lost_fails_a_running_task_with_outcome_unknown)
{
	const char *task = fx_task(&fx, sp, "r1");
	struct pr_rep *r;

	fx_claim(&fx, sp, "actor-1");
	r = finalize_lost_on(sp, NULL);
	cr_assert_eq(r->count, 1);
	r = fx_task_get(&fx, sp, task);
	cr_assert_str_eq(r->tasks[0].status, "failed");
	cr_assert_str_eq(r->tasks[0].error_code, "outcome_unknown");
	cr_assert_eq(lease_of(task), 0);
	cr_assert_str_eq(
	    fx_space_get(&fx, fx.ws, sp)->spaces[0].status, "idle");
	cr_assert_eq(fx_claim(&fx, sp, "actor-2")->n_tasks, 0,
	    "a lost task was run again");
	/* Nothing left to finalise. */
	cr_assert_eq(finalize_lost_on(sp, NULL)->count, 0);
	FX_LOG(&fx, sp, "space_opened", "queued", "started", "failed");
	/* The Space keeps working. */
	fx_task(&fx, sp, "r2");
	cr_assert_eq(fx_claim(&fx, sp, "actor-2")->n_tasks, 1);
}

Test(actor, finalize_lost_after_cancel_request_records_cancelled)
{
	const char *task = fx_task(&fx, sp, "r1");

	fx_claim(&fx, sp, "actor-1");
	FX_CANCEL(&fx, sp, NULL, CM_OK);
	cr_assert_eq(finalize_lost_on(sp, NULL)->count, 1);
	cr_assert_str_eq(
	    fx_task_get(&fx, sp, task)->tasks[0].status, "cancelled");
	FX_LOG(&fx, sp, "space_opened", "queued", "started", "cancel_requested",
	    "cancelled");
}

Test(actor, finalize_lost_leaves_a_queued_task_for_the_next_actor)
{
	const char *task = fx_task(&fx, sp, "r1");
	struct pr_rep *r;

	cr_assert_eq(finalize_lost_on(sp, NULL)->count, 0);
	cr_assert_str_eq(fx_task_get(&fx, sp, task)->tasks[0].status, "queued");
	r = fx_claim(&fx, sp, "actor-2");
	cr_assert_eq(r->n_tasks, 1);
	cr_assert_str_eq(r->tasks[0].task_id, task);
	FX_LOG(&fx, sp, "space_opened", "queued", "started");
}

/* ---- several hosts on one database
 * ------------------------------------------------------------ */

/* A Space on a new instance of host (bound to ws-main), in fx.inst[2]. */
static const char *
space_on(const char *host)
{
	const char *inst = fx_instance(&fx, "inst-of-host", fx.bundle, host);

	fx_binding(&fx, fx.ws, inst);
	fx.inst[2] = inst;
	return fx_space(&fx, 2);
}

static struct pr_rep *
sweep_on(const char *host)
{
	struct pr_req q;

	fx_req(&fx, &q, PR_OP_SUP_SWEEP_LEASES);
	q.host = host;
	return FX_CALL(&fx, &q, CM_OK);
}

Test(actor, space_opened_is_published_with_the_host_of_its_instance)
{
	size_t from = fx.n_pubs, opened = 0;
	const char *on_b = space_on("host-b"), *on_a = fx_space(&fx, 1);
	struct pr_req q;
	struct pr_rep *r;

	for (size_t i = from; i < fx.n_pubs; i++) {
		const struct pr_event *ev = &fx.pubs[i].ev;

		if (strcmp(ev->kind, "space_opened") != 0)
			continue;
		opened++;
		cr_assert_not_null(ev->host, "space_opened names no host");
		cr_assert_str_eq(ev->host,
		    strcmp(ev->space_id, on_b) == 0 ? "host-b" : "host-a");
	}
	cr_assert_eq(opened, 2);
	(void)on_a;
	/* Only the notice carries it: the log as clients read it does not. */
	fx_req(&fx, &q, PR_OP_EVENT_LIST);
	q.workspace_id = fx.ws;
	q.space_id = on_b;
	r = FX_CALL(&fx, &q, CM_OK);
	cr_assert_eq(r->n_events, 1);
	cr_assert_null(r->events[0].host);
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT count(*) FROM browser_space_events"
	                 " WHERE space_id = ?1 AND payload LIKE '%host-b%'",
	                 on_b, (const char *)NULL),
	    0);
}

Test(actor, finalize_lost_leaves_another_hosts_task_alone)
{
	const char *on_b = space_on("host-b"), *task = fx_task(&fx, on_b, "r1");
	struct pr_rep *r;

	fx_claim(&fx, on_b, "actor-of-b");
	/* Host A's supervisor lost an actor of this Space (one it should
	 * never have had): B's actor holds the task, and keeps it. */
	r = finalize_lost_on(on_b, "host-a");
	cr_assert_eq(r->count, 0);
	cr_assert_str_eq(
	    fx_task_get(&fx, on_b, task)->tasks[0].status, "running");
	heartbeat(task, "actor-of-b", CM_OK);
	/* Host B's own supervisor finalises it. */
	r = finalize_lost_on(on_b, "host-b");
	cr_assert_eq(r->count, 1);
	r = fx_task_get(&fx, on_b, task);
	cr_assert_str_eq(r->tasks[0].status, "failed");
	cr_assert_str_eq(r->tasks[0].error_code, "outcome_unknown");
	/* A's own Spaces are still A's to finalise. */
	task = fx_task(&fx, sp, "r1");
	fx_claim(&fx, sp, "actor-of-a");
	cr_assert_eq(finalize_lost_on(sp, "host-a")->count, 1);
	cr_assert_str_eq(
	    fx_task_get(&fx, sp, task)->tasks[0].error_code, "outcome_unknown");
}

Test(actor, sweep_ends_only_leases_that_really_expired_on_any_host)
{
	const char *on_b = space_on("host-b");
	const char *task_a = fx_task(&fx, sp, "r1"),
	           *task_b = fx_task(&fx, on_b, "r1");
	struct pr_rep *r;

	fx_claim(&fx, sp, "actor-of-a");
	fx_claim(&fx, on_b, "actor-of-b");
	/* Live leases: no sweep from either host touches them. */
	fx_advance(&fx, CM_LEASE_TTL_MS);
	cr_assert_eq(sweep_on("host-a")->count, 0);
	cr_assert_eq(sweep_on("host-b")->count, 0);

	/* Both expired by A's clock: A ends its own, and leaves B's while
	 * B's clock may still call it live. */
	fx_advance(&fx, 1);
	cr_assert_eq(sweep_on("host-a")->count, 1);
	r = fx_task_get(&fx, sp, task_a);
	cr_assert_str_eq(r->tasks[0].status, "failed");
	cr_assert_str_eq(r->tasks[0].error_code, "lease_expired");
	cr_assert_str_eq(
	    fx_task_get(&fx, on_b, task_b)->tasks[0].status, "running");
	fx_advance(&fx, CM_LEASE_FOREIGN_GRACE_MS - 1);
	cr_assert_eq(sweep_on("host-a")->count, 0);

	/* Past the grace: B stopped renewing, its executor is lost. */
	fx_advance(&fx, 1);
	cr_assert_eq(sweep_on("host-a")->count, 1);
	r = fx_task_get(&fx, on_b, task_b);
	cr_assert_str_eq(r->tasks[0].status, "failed");
	cr_assert_str_eq(r->tasks[0].error_code, "outcome_unknown");
	/* Never run again, whoever asks. */
	cr_assert_eq(fx_claim(&fx, on_b, "actor-of-b2")->n_tasks, 0);
	heartbeat(task_b, "actor-of-b", CM_E_LEASE_EXPIRED);
	FX_FINISH(&fx, task_b, "actor-of-b", "completed", NULL, NULL,
	    CM_E_LEASE_EXPIRED);
	cr_assert_eq(sweep_on("host-b")->count, 0);
	FX_LOG(&fx, on_b, "space_opened", "queued", "started", "failed");
}
