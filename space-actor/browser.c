/*
 * browser.c: fork and exec of a managed Chromium.
 */
#include "browser.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "limits.h"
#include "startup.h"

/*
 * The flags every managed browser gets.  They start from Playwright's
 * automation defaults (its chromiumSwitches), which keep a browser that
 * is driven by a program quiet, deterministic and off the network unless
 * a page asks for it.
 */
static const char *const browser_flags[] = {
    /* Speak CDP on fds 3 and 4; open no debugging port. */
    "--remote-debugging-pipe",
    /* No window, no display server. */
    "--headless=new",
    /* No first tab: the Space's page is the one target the actor creates
     * (session.c); a default tab would hold a renderer of its own. */
    "--no-startup-window",
    /* No field trials: the same features on every start. */
    "--disable-field-trial-config",
    /* No update checks, safe-browsing lists or other calls home. */
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-client-side-phishing-detection",
    "--disable-sync",
    "--metrics-recording-only",
    "--no-service-autorun",
    /* No crash reporter uploading a Space's memory anywhere. */
    "--disable-breakpad",
    /* Timers and rendering run in full even though nothing is visible. */
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
    /* Back/forward navigations load again, as a client expects. */
    "--disable-back-forward-cache",
    /* No extensions, default apps or first-run and default-browser UI. */
    "--disable-extensions",
    "--disable-component-extensions-with-background-pages",
    "--disable-default-apps",
    "--no-default-browser-check",
    "--no-first-run",
    "--disable-search-engine-choice-screen",
    /* Features that add network traffic or surprise automation. */
    "--disable-features=ImprovedCookieControls,LazyFrameLoading,"
    "GlobalMediaControls,DestroyProfileOnBrowserClose,MediaRouter,"
    "DialMediaRouteProvider,AcceptCHFrame,AutoExpandDetailsElement,"
    "CertificateTransparencyComponentUpdater,"
    "AvoidUnnecessaryBeforeUnloadCheckSync,Translate,"
    "OptimizationHints,InterestFeedContentSuggestions,"
    /* Chromium's own services that went out through the Space's egress
     * proxy with the flags above (each seen by test_browser_quiet):
     * autofill's query of the form on every page with a few fields
     * (content-autofill.googleapis.com), and the network time check
     * at start (clients2.google.com/time). */
    "AutofillServerCommunication,NetworkTimeServiceQuerying,"
    /* The address bar's popup, which Chromium renders ahead in a
     * renderer of its own even headless: a browser that never shows it
     * would hold that process (tens of MB) and start it at each launch. */
    "WebUIOmniboxPopup,WebUIOmniboxAimPopup",
    /* /dev/shm is small in containers; use /tmp. */
    "--disable-dev-shm-usage",
    /* No hang dialogs or IPC throttling under a busy driver. */
    "--disable-hang-monitor",
    "--disable-ipc-flooding-protection",
    "--allow-pre-commit-input",
    /* Popups and reposts go on without a dialog nobody can answer. */
    "--disable-popup-blocking",
    "--disable-prompt-on-repost",
    /* Screenshots in one colour profile on every host. */
    "--force-color-profile=srgb",
    /* One viewport on every host, whole: a screenshot of it is this size
     * and no scrollbar takes a part of it. */
    "--window-size=" CM_STR(CM_BROWSER_WIDTH) "," CM_STR(CM_BROWSER_HEIGHT),
    "--hide-scrollbars",
    /* Credentials stay in the profile, never in a desktop keyring. */
    "--password-store=basic",
    "--use-mock-keychain",
    "--enable-automation",
    /* No GPU process: none is there, and probing it costs time. */
    "--disable-gpu",
    /* WebRTC may not send UDP around the proxy. */
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    /* QUIC would be UDP around the proxy too. */
    "--disable-quic",
    /*
     * The on-device AI models' manifest, which the optimization guide
     * asks the component updater for at every start, on demand, whatever
     * --disable-component-update says (update.googleapis.com, https and
     * then http).  No feature turns it off; a manifest given by path
     * replaces the updater, and /dev/null holds none, so no model is
     * ever looked for or fetched.
     */
    "--optimization-guide-manifest-override=/dev/null",
    /*
     * The Google accounts in the cookie jar, which every regular profile
     * lists once its network is up and again with a backoff when that
     * fails (accounts.google.com/ListAccounts), signed in or not, with
     * sign-in disallowed or not.  The browser's own Google-account
     * calls go to this origin instead: ".invalid" names no host, and
     * port 1 is one Chromium refuses to connect to, so each fails
     * before any connection or proxy is tried.  A page's own request
     * for accounts.google.com goes to the proxy as any other.
     */
    "--gaia-url=http://gaia.invalid:1/",
};

