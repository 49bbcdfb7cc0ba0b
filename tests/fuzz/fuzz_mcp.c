/*
 * fuzz_mcp.c: libFuzzer target for MCP's JSON-RPC layer (api/mcp_rpc.c).
 *
 * The bytes are a POST's body.  Checked beyond "no crash":
 *   - a message taken is an object of jsonrpc "2.0", and its kind agrees
 *     with its members: a request has a method and an id, a notification
 *     a method and no id, a response an id and no method;
 *   - an id read is JSON text that parses back to an integer or a string
 *     of at most CM_MCP_ID_MAX bytes;
 *   - a refusal is -32700 or -32600 with a reason, and its id is "null"
 *     or an id as above;
 *   - the answers built for any id are JSON that parses.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_rpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

_Noreturn static void
die(const char *what)
{
	fprintf(stderr, "fuzz_mcp: %s\n", what);
	abort();
}

static void
check_id(const char *id)
{
	json_t *v;

	if (strcmp(id, "null") == 0)
		return;
	if ((v = json_loads(id, JSON_DECODE_ANY, NULL)) == NULL)
		die("an id that is no JSON");
	if (!json_is_integer(v) &&
	    !(json_is_string(v) && json_string_length(v) <= CM_MCP_ID_MAX))
		die("an id that is neither an integer nor a short string");
	json_decref(v);
}

static void
check_answer(char *text)
{
	json_t *v;

	if (text == NULL)
		return;
	if ((v = json_loads(text, 0, NULL)) == NULL)
		die("an answer that is no JSON");
	json_decref(v);
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct api_rpc m;
	const char *why = NULL;
	int rc = api_rpc_parse((const char *)data, size, &m, &why);

	if (rc != 0) {
		if ((rc != API_RPC_PARSE_ERROR &&
		        rc != API_RPC_INVALID_REQUEST) ||
		    why == NULL || m.msg != NULL)
			die("a refusal without its code or reason");
		check_id(m.id);
		check_answer(api_rpc_error(m.id, rc, why));
		return 0;
	}
	if (!json_is_object(m.msg))
		die("a message taken that is no object");
	switch (m.kind) {
	case API_RPC_REQUEST:
		if (m.method == NULL || m.id[0] == '\0')
			die("a request without method or id");
		check_id(m.id);
		break;
	case API_RPC_NOTIFICATION:
		if (m.method == NULL || m.id[0] != '\0')
			die("a notification with an id, or no method");
		break;
	case API_RPC_RESPONSE:
		if (m.method != NULL || m.id[0] == '\0')
			die("a response with a method, or no id");
		check_id(m.id);
		break;
	}
	if (m.params != NULL && !json_is_object(m.params))
		die("params that are no object");
	check_answer(api_rpc_result(m.id, json_object()));
	check_answer(api_rpc_error(m.id, API_RPC_METHOD_NOT_FOUND, "x"));
	api_rpc_free(&m);
	return 0;
}
