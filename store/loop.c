/*
 * loop.c: one thread, one poll() over the REP socket's receive fd and a
 * signalfd.  A raw REP socket lets the thread hold many requests at once,
 * which is what makes group commit possible (DESIGN 1).
 *
 * A group's commit does not wait for the disk (store.h, defer_sync).  The
 * loop hands each committed group to the acker thread, which makes it
 * durable, and only then publishes the group's events and sends its
 * replies.  On SQLite that is a sync of the write-ahead log, one for
 * every group waiting; on PostgreSQL, reading the answer to each group's
 * COMMIT, which the loop only sent (store/db_pg.c), and a COMMIT that
 * failed has its group's writes answered store_unavailable and its events
 * dropped.  Meanwhile the loop runs the next group, so the database and
 * the loop work at the same time.
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
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "clock.h"
#include "limits.h"
#include "listen.h"
#include "log.h"
#include "notify.h"
#include "recv.h"
#include "startup.h"

/* When idle, expired op_ids go a chunk a second (groups prune too). */
#define ST_PRUNE_EVERY_MS 1000

static uint64_t st_requests, st_groups;
/* Where a group's time went, in ns, for the log line at the end. */
static int64_t st_exec_ns;             /* the serving thread, running groups */
static int64_t st_wait_ns, st_sync_ns; /* the acker: queued, then syncing */
static uint64_t st_syncs;
static uint64_t st_heard_events; /* other stores', published here */

/* ---- sending --------------------------------------------------------------
 *
 * Replies and events leave asynchronously, from the acker thread alone.
 * nng_sendmsg would wait for one of nng's task threads to take each
 * message; an aio does not, and the REP socket's send buffer holds the
 * replies of every group acknowledged at once.  The aios have no callback: nng
 * runs a callback on a task thread, another thread handoff per message
 * (measured: the store switched threads 5.9 times a write with callbacks, 3.1
 * without).  A slot is reused in turn once its send has completed, which by
 * then it almost always has.  A message that cannot be sent is dropped: a
 * requester re-sends, and a subscriber recovers from the sequence gap.
 */
#define ST_SEND_SLOTS (2 * CM_STORE_QUEUE_MAX)

struct sender {
	nng_socket sock;
	nng_aio *slot[ST_SEND_SLOTS];
	size_t next;
};

/* Waits for slot a's last send and drops its message if it failed. */
static void
slot_reap(nng_aio *a)
{
	nng_msg *m;

	nng_aio_wait(a);
	if (nng_aio_result(a) != 0 && (m = nng_aio_get_msg(a)) != NULL) {
		nng_aio_set_msg(a, NULL);
		nng_msg_free(m);
	}
}

static int
sender_init(struct sender *r, nng_socket sock)
{
	int rv;

	memset(r, 0, sizeof(*r));
	r->sock = sock;
	for (size_t i = 0; i < ST_SEND_SLOTS; i++)
		if ((rv = nng_aio_alloc(&r->slot[i], NULL, NULL)) != 0)
			return rv;
	return 0;
}

/* After the socket is closed: every send has completed or failed. */
static void
sender_fini(struct sender *r)
{
	for (size_t i = 0; i < ST_SEND_SLOTS && r->slot[i] != NULL; i++) {
		slot_reap(r->slot[i]);
		nng_aio_free(r->slot[i]);
	}
}

static void
send_msg(struct sender *r, nng_msg *m)
{
	nng_aio *a = r->slot[r->next++ % ST_SEND_SLOTS];

	slot_reap(a);
	nng_aio_set_msg(a, m);
	nng_send_aio(r->sock, a);
}

/* ---- acknowledgements ----------------------------------------------------
 */

/* A committed group: what leaves once its commit is on disk. */
struct ack_group {
	nng_msg *reps[CM_GROUP_COMMIT_MAX];
	bool write[CM_GROUP_COMMIT_MAX]; /* reps[i] answers a write */
	size_t n_reps;
	nng_msg **pubs;
	size_t n_pubs, cap_pubs;
	struct st_sync *sync; /* NULL: nothing of its own to sync */
	int64_t committed;    /* cm_mono_ns when handed over */
};

struct acker {
	pthread_mutex_t mtx;
	pthread_cond_t cv;
	struct ack_group ring[CM_ACK_GROUPS];
	size_t head, count; /* groups waiting: ring[head .. head+count) */
	bool stop;
	pthread_t thread;
	struct st_store *st; /* only st_store_sync(_covers) on this thread */
	struct sender *out;  /* replies */
	struct sender *pub;  /* events */
};

