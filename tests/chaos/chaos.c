/*
 * chaos: a seeded load on spaced through its HTTP API while processes are
 * killed with SIGKILL at random, then a check of every promise that must
 * survive that.
 *
 *   chaos [--seed N] [--kills N] [--spaces N] [--browsers] [--keep]
 *
 * The load, one request at a time from one thread so that the seed decides
 * its sequence: Spaces created (some with a repeated request_id), tasks
 * submitted (noop, sleep, fail, leak, big, screenshot, crash; some
 * request_ids repeated with the same body, some with another body),
 * cancels and closes.  A request that got no answer may still have been
 * committed: it is sent again, unchanged, as a client would.  Meanwhile, at
 * random moments: SIGKILL to an actor, the store, the api, or spaced's
 * whole process group (spaced is then started again on the same data dir),
 * and with --browsers to a chromium process.  Only processes this program
 * started, or their descendants (found from /proc by parent chain; this
 * program is their subreaper), are ever killed.
 *
 * After the load spaced is left alone until every acknowledged task has
 * ended (a bounded poll), then every violation is printed:
 *   - an acknowledged task that is missing or not terminal;
 *   - a request_id that ran twice (the fake runtime's log), a completed
 *     task the runtime never started, a task with other than one terminal
 *     event or one whose event says otherwise than its status;
 *   - an instance with two Spaces that are not closed (sampled through the
 *     API during the load, and in the database at the end);
 *   - a Space whose event sequences are not 1..N;
 *   - a closed Space with an actor or a profile directory; any process of
 *     spaced left once it has exited (or once its group was killed);
 *   - a canary (the tokens, an instance's config secret and endpoint, the
 *     secret in a failure's message, the fake runtime's leaked secrets) in
 *     any response, database row (other than the instance's own secret
 *     columns and a task's args), event or log line.
 * Exit 0 when there is none; otherwise 1, with the seed and the command
 * that runs the same sequence again.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "chaos.h"
#include "clock.h"

static const char *const ch_kill_name[K__COUNT] = {
    "actor", "store", "api", "tree", "chromium"};

struct chaos ch;

void
violation(const char *fmt, ...)
{
	va_list ap;

	ch.violations++;
	fputs("VIOLATION: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

static int
rnd(int n)
{
	return n > 0 ? (int)(rand_r(&ch.rng) % (unsigned)n) : 0;
}

/* ---- canaries */

static void
canary_add(const char *s)
{
	if (ch.n_canary < CH_CANARIES_MAX && s != NULL && s[0] != '\0')
		ch.canary[ch.n_canary++] = s;
}

/* Every canary found in len bytes of text is a violation (where says
 * what the bytes are). */
void
canary_scan_but(
    const char *where, const char *text, size_t len, const char *except)
{
	for (size_t i = 0; text != NULL && i < ch.n_canary; i++)
		if (ch.canary[i] != except &&
		    memmem(text, len, ch.canary[i], strlen(ch.canary[i])))
			violation(
			    "canary \"%.12s...\" in %s", ch.canary[i], where);
}

void
canary_scan(const char *where, const char *text, size_t len)
{
	canary_scan_but(where, text, len, NULL);
}

/* ---- processes */

static bool
descends(const struct tk_ps *all, int n, pid_t pid, pid_t root)
{
	for (int hops = 0; hops < n && pid > 1; hops++) {
		pid_t up = 0;

		for (int i = 0; i < n; i++)
			if (all[i].pid == pid)
				up = all[i].ppid;
		if (up == root)
			return true;
		pid = up;
	}
	return false;
}

/* The live (not zombie) descendants of root whose command line holds
 * want (NULL: any), into pids.  Returns how many. */
static int
descendants(pid_t root, const char *want, pid_t *pids, int max)
{
	static struct tk_ps all[CH_PROCS_MAX];
	int n = tk_ps_read(all, CH_PROCS_MAX), found = 0;

	for (int i = 0; i < n && found < max; i++) {
		char path[64], *cmd;
		size_t len = 0;
		bool match = want == NULL;

		if (all[i].state == 'Z' || !descends(all, n, all[i].pid, root))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", all[i].pid);
		if (want != NULL && (cmd = tk_read_file(path, &len)) != NULL) {
			for (size_t k = 0; k + 1 < len; k++)
				if (cmd[k] == '\0')
					cmd[k] = ' ';
			match = strstr(cmd, want) != NULL;
			free(cmd);
		}
		if (match)
			pids[found++] = all[i].pid;
	}
	return found;
}

