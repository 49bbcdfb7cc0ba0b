/*
 * mcp_rpc.c: a JSON-RPC message of MCP, judged and parsed (mcp_rpc.h).
 */
#include "mcp_rpc.h"

#include "json.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The id's JSON text into out; false when it is not a valid id. */
static bool
id_text(const json_t *id, char *out, size_t len)
{
	char *t;
	bool ok;

	if (json_is_integer(id)) {
		snprintf(out, len, "%lld", (long long)json_integer_value(id));
		return true;
	}
	if (!json_is_string(id) || json_string_length(id) > CM_MCP_ID_MAX)
		return false;
	if ((t = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT)) == NULL)
		return false;
	/* An escaped id may be longer than its bytes: it must still fit. */
	ok = strlen(t) < len;
	if (ok)
		memcpy(out, t, strlen(t) + 1);
	free(t);
	return ok;
}

static int
refuse(struct api_rpc *m, int code, const char *text, const char **why)
{
	json_decref(m->msg);
	m->msg = NULL;
	m->method = NULL;
	m->params = NULL;
	*why = text;
	return code;
}

int
api_rpc_parse(const char *body, size_t len, struct api_rpc *m, const char **why)
{
	static const char *const members[] = {
	    "jsonrpc", "id", "method", "params", "result", "error", NULL};
	json_t *v, *id, *params;
	char err[128];
	bool has_result, has_error;

	memset(m, 0, sizeof(*m));
	snprintf(m->id, sizeof(m->id), "null");
	/* Bounded and strict, as every input from outside: the body's
	 * size, its nesting, duplicate keys. */
	if (body == NULL || len == 0 ||
	    cm_json_parse(body, len, CM_BODY_MAX, CM_MCP_DEPTH_MAX, &m->msg,
	        err, sizeof(err)) != 0)
		return refuse(m, API_RPC_PARSE_ERROR,
		    "the body is not JSON, or nests deeper than " CM_STR(
		        CM_MCP_DEPTH_MAX) " levels",
		    why);
	if (json_is_array(m->msg))
		return refuse(m, API_RPC_INVALID_REQUEST,
		    "a batch is not taken: send one message per request", why);
	if (!json_is_object(m->msg))
		return refuse(m, API_RPC_INVALID_REQUEST,
		    "a message is a JSON object", why);
	id = json_object_get(m->msg, "id");
	if (id != NULL && !id_text(id, m->id, sizeof(m->id))) {
		snprintf(m->id, sizeof(m->id), "null");
		return refuse(m, API_RPC_INVALID_REQUEST,
		    "an id is an integer or a string of at most " CM_STR(
		        CM_MCP_ID_MAX) " bytes",
		    why);
	}
	v = json_object_get(m->msg, "jsonrpc");
	if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0)
		return refuse(
		    m, API_RPC_INVALID_REQUEST, "jsonrpc must be \"2.0\"", why);
	if (cm_json_only_keys(m->msg, members, err, sizeof(err)) != 0)
		return refuse(m, API_RPC_INVALID_REQUEST,
		    "a message has a member JSON-RPC does not know", why);
	has_result = json_object_get(m->msg, "result") != NULL;
	has_error = json_object_get(m->msg, "error") != NULL;
	v = json_object_get(m->msg, "method");
	if (v == NULL) {
		if (id == NULL || has_result == has_error)
			return refuse(m, API_RPC_INVALID_REQUEST,
			    "a message is a request, a notification or a "
			    "response",
			    why);
		m->kind = API_RPC_RESPONSE;
		return 0;
	}
	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    json_string_length(v) > 64 || has_result || has_error)
		return refuse(m, API_RPC_INVALID_REQUEST,
		    "method must be a name of at most 64 bytes", why);
	params = json_object_get(m->msg, "params");
	if (params != NULL && !json_is_object(params))
		return refuse(m, API_RPC_INVALID_REQUEST,
		    "params must be an object", why);
	m->method = json_string_value(v);
	m->params = params;
	m->kind = id == NULL ? API_RPC_NOTIFICATION : API_RPC_REQUEST;
	if (id == NULL)
		m->id[0] = '\0';
	return 0;
}

void
api_rpc_free(struct api_rpc *m)
{
	json_decref(m->msg);
	memset(m, 0, sizeof(*m));
}

/* {"jsonrpc":"2.0","id":<id>,<member>} with member's text appended. */
static char *
envelope(const char *id, const char *member, const char *text)
{
	size_t n = strlen(id) + strlen(member) + strlen(text) + 32;
	char *out = malloc(n);

	if (out != NULL)
		snprintf(out, n, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"%s\":%s}",
		    id[0] != '\0' ? id : "null", member, text);
	return out;
}

char *
api_rpc_result(const char *id, json_t *result)
{
	char *text, *out;

	if (result == NULL)
		return NULL;
	text = json_dumps(result, JSON_COMPACT);
	json_decref(result);
	if (text == NULL)
		return NULL;
	out = envelope(id, "result", text);
	free(text);
	return out;
}

static const char *const log_names[] = {NULL, "debug", "info", "notice",
    "warning", "error", "critical", "alert", "emergency"};

int
api_mcp_log_level(const char *name)
{
	for (int i = API_MCP_LOG_DEBUG;
	     name != NULL && i <= API_MCP_LOG_EMERGENCY; i++)
		if (strcmp(name, log_names[i]) == 0)
			return i;
	return API_MCP_LOG_NONE;
}

const char *
api_mcp_log_name(int level)
{
	return level >= API_MCP_LOG_DEBUG && level <= API_MCP_LOG_EMERGENCY
	           ? log_names[level]
	           : NULL;
}

char *
api_rpc_error(const char *id, int code, const char *message)
{
	json_t *e = json_pack("{s:i, s:s}", "code", code, "message",
	    message != NULL ? message : "error");
	char *text, *out;

	if (e == NULL)
		return NULL;
	text = json_dumps(e, JSON_COMPACT);
	json_decref(e);
	if (text == NULL)
		return NULL;
	out = envelope(id, "error", text);
	free(text);
	return out;
}
