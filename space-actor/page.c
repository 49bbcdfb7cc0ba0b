/*
 * page.c: each capability as a fixed sequence of CDP calls.
 *
 * A sequence is a chain of steps: each sends one command and names the
 * step that takes its reply (p->next).  Only one command is awaited at a
 * time, so abandoning a call is forgetting that command.  Errors of the
 * browser end the call with runtime_error; a connection that ends, with
 * runtime_crashed; a command past the task's deadline, with task_timeout.
 *
 * This file owns a call's life: the steps every capability is made of
 * (page_int.h; sending a command and taking its reply is page_cmd.c's), the
 * capability table, the CDP events and the reset.  The capabilities are
 * page_nav.c's, page_read.c's, page_input.c's, page_capture.c's, page_form.c's,
 * page_pointer.c's and page_modal.c's; the interception of the page's requests
 * is page_fetch.c's; its tabs and downloads are page_events.c's and
 * page_download.c's, its dialogs page_modal.c's and the header of its results
 * page_header.c's.
 */
#include "page.h"
#include "page_int.h"

#include "outline.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "log.h"

/*
 * The constant scripts.  Each is a function called on an element (or the
 * document) with JSON arguments; none is ever built from input.
 */
static const char JS_QUERY[] = "function(s){return this.querySelector(s);}";

/* ---- the call's end */

void
page_end(struct act_page *p, enum cm_err err, json_t *result)
{
	/* A download the call began is its artifact: the call waits for its
	 * end (page_download.c ends it then), bounded by the task's time. */
	if (err == CM_OK && json_is_object(result) && p->dl_began &&
	    strcmp(p->dl_state, "in_progress") == 0 && p->dl_held == NULL) {
		p->dl_held = result;
		p->next = NULL;
		p->until = ACT_UNTIL_NONE;
		p->grace_at_ms = -1;
		p->poll_at_ms = -1;
		return;
	}
	json_decref(p->dl_held); /* ended otherwise: its time ran out */
	p->dl_held = NULL;
	if (page_snapshot_after(p, &err, &result))
		return;
	if (err == CM_OK && json_is_object(result) && !p->info_fresh) {
		page_header_end(p, result);
		return;
	}
	p->out.err = err;
	if (json_is_object(result) && p->tabs_opened > 0)
		json_object_set_new(
		    result, "tabs_opened", json_integer(p->tabs_opened));
	if (json_is_object(result) && p->tabs_refused > 0)
		json_object_set_new(
		    result, "tabs_refused", json_integer(p->tabs_refused));
	if (json_is_object(result) && p->dl_began)
		json_object_set_new(
		    result, "download", page_download_result(p));
	if (json_is_object(result) && p->call_dialog != NULL)
		json_object_set(result, "dialog", p->call_dialog);
	if (json_is_object(result))
		page_header_add(p, result);
	if (result != NULL) {
		p->out.result = json_dumps(result, JSON_COMPACT);
		json_decref(result);
		if (p->out.result == NULL && err == CM_OK) {
			p->out.err = CM_E_RUNTIME_ERROR;
			snprintf(p->out.message, sizeof(p->out.message),
			    "the result could not be serialized");
		}
	}
	p->done = true;
	p->next = NULL;
	p->until = ACT_UNTIL_NONE;
	p->grace_at_ms = -1;
	p->poll_at_ms = -1;
}

void
page_fail(struct act_page *p, enum cm_err err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->out.message, sizeof(p->out.message), fmt, ap);
	va_end(ap);
	page_end(p, err, NULL);
}

void
page_not_found(struct act_page *p, const char *what)
{
	page_fail(p, CM_E_ELEMENT_NOT_FOUND,
	    "%s; take a new snapshot and use its refs", what);
}

/* ---- url and title: the last step of most capabilities */

