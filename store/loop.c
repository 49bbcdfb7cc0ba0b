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

/*
 * The next group to fill, once one is free (only the loop fills), after
 * the k the loop has filled and not yet handed over.
 */
static struct ack_group *
acker_slot(struct acker *a, size_t k)
{
	struct ack_group *g;

	pthread_mutex_lock(&a->mtx);
	while (a->count + k >= CM_ACK_GROUPS)
		pthread_cond_wait(&a->cv, &a->mtx);
	g = &a->ring[(a->head + a->count + k) % CM_ACK_GROUPS];
	pthread_mutex_unlock(&a->mtx);
	return g;
}

/* Hands over the n groups filled, at once: on SQLite one sync then covers
 * them all. */
static void
acker_push(struct acker *a, size_t n)
{
	pthread_mutex_lock(&a->mtx);
	a->count += n;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mtx);
}

/* ---- held claims ----------------------------------------------------------
 *
 * An idle actor's claim that found no task (st_item.hold, ST_HOLD_PARK) is
 * held here rather than answered: the request as received, whose raw
 * header routes the answer, and that answer (no task).  Once a group
 * publishes an event of its Space (a submit's queued, a close request),
 * the claim runs again in a group of its own, handed to the acker with the
 * one that woke it: on SQLite one sync then covers the submit and the
 * claim, and the actor hears of its task with the submit's answer, with
 * no wake-up through the supervisor and no second round trip.  A claim
 * that still finds nothing is held on; one whose time is up is answered
 * as it stands.  A claim is never run again for an actor that is gone:
 * its pipe closing (heard from nng's thread) or sup.finalize_lost of its
 * Space (ST_HOLD_DROP) drops it unanswered.
 */
struct held {
	nng_msg *msg; /* the claim as received */
	char *rep;    /* its answer as it stands */
	size_t rep_len;
	char space[CM_ID_MAX + 1];
	int64_t due_ms; /* 0: to be answered as it stands, now */
	uint32_t pipe;
	bool rerun; /* its Space changed: run it again */
};

static struct {
	struct held *v; /* CM_STORE_HELD_MAX */
	size_t n;
	/* The last pipes nng closed, from its thread: gone[i % MAX] is the
	 * i-th; the loop has looked at the first seen of them. */
	pthread_mutex_t mtx;
	uint32_t gone[CM_STORE_PIPES_GONE_MAX];
	uint64_t n_gone, seen;
} held = {.mtx = PTHREAD_MUTEX_INITIALIZER};

/* The Spaces a group published events of. */
#define WOKEN_MAX (2 * CM_GROUP_COMMIT_MAX)
struct woken {
	size_t n;
	bool all; /* more than WOKEN_MAX */
	char space[WOKEN_MAX][CM_ID_MAX + 1];
};

/* Where a group's events go: the group, and the Spaces they wake. */
struct publish_to {
	struct ack_group *g;
	struct woken *w; /* NULL: they wake nothing */
};

/* On an nng thread: a pipe of the REP socket closed. */
static void
pipe_gone(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	(void)ev;
	(void)arg;
	pthread_mutex_lock(&held.mtx);
	held.gone[held.n_gone++ % CM_STORE_PIPES_GONE_MAX] = nng_pipe_id(p);
	pthread_mutex_unlock(&held.mtx);
}

/* Whether pipe is among the last closed; call locked. */
static bool
pipe_closed(uint32_t pipe)
{
	uint64_t n = held.n_gone < CM_STORE_PIPES_GONE_MAX
	                 ? held.n_gone
	                 : CM_STORE_PIPES_GONE_MAX;

	for (uint64_t i = 0; i < n; i++)
		if (held.gone[i] == pipe)
			return true;
	return false;
}

/* Removes held claim i, with its answer; its message too unless taken
 * (NULL). */
static void
held_free(size_t i)
{
	if (held.v[i].msg != NULL)
		nng_msg_free(held.v[i].msg);
	free(held.v[i].rep);
	held.v[i] = held.v[--held.n];
}

/* Drops the claims of the pipes closed since the last call; more of
 * those than are remembered, and every claim is answered as it stands. */
static void
held_forget_gone(void)
{
	bool over;

	pthread_mutex_lock(&held.mtx);
	if (held.seen == held.n_gone) {
		pthread_mutex_unlock(&held.mtx);
		return;
	}
	over = held.n_gone - held.seen > CM_STORE_PIPES_GONE_MAX;
	held.seen = held.n_gone;
	for (size_t i = 0; i < held.n;) {
		if (pipe_closed(held.v[i].pipe)) {
			held_free(i);
			continue;
		}
		if (over) {
			held.v[i].due_ms = 0;
			held.v[i].rerun = false;
		}
		i++;
	}
	pthread_mutex_unlock(&held.mtx);
}

