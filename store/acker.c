/*
 * acker.c: the acknowledging thread (acker.h).
 *
 * A group's commit does not wait for the disk (store.h, defer_sync).  The
 * loop hands each committed group here, and only once it is durable are
 * its events published and its replies sent.  On SQLite that is a sync
 * of the write-ahead log, one for every group waiting; on PostgreSQL,
 * reading the answer to each group's COMMIT, which the loop only sent
 * (store/db_pg.c), and a COMMIT that failed has its group's writes
 * answered store_unavailable and its events dropped.
 */
#include "acker.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "proto.h"

struct st_acker {
	pthread_mutex_t mtx;
	pthread_cond_t cv;
	struct st_ack_group ring[CM_ACK_GROUPS];
	size_t head, count; /* groups waiting: ring[head .. head+count) */
	bool stop;
	pthread_t thread;
	struct st_store *st;    /* only st_store_sync(_covers) on this thread */
	struct st_sender *reps; /* replies */
	struct st_sender *events;
	struct st_sender *notices;   /* the supervisor's */
	struct st_acker_stats stats; /* the thread's; the loop's once stopped */
	int64_t sent_serial;         /* of the last event sent or dropped */
	int64_t quiet_ms; /* cm_mono_ms of the last event or beat sent */
};

void
st_ack_group_reply(struct st_ack_group *g, nng_msg *m, bool write)
{
	g->write[g->n_reps] = write;
	g->reps[g->n_reps++] = m;
}

/* Appends a copy of buf to the list *v of *n (room for *cap); false out
 * of memory. */
static bool
msg_append(nng_msg ***v, size_t *n, size_t *cap, const void *buf, size_t len)
{
	nng_msg *m;

	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		nng_msg **p = realloc(*v, c * sizeof(*p));

		if (p == NULL)
			return false;
		*v = p;
		*cap = c;
	}
	if (nng_msg_alloc(&m, 0) != 0)
		return false;
	if (nng_msg_append(m, buf, len) != 0) {
		nng_msg_free(m);
		return false;
	}
	(*v)[(*n)++] = m;
	return true;
}

void
st_ack_group_event(
    struct st_ack_group *g, const void *buf, size_t len, int64_t serial)
{
	g->serial = serial; /* sent or not: the next beat says it */
	(void)msg_append(&g->pubs, &g->n_pubs, &g->cap_pubs, buf, len);
}

void
st_ack_group_notice(struct st_ack_group *g, const void *buf, size_t len,
    const char *queued_space)
{
	struct st_ack_note *n;
	nng_msg *m;

	if (g->n_notes == g->cap_notes) {
		size_t c = g->cap_notes ? g->cap_notes * 2 : 64;
		struct st_ack_note *p = realloc(g->notes, c * sizeof(*p));

		if (p == NULL)
			return;
		g->notes = p;
		g->cap_notes = c;
	}
	if (nng_msg_alloc(&m, 0) != 0)
		return;
	if (nng_msg_append(m, buf, len) != 0) {
		nng_msg_free(m);
		return;
	}
	n = &g->notes[g->n_notes++];
	n->m = m;
	snprintf(n->queued, sizeof(n->queued), "%s",
	    queued_space != NULL ? queued_space : "");
}

void
st_ack_group_settle(struct st_ack_group *g, bool (*held)(const char *))
{
	size_t k = 0;

	for (size_t i = 0; i < g->n_notes; i++) {
		if (g->notes[i].queued[0] != '\0' && held(g->notes[i].queued))
			nng_msg_free(g->notes[i].m);
		else
			g->notes[k++] = g->notes[i];
	}
	g->n_notes = k;
}

static void
group_send(struct st_acker *a, struct st_ack_group *g)
{
	/* Events before replies: a requester may read what it caused. */
	for (size_t i = 0; i < g->n_pubs; i++)
		st_sender_send(a->events, g->pubs[i]);
	for (size_t i = 0; i < g->n_notes; i++)
		st_sender_send(a->notices, g->notes[i].m);
	for (size_t i = 0; i < g->n_reps; i++)
		st_sender_send(a->reps, g->reps[i]);
	if (g->n_pubs > 0)
		a->quiet_ms = cm_mono_ms();
	if (g->serial > a->sent_serial)
		a->sent_serial = g->serial;
	g->n_pubs = 0;
	g->n_notes = 0;
	g->n_reps = 0;
	g->serial = 0;
	g->sync = NULL;
}

/* The beat (acker.h), when no event has left for CM_STORE_BEAT_MS. */
static void
beat_if_quiet(struct st_acker *a)
{
	nng_msg *m = NULL;
	char *buf;
	size_t len;

	if (cm_mono_ms() - a->quiet_ms < CM_STORE_BEAT_MS)
		return;
	a->quiet_ms = cm_mono_ms();
	if (pr_beat_encode(a->sent_serial, &buf, &len) != 0)
		return;
	if (nng_msg_alloc(&m, 0) == 0 && nng_msg_append(m, buf, len) == 0)
		st_sender_send(a->events, m);
	else if (m != NULL)
		nng_msg_free(m);
	free(buf);
}

/*
 * The group's commit failed: its events are dropped and each write is
 * answered rep instead (reads keep their answers, as st_store_exec gives
 * them).  A reply that cannot be rebuilt is dropped: its requester
 * re-sends.
 */
