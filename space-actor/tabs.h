/*
 * tabs.h: the tabs a Space's page opens (a target=_blank link,
 * window.open, a middle click), each a page of its own (page.h) that the
 * agent can list, select and close (the tabs capability).
 *
 * Every tab is held to the network policy before it sends its first
 * request.  The browser's session auto-attaches every new page target
 * held before it runs (act_tabs_autoattach_params); a tab of the Space's
 * own browser context gets the page's setup (Page, Inspector, Fetch with
 * act_page_fetch_params, its out-of-process frames attached as the
 * page's are, the viewport and the focus) and only then runs.
 *
 * A remote browser (the cdp driver) is shared: with other Spaces, each
 * in its own context, and with whoever else uses it.  Measured on
 * Chromium 156 with two clients auto-attaching on one browser: a new page
 * runs only once every client that attached it held has let it run
 * (Runtime.runIfWaitingForDebugger); one that detaches without that
 * keeps it held, and so does one that is alive and does not read its
 * connection.  So a page of another context is let run from here and let
 * go at once, one round trip: its own Space's actor still holds it until
 * its interception is on.  A client whose connection ended holds nothing.
 * The cost to the browser's other users: each Space's actor holds each
 * of their new pages for that round trip, and an actor whose loop stops
 * (killed, it lets go; stopped, it holds) holds them until the
 * supervisor restarts it.
 *
 * Index 0 is the Space's first page (the session's own); a tab's index
 * is its slot's place (1..CM_TABS_MAX), kept while it lives; a closed
 * tab's index may be given to a later one.  Single-threaded, on the
 * actor's loop.
 */
#ifndef ACT_TABS_H
#define ACT_TABS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "limits.h"
#include "page.h"

struct act_session;

struct act_tab {
	bool used;
	bool ready; /* set up and let run */
	char target[CM_ID_MAX + 1];
	char opener[CM_ID_MAX + 1]; /* the target that opened it */
	int64_t cmd;                /* the setup command awaited; 0: none */
	int step;
	struct act_session *s;
	struct act_page page;
};

/* The params of the browser session's Target.setAutoAttach (a new
 * object): every new page target attaches, held before it runs. */
json_t *act_tabs_autoattach_params(void);

/* Target.attachedToTarget of the browser's session: a tab the page
 * opened is set up and let run (or closed at once when CM_TABS_MAX are
 * open, which the call under way says); any other page is let go. */
void act_tabs_attached(struct act_session *s, const json_t *params);

/* Every CDP event of the connection, for the tabs' pages; a tab whose
 * target went away is forgotten (a current one hands over to its opener,
 * or to index 0). */
void act_tabs_event(struct act_session *s, const char *session,
    const char *method, const json_t *params);

/* The page of index (0: the session's own), or NULL when no such tab
 * lives or it is not set up yet. */
struct act_page *act_tabs_page(struct act_session *s, int index);

/* The index of the current page. */
int act_tabs_current(const struct act_session *s);

/* Before a call of capability with args on the current page: a tabs
 * select or close of a live tab makes the page it names (a closed
 * current tab: its opener, or index 0) current from now on; the refs of
 * every page are stale after it. */
void act_tabs_prepare(
    struct act_session *s, const char *capability, const json_t *args);

/* The tab of index (1..) is gone or closed: forgotten, its target closed
 * when close is true. */
void act_tabs_forget(struct act_session *s, int index, bool close);

/* Forgets every tab (the connection went, or the page is replaced),
 * closing their targets when close is true; index 0 is current again. */
void act_tabs_forget_all(struct act_session *s, bool close);

/* The session's settings (policy, proxy, events, dialog policy, download
 * and upload directories) to every tab's page. */
void act_tabs_sync(struct act_session *s);

/* The header's tab list (act_page.tabs_fn; arg the session). */
void act_tabs_list(void *arg, json_t *list);

#endif
