/*
 * page_modal.c: the page's dialogs as modal state.  A dialog other than a
 * beforeunload stays open until the agent answers it (handle_dialog), or
 * is answered at once as the Space's dialog policy says.  While one is
 * open the page's scripts are stopped inside it, so nothing but
 * handle_dialog and snapshot can act on the page: every other call fails
 * at once with dialog_open.  A dialog that opens during a call ends that
 * call at once (its commands would wait until the dialog is answered),
 * and the call says what reached the page before it opened.
 */
#include "page.h"
#include "page_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "redact.h"

/* s (NULL: "") redacted with the redactor's patterns and cut to
 * CM_DIALOG_MESSAGE_MAX into out, as the dialog's event shows it; the
 * actor redacts the instance's literal secrets from the result again. */
static void
modal_text(char *out, size_t len, const char *s)
{
	char *r;

	if (s == NULL)
		s = "";
	r = cm_redact_text_max(s, strlen(s), NULL, CM_DIALOG_MESSAGE_MAX);
	snprintf(out, len, "%s", r != NULL ? r : "");
	free(r);
}

/* The dialog d as a result shows it. */
static json_t *
modal_json(const struct act_page_dialog *d)
{
	json_t *o =
	    json_pack("{s:s, s:s}", "type", d->type, "message", d->message);

	if (o != NULL && d->has_default)
		json_object_set_new(
		    o, "default_prompt", json_string(d->default_prompt));
	return o;
}

json_t *
page_modal_open_json(const struct act_page *p)
{
	json_t *o;

	if (!p->dialog.open || (o = modal_json(&p->dialog)) == NULL)
		return NULL;
	json_object_set_new(o, "open", json_true());
	return o;
}

/* The step a dialog's Page.handleJavaScriptDialog needs no reply of. */
static void
modal_answer(struct act_page *p, bool accept, const char *text)
{
	json_t *params = json_pack("{s:b}", "accept", accept);

	if (text != NULL)
		json_object_set_new(params, "promptText", json_string(text));
	act_cdp_call(p->cdp, p->session, "Page.handleJavaScriptDialog", params,
	    cm_mono_ms() + CM_BROWSER_START_MS, NULL, NULL);
}

/* The input of the call had reached the page when the command awaited
 * (or, with none, the last one) was this. */
static bool
modal_input_landed(const struct act_page *p)
{
	if (p->acted)
		return true;
	if (strcmp(p->cmd_method, "Input.insertText") == 0)
		return true;
	if (strcmp(p->cmd_method, "Input.dispatchKeyEvent") == 0)
		return true;
	return strcmp(p->cmd_method, "Input.dispatchMouseEvent") == 0 &&
	       strcmp(p->cmd_type, "mouseReleased") == 0;
}

/* What an action whose input reached the page would have said. */
static json_t *
modal_action_result(struct act_page *p)
{
	json_t *r = p->keep;

	p->keep = NULL;
	if (json_is_object(r))
		return r;
	json_decref(r);
	if (strcmp(p->capability, "click") == 0)
		return json_pack("{s:b}", "clicked", 1);
	if (strcmp(p->capability, "type") == 0)
		return json_pack("{s:b}", "typed", 1);
	if (strcmp(p->capability, "press") == 0)
		return json_pack(
		    "{s:O}", "pressed", json_object_get(p->args, "key"));
	return json_object();
}

static bool
modal_moves_page(const char *cap)
{
	return strcmp(cap, "navigate") == 0 || strcmp(cap, "back") == 0 ||
	       strcmp(cap, "forward") == 0 || strcmp(cap, "reload") == 0;
}

/*
 * A dialog opened, and stays open, during the call: its command (if any)
 * would wait for the answer, so the call ends now.  One that moves the
 * page ends with where the page is; an action whose input reached the
 * page, with what it did; any other call did not get to its end, and
 * fails with dialog_open (or outcome_unknown when a mouse button was
 * pressed and not yet released).  A command of the browser's own session
 * (the url and title of the call's last step) is not held by the dialog:
 * the call ends as it would.
 */
static void
modal_interrupt(struct act_page *p)
{
	bool landed = modal_input_landed(p);
	bool browser_cmd =
	    p->cmd > 0 && strcmp(p->cmd_method, "Target.getTargetInfo") == 0;
	json_t *r;

	if (browser_cmd)
		return;
	page_stop(p);
	p->look_again = p->keep_waiting = false;
	p->dl_wanted = false;
	p->dl_wait_end_ms = -1;
	if (modal_moves_page(p->capability)) {
		page_info(p);
		return;
	}
	if (landed) {
		r = modal_action_result(p);
		p->keep = r;
		page_info(p);
		return;
	}
	if (strcmp(p->cmd_method, "Input.dispatchMouseEvent") == 0 &&
	    strcmp(p->cmd_type, "mousePressed") == 0) {
		page_fail(p, CM_E_OUTCOME_UNKNOWN,
		    "the mouse button was pressed on the element and the page "
		    "opened a %s dialog (\"%s\") before it was released; "
		    "answer it with handle_dialog",
		    p->dialog.type, p->dialog.message);
		return;
	}
	page_fail(p, CM_E_DIALOG_OPEN,
	    "the page opened a %s dialog (\"%s\") before %s was done; "
	    "answer it with handle_dialog",
	    p->dialog.type, p->dialog.message, p->capability);
}