static void
print_proc(pid_t pid)
{
	char path[64], *cmd;
	size_t len = 0;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if ((cmd = tk_read_file(path, &len)) == NULL)
		return;
	for (size_t k = 0; k + 1 < len; k++)
		if (cmd[k] == '\0')
			cmd[k] = ' ';
	printf("  left: %d %.200s\n", (int)pid, cmd);
	free(cmd);
}

/*
 * Reaps what was reparented to this program (the subreaper) and died.
 * Returns true when spaced itself is among them (it is left unreaped,
 * for the caller).
 */
static bool
reap_orphans(void)
{
	for (;;) {
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0 ||
		    si.si_pid == 0)
			return false;
		if (si.si_pid == ch.p.pid)
			return true;
		waitpid(si.si_pid, NULL, 0);
	}
}

static bool
tree_gone(void *arg)
{
	pid_t pids[16];

	(void)arg;
	reap_orphans();
	return descendants(getpid(), NULL, pids, 16) == 0;
}

/* After spaced is gone: bounded, nothing of it may stay. */
static void
check_tree_gone(const char *when)
{
	pid_t pids[16];
	int n;

	if (tk_wait_until(tree_gone, NULL, CH_GONE_MS))
		return;
	n = descendants(getpid(), NULL, pids, 16);
	violation("%s: %d process(es) of spaced outlived it by %d ms", when, n,
	    CH_GONE_MS);
	for (int i = 0; i < n; i++)
		print_proc(pids[i]);
}

/* ---- spaced */

static int report(int starts);

static void
spaced_start(void)
{
	int ready_fd;

	if (tk_spaced_spawn(&ch.p, ch.dir, ch.flags, ch.out, true, &ready_fd) !=
	        0 ||
	    !tk_ready_wait(ready_fd, CH_READY_MS)) {
		/* The load cannot go on: what was found so far. */
		violation("spaced did not say ready within %d ms (see %s)",
		    CH_READY_MS, ch.out);
		kill(-ch.p.pid, SIGKILL);
		tk_proc_stop(&ch.p, SIGKILL);
		exit(report(0));
	}
}

/* SIGKILL to spaced's whole process group, then a new spaced on the same
 * data dir.  Its actors lead groups of their own: they must go with their
 * supervisor (PR_SET_PDEATHSIG), and so must their browsers. */
static void
tree_restart(bool kill_it)
{
	if (kill_it)
		kill(-ch.p.pid, SIGKILL);
	tk_proc_stop(&ch.p, SIGKILL);
	check_tree_gone(kill_it ? "a killed tree" : "a supervisor that exited");
	ch.restarts++;
	spaced_start();
}

/*
 * spaced exits by itself only when its restart policy gives up, which
 * the kills are paced never to cause (CH_POLICY_KILLS): a violation, and
 * it is started again, as systemd would.
 */
static void
spaced_exited(void)
{
	int status = 0;

	if (!reap_orphans() || tk_proc_wait(&ch.p, 0, &status) != 0)
		return;
	violation("spaced exited by itself (%s %d; see %s)",
	    WIFEXITED(status) ? "exit" : "signal",
	    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), ch.out);
	tree_restart(false);
}

/* ---- HTTP */

/*
 * One request with the operator's token; the body is scanned for canaries
 * and parsed into *out (NULL when it is not JSON; may be NULL).  Returns
 * the status, or -1 when no answer came.
 */
int
api(const char *method, const char *path, const char *body, json_t **out)
{
	char *text = NULL, where[300];
	int status = tk_http(&ch.p, method, path, ch.op, body, NULL, &text);

	if (out != NULL)
		*out = NULL;
	if (text != NULL) {
		snprintf(
		    where, sizeof(where), "the answer to %s %s", method, path);
		canary_scan(where, text, strlen(text));
		if (out != NULL)
			*out = json_loads(text, 0, NULL);
	}
	free(text);
	return status;
}

const char *
jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static const char *
err_code(const json_t *res)
{
	return jstr(json_object_get(res, "error"), "code");
}

