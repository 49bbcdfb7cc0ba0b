/*
 * test_cdp.c: the CDP client (space-actor/cdp.h) against a transport of
 * the test's own, and the pipe transport (cdp_pipe.h) over real pipes.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cdp.h"
#include "cdp_pipe.h"
#include "limits.h"

/* What the client sent, and what it called back with. */
struct rec {
	char sent[8][512];
	int n_sent;
	bool refuse;
	int replies;
	json_t *last_result;
	json_int_t last_error_code;
	int events;
	char last_method[64];
	char last_session[64];
	struct act_cdp *c; /* for callbacks that issue commands */
};

static int
rec_send(void *arg, const char *msg, size_t len)
{
	struct rec *r = arg;

	if (r->refuse)
		return -1;
	cr_assert_lt(r->n_sent, 8);
	cr_assert_lt(len, sizeof(r->sent[0]));
	memcpy(r->sent[r->n_sent], msg, len);
	r->sent[r->n_sent++][len] = '\0';
	return 0;
}

static void
rec_event(
    void *arg, const char *session, const char *method, const json_t *params)
{
	struct rec *r = arg;

	(void)params;
	r->events++;
	snprintf(r->last_method, sizeof(r->last_method), "%s", method);
	snprintf(r->last_session, sizeof(r->last_session), "%s",
	    session ? session : "");
}

static void
rec_reply(void *arg, const json_t *result, const json_t *error)
{
	struct rec *r = arg;

	r->replies++;
	json_decref(r->last_result);
	r->last_result = result ? json_deep_copy(result) : NULL;
	r->last_error_code =
	    error ? json_integer_value(json_object_get(error, "code")) : 0;
}

static int
feed(struct act_cdp *c, const char *text)
{
	return act_cdp_receive(c, text, strlen(text));
}

Test(cdp, a_command_is_numbered_sent_and_answered_once)
{
	struct rec r = {0};
	struct act_cdp *c = act_cdp_new(rec_send, rec_event, &r);
	json_t *sent;
	int64_t id;

	id = act_cdp_call(c, "S1", "Page.navigate",
	    json_pack("{s:s}", "url", "about:blank"), 1000, rec_reply, &r);
	cr_assert_gt(id, 0);
	cr_assert_eq(r.n_sent, 1);
	sent = json_loads(r.sent[0], 0, NULL);
	cr_assert_eq(json_integer_value(json_object_get(sent, "id")), id);
	cr_assert_str_eq(json_string_value(json_object_get(sent, "method")),
	    "Page.navigate");
	cr_assert_str_eq(
	    json_string_value(json_object_get(sent, "sessionId")), "S1");
	cr_assert_str_eq(json_string_value(json_object_get(
	                     json_object_get(sent, "params"), "url")),
	    "about:blank");
	json_decref(sent);
	cr_assert_eq(act_cdp_pending(c), 1);

	char reply[128];
	snprintf(reply, sizeof(reply),
	    "{\"id\":%lld,\"result\":{\"frameId\":\"F\"}}", (long long)id);
	cr_assert_eq(feed(c, reply), 0);
	cr_assert_eq(r.replies, 1);
	cr_assert_str_eq(
	    json_string_value(json_object_get(r.last_result, "frameId")), "F");
	cr_assert_eq(act_cdp_pending(c), 0);
	/* A second reply with that id is dropped. */
	cr_assert_eq(feed(c, reply), 0);
	cr_assert_eq(r.replies, 1);
	json_decref(r.last_result);
	act_cdp_free(c);
}

