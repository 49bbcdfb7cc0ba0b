/*
 * loop.c: one thread, one poll() over the REP socket's receive fd and a
 * signalfd.  A raw REP socket lets the thread hold many requests at once,
 * which is what makes group commit possible.
 *
 * A group's commit does not wait for the disk: the loop hands each
 * committed group to the acker thread (acker.h), which makes it durable
 * and only then publishes its events and sends its replies.  Meanwhile
 * the loop runs the next group, so the database and the loop work at the
 * same time.  An idle actor's claim that finds no task is held (held.h)
 * and run again after the group that publishes an event of its Space.
 *
 * On PostgreSQL the loop also listens for the events other stores commit
 * (notify.h) and publishes them as its own, through the acker, in a group
 * with no replies and nothing to sync.
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
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "acker.h"
#include "clock.h"
#include "held.h"
#include "limits.h"
#include "listen.h"
#include "log.h"
#include "notify.h"
#include "recv.h"
#include "send.h"
#include "startup.h"
#include "status.h"

/* When idle, expired op_ids go a chunk a second (groups prune too). */
#define ST_PRUNE_EVERY_MS 1000

static uint64_t st_requests, st_groups;
/* The serving thread's time running groups, in ns, for the log line. */
static int64_t st_exec_ns;
static uint64_t st_heard_events; /* other stores', published here */

/* Where a group's events go: the group, and the Spaces they wake. */
struct publish_to {
	struct st_ack_group *g;
	struct st_woken *w; /* NULL: they wake nothing */
};

/* The store's publish callback: an event waits with its group, and wakes
 * the claim held for its Space. */
static void
group_publish(void *arg, const char *space_id, const char *kind,
    const void *buf, size_t len, int64_t serial)
{
	struct publish_to *to = arg;
	enum cm_event_kind k = cm_event_kind_parse(kind);

	if (to->w != NULL)
		st_woken_add(to->w, space_id);
	st_ack_group_event(to->g, buf, len, serial);
	/* The supervisor's notices.  A queued task of a Space whose claim is
	 * held here wakes its actor with the claim's answer (held.h), not
	 * through the supervisor: such notices go once the group's own claims
	 * are held (st_ack_group_settle). */
	if (cm_event_kind_for_supervisor(k))
		st_ack_group_notice(
		    to->g, buf, len, k == CM_EV_QUEUED ? space_id : NULL);
}

/*
 * Turns the group's requests msgs, run into items, into its replies: each
 * message keeps its raw header, which routes the reply, and takes the
 * reply as its body.  An idle claim that may be held is held instead.
 */
static void
group_replies(struct st_ack_group *g, nng_msg **msgs, struct st_item *items,
    size_t n, int64_t now)
{
	/* In the group's order: a loss drops the claims held before it,
	 * and a claim after it is the next actor's. */
	for (size_t i = 0; i < n; i++) {
		if (items[i].hold == ST_HOLD_DROP)
			st_held_drop(items[i].space_id);
		if (items[i].hold == ST_HOLD_NEXT)
			st_held_expect(items[i].space_id, now);
		if (items[i].hold == ST_HOLD_PARK && items[i].rep != NULL &&
		    st_held_park(msgs[i], &items[i], now))
			continue;
		nng_msg_clear(msgs[i]);
		if (items[i].rep == NULL ||
		    nng_msg_append(msgs[i], items[i].rep, items[i].rep_len) !=
		        0)
			nng_msg_free(msgs[i]); /* the requester re-sends */
		else
			st_ack_group_reply(g, msgs[i], items[i].write);
		free(items[i].rep);
		items[i].rep = NULL;
	}
}

/*
 * Runs again, as a group filled after the k the loop holds, up to
 * CM_GROUP_COMMIT_MAX held claims whose Space changed.  Returns whether it
 * filled a group (not handed over).
 */
