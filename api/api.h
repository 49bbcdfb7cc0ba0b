/*
 * api.h: what the HTTP front's files share.  Internal to spaced-api.
 *
 * A request arrives on the connection loop (http.h), is queued, and one of
 * a small pool of workers runs it to the end: authenticate, authorize,
 * call the store, build the JSON answer.  The loop never blocks.  A read
 * the Spaces' view holds (view.h) is answered by the loop itself, through
 * the same route with the store out of reach (api_ctx.on_loop).
 */
#ifndef API_API_H
#define API_API_H

#include <jansson.h>
#include <nng/nng.h>
#include <stdbool.h>
#include <stddef.h>

#include "authz.h"
#include "config.h"
#include "errors.h"
#include "proto.h"
#include "view.h"

/* One HTTP request, as the worker sees it. */
struct api_req {
	const char *method;
	char path[CM_URL_MAX + 1]; /* percent-decoding is not needed: ids are
	                              plain */
	char query[CM_URL_MAX + 1];
	const char *body;
	size_t body_len;
	const char *authorization;
	const char *accept;
	const char *last_event_id;
	const char *content_type; /* NULL: absent */
	const char *host, *origin, *mcp_session,
	    *mcp_version; /* NULL: absent */
};

/* The answer: a status and a body the worker sends. */
struct api_res {
	int status;
	char *body;               /* malloc'd; NULL for none */
	size_t body_len;          /* bytes of body; 0: it is NUL-terminated */
	const char *content_type; /* static; NULL: application/json */
	/* Static header lines, each ending in CRLF, in place of the default
	 * Cache-Control: no-store; NULL: the default. */
	const char *headers;
	/* Room for header lines made for one answer (headers may point
	 * here): an artifact's Content-Disposition. */
	char header_buf[CM_ID_MAX + 96];
};

struct api_ctx {
	const struct cm_config *cfg;
	nng_socket store; /* REQ, shared by every worker */
	const struct api_req *req;
	struct api_res *res;
	/* The caller, once authenticated; valid for the request. */
	struct pr_rep auth;
	struct cm_identity id;
	/* Path parameters, by route. */
	const char *workspace_id;
	const char *space_id;
	const char *task_id;
	const char *artifact_name;
	char params[4][CM_FILE_NAME_MAX + 1]; /* ids, or a file's name */
	/* A route that answers later says so here, and sets no answer:
	 * API_LATER_WAIT (set by api_wait_park, wait.h) parks the request
	 * until task later_task finishes (with later_closed, until the
	 * Space is closed) or later_deadline_ms (monotonic) passes;
	 * API_LATER_STREAM turns the connection into the Space's event
	 * stream, after sequence later_after. */
	enum api_later {
		API_LATER_NONE,
		API_LATER_WAIT,
		API_LATER_STREAM,
		API_LATER_LIVE, /* the Space's live view (live.h) */
	} later;
	char later_task[CM_ID_MAX + 1];
	/* A parked MCP tool call: its JSON-RPC id as JSON text ("" for a
	 * plain ?wait=), whose answer is an MCP result (api_mcp_finished). */
	char later_rpc[CM_MCP_ID_MAX + 3];
	/* Its progressToken as JSON text ("" for none): the call is
	 * answered on an event stream, its progress told as it goes. */
	char later_progress[CM_MCP_ID_MAX + 3];
	/* Its session's log level (mcp_rpc.h; 0: none): the Space's events
	 * of that level or above go on its event stream too. */
	int later_log;
	bool later_closed;
	int64_t later_deadline_ms;
	int64_t later_after;
	/* The matched route's pattern (metrics label); NULL: no route. */
	const char *route;
	/* Run on the connection loop (api_work_on_loop): api_call answers
	 * only from the view, and a call it cannot answer so sets
	 * needs_store, after which the answer is void and the request goes
	 * to a worker.  Only routes marked loop in router.c run so. */
	bool on_loop, needs_store;
	/* What the last api_call saw of the view: seen.fill is not 0 when
	 * its answer came from there (api_ok_kept). */
	struct api_view_ticket seen;
};

/* Runs one request: routing, then the route's handler. */
void api_dispatch(struct api_ctx *c);
/* Route i of the table ('*' per id segment); false past its end. */
bool api_route_at(
    size_t i, const char **method, const char **pattern, bool *auth);

/* --- answers (respond.c) ------------------------------------------------ */

