/*
 * test_e2e_browser.c: a real browser end to end through the API, on a real
 * Chromium.  The admin registers a managed instance on the browser bundle
 * and binds it; the workspace's manager creates a Space, navigates to a
 * page served by the test on 127.0.0.1, snapshots it, clicks a link and
 * types into a field by ref, takes screenshots (png, jpeg, the whole page)
 * and reads them through the API, and closes the Space.  Afterwards the
 * Space's profile directory is gone (and the directory Chromium keeps its
 * single-instance socket in), no browser of it runs, and nothing the API
 * returned names the profile.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clock.h"
#include "http_fixture.h"
#include "pages.h"

#define E2E_WAIT_MS 60000 /* a browser task, on a loaded machine */

TestSuite(e2e_browser, .timeout = 300);

struct settle {
	struct hf_env *e;
	const char *space, *task;
};

static bool
settled(void *arg)
{
	struct settle *w = arg;
	json_t *t = hf_task(w->e, w->space, w->task);
	bool done = hf_terminal(sf_str(t, "status"));

	json_decref(t);
	return done;
}

/* Submits cap with args; the task's id goes to task. */
static void
submit(struct hf_env *e, const char *space, const char *rid, const char *cap,
    const char *args, char *task)
{
	int status =
	    hf_submit(e, e->manager, space, "", rid, cap, args, NULL, task);

	cr_assert_eq(status, 202, "%s: submit answered %d", cap, status);
}

/* Waits for task to end; returns its data. */
static json_t *
await_task(struct hf_env *e, const char *space, const char *task)
{
	struct settle w = {e, space, task};

	cr_assert(
	    tk_wait_until(settled, &w, E2E_WAIT_MS), "%s did not end", task);
	return hf_task(e, space, task);
}

/* Submits cap with args and waits for it to end; returns its data. */
static json_t *
run_task(struct hf_env *e, const char *space, const char *rid, const char *cap,
    const char *args)
{
	char task[CM_ID_MAX + 1];

	submit(e, space, rid, cap, args, task);
	return await_task(e, space, task);
}

static const char *
result_str(json_t *task, const char *key)
{
	return sf_str(json_object_get(task, "result"), key);
}

static void
expect_completed(json_t *task, const char *cap)
{
	cr_assert_str_eq(sf_str(task, "status"), "completed", "%s: %s (%s)",
	    cap, sf_str(task, "status"),
	    sf_str(json_object_get(task, "error"), "message"));
}

/* The ref on the outline's line that holds what. */
static void
ref_of(const char *outline, const char *what, char *ref, size_t len)
{
	const char *line = strstr(outline, what), *r;

	cr_assert_not_null(line, "no \"%s\" in:\n%s", what, outline);
	r = strstr(line, "[ref=");
	cr_assert(r != NULL && (size_t)(r - line) < strcspn(line, "\n"),
	    "no ref on \"%s\"", what);
	snprintf(ref, len, "%.*s", (int)strcspn(r + 5, "]"), r + 5);
}

static bool
no_browser_of(void *arg)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd),
	    "pgrep -f -- '--user-data-dir=%s( |$)' >/dev/null", (char *)arg);
	return system(cmd) != 0;
}

static unsigned
be16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* The width and height an image's own header gives: IHDR of a PNG, the
 * start-of-frame segment of a JPEG.  False when it is neither. */
static bool
image_size(const unsigned char *b, size_t n, const char *mime, unsigned *w,
    unsigned *h)
{
	static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n',
	    0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};

	if (strcmp(mime, "image/png") == 0) {
		if (n < 24 || memcmp(b, png, sizeof(png)) != 0)
			return false;
		*w = be16(b + 18) | (unsigned)be16(b + 16) << 16;
		*h = be16(b + 22) | (unsigned)be16(b + 20) << 16;
		return true;
	}
	if (n < 4 || b[0] != 0xff || b[1] != 0xd8)
		return false;
	/* Segments after SOI: marker, length; SOFn holds the size. */
	for (size_t i = 2; i + 9 < n && b[i] == 0xff;
	     i += 2 + be16(b + i + 2)) {
		unsigned char m = b[i + 1];

		if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 &&
		    m != 0xcc) {
			*h = be16(b + i + 5);
			*w = be16(b + i + 7);
			return true;
		}
	}
	return false;
}

