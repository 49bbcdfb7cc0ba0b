/*
 * spaced-store on PostgreSQL (pg/ tests' cluster, TK_PG_STATE): a group's
 * COMMIT is sent by the loop and answered to the acker (store/db_pg.c),
 * and nothing of a group leaves before that answer.
 *
 * A deferred constraint trigger, installed in the store's schema, runs
 * inside every COMMIT that inserted a task: it takes a few milliseconds,
 * so that a COMMIT is still running long after the loop sent it, and it
 * fails the COMMIT of a task whose request_id starts with "doomed".
 */
#include <criterion/criterion.h>
#include <libpq-fe.h>
#include <nng/nng.h>
#include <nng/protocol/pubsub0/sub.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "status.h"
#include "testkit.h"

#define KC_CLIENTS 16
#define KC_KILLS 8
#define KC_ACKS_MIN 30     /* acknowledged writes between kills, at least */
#define KC_ACKS_SPREAD 120 /* and at most this many more, at random */
#define KC_CYCLES_MAX 4096 /* per client */
#define KC_CALL_MS 3000
#define KC_ATTEMPTS 20 /* a request unanswered this many times is lost */
#define KC_WAIT_MS 60000
#define KC_DOOMED_EVERY 8 /* cycles between a client's doomed submits */

/* Run in every COMMIT that inserted a task (see the top of the file). */
static const char trigger_sql[] =
    "CREATE FUNCTION kc_commit() RETURNS trigger LANGUAGE plpgsql AS $$"
    " BEGIN"
    "  IF NEW.request_id LIKE 'doomed%' THEN"
    "   RAISE EXCEPTION 'kc: a doomed task';"
    "  END IF;"
    "  PERFORM pg_sleep(0.003);"
    "  RETURN NULL;"
    " END $$;"
    "CREATE CONSTRAINT TRIGGER kc_commit AFTER INSERT ON browser_space_tasks"
    " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION"
    " kc_commit();";

/* The store's DSN, from the config file testkit wrote in its data dir. */
static PGconn *
store_db(const char *dir)
{
	char path[192], *text, *a, *b;
	PGconn *c;

	snprintf(path, sizeof(path), "%s/pg.conf", dir);
	text = tk_read_file(path, NULL);
	cr_assert_not_null(text, "no %s", path);
	a = strstr(text, "postgres_dsn = \"");
	cr_assert_not_null(a, "no DSN in %s", path);
	a += strlen("postgres_dsn = \"");
	b = strrchr(a, '"');
	cr_assert_not_null(b);
	*b = '\0';
	c = PQconnectdb(a);
	free(text);
	cr_assert_eq(PQstatus(c), CONNECTION_OK, "%s", PQerrorMessage(c));
	return c;
}

static void
db_exec(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);

	cr_assert(PQresultStatus(r) == PGRES_COMMAND_OK ||
	              PQresultStatus(r) == PGRES_TUPLES_OK,
	    "%s: %s", sql, PQerrorMessage(c));
	PQclear(r);
}

/* The one integer the query (with text parameters) returns. */
static long long
db_int(PGconn *c, const char *sql, int n, const char *const *params)
{
	PGresult *r = PQexecParams(c, sql, n, NULL, params, NULL, NULL, 0);
	long long v;

	cr_assert_eq(PQresultStatus(r), PGRES_TUPLES_OK, "%s: %s", sql,
	    PQerrorMessage(c));
	cr_assert_eq(PQntuples(r), 1, "%s: %d rows", sql, PQntuples(r));
	v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return v;
}

static void
skip_without_pg(void)
{
	if (getenv("TK_PG_STATE") == NULL)
		cr_skip_test("PostgreSQL only: run as pg/test_pg_store_commit");
}

/*
 * Starts spaced-store on dir (a schema of its own), provisions n fake
 * instances in one workspace, opens a Space on each (ids into spaces) and
 * installs the COMMIT trigger.  Returns a connection to the schema.
 */
static PGconn *
kc_world(struct tk_proc *p, const char *dir, const char *const *flags,
    struct tk_world *w, size_t n, char (*spaces)[CM_ID_MAX + 1])
{
	nng_socket s;
	PGconn *db;