/*
 * Page.javascriptDialogOpening.  Leaving a page that asks first
 * (beforeunload) is what the call that leaves it means: it is accepted,
 * and the call's result says so.  Any other dialog is answered as the
 * policy says, or stays open.  Either way on_event is told, and a call
 * under way reports it in its result.
 */
void
page_dialog(struct act_page *p, const json_t *params)
{
	const char *type = json_string_value(json_object_get(params, "type"));
	const char *message =
	    json_string_value(json_object_get(params, "message"));
	const char *def = NULL;
	bool leave = type != NULL && strcmp(type, "beforeunload") == 0;
	bool in_call = p->busy && !p->done;
	struct act_page_event ev = {.kind = CM_EV_DIALOG};
	struct act_page_dialog d = {.open = false};

	if (type != NULL && strcmp(type, "prompt") == 0) {
		def =
		    json_string_value(json_object_get(params, "defaultPrompt"));
		if (def == NULL)
			def = "";
	}
	ev.type = type;
	ev.message = message != NULL ? message : "";
	ev.default_prompt = def;
	if (leave) {
		modal_answer(p, true, NULL);
		if (in_call)
			p->left_asking = true;
		ev.accepted = true;
		page_tell(p, &ev);
		return;
	}
	snprintf(d.type, sizeof(d.type), "%s", type != NULL ? type : "alert");
	modal_text(d.message, sizeof(d.message), message);
	d.has_default = def != NULL;
	if (def != NULL)
		modal_text(d.default_prompt, sizeof(d.default_prompt), def);
	if (p->dialog_policy != ACT_DIALOG_MODAL) {
		ev.accepted = p->dialog_policy == ACT_DIALOG_ACCEPT;
		/* An accepted prompt answers its own default. */
		modal_answer(p, ev.accepted, ev.accepted ? def : NULL);
		page_tell(p, &ev);
		if (in_call) {
			json_decref(p->call_dialog);
			p->call_dialog = modal_json(&d);
			json_object_set_new(p->call_dialog, "accepted",
			    json_boolean(ev.accepted));
		}
		return;
	}
	d.open = true;
	p->dialog = d;
	ev.accepted = false;
	page_tell(p, &ev);
	if (!in_call)
		return;
	json_decref(p->call_dialog);
	p->call_dialog = page_modal_open_json(p);
	modal_interrupt(p);
}

void
page_dialog_closed(struct act_page *p)
{
	p->dialog.open = false;
}

bool
page_modal_takes(struct act_page *p, const char *capability)
{
	if (!p->dialog.open || strcmp(capability, "handle_dialog") == 0 ||
	    strcmp(capability, "tabs") == 0)
		return false;
	if (strcmp(capability, "snapshot") == 0) {
		/* The page's scripts wait inside the dialog, the snapshot's
		 * too: the snapshot is its header, which shows the dialog. */
		p->keep = json_pack("{s:s, s:b, s:s}", "snapshot", "",
		    "truncated", 0, "note",
		    "the page is behind its dialog: its content cannot be read "
		    "until the dialog is answered (handle_dialog)");
		page_info(p);
		return true;
	}
	page_fail(p, CM_E_DIALOG_OPEN,
	    "a %s dialog is open (\"%s\"): answer it with handle_dialog first",
	    p->dialog.type, p->dialog.message);
	return true;
}

/* ---- handle_dialog */

static void
modal_handled(struct act_page *p, const json_t *result)
{
	bool accept = json_is_true(json_object_get(p->args, "accept"));
	const json_t *text = json_object_get(p->args, "prompt_text");
	json_t *r;

	(void)result;
	r = json_pack("{s:s, s:b}", "type", p->dialog.type, "accepted", accept);
	if (accept && strcmp(p->dialog.type, "prompt") == 0)
		json_object_set_new(r, "prompt_text",
		    json_is_string(text) ? json_incref((json_t *)text)
		                         : json_string(""));
	p->dialog.open = false;
	/* The page goes on from its dialog: what it does next (a navigation
	 * its handler starts) is waited for as an action's is. */
	page_action_done(p, json_pack("{s:o}", "handled", r));
}

void
cap_handle_dialog(struct act_page *p)
{
	bool accept = json_is_true(json_object_get(p->args, "accept"));
	const json_t *text = json_object_get(p->args, "prompt_text");
	json_t *params;

	if (!p->dialog.open) {
		page_fail(p, CM_E_NO_DIALOG,
		    "the page has no dialog open; nothing was answered");
		return;
	}
	/* An accepted prompt gets prompt_text, or "" (not its default:
	 * what the agent did not type is not typed). */
	params = json_pack("{s:b}", "accept", accept);
	if (accept && strcmp(p->dialog.type, "prompt") == 0)
		json_object_set_new(params, "promptText",
		    json_is_string(text) ? json_incref((json_t *)text)
		                         : json_string(""));
	page_send(p, "Page.handleJavaScriptDialog", params, modal_handled);
}
