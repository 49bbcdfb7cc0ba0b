/*
 * test_capability.c: manifests, args schemas and network policy
 * (common/capability.h).
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capability.h"
#include "limits.h"

static char errbuf[512];

/* A manifest with one capability "c" whose args schema is schema. */
static int
parse_schema(const char *schema, struct cm_bundle **out)
{
	static char text[CM_MANIFEST_MAX];

	snprintf(text, sizeof text,
	    "{\"name\":\"t\",\"version\":\"1\",\"capabilities\":"
	    "[{\"name\":\"c\",\"network\":false,\"args\":%s}]}",
	    schema);
	errbuf[0] = '\0';
	return cm_bundle_parse(text, strlen(text), out, errbuf, sizeof errbuf);
}

static void
reject_schema(const char *schema)
{
	struct cm_bundle *b = (struct cm_bundle *)1;

	cr_expect_eq(parse_schema(schema, &b), -1, "accepted: %s", schema);
	cr_expect_null(b);
	cr_expect_neq(errbuf[0], '\0', "no reason for: %s", schema);
}

static struct cm_bundle *
accept_schema(const char *schema)
{
	struct cm_bundle *b = NULL;

	cr_assert_eq(parse_schema(schema, &b), 0, "%s: %s", schema, errbuf);
	cr_assert_not_null(b);
	return b;
}

#define OBJ(props) \
	"{\"type\":\"object\",\"additionalProperties\":false," props "}"
#define PROP(name, schema) OBJ("\"properties\":{\"" name "\":" schema "}")

static json_t *
load(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &e);

	cr_assert_not_null(v, "bad test JSON: %s", e.text);
	return v;
}

/* Validates args (JSON text, or NULL for none) against the schema. */
static enum cm_err
check(const char *schema, const char *args)
{
	struct cm_bundle *b = accept_schema(schema);
	json_t *a = args != NULL ? load(args) : NULL;
	enum cm_err rc;

	errbuf[0] = '\0';
	rc = cm_capability_check_args(&b->caps[0], a, errbuf, sizeof errbuf);
	json_decref(a);
	cm_bundle_free(b);
	return rc;
}

static const char *
shown(const char *args)
{
	return args != NULL ? args : "(no args)";
}

#define OK(schema, args)                                                      \
	cr_expect_eq(check(schema, args), CM_OK, "%s on %s: %s", shown(args), \
	    schema, errbuf)
#define BAD(schema, args)                                    \
	cr_expect_eq(check(schema, args), CM_E_INVALID_ARGS, \
	    "accepted %s on %s", shown(args), schema)

/* ---- manifests ---------------------------------------------------------- */

Test(manifest, the_example_in_the_header)
{
	const char *m =
	    "{\"name\": \"fake\", \"version\": \"1\","
	    "\"capabilities\": [{\"name\": \"sleep\", \"network\": false,"
	    "\"args\": {\"type\": \"object\", \"additionalProperties\": false,"
	    "\"required\": [\"ms\"], \"properties\": {\"ms\": {\"type\":"
	    " \"integer\", \"minimum\": 0, \"maximum\": 600000}}}}]}";
	struct cm_bundle *b = NULL;

	cr_assert_eq(cm_bundle_parse(m, strlen(m), &b, errbuf, sizeof errbuf),
	    0, "%s", errbuf);
	cr_expect_str_eq(b->name, "fake");
	cr_expect_str_eq(b->version, "1");
	cr_assert_eq(b->n_caps, 1);
	cr_expect_str_eq(b->caps[0].name, "sleep");
	cr_expect_not(b->caps[0].network);
	cr_expect_eq(cm_bundle_find(b, "sleep"), &b->caps[0]);
	cr_expect_null(cm_bundle_find(b, "Sleep"));
	cr_expect_null(cm_bundle_find(b, NULL));
	cr_expect_null(cm_bundle_find(NULL, "sleep"));
	cm_bundle_free(b);
	cm_bundle_free(NULL);
}

static void
reject_manifest(const char *m)
{
	struct cm_bundle *b = (struct cm_bundle *)1;

	errbuf[0] = '\0';
	cr_expect_eq(cm_bundle_parse(m, strlen(m), &b, errbuf, sizeof errbuf),
	    -1, "accepted: %.200s", m);
	cr_expect_null(b);
	cr_expect_neq(errbuf[0], '\0');
}

#define CAP(n)           \
	"{\"name\":\"" n \
	"\",\"network\":true,\"args\":" OBJ("\"required\":[]") "}"

Test(manifest, rejects_bad_shapes)
{
	reject_manifest("");
	reject_manifest("not json");
	reject_manifest("[]");
	reject_manifest("{\"name\":\"t\",\"version\":\"1\"}");
	reject_manifest(
	    "{\"name\":\"t\",\"version\":\"1\",\"capabilities\":[]}");
	reject_manifest("{\"version\":\"1\",\"capabilities\":[" CAP("a") "]}");
	reject_manifest("{\"name\":\"t\",\"capabilities\":[" CAP("a") "]}");
	reject_manifest(
	    "{\"name\":\"\",\"version\":\"1\",\"capabilities\":[" CAP(
	        "a") "]}");
	reject_manifest(
	    "{\"name\":\"a b\",\"version\":\"1\",\"capabilities\":[" CAP(
	        "a") "]}");
	reject_manifest(
	    "{\"name\":\"t\",\"version\":1,\"capabilities\":[" CAP("a") "]}");
	reject_manifest("{\"name\":\"t\",\"version\":\"1\",\"extra\":1,"
	                "\"capabilities\":[" CAP("a") "]}");
	reject_manifest(
	    "{\"name\":\"t\",\"version\":\"1\",\"capabilities\":[" CAP(
	        "a") "," CAP("a") "]}");
	reject_manifest("{\"name\":\"t\",\"version\":\"1\",\"capabilities\":["
	                "{\"name\":\"a\",\"network\":\"yes\",\"args\":" OBJ(
	                    "\"required\":[]") "}]}");
	reject_manifest(
	    "{\"name\":\"t\",\"version\":\"1\",\"capabilities\":["
	    "{\"name\":\"a\",\"args\":" OBJ("\"required\":[]") "}]}");
	reject_manifest("{\"name\":\"t\",\"version\":\"1\",\"capabilities\":["
	                "{\"name\":\"a\",\"network\":true}]}");
	reject_manifest(
	    "{\"name\":\"t\",\"version\":\"1\",\"capabilities\":["
	    "{\"name\":\"a\",\"network\":true,\"x\":1,\"args\":" OBJ(
	        "\"required\":[]") "}]}");
	reject_manifest("{\"name\":\"t\",\"version\":\"1\",\"capabilities\":["
	                "{\"name\":\"a\",\"network\":true,\"args\":"
	                "{\"type\":\"string\"}}]}");
	reject_manifest("{\"name\":\"t\",\"version\":\"1\",\"name\":\"u\","
	                "\"capabilities\":[" CAP("a") "]}");
}

