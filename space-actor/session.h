/*
 * session.h: a Space's page on a CDP connection, and the call that runs
 * on it: what the managed and cdp drivers share.  They differ
 * only in how they get a connection (a browser launched on a pipe, or a
 * remote browser's websocket); from the connection up it is this.
 *
 * Setup, in the loop: with a context of its own (the cdp driver: two
 * Spaces on one remote browser share no cookies) a browser context is
 * made first, then a target is created in it and attached as a flat
 * session, Page, Inspector, Network and Fetch (act_page_fetch_params)
 * are enabled, its out-of-process frames set to attach
 * (act_page_attach_params), the viewport set, every new page of the
 * browser set to attach held (the tabs the page opens: tabs.h) and the
 * frame tree read.  A call that arrives
 * before the page is ready waits for it, until its deadline.
 *
 * Nothing here frees the CDP client: a setup that fails only sets
 * ACT_SESSION_FAILED, and the driver tears the connection down at its
 * next step, outside the client's callbacks.  Single-threaded.
 */
#ifndef ACT_SESSION_H
#define ACT_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "cdp.h"
#include "driver.h"
#include "page.h"
#include "tabs.h"

enum act_session_state {
	ACT_SESSION_DOWN,   /* no connection */
	ACT_SESSION_SETUP,  /* the page is being set up */
	ACT_SESSION_READY,  /* the page takes calls */
	ACT_SESSION_FAILED, /* setup failed: the driver starts over */
};

struct act_session {
	struct act_cdp *cdp;                /* borrowed from the driver */
	const struct cm_policy *policy;     /* borrowed */
	const struct act_proxy_auth *proxy; /* borrowed; NULL: none */
	act_page_event_fn on_event;         /* for the page; NULL: none */
	void *on_event_arg;
	enum act_dialog_policy dialog_policy; /* for the page */
	bool own_context;
	enum act_session_state state;
	char why[128]; /* why setup failed (no secret) */
	int64_t cmd;   /* the setup command awaited */
	int step;
	int64_t deadline_ms;
	char context[CM_ID_MAX + 1]; /* own_context: its id, once made */
	char target[CM_ID_MAX + 1];
	struct act_page page;
	bool page_ok;
	bool resetting; /* the page is being brought to rest */
	/* The tabs the page opened (a target=_blank link, window.open), at
	 * most CM_TABS_MAX, each a page of its own set up before it runs
	 * (tabs.h); past the bound a new one is closed at once.  cur: the
	 * page calls act on (&page, or a tab's). */
	struct act_tab tabs[CM_TABS_MAX];
	struct act_page *cur;
	bool creating; /* a replacing page is being made (session_replace) */
	/* Where the browser saves what the page downloads (the Space's own
	 * directory), or "": downloads are refused. */
	char downloads[CM_PATH_MAX];
	/* The directory of the call's upload files (act_call.upload_dir),
	 * or "": the call has none. */
	char uploads[CM_PATH_MAX];

	/* Told of every Page.screencastFrame of any page of the connection
	 * (the live view, live.h), with the session it came on; NULL:
	 * nobody is, and the page's events go on as before. */
	void (*on_frame)(void *arg, const char *session, const json_t *params);
	void *on_frame_arg;

	/* A call waiting for the page, and an outcome that came early. */
	bool waiting;
	char capability[CM_CAPABILITY_MAX + 1];
	json_t *args;
	int64_t call_deadline_ms;
	bool failed;
	struct act_outcome early;
};

/* A zeroed session is DOWN.  policy is borrowed for the page. */
void act_session_init(
    struct act_session *s, const struct cm_policy *policy, bool own_context);

/* The browser goes through an egress proxy: its credentials (borrowed),
 * for every page set up from now on. */
void act_session_proxy(
    struct act_session *s, const struct act_proxy_auth *proxy);

/* What the page does besides a call's result (driver.h) is told to fn
 * with arg from now on, the page's that is set up already included (NULL:
 * to nobody). */
void act_session_events(struct act_session *s, act_page_event_fn fn, void *arg);

/* Every Page.screencastFrame from now on goes to fn with arg (NULL: to
 * nobody); the session's own state survives act_session_down. */
void act_session_frames(struct act_session *s,
    void (*fn)(void *arg, const char *session, const json_t *params),
    void *arg);

/* The Space's dialog policy (driver.h's act_env), for the page that is
 * set up already and every one from now on. */
