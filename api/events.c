/*
 * events.c: live events, on the loop thread.  It reads the store's feed
 * through its pollable fd with non-blocking receives, so the loop waits
 * in epoll_wait alone, and hands each event to the external PUB socket,
 * to the Server-Sent Events streams of its Space and to the parked
 * requests (wait.h).
 *
 * Nothing here calls another process or takes a lock: a replay, or a gap
 * the feed left (pub/sub may drop), is read from the store by a worker a
 * page at a time (API_JOB_PAGE), and the next page is asked for only once
 * the client has taken the last one, so a replay of any length is never
 * held in memory and never mistaken for a slow client.  Live events pile
 * up on a stream only to CM_SSE_PENDING_MAX: past it, a client that took
 * nothing for CM_SSE_STALL_MS is cut off, and one that is reading gets
 * the rest from the store once it has caught up.
 */
#include "events.h"

#include <errno.h>
#include <nng/protocol/pubsub0/pub.h>
#include <nng/protocol/pubsub0/sub.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "clock.h"
#include "listen.h"
#include "log.h"
#include "metrics.h"
#include "prom_text.h"
#include "recv.h"
#include "rpc.h"
#include "status.h"
#include "view.h"
#include "wait.h"

/* The event stream of one connection. */
struct api_stream {
	struct api_conn *conn;
	char ws[CM_ID_MAX + 1];
	char space[CM_ID_MAX + 1];
	int64_t last_sent; /* sequence of the last event sent */
	bool paging;       /* a worker is reading a page */
	bool behind;       /* events may be missing: read them from the store */
	bool ending;       /* space_closed sent */
	int64_t last_out_ms; /* when bytes were last sent (heartbeats) */
	struct api_stream *prev, *next;
};

static struct {
	nng_socket sub, pub;
	struct cm_listener pub_l;
	nng_aio *sub_rx; /* the loop's receives */
	struct api_stream *list;
	atomic_int subscribers; /* pipes of the external PUB, from nng */
} ev;

static const char sse_head[] = "HTTP/1.1 200 OK\r\n"
                               "Content-Type: text/event-stream\r\n"
                               "Cache-Control: no-store\r\n"
                               "Connection: close\r\n\r\n";

/* One event as SSE, onto t: an id line (its sequence, which a client
 * resumes from as Last-Event-ID), an event line (its kind) and a data
 * line (its JSON).  Returns 0, or -1 out of memory. */
static int
add_event(struct api_prom *t, const struct pr_event *e)
{
	json_t *dto = api_dto_event(e);
	char *json = dto ? json_dumps(dto, JSON_COMPACT) : NULL;

	json_decref(dto);
	if (json == NULL)
		return -1;
	api_prom_printf(t, "id: %lld\nevent: %s\ndata: %s\n\n",
	    (long long)e->sequence, e->kind, json);
	free(json);
	return t->oom ? -1 : 0;
}

void
api_events_page(struct api_job *j, nng_socket store)
{
	struct api_prom t = {0};
	struct pr_req q;
	struct pr_rep r;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_EVENT_LIST;
	q.workspace_id = j->ws;
	q.space_id = j->space;
	q.after_sequence = j->after;
	q.limit = CM_EVENTS_LIMIT_MAX;
	j->outcome = API_OUT_FAILED;
	j->n_events = 0;
	j->ending = false;
	j->last = j->after;
	if (cm_rpc_call(store, &q, &r, CM_EVENTS_RPC_TIMEOUT_MS) != CM_OK ||
	    r.err != CM_OK) {
		pr_rep_free(&r);
		return;
	}
	/* The client is about to see these; the view may be older. */
	if (r.n_events > 0)
		api_view_drop(j->ws, j->space);
	for (size_t i = 0; i < r.n_events && !j->ending; i++) {
		if (add_event(&t, &r.events[i]) != 0) {
			free(api_prom_finish(&t));
			pr_rep_free(&r);
			return;
		}
		j->last = r.events[i].sequence;
		j->ending =
		    cm_event_kind_is(r.events[i].kind, CM_EV_SPACE_CLOSED);
	}
	j->n_events = r.n_events;
	pr_rep_free(&r);
	free(j->out);
	j->out_len = t.len;
	j->out = api_prom_finish(&t); /* NULL for an empty page */
	j->outcome = API_OUT_PAGE;
}

