/*
 * spaced-store: the only process that opens the database.
 *
 *   spaced-store [--notify-fd=N] [config flags]
 *
 * Exit codes: 0 stopped cleanly, 1 failed (restart me), 100 permanent
 * failure such as a bad configuration (do not restart).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "log.h"
#include "loop.h"
#include "rpc.h"
#include "store.h"

#define EXIT_PERMANENT 100

static int
make_dir(const char *path)
{
	if (mkdir(path, 0700) == 0 || errno == EEXIST)
		return 0;
	cm_warn("store: mkdir %s", path);
	return -1;
}

static int
parse_fd(const char *s)
{
	char *end;
	long v;

	if (s == NULL)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 0 || v > 65535)
		return -2;
	return (int)v;
}

int
main(int argc, char **argv, char **envp)
{
	static const char *const extra[] = {"notify-fd", NULL};
	struct cm_config cfg;
	struct st_store_opts opts;
	struct st_store *st;
	enum cm_log_level level = CM_LOG_INFO;
	char err[256], db_path[CM_PATH_MAX + 16];
	char rep_url[CM_PATH_MAX], pub_url[CM_PATH_MAX];
	sigset_t mask;
	int notify_fd, rc;

	cm_log_init("spaced-store", CM_LOG_INFO, false);
	if (cm_config_load(&cfg, argc, argv, envp, extra, err, sizeof(err)) !=
	    0) {
		cm_warnx("config: %s", err);
		return EXIT_PERMANENT;
	}
	cm_log_level_parse(cfg.log_level, &level);
	cm_log_init("spaced-store", level, strcmp(cfg.log_format, "text") != 0);
	if ((notify_fd = parse_fd(cm_config_extra(&cfg, "notify-fd"))) == -2) {
		cm_warnx("config: notify-fd must be a file descriptor number");
		return EXIT_PERMANENT;
	}
	if (cfg.store_backend != CM_STORE_SQLITE) {
		cm_warnx(
		    "config: store_backend %s is not available in this build",
		    "postgres");
		return EXIT_PERMANENT;
	}
	if (make_dir(cfg.data_dir) != 0 || make_dir(cfg.run_dir) != 0)
		return EXIT_PERMANENT;
	if (cm_ipc_url(rep_url, sizeof(rep_url), cfg.run_dir, "store.ipc") !=
	        0 ||
	    cm_ipc_url(pub_url, sizeof(pub_url), cfg.run_dir,
	        "store-events.ipc") != 0) {
		cm_warnx("config: run_dir is too long for an ipc path");
		return EXIT_PERMANENT;
	}
	snprintf(db_path, sizeof(db_path), "%s/spaced.db", cfg.data_dir);

	/* Signals arrive through the loop's signalfd, never a handler. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);

	memset(&opts, 0, sizeof(opts));
	opts.sqlite_path = db_path;
	opts.max_spaces_per_workspace = cfg.max_spaces_per_workspace;
	opts.task_timeout_default_s = cfg.task_timeout_default;
	opts.task_timeout_max_s = cfg.task_timeout_max;
	opts.host_id = cfg.host_id;
	opts.defer_sync = true; /* the loop syncs before it acknowledges */
	if (st_store_open(&st, &opts) != 0) {
		cm_warnx("store: cannot open %s", db_path);
		return 1;
	}
	rc = st_loop_run(st, rep_url, pub_url, notify_fd);
	st_store_close(st);
	return rc == 0 ? 0 : 1;
}
