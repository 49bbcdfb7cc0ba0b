/*
 * ops_runtime.c: provisioning of the runtime catalogue: bundles (parsed
 * and checked manifests), runtime instances (the browser endpoints a
 * Space runs on, with their network policy and status) and bindings of
 * bundles to instances.
 */
#include <stdio.h>
#include <string.h>

#include "capability.h"
#include "cdp_endpoint.h"
#include "ids.h"
#include "json.h"
#include "ops.h"
#include "reply.h"

/* Reads a column, copies it into the reply. */
#define COL(i) pr_rep_strdup(rep, st_col_text(s, (i)))

static void
bundle_row(struct pr_rep *rep, struct st_stmt *s)
{
	struct pr_bundle *b = ST_PUSH(rep, bundles);

	if (b == NULL)
		return;
	b->bundle_id = COL(0);
	b->name = COL(1);
	b->version = COL(2);
	b->manifest = COL(3);
	b->created_at = st_col_int(s, 4);
}

#define BUNDLE_COLS "id, name, version, manifest, created_at"

void
st_op_bundle_create(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char ins[] = "INSERT INTO runtime_bundles"
	                          " (id, name, version, manifest, created_at)"
	                          " VALUES ($1, $2, $3, $4, $5)";
	static const char sel[] =
	    "SELECT " BUNDLE_COLS " FROM runtime_bundles WHERE id = $1";
	struct cm_bundle *b;
	char id[CM_UUID_LEN];
	char err[256];
	int rc;

	/* The one validator decides what a manifest may say. */
	if (cm_bundle_parse(req->manifest, strlen(req->manifest), &b, err,
	        sizeof(err)) != 0) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST, "manifest: %s", err);
		return;
	}
	cm_uuid7(id);
	rc = st_db_run(ctx->db, ins, "ssssi", id, b->name, b->version,
	    req->manifest, ctx->now);
	cm_bundle_free(b);
	if (rc == ST_CONSTRAINT) {
		pr_rep_error(rep, CM_E_CONFLICT,
		    "a bundle with that name and version exists");
		return;
	}
	if (rc != ST_DONE) {
		st_db_failed(ctx, rep, "bundle create");
		return;
	}
	rep->created = true;
	st_admin_select_rows(ctx, rep, sel, id, bundle_row);
}

void
st_op_bundle_list(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char sql[] =
	    "SELECT " BUNDLE_COLS " FROM runtime_bundles"
	    " ORDER BY name, version LIMIT " CM_STR(CM_ADMIN_LIST_MAX);

	(void)req;
	st_admin_select_rows(ctx, rep, sql, NULL, bundle_row);
}

/* The public columns only: the secret ones never reach this reader. */
#define INSTANCE_COLS                                                    \
	"i.id, i.name, i.driver, i.profile_mode, i.bundle_id, "          \
	"i.network_policy,"                                              \
	" i.status, i.host, EXISTS (SELECT 1 FROM browser_spaces s"      \
	" WHERE s.browser_instance_id = i.id AND s.status <> 'closed')," \
	" i.created_at, i.updated_at"

static void
instance_row(struct pr_rep *rep, struct st_stmt *s)
{
	struct pr_instance *in = ST_PUSH(rep, instances);

	if (in == NULL)
		return;
	in->browser_instance_id = COL(0);
	in->name = COL(1);
	in->driver = COL(2);
	in->profile_mode = COL(3);
	in->bundle_id = COL(4);
	in->network_policy = COL(5);
	in->status = COL(6);
	in->host = COL(7);
	in->in_use = st_col_int(s, 8) != 0;
	in->created_at = st_col_int(s, 9);
	in->updated_at = st_col_int(s, 10);
}

