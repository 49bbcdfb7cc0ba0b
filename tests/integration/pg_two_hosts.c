/*
 * pg_two_hosts.c: two hosts on one PostgreSQL.
 *
 * Two spaced, host-a and host-b, each with its own data dir, api port and
 * host_id, share one schema of the cluster tests/pg/cluster.sh started
 * (SPACED_TEST_PG names its state file; the DSN goes into each host's
 * config file, never on argv).  Each has a fake instance of its own,
 * logging to its own data dir.  Everything goes through host-a's api:
 *   - a Space on host-b's instance runs on host-b's actor (its process,
 *     its fake log) and its task completes;
 *   - creates for one instance racing through both hosts' apis leave one
 *     active Space: one 201, one 409 browser_instance_in_use;
 *   - kill -9 of host-b's whole tree while its task runs: the task ends
 *     failed with outcome_unknown once the lease is past (host-a's sweep),
 *     is never run again, and a restarted host-b runs the Space again;
 *   - the events of a Space on host-b, created and tasked through host-a's
 *     api, stream live through both hosts' Server-Sent Events, the same
 *     sequence on each: what host-b's store commits reaches host-a's api
 *     only through the stores' announcements (store/notify.h);
 *   - Spaces on both hosts, each driven through the other host's api at
 *     once: every task is taken and completes, none is refused, and none is
 *     left queued or running (the two stores' groups lock the same Space
 *     rows from both sides).
 */
#include <libpq-fe.h>
#include <pthread.h>
#include <sys/stat.h>

#include "raw_fixture.h"
#include "token.h"

/* Lease, the foreign grace and a sweep period, with room to spare. */
#define TH_LOST_WAIT_MS                                                      \
	(CM_LEASE_TTL_MS + CM_LEASE_FOREIGN_GRACE_MS + 3 * CM_SUP_SWEEP_MS + \
	    SF_WAIT_MS)

struct th_host {
	struct sf_env sf; /* dir, fake_log, out, listen, p, s */
	const char *host_id;
	char conf[192];
};

static struct th_host ha, hb;
static char base[768], schema[64], dsn[1024], token[CM_TOKEN_MAX + 1];
static struct tk_world world;

/* The cluster's DSN from SPACED_TEST_PG's state file. */
static void
cluster_dsn(char *out, size_t len)
{
	const char *state = getenv("SPACED_TEST_PG");

	cr_assert_not_null(state, "SPACED_TEST_PG is not set");
	cr_assert_eq(tk_pg_dsn(state, out, len), 0, "no DSN in %s", state);
	/* spaced refuses a SPACED_ variable it does not know. */
	unsetenv("SPACED_TEST_PG");
}

/* "schema ... does not exist, skipping" is what a fresh cluster says. */
static void
quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

static void
pg_exec(const char *sql)
{
	PGconn *c = PQconnectdb(base);
	PGresult *r;

	cr_assert_eq(PQstatus(c), CONNECTION_OK, "%s", PQerrorMessage(c));
	PQsetNoticeProcessor(c, quiet, NULL);
	r = PQexec(c, sql);
	cr_assert_eq(PQresultStatus(r), PGRES_COMMAND_OK, "%s: %s", sql,
	    PQerrorMessage(c));
	PQclear(r);
	PQfinish(c);
}

/* A fresh schema of this test's own in the cluster: both hosts' DSN. */
static void
schema_new(void)
{
	char sql[128];

	cluster_dsn(base, sizeof(base));
	snprintf(schema, sizeof(schema), "two_hosts_%d", (int)getpid());
	snprintf(sql, sizeof(sql), "DROP SCHEMA IF EXISTS %s CASCADE", schema);
	pg_exec(sql);
	snprintf(sql, sizeof(sql), "CREATE SCHEMA %s", schema);
	pg_exec(sql);
	snprintf(
	    dsn, sizeof(dsn), "%s options='-csearch_path=%s'", base, schema);
}

static void
schema_drop(void)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "DROP SCHEMA IF EXISTS %s CASCADE", schema);
	pg_exec(sql);
}