	cr_assert_eq(tk_store_start(p, dir, flags), 0);
	cr_assert_eq(cm_rpc_open(&s, p->store_url), 0);
	cr_assert_eq(tk_provision(s, w, n), 0);
	for (size_t i = 0; i < n; i++) {
		struct pr_req q;
		struct pr_rep r;

		tk_req_create(&q, w, i);
		cr_assert_eq(
		    tk_call(s, &q, &r), CM_OK, "%s", cm_err_code(r.err));
		snprintf(spaces[i], CM_ID_MAX + 1, "%s", r.spaces[0].space_id);
		pr_rep_free(&r);
	}
	nng_close(s);
	db = store_db(dir);
	db_exec(db, trigger_sql);
	return db;
}

/* Waits up to ms for the next event on sub; false when none came. */
static bool
next_event(nng_socket sub, int ms, struct pr_event *ev, struct pr_arena *arena)
{
	int64_t deadline = cm_mono_ms() + ms;
	char err[128];
	nng_msg *m;

	while (nng_recvmsg(sub, &m, NNG_FLAG_NONBLOCK) != 0) {
		struct timespec ts = {0, 1000 * 1000};

		if (cm_mono_ms() > deadline)
			return false;
		nanosleep(&ts, NULL);
	}
	cr_assert_eq(pr_pub_decode(nng_msg_body(m), nng_msg_len(m), ev, NULL,
	                 arena, err, sizeof(err)),
	    0, "%s", err);
	nng_msg_free(m);
	return true;
}

/*
 * An idle claim the store holds is run again right after the submit that
 * wakes it, in the next group, which may be on the other writer while
 * the submit's COMMIT (slowed by the trigger) still runs: it waits for
 * that COMMIT and takes the task.
 */
Test(pg_store_commit, a_held_claim_takes_the_task_of_a_slow_commit,
    .fini = tk_cleanup)
{
	struct tk_proc p;
	struct tk_world w;
	struct tk_held h;
	struct pr_req q;
	struct pr_rep r;
	char dir[128], space_id[1][CM_ID_MAX + 1], task_id[CM_ID_MAX + 1];
	char rid[32];
	nng_socket s;
	PGconn *db;

	skip_without_pg();
	tk_tmpdir(dir, sizeof(dir), "pgheld");
	db = kc_world(&p, dir, NULL, &w, 1, space_id);
	cr_assert_eq(cm_rpc_open(&s, p.store_url), 0);
	for (int i = 0; i < 5; i++) {
		cr_assert(tk_held_send(
		    &h, s, space_id[0], "pg-held", CM_CLAIM_WAIT_MAX_MS));
		snprintf(rid, sizeof(rid), "held-%d", i);
		tk_req_submit(&q, w.workspace_id, space_id[0], rid);
		cr_assert_eq(tk_call(s, &q, &r), CM_OK);
		cr_assert_eq(r.err, CM_OK, "%s", cm_err_code(r.err));
		snprintf(task_id, sizeof(task_id), "%s", r.tasks[0].task_id);
		pr_rep_free(&r);
		cr_assert_eq(tk_held_answer(&h, 5000, &r), 1,
		    "the held claim got no answer");
		cr_assert_eq(r.err, CM_OK, "%s", cm_err_code(r.err));
		cr_assert_eq(r.n_tasks, 1, "the held claim missed task %d", i);
		cr_assert_str_eq(r.tasks[0].task_id, task_id);
		pr_rep_free(&r);
		tk_req_finish(&q, task_id, "pg-held");
		cr_assert_eq(tk_call(s, &q, &r), CM_OK);
		cr_assert_eq(r.err, CM_OK, "%s", cm_err_code(r.err));
		pr_rep_free(&r);
	}
	nng_close(s);
	PQfinish(db);
	tk_proc_stop(&p, SIGTERM);
	tk_rmrf(dir);
}

/*
 * A COMMIT the server refuses, answered after the loop went on: the write
 * is answered store_unavailable, its event is not published, and the
 * next write on the Space gets the sequence the refused one would have.
 */
