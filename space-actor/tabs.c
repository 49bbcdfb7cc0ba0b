/*
 * tabs.c: the tabs the page opens, each set up as a page of its own
 * before it runs, and the tabs capability (tabs.h).
 *
 * Why a tab is held until its setup is done: its first request (its
 * document, asked for as it opens) would otherwise go out before Fetch
 * holds it, to any host, and on a remote browser no egress proxy stands
 * behind the interception.  On a browser shared with other clients a
 * page of another context is let run from here and let go: it runs once
 * each client that holds it has let it, its own Space's actor last, once
 * set up (tabs.h has the measurements).
 *
 * Cost: seven commands on the tab's session as it opens, one at a time
 * (a refusal of one closes the tab: it never runs without its
 * interception).
 */
#include "tabs.h"
#include "page_int.h"
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

/* A tab's setup, in order.  Fetch and the frames' attach, which the
 * browser answers itself, come before it runs; the rest after: a tab
 * that opened with no opener (a target=_blank link) has no renderer to
 * answer Page.enable until its navigation, held with it, goes on. */
enum tab_step {
	TAB_FETCH,
	TAB_FRAMES,
	TAB_RUN,
	TAB_PAGE,
	TAB_INSPECTOR,
	TAB_VIEWPORT,
	TAB_FOCUS,
	TAB__COUNT
};

static const char *const tab_methods[TAB__COUNT] = {
    [TAB_PAGE] = "Page.enable",
    [TAB_INSPECTOR] = "Inspector.enable",
    [TAB_FETCH] = "Fetch.enable",
    [TAB_FRAMES] = "Target.setAutoAttach",
    [TAB_VIEWPORT] = "Emulation.setDeviceMetricsOverride",
    [TAB_FOCUS] = "Emulation.setFocusEmulationEnabled",
    [TAB_RUN] = "Runtime.runIfWaitingForDebugger",
};

json_t *
act_tabs_autoattach_params(void)
{
	return json_pack("{s:b, s:b, s:b, s:[{s:s}]}", "autoAttach", 1,
	    "waitForDebuggerOnStart", 1, "flatten", 1, "filter", "type",
	    "page");
}

static int64_t
tabs_soon(void)
{
	return cm_mono_ms() + CM_BROWSER_START_MS;
}

static int
tab_index(const struct act_session *s, const struct act_tab *t)
{
	return (int)(t - s->tabs) + 1;
}

/* The page of target (the session's own, or a tab's), or NULL. */
static struct act_page *
tabs_of_target(struct act_session *s, const char *target)
{
	if (target == NULL)
		return NULL;
	if (s->page_ok && strcmp(target, s->page.target) == 0)
		return &s->page;
	for (int i = 0; i < CM_TABS_MAX; i++)
		if (s->tabs[i].used && strcmp(s->tabs[i].target, target) == 0)
			return &s->tabs[i].page;
	return NULL;
}

static struct act_tab *
tabs_of_session(struct act_session *s, const char *session)
{
	for (int i = 0; session != NULL && i < CM_TABS_MAX; i++)
		if (s->tabs[i].used &&
		    strcmp(s->tabs[i].page.session, session) == 0)
			return &s->tabs[i];
	return NULL;
}

/* What the session's own page is given, for a tab's. */
static void
tabs_configure(struct act_session *s, struct act_page *p)
{
	p->policy = s->policy;
	p->proxy = s->proxy;
	p->on_event = s->on_event;
	p->on_event_arg = s->on_event_arg;
	p->dl_dir = s->downloads;
	p->up_dir = s->uploads;
	p->dl_context = s->own_context ? s->context : NULL;
	p->dialog_policy = s->dialog_policy;
	p->tabs_fn = act_tabs_list;
	p->tabs_arg = s;
}

void
act_tabs_sync(struct act_session *s)
{
	for (int i = 0; i < CM_TABS_MAX; i++)
		if (s->tabs[i].used)
			tabs_configure(s, &s->tabs[i].page);
}

/* Drops a session of the browser's auto-attach; the target goes on as
 * it would have (held only by whoever else holds it). */
static void
tabs_detach(struct act_session *s, const char *sid, bool run)
{
	if (run)
		act_cdp_call(s->cdp, sid, "Runtime.runIfWaitingForDebugger",
		    NULL, tabs_soon(), NULL, NULL);
	act_cdp_call(s->cdp, NULL, "Target.detachFromTarget",
	    json_pack("{s:s}", "sessionId", sid), tabs_soon(), NULL, NULL);
}

