/*
 * test_warm.c: warm standby browsers and the first start's managed
 * instances, on a real Chromium.
 *
 * An idle managed instance keeps one browser launched by a standby
 * actor; a Space created on it is served by that actor and that browser
 * (no launch in between); closing the Space discards the browser
 * and its profile, and a new standby with a new browser and a new profile
 * follows, which sees nothing of the last Space's cookies.  A standby
 * killed with -9, or its browser, is replaced.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "http_fixture.h"
#include "pages.h"

#define WARM_WAIT_MS 60000 /* a browser launch, on a loaded machine */

TestSuite(warm, .timeout = 300);

static const char *const warm_flags[] = {"--warm-standby=true", NULL};

/* A standby (its actor, its browser, the browser's profile) of an
 * instance, as found in /proc. */
struct standby {
	pid_t actor, browser;
	char profile[600];
};

struct standby_wait {
	struct hf_env *e;
	const char *inst;
	pid_t not_actor, not_browser; /* what must have gone */
	struct standby found;
};

static bool
standby_runs(void *arg)
{
	struct standby_wait *w = arg;
	char want[128];

	memset(&w->found, 0, sizeof(w->found));
	snprintf(want, sizeof(want), " --standby=%s", w->inst);
	if ((w->found.actor = tk_child_with(w->e->sf.p.pid, want, NULL, 0)) ==
	        0 ||
	    w->found.actor == w->not_actor)
		return false;
	w->found.browser = tk_child_with(w->found.actor,
	    " --user-data-dir=", w->found.profile, sizeof(w->found.profile));
	return w->found.browser > 0 && w->found.browser != w->not_browser;
}

/* Waits for a standby of inst other than not_actor, whose browser is not
 * not_browser, and returns it. */
static struct standby
wait_standby(
    struct hf_env *e, const char *inst, pid_t not_actor, pid_t not_browser)
{
	struct standby_wait w = {e, inst, not_actor, not_browser, {0}};

	cr_assert(tk_wait_until(standby_runs, &w, WARM_WAIT_MS),
	    "no standby with a browser for instance %s", inst);
	return w.found;
}

/* The pid of the Space's actor, as the supervisor's sup.status says. */
static pid_t
supervised_actor(struct hf_env *e, const char *space)
{
	char url[300];
	nng_socket ctl;
	struct pr_req q;
	struct pr_rep r;
	pid_t pid = 0;

	cm_ipc_url(url, sizeof(url), e->sf.p.run_dir, "supervisor.ipc");
	cr_assert_eq(cm_rpc_open(&ctl, url), 0);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SUP_STATUS;
	cr_assert_eq(cm_rpc_call(ctl, &q, &r, 5000), CM_OK);
	for (size_t i = 0; i < r.n_children; i++)
		if (r.children[i].space_id != NULL &&
		    strcmp(r.children[i].space_id, space) == 0)
			pid = (pid_t)r.children[i].pid;
	pr_rep_free(&r);
	nng_close(ctl);
	return pid;
}

/* Runs cap with args to its end and checks that it completed; returns
 * the task's data. */
static json_t *
run_ok(struct hf_env *e, const char *space, const char *rid, const char *cap,
    const char *args)
{
	char task[CM_ID_MAX + 1];
	struct hf_task_wait w = {e, space, task, "completed", ""};
	json_t *t;

	cr_assert_eq(
	    hf_submit(e, e->manager, space, "", rid, cap, args, NULL, task),
	    202, "%s: submit refused", cap);
	tk_wait_until(hf_task_settled, &w, WARM_WAIT_MS);
	t = hf_task(e, space, task);
	cr_assert_str_eq(w.seen, "completed", "%s: %s (%s)", cap, w.seen,
	    sf_str(json_object_get(t, "error"), "message"));
	return t;
}

/* Navigates to path of the page server and returns the text of its
 * cookie line (the /cookie page's #c). */
static char *
visit(struct hf_env *e, const char *space, const char *rid, int port,
    const char *path)
{
	char args[256], rid2[80];
	json_t *t;
	char *h1;

	snprintf(args, sizeof(args), "{\"url\": \"http://127.0.0.1:%d%s\"}",
	    port, path);
	json_decref(run_ok(e, space, rid, "navigate", args));
	snprintf(rid2, sizeof(rid2), "%s-h1", rid);
	t = run_ok(e, space, rid2, "extract_text", "{\"selector\": \"#c\"}");
	h1 = strdup(sf_str(json_object_get(t, "result"), "text"));
	json_decref(t);
	return h1;
}

