/*
 * conn.c: one client connection's life, on the loop thread (api/http.c):
 * the set of connections, their output, and the jobs they hand to the
 * workers and take back.  Reading a request is conn_read.c's.
 *
 *   HEAD -> BODY -> WORK -> OUT -> HEAD (keep-alive) ...
 *                      \-> PARKED (?wait=, wait.h) -> WORK -> OUT
 *                      \-> STREAM (event stream, events.h; or a live
 *                                  view, live.h)
 *   any answer that closes, or a stream's end -> LINGER -> closed
 *
 * Each state but WORK and PARKED has a deadline (api_conns_sweep), and
 * a connection reads only while it is waiting for a request, so a client
 * cannot make it hold more than one request's bytes.
 *
 * A connection closed (api_conn_cut) keeps its memory until
 * api_conns_bury frees it at the end of a loop pass, once no worker holds
 * a job of it, so nothing on the stack ever points at freed memory.
 */
#include "conn.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api.h"
#include "clock.h"
#include "conn_int.h"
#include "events.h"
#include "live.h"
#include "log.h"
#include "wait.h"

/* Every open connection, and the closed ones a worker still holds. */
static struct {
	int ep;
	size_t n_conns, n_refusing;
	struct api_conn *list, *dead;
} set = {.ep = -1};

void
api_http_queue(struct api_job *j)
{
	j->conn->jobs++;
	api_work_queue(j);
}

void
api_http_done(struct api_job *j)
{
	j->conn->jobs++; /* as if queued: api_conn_job_done takes it back */
	api_conn_job_done(j, cm_mono_ms());
}

static uint32_t
interest(const struct api_conn *c)
{
	uint32_t out = c->out_off < c->out_len ? EPOLLOUT : 0;

	switch (c->state) {
	case C_HEAD:
	case C_BODY:
	case C_LINGER:
		return EPOLLIN | EPOLLRDHUP | out;
	case C_PARKED:
	case C_STREAM:
		return EPOLLRDHUP | out;
	case C_WORK:
	case C_OUT:
		return out;
	}
	return 0;
}

void
api_conn_watch(struct api_conn *c)
{
	uint32_t want = c->closed ? 0 : interest(c);
	struct epoll_event e = {.events = want, .data.ptr = c};
	int rv = 0;

	if (want == c->watched)
		return;
	if (want == 0)
		rv = epoll_ctl(set.ep, EPOLL_CTL_DEL, c->fd, NULL);
	else
		rv = epoll_ctl(set.ep,
		    c->watched ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd, &e);
	if (rv != 0)
		cm_warn("api: epoll_ctl");
	c->watched = want;
}

void
api_conn_cut(struct api_conn *c)
{
	if (c->closed)
		return;
	api_events_forget(c);
	api_live_forget(c);
	api_wait_drop(c);
	c->closed = true;
	api_conn_watch(c);
	close(c->fd);
	if (c->refused)
		set.n_refusing--;
	else
		set.n_conns--;
	if (c->prev)
		c->prev->next = c->next;
	else
		set.list = c->next;
	if (c->next)
		c->next->prev = c->prev;
	api_job_free(c->job);
	c->job = NULL;
	free(c->in);
	free(c->out);
	c->in = c->out = NULL;
	c->prev = NULL;
	c->next = set.dead; /* freed once no worker holds a job of it */
	set.dead = c;
}

/* Frees the closed connections no worker still holds. */
void
api_conns_bury(void)
{
	struct api_conn **pp = &set.dead;

	while (*pp != NULL) {
		struct api_conn *c = *pp;

		if (c->jobs == 0) {
			*pp = c->next;
			free(c);
		} else {
			pp = &c->next;
		}
	}
}

/* Shut for writing, then read what the client still sends, so that the
 * close does not reset the connection before it read the answer. */
static void
linger(struct api_conn *c, int64_t now)
{
	shutdown(c->fd, SHUT_WR);
	c->state = C_LINGER;
	c->deadline_ms = now + CM_HTTP_LINGER_MS;
	c->in_len = 0;
	api_conn_watch(c);
}

void
api_conn_flush(struct api_conn *c, int64_t now)
{
	while (c->out_off < c->out_len) {
		ssize_t n =
		    write(c->fd, c->out + c->out_off, c->out_len - c->out_off);

		if (n > 0) {
			c->out_off += (size_t)n;
			c->progress_ms = now;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && errno == EAGAIN) {
			api_conn_watch(c);
			return;
		} else {
			api_conn_cut(c);
			return;
		}
	}
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	if (c->close_after && c->state != C_LINGER)
		linger(c, now);
	else if (c->state == C_OUT) {
		c->state = C_HEAD;
		api_conn_process(c, now); /* a request sent behind this one */
	} else if (c->state == C_STREAM) {
		api_events_drained(c);
		api_live_drained(c);
	}
	api_conn_watch(c);
}

void
api_conn_send(struct api_conn *c, const char *buf, size_t n)
{
	char *grown;

	if (c->closed || n == 0)
		return;
	if (c->out_off == c->out_len) {
		c->progress_ms = cm_mono_ms();
		c->out_len = c->out_off = 0;
	}
	if ((grown = realloc(c->out, c->out_len + n)) == NULL) {
		c->close_after = true;
		return;
	}
	memcpy(grown + c->out_len, buf, n);
	c->out = grown;
	c->out_len += n;
	/* Written when the loop sees the socket writable: a caller may go
	 * on using its stream, which a failed write would free. */
	api_conn_watch(c);
}

