/*
 * wait.c: parked ?wait= requests (wait.h has their life).
 *
 * Why on the loop: a wait lasts up to CM_WAIT_MAX_S, and a worker held
 * for it would be one of CM_API_WORKERS lost to everyone else for that
 * long.  Parked, a wait costs its connection and one struct, and a worker
 * is asked only when there is something to read: the feed told of the
 * end without the task's row, the Space closed, or CM_WAIT_RECHECK_MS
 * passed with nothing heard.
 *
 * What a wait waits for may also have happened before it was parked: the
 * task finished while the job that answered its submit was on its way
 * back to the loop.  The ids of the last CM_WAIT_RECENT finished tasks
 * and closed Spaces are kept for that, so such a wait is looked at at
 * once, not at its first recheck.
 *
 * An MCP call that asked for progress (a progressToken) is answered on
 * an event stream: its head and a notifications/progress "queued" as it
 * parks, another, "started", at the task's started event (or at once,
 * when that was among the last CM_WAIT_RECENT), and its answer as the
 * stream's last event, then the end of the connection.  A call of a
 * session that set a log level (logging/setLevel) is answered on a
 * stream as well, and the Space's events committed while it waits go on
 * it as notifications/message, those of that level or more severe: a
 * request the network policy refused is a warning, a Space's error an
 * error, a dialog, a tab and a download info, the rest debug.  Events
 * committed before the call was parked are in the event log, not on the
 * stream.
 */
#include "wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "clock.h"
#include "mcp.h"
#include "mcp_rpc.h"
#include "mcp_session.h"
#include "status.h"

/* One parked request: what its answer needs, and when to look again. */
struct api_wait {
	struct api_conn *conn;
	char ws[CM_ID_MAX + 1];
	char space[CM_ID_MAX + 1];
	char task[CM_ID_MAX + 1];         /* "" when until_closed */
	char rpc[CM_MCP_ID_MAX + 3];      /* an MCP call's id, "" for none */
	char progress[CM_MCP_ID_MAX + 3]; /* its progressToken, "" for none */
	int log;                          /* its session's log level, 0 none */
	bool streaming;                   /* its stream's head is sent */
	bool told_started;                /* its "started" is sent */
	bool until_closed;                /* the Space's close, not a task */
	const char *route, *method;       /* metrics labels, static */
	bool close;                       /* the connection closes after */
	int64_t t0_ns;                    /* when the request was complete */
	int64_t deadline_ms, next_check_ms;
	bool checking; /* a worker is looking */
	struct api_wait *prev, *next;
};

static struct {
	struct api_wait *list;
	char recent[CM_WAIT_RECENT][CM_ID_MAX + 1];
	size_t recent_next;
	char started[CM_WAIT_RECENT][CM_ID_MAX + 1]; /* tasks, likewise */
	size_t started_next;
} wt;

static bool
terminal(const char *status)
{
	return cm_task_status_terminal(cm_task_status_parse(status));
}

/* --- the worker's side ------------------------------------------------ */

void
api_wait_park(struct api_ctx *c, const char *task_id, long wait_s)
{
	c->later = API_LATER_WAIT;
	c->later_closed = task_id == NULL;
	snprintf(c->later_task, sizeof(c->later_task), "%s",
	    task_id != NULL ? task_id : "");
	c->later_deadline_ms = cm_mono_ms() + wait_s * 1000;
}

/*
 * The context of j, a parked request, as its route left it.  The loop's
 * answer from a row gets no socket (one never opened: a store call would
 * fail at once) and no configuration (cfg NULL): it needs neither.
 */
static void
wait_ctx(struct api_job *j, struct api_ctx *c, struct api_req *req,
    struct api_res *res, const struct cm_config *cfg, nng_socket store)
{
	memset(req, 0, sizeof(*req));
	req->method = j->http_method;
	memset(res, 0, sizeof(*res));
	memset(c, 0, sizeof(*c));
	c->cfg = cfg;
	c->store = store;
	c->req = req;
	c->res = res;
	c->route = j->route;
	c->workspace_id = j->ws;
	c->space_id = j->space;
	snprintf(c->later_task, sizeof(c->later_task), "%s", j->task);
	snprintf(c->later_rpc, sizeof(c->later_rpc), "%s", j->rpc);
	snprintf(
	    c->later_progress, sizeof(c->later_progress), "%s", j->progress);
	c->later_log = j->log;
	c->later_closed = j->until_closed;
	c->later_deadline_ms = j->deadline_ms;
}

/* 200 with t and true when it has finished; otherwise false, no answer.
 * An MCP call's answer is its tool result (mcp.h), which may need the
 * store: on the loop (no cfg) such a one is left to a worker. */
