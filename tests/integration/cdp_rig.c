/*
 * cdp_rig.c: the direct CDP client of tests and benchmarks.
 */
#include "cdp_rig.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "testkit.h"

#define TK_RIG_FETCH_MS 10000 /* a Fetch answer the rig sends */

static int
rig_send(void *arg, const char *msg, size_t len)
{
	struct tk_rig *r = arg;

	return act_pipe_send(r->pipe, msg, len);
}

static void
rig_event(
    void *arg, const char *session, const char *method, const json_t *params)
{
	struct tk_rig *r = arg;
	const char *id =
	    json_string_value(json_object_get(params, "requestId"));

	if (strcmp(method, r->want_event) == 0)
		r->saw_event = true;
	/* Fetch, for a session that enabled it: let everything through,
	 * and answer the proxy's challenge (nobody waits on the replies). */
	if (id != NULL && strcmp(method, "Fetch.requestPaused") == 0)
		act_cdp_call(r->cdp, session,
		    json_object_get(params, "responseStatusCode") != NULL ||
		            json_object_get(params, "responseErrorReason") !=
		                NULL
		        ? "Fetch.continueResponse"
		        : "Fetch.continueRequest",
		    json_pack("{s:s}", "requestId", id),
		    cm_mono_ms() + TK_RIG_FETCH_MS, NULL, NULL);
	else if (id != NULL && strcmp(method, "Fetch.authRequired") == 0)
		act_cdp_call(r->cdp, session, "Fetch.continueWithAuth",
		    json_pack("{s:s, s:o}", "requestId", id,
		        "authChallengeResponse",
		        r->proxy_user != NULL
		            ? json_pack("{s:s, s:s, s:s}", "response",
		                  "ProvideCredentials", "username",
		                  r->proxy_user, "password", r->proxy_password)
		            : json_pack("{s:s}", "response", "CancelAuth")),
		    cm_mono_ms() + TK_RIG_FETCH_MS, NULL, NULL);
}

static int
rig_msg(void *arg, const char *msg, size_t len)
{
	struct tk_rig *r = arg;

	return act_cdp_receive(r->cdp, msg, len);
}

void
tk_rig_reply(void *arg, const json_t *result, const json_t *error)
{
	struct tk_rig *r = arg;

	r->replies++;
	json_decref(r->result);
	r->result = result ? json_deep_copy(result) : NULL;
	r->error_code =
	    error ? json_integer_value(json_object_get(error, "code")) : 0;
}

int
tk_rig_turn(struct tk_rig *r)
{
	struct pollfd fds[2];
	int n = act_pipe_pollfds(r->pipe, fds, 2);

	poll(fds, (nfds_t)n, 10);
	if (act_pipe_step(r->pipe, fds, n, rig_msg, r) != 0) {
		act_cdp_fail_all(r->cdp);
		return -1;
	}
	act_cdp_expire(r->cdp, cm_mono_ms());
	return 0;
}

json_t *
tk_rig_call(struct tk_rig *r, const char *session, const char *method,
    json_t *params, int timeout_ms)
{
	int before = r->replies;

	r->error_code = 0;
	if (act_cdp_call(r->cdp, session, method, params,
	        cm_mono_ms() + timeout_ms, tk_rig_reply, r) <= 0)
		return NULL;
	while (r->replies == before && tk_rig_turn(r) == 0)
		;
	return r->replies == before + 1 ? r->result : NULL;
}

void
tk_rig_expect(struct tk_rig *r, const char *method)
{
	snprintf(r->want_event, sizeof(r->want_event), "%s", method);
	r->saw_event = false;
}

bool
tk_rig_await(struct tk_rig *r, int timeout_ms)
{
	for (int64_t end = cm_mono_ms() + timeout_ms;
	     !r->saw_event && cm_mono_ms() < end;)
		if (tk_rig_turn(r) != 0)
			break;
	return r->saw_event;
}

int
tk_rig_start(struct tk_rig *r, char *err, size_t errlen)
{
	return tk_rig_start_via(r, NULL, NULL, NULL, err, errlen);
}

int
tk_rig_start_via(struct tk_rig *r, const char *proxy, const char *user,
    const char *password, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->proxy_user = user;
	r->proxy_password = password;
	signal(SIGPIPE, SIG_IGN); /* as the actor: a dead browser's pipe */
	if (access(TK_CHROMIUM, X_OK) != 0) {
		snprintf(err, errlen, "no chromium at " TK_CHROMIUM);
		return -1;
	}
	tk_tmpdir(r->dir, sizeof(r->dir), "br");
	if (act_browser_launch(
	        TK_CHROMIUM, r->dir, r->dir, proxy, &r->b, err, errlen) != 0)
		return -1;
	r->pipe = act_pipe_new(r->b.wfd, r->b.rfd);
	r->cdp = act_cdp_new(rig_send, rig_event, r);
	if (r->pipe == NULL || r->cdp == NULL) {
		snprintf(err, errlen, "out of memory");
		tk_rig_stop(r);
		return -1;
	}
	return 0;
}

void
tk_rig_stop(struct tk_rig *r)
{
	act_browser_kill(&r->b);
	act_cdp_free(r->cdp);
	act_pipe_free(r->pipe);
	json_decref(r->result);
	if (r->dir[0] != '\0') {
		act_browser_rm_singleton(r->dir);
		tk_rmrf(r->dir);
	}
	memset(r, 0, sizeof(*r));
}
