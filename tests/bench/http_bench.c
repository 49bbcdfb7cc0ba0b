/*
 * http_bench: GET of one Space's detail over HTTP through the real spaced
 * (target >= 25,000 req/s with 64 connections, docs/performance.md),
 * measured and reported, never asserted.  One spaced on a temporary data
 * dir, its log in <dir>/spaced.out; the world of tk_provision (workspace
 * "default", its manager "op", one fake instance); a token for "op" issued
 * through the admin api; one Space created through HTTP.  The load comes
 * from wrk, run as a child, whose report is printed through and summed up
 * in one line.  Latencies are wrk's, converted to ms by shifting digits
 * (never rounded).
 *
 *   http_bench
 *   HTTP_BENCH_CONNECTIONS=N   wrk connections, 1..1024 (default 64)
 *   HTTP_BENCH_SECONDS=N       wrk duration, 1..600 (default 10)
 *   HTTP_BENCH_SIEGE=1         instead: one well-behaved client under a
 *                              siege (target p99 < 50 ms)
 *
 * The siege arm holds BENCH_SLOW connections sending a byte a second and
 * BENCH_IDLE idle ones (tests/integration/siege.h, as test_hostile_http
 * does) while one client GETs the Space, one request after another on a
 * fresh connection each, for HTTP_BENCH_SECONDS; it reports that client's
 * latencies, to the microsecond.
 *
 * Exit: 0 measured, 1 a step failed, 2 bad knob or no wrk in PATH.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "siege.h"
#include "testkit.h"

#define HB_READY_MS 20000
#define HB_WRK_GRACE_MS 30000  /* beyond the run, before wrk is killed */
#define HB_OUT_MAX 65536       /* wrk's report is a few hundred bytes */
#define BENCH_SLOW 500         /* the siege: a byte a second each */
#define BENCH_IDLE 1000        /* the siege: nothing at all */
#define HB_SIEGE_OPEN_MS 30000 /* the siege's connections all open */
#define HB_GET_MS 5000         /* one GET under siege, at most */
#define HB_SAMPLES_MAX 1000000

static char admin_token[CM_TOKEN_MAX + 1]; /* from <dir>/admin.token */

