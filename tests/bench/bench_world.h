/*
 * bench_world.h: what the benches on a real Chromium share.  Through
 * spaced: a workspace with one managed instance of the browser bundle
 * bound to it, its Spaces, and tasks run through the API with ?wait=30.
 * Without spaced around it, the managed driver (space-actor/driver.h)
 * as the actor's loop runs it.  Beside them, the direct CDP client's page
 * (tests/integration/cdp_rig.h): the calls a tool makes that drives a
 * browser with no spaced around it.  Failures are said on stderr under
 * the bench's name and return -1.
 */
#ifndef BW_BENCH_WORLD_H
#define BW_BENCH_WORLD_H

#include <jansson.h>

#include "cdp_rig.h"
#include "driver.h"
#include "pages.h"
#include "testkit.h"

#define BW_READY_MS 20000 /* spaced's api answers, its admin token works */
#define BW_STEP_MS 60000  /* any one call or task, on a loaded machine */

struct bw_world {
	const char *who; /* the bench's name, for its failures (static) */
	struct tk_proc p;
	char admin[CM_TOKEN_MAX + 1], user[CM_TOKEN_MAX + 1];
	char ws[CM_ID_MAX + 1], owner[CM_ID_MAX + 1], inst[CM_ID_MAX + 1];
	char url[128]; /* the page the bench drives */
	int n_inst;    /* instances registered so far (bw_instances) */
};

/*
 * What a bench of spaced on a real Chromium does first: 2 (said why)
 * when there is no chromium at TK_CHROMIUM; else w->who is who, SIGPIPE
 * is ignored, the page server of pages.h runs (*pages; w->url is its
 * home page), dir is a directory of the bench's own (tk_tmpdir, tagged
 * tag) and out the path of its spaced's log in it; with own_tmpdir,
 * TMPDIR is dir, so that every browser's temporary files (a killed
 * one's single-instance directory) go with it.  Returns 0, 2, or 1 when
 * the page server or TMPDIR failed (nothing left running): the bench's
 * exit.
 */
#define BW_DIR_MAX 128
#define BW_OUT_MAX 192
int bw_begin(struct bw_world *w, const char *who, const char *tag,
    bool own_tmpdir, struct tk_pages **pages, char dir[BW_DIR_MAX],
    char out[BW_OUT_MAX]);

/*
 * On the spaced already started in w->p: waits for its api, provisions a
 * workspace and its operator (w->ws, w->owner), takes the admin token
 * (w->admin) and a token of the operator's (w->user), and registers and
 * binds one instance as bw_instances does (w->inst).  Returns 0, or -1.
 */
int bw_setup(struct bw_world *w);

/* Registers n more managed instances of the browser bundle that may
 * reach 127.0.0.1, each named after the count w->n_inst, and binds each
 * to w's workspace (after bw_setup); their ids go to ids[0..n-1].
 * Returns 0, or -1. */
int bw_instances(struct bw_world *w, int n, char ids[][CM_ID_MAX + 1]);

/* Creates a Space of w's operator on instance inst, granted caps (a JSON
 * array of capability names); its id goes to space.  Returns 0, or -1. */
int bw_space_on(struct bw_world *w, const char *inst, const char *caps,
    char space[CM_ID_MAX + 1]);

/* bw_space_on on w's own instance, w->inst. */
int bw_space(struct bw_world *w, const char *caps, char space[CM_ID_MAX + 1]);

/*
 * Runs capability cap with args (a JSON object) as request rid in space,
 * through POST .../tasks?wait=30, answered once the task ended.  Returns
 * 0 when it completed, with the task's data in *data (the caller
 * decrefs) when data is not NULL; -1 otherwise.
 */
int bw_task(struct bw_world *w, const char *space, const char *rid,
    const char *cap, const char *args, json_t **data);

/* POST .../close?wait=30 of space: the answer's status (200 once it
 * is closed, 202 when the wait ran out first), or -1 (said) for any
 * other. */
int bw_close(struct bw_world *w, const char *space);

/* Waits at most BW_STEP_MS until space reads closed.  Returns 0, or
 * -1. */
int bw_wait_closed(struct bw_world *w, const char *space);

/* Waits at most BW_STEP_MS until instance inst has a standby browser
 * running (an actor of w's spaced, --standby of inst, with a browser of
 * its own), then settle_ms more: the idle instance a create meets.
 * Returns 0, or -1. */
int bw_standby_on(struct bw_world *w, const char *inst, int settle_ms);

/* bw_standby_on on w's own instance, w->inst. */
int bw_standby_settled(struct bw_world *w, int settle_ms);

/* The string o[key]; NULL when there is none (borrowed from o). */
const char *bw_str(const json_t *o, const char *key);

/* Prints the load average under who's name, with when, and flushes. */
void bw_load_average(const char *who, const char *when);

/* a/b as "R.RRR" into buf (len bytes), "-" when b is not positive;
 * returns buf. */
const char *bw_ratio(int64_t a, int64_t b, char *buf, size_t len);

/* The outline of a snapshot task's data (borrowed from data). */
const char *bw_outline(const json_t *data);

/* The ref the outline gives the line that holds what, into ref (len
 * bytes); no such line, or one without a ref, is said under who.
 * Returns 0, or -1. */
int bw_ref_of(const char *who, const char *outline, const char *what, char *ref,
    size_t len);

/* A page of its own on a rig's browser: a context, a target in it,
 * attached, Page on. */
struct bw_page {
	char ctx[CM_ID_MAX * 2], target[CM_ID_MAX * 2], sid[CM_ID_MAX * 2];
};

/* Opens pg on r's browser: a context disposed of on detach, an
 * about:blank target in it, attached (flat), Page.enable.  who names the
 * bench.  Returns 0, or -1. */
int bw_page_open(const char *who, struct tk_rig *r, struct bw_page *pg);

/* ---- the managed driver, as the actor runs it */

/*
 * Runs one call of capability cap with args_json (a JSON object, which
 * the bundle would have validated: nothing checks it here) on the
 * managed driver d to its end, as the actor's loop does: the driver's
 * fds polled, stepped until it is done.  The call's deadline is
 * wait_ms from now; a driver that has not ended BW_GRACE_MS after it is
 * cancelled, and the outcome is CM_E_TASK_TIMEOUT.  *result (NULL: not
 * wanted) gets the result's JSON text, malloc'd (the caller frees), or
 * NULL; an artifact is freed.  Returns the outcome, its err CM_OK or
 * the error (CM_E_INVALID_ARGS for args that are not JSON).
 */
#define BW_GRACE_MS 5000
struct act_outcome bw_driver_call(struct act_driver *d, const char *cap,
    const char *args_json, int wait_ms, char **result);

/* Navigates d to path on the page server of pages.h at port, as one
 * navigate call; a failure is said under who.  Returns 0, or -1. */
int bw_driver_navigate(
    const char *who, struct act_driver *d, int port, const char *path);

/*
 * Opens a managed driver on TK_CHROMIUM as the actor opens one for a
 * Space (its profile in a directory of its own, tagged tag, which the
 * browsers also get as TMPDIR: their single-instance directories go with
 * it), runs fn(d, arg) on it, closes it and removes the directory, and
 * puts TMPDIR back.  Returns fn's value, or -1 when the driver would not
 * open (said under who).  Call before any thread of the bench starts.
 */
int bw_with_driver(const char *who, const char *tag,
    int (*fn)(struct act_driver *d, void *arg), void *arg);

#endif
