/*
 * Events across hosts: two spaced-store processes, each with
 * its own run_dir, on one PostgreSQL database.  An event committed
 * through store A comes out of store B's PUB socket, byte for byte as A
 * published it, and a notice (close_requested) too; each store publishes
 * each event once, its own included.
 *
 * Needs the throwaway cluster of tests/pg/cluster.sh (SPACED_TEST_PG names
 * its state file, as for the pg/ unit tests); skipped without one.
 */
#include <criterion/criterion.h>
#include <libpq-fe.h>
#include <nng/nng.h>
#include <nng/protocol/pubsub0/sub.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "testkit.h"

/* How long an event may take from one store's commit to the other's PUB:
 * a bound on a wait, generous for a loaded machine, not a speed. */
#define PGE_WAIT_MS 10000
#define PGE_DSN_MAX 512
#define PGE_RAW_MAX 65536 /* one published event, as this test makes them */

struct pge_store {
	struct tk_proc p;
	char dir[128];
	char app[64]; /* application_name: finds its connections */
	nng_socket sub;
	int sub_fd;
};

static char pge_base[PGE_DSN_MAX];
static char pge_schema[64];

/* The cluster's DSN (SPACED_TEST_PG's state file), or the test skips. */
static void
pge_cluster(void)
{
	const char *state = getenv("SPACED_TEST_PG");
	char line[PGE_DSN_MAX];
	FILE *fp;

	if (state == NULL || state[0] == '\0')
		cr_skip_test("no PostgreSQL cluster (SPACED_TEST_PG)");
	fp = fopen(state, "r");
	cr_assert_not_null(fp, "cannot read %s", state);
	pge_base[0] = '\0';
	while (fgets(line, sizeof(line), fp) != NULL)
		if (line[0] != '#' && line[0] != '\n')
			snprintf(pge_base, sizeof(pge_base), "%.*s",
			    (int)strcspn(line, "\n"), line);
	fclose(fp);
	cr_assert_neq(pge_base[0], '\0', "no DSN in %s", state);
	/* The stores read every SPACED_ variable as a key of theirs. */
	unsetenv("SPACED_TEST_PG");
}

/* The first column of sql's first row as an integer, with one text
 * parameter; -1 without a row. */
static long long
pge_sql_int(const char *sql, const char *param)
{
	PGconn *c = PQconnectdb(pge_base);
	PGresult *r;
	long long v = -1;

	cr_assert_eq(PQstatus(c), CONNECTION_OK, "%s", PQerrorMessage(c));
	r = param != NULL ? PQexecParams(c, sql, 1, NULL, &param, NULL, NULL, 0)
	                  : PQexec(c, sql);
	cr_assert(PQresultStatus(r) == PGRES_TUPLES_OK ||
	              PQresultStatus(r) == PGRES_COMMAND_OK,
	    "%s: %s", sql, PQresultErrorMessage(r));
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0)
		v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	PQfinish(c);
	return v;
}

static void
pge_schema_make(void)
{
	char sql[256];

	snprintf(pge_schema, sizeof(pge_schema), "pge_%ld", (long)getpid());
	snprintf(sql, sizeof(sql),
	    "DROP SCHEMA IF EXISTS %s CASCADE;"
	    " CREATE SCHEMA %s",
	    pge_schema, pge_schema);
	pge_sql_int(sql, NULL);
}

static void
pge_schema_drop(void)
{
	char sql[256];

	if (pge_schema[0] == '\0')
		return;
	snprintf(
	    sql, sizeof(sql), "DROP SCHEMA IF EXISTS %s CASCADE", pge_schema);
	pge_sql_int(sql, NULL);
}

/* Its listening connection has run its LISTEN. */
static bool
pge_listening(void *arg)
{
	const struct pge_store *s = arg;

	return pge_sql_int("SELECT count(*) FROM pg_stat_activity"
	                   " WHERE application_name = $1"
	                   " AND query LIKE 'LISTEN %'",
	           s->app) == 1;
}

/* Starts a store on the test's schema with a SUB on its PUB socket.  The
 * DSN goes by the environment the store inherits, never by argv. */
