/*
 * The HTTP front never stalls.  Each test holds an attack open on raw
 * sockets while a fresh client's GET /healthz must answer within 1 s:
 * bodies that never arrive, heads that never end, long polls, a burst of
 * event streams, more connections than the cap.  Then the bounds of a
 * request head, and a replay longer than any buffer.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "raw_fixture.h"

static void
open_many(const struct hf_env *e, int *fds, int n, const char *req)
{
	for (int i = 0; i < n; i++) {
		fds[i] = raw_connect(e);
		raw_send(fds[i], req, strlen(req));
	}
}

static void
close_many(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		close(fds[i]);
}

Test(http_front, bodies_that_never_arrive_hold_nothing, .fini = tk_cleanup)
{
	enum { N = 64 };
	static struct hf_env e;
	char path[1024], req[1400];
	int fds[N];

	hf_start(&e, "front-body", 1, NULL);
	hf_path(&e, path, sizeof(path), NULL, NULL, NULL);
	snprintf(req, sizeof(req),
	    "POST %s HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
	    "Content-Length: 1000\r\n\r\n{",
	    path);
	open_many(&e, fds, N, req);
	for (int i = 0; i < 3; i++)
		healthz_answers(&e, "64 stalled bodies");
	close_many(fds, N);
	hf_stop(&e);
}

Test(http_front, heads_that_never_end_are_closed, .fini = tk_cleanup)
{
	enum { N = 64 };
	static struct hf_env e;
	static char buf[4096];
	int fds[N];
	bool eof;

	static const char two[] = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"
	                          "GET /healthz HTTP/1.1\r\nHost: t\r\nX-S";

	hf_start(&e, "front-head", 1, NULL);
	open_many(&e, fds, N, "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Slow: ");
	for (int i = 0; i < 3; i++)
		healthz_answers(&e, "64 stalled heads");
	/* Each is closed once its head is late: an answer (408), then the
	 * end, well within the bound of a test. */
	for (int i = 0; i < N; i++) {
		raw_read_until(fds[i], buf, sizeof(buf), NULL,
		    CM_HTTP_HEAD_TIMEOUT_MS + 10000, &eof);
		cr_assert(eof, "a stalled head %d was never closed", i);
	}
	close_many(fds, N);
	/* A half head behind a whole request on the same connection: the
	 * answer, then a close once the head is late, before the idle bound. */
	fds[0] = raw_connect(&e);
	raw_send(fds[0], two, sizeof(two) - 1);
	raw_read_until(fds[0], buf, sizeof(buf), NULL,
	    CM_HTTP_HEAD_TIMEOUT_MS + 3000, &eof);
	cr_assert_eq(strncmp(buf, "HTTP/1.1 200 ", 13), 0, "%s", buf);
	cr_assert(eof, "a half head behind a request was never closed");
	close(fds[0]);
	hf_stop(&e);
}

Test(http_front, long_polls_are_parked, .fini = tk_cleanup)
{
	enum { N = 32 };
	static struct hf_env e;
	static char buf[8192];
	char space[CM_ID_MAX + 1], task[CM_ID_MAX + 1], path[1024];
	char body[256], req[2048], get[1400];
	int fds[N];
	bool eof;

	hf_start(&e, "front-wait", 1, NULL);
	hf_create_ok(&e, 0, NULL, space);
	cr_assert_eq(hf_submit(&e, e.manager, space, "", "long", "sleep",
	                 "{\"ms\": 5000}", NULL, task),
	    202);
	cr_assert(hf_wait_task(&e, space, task, "running"));
	/* The same request again, with ?wait=30: each waits for the task. */
	hf_path(&e, path, sizeof(path), NULL, space, "/tasks?wait=30");
	snprintf(body, sizeof(body),
	    "{\"request_id\": \"long\", \"capability\": \"sleep\", "
	    "\"args\": {\"ms\": 5000}}");
	snprintf(req, sizeof(req),
	    "POST %s HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
	    path, e.manager, strlen(body), body);
	open_many(&e, fds, N, req);
	healthz_answers(&e, "32 long polls");
	hf_path(&e, path, sizeof(path), NULL, space, NULL);
	snprintf(get, sizeof(get),
	    "GET %s HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
	    "Connection: close\r\n\r\n",
	    path, e.manager);
	cr_assert_eq(raw_status(&e, get, strlen(get), ANSWER_MS), 200,
	    "GET of the Space during 32 long polls");
	healthz_answers(&e, "32 long polls");
	/* They end with the task: 200 and the finished task. */
	for (int i = 0; i < N; i++) {
		raw_read_until(fds[i], buf, sizeof(buf), "\"completed\"",
		    HF_WAIT_MS, &eof);
		cr_assert_eq(strncmp(buf, "HTTP/1.1 200 ", 13), 0,
		    "long poll %d: %.40s", i, buf);
		cr_assert_not_null(strstr(buf, "\"completed\""));
	}
	close_many(fds, N);
	hf_stop(&e);
}

