/*
 * Live events (docs/api.md): Server-Sent Events with replay, Last-Event-ID
 * and the end after space_closed; and the external nng PUB socket.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <jansson.h>
#include <netinet/in.h>
#include <nng/nng.h>
#include <nng/protocol/pubsub0/sub.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "testkit.h"
#include "token.h"

struct env {
	char dir[128];
	struct tk_proc p;
	nng_socket s;
	struct tk_world w;
	char token[CM_TOKEN_LEN];
	char space[CM_ID_MAX + 1];
	char base[320];
};

static void
env_start(struct env *e, const char *tag)
{
	char hash[CM_TOKEN_HASH_LEN], body[512], *out = NULL;
	struct pr_req q;
	struct pr_rep r;
	json_t *j;

	memset(e, 0, sizeof(*e));
	tk_tmpdir(e->dir, sizeof(e->dir), tag);
	cr_assert_eq(tk_spaced_start(&e->p, e->dir, NULL), 0);
	cr_assert(tk_http_ready(&e->p, 20000));
	cr_assert_eq(cm_rpc_open(&e->s, e->p.store_url), 0);
	cr_assert_eq(tk_provision(e->s, &e->w, 1), 0);
	cm_token_new(e->token);
	cr_assert_eq(cm_token_hash(e->token, strlen(e->token), hash), 0);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_TOKEN_ISSUE;
	q.principal_id = e->w.operator_id;
	q.token_hash = hash;
	cr_assert_eq(tk_call(e->s, &q, &r), CM_OK);
	pr_rep_free(&r);

	snprintf(e->base, sizeof(e->base),
	    "/api/v1/workspaces/%s/browser-spaces", e->w.workspace_id);
	snprintf(body, sizeof(body),
	    "{\"browser_instance_id\": \"%s\", \"owner_type\": \"operator\", "
	    "\"owner_id\": \"%s\"}",
	    e->w.instance_id[0], e->w.operator_id);
	cr_assert_eq(
	    tk_http(&e->p, "POST", e->base, e->token, body, NULL, &out), 201);
	j = json_loads(out, 0, NULL);
	snprintf(e->space, sizeof(e->space), "%s",
	    json_string_value(
	        json_object_get(json_object_get(j, "data"), "space_id")));
	json_decref(j);
	free(out);
}

static void
env_stop(struct env *e)
{
	nng_close(e->s);
	tk_proc_stop(&e->p, SIGTERM);
	tk_rmrf(e->dir);
}

static int
post(struct env *e, const char *what, const char *body)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s/%s", e->base, e->space, what);
	return tk_http(&e->p, "POST", path, e->token, body, NULL, NULL);
}

struct stream {
	struct env *e;
	const char *last_event_id; /* NULL: none */
	char *text;
	int status;
};

static void *
follow(void *arg)
{
	struct stream *st = arg;
	char path[512], leid[64];
	const char *headers[3] = {"Accept: text/event-stream", NULL, NULL};

	if (st->last_event_id != NULL) {
		snprintf(
		    leid, sizeof(leid), "Last-Event-ID: %s", st->last_event_id);
		headers[1] = leid;
	}
	snprintf(path, sizeof(path), "%s/%s/events?after_sequence=0",
	    st->e->base, st->e->space);
	st->status = tk_http(
	    &st->e->p, "GET", path, st->e->token, NULL, headers, &st->text);
	return NULL;
}

/* Checks the stream: ids run first..last by one, kinds match the data,
 * and it ends with space_closed.  Returns how many events it held. */
static int
check_stream(const char *text, long first)
{
	const char *p = text;
	long want = first;
	int n = 0;
	char kind[40] = "";

	cr_assert_not_null(text, "no stream body");
	while ((p = strstr(p, "id: ")) != NULL) {
		long id = strtol(p + 4, NULL, 10);
		const char *ev = strstr(p, "\nevent: ");
		const char *data = strstr(p, "\ndata: ");
		json_t *j;

		cr_assert_eq(id, want, "event id %ld, want %ld", id, want);
		cr_assert(ev != NULL && data != NULL);
		sscanf(ev + 8, "%39s", kind);
		j = json_loads(data + 7, JSON_DISABLE_EOF_CHECK, NULL);
		cr_assert_not_null(j, "data is not JSON");
		cr_assert_eq(
		    json_integer_value(json_object_get(j, "sequence")), id);
		cr_assert_str_eq(
		    json_string_value(json_object_get(j, "kind")), kind);
		json_decref(j);
		want++;
		n++;
		p += 4;
	}
	cr_assert_str_eq(
	    kind, "space_closed", "the stream did not end on close");
	return n;
}

