/*
 * ops_actor.c: what actors and the supervisor ask of the store: load a
 * Space with its instance's private config, claim, heartbeat and finish
 * tasks under a lease, and recover tasks whose executor was lost.
 */
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "ops.h"
#include "reply.h"
#include "rows.h"

/* The only reader of an instance's secret columns. */
void
st_op_actor_load(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char sql[] =
	    "SELECT i.id, i.name, i.driver, i.profile_mode, i.bundle_id,"
	    " i.network_policy, i.status, i.host, i.created_at, i.updated_at,"
	    " i.endpoint, i.config, i.profile, b.name, b.version, b.manifest,"
	    " b.created_at"
	    " FROM browser_spaces s"
	    " JOIN browser_instances i ON i.id = s.browser_instance_id"
	    " JOIN runtime_bundles b ON b.id = i.bundle_id WHERE s.id = $1";
	struct pr_instance *in;
	struct pr_instance_secret *sec;
	struct pr_bundle *b;
	struct st_stmt *s;

	if (st_load_space(ctx, rep, NULL, req->space_id) != 1)
		return;
	if (st_db_query(ctx->db, &s, sql, "s", req->space_id) != ST_OK ||
	    st_stmt_step(s) != ST_ROW) {
		st_stmt_done(s);
		st_db_failed(ctx, rep, "actor load");
		return;
	}
	in = ST_PUSH(rep, instances);
	sec = ST_PUSH(rep, instance_secrets);
	b = ST_PUSH(rep, bundles);
	if (in == NULL || sec == NULL || b == NULL) {
		st_stmt_done(s);
		pr_rep_error(rep, CM_E_INTERNAL, "out of memory");
		return;
	}
#define COL(i) pr_rep_strdup(rep, st_col_text(s, (i)))
	in->browser_instance_id = COL(0);
	in->name = COL(1);
	in->driver = COL(2);
	in->profile_mode = COL(3);
	in->bundle_id = COL(4);
	in->network_policy = COL(5);
	in->status = COL(6);
	in->host = COL(7);
	in->in_use = true;
	in->created_at = st_col_int(s, 8);
	in->updated_at = st_col_int(s, 9);
	sec->endpoint = COL(10);
	sec->config = COL(11);
	sec->profile = COL(12);
	b->bundle_id = in->bundle_id;
	b->name = COL(13);
	b->version = COL(14);
	b->manifest = COL(15);
	b->created_at = st_col_int(s, 16);
#undef COL
	st_stmt_done(s);
}

/* 1 when sql, with its two text parameters, finds a row; 0 when not; -1
 * on error. */
static int
row_exists(struct st_ctx *ctx, const char *sql, const char *a, const char *b)
{
	struct st_stmt *s;
	int rc;

	if (st_db_query(ctx->db, &s, sql, "ss", a, b) != ST_OK)
		return -1;
	rc = st_stmt_step(s);
	st_stmt_done(s);
	return rc == ST_ROW ? 1 : rc == ST_DONE ? 0 : -1;
}

/* 1 when task_id's lease is holder's, 0 when not, -1 on error. */
static int
held_by(struct st_ctx *ctx, const char *task_id, const char *holder)
{
	static const char sql[] = "SELECT 1 FROM browser_space_tasks"
	                          " WHERE id = $1 AND lease_holder = $2";

	return row_exists(ctx, sql, task_id, holder);
}