Test(http_front, a_burst_of_streams_stalls_nothing, .fini = tk_cleanup)
{
	enum { N = 32 };
	static struct hf_env e;
	static char buf[8192];
	char space[CM_ID_MAX + 1], path[1024], req[1400];
	int fds[N];
	bool eof;

	hf_start(&e, "front-sse", 1, NULL);
	hf_create_ok(&e, 0, NULL, space);
	hf_path(&e, path, sizeof(path), NULL, space, "/events");
	snprintf(req, sizeof(req),
	    "GET %s HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
	    "Accept: text/event-stream\r\n\r\n",
	    path, e.manager);
	open_many(&e, fds, N, req);
	healthz_answers(&e, "32 streams opening");
	for (int i = 0; i < N; i++) {
		raw_read_until(fds[i], buf, sizeof(buf), "event: space_opened",
		    HF_WAIT_MS, &eof);
		cr_assert_eq(strncmp(buf, "HTTP/1.1 200 ", 13), 0,
		    "stream %d: %.40s", i, buf);
		cr_assert_not_null(strstr(buf, "event: space_opened"),
		    "stream %d got no replay", i);
	}
	healthz_answers(&e, "32 streams open");
	close_many(fds, N);
	hf_stop(&e);
}

Test(http_front, connections_past_the_cap_are_refused, .fini = tk_cleanup)
{
	enum { LIMIT = 400, N = LIMIT - CM_HTTP_FD_RESERVE + 24 };
	static struct hf_env e;
	static char buf[4096];
	struct rlimit old, low;
	int fds[N], refused = 0;
	const char *body;
	json_t *ans;
	bool eof;

	/* spaced and its children inherit an open-file limit that puts the
	 * api's cap at LIMIT - CM_HTTP_FD_RESERVE. */
	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
	cr_assert_geq(old.rlim_max, (rlim_t)N + 64);
	low = old;
	low.rlim_cur = LIMIT;
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	hf_start(&e, "front-cap", 1, NULL);
	low.rlim_cur =
	    (rlim_t)N + 64 > old.rlim_cur ? (rlim_t)N + 64 : old.rlim_cur;
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);

	for (int i = 0; i < N; i++)
		fds[i] = raw_connect(&e);
	/* The ones past the cap hear why, and are closed. */
	for (int i = 0; i < N; i++) {
		struct pollfd pfd = {fds[i], POLLIN, 0};

		if (poll(&pfd, 1, i < N - 24 ? 0 : 2000) <= 0)
			continue;
		raw_read_until(fds[i], buf, sizeof(buf), NULL, 2000, &eof);
		cr_assert_eq(strncmp(buf, "HTTP/1.1 503 ", 13), 0,
		    "connection %d: %.60s", i, buf);
		cr_assert(eof);
		body = strstr(buf, "\r\n\r\n");
		cr_assert_not_null(body, "connection %d: no body", i);
		ans = json_loads(body + 4, 0, NULL);
		cr_assert_str_eq(af_error_code(ans) ? af_error_code(ans) : "",
		    "overloaded", "connection %d: %s", i, body + 4);
		cr_assert(json_is_true(json_object_get(
		    json_object_get(ans, "error"), "retryable")));
		json_decref(ans);
		refused++;
	}
	cr_assert_geq(refused, 24, "only %d connections refused", refused);
	close_many(fds, N);
	/* Once they are gone, the front answers again. */
	for (int i = 0; i < 50; i++) {
		static const char req[] = "GET /healthz HTTP/1.1\r\nHost: t\r\n"
		                          "Connection: close\r\n\r\n";

		if (raw_status(&e, req, sizeof(req) - 1, ANSWER_MS) == 200)
			break;
		cr_assert_lt(i, 49, "healthz never came back");
	}
	healthz_answers(&e, "after the cap");
	hf_stop(&e);
}

