/*
 * test_hostile_http.c: hostile HTTP against the api.  Each case is sent
 * over a raw socket exactly as written, and each must end in a clear 4xx
 * (or a close where HTTP says so) within the api's own deadlines, never in
 * a hang or a crash: after every case the same spaced-api process still
 * answers.
 *
 *   - a siege of 500 slow and 1,000 idle connections, under which a
 *     well-behaved client's GET of a Space is answered within 1 s;
 *   - bodies too large, declared too large, chunked, a Content-Length
 *     that lies either way or comes twice, Transfer-Encoding with it;
 *   - header floods, malformed request lines, control characters (a NUL,
 *     a bare CR or LF) that would hide one request inside another, bad
 *     UTF-8 in the path and in JSON, JSON nested 100,000 deep, \u0000;
 *   - path traversal on the console and artifact routes, every encoding;
 *   - tokens one late byte apart, and a revoked token or a removed
 *     membership refused within 1 s.
 */
#include <criterion/criterion.h>
#include <sys/resource.h>

#include "raw_fixture.h"
#include "siege.h"

TestSuite(hostile, .timeout = 240);

#define N_SLOW 500
#define N_IDLE 1000
/* Long enough for every slow head to be cut twice (CM_HTTP_HEAD_TIMEOUT_MS)
 * and every slow body once (CM_HTTP_BODY_TIMEOUT_MS). */
#define SIEGE_RUN_MS (CM_HTTP_BODY_TIMEOUT_MS + 2000)
#define SIEGE_OPEN_MS 20000 /* the siege's connections all open */
/* A refusal comes within the api's longest read deadline, and this. */
#define SLACK_MS 5000
#define DENY_MS 1000 /* a revoked token or membership is refused within */
#define ANSWER_CAP (256 * 1024)

static struct hf_env env;
static char answer[ANSWER_CAP];

static pid_t
api_pid(const struct hf_env *e)
{
	pid_t pid = tk_child_with(e->sf.p.pid, "spaced-api", NULL, 0);

	cr_assert_gt(pid, 0, "no spaced-api");
	return pid;
}

/* The same api process answers: nothing crashed it. */
static void
still_up(const struct hf_env *e, pid_t pid, const char *after)
{
	healthz_answers(e, after);
	cr_assert_eq(
	    api_pid(e), pid, "spaced-api was restarted after %s", after);
}

/* Writes what the socket takes; the api may close or reset it first
 * (an answer to a head it refused before the rest arrived). */
static void
send_some(int fd, const char *text, size_t n)
{
	size_t off = 0;

	while (off < n) {
		ssize_t w = send(fd, text + off, n - off, MSG_NOSIGNAL);

		if (w <= 0)
			return;
		off += (size_t)w;
	}
}

/* Statuses of the answers in text, one after another (each head, then
 * its Content-Length of body), at most max; returns how many. */
static int
statuses(const char *text, int *out, int max)
{
	const char *p = text, *text_end = text + strlen(text);
	int n = 0;

	while (n < max && p < text_end && strncmp(p, "HTTP/1.1 ", 9) == 0) {
		const char *end = strstr(p, "\r\n\r\n");
		const char *cl = strstr(p, "\r\nContent-Length: ");

		out[n++] = (int)strtol(p + 9, NULL, 10);
		if (end == NULL || cl == NULL || cl > end)
			break;
		p = end + 4 + strtol(cl + 18, NULL, 10);
	}
	return n;
}

/*
 * Sends the n bytes of req on a fresh connection and reads until the
 * api closes it, within the api's longest read deadline and SLACK_MS.
 * Asserts it did close, and that its only answer (or its last, when
 * answers is 2: a request sent behind the first) is a 4xx, which it
 * returns.
 */
static int
refused(const struct hf_env *e, const char *what, const char *req, size_t n,
    int answers)
{
	int fd = raw_connect(e), st[4], got;
	bool eof;

	send_some(fd, req, n);
	raw_read_until(fd, answer, sizeof(answer), NULL,
	    CM_HTTP_BODY_TIMEOUT_MS + SLACK_MS, &eof);
	close(fd);
	cr_assert(
	    eof, "%s: the connection was never closed (%.60s)", what, answer);
	got = statuses(answer, st, 4);
	cr_assert_eq(got, answers, "%s: %d answers, want %d: %.200s", what, got,
	    answers, answer);
	cr_assert(st[got - 1] >= 400 && st[got - 1] < 500, "%s: %d, want a 4xx",
	    what, st[got - 1]);
	cr_assert_not_null(strstr(answer, "{\"error\":{\"code\":"),
	    "%s: no error body: %.200s", what, answer);
	return st[got - 1];
}

/* refused() with a head given as text, and one answer. */
static int
refused_text(const struct hf_env *e, const char *req)
{
	return refused(e, req, req, strlen(req), 1);
}

/* A spaced of its own (tag) answers each of heads with status, and lives
 * on (what: the case, for messages). */
