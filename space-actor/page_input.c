/*
 * page_input.c: the capabilities that act on a page as a user would:
 * click, type, press and scroll.  Each is a fixed sequence of CDP calls
 * on the steps page.c provides (page_int.h).
 */
#include "page.h"
#include "page_int.h"

#include "keys.h"
#include "outline.h"

#include <stdio.h>
#include <string.h>

static const char JS_SCROLL[] = "function(dx,dy){window.scrollBy(dx,dy);"
                                "return [window.scrollX,window.scrollY];}";
/*
 * Whether the element takes typed text, and then its focus: a text-like
 * input, a textarea or an editable element (contenteditable).  Returns
 * "ok" once it has the focus, "unfocused" when it would not take it,
 * "readonly", or "not_editable:<kind>" naming what it is (a select, a
 * checkbox, a range...) so the failure can say which capability fits.
 */
static const char JS_EDITABLE[] =
    "function(){const t=this,k=t.localName;"
    "const text=['text','search','email','url','tel','password','number'];"
    "if(k==='input'&&!text.includes(t.type))return 'not_editable:'+t.type;"
    "if(k==='select')return 'not_editable:select';"
    "if(k!=='input'&&k!=='textarea'&&!t.isContentEditable)"
    "return 'not_editable:'+k;"
    "if(t.readOnly)return 'readonly';"
    "t.focus();const a=t.getRootNode().activeElement;"
    "return a===t?'ok':'unfocused';}";
/*
 * Whether a person could act on the element, as it stands: scrolled into
 * view (unless stay: then its centre must be in the viewport as it is),
 * it must be connected, rendered and visible, and not disabled (a form
 * control's :disabled, inherited from a fieldset too, or aria-disabled on
 * it or above it).  With hit set, the point a click would land on, the
 * centre of its box, must hit the element or something inside it
 * (through open shadow roots): what else the point hits would get the
 * click.  Returns {why} when it may not be acted on, else {x, y, covered}.
 * With arm (a list of event types; null: none), an element the point
 * hits is armed for a receipt (JS_RECEIPT): a capture listener on its
 * window counts the events of those types, and those of them a drop is.
 */
static const char JS_ACTIONABLE[] =
    "function(hit,stay,arm){if(!this.isConnected)return {why:'gone'};"
    "if(this.nodeType!==1)return {why:'hidden'};"
    "if(!stay)this.scrollIntoView({block:'center',inline:'center'});"
    "const s=getComputedStyle(this),r=this.getBoundingClientRect();"
    "if(r.width<=0||r.height<=0||s.visibility!=='visible')"
    "return {why:'hidden'};"
    "if(this.matches(':disabled')||this.closest('[aria-disabled=true]'))"
    "return {why:'disabled'};"
    "const x=r.left+r.width/2,y=r.top+r.height/2;"
    "if(x<0||y<0||x>=innerWidth||y>=innerHeight)return {why:'outside'};"
    "if(!hit)return {x:x,y:y,covered:false};"
    "let h=document.elementFromPoint(x,y);"
    "while(h&&h.shadowRoot){const d=h.shadowRoot.elementFromPoint(x,y);"
    "if(!d||d===h)break;h=d;}"
    "let n=h;while(n&&n!==this)n=n.parentNode||n.host;"
    "if(n===this&&arm){const el=this,w=this.ownerDocument.defaultView,"
    "o=el.__spacedReceipt,r={n:0,hit:0,drop:0};"
    "if(o)for(const t of o.t)o.w.removeEventListener(t,o.h,true);"
    "const f=function(e){r.n++;if(e.composedPath().indexOf(el)>=0){r.hit++;"
    "if(e.type==='drop')r.drop++;}};"
    "for(const t of arm)w.addEventListener(t,f,true);"
    "el.__spacedReceipt={w:w,h:f,r:r,t:arm};}"
    "return {x:x,y:y,covered:n!==this};}";
/*
 * What the element's document saw of the events since JS_ACTIONABLE
 * armed it: {n, hit, drop}, the events any element of the document got,
 * those that went to the element or inside it, and the drops among
 * these; n is -1 when nothing was armed.  The listeners go.  The script
 * and its record live in the actor's world, so the page sees neither.
 */
