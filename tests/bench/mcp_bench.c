/*
 * mcp_bench: spaced's MCP endpoint on a real Chromium through the real
 * spaced (warm standby on, as spaced runs by default), in one run;
 * measured and reported, never asserted.
 *
 * overhead: what a tool call costs beyond its task.  One Space on the
 * managed instance, navigated once to the home page of the bench's page
 * server on 127.0.0.1 (a form: a text field "Query" and a button), and
 * one MCP session on the Space's own URL (initialize and
 * notifications/initialized, untimed).  Then, for snapshot and for
 * navigate (to that same page, with snapshot: true, as a tool call's
 * navigate runs when it does not say: both sides run the same task),
 * MCP_BENCH_RUNS pairs, each a tools/call of browser_<capability> on
 * the session (increasing JSON-RPC ids, answered as JSON) and a POST
 * .../tasks?wait=30 of the same capability and args, one after the
 * other, the order turned each pair, so that the two meet the machine
 * in the same state; one untimed pair first.  Both
 * are the same client: one libcurl request on a connection of its own
 * (tk_http), its answer parsed as JSON and checked (a result that is not
 * an error; a task completed).  Each pair's difference, MCP less task,
 * is the overhead.
 *
 * lifecycle: an agent's whole browser lifecycle through spaced's
 * workspace MCP URL beside Playwright MCP (@playwright/mcp, pinned in
 * tests/bench/mcp/package-lock.json, on Debian's Chromium: headless,
 * isolated, its stdio transport), one client for both: the official
 * SDK's, in tests/bench/mcp/lifecycle.mjs, one node process that runs
 * one lifecycle when this asks.  A lifecycle: connect and initialize
 * (for Playwright MCP, its process spawned), browser_navigate to the
 * same page, browser_snapshot, browser_click on the text field's ref,
 * browser_type into it, and browser_space_close (spaced: each run
 * opens a Space of its own on the instance) or browser_close, timed by
 * the script from before the connect to the close's answer; also each
 * step.  spaced's close answers once the close is asked: the Space's
 * browser goes after, so spaced's until_closed runs on until the Space
 * reads closed.  Before each run of either, the instance's standby
 * browser runs and has had MB_SETTLE_MS to come to rest: the idle
 * instance a create meets, and no browser starting beside a Playwright
 * run.  The runs alternate, one of each; one untimed of each first.
 *
 *   mcp_bench [overhead] [lifecycle]   the parts named (default both)
 *   MCP_BENCH_RUNS=N   runs or pairs of each, 2..1000 (default 20)
 *
 * Figures are ms to the microsecond, truncated (a difference below zero
 * is the MCP call that was faster).  The p50 and p99 are nearest-rank.
 * Exit: 0 measured, 1 a step failed, 2 a bad knob or no chromium.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_world.h"
#include "clock.h"
#include "pages.h"
#include "testkit.h"

#define MB_RUNS_MAX 1000
#define MB_SETTLE_MS 5000  /* a standby browser, launched, comes to rest */
#define MB_RUN_MS 120000   /* one lifecycle of either, on a loaded machine */
#define MB_LINE_MAX 16384  /* one answer of lifecycle.mjs */
#define MB_SESSION_MAX 128 /* an Mcp-Session-Id (48 hex digits) */

#define fail(...) tk_fail("mcp_bench", __VA_ARGS__)

#define report(name, v, n) tk_report("mcp_bench", name, v, n)

/* ---- overhead: one MCP session on a Space's URL */

struct mb_session {
	struct bw_world *w;
	char path[256];
	char id[MB_SESSION_MAX];
	int next; /* the next JSON-RPC id */
};

/* POSTs message (one JSON-RPC message) on s; the answer's JSON into
 * *res (NULL: not wanted), and the session's id when it gives one.
 * Returns the status, or -1. */
