/*
 * conn.c: one client connection's life, on the loop thread (api/http.c).
 *
 *   HEAD -> BODY -> WORK -> OUT -> HEAD (keep-alive) ...
 *                      \-> PARKED (?wait=) -> WORK -> OUT
 *                      \-> STREAM (event stream)
 *   any answer that closes, or a stream's end -> LINGER -> closed
 *
 * Each state but WORK and PARKED has a deadline (api_conns_sweep), and
 * a connection reads only while it is waiting for a request, so a client
 * cannot make it hold more than one request's bytes.
 *
 * A connection is only ever closed (conn_close) from the loop's own
 * top-level steps or through api_conn_cut; its memory is freed by
 * api_conns_bury at the end of a loop pass once no worker holds a job of
 * it, so nothing on the stack ever points at freed memory.
 */
#include "conn.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api.h"
#include "clock.h"
#include "events.h"
#include "log.h"

enum conn_state {
	C_HEAD,   /* reading a request head (or idle between requests) */
	C_BODY,   /* reading its body */
	C_WORK,   /* a worker has the request */
	C_OUT,    /* writing the answer */
	C_PARKED, /* a ?wait= request waiting for its task */
	C_STREAM, /* an event stream */
	C_LINGER, /* answered and shut for writing; reading what is left */
};

struct api_conn {
	int fd;
	enum conn_state state;
	char *in; /* bytes read and not yet used; NULL when none */
	size_t in_len, in_cap;
	struct api_job *job; /* C_BODY: the request waiting for its body */
	size_t head_len;
	char *out; /* bytes to write, from out_off */
	size_t out_len, out_off;
	int64_t deadline_ms; /* C_HEAD, C_BODY, C_LINGER; 0: none */
	int64_t progress_ms; /* output began, or last took a byte */
	bool close_after;    /* linger and close once the output is written */
	bool refused;        /* over the cap: told 503 */
	bool closed;
	int jobs;         /* jobs of this connection the workers hold */
	uint32_t watched; /* epoll interest; 0: not in the set */
	struct api_stream *stream;
	struct api_conn *prev, *next;
};

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

/* Brings the epoll set in line with c's state. */
static void
watch(struct api_conn *c)
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

static void
conn_close(struct api_conn *c)
{
	if (c->closed)
		return;
	api_events_forget(c);
	c->closed = true;
	watch(c);
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

static void process(struct api_conn *c, int64_t now);

/* Shut for writing, then read what the client still sends, so that the
 * close does not reset the connection before it read the answer. */
static void
linger(struct api_conn *c, int64_t now)
{
	shutdown(c->fd, SHUT_WR);
	c->state = C_LINGER;
	c->deadline_ms = now + CM_HTTP_LINGER_MS;
	c->in_len = 0;
	watch(c);
}

/* Writes what the socket takes; then moves on from a written answer. */
static void
flush(struct api_conn *c, int64_t now)
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
			watch(c);
			return;
		} else {
			conn_close(c);
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
		process(c, now); /* a request sent behind this one */
	} else if (c->state == C_STREAM)
		api_events_drained(c);
	watch(c);
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
	watch(c);
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

