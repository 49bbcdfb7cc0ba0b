/*
 * events.h: a Space's event log, written inside the group's transaction,
 * and the messages that go out once it commits.  Internal to the store.
 *
 * Each event takes its Space's next sequence (from 1, with no gaps),
 * writes its row, and queues its message (ctx->pubs), which the engine
 * publishes after the commit, never before (store.h, st_store_exec).
 */
#ifndef ST_EVENTS_H
#define ST_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "limits.h"
#include "proto.h"

struct st_ctx;

/*
 * A message to publish once the group commits, and what other stores
 * hear of it (st_db_announce): its Space and sequence, or, for a notice
 * (sequence 0), its kind, a name from cm_event_kind_name (static).
 */
struct st_pub {
	char *buf;
	size_t len;
	char space_id[CM_ID_MAX + 1];
	int64_t sequence;
	char kind[33];  /* PR_REC_EVENT's bound; the encoder checked it */
	int64_t serial; /* as published (PR_REC_EVENT) */
};

/* Notes space_id's last event sequence, as read in this request, so that
 * its next event needs no read. */
void st_seq_note(struct st_ctx *ctx, const char *space_id, int64_t last);

/*
 * Appends an event to a Space's log in the current transaction: takes the
 * next sequence, inserts the row and queues the message that is published
 * after commit.  task_id may be NULL; payload is a JSON object text
 * (NULL means "{}") already bounded and redacted.  Returns 0 or -1.
 */
int st_event_append(struct st_ctx *ctx, const char *workspace_id,
    const char *space_id, const char *task_id, const char *kind,
    const char *payload);
/* space_opened, whose published message (not its row) also names host,
 * the host of the Space's instance (proto.h, PR_REC_EVENT). */
int st_event_opened(struct st_ctx *ctx, const char *workspace_id,
    const char *space_id, const char *payload, const char *host);
/* The same, and in the same statement bumps the Space's revision and
 * updated_at, and sets its status unless status is NULL. */
int st_event_touch(struct st_ctx *ctx, const char *workspace_id,
    const char *space_id, const char *task_id, const char *kind,
    const char *payload, const char *status);
/* The event that ends task, named by its terminal status, and in the
 * same statement a running Space goes idle (with a new revision); a Space
 * in any other status stays as it is.  task is the row as this
 * transaction leaves it, and rides with the published event (pr_pub_encode)
 * so that the api answers a request waiting on it without reading it. */
int st_event_settle(
    struct st_ctx *ctx, const struct pr_task *task, const char *payload);

/*
 * Queues a wake-up notice (an event record with sequence 0, see proto.h)
 * for the Space's actor, published after commit like any event but never
 * stored.  Returns 0 or -1.
 */
int st_notice(struct st_ctx *ctx, const char *workspace_id,
    const char *space_id, const char *kind);

/*
 * Bumps a Space's revision and updated_at; a non-NULL status replaces its
 * status.  Returns 0 or -1.
 */
int st_space_touch(
    struct st_ctx *ctx, const char *space_id, const char *status);

/* Frees the messages queued from the from-th on, which will not be
 * published (their writes were undone). */
void st_pubs_clear(struct st_ctx *ctx, size_t from);

/* json_pack(fmt, ...) serialized compactly, an event's payload; the caller
 * frees.  NULL when the format fails or memory runs out. */
char *st_payload(const char *fmt, ...);

#endif
