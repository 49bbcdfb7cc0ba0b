/*
 * ops_space.c: Space lifecycle and the event log reader.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "ids.h"
#include "json.h"
#include "ops.h"

static int
list_limit(const struct pr_req *req, struct pr_rep *rep, int64_t dflt)
{
	if (req->limit == 0)
		return (int)dflt;
	if (req->limit < 1 || req->limit > CM_LIST_LIMIT_MAX) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST, "limit must be 1..%d",
		    CM_LIST_LIMIT_MAX);
		return -1;
	}
	return (int)req->limit;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * The granted list, sorted and unique, as JSON text; NULL (with rep->err
 * set) when a name is empty or not in the bundle.  With no list given the
 * Space is granted everything its bundle offers.
 */
static char *
granted_json(struct st_ctx *ctx, const struct pr_req *req,
    const struct cm_bundle *b, struct pr_rep *rep)
{
	const char *names[CM_BUNDLE_CAPS_MAX > CM_GRANTED_MAX
	                      ? CM_BUNDLE_CAPS_MAX
	                      : CM_GRANTED_MAX];
	size_t n = 0;
	json_t *arr;
	char *out;

	(void)ctx;
	if (req->granted.n == 0) {
		for (size_t i = 0; i < b->n_caps && i < CM_GRANTED_MAX; i++)
			names[n++] = b->caps[i].name;
	} else {
		for (size_t i = 0; i < req->granted.n; i++) {
			if (cm_bundle_find(b, req->granted.v[i]) == NULL) {
				pr_rep_error(rep, CM_E_CAPABILITY_UNKNOWN,
				    "the runtime bundle has no capability %s",
				    req->granted.v[i]);
				return NULL;
			}
			names[n++] = req->granted.v[i];
		}
	}
	qsort(names, n, sizeof(names[0]), cmp_str);
	arr = json_array();
	for (size_t i = 0; i < n; i++)
		if (i == 0 || strcmp(names[i], names[i - 1]) != 0)
			json_array_append_new(arr, json_string(names[i]));
	out = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	if (out == NULL)
		pr_rep_error(rep, CM_E_INTERNAL, "out of memory");
	return out;
}

/* The content a create's request_id stands for. */
static char *
create_digest(
    const struct pr_req *req, const char *binding_id, const char *granted)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s}", "instance",
	    req->browser_instance_id, "binding", binding_id, "owner_type",
	    req->owner_type, "owner_id", req->owner_id, "granted", granted);
	char *out = cm_json_canonical(o);

	json_decref(o);
	return out;
}

/* Answers a create whose request_id was seen before.  Returns 1 if the
 * reply is complete (repeat or reuse), 0 to go on creating, -1 on error. */
static int
create_repeat(struct st_ctx *ctx, const struct pr_req *req, const char *digest,
    struct pr_rep *rep)
{
	static const char sql[] =
	    "SELECT id, request_digest FROM browser_spaces"
	    " WHERE workspace_id = $1 AND request_id = $2";
	struct st_stmt *s;
	char id[CM_ID_MAX + 1];
	bool same;

	if (req->request_id == NULL)
		return 0;
	if (st_db_query(ctx->db, &s, sql, "ss", req->workspace_id,
	        req->request_id) != ST_OK) {
		st_db_failed(ctx, rep, "space create");
		return -1;
	}
	if (st_stmt_step(s) != ST_ROW) {
		st_stmt_done(s);
		return 0;
	}
	snprintf(id, sizeof(id), "%s", st_col_text(s, 0));
	same = strcmp(st_col_text(s, 1), digest) == 0;
	st_stmt_done(s);
	if (!same) {
		pr_rep_error(rep, CM_E_IDEMPOTENCY_REUSED,
		    "request_id was used for a different create");
		return 1;
	}
	st_load_space(ctx, rep, req->workspace_id, id);
	return 1;
}

