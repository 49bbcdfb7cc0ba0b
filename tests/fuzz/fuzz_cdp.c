/*
 * fuzz_cdp.c: libFuzzer target for the CDP client (space-actor/cdp.c):
 * what it does with each message the browser sends.
 *
 * Input: messages, one per line, as the transport hands them over.  Three
 * commands are pending when the first arrives, so replies (ids 1..3) reach
 * their callbacks and events reach the event callback; a reply whose
 * result has "again" issues a new command from inside its callback, as
 * the actor's chains of commands do.  At the end every command still
 * waiting times out.
 *
 * Checked beyond "no crash":
 *   - every command's callback runs exactly once (a reply, or the time
 *     out), with exactly one of result and error, result an object;
 *   - act_cdp_pending is always the number of commands not yet called
 *     back;
 *   - a message refused (-1) called nothing back;
 *   - an event has a method, and params that are an object or none;
 *   - what the client sends is one JSON object with an id and a method.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdp.h"
#include "limits.h"
#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Commands one run may issue: the first three and one per "again". */
#define CMDS_MAX 64

struct run {
	struct act_cdp *cdp;
	int64_t ids[CMDS_MAX];
	int calls[CMDS_MAX]; /* callbacks per command */
	size_t n_cmds;
	size_t callbacks; /* reply and event callbacks, all kinds */
};

_Noreturn static void
die(const char *what)
{
	fprintf(stderr, "fuzz_cdp: %s\n", what);
	abort();
}

static int
on_send(void *arg, const char *msg, size_t len)
{
	json_t *v = json_loadb(msg, len, 0, NULL);

	(void)arg;
	if (!json_is_object(v) || !json_is_integer(json_object_get(v, "id")) ||
	    !json_is_string(json_object_get(v, "method")))
		die("sent a message that is not a command");
	json_decref(v);
	return 0;
}

static void on_reply(void *arg, const json_t *result, const json_t *error);

static void
issue(struct run *r)
{
	int64_t id;

	if (r->n_cmds == CMDS_MAX)
		return;
	/* The slot is taken first: a reply cannot come before the call
	 * returns, and arg must name it. */
	id = act_cdp_call(r->cdp, r->n_cmds % 2 ? "S1" : NULL, "Fuzz.cmd", NULL,
	    INT64_MAX / 2, on_reply, (void *)(uintptr_t)r->n_cmds);
	if (id < 0)
		return;
	r->ids[r->n_cmds++] = id;
}

static struct run *current;

static void
on_reply(void *arg, const json_t *result, const json_t *error)
{
	size_t i = (size_t)(uintptr_t)arg;

	if (i >= current->n_cmds)
		die("a callback for a command never issued");
	if (++current->calls[i] != 1)
		die("a command called back twice");
	if ((result == NULL) == (error == NULL))
		die("a reply with both or neither of result and error");
	if (result != NULL && !json_is_object(result))
		die("a result that is not an object");
	current->callbacks++;
	if (result != NULL && json_object_get(result, "again") != NULL)
		issue(current);
}

static void
on_event(
    void *arg, const char *session_id, const char *method, const json_t *params)
{
	(void)arg;
	(void)session_id;
	if (method == NULL)
		die("an event without a method");
	if (params != NULL && !json_is_object(params))
		die("event params that are not an object");
	current->callbacks++;
}

static size_t
waiting(const struct run *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n_cmds; i++)
		n += r->calls[i] == 0;
	return n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool quiet;
	const char *p = (const char *)data, *end = p + size, *nl;
	struct run r;

	if (!quiet) {
		/* A refused message is logged; thousands a second would
		 * drown the fuzzer's own output. */
		cm_log_init("fuzz_cdp", CM_LOG_ERROR, false);
		quiet = true;
	}
	memset(&r, 0, sizeof(r));
	current = &r;
	if ((r.cdp = act_cdp_new(on_send, on_event, NULL)) == NULL)
		return 0;
	for (int i = 0; i < 3; i++)
		issue(&r);
	while (p < end) {
		size_t before = r.callbacks;
		int rv;

		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		rv = act_cdp_receive(r.cdp, p, (size_t)(nl - p));
		if (rv != 0 && rv != -1)
			die("act_cdp_receive: neither 0 nor -1");
		if (rv == -1 && r.callbacks != before)
			die("a refused message called back");
		if (act_cdp_pending(r.cdp) != waiting(&r))
			die("the pending count went wrong");
		p = nl + 1;
	}
	/* Every command still waiting times out, once. */
	act_cdp_expire(r.cdp, INT64_MAX);
	if (act_cdp_pending(r.cdp) != 0)
		die("commands pending after every deadline passed");
	for (size_t i = 0; i < r.n_cmds; i++)
		if (r.calls[i] != 1)
			die("a command that was never called back");
	act_cdp_free(r.cdp);
	current = NULL;
	return 0;
}
