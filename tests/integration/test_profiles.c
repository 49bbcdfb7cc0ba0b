/*
 * test_profiles.c: where a managed instance's browser keeps its profile,
 * on a real Chromium through the API, and what is left of it when spaced
 * stops.
 *
 * The admin says what the profile is with profile_mode: a relative
 * profile path is refused (it would land in whatever the service's
 * working directory is), and so is a path for an ephemeral instance; a
 * persistent instance without a path keeps its profile under
 * <data_dir>/profiles, from one of its Spaces to the next.  spaced runs in
 * a working directory of the test's own, which stays empty.
 *
 * SIGTERM to spaced with a managed Space open (its actor idle, running a
 * task, or on a warm standby's browser), the host kept busy at the lowest
 * priority: each actor tears its browser down itself, so the supervisor
 * never has to kill one ("ignored SIGTERM" in its log), no process of the
 * browser is left, and the Space's ephemeral profile is gone.  Durations
 * are never asserted.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "http_fixture.h"
#include "pages.h"

#define PROF_WAIT_MS 60000  /* a browser task, on a loaded machine */
#define PROF_PS_MAX 4096    /* processes read from /proc at once */
#define PROF_GROUP_MAX 64   /* processes of one browser looked at */
#define PROF_BUSY_PER_CPU 4 /* spinning children that keep a CPU busy */
#define PROF_BUSY_MAX 16    /* and at most these in all */

TestSuite(profiles, .timeout = 300);

/* The network policy of every instance here: the test's pages only. */
#define PROF_POLICY                                               \
	"\"network_policy\": {\"allow_hosts\": [\"127.0.0.1\"], " \
	"\"deny_private_networks\": false}"

/* True when directory dir holds nothing (or is gone). */
static bool
dir_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool empty = true;

	while (d != NULL && empty && (de = readdir(d)) != NULL)
		empty = strcmp(de->d_name, ".") == 0 ||
		        strcmp(de->d_name, "..") == 0;
	if (d != NULL)
		closedir(d);
	return empty;
}

static bool
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* POSTs a managed instance name of the browser bundle, with the members
 * more (JSON text, "" for none) besides; the status, *res the answer. */
static int
register_instance(struct hf_env *e, const char *bundle, const char *name,
    const char *more, json_t **res)
{
	char body[2048];

	snprintf(body, sizeof(body),
	    "{\"name\": \"%s\", \"driver\": \"managed\", \"bundle_id\": "
	    "\"%s\", " PROF_POLICY "%s%s}",
	    name, bundle, more[0] != '\0' ? ", " : "", more);
	return hf_call(e, "POST", "/api/v1/admin/browser-instances",
	    e->af.admin, body, res);
}

/* The registration is 422 invalid_request, its message holds why (NULL:
 * anything), and it quotes nothing of secret. */
static void
expect_refused(struct hf_env *e, const char *bundle, const char *name,
    const char *more, const char *why, const char *secret)
{
	json_t *res = NULL;
	const char *msg;
	int status = register_instance(e, bundle, name, more, &res);

	cr_assert_eq(status, 422, "%s: answered %d", name, status);
	cr_assert_str_eq(af_error_code(res), "invalid_request", "%s", name);
	msg = json_string_value(
	    json_object_get(json_object_get(res, "error"), "message"));
	cr_assert_not_null(msg, "%s: no message", name);
	if (why != NULL)
		cr_assert_not_null(strstr(msg, why), "%s: %s", name, msg);
	if (secret != NULL)
		cr_assert_null(strstr(msg, secret), "%s: %s", name, msg);
	json_decref(res);
}

/* Navigates space to the test's page and waits for the task to end
 * completed: the Space's browser runs. */
