/*
 * page.h: the capability layer, written once above the
 * transports.  A Space's page is one browser target attached as a flat
 * CDP session; each capability is a fixed sequence of CDP calls on it.
 * Any script a capability evaluates is a constant here; user input
 * reaches the page only as JSON arguments of Runtime.callFunctionOn,
 * never as code.
 *
 * The managed and cdp drivers differ only in how they get a connection:
 * they hand the page their CDP client and every event of its session.
 * Single-threaded, on the actor's loop, like the client under it.
 */
#ifndef ACT_PAGE_H
#define ACT_PAGE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "capability.h"
#include "cdp.h"
#include "driver.h"
#include "limits.h"
#include "outline.h"

/* The credentials of the egress proxy a managed browser goes through,
 * for Fetch.authRequired (all borrowed; password is a secret), and how
 * to ask it whether it refused host at or after since_ms (monotonic):
 * a refused CONNECT reaches the page as a bare network error.  The
 * driver that owns the proxy sets refused (NULL: do not ask). */
struct act_proxy_auth {
	char origin[CM_PROXY_URL_MAX]; /* http://127.0.0.1:<port> */
	const char *user;
	const char *password;
	bool (*refused)(void *arg, const char *host, int64_t since_ms);
	void *refused_arg;
};

/* What a pointer's receipt counts on its element (page_input.c): none,
 * its presses, or its releases and drops. */
enum page_receipt {
	PAGE_RECEIPT_NONE,
	PAGE_RECEIPT_PRESS,
	PAGE_RECEIPT_RELEASE,
};

struct act_page {
	struct act_cdp *cdp;                /* borrowed from the driver */
	const struct act_proxy_auth *proxy; /* borrowed; NULL: no proxy */
	const struct cm_policy *policy;     /* borrowed; NULL: no checks */
	char session[CM_ID_MAX + 1];
	char target[CM_ID_MAX + 1];
	char frame[CM_ID_MAX + 1]; /* the main frame, once known */
	bool loading;              /* the main frame is loading */

	/* Refs of the snapshots of this document (room for
	 * CM_SNAPSHOT_REFS_KEPT_MAX, in increasing order); a navigation
	 * clears them, and the snapshot's isolated world of the main
	 * frame's document (its execution context id; 0: none yet), which
	 * holds what they name (page_snapshot.c). */
	struct act_ref *refs;
	size_t n_refs;
	int64_t world;
	/* That world made ahead (page_snapshot.c: page_snapshot_ahead): the
	 * command under way (0: none), whether the document is to be named
	 * once it is made, and whether the call's snapshot waits for it; and
	 * the document's backend node id, as the world names it (0: not
	 * known yet). */
	int64_t ahead_cmd;
	bool ahead_name, ahead_waited;
	int64_t world_doc;
	/* An action's result, held while the snapshot its args asked for
	 * (snapshot: true) runs, and whether that snapshot began. */
	json_t *snap_held;
	bool snap_ran;
	/* The snapshot's search for elements a listener made clickable
	 * (page_listeners.c): the backend ids still to resolve, the
	 * elements resolved ({objectId} each), and what runs next. */
	json_t *listen_ids, *listened;
	void (*listen_then)(struct act_page *p);
	char listen_at[CM_ID_MAX + 1]; /* its document's session; "": p's */
	int64_t listen_world;          /* the world that gets them */