/* Says what went wrong on stderr; returns -1. */
__attribute__((format(printf, 1, 2))) static int
fail(const char *fmt, ...)
{
	va_list ap;

	fputs("http_bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static bool
wrk_in_path(void)
{
	const char *path = getenv("PATH");
	char dir[4096], exe[4200];

	snprintf(dir, sizeof(dir), "%s", path ? path : "/usr/bin:/bin");
	for (char *d = dir, *next; d != NULL; d = next) {
		if ((next = strchr(d, ':')) != NULL)
			*next++ = '\0';
		snprintf(exe, sizeof(exe), "%s/wrk", *d ? d : ".");
		if (access(exe, X_OK) == 0)
			return true;
	}
	return false;
}

/*
 * Runs argv (wrk) with its stdout on a pipe, echoes it to ours and keeps
 * it in out (NUL-terminated, truncated at len - 1); kills it past
 * timeout_ms.  Returns 0 when it exited 0, else -1 (said why).
 */
static int
run_capture(char *const argv[], char *out, size_t len, int timeout_ms)
{
	int64_t deadline = cm_mono_ms() + timeout_ms;
	size_t used = 0;
	int fds[2], status = 0;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) != 0)
		return fail("pipe: %s", strerror(errno));
	fflush(stdout);
	if ((pid = fork()) < 0) {
		close(fds[0]);
		close(fds[1]);
		return fail("fork: %s", strerror(errno));
	}
	if (pid == 0) {
		/* dup2 clears close-on-exec on the new fd 1 only; an ignored
		 * SIGPIPE would survive the exec. */
		signal(SIGPIPE, SIG_DFL);
		if (dup2(fds[1], STDOUT_FILENO) >= 0)
			execvp(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		int64_t left = deadline - cm_mono_ms();
		struct pollfd pfd = {fds[0], POLLIN, 0};
		char buf[4096];
		ssize_t n;

		if (left <= 0) {
			fail("wrk overran its %d ms; killed", timeout_ms);
			kill(pid, SIGKILL);
			break;
		}
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			break;
		if ((pfd.revents & (POLLIN | POLLHUP | POLLERR)) == 0)
			continue;
		if ((n = read(fds[0], buf, sizeof(buf))) <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			break; /* EOF: wrk is done */
		}
		fwrite(buf, 1, (size_t)n, stdout);
		if ((size_t)n > len - 1 - used)
			n = (ssize_t)(len - 1 - used);
		memcpy(out + used, buf, (size_t)n);
		used += (size_t)n;
	}
	out[used] = '\0';
	fflush(stdout);
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	return fail("wrk %s %d", WIFEXITED(status) ? "exited" : "got signal",
	    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* wrk's "%.2Lf<unit>" time (us, ms, s, m, h) as ms: the digits move, the
 * value is exact, trailing zeros past two decimals are dropped. */
static int
wrk_ms(const char *s, char *out, size_t len)
{
	static const struct {
		const char *unit;
		long long per; /* 1e-5 ms per hundredth of the unit */
	} units[] = {{"us", 1}, {"ms", 1000}, {"s", 1000000}, {"m", 60000000},
	    {"h", 3600000000}};
	char *end;
	long long whole = strtoll(s, &end, 10), v;
	int n;

	if (end == s || whole < 0 || end[0] != '.' ||
	    !isdigit((unsigned char)end[1]) || !isdigit((unsigned char)end[2]))
		return -1;
	v = whole * 100 + (end[1] - '0') * 10 + (end[2] - '0');
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end + 3, units[i].unit) != 0)
			continue;
		v *= units[i].per;
		n = snprintf(out, len, "%lld.%05lld", v / 100000, v % 100000);
		while (n > 0 && (size_t)n < len && out[n - 1] == '0' &&
		       out[n - 3] != '.')
			out[--n] = '\0';
		return n > 0 && (size_t)n < len ? 0 : -1;
	}
	return -1;
}

struct hb_result {
	long long requests, non2xx;
	char rps[32], p50[32], p99[32];
};

/* Picks the summary out of wrk's report (parsed in place). */
static int
parse_wrk(char *text, struct hb_result *r)
{
	bool dist = false;
	char tmp[32];

	memset(r, 0, sizeof(*r));
	r->requests = -1;
	for (char *line = text, *next; line != NULL; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		line += strspn(line, " \t");
		if (strstr(line, "Latency Distribution") != NULL)
			dist = true;
		else if (dist && sscanf(line, "50%% %31s", tmp) == 1)
			wrk_ms(tmp, r->p50, sizeof(r->p50));
		else if (dist && sscanf(line, "99%% %31s", tmp) == 1)
			wrk_ms(tmp, r->p99, sizeof(r->p99));
		else if (strstr(line, " requests in ") != NULL)
			sscanf(line, "%lld", &r->requests);
		else if (sscanf(line, "Requests/sec: %31s", r->rps) != 1)
			sscanf(
			    line, "Non-2xx or 3xx responses: %lld", &r->non2xx);
	}
	return r->requests >= 0 && r->rps[0] && r->p50[0] && r->p99[0] ? 0 : -1;
}

/*
 * The world, a token for its manager, one Space; path gets the Space's
 * URL path, checked with one GET so that a wrong URL or token cannot
 * yield a figure.
 */