void
space_path(char *out, size_t len, int si, const char *tail)
{
	snprintf(out, len, "/api/v1/workspaces/%s/browser-spaces/%s%s", ch.ws,
	    ch.space[si].id, tail);
}

bool
task_terminal(const char *s)
{
	return strcmp(s, "completed") == 0 || strcmp(s, "failed") == 0 ||
	       strcmp(s, "cancelled") == 0;
}

/* ---- the load */

static int
pick_open_space(void)
{
	int open[CH_SPACES_MAX], n = 0;

	for (int i = 0; i < ch.n_space; i++)
		if (!ch.space[i].done)
			open[n++] = i;
	return n > 0 ? open[rnd(n)] : -1;
}

int
find_task(const char *task_id)
{
	for (int i = ch.n_task - 1; i >= 0; i--)
		if (strcmp(ch.task[i].task_id, task_id) == 0)
			return i;
	return -1;
}

static void
task_add(int si, const char *task_id, const char *rid, const char *body)
{
	struct ch_task *t;

	if (find_task(task_id) >= 0 || ch.n_task >= CH_TASKS_MAX)
		return;
	t = &ch.task[ch.n_task++];
	memset(t, 0, sizeof(*t));
	t->space = si;
	snprintf(t->task_id, sizeof(t->task_id), "%s", task_id);
	snprintf(t->rid, sizeof(t->rid), "%s", rid);
	t->body = strdup(body);
}

/* A new task's body: its capability by the seed. */
static void
task_body(char *out, size_t len, const char *rid, bool managed)
{
	int roll = rnd(100);

	if (managed) {
		/* A real browser: the page server of this run. */
		if (roll < 40)
			snprintf(out, len,
			    "{\"request_id\":\"%s\",\"capability\":"
			    "\"navigate\",\"args\":{\"url\":"
			    "\"http://127.0.0.1:%d/%s\"}}",
			    rid, ch.pages_port, roll < 20 ? "" : "next");
		else
			snprintf(out, len,
			    "{\"request_id\":\"%s\",\"capability\":\"%s\","
			    "\"args\":{}}",
			    rid, roll < 80 ? "snapshot" : "screenshot");
		return;
	}
	if (roll < 45)
		snprintf(out, len,
		    "{\"request_id\":\"%s\",\"capability\":\"noop\","
		    "\"args\":{}}",
		    rid);
	else if (roll < 70)
		snprintf(out, len,
		    "{\"request_id\":\"%s\",\"capability\":\"sleep\","
		    "\"args\":{\"ms\":%d}}",
		    rid, rnd(CH_SLEEP_MAX_MS));
	else if (roll < 74)
		snprintf(out, len,
		    "{\"request_id\":\"%s\",\"capability\":\"sleep\","
		    "\"args\":{\"ms\":%d},\"timeout_seconds\":1}",
		    rid, CH_TIMEOUT_SLEEP_MS);
	else if (roll < 84)
		/* A secret in a failure's message: stored only redacted. */
		snprintf(out, len,
		    "{\"request_id\":\"%s\",\"capability\":\"fail\","
		    "\"args\":{\"code\":\"runtime_error\",\"message\":"
		    "\"upstream said secret=%s\"}}",
		    rid, ch.msg);
	else if (roll < 90)
		snprintf(out, len,
		    "{\"request_id\":\"%s\",\"capability\":\"leak\","
		    "\"args\":{}}",
		    rid);
	else if (roll < 94)
		snprintf(out, len,
		    "{\"request_id\":\"%s\",\"capability\":\"screenshot\","
		    "\"args\":{}}",
		    rid);
	else if (roll < 98)
		snprintf(out, len,
		    "{\"request_id\":\"%s\",\"capability\":\"big\","
		    "\"args\":{}}",
		    rid);
	else
		snprintf(out, len,
		    "{\"request_id\":\"%s\",\"capability\":\"crash\","
		    "\"args\":{}}",
		    rid);
}

