/*
 * actor_bench: the actor path end to end, through the real supervisor
 * (spaced) with fake instances, on a temporary data dir.  Every metric
 * starts its own spaced and stops it (and every process it started)
 * before the next one.  Events are read from the store's internal PUB
 * socket by one subscriber thread that stamps each event with the
 * monotonic clock on receipt and hands it to the waiting client.
 *
 *   actor_bench [latency] [throughput] [create] [memory] [restart]
 *   ACTOR_BENCH_SECONDS=N   duration of each throughput run (default 3)
 *   ACTOR_BENCH_SPACES=L    throughput runs, e.g. "64" (default "1,8,64")
 *   ACTOR_BENCH_IDLE=N      throughput runs also keep N idle Spaces (each
 *                           with its actor) beside the busy ones (default 0;
 *                           busy + idle at most 1024 on SQLite, whose
 *                           runs set max_spaces_per_workspace to that;
 *                           64 on PostgreSQL, the default quota)
 *   TK_PG_STATE=FILE        on PostgreSQL: the state file of a cluster that
 *                           tests/pg/cluster.sh started (testkit gives each
 *                           spaced a fresh schema of it); SQLite without
 *   ACTOR_BENCH_HOSTS=2     latency and throughput on two spaced, host-a
 *                           and host-b, sharing one schema (PostgreSQL
 *                           only): the instances split in halves, latency
 *                           and throughput once with each Space driven
 *                           through its own host and once through the
 *                           other (its events cross hosts both ways)
 *
 * make bench-pg runs latency and throughput with 64 Spaces on SQLite,
 * PostgreSQL and two hosts on PostgreSQL, one after the other, in a
 * throwaway cluster.
 *
 * Metrics (docs/performance.md has the targets; nothing here asserts them):
 *   latency     task.submit sent -> its `completed` event received, noop
 *               task, fake runtime with latency_ms 0, one Space, N=2000
 *               sequential tasks after 200 warm-up tasks; and before
 *               them, what one sync of the disk costs in the data dir
 *               (a task waits for two, one after the other).
 *   throughput  noop tasks per second with 1, 8 and 64 Spaces (one
 *               instance and one client thread per Space; each client
 *               submits, waits for the task's `completed` event, repeats).
 *   create      space.create sent -> `started` event of a noop task
 *               submitted as soon as create replied (the new actor can
 *               only claim it once it is up), 50 creates, each Space
 *               closed (space_closed seen) before the next create.
 *   memory      /proc/<pid>/smaps_rollup of 16 idle actors (each ran one
 *               task, then idle for 1.5 s): Pss and Private_Clean +
 *               Private_Dirty in KiB.
 *   restart     kill -9 of an idle actor -> `started` event of a noop task
 *               submitted right after the kill, with a new actor pid for
 *               the Space verified to exist; the first kill of each of 20
 *               Spaces, then a second kill within 60 s of 5 of them.
 *
 * Times are printed in ms truncated to the microsecond (never rounded up).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <nng/nng.h>
#include <nng/protocol/pubsub0/sub.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "testkit.h"

#define AB_FAKE_CONFIG "{\"latency_ms\":0}"
#define AB_EVENT_WAIT_MS 2000  /* then fall back to polling task.get */
#define AB_TASK_WAIT_MS 10000  /* a task that takes longer is an error */
#define AB_CLOSE_WAIT_MS 10000 /* space.close -> space_closed */
#define AB_SLOTS_MAX 256
#define AB_CHILDREN_MAX (TK_MAX_INSTANCES + 16) /* actors, store, api */

#define LAT_WARMUP 200
#define LAT_N 2000
#define CREATE_WARMUP 5
#define CREATE_N 50
#define MEM_SPACES 16
#define MEM_IDLE_MS 1500
#define RESTART_N 20
#define RESTART_AGAIN_N 5

/* ---- the subscriber ------------------------------------------------------
 * One SUB socket on the store's event PUB, filtered by the workspace's
 * topic prefix; one thread receives (pollable fd, non-blocking receives:
 * nng 1.5.2's SUB with a receive timeout can crash after long runs) and
 * records, per Space, the latest started and finished task and whether
 * space_closed was seen.  A Space runs one task at a time and each client
 * is sequential, so "latest" is all a waiter needs. */

enum ab_kind { AB_STARTED, AB_FINISHED, AB_CLOSED };

struct slot {
	char space_id[CM_ID_MAX + 1];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char started_task[CM_ID_MAX + 1];
	int64_t started_ns;
	char finished_task[CM_ID_MAX + 1];
	char finished_status[32];
	int64_t finished_ns;
	bool closed;
	int64_t closed_ns;
	int64_t last_seq;
};

struct disp {
	nng_socket sub;
	int fd;
	pthread_t th;
	atomic_bool stop;
	pthread_mutex_t table_mu;
	struct slot *slots[AB_SLOTS_MAX];
	size_t n_slots;
	/* counters, read after the thread stopped */
	long events;
	long gaps; /* committed events missing between two received ones */
	long bad;  /* events that did not decode */
};

static struct slot *
disp_find(struct disp *d, const char *space_id)
{
	struct slot *s = NULL;

	pthread_mutex_lock(&d->table_mu);
	for (size_t i = 0; i < d->n_slots; i++) {
		if (strcmp(d->slots[i]->space_id, space_id) == 0) {
			s = d->slots[i];
			break;
		}
	}
	pthread_mutex_unlock(&d->table_mu);
	return s;
}

