/*
 * raw_fixture.h: HTTP over a raw socket, for the tests of the front
 * itself: what they send must reach the api exactly as written (a
 * malformed head, a body that never ends), which libcurl would not do;
 * and an event stream read as its events come (raw_sse_open).
 * Header-only, static inline, on top of http_fixture.h.
 */
#ifndef SPACED_RAW_FIXTURE_H
#define SPACED_RAW_FIXTURE_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "http_fixture.h"

#define ANSWER_MS 1000 /* what a fresh client may wait, under attack */

/* A connection to the api of p. */
static inline int
raw_connect_proc(const struct tk_proc *p)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)p->http_port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0,
	    "connect: %s", strerror(errno));
	return fd;
}

static inline int
raw_connect(const struct hf_env *e)
{
	return raw_connect_proc(&e->sf.p);
}

static inline void
raw_send(int fd, const char *text, size_t n)
{
	size_t off = 0;

	while (off < n) {
		ssize_t w = write(fd, text + off, n - off);

		cr_assert_gt(w, 0, "write: %s", strerror(errno));
		off += (size_t)w;
	}
}

/* Reads into buf (NUL-terminated) until stop appears, the peer closes or
 * timeout_ms passes.  Returns the bytes read; *eof when the peer closed. */
static inline size_t
raw_read_until(
    int fd, char *buf, size_t cap, const char *stop, int timeout_ms, bool *eof)
{
	int64_t deadline = cm_mono_ms() + timeout_ms;
	size_t got = 0;

	*eof = false;
	buf[0] = '\0';
	while (got + 1 < cap && cm_mono_ms() < deadline &&
	       (stop == NULL || strstr(buf, stop) == NULL)) {
		struct pollfd pfd = {fd, POLLIN, 0};
		ssize_t n;

		if (poll(&pfd, 1, (int)(deadline - cm_mono_ms())) <= 0)
			continue;
		n = read(fd, buf + got, cap - 1 - got);
		if (n <= 0) {
			*eof = true;
			break;
		}
		got += (size_t)n;
		buf[got] = '\0';
	}
	return got;
}

/*
 * GET path (a Space's .../events, with any query) from the api of p as
 * Server-Sent Events, as token: the connection, to be read as the events
 * come (raw_read_until), unlike hf_sse, which returns the stream once it
 * has ended.  The caller closes it.
 */
static inline int
raw_sse_open(const struct tk_proc *p, const char *path, const char *token)
{
	char req[2048];
	int fd = raw_connect_proc(p);
	int n = snprintf(req, sizeof(req),
	    "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    "Authorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n",
	    path, token);

	cr_assert(n > 0 && (size_t)n < sizeof(req));
	raw_send(fd, req, (size_t)n);
	return fd;
}

/* The status of the answer to a request sent on a fresh connection, or
 * -1 when none came within timeout_ms. */
static inline int
raw_status(const struct hf_env *e, const char *req, size_t len, int timeout_ms)
{
	char buf[4096];
	bool eof;
	int fd = raw_connect(e), status = -1;

	raw_send(fd, req, len);
	raw_read_until(fd, buf, sizeof(buf), "\r\n", timeout_ms, &eof);
	if (strncmp(buf, "HTTP/1.1 ", 9) == 0)
		status = (int)strtol(buf + 9, NULL, 10);
	close(fd);
	return status;
}

/* A fresh client's GET /healthz answers 200 within ANSWER_MS. */
static inline void
healthz_answers(const struct hf_env *e, const char *during)
{
	static const char req[] = "GET /healthz HTTP/1.1\r\nHost: t\r\n"
	                          "Connection: close\r\n\r\n";
	int64_t t0 = cm_mono_ms();
	int status = raw_status(e, req, sizeof(req) - 1, ANSWER_MS);

	cr_assert_eq(status, 200,
	    "GET /healthz during %s: %d after %lld ms (want 200 within %d ms)",
	    during, status, (long long)(cm_mono_ms() - t0), ANSWER_MS);
}

#endif
