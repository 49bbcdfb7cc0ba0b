/*
 * events.c: the events thread.  It owns the SUB socket to the store (read
 * through its pollable fd with non-blocking receives, never an aio
 * timeout: DESIGN 6), the external PUB socket and every live SSE stream.
 *
 * An SSE stream holds a bounded buffer of bytes not yet written and at
 * most one write in flight.  A client that lets its buffer fill is cut
 * off, so a slow reader never stalls the thread or other readers.  When
 * the feed skips sequences (pub/sub may drop), the stream reads the gap
 * from the store before going on, so no client ever sees a hole.
 */
#include "events.h"

#include <errno.h>
#include <fcntl.h>
#include <nng/protocol/pubsub0/pub.h>
#include <nng/protocol/pubsub0/sub.h>
#include <nng/transport/ipc/ipc.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "metrics.h"
#include "recv.h"
#include "rpc.h"

#define SSE_BUF_MAX (256 * 1024) /* pending bytes before a cut-off */
#define SSE_HEARTBEAT_MS 15000
#define SSE_CLIENTS_MAX 4096

struct sse {
	nng_http_conn *conn;
	nng_aio *aio;
	char ws[CM_ID_MAX + 1];
	char space[CM_ID_MAX + 1];
	int64_t last_sent; /* sequence of the last event buffered */
	char *buf;         /* bytes waiting for the next write */
	size_t len;
	char *out; /* bytes being written; NULL: no write in flight */
	size_t inflight;
	bool dead;       /* a write failed or the client was cut off */
	bool ending;     /* space_closed buffered: close once written */
	bool gap;        /* the feed skipped: read from the store */
	int64_t last_ms; /* when bytes were last buffered */
	struct sse *next;
};

static struct {
	const struct cm_config *cfg;
	nng_socket sub, pub, store;
	nng_aio *sub_rx; /* the events thread's receives */
	int sub_fd;
	int wake[2];
	pthread_t thread;
	pthread_mutex_t lock;
	struct sse *clients;
	size_t n_clients;
	bool stop;
	pthread_cond_t finished; /* a task reached a terminal status */
	uint64_t n_finished;
} ev = {.lock = PTHREAD_MUTEX_INITIALIZER,
    .finished = PTHREAD_COND_INITIALIZER,
    .wake = {-1, -1}};

static void
wake(void)
{
	char one = 1;

	if (write(ev.wake[1], &one, 1) < 0 && errno != EAGAIN)
		cm_warn("api: events wake");
}

/* Appends to a stream's buffer; cuts the client off past the bound. */
static void
sse_put(struct sse *s, const char *data, size_t n)
{
	char *grown;

	if (s->dead)
		return;
	if (s->len + s->inflight + n > SSE_BUF_MAX) {
		cm_info("api: cutting off a slow event stream of space %s",
		    s->space);
		s->dead = true;
		return;
	}
	if ((grown = realloc(s->buf, s->len + n)) == NULL) {
		s->dead = true;
		return;
	}
	memcpy(grown + s->len, data, n);
	s->buf = grown;
	s->len += n;
	s->last_ms = cm_mono_ms();
}

/* One event as SSE: id, event and data lines (SPEC 5). */
static void
sse_put_event(struct sse *s, const struct pr_event *e)
{
	json_t *dto = api_dto_event(e);
	char *json = dto ? json_dumps(dto, JSON_COMPACT) : NULL;
	char head[96];
	int n;

	json_decref(dto);
	if (json == NULL) {
		s->dead = true;
		return;
	}
	n = snprintf(head, sizeof(head),
	    "id: %lld\nevent: %s\ndata: ", (long long)e->sequence, e->kind);
	sse_put(s, head, (size_t)n);
	sse_put(s, json, strlen(json));
	sse_put(s, "\n\n", 2);
	free(json);
	s->last_sent = e->sequence;
	if (strcmp(e->kind, "space_closed") == 0)
		s->ending = true;
}

/*
 * Reads events after s->last_sent from the store into the buffer, a page
 * at a time.  Used for the replay and for gaps.  Returns 0, or -1 when
 * the store did not answer.
 */
static int
sse_fill(struct sse *s, nng_socket store)
{
	for (;;) {
		struct pr_req q;
		struct pr_rep r;
		size_t n;

		memset(&q, 0, sizeof(q));
		q.op = PR_OP_EVENT_LIST;
		q.workspace_id = s->ws;
		q.space_id = s->space;
		q.after_sequence = s->last_sent;
		q.limit = CM_EVENTS_LIMIT_MAX;
		if (cm_rpc_call(store, &q, &r, 5000) != CM_OK ||
		    r.err != CM_OK) {
			pr_rep_free(&r);
			return -1;
		}
		for (size_t i = 0; i < r.n_events && !s->dead && !s->ending;
		     i++)
			sse_put_event(s, &r.events[i]);
		n = r.n_events;
		pr_rep_free(&r);
		if (n < CM_EVENTS_LIMIT_MAX || s->dead || s->ending)
			return 0;
	}
}

