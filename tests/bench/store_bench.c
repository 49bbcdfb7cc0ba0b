/*
 * store_bench: cycles of submit -> claim -> finish through the real
 * spaced-store over nng, from N concurrent clients, each on its own Space.
 * Prints writes per second (three writes a cycle) at synchronous=FULL.
 *
 * With --ping the clients send pings instead, which run no SQL: what the
 * transport and the store's loop alone can carry, the ceiling of the
 * writes.
 *
 * It also prints the CPU time each request cost, in the store process and
 * in the clients (this process), from /proc and getrusage: a figure that
 * moves less than the rate on a shared machine.  And it prints how the
 * whole machine's CPUs spent the run, steal included: on a virtual machine
 * the host may take a share of them that no process here is charged for.
 *
 *   store_bench [--ping] [clients ...]      default: 1 8 64
 *   STORE_BENCH_SECONDS=N                   duration of each run (default 3)
 *   STORE_BENCH_RUNS=R                      runs of each client count, each
 *                                           on a fresh store, then their
 *                                           median and range (default 1)
 *   STORE_BENCH_DRIVER=threads              each client a thread calling
 *                                           the store through cm_rpc_call,
 *                                           as an actor does (default aio:
 *                                           every client driven by nng aio
 *                                           callbacks, see run_clients_aio)
 *   STORE_BENCH_PROCS=K                     the clients spread over K
 *                                           processes, as actors are, each
 *                                           a thread (default 1)
 *   TK_PG_STATE=FILE                        each store on PostgreSQL, in a
 *                                           fresh schema of the cluster
 *                                           tests/pg/cluster.sh started
 *                                           (its state file; for commits
 *                                           that reach the disk, start it
 *                                           with SPACED_PG_FSYNC=on)
 *
 * Each store logs at its exit, on stderr, its groups and where their time
 * went (in BEGIN and COMMIT, waiting for the acker).
 *
 * Each client has a REQ socket of its own and one request outstanding,
 * whichever the driver.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "testkit.h"

/* Runs of each client count at most (STORE_BENCH_RUNS). */
#define STORE_BENCH_RUNS_MAX 25

static bool ping_only;
static bool aio_driver; /* not STORE_BENCH_DRIVER=threads */

struct client {
	const char *url;
	const char *workspace_id;
	char space_id[CM_ID_MAX + 1];
	int64_t deadline;
	long cycles;
	long errors;
	int id;
};

static int
call_ok(nng_socket s, const struct pr_req *q, struct pr_rep *r)
{
	return cm_rpc_call(s, q, r, 10000) == CM_OK && r->err == CM_OK;
}

static void *
client_run(void *arg)
{
	struct client *c = arg;
	char rid[64], holder[32], task_id[CM_ID_MAX + 1];
	struct pr_req q;
	struct pr_rep r;
	nng_socket s;

	if (cm_rpc_open(&s, c->url) != 0)
		return NULL;
	snprintf(holder, sizeof(holder), "bench-%d", c->id);
	while (ping_only && cm_mono_ms() < c->deadline) {
		memset(&q, 0, sizeof(q));
		q.op = PR_OP_PING;
		if (!call_ok(s, &q, &r))
			c->errors++;
		else
			c->cycles++;
		pr_rep_free(&r);
	}
	while (!ping_only && cm_mono_ms() < c->deadline) {
		snprintf(rid, sizeof(rid), "c%d-%ld", c->id, c->cycles);
		tk_req_submit(&q, c->workspace_id, c->space_id, rid);
		if (!call_ok(s, &q, &r)) {
			c->errors++;
			pr_rep_free(&r);
			continue;
		}
		pr_rep_free(&r);

		tk_req_claim(&q, c->space_id, holder);
		if (!call_ok(s, &q, &r) || r.n_tasks != 1) {
			c->errors++;
			pr_rep_free(&r);
			continue;
		}
		snprintf(task_id, sizeof(task_id), "%s", r.tasks[0].task_id);
		pr_rep_free(&r);

		tk_req_finish(&q, task_id, holder);
		if (!call_ok(s, &q, &r))
			c->errors++;
		else
			c->cycles++;
		pr_rep_free(&r);
	}
	nng_close(s);
	return NULL;
}

/* CPU time (user + system) of process pid, in microseconds. */
static double
proc_cpu_us(pid_t pid)
{
	return (double)tk_proc_ticks(pid) * 1e6 / (double)sysconf(_SC_CLK_TCK);
}

