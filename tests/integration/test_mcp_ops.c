/*
 * MCP as an operator and an attacker see it, over real HTTP against the
 * real service on the fake runtime: the MCP metrics move exactly with
 * the sessions and the calls; who may use each URL (the REST routes'
 * answers, on both URLs, a session never standing for a token); and
 * hostile messages and a body that never ends, each refused, and a
 * flood of initializes held at its bounds (a principal's own oldest
 * session ends, a new principal is refused when the table is full),
 * while the clients already in are served.
 */
#include <criterion/criterion.h>
#include <pthread.h>

#include "mcp_fixture.h"
#include "raw_fixture.h"

TestSuite(mcp_ops, .timeout = 120);

static void
setup(void)
{
	mf_start("mcpops", 3);
}

static void
teardown(void)
{
	hf_stop(&env);
}

static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}";

/* The value of one sample of a fresh scrape; -1 when absent. */
static double
sample(const char *key)
{
	char *text = NULL;
	double v;

	cr_assert_eq(
	    tk_http(&env.sf.p, "GET", "/metrics", NULL, NULL, NULL, &text),
	    200);
	v = tk_prom_sample(text, key);
	free(text);
	return v;
}

static double
calls(const char *tool, const char *outcome)
{
	char key[256];

	snprintf(key, sizeof(key),
	    "spaced_mcp_tool_calls_total{tool=\"%s\",outcome=\"%s\"}", tool,
	    outcome);
	return sample(key);
}

/* The status of a request's answer, the answer dropped. */
static int
status_of(struct answer a)
{
	int st = a.status;

	done(&a);
	return st;
}

/* ---- metrics -------------------------------------------------------- */

Test(mcp_ops, the_metrics_count_sessions_and_calls_exactly, .init = setup,
    .fini = teardown)
{
	char sid[3][128];
	struct slow s;
	pthread_t th;

	cr_assert_eq(sample("spaced_mcp_sessions"), 0);
	cr_assert_eq(calls("browser_noop", "ok"), -1, "no call, no series");
	for (int i = 0; i < 3; i++)
		session_on(url, env.manager, sid[i], sizeof(sid[i]));
	cr_assert_eq(sample("spaced_mcp_sessions"), 3);

	cr_assert_eq(
	    status_of(tool(url, sid[0], 1, "browser_noop", "{}")), 200);
	cr_assert_eq(
	    status_of(tool(url, sid[1], 2, "browser_noop", "{}")), 200);
	cr_assert_eq(status_of(tool(url, sid[0], 3, "browser_fail",
	                 "{\"code\": \"boom\"}")),
	    200);
	/* Args its schema refuses: the submit refuses them. */
	cr_assert_eq(
	    status_of(tool(url, sid[0], 6, "browser_fail", "{}")), 200);
	cr_assert_eq(
	    status_of(tool(url, sid[0], 4, "browser_nothing", "{}")), 200);
	/* Pings and lists are no tool calls. */
	cr_assert_eq(status_of(call("POST", url, env.manager, sid[2], NULL,
	                 "{\"jsonrpc\":\"2.0\",\"id\":5,"
	                 "\"method\":\"tools/list\"}")),
	    200);
	cr_assert_eq(calls("browser_noop", "ok"), 2);
	cr_assert_eq(calls("browser_noop", "tool_error"), 0);
	cr_assert_eq(calls("browser_fail", "tool_error"), 1);
	cr_assert_eq(calls("browser_fail", "ok"), 0);
	cr_assert_eq(calls("browser_fail", "refused"), 1);
	cr_assert_eq(calls("unknown", "invalid"), 1);
	cr_assert_eq(calls("browser_nothing", "invalid"), -1);

	/* A call while another runs is busy; the one that ran is ok. */
	memset(&s, 0, sizeof(s));
	snprintf(s.sid, sizeof(s.sid), "%s", sid[2]);
	cr_assert_eq(pthread_create(&th, NULL, slow_call, &s), 0);
	cr_assert(tk_wait_until(running, NULL, HF_WAIT_MS));
	cr_assert_eq(
	    status_of(tool(url, sid[1], 21, "browser_noop", "{}")), 200);
	cr_assert_eq(calls("browser_noop", "busy"), 1);
	pthread_join(th, NULL);
	cr_assert(json_is_false(json_object_get(result_of(&s.a), "isError")),
	    "%s", s.a.body);
	done(&s.a);
	cr_assert_eq(calls("browser_sleep", "ok"), 1);
	cr_assert_eq(calls("browser_noop", "ok"), 2);

	/* The workspace URL: its own tool, a call that opens a Space. */
	cr_assert_eq(
	    status_of(tool(ws_url, NULL, 1, "browser_noop", "{}")), 400);
	cr_assert_eq(calls("browser_noop", "ok"), 2, "no session, no call");

	cr_assert_eq(
	    status_of(call("DELETE", url, env.manager, sid[1], NULL, NULL)),
	    204);
	cr_assert_eq(sample("spaced_mcp_sessions"), 2);
	cr_assert_eq(
	    status_of(call("DELETE", url, env.manager, sid[1], NULL, NULL)),
	    404);
	cr_assert_eq(sample("spaced_mcp_sessions"), 2, "ended once");
}

