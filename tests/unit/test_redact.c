/*
 * test_redact.c: the one redactor (common/redact.h).
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits.h"
#include "redact.h"

#define MARKER "{\"truncated\":true,\"reason\":\"result_too_large\"}"

static char *
red(const char *in, const struct cm_secrets *s)
{
	char *out = cm_redact_text(in, strlen(in), s);

	cr_assert_not_null(out);
	return out;
}

/* Asserts that in redacts to want, and that redacting again changes
 * nothing (no detector may be fooled by its own marker). */
static void
expect_s(const char *in, const char *want, const struct cm_secrets *s)
{
	char *out = red(in, s), *again;

	cr_expect_str_eq(out, want, "in: %s", in);
	again = red(out, s);
	cr_expect_str_eq(again, out, "not idempotent on: %s", out);
	free(again);
	free(out);
}

static void
expect(const char *in, const char *want)
{
	expect_s(in, want, NULL);
}

static void
expect_same(const char *in)
{
	expect(in, in);
}

Test(redact_text, token_in_query_keeps_other_params)
{
	expect("GET /a?token=abc&x=1 HTTP/1.1",
	    "GET /a?token=[REDACTED]&x=1 HTTP/1.1");
	expect("/cb?access_token=eyJ.a-b_c&state=s",
	    "/cb?access_token=[REDACTED]&state=s");
	expect("token=abc", "token=[REDACTED]");
}

Test(redact_text, every_listed_key)
{
	const char *keys[] = {"token", "access_token", "api_key", "apikey",
	    "password", "passwd", "secret", "client_secret", "refresh_token",
	    "API-KEY", "Client-Secret", "PassWord", NULL};
	char in[128], want[128];

	for (size_t k = 0; keys[k] != NULL; k++) {
		snprintf(in, sizeof in, "a %s=hunter2 b", keys[k]);
		snprintf(want, sizeof want, "a %s=[REDACTED] b", keys[k]);
		expect(in, want);
		snprintf(in, sizeof in, "%s: hunter2", keys[k]);
		snprintf(want, sizeof want, "%s: [REDACTED]", keys[k]);
		expect(in, want);
	}
}

Test(redact_text, separator_variants)
{
	expect("token =abc", "token =[REDACTED]");
	expect("token = abc", "token = [REDACTED]");
	expect("token:abc", "token:[REDACTED]");
	expect("token\t:\t\tabc", "token\t:\t\t[REDACTED]");
	expect("TOKEN=abc", "TOKEN=[REDACTED]");
	expect("'password' => 'hunter2'", "'password' => '[REDACTED]'");
	/* URL-encoded separators, e.g. a URL inside a redirect parameter. */
	expect("next=%2Fcb%3Ftoken%3Dabc%26x%3D1 done",
	    "next=%2Fcb%3Ftoken%3D[REDACTED] done");
	expect("token%3aabc", "token%3a[REDACTED]");
}

Test(redact_text, value_terminators)
{
	const char *ends[] = {
	    " ", "&", ";", ",", "\"", "'", "<", ">", "\n", "\t", NULL};
	char in[64], want[64];

	for (size_t k = 0; ends[k] != NULL; k++) {
		snprintf(in, sizeof in, "password=hunter2%sz", ends[k]);
		snprintf(want, sizeof want, "password=[REDACTED]%sz", ends[k]);
		expect(in, want);
	}
	expect("password=hunter2", "password=[REDACTED]");
	expect("password=", "password=");
}

Test(redact_text, json_text_pairs)
{
	expect("{\"password\": \"hunter2\", \"user\": \"bob\"}",
	    "{\"password\": \"[REDACTED]\", \"user\": \"bob\"}");
	/* A quoted value ends at its closing quote, not at a space. */
	expect(
	    "{\"password\":\"hunter 2 x\"}", "{\"password\":\"[REDACTED]\"}");
	expect("{\"password\":\"a\\\"b c\"}", "{\"password\":\"[REDACTED]\"}");
	expect("{\"api_key\" : \"k\"}", "{\"api_key\" : \"[REDACTED]\"}");
	/* A structured value is taken to the end of the line. */
	expect("{\"password\": [\"a\", \"b\"]}\nnext",
	    "{\"password\": [REDACTED]\nnext");
	expect("token={\"k\": \"v w\"}", "token=[REDACTED]");
	/* JSON inside a JSON string: the inner escaped quote \\\" does not
	 * end the value. */
	expect("\"{\\\"password\\\":\\\"a\\\\\\\"b c\\\"}\"",
	    "\"{\\\"password\\\":\\\"[REDACTED]\\\"}\"");
}