static int
setup(struct tk_proc *p, char *user, char *path, size_t len)
{
	char body[512], space[CM_ID_MAX + 1];
	struct tk_world w;
	nng_socket s;
	int rc;

	if (!tk_http_ready(p, HB_READY_MS))
		return fail("the api never answered");
	if (cm_rpc_open(&s, p->store_url) != 0)
		return fail("cannot open %s", p->store_url);
	rc = tk_provision(s, &w, 1);
	nng_close(s); /* nng runs threads: none may cross the fork of wrk */
	if (rc != 0)
		return fail("provisioning failed");
	if (!tk_admin_token(p, admin_token, sizeof(admin_token), HB_READY_MS))
		return fail("no working admin token in %s/admin.token", p->dir);
	snprintf(
	    path, len, "/api/v1/admin/principals/%s/tokens", w.operator_id);
	if (tk_http_created(p, path, admin_token, NULL, "token", user,
	        CM_TOKEN_MAX + 1) != 0)
		return -1;
	snprintf(
	    path, len, "/api/v1/workspaces/%s/browser-spaces", w.workspace_id);
	snprintf(body, sizeof(body),
	    "{\"browser_instance_id\": \"%s\", \"owner_type\": \"operator\", "
	    "\"owner_id\": \"%s\"}",
	    w.instance_id[0], w.operator_id);
	if (tk_http_created(
	        p, path, user, body, "space_id", space, sizeof(space)) != 0)
		return -1;
	snprintf(path, len, "/api/v1/workspaces/%s/browser-spaces/%s",
	    w.workspace_id, space);
	if ((rc = tk_http(p, "GET", path, user, NULL, NULL, NULL)) != 200)
		return fail("GET %s: %d", path, rc);
	return 0;
}

/* Who answered the run's reads, from the api's /metrics. */
static int
answered_by(const struct tk_proc *p)
{
	char *text = NULL;

	if (tk_http(p, "GET", "/metrics", admin_token, NULL, NULL, &text) !=
	    200) {
		free(text);
		return fail("GET /metrics failed");
	}
	printf("http_bench: view_hits=%.0f view_misses=%.0f "
	       "loop_answers=%.0f\n",
	    tk_prom_sample(text, "spaced_api_view_reads_total{result=\"hit\"}"),
	    tk_prom_sample(
	        text, "spaced_api_view_reads_total{result=\"miss\"}"),
	    tk_prom_sample(text, "spaced_api_loop_answers_total"));
	free(text);
	return 0;
}

static int
measure(const struct tk_proc *p, const char *user, const char *path, int conns,
    int seconds)
{
	char url[640], auth[300], c_arg[16], d_arg[16], report[HB_OUT_MAX];
	char *argv[] = {
	    "wrk", "-t2", c_arg, d_arg, "--latency", "-H", auth, url, NULL};
	struct hb_result r;

	snprintf(url, sizeof(url), "%s%s", p->http_base, path);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", user);
	snprintf(c_arg, sizeof(c_arg), "-c%d", conns);
	snprintf(d_arg, sizeof(d_arg), "-d%ds", seconds);
	if (run_capture(argv, report, sizeof(report),
	        seconds * 1000 + HB_WRK_GRACE_MS) != 0)
		return -1;
	if (parse_wrk(report, &r) != 0)
		return fail("cannot read wrk's report");
	printf("http_bench: GET space detail connections=%d seconds=%d "
	       "requests=%lld requests_per_s=%s latency_p50_ms=%s "
	       "latency_p99_ms=%s non2xx=%lld (target >= 25,000 req/s)\n",
	    conns, seconds, r.requests, r.rps, r.p50, r.p99, r.non2xx);
	return answered_by(p);
}

/* Room in the open-file limit for the siege, in this process and in
 * spaced (which inherits it, and sizes its connection cap by it). */
static int
siege_files(void)
{
	rlim_t want = BENCH_SLOW + BENCH_IDLE + 1024;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return fail("getrlimit: %s", strerror(errno));
	if (rl.rlim_cur >= want)
		return 0;
	if (rl.rlim_max < want)
		return fail("the open-file limit %llu is below %llu",
		    (unsigned long long)rl.rlim_max, (unsigned long long)want);
	rl.rlim_cur = want;
	return setrlimit(RLIMIT_NOFILE, &rl) == 0
	           ? 0
	           : fail("setrlimit: %s", strerror(errno));
}

