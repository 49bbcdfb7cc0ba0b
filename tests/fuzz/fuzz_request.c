/*
 * fuzz_request.c: libFuzzer target for the HTTP request head (api/request.c).
 *
 * The bytes are what a client sent, from the start of a request: where the
 * head ends is judged as the connection does (api_request_head_len), then
 * the head is parsed as the connection parses it (a NUL-terminated copy).
 * Checked beyond "no crash":
 *   - a head ends at its first CRLF CRLF, within API_REQUEST_BUF;
 *   - a head the parser accepts is judged whole: no byte of it is hidden
 *     behind a NUL or a bare CR or LF (what a proxy in front would read
 *     as another header: request smuggling), its method and target lie in
 *     the head, the target is an absolute path within CM_URL_MAX, and the
 *     body it announces is within CM_BODY_MAX;
 *   - a refusal is 400, 413 or 414 with a reason.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

_Noreturn static void
die(const char *what)
{
	fprintf(stderr, "fuzz_request: %s\n", what);
	abort();
}

static bool
inside(const char *p, const char *head, size_t len)
{
	return p != NULL && p >= head && p < head + len;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data, *why = NULL;
	struct api_request r;
	size_t head_len, i;
	char *head;
	int st;

	st = api_request_head_len(buf, size, &head_len);
	if (st == 0 || st == 414 || st == 431) {
		if (head_len != 0)
			die("a head length without a head");
		return 0;
	}
	if (st != 200)
		die("api_request_head_len: an unknown status");
	if (head_len < 4 || head_len > size || head_len > API_REQUEST_BUF ||
	    memcmp(buf + head_len - 4, "\r\n\r\n", 4) != 0)
		die("a head that does not end in CRLF CRLF");
	for (i = 0; i + 4 < head_len; i++)
		if (memcmp(buf + i, "\r\n\r\n", 4) == 0)
			die("a head that does not end at its first CRLF CRLF");

	if ((head = malloc(head_len + 1)) == NULL)
		return 0;
	memcpy(head, buf, head_len);
	head[head_len] = '\0';
	st = api_request_parse(head, &r, &why);
	if (st != 0) {
		if ((st != 400 && st != 413 && st != 414) || why == NULL)
			die("a refusal without a known status or a reason");
		free(head);
		return 0;
	}
	/* What was accepted is what a peer reads: every byte judged. */
	for (i = 0; i < head_len; i++) {
		if (buf[i] == '\0')
			die("accepted a head with a NUL byte");
		if (buf[i] == '\r' && (i + 1 == head_len || buf[i + 1] != '\n'))
			die("accepted a head with a bare CR");
		if (buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r'))
			die("accepted a head with a bare LF");
	}
	if (!inside(r.method, head, head_len) ||
	    !inside(r.target, head, head_len) || r.target[0] != '/' ||
	    strlen(r.target) > CM_URL_MAX)
		die("accepted a request line that is not one");
	if ((r.authorization && !inside(r.authorization, head, head_len)) ||
	    (r.accept && !inside(r.accept, head, head_len)) ||
	    (r.last_event_id && !inside(r.last_event_id, head, head_len)))
		die("a header value outside the head");
	if (r.body_len > CM_BODY_MAX)
		die("accepted a body over CM_BODY_MAX");
	free(head);
	return 0;
}
