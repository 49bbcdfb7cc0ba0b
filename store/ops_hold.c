/*
 * ops_hold.c: a Space's hold, an operator's take-over (proto.h,
 * space.takeover and space.release), and its ends: a release, its
 * deadline, the revocation of the token it was taken with, the holder
 * removed from the Space's workspace.
 *
 * A hold is four columns of the Space's row (0009_holds): held_by,
 * held_token, held_until and hold_pending.  A take-over of a Space whose
 * task is active sends that task down the cancel path and waits with
 * hold_pending set; the task's end (st_task_finalize) begins the hold.
 * So the hold is recorded (takeover_started) only once the page is the
 * operator's: no task of the agent still runs on it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "events.h"
#include "ops.h"
#include "reply.h"
#include "rows.h"

/* takeover_started for space, held by principal until `until`. */
static int
started(struct st_ctx *ctx, const char *ws, const char *space,
    const char *principal, int64_t until, bool renewed)
{
	char at[40];
	char *payload;
	int rc;

	if (cm_rfc3339(until, at, sizeof(at)) < 0)
		return -1;
	payload = st_payload("{s:s, s:s, s:b}", "held_by", principal,
	    "held_until", at, "renewed", renewed);
	rc = payload != NULL ? st_event_touch(ctx, ws, space, NULL,
	                           cm_event_kind_name(CM_EV_TAKEOVER_STARTED),
	                           payload, NULL)
	                     : -1;
	free(payload);
	return rc;
}

int
st_hold_end(struct st_ctx *ctx, const char *ws, const char *space,
    const char *reason, const char *by)
{
	static const char upd[] =
	    "UPDATE browser_spaces SET held_by = NULL, held_token = NULL,"
	    " held_until = NULL, hold_pending = 0 WHERE id = $1"
	    " AND held_by IS NOT NULL";
	char *payload;
	int rc;

	if (st_db_run(ctx->db, upd, "s", space) != ST_DONE)
		return -1;
	if (st_db_changes(ctx->db) == 0)
		return 0;
	payload = by != NULL
	              ? st_payload("{s:s, s:s}", "reason", reason, "by", by)
	              : st_payload("{s:s}", "reason", reason);
	rc = payload != NULL
	         ? st_event_touch(ctx, ws, space, NULL,
	               cm_event_kind_name(CM_EV_TAKEOVER_ENDED), payload, NULL)
	         : -1;
	free(payload);
	return rc;
}

int
st_hold_begin_pending(struct st_ctx *ctx, const char *ws, const char *space)
{
	static const char sel[] =
	    "SELECT held_by, held_until FROM browser_spaces WHERE id = $1"
	    " AND hold_pending = 1 AND held_by IS NOT NULL";
	static const char upd[] =
	    "UPDATE browser_spaces SET hold_pending = 0 WHERE id = $1";
	char holder[CM_ID_MAX + 1];
	struct st_stmt *s;
	int64_t until;
	int rc;

	if (st_db_query(ctx->db, &s, sel, "s", space) != ST_OK)
		return -1;
	if ((rc = st_stmt_step(s)) != ST_ROW) {
		st_stmt_done(s);
		return rc == ST_DONE ? 0 : -1;
	}
	snprintf(holder, sizeof(holder), "%s", st_col_text(s, 0));
	until = st_col_int(s, 1);
	st_stmt_done(s);
	if (st_db_run(ctx->db, upd, "s", space) != ST_DONE)
		return -1;
	return started(ctx, ws, space, holder, until, false);
}

/* The hold of sp, as its row reads: whether one is in force (or asked),
 * and whether it is principal's. */
static bool
held_by_other(const struct pr_space *sp, const char *principal)
{
	return sp->held_by != NULL && strcmp(sp->held_by, principal) != 0;
}

void
st_hold_refuse(struct pr_rep *rep, const struct pr_space *sp)
{
	char at[40] = "?";

	cm_rfc3339(sp->held_until, at, sizeof(at));
	pr_rep_error(rep, CM_E_SPACE_HELD,
	    "the browser space is held by %s (%s) until %s: an operator has "
	    "taken it over; it comes back at its release or that deadline",
	    sp->held_by_name != NULL ? sp->held_by_name : "an operator",
	    sp->held_by, at);
}

