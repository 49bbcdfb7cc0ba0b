/*
 * MCP over real HTTP against the real service, on the fake runtime:
 * the transport's checks, the session's life, tools from the bundle,
 * each tools/call a task (its retry the same task, a second at once an
 * error), progress and log messages on an event stream, a call the store
 * cannot answer, a screenshot as an image, and the workspace URL that
 * opens the caller's own Space.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "driver_fixture.h"
#include "mcp_fixture.h"
#include "pages.h"

TestSuite(mcp, .timeout = 120);

static void
setup(void)
{
	mf_start("mcp", 2);
}

static void
teardown(void)
{
	hf_stop(&env);
}

Test(mcp, a_session_lists_the_tools_and_runs_one_as_a_task, .init = setup,
    .fini = teardown)
{
	char sid[128];
	struct answer a;
	const json_t *tools, *t;
	size_t i;
	bool noop = false;

	session_on(url, env.manager, sid, sizeof(sid));
	a = call("POST", url, env.manager, sid, NULL,
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
	cr_assert_eq(a.status, 200);
	cr_assert(json_is_object(result_of(&a)), "%s", a.body);
	done(&a);
	a = call("POST", url, env.manager, sid, NULL,
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
	cr_assert_eq(a.status, 200, "%s", a.body);
	tools = json_object_get(result_of(&a), "tools");
	cr_assert_gt(json_array_size(tools), 3, "%s", a.body);
	json_array_foreach(tools, i, t)
	{
		const char *n = json_string_value(json_object_get(t, "name"));

		cr_assert(strncmp(n, "browser_", 8) == 0, "%s", n);
		cr_assert(json_is_object(json_object_get(t, "inputSchema")));
		noop |= strcmp(n, "browser_noop") == 0;
	}
	cr_assert(noop, "%s", a.body);
	done(&a);

	a = tool(url, sid, 4, "browser_noop", "{}");
	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert(json_is_false(json_object_get(result_of(&a), "isError")),
	    "%s", a.body);
	done(&a);
	a = tool(url, sid, 5, "browser_fail", "{}");
	cr_assert(json_is_true(json_object_get(result_of(&a), "isError")), "%s",
	    a.body);
	cr_assert_not_null(strstr(text_of(&a), ": "), "%s", a.body);
	done(&a);
	a = tool(url, sid, 6, "browser_nothing", "{}");
	cr_assert_eq(rpc_code(&a), -32602, "%s", a.body);
	done(&a);
	a = call("POST", url, env.manager, sid, NULL,
	    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/list\"}");
	cr_assert_eq(rpc_code(&a), -32601, "%s", a.body);
	done(&a);
}

Test(mcp, the_transport_refuses_what_it_must, .init = setup, .fini = teardown)
{
	static const char *const evil_host[] = {"Host: evil.example:80", NULL};
	static const char *const evil_origin[] = {
	    "Origin: http://evil.example", NULL};
	static const char *const bad_version[] = {
	    "MCP-Protocol-Version: 1999-01-01", NULL};
	static const char ping[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}";
	char sid[128];
	struct answer a;

	a = call("POST", url, NULL, NULL, NULL, init_body);
	cr_assert_eq(a.status, 401);
	cr_assert_str_eq(a.auth, "Bearer realm=\"spaced\"");
	done(&a);
	a = call("POST", url, env.manager, NULL, evil_host, init_body);
	cr_assert_eq(a.status, 403, "%s", a.body);
	done(&a);
	a = call("POST", url, env.manager, NULL, evil_origin, init_body);
	cr_assert_eq(a.status, 403, "%s", a.body);
	done(&a);
	a = call("POST", url, env.manager, NULL, NULL, "[" /* not JSON */);
	cr_assert_eq(a.status, 400);
	done(&a);
	a = call(
	    "POST", url, env.manager, NULL, NULL, "[{\"jsonrpc\":\"2.0\"}]");
	cr_assert_eq(a.status, 400);
	cr_assert_eq(rpc_code(&a), -32600, "%s", a.body);
	done(&a);

	session_on(url, env.manager, sid, sizeof(sid));
	a = call("POST", url, env.manager, NULL, NULL, ping);
	cr_assert_eq(a.status, 400, "no session: %s", a.body);
	done(&a);
	a = call("POST", url, env.manager,
	    "000000000000000000000000000000000000000000000000", NULL, ping);
	cr_assert_eq(a.status, 404, "%s", a.body);
	done(&a);
	a = call("POST", url, env.manager, sid, bad_version, ping);
	cr_assert_eq(a.status, 400, "%s", a.body);
	done(&a);
	a = call("GET", url, env.manager, sid, NULL, NULL);
	cr_assert_eq(a.status, 405);
	cr_assert_str_eq(a.allow, "POST, DELETE");
	done(&a);
	/* The session is the URL's: the workspace URL does not know it. */
	a = call("POST", ws_url, env.manager, sid, NULL, ping);
	cr_assert_eq(a.status, 404, "%s", a.body);
	done(&a);
	a = call("DELETE", url, env.manager, sid, NULL, NULL);
	cr_assert_eq(a.status, 204, "%s", a.body);
	done(&a);
	a = call("POST", url, env.manager, sid, NULL, ping);
	cr_assert_eq(a.status, 404, "ended: %s", a.body);
	done(&a);
}

