/*
 * test_store.c: the engine itself: op_id memory and its pruning, group
 * commit, publish after commit and malformed requests (its disk and
 * upkeep are test_store_disk.c, two stores at once test_store_race.c).
 */
#include "store_fixture.h"

static struct fx fx;

static void
setup(void)
{
	fx_setup(&fx, 0);
}

static void
teardown(void)
{
	fx_teardown(&fx);
}

TestSuite(store, .init = setup, .fini = teardown);

/* Runs one encoded request alone; returns its reply bytes (caller frees). */
static char *
exec_bytes(const char *req, size_t len, size_t *rep_len)
{
	struct st_item it = {.req = req, .req_len = len};

	cr_assert_eq(fx_exec(&fx, &it, 1), 0, "the group did not commit");
	cr_assert_not_null(it.rep, "no reply");
	*rep_len = it.rep_len;
	return it.rep;
}

static void
assert_same_bytes(
    const char *a, size_t alen, const char *b, size_t blen, const char *what)
{
	cr_assert_eq(
	    alen, blen, "%s: reply of %zu bytes, then %zu", what, alen, blen);
	cr_assert_eq(memcmp(a, b, alen), 0, "%s: reply bytes differ", what);
}

static enum cm_err
bytes_err(const char *rep, size_t len)
{
	struct pr_rep r;
	char err[256] = "";
	enum cm_err e;

	memset(&r, 0, sizeof(r));
	cr_assert_eq(pr_rep_decode(rep, len, &r, err, sizeof(err)), 0,
	    "reply does not decode: %s", err);
	e = r.err;
	pr_rep_free(&r);
	return e;
}

static int64_t
workspaces_named(const char *name)
{
	return fx_sql_int(&fx,
	    "SELECT count(*) FROM workspaces WHERE name = ?1", name,
	    (const char *)NULL);
}

/* ---- op_id memory ---------------------------------------------------------
 */

Test(store, opid_repeat_gets_first_reply_and_applies_once)
{
	struct pr_req q;
	char *req, *r1, *r2, *r3;
	size_t len, l1, l2, l3;

	fx_req(&fx, &q, PR_OP_WORKSPACE_CREATE);
	q.name = "dedup";
	req = fx_encode(&q, &len);

	r1 = exec_bytes(req, len, &l1);
	cr_assert_eq(bytes_err(r1, l1), CM_OK);
	r2 = exec_bytes(req, len, &l2);
	assert_same_bytes(r1, l1, r2, l2, "same op_id twice");
	cr_assert_eq(workspaces_named("dedup"), 1);

	/* The memory is in the database: a restarted store still has it. */
	fx_reopen(&fx);
	r3 = exec_bytes(req, len, &l3);
	assert_same_bytes(r1, l1, r3, l3, "same op_id after reopen");
	cr_assert_eq(workspaces_named("dedup"), 1);

	/* Control: the same content under a new op_id is a new request, and
	 * the name is taken.  So the OK above came from the op_id memory. */
	fx_req(&fx, &q, PR_OP_WORKSPACE_CREATE);
	q.name = "dedup";
	FX_CALL(&fx, &q, CM_E_CONFLICT);

	free(req);
	free(r1);
	free(r2);
	free(r3);
}

Test(store, opid_repeat_of_submit_writes_one_task_and_one_event)
{
	struct pr_req q;
	const char *sp;
	char *req, *r1, *r2, *r3;
	size_t len, l1, l2, l3, pubs;

	fx_provision(&fx, 1);
	sp = fx_space(&fx, 0);
	fx_req(&fx, &q, PR_OP_TASK_SUBMIT);
	q.workspace_id = fx.ws;
	q.space_id = sp;
	q.request_id = "r1";
	q.capability = "noop";
	req = fx_encode(&q, &len);

	pubs = fx.n_pubs;
	r1 = exec_bytes(req, len, &l1);
	cr_assert_eq(bytes_err(r1, l1), CM_OK);
	cr_assert_eq(fx.n_pubs, pubs + 1, "the submit publishes its event");
	r2 = exec_bytes(req, len, &l2);
	assert_same_bytes(r1, l1, r2, l2, "repeated submit");
	cr_assert_eq(fx.n_pubs, pubs + 1, "a repeat publishes nothing");

	fx_reopen(&fx);
	r3 = exec_bytes(req, len, &l3);
	assert_same_bytes(r1, l1, r3, l3, "repeated submit after reopen");
	cr_assert_eq(fx.n_pubs, pubs + 1);

	cr_assert_eq(fx_count_tasks(&fx, sp), 1);
	FX_LOG(&fx, sp, "space_opened", "queued");
	free(req);
	free(r1);
	free(r2);
	free(r3);
}