/* {"data": data}; takes the reference. */
void api_ok(struct api_ctx *c, int status, json_t *data);
/*
 * 200 with the n bytes at p (copied) as a body of type mime, which must be
 * an artifact's (common/mime.h), at most CM_ARTIFACT_MAX, served as an
 * attachment named name (cm_artifact_name_valid): anything else is
 * answered 500, never served.
 */
void api_ok_bytes(struct api_ctx *c, const char *mime, const char *name,
    const void *p, size_t n);
/* The error envelope, with the code's HTTP status unless status > 0. */
void api_fail(
    struct api_ctx *c, int status, enum cm_err err, const char *message);
/* The store's verdict in rep, as an error answer. */
void api_fail_rep(struct api_ctx *c, const struct pr_rep *rep);
/*
 * For a 200 answer whose body is made from the last api_call's reply
 * alone (nothing of the caller, nothing of the clock): when that reply
 * came from the view and a body rendered from it is kept there, that
 * body answers c and api_ok_kept returns true; otherwise false, and the
 * route renders it, then api_ok_keep keeps it with the view's answer.
 */
bool api_ok_kept(struct api_ctx *c);
void api_ok_keep(struct api_ctx *c);

/* --- requests (respond.c) ----------------------------------------------- */

/*
 * Parses the body as a JSON object with only the allowed keys (strict:
 * duplicates, depth and size checked).  On failure answers 413 or 422 and
 * returns NULL.  An empty body is {} when empty_ok.
 */
json_t *api_body(struct api_ctx *c, const char *const *allowed, bool empty_ok);
/*
 * A member of a parsed body: 1 when present (and not null) with *out
 * set, 0 when absent and optional, -1 when absent and required (answered
 * 422).
 */
int api_body_member(
    struct api_ctx *c, json_t *o, const char *key, bool required, json_t **out);
/*
 * A string member of a parsed body: absent (or null) is fine unless
 * required; present, it must be 1..max bytes with no NUL.  *out borrows
 * from o.  Answers 422 and returns false otherwise.
 */
bool api_body_str(struct api_ctx *c, json_t *o, const char *key, size_t max,
    bool required, const char **out);
/* A query parameter's value copied into buf; false when absent. */
bool api_query(
    const struct api_ctx *c, const char *name, char *buf, size_t len);
/* An integer query parameter in [min, max]; dflt when absent.  Answers 422
 * and returns false when malformed or out of range. */
bool api_query_int(struct api_ctx *c, const char *name, long min, long max,
    long dflt, long *out);
/* An id: 1..CM_ID_MAX of [A-Za-z0-9_-] (n bytes of s). */
bool api_id_ok(const char *s, size_t n);
/* An id query parameter copied into buf, *out pointing at it; *out NULL
 * when absent.  Answers 422 and returns false when it is not an id. */
bool api_query_id(struct api_ctx *c, const char *name, char buf[CM_ID_MAX + 2],
    const char **out);

/* --- the store (respond.c) ---------------------------------------------- */

/* cm_rpc_call; a store that does not answer becomes a 503 answer and
 * false.  On the loop (c->on_loop), only the view is asked: a miss sets
 * c->needs_store and returns false with *r empty. */
bool api_call(struct api_ctx *c, const struct pr_req *q, struct pr_rep *r);

/* --- authentication (auth.c) -------------------------------------------- */

/* Resolves the bearer token into c->id; answers 401 and returns false. */
bool api_authenticate(struct api_ctx *c);
void api_auth_release(struct api_ctx *c);
/* Forgets every cached resolution (after a change to principals, tokens
 * or memberships). */
void api_auth_cache_clear(void);
/* GET /api/v1/me: the authenticated caller (api_dto_principal) with its
 * memberships. */
void api_me_get(struct api_ctx *c);

/* --- records as JSON (dto.c): the only builders of response bodies ----- */

json_t *api_dto_space(const struct pr_space *s, const struct pr_task *active);
json_t *api_dto_task(const struct pr_task *t);
json_t *api_dto_event(const struct pr_event *e);
json_t *api_dto_instance(const struct pr_instance *i);
json_t *api_dto_workspace(const struct pr_workspace *w);
json_t *api_dto_principal(const struct pr_principal *p);
/* token: the raw token, shown once when it is issued; NULL otherwise. */
json_t *api_dto_token(const struct pr_token *t, const char *token);
json_t *api_dto_membership(const struct pr_membership *m);
json_t *api_dto_bundle(const struct pr_bundle *b);
/* api_dto_instance and the host; never endpoint, config or profile. */
json_t *api_dto_instance_admin(const struct pr_instance *i);
json_t *api_dto_binding(const struct pr_binding *b);
/* A supervised process: kind, space_id (null for the store and the api),
 * pid, state, restarts, uptime_ms. */
