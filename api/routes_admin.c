/*
 * routes_admin.c: provisioning under /api/v1/admin (workspaces,
 * principals, tokens, memberships, bundles, instances, bindings), for admin
 * principals only.  Each handler checks CM_ACT_ADMIN before it reads the
 * body, so a non-admin learns nothing from validation errors; the store
 * validates names, kinds, drivers, manifests and policies (the one copy of
 * those rules), this file only checks types and the wire bounds.
 *
 * Path ids are c->params[0] and c->params[1], in the order of the route.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "clock.h"
#include "status.h"
#include "token.h"

static struct pr_req
admin_req(enum pr_op op)
{
	struct pr_req q;

	memset(&q, 0, sizeof(q));
	q.op = op;
	return q;
}

bool
api_admin_allowed(struct api_ctx *c)
{
	const char *why = NULL;
	enum cm_err e =
	    cm_authz_check(&c->id, CM_ACT_ADMIN, NULL, NULL, NULL, NULL, &why);

	if (e == CM_OK)
		return true;
	api_fail(c, 0, e, why && *why ? why : NULL);
	return false;
}

/*
 * An object member, serialized compactly into *text (malloc'd; the caller
 * frees) when present; at most max bytes.  Answers 422 and returns false.
 */
static bool
body_object(struct api_ctx *c, json_t *o, const char *key, size_t max,
    bool required, char **text)
{
	json_t *v;
	char msg[128];
	int has = api_body_member(c, o, key, required, &v);

	*text = NULL;
	if (has <= 0)
		return has == 0;
	if (!json_is_object(v)) {
		snprintf(msg, sizeof(msg), "%s must be an object", key);
		api_fail(c, 0, CM_E_INVALID_REQUEST, msg);
		return false;
	}
	*text = json_dumps(v, JSON_COMPACT);
	if (*text == NULL || strlen(*text) > max) {
		free(*text);
		*text = NULL;
		snprintf(msg, sizeof(msg), "%s is over %zu bytes", key, max);
		api_fail(c, 0, CM_E_INVALID_REQUEST, msg);
		return false;
	}
	return true;
}

/* A body that must be empty or {}. */
static bool
body_none(struct api_ctx *c)
{
	json_t *body = api_body(c, (const char *const[]){NULL}, true);

	json_decref(body);
	return body != NULL;
}

/*
 * Calls the store and answers: the store's error, or status with what
 * build makes of the reply (NULL: the reply lacks its record, a bug).
 */
static void
answer(struct api_ctx *c, const struct pr_req *q, int status,
    json_t *(*build)(const struct pr_rep *, const struct pr_req *))
{
	struct pr_rep r;
	json_t *data;

	if (api_call(c, q, &r)) {
		if (r.err != CM_OK)
			api_fail_rep(c, &r);
		else if ((data = build(&r, q)) == NULL)
			api_fail(c, 0, CM_E_INTERNAL, "no record in the reply");
		else
			api_ok(c, status, data);
	}
	pr_rep_free(&r);
}

/* Reply builders: the one record of the reply, or its list. */

static json_t *
one_workspace(const struct pr_rep *r, const struct pr_req *q)
{
	(void)q;
	return r->n_workspaces ? api_dto_workspace(&r->workspaces[0]) : NULL;
}

static json_t *
one_principal(const struct pr_rep *r, const struct pr_req *q)
{
	(void)q;
	return r->n_principals ? api_dto_principal(&r->principals[0]) : NULL;
}

static json_t *
one_token(const struct pr_rep *r, const struct pr_req *q)
{
	(void)q;
	return r->n_tokens ? api_dto_token(&r->tokens[0], NULL) : NULL;
}

static json_t *
one_membership(const struct pr_rep *r, const struct pr_req *q)
{
	(void)q;
	return r->n_memberships ? api_dto_membership(&r->memberships[0]) : NULL;
}

static json_t *
one_bundle(const struct pr_rep *r, const struct pr_req *q)
{
	(void)q;
	return r->n_bundles ? api_dto_bundle(&r->bundles[0]) : NULL;
}