/*
 * A repeat that would change rows again: the re-sent claim would take the
 * task queued since.  It gets its first reply, the new task stays queued,
 * and the write sharing its group is applied once.
 */
Test(store, opid_repeat_that_would_change_rows_again_gets_its_first_reply)
{
	struct pr_req claim, other;
	struct st_item it[2];
	const char *sp, *t1, *t2;
	char *req, *r1;
	size_t len, l1, pubs;

	fx_provision(&fx, 1);
	sp = fx_space(&fx, 0);
	t1 = fx_task(&fx, sp, "t1");
	fx_req(&fx, &claim, PR_OP_ACTOR_CLAIM);
	claim.space_id = sp;
	claim.lease_holder = "actor-1";
	req = fx_encode(&claim, &len);
	r1 = exec_bytes(req, len, &l1);
	cr_assert_eq(bytes_err(r1, l1), CM_OK);
	FX_FINISH(&fx, t1, "actor-1", "completed", "{}", NULL, CM_OK);
	t2 = fx_task(&fx, sp, "t2");

	fx_req(&fx, &other, PR_OP_WORKSPACE_CREATE);
	other.name = "beside-the-repeat";
	memset(it, 0, sizeof(it));
	it[0].req = fx_encode(&other, &it[0].req_len);
	it[1].req = req;
	it[1].req_len = len;
	pubs = fx.n_pubs;
	cr_assert_eq(fx_exec(&fx, it, 2), 0);

	assert_same_bytes(r1, l1, it[1].rep, it[1].rep_len, "repeated claim");
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT count(*) FROM browser_space_tasks"
	                 " WHERE id = ?1 AND status = 'queued'",
	                 t2, (const char *)NULL),
	    1, "the repeat claimed the task queued after it");
	cr_assert_eq(bytes_err(it[0].rep, it[0].rep_len), CM_OK);
	cr_assert_eq(workspaces_named("beside-the-repeat"), 1);
	cr_assert_eq(fx.n_pubs, pubs, "the repeat published an event");
	FX_LOG(&fx, sp, "space_opened", "queued", "started", "completed",
	    "queued");
	free((void *)it[0].req);
	free(it[0].rep);
	free(it[1].rep);
	free(req);
	free(r1);
}

/*
 * A write that failed inside the store (internal) must run again when it
 * is re-sent, not get the failure back from the op_id memory: the failure
 * says nothing about the request.
 */
Test(store, opid_internal_failure_is_not_remembered)
{
	struct pr_req q;
	const char *inst;
	char *req, *r1, *r2;
	size_t len, l1, l2;
	char sql[256 + sizeof(FX_MANIFEST)];

	fx_provision(&fx, 0);
	/* A bundle whose stored manifest does not parse: create fails inside
	 * the store, with internal. */
	cr_assert_eq(fx_raw_exec(&fx,
	                 "INSERT INTO runtime_bundles (id, name, version,"
	                 " manifest, created_at)"
	                 " VALUES ('broken', 'broken', '1', 'not json', 0)"),
	    SQLITE_OK);
	inst = fx_instance(&fx, "inst-broken", "broken", NULL);
	fx_binding(&fx, fx.ws, inst);
	fx_req(&fx, &q, PR_OP_SPACE_CREATE);
	q.workspace_id = fx.ws;
	q.browser_instance_id = inst;
	q.owner_type = "operator";
	q.owner_id = fx.mgr;
	req = fx_encode(&q, &len);

	r1 = exec_bytes(req, len, &l1);
	cr_assert_eq(bytes_err(r1, l1), CM_E_INTERNAL);
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT count(*) FROM store_ops"
	                 " WHERE op_id = ?1",
	                 q.op_id, (const char *)NULL),
	    0, "an internal failure was stored in the op_id memory");

	/* Repair the bundle; the re-sent request now succeeds. */
	snprintf(sql, sizeof(sql),
	    "UPDATE runtime_bundles SET manifest = '%s' WHERE id = 'broken'",
	    FX_MANIFEST);
	cr_assert_eq(fx_raw_exec(&fx, sql), SQLITE_OK);
	r2 = exec_bytes(req, len, &l2);
	cr_assert_eq(bytes_err(r2, l2), CM_OK,
	    "the re-sent create got its old internal failure back");
	free(req);
	free(r1);
	free(r2);
}