Test(cdp, an_error_reply_and_a_browser_event_and_a_session_event)
{
	struct rec r = {0};
	struct act_cdp *c = act_cdp_new(rec_send, rec_event, &r);
	int64_t id =
	    act_cdp_call(c, NULL, "Nope.nothing", NULL, 1000, rec_reply, &r);
	char reply[160];

	snprintf(reply, sizeof(reply),
	    "{\"id\":%lld,\"error\":{\"code\":-32601,\"message\":\"'Nope."
	    "nothing' wasn't found\"}}",
	    (long long)id);
	cr_assert_eq(feed(c, reply), 0);
	cr_assert_eq(r.replies, 1);
	cr_assert_null(r.last_result);
	cr_assert_eq(r.last_error_code, -32601);

	cr_assert_eq(feed(c, "{\"method\":\"Target.targetCreated\","
	                     "\"params\":{}}"),
	    0);
	cr_assert_eq(r.events, 1);
	cr_assert_str_eq(r.last_session, "");
	cr_assert_eq(feed(c, "{\"method\":\"Page.loadEventFired\",\"params\":"
	                     "{\"timestamp\":1},\"sessionId\":\"AB\"}"),
	    0);
	cr_assert_eq(r.events, 2);
	cr_assert_str_eq(r.last_method, "Page.loadEventFired");
	cr_assert_str_eq(r.last_session, "AB");
	act_cdp_free(c);
}