static const char JS_RECEIPT[] =
    "function(){const o=this.__spacedReceipt;if(!o)return {n:-1,hit:0};"
    "for(const t of o.t)o.w.removeEventListener(t,o.h,true);"
    "delete this.__spacedReceipt;return o.r;}";

/* The events each receipt counts. */
static json_t *
page_receipt_types(enum page_receipt r)
{
	switch (r) {
	case PAGE_RECEIPT_PRESS:
		return json_pack("[s, s]", "pointerdown", "mousedown");
	case PAGE_RECEIPT_RELEASE:
		return json_pack("[s, s, s]", "pointerup", "mouseup", "drop");
	case PAGE_RECEIPT_NONE:
		break;
	}
	return json_null();
}
/* ---- reaching an element, and the mouse */

void
page_mouse_at(struct act_page *p, const char *type, double x, double y,
    const struct page_button *b, page_step next)
{
	page_send(p, "Input.dispatchMouseEvent",
	    json_pack("{s:s, s:f, s:f, s:s, s:i, s:i, s:i}", "type", type, "x",
	        x, "y", y, "button", b->button, "buttons", b->buttons,
	        "clickCount", b->count, "modifiers", b->modifiers),
	    next);
}

/*
 * The answer of JS_ACTIONABLE: false (and the call failed) when the
 * element may not be acted on; else true, with its point in p->x, p->y
 * and *covered.
 */
static bool
page_actionable(struct act_page *p, const json_t *result, bool *covered)
{
	const json_t *v = page_value(p, result);
	const char *why;

	if (p->done)
		return false;
	why = json_string_value(json_object_get(v, "why"));
	if (why != NULL && strcmp(why, "gone") == 0) {
		page_not_found(p, "the element is no longer in the page");
		return false;
	}
	if (why != NULL || !json_is_number(json_object_get(v, "x")) ||
	    !json_is_number(json_object_get(v, "y"))) {
		page_fail(p, CM_E_ELEMENT_NOT_INTERACTABLE,
		    "the element is %s, so nothing was done to it",
		    why == NULL                    ? "not visible"
		    : strcmp(why, "disabled") == 0 ? "disabled"
		    : strcmp(why, "outside") == 0  ? "outside the viewport"
		                                   : "not visible");
		return false;
	}
	/* The script's point is its frame's; input goes to the top page. */
	p->x = json_number_value(json_object_get(v, "x")) + p->at_dx;
	p->y = json_number_value(json_object_get(v, "y")) + p->at_dy;
	*covered = json_is_true(json_object_get(v, "covered"));
	return true;
}

/* What the point hits, named as the outline names it. */
static void
page_cover_named(struct act_page *p, const json_t *result)
{
	char name[CM_SNAPSHOT_NAME_MAX + 64];

	if (act_outline_name(json_object_get(result, "nodes"), p->hit_node,
	        name, sizeof(name)) != 0)
		snprintf(name, sizeof(name), "another element");
	page_fail(p, CM_E_ELEMENT_OBSCURED,
	    "%s covers the element, and would get the %s; close or move "
	    "it first (a new snapshot shows it)",
	    name,
	    strcmp(p->capability, "hover") == 0 ||
	            strcmp(p->capability, "drag") == 0
	        ? "pointer"
	        : "click");
}

static void
page_cover_found(struct act_page *p, const json_t *result)
{
	const json_t *b = json_object_get(result, "backendNodeId");

	if (!json_is_integer(b)) {
		page_cover_named(p, NULL);
		return;
	}
	p->hit_node = json_integer_value(b);
	page_send(p, "Accessibility.getPartialAXTree",
	    json_pack("{s:I, s:b}", "backendNodeId", (json_int_t)p->hit_node,
	        "fetchRelatives", 1),
	    page_cover_named);
}

static void
page_reached(struct act_page *p, const json_t *result)
{
	bool covered;

	if (!page_actionable(p, result, &covered))
		return;
	if (covered) {
		page_send(p, "DOM.getNodeForLocation",
		    json_pack("{s:i, s:i, s:b}", "x", (int)p->x, "y", (int)p->y,
		        "includeUserAgentShadowDOM", 0),
		    page_cover_found);
		return;
	}
	p->then(p);
}

