/*
 * capability_policy.c: hosts and the network policy of capability.h: the
 * host parser, the private-address classifier, policy parsing and the
 * host and URL checks.
 *
 * Decisions worth knowing:
 *   - Hosts follow what a browser does with them, so that the check made
 *     here is the check that matters: a host whose last label is a number
 *     is an IPv4 address in inet_aton form (2130706433, 0x7f.1, 017700000001
 *     are all 127.0.0.1), and one that does not parse as such is refused.
 *     Percent-escapes, backslashes and non-ASCII bytes in a host are refused
 *     because browsers rewrite them (IDNA maps fullwidth digits to ASCII).
 *   - deny_private_networks wins over allow_hosts.  It judges the literal
 *     host only; a public name that resolves to a private address is left
 *     to the actor's egress proxy, which judges every address it resolves
 *     with the same classifier (cm_addr_private).
 */
#include "capability.h"
#include "capability_int.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json.h"

/* ---- hosts and network policy ----------------------------------------- */

enum cap_host_kind { CAP_DNS, CAP_V4, CAP_V6 };

struct cap_host {
	enum cap_host_kind kind;
	uint32_t v4;
	unsigned char v6[16];
	/* Canonical: lowercase without trailing dot, dotted quad, RFC 5952. */
	char name[CM_HOST_MAX + 1];
};

/* One inet_aton part: decimal, 0-prefixed octal or 0x-prefixed hex. */
static bool
cap_v4_part(const char *s, size_t n, uint64_t *out)
{
	static const char digits[] = "0123456789abcdef";
	unsigned base = 10;
	uint64_t v = 0;

	if (n >= 2 && s[0] == '0' && s[1] == 'x') {
		base = 16;
		s += 2;
		n -= 2;
	} else if (n >= 2 && s[0] == '0') {
		base = 8;
	} else if (n == 0) {
		return false;
	}
	for (size_t k = 0; k < n; k++) {
		const char *d = strchr(digits, s[k]);
		if (s[k] == '\0' || d == NULL || (unsigned)(d - digits) >= base)
			return false;
		v = v * base + (unsigned)(d - digits);
		if (v > 0xffffffffu)
			return false;
	}
	*out = v;
	return true;
}

/* inet_aton forms (1 to 4 parts, the last filling the remaining bytes),
 * which is also what browsers accept as an IPv4 host. */
static bool
cap_v4_parse(const char *s, uint32_t *out)
{
	uint64_t part[4], v = 0;
	size_t n = 0;

	for (const char *p = s;;) {
		const char *dot = strchr(p, '.');
		size_t len = dot != NULL ? (size_t)(dot - p) : strlen(p);
		if (n == 4 || !cap_v4_part(p, len, &part[n++]))
			return false;
		if (dot == NULL)
			break;
		p = dot + 1;
	}
	for (size_t k = 0; k + 1 < n; k++) {
		if (part[k] > 255)
			return false;
		v |= part[k] << (8 * (3 - k));
	}
	if (part[n - 1] >= (UINT64_C(1) << (8 * (5 - n))))
		return false;
	*out = (uint32_t)(v | part[n - 1]);
	return true;
}

/* A host whose last label is a number is meant as IPv4 (WHATWG URL). */
static bool
cap_ends_in_number(const char *s)
{
	const char *l = strrchr(s, '.') != NULL ? strrchr(s, '.') + 1 : s;
	size_t n = strlen(l);

	if (n >= 2 && l[0] == '0' && l[1] == 'x')
		return strspn(l + 2, "0123456789abcdef") == n - 2;
	return n > 0 && strspn(l, "0123456789") == n;
}

/* Parses a host (brackets allowed around IPv6) into h.  -1 when it is not
 * a plain host: empty, too long, odd characters, empty labels, or a
 * numeric host that is not a valid IPv4 address. */
