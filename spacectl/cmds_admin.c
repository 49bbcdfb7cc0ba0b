/*
 * cmds_admin.c: provisioning under /api/v1/admin (an admin token):
 * workspaces, principals, tokens, members, runtime bundles, browser
 * instances, bindings.  The api validates every value; this file only
 * builds bodies and paths.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "json.h"

#define AD "/api/v1/admin"
#define PATH_LEN (CM_URL_MAX + 1)

static const char *const ws_cols[] = {
    "workspace_id", "name", "created_at", NULL};
static const char *const principal_cols[] = {
    "principal_id", "kind", "name", "is_admin", "disabled", NULL};
const char *const ctl_bundle_cols[] = {
    "bundle_id", "name", "version", "created_at", NULL};
static const char *const instance_cols[] = {"browser_instance_id", "name",
    "driver", "status", "in_use", "host", "bundle_id", NULL};

/* fmt with each '%' replaced by id1, then id2, escaped. */
static bool
admin_path(char *out, const char *fmt, const char *id1, const char *id2)
{
	const char *ids[2] = {id1, id2};

	if (ctl_path(out, PATH_LEN, fmt, ids, 2))
		return true;
	ctl_usage("an id is too long");
	return false;
}

/* A whole file (at most max bytes) into *out, a malloc'd string of *len
 * bytes.  An exit code: a usage error (unreadable, too long) or an
 * internal failure (out of memory), with its message. */
static int
read_file(const char *file, size_t max, char **out, size_t *len)
{
	FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "re");
	char *buf;

	*out = NULL;
	if (f == NULL)
		return ctl_usage("%s cannot be read", file);
	if ((buf = malloc(max + 2)) == NULL) {
		if (f != stdin)
			fclose(f);
		return ctl_internal("out of memory");
	}
	*len = fread(buf, 1, max + 1, f);
	if (f != stdin)
		fclose(f);
	if (*len > max) {
		free(buf);
		return ctl_usage("%s is over %zu bytes", file, max);
	}
	buf[*len] = '\0';
	*out = buf;
	return CTL_EXIT_OK;
}

static int
workspaces_list(struct ctl *c)
{
	return ctl_call_show(c, "GET", AD "/workspaces", NULL, ws_cols);
}

static int
workspaces_create(struct ctl *c)
{
	return ctl_call_show(c, "POST", AD "/workspaces",
	    json_pack("{s:s}", "name", c->arg[0]), ws_cols);
}

static int
principals_list(struct ctl *c)
{
	return ctl_call_show(c, "GET", AD "/principals", NULL, principal_cols);
}

static int
principals_create(struct ctl *c)
{
	return ctl_call_show(c, "POST", AD "/principals",
	    json_pack("{s:s, s:s, s:b}", "kind", c->arg[0], "name", c->arg[1],
	        "is_admin", c->opt[CTL_O_ADMIN] != NULL),
	    principal_cols);
}

static int
tokens_issue(struct ctl *c)
{
	char path[PATH_LEN];
	json_t *body;
	long long ttl = ctl_opt_int(c, CTL_O_EXPIRES_IN, 0);

	if (!admin_path(path, AD "/principals/%/tokens", c->arg[0], NULL))
		return CTL_EXIT_USAGE;
	body = json_object();
	if (c->opt[CTL_O_LABEL] != NULL)
		ctl_set(&body, "label", json_string(c->opt[CTL_O_LABEL]));
	if (ttl > 0)
		ctl_set(&body, "expires_in_seconds", json_integer(ttl));
	/* The new token is printed once, as the api shows it once: it is
	 * what the caller asked for. */
	return ctl_call_show(c, "POST", path, body, NULL);
}

static int
tokens_revoke(struct ctl *c)
{
	char path[PATH_LEN];

	if (!admin_path(path, AD "/tokens/%", c->arg[0], NULL))
		return CTL_EXIT_USAGE;
	return ctl_call_show(c, "DELETE", path, NULL, NULL);
}

static int
members_put(struct ctl *c)
{
	char path[PATH_LEN];

	if (!admin_path(
	        path, AD "/workspaces/%/members/%", c->arg[0], c->arg[1]))
		return CTL_EXIT_USAGE;
	return ctl_call_show(
	    c, "PUT", path, json_pack("{s:s}", "role", c->arg[2]), NULL);
}

