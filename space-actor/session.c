/*
 * session.c: setting up a Space's page, and the call on it (session.h).
 */
#include "session.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "log.h"

/* The setup steps, in order; each reply moves to the next. */
enum session_step {
	STEP_CONTEXT, /* own_context only */
	/* Every new page attaches held before it runs: a tab the page opens
	 * is set up as the page is before it sends a request (tabs.c).  On
	 * before the page is made, so that the page is held for this actor
	 * as for every other client of a shared browser (tabs.h). */
	STEP_TABS,
	STEP_CREATE,
	STEP_ATTACH,
	STEP_PAGE,
	STEP_INSPECTOR,
	/* Requests pause for the network policy (page.h), and responses:
	 * the document's status is read there.  The Network domain stays
	 * off: its events, several for every request of a page, would only
	 * repeat what the pauses tell. */
	STEP_FETCH,
	/* Out-of-process frames attach as sessions of their own, held until
	 * their requests pause as the page's do (page_frames.c): the page's
	 * interception does not see them. */
	STEP_FRAMES_ATTACH,
	/* The viewport is CM_BROWSER_WIDTH x CM_BROWSER_HEIGHT at scale 1,
	 * whatever the window around it: a screenshot of it is that size. */
	STEP_VIEWPORT,
	/* The page keeps the focus, and renders, whatever tab the page
	 * opens: a popup that took the focus would leave it a background
	 * tab, whose frames and input the browser holds back. */
	STEP_FOCUS,
	/* The browser tells of every target, so the tabs the page opens are
	 * known (act_session_event). */
	STEP_DISCOVER,
	/* Downloads go to the Space's own directory, or nowhere, and are
	 * told of (Browser.download*): never to the browser's default. */
	STEP_DOWNLOADS,
	STEP_FRAMES,
	STEP__COUNT
};

static const char *const session_methods[STEP__COUNT] = {
    [STEP_CONTEXT] = "Target.createBrowserContext",
    [STEP_CREATE] = "Target.createTarget",
    [STEP_ATTACH] = "Target.attachToTarget",
    [STEP_PAGE] = "Page.enable",
    [STEP_INSPECTOR] = "Inspector.enable",
    [STEP_FETCH] = "Fetch.enable",
    [STEP_FRAMES_ATTACH] = "Target.setAutoAttach",
    [STEP_VIEWPORT] = "Emulation.setDeviceMetricsOverride",
    [STEP_FOCUS] = "Emulation.setFocusEmulationEnabled",
    [STEP_DISCOVER] = "Target.setDiscoverTargets",
    [STEP_TABS] = "Target.setAutoAttach",
    [STEP_DOWNLOADS] = "Browser.setDownloadBehavior",
    [STEP_FRAMES] = "Page.getFrameTree",
};

void
act_session_init(
    struct act_session *s, const struct cm_policy *policy, bool own_context)
{
	memset(s, 0, sizeof(*s));
	s->policy = policy;
	s->own_context = own_context;
	s->cur = &s->page;
}

void
act_session_proxy(struct act_session *s, const struct act_proxy_auth *proxy)
{
	s->proxy = proxy;
}

void
act_session_events(struct act_session *s, act_page_event_fn fn, void *arg)
{
	s->on_event = fn;
	s->on_event_arg = arg;
	if (s->page_ok) {
		s->page.on_event = fn;
		s->page.on_event_arg = arg;
	}
	act_tabs_sync(s);
}

void
act_session_frames(struct act_session *s,
    void (*fn)(void *arg, const char *session, const json_t *params), void *arg)
{
	s->on_frame = fn;
	s->on_frame_arg = arg;
}

void
act_session_dialogs(struct act_session *s, const char *policy)
{
	s->dialog_policy = policy == NULL                   ? ACT_DIALOG_MODAL
	                   : strcmp(policy, "accept") == 0  ? ACT_DIALOG_ACCEPT
	                   : strcmp(policy, "dismiss") == 0 ? ACT_DIALOG_DISMISS
	                                                    : ACT_DIALOG_MODAL;
	if (s->page_ok)
		s->page.dialog_policy = s->dialog_policy;
	act_tabs_sync(s);
}

