/*
 * space_fixture.h: what the supervisor and actor integration tests share.
 *
 * One real spaced per test on its own /tmp directory, its log (stdout and
 * stderr of the supervisor and of every child) appended to <dir>/spaced.out,
 * fake instances whose runtime log is <dir>/fake.log, and helpers that go
 * through the store's REQ socket exactly as the api does: create, submit,
 * read, cancel and close, the event log, the fake runtime's log lines, and
 * the processes under spaced as /proc shows them.
 *
 * Header-only: every helper is static inline, so a test file uses what it
 * needs without unused-function warnings.  A test keeps its struct sf_env
 * in static storage (Criterion forks each test), so the fini that runs
 * after a failed assertion never sees a dead stack frame.  Waits are
 * bounded polls; no helper sleeps for a fixed time.
 */
#ifndef SPACED_SPACE_FIXTURE_H
#define SPACED_SPACE_FIXTURE_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testkit.h"

#define SF_WAIT_MS 15000 /* the bound of every wait that should be quick */

struct sf_env {
	char dir[128];
	char fake_log[192]; /* the fake runtime's JSON lines */
	char out[192];      /* what spaced and its children wrote */
	char listen[64];    /* --http-listen: a port of this test's own */
	const char *flags[2];
	struct tk_proc p;
	nng_socket s;
	struct tk_world w;
};

/* Starts (or restarts) spaced on e's directory, output and address. */
static inline void
sf_spaced_start(struct sf_env *e)
{
	struct pr_req q;
	struct pr_rep r;

	cr_assert_eq(tk_spaced_start_logged(&e->p, e->dir, e->flags, e->out), 0,
	    "spaced did not start (see %s)", e->out);
	cr_assert_eq(cm_rpc_open(&e->s, e->p.store_url), 0);
	/* Asked once, so that the socket's dialer has connected: one still
	 * dialing at nng_close is freed by nng after the test has exited,
	 * which LeakSanitizer reports. */
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_WORKSPACE_LIST;
	cr_assert_eq(tk_call(e->s, &q, &r), CM_OK, "the store never answered");
	pr_rep_free(&r);
}

/* A fresh directory, output file and api address; nothing started. */
static inline void
sf_env_init(struct sf_env *e, const char *tag)
{
	memset(e, 0, sizeof(*e));
	tk_tmpdir(e->dir, sizeof(e->dir), tag);
	snprintf(e->fake_log, sizeof(e->fake_log), "%s/fake.log", e->dir);
	snprintf(e->out, sizeof(e->out), "%s/spaced.out", e->dir);
	snprintf(e->listen, sizeof(e->listen), "--http-listen=127.0.0.1:%d",
	    tk_free_port());
	e->flags[0] = e->listen;
	e->flags[1] = NULL;
}

/* Once spaced runs: opens e->s and provisions n fake instances that log
 * to fake_log. */
static inline void
sf_provision(struct sf_env *e, size_t n_instances)
{
	char cfg[300];

	snprintf(cfg, sizeof(cfg), "{\"log_path\": \"%s\", \"reset_ms\": 100}",
	    e->fake_log);
	cr_assert_eq(tk_provision_with(e->s, &e->w, n_instances, cfg), 0);
}

/* Starts spaced and provisions n fake instances that log to fake_log. */
static inline void
sf_start(struct sf_env *e, const char *tag, size_t n_instances)
{
	sf_env_init(e, tag);
	sf_spaced_start(e);
	sf_provision(e, n_instances);
}

/* Stops spaced with SIGTERM and removes the directory. */
static inline void
sf_stop(struct sf_env *e)
{
	nng_close(e->s);
	tk_proc_stop(&e->p, SIGTERM);
	tk_rmrf(e->dir);
}

static inline struct pr_req
sf_req(const struct sf_env *e, enum pr_op op, const char *space)
{
	struct pr_req q;

	memset(&q, 0, sizeof(q));
	q.op = op;
	q.workspace_id = e->w.workspace_id;
	q.space_id = space;
	return q;
}

/* space.create on an instance; the new id goes to out (may be NULL). */
static inline enum cm_err
sf_create(struct sf_env *e, const char *instance_id, char *out)
{
	struct pr_req q = sf_req(e, PR_OP_SPACE_CREATE, NULL);
	struct pr_rep r;
	enum cm_err err;

	q.browser_instance_id = instance_id;
	q.owner_type = "operator";
	q.owner_id = e->w.operator_id;
	err = tk_call(e->s, &q, &r);
	if (err == CM_OK && out != NULL)
		snprintf(out, CM_ID_MAX + 1, "%s", r.spaces[0].space_id);
	pr_rep_free(&r);
	return err;
}