static json_t *
one_instance(const struct pr_rep *r, const struct pr_req *q)
{
	(void)q;
	return r->n_instances ? api_dto_instance_admin(&r->instances[0]) : NULL;
}

static json_t *
one_binding(const struct pr_rep *r, const struct pr_req *q)
{
	(void)q;
	return r->n_bindings ? api_dto_binding(&r->bindings[0]) : NULL;
}

static json_t *
all_workspaces(const struct pr_rep *r, const struct pr_req *q)
{
	(void)q;
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < r->n_workspaces; i++)
		json_array_append_new(a, api_dto_workspace(&r->workspaces[i]));
	return a;
}

static json_t *
all_principals(const struct pr_rep *r, const struct pr_req *q)
{
	(void)q;
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < r->n_principals; i++)
		json_array_append_new(a, api_dto_principal(&r->principals[i]));
	return a;
}

static json_t *
all_bundles(const struct pr_rep *r, const struct pr_req *q)
{
	(void)q;
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < r->n_bundles; i++)
		json_array_append_new(a, api_dto_bundle(&r->bundles[i]));
	return a;
}

static json_t *
all_instances(const struct pr_rep *r, const struct pr_req *q)
{
	(void)q;
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < r->n_instances; i++)
		json_array_append_new(
		    a, api_dto_instance_admin(&r->instances[i]));
	return a;
}

/* Deletes: the store answers with no record; the ids say what went. */

static json_t *
membership_removed(const struct pr_rep *r, const struct pr_req *q)
{
	(void)r;
	return api_dto_deleted(
	    "workspace_id", q->workspace_id, "principal_id", q->principal_id);
}

static json_t *
binding_deleted(const struct pr_rep *r, const struct pr_req *q)
{
	(void)r;
	return api_dto_deleted("binding_id", q->binding_id, NULL, NULL);
}

/* --- workspaces and principals ----------------------------------------- */

void
api_admin_workspace_create(struct api_ctx *c)
{
	static const char *const keys[] = {"name", NULL};
	struct pr_req q = admin_req(PR_OP_WORKSPACE_CREATE);
	json_t *body;

	if (!api_admin_allowed(c) || (body = api_body(c, keys, false)) == NULL)
		return;
	if (api_body_str(c, body, "name", CM_NAME_MAX, true, &q.name))
		answer(c, &q, 201, one_workspace);
	json_decref(body);
}

void
api_admin_workspace_list(struct api_ctx *c)
{
	struct pr_req q = admin_req(PR_OP_WORKSPACE_LIST);

	if (api_admin_allowed(c))
		answer(c, &q, 200, all_workspaces);
}

void
api_admin_principal_create(struct api_ctx *c)
{
	static const char *const keys[] = {"kind", "name", "is_admin", NULL};
	struct pr_req q = admin_req(PR_OP_PRINCIPAL_CREATE);
	json_t *body, *adm;

	if (!api_admin_allowed(c) || (body = api_body(c, keys, false)) == NULL)
		return;
	if (!api_body_str(c, body, "kind", 32, true, &q.kind) ||
	    !api_body_str(c, body, "name", CM_NAME_MAX, true, &q.name))
		goto out;
	adm = json_object_get(body, "is_admin");
	if (adm != NULL && !json_is_boolean(adm)) {
		api_fail(
		    c, 0, CM_E_INVALID_REQUEST, "is_admin must be a boolean");
		goto out;
	}
	q.is_admin = adm != NULL && json_is_true(adm);
	answer(c, &q, 201, one_principal);
out:
	json_decref(body);
}

void
api_admin_principal_list(struct api_ctx *c)
{
	struct pr_req q = admin_req(PR_OP_PRINCIPAL_LIST);

	if (api_admin_allowed(c))
		answer(c, &q, 200, all_principals);
}

/* --- tokens ------------------------------------------------------------- */

/*
 * The token is made here and only its hash leaves this process; the token
 * itself is in this one answer and nowhere else (no log, no store row).
 */
