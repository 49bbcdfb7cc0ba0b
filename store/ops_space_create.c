/*
 * ops_space_create.c: space.create, from the request's checks to the new
 * Space's row and its space_opened event.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundles.h"
#include "events.h"
#include "ids.h"
#include "json.h"
#include "ops.h"
#include "reply.h"
#include "rows.h"

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
	char *out;

	/* Only when given: a create without one stands for what it did. */
	if (o != NULL && req->dialog_policy != NULL)
		json_object_set_new(
		    o, "dialog_policy", json_string(req->dialog_policy));
	out = cm_json_canonical(o);

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

/* The request's own fields, before any read. */
static bool
create_request_ok(const struct pr_req *req, struct pr_rep *rep)
{
	if (strcmp(req->owner_type, "operator") != 0 &&
	    strcmp(req->owner_type, "runtime_agent") != 0) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "owner_type must be operator or runtime_agent");
		return false;
	}
	for (size_t i = 0; i < req->granted.n; i++) {
		if (req->granted.v[i][0] == '\0') {
			pr_rep_error(rep, CM_E_INVALID_REQUEST,
			    "granted_capabilities holds an empty name");
			return false;
		}
	}
	return true;
}

/* What a Space is created on: its instance's binding, bundle and host. */
struct create_on {
	char binding_id[CM_ID_MAX + 1];
	char bundle_id[CM_ID_MAX + 1];
	char host[CM_HOST_MAX + 1];
};

/*
 * Reads the binding of the request's instance to its workspace (and
 * binding_id, when given, must name it): otherwise the instance is
 * foreign.  Returns true with *on filled; false with rep set.
 */
static bool
create_binding(struct st_ctx *ctx, const struct pr_req *req,
    struct create_on *on, struct pr_rep *rep)
{
	static const char binding_sql[] =
	    "SELECT b.id, i.bundle_id, i.host FROM browser_bindings b"
	    " JOIN browser_instances i ON i.id = b.browser_instance_id"
	    " WHERE b.workspace_id = $1 AND b.browser_instance_id = $2";
	struct st_stmt *s;
	int rc;

	on->host[0] = '\0';
	if (st_db_query(ctx->db, &s, binding_sql, "ss", req->workspace_id,
	        req->browser_instance_id) != ST_OK) {
		st_db_failed(ctx, rep, "space create");
		return false;
	}
	rc = st_stmt_step(s);
	if (rc == ST_ROW) {
		snprintf(on->binding_id, sizeof(on->binding_id), "%s",
		    st_col_text(s, 0));
		snprintf(on->bundle_id, sizeof(on->bundle_id), "%s",
		    st_col_text(s, 1));
		snprintf(on->host, sizeof(on->host), "%s", st_col_text(s, 2));
	}
	st_stmt_done(s);
	if (rc != ST_ROW || (req->binding_id != NULL &&
	                        strcmp(req->binding_id, on->binding_id) != 0)) {
		pr_rep_error(
		    rep, CM_E_NOT_FOUND, "no such browser instance or binding");
		return false;
	}
	return true;
}

/* Whether the owner is a principal of that kind, an enabled member of
 * the workspace; false with rep set. */
static bool
create_owner_ok(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char owner_sql[] =
	    "SELECT p.kind, p.disabled FROM principals p JOIN memberships m"
	    " ON m.principal_id = p.id WHERE p.id = $1 AND m.workspace_id = $2";
	struct st_stmt *s;
	bool owner_ok;

	if (st_db_query(ctx->db, &s, owner_sql, "ss", req->owner_id,
	        req->workspace_id) != ST_OK) {
		st_db_failed(ctx, rep, "space create");
		return false;
	}
	owner_ok = st_stmt_step(s) == ST_ROW &&
	           strcmp(st_col_text(s, 0), req->owner_type) == 0 &&
	           st_col_int(s, 1) == 0;
	st_stmt_done(s);
	if (!owner_ok)
		pr_rep_error(rep, CM_E_FORBIDDEN,
		    "owner_id is not a %s of this workspace", req->owner_type);
	return owner_ok;
}

/*
 * Whether the workspace may open one more Space on the instance: the
 * instance is not reserved by another, and the workspace is under its
 * quota of active Spaces.  False with rep set.
 */