static void
page_reach_as(struct act_page *p, bool hit, bool stay, enum page_receipt r,
    void (*then)(struct act_page *p))
{
	p->then = then;
	page_call_on(p, JS_ACTIONABLE,
	    json_pack("[b, b, o]", hit, stay, page_receipt_types(r)), false,
	    page_reached);
}

void
page_reach(
    struct act_page *p, bool hit, bool stay, void (*then)(struct act_page *p))
{
	page_reach_as(p, hit, stay, PAGE_RECEIPT_NONE, then);
}

void
page_reach_armed(struct act_page *p, bool stay, enum page_receipt r,
    void (*then)(struct act_page *p))
{
	page_reach_as(p, true, stay, r, then);
}

/*
 * The receipt of a click: the input went to the top page at the
 * element's point, and the browser, not the page, chose which document
 * got it.  Right after an out-of-process frame loads, the browser may
 * still send its area's input to the parent page, which gives it to the
 * iframe element: the button inside never sees it, while every command
 * was answered.  So a click is a success only when the element's own
 * document counted a press on it.
 *
 * A read refused means the element's document went away right after the
 * press (the click led its frame elsewhere, as a link does): the press
 * was taken, and the navigation is what the call then reports.  A drag's
 * release is read the same way (page_pointer.c).
 */
static void
page_receipt_got(struct act_page *p, const json_t *result)
{
	const char *what =
	    p->receipt == PAGE_RECEIPT_RELEASE ? "release" : "press";
	const json_t *v;
	json_int_t n, hit;

	if (result == NULL) {
		p->clicked(p, NULL);
		return;
	}
	if ((v = page_value(p, result)) == NULL)
		return;
	n = json_integer_value(json_object_get(v, "n"));
	hit = json_integer_value(json_object_get(v, "hit"));
	if (hit > 0 || n < 0) {
		p->clicked(p, v);
		return;
	}
	page_fail(p, CM_E_OUTCOME_UNKNOWN,
	    n == 0 ? "the %s reached the page but not the element's "
	             "document: the browser gave it to the page around it; "
	             "take a new snapshot to see what it did"
	           : "the %s reached the page but another element of its "
	             "document took it; take a new snapshot to see what it "
	             "did",
	    what);
}

void
page_receipt_read(struct act_page *p, const char *object, const char *at,
    enum page_receipt r, page_step next)
{
	p->receipt = r;
	p->clicked = next;
	page_send_soft(p, at[0] != '\0' ? at : p->session,
	    "Runtime.callFunctionOn",
	    json_pack("{s:s, s:s, s:b}", "objectId", object,
	        "functionDeclaration", JS_RECEIPT, "returnByValue", 1),
	    page_receipt_got);
}

/* ---- click */

/* The modifier keys args name (click's and press's "modifiers"), as the
 * mask Input's events take. */
static int
page_modifiers(const json_t *list)
{
	static const struct {
		const char *name;
		int bit;
	} mods[] = {{"Alt", 1}, {"Control", 2}, {"Meta", 4}, {"Shift", 8}};
	const json_t *m;
	size_t i;
	int mask = 0;

	json_array_foreach(list, i,
	    m) for (size_t k = 0; k < 4;
	            k++) if (json_is_string(m) &&
	                     strcmp(json_string_value(m), mods[k].name) == 0)
	    mask |= mods[k].bit;
	return mask;
}

/* The button args name (left unless they say otherwise; the schema
 * allows only the three), its mask among pressed buttons, and the
 * modifiers; with count the click's clickCount. */
static struct page_button
page_click_button(const struct act_page *p, int count)
{
	const char *b = json_string_value(json_object_get(p->args, "button"));
	struct page_button out = {"left", 1, count,
	    page_modifiers(json_object_get(p->args, "modifiers"))};

	if (b != NULL && strcmp(b, "right") == 0)
		out.button = "right", out.buttons = 2;
	else if (b != NULL && strcmp(b, "middle") == 0)
		out.button = "middle", out.buttons = 4;
	return out;
}

/* The clicks args ask for (click_count, 1 to 3 by the schema). */
static int
page_click_count(const struct act_page *p)
{
	json_int_t n =
	    json_integer_value(json_object_get(p->args, "click_count"));

	return n >= 2 && n <= 3 ? (int)n : 1;
}

