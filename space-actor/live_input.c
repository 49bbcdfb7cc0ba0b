/*
 * live_input.c: an operator's pointer or key on the Space's current page
 * (live.input, live.h).  A pointer's target is found first, with two
 * cheap calls (DOM.getNodeForLocation, then the accessibility node of
 * what it hit), because the input may navigate away from it; then the
 * Input.* events are sent.  The answer says what was done and on what,
 * never the text typed.
 */
#include "live.h"
#include "live_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdp.h"
#include "clock.h"
#include "keys.h"
#include "log.h"

enum {
	IN_HIT,      /* DOM.getNodeForLocation */
	IN_AX,       /* Accessibility.getPartialAXTree */
	IN_SEND,     /* the first Input.* event */
	IN_SEND_TWO, /* a click's release, a key's up */
	IN_DONE,
};

static bool
is_pointer(const char *kind)
{
	return strcmp(kind, "click") == 0 || strcmp(kind, "move") == 0 ||
	       strcmp(kind, "down") == 0 || strcmp(kind, "up") == 0 ||
	       strcmp(kind, "wheel") == 0;
}

/* The refusal of q's fields, or NULL when they are what kind takes. */
static const char *
input_invalid(const struct pr_req *q)
{
	const char *k = q->kind;
	bool ptr = is_pointer(k), buttons;

	if (!ptr && strcmp(k, "key") != 0 && strcmp(k, "text") != 0)
		return "kind is one of click, move, down, up, wheel, key, text";
	if (ptr && (q->x < 0 || q->x >= CM_BROWSER_WIDTH || q->y < 0 ||
	               q->y >= CM_BROWSER_HEIGHT))
		return "x and y lie within the viewport";
	if (!ptr && (q->x != 0 || q->y != 0))
		return "x and y are a pointer's";
	buttons = strcmp(k, "click") == 0 || strcmp(k, "down") == 0 ||
	          strcmp(k, "up") == 0;
	if (q->button != NULL &&
	    (!buttons || (strcmp(q->button, "left") != 0 &&
	                     strcmp(q->button, "middle") != 0 &&
	                     strcmp(q->button, "right") != 0)))
		return "button is left, middle or right, of a click, down or "
		       "up";
	if ((q->delta_x != 0 || q->delta_y != 0) && strcmp(k, "wheel") != 0)
		return "delta_x and delta_y are a wheel's";
	if (q->delta_x < -CM_LIVE_WHEEL_MAX || q->delta_x > CM_LIVE_WHEEL_MAX ||
	    q->delta_y < -CM_LIVE_WHEEL_MAX || q->delta_y > CM_LIVE_WHEEL_MAX)
		return "a wheel's delta is too large";
	if ((q->key != NULL) != (strcmp(k, "key") == 0))
		return "key names the key of a key input, and only its";
	if ((q->text != NULL) != (strcmp(k, "text") == 0))
		return "text is the text of a text input, and only its";
	return NULL;
}

static void input_next(struct act_live *l);

static void
input_reply(void *arg, const json_t *result, const json_t *error)
{
	struct act_live *l = arg;
	struct live_input *in = &l->in;

	in->cmd = 0;
	if (error != NULL && in->step >= IN_SEND) {
		in->failed = true;
		snprintf(in->why, sizeof(in->why),
		    "the page did not take the input");
	} else if (in->step == IN_HIT) {
		json_int_t node = json_integer_value(
		    json_object_get(result, "backendNodeId"));

		in->step = node > 0 ? IN_AX : IN_SEND;
		if (node > 0) {
			in->cmd = act_cdp_call(in->cdp, in->session,
			    "Accessibility.getPartialAXTree",
			    json_pack("{s:I, s:b}", "backendNodeId", node,
			        "fetchRelatives", 1),
			    in->deadline_ms, input_reply, l);
			if (in->cmd < 0)
				in->step = IN_SEND;
			else
				return;
		}
	} else if (in->step == IN_AX) {
		/* The node and its ancestors: the first that says what it is
		 * (a link, a button) rather than a box of text. */
		json_t *nodes = json_object_get(result, "nodes"), *n;
		size_t i;

		json_array_foreach(nodes, i, n)
		{
			const char *role = json_string_value(json_object_get(
			    json_object_get(n, "role"), "value"));
			const char *name = json_string_value(json_object_get(
			    json_object_get(n, "name"), "value"));

			if (json_is_true(json_object_get(n, "ignored")) ||
			    role == NULL || strcmp(role, "generic") == 0 ||
			    strcmp(role, "none") == 0 ||
			    strcmp(role, "StaticText") == 0 ||
			    strcmp(role, "InlineTextBox") == 0)
				continue;
			snprintf(in->role, sizeof(in->role), "%s", role);
			if (name != NULL) {
				char *red =
				    cm_redact_text_max(name, strlen(name),
				        l->secrets, CM_LIVE_TARGET_NAME_MAX);

				snprintf(in->name, sizeof(in->name), "%s",
				    red ? red : "");
				free(red);
			}
			break;
		}
		in->step = IN_SEND;
	} else {
		in->step++;
	}
	input_next(l);
}