Test(redact_text, bearer_any_spacing)
{
	expect("Bearer abc.def-ghi", "Bearer [REDACTED]");
	expect("x bearer\t\tabc y", "x bearer\t\t[REDACTED] y");
	expect("BEARER     abc", "BEARER     [REDACTED]");
	expect("Bearer%20abc", "Bearer%20[REDACTED]");
	expect("bearer \"abc def\"", "bearer \"[REDACTED]\"");
	expect("Bearer: abc", "Bearer: [REDACTED]");
	expect("oauth_bearer=abc&x", "oauth_bearer=[REDACTED]&x");
	expect_same("bearers abc");
	expect_same("Bearer");
}

Test(redact_text, authorization_whole_value)
{
	expect("Authorization: Bearer x", "Authorization: [REDACTED]");
	expect("authorization:bearer x", "authorization:[REDACTED]");
	expect("AUTHORIZATION: Basic dXNlcjpwYXNz\nHost: a",
	    "AUTHORIZATION: [REDACTED]\nHost: a");
	expect("Authorization: Digest username=\"u\", response=\"r\"\r\nX: 1",
	    "Authorization: [REDACTED]\r\nX: 1");
	expect("Proxy-Authorization: Basic abc",
	    "Proxy-Authorization: [REDACTED]");
	expect("{\"Authorization\": \"Basic abc\", \"a\": 1}",
	    "{\"Authorization\": \"[REDACTED]\", \"a\": 1}");
}

Test(redact_text, cookie_headers_to_end_of_line)
{
	expect("Cookie: a=b; c=d\r\nAccept: */*",
	    "Cookie: [REDACTED]\r\nAccept: */*");
	expect(
	    "set-cookie: sid=abc; Path=/; HttpOnly", "set-cookie: [REDACTED]");
	expect("Set-Cookie:sid=abc", "Set-Cookie:[REDACTED]");
	/* A quoted cookie value must not end the header's value. */
	expect("Cookie: a=\"b c\"; d=e\nnext", "Cookie: [REDACTED]\nnext");
	expect("{\"cookie\":\"a=b; c=d\"}", "{\"cookie\":\"[REDACTED]\"}");
}

Test(redact_text, url_userinfo)
{
	expect("https://user:pass@host/path", "https://[REDACTED]@host/path");
	expect("see postgres://u:p@db:5432/x now",
	    "see postgres://[REDACTED]@db:5432/x now");
	/* The last '@' ends the userinfo. */
	expect("http://u:p@ss@host/", "http://[REDACTED]@host/");
	expect("HTTPS://USER@host", "HTTPS://[REDACTED]@host");
	expect("https:\\/\\/u:p@host\\/x", "https:\\/\\/[REDACTED]@host\\/x");
	expect_same("https://host/@user/post");
	expect_same("https://host?q=a@b");
	expect_same("mail bob@example.com");
}

Test(redact_text, devtools_urls_whole)
{
	expect("connect ws://127.0.0.1:9222/devtools/browser/abc failed",
	    "connect [REDACTED] failed");
	expect("WSS://h:1/DevTools/page/X", "[REDACTED]");
	expect("\"webSocketDebuggerUrl\": \"ws://[::1]:9222/devtools/page/AB\"",
	    "\"webSocketDebuggerUrl\": \"[REDACTED]\"");
	expect("url=http://h:9222/devtools/inspector.html?ws=h:9222/devtools/"
	       "page/ID&x",
	    "url=[REDACTED]");
	expect("\"ws:\\/\\/h:9\\/devtools\\/browser\\/a\"", "\"[REDACTED]\"");
	expect_same("chrome devtools are nice");
}

