/*
 * page_pointer.c: the capabilities of a person's pointer that are not a
 * click: hover (the pointer rests on an element) and drag (pressed on
 * one, moved, released on another).  Both reach their elements as a
 * click does (page_reach: scrolled into view, visible, enabled, not
 * covered at the point the pointer goes to).
 *
 * A drag is the mouse's: press, CM_DRAG_MOVES moves with the button held,
 * release; a slider or a sortable list that follows the mouse moves with
 * them.  An HTML5 drag (an element with draggable=true) is the browser's
 * own, which a headless browser has no window to run: with
 * Input.setInterceptDrags the browser hands the drag it would start to
 * the client instead (Input.dragIntercepted, with the data the page's
 * dragstart put in it), and the client drops that data on the target
 * with Input.dispatchDragEvent (dragEnter, dragOver, drop).
 * Interception is turned off again at the drag's end; a drag that failed
 * half-way leaves it on until the next drag turns it off, which does no
 * harm: only a pressed pointer that moves starts a drag, and only a drag
 * does that.
 */
#include "page.h"
#include "page_int.h"

#include <stdio.h>
#include <string.h>

/* Whether the pointer is on the element (it matches :hover). */
static const char JS_HOVERED[] = "function(){return this.matches(':hover');}";

/* ---- hover */

static void
page_hover_seen(struct act_page *p, const json_t *result)
{
	const json_t *v = page_value(p, result);

	if (p->done)
		return;
	if (!json_is_true(v)) {
		page_fail(p, CM_E_OUTCOME_UNKNOWN,
		    "the pointer was moved to the element's centre, and the "
		    "element is not hovered (the page may have moved it)");
		return;
	}
	page_action_done(p, json_pack("{s:b}", "hovered", 1));
}

static void
page_hover_moved(struct act_page *p, const json_t *result)
{
	(void)result;
	page_call_on(p, JS_HOVERED, NULL, false, page_hover_seen);
}

static void
page_hover_reached(struct act_page *p)
{
	struct page_button none = {"none", 0, 0, 0};

	page_mouse_at(p, "mouseMoved", p->x, p->y, &none, page_hover_moved);
}

static void
page_hover_at(struct act_page *p)
{
	page_reach(p, true, false, page_hover_reached);
}

void
cap_hover(struct act_page *p)
{
	page_element(p, false, page_hover_at);
}

/* ---- drag */

/* The element args' from or to names becomes the one page_element
 * finds: its ref or selector is copied to the args' top level. */
static void
page_drag_name(struct act_page *p, const char *which)
{
	const json_t *o = json_object_get(p->args, which);

	json_object_del(p->args, "ref");
	json_object_del(p->args, "selector");
	if (json_object_get(o, "ref") != NULL)
		json_object_set(p->args, "ref", json_object_get(o, "ref"));
	if (json_object_get(o, "selector") != NULL)
		json_object_set(
		    p->args, "selector", json_object_get(o, "selector"));
}

/* The target's receipt: the release, or the drop, went to it.  Dropped
 * says that the page took the drag's data there (its drop event). */
static void
page_drag_landed(struct act_page *p, const json_t *result)
{
	page_action_done(p,
	    json_pack("{s:b, s:b}", "dragged", 1, "dropped",
	        json_object_get(p->keep, "data") != NULL &&
	            json_integer_value(json_object_get(result, "drop")) > 0));
}

/* The source's receipt: the press went to it. */
static void
page_drag_took(struct act_page *p, const json_t *result)
{
	(void)result;
	page_receipt_read(
	    p, p->object, p->at, PAGE_RECEIPT_RELEASE, page_drag_landed);
}

static void
page_drag_over(struct act_page *p, const json_t *result)
{
	(void)result;
	page_receipt_read(
	    p, p->from_object, p->from_at, PAGE_RECEIPT_PRESS, page_drag_took);
}

static void
page_drag_released(struct act_page *p, const json_t *result)
{
	(void)result;
	page_send(p, "Input.setInterceptDrags",
	    json_pack("{s:b}", "enabled", 0), page_drag_over);
}

static void
page_drag_release(struct act_page *p, const json_t *result)
{
	struct page_button left = {"left", 0, 1, 0};

	(void)result;
	page_mouse_at(
	    p, "mouseReleased", p->x, p->y, &left, page_drag_released);
}

