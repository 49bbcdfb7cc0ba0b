/*
 * mcp_fixture.h: MCP over real HTTP (libcurl) against the one service of
 * the test that includes it (env): one request with its status, body and
 * the headers MCP tests read, a session initialized, a tool called.
 * Header-only, static inline, on top of http_fixture.h.
 */
#ifndef SPACED_MCP_FIXTURE_H
#define SPACED_MCP_FIXTURE_H

#include <criterion/criterion.h>
#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_fixture.h"

/* The including test's service (hf_start), its Space and the Space's
 * and the workspace's MCP URLs. */
static struct hf_env env;
static char space[CM_ID_MAX + 1], url[512], ws_url[512];

/* Starts the service (tag, n fake instances) with a Space of the world's
 * operator on instance 0, and the two URLs. */
static inline void
mf_start(const char *tag, size_t n)
{
	hf_start(&env, tag, n, NULL);
	hf_create_ok(&env, 0, NULL, space);
	hf_path(&env, url, sizeof(url), NULL, space, "/mcp");
	snprintf(
	    ws_url, sizeof(ws_url), "/api/v1/workspaces/%s/mcp", hf_ws(&env));
}

struct answer {
	int status;
	char *body;
	json_t *json;
	char session[128];
	char auth[128];
	char allow[64];
	char type[64]; /* Content-Type */
};

struct buf {
	char *p;
	size_t n;
};

static inline size_t
body_cb(char *d, size_t size, size_t n, void *arg)
{
	struct buf *b = arg;
	char *p = realloc(b->p, b->n + size * n + 1);

	if (p == NULL)
		return 0;
	memcpy(p + b->n, d, size * n);
	b->n += size * n;
	p[b->n] = '\0';
	b->p = p;
	return size * n;
}

static inline void
keep_header(
    const char *line, size_t len, const char *name, char *out, size_t cap)
{
	size_t k = strlen(name);

	if (len > k + 1 && strncasecmp(line, name, k) == 0 && line[k] == ':') {
		const char *v = line + k + 1;
		size_t m = len - k - 1;

		while (m > 0 && *v == ' ')
			v++, m--;
		while (m > 0 && (v[m - 1] == '\r' || v[m - 1] == '\n'))
			m--;
		snprintf(out, cap, "%.*s", (int)m, v);
	}
}

static inline size_t
head_cb(char *d, size_t size, size_t n, void *arg)
{
	struct answer *a = arg;

	keep_header(
	    d, size * n, "Mcp-Session-Id", a->session, sizeof(a->session));
	keep_header(d, size * n, "WWW-Authenticate", a->auth, sizeof(a->auth));
	keep_header(d, size * n, "Allow", a->allow, sizeof(a->allow));
	keep_header(d, size * n, "Content-Type", a->type, sizeof(a->type));
	return size * n;
}

/* One request to path: method, token, session (NULL: none), extra
 * header lines (NULL-terminated, may be NULL), body (may be NULL). */
