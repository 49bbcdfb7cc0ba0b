/*
 * ops_task.c: submit, read and cancel tasks; the one finalisation path.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "authz.h"
#include "bundles.h"
#include "events.h"
#include "ids.h"
#include "json.h"
#include "log.h"
#include "ops.h"
#include "reply.h"
#include "rows.h"

/*
 * Writes task_id's end.  The event carries known with the change made,
 * or, NULL, the row as it reads after the change.  Without hold_pending
 * no take-over waits for the task: none is looked for.
 */
static int
task_finalize(struct st_ctx *ctx, const char *workspace_id,
    const char *space_id, const char *task_id, enum cm_task_status status,
    const char *result, const char *error_code, const char *error_message,
    const struct pr_task *known, bool hold_pending)
{
	static const char upd[] =
	    "UPDATE browser_space_tasks SET status = $2, result = $3,"
	    " error_code = $4, error_message = $5, finished_at = $6,"
	    " updated_at = $6, lease_holder = NULL, lease_expires_at = NULL"
	    " WHERE id = $1 AND (status = 'queued' OR status = 'running')";
	const char *name = cm_task_status_name(status);
	struct pr_rep row;
	struct pr_task now;
	char *payload = NULL;
	int rc = -1;

	if (!cm_task_status_terminal(status))
		cm_fatalx("task finalize to %s", name);
	if (st_db_send(ctx->db, 1, upd, "sssssi", task_id, name, result,
	        error_code, error_message, ctx->now) != ST_DONE)
		return -1;
	if (st_db_changes(ctx->db) != 1)
		return -1; /* not active: a caller bug, the transaction aborts
		            */
	memset(&row, 0, sizeof(row));
	if (known != NULL) {
		now = *known;
		now.status = name;
		now.result = result;
		now.error_code = error_code;
		now.error_message = error_message;
		now.finished_at = now.updated_at = ctx->now;
	} else if (st_load_task(ctx, &row, task_id) == 1) {
		/* The row as it now is, for the event to carry. */
		now = row.tasks[0];
	} else {
		goto out;
	}
	if (strcmp(now.space_id, space_id) != 0 ||
	    strcmp(now.workspace_id, workspace_id) != 0)
		goto out;
	if (error_code != NULL &&
	    (payload = st_payload("{s:s, s:s}", "error_code", error_code,
	         "error_message", error_message ? error_message : "")) == NULL)
		goto out;
	/* A take-over waiting for this task begins now. */
	if ((rc = st_event_settle(ctx, &now, payload)) == 0 && hold_pending)
		rc = st_hold_begin_pending(ctx, workspace_id, space_id);
out:
	free(payload);
	pr_rep_free(&row);
	return rc;
}

int
st_task_finalize(struct st_ctx *ctx, const char *workspace_id,
    const char *space_id, const char *task_id, enum cm_task_status status,
    const char *result, const char *error_code, const char *error_message)
{
	return task_finalize(ctx, workspace_id, space_id, task_id, status,
	    result, error_code, error_message, NULL, true);
}

int
st_task_finalize_row(struct st_ctx *ctx, const struct pr_task *row,
    bool hold_pending, enum cm_task_status status, const char *result,
    const char *error_code, const char *error_message)
{
	return task_finalize(ctx, row->workspace_id, row->space_id,
	    row->task_id, status, result, error_code, error_message, row,
	    hold_pending);
}

int
st_task_request_cancel(struct st_ctx *ctx, const char *workspace_id,
    const char *space_id, const char *task_id)
{
	static const char upd[] =
	    "UPDATE browser_space_tasks SET "
	    "cancel_requested = 1, updated_at = $2"
	    " WHERE id = $1 AND cancel_requested = 0"
	    " AND (status = 'queued' OR status = 'running')";

	if (st_db_run(ctx->db, upd, "si", task_id, ctx->now) != ST_DONE)
		return -1;
	if (st_db_changes(ctx->db) == 0)
		return 0;
	return st_event_append(ctx, workspace_id, space_id, task_id,
	           cm_event_kind_name(CM_EV_CANCEL_REQUESTED), NULL) == 0
	           ? 1
	           : -1;
}