void
api_admin_token_issue(struct api_ctx *c)
{
	static const char *const keys[] = {"label", "expires_in_seconds", NULL};
	struct pr_req q = admin_req(PR_OP_TOKEN_ISSUE);
	char token[CM_TOKEN_LEN], hash[CM_TOKEN_HASH_LEN];
	struct pr_rep r;
	json_t *body, *exp;

	if (!api_admin_allowed(c) || (body = api_body(c, keys, true)) == NULL)
		return;
	if (!api_body_str(c, body, "label", CM_NAME_MAX, false, &q.label))
		goto out;
	exp = json_object_get(body, "expires_in_seconds");
	if (exp != NULL && !json_is_null(exp)) {
		if (!json_is_integer(exp) || json_integer_value(exp) < 1 ||
		    json_integer_value(exp) > CM_TOKEN_TTL_MAX_S) {
			api_fail(c, 0, CM_E_INVALID_REQUEST,
			    "expires_in_seconds must be a positive integer of "
			    "at most ten years");
			goto out;
		}
		q.expires_at =
		    cm_now_ms() + (int64_t)json_integer_value(exp) * 1000;
	}
	cm_token_new(token);
	if (cm_token_hash(token, strlen(token), hash) != 0) {
		api_fail(c, 0, CM_E_INTERNAL, "cannot hash the token");
		goto wipe;
	}
	q.principal_id = c->params[0];
	q.token_hash = hash;
	if (api_call(c, &q, &r)) {
		if (r.err != CM_OK)
			api_fail_rep(c, &r);
		else if (r.n_tokens != 1)
			api_fail(c, 0, CM_E_INTERNAL, "no token in the reply");
		else
			api_ok(c, 201, api_dto_token(&r.tokens[0], token));
	}
	pr_rep_free(&r);
wipe:
	/* The answer holds the only copy that must survive this call. */
	explicit_bzero(token, sizeof(token));
out:
	json_decref(body);
}

void
api_admin_token_revoke(struct api_ctx *c)
{
	struct pr_req q = admin_req(PR_OP_TOKEN_REVOKE);

	if (!api_admin_allowed(c) || !body_none(c))
		return;
	q.token_id = c->params[0];
	answer(c, &q, 200, one_token);
}

/* --- memberships -------------------------------------------------------- */

void
api_admin_member_put(struct api_ctx *c)
{
	static const char *const keys[] = {"role", NULL};
	struct pr_req q = admin_req(PR_OP_MEMBER_PUT);
	json_t *body;

	if (!api_admin_allowed(c) || (body = api_body(c, keys, false)) == NULL)
		return;
	q.workspace_id = c->params[0];
	q.principal_id = c->params[1];
	/* A PUT replaces the role; the store does not say whether it was new,
	 * so the answer is 200 either way. */
	if (api_body_str(c, body, "role", 32, true, &q.role))
		answer(c, &q, 200, one_membership);
	json_decref(body);
}

void
api_admin_member_remove(struct api_ctx *c)
{
	struct pr_req q = admin_req(PR_OP_MEMBER_REMOVE);

	if (!api_admin_allowed(c) || !body_none(c))
		return;
	q.workspace_id = c->params[0];
	q.principal_id = c->params[1];
	answer(c, &q, 200, membership_removed);
}

/* --- runtime bundles ---------------------------------------------------- */

void
api_admin_bundle_create(struct api_ctx *c)
{
	static const char *const keys[] = {"manifest", NULL};
	struct pr_req q = admin_req(PR_OP_BUNDLE_CREATE);
	char *manifest = NULL;
	json_t *body;

	if (!api_admin_allowed(c) || (body = api_body(c, keys, false)) == NULL)
		return;
	if (body_object(
	        c, body, "manifest", CM_MANIFEST_MAX, true, &manifest)) {
		q.manifest = manifest;
		answer(c, &q, 201, one_bundle);
	}
	free(manifest);
	json_decref(body);
}

void
api_admin_bundle_list(struct api_ctx *c)
{
	struct pr_req q = admin_req(PR_OP_BUNDLE_LIST);

	if (api_admin_allowed(c))
		answer(c, &q, 200, all_bundles);
}

/* --- browser instances -------------------------------------------------- */

