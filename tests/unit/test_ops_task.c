/*
 * test_ops_task.c: submit, read and cancel tasks: one active task a Space,
 * every check before any row, a request_id that answers with its first
 * task, cancel, and arguments whose values no reply shows.
 */
#include "store_fixture.h"

static struct fx fx;
static const char *sp; /* a Space on instance 0, every capability granted */

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

TestSuite(task, .init = setup, .fini = teardown);

static struct pr_rep *
submit_timeout(const char *rid, int64_t timeout_ms, enum cm_err want)
{
	return fx_submit_at(
	    &fx, sp, rid, "noop", "{}", timeout_ms, want, __FILE__, __LINE__);
}

static struct pr_rep *
task_page(const char *space, int64_t limit, const char *after, enum cm_err want)
{
	struct pr_req q;

	fx_req(&fx, &q, PR_OP_TASK_LIST);
	q.workspace_id = fx.ws;
	q.space_id = space;
	q.limit = limit;
	q.after_id = after;
	return FX_CALL(&fx, &q, want);
}

static struct pr_rep *
task_list(const char *space, int64_t limit, enum cm_err want)
{
	return task_page(space, limit, NULL, want);
}

/* ---- submit
 * ------------------------------------------------------------------ */

Test(task, submit_creates_a_queued_task_and_its_event)
{
	const struct pr_task *t;
	struct pr_rep *r;
	size_t pubs = fx.n_pubs;

	r = FX_SUBMIT(&fx, sp, "req-1", "sleep", "{\"ms\": 250}", CM_OK);
	cr_assert(r->created);
	cr_assert_eq(r->n_tasks, 1);
	t = &r->tasks[0];
	cr_assert_str_eq(t->space_id, sp);
	cr_assert_str_eq(t->workspace_id, fx.ws);
	cr_assert_str_eq(t->request_id, "req-1");
	cr_assert_str_eq(t->capability, "sleep");
	cr_assert_str_eq(t->status, "queued");
	cr_assert_not_null(t->operation_id);
	cr_assert_str_neq(t->operation_id, t->task_id);
	cr_assert_eq(t->timeout_ms, CM_TIMEOUT_DEFAULT_S * 1000);
	cr_assert_eq(t->arg_keys.n, 1);
	cr_assert_str_eq(t->arg_keys.v[0], "ms");
	cr_assert_not(t->cancel_requested);
	cr_assert_null(t->result);
	cr_assert_null(t->error_code);
	cr_assert_eq(t->created_at, FX_T0);
	cr_assert_eq(t->started_at, 0);
	cr_assert_eq(t->finished_at, 0);

	cr_assert_eq(fx.n_pubs, pubs + 1);
	cr_assert_str_eq(fx.pubs[pubs].ev.kind, "queued");
	cr_assert_str_eq(fx.pubs[pubs].ev.task_id, t->task_id);
	FX_LOG(&fx, sp, "space_opened", "queued");
	/* The Space itself stays idle until an actor claims the task. */
	cr_assert_str_eq(
	    fx_space_get(&fx, fx.ws, sp)->spaces[0].status, "idle");
}

Test(task, repeated_request_id_returns_the_original_task)
{
	struct pr_rep *a, *b;
	size_t pubs;

	a = FX_SUBMIT(&fx, sp, "req-1", "sleep", "{\"ms\": 250}", CM_OK);
	pubs = fx.n_pubs;
	fx_advance(&fx, 500);
	b = FX_SUBMIT(&fx, sp, "req-1", "sleep", "{ \"ms\" : 250 }", CM_OK);
	cr_assert_not(b->created);
	cr_assert_str_eq(b->tasks[0].task_id, a->tasks[0].task_id);
	cr_assert_str_eq(b->tasks[0].operation_id, a->tasks[0].operation_id);
	cr_assert_eq(b->tasks[0].created_at, FX_T0);
	cr_assert_eq(fx.n_pubs, pubs, "a repeat published an event");
	cr_assert_eq(fx_count_tasks(&fx, sp), 1);
	FX_LOG(&fx, sp, "space_opened", "queued");

	/* Still the original once it has finished. */
	FX_CANCEL(&fx, sp, NULL, CM_OK);
	b = FX_SUBMIT(&fx, sp, "req-1", "sleep", "{\"ms\":250}", CM_OK);
	cr_assert_not(b->created);
	cr_assert_str_eq(b->tasks[0].task_id, a->tasks[0].task_id);
	cr_assert_str_eq(b->tasks[0].status, "cancelled");
	cr_assert_eq(fx_count_tasks(&fx, sp), 1);
}