static void
navigate(struct hf_env *e, const char *space, const char *rid, int port)
{
	char args[128], task[CM_ID_MAX + 1];
	json_t *t;

	snprintf(
	    args, sizeof(args), "{\"url\": \"http://127.0.0.1:%d/\"}", port);
	cr_assert_eq(hf_submit(e, e->manager, space, "", rid, "navigate", args,
	                 NULL, task),
	    202);
	if (!hf_wait_task_for(e, space, task, "completed", PROF_WAIT_MS)) {
		t = hf_task(e, space, task);
		cr_assert_fail("%s: %s", rid,
		    sf_str(json_object_get(t, "error"), "message"));
	}
}

/* The actor of space on inst: started for the Space, or the warm
 * standby of inst that took it (its command line names the instance). */
static pid_t
actor_of(struct hf_env *e, const char *inst, const char *space)
{
	pid_t actor = sf_actor_pid(&e->sf, space);

	return actor > 0 ? actor : tk_child_with(e->sf.p.pid, inst, NULL, 0);
}

/* Creates a Space on inst for the workspace's manager, into space, and
 * finds its browser: its pid, and its profile (--user-data-dir) into
 * profile. */
static pid_t
space_with_browser(struct hf_env *e, const char *inst, const char *rid,
    int port, char *space, char *profile, size_t profile_len)
{
	pid_t actor, browser;

	cr_assert_eq(
	    hf_create(e, e->manager, inst, "operator", e->sf.w.operator_id,
	        "[\"navigate\", \"wait_for\"]", space),
	    201);
	navigate(e, space, rid, port);
	cr_assert_gt(actor = actor_of(e, inst, space), 0, "no actor");
	browser =
	    tk_child_with(actor, "--user-data-dir=", profile, profile_len);
	cr_assert_gt(browser, 0, "no browser of the actor found");
	return browser;
}

static void
close_space(struct hf_env *e, const char *space)
{
	cr_assert(
	    hf_post(e, e->manager, space, "close", NULL, NULL) / 100 == 2);
	cr_assert(hf_wait_space(e, space, "closed"), "the Space never closed");
}

Test(profiles, a_profile_is_where_its_mode_says, .fini = tk_cleanup)
{
	static struct hf_env e;
	static char cwd[64];
	char bundle[CM_ID_MAX + 1], inst[CM_ID_MAX + 1], space[CM_ID_MAX + 1];
	char own[600], used[700], part[32], more[256];
	struct tk_pages *pages;
	json_t *res = NULL;
	int port;

	cr_assert_not_null(pages = tk_pages_start(&port));
	tk_tmpdir(cwd, sizeof(cwd), "prof-cwd");
	cr_assert_eq(chdir(cwd), 0);
	hf_start(&e, "prof", 0, NULL);
	e.record = true;
	hf_browser_bundle(&e, bundle);

	/* A relative path: refused, saying it must be absolute, and the
	 * path (a secret) quoted nowhere. */
	expect_refused(&e, bundle, "relative",
	    "\"profile_mode\": \"persistent\", \"profile\": \"kept-c4n4ry\"",
	    "absolute", "kept-c4n4ry");
	/* A mode's name given as the path, with no mode. */
	expect_refused(
	    &e, bundle, "named", "\"profile\": \"ephemeral\"", NULL, NULL);
	/* A path for an ephemeral instance means nothing. */
	snprintf(more, sizeof(more),
	    "\"profile_mode\": \"ephemeral\", \"profile\": \"%s/c4n4ry\"", cwd);
	expect_refused(&e, bundle, "ephemeral-path", more, NULL, "c4n4ry");
	expect_refused(
	    &e, bundle, "no-mode", "\"profile_mode\": \"kept\"", NULL, NULL);

	/* Persistent, no path: the instance's own directory under
	 * <data_dir>/profiles, the same for each of its Spaces, kept when
	 * one closes. */
	cr_assert_eq(register_instance(&e, bundle, "chromium-kept",
	                 "\"profile_mode\": \"persistent\"", &res),
	    201);
	cr_assert_str_eq(af_data_str(res, "profile_mode"), "persistent");
	cr_assert_null(json_object_get(af_data(res), "profile"));
	snprintf(
	    inst, sizeof(inst), "%s", af_data_str(res, "browser_instance_id"));
	json_decref(res);
	hf_bind(&e, inst);
	snprintf(own, sizeof(own), "%s/profiles/instance-%s", e.sf.dir, inst);
	for (int round = 0; round < 2; round++) {
		snprintf(part, sizeof(part), "nav-%d", round);
		space_with_browser(
		    &e, inst, part, port, space, used, sizeof(used));
		cr_assert_str_eq(used, own, "the Space's profile");
		close_space(&e, space);
		cr_assert(is_dir(own), "the profile did not outlive its Space");
		snprintf(used, sizeof(used), "%s/Default", own);
		cr_assert(is_dir(used), "the kept profile holds no profile");
		cr_assert_not(tk_dir_holds(own, space));
		cr_assert(dir_empty(cwd), "spaced wrote into its working "
		                          "directory");
	}

	/* Nothing any answer gave names a profile. */
	cr_assert_not(hf_contains(e.seen, e.seen_len, "profiles/"));
	cr_assert_not(hf_contains(e.seen, e.seen_len, "user-data-dir"));
	hf_stop(&e);
	cr_assert(dir_empty(cwd), "spaced wrote into its working directory");
	tk_rmrf(cwd);
	tk_pages_stop(pages);
}

