/*
 * respond.c: the one place where errors become HTTP answers, request
 * bodies and query strings are parsed, and the store is called.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "ids.h"
#include "json.h"
#include "log.h"
#include "mime.h"
#include "rpc.h"
#include "view.h"

void
api_ok(struct api_ctx *c, int status, json_t *data)
{
	json_t *env = json_pack("{s:o}", "data", data ? data : json_null());

	free(c->res->body);
	c->res->body_len = 0;
	c->res->content_type = NULL;
	c->res->status = status;
	c->res->body = env ? json_dumps(env, JSON_COMPACT) : NULL;
	json_decref(env);
	if (c->res->body == NULL)
		api_fail(c, 500, CM_E_INTERNAL, "out of memory");
}

void
api_ok_bytes(struct api_ctx *c, const char *mime, const char *name,
    const void *p, size_t n)
{
	/* Static, as the answer is rendered after the reply is freed; and
	 * never a type a browser would run (common/mime.h). */
	const char *type = cm_mime_known(mime);

	if (type == NULL || p == NULL || n == 0 || n > CM_ARTIFACT_MAX ||
	    name == NULL || !cm_artifact_name_valid(name, strlen(name))) {
		cm_warnx("api: the store gave an artifact that is not one");
		api_fail(c, 500, CM_E_INTERNAL, "the artifact is damaged");
		return;
	}
	free(c->res->body);
	c->res->body_len = 0;
	if ((c->res->body = malloc(n)) == NULL) {
		api_fail(c, 500, CM_E_INTERNAL, "out of memory");
		return;
	}
	memcpy(c->res->body, p, n);
	c->res->body_len = n;
	c->res->status = 200;
	c->res->content_type = type;
	/* The name is of [A-Za-z0-9._-]: nothing in it needs quoting. */
	snprintf(c->res->header_buf, sizeof(c->res->header_buf),
	    "Cache-Control: no-store\r\nContent-Disposition: attachment; "
	    "filename=\"%s\"\r\n",
	    name);
	c->res->headers = c->res->header_buf;
}

void
api_fail(struct api_ctx *c, int status, enum cm_err err, const char *message)
{
	json_t *env = json_pack("{s:{s:s, s:s, s:b}}", "error", "code",
	    cm_err_code(err), "message", message ? message : cm_err_code(err),
	    "retryable", cm_err_retryable(err));

	free(c->res->body);
	c->res->body_len = 0;
	c->res->content_type = NULL;
	c->res->status = status > 0 ? status : cm_err_http(err);
	c->res->body = env ? json_dumps(env, JSON_COMPACT) : NULL;
	json_decref(env);
}

void
api_fail_rep(struct api_ctx *c, const struct pr_rep *rep)
{
	api_fail(c, 0, rep->err, rep->msg);
}

bool
api_ok_kept(struct api_ctx *c)
{
	size_t len;
	char *body = c->seen.fill != 0 ? api_view_body(&c->seen, &len) : NULL;

	if (body == NULL)
		return false;
	free(c->res->body);
	c->res->body = body;
	c->res->body_len = len;
	c->res->content_type = NULL;
	c->res->status = 200;
	return true;
}

void
api_ok_keep(struct api_ctx *c)
{
	if (c->seen.fill != 0 && c->res->status == 200 && c->res->body != NULL)
		api_view_keep_body(
		    &c->seen, c->res->body, strlen(c->res->body));
}

json_t *
api_body(struct api_ctx *c, const char *const *allowed, bool empty_ok)
{
	char err[256];
	json_t *v = NULL;

	if (c->req->body_len > CM_BODY_MAX) {
		api_fail(
		    c, 0, CM_E_PAYLOAD_TOO_LARGE, "the body is over 64 KiB");
		return NULL;
	}
	if (c->req->body_len == 0 && empty_ok)
		return json_object();
	/* The parser's own text may quote the body, and a body may hold a
	 * secret: the client gets a fixed message. */
	if (cm_json_parse(c->req->body, c->req->body_len, CM_BODY_MAX,
	        CM_JSON_DEPTH_MAX, &v, err, sizeof(err)) != 0) {
		api_fail(c, 0, CM_E_INVALID_REQUEST,
		    "the body is not one strict JSON value (well formed, no "
		    "duplicate keys, nested at most 32 deep)");
		return NULL;
	}
	if (!json_is_object(v)) {
		json_decref(v);
		api_fail(
		    c, 0, CM_E_INVALID_REQUEST, "the body must be an object");
		return NULL;
	}
	if (cm_json_only_keys(v, allowed, err, sizeof(err)) != 0) {
		json_decref(v);
		api_fail(c, 0, CM_E_INVALID_REQUEST, err);
		return NULL;
	}
	return v;
}