void act_session_dialogs(struct act_session *s, const char *policy);

/* Downloads of every page set up from now on go to dir (copied; NULL or
 * "": none are allowed), each under a name of the browser's own (its
 * guid), never one the site chose. */
void act_session_downloads(struct act_session *s, const char *dir);

/* The network policy from now on (a standby's browser adopted by a
 * Space); borrowed. */
void act_session_adopt(struct act_session *s, const struct cm_policy *policy);

/*
 * Begins setting the page up on a new connection (cdp borrowed until
 * act_session_down), to be done by deadline_ms.  Returns 0, or -1 when
 * the first command could not be sent (the state is then FAILED).
 */
int act_session_begin(
    struct act_session *s, struct act_cdp *cdp, int64_t deadline_ms);

/* Every CDP event of the connection. */
void act_session_event(struct act_session *s, const char *session,
    const char *method, const json_t *params);

/*
 * The connection is gone (or being torn down): forgets the page and any
 * setup; the state becomes DOWN.  A waiting call stays waiting.
 */
void act_session_down(struct act_session *s);

/* True while a call is waiting or running. */
bool act_session_busy(const struct act_session *s);

/*
 * Begins a call: on the page when it is ready, otherwise it waits (the
 * driver gets a connection going).  Returns 0, or -1 when a call is in
 * progress.
 */
int act_session_start(struct act_session *s, const struct act_call *call);

/* Ends the waiting call (if any) with err and msg. */
void act_session_fail(struct act_session *s, enum cm_err err, const char *msg);

/*
 * Runs what is due by now_ms: a waiting call starts on a page that has
 * become ready, or fails at its deadline.  Returns the next time it needs
 * a turn, or -1.
 */
int64_t act_session_tick(struct act_session *s, int64_t now_ms);

/* True once the call has ended: *out gets its outcome (result owned by
 * the caller). */
bool act_session_take(struct act_session *s, struct act_outcome *out);

/*
 * The turn of a driver's loop that concerns the session, on connection
 * cdp (NULL while there is none).  act_session_wake, before poll(): the
 * next time it needs a turn (-1: none).  act_session_turn, after the
 * driver read its transport: expires commands, notes a setup that failed
 * (counted in *failures, with who in the log line; a ready page sets
 * *failures to 0), runs what is due, and returns ACT_DONE with *out when
 * the call ended, or ACT_CLEAN (out->err CM_OK) when a reset is over.
 * *drop is set when the driver must drop its connection (the setup
 * failed, the page crashed, or a page that did not come to rest could not
 * be replaced); the session is DOWN by then.
 */
int64_t act_session_wake(
    struct act_session *s, struct act_cdp *cdp, int64_t now_ms);
enum act_state act_session_turn(struct act_session *s, struct act_cdp *cdp,
    const char *who, int *failures, bool *drop, struct act_outcome *out);

/*
 * The connection ended: fails what waits on it (commands of cdp, and a
 * call waiting for the page, with runtime_crashed and msg), counting a
 * connection that never got its page ready in *failures.  Returns true
 * with *out set when that ended the call.  The driver drops the
 * connection afterwards.
 */
bool act_session_lost(struct act_session *s, struct act_cdp *cdp,
    const char *msg, int *failures, struct act_outcome *out);

/* Abandons the call in progress, waiting or running. */
void act_session_cancel(struct act_session *s);

/*
 * Brings the page to rest after a call was abandoned: stops what it may
 * still be doing (loading, or a script), in the loop (act_page_reset).
 * Returns 0 when there is nothing to stop (no page ready), 1 when it is
 * under way (act_session_turn returns ACT_CLEAN once it is over: a page
 * that did not come to rest is then being replaced by a fresh one in the
 * same browser, or *drop is set when that could not begin), -1 when it
 * could not begin (the driver drops the connection).  A call started
 * meanwhile waits for it.
 */
int act_session_reset(struct act_session *s);

/*
 * With a context of its own: sends Target.disposeBrowserContext for it
 * (fn called with the reply, as act_cdp_call does).  Returns the command
 * id, or 0 when there is nothing to dispose or it could not be sent.
 */
int64_t act_session_dispose(
    struct act_session *s, int64_t deadline_ms, act_cdp_reply_fn fn, void *arg);

/* Frees what the session holds.  It is DOWN afterwards. */
void act_session_fini(struct act_session *s);

#endif
