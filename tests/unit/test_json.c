#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "limits.h"

static json_t *
parse_ok(const char *text)
{
	json_t *v = NULL;
	char err[256] = "";

	cr_assert_eq(cm_json_parse(text, strlen(text), CM_BODY_MAX,
	                 CM_JSON_DEPTH_MAX, &v, err, sizeof err),
	    0, "rejected %s: %s", text, err);
	cr_assert_not_null(v);
	return v;
}

/* Returns the error text so callers can check the reason. */
static void
parse_bad(const char *text, size_t len, size_t max_len, size_t max_depth,
    char *err, size_t errlen)
{
	json_t *v = (json_t *)0x1;

	err[0] = '\0';
	cr_assert_eq(
	    cm_json_parse(text, len, max_len, max_depth, &v, err, errlen), -1,
	    "accepted %.*s", (int)len, text);
	cr_assert_null(v, "*out must be NULL on failure");
	cr_assert_neq(err[0], '\0', "no reason given");
}

/* n opening brackets, a scalar, n closing ones: depth n. */
static char *
nested(size_t n, char open, char close)
{
	char *s = malloc(2 * n * 6 + 2);
	size_t o = 0;

	cr_assert_not_null(s);
	for (size_t i = 0; i < n; i++) {
		if (open == '{') {
			memcpy(s + o, "{\"k\":", 5);
			o += 5;
		} else {
			s[o++] = open;
		}
	}
	s[o++] = '1';
	for (size_t i = 0; i < n; i++)
		s[o++] = close;
	s[o] = '\0';
	return s;
}

Test(json, parses_any_top_level_value)
{
	static const char *const ok[] = {"{}", "[]", "1", "-2.5", "\"s\"",
	    "true", "false", "null", "  {\"a\": [1, 2, {\"b\": null}]}  \n"};

	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		json_decref(parse_ok(ok[i]));
}

Test(json, depth_exactly_at_limit_is_accepted)
{
	char *a = nested(CM_JSON_DEPTH_MAX, '[', ']');
	char *o = nested(CM_JSON_DEPTH_MAX, '{', '}');
	json_t *v = parse_ok(a);

	cr_assert_eq(cm_json_depth(v), CM_JSON_DEPTH_MAX);
	json_decref(v);
	v = parse_ok(o);
	cr_assert_eq(cm_json_depth(v), CM_JSON_DEPTH_MAX);
	json_decref(v);
	free(a);
	free(o);
}

Test(json, depth_one_over_limit_is_rejected)
{
	char *a = nested(CM_JSON_DEPTH_MAX + 1, '[', ']');
	char *o = nested(CM_JSON_DEPTH_MAX + 1, '{', '}');
	char err[256];

	parse_bad(
	    a, strlen(a), CM_BODY_MAX, CM_JSON_DEPTH_MAX, err, sizeof err);
	cr_assert(strstr(err, "deep") != NULL, "%s", err);
	parse_bad(
	    o, strlen(o), CM_BODY_MAX, CM_JSON_DEPTH_MAX, err, sizeof err);
	cr_assert(strstr(err, "deep") != NULL, "%s", err);
	free(a);
	free(o);
}

Test(json, depth_scan_happens_before_parsing)
{
	/*
	 * Unclosed brackets are invalid JSON anyway; the reason proves the
	 * scan rejected them before jansson ever recursed into them.
	 */
	enum { N = 100000 };
	char *s = malloc(N);
	char err[256];

	cr_assert_not_null(s);
	memset(s, '[', N);
	parse_bad(s, N, N, CM_JSON_DEPTH_MAX, err, sizeof err);
	cr_assert(strstr(err, "deep") != NULL, "%s", err);
	free(s);
}

Test(json, brackets_inside_strings_do_not_count)
{
	/* 40 brackets and escaped quotes inside one string: depth 1. */
	const char *t =
	    "[\"[[[[[[[[[[{{{{{{{{{{\\\"[[[[[[[[[[{{{{{{{{{{\\\\\"]";
	json_t *v = parse_ok(t);

	cr_assert_eq(cm_json_depth(v), 1);
	json_decref(v);
}