/* A directory, and a config file holding the DSN (mode 0600). */
static void
host_init(struct th_host *h, const char *host_id, const char *tag)
{
	FILE *f;

	sf_env_init(&h->sf, tag);
	h->host_id = host_id;
	snprintf(h->conf, sizeof(h->conf), "%s/spaced.conf", h->sf.dir);
	cr_assert_not_null(f = fopen(h->conf, "w"));
	cr_assert_eq(fchmod(fileno(f), 0600), 0);
	fprintf(f, "store_backend = postgres\npostgres_dsn = \"%s\"\n", dsn);
	cr_assert_eq(fclose(f), 0);
}

static void
host_start(struct th_host *h)
{
	char id[CM_HOST_MAX + 16], conf[256];
	const char *flags[] = {h->sf.listen, id, conf, NULL};

	snprintf(id, sizeof(id), "--host-id=%s", h->host_id);
	snprintf(conf, sizeof(conf), "--config=%s", h->conf);
	cr_assert_eq(
	    tk_spaced_start_logged(&h->sf.p, h->sf.dir, flags, h->sf.out), 0,
	    "spaced %s did not start (see %s)", h->host_id, h->sf.out);
	cr_assert(tk_http_ready(&h->sf.p, 20000), "%s: no api", h->host_id);
	cr_assert_eq(cm_rpc_open(&h->sf.s, h->sf.p.store_url), 0);
}

/* A fake instance of host h, logging to h's fake log, bound to the
 * workspace (through host-a's store); its id to out. */
static void
host_instance(struct th_host *h, const char *name, char *out)
{
	char cfg[300];

	snprintf(cfg, sizeof(cfg), "{\"log_path\": \"%s\"}", h->sf.fake_log);
	cr_assert_eq(
	    tk_instance_on(ha.sf.s, &world, name, h->host_id, cfg, out), 0);
}

/* host-a first (it applies the migrations), then host-b; the world
 * provisioned through host-a's store, a token of its operator. */
static void
two_hosts_start(void)
{
	schema_new();
	host_init(&ha, "host-a", "th-a");
	host_init(&hb, "host-b", "th-b");
	host_start(&ha);
	cr_assert_eq(tk_provision(ha.sf.s, &world, 0), 0);
	cr_assert_eq(tk_token_issue(ha.sf.s, world.operator_id, token), 0);
	host_start(&hb);
}

static void
two_hosts_stop(void)
{
	for (struct th_host *h = &ha; h != NULL; h = h == &ha ? &hb : NULL) {
		nng_close(h->sf.s);
		if (h->sf.p.pid > 0)
			tk_proc_stop(&h->sf.p, SIGTERM);
		tk_rmrf(h->sf.dir);
	}
	schema_drop();
}

static void
fini(void)
{
	tk_cleanup();
}

/* POST a create through h's api; the status, the Space's id to out on
 * 201, the error code to code otherwise (both may be NULL). */
static int
create_via(struct th_host *h, const char *inst, char *out, char *code)
{
	char path[256], body[512], *text = NULL;
	json_t *res;
	int status;

	snprintf(path, sizeof(path), "/api/v1/workspaces/%s/browser-spaces",
	    world.workspace_id);
	snprintf(body, sizeof(body),
	    "{\"browser_instance_id\": \"%s\", \"owner_type\": \"operator\", "
	    "\"owner_id\": \"%s\"}",
	    inst, world.operator_id);
	status = tk_http(&h->sf.p, "POST", path, token, body, NULL, &text);
	res = text != NULL ? json_loads(text, 0, NULL) : NULL;
	if (status == 201 && out != NULL)
		snprintf(out, CM_ID_MAX + 1, "%s",
		    sf_str(json_object_get(res, "data"), "space_id"));
	if (status != 201 && code != NULL)
		snprintf(code, CM_ERROR_CODE_MAX + 1, "%s",
		    sf_str(json_object_get(res, "error"), "code"));
	json_decref(res);
	free(text);
	return status;
}