void
act_session_downloads(struct act_session *s, const char *dir)
{
	if (dir == NULL || strlen(dir) >= sizeof(s->downloads))
		s->downloads[0] = '\0';
	else
		snprintf(s->downloads, sizeof(s->downloads), "%s", dir);
}

void
act_session_adopt(struct act_session *s, const struct cm_policy *policy)
{
	s->policy = policy;
	if (s->page_ok)
		s->page.policy = policy;
	act_tabs_sync(s);
}

static void
session_failed(struct act_session *s, const char *why)
{
	s->state = ACT_SESSION_FAILED;
	s->cmd = 0;
	snprintf(s->why, sizeof(s->why), "%s", why);
}

static void session_reply(void *arg, const json_t *result, const json_t *error);

static int
session_send(struct act_session *s, int step)
{
	const char *session = NULL;
	json_t *params = NULL;

	s->step = step;
	switch (step) {
	case STEP_CONTEXT:
		/* Should this connection end without a close, the browser
		 * drops the context (and its cookies) by itself. */
		params = json_pack("{s:b}", "disposeOnDetach", 1);
		break;
	case STEP_CREATE:
		params = json_pack("{s:s}", "url", "about:blank");
		if (s->own_context)
			json_object_set_new(params, "browserContextId",
			    json_string(s->context));
		break;
	case STEP_ATTACH:
		params = json_pack(
		    "{s:s, s:b}", "targetId", s->target, "flatten", 1);
		break;
	case STEP_FETCH:
		params = act_page_fetch_params(s->proxy != NULL);
		session = s->page.session;
		break;
	case STEP_FRAMES_ATTACH:
		params = act_page_attach_params();
		session = s->page.session;
		break;
	case STEP_VIEWPORT:
		params = json_pack("{s:i, s:i, s:i, s:b}", "width",
		    CM_BROWSER_WIDTH, "height", CM_BROWSER_HEIGHT,
		    "deviceScaleFactor", 1, "mobile", 0);
		session = s->page.session;
		break;
	case STEP_FOCUS:
		params = json_pack("{s:b}", "enabled", 1);
		session = s->page.session;
		break;
	case STEP_DISCOVER:
		params = json_pack("{s:b}", "discover", 1);
		break;
	case STEP_TABS:
		params = act_tabs_autoattach_params();
		break;
	case STEP_DOWNLOADS:
		params = json_pack("{s:s, s:b}", "behavior",
		    s->downloads[0] != '\0' ? "allowAndName" : "deny",
		    "eventsEnabled", 1);
		if (s->downloads[0] != '\0')
			json_object_set_new(
			    params, "downloadPath", json_string(s->downloads));
		if (s->own_context)
			json_object_set_new(params, "browserContextId",
			    json_string(s->context));
		break;
	default:
		session = s->page.session;
		break;
	}
	s->cmd = act_cdp_call(s->cdp, session, session_methods[step], params,
	    s->deadline_ms, session_reply, s);
	if (s->cmd > 0)
		return 0;
	session_failed(s, "the browser connection is broken");
	return -1;
}

/* A string member of a reply that fits an id. */
static const char *
session_id(const json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v != NULL && strlen(v) <= CM_ID_MAX ? v : NULL;
}

