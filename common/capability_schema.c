/*
 * capability_schema.c: the args schema subset of capability.h, checked
 * when a manifest is parsed (cm_cap_schema_check) and then applied to a
 * call's args (cm_cap_validate).
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
 */
#include "capability.h"
#include "capability_int.h"

#include <stdio.h>
#include <string.h>

#include "ids.h"
#include "json.h"
#include "keys.h"

static bool
cap_in(const char *s, const char *const *list)
{
	for (size_t k = 0; list[k] != NULL; k++)
		if (strcmp(s, list[k]) == 0)
			return true;
	return false;
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
			return cm_cap_err(err, errlen, "%s: %s must be %s",
			    path, k == 0 ? lo_kw : hi_kw,
			    count     ? "a non-negative integer"
			    : integer ? "an integer"
			              : "a number");
	}
	if (lo != NULL && hi != NULL && !cap_num_le(lo, hi))
		return cm_cap_err(err, errlen, "%s: %s is greater than %s",
		    path, lo_kw, hi_kw);
	return 0;
}

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
		return cm_cap_err(err, errlen,
		    "%s: oneOf must list 2 to %d branches", path,
		    CM_SCHEMA_ONEOF_MAX);
	json_array_foreach(one, i, branch)
	{
		names = json_object_get(branch, "required");
		if (!json_is_object(branch) || json_object_size(branch) != 1 ||
		    !json_is_array(names) || json_array_size(names) == 0 ||
		    json_array_size(names) > CM_SCHEMA_PROPS_MAX)
			return cm_cap_err(err, errlen,
			    "%s: a oneOf branch must be {\"required\": "
			    "[names]}",
			    path);
		for (k = 0; k < json_array_size(names); k++)
			if (json_object_get(props,
			        json_string_value(json_array_get(names, k))) ==
			    NULL)
				return cm_cap_err(err, errlen,
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
		return cm_cap_err(err, errlen,
		    "%s: additionalProperties must be false", path);
	if (props != NULL && !json_is_object(props))
		return cm_cap_err(
		    err, errlen, "%s: properties must be an object", path);
	if (json_object_size(props) > CM_SCHEMA_PROPS_MAX)
		return cm_cap_err(err, errlen, "%s: more than %d properties",
		    path, CM_SCHEMA_PROPS_MAX);
	json_object_foreach((json_t *)props, key, child)
	{
		if (!cm_cap_name_ok(key, CM_NAME_MAX))
			return cm_cap_err(
			    err, errlen, "%s: bad property name", path);
		cap_path_key(sub, sizeof sub, path, key);
		if (cm_cap_schema_check(child, sub, depth + 1, err, errlen) < 0)
			return -1;
	}
	if (cap_schema_one_of(s, props, path, err, errlen) < 0)
		return -1;
	if (req == NULL)
		return 0;
	if (!json_is_array(req) || json_array_size(req) > CM_SCHEMA_PROPS_MAX)
		return cm_cap_err(
		    err, errlen, "%s: required must be a list", path);
	for (size_t k = 0; k < json_array_size(req); k++) {
		const json_t *r = json_array_get(req, k);
		if (!json_is_string(r) ||
		    json_object_get(props, json_string_value(r)) == NULL)
			return cm_cap_err(err, errlen,
			    "%s: required names a missing property", path);
		for (size_t j = 0; j < k; j++)
			if (json_equal(r, json_array_get(req, j)))
				return cm_cap_err(err, errlen,
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
		return cm_cap_err(err, errlen,
		    "%s: enum must list 1 to %d values", path,
		    CM_SCHEMA_ENUM_MAX);
	for (size_t k = 0; k < json_array_size(e); k++) {
		const json_t *x = json_array_get(e, k);
		bool ok = strcmp(type, "string") == 0    ? json_is_string(x)
		          : strcmp(type, "integer") == 0 ? json_is_integer(x)
		                                         : json_is_number(x);
		if (!ok)
			return cm_cap_err(
			    err, errlen, "%s: enum value of wrong type", path);
		for (size_t j = 0; j < k; j++)
			if (json_equal(x, json_array_get(e, j)))
				return cm_cap_err(err, errlen,
				    "%s: enum repeats a value", path);
		/* A value the schema's own bounds refuse is a manifest bug. */
		snprintf(sub, sizeof sub, "%s.enum[%zu]", path, k);
		if (cm_cap_validate(s, x, sub, 0, err, errlen) < 0)
			return -1;
	}
	return 0;
}

int
cm_cap_schema_check(
    const json_t *s, const char *path, size_t depth, char *err, size_t errlen)
{
	const char *type, *key;
	const json_t *child, *fmt;
	char sub[CAP_PATH_MAX];
	size_t t;

	if (depth > CM_JSON_DEPTH_MAX)
		return cm_cap_err(
		    err, errlen, "%s: schema nested too deep", path);
	if (!json_is_object(s))
		return cm_cap_err(
		    err, errlen, "%s: schema must be an object", path);
	type = json_string_value(json_object_get(s, "type"));
	for (t = 0; t < sizeof cap_types / sizeof *cap_types; t++)
		if (type != NULL && strcmp(type, cap_types[t].type) == 0)
			break;
	if (t == sizeof cap_types / sizeof *cap_types)
		return cm_cap_err(
		    err, errlen, "%s: type missing or unknown", path);
	json_object_foreach((json_t *)s, key, child)
	{
		if (!cap_in(key, cap_keywords))
			return cm_cap_err(err, errlen,
			    "%s: unknown keyword %.64s", path, key);
		if (strcmp(key, "type") != 0 && !cap_in(key, cap_types[t].kw))
			return cm_cap_err(err, errlen,
			    "%s: %s does not apply to %s", path, key, type);
	}
	if (strcmp(type, "object") == 0)
		return cap_schema_object(s, path, depth, err, errlen);
	if (strcmp(type, "array") == 0) {
		snprintf(sub, sizeof sub, "%s[]", path);
		if (json_object_get(s, "items") == NULL)
			return cm_cap_err(
			    err, errlen, "%s: array without items", path);
		if (cap_bounds(s, "minItems", "maxItems", true, true, path, err,
		        errlen) < 0)
			return -1;
		return cm_cap_schema_check(
		    json_object_get(s, "items"), sub, depth + 1, err, errlen);
	}
	if (strcmp(type, "string") == 0) {
		fmt = json_object_get(s, "format");
		if (fmt != NULL &&
		    !(json_is_string(fmt) &&
		        (strcmp(json_string_value(fmt), "http-url") == 0 ||
		            strcmp(json_string_value(fmt), "key") == 0 ||
		            strcmp(json_string_value(fmt), "file-name") == 0)))
			return cm_cap_err(
			    err, errlen, "%s: unknown format", path);
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

/* Whether string schema s has format fmt. */
static bool
fmt_is(const json_t *s, const char *fmt)
{
	const char *f = json_string_value(json_object_get(s, "format"));

	return f != NULL && strcmp(f, fmt) == 0;
}

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
			return cm_cap_err(
			    err, errlen, "%s: unknown property", sub);
		if (cm_cap_validate(ps, child, sub, depth + 1, err, errlen) < 0)
			return -1;
	}
	for (size_t k = 0; k < json_array_size(req); k++) {
		const char *name = json_string_value(json_array_get(req, k));
		if (json_object_get(v, name) == NULL) {
			cap_path_key(sub, sizeof sub, path, name);
			return cm_cap_err(err, errlen, "%s: required", sub);
		}
	}
	if (json_object_get(s, "oneOf") != NULL &&
	    cap_one_of_count(json_object_get(s, "oneOf"), v) != 1)
		return cm_cap_err(err, errlen,
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

int
cm_cap_validate(const json_t *s, const json_t *v, const char *path,
    size_t depth, char *err, size_t errlen)
{
	const char *type = json_string_value(json_object_get(s, "type"));
	const json_t *e = json_object_get(s, "enum");
	char sub[CAP_PATH_MAX];
	bool ok;

	if (depth > CM_JSON_DEPTH_MAX)
		return cm_cap_err(err, errlen, "%s: nested too deep", path);
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
		return cm_cap_err(err, errlen, "%s: must be %s %s", path,
		    type[0] == 'a' || type[0] == 'i' || type[0] == 'o' ? "an"
		                                                       : "a",
		    type);
	if (strcmp(type, "object") == 0)
		return cap_validate_object(s, v, path, depth, err, errlen);
	if (strcmp(type, "array") == 0) {
		if (!cap_count_ok(
		        s, "minItems", "maxItems", json_array_size(v)))
			return cm_cap_err(
			    err, errlen, "%s: wrong number of items", path);
		for (size_t k = 0; k < json_array_size(v); k++) {
			snprintf(sub, sizeof sub, "%s[%zu]", path, k);
			if (cm_cap_validate(json_object_get(s, "items"),
			        json_array_get(v, k), sub, depth + 1, err,
			        errlen) < 0)
				return -1;
		}
		return 0;
	}
	if (strcmp(type, "string") == 0) {
		size_t len = json_string_length(v);
		char host[CM_HOST_MAX + 3];
		const char *fmt =
		    json_string_value(json_object_get(s, "format"));
		struct cm_key key;

		if (!cap_count_ok(s, "minLength", "maxLength", len))
			return cm_cap_err(
			    err, errlen, "%s: length out of range", path);
		if (fmt != NULL && strcmp(fmt, "key") == 0 &&
		    (strlen(json_string_value(v)) != len ||
		        cm_key_find(json_string_value(v), &key) < 0))
			return cm_cap_err(err, errlen,
			    "%s: must be a key name or one printable character",
			    path);
		if (fmt_is(s, "file-name") &&
		    !cm_file_name_valid(json_string_value(v), len))
			return cm_cap_err(err, errlen,
			    "%s: must be a file's name: 1..%d of "
			    "[A-Za-z0-9._-], not starting with '.'",
			    path, CM_FILE_NAME_MAX);
		if (fmt != NULL && strcmp(fmt, "http-url") == 0 &&
		    (len > CM_URL_MAX || strlen(json_string_value(v)) != len ||
		        cm_url_host(json_string_value(v), host, sizeof host) <
		            0))
			return cm_cap_err(
			    err, errlen, "%s: must be an http(s) URL", path);
	} else if ((strcmp(type, "integer") == 0 ||
	               strcmp(type, "number") == 0) &&
	           !cap_in_bounds(s, "minimum", "maximum", v))
		return cm_cap_err(err, errlen, "%s: out of range", path);
	for (size_t k = 0; k < json_array_size(e); k++)
		if (json_equal(v, json_array_get(e, k)))
			return 0;
	if (e != NULL)
		return cm_cap_err(
		    err, errlen, "%s: not one of the allowed values", path);
	return 0;
}