static inline void
sf_create_ok(struct sf_env *e, size_t instance, char *out)
{
	cr_assert_eq(sf_create(e, e->w.instance_id[instance], out), CM_OK,
	    "space.create on instance %zu", instance);
}

/* task.submit; timeout_ms 0 is the default.  The task id goes to
 * task_out (may be NULL) whenever the reply carries a task. */
static inline enum cm_err
sf_submit(struct sf_env *e, const char *space, const char *rid, const char *cap,
    const char *args, int64_t timeout_ms, char *task_out)
{
	struct pr_req q = sf_req(e, PR_OP_TASK_SUBMIT, space);
	struct pr_rep r;
	enum cm_err err;

	q.request_id = rid;
	q.capability = cap;
	q.args = args;
	q.timeout_ms = timeout_ms;
	err = tk_call(e->s, &q, &r);
	if (task_out != NULL && r.n_tasks == 1)
		snprintf(task_out, CM_ID_MAX + 1, "%s", r.tasks[0].task_id);
	pr_rep_free(&r);
	return err;
}

/* A task as the store reports it; result is malloc'd (or NULL). */
struct sf_task {
	char status[33];
	char error_code[CM_ERROR_CODE_MAX + 1];
	char error_message[CM_ERROR_MESSAGE_MAX + 1];
	bool cancel_requested;
	char *result;
};

static inline void
sf_task_get(
    struct sf_env *e, const char *space, const char *task, struct sf_task *out)
{
	struct pr_req q = sf_req(e, PR_OP_TASK_GET, space);
	struct pr_rep r;
	const struct pr_task *t;

	memset(out, 0, sizeof(*out));
	q.task_id = task;
	cr_assert_eq(tk_call(e->s, &q, &r), CM_OK, "task.get %s", task);
	cr_assert_eq(r.n_tasks, 1);
	t = &r.tasks[0];
	snprintf(out->status, sizeof(out->status), "%s", t->status);
	if (t->error_code != NULL)
		snprintf(out->error_code, sizeof(out->error_code), "%s",
		    t->error_code);
	if (t->error_message != NULL)
		snprintf(out->error_message, sizeof(out->error_message), "%s",
		    t->error_message);
	out->cancel_requested = t->cancel_requested;
	out->result = t->result != NULL ? strdup(t->result) : NULL;
	pr_rep_free(&r);
}

static inline void
sf_task_free(struct sf_task *t)
{
	free(t->result);
	t->result = NULL;
}

static inline bool
sf_terminal(const char *status)
{
	return strcmp(status, "completed") == 0 ||
	       strcmp(status, "failed") == 0 ||
	       strcmp(status, "cancelled") == 0;
}

struct sf_task_wait {
	struct sf_env *e;
	const char *space, *task, *want;
	char seen[33];
};

static inline bool
sf_task_settled(void *arg)
{
	struct sf_task_wait *w = arg;
	struct sf_task t;

	sf_task_get(w->e, w->space, w->task, &t);
	snprintf(w->seen, sizeof(w->seen), "%s", t.status);
	sf_task_free(&t);
	/* A terminal status other than the one wanted never changes. */
	return strcmp(w->seen, w->want) == 0 || sf_terminal(w->seen);
}

/* Waits until the task has status want; stops early (false) when it
 * ends in another terminal status. */
static inline bool
sf_wait_task(struct sf_env *e, const char *space, const char *task,
    const char *want, int timeout_ms)
{
	struct sf_task_wait w = {e, space, task, want, ""};

	tk_wait_until(sf_task_settled, &w, timeout_ms);
	if (strcmp(w.seen, want) != 0)
		cr_log_error("task %s is %s, not %s", task, w.seen, want);
	return strcmp(w.seen, want) == 0;
}

/* space.get: status and last_error_code (either may be NULL). */
static inline void
sf_space_get(
    struct sf_env *e, const char *space, char *status, char *error_code)
{
	struct pr_req q = sf_req(e, PR_OP_SPACE_GET, space);
	struct pr_rep r;

	cr_assert_eq(tk_call(e->s, &q, &r), CM_OK, "space.get %s", space);
	if (status != NULL)
		snprintf(status, 33, "%s", r.spaces[0].status);
	if (error_code != NULL)
		snprintf(error_code, CM_ERROR_CODE_MAX + 1, "%s",
		    r.spaces[0].last_error_code ? r.spaces[0].last_error_code
		                                : "");
	pr_rep_free(&r);
}

struct sf_space_wait {
	struct sf_env *e;
	const char *space, *want;
};