/* POST a task through host-a's api; its id to out.  202 expected. */
static void
submit_via_a(const char *space, const char *rid, const char *cap,
    const char *args, char *out)
{
	char path[256], body[512], *text = NULL;
	json_t *res;
	int status;

	snprintf(path, sizeof(path),
	    "/api/v1/workspaces/%s/browser-spaces/%s/tasks", world.workspace_id,
	    space);
	snprintf(body, sizeof(body),
	    "{\"request_id\": \"%s\", \"capability\": \"%s\", \"args\": %s}",
	    rid, cap, args);
	status = tk_http(&ha.sf.p, "POST", path, token, body, NULL, &text);
	cr_assert_eq(status, 202, "submit: %d %s", status, text ? text : "");
	cr_assert_not_null(res = json_loads(text, 0, NULL));
	snprintf(out, CM_ID_MAX + 1, "%s",
	    sf_str(json_object_get(res, "data"), "task_id"));
	json_decref(res);
	free(text);
}

struct th_task_wait {
	const char *space, *task, *status;
	char error_code[CM_ERROR_CODE_MAX + 1];
};

/* Whether GET of the task through host-a's api shows status. */
static bool
task_is(void *arg)
{
	struct th_task_wait *w = arg;
	char path[256], *text = NULL;
	json_t *res, *data;
	bool ok = false;

	snprintf(path, sizeof(path),
	    "/api/v1/workspaces/%s/browser-spaces/%s/tasks/%s",
	    world.workspace_id, w->space, w->task);
	if (tk_http(&ha.sf.p, "GET", path, token, NULL, NULL, &text) == 200 &&
	    (res = json_loads(text, 0, NULL)) != NULL) {
		data = json_object_get(res, "data");
		ok = strcmp(sf_str(data, "status"), w->status) == 0;
		snprintf(w->error_code, sizeof(w->error_code), "%s",
		    sf_str(json_object_get(data, "error"), "code"));
		json_decref(res);
	}
	free(text);
	return ok;
}

static bool
wait_task_via_a(struct th_task_wait *w, int timeout_ms)
{
	return tk_wait_until(task_is, w, timeout_ms);
}

/* The actors host h runs for space (its children in /proc). */
static int
actors_of(struct th_host *h, const char *space)
{
	return h->sf.p.pid > 0
	           ? sf_children(h->sf.p.pid, "spaced-actor", space, NULL, 0)
	           : 0;
}

Test(two_hosts, a_space_on_host_b_created_through_host_a_runs_on_host_b,
    .fini = fini, .timeout = 120)
{
	char inst_a[CM_ID_MAX + 1], inst_b[CM_ID_MAX + 1];
	char space[CM_ID_MAX + 1], task[CM_ID_MAX + 1];
	struct th_task_wait w = {0};

	two_hosts_start();
	host_instance(&ha, "fake-a", inst_a);
	host_instance(&hb, "fake-b", inst_b);

	cr_assert_eq(create_via(&ha, inst_b, space, NULL), 201);
	cr_assert_neq(sf_wait_actor(&hb.sf, space, 0, SF_WAIT_MS), 0,
	    "host-b started no actor for its Space");
	submit_via_a(space, "n1", "noop", "{}", task);
	w.space = space;
	w.task = task;
	w.status = "completed";
	cr_assert(wait_task_via_a(&w, SF_WAIT_MS), "the task never completed");
	/* host-b's runtime ran it, host-a's never saw it. */
	cr_assert_eq(sf_fake_count(&hb.sf, "start", "task_id", task), 1);
	cr_assert_eq(sf_fake_count(&ha.sf, "start", "task_id", task), 0);
	cr_assert_eq(actors_of(&ha, space), 0, "host-a runs host-b's Space");
	cr_assert_eq(actors_of(&hb, space), 1);
	two_hosts_stop();
}

struct th_race {
	struct th_host *h;
	const char *inst;
	pthread_barrier_t *go;
	int status;
	char code[CM_ERROR_CODE_MAX + 1];
};

static void *
race_create(void *arg)
{
	struct th_race *r = arg;

	pthread_barrier_wait(r->go);
	r->status = create_via(r->h, r->inst, NULL, r->code);
	return NULL;
}