static void page_click_press(struct act_page *p, const json_t *result);

/*
 * A double or triple click is presses and releases in a row whose
 * clickCount counts up, as a person's are: the page sees click, then
 * dblclick with the second, and the third selects a paragraph.
 */
static void
page_click_released(struct act_page *p, const json_t *result)
{
	if (p->step < page_click_count(p)) {
		page_click_press(p, result);
		return;
	}
	page_receipt_read(p, p->object, p->at, PAGE_RECEIPT_PRESS, p->clicked);
}

static void
page_click_pressed(struct act_page *p, const json_t *result)
{
	struct page_button b = page_click_button(p, p->step);

	(void)result;
	b.buttons = 0; /* none is held once it is released */
	page_mouse_at(p, "mouseReleased", p->x, p->y, &b, page_click_released);
}

static void
page_click_press(struct act_page *p, const json_t *result)
{
	struct page_button b = page_click_button(p, ++p->step);

	(void)result;
	page_mouse_at(p, "mousePressed", p->x, p->y, &b, page_click_pressed);
}

/*
 * Two frames painted by the element's renderer, or 100 ms: before a press
 * into an out-of-process frame, so that the browser routes its area's
 * input to it (measured: without it, 7 in 30 clicks right after such a
 * frame loaded went to the page around it; with it, 0 in 60).
 */
static const char JS_PAINTED[] =
    "function(){return new Promise(function(ok){"
    "setTimeout(ok,100);requestAnimationFrame(function(){"
    "requestAnimationFrame(function(){ok(1);});});});}";

static void page_click_move(struct act_page *p, const json_t *result);

static void
page_click_reached(struct act_page *p)
{
	if (p->at[0] != '\0') {
		page_call_on_awaited(p, JS_PAINTED, NULL, page_click_move);
		return;
	}
	page_click_move(p, NULL);
}

static void
page_click_move(struct act_page *p, const json_t *result)
{
	struct page_button b = page_click_button(p, 0);

	(void)result;
	b.button = "none";
	b.buttons = 0;
	p->step = 0;
	page_mouse_at(p, "mouseMoved", p->x, p->y, &b, page_click_press);
}

void
page_click_object(struct act_page *p, page_step after)
{
	p->clicked = after;
	page_reach_armed(p, false, PAGE_RECEIPT_PRESS, page_click_reached);
}

static void
page_released(struct act_page *p, const json_t *result)
{
	(void)result;
	page_action_done(p, json_pack("{s:b}", "clicked", 1));
}

static void
page_click_at(struct act_page *p)
{
	page_click_object(p, page_released);
}

void
cap_click(struct act_page *p)
{
	page_element(p, false, page_click_at);
}

/* ---- type and press */

/*
 * The key named name (keys.h), down or up, with the modifiers the args
 * name.  A key held with Control, Alt or Meta types nothing (a shortcut:
 * Control+a selects all, it does not type "a"), as a keyboard's does.
 */
static void
page_key(struct act_page *p, const char *name, bool down,
    void (*next)(struct act_page *, const json_t *))
{
	struct cm_key k;
	int mods = page_modifiers(json_object_get(p->args, "modifiers"));
	bool types;
	json_t *params;

	if (name == NULL || cm_key_find(name, &k) < 0) {
		page_fail(
		    p, CM_E_RUNTIME_ERROR, "that key is not one press knows");
		return;
	}
	types = k.text[0] != '\0' && (mods & ~8) == 0;
	params = json_pack("{s:s, s:s, s:i, s:i}", "type",
	    down ? (types ? "keyDown" : "rawKeyDown") : "keyUp", "key", name,
	    "windowsVirtualKeyCode", k.vk, "modifiers", mods);
	if (k.code[0] != '\0')
		json_object_set_new(params, "code", json_string(k.code));
	if (down && types)
		json_object_set_new(params, "text", json_string(k.text));
	page_send(p, "Input.dispatchKeyEvent", params, next);
}