/*
 * Decides a submit that names its caller with the one authorization
 * module, on the Space row just read (NULL when there is none).  Returns
 * true when allowed; otherwise rep holds the refusal (403 or 404) alone.
 */
static bool
submit_allowed(
    const struct pr_req *req, const struct pr_space *sp, struct pr_rep *rep)
{
	struct pr_principal who = {
	    .principal_id = req->principal_id,
	    .kind = req->kind,
	    .is_admin = req->is_admin,
	};
	struct pr_membership m = {
	    .workspace_id = req->workspace_id,
	    .principal_id = req->principal_id,
	    .role = req->role,
	};
	struct cm_identity id = {&who, &m, req->role != NULL ? 1 : 0};
	const char *why = NULL;
	enum cm_err e = cm_authz_check(
	    &id, CM_ACT_SPACE_SUBMIT, req->workspace_id, sp, NULL, NULL, &why);

	if (e == CM_OK)
		return true;
	rep->n_spaces = 0;
	pr_rep_error(rep, e, "%s", why != NULL ? why : "");
	return false;
}

/* Answers a submit whose request_id exists.  1 answered, 0 new, -1 err. */
static int
submit_repeat(struct st_ctx *ctx, const struct pr_req *req, const char *args,
    struct pr_rep *rep)
{
	static const char sql[] =
	    "SELECT id, capability, args FROM browser_space_tasks"
	    " WHERE space_id = $1 AND request_id = $2";
	struct st_stmt *s;
	char id[CM_ID_MAX + 1];
	bool same;

	if (st_db_query(ctx->db, &s, sql, "ss", req->space_id,
	        req->request_id) != ST_OK) {
		st_db_failed(ctx, rep, "task submit");
		return -1;
	}
	if (st_stmt_step(s) != ST_ROW) {
		st_stmt_done(s);
		return 0;
	}
	snprintf(id, sizeof(id), "%s", st_col_text(s, 0));
	same = strcmp(st_col_text(s, 1), req->capability) == 0 &&
	       strcmp(st_col_text(s, 2), args) == 0;
	st_stmt_done(s);
	if (!same) {
		pr_rep_error(rep, CM_E_IDEMPOTENCY_REUSED,
		    "request_id was used with a different capability or args");
		return 1;
	}
	/* The original task: a request_id used again never runs the
	 * capability a second time. */
	st_load_task(ctx, rep, id);
	return 1;
}

/*
 * Parses and validates args, returning their canonical text (caller frees)
 * or NULL with rep->err set.  Also checks the capability against the
 * Space's grant and its bundle, through the one validator.
 */
static char *
submit_check(struct st_ctx *ctx, const struct pr_req *req,
    const char *bundle_id, struct pr_rep *rep)
{
	const struct pr_space *sp = &rep->spaces[0];
	const struct cm_bundle *b;
	const char *text = req->args ? req->args : "{}";
	json_t *args = NULL;
	char err[256];
	char *canon;
	enum cm_err e;

	if ((b = st_bundle_get(ctx, bundle_id)) == NULL) {
		pr_rep_error(
		    rep, CM_E_INTERNAL, "the instance's bundle is unusable");
		return NULL;
	}
	if (cm_json_parse(text, strlen(text), CM_ARGS_MAX, CM_JSON_DEPTH_MAX,
	        &args, err, sizeof(err)) != 0 ||
	    !json_is_object(args)) {
		json_decref(args);
		pr_rep_error(
		    rep, CM_E_INVALID_ARGS, "args must be a JSON object");
		return NULL;
	}
	e = cm_capability_check(b, sp->granted.v, sp->granted.n,
	    req->capability, args, err, sizeof(err));
	if (e != CM_OK) {
		json_decref(args);
		pr_rep_error(rep, e, "%s", err);
		return NULL;
	}
	canon = cm_json_canonical(args);
	json_decref(args);
	if (canon == NULL)
		pr_rep_error(rep, CM_E_INTERNAL, "out of memory");
	return canon;
}