	/* The call in progress. */
	bool busy, done;
	struct act_outcome out;
	char capability[CM_CAPABILITY_MAX + 1];
	json_t *args;
	int64_t started_ms, deadline_ms;
	int64_t cmd; /* the command awaited, 0 for none */
	void (*next)(struct act_page *p, const json_t *result);
	void (*then)(struct act_page *p); /* once the element is found */
	/*
	 * The main frame's navigation during the call (page_nav.c), watched
	 * from the call's start: requested or started, committed (a new
	 * document, or a move within the document), and the committed
	 * document's DOMContentLoaded and load.  until says what the call
	 * waits for once its own command is answered (nav_answered).
	 */
	enum act_until {
		ACT_UNTIL_NONE,   /* not waiting for a navigation */
		ACT_UNTIL_COMMIT, /* a committed document */
		ACT_UNTIL_DCL,    /* ... that has parsed (DOMContentLoaded) */
		ACT_UNTIL_LOAD,   /* ... and loaded, or CM_NAV_LOAD_GRACE_MS */
	} until;
	bool nav_answered;
	bool nav_started, nav_committed, nav_same_doc, nav_dcl, nav_load;
	bool nav_stopped;    /* it stopped loading with no new document */
	int64_t grace_at_ms; /* load: the end of the grace after DCL */
	/* The page asked before it was left (beforeunload), during this
	 * call, and was left: the result says so. */
	bool left_asking;
	/* Tabs the page opened during this call: kept, and closed at once
	 * past CM_TABS_MAX (session.c). */
	int tabs_opened, tabs_refused;
	/* A download the page began during this call: the browser's guid
	 * for it, the name the site suggested (bounded, no path), its
	 * state ("in_progress", "completed", "canceled") and bytes. */
	bool dl_began;
	char dl_guid[CM_ID_MAX + 1];
	char dl_name[CM_DOWNLOAD_NAME_MAX + 1];
	const char *dl_state;
	json_int_t dl_bytes;
	bool dl_wanted; /* navigate ends when the download does */
	/* The main frame's document is one the browser downloads (an
	 * attachment): its navigation's abort is the download's start. */
	bool dl_expected;
	int64_t dl_wait_end_ms; /* the bound on the download's start */
	/* The call's download as the task's artifact (page_download.c): the
	 * directory the browser saves into (the session's; NULL or "": none),
	 * the browser context it is canceled in (NULL: the default one), the
	 * artifact's name once its bytes are in the outcome ("": none), their
	 * sha256, and whether it was refused for its size.  A call that ends
	 * while its download is under way is held (its result in dl_held)
	 * until the download ends or the task's time runs out. */
	const char *dl_dir;
	const char *dl_context;
	char dl_artifact[CM_ID_MAX + 1];
	char dl_sha256[64 + 1];
	bool dl_too_large;
	json_t *dl_held;
	/* upload: the directory holding the call's files, each under the
	 * name args.files gives it (the session's; NULL or "": none). */
	const char *up_dir;
	/* Told of the page's dialogs, tabs and downloads, whether or not a
	 * call runs (driver.h); set by the session after act_page_init.
	 * NULL: nobody is. */
	act_page_event_fn on_event;
	void *on_event_arg;
	/* The downloads under way, by the browser's guid, for the event that
	 * tells each one's end; at most CM_PAGE_DOWNLOADS_MAX. */
	struct act_page_download {
		char guid[CM_ID_MAX + 1];
		char name[CM_DOWNLOAD_NAME_MAX + 1];
	} downloads[CM_PAGE_DOWNLOADS_MAX];
	int n_downloads;
	/* The url of the last window the page asked for (Page.windowOpen),
	 * until a tab takes it; "" for none, or one too long to keep. */
	char window_url[CM_URL_MAX + 1];
	/* The url the main frame committed during the call ("" when none,
	 * or one too long to keep). */
	char nav_url[CM_URL_MAX + 1];
	/* navigate: the HTTP status of the main frame's last document
	 * response in this call (a redirect's, then where it led), as the
	 * interception's response stage saw it; 0 for none (data:, say). */
	int doc_status;
	/* State a sequence carries from one command to the next. */
	char object[CM_ID_MAX * 2 + 1]; /* a remote object id */
	double x, y;
	int64_t hit_node;   /* click: the DOM node that covers the element */
	int64_t poll_at_ms; /* wait_for: its bound */
	int64_t wait_end_ms;
	bool look_again;       /* wait_for: a failed look is not the end */
	bool keep_waiting;     /* wait_for: look again at the next commit */
	unsigned commits;      /* documents the main frame committed */
	unsigned wait_commits; /* wait_for: commits when it last looked */
	json_t *keep;          /* a result being built */
	int shot_w, shot_h;    /* screenshot: the size captured, in CSS px */
	bool shot_jpeg;        /* screenshot: jpeg, not png */
	bool crashed;          /* the target crashed: the driver starts over */
	/* A person's pointer (page_input.c, page_pointer.c): the step after
	 * a click's last release (check clicks through click's path), the
	 * press or move a click or drag is at, and drag's source point. */
	void (*clicked)(struct act_page *p, const json_t *result);
	enum page_receipt receipt; /* the one being read */
	int step;
	double from_x, from_y;
	/* drag: its source, for its receipt (object, and session as at) */
	char from_object[CM_ID_MAX * 2 + 1];
	char from_at[CM_ID_MAX + 1];
	/* A main-frame document the policy refused during this call. */
	char blocked_host[CM_HOST_MAX + 3];
	/* The host the main frame's document was last sent to (its request,
	 * or a redirect's Location), for a failure with no response. */
	char doc_host[CM_HOST_MAX + 3];
	unsigned blocked; /* requests refused since the page started */