Test(cdp, messages_that_are_not_cdp_are_refused)
{
	struct rec r = {0};
	struct act_cdp *c = act_cdp_new(rec_send, rec_event, &r);
	static const char *const bad[] = {
	    "",
	    "not json",
	    "[1,2]",
	    "{\"id\":\"1\",\"result\":{}}",
	    "{\"id\":0,\"result\":{}}",
	    "{\"id\":1}",
	    "{\"id\":1,\"result\":{},\"error\":{}}",
	    "{\"id\":1,\"result\":[]}",
	    "{\"params\":{}}",
	    "{\"method\":\"X\",\"params\":[]}",
	    "{\"method\":\"X\",\"sessionId\":5}",
	    "{\"method\":\"X\",\"method\":\"Y\"}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(feed(c, bad[i]), -1, "accepted: %s", bad[i]);
	cr_assert_eq(r.events + r.replies, 0);

	/* Deeper than CM_CDP_DEPTH_MAX. */
	size_t n = 2 * (CM_CDP_DEPTH_MAX + 2) + 64;
	char *deep = malloc(n);
	size_t k = 0;
	k += (size_t)snprintf(deep, n, "{\"method\":\"X\",\"params\":");
	for (int i = 0; i < CM_CDP_DEPTH_MAX; i++)
		deep[k++] = '[';
	for (int i = 0; i < CM_CDP_DEPTH_MAX; i++)
		deep[k++] = ']';
	deep[k++] = '}';
	cr_assert_eq(act_cdp_receive(c, deep, k), -1);
	free(deep);
	act_cdp_free(c);
}

Test(cdp, deadlines_fail_commands_and_the_table_is_bounded)
{
	struct rec r = {0};
	struct act_cdp *c = act_cdp_new(rec_send, rec_event, &r);
	int64_t id;

	r.refuse = true;
	cr_assert_eq(
	    act_cdp_call(c, NULL, "A.b", NULL, 100, rec_reply, &r), -1);
	cr_assert_eq(act_cdp_pending(c), 0);
	r.refuse = false;
	/* Fill the table; the sends are not recorded past 8. */
	for (int i = 0; i < CM_CDP_PENDING_MAX; i++) {
		r.n_sent = 0;
		id = act_cdp_call(c, NULL, "A.b", NULL, 100 + i, rec_reply, &r);
		cr_assert_gt(id, 0);
	}
	cr_assert_eq(
	    act_cdp_call(c, NULL, "A.b", NULL, 100, rec_reply, &r), -1);
	cr_assert_eq(act_cdp_expire(c, 50), 100);
	cr_assert_eq(r.replies, 0);
	cr_assert_eq(act_cdp_expire(c, 110), 111);
	cr_assert_eq(r.replies, 11);
	cr_assert_eq(r.last_error_code, ACT_CDP_E_TIMEOUT);
	cr_assert_eq(act_cdp_pending(c), CM_CDP_PENDING_MAX - 11);
	/* A forgotten command is never called back. */
	act_cdp_forget(c, id);
	act_cdp_fail_all(c);
	cr_assert_eq(r.replies, CM_CDP_PENDING_MAX - 1);
	cr_assert_eq(r.last_error_code, ACT_CDP_E_CLOSED);
	cr_assert_eq(act_cdp_pending(c), 0);
	cr_assert_eq(act_cdp_expire(c, 1000), -1);
	act_cdp_free(c);
}

/* ---- the pipe transport */

struct got {
	int n;
	char last[256];
	size_t last_len;
	size_t total;
	char errors[512]; /* the replies that carried an error */
};

static int
got_msg(void *arg, const char *msg, size_t len)
{
	struct got *g = arg;

	g->n++;
	g->total += len;
	g->last_len = len;
	snprintf(g->last, sizeof(g->last), "%.*s", (int)(len < 255 ? len : 255),
	    msg);
	if (len < 255 && strstr(g->last, "\"error\"") != NULL)
		snprintf(g->errors + strlen(g->errors),
		    sizeof(g->errors) - strlen(g->errors), "%s", g->last);
	return 0;
}

/* Steps p until cond or 5 s. */
#define PIPE_RUN(p, cond, g)                                             \
	do {                                                             \
		for (int spin_ = 0; !(cond) && spin_ < 5000; spin_++) {  \
			struct pollfd fds_[2];                           \
			int n_ = act_pipe_pollfds(p, fds_, 2);           \
			poll(fds_, (nfds_t)n_, 1);                       \
			if (act_pipe_step(p, fds_, n_, got_msg, g) != 0) \
				break;                                   \
		}                                                        \
	} while (0)

Test(cdp_pipe, messages_are_framed_by_nul_both_ways)
{
	int a[2], b[2];
	struct act_pipe *p;
	struct got g = {0};
	char buf[64];
	ssize_t n;

	cr_assert_eq(pipe(a), 0); /* we write a[1]; the peer reads a[0] */
	cr_assert_eq(pipe(b), 0); /* the peer writes b[1]; we read b[0] */
	p = act_pipe_new(a[1], b[0]);
	cr_assert_eq(act_pipe_send(p, "{\"id\":1}", 8), 0);
	n = read(a[0], buf, sizeof(buf));
	cr_assert_eq(n, 9);
	cr_assert_eq(buf[8], '\0');

	/* Two messages and half of a third in one write. */
	cr_assert_eq(write(b[1], "{\"a\":1}\0{\"b\":2}\0{\"c\"", 20), 20);
	PIPE_RUN(p, g.n == 2, &g);
	cr_assert_eq(g.n, 2);
	cr_assert_str_eq(g.last, "{\"b\":2}");
	cr_assert_eq(write(b[1], ":3}\0", 4), 4);
	PIPE_RUN(p, g.n == 3, &g);
	cr_assert_str_eq(g.last, "{\"c\":3}");

	/* The peer goes away: the pipe ends. */
	close(b[1]);
	PIPE_RUN(p, act_pipe_broken(p), &g);
	cr_assert(act_pipe_broken(p));
	cr_assert_eq(act_pipe_send(p, "x", 1), -1);
	act_pipe_free(p);
	close(a[0]);
}

Test(cdp_pipe, a_large_message_arrives_whole_and_an_oversized_one_is_dropped)
{
	int a[2], b[2];
	struct act_pipe *p;
	struct got g = {0};
	size_t big = 3 * 1024 * 1024;
	char *m = malloc(CM_CDP_MSG_MAX + 2);
	size_t off;

	cr_assert_eq(pipe(a), 0);
	cr_assert_eq(pipe2(b, O_NONBLOCK), 0);
	p = act_pipe_new(a[1], b[0]);
	memset(m, 'x', CM_CDP_MSG_MAX + 1);
	m[big] = '\0';
	/* The writer is non-blocking: interleave its writes with steps. */
	for (off = 0; off <= big;) {
		ssize_t n = write(b[1], m + off, big + 1 - off);

		if (n > 0)
			off += (size_t)n;
		PIPE_RUN(p, true, &g);
		struct pollfd fds[2];
		int k = act_pipe_pollfds(p, fds, 2);
		poll(fds, (nfds_t)k, 1);
		cr_assert_eq(act_pipe_step(p, fds, k, got_msg, &g), 0);
	}
	PIPE_RUN(p, g.n == 1, &g);
	cr_assert_eq(g.n, 1);
	cr_assert_eq(g.last_len, big);

	/* Over the bound: dropped, never held, and the pipe goes on.  An
	 * event (no id) vanishes; a reply becomes an error for its
	 * command.  Each is followed by a small message that arrives. */
	for (int round = 0; round < 2; round++) {
		const char *head = round == 0 ? "{\"method\":\"X.y\","
		                              : "{\"id\":42,\"result\":";
		size_t len = CM_CDP_MSG_MAX + 100 * 1024;
		const char tail[] = "{\"id\":43,\"result\":{}}";
		int before = g.n;

		m = realloc(m, len + sizeof(tail) + 1);
		memset(m, 'x', len);
		memcpy(m, head, strlen(head));
		m[len] = '\0';
		memcpy(m + len + 1, tail, sizeof(tail)); /* with its NUL */
		for (off = 0; off < len + 1 + sizeof(tail);) {
			ssize_t n =
			    write(b[1], m + off, len + 1 + sizeof(tail) - off);

			if (n > 0)
				off += (size_t)n;
			struct pollfd fds[2];
			int k = act_pipe_pollfds(p, fds, 2);
			poll(fds, (nfds_t)k, 1);
			cr_assert_eq(act_pipe_step(p, fds, k, got_msg, &g), 0);
		}
		PIPE_RUN(p, g.n == before + 1 + round, &g);
		cr_assert_not(act_pipe_broken(p));
		cr_assert_eq(g.n, before + 1 + round);
		cr_assert_str_eq(g.last, tail);
		if (round == 1)
			cr_assert_not_null(
			    strstr(g.errors, "{\"id\":42,\"error\""), "%s",
			    g.errors);
	}
	act_pipe_free(p);
	close(a[0]);
	close(b[1]);
	free(m);
}

Test(cdp_pipe, output_waits_when_the_peer_is_slow_and_is_bounded)
{
	int a[2], b[2];
	struct act_pipe *p;
	struct got g = {0};
	char *m = malloc(CM_CDP_OUTBUF_MAX);
	char *sink = malloc(1 << 20);
	size_t drained = 0, sent = 0;

	cr_assert_eq(pipe(a), 0);
	cr_assert_eq(pipe(b), 0);
	p = act_pipe_new(a[1], b[0]);
	memset(m, 'y', CM_CDP_OUTBUF_MAX);
	/* The kernel takes 64 KiB; the rest waits, up to the bound. */
	cr_assert_eq(act_pipe_send(p, m, 512 * 1024), 0);
	sent += 512 * 1024 + 1;
	cr_assert_eq(act_pipe_send(p, m, CM_CDP_OUTBUF_MAX - 1), -1);
	struct pollfd fds[2];
	cr_assert_eq(act_pipe_pollfds(p, fds, 2), 2);
	cr_assert_eq(fds[1].events, POLLOUT);
	fcntl(a[0], F_SETFL, O_NONBLOCK);
	while (drained < sent) {
		ssize_t n = read(a[0], sink, 1 << 20);

		if (n > 0)
			drained += (size_t)n;
		int k = act_pipe_pollfds(p, fds, 2);
		poll(fds, (nfds_t)k, 1);
		cr_assert_eq(act_pipe_step(p, fds, k, got_msg, &g), 0);
	}
	cr_assert_eq(drained, sent);
	cr_assert_eq(act_pipe_pollfds(p, fds, 2), 1);
	act_pipe_free(p);
	close(a[0]);
	close(b[1]);
	free(m);
	free(sink);
}
