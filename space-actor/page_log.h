/*
 * page_log.h: what the Space's page did (a dialog, a tab, a download,
 * driver.h's act_page_event), queued as page events for the Space's log.
 * The actor queues each as its driver tells it, on its loop, and its
 * store calls record the queue oldest first (calls.c, space.page_event).
 * Single-threaded; nothing here blocks.
 */
#ifndef ACT_PAGE_LOG_H
#define ACT_PAGE_LOG_H

#include <stdint.h>

#include "driver.h"
#include "ids.h"
#include "limits.h"
#include "redact.h"

/* One page event waiting to be recorded. */
struct act_page_ev {
	enum cm_event_kind kind;
	char *payload;               /* malloc'd JSON: bounded, redacted */
	char task_id[CM_ID_MAX + 1]; /* the task it happened during; "" */
	char op_id[CM_UUID_LEN];     /* for every attempt to record it */
};

/* The queue, oldest first, and how many were queued in the second begun
 * at window_ms.  A zeroed one is empty. */
struct act_page_log {
	struct act_page_ev ev[CM_ACTOR_PAGE_EVENTS_MAX];
	int n;
	int64_t window_ms;
	int window_n;
};

/*
 * The payload of ev as the store takes it (docs/api.md): each string
 * redacted with the literal secrets sec (may be NULL), then cut to its
 * bound (a dialog's message and a prompt's default text
 * CM_DIALOG_MESSAGE_MAX, a url CM_URL_MAX, a download's name
 * CM_DOWNLOAD_NAME_MAX).  malloc'd JSON text (the caller frees), or NULL
 * when ev lacks what its kind shows or memory ran out.
 */
char *act_page_log_payload(
    const struct act_page_event *ev, const struct cm_secrets *sec);

/*
 * Queues ev, its payload made at once (act_page_log_payload), under
 * task_id (the task whose call runs; NULL for none), with a fresh op_id.
 * Past CM_ACTOR_PAGE_EVENTS_MAX queued, or CM_ACTOR_PAGE_EVENTS_PER_S
 * queued in the last second, it is only logged (as space_id's): a page
 * that opens dialogs in a loop cannot grow the queue or the Space's log
 * without bound.  A kind that is not the page's is ignored.  Returns 1
 * queued, 0 not.
 */
int act_page_log_add(struct act_page_log *l, const struct act_page_event *ev,
    const char *task_id, const struct cm_secrets *sec, const char *space_id);

/* Drops the oldest (recorded, or refused). */
void act_page_log_pop(struct act_page_log *l);
/* Drops every one (the actor is ending). */
void act_page_log_clear(struct act_page_log *l);

#endif
