/*
 * work.c: what a worker does with a job.  A request runs through the
 * router as before (route, authenticate, authorize, call the store, build
 * the answer); the answer is rendered here into the bytes the loop
 * writes.  A worker may wait on the store, never on a client.  The pool:
 * CM_API_WORKERS threads, a queue of jobs in and one of jobs done, and an
 * eventfd that tells the loop.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "clock.h"
#include "events.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "wait.h"

static const char *
reason(int status)
{
	switch (status) {
	case 100:
		return "Continue";
	case 200:
		return "OK";
	case 201:
		return "Created";
	case 202:
		return "Accepted";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 409:
		return "Conflict";
	case 413:
		return "Content Too Large";
	case 414:
		return "URI Too Long";
	case 422:
		return "Unprocessable Content";
	case 429:
		return "Too Many Requests";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	default:
		return "Unknown";
	}
}

int
api_render(char **out, size_t *len, int status, const char *content_type,
    const char *headers, const char *body, size_t body_len, bool close)
{
	size_t blen = body == NULL ? 0 : body_len > 0 ? body_len : strlen(body);
	char head[CM_HTTP_RES_HEAD_MAX];
	int n;

	*out = NULL;
	*len = 0;
	n = snprintf(head, sizeof(head),
	    "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n%s"
	    "X-Content-Type-Options: nosniff\r\nContent-Length: %zu\r\n%s\r\n",
	    status, reason(status),
	    content_type ? content_type : "application/json",
	    headers ? headers : "Cache-Control: no-store\r\n", blen,
	    close ? "Connection: close\r\n" : "");
	if (n < 0 || (size_t)n >= sizeof(head) ||
	    (*out = malloc((size_t)n + blen)) == NULL)
		return -1;
	memcpy(*out, head, (size_t)n);
	if (blen > 0)
		memcpy(*out + n, body, blen);
	*len = (size_t)n + blen;
	return 0;
}

void
api_job_free(struct api_job *j)
{
	if (j == NULL)
		return;
	free(j->head);
	free(j->body);
	free(j->out);
	free(j);
}

/* The method as a string that outlives the request (for a parked one's
 * metrics). */
static const char *
lasting_method(const char *m)
{
	static const char *const known[] = {
	    "GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS"};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(m, known[i]) == 0)
			return known[i];
	return "OTHER";
}

void
api_work_conclude(struct api_job *j, struct api_ctx *c)
{
	struct api_res *res = c->res;

	if (c->later == API_LATER_WAIT || c->later == API_LATER_STREAM ||
	    c->later == API_LATER_LIVE) {
		j->outcome = c->later == API_LATER_WAIT     ? API_OUT_PARK
		             : c->later == API_LATER_STREAM ? API_OUT_STREAM
		                                            : API_OUT_LIVE;
		j->route = c->route;
		if (c->workspace_id != j->ws) /* not a parked one again */
			snprintf(j->ws, sizeof(j->ws), "%s", c->workspace_id);
		if (c->space_id != j->space)
			snprintf(j->space, sizeof(j->space), "%s", c->space_id);
		snprintf(j->task, sizeof(j->task), "%s", c->later_task);
		snprintf(j->rpc, sizeof(j->rpc), "%s", c->later_rpc);
		snprintf(
		    j->progress, sizeof(j->progress), "%s", c->later_progress);
		j->log = c->later_log;
		j->until_closed = c->later_closed;
		j->deadline_ms = c->later_deadline_ms;
		j->after = c->later_after;
		/* A stream is answered 200 now; a parked request counts when
		 * it is answered, a live view when the loop answers it. */
		if (c->later == API_LATER_STREAM)
			api_metrics_request(c->route, j->http_method, 200,
			    (double)(cm_mono_ns() - j->t0_ns) / 1e9);
		return;
	}
	if (res->body == NULL)
		api_fail(c, 500, CM_E_INTERNAL, "no answer");
	api_metrics_request(c->route, j->http_method,
	    res->body ? res->status : 500,
	    (double)(cm_mono_ns() - j->t0_ns) / 1e9);
	free(j->out);
	j->outcome = API_OUT_ANSWER;
	/* A parked call told of its progress has its stream's head sent
	 * (wait.c): its answer is the stream's last event, then the end. */
	if (j->kind == API_JOB_WAIT && api_wait_streamed(j)) {
		j->close = true;
		j->out = api_wait_sse_message(res->body, &j->out_len);
		return;
	}
	/* Out of memory, no answer: the loop closes the connection. */
	api_render(&j->out, &j->out_len, res->body ? res->status : 500,
	    res->content_type, res->headers, res->body, res->body_len,
	    j->close);
}

/* Runs j's request; on the loop (on_loop), false when the store must be
 * asked, and then nothing of it is answered or counted. */