static void
group_send(struct acker *a, struct ack_group *g)
{
	/* Events before replies: a requester may read what it caused. */
	for (size_t i = 0; i < g->n_pubs; i++)
		send_msg(a->pub, g->pubs[i]);
	for (size_t i = 0; i < g->n_reps; i++)
		send_msg(a->out, g->reps[i]);
	g->n_pubs = 0;
	g->n_reps = 0;
	g->sync = NULL;
}

/*
 * The group's commit failed: its events are dropped and each write is
 * answered rep instead (reads keep their answers, as st_store_exec gives
 * them).  A reply that cannot be rebuilt is dropped: its requester
 * re-sends.
 */
static void
group_fail(struct ack_group *g, const char *rep, size_t len)
{
	for (size_t i = 0; i < g->n_pubs; i++)
		nng_msg_free(g->pubs[i]);
	g->n_pubs = 0;
	for (size_t i = 0, k = 0; i < g->n_reps; i++) {
		nng_msg *m = g->reps[i];

		/* The body goes; the raw header still routes the reply. */
		if (g->write[i]) {
			nng_msg_clear(m);
			if (rep == NULL || nng_msg_append(m, rep, len) != 0) {
				nng_msg_free(m);
				continue;
			}
		}
		g->reps[k] = m;
		g->write[k++] = g->write[i];
	}
}

/* Finishes g's own sync (PostgreSQL: its COMMIT's answer). */
static void
group_sync(struct acker *a, struct ack_group *g)
{
	char *rep;
	size_t len;
	int64_t t0 = cm_mono_ns();

	if (st_store_sync(a->st, g->sync, &rep, &len) != 0) {
		group_fail(g, rep, len);
		free(rep);
	}
	st_sync_ns += cm_mono_ns() - t0;
	st_syncs++;
}

static void *
acker_run(void *arg)
{
	struct acker *a = arg;

	pthread_setname_np(pthread_self(), "store:acker");
	pthread_mutex_lock(&a->mtx);
	for (;;) {
		size_t n;
		struct ack_group *last = NULL;
		int64_t t0;
		bool covers;

		while (a->count == 0 && !a->stop)
			pthread_cond_wait(&a->cv, &a->mtx);
		if (a->count == 0)
			break;
		n = a->count;
		pthread_mutex_unlock(&a->mtx);

		t0 = cm_mono_ns();
		for (size_t i = 0; i < n; i++)
			st_wait_ns +=
			    t0 -
			    a->ring[(a->head + i) % CM_ACK_GROUPS].committed;
		/*
		 * SQLite: the newest group's sync covers every group before
		 * it.  PostgreSQL: each group's COMMIT is answered on its own,
		 * and its group leaves as soon as it is.
		 */
		covers = st_store_sync_covers(a->st);
		for (size_t i = 0; covers && i < n; i++) {
			struct ack_group *g =
			    &a->ring[(a->head + i) % CM_ACK_GROUPS];
			if (g->sync != NULL)
				last = g;
		}
		if (last != NULL)
			group_sync(a, last);
		for (size_t i = 0; i < n; i++) {
			struct ack_group *g =
			    &a->ring[(a->head + i) % CM_ACK_GROUPS];

			if (!covers && g->sync != NULL)
				group_sync(a, g);
			group_send(a, g);
		}

		pthread_mutex_lock(&a->mtx);
		a->head = (a->head + n) % CM_ACK_GROUPS;
		a->count -= n;
		pthread_cond_broadcast(&a->cv);
	}
	pthread_mutex_unlock(&a->mtx);
	return NULL;
}

static int
acker_start(struct acker *a, struct st_store *st, struct sender *out,
    struct sender *pub)
{
	memset(a, 0, sizeof(*a));
	a->st = st;
	a->out = out;
	a->pub = pub;
	for (size_t i = 0; i < CM_ACK_GROUPS; i++)
		a->ring[i].sync = NULL;
	pthread_mutex_init(&a->mtx, NULL);
	pthread_cond_init(&a->cv, NULL);
	if (pthread_create(&a->thread, NULL, acker_run, a) != 0) {
		pthread_cond_destroy(&a->cv);
		pthread_mutex_destroy(&a->mtx);
		return -1;
	}
	return 0;
}