static void
pge_start(struct pge_store *s, const char *tag)
{
	char dsn[PGE_DSN_MAX + 192];

	memset(s, 0, sizeof(*s));
	tk_tmpdir(s->dir, sizeof(s->dir), tag);
	snprintf(s->app, sizeof(s->app), "pge-%s-%ld", tag, (long)getpid());
	snprintf(dsn, sizeof(dsn),
	    "%s options='-csearch_path=%s' application_name=%s", pge_base,
	    pge_schema, s->app);
	setenv("SPACED_STORE_BACKEND", "postgres", 1);
	setenv("SPACED_POSTGRES_DSN", dsn, 1);
	cr_assert_eq(tk_store_start(&s->p, s->dir, NULL), 0,
	    "store %s did not start", tag);
	unsetenv("SPACED_STORE_BACKEND");
	unsetenv("SPACED_POSTGRES_DSN");
	cr_assert(tk_wait_until(pge_listening, s, PGE_WAIT_MS),
	    "store %s never listened", tag);

	cr_assert_eq(nng_sub0_open(&s->sub), 0);
	cr_assert_eq(
	    nng_socket_set(s->sub, NNG_OPT_SUB_SUBSCRIBE, "ev/", 3), 0);
	cr_assert_eq(nng_socket_set_int(s->sub, NNG_OPT_RECVBUF, 1024), 0);
	cr_assert_eq(nng_dial(s->sub, s->p.events_url, NULL, 0), 0);
	cr_assert_eq(nng_socket_get_int(s->sub, NNG_OPT_RECVFD, &s->sub_fd), 0);
}

static void
pge_stop(struct pge_store *s)
{
	nng_close(s->sub);
	tk_proc_stop(&s->p, SIGTERM);
	tk_rmrf(s->dir);
}

/*
 * Receives from s's SUB until a message of space_id with sequence seq
 * (and kind, when not NULL) comes, within PGE_WAIT_MS; copies it to
 * raw/len when not NULL.  Returns how many messages of that Space with
 * sequence dup_seq came before it (-1 when it never came).
 */
static int
pge_await(struct pge_store *s, const char *space_id, int64_t seq,
    const char *kind, int64_t dup_seq, char *raw, size_t *len)
{
	int64_t end = cm_mono_ms() + PGE_WAIT_MS;
	int dups = 0;

	for (;;) {
		struct pollfd p = {.fd = s->sub_fd, .events = POLLIN};
		int64_t left = end - cm_mono_ms();
		nng_msg *m;

		if (left <= 0)
			return -1;
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		while (nng_recvmsg(s->sub, &m, NNG_FLAG_NONBLOCK) == 0) {
			struct pr_event ev;
			struct pr_arena arena = {0};
			char err[128];
			bool hit;

			cr_assert_eq(
			    pr_pub_decode(nng_msg_body(m), nng_msg_len(m), &ev,
			        NULL, &arena, err, sizeof(err)),
			    0, "%s", err);
			hit = strcmp(ev.space_id, space_id) == 0 &&
			      ev.sequence == seq &&
			      (kind == NULL || strcmp(ev.kind, kind) == 0);
			if (strcmp(ev.space_id, space_id) == 0 &&
			    ev.sequence == dup_seq)
				dups++;
			if (hit && raw != NULL) {
				cr_assert_leq(nng_msg_len(m), *len);
				memcpy(raw, nng_msg_body(m), nng_msg_len(m));
				*len = nng_msg_len(m);
			}
			pr_arena_free(&arena);
			nng_msg_free(m);
			if (hit)
				return dups;
		}
	}
}

/* Submits a noop; its task's id into task_id. */
static void
pge_submit(nng_socket s, const struct tk_world *w, const char *space_id,
    const char *rid, char task_id[CM_ID_MAX + 1])
{
	struct pr_req q;
	struct pr_rep r;

	tk_req_submit(&q, w->workspace_id, space_id, rid);
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	snprintf(task_id, CM_ID_MAX + 1, "%s", r.tasks[0].task_id);
	pr_rep_free(&r);
}

