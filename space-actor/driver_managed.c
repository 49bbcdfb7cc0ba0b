/*
 * driver_managed.c: the managed driver.  The actor launches its own
 * Chromium (browser.h), speaks CDP to it over the private pipe (cdp_pipe.h,
 * cdp.h); from the connection up, the page and the call on it are the
 * session's (session.h), shared with the cdp driver.
 *
 * The browser starts at open and gets its page ready in the loop (in the
 * browser's default context: the browser is the Space's own).  When
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
#include "egress.h"
#include "log.h"
#include "session.h"

/* A discarded profile's name: trash-<pid>-<its own name>. */
#define MD_TRASH_PREFIX "trash-"
/* The Space's downloads, inside its profile. */
#define MD_DOWNLOADS "spaced-downloads"
/* The files the actor writes for the Space's uploads, inside its
 * profile (act_driver_ops.upload_dir). */
#define MD_UPLOADS "spaced-uploads"
/* A persistent instance's own profile, when the admin named no path:
 * instance-<its id>, kept across its Spaces (and by every sweep). */
#define MD_INSTANCE_PREFIX "instance-"

/* The browsers' own TMPDIRs, <data_dir>/MD_TMP/<the actor's pid>. */
#define MD_TMP "tmp"
/* What Chromium adds to its TMPDIR for the single-instance socket,
 * /org.chromium.Chromium.<6 characters>/SingletonSocket, which must fit a
 * sun_path. */
#define MD_TMP_SOCKET_LEN 45

struct act_driver {
	char chromium[CM_PATH_MAX];
	char profile[CM_PATH_MAX];
	/* The browser's TMPDIR, inside the data dir; "" when that path is
	 * too long for Chromium's socket and the browser keeps the actor's
	 * own. */
	char tmp[CM_PATH_MAX];
	bool ephemeral;      /* the profile goes with the driver */
	int launch_failures; /* in a row */
	struct act_browser b;
	struct act_pipe *pipe;
	struct act_cdp *cdp;
	struct act_session s; /* the page and the call on it */
	/* The egress proxy every request goes through (borrowed from the
	 * actor), as --proxy-server, and its credentials for the page. */
	char proxy[CM_PROXY_URL_MAX];
	struct act_proxy_auth auth;
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

	act_session_event(&d->s, session, method, params);
}

static int
md_msg(void *arg, const char *msg, size_t len)
{
	struct act_driver *d = arg;

	return act_cdp_receive(d->cdp, msg, len);
}

/*
 * Ends the browser and everything of it; the session is DOWN.  With wait,
 * its leader is reaped before the return, so that its profile can be
 * used again at once; without, the profile must be discarded, and the
 * actor reaps the browser before it exits.
 */
static void
md_down(struct act_driver *d, bool wait)
{
	act_session_down(&d->s);
	if (d->cdp != NULL)
		act_cdp_fail_all(d->cdp);
	act_cdp_free(d->cdp);
	d->cdp = NULL;
	act_pipe_free(d->pipe);
	d->pipe = NULL;
	if (wait)
		act_browser_kill(&d->b);
	else
		act_browser_end(&d->b);
}

/*
 * The Space's downloads go to <profile>/MD_DOWNLOADS, inside the data
 * dir: it goes with an ephemeral profile, and from a kept one at close
 * (md_close).  Made when missing.  0, or -1 with err.
 */
static int
md_downloads_dir(struct act_driver *d, char *err, size_t errlen)
{
	char dir[CM_PATH_MAX];
	int n = snprintf(dir, sizeof(dir), "%s/%s", d->profile, MD_DOWNLOADS);

	if (n < 0 || (size_t)n >= sizeof(dir) ||
	    (mkdir(dir, 0700) != 0 && errno != EEXIST)) {
		snprintf(err, errlen, "cannot make the downloads directory");
		return -1;
	}
	act_session_downloads(&d->s, dir);
	return 0;
}