void
st_op_instance_register(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	const enum cm_driver driver = cm_driver_parse(req->driver);
	static const char has_bundle[] =
	    "SELECT 1 FROM runtime_bundles WHERE id = $1";
	static const char ins[] =
	    "INSERT INTO browser_instances (id, name, driver, endpoint, config,"
	    " profile, profile_mode, bundle_id, network_policy, status, host,"
	    " created_at, updated_at)"
	    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'ready', $10, $11, "
	    "$11)";
	static const char sel[] =
	    "SELECT " INSTANCE_COLS " FROM browser_instances i WHERE i.id = $1";
	const char *config = req->config ? req->config : "{}";
	const char *policy = req->network_policy ? req->network_policy : "{}";
	const char *profile = req->profile ? req->profile : "";
	const enum cm_profile_mode mode =
	    req->profile_mode ? cm_profile_mode_parse(req->profile_mode)
	                      : CM_PROFILE_EPHEMERAL;
	const char *bad_profile = cm_profile_refusal(mode, profile);
	const char *host = req->host ? req->host : ctx->opts->host_id;
	struct cm_cdpep ep;
	struct cm_policy pol;
	json_t *cfg = NULL;
	char id[CM_UUID_LEN];
	char err[256];
	int rc;

	if (!st_admin_name_ok(req->name) || driver == CM_DRIVER__COUNT) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "name must be 1..255 bytes, driver managed, cdp or fake");
		return;
	}
	if (bad_profile != NULL) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST, "%s", bad_profile);
		return;
	}
	if (driver == CM_DRIVER_CDP &&
	    (req->endpoint == NULL || req->endpoint[0] == '\0')) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "a cdp instance needs an "
		    "endpoint");
		return;
	}
	/* The forms the cdp driver and the probe know (the message names
	 * them, never the endpoint: it is a secret). */
	if (driver == CM_DRIVER_CDP &&
	    cm_cdpep_parse(req->endpoint, &ep) != 0) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "a cdp endpoint is http(s)://host:port or "
		    "ws(s)://host:port/path");
		return;
	}
	if (cm_json_parse(config, strlen(config), CM_INSTANCE_CONFIG_MAX,
	        CM_JSON_DEPTH_MAX, &cfg, err, sizeof(err)) != 0 ||
	    !json_is_object(cfg)) {
		json_decref(cfg);
		pr_rep_error(
		    rep, CM_E_INVALID_REQUEST, "config must be an object");
		return;
	}
	json_decref(cfg);
	if (cm_policy_parse(policy, strlen(policy), &pol, err, sizeof(err)) !=
	    0) {
		pr_rep_error(
		    rep, CM_E_INVALID_REQUEST, "network_policy: %s", err);
		return;
	}
	if (host == NULL || host[0] == '\0') {
		pr_rep_error(rep, CM_E_INVALID_REQUEST, "host is required");
		return;
	}
	if (!st_admin_exists(ctx, has_bundle, req->bundle_id)) {
		pr_rep_error(rep, CM_E_NOT_FOUND, "no such runtime bundle");
		return;
	}
	cm_uuid7(id);
	rc = st_db_run(ctx->db, ins, "ssssssssssi", id, req->name, req->driver,
	    req->endpoint ? req->endpoint : "", config, profile,
	    cm_profile_mode_name(mode), req->bundle_id, policy, host, ctx->now);
	if (rc == ST_CONSTRAINT) {
		pr_rep_error(rep, CM_E_CONFLICT, "an instance has that name");
		return;
	}
	if (rc != ST_DONE) {
		st_db_failed(ctx, rep, "instance register");
		return;
	}
	rep->created = true;
	st_admin_select_rows(ctx, rep, sel, id, instance_row);
}

void
st_op_instance_list(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char all[] =
	    "SELECT " INSTANCE_COLS " FROM browser_instances i ORDER BY i.name"
	    " LIMIT " CM_STR(CM_ADMIN_LIST_MAX);
	static const char bound[] =
	    "SELECT " INSTANCE_COLS " FROM browser_instances i"
	    " JOIN browser_bindings b ON b.browser_instance_id = i.id"
	    " WHERE b.workspace_id = $1 ORDER BY i.name LIMIT " CM_STR(
	        CM_ADMIN_LIST_MAX);

	if (req->workspace_id)
		st_admin_select_rows(
		    ctx, rep, bound, req->workspace_id, instance_row);
	else
		st_admin_select_rows(ctx, rep, all, NULL, instance_row);
}