Test(task, args_in_another_key_order_are_the_same_args)
{
	struct pr_rep *a, *b;

	a = FX_SUBMIT(&fx, sp, "req-1", "type_text",
	    "{\"selector\": \"#q\", \"text\": \"hello\"}", CM_OK);
	b = FX_SUBMIT(&fx, sp, "req-1", "type_text",
	    "{\"text\":\"hello\",\"selector\":\"#q\"}", CM_OK);
	cr_assert_not(b->created);
	cr_assert_str_eq(b->tasks[0].task_id, a->tasks[0].task_id);
	cr_assert_eq(fx_count_tasks(&fx, sp), 1);
}

Test(task, same_request_id_with_other_content_is_refused)
{
	size_t pubs;

	FX_SUBMIT(&fx, sp, "req-1", "sleep", "{\"ms\": 250}", CM_OK);
	pubs = fx.n_pubs;
	FX_SUBMIT(&fx, sp, "req-1", "sleep", "{\"ms\": 251}",
	    CM_E_IDEMPOTENCY_REUSED);
	FX_SUBMIT(&fx, sp, "req-1", "noop", "{}", CM_E_IDEMPOTENCY_REUSED);
	cr_assert_eq(fx.n_pubs, pubs);
	cr_assert_eq(fx_count_tasks(&fx, sp), 1);
	/* The same key on another Space is another request. */
	FX_SUBMIT(&fx, fx_space(&fx, 1), "req-1", "noop", "{}", CM_OK);
}

Test(task, a_second_active_task_is_refused)
{
	const char *first = fx_task(&fx, sp, "r1");

	FX_SUBMIT(&fx, sp, "r2", "noop", "{}", CM_E_TASK_IN_PROGRESS);
	fx_claim(&fx, sp, "actor-1");
	FX_SUBMIT(&fx, sp, "r3", "noop", "{}", CM_E_TASK_IN_PROGRESS);
	cr_assert_eq(fx_count_tasks(&fx, sp), 1);
	FX_FINISH(&fx, first, "actor-1", "completed", NULL, NULL, CM_OK);
	/* Free again; r2 was never recorded, so it is a new request now. */
	fx_task(&fx, sp, "r2");
	FX_LOG(&fx, sp, "space_opened", "queued", "started", "completed",
	    "queued");
}

/* A submit that names its caller is authorized by the store, with the
 * one authz module, on the Space row it reads (no space.get first). */
static void
submit_as(const char *ws, const char *principal, const char *role,
    bool is_admin, const char *rid, enum cm_err want)
{
	struct pr_req q;

	fx_req(&fx, &q, PR_OP_TASK_SUBMIT);
	q.workspace_id = ws;
	q.space_id = sp;
	q.request_id = rid;
	q.capability = "noop";
	q.principal_id = principal;
	q.kind = "operator";
	q.role = role;
	q.is_admin = is_admin;
	FX_CALL(&fx, &q, want);
}

