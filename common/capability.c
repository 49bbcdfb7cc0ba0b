/*
 * capability.c: the one capability validator (manifest, args schema,
 * network policy).
 *
 * A manifest is checked completely when it is parsed: every schema keyword
 * is known, applies to its schema's type and has a value of the right type,
 * bounds are ordered, and enum values satisfy their own schema.  Validation
 * can then trust the schema and only looks at the args.
 *
 * Decisions worth knowing:
 *   - minLength/maxLength count bytes, not code points: the limits exist to
 *     bound memory and CDP messages, which are measured in bytes.
 *   - "integer" accepts only JSON integers: 1.0 and true are not integers.
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

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json.h"

#define CAP_PATH_MAX 256 /* error path shown to the client */

/* Writes a reason to err and returns -1, for "return cap_err(...)". */
__attribute__((format(printf, 3, 4))) static int
cap_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static bool
cap_in(const char *s, const char *const *list)
{
	for (size_t k = 0; list[k] != NULL; k++)
		if (strcmp(s, list[k]) == 0)
			return true;
	return false;
}

/* Names of bundles, capabilities and properties: [A-Za-z0-9_.-]{1,max}. */
static bool
cap_name_ok(const char *s, size_t max)
{
	size_t n = strlen(s);

	return n > 0 && n <= max &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                 "0123456789_.-") == n;
}

/* Appends a name from a schema or the args to an error path, printable and
 * short. */
static void
cap_path_key(char *dst, size_t dstlen, const char *path, const char *key)
{
	size_t n = (size_t)snprintf(dst, dstlen, "%s.", path);

	for (size_t k = 0; key[k] != '\0' && k < 64 && n + 1 < dstlen; k++)
		dst[n++] = (key[k] > ' ' && key[k] < 0x7f) ? key[k] : '?';
	if (n < dstlen)
		dst[n] = '\0';
}

/* ---- schema checking (at manifest parse) ------------------------------ */

static const char *const cap_keywords[] = {"type", "required", "properties",
    "additionalProperties", "minimum", "maximum", "minLength", "maxLength",
    "minItems", "maxItems", "items", "enum", "format", "oneOf", NULL};

static const struct {
	const char *type;
	const char *const kw[6]; /* keywords besides "type" */
} cap_types[] = {
    {"object",
        {"required", "properties", "additionalProperties", "oneOf", NULL}},
    {"string", {"minLength", "maxLength", "format", "enum", NULL}},
    {"integer", {"minimum", "maximum", "enum", NULL}},
    {"number", {"minimum", "maximum", "enum", NULL}},
    {"boolean", {NULL}},
    {"array", {"minItems", "maxItems", "items", NULL}},
};

static int cap_validate(const json_t *schema, const json_t *v, const char *path,
    size_t depth, char *err, size_t errlen);

/* a <= b for two JSON numbers, exactly when both are integers. */
static bool
cap_num_le(const json_t *a, const json_t *b)
{
	if (json_is_integer(a) && json_is_integer(b))
		return json_integer_value(a) <= json_integer_value(b);
	return json_number_value(a) <= json_number_value(b);
}

/* Checks an optional pair of bounds (minimum/maximum, minLength/...). */
static int
cap_bounds(const json_t *s, const char *lo_kw, const char *hi_kw, bool count,
    bool integer, const char *path, char *err, size_t errlen)
{
	const json_t *lo = json_object_get(s, lo_kw);
	const json_t *hi = json_object_get(s, hi_kw);
	const json_t *b[2] = {lo, hi};

	for (int k = 0; k < 2; k++) {
		if (b[k] == NULL)
			continue;
		bool ok = (count || integer) ? json_is_integer(b[k])
		                             : json_is_number(b[k]);
		if (!ok || (count && json_integer_value(b[k]) < 0))
			return cap_err(err, errlen, "%s: %s must be %s", path,
			    k == 0 ? lo_kw : hi_kw,
			    count     ? "a non-negative integer"
			    : integer ? "an integer"
			              : "a number");
	}
	if (lo != NULL && hi != NULL && !cap_num_le(lo, hi))
		return cap_err(err, errlen, "%s: %s is greater than %s", path,
		    lo_kw, hi_kw);
	return 0;
}

