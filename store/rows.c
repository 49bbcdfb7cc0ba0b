/*
 * rows.c: Space and task rows read into replies (rows.h).
 */
#include "rows.h"

#include <jansson.h>
#include <string.h>

#include "events.h"
#include "ops.h"
#include "reply.h"

static const char *
col_dup(struct pr_rep *rep, struct st_stmt *s, int col)
{
	return pr_rep_strdup(rep, st_col_text(s, col));
}

void
st_row_space(struct pr_rep *rep, struct st_stmt *s, struct pr_space *o)
{
	o->space_id = col_dup(rep, s, 0);
	o->workspace_id = col_dup(rep, s, 1);
	o->browser_instance_id = col_dup(rep, s, 2);
	o->binding_id = col_dup(rep, s, 3);
	o->owner_type = col_dup(rep, s, 4);
	o->owner_id = col_dup(rep, s, 5);
	o->status = col_dup(rep, s, 6);
	st_strlist_from_json(rep, st_col_text(s, 7), &o->granted);
	o->revision = st_col_int(s, 8);
	o->last_error_code = col_dup(rep, s, 9);
	o->close_requested = st_col_int(s, 10) != 0;
	o->created_at = st_col_int(s, 11);
	o->updated_at = st_col_int(s, 12);
	o->closed_at = st_col_int(s, 13);
	o->dialog_policy = col_dup(rep, s, 14);
	o->held_by = col_dup(rep, s, 15);
	o->held_by_name = col_dup(rep, s, 16);
	o->held_until = st_col_int(s, 17);
	o->hold_pending = st_col_int(s, 18) != 0;
	o->help_requested = st_col_int(s, 19) != 0;
	o->owner_name = col_dup(rep, s, 20);
	/* A hold in force is what the Space is; one asked while a task ran
	 * begins when that task has ended (the status column says running
	 * until then). */
	if (o->held_by != NULL && !o->hold_pending &&
	    !cm_space_status_is(o->status, CM_SPACE_CLOSED))
		o->status = cm_space_status_name(CM_SPACE_HELD);
}

/* arg_keys: the names of the args object, never its values, which may be
 * secrets: no reply carries them. */
void
st_task_arg_keys(struct pr_rep *rep, const char *args, struct pr_strlist *out)
{
	json_t *obj = json_loads(args ? args : "{}", 0, NULL);
	const char *key;
	json_t *v;

	memset(out, 0, sizeof(*out));
	if (json_is_object(obj) && json_object_size(obj) > 0) {
		size_t n = json_object_size(obj);

		if (n > CM_SCHEMA_PROPS_MAX)
			n = CM_SCHEMA_PROPS_MAX;
		out->v = pr_rep_alloc(rep, n * sizeof(char *));
		json_object_foreach(obj, key, v)
		{
			if (out->v == NULL || out->n == n)
				break;
			out->v[out->n++] = pr_rep_strdup(rep, key);
		}
	}
	json_decref(obj);
}

void
st_row_task(struct pr_rep *rep, struct st_stmt *s, struct pr_task *o)
{
	o->task_id = col_dup(rep, s, 0);
	o->space_id = col_dup(rep, s, 1);
	o->workspace_id = col_dup(rep, s, 2);
	o->request_id = col_dup(rep, s, 3);
	o->operation_id = col_dup(rep, s, 4);
	o->capability = col_dup(rep, s, 5);
	st_task_arg_keys(rep, st_col_text(s, 6), &o->arg_keys);
	o->timeout_ms = st_col_int(s, 7);
	o->status = col_dup(rep, s, 8);
	o->cancel_requested = st_col_int(s, 9) != 0;
	o->result = col_dup(rep, s, 10);
	o->error_code = col_dup(rep, s, 11);
	o->error_message = col_dup(rep, s, 12);
	o->created_at = st_col_int(s, 13);
	o->started_at = st_col_int(s, 14);
	o->finished_at = st_col_int(s, 15);
	o->updated_at = st_col_int(s, ST_TASK_NCOLS - 1);
}