Test(http_front, heads_are_bounded_with_an_answer, .fini = tk_cleanup)
{
	static struct hf_env e;
	static char big[120 * 1024];
	size_t n;
	int status;

	hf_start(&e, "front-bounds", 1, NULL);
	/* A header field over 8 KiB: 431. */
	n = (size_t)snprintf(
	    big, sizeof(big), "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Big: ");
	memset(big + n, 'a', 9000);
	n += 9000;
	n += (size_t)snprintf(big + n, sizeof(big) - n, "\r\n\r\n");
	status = raw_status(&e, big, n, 5000);
	cr_assert_eq(status, 431, "a 9000-byte header: %d", status);
	/* A URL over the bound, and one of 100 KB: 414. */
	for (size_t len = CM_URL_MAX + 100; len <= 100 * 1024;
	     len = 100 * 1024) {
		n = (size_t)snprintf(big, sizeof(big), "GET /healthz?a=");
		memset(big + n, 'b', len);
		n += len;
		n += (size_t)snprintf(
		    big + n, sizeof(big) - n, " HTTP/1.1\r\nHost: t\r\n\r\n");
		status = raw_status(&e, big, n, 5000);
		cr_assert_eq(status, 414, "a %zu-byte URL: %d", len, status);
		if (len == 100 * 1024)
			break;
	}
	/* Content-Length is digits only. */
	n = (size_t)snprintf(big, sizeof(big),
	    "POST /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: +10\r\n\r\n"
	    "0123456789");
	status = raw_status(&e, big, n, 5000);
	cr_assert(
	    status >= 400 && status < 500, "Content-Length +10: %d", status);
	healthz_answers(&e, "after the bounds");
	hf_stop(&e);
}

/* Occurrences of needle in hay. */
static int
count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

Test(http_front, keep_alive_then_an_idle_close, .fini = tk_cleanup)
{
	static const char two[] = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"
	                          "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";
	static const char expect[] = "POST /healthz HTTP/1.1\r\nHost: t\r\n"
	                             "Expect: 100-continue\r\n"
	                             "Content-Length: 2\r\n\r\n";
	static struct hf_env e;
	static char buf[8192];
	bool eof;
	int fd;

	hf_start(&e, "front-idle", 1, NULL);
	fd = raw_connect(&e);
	/* Two requests in one write: two answers, in order, and the
	 * connection stays open. */
	raw_send(fd, two, sizeof(two) - 1);
	raw_read_until(fd, buf, sizeof(buf), NULL, 1000, &eof);
	cr_assert_not(eof);
	cr_assert_eq(count(buf, "HTTP/1.1 200 OK\r\n"), 2, "%s", buf);
	cr_assert_eq(count(buf, "\"status\":\"ok\""), 2, "%s", buf);
	/* A body that waits for 100 Continue gets it, then its answer. */
	raw_send(fd, expect, sizeof(expect) - 1);
	raw_read_until(fd, buf, sizeof(buf), "\r\n\r\n", 5000, &eof);
	cr_assert_eq(
	    strncmp(buf, "HTTP/1.1 100 Continue\r\n\r\n", 25), 0, "%s", buf);
	raw_send(fd, "{}", 2);
	raw_read_until(fd, buf, sizeof(buf), "}}", 5000, &eof);
	cr_assert_eq(strncmp(buf, "HTTP/1.1 405 ", 13), 0, "%s", buf);
	/* Then nothing: closed once idle. */
	raw_read_until(
	    fd, buf, sizeof(buf), NULL, CM_HTTP_IDLE_TIMEOUT_MS + 10000, &eof);
	cr_assert(eof, "an idle connection was never closed");
	close(fd);
	hf_stop(&e);
}

/* Checks an event stream: ids run from 1 by one, and it ends with
 * space_closed.  Returns how many events it held. */
static long
stream_events(const char *text)
{
	const char *p;
	long want = 1;

	cr_assert_not_null(text, "no stream");
	for (p = text; (p = strstr(p, "id: ")) != NULL; p += 4, want++)
		cr_assert_eq(strtol(p + 4, NULL, 10), want,
		    "event %ld out of order", want);
	cr_assert_not_null(strstr(text, "event: space_closed"),
	    "the stream did not end on close");
	return want - 1;
}