void
api_conn_cut(struct api_conn *c)
{
	conn_close(c);
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

/* An answer the loop gives itself (a bad or late request); closes after. */
static void
refuse(struct api_conn *c, int status, enum cm_err err, const char *why,
    int64_t now)
{
	struct api_res res = {0};
	struct api_ctx ctx;
	char *out;
	size_t len;

	memset(&ctx, 0, sizeof(ctx));
	ctx.res = &res;
	api_fail(&ctx, status, err, why);
	api_job_free(c->job);
	c->job = NULL;
	c->close_after = true;
	c->state = C_OUT;
	if (api_render(&out, &len, res.status, NULL, NULL, res.body, 0, true) ==
	    0) {
		api_conn_send(c, out, len);
		free(out);
	}
	free(res.body);
	flush(c, now);
}

/* Drops the first n bytes read. */
static void
consume(struct api_conn *c, size_t n)
{
	memmove(c->in, c->in + n, c->in_len - n);
	c->in_len -= n;
	if (c->in_len == 0) {
		free(c->in);
		c->in = NULL;
		c->in_cap = 0;
	}
}

/* The body has arrived: the request goes to a worker. */
static void
dispatch(struct api_conn *c, int64_t now)
{
	struct api_job *j = c->job;

	c->job = NULL;
	if (j->req.body_len > 0) {
		if ((j->body = malloc(j->req.body_len + 1)) == NULL) {
			api_job_free(j);
			conn_close(c);
			return;
		}
		memcpy(j->body, c->in + c->head_len, j->req.body_len);
		j->body[j->req.body_len] = '\0';
		j->body_len = j->req.body_len;
	}
	consume(c, c->head_len + j->req.body_len);
	j->kind = API_JOB_REQUEST;
	j->conn = c;
	j->close = !j->req.keep_alive;
	j->t0_ns = cm_mono_ns();
	c->state = C_WORK;
	c->deadline_ms = 0;
	(void)now;
	watch(c);
	api_http_queue(j);
}

/* Moves a connection on with what it has read. */
static void
process(struct api_conn *c, int64_t now)
{
	static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
	struct api_job *j;
	const char *why;
	int st;

	if (c->state == C_HEAD) {
		if (c->in_len == 0) {
			c->deadline_ms = now + CM_HTTP_IDLE_TIMEOUT_MS;
			return;
		}
		if (c->deadline_ms == 0) /* sent behind the last request */
			c->deadline_ms = now + CM_HTTP_HEAD_TIMEOUT_MS;
		st = api_request_head_len(c->in, c->in_len, &c->head_len);
		if (st == 414 || st == 431) {
			refuse(c, st, CM_E_INVALID_REQUEST,
			    st == 414 ? "the request line is over 2080 bytes"
			              : "the header fields are over 8 KiB",
			    now);
			return;
		}
		if (st == 0)
			return;
		if ((j = calloc(1, sizeof(*j))) == NULL ||
		    (j->head = malloc(c->head_len + 1)) == NULL) {
			free(j);
			conn_close(c);
			return;
		}
		memcpy(j->head, c->in, c->head_len);
		j->head[c->head_len] = '\0';
		c->job = j;
		if ((st = api_request_parse(j->head, &j->req, &why)) != 0) {
			refuse(c, st,
			    st == 413 ? CM_E_PAYLOAD_TOO_LARGE
			              : CM_E_INVALID_REQUEST,
			    why, now);
			return;
		}
		c->state = C_BODY;
		c->deadline_ms = now + CM_HTTP_BODY_TIMEOUT_MS;
		if (j->req.expect_continue && j->req.body_len > 0 &&
		    c->in_len < c->head_len + j->req.body_len) {
			api_conn_send(c, cont, sizeof(cont) - 1);
			flush(c, now);
			if (c->closed)
				return;
		}
	}
	if (c->state == C_BODY &&
	    c->in_len >= c->head_len + c->job->req.body_len)
		dispatch(c, now);
}

/* Reads what the socket has, within the bound of the request's state. */
static void
read_some(struct api_conn *c, int64_t now)
{
	size_t want = c->state == C_BODY ? c->head_len + c->job->req.body_len
	                                 : API_REQUEST_BUF;
	ssize_t n;

	if (c->in_cap < want) {
		char *grown = realloc(c->in, want);

		if (grown == NULL) {
			conn_close(c);
			return;
		}
		c->in = grown;
		c->in_cap = want;
	}
	if (c->in_len >= want)
		return; /* a full head buffer: process() answers 431 */
	n = read(c->fd, c->in + c->in_len, want - c->in_len);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		conn_close(c);
		return;
	}
	if (n < 0)
		return;
	if (c->state == C_HEAD && c->in_len == 0)
		c->deadline_ms = now + CM_HTTP_HEAD_TIMEOUT_MS;
	c->in_len += (size_t)n;
	process(c, now);
}

/* In C_LINGER: throws away what arrives, closes at its end. */
static void
drain_linger(struct api_conn *c)
{
	char buf[4096];
	ssize_t n;

	while ((n = read(c->fd, buf, sizeof(buf))) > 0)
		;
	if (n == 0 || errno != EAGAIN)
		conn_close(c);
}

void
api_conn_event(struct api_conn *c, uint32_t events, int64_t now)
{
	if (c->closed)
		return; /* closed earlier in this pass */
	if (events & EPOLLERR) {
		conn_close(c);
		return;
	}
	if ((events & EPOLLOUT) && c->out_off < c->out_len)
		flush(c, now);
	if (c->closed)
		return;
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) {
		if (c->state == C_HEAD || c->state == C_BODY)
			read_some(c, now);
		else if (c->state == C_LINGER)
			drain_linger(c);
		else /* a parked request or a stream whose client left */
			conn_close(c);
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
		refuse(c, 503, CM_E_OVERLOADED, busy, now);
	} else {
		set.n_conns++;
		watch(c);
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
		conn_close(set.list);
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
		api_events_forget(c);
	switch (j->outcome) {
	case API_OUT_PARK:
		c->state = C_PARKED;
		api_events_park(c, j);
		break;
	case API_OUT_STREAM: {
		int sndbuf = CM_SSE_SNDBUF;

		setsockopt(
		    c->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
		c->state = C_STREAM;
		c->close_after = false;
		api_events_stream(c, j);
		break;
	}
	default:
		if (j->out == NULL) {
			conn_close(c);
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
		flush(c, now);
		break;
	}
	if (!c->closed)
		watch(c);
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
			conn_close(c);
			continue;
		}
		if (c->deadline_ms == 0 || now < c->deadline_ms)
			continue;
		if (c->state == C_BODY || (c->state == C_HEAD && c->in_len > 0))
			refuse(c, 408, CM_E_INVALID_REQUEST,
			    "the request did not arrive in time", now);
		else if (c->state == C_HEAD || c->state == C_LINGER)
			conn_close(c);
	}
}