static bool
run_request(struct api_job *j, const struct cm_config *cfg, nng_socket store,
    bool on_loop)
{
	const char *target = j->req.target, *qs = strchr(target, '?');
	struct api_req req;
	struct api_res res = {0};
	struct api_ctx c;

	memset(&req, 0, sizeof(req));
	req.method = j->req.method;
	/* The target is at most CM_URL_MAX (api_request_parse). */
	snprintf(req.path, sizeof(req.path), "%.*s",
	    (int)(qs ? (size_t)(qs - target) : strlen(target)), target);
	snprintf(req.query, sizeof(req.query), "%s", qs ? qs + 1 : "");
	req.body = j->body;
	req.body_len = j->body_len;
	req.authorization = j->req.authorization;
	req.accept = j->req.accept;
	req.last_event_id = j->req.last_event_id;
	req.content_type = j->req.content_type;
	req.host = j->req.host;
	req.origin = j->req.origin;
	req.mcp_session = j->req.mcp_session;
	req.mcp_version = j->req.mcp_version;

	memset(&c, 0, sizeof(c));
	c.cfg = cfg;
	c.store = store;
	c.req = &req;
	c.res = &res;
	c.on_loop = on_loop;
	j->http_method = lasting_method(j->req.method);
	api_dispatch(&c);
	if (!c.needs_store)
		api_work_conclude(j, &c);
	api_auth_release(&c);
	free(res.body);
	return !c.needs_store;
}

/* One job, on a worker thread (store calls allowed). */
static void
run(struct api_job *j, const struct cm_config *cfg, nng_socket store)
{
	switch (j->kind) {
	case API_JOB_REQUEST:
		run_request(j, cfg, store, false);
		break;
	case API_JOB_WAIT:
		api_wait_run(j, cfg, store);
		break;
	case API_JOB_PAGE:
		api_events_page(j, store);
		break;
	}
}

/* --- the pool -------------------------------------------------------- */

static struct {
	const struct cm_config *cfg;
	nng_socket store;
	int done_fd;
	pthread_t threads[CM_API_WORKERS];
	int n;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct api_job *waiting, *waiting_tail, *done, *done_tail;
	bool stop;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* Appends j to a list; call locked. */
static void
append(struct api_job **head, struct api_job **tail, struct api_job *j)
{
	j->next = NULL;
	if (*tail)
		(*tail)->next = j;
	else
		*head = j;
	*tail = j;
}

bool
api_work_on_loop(struct api_job *j)
{
	return j->kind == API_JOB_REQUEST &&
	       run_request(j, pool.cfg, pool.store, true);
}

void
api_work_queue(struct api_job *j)
{
	pthread_mutex_lock(&pool.lock);
	append(&pool.waiting, &pool.waiting_tail, j);
	pthread_cond_signal(&pool.cv);
	pthread_mutex_unlock(&pool.lock);
}

struct api_job *
api_work_take_done(void)
{
	struct api_job *j;

	pthread_mutex_lock(&pool.lock);
	j = pool.done;
	pool.done = pool.done_tail = NULL;
	pthread_mutex_unlock(&pool.lock);
	return j;
}

static void *
worker(void *arg)
{
	uint64_t one = 1;

	(void)arg;
	for (;;) {
		struct api_job *j;

		pthread_mutex_lock(&pool.lock);
		while (pool.waiting == NULL && !pool.stop)
			pthread_cond_wait(&pool.cv, &pool.lock);
		if ((j = pool.waiting) == NULL) {
			pthread_mutex_unlock(&pool.lock);
			return NULL;
		}
		if ((pool.waiting = j->next) == NULL)
			pool.waiting_tail = NULL;
		pthread_mutex_unlock(&pool.lock);

		run(j, pool.cfg, pool.store);

		pthread_mutex_lock(&pool.lock);
		append(&pool.done, &pool.done_tail, j);
		pthread_mutex_unlock(&pool.lock);
		if (write(pool.done_fd, &one, sizeof(one)) < 0 &&
		    errno != EAGAIN)
			cm_warn("api: waking the loop");
	}
}

int
api_work_start(const struct cm_config *cfg, nng_socket store, int done_fd)
{
	pool.cfg = cfg;
	pool.store = store;
	pool.done_fd = done_fd;
	for (; pool.n < CM_API_WORKERS; pool.n++)
		if (pthread_create(&pool.threads[pool.n], NULL, worker, NULL) !=
		    0) {
			cm_warnx("api: cannot start workers");
			return -1;
		}
	return 0;
}

struct api_job *
api_work_stop(void)
{
	struct api_job *left;

	pthread_mutex_lock(&pool.lock);
	pool.stop = true;
	pthread_cond_broadcast(&pool.cv);
	pthread_mutex_unlock(&pool.lock);
	for (int i = 0; i < pool.n; i++)
		pthread_join(pool.threads[i], NULL);
	left = pool.waiting;
	if (pool.waiting_tail != NULL)
		pool.waiting_tail->next = pool.done;
	else
		left = pool.done;
	pool.waiting = pool.waiting_tail = pool.done = pool.done_tail = NULL;
	return left;
}