Test(
    events_http, sse_replays_then_follows_and_ends_on_close, .fini = tk_cleanup)
{
	static struct env e;
	struct stream st = {&e, NULL, NULL, 0}, again = {&e, "3", NULL, 0};
	pthread_t t;
	int n;

	env_start(&e, "sse");
	cr_assert_eq(post(&e, "tasks",
	                 "{\"request_id\": \"a\", "
	                 "\"capability\": \"noop\"}"),
	    202);
	pthread_create(&t, NULL, follow, &st);
	cr_assert_eq(post(&e, "close", NULL) / 100, 2);
	pthread_join(t, NULL);
	cr_assert_eq(st.status, 200);
	n = check_stream(st.text, 1);
	cr_assert_geq(n, 5, "opened, queued, started, completed, closed");
	free(st.text);

	/* A reconnect with Last-Event-ID gets the rest, and the end. */
	follow(&again);
	cr_assert_eq(again.status, 200);
	cr_assert_eq(check_stream(again.text, 4), n - 3);
	free(again.text);
	env_stop(&e);
}

Test(events_http, nng_subscriber_gets_a_workspace_in_order, .fini = tk_cleanup)
{
	static struct env e;
	char url[256], topic[160];
	nng_socket sub;
	int64_t want = 1;
	bool closed = false;

	env_start(&e, "pub");
	cr_assert_eq(
	    cm_ipc_url(url, sizeof(url), e.p.run_dir, "events.ipc"), 0);
	{
		char file[256];
		struct stat sb;

		snprintf(file, sizeof(file), "%s/events.ipc", e.p.run_dir);
		cr_assert_eq(stat(file, &sb), 0);
		cr_assert_eq(sb.st_mode & 0777, 0660, "events.ipc mode %o",
		    (unsigned)(sb.st_mode & 0777));
	}
	cr_assert_eq(nng_sub0_open(&sub), 0);
	snprintf(topic, sizeof(topic), "space/%s/", e.w.workspace_id);
	cr_assert_eq(
	    nng_socket_set(sub, NNG_OPT_SUB_SUBSCRIBE, topic, strlen(topic)),
	    0);
	cr_assert_eq(nng_socket_set_ms(sub, NNG_OPT_RECVTIMEO, 10000), 0);
	cr_assert_eq(nng_dial(sub, url, NULL, 0), 0);

	cr_assert_eq(post(&e, "tasks",
	                 "{\"request_id\": \"a\", "
	                 "\"capability\": \"noop\"}"),
	    202);
	cr_assert_eq(post(&e, "close", NULL) / 100, 2);
	/* The Space was opened before we subscribed: its first event may
	 * come only from a replay, which a subscriber does over HTTP. */
	while (!closed) {
		nng_msg *m;
		const char *body, *sp;
		json_t *j;
		int64_t seq;

		cr_assert_eq(nng_recvmsg(sub, &m, 0), 0, "no event arrived");
		body = nng_msg_body(m);
		sp = memchr(body, ' ', nng_msg_len(m));
		cr_assert_not_null(sp);
		cr_assert_eq(strncmp(body, topic, strlen(topic)), 0);
		j = json_loadb(
		    sp + 1, nng_msg_len(m) - (size_t)(sp + 1 - body), 0, NULL);
		cr_assert_not_null(j);
		cr_assert_str_eq(
		    json_string_value(json_object_get(j, "space_id")), e.space);
		cr_assert_str_eq(
		    json_string_value(json_object_get(j, "workspace_id")),
		    e.w.workspace_id);
		seq = json_integer_value(json_object_get(j, "sequence"));
		if (want == 1)
			want = seq; /* joined mid-log */
		cr_assert_eq(seq, want, "out of order: %lld after %lld",
		    (long long)seq, (long long)want - 1);
		want++;
		closed = strcmp(json_string_value(json_object_get(j, "kind")),
		             "space_closed") == 0;
		json_decref(j);
		nng_msg_free(m);
	}
	nng_close(sub);
	env_stop(&e);
}