Test(task, submit_authorizes_the_caller_it_names)
{
	/* Not the owner: a member is refused, and learns of no row. */
	submit_as(fx.ws, "p-other", "member", false, "r1", CM_E_FORBIDDEN);
	/* Not a member: refused, whatever the Space. */
	submit_as(fx.ws, "p-other", NULL, false, "r2", CM_E_FORBIDDEN);
	/* A Space of another workspace is not found, for admins too. */
	submit_as(
	    "ws-other", "p-other", "manager", false, "r3", CM_E_NOT_FOUND);
	submit_as("ws-other", "p-admin", NULL, true, "r4", CM_E_NOT_FOUND);
	cr_assert_eq(fx_count_tasks(&fx, sp), 0);
	/* The owner as a member, then a manager and an admin. */
	submit_as(fx.ws, fx.mgr, "member", false, "r5", CM_OK);
	FX_SUBMIT(&fx, sp, "r5", "noop", "{}", CM_OK); /* the same task */
	cr_assert_eq(fx_count_tasks(&fx, sp), 1);
	FX_CANCEL(&fx, sp, NULL, CM_OK);
	submit_as(fx.ws, "p-other", "manager", false, "r6", CM_OK);
	FX_CANCEL(&fx, sp, NULL, CM_OK);
	submit_as(fx.ws, "p-admin", NULL, true, "r7", CM_OK);
	cr_assert_eq(fx_count_tasks(&fx, sp), 3);
}

Test(task, submit_to_a_closed_space_is_refused)
{
	fx_close(&fx, sp);
	FX_SUBMIT(&fx, sp, "r1", "noop", "{}", CM_E_SPACE_CLOSED);
	fx_mark_closed(&fx, sp);
	FX_SUBMIT(&fx, sp, "r2", "noop", "{}", CM_E_SPACE_CLOSED);
	cr_assert_eq(fx_count_tasks(&fx, sp), 0);
}

/* A request seen before is answered with its task on a closing Space
 * too, and on a closed one; only a new request is refused. */
Test(task, a_repeat_on_a_closed_space_returns_the_original_task)
{
	struct pr_rep *a, *b;

	a = FX_SUBMIT(&fx, sp, "req-1", "sleep", "{\"ms\": 250}", CM_OK);
	fx_close(&fx, sp);
	b = FX_SUBMIT(&fx, sp, "req-1", "sleep", "{\"ms\": 250}", CM_OK);
	cr_assert_not(b->created);
	cr_assert_str_eq(b->tasks[0].task_id, a->tasks[0].task_id);
	FX_SUBMIT(&fx, sp, "req-1", "sleep", "{\"ms\": 251}",
	    CM_E_IDEMPOTENCY_REUSED);
	FX_SUBMIT(&fx, sp, "req-2", "noop", "{}", CM_E_SPACE_CLOSED);
	fx_mark_closed(&fx, sp);
	b = FX_SUBMIT(&fx, sp, "req-1", "sleep", "{\"ms\": 250}", CM_OK);
	cr_assert_not(b->created);
	cr_assert_str_eq(b->tasks[0].task_id, a->tasks[0].task_id);
	FX_SUBMIT(&fx, sp, "req-2", "noop", "{}", CM_E_SPACE_CLOSED);
	cr_assert_eq(fx_count_tasks(&fx, sp), 1);
}