/*
 * Takes a screenshot with args, fetches its artifact through the API and
 * checks it: the result names it and holds no image, and the image's own
 * header has the size the result gives.  Returns the task (caller
 * decrefs); *w and *h get the size.
 */
static json_t *
screenshot(struct hf_env *e, const char *space, const char *rid,
    const char *args, const char *mime, unsigned *w, unsigned *h)
{
	json_t *t = run_task(e, space, rid, "screenshot", args);
	json_t *r = json_object_get(t, "result");
	char path[1024], *body = NULL, *head = NULL;
	size_t len = 0;

	expect_completed(t, "screenshot");
	cr_assert_str_eq(sf_str(r, "mime"), mime);
	/* Its five members and the page's header: no image. */
	cr_assert_eq(json_object_size(r), 6, "the result holds no image");
	cr_assert(json_is_object(json_object_get(r, "page")));
	snprintf(path, sizeof(path),
	    "/api/v1/workspaces/%.64s/browser-spaces/%.64s/tasks/%.64s"
	    "/artifacts/%.64s",
	    hf_ws(e), space, sf_str(t, "task_id"), sf_str(r, "artifact"));
	cr_assert_eq(
	    tk_http_bytes(&e->sf.p, path, e->manager, &body, &len, &head), 200,
	    "GET %s", path);
	cr_assert(hf_contains(head, strlen(head), mime), "%s", head);
	cr_assert_eq(
	    len, (size_t)json_integer_value(json_object_get(r, "bytes")));
	cr_assert(image_size((unsigned char *)body, len, mime, w, h),
	    "the artifact is not a %s", mime);
	cr_assert_eq(*w, json_integer_value(json_object_get(r, "width")));
	cr_assert_eq(*h, json_integer_value(json_object_get(r, "height")));
	free(body);
	free(head);
	return t;
}

/* The capabilities a Space of these tests is granted. */
#define E2E_GRANTS                                                         \
	"[\"navigate\", \"snapshot\", \"click\", \"type\", \"wait_for\", " \
	"\"extract_text\", \"back\", \"screenshot\"]"

/* The data dir of the test under way, for no_trace_of. */
static const char *e2e_dir;

/* True when no entry of the profiles directory names the Space arg. */
static bool
no_trace_of(void *arg)
{
	char dir[600];

	snprintf(dir, sizeof(dir), "%s/profiles", e2e_dir);
	return !tk_dir_holds(dir, arg);
}

static bool
path_gone(void *arg)
{
	struct stat st;

	return lstat(arg, &st) != 0;
}

/* The directory Chromium keeps the profile's single-instance socket in,
 * outside the profile (under $TMPDIR): the target of its SingletonSocket
 * link, without the socket's own name. */
static void
singleton_dir(const char *profile, char *out, size_t len)
{
	char link[700];
	char *slash;
	ssize_t n;

	snprintf(link, sizeof(link), "%s/SingletonSocket", profile);
	n = readlink(link, out, len - 1);
	cr_assert_gt(n, 0, "the profile has no SingletonSocket link");
	out[n] = '\0';
	cr_assert_not_null(slash = strrchr(out, '/'), "%s", out);
	*slash = '\0';
	cr_assert_not(path_gone(out), "no directory at %s", out);
}

/* Every variable of process pid's environment that names where it
 * writes its own files (TMPDIR, HOME) lies under dir, and none of the
 * XDG_*_HOME ones, which would point elsewhere, is set. */
static void
browser_env_inside(pid_t pid, const char *dir)
{
	char path[64], *env;
	size_t len;
	int seen = 0;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	cr_assert_not_null(env = tk_read_file(path, &len), "%s", path);
	for (size_t i = 0; i < len; i += strlen(env + i) + 1) {
		const char *e = env + i;

		cr_assert_neq(
		    strncmp(e, "XDG_", 4) == 0 && strstr(e, "_HOME=") != NULL,
		    true, "the browser has %s", e);
		if (strncmp(e, "TMPDIR=", 7) == 0 ||
		    strncmp(e, "HOME=", 5) == 0) {
			cr_assert_eq(
			    strncmp(strchr(e, '=') + 1, dir, strlen(dir)), 0,
			    "the browser has %s, outside %s", e, dir);
			seen++;
		}
	}
	cr_assert_eq(seen, 2, "the browser has no TMPDIR or HOME of its own");
	free(env);
}