static void
group_fail(struct st_ack_group *g, const char *rep, size_t len)
{
	for (size_t i = 0; i < g->n_pubs; i++)
		nng_msg_free(g->pubs[i]);
	g->n_pubs = 0;
	for (size_t i = 0; i < g->n_notes; i++)
		nng_msg_free(g->notes[i].m);
	g->n_notes = 0;
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
group_sync(struct st_acker *a, struct st_ack_group *g)
{
	char *rep;
	size_t len;
	int64_t t0 = cm_mono_ns();

	if (st_store_sync(a->st, g->sync, &rep, &len) != 0) {
		group_fail(g, rep, len);
		free(rep);
	}
	a->stats.sync_ns += cm_mono_ns() - t0;
	a->stats.syncs++;
}

static struct st_ack_group *
waiting(struct st_acker *a, size_t i)
{
	return &a->ring[(a->head + i) % CM_ACK_GROUPS];
}

/*
 * Acknowledges the n groups waiting, taken off the ring by the caller's
 * count, outside the lock.  SQLite: the newest group's sync covers every
 * group before it.  PostgreSQL: each group's COMMIT is answered on its
 * own, and its group leaves as soon as it is.
 */
static void
ack_groups(struct st_acker *a, size_t n)
{
	struct st_ack_group *last = NULL;
	int64_t t0 = cm_mono_ns();
	bool covers = st_store_sync_covers(a->st);

	for (size_t i = 0; i < n; i++)
		a->stats.wait_ns += t0 - waiting(a, i)->committed;
	for (size_t i = 0; covers && i < n; i++)
		if (waiting(a, i)->sync != NULL)
			last = waiting(a, i);
	if (last != NULL)
		group_sync(a, last);
	for (size_t i = 0; i < n; i++) {
		struct st_ack_group *g = waiting(a, i);

		if (!covers && g->sync != NULL)
			group_sync(a, g);
		group_send(a, g);
	}
}

static void *
acker_run(void *arg)
{
	struct st_acker *a = arg;

	pthread_setname_np(pthread_self(), "store:acker");
	pthread_mutex_lock(&a->mtx);
	for (;;) {
		size_t n;

		while (a->count == 0 && !a->stop) {
			struct timespec due;

			clock_gettime(CLOCK_MONOTONIC, &due);
			due.tv_nsec += (long)CM_STORE_BEAT_MS * 1000000L;
			due.tv_sec += due.tv_nsec / 1000000000L;
			due.tv_nsec %= 1000000000L;
			if (pthread_cond_timedwait(&a->cv, &a->mtx, &due) ==
			    ETIMEDOUT) {
				pthread_mutex_unlock(&a->mtx);
				beat_if_quiet(a);
				pthread_mutex_lock(&a->mtx);
			}
		}
		if (a->count == 0)
			break;
		n = a->count;
		pthread_mutex_unlock(&a->mtx);

		ack_groups(a, n);
		beat_if_quiet(a);

		pthread_mutex_lock(&a->mtx);
		a->head = (a->head + n) % CM_ACK_GROUPS;
		a->count -= n;
		pthread_cond_broadcast(&a->cv);
	}
	pthread_mutex_unlock(&a->mtx);
	return NULL;
}

int
st_acker_start(struct st_acker **out, struct st_store *st,
    struct st_sender *reps, struct st_sender *events, struct st_sender *notices)
{
	pthread_condattr_t ca;
	struct st_acker *a;

	*out = NULL;
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return -1;
	a->st = st;
	a->reps = reps;
	a->events = events;
	a->notices = notices;
	a->quiet_ms = cm_mono_ms();
	pthread_mutex_init(&a->mtx, NULL);
	/* The beat's wait is on the monotonic clock. */
	if (pthread_condattr_init(&ca) != 0 ||
	    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
	    pthread_cond_init(&a->cv, &ca) != 0) {
		pthread_mutex_destroy(&a->mtx);
		free(a);
		return -1;
	}
	pthread_condattr_destroy(&ca);
	if (pthread_create(&a->thread, NULL, acker_run, a) != 0) {
		pthread_cond_destroy(&a->cv);
		pthread_mutex_destroy(&a->mtx);
		free(a);
		return -1;
	}
	*out = a;
	return 0;
}

void
st_acker_stop(struct st_acker *a, struct st_acker_stats *stats)
{
	if (a == NULL)
		return;
	pthread_mutex_lock(&a->mtx);
	a->stop = true;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mtx);
	pthread_join(a->thread, NULL);
	if (stats != NULL)
		*stats = a->stats;
	for (size_t i = 0; i < CM_ACK_GROUPS; i++) {
		free(a->ring[i].pubs);
		free(a->ring[i].notes);
	}
	pthread_cond_destroy(&a->cv);
	pthread_mutex_destroy(&a->mtx);
	free(a);
}

struct st_ack_group *
st_acker_slot(struct st_acker *a, size_t k)
{
	struct st_ack_group *g;

	pthread_mutex_lock(&a->mtx);
	while (a->count + k >= CM_ACK_GROUPS)
		pthread_cond_wait(&a->cv, &a->mtx);
	g = &a->ring[(a->head + a->count + k) % CM_ACK_GROUPS];
	pthread_mutex_unlock(&a->mtx);
	return g;
}

void
st_acker_push(struct st_acker *a, size_t n)
{
	pthread_mutex_lock(&a->mtx);
	a->count += n;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mtx);
}
