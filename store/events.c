/*
 * events.c: a Space's event log and the messages published after the
 * commit (events.h).
 */
#include "events.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

void
st_seq_note(struct st_ctx *ctx, const char *space_id, int64_t last)
{
	size_t n = strlen(space_id);

	if (n >= sizeof(ctx->seq_space)) {
		ctx->seq_space[0] = '\0';
		return;
	}
	memcpy(ctx->seq_space, space_id, n + 1);
	ctx->seq_last = last;
	ctx->seq_locked = false;
}

static int
pubs_push(struct st_ctx *ctx, char *buf, size_t len, const struct pr_event *ev)
{
	struct st_pub *pub;

	if (ctx->n_pubs == ctx->cap_pubs) {
		size_t cap = ctx->cap_pubs ? ctx->cap_pubs * 2 : 64;
		struct st_pub *p = realloc(ctx->pubs, cap * sizeof(*p));

		if (p == NULL)
			return -1;
		ctx->pubs = p;
		ctx->cap_pubs = cap;
	}
	pub = &ctx->pubs[ctx->n_pubs++];
	pub->buf = buf;
	pub->len = len;
	/* The encoder checked the id against CM_ID_MAX. */
	snprintf(pub->space_id, sizeof(pub->space_id), "%s", ev->space_id);
	pub->sequence = ev->sequence;
	/* A copy: the caller's may not outlive the statement it came from. */
	snprintf(pub->kind, sizeof(pub->kind), "%s", ev->kind);
	pub->serial = ev->serial;
	return 0;
}

/*
 * What an event does to its Space's row besides numbering it.  Each is one
 * statement with the numbering: the row is written once per event.
 */
enum space_change {
	SPACE_SAME,   /* numbering only */
	SPACE_TOUCH,  /* revision + 1, updated_at, and status unless NULL */
	SPACE_SETTLE, /* a running Space goes idle; any other stays as it is */
};

/* The group's row of space_id (struct st_ctx), or NULL. */
static struct st_seq_row *
group_seq(struct st_ctx *ctx, const char *space_id)
{
	for (size_t i = 0; i < ctx->n_group_seq; i++)
		if (strcmp(ctx->group_seq[i].space_id, space_id) == 0)
			return &ctx->group_seq[i];
	return NULL;
}

/*
 * The next event sequence of space_id into *seq.  Returns 0 or -1.
 *
 * A plain read then write: cheaper in SQLite than UPDATE RETURNING (which
 * buffers its rows), and safe because the store is the only writer.  On a
 * shared database (PostgreSQL, other hosts' stores) the read locks the
 * Space row until the commit, and no value read before it is trusted:
 * two writers then take turns, and the second reads the first one's
 * sequence.
 */
static int
next_sequence(struct st_ctx *ctx, const char *space_id, int64_t *seq)
{
	static const char next_sql[] =
	    "SELECT last_sequence + 1 FROM browser_spaces WHERE id = $1";
	static const char next_lock_sql[] =
	    "SELECT last_sequence + 1 FROM browser_spaces WHERE id = $1"
	    " FOR UPDATE";
	bool shared = st_db_shared(ctx->db);
	struct st_seq_row *row;
	struct st_stmt *s;

	if (strcmp(ctx->seq_space, space_id) == 0 &&
	    (!shared || ctx->seq_locked)) {
		*seq = ctx->seq_last + 1;
		return 0;
	}
	if ((row = group_seq(ctx, space_id)) != NULL) {
		*seq = row->last + 1;
		return 0;
	}
	if (st_db_query(ctx->db, &s, shared ? next_lock_sql : next_sql, "s",
	        space_id) != ST_OK)
		return -1;
	if (st_stmt_step(s) != ST_ROW) {
		st_stmt_done(s);
		return -1;
	}
	*seq = st_col_int(s, 0);
	st_stmt_done(s);
	return 0;
}

/* Writes seq as space_id's last sequence, with what change does to the
 * row besides (sent ahead while the database defers: db.h).  Returns 0 or
 * -1. */
static int
number_event(struct st_ctx *ctx, const char *space_id, int64_t seq,
    enum space_change change, const char *status)
{
	static const char same_sql[] =
	    "UPDATE browser_spaces SET last_sequence = $2 WHERE id = $1";
	static const char touch_sql[] =
	    "UPDATE browser_spaces SET last_sequence = $2,"
	    " status = COALESCE($3, status), revision = revision + 1,"
	    " updated_at = $4 WHERE id = $1";
	static const char settle_sql[] =
	    "UPDATE browser_spaces SET last_sequence = $2,"
	    " status = CASE WHEN status = 'running' THEN 'idle'"
	    " ELSE status END,"
	    " revision = revision + CASE WHEN status = 'running' THEN 1"
	    " ELSE 0 END,"
	    " updated_at = CASE WHEN status = 'running' THEN $3"
	    " ELSE updated_at END"
	    " WHERE id = $1";
	int rc;