/* The request's own fields, before any read: *timeout is the task's,
 * in ms.  False with rep set. */
static bool
submit_request_ok(const struct st_ctx *ctx, const struct pr_req *req,
    int64_t *timeout, struct pr_rep *rep)
{
	int64_t max_ms = (int64_t)ctx->opts->task_timeout_max_s * 1000;

	*timeout = req->timeout_ms
	               ? req->timeout_ms
	               : (int64_t)ctx->opts->task_timeout_default_s * 1000;
	if (req->request_id[0] == '\0' || req->capability[0] == '\0') {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "request_id and capability must not be empty");
		return false;
	}
	if (*timeout < CM_TIMEOUT_MIN_S * 1000 || *timeout > max_ms ||
	    *timeout % 1000 != 0) {
		pr_rep_error(rep, CM_E_INVALID_TIMEOUT,
		    "timeout must be 1..%d seconds",
		    ctx->opts->task_timeout_max_s);
		return false;
	}
	return true;
}

/* The Space's instance as a submit needs it. */
struct submit_on {
	char inst_status[16];
	char bundle_id[CM_ID_MAX + 1];
};

/* Reads the status and bundle of the Space sp's instance.  False with
 * rep set. */
static bool
submit_instance(struct st_ctx *ctx, const struct pr_space *sp,
    struct submit_on *on, struct pr_rep *rep)
{
	static const char inst_sql[] =
	    "SELECT status, bundle_id FROM browser_instances WHERE id = $1";
	struct st_stmt *s;

	if (st_db_query(ctx->db, &s, inst_sql, "s", sp->browser_instance_id) !=
	        ST_OK ||
	    st_stmt_step(s) != ST_ROW) {
		st_stmt_done(s);
		st_db_failed(ctx, rep, "task submit");
		return false;
	}
	snprintf(
	    on->inst_status, sizeof(on->inst_status), "%s", st_col_text(s, 0));
	snprintf(on->bundle_id, sizeof(on->bundle_id), "%s", st_col_text(s, 1));
	st_stmt_done(s);
	return true;
}

/*
 * A Space that is closed, closing or in error takes no new task, but a
 * request_id used before is answered with its task, whatever the Space's
 * state is now.  Returns true when it answered (rep set), false when the
 * Space is open.
 */
static bool
submit_on_unusable(struct st_ctx *ctx, const struct pr_req *req,
    const struct pr_space *sp, const char *args, struct pr_rep *rep)
{
	enum cm_space_status sp_status = cm_space_status_parse(sp->status);

	if (sp_status != CM_SPACE_CLOSED && !sp->close_requested &&
	    sp_status != CM_SPACE_ERROR)
		return false;
	if (submit_repeat(ctx, req, args, rep) != 0)
		return true;
	if (sp_status == CM_SPACE_ERROR)
		pr_rep_error(rep, CM_E_SPACE_UNUSABLE,
		    "the browser space is in error (%s)",
		    sp->last_error_code ? sp->last_error_code : "unknown");
	else
		pr_rep_error(rep, CM_E_SPACE_CLOSED, "the browser space is %s",
		    sp_status == CM_SPACE_CLOSED ? "closed" : "closing");
	return true;
}

/*
 * A Space an operator holds (or is taking over) takes no task: 409
 * space_held, but a request_id used before is answered with its task.  A
 * hold past its deadline ends here, before the sweep comes to it.
 * Returns true when it answered (rep set).
 */