/* A manifest with n capabilities, each with a name of namelen bytes. */
static char *
many_caps(size_t n, size_t namelen)
{
	size_t cap = 64 + n * (namelen + 128);
	char *m = malloc(cap), name[512];
	size_t o = (size_t)snprintf(
	    m, cap, "{\"name\":\"t\",\"version\":\"1\",\"capabilities\":[");

	for (size_t k = 0; k < n; k++) {
		snprintf(name, sizeof name, "c%zu", k);
		memset(name + strlen(name), 'x', namelen - strlen(name));
		name[namelen] = '\0';
		o += (size_t)snprintf(m + o, cap - o,
		    "%s{\"name\":\"%s\",\"network\":false,\"args\":"
		    "{\"type\":\"object\",\"additionalProperties\":false}}",
		    k ? "," : "", name);
	}
	snprintf(m + o, cap - o, "]}");
	return m;
}

Test(manifest, capability_count_and_name_limits)
{
	struct cm_bundle *b = NULL;
	char *m = many_caps(CM_BUNDLE_CAPS_MAX, 8);

	cr_expect_eq(cm_bundle_parse(m, strlen(m), &b, errbuf, sizeof errbuf),
	    0, "%s", errbuf);
	cr_expect_eq(b->n_caps, CM_BUNDLE_CAPS_MAX);
	cm_bundle_free(b);
	free(m);
	m = many_caps(CM_BUNDLE_CAPS_MAX + 1, 8);
	reject_manifest(m);
	free(m);

	m = many_caps(1, CM_CAPABILITY_MAX);
	cr_expect_eq(cm_bundle_parse(m, strlen(m), &b, errbuf, sizeof errbuf),
	    0, "%s", errbuf);
	cr_expect_eq(strlen(b->caps[0].name), CM_CAPABILITY_MAX);
	cm_bundle_free(b);
	free(m);
	m = many_caps(1, CM_CAPABILITY_MAX + 1);
	reject_manifest(m);
	free(m);
}

Test(manifest, size_limit)
{
	size_t n = CM_MANIFEST_MAX + 1;
	char *m = malloc(n + 1);
	struct cm_bundle *b = NULL;
	const char *head =
	    "{\"name\":\"t\",\"version\":\"1\",\"capabilities\":[" CAP(
	        "a") "]}";

	/* Valid JSON padded with whitespace past the limit. */
	memset(m, ' ', n);
	memcpy(m, head, strlen(head));
	m[n] = '\0';
	cr_expect_eq(cm_bundle_parse(m, n, &b, errbuf, sizeof errbuf), -1);
	cr_expect_eq(cm_bundle_parse(m, n - 1, &b, errbuf, sizeof errbuf), 0,
	    "%s", errbuf);
	cm_bundle_free(b);
	free(m);
}

Test(schema, rejects_unknown_and_misplaced_keywords)
{
	reject_schema("{\"type\":\"object\"}");
	reject_schema("{\"type\":\"object\",\"additionalProperties\":true}");
	reject_schema("{\"type\":\"object\",\"additionalProperties\":{}}");
	reject_schema("{\"additionalProperties\":false}");
	reject_schema("[]");
	reject_schema(OBJ("\"pattern\":\"x\""));
	reject_schema(OBJ("\"description\":\"x\""));
	reject_schema(PROP("a", "{\"type\":\"strin\"}"));
	reject_schema(PROP("a", "{\"type\":[\"string\"]}"));
	reject_schema(PROP("a", "{\"minLength\":1}"));
	reject_schema(PROP("a", "{\"type\":\"string\",\"pattern\":\"x\"}"));
	reject_schema(PROP("a", "{\"type\":\"integer\",\"minLength\":1}"));
	reject_schema(PROP("a", "{\"type\":\"string\",\"minimum\":1}"));
	reject_schema(PROP("a", "{\"type\":\"boolean\",\"enum\":[true]}"));
	reject_schema(
	    PROP("a", "{\"type\":\"integer\",\"format\":\"http-url\"}"));
	reject_schema(PROP("a", "{\"type\":\"string\",\"format\":\"email\"}"));
	reject_schema(PROP("a", "{\"type\":\"string\",\"format\":1}"));
	reject_schema(PROP("a", "{\"type\":\"array\"}"));
	reject_schema(
	    PROP("a", "{\"type\":\"array\",\"items\":{\"type\":\"object\"}}"));
	reject_schema(PROP("a", "{\"type\":\"object\"}"));
	reject_schema(OBJ("\"properties\":[]"));
	reject_schema(OBJ("\"properties\":{\"a b\":{\"type\":\"string\"}}"));
	reject_schema(OBJ("\"properties\":{\"\":{\"type\":\"string\"}}"));
}

Test(schema, rejects_bad_bounds)
{
	reject_schema(
	    PROP("a", "{\"type\":\"integer\",\"minimum\":5,\"maximum\":4}"));
	reject_schema(PROP("a", "{\"type\":\"integer\",\"minimum\":1.5}"));
	reject_schema(PROP("a", "{\"type\":\"integer\",\"maximum\":\"9\"}"));
	reject_schema(PROP("a", "{\"type\":\"integer\",\"maximum\":true}"));
	reject_schema(
	    PROP("a", "{\"type\":\"number\",\"minimum\":1.5,\"maximum\":1.4}"));
	reject_schema(PROP("a", "{\"type\":\"number\",\"minimum\":null}"));
	reject_schema(
	    PROP("a", "{\"type\":\"string\",\"minLength\":3,\"maxLength\":2}"));
	reject_schema(PROP("a", "{\"type\":\"string\",\"minLength\":-1}"));
	reject_schema(PROP("a", "{\"type\":\"string\",\"maxLength\":2.0}"));
	reject_schema(
	    PROP("a", "{\"type\":\"array\",\"items\":{\"type\":\"integer\"},"
	              "\"minItems\":2,\"maxItems\":1}"));
	reject_schema(
	    PROP("a", "{\"type\":\"array\",\"items\":{\"type\":\"integer\"},"
	              "\"maxItems\":-1}"));
	/* Equal bounds are fine. */
	cm_bundle_free(accept_schema(
	    PROP("a", "{\"type\":\"integer\",\"minimum\":4,\"maximum\":4}")));
	cm_bundle_free(accept_schema(
	    PROP("a", "{\"type\":\"number\",\"minimum\":1,\"maximum\":1.5}")));
}

