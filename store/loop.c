/*
 * loop.c: one thread, one poll() over the REP socket's receive fd and a
 * signalfd.  A raw REP socket lets the thread hold many requests at once,
 * which is what makes group commit possible (DESIGN 1).
 */
#include "loop.h"

#include <errno.h>
#include <nng/nng.h>
#include <nng/protocol/pubsub0/pub.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/transport/ipc/ipc.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "clock.h"
#include "limits.h"
#include "log.h"

#define ST_PRUNE_EVERY_MS 60000

static void
loop_publish(void *arg, const void *buf, size_t len)
{
	nng_socket *pub = arg;
	nng_msg *m;

	if (nng_msg_alloc(&m, 0) != 0)
		return;
	if (nng_msg_append(m, buf, len) != 0 ||
	    nng_sendmsg(*pub, m, NNG_FLAG_NONBLOCK) != 0)
		nng_msg_free(m); /* subscribers recover from sequence gaps */
}

static int
listen_private(nng_socket s, const char *url)
{
	nng_listener l;
	int rv;

	if ((rv = nng_listener_create(&l, s, url)) != 0)
		return rv;
	/* Only the service's own user talks to the store. */
	if (strncmp(url, "ipc://", 6) == 0)
		nng_listener_set_int(l, NNG_OPT_IPC_PERMISSIONS, 0600);
	return nng_listener_start(l, 0);
}

static uint64_t st_requests, st_groups;

/* Receives up to CM_GROUP_COMMIT_MAX waiting requests, commits, replies. */
static void
serve_batch(struct st_store *st, nng_socket rep, nng_socket *pub)
{
	static nng_msg *msgs[CM_GROUP_COMMIT_MAX];
	static struct st_item items[CM_GROUP_COMMIT_MAX];
	size_t n = 0;

	while (n < CM_GROUP_COMMIT_MAX &&
	       nng_recvmsg(rep, &msgs[n], NNG_FLAG_NONBLOCK) == 0) {
		items[n].req = nng_msg_body(msgs[n]);
		items[n].req_len = nng_msg_len(msgs[n]);
		n++;
	}
	if (n == 0)
		return;
	st_requests += n;
	st_groups++;
	st_store_exec(st, items, n, loop_publish, pub);
	for (size_t i = 0; i < n; i++) {
		/* The raw header routes the reply back to its requester. */
		nng_msg_clear(msgs[i]);
		if (items[i].rep == NULL ||
		    nng_msg_append(msgs[i], items[i].rep, items[i].rep_len) !=
		        0 ||
		    nng_sendmsg(rep, msgs[i], 0) != 0)
			nng_msg_free(msgs[i]); /* the requester re-sends */
		free(items[i].rep);
	}
}

int
st_loop_run(struct st_store *st, const char *rep_url, const char *pub_url,
    int notify_fd)
{
	nng_socket rep, pub;
	struct pollfd pfd[2];
	sigset_t mask;
	int rv, recv_fd, sig_fd;
	int64_t next_prune = cm_mono_ms();

	if ((rv = nng_rep0_open_raw(&rep)) != 0 ||
	    (rv = nng_socket_set_size(rep, NNG_OPT_RECVMAXSZ, CM_MSG_MAX)) !=
	        0 ||
	    (rv = nng_socket_set_int(
	         rep, NNG_OPT_RECVBUF, CM_GROUP_COMMIT_MAX)) != 0 ||
	    (rv = listen_private(rep, rep_url)) != 0 ||
	    (rv = nng_socket_get_int(rep, NNG_OPT_RECVFD, &recv_fd)) != 0) {
		cm_warnx(
		    "store: cannot serve %s: %s", rep_url, nng_strerror(rv));
		return -1;
	}
	if ((rv = nng_pub0_open(&pub)) != 0 ||
	    (rv = nng_socket_set_int(pub, NNG_OPT_SENDBUF, CM_PUB_BUF)) != 0 ||
	    (rv = listen_private(pub, pub_url)) != 0) {
		cm_warnx("store: cannot publish on %s: %s", pub_url,
		    nng_strerror(rv));
		nng_close(rep);
		return -1;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	if ((sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		cm_warn("store: signalfd");
		nng_close(rep);
		nng_close(pub);
		return -1;
	}

	if (notify_fd >= 0) {
		static const char ready[] = "ready\n";
		if (write(notify_fd, ready, sizeof(ready) - 1) < 0)
			cm_warn("store: readiness notification");
		close(notify_fd);
	}
	cm_info("store: serving %s, publishing %s", rep_url, pub_url);

	pfd[0].fd = recv_fd;
	pfd[0].events = POLLIN;
	pfd[1].fd = sig_fd;
	pfd[1].events = POLLIN;
	for (;;) {
		int64_t now = cm_mono_ms();
		int wait = next_prune > now ? (int)(next_prune - now) : 0;

		if (poll(pfd, 2, wait) < 0 && errno != EINTR) {
			cm_warn("store: poll");
			break;
		}
		if (pfd[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(sig_fd, &si, sizeof(si)) == sizeof(si)) {
				cm_info(
				    "store: signal %u, stopping", si.ssi_signo);
				break;
			}
		}
		if (pfd[0].revents & POLLIN)
			serve_batch(st, rep, &pub);
		/* The one place the periodic job runs. */
		if (cm_mono_ms() >= next_prune) {
			st_store_prune(st);
			next_prune = cm_mono_ms() + ST_PRUNE_EVERY_MS;
		}
	}
	cm_info("store: served %llu requests in %llu group commits",
	    (unsigned long long)st_requests, (unsigned long long)st_groups);
	close(sig_fd);
	nng_close(rep);
	nng_close(pub);
	return 0;
}