/* Creates a Space on instance inst for the workspace's manager; its id
 * goes to space, its profile's path to profile. */
static void
space_on(struct hf_env *e, const char *inst, char *space, char *profile,
    size_t profile_len)
{
	cr_assert_eq(hf_create(e, e->manager, inst, "operator",
	                 e->sf.w.operator_id, E2E_GRANTS, space),
	    201);
	snprintf(profile, profile_len, "%s/profiles/%s", e->sf.dir, space);
	e2e_dir = e->sf.dir;
}

/* Starts spaced with one managed instance and a Space on it. */
static void
managed_space(struct hf_env *e, const char *tag, char *space, char *profile,
    size_t profile_len)
{
	char inst[CM_ID_MAX + 1];

	hf_start(e, tag, 0, NULL);
	e->record = true;
	hf_managed_instance(e, "chromium-e2e", inst);
	space_on(e, inst, space, profile, profile_len);
}

static bool proc_stat(pid_t pid, long *ppid, long *pgrp, char *state);
static pid_t browser_of(pid_t actor, const char *profile);

#define E2E_GROUP_MAX 64 /* processes of one browser looked at */

/* The processes of process group pgrp, into pids; returns the count. */
static int
group_pids(pid_t pgrp, pid_t *pids, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	while (d != NULL && (de = readdir(d)) != NULL && n < max) {
		pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);
		long ppid, grp;
		char st;

		if (pid > 0 && proc_stat(pid, &ppid, &grp, &st) && grp == pgrp)
			pids[n++] = pid;
	}
	if (d != NULL)
		closedir(d);
	return n;
}