Test(task, capability_and_args_are_checked_before_any_row)
{
	static const char *only_noop[] = {"noop"};
	struct pr_strlist granted = {1, only_noop};
	const char *narrow;
	struct pr_req q;
	size_t pubs = fx.n_pubs;

	FX_SUBMIT(&fx, sp, "r1", "evaluate_js", "{}", CM_E_CAPABILITY_UNKNOWN);
	FX_SUBMIT(&fx, sp, "r2", "sleep", "{}", CM_E_INVALID_ARGS);
	FX_SUBMIT(
	    &fx, sp, "r3", "sleep", "{\"ms\": \"soon\"}", CM_E_INVALID_ARGS);
	FX_SUBMIT(
	    &fx, sp, "r4", "sleep", "{\"ms\": 600001}", CM_E_INVALID_ARGS);
	FX_SUBMIT(&fx, sp, "r5", "sleep", "{\"ms\": 5, \"extra\": 1}",
	    CM_E_INVALID_ARGS);
	FX_SUBMIT(&fx, sp, "r6", "navigate",
	    "{\"url\": \"file:///etc/passwd\"}", CM_E_INVALID_ARGS);
	FX_SUBMIT(&fx, sp, "r7", "noop", "[]", CM_E_INVALID_ARGS);
	FX_SUBMIT(&fx, sp, "r8", "noop", "{\"a\":", CM_E_INVALID_ARGS);
	cr_assert_eq(fx_count_tasks(&fx, sp), 0);
	cr_assert_eq(fx.n_pubs, pubs);

	fx_create_req(&fx, &q, 1);
	q.granted = granted;
	narrow = FX_CALL(&fx, &q, CM_OK)->spaces[0].space_id;
	FX_SUBMIT(&fx, narrow, "r1", "sleep", "{\"ms\": 5}",
	    CM_E_CAPABILITY_NOT_GRANTED);
	FX_SUBMIT(
	    &fx, narrow, "r2", "evaluate_js", "{}", CM_E_CAPABILITY_UNKNOWN);
	cr_assert_eq(fx_count_tasks(&fx, narrow), 0);
	FX_LOG(&fx, sp, "space_opened");
	FX_LOG(&fx, narrow, "space_opened");

	/* Controls: valid args pass. */
	FX_SUBMIT(&fx, narrow, "r3", "noop", "{}", CM_OK);
	FX_SUBMIT(&fx, sp, "r9", "navigate",
	    "{\"url\": \"https://example.com/\"}", CM_OK);
}

Test(task, timeout_bounds)
{
	struct pr_rep *r;

	submit_timeout("t1", 999, CM_E_INVALID_TIMEOUT);
	submit_timeout("t2", 601000, CM_E_INVALID_TIMEOUT);
	submit_timeout("t3", -1000, CM_E_INVALID_TIMEOUT);
	cr_assert_eq(fx_count_tasks(&fx, sp), 0);

	r = submit_timeout("t4", 1000, CM_OK);
	cr_assert_eq(r->tasks[0].timeout_ms, 1000);
	FX_CANCEL(&fx, sp, NULL, CM_OK);
	r = submit_timeout("t5", 600000, CM_OK);
	cr_assert_eq(r->tasks[0].timeout_ms, 600000);
	FX_CANCEL(&fx, sp, NULL, CM_OK);
	r = submit_timeout("t6", 0, CM_OK);
	cr_assert_eq(r->tasks[0].timeout_ms, CM_TIMEOUT_DEFAULT_S * 1000,
	    "0 is the default timeout");
	cr_assert_eq(fx_count_tasks(&fx, sp), 3);
}

static void
set_status(const char *inst, const char *status)
{
	struct pr_req q;

	fx_req(&fx, &q, PR_OP_INSTANCE_SET_STATUS);
	q.browser_instance_id = inst;
	q.status = status;
	FX_CALL(&fx, &q, CM_OK);
}

Test(task, not_ready_runtime_persists_a_failed_task)
{
	const struct pr_task *t;
	struct pr_rep *r;

	set_status(fx.inst[0], "disabled");
	r = FX_SUBMIT(&fx, sp, "r1", "noop", "{}", CM_E_RUNTIME_NOT_READY);
	cr_assert(r->created);
	cr_assert_eq(
	    r->n_tasks, 1, "the failed task is returned with the error");
	t = &r->tasks[0];
	cr_assert_str_eq(t->status, "failed");
	cr_assert_str_eq(t->error_code, "runtime_not_ready");
	cr_assert_eq(t->finished_at, FX_T0);

	r = fx_task_get(&fx, sp, t->task_id);
	cr_assert_str_eq(r->tasks[0].status, "failed");
	cr_assert_str_eq(r->tasks[0].error_code, "runtime_not_ready");
	FX_LOG(&fx, sp, "space_opened", "queued", "failed");
	/* The repeat is the same persisted failure, not a second task. */
	r = FX_SUBMIT(&fx, sp, "r1", "noop", "{}", CM_OK);
	cr_assert_not(r->created);
	cr_assert_str_eq(r->tasks[0].status, "failed");
	cr_assert_eq(fx_count_tasks(&fx, sp), 1);

	/* unavailable is not ready either; ready again works. */
	set_status(fx.inst[0], "unavailable");
	FX_SUBMIT(&fx, sp, "r2", "noop", "{}", CM_E_RUNTIME_NOT_READY);
	set_status(fx.inst[0], "ready");
	r = FX_SUBMIT(&fx, sp, "r3", "noop", "{}", CM_OK);
	cr_assert_str_eq(r->tasks[0].status, "queued");
	cr_assert_str_eq(
	    fx_space_get(&fx, fx.ws, sp)->spaces[0].status, "idle");
}