static void
create_space(struct hf_env *e, const char *inst, char *space)
{
	cr_assert_eq(
	    hf_create(e, e->manager, inst, "operator", e->sf.w.operator_id,
	        "[\"navigate\", \"snapshot\", \"extract_text\"]", space),
	    201);
}

static void
close_space(struct hf_env *e, const char *space)
{
	cr_assert(
	    hf_post(e, e->manager, space, "close", NULL, NULL) / 100 == 2);
	cr_assert(hf_wait_space(e, space, "closed"), "the Space never closed");
}

static bool
pid_gone(void *arg)
{
	return sf_pid_gone(*(pid_t *)arg);
}

static bool
path_gone(const char *path)
{
	struct stat st;

	return stat(path, &st) != 0 && errno == ENOENT;
}

Test(warm, test_9_a_space_takes_the_standby_browser, .fini = tk_cleanup)
{
	static struct hf_env e;
	char inst[CM_ID_MAX + 1], space[CM_ID_MAX + 1], space2[CM_ID_MAX + 1];
	struct standby sb, next;
	struct tk_pages *pages;
	json_t *t;
	char *h1;
	int port;

	cr_assert_not_null(pages = tk_pages_start(&port));
	hf_start(&e, "warm", 0, warm_flags);
	hf_managed_instance(&e, "chromium-warm", inst);

	/* The idle instance gets a standby, and its browser runs. */
	sb = wait_standby(&e, inst, 0, 0);
	cr_assert_not_null(strstr(sb.profile, "/profiles/standby-"),
	    "the standby's profile %s is not a standby profile", sb.profile);

	/* A Space on it: the standby actor is its actor, and the browser
	 * that ran before the create serves its first task. */
	create_space(&e, inst, space);
	t = run_ok(&e, space, "snap-0", "snapshot", "{}");
	json_decref(t);
	cr_assert_eq(supervised_actor(&e, space), sb.actor,
	    "the Space's actor is not the standby");
	cr_assert_eq(tk_child_with(sb.actor, " --user-data-dir=", NULL, 0),
	    sb.browser, "the Space is served by a browser launched after");
	cr_assert_not(sf_pid_gone(sb.browser));

	/* The Space sets a cookie, and sees it. */
	h1 = visit(&e, space, "mark", port, "/cookie?set=mark");
	cr_assert_str_eq(h1, "cookies: none.");
	free(h1);
	h1 = visit(&e, space, "show", port, "/cookie");
	cr_assert_str_eq(h1, "cookies: mark=1.", "the cookie was not kept");
	free(h1);
	cr_assert_eq(tk_child_with(sb.actor, " --user-data-dir=", NULL, 0),
	    sb.browser, "a second browser served the Space");

	/* Close: that browser and its profile go; a new standby comes,
	 * with a new browser and a new profile. */
	close_space(&e, space);
	cr_assert(tk_wait_until(pid_gone, &sb.browser, 20000),
	    "the Space's browser outlived it");
	cr_assert(path_gone(sb.profile), "the profile outlived its Space");
	next = wait_standby(&e, inst, sb.actor, sb.browser);
	cr_assert_neq(next.browser, sb.browser);
	cr_assert_str_neq(next.profile, sb.profile);

	/* The next Space sees nothing of the last one's cookies. */
	create_space(&e, inst, space2);
	h1 = visit(&e, space2, "show-2", port, "/cookie");
	cr_assert_str_eq(
	    h1, "cookies: none.", "a cookie crossed from one Space");
	free(h1);
	cr_assert_eq(supervised_actor(&e, space2), next.actor);
	cr_assert_eq(tk_child_with(next.actor, " --user-data-dir=", NULL, 0),
	    next.browser);
	close_space(&e, space2);
	cr_assert(tk_wait_until(pid_gone, &next.browser, 20000));
	cr_assert(path_gone(next.profile));

	hf_stop(&e);
	tk_pages_stop(pages);
}

Test(warm, a_killed_standby_or_its_browser_is_replaced, .fini = tk_cleanup)
{
	static struct hf_env e;
	char inst[CM_ID_MAX + 1];
	struct standby sb, next, last;

	hf_start(&e, "warm-kill", 0, warm_flags);
	hf_managed_instance(&e, "chromium-warm-kill", inst);

	/* kill -9 of the standby actor: its browser goes with it, and a
	 * new standby comes with a browser of its own. */
	sb = wait_standby(&e, inst, 0, 0);
	cr_assert_eq(kill(sb.actor, SIGKILL), 0);
	cr_assert(tk_wait_until(pid_gone, &sb.browser, 20000),
	    "the killed standby's browser outlived it");
	next = wait_standby(&e, inst, sb.actor, sb.browser);
	/* The new standby removed the dead one's profile as it started. */
	cr_assert(path_gone(sb.profile), "a killed standby's profile stayed");

	/* kill -9 of the standby's browser: a browser is launched again. */
	cr_assert_eq(kill(next.browser, SIGKILL), 0);
	last = wait_standby(&e, inst, 0, next.browser);
	cr_assert_neq(last.browser, next.browser);
	cr_assert_str_neq(last.profile, next.profile);
	/* The profiles of the standbys that died are gone. */
	cr_assert(path_gone(next.profile), "a dead standby's profile stayed");

	hf_stop(&e);
}

