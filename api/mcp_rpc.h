/*
 * mcp_rpc.h: one JSON-RPC 2.0 message of MCP's Streamable HTTP transport,
 * judged and parsed, and the answers' text.  Pure functions: the fuzz
 * target and the unit tests call them with any bytes.
 *
 * One POST carries one message: a request (method and id), a
 * notification (method, no id) or a response (result or error, an id).
 * A batch (an array) is refused: MCP's revisions since 2025-06-18 have
 * none.  An id is a string of at most CM_MCP_ID_MAX bytes or an integer,
 * never null; a message nests at most CM_MCP_DEPTH_MAX arrays and
 * objects, judged on the raw bytes before any is parsed.
 */
#ifndef API_MCP_RPC_H
#define API_MCP_RPC_H

#include <jansson.h>
#include <stddef.h>

#include "limits.h"

/* JSON-RPC's error codes. */
#define API_RPC_PARSE_ERROR (-32700)
#define API_RPC_INVALID_REQUEST (-32600)
#define API_RPC_METHOD_NOT_FOUND (-32601)
#define API_RPC_INVALID_PARAMS (-32602)
#define API_RPC_INTERNAL_ERROR (-32603)

enum api_rpc_kind {
	API_RPC_REQUEST,
	API_RPC_NOTIFICATION,
	API_RPC_RESPONSE,
};

struct api_rpc {
	enum api_rpc_kind kind;
	json_t *msg;        /* owned: the message */
	const char *method; /* in msg; NULL for a response */
	json_t *params;     /* in msg: an object, or NULL when absent */
	/* The id as JSON text ("7", "\"a\""); "" for a notification, "null"
	 * when the message was refused before an id could be read. */
	char id[CM_MCP_ID_MAX + 3];
};

/*
 * Judges and parses body[0, len) into *m.  Returns 0, or a JSON-RPC error
 * code (API_RPC_PARSE_ERROR, API_RPC_INVALID_REQUEST) with *why, a static
 * text; then m->id is the id when one was read, else "null", and m holds
 * nothing to free.  On success api_rpc_free(m) releases it.
 */
int api_rpc_parse(
    const char *body, size_t len, struct api_rpc *m, const char **why);
void api_rpc_free(struct api_rpc *m);

/* The text of a response to id (JSON text, as in struct api_rpc) with
 * result (taken), or with an error; malloc'd, NULL out of memory. */
char *api_rpc_result(const char *id, json_t *result);
char *api_rpc_error(const char *id, int code, const char *message);

/*
 * MCP's log levels (RFC 5424's, least severe first) as numbers 1..8,
 * API_MCP_LOG_DEBUG..API_MCP_LOG_EMERGENCY; 0 is none.
 */
enum {
	API_MCP_LOG_NONE,
	API_MCP_LOG_DEBUG,
	API_MCP_LOG_INFO,
	API_MCP_LOG_NOTICE,
	API_MCP_LOG_WARNING,
	API_MCP_LOG_ERROR,
	API_MCP_LOG_CRITICAL,
	API_MCP_LOG_ALERT,
	API_MCP_LOG_EMERGENCY
};
/* The level named name (NULL or unknown: API_MCP_LOG_NONE). */
int api_mcp_log_level(const char *name);
/* The name of level (1..8); NULL for any other. */
const char *api_mcp_log_name(int level);

#endif