static void
disp_record(struct disp *d, const struct pr_event *ev, int64_t t_ns)
{
	struct slot *s = disp_find(d, ev->space_id);
	const char *k = ev->kind;

	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	if (ev->sequence > 0) {
		if (s->last_seq > 0 && ev->sequence > s->last_seq + 1)
			d->gaps += (long)(ev->sequence - s->last_seq - 1);
		if (ev->sequence > s->last_seq)
			s->last_seq = ev->sequence;
	}
	if (strcmp(k, "started") == 0 && ev->task_id != NULL) {
		snprintf(s->started_task, sizeof(s->started_task), "%s",
		    ev->task_id);
		s->started_ns = t_ns;
	} else if ((strcmp(k, "completed") == 0 || strcmp(k, "failed") == 0 ||
	               strcmp(k, "cancelled") == 0) &&
	           ev->task_id != NULL) {
		snprintf(s->finished_task, sizeof(s->finished_task), "%s",
		    ev->task_id);
		snprintf(
		    s->finished_status, sizeof(s->finished_status), "%s", k);
		s->finished_ns = t_ns;
	} else if (strcmp(k, "space_closed") == 0) {
		s->closed = true;
		s->closed_ns = t_ns;
	} else {
		pthread_mutex_unlock(&s->mu);
		return;
	}
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static void *
disp_run(void *arg)
{
	struct disp *d = arg;

	while (!atomic_load(&d->stop)) {
		struct pollfd pfd = {d->fd, POLLIN, 0};
		nng_msg *m;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		while (nng_recvmsg(d->sub, &m, NNG_FLAG_NONBLOCK) == 0) {
			int64_t t_ns = cm_mono_ns();
			struct pr_arena arena = {0};
			struct pr_event ev;
			char err[128];

			d->events++;
			if (pr_pub_decode(nng_msg_body(m), nng_msg_len(m), &ev,
			        NULL, &arena, err, sizeof(err)) != 0)
				d->bad++;
			else
				disp_record(d, &ev, t_ns);
			pr_arena_free(&arena);
			nng_msg_free(m);
		}
	}
	return NULL;
}

static int
disp_start(struct disp *d, const char *url, const char *workspace_id)
{
	char topic[CM_TOPIC_MAX];
	int n, rv;

	memset(d, 0, sizeof(*d));
	pthread_mutex_init(&d->table_mu, NULL);
	atomic_init(&d->stop, false);
	n = snprintf(topic, sizeof(topic), "ev/%s/", workspace_id);
	if (n < 0 || (size_t)n >= sizeof(topic))
		return -1;
	if ((rv = nng_sub0_open(&d->sub)) != 0 ||
	    (rv = nng_socket_set(
	         d->sub, NNG_OPT_SUB_SUBSCRIBE, topic, (size_t)n)) != 0 ||
	    (rv = nng_socket_set_int(d->sub, NNG_OPT_RECVBUF, CM_PUB_BUF)) !=
	        0 ||
	    (rv = nng_socket_set_size(d->sub, NNG_OPT_RECVMAXSZ, CM_MSG_MAX)) !=
	        0 ||
	    (rv = nng_dial(d->sub, url, NULL, 0)) != 0 ||
	    (rv = nng_socket_get_int(d->sub, NNG_OPT_RECVFD, &d->fd)) != 0) {
		fprintf(stderr, "actor_bench: subscribe %s: %s\n", url,
		    nng_strerror(rv));
		return -1;
	}
	if (pthread_create(&d->th, NULL, disp_run, d) != 0)
		return -1;
	return 0;
}

static void
disp_stop(struct disp *d)
{
	atomic_store(&d->stop, true);
	pthread_join(d->th, NULL);
	nng_close(d->sub);
	for (size_t i = 0; i < d->n_slots; i++) {
		pthread_mutex_destroy(&d->slots[i]->mu);
		pthread_cond_destroy(&d->slots[i]->cv);
		free(d->slots[i]);
	}
	d->n_slots = 0;
	pthread_mutex_destroy(&d->table_mu);
}

static struct slot *
disp_add(struct disp *d, const char *space_id)
{
	pthread_condattr_t ca;
	struct slot *s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	snprintf(s->space_id, sizeof(s->space_id), "%s", space_id);
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_lock(&d->table_mu);
	if (d->n_slots == AB_SLOTS_MAX) {
		pthread_mutex_unlock(&d->table_mu);
		free(s);
		return NULL;
	}
	d->slots[d->n_slots++] = s;
	pthread_mutex_unlock(&d->table_mu);
	return s;
}

static bool
slot_has(const struct slot *s, enum ab_kind kind, const char *task_id)
{
	switch (kind) {
	case AB_STARTED:
		return strcmp(s->started_task, task_id) == 0;
	case AB_FINISHED:
		return strcmp(s->finished_task, task_id) == 0;
	case AB_CLOSED:
		return s->closed;
	}
	return false;
}

/*
 * Waits up to timeout_ms for the event; *t_ns is when the subscriber
 * received it.  status (may be NULL) gets the terminal kind for
 * AB_FINISHED.  Returns 0, or -1 on timeout.
 */
static int
slot_wait(struct slot *s, enum ab_kind kind, const char *task_id,
    int timeout_ms, int64_t *t_ns, char *status, size_t status_len)
{
	int64_t deadline_ns = cm_mono_ns() + (int64_t)timeout_ms * 1000000;
	struct timespec ts = {(time_t)(deadline_ns / 1000000000),
	    (long)(deadline_ns % 1000000000)};
	int rc = 0;

	pthread_mutex_lock(&s->mu);
	while (!slot_has(s, kind, task_id)) {
		if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) == ETIMEDOUT &&
		    !slot_has(s, kind, task_id)) {
			rc = -1;
			break;
		}
	}
	if (rc == 0) {
		*t_ns = kind == AB_STARTED    ? s->started_ns
		        : kind == AB_FINISHED ? s->finished_ns
		                              : s->closed_ns;
		if (status != NULL && kind == AB_FINISHED)
			snprintf(status, status_len, "%s", s->finished_status);
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

/* ---- one spaced ---------------------------------------------------------- */

struct env {
	struct tk_proc p;
	char dir[128];
	nng_socket req;
	bool req_open;
	struct tk_world w;
	struct disp d;
	bool disp_on;
};

static bool
call_ok(nng_socket s, const struct pr_req *q, struct pr_rep *r)
{
	return cm_rpc_call(s, q, r, 10000) == CM_OK && r->err == CM_OK;
}

/* Children of parent, from the PPid lines in /proc. */
static int
child_pids(pid_t parent, pid_t *pids, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	if (d == NULL)
		return 0;
	while (n < max && (de = readdir(d)) != NULL) {
		char path[300], *status, *pp, *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end != '\0' || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/status", pid);
		if ((status = tk_read_file(path, NULL)) == NULL)
			continue;
		pp = strstr(status, "\nPPid:");
		if (pp != NULL && strtol(pp + 6, NULL, 10) == (long)parent)
			pids[n++] = (pid_t)pid;
		free(status);
	}
	closedir(d);
	return n;
}

/* Whether pid is still a process running one of our binaries. */
static bool
is_ours(pid_t pid)
{
	char path[64], *cmd;
	bool ours;

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)pid);
	if ((cmd = tk_read_file(path, NULL)) == NULL)
		return false;
	ours = strstr(cmd, "/spaced-") != NULL;
	free(cmd);
	return ours;
}

static void
env_stop(struct env *e)
{
	pid_t kids[AB_CHILDREN_MAX];
	int n = 0, left = 0;

	if (e->disp_on) {
		disp_stop(&e->d);
		e->disp_on = false;
	}
	if (e->req_open) {
		nng_close(e->req);
		e->req_open = false;
	}
	if (e->p.pid > 0) {
		n = child_pids(e->p.pid, kids, AB_CHILDREN_MAX);
		/* spaced stops its actors first and the store last. */
		tk_proc_stop(&e->p, SIGTERM);
	}
	/* Anything the supervisor left behind (it should leave nothing). */
	for (int i = 0; i < n; i++) {
		if (kids[i] > 0 && is_ours(kids[i])) {
			kill(kids[i], SIGKILL);
			left++;
		}
	}
	if (left > 0)
		fprintf(stderr,
		    "actor_bench: %d children outlived spaced; killed\n", left);
	if (e->dir[0] != '\0')
		tk_rmrf(e->dir);
	e->dir[0] = '\0';
}

/*
 * Starts spaced on a fresh data dir (host_id: NULL for the default) and
 * opens its store.  With share (a data dir of a spaced started under
 * TK_PG_STATE), its testkit config, naming a schema, is copied first: the
 * two share one database.
 */
static int
host_start(
    struct env *e, const char *tag, const char *host_id, const char *share)
{
	char id[CM_HOST_MAX + 16], path[256], conf_flag[300], *conf;
	const char *flags[] = {"--log-level=warn", NULL, NULL, NULL};
	size_t n = 0;
	FILE *f;