static inline struct answer
call(const char *method, const char *path, const char *token,
    const char *session, const char *const *extra, const char *body)
{
	struct answer a;
	struct buf b = {NULL, 0};
	struct curl_slist *h = NULL;
	char full[1200], line[CM_TOKEN_MAX + 64];
	long status = -1;
	CURL *cu = curl_easy_init();

	memset(&a, 0, sizeof(a));
	cr_assert_not_null(cu);
	snprintf(full, sizeof(full), "http://127.0.0.1:%d%s",
	    env.sf.p.http_port, path);
	if (token != NULL) {
		snprintf(line, sizeof(line), "Authorization: Bearer %s", token);
		h = curl_slist_append(h, line);
	}
	if (session != NULL) {
		snprintf(line, sizeof(line), "Mcp-Session-Id: %s", session);
		h = curl_slist_append(h, line);
	}
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Accept: application/json, text/event-stream");
	for (size_t i = 0; extra != NULL && extra[i] != NULL; i++)
		h = curl_slist_append(h, extra[i]);
	curl_easy_setopt(cu, CURLOPT_URL, full);
	curl_easy_setopt(cu, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(cu, CURLOPT_HTTPHEADER, h);
	if (body != NULL)
		curl_easy_setopt(cu, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(cu, CURLOPT_WRITEFUNCTION, body_cb);
	curl_easy_setopt(cu, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(cu, CURLOPT_HEADERFUNCTION, head_cb);
	curl_easy_setopt(cu, CURLOPT_HEADERDATA, &a);
	curl_easy_setopt(cu, CURLOPT_TIMEOUT_MS, 60000L);
	if (curl_easy_perform(cu) == CURLE_OK)
		curl_easy_getinfo(cu, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(cu);
	curl_slist_free_all(h);
	a.status = (int)status;
	a.body = b.p;
	a.json = b.p != NULL ? json_loads(b.p, 0, NULL) : NULL;
	return a;
}

static inline void
done(struct answer *a)
{
	free(a->body);
	json_decref(a->json);
	memset(a, 0, sizeof(*a));
}

/* One request (as call) whose status must be want; its answer goes. */
static inline void
status_is(int want, const char *method, const char *path, const char *token,
    const char *session, const char *const *extra, const char *body)
{
	struct answer a = call(method, path, token, session, extra, body);

	cr_assert_eq(a.status, want, "%s %s: %d %s", method, path, a.status,
	    a.body != NULL ? a.body : "");
	done(&a);
}

static const char init_body[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
    "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
    "\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}";

/* A session on path for token, initialized. */
static inline void
session_on(const char *path, const char *token, char *sid, size_t len)
{
	struct answer a = call("POST", path, token, NULL, NULL, init_body);

	cr_assert_eq(a.status, 200, "initialize: %d %s", a.status, a.body);
	cr_assert_str_eq(
	    json_string_value(json_object_get(
	        json_object_get(a.json, "result"), "protocolVersion")),
	    "2025-06-18");
	cr_assert_eq(strlen(a.session), 48, "session id: %s", a.session);
	snprintf(sid, len, "%s", a.session);
	done(&a);
	a = call("POST", path, token, sid, NULL,
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	cr_assert_eq(a.status, 202, "initialized: %d %s", a.status, a.body);
	done(&a);
}

/* tools/call name with args (JSON text) as JSON-RPC id, as token. */
static inline struct answer
tool_by(const char *token, const char *path, const char *sid, int id,
    const char *name, const char *args)
{
	char body[1024];

	snprintf(body, sizeof(body),
	    "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
	    id, name, args);
	return call("POST", path, token, sid, NULL, body);
}

/* The same, as the world's manager. */
static inline struct answer
tool(const char *path, const char *sid, int id, const char *name,
    const char *args)
{
	return tool_by(env.manager, path, sid, id, name, args);
}

static inline const json_t *
result_of(const struct answer *a)
{
	return json_object_get(a->json, "result");
}

/* The JSON-RPC error code of a's answer (0 for none). */
static inline int
rpc_code(const struct answer *a)
{
	return (int)json_integer_value(
	    json_object_get(json_object_get(a->json, "error"), "code"));
}

static inline const char *
text_of(const struct answer *a)
{
	return json_string_value(json_object_get(
	    json_array_get(json_object_get(result_of(a), "content"), 0),
	    "text"));
}

/* The tasks of the Space, as its list route shows them. */
static inline size_t
tasks_of(const char *sp)
{
	char path[1024];
	json_t *res = NULL;
	size_t n;

	hf_path(&env, path, sizeof(path), NULL, sp, "/tasks");
	cr_assert_eq(hf_call(&env, "GET", path, env.manager, NULL, &res), 200);
	n = json_array_size(json_object_get(res, "data"));
	json_decref(res);
	return n;
}

/* A call of browser_sleep for 3 s on session sid, for a thread. */
struct slow {
	char sid[128];
	struct answer a;
};

static inline void *
slow_call(void *arg)
{
	struct slow *s = arg;

	s->a = tool(url, s->sid, 20, "browser_sleep", "{\"ms\": 3000}");
	return NULL;
}

/* Whether the Space has a task running (for tk_wait_until). */
static inline bool
running(void *arg)
{
	char path[1024];
	json_t *res = NULL;
	bool yes;

	(void)arg;
	hf_path(&env, path, sizeof(path), NULL, space, NULL);
	hf_call(&env, "GET", path, env.manager, NULL, &res);
	yes = json_is_object(
	    json_object_get(json_object_get(res, "data"), "active_task"));
	json_decref(res);
	return yes;
}

#endif