static void
each_refused(
    const char *tag, const char *const *heads, int status, const char *what)
{
	pid_t pid;

	hf_start(&env, tag, 1, NULL);
	pid = api_pid(&env);
	for (size_t i = 0; heads[i] != NULL; i++)
		cr_assert_eq(
		    refused_text(&env, heads[i]), status, "%s", heads[i]);
	still_up(&env, pid, what);
	hf_stop(&env);
}

/* ---- a siege ------------------------------------------------------- */

Test(hostile, slow_and_idle_connections_leave_a_space_answering,
    .fini = tk_cleanup)
{
	static struct hf_env e;
	char space[CM_ID_MAX + 1], path[1024];
	struct tk_siege_stats st;
	struct tk_siege *s;
	struct rlimit rl;
	int64_t t_end, ns, worst = 0;
	long n_get = 0;
	pid_t pid;

	/* spaced (its cap follows the open-file limit) and this test each
	 * hold every siege connection. */
	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < N_SLOW + N_IDLE + 1024) {
		cr_assert_geq(rl.rlim_max, (rlim_t)N_SLOW + N_IDLE + 1024,
		    "the hard open-file limit is too low for the siege");
		rl.rlim_cur = N_SLOW + N_IDLE + 1024;
		cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	hf_start(&e, "hostile-siege", 1, NULL);
	hf_create_ok(&e, 0, NULL, space);
	hf_path(&e, path, sizeof(path), NULL, space, NULL);
	pid = api_pid(&e);

	cr_assert_not_null(s = tk_siege_start(&e.sf.p, N_SLOW, N_IDLE));
	for (int64_t until = cm_mono_ms() + SIEGE_OPEN_MS;
	     tk_siege_open(s) < N_SLOW + N_IDLE;) {
		int status = tk_http_get_within(
		    &e.sf.p, path, e.manager, ANSWER_MS, &ns);

		cr_assert_eq(status, 200,
		    "GET of the Space while the siege "
		    "opened: %d",
		    status);
		cr_assert_lt(cm_mono_ms(), until, "only %d connections open",
		    tk_siege_open(s));
	}
	/* The well-behaved client, one request after another. */
	for (t_end = cm_mono_ms() + SIEGE_RUN_MS; cm_mono_ms() < t_end;
	     n_get++) {
		int status = tk_http_get_within(
		    &e.sf.p, path, e.manager, ANSWER_MS, &ns);

		cr_assert_eq(status, 200,
		    "GET of the Space %ld under siege: %d after %lld ms (want "
		    "200 within %d ms)",
		    n_get, status, (long long)(ns / 1000000), ANSWER_MS);
		worst = ns > worst ? ns : worst;
	}
	cr_assert_geq(tk_siege_open(s), N_SLOW + N_IDLE / 2,
	    "the siege lost its connections");
	tk_siege_stop(s, &st);
	cr_log_info("siege: %ld GETs, the slowest %lld us; %ld connections "
	            "opened, %ld closed by the api (%ld with an answer), %d "
	            "open at once",
	    n_get, (long long)(worst / 1000), st.opened, st.closed, st.answered,
	    st.open_max);
	/* It was a siege: every slow head was cut by its deadline, and told
	 * so (408), while the client went on. */
	cr_assert_geq(st.open_max, N_SLOW + N_IDLE);
	cr_assert_geq(st.answered, N_SLOW / 2,
	    "only %ld slow connections "
	    "were cut with an answer",
	    st.answered);
	still_up(&e, pid, "the siege");
	hf_stop(&e);
}

/* ---- bodies -------------------------------------------------------- */

Test(hostile, a_body_too_large_is_413, .fini = tk_cleanup)
{
	enum { BIG = CM_BODY_MAX + 4096 };
	static char req[BIG + 1024];
	size_t n;
	pid_t pid;

	hf_start(&env, "hostile-big", 1, NULL);
	pid = api_pid(&env);
	/* Declared and sent: refused on its Content-Length. */
	n = (size_t)snprintf(req, sizeof(req),
	    "POST /api/v1/workspaces/%s/browser-spaces HTTP/1.1\r\nHost: t\r\n"
	    "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n",
	    hf_ws(&env), BIG);
	memset(req + n, ' ', BIG);
	cr_assert_eq(refused(&env, "a body over 64 KiB", req, n + BIG, 1), 413);
	/* Sent with no Content-Length: no body, so it is read as the next
	 * request, whose line is too long. */
	n = (size_t)snprintf(
	    req, sizeof(req), "POST /healthz HTTP/1.1\r\nHost: t\r\n\r\n");
	memset(req + n, 'a', BIG);
	cr_assert_eq(refused(&env, "an undeclared body", req, n + BIG, 2), 414);
	still_up(&env, pid, "large bodies");
	hf_stop(&env);
}