/* Spaces of the workspace on inst that are not closed, and in all. */
static void
spaces_on(const char *inst, int *open, int *all)
{
	struct pr_req q = {.op = PR_OP_SPACE_LIST,
	    .workspace_id = world.workspace_id,
	    .limit = CM_LIST_LIMIT_MAX};
	struct pr_rep r;

	cr_assert_eq(tk_call(hb.sf.s, &q, &r), CM_OK);
	*open = *all = 0;
	for (size_t i = 0; i < r.n_spaces; i++) {
		if (strcmp(r.spaces[i].browser_instance_id, inst) != 0)
			continue;
		(*all)++;
		*open += strcmp(r.spaces[i].status, "closed") != 0;
	}
	pr_rep_free(&r);
}

Test(two_hosts, racing_creates_through_both_apis_leave_one_space, .fini = fini,
    .timeout = 120)
{
	enum { ROUNDS = 5 };
	char inst[ROUNDS][CM_ID_MAX + 1], name[32];
	pthread_barrier_t go;
	int open, all;

	two_hosts_start();
	for (int i = 0; i < ROUNDS; i++) {
		snprintf(name, sizeof(name), "fake-race-%d", i);
		host_instance(i % 2 ? &ha : &hb, name, inst[i]);
	}
	for (int i = 0; i < ROUNDS; i++) {
		struct th_race r[2] = {
		    {&ha, inst[i], &go, 0, ""}, {&hb, inst[i], &go, 0, ""}};
		pthread_t t[2];

		cr_assert_eq(pthread_barrier_init(&go, NULL, 2), 0);
		for (int k = 0; k < 2; k++)
			cr_assert_eq(
			    pthread_create(&t[k], NULL, race_create, &r[k]), 0);
		for (int k = 0; k < 2; k++)
			pthread_join(t[k], NULL);
		pthread_barrier_destroy(&go);
		cr_assert_eq((r[0].status == 201) + (r[1].status == 201), 1,
		    "round %d: %d and %d", i, r[0].status, r[1].status);
		for (int k = 0; k < 2; k++)
			if (r[k].status != 201) {
				cr_assert_eq(r[k].status, 409);
				cr_assert_str_eq(
				    r[k].code, "browser_instance_in_use");
			}
		spaces_on(inst[i], &open, &all);
		cr_assert_eq(open, 1, "round %d: %d active Spaces", i, open);
		cr_assert_eq(all, 1, "round %d: the loser left a row", i);
	}
	two_hosts_stop();
}

/* SIGKILL to every process under pid, then pid: the whole tree at once,
 * as a host that dies (none of them is left to finish anything). */
static void
kill_tree(pid_t pid)
{
	enum { MAX_PS = 4096 };
	struct tk_ps *ps = calloc(MAX_PS, sizeof(*ps));
	pid_t tree[256];
	int n_ps, n = 0;

	cr_assert_not_null(ps);
	n_ps = tk_ps_read(ps, MAX_PS);
	tree[n++] = pid;
	for (int i = 0; i < n; i++)
		for (int k = 0; k < n_ps && n < 256; k++)
			if (ps[k].ppid == tree[i])
				tree[n++] = ps[k].pid;
	free(ps);
	kill(pid, SIGSTOP); /* no restart while the rest go */
	for (int i = n - 1; i >= 0; i--)
		kill(tree[i], SIGKILL);
}