void
st_op_actor_claim(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char claim[] =
	    "UPDATE browser_space_tasks SET status = 'running', started_at = "
	    "$2,"
	    " updated_at = $2, lease_holder = $3, lease_expires_at = $4"
	    " WHERE id = $1 AND status = 'queued'";
	struct pr_space *sp;
	struct pr_task *t;
	const char *args = NULL;
	int rc;

	/* Locked: a claim held while a submit ran is run again in the next
	 * group, which on PostgreSQL may be on the other writer. */
	if (st_load_space_locked(ctx, rep, req->space_id) != 1)
		return;
	sp = &rep->spaces[0];
	rep->close_requested = sp->close_requested;
	if (cm_space_status_is(sp->status, CM_SPACE_CLOSED) ||
	    cm_space_status_is(sp->status, CM_SPACE_ERROR))
		return;
	if ((rc = st_load_active_task(ctx, rep, req->space_id, &args)) != 1)
		return;
	t = &rep->tasks[0];
	/* A closing Space starts nothing new (its close ends a task that
	 * runs). */
	if (sp->close_requested) {
		rep->n_tasks = 0;
		return;
	}
	/*
	 * Running already: under another lease it is not ours to run.  Under
	 * the asker's own lease, the claim that took it had its reply lost:
	 * that call gave up before the store answered (a slow commit), and
	 * the actor, which claims only when it holds no task, asks again
	 * with a new op_id.  It has not run the task: it gets it now.
	 */
	if (cm_task_status_is(t->status, CM_TASK_RUNNING)) {
		if ((rc = held_by(ctx, t->task_id, req->lease_holder)) < 0)
			goto fail;
		if (rc == 0)
			rep->n_tasks = 0;
		else
			rep->args = args;
		return;
	}
	/* A claim that changed no row took nothing: it says so rather than
	 * start a task that is not running. */
	if (st_db_send(ctx->db, 1, claim, "sisi", t->task_id, ctx->now,
	        req->lease_holder, ctx->now + CM_LEASE_TTL_MS) != ST_DONE ||
	    st_db_changes(ctx->db) != 1 ||
	    st_event_touch(ctx, sp->workspace_id, req->space_id, t->task_id,
	        cm_event_kind_name(CM_EV_STARTED), NULL,
	        cm_space_status_name(CM_SPACE_RUNNING)) != 0)
		goto fail;
	/* The rows as they now are, without reading them again. */
	sp->status = cm_space_status_name(CM_SPACE_RUNNING);
	sp->revision++;
	sp->updated_at = ctx->now;
	t->status = cm_task_status_name(CM_TASK_RUNNING);
	t->started_at = t->updated_at = ctx->now;
	rep->args = args;
	return;
fail:
	st_db_failed(ctx, rep, "actor claim");
}

/*
 * Loads the running task held under lease_holder.  Returns 1 when held
 * (with keep, the task's row is then in rep->tasks), 0 when not (rep->err
 * is lease_expired, and a task that is no longer running is in
 * rep->tasks), -1 on error.  *hold_pending (unless NULL) says whether a
 * take-over waits for the task's end.
 */
static int
load_held(struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep,
    bool keep, bool *hold_pending)
{
	static const char sql[] = "SELECT " ST_TASK_COLS_OF(
	    "t.") ", t.lease_holder,"
	          " s.close_requested, s.last_sequence, s.hold_pending"
	          " FROM browser_space_tasks t"
	          " JOIN browser_spaces s ON s.id = t.space_id WHERE t.id = $1";
	struct st_stmt *s;
	struct pr_task *t;
	const char *holder;
	bool running, held;
	int rc;

	if (st_db_query(ctx->db, &s, sql, "s", req->task_id) != ST_OK) {
		st_db_failed(ctx, rep, "lease");
		return -1;
	}
	if ((rc = st_stmt_step(s)) != ST_ROW) {
		st_stmt_done(s);
		if (rc == ST_ERROR)
			st_db_failed(ctx, rep, "lease");
		else
			pr_rep_error(rep, CM_E_NOT_FOUND, "no such task");
		return rc == ST_ERROR ? -1 : 0;
	}
	if ((t = ST_PUSH(rep, tasks)) == NULL) {
		st_stmt_done(s);
		pr_rep_error(rep, CM_E_INTERNAL, "out of memory");
		return -1;
	}
	st_row_task(rep, s, t);
	holder = st_col_text(s, ST_TASK_NCOLS);
	running = cm_task_status_is(t->status, CM_TASK_RUNNING);
	held =
	    running && holder != NULL && strcmp(holder, req->lease_holder) == 0;
	rep->close_requested = st_col_int(s, ST_TASK_NCOLS + 1) != 0;
	st_seq_note(ctx, t->space_id, st_col_int(s, ST_TASK_NCOLS + 2));
	if (hold_pending != NULL)
		*hold_pending = st_col_int(s, ST_TASK_NCOLS + 3) != 0;
	rep->cancel_requested = t->cancel_requested;
	st_stmt_done(s);
	/* A task another actor holds is none of this one's business. */
	if ((held && !keep) || (running && !held))
		rep->n_tasks = 0;
	if (held)
		return 1;
	pr_rep_error(rep, CM_E_LEASE_EXPIRED,
	    "the task's lease is held by no one or someone else");
	return 0;
}