/* ---- get and list
 * ---------------------------------------------------------------- */

Test(task, get_is_scoped_to_its_space_and_workspace)
{
	const char *other = fx_space(&fx, 1);
	const char *task = fx_task(&fx, sp, "r1");
	struct pr_req q;

	fx_req(&fx, &q, PR_OP_TASK_GET);
	q.workspace_id = fx.ws;
	q.space_id = other;
	q.task_id = task;
	FX_CALL(&fx, &q, CM_E_NOT_FOUND);
	fx_req(&fx, &q, PR_OP_TASK_GET);
	q.workspace_id = fx.ws2;
	q.space_id = sp;
	q.task_id = task;
	FX_CALL(&fx, &q, CM_E_NOT_FOUND);
	fx_req(&fx, &q, PR_OP_TASK_GET);
	q.workspace_id = fx.ws;
	q.space_id = sp;
	q.task_id = "no-such-task";
	FX_CALL(&fx, &q, CM_E_NOT_FOUND);
	cr_assert_str_eq(fx_task_get(&fx, sp, task)->tasks[0].task_id, task);
}

Test(task, list_is_newest_first_and_bounded)
{
	const char *ids[3];
	struct pr_rep *r;
	char rid[8];

	for (int i = 0; i < 3; i++) {
		snprintf(rid, sizeof(rid), "r%d", i);
		ids[i] = fx_task(&fx, sp, rid);
		FX_CANCEL(&fx, sp, NULL, CM_OK);
		fx_advance(&fx, 1000);
	}
	r = task_list(sp, 0, CM_OK);
	cr_assert_eq(r->n_tasks, 3);
	for (int i = 0; i < 3; i++)
		cr_assert_str_eq(r->tasks[i].task_id, ids[2 - i]);
	r = task_list(sp, 2, CM_OK);
	cr_assert_eq(r->n_tasks, 2);
	cr_assert_str_eq(r->tasks[0].task_id, ids[2]);
	cr_assert_str_eq(r->tasks[1].task_id, ids[1]);
	task_list(sp, 101, CM_E_INVALID_REQUEST);
	task_list(sp, -1, CM_E_INVALID_REQUEST);
	cr_assert_eq(task_list(sp, 100, CM_OK)->n_tasks, 3);
	cr_assert_eq(task_list(fx_space(&fx, 1), 0, CM_OK)->n_tasks, 0);
}

/* Pages after a cursor, the last task of the page before, cover the
 * history once, tasks of the same millisecond among them; a cursor that
 * is no task of the Space is refused. */
Test(task, pages_after_a_cursor_cover_the_history_once)
{
	const struct pr_rep *all, *r;
	const char *after = NULL;
	size_t seen = 0;
	char rid[8];

	for (int i = 0; i < 10; i++) {
		snprintf(rid, sizeof(rid), "r%d", i);
		fx_task(&fx, sp, rid);
		FX_CANCEL(&fx, sp, NULL, CM_OK);
		if (i % 2 == 0)
			fx_advance(&fx, 1);
	}
	all = task_list(sp, 100, CM_OK);
	cr_assert_eq(all->n_tasks, 10);
	do {
		r = task_page(sp, 3, after, CM_OK);
		for (size_t i = 0; i < r->n_tasks; i++, seen++) {
			cr_assert_lt(seen, 10);
			cr_assert_str_eq(r->tasks[i].task_id,
			    all->tasks[seen].task_id, "row %zu", seen);
		}
		if (r->n_tasks > 0)
			after = r->tasks[r->n_tasks - 1].task_id;
	} while (r->n_tasks == 3);
	cr_assert_eq(seen, 10);
	task_page(sp, 3, "no-such-task", CM_E_INVALID_REQUEST);
	task_page(
	    fx_space(&fx, 1), 3, all->tasks[0].task_id, CM_E_INVALID_REQUEST);
}