static bool
submit_on_held(struct st_ctx *ctx, const struct pr_req *req,
    const struct pr_space *sp, const char *args, struct pr_rep *rep)
{
	if (sp->held_by == NULL)
		return false;
	if (!sp->hold_pending && sp->held_until <= ctx->now) {
		if (st_hold_end(ctx, req->workspace_id, req->space_id,
		        "expired", NULL) < 0) {
			st_db_failed(ctx, rep, "task submit");
			return true;
		}
		return false;
	}
	if (submit_repeat(ctx, req, args, rep) == 0)
		st_hold_refuse(rep, sp);
	return true;
}

/*
 * Inserts the task id (operation op), queued, and appends its queued
 * event.  On an open Space a new request_id is by far the common case, so
 * the INSERT is the check: its UNIQUE (space_id, request_id) fails on a
 * repeat, and only then is the earlier task read.  Returns true; false
 * with rep set (the earlier task, or why not).
 */
static bool
submit_insert(struct st_ctx *ctx, const struct pr_req *req, const char *id,
    const char *op, const char *args, int64_t timeout, struct pr_rep *rep)
{
	static const char ins[] =
	    "INSERT INTO browser_space_tasks (id, space_id, workspace_id,"
	    " request_id, operation_id, capability, args, timeout_ms, status,"
	    " created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8,"
	    " 'queued', $9, $9)";
	char *payload;
	int rc;

	rc = st_db_run(ctx->db, ins, "sssssssii", id, req->space_id,
	    req->workspace_id, req->request_id, op, req->capability, args,
	    timeout, ctx->now);
	if (rc == ST_CONSTRAINT) {
		/* A repeat, or else the partial unique index: one queued or
		 * running task. */
		if (submit_repeat(ctx, req, args, rep) != 0)
			return false;
		pr_rep_error(rep, CM_E_TASK_IN_PROGRESS,
		    "another task of this browser space is queued or running");
		return false;
	}
	payload = st_payload("{s:s, s:s}", "capability", req->capability,
	    "request_id", req->request_id);
	if (rc != ST_DONE ||
	    st_event_append(ctx, req->workspace_id, req->space_id, id,
	        cm_event_kind_name(CM_EV_QUEUED), payload) != 0) {
		free(payload);
		st_db_failed(ctx, rep, "task submit");
		return false;
	}
	free(payload);
	return true;
}

/*
 * A runtime that is not ready fails the task at once, and the task stays
 * on record: the reply carries it with runtime_not_ready (HTTP 503), and
 * the group keeps it despite the error.
 */
static void
submit_not_ready(struct st_ctx *ctx, const struct pr_req *req, const char *id,
    struct pr_rep *rep)
{
	if (st_task_finalize(ctx, req->workspace_id, req->space_id, id,
	        CM_TASK_FAILED, NULL, "runtime_not_ready",
	        "the browser instance is not ready") != 0) {
		st_db_failed(ctx, rep, "task submit");
		return;
	}
	if (st_load_task(ctx, rep, id) == 1) {
		rep->created = true;
		ctx->keep_on_error = true;
		pr_rep_error(rep, CM_E_RUNTIME_NOT_READY,
		    "the browser instance is not ready");
	}
}

/*
 * request_help ends at once, in the store: no runtime runs it.  The Space
 * is marked help_requested (a help_requested event with the reason) until
 * an operator takes it over; the task is completed, its result saying
 * so.
 */
static void
submit_help(struct st_ctx *ctx, const struct pr_req *req, const char *id,
    const char *args, struct pr_rep *rep)
{
	static const char upd[] =
	    "UPDATE browser_spaces SET help_requested = 1 WHERE id = $1";
	json_t *a = json_loads(args != NULL ? args : "{}", 0, NULL);
	const char *reason = json_string_value(json_object_get(a, "reason"));
	char *payload = st_payload("{s:s}", "reason", reason ? reason : "");

	json_decref(a);
	if (payload == NULL ||
	    st_db_run(ctx->db, upd, "s", req->space_id) != ST_DONE ||
	    st_event_touch(ctx, req->workspace_id, req->space_id, id,
	        cm_event_kind_name(CM_EV_HELP_REQUESTED), payload, NULL) != 0 ||
	    st_task_finalize(ctx, req->workspace_id, req->space_id, id,
	        CM_TASK_COMPLETED, "{\"help_requested\":true}", NULL,
	        NULL) != 0) {
		free(payload);
		st_db_failed(ctx, rep, "task submit");
		return;
	}
	free(payload);
	if (st_load_task(ctx, rep, id) == 1)
		rep->created = true;
}