	memset(e, 0, sizeof(*e));
	tk_tmpdir(e->dir, sizeof(e->dir), tag);
	if (host_id != NULL) {
		snprintf(id, sizeof(id), "--host-id=%s", host_id);
		flags[1] = id;
	}
	if (share != NULL) {
		snprintf(path, sizeof(path), "%s/pg.conf", share);
		if ((conf = tk_read_file(path, &n)) == NULL)
			return tk_fail("actor_bench", "no %s", path);
		snprintf(path, sizeof(path), "%s/pg.conf", e->dir);
		f = fopen(path, "w");
		if (f == NULL || fwrite(conf, 1, n, f) != n) {
			if (f != NULL)
				fclose(f);
			free(conf);
			return tk_fail("actor_bench", "cannot write %s", path);
		}
		free(conf);
		if (fclose(f) != 0)
			return tk_fail("actor_bench", "cannot write %s", path);
	}
	if (share == NULL && getenv("TK_PG_STATE") == NULL) {
		/* SQLite: a quota past the most Spaces a run opens. */
		snprintf(path, sizeof(path), "%s/ab.conf", e->dir);
		if ((f = fopen(path, "w")) == NULL ||
		    fprintf(f, "max_spaces_per_workspace = %d\n",
		        TK_MAX_INSTANCES) < 0 ||
		    fclose(f) != 0)
			return tk_fail("actor_bench", "cannot write %s", path);
		snprintf(conf_flag, sizeof(conf_flag), "--config=%s", path);
		flags[host_id != NULL ? 2 : 1] = conf_flag;
	}
	if (tk_spaced_start(&e->p, e->dir, flags) != 0)
		return tk_fail("actor_bench", "spaced did not start");
	if (cm_rpc_open(&e->req, e->p.store_url) != 0)
		return -1;
	e->req_open = true;
	return 0;
}

static int
env_start(struct env *e, const char *tag, size_t n_instances)
{
	if (host_start(e, tag, NULL, NULL) != 0)
		goto fail;
	if (tk_provision_with(e->req, &e->w, n_instances, AB_FAKE_CONFIG) !=
	    0) {
		fprintf(stderr, "actor_bench: provisioning failed\n");
		goto fail;
	}
	if (disp_start(&e->d, e->p.events_url, e->w.workspace_id) != 0)
		goto fail;
	e->disp_on = true;
	return 0;
fail:
	env_stop(e);
	return -1;
}

/* ---- one or two hosts ----------------------------------------------------
 * ACTOR_BENCH_HOSTS=2 (on PostgreSQL: TK_PG_STATE) runs the latency and
 * throughput metrics on two spaced sharing one database, host-a and
 * host-b, each with its own data dir and subscriber.  The world is
 * provisioned through host-a; of n instances the first (n + 1) / 2 are
 * host-a's, the rest host-b's, so a Space runs on its instance's host. */

#define AB_HOSTS_MAX 2

static int n_hosts = 1; /* ACTOR_BENCH_HOSTS */

struct fleet {
	struct env h[AB_HOSTS_MAX];
	int n;
	size_t half; /* instances [0, half) are host-a's */
};

static void
fleet_stop(struct fleet *f)
{
	for (int i = f->n - 1; i >= 0; i--)
		env_stop(&f->h[i]);
}

static int
fleet_start(struct fleet *f, const char *tag, size_t n_instances)
{
	static const char *const ids[AB_HOSTS_MAX] = {"host-a", "host-b"};
	struct env *a = &f->h[0], *b = &f->h[1];
	char name[32];

	memset(f, 0, sizeof(*f));
	f->n = n_hosts;
	f->half = n_hosts == 1 ? n_instances : (n_instances + 1) / 2;
	if (n_hosts == 1)
		return env_start(a, tag, n_instances);
	if (host_start(a, tag, ids[0], NULL) != 0 ||
	    tk_provision_with(a->req, &a->w, f->half, AB_FAKE_CONFIG) != 0 ||
	    host_start(b, tag, ids[1], a->dir) != 0)
		goto fail;
	for (size_t i = f->half; i < n_instances; i++) {
		snprintf(name, sizeof(name), "fake-b-%zu", i);
		if (tk_instance_on(a->req, &a->w, name, ids[1], AB_FAKE_CONFIG,
		        a->w.instance_id[i]) != 0)
			goto fail;
	}
	a->w.n_instances = n_instances;
	b->w = a->w;
	for (int i = 0; i < f->n; i++) {
		if (disp_start(&f->h[i].d, f->h[i].p.events_url,
		        f->h[i].w.workspace_id) != 0)
			goto fail;
		f->h[i].disp_on = true;
	}
	return 0;
fail:
	fprintf(stderr, "actor_bench: two hosts did not start\n");
	fleet_stop(f);
	return -1;
}

/* The host (0: host-a) whose instance i is. */
static int
fleet_host_of(const struct fleet *f, size_t i)
{
	return i < f->half ? 0 : 1;
}

/* Running actors under every host. */
static int
fleet_actors(const struct fleet *f)
{
	pid_t pids[TK_MAX_INSTANCES];
	int n = 0;

	for (int i = 0; i < f->n; i++)
		n += tk_actor_pids(f->h[i].p.pid, NULL, pids, TK_MAX_INSTANCES);
	return n;
}

/* What the figures were measured on, for their lines. */
static const char *
setup_txt(bool cross)
{
	if (getenv("TK_PG_STATE") == NULL)
		return "sqlite synchronous=FULL, 1 host";
	if (n_hosts == 1)
		return "postgres, 1 host";
	return cross ? "postgres, 2 hosts, each Space driven through the "
	               "other host"
	             : "postgres, 2 hosts, each Space driven through its own "
	               "host";
}

static int
space_create(struct env *e, size_t instance, char *space_id)
{
	struct pr_req q;
	struct pr_rep r;
	int rc = 0;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SPACE_CREATE;
	q.workspace_id = e->w.workspace_id;
	q.browser_instance_id = e->w.instance_id[instance];
	q.owner_type = "operator";
	q.owner_id = e->w.operator_id;
	if (!call_ok(e->req, &q, &r) || r.n_spaces != 1) {
		fprintf(stderr, "actor_bench: space.create: %s %s\n",
		    cm_err_code(r.err), r.msg ? r.msg : "");
		rc = -1;
	} else {
		snprintf(space_id, CM_ID_MAX + 1, "%s", r.spaces[0].space_id);
	}
	pr_rep_free(&r);
	return rc;
}

static int
space_close(struct env *e, const char *space_id)
{
	struct pr_req q;
	struct pr_rep r;
	int rc = 0;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SPACE_CLOSE;
	q.workspace_id = e->w.workspace_id;
	q.space_id = space_id;
	if (!call_ok(e->req, &q, &r)) {
		fprintf(stderr, "actor_bench: space.close: %s\n",
		    cm_err_code(r.err));
		rc = -1;
	}
	pr_rep_free(&r);
	return rc;
}

/* Submits a noop task; task_id gets its id. */
static int
submit_noop(nng_socket s, const char *workspace_id, const char *space_id,
    const char *request_id, char *task_id)
{
	struct pr_req q;
	struct pr_rep r;
	int rc = 0;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_TASK_SUBMIT;
	q.workspace_id = workspace_id;
	q.space_id = space_id;
	q.request_id = request_id;
	q.capability = "noop";
	if (!call_ok(s, &q, &r) || r.n_tasks != 1) {
		fprintf(stderr, "actor_bench: task.submit: %s %s\n",
		    cm_err_code(r.err), r.msg ? r.msg : "");
		rc = -1;
	} else {
		snprintf(task_id, CM_ID_MAX + 1, "%s", r.tasks[0].task_id);
	}
	pr_rep_free(&r);
	return rc;
}

