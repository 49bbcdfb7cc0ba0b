/*
 * http.h: the api's HTTP/1.1 connection layer, and the jobs it hands to
 * the workers.
 *
 * One loop thread (api/http.c) owns every client socket, non-blocking:
 * it accepts (up to a cap, then a 503), reads each request head and body
 * against deadlines and size bounds, and writes answers as the client
 * takes them.  A complete request becomes a job for one of the worker
 * threads (api/work.c), which may call the store and never touches a
 * socket; its answer comes back to the loop.  One whose answer the
 * Spaces' view holds is answered by the loop at once, with no worker
 * (api_work_on_loop).  A request that must wait (?wait=) is parked on
 * the loop (api/wait.c), and an event stream (api/events.c) and a live
 * view (api/live.c) are fed from it: none holds a thread.
 *
 * Functions marked "loop" run on the loop thread only; nothing they touch
 * is locked.
 */
#ifndef API_HTTP_H
#define API_HTTP_H

#include <nng/nng.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "errors.h"
#include "limits.h"
#include "request.h"

struct api_ctx;

struct api_conn;   /* one client connection, owned by the loop */
struct api_stream; /* its event stream (api/events.c) */
struct api_wait;   /* its parked ?wait= request (api/wait.c) */
struct api_viewer; /* its live view (api/live.c) */

enum api_job_kind {
	API_JOB_REQUEST, /* run a request through the router */
	API_JOB_WAIT,    /* look at a parked request's task (Space) again */
	API_JOB_PAGE,    /* read a page of events for a stream */
};

/* What a job asks of the loop when it comes back. */
enum api_job_outcome {
	API_OUT_ANSWER, /* write out[] (a whole HTTP response) */
	API_OUT_PARK,   /* park: wait for task or deadline_ms */
	API_OUT_STREAM, /* turn the connection into an event stream */
	API_OUT_LIVE,   /* turn it into a viewer of the Space (live.h) */
	API_OUT_PAGE,   /* out[] holds SSE text of a page of events */
	API_OUT_FAILED, /* a page could not be read */
};

/*
 * One unit of work for a worker.  The loop fills the inputs and gives the
 * job away; the worker sets the outputs and hands it back.  Neither side
 * touches it while the other holds it.
 */
struct api_job {
	enum api_job_kind kind;
	struct api_conn *conn; /* opaque to the worker */
	int64_t t0_ns;         /* when the request was complete */
	/* API_JOB_REQUEST: the head, parsed in place (head owns the text). */
	char *head;
	struct api_request req;
	char *body; /* malloc'd, NUL-terminated; NULL for none */
	size_t body_len;
	bool close; /* the connection closes after the answer */
	/* API_JOB_WAIT, API_JOB_PAGE and the PARK/STREAM outcomes. */
	const char *route; /* metrics label of the request */
	const char *http_method;
	char ws[CM_ID_MAX + 1], space[CM_ID_MAX + 1], task[CM_ID_MAX + 1];
	char rpc[CM_MCP_ID_MAX + 3]; /* a parked MCP call's id ("": none) */
	char progress[CM_MCP_ID_MAX + 3]; /* its progressToken ("": none) */
	int log;             /* its session's log level (mcp_rpc.h; 0: none) */
	bool until_closed;   /* parked for the Space's close, not a task */
	int64_t deadline_ms; /* a parked request's answer is due */
	int64_t after;       /* a page: events after this sequence */
	/* Outputs. */
	enum api_job_outcome outcome;
	char *out; /* malloc'd */
	size_t out_len;
	int64_t last;    /* a page: sequence of its last event */
	size_t n_events; /* a page: events in it */
	bool ending;     /* a page: it holds space_closed */
	struct api_job *next;
};

/*
 * Listens on cfg->http_listen, follows the store's events, and starts the
 * loop and the workers, which call the store on store.  The connection
 * cap is CM_HTTP_CONNS_MAX, or less when the open-file limit is lower.
 * Returns 0, or -1 (logged).
 */
