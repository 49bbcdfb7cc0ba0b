/*
 * ops_space.c: a Space's reads, its close and its end, and the event log
 * reader (a Space's creation is ops_space_create.c).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "ids.h"
#include "ops.h"
#include "reply.h"
#include "rows.h"

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

void
st_op_space_get(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	/* Every event this read could see is numbered at most so. */
	rep->feed_serial = ctx->pub_serial + (int64_t)ctx->n_pubs;
	if (st_load_space(ctx, rep, req->workspace_id, req->space_id) == 1)
		st_load_active_task(ctx, rep, req->space_id, NULL);
}

bool
st_cursor_absent(struct st_ctx *ctx, struct pr_rep *rep, const char *sql,
    const char *cursor, const char *owner, const char *what)
{
	struct st_stmt *s;
	int rc;

	if (st_db_query(ctx->db, &s, sql, "ss", cursor, owner) != ST_OK) {
		st_db_failed(ctx, rep, "list cursor");
		return true;
	}
	rc = st_stmt_step(s);
	st_stmt_done(s);
	if (rc == ST_ROW)
		return false;
	if (rc == ST_ERROR)
		st_db_failed(ctx, rep, "list cursor");
	else
		pr_rep_error(
		    rep, CM_E_INVALID_REQUEST, "after names no %s", what);
	return true;
}

/*
 * A page of the workspace's Spaces, newest first; after_id, the last one
 * of the page before, makes it the page that follows.
 */
void
st_op_space_list(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char sql[] =
	    "SELECT " ST_SPACE_COLS " FROM browser_spaces"
	    " WHERE workspace_id = $1 AND (CAST($2 AS TEXT) IS NULL OR"
	    " (CASE WHEN held_by IS NOT NULL AND hold_pending = 0 AND"
	    " status <> 'closed' THEN 'held' ELSE status END) = $2)"
	    " AND (CAST($3 AS TEXT) IS NULL OR owner_id = $3)"
	    " AND (CAST($5 AS TEXT) IS NULL OR (created_at, id) <"
	    " (SELECT created_at, id FROM browser_spaces"
	    " WHERE id = $5 AND workspace_id = $1))"
	    " ORDER BY created_at DESC, id DESC LIMIT $4";
	static const char cursor[] = "SELECT 1 FROM browser_spaces"
	                             " WHERE id = $1 AND workspace_id = $2";
	struct st_stmt *s;
	struct pr_space *sp;
	int limit, rc;

	if ((limit = list_limit(req, rep, CM_LIST_LIMIT_DEFAULT)) < 0)
		return;
	if (req->status != NULL &&
	    cm_space_status_parse(req->status) == CM_SPACE_STATUS__COUNT) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "status must be idle, running, held, closed or error");
		return;
	}
	/* As space.get's: every event this read could see is numbered at
	 * most so. */
	rep->feed_serial = ctx->pub_serial + (int64_t)ctx->n_pubs;
	if (st_db_query(ctx->db, &s, sql, "sssis", req->workspace_id,
	        req->status, req->owner_id, (int64_t)limit,
	        req->after_id) != ST_OK) {
		st_db_failed(ctx, rep, "space list");
		return;
	}
	while ((rc = st_stmt_step(s)) == ST_ROW) {
		if ((sp = ST_PUSH(rep, spaces)) == NULL)
			break;
		st_row_space(rep, s, sp);
	}
	st_stmt_done(s);
	if (rc == ST_ERROR) {
		st_db_failed(ctx, rep, "space list");
		return;
	}
	/* An empty page past a cursor that names no Space of the
	 * workspace says so: it is not the end of the list. */
	if (rep->n_spaces == 0 && req->after_id != NULL)
		st_cursor_absent(ctx, rep, cursor, req->after_id,
		    req->workspace_id, "Space of the workspace");
}