/* Acknowledges every group handed over, then stops the thread. */
static void
acker_stop(struct acker *a)
{
	pthread_mutex_lock(&a->mtx);
	a->stop = true;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mtx);
	pthread_join(a->thread, NULL);
	for (size_t i = 0; i < CM_ACK_GROUPS; i++)
		free(a->ring[i].pubs);
	pthread_cond_destroy(&a->cv);
	pthread_mutex_destroy(&a->mtx);
}

/* The next group to fill, once one is free (only the loop fills). */
static struct ack_group *
acker_slot(struct acker *a)
{
	struct ack_group *g;

	pthread_mutex_lock(&a->mtx);
	while (a->count == CM_ACK_GROUPS)
		pthread_cond_wait(&a->cv, &a->mtx);
	g = &a->ring[(a->head + a->count) % CM_ACK_GROUPS];
	pthread_mutex_unlock(&a->mtx);
	return g;
}

static void
acker_push(struct acker *a)
{
	pthread_mutex_lock(&a->mtx);
	a->count++;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mtx);
}

/* The store's publish callback: an event waits with its group. */
static void
group_publish(void *arg, const void *buf, size_t len)
{
	struct ack_group *g = arg;
	nng_msg *m;

	if (g->n_pubs == g->cap_pubs) {
		size_t cap = g->cap_pubs ? g->cap_pubs * 2 : 64;
		nng_msg **p = realloc(g->pubs, cap * sizeof(*p));

		if (p == NULL)
			return; /* subscribers recover from sequence gaps */
		g->pubs = p;
		g->cap_pubs = cap;
	}
	if (nng_msg_alloc(&m, 0) != 0)
		return;
	if (nng_msg_append(m, buf, len) != 0) {
		nng_msg_free(m);
		return;
	}
	g->pubs[g->n_pubs++] = m;
}

/* ---- the loop -------------------------------------------------------------
 */

/* Receives up to CM_GROUP_COMMIT_MAX waiting requests and commits them. */
static void
serve_batch(struct st_store *st, nng_socket rep, nng_aio *rx, struct acker *a)
{
	static nng_msg *msgs[CM_GROUP_COMMIT_MAX];
	static struct st_item items[CM_GROUP_COMMIT_MAX];
	struct ack_group *g;
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
	g = acker_slot(a);
	t0 = cm_mono_ns();
	st_store_exec(st, items, n, group_publish, g);
	g->sync = st_store_pending_sync(st);
	for (size_t i = 0; i < n; i++) {
		/* The raw header routes the reply back to its requester. */
		nng_msg_clear(msgs[i]);
		if (items[i].rep == NULL ||
		    nng_msg_append(msgs[i], items[i].rep, items[i].rep_len) !=
		        0)
			nng_msg_free(msgs[i]); /* the requester re-sends */
		else {
			g->write[g->n_reps] = items[i].write;
			g->reps[g->n_reps++] = msgs[i];
		}
		free(items[i].rep);
	}
	g->committed = cm_mono_ns();
	st_exec_ns += g->committed - t0;
	acker_push(a);
}

/*
 * Publishes up to CM_NOTIFY_PER_WAKE events other stores committed, each
 * read from the database, as one group of the acker's.  Returns true when
 * more may be waiting: the loop comes back at once, after its requests.
 */
static bool
serve_heard(struct st_store *st, struct st_notify *nt, struct acker *a)
{
	struct ack_group *g = NULL;
	struct st_heard h;
	size_t n = 0;

	while (n < CM_NOTIFY_PER_WAKE && st_notify_next(nt, &h)) {
		if (g == NULL)
			g = acker_slot(a);
		/* Not found: a Space of another schema on the same server. */
		if (st_store_republish(st, h.space_id, h.sequence, h.kind,
		        group_publish, g) == 0)
			st_heard_events++;
		n++;
	}
	if (g != NULL) {
		g->committed = cm_mono_ns();
		acker_push(a);
	}
	return n == CM_NOTIFY_PER_WAKE;
}

/* What the loop did, and where a group's time went. */
static void
log_served(const struct st_store *st)
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
	    (double)st_wait_ns / 1e3 / (double)st_groups,
	    (unsigned long long)st_syncs,
	    st_syncs ? (double)st_sync_ns / 1e3 / (double)st_syncs : 0.0);
}