static void
page_key_up_done(struct act_page *p, const json_t *result)
{
	(void)result;
	page_action_done(p,
	    strcmp(p->capability, "press") == 0
	        ? json_pack("{s:O}", "pressed", json_object_get(p->args, "key"))
	        : json_pack("{s:b}", "typed", 1));
}

static void
page_key_down_done(struct act_page *p, const json_t *result)
{
	const char *name =
	    strcmp(p->capability, "press") == 0
	        ? json_string_value(json_object_get(p->args, "key"))
	        : "Enter";

	(void)result;
	page_key(p, name, false, page_key_up_done);
}

static void
page_inserted(struct act_page *p, const json_t *result)
{
	(void)result;
	if (json_is_true(json_object_get(p->args, "submit")))
		page_key(p, "Enter", true, page_key_down_done);
	else
		page_key_up_done(p, NULL);
}

const char *
page_fitting_capability(const char *kind)
{
	if (strcmp(kind, "select") == 0)
		return "select_option";
	if (strcmp(kind, "file") == 0)
		return "upload";
	if (strcmp(kind, "checkbox") == 0 || strcmp(kind, "radio") == 0)
		return "check";
	if (strcmp(kind, "range") == 0 || strcmp(kind, "date") == 0 ||
	    strcmp(kind, "datetime-local") == 0 || strcmp(kind, "time") == 0 ||
	    strcmp(kind, "month") == 0 || strcmp(kind, "week") == 0 ||
	    strcmp(kind, "color") == 0)
		return "fill";
	return "click";
}

static void
page_focused(struct act_page *p, const json_t *result)
{
	const json_t *v = page_value(p, result);
	const char *r;
	char kind[32];

	if (p->done)
		return;
	r = json_string_value(v) ? json_string_value(v) : "";
	if (strncmp(r, "not_editable:", 13) == 0) {
		/* The page's word for the kind, to name it: letters and '-'
		 * only, bounded. */
		size_t n = 0;

		for (r += 13; *r != '\0' && n + 1 < sizeof(kind); r++)
			if ((*r >= 'a' && *r <= 'z') || *r == '-')
				kind[n++] = *r;
		kind[n] = '\0';
		page_fail(p, CM_E_ELEMENT_NOT_EDITABLE,
		    "the element (%s) takes no typed text, so nothing was "
		    "typed; use %s",
		    n > 0 ? kind : "unknown", page_fitting_capability(kind));
		return;
	}
	if (strcmp(r, "ok") != 0) {
		page_fail(p, CM_E_ELEMENT_NOT_INTERACTABLE,
		    "the element is %s, so nothing was typed",
		    strcmp(r, "readonly") == 0 ? "read-only"
		                               : "not able to take the focus");
		return;
	}
	page_send(p, "Input.insertText",
	    json_pack("{s:O}", "text", json_object_get(p->args, "text")),
	    page_inserted);
}

static void
page_type_reached(struct act_page *p)
{
	page_call_on(p, JS_EDITABLE, NULL, false, page_focused);
}

/* Visible and enabled first (no hit test: typing goes to the focus, not
 * to a point), then editable and focused. */
static void
page_focus(struct act_page *p)
{
	page_reach(p, false, false, page_type_reached);
}

void
cap_type(struct act_page *p)
{
	page_element(p, false, page_focus);
}

void
cap_press(struct act_page *p)
{
	/* The schema's "key" format takes only what keys.h knows. */
	page_key(p, json_string_value(json_object_get(p->args, "key")), true,
	    page_key_down_done);
}

/* ---- scroll */

static void
page_scrolled(struct act_page *p, const json_t *result)
{
	const json_t *v = page_value(p, result);

	if (p->done)
		return;
	page_end(p, CM_OK,
	    json_pack("{s:O?, s:O?}", "x", json_array_get(v, 0), "y",
	        json_array_get(v, 1)));
}

static void
page_scroll_doc(struct act_page *p)
{
	page_call_on(p, JS_SCROLL,
	    json_pack("[I, I]",
	        json_integer_value(json_object_get(p->args, "dx")),
	        json_integer_value(json_object_get(p->args, "dy"))),
	    false, page_scrolled);
}

void
cap_scroll(struct act_page *p)
{
	json_object_del(p->args, "selector");
	json_object_del(p->args, "ref");
	page_element(p, true, page_scroll_doc);
}
