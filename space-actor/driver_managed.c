/*
 * driver_managed.c: the managed driver (DESIGN 3).  The actor launches
 * its own Chromium (browser.h), speaks CDP to it over the private pipe
 * (cdp_pipe.h, cdp.h), and runs capabilities on one page (page.h).
 *
 * The browser starts at open and gets its page ready in the loop: a new
 * target attached as a flat session, with the Page and Network domains
 * on.  A call that arrives before the page is ready waits for it.  When
 * the pipe ends (the browser died) the call in progress fails with
 * runtime_crashed and the next call launches a new browser;
 * CM_BROWSER_LAUNCH_TRIES failed launches in a row make the runtime
 * unusable (reset returns -1).
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "browser.h"
#include "cdp.h"
#include "cdp_pipe.h"
#include "clock.h"
#include "driver.h"
#include "log.h"
#include "page.h"

enum md_state {
	MD_DOWN,     /* no browser: the next call launches one */
	MD_STARTING, /* launched; the page is being set up */
	MD_READY,
};

struct act_driver {
	const struct cm_policy *policy; /* the instance's, borrowed */
	char chromium[CM_PATH_MAX];
	char profile[CM_PATH_MAX];
	bool ephemeral; /* the profile goes with the driver */
	enum md_state state;
	int launch_failures; /* in a row */
	struct act_browser b;
	struct act_pipe *pipe;
	struct act_cdp *cdp;
	int64_t setup_cmd;
	size_t setup_step; /* the step whose reply is awaited */
	int64_t setup_deadline_ms;
	char target[CM_ID_MAX + 1];
	struct act_page page;
	bool page_ok; /* page was initialised */

	bool resetting;    /* the page is being brought to rest */
	bool setup_broken; /* a setup step failed: the loop starts over */

	/* A call waiting for the page, and its outcome if it ended early. */
	bool waiting;
	char capability[CM_CAPABILITY_MAX + 1];
	json_t *args;
	int64_t deadline_ms;
	bool failed;
	struct act_outcome early;
};

static int
md_send(void *arg, const char *msg, size_t len)
{
	struct act_driver *d = arg;

	return d->pipe != NULL ? act_pipe_send(d->pipe, msg, len) : -1;
}

static void
md_event(
    void *arg, const char *session, const char *method, const json_t *params)
{
	struct act_driver *d = arg;

	if (d->page_ok)
		act_page_event(&d->page, session, method, params);
	/* The target itself went away (a renderer killed with its page). */
	if (strcmp(method, "Target.targetCrashed") == 0 ||
	    strcmp(method, "Target.detachedFromTarget") == 0) {
		const char *id =
		    json_string_value(json_object_get(params, "targetId"));
		const char *sid =
		    json_string_value(json_object_get(params, "sessionId"));

		if (d->page_ok &&
		    ((id != NULL && strcmp(id, d->target) == 0) ||
		        (sid != NULL && strcmp(sid, d->page.session) == 0)))
			act_page_event(&d->page, d->page.session,
			    "Inspector.targetCrashed", NULL);
	}
}

static int
md_msg(void *arg, const char *msg, size_t len)
{
	struct act_driver *d = arg;

	return act_cdp_receive(d->cdp, msg, len);
}

/* Ends the browser and everything of it; the state becomes MD_DOWN. */
static void
md_down(struct act_driver *d)
{
	if (d->page_ok)
		act_page_fini(&d->page);
	d->page_ok = false;
	if (d->cdp != NULL)
		act_cdp_fail_all(d->cdp);
	act_cdp_free(d->cdp);
	d->cdp = NULL;
	act_pipe_free(d->pipe);
	d->pipe = NULL;
	act_browser_kill(&d->b);
	d->state = MD_DOWN;
	d->setup_cmd = 0;
}

/* The waiting call ends before it reached the page. */
static void
md_fail_waiting(struct act_driver *d, enum cm_err err, const char *msg)
{
	if (!d->waiting)
		return;
	d->waiting = false;
	json_decref(d->args);
	d->args = NULL;
	d->failed = true;
	memset(&d->early, 0, sizeof(d->early));
	d->early.err = err;
	snprintf(d->early.message, sizeof(d->early.message), "%s", msg);
}

