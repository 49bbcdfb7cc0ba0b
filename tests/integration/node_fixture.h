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
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testkit.h"

#define NF_STOP_MS 5000

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
	cr_assert_eq(tk_npm_ci(dir), 0, "npm ci for %s failed", dir);
}

/* Runs argv in a process group of its own with env (at most
 * TK_SPAWN_ENV_MAX) added to this environment, less its variables that
 * begin with prefix (a value of the caller's own is the one the script
 * sees); waits at most run_ms, then kills the group.  Returns the exit
 * code, or -1. */
static inline int
nf_run_group(
    char *const argv[], char *const env[], const char *prefix, int run_ms)
{
	struct nf_run r = {0};

	r.pid = tk_spawn_group(argv, env, prefix, -1, -1);
	cr_assert_gt(r.pid, 0, "cannot start %s", argv[0]);
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