static void tab_send(struct act_tab *t);

static void
tab_reply(void *arg, const json_t *result, const json_t *error)
{
	struct act_tab *t = arg;

	(void)result;
	t->cmd = 0;
	if (!t->used)
		return;
	if (error != NULL) {
		/* Held, then closed: it never runs unintercepted. */
		act_tabs_forget(t->s, tab_index(t->s, t), true);
		return;
	}
	if (t->step == TAB_RUN)
		t->ready = true;
	if (++t->step < TAB__COUNT)
		tab_send(t);
}

static void
tab_send(struct act_tab *t)
{
	json_t *params = NULL;

	switch (t->step) {
	case TAB_FETCH:
		params = act_page_fetch_params(t->s->proxy != NULL);
		break;
	case TAB_FRAMES:
		params = act_page_attach_params();
		break;
	case TAB_VIEWPORT:
		params = json_pack("{s:i, s:i, s:i, s:b}", "width",
		    CM_BROWSER_WIDTH, "height", CM_BROWSER_HEIGHT,
		    "deviceScaleFactor", 1, "mobile", 0);
		break;
	case TAB_FOCUS:
		params = json_pack("{s:b}", "enabled", 1);
		break;
	default:
		break;
	}
	t->cmd = act_cdp_call(t->s->cdp, t->page.session, tab_methods[t->step],
	    params, tabs_soon(), tab_reply, t);
	if (t->cmd <= 0) {
		t->cmd = 0;
		act_tabs_forget(t->s, tab_index(t->s, t), true);
	}
}

/* A tab past CM_TABS_MAX, on its way out.  Closed while held, its
 * opener's window.open never returns (measured: the page stops
 * answering), so it is let run first, with its requests held by a Fetch
 * that nobody answers, then closed. */
struct tabs_refused {
	struct act_session *s;
	char session[CM_ID_MAX + 1];
	char target[CM_ID_MAX + 1];
};

static void
tabs_refused_held(void *arg, const json_t *result, const json_t *error)
{
	struct tabs_refused *r = arg;

	(void)result;
	if (error == NULL) {
		act_cdp_call(r->s->cdp, r->session,
		    "Runtime.runIfWaitingForDebugger", NULL, tabs_soon(), NULL,
		    NULL);
		act_cdp_call(r->s->cdp, NULL, "Target.closeTarget",
		    json_pack("{s:s}", "targetId", r->target), tabs_soon(),
		    NULL, NULL);
	}
	free(r);
}

static void
tabs_refuse(struct act_session *s, const char *sid, const char *id)
{
	struct tabs_refused *r = calloc(1, sizeof(*r));

	if (r != NULL) {
		r->s = s;
		snprintf(r->session, sizeof(r->session), "%s", sid);
		snprintf(r->target, sizeof(r->target), "%s", id);
		if (act_cdp_call(s->cdp, sid, "Fetch.enable",
		        act_page_fetch_params(false), tabs_soon(),
		        tabs_refused_held, r) > 0)
			return;
		free(r);
	}
	act_cdp_call(s->cdp, NULL, "Target.closeTarget",
	    json_pack("{s:s}", "targetId", id), tabs_soon(), NULL, NULL);
}

