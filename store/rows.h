/*
 * rows.h: a Space's and a task's row as the handlers read it: its column
 * lists, the readers that copy one into a reply, and the loads of one by
 * id.  Internal to the store.
 */
#ifndef ST_ROWS_H
#define ST_ROWS_H

#include "db.h"
#include "proto.h"

struct st_ctx;

/* Column lists and row readers: SELECT ST_SPACE_COLS FROM browser_spaces. */
#define ST_SPACE_COLS                                                         \
	"id, workspace_id, browser_instance_id, binding_id, owner_type, "     \
	"owner_id, status, granted_capabilities, revision, last_error_code, " \
	"close_requested, created_at, updated_at, closed_at, dialog_policy, " \
	"held_by, (SELECT name FROM principals WHERE principals.id = "        \
	"browser_spaces.held_by), held_until, hold_pending, help_requested, " \
	"(SELECT name FROM principals WHERE principals.id = "                 \
	"browser_spaces.owner_id)"
#define ST_SPACE_NCOLS 21
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
/* Copy the current row of s, selected with ST_SPACE_COLS (ST_TASK_COLS),
 * into out, its strings in rep's arena. */
void st_row_space(struct pr_rep *rep, struct st_stmt *s, struct pr_space *out);
void st_row_task(struct pr_rep *rep, struct st_stmt *s, struct pr_task *out);
/* The names of an args object (never its values, which no reply carries). */
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

#endif