/* Polls task.get until the task is terminal (after a lost event). */
static int
poll_finished(nng_socket s, const char *workspace_id, const char *space_id,
    const char *task_id, char *status, size_t status_len)
{
	int64_t deadline = cm_mono_ms() + AB_TASK_WAIT_MS;
	struct timespec pause = {0, 5 * 1000 * 1000};

	while (cm_mono_ms() < deadline) {
		struct pr_req q;
		struct pr_rep r;
		bool done = false;

		memset(&q, 0, sizeof(q));
		q.op = PR_OP_TASK_GET;
		q.workspace_id = workspace_id;
		q.space_id = space_id;
		q.task_id = task_id;
		if (call_ok(s, &q, &r) && r.n_tasks == 1 &&
		    strcmp(r.tasks[0].status, "queued") != 0 &&
		    strcmp(r.tasks[0].status, "running") != 0) {
			snprintf(status, status_len, "%s", r.tasks[0].status);
			done = true;
		}
		pr_rep_free(&r);
		if (done)
			return 0;
		nanosleep(&pause, NULL);
	}
	return -1;
}

/*
 * Waits for the task's terminal event.  Returns 1 when the event arrived
 * (*t_ns set), 0 when it was lost but the task did finish (seen through
 * task.get), -1 when the task never finished or did not complete.
 */
static int
wait_finished(nng_socket s, const char *workspace_id, struct slot *sl,
    const char *task_id, int64_t *t_ns)
{
	char status[32] = "";
	int got = 1;

	if (slot_wait(sl, AB_FINISHED, task_id, AB_EVENT_WAIT_MS, t_ns, status,
	        sizeof(status)) != 0) {
		got = 0;
		if (poll_finished(s, workspace_id, sl->space_id, task_id,
		        status, sizeof(status)) != 0) {
			fprintf(stderr, "actor_bench: task %s never finished\n",
			    task_id);
			return -1;
		}
	}
	if (strcmp(status, "completed") != 0) {
		fprintf(
		    stderr, "actor_bench: task %s ended %s\n", task_id, status);
		return -1;
	}
	return got;
}

/* ---- statistics ---------------------------------------------------------- */

static void
print_dist(const char *label, int64_t *v, size_t n, const char *extra)
{
	char a[32], b[32], c[32], d[32], e[32];

	tk_sort_i64(v, n);
	printf("%s: n=%zu p50=%s p90=%s p99=%s max=%s min=%s ms%s%s\n", label,
	    n, tk_ms(tk_pct(v, n, 50), a, sizeof(a)),
	    tk_ms(tk_pct(v, n, 90), b, sizeof(b)),
	    tk_ms(tk_pct(v, n, 99), c, sizeof(c)),
	    tk_ms(n ? v[n - 1] : 0, d, sizeof(d)),
	    tk_ms(n ? v[0] : 0, e, sizeof(e)), extra ? " " : "",
	    extra ? extra : "");
	fflush(stdout);
}

static void
print_events(const char *metric, const struct disp *d, long missed)
{
	printf("  %s events: received=%ld undecodable=%ld sequence_gaps=%ld "
	       "completion_events_missed=%ld\n",
	    metric, d->events, d->bad, d->gaps, missed);
	fflush(stdout);
}

/* ---- where the CPU went ---------------------------------------------------
 * Snapshots of CPU time (utime + stime, all threads) and context switches
 * (all threads) of the bench, the supervisor, the store and the actors,
 * and of the whole machine, so a run says how much of the machine was
 * someone else's and how the work was split. */

enum { U_BENCH, U_SUP, U_STORE, U_API, U_ACTORS, U_PG, U__N };

/* The PostgreSQL server of TK_PG_STATE's cluster (its postmaster), whose
 * CPU, and its backends', is counted on its own; 0 on SQLite. */
static pid_t pg_server;

static pid_t
pg_server_pid(void)
{
	const char *state = getenv("TK_PG_STATE");
	char *text, *dir, *nl, path[512];
	pid_t pid = 0;

	if (state == NULL || (text = tk_read_file(state, NULL)) == NULL)
		return 0;
	if ((dir = strstr(text, "# dir ")) != NULL) {
		dir += 6;
		if ((nl = strchr(dir, '\n')) != NULL)
			*nl = '\0';
		snprintf(path, sizeof(path), "%s/data/postmaster.pid", dir);
		free(text);
		if ((text = tk_read_file(path, NULL)) != NULL)
			pid = (pid_t)strtol(text, NULL, 10);
	}
	free(text);
	return pid;
}

struct usage {
	int64_t busy, total; /* machine, in ticks summed over CPUs */
	int64_t ticks[U__N];
	int64_t cs[U__N];
	int n_actors;
};

/* Context switches of every thread of a process. */
static int64_t
proc_cs(pid_t pid)
{
	char path[300];
	struct dirent *de;
	int64_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%ld/task", (long)pid);
	if ((d = opendir(path)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char *text, *p;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/task/%s/status",
		    (long)pid, de->d_name);
		if ((text = tk_read_file(path, NULL)) == NULL)
			continue;
		if ((p = strstr(text, "\nvoluntary_ctxt_switches:")) != NULL)
			n += strtoll(p + 26, NULL, 10);
		if ((p = strstr(text, "\nnonvoluntary_ctxt_switches:")) != NULL)
			n += strtoll(p + 29, NULL, 10);
		free(text);
	}
	closedir(d);
	return n;
}

static void
usage_snap(struct usage *u, pid_t spaced)
{
	pid_t kids[AB_CHILDREN_MAX];
	char *text;
	int n;

	memset(u, 0, sizeof(*u));
	if ((text = tk_read_file("/proc/stat", NULL)) != NULL) {
		long long f[8] = {0};
		char *p = text + 3, *end;

		for (int i = 0; i < 8; i++, p = end)
			f[i] = strtoll(p, &end, 10);
		/* user nice system idle iowait irq softirq steal */
		u->busy = f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
		u->total = u->busy + f[3] + f[4];
		free(text);
	}
	u->ticks[U_BENCH] = tk_proc_ticks(getpid());
	u->cs[U_BENCH] = proc_cs(getpid());
	u->ticks[U_SUP] = tk_proc_ticks(spaced);
	u->cs[U_SUP] = proc_cs(spaced);
	n = child_pids(spaced, kids, AB_CHILDREN_MAX);
	for (int i = 0; i < n; i++) {
		char path[64], *cmd;
		int k;

		snprintf(
		    path, sizeof(path), "/proc/%ld/cmdline", (long)kids[i]);
		if ((cmd = tk_read_file(path, NULL)) == NULL)
			continue;
		k = strstr(cmd, "spaced-store") != NULL   ? U_STORE
		    : strstr(cmd, "spaced-api") != NULL   ? U_API
		    : strstr(cmd, "spaced-actor") != NULL ? U_ACTORS
		                                          : -1;
		free(cmd);
		if (k < 0)
			continue;
		u->ticks[k] += tk_proc_ticks(kids[i]);
		u->cs[k] += proc_cs(kids[i]);
		if (k == U_ACTORS)
			u->n_actors++;
	}
	if (pg_server > 0) {
		u->ticks[U_PG] = tk_proc_ticks(pg_server);
		n = child_pids(pg_server, kids, AB_CHILDREN_MAX);
		for (int i = 0; i < n; i++)
			u->ticks[U_PG] += tk_proc_ticks(kids[i]);
	}
}

/* CPU shares between two snapshots, as % of one CPU, and context switches
 * and CPU time per task of each process (the actors summed).  Actors that
 * start or die in between skew their share. */
