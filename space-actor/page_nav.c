/*
 * page_nav.c: the capabilities that move the page, navigate (to a URL the
 * policy allows, its HTTP status in the result), back and forward (the
 * previous and the next history entry) and reload, and the navigation
 * waits every call shares
 * (page_int.h).  A navigation ends on the main frame's own events: a
 * move within the document (history.pushState, a fragment) at once, a
 * new document once it has reached what the call waits for.  A
 * navigation the interception (page_fetch.c) refused ends with
 * host_not_allowed.
 */
#include "page.h"
#include "page_int.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"

/* ---- the waits */

void
page_nav_arm(struct act_page *p, enum act_until until)
{
	p->until = until;
	p->nav_answered = false;
	p->nav_started = p->nav_committed = p->nav_same_doc = false;
	p->nav_dcl = p->nav_load = p->nav_stopped = false;
	p->grace_at_ms = -1;
	p->nav_url[0] = '\0';
}

void
page_nav_url(struct act_page *p, const char *url)
{
	if (!p->busy || p->done)
		return;
	if (url == NULL || strlen(url) >= sizeof(p->nav_url))
		p->nav_url[0] = '\0';
	else
		snprintf(p->nav_url, sizeof(p->nav_url), "%s", url);
}

/*
 * A navigation whose document the browser downloads instead (an
 * attachment) ends with the download, which the browser tells of after
 * the navigation's own end: its start within CM_NAV_DOWNLOAD_START_MS,
 * then its end (act_page_download).
 */
static void
page_nav_download(struct act_page *p)
{
	p->until = ACT_UNTIL_NONE;
	if (p->dl_began && strcmp(p->dl_state, "in_progress") != 0) {
		page_info(p);
		return;
	}
	p->dl_wanted = true;
	if (!p->dl_began && p->dl_wait_end_ms < 0)
		p->dl_wait_end_ms = cm_mono_ms() + CM_NAV_DOWNLOAD_START_MS;
}

/* Ends the call when the navigation has come as far as it waits for. */
static void
page_nav_check(struct act_page *p)
{
	bool there;

	if (!p->busy || p->done || !p->nav_answered ||
	    p->until == ACT_UNTIL_NONE || p->cmd != 0)
		return;
	if (p->dl_expected && !p->nav_committed) {
		page_nav_download(p);
		return;
	}
	if (p->nav_stopped && !p->nav_committed) {
		/* It stopped with no new document (a 204, one cancelled):
		 * the page stays as it was. */
		p->until = ACT_UNTIL_NONE;
		page_info(p);
		return;
	}
	switch (p->until) {
	case ACT_UNTIL_COMMIT:
		there = p->nav_committed;
		break;
	case ACT_UNTIL_DCL:
		there = p->nav_committed && p->nav_dcl;
		break;
	default:
		there = p->nav_committed && p->nav_load;
		break;
	}
	if (there || p->nav_same_doc) {
		p->until = ACT_UNTIL_NONE;
		p->grace_at_ms = -1;
		page_info(p);
	}
}

void
page_nav_answered(struct act_page *p)
{
	p->nav_answered = true;
	/* Its DOMContentLoaded may have come before the answer. */
	if (p->until == ACT_UNTIL_LOAD && p->nav_committed && p->nav_dcl &&
	    !p->nav_load && p->grace_at_ms < 0)
		p->grace_at_ms = cm_mono_ms() + CM_NAV_LOAD_GRACE_MS;
	page_nav_check(p);
}

void
page_nav_event(struct act_page *p, enum page_nav_ev ev)
{
	if (!p->busy || p->done)
		return;
	switch (ev) {
	case PAGE_NAV_REQUESTED:
		p->nav_started = true;
		break;
	case PAGE_NAV_COMMITTED:
		/* What came before the commit was the old document's. */
		p->nav_started = p->nav_committed = true;
		p->nav_dcl = p->nav_load = false;
		p->grace_at_ms = -1;
		break;
	case PAGE_NAV_SAME_DOC:
		p->nav_started = p->nav_same_doc = true;
		break;
	case PAGE_NAV_DCL:
		p->nav_dcl = true;
		if (p->until == ACT_UNTIL_LOAD && p->nav_committed &&
		    p->nav_answered && p->grace_at_ms < 0)
			p->grace_at_ms = cm_mono_ms() + CM_NAV_LOAD_GRACE_MS;
		break;
	case PAGE_NAV_LOAD:
		p->nav_load = true;
		break;
	case PAGE_NAV_STOPPED:
		if (p->nav_started && !p->nav_committed)
			p->nav_stopped = true;
		break;
	}
	page_nav_check(p);
}

void
page_nav_due(struct act_page *p, int64_t now_ms)
{
	if (p->grace_at_ms < 0 || now_ms < p->grace_at_ms || !p->busy ||
	    p->done || p->cmd != 0)
		return;
	/* Parsed, and load has not come: the document is read as it is,
	 * and page_info says it is still loading. */
	p->until = ACT_UNTIL_NONE;
	p->grace_at_ms = -1;
	page_info(p);
}