/* ---- setting up the page: createTarget, attach, enable */

/*
 * The steps, in order; each reply moves to the next.  Events of the
 * page's session flow from the attach on.
 */
static const char *const md_steps[] = {
    "Target.createTarget",
    "Target.attachToTarget",
    "Page.enable",
    "Inspector.enable",
    "Network.enable",
    /* Requests pause for the network policy (page.h). */
    "Fetch.enable",
    /* The viewport is CM_BROWSER_WIDTH x CM_BROWSER_HEIGHT at scale 1,
     * whatever the window around it: a screenshot of it is that size. */
    "Emulation.setDeviceMetricsOverride",
    "Page.getFrameTree",
};

#define MD_STEPS (sizeof(md_steps) / sizeof(md_steps[0]))

static void md_setup_reply(
    void *arg, const json_t *result, const json_t *error);

/* Sends step i of the setup.  Returns 0 or -1. */
static int
md_setup_send(struct act_driver *d, size_t i)
{
	json_t *params = NULL;
	const char *session = NULL;

	d->setup_step = i;
	if (i == 0)
		params = json_pack("{s:s}", "url", "about:blank");
	else if (i == 1)
		params = json_pack(
		    "{s:s, s:b}", "targetId", d->target, "flatten", 1);
	else if (strcmp(md_steps[i], "Fetch.enable") == 0) {
		session = d->page.session;
		params = act_page_fetch_params();
	} else if (strcmp(md_steps[i], "Emulation.setDeviceMetricsOverride") ==
	           0) {
		session = d->page.session;
		params = json_pack("{s:i, s:i, s:i, s:b}", "width",
		    CM_BROWSER_WIDTH, "height", CM_BROWSER_HEIGHT,
		    "deviceScaleFactor", 1, "mobile", 0);
	} else
		session = d->page.session;
	d->setup_cmd = act_cdp_call(d->cdp, session, md_steps[i], params,
	    d->setup_deadline_ms, md_setup_reply, d);
	return d->setup_cmd > 0 ? 0 : -1;
}

/*
 * A step failed.  It is called from the CDP client's reply callbacks,
 * inside a read of the pipe or an expiry: the browser is torn down by
 * md_step afterwards, never under the client's feet.
 */
static void
md_setup_failed(struct act_driver *d, const char *why)
{
	cm_warnx("managed: the browser's page could not be set up: %s", why);
	d->setup_broken = true;
}

static void
md_setup_reply(void *arg, const json_t *result, const json_t *error)
{
	struct act_driver *d = arg;
	const char *id;

	d->setup_cmd = 0;
	if (error != NULL) {
		id = json_string_value(json_object_get(error, "message"));
		md_setup_failed(d, id != NULL ? id : md_steps[d->setup_step]);
		return;
	}
	switch (d->setup_step) {
	case 0:
		id = json_string_value(json_object_get(result, "targetId"));
		if (id == NULL || strlen(id) >= sizeof(d->target)) {
			md_setup_failed(d, "no target");
			return;
		}
		snprintf(d->target, sizeof(d->target), "%s", id);
		break;
	case 1:
		id = json_string_value(json_object_get(result, "sessionId"));
		if (id == NULL || strlen(id) > CM_ID_MAX) {
			md_setup_failed(d, "no session");
			return;
		}
		act_page_init(&d->page, d->cdp, d->policy, id, d->target);
		d->page_ok = true;
		break;
	case MD_STEPS - 1:
		id = json_string_value(json_object_get(
		    json_object_get(
		        json_object_get(result, "frameTree"), "frame"),
		    "id"));
		if (id != NULL && d->page.frame[0] == '\0')
			snprintf(
			    d->page.frame, sizeof(d->page.frame), "%s", id);
		d->state = MD_READY;
		d->launch_failures = 0;
		return;
	default:
		break;
	}
	if (md_setup_send(d, d->setup_step + 1) != 0)
		md_setup_failed(d, "the browser connection is broken");
}