void
st_op_space_create(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char binding_sql[] =
	    "SELECT b.id, i.bundle_id, i.host FROM browser_bindings b"
	    " JOIN browser_instances i ON i.id = b.browser_instance_id"
	    " WHERE b.workspace_id = $1 AND b.browser_instance_id = $2";
	static const char owner_sql[] =
	    "SELECT p.kind, p.disabled FROM principals p JOIN memberships m"
	    " ON m.principal_id = p.id WHERE p.id = $1 AND m.workspace_id = $2";
	static const char lock_ws_sql[] =
	    "SELECT 1 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE";
	static const char active_sql[] =
	    "SELECT count(*) FROM browser_spaces"
	    " WHERE workspace_id = $1 AND status <> 'closed'";
	static const char in_use_sql[] =
	    "SELECT 1 FROM browser_spaces"
	    " WHERE browser_instance_id = $1 AND status <> 'closed'";
	static const char ins[] =
	    "INSERT INTO browser_spaces (id, workspace_id, browser_instance_id,"
	    " binding_id, owner_type, owner_id, status, granted_capabilities,"
	    " request_id, request_digest, created_at, updated_at)"
	    " VALUES ($1, $2, $3, $4, $5, $6, 'idle', $7, $8, $9, $10, $10)";
	const struct cm_bundle *bundle;
	char binding_id[CM_ID_MAX + 1], bundle_id[CM_ID_MAX + 1];
	char host[CM_HOST_MAX + 1] = "";
	char id[CM_UUID_LEN];
	char *granted = NULL, *digest = NULL, *payload = NULL;
	struct st_stmt *s;
	bool owner_ok;
	int64_t active;
	int rc;

	if (strcmp(req->owner_type, "operator") != 0 &&
	    strcmp(req->owner_type, "runtime_agent") != 0) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "owner_type must be operator or runtime_agent");
		return;
	}
	for (size_t i = 0; i < req->granted.n; i++) {
		if (req->granted.v[i][0] == '\0') {
			pr_rep_error(rep, CM_E_INVALID_REQUEST,
			    "granted_capabilities holds an empty name");
			return;
		}
	}

	/* The instance must be bound to this workspace: otherwise foreign. */
	if (st_db_query(ctx->db, &s, binding_sql, "ss", req->workspace_id,
	        req->browser_instance_id) != ST_OK) {
		st_db_failed(ctx, rep, "space create");
		return;
	}
	rc = st_stmt_step(s);
	if (rc == ST_ROW) {
		snprintf(
		    binding_id, sizeof(binding_id), "%s", st_col_text(s, 0));
		snprintf(bundle_id, sizeof(bundle_id), "%s", st_col_text(s, 1));
		snprintf(host, sizeof(host), "%s", st_col_text(s, 2));
	}
	st_stmt_done(s);
	if (rc != ST_ROW || (req->binding_id != NULL &&
	                        strcmp(req->binding_id, binding_id) != 0)) {
		pr_rep_error(
		    rep, CM_E_NOT_FOUND, "no such browser instance or binding");
		return;
	}

	/* The owner is a principal of that kind, a member of the workspace. */
	if (st_db_query(ctx->db, &s, owner_sql, "ss", req->owner_id,
	        req->workspace_id) != ST_OK) {
		st_db_failed(ctx, rep, "space create");
		return;
	}
	owner_ok = st_stmt_step(s) == ST_ROW &&
	           strcmp(st_col_text(s, 0), req->owner_type) == 0 &&
	           st_col_int(s, 1) == 0;
	st_stmt_done(s);
	if (!owner_ok) {
		pr_rep_error(rep, CM_E_FORBIDDEN,
		    "owner_id is not a %s of this workspace", req->owner_type);
		return;
	}

	if ((bundle = st_bundle_get(ctx, bundle_id)) == NULL) {
		pr_rep_error(
		    rep, CM_E_INTERNAL, "the instance's bundle is unusable");
		return;
	}
	if ((granted = granted_json(ctx, req, bundle, rep)) == NULL)
		return;
	if ((digest = create_digest(req, binding_id, granted)) == NULL) {
		pr_rep_error(rep, CM_E_INTERNAL, "out of memory");
		goto out;
	}
	if (create_repeat(ctx, req, digest, rep) != 0)
		goto out;

	/*
	 * On a shared database another writer may be creating a Space in
	 * this workspace at this moment (another host's store, or this
	 * store's other connection while a COMMIT runs, db_pg.c): creates
	 * take the workspace row in turn, so the count of active Spaces
	 * below sees every Space committed before it.  FOR NO KEY UPDATE:
	 * the foreign-key checks of other inserts (tasks, events) do not
	 * wait for it.
	 */
	if (st_db_shared(ctx->db) && st_db_run(ctx->db, lock_ws_sql, "s",
	                                 req->workspace_id) != ST_DONE) {
		st_db_failed(ctx, rep, "space create");
		goto out;
	}
	if (st_db_query(ctx->db, &s, in_use_sql, "s",
	        req->browser_instance_id) != ST_OK) {
		st_db_failed(ctx, rep, "space create");
		goto out;
	}
	rc = st_stmt_step(s);
	st_stmt_done(s);
	if (rc == ST_ROW) {
		pr_rep_error(rep, CM_E_INSTANCE_IN_USE,
		    "the browser instance is reserved by another space");
		goto out;
	}
	if (st_db_query(ctx->db, &s, active_sql, "s", req->workspace_id) !=
	        ST_OK ||
	    st_stmt_step(s) != ST_ROW) {
		st_stmt_done(s);
		st_db_failed(ctx, rep, "space create");
		goto out;
	}
	active = st_col_int(s, 0);
	st_stmt_done(s);
	if (active >= ctx->opts->max_spaces_per_workspace) {
		pr_rep_error(rep, CM_E_QUOTA_EXCEEDED,
		    "the workspace has %lld active spaces", (long long)active);
		goto out;
	}

	cm_uuid7(id);
	rc = st_db_run(ctx->db, ins, "sssssssssi", id, req->workspace_id,
	    req->browser_instance_id, binding_id, req->owner_type,
	    req->owner_id, granted, req->request_id,
	    req->request_id ? digest : NULL, ctx->now);
	if (rc == ST_CONSTRAINT) {
		/* The partial unique index: the backstop of the check above. */
		pr_rep_error(rep, CM_E_INSTANCE_IN_USE,
		    "the browser instance is reserved by another space");
		goto out;
	}
	if (rc != ST_DONE) {
		st_db_failed(ctx, rep, "space create");
		goto out;
	}
	payload = st_payload("{s:s, s:s, s:s}", "browser_instance_id",
	    req->browser_instance_id, "owner_type", req->owner_type, "owner_id",
	    req->owner_id);
	/* The host goes with the notice: only its supervisor starts the
	 * Space's actor, whichever host's api created it. */
	if (st_event_opened(ctx, req->workspace_id, id, payload, host) != 0) {
		st_db_failed(ctx, rep, "space create");
		goto out;
	}
	if (st_load_space(ctx, rep, req->workspace_id, id) == 1)
		rep->created = true;