int
api_body_member(
    struct api_ctx *c, json_t *o, const char *key, bool required, json_t **out)
{
	char msg[128];

	*out = json_object_get(o, key);
	if (*out != NULL && !json_is_null(*out))
		return 1;
	*out = NULL;
	if (!required)
		return 0;
	snprintf(msg, sizeof(msg), "%s is required", key);
	api_fail(c, 0, CM_E_INVALID_REQUEST, msg);
	return -1;
}

bool
api_body_str(struct api_ctx *c, json_t *o, const char *key, size_t max,
    bool required, const char **out)
{
	json_t *v;
	char msg[128];
	int has = api_body_member(c, o, key, required, &v);

	*out = NULL;
	if (has <= 0)
		return has == 0;
	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    json_string_length(v) > max ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		snprintf(msg, sizeof(msg),
		    "%s must be a string of 1..%zu bytes", key, max);
		api_fail(c, 0, CM_E_INVALID_REQUEST, msg);
		return false;
	}
	*out = json_string_value(v);
	return true;
}

bool
api_query(const struct api_ctx *c, const char *name, char *buf, size_t len)
{
	size_t n = strlen(name);
	const char *p = c->req->query;

	while (p != NULL && *p != '\0') {
		const char *end = strchr(p, '&');
		size_t seg = end ? (size_t)(end - p) : strlen(p);

		if (seg > n && strncmp(p, name, n) == 0 && p[n] == '=') {
			size_t vlen = seg - n - 1;

			if (vlen >= len)
				vlen = len - 1;
			memcpy(buf, p + n + 1, vlen);
			buf[vlen] = '\0';
			return true;
		}
		p = end ? end + 1 : NULL;
	}
	return false;
}

bool
api_query_int(struct api_ctx *c, const char *name, long min, long max,
    long dflt, long *out)
{
	char buf[32], msg[96];
	char *end;
	long v;

	if (!api_query(c, name, buf, sizeof(buf))) {
		*out = dflt;
		return true;
	}
	errno = 0;
	v = strtol(buf, &end, 10);
	if (buf[0] == '\0' || *end != '\0' || errno != 0 || v < min ||
	    v > max) {
		snprintf(msg, sizeof(msg), "%s must be an integer in %ld..%ld",
		    name, min, max);
		api_fail(c, 0, CM_E_INVALID_REQUEST, msg);
		return false;
	}
	*out = v;
	return true;
}

bool
api_query_id(struct api_ctx *c, const char *name, char buf[CM_ID_MAX + 2],
    const char **out)
{
	char msg[96];

	*out = NULL;
	if (!api_query(c, name, buf, CM_ID_MAX + 2))
		return true;
	/* buf has room for one byte past an id: a longer one is refused,
	 * not cut. */
	if (!api_id_ok(buf, strlen(buf))) {
		snprintf(msg, sizeof(msg), "%s must be an id", name);
		api_fail(c, 0, CM_E_INVALID_REQUEST, msg);
		return false;
	}
	*out = buf;
	return true;
}

bool
api_call(struct api_ctx *c, const struct pr_req *q, struct pr_rep *r)
{
	struct api_view_ticket t;

	memset(&c->seen, 0, sizeof(c->seen));
	if (c->on_loop ? api_view_look(q, r, &t) : api_view_get(q, r, &t)) {
		c->seen = t;
		return true;
	}
	if (c->on_loop) {
		memset(r, 0, sizeof(*r));
		c->needs_store = true;
		return false;
	}
	if (cm_rpc_call(c->store, q, r, CM_API_RPC_TIMEOUT_MS) != CM_OK) {
		api_view_after(q, NULL, &t); /* it may have happened */
		api_fail(c, 0, r->err,
		    r->err == CM_E_INTERNAL ? "internal error"
		                            : "the store is not answering");
		return false;
	}
	api_view_after(q, r, &t);
	return true;
}