	switch (change) {
	case SPACE_SAME:
		rc = st_db_send(ctx->db, 1, same_sql, "si", space_id, seq);
		break;
	case SPACE_TOUCH:
		rc = st_db_send(ctx->db, 1, touch_sql, "sisi", space_id, seq,
		    status, ctx->now);
		break;
	default:
		rc = st_db_send(
		    ctx->db, 1, settle_sql, "sii", space_id, seq, ctx->now);
		break;
	}
	return rc == ST_DONE ? 0 : -1;
}

/* Encodes ev (with task, when it ends one) and queues it to be published
 * after the commit.  Returns 0 or -1. */
static int
queue_event(
    struct st_ctx *ctx, const struct pr_event *ev, const struct pr_task *task)
{
	struct pr_event e = *ev;
	char *buf;
	size_t len;

	/* Numbered in the order of pubs, which is the order they leave. */
	e.serial = ctx->pub_serial + (int64_t)ctx->n_pubs + 1;
	if (pr_pub_encode(&e, task, &buf, &len) != 0)
		return -1;
	if (pubs_push(ctx, buf, len, &e) != 0) {
		free(buf);
		return -1;
	}
	return 0;
}

static int
event_add(struct st_ctx *ctx, const char *workspace_id, const char *space_id,
    const char *task_id, const char *kind, const char *payload,
    enum space_change change, const char *status, const char *host,
    const struct pr_task *task)
{
	static const char insert_sql[] =
	    "INSERT INTO browser_space_events"
	    " (space_id, task_id, sequence, kind, payload, created_at)"
	    " VALUES ($1, $2, $3, $4, $5, $6)";
	struct st_seq_row *row;
	struct pr_event ev;
	int64_t seq;

	if (payload == NULL)
		payload = "{}";
	if (next_sequence(ctx, space_id, &seq) != 0 ||
	    number_event(ctx, space_id, seq, change, status) != 0)
		return -1;
	if (st_db_send(ctx->db, 1, insert_sql, "ssissi", space_id, task_id, seq,
	        kind, payload, ctx->now) != ST_DONE)
		return -1;
	st_seq_note(ctx, space_id, seq);
	/* The row stays locked until the commit. */
	ctx->seq_locked = st_db_shared(ctx->db);
	if ((row = group_seq(ctx, space_id)) != NULL)
		row->last = seq;

	memset(&ev, 0, sizeof(ev));
	ev.workspace_id = workspace_id;
	ev.space_id = space_id;
	ev.task_id = task_id;
	ev.sequence = seq;
	ev.kind = kind;
	ev.payload = payload;
	ev.created_at = ctx->now;
	ev.host = host;
	return queue_event(ctx, &ev, task);
}

int
st_event_append(struct st_ctx *ctx, const char *workspace_id,
    const char *space_id, const char *task_id, const char *kind,
    const char *payload)
{
	return event_add(ctx, workspace_id, space_id, task_id, kind, payload,
	    SPACE_SAME, NULL, NULL, NULL);
}

int
st_event_opened(struct st_ctx *ctx, const char *workspace_id,
    const char *space_id, const char *payload, const char *host)
{
	return event_add(ctx, workspace_id, space_id, NULL,
	    cm_event_kind_name(CM_EV_SPACE_OPENED), payload, SPACE_SAME, NULL,
	    host, NULL);
}

int
st_event_touch(struct st_ctx *ctx, const char *workspace_id,
    const char *space_id, const char *task_id, const char *kind,
    const char *payload, const char *status)
{
	return event_add(ctx, workspace_id, space_id, task_id, kind, payload,
	    SPACE_TOUCH, status, NULL, NULL);
}

int
st_event_settle(
    struct st_ctx *ctx, const struct pr_task *task, const char *payload)
{
	return event_add(ctx, task->workspace_id, task->space_id, task->task_id,
	    task->status, payload, SPACE_SETTLE, NULL, NULL, task);
}

int
st_notice(struct st_ctx *ctx, const char *workspace_id, const char *space_id,
    const char *kind)
{
	struct pr_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.workspace_id = workspace_id;
	ev.space_id = space_id;
	ev.kind = kind;
	ev.created_at = ctx->now;
	return queue_event(ctx, &ev, NULL);
}

int
st_space_touch(struct st_ctx *ctx, const char *space_id, const char *status)
{
	static const char sql[] =
	    "UPDATE browser_spaces SET status = COALESCE($2, status),"
	    " revision = revision + 1, updated_at = $3 WHERE id = $1";

	return st_db_send(ctx->db, 1, sql, "ssi", space_id, status, ctx->now) ==
	               ST_DONE
	           ? 0
	           : -1;
}

char *
st_payload(const char *fmt, ...)
{
	va_list ap;
	json_t *v;
	char *out;

	va_start(ap, fmt);
	v = json_vpack_ex(NULL, 0, fmt, ap);
	va_end(ap);
	if (v == NULL)
		return NULL;
	out = json_dumps(v, JSON_COMPACT);
	json_decref(v);
	return out;
}

void
st_pubs_clear(struct st_ctx *ctx, size_t from)
{
	for (size_t i = from; i < ctx->n_pubs; i++)
		free(ctx->pubs[i].buf);
	ctx->n_pubs = from;
}