/* ---- who may use each URL ------------------------------------------ */

/* initialize's status on path as token, and the WWW-Authenticate. */
static int
init_status(const char *path, const char *token, char *auth, size_t len)
{
	struct answer a = call("POST", path, token, NULL, NULL, init_body);
	int st = a.status;

	if (auth != NULL)
		snprintf(auth, len, "%s", a.auth);
	done(&a);
	return st;
}

Test(mcp_ops, each_url_answers_as_the_rest_routes_do, .init = setup,
    .fini = teardown)
{
	char a_id[CM_ID_MAX + 1], a_tok[CM_TOKEN_MAX + 1];
	char b_id[CM_ID_MAX + 1], b_tok[CM_TOKEN_MAX + 1];
	char o_id[CM_ID_MAX + 1], o_tok[CM_TOKEN_MAX + 1];
	char r_tok[CM_TOKEN_MAX + 1], tok_id[CM_ID_MAX + 1];
	char ws2[CM_ID_MAX + 1], b_space[CM_ID_MAX + 1], b_url[512];
	char foreign[512], ws2_url[512], path[256], auth[128], sid[128];
	char rsid[128];
	struct answer a;
	json_t *sp;

	hf_principal(&env, "operator", "member-a", "member", a_id, a_tok);
	hf_principal(&env, "operator", "member-b", "member", b_id, b_tok);
	cr_assert_eq(hf_create(&env, env.manager, env.sf.w.instance_id[1],
	                 "operator", b_id, NULL, b_space),
	    201);
	hf_path(&env, b_url, sizeof(b_url), NULL, b_space, "/mcp");
	af_create(&env.af, "/api/v1/admin/workspaces", "{\"name\": \"w2\"}",
	    "workspace_id", ws2);
	hf_principal(&env, "operator", "outsider", NULL, o_id, o_tok);
	af_member_put(&env.af, ws2, o_id, "manager");
	snprintf(foreign, sizeof(foreign),
	    "/api/v1/workspaces/%s/browser-spaces/%s/mcp", ws2, space);
	snprintf(ws2_url, sizeof(ws2_url), "/api/v1/workspaces/%s/mcp", ws2);

	/* Another member's Space: 403, as submitting to it is. */
	cr_assert_eq(init_status(b_url, a_tok, NULL, 0), 403);
	cr_assert_eq(init_status(url, b_tok, NULL, 0), 403);
	cr_assert_eq(init_status(b_url, b_tok, NULL, 0), 200);
	cr_assert_eq(init_status(b_url, env.manager, NULL, 0), 200);
	/* A member of another workspace: 403 on both URLs; a Space of this
	 * one named under its own workspace: 404. */
	cr_assert_eq(init_status(url, o_tok, NULL, 0), 403);
	cr_assert_eq(init_status(ws_url, o_tok, NULL, 0), 403);
	cr_assert_eq(init_status(foreign, o_tok, NULL, 0), 404);
	cr_assert_eq(init_status(ws2_url, o_tok, NULL, 0), 200);

	/* A revoked token: 401 on both URLs, its session no key. */
	af_issue(&env.af, a_id, NULL, tok_id, r_tok);
	session_on(ws_url, r_tok, rsid, sizeof(rsid));
	snprintf(path, sizeof(path), "/api/v1/admin/tokens/%s", tok_id);
	hf_expect(&env, "DELETE", path, env.af.admin, NULL, 200, NULL);
	cr_assert_eq(init_status(ws_url, r_tok, auth, sizeof(auth)), 401);
	cr_assert_str_eq(auth, "Bearer realm=\"spaced\"");
	cr_assert_eq(init_status(b_url, r_tok, auth, sizeof(auth)), 401);
	cr_assert_str_eq(auth, "Bearer realm=\"spaced\"");
	a = call("POST", ws_url, r_tok, rsid, NULL, ping);
	cr_assert_eq(a.status, 401, "%s", a.body);
	cr_assert_str_eq(a.auth, "Bearer realm=\"spaced\"");
	done(&a);

	/* The workspace URL is the caller's own Space only: member a's
	 * call opens one of its own, and never touches b's. */
	session_on(ws_url, a_tok, sid, sizeof(sid));
	a = tool_by(a_tok, ws_url, sid, 1, "browser_noop", "{}");
	cr_assert(json_is_false(json_object_get(result_of(&a), "isError")),
	    "%s", a.body);
	done(&a);
	cr_assert_eq(tasks_of(b_space), 0);
	cr_assert_eq(tasks_of(space), 0);
	a = tool_by(a_tok, ws_url, sid, 2, "browser_space_close", "{}");
	cr_assert(json_is_false(json_object_get(result_of(&a), "isError")),
	    "%s", a.body);
	done(&a);
	sp = hf_space(&env, NULL, b_space);
	cr_assert_str_eq(
	    json_string_value(json_object_get(sp, "status")), "idle");
	json_decref(sp);

	/* A member removed from the workspace: its live session is no
	 * right; each URL refuses it as the REST routes do. */
	session_on(b_url, b_tok, rsid, sizeof(rsid));
	snprintf(path, sizeof(path), "/api/v1/admin/workspaces/%s/members/%s",
	    hf_ws(&env), a_id);
	hf_expect(&env, "DELETE", path, env.af.admin, NULL, 200, NULL);
	a = call("POST", ws_url, a_tok, sid, NULL,
	    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}");
	cr_assert_eq(a.status, 403, "%s", a.body);
	done(&a);
	a = call("POST", ws_url, a_tok, sid, NULL, ping);
	cr_assert_eq(a.status, 403, "%s", a.body);
	done(&a);
	cr_assert_eq(
	    status_of(call("POST", b_url, b_tok, rsid, NULL, ping)), 200);
}