/* What a submit's answer means for the run. */
static void
submit_answer(int si, const char *rid, const char *body, int status,
    const json_t *res, int repeat_of)
{
	const json_t *data = json_object_get(res, "data");
	const char *task_id = jstr(data, "task_id"), *code = err_code(res);

	if (task_id[0] != '\0') {
		if (repeat_of >= 0 &&
		    strcmp(task_id, ch.task[repeat_of].task_id) != 0)
			violation("request_id %s repeated: task %s, not %s",
			    rid, task_id, ch.task[repeat_of].task_id);
		if (repeat_of >= 0 && status == 202)
			violation(
			    "request_id %s repeated: 202 (a new task)", rid);
		task_add(si, task_id, rid, body);
		return;
	}
	if (status < 0 || status >= 500) {
		/* Maybe committed: sent again later, unchanged. */
		if (!ch.retry_task.set && repeat_of < 0) {
			ch.retry_task.set = true;
			ch.retry_task.space = si;
			snprintf(ch.retry_task.rid, sizeof(ch.retry_task.rid),
			    "%s", rid);
			ch.retry_task.body = strdup(body);
		}
		return;
	}
	if (strcmp(code, "space_closed") == 0 ||
	    strcmp(code, "space_unusable") == 0)
		ch.space[si].done = true;
	else if (status != 409)
		violation("submit %s on %s: %d %s", rid, ch.space[si].id,
		    status, code);
}

static void
op_submit(void)
{
	char path[256], body[CH_BODY_MAX], rid[CH_RID_LEN];
	int si, status, roll = rnd(100), repeat_of = -1;
	bool wait = false;
	json_t *res;

	if (ch.retry_task.set && roll < 60) {
		struct ch_retry r = ch.retry_task;

		ch.retry_task.set = false;
		space_path(path, sizeof(path), r.space, "/tasks");
		status = api("POST", path, r.body, &res);
		submit_answer(r.space, r.rid, r.body, status, res, -1);
		json_decref(res);
		free(r.body);
		return;
	}
	if (roll < 72 && ch.n_task > 0) {
		/* The same request again, byte for byte: the same task. */
		repeat_of = rnd(ch.n_task);
		si = ch.task[repeat_of].space;
		snprintf(rid, sizeof(rid), "%s", ch.task[repeat_of].rid);
		snprintf(body, sizeof(body), "%s", ch.task[repeat_of].body);
	} else if (roll < 76 && ch.n_task > 0) {
		/* The same request_id with another body: refused. */
		struct ch_task *t = &ch.task[rnd(ch.n_task)];

		si = t->space;
		space_path(path, sizeof(path), si, "/tasks");
		snprintf(body, sizeof(body),
		    "{\"request_id\":\"%s\",\"capability\":\"sleep\","
		    "\"args\":{\"ms\":%d}}",
		    t->rid, CH_SLEEP_MAX_MS + 1 + rnd(100));
		status = api("POST", path, body, &res);
		if (status >= 200 && status < 300)
			violation("request_id %s reused with another body: %d",
			    t->rid, status);
		json_decref(res);
		return;
	} else {
		if ((si = pick_open_space()) < 0)
			return;
		snprintf(rid, sizeof(rid), "r%d", ch.next_rid++);
		task_body(body, sizeof(body), rid, ch.space[si].managed);
		/* Some answer only when the task ends (a parked request). */
		wait = rnd(100) < 10;
	}
	space_path(path, sizeof(path), si, wait ? "/tasks?wait=2" : "/tasks");
	status = api("POST", path, body, &res);
	submit_answer(si, rid, body, status, res, repeat_of);
	json_decref(res);
}

static void
space_add(const char *id, bool managed)
{
	for (int i = 0; i < ch.n_space; i++)
		if (strcmp(ch.space[i].id, id) == 0)
			return;
	if (ch.n_space < CH_SPACES_MAX) {
		ch.space[ch.n_space].managed = managed;
		snprintf(ch.space[ch.n_space++].id, CM_ID_MAX + 1, "%s", id);
	}
}

