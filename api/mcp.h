/*
 * mcp.h: the Model Context Protocol front of the api (Streamable HTTP,
 * revisions 2025-06-18 and 2025-11-25), on two URLs with one
 * implementation:
 *
 *   .../workspaces/{ws}/browser-spaces/{space}/mcp   bound to that Space
 *   .../workspaces/{ws}/mcp                          the caller's own open
 *       Space in ws, opened on a free bound instance by the first tool
 *       call when it has none (tool browser_space_close closes it)
 *
 * Every request is authenticated by its bearer token through the one auth
 * path; the session (mcp_session.h) only carries the protocol's state.
 * Each tools/call is one task, submitted through POST .../tasks's own
 * route with a request_id made of the session and the JSON-RPC id (a retry
 * is the same task), and parked through wait.h like ?wait=: no worker is
 * held while the task runs.  docs/api.md has the whole contract.
 */
#ifndef API_MCP_H
#define API_MCP_H

#include <jansson.h>
#include <stdbool.h>

#include "metrics.h"

struct api_ctx;
struct pr_task;

/* The routes: POST and DELETE of either URL (a GET is the router's
 * 405, with its Allow header: no stream is offered on GET). */
void api_mcp_post(struct api_ctx *c);
void api_mcp_delete(struct api_ctx *c);

/*
 * wait.h's answers of a parked tool call (c->later_rpc its id): t has
 * finished; the answer is its tool result.  A screenshot's image is read
 * from the store, so without store (the loop's answer from a row) that
 * one is not answered: false, and a worker answers it.
 */
bool api_mcp_finished(struct api_ctx *c, const struct pr_task *t, bool store);
/* The wait's bound came with t still running: a tool error saying so. */
void api_mcp_unfinished(struct api_ctx *c, const struct pr_task *t);
/* The wait's look failed (c holds the store's error, REST-shaped): a
 * tool error saying so, and that the same call again finds the task. */
void api_mcp_unlooked(struct api_ctx *c);

/* mcp_tools.c, for mcp.c: tools/list and tools/call of c's URL (the
 * session sid), answering the JSON-RPC request id. */
void api_mcp_tools_list(struct api_ctx *c, const char *id);
void api_mcp_tools_call(
    struct api_ctx *c, const char *sid, const char *id, const json_t *params);
/* mcp_result.c, for mcp_tools.c: the string v holds, or d; a tool
 * result of one text (an error when is_error); the tool result of t, a
 * finished task's DTO (a screenshot's image needs the store: without
 * store, NULL and *later). */
const char *api_mcp_str(const json_t *v, const char *d);
json_t *api_mcp_text_result(const char *text, bool is_error);
json_t *api_mcp_task_result(
    struct api_ctx *c, const json_t *t, bool store, bool *later);
/* The outcome (metrics.h) of a task that ended with status. */
enum api_mcp_outcome api_mcp_outcome(const char *status);
/* c answers 200 with the JSON-RPC text body (taken; NULL: out of
 * memory, a 500). */
void api_mcp_answer(struct api_ctx *c, int status, char *body);

#endif