Test(e2e_browser, acceptance_14_a_real_browser_through_the_api,
    .fini = tk_cleanup)
{
	static struct hf_env e;
	char space[CM_ID_MAX + 1], args[256], ref[32], profile[600];
	char singleton[600], tmp_dir[600];
	pid_t browser, group[E2E_GROUP_MAX];
	struct tk_pages *pages;
	json_t *t;
	struct stat st;
	unsigned w, h;
	int port, n_group;

	cr_assert_not_null(pages = tk_pages_start(&port));
	managed_space(&e, "e2e", space, profile, sizeof(profile));

	/* Navigate to the test page. */
	snprintf(
	    args, sizeof(args), "{\"url\": \"http://127.0.0.1:%d/\"}", port);
	t = run_task(&e, space, "nav-1", "navigate", args);
	expect_completed(t, "navigate");
	cr_assert_str_eq(result_str(t, "title"), "Home");
	cr_assert_eq(json_integer_value(json_object_get(
	                 json_object_get(t, "result"), "status")),
	    200);
	json_decref(t);

	/* Snapshot: title, text and refs match the page. */
	t = run_task(&e, space, "snap-1", "snapshot", "{}");
	expect_completed(t, "snapshot");
	cr_assert_str_eq(result_str(t, "title"), "Home");
	cr_assert_not_null(
	    strstr(result_str(t, "snapshot"), "heading \"Welcome\""));
	cr_assert_not_null(strstr(
	    result_str(t, "snapshot"), "text \"The spaced test site.\""));
	ref_of(
	    result_str(t, "snapshot"), "link \"Next page\"", ref, sizeof(ref));
	json_decref(t);

	/* Click the link by ref, and see the new page. */
	snprintf(args, sizeof(args), "{\"ref\": \"%s\"}", ref);
	t = run_task(&e, space, "click-1", "click", args);
	expect_completed(t, "click");
	json_decref(t);
	t = run_task(&e, space, "wait-1", "wait_for",
	    "{\"text\": \"You followed the link.\", \"timeout_ms\": 20000}");
	expect_completed(t, "wait_for");
	json_decref(t);
	cr_assert_eq(tk_pages_hits(pages, "/next"), 1);

	/* Back, then type into the field by ref and submit. */
	t = run_task(&e, space, "back-1", "back", "{}");
	expect_completed(t, "back");
	json_decref(t);
	t = run_task(&e, space, "snap-2", "snapshot", "{}");
	expect_completed(t, "snapshot");
	ref_of(
	    result_str(t, "snapshot"), "textbox \"Query\"", ref, sizeof(ref));
	json_decref(t);
	snprintf(args, sizeof(args),
	    "{\"ref\": \"%s\", \"text\": \"spaces\", \"submit\": true}", ref);
	t = run_task(&e, space, "type-1", "type", args);
	expect_completed(t, "type");
	json_decref(t);
	t = run_task(&e, space, "wait-2", "wait_for",
	    "{\"text\": \"You searched the site.\", \"timeout_ms\": 20000}");
	expect_completed(t, "wait_for");
	json_decref(t);
	t = run_task(
	    &e, space, "text-1", "extract_text", "{\"selector\": \"h1\"}");
	expect_completed(t, "extract_text");
	cr_assert_str_eq(result_str(t, "text"), "Results");
	json_decref(t);

	/* Screenshots: the viewport is the size the browser's flags set. */
	t = screenshot(&e, space, "shot-png", "{\"format\": \"png\"}",
	    "image/png", &w, &h);
	cr_assert_eq(w, CM_BROWSER_WIDTH, "w %u", w);
	cr_assert_eq(h, CM_BROWSER_HEIGHT, "h %u", h);
	cr_assert_str_eq(result_str(t, "artifact"), "screenshot.png");
	json_decref(t);
	t = screenshot(&e, space, "shot-jpeg",
	    "{\"format\": \"jpeg\", \"quality\": 50}", "image/jpeg", &w, &h);
	cr_assert_eq(w, CM_BROWSER_WIDTH);
	cr_assert_eq(h, CM_BROWSER_HEIGHT);
	cr_assert_str_eq(result_str(t, "artifact"), "screenshot.jpg");
	json_decref(t);
	/* The whole page: as wide as the viewport, as tall as the page. */
	t = screenshot(&e, space, "shot-full", "{\"full_page\": true}",
	    "image/png", &w, &h);
	cr_assert_eq(w, CM_BROWSER_WIDTH);
	cr_assert_geq(h, 1);
	json_decref(t);

	/* A ref of a page that is gone fails with element_not_found. */
	snprintf(args, sizeof(args), "{\"ref\": \"%s\"}", ref);
	t = run_task(&e, space, "click-2", "click", args);
	cr_assert_str_eq(sf_str(t, "status"), "failed");
	cr_assert_str_eq(
	    sf_str(json_object_get(t, "error"), "code"), "element_not_found");
	json_decref(t);

	/* The browser is running now; close tears it down: once the Space
	 * reads closed, no process of the browser runs code again. */
	cr_assert_eq(stat(profile, &st), 0, "no profile at %s", profile);
	cr_assert_not(no_browser_of(profile), "no browser runs for the Space");
	browser = browser_of(sf_actor_pid(&e.sf, space), profile);
	cr_assert_gt(browser, 0, "no browser of the actor found");
	n_group = group_pids(browser, group, E2E_GROUP_MAX);
	cr_assert_gt(n_group, 1, "the browser's group has no other process");
	singleton_dir(profile, singleton, sizeof(singleton));
	/* Chromium's own files (that directory, its shared memory) go in
	 * a TMPDIR inside the data dir, not the host's. */
	snprintf(tmp_dir, sizeof(tmp_dir), "%s/tmp/", e.sf.dir);
	cr_assert_eq(strncmp(singleton, tmp_dir, strlen(tmp_dir)), 0,
	    "the browser's single-instance directory %s is outside %s",
	    singleton, tmp_dir);
	/* So do its crash database and what GLib and NSS keep in a home:
	 * the browser's HOME is there too, and no XDG directory elsewhere
	 * is named. */
	browser_env_inside(browser, tmp_dir);
	cr_assert(
	    hf_post(&e, e.manager, space, "close", NULL, NULL) / 100 == 2);
	cr_assert(hf_wait_space(&e, space, "closed"), "the Space never closed");
	for (int i = 0; i < n_group; i++)
		cr_assert(tk_pid_ended(group[i]),
		    "process %d of the browser ran on after the close",
		    (int)group[i]);
	cr_assert(tk_wait_until(no_browser_of, profile, 20000),
	    "a browser outlived its Space");
	cr_assert_neq(stat(profile, &st), 0, "the profile outlived its Space");
	/* What the close discarded goes as its actor ends. */
	cr_assert(tk_wait_until(no_trace_of, space, 20000),
	    "the discarded profile outlived its actor");
	/* And what Chromium kept of it elsewhere, which a killed browser
	 * leaves behind. */
	cr_assert(tk_wait_until(path_gone, singleton, 20000),
	    "the profile's %s outlived its Space", singleton);

	/* Nothing the API returned names the profile or the data dir. */
	cr_assert_gt(e.seen_len, 0, "no response was recorded");
	cr_assert_not(hf_contains(e.seen, e.seen_len, "profiles/"));
	cr_assert_not(hf_contains(e.seen, e.seen_len, e.sf.dir));
	cr_assert_not(hf_contains(e.seen, e.seen_len, "user-data-dir"));

	hf_stop(&e);
	tk_pages_stop(pages);
}