/* Launches a browser and begins setting up its page.  Returns 0 or -1. */
static int
md_launch(struct act_driver *d, char *err, size_t errlen)
{
	(void)act_browser_reap(0); /* what earlier closes ended */
	/* A kept profile's last browser was killed (or is relaunched after
	 * a crash): its single-instance directory goes first. */
	act_browser_rm_singleton(d->profile);
	if (mkdir(d->profile, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot make the profile directory: %s",
		    strerror(errno));
		return -1;
	}
	if (md_downloads_dir(d, err, errlen) != 0)
		return -1;
	if (d->tmp[0] != '\0' && mkdir(d->tmp, 0700) != 0 && errno != EEXIST) {
		snprintf(
		    err, errlen, "cannot make the browser's tmp directory");
		return -1;
	}
	if (act_browser_launch(d->chromium, d->profile,
	        d->tmp[0] != '\0' ? d->tmp : NULL,
	        d->proxy[0] != '\0' ? d->proxy : NULL, &d->b, err, errlen) != 0)
		return -1;
	if ((d->pipe = act_pipe_new(d->b.wfd, d->b.rfd)) == NULL ||
	    (d->cdp = act_cdp_new(md_send, md_event, d)) == NULL) {
		snprintf(err, errlen, "out of memory");
		md_down(d, true);
		return -1;
	}
	if (act_session_begin(
	        &d->s, d->cdp, cm_mono_ms() + CM_BROWSER_START_MS) != 0) {
		snprintf(err, errlen, "the browser connection is broken");
		md_down(d, true);
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

/* Removes a profile directory and everything in it, and what Chromium
 * keeps of it elsewhere.  0, or -1 when something was left. */
static int
md_rm_tree(const char *dir)
{
	act_browser_rm_singleton(dir);
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

/*
 * The browser's TMPDIR, <data_dir>/MD_TMP/<our pid>, into dir (empty
 * first: what a dead process of the same pid left goes), so that nothing
 * of the Space is written outside the data dir.  "" when that path is
 * too long for Chromium's single-instance socket (logged: the browser
 * then keeps the actor's TMPDIR).  0, or -1 when it cannot be made.
 */
static int
md_tmp_dir(const struct cm_config *cfg, char *dir, size_t len)
{
	int n = snprintf(dir, len, "%s/%s", cfg->data_dir, MD_TMP);

	if (n < 0 || (size_t)n >= len ||
	    (mkdir(dir, 0700) != 0 && errno != EEXIST))
		return -1;
	n = snprintf(
	    dir, len, "%s/%s/%d", cfg->data_dir, MD_TMP, (int)getpid());
	if (n < 0 || (size_t)n >= len)
		return -1;
	if ((size_t)n + MD_TMP_SOCKET_LEN > CM_IPC_PATH_MAX) {
		cm_warnx("managed: data_dir is too long for the browser's "
		         "socket under it: the browser keeps $TMPDIR");
		dir[0] = '\0';
		return 0;
	}
	return md_rm_tree(dir) == 0 && mkdir(dir, 0700) == 0 ? 0 : -1;
}

/* The page's question to the proxy (act_proxy_auth.refused). */
static bool
md_proxy_refused(void *arg, const char *host, int64_t since_ms)
{
	return act_egress_refused_since(arg, host, since_ms);
}

/* <profile>/MD_UPLOADS into dir.  0, or -1 when it does not fit. */
static int
md_uploads_path(const struct act_driver *d, char *dir, size_t len)
{
	int n = snprintf(dir, len, "%s/%s", d->profile, MD_UPLOADS);

	return n > 0 && (size_t)n < len ? 0 : -1;
}

/* A driver whose browser uses profile (ephemeral: removed with it),
 * launched at once. */
static int
md_new(const struct cm_config *cfg, const struct cm_policy *policy,
    struct act_egress *egress, const char *profile, bool ephemeral,
    struct act_driver **out, char *err, size_t errlen)
{
	struct act_driver *d = calloc(1, sizeof(*d));
	char dir[CM_PATH_MAX];

	*out = NULL;
	if (d == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(d->chromium, sizeof(d->chromium), "%s", cfg->chromium_path);
	/*
	 * The browser is the Space's own.  An ephemeral profile's page lives
	 * in a context of its own, which Chromium keeps in memory (cookies,
	 * storage, cache): nothing of it is written to disk only to be
	 * removed at close, and the disk's syncs, the store's among them,
	 * do not wait behind it.  A persistent profile's page uses the
	 * default context, the one kept on disk.
	 */
	act_session_init(&d->s, policy, ephemeral);
	if (egress != NULL) {
		/* The same proxy, and secret, for every browser this driver
		 * launches: it belongs to the actor, and a relaunched browser
		 * is the same Space's (its credentials come from the page,
		 * never from argv). */
		snprintf(d->proxy, sizeof(d->proxy), "http://127.0.0.1:%d",
		    act_egress_port(egress));
		snprintf(
		    d->auth.origin, sizeof(d->auth.origin), "%s", d->proxy);
		d->auth.user = ACT_EGRESS_USER;
		d->auth.password = act_egress_secret(egress);
		d->auth.refused = md_proxy_refused;
		d->auth.refused_arg = egress;
		act_session_proxy(&d->s, &d->auth);
	}
	d->ephemeral = ephemeral;
	if ((size_t)snprintf(d->profile, sizeof(d->profile), "%s", profile) >=
	    sizeof(d->profile)) {
		snprintf(err, errlen, "the profile path is too long");
		free(d);
		return -1;
	}
	if (md_tmp_dir(cfg, d->tmp, sizeof(d->tmp)) != 0) {
		snprintf(
		    err, errlen, "cannot make the browser's tmp directory");
		free(d);
		return -1;
	}
	/* What a crashed actor's uploads left in a kept profile goes before
	 * a browser of it runs again (an ephemeral one is fresh). */
	if (md_uploads_path(d, dir, sizeof(dir)) != 0 || md_rm_tree(dir) != 0) {
		snprintf(err, errlen, "a stale upload directory is in the way");
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
	const char *why = cm_profile_refusal(env->profile_mode, env->profile);
	bool ephemeral = env->profile_mode == CM_PROFILE_EPHEMERAL;
	int n;

	*out = NULL;
	/* The store keeps to the same rule; a row that did not would put
	 * a browser's profile somewhere no one chose. */
	if (why != NULL) {
		snprintf(err, errlen, "%s", why);
		return -1;
	}
	if (md_profiles_dir(env->cfg, dir, sizeof(dir)) != 0) {
		snprintf(err, errlen, "cannot make the profiles directory");
		return -1;
	}
	/* Ephemeral: each Space a fresh profile of its own, removed at
	 * close.  Persistent: the instance's one directory, the admin's
	 * absolute path or its own under <data_dir>/profiles, kept. */
	if (ephemeral)
		n = snprintf(
		    profile, sizeof(profile), "%s/%s", dir, env->space_id);
	else if (env->profile != NULL && env->profile[0] != '\0')
		n = snprintf(profile, sizeof(profile), "%s", env->profile);
	else
		n = snprintf(profile, sizeof(profile), "%s/%s%s", dir,
		    MD_INSTANCE_PREFIX, env->instance_id);
	if (n < 0 || (size_t)n >= sizeof(profile)) {
		snprintf(err, errlen, "the profile path is too long");
		return -1;
	}
	if (md_new(env->cfg, env->policy, env->egress, profile, ephemeral, out,
	        err, errlen) != 0)
		return -1;
	act_session_events(&(*out)->s, env->page_event, env->page_event_arg);
	act_session_dialogs(&(*out)->s, env->dialog_policy);
	return 0;
}

/*
 * The pid in the name of a standby profile (standby-<pid>) or of a
 * discarded one (trash-<pid>-<name>), or 0 when name is neither.
 * *trash tells which.
 */
static pid_t
md_owner_pid(const char *name, bool *trash)
{
	size_t ns = strlen(ACT_STANDBY_PROFILE_PREFIX);
	size_t nt = strlen(MD_TRASH_PREFIX);
	char *end;
	long v;

	*trash = strncmp(name, MD_TRASH_PREFIX, nt) == 0;
	if (!*trash && strncmp(name, ACT_STANDBY_PROFILE_PREFIX, ns) != 0)
		return 0;
	errno = 0;
	v = strtol(name + (*trash ? nt : ns), &end, 10);
	if (errno != 0 || v <= 0 || v >= INT32_MAX ||
	    *end != (*trash ? '-' : '\0'))
		return 0;
	return (pid_t)v;
}

/*
 * Removes the browsers' TMPDIRs under <data_dir>/MD_TMP whose actor is
 * gone, and our own: a sweep runs before a standby launches and after a
 * managed actor's browser is closed, never while one of ours runs.
 */
static void
md_sweep_tmp(const struct cm_config *cfg)
{
	char dir[CM_PATH_MAX], path[CM_PATH_MAX + 300];
	struct dirent *de;
	DIR *d;

	if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", cfg->data_dir,
	        MD_TMP) >= sizeof(dir) ||
	    (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char *end;
		long v;

		errno = 0;
		v = strtol(de->d_name, &end, 10);
		if (errno != 0 || v <= 0 || v >= INT32_MAX || *end != '\0' ||
		    ((pid_t)v != getpid() &&
		        (kill((pid_t)v, 0) == 0 || errno != ESRCH)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (md_rm_tree(path) != 0)
			cm_warnx("managed: a browser's tmp directory was not "
			         "removed in full");
	}
	closedir(d);
}

void
act_managed_sweep(const struct cm_config *cfg)
{
	char dir[CM_PATH_MAX], path[CM_PATH_MAX + 300];
	struct dirent *de;
	bool trash;
	DIR *d;

	md_sweep_tmp(cfg);
	if (md_profiles_dir(cfg, dir, sizeof(dir)) != 0 ||
	    (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		pid_t pid = md_owner_pid(de->d_name, &trash);

		/* A live owner keeps a standby profile (a standby, or the
		 * actor it became); what we discarded ourselves goes now. */
		if (pid <= 0 || (pid == getpid() && !trash) ||
		    (pid != getpid() && (kill(pid, 0) == 0 || errno != ESRCH)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (md_rm_tree(path) != 0)
			cm_warnx("managed: a discarded profile was not "
			         "removed in full");
	}
	closedir(d);
}

/*
 * Takes an ephemeral profile out of use at once: renamed into
 * <profiles>/trash-<our pid>-<its name>, the profile's own path is gone
 * and nothing can open it again, and act_managed_sweep removes the rest
 * once the Space is marked closed (or, should we die first, whoever
 * sweeps next).  Removed in place when the rename fails.
 */
static void
md_discard(const char *profile)
{
	char trash[CM_PATH_MAX + 64];
	const char *base = strrchr(profile, '/');
	int n;

	n = base == NULL ? -1
	                 : snprintf(trash, sizeof(trash), "%.*s/%s%d-%s",
	                       (int)(base - profile), profile, MD_TRASH_PREFIX,
	                       (int)getpid(), base + 1);
	if (n > 0 && (size_t)n < sizeof(trash) &&
	    (rename(profile, trash) == 0 || errno == ENOENT))
		return;
	if (md_rm_tree(profile) != 0)
		cm_warnx(
		    "managed: the ephemeral profile was not removed in full");
}

int
act_managed_standby_open(const struct cm_config *cfg, struct act_egress *egress,
    struct act_driver **out, char *err, size_t errlen)
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
	return md_new(cfg, NULL, egress, profile, true, out, err, errlen);
}

bool
act_managed_alive(const struct act_driver *d)
{
	return d != NULL && d->pipe != NULL;
}

void
act_managed_adopt(struct act_driver *d, const struct act_env *env)
{
	act_session_adopt(&d->s, env->policy);
	act_session_events(&d->s, env->page_event, env->page_event_arg);
	act_session_dialogs(&d->s, env->dialog_policy);
}

static int
md_start(struct act_driver *d, const struct act_call *call)
{
	char err[256];

	if (act_session_start(&d->s, call) != 0)
		return -1;
	/* The call may start processes (a page of another site gets a
	 * renderer of its own): they are listed again after it. */
	d->b.n_procs = 0;
	if (d->s.state == ACT_SESSION_DOWN &&
	    (d->launch_failures >= CM_BROWSER_LAUNCH_TRIES ||
	        md_launch(d, err, sizeof(err)) != 0)) {
		d->launch_failures++;
		act_session_fail(
		    &d->s, CM_E_RUNTIME_CRASHED, "the browser did not start");
	}
	return 0;
}

static int
md_pollfds(struct act_driver *d, struct pollfd *fds, int max, int64_t *wake_ms)
{
	*wake_ms = act_session_wake(&d->s, d->cdp, cm_mono_ms());
	return d->pipe != NULL ? act_pipe_pollfds(d->pipe, fds, max) : 0;
}

static enum act_state
md_step(struct act_driver *d, const struct pollfd *fds, int nfds,
    struct act_outcome *out)
{
	char err[CM_ERROR_MESSAGE_MAX + 1];
	enum act_state st;
	bool drop;

	if (d->pipe != NULL &&
	    act_pipe_step(d->pipe, fds, nfds, md_msg, d) != 0) {
		cm_warnx("managed: the browser went away");
		st = act_session_lost(&d->s, d->cdp, "the browser went away",
		         &d->launch_failures, out)
		         ? ACT_DONE
		         : ACT_PENDING;
		md_down(d, true);
		if (st == ACT_DONE)
			return st;
	}
	st = act_session_turn(&d->s, d->cdp, cm_driver_name(CM_DRIVER_MANAGED),
	    &d->launch_failures, &drop, out);
	if (drop) {
		md_down(d, true);
		/* A call that came during a reset that did not end clean
		 * gets a new browser. */
		if (act_session_busy(&d->s) &&
		    md_launch(d, err, sizeof(err)) != 0) {
			d->launch_failures++;
			act_session_fail(&d->s, CM_E_RUNTIME_CRASHED,
			    "the browser did not start");
		}
	}
	if (st == ACT_CLEAN && d->launch_failures >= CM_BROWSER_LAUNCH_TRIES)
		out->err = CM_E_RUNTIME_CRASHED;
	return st;
}

/* Lists the browser's processes, once after each call, for its kill
 * (browser.h): the close then puts them in SCHED_IDLE without walking
 * the tree first. */
static void
md_rest(struct act_driver *d)
{
	if (d->b.pid > 0 && d->b.n_procs == 0 && !act_session_busy(&d->s))
		act_browser_list(&d->b);
}

static int
md_cancel(struct act_driver *d)
{
	act_session_cancel(&d->s);
	return 0;
}

static int
md_reset(struct act_driver *d)
{
	if (d->launch_failures >= CM_BROWSER_LAUNCH_TRIES)
		return -1;
	switch (act_session_reset(&d->s)) {
	case 1:
		return 1;
	case -1:
		md_down(d, true); /* the page cannot be stopped: the next call
		                   * gets a new browser */
		return 0;
	default:
		return 0;
	}
}

static void
md_close(struct act_driver *d)
{
	char dir[CM_PATH_MAX];

	if (d == NULL)
		return;
	/* A profile that is discarded is never opened again: the close
	 * does not wait for the kernel to free the browser's memory. */
	md_down(d, !d->ephemeral);
	act_session_fini(&d->s);
	if (d->ephemeral) {
		/* The browser's tmp directory goes with the actor's sweep,
		 * after its browser is reaped. */
		md_discard(d->profile);
	} else {
		/* A kept profile stays; what Chromium keeps of it in its tmp
		 * directory (its browser is reaped) and the Space's downloads
		 * go. */
		act_browser_rm_singleton(d->profile);
		if (d->tmp[0] != '\0' && md_rm_tree(d->tmp) != 0)
			cm_warnx("managed: the browser's tmp directory was not "
			         "removed in full");
		if (d->s.downloads[0] != '\0' &&
		    md_rm_tree(d->s.downloads) != 0)
			cm_warnx("managed: the Space's downloads were not "
			         "removed in full");
		if (md_uploads_path(d, dir, sizeof(dir)) == 0 &&
		    md_rm_tree(dir) != 0)
			cm_warnx("managed: the Space's uploads were not "
			         "removed in full");
	}
	free(d);
}

/* The page is given files by path: the browser is on this host, and
 * reads them from <profile>/MD_UPLOADS, which goes with the profile (an
 * ephemeral one) or at close (a kept one). */
static int
md_upload_dir(struct act_driver *d, char *dir, size_t len)
{
	if (md_uploads_path(d, dir, len) != 0 ||
	    (mkdir(dir, 0700) != 0 && errno != EEXIST))
		return -1;
	return 0;
}

/* The Space's page, for the live view (driver.h). */
static struct act_session *
md_session(struct act_driver *d)
{
	return &d->s;
}

const struct act_driver_ops act_driver_managed = {
    .open = md_open,
    .start = md_start,
    .pollfds = md_pollfds,
    .step = md_step,
    .cancel = md_cancel,
    .reset = md_reset,
    .close = md_close,
    .session = md_session,
    .rest = md_rest,
    .upload_dir = md_upload_dir,
};