Test(redact_text, literal_secrets_everywhere)
{
	struct cm_secrets s = {0};

	cr_assert_eq(cm_secrets_add(&s, "s3cr3tValue"), 0);
	cr_assert_eq(cm_secrets_add(&s, "/var/lib/spaced/profiles/p1"), 0);
	expect_s("xxs3cr3tValuexx and s3cr3tValue",
	    "xx[REDACTED]xx and [REDACTED]", &s);
	/* Case-insensitive: hosts are often lowercased on the way. */
	expect_s("S3CR3TVALUE", "[REDACTED]", &s);
	expect_s("open /var/lib/spaced/profiles/p1/Default/Cookies: EIO",
	    "open [REDACTED]/Default/Cookies: EIO", &s);
	expect_s("s3cr3tValu", "s3cr3tValu", &s);
}

Test(redact_text, overlapping_secrets_leave_no_fragment)
{
	struct cm_secrets s = {0};

	cm_secrets_add(&s, "abcdef");
	cm_secrets_add(&s, "defghi");
	cm_secrets_add(&s, "abab");
	expect_s("x abcdefghi y", "x [REDACTED] y", &s);
	expect_s("ababab", "[REDACTED]", &s);
	/* A pattern and a literal overlapping: the literal is redacted in
	 * full even though the pattern's value stops at the space. */
	struct cm_secrets t = {0};
	cm_secrets_add(&t, "two words");
	expect_s("token=two words end", "token=[REDACTED] end", &t);
}

/* Redacted, then cut: a cut never leaves the start of a secret that the
 * whole of it would have matched, nor half a character. */
Test(redact_text, bounded_text_is_redacted_before_its_cut)
{
	struct cm_secrets s = {0};
	char *out;

	cm_secrets_add(&s, "s3cr3tValue");
	out = cm_redact_text_max("ab s3cr3tValue", 14, &s, 9);
	cr_assert_str_eq(out, "ab [REDAC");
	free(out);
	out = cm_redact_text_max("see token=abcdef1234", 20, NULL, 13);
	cr_assert_str_eq(out, "see token=[RE");
	free(out);
	/* Two bytes each: a cut at 5 keeps two of them, not two and a
	 * half. */
	out = cm_redact_text_max("\xc3\xa9\xc3\xa9\xc3\xa9", 6, NULL, 5);
	cr_assert_str_eq(out, "\xc3\xa9\xc3\xa9");
	free(out);
	out = cm_redact_text_max("short", 5, NULL, 5);
	cr_assert_str_eq(out, "short");
	free(out);
	out = cm_redact_text_max(NULL, 0, NULL, 5);
	cr_assert_str_eq(out, "");
	free(out);
}

Test(redact_text, secrets_list_bounds)
{
	struct cm_secrets s = {0};
	static char lits[CM_SECRETS_MAX + 1][16];

	cr_assert_eq(cm_secrets_add(&s, NULL), 0);
	cr_assert_eq(cm_secrets_add(&s, "abc"), 0); /* < CM_SECRET_MIN */
	cr_assert_eq(s.n, 0);
	for (int k = 0; k < CM_SECRETS_MAX; k++) {
		snprintf(lits[k], sizeof lits[k], "lit%04d", k);
		cr_assert_eq(cm_secrets_add(&s, lits[k]), 0);
	}
	snprintf(lits[CM_SECRETS_MAX], 16, "overflow");
	cr_assert_eq(cm_secrets_add(&s, lits[CM_SECRETS_MAX]), -1);
	cr_assert_eq(s.n, CM_SECRETS_MAX);
	expect_s(
	    "lit0000 lit0015 overflow", "[REDACTED] [REDACTED] overflow", &s);
	cr_assert_eq(cm_secrets_add(NULL, "abcd"), -1);
}

Test(redact_text, ordinary_text_survives)
{
	expect_same("The tokenizer splits words; the secretary has a token.");
	expect_same("passwords: 3 policies, tokens=5, secrets_count=2");
	expect_same("Basic information at 12:30, ratio a=b, x:y");
	expect_same("We use cookies: see policy");
	expect_same("authorization_required: true");
	expect_same("https://example.com/path?q=1&page=2#frag");
	expect_same("");
	expect_same("caf\xc3\xa9 \xe2\x82\xac");
}