void
st_op_space_takeover(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char upd[] =
	    "UPDATE browser_spaces SET held_by = $2, held_token = $3,"
	    " held_until = $4, hold_pending = $5, help_requested = 0"
	    " WHERE id = $1";
	const struct pr_space *sp;
	const struct pr_task *t;
	int64_t until;
	bool renew, pending = false;

	if (req->ttl_ms < 1000 || req->ttl_ms > CM_TAKEOVER_TTL_MAX_S * 1000) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST, "ttl_s must be 1..%d",
		    CM_TAKEOVER_TTL_MAX_S);
		return;
	}
	if (st_load_space(ctx, rep, req->workspace_id, req->space_id) != 1)
		return;
	sp = &rep->spaces[0];
	if (cm_space_status_is(sp->status, CM_SPACE_CLOSED) ||
	    sp->close_requested) {
		pr_rep_error(rep, CM_E_SPACE_CLOSED, "the browser space is %s",
		    cm_space_status_is(sp->status, CM_SPACE_CLOSED)
		        ? "closed"
		        : "closing");
		return;
	}
	if (cm_space_status_is(sp->status, CM_SPACE_ERROR)) {
		pr_rep_error(rep, CM_E_SPACE_UNUSABLE,
		    "the browser space is in error (%s)",
		    sp->last_error_code ? sp->last_error_code : "unknown");
		return;
	}
	if (held_by_other(sp, req->principal_id)) {
		st_hold_refuse(rep, sp);
		return;
	}
	renew = sp->held_by != NULL;
	until = ctx->now + req->ttl_ms;
	if (!renew) {
		if (st_load_active_task(ctx, rep, req->space_id, NULL) < 0)
			goto fail;
		if (rep->n_tasks == 1) {
			t = &rep->tasks[0];
			if (st_task_request_cancel(ctx, req->workspace_id,
			        req->space_id, t->task_id) < 0)
				goto fail;
			/* A queued task never reached the page: it ends
			 * here, and the hold begins at once. */
			if (cm_task_status_is(t->status, CM_TASK_QUEUED)) {
				if (st_task_finalize(ctx, req->workspace_id,
				        req->space_id, t->task_id,
				        CM_TASK_CANCELLED, NULL, NULL,
				        NULL) != 0)
					goto fail;
			} else {
				pending = true;
			}
		}
		rep->n_tasks = 0;
	} else {
		pending = sp->hold_pending;
	}
	if (st_db_run(ctx->db, upd, "sssii", req->space_id, req->principal_id,
	        req->token_id, until, (int64_t)pending) != ST_DONE)
		goto fail;
	if (!pending && started(ctx, req->workspace_id, req->space_id,
	                    req->principal_id, until, renew) != 0)
		goto fail;
	if (pending && st_space_touch(ctx, req->space_id, NULL) != 0)
		goto fail;
	rep->n_spaces = 0;
	if (st_load_space(ctx, rep, req->workspace_id, req->space_id) == 1)
		st_load_active_task(ctx, rep, req->space_id, NULL);
	return;
fail:
	st_db_failed(ctx, rep, "space takeover");
}

void
st_op_space_release(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	const struct pr_space *sp;
	bool manager = req->is_admin ||
	               (req->role != NULL && strcmp(req->role, "manager") == 0);

	if (st_load_space(ctx, rep, req->workspace_id, req->space_id) != 1)
		return;
	sp = &rep->spaces[0];
	if (sp->held_by == NULL) {
		pr_rep_error(
		    rep, CM_E_CONFLICT, "the browser space is not held");
		return;
	}
	if (held_by_other(sp, req->principal_id) && !manager) {
		pr_rep_error(rep, CM_E_FORBIDDEN,
		    "only its holder or a manager releases a hold");
		return;
	}
	if (st_hold_end(ctx, req->workspace_id, req->space_id, "released",
	        req->principal_id) < 0) {
		st_db_failed(ctx, rep, "space release");
		return;
	}
	rep->n_spaces = 0;
	if (st_load_space(ctx, rep, req->workspace_id, req->space_id) == 1)
		st_load_active_task(ctx, rep, req->space_id, NULL);
}

int
st_hold_sweep(struct st_ctx *ctx, enum st_holds which, const char *key,
    const char *ws, const char *reason)
{
	static const char *const sql[] = {
	    [ST_HOLDS_DUE] = "SELECT id, workspace_id FROM browser_spaces"
	                     " WHERE held_by IS NOT NULL AND held_until <= $1"
	                     " LIMIT " CM_STR(CM_HOLD_SWEEP_MAX),
	    [ST_HOLDS_OF_TOKEN] =
	        "SELECT id, workspace_id FROM browser_spaces"
	        " WHERE held_by IS NOT NULL AND held_token = $1"
	        " LIMIT " CM_STR(CM_HOLD_SWEEP_MAX),
	    [ST_HOLDS_OF_MEMBER] =
	        "SELECT id, workspace_id FROM browser_spaces"
	        " WHERE held_by IS NOT NULL AND held_by = $1"
	        " AND workspace_id = $2 LIMIT " CM_STR(CM_HOLD_SWEEP_MAX),
	};
	struct {
		char id[CM_ID_MAX + 1], ws[CM_ID_MAX + 1];
	} due[CM_HOLD_SWEEP_MAX];
	struct st_stmt *s;
	size_t n = 0;
	int rc;

	if (which == ST_HOLDS_DUE)
		rc = st_db_query(ctx->db, &s, sql[which], "i", ctx->now);
	else if (which == ST_HOLDS_OF_TOKEN)
		rc = st_db_query(ctx->db, &s, sql[which], "s", key);
	else
		rc = st_db_query(ctx->db, &s, sql[which], "ss", key, ws);
	if (rc != ST_OK)
		return -1;
	/* Collect first: ending a hold updates the table being read. */
	while (n < CM_HOLD_SWEEP_MAX && st_stmt_step(s) == ST_ROW) {
		snprintf(due[n].id, sizeof(due[n].id), "%s", st_col_text(s, 0));
		snprintf(due[n].ws, sizeof(due[n].ws), "%s", st_col_text(s, 1));
		n++;
	}
	st_stmt_done(s);
	for (size_t i = 0; i < n; i++)
		if (st_hold_end(ctx, due[i].ws, due[i].id, reason, NULL) < 0)
			return -1;
	return (int)n;
}