/* Waits for task to be running. */
static void
await_running(struct hf_env *e, const char *space, const char *task)
{
	for (int64_t end = cm_mono_ms() + E2E_WAIT_MS;; poll(NULL, 0, 20)) {
		json_t *t = hf_task(e, space, task);
		bool running = strcmp(sf_str(t, "status"), "running") == 0;

		json_decref(t);
		if (running)
			return;
		cr_assert_lt(cm_mono_ms(), end, "%s never ran", task);
	}
}

/* Reads field 4 (ppid) and 5 (pgrp) and the state of pid; false when
 * pid is gone. */
static bool
proc_stat(pid_t pid, long *ppid, long *pgrp, char *state)
{
	char path[64], buf[512], *p;
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return false;
	ok = fgets(buf, sizeof(buf), f) != NULL &&
	     (p = strrchr(buf, ')')) != NULL &&
	     sscanf(p + 2, "%c %ld %ld", state, ppid, pgrp) == 3;
	fclose(f);
	return ok;
}

/* The browser the actor started with that profile: its child whose
 * command line names the profile.  0 when there is none. */
static pid_t
browser_of(pid_t actor, const char *profile)
{
	char want[700], path[64], cmd[4096];
	struct dirent *de;
	pid_t found = 0;
	DIR *d = opendir("/proc");

	snprintf(want, sizeof(want), "--user-data-dir=%s", profile);
	while (d != NULL && (de = readdir(d)) != NULL && found == 0) {
		pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);
		long ppid, pgrp;
		char st;
		size_t n;
		FILE *f;

		if (pid <= 0 || !proc_stat(pid, &ppid, &pgrp, &st) ||
		    ppid != actor)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		n = fread(cmd, 1, sizeof(cmd) - 1, f);
		fclose(f);
		for (size_t i = 0; i < n; i++)
			if (cmd[i] == '\0')
				cmd[i] = ' ';
		cmd[n] = '\0';
		if (strstr(cmd, want) != NULL)
			found = pid;
	}
	if (d != NULL)
		closedir(d);
	return found;
}

/* True when no live process is left in process group *arg. */
static bool
group_gone(void *arg)
{
	pid_t pgid = *(pid_t *)arg;
	struct dirent *de;
	bool gone = true;
	DIR *d = opendir("/proc");

	while (d != NULL && (de = readdir(d)) != NULL && gone) {
		pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);
		long ppid, pgrp;
		char st;

		if (pid > 0 && proc_stat(pid, &ppid, &pgrp, &st) &&
		    pgrp == pgid && st != 'Z')
			gone = false;
	}
	if (d != NULL)
		closedir(d);
	return gone;
}

/*
 * Killing one Space's actor, with a real browser: kill -9 of the Space's
 * actor in the middle of a task leaves no browser of it behind, the task
 * ends outcome_unknown, and the Space keeps working with a new browser.
 */