Test(redact_text, embedded_nul_and_null_input)
{
	const char in[] = "a\0token=abc";
	char *out = cm_redact_text(in, sizeof in - 1, NULL);

	cr_assert_not_null(out);
	cr_assert_eq(out[0], 'a');
	cr_assert_eq(out[1], '\0');
	cr_assert_str_eq(out + 2, "token=[REDACTED]");
	free(out);
	out = cm_redact_text(NULL, 5, NULL);
	cr_assert_str_eq(out, "");
	free(out);
}

/* The output stays within 3x the input, even when every few bytes are a
 * separate redaction. */
Test(redact_text, output_growth_is_bounded)
{
	const char *units[] = {"://x@", "token=a&", "bearer a ", "abcd", NULL};
	struct cm_secrets s = {0};

	cm_secrets_add(&s, "abcd");
	for (size_t k = 0; units[k] != NULL; k++) {
		size_t u = strlen(units[k]), n = 10000 * u;
		char *in = malloc(n + 1), *out;
		for (size_t i = 0; i < n; i += u)
			memcpy(in + i, units[k], u);
		in[n] = '\0';
		out = cm_redact_text(in, n, &s);
		cr_assert_not_null(out);
		cr_expect(strlen(out) < 3 * n, "%s: %zu -> %zu", units[k], n,
		    strlen(out));
		cr_expect(strstr(out, "[REDACTED]") != NULL);
		free(in);
		free(out);
	}
}

/* Inputs built to make a naive redactor quadratic; 256 KiB each must
 * finish well inside the timeout, sanitizers included. */
Test(redact_text, hostile_inputs_stay_linear, .timeout = 20)
{
	const char *units[] = {"token=", "cookie:", "password=\"", "bearer ",
	    "/devtools/", "://@", "a", NULL};
	static char secret[2049];
	struct cm_secrets s = {0};
	size_t n = 256 * 1024;

	memset(secret, 'a', 2047);
	secret[2047] = 'b';
	cm_secrets_add(&s, secret);
	for (size_t k = 0; units[k] != NULL; k++) {
		size_t u = strlen(units[k]);
		char *in = malloc(n + 1), *out;
		for (size_t i = 0; i < n; i++)
			in[i] = units[k][i % u];
		in[n] = '\0';
		out = cm_redact_text(in, n, &s);
		cr_assert_not_null(out);
		free(in);
		free(out);
	}
}

/* ---- JSON --------------------------------------------------------------- */

static json_t *
load(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &e);

	cr_assert_not_null(v, "bad test JSON: %s", e.text);
	return v;
}

static void
expect_json(const char *in, const char *want, const struct cm_secrets *s)
{
	json_t *v = load(in), *w = load(want);
	char *got;

	cr_assert_eq(cm_redact_json(v, s), 0);
	got = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	cr_expect(json_equal(v, w), "in: %s\ngot: %s\nwant: %s", in, got, want);
	free(got);
	json_decref(v);
	json_decref(w);
}

Test(redact_json, secret_keys_replace_any_value)
{
	expect_json("{\"password\": 1234, \"Set-Cookie\": [\"a=b\"],"
	            " \"api-key\": {\"x\": 1}, \"clientSecret\": true,"
	            " \"ACCESS_TOKEN\": null, \"refreshToken\": \"r\","
	            " \"passwd\": 1.5, \"authorization\": \"Basic x\","
	            " \"endpoint\": \"ws://h\", \"profile\": \"/p\","
	            " \"profile_path\": \"/p\", \"credentials\": {},"
	            " \"cookie\": \"c\", \"secret\": \"s\", \"token\": \"t\","
	            " \"title\": \"ok\"}",
	    "{\"password\": \"[REDACTED]\", \"Set-Cookie\": \"[REDACTED]\","
	    " \"api-key\": \"[REDACTED]\", \"clientSecret\": \"[REDACTED]\","
	    " \"ACCESS_TOKEN\": \"[REDACTED]\", \"refreshToken\": "
	    "\"[REDACTED]\","
	    " \"passwd\": \"[REDACTED]\", \"authorization\": \"[REDACTED]\","
	    " \"endpoint\": \"[REDACTED]\", \"profile\": \"[REDACTED]\","
	    " \"profile_path\": \"[REDACTED]\", \"credentials\": "
	    "\"[REDACTED]\","
	    " \"cookie\": \"[REDACTED]\", \"secret\": \"[REDACTED]\","
	    " \"token\": \"[REDACTED]\", \"title\": \"ok\"}",
	    NULL);
}