static void
page_info_done(struct act_page *p, const json_t *result)
{
	const json_t *info = json_object_get(result, "targetInfo");
	json_t *out = p->keep != NULL ? p->keep : json_object();

	p->keep = NULL;
	p->info_fresh = true;
	act_page_info_changed(p, info);
	/* A document committed and not yet parsed: the target still shows
	 * the old one's title (and may show no url yet).  Its url is the
	 * commit's; its title is not known. */
	if (p->nav_committed && !p->nav_dcl && p->nav_url[0] != '\0') {
		json_object_set_new(out, "url", json_string(p->nav_url));
		json_object_set_new(out, "title", json_null());
	} else {
		json_object_set(out, "url", json_object_get(info, "url"));
		json_object_set(out, "title", json_object_get(info, "title"));
	}
	json_object_set_new(out, "loading", json_boolean(p->loading));
	if (p->left_asking)
		json_object_set_new(out, "dialog",
		    json_pack(
		        "{s:s, s:b}", "type", "beforeunload", "accepted", 1));
	if (strcmp(p->capability, "navigate") == 0)
		json_object_set_new(out, "status",
		    p->doc_status > 0 ? json_integer(p->doc_status)
		                      : json_null());
	page_end(p, CM_OK, out);
}

void
page_blocked(struct act_page *p)
{
	page_fail(p, CM_E_HOST_NOT_ALLOWED,
	    "the instance's network policy does not allow %s", p->blocked_host);
}

void
page_info(struct act_page *p)
{
	/* A redirect may have led the document where it may not go. */
	if (p->blocked_host[0] != '\0') {
		page_blocked(p);
		return;
	}
	page_send_to(p, true, "Target.getTargetInfo",
	    json_pack("{s:s}", "targetId", p->target), page_info_done);
}

/* ---- elements: by ref or by selector, into p->object */

static void
page_queried(struct act_page *p, const json_t *result)
{
	const json_t *r = json_object_get(result, "result");
	const char *id = json_string_value(json_object_get(r, "objectId"));

	if (json_object_get(result, "exceptionDetails") != NULL) {
		/* The schema cannot tell a CSS selector: one the browser
		 * cannot read matches nothing. */
		page_fail(p, CM_E_ELEMENT_NOT_FOUND,
		    "the selector is not valid CSS, so it matches nothing; "
		    "take a snapshot and use a ref");
		return;
	}
	if (id == NULL || strlen(id) >= sizeof(p->object)) {
		page_not_found(p, "no element matches the selector");
		return;
	}
	snprintf(p->object, sizeof(p->object), "%s", id);
	p->then(p);
}

static void
page_document(struct act_page *p, const json_t *result)
{
	const char *id = json_string_value(
	    json_object_get(json_object_get(result, "result"), "objectId"));
	const char *sel =
	    json_string_value(json_object_get(p->args, "selector"));

	if (id == NULL || strlen(id) >= sizeof(p->object)) {
		page_fail(p, CM_E_RUNTIME_ERROR, "the page has no document");
		return;
	}
	snprintf(p->object, sizeof(p->object), "%s", id);
	if (sel == NULL) { /* the document itself */
		p->then(p);
		return;
	}
	page_call_on(p, JS_QUERY, json_pack("[s]", sel), true, page_queried);
}

/* Finds the element the args name (ref, selector, or with neither and
 * whole_document, the document), then runs then. */
void
page_element(
    struct act_page *p, bool whole_document, void (*then)(struct act_page *p))
{
	const char *ref = json_string_value(json_object_get(p->args, "ref"));
	const char *sel =
	    json_string_value(json_object_get(p->args, "selector"));

	p->then = then;
	if (ref != NULL) {
		page_snapshot_element(p, ref);
		return;
	}
	if (sel == NULL && !whole_document) {
		page_fail(
		    p, CM_E_INVALID_ARGS, "name an element by ref or selector");
		return;
	}
	page_send(p, "Runtime.evaluate",
	    json_pack("{s:s}", "expression", "document"), page_document);
}

/* ---- the table */

static const struct {
	const char *name;
	void (*begin)(struct act_page *p);
} caps[] = {
    {"navigate", cap_navigate},
    {"back", cap_back},
    {"snapshot", cap_snapshot},
    {"extract_text", cap_extract_text},
    {"click", cap_click},
    {"type", cap_type},
    {"press", cap_press},
    {"wait_for", cap_wait_for},
    {"scroll", cap_scroll},
    {"screenshot", cap_screenshot},
    {"fill", cap_fill},
    {"select_option", cap_select_option},
    {"check", cap_check},
    {"hover", cap_hover},
    {"drag", cap_drag},
    {"forward", cap_forward},
    {"reload", cap_reload},
    {"handle_dialog", cap_handle_dialog},
    {"upload", cap_upload},
    {"tabs", cap_tabs},
};