void
act_tabs_attached(struct act_session *s, const json_t *params)
{
	const char *sid =
	    json_string_value(json_object_get(params, "sessionId"));
	const json_t *info = json_object_get(params, "targetInfo");
	const char *type = json_string_value(json_object_get(info, "type"));
	const char *id = json_string_value(json_object_get(info, "targetId"));
	const char *ctx =
	    json_string_value(json_object_get(info, "browserContextId"));
	const char *opener =
	    json_string_value(json_object_get(info, "openerId"));
	const char *url = json_string_value(json_object_get(info, "url"));
	bool waiting =
	    json_is_true(json_object_get(params, "waitingForDebugger"));
	struct act_page *op;
	struct act_tab *t = NULL;

	if (sid == NULL || strlen(sid) > CM_ID_MAX || s->cdp == NULL)
		return;
	/* Another context's (another Space's, or the browser's own owner's,
	 * on a shared browser): let run from here and let go.  It runs only
	 * once every client that holds it has let it run, its own Space's
	 * actor among them, once its interception holds; detached without
	 * that, it stays held (measured). */
	if (s->own_context && (ctx == NULL || strcmp(ctx, s->context) != 0)) {
		tabs_detach(s, sid, waiting);
		return;
	}
	/* The session's own attach of its page (the auto-attach, on before
	 * the page is made, attaches it held). */
	if (!waiting && id != NULL && strcmp(id, s->target) == 0)
		return;
	/* Not a new tab: a page open before the auto-attach (the Space's
	 * own among them), or the one the session itself is making, which
	 * its own setup holds to the policy before it loads anything. */
	if (type == NULL || strcmp(type, "page") != 0 || !waiting ||
	    id == NULL || strlen(id) > CM_ID_MAX || !s->page_ok ||
	    strcmp(id, s->target) == 0 || (s->creating && opener == NULL)) {
		tabs_detach(s, sid, waiting);
		return;
	}
	/* A new tab has no url yet: it is the one its opener asked for. */
	op = tabs_of_target(s, opener);
	if ((url == NULL || url[0] == '\0') && op != NULL)
		url = op->window_url;
	for (int i = 0; i < CM_TABS_MAX && t == NULL; i++)
		if (!s->tabs[i].used)
			t = &s->tabs[i];
	if (t == NULL) {
		tabs_refuse(s, sid, id);
		act_page_tab_opened(s->cur, url, true);
		if (op != NULL)
			op->window_url[0] = '\0';
		return;
	}
	memset(t, 0, sizeof(*t));
	t->used = true;
	t->s = s;
	snprintf(t->target, sizeof(t->target), "%s", id);
	snprintf(t->opener, sizeof(t->opener), "%s",
	    opener != NULL && strlen(opener) <= CM_ID_MAX ? opener : "");
	act_page_init(&t->page, s->cdp, s->policy, sid, id);
	tabs_configure(s, &t->page);
	if (url != NULL && strlen(url) < sizeof(t->page.url))
		snprintf(t->page.url, sizeof(t->page.url), "%s", url);
	/* A page target's main frame has the target's id. */
	snprintf(t->page.frame, sizeof(t->page.frame), "%s", id);
	t->step = TAB_FETCH;
	tab_send(t);
	if (!t->used)
		return;
	/* A new tab in the page's window hides the current page, and a
	 * hidden page draws no frames (a screenshot waits for one): the
	 * current page is brought back to the front. */
	act_cdp_call(s->cdp, s->cur->session, "Page.bringToFront", NULL,
	    tabs_soon(), NULL, NULL);
	act_page_tab_opened(s->cur, url, false);
	if (op != NULL)
		op->window_url[0] = '\0';
}

/* The page that takes over from tab t as it goes: its opener while it
 * lives and is set up, else index 0. */
static struct act_page *
tabs_opener(struct act_session *s, const struct act_tab *t)
{
	for (int i = 0; i < CM_TABS_MAX; i++)
		if (&s->tabs[i] != t && s->tabs[i].used && s->tabs[i].ready &&
		    strcmp(s->tabs[i].target, t->opener) == 0)
			return &s->tabs[i].page;
	return &s->page;
}

/* p becomes the page calls act on; every page's refs are stale. */
static void
tabs_make_current(struct act_session *s, struct act_page *p)
{
	s->cur = p;
	s->page.n_refs = 0;
	for (int i = 0; i < CM_TABS_MAX; i++)
		if (s->tabs[i].used)
			s->tabs[i].page.n_refs = 0;
	act_cdp_call(s->cdp, p->session, "Page.bringToFront", NULL, tabs_soon(),
	    NULL, NULL);
}

/* A call still on a page that goes away ends now, its outcome kept for
 * the session: input that reached it may have done anything. */
static void
tabs_end_call(struct act_session *s, struct act_page *p)
{
	bool acted = p->acted;

	if (!p->busy)
		return;
	if (!p->done) {
		act_page_abort(p);
		p->busy = true;
		page_fail(p,
		    acted ? CM_E_OUTCOME_UNKNOWN : CM_E_RUNTIME_CRASHED,
		    "the tab closed during the call");
	}
	if (act_page_take(p, &s->early))
		s->failed = true;
}

void
act_tabs_forget(struct act_session *s, int index, bool close)
{
	struct act_tab *t;
	struct act_page *up;

	if (index < 1 || index > CM_TABS_MAX || !s->tabs[index - 1].used)
		return;
	t = &s->tabs[index - 1];
	if (t->cmd > 0 && s->cdp != NULL)
		act_cdp_forget(s->cdp, t->cmd);
	t->cmd = 0;
	if (close && s->cdp != NULL)
		act_cdp_call(s->cdp, NULL, "Target.closeTarget",
		    json_pack("{s:s}", "targetId", t->target), tabs_soon(),
		    NULL, NULL);
	if (s->cur == &t->page) {
		tabs_end_call(s, &t->page);
		up = tabs_opener(s, t);
		tabs_make_current(s, up);
	}
	act_page_fini(&t->page);
	memset(t, 0, sizeof(*t));
}