/*
 * endpoint, config and profile are secrets: they go to the store and are
 * never echoed, in an answer or an error message.  The store judges
 * profile_mode and profile together (cm_profile_refusal).
 */
void
api_admin_instance_register(struct api_ctx *c)
{
	static const char *const keys[] = {"name", "driver", "bundle_id",
	    "endpoint", "config", "network_policy", "profile", "profile_mode",
	    "host", NULL};
	struct pr_req q = admin_req(PR_OP_INSTANCE_REGISTER);
	char *config = NULL, *policy = NULL;
	json_t *body;

	if (!api_admin_allowed(c) || (body = api_body(c, keys, false)) == NULL)
		return;
	if (!api_body_str(c, body, "name", CM_NAME_MAX, true, &q.name) ||
	    !api_body_str(c, body, "driver", 32, true, &q.driver) ||
	    !api_body_str(
	        c, body, "bundle_id", CM_ID_MAX, true, &q.bundle_id) ||
	    !api_body_str(
	        c, body, "endpoint", CM_ENDPOINT_MAX, false, &q.endpoint) ||
	    !api_body_str(
	        c, body, "profile", CM_PROFILE_MAX, false, &q.profile) ||
	    !api_body_str(
	        c, body, "profile_mode", 32, false, &q.profile_mode) ||
	    !api_body_str(c, body, "host", CM_HOST_MAX, false, &q.host) ||
	    !body_object(
	        c, body, "config", CM_INSTANCE_CONFIG_MAX, false, &config) ||
	    !body_object(
	        c, body, "network_policy", CM_POLICY_MAX, false, &policy))
		goto out;
	/* An instance no actor would ever drive is refused up front. */
	if (cm_driver_parse(q.driver) == CM_DRIVER_FAKE &&
	    !c->cfg->allow_fake_driver) {
		api_fail(c, 0, CM_E_INVALID_REQUEST,
		    "the fake driver is off (allow_fake_driver = false)");
		goto out;
	}
	q.config = config;
	q.network_policy = policy;
	answer(c, &q, 201, one_instance);
out:
	free(config);
	free(policy);
	json_decref(body);
}

void
api_admin_instance_list(struct api_ctx *c)
{
	struct pr_req q = admin_req(PR_OP_INSTANCE_LIST);

	if (api_admin_allowed(c))
		answer(c, &q, 200, all_instances);
}

static void
instance_set_status(struct api_ctx *c, const char *status)
{
	struct pr_req q = admin_req(PR_OP_INSTANCE_SET_STATUS);

	if (!api_admin_allowed(c) || !body_none(c))
		return;
	q.browser_instance_id = c->params[0];
	q.status = status;
	answer(c, &q, 200, one_instance);
}

void
api_admin_instance_disable(struct api_ctx *c)
{
	instance_set_status(c, cm_instance_status_name(CM_INSTANCE_DISABLED));
}

void
api_admin_instance_enable(struct api_ctx *c)
{
	instance_set_status(c, cm_instance_status_name(CM_INSTANCE_READY));
}

/* --- bindings ----------------------------------------------------------- */

void
api_admin_binding_create(struct api_ctx *c)
{
	static const char *const keys[] = {
	    "workspace_id", "browser_instance_id", NULL};
	struct pr_req q = admin_req(PR_OP_BINDING_CREATE);
	json_t *body;

	if (!api_admin_allowed(c) || (body = api_body(c, keys, false)) == NULL)
		return;
	if (api_body_str(
	        c, body, "workspace_id", CM_ID_MAX, true, &q.workspace_id) &&
	    api_body_str(c, body, "browser_instance_id", CM_ID_MAX, true,
	        &q.browser_instance_id))
		answer(c, &q, 201, one_binding);
	json_decref(body);
}

void
api_admin_binding_delete(struct api_ctx *c)
{
	struct pr_req q = admin_req(PR_OP_BINDING_DELETE);

	if (!api_admin_allowed(c) || !body_none(c))
		return;
	q.binding_id = c->params[0];
	answer(c, &q, 200, binding_deleted);
}