json_t *api_dto_child(const struct pr_child *ch);
/* {key: id, "deleted": true}, and key2: id2 unless key2 is NULL. */
json_t *api_dto_deleted(
    const char *key, const char *id, const char *key2, const char *id2);
char *api_rfc3339(int64_t ms, char *buf, size_t len);

/* --- routes (routes_space.c) ------------------------------------------- */

void api_space_list(struct api_ctx *c);
void api_space_create(struct api_ctx *c);
void api_space_get(struct api_ctx *c);
void api_task_submit(struct api_ctx *c);
void api_task_list(struct api_ctx *c);
void api_task_get(struct api_ctx *c);
void api_space_cancel(struct api_ctx *c);
void api_space_takeover(struct api_ctx *c);
void api_space_release(struct api_ctx *c);
void api_space_close(struct api_ctx *c);
void api_event_list(struct api_ctx *c);
/* GET .../tasks/{task_id}/artifacts/{name}: the bytes, under the task's
 * authorization. */
void api_artifact_get(struct api_ctx *c);
/* routes_file.c: a Space's files, kept for its page to upload. */
void api_file_put(struct api_ctx *c);
void api_file_list(struct api_ctx *c);
/* routes_space.c: loads the path's Space into *r (the caller frees it)
 * and checks the caller may act a on it; otherwise the refusal is
 * answered and false returned. */
bool api_space_for(struct api_ctx *c, enum cm_action a, struct pr_rep *r);
/* routes_space.c: whether the caller may act a on the path's Space;
 * otherwise the refusal is answered. */
bool api_space_allowed(struct api_ctx *c, enum cm_action a);
void api_instance_list(struct api_ctx *c);
/* GET .../runtime-bundles: the bundles of the instances bound to the
 * workspace, with their manifests; whoever may list the instances. */
void api_bundle_list(struct api_ctx *c);

/* --- routes (routes_admin.c): CM_ACT_ADMIN, c->params in path order --- */

/* Answers 403 (or 401) and returns false unless the caller is an admin. */
bool api_admin_allowed(struct api_ctx *c);
void api_admin_workspace_create(struct api_ctx *c);
void api_admin_workspace_list(struct api_ctx *c);
void api_admin_principal_create(struct api_ctx *c);
void api_admin_principal_list(struct api_ctx *c);
void api_admin_token_issue(struct api_ctx *c);
void api_admin_token_revoke(struct api_ctx *c);
void api_admin_member_put(struct api_ctx *c);
void api_admin_member_remove(struct api_ctx *c);
void api_admin_bundle_create(struct api_ctx *c);
void api_admin_bundle_list(struct api_ctx *c);
void api_admin_instance_register(struct api_ctx *c);
void api_admin_instance_list(struct api_ctx *c);
void api_admin_instance_disable(struct api_ctx *c);
void api_admin_instance_enable(struct api_ctx *c);
void api_admin_binding_create(struct api_ctx *c);
void api_admin_binding_delete(struct api_ctx *c);

/* --- routes (routes_meta.c): no token ----------------------------------- */

/* GET /metrics: asks the store and the supervisor, then renders. */
void api_metrics_get(struct api_ctx *c);
/* GET /api/v1/admin/status (CM_ACT_ADMIN): the supervisor's children,
 * from sup.status on its control socket; 503 supervisor_unavailable when
 * it does not answer within a bound. */
void api_admin_status(struct api_ctx *c);
/* GET /api/v1/openapi.json: the document embedded at build time. */
void api_openapi_get(struct api_ctx *c);
/* GET / and GET /console/{file} (console.c): the operator console's
 * files, from a fixed table by exact name (c->params[0]); 404 for any
 * other name.  Each is served with its own content type and a strict
 * Content-Security-Policy. */
void api_console_index(struct api_ctx *c);
void api_console_file(struct api_ctx *c);
/* api/openapi.json, NUL-terminated, generated by api/embed_file.cmake. */
extern const char api_openapi_json[];
extern const size_t api_openapi_json_len;

#endif