/* A name of public_hosts (a reverse proxy's) is this server's, in Host
 * and in Origin; any other still is not. */
Test(mcp, a_public_host_is_taken_and_no_other)
{
	static const char *const flags[] = {
	    "--public-hosts=agents.example.com,[2001:db8::1]", NULL};
	static const char *const proxied[] = {"Host: agents.example.com",
	    "Origin: https://agents.example.com", NULL};
	static const char *const v6[] = {"Host: [2001:db8::1]:8443", NULL};
	static const char *const evil[] = {
	    "Host: agents.example.com", "Origin: https://evil.example", NULL};

	hf_start(&env, "mcppub", 1, flags);
	hf_create_ok(&env, 0, NULL, space);
	hf_path(&env, url, sizeof(url), NULL, space, "/mcp");
	status_is(200, "POST", url, env.manager, NULL, proxied, init_body);
	status_is(200, "POST", url, env.manager, NULL, v6, init_body);
	status_is(403, "POST", url, env.manager, NULL, evil, init_body);
	hf_stop(&env);
}

Test(mcp, a_retried_call_is_the_same_task, .init = setup, .fini = teardown)
{
	char sid[128];
	struct answer a;

	session_on(url, env.manager, sid, sizeof(sid));
	a = tool(url, sid, 9, "browser_noop", "{}");
	cr_assert(json_is_false(json_object_get(result_of(&a), "isError")),
	    "%s", a.body);
	done(&a);
	a = tool(url, sid, 9, "browser_noop", "{}");
	cr_assert(json_is_false(json_object_get(result_of(&a), "isError")),
	    "%s", a.body);
	done(&a);
	cr_assert_eq(tasks_of(space), 1);
	a = tool(url, sid, 10, "browser_noop", "{}");
	done(&a);
	cr_assert_eq(tasks_of(space), 2);
}

Test(mcp, a_second_call_while_one_runs_is_refused_not_queued, .init = setup,
    .fini = teardown)
{
	struct slow s;
	pthread_t th;
	struct answer a;

	memset(&s, 0, sizeof(s));
	session_on(url, env.manager, s.sid, sizeof(s.sid));
	cr_assert_eq(pthread_create(&th, NULL, slow_call, &s), 0);
	cr_assert(tk_wait_until(running, NULL, HF_WAIT_MS));
	a = tool(url, s.sid, 21, "browser_noop", "{}");
	cr_assert(json_is_true(json_object_get(result_of(&a), "isError")), "%s",
	    a.body);
	cr_assert_not_null(
	    strstr(text_of(&a), "space_task_in_progress"), "%s", a.body);
	done(&a);
	pthread_join(th, NULL);
	cr_assert(json_is_false(json_object_get(result_of(&s.a), "isError")),
	    "%s", s.a.body);
	done(&s.a);
}