/* The processes of process group pgrp that /proc shows now, into pids;
 * returns the count. */
static int
group_of(pid_t pgrp, pid_t *pids, int max)
{
	static struct tk_ps ps[PROF_PS_MAX];
	int n = tk_ps_read(ps, PROF_PS_MAX), found = 0;

	for (int i = 0; i < n && found < max; i++)
		if (ps[i].pgrp == pgrp)
			pids[found++] = ps[i].pid;
	return found;
}

/* Every process of pids[0..n) has ended (tk_pid_ended). */
static void
expect_ended(const pid_t *pids, int n)
{
	for (int i = 0; i < n; i++)
		cr_assert(tk_pid_ended(pids[i]),
		    "process %d of the browser outlived spaced", (int)pids[i]);
}

struct standby_of {
	struct hf_env *e;
	const char *inst;
};

/* True once a warm standby of the instance has its browser up. */
static bool
standby_up(void *arg)
{
	struct standby_of *w = arg;
	char want[128];
	pid_t actor;

	snprintf(want, sizeof(want), " --standby=%s", w->inst);
	actor = tk_child_with(w->e->sf.p.pid, want, NULL, 0);
	return actor > 0 &&
	       tk_child_with(actor, " --user-data-dir=", NULL, 0) > 0;
}

/*
 * Keeps the host busy while spaced stops, as a host shared with other
 * work is: PROF_BUSY_PER_CPU spinning children per CPU (at most
 * PROF_BUSY_MAX), at the lowest priority, so that anything else comes
 * first, each gone with the test.  On such a host a killed browser in
 * SCHED_IDLE took most of a second to be reaped, and an actor that
 * waited for it outlived its bound.  Returns how many started; busy_stop
 * ends them.
 */
static int
busy_start(pid_t *pids)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int n = 0;

	while (n < PROF_BUSY_MAX && n < PROF_BUSY_PER_CPU * cpus) {
		pid_t pid = fork();

		cr_assert_geq(pid, 0, "fork");
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			(void)setpriority(PRIO_PROCESS, 0, 19);
			for (volatile unsigned long spin = 0;; spin++)
				;
		}
		pids[n++] = pid;
	}
	return n;
}