Test(pg_store_commit, a_failed_commit_answers_store_unavailable,
    .fini = tk_cleanup)
{
	struct tk_proc p;
	struct tk_world w;
	struct pr_req q;
	struct pr_rep r;
	struct pr_event ev;
	struct pr_arena arena = {0};
	char dir[128], space_id[1][CM_ID_MAX + 1], task_id[CM_ID_MAX + 1];
	char rid[32], cancelled[CM_ID_MAX + 1];
	nng_socket s, sub;
	PGconn *db;
	int64_t seq = 0;
	bool seen = false;

	skip_without_pg();
	tk_tmpdir(dir, sizeof(dir), "pgfail");
	db = kc_world(&p, dir, NULL, &w, 1, space_id);
	cr_assert_eq(cm_rpc_open(&s, p.store_url), 0);

	cr_assert_eq(nng_sub0_open(&sub), 0);
	cr_assert_eq(nng_socket_set(sub, NNG_OPT_SUB_SUBSCRIBE, "ev/", 3), 0);
	cr_assert_eq(nng_socket_set_int(sub, NNG_OPT_RECVBUF, 1024), 0);
	cr_assert_eq(nng_dial(sub, p.events_url, NULL, 0), 0);
	/* A subscription takes effect later: submit and cancel until an
	 * event arrives, then read every event up to the last cancel's. */
	for (int i = 0; !seen && i < 100; i++) {
		struct pr_req c;

		snprintf(rid, sizeof(rid), "warm-%d", i);
		tk_req_submit(&q, w.workspace_id, space_id[0], rid);
		cr_assert_eq(tk_call(s, &q, &r), CM_OK);
		cr_assert_eq(r.err, CM_OK, "%s", cm_err_code(r.err));
		memset(&c, 0, sizeof(c));
		c.op = PR_OP_TASK_CANCEL;
		c.workspace_id = w.workspace_id;
		c.space_id = space_id[0];
		snprintf(
		    cancelled, sizeof(cancelled), "%s", r.tasks[0].task_id);
		c.task_id = cancelled;
		pr_rep_free(&r);
		cr_assert_eq(tk_call(s, &c, &r), CM_OK);
		cr_assert_eq(r.err, CM_OK, "%s", cm_err_code(r.err));
		pr_rep_free(&r);
		while (next_event(sub, seen ? 10000 : 200, &ev, &arena)) {
			seen = true;
			seq = ev.sequence;
			if (strcmp(ev.kind,
			        cm_event_kind_name(CM_EV_CANCELLED)) == 0 &&
			    ev.task_id != NULL &&
			    strcmp(ev.task_id, cancelled) == 0)
				break;
		}
	}
	cr_assert(seen, "no event arrived on the PUB socket");
	cr_assert_gt(seq, 0);

	tk_req_submit(&q, w.workspace_id, space_id[0], "doomed-1");
	cr_assert_eq(tk_call(s, &q, &r), CM_E_STORE_UNAVAILABLE,
	    "a write whose COMMIT failed was answered %s", cm_err_code(r.err));
	pr_rep_free(&r);

	tk_req_submit(&q, w.workspace_id, space_id[0], "after-1");
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	cr_assert_eq(r.err, CM_OK, "%s", cm_err_code(r.err));
	snprintf(task_id, sizeof(task_id), "%s", r.tasks[0].task_id);
	pr_rep_free(&r);
	cr_assert(
	    next_event(sub, 10000, &ev, &arena), "the next write's event");
	cr_assert_str_eq(ev.kind, cm_event_kind_name(CM_EV_QUEUED),
	    "an event of the failed commit was published");
	cr_assert_not_null(ev.task_id);
	cr_assert_str_eq(
	    ev.task_id, task_id, "an event of the failed commit was published");
	cr_assert_eq(ev.sequence, seq + 1, "sequence %lld after %lld",
	    (long long)ev.sequence, (long long)seq);
	{
		const char *params[] = {space_id[0]};

		cr_assert_eq(db_int(db,
		                 "SELECT count(*) FROM browser_space_tasks"
		                 " WHERE space_id = $1 AND request_id ="
		                 " 'doomed-1'",
		                 1, params),
		    0, "the failed commit's task is there");
	}
	pr_arena_free(&arena);
	PQfinish(db);
	nng_close(sub);
	nng_close(s);
	tk_proc_stop(&p, SIGTERM);
	tk_rmrf(dir);
}

