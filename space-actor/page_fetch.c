/*
 * page_fetch.c: the interception (the CDP Fetch domain) that holds every
 * request of the page to the instance's network policy.  A request to a
 * host the policy refuses fails as blocked by the client, a redirect is
 * judged where it leads, the egress proxy's refusals are recognised, and
 * the proxy's own auth challenge gets its credentials.  A refusal of the
 * page's own document is kept in p->blocked_host, for the call to fail
 * with host_not_allowed; the status of its response, in p->doc_status.
 */
#include "page.h"
#include "page_int.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "clock.h"

json_t *
act_page_fetch_params(bool auth)
{
	/*
	 * Every request before it is sent, and every response: a redirect
	 * hop does not pause at the request stage, so its Location is
	 * checked when the 3xx arrives.
	 */
	return json_pack("{s:[{s:s, s:s}, {s:s, s:s}], s:b}", "patterns",
	    "urlPattern", "*", "requestStage", "Request", "urlPattern", "*",
	    "requestStage", "Response", "handleAuthRequests", auth);
}

/*
 * True, with blocked_host set, when the egress proxy says it refused
 * host during this call: a CONNECT it refused gives the browser no
 * response to read its 403 from, only a tunnel error.
 */
bool
page_proxy_refused(struct act_page *p, const char *host)
{
	if (p->proxy == NULL || p->proxy->refused == NULL || host[0] == '\0' ||
	    !p->proxy->refused(p->proxy->refused_arg, host, p->started_ms))
		return false;
	snprintf(p->blocked_host, sizeof(p->blocked_host), "%s", host);
	return true;
}

/*
 * A challenge paused the request (Fetch.authRequired): the egress proxy's
 * own gets its credentials; any other (a server's, or another proxy's) is
 * cancelled, as nobody is there to answer it.  The secret goes to the
 * browser over the private CDP pipe only.
 */
void
page_auth_required(
    struct act_page *p, const char *session, const json_t *params)
{
	const char *id =
	    json_string_value(json_object_get(params, "requestId"));
	const json_t *ch = json_object_get(params, "authChallenge");
	const char *source = json_string_value(json_object_get(ch, "source"));
	const char *origin = json_string_value(json_object_get(ch, "origin"));
	json_t *answer;

	if (id == NULL)
		return;
	if (p->proxy != NULL && source != NULL && origin != NULL &&
	    strcmp(source, "Proxy") == 0 &&
	    strcmp(origin, p->proxy->origin) == 0)
		answer = json_pack("{s:s, s:s, s:s}", "response",
		    "ProvideCredentials", "username", p->proxy->user,
		    "password", p->proxy->password);
	else
		answer = json_pack("{s:s}", "response", "CancelAuth");
	act_cdp_call(p->cdp, session, "Fetch.continueWithAuth",
	    json_pack(
	        "{s:s, s:o}", "requestId", id, "authChallengeResponse", answer),
	    cm_mono_ms() + CM_BROWSER_START_MS, NULL, NULL);
}

/* True when a paused response is the egress proxy's refusal. */
static bool
page_egress_refused(const json_t *params)
{
	const json_t *h;
	size_t i;

	if (json_integer_value(json_object_get(params, "responseStatusCode")) !=
	    403)
		return false;
	json_array_foreach(json_object_get(params, "responseHeaders"), i, h)
	{
		const char *name =
		    json_string_value(json_object_get(h, "name"));

		if (name != NULL && strcasecmp(name, "x-spaced-egress") == 0)
			return true;
	}
	return false;
}

/*
 * The absolute http(s) URL a 3xx response sends its request to, or NULL
 * when it is not a redirect to another origin (a relative Location stays
 * on the host that was allowed already).
 */
static const char *
page_redirect_target(const json_t *params)
{
	json_int_t status =
	    json_integer_value(json_object_get(params, "responseStatusCode"));
	const json_t *h;
	size_t i;

	if (status < 300 || status > 399)
		return NULL;
	json_array_foreach(json_object_get(params, "responseHeaders"), i, h)
	{
		const char *name =
		    json_string_value(json_object_get(h, "name"));
		const char *value =
		    json_string_value(json_object_get(h, "value"));

		if (name != NULL && value != NULL &&
		    strcasecmp(name, "location") == 0 &&
		    (strncasecmp(value, "http://", 7) == 0 ||
		        strncasecmp(value, "https://", 8) == 0 ||
		        strncmp(value, "//", 2) == 0))
			return value;
	}
	return NULL;
}

