/*
 * test_console.c: the operator console in a real browser (the console half
 * of the real-browser end-to-end test).  Starts the real spaced on its own
 * /tmp directory and port with two managed instances bound to the
 * workspace, and the page server of browser tests on 127.0.0.1; issues the
 * console a token of the workspace's manager; then runs console.test.mjs
 * (playwright-core driving Debian's Chromium) with the URLs and tokens in
 * its environment, and passes when it exits 0.  The screenshot of each main
 * state goes to $CONSOLE_SHOTS, or <build>/console-shots.
 *
 * playwright-core is installed from tests/console/package-lock.json by
 * scripts/npm_ci.sh (a no-op once installed from this lock file).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http_fixture.h"
#include "node_fixture.h"
#include "pages.h"

/* The whole browser run: its own waits are bounded tighter, per step. */
#define CONSOLE_RUN_MS (8 * 60 * 1000)
#define CONSOLE_ENV_MAX TK_SPAWN_ENV_MAX
#define CONSOLE_PATH_MAX 1400

/* The screenshot of each main state that console.test.mjs saves (as
 * <name>.png in the shots directory, kept by CI: .ci/run). */
static const char *const shots_saved[] = {"wrong-token", "signed-in",
    "instance-in-use", "space-created", "snapshot-outline", "screenshot",
    "live-events", "task-in-progress", "live-view", "space-held",
    "operator-input", "confirm-dialog", "runtime-crashed", "runtime-not-ready",
    "space-closed", "token-revoked", "workspace-chosen", "failure"};
#define SHOTS_N (sizeof(shots_saved) / sizeof(shots_saved[0]))
/* The last name, failure, is saved only when a case fails. */
#define SHOTS_MAIN (SHOTS_N - 1)

/* dir/name.png into out (CONSOLE_PATH_MAX bytes). */
static void
shot_path(char *out, const char *dir, const char *name)
{
	cr_assert_lt(snprintf(out, CONSOLE_PATH_MAX, "%s/%s.png", dir, name),
	    CONSOLE_PATH_MAX, "a screenshot's path is too long");
}

TestSuite(console, .timeout = 600);

Test(console, in_a_real_browser, .fini = tk_cleanup)
{
	static struct hf_env e;
	char inst_a[CM_ID_MAX + 1], inst_b[CM_ID_MAX + 1],
	    tok_id[CM_ID_MAX + 1], token[CM_TOKEN_MAX + 1];
	char env[CONSOLE_ENV_MAX][1200];
	const char *shots = getenv("CONSOLE_SHOTS");
	char shot[CONSOLE_PATH_MAX];
	char *const argv[] = {
	    "node", SPACED_SOURCE_DIR "/tests/console/console.test.mjs", NULL};
	char *envv[CONSOLE_ENV_MAX + 1];
	struct tk_pages *pages;
	size_t n = 0;
	int port, code;

	nf_npm_ci("tests/console");

	cr_assert_not_null(pages = tk_pages_start(&port));
	hf_start(&e, "console", 0, NULL);
	hf_managed_instance(&e, "chromium-console-a", inst_a);
	hf_managed_instance(&e, "chromium-console-b", inst_b);
	af_issue(&e.af, e.sf.w.operator_id, NULL, tok_id, token);

	snprintf(env[n++], sizeof(env[0]), "CONSOLE_URL=%s", e.sf.p.http_base);
	snprintf(env[n++], sizeof(env[0]), "CONSOLE_TOKEN=%s", token);
	snprintf(env[n++], sizeof(env[0]), "CONSOLE_TOKEN_ID=%s", tok_id);
	snprintf(
	    env[n++], sizeof(env[0]), "CONSOLE_ADMIN_TOKEN=%s", e.af.admin);
	snprintf(env[n++], sizeof(env[0]), "CONSOLE_WORKSPACE=%s", hf_ws(&e));
	snprintf(env[n++], sizeof(env[0]), "CONSOLE_OWNER_ID=%s",
	    e.sf.w.operator_id);
	snprintf(env[n++], sizeof(env[0]), "CONSOLE_INSTANCE_A=%s", inst_a);
	snprintf(env[n++], sizeof(env[0]), "CONSOLE_INSTANCE_B=%s", inst_b);
	snprintf(env[n++], sizeof(env[0]),
	    "CONSOLE_PAGE_URL=http://127.0.0.1:%d/", port);
	snprintf(env[n++], sizeof(env[0]), "CONSOLE_SHOTS=%s",
	    shots && *shots ? shots : SPACED_BIN_DIR "/console-shots");
	shots = env[n - 1] + strlen("CONSOLE_SHOTS=");
	/* The last run's screenshots go: those found after this one are
	 * its own. */
	for (size_t i = 0; i < SHOTS_N; i++) {
		shot_path(shot, shots, shots_saved[i]);
		unlink(shot);
	}
	snprintf(env[n++], sizeof(env[0]), "CONSOLE_SPACED_PID=%ld",
	    (long)e.sf.p.pid);
	for (size_t i = 0; i < n; i++)
		envv[i] = env[i];
	envv[n] = NULL;

	code = nf_run_group(argv, envv, "CONSOLE_", CONSOLE_RUN_MS);
	cr_assert_eq(code, 0,
	    "console.test.mjs failed (exit %d); the service's log is %s", code,
	    e.sf.out);
	/* A screenshot of each main state, as a PNG. */
	for (size_t i = 0; i < SHOTS_MAIN; i++) {
		size_t len = 0;
		char *png;

		shot_path(shot, shots, shots_saved[i]);
		png = tk_read_file(shot, &len);
		cr_assert(png != NULL && len > 8 &&
		              memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0,
		    "no screenshot %s", shot);
		free(png);
	}
	/* Nothing the console did put the token in the service's log. */
	{
		size_t len = 0;
		char *log = tk_read_file(e.sf.out, &len);

		cr_assert_not_null(log);
		cr_assert_not(
		    hf_contains(log, len, token), "the token was logged");
		free(log);
	}
	tk_pages_stop(pages);
	hf_stop(&e);
}