static void
op_create(void)
{
	char path[256], body[CH_BODY_MAX];
	json_t *res;
	int status;

	snprintf(
	    path, sizeof(path), "/api/v1/workspaces/%s/browser-spaces", ch.ws);
	if (!ch.retry_create.set) {
		int i = rnd((int)ch.n_inst);

		ch.retry_create.set = true;
		ch.retry_create.managed = (size_t)i >= ch.n_fake;
		snprintf(ch.retry_create.rid, sizeof(ch.retry_create.rid),
		    "c%d", ch.next_rid++);
		snprintf(body, sizeof(body),
		    "{\"browser_instance_id\":\"%s\",\"owner_type\":"
		    "\"operator\",\"owner_id\":\"%s\",\"granted_capabilities\":"
		    "%s,\"request_id\":\"%s\"}",
		    ch.inst[i], ch.owner,
		    ch.retry_create.managed
		        ? "[\"navigate\",\"snapshot\",\"screenshot\"]"
		        : "[\"noop\",\"sleep\",\"fail\",\"leak\",\"big\","
		          "\"screenshot\",\"crash\",\"snapshot\"]",
		    ch.retry_create.rid);
		ch.retry_create.body = strdup(body);
	}
	status = api("POST", path, ch.retry_create.body, &res);
	if (status == 201 || status == 200) {
		space_add(jstr(json_object_get(res, "data"), "space_id"),
		    ch.retry_create.managed);
	} else if (status >= 0 && status < 500 && status != 409 &&
	           status != 429) {
		violation("create: %d %s", status, err_code(res));
	}
	/* No answer: the same request again next time. */
	if (status >= 0 && status < 500) {
		ch.retry_create.set = false;
		free(ch.retry_create.body);
	}
	json_decref(res);
}

/* POST .../cancel or .../close on an open Space: a 4xx other than a
 * 409 is a violation; a close accepted ends the Space's work. */
static void
op_post(const char *verb)
{
	char path[256];
	int si = pick_open_space(), status;
	json_t *res;

	if (si < 0)
		return;
	space_path(path, sizeof(path), si, verb);
	status = api("POST", path, "{}", &res);
	if (strcmp(verb, "/close") == 0 && (status == 200 || status == 202))
		ch.space[si].done = ch.space[si].close_acked = true;
	else if (status >= 400 && status < 500 && status != 409)
		violation("%s on %s: %d %s", verb, ch.space[si].id, status,
		    err_code(res));
	json_decref(res);
}

/* Reads whose answers are scanned for canaries. */
static void
op_read(void)
{
	char path[256];
	int si = ch.n_space > 0 ? rnd(ch.n_space) : -1;

	switch (rnd(4)) {
	case 0:
		snprintf(path, sizeof(path),
		    "/api/v1/workspaces/%s/browser-instances", ch.ws);
		break;
	case 1:
		if (si < 0)
			return;
		space_path(path, sizeof(path), si, "");
		break;
	case 2:
		if (si < 0)
			return;
		space_path(path, sizeof(path), si, "/tasks?limit=100");
		break;
	default:
		if (si < 0)
			return;
		space_path(path, sizeof(path), si, "/events?after_sequence=0");
		break;
	}
	api("GET", path, NULL, NULL);
}

/* ---- kills */

/* True when a kill of the store (which 0) or the api (1) now keeps
 * within the supervisor's restart policy. */
static bool
policy_allows(int which)
{
	int64_t now = cm_mono_ms();
	int recent = 0;

	for (int i = 0; i < CH_POLICY_KILLS; i++)
		recent += ch.policy[which][i] > 0 &&
		          now - ch.policy[which][i] < CH_POLICY_WINDOW_MS;
	return recent < CH_POLICY_KILLS;
}

static void
policy_note(int which)
{
	int oldest = 0;

	for (int i = 1; i < CH_POLICY_KILLS; i++)
		if (ch.policy[which][i] < ch.policy[which][oldest])
			oldest = i;
	ch.policy[which][oldest] = cm_mono_ms();
}