static int cap_schema_check(
    const json_t *s, const char *path, size_t depth, char *err, size_t errlen);

/*
 * oneOf, in the one form the subset knows: a list of {"required": [...]}
 * branches naming declared properties, of which exactly one must hold
 * ("name an element by ref or by selector").
 */
static int
cap_schema_one_of(const json_t *s, const json_t *props, const char *path,
    char *err, size_t errlen)
{
	const json_t *one = json_object_get(s, "oneOf"), *branch, *names;
	size_t i, k;

	if (one == NULL)
		return 0;
	if (!json_is_array(one) || json_array_size(one) < 2 ||
	    json_array_size(one) > CM_SCHEMA_ONEOF_MAX)
		return cap_err(err, errlen,
		    "%s: oneOf must list 2 to %d branches", path,
		    CM_SCHEMA_ONEOF_MAX);
	json_array_foreach(one, i, branch)
	{
		names = json_object_get(branch, "required");
		if (!json_is_object(branch) || json_object_size(branch) != 1 ||
		    !json_is_array(names) || json_array_size(names) == 0 ||
		    json_array_size(names) > CM_SCHEMA_PROPS_MAX)
			return cap_err(err, errlen,
			    "%s: a oneOf branch must be {\"required\": "
			    "[names]}",
			    path);
		for (k = 0; k < json_array_size(names); k++)
			if (json_object_get(props,
			        json_string_value(json_array_get(names, k))) ==
			    NULL)
				return cap_err(err, errlen,
				    "%s: oneOf names a missing property", path);
	}
	return 0;
}

static int
cap_schema_object(
    const json_t *s, const char *path, size_t depth, char *err, size_t errlen)
{
	const json_t *props = json_object_get(s, "properties");
	const json_t *req = json_object_get(s, "required");
	char sub[CAP_PATH_MAX];
	const char *key;
	json_t *child;

	if (!json_is_false(json_object_get(s, "additionalProperties")))
		return cap_err(err, errlen,
		    "%s: additionalProperties must be false", path);
	if (props != NULL && !json_is_object(props))
		return cap_err(
		    err, errlen, "%s: properties must be an object", path);
	if (json_object_size(props) > CM_SCHEMA_PROPS_MAX)
		return cap_err(err, errlen, "%s: more than %d properties", path,
		    CM_SCHEMA_PROPS_MAX);
	json_object_foreach((json_t *)props, key, child)
	{
		if (!cap_name_ok(key, CM_NAME_MAX))
			return cap_err(
			    err, errlen, "%s: bad property name", path);
		cap_path_key(sub, sizeof sub, path, key);
		if (cap_schema_check(child, sub, depth + 1, err, errlen) < 0)
			return -1;
	}
	if (cap_schema_one_of(s, props, path, err, errlen) < 0)
		return -1;
	if (req == NULL)
		return 0;
	if (!json_is_array(req) || json_array_size(req) > CM_SCHEMA_PROPS_MAX)
		return cap_err(
		    err, errlen, "%s: required must be a list", path);
	for (size_t k = 0; k < json_array_size(req); k++) {
		const json_t *r = json_array_get(req, k);
		if (!json_is_string(r) ||
		    json_object_get(props, json_string_value(r)) == NULL)
			return cap_err(err, errlen,
			    "%s: required names a missing property", path);
		for (size_t j = 0; j < k; j++)
			if (json_equal(r, json_array_get(req, j)))
				return cap_err(err, errlen,
				    "%s: required repeats a name", path);
	}
	return 0;
}