Test(redact_json, ordinary_keys_and_nested_strings)
{
	expect_json(
	    "{\"tokens\": 5, \"userProfile\": \"u\", \"endpoints\": 2,"
	    " \"links\": [\"https://a:b@h/\", {\"t\": \"token=abc x\"}],"
	    " \"n\": [1, true, null]}",
	    "{\"tokens\": 5, \"userProfile\": \"u\", \"endpoints\": 2,"
	    " \"links\": [\"https://[REDACTED]@h/\","
	    " {\"t\": \"token=[REDACTED] x\"}], \"n\": [1, true, null]}",
	    NULL);
	/* A top-level string is redacted in place. */
	expect_json("\"Bearer abc\"", "\"Bearer [REDACTED]\"", NULL);
}

Test(redact_json, name_value_pairs_naming_a_secret)
{
	expect_json("{\"headers\": [{\"name\": \"Cookie\", \"value\": \"a=b\"},"
	            " {\"name\": \"Accept\", \"value\": \"*/*\"},"
	            " {\"name\": \"X-Api-Key\", \"value\": 7}]}",
	    "{\"headers\": [{\"name\": \"Cookie\", \"value\": \"[REDACTED]\"},"
	    " {\"name\": \"Accept\", \"value\": \"*/*\"},"
	    " {\"name\": \"X-Api-Key\", \"value\": \"[REDACTED]\"}]}",
	    NULL);
}

Test(redact_json, keys_carrying_secrets_are_renamed)
{
	struct cm_secrets s = {0};

	cm_secrets_add(&s, "SECRET1x");
	cm_secrets_add(&s, "SECRET2x");
	expect_json("{\"https://u:p@h/\": 1, \"x\": 2}",
	    "{\"https://[REDACTED]@h/\": 1, \"x\": 2}", &s);
	/* Two keys that redact to the same name both survive; a renamed key
	 * never overwrites an existing member. */
	expect_json("{\"k SECRET1x\": 1, \"k SECRET2x\": 2,"
	            " \"k [REDACTED]\": 0}",
	    "{\"k [REDACTED]\": 0, \"k [REDACTED]#2\": 1,"
	    " \"k [REDACTED]#3\": 2}",
	    &s);
}

Test(redact_json, numbers_holding_a_literal_secret)
{
	struct cm_secrets s = {0};

	cm_secrets_add(&s, "987654321");
	expect_json("{\"n\": 1987654321, \"m\": 12, \"a\": [987654321.5]}",
	    "{\"n\": \"[REDACTED]\", \"m\": 12, \"a\": [\"[REDACTED]\"]}", &s);
}

Test(redact_json, deep_values_built_in_process_are_cut)
{
	json_t *root = json_array(), *cur = root;

	for (int k = 0; k < CM_JSON_DEPTH_MAX + 8; k++) {
		json_t *next = json_array();
		json_array_append_new(cur, next);
		cur = next;
	}
	json_array_append_new(cur, json_string("token=abc"));
	cr_assert_eq(cm_redact_json(root, NULL), 0);
	char *dump = json_dumps(root, JSON_COMPACT);
	cr_expect(strstr(dump, "abc") == NULL, "%s", dump);
	cr_expect(strstr(dump, "\"[REDACTED]\"") != NULL);
	free(dump);
	json_decref(root);
	cr_expect_eq(cm_redact_json(NULL, NULL), -1);
}

Test(redact_json, bound_at_exactly_max)
{
	json_t *v = json_string("aaaa"); /* dumps as 6 bytes: "aaaa" */
	char *out;

	out = cm_bound_json(v, 6);
	cr_expect_str_eq(out, "\"aaaa\"");
	free(out);
	out = cm_bound_json(v, 5);
	cr_expect_str_eq(out, MARKER);
	free(out);
	json_decref(v);

	v = load("{\"a\": [1, 2]}");
	out = cm_bound_json(v, 13); /* {"a":[1,2]} is 11 */
	cr_expect_str_eq(out, "{\"a\":[1,2]}");
	free(out);
	out = cm_bound_json(v, 11);
	cr_expect_str_eq(out, "{\"a\":[1,2]}");
	free(out);
	out = cm_bound_json(v, 10);
	cr_expect_str_eq(out, MARKER);
	free(out);
	json_decref(v);
}