Test(two_hosts, a_killed_host_b_loses_its_task_and_picks_up_on_return,
    .fini = fini, .timeout = 240)
{
	char inst_b[CM_ID_MAX + 1], space[CM_ID_MAX + 1];
	char task[CM_ID_MAX + 1], next[CM_ID_MAX + 1];
	struct th_task_wait w = {0};
	int status;

	two_hosts_start();
	host_instance(&hb, "fake-b", inst_b);
	cr_assert_eq(create_via(&ha, inst_b, space, NULL), 201);
	cr_assert_neq(sf_wait_actor(&hb.sf, space, 0, SF_WAIT_MS), 0);
	submit_via_a(space, "long", "sleep", "{\"ms\": 60000}", task);
	cr_assert(sf_wait_fake(&hb.sf, "start", "task_id", task, SF_WAIT_MS),
	    "host-b never started the task");

	kill_tree(hb.sf.p.pid);
	cr_assert_eq(tk_proc_wait(&hb.sf.p, SF_WAIT_MS, &status), 0);
	nng_close(hb.sf.s);

	/* Only host-a is left to end it, once the lease is past. */
	w.space = space;
	w.task = task;
	w.status = "failed";
	cr_assert(
	    wait_task_via_a(&w, TH_LOST_WAIT_MS), "the lost task never ended");
	cr_assert_str_eq(w.error_code, "outcome_unknown");

	/* host-b comes back: its Space runs again, the lost task does not. */
	host_start(&hb);
	cr_assert_neq(sf_wait_actor(&hb.sf, space, 0, SF_WAIT_MS), 0,
	    "the restarted host-b started no actor for its Space");
	submit_via_a(space, "after", "noop", "{}", next);
	w.task = next;
	w.status = "completed";
	cr_assert(wait_task_via_a(&w, SF_WAIT_MS), "no task ran after return");
	cr_assert_eq(sf_fake_count(&hb.sf, "start", "task_id", task), 1,
	    "the lost task ran again");
	cr_assert_eq(sf_fake_count(&hb.sf, "start", "task_id", next), 1);
	cr_assert_eq(actors_of(&ha, space), 0);
	two_hosts_stop();
}

/* One event of a stream: its id (the sequence), kind and task. */
struct th_ev {
	long id;
	char kind[CM_ID_MAX + 1];
	char task[CM_ID_MAX + 1];
};

/* The events of an SSE stream's text into out (at most max); how many.
 * Each must carry its id as the data's sequence and its kind as both. */
static int
sse_parse(const char *text, struct th_ev *out, int max)
{
	const char *p = text;
	int n = 0;

	while (n < max && (p = strstr(p, "\nid: ")) != NULL) {
		const char *ev = strstr(p, "\nevent: ");
		const char *data = strstr(p, "\ndata: ");
		json_t *j;

		cr_assert(ev != NULL && data != NULL, "a cut event: %s", p);
		out[n].id = strtol(p + 5, NULL, 10);
		cr_assert_eq(sscanf(ev + 8, "%32s", out[n].kind), 1);
		cr_assert_not_null(
		    j = json_loads(data + 7, JSON_DISABLE_EOF_CHECK, NULL));
		cr_assert_eq(json_integer_value(json_object_get(j, "sequence")),
		    out[n].id);
		cr_assert_str_eq(sf_str(j, "kind"), out[n].kind);
		snprintf(out[n].task, sizeof(out[n].task), "%s",
		    sf_str(j, "task_id"));
		json_decref(j);
		n++;
		p = data;
	}
	return n;
}

/* The first event of kind for task in ev[0..n): its index, or -1. */
static int
sse_find(const struct th_ev *ev, int n, const char *kind, const char *task)
{
	for (int i = 0; i < n; i++)
		if (strcmp(ev[i].kind, kind) == 0 &&
		    (task == NULL || strcmp(ev[i].task, task) == 0))
			return i;
	return -1;
}

/* Reads more of stream fd into buf after its *len bytes, until stop
 * comes (or the bound); false when it did not. */
static bool
sse_read(int fd, char *buf, size_t cap, size_t *len, const char *stop,
    int timeout_ms, bool *eof)
{
	*len +=
	    raw_read_until(fd, buf + *len, cap - *len, stop, timeout_ms, eof);
	return strstr(buf, stop) != NULL;
}