void
st_op_instance_set_status(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	/* With if_status, only from that status: the probe's write never
	 * undoes an operator's disable that came after its read. */
	static const char upd[] =
	    "UPDATE browser_instances SET status = $2,"
	    " updated_at = $3 WHERE id = $1"
	    " AND (CAST($4 AS TEXT) IS NULL OR status = $4)";
	static const char has_instance[] =
	    "SELECT 1 FROM browser_instances WHERE id = $1";
	static const char sel[] =
	    "SELECT " INSTANCE_COLS " FROM browser_instances i WHERE i.id = $1";

	if (cm_instance_status_parse(req->status) ==
	    CM_INSTANCE_STATUS__COUNT) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "status must be ready, unavailable or disabled");
		return;
	}
	if (st_db_run(ctx->db, upd, "ssis", req->browser_instance_id,
	        req->status, ctx->now, req->if_status) != ST_DONE) {
		st_db_failed(ctx, rep, "instance status");
		return;
	}
	if (st_db_changes(ctx->db) == 0) {
		if (req->if_status != NULL && st_admin_exists(ctx, has_instance,
		                                  req->browser_instance_id))
			pr_rep_error(rep, CM_E_CONFLICT,
			    "the instance's status is no longer %s",
			    req->if_status);
		else
			pr_rep_error(
			    rep, CM_E_NOT_FOUND, "no such browser instance");
		return;
	}
	st_admin_select_rows(
	    ctx, rep, sel, req->browser_instance_id, instance_row);
}

static void
binding_row(struct pr_rep *rep, struct st_stmt *s)
{
	struct pr_binding *b = ST_PUSH(rep, bindings);

	if (b == NULL)
		return;
	b->binding_id = COL(0);
	b->workspace_id = COL(1);
	b->browser_instance_id = COL(2);
	b->created_at = st_col_int(s, 3);
}

void
st_op_binding_create(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char has_ws[] = "SELECT 1 FROM workspaces WHERE id = $1";
	static const char has_instance[] =
	    "SELECT 1 FROM browser_instances WHERE id = $1";
	static const char ins[] =
	    "INSERT INTO browser_bindings"
	    " (id, workspace_id, browser_instance_id, created_at)"
	    " VALUES ($1, $2, $3, $4)";
	static const char sel[] =
	    "SELECT id, workspace_id, browser_instance_id,"
	    " created_at FROM browser_bindings WHERE id = $1";
	char id[CM_UUID_LEN];
	int rc;

	if (!st_admin_exists(ctx, has_ws, req->workspace_id) ||
	    !st_admin_exists(ctx, has_instance, req->browser_instance_id)) {
		pr_rep_error(
		    rep, CM_E_NOT_FOUND, "no such workspace or instance");
		return;
	}
	cm_uuid7(id);
	rc = st_db_run(ctx->db, ins, "sssi", id, req->workspace_id,
	    req->browser_instance_id, ctx->now);
	if (rc == ST_CONSTRAINT) {
		pr_rep_error(rep, CM_E_CONFLICT,
		    "the instance is already bound to the workspace");
		return;
	}
	if (rc != ST_DONE) {
		st_db_failed(ctx, rep, "binding create");
		return;
	}
	rep->created = true;
	st_admin_select_rows(ctx, rep, sel, id, binding_row);
}

void
st_op_binding_delete(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	static const char in_use[] =
	    "SELECT 1 FROM browser_bindings b JOIN browser_spaces s"
	    " ON s.workspace_id = b.workspace_id"
	    " AND s.browser_instance_id = b.browser_instance_id"
	    " WHERE b.id = $1 AND s.status <> 'closed'";
	static const char del[] = "DELETE FROM browser_bindings WHERE id = $1";

	/* An open Space keeps its instance bound until it is closed. */
	if (st_admin_exists(ctx, in_use, req->binding_id)) {
		pr_rep_error(rep, CM_E_CONFLICT,
		    "an open browser space uses this binding");
		return;
	}
	if (st_db_run(ctx->db, del, "s", req->binding_id) != ST_DONE) {
		st_db_failed(ctx, rep, "binding delete");
		return;
	}
	if (st_db_changes(ctx->db) == 0)
		pr_rep_error(rep, CM_E_NOT_FOUND, "no such binding");
}
