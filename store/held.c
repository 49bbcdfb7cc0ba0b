/*
 * held.c: the claims the store holds (held.h).
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
#include "held.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

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

void
st_woken_clear(struct st_woken *w)
{
	w->n = 0;
	w->all = false;
}

void
st_woken_add(struct st_woken *w, const char *space_id)
{
	size_t k = 0;

	if (w->all)
		return;
	while (k < w->n && strcmp(w->space[k], space_id) != 0)
		k++;
	if (k == w->n && w->n == ST_WOKEN_MAX)
		w->all = true;
	else if (k == w->n)
		snprintf(w->space[w->n++], sizeof(w->space[0]), "%s", space_id);
}

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

int
st_held_start(nng_socket rep)
{
	held.v = calloc(CM_STORE_HELD_MAX, sizeof(*held.v));
	return nng_pipe_notify(rep, NNG_PIPE_EV_REM_POST, pipe_gone, NULL);
}

void
st_held_stop(void)
{
	while (held.n > 0)
		held_free(0);
	free(held.v);
	held.v = NULL;
}

void
st_held_forget_gone(void)
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

/* The claims expected after a finish (st_held_expect): the loop's. */
static struct {
	char space[CM_ID_MAX + 1];
	int64_t until_ms;
} expect[CM_STORE_HELD_MAX];
static size_t n_expect;

void
st_held_expect(const char *space, int64_t now)
{
	size_t at = n_expect;

	for (size_t i = 0; i < n_expect; i++) {
		if (strcmp(expect[i].space, space) == 0) {
			at = i;
			break;
		}
		if (expect[i].until_ms <= now && at == n_expect)
			at = i;
	}
	if (at == n_expect) {
		if (n_expect == CM_STORE_HELD_MAX)
			return; /* the supervisor's notice wakes it, as before
			         */
		n_expect++;
	}
	snprintf(expect[at].space, sizeof(expect[at].space), "%s", space);
	expect[at].until_ms = now + CM_CLAIM_NEXT_MS;
}

bool
st_held_waiting(const char *space)
{
	int64_t now = cm_mono_ms();

	for (size_t i = 0; i < held.n; i++)
		if (held.v[i].due_ms != 0 &&
		    strcmp(held.v[i].space, space) == 0)
			return true;
	for (size_t i = 0; i < n_expect; i++)
		if (expect[i].until_ms > now &&
		    strcmp(expect[i].space, space) == 0)
			return true;
	return false;
}

void
st_held_drop(const char *space)
{
	for (size_t i = 0; i < held.n;)
		if (strcmp(held.v[i].space, space) == 0)
			held_free(i);
		else
			i++;
}

bool
st_held_park(nng_msg *msg, struct st_item *it, int64_t now)
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

void
st_held_wake(const struct st_woken *w)
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

bool
st_held_reruns(void)
{
	for (size_t i = 0; i < held.n; i++)
		if (held.v[i].rerun)
			return true;
	return false;
}

size_t
st_held_take_reruns(nng_msg **msgs, int64_t *due_ms, size_t max)
{
	size_t n = 0;

	st_held_forget_gone();
	for (size_t i = 0; i < held.n && n < max;) {
		if (!held.v[i].rerun) {
			i++;
			continue;
		}
		msgs[n] = held.v[i].msg;
		due_ms[n] = held.v[i].due_ms;
		free(held.v[i].rep);
		held.v[i] = held.v[--held.n];
		n++;
	}
	return n;
}

int64_t
st_held_due(void)
{
	int64_t due = INT64_MAX;

	for (size_t i = 0; i < held.n; i++)
		if (held.v[i].due_ms < due)
			due = held.v[i].due_ms;
	return due;
}

/* Hands g over, stamped now. */
static void
push_group(struct st_acker *a, struct st_ack_group *g)
{
	g->committed = cm_mono_ns();
	st_acker_push(a, 1);
}

void
st_held_answer_due(struct st_acker *a, int64_t now)
{
	struct st_ack_group *g = NULL;

	st_held_forget_gone();
	for (size_t i = 0; i < held.n;) {
		struct held *h = &held.v[i];

		if (h->rerun || h->due_ms > now) {
			i++;
			continue;
		}
		if (g == NULL)
			g = st_acker_slot(a, 0);
		nng_msg_clear(h->msg);
		if (nng_msg_append(h->msg, h->rep, h->rep_len) != 0) {
			held_free(i); /* the requester re-sends */
			continue;
		}
		st_ack_group_reply(g, h->msg, false);
		h->msg = NULL;
		held_free(i);
		if (g->n_reps == CM_GROUP_COMMIT_MAX) {
			push_group(a, g);
			g = NULL;
		}
	}
	if (g != NULL)
		push_group(a, g);
}