/* ---- hostile messages ---------------------------------------------- */

/* A message text of depth levels of params, {"a": ...} each. */
static char *
nested(int depth)
{
	size_t n = (size_t)depth * 6 + 128;
	char *b = malloc(n);
	size_t at;

	cr_assert_not_null(b);
	at = (size_t)snprintf(b, n,
	    "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/list\","
	    "\"params\":");
	for (int i = 0; i < depth; i++)
		at += (size_t)snprintf(b + at, n - at, "{\"a\":");
	at += (size_t)snprintf(b + at, n - at, "1");
	for (int i = 0; i < depth; i++)
		b[at++] = '}';
	snprintf(b + at, n - at, "}");
	return b;
}

Test(mcp_ops, hostile_messages_get_the_documented_errors, .init = setup,
    .fini = teardown)
{
	char sid[128], body[1024], id[CM_MCP_ID_MAX + 2], *deep;
	struct answer a;

	session_on(url, env.manager, sid, sizeof(sid));
	/* A batch, even of one good message. */
	snprintf(body, sizeof(body), "[%s]", ping);
	a = call("POST", url, env.manager, sid, NULL, body);
	cr_assert_eq(a.status, 400, "%s", a.body);
	cr_assert_eq(rpc_code(&a), -32600, "%s", a.body);
	done(&a);
	/* Ids: the widest integer is echoed; past it, a real, or a string
	 * past CM_MCP_ID_MAX bytes is refused. */
	a = call("POST", url, env.manager, sid, NULL,
	    "{\"jsonrpc\":\"2.0\",\"id\":9223372036854775807,"
	    "\"method\":\"ping\"}");
	cr_assert_eq(a.status, 200, "%s", a.body);
	cr_assert_not_null(
	    strstr(a.body, "\"id\":9223372036854775807"), "%s", a.body);
	done(&a);
	a = call("POST", url, env.manager, sid, NULL,
	    "{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999999999,"
	    "\"method\":\"ping\"}");
	cr_assert_eq(a.status, 400, "%s", a.body);
	cr_assert_eq(rpc_code(&a), -32700, "%s", a.body);
	done(&a);
	a = call("POST", url, env.manager, sid, NULL,
	    "{\"jsonrpc\":\"2.0\",\"id\":1e300,\"method\":\"ping\"}");
	cr_assert_eq(rpc_code(&a), -32600, "%s", a.body);
	done(&a);
	memset(id, 'x', sizeof(id) - 1);
	id[sizeof(id) - 1] = '\0';
	snprintf(body, sizeof(body),
	    "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"ping\"}", id);
	a = call("POST", url, env.manager, sid, NULL, body);
	cr_assert_eq(a.status, 400, "%s", a.body);
	cr_assert_eq(rpc_code(&a), -32600, "%s", a.body);
	cr_assert_null(strstr(a.body, id), "the id is not echoed");
	done(&a);
	id[CM_MCP_ID_MAX] = '\0';
	snprintf(body, sizeof(body),
	    "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"ping\"}", id);
	cr_assert_eq(status_of(call("POST", url, env.manager, sid, NULL, body)),
	    200, "an id of CM_MCP_ID_MAX bytes is taken");
	/* Nesting: the message's own level and CM_MCP_DEPTH_MAX - 1 of
	 * params are taken, one more is not. */
	deep = nested(CM_MCP_DEPTH_MAX - 1);
	cr_assert_eq(
	    status_of(call("POST", url, env.manager, sid, NULL, deep)), 200);
	free(deep);
	deep = nested(CM_MCP_DEPTH_MAX);
	a = call("POST", url, env.manager, sid, NULL, deep);
	cr_assert_eq(a.status, 400, "%s", a.body);
	cr_assert_eq(rpc_code(&a), -32700, "%s", a.body);
	done(&a);
	free(deep);
	deep = nested(100000);
	a = call("POST", url, env.manager, sid, NULL, deep);
	cr_assert(a.status == 400 || a.status == 413, "%d", a.status);
	done(&a);
	free(deep);
	/* Methods it does not know, with and without a slash. */
	for (int i = 0; i < 3; i++) {
		static const char *const m[] = {
		    "resources/list", "prompts/get", "x"};

		snprintf(body, sizeof(body),
		    "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\"}", i,
		    m[i]);
		a = call("POST", url, env.manager, sid, NULL, body);
		cr_assert_eq(rpc_code(&a), -32601, "%s: %s", m[i], a.body);
		done(&a);
	}
	/* The session lived through it all. */
	cr_assert_eq(
	    status_of(call("POST", url, env.manager, sid, NULL, ping)), 200);
}

