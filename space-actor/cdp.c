/*
 * cdp.c: command ids, the table of pending commands, and event routing.
 */
#include "cdp.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "limits.h"
#include "log.h"

struct cdp_pending {
	int64_t id; /* 0: the slot is free */
	int64_t deadline_ms;
	act_cdp_reply_fn fn;
	void *arg;
};

struct act_cdp {
	act_cdp_send_fn send;
	act_cdp_event_fn on_event;
	void *arg;
	int64_t next_id;
	size_t n_pending;
	struct cdp_pending pending[CM_CDP_PENDING_MAX];
};

struct act_cdp *
act_cdp_new(act_cdp_send_fn send, act_cdp_event_fn on_event, void *arg)
{
	struct act_cdp *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->send = send;
	c->on_event = on_event;
	c->arg = arg;
	c->next_id = 1;
	return c;
}

void
act_cdp_free(struct act_cdp *c)
{
	free(c);
}

static struct cdp_pending *
cdp_find(struct act_cdp *c, int64_t id)
{
	for (size_t i = 0; i < CM_CDP_PENDING_MAX; i++)
		if (c->pending[i].id == id)
			return &c->pending[i];
	return NULL;
}

int64_t
act_cdp_call(struct act_cdp *c, const char *session_id, const char *method,
    json_t *params, int64_t deadline_ms, act_cdp_reply_fn fn, void *arg)
{
	struct cdp_pending *p;
	json_t *msg;
	char *text;
	int64_t id;
	int rv;

	if ((p = cdp_find(c, 0)) == NULL) {
		json_decref(params);
		cm_warnx("cdp: %d commands pending; %s refused",
		    CM_CDP_PENDING_MAX, method);
		return -1;
	}
	id = c->next_id++;
	msg = json_pack("{s:I, s:s, s:o}", "id", (json_int_t)id, "method",
	    method, "params", params != NULL ? params : json_object());
	if (msg == NULL)
		return -1;
	if (session_id != NULL && json_object_set_new(msg, "sessionId",
	                              json_string(session_id)) != 0) {
		json_decref(msg);
		return -1;
	}
	text = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	if (text == NULL)
		return -1;
	rv = strlen(text) <= CM_CDP_MSG_MAX
	         ? c->send(c->arg, text, strlen(text))
	         : -1;
	free(text);
	if (rv != 0)
		return -1;
	p->id = id;
	p->deadline_ms = deadline_ms;
	p->fn = fn;
	p->arg = arg;
	c->n_pending++;
	return id;
}

void
act_cdp_forget(struct act_cdp *c, int64_t id)
{
	struct cdp_pending *p;

	if (id > 0 && (p = cdp_find(c, id)) != NULL) {
		memset(p, 0, sizeof(*p));
		c->n_pending--;
	}
}

size_t
act_cdp_pending(const struct act_cdp *c)
{
	return c->n_pending;
}

/* Frees the slot first, so that the callback may issue commands. */
static void
cdp_complete(struct act_cdp *c, struct cdp_pending *p, const json_t *result,
    const json_t *error)
{
	act_cdp_reply_fn fn = p->fn;
	void *arg = p->arg;

	memset(p, 0, sizeof(*p));
	c->n_pending--;
	if (fn != NULL)
		fn(arg, result, error);
}

static void
cdp_fail(struct act_cdp *c, struct cdp_pending *p, int code, const char *why)
{
	json_t *err = json_pack("{s:i, s:s}", "code", code, "message", why);

	cdp_complete(c, p, NULL, err);
	json_decref(err);
}

size_t
act_cdp_too_big(const char *head, size_t len, char *out, size_t outlen)
{
	static const char start[] = "{\"id\":";
	long long id = 0;
	size_t i = sizeof(start) - 1;
	int n;

	cm_warnx("cdp: dropped a message of the browser over %d bytes",
	    CM_CDP_MSG_MAX);
	if (len < i || memcmp(head, start, i) != 0)
		return 0;
	for (;
	     i < len && i < CM_CDP_HEAD_MAX && head[i] >= '0' && head[i] <= '9';
	     i++)
		id = id * 10 + (head[i] - '0');
	if (i >= len || (head[i] != ',' && head[i] != '}') || id <= 0)
		return 0;
	n = snprintf(out, outlen,
	    "{\"id\":%lld,\"error\":{\"code\":%d,\"message\":\"the "
	    "browser's reply is over %d bytes\"}}",
	    id, ACT_CDP_E_TOO_BIG, CM_CDP_MSG_MAX);
	return n > 0 && (size_t)n < outlen ? (size_t)n : 0;
}

int
act_cdp_receive(struct act_cdp *c, const char *msg, size_t len)
{
	json_t *v, *id, *result, *error, *params;
	const char *method, *session;
	struct cdp_pending *p;
	char err[128];

	if (cm_json_parse(msg, len, CM_CDP_MSG_MAX, CM_CDP_DEPTH_MAX, &v, err,
	        sizeof(err)) != 0) {
		cm_warnx("cdp: a message of %zu bytes that is not JSON: %s",
		    len, err);
		return -1;
	}
	if (!json_is_object(v))
		goto bad;
	if ((id = json_object_get(v, "id")) != NULL) {
		if (!json_is_integer(id) || json_integer_value(id) <= 0)
			goto bad;
		result = json_object_get(v, "result");
		error = json_object_get(v, "error");
		if ((result == NULL) == (error == NULL) ||
		    (result != NULL && !json_is_object(result)) ||
		    (error != NULL && !json_is_object(error)))
			goto bad;
		/* A forgotten command's reply is dropped. */
		if ((p = cdp_find(c, json_integer_value(id))) != NULL)
			cdp_complete(c, p, result, error);
		json_decref(v);
		return 0;
	}
	method = json_string_value(json_object_get(v, "method"));
	params = json_object_get(v, "params");
	session = json_string_value(json_object_get(v, "sessionId"));
	if (method == NULL || (params != NULL && !json_is_object(params)) ||
	    (json_object_get(v, "sessionId") != NULL && session == NULL))
		goto bad;
	if (c->on_event != NULL)
		c->on_event(c->arg, session, method, params);
	json_decref(v);
	return 0;
bad:
	cm_warnx("cdp: a message of %zu bytes that is neither a reply nor an "
	         "event",
	    len);
	json_decref(v);
	return -1;
}

int64_t
act_cdp_expire(struct act_cdp *c, int64_t now_ms)
{
	int64_t next = -1;

	for (size_t i = 0; i < CM_CDP_PENDING_MAX; i++) {
		struct cdp_pending *p = &c->pending[i];

		if (p->id == 0)
			continue;
		if (p->deadline_ms <= now_ms)
			cdp_fail(c, p, ACT_CDP_E_TIMEOUT, "no reply in time");
	}
	/* A callback may have added commands: read the table again. */
	for (size_t i = 0; i < CM_CDP_PENDING_MAX; i++)
		if (c->pending[i].id != 0 &&
		    (next < 0 || c->pending[i].deadline_ms < next))
			next = c->pending[i].deadline_ms;
	return next;
}

void
act_cdp_fail_all(struct act_cdp *c)
{
	for (size_t i = 0; i < CM_CDP_PENDING_MAX; i++)
		if (c->pending[i].id != 0)
			cdp_fail(c, &c->pending[i], ACT_CDP_E_CLOSED,
			    "the browser connection ended");
}
