/*
 * The four binaries start through one module (common/startup.h), so a
 * bad start is the same error with the same exit code in each: an
 * unknown flag, and a --notify-fd that names no descriptor, exit
 * CM_EXIT_PERMANENT (100: do not restart) with the same message, before
 * anything is opened.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "startup.h"
#include "testkit.h"

#define EXIT_WAIT_MS 10000 /* a refused start takes milliseconds */

static const char *const binaries[] = {
    "spaced", "spaced-store", "spaced-api", "spaced-actor", NULL};

struct run {
	pid_t pid;
	int status;
};

static bool
exited(void *arg)
{
	struct run *r = arg;

	return waitpid(r->pid, &r->status, WNOHANG) == r->pid;
}

/*
 * Runs binary on its own data dir with flag, its stderr into out, and
 * returns its wait status; fails the test when it does not exit within
 * EXIT_WAIT_MS (it is killed then).
 */
static int
run_bin(const char *binary, const char *dir, const char *flag, const char *out)
{
	char bin[512], data[256];
	struct run r = {0, 0};

	snprintf(bin, sizeof(bin), "%s/%s", SPACED_BIN_DIR, binary);
	snprintf(data, sizeof(data), "--data-dir=%s", dir);
	r.pid = fork();
	cr_assert_geq(r.pid, 0);
	if (r.pid == 0) {
		/* A valid Space id, so the actor's own check passes. */
		const char *argv[] = {bin, data, "--config=/dev/null",
		    "--log-format=text", "--allow-fake-driver=true",
		    "--space=01890a5d-ac96-774b-bcce-b302099a8057", flag, NULL};
		FILE *f = freopen(out, "w", stderr);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (f == NULL)
			_exit(127);
		if (strcmp(binary, "spaced-actor") != 0)
			argv[5] = flag, argv[6] = NULL;
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	if (!tk_wait_until(exited, &r, EXIT_WAIT_MS)) {
		kill(r.pid, SIGKILL);
		waitpid(r.pid, NULL, 0);
		cr_assert_fail("%s %s did not exit", binary, flag);
	}
	return r.status;
}

/* Every binary exits CM_EXIT_PERMANENT on flag, saying want. */
static void
all_refuse(const char *flag, const char *want)
{
	char dir[128], out[192];

	tk_tmpdir(dir, sizeof(dir), "startup");
	snprintf(out, sizeof(out), "%s/stderr", dir);
	for (size_t i = 0; binaries[i] != NULL; i++) {
		int st = run_bin(binaries[i], dir, flag, out);
		char *text = tk_read_file(out, NULL);

		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == CM_EXIT_PERMANENT,
		    "%s %s: status %#x", binaries[i], flag, st);
		cr_assert_not_null(text);
		cr_assert_not_null(strstr(text, want), "%s %s said: %s",
		    binaries[i], flag, text);
		free(text);
	}
	tk_rmrf(dir);
}

Test(bad_start, an_unknown_flag_is_the_same_error_everywhere)
{
	all_refuse("--no-such-flag=1", "config: unknown flag --no-such-flag");
}

Test(bad_start, a_bad_notify_fd_is_the_same_error_everywhere)
{
	static const char want[] =
	    "config: notify-fd must be a file descriptor number";

	all_refuse("--notify-fd=abc", want);
	/* Empty is no descriptor either (strtol alone reads it as 0). */
	all_refuse("--notify-fd=", want);
}