static void
session_reply(void *arg, const json_t *result, const json_t *error)
{
	struct act_session *s = arg;
	const char *id;

	s->cmd = 0;
	if (s->state != ACT_SESSION_SETUP)
		return;
	if (error != NULL) {
		id = json_string_value(json_object_get(error, "message"));
		session_failed(s, id != NULL ? id : session_methods[s->step]);
		return;
	}
	switch (s->step) {
	case STEP_CONTEXT:
		if ((id = session_id(result, "browserContextId")) == NULL) {
			session_failed(s, "no browser context");
			return;
		}
		snprintf(s->context, sizeof(s->context), "%s", id);
		break;
	case STEP_CREATE:
		if ((id = session_id(result, "targetId")) == NULL) {
			session_failed(s, "no target");
			return;
		}
		snprintf(s->target, sizeof(s->target), "%s", id);
		s->creating = false;
		break;
	case STEP_ATTACH:
		if ((id = session_id(result, "sessionId")) == NULL) {
			session_failed(s, "no session");
			return;
		}
		act_page_init(&s->page, s->cdp, s->policy, id, s->target);
		s->page.proxy = s->proxy;
		s->page.on_event = s->on_event;
		s->page.on_event_arg = s->on_event_arg;
		s->page.dl_dir = s->downloads;
		s->page.up_dir = s->uploads;
		s->page.dl_context = s->own_context ? s->context : NULL;
		s->page.dialog_policy = s->dialog_policy;
		s->page.tabs_fn = act_tabs_list;
		s->page.tabs_arg = s;
		s->cur = &s->page;
		s->page_ok = true;
		break;
	case STEP_FRAMES:
		id = json_string_value(json_object_get(
		    json_object_get(
		        json_object_get(result, "frameTree"), "frame"),
		    "id"));
		if (id != NULL && s->page.frame[0] == '\0')
			snprintf(
			    s->page.frame, sizeof(s->page.frame), "%s", id);
		s->state = ACT_SESSION_READY;
		return;
	default:
		break;
	}
	session_send(s, s->step + 1);
}

/*
 * The page stays unresponsive: it is closed, renderer and all, whatever
 * it is doing, and a new one is set up in the same browser (and context)
 * in the loop; a call that comes meanwhile waits for it.  Returns 0, or
 * -1 when there is no page or the setup could not begin.
 */
static int
session_replace(struct act_session *s, const char *who)
{
	char old[CM_ID_MAX + 1];
	int64_t end = cm_mono_ms() + CM_BROWSER_START_MS;

	if (!s->page_ok || s->cdp == NULL || s->state != ACT_SESSION_READY)
		return -1;
	cm_warnx(
	    "%s: the page did not come to rest: a fresh one replaces it", who);
	snprintf(old, sizeof(old), "%s", s->target);
	/* The tabs it opened go with it. */
	act_tabs_forget_all(s, true);
	act_page_fini(&s->page);
	s->page_ok = false;
	if (act_cdp_call(s->cdp, NULL, "Target.closeTarget",
	        json_pack("{s:s}", "targetId", old), end, NULL, NULL) <= 0)
		return -1;
	s->state = ACT_SESSION_SETUP;
	s->deadline_ms = end;
	s->creating = true;
	return session_send(s, STEP_CREATE);
}

int
act_session_begin(struct act_session *s, struct act_cdp *cdp, int64_t deadline)
{
	s->cdp = cdp;
	s->state = ACT_SESSION_SETUP;
	s->deadline_ms = deadline;
	s->context[0] = s->target[0] = '\0';
	s->creating = true;
	return session_send(s, s->own_context ? STEP_CONTEXT : STEP_TABS);
}

/* The browser told a target's url or title: the page's header keeps its
 * own. */
static void
session_info_changed(struct act_session *s, const json_t *info)
{
	const char *id = json_string_value(json_object_get(info, "targetId"));

	if (id != NULL && strcmp(id, s->page.target) == 0)
		act_page_info_changed(&s->page, info);
}

