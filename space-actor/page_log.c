/*
 * page_log.c: page events queued for the Space's log (page_log.h).  Each
 * is bounded and redacted as it is queued, with the instance's literal
 * secrets, as a task's result is.
 */
#include "page_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"

_Static_assert(
    6 * CM_URL_MAX + 64 <= CM_PAGE_EVENT_PAYLOAD_MAX &&
        6 * 2 * CM_DIALOG_MESSAGE_MAX + 128 <= CM_PAGE_EVENT_PAYLOAD_MAX &&
        6 * CM_DOWNLOAD_NAME_MAX + 128 <= CM_PAGE_EVENT_PAYLOAD_MAX,
    "a page event's payload, its strings escaped, must fit its bound");

/* s redacted and cut to max bytes into *out (malloc'd), as a task's
 * error message is.  Returns false when s is NULL or memory ran out. */
static bool
bounded(const char *s, size_t max, const struct cm_secrets *sec, char **out)
{
	*out = s != NULL ? cm_redact_text_max(s, strlen(s), sec, max) : NULL;
	return *out != NULL;
}

char *
act_page_log_payload(
    const struct act_page_event *ev, const struct cm_secrets *sec)
{
	char *a = NULL, *b = NULL, *out = NULL;
	json_t *o = NULL;

	switch (ev->kind) {
	case CM_EV_DIALOG:
		if (ev->type == NULL ||
		    !bounded(ev->message, CM_DIALOG_MESSAGE_MAX, sec, &a))
			break;
		o = json_pack("{s:s, s:s, s:b}", "type", ev->type, "message", a,
		    "accepted", ev->accepted);
		if (o != NULL && ev->default_prompt != NULL &&
		    (!bounded(
		         ev->default_prompt, CM_DIALOG_MESSAGE_MAX, sec, &b) ||
		        json_object_set_new(
		            o, "default_prompt", json_string(b)) != 0)) {
			json_decref(o);
			o = NULL;
		}
		break;
	case CM_EV_TAB_OPENED:
		if (bounded(ev->url, CM_URL_MAX, sec, &a))
			o = json_pack(
			    "{s:s, s:b}", "url", a, "closed", ev->closed);
		break;
	case CM_EV_DOWNLOAD:
		if (ev->state != NULL &&
		    bounded(ev->name, CM_DOWNLOAD_NAME_MAX, sec, &a))
			o = json_pack("{s:s, s:s, s:I}", "name", a, "state",
			    ev->state, "bytes",
			    (json_int_t)(ev->bytes > 0 ? ev->bytes : 0));
		/* The artifact's name and sha256 are the page's own (no
		 * secret can be in them: [A-Za-z0-9._-] and hex). */
		if (o != NULL && ev->artifact != NULL && ev->sha256 != NULL) {
			json_object_set_new(
			    o, "artifact", json_string(ev->artifact));
			json_object_set_new(
			    o, "sha256", json_string(ev->sha256));
		}
		if (o != NULL && ev->too_large)
			json_object_set_new(o, "too_large", json_true());
		break;
	default:
		break;
	}
	if (o != NULL)
		out = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	free(a);
	free(b);
	return out;
}

int
act_page_log_add(struct act_page_log *l, const struct act_page_event *ev,
    const char *task_id, const struct cm_secrets *sec, const char *space_id)
{
	struct act_page_ev *q;
	int64_t now = cm_mono_ms();
	char *payload;

	if (!cm_event_kind_of_page(ev->kind))
		return 0;
	if (now - l->window_ms >= 1000) {
		l->window_ms = now;
		l->window_n = 0;
	}
	if (l->n == CM_ACTOR_PAGE_EVENTS_MAX ||
	    l->window_n >= CM_ACTOR_PAGE_EVENTS_PER_S) {
		cm_debug(
		    "actor: space %s: a %s event of the page, not recorded",
		    space_id, cm_event_kind_name(ev->kind));
		return 0;
	}
	if ((payload = act_page_log_payload(ev, sec)) == NULL) {
		cm_warnx("actor: space %s: a %s event of the page could not be "
		         "made",
		    space_id, cm_event_kind_name(ev->kind));
		return 0;
	}
	q = &l->ev[l->n++];
	l->window_n++;
	q->kind = ev->kind;
	q->payload = payload;
	snprintf(q->task_id, sizeof(q->task_id), "%s",
	    task_id != NULL ? task_id : "");
	cm_uuid7(q->op_id);
	return 1;
}

void
act_page_log_pop(struct act_page_log *l)
{
	if (l->n == 0)
		return;
	free(l->ev[0].payload);
	memmove(&l->ev[0], &l->ev[1], (size_t)(--l->n) * sizeof(l->ev[0]));
}

void
act_page_log_clear(struct act_page_log *l)
{
	while (l->n > 0)
		act_page_log_pop(l);
}