/* An idle actor polls with claims that find nothing: they cost no row. */
Test(store, opid_memory_skips_writes_that_changed_nothing)
{
	static const char count_sql[] = "SELECT count(*) FROM store_ops";
	const char *sp;
	int64_t before;

	fx_provision(&fx, 1);
	sp = fx_space(&fx, 0);
	before = fx_sql_int(&fx, count_sql, (const char *)NULL);
	cr_assert_gt(before, 0, "provisioning writes were not remembered");
	for (int i = 0; i < 5; i++)
		cr_assert_eq(fx_claim(&fx, sp, "actor-1")->n_tasks, 0);
	cr_assert_eq(fx_sql_int(&fx, count_sql, (const char *)NULL), before,
	    "empty claims were remembered");
	/* A claim that does take a task is remembered. */
	fx_task(&fx, sp, "r1");
	cr_assert_eq(fx_claim(&fx, sp, "actor-1")->n_tasks, 1);
	cr_assert_eq(
	    fx_sql_int(&fx, count_sql, (const char *)NULL), before + 2);
}

/* ---- group commit
 * ------------------------------------------------------------ */

Test(store, group_answers_each_item_and_a_failure_undoes_only_itself)
{
	struct pr_req q[5];
	struct st_item it[5];
	struct pr_rep *r[5];
	const char *a, *b;
	size_t pubs;

	fx_provision(&fx, 2);
	a = fx_space(&fx, 0);
	b = fx_space(&fx, 1);

	fx_req(&fx, &q[0], PR_OP_TASK_SUBMIT);
	q[0].workspace_id = fx.ws;
	q[0].space_id = a;
	q[0].request_id = "a1";
	q[0].capability = "noop";
	/* A second active task on a: fails. */
	fx_req(&fx, &q[1], PR_OP_TASK_SUBMIT);
	q[1].workspace_id = fx.ws;
	q[1].space_id = a;
	q[1].request_id = "a2";
	q[1].capability = "noop";
	fx_req(&fx, &q[2], PR_OP_TASK_SUBMIT);
	q[2].workspace_id = fx.ws;
	q[2].space_id = b;
	q[2].request_id = "b1";
	q[2].capability = "noop";
	fx_req(&fx, &q[3], PR_OP_WORKSPACE_CREATE);
	q[3].name = "ws-main"; /* taken: fails */
	fx_req(&fx, &q[4], PR_OP_WORKSPACE_CREATE);
	q[4].name = "ws-group";
	for (size_t i = 0; i < 5; i++) {
		memset(&it[i], 0, sizeof(it[i]));
		it[i].req = fx_encode(&q[i], &it[i].req_len);
	}

	pubs = fx.n_pubs;
	cr_assert_eq(fx_exec(&fx, it, 5), 0);
	for (size_t i = 0; i < 5; i++)
		r[i] = fx_item_rep(&fx, &it[i], q[i].op);
	FX_EXPECT(r[0], CM_OK);
	FX_EXPECT(r[1], CM_E_TASK_IN_PROGRESS);
	FX_EXPECT(r[2], CM_OK);
	FX_EXPECT(r[3], CM_E_CONFLICT);
	FX_EXPECT(r[4], CM_OK);

	cr_assert_eq(fx_count_tasks(&fx, a), 1);
	cr_assert_eq(fx_count_tasks(&fx, b), 1);
	cr_assert_eq(workspaces_named("ws-group"), 1);
	cr_assert_eq(workspaces_named("ws-main"), 1);
	/* The failed item's work (if any) was rolled back with its events. */
	cr_assert_eq(fx.n_pubs, pubs + 2);
	cr_assert_str_eq(fx.pubs[pubs].ev.space_id, a);
	cr_assert_str_eq(fx.pubs[pubs].ev.task_id, r[0]->tasks[0].task_id);
	cr_assert_str_eq(fx.pubs[pubs + 1].ev.space_id, b);
	FX_LOG(&fx, a, "space_opened", "queued");
	FX_LOG(&fx, b, "space_opened", "queued");
	for (size_t i = 0; i < 5; i++) {
		free((void *)it[i].req);
		free(it[i].rep);
	}
}

