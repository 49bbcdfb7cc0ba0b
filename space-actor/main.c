/*
 * spaced-actor --space <id> [--notify-fd=N] [config flags]
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

int
main(int argc, char **argv, char **envp)
{
	static const char *const extra[] = {"space", "notify-fd", NULL};
	struct cm_config cfg;
	enum cm_log_level level = CM_LOG_INFO;
	const char *space_id, *fd_arg;
	char err[256];
	sigset_t mask;
	int notify_fd = -1;

	cm_log_init("spaced-actor", CM_LOG_INFO, false);
	if (cm_config_load(&cfg, argc, argv, envp, extra, err, sizeof(err)) !=
	    0) {
		cm_warnx("config: %s", err);
		return EXIT_PERMANENT;
	}
	cm_log_level_parse(cfg.log_level, &level);
	cm_log_init("spaced-actor", level, strcmp(cfg.log_format, "text") != 0);
	space_id = cm_config_extra(&cfg, "space");
	if (space_id == NULL || !cm_uuid_valid(space_id)) {
		cm_warnx("usage: spaced-actor --space <space id>");
		return EXIT_PERMANENT;
	}
	if ((fd_arg = cm_config_extra(&cfg, "notify-fd")) != NULL) {
		char *end;
		long v;

		errno = 0;
		v = strtol(fd_arg, &end, 10);
		if (errno != 0 || *end != '\0' || v < 0 || v > 65535) {
			cm_warnx("config: notify-fd must be a file descriptor "
			         "number");
			return EXIT_PERMANENT;
		}
		notify_fd = (int)v;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	return act_run(&cfg, space_id, notify_fd);
}