/* True while a standby of the instance runs (its actor, browser or not). */
static bool
has_standby(struct hf_env *e, const char *inst)
{
	char want[128];

	snprintf(want, sizeof(want), " --standby=%s", inst);
	return tk_child_with(e->sf.p.pid, want, NULL, 0) != 0;
}

Test(warm, only_an_idle_ephemeral_managed_instance_gets_one, .fini = tk_cleanup)
{
	static struct hf_env e;
	char inst[CM_ID_MAX + 1], kept[CM_ID_MAX + 1], body[1024];

	/* One fake instance (hf_start), one managed with a profile path of
	 * its own, and last one that wants a standby. */
	hf_start(&e, "warm-which", 1, warm_flags);
	snprintf(body, sizeof(body),
	    "{\"name\": \"chromium-kept\", \"driver\": \"managed\", "
	    "\"bundle_id\": \"%s\", \"profile_mode\": \"persistent\", "
	    "\"profile\": \"%s/kept\"}",
	    e.sf.w.bundle_id, e.sf.dir);
	af_create(&e.af, "/api/v1/admin/browser-instances", body,
	    "browser_instance_id", kept);
	hf_managed_instance(&e, "chromium-which", inst);

	/* The walk of the instances that started the last one's standby
	 * came after the other two were registered, and started none. */
	wait_standby(&e, inst, 0, 0);
	cr_assert_not(has_standby(&e, kept),
	    "an instance with a profile path got a standby");
	cr_assert_not(has_standby(&e, e.sf.w.instance_id[0]),
	    "a fake instance got a standby");
	hf_stop(&e);
}

static bool
logged_registered(void *arg)
{
	char *log = tk_read_file(arg, NULL);
	bool found =
	    log != NULL && strstr(log, "3 managed browser instances") != NULL;

	free(log);
	return found;
}

/* The managed instances bound to the workspace named default. */
static size_t
managed_in_default(nng_socket s)
{
	char ws[CM_ID_MAX + 1] = "";
	struct pr_req q;
	struct pr_rep r;
	size_t managed = 0;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_WORKSPACE_LIST;
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	for (size_t i = 0; i < r.n_workspaces; i++)
		if (strcmp(r.workspaces[i].name, "default") == 0)
			snprintf(
			    ws, sizeof(ws), "%s", r.workspaces[i].workspace_id);
	pr_rep_free(&r);
	cr_assert_neq(ws[0], '\0', "no workspace default");

	/* Bound to default: instance.list of the workspace names them. */
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_INSTANCE_LIST;
	q.workspace_id = ws;
	cr_assert_eq(tk_call(s, &q, &r), CM_OK);
	for (size_t i = 0; i < r.n_instances; i++)
		if (strcmp(r.instances[i].driver, "managed") == 0 &&
		    strcmp(r.instances[i].profile_mode, "ephemeral") == 0)
			managed++;
	pr_rep_free(&r);
	return managed;
}

Test(warm, the_first_start_registers_managed_instances, .fini = tk_cleanup)
{
	static const char *const flags[] = {"--managed-browsers=3", NULL};
	static const char *const more[] = {"--managed-browsers=5", NULL};
	static struct hf_env e;
	size_t managed;

	cr_assert_eq(access("/usr/bin/chromium", X_OK), 0, "no chromium");
	hf_start(&e, "warm-first", 0, flags);
	managed = managed_in_default(e.sf.s);
	cr_assert_eq(
	    managed, 3, "%zu managed instances bound to default", managed);
	cr_assert(tk_wait_until(logged_registered, e.sf.out, 20000),
	    "the start did not log how many it registered");

	/* Only a new data dir gets them: a later start asking for more
	 * registers none. */
	tk_proc_stop(&e.sf.p, SIGTERM);
	cr_assert_eq(
	    tk_spaced_start_logged(&e.sf.p, e.sf.dir, more, e.sf.out), 0);
	cr_assert(tk_http_ready(&e.sf.p, 20000));
	managed = managed_in_default(e.sf.s);
	cr_assert_eq(
	    managed, 3, "%zu managed instances after a restart", managed);
	hf_stop(&e);
}