#define BROWSER_FLAGS (sizeof(browser_flags) / sizeof(browser_flags[0]))
/* The flags, --no-sandbox, --user-data-dir, --proxy-server and its
 * bypass list, and the NULL. */
#define BROWSER_ARGV_MAX (BROWSER_FLAGS + 6)

extern char **environ;

/* The variables that name where a program writes its own files, which a
 * browser with a home of its own does not inherit: Chromium keeps its
 * crash database under $XDG_CONFIG_HOME (~/.config), GLib its dconf
 * cache under $XDG_CACHE_HOME (~/.cache), NSS its store in ~/.pki. */
static const char *const browser_env_dropped[] = {
    "TMPDIR=", "HOME=", "XDG_CONFIG_HOME=", "XDG_CACHE_HOME=", "XDG_DATA_HOME=",
    "XDG_STATE_HOME=", "XDG_RUNTIME_DIR="};

static bool
browser_env_drops(const char *e)
{
	for (size_t i = 0;
	     i < sizeof(browser_env_dropped) / sizeof(browser_env_dropped[0]);
	     i++)
		if (strncmp(e, browser_env_dropped[i],
		        strlen(browser_env_dropped[i])) == 0)
			return true;
	return false;
}

/*
 * The browser's environment: the actor's, with, when own is not NULL
 * (two strings, "TMPDIR=<dir>" and "HOME=<dir>"), those in place of the
 * actor's and none of browser_env_dropped: everything Chromium writes
 * outside its profile goes in that directory.  Into envp (room for max
 * entries and the NULL; the strings are borrowed).  Built before the
 * fork: the child may only exec.  0, or -1 when the environment has
 * more than max entries.
 */
static int
browser_env(const char *const *own, const char **envp, size_t max)
{
	size_t n = 0;

	for (char **e = environ; *e != NULL; e++) {
		if (own != NULL && browser_env_drops(*e))
			continue;
		if (n == max)
			return -1;
		envp[n++] = *e;
	}
	for (int i = 0; own != NULL && i < 2; i++) {
		if (n == max)
			return -1;
		envp[n++] = own[i];
	}
	envp[n] = NULL;
	return 0;
}

/* In the child, between fork and exec: async-signal-safe calls only. */
static void
browser_child(char *const argv[], char *const envp[], int to_browser,
    int from_browser, int devnull, pid_t actor)
{
	int in, out;

	setpgid(0, 0);
	if (cm_die_with_parent(actor) != 0)
		_exit(127);
	/*
	 * Move both ends above 4 first, so no dup2 overwrites the other.
	 * The browser's own output (console messages, URLs it failed to
	 * load) is not the actor's log: nothing of a page may reach a log.
	 */
	if ((in = fcntl(to_browser, F_DUPFD, 10)) < 0 ||
	    (out = fcntl(from_browser, F_DUPFD, 10)) < 0 ||
	    dup2(devnull, 0) != 0 || dup2(devnull, 1) != 1 ||
	    dup2(devnull, 2) != 2 || dup2(in, 3) != 3 || dup2(out, 4) != 4)
		_exit(127);
	close_range(5, ~0U, 0);
	execve(argv[0], argv, envp);
	_exit(127);
}

static void
browser_close(int fd)
{
	if (fd >= 0)
		close(fd);
}