/*
 * Close: stops new work at once (close_requested), sends an active task
 * down the cancel path, and leaves the teardown to the Space's actor,
 * which reports it with space.mark_closed.  Until then the instance stays
 * reserved: no other Space opens on a browser that may still be running.
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
	/* A closed Space is nobody's to hold. */
	if (st_db_run(ctx->db, upd, "s", req->space_id) != ST_DONE ||
	    st_hold_end(ctx, req->workspace_id, req->space_id, "space_closed",
	        NULL) < 0 ||
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

/* The members a page event's payload may hold, of their kinds. */
static const char *const dialog_types[] = {
    "alert", "confirm", "prompt", "beforeunload", NULL};
static const char *const download_states[] = {
    "in_progress", "completed", "canceled", NULL};

/* Whether s is one of set's strings (NULL-terminated). */
static bool
one_of(const char *s, const char *const *set)
{
	for (; s != NULL && *set != NULL; set++)
		if (strcmp(s, *set) == 0)
			return true;
	return false;
}

/* o's member key when it is a string of at most max bytes, else NULL. */
static const char *
str_member(const json_t *o, const char *key, size_t max)
{
	const json_t *v = json_object_get(o, key);

	return json_is_string(v) && json_string_length(v) <= max
	           ? json_string_value(v)
	           : NULL;
}

/* The members a download's end may add, each of its shape (the artifact
 * the task stored it as, and its sha256; or too_large, true), counted;
 * one of another shape counts for none, so the payload is refused. */
static size_t
download_extra(const json_t *o)
{
	const char *art = str_member(o, "artifact", CM_ID_MAX);
	const char *sha = str_member(o, "sha256", 64);
	size_t n = 0;

	if (art != NULL && sha != NULL &&
	    cm_artifact_name_valid(art, strlen(art)) && strlen(sha) == 64)
		n += 2;
	if (json_is_true(json_object_get(o, "too_large")))
		n++;
	return n;
}

/*
 * An operator's input as the api records it: who (by), what (kind), where
 * (x and y, for a pointer's), and the element under the point (role and
 * name, may be empty): exactly those members, each of its type and bound.
 * No member may carry the text an operator typed: there is none to take.
 */
static bool
operator_input_ok(const json_t *o)
{
	static const char *const kinds[] = {
	    "click", "move", "down", "up", "wheel", "key", "text", NULL};
	const json_t *x = json_object_get(o, "x"), *y = json_object_get(o, "y");
	size_t n = 4;

	if (x != NULL || y != NULL) {
		if (!json_is_integer(x) || !json_is_integer(y))
			return false;
		n += 2;
	}
	return one_of(json_string_value(json_object_get(o, "kind")), kinds) &&
	       str_member(o, "by", CM_ID_MAX) &&
	       str_member(o, "role", CM_NAME_MAX) &&
	       str_member(o, "name", CM_NAME_MAX) && json_object_size(o) == n;
}

/* Whether o is the payload of a page event of kind k: exactly the
 * members its kind shows (docs/api.md), each of its type and bound. */
static bool
page_payload_ok(enum cm_event_kind k, const json_t *o)
{
	const char *type, *name;
	const json_t *v;

	switch (k) {
	case CM_EV_DIALOG:
		type = json_string_value(json_object_get(o, "type"));
		v = json_object_get(o, "default_prompt");
		return one_of(type, dialog_types) &&
		       str_member(o, "message", CM_DIALOG_MESSAGE_MAX) &&
		       json_is_boolean(json_object_get(o, "accepted")) &&
		       (v == NULL || (strcmp(type, "prompt") == 0 &&
		                         str_member(o, "default_prompt",
		                             CM_DIALOG_MESSAGE_MAX))) &&
		       json_object_size(o) == (v != NULL ? 4u : 3u);
	case CM_EV_TAB_OPENED:
		return str_member(o, "url", CM_URL_MAX) &&
		       json_is_boolean(json_object_get(o, "closed")) &&
		       json_object_size(o) == 2;
	case CM_EV_DOWNLOAD:
		name = str_member(o, "name", CM_DOWNLOAD_NAME_MAX);
		v = json_object_get(o, "bytes");
		return name != NULL && strpbrk(name, "/\\") == NULL &&
		       one_of(json_string_value(json_object_get(o, "state")),
		           download_states) &&
		       json_is_integer(v) && json_integer_value(v) >= 0 &&
		       json_object_size(o) == 3 + download_extra(o);
	case CM_EV_OPERATOR_INPUT:
		return operator_input_ok(o);
	default:
		return false;
	}
}

/*
 * What the Space's page did (the actor's record: a dialog, a tab, a
 * download), or what an operator did to it (the api's record of an
 * input through the live view, never its text).  The kind is one of the page's
 * and the payload its shape, or the request is refused; it is stored as the
 * store writes it again. It goes with the task it names while that task runs
 * (between its started and its end, which the Space row's lock keeps in order
 * on a shared database), and with none otherwise.  A closed Space takes no
 * event: nothing to record.
 */
void
st_op_space_page_event(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	enum cm_event_kind k = cm_event_kind_parse(req->kind);
	const char *task_id = NULL;
	json_t *o;
	char *payload = NULL;
	int rc;

	if (!cm_event_kind_of_page(k) && k != CM_EV_OPERATOR_INPUT) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "kind must be dialog, tab_opened, download or "
		    "operator_input");
		return;
	}
	o = json_loads(req->payload, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(o) || !page_payload_ok(k, o)) {
		json_decref(o);
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "the payload is not a %s event's", req->kind);
		return;
	}
	payload = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (payload == NULL) {
		pr_rep_error(rep, CM_E_INTERNAL, "out of memory");
		return;
	}
	if (st_load_space_locked(ctx, rep, req->space_id) != 1 ||
	    cm_space_status_is(rep->spaces[0].status, CM_SPACE_CLOSED) ||
	    (req->task_id != NULL &&
	        st_load_active_task(ctx, rep, req->space_id, NULL) < 0)) {
		free(payload);
		return;
	}
	if (req->task_id != NULL && rep->n_tasks == 1 &&
	    cm_task_status_is(rep->tasks[0].status, CM_TASK_RUNNING) &&
	    strcmp(rep->tasks[0].task_id, req->task_id) == 0)
		task_id = req->task_id;
	rep->n_tasks = 0;
	rc = st_event_append(ctx, rep->spaces[0].workspace_id, req->space_id,
	    task_id, cm_event_kind_name(k), payload);
	free(payload);
	if (rc != 0)
		st_db_failed(ctx, rep, "space page_event");
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