static void
unlink_stream(struct api_stream *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		ev.list = s->next;
	if (s->next)
		s->next->prev = s->prev;
}

static void
link_stream(struct api_conn *c, struct api_stream *s)
{
	s->conn = c;
	s->prev = NULL;
	s->next = ev.list;
	if (ev.list)
		ev.list->prev = s;
	ev.list = s;
	api_conn_set_stream(c, s);
}

void
api_events_forget(struct api_conn *c)
{
	struct api_stream *s = api_conn_stream(c);

	if (s == NULL)
		return;
	unlink_stream(s);
	api_conn_set_stream(c, NULL);
	free(s);
}

static void
send_text(struct api_stream *s, const char *p, size_t n)
{
	api_conn_send(s->conn, p, n);
	s->last_out_ms = cm_mono_ms();
}

/* Asks a worker for the next page, once the client has taken the last
 * one (otherwise api_events_drained asks). */
static void
request_page(struct api_stream *s)
{
	struct api_job *j;

	s->behind = true;
	if (s->paging || s->ending || api_conn_pending(s->conn) > 0)
		return;
	if ((j = calloc(1, sizeof(*j))) == NULL) {
		api_conn_cut(s->conn);
		return;
	}
	j->kind = API_JOB_PAGE;
	j->conn = s->conn;
	snprintf(j->ws, sizeof(j->ws), "%s", s->ws);
	snprintf(j->space, sizeof(j->space), "%s", s->space);
	j->after = s->last_sent;
	s->paging = true;
	s->behind = false;
	api_http_queue(j);
}

void
api_events_stream(struct api_conn *c, const struct api_job *j)
{
	struct api_stream *s = calloc(1, sizeof(*s));

	if (s == NULL) {
		api_conn_cut(c);
		return;
	}
	snprintf(s->ws, sizeof(s->ws), "%s", j->ws);
	snprintf(s->space, sizeof(s->space), "%s", j->space);
	s->last_sent = j->after;
	link_stream(c, s);
	send_text(s, sse_head, sizeof(sse_head) - 1);
	request_page(s); /* the replay; then whatever the feed missed */
}

void
api_events_page_done(struct api_conn *c, struct api_job *j)
{
	struct api_stream *s = api_conn_stream(c);

	if (s == NULL) {
		api_job_free(j);
		return;
	}
	s->paging = false;
	if (j->outcome != API_OUT_PAGE) {
		/* The client resumes from its Last-Event-ID. */
		cm_warnx("api: cannot read the events of space %s", s->space);
		api_job_free(j);
		api_conn_end(c);
		return;
	}
	if (j->out_len > 0)
		send_text(s, j->out, j->out_len);
	s->last_sent = j->last;
	if (j->ending) {
		s->ending = true;
		api_conn_end(c);
	} else if (j->n_events == CM_EVENTS_LIMIT_MAX || s->behind) {
		request_page(s); /* sent once this page is taken */
	}
	api_job_free(j);
}

void
api_events_drained(struct api_conn *c)
{
	struct api_stream *s = api_conn_stream(c);

	if (s != NULL && s->behind)
		request_page(s);
}

