/*
 * node_fixture.h: a node script of the tests that drive spaced from
 * JavaScript (tests/console, tests/mcp), run as the C test's child in a
 * process group of its own, so that whatever it launches (a browser) goes
 * with it.  Header-only.
 */
#ifndef SPACED_NODE_FIXTURE_H
#define SPACED_NODE_FIXTURE_H

#include <criterion/criterion.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testkit.h"

#define NF_STOP_MS 5000
#define NF_ENV_MAX 16
#define NF_INHERIT_MAX 256

extern char **environ;

struct nf_run {
	pid_t pid;
	int status;
	bool done;
};

static inline bool
nf_exited(void *arg)
{
	struct nf_run *r = arg;

	if (!r->done && waitpid(r->pid, &r->status, WNOHANG) == r->pid)
		r->done = true;
	return r->done;
}

/* npm ci for the tests' directory dir (under the source tree): a no-op
 * once installed from its lock file. */
static inline void
nf_npm_ci(const char *dir)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s/scripts/npm_ci.sh %s/%s",
	    SPACED_SOURCE_DIR, SPACED_SOURCE_DIR, dir);
	cr_assert_eq(system(cmd), 0, "npm ci for %s failed", dir);
}

/* Runs argv in a process group of its own with env (at most NF_ENV_MAX)
 * added to this environment, less its variables that begin with prefix
 * (a value of the caller's own is the one the script sees); waits at most
 * run_ms, then kills the group.  Returns the exit code, or -1. */
static inline int
nf_run_group(
    char *const argv[], char *const env[], const char *prefix, int run_ms)
{
	char *envp[NF_INHERIT_MAX + NF_ENV_MAX + 1];
	posix_spawnattr_t attr;
	struct nf_run r = {0};
	size_t n = 0;

	for (char **e = environ; *e != NULL && n < NF_INHERIT_MAX; e++)
		if (strncmp(*e, prefix, strlen(prefix)) != 0)
			envp[n++] = *e;
	for (size_t i = 0; env[i] != NULL && i < NF_ENV_MAX; i++)
		envp[n++] = env[i];
	envp[n] = NULL;
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	cr_assert_eq(posix_spawnp(&r.pid, argv[0], NULL, &attr, argv, envp), 0,
	    "cannot start %s", argv[0]);
	posix_spawnattr_destroy(&attr);
	if (!tk_wait_until(nf_exited, &r, run_ms)) {
		cr_log_error("%s ran past %d ms: stopping it", argv[0], run_ms);
		kill(-r.pid, SIGTERM);
		if (!tk_wait_until(nf_exited, &r, NF_STOP_MS)) {
			kill(-r.pid, SIGKILL);
			waitpid(r.pid, &r.status, 0);
		}
		return -1;
	}
	/* Anything of the group still running (a browser) goes with it. */
	kill(-r.pid, SIGKILL);
	return WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1;
}

#endif
