/*
 * mcp_session.h: MCP sessions, held in the api's memory.
 *
 * A session is a protocol convenience, never an authentication: every
 * request still carries its bearer token, and a session answers only to
 * the principal that opened it, on the URL it was opened on.  Losing one
 * (a restart of the api, DELETE, CM_MCP_SESSION_IDLE_S without a request,
 * crowded out by the principal's newer ones) loses nothing: the Space and its
 * page are in the store and the actor, and the client's next initialize finds
 * them.  At most CM_MCP_SESSIONS_MAX in all and CM_MCP_SESSIONS_PER_PRINCIPAL
 * per principal (a principal's session past that ends its least recently used
 * one: a client that never ends its sessions crowds out only its own).  The
 * table is shared by the api's workers, under one lock; each call is
 * O(CM_MCP_SESSIONS_MAX).
 */
#ifndef API_MCP_SESSION_H
#define API_MCP_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "limits.h"

#define API_MCP_SID_LEN (2 * CM_MCP_SESSION_ID_BYTES)

/* Whom a session answers to, and where. */
struct api_mcp_where {
	const char *principal_id;
	const char *workspace_id;
	const char *space_id; /* NULL: the workspace's URL */
};

/*
 * Opens a session for w with the protocol version agreed, its id (hex,
 * API_MCP_SID_LEN characters) into id.  now_s is a monotonic time.
 * Returns 0; 1 when the principal had CM_MCP_SESSIONS_PER_PRINCIPAL
 * already, and the least recently used of them was ended to make room;
 * 2 when the table is full of other principals' sessions.
 */
int api_mcp_session_open(const struct api_mcp_where *w, const char *version,
    int64_t now_s, char id[API_MCP_SID_LEN + 1]);
/* Whether id is a live session of w (and then it is used now_s, its
 * version into version when not NULL). */
bool api_mcp_session_find(const char *id, const struct api_mcp_where *w,
    int64_t now_s, char version[16]);
/* Sets the log level of id, a session of w (mcp_rpc.h's 1..8); false
 * when it is none.  A session's level is API_MCP_LOG_NONE until set. */
bool api_mcp_session_set_level(
    const char *id, const struct api_mcp_where *w, int level);
/* The log level of session id (API_MCP_LOG_NONE when it is none). */
int api_mcp_session_level(const char *id);
/* Whether any session has set a log level (a read without the lock:
 * a level set as it is read is seen by the next). */
bool api_mcp_sessions_logging(void);
/* Ends id, a session of w; false when it is none. */
bool api_mcp_session_end(const char *id, const struct api_mcp_where *w);
/* A tool call of session id: its JSON-RPC id (text) ran as task_id, kept
 * for a cancel (the last CM_MCP_PENDING_MAX of the session). */
void api_mcp_session_call(
    const char *id, const char *rpc_id, const char *task_id);
/* The task of session id's call rpc_id into task; false when none. */
bool api_mcp_session_task(const char *id, const struct api_mcp_where *w,
    const char *rpc_id, char task[CM_ID_MAX + 1]);
/* Sessions open now (idle ones past their time are dropped first). */
int api_mcp_sessions_open(int64_t now_s);

#endif