out:
	free(payload);
	free(digest);
	free(granted);
}

void
st_op_space_get(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	if (st_load_space(ctx, rep, req->workspace_id, req->space_id) == 1)
		st_load_active_task(ctx, rep, req->space_id, NULL);
}

void
st_op_space_list(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char sql[] =
	    "SELECT " ST_SPACE_COLS " FROM browser_spaces"
	    " WHERE workspace_id = $1 AND (CAST($2 AS TEXT) IS NULL OR status "
	    "= $2)"
	    " AND (CAST($3 AS TEXT) IS NULL OR owner_id = $3)"
	    " ORDER BY created_at DESC, id DESC LIMIT $4";
	struct st_stmt *s;
	struct pr_space *sp;
	int limit, rc;

	if ((limit = list_limit(req, rep, CM_LIST_LIMIT_DEFAULT)) < 0)
		return;
	if (req->status != NULL &&
	    cm_space_status_parse(req->status) == CM_SPACE_STATUS__COUNT) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "status must be idle, running, closed or error");
		return;
	}
	if (st_db_query(ctx->db, &s, sql, "sssi", req->workspace_id,
	        req->status, req->owner_id, (int64_t)limit) != ST_OK) {
		st_db_failed(ctx, rep, "space list");
		return;
	}
	while ((rc = st_stmt_step(s)) == ST_ROW) {
		if ((sp = ST_PUSH(rep, spaces)) == NULL)
			break;
		st_row_space(rep, s, sp);
	}
	st_stmt_done(s);
	if (rc == ST_ERROR)
		st_db_failed(ctx, rep, "space list");
}

