/*
 * ops_artifact.c: a task's artifacts (a screenshot, or a file the page
 * downloaded).  actor.finish writes one in the transaction that finishes
 * its task; artifact.get
 * reads it back for the api.  The store owns the bytes: their size and
 * sha256 are computed here, never taken from the actor.
 */
#include <string.h>

#include "ids.h"
#include "mime.h"
#include "ops.h"
#include "reply.h"
#include "token.h"

/* Served as attachments under the service's origin: only the types of
 * common/mime.h's table, none of which a browser runs. */
static bool
mime_ok(const char *mime)
{
	return cm_mime_known(mime) != NULL;
}

int
st_artifact_check(const struct pr_req *req, struct pr_rep *rep)
{
	bool any = req->artifact_name != NULL || req->mime != NULL ||
	           req->artifact.n > 0;

	if (!any)
		return 0;
	if (req->artifact_name == NULL || req->mime == NULL ||
	    req->artifact.n == 0) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "an artifact needs its name, mime type and bytes");
		return -1;
	}
	if (!cm_task_status_is(req->status, CM_TASK_COMPLETED)) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "only a completed task has an artifact");
		return -1;
	}
	if (!cm_artifact_name_valid(
	        req->artifact_name, strlen(req->artifact_name))) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "an artifact's name is 1..%d of [A-Za-z0-9._-], not "
		    "starting with '.'",
		    CM_ID_MAX);
		return -1;
	}
	if (!mime_ok(req->mime)) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "an artifact's mime type is none the service serves");
		return -1;
	}
	/* The decoder bounds it too; the store does not rely on that. */
	if (req->artifact.n > CM_ARTIFACT_MAX) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "an artifact is at most %d bytes", CM_ARTIFACT_MAX);
		return -1;
	}
	return 1;
}

int
st_artifact_put(struct st_ctx *ctx, const struct pr_req *req,
    const char *space_id, const char *task_id)
{
	static const char sql[] =
	    "INSERT INTO browser_space_artifacts (id, task_id, space_id, name,"
	    " mime, bytes, sha256, size, created_at)"
	    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
	char id[CM_UUID_LEN], sha[CM_TOKEN_HASH_LEN];

	if (cm_sha256_hex(req->artifact.p, req->artifact.n, sha) != 0)
		return -1;
	cm_uuid7(id);
	return st_db_run(ctx->db, sql, "sssssBsii", id, task_id, space_id,
	           req->artifact_name, req->mime, (const void *)req->artifact.p,
	           req->artifact.n, sha, (int64_t)req->artifact.n,
	           ctx->now) == ST_DONE
	           ? 0
	           : -1;
}

void
st_op_artifact_get(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	/* The task's Space and workspace are the path's, as for task.get:
	 * an artifact of another Space is not found. */
	static const char sql[] =
	    "SELECT a.task_id, a.space_id, a.name, a.mime, a.bytes, a.sha256,"
	    " a.size, a.created_at FROM browser_space_artifacts a"
	    " JOIN browser_space_tasks t ON t.id = a.task_id"
	    " WHERE a.task_id = $1 AND a.name = $2 AND t.space_id = $3"
	    " AND t.workspace_id = $4 AND a.space_id = t.space_id";
	struct pr_artifact *a;
	struct st_stmt *s;
	const void *bytes;
	unsigned char *copy;
	size_t n = 0;
	int rc;

	if (st_db_query(ctx->db, &s, sql, "ssss", req->task_id,
	        req->artifact_name, req->space_id,
	        req->workspace_id) != ST_OK) {
		st_db_failed(ctx, rep, "artifact get");
		return;
	}
	if ((rc = st_stmt_step(s)) != ST_ROW) {
		st_stmt_done(s);
		if (rc == ST_ERROR)
			st_db_failed(ctx, rep, "artifact get");
		else
			pr_rep_error(rep, CM_E_NOT_FOUND, "no such artifact");
		return;
	}
	bytes = st_col_blob(s, 4, &n);
	if (n == 0 || n > CM_ARTIFACT_MAX || bytes == NULL) {
		st_stmt_done(s);
		pr_rep_error(rep, CM_E_INTERNAL, "the artifact is damaged");
		return;
	}
	if ((a = ST_PUSH(rep, artifacts)) == NULL ||
	    (copy = pr_rep_alloc(rep, n)) == NULL) {
		st_stmt_done(s);
		pr_rep_error(rep, CM_E_INTERNAL, "out of memory");
		return;
	}
	memcpy(copy, bytes, n);
#define COL(i) pr_rep_strdup(rep, st_col_text(s, (i)))
	a->task_id = COL(0);
	a->space_id = COL(1);
	a->name = COL(2);
	a->mime = COL(3);
	a->bytes.p = copy;
	a->bytes.n = n;
	a->sha256 = COL(5);
	a->size = st_col_int(s, 6);
	a->created_at = st_col_int(s, 7);
#undef COL
	st_stmt_done(s);
}
