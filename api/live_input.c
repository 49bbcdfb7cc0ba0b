/*
 * live_input.c: POST .../browser-spaces/{space}/live/input, an
 * operator's pointer or key, from the live view to the Space's page
 * (docs/api.md, "Take-over").
 *
 * Only the Space's holder sends it: the Space must be held, by the
 * caller.  The worker passes the input to the Space's actor (live.input
 * on its control socket, bounded by CM_LIVE_CALL_MS; the actor is the
 * one judge of its fields and its rate), and once the actor says what it
 * did, records that as an operator_input event: who, what, where, and
 * the element under the point.  The text typed and the key pressed are
 * in no event, log line or answer.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "live.h"
#include "rpc.h"
#include "status.h"

/* An integer member of body into *out (0 when absent); false, answered,
 * when it is not an integer within +-CM_LIVE_WHEEL_MAX. */
static bool
int_member(struct api_ctx *c, json_t *body, const char *key, int64_t *out,
    bool *present)
{
	json_t *v = json_object_get(body, key);

	*out = 0;
	if (present != NULL)
		*present = v != NULL;
	if (v == NULL)
		return true;
	if (!json_is_integer(v) || json_integer_value(v) < -CM_LIVE_WHEEL_MAX ||
	    json_integer_value(v) > CM_LIVE_WHEEL_MAX) {
		char msg[80];

		snprintf(msg, sizeof(msg), "%s must be an integer", key);
		api_fail(c, 0, CM_E_INVALID_REQUEST, msg);
		return false;
	}
	*out = json_integer_value(v);
	return true;
}

/* Whether the Space of c is held by c's caller; answered when not. */
static bool
held_by_caller(struct api_ctx *c)
{
	struct pr_rep sp;
	const struct pr_space *s;
	bool ok;

	if (!api_space_for(c, CM_ACT_SPACE_TAKEOVER, &sp)) {
		pr_rep_free(&sp);
		return false;
	}
	s = &sp.spaces[0];
	ok = cm_space_status_is(s->status, CM_SPACE_HELD) &&
	     s->held_by != NULL &&
	     strcmp(s->held_by, c->id.principal->principal_id) == 0;
	if (!ok)
		api_fail(c, 409, CM_E_CONFLICT,
		    "only the Space's holder sends input: take it over first");
	pr_rep_free(&sp);
	return ok;
}

/* The actor's answer in.  Returns CM_OK, or the error answered. */
static enum cm_err
to_actor(struct api_ctx *c, const struct pr_req *q, struct pr_rep *r)
{
	char file[CM_ID_MAX + 16], url[CM_IPC_PATH_MAX + 16];
	nng_socket s;
	enum cm_err e;

	snprintf(file, sizeof(file), "ctl-%s.ipc", c->space_id);
	if (cm_ipc_url(url, sizeof(url), c->cfg->run_dir, file) != 0 ||
	    cm_rpc_open(&s, url) != 0) {
		api_fail(c, 0, CM_E_RUNTIME_NOT_READY,
		    "the Space's browser is not running");
		return CM_E_RUNTIME_NOT_READY;
	}
	e = cm_rpc_call(s, q, r, CM_LIVE_CALL_MS);
	nng_close(s);
	if (e != CM_OK) {
		api_fail(c, 0, CM_E_RUNTIME_NOT_READY,
		    "the Space's browser did not answer");
		return e;
	}
	if (r->err != CM_OK || r->n_inputs != 1) {
		if (r->err == CM_OK)
			api_fail(c, 500, CM_E_INTERNAL,
			    "the actor said nothing of the input");
		else
			api_fail_rep(c, r);
		return r->err != CM_OK ? r->err : CM_E_INTERNAL;
	}
	return CM_OK;
}

/* The operator_input event of what the actor did, by the caller.  When
 * the store does not take it, the answer says so: the input reached the
 * page, its record did not. */
static bool
record(
    struct api_ctx *c, const struct pr_input *in, bool at, int64_t x, int64_t y)
{
	struct pr_req q;
	struct pr_rep r;
	json_t *p = json_pack("{s:s, s:s, s:s, s:s}", "by",
	    c->id.principal->principal_id, "kind", in->kind, "role",
	    in->role ? in->role : "", "name", in->name ? in->name : "");
	char *text;
	bool ok;

	if (p != NULL && at) {
		json_object_set_new(p, "x", json_integer(x));
		json_object_set_new(p, "y", json_integer(y));
	}
	text = p != NULL ? json_dumps(p, JSON_COMPACT) : NULL;
	json_decref(p);
	if (text == NULL) {
		api_fail(c, 500, CM_E_INTERNAL, "out of memory");
		return false;
	}
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SPACE_PAGE_EVENT;
	q.space_id = c->space_id;
	q.kind = cm_event_kind_name(CM_EV_OPERATOR_INPUT);
	q.payload = text;
	ok = api_call(c, &q, &r) && r.err == CM_OK;
	if (!ok)
		api_fail(c, 503, CM_E_STORE_UNAVAILABLE,
		    "the input reached the page, but its operator_input event "
		    "was not recorded");
	pr_rep_free(&r);
	free(text);
	return ok;
}

void
api_live_input(struct api_ctx *c)
{
	static const char *const keys[] = {"kind", "x", "y", "delta_x",
	    "delta_y", "button", "key", "text", NULL};
	struct pr_req q;
	struct pr_rep r;
	json_t *body;
	bool has_x, has_y;

	if ((body = api_body(c, keys, false)) == NULL)
		return;
	memset(&q, 0, sizeof(q));
	memset(&r, 0, sizeof(r));
	q.op = PR_OP_LIVE_INPUT;
	q.space_id = c->space_id;
	if (!api_body_str(c, body, "kind", 32, true, &q.kind) ||
	    !api_body_str(c, body, "button", 16, false, &q.button) ||
	    !api_body_str(c, body, "key", CM_LIVE_KEY_MAX, false, &q.key) ||
	    !api_body_str(c, body, "text", CM_LIVE_TEXT_MAX, false, &q.text) ||
	    !int_member(c, body, "x", &q.x, &has_x) ||
	    !int_member(c, body, "y", &q.y, &has_y) ||
	    !int_member(c, body, "delta_x", &q.delta_x, NULL) ||
	    !int_member(c, body, "delta_y", &q.delta_y, NULL))
		goto out;
	if (!held_by_caller(c) || to_actor(c, &q, &r) != CM_OK ||
	    !record(c, &r.inputs[0], has_x && has_y, q.x, q.y))
		goto out;
	api_ok(c, 200,
	    json_pack("{s:s, s:s, s:s}", "kind", r.inputs[0].kind, "role",
	        r.inputs[0].role ? r.inputs[0].role : "", "name",
	        r.inputs[0].name ? r.inputs[0].name : ""));
out:
	pr_rep_free(&r);
	json_decref(body);
}