static int
mcp_post(struct mb_session *s, const char *message, json_t **res)
{
	char line[MB_SESSION_MAX + 32], *body = NULL, *head = NULL;
	const char *headers[] = {"Accept: application/json, text/event-stream",
	    "MCP-Protocol-Version: 2025-11-25", s->id[0] ? line : NULL, NULL};
	int code;

	snprintf(line, sizeof(line), "Mcp-Session-Id: %s", s->id);
	code = tk_http_head(&s->w->p, "POST", s->path, s->w->user, message,
	    headers, &body, &head);
	if (s->id[0] == '\0' &&
	    !tk_head_value(head, "Mcp-Session-Id", s->id, sizeof(s->id)))
		s->id[0] = '\0';
	if (res != NULL)
		*res = body != NULL ? json_loads(body, 0, NULL) : NULL;
	free(body);
	free(head);
	return code;
}

/* Opens s on the MCP URL of w's space: initialize, then
 * notifications/initialized.  Returns 0, or -1. */
static int
session_open(struct mb_session *s, struct bw_world *w, const char *space)
{
	int code;

	memset(s, 0, sizeof(*s));
	s->w = w;
	s->next = 1;
	snprintf(s->path, sizeof(s->path),
	    "/api/v1/workspaces/%s/browser-spaces/%s/mcp", w->ws, space);
	if ((code = mcp_post(s,
	         "{\"jsonrpc\": \"2.0\", \"id\": 0, \"method\": "
	         "\"initialize\", "
	         "\"params\": {\"protocolVersion\": \"2025-11-25\", "
	         "\"capabilities\": {}, \"clientInfo\": {\"name\": "
	         "\"mcp_bench\", \"version\": \"1.0.0\"}}}",
	         NULL)) != 200 ||
	    s->id[0] == '\0')
		return fail("initialize: %d, session \"%s\"", code, s->id);
	if ((code = mcp_post(s,
	         "{\"jsonrpc\": \"2.0\", \"method\": "
	         "\"notifications/initialized\"}",
	         NULL)) != 202)
		return fail("notifications/initialized: %d", code);
	return 0;
}

/* tools/call of browser_<cap> with args on s, to its answer: a result
 * that is not an error.  Returns 0, or -1. */
static int
tool_call(struct mb_session *s, const char *cap, const char *args)
{
	char message[512];
	json_t *res = NULL, *result;
	int code, rc;

	snprintf(message, sizeof(message),
	    "{\"jsonrpc\": \"2.0\", \"id\": %d, \"method\": \"tools/call\", "
	    "\"params\": {\"name\": \"browser_%s\", \"arguments\": %s}}",
	    s->next++, cap, args);
	code = mcp_post(s, message, &res);
	result = json_object_get(res, "result");
	rc = code == 200 && result != NULL &&
	             !json_is_true(json_object_get(result, "isError"))
	         ? 0
	         : fail("browser_%s: %d %s", cap, code,
	               res != NULL && json_object_get(res, "error") != NULL
	                   ? "(a JSON-RPC error)"
	                   : "(a tool error or no answer)");
	json_decref(res);
	return rc;
}

/* n timed pairs of cap with args on s's Space: mcp[i], task[i], and
 * diff[i] their difference.  One untimed pair first.  Returns 0, or -1. */
static int
pairs(struct mb_session *s, const char *space, const char *cap,
    const char *args, int64_t *mcp, int64_t *task, int64_t *diff, int n)
{
	char rid[64];

	for (int i = -1; i < n; i++) {
		int64_t t_mcp = 0, t_task = 0;

		snprintf(rid, sizeof(rid), "overhead-%s-%d", cap, i);
		for (int k = 0; k < 2; k++) {
			/* Even pairs MCP first, odd ones the task first. */
			bool mcp_now = (k == 0) == (i % 2 == 0);
			int64_t t0 = cm_mono_ns();

			if (mcp_now
			        ? tool_call(s, cap, args)
			        : bw_task(s->w, space, rid, cap, args, NULL))
				return -1;
			*(mcp_now ? &t_mcp : &t_task) = cm_mono_ns() - t0;
		}
		if (i >= 0) {
			mcp[i] = t_mcp;
			task[i] = t_task;
			diff[i] = t_mcp - t_task;
		}
	}
	return 0;
}