static int
members_remove(struct ctl *c)
{
	char path[PATH_LEN];

	if (!admin_path(
	        path, AD "/workspaces/%/members/%", c->arg[0], c->arg[1]))
		return CTL_EXIT_USAGE;
	return ctl_call_show(c, "DELETE", path, NULL, NULL);
}

static int
bundles_list(struct ctl *c)
{
	return ctl_call_show(
	    c, "GET", AD "/runtime-bundles", NULL, ctl_bundle_cols);
}

static int
bundles_create(struct ctl *c)
{
	char err[128], *text;
	json_t *manifest = NULL;
	size_t len;
	int rc;

	if ((rc = read_file(c->arg[0], CM_MANIFEST_MAX, &text, &len)) != 0)
		return rc;
	if (cm_json_parse(text, len, CM_MANIFEST_MAX, CM_JSON_DEPTH_MAX,
	        &manifest, err, sizeof(err)) != 0 ||
	    !json_is_object(manifest)) {
		free(text);
		json_decref(manifest);
		return ctl_usage("%s: not a JSON object (%s)", c->arg[0], err);
	}
	free(text);
	return ctl_call_show(c, "POST", AD "/runtime-bundles",
	    json_pack("{s:o}", "manifest", manifest), ctl_bundle_cols);
}

static int
instances_list(struct ctl *c)
{
	return ctl_call_show(
	    c, "GET", AD "/browser-instances", NULL, instance_cols);
}

static int
instances_register(struct ctl *c)
{
	json_t *body;
	char *endpoint;
	size_t len;
	int rc;

	body = json_pack("{s:s, s:s, s:s}", "name", c->arg[0], "driver",
	    c->opt[CTL_O_DRIVER], "bundle_id", c->opt[CTL_O_BUNDLE]);
	if (c->opt[CTL_O_INSTANCE_CONFIG] != NULL)
		ctl_set(&body, "config", ctl_opt_obj(c, CTL_O_INSTANCE_CONFIG));
	if (c->opt[CTL_O_POLICY] != NULL)
		ctl_set(&body, "network_policy", ctl_opt_obj(c, CTL_O_POLICY));
	if (c->opt[CTL_O_PROFILE] != NULL)
		ctl_set(&body, "profile", json_string(c->opt[CTL_O_PROFILE]));
	if (c->opt[CTL_O_HOST] != NULL)
		ctl_set(&body, "host", json_string(c->opt[CTL_O_HOST]));
	if (c->opt[CTL_O_ENDPOINT_FILE] != NULL) {
		const char *file = c->opt[CTL_O_ENDPOINT_FILE];

		if ((rc = read_file(file, CM_ENDPOINT_MAX, &endpoint, &len)) !=
		    0) {
			json_decref(body);
			return rc;
		}
		while (len > 0 &&
		       (endpoint[len - 1] == '\n' || endpoint[len - 1] == '\r'))
			endpoint[--len] = '\0';
		if (strlen(endpoint) != len || !ctl_utf8(endpoint, len))
			rc = ctl_usage("%s is not UTF-8 text", file);
		else
			ctl_set(&body, "endpoint", json_string(endpoint));
		explicit_bzero(endpoint, len);
		free(endpoint);
		if (rc != 0) {
			json_decref(body);
			return rc;
		}
	}
	return ctl_call_show(
	    c, "POST", AD "/browser-instances", body, instance_cols);
}

static int
instance_switch(struct ctl *c, const char *fmt)
{
	char path[PATH_LEN];

	if (!admin_path(path, fmt, c->arg[0], NULL))
		return CTL_EXIT_USAGE;
	return ctl_call_show(c, "POST", path, json_object(), instance_cols);
}

static int
instances_disable(struct ctl *c)
{
	return instance_switch(c, AD "/browser-instances/%/disable");
}

static int
instances_enable(struct ctl *c)
{
	return instance_switch(c, AD "/browser-instances/%/enable");
}

static int
bindings_create(struct ctl *c)
{
	return ctl_call_show(c, "POST", AD "/bindings",
	    json_pack("{s:s, s:s}", "workspace_id", c->arg[0],
	        "browser_instance_id", c->arg[1]),
	    NULL);
}