int
act_browser_launch(const char *chromium_path, const char *profile_dir,
    const char *tmp_dir, const char *proxy, struct act_browser *b, char *err,
    size_t errlen)
{
	char profile_arg[CM_PATH_MAX + 32], proxy_arg[CM_URL_MAX + 32];
	char tmp_env[CM_PATH_MAX + 8], home_env[CM_PATH_MAX + 8];
	const char *own[2] = {tmp_env, home_env};
	const char *argv[BROWSER_ARGV_MAX];
	const char *envp[CM_BROWSER_ENV_MAX + 1];
	int to_browser[2] = {-1, -1}, from_browser[2] = {-1, -1};
	int devnull;
	size_t n = 0;
	pid_t pid = -1, actor;

	b->pid = 0;
	b->n_procs = 0;
	b->wfd = b->rfd = -1;
	if (access(chromium_path, X_OK) != 0) {
		snprintf(err, errlen, "no browser at chromium_path");
		return -1;
	}
	if ((size_t)snprintf(profile_arg, sizeof(profile_arg),
	        "--user-data-dir=%s", profile_dir) >= sizeof(profile_arg) ||
	    (proxy != NULL &&
	        (size_t)snprintf(proxy_arg, sizeof(proxy_arg),
	            "--proxy-server=%s", proxy) >= sizeof(proxy_arg)) ||
	    (tmp_dir != NULL &&
	        ((size_t)snprintf(tmp_env, sizeof(tmp_env), "TMPDIR=%s",
	             tmp_dir) >= sizeof(tmp_env) ||
	            (size_t)snprintf(home_env, sizeof(home_env), "HOME=%s",
	                tmp_dir) >= sizeof(home_env)))) {
		snprintf(err, errlen, "a browser argument is too long");
		return -1;
	}
	if (browser_env(
	        tmp_dir != NULL ? own : NULL, envp, CM_BROWSER_ENV_MAX) != 0) {
		snprintf(err, errlen,
		    "the environment has more than %d entries",
		    CM_BROWSER_ENV_MAX);
		return -1;
	}
	argv[n++] = chromium_path;
	for (size_t i = 0; i < BROWSER_FLAGS; i++)
		argv[n++] = browser_flags[i];
	/* Chromium's sandbox cannot start as root. */
	if (geteuid() == 0)
		argv[n++] = "--no-sandbox";
	argv[n++] = profile_arg;
	if (proxy != NULL) {
		/* Every connection through the Space's egress proxy
		 * (egress.h); its secret comes by Fetch.authRequired. */
		argv[n++] = proxy_arg;
		/* Loopback is not exempt from the proxy: Chromium bypasses
		 * localhost and 127/8 by default. */
		argv[n++] = "--proxy-bypass-list=<-loopback>";
	}
	argv[n] = NULL;

	actor = getpid();
	if ((devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0 ||
	    pipe2(to_browser, O_CLOEXEC) != 0 ||
	    pipe2(from_browser, O_CLOEXEC) != 0 || (pid = fork()) < 0) {
		snprintf(err, errlen, "cannot start the browser: %s",
		    strerror(errno));
		browser_close(devnull);
		browser_close(to_browser[0]);
		browser_close(to_browser[1]);
		browser_close(from_browser[0]);
		browser_close(from_browser[1]);
		return -1;
	}
	if (pid == 0)
		browser_child((char *const *)argv, (char *const *)envp,
		    to_browser[0], from_browser[1], devnull, actor);
	/* Also here, so that a kill of the group cannot race the child. */
	setpgid(pid, pid);
	close(devnull);
	close(to_browser[0]);
	close(from_browser[1]);
	b->pid = pid;
	b->wfd = to_browser[1];
	b->rfd = from_browser[0];
	return 0;
}

/* The thread id an entry of /proc/<pid>/task names, or 0 ("." and
 * ".."). */
static pid_t
browser_tid(const struct dirent *de)
{
	char *end;
	long tid = strtol(de->d_name, &end, 10);

	return *end == '\0' && tid > 0 && tid <= INT32_MAX ? (pid_t)tid : 0;
}

static void
browser_idle_thread(pid_t tid)
{
	const struct sched_param idle = {.sched_priority = 0};

	(void)sched_setscheduler(tid, SCHED_IDLE, &idle);
}

/* Every thread of process pid to SCHED_IDLE. */
static void
browser_idle_threads(pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *tasks;
	pid_t tid;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((tasks = opendir(path)) == NULL)
		return; /* gone already */
	while ((de = readdir(tasks)) != NULL)
		if ((tid = browser_tid(de)) > 0)
			browser_idle_thread(tid);
	closedir(tasks);
}

/* Appends to procs (n of them so far) the children of thread tid of pid,
 * up to CM_BROWSER_TREE_MAX; returns the new count. */
static int
browser_children(pid_t pid, pid_t tid, pid_t *procs, int n)
{
	/* Each child's pid, up to 10 digits, and a space. */
	char path[64], list[CM_BROWSER_TREE_MAX * 11 + 1], *at, *end;
	ssize_t got = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid,
	    (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return n;
	while ((size_t)got < sizeof(list) - 1) {
		ssize_t r =
		    read(fd, list + got, sizeof(list) - 1 - (size_t)got);

		if (r <= 0)
			break;
		got += r;
	}
	close(fd);
	list[got] = '\0';
	/* A list the buffer cut loses its last, partial pid (the bound on
	 * processes is met by then). */
	if ((size_t)got == sizeof(list) - 1 &&
	    (at = strrchr(list, ' ')) != NULL)
		at[1] = '\0';
	for (at = list; n < CM_BROWSER_TREE_MAX; at = end) {
		long child = strtol(at, &end, 10);

		if (end == at || (*end != ' ' && *end != '\n' && *end != '\0'))
			break;
		if (child > 0 && child <= INT32_MAX)
			procs[n++] = (pid_t)child;
	}
	return n;
}

/*
 * The process tree under leader, breadth first, into procs (at most
 * CM_BROWSER_TREE_MAX; the leader first, always); with idle, each thread
 * goes to SCHED_IDLE on the way.  Returns the count.
 */
static int
browser_tree(pid_t leader, pid_t *procs, bool idle)
{
	int n = 0;

	procs[n++] = leader;
	for (int i = 0; i < n; i++) {
		char path[64];
		struct dirent *de;
		DIR *tasks;
		pid_t tid;

		snprintf(path, sizeof(path), "/proc/%d/task", (int)procs[i]);
		if ((tasks = opendir(path)) == NULL)
			continue; /* gone already */
		while ((de = readdir(tasks)) != NULL) {
			if ((tid = browser_tid(de)) == 0)
				continue;
			if (idle)
				browser_idle_thread(tid);
			if (n < CM_BROWSER_TREE_MAX)
				n = browser_children(procs[i], tid, procs, n);
		}
		closedir(tasks);
	}
	return n;
}

void
act_browser_list(struct act_browser *b)
{
	b->n_procs = b->pid > 0 ? browser_tree(b->pid, b->procs, false) : 0;
}

void
act_browser_idle(const struct act_browser *b)
{
	pid_t procs[CM_BROWSER_TREE_MAX];

	if (b->pid <= 0)
		return;
	if (b->n_procs == 0) {
		(void)browser_tree(b->pid, procs, true);
		return;
	}
	/* Only what is still of the browser's group: a pid listed once
	 * may since have ended and been given to another process. */
	for (int i = 0; i < b->n_procs; i++)
		if (getpgid(b->procs[i]) == b->pid)
			browser_idle_threads(b->procs[i]);
}

/* act_browser_stopping was called. */
static bool browser_stopping;

void
act_browser_stopping(void)
{
	browser_stopping = true;
}

/*
 * Kills the browser's process group.  The kernel frees a killed process's
 * memory in that process's own time, which for a Chromium's processes is
 * tens of ms of CPU on the close's path, with both CPUs of a small host
 * busy unmapping the dying browser.  Before the kill, each of the
 * browser's threads goes to SCHED_IDLE, which any other task's wake-up
 * preempts at once.  At nice 19 alone it still held the CPU for the rest
 * of its slice: each hop of the close after the kill (the store's
 * mark_closed and its sync, the api's answer) ran 3 to 4 ms late.  In
 * lifecycle_bench, alternating the two run by run (5 and 7 runs), the
 * close's mark_closed reached the api's event a median of 5.14 ms after
 * it was sent at nice 19 and 1.14 ms in SCHED_IDLE, and kill() itself
 * took 5.15 against 0.25 ms.  The walk of the tree, which took 1.3 to
 * 4.4 ms there, is done ahead when the driver can (act_browser_list):
 * in 8 closes of listed browsers act_browser_idle took 0.41 to 2.71 ms,
 * against 1.10 to 7.40 ms for a walk in 19 kills of unlisted ones.
 * A stopping process skips both (act_browser_stopping).
 */
static void
browser_kill_group(const struct act_browser *b)
{
	pid_t pid = b->pid;

	if (!browser_stopping) {
		act_browser_idle(b);
		(void)setpriority(PRIO_PGRP, (id_t)pid, CM_BROWSER_DYING_NICE);
	}
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
}

void
act_browser_kill(struct act_browser *b)
{
	pid_t pid = b->pid;
	int64_t end;

	if (pid <= 0)
		return;
	browser_kill_group(b);
	b->pid = 0;
	b->n_procs = 0;
	end = cm_mono_ms() + CM_BROWSER_REAP_MS;
	while (waitpid(pid, NULL, WNOHANG) == 0 && cm_mono_ms() < end) {
		struct timespec pause = {0, 1000 * 1000};

		nanosleep(&pause, NULL);
	}
}

/* The leaders act_browser_end killed and no one has reaped yet. */
static pid_t ended[CM_BROWSER_ENDED_MAX];
static int n_ended;

void
act_browser_end(struct act_browser *b)
{
	if (b->pid <= 0)
		return;
	/* No room to remember it: reaped now, as act_browser_kill does. */
	if (n_ended == CM_BROWSER_ENDED_MAX) {
		act_browser_kill(b);
		return;
	}
	browser_kill_group(b);
	ended[n_ended++] = b->pid;
	b->pid = 0;
	b->n_procs = 0;
}

int
act_browser_reap(int64_t deadline_ms)
{
	for (;;) {
		struct timespec pause = {0, 1000 * 1000};

		for (int i = 0; i < n_ended;) {
			pid_t r = waitpid(ended[i], NULL, WNOHANG);

			if (r == 0) {
				i++;
				continue;
			}
			/* Reaped, or not ours to reap any more (ECHILD). */
			ended[i] = ended[--n_ended];
		}
		if (n_ended == 0)
			return 0;
		if (cm_mono_ms() >= deadline_ms)
			return 1;
		nanosleep(&pause, NULL);
	}
}

/* Where Chromium keeps a profile's single-instance socket: a directory
 * of its own, <TMPDIR>/org.chromium.Chromium.<6 random characters>. */
#define BR_SINGLETON_LINK "SingletonSocket"
#define BR_SINGLETON_DIR "org.chromium.Chromium."
#define BR_SINGLETON_DIR_RAND 6

void
act_browser_rm_singleton(const char *profile)
{
	char link[CM_PATH_MAX + 32], target[CM_PATH_MAX];
	const char *base;
	struct stat st;
	char *slash;
	ssize_t n;
	int dfd;

	if ((size_t)snprintf(link, sizeof(link), "%s/%s", profile,
	        BR_SINGLETON_LINK) >= sizeof(link) ||
	    (n = readlink(link, target, sizeof(target) - 1)) <= 0)
		return;
	target[n] = '\0';
	if (target[0] != '/' || (slash = strrchr(target, '/')) == target ||
	    strcmp(slash + 1, BR_SINGLETON_LINK) != 0)
		return;
	*slash = '\0';
	base = strrchr(target, '/') + 1;
	if (strncmp(base, BR_SINGLETON_DIR, strlen(BR_SINGLETON_DIR)) != 0 ||
	    strlen(base) != strlen(BR_SINGLETON_DIR) + BR_SINGLETON_DIR_RAND ||
	    (dfd = open(
	         target, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return;
	if (fstat(dfd, &st) == 0 && st.st_uid == geteuid()) {
		(void)unlinkat(dfd, BR_SINGLETON_LINK, 0);
		(void)unlinkat(dfd, "SingletonCookie", 0);
		(void)rmdir(target);
	}
	close(dfd);
}