Test(schema, rejects_bad_required_and_enum)
{
	reject_schema(OBJ("\"required\":[\"a\"]"));
	reject_schema(OBJ(
	    "\"required\":\"a\",\"properties\":{\"a\":{\"type\":\"string\"}}"));
	reject_schema(OBJ(
	    "\"required\":[1],\"properties\":{\"a\":{\"type\":\"string\"}}"));
	reject_schema(OBJ("\"required\":[\"a\",\"a\"],\"properties\":{\"a\":{"
	                  "\"type\":\"string\"}}"));
	reject_schema(PROP("a", "{\"type\":\"string\",\"enum\":[]}"));
	reject_schema(PROP("a", "{\"type\":\"string\",\"enum\":\"png\"}"));
	reject_schema(PROP("a", "{\"type\":\"string\",\"enum\":[\"png\",1]}"));
	reject_schema(
	    PROP("a", "{\"type\":\"string\",\"enum\":[\"png\",\"png\"]}"));
	reject_schema(PROP("a", "{\"type\":\"integer\",\"enum\":[1,2.5]}"));
	reject_schema(
	    PROP("a", "{\"type\":\"integer\",\"maximum\":3,\"enum\":[1,4]}"));
	reject_schema(PROP(
	    "a", "{\"type\":\"string\",\"maxLength\":3,\"enum\":[\"jpeg\"]}"));
}

/* A schema with n string properties p0..p(n-1), or an enum of n values. */
static char *
wide_schema(size_t n, bool is_enum)
{
	size_t cap = 64 + n * 48, o;
	char *s = malloc(cap);

	o = (size_t)snprintf(s, cap,
	    is_enum ? "{\"type\":\"object\",\"additionalProperties\":false,"
	              "\"properties\":{\"e\":{\"type\":\"integer\",\"enum\":["
	            : "{\"type\":\"object\",\"additionalProperties\":false,"
	              "\"properties\":{");
	for (size_t k = 0; k < n; k++)
		o += (size_t)snprintf(s + o, cap - o,
		    is_enum ? "%s%zu" : "%s\"p%zu\":{\"type\":\"string\"}",
		    k ? "," : "", k);
	snprintf(s + o, cap - o, is_enum ? "]}}}" : "}}");
	return s;
}

Test(schema, property_and_enum_limits)
{
	char *s = wide_schema(CM_SCHEMA_PROPS_MAX, false);
	cm_bundle_free(accept_schema(s));
	free(s);
	s = wide_schema(CM_SCHEMA_PROPS_MAX + 1, false);
	reject_schema(s);
	free(s);
	s = wide_schema(CM_SCHEMA_ENUM_MAX, true);
	cm_bundle_free(accept_schema(s));
	free(s);
	s = wide_schema(CM_SCHEMA_ENUM_MAX + 1, true);
	reject_schema(s);
	free(s);

	char name[CM_NAME_MAX + 2], schema[1024];
	memset(name, 'n', sizeof name);
	name[CM_NAME_MAX] = '\0';
	snprintf(
	    schema, sizeof schema, PROP("%s", "{\"type\":\"boolean\"}"), name);
	cm_bundle_free(accept_schema(schema));
	name[CM_NAME_MAX] = 'n';
	name[CM_NAME_MAX + 1] = '\0';
	snprintf(
	    schema, sizeof schema, PROP("%s", "{\"type\":\"boolean\"}"), name);
	reject_schema(schema);
}

Test(schema, nesting_is_bounded)
{
	char s[4096] = "";
	size_t o = 0;

	/* 40 nested arrays: deeper than CM_JSON_DEPTH_MAX allows. */
	o += (size_t)snprintf(s, sizeof s,
	    "{\"type\":\"object\",\"additionalProperties\":false,"
	    "\"properties\":{\"a\":");
	for (int k = 0; k < 40; k++)
		o += (size_t)snprintf(
		    s + o, sizeof s - o, "{\"type\":\"array\",\"items\":");
	o += (size_t)snprintf(s + o, sizeof s - o, "{\"type\":\"integer\"}");
	for (int k = 0; k < 40; k++)
		o += (size_t)snprintf(s + o, sizeof s - o, "}");
	snprintf(s + o, sizeof s - o, "}}");
	reject_schema(s);
}

/* ---- args validation ------------------------------------------------- */

#define INT_0_100 \
	PROP("n", "{\"type\":\"integer\",\"minimum\":0,\"maximum\":100}")

Test(args, integer_bounds_and_type)
{
	OK(INT_0_100, "{\"n\":0}");
	OK(INT_0_100, "{\"n\":100}");
	OK(INT_0_100, "{}");
	BAD(INT_0_100, "{\"n\":-1}");
	BAD(INT_0_100, "{\"n\":101}");
	BAD(INT_0_100, "{\"n\":5.0}");
	BAD(INT_0_100, "{\"n\":true}");
	BAD(INT_0_100, "{\"n\":\"5\"}");
	BAD(INT_0_100, "{\"n\":null}");
	cr_expect(strstr(errbuf, "args.n") != NULL, "%s", errbuf);
}

Test(args, number_and_boolean)
{
	const char *num =
	    PROP("x", "{\"type\":\"number\",\"minimum\":-1.5,\"maximum\":2}");
	const char *b = PROP("x", "{\"type\":\"boolean\"}");

	OK(num, "{\"x\":-1.5}");
	OK(num, "{\"x\":2}");
	OK(num, "{\"x\":1}");
	OK(num, "{\"x\":2.0}");
	BAD(num, "{\"x\":-1.6}");
	BAD(num, "{\"x\":2.0001}");
	BAD(num, "{\"x\":3}");
	BAD(num, "{\"x\":false}");
	OK(b, "{\"x\":true}");
	OK(b, "{\"x\":false}");
	BAD(b, "{\"x\":0}");
	BAD(b, "{\"x\":\"true\"}");
}

Test(args, string_lengths_count_bytes)
{
	const char *s =
	    PROP("s", "{\"type\":\"string\",\"minLength\":2,\"maxLength\":4}");

	OK(s, "{\"s\":\"ab\"}");
	OK(s, "{\"s\":\"abcd\"}");
	BAD(s, "{\"s\":\"a\"}");
	BAD(s, "{\"s\":\"abcde\"}");
	/* "éé" is 2 code points but 4 bytes; "ééé" is 6 bytes. */
	OK(s, "{\"s\":\"\xc3\xa9\xc3\xa9\"}");
	BAD(s, "{\"s\":\"\xc3\xa9\xc3\xa9\xc3\xa9\"}");
	BAD(s, "{\"s\":1}");
}

