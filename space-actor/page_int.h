/*
 * page_int.h: the steps the capability files share (page.c, page_cmd.c,
 * page_nav.c, page_read.c, page_snapshot.c, page_input.c, page_capture.c,
 * page_fetch.c, page_events.c, page_download.c, page_form.c,
 * page_pointer.c).
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
/* Forgets the command awaited and every wait of the call (its
 * navigation, its bound), which goes on from the next step it is given. */
void page_stop(struct act_page *p);
/* Ends the call with element_not_found, telling the caller to snapshot. */
void page_not_found(struct act_page *p, const char *what);

/* Sends method (params taken) to the page's session, or the browser's
 * when browser is true; its reply goes to next. */
void page_send_to(struct act_page *p, bool browser, const char *method,
    json_t *params, page_step next);
void page_send(
    struct act_page *p, const char *method, json_t *params, page_step next);
/* Sends method to session; next gets the reply's result, or NULL when
 * the browser refused the command (a frame or a document gone): only a
 * timeout or a lost browser ends the call, as with page_send. */
void page_send_soft(struct act_page *p, const char *session, const char *method,
    json_t *params, page_step next);
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

/* Tells the page's on_event of ev (page_events.c). */
void page_tell(struct act_page *p, const struct act_page_event *ev);

/* Page.javascriptDialogOpening (page_modal.c): a beforeunload is
 * accepted (the call that leaves the page means to); any other dialog is
 * answered as p->dialog_policy says, or stays open in p->dialog, ending
 * the call under way (what reached the page before it opened is its
 * result).  on_event is told.  Page.javascriptDialogClosed:
 * page_dialog_closed. */
void page_dialog(struct act_page *p, const json_t *params);
void page_dialog_closed(struct act_page *p);
/* True when a dialog is open and takes the call: it fails with
 * dialog_open, unless it is one that may run meanwhile (handle_dialog and
 * tabs are not taken; a snapshot ends with its header alone, as the
 * page's scripts, the snapshot's too, wait inside the dialog). */
bool page_modal_takes(struct act_page *p, const char *capability);
/* The open dialog as a result shows it ({type, message, default_prompt?,
 * open: true}; new), or NULL for none. */
json_t *page_modal_open_json(const struct act_page *p);
/* The capability of page_modal.c. */
void cap_handle_dialog(struct act_page *p);

/* The header every result carries (page_header.c): adds "page" {url,
 * title, loading, tabs, dialog?, downloads?} to result.  The snapshot's
 * header lines (url, title, the tabs when there are more than one, an open
 * dialog), malloc'd text ending in a newline, or NULL when memory ran
 * out. */
void page_header_add(struct act_page *p, json_t *result);
/* page_end of a success that read no url and title: they are read first
 * (result taken), then the call ends with result. */
void page_header_end(struct act_page *p, json_t *result);
char *page_header_lines(struct act_page *p);

/* Page.windowOpen (page_events.c): the url the page asks a new window
 * of, kept for the tab that the browser then makes (its target shows no
 * url yet). */
void page_window_open(struct act_page *p, const json_t *params);

/* The interception of page_fetch.c.  A request of the page paused
 * (Fetch.requestPaused): let through or failed as blocked by the client;
 * a refusal of the page's own document sets p->blocked_host. */
void page_request_paused(
    struct act_page *p, const char *session, const json_t *params);
/* An auth challenge paused a request (Fetch.authRequired): the egress
 * proxy's gets its credentials, any other is cancelled.  Both answer on
 * session, the page's or one of its frames' (page_frames.c). */
void page_auth_required(
    struct act_page *p, const char *session, const json_t *params);
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
void cap_forward(struct act_page *p);
void cap_reload(struct act_page *p);
/* The capability of page_snapshot.c, and the element a ref of its last
 * snapshot names, into p->object, then p->then (element_not_found for a
 * stale or unknown ref). */
void cap_snapshot(struct act_page *p);
void page_snapshot_element(struct act_page *p, const char *ref);
/* Hands a document's world (world, in the document of session at; NULL:
 * the page's) the elements a page's script made clickable with a
 * listener, as globalThis.spacedListened (page_listeners.c), then runs
 * then; a document that refuses any step is read without them.  doc is
 * the document's backend node id when known (0: the world names it). */
void page_listeners_find(struct act_page *p, const char *at, int64_t world,
    int64_t doc, void (*then)(struct act_page *p));
/* At the end of every call (page_end, before anything else): a call
 * that succeeded with args snapshot: true holds its result and runs a
 * snapshot instead (true: the call goes on); that snapshot's end puts it
 * into the held result as "snapshot" ({text, truncated...}, or null with
 * snapshot_error when it failed: the action stands) and ends the call
 * with it (*err, *result replaced; false). */
bool page_snapshot_after(struct act_page *p, enum cm_err *err, json_t **result);
/*
 * The main frame's document changed (it committed a new one): its refs
 * and its world are gone, and a world for the new one is made ahead of
 * any snapshot of it.  page_snapshot_ahead (a call ended: the page is
 * at rest) makes the world if none is made or under way, and names its
 * document; without waiting: a snapshot that begins while they are under
 * way waits for them.  page_snapshot_fini forgets what is under way.
 */