/* A live event for a stream of its Space. */
static void
stream_event(struct api_stream *s, const struct pr_event *e, int64_t now)
{
	struct api_prom t = {0};
	char *text;
	size_t len;

	if (s->ending || e->sequence <= s->last_sent)
		return;
	if (s->paging || s->behind || e->sequence != s->last_sent + 1) {
		request_page(s);
		return;
	}
	if (api_conn_pending(s->conn) > CM_SSE_PENDING_MAX) {
		if (api_conn_stalled_ms(s->conn, now) >= CM_SSE_STALL_MS) {
			cm_info("api: cutting off a slow event stream of "
			        "space %s",
			    s->space);
			api_metrics_stream_cut();
			api_conn_cut(s->conn);
		} else {
			request_page(s); /* reading, just behind */
		}
		return;
	}
	if (add_event(&t, e) != 0) {
		free(api_prom_finish(&t));
		api_conn_cut(s->conn);
		return;
	}
	len = t.len;
	text = api_prom_finish(&t);
	send_text(s, text, len);
	free(text);
	s->last_sent = e->sequence;
	if (cm_event_kind_is(e->kind, CM_EV_SPACE_CLOSED)) {
		s->ending = true;
		api_conn_end(s->conn);
	}
}

/* The external message: the topic "space/<workspace>/<space> ", then the
 * event's JSON, so a subscriber filters by workspace or Space by prefix. */
static void
publish(const struct pr_event *e)
{
	char topic[CM_TOPIC_MAX], *json;
	json_t *dto;
	nng_msg *m;
	int n;

	/* No subscriber: nothing to encode (one that comes later replays
	 * over HTTP). */
	if (atomic_load(&ev.subscribers) <= 0)
		return;
	dto = api_dto_event(e);
	json = dto ? json_dumps(dto, JSON_COMPACT) : NULL;
	json_decref(dto);
	n = snprintf(
	    topic, sizeof(topic), "space/%s/%s ", e->workspace_id, e->space_id);
	if (json != NULL && n > 0 && (size_t)n < sizeof(topic) &&
	    nng_msg_alloc(&m, 0) == 0) {
		if (nng_msg_append(m, topic, (size_t)n) != 0 ||
		    nng_msg_append(m, json, strlen(json)) != 0 ||
		    nng_sendmsg(ev.pub, m, NNG_FLAG_NONBLOCK) != 0)
			nng_msg_free(m); /* subscribers replay over HTTP */
	}
	free(json);
}

/* e, and t the task it ended as its commit left it (or NULL): for the
 * metrics, the parked requests, and the streams of its Space. */
static void
on_event(const struct pr_event *e, const struct pr_task *t)
{
	struct api_stream *s, *next;
	int64_t now = cm_mono_ms();

	api_metrics_event(e);
	api_wait_event(e, t);
	for (s = ev.list; s != NULL; s = next) {
		next = s->next; /* s may be cut and freed */
		if (strcmp(s->space, e->space_id) == 0)
			stream_event(s, e, now);
	}
}

void
api_events_feed(void)
{
	nng_msg *m;

	while (cm_recv_try(ev.sub, ev.sub_rx, &m) == 0) {
		struct pr_arena arena = {0};
		struct pr_event e;
		struct pr_task t;
		char err[128];
		int64_t beat;

		/* The view hears each message before any client does. */
		if (pr_beat_decode(nng_msg_body(m), nng_msg_len(m), &beat) ==
		    0) {
			api_view_beat(beat);
		} else if (pr_pub_decode(nng_msg_body(m), nng_msg_len(m), &e,
		               &t, &arena, err, sizeof(err)) != 0) {
			api_view_lose();
			cm_warnx("api: bad event from the store: %s", err);
		} else if (e.sequence > 0) { /* 0: a wake-up notice */
			api_view_event(e.workspace_id, e.space_id, e.serial);
			publish(&e);
			on_event(&e, t.task_id != NULL ? &t : NULL);
		} else {
			api_view_event(NULL, NULL, e.serial);
		}
		pr_arena_free(&arena);
		nng_msg_free(m);
	}
}

