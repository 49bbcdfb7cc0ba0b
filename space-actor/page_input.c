/*
 * page_input.c: the capabilities that act on a page as a user would:
 * click, type, press and scroll.  Each is a fixed sequence of CDP calls
 * on the steps page.c provides (page_int.h).
 */
#include "page.h"
#include "page_int.h"

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
 * view, it must be connected, rendered and visible, and not disabled (a
 * form control's :disabled, inherited from a fieldset too, or
 * aria-disabled on it or above it).  With hit set, the point a click
 * would land on, the centre of its box, must hit the element or
 * something inside it (through open shadow roots): what else the point
 * hits would get the click.  Returns {why} when it may not be acted on,
 * else {x, y, covered}.
 */
static const char JS_ACTIONABLE[] =
    "function(hit){if(!this.isConnected)return {why:'gone'};"
    "if(this.nodeType!==1)return {why:'hidden'};"
    "this.scrollIntoView({block:'center',inline:'center'});"
    "const s=getComputedStyle(this),r=this.getBoundingClientRect();"
    "if(r.width<=0||r.height<=0||s.visibility!=='visible')"
    "return {why:'hidden'};"
    "if(this.matches(':disabled')||this.closest('[aria-disabled=true]'))"
    "return {why:'disabled'};"
    "const x=r.left+r.width/2,y=r.top+r.height/2;"
    "if(!hit)return {x:x,y:y,covered:false};"
    "let h=document.elementFromPoint(x,y);"
    "while(h&&h.shadowRoot){const d=h.shadowRoot.elementFromPoint(x,y);"
    "if(!d||d===h)break;h=d;}"
    "let n=h;while(n&&n!==this)n=n.parentNode||n.host;"
    "return {x:x,y:y,covered:n!==this};}";
/* ---- click */

static void
page_mouse(struct act_page *p, const char *type,
    void (*next)(struct act_page *, const json_t *))
{
	page_send(p, "Input.dispatchMouseEvent",
	    json_pack("{s:s, s:f, s:f, s:s, s:i}", "type", type, "x", p->x, "y",
	        p->y, "button", strcmp(type, "mouseMoved") ? "left" : "none",
	        "clickCount", strcmp(type, "mouseMoved") ? 1 : 0),
	    next);
}

static void
page_released(struct act_page *p, const json_t *result)
{
	(void)result;
	page_action_done(p, json_pack("{s:b}", "clicked", 1));
}

static void
page_pressed(struct act_page *p, const json_t *result)
{
	(void)result;
	page_mouse(p, "mouseReleased", page_released);
}

static void
page_moved(struct act_page *p, const json_t *result)
{
	(void)result;
	page_mouse(p, "mousePressed", page_pressed);
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
		    why != NULL && strcmp(why, "disabled") == 0
		        ? "disabled"
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
	    "%s covers the element, and would get the click; close or move "
	    "it first (a new snapshot shows it)",
	    name);
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
page_click_checked(struct act_page *p, const json_t *result)
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
	page_mouse(p, "mouseMoved", page_moved);
}

static void
page_click_at(struct act_page *p)
{
	page_call_on(
	    p, JS_ACTIONABLE, json_pack("[b]", 1), false, page_click_checked);
}

void
cap_click(struct act_page *p)
{
	page_element(p, false, page_click_at);
}

/* ---- type and press */

struct key {
	const char *name;
	const char *code;
	int vk;
	const char *text;
};

static const struct key keys[] = {
    {"Enter", "Enter", 13, "\r"},
    {"Tab", "Tab", 9, NULL},
    {"Escape", "Escape", 27, NULL},
    {"Backspace", "Backspace", 8, NULL},
    {"Delete", "Delete", 46, NULL},
    {"ArrowUp", "ArrowUp", 38, NULL},
    {"ArrowDown", "ArrowDown", 40, NULL},
    {"ArrowLeft", "ArrowLeft", 37, NULL},
    {"ArrowRight", "ArrowRight", 39, NULL},
    {"Home", "Home", 36, NULL},
    {"End", "End", 35, NULL},
    {"PageUp", "PageUp", 33, NULL},
    {"PageDown", "PageDown", 34, NULL},
    {" ", "Space", 32, " "},
};

static const struct key *
key_find(const char *name)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

static void
page_key(struct act_page *p, const struct key *k, bool down,
    void (*next)(struct act_page *, const json_t *))
{
	json_t *params = json_pack("{s:s, s:s, s:s, s:i}", "type",
	    down ? (k->text ? "keyDown" : "rawKeyDown") : "keyUp", "key",
	    k->name, "code", k->code, "windowsVirtualKeyCode", k->vk);

	if (down && k->text != NULL)
		json_object_set_new(params, "text", json_string(k->text));
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
	page_key(p, key_find(name), false, page_key_up_done);
}

static void
page_inserted(struct act_page *p, const json_t *result)
{
	(void)result;
	if (json_is_true(json_object_get(p->args, "submit")))
		page_key(p, key_find("Enter"), true, page_key_down_done);
	else
		page_key_up_done(p, NULL);
}

/* The capability that sets an element of a kind type does not fill. */
static const char *
fitting_capability(const char *kind)
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
		    n > 0 ? kind : "unknown", fitting_capability(kind));
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
page_type_checked(struct act_page *p, const json_t *result)
{
	bool covered;

	if (!page_actionable(p, result, &covered))
		return;
	page_call_on(p, JS_EDITABLE, NULL, false, page_focused);
}

/* Visible and enabled first (JS_ACTIONABLE, no hit test: typing goes to
 * the focus, not to a point), then editable and focused. */
static void
page_focus(struct act_page *p)
{
	page_call_on(
	    p, JS_ACTIONABLE, json_pack("[b]", 0), false, page_type_checked);
}

void
cap_type(struct act_page *p)
{
	page_element(p, false, page_focus);
}

void
cap_press(struct act_page *p)
{
	const char *name = json_string_value(json_object_get(p->args, "key"));
	const struct key *k = name != NULL ? key_find(name) : NULL;

	if (k == NULL) {
		page_fail(
		    p, CM_E_INVALID_ARGS, "that key is not one press knows");
		return;
	}
	page_key(p, k, true, page_key_down_done);
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
