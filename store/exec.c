/*
 * exec.c: one pass over a group's requests (exec.h).
 */
#include "exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "events.h"
#include "log.h"
#include "opid.h"
#include "status.h"

int64_t
st_exec_now(const struct st_store_opts *opts)
{
	return opts->now_ms ? opts->now_ms(opts->now_arg) : cm_now_ms();
}

/* Encodes rep into the item, or a bare error reply if that fails. */
static void
item_reply(struct st_item *it, const struct pr_rep *rep)
{
	struct pr_rep fallback;

	if (pr_rep_encode(rep, &it->rep, &it->rep_len) == 0)
		return;
	cm_warnx("store: cannot encode a reply");
	memset(&fallback, 0, sizeof(fallback));
	fallback.err = CM_E_INTERNAL;
	if (pr_rep_encode(&fallback, &it->rep, &it->rep_len) != 0) {
		it->rep = NULL;
		it->rep_len = 0;
	}
}

void
st_item_error(struct st_item *it, enum cm_err err, const char *msg)
{
	struct pr_rep rep;

	memset(&rep, 0, sizeof(rep));
	rep.err = err;
	rep.msg = msg;
	free(it->rep);
	item_reply(it, &rep);
}

/*
 * Whether the caller may hold its answer (store.h, enum st_hold): an idle
 * claim that asked to wait and found nothing to do in a Space that runs,
 * or the loss of a Space's actor; or what a finish tells of its actor.
 */
static void
item_hold(
    struct st_item *it, const struct pr_req *req, const struct pr_rep *rep)
{
	it->hold = ST_HOLD_NONE;
	if (rep->err != CM_OK)
		return;
	if (req->op == PR_OP_ACTOR_CLAIM && req->wait_ms > 0 &&
	    rep->n_tasks == 0 && !rep->close_requested && rep->n_spaces == 1 &&
	    !cm_space_status_is(rep->spaces[0].status, CM_SPACE_CLOSED) &&
	    !cm_space_status_is(rep->spaces[0].status, CM_SPACE_ERROR)) {
		it->hold = ST_HOLD_PARK;
		it->hold_ms = req->wait_ms < CM_CLAIM_WAIT_MAX_MS
		                  ? req->wait_ms
		                  : CM_CLAIM_WAIT_MAX_MS;
	} else if (req->op == PR_OP_SUP_FINALIZE_LOST) {
		it->hold = ST_HOLD_DROP;
	} else if (req->op == PR_OP_ACTOR_FINISH && rep->n_tasks == 1 &&
	           !rep->close_requested && rep->tasks[0].space_id != NULL) {
		it->hold = ST_HOLD_NEXT;
		snprintf(it->space_id, sizeof(it->space_id), "%s",
		    rep->tasks[0].space_id);
		return;
	} else {
		return;
	}
	snprintf(it->space_id, sizeof(it->space_id), "%s", req->space_id);
}

/*
 * One write.  Guarded, it runs inside its own SAVEPOINT, so a failure
 * after some of its changes undoes only itself.  Unguarded (the first
 * pass over a group), it runs bare: a write that fails before changing
 * anything needs no undo, which is nearly every failure, since every
 * operation checks before it writes.  One that fails after changing rows
 * cannot be undone alone, so it reports false and the group runs again,
 * guarded.  it->rep is then left to the caller.
 *
 * Guarded, the op_id memory is read first.  Unguarded, a write runs
 * before the memory is read, since nearly every op_id is new: a repeat
 * that changes rows again is caught when its op_id cannot be stored
 * twice, and the group runs again, guarded; one that changes nothing
 * looks its first reply up afterwards.
 */
static bool
exec_write(struct st_ctx *ctx, const struct pr_req *req, struct st_item *it,
    bool guarded)
{
	struct pr_rep rep;
	size_t mark = ctx->n_pubs;
	int64_t changes;
	bool keep, changed;

	if (guarded &&
	    st_opid_recall(ctx->db, req->op_id, &it->rep, &it->rep_len))
		return true;
	if (guarded && st_db_run(ctx->db, "SAVEPOINT op", "") != ST_DONE) {
		st_item_error(it, CM_E_INTERNAL, "database error");
		return true;
	}
	memset(&rep, 0, sizeof(rep));
	ctx->keep_on_error = false;
	changes = st_db_total_changes(ctx->db);
	st_ops_dispatch(ctx, req, &rep);
	keep = rep.err == CM_OK || ctx->keep_on_error;
	changed = st_db_total_changes(ctx->db) != changes;
	if (!keep && changed && !guarded) {
		pr_rep_free(&rep);
		return false;
	}
	if (!keep) {
		if (guarded)
			st_db_run(ctx->db, "ROLLBACK TO op", "");
		st_pubs_clear(ctx, mark);
		changed = false;
	}
	if (!guarded && !changed &&
	    st_opid_recall(ctx->db, req->op_id, &it->rep, &it->rep_len)) {
		pr_rep_free(&rep);
		st_pubs_clear(ctx, mark);
		return true;
	}
	item_reply(it, &rep);
	item_hold(it, req, &rep);
	pr_rep_free(&rep);
	/*
	 * Only a write that changed something is remembered: one that changed
	 * nothing (a claim that found no task, a failed check) is just as
	 * harmless to apply again, and an idle actor's polling then costs no
	 * row.
	 */
	if (changed && it->rep != NULL &&
	    st_opid_remember(
	        ctx->db, req->op_id, it->rep, it->rep_len, ctx->now) != 0) {
		/* A repeat applied again, or a failure: the guarded run reads
		 * the memory first. */
		if (!guarded)
			return false;
		st_db_run(ctx->db, "ROLLBACK TO op", "");
		st_pubs_clear(ctx, mark);
		st_item_error(it, CM_E_INTERNAL, "database error");
		it->hold = ST_HOLD_NONE;
	}
	if (guarded)
		st_db_run(ctx->db, "RELEASE op", "");
	return true;
}

void
st_exec_reset(struct st_item *items, size_t n, const bool *ok)
{
	for (size_t i = 0; i < n; i++) {
		if (!ok[i])
			continue;
		free(items[i].rep);
		items[i].rep = NULL;
		items[i].rep_len = 0;
		items[i].hold = ST_HOLD_NONE;
	}
}

/*
 * One pass over a group inside the open transaction.  Returns false when
 * an unguarded write failed after changing rows.
 */
bool
st_exec_pass(struct st_ctx *ctx, const struct pr_req *reqs, const bool *ok,
    struct st_item *items, size_t n, bool guarded)
{
	for (size_t i = 0; i < n; i++) {
		struct pr_rep rep;

		if (!ok[i])
			continue;
		ctx->now = st_exec_now(ctx->opts);
		if (pr_op_is_write(reqs[i].op)) {
			if (!exec_write(ctx, &reqs[i], &items[i], guarded))
				return false;
			if (!st_db_in_txn(ctx->db))
				break;
			continue;
		}
		memset(&rep, 0, sizeof(rep));
		st_ops_dispatch(ctx, &reqs[i], &rep);
		item_reply(&items[i], &rep);
		pr_rep_free(&rep);
		/*
		 * Some errors (an I/O error, a full disk) make SQLite roll the
		 * whole transaction back by itself.  Nothing more may run:
		 * it would commit on its own.  The COMMIT then fails and the
		 * group is answered store_unavailable.
		 */
		if (!st_db_in_txn(ctx->db))
			break;
	}
	return true;
}
