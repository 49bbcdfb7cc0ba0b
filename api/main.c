/*
 * spaced-api: the HTTP front.
 *
 *   spaced-api [--notify-fd=N] [config flags]
 *
 * nng's HTTP server accepts connections and hands each request to one
 * handler; that handler only queues the request.  A small pool of worker
 * threads runs the queue: each request is answered by exactly one worker,
 * which may block on the store without stalling nng's own threads.
 * Exit codes: 0 stopped, 1 failed, 100 bad configuration.
 */
#include <errno.h>
#include <nng/nng.h>
#include <nng/supplemental/http/http.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "api.h"
#include "clock.h"
#include "events.h"
#include "log.h"
#include "metrics.h"
#include "rpc.h"

/* Workers block on the store and on ?wait= long-polls (30 s at most):
 * enough of them that a few long-polls leave room for everyone else. */
#define API_WORKERS 16
/* They share one socket to the store. */
_Static_assert(API_WORKERS <= CM_RPC_OUTSTANDING_MAX,
    "more workers than requests one socket may have outstanding");
#define API_BODY_TIMEOUT_MS 10000 /* a body must arrive in this time */
#define EXIT_PERMANENT 100

struct job {
	nng_aio *aio;
	struct job *next;
};

static struct {
	const struct cm_config *cfg;
	nng_socket store;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct job *head, *tail;
	bool stop;
} q = {.lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* On an nng thread: queue the request, never block. */
static void
http_cb(nng_aio *aio)
{
	struct job *j = malloc(sizeof(*j));

	if (j == NULL) {
		nng_aio_finish(aio, NNG_ENOMEM);
		return;
	}
	j->aio = aio;
	j->next = NULL;
	pthread_mutex_lock(&q.lock);
	if (q.tail)
		q.tail->next = j;
	else
		q.head = j;
	q.tail = j;
	pthread_cond_signal(&q.cv);
	pthread_mutex_unlock(&q.lock);
}

static void
answer(nng_aio *aio, const struct api_res *res)
{
	nng_http_res *hr;

	if (nng_http_res_alloc(&hr) != 0) {
		nng_aio_finish(aio, NNG_ENOMEM);
		return;
	}
	nng_http_res_set_status(hr, (uint16_t)res->status);
	nng_http_res_set_header(hr, "Content-Type",
	    res->content_type ? res->content_type : "application/json");
	nng_http_res_set_header(hr, "Cache-Control", "no-store");
	if (res->body != NULL)
		nng_http_res_copy_data(hr, res->body, strlen(res->body));
	nng_aio_set_output(aio, 0, hr);
	nng_aio_finish(aio, 0);
}

/*
 * Reads the request body ourselves, so that its size is judged from
 * Content-Length before a byte of it is read: a body over CM_BODY_MAX is
 * answered 413 however large it claims to be, and memory is only ever
 * taken for bodies within the bound.  Returns 0 with *body (malloc'd, or
 * NULL when there is none), or -1 with the answer set.
 */
static int
read_body(struct api_ctx *c, nng_http_req *hreq, void **body, size_t *len)
{
	const char *cl = nng_http_req_get_header(hreq, "Content-Length");
	const char *te = nng_http_req_get_header(hreq, "Transfer-Encoding");
	nng_aio *aio;
	nng_iov iov;
	char *end;
	unsigned long long n;
	int rv;

	*body = NULL;
	*len = 0;
	if (te != NULL) {
		api_fail(c, 0, CM_E_INVALID_REQUEST,
		    "a body must come with Content-Length");
		return -1;
	}
	if (cl == NULL)
		return 0;
	errno = 0;
	n = strtoull(cl, &end, 10);
	if (errno != 0 || end == cl || *end != '\0') {
		api_fail(c, 0, CM_E_INVALID_REQUEST, "bad Content-Length");
		return -1;
	}
	if (n > CM_BODY_MAX) {
		api_fail(
		    c, 0, CM_E_PAYLOAD_TOO_LARGE, "the body is over 64 KiB");
		return -1;
	}
	if (n == 0)
		return 0;
	if ((*body = malloc((size_t)n + 1)) == NULL ||
	    nng_aio_alloc(&aio, NULL, NULL) != 0) {
		free(*body);
		*body = NULL;
		api_fail(c, 500, CM_E_INTERNAL, "out of memory");
		return -1;
	}
	iov.iov_buf = *body;
	iov.iov_len = (size_t)n;
	nng_aio_set_iov(aio, 1, &iov);
	nng_aio_set_timeout(aio, API_BODY_TIMEOUT_MS);
	nng_http_conn_read_all(c->conn, aio);
	nng_aio_wait(aio);
	rv = nng_aio_result(aio);
	nng_aio_free(aio);
	if (rv != 0) {
		free(*body);
		*body = NULL;
		api_fail(c, 0, CM_E_INVALID_REQUEST, "the body did not arrive");
		return -1;
	}
	((char *)*body)[n] = '\0';
	*len = (size_t)n;
	return 0;
}

static void
run_job(nng_aio *aio)
{
	nng_http_req *hreq = nng_aio_get_input(aio, 0);
	struct api_req req;
	struct api_res res = {0};
	struct api_ctx c;
	const char *uri = nng_http_req_get_uri(hreq);
	const char *qs = strchr(uri, '?');
	int64_t t0 = cm_mono_ns();
	void *body;
	size_t len;

	memset(&req, 0, sizeof(req));
	req.method = nng_http_req_get_method(hreq);
	snprintf(req.path, sizeof(req.path), "%.*s",
	    (int)(qs ? (size_t)(qs - uri) : strlen(uri)), uri);
	snprintf(req.query, sizeof(req.query), "%s", qs ? qs + 1 : "");
	body = NULL;
	len = 0;
	req.authorization = nng_http_req_get_header(hreq, "Authorization");
	req.accept = nng_http_req_get_header(hreq, "Accept");
	req.last_event_id = nng_http_req_get_header(hreq, "Last-Event-ID");

	memset(&c, 0, sizeof(c));
	c.cfg = q.cfg;
	c.store = q.store;
	c.req = &req;
	c.res = &res;
	c.conn = nng_aio_get_input(aio, 2);
	if (strlen(uri) > CM_URL_MAX)
		api_fail(&c, 0, CM_E_INVALID_REQUEST, "the URL is too long");
	else if (read_body(&c, hreq, &body, &len) == 0) {
		req.body = body;
		req.body_len = len;
		api_dispatch(&c);
	}
	free(body);
	api_auth_release(&c);
	/* A hijacked stream answered 200 itself; no body will be a 500. */
	api_metrics_request(c.route, req.method,
	    c.hijacked ? 200
	    : res.body ? res.status
	               : 500,
	    (double)(cm_mono_ns() - t0) / 1e9);
	if (c.hijacked) {
		/* The stream owns the connection; the request is ours to free.
		 */
		free(res.body);
		nng_http_req_free(hreq);
		nng_aio_set_output(aio, 0, NULL);
		nng_aio_finish(aio, 0);
		return;
	}
	if (res.body == NULL)
		api_fail(&c, 500, CM_E_INTERNAL, "no answer");
	answer(aio, &res);
	free(res.body);
}

static void *
worker(void *arg)
{
	(void)arg;
	for (;;) {
		struct job *j;

		pthread_mutex_lock(&q.lock);
		while (q.head == NULL && !q.stop)
			pthread_cond_wait(&q.cv, &q.lock);
		if (q.head == NULL) {
			pthread_mutex_unlock(&q.lock);
			return NULL;
		}
		j = q.head;
		q.head = j->next;
		if (q.head == NULL)
			q.tail = NULL;
		pthread_mutex_unlock(&q.lock);
		run_job(j->aio);
		free(j);
	}
}

static int
start_server(const struct cm_config *cfg, nng_http_server **out)
{
	char url[CM_CONF_VALUE_MAX + 16];
	nng_http_handler *h;
	nng_url *u;
	int rv;

	snprintf(url, sizeof(url), "http://%s/", cfg->http_listen);
	if ((rv = nng_url_parse(&u, url)) != 0)
		return rv;
	rv = nng_http_server_hold(out, u);
	nng_url_free(u);
	if (rv != 0)
		return rv;
	if ((rv = nng_http_handler_alloc(&h, "/", http_cb)) != 0 ||
	    (rv = nng_http_handler_set_method(h, NULL)) != 0 ||
	    (rv = nng_http_handler_set_tree(h)) != 0 ||
	    /* Bodies are read by the worker, after a look at their size. */
	    (rv = nng_http_handler_collect_body(h, false, (size_t)-1)) != 0 ||
	    (rv = nng_http_server_add_handler(*out, h)) != 0)
		return rv;
	return nng_http_server_start(*out);
}

int
main(int argc, char **argv, char **envp)
{
	static const char *const extra[] = {"notify-fd", NULL};
	static struct cm_config cfg;
	enum cm_log_level level = CM_LOG_INFO;
	pthread_t workers[API_WORKERS];
	nng_http_server *srv = NULL;
	char err[256], url[CM_PATH_MAX];
	const char *fd_arg;
	struct signalfd_siginfo si;
	sigset_t mask;
	int sig_fd, rv, notify_fd = -1;

	cm_log_init("spaced-api", CM_LOG_INFO, false);
	if (cm_config_load(&cfg, argc, argv, envp, extra, err, sizeof(err)) !=
	    0) {
		cm_warnx("config: %s", err);
		return EXIT_PERMANENT;
	}
	cm_log_level_parse(cfg.log_level, &level);
	cm_log_init("spaced-api", level, strcmp(cfg.log_format, "text") != 0);
	if ((fd_arg = cm_config_extra(&cfg, "notify-fd")) != NULL) {
		char *end;
		long v = strtol(fd_arg, &end, 10);

		if (*end != '\0' || v < 0 || v > 65535) {
			cm_warnx("config: notify-fd must be a file descriptor "
			         "number");
			return EXIT_PERMANENT;
		}
		notify_fd = (int)v;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((sig_fd = signalfd(-1, &mask, SFD_CLOEXEC)) < 0) {
		cm_warn("api: signalfd");
		return 1;
	}

	q.cfg = &cfg;
	if (cm_ipc_url(url, sizeof(url), cfg.run_dir, "store.ipc") != 0 ||
	    cm_rpc_open(&q.store, url) != 0) {
		cm_warnx("api: cannot reach the store");
		return 1;
	}
	if (api_events_start(&cfg) != 0)
		return 1;
	for (int i = 0; i < API_WORKERS; i++)
		if (pthread_create(&workers[i], NULL, worker, NULL) != 0) {
			cm_warnx("api: cannot start workers");
			return 1;
		}
	if ((rv = start_server(&cfg, &srv)) != 0) {
		cm_warnx("api: cannot listen on %s: %s", cfg.http_listen,
		    nng_strerror(rv));
		return 1;
	}
	if (notify_fd >= 0) {
		static const char ready[] = "ready\n";
		if (write(notify_fd, ready, sizeof(ready) - 1) < 0)
			cm_warn("api: readiness notification");
		close(notify_fd);
	}
	cm_info("api: listening on http://%s/", cfg.http_listen);

	while (read(sig_fd, &si, sizeof(si)) < 0 && errno == EINTR)
		;
	cm_info("api: signal %u, stopping", si.ssi_signo);
	nng_http_server_stop(srv);
	nng_http_server_release(srv);
	pthread_mutex_lock(&q.lock);
	q.stop = true;
	pthread_cond_broadcast(&q.cv);
	pthread_mutex_unlock(&q.lock);
	for (int i = 0; i < API_WORKERS; i++)
		pthread_join(workers[i], NULL);
	api_events_stop();
	nng_close(q.store);
	return 0;
}