static int
cap_host_parse(const char *in, struct cap_host *h)
{
	char buf[CM_HOST_MAX + 3];
	size_t n = strnlen(in, sizeof buf);

	if (n == 0 || n == sizeof buf)
		return -1;
	for (size_t k = 0; k <= n; k++)
		buf[k] =
		    (in[k] >= 'A' && in[k] <= 'Z') ? (char)(in[k] + 32) : in[k];
	if (buf[0] == '[' || strchr(buf, ':') != NULL) {
		if (buf[0] == '[') {
			if (n < 3 || buf[n - 1] != ']')
				return -1;
			buf[n - 1] = '\0';
			memmove(buf, buf + 1, n - 1);
		}
		if (inet_pton(AF_INET6, buf, h->v6) != 1)
			return -1;
		h->kind = CAP_V6;
		inet_ntop(AF_INET6, h->v6, h->name, sizeof h->name);
		return 0;
	}
	if (buf[n - 1] == '.')
		buf[--n] = '\0';
	if (n == 0 || n > CM_HOST_MAX || buf[0] == '.' ||
	    strstr(buf, "..") != NULL ||
	    strspn(buf, "abcdefghijklmnopqrstuvwxyz0123456789.-_") != n)
		return -1;
	if (cap_ends_in_number(buf)) {
		struct in_addr a;
		if (!cap_v4_parse(buf, &h->v4))
			return -1;
		h->kind = CAP_V4;
		a.s_addr = htonl(h->v4);
		inet_ntop(AF_INET, &a, h->name, sizeof h->name);
		return 0;
	}
	h->kind = CAP_DNS;
	memcpy(h->name, buf, n + 1);
	return 0;
}

/* Loopback, "this network" (0/8, with the unspecified 0.0.0.0), RFC 1918,
 * CGNAT, link-local, multicast and reserved (240/4, which includes the
 * broadcast address). */
static bool
cap_v4_private(uint32_t a)
{
	static const struct {
		uint32_t net;
		unsigned bits;
	} r[] = {{0x00000000, 8}, {0x0a000000, 8}, {0x64400000, 10},
	    {0x7f000000, 8}, {0xa9fe0000, 16}, {0xac100000, 12},
	    {0xc0a80000, 16}, {0xe0000000, 4}, {0xf0000000, 4}};

	for (size_t k = 0; k < sizeof r / sizeof *r; k++)
		if (a >> (32 - r[k].bits) == r[k].net >> (32 - r[k].bits))
			return true;
	return false;
}

static bool
cap_v6_private(const unsigned char *b)
{
	static const unsigned char zero[16];
	uint32_t v4 = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 |
	              (uint32_t)b[14] << 8 | b[15];

	if (memcmp(b, zero, 15) == 0 && b[15] <= 1)
		return true; /* :: and ::1 */
	if ((b[0] & 0xfe) == 0xfc || b[0] == 0xff ||
	    (b[0] == 0xfe && (b[1] & 0x80) != 0))
		return true; /* fc00::/7, multicast, fe80::/10, fec0::/10 */
	/* Forms that carry an IPv4 address a stack may route to it:
	 * ::ffff:a.b.c.d, ::a.b.c.d, 64:ff9b::a.b.c.d and 6to4 2002::/16. */
	if (memcmp(b, zero, 10) == 0 &&
	    ((b[10] == 0xff && b[11] == 0xff) || (b[10] == 0 && b[11] == 0)))
		return cap_v4_private(v4);
	if (b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b &&
	    memcmp(b + 4, zero, 8) == 0)
		return cap_v4_private(v4);
	if (b[0] == 0x20 && b[1] == 0x02)
		return cap_v4_private((uint32_t)b[2] << 24 |
		                      (uint32_t)b[3] << 16 |
		                      (uint32_t)b[4] << 8 | b[5]);
	return false;
}