size_t
api_conn_pending(const struct api_conn *c)
{
	return c->out_len - c->out_off;
}

int64_t
api_conn_stalled_ms(const struct api_conn *c, int64_t now_ms)
{
	return c->out_off < c->out_len ? now_ms - c->progress_ms : 0;
}

void
api_conn_end(struct api_conn *c)
{
	c->close_after = true;
	if (!c->closed && c->out_off == c->out_len && c->state != C_LINGER)
		linger(c, cm_mono_ms());
}

struct api_stream *
api_conn_stream(const struct api_conn *c)
{
	return c->stream;
}

void
api_conn_set_stream(struct api_conn *c, struct api_stream *s)
{
	c->stream = s;
}

struct api_viewer *
api_conn_viewer(const struct api_conn *c)
{
	return c->viewer;
}

void
api_conn_set_viewer(struct api_conn *c, struct api_viewer *v)
{
	c->viewer = v;
}

void
api_conn_streaming(struct api_conn *c)
{
	int sndbuf = CM_SSE_SNDBUF;

	setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	c->state = C_STREAM;
	c->close_after = false;
}

struct api_wait *
api_conn_wait(const struct api_conn *c)
{
	return c->wait;
}

void
api_conn_set_wait(struct api_conn *c, struct api_wait *w)
{
	c->wait = w;
}

void
api_conn_event(struct api_conn *c, uint32_t events, int64_t now)
{
	if (c->closed)
		return; /* closed earlier in this pass */
	if (events & EPOLLERR) {
		api_conn_cut(c);
		return;
	}
	if ((events & EPOLLOUT) && c->out_off < c->out_len)
		api_conn_flush(c, now);
	if (c->closed)
		return;
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) {
		if (c->state == C_HEAD || c->state == C_BODY)
			api_conn_read(c, now);
		else if (c->state == C_LINGER)
			api_conn_drain(c);
		else /* a parked request or a stream whose client left */
			api_conn_cut(c);
	}
}

void
api_conn_accept(int fd, size_t cap, int64_t now)
{
	static const char busy[] = "too many connections; try again later";
	struct api_conn *c;
	int one = 1;

	if (set.n_conns >= cap && set.n_refusing >= CM_HTTP_REFUSING_MAX) {
		close(fd);
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		close(fd);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->fd = fd;
	c->state = C_HEAD;
	c->deadline_ms = now + CM_HTTP_IDLE_TIMEOUT_MS;
	c->next = set.list;
	if (set.list)
		set.list->prev = c;
	set.list = c;
	if (set.n_conns >= cap) {
		/* Told why, and closed: a refusal the client can read. */
		c->refused = true;
		set.n_refusing++;
		api_conn_refuse(c, 503, CM_E_OVERLOADED, busy, now);
	} else {
		set.n_conns++;
		api_conn_watch(c);
	}
}

void
api_conns_init(int ep)
{
	set.ep = ep;
}

void
api_conns_close_all(void)
{
	while (set.list != NULL)
		api_conn_cut(set.list);
}

/* A job came back from a worker. */
void
api_conn_job_done(struct api_job *j, int64_t now)
{
	struct api_conn *c = j->conn;

	c->jobs--;
	if (c->closed) {
		api_job_free(j);
		return;
	}
	if (j->kind == API_JOB_PAGE) {
		api_events_page_done(c, j);
		return;
	}
	if (j->kind == API_JOB_WAIT && j->outcome != API_OUT_PARK)
		api_wait_drop(c); /* answered */
	switch (j->outcome) {
	case API_OUT_PARK:
		c->state = C_PARKED;
		api_wait_hold(c, j);
		break;
	case API_OUT_STREAM:
		api_conn_streaming(c);
		api_events_stream(c, j);
		break;
	case API_OUT_LIVE:
		api_live_attach(c, j);
		break;
	default:
		if (j->out == NULL) {
			api_conn_cut(c);
			break;
		}
		c->state = C_OUT;
		c->close_after = j->close;
		if (c->out_off == c->out_len) {
			/* Nothing else waits: the answer's buffer is taken as
			 * it is, so a large one (an artifact, 4 MiB) costs the
			 * loop no copy. */
			free(c->out);
			c->out = j->out;
			c->out_len = j->out_len;
			c->out_off = 0;
			c->progress_ms = now;
			j->out = NULL;
		} else {
			api_conn_send(c, j->out, j->out_len);
		}
		api_conn_flush(c, now);
		break;
	}
	if (!c->closed)
		api_conn_watch(c);
	api_job_free(j);
}

/* Deadlines: a head, a body or an idle keep-alive that took too long,
 * output the client stopped taking, a lingering close. */
void
api_conns_sweep(int64_t now)
{
	struct api_conn *c, *next;

	for (c = set.list; c != NULL; c = next) {
		next = c->next;
		if (c->out_off < c->out_len &&
		    now - c->progress_ms >= CM_HTTP_WRITE_TIMEOUT_MS) {
			api_conn_cut(c);
			continue;
		}
		if (c->deadline_ms == 0 || now < c->deadline_ms)
			continue;
		if (c->state == C_BODY || (c->state == C_HEAD && c->in_len > 0))
			api_conn_refuse(c, 408, CM_E_INVALID_REQUEST,
			    "the request did not arrive in time", now);
		else if (c->state == C_HEAD || c->state == C_LINGER)
			api_conn_cut(c);
	}
}