void
act_tabs_forget_all(struct act_session *s, bool close)
{
	/* Index 0 is current again without a word to the browser: it may
	 * be gone, or its page be replaced next. */
	if (s->cur != &s->page) {
		tabs_end_call(s, s->cur);
		s->cur = &s->page;
	}
	for (int i = 1; i <= CM_TABS_MAX; i++)
		act_tabs_forget(s, i, close);
}

/* A tab's url and title, read (its target's info). */
static void
tabs_info(void *arg, const json_t *result, const json_t *error)
{
	struct act_session *s = arg;
	const json_t *info = json_object_get(result, "targetInfo");
	struct act_page *p = tabs_of_target(
	    s, json_string_value(json_object_get(info, "targetId")));

	if (error == NULL && p != NULL)
		act_page_info_changed(p, info);
}

void
act_tabs_event(struct act_session *s, const char *session, const char *method,
    const json_t *params)
{
	const char *id = json_string_value(json_object_get(params, "targetId"));
	const json_t *info = json_object_get(params, "targetInfo");
	struct act_tab *t;

	if (session != NULL) {
		for (int i = 0; i < CM_TABS_MAX; i++)
			if (s->tabs[i].used)
				act_page_event(
				    &s->tabs[i].page, session, method, params);
		/* The browser tells no title a document sets as it parses:
		 * a tab's is read as its document loads. */
		if ((t = tabs_of_session(s, session)) != NULL &&
		    (strcmp(method, "Page.domContentEventFired") == 0 ||
		        strcmp(method, "Page.loadEventFired") == 0))
			act_cdp_call(s->cdp, NULL, "Target.getTargetInfo",
			    json_pack("{s:s}", "targetId", t->target),
			    tabs_soon(), tabs_info, s);
		return;
	}
	if (strcmp(method, "Target.targetInfoChanged") == 0) {
		struct act_page *p = tabs_of_target(
		    s, json_string_value(json_object_get(info, "targetId")));

		if (p != NULL && p != &s->page)
			act_page_info_changed(p, info);
		return;
	}
	if (strcmp(method, "Target.detachedFromTarget") == 0) {
		t = tabs_of_session(
		    s, json_string_value(json_object_get(params, "sessionId")));
		if (t != NULL)
			act_tabs_forget(s, tab_index(s, t), false);
		return;
	}
	if (strcmp(method, "Target.targetDestroyed") != 0 &&
	    strcmp(method, "Target.targetCrashed") != 0)
		return;
	for (int i = 0; id != NULL && i < CM_TABS_MAX; i++)
		if (s->tabs[i].used && strcmp(s->tabs[i].target, id) == 0)
			act_tabs_forget(s, i + 1,
			    strcmp(method, "Target.targetCrashed") == 0);
}

struct act_page *
act_tabs_page(struct act_session *s, int index)
{
	if (index == 0)
		return s->page_ok ? &s->page : NULL;
	if (index < 1 || index > CM_TABS_MAX || !s->tabs[index - 1].used ||
	    !s->tabs[index - 1].ready)
		return NULL;
	return &s->tabs[index - 1].page;
}

int
act_tabs_current(const struct act_session *s)
{
	for (int i = 0; i < CM_TABS_MAX; i++)
		if (s->tabs[i].used && s->cur == &s->tabs[i].page)
			return i + 1;
	return 0;
}

void
act_tabs_prepare(
    struct act_session *s, const char *capability, const json_t *args)
{
	const char *action = json_string_value(json_object_get(args, "action"));
	const json_t *index = json_object_get(args, "index");
	struct act_page *p;
	struct act_tab *t;

	if (strcmp(capability, "tabs") != 0 || action == NULL ||
	    !json_is_integer(index) || json_integer_value(index) < 0 ||
	    json_integer_value(index) > CM_TABS_MAX)
		return;
	p = act_tabs_page(s, (int)json_integer_value(index));
	if (p == NULL)
		return;
	if (strcmp(action, "select") == 0) {
		tabs_make_current(s, p);
		return;
	}
	if (strcmp(action, "close") != 0 || p != s->cur || p == &s->page)
		return;
	/* The call that closes the current tab runs on its opener. */
	t = &s->tabs[act_tabs_current(s) - 1];
	tabs_make_current(s, tabs_opener(s, t));
}

