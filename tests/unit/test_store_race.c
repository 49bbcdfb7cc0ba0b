/*
 * test_store_race.c: two stores writing one database at once, as two
 * hosts' stores share one PostgreSQL: creates for one instance, event
 * numbering, a create that loses on the unique index, and a group a
 * deadlock aborted that runs again.
 */
#include <pthread.h>

#include "clock.h"
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

/* ---- two stores writing one database at once ---------------------------
 *
 * As two hosts' stores share one PostgreSQL (and, serialised by SQLite's
 * write lock, two connections share one file).  Each thread drives its own
 * store with requests built beforehand, and asserts nothing itself.
 */
#define RACE_N 40

struct racer {
	struct st_store *st;
	const char *space; /* the events race: the Space both submit to */
	const char *tag;
	struct pr_req q[RACE_N];
	char op_ids[RACE_N][2][32];
	char rids[RACE_N][32];
	enum cm_err err[RACE_N];    /* of the create, or the submit */
	enum cm_err cancel[RACE_N]; /* the events race: of the cancel */
	int n_ok;
};

/* Creates of one Space on instance 0, each with its own op_id. */
static void *
race_creates(void *arg)
{
	struct racer *r = arg;

	for (int i = 0; i < RACE_N; i++) {
		struct pr_rep rep;

		st_store_call(r->st, &r->q[i], &rep, NULL, NULL);
		r->err[i] = rep.err;
		r->n_ok += rep.err == CM_OK;
		pr_rep_free(&rep);
	}
	return NULL;
}

/* Submits to one Space, and cancels each task that was queued. */
static void *
race_events(void *arg)
{
	struct racer *r = arg;

	for (int i = 0; i < RACE_N; i++) {
		struct pr_rep rep;
		struct pr_req c;
		char tid[CM_ID_MAX + 1];

		st_store_call(r->st, &r->q[i], &rep, NULL, NULL);
		r->err[i] = rep.err;
		r->cancel[i] = CM_OK;
		if (rep.err == CM_OK && rep.n_tasks == 1) {
			r->n_ok++;
			memset(&c, 0, sizeof(c));
			c.op = PR_OP_TASK_CANCEL;
			c.op_id = r->op_ids[i][1];
			c.workspace_id = fx.ws;
			c.space_id = r->space;
			snprintf(tid, sizeof(tid), "%s", rep.tasks[0].task_id);
			c.task_id = tid;
			pr_rep_free(&rep);
			st_store_call(r->st, &c, &rep, NULL, NULL);
			r->cancel[i] = rep.err;
		}
		pr_rep_free(&rep);
	}
	return NULL;
}

static void
race(struct racer *r, void *(*fn)(void *))
{
	pthread_t t[2];

	for (int k = 0; k < 2; k++)
		cr_assert_eq(pthread_create(&t[k], NULL, fn, &r[k]), 0);
	for (int k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
}

static void
racers_open(struct racer *r)
{
	memset(r, 0, 2 * sizeof(*r));
	r[0].st = fx.st;
	r[0].tag = "a";
	r[1].tag = "b";
	cr_assert_eq(st_store_open(&r[1].st, &fx.opts), 0);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < RACE_N; i++) {
			snprintf(r[k].op_ids[i][0], sizeof(r[k].op_ids[i][0]),
			    "race-%s-%d", r[k].tag, i);
			snprintf(r[k].op_ids[i][1], sizeof(r[k].op_ids[i][1]),
			    "race-%s-%d-cancel", r[k].tag, i);
			snprintf(r[k].rids[i], sizeof(r[k].rids[i]), "rq-%s-%d",
			    r[k].tag, i);
		}
}

Test(store, racing_creates_for_one_instance_leave_one_active_space)
{
	struct racer r[2];

	fx_provision(&fx, 1);
	racers_open(r);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < RACE_N; i++) {
			fx_create_req(&fx, &r[k].q[i], 0);
			r[k].q[i].op_id = r[k].op_ids[i][0];
		}
	race(r, race_creates);
	st_store_close(r[1].st);

	for (int k = 0; k < 2; k++)
		for (int i = 0; i < RACE_N; i++)
			cr_assert(r[k].err[i] == CM_OK ||
			              r[k].err[i] == CM_E_INSTANCE_IN_USE,
			    "create %s-%d: %s", r[k].tag, i,
			    cm_err_code(r[k].err[i]));
	cr_assert_eq(r[0].n_ok + r[1].n_ok, 1, "%d creates succeeded",
	    r[0].n_ok + r[1].n_ok);
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT count(*) FROM browser_spaces"
	                 " WHERE status <> 'closed'",
	                 (const char *)NULL),
	    1);
}

