/*
 * ops_admin.c: authentication and the identities it rests on: ping,
 * resolving a token, workspaces, principals, tokens and memberships; and
 * the helpers ops_runtime.c shares (ops.h, st_admin_*).  The runtime
 * catalogue (bundles, instances, bindings) is ops_runtime.c's.
 */
#include <stdio.h>
#include <string.h>

#include "ids.h"
#include "ops.h"
#include "reply.h"

/* Reads a column, copies it into the reply. */
#define COL(i) pr_rep_strdup(rep, st_col_text(s, (i)))

bool
st_admin_one_of(const char *v, const char *const *set)
{
	for (; v != NULL && *set != NULL; set++)
		if (strcmp(v, *set) == 0)
			return true;
	return false;
}

bool
st_admin_name_ok(const char *v)
{
	return v != NULL && v[0] != '\0' && strlen(v) <= CM_NAME_MAX;
}

void
st_op_ping(struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	(void)ctx;
	(void)req;
	rep->err = CM_OK;
}

static void
read_memberships(
    struct st_ctx *ctx, struct pr_rep *rep, const char *sql, const char *key)
{
	struct st_stmt *s;
	struct pr_membership *m;
	int rc;

	if (st_db_query(ctx->db, &s, sql, "s", key) != ST_OK) {
		st_db_failed(ctx, rep, "membership list");
		return;
	}
	while ((rc = st_stmt_step(s)) == ST_ROW) {
		if ((m = ST_PUSH(rep, memberships)) == NULL)
			break;
		m->workspace_id = COL(0);
		m->principal_id = COL(1);
		m->role = COL(2);
		m->created_at = st_col_int(s, 3);
	}
	st_stmt_done(s);
	if (rc == ST_ERROR)
		st_db_failed(ctx, rep, "membership list");
}

void
st_op_auth_resolve(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char sql[] =
	    "SELECT t.id, t.principal_id, t.label, t.expires_at, t.revoked_at,"
	    " t.created_at, p.kind, p.name, p.is_admin, p.disabled, "
	    "p.created_at"
	    " FROM api_tokens t JOIN principals p ON p.id = t.principal_id"
	    " WHERE t.token_hash = $1";
	static const char members_sql[] =
	    "SELECT workspace_id, principal_id, role, created_at"
	    " FROM memberships WHERE principal_id = $1 ORDER BY workspace_id";
	struct st_stmt *s;
	struct pr_token *t;
	struct pr_principal *p;
	bool valid;

	if (st_db_query(ctx->db, &s, sql, "s", req->token_hash) != ST_OK) {
		st_db_failed(ctx, rep, "auth");
		return;
	}
	if (st_stmt_step(s) != ST_ROW) {
		st_stmt_done(s);
		pr_rep_error(rep, CM_E_UNAUTHENTICATED, "unknown token");
		return;
	}
	/* Revoked, expired and disabled all look alike to the caller. */
	valid = st_col_null(s, 4) &&
	        (st_col_null(s, 3) || st_col_int(s, 3) > ctx->now) &&
	        st_col_int(s, 9) == 0;
	if (!valid || (t = ST_PUSH(rep, tokens)) == NULL ||
	    (p = ST_PUSH(rep, principals)) == NULL) {
		st_stmt_done(s);
		pr_rep_error(rep, CM_E_UNAUTHENTICATED, "token not valid");
		return;
	}
	t->token_id = COL(0);
	t->principal_id = COL(1);
	t->label = COL(2);
	t->expires_at = st_col_int(s, 3);
	t->created_at = st_col_int(s, 5);
	p->principal_id = COL(1);
	p->kind = COL(6);
	p->name = COL(7);
	p->is_admin = st_col_int(s, 8) != 0;
	p->created_at = st_col_int(s, 10);
	st_stmt_done(s);
	read_memberships(ctx, rep, members_sql, p->principal_id);
}

static void
workspace_row(struct pr_rep *rep, struct st_stmt *s)
{
	struct pr_workspace *w = ST_PUSH(rep, workspaces);

	if (w == NULL)
		return;
	w->workspace_id = COL(0);
	w->name = COL(1);
	w->created_at = st_col_int(s, 2);
}

/* Runs a SELECT with at most one text parameter, one row callback. */
void
st_admin_select_rows(struct st_ctx *ctx, struct pr_rep *rep, const char *sql,
    const char *key, void (*row)(struct pr_rep *, struct st_stmt *))
{
	struct st_stmt *s;
	int rc;

	if (st_db_query(ctx->db, &s, sql, key ? "s" : "", key) != ST_OK) {
		st_db_failed(ctx, rep, "select");
		return;
	}
	while ((rc = st_stmt_step(s)) == ST_ROW)
		row(rep, s);
	st_stmt_done(s);
	if (rc == ST_ERROR)
		st_db_failed(ctx, rep, "select");
}

