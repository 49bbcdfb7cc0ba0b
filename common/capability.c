/*
 * capability.c: the one capability validator's bundles: a manifest parsed
 * into a bundle, a capability looked up in it, and the pre-dispatch check
 * (in the bundle, granted, args valid).  The args schema subset is
 * capability_schema.c's, hosts and the network policy
 * capability_policy.c's (capability_int.h is what they share).
 */
#include "capability.h"
#include "capability_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* Writes a reason to err and returns -1, for "return cm_cap_err(...)". */
int
cm_cap_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Names of bundles, capabilities and properties: [A-Za-z0-9_.-]{1,max}. */
bool
cm_cap_name_ok(const char *s, size_t max)
{
	size_t n = strlen(s);

	return n > 0 && n <= max &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                 "0123456789_.-") == n;
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
		return cm_cap_err(
		    err, errlen, "capabilities[%zu]: not an object", k);
	if (cm_json_only_keys(c, keys, err, errlen) < 0)
		return -1;
	if (name == NULL || !cm_cap_name_ok(name, CM_CAPABILITY_MAX) ||
	    !json_is_boolean(json_object_get(c, "network")) || args == NULL)
		return cm_cap_err(err, errlen,
		    "capabilities[%zu]: needs name [A-Za-z0-9_.-]{1,%d}, "
		    "network (boolean) and args",
		    k, CM_CAPABILITY_MAX);
	if (cm_bundle_find(b, name) != NULL)
		return cm_cap_err(
		    err, errlen, "capability %s declared twice", name);
	snprintf(path, sizeof path, "%s.args", name);
	if (cm_cap_schema_check(args, path, 1, err, errlen) < 0)
		return -1;
	if (strcmp(json_string_value(json_object_get(args, "type")),
	        "object") != 0)
		return cm_cap_err(
		    err, errlen, "%s: args must be an object", path);
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
		return cm_cap_err(err, errlen, "manifest must be an object");
	if (cm_json_only_keys(root, keys, err, errlen) < 0)
		return -1;
	if (name == NULL || !cm_cap_name_ok(name, CM_NAME_MAX) || ver == NULL ||
	    !cm_cap_name_ok(ver, CM_NAME_MAX))
		return cm_cap_err(err, errlen,
		    "manifest needs name and version ([A-Za-z0-9_.-]{1,%d})",
		    CM_NAME_MAX);
	if (!json_is_array(caps) || json_array_size(caps) == 0 ||
	    json_array_size(caps) > CM_BUNDLE_CAPS_MAX)
		return cm_cap_err(err, errlen,
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
		cm_cap_err(err, errlen, "out of memory");
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
		cm_cap_err(err, errlen, "no schema");
		return CM_E_INVALID_ARGS;
	}
	return cm_cap_validate(c->args_schema, args, "args", 0, err, errlen) < 0
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
		cm_cap_err(err, errlen, "capability is not in the bundle");
		return CM_E_CAPABILITY_UNKNOWN;
	}
	for (k = 0; k < n_granted; k++)
		if (granted != NULL && granted[k] != NULL &&
		    strcmp(granted[k], capability) == 0)
			break;
	if (k == n_granted) {
		cm_cap_err(err, errlen, "capability is not granted");
		return CM_E_CAPABILITY_NOT_GRANTED;
	}
	return cm_capability_check_args(c, args, err, errlen);
}