/* On an nng thread: a write finished. */
static void
sse_written(void *arg)
{
	struct sse *s = arg;
	int rv = nng_aio_result(s->aio);

	pthread_mutex_lock(&ev.lock);
	if (rv != 0)
		s->dead = true;
	free(s->out);
	s->out = NULL;
	s->inflight = 0;
	pthread_mutex_unlock(&ev.lock);
	wake();
}

/*
 * Starts a write of everything buffered.  The bytes move to s->out, which
 * nothing touches until the write completes, so more can be buffered
 * meanwhile.  Call locked.
 */
static void
sse_flush(struct sse *s)
{
	nng_iov iov;

	if (s->dead || s->out != NULL || s->len == 0)
		return;
	s->out = s->buf;
	s->inflight = s->len;
	s->buf = NULL;
	s->len = 0;
	iov.iov_buf = s->out;
	iov.iov_len = s->inflight;
	nng_aio_set_iov(s->aio, 1, &iov);
	nng_http_conn_write_all(s->conn, s->aio);
}

static void
sse_free(struct sse *s)
{
	/* Aborts a write in flight and waits for its callback. */
	nng_aio_stop(s->aio);
	nng_http_conn_close(s->conn);
	nng_aio_free(s->aio);
	free(s->out);
	free(s->buf);
	free(s);
}