/* The overhead part on w: one Space, its session, the pairs of each
 * case, the Space closed.  Prints its figures.  Returns 0, or -1. */
static int
overhead(struct bw_world *w, int n)
{
	static int64_t mcp[MB_RUNS_MAX], task[MB_RUNS_MAX], diff[MB_RUNS_MAX];
	char space[CM_ID_MAX + 1], nav[200], name[96];
	const char *cases[][2] = {{"snapshot", "{}"}, {"navigate", nav}};
	struct mb_session s;
	int rc = 0;

	snprintf(
	    nav, sizeof(nav), "{\"url\": \"%s\", \"snapshot\": true}", w->url);
	if (bw_space(w, "[\"navigate\", \"snapshot\"]", space) != 0 ||
	    bw_task(w, space, "overhead-first", "navigate", nav, NULL) != 0 ||
	    session_open(&s, w, space) != 0)
		return -1;
	for (size_t c = 0; c < 2 && rc == 0; c++) {
		if ((rc = pairs(&s, space, cases[c][0], cases[c][1], mcp, task,
		         diff, n)) != 0)
			break;
		snprintf(name, sizeof(name), "overhead %s.mcp_tools_call",
		    cases[c][0]);
		report(name, mcp, n);
		snprintf(
		    name, sizeof(name), "overhead %s.tasks_wait", cases[c][0]);
		report(name, task, n);
		snprintf(name, sizeof(name), "overhead %s.mcp_less_task",
		    cases[c][0]);
		report(name, diff, n);
		fflush(stdout);
	}
	/* The instance free again, for the lifecycle's Spaces. */
	if (bw_close(w, space) < 0)
		return -1;
	return rc != 0 ? -1 : bw_wait_closed(w, space);
}

/* ---- lifecycle: the node script of both servers */

struct mb_node {
	pid_t pid;   /* its process group's too */
	int in, out; /* its stdin, its stdout */
	char buf[MB_LINE_MAX];
	size_t len;
};

static bool
node_exited(void *arg)
{
	struct mb_node *nd = arg;
	int status;

	return waitpid(nd->pid, &status, WNOHANG) == nd->pid;
}

/* Ends nd: its stdin closed (the script ends at EOF), then its whole
 * group killed, the browsers of a Playwright MCP left behind too. */
static void
node_stop(struct mb_node *nd)
{
	if (nd->pid <= 0)
		return;
	close(nd->in);
	close(nd->out);
	if (!tk_wait_until(node_exited, nd, 5000)) {
		kill(-nd->pid, SIGKILL);
		waitpid(nd->pid, NULL, 0);
	} else
		kill(-nd->pid, SIGKILL);
	nd->pid = 0;
}

/* Starts lifecycle.mjs for w, Playwright MCP's output in pw_dir.
 * Returns 0, or -1. */
static int
node_start(struct mb_node *nd, struct bw_world *w, const char *pw_dir)
{
	char env[4][CM_TOKEN_MAX + 512];
	char *const argv[] = {"node", MB_LIFECYCLE_JS, NULL};
	char *const envv[] = {env[0], env[1], env[2], env[3], NULL};
	int to[2], from[2];

	snprintf(env[0], sizeof(env[0]), "MCP_URL=%s/api/v1/workspaces/%s/mcp",
	    w->p.http_base, w->ws);
	snprintf(env[1], sizeof(env[1]), "MCP_TOKEN=%s", w->user);
	snprintf(env[2], sizeof(env[2]), "MCP_PAGE=%s", w->url);
	snprintf(env[3], sizeof(env[3]), "MCP_DIR=%s", pw_dir);
	memset(nd, 0, sizeof(*nd));
	if (pipe2(to, O_CLOEXEC) != 0)
		return fail("pipe: %s", strerror(errno));
	if (pipe2(from, O_CLOEXEC) != 0) {
		close(to[0]);
		close(to[1]);
		return fail("pipe: %s", strerror(errno));
	}
	nd->pid = tk_spawn_group(argv, envv, "MCP_", to[0], from[1]);
	close(to[0]);
	close(from[1]);
	nd->in = to[1];
	nd->out = from[0];
	if (nd->pid < 0) {
		close(nd->in);
		close(nd->out);
		nd->pid = 0;
		return fail("cannot start node");
	}
	return 0;
}