/* ---- cancel
 * ---------------------------------------------------------------------- */

Test(task, cancel_of_a_queued_task_is_immediate)
{
	const char *task = fx_task(&fx, sp, "r1");
	struct pr_rep *r;

	fx_advance(&fx, 10);
	r = FX_CANCEL(&fx, sp, task, CM_OK);
	cr_assert(r->created);
	cr_assert_str_eq(r->tasks[0].status, "cancelled");
	cr_assert(r->tasks[0].cancel_requested);
	cr_assert_eq(r->tasks[0].finished_at, FX_T0 + 10);
	FX_LOG(
	    &fx, sp, "space_opened", "queued", "cancel_requested", "cancelled");
	/* It will never be claimed. */
	cr_assert_eq(fx_claim(&fx, sp, "actor-1")->n_tasks, 0);
}

Test(task, cancel_of_a_running_task_waits_for_the_executor)
{
	const char *task = fx_task(&fx, sp, "r1");
	struct pr_rep *r;

	fx_claim(&fx, sp, "actor-1");
	r = FX_CANCEL(&fx, sp, task, CM_OK);
	cr_assert(r->created);
	cr_assert_str_eq(r->tasks[0].status, "running",
	    "cancelled before the executor acknowledged");
	cr_assert(r->tasks[0].cancel_requested);
	cr_assert_eq(r->tasks[0].finished_at, 0);

	/* Idempotent: no second event. */
	r = FX_CANCEL(&fx, sp, task, CM_OK);
	cr_assert_not(r->created);
	cr_assert_str_eq(r->tasks[0].status, "running");
	FX_LOG(
	    &fx, sp, "space_opened", "queued", "started", "cancel_requested");

	r = FX_FINISH(&fx, task, "actor-1", "cancelled", NULL, NULL, CM_OK);
	cr_assert_str_eq(r->tasks[0].status, "cancelled");
	r = fx_task_get(&fx, sp, task);
	cr_assert_str_eq(r->tasks[0].status, "cancelled");
	cr_assert_str_eq(
	    fx_space_get(&fx, fx.ws, sp)->spaces[0].status, "idle");

	/* Cancel of the finished task: its terminal state, no event. */
	r = FX_CANCEL(&fx, sp, task, CM_OK);
	cr_assert_not(r->created);
	cr_assert_str_eq(r->tasks[0].status, "cancelled");
	FX_LOG(&fx, sp, "space_opened", "queued", "started", "cancel_requested",
	    "cancelled");
}

Test(task, cancel_of_a_completed_task_reports_it_and_writes_nothing)
{
	const char *task = fx_task(&fx, sp, "r1");
	struct pr_rep *r;
	size_t pubs;

	fx_claim(&fx, sp, "actor-1");
	FX_FINISH(&fx, task, "actor-1", "completed", "{\"n\":1}", NULL, CM_OK);
	pubs = fx.n_pubs;
	r = FX_CANCEL(&fx, sp, task, CM_OK);
	cr_assert_not(r->created);
	cr_assert_str_eq(r->tasks[0].status, "completed");
	cr_assert_not(r->tasks[0].cancel_requested);
	r = FX_CANCEL(&fx, sp, NULL, CM_OK);
	cr_assert_str_eq(r->tasks[0].task_id, task);
	cr_assert_str_eq(r->tasks[0].status, "completed");
	cr_assert_eq(fx.n_pubs, pubs);
	FX_LOG(&fx, sp, "space_opened", "queued", "started", "completed");
}