Test(store, group_publishes_after_commit_in_sequence_order)
{
	static const char *const kinds[] = {
	    "queued", "cancel_requested", "cancelled"};
	struct pr_req q[4];
	struct st_item it[4];
	const char *a, *b;
	size_t pubs;

	fx_provision(&fx, 2);
	a = fx_space(&fx, 0);
	b = fx_space(&fx, 1);

	/* a: submit then cancel (queued → cancelled at once); b: submit, then
	 * close, which cancels the queued task. */
	fx_req(&fx, &q[0], PR_OP_TASK_SUBMIT);
	q[0].workspace_id = fx.ws;
	q[0].space_id = a;
	q[0].request_id = "a1";
	q[0].capability = "noop";
	fx_req(&fx, &q[1], PR_OP_TASK_CANCEL);
	q[1].workspace_id = fx.ws;
	q[1].space_id = a;
	fx_req(&fx, &q[2], PR_OP_TASK_SUBMIT);
	q[2].workspace_id = fx.ws;
	q[2].space_id = b;
	q[2].request_id = "b1";
	q[2].capability = "noop";
	fx_req(&fx, &q[3], PR_OP_SPACE_CLOSE);
	q[3].workspace_id = fx.ws;
	q[3].space_id = b;
	for (size_t i = 0; i < 4; i++) {
		memset(&it[i], 0, sizeof(it[i]));
		it[i].req = fx_encode(&q[i], &it[i].req_len);
	}

	fx.pub_check_commit = true;
	pubs = fx.n_pubs;
	cr_assert_eq(fx_exec(&fx, it, 4), 0);
	for (size_t i = 0; i < 4; i++)
		FX_EXPECT(fx_item_rep(&fx, &it[i], q[i].op), CM_OK);

	/* Six events in commit order, and the close's wake-up notice for b's
	 * actor; each already visible to another connection when it was
	 * published. */
	cr_assert_eq(fx_pubs_count(&fx, pubs, NULL, false), 6,
	    "%zu events published, want 6",
	    fx_pubs_count(&fx, pubs, NULL, false));
	cr_assert_eq(fx_pubs_count(&fx, pubs, b, true), 1,
	    "the close published no notice for the actor");
	cr_assert_eq(fx.n_pubs, pubs + 7);
	for (size_t i = pubs, k = 0; i < fx.n_pubs; i++) {
		const struct fx_pub *p = &fx.pubs[i];

		cr_assert(p->visible,
		    "%s #%lld was published before its commit", p->ev.kind,
		    (long long)p->ev.sequence);
		cr_assert_str_eq(p->ev.workspace_id, fx.ws);
		if (fx_is_notice(p)) {
			cr_assert_str_eq(p->ev.space_id, b);
			cr_assert_str_eq(p->ev.kind, "close_requested");
			continue;
		}
		cr_assert_str_eq(p->ev.space_id, k < 3 ? a : b);
		cr_assert_str_eq(p->ev.kind, kinds[k % 3]);
		/* space_opened was 1: the group's events are 2, 3, 4. */
		cr_assert_eq(p->ev.sequence, (int64_t)(k % 3) + 2);
		k++;
	}
	FX_LOG(
	    &fx, a, "space_opened", "queued", "cancel_requested", "cancelled");
	FX_LOG(
	    &fx, b, "space_opened", "queued", "cancel_requested", "cancelled");
	for (size_t i = 0; i < 4; i++) {
		free((void *)it[i].req);
		free(it[i].rep);
	}
}

/*
 * A write that fails halfway, after it has already written, is undone to
 * its savepoint: its rows and its queued events go, the group's other
 * writes stay.  The fault is injected with a trigger that makes the
 * cancel's second event insert fail.
 */