/* The Space's actor was declared lost: its claim goes unanswered. */
static void
held_drop(const char *space)
{
	for (size_t i = 0; i < held.n;)
		if (strcmp(held.v[i].space, space) == 0)
			held_free(i);
		else
			i++;
}

/*
 * Holds the claim msg, whose answer it->rep is (taken).  A claim of the
 * same Space held before is answered as it stands.
 * Returns false when there is no room: the caller answers it.
 */
static bool
held_park(nng_msg *msg, struct st_item *it, int64_t now)
{
	uint32_t pipe = nng_pipe_id(nng_msg_get_pipe(msg));
	struct held *h;
	bool closed;

	if (held.v == NULL || held.n == CM_STORE_HELD_MAX)
		return false;
	/* Its pipe may have closed before the claim was read. */
	pthread_mutex_lock(&held.mtx);
	closed = pipe_closed(pipe);
	pthread_mutex_unlock(&held.mtx);
	if (closed)
		return false;
	for (size_t i = 0; i < held.n; i++)
		if (strcmp(held.v[i].space, it->space_id) == 0) {
			held.v[i].due_ms = 0;
			held.v[i].rerun = false;
		}
	h = &held.v[held.n++];
	h->msg = msg;
	h->rep = it->rep;
	h->rep_len = it->rep_len;
	snprintf(h->space, sizeof(h->space), "%s", it->space_id);
	h->due_ms = now + (it->hold_ms > 0 ? it->hold_ms : 1);
	h->pipe = pipe;
	h->rerun = false;
	it->rep = NULL;
	return true;
}

/* Marks the claims of the Spaces w woke to run again. */
static void
held_wake(const struct woken *w)
{
	for (size_t i = 0; i < held.n; i++) {
		struct held *h = &held.v[i];

		if (h->due_ms == 0 || h->rerun)
			continue;
		for (size_t k = 0; k < w->n && !w->all && !h->rerun; k++)
			h->rerun = strcmp(h->space, w->space[k]) == 0;
		if (w->all)
			h->rerun = true;
	}
}

static bool
held_reruns(void)
{
	for (size_t i = 0; i < held.n; i++)
		if (held.v[i].rerun)
			return true;
	return false;
}

/* The store's publish callback: an event waits with its group, and wakes
 * the claim held for its Space. */