/* Asks nd for one lifecycle of server; its answer line (without the
 * newline) into line.  Returns 0, or -1 when none came in MB_RUN_MS. */
static int
node_ask(struct mb_node *nd, const char *server, char *line, size_t len)
{
	char ask[32];
	int64_t end = cm_mono_ms() + MB_RUN_MS;
	int k = snprintf(ask, sizeof(ask), "%s\n", server);

	if (write(nd->in, ask, (size_t)k) != k)
		return fail("node: write: %s", strerror(errno));
	for (;;) {
		char *nl = memchr(nd->buf, '\n', nd->len);
		struct pollfd pfd = {nd->out, POLLIN, 0};
		int64_t left = end - cm_mono_ms();
		ssize_t got;

		if (nl != NULL) {
			size_t m = (size_t)(nl - nd->buf);

			snprintf(line, len, "%.*s", (int)m, nd->buf);
			nd->len -= m + 1;
			memmove(nd->buf, nl + 1, nd->len);
			return 0;
		}
		if (nd->len == sizeof(nd->buf)) /* a line past the bound */
			nd->len = 0;
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			return fail("node: no answer to %s in %d ms", server,
			    MB_RUN_MS);
		got =
		    read(nd->out, nd->buf + nd->len, sizeof(nd->buf) - nd->len);
		if (got <= 0)
			return fail("node: ended (%s)",
			    got == 0 ? "EOF" : strerror(errno));
		nd->len += (size_t)got;
	}
}

/* The steps of a lifecycle, as lifecycle.mjs times them. */
enum mb_step {
	MB_CONNECT,
	MB_NAVIGATE,
	MB_SNAPSHOT,
	MB_CLICK,
	MB_TYPE,
	MB_CLOSE,
	MB_STEPS
};

static const char *const mb_step_name[MB_STEPS] = {
    "connect", "navigate", "snapshot", "click", "type", "close"};

/* One lifecycle's figures. */
struct mb_run {
	long long start, total, step[MB_STEPS];
	char space[CM_ID_MAX + 1];
};

/* One lifecycle of server through nd into r.  Returns 0, or -1. */
static int
lifecycle_run(struct mb_node *nd, const char *server, struct mb_run *r)
{
	static char line[MB_LINE_MAX];
	char word[16], status[8];

	if (node_ask(nd, server, line, sizeof(line)) != 0)
		return -1;
	if (sscanf(line, "%15s %7s", word, status) != 2 ||
	    strcmp(word, server) != 0 || strcmp(status, "ok") != 0)
		return fail("%s", line);
	if (sscanf(line, "%*s %*s %lld %lld %lld %lld %lld %lld %lld %lld %64s",
	        &r->start, &r->total, &r->step[0], &r->step[1], &r->step[2],
	        &r->step[3], &r->step[4], &r->step[5], r->space) != 9)
		return fail("not an answer: %s", line);
	return 0;
}

/* The figures of the lifecycle part, run i of each server. */
struct mb_lifecycles {
	int64_t total[2][MB_RUNS_MAX];
	int64_t step[2][MB_STEPS][MB_RUNS_MAX];
	int64_t until_closed[MB_RUNS_MAX]; /* spaced's */
};

static const char *const mb_server[2] = {"spaced", "playwright"};

/* One run of each, spaced's first, each on the settled instance; run i's
 * figures into f (i < 0: untimed).  Returns 0, or -1. */
static int
lifecycle_pair(
    struct bw_world *w, struct mb_node *nd, struct mb_lifecycles *f, int i)
{
	for (int s = 0; s < 2; s++) {
		struct mb_run r;

		if (bw_standby_settled(w, MB_SETTLE_MS) != 0 ||
		    lifecycle_run(nd, mb_server[s], &r) != 0)
			return -1;
		/* Its browser and profile gone: the Space reads closed. */
		if (s == 0 && bw_wait_closed(w, r.space) != 0)
			return -1;
		if (i < 0)
			continue;
		if (s == 0)
			f->until_closed[i] = cm_mono_ns() - r.start;
		f->total[s][i] = r.total;
		for (int k = 0; k < MB_STEPS; k++)
			f->step[s][k][i] = r.step[k];
	}
	return 0;
}