void
api_events_tick(int64_t now)
{
	static const char beat[] = ": heartbeat\n\n";
	struct api_stream *s, *next;

	cm_listener_tend(&ev.pub_l, now);
	for (s = ev.list; s != NULL; s = next) {
		next = s->next;
		if (api_conn_pending(s->conn) > CM_SSE_PENDING_MAX &&
		    api_conn_stalled_ms(s->conn, now) >= CM_SSE_STALL_MS) {
			/* Whether or not events still come: a client with more
			 * than its share waiting that takes nothing is cut. */
			cm_info(
			    "api: cutting off a slow event stream of space %s",
			    s->space);
			api_metrics_stream_cut();
			api_conn_cut(s->conn);
		} else if (!s->paging && !s->ending &&
		           api_conn_pending(s->conn) == 0 &&
		           now - s->last_out_ms >= CM_SSE_HEARTBEAT_MS) {
			send_text(s, beat, sizeof(beat) - 1);
		}
	}
}

/* A subscriber of the external PUB came or went. */
static void
subscriber_pipe(nng_pipe p, nng_pipe_ev what, void *arg)
{
	(void)p;
	(void)arg;
	atomic_fetch_add(
	    &ev.subscribers, what == NNG_PIPE_EV_ADD_POST ? 1 : -1);
}

/* The feed's pipe came or went: what it sent meanwhile is unknown. */
static void
feed_pipe(nng_pipe p, nng_pipe_ev what, void *arg)
{
	(void)p;
	(void)what;
	(void)arg;
	api_view_lose();
}

int
api_events_open(const struct cm_config *cfg)
{
	char url[CM_PATH_MAX];
	int rv = NNG_EINVAL, fd = -1;

	if (cm_ipc_url(url, sizeof(url), cfg->run_dir, "store-events.ipc") !=
	        0 ||
	    (rv = nng_aio_alloc(&ev.sub_rx, NULL, NULL)) != 0 ||
	    (rv = cm_sub_open(&ev.sub, "ev/", CM_PUB_BUF, CM_MSG_MAX)) != 0 ||
	    (rv = nng_socket_set(ev.sub, NNG_OPT_SUB_SUBSCRIBE, PR_BEAT_TOPIC,
	         strlen(PR_BEAT_TOPIC))) != 0 ||
	    (rv = nng_pipe_notify(
	         ev.sub, NNG_PIPE_EV_ADD_POST, feed_pipe, NULL)) != 0 ||
	    (rv = nng_pipe_notify(
	         ev.sub, NNG_PIPE_EV_REM_POST, feed_pipe, NULL)) != 0 ||
	    (rv = nng_dial(ev.sub, url, NULL, NNG_FLAG_NONBLOCK)) != 0 ||
	    (rv = nng_socket_get_int(ev.sub, NNG_OPT_RECVFD, &fd)) != 0) {
		cm_warnx("api: cannot follow the store's events: %s",
		    nng_strerror(rv));
		return -1;
	}
	/* Subscribers may be slow: a deep queue, and drops are recoverable. */
	if ((rv = nng_pub0_open(&ev.pub)) != 0 ||
	    (rv = nng_pipe_notify(
	         ev.pub, NNG_PIPE_EV_ADD_POST, subscriber_pipe, NULL)) != 0 ||
	    (rv = nng_pipe_notify(
	         ev.pub, NNG_PIPE_EV_REM_POST, subscriber_pipe, NULL)) != 0 ||
	    (rv = nng_socket_set_int(ev.pub, NNG_OPT_SENDBUF, CM_PUB_BUF)) !=
	        0 ||
	    (rv = cm_listener_start(
	         &ev.pub_l, ev.pub, cfg->events_url, 0660)) != 0) {
		cm_warnx("api: cannot publish on %s: %s", cfg->events_url,
		    nng_strerror(rv));
		return -1;
	}
	return fd;
}

void
api_events_close(void)
{
	/* The loop has closed every connection, and with it every stream. */
	nng_close(ev.sub);
	nng_close(ev.pub);
	if (ev.sub_rx != NULL)
		nng_aio_free(ev.sub_rx);
}