void
act_session_event(struct act_session *s, const char *session,
    const char *method, const json_t *params)
{
	const char *id, *sid;

	/* Pages attach from the setup's first steps on, the Space's own. */
	if (session == NULL && strcmp(method, "Target.attachedToTarget") == 0) {
		act_tabs_attached(s, params);
		return;
	}
	if (!s->page_ok)
		return;
	if (s->on_frame != NULL && session != NULL &&
	    strcmp(method, "Page.screencastFrame") == 0) {
		s->on_frame(s->on_frame_arg, session, params);
		return;
	}
	act_page_event(&s->page, session, method, params);
	act_tabs_event(s, session, method, params);
	if (session == NULL &&
	    (strcmp(method, "Browser.downloadWillBegin") == 0 ||
	        strcmp(method, "Browser.downloadProgress") == 0)) {
		act_page_download(s->cur, method, params);
		return;
	}
	if (session == NULL &&
	    strcmp(method, "Target.targetInfoChanged") == 0) {
		session_info_changed(s, json_object_get(params, "targetInfo"));
		return;
	}
	/* The target itself went away (a renderer killed with its page).  A
	 * detach is only the page's own session's: the browser's auto-attach
	 * session of the same target is let go as the tabs are set up. */
	if (strcmp(method, "Target.targetCrashed") != 0 &&
	    strcmp(method, "Target.detachedFromTarget") != 0)
		return;
	id = json_string_value(json_object_get(params, "targetId"));
	sid = json_string_value(json_object_get(params, "sessionId"));
	if ((strcmp(method, "Target.targetCrashed") == 0 && id != NULL &&
	        strcmp(id, s->target) == 0) ||
	    (sid != NULL && strcmp(sid, s->page.session) == 0))
		act_page_event(
		    &s->page, s->page.session, "Inspector.targetCrashed", NULL);
}

void
act_session_down(struct act_session *s)
{
	act_tabs_forget_all(s, false);
	if (s->page_ok)
		act_page_fini(&s->page);
	s->page_ok = false;
	s->cdp = NULL;
	s->cmd = 0;
	s->state = ACT_SESSION_DOWN;
}

bool
act_session_busy(const struct act_session *s)
{
	return s->waiting || (s->page_ok && s->cur->busy);
}

int
act_session_start(struct act_session *s, const struct act_call *call)
{
	if (act_session_busy(s))
		return -1;
	s->failed = false;
	snprintf(s->uploads, sizeof(s->uploads), "%s",
	    call->upload_dir != NULL ? call->upload_dir : "");
	if (s->state == ACT_SESSION_READY && !s->resetting) {
		act_tabs_prepare(s, call->capability, call->args);
		return act_page_start(
		    s->cur, call->capability, call->args, call->deadline_ms);
	}
	s->waiting = true;
	snprintf(s->capability, sizeof(s->capability), "%s", call->capability);
	s->args = json_deep_copy(call->args);
	s->call_deadline_ms = call->deadline_ms;
	return 0;
}

void
act_session_fail(struct act_session *s, enum cm_err err, const char *msg)
{
	if (!s->waiting)
		return;
	s->waiting = false;
	json_decref(s->args);
	s->args = NULL;
	s->failed = true;
	memset(&s->early, 0, sizeof(s->early));
	s->early.err = err;
	snprintf(s->early.message, sizeof(s->early.message), "%s", msg);
}

int64_t
act_session_tick(struct act_session *s, int64_t now)
{
	int64_t w = -1, t;

	if (s->waiting && s->state == ACT_SESSION_READY && !s->resetting) {
		s->waiting = false;
		act_tabs_prepare(s, s->capability, s->args);
		act_page_start(
		    s->cur, s->capability, s->args, s->call_deadline_ms);
		json_decref(s->args);
		s->args = NULL;
	} else if (s->waiting && now >= s->call_deadline_ms) {
		act_session_fail(
		    s, CM_E_TASK_TIMEOUT, "the browser was not ready in time");
	}
	if (s->failed || s->state == ACT_SESSION_FAILED ||
	    (s->resetting && !s->page_ok))
		return now;
	if (s->page_ok && (t = act_page_tick(s->cur, now)) >= 0)
		w = t;
	if (s->waiting && (w < 0 || s->call_deadline_ms < w))
		w = s->call_deadline_ms;
	return w;
}

bool
act_session_take(struct act_session *s, struct act_outcome *out)
{
	if (s->failed) {
		s->failed = false;
		*out = s->early;
		return true;
	}
	return s->page_ok && act_page_take(s->cur, out);
}