/* SIGKILL to one random process of kind; false when there is none. */
static bool
kill_one(enum ch_kill kind)
{
	pid_t pids[256];
	int n = 0;

	switch (kind) {
	case K_ACTOR:
		/* A third of them at one Space, until it is done: its
		 * actor's restart policy gets to give up (actor_crash_loop). */
		if (ch.victim < 0 || ch.victim >= ch.n_space ||
		    ch.space[ch.victim].done)
			ch.victim = pick_open_space();
		if (ch.victim >= 0 && rnd(3) == 0)
			n = tk_actor_pids(
			    ch.p.pid, ch.space[ch.victim].id, pids, 256);
		if (n == 0)
			n = tk_actor_pids(ch.p.pid, NULL, pids, 256);
		break;
	case K_STORE:
	case K_API:
		if (!policy_allows(kind == K_API))
			return false;
		pids[0] = tk_child_with(ch.p.pid,
		    kind == K_STORE ? "spaced-store" : "spaced-api", NULL, 0);
		n = pids[0] > 0;
		if (n)
			policy_note(kind == K_API);
		break;
	case K_CHROMIUM:
		n = descendants(ch.p.pid, "chrom", pids, 256);
		break;
	case K_TREE:
		tree_restart(true);
		memset(ch.policy, 0, sizeof(ch.policy));
		return true;
	default:
		return false;
	}
	if (n <= 0)
		return false;
	if (n > 256)
		n = 256;
	return kill(pids[rnd(n)], SIGKILL) == 0;
}

static void
kill_random(void)
{
	int roll = rnd(100);
	enum ch_kill kind = roll < 45   ? K_ACTOR
	                    : roll < 62 ? K_STORE
	                    : roll < 77 ? K_API
	                    : roll < 87 ? K_TREE
	                                : K_CHROMIUM;

	if (kind == K_CHROMIUM && !ch.browsers)
		kind = K_ACTOR;
	/* Nothing of that kind to kill now: an actor, else the api. */
	if (!kill_one(kind) && !kill_one(kind = K_ACTOR) &&
	    !kill_one(kind = K_API))
		kill_one(kind = K_TREE);
	ch.killed[kind]++;
}

/* ---- setup */

static void
usage(void)
{
	fprintf(stderr, "usage: chaos [--seed N] [--kills N] [--spaces N] "
	                "[--browsers] [--keep]\n");
	exit(2);
}

static long
arg_num(const char *arg, const char *name, long lo, long hi)
{
	size_t n = strlen(name);
	char *end;
	long v;

	if (strncmp(arg, name, n) != 0 || arg[n] != '=')
		return -1;
	errno = 0;
	v = strtol(arg + n + 1, &end, 10);
	if (errno != 0 || *end != '\0' || end == arg + n + 1 || v < lo ||
	    v > hi)
		usage();
	return v;
}

static void
parse_args(int argc, char **argv)
{
	long v;

	ch.seed = (unsigned)cm_mono_ns() ^ (unsigned)getpid();
	ch.kills = 20;
	ch.n_spaces = 6;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--browsers") == 0)
			ch.browsers = true;
		else if (strcmp(argv[i], "--keep") == 0)
			ch.keep = true;
		else if ((v = arg_num(argv[i], "--seed", 0, UINT32_MAX)) >= 0)
			ch.seed = (unsigned)v;
		else if ((v = arg_num(argv[i], "--kills", 0, 100000)) >= 0)
			ch.kills = (int)v;
		else if ((v = arg_num(argv[i], "--spaces", 1,
		              TK_MAX_INSTANCES - 2)) >= 0)
			ch.n_spaces = (int)v;
		else
			usage();
	}
	ch.rng = ch.seed;
	ch.victim = -1;
}

/* The workspace, its operator (whose token drives the load), fake
 * instances with a secret in their config, and a cdp instance whose
 * endpoint is a secret: provisioned through the store. */