Test(task, cancel_without_task_id_targets_active_then_most_recent)
{
	const char *t1, *t2;
	struct pr_rep *r;

	t1 = fx_task(&fx, sp, "r1");
	fx_claim(&fx, sp, "actor-1");
	FX_FINISH(&fx, t1, "actor-1", "completed", NULL, NULL, CM_OK);
	fx_advance(&fx, 1000);
	t2 = fx_task(&fx, sp, "r2");

	r = FX_CANCEL(&fx, sp, NULL, CM_OK);
	cr_assert_str_eq(r->tasks[0].task_id, t2);
	cr_assert_str_eq(r->tasks[0].status, "cancelled");
	/* No active task now: the most recent one, as it is. */
	r = FX_CANCEL(&fx, sp, NULL, CM_OK);
	cr_assert_str_eq(r->tasks[0].task_id, t2);
	cr_assert_not(r->created);
	cr_assert_str_eq(
	    fx_task_get(&fx, sp, t1)->tasks[0].status, "completed");
	FX_LOG(&fx, sp, "space_opened", "queued", "started", "completed",
	    "queued", "cancel_requested", "cancelled");
}

Test(task, cancel_on_a_space_without_tasks_is_no_task)
{
	const char *other = fx_space(&fx, 1), *task;
	struct pr_req q;

	FX_CANCEL(&fx, sp, NULL, CM_E_NO_TASK);
	FX_LOG(&fx, sp, "space_opened");
	/* A task of another Space is not found here. */
	task = fx_task(&fx, other, "r1");
	FX_CANCEL(&fx, sp, task, CM_E_NOT_FOUND);
	cr_assert_str_eq(
	    fx_task_get(&fx, other, task)->tasks[0].status, "queued");
	fx_req(&fx, &q, PR_OP_TASK_CANCEL);
	q.workspace_id = fx.ws2;
	q.space_id = other;
	FX_CALL(&fx, &q, CM_E_NOT_FOUND);
}

/* ---- args stay private
 * -------------------------------------------------------------- */

#define ARG_CANARY "arg-canary-31b7"

Test(task, arg_values_never_appear_in_task_replies)
{
	const char *args = "{\"url\": \"https://example.com/" ARG_CANARY "\"}";
	struct pr_rep *claim;
	const char *task;

	task =
	    FX_SUBMIT(&fx, sp, "r1", "navigate", args, CM_OK)->tasks[0].task_id;
	FX_SUBMIT(&fx, sp, "r1", "navigate", args, CM_OK);
	fx_task_get(&fx, sp, task);
	task_list(sp, 0, CM_OK);
	fx_space_get(&fx, fx.ws, sp);
	claim = fx_claim(&fx, sp, "actor-1");
	FX_CANCEL(&fx, sp, task, CM_OK);
	FX_FINISH(&fx, task, "actor-1", "cancelled", NULL, NULL, CM_OK);
	FX_LOG(&fx, sp, "space_opened", "queued", "started", "cancel_requested",
	    "cancelled");

	/* The executor does get them... */
	cr_assert_not_null(claim->args);
	cr_assert(strstr(claim->args, ARG_CANARY) != NULL);
	/* ...and nothing else does: only the key. */
	for (size_t i = 0; i < fx.n_reps; i++) {
		const struct pr_rep *r = fx.reps[i].rep;

		if (fx.reps[i].op == PR_OP_ACTOR_CLAIM)
			continue;
		cr_assert(!fx_rep_has(r, ARG_CANARY), "%s reply carries an arg",
		    pr_op_name(fx.reps[i].op));
		for (size_t k = 0; k < r->n_tasks; k++) {
			cr_assert_eq(r->tasks[k].arg_keys.n, 1);
			cr_assert_str_eq(r->tasks[k].arg_keys.v[0], "url");
		}
	}
	for (size_t i = 0; i < fx.n_pubs; i++)
		cr_assert(
		    !fx_mem_has(fx.pubs[i].raw, fx.pubs[i].raw_len, ARG_CANARY),
		    "event %s carries an arg", fx.pubs[i].ev.kind);
}