int64_t
act_session_wake(struct act_session *s, struct act_cdp *cdp, int64_t now)
{
	int64_t w = act_session_tick(s, now), t;

	if (cdp != NULL && (t = act_cdp_expire(cdp, now)) >= 0 &&
	    (w < 0 || t < w))
		w = t;
	return w;
}

enum act_state
act_session_turn(struct act_session *s, struct act_cdp *cdp, const char *who,
    int *failures, bool *drop, struct act_outcome *out)
{
	int64_t now = cm_mono_ms();

	*drop = false;
	if (cdp != NULL)
		act_cdp_expire(cdp, now);
	if (s->state == ACT_SESSION_FAILED) {
		cm_warnx("%s: the Space's page could not be set up: %s", who,
		    s->why);
		(*failures)++;
		*drop = true;
		act_session_down(s);
		act_session_fail(s, CM_E_RUNTIME_CRASHED,
		    "the browser did not set the page up");
	}
	if (s->state == ACT_SESSION_READY)
		*failures = 0;
	if (s->resetting) {
		bool clean = false;

		if (s->page_ok && !act_page_rested(s->cur, &clean))
			return ACT_PENDING;
		/* A page that did not come to rest in time is replaced by a
		 * fresh one on the same connection (the Space keeps its
		 * cookies); a connection that went away meanwhile, or one
		 * that cannot take the new page, the driver starts anew. */
		s->resetting = false;
		/* A tab that did not come to rest is closed instead: its
		 * opener, or the page, is current again. */
		if (!clean && s->cur != &s->page) {
			act_tabs_forget(s, act_tabs_current(s), true);
			clean = true;
		}
		if (!clean && session_replace(s, who) != 0) {
			*drop = true;
			act_session_down(s);
		}
		memset(out, 0, sizeof(*out));
		out->err = CM_OK;
		return ACT_CLEAN;
	}
	act_session_tick(s, now);
	if (!act_session_take(s, out))
		return ACT_PENDING;
	/* A crashed tab is closed; the page the Space opened goes on. */
	if (s->page_ok && s->cur != &s->page && s->cur->crashed)
		act_tabs_forget(s, act_tabs_current(s), true);
	/* A crashed page: the driver starts over. */
	if (s->page_ok && s->page.crashed) {
		*drop = true;
		act_session_down(s);
	}
	return ACT_DONE;
}

bool
act_session_lost(struct act_session *s, struct act_cdp *cdp, const char *msg,
    int *failures, struct act_outcome *out)
{
	if (cdp != NULL)
		act_cdp_fail_all(cdp);
	/* A call between two commands (a wait between looks) had nothing
	 * pending to fail: it ends here, not at its deadline. */
	if (s->page_ok)
		act_page_lost(s->cur, msg);
	if (s->state != ACT_SESSION_READY)
		(*failures)++;
	act_session_fail(s, CM_E_RUNTIME_CRASHED, msg);
	return act_session_take(s, out);
}

void
act_session_cancel(struct act_session *s)
{
	act_session_fail(s, CM_E_RUNTIME_ERROR, "cancelled");
	s->failed = false;
	if (s->page_ok)
		act_page_abort(s->cur);
}

int
act_session_reset(struct act_session *s)
{
	if (s->state != ACT_SESSION_READY || !s->page_ok)
		return 0; /* no page, or one still being set up: at rest */
	if (act_page_reset(s->cur) != 0)
		return -1;
	s->resetting = true;
	return 1;
}

int64_t
act_session_dispose(
    struct act_session *s, int64_t deadline_ms, act_cdp_reply_fn fn, void *arg)
{
	int64_t id;

	if (!s->own_context || s->cdp == NULL || s->context[0] == '\0')
		return 0;
	id = act_cdp_call(s->cdp, NULL, "Target.disposeBrowserContext",
	    json_pack("{s:s}", "browserContextId", s->context), deadline_ms, fn,
	    arg);
	return id > 0 ? id : 0;
}

void
act_session_fini(struct act_session *s)
{
	act_session_down(s);
	json_decref(s->args);
	s->args = NULL;
	s->waiting = false;
	s->resetting = false;
}
