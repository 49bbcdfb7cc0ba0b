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
#include <nng/supplemental/util/platform.h>
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

/*
 * Replies leave asynchronously.  nng_sendmsg waits for one of nng's task
 * threads to acknowledge every message, a thread handoff per reply on the
 * loop's critical path; an aio from this pool carries it instead, and
 * its callback returns the slot.  With every slot in flight a reply waits
 * the plain way.
 */
struct reply_slot {
	struct replier *r;
	nng_aio *aio;
	int idx;
};

struct replier {
	nng_socket sock;
	nng_mtx *mtx;
	struct reply_slot slot[CM_GROUP_COMMIT_MAX];
	int free[CM_GROUP_COMMIT_MAX];
	int n_free;
};

static void
reply_sent(void *arg)
{
	struct reply_slot *sl = arg;
	struct replier *r = sl->r;

	if (nng_aio_result(sl->aio) != 0)
		nng_msg_free(nng_aio_get_msg(sl->aio)); /* the requester
		                                           re-sends */
	nng_mtx_lock(r->mtx);
	r->free[r->n_free++] = sl->idx;
	nng_mtx_unlock(r->mtx);
}

static int
replier_init(struct replier *r, nng_socket sock)
{
	int rv;

	memset(r, 0, sizeof(*r));
	r->sock = sock;
	if ((rv = nng_mtx_alloc(&r->mtx)) != 0)
		return rv;
	for (int i = 0; i < CM_GROUP_COMMIT_MAX; i++) {
		r->slot[i].r = r;
		r->slot[i].idx = i;
		if ((rv = nng_aio_alloc(
		         &r->slot[i].aio, reply_sent, &r->slot[i])) != 0)
			return rv;
		r->free[r->n_free++] = i;
	}
	return 0;
}

/* After the socket is closed: waits for every reply still in flight. */
static void
replier_fini(struct replier *r)
{
	for (int i = 0; i < CM_GROUP_COMMIT_MAX; i++)
		nng_aio_free(r->slot[i].aio);
	if (r->mtx != NULL)
		nng_mtx_free(r->mtx);
}

static void
reply_send(struct replier *r, nng_msg *m)
{
	int idx = -1;

	nng_mtx_lock(r->mtx);
	if (r->n_free > 0)
		idx = r->free[--r->n_free];
	nng_mtx_unlock(r->mtx);
	if (idx < 0) {
		if (nng_sendmsg(r->sock, m, 0) != 0)
			nng_msg_free(m);
		return;
	}
	nng_aio_set_msg(r->slot[idx].aio, m);
	nng_send_aio(r->sock, r->slot[idx].aio);
}

/* Receives up to CM_GROUP_COMMIT_MAX waiting requests, commits, replies. */
static void
serve_batch(
    struct st_store *st, nng_socket rep, struct replier *out, nng_socket *pub)
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
		        0)
			nng_msg_free(msgs[i]); /* the requester re-sends */
		else
			reply_send(out, msgs[i]);
		free(items[i].rep);
	}
}

int
st_loop_run(struct st_store *st, const char *rep_url, const char *pub_url,
    int notify_fd)
{
	static struct replier out;
	nng_socket rep = NNG_SOCKET_INITIALIZER, pub = NNG_SOCKET_INITIALIZER;
	struct pollfd pfd[2];
	sigset_t mask;
	int rv, recv_fd, sig_fd = -1, rc = -1;
	int64_t next_prune = cm_mono_ms();

	if ((rv = nng_rep0_open_raw(&rep)) != 0 ||
	    (rv = nng_socket_set_size(rep, NNG_OPT_RECVMAXSZ, CM_MSG_MAX)) !=
	        0 ||
	    (rv = nng_socket_set_int(
	         rep, NNG_OPT_RECVBUF, CM_GROUP_COMMIT_MAX)) != 0 ||
	    (rv = replier_init(&out, rep)) != 0 ||
	    (rv = listen_private(rep, rep_url)) != 0 ||
	    (rv = nng_socket_get_int(rep, NNG_OPT_RECVFD, &recv_fd)) != 0) {
		cm_warnx(
		    "store: cannot serve %s: %s", rep_url, nng_strerror(rv));
		goto out;
	}
	if ((rv = nng_pub0_open(&pub)) != 0 ||
	    (rv = nng_socket_set_int(pub, NNG_OPT_SENDBUF, CM_PUB_BUF)) != 0 ||
	    (rv = listen_private(pub, pub_url)) != 0) {
		cm_warnx("store: cannot publish on %s: %s", pub_url,
		    nng_strerror(rv));
		goto out;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	if ((sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		cm_warn("store: signalfd");
		goto out;
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
			serve_batch(st, rep, &out, &pub);
		/* The one place the periodic job runs. */
		if (cm_mono_ms() >= next_prune) {
			st_store_prune(st);
			next_prune = cm_mono_ms() + ST_PRUNE_EVERY_MS;
		}
	}
	cm_info("store: served %llu requests in %llu group commits",
	    (unsigned long long)st_requests, (unsigned long long)st_groups);
	rc = 0;
out:
	if (sig_fd >= 0)
		close(sig_fd);
	nng_close(rep);
	nng_close(pub);
	replier_fini(&out);
	return rc;
}