void
st_op_actor_heartbeat(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char upd[] = "UPDATE browser_space_tasks SET "
	                          "lease_expires_at = $2 WHERE id = $1";

	if (load_held(ctx, req, rep, false, NULL) != 1)
		return;
	if (st_db_send(ctx->db, 1, upd, "si", req->task_id,
	        ctx->now + CM_LEASE_TTL_MS) != ST_DONE)
		st_db_failed(ctx, rep, "heartbeat");
}

void
st_op_actor_finish(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	int artifact;
	struct pr_task *t;
	enum cm_task_status status = cm_task_status_parse(req->status);
	bool failed = status == CM_TASK_FAILED, hold_pending = true;

	if (!cm_task_status_terminal(status)) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "status must be completed, failed or cancelled");
		return;
	}
	if (failed != (req->error_code != NULL) ||
	    (req->result != NULL && status != CM_TASK_COMPLETED)) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "error_code goes with failed, result with completed");
		return;
	}
	if ((artifact = st_artifact_check(req, rep)) < 0)
		return;
	if (load_held(ctx, req, rep, true, &hold_pending) != 1) {
		/* Already finished by this same call (a re-send after a store
		 * restart lost the op_id memory): report it, do nothing. */
		if (rep->n_tasks == 1 &&
		    cm_task_status_is(rep->tasks[0].status, status))
			rep->err = CM_OK, rep->msg = NULL;
		return;
	}
	if (status == CM_TASK_CANCELLED && !rep->cancel_requested) {
		rep->n_tasks = 0;
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "a task is cancelled only after a cancel request");
		return;
	}
	t = &rep->tasks[0];
	/* The row load_held read: the finish reads it no more. */
	if (st_task_finalize_row(ctx, t, hold_pending, status, req->result,
	        req->error_code, req->error_message) != 0 ||
	    (artifact && st_artifact_put(ctx, req, t->space_id, t->task_id))) {
		st_db_failed(ctx, rep, "finish");
		return;
	}
	/* The row as it now is, without reading it again. */
	t->status = cm_task_status_name(status);
	t->result = req->result;
	t->error_code = req->error_code;
	t->error_message = req->error_message;
	t->finished_at = t->updated_at = ctx->now;
}

/* Ends a lost executor's task: cancelled if a cancel was asked for,
 * otherwise failed with code.  Never queued again: the executor may have
 * acted before it was lost, and a task never runs twice. */
static int
end_lost(struct st_ctx *ctx, const char *ws, const char *space_id,
    const char *task_id, bool cancel_requested, const char *code)
{
	static const char msg_unknown[] =
	    "the executor was lost while the task ran; its outcome is unknown";
	static const char msg_lease[] =
	    "the executor stopped renewing the task's lease";

	if (cancel_requested)
		return st_task_finalize(ctx, ws, space_id, task_id,
		    CM_TASK_CANCELLED, NULL, NULL, NULL);
	return st_task_finalize(ctx, ws, space_id, task_id, CM_TASK_FAILED,
	    NULL, code,
	    strcmp(code, "lease_expired") == 0 ? msg_lease : msg_unknown);
}