void
st_op_workspace_create(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char ins[] =
	    "INSERT INTO workspaces (id, name, created_at)"
	    " VALUES ($1, $2, $3)";
	static const char sel[] =
	    "SELECT id, name, created_at FROM workspaces WHERE id = $1";
	char id[CM_UUID_LEN];
	int rc;

	if (!st_admin_name_ok(req->name)) {
		pr_rep_error(
		    rep, CM_E_INVALID_REQUEST, "name must be 1..255 bytes");
		return;
	}
	cm_uuid7(id);
	rc = st_db_run(ctx->db, ins, "ssi", id, req->name, ctx->now);
	if (rc == ST_CONSTRAINT) {
		pr_rep_error(rep, CM_E_CONFLICT, "a workspace has that name");
		return;
	}
	if (rc != ST_DONE) {
		st_db_failed(ctx, rep, "workspace create");
		return;
	}
	rep->created = true;
	st_admin_select_rows(ctx, rep, sel, id, workspace_row);
}

void
st_op_workspace_list(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char sql[] =
	    "SELECT id, name, created_at FROM workspaces "
	    "ORDER BY name LIMIT " CM_STR(CM_ADMIN_LIST_MAX);

	(void)req;
	st_admin_select_rows(ctx, rep, sql, NULL, workspace_row);
}

static void
principal_row(struct pr_rep *rep, struct st_stmt *s)
{
	struct pr_principal *p = ST_PUSH(rep, principals);

	if (p == NULL)
		return;
	p->principal_id = COL(0);
	p->kind = COL(1);
	p->name = COL(2);
	p->is_admin = st_col_int(s, 3) != 0;
	p->disabled = st_col_int(s, 4) != 0;
	p->created_at = st_col_int(s, 5);
}

#define PRINCIPAL_COLS "id, kind, name, is_admin, disabled, created_at"

void
st_op_principal_create(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char *const kinds[] = {"operator", "runtime_agent", NULL};
	static const char ins[] =
	    "INSERT INTO principals (id, kind, name, is_admin, created_at)"
	    " VALUES ($1, $2, $3, $4, $5)";
	static const char sel[] =
	    "SELECT " PRINCIPAL_COLS " FROM principals WHERE id = $1";
	char id[CM_UUID_LEN];

	if (!st_admin_one_of(req->kind, kinds) ||
	    !st_admin_name_ok(req->name)) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "kind must be operator or runtime_agent, name 1..255 "
		    "bytes");
		return;
	}
	cm_uuid7(id);
	if (st_db_run(ctx->db, ins, "sssbi", id, req->kind, req->name,
	        (int)req->is_admin, ctx->now) != ST_DONE) {
		st_db_failed(ctx, rep, "principal create");
		return;
	}
	rep->created = true;
	st_admin_select_rows(ctx, rep, sel, id, principal_row);
}

void
st_op_principal_list(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char sql[] =
	    "SELECT " PRINCIPAL_COLS
	    " FROM principals ORDER BY created_at LIMIT " CM_STR(
	        CM_ADMIN_LIST_MAX);

	(void)req;
	st_admin_select_rows(ctx, rep, sql, NULL, principal_row);
}

static void
token_row(struct pr_rep *rep, struct st_stmt *s)
{
	struct pr_token *t = ST_PUSH(rep, tokens);

	if (t == NULL)
		return;
	t->token_id = COL(0);
	t->principal_id = COL(1);
	t->label = COL(2);
	t->expires_at = st_col_int(s, 3);
	t->revoked_at = st_col_int(s, 4);
	t->created_at = st_col_int(s, 5);
}

#define TOKEN_SEL                                                            \
	"SELECT id, principal_id, label, expires_at, revoked_at, created_at" \
	" FROM api_tokens WHERE id = $1"

bool
st_admin_exists(struct st_ctx *ctx, const char *sql, const char *key)
{
	struct st_stmt *s;
	bool found;

	if (st_db_query(ctx->db, &s, sql, "s", key) != ST_OK)
		return false;
	found = st_stmt_step(s) == ST_ROW;
	st_stmt_done(s);
	return found;
}

static bool
hex64(const char *v)
{
	if (v == NULL || strlen(v) != 64)
		return false;
	for (; *v; v++)
		if (!((*v >= '0' && *v <= '9') || (*v >= 'a' && *v <= 'f')))
			return false;
	return true;
}