static void
page_action_settled(struct act_page *p, const json_t *reply)
{
	json_t *result = p->keep;

	/* No reply: the browser refused the round trip because the page's
	 * target navigated meanwhile ("Inspected target navigated or
	 * closed"), which the navigation's own events then show. */
	if (reply == NULL)
		p->nav_started = true;
	if (!p->nav_started) {
		p->keep = NULL;
		page_end(p, CM_OK, result);
		return;
	}
	json_object_set_new(result, "navigated", json_true());
	p->until = ACT_UNTIL_DCL;
	page_nav_answered(p);
}

/*
 * The input's own answer may come before what it started: the renderer
 * acknowledges input on a path of its own, while a navigation it began
 * (a link, history.pushState) is told on the frame's.  One round trip to
 * the page's main thread, behind what the input made it do, brings every
 * such event first; then the call ends, or waits for its navigation.
 * A navigation that swaps the page's renderer refuses that round trip:
 * it is taken for the navigation it is.
 */
void
page_action_done(struct act_page *p, json_t *result)
{
	json_decref(p->keep);
	p->keep = result;
	p->acted = true;
	page_send_soft(p, p->session, "Runtime.evaluate",
	    json_pack("{s:s}", "expression", "0"), page_action_settled);
}

/* ---- navigate */

/* What navigate waits for: wait_until, "load" unless it says otherwise
 * (the schema allows only the three). */
static enum act_until
navigate_until(const struct act_page *p)
{
	const char *w =
	    json_string_value(json_object_get(p->args, "wait_until"));

	if (w != NULL && strcmp(w, "commit") == 0)
		return ACT_UNTIL_COMMIT;
	if (w != NULL && strcmp(w, "domcontentloaded") == 0)
		return ACT_UNTIL_DCL;
	return ACT_UNTIL_LOAD;
}

static void
page_navigated(struct act_page *p, const json_t *result)
{
	const char *err =
	    json_string_value(json_object_get(result, "errorText"));
	const char *loader =
	    json_string_value(json_object_get(result, "loaderId"));

	if (err != NULL && err[0] != '\0' && (p->dl_began || p->dl_expected)) {
		p->nav_answered = true;
		page_nav_download(p);
		return;
	}
	if (err != NULL && err[0] != '\0') {
		if (p->blocked_host[0] != '\0' ||
		    page_proxy_refused(p, p->doc_host))
			page_blocked(p);
		else
			page_fail(p, CM_E_RUNTIME_ERROR,
			    "navigation failed: %s", err);
		return;
	}
	/* Within the document nothing loads; otherwise the answer may come
	 * before the commit (the target's url is still empty then): the
	 * main frame's frameNavigated says when it is there. */
	if (loader == NULL)
		p->nav_same_doc = true;
	page_nav_answered(p);
}

void
cap_navigate(struct act_page *p)
{
	p->doc_status = 0;
	page_nav_arm(p, navigate_until(p));
	page_send(p, "Page.navigate",
	    json_pack("{s:O}", "url", json_object_get(p->args, "url")),
	    page_navigated);
}

/* ---- back and forward */

static void
page_history_done(struct act_page *p, const json_t *result)
{
	(void)result;
	/* The entry may be of this document (a pushState) or another: the
	 * main frame's events say which. */
	page_nav_answered(p);
}

static void
page_history(struct act_page *p, const json_t *result)
{
	json_int_t cur =
	    json_integer_value(json_object_get(result, "currentIndex"));
	const json_t *entries = json_object_get(result, "entries");
	bool back = strcmp(p->capability, "back") == 0;
	json_int_t to = back ? cur - 1 : cur + 1;
	const json_t *prev;

	if (to < 0 || (prev = json_array_get(entries, (size_t)to)) == NULL) {
		page_fail(p, CM_E_RUNTIME_ERROR, "there is no page to go %s to",
		    back ? "back" : "forward");
		return;
	}
	page_nav_arm(p, ACT_UNTIL_LOAD);
	page_send(p, "Page.navigateToHistoryEntry",
	    json_pack("{s:O}", "entryId", json_object_get(prev, "id")),
	    page_history_done);
}

void
cap_back(struct act_page *p)
{
	page_send(p, "Page.getNavigationHistory", NULL, page_history);
}

void
cap_forward(struct act_page *p)
{
	page_send(p, "Page.getNavigationHistory", NULL, page_history);
}

/* ---- reload */

static void
page_reloaded(struct act_page *p, const json_t *result)
{
	(void)result;
	/* The answer may come before the commit of the document it loads
	 * again: its events say when it is there, as navigate's do. */
	page_nav_answered(p);
}

void
cap_reload(struct act_page *p)
{
	page_nav_arm(p, navigate_until(p));
	page_send(p, "Page.reload", NULL, page_reloaded);
}