static bool
create_room(struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char lock_ws_sql[] =
	    "SELECT 1 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE";
	static const char active_sql[] =
	    "SELECT count(*) FROM browser_spaces"
	    " WHERE workspace_id = $1 AND status <> 'closed'";
	static const char in_use_sql[] =
	    "SELECT 1 FROM browser_spaces"
	    " WHERE browser_instance_id = $1 AND status <> 'closed'";
	struct st_stmt *s;
	int64_t active;
	int rc;

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
		return false;
	}
	if (st_db_query(ctx->db, &s, in_use_sql, "s",
	        req->browser_instance_id) != ST_OK) {
		st_db_failed(ctx, rep, "space create");
		return false;
	}
	rc = st_stmt_step(s);
	st_stmt_done(s);
	if (rc == ST_ROW) {
		pr_rep_error(rep, CM_E_INSTANCE_IN_USE,
		    "the browser instance is reserved by another space");
		return false;
	}
	if (st_db_query(ctx->db, &s, active_sql, "s", req->workspace_id) !=
	        ST_OK ||
	    st_stmt_step(s) != ST_ROW) {
		st_stmt_done(s);
		st_db_failed(ctx, rep, "space create");
		return false;
	}
	active = st_col_int(s, 0);
	st_stmt_done(s);
	if (active >= ctx->opts->max_spaces_per_workspace) {
		pr_rep_error(rep, CM_E_QUOTA_EXCEEDED,
		    "the workspace has %lld active spaces", (long long)active);
		return false;
	}
	return true;
}

/*
 * Inserts the Space id, idle, with its granted list (JSON text) and the
 * digest its request_id stands for, and appends its space_opened event.
 * Returns true; false with rep set.
 */
static bool
create_insert(struct st_ctx *ctx, const struct pr_req *req, const char *id,
    const struct create_on *on, const char *granted, const char *digest,
    struct pr_rep *rep)
{
	static const char ins[] =
	    "INSERT INTO browser_spaces (id, workspace_id, browser_instance_id,"
	    " binding_id, owner_type, owner_id, status, granted_capabilities,"
	    " request_id, request_digest, created_at, updated_at,"
	    " dialog_policy)"
	    " VALUES ($1, $2, $3, $4, $5, $6, 'idle', $7, $8, $9, $10, $10,"
	    " $11)";
	char *payload;
	int rc;

	rc = st_db_run(ctx->db, ins, "sssssssssis", id, req->workspace_id,
	    req->browser_instance_id, on->binding_id, req->owner_type,
	    req->owner_id, granted, req->request_id,
	    req->request_id ? digest : NULL, ctx->now, req->dialog_policy);
	if (rc == ST_CONSTRAINT) {
		/* The partial unique index: the backstop of the check above. */
		pr_rep_error(rep, CM_E_INSTANCE_IN_USE,
		    "the browser instance is reserved by another space");
		return false;
	}
	if (rc != ST_DONE) {
		st_db_failed(ctx, rep, "space create");
		return false;
	}
	payload = st_payload("{s:s, s:s, s:s}", "browser_instance_id",
	    req->browser_instance_id, "owner_type", req->owner_type, "owner_id",
	    req->owner_id);
	/* The host goes with the notice: only its supervisor starts the
	 * Space's actor, whichever host's api created it. */
	rc = st_event_opened(ctx, req->workspace_id, id, payload, on->host);
	free(payload);
	if (rc != 0) {
		st_db_failed(ctx, rep, "space create");
		return false;
	}
	return true;
}

void
st_op_space_create(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	const struct cm_bundle *bundle;
	struct create_on on;
	char id[CM_UUID_LEN];
	char *granted = NULL, *digest = NULL;

	if (!create_request_ok(req, rep) ||
	    !create_binding(ctx, req, &on, rep) ||
	    !create_owner_ok(ctx, req, rep))
		return;
	if ((bundle = st_bundle_get(ctx, on.bundle_id)) == NULL) {
		pr_rep_error(
		    rep, CM_E_INTERNAL, "the instance's bundle is unusable");
		return;
	}
	if ((granted = granted_json(ctx, req, bundle, rep)) == NULL)
		return;
	if ((digest = create_digest(req, on.binding_id, granted)) == NULL) {
		pr_rep_error(rep, CM_E_INTERNAL, "out of memory");
		goto out;
	}
	if (create_repeat(ctx, req, digest, rep) != 0 ||
	    !create_room(ctx, req, rep))
		goto out;
	cm_uuid7(id);
	if (create_insert(ctx, req, id, &on, granted, digest, rep) &&
	    st_load_space(ctx, rep, req->workspace_id, id) == 1)
		rep->created = true;
out:
	free(digest);
	free(granted);
}
