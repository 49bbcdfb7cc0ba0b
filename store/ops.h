/*
 * ops.h: the store's operations, one handler per proto op, and the helpers
 * they share.  Internal to the store.
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
	const char *kind;
};

struct st_ctx {
	struct st_db *db;
	const struct st_store_opts *opts;
	int64_t now;                /* ms, fixed for one request */
	bool keep_on_error;         /* set by a handler; reset per request */
	struct st_bundles *bundles; /* owned by the st_store */
	/* Events appended so far in this group, in commit order. */
	struct st_pub *pubs;
	size_t n_pubs, cap_pubs;
	/*
	 * The last event sequence of one Space as this request has read or
	 * written it, so appending its next event needs no read.  Empty at
	 * the start of every request; only event_add changes a sequence.
	 */
	char seq_space[CM_ID_MAX + 1];
	int64_t seq_last;
	/* seq_last was read under the Space row's lock (st_db_shared). */
	bool seq_locked;
};

/* Notes space_id's last event sequence, as read in this request. */
void st_seq_note(struct st_ctx *ctx, const char *space_id, int64_t last);

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
    st_op_space_network_blocked, st_op_event_list; /* ops_space */
st_op_fn st_op_task_submit, st_op_task_get, st_op_task_list,
    st_op_task_cancel; /* ops_task */
st_op_fn st_op_actor_load, st_op_actor_claim, st_op_actor_heartbeat,
    st_op_actor_finish, st_op_sup_finalize_lost, st_op_sup_sweep_leases,
    st_op_sup_list_active, st_op_sup_list_cdp; /* ops_actor */
st_op_fn st_op_artifact_get;                   /* ops_artifact */

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
 * Shared helpers (ops.c).
 */

/* Sets rep to CM_E_INTERNAL for a database failure and logs it. */
void st_db_failed(struct st_ctx *ctx, struct pr_rep *rep, const char *what);

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

/* Column lists and row readers: SELECT ST_SPACE_COLS FROM browser_spaces. */
#define ST_SPACE_COLS                                                         \
	"id, workspace_id, browser_instance_id, binding_id, owner_type, "     \
	"owner_id, status, granted_capabilities, revision, last_error_code, " \
	"close_requested, created_at, updated_at, closed_at"
#define ST_SPACE_NCOLS 14
/* The same columns of a table named p (say "t."), for joins. */
#define ST_TASK_COLS_OF(p)                                                  \
	p "id, " p "space_id, " p "workspace_id, " p "request_id, " p       \
	  "operation_id, " p "capability, " p "args, " p "timeout_ms, " p   \
	  "status, " p "cancel_requested, " p "result, " p "error_code, " p \
	  "error_message, " p "created_at, " p "started_at, " p             \
	  "finished_at, " p "updated_at"
#define ST_TASK_COLS ST_TASK_COLS_OF("")
/* Columns past ST_TASK_COLS: the row's args (the text, never a reply's). */
#define ST_TASK_COL_ARGS 6
#define ST_TASK_NCOLS 17
void st_row_space(struct pr_rep *rep, struct st_stmt *s, struct pr_space *out);
void st_row_task(struct pr_rep *rep, struct st_stmt *s, struct pr_task *out);
/* The names of an args object (never its values, SPEC 3 rule 12). */
void st_task_arg_keys(
    struct pr_rep *rep, const char *args, struct pr_strlist *out);

/*
 * Loads one Space (or task) into a new one-element rep->spaces (tasks).
 * The reader variants take a workspace_id that must match (a foreign
 * Space is not found).  Return 1 found, 0 not found (rep->err set), -1
 * error (rep->err set).
 */
int st_load_space(struct st_ctx *ctx, struct pr_rep *rep,
    const char *workspace_id, const char *space_id);
/*
 * The same, the row locked until the commit on a shared database
 * (PostgreSQL): the read waits for a COMMIT of another connection that
 * holds it, so what follows reads what that COMMIT wrote (a task queued
 * by the group just before, on the other writer).
 */
int st_load_space_locked(
    struct st_ctx *ctx, struct pr_rep *rep, const char *space_id);
int st_load_task(struct st_ctx *ctx, struct pr_rep *rep, const char *task_id);
/* The active (queued or running) task of a Space, appended to rep->tasks
 * when there is one, and its args text in *args unless args is NULL.
 * Returns 1, 0 or -1. */
int st_load_active_task(struct st_ctx *ctx, struct pr_rep *rep,
    const char *space_id, const char **args);

/* Grows a reply list by one zeroed element; NULL on allocation failure. */
void *st_rep_push(struct pr_rep *rep, void **list, size_t *n, size_t size);
#define ST_PUSH(rep, list)                                                  \
	((__typeof__((rep)->list))st_rep_push((rep), (void **)&(rep)->list, \
	    &(rep)->n_##list, sizeof(*(rep)->list)))

/* Parses a JSON array of strings (granted) into an arena strlist. */
int st_strlist_from_json(
    struct pr_rep *rep, const char *json, struct pr_strlist *out);

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

/* Records cancel_requested on a task once (the event too).  Returns 1 when
 * it was newly set, 0 when it was already set, -1 on error. */
int st_task_request_cancel(struct st_ctx *ctx, const char *workspace_id,
    const char *space_id, const char *task_id);

/* Parsed runtime bundles, cached by id (bundles are immutable). */
struct st_bundles;
const struct cm_bundle *st_bundle_get(
    struct st_ctx *ctx, const char *bundle_id);
struct st_bundles *st_bundles_new(void);
void st_bundles_free(struct st_bundles *b);

/* json_pack(fmt, ...) serialized compactly; the caller frees.  NULL when
 * the format fails or memory runs out. */
char *st_payload(const char *fmt, ...);

#endif
