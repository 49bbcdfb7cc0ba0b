/*
 * live.c: the live view on the loop thread (live.h).
 *
 * One watch per Space that has viewers: a REQ socket dialled to the
 * actor's control socket with one asynchronous call handle (rpc.h) at a
 * time, live.watch when the first viewer comes and every
 * CM_LIVE_RENEW_MS after, live.stop when the last one goes; and, once a
 * watch is answered, a SUB socket on the actor's frames, read through its
 * pollable fd with non-blocking receives.  Both fds sit in an epoll set of
 * this module's own, whose fd the connection loop watches: the loop
 * never waits on an actor, which may be slow or gone.
 *
 * A frame is made into its SSE text once, kept as the Space's latest,
 * and written to each viewer whose output is empty; a viewer still
 * writing the last one gets the latest when it has drained (latest
 * wins), so a slow viewer costs one frame in its output, never a queue.
 */
#include "live.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "b64.h"
#include "clock.h"
#include "log.h"
#include "metrics.h"
#include "recv.h"
#include "rpc.h"

struct live_space;

/* What an epoll entry of the module is. */
struct live_mark {
	struct live_space *sp;
	bool sub; /* the frames; otherwise the call's answer */
};

struct api_viewer {
	struct api_conn *conn;
	struct live_space *sp;
	bool started;     /* its head is sent */
	int64_t last_seq; /* the last frame written to it */
	int64_t last_out_ms;
	const char *route, *method; /* for the request's metrics */
	int64_t t0_ns;
	struct api_viewer *prev, *next;
};

struct live_space {
	char ws[CM_ID_MAX + 1], space[CM_ID_MAX + 1];
	struct api_viewer *viewers;
	int n_viewers;
	nng_socket req;
	struct cm_rpc_async *call;
	struct live_mark call_mark, sub_mark;
	enum { CALL_IDLE, CALL_WATCH, CALL_STOP } inflight;
	bool watching; /* the actor answered a watch, not stopped since */
	int64_t next_renew_ms;
	bool sub_open;
	nng_socket sub;
	nng_aio *rx;
	/* The latest frame as SSE text, and its sequence. */
	char *frame;
	size_t frame_len;
	int64_t frame_seq;
	struct live_space *prev, *next;
};

static struct {
	const struct cm_config *cfg;
	int ep;
	struct live_space *list;
	size_t n_spaces;
} lv = {.ep = -1};

static const char live_head[] = "HTTP/1.1 200 OK\r\n"
                                "Content-Type: text/event-stream\r\n"
                                "Cache-Control: no-store\r\n"
                                "X-Content-Type-Options: nosniff\r\n"
                                "Connection: close\r\n\r\n";