/* The browser's drag, dropped on the target: dragEnter, dragOver, then
 * drop, each with the drag's data. */
static void
page_drag_event(struct act_page *p, const char *type, page_step next)
{
	page_send(p, "Input.dispatchDragEvent",
	    json_pack("{s:s, s:f, s:f, s:O}", "type", type, "x", p->x, "y",
	        p->y, "data", json_object_get(p->keep, "data")),
	    next);
}

static void
page_drag_dropped(struct act_page *p, const json_t *result)
{
	(void)result;
	page_drag_event(p, "drop", page_drag_release);
}

static void
page_drag_entered(struct act_page *p, const json_t *result)
{
	(void)result;
	page_drag_event(p, "dragOver", page_drag_dropped);
}

/*
 * After the moves, and one round trip to the page's main thread behind
 * them: a drag the page began has been intercepted by now (the browser
 * tells of it as the move that starts it is handled).
 */
static void
page_drag_settled(struct act_page *p, const json_t *result)
{
	(void)result;
	if (json_object_get(p->keep, "data") != NULL)
		page_drag_event(p, "dragEnter", page_drag_entered);
	else
		page_drag_release(p, NULL);
}

static void
page_drag_move(struct act_page *p, const json_t *result)
{
	struct page_button held = {"left", 1, 0, 0};
	double f;

	(void)result;
	if (p->step >= CM_DRAG_MOVES) {
		page_send(p, "Runtime.evaluate",
		    json_pack("{s:s}", "expression", "0"), page_drag_settled);
		return;
	}
	f = (double)++p->step / CM_DRAG_MOVES;
	page_mouse_at(p, "mouseMoved", p->from_x + (p->x - p->from_x) * f,
	    p->from_y + (p->y - p->from_y) * f, &held, page_drag_move);
}

static void
page_drag_pressed(struct act_page *p, const json_t *result)
{
	(void)result;
	p->step = 0;
	page_drag_move(p, NULL);
}

static void
page_drag_at_from(struct act_page *p, const json_t *result)
{
	struct page_button left = {"left", 1, 1, 0};

	(void)result;
	page_mouse_at(
	    p, "mousePressed", p->from_x, p->from_y, &left, page_drag_pressed);
}

static void
page_drag_intercepting(struct act_page *p, const json_t *result)
{
	struct page_button none = {"none", 0, 0, 0};

	(void)result;
	page_mouse_at(
	    p, "mouseMoved", p->from_x, p->from_y, &none, page_drag_at_from);
}

/* Both points known (p->from_*, and the target's in p->x, p->y). */
static void
page_drag_to_reached(struct act_page *p)
{
	json_decref(p->keep);
	p->keep = json_object(); /* the drag's data, once intercepted */
	page_send(p, "Input.setInterceptDrags",
	    json_pack("{s:b}", "enabled", 1), page_drag_intercepting);
}

/* The target is not scrolled to: the source is in view, and the target
 * must be in view with it, where the pointer can reach both.  It is
 * armed for the release's receipt, the source for the press's: a drag
 * is a success only when each got its part. */
static void
page_drag_to_at(struct act_page *p)
{
	page_reach_armed(p, true, PAGE_RECEIPT_RELEASE, page_drag_to_reached);
}

static void
page_drag_from_reached(struct act_page *p)
{
	p->from_x = p->x;
	p->from_y = p->y;
	snprintf(p->from_object, sizeof(p->from_object), "%s", p->object);
	snprintf(p->from_at, sizeof(p->from_at), "%s", p->at);
	page_drag_name(p, "to");
	page_element(p, false, page_drag_to_at);
}

static void
page_drag_from_at(struct act_page *p)
{
	page_reach_armed(p, false, PAGE_RECEIPT_PRESS, page_drag_from_reached);
}

void
cap_drag(struct act_page *p)
{
	page_drag_name(p, "from");
	page_element(p, false, page_drag_from_at);
}

void
page_drag_intercepted(struct act_page *p, const json_t *params)
{
	const json_t *data = json_object_get(params, "data");

	if (!p->busy || p->done || strcmp(p->capability, "drag") != 0 ||
	    !json_is_object(p->keep) || !json_is_object(data))
		return;
	json_object_set_new(p->keep, "data", json_deep_copy(data));
}
