/*
 * api/openapi.json as embedded in the binary, against the route table of
 * api/router.c: every route is documented with its method, a route that
 * needs no token says so (security: []) and one that needs a token does
 * not, and the document describes no operation the table lacks.  The
 * document's validity as OpenAPI 3.1 is tests/openapi/check.sh's job.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "status.h"

/* Documented ahead of their routes: none may be added here lightly. */
static const char *const documented_only[] = {
    NULL,
};

static json_t *
doc(void)
{
	json_error_t e;
	json_t *d;

	cr_assert_eq(strlen(api_openapi_json), api_openapi_json_len,
	    "the embedded document holds a NUL");
	d = json_loadb(
	    api_openapi_json, api_openapi_json_len, JSON_REJECT_DUPLICATES, &e);
	cr_assert_not_null(d, "openapi.json: line %d: %s", e.line, e.text);
	return d;
}

/* A path template with every {name} as '*', the router's pattern form. */
static void
as_pattern(const char *path, char *out, size_t len)
{
	size_t n = 0;

	for (; *path != '\0' && n + 1 < len; path++) {
		if (*path == '{') {
			const char *end = strchr(path, '}');

			cr_assert_not_null(end, "unclosed { in %s", path);
			out[n++] = '*';
			path = end;
		} else {
			out[n++] = *path;
		}
	}
	out[n] = '\0';
}

/* The path item whose template matches pattern; NULL when none does. */
static json_t *
path_item(json_t *d, const char *pattern)
{
	json_t *paths = json_object_get(d, "paths"), *item;
	char pat[512];
	const char *key;

	json_object_foreach(paths, key, item)
	{
		as_pattern(key, pat, sizeof(pat));
		if (strcmp(pat, pattern) == 0)
			return item;
	}
	return NULL;
}

static void
lower(const char *in, char *out, size_t len)
{
	size_t i;

	for (i = 0; in[i] != '\0' && i + 1 < len; i++)
		out[i] = (char)tolower((unsigned char)in[i]);
	out[i] = '\0';
}

Test(openapi, is_3_1_with_bearer_auth)
{
	json_t *d = doc();
	json_t *bearer =
	    json_object_get(json_object_get(json_object_get(d, "components"),
	                        "securitySchemes"),
	        "bearerAuth");

	cr_assert_str_eq(
	    json_string_value(json_object_get(d, "openapi")), "3.1.0");
	cr_assert_str_eq(
	    json_string_value(json_object_get(bearer, "type")), "http");
	cr_assert_str_eq(
	    json_string_value(json_object_get(bearer, "scheme")), "bearer");
	/* The default: every operation needs the token unless it says not. */
	cr_assert_not_null(json_object_get(
	    json_array_get(json_object_get(d, "security"), 0), "bearerAuth"));
	json_decref(d);
}

Test(openapi, documents_every_route_of_the_table)
{
	const char *method, *pattern;
	json_t *d = doc();
	size_t i;
	bool auth;

	for (i = 0; api_route_at(i, &method, &pattern, &auth); i++) {
		json_t *item = path_item(d, pattern), *op, *sec;
		char m[16];

		cr_assert_not_null(
		    item, "%s %s is not documented", method, pattern);
		lower(method, m, sizeof(m));
		op = json_object_get(item, m);
		cr_assert_not_null(
		    op, "%s %s: no %s operation", method, pattern, m);
		sec = json_object_get(op, "security");
		if (auth)
			cr_assert(sec == NULL || json_array_size(sec) > 0,
			    "%s %s needs a token, the document says not",
			    method, pattern);
		else
			cr_assert(
			    json_is_array(sec) && json_array_size(sec) == 0,
			    "%s %s needs no token: security must be []", method,
			    pattern);
	}
	cr_assert_geq(i, 30, "the route table has %zu routes", i);
	json_decref(d);
}

Test(openapi, documents_no_route_the_table_lacks)
{
	static const char *const verbs[] = {
	    "get", "put", "post", "delete", "patch", "head", "options", NULL};
	json_t *d = doc(), *item;
	const char *key;

	json_object_foreach(json_object_get(d, "paths"), key, item)
	{
		char pat[512], where[600];

		as_pattern(key, pat, sizeof(pat));
		for (size_t v = 0; verbs[v] != NULL; v++) {
			const char *method, *pattern;
			bool auth, found = false, excused = false;
			char up[16];
			size_t k;

			if (json_object_get(item, verbs[v]) == NULL)
				continue;
			for (k = 0; verbs[v][k] != '\0' && k + 1 < sizeof(up);
			     k++)
				up[k] =
				    (char)toupper((unsigned char)verbs[v][k]);
			up[k] = '\0';
			for (size_t i = 0;
			     api_route_at(i, &method, &pattern, &auth); i++)
				if (strcmp(method, up) == 0 &&
				    strcmp(pattern, pat) == 0)
					found = true;
			snprintf(where, sizeof(where), "%s %s", up, key);
			for (k = 0; documented_only[k] != NULL; k++)
				if (strcmp(documented_only[k], where) == 0)
					excused = true;
			cr_assert(found || excused,
			    "%s is documented but not routed", where);
		}
	}
	json_decref(d);
}

/* The enum of components.schemas.<schema>[.properties.<prop>]. */
static json_t *
schema_enum(json_t *d, const char *schema, const char *prop)
{
	json_t *s = json_object_get(
	    json_object_get(json_object_get(d, "components"), "schemas"),
	    schema);

	if (prop != NULL)
		s = json_object_get(json_object_get(s, "properties"), prop);
	return json_object_get(s, "enum");
}

/* values holds n strings, each once, each one that ok takes. */
static void
enum_is(json_t *values, size_t n, bool (*ok)(const char *), const char *what)
{
	size_t i;
	json_t *v;

	cr_assert_eq(json_array_size(values), n, "%s", what);
	json_array_foreach(values, i, v)
	{
		cr_assert(ok(json_string_value(v)), "%s %s", what,
		    json_string_value(v));
		for (size_t j = 0; j < i; j++)
			cr_assert_str_neq(
			    json_string_value(json_array_get(values, j)),
			    json_string_value(v));
	}
}

/* A code of errors.h but "ok". */
static bool
error_code(const char *s)
{
	enum cm_err e = cm_err_from_code(s);

	return e != CM_ERR__COUNT && e != CM_OK;
}

/* A kind the log holds: all of status.h's but the close_requested
 * notice, never stored. */
static bool
stored_kind(const char *s)
{
	enum cm_event_kind k = cm_event_kind_parse(s);

	return k != CM_EVENT_KIND__COUNT && k != CM_EV_CLOSE_REQUESTED;
}

Test(openapi, error_code_enum_is_errors_h)
{
	json_t *d = doc();

	enum_is(schema_enum(d, "ErrorCode", NULL), CM_ERR__COUNT - 1,
	    error_code, "code");
	json_decref(d);
}

Test(openapi, event_kind_enum_is_status_h)
{
	json_t *d = doc();

	enum_is(schema_enum(d, "Event", "kind"), CM_EVENT_KIND__COUNT - 1,
	    stored_kind, "kind");
	json_decref(d);
}
