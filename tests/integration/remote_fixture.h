/*
 * remote_fixture.h: a Chromium the test itself runs with a DevTools port
 * (--remote-debugging-port) on 127.0.0.1, for the cdp driver and the
 * supervisor's probe: spaced never owns it.  It runs in a process group
 * of its own, which is what the test kills.
 */
#ifndef SPACED_REMOTE_FIXTURE_H
#define SPACED_REMOTE_FIXTURE_H

#include <criterion/criterion.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testkit.h"

#define RF_CHROMIUM "/usr/bin/chromium"
#define RF_WAIT_MS 30000
#define RF_ENV_MAX 256 /* the browser's environment, entries */

extern char **environ;

struct rf_browser {
	pid_t pid; /* also its process group */
	char dir[128];
	int port;
	char ws_path[256]; /* /devtools/browser/<id> */
};

struct rf_port_file {
	struct rf_browser *b;
	char path[200];
};

/* The port and path Chromium wrote to <user-data-dir>/DevToolsActivePort. */
static inline bool
rf_port_read(void *arg)
{
	struct rf_port_file *f = arg;
	char *text = tk_read_file(f->path, NULL);
	char path[256];
	int port;
	bool ok;

	ok = text != NULL && sscanf(text, "%d\n%255s", &port, path) == 2;
	if (ok) {
		f->b->port = port;
		snprintf(f->b->ws_path, sizeof(f->b->ws_path), "%s", path);
	}
	free(text);
	return ok;
}

static inline size_t
rf_sink(char *data, size_t size, size_t nmemb, void *arg)
{
	(void)data;
	(void)arg;
	return size * nmemb;
}

/* True when a browser answers /json/version on port. */
static inline bool
rf_answers(int port)
{
	char url[64];
	long status = 0;
	CURL *e = curl_easy_init();

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/json/version", port);
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, rf_sink);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 2000L);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	if (curl_easy_perform(e) == CURLE_OK)
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(e);
	return status == 200;
}

static inline bool
rf_port_answers(void *arg)
{
	return rf_answers(((struct rf_browser *)arg)->port);
}

/*
 * Starts Chromium on port (0: one it picks) with a profile under dir (a
 * fresh one made when dir[0] is NUL), and waits for its port.
 */
static inline void
rf_start(struct rf_browser *b, int port)
{
	char port_arg[64], dir_arg[200], tmp_env[200];
	struct rf_port_file f = {.b = b};
	char *const argv[] = {RF_CHROMIUM, "--headless=new",
	    "--remote-debugging-address=127.0.0.1", port_arg, dir_arg,
	    geteuid() == 0 ? "--no-sandbox" : "--no-first-run",
	    "--no-first-run", "--disable-gpu",
	    "--disable-background-networking", "--disable-component-update",
	    "--disable-sync", "--disable-dev-shm-usage",
	    "--password-store=basic", "about:blank", NULL};
	char *envp[RF_ENV_MAX];
	size_t n = 0;
	pid_t pid;

	cr_assert_eq(access(RF_CHROMIUM, X_OK), 0, "no " RF_CHROMIUM);
	if (b->dir[0] == '\0')
		tk_tmpdir(b->dir, sizeof(b->dir), "remote");
	snprintf(f.path, sizeof(f.path), "%s/DevToolsActivePort", b->dir);
	unlink(f.path);
	snprintf(
	    port_arg, sizeof(port_arg), "--remote-debugging-port=%d", port);
	snprintf(dir_arg, sizeof(dir_arg), "--user-data-dir=%s", b->dir);
	/* Chromium's single-instance directory goes under $TMPDIR, and only
	 * a clean exit removes it: under the profile, it goes with it, and a
	 * browser killed and started again on the same profile leaves
	 * nothing in /tmp either.  Built before the fork: the child only
	 * execs. */
	snprintf(tmp_env, sizeof(tmp_env), "TMPDIR=%s", b->dir);
	envp[n++] = tmp_env;
	for (size_t i = 0; environ[i] != NULL && n < RF_ENV_MAX - 1; i++)
		if (strncmp(environ[i], "TMPDIR=", 7) != 0)
			envp[n++] = environ[i];
	envp[n] = NULL;
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);

		setpgid(0, 0);
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(devnull, 2);
		execve(RF_CHROMIUM, argv, envp);
		_exit(127);
	}
	setpgid(pid, pid);
	b->pid = pid;
	/* Chromium writes DevToolsActivePort only for a port it picked. */
	if (port == 0)
		cr_assert(tk_wait_until(rf_port_read, &f, RF_WAIT_MS),
		    "Chromium wrote no DevToolsActivePort");
	else
		b->port = port;
	cr_assert(tk_wait_until(rf_port_answers, b, RF_WAIT_MS),
	    "Chromium does not answer on its port");
}

/* Kills the browser's process group and reaps it. */
static inline void
rf_kill(struct rf_browser *b)
{
	if (b->pid <= 0)
		return;
	kill(-b->pid, SIGKILL);
	waitpid(b->pid, NULL, 0);
	b->pid = 0;
}

/* True while the browser runs (not a zombie: it is our child). */
static inline bool
rf_running(struct rf_browser *b)
{
	return b->pid > 0 && waitpid(b->pid, NULL, WNOHANG) == 0 &&
	       kill(b->pid, 0) == 0;
}

static inline void
rf_stop(struct rf_browser *b)
{
	rf_kill(b);
	if (b->dir[0] != '\0')
		tk_rmrf(b->dir); /* Chromium's $TMPDIR with it */
	b->dir[0] = '\0';
}

#endif