/* The mouse event of the input, of CDP type type. */
static json_t *
mouse(const struct live_input *in, const char *type)
{
	json_t *p = json_pack("{s:s, s:I, s:I}", "type", type, "x",
	    (json_int_t)in->x, "y", (json_int_t)in->y);

	if (strcmp(type, "mouseWheel") == 0) {
		json_object_set_new(p, "deltaX", json_integer(in->dx));
		json_object_set_new(p, "deltaY", json_integer(in->dy));
	} else if (strcmp(type, "mouseMoved") != 0) {
		json_object_set_new(p, "button", json_string(in->button));
		json_object_set_new(p, "clickCount", json_integer(1));
	}
	return p;
}

static json_t *
key_event(const struct live_input *in, bool down)
{
	struct cm_key k;
	json_t *p;

	if (cm_key_find(in->key, &k) != 0)
		return NULL;
	p = json_pack("{s:s, s:s, s:i}", "type",
	    down ? (k.text[0] ? "keyDown" : "rawKeyDown") : "keyUp", "key",
	    in->key, "windowsVirtualKeyCode", k.vk);
	if (k.code[0] != '\0')
		json_object_set_new(p, "code", json_string(k.code));
	if (down && k.text[0] != '\0')
		json_object_set_new(p, "text", json_string(k.text));
	return p;
}

/* The Input.* command of the step the input is at; NULL with method
 * NULL when there is none left. */
static json_t *
input_command(const struct live_input *in, const char **method)
{
	bool two = in->step == IN_SEND_TWO;
	const char *k = in->kind;

	*method = "Input.dispatchMouseEvent";
	if (strcmp(k, "click") == 0)
		return mouse(in, two ? "mouseReleased" : "mousePressed");
	if (two && strcmp(k, "key") != 0) {
		*method = NULL;
		return NULL;
	}
	if (strcmp(k, "move") == 0)
		return mouse(in, "mouseMoved");
	if (strcmp(k, "down") == 0)
		return mouse(in, "mousePressed");
	if (strcmp(k, "up") == 0)
		return mouse(in, "mouseReleased");
	if (strcmp(k, "wheel") == 0)
		return mouse(in, "mouseWheel");
	if (strcmp(k, "key") == 0) {
		*method = "Input.dispatchKeyEvent";
		return key_event(in, !two);
	}
	*method = "Input.insertText";
	return json_pack("{s:s}", "text", in->text);
}

static void
input_end(struct act_live *l)
{
	struct live_input *in = &l->in;
	struct pr_rep r;

	in->busy = false;
	/* The typed text goes no further than the page. */
	memset(in->text, 0, sizeof(in->text));
	if (in->failed) {
		live_reply_err(l, CM_E_RUNTIME_ERROR, in->why);
		return;
	}
	memset(&r, 0, sizeof(r));
	if ((r.inputs = pr_rep_alloc(&r, sizeof(*r.inputs))) == NULL) {
		live_reply_err(l, CM_E_INTERNAL, "out of memory");
		return;
	}
	r.n_inputs = 1;
	r.inputs[0].kind = pr_rep_strdup(&r, in->kind);
	r.inputs[0].role = in->role[0] ? pr_rep_strdup(&r, in->role) : NULL;
	r.inputs[0].name = in->name[0] ? pr_rep_strdup(&r, in->name) : NULL;
	live_reply(l, &r);
}