static bool
answer_finished(struct api_ctx *c, const struct pr_task *t)
{
	c->later = API_LATER_NONE;
	if (!terminal(t->status))
		return false;
	if (c->later_rpc[0] != '\0')
		return api_mcp_finished(c, t, c->cfg != NULL);
	api_ok(c, 200, api_dto_task(t));
	return true;
}

/* Reads the task (or the Space) and answers, or parks c again. */
static void
look(struct api_ctx *c)
{
	bool space = c->later_closed;
	struct pr_req q;
	struct pr_rep r;
	bool done;

	memset(&q, 0, sizeof(q));
	q.op = space ? PR_OP_SPACE_GET : PR_OP_TASK_GET;
	q.workspace_id = c->workspace_id;
	q.space_id = c->space_id;
	if (!space)
		q.task_id = c->later_task;
	c->later = API_LATER_NONE;
	if (!api_call(c, &q, &r)) {
		if (c->later_rpc[0] != '\0')
			api_mcp_unlooked(c);
		return;
	}
	if (r.err != CM_OK) {
		api_fail_rep(c, &r);
		if (c->later_rpc[0] != '\0')
			api_mcp_unlooked(c);
		pr_rep_free(&r);
		return;
	}
	done = space ? cm_space_status_is(r.spaces[0].status, CM_SPACE_CLOSED)
	             : terminal(r.tasks[0].status);
	if (!space && done)
		answer_finished(c, &r.tasks[0]);
	else if (c->later_rpc[0] != '\0' &&
	         cm_mono_ms() >= c->later_deadline_ms)
		api_mcp_unfinished(c, &r.tasks[0]);
	else if (done || cm_mono_ms() >= c->later_deadline_ms)
		api_ok(c, done ? 200 : 202,
		    space ? api_dto_space(
		                &r.spaces[0], r.n_tasks ? &r.tasks[0] : NULL)
		          : api_dto_task(&r.tasks[0]));
	else
		c->later = API_LATER_WAIT;
	pr_rep_free(&r);
}

void
api_wait_run(struct api_job *j, const struct cm_config *cfg, nng_socket store)
{
	struct api_req req;
	struct api_res res;
	struct api_ctx c;

	wait_ctx(j, &c, &req, &res, cfg, store);
	look(&c);
	api_work_conclude(j, &c);
	free(res.body);
}

/* --- the loop's side -------------------------------------------------- */

/* The job that answers w, or NULL out of memory. */
static struct api_job *
wait_job(const struct api_wait *w)
{
	struct api_job *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return NULL;
	j->kind = API_JOB_WAIT;
	j->conn = w->conn;
	j->t0_ns = w->t0_ns;
	j->route = w->route;
	j->http_method = w->method;
	j->close = w->close;
	snprintf(j->ws, sizeof(j->ws), "%s", w->ws);
	snprintf(j->space, sizeof(j->space), "%s", w->space);
	snprintf(j->task, sizeof(j->task), "%s", w->task);
	snprintf(j->rpc, sizeof(j->rpc), "%s", w->rpc);
	snprintf(j->progress, sizeof(j->progress), "%s", w->progress);
	j->log = w->log;
	j->until_closed = w->until_closed;
	j->deadline_ms = w->deadline_ms;
	return j;
}

/* When w is looked at next: a recheck, or its deadline if that is sooner. */
static void
schedule(struct api_wait *w, int64_t now)
{
	w->next_check_ms = now + CM_WAIT_RECHECK_MS < w->deadline_ms
	                       ? now + CM_WAIT_RECHECK_MS
	                       : w->deadline_ms;
}

/* Hands w to a worker to look at; out of memory, it tries again later. */
static void
check(struct api_wait *w, int64_t now)
{
	struct api_job *j;

	if (w->checking)
		return;
	if ((j = wait_job(w)) == NULL) {
		w->next_check_ms = now + CM_WAIT_RECHECK_MS;
		return;
	}
	w->checking = true;
	api_http_queue(j);
}

/*
 * w's task ended, and its event carried the row as that commit left it
 * (store: st_event_settle): the answer is made here, as a worker would
 * make it from the row read back, without that read.  Not while a worker
 * looks already: its answer comes.  w may be freed on return.
 */
static void
finished(struct api_wait *w, const struct pr_task *t, int64_t now)
{
	struct api_req req;
	struct api_res res;
	struct api_ctx c;
	struct api_job *j;
	bool done;

	if (w->checking)
		return;
	if (t == NULL || (j = wait_job(w)) == NULL) {
		check(w, now);
		return;
	}
	wait_ctx(j, &c, &req, &res, NULL, (nng_socket)NNG_SOCKET_INITIALIZER);
	if ((done = answer_finished(&c, t)))
		api_work_conclude(j, &c);
	free(res.body);
	if (!done) {
		api_job_free(j);
		check(w, now);
		return;
	}
	api_http_done(j); /* drops w */
}