Test(store, racing_event_appends_number_without_gaps_or_repeats)
{
	struct racer r[2];
	const char *sp;
	int64_t n, max;

	fx_provision(&fx, 1);
	sp = fx_space(&fx, 0);
	racers_open(r);
	for (int k = 0; k < 2; k++) {
		r[k].space = sp;
		for (int i = 0; i < RACE_N; i++) {
			fx_req(&fx, &r[k].q[i], PR_OP_TASK_SUBMIT);
			r[k].q[i].op_id = r[k].op_ids[i][0];
			r[k].q[i].workspace_id = fx.ws;
			r[k].q[i].space_id = sp;
			r[k].q[i].request_id = r[k].rids[i];
			r[k].q[i].capability = "noop";
			r[k].q[i].args = "{}";
		}
	}
	race(r, race_events);
	st_store_close(r[1].st);

	for (int k = 0; k < 2; k++)
		for (int i = 0; i < RACE_N; i++) {
			cr_assert(r[k].err[i] == CM_OK ||
			              r[k].err[i] == CM_E_TASK_IN_PROGRESS,
			    "submit %s-%d: %s", r[k].tag, i,
			    cm_err_code(r[k].err[i]));
			cr_assert_eq(r[k].cancel[i], CM_OK, "cancel %s-%d: %s",
			    r[k].tag, i, cm_err_code(r[k].cancel[i]));
		}
	cr_assert_gt(r[0].n_ok + r[1].n_ok, 1);
	n = fx_sql_int(&fx,
	    "SELECT count(*) FROM browser_space_events WHERE space_id = ?1", sp,
	    (const char *)NULL);
	max = fx_sql_int(&fx,
	    "SELECT max(sequence) FROM browser_space_events"
	    " WHERE space_id = ?1",
	    sp, (const char *)NULL);
	/* space_opened, then queued, cancel_requested and cancelled for each
	 * task that was queued; UNIQUE (space_id, sequence) forbids repeats. */
	cr_assert_eq(n, 1 + 3 * (int64_t)(r[0].n_ok + r[1].n_ok));
	cr_assert_eq(max, n, "%lld events, the last numbered %lld",
	    (long long)n, (long long)max);
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT min(sequence) FROM browser_space_events"
	                 " WHERE space_id = ?1",
	                 sp, (const char *)NULL),
	    1);
}

struct blocked_call {
	struct pr_req q;
	enum cm_err err;
};

static void *
blocked_call_run(void *arg)
{
	struct blocked_call *b = arg;
	struct pr_rep rep;

	st_store_call(fx.st, &b->q, &rep, NULL, NULL);
	b->err = rep.err;
	pr_rep_free(&rep);
	return NULL;
}

/*
 * Another host's store, mid-transaction: a Space on instance i inserted
 * and not committed.  Returns its connection (the caller commits).
 */
static PGconn *
other_host_inserts_a_space(size_t i)
{
	PGconn *other = fx_pg_connect(fx.dsn);
	PGresult *res;
	char sql[512];

	snprintf(sql, sizeof(sql),
	    "BEGIN; INSERT INTO browser_spaces (id, workspace_id,"
	    " browser_instance_id, owner_type, owner_id, status, created_at,"
	    " updated_at) VALUES ('s-other-host', '%s', '%s', 'operator',"
	    " '%s', 'idle', 0, 0)",
	    fx.ws, fx.inst[i], fx.mgr);
	res = PQexec(other, sql);
	cr_assert_eq(PQresultStatus(res), PGRES_COMMAND_OK, "%s",
	    PQresultErrorMessage(res));
	PQclear(res);
	return other;
}

/*
 * Bounded poll: until some connection has waited on a lock the other
 * host's transaction holds for at least min_ms (the cluster is shared
 * with other tests, so a wait of theirs never counts).
 */
static void
wait_for_a_lock_wait(PGconn *other, int min_ms, const char *never)
{
	int64_t deadline = cm_now_ms() + 30000;
	char pid[16], age[32];

	snprintf(pid, sizeof(pid), "%d", PQbackendPID(other));
	snprintf(age, sizeof(age), "%d milliseconds", min_ms);
	while (fx_sql_int(&fx,
	           "SELECT count(*) FROM pg_locks WHERE NOT granted"
	           " AND ?1::int = ANY(pg_blocking_pids(pid))"
	           " AND waitstart <= now() - ?2::interval",
	           pid, age, (const char *)NULL) < 1) {
		cr_assert_lt(cm_now_ms(), deadline, "%s", never);
		usleep(10000);
	}
}

/*
 * The race the partial unique index decides: another host's store has
 * inserted a Space for the instance and not yet committed, so this
 * store's check sees none, and its insert waits on the index until the
 * other commits.  It then fails on the index, which is answered
 * browser_instance_in_use, and the group goes on: on PostgreSQL the
 * failed insert must not abort the whole transaction.
 */