static void
input_next(struct act_live *l)
{
	struct live_input *in = &l->in;
	const char *method;
	json_t *params;

	if (in->failed || in->step >= IN_DONE) {
		input_end(l);
		return;
	}
	if ((params = input_command(in, &method)) == NULL) {
		if (method != NULL) {
			in->failed = true;
			snprintf(in->why, sizeof(in->why),
			    "that key is not one the page knows");
		}
		input_end(l);
		return;
	}
	in->cmd = act_cdp_call(in->cdp, in->session, method, params,
	    in->deadline_ms, input_reply, l);
	if (in->cmd < 0) {
		in->cmd = 0;
		in->failed = true;
		snprintf(
		    in->why, sizeof(in->why), "the input could not be sent");
		input_end(l);
	}
}

void
live_input_begin(
    struct act_live *l, struct act_session *s, const struct pr_req *q)
{
	struct live_input *in = &l->in;
	const char *bad = input_invalid(q);
	int64_t now = cm_mono_ms();

	if (bad != NULL) {
		live_reply_err(l, CM_E_INVALID_REQUEST, bad);
		return;
	}
	if (s == NULL || s->state != ACT_SESSION_READY || !s->page_ok ||
	    s->cdp == NULL) {
		live_reply_err(l, CM_E_RUNTIME_NOT_READY,
		    "the Space has no page to take input now");
		return;
	}
	if (now - in->window_ms >= 1000) {
		in->window_ms = now;
		in->in_window = 0;
	}
	if (in->in_window >= CM_LIVE_INPUT_PER_S) {
		live_reply_err(l, CM_E_QUOTA_EXCEEDED,
		    "at most " CM_STR(CM_LIVE_INPUT_PER_S) " inputs a second");
		return;
	}
	in->in_window++;
	in->busy = true;
	in->failed = false;
	in->role[0] = in->name[0] = '\0';
	snprintf(in->kind, sizeof(in->kind), "%s", q->kind);
	in->x = q->x;
	in->y = q->y;
	in->dx = q->delta_x;
	in->dy = q->delta_y;
	snprintf(in->button, sizeof(in->button), "%s",
	    q->button ? q->button : "left");
	snprintf(in->key, sizeof(in->key), "%s", q->key ? q->key : "");
	snprintf(in->text, sizeof(in->text), "%s", q->text ? q->text : "");
	snprintf(in->session, sizeof(in->session), "%s", s->cur->session);
	in->cdp = s->cdp;
	in->deadline_ms = now + CM_LIVE_INPUT_MS;
	if (strcmp(q->kind, "key") == 0 && q->key != NULL) {
		struct cm_key k;

		if (cm_key_find(q->key, &k) != 0) {
			in->busy = false;
			live_reply_err(l, CM_E_INVALID_REQUEST,
			    "that key is not one the page knows");
			return;
		}
	}
	if (!is_pointer(in->kind)) {
		in->step = IN_SEND;
		input_next(l);
		return;
	}
	in->step = IN_HIT;
	in->cmd = act_cdp_call(in->cdp, in->session, "DOM.getNodeForLocation",
	    json_pack("{s:I, s:I, s:b}", "x", (json_int_t)in->x, "y",
	        (json_int_t)in->y, "includeUserAgentShadowDOM", 0),
	    in->deadline_ms, input_reply, l);
	if (in->cmd < 0) {
		in->cmd = 0;
		in->step = IN_SEND;
		input_next(l);
	}
}

void
live_input_tick(struct act_live *l, struct act_session *s, int64_t now)
{
	struct live_input *in = &l->in;

	if (!in->busy)
		return;
	/* A connection that went took its commands' callbacks with it (a
	 * client freed without calling back): nothing will answer. */
	if (s == NULL || s->cdp != in->cdp || now >= in->deadline_ms) {
		if (s != NULL && s->cdp == in->cdp && in->cmd > 0)
			act_cdp_forget(s->cdp, in->cmd);
		in->cmd = 0;
		in->failed = true;
		snprintf(in->why, sizeof(in->why),
		    "the page did not answer the input in time");
		input_end(l);
	}
}