Test(e2e_browser, a_killed_actor_leaves_no_browser_and_the_space_works_on,
    .fini = tk_cleanup)
{
	static struct hf_env e;
	char space[CM_ID_MAX + 1], args[256], profile[600], task[CM_ID_MAX + 1];
	struct tk_pages *pages;
	json_t *t;
	pid_t actor, browser;
	int port;

	cr_assert_not_null(pages = tk_pages_start(&port));
	managed_space(&e, "e2e-kill", space, profile, sizeof(profile));
	snprintf(
	    args, sizeof(args), "{\"url\": \"http://127.0.0.1:%d/\"}", port);
	t = run_task(&e, space, "nav-1", "navigate", args);
	expect_completed(t, "navigate");
	json_decref(t);
	cr_assert_not(no_browser_of(profile), "no browser runs for the Space");

	/* A task that runs until it is stopped, then the actor dies. */
	cr_assert_eq(
	    hf_submit(&e, e.manager, space, "", "wait-forever", "wait_for",
	        "{\"text\": \"never on the page\", \"timeout_ms\": 60000}",
	        NULL, task),
	    202);
	actor = sf_actor_pid(&e.sf, space);
	cr_assert_gt(actor, 0, "no actor for the Space");
	await_running(&e, space, task);
	browser = browser_of(actor, profile);
	cr_assert_gt(browser, 0, "no browser of the actor found");
	cr_assert_eq(kill(actor, SIGKILL), 0);

	/* No browser outlives its actor (a new actor may start its own). */
	cr_assert(tk_wait_until(group_gone, &browser, 20000),
	    "the killed actor's browser outlived it");
	/* The task that was running ends outcome_unknown, never replayed. */
	{
		struct settle w = {&e, space, task};

		cr_assert(tk_wait_until(settled, &w, E2E_WAIT_MS),
		    "the lost task was never finalised");
	}
	t = hf_task(&e, space, task);
	cr_assert_str_eq(sf_str(t, "status"), "failed");
	cr_assert_str_eq(
	    sf_str(json_object_get(t, "error"), "code"), "outcome_unknown");
	json_decref(t);

	/* The Space works on, in a new browser. */
	t = run_task(&e, space, "nav-2", "navigate", args);
	expect_completed(t, "navigate");
	cr_assert_str_eq(result_str(t, "title"), "Home");
	json_decref(t);
	t = run_task(&e, space, "snap-1", "snapshot", "{}");
	expect_completed(t, "snapshot");
	json_decref(t);
	cr_assert_neq(sf_actor_pid(&e.sf, space), actor);

	hf_stop(&e);
	tk_pages_stop(pages);
}

/*
 * Cancel through the API: a wait that never matches is cancelled; the task
 * ends cancelled only once the browser has stopped (the cancel request is
 * in the log before it), and the next task works.
 */
Test(e2e_browser, a_cancelled_wait_ends_after_cleanup_and_the_space_works_on,
    .fini = tk_cleanup)
{
	static struct hf_env e;
	char space[CM_ID_MAX + 1], args[256], profile[600], task[CM_ID_MAX + 1];
	struct tk_pages *pages;
	json_int_t asked, ended;
	json_t *t, *events;
	int port;

	cr_assert_not_null(pages = tk_pages_start(&port));
	managed_space(&e, "e2e-cancel", space, profile, sizeof(profile));
	snprintf(
	    args, sizeof(args), "{\"url\": \"http://127.0.0.1:%d/\"}", port);
	t = run_task(&e, space, "nav-1", "navigate", args);
	expect_completed(t, "navigate");
	json_decref(t);

	submit(&e, space, "wait-forever", "wait_for",
	    "{\"text\": \"never on the page\", \"timeout_ms\": 60000}", task);
	await_running(&e, space, task);
	cr_assert(
	    hf_post(&e, e.manager, space, "cancel", NULL, NULL) / 100 == 2);
	t = await_task(&e, space, task);
	cr_assert_str_eq(sf_str(t, "status"), "cancelled");
	json_decref(t);

	events = hf_all_events(&e, space);
	cr_assert_eq(
	    hf_event_count(events, "cancel_requested", task, &asked), 1);
	cr_assert_eq(hf_event_count(events, "cancelled", task, &ended), 1);
	cr_assert_lt(asked, ended, "cancelled before it was asked for");
	json_decref(events);

	/* The same browser serves the next tasks. */
	t = run_task(&e, space, "snap-1", "snapshot", "{}");
	expect_completed(t, "snapshot");
	cr_assert_str_eq(result_str(t, "title"), "Home");
	json_decref(t);
	t = run_task(
	    &e, space, "text-1", "extract_text", "{\"selector\": \"h1\"}");
	expect_completed(t, "extract_text");
	cr_assert_str_eq(result_str(t, "text"), "Welcome");
	json_decref(t);

	hf_stop(&e);
	tk_pages_stop(pages);
}

