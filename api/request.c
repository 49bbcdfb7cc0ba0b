/*
 * request.c: an HTTP/1.1 request head, judged and parsed.  Pure: no
 * sockets, no clock, so every bound is tested alone (tests/unit).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "request.h"

/* The first CRLF in buf[0, len), or NULL. */
static const char *
find_crlf(const char *buf, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++)
		if (buf[i] == '\r' && buf[i + 1] == '\n')
			return buf + i;
	return NULL;
}

/* The end of the head (just past CRLF CRLF) in buf[0, len), or 0. */
static size_t
find_head_end(const char *buf, size_t len)
{
	for (size_t i = 0; i + 3 < len; i++)
		if (buf[i] == '\r' && buf[i + 1] == '\n' &&
		    buf[i + 2] == '\r' && buf[i + 3] == '\n')
			return i + 4;
	return 0;
}

int
api_request_head_len(const char *buf, size_t len, size_t *head_len)
{
	const char *eol = find_crlf(
	    buf, len < API_REQUEST_LINE_SCAN ? len : API_REQUEST_LINE_SCAN);
	size_t line, end;

	*head_len = 0;
	if (eol == NULL)
		return len >= API_REQUEST_LINE_SCAN ? 414 : 0;
	line = (size_t)(eol - buf) + 2;
	end = find_head_end(buf, len < API_REQUEST_HEAD_MAX(line)
	                             ? len
	                             : API_REQUEST_HEAD_MAX(line));
	if (end == 0)
		return len >= API_REQUEST_HEAD_MAX(line) ? 431 : 0;
	*head_len = end;
	return 200;
}

/* A header name: an RFC 9110 token. */
static bool
token_ok(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch <= ' ' || ch >= 127 || strchr("()<>@,;:\\\"/[]?={}", ch))
			return false;
	}
	return true;
}

/*
 * Whether s holds a control character other than HTAB.  A bare CR or LF
 * inside a line, or a NUL, is a line's end to some other parser (a proxy
 * in front): what it reads as one more field, here part of a value or
 * the head's end, would let a request hide inside another (RFC 9112
 * section 2.2 lets a server refuse them; it does).
 */
static bool
has_ctl(const char *s)
{
	for (; *s != '\0'; s++)
		if (((unsigned char)*s < ' ' && *s != '\t') || *s == 127)
			return true;
	return false;
}

/* Content-Length: digits only (no sign, no space), at most 18 of them. */
static int
content_length(const char *v, size_t *out)
{
	size_t n = 0, i;

	for (i = 0; v[i] != '\0'; i++) {
		if (v[i] < '0' || v[i] > '9' || i >= 18)
			return -1;
		n = n * 10 + (size_t)(v[i] - '0');
	}
	if (i == 0)
		return -1;
	*out = n;
	return 0;
}

/* Whether a comma-separated header value lists word (any case). */
static bool
lists(const char *v, const char *word)
{
	size_t n = strlen(word);

	while (*v != '\0') {
		v += strspn(v, " \t,");
		if (strncasecmp(v, word, n) == 0 &&
		    (v[n] == '\0' || v[n] == ',' || v[n] == ' ' ||
		        v[n] == '\t'))
			return true;
		v += strcspn(v, ",");
	}
	return false;
}

int
api_request_parse(char *head, struct api_request *r, const char **why)
{
	char *p = head, *eol, *sp1, *sp2;
	bool has_cl = false;

	memset(r, 0, sizeof(*r));
	*why = "malformed request";
	/* The request line: METHOD SP target SP HTTP/1.x */
	if ((eol = strstr(p, "\r\n")) == NULL)
		return 400;
	*eol = '\0';
	if (has_ctl(p))
		return 400;
	if ((sp1 = strchr(p, ' ')) == NULL ||
	    (sp2 = strchr(sp1 + 1, ' ')) == NULL || strchr(sp2 + 1, ' '))
		return 400;
	*sp1 = *sp2 = '\0';
	r->method = p;
	r->target = sp1 + 1;
	if (!token_ok(r->method, strlen(r->method)) || r->target[0] != '/')
		return 400;
	if (strcmp(sp2 + 1, "HTTP/1.1") == 0)
		r->keep_alive = true;
	else if (strcmp(sp2 + 1, "HTTP/1.0") != 0)
		return 400;
	if (strlen(r->target) > CM_URL_MAX) {
		*why = "the URL is over 2048 bytes";
		return 414;
	}
	/* Header fields, up to the empty line. */
	for (p = eol + 2; (eol = strstr(p, "\r\n")) != NULL && eol != p;
	     p = eol + 2) {
		char *colon = memchr(p, ':', (size_t)(eol - p)), *v, *end;

		*eol = '\0';
		if (colon == NULL || !token_ok(p, (size_t)(colon - p)) ||
		    has_ctl(colon))
			return 400; /* obsolete line folding too */
		*colon = '\0';
		v = colon + 1 + strspn(colon + 1, " \t");
		for (end = eol; end > v && (end[-1] == ' ' || end[-1] == '\t');)
			*--end = '\0';
		if (strcasecmp(p, "Content-Length") == 0) {
			if (has_cl || content_length(v, &r->body_len) != 0) {
				*why = "bad Content-Length";
				return 400;
			}
			has_cl = true;
		} else if (strcasecmp(p, "Transfer-Encoding") == 0) {
			*why = "a body must come with Content-Length";
			return 400;
		} else if (strcasecmp(p, "Connection") == 0) {
			if (lists(v, "close"))
				r->keep_alive = false;
		} else if (strcasecmp(p, "Expect") == 0) {
			r->expect_continue = strcasecmp(v, "100-continue") == 0;
		} else if (strcasecmp(p, "Authorization") == 0) {
			r->authorization = v;
		} else if (strcasecmp(p, "Accept") == 0) {
			r->accept = v;
		} else if (strcasecmp(p, "Last-Event-ID") == 0) {
			r->last_event_id = v;
		} else if (strcasecmp(p, "Content-Type") == 0) {
			r->content_type = v;
		} else if (strcasecmp(p, "Host") == 0) {
			r->host = v;
		} else if (strcasecmp(p, "Origin") == 0) {
			r->origin = v;
		} else if (strcasecmp(p, "Mcp-Session-Id") == 0) {
			r->mcp_session = v;
		} else if (strcasecmp(p, "MCP-Protocol-Version") == 0) {
			r->mcp_version = v;
		}
	}
	/* The head ends in CRLF CRLF (api_request_head_len): a line with no
	 * CRLF was cut by a NUL, and the fields past it were never read. */
	if (eol == NULL)
		return 400;
	/* A Space's file is the one body that may be larger; its route
	 * (router.c) is the only PUT whose path has "/files/". */
	if (r->method != NULL && strcmp(r->method, "PUT") == 0 &&
	    r->target != NULL && strstr(r->target, "/files/") != NULL) {
		if (r->body_len > CM_UPLOAD_MAX) {
			*why = "the file is over 4 MiB";
			return 413;
		}
	} else if (r->body_len > CM_BODY_MAX) {
		*why = "the body is over 64 KiB";
		return 413;
	}
	*why = NULL;
	return 0;
}
