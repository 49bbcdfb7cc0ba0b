/*
 * egress_head.c: the egress proxy's request-head parser (egress.h), pure
 * so that it is unit tested and fuzzed alone.
 *
 * Strict on purpose: the head comes from a browser, which writes CRLF,
 * one space between the parts of the request line, and no folded
 * headers.  Anything else is refused rather than guessed at, because a
 * guess that differs from the upstream server's reading of the same bytes
 * is how requests get smuggled past a proxy.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "egress.h"

/* A token character of RFC 9110 (method and header names). */
static bool
head_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* The end of the head (just past CRLFCRLF) in buf, or 0. */
static size_t
head_end(const char *buf, size_t len)
{
	for (size_t k = 3; k < len; k++)
		if (buf[k] == '\n' && buf[k - 1] == '\r' &&
		    buf[k - 2] == '\n' && buf[k - 3] == '\r')
			return k + 1;
	return 0;
}

/* Parses "host:port" (brackets around IPv6) of n bytes at s; with
 * need_port false a missing port is def.  0, or -1. */
static int
head_authority(const char *s, size_t n, bool need_port, uint16_t def,
    struct act_egress_head *h)
{
	size_t hs = 0, he, ps;
	unsigned long port = 0;

	if (n == 0 || memchr(s, '@', n) != NULL)
		return -1;
	if (s[0] == '[') {
		const char *rb = memchr(s, ']', n);
		if (rb == NULL)
			return -1;
		hs = 1;
		he = (size_t)(rb - s);
		ps = he + 1;
	} else {
		const char *colon = memchr(s, ':', n);
		he = colon != NULL ? (size_t)(colon - s) : n;
		ps = he;
	}
	if (he <= hs || he - hs >= sizeof(h->host))
		return -1;
	memcpy(h->host, s + hs, he - hs);
	h->host[he - hs] = '\0';
	if (ps == n) {
		if (need_port)
			return -1;
		h->port = def;
		return 0;
	}
	if (s[ps] != ':' || n - ps < 2 || n - ps > 6)
		return -1;
	for (size_t k = ps + 1; k < n; k++) {
		if (s[k] < '0' || s[k] > '9')
			return -1;
		port = port * 10 + (unsigned long)(s[k] - '0');
	}
	if (port == 0 || port > 65535)
		return -1;
	h->port = (uint16_t)port;
	return 0;
}

/* Headers that end at this hop, or that the proxy writes itself. */
static bool
head_dropped(const char *name, size_t n)
{
	static const char *const hop[] = {"connection", "keep-alive", "te",
	    "trailer", "upgrade", "host", NULL};

	if (n >= 6 && strncasecmp(name, "proxy-", 6) == 0)
		return true;
	for (size_t k = 0; hop[k] != NULL; k++)
		if (strlen(hop[k]) == n && strncasecmp(name, hop[k], n) == 0)
			return true;
	return false;
}

/* Constant-time equality of a (n bytes) and the string b. */
static bool
head_same(const char *a, size_t n, const char *b)
{
	size_t m = strlen(b);
	unsigned char d = n != m;

	for (size_t k = 0; k < m; k++)
		d |= (unsigned char)(a[k < n ? k : 0] ^ b[k]);
	return d == 0;
}

/* Appends n bytes to out; false when they do not fit. */
static bool
head_put(char *out, size_t outlen, size_t *at, const char *s, size_t n)
{
	if (n > outlen - *at)
		return false;
	memcpy(out + *at, s, n);
	*at += n;
	return true;
}

/* The request line: method, target, version.  Fills h (and *path for a
 * forwarded request: where its origin-form begins in target).  Returns
 * 200 or a refusal status. */
static int
head_request_line(const char *line, size_t n, struct act_egress_head *h,
    const char **target, size_t *tlen, const char **path, size_t *plen,
    size_t *mlen)
{
	const char *sp1 = memchr(line, ' ', n), *sp2, *t, *auth_end;
	size_t k;

	if (sp1 == NULL || sp1 == line)
		return 400;
	*mlen = (size_t)(sp1 - line);
	for (k = 0; k < *mlen; k++)
		if (!head_tchar((unsigned char)line[k]))
			return 400;
	t = sp1 + 1;
	sp2 = memchr(t, ' ', n - (size_t)(t - line));
	if (sp2 == NULL || sp2 == t)
		return 400;
	if ((size_t)(line + n - (sp2 + 1)) != 8 ||
	    (memcmp(sp2 + 1, "HTTP/1.1", 8) != 0 &&
	        memcmp(sp2 + 1, "HTTP/1.0", 8) != 0))
		return 400;
	*target = t;
	*tlen = (size_t)(sp2 - t);
	for (k = 0; k < *tlen; k++)
		if ((unsigned char)t[k] <= ' ' || t[k] == 0x7f)
			return 400;
	h->connect = *mlen == 7 && memcmp(line, "CONNECT", 7) == 0;
	if (h->connect)
		return head_authority(t, *tlen, true, 0, h) == 0 ? 200 : 400;
	/* Only http: an https URI comes as CONNECT from a browser. */
	if (*tlen < 8 || strncasecmp(t, "http://", 7) != 0)
		return 400;
	t += 7;
	auth_end = t;
	while (auth_end < *target + *tlen && *auth_end != '/' &&
	       *auth_end != '?' && *auth_end != '#')
		auth_end++;
	if (head_authority(t, (size_t)(auth_end - t), false, 80, h) != 0)
		return 400;
	*path = auth_end;
	*plen = (size_t)(*target + *tlen - auth_end);
	/* A fragment never goes on the wire. */
	if (memchr(*path, '#', *plen) != NULL)
		*plen =
		    (size_t)((const char *)memchr(*path, '#', *plen) - *path);
	return 200;
}