static void
print_usage(const char *label, const struct usage *a, const struct usage *b,
    int64_t wall_ns, long tasks)
{
	double tck = (double)sysconf(_SC_CLK_TCK),
	       wall_s = (double)wall_ns / 1e9;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	double pc[U__N], ours = 0, busy, other;

	if (wall_s <= 0 || tasks <= 0)
		return;
	for (int i = 0; i < U__N; i++) {
		pc[i] =
		    (double)(b->ticks[i] - a->ticks[i]) / tck / wall_s * 100;
		ours += pc[i];
	}
	busy = b->total > a->total
	           ? (double)(b->busy - a->busy) /
	                 (double)(b->total - a->total) * 100 * (double)cpus
	           : 0;
	other = busy - ours > 0 ? busy - ours : 0;
	printf(
	    "  %s cpu (%% of one CPU, %ld CPUs): machine busy=%.0f bench=%.0f "
	    "supervisor=%.0f store=%.0f api=%.0f actors(%d)=%.0f "
	    "postgres=%.0f other_processes=%.0f\n",
	    label, cpus, busy, pc[U_BENCH], pc[U_SUP], pc[U_STORE], pc[U_API],
	    b->n_actors, pc[U_ACTORS], pc[U_PG], other);
	printf("  %s per task: context switches store=%.2f actors_total=%.2f "
	       "api=%.2f supervisor=%.2f bench=%.2f; cpu us store=%.1f "
	       "actors_total=%.1f api=%.1f supervisor=%.1f\n",
	    label, (double)(b->cs[U_STORE] - a->cs[U_STORE]) / (double)tasks,
	    (double)(b->cs[U_ACTORS] - a->cs[U_ACTORS]) / (double)tasks,
	    (double)(b->cs[U_API] - a->cs[U_API]) / (double)tasks,
	    (double)(b->cs[U_SUP] - a->cs[U_SUP]) / (double)tasks,
	    (double)(b->cs[U_BENCH] - a->cs[U_BENCH]) / (double)tasks,
	    pc[U_STORE] / 100 * wall_s * 1e6 / (double)tasks,
	    pc[U_ACTORS] / 100 * wall_s * 1e6 / (double)tasks,
	    pc[U_API] / 100 * wall_s * 1e6 / (double)tasks,
	    pc[U_SUP] / 100 * wall_s * 1e6 / (double)tasks);
	fflush(stdout);
}

/* ---- 1. latency ---------------------------------------------------------- */

/* ---- the disk's share ---------------------------------------------------
 * A no-op task under synchronous=FULL waits for two syncs, one after the
 * other: its submit's (with the claim it answers) before its actor is
 * told, and its finish's before its completed event goes out.  This times
 * one here: DISK_SYNCS overwrites of a 4 KiB page of a file already
 * written and synced, each followed by fdatasync, as the store's WAL is
 * written once it is in use.  Into ns, and their number into *n.
 */
#define DISK_SYNCS 200

static void
disk_syncs(const char *dir, int64_t ns[DISK_SYNCS], size_t *n)
{
	char path[192], page[4096];
	int fd;

	*n = 0;
	memset(page, 0, sizeof(page));
	snprintf(path, sizeof(path), "%s/disk-probe", dir);
	if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) <
	    0) {
		fprintf(stderr, "actor_bench: %s: %s\n", path, strerror(errno));
		return;
	}
	for (int i = 0; i < DISK_SYNCS; i++)
		if (write(fd, page, sizeof(page)) != (ssize_t)sizeof(page))
			goto out;
	if (fsync(fd) != 0)
		goto out;
	for (; *n < DISK_SYNCS; (*n)++) {
		int64_t t0 = cm_mono_ns();

		if (pwrite(fd, page, sizeof(page),
		        (off_t)(*n * sizeof(page))) != (ssize_t)sizeof(page) ||
		    fdatasync(fd) != 0)
			break;
		ns[*n] = cm_mono_ns() - t0;
	}
out:
	close(fd);
	unlink(path);
}

/*
 * One Space, on host-a, or with cross on host-b; its tasks submitted
 * through host-a and their events read from host-a's PUB.
 */
static int
bench_latency(bool cross)
{
	struct fleet f;
	struct env *via = &f.h[0];
	size_t inst = cross ? 1 : 0;
	char label[256];
	char space_id[CM_ID_MAX + 1], task_id[CM_ID_MAX + 1], rid[32];
	int64_t *lat, *rep_lat, *start_lat, w0 = 0, w1;
	struct usage u0, u1;
	size_t n = 0;
	long missed = 0;
	struct slot *sl;
	int64_t syncs[DISK_SYNCS];
	size_t n_syncs = 0;
	int rc = -1;

	lat = calloc(LAT_N, sizeof(*lat));
	rep_lat = calloc(LAT_N, sizeof(*rep_lat));
	start_lat = calloc(LAT_N, sizeof(*start_lat));
	if (lat == NULL || rep_lat == NULL || start_lat == NULL ||
	    fleet_start(&f, "abl", (size_t)n_hosts) != 0)
		goto out_free;
	if (space_create(via, inst, space_id) != 0 ||
	    (sl = disp_add(&via->d, space_id)) == NULL)
		goto out;
	disk_syncs(via->dir, syncs, &n_syncs);
	for (int i = 0; i < LAT_WARMUP + LAT_N; i++) {
		int64_t t0, t_rep, t_start = 0, t_done = 0;
		int got;

		if (i == LAT_WARMUP) {
			usage_snap(&u0, f.h[fleet_host_of(&f, inst)].p.pid);
			w0 = cm_mono_ns();
		}

		snprintf(rid, sizeof(rid), "lat-%d", i);
		t0 = cm_mono_ns();
		if (submit_noop(via->req, via->w.workspace_id, space_id, rid,
		        task_id) != 0)
			goto out;
		t_rep = cm_mono_ns();
		if ((got = wait_finished(via->req, via->w.workspace_id, sl,
		         task_id, &t_done)) < 0)
			goto out;
		if (i < LAT_WARMUP)
			continue;
		if (got == 0) {
			missed++;
			continue;
		}
		/* started precedes completed on the same socket. */
		if (slot_wait(sl, AB_STARTED, task_id, 0, &t_start, NULL, 0) !=
		    0)
			t_start = 0;
		lat[n] = t_done - t0;
		rep_lat[n] = t_rep - t0;
		start_lat[n] = t_start ? t_start - t0 : 0;
		n++;
	}
	w1 = cm_mono_ns();
	usage_snap(&u1, f.h[fleet_host_of(&f, inst)].p.pid);
	snprintf(label, sizeof(label),
	    "latency: noop task, task.submit sent -> completed event "
	    "received (1 Space, fake latency_ms=0, sequential; %s)",
	    setup_txt(cross));
	print_dist(label, lat, n, NULL);
	print_dist(
	    "  breakdown: task.submit sent -> submit reply", rep_lat, n, NULL);
	print_dist("  breakdown: task.submit sent -> started event received",
	    start_lat, n, NULL);
	if (n_syncs > 0)
		print_dist("  disk: 4 KiB page overwritten + fdatasync in the "
		           "data dir, before the run (a task waits for two in "
		           "turn)",
		    syncs, n_syncs, NULL);
	print_usage(f.n > 1 ? "latency (the Space's host)" : "latency", &u0,
	    &u1, w1 - w0, LAT_N);
	rc = 0;
out:
	disp_stop(&via->d);
	via->disp_on = false;
	print_events("latency", &via->d, missed);
	fleet_stop(&f);
out_free:
	free(lat);
	free(rep_lat);
	free(start_lat);
	return rc;
}