static int
cap_schema_enum(const json_t *s, const char *type, const char *path, char *err,
    size_t errlen)
{
	const json_t *e = json_object_get(s, "enum");
	char sub[CAP_PATH_MAX];

	if (e == NULL)
		return 0;
	if (!json_is_array(e) || json_array_size(e) == 0 ||
	    json_array_size(e) > CM_SCHEMA_ENUM_MAX)
		return cap_err(err, errlen, "%s: enum must list 1 to %d values",
		    path, CM_SCHEMA_ENUM_MAX);
	for (size_t k = 0; k < json_array_size(e); k++) {
		const json_t *x = json_array_get(e, k);
		bool ok = strcmp(type, "string") == 0    ? json_is_string(x)
		          : strcmp(type, "integer") == 0 ? json_is_integer(x)
		                                         : json_is_number(x);
		if (!ok)
			return cap_err(
			    err, errlen, "%s: enum value of wrong type", path);
		for (size_t j = 0; j < k; j++)
			if (json_equal(x, json_array_get(e, j)))
				return cap_err(err, errlen,
				    "%s: enum repeats a value", path);
		/* A value the schema's own bounds refuse is a manifest bug. */
		snprintf(sub, sizeof sub, "%s.enum[%zu]", path, k);
		if (cap_validate(s, x, sub, 0, err, errlen) < 0)
			return -1;
	}
	return 0;
}

static int
cap_schema_check(
    const json_t *s, const char *path, size_t depth, char *err, size_t errlen)
{
	const char *type, *key;
	const json_t *child, *fmt;
	char sub[CAP_PATH_MAX];
	size_t t;

	if (depth > CM_JSON_DEPTH_MAX)
		return cap_err(err, errlen, "%s: schema nested too deep", path);
	if (!json_is_object(s))
		return cap_err(
		    err, errlen, "%s: schema must be an object", path);
	type = json_string_value(json_object_get(s, "type"));
	for (t = 0; t < sizeof cap_types / sizeof *cap_types; t++)
		if (type != NULL && strcmp(type, cap_types[t].type) == 0)
			break;
	if (t == sizeof cap_types / sizeof *cap_types)
		return cap_err(
		    err, errlen, "%s: type missing or unknown", path);
	json_object_foreach((json_t *)s, key, child)
	{
		if (!cap_in(key, cap_keywords))
			return cap_err(err, errlen, "%s: unknown keyword %.64s",
			    path, key);
		if (strcmp(key, "type") != 0 && !cap_in(key, cap_types[t].kw))
			return cap_err(err, errlen,
			    "%s: %s does not apply to %s", path, key, type);
	}
	if (strcmp(type, "object") == 0)
		return cap_schema_object(s, path, depth, err, errlen);
	if (strcmp(type, "array") == 0) {
		snprintf(sub, sizeof sub, "%s[]", path);
		if (json_object_get(s, "items") == NULL)
			return cap_err(
			    err, errlen, "%s: array without items", path);
		if (cap_bounds(s, "minItems", "maxItems", true, true, path, err,
		        errlen) < 0)
			return -1;
		return cap_schema_check(
		    json_object_get(s, "items"), sub, depth + 1, err, errlen);
	}
	if (strcmp(type, "string") == 0) {
		fmt = json_object_get(s, "format");
		if (fmt != NULL &&
		    !(json_is_string(fmt) &&
		        strcmp(json_string_value(fmt), "http-url") == 0))
			return cap_err(err, errlen, "%s: unknown format", path);
		if (cap_bounds(s, "minLength", "maxLength", true, true, path,
		        err, errlen) < 0)
			return -1;
	} else if (strcmp(type, "boolean") != 0) {
		if (cap_bounds(s, "minimum", "maximum", false,
		        strcmp(type, "integer") == 0, path, err, errlen) < 0)
			return -1;
	}
	return cap_schema_enum(s, type, path, err, errlen);
}

/* ---- validation ------------------------------------------------------- */