Test(hostile, a_body_declared_too_large_is_413_at_once, .fini = tk_cleanup)
{
	static const char *const heads[] = {
	    "POST /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: "
	    "65537\r\n\r\n",
	    "POST /healthz HTTP/1.1\r\nHost: t\r\n"
	    "Content-Length: 999999999999999999\r\n\r\n",
	    /* No 100 Continue for a body that will not be taken. */
	    "POST /healthz HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\n"
	    "Content-Length: 1000000\r\n\r\n",
	    NULL};
	pid_t pid;

	hf_start(&env, "hostile-declared", 1, NULL);
	pid = api_pid(&env);
	for (size_t i = 0; heads[i] != NULL; i++) {
		cr_assert_eq(refused_text(&env, heads[i]), 413, "%s", heads[i]);
		cr_assert_null(strstr(answer, "100 Continue"), "%s", heads[i]);
	}
	/* Past 18 digits it is no length at all. */
	cr_assert_eq(refused_text(&env, "POST /healthz HTTP/1.1\r\nHost: t\r\n"
	                                "Content-Length: "
	                                "99999999999999999999999\r\n\r\n"),
	    400);
	still_up(&env, pid, "declared bodies");
	hf_stop(&env);
}

Test(hostile, a_chunked_body_is_400_at_once, .fini = tk_cleanup)
{
	static const char *const heads[] = {
	    /* A chunk, and never the last one. */
	    "POST /healthz HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked"
	    "\r\n\r\n5\r\nhello\r\n",
	    "POST /healthz HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, "
	    "chunked\r\n\r\nffffffff\r\n",
	    "POST /healthz HTTP/1.1\r\nHost: t\r\ntransfer-encoding: CHUNKED"
	    "\r\n\r\n",
	    NULL};

	each_refused("hostile-chunked", heads, 400, "chunked bodies");
}

Test(hostile, a_content_length_that_lies_short_ends_in_400, .fini = tk_cleanup)
{
	static const char req[] =
	    "POST /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n"
	    "{}\"request_id\": \"x\"}\r\n\r\n";
	int st[4];
	pid_t pid;

	hf_start(&env, "hostile-short", 1, NULL);
	pid = api_pid(&env);
	/* The first two bytes are the body; the rest is a request line that
	 * is none. */
	cr_assert_eq(
	    refused(&env, "a short Content-Length", req, sizeof(req) - 1, 2),
	    400);
	statuses(answer, st, 4);
	cr_assert_eq(st[0], 405, "POST /healthz with its 2 bytes: %d", st[0]);
	still_up(&env, pid, "a short Content-Length");
	hf_stop(&env);
}

Test(hostile, a_content_length_that_lies_long_ends_in_408, .fini = tk_cleanup)
{
	char req[1024];
	pid_t pid;

	hf_start(&env, "hostile-long", 1, NULL);
	pid = api_pid(&env);
	snprintf(req, sizeof(req),
	    "POST /api/v1/workspaces/%s/browser-spaces HTTP/1.1\r\nHost: t\r\n"
	    "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
	    "Content-Length: 100\r\n\r\n{}",
	    hf_ws(&env), env.manager);
	/* The rest never comes: the body's deadline answers. */
	cr_assert_eq(refused_text(&env, req), 408);
	still_up(&env, pid, "a long Content-Length");
	hf_stop(&env);
}

Test(hostile, two_content_lengths_are_400, .fini = tk_cleanup)
{
	static const char *const heads[] = {
	    "POST /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n"
	    "Content-Length: 2\r\n\r\n{}",
	    "POST /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n"
	    "Content-Length: 30\r\n\r\n{}",
	    "POST /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 30\r\n"
	    "content-length: 2\r\n\r\n{}",
	    "POST /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 2, "
	    "2\r\n\r\n{}",
	    NULL};

	each_refused("hostile-two-cl", heads, 400, "two Content-Lengths");
}

Test(hostile, transfer_encoding_with_content_length_is_400, .fini = tk_cleanup)
{
	static const char *const heads[] = {
	    "POST /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	    "POST /healthz HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: "
	    "chunked\r\n"
	    "Content-Length: 5\r\n\r\n0\r\n\r\n",
	    "POST /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n"
	    "Transfer-Encoding: identity\r\n\r\nhello",
	    NULL};

	each_refused("hostile-te-cl", heads, 400,
	    "Transfer-Encoding with Content-Length");
}

/* ---- heads --------------------------------------------------------- */