static inline bool
sf_space_is(void *arg)
{
	struct sf_space_wait *w = arg;
	char status[33];

	sf_space_get(w->e, w->space, status, NULL);
	return strcmp(status, w->want) == 0;
}

static inline bool
sf_wait_space(
    struct sf_env *e, const char *space, const char *want, int timeout_ms)
{
	struct sf_space_wait w = {e, space, want};

	return tk_wait_until(sf_space_is, &w, timeout_ms);
}

static inline enum cm_err
sf_close(struct sf_env *e, const char *space)
{
	struct pr_req q = sf_req(e, PR_OP_SPACE_CLOSE, space);
	struct pr_rep r;
	enum cm_err err = tk_call(e->s, &q, &r);

	pr_rep_free(&r);
	return err;
}

/* task.cancel; *changed (may be NULL) says whether it changed anything,
 * status (may be NULL) gets the task's status in the reply. */
static inline enum cm_err
sf_cancel(struct sf_env *e, const char *space, const char *task, bool *changed,
    char *status)
{
	struct pr_req q = sf_req(e, PR_OP_TASK_CANCEL, space);
	struct pr_rep r;
	enum cm_err err;

	q.task_id = task;
	err = tk_call(e->s, &q, &r);
	if (changed != NULL)
		*changed = r.created;
	if (status != NULL)
		snprintf(
		    status, 33, "%s", r.n_tasks == 1 ? r.tasks[0].status : "");
	pr_rep_free(&r);
	return err;
}

/* The Space's whole event log (at most 100 events); free with
 * pr_rep_free.  Checks that sequences run 1, 2, 3... without a gap. */
static inline void
sf_events(struct sf_env *e, const char *space, struct pr_rep *r)
{
	struct pr_req q = sf_req(e, PR_OP_EVENT_LIST, space);

	q.limit = 100;
	cr_assert_eq(tk_call(e->s, &q, r), CM_OK, "event.list %s", space);
	for (size_t i = 0; i < r->n_events; i++)
		cr_assert_eq(r->events[i].sequence, (int64_t)i + 1,
		    "event sequences have a gap");
}

/* The sequence of the n-th (from 0) event of kind for task (NULL: any
 * task), or 0 when there is none; *count gets how many there are. */
static inline int64_t
sf_event_seq(struct sf_env *e, const char *space, const char *task,
    const char *kind, int *count)
{
	struct pr_rep r;
	int64_t seq = 0;
	int n = 0;

	sf_events(e, space, &r);
	for (size_t i = 0; i < r.n_events; i++) {
		const struct pr_event *ev = &r.events[i];

		if (strcmp(ev->kind, kind) != 0)
			continue;
		if (task != NULL &&
		    (ev->task_id == NULL || strcmp(ev->task_id, task) != 0))
			continue;
		if (n++ == 0)
			seq = ev->sequence;
	}
	pr_rep_free(&r);
	if (count != NULL)
		*count = n;
	return seq;
}

/* Reads /proc/<pid>/status: false when there is no such process. */
static inline bool
sf_proc_status(long pid, long *ppid, bool *zombie)
{
	char path[64], *status, *p;

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	if ((status = tk_read_file(path, NULL)) == NULL)
		return false;
	*ppid = -1;
	*zombie = false;
	if ((p = strstr(status, "\nState:")) != NULL)
		*zombie = p[strspn(p + 7, " \t") + 7] == 'Z';
	if ((p = strstr(status, "\nPPid:")) != NULL)
		*ppid = strtol(p + 6, NULL, 10);
	free(status);
	return true;
}

/*
 * Pids of the live (not zombie) children of parent whose argv[0] ends in
 * /name, and, when space is not NULL, whose arguments hold
 * --space=<space>.  Read from /proc.  Returns how many there are.
 */
static inline int
sf_children(
    pid_t parent, const char *name, const char *space, pid_t *pids, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int found = 0;

	cr_assert_not_null(d);
	while ((de = readdir(d)) != NULL) {
		char path[300], want[128], *cmd, *p, *end;
		long pid = strtol(de->d_name, &end, 10), ppid;
		size_t len = 0;
		bool zombie, match;

		if (*end != '\0' || pid <= 0 ||
		    !sf_proc_status(pid, &ppid, &zombie) || ppid != parent ||
		    zombie)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
		if ((cmd = tk_read_file(path, &len)) == NULL)
			continue;
		p = strrchr(cmd, '/');
		match = strcmp(p ? p + 1 : cmd, name) == 0;
		for (size_t i = 0; i + 1 < len; i++)
			if (cmd[i] == '\0')
				cmd[i] = ' ';
		snprintf(want, sizeof(want), " --space=%s", space ? space : "");
		if (space != NULL && strstr(cmd, want) == NULL)
			match = false;
		free(cmd);
		if (!match)
			continue;
		if (found < max)
			pids[found] = (pid_t)pid;
		found++;
	}
	closedir(d);
	return found;
}