bool
cm_addr_private(int family, const void *addr)
{
	const unsigned char *b = addr;

	if (family == AF_INET)
		return cap_v4_private((uint32_t)b[0] << 24 |
		                      (uint32_t)b[1] << 16 |
		                      (uint32_t)b[2] << 8 | b[3]);
	if (family == AF_INET6)
		return cap_v6_private(b);
	return true; /* nothing else is judged: refused */
}

int
cm_host_numeric(const char *host, int *family, unsigned char addr[16],
    char *canon, size_t canonlen)
{
	struct cap_host h;

	if (host == NULL || cap_host_parse(host, &h) < 0)
		return -1;
	if ((size_t)snprintf(canon, canonlen, "%s", h.name) >= canonlen)
		return -1;
	if (h.kind == CAP_DNS)
		return 0;
	if (h.kind == CAP_V4) {
		*family = AF_INET;
		addr[0] = (unsigned char)(h.v4 >> 24);
		addr[1] = (unsigned char)(h.v4 >> 16);
		addr[2] = (unsigned char)(h.v4 >> 8);
		addr[3] = (unsigned char)h.v4;
	} else {
		*family = AF_INET6;
		memcpy(addr, h.v6, 16);
	}
	return 1;
}

static bool
cap_host_private(const struct cap_host *h)
{
	size_t n = strlen(h->name);

	if (h->kind == CAP_V4)
		return cap_v4_private(h->v4);
	if (h->kind == CAP_V6)
		return cap_v6_private(h->v6);
	return strcmp(h->name, "localhost") == 0 ||
	       (n > 10 && strcmp(h->name + n - 10, ".localhost") == 0);
}

bool
cm_policy_allows_host(const struct cm_policy *p, const char *host)
{
	struct cap_host h;
	size_t n;

	if (p == NULL || host == NULL || cap_host_parse(host, &h) < 0)
		return false;
	if (p->deny_private_networks && cap_host_private(&h))
		return false;
	if (p->n_hosts == 0)
		return true;
	n = strlen(h.name);
	for (size_t k = 0; k < p->n_hosts && k < CM_POLICY_HOSTS_MAX; k++) {
		const char *e = p->hosts[k];
		size_t m = strlen(e) - (e[0] == '*'); /* ".example.com" */
		if (e[0] == '*' ? h.kind == CAP_DNS && n > m &&
		                      memcmp(h.name + n - m, e + 1, m) == 0
		                : strcmp(h.name, e) == 0)
			return true;
	}
	return false;
}

static int
cap_policy_fill(
    const json_t *root, struct cm_policy *out, char *err, size_t errlen)
{
	static const char *const keys[] = {
	    "allow_hosts", "deny_private_networks", NULL};
	const json_t *hosts = json_object_get(root, "allow_hosts");
	const json_t *deny = json_object_get(root, "deny_private_networks");

	if (!json_is_object(root))
		return cm_cap_err(err, errlen, "policy must be an object");
	if (cm_json_only_keys(root, keys, err, errlen) < 0)
		return -1;
	if ((deny != NULL && !json_is_boolean(deny)) ||
	    (hosts != NULL &&
	        (!json_is_array(hosts) ||
	            json_array_size(hosts) > CM_POLICY_HOSTS_MAX)))
		return cm_cap_err(err, errlen,
		    "allow_hosts must list at most %d hosts and "
		    "deny_private_networks be a boolean",
		    CM_POLICY_HOSTS_MAX);
	for (size_t k = 0; k < json_array_size(hosts); k++) {
		const char *s = json_string_value(json_array_get(hosts, k));
		bool wild = s != NULL && strncmp(s, "*.", 2) == 0;
		struct cap_host h;
		if (s == NULL || cap_host_parse(s + (wild ? 2 : 0), &h) < 0 ||
		    (wild && (h.kind != CAP_DNS ||
		                 strlen(h.name) + 2 > CM_HOST_MAX)))
			return cm_cap_err(
			    err, errlen, "allow_hosts[%zu]: not a host", k);
		char *e = out->hosts[out->n_hosts++];
		memcpy(e, "*.", wild ? 2 : 0);
		memcpy(e + (wild ? 2 : 0), h.name, strlen(h.name) + 1);
	}
	out->deny_private_networks = json_is_true(deny);
	return 0;
}