Test(hostile, header_floods_are_431, .fini = tk_cleanup)
{
	enum { MANY = 5000, HUGE = 1024 * 1024 };
	static char req[HUGE + 1024];
	size_t n;
	pid_t pid;

	hf_start(&env, "hostile-flood", 1, NULL);
	pid = api_pid(&env);
	/* Many small fields. */
	n = (size_t)snprintf(req, sizeof(req), "GET /healthz HTTP/1.1\r\n");
	for (int i = 0; i < MANY; i++)
		n += (size_t)snprintf(
		    req + n, sizeof(req) - n, "X-F%d: v\r\n", i);
	n += (size_t)snprintf(req + n, sizeof(req) - n, "\r\n");
	cr_assert_eq(refused(&env, "5,000 header fields", req, n, 1), 431);
	/* One field of a MiB. */
	n = (size_t)snprintf(req, sizeof(req), "GET /healthz HTTP/1.1\r\nX: ");
	memset(req + n, 'h', HUGE);
	n += HUGE;
	n += (size_t)snprintf(req + n, sizeof(req) - n, "\r\n\r\n");
	cr_assert_eq(refused(&env, "a 1 MiB header field", req, n, 1), 431);
	/* Many fields within the bound are a request like another. */
	n = (size_t)snprintf(req, sizeof(req), "GET /healthz HTTP/1.1\r\n");
	for (int i = 0; i < 500; i++)
		n +=
		    (size_t)snprintf(req + n, sizeof(req) - n, "X%d: v\r\n", i);
	n += (size_t)snprintf(
	    req + n, sizeof(req) - n, "Connection: close\r\n\r\n");
	cr_assert_eq(raw_status(&env, req, n, ANSWER_MS), 200);
	still_up(&env, pid, "header floods");
	hf_stop(&env);
}

Test(hostile, malformed_request_lines_are_400, .fini = tk_cleanup)
{
	static const char *const heads[] = {"GET\r\n\r\n", "GET /\r\n\r\n",
	    "\r\n\r\n", " GET /healthz HTTP/1.1\r\n\r\n",
	    "GET  /healthz HTTP/1.1\r\n\r\n",
	    "GET /healthz HTTP/1.1 extra\r\n\r\n",
	    "GET /healthz  HTTP/1.1\r\n\r\n", "GET\t/healthz HTTP/1.1\r\n\r\n",
	    "GET /healthz FTP/1.1\r\n\r\n", "GET /healthz HTTP/2\r\n\r\n",
	    "GET /healthz HTTP/1.1x\r\n\r\n", "GET /healthz http/1.1\r\n\r\n",
	    "G(T /healthz HTTP/1.1\r\n\r\n", "GET healthz HTTP/1.1\r\n\r\n",
	    "GET * HTTP/1.1\r\n\r\n",
	    "GET http://127.0.0.1/healthz HTTP/1.1\r\n\r\n",
	    "GET /heal thz HTTP/1.1\r\n\r\n",
	    "GET /healthz HTTP/1.1\r\n: empty name\r\n\r\n",
	    "GET /healthz HTTP/1.1\r\nNo-Colon\r\n\r\n",
	    "GET /healthz HTTP/1.1\r\nHost : t\r\n\r\n",
	    "GET /healthz HTTP/1.1\r\nHost: t\r\n folded\r\n\r\n", NULL};
	/* A TLS ClientHello's first bytes: no line end ever comes, so the
	 * head's deadline answers. */
	static const char tls[] =
	    "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03";
	pid_t pid;

	hf_start(&env, "hostile-lines", 1, NULL);
	pid = api_pid(&env);
	for (size_t i = 0; heads[i] != NULL; i++)
		cr_assert_eq(refused_text(&env, heads[i]), 400, "%s", heads[i]);
	cr_assert_eq(
	    refused(&env, "a TLS hello", tls, sizeof(tls) - 1, 1), 408);
	still_up(&env, pid, "malformed request lines");
	hf_stop(&env);
}

/*
 * A NUL, a bare CR or a bare LF inside a field ends the line for some
 * parsers: a Content-Length behind one is a body to them and nothing
 * here, or the other way round, and a request rides in the body.  Each
 * is 400, answered once: the request behind it is never answered.
 */
Test(hostile, control_characters_in_a_head_are_400, .fini = tk_cleanup)
{
	static const char *const seps[] = {"\0", "\n", "\r", "\x0b", NULL};
	static const char hidden[] = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";
	char req[512];
	size_t n;
	pid_t pid;

	hf_start(&env, "hostile-ctl", 1, NULL);
	pid = api_pid(&env);
	for (size_t i = 0; seps[i] != NULL; i++) {
		n = (size_t)snprintf(req, sizeof(req),
		    "POST /healthz HTTP/1.1\r\nHost: t\r\nX-A: a");
		req[n++] = seps[i][0];
		n += (size_t)snprintf(req + n, sizeof(req) - n,
		    "Content-Length: %zu\r\n\r\n%s", sizeof(hidden) - 1,
		    hidden);
		cr_assert_eq(
		    refused(&env, "a control character in a field", req, n, 1),
		    400, "separator %zu", i);
		cr_assert_null(strstr(answer, "\"status\":\"ok\""),
		    "separator %zu: the hidden request was answered", i);
	}
	/* In the request line. */
	n = (size_t)snprintf(req, sizeof(req), "GET /healthz");
	req[n++] = '\0';
	n += (size_t)snprintf(req + n, sizeof(req) - n, " HTTP/1.1\r\n\r\n");
	cr_assert_eq(refused(&env, "a NUL in the target", req, n, 1), 400);
	cr_assert_eq(
	    refused_text(&env, "GET /healthz\x1b[2J HTTP/1.1\r\n\r\n"), 400);
	still_up(&env, pid, "control characters");
	hf_stop(&env);
}