#define N_CAPS (sizeof(caps) / sizeof(caps[0]))

bool
act_page_knows(const char *capability)
{
	for (size_t i = 0; i < N_CAPS; i++)
		if (strcmp(caps[i].name, capability) == 0)
			return true;
	return false;
}

void
act_page_init(struct act_page *p, struct act_cdp *cdp,
    const struct cm_policy *policy, const char *session, const char *target)
{
	memset(p, 0, sizeof(*p));
	p->cdp = cdp;
	p->policy = policy;
	snprintf(p->session, sizeof(p->session), "%s", session);
	snprintf(p->target, sizeof(p->target), "%s", target);
	p->poll_at_ms = -1;
}

void
act_page_fini(struct act_page *p)
{
	act_page_abort(p);
	page_snapshot_fini(p);
	for (size_t i = 0; i < 2; i++)
		if (p->reset_cmd[i] > 0)
			act_cdp_forget(p->cdp, p->reset_cmd[i]);
	p->resetting = 0;
	page_frames_fini(p);
	free(p->refs);
	p->refs = NULL;
	p->n_refs = 0;
	json_decref(p->call_dialog);
	p->call_dialog = NULL;
}

int
act_page_start(struct act_page *p, const char *capability, const json_t *args,
    int64_t deadline_ms)
{
	size_t i;

	if (p->busy)
		return -1;
	memset(&p->out, 0, sizeof(p->out));
	p->busy = true;
	p->done = false;
	p->started_ms = cm_mono_ms();
	p->deadline_ms = deadline_ms;
	p->poll_at_ms = -1;
	page_nav_arm(p, ACT_UNTIL_NONE);
	p->left_asking = false;
	p->tabs_opened = p->tabs_refused = 0;
	p->dl_began = p->dl_wanted = p->dl_expected = false;
	p->dl_too_large = false;
	p->dl_artifact[0] = p->dl_sha256[0] = '\0';
	json_decref(p->dl_held);
	p->dl_held = NULL;
	p->dl_wait_end_ms = -1;
	p->look_again = p->keep_waiting = false;
	p->snap_held = NULL;
	p->snap_ran = false;
	p->blocked_host[0] = '\0';
	p->doc_host[0] = '\0';
	json_decref(p->call_dialog);
	p->call_dialog = NULL;
	p->cmd_method[0] = p->cmd_type[0] = '\0';
	p->acted = false;
	p->info_fresh = false;
	p->at[0] = '\0';
	p->at_dx = p->at_dy = 0;
	snprintf(p->capability, sizeof(p->capability), "%s", capability);
	/* A copy: some capabilities fill in defaults. */
	p->args = json_is_object(args) ? json_deep_copy(args) : json_object();
	for (i = 0; i < N_CAPS; i++)
		if (strcmp(caps[i].name, capability) == 0)
			break;
	if (i == N_CAPS)
		page_fail(p, CM_E_CAPABILITY_UNKNOWN,
		    "the browser runtime has no such capability");
	else if (p->crashed)
		page_fail(p, CM_E_RUNTIME_CRASHED, "the page crashed");
	else if (!page_modal_takes(p, capability))
		caps[i].begin(p);
	return 0;
}

/* Whether the event's frameId is the main frame's (any frame, before the
 * main frame is known). */
static bool
page_main_frame(const struct act_page *p, const json_t *params)
{
	const char *id = json_string_value(json_object_get(params, "frameId"));

	return id != NULL && (p->frame[0] == '\0' || strcmp(id, p->frame) == 0);
}

