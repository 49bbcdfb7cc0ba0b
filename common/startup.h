/*
 * startup.h: the process start every binary shares (store, supervisor,
 * api, actor), so that its checks are the same everywhere.
 *
 * cm_startup loads the configuration (config.h: flags, --config-fd or
 * the environment and file), sets up the log (proc name, log_level,
 * log_format), reads --notify-fd, creates the data and run directories
 * when asked, blocks the signals the process reads (SIGTERM and SIGINT,
 * SIGCHLD when asked; SIGPIPE is ignored) and opens a signalfd over them
 * when asked.  Signals are then read from a signalfd, never handled.
 *
 * "--version" anywhere on the command line prints "<proc> <version>" on
 * stdout and exits 0 at once, before any configuration is read;
 * "--print-config" prints the loaded configuration (cm_config_print) on
 * stdout and exits 0, so that a script reads the values a start would use.
 * log_format "auto" becomes "json" or "text" in *cfg (isatty(2)), so that
 * a configuration handed on to children carries the decision.
 *
 * Exit codes have fixed meanings (s6, runit): the supervisor's restart
 * policy reads them.
 */
#ifndef CM_STARTUP_H
#define CM_STARTUP_H

#include <sys/types.h>

#include <signal.h>

#include "config.h"

/* The one version every binary reports (its --version, MCP's
 * serverInfo). */
const char *cm_version(void);

enum cm_exit {
	CM_EXIT_OK = 0,          /* done, or stopped cleanly */
	CM_EXIT_FAILED = 1,      /* failed: restart me */
	CM_EXIT_PERMANENT = 100, /* bad configuration: do not restart */
};

/* The readiness line a child writes on its notification fd, once. */
#define CM_READY_LINE "ready\n"

enum cm_startup_flags {
	CM_STARTUP_DIRS = 1 << 0,     /* mkdir data_dir and run_dir, 0700 */
	CM_STARTUP_SIGCHLD = 1 << 1,  /* SIGCHLD joins the blocked set */
	CM_STARTUP_SIGNALFD = 1 << 2, /* open sig_fd over the blocked set */
};

struct cm_startup {
	int notify_fd; /* --notify-fd, close-on-exec; -1 when not given */
	int sig_fd;    /* CM_STARTUP_SIGNALFD: non-blocking, close-on-exec */
	sigset_t mask; /* the signals blocked, for a loop's own signalfd */
};

/*
 * Starts the process proc: everything above, into *st and *cfg.  extra
 * lists the binary's own flags (NULL-terminated, may be NULL) besides
 * notify-fd and print-config, which every binary takes; flags are
 * cm_startup_flags.  Returns CM_EXIT_OK, or the exit code main should return at
 * once (CM_EXIT_PERMANENT for a bad configuration, CM_EXIT_FAILED for a system
 * call that failed), with the reason logged.  On failure nothing is left open.
 */
int cm_startup(struct cm_startup *st, struct cm_config *cfg, const char *proc,
    int argc, char *const *argv, char *const *envp, const char *const *extra,
    unsigned flags);

/*
 * An inherited descriptor named by the extra flag name (e.g. "wake-fd"):
 * *fd is set to it, close-on-exec, or left alone when the flag is absent.
 * A value that is not 0..CM_FD_ARG_MAX in decimal digits is logged
 * ("config: <name> must be a file descriptor number") and returns -1.
 */
int cm_startup_fd(const struct cm_config *cfg, const char *name, int *fd);

/*
 * Writes CM_READY_LINE on *fd and closes it, once: *fd becomes -1, and a
 * call on -1 does nothing.  A failed write is logged; the process goes on
 * (its parent sees the fd close without the line).
 */
void cm_ready_notify(int *fd);

/* Closes what cm_startup opened and is still open.  NULL is accepted. */
void cm_startup_fini(struct cm_startup *st);

/*
 * In a child between fork and exec (async-signal-safe): the child gets
 * SIGKILL when parent, the pid that forked it, dies
 * (PR_SET_PDEATHSIG).  A parent that died before the request was made
 * sends nothing, so the child checks that it is still parent's:
 * returns 0, or -1 when parent is gone already (the child then exits).
 */
int cm_die_with_parent(pid_t parent);

#endif