Test(args, objects_required_and_additional)
{
	const char *s =
	    OBJ("\"required\":[\"a\"],\"properties\":{"
	        "\"a\":{\"type\":\"string\"},\"b\":{\"type\":\"integer\"}}");

	OK(s, "{\"a\":\"x\"}");
	OK(s, "{\"a\":\"x\",\"b\":1}");
	BAD(s, "{\"b\":1}");
	cr_expect(strstr(errbuf, "args.a") != NULL, "%s", errbuf);
	BAD(s, "{\"a\":\"x\",\"c\":1}");
	cr_expect(strstr(errbuf, "args.c") != NULL, "%s", errbuf);
	BAD(s, "[]");
	BAD(s, "\"a\"");
	BAD(s, NULL); /* no args mean {}, and a is required */
	OK(OBJ("\"properties\":{}"), NULL);
	OK(OBJ("\"properties\":{}"), "{}");
	BAD(OBJ("\"properties\":{}"), "{\"x\":1}");
}

Test(args, nested_objects_and_arrays)
{
	const char *s = PROP("list",
	    "{\"type\":\"array\",\"minItems\":1,\"maxItems\":2,\"items\":"
	    "{\"type\":\"object\",\"additionalProperties\":false,"
	    "\"required\":[\"k\"],\"properties\":{\"k\":{\"type\":\"integer\","
	    "\"maximum\":9}}}}");

	OK(s, "{\"list\":[{\"k\":1}]}");
	OK(s, "{\"list\":[{\"k\":1},{\"k\":9}]}");
	BAD(s, "{\"list\":[]}");
	BAD(s, "{\"list\":[{\"k\":1},{\"k\":2},{\"k\":3}]}");
	BAD(s, "{\"list\":[{\"k\":1},{\"k\":10}]}");
	cr_expect(strstr(errbuf, "args.list[1].k") != NULL, "%s", errbuf);
	BAD(s, "{\"list\":[{\"k\":1},{}]}");
	BAD(s, "{\"list\":[{\"k\":1,\"z\":0}]}");
	BAD(s, "{\"list\":{\"k\":1}}");
}

Test(args, enums)
{
	const char *s =
	    PROP("f", "{\"type\":\"string\",\"enum\":[\"png\",\"jpeg\"]}");
	const char *i = PROP("q", "{\"type\":\"integer\",\"enum\":[1,3]}");

	OK(s, "{\"f\":\"png\"}");
	OK(s, "{\"f\":\"jpeg\"}");
	BAD(s, "{\"f\":\"PNG\"}");
	BAD(s, "{\"f\":\"gif\"}");
	OK(i, "{\"q\":3}");
	BAD(i, "{\"q\":2}");
	BAD(i, "{\"q\":3.0}");
}

Test(args, http_url_format)
{
	const char *s =
	    PROP("u", "{\"type\":\"string\",\"format\":\"http-url\"}");
	static char long_url[CM_URL_MAX + 64];

	OK(s, "{\"u\":\"http://example.com\"}");
	OK(s, "{\"u\":\"HTTPS://u:p@Example.com:8443/a?b#c\"}");
	OK(s, "{\"u\":\"https://[::1]/\"}");
	BAD(s, "{\"u\":\"ftp://example.com\"}");
	BAD(s, "{\"u\":\"http://\"}");
	BAD(s, "{\"u\":\"http:// example.com\"}");
	BAD(s, "{\"u\":\"http://exa\\tmple.com\"}");
	BAD(s, "{\"u\":\"javascript:alert(1)\"}");
	BAD(s, "{\"u\":\"example.com\"}");
	BAD(s, "{\"u\":\"\"}");

	snprintf(long_url, sizeof long_url, "{\"u\":\"http://h/");
	size_t o = strlen(long_url);
	/* URL of exactly CM_URL_MAX bytes, then one more. */
	memset(long_url + o, 'a', CM_URL_MAX - 9);
	snprintf(long_url + o + CM_URL_MAX - 9, 8, "\"}");
	OK(s, long_url);
	memset(long_url + o, 'a', CM_URL_MAX - 8);
	snprintf(long_url + o + CM_URL_MAX - 8, 8, "\"}");
	BAD(s, long_url);
}

Test(check, order_unknown_then_grant_then_args)
{
	struct cm_bundle *b = accept_schema(INT_0_100);
	const char *granted[] = {"other", "c"};
	json_t *good = load("{\"n\":1}"), *bad = load("{\"n\":1000}");

	cr_expect_eq(cm_capability_check(
	                 b, granted, 2, "nope", bad, errbuf, sizeof errbuf),
	    CM_E_CAPABILITY_UNKNOWN);
	cr_expect_eq(
	    cm_capability_check(b, granted, 1, "c", bad, errbuf, sizeof errbuf),
	    CM_E_CAPABILITY_NOT_GRANTED);
	cr_expect_eq(
	    cm_capability_check(b, NULL, 0, "c", good, errbuf, sizeof errbuf),
	    CM_E_CAPABILITY_NOT_GRANTED);
	cr_expect_eq(
	    cm_capability_check(b, granted, 2, "c", bad, errbuf, sizeof errbuf),
	    CM_E_INVALID_ARGS);
	cr_expect_eq(cm_capability_check(
	                 b, granted, 2, "c", good, errbuf, sizeof errbuf),
	    CM_OK);
	cr_expect_eq(cm_capability_check(
	                 b, granted, 2, "c", NULL, errbuf, sizeof errbuf),
	    CM_OK);
	cr_expect_eq(cm_capability_check(
	                 NULL, granted, 2, "c", good, errbuf, sizeof errbuf),
	    CM_E_CAPABILITY_UNKNOWN);
	cr_expect_eq(
	    cm_capability_check_args(NULL, good, errbuf, sizeof errbuf),
	    CM_E_INVALID_ARGS);
	json_decref(good);
	json_decref(bad);
	cm_bundle_free(b);
}

/* ---- the bundles in etc/bundles ---------------------------------------- */

/* __FILE__ is absolute under CMake; from a direct compile it is relative
 * to the repo root, which is then the working directory. */