static void
group_publish(void *arg, const char *space_id, const void *buf, size_t len)
{
	struct publish_to *to = arg;
	struct ack_group *g = to->g;
	struct woken *w = to->w;
	nng_msg *m;

	if (w != NULL && !w->all) {
		size_t k = 0;

		while (k < w->n && strcmp(w->space[k], space_id) != 0)
			k++;
		if (k == w->n && w->n == WOKEN_MAX)
			w->all = true;
		else if (k == w->n)
			snprintf(w->space[w->n++], sizeof(w->space[0]), "%s",
			    space_id);
	}

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

/*
 * Turns the group's requests msgs, run into items, into its replies: each
 * message keeps its raw header, which routes the reply, and takes the
 * reply as its body.  An idle claim that may be held is held instead.
 */
static void
group_replies(struct ack_group *g, nng_msg **msgs, struct st_item *items,
    size_t n, int64_t now)
{
	/* In the group's order: a loss drops the claims held before it,
	 * and a claim after it is the next actor's. */
	for (size_t i = 0; i < n; i++) {
		if (items[i].hold == ST_HOLD_DROP)
			held_drop(items[i].space_id);
		if (items[i].hold == ST_HOLD_PARK && items[i].rep != NULL &&
		    held_park(msgs[i], &items[i], now))
			continue;
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
		items[i].rep = NULL;
	}
}

/*
 * Runs again, as a group filled after the k the loop holds, up to
 * CM_GROUP_COMMIT_MAX held claims whose Space changed.  Returns whether it
 * filled a group (not handed over).
 */
static bool
serve_reruns(struct st_store *st, struct acker *a, size_t k)
{
	static nng_msg *msgs[CM_GROUP_COMMIT_MAX];
	static struct st_item items[CM_GROUP_COMMIT_MAX];
	static struct held taken[CM_GROUP_COMMIT_MAX];
	struct publish_to to = {NULL, NULL};
	int64_t t0 = cm_mono_ns(), now = cm_mono_ms();
	size_t n = 0;

	held_forget_gone();
	for (size_t i = 0; i < held.n && n < CM_GROUP_COMMIT_MAX;) {
		if (!held.v[i].rerun) {
			i++;
			continue;
		}
		taken[n] = held.v[i];
		held.v[i] = held.v[--held.n];
		msgs[n] = taken[n].msg;
		items[n].req = nng_msg_body(msgs[n]);
		items[n].req_len = nng_msg_len(msgs[n]);
		n++;
	}
	if (n == 0)
		return false;
	st_requests += n;
	st_groups++;
	to.g = acker_slot(a, k);
	st_store_exec(st, items, n, group_publish, &to);
	to.g->sync = st_store_pending_sync(st);
	for (size_t i = 0; i < n; i++) {
		free(taken[i].rep);
		/* Still nothing: held on, until its own time is up. */
		if (items[i].hold == ST_HOLD_PARK)
			items[i].hold_ms =
			    taken[i].due_ms > now ? taken[i].due_ms - now : 1;
	}
	group_replies(to.g, msgs, items, n, now);
	to.g->committed = cm_mono_ns();
	st_exec_ns += to.g->committed - t0;
	return true;
}

/* Receives up to CM_GROUP_COMMIT_MAX waiting requests and commits them,
 * with the claims their events wake run right after. */
static void
serve_batch(struct st_store *st, nng_socket rep, nng_aio *rx, struct acker *a)
{
	static nng_msg *msgs[CM_GROUP_COMMIT_MAX];
	static struct st_item items[CM_GROUP_COMMIT_MAX];
	static struct woken w;
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
	w.n = 0;
	w.all = false;
	to.g = acker_slot(a, 0);
	t0 = cm_mono_ns();
	st_store_exec(st, items, n, group_publish, &to);
	to.g->sync = st_store_pending_sync(st);
	held_forget_gone();
	group_replies(to.g, msgs, items, n, cm_mono_ms());
	to.g->committed = cm_mono_ns();
	st_exec_ns += to.g->committed - t0;
	held_wake(&w);
	acker_push(a, serve_reruns(st, a, 1) ? 2 : 1);
}

/* Answers, as they stand, the held claims whose time is up. */
static void
serve_due(struct acker *a, int64_t now)
{
	struct ack_group *g = NULL;

	held_forget_gone();
	for (size_t i = 0; i < held.n;) {
		struct held *h = &held.v[i];

		if (h->rerun || h->due_ms > now) {
			i++;
			continue;
		}
		if (g == NULL)
			g = acker_slot(a, 0);
		nng_msg_clear(h->msg);
		if (nng_msg_append(h->msg, h->rep, h->rep_len) != 0) {
			held_free(i); /* the requester re-sends */
			continue;
		}
		g->write[g->n_reps] = false;
		g->reps[g->n_reps++] = h->msg;
		h->msg = NULL;
		held_free(i);
		if (g->n_reps == CM_GROUP_COMMIT_MAX) {
			g->committed = cm_mono_ns();
			acker_push(a, 1);
			g = NULL;
		}
	}
	if (g != NULL) {
		g->committed = cm_mono_ns();
		acker_push(a, 1);
	}
}

/* When the next held claim's time is up (INT64_MAX: none). */
static int64_t
held_due(void)
{
	int64_t due = INT64_MAX;

	for (size_t i = 0; i < held.n; i++)
		if (held.v[i].due_ms < due)
			due = held.v[i].due_ms;
	return due;
}

/*
 * Publishes up to CM_NOTIFY_PER_WAKE events other stores committed, each
 * read from the database, as one group of the acker's, and marks the
 * claims they wake.  Returns true when more may be waiting: the loop comes
 * back at once, after its requests.
 */
static bool
serve_heard(struct st_store *st, struct st_notify *nt, struct acker *a)
{
	static struct woken w;
	struct publish_to to = {NULL, &w};
	struct st_heard h;
	size_t n = 0;

	w.n = 0;
	w.all = false;
	while (n < CM_NOTIFY_PER_WAKE && st_notify_next(nt, &h)) {
		if (to.g == NULL)
			to.g = acker_slot(a, 0);
		/* Not found: a Space of another schema on the same server. */
		if (st_store_republish(st, h.space_id, h.sequence, h.kind,
		        group_publish, &to) == 0)
			st_heard_events++;
		n++;
	}
	if (to.g != NULL) {
		to.g->committed = cm_mono_ns();
		acker_push(a, 1);
		held_wake(&w);
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

	/* Without room for held claims, every claim is answered at once. */
	held.v = calloc(CM_STORE_HELD_MAX, sizeof(*held.v));
	if ((rv = nng_pipe_notify(
	         rep, NNG_PIPE_EV_REM_POST, pipe_gone, NULL)) != 0) {
		cm_warnx(
		    "store: cannot follow its pipes: %s", nng_strerror(rv));
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
		due = held_due() < due ? held_due() : due;
		if (held_reruns())
			due = now;
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
		while (serve_reruns(st, &ack, 0))
			acker_push(&ack, 1);
		serve_due(&ack, cm_mono_ms());
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
	while (held.n > 0) /* their actors ask again */
		held_free(0);
	free(held.v);
	held.v = NULL;
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