Test(http_front, a_long_replay_arrives_whole, .fini = tk_cleanup)
{
	enum { N_TASKS = 600 };
	static struct hf_env e;
	char space[CM_ID_MAX + 1], rid[32], *text = NULL, path[1024];

	hf_start(&e, "front-replay", 1, NULL);
	hf_create_ok(&e, 0, NULL, space);
	/* Three events a task (queued, started, completed): 1,800. */
	for (int i = 0; i < N_TASKS; i++) {
		snprintf(rid, sizeof(rid), "r%d", i);
		cr_assert_eq(hf_submit(&e, e.manager, space, "?wait=10", rid,
		                 "noop", NULL, NULL, NULL),
		    200);
	}
	hf_path(&e, path, sizeof(path), NULL, space, "/close");
	cr_assert_eq(hf_call(&e, "POST", path, e.manager, NULL, NULL) / 100, 2);
	cr_assert(hf_wait_space(&e, space, "closed"));
	cr_assert_eq(hf_sse(&e, e.manager, space, &text), 200);
	cr_assert_geq(
	    stream_events(text), 3 * N_TASKS + 2, "opened, 3 per task, closed");
	free(text);
	hf_stop(&e);
}

struct follower {
	struct hf_env *e;
	const char *space;
	char *text;
	int status;
};

static void *
follow(void *arg)
{
	struct follower *f = arg;

	f->status = hf_sse(f->e, f->e->manager, f->space, &f->text);
	return NULL;
}

/* Whether the api cut a stream off (its counter on /metrics). */
static bool
stream_cut(void *arg)
{
	struct hf_env *e = arg;
	char *text = NULL;
	bool cut = false;

	if (tk_http(&e->sf.p, "GET", "/metrics", NULL, NULL, NULL, &text) ==
	    200)
		cut = tk_prom_sample(text, "spaced_sse_streams_cut_total") >= 1;
	free(text);
	return cut;
}

Test(http_front, a_stream_that_stops_reading_is_cut_off, .fini = tk_cleanup)
{
	/* About 1.5 KiB of events a task: some 750 KiB in all, well within
	 * what the kernel alone would hold for a socket left to grow. */
	enum { N_TASKS = 500 };
	static struct hf_env e;
	static char msg[801], args[900], buf[65536];
	char space[CM_ID_MAX + 1], rid[32], path[1024], req[1400];
	struct follower f = {&e, space, NULL, 0};
	struct sockaddr_in sa;
	int fd, small = 1024;
	bool eof = false, closed_seen = false;
	int64_t deadline;
	pthread_t t;

	hf_start(&e, "front-cut", 1, NULL);
	hf_create_ok(&e, 0, NULL, space);
	/* The stalled reader: a tiny receive buffer, never read. */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)e.sf.p.http_port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	hf_path(&e, path, sizeof(path), NULL, space, "/events");
	snprintf(req, sizeof(req),
	    "GET %s HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer %s\r\n"
	    "Accept: text/event-stream\r\n\r\n",
	    path, e.manager);
	raw_send(fd, req, strlen(req));
	pthread_create(&t, NULL, follow, &f);

	memset(msg, 'm', sizeof(msg) - 1);
	snprintf(args, sizeof(args),
	    "{\"code\": \"runtime_error\", \"message\": \"%s\"}", msg);
	for (int i = 0; i < N_TASKS; i++) {
		snprintf(rid, sizeof(rid), "f%d", i);
		cr_assert_eq(hf_submit(&e, e.manager, space, "?wait=10", rid,
		                 "fail", args, NULL, NULL),
		    200);
	}
	healthz_answers(&e, "a stalled stream");
	/* It is cut once it took nothing for CM_SSE_STALL_MS, however soon
	 * the tasks were done, and before the Space closes. */
	cr_assert(tk_wait_until(stream_cut, &e, 20000),
	    "the stalled stream was not cut off");
	hf_path(&e, path, sizeof(path), NULL, space, "/close");
	cr_assert_eq(hf_call(&e, "POST", path, e.manager, NULL, NULL) / 100, 2);
	pthread_join(t, NULL);
	/* The reader got everything. */
	cr_assert_eq(f.status, 200);
	cr_assert_geq(stream_events(f.text), 3 * N_TASKS + 2);
	free(f.text);
	/* The stalled one ended before the end. */
	deadline = cm_mono_ms() + 20000;
	while (!eof && cm_mono_ms() < deadline) {
		size_t n =
		    raw_read_until(fd, buf, sizeof(buf), NULL, 200, &eof);

		if (n > 0 && strstr(buf, "event: space_closed") != NULL)
			closed_seen = true;
	}
	close(fd);
	cr_assert(eof, "the stalled stream was never closed");
	cr_assert_not(closed_seen, "the stalled reader got the whole log");
	hf_stop(&e);
}
