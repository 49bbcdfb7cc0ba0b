/*
 * admin_fixture.h: what the provisioning tests share.
 *
 * One real spaced per test on its own /tmp directory, its log (stdout and
 * stderr of the supervisor and of every child) appended to
 * <dir>/spaced.log, signed in with the token the bootstrap writes to
 * <dir>/admin.token.  Every helper goes through HTTP, never the store.
 *
 * Header-only: every helper is static inline, so a test file uses what it
 * needs without unused-function warnings.  Waits are bounded polls.
 */
#ifndef SPACED_ADMIN_FIXTURE_H
#define SPACED_ADMIN_FIXTURE_H

#include <criterion/criterion.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"
#include "token.h"

/* Secrets an instance is registered with; no answer or log may show one. */
#define CANARY_ENDPOINT "ws://canary-endpoint.invalid:9222/devtools/CANARY1"
#define CANARY_CONFIG "CANARY2-config-secret-value"
#define CANARY_PROFILE "/srv/canary-profile-CANARY3"

struct af_env {
	char dir[128];
	char log[192];
	struct tk_proc p;
	char admin[CM_TOKEN_MAX + 1];
};

static inline void
af_stop(struct af_env *e)
{
	tk_proc_stop(&e->p, SIGTERM);
	tk_rmrf(e->dir);
}

/* status of a request; *out gets the parsed body (caller decrefs). */
static inline int
af_call(struct af_env *e, const char *method, const char *path,
    const char *token, const char *body, json_t **out)
{
	char *text = NULL;
	int status = tk_http(&e->p, method, path, token, body, NULL, &text);

	if (out != NULL)
		*out = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	return status;
}

/* The same, keeping the raw text (caller frees). */
static inline int
af_call_text(struct af_env *e, const char *method, const char *path,
    const char *token, const char *body, char **text)
{
	return tk_http(&e->p, method, path, token, body, NULL, text);
}

static inline const char *
af_error_code(json_t *body)
{
	return json_string_value(
	    json_object_get(json_object_get(body, "error"), "code"));
}

static inline json_t *
af_data(json_t *body)
{
	return json_object_get(body, "data");
}

static inline const char *
af_data_str(json_t *body, const char *key)
{
	return json_string_value(json_object_get(af_data(body), key));
}

/* Reads the first line of <dir>/admin.token into e->admin. */
static inline bool
af_admin_token_read(void *arg)
{
	struct af_env *e = arg;
	char path[256];
	size_t len = 0;
	char *text;
	bool ok;

	snprintf(path, sizeof(path), "%s/admin.token", e->dir);
	if ((text = tk_read_file(path, &len)) == NULL)
		return false;
	/* A whole line: the bootstrap writes the token and a newline. */
	ok = len > 1 && len <= CM_TOKEN_MAX + 1 && text[len - 1] == '\n';
	if (ok)
		snprintf(
		    e->admin, sizeof(e->admin), "%.*s", (int)(len - 1), text);
	free(text);
	return ok;
}

/* The file comes before the store knows its token: wait for both. */
static inline bool
af_admin_token_works(void *arg)
{
	struct af_env *e = arg;

	return af_admin_token_read(e) &&
	       tk_http(&e->p, "GET", "/api/v1/admin/runtime-bundles", e->admin,
	           NULL, NULL, NULL) == 200;
}

static inline void
af_start(struct af_env *e, const char *tag)
{
	memset(e, 0, sizeof(*e));
	tk_tmpdir(e->dir, sizeof(e->dir), tag);
	snprintf(e->log, sizeof(e->log), "%s/spaced.log", e->dir);
	cr_assert_eq(tk_spaced_start_logged(&e->p, e->dir, NULL, e->log), 0);
	cr_assert(tk_http_ready(&e->p, 20000), "the api never answered");
	cr_assert(tk_wait_until(af_admin_token_works, e, 20000),
	    "no working admin token in %s/admin.token", e->dir);
	cr_assert(cm_token_valid(e->admin, strlen(e->admin)));
}

/*
 * POSTs body to path as the admin, expects 201 and a data object whose id
 * is named idkey (and no bare "id"); copies the id into out.
 */
static inline void
af_create(struct af_env *e, const char *path, const char *body,
    const char *idkey, char *out)
{
	json_t *res;
	int status = af_call(e, "POST", path, e->admin, body, &res);

	cr_assert_eq(status, 201, "POST %s: %d", path, status);
	cr_assert(json_is_object(af_data(res)), "POST %s: no data", path);
	cr_assert_not_null(
	    af_data_str(res, idkey), "POST %s: no %s", path, idkey);
	cr_assert_null(json_object_get(af_data(res), "id"));
	snprintf(out, CM_ID_MAX + 1, "%s", af_data_str(res, idkey));
	json_decref(res);
}