Test(mcp_ops, a_body_that_never_ends_is_cut_and_others_are_served,
    .init = setup, .fini = teardown)
{
	char sid[128], head[1024], buf[4096];
	int fd, n;
	bool eof;

	session_on(url, env.manager, sid, sizeof(sid));
	fd = raw_connect(&env);
	n = snprintf(head, sizeof(head),
	    "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    "Authorization: Bearer %s\r\nMcp-Session-Id: %s\r\n"
	    "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{",
	    url, env.manager, sid, CM_BODY_MAX - 1);
	raw_send(fd, head, (size_t)n);
	/* While it hangs, the same session and the service answer. */
	for (int i = 0; i < 5; i++)
		cr_assert_eq(
		    status_of(call("POST", url, env.manager, sid, NULL, ping)),
		    200);
	cr_assert_eq(
	    tk_http(&env.sf.p, "GET", "/healthz", NULL, NULL, NULL, NULL), 200);
	/* It is answered (408) and closed within the body's bound. */
	raw_read_until(fd, buf, sizeof(buf), NULL,
	    CM_HTTP_BODY_TIMEOUT_MS + CM_HTTP_LINGER_MS + 2000, &eof);
	close(fd);
	cr_assert(eof, "never closed: %.80s", buf);
	cr_assert_eq(strncmp(buf, "HTTP/1.1 408", 12), 0, "%.120s", buf);
}

/* initialize on the workspace URL as token: its status. */
static int
init_on_ws(const char *token)
{
	return init_status(ws_url, token, NULL, 0);
}

