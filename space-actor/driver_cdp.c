/*
 * driver_cdp.c: the cdp driver.  The Space runs on a browser someone else
 * runs (a container, another host), reached over a websocket (cdp_ws.h)
 * at the instance's endpoint; from the connection up it is the managed
 * driver's session (session.h).
 *
 * Each Space gets a browser context of its own (Target.createBrowserContext,
 * disposed at close), so two Spaces on one remote browser never share
 * cookies or storage.  The driver never closes the remote browser: it is
 * not ours.  A connection that drops fails the call in progress with
 * runtime_crashed and the next call connects again;
 * CM_BROWSER_LAUNCH_TRIES failed connections in a row make the runtime
 * unusable (reset returns -1), as failed launches do for managed.
 *
 * The endpoint is a secret: no log line or error text here names it or
 * anything made from it (its host, port or websocket URL).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdp.h"
#include "cdp_endpoint.h"
#include "cdp_ws.h"
#include "clock.h"
#include "driver.h"
#include "log.h"
#include "session.h"

struct act_driver {
	char endpoint[CM_ENDPOINT_MAX + 1]; /* secret */
	int connect_failures;               /* in a row */
	struct act_ws *ws;
	struct act_cdp *cdp;
	struct act_session s; /* the page and the call on it */
	bool disposed;        /* close: the context's disposal answered */
};

static int
cd_send(void *arg, const char *msg, size_t len)
{
	struct act_driver *d = arg;

	return d->ws != NULL ? act_ws_send(d->ws, msg, len) : -1;
}

static void
cd_event(
    void *arg, const char *session, const char *method, const json_t *params)
{
	struct act_driver *d = arg;

	act_session_event(&d->s, session, method, params);
}

static int
cd_msg(void *arg, const char *msg, size_t len)
{
	struct act_driver *d = arg;

	return act_cdp_receive(d->cdp, msg, len);
}

/* Drops the connection; the session is DOWN.  The remote browser runs
 * on, and drops the Space's context with the connection. */
static void
cd_down(struct act_driver *d)
{
	act_session_down(&d->s);
	if (d->cdp != NULL)
		act_cdp_fail_all(d->cdp);
	act_cdp_free(d->cdp);
	d->cdp = NULL;
	act_ws_free(d->ws);
	d->ws = NULL;
}

/* Begins a connection; the page is set up once it is open. */
static int
cd_connect(struct act_driver *d, char *err, size_t errlen)
{
	if (act_ws_open(d->endpoint, cm_mono_ms() + CM_CDP_CONNECT_MS, &d->ws,
	        err, errlen) != 0)
		return -1;
	if ((d->cdp = act_cdp_new(cd_send, cd_event, d)) == NULL) {
		snprintf(err, errlen, "out of memory");
		cd_down(d);
		return -1;
	}
	return 0;
}