static bool
serve_reruns(struct st_store *st, struct st_acker *a, size_t k)
{
	static nng_msg *msgs[CM_GROUP_COMMIT_MAX];
	static struct st_item items[CM_GROUP_COMMIT_MAX];
	static int64_t due_ms[CM_GROUP_COMMIT_MAX];
	struct publish_to to = {NULL, NULL};
	int64_t t0 = cm_mono_ns(), now = cm_mono_ms();
	size_t n = st_held_take_reruns(msgs, due_ms, CM_GROUP_COMMIT_MAX);

	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		items[i].req = nng_msg_body(msgs[i]);
		items[i].req_len = nng_msg_len(msgs[i]);
	}
	st_requests += n;
	st_groups++;
	to.g = st_acker_slot(a, k);
	st_store_exec(st, items, n, group_publish, &to);
	to.g->sync = st_store_pending_sync(st);
	/* Still nothing: held on, until its own time is up. */
	for (size_t i = 0; i < n; i++)
		if (items[i].hold == ST_HOLD_PARK)
			items[i].hold_ms =
			    due_ms[i] > now ? due_ms[i] - now : 1;
	group_replies(to.g, msgs, items, n, now);
	st_ack_group_settle(to.g, st_held_waiting);
	to.g->committed = cm_mono_ns();
	st_exec_ns += to.g->committed - t0;
	return true;
}

/* Receives up to CM_GROUP_COMMIT_MAX waiting requests and commits them,
 * with the claims their events wake run right after. */
static void
serve_batch(
    struct st_store *st, nng_socket rep, nng_aio *rx, struct st_acker *a)
{
	static nng_msg *msgs[CM_GROUP_COMMIT_MAX];
	static struct st_item items[CM_GROUP_COMMIT_MAX];
	static struct st_woken w;
	struct publish_to to = {NULL, &w};
	size_t n = 0;
	int64_t t0;

	while (n < CM_GROUP_COMMIT_MAX && cm_recv_try(rep, rx, &msgs[n]) == 0) {
		items[n].req = nng_msg_body(msgs[n]);
		items[n].req_len = nng_msg_len(msgs[n]);
		n++;
	}
	if (n == 0)
		return;
	st_requests += n;
	st_groups++;
	st_woken_clear(&w);
	to.g = st_acker_slot(a, 0);
	t0 = cm_mono_ns();
	st_store_exec(st, items, n, group_publish, &to);
	to.g->sync = st_store_pending_sync(st);
	st_held_forget_gone();
	group_replies(to.g, msgs, items, n, cm_mono_ms());
	st_ack_group_settle(to.g, st_held_waiting);
	to.g->committed = cm_mono_ns();
	st_exec_ns += to.g->committed - t0;
	st_held_wake(&w);
	st_acker_push(a, serve_reruns(st, a, 1) ? 2 : 1);
}

/*
 * Publishes up to CM_NOTIFY_PER_WAKE events other stores committed, each
 * read from the database, as one group of the acker's, and marks the
 * claims they wake.  Returns true when more may be waiting: the loop comes
 * back at once, after its requests.
 */
static bool
serve_heard(struct st_store *st, struct st_notify *nt, struct st_acker *a)
{
	static struct st_woken w;
	struct publish_to to = {NULL, &w};
	struct st_heard h;
	size_t n = 0;

	st_woken_clear(&w);
	while (n < CM_NOTIFY_PER_WAKE && st_notify_next(nt, &h)) {
		if (to.g == NULL)
			to.g = st_acker_slot(a, 0);
		/* Not found: a Space of another schema on the same server. */
		if (st_store_republish(st, h.space_id, h.sequence, h.kind,
		        group_publish, &to) == 0)
			st_heard_events++;
		n++;
	}
	if (to.g != NULL) {
		st_ack_group_settle(to.g, st_held_waiting);
		to.g->committed = cm_mono_ns();
		st_acker_push(a, 1);
		st_held_wake(&w);
	}
	return n == CM_NOTIFY_PER_WAKE;
}

/* What the loop did, and where a group's time went. */
static void
log_served(const struct st_store *st, const struct st_acker_stats *ack)
{
	cm_info("store: served %llu requests in %llu group commits; published"
	        " %llu events of other stores",
	    (unsigned long long)st_requests, (unsigned long long)st_groups,
	    (unsigned long long)st_heard_events);
	if (st_groups == 0)
		return;
	cm_info("store: per group, %.0f us running (%.0f us of it in BEGIN"
	        " and COMMIT), %.0f us waiting for the acker; %llu syncs of"
	        " %.0f us",
	    (double)st_exec_ns / 1e3 / (double)st_groups,
	    (double)st_store_txn_ns(st) / 1e3 / (double)st_groups,
	    (double)ack->wait_ns / 1e3 / (double)st_groups,
	    (unsigned long long)ack->syncs,
	    ack->syncs ? (double)ack->sync_ns / 1e3 / (double)ack->syncs : 0.0);
}