int
st_loop_run(struct st_store *st, const char *rep_url, const char *pub_url,
    int notify_fd)
{
	static struct sender out, events;
	static struct acker ack;
	/* Only the service's own user talks to the store. */
	static struct cm_listener rep_l, pub_l;
	nng_socket rep = NNG_SOCKET_INITIALIZER, pub = NNG_SOCKET_INITIALIZER;
	nng_aio *rx = NULL;
	struct st_notify *nt = NULL;
	struct pollfd pfd[3];
	int64_t self[CM_PG_WRITERS];
	size_t n_self;
	sigset_t mask;
	bool acking = false, heard_more = false;
	int rv, recv_fd, sig_fd = -1, rc = -1;
	int64_t next_prune = cm_mono_ms();

	/* The largest request is an actor.finish with its artifact; the
	 * decoder holds every other op to CM_REQ_MSG_MAX. */
	if ((rv = nng_rep0_open_raw(&rep)) != 0 ||
	    (rv = nng_socket_set_size(
	         rep, NNG_OPT_RECVMAXSZ, CM_STORE_RECV_MAX)) != 0 ||
	    (rv = nng_socket_set_int(
	         rep, NNG_OPT_RECVBUF, CM_STORE_QUEUE_MAX)) != 0 ||
	    (rv = nng_socket_set_int(
	         rep, NNG_OPT_SENDBUF, CM_STORE_QUEUE_MAX)) != 0 ||
	    (rv = sender_init(&out, rep)) != 0 ||
	    (rv = nng_aio_alloc(&rx, NULL, NULL)) != 0 ||
	    (rv = cm_listener_start(&rep_l, rep, rep_url, 0600)) != 0 ||
	    (rv = nng_socket_get_int(rep, NNG_OPT_RECVFD, &recv_fd)) != 0) {
		cm_warnx(
		    "store: cannot serve %s: %s", rep_url, nng_strerror(rv));
		goto out;
	}
	if ((rv = nng_pub0_open(&pub)) != 0 ||
	    (rv = nng_socket_set_int(pub, NNG_OPT_SENDBUF, CM_PUB_BUF)) != 0 ||
	    (rv = sender_init(&events, pub)) != 0 ||
	    (rv = cm_listener_start(&pub_l, pub, pub_url, 0600)) != 0) {
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
	if (acker_start(&ack, st, &out, &events) != 0) {
		cm_warnx("store: cannot start the acknowledging thread");
		goto out;
	}
	acking = true;
	n_self = st_store_sessions(st, self, CM_PG_WRITERS);
	if (st_store_listen_dsn(st) != NULL &&
	    st_notify_open(&nt, st_store_listen_dsn(st), self, n_self) != 0) {
		cm_warnx("store: out of memory");
		goto out;
	}

	cm_ready_notify(&notify_fd);
	cm_info("store: serving %s, publishing %s", rep_url, pub_url);

	pfd[0].fd = recv_fd;
	pfd[0].events = POLLIN;
	pfd[1].fd = sig_fd;
	pfd[1].events = POLLIN;
	for (;;) {
		int64_t now = cm_mono_ms();
		int64_t due = next_prune;
		int wait;

		due = cm_listener_due(&rep_l) < due ? cm_listener_due(&rep_l)
		                                    : due;
		due = cm_listener_due(&pub_l) < due ? cm_listener_due(&pub_l)
		                                    : due;
		pfd[2].fd = -1; /* poll() skips it */
		pfd[2].events = 0;
		if (nt != NULL) {
			pfd[2].fd = st_notify_fd(nt, &pfd[2].events);
			due = st_notify_due(nt) < due ? st_notify_due(nt) : due;
		}
		wait = due > now && !heard_more ? (int)(due - now) : 0;

		if (poll(pfd, 3, wait) < 0 && errno != EINTR) {
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
			serve_batch(st, rep, rx, &ack);
		if (nt != NULL) {
			st_notify_tend(nt, cm_mono_ms());
			heard_more = serve_heard(st, nt, &ack);
		}
		cm_listener_tend(&rep_l, cm_mono_ms());
		cm_listener_tend(&pub_l, cm_mono_ms());
		/* The one place the periodic job runs. */
		if (cm_mono_ms() >= next_prune) {
			st_store_prune(st);
			next_prune = cm_mono_ms() + ST_PRUNE_EVERY_MS;
		}
	}
	rc = 0;
out:
	if (acking)
		acker_stop(&ack); /* its counters are ours from here */
	st_notify_close(nt);
	if (rc == 0)
		log_served(st);
	if (sig_fd >= 0)
		close(sig_fd);
	nng_close(rep);
	nng_close(pub);
	if (rx != NULL)
		nng_aio_free(rx);
	sender_fini(&out);
	sender_fini(&events);
	return rc;
}
