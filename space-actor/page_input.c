/*
 * page_input.c: the capabilities that act on a page as a user would:
 * click, type, press and scroll.  Each is a fixed sequence of CDP calls
 * on the steps page.c provides (page_int.h).
 */
#include "page.h"
#include "page_int.h"

#include <string.h>

static const char JS_SCROLL[] = "function(dx,dy){window.scrollBy(dx,dy);"
                                "return [window.scrollX,window.scrollY];}";
static const char JS_FOCUS[] =
    "function(){this.focus();return document.activeElement===this;}";
static const char JS_CENTER[] =
    "function(){this.scrollIntoView({block:'center',inline:'center'});"
    "const r=this.getBoundingClientRect();"
    "return (r.width>0&&r.height>0)?[r.left+r.width/2,r.top+r.height/2]"
    ":null;}";
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
	page_end(p, CM_OK, json_pack("{s:b}", "clicked", 1));
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

static void
page_centered(struct act_page *p, const json_t *result)
{
	const json_t *v = page_value(p, result);

	if (p->done)
		return;
	if (!json_is_array(v) || json_array_size(v) != 2) {
		page_fail(p, CM_E_ELEMENT_NOT_FOUND,
		    "the element is not visible; take a new snapshot");
		return;
	}
	p->x = json_number_value(json_array_get(v, 0));
	p->y = json_number_value(json_array_get(v, 1));
	page_mouse(p, "mouseMoved", page_moved);
}

static void
page_click_at(struct act_page *p)
{
	page_call_on(p, JS_CENTER, NULL, false, page_centered);
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
	page_end(p, CM_OK,
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

static void
page_focused(struct act_page *p, const json_t *result)
{
	const json_t *v = page_value(p, result);

	if (p->done)
		return;
	if (!json_is_true(v)) {
		page_fail(p, CM_E_ELEMENT_NOT_FOUND,
		    "the element cannot take input; take a new snapshot");
		return;
	}
	page_send(p, "Input.insertText",
	    json_pack("{s:O}", "text", json_object_get(p->args, "text")),
	    page_inserted);
}

static void
page_focus(struct act_page *p)
{
	page_call_on(p, JS_FOCUS, NULL, false, page_focused);
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
