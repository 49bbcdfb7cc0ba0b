/*
 * test_browser.c: a real Chromium launched by space-actor/browser.c and
 * driven through the pipe transport and the CDP client: it answers, loads
 * a page in a flat session, listens on no TCP port, exits when its pipe
 * closes, holds no page but the one created, and a browser killed
 * mid-command fails that command.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cdp_rig.h"
#include "clock.h"
#include "testkit.h"

#define WAIT_MS 30000 /* the most any wait here may take */

/* A call that must be answered: its result, or the test fails. */
static json_t *
rig_call(
    struct tk_rig *r, const char *session, const char *method, json_t *params)
{
	return tk_rig_call(r, session, method, params, WAIT_MS);
}

static void
rig_start(struct tk_rig *r)
{
	char err[256];

	cr_assert_eq(tk_rig_start(r, err, sizeof(err)), 0, "%s", err);
}

/* The live pids of process group pgid, from /proc. */
static int
group_pids(pid_t pgid, pid_t *out, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d)) != NULL && n < max) {
		char path[300], buf[512], *p;
		long pg = 0;
		char state = 0;
		FILE *f;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		/* A zombie is dead: it only waits for init to reap it. */
		if (fgets(buf, sizeof(buf), f) != NULL &&
		    (p = strrchr(buf, ')')) != NULL &&
		    sscanf(p + 2, "%c %*d %ld", &state, &pg) == 2 &&
		    pg == pgid && state != 'Z')
			out[n++] = (pid_t)strtol(e->d_name, NULL, 10);
		fclose(f);
	}
	closedir(d);
	return n;
}

/* True when inode is a TCP socket in LISTEN state in table. */
static bool
listening(const char *table, unsigned long inode)
{
	FILE *f = fopen(table, "r");
	char line[512];
	bool found = false;

	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long ino;
		unsigned st;

		if (sscanf(line, " %*d: %*s %*s %x %*s %*s %*s %*s %*s %lu",
		        &st, &ino) == 2 &&
		    st == 0x0A && ino == inode)
			found = true;
	}
	fclose(f);
	return found;
}

TestSuite(browser, .timeout = 120);

Test(browser, loads_a_page_over_the_pipe_and_listens_on_no_port)
{
	struct tk_rig r;
	json_t *v;
	const char *session;
	char *sid;
	pid_t pids[256];
	int n, sockets = 0;

	rig_start(&r);
	v = rig_call(&r, NULL, "Browser.getVersion", NULL);
	cr_assert_not_null(
	    v, "getVersion failed: %lld", (long long)r.error_code);
	cr_assert_not_null(
	    strstr(json_string_value(json_object_get(v, "product")), "Chrome"));

	v = rig_call(&r, NULL, "Target.createTarget",
	    json_pack("{s:s}", "url", "about:blank"));
	cr_assert_not_null(v);
	v = rig_call(&r, NULL, "Target.attachToTarget",
	    json_pack("{s:O, s:b}", "targetId", json_object_get(v, "targetId"),
	        "flatten", 1));
	cr_assert_not_null(v);
	session = json_string_value(json_object_get(v, "sessionId"));
	cr_assert_not_null(session);
	sid = strdup(session);

	cr_assert_not_null(rig_call(&r, sid, "Page.enable", NULL));
	snprintf(r.want_event, sizeof(r.want_event), "Page.loadEventFired");
	cr_assert_not_null(rig_call(&r, sid, "Page.navigate",
	    json_pack("{s:s}", "url",
	        "data:text/html,<title>spaced page</title><h1>Hello</h1>")));
	for (int64_t end = cm_mono_ms() + WAIT_MS;
	     !r.saw_event && cm_mono_ms() < end;)
		cr_assert_eq(tk_rig_turn(&r), 0);
	cr_assert(r.saw_event, "no load event");
	v = rig_call(&r, sid, "Runtime.evaluate",
	    json_pack("{s:s, s:b}", "expression", "document.title",
	        "returnByValue", 1));
	cr_assert_not_null(v);
	cr_assert_str_eq(json_string_value(json_object_get(
	                     json_object_get(v, "result"), "value")),
	    "spaced page");

	/* A command the browser does not know is an error, not a hang. */
	cr_assert_null(rig_call(&r, sid, "Nope.nothing", NULL));
	cr_assert_neq(r.error_code, 0);

	/* No process of the browser holds a listening TCP socket. */
	n = group_pids(r.b.pid, pids, 256);
	cr_assert_gt(n, 1, "the browser has no processes in its group");
	for (int i = 0; i < n; i++) {
		char fddir[64];
		DIR *d;
		struct dirent *e;

		snprintf(fddir, sizeof(fddir), "/proc/%d/fd", (int)pids[i]);
		if ((d = opendir(fddir)) == NULL)
			continue;
		while ((e = readdir(d)) != NULL) {
			char link[400], target[128];
			unsigned long ino;
			ssize_t k;

			snprintf(link, sizeof(link), "%s/%s", fddir, e->d_name);
			k = readlink(link, target, sizeof(target) - 1);
			if (k <= 0)
				continue;
			target[k] = '\0';
			if (sscanf(target, "socket:[%lu]", &ino) != 1)
				continue;
			sockets++;
			cr_assert_not(listening("/proc/net/tcp", ino),
			    "pid %d listens on TCP", (int)pids[i]);
			cr_assert_not(listening("/proc/net/tcp6", ino),
			    "pid %d listens on TCP6", (int)pids[i]);
		}
		closedir(d);
	}
	cr_assert_gt(sockets, 0, "no socket seen: /proc was not read");
	free(sid);

	/* Closing the pipe ends the browser by itself. */
	act_pipe_free(r.pipe);
	r.pipe = NULL;
	{
		pid_t pid = r.b.pid;
		int64_t end = cm_mono_ms() + WAIT_MS;

		while (waitpid(pid, NULL, WNOHANG) == 0 && cm_mono_ms() < end)
			poll(NULL, 0, 10);
		cr_assert_eq(kill(pid, 0), -1, "the browser outlived its pipe");
		while (group_pids(pid, pids, 256) > 0 && cm_mono_ms() < end)
			poll(NULL, 0, 10);
		cr_assert_eq(group_pids(pid, pids, 256), 0,
		    "a browser process outlived its pipe");
		r.b.pid = 0;
	}
	tk_rig_stop(&r);
}