/* ---- 2. throughput ------------------------------------------------------- */

struct client {
	const char *url;
	const char *workspace_id;
	char space_id[CM_ID_MAX + 1];
	struct slot *slot;
	pthread_barrier_t *barrier;
	int64_t run_ns;
	int id;
	/* results */
	long done;
	long missed;
	long errors;
	int64_t *lat;
	size_t n_lat, cap_lat;
	bool failed;
};

/* One task: submit, wait for its completion.  Returns 1 event seen, 0 seen
 * only by polling, -1 failure. */
static int
client_task(struct client *c, nng_socket s, long seq, int64_t *lat_ns)
{
	char rid[48], task_id[CM_ID_MAX + 1];
	int64_t t0 = cm_mono_ns(), t1 = 0;
	int got;

	snprintf(rid, sizeof(rid), "tp-%d-%ld", c->id, seq);
	if (submit_noop(s, c->workspace_id, c->space_id, rid, task_id) != 0)
		return -1;
	got = wait_finished(s, c->workspace_id, c->slot, task_id, &t1);
	if (got == 1)
		*lat_ns = t1 - t0;
	return got;
}

static void *
client_run(void *arg)
{
	struct client *c = arg;
	int64_t deadline, lat;
	long seq = 0;
	nng_socket s;

	if (cm_rpc_open(&s, c->url) != 0) {
		c->failed = true;
		pthread_barrier_wait(c->barrier);
		return NULL;
	}
	/* Warm-up: the first task also waits for the actor to be up. */
	for (int i = 0; i < 5; i++)
		if (client_task(c, s, seq++, &lat) < 0)
			c->failed = true;
	pthread_barrier_wait(c->barrier);
	deadline = cm_mono_ns() + c->run_ns;
	while (!c->failed && cm_mono_ns() < deadline) {
		int got = client_task(c, s, seq++, &lat);

		if (got < 0) {
			c->errors++;
			if (c->errors > 10)
				c->failed = true;
			continue;
		}
		c->done++;
		if (got == 0) {
			c->missed++;
			continue;
		}
		if (c->n_lat == c->cap_lat) {
			size_t cap = c->cap_lat ? c->cap_lat * 2 : 4096;
			int64_t *v = realloc(c->lat, cap * sizeof(*v));

			if (v == NULL)
				continue;
			c->lat = v;
			c->cap_lat = cap;
		}
		c->lat[c->n_lat++] = lat;
	}
	nng_close(s);
	return NULL;
}

/*
 * n_spaces busy Spaces (and n_idle idle ones), one client each; with two
 * hosts, client i's Space is on instance i (the first half host-a's), and
 * the client submits through, and reads the events of, its Space's host,
 * or with cross the other one.
 */
static int
bench_throughput_n(int n_spaces, int n_idle, int seconds, bool cross)
{
	struct fleet f;
	struct client *cl;
	pthread_t *th;
	pthread_barrier_t barrier;
	struct usage u0[AB_HOSTS_MAX], u1[AB_HOSTS_MAX];
	int64_t t0, t1, *all = NULL;
	long done = 0, missed = 0, errors = 0;
	size_t n_all = 0;
	bool failed = false;
	char label[256], extra[64], idle_txt[48] = "";
	int started = 0, rc = -1;

	if (n_idle > 0)
		snprintf(
		    idle_txt, sizeof(idle_txt), " (+%d idle Spaces)", n_idle);
	cl = calloc((size_t)n_spaces, sizeof(*cl));
	th = calloc((size_t)n_spaces, sizeof(*th));
	if (cl == NULL || th == NULL ||
	    fleet_start(&f, "abt", (size_t)(n_spaces + n_idle)) != 0) {
		free(cl);
		free(th);
		return -1;
	}
	pthread_barrier_init(&barrier, NULL, (unsigned)n_spaces + 1);
	for (int i = 0; i < n_spaces; i++) {
		int h = fleet_host_of(&f, (size_t)i);
		struct env *via = &f.h[cross ? (h + 1) % f.n : h];

		if (space_create(via, (size_t)i, cl[i].space_id) != 0 ||
		    (cl[i].slot = disp_add(&via->d, cl[i].space_id)) == NULL)
			goto out;
		cl[i].url = via->p.store_url;
		cl[i].workspace_id = via->w.workspace_id;
		cl[i].barrier = &barrier;
		cl[i].run_ns = (int64_t)seconds * 1000000000;
		cl[i].id = i;
	}
	if (n_idle > 0) {
		/* Spaces that exist and stay idle, each with its own actor:
		 * the time from the first create to the last actor up. */
		int64_t i0 = cm_mono_ms(), created, until;
		struct timespec pause = {0, 10 * 1000 * 1000};
		int up;

		for (int i = 0; i < n_idle; i++) {
			char id[CM_ID_MAX + 1];

			if (space_create(&f.h[0], (size_t)(n_spaces + i), id) !=
			    0)
				goto out;
		}
		created = cm_mono_ms();
		until = created + 10000 + 20 * (int64_t)n_idle;
		while ((up = fleet_actors(&f)) < n_spaces + n_idle &&
		       cm_mono_ms() < until)
			nanosleep(&pause, NULL);
		printf("idle: %d Spaces created in %lld ms; %d of %d actors "
		       "running %lld ms after the first create\n",
		    n_idle, (long long)(created - i0), up, n_spaces + n_idle,
		    (long long)(cm_mono_ms() - i0));
	}
	for (; started < n_spaces; started++)
		if (pthread_create(
		        &th[started], NULL, client_run, &cl[started]) != 0)
			break;
	if (started < n_spaces) {
		/* Cannot reach the barrier count: give up loudly. */
		fprintf(stderr, "actor_bench: cannot start client threads\n");
		abort();
	}
	pthread_barrier_wait(&barrier);
	/* The clients run from the barrier on: the clock starts there, and
	 * not after the snapshots (reading a thousand actors' /proc takes
	 * longer than a second). */
	t0 = cm_mono_ns();
	for (int k = 0; k < f.n; k++)
		usage_snap(&u0[k], f.h[k].p.pid);
	for (int i = 0; i < n_spaces; i++) {
		pthread_join(th[i], NULL);
		done += cl[i].done;
		missed += cl[i].missed;
		errors += cl[i].errors;
		failed |= cl[i].failed;
		n_all += cl[i].n_lat;
	}
	t1 = cm_mono_ns();
	for (int k = 0; k < f.n; k++)
		usage_snap(&u1[k], f.h[k].p.pid);
	if ((all = calloc(n_all ? n_all : 1, sizeof(*all))) != NULL) {
		size_t k = 0;
		for (int i = 0; i < n_spaces; i++) {
			memcpy(all + k, cl[i].lat, cl[i].n_lat * sizeof(*all));
			k += cl[i].n_lat;
		}
	}
	printf("throughput: spaces=%d%s tasks_completed=%ld seconds=%.3f "
	       "tasks_per_s=%" PRId64 " errors=%ld%s (noop, fake latency_ms=0, "
	       "%s, each client waits for completed event)\n",
	    n_spaces, idle_txt, done, (double)(t1 - t0) / 1e9,
	    (int64_t)((double)done * 1e9 / (double)(t1 - t0)), errors,
	    failed ? " FAILED" : "", setup_txt(cross));
	snprintf(label, sizeof(label),
	    "  throughput spaces=%d%s: per-task submit -> completed event",
	    n_spaces, idle_txt);
	snprintf(extra, sizeof(extra), "(under load)");
	if (all != NULL)
		print_dist(label, all, n_all, extra);
	for (int k = 0; k < f.n; k++) {
		snprintf(label, sizeof(label), "throughput spaces=%d%s%s",
		    n_spaces, idle_txt,
		    f.n == 1 ? ""
		    : k == 0 ? " host-a"
		             : " host-b");
		print_usage(label, &u0[k], &u1[k], t1 - t0, done);
	}
	rc = failed ? -1 : 0;
out:
	if (started < n_spaces) /* setup failed before any thread ran */
		rc = -1;
	for (int k = 0; k < f.n; k++) {
		disp_stop(&f.h[k].d);
		f.h[k].disp_on = false;
		snprintf(label, sizeof(label), "throughput spaces=%d%s%s",
		    n_spaces, idle_txt,
		    f.n == 1 ? ""
		    : k == 0 ? " host-a"
		             : " host-b");
		print_events(label, &f.h[k].d, k == 0 ? missed : 0);
	}
	fleet_stop(&f);
	pthread_barrier_destroy(&barrier);
	for (int i = 0; i < n_spaces; i++)
		free(cl[i].lat);
	free(all);
	free(cl);
	free(th);
	return rc;
}