/* ---- kill -9 under concurrent writers ----------------------------------
 */

struct kc_client {
	const char *url;
	const char *workspace_id;
	char space_id[CM_ID_MAX + 1];
	int id;
	/* What was acknowledged: cycle k's submit is request "r<k>". */
	char task[KC_CYCLES_MAX][CM_ID_MAX + 1];
	bool submitted[KC_CYCLES_MAX], finished[KC_CYCLES_MAX];
	int cycles;
	char violation[256]; /* the first one seen, or "" */
};

static atomic_bool kc_stop;
static atomic_long kc_acks;

/*
 * Sends q until the store answers it (the same op_id every time, so it is
 * applied at most once).  Returns the store's verdict, CM_E_INTERNAL when
 * no attempt was answered.
 */
static enum cm_err
kc_call(nng_socket s, const struct pr_req *q, struct pr_rep *r)
{
	for (int i = 0; i < KC_ATTEMPTS; i++) {
		if (cm_rpc_call(s, q, r, KC_CALL_MS) == CM_OK &&
		    r->err != CM_E_STORE_UNAVAILABLE) {
			atomic_fetch_add(&kc_acks, 1);
			return r->err;
		}
		pr_rep_free(r);
	}
	memset(r, 0, sizeof(*r));
	return CM_E_INTERNAL;
}

static void
kc_violation(struct kc_client *c, const char *what, int k, enum cm_err err)
{
	if (c->violation[0] == '\0')
		snprintf(c->violation, sizeof(c->violation),
		    "client %d, cycle %d: %s (%s)", c->id, k, what,
		    cm_err_code(err));
	atomic_store(&kc_stop, true);
}

/* submit -> claim -> finish on the client's own Space, until stopped. */
static void *
kc_client_run(void *arg)
{
	struct kc_client *c = arg;
	char holder[32], rid[32], op[64];
	nng_socket s;

	if (cm_rpc_open(&s, c->url) != 0) {
		kc_violation(c, "cannot open a socket", 0, CM_OK);
		return NULL;
	}
	snprintf(holder, sizeof(holder), "kc-%d", c->id);
	for (int k = 0; k < KC_CYCLES_MAX && !atomic_load(&kc_stop); k++) {
		struct pr_req q;
		struct pr_rep r;
		enum cm_err err;

		c->cycles = k + 1;
		/* A write whose COMMIT fails: never acknowledged.  Sent once
		 * (no answer, or store_unavailable, is what it may get). */
		if (k % KC_DOOMED_EVERY == 1) {
			snprintf(rid, sizeof(rid), "doomed-%d", k);
			snprintf(op, sizeof(op), "kc-%d-%d-doomed", c->id, k);
			tk_req_submit(&q, c->workspace_id, c->space_id, rid);
			q.op_id = op;
			if (cm_rpc_call(s, &q, &r, KC_CALL_MS) == CM_OK &&
			    r.err != CM_E_STORE_UNAVAILABLE) {
				kc_violation(c,
				    "a write whose COMMIT failed was answered",
				    k, r.err);
				pr_rep_free(&r);
				break;
			}
			pr_rep_free(&r);
		}
		snprintf(rid, sizeof(rid), "r%d", k);
		snprintf(op, sizeof(op), "kc-%d-%d-submit", c->id, k);
		tk_req_submit(&q, c->workspace_id, c->space_id, rid);
		q.op_id = op;
		if ((err = kc_call(s, &q, &r)) != CM_OK) {
			kc_violation(c, "submit", k, err);
			pr_rep_free(&r);
			break;
		}
		snprintf(
		    c->task[k], sizeof(c->task[k]), "%s", r.tasks[0].task_id);
		c->submitted[k] = true;
		pr_rep_free(&r);

		/* Answered only once its COMMIT returned: a read sees it. */
		memset(&q, 0, sizeof(q));
		q.op = PR_OP_TASK_GET;
		q.workspace_id = c->workspace_id;
		q.space_id = c->space_id;
		q.task_id = c->task[k];
		err = kc_call(s, &q, &r);
		if (err != CM_OK || r.n_tasks != 1) {
			kc_violation(c,
			    "an acknowledged submit's task could not be read",
			    k, err);
			pr_rep_free(&r);
			break;
		}
		pr_rep_free(&r);

		/* The submit was acknowledged: its task is there to claim. */
		snprintf(op, sizeof(op), "kc-%d-%d-claim", c->id, k);
		tk_req_claim(&q, c->space_id, holder);
		q.op_id = op;
		err = kc_call(s, &q, &r);
		if (err != CM_OK || r.n_tasks != 1 ||
		    strcmp(r.tasks[0].task_id, c->task[k]) != 0) {
			kc_violation(c,
			    "the claim after an acknowledged submit did not"
			    " find its task",
			    k, err);
			pr_rep_free(&r);
			break;
		}
		pr_rep_free(&r);

		snprintf(op, sizeof(op), "kc-%d-%d-finish", c->id, k);
		tk_req_finish(&q, c->task[k], holder);
		q.op_id = op;
		if ((err = kc_call(s, &q, &r)) != CM_OK) {
			kc_violation(c, "finish", k, err);
			pr_rep_free(&r);
			break;
		}
		c->finished[k] = true;
		pr_rep_free(&r);
	}
	nng_close(s);
	return NULL;
}

