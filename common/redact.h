/*
 * redact.h: the one redactor.
 *
 * Everything that leaves a runtime (results, error text) and every log line
 * goes through here before it is stored or written.  It replaces, with
 * "[REDACTED]":
 *   - the value after token=, access_token=, api_key=, apikey=, password=,
 *     passwd=, secret=, client_secret= (case-insensitive, in query strings,
 *     form bodies and `key: value` / `"key": "value"` pairs);
 *   - the credential after "Authorization:" (any scheme) and after "Bearer ";
 *   - the whole value of Cookie: and Set-Cookie: headers;
 *   - URL userinfo (scheme://user:pass@host becomes scheme://[REDACTED]@host);
 *   - DevTools URLs (ws:// or wss:// URLs with /devtools/ in their path);
 *   - every occurrence of each literal secret passed in.
 * In JSON it also replaces the whole value of any object member whose key
 * names a secret (password, secret, token, api_key, cookie, authorization,
 * set-cookie, endpoint, profile, with any case and any -/_ spelling).
 */
#ifndef CM_REDACT_H
#define CM_REDACT_H

#include <jansson.h>
#include <stddef.h>

#include "limits.h"

#define CM_REDACTED "[REDACTED]"

/* Literal secrets of one instance (endpoint, profile path, config values). */
struct cm_secrets {
	size_t n;
	const char *lit[CM_SECRETS_MAX]; /* borrowed; must outlive use */
};

/* Adds a borrowed literal; ignores NULL, short (< CM_SECRET_MIN) or excess
 * ones.  Returns 0, or -1 when the list is full. */
int cm_secrets_add(struct cm_secrets *s, const char *lit);

/*
 * Returns a malloc'd, NUL-terminated redacted copy of len bytes of in
 * (caller frees), or NULL on allocation failure.  secrets may be NULL.
 * O(len * (patterns + secrets)).
 */
char *cm_redact_text(const char *in, size_t len, const struct cm_secrets *s);

/*
 * The same, cut to at most max bytes without splitting a UTF-8 character:
 * redacted first, so that a cut never leaves part of a secret the whole
 * of it would have matched.  Bounded text shown to clients (an error
 * message, a dialog's) goes through this.
 */
char *cm_redact_text_max(
    const char *in, size_t len, const struct cm_secrets *s, size_t max);

/* Redacts every string (and secret-named member) of v in place. */
int cm_redact_json(json_t *v, const struct cm_secrets *s);

/*
 * Serializes v compactly; when the text is longer than max bytes, returns
 * the marker {"truncated":true,"reason":"result_too_large"} instead.
 * Caller frees.  NULL on allocation failure.
 */
char *cm_bound_json(const json_t *v, size_t max);

/*
 * The whole path for a runtime result: parse json_text (which may be
 * malformed or huge; a result that is not JSON is redacted as a string),
 * redact, bound to CM_RESULT_MAX.  Returns malloc'd JSON text.
 */
char *cm_redact_result(
    const char *json_text, size_t len, const struct cm_secrets *s);

#endif