void
st_op_token_issue(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char has_principal[] =
	    "SELECT 1 FROM principals WHERE id = $1";
	static const char ins[] =
	    "INSERT INTO api_tokens"
	    " (id, principal_id, token_hash, label, expires_at, created_at)"
	    " VALUES ($1, $2, $3, $4, $5, $6)";
	static const char sel[] = TOKEN_SEL;
	char id[CM_UUID_LEN];
	int rc;

	if (!hex64(req->token_hash) || req->expires_at < 0) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "token_hash must be 64 lowercase hex digits");
		return;
	}
	if (!st_admin_exists(ctx, has_principal, req->principal_id)) {
		pr_rep_error(rep, CM_E_NOT_FOUND, "no such principal");
		return;
	}
	cm_uuid7(id);
	rc = st_db_run(ctx->db, ins, "ssssni", id, req->principal_id,
	    req->token_hash, req->label ? req->label : "", req->expires_at,
	    ctx->now);
	if (rc == ST_CONSTRAINT) {
		pr_rep_error(rep, CM_E_CONFLICT, "token hash already issued");
		return;
	}
	if (rc != ST_DONE) {
		st_db_failed(ctx, rep, "token issue");
		return;
	}
	rep->created = true;
	st_admin_select_rows(ctx, rep, sel, id, token_row);
}

void
st_op_token_revoke(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char upd[] = "UPDATE api_tokens SET revoked_at = $2"
	                          " WHERE id = $1 AND revoked_at IS NULL";
	static const char sel[] = TOKEN_SEL;

	/* A hold taken with the token ends with it. */
	if (st_db_run(ctx->db, upd, "si", req->token_id, ctx->now) != ST_DONE ||
	    st_hold_sweep(ctx, ST_HOLDS_OF_TOKEN, req->token_id, NULL,
	        "token_revoked") < 0) {
		st_db_failed(ctx, rep, "token revoke");
		return;
	}
	st_admin_select_rows(ctx, rep, sel, req->token_id, token_row);
	if (rep->err == CM_OK && rep->n_tokens == 0)
		pr_rep_error(rep, CM_E_NOT_FOUND, "no such token");
}

static void
membership_row(struct pr_rep *rep, struct st_stmt *s)
{
	struct pr_membership *m = ST_PUSH(rep, memberships);

	if (m == NULL)
		return;
	m->workspace_id = COL(0);
	m->principal_id = COL(1);
	m->role = COL(2);
	m->created_at = st_col_int(s, 3);
}

void
st_op_member_put(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char *const roles[] = {"member", "manager", NULL};
	static const char has_ws[] = "SELECT 1 FROM workspaces WHERE id = $1";
	static const char has_principal[] =
	    "SELECT 1 FROM principals WHERE id = $1";
	static const char put[] =
	    "INSERT INTO memberships (workspace_id, principal_id, role, "
	    "created_at)"
	    " VALUES ($1, $2, $3, $4) ON CONFLICT (workspace_id, principal_id)"
	    " DO UPDATE SET role = excluded.role";
	static const char sel[] =
	    "SELECT workspace_id, principal_id, role, created_at FROM "
	    "memberships"
	    " WHERE workspace_id = $1 AND principal_id = $2";
	struct st_stmt *s;

	if (!st_admin_one_of(req->role, roles)) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "role must be member or manager");
		return;
	}
	if (!st_admin_exists(ctx, has_ws, req->workspace_id) ||
	    !st_admin_exists(ctx, has_principal, req->principal_id)) {
		pr_rep_error(
		    rep, CM_E_NOT_FOUND, "no such workspace or principal");
		return;
	}
	if (st_db_run(ctx->db, put, "sssi", req->workspace_id,
	        req->principal_id, req->role, ctx->now) != ST_DONE) {
		st_db_failed(ctx, rep, "member put");
		return;
	}
	if (st_db_query(ctx->db, &s, sel, "ss", req->workspace_id,
	        req->principal_id) != ST_OK) {
		st_db_failed(ctx, rep, "member put");
		return;
	}
	if (st_stmt_step(s) == ST_ROW)
		membership_row(rep, s);
	st_stmt_done(s);
}

void
st_op_member_remove(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char del[] =
	    "DELETE FROM memberships"
	    " WHERE workspace_id = $1 AND principal_id = $2";

	if (st_db_run(ctx->db, del, "ss", req->workspace_id,
	        req->principal_id) != ST_DONE) {
		st_db_failed(ctx, rep, "member remove");
		return;
	}
	if (st_db_changes(ctx->db) == 0) {
		pr_rep_error(rep, CM_E_NOT_FOUND, "no such membership");
		return;
	}
	/* A member no longer holds the workspace's Spaces. */
	if (st_hold_sweep(ctx, ST_HOLDS_OF_MEMBER, req->principal_id,
	        req->workspace_id, "holder_removed") < 0)
		st_db_failed(ctx, rep, "member remove");
}
