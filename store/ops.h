/*
 * ops.h: the store's operations, one handler per proto op, the context
 * they run in, and the helpers one handler file lends another.  Internal
 * to the store.  The helpers every handler uses are declared by module:
 * reply.h (building a reply), rows.h (Space and task rows), events.h (the
 * event log) and bundles.h (runtime bundles).
 *
 * A handler runs inside the group's transaction and, for a write, inside
 * its own SAVEPOINT.  It fills rep; when rep->err is not CM_OK the
 * savepoint is rolled back, unless the handler set ctx->keep_on_error
 * (a submit that persists a failed task still answers with an error).
 */
#ifndef ST_OPS_H
#define ST_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "capability.h"
#include "db.h"
#include "proto.h"
#include "status.h"
#include "store.h"

struct st_ctx {
	struct st_db *db;
	const struct st_store_opts *opts;
	int64_t now;                /* ms, fixed for one request */
	bool keep_on_error;         /* set by a handler; reset per request */
	struct st_bundles *bundles; /* owned by the st_store */
	/* Events appended so far in this group, in commit order. */
	struct st_pub *pubs;
	size_t n_pubs, cap_pubs;
	/* The serial of the last event published (PR_REC_EVENT): pubs[i]
	 * will be published as pub_serial + i + 1. */
	int64_t pub_serial;
	/*
	 * The last event sequence of one Space as this request has read or
	 * written it, so appending its next event needs no read.  Empty at
	 * the start of every request; only event_add changes a sequence.
	 */
	char seq_space[CM_ID_MAX + 1];
	int64_t seq_last;
	/* seq_last was read under the Space row's lock (st_db_shared). */
	bool seq_locked;
	/*
	 * On a shared database, the last event sequences of the Spaces the
	 * group locked first (store.c), read with their locks and kept as
	 * its events number on, so that an event needs no read.  Kept only
	 * through a pass that runs again whole when any of it fails: one
	 * that undoes a single request would leave them behind.
	 */
	struct st_seq_row {
		char space_id[CM_ID_MAX + 1];
		int64_t last;
	} group_seq[CM_GROUP_COMMIT_MAX];
	size_t n_group_seq;
};

typedef void st_op_fn(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep);

/* Runs the handler for req->op. */
void st_ops_dispatch(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep);

/* Handlers, by file. */
st_op_fn st_op_ping, st_op_auth_resolve, st_op_workspace_create,
    st_op_workspace_list, st_op_principal_create, st_op_principal_list,
    st_op_token_issue, st_op_token_revoke, st_op_member_put,
    st_op_member_remove; /* ops_admin */
st_op_fn st_op_bundle_create, st_op_bundle_list, st_op_instance_register,
    st_op_instance_list, st_op_instance_set_status, st_op_binding_create,
    st_op_binding_delete;    /* ops_runtime */
st_op_fn st_op_space_create; /* ops_space_create */
st_op_fn st_op_space_get, st_op_space_list, st_op_space_close,
    st_op_space_mark_closed, st_op_space_mark_error,
    st_op_space_network_blocked, st_op_space_page_event,
    st_op_event_list; /* ops_space */
st_op_fn st_op_task_submit, st_op_task_get, st_op_task_list,
    st_op_task_cancel; /* ops_task */
st_op_fn st_op_actor_load, st_op_actor_claim, st_op_actor_heartbeat,
    st_op_actor_finish, st_op_sup_finalize_lost, st_op_sup_sweep_leases,
    st_op_sup_list_active, st_op_sup_list_cdp; /* ops_actor */
st_op_fn st_op_artifact_get;                   /* ops_artifact */
st_op_fn st_op_space_file_put, st_op_space_file_list,
    st_op_space_file_get;                           /* ops_file */
st_op_fn st_op_space_takeover, st_op_space_release; /* ops_hold */

