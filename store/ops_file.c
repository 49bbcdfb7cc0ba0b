/*
 * ops_file.c: the files a client keeps on a Space for its page to upload
 * (space.file_put, space.file_list) and the actor reads back
 * (space.file_get).  The store owns the bytes: size and sha256 are
 * computed here.  A second put of a name replaces the file; a Space holds
 * at most CM_SPACE_FILES_MAX; a closed Space takes none.
 */
#include <string.h>

#include "ids.h"
#include "mime.h"
#include "ops.h"
#include "reply.h"
#include "rows.h"
#include "token.h"

_Static_assert(CM_UPLOAD_MAX <= CM_ARTIFACT_MAX,
    "a file's bytes travel in the artifact field");

/* The request's file is one the store keeps; else rep is refused. */
static bool
file_ok(const struct pr_req *req, struct pr_rep *rep)
{
	if (!cm_file_name_valid(req->name, strlen(req->name))) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "a file's name is 1..%d of [A-Za-z0-9._-], not starting "
		    "with '.'",
		    CM_FILE_NAME_MAX);
		return false;
	}
	if (!cm_mime_valid(req->mime)) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "a file's type is type/subtype, at most %d bytes",
		    CM_MIME_MAX);
		return false;
	}
	if (req->artifact.n == 0 || req->artifact.n > CM_UPLOAD_MAX) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST, "a file is 1..%d bytes",
		    CM_UPLOAD_MAX);
		return false;
	}
	return true;
}

/* How many files the Space holds, other than one named name; -1 on
 * error. */
static int64_t
file_count(struct st_ctx *ctx, const char *space_id, const char *name)
{
	static const char sql[] = "SELECT COUNT(*) FROM browser_space_files"
	                          " WHERE space_id = $1 AND name <> $2";
	struct st_stmt *s;
	int64_t n = -1;

	if (st_db_query(ctx->db, &s, sql, "ss", space_id, name) != ST_OK)
		return -1;
	if (st_stmt_step(s) == ST_ROW)
		n = st_col_int(s, 0);
	st_stmt_done(s);
	return n;
}

/* Appends the file row s holds (columns of FILE_COLS, bytes at 7 when
 * with_bytes) to rep; -1 when memory is short. */
#define FILE_COLS "space_id, name, mime, sha256, size, created_at, updated_at"
static int
file_row(struct pr_rep *rep, struct st_stmt *s, bool with_bytes)
{
	struct pr_file *f;
	unsigned char *copy;
	const void *bytes;
	size_t n = 0;

	if ((f = ST_PUSH(rep, files)) == NULL)
		return -1;
#define COL(i) pr_rep_strdup(rep, st_col_text(s, (i)))
	f->space_id = COL(0);
	f->name = COL(1);
	f->mime = COL(2);
	f->sha256 = COL(3);
#undef COL
	f->size = st_col_int(s, 4);
	f->created_at = st_col_int(s, 5);
	f->updated_at = st_col_int(s, 6);
	if (!with_bytes)
		return 0;
	bytes = st_col_blob(s, 7, &n);
	if (bytes == NULL || n == 0 || n > CM_UPLOAD_MAX ||
	    (copy = pr_rep_alloc(rep, n)) == NULL)
		return -1;
	memcpy(copy, bytes, n);
	f->bytes.p = copy;
	f->bytes.n = n;
	return 0;
}

/* Reads the Space's file name (with its bytes, or not) into rep: 1
 * found, 0 not found, -1 error. */
static int
file_read(struct st_ctx *ctx, struct pr_rep *rep, const char *space_id,
    const char *name, bool with_bytes)
{
	static const char sql[] = "SELECT " FILE_COLS ", bytes"
	                          " FROM browser_space_files"
	                          " WHERE space_id = $1 AND name = $2";
	struct st_stmt *s;
	int rc;

	if (st_db_query(ctx->db, &s, sql, "ss", space_id, name) != ST_OK)
		return -1;
	rc = st_stmt_step(s);
	if (rc == ST_ROW)
		rc = file_row(rep, s, with_bytes) == 0 ? 1 : -1;
	else
		rc = rc == ST_ERROR ? -1 : 0;
	st_stmt_done(s);
	return rc;
}

void
st_op_space_file_put(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char del[] = "DELETE FROM browser_space_files"
	                          " WHERE space_id = $1 AND name = $2";
	static const char ins[] =
	    "INSERT INTO browser_space_files (space_id, name, mime, bytes,"
	    " sha256, size, created_at, updated_at)"
	    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
	char sha[CM_TOKEN_HASH_LEN];
	int64_t created = ctx->now, n;
	int had;

	if (!file_ok(req, rep) ||
	    st_load_space(ctx, rep, req->workspace_id, req->space_id) != 1)
		return;
	if (cm_space_status_is(rep->spaces[0].status, CM_SPACE_CLOSED)) {
		pr_rep_error(rep, CM_E_SPACE_CLOSED, "the Space is closed");
		return;
	}
	rep->n_spaces = 0;
	if ((had = file_read(ctx, rep, req->space_id, req->name, false)) < 0 ||
	    (n = file_count(ctx, req->space_id, req->name)) < 0)
		goto fail;
	if (had == 1)
		created = rep->files[0].created_at;
	rep->n_files = 0;
	if (n >= CM_SPACE_FILES_MAX) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "a Space holds at most %d files", CM_SPACE_FILES_MAX);
		return;
	}
	if (cm_sha256_hex(req->artifact.p, req->artifact.n, sha) != 0 ||
	    st_db_run(ctx->db, del, "ss", req->space_id, req->name) !=
	        ST_DONE ||
	    st_db_run(ctx->db, ins, "sssBsiii", req->space_id, req->name,
	        req->mime, (const void *)req->artifact.p, req->artifact.n, sha,
	        (int64_t)req->artifact.n, created, ctx->now) != ST_DONE ||
	    file_read(ctx, rep, req->space_id, req->name, false) != 1)
		goto fail;
	rep->created = had == 0;
	return;
fail:
	st_db_failed(ctx, rep, "space file put");
}

void
st_op_space_file_list(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char sql[] =
	    "SELECT " FILE_COLS " FROM browser_space_files"
	    " WHERE space_id = $1 ORDER BY name";
	struct st_stmt *s;
	int rc;

	if (st_load_space(ctx, rep, req->workspace_id, req->space_id) != 1)
		return;
	rep->n_spaces = 0;
	if (st_db_query(ctx->db, &s, sql, "s", req->space_id) != ST_OK)
		goto fail;
	while ((rc = st_stmt_step(s)) == ST_ROW)
		if (file_row(rep, s, false) != 0) {
			rc = ST_ERROR;
			break;
		}
	st_stmt_done(s);
	if (rc == ST_ERROR)
		goto fail;
	return;
fail:
	st_db_failed(ctx, rep, "space file list");
}

void
st_op_space_file_get(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	int rc = file_read(ctx, rep, req->space_id, req->name, true);

	if (rc < 0)
		st_db_failed(ctx, rep, "space file get");
	else if (rc == 0)
		pr_rep_error(rep, CM_E_NOT_FOUND, "the Space has no such file");
}