/* ---- what a body and a path say ----------------------------------- */

/* POST body to path as token; asserts status and error code. */
static void
post_expect(
    const char *path, const char *body, size_t n, int status, const char *code)
{
	static char req[ANSWER_CAP];
	size_t len;

	len = (size_t)snprintf(req, sizeof(req),
	    "POST %s HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n"
	    "Connection: close\r\n\r\n",
	    path, env.manager, n);
	cr_assert_lt(len + n, sizeof(req));
	memcpy(req + len, body, n);
	cr_assert_eq(refused(&env, body, req, len + n, 1), status,
	    "%.80s: %.300s", body, answer);
	cr_assert_not_null(strstr(answer, code), "%.80s: %.300s", body, answer);
}

Test(hostile, bad_utf8_in_the_path_and_in_json_is_4xx, .fini = tk_cleanup)
{
	static const char *const paths[] = {
	    "/api/v1/workspaces/\xff\xfe/browser-spaces",
	    "/api/v1/workspaces/%ff%fe/browser-spaces",
	    "/api/v1/workspaces/\xc0\xae\xc0\xae/browser-spaces",
	    "/console/\xed\xa0\x80", "/\xf8\x88\x80\x80\x80", NULL};
	static const char *const bodies[] = {"{\"owner_id\": \"\xff\"}",
	    "{\"owner_id\": \"\xc0\xae\"}", "{\"owner_id\": \"\xed\xa0\x80\"}",
	    "{\"\xfe\": 1}", "{\"owner_id\": \"\\ud800\"}",
	    "{\"owner_id\": \"a\xe2\x82\"}", NULL};
	char path[1024], req[2048];
	pid_t pid;

	hf_start(&env, "hostile-utf8", 1, NULL);
	pid = api_pid(&env);
	for (size_t i = 0; paths[i] != NULL; i++) {
		snprintf(req, sizeof(req),
		    "GET %s HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
		    "Connection: close\r\n\r\n",
		    paths[i], env.manager);
		refused_text(&env, req);
	}
	hf_path(&env, path, sizeof(path), NULL, NULL, NULL);
	for (size_t i = 0; bodies[i] != NULL; i++)
		post_expect(
		    path, bodies[i], strlen(bodies[i]), 422, "invalid_request");
	still_up(&env, pid, "bad UTF-8");
	hf_stop(&env);
}

Test(hostile, json_nested_deep_is_refused, .fini = tk_cleanup)
{
	enum { DEEP = 100000, FITS = 30000 };
	static char body[2 * DEEP + 64];
	char space[CM_ID_MAX + 1], path[1024];
	size_t n;
	pid_t pid;

	hf_start(&env, "hostile-deep", 1, NULL);
	pid = api_pid(&env);
	hf_create_ok(&env, 0, NULL, space);
	hf_path(&env, path, sizeof(path), NULL, space, "/tasks");
	/* 100,000 deep cannot fit in a body. */
	memset(body, '[', DEEP);
	memset(body + DEEP, ']', DEEP);
	post_expect(path, body, 2 * DEEP, 413, "payload_too_large");
	/* 30,000 deep fits, and is refused before any parser recurses. */
	n = (size_t)snprintf(body, sizeof(body),
	    "{\"request_id\": \"deep\", \"capability\": \"noop\", \"args\": ");
	memset(body + n, '[', FITS);
	memset(body + n + FITS, ']', FITS);
	n += 2 * FITS;
	body[n++] = '}';
	post_expect(path, body, n, 422, "invalid_request");
	/* So is one level past the bound, in args as in the body. */
	n = (size_t)snprintf(body, sizeof(body),
	    "{\"request_id\": \"deep\", \"capability\": \"noop\", \"args\": ");
	for (int i = 0; i < CM_JSON_DEPTH_MAX; i++)
		n += (size_t)snprintf(body + n, sizeof(body) - n, "{\"a\": ");
	n += (size_t)snprintf(body + n, sizeof(body) - n, "1");
	for (int i = 0; i < CM_JSON_DEPTH_MAX; i++)
		body[n++] = '}';
	body[n++] = '}';
	post_expect(path, body, n, 422, "invalid_request");
	still_up(&env, pid, "deep JSON");
	hf_stop(&env);
}