/* The pid of the one actor of space, 0 when there is none. */
static inline pid_t
sf_actor_pid(struct sf_env *e, const char *space)
{
	pid_t pids[4];
	int n = sf_children(e->p.pid, "spaced-actor", space, pids, 4);

	cr_assert(n <= 1, "%d actors for space %s", n, space);
	return n == 1 ? pids[0] : 0;
}

struct sf_actor_wait {
	struct sf_env *e;
	const char *space;
	int want;
	pid_t not ; /* with want 1: a pid other than this one */
};

static inline bool
sf_actors_are(void *arg)
{
	struct sf_actor_wait *w = arg;
	pid_t pids[8];
	int n = sf_children(w->e->p.pid, "spaced-actor", w->space, pids, 8);

	return n == w->want && (n != 1 || pids[0] != w->not );
}

/* Waits until exactly want actors run for space (NULL: for any Space). */
static inline bool
sf_wait_actors(struct sf_env *e, const char *space, int want, int timeout_ms)
{
	struct sf_actor_wait w = {e, space, want, 0};

	return tk_wait_until(sf_actors_are, &w, timeout_ms);
}

/* Waits for the one actor of space and returns its pid (0: none came).
 * With not > 0, waits for an actor whose pid is not that one. */
static inline pid_t
sf_wait_actor(struct sf_env *e, const char *space, pid_t not, int timeout_ms)
{
	struct sf_actor_wait w = {e, space, 1, not };

	if (!tk_wait_until(sf_actors_are, &w, timeout_ms))
		return 0;
	return sf_actor_pid(e, space);
}

/* True when pid names no process, or only a zombie. */
static inline bool
sf_pid_gone(pid_t pid)
{
	long ppid;
	bool zombie;

	if (kill(pid, 0) != 0 && errno == ESRCH)
		return true;
	return !sf_proc_status(pid, &ppid, &zombie) || zombie;
}

/* The fake runtime's log, one parsed object per line (a JSON array). */
static inline json_t *
sf_fake_lines(const struct sf_env *e)
{
	json_t *all = json_array();
	char *text = tk_read_file(e->fake_log, NULL), *line, *nl;

	for (line = text; line != NULL && *line != '\0'; line = nl + 1) {
		json_error_t jerr;
		json_t *o;

		if ((nl = strchr(line, '\n')) == NULL)
			break; /* a line being written: not whole yet */
		*nl = '\0';
		o = json_loads(line, 0, &jerr);
		cr_assert_not_null(o, "fake log line is not JSON: %s", line);
		json_array_append_new(all, o);
	}
	free(text);
	return all;
}

static inline const char *
sf_str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* The n-th (from 0) line with this ev whose key equals value, or NULL. */
static inline json_t *
sf_fake_find(
    json_t *lines, const char *ev, const char *key, const char *value, int n)
{
	size_t i;
	json_t *o;

	json_array_foreach(lines, i, o)
	{
		if (strcmp(sf_str(o, "ev"), ev) == 0 &&
		    strcmp(sf_str(o, key), value) == 0 && n-- == 0)
			return o;
	}
	return NULL;
}

/* How many lines have this ev and key equal to value. */
static inline int
sf_fake_count(
    const struct sf_env *e, const char *ev, const char *key, const char *value)
{
	json_t *lines = sf_fake_lines(e);
	int n = 0;

	while (sf_fake_find(lines, ev, key, value, n) != NULL)
		n++;
	json_decref(lines);
	return n;
}

struct sf_fake_wait {
	const struct sf_env *e;
	const char *ev, *key, *value;
};

static inline bool
sf_fake_seen(void *arg)
{
	struct sf_fake_wait *w = arg;

	return sf_fake_count(w->e, w->ev, w->key, w->value) > 0;
}

/* Waits until the fake log has a line with this ev and key == value. */
static inline bool
sf_wait_fake(const struct sf_env *e, const char *ev, const char *key,
    const char *value, int timeout_ms)
{
	struct sf_fake_wait w = {e, ev, key, value};

	return tk_wait_until(sf_fake_seen, &w, timeout_ms);
}

static inline int64_t
sf_t_ns(const json_t *line)
{
	return (int64_t)json_integer_value(json_object_get(line, "t_ns"));
}

#endif
