/*
 * http.c: the connection loop.  One thread, one epoll set: the listening
 * socket, every client socket (non-blocking), the store's event feed and
 * an eventfd on which workers hand jobs back.
 *
 * Why not nng's HTTP server: in nng 1.5.2 a request head is read with no
 * deadline, connections are not capped, a head over its 8 KiB buffer or
 * an unparsable one closes the connection with no answer, and a body is
 * read only by blocking a thread.  A client that sends slowly, or not at
 * all, then holds whatever waits for it.  Here nothing waits for a
 * client: a connection is a state and a deadline, and a stalled one
 * costs a slot and its buffers until its deadline closes it.
 * What a connection does with what it reads is api/conn.c's business.
 */
#include "http.h"

#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "conn.h"
#include "events.h"
#include "live.h"
#include "log.h"
#include "view.h"
#include "wait.h"

/* The workers share one socket to the store. */
_Static_assert(CM_API_WORKERS <= CM_RPC_OUTSTANDING_MAX,
    "more workers than requests one socket may have outstanding");

static struct {
	const struct cm_config *cfg;
	nng_socket store;
	int ep, lfd, done_fd, feed_fd, live_fd;
	pthread_t loop;
	atomic_bool stop;
	size_t cap;
	int64_t accept_paused_until;
} h = {.ep = -1, .lfd = -1, .done_fd = -1};

/* Markers for the epoll entries that are not connections. */
static char mark_listen, mark_done, mark_feed, mark_live;

/* --- the loop ------------------------------------------------------- */

static void
accept_some(int64_t now)
{
	for (int i = 0; i < CM_HTTP_ACCEPT_BATCH; i++) {
		int fd =
		    accept4(h.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				/* Level-triggered, a full table would spin:
				 * stop listening for a moment. */
				cm_warn("api: accept");
				epoll_ctl(h.ep, EPOLL_CTL_DEL, h.lfd, NULL);
				h.accept_paused_until =
				    now + CM_HTTP_ACCEPT_PAUSE_MS;
			}
			return;
		}
		api_conn_accept(fd, h.cap, now);
	}
}

static void
jobs_done(int64_t now)
{
	struct api_job *j;
	uint64_t n;

	if (read(h.done_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		cm_warn("api: done queue");
	for (j = api_work_take_done(); j != NULL;) {
		struct api_job *next = j->next;

		api_conn_job_done(j, now);
		j = next;
	}
}

static void
sweep(int64_t now)
{
	api_conns_sweep(now);
	if (h.accept_paused_until != 0 && now >= h.accept_paused_until) {
		struct epoll_event e = {
		    .events = EPOLLIN, .data.ptr = &mark_listen};

		h.accept_paused_until = 0;
		if (epoll_ctl(h.ep, EPOLL_CTL_ADD, h.lfd, &e) != 0)
			cm_warn("api: epoll_ctl");
	}
	api_events_tick(now);
	api_live_tick(now);
	api_wait_tick(now);
}

static void *
loop_main(void *arg)
{
	struct epoll_event evs[CM_HTTP_EPOLL_BATCH];
	int64_t next_tick = cm_mono_ms() + CM_HTTP_TICK_MS;

	(void)arg;
	while (!atomic_load(&h.stop)) {
		int64_t now = cm_mono_ms();
		int n = epoll_wait(h.ep, evs, CM_HTTP_EPOLL_BATCH,
		    next_tick > now ? (int)(next_tick - now) : 0);

		if (n < 0 && errno != EINTR) {
			cm_warn("api: epoll_wait");
			break;
		}
		now = cm_mono_ms();
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;

			if (p == &mark_listen)
				accept_some(now);
			else if (p == &mark_done)
				jobs_done(now);
			else if (p == &mark_feed)
				api_events_feed();
			else if (p == &mark_live)
				api_live_run();
			else
				api_conn_event(p, evs[i].events, now);
		}
		if (now >= next_tick) {
			sweep(now);
			next_tick = now + CM_HTTP_TICK_MS;
		}
		api_conns_bury();
	}
	api_conns_close_all();
	return NULL;
}

/* --- start and stop ------------------------------------------------- */

/* Binds host:port (a host in brackets for IPv6). */
static int
listen_on(const char *spec)
{
	char host[CM_CONF_VALUE_MAX];
	const char *colon = strrchr(spec, ':');
	struct addrinfo hints, *ai = NULL;
	int fd = -1, one = 1;
	size_t n;

	if (colon == NULL)
		return -1;
	n = (size_t)(colon - spec);
	if (n >= 2 && spec[0] == '[' && spec[n - 1] == ']') {
		spec++;
		n -= 2;
	}
	snprintf(host, sizeof(host), "%.*s", (int)n, spec);
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if (getaddrinfo(host[0] && strcmp(host, "*") != 0 ? host : NULL,
	        colon + 1, &hints, &ai) != 0)
		return -1;
	if ((fd = socket(ai->ai_family,
	         SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
	    listen(fd, SOMAXCONN) != 0) {
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

/* The connection cap: CM_HTTP_CONNS_MAX, within the open-file limit. */
static size_t
conn_cap(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < (rlim_t)CM_HTTP_CONNS_MAX + CM_HTTP_FD_RESERVE) {
		if (rl.rlim_cur <= (rlim_t)CM_HTTP_FD_RESERVE * 2)
			return (size_t)rl.rlim_cur / 2; /* a tiny limit */
		return (size_t)rl.rlim_cur - CM_HTTP_FD_RESERVE;
	}
	return CM_HTTP_CONNS_MAX;
}

static int
add(int fd, void *mark)
{
	struct epoll_event e = {.events = EPOLLIN, .data.ptr = mark};

	return epoll_ctl(h.ep, EPOLL_CTL_ADD, fd, &e);
}

int
api_http_start(const struct cm_config *cfg, nng_socket store)
{
	h.cfg = cfg;
	h.store = store;
	h.cap = conn_cap();
	api_view_start(cfg);
	if ((h.feed_fd = api_events_open(cfg)) < 0)
		return -1;
	if ((h.live_fd = api_live_open(cfg)) < 0)
		return -1;
	if ((h.lfd = listen_on(cfg->http_listen)) < 0) {
		cm_warn("api: cannot listen on %s", cfg->http_listen);
		return -1;
	}
	if ((h.ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    (h.done_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
	    add(h.lfd, &mark_listen) != 0 || add(h.done_fd, &mark_done) != 0 ||
	    add(h.feed_fd, &mark_feed) != 0 ||
	    add(h.live_fd, &mark_live) != 0) {
		cm_warn("api: epoll");
		return -1;
	}
	api_conns_init(h.ep);
	if (api_work_start(cfg, store, h.done_fd) != 0)
		return -1;
	if (pthread_create(&h.loop, NULL, loop_main, NULL) != 0) {
		cm_warnx("api: cannot start the connection loop");
		return -1;
	}
	cm_info("api: at most %zu connections", h.cap);
	return 0;
}

void
api_http_stop(void)
{
	uint64_t one = 1;

	atomic_store(&h.stop, true);
	if (write(h.done_fd, &one, sizeof(one)) < 0)
		cm_warn("api: waking the loop");
	pthread_join(h.loop, NULL);
	/* Jobs no worker took, or that came back after the loop stopped. */
	for (struct api_job *j = api_work_stop(), *next; j != NULL; j = next) {
		next = j->next;
		api_conn_job_done(j, cm_mono_ms()); /* closed: dropped */
	}
	api_conns_bury();
	api_live_close();
	api_events_close();
	api_view_stop();
	close(h.lfd);
	close(h.done_fd);
	close(h.ep);
}