Test(hostile, nul_inside_json_strings_is_422, .fini = tk_cleanup)
{
	char space[CM_ID_MAX + 1], path[1024], tasks[1024], body[1024];
	pid_t pid;
	/* Where a NUL goes in a create body: owner_id, the instance id,
	 * owner_type, a key. */
	static const char *const create[][4] = {
	    {"", "\\u0000x", "", ""},
	    {"\\u0000", "", "", ""},
	    {"", "", "\\u0000", ", \"\\u0000\": 1"},
	};
	static const char *const submit[] = {
	    "{\"request_id\": \"a\\u0000b\", \"capability\": \"noop\"}",
	    "{\"request_id\": \"n1\", \"capability\": \"noop\\u0000\"}",
	    "{\"request_id\": \"n2\", \"capability\": \"navigate\", "
	    "\"args\": {\"url\": \"http://127.0.0.1/\\u0000.evil\"}}",
	    "{\"request_id\": \"n3\", \"capability\": \"noop\", "
	    "\"args\": {\"k\\u0000\": 1}}",
	    NULL};

	hf_start(&env, "hostile-nul", 1, NULL);
	pid = api_pid(&env);
	hf_path(&env, path, sizeof(path), NULL, NULL, NULL);
	for (size_t i = 0; i < sizeof(create) / sizeof(create[0]); i++) {
		snprintf(body, sizeof(body),
		    "{\"browser_instance_id\": \"%s%s\", \"owner_type\": "
		    "\"operator%s\", \"owner_id\": \"%s%s\"%s}",
		    env.sf.w.instance_id[0], create[i][0], create[i][2],
		    env.sf.w.operator_id, create[i][1], create[i][3]);
		post_expect(path, body, strlen(body), 422, "invalid_request");
	}
	hf_create_ok(&env, 0, NULL, space);
	hf_path(&env, tasks, sizeof(tasks), NULL, space, "/tasks");
	for (size_t i = 0; submit[i] != NULL; i++)
		post_expect(tasks, submit[i], strlen(submit[i]), 422,
		    "invalid_request");
	still_up(&env, pid, "NUL in JSON");
	hf_stop(&env);
}

/* ---- path traversal ------------------------------------------------ */

/* The ways a path can say "..", "/" or "\" that a server might decode. */
static const char *const dots[] = {"..", "%2e%2e", "%2E%2E", ".%2e", "%2e.",
    "%252e%252e", "%c0%ae%c0%ae", "\xc0\xae\xc0\xae", "%e0%80%ae%e0%80%ae",
    "%ef%bc%8e%ef%bc%8e", "%u002e%u002e", "..\\", "..%5c", "..%255c", "....",
    "..;", NULL};
static const char *const slashes[] = {
    "/", "%2f", "%2F", "%252f", "%c0%af", "\\", "%5c", "//", NULL};

/* GET target (raw, n bytes) as token: 404 or 400, and nothing served of
 * a file, the console or an artifact. */
static void
no_way_out(const char *target, size_t n, const char *token)
{
	char req[4096];
	size_t len;
	int st;

	len = (size_t)snprintf(req, sizeof(req), "GET ");
	cr_assert_lt(len + n + 300, sizeof(req));
	memcpy(req + len, target, n);
	len += n;
	len += (size_t)snprintf(req + len, sizeof(req) - len,
	    " HTTP/1.1\r\nHost: t\r\n%s%s%sConnection: close\r\n\r\n",
	    token ? "Authorization: Bearer " : "", token ? token : "",
	    token ? "\r\n" : "");
	st = refused(&env, target, req, len, 1);
	cr_assert(st == 404 || st == 400, "%.*s: %d", (int)n, target, st);
	cr_assert_null(strstr(answer, "root:"), "%.*s", (int)n, target);
	cr_assert_null(strstr(answer, "\x89PNG"), "%.*s", (int)n, target);
	cr_assert_null(strstr(answer, "<html"), "%.*s", (int)n, target);
	cr_assert_null(strstr(answer, "use strict"), "%.*s", (int)n, target);
}

/* Every dot-dot and slash after prefix, walking up to /etc/passwd and
 * to a file the route does serve (known). */
static void
every_encoding(const char *prefix, const char *known, const char *token)
{
	char target[2048];

	for (size_t d = 0; dots[d] != NULL; d++)
		for (size_t s = 0; slashes[s] != NULL; s++) {
			snprintf(target, sizeof(target),
			    "%s%s%s%s%s%s%s%s%setc%spasswd", prefix, dots[d],
			    slashes[s], dots[d], slashes[s], dots[d],
			    slashes[s], dots[d], slashes[s], slashes[s]);
			no_way_out(target, strlen(target), token);
			snprintf(target, sizeof(target), "%s%s%s%s", prefix,
			    dots[d], slashes[s], known);
			no_way_out(target, strlen(target), token);
		}
}

Test(hostile, the_console_serves_no_path_outside, .fini = tk_cleanup)
{
	static const char nul[] = "/console/app.js\0../../etc/passwd";
	static const char app[] = "GET /console/app.js HTTP/1.1\r\nHost: t\r\n"
	                          "Connection: close\r\n\r\n";
	static const char *const more[] = {"/console/%00",
	    "/console/app.js%00.png", "/console/\\etc\\passwd",
	    "/console//etc/passwd", "/console/%2fetc%2fpasswd", NULL};
	pid_t pid;

	hf_start(&env, "hostile-console", 1, NULL);
	pid = api_pid(&env);
	/* The console is there: what follows are refusals. */
	cr_assert_eq(raw_status(&env, app, strlen(app), ANSWER_MS), 200);
	every_encoding("/console/", "app.js", NULL);
	every_encoding("/console/app.js/", "index.html", NULL);
	for (size_t i = 0; more[i] != NULL; i++)
		no_way_out(more[i], strlen(more[i]), NULL);
	no_way_out(nul, sizeof(nul) - 1, NULL);
	still_up(&env, pid, "console traversal");
	hf_stop(&env);
}