/* Answers with the queued task just written, without reading it again. */
static void
submit_reply_queued(struct st_ctx *ctx, const struct pr_req *req,
    const char *id, const char *op, const char *args, int64_t timeout,
    struct pr_rep *rep)
{
	struct pr_task *t;

	if ((t = ST_PUSH(rep, tasks)) == NULL) {
		pr_rep_error(rep, CM_E_INTERNAL, "out of memory");
		return;
	}
	t->task_id = pr_rep_strdup(rep, id);
	t->space_id = req->space_id;
	t->workspace_id = req->workspace_id;
	t->request_id = req->request_id;
	t->operation_id = pr_rep_strdup(rep, op);
	t->capability = req->capability;
	st_task_arg_keys(rep, args, &t->arg_keys);
	t->timeout_ms = timeout;
	t->status = cm_task_status_name(CM_TASK_QUEUED);
	t->created_at = t->updated_at = ctx->now;
	rep->created = true;
}

void
st_op_task_submit(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	char id[CM_UUID_LEN], op[CM_UUID_LEN];
	const struct pr_space *sp;
	struct submit_on on;
	int64_t timeout;
	char *args;
	int rc;

	if (!submit_request_ok(ctx, req, &timeout, rep))
		return;
	rc = st_load_space(ctx, rep, req->workspace_id, req->space_id);
	if (rc < 0)
		return;
	if (req->principal_id != NULL &&
	    !submit_allowed(req, rc == 1 ? &rep->spaces[0] : NULL, rep))
		return;
	if (rc != 1)
		return;
	sp = &rep->spaces[0];
	if (!submit_instance(ctx, sp, &on, rep) ||
	    (args = submit_check(ctx, req, on.bundle_id, rep)) == NULL)
		return;
	rep->n_spaces = 0;
	if (submit_on_held(ctx, req, sp, args, rep) ||
	    submit_on_unusable(ctx, req, sp, args, rep))
		goto out;
	cm_uuid7(id);
	cm_uuid7(op);
	if (!submit_insert(ctx, req, id, op, args, timeout, rep))
		goto out;
	if (strcmp(req->capability, CM_CAP_REQUEST_HELP) == 0)
		submit_help(ctx, req, id, args, rep);
	else if (cm_instance_status_parse(on.inst_status) != CM_INSTANCE_READY)
		submit_not_ready(ctx, req, id, rep);
	else
		submit_reply_queued(ctx, req, id, op, args, timeout, rep);
out:
	free(args);
}

/* Loads a task and checks it belongs to the Space in the workspace. */
static int
load_space_task(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	if (st_load_space(ctx, rep, req->workspace_id, req->space_id) != 1)
		return 0;
	rep->n_spaces = 0;
	if (st_load_task(ctx, rep, req->task_id) != 1)
		return 0;
	if (strcmp(rep->tasks[0].space_id, req->space_id) != 0) {
		rep->n_tasks = 0;
		pr_rep_error(rep, CM_E_NOT_FOUND, "no such task");
		return 0;
	}
	return 1;
}

void
st_op_task_get(struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	load_space_task(ctx, req, rep);
}

