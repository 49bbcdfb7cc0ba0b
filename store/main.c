/*
 * spaced-store: the only process that opens the database.
 *
 *   spaced-store [--notify-fd=N] [config flags]
 *
 * Exit codes: 0 stopped cleanly, 1 failed (restart me), 100 permanent
 * failure such as a bad configuration (do not restart).
 */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "loop.h"
#include "rpc.h"
#include "startup.h"
#include "store.h"

int
main(int argc, char **argv, char **envp)
{
	struct cm_config cfg;
	struct cm_startup su;
	struct st_store_opts opts;
	struct st_store *st;
	char db_path[CM_PATH_MAX + 16];
	char rep_url[CM_PATH_MAX], pub_url[CM_PATH_MAX],
	    notice_url[CM_PATH_MAX];
	int rc;

	/* Signals arrive through the loop's signalfd, never a handler. */
	if ((rc = cm_startup(&su, &cfg, "spaced-store", argc, argv, envp, NULL,
	         CM_STARTUP_DIRS)) != CM_EXIT_OK)
		return rc;
	if (cm_ipc_url(rep_url, sizeof(rep_url), cfg.run_dir, "store.ipc") !=
	        0 ||
	    cm_ipc_url(pub_url, sizeof(pub_url), cfg.run_dir,
	        "store-events.ipc") != 0 ||
	    cm_ipc_url(notice_url, sizeof(notice_url), cfg.run_dir,
	        "store-notices.ipc") != 0) {
		cm_warnx("config: run_dir is too long for an ipc path");
		cm_startup_fini(&su);
		return CM_EXIT_PERMANENT;
	}
	snprintf(db_path, sizeof(db_path), "%s/spaced.db", cfg.data_dir);

	memset(&opts, 0, sizeof(opts));
	opts.sqlite_path = db_path;
	/* The DSN stays in this process: read from the config, given to
	 * libpq, never logged (config validation requires one). */
	if (cfg.store_backend == CM_STORE_POSTGRES)
		opts.postgres_dsn = cfg.postgres_dsn;
	opts.max_spaces_per_workspace = cfg.max_spaces_per_workspace;
	opts.task_timeout_default_s = cfg.task_timeout_default;
	opts.task_timeout_max_s = cfg.task_timeout_max;
	opts.host_id = cfg.host_id;
	opts.defer_sync = true; /* the loop syncs before it acknowledges */
	if (st_store_open(&st, &opts) != 0) {
		cm_warnx("store: cannot open %s",
		    opts.postgres_dsn ? "the PostgreSQL database" : db_path);
		cm_startup_fini(&su);
		return CM_EXIT_FAILED;
	}
	/* The loop writes the readiness line and closes notify_fd. */
	rc = st_loop_run(st, rep_url, pub_url, notice_url, su.notify_fd);
	st_store_close(st);
	return rc == 0 ? CM_EXIT_OK : CM_EXIT_FAILED;
}