static bool
kc_acked(void *arg)
{
	return atomic_load(&kc_acks) >= *(long *)arg || atomic_load(&kc_stop);
}

/* What the database must hold of client c's acknowledged writes. */
static void
kc_check(PGconn *db, const struct kc_client *c)
{
	const char *sp[] = {c->space_id};
	long long n, lo, hi, last;

	for (int k = 0; k < c->cycles; k++) {
		char rid[32];
		const char *params[] = {c->space_id, rid, c->task[k]};

		if (!c->submitted[k])
			continue;
		snprintf(rid, sizeof(rid), "r%d", k);
		cr_assert_eq(db_int(db,
		                 "SELECT count(*) FROM browser_space_tasks"
		                 " WHERE space_id = $1 AND request_id = $2"
		                 " AND id = $3",
		                 3, params),
		    1, "client %d: acknowledged submit %d is lost", c->id, k);
		if (c->finished[k])
			cr_assert_eq(
			    db_int(db,
			        "SELECT count(*) FROM browser_space_tasks"
			        " WHERE space_id = $1 AND request_id = $2"
			        " AND id = $3 AND status = 'completed'",
			        3, params),
			    1, "client %d: acknowledged finish %d is lost",
			    c->id, k);
	}
	cr_assert_eq(db_int(db,
	                 "SELECT count(*) FROM browser_space_tasks"
	                 " WHERE space_id = $1 AND request_id LIKE 'doomed%'",
	                 1, sp),
	    0, "client %d: a task whose COMMIT failed is there", c->id);
	/* No write applied twice: one task a cycle, one event of a kind a
	 * task. */
	cr_assert_leq(db_int(db,
	                  "SELECT count(*) FROM browser_space_tasks"
	                  " WHERE space_id = $1",
	                  1, sp),
	    c->cycles, "client %d: more tasks than cycles", c->id);
	cr_assert_eq(db_int(db,
	                 "SELECT count(*) FROM (SELECT 1 FROM"
	                 " browser_space_events WHERE space_id = $1 AND"
	                 " task_id IS NOT NULL GROUP BY task_id, kind"
	                 " HAVING count(*) > 1) AS twice",
	                 1, sp),
	    0, "client %d: an event of a task twice", c->id);
	/* The Space's events are numbered 1..N, no gap. */
	n = db_int(db,
	    "SELECT count(*) FROM browser_space_events WHERE space_id = $1", 1,
	    sp);
	lo = db_int(db,
	    "SELECT coalesce(min(sequence), 0) FROM browser_space_events"
	    " WHERE space_id = $1",
	    1, sp);
	hi = db_int(db,
	    "SELECT coalesce(max(sequence), 0) FROM browser_space_events"
	    " WHERE space_id = $1",
	    1, sp);
	last = db_int(db,
	    "SELECT last_sequence FROM browser_spaces WHERE id = $1", 1, sp);
	cr_assert(n > 0 && lo == 1 && hi == n && last == n,
	    "client %d: %lld events numbered %lld..%lld, last_sequence %lld",
	    c->id, n, lo, hi, last);
}