/*
 * Close: stops new work at once (close_requested), sends an active task
 * down the cancel path, and leaves the teardown to the Space's actor,
 * which reports it with space.mark_closed.  Until then the instance stays
 * reserved (SPEC 3 rule 9).
 */
void
st_op_space_close(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char upd[] =
	    "UPDATE browser_spaces SET close_requested = 1"
	    " WHERE id = $1";
	const struct pr_space *sp;
	const struct pr_task *t;

	if (st_load_space(ctx, rep, req->workspace_id, req->space_id) != 1)
		return;
	sp = &rep->spaces[0];
	if (cm_space_status_is(sp->status, CM_SPACE_CLOSED) ||
	    sp->close_requested) {
		st_load_active_task(ctx, rep, req->space_id, NULL);
		return;
	}
	if (st_db_run(ctx->db, upd, "s", req->space_id) != ST_DONE ||
	    st_space_touch(ctx, req->space_id, NULL) != 0 ||
	    st_notice(ctx, req->workspace_id, req->space_id,
	        cm_event_kind_name(CM_EV_CLOSE_REQUESTED)) != 0 ||
	    st_load_active_task(ctx, rep, req->space_id, NULL) < 0)
		goto fail;
	if (rep->n_tasks == 1) {
		t = &rep->tasks[0];
		if (st_task_request_cancel(
		        ctx, req->workspace_id, req->space_id, t->task_id) < 0)
			goto fail;
		/* A queued task never reached a runtime: it ends here. */
		if (cm_task_status_is(t->status, CM_TASK_QUEUED) &&
		    st_task_finalize(ctx, req->workspace_id, req->space_id,
		        t->task_id, CM_TASK_CANCELLED, NULL, NULL, NULL) != 0)
			goto fail;
	}
	rep->n_spaces = 0;
	rep->n_tasks = 0;
	if (st_load_space(ctx, rep, req->workspace_id, req->space_id) == 1)
		st_load_active_task(ctx, rep, req->space_id, NULL);
	return;
fail:
	st_db_failed(ctx, rep, "space close");
}

/* Ends whatever task is still active, as part of a Space's end. */
static int
end_active_task(struct st_ctx *ctx, struct pr_rep *rep, const char *ws,
    const char *space_id, enum cm_task_status status, const char *code)
{
	const struct pr_task *t;
	size_t before = rep->n_tasks;

	if (st_load_active_task(ctx, rep, space_id, NULL) < 0)
		return -1;
	if (rep->n_tasks == before)
		return 0;
	t = &rep->tasks[before];
	rep->n_tasks = before;
	return st_task_finalize(ctx, ws, space_id, t->task_id, status, NULL,
	    code, code ? "the browser space ended" : NULL);
}

void
st_op_space_mark_closed(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char upd[] =
	    "UPDATE browser_spaces SET status = 'closed', close_requested = 1,"
	    " closed_at = $2 WHERE id = $1";
	const char *ws;

	if (st_load_space(ctx, rep, NULL, req->space_id) != 1)
		return;
	if (cm_space_status_is(rep->spaces[0].status, CM_SPACE_CLOSED))
		return;
	ws = rep->spaces[0].workspace_id;
	/* The actor tore the browser down: a task still open was cancelled by
	 * that teardown. */
	if (end_active_task(
	        ctx, rep, ws, req->space_id, CM_TASK_CANCELLED, NULL) != 0 ||
	    st_db_run(ctx->db, upd, "si", req->space_id, ctx->now) != ST_DONE ||
	    st_event_touch(ctx, ws, req->space_id, NULL,
	        cm_event_kind_name(CM_EV_SPACE_CLOSED), NULL, NULL) != 0) {
		st_db_failed(ctx, rep, "space mark_closed");
		return;
	}
	rep->n_spaces = 0;
	st_load_space(ctx, rep, NULL, req->space_id);
}