Test(two_hosts, a_space_on_host_b_streams_its_events_through_both_apis,
    .fini = fini, .timeout = 120)
{
	enum { CAP = 64 * 1024, MAX_EV = 64 };
	static char buf[2][CAP];
	struct th_host *via[2] = {&ha, &hb};
	struct th_ev ev[2][MAX_EV];
	char inst_b[CM_ID_MAX + 1], space[CM_ID_MAX + 1];
	char task[CM_ID_MAX + 1], path[512];
	size_t len[2] = {0, 0};
	int fd[2], n[2], q, st, done;
	int64_t t0;
	bool eof;

	two_hosts_start();
	host_instance(&hb, "fake-b", inst_b);
	cr_assert_eq(create_via(&ha, inst_b, space, NULL), 201);
	cr_assert_neq(sf_wait_actor(&hb.sf, space, 0, SF_WAIT_MS), 0);

	/* A stream on each api, each past its replay of space_opened: from
	 * here on it gets what its host's store publishes. */
	snprintf(path, sizeof(path),
	    "/api/v1/workspaces/%s/browser-spaces/%s/events",
	    world.workspace_id, space);
	for (int k = 0; k < 2; k++) {
		fd[k] = raw_sse_open(&via[k]->sf.p, path, token);
		cr_assert(sse_read(fd[k], buf[k], CAP, &len[k],
		              "event: space_opened", SF_WAIT_MS, &eof),
		    "%s's stream: %s", via[k]->host_id, buf[k]);
		cr_assert_not_null(strstr(buf[k], "200 OK"), "%s", buf[k]);
	}

	/* The task, submitted through host-a, runs on host-b: its events
	 * reach both streams live, within the bound. */
	submit_via_a(space, "n1", "noop", "{}", task);
	t0 = cm_mono_ms();
	for (int k = 0; k < 2; k++)
		cr_assert(sse_read(fd[k], buf[k], CAP, &len[k],
		              "event: completed", SF_WAIT_MS, &eof),
		    "%s's stream never got the task's completed event after "
		    "%lld ms: %s",
		    via[k]->host_id, (long long)(cm_mono_ms() - t0), buf[k]);
	cr_log_info("both streams had the task's end after %lld ms",
	    (long long)(cm_mono_ms() - t0));
	for (int k = 0; k < 2; k++) {
		n[k] = sse_parse(buf[k], ev[k], MAX_EV);
		for (int i = 0; i < n[k]; i++)
			cr_assert_eq(ev[k][i].id, i + 1,
			    "%s's stream: sequence %ld at %d", via[k]->host_id,
			    ev[k][i].id, i);
		q = sse_find(ev[k], n[k], "queued", task);
		st = sse_find(ev[k], n[k], "started", task);
		done = sse_find(ev[k], n[k], "completed", task);
		cr_assert(q > 0 && st > q && done > st,
		    "%s's stream: queued %d, started %d, completed %d",
		    via[k]->host_id, q, st, done);
	}
	/* The same sequence on both, up to the task's end. */
	done = sse_find(ev[0], n[0], "completed", task);
	cr_assert_eq(sse_find(ev[1], n[1], "completed", task), done);
	for (int i = 0; i <= done; i++)
		cr_assert_str_eq(ev[0][i].kind, ev[1][i].kind, "at %d", i);

	/* Closed through host-a, torn down by host-b: both streams end. */
	snprintf(path, sizeof(path),
	    "/api/v1/workspaces/%s/browser-spaces/%s/close", world.workspace_id,
	    space);
	cr_assert_eq(
	    tk_http(&ha.sf.p, "POST", path, token, NULL, NULL, NULL) / 100, 2);
	for (int k = 0; k < 2; k++) {
		cr_assert(sse_read(fd[k], buf[k], CAP, &len[k],
		              "event: space_closed", SF_WAIT_MS, &eof),
		    "%s's stream did not end on close", via[k]->host_id);
		close(fd[k]);
	}
	two_hosts_stop();
}

/* ---- both hosts at once, each through the other ------------------------ */

#define TH_CROSS_SPACES 6 /* a host */
#define TH_CROSS_TASKS 40 /* a Space */

struct th_cross {
	struct th_host *via; /* the other host */
	char space[CM_ID_MAX + 1];
	pthread_barrier_t *go;
	int done, refused;
	char why[256];
};