Test(hostile, the_artifact_route_serves_nothing_else, .fini = tk_cleanup)
{
	char space[CM_ID_MAX + 1], task[CM_ID_MAX + 1], base[1024];
	char target[2048], *body = NULL, *head = NULL;
	size_t len = 0;
	json_t *res = NULL;
	pid_t pid;

	hf_start(&env, "hostile-artifact", 1, NULL);
	pid = api_pid(&env);
	hf_create_ok(&env, 0, "[\"screenshot\"]", space);
	cr_assert_eq(hf_submit(&env, env.manager, space, "?wait=10", "shot",
	                 "screenshot", "{\"format\": \"png\"}", &res, task),
	    200);
	json_decref(res);
	/* The artifact is there: what follows are refusals. */
	hf_path(&env, base, sizeof(base), NULL, space, "/tasks/");
	snprintf(target, sizeof(target), "%s%s/artifacts/screenshot.png", base,
	    task);
	cr_assert_eq(
	    tk_http_bytes(&env.sf.p, target, env.manager, &body, &len, &head),
	    200);
	free(body);
	free(head);
	snprintf(target, sizeof(target), "%s%s/artifacts/", base, task);
	every_encoding(target, "screenshot.png", env.manager);
	/* Climbing out of the task to another place in the tree. */
	snprintf(target, sizeof(target), "%s%s/artifacts/../../%s", base, task,
	    task);
	no_way_out(target, strlen(target), env.manager);
	snprintf(target, sizeof(target), "%s../%s/artifacts/screenshot.png",
	    base, task);
	no_way_out(target, strlen(target), env.manager);
	snprintf(target, sizeof(target), "%s%s/artifacts/screenshot.png%%00",
	    base, task);
	no_way_out(target, strlen(target), env.manager);
	snprintf(target, sizeof(target), "%s%s/artifacts/.screenshot.png", base,
	    task);
	no_way_out(target, strlen(target), env.manager);
	still_up(&env, pid, "artifact traversal");
	hf_stop(&env);
}

/* ---- tokens -------------------------------------------------------- */

static int
get_as(const char *path, const char *token)
{
	return hf_call(&env, "GET", path, token, NULL, NULL);
}

Test(hostile, tokens_a_late_byte_apart_are_refused, .fini = tk_cleanup)
{
	char path[1024], bad[CM_TOKEN_MAX + 2];
	size_t n;
	pid_t pid;

	hf_start(&env, "hostile-late", 1, NULL);
	pid = api_pid(&env);
	n = strlen(env.manager);
	hf_path(&env, path, sizeof(path), NULL, NULL, NULL);
	cr_assert_eq(get_as(path, env.manager), 200);
	/* Each byte from the middle to the last, changed. */
	for (size_t i = n / 2; i < n; i++) {
		snprintf(bad, sizeof(bad), "%s", env.manager);
		bad[i] = bad[i] == 'A' ? 'B' : 'A';
		cr_assert_eq(get_as(path, bad), 401, "byte %zu changed", i);
	}
	/* One byte more, one less, the last one's case (or, for a digit or a
	 * sign, the next one). */
	snprintf(bad, sizeof(bad), "%sA", env.manager);
	cr_assert_eq(get_as(path, bad), 401);
	snprintf(bad, sizeof(bad), "%.*s", (int)n - 1, env.manager);
	cr_assert_eq(get_as(path, bad), 401);
	snprintf(bad, sizeof(bad), "%s", env.manager);
	bad[n - 1] = isalpha((unsigned char)bad[n - 1])
	                 ? (char)(bad[n - 1] ^ 0x20)
	                 : (char)(bad[n - 1] == '9' ? '0' : bad[n - 1] + 1);
	cr_assert_eq(get_as(path, bad), 401);
	/* And the real one still works after them all. */
	cr_assert_eq(get_as(path, env.manager), 200);
	still_up(&env, pid, "near tokens");
	hf_stop(&env);
}

struct deny_wait {
	const char *path, *token;
	int status;
	int64_t at; /* when the refusal had come */
};

static bool
denied(void *arg)
{
	struct deny_wait *w = arg;

	w->status = get_as(w->path, w->token);
	w->at = cm_mono_ms();
	return w->status == 401 || w->status == 403 || w->status == 404;
}

/*
 * Polls until the path is refused to token, the refusal in hand within
 * DENY_MS of t0 (when the token was last let in, before the change).
 */