/* Opens an SSE stream by hand on a socket with a tiny receive buffer, and
 * never reads it. */
static int
stalled_reader(struct env *e)
{
	struct sockaddr_in sa;
	char req[1024];
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), small = 1024;
	int n;

	cr_assert_geq(fd, 0);
	cr_assert_eq(
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)e->p.http_port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	n = snprintf(req, sizeof(req),
	    "GET %s/%s/events HTTP/1.1\r\nHost: localhost\r\n"
	    "Authorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n",
	    e->base, e->space, e->token);
	cr_assert_eq(write(fd, req, (size_t)n), n);
	return fd;
}

/* A reader that never reads is cut off; everyone else gets every event. */
Test(events_http, stalled_reader_is_cut_off_without_stalling_others,
    .fini = tk_cleanup)
{
	enum { N_TASKS = 2500 };
	static struct env e;
	static char msg[1001], body[1400], buf[65536];
	struct stream st = {&e, NULL, NULL, 0};
	char path[512];
	bool eof = false, closed_seen = false;
	int64_t deadline;
	size_t got = 0;
	pthread_t t;
	int fd, n;

	env_start(&e, "slow");
	fd = stalled_reader(&e);
	pthread_create(&t, NULL, follow, &st);
	/*
	 * More than the stalled stream's 256 KiB and all the kernel will hold
	 * for it (a send buffer grows to 4 MiB here): failed tasks carrying a
	 * 1 KiB message, about 1.9 KiB of events each.
	 */
	memset(msg, 'm', sizeof(msg) - 1);
	snprintf(path, sizeof(path), "%s/%s/tasks?wait=10", e.base, e.space);
	for (int i = 0; i < N_TASKS; i++) {
		snprintf(body, sizeof(body),
		    "{\"request_id\": \"r%d\", \"capability\": \"fail\", "
		    "\"args\": {\"code\": \"runtime_error\", \"message\": "
		    "\"%s\"}}",
		    i, msg);
		cr_assert_eq(
		    tk_http(&e.p, "POST", path, e.token, body, NULL, NULL),
		    200);
	}
	cr_assert_eq(post(&e, "close", NULL) / 100, 2);
	pthread_join(t, NULL);
	cr_assert_eq(st.status, 200);
	/* opened, 3 per task, closed: nothing missing for the live reader */
	cr_assert_eq(check_stream(st.text, 1), 3 * N_TASKS + 2);
	free(st.text);

	/* The stalled one was dropped: its stream ends before the close. */
	deadline = cm_mono_ms() + 20000;
	while (!eof && cm_mono_ms() < deadline) {
		struct pollfd pfd = {fd, POLLIN, 0};

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		n = (int)read(fd, buf, sizeof(buf) - 1);
		if (n <= 0) {
			eof = true;
			break;
		}
		buf[n] = '\0';
		got += (size_t)n;
		if (strstr(buf, "event: space_closed") != NULL)
			closed_seen = true;
	}
	close(fd);
	cr_assert(eof, "the stalled stream was never closed");
	cr_assert_not(closed_seen, "the stalled reader got the whole log");
	cr_assert_gt(got, 0);
	env_stop(&e);
}

/* An idle stream gets a comment heartbeat (every 15 s). */
Test(events_http, idle_stream_gets_a_heartbeat, .fini = tk_cleanup)
{
	static struct env e;
	static char buf[65536];
	bool beat = false;
	int64_t deadline;
	size_t got = 0;
	int fd, n;

	env_start(&e, "beat");
	fd = stalled_reader(&e);
	deadline = cm_mono_ms() + 25000;
	while (!beat && cm_mono_ms() < deadline) {
		struct pollfd pfd = {fd, POLLIN, 0};

		if (poll(&pfd, 1, 200) <= 0)
			continue;
		n = (int)read(fd, buf + got, sizeof(buf) - 1 - got);
		cr_assert_gt(n, 0, "the stream ended");
		got += (size_t)n;
		buf[got] = '\0';
		beat = strstr(buf, "\n: heartbeat\n\n") != NULL;
	}
	close(fd);
	cr_assert(beat, "no heartbeat on an idle stream");
	/* The replay came first: the Space's opening event. */
	cr_assert_not_null(strstr(buf, "event: space_opened"));
	env_stop(&e);
}