static int load_space(struct st_ctx *ctx, struct pr_rep *rep,
    const char *workspace_id, const char *space_id, bool lock);

int
st_load_space(struct st_ctx *ctx, struct pr_rep *rep, const char *workspace_id,
    const char *space_id)
{
	return load_space(ctx, rep, workspace_id, space_id, false);
}

int
st_load_space_locked(
    struct st_ctx *ctx, struct pr_rep *rep, const char *space_id)
{
	return load_space(ctx, rep, NULL, space_id, true);
}

static int
load_space(struct st_ctx *ctx, struct pr_rep *rep, const char *workspace_id,
    const char *space_id, bool lock)
{
	static const char sql[] =
	    "SELECT " ST_SPACE_COLS ", last_sequence FROM browser_spaces"
	    " WHERE id = $1";
	static const char lock_sql[] =
	    "SELECT " ST_SPACE_COLS ", last_sequence FROM browser_spaces"
	    " WHERE id = $1 FOR UPDATE";
	struct st_stmt *s;
	struct pr_space *sp;
	int rc;

	if (st_db_query(ctx->db, &s,
	        lock && st_db_shared(ctx->db) ? lock_sql : sql, "s",
	        space_id) != ST_OK) {
		st_db_failed(ctx, rep, "space load");
		return -1;
	}
	rc = st_stmt_step(s);
	if (rc == ST_ROW && (workspace_id == NULL ||
	                        strcmp(st_col_text(s, 1), workspace_id) == 0)) {
		if ((sp = ST_PUSH(rep, spaces)) == NULL) {
			st_stmt_done(s);
			pr_rep_error(rep, CM_E_INTERNAL, "out of memory");
			return -1;
		}
		st_row_space(rep, s, sp);
		st_seq_note(ctx, sp->space_id, st_col_int(s, ST_SPACE_NCOLS));
		st_stmt_done(s);
		return 1;
	}
	st_stmt_done(s);
	if (rc == ST_ERROR) {
		st_db_failed(ctx, rep, "space load");
		return -1;
	}
	/* Unknown and foreign look the same to the caller: a Space of another
	 * workspace is not found, so its existence does not leak. */
	pr_rep_error(rep, CM_E_NOT_FOUND, "no such browser space");
	return 0;
}

static int
load_task_where(struct st_ctx *ctx, struct pr_rep *rep, const char *sql,
    const char *key, bool missing_is_error, const char **args)
{
	struct st_stmt *s;
	struct pr_task *t;
	int rc;

	if (st_db_query(ctx->db, &s, sql, "s", key) != ST_OK) {
		st_db_failed(ctx, rep, "task load");
		return -1;
	}
	rc = st_stmt_step(s);
	if (rc == ST_ROW) {
		if ((t = ST_PUSH(rep, tasks)) == NULL) {
			st_stmt_done(s);
			pr_rep_error(rep, CM_E_INTERNAL, "out of memory");
			return -1;
		}
		st_row_task(rep, s, t);
		if (args != NULL)
			*args = pr_rep_strdup(
			    rep, st_col_text(s, ST_TASK_COL_ARGS));
		st_stmt_done(s);
		return 1;
	}
	st_stmt_done(s);
	if (rc == ST_ERROR) {
		st_db_failed(ctx, rep, "task load");
		return -1;
	}
	if (missing_is_error)
		pr_rep_error(rep, CM_E_NOT_FOUND, "no such task");
	return 0;
}

int
st_load_task(struct st_ctx *ctx, struct pr_rep *rep, const char *task_id)
{
	static const char sql[] =
	    "SELECT " ST_TASK_COLS " FROM browser_space_tasks WHERE id = $1";

	return load_task_where(ctx, rep, sql, task_id, true, NULL);
}

int
st_load_active_task(struct st_ctx *ctx, struct pr_rep *rep,
    const char *space_id, const char **args)
{
	static const char sql[] =
	    "SELECT " ST_TASK_COLS
	    " FROM browser_space_tasks WHERE space_id = $1"
	    " AND (status = 'queued' OR status = 'running')";

	return load_task_where(ctx, rep, sql, space_id, false, args);
}