static double
self_cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* Runs n clients (ids from first) until deadline, as threads of this
 * process; adds up their cycles and errors. */
static void
run_clients(const char *url, const char *workspace_id,
    char (*spaces)[CM_ID_MAX + 1], int n, int first, int64_t deadline,
    long *cycles, long *errors)
{
	struct client *cl = calloc((size_t)n ? (size_t)n : 1, sizeof(*cl));
	pthread_t *th = calloc((size_t)n ? (size_t)n : 1, sizeof(*th));

	*cycles = *errors = 0;
	if (cl == NULL || th == NULL) {
		*errors = 1;
		free(cl);
		free(th);
		return;
	}
	for (int i = 0; i < n; i++) {
		cl[i].url = url;
		cl[i].workspace_id = workspace_id;
		snprintf(
		    cl[i].space_id, sizeof(cl[i].space_id), "%s", spaces[i]);
		cl[i].id = first + i;
		cl[i].deadline = deadline;
		pthread_create(&th[i], NULL, client_run, &cl[i]);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		*cycles += cl[i].cycles;
		*errors += cl[i].errors;
	}
	free(cl);
	free(th);
}

/*
 * The event-driven driver (the default): the same clients, each a REQ
 * socket of its own with one request outstanding, but run by nng aio
 * callbacks instead of a thread each, as an event-loop load generator
 * (wrk, memtier) runs its connections.  The store sees the same traffic;
 * the generator spends less of the machine's CPU, which on a small
 * machine it shares with the store: at 64 clients on 2 CPUs, three
 * alternating runs of each cost 19.6, 20.0 and 20.6 us a request against
 * 33.1, 33.9 and 34.3 us with a thread per client.
 */
struct aclient {
	struct client c;
	nng_socket s;
	nng_ctx ctx;
	nng_aio *aio;
	int stage; /* 0 submit, 1 claim, 2 finish */
	bool receiving;
	char rid[64], holder[32];
	char task_id[CM_ID_MAX + 1];
};

static pthread_mutex_t aio_mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t aio_cv = PTHREAD_COND_INITIALIZER;
static int aio_running;

static void
aclient_done(void)
{
	pthread_mutex_lock(&aio_mtx);
	if (--aio_running == 0)
		pthread_cond_signal(&aio_cv);
	pthread_mutex_unlock(&aio_mtx);
}

/* Sends the client's next request, or ends it past its deadline. */
static void
aclient_next(struct aclient *a)
{
	struct pr_req q;
	nng_msg *m;

	if (cm_mono_ms() >= a->c.deadline) {
		aclient_done();
		return;
	}
	if (ping_only) {
		memset(&q, 0, sizeof(q));
		q.op = PR_OP_PING;
	} else if (a->stage == 0) {
		snprintf(a->rid, sizeof(a->rid), "c%d-%ld", a->c.id,
		    a->c.cycles + a->c.errors);
		tk_req_submit(&q, a->c.workspace_id, a->c.space_id, a->rid);
	} else if (a->stage == 1) {
		tk_req_claim(&q, a->c.space_id, a->holder);
	} else {
		tk_req_finish(&q, a->task_id, a->holder);
	}
	if (cm_rpc_request(&q, &m) != 0) {
		fprintf(stderr, "store_bench: cannot build a request\n");
		abort();
	}
	a->receiving = false;
	nng_aio_set_msg(a->aio, m);
	nng_ctx_send(a->ctx, a->aio);
}

/* On an nng thread: a send or a receive of client a completed. */
static void
aclient_cb(void *arg)
{
	struct aclient *a = arg;
	struct pr_rep r;
	nng_msg *m;
	char err[128];
	bool ok;

	if (nng_aio_result(a->aio) != 0) {
		if (!a->receiving)
			nng_msg_free(nng_aio_get_msg(a->aio));
		a->c.errors++;
		a->stage = 0;
		aclient_next(a);
		return;
	}
	if (!a->receiving) {
		a->receiving = true;
		nng_ctx_recv(a->ctx, a->aio);
		return;
	}
	m = nng_aio_get_msg(a->aio);
	nng_aio_set_msg(a->aio, NULL);
	ok = pr_rep_decode(
	         nng_msg_body(m), nng_msg_len(m), &r, err, sizeof(err)) == 0 &&
	     r.err == CM_OK && (a->stage != 1 || r.n_tasks == 1);
	nng_msg_free(m);
	if (ok && !ping_only && a->stage == 1)
		snprintf(
		    a->task_id, sizeof(a->task_id), "%s", r.tasks[0].task_id);
	pr_rep_free(&r);
	if (!ok) {
		a->c.errors++;
		a->stage = 0;
	} else if (ping_only || a->stage == 2) {
		a->c.cycles++;
		a->stage = 0;
	} else {
		a->stage++;
	}
	aclient_next(a);
}

