/*
 * page_int.h: the steps the capability files share (page.c, page_nav.c,
 * page_read.c, page_snapshot.c, page_input.c, page_capture.c,
 * page_fetch.c, page_events.c, page_download.c).
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
/* The same, by value, with the promise the script returns awaited. */
void page_call_on_awaited(
    struct act_page *p, const char *script, json_t *args, page_step next);
/* The value a by-value call returned, or NULL (and the call failed) when
 * it threw. */
const json_t *page_value(struct act_page *p, const json_t *result);
/* Finds the element the args name (ref or selector; with neither and
 * whole_document, the document) into p->object, then runs then. */
void page_element(
    struct act_page *p, bool whole_document, void (*then)(struct act_page *p));

/* Ends the call with the page's url and title (added to p->keep when a
 * result is being built; navigate adds its HTTP status), or with
 * host_not_allowed when a redirect led the document where the policy
 * refuses (p->blocked_host). */
void page_info(struct act_page *p);
/* Ends the call with host_not_allowed, naming p->blocked_host. */
void page_blocked(struct act_page *p);

/* Page.javascriptDialogOpening (page_events.c): a beforeunload is
 * accepted (the call that leaves the page means to), any other dialog
 * dismissed; on_event is told. */
void page_dialog(struct act_page *p, const json_t *params);

/* Page.windowOpen (page_events.c): the url the page asks a new window
 * of, kept for the tab that the browser then makes (its target shows no
 * url yet). */
void page_window_open(struct act_page *p, const json_t *params);

/* The interception of page_fetch.c.  A request of the page paused
 * (Fetch.requestPaused): let through or failed as blocked by the client;
 * a refusal of the page's own document sets p->blocked_host. */
void page_request_paused(struct act_page *p, const json_t *params);
/* An auth challenge paused a request (Fetch.authRequired): the egress
 * proxy's gets its credentials, any other is cancelled. */
void page_auth_required(struct act_page *p, const json_t *params);
/* True, with p->blocked_host set, when the egress proxy says it refused
 * host during this call. */
bool page_proxy_refused(struct act_page *p, const char *host);

/*
 * Navigation waits (page_nav.c).  Every call watches the main frame from
 * its start (page_nav_arm, with what it waits for; ACT_UNTIL_NONE for a
 * call that does not wait); the events of act_page_event feed it.  Once
 * the call's own command is answered, page_nav_answered lets a
 * navigation end the call: on a move within the document at once, else
 * once the committed document has reached p->until (for load, at most
 * CM_NAV_LOAD_GRACE_MS after its DOMContentLoaded, then with loading
 * true), or, for a navigation that stopped with no new document (a 204,
 * a download), when it stops.  It ends with page_info, whose result
 * p->keep may hold.  Each wait ends on an event, or on its bound.
 */
enum page_nav_ev {
	PAGE_NAV_REQUESTED, /* requested, or the main frame started loading */
	PAGE_NAV_COMMITTED, /* the main frame has a new document */
	PAGE_NAV_SAME_DOC,  /* the main frame moved within its document */
	PAGE_NAV_DCL,       /* DOMContentLoaded */
	PAGE_NAV_LOAD,      /* load */
	PAGE_NAV_STOPPED,   /* the main frame stopped loading */
};
void page_nav_arm(struct act_page *p, enum act_until until);
void page_nav_answered(struct act_page *p);
void page_nav_event(struct act_page *p, enum page_nav_ev ev);
/* The url the main frame committed (kept only when it fits). */
void page_nav_url(struct act_page *p, const char *url);
/* Ends a call whose load grace has run out by now_ms. */
void page_nav_due(struct act_page *p, int64_t now_ms);
/* Ends an action (click, type, press) with result (taken), or, when it
 * started a navigation of the main frame, once that navigation has
 * reached DOMContentLoaded (with navigated, url, title and loading). */
void page_action_done(struct act_page *p, json_t *result);

/* The capabilities of page_nav.c. */
void cap_navigate(struct act_page *p);
void cap_back(struct act_page *p);
/* The capability of page_snapshot.c, and the element a ref of its last
 * snapshot names, into p->object, then p->then (element_not_found for a
 * stale or unknown ref). */
void cap_snapshot(struct act_page *p);
void page_snapshot_element(struct act_page *p, const char *ref);
/* The capabilities of page_read.c. */
void cap_extract_text(struct act_page *p);

/* wait_for (page_wait.c).  p->poll_at_ms is its bound: act_page_tick
 * calls page_wait_due then.  A look whose document went away (a command
 * of it failed) calls page_wait_lost; a commit of the main frame,
 * page_wait_committed. */
void cap_wait_for(struct act_page *p);
void page_wait_lost(struct act_page *p);
void page_wait_committed(struct act_page *p);
void page_wait_due(struct act_page *p);
/* The capabilities of page_input.c. */
void cap_click(struct act_page *p);
void cap_type(struct act_page *p);
void cap_press(struct act_page *p);
void cap_scroll(struct act_page *p);
/* The capability of page_capture.c. */
void cap_screenshot(struct act_page *p);
/* The capability of page_upload.c: the files of p->up_dir on a file
 * input. */
void cap_upload(struct act_page *p);

/* A download's file (page_download.c).  progress: one over
 * CM_ARTIFACT_MAX, by what the browser received or says it will, is
 * canceled (the call's is marked dl_too_large).  end: the call's
 * download, completed and not refused, is read into the outcome's
 * artifact (dl_artifact, dl_sha256); its file, the call's or not, is
 * removed.  result: the call's download as its result shows it (a new
 * object). */
void page_download_progress(struct act_page *p, const char *guid,
    json_int_t received, json_int_t total);
void page_download_end(struct act_page *p, const char *guid, bool completed);
json_t *page_download_result(const struct act_page *p);

#endif