/* The lifecycle part on w: the node script, the pairs.  Prints its
 * figures.  Returns 0, or -1. */
static int
lifecycles(struct bw_world *w, const char *dir, int n)
{
	static struct mb_lifecycles f;
	char pw_dir[192], name[96];
	struct mb_node nd;
	int64_t p50[2];
	int rc = 0;

	snprintf(pw_dir, sizeof(pw_dir), "%s/playwright", dir);
	if (tk_npm_ci("tests/bench/mcp") != 0)
		return fail("npm ci for tests/bench/mcp failed");
	if (mkdir(pw_dir, 0700) != 0)
		return fail("mkdir %s: %s", pw_dir, strerror(errno));
	if (node_start(&nd, w, pw_dir) != 0)
		return -1;
	for (int i = -1; i < n && rc == 0; i++)
		rc = lifecycle_pair(w, &nd, &f, i);
	node_stop(&nd);
	if (rc != 0)
		return -1;
	report("lifecycle spaced_mcp until_closed", f.until_closed, n);
	for (int s = 0; s < 2; s++) {
		for (int k = 0; k < MB_STEPS; k++) {
			snprintf(name, sizeof(name), "lifecycle %s_mcp.%s",
			    mb_server[s], mb_step_name[k]);
			report(name, f.step[s][k], n);
		}
		snprintf(name, sizeof(name),
		    "lifecycle %s_mcp to_close_answered", mb_server[s]);
		p50[s] = report(name, f.total[s], n);
	}
	printf("mcp_bench: ratio spaced/playwright p50=%lld.%03lld (target: "
	       "<= 0.15)\n",
	    (long long)(p50[0] / p50[1]),
	    (long long)(p50[0] * 1000 / p50[1] % 1000));
	return 0;
}

/* ---- the run */

int
main(int argc, char **argv)
{
	static struct bw_world w;
	int n = tk_knob("MCP_BENCH_RUNS", 20, 2, MB_RUNS_MAX);
	const char *flags[] = {"--warm-standby=true", NULL};
	bool part_overhead = argc == 1, part_lifecycle = argc == 1;
	char dir[BW_DIR_MAX], out[BW_OUT_MAX];
	struct tk_pages *pages;
	struct tk_cpu m0, m1;
	bool machine;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "overhead") == 0)
			part_overhead = true;
		else if (strcmp(argv[i], "lifecycle") == 0)
			part_lifecycle = true;
		else {
			fail("no part %s (overhead, lifecycle)", argv[i]);
			return 2;
		}
	}
	if (n < 0)
		return 2;
	/* Every browser's temporary files (Playwright MCP's profile, the
	 * single-instance directories) go with dir. */
	if ((rc = bw_begin(&w, "mcp_bench", "mb", true, &pages, dir, out)) != 0)
		return rc;
	printf("mcp_bench: %ld CPUs online, warm standby on\n",
	    sysconf(_SC_NPROCESSORS_ONLN));
	fflush(stdout);
	machine = tk_cpu_read(&m0) == 0;
	if (tk_spaced_start_logged(&w.p, dir, flags, out) != 0)
		rc = fail("spaced did not start (see %s)", out);
	else if (bw_setup(&w) != 0 || (part_overhead && overhead(&w, n) != 0) ||
	         (part_lifecycle && lifecycles(&w, dir, n) != 0))
		rc = -1;
	if (w.p.pid > 0)
		tk_proc_stop(&w.p, SIGTERM);
	machine = machine && tk_cpu_read(&m1) == 0;
	tk_pages_stop(pages);
	if (rc != 0) {
		fail("kept %s (log: %s)", dir, out);
		return 1;
	}
	if (machine)
		tk_cpu_print("mcp_bench", &m0, &m1);
	tk_rmrf(dir);
	return 0;
}
