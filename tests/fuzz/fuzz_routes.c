/*
 * fuzz_routes.c: libFuzzer target for every route's body and query parser
 * and validator (api/respond.c, api/routes_space.c, api/routes_admin.c).
 *
 * Input: one byte that picks the route, its query string up to the first
 * newline, then the request body.  The handler runs for an authenticated
 * admin with no store (tests/unit/api_offline.h): a request the route
 * accepts goes as far as the store call, which fails 503, so every check
 * a route makes before it asks the store is reached.
 *
 * Checked beyond "no crash":
 *   - the answer is the error envelope, {"error": {code, message,
 *     retryable}}, with the HTTP status of its code;
 *   - never 500: whatever a route accepts, the store's protocol can carry
 *     (cm_rpc_call encodes the request before it sends: a field over its
 *     proto bound would come back as internal_error);
 *   - a body over CM_BODY_MAX is 413;
 *   - an instance's endpoint, profile and config are secrets: no answer's
 *     message holds LEAK_RUN_MIN or more consecutive characters of one of
 *     them that the request's public strings (its keys, its other values)
 *     do not account for.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/api_offline.h"
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct {
	const char *method;
	void (*fn)(struct api_ctx *);
} routes[] = {
    {"POST", api_space_create},
    {"POST", api_task_submit},
    {"POST", api_space_cancel},
    {"POST", api_space_close},
    {"GET", api_space_list},
    {"GET", api_task_list},
    {"GET", api_event_list},
    {"POST", api_admin_workspace_create},
    {"POST", api_admin_principal_create},
    {"POST", api_admin_token_issue},
    {"DELETE", api_admin_token_revoke},
    {"PUT", api_admin_member_put},
    {"DELETE", api_admin_member_remove},
    {"POST", api_admin_bundle_create},
    {"POST", api_admin_instance_register},
    {"POST", api_admin_instance_disable},
    {"POST", api_admin_instance_enable},
    {"POST", api_admin_binding_create},
    {"DELETE", api_admin_binding_delete},
};
#define N_ROUTES (sizeof(routes) / sizeof(routes[0]))

_Noreturn static void
die(const char *what, const char *body)
{
	fprintf(stderr, "fuzz_routes: %s: %s\n", what, body ? body : "(none)");
	abort();
}

static const char *const secrets[] = {"endpoint", "profile", "config"};

static bool
is_secret_key(const char *key)
{
	for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++)
		if (strcmp(key, secrets[i]) == 0)
			return true;
	return false;
}

/*
 * The request's public strings: every object key, and every string
 * outside the secret members of the top level.  An answer may say what
 * the request said there (an unknown key, say), even when the fuzzer
 * spelled part of a secret into it.
 */
/* Marks every place in msg where s occurs, and the longest start of s
 * that ends msg: a message is cut at its bound, an echo with it. */
static void
cover(const char *msg, bool *covered, const char *s)
{
	size_t n = strlen(s), m = strlen(msg);

	for (const char *at = msg; n > 0 && (at = strstr(at, s)) != NULL; at++)
		for (size_t k = 0; k < n; k++)
			covered[(size_t)(at - msg) + k] = true;
	for (size_t k = n < m ? n : m; k > 0; k--)
		if (memcmp(msg + m - k, s, k) == 0) {
			for (size_t j = m - k; j < m; j++)
				covered[j] = true;
			break;
		}
}

static void
mark_public(const json_t *v, const char *msg, bool *covered, bool top)
{
	const char *key;
	json_t *item;
	size_t i;

	if (json_is_string(v)) {
		cover(msg, covered, json_string_value(v));
		return;
	}
	json_object_foreach((json_t *)v, key, item)
	{
		cover(msg, covered, key);
		if (!(top && is_secret_key(key)))
			mark_public(item, msg, covered, false);
	}
	json_array_foreach(v, i, item) mark_public(item, msg, covered, false);
}