/* The value of the response header name, or NULL. */
static const char *
page_response_header(const json_t *params, const char *name)
{
	const json_t *h;
	size_t i;

	json_array_foreach(json_object_get(params, "responseHeaders"), i, h)
	{
		const char *n = json_string_value(json_object_get(h, "name"));
		const char *v = json_string_value(json_object_get(h, "value"));

		if (n != NULL && v != NULL && strcasecmp(n, name) == 0)
			return v;
	}
	return NULL;
}

/* Whether a document's response is one the browser saves instead of
 * showing: sent as an attachment, or as bytes of no kind it shows. */
static bool
page_response_downloads(const json_t *params)
{
	const char *cd = page_response_header(params, "content-disposition");
	const char *ct = page_response_header(params, "content-type");

	while (cd != NULL && (*cd == ' ' || *cd == '\t'))
		cd++;
	return (cd != NULL && strncasecmp(cd, "attachment", 10) == 0) ||
	       (ct != NULL &&
	           strncasecmp(ct, "application/octet-stream", 24) == 0);
}

/*
 * A request of the page paused (Fetch): let it through, or fail it as
 * blocked by the client.  Only its host is kept, never the URL.
 */
void
page_request_paused(
    struct act_page *p, const char *session, const json_t *params)
{
	const char *id =
	    json_string_value(json_object_get(params, "requestId"));
	const json_t *req = json_object_get(params, "request");
	const char *url = json_string_value(json_object_get(req, "url"));
	const char *type =
	    json_string_value(json_object_get(params, "resourceType"));
	const char *frame =
	    json_string_value(json_object_get(params, "frameId"));
	/* The page's own document: the call that led there fails. */
	bool doc = type != NULL && strcmp(type, "Document") == 0 &&
	           frame != NULL &&
	           (p->frame[0] == '\0' || strcmp(frame, p->frame) == 0);
	char host[CM_HOST_MAX + 3] = "";
	bool ok;

	if (id == NULL || url == NULL)
		return;
	if (json_object_get(params, "responseStatusCode") != NULL ||
	    json_object_get(params, "responseErrorReason") != NULL) {
		/* The response stage: the egress proxy refused the request
		 * (its host resolved to an address the policy refuses, say),
		 * or a redirect names where it leads.  The page's own
		 * document's status is what navigate reports. */
		if (doc) {
			json_int_t code = json_integer_value(
			    json_object_get(params, "responseStatusCode"));

			p->doc_status =
			    code >= 100 && code <= 999 ? (int)code : 0;
			if (page_response_downloads(params))
				p->dl_expected = true;
		}
		if (page_egress_refused(params)) {
			cm_url_host(url, host, sizeof(host));
			goto refuse;
		}
		/* No response at all: a refused CONNECT, perhaps. */
		if (doc &&
		    json_object_get(params, "responseErrorReason") != NULL &&
		    cm_url_host(url, host, sizeof(host)) == 0)
			page_proxy_refused(p, host);
		url = page_redirect_target(params);
		if (url == NULL) {
			act_cdp_call(p->cdp, session, "Fetch.continueResponse",
			    json_pack("{s:s}", "requestId", id),
			    cm_mono_ms() + CM_BROWSER_START_MS, NULL, NULL);
			return;
		}
	}
	if (strncmp(url, "data:", 5) == 0 || strncmp(url, "blob:", 5) == 0 ||
	    strncmp(url, "about:", 6) == 0)
		ok = true;
	else
		ok = p->policy == NULL ||
		     (cm_url_host(url, host, sizeof(host)) == 0 &&
		         cm_policy_allows_host(p->policy, host));
	if (ok) {
		if (doc && cm_url_host(url, host, sizeof(host)) == 0)
			snprintf(p->doc_host, sizeof(p->doc_host), "%s", host);
		act_cdp_call(p->cdp, session, "Fetch.continueRequest",
		    json_pack("{s:s}", "requestId", id),
		    cm_mono_ms() + CM_BROWSER_START_MS, NULL, NULL);
		return;
	}
refuse:
	p->blocked++;
	act_cdp_call(p->cdp, session, "Fetch.failRequest",
	    json_pack("{s:s, s:s}", "requestId", id, "errorReason",
	        "BlockedByClient"),
	    cm_mono_ms() + CM_BROWSER_START_MS, NULL, NULL);
	if (doc)
		snprintf(p->blocked_host, sizeof(p->blocked_host), "%s",
		    host[0] ? host : "a host that is not http(s)");
}