static void
run_clients_aio(const char *url, const char *workspace_id,
    char (*spaces)[CM_ID_MAX + 1], int n, int first, int64_t deadline,
    long *cycles, long *errors)
{
	struct aclient *cl = calloc((size_t)n ? (size_t)n : 1, sizeof(*cl));
	int opened = 0;

	*cycles = *errors = 0;
	if (cl == NULL) {
		*errors = 1;
		return;
	}
	for (; opened < n; opened++) {
		struct aclient *a = &cl[opened];

		a->c.workspace_id = workspace_id;
		memcpy(a->c.space_id, spaces[opened], sizeof(a->c.space_id));
		a->c.id = first + opened;
		a->c.deadline = deadline;
		snprintf(a->holder, sizeof(a->holder), "bench-%d", a->c.id);
		if (cm_rpc_open(&a->s, url) != 0)
			break;
		if (nng_ctx_open(&a->ctx, a->s) != 0 ||
		    nng_aio_alloc(&a->aio, aclient_cb, a) != 0) {
			nng_close(a->s);
			break;
		}
		nng_aio_set_timeout(a->aio, 10000);
	}
	if (opened < n)
		*errors = 1;
	pthread_mutex_lock(&aio_mtx);
	aio_running = opened;
	pthread_mutex_unlock(&aio_mtx);
	for (int i = 0; i < opened; i++)
		aclient_next(&cl[i]);
	pthread_mutex_lock(&aio_mtx);
	while (aio_running > 0)
		pthread_cond_wait(&aio_cv, &aio_mtx);
	pthread_mutex_unlock(&aio_mtx);
	for (int i = 0; i < opened; i++) {
		*cycles += cl[i].c.cycles;
		*errors += cl[i].c.errors;
		nng_aio_free(cl[i].aio);
		nng_ctx_close(cl[i].ctx);
		nng_close(cl[i].s);
	}
	free(cl);
}

/*
 * Worker processes (STORE_BENCH_PROCS=K): the clients spread over K
 * processes, as actors are, each with nng's threads of its own.  They are
 * forked before this process first uses nng, which is not fork-safe, and
 * take their jobs through pipes.
 */
#define STORE_BENCH_PROCS_MAX 64

struct job {
	int n, first;
	int64_t deadline;
	char url[sizeof(((struct tk_proc *)0)->store_url)];
	char workspace_id[CM_ID_MAX + 1];
	char spaces[TK_MAX_INSTANCES][CM_ID_MAX + 1];
};

struct job_result {
	long cycles, errors;
	double cpu_us;
};

static struct {
	pid_t pid;
	int to, from;
} workers[STORE_BENCH_PROCS_MAX];
static int n_workers;