/* What the loop serves with, from its start to its stop. */
struct loop {
	struct st_store *st;
	nng_socket rep, pub, npub;
	nng_aio *rx;
	struct st_sender *out, *events, *notices;
	struct st_acker *ack;
	struct st_notify *nt; /* PostgreSQL: other stores' events */
	/* Only the service's own user talks to the store. */
	struct cm_listener rep_l, pub_l, npub_l;
	int recv_fd, sig_fd;
	bool heard_more; /* serve_heard left some: come back at once */
	int64_t next_prune;
};

/* The raw REP socket: requests in, replies out through l->out. */
static int
open_rep(struct loop *l, const char *url)
{
	int rv;

	/* The largest request is an actor.finish with its artifact; the
	 * decoder holds every other op to CM_REQ_MSG_MAX. */
	if ((rv = nng_rep0_open_raw(&l->rep)) != 0 ||
	    (rv = nng_socket_set_size(
	         l->rep, NNG_OPT_RECVMAXSZ, CM_STORE_RECV_MAX)) != 0 ||
	    (rv = nng_socket_set_int(
	         l->rep, NNG_OPT_RECVBUF, CM_STORE_QUEUE_MAX)) != 0 ||
	    (rv = nng_socket_set_int(
	         l->rep, NNG_OPT_SENDBUF, CM_STORE_QUEUE_MAX)) != 0 ||
	    (rv = st_sender_open(&l->out, l->rep)) != 0 ||
	    (rv = nng_aio_alloc(&l->rx, NULL, NULL)) != 0 ||
	    (rv = cm_listener_start(&l->rep_l, l->rep, url, 0600)) != 0 ||
	    (rv = nng_socket_get_int(l->rep, NNG_OPT_RECVFD, &l->recv_fd)) !=
	        0) {
		cm_warnx("store: cannot serve %s: %s", url, nng_strerror(rv));
		return -1;
	}
	return 0;
}

/* A PUB socket at url: messages out through *sender. */
static int
open_pub(nng_socket *sock, struct st_sender **sender, struct cm_listener *ls,
    const char *url)
{
	int rv;

	if ((rv = nng_pub0_open(sock)) != 0 ||
	    (rv = nng_socket_set_int(*sock, NNG_OPT_SENDBUF, CM_PUB_BUF)) !=
	        0 ||
	    (rv = st_sender_open(sender, *sock)) != 0 ||
	    (rv = cm_listener_start(ls, *sock, url, 0600)) != 0) {
		cm_warnx(
		    "store: cannot publish on %s: %s", url, nng_strerror(rv));
		return -1;
	}
	return 0;
}

/* SIGTERM and SIGINT, which the caller blocked, read from a signalfd. */
static int
open_signals(struct loop *l)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	if ((l->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		cm_warn("store: signalfd");
		return -1;
	}
	return 0;
}

/* The acker, the connection that hears other stores (PostgreSQL), and
 * the held claims. */
static int
start_helpers(struct loop *l)
{
	int64_t self[CM_PG_WRITERS];
	size_t n_self;
	int rv;

	if (st_acker_start(&l->ack, l->st, l->out, l->events, l->notices) !=
	    0) {
		cm_warnx("store: cannot start the acknowledging thread");
		return -1;
	}
	n_self = st_store_sessions(l->st, self, CM_PG_WRITERS);
	if (st_store_listen_dsn(l->st) != NULL &&
	    st_notify_open(&l->nt, st_store_listen_dsn(l->st), self, n_self) !=
	        0) {
		cm_warnx("store: out of memory");
		return -1;
	}
	if ((rv = st_held_start(l->rep)) != 0) {
		cm_warnx(
		    "store: cannot follow its pipes: %s", nng_strerror(rv));
		return -1;
	}
	return 0;
}