/* Whether space_id's instance is on host: 1, 0, or -1 on error. */
static int
space_on_host(struct st_ctx *ctx, const char *space_id, const char *host)
{
	static const char sql[] =
	    "SELECT 1 FROM browser_spaces s"
	    " JOIN browser_instances i ON i.id = s.browser_instance_id"
	    " WHERE s.id = $1 AND i.host = $2";

	return row_exists(ctx, sql, space_id, host);
}

/*
 * A supervisor finalises only its own actors' tasks: with req->host set,
 * a Space whose instance is on another host is left alone (count 0), as
 * its task runs under that host's actor, whatever this host's saw.
 */
void
st_op_sup_finalize_lost(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	const struct pr_task *t;
	int mine;

	if (st_load_space(ctx, rep, NULL, req->space_id) != 1)
		return;
	if (req->host != NULL &&
	    (mine = space_on_host(ctx, req->space_id, req->host)) != 1) {
		rep->n_spaces = 0;
		if (mine < 0)
			st_db_failed(ctx, rep, "finalize lost");
		return;
	}
	if (st_load_active_task(ctx, rep, req->space_id, NULL) != 1)
		return;
	t = &rep->tasks[0];
	/* A queued task never started: the next actor will run it. */
	if (!cm_task_status_is(t->status, CM_TASK_RUNNING)) {
		rep->n_tasks = 0;
		return;
	}
	if (end_lost(ctx, rep->spaces[0].workspace_id, req->space_id,
	        t->task_id, t->cancel_requested, "outcome_unknown") != 0) {
		st_db_failed(ctx, rep, "finalize lost");
		return;
	}
	rep->count = 1;
	rep->n_tasks = 0;
	rep->n_spaces = 0;
	st_load_space(ctx, rep, NULL, req->space_id);
	st_load_task(ctx, rep, t->task_id);
}

/*
 * Ends the running tasks whose lease expired, never to run again.  With
 * req->host set: a task on that host's instances is due once its lease
 * expired, and ends lease_expired; a task on another host's is due only
 * CM_LEASE_FOREIGN_GRACE_MS later (the two stores' clocks may differ),
 * and ends outcome_unknown: its host stopped renewing, so its executor is
 * presumed lost mid-call.  A live lease anywhere is never touched.
 * Without req->host every task is this host's.
 */
void
st_op_sup_sweep_leases(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char sql[] =
	    "SELECT t.id, t.space_id, t.workspace_id, t.cancel_requested,"
	    " i.host FROM browser_space_tasks t"
	    " JOIN browser_spaces s ON s.id = t.space_id"
	    " JOIN browser_instances i ON i.id = s.browser_instance_id"
	    " WHERE t.status = 'running' AND t.lease_expires_at < $1"
	    " AND (CAST($2 AS TEXT) IS NULL OR i.host = $2"
	    " OR t.lease_expires_at < $3)"
	    " LIMIT " CM_STR(CM_LEASE_SWEEP_MAX);
	struct {
		char id[CM_ID_MAX + 1], space[CM_ID_MAX + 1], ws[CM_ID_MAX + 1];
		bool cancel, foreign;
	} *due = NULL;
	size_t n = 0;
	struct st_stmt *s;

	if ((due = calloc(CM_LEASE_SWEEP_MAX, sizeof(*due))) == NULL) {
		pr_rep_error(rep, CM_E_INTERNAL, "out of memory");
		return;
	}
	if (st_db_query(ctx->db, &s, sql, "isi", ctx->now, req->host,
	        ctx->now - CM_LEASE_FOREIGN_GRACE_MS) != ST_OK) {
		free(due);
		st_db_failed(ctx, rep, "sweep");
		return;
	}
	/* Collect first: finalising updates the table being read. */
	while (n < CM_LEASE_SWEEP_MAX && st_stmt_step(s) == ST_ROW) {
		const char *host = st_col_text(s, 4);

		snprintf(due[n].id, sizeof(due[n].id), "%s", st_col_text(s, 0));
		snprintf(due[n].space, sizeof(due[n].space), "%s",
		    st_col_text(s, 1));
		snprintf(due[n].ws, sizeof(due[n].ws), "%s", st_col_text(s, 2));
		due[n].cancel = st_col_int(s, 3) != 0;
		due[n].foreign = req->host != NULL &&
		                 (host == NULL || strcmp(host, req->host) != 0);
		n++;
	}
	st_stmt_done(s);
	for (size_t i = 0; i < n; i++) {
		if (end_lost(ctx, due[i].ws, due[i].space, due[i].id,
		        due[i].cancel,
		        due[i].foreign ? "outcome_unknown" : "lease_expired") !=
		    0) {
			st_db_failed(ctx, rep, "sweep");
			free(due);
			return;
		}
	}
	/* Operators' holds past their deadline end with the leases. */
	if (st_hold_sweep(ctx, ST_HOLDS_DUE, NULL, NULL, "expired") < 0)
		st_db_failed(ctx, rep, "sweep");
	rep->count = (int64_t)n;
	free(due);
}