/* ACTOR_BENCH_SPACES="1,8,64" (the default) chooses the runs. */
static int
bench_throughput(int seconds)
{
	const char *env = getenv("ACTOR_BENCH_SPACES");
	const char *p = env != NULL ? env : "1,8,64";
	const char *idle_env = getenv("ACTOR_BENCH_IDLE");
	long idle = 0;
	int rc = 0;

	if (idle_env != NULL) {
		char *end;

		idle = strtol(idle_env, &end, 10);
		if (*end != '\0' || idle < 0 || idle > TK_MAX_INSTANCES)
			idle = 0;
	}

	while (*p != '\0') {
		char *end;
		long n = strtol(p, &end, 10);

		if (end == p || n < 1 || n + idle > TK_MAX_INSTANCES) {
			fprintf(stderr,
			    "actor_bench: ACTOR_BENCH_SPACES must "
			    "list counts 1..%d\n",
			    TK_MAX_INSTANCES);
			return -1;
		}
		if (bench_throughput_n((int)n, (int)idle, seconds, false) != 0)
			rc = -1;
		if (n_hosts > 1 &&
		    bench_throughput_n((int)n, (int)idle, seconds, true) != 0)
			rc = -1;
		p = *end == ',' ? end + 1 : end;
		if (*end != ',' && *end != '\0') {
			fprintf(stderr, "actor_bench: ACTOR_BENCH_SPACES: "
			                "bad list\n");
			return -1;
		}
	}
	return rc;
}

/* ---- 3. create -> ready -------------------------------------------------- */

static int
bench_create(void)
{
	struct env e;
	int64_t ready[CREATE_N], created[CREATE_N], closed[CREATE_N];
	size_t n = 0;
	int rc = -1;

	if (env_start(&e, "abc", CREATE_WARMUP + CREATE_N) != 0)
		return -1;
	for (int i = 0; i < CREATE_WARMUP + CREATE_N; i++) {
		char space_id[CM_ID_MAX + 1], task_id[CM_ID_MAX + 1];
		int64_t t0, t_created, t_started = 0, t_done, t_close0,
		                       t_closed = 0;
		struct slot *sl;

		t0 = cm_mono_ns();
		if (space_create(&e, (size_t)i, space_id) != 0)
			goto out;
		t_created = cm_mono_ns();
		if ((sl = disp_add(&e.d, space_id)) == NULL ||
		    submit_noop(e.req, e.w.workspace_id, space_id, "create-1",
		        task_id) != 0)
			goto out;
		if (slot_wait(sl, AB_STARTED, task_id, AB_TASK_WAIT_MS,
		        &t_started, NULL, 0) != 0) {
			fprintf(stderr,
			    "actor_bench: create: no started event for %s\n",
			    task_id);
			goto out;
		}
		if (wait_finished(
		        e.req, e.w.workspace_id, sl, task_id, &t_done) < 0)
			goto out;
		t_close0 = cm_mono_ns();
		if (space_close(&e, space_id) != 0 ||
		    slot_wait(sl, AB_CLOSED, NULL, AB_CLOSE_WAIT_MS, &t_closed,
		        NULL, 0) != 0) {
			fprintf(stderr,
			    "actor_bench: create: space %s never "
			    "closed\n",
			    space_id);
			goto out;
		}
		if (i < CREATE_WARMUP)
			continue;
		ready[n] = t_started - t0;
		created[n] = t_created - t0;
		closed[n] = t_closed - t_close0;
		n++;
	}
	print_dist("create: space.create sent -> started event of a noop task "
	           "submitted right after create replied (fake)",
	    ready, n, NULL);
	print_dist(
	    "  breakdown: space.create sent -> create reply", created, n, NULL);
	print_dist("  space.close sent -> space_closed event received (actor "
	           "idle)",
	    closed, n, NULL);
	rc = 0;
out:
	disp_stop(&e.d);
	e.disp_on = false;
	print_events("create", &e.d, 0);
	env_stop(&e);
	return rc;
}

/* ---- 4. memory ----------------------------------------------------------- */

/* The value in kB of "key:" in a smaps_rollup text, or -1. */
static long
smaps_kib(const char *text, const char *key)
{
	size_t klen = strlen(key);
	const char *p = text;

	while ((p = strstr(p, key)) != NULL) {
		if ((p == text || p[-1] == '\n') && p[klen] == ':')
			return strtol(p + klen + 1, NULL, 10);
		p += klen;
	}
	return -1;
}

static void
print_kib(const char *label, int64_t *v, size_t n)
{
	tk_sort_i64(v, n);
	printf("%s: n=%zu min=%" PRId64 " median=%" PRId64 " max=%" PRId64
	       " KiB\n",
	    label, n, n ? v[0] : 0, tk_pct(v, n, 50), n ? v[n - 1] : 0);
	fflush(stdout);
}

static int
bench_memory(void)
{
	struct env e;
	pid_t pids[MEM_SPACES * 2];
	int64_t pss[MEM_SPACES * 2], priv[MEM_SPACES * 2], rss[MEM_SPACES * 2];
	struct timespec idle = {
	    MEM_IDLE_MS / 1000, (long)(MEM_IDLE_MS % 1000) * 1000000};
	size_t n = 0;
	int found, rc = -1;

	if (env_start(&e, "abm", MEM_SPACES) != 0)
		return -1;
	for (int i = 0; i < MEM_SPACES; i++) {
		char space_id[CM_ID_MAX + 1], task_id[CM_ID_MAX + 1];
		struct slot *sl;
		int64_t t;

		if (space_create(&e, (size_t)i, space_id) != 0 ||
		    (sl = disp_add(&e.d, space_id)) == NULL ||
		    submit_noop(e.req, e.w.workspace_id, space_id, "mem-1",
		        task_id) != 0 ||
		    wait_finished(e.req, e.w.workspace_id, sl, task_id, &t) < 0)
			goto out;
	}
	nanosleep(&idle, NULL);
	found = tk_actor_pids(e.p.pid, NULL, pids, MEM_SPACES * 2);
	if (found != MEM_SPACES)
		fprintf(stderr, "actor_bench: memory: %d actors, expected %d\n",
		    found, MEM_SPACES);
	if (found > MEM_SPACES * 2)
		found = MEM_SPACES * 2;
	for (int i = 0; i < found; i++) {
		char path[64], *text;
		long p, pc, pd, r;

		snprintf(path, sizeof(path), "/proc/%ld/smaps_rollup",
		    (long)pids[i]);
		if ((text = tk_read_file(path, NULL)) == NULL)
			continue;
		p = smaps_kib(text, "Pss");
		pc = smaps_kib(text, "Private_Clean");
		pd = smaps_kib(text, "Private_Dirty");
		r = smaps_kib(text, "Rss");
		free(text);
		if (p < 0 || pc < 0 || pd < 0 || r < 0)
			continue;
		pss[n] = p;
		priv[n] = pc + pd;
		rss[n] = r;
		n++;
	}
	print_kib("memory: idle actor Pss (smaps_rollup, 16 actors)", pss, n);
	print_kib("memory: idle actor Private_Clean+Private_Dirty", priv, n);
	print_kib("  memory: idle actor Rss", rss, n);
	rc = n > 0 ? 0 : -1;
out:
	env_stop(&e);
	return rc;
}

