/*
 * spaced-actor --space <id> [--notify-fd=N] [--wake-fd=N] [config flags]
 * spaced-actor --standby <instance id> [...]: a warm standby (actor.h)
 *
 * Exit codes: 0 done (Space closed, or stopped by SIGTERM), 1 failed
 * (the supervisor restarts it), 100 permanent failure (bad arguments).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "actor.h"
#include "config.h"
#include "ids.h"
#include "log.h"

#define EXIT_PERMANENT 100

/* An inherited descriptor given on the command line; absent leaves *fd. */
static int
parse_fd(const char *arg, int *fd)
{
	char *end;
	long v;

	if (arg == NULL)
		return 0;
	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno != 0 || *end != '\0' || v < 0 || v > 65535)
		return -1;
	*fd = (int)v;
	return 0;
}

int
main(int argc, char **argv, char **envp)
{
	static const char *const extra[] = {
	    "space", "standby", "notify-fd", "wake-fd", NULL};
	struct cm_config cfg;
	enum cm_log_level level = CM_LOG_INFO;
	const char *space_id, *standby;
	char err[256];
	sigset_t mask;
	int notify_fd = -1, wake_fd = -1;

	cm_log_init("spaced-actor", CM_LOG_INFO, false);
	if (cm_config_load(&cfg, argc, argv, envp, extra, err, sizeof(err)) !=
	    0) {
		cm_warnx("config: %s", err);
		return EXIT_PERMANENT;
	}
	cm_log_level_parse(cfg.log_level, &level);
	cm_log_init("spaced-actor", level, strcmp(cfg.log_format, "text") != 0);
	space_id = cm_config_extra(&cfg, "space");
	standby = cm_config_extra(&cfg, "standby");
	if ((space_id == NULL) == (standby == NULL) ||
	    !cm_uuid_valid(space_id != NULL ? space_id : standby)) {
		cm_warnx("usage: spaced-actor --space <space id> | --standby "
		         "<instance id>");
		return EXIT_PERMANENT;
	}
	if (parse_fd(cm_config_extra(&cfg, "notify-fd"), &notify_fd) != 0 ||
	    parse_fd(cm_config_extra(&cfg, "wake-fd"), &wake_fd) != 0) {
		cm_warnx(
		    "config: notify-fd and wake-fd must be descriptor numbers");
		return EXIT_PERMANENT;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (standby != NULL)
		return act_standby_run(&cfg, standby, notify_fd, wake_fd);
	return act_run(&cfg, space_id, notify_fd, wake_fd);
}
