/*
 * MCP's JSON-RPC layer (api/mcp_rpc.c) and its session table
 * (api/mcp_session.c): what a message is taken as, what is refused and
 * with which code, and the table's bounds and owners.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "mcp_rpc.h"
#include "mcp_session.h"

static int
parse(const char *body, struct api_rpc *m)
{
	const char *why = NULL;
	int rc = api_rpc_parse(body, strlen(body), m, &why);

	if (rc != 0)
		cr_assert_not_null(why);
	return rc;
}

Test(mcp_rpc, a_request_a_notification_and_a_response_are_told_apart)
{
	struct api_rpc m;

	cr_assert_eq(
	    parse("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}", &m), 0);
	cr_assert_eq(m.kind, API_RPC_REQUEST);
	cr_assert_str_eq(m.id, "7");
	cr_assert_str_eq(m.method, "ping");
	api_rpc_free(&m);
	cr_assert_eq(parse("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
	                   "initialized\"}",
	                 &m),
	    0);
	cr_assert_eq(m.kind, API_RPC_NOTIFICATION);
	cr_assert_str_eq(m.id, "");
	api_rpc_free(&m);
	cr_assert_eq(
	    parse("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}", &m), 0);
	cr_assert_eq(m.kind, API_RPC_RESPONSE);
	cr_assert_str_eq(m.id, "\"x\"");
	api_rpc_free(&m);
}

Test(mcp_rpc, what_is_no_one_message_is_refused_with_its_code)
{
	struct api_rpc m;
	char big[400], deep[600];

	cr_assert_eq(parse("{\"jsonrpc\":", &m), API_RPC_PARSE_ERROR);
	cr_assert_eq(
	    parse("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", &m),
	    API_RPC_INVALID_REQUEST);
	cr_assert_eq(
	    parse("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", &m),
	    API_RPC_INVALID_REQUEST);
	cr_assert_str_eq(m.id, "1"); /* the id, to answer with */
	cr_assert_eq(
	    parse("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"p\"}", &m),
	    API_RPC_INVALID_REQUEST);
	cr_assert_eq(
	    parse("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"p\"}", &m),
	    API_RPC_INVALID_REQUEST);
	cr_assert_eq(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\","
	                   "\"params\":[1]}",
	                 &m),
	    API_RPC_INVALID_REQUEST);
	cr_assert_eq(parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\","
	                   "\"extra\":1}",
	                 &m),
	    API_RPC_INVALID_REQUEST);
	cr_assert_eq(
	    parse(
	        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1,\"error\":{}}", &m),
	    API_RPC_INVALID_REQUEST);
	/* An id of 129 bytes. */
	snprintf(big, sizeof(big),
	    "{\"jsonrpc\":\"2.0\",\"id\":\"%0129d\",\"method\":\"p\"}", 0);
	cr_assert_eq(parse(big, &m), API_RPC_INVALID_REQUEST);
	cr_assert_str_eq(m.id, "null");
	/* Params nested 40 levels deep, balanced: refused for its depth;
	 * 20 levels are taken. */
	for (int levels = 40; levels >= 20; levels -= 20) {
		size_t n = (size_t)snprintf(deep, sizeof(deep),
		    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\","
		    "\"params\":");

		for (int i = 0; i < levels; i++)
			n += (size_t)snprintf(
			    deep + n, sizeof(deep) - n, "{\"a\":");
		n += (size_t)snprintf(deep + n, sizeof(deep) - n, "1");
		for (int i = 0; i <= levels; i++)
			n += (size_t)snprintf(deep + n, sizeof(deep) - n, "}");
		cr_assert_lt(n, sizeof(deep));
		if (levels == 40) {
			cr_assert_neq(parse(deep, &m), 0, "%s", deep);
		} else {
			cr_assert_eq(parse(deep, &m), 0, "%s", deep);
			api_rpc_free(&m);
		}
	}
}

Test(mcp_rpc, answers_carry_the_id_as_it_came)
{
	char *t = api_rpc_result("\"a\\\"b\"", json_pack("{s:i}", "x", 1));
	json_t *v = json_loads(t, 0, NULL);

	cr_assert_not_null(v, "%s", t);
	cr_assert_str_eq(json_string_value(json_object_get(v, "id")), "a\"b");
	json_decref(v);
	free(t);
	t = api_rpc_error("null", API_RPC_METHOD_NOT_FOUND, "Method not found");
	v = json_loads(t, 0, NULL);
	cr_assert(json_is_null(json_object_get(v, "id")));
	cr_assert_eq(json_integer_value(
	                 json_object_get(json_object_get(v, "error"), "code")),
	    -32601);
	json_decref(v);
	free(t);
}

Test(mcp_session, a_session_answers_only_to_its_principal_and_url)
{
	struct api_mcp_where a = {"p1", "w1", "s1"}, b = {"p2", "w1", "s1"},
	                     ws = {"p1", "w1", NULL};
	char id[API_MCP_SID_LEN + 1], id2[API_MCP_SID_LEN + 1], v[16];

	cr_assert_eq(api_mcp_session_open(&a, "2025-06-18", 100, id), 0);
	cr_assert_eq(api_mcp_session_open(&a, "2025-06-18", 100, id2), 0);
	cr_assert_str_neq(id, id2);
	cr_assert(api_mcp_session_find(id, &a, 101, v));
	cr_assert_str_eq(v, "2025-06-18");
	cr_assert_not(api_mcp_session_find(id, &b, 101, NULL));
	cr_assert_not(api_mcp_session_find(id, &ws, 101, NULL));
	cr_assert_not(api_mcp_session_end(id, &b));
	cr_assert(api_mcp_session_end(id, &a));
	cr_assert_not(api_mcp_session_find(id, &a, 102, NULL));
	/* Idle past its time, it is gone. */
	cr_assert(api_mcp_session_find(id2, &a, 102, NULL));
	cr_assert_not(
	    api_mcp_session_find(id2, &a, 102 + CM_MCP_SESSION_IDLE_S, NULL));
}