static void
unlink_wait(struct api_wait *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		wt.list = w->next;
	if (w->next)
		w->next->prev = w->prev;
}

void
api_wait_drop(struct api_conn *c)
{
	struct api_wait *w = api_conn_wait(c);

	if (w == NULL)
		return;
	unlink_wait(w);
	api_conn_set_wait(c, NULL);
	free(w);
}

char *
api_wait_sse_message(const char *body, size_t *len)
{
	char *out = NULL;
	int n;

	*len = 0;
	if (body == NULL ||
	    (n = asprintf(&out, "event: message\ndata: %s\n\n", body)) < 0)
		return NULL;
	*len = (size_t)n;
	return out;
}

/* Tells w's client of its call's progress: step n, what it is. */
static void
progress(struct api_wait *w, int n, const char *what)
{
	char ev[CM_MCP_ID_MAX + 256];
	int len = snprintf(ev, sizeof(ev),
	    "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/progress\",\"params\":{\"progressToken\":%s,"
	    "\"progress\":%d,\"message\":\"%s\"}}\n\n",
	    w->progress, n, what);

	if (len > 0 && (size_t)len < sizeof(ev))
		api_conn_send(w->conn, ev, (size_t)len);
}

/* w's task started: its client is told, once. */
static void
tell_started(struct api_wait *w)
{
	if (w->progress[0] == '\0' || w->told_started)
		return;
	w->told_started = true;
	progress(w, 2, "started: the task runs on the Space's browser");
}

bool
api_wait_streamed(const struct api_job *j)
{
	return j->progress[0] != '\0' || j->log != API_MCP_LOG_NONE;
}

/* The level of an event of kind k, as its notifications/message. */
static int
event_level(enum cm_event_kind k)
{
	switch (k) {
	case CM_EV_NETWORK_BLOCKED:
		return API_MCP_LOG_WARNING;
	case CM_EV_SPACE_ERROR:
		return API_MCP_LOG_ERROR;
	case CM_EV_DIALOG:
	case CM_EV_TAB_OPENED:
	case CM_EV_DOWNLOAD:
		return API_MCP_LOG_INFO;
	default:
		return API_MCP_LOG_DEBUG;
	}
}

/* An event as a notifications/message on a stream, kept for a call
 * parked just after it. */
struct logged {
	char space[CM_ID_MAX + 1], task[CM_ID_MAX + 1]; /* task: "" none */
	int level;
	char *sse; /* the stream's message, malloc'd */
	size_t len;
};

static struct {
	struct logged ring[CM_WAIT_RECENT];
	size_t next; /* the oldest, overwritten next */
} lg;

/* e as a notifications/message into the ring; its entry, or NULL out
 * of memory. */
static const struct logged *
log_event(const struct pr_event *e)
{
	struct logged *l = &lg.ring[lg.next];
	int level = event_level(cm_event_kind_parse(e->kind));
	json_t *m = json_pack("{s:s, s:s, s:{s:s, s:s, s:o*}}", "jsonrpc",
	    "2.0", "method", "notifications/message", "params", "level",
	    api_mcp_log_name(level), "logger", "spaced.events", "data",
	    api_dto_event(e));
	char *text = m != NULL ? json_dumps(m, JSON_COMPACT) : NULL;

	json_decref(m);
	free(l->sse);
	memset(l, 0, sizeof(*l));
	l->sse = api_wait_sse_message(text, &l->len);
	free(text);
	if (l->sse == NULL)
		return NULL; /* the event is in the log alone */
	snprintf(l->space, sizeof(l->space), "%s", e->space_id);
	snprintf(l->task, sizeof(l->task), "%s",
	    e->task_id != NULL ? e->task_id : "");
	l->level = level;
	lg.next = (lg.next + 1) % CM_WAIT_RECENT;
	return l;
}

/* l, an event of w's Space, to w's client when its level is wanted. */
static void
tell_event(struct api_wait *w, const struct logged *l)
{
	if (w->streaming && w->log != API_MCP_LOG_NONE && l->level >= w->log)
		api_conn_send(w->conn, l->sse, l->len);
}

/* w, a stream that logs, is told the events of its Space from its
 * task's first (queued) on, those committed before it was parked. */