/*
 * Concurrent writers, the store killed (SIGKILL) at random moments (after
 * a random number of acknowledged writes) and started again on the same
 * schema: every acknowledged write is in the database, none is applied
 * twice, each Space's events have no gap, a read or a claim after an
 * acknowledged submit finds its task, and a submit whose COMMIT fails
 * (one in KC_DOOMED_EVERY cycles) is never acknowledged.  (A COMMIT the
 * store sent is carried out even if the store dies before its answer, so
 * what tells an acknowledgement sent too early is the read that follows
 * it, and a COMMIT that fails.)
 */
Test(pg_store_commit, kill_9_loses_no_acknowledged_write, .fini = tk_cleanup,
    .timeout = 600)
{
	static struct kc_client cl[KC_CLIENTS];
	static char spaces[KC_CLIENTS][CM_ID_MAX + 1];
	pthread_t th[KC_CLIENTS];
	struct tk_proc p;
	struct tk_world w;
	char dir[128], quota[64];
	const char *flags[] = {quota, NULL};
	const unsigned seed0 = (unsigned)cm_mono_ns();
	unsigned seed = seed0;
	PGconn *db;

	skip_without_pg();
	cr_log_info("kill_9_loses_no_acknowledged_write: seed %u", seed0);
	snprintf(
	    quota, sizeof(quota), "--max-spaces-per-workspace=%d", KC_CLIENTS);
	tk_tmpdir(dir, sizeof(dir), "pgkill");
	db = kc_world(&p, dir, flags, &w, KC_CLIENTS, spaces);

	atomic_store(&kc_stop, false);
	atomic_store(&kc_acks, 0);
	for (int i = 0; i < KC_CLIENTS; i++) {
		memset(&cl[i], 0, sizeof(cl[i]));
		memcpy(cl[i].space_id, spaces[i], sizeof(cl[i].space_id));
		cl[i].url = p.store_url;
		cl[i].workspace_id = w.workspace_id;
		cl[i].id = i;
		cr_assert_eq(
		    pthread_create(&th[i], NULL, kc_client_run, &cl[i]), 0);
	}
	for (int k = 0; k < KC_KILLS && !atomic_load(&kc_stop); k++) {
		long want = atomic_load(&kc_acks) + KC_ACKS_MIN +
		            (long)(rand_r(&seed) % KC_ACKS_SPREAD);

		cr_assert(tk_wait_until(kc_acked, &want, KC_WAIT_MS),
		    "kill %d: the writers stalled at %ld acknowledged writes",
		    k, atomic_load(&kc_acks));
		tk_proc_stop(&p, SIGKILL);
		cr_assert_eq(tk_store_start(&p, dir, flags), 0,
		    "kill %d: the store did not start again", k);
	}
	{
		long want = atomic_load(&kc_acks) + KC_ACKS_MIN;

		cr_assert(tk_wait_until(kc_acked, &want, KC_WAIT_MS),
		    "the writers stalled after the last restart");
	}
	atomic_store(&kc_stop, true);
	for (int i = 0; i < KC_CLIENTS; i++)
		pthread_join(th[i], NULL);
	tk_proc_stop(&p, SIGTERM);
	cr_log_info("kill_9_loses_no_acknowledged_write: %d kills, %ld"
	            " acknowledged writes",
	    KC_KILLS, atomic_load(&kc_acks));
	for (int i = 0; i < KC_CLIENTS; i++)
		cr_assert_str_empty(
		    cl[i].violation, "seed %u: %s", seed0, cl[i].violation);
	for (int i = 0; i < KC_CLIENTS; i++)
		kc_check(db, &cl[i]);
	PQfinish(db);
	tk_rmrf(dir);
}