Test(store, a_create_that_loses_on_the_index_is_instance_in_use)
{
	struct blocked_call b;
	struct pr_req q;
	pthread_t t;
	PGconn *other;
	PGresult *res;

	FX_PG_ONLY(&fx, "SQLite has one writer at a time");
	fx_provision(&fx, 1);
	other = other_host_inserts_a_space(0);

	memset(&b, 0, sizeof(b));
	fx_create_req(&fx, &b.q, 0);
	cr_assert_eq(pthread_create(&t, NULL, blocked_call_run, &b), 0);
	wait_for_a_lock_wait(
	    other, 0, "the store's insert never waited on the index");
	res = PQexec(other, "COMMIT");
	PQclear(res);
	PQfinish(other);
	pthread_join(t, NULL);
	cr_assert_eq(b.err, CM_E_INSTANCE_IN_USE, "the losing create got %s",
	    cm_err_code(b.err));

	/* The store goes on: its next write commits. */
	fx_req(&fx, &q, PR_OP_WORKSPACE_CREATE);
	q.name = "after-the-race";
	FX_CALL(&fx, &q, CM_OK);
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT count(*) FROM browser_spaces"
	                 " WHERE status <> 'closed'",
	                 (const char *)NULL),
	    1);
}

struct blocked_group {
	struct st_item items[2];
};

static void *
blocked_group_run(void *arg)
{
	struct blocked_group *g = arg;

	fx_exec(&fx, g->items, 2);
	return NULL;
}

/*
 * Another host's transaction and a group deadlock, which no lock order of
 * the group's own can prevent: the other holds a row of the group's create
 * (an uncommitted Space on the instance) and then wants the Space row the
 * group locked for its submit.  The group's wait began half a second
 * before the other's, so PostgreSQL's check (a second into a wait) fails
 * the group's insert; alone, the group would answer its create with that
 * error.  It runs again, and its writes are answered as that run found
 * them.  The run again may take the Space row before the waking other
 * does, and deadlock once more, where either may be the one aborted: the
 * other commits if its lock was granted and rolls back if it was not,
 * and the group's create answers what it met.
 */
Test(store, a_group_a_deadlock_aborted_runs_again)
{
	struct blocked_group g;
	struct pr_req submit, create;
	struct pr_rep *r;
	pthread_t t;
	PGconn *other;
	PGresult *res;
	char sql[512];
	const char *sp;
	bool other_won;

	FX_PG_ONLY(&fx, "SQLite has one writer at a time");
	fx_provision(&fx, 2);
	sp = fx_space(&fx, 0);
	other = other_host_inserts_a_space(1);

	fx_req(&fx, &submit, PR_OP_TASK_SUBMIT);
	submit.workspace_id = fx.ws;
	submit.space_id = sp;
	submit.request_id = "after-a-deadlock";
	submit.capability = "noop";
	submit.args = "{}";
	fx_create_req(&fx, &create, 1);
	memset(&g, 0, sizeof(g));
	g.items[0].req = fx_encode(&submit, &g.items[0].req_len);
	g.items[1].req = fx_encode(&create, &g.items[1].req_len);
	cr_assert_eq(pthread_create(&t, NULL, blocked_group_run, &g), 0);
	wait_for_a_lock_wait(
	    other, 500, "the group's create never waited on the other's row");
	/* The other now waits for the group: a deadlock. */
	snprintf(sql, sizeof(sql),
	    "SELECT id FROM browser_spaces WHERE id = '%s' FOR UPDATE", sp);
	res = PQexec(other, sql);
	other_won = PQresultStatus(res) == PGRES_TUPLES_OK;
	cr_assert(other_won || strcmp(PQresultErrorField(res, PG_DIAG_SQLSTATE),
	                           "40P01") == 0,
	    "the other's lock: %s", PQresultErrorMessage(res));
	PQclear(res);
	res = PQexec(other, other_won ? "COMMIT" : "ROLLBACK");
	PQclear(res);
	PQfinish(other);
	pthread_join(t, NULL);

	r = fx_item_rep(&fx, &g.items[0], PR_OP_TASK_SUBMIT);
	FX_EXPECT(r, CM_OK);
	cr_assert_eq(r->n_tasks, 1);
	r = fx_item_rep(&fx, &g.items[1], PR_OP_SPACE_CREATE);
	FX_EXPECT(r, other_won ? CM_E_INSTANCE_IN_USE : CM_OK);
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT count(*) FROM browser_space_tasks"
	                 " WHERE space_id = ?1 AND request_id = ?2",
	                 sp, "after-a-deadlock", (const char *)NULL),
	    1);
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT count(*) FROM browser_spaces"
	                 " WHERE browser_instance_id = ?1"
	                 " AND status <> 'closed'",
	                 fx.inst[1], (const char *)NULL),
	    1, "one open Space on the instance, the other's or the group's");
	for (int i = 0; i < 2; i++) {
		free((void *)g.items[i].req);
		free(g.items[i].rep);
	}
}