static void
denied_within(const char *what, const char *path, const char *token, int64_t t0)
{
	struct deny_wait w = {path, token, 0, 0};
	int64_t left = t0 + DENY_MS - cm_mono_ms();

	cr_assert(left > 0 && tk_wait_until(denied, &w, (int)left) &&
	              w.at - t0 <= DENY_MS,
	    "%s: %d %lld ms after it was last let in (want a refusal within "
	    "%d ms)",
	    what, w.status, (long long)(w.at - t0), DENY_MS);
	cr_log_info("%s: refused %lld ms after it was last let in", what,
	    (long long)(w.at - t0));
}

/* A principal in the world's workspace, with a fresh token through the
 * store (no request of the api has seen it yet); its ids go to id and
 * token_id. */
static void
fresh_member(const char *name, char *id, char *token, char *token_id)
{
	char hash[CM_TOKEN_HASH_LEN];
	struct pr_req q;
	struct pr_rep r;

	af_principal(&env.af, "operator", name, id);
	af_member_put(&env.af, hf_ws(&env), id, "manager");
	cm_token_new(token);
	cr_assert_eq(cm_token_hash(token, strlen(token), hash), 0);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_TOKEN_ISSUE;
	q.principal_id = id;
	q.token_hash = hash;
	cr_assert_eq(tk_call(env.sf.s, &q, &r), CM_OK);
	cr_assert_eq(r.err, CM_OK);
	snprintf(token_id, CM_ID_MAX + 1, "%s", r.tokens[0].token_id);
	pr_rep_free(&r);
}

/* The store's answer to q, which must be CM_OK. */
static void
store_ok(struct pr_req *q)
{
	struct pr_rep r;

	cr_assert_eq(tk_call(env.sf.s, q, &r), CM_OK);
	cr_assert_eq(r.err, CM_OK, "%s", r.msg ? r.msg : "");
	pr_rep_free(&r);
}

Test(hostile, a_revoked_token_is_refused_within_a_second, .fini = tk_cleanup)
{
	char id[CM_ID_MAX + 1], token[CM_TOKEN_LEN], token_id[CM_ID_MAX + 1];
	char path[1024], del[256];
	struct pr_req q;
	int64_t t0;

	hf_start(&env, "hostile-revoke", 1, NULL);
	hf_path(&env, path, sizeof(path), NULL, NULL, NULL);
	/* Revoked behind the api's back, as another api process would: its
	 * first use, just before, is what the api remembers. */
	fresh_member("elsewhere", id, token, token_id);
	t0 = cm_mono_ms();
	cr_assert_eq(get_as(path, token), 200);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_TOKEN_REVOKE;
	q.token_id = token_id;
	store_ok(&q);
	denied_within("a token revoked in the store", path, token, t0);
	/* Revoked through this api. */
	fresh_member("here", id, token, token_id);
	cr_assert_eq(get_as(path, token), 200);
	t0 = cm_mono_ms();
	snprintf(del, sizeof(del), "/api/v1/admin/tokens/%s", token_id);
	cr_assert_eq(
	    hf_call(&env, "DELETE", del, env.af.admin, NULL, NULL), 200);
	denied_within("a token revoked through the api", path, token, t0);
	hf_stop(&env);
}

Test(hostile, a_removed_membership_is_refused_within_a_second,
    .fini = tk_cleanup)
{
	char id[CM_ID_MAX + 1], token[CM_TOKEN_LEN], token_id[CM_ID_MAX + 1];
	char space[CM_ID_MAX + 1], list[1024], path[1024], del[512];
	struct pr_req q;
	int64_t t0;
	int st;

	hf_start(&env, "hostile-member", 1, NULL);
	/* A manager may read any Space of the workspace: the api decides
	 * that from the memberships the token resolved to. */
	hf_create_ok(&env, 0, NULL, space);
	hf_path(&env, path, sizeof(path), NULL, space, NULL);
	hf_path(&env, list, sizeof(list), NULL, NULL, NULL);
	fresh_member("elsewhere", id, token, token_id);
	t0 = cm_mono_ms();
	cr_assert_eq(get_as(path, token), 200);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_MEMBER_REMOVE;
	q.workspace_id = hf_ws(&env);
	q.principal_id = id;
	store_ok(&q);
	denied_within("a membership removed in the store", path, token, t0);
	st = get_as(list, token);
	cr_assert(st == 403 || st == 404, "the list: %d", st);
	fresh_member("here", id, token, token_id);
	cr_assert_eq(get_as(path, token), 200);
	t0 = cm_mono_ms();
	snprintf(del, sizeof(del), "/api/v1/admin/workspaces/%s/members/%s",
	    hf_ws(&env), id);
	cr_assert_eq(
	    hf_call(&env, "DELETE", del, env.af.admin, NULL, NULL), 200);
	denied_within("a membership removed through the api", path, token, t0);
	st = get_as(list, token);
	cr_assert(st == 403 || st == 404, "the list: %d", st);
	hf_stop(&env);
}
