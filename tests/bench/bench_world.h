/*
 * bench_world.h: what the benches on a real Chromium share.  Through
 * spaced: a workspace with one managed instance of the browser bundle
 * bound to it, its Spaces, and tasks run through the API with ?wait=30.
 * Beside it, the direct CDP client's page (tests/integration/cdp_rig.h):
 * the calls a tool makes that drives a browser with no spaced around it.
 * Failures are said on stderr under the bench's name and return -1.
 */
#ifndef BW_BENCH_WORLD_H
#define BW_BENCH_WORLD_H

#include <jansson.h>

#include "cdp_rig.h"
#include "testkit.h"

#define BW_READY_MS 20000 /* spaced's api answers, its admin token works */
#define BW_STEP_MS 60000  /* any one call or task, on a loaded machine */

struct bw_world {
	const char *who; /* the bench's name, for its failures (static) */
	struct tk_proc p;
	char admin[CM_TOKEN_MAX + 1], user[CM_TOKEN_MAX + 1];
	char ws[CM_ID_MAX + 1], owner[CM_ID_MAX + 1], inst[CM_ID_MAX + 1];
	char url[128]; /* the page the bench drives */
};

/*
 * On the spaced already started in w->p: waits for its api, provisions a
 * workspace and its operator (w->ws, w->owner), takes the admin token
 * (w->admin) and a token of the operator's (w->user), registers a managed
 * instance of the browser bundle that may reach 127.0.0.1 (w->inst) and
 * binds it to the workspace.  Returns 0, or -1.
 */
int bw_setup(struct bw_world *w);

/* Creates a Space of w's operator on w's instance, granted caps (a JSON
 * array of capability names); its id goes to space.  Returns 0, or -1. */
int bw_space(struct bw_world *w, const char *caps, char space[CM_ID_MAX + 1]);

/*
 * Runs capability cap with args (a JSON object) as request rid in space,
 * through POST .../tasks?wait=30, answered once the task ended.  Returns
 * 0 when it completed, with the task's data in *data (the caller
 * decrefs) when data is not NULL; -1 otherwise.
 */
int bw_task(struct bw_world *w, const char *space, const char *rid,
    const char *cap, const char *args, json_t **data);

/* The string o[key]; NULL when there is none (borrowed from o). */
const char *bw_str(const json_t *o, const char *key);

/* A page of its own on a rig's browser: a context, a target in it,
 * attached, Page on. */
struct bw_page {
	char ctx[CM_ID_MAX * 2], target[CM_ID_MAX * 2], sid[CM_ID_MAX * 2];
};

/* Opens pg on r's browser: a context disposed of on detach, an
 * about:blank target in it, attached (flat), Page.enable.  who names the
 * bench.  Returns 0, or -1. */
int bw_page_open(const char *who, struct tk_rig *r, struct bw_page *pg);

#endif