Test(store, group_item_failing_after_writes_is_rolled_back_alone)
{
	struct pr_req q[3];
	struct st_item it[3];
	const char *a, *b, *ta;
	size_t pubs;

	fx_provision(&fx, 2);
	a = fx_space(&fx, 0);
	b = fx_space(&fx, 1);
	ta = fx_task(&fx, a, "a1");
	cr_assert_eq(fx_raw_exec(&fx,
	                 fx.pg ? "CREATE FUNCTION fx_fault() RETURNS trigger"
	                         " LANGUAGE plpgsql AS $$ BEGIN"
	                         " IF NEW.kind = 'cancelled' THEN"
	                         " RAISE EXCEPTION 'injected fault'; END IF;"
	                         " RETURN NEW; END $$;"
	                         " CREATE TRIGGER fx_fault BEFORE INSERT ON"
	                         " browser_space_events FOR EACH ROW"
	                         " EXECUTE FUNCTION fx_fault()"
	                       : "CREATE TRIGGER fx_fault BEFORE INSERT ON"
	                         " browser_space_events WHEN NEW.kind ="
	                         " 'cancelled' BEGIN SELECT RAISE(ABORT,"
	                         " 'injected fault'); END"),
	    SQLITE_OK);

	fx_req(&fx, &q[0], PR_OP_TASK_SUBMIT);
	q[0].workspace_id = fx.ws;
	q[0].space_id = b;
	q[0].request_id = "b1";
	q[0].capability = "noop";
	/* Writes cancel_requested (flag and event), then fails on cancelled. */
	fx_req(&fx, &q[1], PR_OP_TASK_CANCEL);
	q[1].workspace_id = fx.ws;
	q[1].space_id = a;
	q[1].task_id = ta;
	fx_req(&fx, &q[2], PR_OP_WORKSPACE_CREATE);
	q[2].name = "after-the-fault";
	for (size_t i = 0; i < 3; i++) {
		memset(&it[i], 0, sizeof(it[i]));
		it[i].req = fx_encode(&q[i], &it[i].req_len);
	}
	pubs = fx.n_pubs;
	cr_assert_eq(fx_exec(&fx, it, 3), 0);
	FX_EXPECT(fx_item_rep(&fx, &it[0], q[0].op), CM_OK);
	FX_EXPECT(fx_item_rep(&fx, &it[1], q[1].op), CM_E_INTERNAL);
	FX_EXPECT(fx_item_rep(&fx, &it[2], q[2].op), CM_OK);

	/* Nothing of the cancel is left: not the flag, not its event. */
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT cancel_requested FROM browser_space_tasks"
	                 " WHERE id = ?1",
	                 ta, (const char *)NULL),
	    0, "the failed cancel's first write survived");
	cr_assert_eq(fx_pubs_count(&fx, pubs, a, false), 0,
	    "the failed cancel's event was published");
	cr_assert_eq(fx_pubs_count(&fx, pubs, b, false), 1);
	cr_assert_eq(workspaces_named("after-the-fault"), 1);
	FX_LOG(&fx, a, "space_opened", "queued");
	FX_LOG(&fx, b, "space_opened", "queued");

	/* Without the fault the same cancel works, numbering on from 3. */
	cr_assert_eq(fx_raw_exec(&fx,
	                 fx.pg ? "DROP TRIGGER fx_fault ON browser_space_events"
	                       : "DROP TRIGGER fx_fault"),
	    SQLITE_OK);
	FX_CANCEL(&fx, a, ta, CM_OK);
	FX_LOG(
	    &fx, a, "space_opened", "queued", "cancel_requested", "cancelled");
	for (size_t i = 0; i < 3; i++) {
		free((void *)it[i].req);
		free(it[i].rep);
	}
}

/*
 * A write that is sent ahead of its answer (on PostgreSQL, db.h) counts
 * as done only once the server says it changed the row it was for.  A
 * trigger makes the claim's UPDATE of the task change no row: the claim
 * then fails, the task stays queued and no started event goes out, rather
 * than the store answering for a write the database did not make.
 */