/*
 * A Space's hold (ops_hold.c).  st_hold_refuse answers 409 space_held for
 * sp, naming its holder and deadline.  st_hold_begin_pending begins the
 * hold a take-over asked while the Space's task ran, once it has ended
 * (takeover_started); 0 when none was asked.  st_hold_end ends the
 * Space's hold, if any, with a takeover_ended of reason (by: who, or
 * NULL); 1 when it ended one, 0 when none, -1 on error.  st_hold_sweep
 * ends, with reason, the holds that are due (ST_HOLDS_DUE), that were
 * taken with token key, or that principal key holds in workspace ws: at
 * most CM_HOLD_SWEEP_MAX a call; returns how many, or -1.
 */
enum st_holds { ST_HOLDS_DUE, ST_HOLDS_OF_TOKEN, ST_HOLDS_OF_MEMBER };
void st_hold_refuse(struct pr_rep *rep, const struct pr_space *sp);
int st_hold_begin_pending(
    struct st_ctx *ctx, const char *ws, const char *space);
int st_hold_end(struct st_ctx *ctx, const char *ws, const char *space,
    const char *reason, const char *by);
int st_hold_sweep(struct st_ctx *ctx, enum st_holds which, const char *key,
    const char *ws, const char *reason);

/*
 * A finish's artifact (ops_artifact.c).  st_artifact_check returns 0 when
 * req carries none, 1 when it carries a valid one (name, mime and bytes,
 * on a completed task), -1 with rep set to invalid_request otherwise.
 * st_artifact_put writes it for the task, with the size and sha256 the
 * store computes, in the current transaction.  Returns 0 or -1.
 */
int st_artifact_check(const struct pr_req *req, struct pr_rep *rep);
int st_artifact_put(struct st_ctx *ctx, const struct pr_req *req,
    const char *space_id, const char *task_id);

/*
 * Helpers of the admin handlers (ops_admin.c), shared with ops_runtime.c.
 */

/* True when v is one of the NULL-terminated set (false for NULL v). */
bool st_admin_one_of(const char *v, const char *const *set);
/* A name of 1 to CM_NAME_MAX bytes (false for NULL). */
bool st_admin_name_ok(const char *v);
/* Runs a SELECT with at most one text parameter (key, NULL for none),
 * calling row for each row; a database failure sets rep. */
void st_admin_select_rows(struct st_ctx *ctx, struct pr_rep *rep,
    const char *sql, const char *key,
    void (*row)(struct pr_rep *, struct st_stmt *));
/* True when sql (one text parameter, key) returns a row; false also when
 * the query fails. */
bool st_admin_exists(struct st_ctx *ctx, const char *sql, const char *key);
/*
 * A list's cursor (after_id) that names no row of the list, as sql
 * (parameters: the cursor, then owner) finds it: true with rep's error
 * set (invalid_request, naming what the cursor should have been, or the
 * database's failure); false when the cursor is a row of the list.
 */
bool st_cursor_absent(struct st_ctx *ctx, struct pr_rep *rep, const char *sql,
    const char *cursor, const char *owner, const char *what);

/*
 * Task finalisation, shared by cancel, finish, the supervisor's recovery,
 * the lease sweep and Space close/error (ops_task.c).  Moves the task to
 * its terminal status, clears its lease, appends the matching event (of
 * the status's name) and returns the Space from running to idle.  status
 * must be terminal (a caller bug aborts).  error_* may be NULL.
 */
int st_task_finalize(struct st_ctx *ctx, const char *workspace_id,
    const char *space_id, const char *task_id, enum cm_task_status status,
    const char *result, const char *error_code, const char *error_message);
/*
 * The same, for a caller that has just read the task's row (row, as it is
 * before this change) and its Space's hold_pending, in this request: the
 * row the event carries is row with the change made, and neither is read
 * again.
 */
int st_task_finalize_row(struct st_ctx *ctx, const struct pr_task *row,
    bool hold_pending, enum cm_task_status status, const char *result,
    const char *error_code, const char *error_message);

/* Records cancel_requested on a task once (the event too).  Returns 1 when
 * it was newly set, 0 when it was already set, -1 on error. */
int st_task_request_cancel(struct st_ctx *ctx, const char *workspace_id,
    const char *space_id, const char *task_id);

#endif
