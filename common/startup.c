#include "startup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

int
cm_startup_fd(const struct cm_config *cfg, const char *name, int *fd)
{
	const char *arg = cm_config_extra(cfg, name);
	char *end;
	long v;

	if (arg == NULL)
		return 0;
	/* Digits only: strtol alone would take "", " 3" and "+3". */
	errno = 0;
	v = strtol(arg, &end, 10);
	if (arg[0] < '0' || arg[0] > '9' || errno != 0 || *end != '\0' ||
	    v > CM_FD_ARG_MAX) {
		cm_warnx("config: %s must be a file descriptor number", name);
		return -1;
	}
	*fd = (int)v;
	/* Whatever this process execs never holds it. */
	fcntl(*fd, F_SETFD, FD_CLOEXEC);
	return 0;
}

void
cm_ready_notify(int *fd)
{
	static const char line[] = CM_READY_LINE;

	if (*fd < 0)
		return;
	if (write(*fd, line, sizeof(line) - 1) < 0)
		cm_warn("readiness notification");
	close(*fd);
	*fd = -1;
}

static int
make_dir(const char *path)
{
	if (mkdir(path, 0700) == 0 || errno == EEXIST)
		return 0;
	cm_warn("mkdir %s", path);
	return -1;
}

/* "notify-fd", "print-config" and then the binary's own extra flags,
 * into all. */
static int
merge_extra(const char *const *extra, const char **all, size_t n)
{
	size_t i = 0;

	all[i++] = "notify-fd";
	all[i++] = "print-config";
	for (; extra != NULL && *extra != NULL; extra++) {
		if (i + 1 >= n)
			return -1;
		all[i++] = *extra;
	}
	all[i] = NULL;
	return 0;
}

/* --version anywhere on the command line: the answer, before any config
 * is read, so that it works wherever the binary is installed. */
static void
version_exit(const char *proc, int argc, char *const *argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--version") == 0) {
			printf("%s %s\n", proc, cm_version());
			exit(fflush(stdout) == 0 ? CM_EXIT_OK : CM_EXIT_FAILED);
		}
	}
}

int
cm_startup(struct cm_startup *st, struct cm_config *cfg, const char *proc,
    int argc, char *const *argv, char *const *envp, const char *const *extra,
    unsigned flags)
{
	const char *all[CM_CONFIG_EXTRA_MAX + 1];
	enum cm_log_level level = CM_LOG_INFO;
	char err[256];
	bool json;

	st->notify_fd = st->sig_fd = -1;
	sigemptyset(&st->mask);
	version_exit(proc, argc, argv);
	cm_log_init(proc, CM_LOG_INFO, false);
	if (merge_extra(extra, all, sizeof(all) / sizeof(all[0])) != 0)
		cm_fatalx(
		    "%s: more than %d extra flags", proc, CM_CONFIG_EXTRA_MAX);
	if (cm_config_load(cfg, argc, argv, envp, all, err, sizeof(err)) != 0) {
		cm_warnx("config: %s", err);
		return CM_EXIT_PERMANENT;
	}
	if (cm_config_extra(cfg, "print-config") != NULL)
		exit(cm_config_print(cfg, stdout) == 0 ? CM_EXIT_OK
		                                       : CM_EXIT_FAILED);
	cm_log_level_parse(cfg->log_level, &level);
	/*
	 * "auto" is decided here, once, and written back: the supervisor
	 * hands cfg to its children (--config-fd), so they write what it
	 * writes even where their own stderr would decide otherwise.
	 */
	json = cm_log_json_for(cfg->log_format, STDERR_FILENO);
	snprintf(cfg->log_format, sizeof(cfg->log_format), "%s",
	    json ? "json" : "text");
	cm_log_init(proc, level, json);
	if (cm_startup_fd(cfg, "notify-fd", &st->notify_fd) != 0)
		return CM_EXIT_PERMANENT;
	if ((flags & CM_STARTUP_DIRS) &&
	    (make_dir(cfg->data_dir) != 0 || make_dir(cfg->run_dir) != 0)) {
		cm_startup_fini(st);
		return CM_EXIT_PERMANENT;
	}

	sigaddset(&st->mask, SIGTERM);
	sigaddset(&st->mask, SIGINT);
	if (flags & CM_STARTUP_SIGCHLD)
		sigaddset(&st->mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &st->mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((flags & CM_STARTUP_SIGNALFD) &&
	    (st->sig_fd = signalfd(-1, &st->mask, SFD_CLOEXEC | SFD_NONBLOCK)) <
	        0) {
		cm_warn("%s: signalfd", proc);
		cm_startup_fini(st);
		return CM_EXIT_FAILED;
	}
	return CM_EXIT_OK;
}

void
cm_startup_fini(struct cm_startup *st)
{
	if (st == NULL)
		return;
	if (st->sig_fd >= 0)
		close(st->sig_fd);
	if (st->notify_fd >= 0)
		close(st->notify_fd);
	st->sig_fd = st->notify_fd = -1;
}

int
cm_die_with_parent(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
		return -1;
	return getppid() == parent ? 0 : -1;
}

const char *
cm_version(void)
{
	return SPACED_VERSION;
}