Test(store, a_write_that_changes_no_row_is_not_taken_as_done)
{
	struct pr_req q;
	const char *sp, *task;
	size_t pubs;

	fx_provision(&fx, 1);
	sp = fx_space(&fx, 0);
	task = fx_task(&fx, sp, "r1");
	cr_assert_eq(
	    fx_raw_exec(&fx, fx.pg ? "CREATE FUNCTION fx_skip() RETURNS trigger"
	                             " LANGUAGE plpgsql AS $$ BEGIN"
	                             " IF NEW.status = 'running' THEN"
	                             " RETURN NULL; END IF;"
	                             " RETURN NEW; END $$;"
	                             " CREATE TRIGGER fx_skip BEFORE UPDATE ON"
	                             " browser_space_tasks FOR EACH ROW"
	                             " EXECUTE FUNCTION fx_skip()"
	                           : "CREATE TRIGGER fx_skip BEFORE UPDATE ON"
	                             " browser_space_tasks WHEN NEW.status ="
	                             " 'running' BEGIN SELECT RAISE(IGNORE);"
	                             " END"),
	    SQLITE_OK);
	pubs = fx.n_pubs;
	fx_req(&fx, &q, PR_OP_ACTOR_CLAIM);
	q.space_id = sp;
	q.lease_holder = "actor-1";
	FX_CALL(&fx, &q, CM_E_INTERNAL);
	cr_assert_str_eq(fx_task_get(&fx, sp, task)->tasks[0].status, "queued");
	cr_assert_str_eq(
	    fx_space_get(&fx, fx.ws, sp)->spaces[0].status, "idle");
	cr_assert_eq(fx_pubs_count(&fx, pubs, sp, false), 0,
	    "an event of the claim was published");
	FX_LOG(&fx, sp, "space_opened", "queued");

	/* Without the trigger the same claim goes through. */
	cr_assert_eq(fx_raw_exec(&fx,
	                 fx.pg ? "DROP TRIGGER fx_skip ON browser_space_tasks"
	                       : "DROP TRIGGER fx_skip"),
	    SQLITE_OK);
	cr_assert_eq(fx_claim(&fx, sp, "actor-1")->n_tasks, 1);
	FX_LOG(&fx, sp, "space_opened", "queued", "started");
}

/* Appends a msgpack fixstr (at most 31 bytes). */
static void
mp_str(char *buf, size_t *n, const char *s)
{
	size_t len = strlen(s);

	cr_assert_lt(len, 32);
	buf[(*n)++] = (char)(0xa0 | len);
	memcpy(buf + *n, s, len);
	*n += len;
}

Test(store, malformed_requests_get_invalid_request_and_others_succeed)
{
	struct pr_req q;
	struct st_item it[6];
	char no_opid[64], unknown_key[64], unknown_op[64];
	size_t n_no_opid = 0, n_unknown_key = 0, n_unknown_op = 0, good_len;
	char *good1, *good2;
	static const char garbage[] = "\xc1\xff\x00 not msgpack";

	/* {"op": "workspace.create", "name": "no-opid"}: a write without op_id
	 */
	no_opid[n_no_opid++] = (char)0x82;
	mp_str(no_opid, &n_no_opid, "op");
	mp_str(no_opid, &n_no_opid, "workspace.create");
	mp_str(no_opid, &n_no_opid, "name");
	mp_str(no_opid, &n_no_opid, "no-opid");
	/* {"op": "ping", "bogus": "x"}: a key the op does not allow */
	unknown_key[n_unknown_key++] = (char)0x82;
	mp_str(unknown_key, &n_unknown_key, "op");
	mp_str(unknown_key, &n_unknown_key, "ping");
	mp_str(unknown_key, &n_unknown_key, "bogus");
	mp_str(unknown_key, &n_unknown_key, "x");
	/* {"op": "space.explode"} */
	unknown_op[n_unknown_op++] = (char)0x81;
	mp_str(unknown_op, &n_unknown_op, "op");
	mp_str(unknown_op, &n_unknown_op, "space.explode");

	fx_req(&fx, &q, PR_OP_WORKSPACE_CREATE);
	q.name = "good-1";
	good1 = fx_encode(&q, &good_len);
	memset(it, 0, sizeof(it));
	it[0].req = good1;
	it[0].req_len = good_len;
	it[1].req = garbage;
	it[1].req_len = sizeof(garbage) - 1;
	it[2].req = no_opid;
	it[2].req_len = n_no_opid;
	it[3].req = unknown_key;
	it[3].req_len = n_unknown_key;
	it[4].req = unknown_op;
	it[4].req_len = n_unknown_op;
	fx_req(&fx, &q, PR_OP_WORKSPACE_CREATE);
	q.name = "good-2";
	good2 = fx_encode(&q, &it[5].req_len);
	it[5].req = good2;

	cr_assert_eq(fx_exec(&fx, it, 6), 0);
	FX_EXPECT(fx_item_rep(&fx, &it[0], PR_OP_WORKSPACE_CREATE), CM_OK);
	for (size_t i = 1; i <= 4; i++)
		FX_EXPECT(
		    fx_item_rep(&fx, &it[i], PR_OP_PING), CM_E_INVALID_REQUEST);
	FX_EXPECT(fx_item_rep(&fx, &it[5], PR_OP_WORKSPACE_CREATE), CM_OK);
	cr_assert_eq(workspaces_named("good-1"), 1);
	cr_assert_eq(workspaces_named("good-2"), 1);
	cr_assert_eq(workspaces_named("no-opid"), 0);
	for (size_t i = 0; i < 6; i++) {
		free(it[i].rep);
		it[i].rep = NULL;
	}

	/* Truncated: every prefix of a valid request is rejected. */
	for (size_t cut = 1; cut < good_len; cut++) {
		struct st_item t = {.req = good1, .req_len = cut};

		cr_assert_eq(fx_exec(&fx, &t, 1), 0);
		FX_EXPECT(
		    fx_item_rep(&fx, &t, PR_OP_PING), CM_E_INVALID_REQUEST);
		free(t.rep);
	}
	free(good1);
	free(good2);
}

