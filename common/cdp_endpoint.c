/*
 * cdp_endpoint.c: parsing a cdp endpoint and asking it /json/version.
 */
#include "cdp_endpoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "curlfn.h"
#include "json.h"

int
cm_cdpep_parse(const char *endpoint, struct cm_cdpep *ep)
{
	CURLU *u;
	char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL;
	char *query = NULL, *user = NULL;
	int rc = -1, n;

	memset(ep, 0, sizeof(*ep));
	if (cm_curl_load() != 0 || (u = cm_curl.url()) == NULL)
		return -1;
	if (endpoint == NULL || strlen(endpoint) > CM_ENDPOINT_MAX ||
	    cm_curl.url_set(u, CURLUPART_URL, endpoint,
	        CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK ||
	    cm_curl.url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    cm_curl.url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    cm_curl.url_get(u, CURLUPART_USER, &user, 0) != CURLUE_NO_USER)
		goto out;
	if (strcmp(scheme, "http") == 0 || strcmp(scheme, "ws") == 0)
		ep->tls = false;
	else if (strcmp(scheme, "https") == 0 || strcmp(scheme, "wss") == 0)
		ep->tls = true;
	else
		goto out;
	ep->direct = scheme[0] == 'w';
	if (cm_curl.url_get(u, CURLUPART_PORT, &port, 0) != CURLUE_OK)
		port = NULL; /* the scheme's own */
	n = snprintf(ep->hostport, sizeof(ep->hostport), "%s:%s", host,
	    port      ? port
	    : ep->tls ? "443"
	              : "80");
	if (n < 0 || (size_t)n >= sizeof(ep->hostport))
		goto out;
	if (ep->direct) {
		if (cm_curl.url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK)
			goto out;
		if (cm_curl.url_get(u, CURLUPART_QUERY, &query, 0) != CURLUE_OK)
			query = NULL;
		n = snprintf(ep->path, sizeof(ep->path), "%s%s%s", path,
		    query ? "?" : "", query ? query : "");
		if (n < 0 || (size_t)n >= sizeof(ep->path))
			goto out;
	}
	rc = 0;
out:
	cm_curl.free(scheme);
	cm_curl.free(host);
	cm_curl.free(port);
	cm_curl.free(path);
	cm_curl.free(query);
	cm_curl.free(user);
	cm_curl.url_cleanup(u);
	return rc;
}

int
cm_cdpep_version_begin(
    struct cm_cdpep_version *v, const struct cm_cdpep *ep, long timeout_ms)
{
	char url[sizeof(ep->hostport) + 32];

	memset(v, 0, sizeof(*v));
	v->body.cap = CM_CDP_VERSION_MAX;
	if (cm_curl_load() != 0)
		return -1;
	snprintf(url, sizeof(url), "%s://%s/json/version",
	    ep->tls ? "https" : "http", ep->hostport);
	if ((v->e = cm_curl.easy_init()) == NULL)
		return -1;
	if (cm_curl.easy_setopt(v->e, CURLOPT_URL, url) != CURLE_OK ||
	    cm_curl.easy_setopt(v->e, CURLOPT_WRITEFUNCTION, cm_bbuf_write) !=
	        CURLE_OK ||
	    cm_curl.easy_setopt(v->e, CURLOPT_WRITEDATA, &v->body) !=
	        CURLE_OK ||
	    cm_curl.easy_setopt(v->e, CURLOPT_TIMEOUT_MS, timeout_ms) !=
	        CURLE_OK ||
	    cm_curl.easy_setopt(v->e, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    /* The endpoint answers itself: a redirect elsewhere is not it. */
	    cm_curl.easy_setopt(v->e, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
	    cm_curl.easy_setopt(v->e, CURLOPT_PROTOCOLS_STR, "http,https") !=
	        CURLE_OK) {
		cm_cdpep_version_end(v);
		return -1;
	}
	return 0;
}

void
cm_cdpep_version_end(struct cm_cdpep_version *v)
{
	if (v->e != NULL)
		cm_curl.easy_cleanup(v->e);
	cm_bbuf_free(&v->body);
	memset(v, 0, sizeof(*v));
}

int
cm_cdpep_version_path(
    const struct cm_cdpep_version *v, CURLcode rc, char *path, size_t pathlen)
{
	long status = 0;
	json_t *j = NULL;
	const char *ws, *p;
	char err[64];
	int ok = -1;

	if (rc != CURLE_OK || v->body.p == NULL ||
	    cm_curl.easy_getinfo(v->e, CURLINFO_RESPONSE_CODE, &status) !=
	        CURLE_OK ||
	    status != 200 ||
	    cm_json_parse(v->body.p, v->body.len, CM_CDP_VERSION_MAX,
	        CM_JSON_DEPTH_MAX, &j, err, sizeof(err)) != 0)
		return -1;
	ws = json_string_value(json_object_get(j, "webSocketDebuggerUrl"));
	/* Only the path is kept: the host is the one Chromium thinks it
	 * has, the operator's is the one that reaches it. */
	if (ws != NULL && (p = strstr(ws, "/devtools/")) != NULL &&
	    strcspn(p, " \r\n") == strlen(p) &&
	    (path == NULL ||
	        (size_t)snprintf(path, pathlen, "%s", p) < pathlen))
		ok = 0;
	json_decref(j);
	return ok;
}