/* The oneOf branches whose required names are all in v. */
static size_t
cap_one_of_count(const json_t *one, const json_t *v)
{
	const json_t *branch;
	size_t i, k, n = 0;

	json_array_foreach(one, i, branch)
	{
		const json_t *names = json_object_get(branch, "required");

		for (k = 0; k < json_array_size(names); k++)
			if (json_object_get(v, json_string_value(json_array_get(
			                           names, k))) == NULL)
				break;
		n += k == json_array_size(names);
	}
	return n;
}

static int
cap_validate_object(const json_t *s, const json_t *v, const char *path,
    size_t depth, char *err, size_t errlen)
{
	const json_t *props = json_object_get(s, "properties");
	const json_t *req = json_object_get(s, "required");
	char sub[CAP_PATH_MAX];
	const char *key;
	json_t *child;

	/* v may be NULL at the top: no args mean {}. */
	json_object_foreach((json_t *)v, key, child)
	{
		const json_t *ps = json_object_get(props, key);
		cap_path_key(sub, sizeof sub, path, key);
		if (ps == NULL)
			return cap_err(
			    err, errlen, "%s: unknown property", sub);
		if (cap_validate(ps, child, sub, depth + 1, err, errlen) < 0)
			return -1;
	}
	for (size_t k = 0; k < json_array_size(req); k++) {
		const char *name = json_string_value(json_array_get(req, k));
		if (json_object_get(v, name) == NULL) {
			cap_path_key(sub, sizeof sub, path, name);
			return cap_err(err, errlen, "%s: required", sub);
		}
	}
	if (json_object_get(s, "oneOf") != NULL &&
	    cap_one_of_count(json_object_get(s, "oneOf"), v) != 1)
		return cap_err(err, errlen,
		    "%s: exactly one of the alternatives is required",
		    path[0] ? path : "args");
	return 0;
}

static bool
cap_in_bounds(const json_t *s, const char *lo, const char *hi, const json_t *v)
{
	const json_t *l = json_object_get(s, lo), *h = json_object_get(s, hi);

	return (l == NULL || cap_num_le(l, v)) &&
	       (h == NULL || cap_num_le(v, h));
}

/* n within the integer bounds lo..hi (both optional and non-negative). */
static bool
cap_count_ok(const json_t *s, const char *lo, const char *hi, size_t n)
{
	const json_t *l = json_object_get(s, lo), *h = json_object_get(s, hi);

	return (l == NULL || (json_int_t)n >= json_integer_value(l)) &&
	       (h == NULL || (json_int_t)n <= json_integer_value(h));
}

static int
cap_validate(const json_t *s, const json_t *v, const char *path, size_t depth,
    char *err, size_t errlen)
{
	const char *type = json_string_value(json_object_get(s, "type"));
	const json_t *e = json_object_get(s, "enum");
	char sub[CAP_PATH_MAX];
	bool ok;

	if (depth > CM_JSON_DEPTH_MAX)
		return cap_err(err, errlen, "%s: nested too deep", path);
	if (strcmp(type, "object") == 0)
		ok = (v == NULL && depth == 0) || json_is_object(v);
	else if (strcmp(type, "string") == 0)
		ok = json_is_string(v);
	else if (strcmp(type, "integer") == 0)
		ok = json_is_integer(v);
	else if (strcmp(type, "number") == 0)
		ok = json_is_number(v);
	else if (strcmp(type, "boolean") == 0)
		ok = json_is_boolean(v);
	else
		ok = json_is_array(v);
	if (!ok)
		return cap_err(err, errlen, "%s: must be %s %s", path,
		    type[0] == 'a' || type[0] == 'i' || type[0] == 'o' ? "an"
		                                                       : "a",
		    type);
	if (strcmp(type, "object") == 0)
		return cap_validate_object(s, v, path, depth, err, errlen);
	if (strcmp(type, "array") == 0) {
		if (!cap_count_ok(
		        s, "minItems", "maxItems", json_array_size(v)))
			return cap_err(
			    err, errlen, "%s: wrong number of items", path);
		for (size_t k = 0; k < json_array_size(v); k++) {
			snprintf(sub, sizeof sub, "%s[%zu]", path, k);
			if (cap_validate(json_object_get(s, "items"),
			        json_array_get(v, k), sub, depth + 1, err,
			        errlen) < 0)
				return -1;
		}
		return 0;
	}
	if (strcmp(type, "string") == 0) {
		size_t len = json_string_length(v);
		char host[CM_HOST_MAX + 3];
		if (!cap_count_ok(s, "minLength", "maxLength", len))
			return cap_err(
			    err, errlen, "%s: length out of range", path);
		if (json_object_get(s, "format") != NULL &&
		    (len > CM_URL_MAX || strlen(json_string_value(v)) != len ||
		        cm_url_host(json_string_value(v), host, sizeof host) <
		            0))
			return cap_err(
			    err, errlen, "%s: must be an http(s) URL", path);
	} else if ((strcmp(type, "integer") == 0 ||
	               strcmp(type, "number") == 0) &&
	           !cap_in_bounds(s, "minimum", "maximum", v))
		return cap_err(err, errlen, "%s: out of range", path);
	for (size_t k = 0; k < json_array_size(e); k++)
		if (json_equal(v, json_array_get(e, k)))
			return 0;
	if (e != NULL)
		return cap_err(
		    err, errlen, "%s: not one of the allowed values", path);
	return 0;
}

