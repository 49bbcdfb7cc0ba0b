/*
 * api/request.c: where a request head ends, and what it says, at every
 * bound.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"

static char buf[API_REQUEST_BUF + 4096];

/* Parses text as a whole head; returns the status (0: fine). */
static int
parse(const char *text, struct api_request *r)
{
	size_t head_len;
	const char *why;

	snprintf(buf, sizeof(buf), "%s", text);
	cr_assert_eq(api_request_head_len(buf, strlen(buf), &head_len), 200);
	buf[head_len] = '\0';
	return api_request_parse(buf, r, &why);
}

Test(request, a_head_ends_at_its_empty_line)
{
	size_t n;

	cr_assert_eq(
	    api_request_head_len("GET / HTTP/1.1\r\nA: b\r\n", 22, &n), 0);
	cr_assert_eq(
	    api_request_head_len("GET / HTTP/1.1\r\nA: b\r\n\r\nxyz", 27, &n),
	    200);
	cr_assert_eq(n, 24);
}

Test(request, a_long_request_line_is_414)
{
	size_t n, len = API_REQUEST_LINE_SCAN;

	memset(buf, 'a', len);
	cr_assert_eq(api_request_head_len(buf, len - 1, &n), 0);
	cr_assert_eq(api_request_head_len(buf, len, &n), 414);
}

Test(request, long_header_fields_are_431)
{
	size_t n, line = 16, len;

	memcpy(buf, "GET / HTTP/1.1\r\n", line);
	len = API_REQUEST_HEAD_MAX(line);
	memset(buf + line, 'h', len - line);
	cr_assert_eq(api_request_head_len(buf, len - 1, &n), 0);
	cr_assert_eq(api_request_head_len(buf, len, &n), 431);
	/* Exactly at the bound, with its end: fine. */
	memcpy(buf + len - 4, "\r\n\r\n", 4);
	cr_assert_eq(api_request_head_len(buf, len, &n), 200);
}

Test(request, a_target_over_the_url_bound_is_414)
{
	static char text[CM_URL_MAX + 64];
	struct api_request r;

	/* "GET " and a target of CM_URL_MAX bytes, then one more. */
	for (size_t len = CM_URL_MAX; len <= CM_URL_MAX + 1; len++) {
		memcpy(text, "GET /", 5);
		memset(text + 5, 'u', len - 1);
		snprintf(text + 4 + len, sizeof(text) - 4 - len,
		    " HTTP/1.1\r\n\r\n");
		cr_assert_eq(parse(text, &r), len > CM_URL_MAX ? 414 : 0,
		    "a target of %zu bytes", len);
	}
}

Test(request, content_length_is_digits_only)
{
	static const char *const bad[] = {
	    "+10", "-1", "1 0", "0x10", "", "1e3", "1234567890123456789", NULL};
	struct api_request r;
	char text[256];

	for (size_t i = 0; bad[i] != NULL; i++) {
		snprintf(text, sizeof(text),
		    "POST / HTTP/1.1\r\nContent-Length: %s\r\n\r\n", bad[i]);
		cr_assert_eq(
		    parse(text, &r), 400, "Content-Length: %s", bad[i]);
	}
	cr_assert_eq(parse("POST / HTTP/1.1\r\nContent-Length: 5\r\n"
	                   "Content-Length: 5\r\n\r\n",
	                 &r),
	    400, "twice");
	cr_assert_eq(parse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	                   "\r\n",
	                 &r),
	    400);
	cr_assert_eq(
	    parse("POST / HTTP/1.1\r\ncontent-length:  12 \r\n\r\n", &r), 0);
	cr_assert_eq(r.body_len, 12);
	snprintf(text, sizeof(text),
	    "POST / HTTP/1.1\r\nContent-Length: %d\r\n\r\n", CM_BODY_MAX + 1);
	cr_assert_eq(parse(text, &r), 413);
	snprintf(text, sizeof(text),
	    "POST / HTTP/1.1\r\nContent-Length: %d\r\n\r\n", CM_BODY_MAX);
	cr_assert_eq(parse(text, &r), 0);
}