static void
pge_cancel(nng_socket s, const struct tk_world *w, const char *space_id,
    const char *task_id)
{
	struct pr_req q;
	struct pr_rep r;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_TASK_CANCEL;
	q.workspace_id = w->workspace_id;
	q.space_id = space_id;
	q.task_id = task_id;
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	pr_rep_free(&r);
}

/* Whether a message came to s's SUB within ms (all are taken). */
static bool
pge_any(struct pge_store *s, int ms)
{
	struct pollfd p = {.fd = s->sub_fd, .events = POLLIN};
	nng_msg *m;
	bool got = false;

	if (poll(&p, 1, ms) <= 0)
		return false;
	while (nng_recvmsg(s->sub, &m, NNG_FLAG_NONBLOCK) == 0) {
		nng_msg_free(m);
		got = true;
	}
	return got;
}

/*
 * A SUB's pipe reaches the PUB socket a moment after its dial returns:
 * events of a Space of its own (instance 1) go through A until both SUBs
 * have seen some, and the test's Space starts from there.
 */
static void
pge_warm(nng_socket ra, const struct tk_world *w, struct pge_store *a,
    struct pge_store *b)
{
	struct pr_req q;
	struct pr_rep r;
	char space_id[CM_ID_MAX + 1], task_id[CM_ID_MAX + 1], rid[32];
	bool on_a = false, on_b = false;

	tk_req_create(&q, w, 1);
	cr_assert_eq(tk_call(ra, &q, &r), CM_OK);
	snprintf(space_id, sizeof(space_id), "%s", r.spaces[0].space_id);
	pr_rep_free(&r);
	for (int i = 0; i < 50 && !(on_a && on_b); i++) {
		snprintf(rid, sizeof(rid), "warm-%d", i);
		pge_submit(ra, w, space_id, rid, task_id);
		pge_cancel(ra, w, space_id, task_id);
		on_a = pge_any(a, 200) || on_a;
		on_b = pge_any(b, 200) || on_b;
	}
	cr_assert(on_a && on_b, "the SUB sockets never received (A %d, B %d)",
	    on_a, on_b);
}

/* Stores A and B on a fresh schema, a REQ socket on each, a world of two
 * instances made through A, and both SUBs receiving. */
static void
pge_pair(struct pge_store *a, struct pge_store *b, nng_socket *ra,
    nng_socket *rb, struct tk_world *w)
{
	pge_cluster();
	pge_schema_make();
	pge_start(a, "pgea");
	pge_start(b, "pgeb");
	cr_assert_eq(cm_rpc_open(ra, a->p.store_url), 0);
	cr_assert_eq(cm_rpc_open(rb, b->p.store_url), 0);
	cr_assert_eq(tk_provision(*ra, w, 2), 0);
	pge_warm(*ra, w, a, b);
}

static void
pge_pair_stop(
    struct pge_store *a, struct pge_store *b, nng_socket ra, nng_socket rb)
{
	nng_close(ra);
	nng_close(rb);
	pge_stop(a);
	pge_stop(b);
	pge_schema_drop();
}