/* ---- bundles ---------------------------------------------------------- */

void
cm_bundle_free(struct cm_bundle *b)
{
	if (b == NULL)
		return;
	for (size_t k = 0; k < b->n_caps; k++)
		json_decref(b->caps[k].args_schema);
	free(b);
}

const struct cm_capability *
cm_bundle_find(const struct cm_bundle *b, const char *name)
{
	for (size_t k = 0; b != NULL && name != NULL && k < b->n_caps; k++)
		if (strcmp(b->caps[k].name, name) == 0)
			return &b->caps[k];
	return NULL;
}

static int
cap_parse_cap(
    struct cm_bundle *b, const json_t *c, size_t k, char *err, size_t errlen)
{
	static const char *const keys[] = {"name", "network", "args", NULL};
	const char *name = json_string_value(json_object_get(c, "name"));
	const json_t *args = json_object_get(c, "args");
	char path[CAP_PATH_MAX];

	if (!json_is_object(c))
		return cap_err(
		    err, errlen, "capabilities[%zu]: not an object", k);
	if (cm_json_only_keys(c, keys, err, errlen) < 0)
		return -1;
	if (name == NULL || !cap_name_ok(name, CM_CAPABILITY_MAX) ||
	    !json_is_boolean(json_object_get(c, "network")) || args == NULL)
		return cap_err(err, errlen,
		    "capabilities[%zu]: needs name [A-Za-z0-9_.-]{1,%d}, "
		    "network (boolean) and args",
		    k, CM_CAPABILITY_MAX);
	if (cm_bundle_find(b, name) != NULL)
		return cap_err(
		    err, errlen, "capability %s declared twice", name);
	snprintf(path, sizeof path, "%s.args", name);
	if (cap_schema_check(args, path, 1, err, errlen) < 0)
		return -1;
	if (strcmp(json_string_value(json_object_get(args, "type")),
	        "object") != 0)
		return cap_err(err, errlen, "%s: args must be an object", path);
	memcpy(b->caps[k].name, name, strlen(name) + 1);
	b->caps[k].network = json_is_true(json_object_get(c, "network"));
	b->caps[k].args_schema = json_incref((json_t *)args);
	b->n_caps = k + 1;
	return 0;
}

