/*
 * curlm.c: a curl multi handle under an epoll set (see curlm.h).
 *
 * curl_multi_fdset cannot report an fd above FD_SETSIZE, and the
 * supervisor holds thousands of fds with many actors, so curl tells us
 * its sockets (CURLMOPT_SOCKETFUNCTION) and its next timeout
 * (CURLMOPT_TIMERFUNCTION) and both go into an epoll set with a timerfd.
 */
#include "curlm.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "curlfn.h"
#include "limits.h"

struct cm_curlm {
	CURLM *multi;
	int ep;    /* epoll: curl's sockets and the timer */
	int timer; /* timerfd: curl's next timeout */
};

static int
curlm_socket(CURL *e, curl_socket_t s, int what, void *userp, void *socketp)
{
	struct cm_curlm *m = userp;
	struct epoll_event ev = {0};

	(void)e;
	(void)socketp;
	if (what == CURL_POLL_REMOVE) {
		/* The fd may be closed already: then it left the set. */
		epoll_ctl(m->ep, EPOLL_CTL_DEL, s, NULL);
		return 0;
	}
	ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0) |
	            (what & CURL_POLL_OUT ? EPOLLOUT : 0);
	ev.data.fd = s;
	if (epoll_ctl(m->ep, EPOLL_CTL_MOD, s, &ev) != 0 &&
	    (errno != ENOENT || epoll_ctl(m->ep, EPOLL_CTL_ADD, s, &ev) != 0))
		return -1;
	return 0;
}

static int
curlm_timer(CURLM *multi, long timeout_ms, void *userp)
{
	struct cm_curlm *m = userp;
	struct itimerspec its = {0};

	(void)multi;
	if (timeout_ms >= 0) {
		/* 0 means at once: a timerfd needs a non-zero time to fire. */
		its.it_value.tv_sec = timeout_ms / 1000;
		its.it_value.tv_nsec = (timeout_ms % 1000) * 1000000L;
		if (timeout_ms == 0)
			its.it_value.tv_nsec = 1;
	}
	return timerfd_settime(m->timer, 0, &its, NULL) == 0 ? 0 : -1;
}

int
cm_curlm_new(struct cm_curlm **out)
{
	struct cm_curlm *m = calloc(1, sizeof(*m));
	struct epoll_event ev = {.events = EPOLLIN};

	*out = NULL;
	if (m == NULL || cm_curl_load() != 0) {
		free(m);
		return -1;
	}
	m->ep = m->timer = -1;
	if ((m->ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    (m->timer = timerfd_create(
	         CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0 ||
	    (m->multi = cm_curl.multi_init()) == NULL)
		goto fail;
	ev.data.fd = m->timer;
	if (epoll_ctl(m->ep, EPOLL_CTL_ADD, m->timer, &ev) != 0 ||
	    cm_curl.multi_setopt(
	        m->multi, CURLMOPT_SOCKETFUNCTION, curlm_socket) != CURLM_OK ||
	    cm_curl.multi_setopt(m->multi, CURLMOPT_SOCKETDATA, m) !=
	        CURLM_OK ||
	    cm_curl.multi_setopt(
	        m->multi, CURLMOPT_TIMERFUNCTION, curlm_timer) != CURLM_OK ||
	    cm_curl.multi_setopt(m->multi, CURLMOPT_TIMERDATA, m) != CURLM_OK)
		goto fail;
	*out = m;
	return 0;
fail:
	cm_curlm_free(m);
	return -1;
}

void
cm_curlm_free(struct cm_curlm *m)
{
	if (m == NULL)
		return;
	if (m->multi != NULL)
		cm_curl.multi_cleanup(m->multi);
	if (m->timer >= 0)
		close(m->timer);
	if (m->ep >= 0)
		close(m->ep);
	free(m);
}

int
cm_curlm_fd(const struct cm_curlm *m)
{
	return m->ep;
}

int
cm_curlm_add(struct cm_curlm *m, CURL *e)
{
	return cm_curl.multi_add_handle(m->multi, e) == CURLM_OK ? 0 : -1;
}

void
cm_curlm_remove(struct cm_curlm *m, CURL *e)
{
	cm_curl.multi_remove_handle(m->multi, e);
}

void
cm_curlm_step(struct cm_curlm *m)
{
	struct epoll_event evs[CM_CURLM_EVENTS];
	int n, running;

	n = epoll_wait(m->ep, evs, CM_CURLM_EVENTS, 0);
	for (int i = 0; i < n; i++) {
		int fd = evs[i].data.fd, flags = 0;

		if (fd == m->timer) {
			uint64_t ticks;

			if (read(m->timer, &ticks, sizeof(ticks)) < 0 &&
			    errno != EAGAIN)
				continue;
			cm_curl.multi_socket_action(
			    m->multi, CURL_SOCKET_TIMEOUT, 0, &running);
			continue;
		}
		if (evs[i].events & EPOLLIN)
			flags |= CURL_CSELECT_IN;
		if (evs[i].events & EPOLLOUT)
			flags |= CURL_CSELECT_OUT;
		if (evs[i].events & (EPOLLERR | EPOLLHUP))
			flags |= CURL_CSELECT_ERR;
		cm_curl.multi_socket_action(m->multi, fd, flags, &running);
	}
}

CURL *
cm_curlm_done(struct cm_curlm *m, CURLcode *rc)
{
	CURLMsg *msg;
	int left;

	while ((msg = cm_curl.multi_info_read(m->multi, &left)) != NULL) {
		if (msg->msg == CURLMSG_DONE) {
			*rc = msg->data.result;
			return msg->easy_handle;
		}
	}
	return NULL;
}