/*
 * The browser holds no page of its own: no first tab (the Space's page is
 * the one the actor creates) and no address-bar popup rendered ahead,
 * each of which would keep a renderer process (and its memory) alive in
 * every browser.  Asked once our page has loaded, when the browser's own
 * start-up work has run.
 */
Test(browser, holds_no_page_but_the_one_created)
{
	struct tk_rig r;
	json_t *v, *info;
	const char *target;
	char *ours, *sid;
	size_t i;
	int pages = 0;

	rig_start(&r);
	v = rig_call(&r, NULL, "Target.createTarget",
	    json_pack("{s:s}", "url", "about:blank"));
	cr_assert_not_null(v);
	ours = strdup(json_string_value(json_object_get(v, "targetId")));
	v = rig_call(&r, NULL, "Target.attachToTarget",
	    json_pack("{s:s, s:b}", "targetId", ours, "flatten", 1));
	cr_assert_not_null(v);
	sid = strdup(json_string_value(json_object_get(v, "sessionId")));
	cr_assert_not_null(rig_call(&r, sid, "Page.enable", NULL));
	snprintf(r.want_event, sizeof(r.want_event), "Page.loadEventFired");
	cr_assert_not_null(rig_call(&r, sid, "Page.navigate",
	    json_pack("{s:s}", "url", "data:text/html,<h1>ours</h1>")));
	for (int64_t end = cm_mono_ms() + WAIT_MS;
	     !r.saw_event && cm_mono_ms() < end;)
		tk_rig_turn(&r);
	cr_assert(r.saw_event, "no load event");

	v = rig_call(&r, NULL, "Target.getTargets", NULL);
	cr_assert_not_null(v);
	json_array_foreach(json_object_get(v, "targetInfos"), i, info)
	{
		const char *type =
		    json_string_value(json_object_get(info, "type"));

		target = json_string_value(json_object_get(info, "targetId"));
		cr_assert_not_null(type);
		cr_assert_str_neq(type, "browser_ui",
		    "the browser rendered a UI page of its own: %s",
		    json_string_value(json_object_get(info, "url")));
		if (strcmp(type, "page") == 0) {
			cr_assert_str_eq(target, ours,
			    "a page the browser opened itself: %s",
			    json_string_value(json_object_get(info, "url")));
			pages++;
		}
	}
	cr_assert_eq(pages, 1);
	free(ours);
	free(sid);
	tk_rig_stop(&r);
}

Test(browser, a_browser_killed_mid_command_fails_the_command)
{
	struct tk_rig r;
	pid_t pids[256];

	rig_start(&r);
	cr_assert_not_null(rig_call(&r, NULL, "Browser.getVersion", NULL));
	cr_assert_gt(act_cdp_call(r.cdp, NULL, "Browser.getVersion", NULL,
	                 cm_mono_ms() + WAIT_MS, tk_rig_reply, &r),
	    0);
	kill(-r.b.pid, SIGKILL);
	for (int64_t end = cm_mono_ms() + WAIT_MS;
	     tk_rig_turn(&r) == 0 && cm_mono_ms() < end;)
		;
	cr_assert(act_pipe_broken(r.pipe));
	cr_assert_eq(r.replies, 2);
	cr_assert_null(r.result);
	cr_assert_eq(r.error_code, ACT_CDP_E_CLOSED);
	{
		pid_t pgid = r.b.pid;
		int64_t end = cm_mono_ms() + WAIT_MS;

		act_browser_kill(&r.b);
		while (group_pids(pgid, pids, 256) > 0 && cm_mono_ms() < end)
			poll(NULL, 0, 10);
		cr_assert_eq(group_pids(pgid, pids, 256), 0);
	}
	tk_rig_stop(&r);
}
