/*
 * request.h: judging and parsing an HTTP/1.1 request head (api/http.c
 * reads it; this decides).  Pure functions.
 */
#ifndef API_REQUEST_H
#define API_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "limits.h"

/* Bytes in which the request line must end (its CRLF included). */
#define API_REQUEST_LINE_SCAN (CM_HTTP_LINE_MAX + 2)
/* Bytes in which a head whose request line takes line bytes must end:
 * the header fields and the empty line after them. */
#define API_REQUEST_HEAD_MAX(line) ((line) + CM_HTTP_HEADERS_MAX + 2)
/* The most a head can take. */
#define API_REQUEST_BUF API_REQUEST_HEAD_MAX(API_REQUEST_LINE_SCAN)

/* What the api reads of a head; the strings point into the head. */
struct api_request {
	const char *method, *target;
	const char *authorization, *accept, *last_event_id; /* NULL: absent */
	const char *content_type;                           /* NULL: absent */
	/* MCP's: Host, Origin, Mcp-Session-Id, MCP-Protocol-Version. */
	const char *host, *origin, *mcp_session, *mcp_version;
	size_t body_len;      /* Content-Length; 0 when absent */
	bool keep_alive;      /* HTTP/1.1 without Connection: close */
	bool expect_continue; /* Expect: 100-continue */
};

/*
 * Whether buf[0, len), the start of a request, holds its whole head.
 * Returns 200 with *head_len (CRLF CRLF included), 0 when more bytes are
 * needed, 414 when the request line runs past CM_HTTP_LINE_MAX, or 431
 * when the header fields run past CM_HTTP_HEADERS_MAX.  O(len).
 */
int api_request_head_len(const char *buf, size_t len, size_t *head_len);

/*
 * Parses a whole head (from api_request_head_len, a NUL written after
 * it) in place into *r.  Returns 0, or the status to answer with *why:
 * 400 (a malformed line, a control character but HTAB in a line: a NUL,
 * a bare CR or LF; a Content-Length that is not all digits or comes
 * twice, a Transfer-Encoding), 413 (a body over CM_BODY_MAX, or over
 * CM_UPLOAD_MAX for a PUT of a Space's file, .../files/{name}, judged
 * before a byte of it is read), 414 (a target over CM_URL_MAX).
 */
int api_request_parse(char *head, struct api_request *r, const char **why);

#endif