	/* A reset under way: the commands whose replies it awaits. */
	int64_t reset_cmd[2];
	int resetting; /* replies still awaited */
	bool reset_failed;

	/*
	 * Dialogs as modal state (page_modal.c).  policy: how the page
	 * answers a dialog other than a beforeunload (set by the session;
	 * ACT_DIALOG_MODAL leaves it open for handle_dialog).  dialog: the
	 * one open now, its message and a prompt's default redacted (the
	 * redactor's patterns) and cut to CM_DIALOG_MESSAGE_MAX.
	 * call_dialog: the one that opened during the call, for its result
	 * (NULL: none).
	 */
	enum act_dialog_policy {
		ACT_DIALOG_MODAL,
		ACT_DIALOG_ACCEPT,
		ACT_DIALOG_DISMISS,
	} dialog_policy;
	struct act_page_dialog {
		bool open;
		bool has_default; /* a prompt's */
		char type[16];
		char message[CM_DIALOG_MESSAGE_MAX + 1];
		char default_prompt[CM_DIALOG_MESSAGE_MAX + 1];
	} dialog;
	json_t *call_dialog;
	/* The command awaited: its method and, for input, its event type,
	 * to tell whether a dialog opened by the page came after the input
	 * reached it. */
	char cmd_method[48];
	char cmd_type[24];
	bool acted; /* the call's input reached the page (page_action_done) */
	/* The page's url and title as the browser last told them
	 * (Target.targetInfoChanged, or a call's getTargetInfo), for the
	 * header every result carries (page_header.c). */
	char url[CM_URL_MAX + 1];
	char title[CM_PAGE_TITLE_MAX + 1];
	/* The call's url and title were read at its end (page_info); until
	 * then a successful end reads them first, its result in ending. */
	bool info_fresh;
	json_t *ending;
	/* The tabs of the Space, for the header: fills list with one
	 * {index, title, url, current} per tab (the session's; NULL: the page
	 * alone). */
	void (*tabs_fn)(void *arg, json_t *list);
	void *tabs_arg;
	/* The page's frames (page_frames.c): the sessions of its
	 * out-of-process frames, and the frames the last snapshot read,
	 * which its refs name; NULL until it has one. */
	struct act_frames *frames;
	/* The call's element, when a ref names one inside a frame: the
	 * session its document lives in ("": the page's own), which every
	 * command naming it (by objectId) goes to, and what turns a point
	 * in its frame into one in the top page's viewport, where input is
	 * sent. */
	char at[CM_ID_MAX + 1];
	double at_dx, at_dy;
	bool soft; /* the command awaited was sent by page_send_soft */
};