/* The manifest's top level; capabilities are checked as they are copied. */
static int
cap_manifest_shape(const json_t *root, char *err, size_t errlen)
{
	static const char *const keys[] = {
	    "name", "version", "capabilities", NULL};
	const char *name = json_string_value(json_object_get(root, "name"));
	const char *ver = json_string_value(json_object_get(root, "version"));
	const json_t *caps = json_object_get(root, "capabilities");

	if (!json_is_object(root))
		return cap_err(err, errlen, "manifest must be an object");
	if (cm_json_only_keys(root, keys, err, errlen) < 0)
		return -1;
	if (name == NULL || !cap_name_ok(name, CM_NAME_MAX) || ver == NULL ||
	    !cap_name_ok(ver, CM_NAME_MAX))
		return cap_err(err, errlen,
		    "manifest needs name and version ([A-Za-z0-9_.-]{1,%d})",
		    CM_NAME_MAX);
	if (!json_is_array(caps) || json_array_size(caps) == 0 ||
	    json_array_size(caps) > CM_BUNDLE_CAPS_MAX)
		return cap_err(err, errlen,
		    "capabilities must list 1 to %d entries",
		    CM_BUNDLE_CAPS_MAX);
	return 0;
}

int
cm_bundle_parse(const char *text, size_t len, struct cm_bundle **out, char *err,
    size_t errlen)
{
	struct cm_bundle *b = NULL;
	json_t *root = NULL;
	const json_t *caps;

	if (out == NULL)
		return -1;
	*out = NULL;
	if (cm_json_parse(text, len, CM_MANIFEST_MAX, CM_JSON_DEPTH_MAX, &root,
	        err, errlen) < 0)
		return -1;
	if (cap_manifest_shape(root, err, errlen) < 0)
		goto fail;
	if ((b = calloc(1, sizeof *b)) == NULL) {
		cap_err(err, errlen, "out of memory");
		goto fail;
	}
	snprintf(b->name, sizeof b->name, "%s",
	    json_string_value(json_object_get(root, "name")));
	snprintf(b->version, sizeof b->version, "%s",
	    json_string_value(json_object_get(root, "version")));
	caps = json_object_get(root, "capabilities");
	for (size_t k = 0; k < json_array_size(caps); k++)
		if (cap_parse_cap(b, json_array_get(caps, k), k, err, errlen) <
		    0)
			goto fail;
	json_decref(root); /* the bundle keeps its schemas */
	*out = b;
	return 0;
fail:
	cm_bundle_free(b);
	json_decref(root);
	return -1;
}

enum cm_err
cm_capability_check_args(
    const struct cm_capability *c, const json_t *args, char *err, size_t errlen)
{
	if (c == NULL || c->args_schema == NULL) {
		cap_err(err, errlen, "no schema");
		return CM_E_INVALID_ARGS;
	}
	return cap_validate(c->args_schema, args, "args", 0, err, errlen) < 0
	           ? CM_E_INVALID_ARGS
	           : CM_OK;
}

enum cm_err
cm_capability_check(const struct cm_bundle *b, const char *const *granted,
    size_t n_granted, const char *capability, const json_t *args, char *err,
    size_t errlen)
{
	const struct cm_capability *c = cm_bundle_find(b, capability);
	size_t k;

	if (c == NULL) {
		cap_err(err, errlen, "capability is not in the bundle");
		return CM_E_CAPABILITY_UNKNOWN;
	}
	for (k = 0; k < n_granted; k++)
		if (granted != NULL && granted[k] != NULL &&
		    strcmp(granted[k], capability) == 0)
			break;
	if (k == n_granted) {
		cap_err(err, errlen, "capability is not granted");
		return CM_E_CAPABILITY_NOT_GRANTED;
	}
	return cm_capability_check_args(c, args, err, errlen);
}

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
		return cap_err(err, errlen, "policy must be an object");
	if (cm_json_only_keys(root, keys, err, errlen) < 0)
		return -1;
	if ((deny != NULL && !json_is_boolean(deny)) ||
	    (hosts != NULL &&
	        (!json_is_array(hosts) ||
	            json_array_size(hosts) > CM_POLICY_HOSTS_MAX)))
		return cap_err(err, errlen,
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
			return cap_err(
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