/* The external message: topic, one space, the event JSON (SPEC 5). */
static void
publish(const struct pr_event *e)
{
	json_t *dto = api_dto_event(e);
	char *json = dto ? json_dumps(dto, JSON_COMPACT) : NULL;
	char topic[CM_TOPIC_MAX];
	nng_msg *m;
	int n;

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

static void
on_event(const struct pr_event *e)
{
	publish(e);
	api_metrics_event(e);
	pthread_mutex_lock(&ev.lock);
	if (strcmp(e->kind, "completed") == 0 ||
	    strcmp(e->kind, "failed") == 0 ||
	    strcmp(e->kind, "cancelled") == 0) {
		ev.n_finished++;
		pthread_cond_broadcast(&ev.finished);
	}
	for (struct sse *s = ev.clients; s != NULL; s = s->next) {
		if (s->dead || s->ending ||
		    strcmp(s->space, e->space_id) != 0 ||
		    e->sequence <= s->last_sent)
			continue;
		if (e->sequence == s->last_sent + 1 && !s->gap)
			sse_put_event(s, e);
		else
			s->gap = true;
	}
	pthread_mutex_unlock(&ev.lock);
}

static void
drain_feed(void)
{
	nng_msg *m;

	while (cm_recv_try(ev.sub, ev.sub_rx, &m) == 0) {
		struct pr_arena arena = {0};
		struct pr_event e;
		char err[128];

		if (pr_pub_decode(nng_msg_body(m), nng_msg_len(m), &e, &arena,
		        err, sizeof(err)) != 0)
			cm_warnx("api: bad event from the store: %s", err);
		else if (e.sequence >
		         0) /* 0: a wake-up notice, not a log event */
			on_event(&e);
		pr_arena_free(&arena);
		nng_msg_free(m);
	}
}

/*
 * The one periodic pass: fill gaps, heartbeats, start writes, and unlink
 * the streams that are finished.  Gaps are read from the store unlocked,
 * on a copy of the stream's position.
 */
static void
pump(void)
{
	struct sse **pp, *done = NULL;
	int64_t now = cm_mono_ms();

	pthread_mutex_lock(&ev.lock);
	for (struct sse *s = ev.clients; s != NULL; s = s->next) {
		if (s->gap && !s->dead && !s->ending) {
			s->gap = false;
			if (sse_fill(s, ev.store) != 0)
				s->gap = true;
		}
		if (!s->dead && s->len == 0 &&
		    now - s->last_ms >= SSE_HEARTBEAT_MS)
			sse_put(s, ": heartbeat\n\n", 13);
		sse_flush(s);
	}
	for (pp = &ev.clients; *pp != NULL;) {
		struct sse *s = *pp;

		/* A dead stream goes even with a write stuck in flight:
		 * sse_free aborts that write before closing the connection. */
		if (s->dead || (s->out == NULL && s->ending && s->len == 0)) {
			*pp = s->next;
			s->next = done;
			done = s;
			ev.n_clients--;
		} else {
			pp = &s->next;
		}
	}
	pthread_mutex_unlock(&ev.lock);
	while (done != NULL) {
		struct sse *s = done;
		done = s->next;
		sse_free(s);
	}
}

static void *
events_main(void *arg)
{
	(void)arg;
	while (!ev.stop) {
		struct pollfd pfd[2] = {
		    {ev.sub_fd, POLLIN, 0}, {ev.wake[0], POLLIN, 0}};
		char buf[64];

		if (poll(pfd, 2, 1000) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents & POLLIN)
			while (read(ev.wake[0], buf, sizeof(buf)) > 0)
				;
		if (pfd[0].revents & POLLIN)
			drain_feed();
		pump();
	}
	return NULL;
}

int
api_events_start(const struct cm_config *cfg)
{
	char url[CM_PATH_MAX];
	nng_listener l;
	int rv = NNG_EINVAL;

	ev.cfg = cfg;
	if (pipe2(ev.wake, O_CLOEXEC | O_NONBLOCK) != 0)
		return -1;
	if (cm_ipc_url(url, sizeof(url), cfg->run_dir, "store.ipc") != 0 ||
	    cm_rpc_open(&ev.store, url) != 0)
		return -1;
	if (cm_ipc_url(url, sizeof(url), cfg->run_dir, "store-events.ipc") !=
	        0 ||
	    (rv = nng_aio_alloc(&ev.sub_rx, NULL, NULL)) != 0 ||
	    (rv = nng_sub0_open(&ev.sub)) != 0 ||
	    (rv = nng_socket_set(ev.sub, NNG_OPT_SUB_SUBSCRIBE, "ev/", 3)) !=
	        0 ||
	    (rv = nng_socket_set_int(ev.sub, NNG_OPT_RECVBUF, CM_PUB_BUF)) !=
	        0 ||
	    (rv = nng_socket_set_size(ev.sub, NNG_OPT_RECVMAXSZ, CM_MSG_MAX)) !=
	        0 ||
	    (rv = nng_socket_set_ms(ev.sub, NNG_OPT_RECONNMINT, 10)) != 0 ||
	    (rv = nng_socket_set_ms(ev.sub, NNG_OPT_RECONNMAXT, 200)) != 0 ||
	    (rv = nng_dial(ev.sub, url, NULL, NNG_FLAG_NONBLOCK)) != 0 ||
	    (rv = nng_socket_get_int(ev.sub, NNG_OPT_RECVFD, &ev.sub_fd)) !=
	        0) {
		cm_warnx("api: cannot follow the store's events: %s",
		    nng_strerror(rv));
		return -1;
	}
	/* Subscribers may be slow: a deep queue, and drops are recoverable. */
	if ((rv = nng_pub0_open(&ev.pub)) != 0 ||
	    (rv = nng_socket_set_int(ev.pub, NNG_OPT_SENDBUF, CM_PUB_BUF)) !=
	        0 ||
	    (rv = nng_listener_create(&l, ev.pub, cfg->events_url)) != 0 ||
	    (strncmp(cfg->events_url, "ipc://", 6) == 0 &&
	        (rv = nng_listener_set_int(l, NNG_OPT_IPC_PERMISSIONS, 0660)) !=
	            0) ||
	    (rv = nng_listener_start(l, 0)) != 0) {
		cm_warnx("api: cannot publish on %s: %s", cfg->events_url,
		    nng_strerror(rv));
		return -1;
	}
	if (pthread_create(&ev.thread, NULL, events_main, NULL) != 0)
		return -1;
	return 0;
}

void
api_events_stop(void)
{
	ev.stop = true;
	wake();
	pthread_join(ev.thread, NULL);
	while (ev.clients != NULL) {
		struct sse *s = ev.clients;
		ev.clients = s->next;
		sse_free(s);
	}
	nng_close(ev.sub);
	nng_close(ev.pub);
	nng_close(ev.store);
	if (ev.sub_rx != NULL)
		nng_aio_free(ev.sub_rx);
}

void
api_events_wait(int64_t deadline_ms)
{
	int64_t now = cm_mono_ms(), until;
	struct timespec ts;
	uint64_t seen;

	if (now >= deadline_ms)
		return;
	until = deadline_ms - now > 1000 ? 1000 : deadline_ms - now;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(until / 1000);
	ts.tv_nsec += (long)(until % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&ev.lock);
	seen = ev.n_finished;
	while (seen == ev.n_finished &&
	       pthread_cond_timedwait(&ev.finished, &ev.lock, &ts) == 0)
		;
	pthread_mutex_unlock(&ev.lock);
}

void
api_sse_serve(struct api_ctx *c, nng_http_conn *conn, int64_t after)
{
	static const char head[] = "HTTP/1.1 200 OK\r\n"
	                           "Content-Type: text/event-stream\r\n"
	                           "Cache-Control: no-store\r\n"
	                           "Connection: close\r\n\r\n";
	struct sse *s = calloc(1, sizeof(*s));

	if (s == NULL || nng_aio_alloc(&s->aio, sse_written, s) != 0) {
		free(s);
		nng_http_conn_close(conn);
		return;
	}
	s->conn = conn;
	snprintf(s->ws, sizeof(s->ws), "%s", c->workspace_id);
	snprintf(s->space, sizeof(s->space), "%s", c->space_id);
	s->last_sent = after;
	sse_put(s, head, sizeof(head) - 1);
	/* The replay; live events that race it are caught as a gap. */
	if (sse_fill(s, c->store) != 0)
		s->dead = true;
	pthread_mutex_lock(&ev.lock);
	if (ev.n_clients >= SSE_CLIENTS_MAX)
		s->dead = true;
	s->next = ev.clients;
	ev.clients = s;
	ev.n_clients++;
	s->gap = true; /* anything committed since the replay */
	pthread_mutex_unlock(&ev.lock);
	wake();
}