void
st_op_space_mark_error(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char upd[] =
	    "UPDATE browser_spaces SET last_error_code = $2 WHERE id = $1";
	/* A runtime that cannot start takes its instance out of service:
	 * only the operator, or a probe, puts it back. */
	static const char inst[] =
	    "UPDATE browser_instances SET status = $2, updated_at = $3"
	    " WHERE id = (SELECT browser_instance_id FROM browser_spaces"
	    " WHERE id = $1) AND status = $4";
	char *payload;
	const char *ws;
	int rc;

	if (req->instance_status != NULL &&
	    cm_instance_status_parse(req->instance_status) !=
	        CM_INSTANCE_UNAVAILABLE) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "instance_status may only be unavailable");
		return;
	}
	if (st_load_space(ctx, rep, NULL, req->space_id) != 1)
		return;
	if (cm_space_status_is(rep->spaces[0].status, CM_SPACE_CLOSED)) {
		pr_rep_error(
		    rep, CM_E_SPACE_CLOSED, "the browser space is closed");
		return;
	}
	if (cm_space_status_is(rep->spaces[0].status, CM_SPACE_ERROR))
		return;
	ws = rep->spaces[0].workspace_id;
	payload = st_payload("{s:s}", "error_code", req->error_code);
	rc = end_active_task(ctx, rep, ws, req->space_id, CM_TASK_FAILED,
	         req->error_code) != 0 ||
	     st_db_run(ctx->db, upd, "ss", req->space_id, req->error_code) !=
	         ST_DONE ||
	     (req->instance_status != NULL &&
	         st_db_run(ctx->db, inst, "ssis", req->space_id,
	             req->instance_status, ctx->now,
	             cm_instance_status_name(CM_INSTANCE_READY)) != ST_DONE) ||
	     st_event_touch(ctx, ws, req->space_id, NULL,
	         cm_event_kind_name(CM_EV_SPACE_ERROR), payload,
	         cm_space_status_name(CM_SPACE_ERROR)) != 0;
	free(payload);
	if (rc) {
		st_db_failed(ctx, rep, "space mark_error");
		return;
	}
	rep->n_spaces = 0;
	st_load_space(ctx, rep, NULL, req->space_id);
}

/* A refusal of the Space's egress proxy (the actor's): host and reason,
 * never a URL.  A closed Space takes no event: nothing to record. */
void
st_op_space_network_blocked(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	char *payload;
	int rc;

	if (st_load_space(ctx, rep, NULL, req->space_id) != 1 ||
	    cm_space_status_is(rep->spaces[0].status, CM_SPACE_CLOSED))
		return;
	payload = st_payload(
	    "{s:s, s:s}", "host", req->host, "reason", req->error_code);
	rc = st_event_append(ctx, rep->spaces[0].workspace_id, req->space_id,
	    NULL, cm_event_kind_name(CM_EV_NETWORK_BLOCKED), payload);
	free(payload);
	if (rc != 0)
		st_db_failed(ctx, rep, "space network_blocked");
}

void
st_op_event_list(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char sql[] =
	    "SELECT task_id, sequence, kind, payload, created_at"
	    " FROM browser_space_events WHERE space_id = $1 AND sequence > $2"
	    " ORDER BY sequence LIMIT $3";
	struct st_stmt *s;
	struct pr_event *ev;
	int limit, rc;

	if ((limit = list_limit(req, rep, CM_EVENTS_LIMIT_DEFAULT)) < 0)
		return;
	if (req->after_sequence < 0) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "after_sequence must be 0 or more");
		return;
	}
	if (st_load_space(ctx, rep, req->workspace_id, req->space_id) != 1)
		return;
	rep->n_spaces = 0;
	if (st_db_query(ctx->db, &s, sql, "sii", req->space_id,
	        req->after_sequence, (int64_t)limit) != ST_OK) {
		st_db_failed(ctx, rep, "event list");
		return;
	}
	while ((rc = st_stmt_step(s)) == ST_ROW) {
		if ((ev = ST_PUSH(rep, events)) == NULL)
			break;
		ev->workspace_id = pr_rep_strdup(rep, req->workspace_id);
		ev->space_id = pr_rep_strdup(rep, req->space_id);
		ev->task_id = pr_rep_strdup(rep, st_col_text(s, 0));
		ev->sequence = st_col_int(s, 1);
		ev->kind = pr_rep_strdup(rep, st_col_text(s, 2));
		ev->payload = pr_rep_strdup(rep, st_col_text(s, 3));
		ev->created_at = st_col_int(s, 4);
	}
	st_stmt_done(s);
	if (rc == ST_ERROR)
		st_db_failed(ctx, rep, "event list");
}