static int
bindings_delete(struct ctl *c)
{
	char path[PATH_LEN];

	if (!admin_path(path, AD "/bindings/%", c->arg[0], NULL))
		return CTL_EXIT_USAGE;
	return ctl_call_show(c, "DELETE", path, NULL, NULL);
}

#define B(o) CTL_BIT(o)
const struct ctl_cmd ctl_admin_cmds[] = {
    {"workspaces", "list", "", 0, 0, workspaces_list,
        "Every workspace (admin).", 0, "GET /api/v1/admin/workspaces"},
    {"workspaces", "create", "NAME", 1, 0, workspaces_create,
        "Create a workspace (admin).", 0, "POST /api/v1/admin/workspaces"},
    {"principals", "list", "", 0, 0, principals_list,
        "Every principal (admin).", 0, "GET /api/v1/admin/principals"},
    {"principals", "create", "KIND NAME", 2, B(ADMIN), principals_create,
        "Create a principal of KIND operator or runtime_agent (admin).", 0,
        "POST /api/v1/admin/principals"},
    {"tokens", "issue", "PRINCIPAL", 1, B(LABEL) | B(EXPIRES_IN), tokens_issue,
        "Issue a token for a principal (admin).  The token is shown once.", 0,
        "POST /api/v1/admin/principals/{principal_id}/tokens"},
    {"tokens", "revoke", "TOKEN_ID", 1, 0, tokens_revoke,
        "Revoke a token by its id (admin).", 0,
        "DELETE /api/v1/admin/tokens/{token_id}"},
    {"members", "put", "WORKSPACE PRINCIPAL ROLE", 3, 0, members_put,
        "Add a principal to a workspace id as member or manager, or change "
        "its role (admin).",
        0,
        "PUT /api/v1/admin/workspaces/{workspace_id}/members/{principal_id}"},
    {"members", "remove", "WORKSPACE PRINCIPAL", 2, 0, members_remove,
        "Remove a principal from a workspace (admin).", 0,
        "DELETE "
        "/api/v1/admin/workspaces/{workspace_id}/members/{principal_id}"},
    {"bundles", "list", "", 0, 0, bundles_list, "Every runtime bundle (admin).",
        0, "GET /api/v1/admin/runtime-bundles"},
    {"bundles", "create", "MANIFEST_FILE", 1, 0, bundles_create,
        "Register a runtime bundle from its manifest, a JSON file ('-': "
        "standard input) (admin).",
        0, "POST /api/v1/admin/runtime-bundles"},
    {"instances", "list", "", 0, 0, instances_list,
        "Every browser instance (admin); 'instances bound' lists a "
        "workspace's.",
        0, "GET /api/v1/admin/browser-instances"},
    {"instances", "register", "NAME", 1,
        B(DRIVER) | B(BUNDLE) | B(ENDPOINT_FILE) | B(INSTANCE_CONFIG) |
            B(POLICY) | B(PROFILE) | B(HOST),
        instances_register,
        "Register a browser instance: --driver D --bundle ID (admin).  A "
        "cdp endpoint is read from --endpoint-file, never an argument.",
        B(DRIVER) | B(BUNDLE), "POST /api/v1/admin/browser-instances"},
    {"instances", "disable", "INSTANCE", 1, 0, instances_disable,
        "Disable an instance (admin).", 0,
        "POST /api/v1/admin/browser-instances/{browser_instance_id}/disable"},
    {"instances", "enable", "INSTANCE", 1, 0, instances_enable,
        "Enable an instance (admin).", 0,
        "POST /api/v1/admin/browser-instances/{browser_instance_id}/enable"},
    {"bindings", "create", "WORKSPACE INSTANCE", 2, 0, bindings_create,
        "Let a workspace id use an instance (admin).", 0,
        "POST /api/v1/admin/bindings"},
    {"bindings", "delete", "BINDING", 1, 0, bindings_delete,
        "Delete a binding (admin).", 0,
        "DELETE /api/v1/admin/bindings/{binding_id}"},
    {NULL, NULL, NULL, 0, 0, NULL, NULL, 0, NULL},
};