/*
 * One page of the Spaces that are not closed, on req->host (every host
 * when NULL), whose id is above req->after_id (from the first when NULL),
 * in id order, at most CM_ACTIVE_PAGE_MAX: a shorter page is the last.
 */
void
st_op_sup_list_active(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	/* A cursor on the primary key, not an offset: a page costs the
	 * same wherever it starts, and a Space opened or closed between two
	 * pages shifts no other one out of the walk. */
	static const char sql[] =
	    "SELECT " ST_SPACE_COLS
	    " FROM browser_spaces WHERE status <> 'closed'"
	    " AND (CAST($1 AS TEXT) IS NULL OR browser_instance_id IN"
	    " (SELECT id FROM browser_instances WHERE host = $1))"
	    " AND (CAST($2 AS TEXT) IS NULL OR id > $2)"
	    " ORDER BY id LIMIT $3";
	struct st_stmt *s;
	struct pr_space *sp;
	int rc;

	if (st_db_query(ctx->db, &s, sql, "ssi", req->host, req->after_id,
	        (int64_t)CM_ACTIVE_PAGE_MAX) != ST_OK) {
		st_db_failed(ctx, rep, "list active");
		return;
	}
	while ((rc = st_stmt_step(s)) == ST_ROW) {
		if ((sp = ST_PUSH(rep, spaces)) == NULL)
			break;
		st_row_space(rep, s, sp);
	}
	st_stmt_done(s);
	if (rc == ST_ERROR)
		st_db_failed(ctx, rep, "list active");
}

/*
 * The cdp instances of a host (every host when host is NULL), for the
 * supervisor's probe: id and status in instances, the endpoint (a
 * secret) at the same index in instance_secrets.  At most CM_PROBE_MAX.
 */
void
st_op_sup_list_cdp(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char sql[] =
	    "SELECT id, status, endpoint FROM browser_instances"
	    " WHERE driver = 'cdp' AND (CAST($1 AS TEXT) IS NULL OR host = $1)"
	    " ORDER BY id LIMIT " CM_STR(CM_PROBE_MAX);
	struct pr_instance *in;
	struct pr_instance_secret *sec;
	struct st_stmt *s;
	int rc;

	if (st_db_query(ctx->db, &s, sql, "s", req->host) != ST_OK) {
		st_db_failed(ctx, rep, "list cdp");
		return;
	}
	while ((rc = st_stmt_step(s)) == ST_ROW) {
		if ((in = ST_PUSH(rep, instances)) == NULL ||
		    (sec = ST_PUSH(rep, instance_secrets)) == NULL) {
			rc = ST_ERROR;
			break;
		}
		in->browser_instance_id = pr_rep_strdup(rep, st_col_text(s, 0));
		in->status = pr_rep_strdup(rep, st_col_text(s, 1));
		sec->endpoint = pr_rep_strdup(rep, st_col_text(s, 2));
	}
	st_stmt_done(s);
	if (rc == ST_ERROR)
		st_db_failed(ctx, rep, "list cdp");
}