/* ---- pruning
 * -------------------------------------------------------------------- */

Test(store, prune_removes_only_op_ids_older_than_the_ttl)
{
	struct pr_req qa, qb;
	char *ra, *rb, *x1, *x2, *y1, *y2;
	size_t la, lb, lx1, lx2, ly1, ly2;
	static const char count_sql[] =
	    "SELECT count(*) FROM store_ops WHERE op_id = ?1";

	fx_req(&fx, &qa, PR_OP_WORKSPACE_CREATE);
	qa.name = "old";
	ra = fx_encode(&qa, &la);
	x1 = exec_bytes(ra, la, &lx1);

	fx_advance(&fx, CM_OPID_TTL_MS);
	fx_req(&fx, &qb, PR_OP_WORKSPACE_CREATE);
	qb.name = "young";
	rb = fx_encode(&qb, &lb);
	y1 = exec_bytes(rb, lb, &ly1);

	/* Exactly CM_OPID_TTL_MS old: still kept. */
	st_store_prune(fx.st);
	cr_assert_eq(
	    fx_sql_int(&fx, count_sql, qa.op_id, (const char *)NULL), 1);

	fx_advance(&fx, 1);
	st_store_prune(fx.st);
	cr_assert_eq(fx_sql_int(&fx, count_sql, qa.op_id, (const char *)NULL),
	    0, "an op_id older than the TTL survived the prune");
	cr_assert_eq(fx_sql_int(&fx, count_sql, qb.op_id, (const char *)NULL),
	    1, "a young op_id was pruned");

	/* Forgotten: the old request runs again (and meets its own row). */
	x2 = exec_bytes(ra, la, &lx2);
	cr_assert_eq(bytes_err(x2, lx2), CM_E_CONFLICT);
	/* Remembered: the young one still gets its first reply. */
	y2 = exec_bytes(rb, lb, &ly2);
	assert_same_bytes(y1, ly1, y2, ly2, "young op_id after prune");
	cr_assert_eq(workspaces_named("young"), 1);
	free(ra);
	free(rb);
	free(x1);
	free(x2);
	free(y1);
	free(y2);
}

Test(store, ping_answers_ok_and_reads_need_no_op_id)
{
	struct pr_req q;
	struct pr_rep *r;

	fx_req(&fx, &q, PR_OP_PING);
	cr_assert_null(q.op_id);
	r = FX_CALL(&fx, &q, CM_OK);
	cr_assert_not(r->created);
	cr_assert_eq(fx_sql_int(&fx, "SELECT count(*) FROM store_ops",
	                 (const char *)NULL),
	    0, "a read was remembered as a write");
}