static inline void
af_principal(struct af_env *e, const char *kind, const char *name, char *id)
{
	char body[256];

	snprintf(body, sizeof(body),
	    "{\"kind\": \"%s\", \"name\": \"%s\", \"is_admin\": false}", kind,
	    name);
	af_create(e, "/api/v1/admin/principals", body, "principal_id", id);
}

/* Issues a token through the api; returns its id, the token in token. */
static inline void
af_issue(struct af_env *e, const char *principal_id, const char *body,
    char *token_id, char *token)
{
	char path[256];
	json_t *res;

	snprintf(path, sizeof(path), "/api/v1/admin/principals/%s/tokens",
	    principal_id);
	cr_assert_eq(af_call(e, "POST", path, e->admin, body, &res), 201);
	cr_assert_str_eq(af_data_str(res, "principal_id"), principal_id);
	cr_assert_not_null(af_data_str(res, "token_id"));
	cr_assert_not_null(af_data_str(res, "token"));
	snprintf(token_id, CM_ID_MAX + 1, "%s", af_data_str(res, "token_id"));
	snprintf(token, CM_TOKEN_MAX + 1, "%s", af_data_str(res, "token"));
	cr_assert(cm_token_valid(token, strlen(token)));
	json_decref(res);
}

static inline void
af_member_put(struct af_env *e, const char *ws, const char *principal_id,
    const char *role)
{
	char path[256], body[64];
	json_t *res;

	snprintf(path, sizeof(path), "/api/v1/admin/workspaces/%s/members/%s",
	    ws, principal_id);
	snprintf(body, sizeof(body), "{\"role\": \"%s\"}", role);
	cr_assert_eq(af_call(e, "PUT", path, e->admin, body, &res), 200);
	cr_assert_str_eq(af_data_str(res, "workspace_id"), ws);
	cr_assert_str_eq(af_data_str(res, "principal_id"), principal_id);
	cr_assert_str_eq(af_data_str(res, "role"), role);
	json_decref(res);
}

/* etc/bundles/fake.json, renamed when name is not NULL, as a body. */
static inline char *
af_bundle_body(const char *name, const char *version)
{
	json_t *manifest, *body;
	char *text;

	manifest =
	    json_load_file(SPACED_SOURCE_DIR "/etc/bundles/fake.json", 0, NULL);
	cr_assert_not_null(manifest);
	if (name != NULL) {
		json_object_set_new(manifest, "name", json_string(name));
		json_object_set_new(manifest, "version", json_string(version));
	}
	body = json_pack("{s:o}", "manifest", manifest);
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	return text;
}

/* Registers a fake instance with every secret set; returns its id. */
static inline void
af_instance(struct af_env *e, const char *name, const char *bundle_id, char *id)
{
	char body[1024], *text = NULL;
	json_t *res;

	snprintf(body, sizeof(body),
	    "{\"name\": \"%s\", \"driver\": \"fake\", \"bundle_id\": \"%s\","
	    " \"endpoint\": \"" CANARY_ENDPOINT "\","
	    " \"config\": {\"latency_ms\": 0, \"secret\": \"" CANARY_CONFIG
	    "\"},"
	    " \"network_policy\": {\"allow_hosts\": [\"example.com\"]},"
	    " \"profile_mode\": \"persistent\","
	    " \"profile\": \"" CANARY_PROFILE "\"}",
	    name, bundle_id);
	cr_assert_eq(af_call_text(e, "POST", "/api/v1/admin/browser-instances",
	                 e->admin, body, &text),
	    201);
	cr_assert_null(strstr(text, "CANARY"), "register echoed: %s", text);
	res = json_loads(text, 0, NULL);
	cr_assert_not_null(res);
	cr_assert_str_eq(af_data_str(res, "name"), name);
	cr_assert_str_eq(af_data_str(res, "status"), "ready");
	cr_assert_str_eq(af_data_str(res, "bundle_id"), bundle_id);
	cr_assert_str_eq(af_data_str(res, "profile_mode"), "persistent");
	cr_assert_null(json_object_get(af_data(res), "endpoint"));
	cr_assert_null(json_object_get(af_data(res), "config"));
	cr_assert_null(json_object_get(af_data(res), "profile"));
	cr_assert_str_eq(
	    json_string_value(json_array_get(
	        json_object_get(json_object_get(af_data(res), "network_policy"),
	            "allow_hosts"),
	        0)),
	    "example.com");
	snprintf(
	    id, CM_ID_MAX + 1, "%s", af_data_str(res, "browser_instance_id"));
	json_decref(res);
	free(text);
}

/* The index of the element of array whose key is value, or -1. */
static inline int
af_find(json_t *array, const char *key, const char *value)
{
	size_t i;
	json_t *v;

	json_array_foreach(array, i, v)
	{
		const char *s = json_string_value(json_object_get(v, key));

		if (s != NULL && strcmp(s, value) == 0)
			return (int)i;
	}
	return -1;
}

#endif