/* Runs TH_CROSS_TASKS noops one after another, each POST ?wait=30. */
static void *
cross_run(void *arg)
{
	struct th_cross *c = arg;
	char path[256], body[128], *text;

	snprintf(path, sizeof(path),
	    "/api/v1/workspaces/%s/browser-spaces/%s/tasks?wait=30",
	    world.workspace_id, c->space);
	pthread_barrier_wait(c->go);
	for (int i = 0; i < TH_CROSS_TASKS; i++) {
		json_t *res;
		int status;

		snprintf(body, sizeof(body),
		    "{\"request_id\": \"x%d\", \"capability\": \"noop\", "
		    "\"args\": {}}",
		    i);
		text = NULL;
		status = tk_http(
		    &c->via->sf.p, "POST", path, token, body, NULL, &text);
		res = text != NULL ? json_loads(text, 0, NULL) : NULL;
		if (status == 200 &&
		    strcmp(sf_str(json_object_get(res, "data"), "status"),
		        "completed") == 0) {
			c->done++;
		} else {
			c->refused++;
			if (c->why[0] == '\0')
				snprintf(c->why, sizeof(c->why), "%d %.200s",
				    status, text ? text : "");
		}
		json_decref(res);
		free(text);
	}
	return NULL;
}

/* Tasks of the schema in status st (through a connection of the test). */
static long
tasks_in(const char *st)
{
	char sql[256];
	PGconn *c = PQconnectdb(dsn);
	PGresult *r;
	long n = -1;

	cr_assert_eq(PQstatus(c), CONNECTION_OK, "%s", PQerrorMessage(c));
	PQsetNoticeProcessor(c, quiet, NULL);
	snprintf(sql, sizeof(sql),
	    "SELECT count(*) FROM browser_space_tasks WHERE status = '%s'", st);
	r = PQexec(c, sql);
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
		n = strtol(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	PQfinish(c);
	return n;
}

Test(two_hosts, tasks_through_the_other_host_both_ways_all_complete,
    .fini = fini, .timeout = 180)
{
	struct th_cross cl[2 * TH_CROSS_SPACES];
	pthread_t th[2 * TH_CROSS_SPACES];
	pthread_barrier_t go;
	char inst[CM_ID_MAX + 1], name[32];
	int done = 0, refused = 0;
	int64_t t0;

	two_hosts_start();
	memset(cl, 0, sizeof(cl));
	for (int i = 0; i < 2 * TH_CROSS_SPACES; i++) {
		struct th_host *own = i < TH_CROSS_SPACES ? &ha : &hb;

		cl[i].via = own == &ha ? &hb : &ha;
		snprintf(name, sizeof(name), "fake-%d", i);
		host_instance(own, name, inst);
		cr_assert_eq(
		    create_via(cl[i].via, inst, cl[i].space, NULL), 201);
		cr_assert_neq(
		    sf_wait_actor(&own->sf, cl[i].space, 0, SF_WAIT_MS), 0,
		    "%s started no actor for its Space", own->host_id);
	}
	pthread_barrier_init(&go, NULL, 2 * TH_CROSS_SPACES + 1);
	for (int i = 0; i < 2 * TH_CROSS_SPACES; i++) {
		cl[i].go = &go;
		cr_assert_eq(
		    pthread_create(&th[i], NULL, cross_run, &cl[i]), 0);
	}
	pthread_barrier_wait(&go);
	t0 = cm_mono_ms();
	for (int i = 0; i < 2 * TH_CROSS_SPACES; i++) {
		pthread_join(th[i], NULL);
		done += cl[i].done;
		refused += cl[i].refused;
	}
	cr_log_info("cross: %d tasks completed, %d not, in %lld ms", done,
	    refused, (long long)(cm_mono_ms() - t0));
	for (int i = 0; i < 2 * TH_CROSS_SPACES; i++)
		cr_expect_eq(cl[i].refused, 0,
		    "Space %d through %s: %d not "
		    "completed, first: %s",
		    i, cl[i].via->host_id, cl[i].refused, cl[i].why);
	cr_assert_eq(done, 2 * TH_CROSS_SPACES * TH_CROSS_TASKS);
	cr_assert_eq(tasks_in("running"), 0, "a task was left running");
	cr_assert_eq(tasks_in("queued"), 0, "a task was left queued");
	pthread_barrier_destroy(&go);
	two_hosts_stop();
}