static void
tell_logged(struct api_wait *w)
{
	bool from = false;

	for (size_t k = 0; k < CM_WAIT_RECENT; k++) {
		const struct logged *l =
		    &lg.ring[(lg.next + k) % CM_WAIT_RECENT];

		if (l->sse == NULL || strcmp(l->space, w->space) != 0)
			continue;
		from = from || strcmp(l->task, w->task) == 0;
		if (from)
			tell_event(w, l);
	}
}

/* A new wait on a stream: the stream's head, "queued" and "started" if
 * that was told already, when it tells of its progress. */
static void
stream_begin(struct api_wait *w)
{
	static const char head[] = "HTTP/1.1 200 OK\r\n"
	                           "Content-Type: text/event-stream\r\n"
	                           "Cache-Control: no-store\r\n"
	                           "Connection: close\r\n\r\n";

	w->streaming = true;
	api_conn_send(w->conn, head, sizeof(head) - 1);
	tell_logged(w);
	if (w->progress[0] == '\0')
		return;
	progress(w, 1, "queued: the task was taken, behind any before it");
	for (size_t i = 0; i < CM_WAIT_RECENT; i++)
		if (strcmp(wt.started[i], w->task) == 0)
			tell_started(w);
}

void
api_wait_hold(struct api_conn *c, const struct api_job *j)
{
	struct api_wait *w = api_conn_wait(c);
	int64_t now = cm_mono_ms();

	if (w == NULL) {
		if ((w = calloc(1, sizeof(*w))) == NULL) {
			api_conn_cut(c);
			return;
		}
		w->conn = c;
		w->next = wt.list;
		if (wt.list)
			wt.list->prev = w;
		wt.list = w;
		api_conn_set_wait(c, w);
	}
	w->checking = false;
	snprintf(w->ws, sizeof(w->ws), "%s", j->ws);
	snprintf(w->space, sizeof(w->space), "%s", j->space);
	snprintf(w->task, sizeof(w->task), "%s", j->task);
	snprintf(w->rpc, sizeof(w->rpc), "%s", j->rpc);
	w->until_closed = j->until_closed;
	w->route = j->route;
	w->method = j->http_method;
	w->close = j->close;
	w->deadline_ms = j->deadline_ms;
	w->t0_ns = j->t0_ns;
	if (!w->streaming && api_wait_streamed(j) && j->task[0] != '\0') {
		snprintf(w->progress, sizeof(w->progress), "%s", j->progress);
		w->log = j->log;
		stream_begin(w);
	}
	schedule(w, now);
	for (size_t i = 0; i < CM_WAIT_RECENT; i++)
		if (strcmp(wt.recent[i],
		        w->until_closed ? w->space : w->task) == 0) {
			check(w, now); /* it happened before it was parked */
			break;
		}
}

void
api_wait_event(const struct pr_event *e, const struct pr_task *t)
{
	bool done = cm_event_kind_ends_task(cm_event_kind_parse(e->kind)) &&
	            e->task_id != NULL;
	bool closed = cm_event_kind_is(e->kind, CM_EV_SPACE_CLOSED);
	int64_t now = cm_mono_ms();
	const struct logged *l;
	struct api_wait *w, *next;

	/* Kept only while some session logs: the calls of the others never
	 * stream an event. */
	if (api_mcp_sessions_logging() && (l = log_event(e)) != NULL)
		for (w = wt.list; w != NULL; w = w->next)
			if (strcmp(w->space, e->space_id) == 0)
				tell_event(w, l);
	if (cm_event_kind_is(e->kind, CM_EV_STARTED) && e->task_id != NULL) {
		snprintf(wt.started[wt.started_next], sizeof(wt.started[0]),
		    "%s", e->task_id);
		wt.started_next = (wt.started_next + 1) % CM_WAIT_RECENT;
		for (w = wt.list; w != NULL; w = w->next)
			if (strcmp(w->task, e->task_id) == 0)
				tell_started(w);
		return;
	}
	if (!done && !closed)
		return;
	/* A finished task's id, or a closed Space's. */
	snprintf(wt.recent[wt.recent_next], sizeof(wt.recent[0]), "%s",
	    done ? e->task_id : e->space_id);
	wt.recent_next = (wt.recent_next + 1) % CM_WAIT_RECENT;
	for (w = wt.list; w != NULL; w = next) {
		next = w->next; /* w may be answered and freed */
		if (w->until_closed) {
			if (closed && strcmp(w->space, e->space_id) == 0)
				check(w, now);
		} else if (done && strcmp(w->task, e->task_id) == 0) {
			finished(w, t, now);
		}
	}
}

void
api_wait_tick(int64_t now)
{
	for (struct api_wait *w = wt.list; w != NULL; w = w->next)
		if (!w->checking && now >= w->next_check_ms) {
			schedule(w, now);
			check(w, now); /* queues only: w stays */
		}
}