Test(pg_events, other_store_republishes, .fini = tk_cleanup)
{
	struct pge_store a, b;
	struct tk_world w;
	nng_socket ra, rb;
	struct pr_req q;
	struct pr_rep r;
	char space_id[CM_ID_MAX + 1], task_id[CM_ID_MAX + 1];
	static char on_a[PGE_RAW_MAX], on_b[PGE_RAW_MAX];
	size_t len_a = sizeof(on_a), len_b = sizeof(on_b);

	pge_pair(&a, &b, &ra, &rb, &w);

	/* Through A: space_created, sequence 1, reaches B's subscribers as
	 * A's own subscribers see it. */
	tk_req_create(&q, &w, 0);
	cr_assert_eq(tk_call(ra, &q, &r), CM_OK);
	snprintf(space_id, sizeof(space_id), "%s", r.spaces[0].space_id);
	pr_rep_free(&r);
	cr_assert_eq(pge_await(&a, space_id, 1, NULL, -1, on_a, &len_a), 0,
	    "A did not publish its own event");
	cr_assert_geq(pge_await(&b, space_id, 1, NULL, -1, on_b, &len_b), 0,
	    "an event committed through A never reached B's PUB");
	cr_assert_eq(len_a, len_b);
	cr_assert_eq(memcmp(on_a, on_b, len_a), 0,
	    "B published A's event otherwise than A did");

	/* Through B: task_queued, sequence 2, reaches A; A published its
	 * own sequence 1 once, not again when it heard it. */
	pge_submit(rb, &w, space_id, "pge-1", task_id);
	cr_assert_eq(pge_await(&a, space_id, 2, NULL, 1, NULL, NULL), 0,
	    "A published its own event twice, or never heard B's");
	cr_assert_eq(pge_await(&b, space_id, 2, NULL, -1, NULL, NULL), 0);
	/* And B its own sequence 2 once, before A's sequence 3 (the
	 * cancel's). */
	pge_cancel(ra, &w, space_id, task_id);
	cr_assert_eq(pge_await(&b, space_id, 3, NULL, 2, NULL, NULL), 0,
	    "B published its own event twice, or never heard A's");

	/* A close through A: the actor's wake-up notice (sequence 0) is
	 * published on B too, where the Space's actor would run. */
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SPACE_CLOSE;
	q.workspace_id = w.workspace_id;
	q.space_id = space_id;
	cr_assert_eq(tk_call(ra, &q, &r), CM_OK);
	pr_rep_free(&r);
	cr_assert_geq(
	    pge_await(&b, space_id, 0, "close_requested", -1, NULL, NULL), 0,
	    "A's close_requested notice never reached B's PUB");

	pge_pair_stop(&a, &b, ra, rb);
}

/* The pid of s's listening connection's server process, or -1. */
static long long
pge_listener_pid(const struct pge_store *s)
{
	return pge_sql_int("SELECT pid FROM pg_stat_activity"
	                   " WHERE application_name = $1"
	                   " AND query LIKE 'LISTEN %'",
	    s->app);
}

struct pge_relisten {
	const struct pge_store *s;
	long long old_pid;
};

static bool
pge_listening_anew(void *arg)
{
	const struct pge_relisten *r = arg;
	long long pid = pge_listener_pid(r->s);

	return pid > 0 && pid != r->old_pid;
}

/*
 * B's listening connection is cut by the server: B goes on serving,
 * listens again by itself (after its backoff), and an event committed
 * through A then reaches B's PUB.
 */
Test(pg_events, lost_listener_reconnects, .fini = tk_cleanup)
{
	struct pge_store a, b;
	struct tk_world w;
	struct pge_relisten rl;
	nng_socket ra, rb;
	struct pr_req q;
	struct pr_rep r;
	char space_id[CM_ID_MAX + 1], task_id[CM_ID_MAX + 1], sql[96];

	pge_pair(&a, &b, &ra, &rb, &w);

	rl.s = &b;
	rl.old_pid = pge_listener_pid(&b);
	cr_assert_gt(rl.old_pid, 0);
	snprintf(sql, sizeof(sql), "SELECT pg_terminate_backend(%lld)::int",
	    rl.old_pid);
	cr_assert_eq(pge_sql_int(sql, NULL), 1);
	cr_assert(tk_wait_until(pge_listening_anew, &rl, PGE_WAIT_MS),
	    "B did not listen again after its connection was cut");
	cr_assert_eq(kill(b.p.pid, 0), 0, "B died with its connection");

	tk_req_create(&q, &w, 0);
	cr_assert_eq(tk_call(ra, &q, &r), CM_OK);
	snprintf(space_id, sizeof(space_id), "%s", r.spaces[0].space_id);
	pr_rep_free(&r);
	cr_assert_geq(pge_await(&b, space_id, 1, NULL, -1, NULL, NULL), 0,
	    "an event committed through A never reached B's PUB");
	/* B still serves its own requests. */
	pge_submit(rb, &w, space_id, "pgr-1", task_id);
	cr_assert_eq(pge_await(&a, space_id, 2, NULL, -1, NULL, NULL) >= 0 &&
	                 pge_await(&b, space_id, 2, NULL, -1, NULL, NULL) >= 0,
	    true);

	pge_pair_stop(&a, &b, ra, rb);
}