int
api_live_open(const struct cm_config *cfg)
{
	lv.cfg = cfg;
	if ((lv.ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		cm_warn("api: live view epoll");
	return lv.ep;
}

static int
ep_add(int fd, struct live_mark *m)
{
	struct epoll_event e = {.events = EPOLLIN, .data.ptr = m};

	return epoll_ctl(lv.ep, EPOLL_CTL_ADD, fd, &e);
}

static void
ep_del(int fd)
{
	if (fd >= 0)
		epoll_ctl(lv.ep, EPOLL_CTL_DEL, fd, NULL);
}

static void
sub_close(struct live_space *sp)
{
	int fd;

	if (!sp->sub_open)
		return;
	if (nng_socket_get_int(sp->sub, NNG_OPT_RECVFD, &fd) == 0)
		ep_del(fd);
	nng_close(sp->sub);
	sp->sub_open = false;
}

static int
sub_open(struct live_space *sp)
{
	char file[CM_ID_MAX + 16], url[CM_IPC_PATH_MAX + 16];
	int rv = NNG_EINVAL, fd = -1;

	if (sp->sub_open)
		return 0;
	snprintf(file, sizeof(file), "live-%s.ipc", sp->space);
	if (cm_ipc_url(url, sizeof(url), lv.cfg->run_dir, file) == 0 &&
	    (rv = cm_sub_open(
	         &sp->sub, "", CM_LIVE_SUB_BUF, CM_LIVE_MSG_MAX)) == 0) {
		if ((rv = nng_dial(sp->sub, url, NULL, NNG_FLAG_NONBLOCK)) ==
		        0 &&
		    (rv = nng_socket_get_int(sp->sub, NNG_OPT_RECVFD, &fd)) ==
		        0 &&
		    (rv = ep_add(fd, &sp->sub_mark) != 0 ? NNG_EINTERNAL : 0) ==
		        0) {
			sp->sub_open = true;
			return 0;
		}
		nng_close(sp->sub);
	}
	cm_warnx("api: cannot follow the frames of space %s: %s", sp->space,
	    nng_strerror(rv));
	return -1;
}

static struct live_space *
space_new(const char *ws, const char *space)
{
	struct live_space *sp;
	char file[CM_ID_MAX + 16], url[CM_IPC_PATH_MAX + 16];

	if (lv.n_spaces >= CM_LIVE_SPACES_MAX ||
	    (sp = calloc(1, sizeof(*sp))) == NULL)
		return NULL;
	snprintf(sp->ws, sizeof(sp->ws), "%s", ws);
	snprintf(sp->space, sizeof(sp->space), "%s", space);
	sp->call_mark.sp = sp->sub_mark.sp = sp;
	sp->sub_mark.sub = true;
	snprintf(file, sizeof(file), "ctl-%s.ipc", space);
	if (cm_ipc_url(url, sizeof(url), lv.cfg->run_dir, file) != 0 ||
	    nng_aio_alloc(&sp->rx, NULL, NULL) != 0) {
		free(sp);
		return NULL;
	}
	if (cm_rpc_open(&sp->req, url) != 0 ||
	    cm_rpc_async_open(&sp->call, sp->req) != 0 ||
	    ep_add(cm_rpc_async_fd(sp->call), &sp->call_mark) != 0) {
		cm_rpc_async_close(sp->call);
		nng_close(sp->req);
		nng_aio_free(sp->rx);
		free(sp);
		return NULL;
	}
	sp->next = lv.list;
	if (lv.list)
		lv.list->prev = sp;
	lv.list = sp;
	lv.n_spaces++;
	return sp;
}

static void
space_free(struct live_space *sp)
{
	if (sp->prev)
		sp->prev->next = sp->next;
	else
		lv.list = sp->next;
	if (sp->next)
		sp->next->prev = sp->prev;
	lv.n_spaces--;
	sub_close(sp);
	ep_del(cm_rpc_async_fd(sp->call));
	cm_rpc_async_close(sp->call);
	nng_close(sp->req);
	nng_aio_free(sp->rx);
	free(sp->frame);
	free(sp);
}

static struct live_space *
space_find(const char *space)
{
	for (struct live_space *sp = lv.list; sp != NULL; sp = sp->next)
		if (strcmp(sp->space, space) == 0)
			return sp;
	return NULL;
}

static void
call(struct live_space *sp, enum pr_op op)
{
	struct pr_req q;

	memset(&q, 0, sizeof(q));
	q.op = op;
	q.space_id = sp->space;
	if (cm_rpc_async_start(sp->call, &q, CM_LIVE_CALL_MS, 1) == CM_OK)
		sp->inflight = op == PR_OP_LIVE_WATCH ? CALL_WATCH : CALL_STOP;
}

static void
viewer_send(struct api_viewer *v, const char *p, size_t n)
{
	api_conn_send(v->conn, p, n);
	v->last_out_ms = cm_mono_ms();
}

static void
viewer_frame(struct api_viewer *v)
{
	struct live_space *sp = v->sp;

	if (!v->started || sp->frame == NULL || v->last_seq >= sp->frame_seq ||
	    api_conn_pending(v->conn) > 0)
		return;
	viewer_send(v, sp->frame, sp->frame_len);
	v->last_seq = sp->frame_seq;
	api_metrics_live_frame(sp->frame_len);
}

static void
viewer_start(struct api_viewer *v)
{
	v->started = true;
	api_metrics_request(
	    v->route, v->method, 200, (double)(cm_mono_ns() - v->t0_ns) / 1e9);
	viewer_send(v, live_head, sizeof(live_head) - 1);
	viewer_frame(v); /* the screen as it is, for a viewer who joins */
}

/* Takes v off its Space (its connection goes on, or is closing). */
static void
viewer_drop(struct api_viewer *v)
{
	struct live_space *sp = v->sp;

	if (v->prev)
		v->prev->next = v->next;
	else
		sp->viewers = v->next;
	if (v->next)
		v->next->prev = v->prev;
	sp->n_viewers--;
	api_metrics_live_viewers(-1);
	api_conn_set_viewer(v->conn, NULL);
	free(v);
}

/* Ends every viewer of sp: the ones not started with err (an answer),
 * the others at the end of what they were sent. */
static void
viewers_end(struct live_space *sp, enum cm_err err, const char *why)
{
	while (sp->viewers != NULL) {
		struct api_viewer *v = sp->viewers;
		struct api_conn *c = v->conn;
		bool started = v->started;
		const char *route = v->route, *method = v->method;
		int64_t t0 = v->t0_ns;

		viewer_drop(v);
		if (started) {
			api_conn_end(c);
			continue;
		}
		api_metrics_request(route, method, cm_err_http(err),
		    (double)(cm_mono_ns() - t0) / 1e9);
		api_conn_fail(c, 0, err, why);
	}
}

/* What the Space's watch needs next, once no call is under way. */
static void
advance(struct live_space *sp, int64_t now)
{
	if (sp->inflight != CALL_IDLE)
		return;
	if (sp->n_viewers > 0) {
		if (!sp->watching || now >= sp->next_renew_ms)
			call(sp, PR_OP_LIVE_WATCH);
		return;
	}
	if (sp->watching) {
		call(sp, PR_OP_LIVE_STOP);
		if (sp->inflight == CALL_STOP)
			return;
	}
	space_free(sp);
}

static void
answered(struct live_space *sp)
{
	struct pr_rep r;
	int was = sp->inflight;
	int64_t now = cm_mono_ms();

	if (!cm_rpc_async_take(sp->call, &r, NULL))
		return;
	sp->inflight = CALL_IDLE;
	if (was == CALL_STOP) {
		sp->watching = false;
		sub_close(sp);
	} else if (r.err == CM_OK) {
		sp->watching = true;
		sp->next_renew_ms = now + CM_LIVE_RENEW_MS;
		if (sub_open(sp) != 0) {
			viewers_end(sp, CM_E_INTERNAL,
			    "the frames of the Space cannot be followed");
		} else {
			for (struct api_viewer *v = sp->viewers; v; v = v->next)
				if (!v->started)
					viewer_start(v);
		}
	} else {
		/* The actor is gone, or says it cannot show a screen. */
		bool transport = r.err == CM_E_STORE_UNAVAILABLE;

		sp->watching = false;
		sub_close(sp);
		viewers_end(sp, transport ? CM_E_RUNTIME_NOT_READY : r.err,
		    transport ? "the Space's browser did not answer"
		    : r.msg   ? r.msg
		              : "the Space cannot be watched now");
	}
	pr_rep_free(&r);
	advance(sp, now);
}

/* The frame message m of sp's actor as SSE text: an event "frame" whose
 * data is {seq, width, height, at, jpeg}. */
static void
took_frame(struct live_space *sp, nng_msg *m)
{
	struct pr_arena arena = {0};
	struct pr_frame f;
	char err[128], *text;
	size_t room, n;
	int head;

	if (pr_frame_decode(nng_msg_body(m), nng_msg_len(m), &f, &arena, err,
	        sizeof(err)) != 0) {
		cm_warnx("api: bad frame from the actor of space %s: %s",
		    sp->space, err);
		pr_arena_free(&arena);
		return;
	}
	room = CM_B64_LEN(f.jpeg.n) + 192;
	if ((text = malloc(room)) != NULL) {
		head = snprintf(text, room,
		    "event: frame\ndata: {\"seq\":%lld,\"width\":%lld,"
		    "\"height\":%lld,\"at\":%lld,\"jpeg\":\"",
		    (long long)f.seq, (long long)f.width, (long long)f.height,
		    (long long)f.at);
		n = (size_t)head +
		    cm_b64_encode(f.jpeg.p, f.jpeg.n, text + head);
		memcpy(text + n, "\"}\n\n", 4);
		free(sp->frame);
		sp->frame = text;
		sp->frame_len = n + 4;
		sp->frame_seq++;
	}
	pr_arena_free(&arena);
}

static void
frames(struct live_space *sp)
{
	nng_msg *m, *last = NULL;

	/* Only the latest counts: the ones before it are already late. */
	while (sp->sub_open && cm_recv_try(sp->sub, sp->rx, &m) == 0) {
		nng_msg_free(last);
		last = m;
	}
	if (last == NULL)
		return;
	took_frame(sp, last);
	nng_msg_free(last);
	for (struct api_viewer *v = sp->viewers, *next; v != NULL; v = next) {
		next = v->next;
		viewer_frame(v);
	}
}

void
api_live_run(void)
{
	struct epoll_event evs[CM_HTTP_EPOLL_BATCH];
	int n = epoll_wait(lv.ep, evs, CM_HTTP_EPOLL_BATCH, 0);

	for (int i = 0; i < n; i++) {
		struct live_mark *mk = evs[i].data.ptr;

		/* A Space freed earlier in this pass took its entries out of
		 * the set, but this pass's events may still name them. */
		bool live = false;

		for (struct live_space *sp = lv.list; sp; sp = sp->next)
			live = live || sp == mk->sp;
		if (!live)
			continue;
		if (mk->sub)
			frames(mk->sp);
		else
			answered(mk->sp);
	}
}

void
api_live_tick(int64_t now)
{
	static const char beat[] = ": heartbeat\n\n";

	for (struct live_space *sp = lv.list, *snext; sp != NULL; sp = snext) {
		snext = sp->next;
		for (struct api_viewer *v = sp->viewers, *next; v; v = next) {
			next = v->next;
			if (api_conn_stalled_ms(v->conn, now) >=
			    CM_LIVE_STALL_MS) {
				cm_info("api: cutting off a slow viewer of "
				        "space %s",
				    sp->space);
				api_conn_cut(v->conn); /* drops v */
			} else if (v->started &&
			           api_conn_pending(v->conn) == 0 &&
			           now - v->last_out_ms >=
			               CM_SSE_HEARTBEAT_MS) {
				viewer_send(v, beat, sizeof(beat) - 1);
			}
		}
	}
	for (struct live_space *sp = lv.list, *snext; sp != NULL; sp = snext) {
		snext = sp->next;
		advance(sp, now); /* may free sp */
	}
}

void
api_live_attach(struct api_conn *c, const struct api_job *j)
{
	struct live_space *sp = space_find(j->space);
	struct api_viewer *v;

	if (sp == NULL && (sp = space_new(j->ws, j->space)) == NULL) {
		api_metrics_request(j->route, j->http_method, 503,
		    (double)(cm_mono_ns() - j->t0_ns) / 1e9);
		api_conn_fail(c, 0, CM_E_OVERLOADED,
		    "too many Spaces are watched through this api");
		return;
	}
	if (sp->n_viewers >= CM_VIEWERS_MAX ||
	    (v = calloc(1, sizeof(*v))) == NULL) {
		api_metrics_request(j->route, j->http_method, 429,
		    (double)(cm_mono_ns() - j->t0_ns) / 1e9);
		api_conn_fail(c, 0, CM_E_VIEWERS_EXCEEDED,
		    "the Space has " CM_STR(CM_VIEWERS_MAX) " viewers already");
		advance(sp, cm_mono_ms()); /* a Space made for nothing goes */
		return;
	}
	v->conn = c;
	v->sp = sp;
	v->route = j->route;
	v->method = j->http_method;
	v->t0_ns = j->t0_ns;
	v->next = sp->viewers;
	if (sp->viewers)
		sp->viewers->prev = v;
	sp->viewers = v;
	sp->n_viewers++;
	api_metrics_live_viewers(1);
	api_conn_streaming(c);
	api_conn_set_viewer(c, v);
	if (sp->watching && sp->sub_open)
		viewer_start(v);
	advance(sp, cm_mono_ms());
}

void
api_live_drained(struct api_conn *c)
{
	struct api_viewer *v = api_conn_viewer(c);

	if (v != NULL)
		viewer_frame(v);
}

void
api_live_forget(struct api_conn *c)
{
	struct api_viewer *v = api_conn_viewer(c);
	struct live_space *sp;

	if (v == NULL)
		return;
	sp = v->sp;
	viewer_drop(v);
	advance(sp, cm_mono_ms()); /* the last one gone: live.stop */
}

void
api_live_close(void)
{
	/* The loop has closed every connection, and with it every viewer;
	 * a watch left runs out with its lease. */
	while (lv.list != NULL) {
		lv.list->n_viewers = 0;
		lv.list->viewers = NULL;
		space_free(lv.list);
	}
	if (lv.ep >= 0)
		close(lv.ep);
	lv.ep = -1;
}

void
api_live_route(struct api_ctx *c)
{
	char file[CM_ID_MAX + 16], url[CM_IPC_PATH_MAX + 16];
	struct pr_rep sp;
	struct stat st;
	bool closed;

	if (!api_space_for(c, CM_ACT_SPACE_READ, &sp)) {
		pr_rep_free(&sp);
		return;
	}
	closed = sp.spaces[0].status != NULL &&
	         strcmp(sp.spaces[0].status, "closed") == 0;
	pr_rep_free(&sp);
	if (closed) {
		api_fail(c, 0, CM_E_SPACE_CLOSED, "the Space is closed");
		return;
	}
	/* The actor binds its control socket once its runtime is open and
	 * removes it when it ends: none, nothing to watch. */
	snprintf(file, sizeof(file), "ctl-%s.ipc", c->space_id);
	if (cm_ipc_url(url, sizeof(url), c->cfg->run_dir, file) != 0 ||
	    stat(url + strlen("ipc://"), &st) != 0) {
		api_fail(c, 0, CM_E_RUNTIME_NOT_READY,
		    "the Space's browser is not running (its actor has not "
		    "started yet, or has stopped)");
		return;
	}
	c->later = API_LATER_LIVE;
}