/* Shorter runs could be in any answer by chance. */
#define LEAK_RUN_MIN 8

/*
 * Whether msg holds, at some place where a secret string of the request
 * occurs, LEAK_RUN_MIN or more consecutive characters that no public
 * string of the request accounts for.
 */
static bool
echoes(const char *msg, const bool *covered, const json_t *v)
{
	const char *key;
	json_t *item;
	size_t i;

	if (json_is_string(v)) {
		const char *s = json_string_value(v), *at = msg;
		size_t n = strlen(s);

		while (n >= LEAK_RUN_MIN && (at = strstr(at, s)) != NULL) {
			size_t run = 0, base = (size_t)(at - msg);

			for (size_t k = 0; k < n; k++) {
				run = covered[base + k] ? 0 : run + 1;
				if (run >= LEAK_RUN_MIN)
					return true;
			}
			at++;
		}
		return false;
	}
	json_object_foreach((json_t *)v, key, item)
	{
		if (echoes(msg, covered, item))
			return true;
	}
	json_array_foreach(
	    v, i, item) if (echoes(msg, covered, item)) return true;
	return false;
}

static void
check_answer(const struct api_res *res, const char *body, size_t body_len)
{
	json_t *env, *err, *code, *req;
	enum cm_err e;

	if (res->body == NULL)
		die("no answer", NULL);
	if ((env = json_loads(res->body, 0, NULL)) == NULL)
		die("an answer that is not JSON", res->body);
	err = json_object_get(env, "error");
	code = json_object_get(err, "code");
	if (!json_is_string(code) ||
	    !json_is_string(json_object_get(err, "message")) ||
	    !json_is_boolean(json_object_get(err, "retryable")))
		die("an answer that is not the error envelope", res->body);
	e = cm_err_from_code(json_string_value(code));
	if (e == CM_ERR__COUNT || cm_err_http(e) != res->status)
		die("a status that is not its code's", res->body);
	if (res->status == 500)
		die("accepted what the store's protocol cannot carry",
		    res->body);
	if (body_len > CM_BODY_MAX && res->status != 413)
		die("a body over CM_BODY_MAX that is not 413", res->body);
	if (json_object_size(err) != 3 || json_object_size(env) != 1)
		die("an answer with more than the error envelope", res->body);

	if (cm_json_parse(body, body_len, CM_BODY_MAX, CM_JSON_DEPTH_MAX, &req,
	        NULL, 0) == 0) {
		const char *msg =
		    json_string_value(json_object_get(err, "message"));
		bool *covered = calloc(strlen(msg) + 1, sizeof(*covered));

		if (covered == NULL)
			die("out of memory", NULL);
		mark_public(req, msg, covered, true);
		for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]);
		     i++)
			if (echoes(
			        msg, covered, json_object_get(req, secrets[i])))
				die("an answer that echoes a secret",
				    res->body);
		free(covered);
		json_decref(req);
	}
	json_decref(env);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct pr_principal admin = {.principal_id = "admin-1",
	    .kind = "operator",
	    .name = "admin",
	    .is_admin = true};
	char query[CM_URL_MAX + 1];
	const char *nl;
	struct api_res res;
	size_t qlen, route;

	if (size < 1)
		return 0;
	route = data[0] % N_ROUTES;
	data++;
	size--;
	nl = memchr(data, '\n', size);
	qlen = nl != NULL ? (size_t)(nl - (const char *)data) : 0;
	if (qlen >= sizeof(query) || memchr(data, '\0', qlen) != NULL)
		return 0;
	memcpy(query, data, qlen);
	query[qlen] = '\0';
	if (nl != NULL) {
		data += qlen + 1;
		size -= qlen + 1;
	}
	api_offline_run(routes[route].fn, routes[route].method, query,
	    (const char *)data, size, &admin, &res);
	check_answer(&res, (const char *)data, size);
	free(res.body);
	return 0;
}