/* A call that asks for progress is answered on an event stream: queued,
 * then started, each a notifications/progress with its token, then the
 * result as the last event, and the stream ends. */
Test(mcp, a_call_with_a_progress_token_is_told_its_progress, .init = setup,
    .fini = teardown)
{
	static const char body[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":30,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"browser_sleep\",\"arguments\":{\"ms\":"
	    "300},\"_meta\":{\"progressToken\":\"p-1\"}}}";
	char sid[128];
	struct answer a;
	const char *queued, *started, *last;
	json_t *res;

	session_on(url, env.manager, sid, sizeof(sid));
	a = call("POST", url, env.manager, sid, NULL, body);
	cr_assert_eq(a.status, 200, "%d %s", a.status, a.body);
	cr_assert_str_eq(a.type, "text/event-stream", "%s", a.body);
	queued = strstr(a.body, "\"progressToken\":\"p-1\",\"progress\":1,"
	                        "\"message\":\"queued");
	started = strstr(a.body, "\"progressToken\":\"p-1\",\"progress\":2,"
	                         "\"message\":\"started");
	last = strstr(a.body, "event: message\ndata: {\"jsonrpc\":\"2.0\","
	                      "\"id\":30");
	cr_assert(queued != NULL && started != NULL && last != NULL &&
	              queued < started && started < last,
	    "%s", a.body);
	res = json_loads(last + strlen("event: message\ndata: "),
	    JSON_DISABLE_EOF_CHECK, NULL);
	cr_assert(json_is_false(json_object_get(
	              json_object_get(res, "result"), "isError")),
	    "%s", a.body);
	json_decref(res);
	cr_assert_str_eq(a.body + strlen(a.body) - 2, "\n\n");
	done(&a);
}

/* logging/setLevel to level on session sid, as JSON-RPC id. */
static struct answer
set_level(const char *sid, int id, const char *level)
{
	char body[256];

	snprintf(body, sizeof(body),
	    "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"logging/"
	    "setLevel\",\"params\":{\"level\":\"%s\"}}",
	    id, level);
	return call("POST", url, env.manager, sid, NULL, body);
}

/* A session that set a log level has its calls answered on an event
 * stream carrying the Space's events of that level or above as
 * notifications/message, before the answer; a level that is none of
 * MCP's is refused. */
Test(mcp, a_session_with_a_log_level_is_told_the_spaces_events, .init = setup,
    .fini = teardown)
{
	static const char nap[] = "{\"ms\": 300}";
	char sid[128];
	struct answer a;
	const char *started, *last;

	session_on(url, env.manager, sid, sizeof(sid));
	a = set_level(sid, 40, "verbose");
	cr_assert_eq(rpc_code(&a), -32602, "%s", a.body);
	done(&a);
	/* No level yet: one JSON answer. */
	a = tool(url, sid, 41, "browser_sleep", nap);
	cr_assert_str_eq(a.type, "application/json", "%s", a.body);
	done(&a);
	a = set_level(sid, 42, "debug");
	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert(json_is_object(result_of(&a)), "%s", a.body);
	done(&a);
	a = tool(url, sid, 43, "browser_sleep", nap);
	cr_assert_eq(a.status, 200, "%d %s", a.status, a.body);
	cr_assert_str_eq(a.type, "text/event-stream", "%s", a.body);
	started = strstr(a.body,
	    "\"method\":\"notifications/message\",\"params\":{\"level\":"
	    "\"debug\",\"logger\":\"spaced.events\",\"data\":{");
	last = strstr(a.body, "event: message\ndata: {\"jsonrpc\":\"2.0\","
	                      "\"id\":43");
	cr_assert(
	    started != NULL && last != NULL && started < last, "%s", a.body);
	/* Its task's events from its queued on, those before the call
	 * waited among them. */
	cr_assert_not_null(strstr(a.body, "\"kind\":\"queued\""), "%s", a.body);
	cr_assert_not_null(
	    strstr(a.body, "\"kind\":\"started\""), "%s", a.body);
	cr_assert_not_null(
	    strstr(a.body, "\"kind\":\"completed\""), "%s", a.body);
	cr_assert_null(strstr(a.body, "notifications/progress"), "%s", a.body);
	done(&a);
	/* At warning, a sleep's events are below it: the stream holds the
	 * answer alone. */
	a = set_level(sid, 44, "warning");
	cr_assert_eq(a.status, 200, "%s", a.body);
	done(&a);
	a = tool(url, sid, 45, "browser_sleep", nap);
	cr_assert_str_eq(a.type, "text/event-stream", "%s", a.body);
	cr_assert_null(strstr(a.body, "notifications/message"), "%s", a.body);
	cr_assert_not_null(strstr(a.body, "\"id\":45"), "%s", a.body);
	done(&a);
}

/* The kinds of the Space's events in order, one line each ("" for none),
 * into out. */
static void
event_kinds(const char *sp, char *out, size_t len)
{
	char path[1024];
	json_t *res = NULL, *e;
	size_t i, n = 0;

	out[0] = '\0';
	hf_path(&env, path, sizeof(path), NULL, sp, "/events?limit=100");
	cr_assert_eq(hf_call(&env, "GET", path, env.manager, NULL, &res), 200);
	json_array_foreach(json_object_get(res, "data"), i, e)
	{
		const char *k = json_string_value(json_object_get(e, "kind"));

		n += (size_t)snprintf(out + n, n < len ? len - n : 0, "%s\n",
		    k != NULL ? k : "?");
	}
	json_decref(res);
}

/* A client's notifications/cancelled of its call cancels the call's
 * task by the cancel rules: the call answers that it was cancelled, and
 * the log shows the ask, then the task cancelled once its page was reset,
 * never completed. */
Test(mcp, a_cancelled_call_cancels_its_task, .init = setup, .fini = teardown)
{
	struct slow s;
	pthread_t th;
	struct answer a;
	char kinds[4096];
	const char *ask, *end;

	memset(&s, 0, sizeof(s));
	session_on(url, env.manager, s.sid, sizeof(s.sid));
	cr_assert_eq(pthread_create(&th, NULL, slow_call, &s), 0);
	cr_assert(tk_wait_until(running, NULL, HF_WAIT_MS));
	a = call("POST", url, env.manager, s.sid, NULL,
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
	    "\"params\":{\"requestId\":20,\"reason\":\"the user stopped "
	    "it\"}}");
	cr_assert_eq(a.status, 202, "cancelled: %d %s", a.status, a.body);
	done(&a);
	pthread_join(th, NULL);
	cr_assert(json_is_true(json_object_get(result_of(&s.a), "isError")),
	    "%s", s.a.body);
	cr_assert_not_null(strstr(text_of(&s.a), "cancelled"), "%s", s.a.body);
	done(&s.a);
	event_kinds(space, kinds, sizeof(kinds));
	ask = strstr(kinds, "cancel_requested\n");
	end = strstr(kinds, "\ncancelled\n");
	cr_assert(ask != NULL && end != NULL && ask < end, "%s", kinds);
	cr_assert_null(strstr(kinds, "completed"), "%s", kinds);
}

/* The store, stopped by the test below: let go at teardown whatever
 * the test's end. */
static pid_t stopped_store;

static void
teardown_store(void)
{
	if (stopped_store > 0)
		kill(stopped_store, SIGCONT);
	teardown();
}

/* A call whose wait cannot look at its task (the store does not answer)
 * is a tool error that says so and names the task, never a result; once
 * the store is back, the same call again tells how the task ended. */
Test(mcp, a_call_the_store_cannot_answer_says_so_and_a_retry_tells,
    .init = setup, .fini = teardown_store)
{
	struct slow s;
	pthread_t th;
	pid_t pids[4];
	struct answer a;

	memset(&s, 0, sizeof(s));
	session_on(url, env.manager, s.sid, sizeof(s.sid));
	cr_assert_eq(pthread_create(&th, NULL, slow_call, &s), 0);
	cr_assert(tk_wait_until(running, NULL, HF_WAIT_MS));
	cr_assert_eq(
	    sf_children(env.sf.p.pid, "spaced-store", NULL, pids, 4), 1);
	stopped_store = pids[0];
	cr_assert_eq(kill(stopped_store, SIGSTOP), 0);
	pthread_join(th, NULL);
	cr_assert_eq(s.a.status, 200, "%s", s.a.body);
	cr_assert(json_is_true(json_object_get(result_of(&s.a), "isError")),
	    "%s", s.a.body);
	cr_assert(strncmp(text_of(&s.a), "store_unavailable: ", 19) == 0, "%s",
	    s.a.body);
	cr_assert_not_null(
	    strstr(text_of(&s.a), "the same call again"), "%s", s.a.body);
	done(&s.a);
	cr_assert_eq(kill(stopped_store, SIGCONT), 0);
	stopped_store = 0;
	/* The same call, the same task: it ended while nobody could look. */
	a = tool(url, s.sid, 20, "browser_sleep", "{\"ms\": 3000}");
	cr_assert(json_is_false(json_object_get(result_of(&a), "isError")),
	    "%s", a.body);
	cr_assert_not_null(strstr(text_of(&a), "slept"), "%s", a.body);
	done(&a);
	cr_assert_eq(tasks_of(space), 1);
}

/* While an operator holds the Space, a tool call is a tool error that
 * says space_held and who holds it; released, the next call runs. */
Test(mcp, a_held_space_answers_space_held, .init = setup, .fini = teardown)
{
	char sid[128];
	struct answer a;

	session_on(url, env.manager, sid, sizeof(sid));
	cr_assert_eq(
	    hf_post(&env, env.manager, space, "takeover", NULL, NULL), 200);
	a = tool(url, sid, 50, "browser_noop", "{}");
	cr_assert(json_is_true(json_object_get(result_of(&a), "isError")), "%s",
	    a.body);
	cr_assert(strncmp(text_of(&a), "space_held: ", 12) == 0, "%s", a.body);
	cr_assert_not_null(strstr(text_of(&a), "held by "), "%s", a.body);
	done(&a);
	cr_assert_eq(
	    hf_post(&env, env.manager, space, "release", NULL, NULL), 200);
	a = tool(url, sid, 51, "browser_noop", "{}");
	cr_assert(json_is_false(json_object_get(result_of(&a), "isError")),
	    "%s", a.body);
	done(&a);
}

Test(mcp, a_screenshot_is_an_image, .init = setup, .fini = teardown)
{
	static const unsigned char png[] = {0x89, 'P', 'N', 'G'};
	char sid[128];
	struct answer a;
	const json_t *content, *img;
	const char *data;
	unsigned char raw[256];
	int n;

	session_on(url, env.manager, sid, sizeof(sid));
	a = tool(url, sid, 30, "browser_screenshot", "{}");
	content = json_object_get(result_of(&a), "content");
	img = json_array_get(content, 1);
	cr_assert_str_eq(json_string_value(json_object_get(img, "type")),
	    "image", "%s", a.body);
	cr_assert_str_eq(
	    json_string_value(json_object_get(img, "mimeType")), "image/png");
	data = json_string_value(json_object_get(img, "data"));
	cr_assert_not_null(data);
	cr_assert_lt(strlen(data), 4 * sizeof(raw) / 3);
	n = EVP_DecodeBlock(
	    raw, (const unsigned char *)data, (int)strlen(data));
	cr_assert_gt(n, 8);
	cr_assert_eq(memcmp(raw, png, sizeof(png)), 0);
	done(&a);
}

/* The open Spaces owned by owner: their count, the last one's id. */
static size_t
open_spaces_of(const char *owner, char out[CM_ID_MAX + 1])
{
	char path[1024];
	json_t *res = NULL;
	const json_t *sp;
	size_t i, n = 0;

	hf_path(&env, path, sizeof(path), NULL, NULL, NULL);
	cr_assert_eq(hf_call(&env, "GET", path, env.manager, NULL, &res), 200);
	json_array_foreach(json_object_get(res, "data"), i, sp)
	{
		if (strcmp(json_string_value(json_object_get(sp, "owner_id")),
		        owner) != 0 ||
		    strcmp(json_string_value(json_object_get(sp, "status")),
		        "closed") == 0)
			continue;
		n++;
		snprintf(out, CM_ID_MAX + 1, "%s",
		    json_string_value(json_object_get(sp, "space_id")));
	}
	json_decref(res);
	return n;
}

Test(mcp, the_workspace_url_opens_and_keeps_the_callers_own_space,
    .init = setup, .fini = teardown)
{
	char sid[128], sid2[128], id[CM_ID_MAX + 1], tok[CM_TOKEN_MAX + 1];
	char mine[CM_ID_MAX + 1];
	struct answer a;

	/* A member with no Space: the first call opens one on the free
	 * instance (the world's Space holds the other). */
	hf_principal(&env, "operator", "member", "member", id, tok);
	cr_assert_eq(open_spaces_of(id, mine), 0);
	session_on(ws_url, tok, sid, sizeof(sid));
	a = tool_by(tok, ws_url, sid, 1, "browser_noop", "{}");
	cr_assert(json_is_false(json_object_get(result_of(&a), "isError")),
	    "%s", a.body);
	done(&a);
	cr_assert_eq(open_spaces_of(id, mine), 1);
	/* A new session finds the same Space. */
	session_on(ws_url, tok, sid2, sizeof(sid2));
	a = tool_by(tok, ws_url, sid2, 1, "browser_noop", "{}");
	cr_assert(json_is_false(json_object_get(result_of(&a), "isError")),
	    "%s", a.body);
	done(&a);
	cr_assert_eq(open_spaces_of(id, mine), 1);
	cr_assert_eq(tasks_of(mine), 2);
	a = tool_by(tok, ws_url, sid2, 2, "browser_space_close", "{}");
	cr_assert(json_is_false(json_object_get(result_of(&a), "isError")),
	    "%s", a.body);
	cr_assert_not_null(strstr(text_of(&a), "clos"), "%s", a.body);
	done(&a);
}

Test(mcp, a_session_answers_only_to_its_principal, .init = setup,
    .fini = teardown)
{
	char sid[128], id[CM_ID_MAX + 1], tok[CM_TOKEN_MAX + 1];
	struct answer a;

	hf_principal(&env, "operator", "someone", "member", id, tok);
	session_on(url, env.manager, sid, sizeof(sid));
	a = call("POST", url, tok, sid, NULL,
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
	cr_assert_eq(a.status, 404, "%s", a.body);
	done(&a);
	/* Another member's Space: no session for them at all. */
	a = call("POST", url, tok, NULL, NULL, init_body);
	cr_assert(
	    a.status == 404 || a.status == 403, "%d %s", a.status, a.body);
	done(&a);
}

/* ---- a real browser ------------------------------------------------ */

static struct tk_pages *pages;
static int pages_port;

static void
browser_setup(void)
{
	char inst[CM_ID_MAX + 1];

	cr_assert_not_null(pages = tk_pages_start(&pages_port));
	hf_start(&env, "mcpb", 0, NULL);
	hf_managed_instance(&env, "chromium-mcp", inst);
	cr_assert_eq(hf_create(&env, env.manager, inst, "operator",
	                 env.sf.w.operator_id, NULL, space),
	    201);
	hf_path(&env, url, sizeof(url), NULL, space, "/mcp");
}

static void
browser_teardown(void)
{
	hf_stop(&env);
	tk_pages_stop(pages);
	tk_cleanup();
}

/* A tool call that must succeed; its text (the answer is kept in a). */
static const char *
ok_tool(struct answer *a, const char *sid, int id, const char *name,
    const char *args)
{
	*a = tool(url, sid, id, name, args);
	cr_assert_eq(a->status, 200, "%s: %d %s", name, a->status, a->body);
	cr_assert(json_is_false(json_object_get(result_of(a), "isError")),
	    "%s: %s", name, a->body);
	cr_assert_not_null(text_of(a), "%s: %s", name, a->body);
	return text_of(a);
}

/* An agent signs in on a page by refs alone, sees each action's outcome
 * in its answer, drops its session, and a new one finds the same page. */
Test(mcp, an_agent_drives_a_real_browser_by_refs, .init = browser_setup,
    .fini = browser_teardown, .timeout = 240)
{
	static const unsigned char png_head[] = {0x89, 'P', 'N', 'G', '\r',
	    '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
	char sid[128], args[256], user[32], pw[32], button[32];
	struct answer a;
	const char *t, *data;
	unsigned char *raw;
	int n;

	session_on(url, env.manager, sid, sizeof(sid));
	snprintf(args, sizeof(args), "{\"url\":\"http://127.0.0.1:%d/login\"}",
	    pages_port);
	/* The navigate's answer holds the outline: no second call. */
	t = ok_tool(&a, sid, 1, "browser_navigate", args);
	cr_assert_not_null(strstr(t, "title: Sign in"), "%s", t);
	df_ref_of(t, "textbox \"User\"", user, sizeof(user));
	df_ref_of(t, "textbox \"Password\"", pw, sizeof(pw));
	df_ref_of(t, "button \"Sign in\"", button, sizeof(button));
	done(&a);
	snprintf(
	    args, sizeof(args), "{\"ref\":\"%s\",\"text\":\"alice\"}", user);
	t = ok_tool(&a, sid, 2, "browser_type", args);
	cr_assert_not_null(strstr(t, "textbox \"User\""), "%s", t);
	done(&a);
	snprintf(args, sizeof(args), "{\"ref\":\"%s\",\"text\":\"pw\"}", pw);
	done((ok_tool(&a, sid, 3, "browser_type", args), &a));
	snprintf(args, sizeof(args), "{\"ref\":\"%s\"}", button);
	t = ok_tool(&a, sid, 4, "browser_click", args);
	cr_assert_not_null(strstr(t, "heading \"Second page\""), "%s", t);
	done(&a);
	cr_assert_eq(tk_pages_hits(pages, "/next"), 1);

	/* The session goes; the Space and its page stay. */
	a = call("DELETE", url, env.manager, sid, NULL, NULL);
	cr_assert_eq(a.status, 204);
	done(&a);
	session_on(url, env.manager, sid, sizeof(sid));
	t = ok_tool(&a, sid, 1, "browser_snapshot", "{}");
	cr_assert_not_null(strstr(t, "user=alice"), "%s", t);
	cr_assert_not_null(strstr(t, "heading \"Second page\""), "%s", t);
	done(&a);
	ok_tool(&a, sid, 2, "browser_screenshot", "{}");
	data = json_string_value(json_object_get(
	    json_array_get(json_object_get(result_of(&a), "content"), 1),
	    "data"));
	cr_assert_not_null(data, "%s", a.body);
	raw = malloc(strlen(data));
	cr_assert_not_null(raw);
	n = EVP_DecodeBlock(
	    raw, (const unsigned char *)data, (int)strlen(data));
	cr_assert_gt(n, 24);
	cr_assert_eq(memcmp(raw, png_head, sizeof(png_head)), 0);
	cr_assert_gt(
	    (raw[16] << 24 | raw[17] << 16 | raw[18] << 8 | raw[19]), 0);
	cr_assert_gt(
	    (raw[20] << 24 | raw[21] << 16 | raw[22] << 8 | raw[23]), 0);
	free(raw);
	done(&a);
	cr_assert_eq(tk_pages_hits(pages, "/next"), 1);
}
