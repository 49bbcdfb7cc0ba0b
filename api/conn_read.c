/*
 * conn_read.c: reading one request off a connection, on the loop thread:
 * its head against a size bound and a deadline, then its body, which is
 * read only once the head said how long it is, so a connection never
 * holds more than one request's bytes.  A bad request is answered here
 * and the connection closed; a whole one goes to a worker, or is
 * answered here when the Spaces' view holds its answer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "clock.h"
#include "conn_int.h"
#include "metrics.h"

void
api_conn_refuse(struct api_conn *c, int status, enum cm_err err,
    const char *why, int64_t now)
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
	api_conn_flush(c, now);
}

void
api_conn_fail(struct api_conn *c, int status, enum cm_err err, const char *why)
{
	api_conn_refuse(c, status, err, why, cm_mono_ms());
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

/*
 * The body has arrived: the request goes to a worker, unless it is one
 * the loop can answer from the view (api_work_on_loop), which it then
 * does at once.  A request pipelined behind it, read while its answer is
 * handed back, goes to a worker: the loop's stack does not nest.
 */
static void
dispatch(struct api_conn *c, int64_t now)
{
	static bool answering;
	struct api_job *j = c->job;

	c->job = NULL;
	if (j->req.body_len > 0) {
		if ((j->body = malloc(j->req.body_len + 1)) == NULL) {
			api_job_free(j);
			api_conn_cut(c);
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
	/* Answered here, the connection is watched as it was before, and
	 * needs no change of its interest. */
	if (!answering && j->body_len == 0 && api_work_on_loop(j)) {
		api_metrics_loop_answer();
		answering = true;
		api_http_done(j);
		answering = false;
		return;
	}
	api_conn_watch(c);
	api_http_queue(j);
}

void
api_conn_process(struct api_conn *c, int64_t now)
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
			api_conn_refuse(c, st, CM_E_INVALID_REQUEST,
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
			api_conn_cut(c);
			return;
		}
		memcpy(j->head, c->in, c->head_len);
		j->head[c->head_len] = '\0';
		c->job = j;
		if ((st = api_request_parse(j->head, &j->req, &why)) != 0) {
			api_conn_refuse(c, st,
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
			api_conn_flush(c, now);
			if (c->closed)
				return;
		}
	}
	if (c->state == C_BODY &&
	    c->in_len >= c->head_len + c->job->req.body_len)
		dispatch(c, now);
}

void
api_conn_read(struct api_conn *c, int64_t now)
{
	size_t want = c->state == C_BODY ? c->head_len + c->job->req.body_len
	                                 : API_REQUEST_BUF;
	ssize_t n;

	if (c->in_cap < want) {
		char *grown = realloc(c->in, want);

		if (grown == NULL) {
			api_conn_cut(c);
			return;
		}
		c->in = grown;
		c->in_cap = want;
	}
	if (c->in_len >= want)
		return; /* a full head buffer: process() answers 431 */
	n = read(c->fd, c->in + c->in_len, want - c->in_len);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		api_conn_cut(c);
		return;
	}
	if (n < 0)
		return;
	if (c->state == C_HEAD && c->in_len == 0)
		c->deadline_ms = now + CM_HTTP_HEAD_TIMEOUT_MS;
	c->in_len += (size_t)n;
	api_conn_process(c, now);
}

void
api_conn_drain(struct api_conn *c)
{
	char buf[4096];
	ssize_t n;

	while ((n = read(c->fd, buf, sizeof(buf))) > 0)
		;
	if (n == 0 || errno != EAGAIN)
		api_conn_cut(c);
}