int
act_egress_parse_head(const char *buf, size_t len, const char *auth,
    struct act_egress_head *h, char *out, size_t outlen)
{
	const char *target = NULL, *path = NULL, *line, *end;
	size_t tlen = 0, plen = 0, mlen = 0, at = 0, n;
	bool have_len = false;
	int st;

	memset(h, 0, sizeof(*h));
	n = head_end(buf, len < CM_EGRESS_HEAD_MAX ? len : CM_EGRESS_HEAD_MAX);
	if (n == 0)
		return len >= CM_EGRESS_HEAD_MAX ? 431 : 0;
	if (memchr(buf, '\0', n) != NULL)
		return 400;
	h->head_len = n;
	end = buf + n - 2; /* the empty line's CRLF */
	line = buf;
	{
		const char *cr = memchr(line, '\r', (size_t)(end - line));
		if (cr == NULL || cr[1] != '\n')
			return 400;
		st = head_request_line(line, (size_t)(cr - line), h, &target,
		    &tlen, &path, &plen, &mlen);
		if (st != 200)
			return st;
		line = cr + 2;
	}
	if (!h->connect) {
		if (!head_put(out, outlen, &at, buf, mlen + 1) ||
		    (plen == 0 || path[0] != '/'
		            ? !head_put(out, outlen, &at, "/", 1)
		            : false) ||
		    !head_put(out, outlen, &at, path, plen) ||
		    !head_put(out, outlen, &at, " HTTP/1.1\r\nHost: ", 17) ||
		    !head_put(out, outlen, &at, target + 7,
		        (size_t)(path - (target + 7))) ||
		    !head_put(out, outlen, &at, "\r\n", 2))
			return 431;
	}
	while (line < end) {
		const char *cr = memchr(line, '\r', (size_t)(end - line));
		const char *colon, *v, *ve;
		size_t ln, nl;

		if (cr == NULL || cr[1] != '\n')
			return 400;
		ln = (size_t)(cr - line);
		colon = memchr(line, ':', ln);
		if (colon == NULL || colon == line)
			return 400; /* a folded line starts with a space: too */
		nl = (size_t)(colon - line);
		for (size_t k = 0; k < nl; k++)
			if (!head_tchar((unsigned char)line[k]))
				return 400;
		for (const char *p = colon + 1; p < cr; p++)
			if (((unsigned char)*p < ' ' && *p != '\t') ||
			    *p == 0x7f)
				return 400;
		v = colon + 1;
		ve = cr;
		while (v < ve && (*v == ' ' || *v == '\t'))
			v++;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		if (nl == 19 &&
		    strncasecmp(line, "proxy-authorization", 19) == 0 &&
		    auth != NULL && head_same(v, (size_t)(ve - v), auth))
			h->auth_ok = true;
		if (!h->connect && nl == 17 &&
		    strncasecmp(line, "transfer-encoding", 17) == 0)
			return 501;
		if (!h->connect && nl == 14 &&
		    strncasecmp(line, "content-length", 14) == 0) {
			uint64_t cl = 0;

			if (v == ve || ve - v > 15)
				return 400;
			for (const char *p = v; p < ve; p++) {
				if (*p < '0' || *p > '9')
					return 400;
				cl = cl * 10 + (uint64_t)(*p - '0');
			}
			if (have_len && cl != h->body_len)
				return 400;
			have_len = true;
			h->body_len = cl;
		}
		if (!h->connect && !head_dropped(line, nl) &&
		    !head_put(out, outlen, &at, line, ln + 2))
			return 431;
		line = cr + 2;
	}
	if (!h->connect &&
	    !head_put(out, outlen, &at, "Connection: close\r\n\r\n", 21))
		return 431;
	h->out_len = at;
	return 200;
}