/* One client's GETs of path under the siege, for seconds. */
static int
measure_siege(
    const struct tk_proc *p, const char *user, const char *path, int seconds)
{
	int64_t *ns = malloc(HB_SAMPLES_MAX * sizeof(*ns)), t_end;
	char p50[32], p99[32], max[32];
	struct tk_siege_stats st;
	struct tk_siege *s;
	size_t n = 0;
	long failed = 0;

	if (ns == NULL)
		return fail("out of memory");
	if ((s = tk_siege_start(p, BENCH_SLOW, BENCH_IDLE)) == NULL) {
		free(ns);
		return fail("the siege did not start");
	}
	for (t_end = cm_mono_ms() + HB_SIEGE_OPEN_MS;
	     tk_siege_open(s) < BENCH_SLOW + BENCH_IDLE &&
	     cm_mono_ms() < t_end;)
		tk_http_get_within(p, path, user, HB_GET_MS, NULL);
	printf("http_bench: siege of %d slow and %d idle connections, %d "
	       "open\n",
	    BENCH_SLOW, BENCH_IDLE, tk_siege_open(s));
	for (t_end = cm_mono_ms() + seconds * 1000LL;
	     cm_mono_ms() < t_end && n < HB_SAMPLES_MAX; n++)
		if (tk_http_get_within(p, path, user, HB_GET_MS, &ns[n]) != 200)
			failed++;
	tk_siege_stop(s, &st);
	tk_sort_i64(ns, n);
	printf("http_bench: GET space detail under siege seconds=%d "
	       "requests=%zu failed=%ld latency_p50_ms=%s latency_p99_ms=%s "
	       "latency_max_ms=%s (target p99 < 50 ms); siege: %ld "
	       "connections opened, %ld closed by the api, %d open at most\n",
	    seconds, n, failed, tk_ms(tk_pct(ns, n, 50), p50, sizeof(p50)),
	    tk_ms(tk_pct(ns, n, 99), p99, sizeof(p99)),
	    tk_ms(n > 0 ? ns[n - 1] : 0, max, sizeof(max)), st.opened,
	    st.closed, st.open_max);
	free(ns);
	return 0;
}

int
main(void)
{
	int conns = tk_knob("HTTP_BENCH_CONNECTIONS", 64, 1, 1024);
	int seconds = tk_knob("HTTP_BENCH_SECONDS", 10, 1, 600);
	int siege = tk_knob("HTTP_BENCH_SIEGE", 0, 0, 1);
	char dir[128], out[192], path[512], user[CM_TOKEN_MAX + 1];
	struct tk_proc p;
	int rc;

	if (conns < 0 || seconds < 0 || siege < 0)
		return 2;
	if (siege && siege_files() != 0)
		return 2;
	if (!siege && !wrk_in_path()) {
		fail("wrk not found in PATH (scripts/setup.sh installs it)");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	printf("http_bench: %ld CPUs online\n", sysconf(_SC_NPROCESSORS_ONLN));
	fflush(stdout); /* before any fork */
	tk_tmpdir(dir, sizeof(dir), "hb");
	snprintf(out, sizeof(out), "%s/spaced.out", dir);
	if (tk_spaced_start_logged(&p, dir, NULL, out) != 0) {
		fail("spaced did not start (see %s)", out);
		return 1;
	}
	rc = setup(&p, user, path, sizeof(path)) != 0 ||
	     (siege ? measure_siege(&p, user, path, seconds)
	            : measure(&p, user, path, conns, seconds)) != 0;
	tk_proc_stop(&p, SIGTERM);
	if (rc == 0)
		tk_rmrf(dir);
	else
		fail("kept %s (log: %s)", dir, out);
	return rc;
}