/*
 * Starts a page on an attached session.  session and target are copied.
 * With a policy, the driver has sent Fetch.enable for the session with
 * act_page_fetch_params: every request the page makes pauses, and the
 * page lets through only http(s) requests to hosts the policy allows
 * (and data:, blob: and about: URLs, which reach no host).  A refused
 * document of the main frame fails the call with host_not_allowed.
 */
void act_page_init(struct act_page *p, struct act_cdp *cdp,
    const struct cm_policy *policy, const char *session, const char *target);

/*
 * The params of the Fetch.enable a driver sends for a page (a new
 * object).  With auth, the browser's challenges pause too
 * (Fetch.authRequired): the page answers its egress proxy's with the
 * proxy's credentials, and cancels every other one.  A main-frame
 * document the proxy refused (its 403 with X-Spaced-Egress) fails the
 * call with host_not_allowed, as one the policy refuses here does; so
 * does one that failed without a response (a CONNECT the proxy refused,
 * which the browser shows as a tunnel error) when the proxy says it
 * refused the document's host during the call.
 */
json_t *act_page_fetch_params(bool auth);

/* The page opened a tab at url (session.c tracks it), or one that was
 * closed at once as CM_TABS_MAX were open (refused): the call under way
 * says so in its result, and the page's on_event is told. */
void act_page_tab_opened(struct act_page *p, const char *url, bool refused);

/* Browser.downloadWillBegin or Browser.downloadProgress (the browser's
 * events; the session passes them on).  on_event is told of a download's
 * begin, and of its end when it began in this page. */
void act_page_download(
    struct act_page *p, const char *method, const json_t *params);

/* The browser told the page's target's url and title
 * (Target.targetInfoChanged): kept for the header. */
void act_page_info_changed(struct act_page *p, const json_t *info);
/*
 * The params of the Target.setAutoAttach a page's session is set up with
 * (a new object): each out-of-process frame of the page attaches as a
 * flat session of the same connection, held before it runs until the
 * page has set up its interception (page_frames.c); only frames attach.
 */
json_t *act_page_attach_params(void);

/* Forgets the call and the refs. */
void act_page_fini(struct act_page *p);

/* The capabilities this layer knows, for a bundle check. */
bool act_page_knows(const char *capability);

/*
 * Begins capability with its args (validated against the bundle; the
 * page keeps a reference) before deadline_ms.  Returns 0, or -1 when a
 * call is already in progress.
 */
int act_page_start(struct act_page *p, const char *capability,
    const json_t *args, int64_t deadline_ms);

/* Every CDP event of the connection: the page keeps its session's. */
void act_page_event(struct act_page *p, const char *session, const char *method,
    const json_t *params);

/* Runs what is due by now_ms; returns the next time it needs a turn
 * (now_ms or earlier once the call has ended and its outcome waits for
 * act_page_take), or -1 for none (no call). */
int64_t act_page_tick(struct act_page *p, int64_t now_ms);

/*
 * True once the call has ended: *out gets its outcome (result owned by
 * the caller) and the page is free for the next call.
 */
bool act_page_take(struct act_page *p, struct act_outcome *out);

/*
 * Brings the page to rest after an abandoned call: what it loads stops,
 * and a script of it still running is ended.  The reset is over once the
 * browser confirmed both (act_page_rested); until then the page takes no
 * call.  Returns 0, or -1 when the commands could not be sent.
 */
int act_page_reset(struct act_page *p);

/*
 * True once no reset is under way.  *clean is false when the browser did
 * not confirm in CM_PAGE_RESET_MS: the driver then starts it over.
 */
bool act_page_rested(struct act_page *p, bool *clean);

/* Abandons the call in progress: its pending command is forgotten. */
void act_page_abort(struct act_page *p);

/*
 * The page's connection, or its target, is gone: a call in progress ends
 * at once with runtime_crashed and why, whether or not a command of it
 * was pending (a wait between two looks has none), and the page is marked
 * crashed.
 */
void act_page_lost(struct act_page *p, const char *why);

#endif