Test(json, escaped_quote_does_not_end_string_for_scan)
{
	/* If \" ended the string, the scan would count 33 brackets. */
	char text[256];
	int n = snprintf(text, sizeof text, "[\"\\\"%s\"]",
	    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[");
	json_t *v;

	cr_assert_lt((size_t)n, sizeof text);
	v = parse_ok(text);
	cr_assert_eq(cm_json_depth(v), 1);
	json_decref(v);
}

Test(json, escaped_backslash_ends_string_for_scan)
{
	/*
	 * In "\\" the quote is real: a scan that only looked at the previous
	 * byte would think the string goes on and miss 33 brackets.
	 */
	char *deep = nested(CM_JSON_DEPTH_MAX, '[', ']');
	size_t len = strlen(deep) + 16;
	char *text = malloc(len);
	char err[256];

	cr_assert_not_null(text);
	snprintf(text, len, "[\"\\\\\",%s]", deep);
	parse_bad(text, strlen(text), CM_BODY_MAX, CM_JSON_DEPTH_MAX, err,
	    sizeof err);
	cr_assert(strstr(err, "deep") != NULL, "%s", err);
	free(text);
	free(deep);
}

Test(json, duplicate_keys_rejected)
{
	const char *t = "{\"a\":1,\"b\":2,\"a\":3}";
	const char *nested_dup = "{\"x\":{\"k\":1,\"k\":1}}";
	char err[256];

	parse_bad(
	    t, strlen(t), CM_BODY_MAX, CM_JSON_DEPTH_MAX, err, sizeof err);
	cr_assert(strstr(err, "duplicate") != NULL, "%s", err);
	parse_bad(nested_dup, strlen(nested_dup), CM_BODY_MAX,
	    CM_JSON_DEPTH_MAX, err, sizeof err);
}

Test(json, trailing_garbage_rejected)
{
	static const char *const bad[] = {
	    "{} x", "{}{}", "[1] ]", "1 2", "\"a\" \"b\"", "{}\n,", "null;"};
	char err[256];

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		parse_bad(bad[i], strlen(bad[i]), CM_BODY_MAX,
		    CM_JSON_DEPTH_MAX, err, sizeof err);
}

Test(json, trailing_whitespace_accepted)
{
	json_decref(parse_ok("{\"a\":1} \t\r\n "));
}

Test(json, nul_escape_rejected)
{
	const char *t = "{\"a\":\"x\\u0000y\"}";
	const char *k = "{\"a\\u0000b\":1}";
	char err[256];

	parse_bad(
	    t, strlen(t), CM_BODY_MAX, CM_JSON_DEPTH_MAX, err, sizeof err);
	parse_bad(
	    k, strlen(k), CM_BODY_MAX, CM_JSON_DEPTH_MAX, err, sizeof err);
}

Test(json, raw_nul_byte_rejected)
{
	/* len covers the NUL: a C-string parser would stop before it. */
	const char t[] = "{\"a\":1}\0garbage";
	const char s[] = "[\"a\0b\"]";
	char err[256];

	parse_bad(
	    t, sizeof t - 1, CM_BODY_MAX, CM_JSON_DEPTH_MAX, err, sizeof err);
	parse_bad(
	    s, sizeof s - 1, CM_BODY_MAX, CM_JSON_DEPTH_MAX, err, sizeof err);
}

Test(json, len_is_honoured_not_strlen)
{
	const char *t = "[1,2]xyz";
	json_t *v = NULL;
	char err[64];

	cr_assert_eq(
	    cm_json_parse(t, 5, 5, 4, &v, err, sizeof err), 0, "%s", err);
	cr_assert_eq(json_array_size(v), 2);
	json_decref(v);
}

Test(json, size_bound_exact_and_over)
{
	const char *t = "[1,2,3]"; /* 7 bytes */
	json_t *v = NULL;
	char err[256];

	cr_assert_eq(cm_json_parse(t, 7, 7, 4, &v, err, sizeof err), 0);
	json_decref(v);
	parse_bad(t, 7, 6, 4, err, sizeof err);
	cr_assert(strstr(err, "large") != NULL, "%s", err);
}

Test(json, invalid_utf8_and_syntax_rejected)
{
	static const char *const bad[] = {
	    "", "{", "{\"a\"}", "[1,]", "{'a':1}", "\"\xff\"", "01", "NaN"};
	char err[256];

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		parse_bad(bad[i], strlen(bad[i]), CM_BODY_MAX,
		    CM_JSON_DEPTH_MAX, err, sizeof err);
}

Test(json, null_text_and_small_err_buffer)
{
	json_t *v = NULL;
	char err[8];

	cr_assert_eq(cm_json_parse(NULL, 0, 10, 4, &v, err, sizeof err), -1);
	cr_assert_null(v);
	/* Reason is truncated, never overflowed. */
	cr_assert_eq(cm_json_parse("{", 1, 10, 4, &v, err, sizeof err), -1);
	cr_assert_lt(strlen(err), sizeof err);
	cr_assert_eq(cm_json_parse("{", 1, 10, 4, &v, NULL, 0), -1);
}

Test(json, only_keys)
{
	static const char *const allowed[] = {"url", "timeout", NULL};
	json_t *ok = parse_ok("{\"url\":\"x\",\"timeout\":3}");
	json_t *empty = parse_ok("{}");
	json_t *bad = parse_ok("{\"url\":\"x\",\"evil_key\":1}");
	json_t *arr = parse_ok("[1]");
	char err[128] = "";

	cr_assert_eq(cm_json_only_keys(ok, allowed, err, sizeof err), 0);
	cr_assert_eq(cm_json_only_keys(empty, allowed, err, sizeof err), 0);
	cr_assert_eq(cm_json_only_keys(bad, allowed, err, sizeof err), -1);
	cr_assert(strstr(err, "evil_key") != NULL, "%s", err);
	cr_assert_eq(cm_json_only_keys(arr, allowed, err, sizeof err), -1);
	cr_assert_eq(cm_json_only_keys(ok, NULL, err, sizeof err), -1,
	    "no allowed list means no key is allowed");
	cr_assert_eq(cm_json_only_keys(empty, NULL, err, sizeof err), 0);
	/* Prefixes of allowed keys are not allowed keys. */
	json_decref(bad);
	bad = parse_ok("{\"ur\":1}");
	cr_assert_eq(cm_json_only_keys(bad, allowed, err, sizeof err), -1);
	json_decref(ok);
	json_decref(empty);
	json_decref(bad);
	json_decref(arr);
}

Test(json, canonical_sorts_keys_and_is_compact)
{
	json_t *a =
	    parse_ok("{ \"b\" : 1, \"a\" : { \"z\": [1, 2], \"y\": null } }");
	json_t *b = parse_ok("{\"a\":{\"y\":null,\"z\":[1,2]},\"b\":1}");
	char *ca = cm_json_canonical(a);
	char *cb = cm_json_canonical(b);

	cr_assert_str_eq(ca, "{\"a\":{\"y\":null,\"z\":[1,2]},\"b\":1}");
	cr_assert_str_eq(ca, cb);
	free(ca);
	free(cb);
	json_decref(a);
	json_decref(b);
}

Test(json, canonical_array_order_is_kept)
{
	json_t *a = parse_ok("[2,1]");
	char *c = cm_json_canonical(a);

	cr_assert_str_eq(c, "[2,1]");
	free(c);
	json_decref(a);
}

Test(json, canonical_scalars_and_reals)
{
	json_t *s = parse_ok("\"x\"");
	json_t *r = parse_ok("[0.1, 1.5, 1e300, -0.0, 3.0, 3]");
	json_t *r2 = parse_ok("[0.10, 15e-1, 1E300, -0.0, 3.00, 3]");
	char *cs = cm_json_canonical(s);
	char *cr = cm_json_canonical(r);
	char *cr2 = cm_json_canonical(r2);
	json_t *back;

	cr_assert_str_eq(cs, "\"x\"");
	/* Same doubles, different spellings: the same text. */
	cr_assert_str_eq(cr, cr2);
	/* A real stays a real and an integer an integer. */
	cr_assert(strstr(cr, "3.0,3]") != NULL, "%s", cr);
	/* Every double round-trips exactly. */
	back = parse_ok(cr);
	cr_assert(json_real_value(json_array_get(back, 0)) == 0.1);
	cr_assert(json_real_value(json_array_get(back, 1)) == 1.5);
	cr_assert(json_real_value(json_array_get(back, 2)) == 1e300);
	json_decref(back);
	free(cs);
	free(cr);
	free(cr2);
	json_decref(s);
	json_decref(r);
	json_decref(r2);
	cr_assert_null(cm_json_canonical(NULL));
}

Test(json, depth_of_values)
{
	json_t *v;

	cr_assert_eq(cm_json_depth(NULL), 0);
	v = parse_ok("5");
	cr_assert_eq(cm_json_depth(v), 0);
	json_decref(v);
	v = parse_ok("[]");
	cr_assert_eq(cm_json_depth(v), 1);
	json_decref(v);
	v = parse_ok("{}");
	cr_assert_eq(cm_json_depth(v), 1);
	json_decref(v);
	v = parse_ok("[1,[2,[3]],{\"a\":{\"b\":[]}}]");
	cr_assert_eq(cm_json_depth(v), 4);
	json_decref(v);
}
