/*
 * page_read.c: the capability that reads the page's text, extract_text
 * (an element's or the body's).  The snapshot is page_snapshot.c's, and
 * wait_for page_wait.c's.
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