void
act_page_event(struct act_page *p, const char *session, const char *method,
    const json_t *params)
{
	const json_t *frame;
	const char *id;

	if (session == NULL)
		return;
	if (strcmp(session, p->session) != 0) {
		/* Another session's: a frame's, none of the main frame's. */
		page_frames_event(p, session, method, params);
		return;
	}
	if (strcmp(method, "Fetch.requestPaused") == 0) {
		page_request_paused(p, p->session, params);
	} else if (strcmp(method, "Fetch.authRequired") == 0) {
		page_auth_required(p, p->session, params);
	} else if (strcmp(method, "Target.attachedToTarget") == 0) {
		page_frames_attached(p, p->session, params);
	} else if (strcmp(method, "Target.detachedFromTarget") == 0) {
		page_frames_detached(p, params);
	} else if (strcmp(method, "Page.frameDetached") == 0) {
		page_frames_gone(p, p->session,
		    json_string_value(json_object_get(params, "frameId")));
	} else if (strcmp(method, "Page.frameNavigated") == 0) {
		frame = json_object_get(params, "frame");
		id = json_string_value(json_object_get(frame, "id"));
		if (id != NULL && json_object_get(frame, "parentId") == NULL) {
			snprintf(p->frame, sizeof(p->frame), "%s", id);
			page_nav_url(p,
			    json_string_value(json_object_get(frame, "url")));
			p->commits++;
			/* A new document: its refs and world are new too. */
			page_snapshot_new_document(p);
			page_nav_event(p, PAGE_NAV_COMMITTED);
			page_wait_committed(p);
		} else if (id != NULL) {
			page_frames_gone(
			    p, p->session, id); /* a new document */
		}
	} else if (strcmp(method, "Page.navigatedWithinDocument") == 0) {
		if (page_main_frame(p, params)) {
			page_nav_url(p,
			    json_string_value(json_object_get(params, "url")));
			page_nav_event(p, PAGE_NAV_SAME_DOC);
		}
	} else if (strcmp(method, "Page.frameRequestedNavigation") == 0) {
		/* Only a navigation of this tab moves the page. */
		const char *how =
		    json_string_value(json_object_get(params, "disposition"));

		if (page_main_frame(p, params) && how != NULL &&
		    strcmp(how, "currentTab") == 0)
			page_nav_event(p, PAGE_NAV_REQUESTED);
	} else if (strcmp(method, "Page.frameStartedLoading") == 0) {
		if (page_main_frame(p, params)) {
			p->loading = true;
			page_nav_event(p, PAGE_NAV_REQUESTED);
		}
	} else if (strcmp(method, "Page.frameStoppedLoading") == 0) {
		if (page_main_frame(p, params)) {
			p->loading = false;
			page_nav_event(p, PAGE_NAV_STOPPED);
		}
	} else if (strcmp(method, "Page.domContentEventFired") == 0) {
		page_nav_event(p, PAGE_NAV_DCL);
	} else if (strcmp(method, "Page.loadEventFired") == 0) {
		/* The main frame's document has loaded: its stop of loading
		 * comes just after, maybe after a reply the call ends on. */
		p->loading = false;
		page_nav_event(p, PAGE_NAV_LOAD);
	} else if (strcmp(method, "Page.javascriptDialogOpening") == 0) {
		page_dialog(p, params);
	} else if (strcmp(method, "Page.javascriptDialogClosed") == 0) {
		page_dialog_closed(p);
	} else if (strcmp(method, "Page.windowOpen") == 0) {
		page_window_open(p, params);
	} else if (strcmp(method, "Input.dragIntercepted") == 0) {
		page_drag_intercepted(p, params);
	} else if (strcmp(method, "Inspector.targetCrashed") == 0) {
		act_page_lost(p, "the page crashed");
	}
}