Test(request, the_fields_the_api_reads)
{
	struct api_request r;

	cr_assert_eq(
	    parse("GET /a?b=1 HTTP/1.1\r\nHost: x\r\n"
	          "authorization: Bearer t\r\nACCEPT: text/event-stream"
	          "\r\nLast-Event-ID: 7\r\nExpect: 100-continue\r\n"
	          "\r\n",
	        &r),
	    0);
	cr_assert_str_eq(r.method, "GET");
	cr_assert_str_eq(r.target, "/a?b=1");
	cr_assert_str_eq(r.authorization, "Bearer t");
	cr_assert_str_eq(r.accept, "text/event-stream");
	cr_assert_str_eq(r.last_event_id, "7");
	cr_assert(r.keep_alive);
	cr_assert(r.expect_continue);
	cr_assert_eq(
	    parse(
	        "GET / HTTP/1.1\r\nConnection: keep-alive, close\r\n\r\n", &r),
	    0);
	cr_assert_not(r.keep_alive);
	cr_assert_eq(parse("GET / HTTP/1.0\r\n\r\n", &r), 0);
	cr_assert_not(r.keep_alive);
}

Test(request, malformed_heads_are_400)
{
	static const char *const bad[] = {"GET / HTTP/2.0\r\n\r\n",
	    "GET  / HTTP/1.1\r\n\r\n", "GET x HTTP/1.1\r\n\r\n",
	    "GET / HTTP/1.1 \r\n\r\n", "GET / HTTP/1.1\r\nNo colon\r\n\r\n",
	    "GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n",
	    "GET / HTTP/1.1\r\nBad name: v\r\n\r\n", NULL};
	struct api_request r;

	for (size_t i = 0; bad[i] != NULL; i++)
		cr_assert_eq(parse(bad[i], &r), 400, "%s", bad[i]);
}

/* Parses the n bytes of text (NULs allowed) as a whole head. */
static int
parse_bytes(const char *text, size_t n, struct api_request *r)
{
	size_t head_len;
	const char *why;

	memcpy(buf, text, n);
	cr_assert_eq(api_request_head_len(buf, n, &head_len), 200);
	buf[head_len] = '\0';
	return api_request_parse(buf, r, &why);
}

/* A NUL, a bare CR or LF, or another control character inside a line
 * would end it for some other parser: a field this one never reads (a
 * Content-Length hidden behind a NUL), or one it reads and another not. */
Test(request, control_characters_in_a_line_are_400)
{
	static const char nul_field[] =
	    "POST / HTTP/1.1\r\nX: a\0b\r\nContent-Length: 5\r\n\r\n";
	static const char nul_target[] = "GET /a\0/../b HTTP/1.1\r\n\r\n";
	static const char *const bad[] = {
	    "POST / HTTP/1.1\r\nX: a\nContent-Length: 5\r\n\r\n",
	    "POST / HTTP/1.1\r\nX: a\rContent-Length: 5\r\n\r\n",
	    "GET / HTTP/1.1\r\nX: \x01\r\n\r\n",
	    "GET / HTTP/1.1\r\nX: a\x7f\r\n\r\n", "GET /a\nb HTTP/1.1\r\n\r\n",
	    "GET /a\x1b[0m HTTP/1.1\r\n\r\n", NULL};
	struct api_request r;

	cr_assert_eq(parse_bytes(nul_field, sizeof(nul_field) - 1, &r), 400);
	cr_assert_eq(parse_bytes(nul_target, sizeof(nul_target) - 1, &r), 400);
	for (size_t i = 0; bad[i] != NULL; i++)
		cr_assert_eq(parse(bad[i], &r), 400, "%s", bad[i]);
	/* A tab is whitespace, and bytes past ASCII are obs-text. */
	cr_assert_eq(parse("GET / HTTP/1.1\r\nX: a\tb\xc3\xa9\r\n\r\n", &r), 0);
}

/* Found by fuzz_request: a field behind a NUL byte, or after a bare CR or
 * LF, went unread, though a proxy in front reads it; a Content-Length
 * there smuggled a second request in the body. */
Test(request, every_byte_of_a_head_is_judged)
{
	static const char nul[] =
	    "POST / HTTP/1.1\r\nX-A: b\0\r\nContent-Length: 40\r\n\r\n";
	static const char nul_line[] =
	    "POST / HTTP/1.1\r\nX-A: b\r\n\0Content-Length: 40\r\n\r\n";
	static const char *const bad[] = {
	    "POST / HTTP/1.1\r\nX-A: b\nContent-Length: 40\r\n\r\n",
	    "POST / HTTP/1.1\r\nX-A: b\rContent-Length: 40\r\n\r\n",
	    "GET /\n HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\nA\r: b\r\n\r\n",
	    NULL};
	struct api_request r;

	cr_assert_eq(parse_bytes(nul, sizeof(nul) - 1, &r), 400);
	cr_assert_eq(parse_bytes(nul_line, sizeof(nul_line) - 1, &r), 400);
	for (size_t i = 0; bad[i] != NULL; i++)
		cr_assert_eq(parse(bad[i], &r), 400, "%s", bad[i]);
}