static void
provision(void)
{
	char cfg[512];
	nng_socket s;
	struct pr_req q;
	struct pr_rep r;
	size_t n = (size_t)ch.n_spaces + 2;

	snprintf(ch.note, sizeof(ch.note), "chaos-config-canary-%u", ch.seed);
	snprintf(ch.endpoint, sizeof(ch.endpoint),
	    "http://127.0.0.1:9/chaos-endpoint-canary-%u", ch.seed);
	snprintf(ch.msg, sizeof(ch.msg), "chaos-message-canary-%u", ch.seed);
	snprintf(cfg, sizeof(cfg),
	    "{\"log_path\": \"%s\", \"reset_ms\": 50, \"note\": \"%s\"}",
	    ch.fake_log, ch.note);
	if (cm_rpc_open(&s, ch.p.store_url) != 0 ||
	    tk_provision_with(s, &ch.w, n, cfg) != 0 ||
	    tk_token_issue(s, ch.w.operator_id, ch.op) != 0) {
		fprintf(stderr, "chaos: provisioning failed\n");
		exit(2);
	}
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_INSTANCE_REGISTER;
	q.name = "chaos-cdp";
	q.driver = "cdp";
	q.endpoint = ch.endpoint;
	q.bundle_id = ch.w.bundle_id;
	if (tk_call(s, &q, &r) == CM_OK && r.n_instances == 1) {
		char id[CM_ID_MAX + 1];

		snprintf(
		    id, sizeof(id), "%s", r.instances[0].browser_instance_id);
		pr_rep_free(&r);
		memset(&q, 0, sizeof(q));
		q.op = PR_OP_BINDING_CREATE;
		q.workspace_id = ch.w.workspace_id;
		q.browser_instance_id = id;
		tk_call(s, &q, &r);
	}
	pr_rep_free(&r);
	nng_close(s);
	snprintf(ch.ws, sizeof(ch.ws), "%s", ch.w.workspace_id);
	snprintf(ch.owner, sizeof(ch.owner), "%s", ch.w.operator_id);
	ch.n_inst = ch.n_fake = ch.w.n_instances;
	for (size_t i = 0; i < ch.n_inst; i++)
		snprintf(ch.inst[i], CM_ID_MAX + 1, "%s", ch.w.instance_id[i]);
}

/* The managed instances spaced registered at its first start, added to
 * those the load uses; true once all CH_MANAGED are listed. */
static bool
managed_listed(void *arg)
{
	char path[256];
	json_t *res, *in;
	size_t i;

	(void)arg;
	ch.n_inst = ch.n_fake;
	snprintf(path, sizeof(path), "/api/v1/workspaces/%s/browser-instances",
	    ch.ws);
	if (api("GET", path, NULL, &res) == 200)
		json_array_foreach(json_object_get(res, "data"), i, in)
		{
			if (strcmp(jstr(in, "driver"), "managed") == 0 &&
			    ch.n_inst < TK_MAX_INSTANCES)
				snprintf(ch.inst[ch.n_inst++], CM_ID_MAX + 1,
				    "%s", jstr(in, "browser_instance_id"));
		}
	json_decref(res);
	return ch.n_inst == ch.n_fake + CH_MANAGED;
}

static void
setup(void)
{
	static char managed[40];
	int port = tk_free_port();

	/* Orphans of a killed tree come here, where they can be seen. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	tk_tmpdir(ch.dir, sizeof(ch.dir), "chaos");
	snprintf(ch.out, sizeof(ch.out), "%s/spaced.out", ch.dir);
	snprintf(ch.fake_log, sizeof(ch.fake_log), "%s/fake.log", ch.dir);
	snprintf(
	    ch.listen, sizeof(ch.listen), "--http-listen=127.0.0.1:%d", port);
	ch.flags[0] = ch.listen;
	if (ch.browsers) {
		snprintf(managed, sizeof(managed), "--managed-browsers=%d",
		    CH_MANAGED);
		ch.flags[1] = managed;
		ch.flags[2] = "--warm-standby=true";
	}
	ch.task = calloc(CH_TASKS_MAX, sizeof(*ch.task));
	if (ch.task == NULL)
		exit(2);
	spaced_start();
	provision();
	if (!tk_admin_token(&ch.p, ch.admin, sizeof(ch.admin), CH_READY_MS)) {
		fprintf(stderr, "chaos: no admin token\n");
		exit(2);
	}
	canary_add(ch.admin);
	canary_add(ch.op);
	canary_add(ch.note);
	canary_add(ch.endpoint);
	canary_add(ch.msg);
	/* What the fake runtime's leak returns (driver_fake.c). */
	canary_add("fake-cookie-canary-7f3a");
	canary_add("fake-bearer-canary-91c2");
	canary_add("fake-token-canary-55e1");
	canary_add("fake-pass-canary-0b9d");
	if (ch.browsers &&
	    ((ch.pages = tk_pages_start(&ch.pages_port)) == NULL ||
	        !tk_wait_until(managed_listed, NULL, CH_READY_MS))) {
		fprintf(stderr, "chaos: no page server or managed instances\n");
		exit(2);
	}
}

/* ---- the run */