int
cm_policy_parse(const char *text, size_t len, struct cm_policy *out, char *err,
    size_t errlen)
{
	json_t *root = NULL;
	size_t k = 0;

	if (out == NULL)
		return -1;
	memset(out, 0, sizeof *out);
	while (text != NULL && k < len && text[k] != '\0' &&
	       strchr(" \t\r\n", text[k]) != NULL)
		k++;
	if (text == NULL || k == len)
		return 0;
	if (cm_json_parse(text, len, CM_POLICY_MAX, CM_JSON_DEPTH_MAX, &root,
	        err, errlen) == 0 &&
	    cap_policy_fill(root, out, err, errlen) == 0) {
		json_decref(root);
		return 0;
	}
	json_decref(root);
	/* A caller that ignores the error gets a policy that allows nothing:
	 * one entry no host can equal, and no private address. */
	memset(out, 0, sizeof *out);
	out->n_hosts = 1;
	out->deny_private_networks = true;
	return -1;
}

int
cm_url_host(const char *url, char *host, size_t hostlen)
{
	size_t n, skip, end, hs, he;
	struct cap_host h;
	char buf[CM_HOST_MAX + 3];

	if (url == NULL || host == NULL ||
	    (n = strnlen(url, CM_URL_MAX + 1)) > CM_URL_MAX)
		return -1;
	/* A backslash is a path separator to a browser but not to others. */
	for (size_t k = 0; k < n; k++)
		if ((unsigned char)url[k] <= ' ' || url[k] == 0x7f ||
		    url[k] == '\\')
			return -1;
	if (strncasecmp(url, "http://", 7) == 0)
		skip = 7;
	else if (strncasecmp(url, "https://", 8) == 0)
		skip = 8;
	else
		return -1;
	end = skip + strcspn(url + skip, "/?#");
	hs = skip;
	for (size_t k = skip; k < end; k++)
		if (url[k] == '@')
			hs = k + 1; /* the last '@' ends userinfo */
	if (url[hs] == '[') {
		const char *rb = memchr(url + hs, ']', end - hs);
		if (rb == NULL)
			return -1;
		he = (size_t)(rb - url) + 1;
	} else {
		he = hs + strcspn(url + hs, ":/?#");
	}
	if (he < end &&
	    (url[he] != ':' || end - he > 6 ||
	        strspn(url + he + 1, "0123456789") != end - he - 1 ||
	        strtol(url + he + 1, NULL, 10) > 65535))
		return -1;
	if (he == hs || he - hs >= sizeof buf)
		return -1;
	memcpy(buf, url + hs, he - hs);
	buf[he - hs] = '\0';
	if (cap_host_parse(buf, &h) < 0)
		return -1;
	if (buf[0] == '[') {
		memmove(buf, buf + 1, he - hs - 2);
		buf[he - hs - 2] = '\0';
	}
	if (strlen(buf) >= hostlen)
		return -1;
	for (size_t k = 0; buf[k] != '\0'; k++)
		host[k] = (buf[k] >= 'A' && buf[k] <= 'Z') ? (char)(buf[k] + 32)
		                                           : buf[k];
	host[strlen(buf)] = '\0';
	return 0;
}

enum cm_err
cm_policy_check_url(const struct cm_policy *p, const char *url)
{
	char host[CM_HOST_MAX + 3];

	if (cm_url_host(url, host, sizeof host) < 0)
		return CM_E_INVALID_ARGS;
	return cm_policy_allows_host(p, host) ? CM_OK : CM_E_HOST_NOT_ALLOWED;
}