void page_snapshot_new_document(struct act_page *p);
void page_snapshot_ahead(struct act_page *p);
void page_snapshot_fini(struct act_page *p);
/* The name of the snapshot's isolated worlds, one per document read. */
#define PAGE_SNAPSHOT_WORLD "spaced-snapshot"
/* The bounds the snapshot's script is called with (a new object; NULL
 * when memory is short), its printed levels depth; an iframe's node gets
 * the place of its element in the world's list (backendDOMNodeId), and
 * no ref. */
json_t *page_snapshot_bounds(struct act_page *p, int depth);
/* Ends the snapshot with the outline of v, the script's reply (its
 * frames' nodes nested in it); more (NULL: none) is what the note adds,
 * and makes it truncated. */
void page_snapshot_write(struct act_page *p, const json_t *v, const char *more);

/*
 * The frames (page_frames.c).  page_frames_event takes every event of a
 * session other than the page's own: an out-of-process frame's requests
 * meet the policy, the frames it attaches are set up in turn, and its
 * navigations make its refs stale; the events of any other session are
 * dropped (none of them is the main frame's).  page_frames_attached and
 * page_frames_detached take Target.attachedToTarget and
 * Target.detachedFromTarget of the page's own session; page_frames_gone,
 * a frame whose document in session's renderer went away (it navigated,
 * or was removed or moved to another renderer): its refs there are
 * stale from then on.
 */
void page_frames_event(struct act_page *p, const char *session,
    const char *method, const json_t *params);
void page_frames_attached(
    struct act_page *p, const char *parent, const json_t *params);
void page_frames_detached(struct act_page *p, const json_t *params);
void page_frames_gone(
    struct act_page *p, const char *session, const char *frame);
/* Reads the frames whose iframe nodes v (the main document's script
 * reply) shows, nests their content under those nodes, then calls
 * page_snapshot_write: bounded by CM_FRAMES_MAX and CM_FRAME_DEPTH_MAX. */
void page_frames_read(struct act_page *p, const json_t *v);
/* The element that ref id of the last snapshot names in a frame (id >>
 * 32 is the frame, id's low 32 bits its place in the frame's list), into
 * p->object with p->at, p->at_dx and p->at_dy, then p->then;
 * element_not_found when the frame navigated or went away. */
void page_frames_element(struct act_page *p, int64_t id);
/* Forgets the frames (act_page_fini). */
void page_frames_fini(struct act_page *p);
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
/*
 * The steps of a person's pointer (page_input.c), for the form and
 * pointer capabilities too.  page_reach: whether a person could act on
 * p->object, scrolled into view unless stay (then its centre must be in
 * the viewport as it is): visible and enabled, and with hit, not covered
 * at its centre (element_obscured, naming what covers it); then p->x,
 * p->y are its centre and then runs, else the call has failed.
 * page_click_object: reaches p->object with hit and clicks its centre as
 * the args say (button, click_count, modifiers); after runs (with a NULL
 * result) once the element's document counted a press on it, and a press
 * it did not get ends the call with outcome_unknown.  page_reach_armed:
 * page_reach with hit, arming the element for receipt r: the events of
 * that kind its document gets from then on are counted, and
 * page_receipt_read reads them (of object, in the document of session
 * at, "" for the page's): next runs with the count ({n, hit, drop}, or
 * NULL when the document went away, as a navigation does) when the
 * element got one, else the call ends with outcome_unknown.
 * page_mouse_at: one Input.dispatchMouseEvent of type at (x, y) with b.
 */
struct page_button {
	const char *button; /* "none", "left", "middle", "right" */
	int buttons;        /* the buttons held: 1 left, 2 right, 4 middle */
	int count;          /* clickCount */
	int modifiers;      /* 1 Alt, 2 Control, 4 Meta, 8 Shift */
};
void page_reach(
    struct act_page *p, bool hit, bool stay, void (*then)(struct act_page *p));
void page_reach_armed(struct act_page *p, bool stay, enum page_receipt r,
    void (*then)(struct act_page *p));
void page_receipt_read(struct act_page *p, const char *object, const char *at,
    enum page_receipt r, page_step next);
void page_click_object(struct act_page *p, page_step after);
void page_mouse_at(struct act_page *p, const char *type, double x, double y,
    const struct page_button *b, page_step next);
/* The capability that sets an element of the kind that type and fill do
 * not (a select: select_option; a checkbox: check...). */
const char *page_fitting_capability(const char *kind);
/* The capabilities of page_form.c. */
void cap_fill(struct act_page *p);
void cap_select_option(struct act_page *p);
void cap_check(struct act_page *p);
/* The capabilities of page_pointer.c, and the drag the browser handed
 * over instead of starting it (Input.dragIntercepted): a drag under way
 * keeps its data, to drop it on its target. */
void cap_hover(struct act_page *p);
void cap_drag(struct act_page *p);
void page_drag_intercepted(struct act_page *p, const json_t *params);
/* The capability of tabs.c: list, select and close the Space's tabs
 * (p->tabs_arg is the session; the select or close of the current tab
 * made its page current before the call began, act_tabs_prepare). */
void cap_tabs(struct act_page *p);

#endif
