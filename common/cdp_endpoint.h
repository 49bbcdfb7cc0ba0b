/*
 * cdp_endpoint.h: the endpoint of a cdp instance (a secret), and the
 * /json/version request both its users make: the actor's websocket
 * transport (space-actor/cdp_ws.c), to find the browser's websocket
 * path, and the supervisor's probe (supervisor/probe.c), to see that the
 * browser answers.
 *
 * Forms accepted: http://host:port and https://host:port (any path is
 * ignored), ws://host:port/path and wss://host:port/path.  No userinfo.
 * Nothing here logs, and no error text names the endpoint.
 */
#ifndef CM_CDP_ENDPOINT_H
#define CM_CDP_ENDPOINT_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

#include "bbuf.h"
#include "limits.h"

struct cm_cdpep {
	bool tls;                        /* https or wss */
	bool direct;                     /* ws(s): path names the websocket */
	char hostport[CM_HOST_MAX + 16]; /* host:port, IPv6 in brackets */
	char path[CM_URL_MAX + 1];       /* the websocket's path (direct) */
};

/* Parses endpoint into *ep.  Returns 0, or -1 when it is none of the
 * forms above. */
int cm_cdpep_parse(const char *endpoint, struct cm_cdpep *ep);

/*
 * A GET of http(s)://host:port/json/version whose body is kept, up to
 * CM_CDP_VERSION_MAX bytes (more fails the transfer).  begin makes the
 * easy handle (v->e, for the caller to add to its cm_curlm), bounded by
 * timeout_ms; end cleans it up (the caller removed it first).  begin
 * returns 0 or -1.
 */
struct cm_cdpep_version {
	CURL *e;
	struct cm_bbuf body; /* bounded by CM_CDP_VERSION_MAX */
};
int cm_cdpep_version_begin(
    struct cm_cdpep_version *v, const struct cm_cdpep *ep, long timeout_ms);
void cm_cdpep_version_end(struct cm_cdpep_version *v);

/*
 * Once the transfer ended with rc: 0 when it was answered 200 with a
 * JSON object naming a webSocketDebuggerUrl, whose path (from
 * "/devtools/" on) goes to path when path is not NULL; -1 otherwise.
 */
int cm_cdpep_version_path(
    const struct cm_cdpep_version *v, CURLcode rc, char *path, size_t pathlen);

#endif