static int
io_full(int fd, void *buf, size_t len, bool wr)
{
	char *p = buf;

	while (len > 0) {
		ssize_t k = wr ? write(fd, p, len) : read(fd, p, len);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

static void
worker_main(int from_parent, int to_parent)
{
	static struct job j;
	struct job_result r;

	while (io_full(from_parent, &j, sizeof(j), false) == 0) {
		double c0 = self_cpu_us();

		run_clients(j.url, j.workspace_id, j.spaces, j.n, j.first,
		    j.deadline, &r.cycles, &r.errors);
		r.cpu_us = self_cpu_us() - c0;
		if (io_full(to_parent, &r, sizeof(r), true) != 0)
			break;
	}
	_exit(0);
}

static int
workers_start(int k)
{
	for (int i = 0; i < k; i++) {
		int down[2], up[2];
		pid_t pid;

		if (pipe(down) != 0 || pipe(up) != 0)
			return -1;
		if ((pid = fork()) < 0)
			return -1;
		if (pid == 0) {
			for (int w = 0; w < n_workers; w++) {
				close(workers[w].to);
				close(workers[w].from);
			}
			close(down[1]);
			close(up[0]);
			worker_main(down[0], up[1]);
		}
		close(down[0]);
		close(up[1]);
		workers[n_workers].pid = pid;
		workers[n_workers].to = down[1];
		workers[n_workers].from = up[0];
		n_workers++;
	}
	return 0;
}

static void
workers_stop(void)
{
	for (int i = 0; i < n_workers; i++) {
		close(workers[i].to);
		close(workers[i].from);
		waitpid(workers[i].pid, NULL, 0);
	}
	n_workers = 0;
}

/* Runs the clients over the workers; their CPU time is added to *cpu. */
static int
run_in_workers(const char *url, const char *workspace_id,
    char (*spaces)[CM_ID_MAX + 1], int n, int64_t deadline, long *cycles,
    long *errors, double *cpu)
{
	static struct job j;
	struct job_result r;

	*cycles = *errors = 0;
	for (int i = 0, at = 0; i < n_workers; i++) {
		int next = (int)((int64_t)n * (i + 1) / n_workers);

		memset(&j, 0, sizeof(j));
		j.n = next - at;
		j.first = at;
		j.deadline = deadline;
		snprintf(j.url, sizeof(j.url), "%s", url);
		snprintf(
		    j.workspace_id, sizeof(j.workspace_id), "%s", workspace_id);
		memcpy(
		    j.spaces, spaces + at, (size_t)j.n * sizeof(j.spaces[0]));
		if (io_full(workers[i].to, &j, sizeof(j), true) != 0)
			return -1;
		at = next;
	}
	for (int i = 0; i < n_workers; i++) {
		if (io_full(workers[i].from, &r, sizeof(r), false) != 0)
			return -1;
		*cycles += r.cycles;
		*errors += r.errors;
		*cpu += r.cpu_us;
	}
	return 0;
}

/* One run of n_clients for seconds; *rate is its requests per second. */
static int
run(int n_clients, int seconds, double *rate)
{
	static char spaces[TK_MAX_INSTANCES][CM_ID_MAX + 1];
	struct tk_proc p;
	struct tk_world w;
	nng_socket s;
	char dir[128];
	int64_t t0, t1;
	long cycles = 0, errors = 0, reqs;
	double store_cpu, self_cpu, worker_cpu;
	struct tk_cpu m0, m1;
	bool machine;

	char quota[64];
	const char *flags[] = {quota, NULL};

	/* Every client's Space in one workspace. */
	snprintf(quota, sizeof(quota), "--max-spaces-per-workspace=%d",
	    TK_MAX_INSTANCES);
	tk_tmpdir(dir, sizeof(dir), "bench");
	if (tk_store_start(&p, dir, flags) != 0 ||
	    cm_rpc_open(&s, p.store_url) != 0 ||
	    tk_provision(s, &w, (size_t)n_clients) != 0) {
		fprintf(stderr, "store_bench: setup failed\n");
		return -1;
	}
	for (int i = 0; i < n_clients; i++) {
		struct pr_req q;
		struct pr_rep r;

		tk_req_create(&q, &w, (size_t)i);
		if (!call_ok(s, &q, &r)) {
			fprintf(stderr, "store_bench: create: %s\n",
			    cm_err_code(r.err));
			return -1;
		}
		snprintf(
		    spaces[i], sizeof(spaces[i]), "%s", r.spaces[0].space_id);
		pr_rep_free(&r);
	}
	store_cpu = proc_cpu_us(p.pid);
	self_cpu = self_cpu_us();
	machine = tk_cpu_read(&m0) == 0;
	worker_cpu = 0;
	t0 = cm_mono_ms();
	if (n_workers > 0) {
		if (run_in_workers(p.store_url, w.workspace_id, spaces,
		        n_clients, t0 + seconds * 1000, &cycles, &errors,
		        &worker_cpu) != 0) {
			fprintf(stderr, "store_bench: a worker failed\n");
			return -1;
		}
	} else if (aio_driver) {
		run_clients_aio(p.store_url, w.workspace_id, spaces, n_clients,
		    0, t0 + seconds * 1000, &cycles, &errors);
	} else {
		run_clients(p.store_url, w.workspace_id, spaces, n_clients, 0,
		    t0 + seconds * 1000, &cycles, &errors);
	}
	t1 = cm_mono_ms();
	machine = machine && tk_cpu_read(&m1) == 0;
	store_cpu = proc_cpu_us(p.pid) - store_cpu;
	self_cpu = self_cpu_us() - self_cpu + worker_cpu;
	reqs = ping_only ? cycles : cycles * 3;
	*rate = (double)reqs * 1000.0 / (double)(t1 - t0);
	/* Rates are truncated, never rounded up. */
	if (ping_only)
		printf("store_bench: clients=%d seconds=%.2f pings=%ld "
		       "errors=%ld pings_per_s=%ld (no SQL)\n",
		    n_clients, (t1 - t0) / 1000.0, cycles, errors, (long)*rate);
	else
		printf("store_bench: clients=%d seconds=%.2f cycles=%ld "
		       "writes=%ld errors=%ld writes_per_s=%ld (%s)\n",
		    n_clients, (t1 - t0) / 1000.0, cycles, cycles * 3, errors,
		    (long)*rate,
		    getenv("TK_PG_STATE") != NULL ? "postgres"
		                                  : "synchronous=FULL");
	if (reqs > 0)
		printf(
		    "store_bench: cpu_us_per_request store=%.1f clients=%.1f "
		    "(%.0f%% and %.0f%% of one core)\n",
		    store_cpu / (double)reqs, self_cpu / (double)reqs,
		    store_cpu / (double)(t1 - t0) / 10.0,
		    self_cpu / (double)(t1 - t0) / 10.0);
	if (machine)
		tk_cpu_print("store_bench", &m0, &m1);
	fflush(stdout);
	nng_close(s);
	tk_proc_stop(&p, SIGTERM);
	tk_rmrf(dir);
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * runs runs of n_clients, each on a store of its own.  With more than one,
 * a summary line gives the median, lowest and highest rate: on a shared
 * machine one run says little.
 */
static int
measure(int n_clients, int seconds, int runs)
{
	double rate[STORE_BENCH_RUNS_MAX];

	for (int i = 0; i < runs; i++)
		if (run(n_clients, seconds, &rate[i]) != 0)
			return -1;
	if (runs < 2)
		return 0;
	qsort(rate, (size_t)runs, sizeof(rate[0]), cmp_double);
	printf("store_bench: clients=%d runs=%d %s_per_s median=%ld"
	       " lowest=%ld highest=%ld\n",
	    n_clients, runs, ping_only ? "pings" : "writes",
	    (long)(runs % 2 ? rate[runs / 2]
	                    : (rate[runs / 2 - 1] + rate[runs / 2]) / 2.0),
	    (long)rate[0], (long)rate[runs - 1]);
	fflush(stdout);
	return 0;
}

static int
env_int(const char *name, int dflt, int max)
{
	const char *env = getenv(name);
	char *end;
	long v;

	if (env == NULL)
		return dflt;
	v = strtol(env, &end, 10);
	return *end == '\0' && v > 0 && v <= max ? (int)v : dflt;
}

int
main(int argc, char **argv)
{
	static const int dflt[] = {1, 8, 64};
	int seconds = env_int("STORE_BENCH_SECONDS", 3, 3600);
	int runs = env_int("STORE_BENCH_RUNS", 1, STORE_BENCH_RUNS_MAX);
	int procs = env_int("STORE_BENCH_PROCS", 1, STORE_BENCH_PROCS_MAX);
	int counts[TK_MAX_INSTANCES], n_counts = 0, rc = 0;

	aio_driver = getenv("STORE_BENCH_DRIVER") == NULL ||
	             strcmp(getenv("STORE_BENCH_DRIVER"), "threads") != 0;
	if (argc > 1 && strcmp(argv[1], "--ping") == 0) {
		ping_only = true;
		argv++;
		argc--;
	}
	for (int i = 1; i < argc && n_counts < TK_MAX_INSTANCES; i++) {
		char *end;
		long n = strtol(argv[i], &end, 10);

		if (*end != '\0' || n < 1 || n > TK_MAX_INSTANCES) {
			fprintf(stderr, "usage: store_bench [--ping]"
			                " [clients ...]\n");
			return 2;
		}
		counts[n_counts++] = (int)n;
	}
	if (n_counts == 0) {
		n_counts = (int)(sizeof(dflt) / sizeof(dflt[0]));
		memcpy(counts, dflt, sizeof(dflt));
	}

	/* Before this process first uses nng. */
	if (procs > 1 && workers_start(procs) != 0) {
		fprintf(stderr, "store_bench: cannot start the workers\n");
		rc = 1;
	}
	for (int i = 0; rc == 0 && i < n_counts; i++)
		if (measure(counts[i], seconds, runs) != 0)
			rc = 1;
	workers_stop();
	return rc;
}