void
st_op_task_list(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char sql[] =
	    "SELECT " ST_TASK_COLS
	    " FROM browser_space_tasks WHERE space_id = $1"
	    " AND (CAST($3 AS TEXT) IS NULL OR (created_at, id) <"
	    " (SELECT created_at, id FROM browser_space_tasks"
	    " WHERE id = $3 AND space_id = $1))"
	    " ORDER BY created_at DESC, id DESC LIMIT $2";
	static const char cursor[] = "SELECT 1 FROM browser_space_tasks"
	                             " WHERE id = $1 AND space_id = $2";
	struct st_stmt *s;
	struct pr_task *t;
	int64_t limit = req->limit ? req->limit : CM_LIST_LIMIT_DEFAULT;
	int rc;

	if (limit < 1 || limit > CM_LIST_LIMIT_MAX) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST, "limit must be 1..%d",
		    CM_LIST_LIMIT_MAX);
		return;
	}
	if (st_load_space(ctx, rep, req->workspace_id, req->space_id) != 1)
		return;
	rep->n_spaces = 0;
	if (st_db_query(ctx->db, &s, sql, "sis", req->space_id, limit,
	        req->after_id) != ST_OK) {
		st_db_failed(ctx, rep, "task list");
		return;
	}
	while ((rc = st_stmt_step(s)) == ST_ROW) {
		if ((t = ST_PUSH(rep, tasks)) == NULL)
			break;
		st_row_task(rep, s, t);
	}
	st_stmt_done(s);
	if (rc == ST_ERROR) {
		st_db_failed(ctx, rep, "task list");
		return;
	}
	if (rep->n_tasks == 0 && req->after_id != NULL)
		st_cursor_absent(ctx, rep, cursor, req->after_id, req->space_id,
		    "task of the Space");
}

/*
 * Cancel.  A queued task ends at once; a running one only
 * records the request, and its actor finishes it as cancelled after it has
 * aborted the call and cleaned up.  rep->created is true when this call
 * changed something.
 */
void
st_op_task_cancel(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char latest[] =
	    "SELECT " ST_TASK_COLS
	    " FROM browser_space_tasks WHERE space_id = $1"
	    " ORDER BY created_at DESC, id DESC LIMIT 1";
	struct st_stmt *s;
	const struct pr_task *t;
	char task_id[CM_ID_MAX + 1];
	int rc;

	if (req->task_id != NULL) {
		if (load_space_task(ctx, req, rep) != 1)
			return;
	} else {
		if (st_load_space(ctx, rep, req->workspace_id, req->space_id) !=
		    1)
			return;
		rep->n_spaces = 0;
		if (st_db_query(ctx->db, &s, latest, "s", req->space_id) !=
		    ST_OK) {
			st_db_failed(ctx, rep, "task cancel");
			return;
		}
		/* At most one task is active, and it is the newest. */
		if ((rc = st_stmt_step(s)) == ST_ROW) {
			struct pr_task *nt = ST_PUSH(rep, tasks);
			if (nt != NULL)
				st_row_task(rep, s, nt);
		}
		st_stmt_done(s);
		if (rep->n_tasks == 0) {
			pr_rep_error(
			    rep, CM_E_NO_TASK, "the browser space has no task");
			return;
		}
	}
	t = &rep->tasks[0];
	if (cm_task_status_terminal(cm_task_status_parse(t->status)))
		return; /* terminal: report it as it is */
	snprintf(task_id, sizeof(task_id), "%s", t->task_id);
	rc = st_task_request_cancel(
	    ctx, req->workspace_id, req->space_id, task_id);
	if (rc < 0)
		goto fail;
	rep->created = rc == 1;
	if (cm_task_status_is(t->status, CM_TASK_QUEUED)) {
		if (st_task_finalize(ctx, req->workspace_id, req->space_id,
		        task_id, CM_TASK_CANCELLED, NULL, NULL, NULL) != 0)
			goto fail;
		rep->created = true;
	}
	rep->n_tasks = 0;
	if (st_load_task(ctx, rep, task_id) == 1)
		return;
fail:
	st_db_failed(ctx, rep, "task cancel");
}
