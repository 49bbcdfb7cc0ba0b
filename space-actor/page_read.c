/*
 * page_read.c: the capabilities that read the page: snapshot (the
 * accessibility outline of the document as it is, whose refs later calls
 * name elements by),
 * extract_text (an element's or the body's text).
 */
#include "page.h"
#include "page_int.h"

#include "outline.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"

/*
 * The constant scripts.  Each is a function called on an element (or the
 * document) with JSON arguments; none is ever built from input.
 */
static const char JS_TEXT[] =
    "function(){return this.innerText === undefined ? this.textContent : "
    "this.innerText;}";

/* ---- snapshot */

static void
page_snapshot_tree(struct act_page *p, const json_t *result)
{
	json_int_t max =
	    json_integer_value(json_object_get(p->args, "max_chars"));
	size_t limit = max <= 0                      ? CM_SNAPSHOT_CHARS_DEFAULT
	               : max < CM_SNAPSHOT_CHARS_MAX ? (size_t)max
	                                             : CM_SNAPSHOT_CHARS_MAX;
	char *text;
	bool cut;

	if (p->refs == NULL && (p->refs = calloc(CM_SNAPSHOT_REFS_MAX,
	                            sizeof(*p->refs))) == NULL) {
		page_fail(p, CM_E_RUNTIME_ERROR, "out of memory");
		return;
	}
	p->n_refs = 0;
	if (act_outline(json_object_get(result, "nodes"), limit, p->refs,
	        &p->n_refs, &text, &cut) != 0) {
		page_fail(p, CM_E_RUNTIME_ERROR,
		    "the page has no accessibility tree");
		return;
	}
	p->keep = json_pack("{s:s, s:b}", "snapshot", text, "truncated", cut);
	free(text);
	if (cut)
		json_object_set_new(p->keep, "note",
		    json_string("the outline was cut; raise max_chars or act "
		                "on the refs shown"));
	page_info(p);
}

/* The document as it is: one still loading is read too, and the result
 * says it is loading.  Nothing here waits for the page. */
void
cap_snapshot(struct act_page *p)
{
	page_send(p, "Accessibility.getFullAXTree", NULL, page_snapshot_tree);
}

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
