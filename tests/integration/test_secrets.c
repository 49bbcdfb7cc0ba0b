/*
 * No secret in a child's command line or environment: spaced is given a
 * PostgreSQL DSN holding a canary, through its environment or its own
 * command line (the user's choice), and every child it starts (the store,
 * the api, an actor) is read from /proc: cmdline, environ, and the fds it
 * keeps open.  The store still runs on SQLite: the DSN is only carried.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "space_fixture.h"

#define CANARY "canary-5f0c2a9e"
#define DSN "postgresql://spaced:" CANARY "@db.invalid/spaced"

/* True when the len bytes at buf hold needle (NUL bytes and all). */
static bool
holds(const char *buf, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; i + n <= len; i++)
		if (memcmp(buf + i, needle, n) == 0)
			return true;
	return false;
}

/* True when /proc/<pid>/<what> holds the canary. */
static bool
proc_file_holds_canary(pid_t pid, const char *what)
{
	char path[64], *buf;
	size_t len = 0;
	bool found;

	snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, what);
	buf = tk_read_file(path, &len);
	cr_assert_not_null(buf, "cannot read %s", path);
	found = holds(buf, len, CANARY);
	free(buf);
	return found;
}

/* True when pid keeps the supervisor's config memfd open. */
static bool
keeps_config_fd(pid_t pid)
{
	char dir[64], path[320], target[256];
	struct dirent *de;
	bool found = false;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%ld/fd", (long)pid);
	cr_assert_not_null(d = opendir(dir));
	while ((de = readdir(d)) != NULL) {
		ssize_t n;

		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		found |= strstr(target, "memfd:spaced-config") != NULL;
	}
	closedir(d);
	return found;
}

static bool
config_fd_closed(void *arg)
{
	return !keeps_config_fd(*(pid_t *)arg);
}

/*
 * Starts spaced with flags (the DSN maybe among them), opens a Space so an
 * actor runs, and checks every child.
 */
static void
check_children(const char *tag, const char *dsn_flag)
{
	static struct sf_env e;
	static const char *const kinds[] = {
	    "spaced-store", "spaced-api", "spaced-actor"};
	const char *flags[3];
	char cfg[300], space[CM_ID_MAX + 1], *log;
	size_t log_len = 0;

	memset(&e, 0, sizeof(e));
	tk_tmpdir(e.dir, sizeof(e.dir), tag);
	snprintf(e.fake_log, sizeof(e.fake_log), "%s/fake.log", e.dir);
	snprintf(e.out, sizeof(e.out), "%s/spaced.out", e.dir);
	snprintf(e.listen, sizeof(e.listen), "--http-listen=127.0.0.1:%d",
	    tk_free_port());
	flags[0] = e.listen;
	flags[1] = dsn_flag;
	flags[2] = NULL;
	cr_assert_eq(tk_spaced_start_logged(&e.p, e.dir, flags, e.out), 0,
	    "spaced did not start (see %s)", e.out);
	cr_assert_eq(cm_rpc_open(&e.s, e.p.store_url), 0);
	snprintf(cfg, sizeof(cfg), "{\"log_path\": \"%s\"}", e.fake_log);
	cr_assert_eq(tk_provision_with(e.s, &e.w, 1, cfg), 0);
	sf_create_ok(&e, 0, space);
	cr_assert_neq(sf_wait_actor(&e, space, 0, SF_WAIT_MS), 0);
	/* The api listens where its config (from the fd) says. */
	cr_assert(tk_http_ready(&e.p, SF_WAIT_MS), "the api is not up");

	/* The canary did reach the supervisor, so a leak would show. */
	cr_assert(proc_file_holds_canary(
	              e.p.pid, dsn_flag != NULL ? "cmdline" : "environ"),
	    "the supervisor never got the DSN");
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		pid_t pids[4];
		int n = sf_children(e.p.pid, kinds[k], NULL, pids, 4);

		cr_assert_eq(n, 1, "%d %s under spaced", n, kinds[k]);
		cr_assert_not(proc_file_holds_canary(pids[0], "cmdline"),
		    "the DSN is on the command line of %s", kinds[k]);
		cr_assert_not(proc_file_holds_canary(pids[0], "environ"),
		    "the DSN is in the environment of %s", kinds[k]);
		/* A child just started may not have read its config yet. */
		cr_assert(tk_wait_until(config_fd_closed, &pids[0], SF_WAIT_MS),
		    "%s keeps the config fd, and would pass it on", kinds[k]);
	}

	nng_close(e.s);
	tk_proc_stop(&e.p, SIGTERM);
	log = tk_read_file(e.out, &log_len);
	cr_assert_not_null(log);
	cr_assert_not(holds(log, log_len, CANARY), "the DSN is in the log");
	free(log);
	tk_rmrf(e.dir);
}

Test(secrets, dsn_from_the_environment_reaches_no_child, .fini = tk_cleanup)
{
	cr_assert_eq(setenv("SPACED_POSTGRES_DSN", DSN, 1), 0);
	check_children("sec-env", NULL);
}

Test(secrets, dsn_from_the_command_line_reaches_no_child, .fini = tk_cleanup)
{
	check_children("sec-flag", "--postgres-dsn=" DSN);
}