/* Launches a browser and begins setting up its page.  Returns 0 or -1. */
static int
md_launch(struct act_driver *d, char *err, size_t errlen)
{
	if (mkdir(d->profile, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot make the profile directory: %s",
		    strerror(errno));
		return -1;
	}
	if (act_browser_launch(
	        d->chromium, d->profile, NULL, &d->b, err, errlen) != 0)
		return -1;
	if ((d->pipe = act_pipe_new(d->b.wfd, d->b.rfd)) == NULL ||
	    (d->cdp = act_cdp_new(md_send, md_event, d)) == NULL) {
		snprintf(err, errlen, "out of memory");
		md_down(d);
		return -1;
	}
	d->target[0] = '\0';
	d->state = MD_STARTING;
	d->setup_deadline_ms = cm_mono_ms() + CM_BROWSER_START_MS;
	if (md_setup_send(d, 0) != 0) {
		snprintf(err, errlen, "the browser connection is broken");
		md_down(d);
		return -1;
	}
	return 0;
}

/* ---- the driver */

static int
md_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* Removes a profile directory and everything in it.  0, or -1 when
 * something was left. */
static int
md_rm_tree(const char *dir)
{
	return nftw(dir, md_rm, CM_PROFILE_RM_FDS, FTW_DEPTH | FTW_PHYS) == 0 ||
	               errno == ENOENT
	           ? 0
	           : -1;
}

/* <data_dir>/profiles, made when missing.  0, or -1. */
static int
md_profiles_dir(const struct cm_config *cfg, char *dir, size_t len)
{
	int n = snprintf(dir, len, "%s/profiles", cfg->data_dir);

	if (n < 0 || (size_t)n >= len ||
	    (mkdir(dir, 0700) != 0 && errno != EEXIST))
		return -1;
	return 0;
}

/* A driver whose browser uses profile (ephemeral: removed with it),
 * launched at once. */
