/*
 * held.h: idle actors' claims held by the store until there may be a
 * task for them (store/held.c says why).
 *
 * A held claim is the request as received, whose raw header routes the
 * answer, and the answer it got (no task).  It is answered as it stands
 * once its time is up, run again by the loop once an event of its Space
 * is published, and dropped unanswered when its actor is gone.  The held
 * claims are the loop thread's alone, but for the pipes closed, which nng
 * reports from its own thread.
 */
#ifndef ST_HELD_H
#define ST_HELD_H

#include <nng/nng.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acker.h"
#include "limits.h"
#include "store.h"

/* The Spaces a group published events of. */
#define ST_WOKEN_MAX (2 * CM_GROUP_COMMIT_MAX)
struct st_woken {
	size_t n;
	bool all; /* more than ST_WOKEN_MAX */
	char space[ST_WOKEN_MAX][CM_ID_MAX + 1];
};

/* Empties w. */
void st_woken_clear(struct st_woken *w);
/* Adds space_id to w once; past ST_WOKEN_MAX, w stands for every Space. */
void st_woken_add(struct st_woken *w, const char *space_id);

/*
 * Makes room for CM_STORE_HELD_MAX claims (without it every claim is
 * answered at once) and follows the pipes of rep that close.  Returns 0,
 * or nng's error when the pipes cannot be followed.
 */
int st_held_start(nng_socket rep);
/* Frees every claim held, unanswered (their actors ask again).  Call it
 * once rep is closed. */
void st_held_stop(void);

/*
 * Holds the claim msg, whose answer it->rep is (taken, it->rep set to
 * NULL), for it->hold_ms from now.  A claim of the same Space held before
 * is answered as it stands.  Returns false, taking nothing, when there is
 * no room or msg's pipe has closed: the caller answers it.
 */
bool st_held_park(nng_msg *msg, struct st_item *it, int64_t now);
/* The actor of space was answered a finish at now: it claims next, at
 * once (space-actor/actor.c), so for CM_CLAIM_NEXT_MS its Space counts as
 * waiting. */
void st_held_expect(const char *space, int64_t now);
/* Whether a claim of space is held, to run again at its Space's next
 * event (one to be answered as it stands is not), or expected. */
bool st_held_waiting(const char *space);
/* The Space's actor was declared lost: its claim goes unanswered. */
void st_held_drop(const char *space);
/* Marks the claims of the Spaces w woke to run again. */
void st_held_wake(const struct st_woken *w);
/*
 * Drops the claims of the pipes closed since the last call; more of
 * those than CM_STORE_PIPES_GONE_MAX, and every claim is to be answered
 * as it stands.
 */
void st_held_forget_gone(void);

/* Whether a claim is marked to run again. */
bool st_held_reruns(void);
/*
 * Takes up to max claims marked to run again, once those of closed pipes
 * are dropped (st_held_forget_gone): each one's request into msgs[i] (the
 * caller's from here), when its time is up into due_ms[i].  Their answers
 * as they stood are freed.  Returns how many.
 */
size_t st_held_take_reruns(nng_msg **msgs, int64_t *due_ms, size_t max);
/* When the next claim's time is up (INT64_MAX: none). */
int64_t st_held_due(void);
/*
 * Answers as they stand, once those of closed pipes are dropped, the
 * claims not marked to run again whose time is up at now, in groups of
 * replies alone handed to a.
 */
void st_held_answer_due(struct st_acker *a, int64_t now);

#endif