/* A JSON string whose compact dump is exactly n bytes. */
static char *
string_of_dump_len(size_t n)
{
	char *t = malloc(n + 1);

	memset(t, 'x', n);
	t[0] = '"';
	t[n - 1] = '"';
	t[n] = '\0';
	return t;
}

Test(redact_result, parses_redacts_and_bounds)
{
	const char *in = "{\"url\": \"https://u:p@h/?token=abc&x=1\","
	                 " \"password\": \"p\"}";
	char *out = cm_redact_result(in, strlen(in), NULL);

	cr_assert_str_eq(out, "{\"url\":\"https://[REDACTED]@h/?token="
	                      "[REDACTED]&x=1\",\"password\":\"[REDACTED]\"}");
	free(out);
}

Test(redact_result, result_max_boundary)
{
	char *in = string_of_dump_len(CM_RESULT_MAX), *out;

	out = cm_redact_result(in, strlen(in), NULL);
	cr_expect_str_eq(out, in);
	free(out);
	free(in);
	in = string_of_dump_len(CM_RESULT_MAX + 1);
	out = cm_redact_result(in, strlen(in), NULL);
	cr_expect_str_eq(out, MARKER);
	free(out);
	free(in);
}

Test(redact_result, non_json_becomes_a_redacted_string)
{
	const char *in = "Error: token=abc\nnot json {";
	char *out = cm_redact_result(in, strlen(in), NULL);

	cr_assert_str_eq(out, "\"Error: token=[REDACTED]\\nnot json {\"");
	free(out);
	/* Duplicate keys are refused by the parser: kept as text. */
	out = cm_redact_result("{\"a\":1,\"a\":2}", 13, NULL);
	cr_assert_str_eq(out, "\"{\\\"a\\\":1,\\\"a\\\":2}\"");
	free(out);
	out = cm_redact_result("", 0, NULL);
	cr_assert_str_eq(out, "\"\"");
	free(out);
	out = cm_redact_result(NULL, 10, NULL);
	cr_assert_str_eq(out, "\"\"");
	free(out);
}

Test(redact_result, invalid_utf8_and_nul_still_give_json)
{
	const char in[] = "ok \xff\xc3( \xed\xa0\x80 \0 token=a";
	char *out = cm_redact_result(in, sizeof in - 1, NULL);
	json_error_t e;
	json_t *v = json_loads(out, JSON_DECODE_ANY, &e);

	cr_assert_not_null(v, "%s", out);
	cr_assert_str_eq(
	    json_string_value(v), "ok ?\?( ?\?? ? token=[REDACTED]");
	json_decref(v);
	free(out);
}

Test(redact_result, huge_text_is_redacted_then_bounded)
{
	size_t n = (size_t)CM_RESULT_MAX * 4 + 100;
	char *in = malloc(n), *out;

	/* Bigger than the parser is offered, but a Cookie header eats it. */
	memcpy(in, "Cookie: ", 8);
	memset(in + 8, 'c', n - 8);
	out = cm_redact_result(in, n, NULL);
	cr_expect_str_eq(out, "\"Cookie: [REDACTED]\"");
	free(out);
	memset(in, 'x', n);
	out = cm_redact_result(in, n, NULL);
	cr_expect_str_eq(out, MARKER);
	free(out);
	free(in);
}

Test(redact_result, secrets_in_results)
{
	struct cm_secrets s = {0};
	const char *in = "{\"text\": \"ep ws://10.0.0.9:9222/x/y k\","
	                 " \"ws://10.0.0.9:9222/x/y\": 1}";
	char *out;

	cm_secrets_add(&s, "ws://10.0.0.9:9222/x/y");
	out = cm_redact_result(in, strlen(in), &s);
	cr_assert_str_eq(
	    out, "{\"text\":\"ep [REDACTED] k\",\"[REDACTED]\":1}");
	free(out);
}
