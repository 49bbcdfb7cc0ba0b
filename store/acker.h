/*
 * acker.h: the thread that makes each committed group durable, then
 * publishes its events and sends its replies.
 *
 * The loop fills groups in a ring of CM_ACK_GROUPS and hands them over;
 * the acker finishes their syncs (st_store_sync) in the order of the
 * groups, events before replies, while the loop runs the next group.
 * When it has sent no event for CM_STORE_BEAT_MS it sends the beat
 * (pr_beat_encode) with the serial of the last event it sent or dropped,
 * so that a subscriber learns of a lost last event, and that the feed
 * lives.
 */
#ifndef ST_ACKER_H
#define ST_ACKER_H

#include <nng/nng.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "limits.h"
#include "send.h"
#include "store.h"

/* A notice of the supervisor's; queued: the Space of a queued task ("" for
 * any other kind), which st_ack_group_settle may drop. */
struct st_ack_note {
	nng_msg *m;
	char queued[CM_ID_MAX + 1];
};

/* A committed group: what leaves once its commit is on disk. */
struct st_ack_group {
	nng_msg *reps[CM_GROUP_COMMIT_MAX];
	bool write[CM_GROUP_COMMIT_MAX]; /* reps[i] answers a write */
	size_t n_reps;
	nng_msg **pubs;
	size_t n_pubs, cap_pubs;
	struct st_ack_note *notes; /* the supervisor's notices among them */
	size_t n_notes, cap_notes;
	int64_t serial;       /* of its last event (0: none), sent or dropped */
	struct st_sync *sync; /* NULL: nothing of its own to sync */
	int64_t committed;    /* cm_mono_ns when handed over */
};

/* Where the acker's time went, in ns, for the loop's log line. */
struct st_acker_stats {
	int64_t wait_ns; /* groups queued before it took them */
	int64_t sync_ns; /* spent in st_store_sync */
	uint64_t syncs;
};

struct st_acker;

/*
 * Starts the thread, which alone calls st_store_sync(_covers) on st and
 * sends through reps (replies), events and notices (the supervisor's,
 * after the events); all four stay the caller's and must outlive
 * st_acker_stop.  Returns 0 with *out set, or -1.
 */
int st_acker_start(struct st_acker **out, struct st_store *st,
    struct st_sender *reps, struct st_sender *events,
    struct st_sender *notices);
/*
 * Acknowledges every group handed over, stops the thread, fills stats
 * (unless NULL) and frees the acker.  NULL is ignored.
 */
void st_acker_stop(struct st_acker *a, struct st_acker_stats *stats);
/*
 * The next group to fill, after the k the loop has filled and not yet
 * handed over, empty once the acker is done with it.  Waits while the ring
 * is full.  Only the loop fills groups.
 */
struct st_ack_group *st_acker_slot(struct st_acker *a, size_t k);
/*
 * Hands over, at once, the n groups filled (on SQLite one sync then
 * covers them all).  Each must have its sync and committed set.
 */
void st_acker_push(struct st_acker *a, size_t n);

/* Appends reply m (taken) to g; write: it answers a write, whose reply
 * stands only if the group's commit does.  g must have room. */
void st_ack_group_reply(struct st_ack_group *g, nng_msg *m, bool write);
/* Appends a copy of the event message buf, of serial serial, to g.  Out
 * of memory it is dropped: subscribers recover from sequence gaps, and
 * see the serial jump. */
void st_ack_group_event(
    struct st_ack_group *g, const void *buf, size_t len, int64_t serial);
/* Appends a copy of buf to g's notices; queued_space: the Space, when it
 * is a queued task's (else NULL).  Out of memory it is dropped: the
 * supervisor's rescan and the actors' own claims make up for it. */
void st_ack_group_notice(struct st_ack_group *g, const void *buf, size_t len,
    const char *queued_space);
/* Drops g's queued notices of the Spaces held says hold a claim, which its
 * answer wakes: the group's own claims are held by now. */
void st_ack_group_settle(struct st_ack_group *g, bool (*held)(const char *));

#endif