void
act_tabs_list(void *arg, json_t *list)
{
	struct act_session *s = arg;

	json_array_append_new(
	    list, json_pack("{s:i, s:s, s:s, s:b}", "index", 0, "title",
	              s->page.title, "url", s->page.url, "current",
	              s->cur == &s->page));
	/* A tab is listed once it can be selected. */
	for (int i = 0; i < CM_TABS_MAX; i++)
		if (s->tabs[i].used && s->tabs[i].ready)
			json_array_append_new(
			    list, json_pack("{s:i, s:s, s:s, s:b}", "index",
			              i + 1, "title", s->tabs[i].page.title,
			              "url", s->tabs[i].page.url, "current",
			              s->cur == &s->tabs[i].page));
}

/* ---- the capability */

static json_t *
tabs_result(struct act_session *s)
{
	json_t *list = json_array();

	act_tabs_list(s, list);
	return json_pack("{s:o}", "tabs", list);
}

static void
tabs_closed(struct act_page *p, const json_t *result)
{
	struct act_session *s = p->tabs_arg;
	json_t *r;

	(void)result;
	act_tabs_forget(s, p->step, false);
	r = tabs_result(s);
	json_object_set_new(r, "closed", json_integer(p->step));
	page_end(p, CM_OK, r);
}

static void tabs_act(struct act_page *p);

/* Every page's url and title are read before the list is made (the
 * browser tells no title a script sets): p->step is the page read next,
 * 0 the Space's own and k tab k. */
static void tabs_refresh(struct act_page *p);

static void
tabs_refreshed(struct act_page *p, const json_t *result)
{
	struct act_session *s = p->tabs_arg;
	const json_t *info = json_object_get(result, "targetInfo");
	struct act_page *q = tabs_of_target(
	    s, json_string_value(json_object_get(info, "targetId")));

	if (q != NULL)
		act_page_info_changed(q, info);
	p->step++;
	tabs_refresh(p);
}

static void
tabs_refresh(struct act_page *p)
{
	struct act_session *s = p->tabs_arg;
	const char *target = NULL;

	for (; p->step <= CM_TABS_MAX && target == NULL; p->step++)
		if (p->step == 0)
			target = s->page.target;
		else if (s->tabs[p->step - 1].used)
			target = s->tabs[p->step - 1].target;
	if (target == NULL) {
		tabs_act(p);
		return;
	}
	p->step--;
	page_send_soft(p, NULL, "Target.getTargetInfo",
	    json_pack("{s:s}", "targetId", target), tabs_refreshed);
}

void
cap_tabs(struct act_page *p)
{
	if (p->tabs_arg == NULL) {
		page_fail(p, CM_E_RUNTIME_ERROR, "the page keeps no tabs");
		return;
	}
	p->step = 0;
	tabs_refresh(p);
}

static void
tabs_act(struct act_page *p)
{
	struct act_session *s = p->tabs_arg;
	const char *action =
	    json_string_value(json_object_get(p->args, "action"));
	const json_t *index = json_object_get(p->args, "index");
	json_int_t i = json_integer_value(index);
	json_t *r;

	if (action == NULL) {
		page_fail(p, CM_E_INVALID_ARGS, "tabs takes an action");
		return;
	}
	if (strcmp(action, "list") == 0) {
		page_end(p, CM_OK, tabs_result(s));
		return;
	}
	if (!json_is_integer(index)) {
		page_fail(p, CM_E_NO_TAB,
		    "%s names a tab by its index (tabs {action: \"list\"} "
		    "lists them)",
		    action);
		return;
	}
	if (i < 0 || i > CM_TABS_MAX || act_tabs_page(s, (int)i) == NULL) {
		page_fail(p, CM_E_NO_TAB,
		    "no tab has index %lld (tabs {action: \"list\"} lists "
		    "them)",
		    (long long)i);
		return;
	}
	if (strcmp(action, "select") == 0) {
		r = tabs_result(s);
		json_object_set_new(r, "selected", json_integer(i));
		page_end(p, CM_OK, r);
		return;
	}
	if (i == 0) {
		page_fail(p, CM_E_NO_TAB,
		    "tab 0 is the Space's own page: it cannot be closed");
		return;
	}
	p->step = (int)i; /* the tab being closed */
	page_send_to(p, true, "Target.closeTarget",
	    json_pack("{s:s}", "targetId", s->tabs[i - 1].target), tabs_closed);
}