static void
load(void)
{
	int64_t next_kill = cm_mono_ms() + CH_GAP_MIN_MS;
	int done = 0;

	for (long step = 0; done < ch.kills; step++) {
		int roll = rnd(100), open = 0;

		spaced_exited();
		if (cm_mono_ms() >= next_kill) {
			kill_random();
			done++;
			next_kill =
			    cm_mono_ms() + CH_GAP_MIN_MS + rnd(CH_GAP_SPAN_MS);
		}
		for (int i = 0; i < ch.n_space; i++)
			open += !ch.space[i].done;
		if (open < ch.n_spaces && roll < 30)
			op_create();
		else if (roll < 80)
			op_submit();
		else if (roll < 84)
			op_post("/cancel");
		else if (roll < 86)
			op_post("/close");
		else if (roll < 90 && open < ch.n_spaces)
			op_create();
		else
			op_read();
		if (step % CH_SAMPLE_STEPS == 0)
			sample_active("during the load");
	}
}

static void
settle_and_check(int *starts)
{
	spaced_exited();
	if (!tk_http_ready(&ch.p, CH_HEALTHY_MS))
		violation("the api does not answer %d ms after the load",
		    CH_HEALTHY_MS);
	if (!tk_wait_until(settled, NULL, CH_SETTLE_MS)) {
		for (int i = 0; i < ch.n_task; i++)
			if (!ch.task[i].terminal)
				violation("acknowledged task %s (%s on %s) is "
				          "%s after %d ms",
				    ch.task[i].task_id, ch.task[i].rid,
				    ch.space[ch.task[i].space].id,
				    ch.task[i].status, CH_SETTLE_MS);
		for (int si = 0; si < ch.n_space; si++)
			if (ch.space[si].close_acked &&
			    strcmp(ch.space[si].status, "closed") != 0)
				violation("Space %s: close accepted, %s after "
				          "%d ms",
				    ch.space[si].id, ch.space[si].status,
				    CH_SETTLE_MS);
	}
	sample_active("after the load");
	check_events();
	check_closed_spaces();
	*starts = check_fake_log();

	kill(ch.p.pid, SIGTERM);
	if (tk_proc_wait(&ch.p, CH_EXIT_MS, NULL) != 0) {
		violation("spaced still runs %d ms after SIGTERM", CH_EXIT_MS);
		kill(-ch.p.pid, SIGKILL);
	}
	tk_proc_stop(&ch.p, SIGKILL);
	check_tree_gone("spaced stopped");
	check_profiles();
	check_database();
	check_log();
}

/* The summary; on a violation the command that runs the same sequence
 * again.  Returns the exit status. */
static int
report(int starts)
{
	int kills = 0;

	for (int k = 0; k < K__COUNT; k++)
		kills += ch.killed[k];
	printf("chaos: kills survived %d (", kills);
	for (int k = 0; k < K__COUNT; k++)
		printf("%s%s %d", k ? ", " : "", ch_kill_name[k], ch.killed[k]);
	printf("); spaced restarted %d times\n", ch.restarts);
	printf("chaos: tasks acknowledged %d, runtime starts %d, Spaces %d\n",
	    ch.n_task, starts, ch.n_space);
	printf("chaos: violations %d\n", ch.violations);
	if (ch.violations > 0) {
		printf("chaos: reproduce with: %s --seed=%u --kills=%d "
		       "--spaces=%d%s (data kept in %s)\n",
		    ch.argv0, ch.seed, ch.kills, ch.n_spaces,
		    ch.browsers ? " --browsers" : "", ch.dir);
		return 1;
	}
	tk_pages_stop(ch.pages);
	if (!ch.keep)
		tk_rmrf(ch.dir);
	return 0;
}

int
main(int argc, char **argv)
{
	int starts = 0;
	int64_t t0, t1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN); /* the page server's peer may go */
	ch.argv0 = argv[0];
	parse_args(argc, argv);
	printf("chaos: seed %u, %d kills, %d Spaces%s\n", ch.seed, ch.kills,
	    ch.n_spaces, ch.browsers ? ", real browsers" : "");
	setup();
	printf("chaos: %s\n", ch.dir);
	t0 = cm_mono_ms();
	load();
	t1 = cm_mono_ms();
	settle_and_check(&starts);
	printf("chaos: load %lld ms, settle and checks %lld ms\n",
	    (long long)(t1 - t0), (long long)(cm_mono_ms() - t1));
	return report(starts);
}