/* The jar line and the storage line a Space's /cookie page shows now. */
static void
jar_of(struct hf_env *e, const char *space, const char *tag, char *jar,
    size_t jar_len, char *store, size_t store_len)
{
	char rid[64];
	json_t *t;

	snprintf(rid, sizeof(rid), "%s-jar", tag);
	t = run_task(e, space, rid, "extract_text", "{\"selector\": \"#c\"}");
	expect_completed(t, "extract_text");
	snprintf(jar, jar_len, "%s", result_str(t, "text"));
	json_decref(t);
	snprintf(rid, sizeof(rid), "%s-store", tag);
	t = run_task(e, space, rid, "extract_text", "{\"selector\": \"#s\"}");
	expect_completed(t, "extract_text");
	snprintf(store, store_len, "%s", result_str(t, "text"));
	json_decref(t);
}

/* Navigates the Spaces of spaces[] at once, each to its url[]. */
static void
navigate_all(struct hf_env *e, char spaces[][CM_ID_MAX + 1], char urls[][128],
    size_t n, const char *tag)
{
	char tasks[4][CM_ID_MAX + 1], args[256], rid[64];
	json_t *t;

	for (size_t i = 0; i < n; i++) {
		snprintf(args, sizeof(args), "{\"url\": \"%s\"}", urls[i]);
		snprintf(rid, sizeof(rid), "%s-%zu", tag, i);
		submit(e, spaces[i], rid, "navigate", args, tasks[i]);
	}
	for (size_t i = 0; i < n; i++) {
		t = await_task(e, spaces[i], tasks[i]);
		expect_completed(t, "navigate");
		json_decref(t);
	}
}

/*
 * Isolation: two Spaces on two instances, working at the same time on the
 * same site, never see each other's cookies or storage; and a new Space on
 * an instance whose last Space closed sees none of it.
 */
Test(e2e_browser, spaces_never_share_cookies_or_storage, .fini = tk_cleanup)
{
	static struct hf_env e;
	char inst[2][CM_ID_MAX + 1], spaces[2][CM_ID_MAX + 1];
	char profile[2][600], urls[2][128], jar[256], store[256];
	struct tk_pages *pages;
	int port;

	cr_assert_not_null(pages = tk_pages_start(&port));
	hf_start(&e, "e2e-iso", 0, NULL);
	hf_managed_instance(&e, "chromium-a", inst[0]);
	hf_managed_instance(&e, "chromium-b", inst[1]);
	for (size_t i = 0; i < 2; i++)
		space_on(
		    &e, inst[i], spaces[i], profile[i], sizeof(profile[i]));

	/* Each keeps a mark of its own, at the same time. */
	snprintf(urls[0], sizeof(urls[0]),
	    "http://127.0.0.1:%d/cookie?set=alpha", port);
	snprintf(urls[1], sizeof(urls[1]),
	    "http://127.0.0.1:%d/cookie?set=beta", port);
	navigate_all(&e, spaces, urls, 2, "set");
	snprintf(urls[0], sizeof(urls[0]), "http://127.0.0.1:%d/cookie", port);
	snprintf(urls[1], sizeof(urls[1]), "http://127.0.0.1:%d/cookie", port);
	navigate_all(&e, spaces, urls, 2, "look");

	jar_of(&e, spaces[0], "a", jar, sizeof(jar), store, sizeof(store));
	cr_assert_str_eq(jar, "cookies: alpha=1.");
	cr_assert_str_eq(store, "storage: alpha.");
	jar_of(&e, spaces[1], "b", jar, sizeof(jar), store, sizeof(store));
	cr_assert_str_eq(jar, "cookies: beta=1.");
	cr_assert_str_eq(store, "storage: beta.");

	/* The first Space closes; a new one on its instance starts clean. */
	cr_assert(
	    hf_post(&e, e.manager, spaces[0], "close", NULL, NULL) / 100 == 2);
	cr_assert(hf_wait_space(&e, spaces[0], "closed"));
	space_on(&e, inst[0], spaces[0], profile[0], sizeof(profile[0]));
	navigate_all(&e, spaces, urls, 1, "again");
	jar_of(&e, spaces[0], "a2", jar, sizeof(jar), store, sizeof(store));
	cr_assert_str_eq(jar, "cookies: none.");
	cr_assert_str_eq(store, "storage: none.");

	hf_stop(&e);
	tk_pages_stop(pages);
}