static struct cm_bundle *
load_bundle(const char *name)
{
	char path[1024], *text;
	const char *me = __FILE__, *at = strstr(me, "tests/unit/");
	FILE *f;
	long n;
	struct cm_bundle *b = NULL;

	cr_assert_not_null(at);
	snprintf(path, sizeof path, "%.*setc/bundles/%s.json", (int)(at - me),
	    me, name);
	f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = malloc((size_t)n);
	cr_assert_eq(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	cr_assert_eq(
	    cm_bundle_parse(text, (size_t)n, &b, errbuf, sizeof errbuf), 0,
	    "%s: %s", path, errbuf);
	free(text);
	return b;
}

static enum cm_err
bundle_args(const struct cm_bundle *b, const char *cap, const char *args)
{
	json_t *a = load(args);
	const struct cm_capability *c = cm_bundle_find(b, cap);
	enum cm_err rc;

	cr_assert_not_null(c, "%s missing", cap);
	rc = cm_capability_check_args(c, a, errbuf, sizeof errbuf);
	json_decref(a);
	return rc;
}

Test(bundles, browser_json)
{
	struct cm_bundle *b = load_bundle("browser");
	const char *names[] = {"snapshot", "navigate", "extract_text", "click",
	    "type", "press", "wait_for", "scroll", "back", "screenshot", "fill",
	    "select_option", "check", "hover", "drag", "forward", "reload",
	    "handle_dialog", "upload", "tabs", "request_help"};
	size_t n = sizeof(names) / sizeof(names[0]);

	cr_expect_str_eq(b->name, "browser");
	cr_assert_eq(b->n_caps, n);
	for (size_t k = 0; k < n; k++) {
		const struct cm_capability *c = cm_bundle_find(b, names[k]);
		cr_assert_not_null(c, "%s", names[k]);
		cr_expect_eq(c->network,
		    strcmp(names[k], "navigate") == 0 ||
		        strcmp(names[k], "back") == 0 ||
		        strcmp(names[k], "forward") == 0 ||
		        strcmp(names[k], "reload") == 0,
		    "%s", names[k]);
	}
	/* press: a named key, or one printable character, with modifiers. */
	cr_expect_eq(bundle_args(b, "press", "{\"key\":\"F12\"}"), CM_OK);
	cr_expect_eq(bundle_args(b, "press",
	                 "{\"key\":\"a\",\"modifiers\":[\"Control\"]}"),
	    CM_OK);
	cr_expect_eq(bundle_args(b, "press", "{\"key\":\"\\u00e9\"}"), CM_OK);
	cr_expect_eq(bundle_args(b, "press", "{\"key\":\"\\u20ac\"}"), CM_OK);
	cr_expect_eq(
	    bundle_args(b, "press", "{\"key\":\"\\ud83d\\ude00\"}"), CM_OK);
	cr_expect_eq(
	    bundle_args(b, "press", "{\"key\":\"ab\"}"), CM_E_INVALID_ARGS);
	cr_expect_eq(
	    bundle_args(b, "press", "{\"key\":\"F13\"}"), CM_E_INVALID_ARGS);
	cr_expect_eq(bundle_args(b, "press", "{\"key\":\"\\u0007\"}"),
	    CM_E_INVALID_ARGS);
	cr_expect_eq(bundle_args(b, "press", "{\"key\":\"\\u0085\"}"),
	    CM_E_INVALID_ARGS);
	cr_expect_eq(bundle_args(b, "press",
	                 "{\"key\":\"a\",\"modifiers\":[\"Hyper\"]}"),
	    CM_E_INVALID_ARGS);
	cr_expect_eq(bundle_args(b, "click",
	                 "{\"selector\":\"p\",\"button\":\"right\","
	                 "\"click_count\":3,\"modifiers\":[\"Shift\"]}"),
	    CM_OK);
	cr_expect_eq(
	    bundle_args(b, "click", "{\"selector\":\"p\",\"click_count\":4}"),
	    CM_E_INVALID_ARGS);
	cr_expect_eq(bundle_args(b, "snapshot", "{}"), CM_OK);
	cr_expect_eq(bundle_args(b, "snapshot", "{\"max_chars\":500}"), CM_OK);
	cr_expect_eq(bundle_args(b, "snapshot", "{\"max_chars\":40001}"),
	    CM_E_INVALID_ARGS);
	cr_expect_eq(
	    bundle_args(b, "snapshot", "{\"x\":1}"), CM_E_INVALID_ARGS);
	/* A subtree, a page from an offset; a snapshot after an action. */
	cr_expect_eq(bundle_args(b, "snapshot",
	                 "{\"ref\":\"e3\",\"offset\":120,\"max_chars\":900}"),
	    CM_OK);
	cr_expect_eq(
	    bundle_args(b, "snapshot", "{\"offset\":-1}"), CM_E_INVALID_ARGS);
	cr_expect_eq(
	    bundle_args(b, "click", "{\"ref\":\"e3\",\"snapshot\":true}"),
	    CM_OK);
	cr_expect_eq(bundle_args(b, "back", "{\"snapshot\":true}"), CM_OK);
	cr_expect_eq(
	    bundle_args(b, "press", "{\"key\":\"Enter\",\"snapshot\":\"yes\"}"),
	    CM_E_INVALID_ARGS);
	cr_expect_eq(
	    bundle_args(b, "navigate", "{\"url\":\"https://a.b/\"}"), CM_OK);
	cr_expect_eq(bundle_args(b, "navigate", "{}"), CM_E_INVALID_ARGS);
	cr_expect_eq(
	    bundle_args(b, "navigate", "{\"url\":\"file:///etc/passwd\"}"),
	    CM_E_INVALID_ARGS);
	/* An element by ref or by selector: exactly one of them. */
	cr_expect_eq(bundle_args(b, "click", "{}"), CM_E_INVALID_ARGS);
	cr_expect_eq(bundle_args(b, "click", "{\"ref\":\"e3\"}"), CM_OK);
	cr_expect_eq(bundle_args(b, "click", "{\"selector\":\"a\"}"), CM_OK);
	cr_expect_eq(
	    bundle_args(b, "click", "{\"ref\":\"e3\",\"selector\":\"a\"}"),
	    CM_E_INVALID_ARGS);
	cr_expect_eq(
	    bundle_args(b, "type", "{\"selector\":\"#q\",\"text\":\"\"}"),
	    CM_OK);
	cr_expect_eq(bundle_args(b, "type",
	                 "{\"ref\":\"e1\",\"text\":\"x\",\"submit\":true}"),
	    CM_OK);
	cr_expect_eq(
	    bundle_args(b, "type", "{\"selector\":\"#q\"}"), CM_E_INVALID_ARGS);
	cr_expect_eq(
	    bundle_args(b, "type", "{\"text\":\"x\"}"), CM_E_INVALID_ARGS);
	cr_expect_eq(bundle_args(b, "press", "{\"key\":\"Enter\"}"), CM_OK);
	cr_expect_eq(
	    bundle_args(b, "press", "{\"key\":\"F13\"}"), CM_E_INVALID_ARGS);
	cr_expect_eq(
	    bundle_args(b, "wait_for", "{\"text\":\"a\",\"timeout_ms\":60000}"),
	    CM_OK);
	cr_expect_eq(bundle_args(b, "wait_for",
	                 "{\"selector\":\"a\",\"timeout_ms\":60001}"),
	    CM_E_INVALID_ARGS);
	cr_expect_eq(bundle_args(b, "wait_for", "{\"timeout_ms\":1}"),
	    CM_E_INVALID_ARGS);
	cr_expect_eq(
	    bundle_args(b, "scroll", "{\"dx\":-100000,\"dy\":100000}"), CM_OK);
	cr_expect_eq(
	    bundle_args(b, "scroll", "{\"dx\":-100001}"), CM_E_INVALID_ARGS);
	cr_expect_eq(bundle_args(b, "extract_text", "{}"), CM_OK);
	cr_expect_eq(bundle_args(b, "back", "{}"), CM_OK);
	cr_expect_eq(bundle_args(b, "screenshot", "{}"), CM_OK);
	cr_expect_eq(bundle_args(b, "screenshot",
	                 "{\"format\":\"jpeg\",\"quality\":100,"
	                 "\"full_page\":true}"),
	    CM_OK);
	cr_expect_eq(bundle_args(b, "screenshot", "{\"format\":\"gif\"}"),
	    CM_E_INVALID_ARGS);
	cr_expect_eq(bundle_args(b, "screenshot", "{\"quality\":101}"),
	    CM_E_INVALID_ARGS);
	cm_bundle_free(b);
}

/* upload: an element and 1..CM_UPLOAD_FILES_MAX names, each a file's name
 * (format file-name), which the schema checks. */
Test(bundles, browser_upload_takes_file_names)
{
	struct cm_bundle *b = load_bundle("browser");

	cr_assert_not_null(cm_bundle_find(b, "upload"));
	cr_expect_eq(bundle_args(b, "upload",
	                 "{\"selector\":\"#f\",\"files\":[\"a.pdf\"]}"),
	    CM_OK);
	cr_expect_eq(bundle_args(b, "upload",
	                 "{\"ref\":\"e2\",\"files\":[\"a.pdf\",\"b_2-x.txt\"],"
	                 "\"snapshot\":true}"),
	    CM_OK);
	cr_expect_eq(bundle_args(b, "upload", "{\"files\":[\"a.pdf\"]}"),
	    CM_E_INVALID_ARGS, "no element");
	cr_expect_eq(bundle_args(b, "upload", "{\"selector\":\"#f\"}"),
	    CM_E_INVALID_ARGS, "no files");
	cr_expect_eq(
	    bundle_args(b, "upload", "{\"selector\":\"#f\",\"files\":[]}"),
	    CM_E_INVALID_ARGS, "none named");
	cr_expect_eq(bundle_args(b, "upload",
	                 "{\"selector\":\"#f\",\"files\":[\"1\",\"2\","
	                 "\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\"]}"),
	    CM_E_INVALID_ARGS, "past CM_UPLOAD_FILES_MAX");
	cr_expect_eq(bundle_args(b, "upload",
	                 "{\"selector\":\"#f\",\"files\":[\".hidden\"]}"),
	    CM_E_INVALID_ARGS, "a leading dot");
	cr_expect_eq(bundle_args(b, "upload",
	                 "{\"selector\":\"#f\",\"files\":[\"../etc/passwd\"]}"),
	    CM_E_INVALID_ARGS, "a path");
	cr_expect_eq(bundle_args(b, "upload",
	                 "{\"selector\":\"#f\",\"files\":[\"a b.txt\"]}"),
	    CM_E_INVALID_ARGS, "a space");
	cm_bundle_free(b);
}

Test(bundles, one_of_takes_only_required_branches)
{
	static const char *const bad[] = {
	    /* a branch that is not {"required": [...]} */
	    "{\"type\":\"object\",\"additionalProperties\":false,"
	    "\"properties\":{\"a\":{\"type\":\"string\"}},"
	    "\"oneOf\":[{\"required\":[\"a\"]},{\"type\":\"object\"}]}",
	    /* a branch naming no declared property */
	    "{\"type\":\"object\",\"additionalProperties\":false,"
	    "\"properties\":{\"a\":{\"type\":\"string\"}},"
	    "\"oneOf\":[{\"required\":[\"a\"]},{\"required\":[\"b\"]}]}",
	    /* one branch only */
	    "{\"type\":\"object\",\"additionalProperties\":false,"
	    "\"properties\":{\"a\":{\"type\":\"string\"}},"
	    "\"oneOf\":[{\"required\":[\"a\"]}]}",
	    /* on a string */
	    ("{\"type\":\"string\",\"oneOf\":[{\"required\":[\"a\"]},"
	     "{\"required\":[\"a\"]}]}"),
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		reject_schema(bad[i]);
	cm_bundle_free(
	    accept_schema("{\"type\":\"object\",\"additionalProperties\":false,"
	                  "\"properties\":{\"a\":{\"type\":\"string\"},"
	                  "\"b\":{\"type\":\"string\"}},"
	                  "\"oneOf\":[{\"required\":[\"a\"]},"
	                  "{\"required\":[\"b\"]}]}"));
}

Test(bundles, fake_json)
{
	struct cm_bundle *b = load_bundle("fake");
	const char *names[] = {"sleep", "fail", "crash", "leak", "big", "noop",
	    "snapshot", "navigate", "screenshot", "request_help"};

	cr_expect_str_eq(b->name, "fake");
	cr_assert_eq(b->n_caps, 10);
	for (size_t k = 0; k < 10; k++)
		cr_expect_not_null(cm_bundle_find(b, names[k]), "%s", names[k]);
	cr_expect(cm_bundle_find(b, "navigate")->network);
	cr_expect_not(cm_bundle_find(b, "sleep")->network);
	cr_expect_eq(bundle_args(b, "sleep", "{\"ms\":600000}"), CM_OK);
	cr_expect_eq(
	    bundle_args(b, "sleep", "{\"ms\":600001}"), CM_E_INVALID_ARGS);
	cr_expect_eq(bundle_args(b, "sleep", "{\"ms\":-1}"), CM_E_INVALID_ARGS);
	cr_expect_eq(bundle_args(b, "sleep", "{}"), CM_E_INVALID_ARGS);
	cr_expect_eq(
	    bundle_args(b, "fail", "{\"code\":\"boom\",\"message\":\"m\"}"),
	    CM_OK);
	cr_expect_eq(
	    bundle_args(b, "fail", "{\"message\":\"m\"}"), CM_E_INVALID_ARGS);
	cr_expect_eq(bundle_args(b, "crash", "{\"x\":1}"), CM_E_INVALID_ARGS);
	cr_expect_eq(
	    bundle_args(b, "navigate", "{\"url\":\"http://h/\"}"), CM_OK);
	cr_expect_eq(
	    bundle_args(b, "request_help", "{\"reason\":\"2FA\"}"), CM_OK);
	cr_expect_eq(bundle_args(b, "request_help", "{}"), CM_E_INVALID_ARGS);
	cr_expect_not(cm_bundle_find(b, "request_help")->network);
	cm_bundle_free(b);
}

/* ---- network policy ------------------------------------------------------ */

static struct cm_policy pol;

static void
policy(const char *text)
{
	cr_assert_eq(
	    cm_policy_parse(text, strlen(text), &pol, errbuf, sizeof errbuf), 0,
	    "%s: %s", text, errbuf);
}

Test(policy, parse_accepts_and_rejects)
{
	policy("");
	cr_expect_eq(pol.n_hosts, 0);
	cr_expect_not(pol.deny_private_networks);
	policy(" \n");
	policy("{}");
	cr_expect(cm_policy_allows_host(&pol, "127.0.0.1"));
	policy("{\"allow_hosts\":[\"Example.COM.\",\"*.Example.org\","
	       "\"10.0.0.5\",\"[::1]\"],\"deny_private_networks\":true}");
	cr_expect_eq(pol.n_hosts, 4);
	cr_expect_str_eq(pol.hosts[0], "example.com");
	cr_expect_str_eq(pol.hosts[1], "*.example.org");
	cr_expect(pol.deny_private_networks);

	const char *bad[] = {"[]", "{\"allow\":[]}",
	    "{\"allow_hosts\":\"example.com\"}", "{\"allow_hosts\":[1]}",
	    "{\"deny_private_networks\":1}", "{\"deny_private_networks\":null}",
	    "{\"allow_hosts\":[\"http://example.com\"]}",
	    "{\"allow_hosts\":[\"example.com:80\"]}",
	    "{\"allow_hosts\":[\"a..b\"]}", "{\"allow_hosts\":[\"*\"]}",
	    "{\"allow_hosts\":[\"*.\"]}", "{\"allow_hosts\":[\"a.*.b\"]}",
	    "{\"allow_hosts\":[\"*.10.0.0.1\"]}",
	    "{\"allow_hosts\":[\"exa mple.com\"]}", "{\"allow_hosts\":[\"\"]}",
	    "{\"allow_hosts\":[\"1.2.3.256\"]}", "not json", NULL};
	for (size_t k = 0; bad[k] != NULL; k++) {
		cr_expect_eq(cm_policy_parse(bad[k], strlen(bad[k]), &pol,
		                 errbuf, sizeof errbuf),
		    -1, "accepted %s", bad[k]);
		/* A failed parse allows nothing, should anyone use it. */
		cr_expect_not(cm_policy_allows_host(&pol, "example.com"));
		cr_expect_not(cm_policy_allows_host(&pol, "8.8.8.8"));
	}
}

Test(policy, host_count_limit)
{
	char text[CM_POLICY_MAX];
	size_t o = (size_t)snprintf(text, sizeof text, "{\"allow_hosts\":[");

	for (int k = 0; k < CM_POLICY_HOSTS_MAX; k++)
		o += (size_t)snprintf(text + o, sizeof text - o,
		    "%s\"h%d.com\"", k ? "," : "", k);
	snprintf(text + o, sizeof text - o, "]}");
	policy(text);
	cr_expect_eq(pol.n_hosts, CM_POLICY_HOSTS_MAX);
	cr_expect(cm_policy_allows_host(&pol, "h63.com"));
	snprintf(text + o, sizeof text - o, ",\"extra.com\"]}");
	cr_expect_eq(
	    cm_policy_parse(text, strlen(text), &pol, errbuf, sizeof errbuf),
	    -1);
}

Test(policy, exact_and_wildcard_matching)
{
	policy("{\"allow_hosts\":[\"example.com\",\"*.example.org\"]}");
	cr_expect(cm_policy_allows_host(&pol, "example.com"));
	cr_expect(cm_policy_allows_host(&pol, "EXAMPLE.com."));
	cr_expect_not(cm_policy_allows_host(&pol, "www.example.com"));
	cr_expect_not(cm_policy_allows_host(&pol, "badexample.com"));
	cr_expect_not(cm_policy_allows_host(&pol, "example.com.evil.net"));
	cr_expect(cm_policy_allows_host(&pol, "a.example.org"));
	cr_expect(cm_policy_allows_host(&pol, "a.b.Example.ORG."));
	cr_expect_not(cm_policy_allows_host(&pol, "example.org"));
	cr_expect_not(cm_policy_allows_host(&pol, "badexample.org"));
	cr_expect_not(cm_policy_allows_host(&pol, ".example.org"));
	cr_expect_not(cm_policy_allows_host(&pol, "other.net"));
	cr_expect_not(cm_policy_allows_host(&pol, ""));
	cr_expect_not(cm_policy_allows_host(&pol, NULL));
	cr_expect_not(cm_policy_allows_host(NULL, "example.com"));
}

Test(policy, ip_entries_match_any_spelling)
{
	policy("{\"allow_hosts\":[\"10.0.0.5\",\"2001:db8::1\"]}");
	cr_expect(cm_policy_allows_host(&pol, "10.0.0.5"));
	cr_expect(cm_policy_allows_host(&pol, "167772165"));
	cr_expect(cm_policy_allows_host(&pol, "0xa.0.0.5"));
	cr_expect(cm_policy_allows_host(&pol, "[2001:DB8:0::1]"));
	cr_expect_not(cm_policy_allows_host(&pol, "10.0.0.6"));
}

Test(policy, private_networks_refused)
{
	const char *priv[] = {"127.0.0.1", "127.255.1.2", "10.1.2.3",
	    "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
	    "100.64.0.1", "100.127.255.255", "0.0.0.0", "0.1.2.3",
	    "255.255.255.255", "224.0.0.1", "::1", "[::1]", "::", "fc00::1",
	    "fd12:3456::1", "fe80::1", "FEBF::1", "::ffff:127.0.0.1",
	    "[::ffff:7f00:1]", "::ffff:10.0.0.1", "::127.0.0.1",
	    "64:ff9b::a9fe:a9fe", "2002:c0a8:0101::1", "localhost", "LOCALHOST",
	    "localhost.", "a.localhost", "x.y.localhost.",
	    /* inet_aton spellings of 127.0.0.1 and 10.0.0.1 */
	    "2130706433", "0x7f.1", "017700000001", "0177.0.0.1", "127.1",
	    "0x7f000001", "0x7F.0.0.1", "127.0.1", "012.1", "0xa000001", NULL};
	const char *pub[] = {"8.8.8.8", "172.32.0.1", "172.15.255.255",
	    "100.128.0.1", "192.169.0.1", "169.255.0.1", "1.1.1.1",
	    "2001:4860::8888", "::ffff:8.8.8.8", "example.com",
	    "localhost.example.com", "mylocalhost", "134744072", NULL};

	policy("{\"deny_private_networks\":true}");
	for (size_t k = 0; priv[k] != NULL; k++)
		cr_expect_not(
		    cm_policy_allows_host(&pol, priv[k]), "%s", priv[k]);
	for (size_t k = 0; pub[k] != NULL; k++)
		cr_expect(cm_policy_allows_host(&pol, pub[k]), "%s", pub[k]);
	/* deny wins over an allow entry. */
	policy("{\"allow_hosts\":[\"localhost\",\"127.0.0.1\"],"
	       "\"deny_private_networks\":true}");
	cr_expect_not(cm_policy_allows_host(&pol, "localhost"));
	cr_expect_not(cm_policy_allows_host(&pol, "127.0.0.1"));
	/* Without deny, the same hosts are fine. */
	policy("{}");
	for (size_t k = 0; priv[k] != NULL; k++)
		cr_expect(cm_policy_allows_host(&pol, priv[k]), "%s", priv[k]);
}

Test(policy, malformed_hosts_never_allowed)
{
	const char *bad[] = {"1.2.3.256", "09.1.1.1", "0x1g.1", "1.2.3.4.5",
	    "4294967296", "1.16777216", "a..b", ".a", "exa mple.com",
	    "%31%32%37.0.0.1", "fe80::1%eth0", "[::1", "::1]", "[]",
	    "h\xc3\xa9.com", "a/b", "a:b", "1..2", NULL};

	policy("{}");
	for (size_t k = 0; bad[k] != NULL; k++)
		cr_expect_not(
		    cm_policy_allows_host(&pol, bad[k]), "%s", bad[k]);
	cr_expect(cm_policy_allows_host(&pol, "255.255.255.255"));
	cr_expect(cm_policy_allows_host(&pol, "4294967295"));
}

Test(url, host_extraction)
{
	char h[CM_HOST_MAX + 3];
	const struct {
		const char *url, *host;
	} ok[] = {
	    {"HTTP://User:Pw@Example.COM:8080/path?q#f", "example.com"},
	    {"https://a.b", "a.b"},
	    {"https://[::1]:443/x", "::1"},
	    {"http://[FE80::1]", "fe80::1"},
	    {"http://h:/", "h"},
	    {"http://a@b@c.com/", "c.com"},
	    {"http://evil.com#@good.com", "evil.com"},
	    {"http://good.com?@evil.com", "good.com"},
	    {"http://0x7f.1/", "0x7f.1"},
	    {"http://example.com./", "example.com."},
	};
	const char *bad[] = {"ftp://x", "http://", "http:///x", "https:/x",
	    "http:x", "http://host:99999/", "http://host:8a/", "http://ho st/",
	    "http://host\\@evil/", "http://%31%32%37.0.0.1/", "http://[::1/",
	    "http://a:b:c/", "http://[::1]x/", "javascript:alert(1)",
	    "http://exa\x01mple/", "http://h\x7f/", "http://u@/", "http://:80/",
	    "http://1.2.3.999/", NULL};

	for (size_t k = 0; k < sizeof ok / sizeof *ok; k++) {
		cr_expect_eq(
		    cm_url_host(ok[k].url, h, sizeof h), 0, "%s", ok[k].url);
		cr_expect_str_eq(h, ok[k].host, "%s", ok[k].url);
	}
	for (size_t k = 0; bad[k] != NULL; k++)
		cr_expect_eq(
		    cm_url_host(bad[k], h, sizeof h), -1, "%s", bad[k]);
	cr_expect_eq(cm_url_host("http://abcd/", h, 4), -1);
	cr_expect_eq(cm_url_host("http://abcd/", h, 5), 0);
	cr_expect_eq(cm_url_host(NULL, h, sizeof h), -1);
}

Test(url, length_limit)
{
	static char u[CM_URL_MAX + 2];
	char h[CM_HOST_MAX + 3];

	memcpy(u, "http://h/", 9);
	memset(u + 9, 'a', CM_URL_MAX - 9);
	u[CM_URL_MAX] = '\0';
	cr_expect_eq(cm_url_host(u, h, sizeof h), 0);
	u[CM_URL_MAX] = 'a';
	u[CM_URL_MAX + 1] = '\0';
	cr_expect_eq(cm_url_host(u, h, sizeof h), -1);
}

Test(url, policy_check)
{
	policy("{\"allow_hosts\":[\"*.example.com\"],"
	       "\"deny_private_networks\":true}");
	cr_expect_eq(
	    cm_policy_check_url(&pol, "https://www.example.com/"), CM_OK);
	cr_expect_eq(cm_policy_check_url(&pol, "https://example.com/"),
	    CM_E_HOST_NOT_ALLOWED);
	cr_expect_eq(
	    cm_policy_check_url(&pol, "https://www.example.com@127.0.0.1/"),
	    CM_E_HOST_NOT_ALLOWED);
	cr_expect_eq(
	    cm_policy_check_url(&pol, "file:///etc/passwd"), CM_E_INVALID_ARGS);
	policy("{\"deny_private_networks\":true}");
	cr_expect_eq(cm_policy_check_url(&pol, "http://2130706433/"),
	    CM_E_HOST_NOT_ALLOWED);
	cr_expect_eq(cm_policy_check_url(&pol, "http://[::ffff:127.0.0.1]:80/"),
	    CM_E_HOST_NOT_ALLOWED);
	cr_expect_eq(cm_policy_check_url(&pol, "http://a.localhost:3000/"),
	    CM_E_HOST_NOT_ALLOWED);
	cr_expect_eq(cm_policy_check_url(&pol, "http://8.8.8.8/"), CM_OK);
}