static int
cd_open(const struct act_env *env, struct act_driver **out, char *err,
    size_t errlen)
{
	struct act_driver *d;
	struct cm_cdpep ep;

	*out = NULL;
	if (env->endpoint == NULL || cm_cdpep_parse(env->endpoint, &ep) != 0) {
		snprintf(err, errlen,
		    "the endpoint is not http(s)://host:port or "
		    "ws(s)://host:port/path");
		return -1;
	}
	if ((d = calloc(1, sizeof(*d))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(d->endpoint, sizeof(d->endpoint), "%s", env->endpoint);
	act_session_init(&d->s, env->policy, true);
	act_session_events(&d->s, env->page_event, env->page_event_arg);
	act_session_dialogs(&d->s, env->dialog_policy);
	if (cd_connect(d, err, errlen) != 0) {
		free(d);
		return -1;
	}
	*out = d;
	return 0;
}

static int
cd_start(struct act_driver *d, const struct act_call *call)
{
	char err[256];

	if (act_session_start(&d->s, call) != 0)
		return -1;
	if (d->ws == NULL && (d->connect_failures >= CM_BROWSER_LAUNCH_TRIES ||
	                         cd_connect(d, err, sizeof(err)) != 0)) {
		d->connect_failures++;
		act_session_fail(&d->s, CM_E_RUNTIME_CRASHED,
		    "the remote browser cannot be reached");
	}
	return 0;
}

static int
cd_pollfds(struct act_driver *d, struct pollfd *fds, int max, int64_t *wake_ms)
{
	*wake_ms = act_session_wake(&d->s, d->cdp, cm_mono_ms());
	return d->ws != NULL ? act_ws_pollfds(d->ws, fds, max) : 0;
}

static enum act_state
cd_step(struct act_driver *d, const struct pollfd *fds, int nfds,
    struct act_outcome *out)
{
	char err[CM_ERROR_MESSAGE_MAX + 1];
	enum act_state st;
	const char *why;
	bool drop;

	if (d->ws != NULL && act_ws_step(d->ws, fds, nfds, cd_msg, d) != 0) {
		act_ws_broken(d->ws, &why);
		cm_warnx("cdp: %s", why ? why : "the browser connection ended");
		st = act_session_lost(&d->s, d->cdp,
		         "the remote browser connection ended",
		         &d->connect_failures, out)
		         ? ACT_DONE
		         : ACT_PENDING;
		cd_down(d);
		if (st == ACT_DONE)
			return st;
	}
	if (d->ws != NULL && act_ws_ready(d->ws) &&
	    d->s.state == ACT_SESSION_DOWN)
		act_session_begin(
		    &d->s, d->cdp, cm_mono_ms() + CM_BROWSER_START_MS);
	st = act_session_turn(&d->s, d->cdp, cm_driver_name(CM_DRIVER_CDP),
	    &d->connect_failures, &drop, out);
	if (drop) {
		cd_down(d);
		/* A call that came during a reset that did not end clean
		 * gets a new connection. */
		if (act_session_busy(&d->s) &&
		    cd_connect(d, err, sizeof(err)) != 0) {
			d->connect_failures++;
			act_session_fail(&d->s, CM_E_RUNTIME_CRASHED,
			    "the remote browser cannot be reached");
		}
	}
	if (st == ACT_CLEAN && d->connect_failures >= CM_BROWSER_LAUNCH_TRIES)
		out->err = CM_E_RUNTIME_CRASHED;
	return st;
}

static int
cd_cancel(struct act_driver *d)
{
	act_session_cancel(&d->s);
	return 0;
}

static int
cd_reset(struct act_driver *d)
{
	if (d->connect_failures >= CM_BROWSER_LAUNCH_TRIES)
		return -1;
	switch (act_session_reset(&d->s)) {
	case 1:
		return 1;
	case -1:
		cd_down(d); /* the next call connects again */
		return 0;
	default:
		return 0;
	}
}

static void
cd_disposed(void *arg, const json_t *result, const json_t *error)
{
	struct act_driver *d = arg;

	(void)result;
	(void)error;
	d->disposed = true;
}

/*
 * The Space's context goes, with its target and cookies; the browser
 * stays.  Bounded by CM_CDP_CLOSE_MS, as a managed close is bounded by
 * the reap of its browser.
 */
static void
cd_close(struct act_driver *d)
{
	int64_t end;

	if (d == NULL)
		return;
	end = cm_mono_ms() + CM_CDP_CLOSE_MS;
	if (d->ws != NULL && act_ws_ready(d->ws) &&
	    act_session_dispose(&d->s, end, cd_disposed, d) > 0) {
		while (!d->disposed && d->ws != NULL && cm_mono_ms() < end) {
			struct pollfd fds[2];
			int n = act_ws_pollfds(d->ws, fds, 2);

			poll(fds, (nfds_t)n, (int)(end - cm_mono_ms()));
			if (act_ws_step(d->ws, fds, n, cd_msg, d) != 0)
				break;
		}
	}
	cd_down(d);
	act_session_fini(&d->s);
	free(d);
}

/* The Space's page, for the live view (driver.h). */
static struct act_session *
cd_session(struct act_driver *d)
{
	return &d->s;
}

const struct act_driver_ops act_driver_cdp = {
    .open = cd_open,
    .start = cd_start,
    .pollfds = cd_pollfds,
    .step = cd_step,
    .cancel = cd_cancel,
    .reset = cd_reset,
    .close = cd_close,
    .session = cd_session,
};