int64_t
act_page_tick(struct act_page *p, int64_t now_ms)
{
	if (!p->busy)
		return -1;
	/* An outcome decided without the browser (a stale ref, an unknown
	 * capability) waits for no event: it is taken at the next turn. */
	if (p->done)
		return now_ms;
	if (now_ms >= p->deadline_ms && p->cmd == 0) {
		page_fail(p, CM_E_TASK_TIMEOUT, "the task's time ran out");
		return now_ms;
	}
	page_nav_due(p, now_ms);
	if (p->dl_wait_end_ms >= 0 && now_ms >= p->dl_wait_end_ms &&
	    p->cmd == 0) {
		page_fail(p, CM_E_RUNTIME_ERROR,
		    "the document was a download, and the browser did not "
		    "begin it");
		return now_ms;
	}
	if (p->done)
		return now_ms;
	if (p->poll_at_ms >= 0 && now_ms >= p->poll_at_ms) {
		p->poll_at_ms = -1;
		page_wait_due(p);
	}
	if (p->done)
		return now_ms;
	if (p->dl_wait_end_ms >= 0 &&
	    (p->poll_at_ms < 0 || p->dl_wait_end_ms < p->poll_at_ms))
		return p->dl_wait_end_ms;
	if (p->grace_at_ms >= 0 &&
	    (p->poll_at_ms < 0 || p->grace_at_ms < p->poll_at_ms))
		return p->grace_at_ms;
	return p->poll_at_ms >= 0 ? p->poll_at_ms : p->deadline_ms;
}

/* Drops what the call held: its args, and the results it was building
 * or holding (a failed one's, one waiting for its download or its
 * snapshot, its dialog, its end's). */
static void
page_forget_call(struct act_page *p)
{
	json_t **held[] = {&p->args, &p->keep, &p->dl_held, &p->snap_held,
	    &p->call_dialog, &p->ending, &p->listen_ids, &p->listened};

	for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++) {
		json_decref(*held[i]);
		*held[i] = NULL;
	}
}

bool
act_page_take(struct act_page *p, struct act_outcome *out)
{
	if (!p->busy || !p->done)
		return false;
	*out = p->out;
	memset(&p->out, 0, sizeof(p->out));
	page_forget_call(p);
	p->busy = p->done = false;
	page_snapshot_ahead(p);
	return true;
}

/* A reply to one of the reset's commands; any error means not clean. */
static void
page_reset_reply(void *arg, const json_t *result, const json_t *error)
{
	struct act_page *p = arg;

	(void)result;
	if (p->resetting == 0)
		return;
	/* A script ended by terminateExecution reports an error: that is
	 * the reset working.  Only silence or a lost browser is not. */
	if (error != NULL) {
		json_int_t code =
		    json_integer_value(json_object_get(error, "code"));

		if (code == ACT_CDP_E_TIMEOUT || code == ACT_CDP_E_CLOSED)
			p->reset_failed = true;
	}
	p->resetting--;
}

int
act_page_reset(struct act_page *p)
{
	static const char *const steps[] = {
	    "Page.stopLoading", "Runtime.terminateExecution"};
	int64_t deadline = cm_mono_ms() + CM_PAGE_RESET_MS;

	p->reset_failed = false;
	p->resetting = 0;
	for (size_t i = 0; i < 2; i++) {
		p->reset_cmd[i] = act_cdp_call(p->cdp, p->session, steps[i],
		    NULL, deadline, page_reset_reply, p);
		if (p->reset_cmd[i] < 0) {
			p->reset_cmd[i] = 0;
			p->reset_failed = true;
			return -1;
		}
		p->resetting++;
	}
	return 0;
}

bool
act_page_rested(struct act_page *p, bool *clean)
{
	*clean = !p->reset_failed;
	return p->resetting == 0;
}

void
act_page_lost(struct act_page *p, const char *why)
{
	p->crashed = true;
	if (p->busy && !p->done) {
		act_page_abort(p);
		p->busy = true;
		page_fail(p, CM_E_RUNTIME_CRASHED, "%s", why);
	}
}

void
page_stop(struct act_page *p)
{
	if (p->cmd > 0)
		act_cdp_forget(p->cdp, p->cmd);
	p->cmd = 0;
	p->next = NULL;
	p->ahead_waited = false;
	p->until = ACT_UNTIL_NONE;
	p->grace_at_ms = -1;
	p->poll_at_ms = -1;
}

void
act_page_abort(struct act_page *p)
{
	page_stop(p);
	page_forget_call(p);
	free(p->out.result);
	free(p->out.artifact);
	memset(&p->out, 0, sizeof(p->out));
	p->busy = p->done = false;
}
