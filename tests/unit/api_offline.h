/*
 * api_offline.h: runs one api route handler as a worker runs it, for a
 * given caller, with a store socket that was never opened.  A request the
 * route accepts reaches its store call, which fails at once: 503
 * store_unavailable.  So a 4xx is the route's own verdict on the request,
 * and a 500 is a request the route accepted that the store's protocol
 * cannot carry (cm_rpc_call encodes before it sends).
 *
 * Shared by tests/unit (test_routes_space) and tests/fuzz (fuzz_routes).
 */
#ifndef TESTS_API_OFFLINE_H
#define TESTS_API_OFFLINE_H

#include <stdio.h>
#include <string.h>

#include "api.h"

/*
 * Runs fn for method, query (copied; at most CM_URL_MAX bytes) and the
 * body_len bytes of body, in workspace ws-1 and Space sp-1, as caller.
 * The answer is left in *res; the caller frees res->body.
 */
static inline void
api_offline_run(void (*fn)(struct api_ctx *), const char *method,
    const char *query, const char *body, size_t body_len,
    const struct pr_principal *caller, struct api_res *res)
{
	static const struct cm_config cfg = {
	    .task_timeout_max = CM_TIMEOUT_MAX_S};
	struct api_req req;
	struct api_ctx c;

	memset(&req, 0, sizeof(req));
	memset(&c, 0, sizeof(c));
	memset(res, 0, sizeof(*res));
	req.method = method;
	snprintf(req.path, sizeof(req.path), "/offline");
	snprintf(req.query, sizeof(req.query), "%s", query);
	req.body = body;
	req.body_len = body_len;
	c.cfg = &cfg;
	c.store = (nng_socket)NNG_SOCKET_INITIALIZER;
	c.req = &req;
	c.res = res;
	c.id.principal = caller;
	c.workspace_id = "ws-1";
	c.space_id = "sp-1";
	c.task_id = "tk-1";
	snprintf(c.params[0], sizeof(c.params[0]), "p0");
	snprintf(c.params[1], sizeof(c.params[1]), "p1");
	fn(&c);
}

#endif