/* The status the admin API gives instance inst. */
static void
instance_status(struct hf_env *e, const char *inst, char *out, size_t len)
{
	json_t *res, *v;
	size_t i;

	out[0] = '\0';
	cr_assert_eq(af_call(&e->af, "GET", "/api/v1/admin/browser-instances",
	                 e->af.admin, NULL, &res),
	    200);
	json_array_foreach(af_data(res), i,
	    v) if (strcmp(sf_str(v, "browser_instance_id"), inst) == 0)
	    snprintf(out, len, "%s", sf_str(v, "status"));
	json_decref(res);
}

/*
 * A browser that dies and then cannot be started again: each task fails
 * runtime_crashed while the relaunches fail, and after
 * CM_BROWSER_LAUNCH_TRIES of them in a row the Space is in error and its
 * instance unavailable.  chromium_path is a script that starts Chromium
 * the first time only.
 */
Test(e2e_browser, a_browser_that_cannot_start_again_takes_its_instance_down,
    .fini = tk_cleanup)
{
	static struct hf_env e;
	char dir[64], script[128], flag[160], inst[CM_ID_MAX + 1];
	char space[CM_ID_MAX + 1], profile[600], args[256], rid[32], st[33];
	const char *flags[] = {flag, NULL};
	struct tk_pages *pages;
	json_t *t;
	pid_t browser;
	FILE *f;
	int port, tasks = 0;

	cr_assert_not_null(pages = tk_pages_start(&port));
	tk_tmpdir(dir, sizeof(dir), "e2e-bin");
	snprintf(script, sizeof(script), "%s/chromium", dir);
	cr_assert_not_null(f = fopen(script, "w"));
	fprintf(f, "#!/bin/sh\n"
	           "[ -e \"$0.launched\" ] && exit 1\n"
	           ": > \"$0.launched\"\n"
	           "exec /usr/bin/chromium \"$@\"\n");
	fclose(f);
	cr_assert_eq(chmod(script, 0700), 0);
	snprintf(flag, sizeof(flag), "--chromium-path=%s", script);
	hf_start(&e, "e2e-down", 0, flags);
	hf_managed_instance(&e, "chromium-once", inst);
	space_on(&e, inst, space, profile, sizeof(profile));

	snprintf(
	    args, sizeof(args), "{\"url\": \"http://127.0.0.1:%d/\"}", port);
	t = run_task(&e, space, "nav-1", "navigate", args);
	expect_completed(t, "navigate");
	json_decref(t);
	browser = browser_of(sf_actor_pid(&e.sf, space), profile);
	cr_assert_gt(browser, 0, "no browser of the Space found");
	cr_assert_eq(kill(-browser, SIGKILL), 0);

	/* Every task fails until the Space is in error. */
	for (;;) {
		char task[CM_ID_MAX + 1];
		json_t *sp = hf_space(&e, NULL, space);
		bool in_error = strcmp(sf_str(sp, "status"), "error") == 0;
		int code;

		json_decref(sp);
		if (in_error)
			break;
		cr_assert_lt(tasks, 6, "the Space never went to error");
		snprintf(rid, sizeof(rid), "snap-%d", ++tasks);
		code = hf_submit(&e, e.manager, space, "", rid, "snapshot",
		    "{}", NULL, task);
		if (code != 202)
			continue; /* refused: the Space went to error */
		t = await_task(&e, space, task);
		cr_assert_str_eq(sf_str(t, "status"), "failed");
		cr_assert_str_eq(sf_str(json_object_get(t, "error"), "code"),
		    "runtime_crashed");
		json_decref(t);
	}
	cr_assert_geq(tasks, 3, "in error after %d tasks", tasks);
	instance_status(&e, inst, st, sizeof(st));
	cr_assert_str_eq(st, "unavailable");

	hf_stop(&e);
	tk_pages_stop(pages);
	tk_rmrf(dir);
}