Test(mcp_session, the_bounds_hold_per_principal_and_in_all)
{
	char id[API_MCP_SID_LEN + 1], who[32];
	char first[CM_MCP_SESSIONS_PER_PRINCIPAL][API_MCP_SID_LEN + 1];
	struct api_mcp_where w = {"one", "w", NULL};
	int i;

	for (i = 0; i < CM_MCP_SESSIONS_PER_PRINCIPAL; i++)
		cr_assert_eq(
		    api_mcp_session_open(&w, "2025-06-18", 5, first[i]), 0);
	/* The first one used again: the second is the least recently used,
	 * and the next session ends it. */
	cr_assert(api_mcp_session_find(first[0], &w, 5, NULL));
	cr_assert_eq(api_mcp_session_open(&w, "2025-06-18", 5, id), 1);
	cr_assert_eq(api_mcp_sessions_open(5), CM_MCP_SESSIONS_PER_PRINCIPAL);
	cr_assert_not(api_mcp_session_find(first[1], &w, 5, NULL));
	cr_assert(api_mcp_session_find(first[0], &w, 5, NULL));
	cr_assert(api_mcp_session_find(id, &w, 5, NULL));
	for (i = 2; i < CM_MCP_SESSIONS_PER_PRINCIPAL; i++)
		cr_assert(api_mcp_session_find(first[i], &w, 5, NULL));
	for (i = 0; api_mcp_sessions_open(5) < CM_MCP_SESSIONS_MAX; i++) {
		struct api_mcp_where o = {who, "w", NULL};

		snprintf(who, sizeof(who), "p%d", i);
		cr_assert_eq(api_mcp_session_open(&o, "2025-06-18", 5, id), 0);
	}
	snprintf(who, sizeof(who), "late");
	{
		struct api_mcp_where o = {who, "w", NULL};

		cr_assert_eq(api_mcp_session_open(&o, "2025-06-18", 5, id), 2);
		/* A full table still takes a principal at its bound: it
		 * makes room in its own. */
		cr_assert_eq(api_mcp_session_open(&w, "2025-06-18", 5, id), 1);
		cr_assert_eq(api_mcp_sessions_open(5), CM_MCP_SESSIONS_MAX);
		/* Once the idle ones are gone, there is room. */
		cr_assert_eq(api_mcp_session_open(&o, "2025-06-18",
		                 5 + CM_MCP_SESSION_IDLE_S, id),
		    0);
	}
}

Test(mcp_session, a_log_level_is_the_sessions_own)
{
	char id[API_MCP_SID_LEN + 1], id2[API_MCP_SID_LEN + 1];
	struct api_mcp_where w = {"lg", "w", NULL}, x = {"lx", "w", NULL};

	cr_assert_eq(api_mcp_log_level("warning"), API_MCP_LOG_WARNING);
	cr_assert_eq(api_mcp_log_level("emergency"), API_MCP_LOG_EMERGENCY);
	cr_assert_eq(api_mcp_log_level("debug"), API_MCP_LOG_DEBUG);
	cr_assert_eq(api_mcp_log_level("Warning"), API_MCP_LOG_NONE);
	cr_assert_eq(api_mcp_log_level("verbose"), API_MCP_LOG_NONE);
	cr_assert_eq(api_mcp_log_level(NULL), API_MCP_LOG_NONE);
	cr_assert_str_eq(api_mcp_log_name(API_MCP_LOG_NOTICE), "notice");
	cr_assert_null(api_mcp_log_name(0));
	cr_assert_null(api_mcp_log_name(9));
	cr_assert_eq(api_mcp_session_open(&w, "2025-11-25", 9, id), 0);
	cr_assert_eq(api_mcp_session_open(&w, "2025-11-25", 9, id2), 0);
	cr_assert_eq(api_mcp_session_level(id), API_MCP_LOG_NONE);
	cr_assert_not(api_mcp_session_set_level(id, &x, API_MCP_LOG_INFO));
	cr_assert(api_mcp_session_set_level(id, &w, API_MCP_LOG_INFO));
	cr_assert_eq(api_mcp_session_level(id), API_MCP_LOG_INFO);
	cr_assert_eq(api_mcp_session_level(id2), API_MCP_LOG_NONE);
	cr_assert(api_mcp_session_end(id, &w));
	cr_assert_eq(api_mcp_session_level(id), API_MCP_LOG_NONE);
}

Test(mcp_session, a_call_is_found_by_its_id_for_a_cancel)
{
	struct api_mcp_where w = {"c", "w", "s"}, x = {"d", "w", "s"};
	char id[API_MCP_SID_LEN + 1], task[CM_ID_MAX + 1];

	cr_assert_eq(api_mcp_session_open(&w, "2025-06-18", 7, id), 0);
	api_mcp_session_call(id, "42", "task-42");
	cr_assert(api_mcp_session_task(id, &w, "42", task));
	cr_assert_str_eq(task, "task-42");
	cr_assert_not(api_mcp_session_task(id, &w, "43", task));
	cr_assert_not(api_mcp_session_task(id, &x, "42", task));
}
