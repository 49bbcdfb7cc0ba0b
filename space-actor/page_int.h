/*
 * page_int.h: the steps the capability files share (page.c, page_input.c,
 * page_capture.c).
 * Not for drivers: they see page.h alone.
 *
 * A step sends one command and names the step that takes its reply; a
 * call ends once, with page_end or page_fail, after which p->done is set
 * and no step runs again.
 */
#ifndef ACT_PAGE_INT_H
#define ACT_PAGE_INT_H

#include <jansson.h>
#include <stdbool.h>

#include "errors.h"
#include "page.h"

typedef void (*page_step)(struct act_page *p, const json_t *result);

/* Ends the call with err and result (taken; NULL for none). */
void page_end(struct act_page *p, enum cm_err err, json_t *result);
/* Ends the call with err and a formatted message. */
void page_fail(struct act_page *p, enum cm_err err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Ends the call with element_not_found, telling the caller to snapshot. */
void page_not_found(struct act_page *p, const char *what);

/* Sends method (params taken) to the page's session, or the browser's
 * when browser is true; its reply goes to next. */
void page_send_to(struct act_page *p, bool browser, const char *method,
    json_t *params, page_step next);
void page_send(
    struct act_page *p, const char *method, json_t *params, page_step next);
/* Calls a constant script on p->object with args (a JSON array of plain
 * values, taken, or NULL); by value unless by_ref. */
void page_call_on(struct act_page *p, const char *script, json_t *args,
    bool by_ref, page_step next);
/* The value a by-value call returned, or NULL (and the call failed) when
 * it threw. */
const json_t *page_value(struct act_page *p, const json_t *result);
/* Finds the element the args name (ref or selector; with neither and
 * whole_document, the document) into p->object, then runs then. */
void page_element(
    struct act_page *p, bool whole_document, void (*then)(struct act_page *p));

/* The capabilities of page_input.c. */
void cap_click(struct act_page *p);
void cap_type(struct act_page *p);
void cap_press(struct act_page *p);
void cap_scroll(struct act_page *p);
/* The capability of page_capture.c. */
void cap_screenshot(struct act_page *p);

#endif
