/*
 * cdp_rig.h: a minimal direct CDP client for tests and benchmarks.  It
 * launches Chromium with space-actor/browser.c and speaks CDP over the
 * pipe with the one client (cdp.h), in a loop like the actor's, one
 * command at a time: what a tool would do that drives a browser with no
 * spaced around it.  Single-threaded.
 */
#ifndef TK_CDP_RIG_H
#define TK_CDP_RIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "browser.h"
#include "cdp.h"
#include "cdp_pipe.h"

#define TK_CHROMIUM "/usr/bin/chromium"

struct tk_rig {
	char dir[64]; /* the browser's profile: a temporary directory */
	struct act_browser b;
	struct act_pipe *pipe;
	struct act_cdp *cdp;
	/* The last reply. */
	int replies;
	json_t *result;
	json_int_t error_code;
	/* An event waited for, and whether it came. */
	char want_event[64];
	bool saw_event;
	/* The proxy's Basic credentials, for Fetch.authRequired (borrowed;
	 * NULL: no proxy, every challenge is cancelled). */
	const char *proxy_user, *proxy_password;
};

/* Launches a browser in a fresh temporary profile.  Returns 0, or -1
 * with a reason in err. */
int tk_rig_start(struct tk_rig *r, char *err, size_t errlen);

/*
 * As tk_rig_start, with the browser behind the HTTP proxy at proxy
 * ("http://127.0.0.1:<port>") and its Basic credentials (borrowed until
).  A session that sends Fetch.enable has every paused
 * request continued and every proxy challenge answered with them, as the
 * actor's page does (with no proxy the same Fetch work is done).
 */
int tk_rig_start_via(struct tk_rig *r, const char *proxy, const char *user,
    const char *password, char *err, size_t errlen);

/* Kills the browser and removes its profile (and what Chromium kept of
 * it under $TMPDIR). */
void tk_rig_stop(struct tk_rig *r);

/* One turn of the loop: poll (at most 10 ms), step the pipe, expire.
 * Returns -1 once the pipe has ended. */
int tk_rig_turn(struct tk_rig *r);

/* The reply callback the rig's calls use (counts, keeps the result). */
void tk_rig_reply(void *arg, const json_t *result, const json_t *error);

/* Sends method (params taken) and runs the loop until its reply or
 * timeout_ms; returns the result (owned by the rig) or NULL with
 * r->error_code set (0: no reply came). */
json_t *tk_rig_call(struct tk_rig *r, const char *session, const char *method,
    json_t *params, int timeout_ms);

/* Runs the loop until event method comes (counted from the last
 * tk_rig_expect) or timeout_ms passes; true when it came. */
void tk_rig_expect(struct tk_rig *r, const char *method);
bool tk_rig_await(struct tk_rig *r, int timeout_ms);

#endif