int api_http_start(const struct cm_config *cfg, nng_socket store);
/* Closes every connection and stops the loop and the workers. */
void api_http_stop(void);

/* loop: gives a job to the workers; it comes back through the loop. */
void api_http_queue(struct api_job *j);
/* loop: a job the loop ran itself goes the way of one a worker ran. */
void api_http_done(struct api_job *j);
/* A job and everything it owns; NULL is fine. */
void api_job_free(struct api_job *j);

/* loop: appends n bytes to c's output and starts writing them. */
void api_conn_send(struct api_conn *c, const char *buf, size_t n);
/* loop: bytes of c's output the client has not taken yet. */
size_t api_conn_pending(const struct api_conn *c);
/* loop: ms since c's output was empty or the client last took a byte. */
int64_t api_conn_stalled_ms(const struct api_conn *c, int64_t now_ms);
/* loop: closes c once its output is written. */
void api_conn_end(struct api_conn *c);
/* loop: closes c now, dropping any output. */
void api_conn_cut(struct api_conn *c);
/* loop: c's event stream (NULL: none); events.c owns it. */
struct api_stream *api_conn_stream(const struct api_conn *c);
void api_conn_set_stream(struct api_conn *c, struct api_stream *s);
/* loop: c's viewer of a live view (NULL: none); live.c owns it. */
struct api_viewer *api_conn_viewer(const struct api_conn *c);
void api_conn_set_viewer(struct api_conn *c, struct api_viewer *v);
/* loop: answers c with the error envelope of err (status, or err's own
 * when 0) and closes c once it is written. */
void api_conn_fail(
    struct api_conn *c, int status, enum cm_err err, const char *why);
/* loop: c becomes a stream the loop writes to (an event stream, a live
 * view): its state, and a small send buffer. */
void api_conn_streaming(struct api_conn *c);
/* loop: c's parked wait (NULL: none); wait.c owns it. */
struct api_wait *api_conn_wait(const struct api_conn *c);
void api_conn_set_wait(struct api_conn *c, struct api_wait *w);

/*
 * work.c: the pool.  Starts CM_API_WORKERS threads that run queued jobs
 * on store and write to done_fd (an eventfd) each time one is done.
 * Returns 0, or -1 (logged).
 */
int api_work_start(const struct cm_config *cfg, nng_socket store, int done_fd);
/* Queues a job; any thread. */
void api_work_queue(struct api_job *j);
/*
 * loop: runs request job j on the loop, if its route may run there and
 * needs nothing but what the view holds (api_ctx.on_loop); true when j
 * is answered (as a worker would, api_work_conclude), false when it must
 * go to a worker, untouched.
 */
bool api_work_on_loop(struct api_job *j);
/* The jobs done since the last call, as a list through next. */
struct api_job *api_work_take_done(void);
/* Stops the threads; returns the jobs never run or never taken back. */
struct api_job *api_work_stop(void);
/*
 * After c, the context of j, went through its route (or a parked wait
 * was looked at, wait.h): renders c's answer into j->out and counts it
 * (api_metrics_request), or, when c->later asks for a parked wait or a
 * stream, sets j's outcome and copies what that needs into j.  A
 * worker's, or the loop's for an answer it makes itself; touches no
 * socket.
 */
void api_work_conclude(struct api_job *j, struct api_ctx *c);
/*
 * work.c: a whole response (status line, headers, body, which may be
 * NULL) into *out (malloc'd, caller frees) and *len.  The body is
 * body_len bytes, or NUL-terminated text when body_len is 0.  Every
 * answer says X-Content-Type-Options: nosniff, so a browser takes its
 * Content-Type as given.  headers (static header lines ending in CRLF,
 * at most CM_HTTP_RES_HEADERS_MAX bytes) replace the default
 * Cache-Control: no-store; NULL: the default.  Returns 0, or -1 out of
 * memory or when headers are too long.
 */
int api_render(char **out, size_t *len, int status, const char *content_type,
    const char *headers, const char *body, size_t body_len, bool close);

#endif