static int64_t
earlier(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/*
 * Sleeps in poll() until a request, a signal or the listening connection
 * (pfd[2], set here) has something, or the first timer is due: the
 * prune, a listener's, a held claim's.  Returns -1 when poll() fails.
 */
static int
wait_for_work(struct loop *l, struct pollfd pfd[3])
{
	int64_t now = cm_mono_ms();
	int64_t due = l->next_prune;
	int wait;

	due = earlier(due, cm_listener_due(&l->rep_l));
	due = earlier(due, cm_listener_due(&l->pub_l));
	due = earlier(due, st_held_due());
	if (st_held_reruns())
		due = now;
	pfd[2].fd = -1; /* poll() skips it */
	pfd[2].events = 0;
	if (l->nt != NULL) {
		pfd[2].fd = st_notify_fd(l->nt, &pfd[2].events);
		due = earlier(due, st_notify_due(l->nt));
	}
	wait = due > now && !l->heard_more ? (int)(due - now) : 0;

	if (poll(pfd, 3, wait) < 0 && errno != EINTR) {
		cm_warn("store: poll");
		return -1;
	}
	return 0;
}

/* Whether a stopping signal arrived on sig (logged). */
static bool
signalled(struct loop *l, const struct pollfd *sig)
{
	struct signalfd_siginfo si;

	if (!(sig->revents & POLLIN) ||
	    read(l->sig_fd, &si, sizeof(si)) != sizeof(si))
		return false;
	cm_info("store: signal %u, stopping", si.ssi_signo);
	return true;
}

/*
 * One turn's work, in order: the requests waiting, other stores' events,
 * the held claims they woke, those whose time is up, the listeners, and
 * the periodic prune.
 */
static void
serve_turn(struct loop *l, const struct pollfd pfd[3])
{
	if (pfd[0].revents & POLLIN)
		serve_batch(l->st, l->rep, l->rx, l->ack);
	if (l->nt != NULL) {
		st_notify_tend(l->nt, cm_mono_ms());
		l->heard_more = serve_heard(l->st, l->nt, l->ack);
	}
	while (serve_reruns(l->st, l->ack, 0))
		st_acker_push(l->ack, 1);
	st_held_answer_due(l->ack, cm_mono_ms());
	cm_listener_tend(&l->rep_l, cm_mono_ms());
	cm_listener_tend(&l->pub_l, cm_mono_ms());
	cm_listener_tend(&l->npub_l, cm_mono_ms());
	/* The one place the periodic job runs. */
	if (cm_mono_ms() >= l->next_prune) {
		st_store_prune(l->st);
		l->next_prune = cm_mono_ms() + ST_PRUNE_EVERY_MS;
	}
}

/*
 * Stops whatever was started: the acker first, which acknowledges every
 * group handed over, the sockets after it, their senders last.  served:
 * the loop ran, and its log line is due.
 */
static void
loop_close(struct loop *l, bool served)
{
	struct st_acker_stats ack = {0};

	st_acker_stop(l->ack, &ack); /* its counters are ours from here */
	st_notify_close(l->nt);
	if (served)
		log_served(l->st, &ack);
	st_held_stop(); /* their actors ask again */
	if (l->sig_fd >= 0)
		close(l->sig_fd);
	nng_close(l->rep);
	nng_close(l->pub);
	nng_close(l->npub);
	if (l->rx != NULL)
		nng_aio_free(l->rx);
	st_sender_close(l->out);
	st_sender_close(l->events);
	st_sender_close(l->notices);
}

int
st_loop_run(struct st_store *st, const char *rep_url, const char *pub_url,
    const char *notice_url, int notify_fd)
{
	struct loop l = {
	    .st = st,
	    .rep = NNG_SOCKET_INITIALIZER,
	    .pub = NNG_SOCKET_INITIALIZER,
	    .npub = NNG_SOCKET_INITIALIZER,
	    .sig_fd = -1,
	    .next_prune = cm_mono_ms(),
	};
	struct pollfd pfd[3];

	if (open_rep(&l, rep_url) != 0 ||
	    open_pub(&l.pub, &l.events, &l.pub_l, pub_url) != 0 ||
	    open_pub(&l.npub, &l.notices, &l.npub_l, notice_url) != 0 ||
	    open_signals(&l) != 0 || start_helpers(&l) != 0) {
		loop_close(&l, false);
		return -1;
	}
	cm_ready_notify(&notify_fd);
	cm_info("store: serving %s, publishing %s", rep_url, pub_url);

	pfd[0] = (struct pollfd){.fd = l.recv_fd, .events = POLLIN};
	pfd[1] = (struct pollfd){.fd = l.sig_fd, .events = POLLIN};
	while (wait_for_work(&l, pfd) == 0 && !signalled(&l, &pfd[1]))
		serve_turn(&l, pfd);
	loop_close(&l, true);
	return 0;
}