#define N_PRINCIPALS (CM_MCP_SESSIONS_MAX / CM_MCP_SESSIONS_PER_PRINCIPAL + 1)
#define N_INITS 1000

Test(mcp_ops, a_flood_of_initializes_is_held_at_each_bound, .init = setup,
    .fini = teardown, .timeout = 240)
{
	static char tok[N_PRINCIPALS][CM_TOKEN_MAX + 1];
	char id[CM_ID_MAX + 1], name[32], sid[128], first[128], last[128];
	int mine[N_PRINCIPALS] = {0}, total = 0, want, got;
	int n_ok = 0, n_503 = 0;

	/* One client in before the flood, the world's manager. */
	session_on(url, env.manager, sid, sizeof(sid));
	total = 1;
	for (int p = 0; p < N_PRINCIPALS; p++) {
		snprintf(name, sizeof(name), "flood-%d", p);
		hf_principal(&env, "operator", name, "member", id, tok[p]);
	}
	/* One principal far past its bound: each of its sessions past it
	 * ends its least recently used one, and the table holds its
	 * CM_MCP_SESSIONS_PER_PRINCIPAL newest. */
	session_on(ws_url, tok[0], first, sizeof(first));
	for (int i = 1; i < N_INITS / 10; i++)
		session_on(ws_url, tok[0], last, sizeof(last));
	cr_assert_eq(
	    status_of(call("POST", ws_url, tok[0], first, NULL, ping)), 404);
	cr_assert_eq(
	    status_of(call("POST", ws_url, tok[0], last, NULL, ping)), 200);
	mine[0] = CM_MCP_SESSIONS_PER_PRINCIPAL;
	total += mine[0];
	cr_assert_eq(sample("spaced_mcp_sessions"), total);
	/* Then the others in turn, past the table's bound: a new principal
	 * is refused there, one at its own bound still makes room in its
	 * own. */
	for (int i = N_INITS / 10; i < N_INITS; i++) {
		int p = 1 + i % (N_PRINCIPALS - 1);

		want = mine[p] < CM_MCP_SESSIONS_PER_PRINCIPAL &&
		               total >= CM_MCP_SESSIONS_MAX
		           ? 503
		           : 200;
		got = init_on_ws(tok[p]);
		cr_assert_eq(got, want,
		    "initialize %d (principal %d, %d of "
		    "its own, %d in all): %d, want %d",
		    i, p, mine[p], total, got, want);
		if (got == 200 && mine[p] < CM_MCP_SESSIONS_PER_PRINCIPAL) {
			mine[p]++;
			total++;
		}
		n_ok += got == 200;
		n_503 += got == 503;
		/* The client already in is served throughout. */
		if (i % 100 == 0)
			cr_assert_eq(status_of(call("POST", url, env.manager,
			                 sid, NULL, ping)),
			    200);
	}
	cr_assert_eq(total, CM_MCP_SESSIONS_MAX);
	cr_assert_eq(
	    n_ok, CM_MCP_SESSIONS_MAX - 1 - CM_MCP_SESSIONS_PER_PRINCIPAL);
	cr_assert_gt(n_503, 0);
	cr_assert_eq(sample("spaced_mcp_sessions"), CM_MCP_SESSIONS_MAX);
	cr_assert_eq(
	    status_of(call("POST", url, env.manager, sid, NULL, ping)), 200);
	/* The full table still takes the principal at its bound, in its
	 * own room: its session used last is not the one ended. */
	cr_assert_eq(
	    status_of(call("POST", ws_url, tok[0], last, NULL, ping)), 200);
	cr_assert_eq(init_on_ws(tok[0]), 200);
	cr_assert_eq(
	    status_of(call("POST", ws_url, tok[0], last, NULL, ping)), 200);
	cr_assert_eq(sample("spaced_mcp_sessions"), CM_MCP_SESSIONS_MAX);
	/* One session ended is one more in. */
	cr_assert_eq(
	    status_of(call("DELETE", url, env.manager, sid, NULL, NULL)), 204);
	cr_assert_eq(init_on_ws(env.manager), 200);
	cr_assert_eq(init_on_ws(env.manager), 503);
	cr_assert_eq(sample("spaced_mcp_sessions"), CM_MCP_SESSIONS_MAX);
}