static void
busy_stop(const pid_t *pids, int n)
{
	for (int i = 0; i < n; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
}

/* How the Space is when spaced is told to stop. */
enum stop_case {
	STOP_IDLE, /* its actor idle, its claim held by the store */
	STOP_BUSY, /* a task running that waits for ever */
	STOP_WARM, /* idle, on the browser a warm standby had launched */
};

/*
 * spaced with a Space of an ephemeral managed instance open, its browser
 * up, then SIGTERM to spaced, the host kept busy.  Once spaced has
 * exited: no "ignored SIGTERM" in its log (no child had to be killed),
 * every process of the browser's group has ended (those seen before, and
 * any since), and the profile is gone, under its name and as a discarded
 * one.
 */
static void
stop_with_a_space_open(const char *tag, enum stop_case how)
{
	static struct hf_env e;
	static const char *const warm[] = {"--warm-standby=true", NULL};
	char inst[CM_ID_MAX + 1], space[CM_ID_MAX + 1], task[CM_ID_MAX + 1];
	char profile[600], profiles[600], *log;
	pid_t browser, group[PROF_GROUP_MAX], busy[PROF_BUSY_MAX];
	struct standby_of w = {&e, inst};
	struct tk_pages *pages;
	int port, n, n_busy, status;

	cr_assert_not_null(pages = tk_pages_start(&port));
	hf_start(&e, tag, 0, how == STOP_WARM ? warm : NULL);
	hf_managed_instance(&e, "chromium-stop", inst);
	if (how == STOP_WARM)
		cr_assert(tk_wait_until(standby_up, &w, PROF_WAIT_MS),
		    "no standby with a browser for the instance");
	browser = space_with_browser(
	    &e, inst, "nav-1", port, space, profile, sizeof(profile));
	if (how == STOP_WARM)
		cr_assert_not_null(strstr(profile, "/standby-"),
		    "the Space did not take the standby's browser");
	snprintf(profiles, sizeof(profiles), "%s/profiles", e.sf.dir);
	cr_assert_eq(
	    strncmp(profile, profiles, strlen(profiles)), 0, "%s", profile);
	cr_assert(is_dir(profile), "no profile at %s", profile);
	if (how == STOP_BUSY) {
		cr_assert_eq(hf_submit(&e, e.manager, space, "", "wait-forever",
		                 "wait_for",
		                 "{\"text\": \"never on the page\", "
		                 "\"timeout_ms\": 60000}",
		                 NULL, task),
		    202);
		cr_assert(
		    hf_wait_task_for(&e, space, task, "running", PROF_WAIT_MS),
		    "the wait never ran");
	}
	n = group_of(browser, group, PROF_GROUP_MAX);
	cr_assert_gt(n, 1, "the browser's group has no other process");

	nng_close(e.sf.s);
	n_busy = busy_start(busy);
	cr_assert_eq(kill(e.sf.p.pid, SIGTERM), 0);
	cr_assert_eq(tk_proc_wait(&e.sf.p, 20000, &status), 0,
	    "spaced did not exit after SIGTERM");
	busy_stop(busy, n_busy);

	cr_assert_not_null(log = tk_read_file(e.sf.out, NULL));
	cr_assert_null(strstr(log, "ignored SIGTERM"),
	    "the supervisor had to kill a child:\n%s", log);
	free(log);
	expect_ended(group, n);
	expect_ended(group, group_of(browser, group, PROF_GROUP_MAX));
	cr_assert_not(is_dir(profile), "the profile outlived spaced");
	cr_assert_not(tk_dir_holds(profiles, strrchr(profile, '/') + 1),
	    "the discarded profile outlived spaced");

	tk_rmrf(e.sf.dir);
	tk_pages_stop(pages);
}

Test(profiles, sigterm_with_an_idle_managed_space_leaves_nothing,
    .fini = tk_cleanup)
{
	stop_with_a_space_open("prof-idle", STOP_IDLE);
}

Test(profiles, sigterm_with_a_busy_managed_space_leaves_nothing,
    .fini = tk_cleanup)
{
	stop_with_a_space_open("prof-busy", STOP_BUSY);
}

Test(profiles, sigterm_with_a_warm_managed_space_leaves_nothing,
    .fini = tk_cleanup)
{
	stop_with_a_space_open("prof-warm", STOP_WARM);
}