static int
md_new(const struct cm_config *cfg, const struct cm_policy *policy,
    const char *profile, bool ephemeral, struct act_driver **out, char *err,
    size_t errlen)
{
	struct act_driver *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (d == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(d->chromium, sizeof(d->chromium), "%s", cfg->chromium_path);
	d->policy = policy;
	d->ephemeral = ephemeral;
	if ((size_t)snprintf(d->profile, sizeof(d->profile), "%s", profile) >=
	    sizeof(d->profile)) {
		snprintf(err, errlen, "the profile path is too long");
		free(d);
		return -1;
	}
	if (md_launch(d, err, errlen) != 0) {
		free(d);
		return -1;
	}
	*out = d;
	return 0;
}

static int
md_open(const struct act_env *env, struct act_driver **out, char *err,
    size_t errlen)
{
	char dir[CM_PATH_MAX], profile[CM_PATH_MAX];
	bool ephemeral;
	int n;

	*out = NULL;
	/* An instance with a profile path keeps that one directory
	 * (persistent); otherwise each Space gets a fresh one of its own,
	 * removed at close (ephemeral). */
	ephemeral = env->profile == NULL || env->profile[0] == '\0';
	if (md_profiles_dir(env->cfg, dir, sizeof(dir)) != 0) {
		snprintf(err, errlen, "cannot make the profiles directory");
		return -1;
	}
	if (ephemeral)
		n = snprintf(
		    profile, sizeof(profile), "%s/%s", dir, env->space_id);
	else
		n = snprintf(profile, sizeof(profile), "%s", env->profile);
	if (n < 0 || (size_t)n >= sizeof(profile)) {
		snprintf(err, errlen, "the profile path is too long");
		return -1;
	}
	return md_new(
	    env->cfg, env->policy, profile, ephemeral, out, err, errlen);
}

/* The pid in a standby profile's name, or 0 when name is not one. */
static pid_t
md_standby_pid(const char *name)
{
	size_t n = strlen(ACT_STANDBY_PROFILE_PREFIX);
	char *end;
	long v;

	if (strncmp(name, ACT_STANDBY_PROFILE_PREFIX, n) != 0)
		return 0;
	errno = 0;
	v = strtol(name + n, &end, 10);
	return errno == 0 && *end == '\0' && v > 0 && v < INT32_MAX ? (pid_t)v
	                                                            : 0;
}

void
act_managed_sweep_standby(const struct cm_config *cfg)
{
	char dir[CM_PATH_MAX], path[CM_PATH_MAX + 300];
	struct dirent *de;
	DIR *d;

	if (md_profiles_dir(cfg, dir, sizeof(dir)) != 0 ||
	    (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		pid_t pid = md_standby_pid(de->d_name);

		/* A live owner keeps it: a standby, or the actor it became. */
		if (pid <= 0 || pid == getpid() ||
		    (kill(pid, 0) == 0 || errno != ESRCH))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (md_rm_tree(path) != 0)
			cm_warnx("managed: a stale standby profile was not "
			         "removed in full");
		else
			cm_debug("managed: removed the stale standby profile "
			         "of pid %d",
			    (int)pid);
	}
	closedir(d);
}

int
act_managed_standby_open(const struct cm_config *cfg, struct act_driver **out,
    char *err, size_t errlen)
{
	char dir[CM_PATH_MAX], profile[CM_PATH_MAX];
	int n;

	*out = NULL;
	if (md_profiles_dir(cfg, dir, sizeof(dir)) != 0) {
		snprintf(err, errlen, "cannot make the profiles directory");
		return -1;
	}
	n = snprintf(profile, sizeof(profile), "%s/%s%d", dir,
	    ACT_STANDBY_PROFILE_PREFIX, (int)getpid());
	if (n < 0 || (size_t)n >= sizeof(profile)) {
		snprintf(err, errlen, "the profile path is too long");
		return -1;
	}
	/* Fresh: whatever a dead process of the same pid left goes first. */
	if (md_rm_tree(profile) != 0) {
		snprintf(err, errlen, "a stale standby profile is in the way");
		return -1;
	}
	/* No Space yet, so no policy: nothing runs on the page until one
	 * is adopted (act_managed_adopt). */
	return md_new(cfg, NULL, profile, true, out, err, errlen);
}

bool
act_managed_alive(const struct act_driver *d)
{
	return d != NULL && d->state != MD_DOWN;
}

void
act_managed_adopt(struct act_driver *d, const struct act_env *env)
{
	d->policy = env->policy;
	if (d->page_ok)
		d->page.policy = env->policy;
}

static int
md_start(struct act_driver *d, const struct act_call *call)
{
	char err[256];

	if (d->waiting || (d->page_ok && d->page.busy))
		return -1;
	d->failed = false;
	if (d->state == MD_DOWN) {
		if (d->launch_failures >= CM_BROWSER_LAUNCH_TRIES ||
		    md_launch(d, err, sizeof(err)) != 0) {
			d->launch_failures++;
			d->failed = true;
			memset(&d->early, 0, sizeof(d->early));
			d->early.err = CM_E_RUNTIME_CRASHED;
			snprintf(d->early.message, sizeof(d->early.message),
			    "the browser did not start");
			return 0;
		}
	}
	if (d->state == MD_READY && !d->resetting)
		return act_page_start(
		    &d->page, call->capability, call->args, call->deadline_ms);
	d->waiting = true;
	snprintf(d->capability, sizeof(d->capability), "%s", call->capability);
	d->args = json_deep_copy(call->args);
	d->deadline_ms = call->deadline_ms;
	return 0;
}

static int
md_pollfds(struct act_driver *d, struct pollfd *fds, int max, int64_t *wake_ms)
{
	int64_t now = cm_mono_ms(), w = -1, t;

	*wake_ms = -1;
	if (d->failed || d->setup_broken || (d->resetting && !d->page_ok)) {
		*wake_ms = now;
		return 0;
	}
	if (d->pipe == NULL)
		return 0;
	if (d->cdp != NULL)
		w = act_cdp_expire(d->cdp, now);
	if (d->page_ok && (t = act_page_tick(&d->page, now)) >= 0 &&
	    (w < 0 || t < w))
		w = t;
	if (d->waiting && (w < 0 || d->deadline_ms < w))
		w = d->deadline_ms;
	*wake_ms = w;
	return act_pipe_pollfds(d->pipe, fds, max);
}

static enum act_state
md_step(struct act_driver *d, const struct pollfd *fds, int nfds,
    struct act_outcome *out)
{
	int64_t now = cm_mono_ms();

	if (d->pipe != NULL &&
	    act_pipe_step(d->pipe, fds, nfds, md_msg, d) != 0) {
		/* The browser is gone: fail what waits on it.  A launch
		 * that ends before its page was ready is one failure. */
		bool starting = d->state == MD_STARTING;

		cm_warnx("managed: the browser went away");
		act_cdp_forget(d->cdp, d->setup_cmd);
		d->setup_cmd = 0;
		act_cdp_fail_all(d->cdp);
		d->setup_broken = false;
		if (starting)
			d->launch_failures++;
		md_fail_waiting(
		    d, CM_E_RUNTIME_CRASHED, "the browser went away");
		if (d->page_ok && act_page_take(&d->page, out)) {
			md_down(d);
			return ACT_DONE;
		}
		md_down(d);
	}
	if (d->cdp != NULL)
		act_cdp_expire(d->cdp, now);
	if (d->setup_broken) {
		d->setup_broken = false;
		d->launch_failures++;
		md_down(d);
		md_fail_waiting(
		    d, CM_E_RUNTIME_CRASHED, "the browser did not start");
	}
	if (d->resetting) {
		bool clean = false;

		if (d->page_ok && !act_page_rested(&d->page, &clean))
			return ACT_PENDING;
		/* A page that did not come to rest in time, or a browser
		 * that went away meanwhile: the next call starts one anew. */
		d->resetting = false;
		if (!clean) {
			char err[CM_ERROR_MESSAGE_MAX + 1];

			md_down(d);
			/* A call that came meanwhile gets a new browser. */
			if (d->waiting && md_launch(d, err, sizeof(err)) != 0) {
				d->launch_failures++;
				md_fail_waiting(d, CM_E_RUNTIME_CRASHED,
				    "the browser did not start");
			}
		}
		memset(out, 0, sizeof(*out));
		out->err = d->launch_failures >= CM_BROWSER_LAUNCH_TRIES
		               ? CM_E_RUNTIME_CRASHED
		               : CM_OK;
		return ACT_CLEAN;
	}
	if (d->waiting && d->state == MD_READY) {
		d->waiting = false;
		act_page_start(
		    &d->page, d->capability, d->args, d->deadline_ms);
		json_decref(d->args);
		d->args = NULL;
	} else if (d->waiting && now >= d->deadline_ms) {
		md_fail_waiting(
		    d, CM_E_TASK_TIMEOUT, "the browser did not start in time");
	}
	if (d->failed) {
		d->failed = false;
		*out = d->early;
		return ACT_DONE;
	}
	if (d->page_ok) {
		act_page_tick(&d->page, now);
		if (act_page_take(&d->page, out)) {
			if (d->page.crashed)
				md_down(d); /* a crashed page: start over */
			return ACT_DONE;
		}
	}
	return ACT_PENDING;
}

static int
md_cancel(struct act_driver *d)
{
	md_fail_waiting(d, CM_E_RUNTIME_ERROR, "cancelled");
	d->failed = false;
	if (d->page_ok)
		act_page_abort(&d->page);
	return 0;
}

static int
md_reset(struct act_driver *d)
{
	if (d->launch_failures >= CM_BROWSER_LAUNCH_TRIES)
		return -1;
	if (d->state != MD_READY || !d->page_ok)
		return 0; /* no page, or one still being set up: at rest */
	if (act_page_reset(&d->page) != 0) {
		md_down(d);
		return 0;
	}
	d->resetting = true;
	return 1;
}

static void
md_close(struct act_driver *d)
{
	if (d == NULL)
		return;
	md_down(d);
	json_decref(d->args);
	if (d->ephemeral && md_rm_tree(d->profile) != 0)
		cm_warnx(
		    "managed: the ephemeral profile was not removed in full");
	free(d);
}

const struct act_driver_ops act_driver_managed = {
    .name = "managed",
    .open = md_open,
    .start = md_start,
    .pollfds = md_pollfds,
    .step = md_step,
    .cancel = md_cancel,
    .reset = md_reset,
    .close = md_close,
};