/* ---- 5. kill -> restarted and ready -------------------------------------- */

/* One kill of the Space's idle actor: *ns is kill -> started event of a
 * task submitted right after the kill (a new actor pid for the Space is
 * checked to exist then), *done_ns kill -> its completed event. */
static int
kill_once(
    struct env *e, struct slot *sl, int round, int64_t *ns, int64_t *done_ns)
{
	char task_id[CM_ID_MAX + 1], rid[32];
	pid_t old, now[4];
	int64_t t0, t_started, t_done;
	int found;

	if (tk_actor_pids(e->p.pid, sl->space_id, &old, 1) != 1) {
		fprintf(stderr, "actor_bench: restart: no actor for %s\n",
		    sl->space_id);
		return -1;
	}
	snprintf(rid, sizeof(rid), "after-kill-%d", round);
	t0 = cm_mono_ns();
	kill(old, SIGKILL);
	if (submit_noop(
	        e->req, e->w.workspace_id, sl->space_id, rid, task_id) != 0)
		return -1;
	if (slot_wait(sl, AB_STARTED, task_id, AB_TASK_WAIT_MS, &t_started,
	        NULL, 0) != 0) {
		fprintf(stderr, "actor_bench: restart: %s never started\n",
		    task_id);
		return -1;
	}
	/* The claim came from a live actor, so a new one exists: check. */
	found = tk_actor_pids(e->p.pid, sl->space_id, now, 4);
	if (found != 1 || now[0] == old) {
		fprintf(stderr,
		    "actor_bench: restart: after the kill of %ld: %d actors "
		    "(first %ld)\n",
		    (long)old, found, found > 0 ? (long)now[0] : 0L);
		return -1;
	}
	if (wait_finished(e->req, e->w.workspace_id, sl, task_id, &t_done) < 0)
		return -1;
	*ns = t_started - t0;
	*done_ns = t_done - t0;
	return 0;
}

static int
bench_restart(void)
{
	struct env e;
	struct slot *slots[RESTART_N];
	int64_t first[RESTART_N], first_done[RESTART_N];
	int64_t again[RESTART_AGAIN_N], again_done[RESTART_AGAIN_N];
	struct timespec settle = {0, 50 * 1000 * 1000};
	int rc = -1;

	if (env_start(&e, "abr", RESTART_N) != 0)
		return -1;
	for (int i = 0; i < RESTART_N; i++) {
		char space_id[CM_ID_MAX + 1], task_id[CM_ID_MAX + 1];
		int64_t t;

		if (space_create(&e, (size_t)i, space_id) != 0 ||
		    (slots[i] = disp_add(&e.d, space_id)) == NULL ||
		    submit_noop(e.req, e.w.workspace_id, space_id, "warm",
		        task_id) != 0 ||
		    wait_finished(
		        e.req, e.w.workspace_id, slots[i], task_id, &t) < 0)
			goto out;
	}
	for (int i = 0; i < RESTART_N; i++) {
		nanosleep(&settle, NULL); /* the actor is idle again */
		if (kill_once(&e, slots[i], 1, &first[i], &first_done[i]) != 0)
			goto out;
	}
	for (int i = 0; i < RESTART_AGAIN_N; i++) {
		nanosleep(&settle, NULL);
		if (kill_once(&e, slots[i], 2, &again[i], &again_done[i]) != 0)
			goto out;
	}
	print_dist("restart: kill -9 idle actor -> new actor pid exists and a "
	           "noop task submitted right after the kill reaches started "
	           "(first crash of the Space)",
	    first, RESTART_N, NULL);
	print_dist("  breakdown: kill -> that task's completed event",
	    first_done, RESTART_N, NULL);
	print_dist("restart: same, second kill of the Space within 60 s "
	           "(restart backoff applies)",
	    again, RESTART_AGAIN_N, NULL);
	print_dist("  breakdown: kill -> that task's completed event "
	           "(second kill)",
	    again_done, RESTART_AGAIN_N, NULL);
	rc = 0;
out:
	disp_stop(&e.d);
	e.disp_on = false;
	print_events("restart", &e.d, 0);
	env_stop(&e);
	return rc;
}

/* ---- main ---------------------------------------------------------------- */

int
main(int argc, char **argv)
{
	static const char *const names[] = {
	    "latency", "throughput", "create", "memory", "restart"};
	const char *env = getenv("ACTOR_BENCH_SECONDS");
	bool want[5] = {false, false, false, false, false};
	int seconds = 3, rc = 0;

	if (env != NULL) {
		char *end;
		long v = strtol(env, &end, 10);

		if (*end == '\0' && v > 0 && v < 3600)
			seconds = (int)v;
	}
	if ((n_hosts = tk_knob("ACTOR_BENCH_HOSTS", 1, 1, AB_HOSTS_MAX)) < 0)
		return 2;
	if (argc == 1) /* every metric; with two hosts, the two it has */
		for (int i = 0; i < (n_hosts > 1 ? 2 : 5); i++)
			want[i] = true;
	for (int a = 1; a < argc; a++) {
		int i;

		for (i = 0; i < 5; i++)
			if (strcmp(argv[a], names[i]) == 0)
				break;
		if (i == 5) {
			fprintf(stderr,
			    "usage: actor_bench [latency] [throughput] "
			    "[create] [memory] [restart]\n");
			return 2;
		}
		want[i] = true;
	}
	if (n_hosts > 1 &&
	    (getenv("TK_PG_STATE") == NULL || want[2] || want[3] || want[4])) {
		fprintf(stderr, "actor_bench: ACTOR_BENCH_HOSTS=2 runs latency "
		                "and throughput on PostgreSQL (TK_PG_STATE)\n");
		return 2;
	}
	pg_server = pg_server_pid();
	signal(SIGPIPE, SIG_IGN);
	printf("actor_bench: %ld CPUs online; %s\n",
	    sysconf(_SC_NPROCESSORS_ONLN),
	    n_hosts > 1 ? "postgres, 2 hosts" : setup_txt(false));
	fflush(stdout);
	if (want[0] && bench_latency(false) != 0)
		rc = 1;
	if (want[0] && n_hosts > 1 && bench_latency(true) != 0)
		rc = 1;
	if (want[1] && bench_throughput(seconds) != 0)
		rc = 1;
	if (want[2] && bench_create() != 0)
		rc = 1;
	if (want[3] && bench_memory() != 0)
		rc = 1;
	if (want[4] && bench_restart() != 0)
		rc = 1;
	return rc;
}
