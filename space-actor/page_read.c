/*
 * page_read.c: the capabilities that read the page: extract_text (an
 * element's or the body's text) and wait_for (a text or a selector, looked
 * for every CM_WAIT_POLL_MS until timeout_ms).  The snapshot is
 * page_snapshot.c's.
 */
#include "page.h"
#include "page_int.h"

#include <string.h>

#include "clock.h"

/*
 * The constant scripts.  Each is a function called on an element (or the
 * document) with JSON arguments; none is ever built from input.
 */
static const char JS_TEXT[] =
    "function(){return this.innerText === undefined ? this.textContent : "
    "this.innerText;}";
static const char JS_HAS_TEXT[] =
    "function(t){return !!(this.body&&this.body.innerText.includes(t));}";

/* ---- extract_text */

static void
page_text(struct act_page *p, const json_t *result)
{
	const json_t *v = page_value(p, result);
	const char *s;
	size_t n;
	json_t *out;

	if (v == NULL)
		return;
	s = json_string_value(v) ? json_string_value(v) : "";
	n = strlen(s);
	if (n > CM_TEXT_MAX) {
		n = CM_TEXT_MAX;
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	out =
	    json_pack("{s:s%, s:b}", "text", s, n, "truncated", n < strlen(s));
	page_end(p, CM_OK, out);
}

static void
page_text_of(struct act_page *p)
{
	page_call_on(p, JS_TEXT, NULL, false, page_text);
}

void
cap_extract_text(struct act_page *p)
{
	if (json_object_get(p->args, "ref") == NULL &&
	    json_object_get(p->args, "selector") == NULL) {
		/* The whole page: the body's text. */
		json_object_set_new(p->args, "selector", json_string("body"));
	}
	page_element(p, false, page_text_of);
}

/* ---- wait_for */

static void
page_wait_looked(struct act_page *p, const json_t *result)
{
	const json_t *v = page_value(p, result);
	bool found;

	if (p->done)
		return;
	found = json_object_get(p->args, "text") != NULL
	            ? json_is_true(v)
	            : json_is_true(v) || json_is_object(v);
	if (found) {
		page_end(p, CM_OK, json_pack("{s:b}", "found", 1));
		return;
	}
	if (cm_mono_ms() >= p->wait_end_ms) {
		page_fail(p, CM_E_ELEMENT_NOT_FOUND,
		    "nothing matched within timeout_ms");
		return;
	}
	p->poll_at_ms = cm_mono_ms() + CM_WAIT_POLL_MS;
}

static void
page_wait_doc(struct act_page *p, const json_t *result)
{
	const char *id = json_string_value(
	    json_object_get(json_object_get(result, "result"), "objectId"));
	const json_t *text = json_object_get(p->args, "text");
	const json_t *sel = json_object_get(p->args, "selector");

	if (id == NULL || strlen(id) >= sizeof(p->object)) {
		/* Between documents: look again. */
		json_t *none = json_object();

		page_wait_looked(p, none);
		json_decref(none);
		return;
	}
	snprintf(p->object, sizeof(p->object), "%s", id);
	if (text != NULL)
		page_call_on(p, JS_HAS_TEXT, json_pack("[O]", text), false,
		    page_wait_looked);
	else
		page_call_on(p,
		    "function(s){return this.querySelector(s)!==null;}",
		    json_pack("[O]", sel), false, page_wait_looked);
}

void
page_wait_look(struct act_page *p)
{
	p->look_again = true;
	page_send(p, "Runtime.evaluate",
	    json_pack("{s:s}", "expression", "document"), page_wait_doc);
}

void
cap_wait_for(struct act_page *p)
{
	json_int_t t =
	    json_integer_value(json_object_get(p->args, "timeout_ms"));

	if (json_object_get(p->args, "text") == NULL &&
	    json_object_get(p->args, "selector") == NULL) {
		page_fail(
		    p, CM_E_INVALID_ARGS, "wait_for needs text or a selector");
		return;
	}
	p->wait_end_ms = cm_mono_ms() + (t > 0 ? t : 0);
	if (t <= 0 || p->wait_end_ms > p->deadline_ms)
		p->wait_end_ms = p->deadline_ms;
	page_wait_look(p);
}
