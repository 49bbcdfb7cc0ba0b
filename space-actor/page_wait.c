/*
 * page_wait.c: wait_for, which waits for a text in the page, an element
 * a selector matches, or the element of a ref to be visible, until
 * timeout_ms.  The wait is the page's own: one constant script, awaited,
 * that looks at once and then on every change of the document (a
 * MutationObserver), and gives up after timeout_ms.  A navigation ends
 * the script's document: the wait looks again in the next one once the
 * main frame has committed it.  The actor's own bound, a little past
 * timeout_ms, ends a wait whose page never answers.  Nothing here polls.
 */
#include "page.h"
#include "page_int.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"

/*
 * Called on the document (text, selector) or on the element (visible)
 * with (kind, what, ms): resolves true once it holds, false after ms.
 * Visible: connected, with a box, and not visibility:hidden.
 */
static const char JS_WAIT[] =
    "function(kind,what,ms){const t=this;"
    "const ok=function(){try{"
    "if(kind==='text')return !!(t.body&&t.body.innerText.includes(what));"
    "if(kind==='selector')return t.querySelector(what)!==null;"
    "if(!t.isConnected)return false;const r=t.getBoundingClientRect();"
    "return r.width>0&&r.height>0&&"
    "getComputedStyle(t).visibility==='visible';"
    "}catch(e){return false;}};"
    "if(ok())return true;"
    "return new Promise(function(res){"
    "const root=kind==='visible'?t.ownerDocument:t;"
    "const mo=new MutationObserver(function(){if(ok()){done(true);}});"
    "const timer=setTimeout(function(){done(ok());},ms);"
    "function done(v){mo.disconnect();clearTimeout(timer);res(v);}"
    "mo.observe(root,{subtree:true,childList:true,attributes:true,"
    "characterData:true});});}";

/* The slack past timeout_ms the page has to say it gave up. */
#define WAIT_SLACK_MS 1000

static const char *
wait_kind(const struct act_page *p)
{
	if (json_object_get(p->args, "text") != NULL)
		return "text";
	if (json_object_get(p->args, "selector") != NULL)
		return "selector";
	return "visible";
}

static void
page_wait_answered(struct act_page *p, const json_t *result)
{
	const json_t *v = page_value(p, result);

	if (p->done)
		return;
	p->poll_at_ms = -1;
	if (json_is_true(v)) {
		page_end(p, CM_OK, json_pack("{s:b}", "found", 1));
		return;
	}
	page_fail(p, CM_E_ELEMENT_NOT_FOUND,
	    strcmp(wait_kind(p), "visible") == 0
	        ? "the element did not become visible within timeout_ms"
	        : "nothing matched within timeout_ms");
}

/* The time left of the wait, in ms (at least 0). */
static json_int_t
wait_left(const struct act_page *p)
{
	int64_t left = p->wait_end_ms - cm_mono_ms();

	return left > 0 ? left : 0;
}

static void
page_wait_on(struct act_page *p)
{
	const char *kind = wait_kind(p);
	const json_t *what = json_object_get(p->args, kind);

	p->look_again = true;
	p->wait_commits = p->commits;
	p->keep_waiting = false;
	/* The page's answer is awaited; the actor's bound is a little
	 * later, should the page never give it. */
	p->poll_at_ms = p->wait_end_ms + WAIT_SLACK_MS;
	page_call_on_awaited(p, JS_WAIT,
	    json_pack("[s, O, I]", kind, what != NULL ? what : json_null(),
	        wait_left(p)),
	    page_wait_answered);
}

static void
page_wait_doc(struct act_page *p, const json_t *result)
{
	const char *id = json_string_value(
	    json_object_get(json_object_get(result, "result"), "objectId"));

	if (id == NULL || strlen(id) >= sizeof(p->object)) {
		page_wait_lost(p);
		return;
	}
	snprintf(p->object, sizeof(p->object), "%s", id);
	page_wait_on(p);
}

/* Looks in the document as it is now. */
static void
page_wait_look(struct act_page *p)
{
	p->look_again = true;
	p->wait_commits = p->commits;
	if (strcmp(wait_kind(p), "visible") == 0) {
		/* A ref names an element of one document: once that is
		 * gone, so is the element, and page_element says so. */
		p->look_again = false;
		page_element(p, false, page_wait_on);
		return;
	}
	page_send(p, "Runtime.evaluate",
	    json_pack("{s:s}", "expression", "document"), page_wait_doc);
}

void
page_wait_lost(struct act_page *p)
{
	if (!p->busy || p->done)
		return;
	/* The document went away under the look.  If the next one is there
	 * already, look in it; else look once the main frame commits it. */
	if (p->commits != p->wait_commits)
		page_wait_look(p);
	else
		p->keep_waiting = true;
}

void
page_wait_committed(struct act_page *p)
{
	if (p->busy && !p->done && p->keep_waiting && p->cmd == 0) {
		p->keep_waiting = false;
		page_wait_look(p);
	}
}

void
page_wait_due(struct act_page *p)
{
	if (p->cmd > 0)
		act_cdp_forget(p->cdp, p->cmd);
	p->cmd = 0;
	p->next = NULL;
	page_fail(
	    p, CM_E_ELEMENT_NOT_FOUND, "nothing matched within timeout_ms");
}

void
cap_wait_for(struct act_page *p)
{
	json_int_t t =
	    json_integer_value(json_object_get(p->args, "timeout_ms"));

	p->wait_end_ms = cm_mono_ms() + (t > 0 ? t : 0);
	if (t <= 0 || p->wait_end_ms > p->deadline_ms)
		p->wait_end_ms = p->deadline_ms;
	page_wait_look(p);
}
