/*
 * capability.h: the one capability validator.
 *
 * A runtime bundle manifest (etc/bundles/ *.json) names capabilities, each
 * with an args schema in a small JSON Schema subset, and whether it touches
 * the network:
 *
 *   {"name": "fake", "version": "1",
 *    "capabilities": [
 *      {"name": "sleep", "network": false,
 *       "args": {"type": "object", "additionalProperties": false,
 *                "required": ["ms"],
 *                "properties": {"ms": {"type": "integer",
 *                                      "minimum": 0, "maximum": 600000}}}}]}
 *
 * Schema keywords: type (object, string, integer, number, boolean, array),
 * required, properties, additionalProperties (must be false on objects),
 * minimum, maximum, minLength, maxLength, minItems, maxItems, items, enum,
 * format ("http-url"; "key": a key name or one printable character, as
 * keys.h says; "file-name", a name cm_file_name_valid takes), and on
 * objects oneOf as a list of {"required":
 * [names]} branches of which exactly one must hold.  A manifest using anything
 * else is rejected when it is parsed, so validation never meets an unknown
 * keyword.
 *
 * A network policy is {"allow_hosts": ["example.com", "*.example.org"],
 * "deny_private_networks": true}.  An empty allow_hosts allows every host
 * that deny_private_networks does not exclude.
 */
#ifndef CM_CAPABILITY_H
#define CM_CAPABILITY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "errors.h"
#include "limits.h"

struct cm_capability {
	char name[CM_CAPABILITY_MAX + 1];
	bool network;
	json_t *args_schema; /* owned by the bundle */
};

struct cm_bundle {
	char name[CM_NAME_MAX + 1];
	char version[CM_NAME_MAX + 1];
	size_t n_caps;
	struct cm_capability caps[CM_BUNDLE_CAPS_MAX];
};

/*
 * Parses and checks a manifest (at most CM_MANIFEST_MAX bytes).  On success
 * *out is a new bundle (free with cm_bundle_free).  On failure returns -1
 * with a reason in err.
 */
int cm_bundle_parse(const char *text, size_t len, struct cm_bundle **out,
    char *err, size_t errlen);
void cm_bundle_free(struct cm_bundle *b);
const struct cm_capability *cm_bundle_find(
    const struct cm_bundle *b, const char *name);

/*
 * Validates args (must be an object) against the capability's schema.
 * Returns CM_OK or CM_E_INVALID_ARGS with the offending path in err.
 */
enum cm_err cm_capability_check_args(const struct cm_capability *c,
    const json_t *args, char *err, size_t errlen);

/*
 * The full check that comes before any runtime dispatch: the capability
 * must be in the bundle (CM_E_CAPABILITY_UNKNOWN), in granted (n names;
 * CM_E_CAPABILITY_NOT_GRANTED) and its args valid (CM_E_INVALID_ARGS).
 */
enum cm_err cm_capability_check(const struct cm_bundle *b,
    const char *const *granted, size_t n_granted, const char *capability,
    const json_t *args, char *err, size_t errlen);

struct cm_policy {
	size_t n_hosts;
	char hosts[CM_POLICY_HOSTS_MAX][CM_HOST_MAX + 1]; /* lowercased */
	bool deny_private_networks;
};

/* Parses a policy object; "{}" or an empty string is the open policy. */
int cm_policy_parse(const char *text, size_t len, struct cm_policy *out,
    char *err, size_t errlen);

/*
 * True when host (a DNS name or an IPv4/IPv6 literal, brackets allowed) is
 * allowed.  "*.example.com" matches any proper subdomain, not the apex.
 * deny_private_networks refuses loopback, RFC 1918, link-local, CGNAT,
 * unique-local IPv6, "localhost" and *.localhost.
 */
bool cm_policy_allows_host(const struct cm_policy *p, const char *host);

/*
 * The one classifier of addresses deny_private_networks refuses: family
 * AF_INET (addr: 4 bytes) or AF_INET6 (16 bytes), network order.  True
 * for loopback, "this network" and unspecified, RFC 1918, CGNAT
 * 100.64/10, link-local 169.254/16, multicast, reserved 240/4, ::, ::1,
 * ULA fc00::/7, fe80::/10 (and the old site-local fec0::/10), IPv6
 * multicast, and the IPv6 forms that carry an IPv4 address (mapped
 * ::ffff:0:0/96, compatible ::/96, NAT64 64:ff9b::/96, 6to4 2002::/16)
 * when that address is one of these.  Any other family: true.
 */
bool cm_addr_private(int family, const void *addr);

/*
 * Judges host as cm_policy_allows_host does: a numeric host in any
 * spelling a browser accepts ("127.1", "0x7f000002", "2130706434",
 * "[::ffff:127.0.0.2]") is its address.  Returns 1 with *family and addr
 * (network order) set when host is an address, 0 when it is a DNS name,
 * -1 when it is not a host; canon gets the canonical spelling (lowercase
 * name without trailing dot, dotted quad, RFC 5952) on 0 and 1.
 */
int cm_host_numeric(const char *host, int *family, unsigned char addr[16],
    char *canon, size_t canonlen);

/*
 * Parses an http or https URL (at most CM_URL_MAX) and checks its host.
 * Returns CM_OK, CM_E_INVALID_ARGS for a malformed URL or other scheme, or
 * CM_E_HOST_NOT_ALLOWED.
 */
enum cm_err cm_policy_check_url(const struct cm_policy *p, const char *url);

/*
 * Extracts the host of an http(s) URL into host (lowercased, brackets
 * stripped).  Returns 0, or -1 when url is not a well-formed http(s) URL.
 */
int cm_url_host(const char *url, char *host, size_t hostlen);

#endif
