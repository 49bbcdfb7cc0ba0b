/*
 * spaced-actor --space <id> [--notify-fd=N] [--wake-fd=N] [config flags]
 * spaced-actor --standby <instance id> [...]: a warm standby (actor.h)
 *
 * Exit codes: 0 done (Space closed, or stopped by SIGTERM), 1 failed
 * (the supervisor restarts it), 100 permanent failure (bad arguments).
 */
#include "actor.h"
#include "ids.h"
#include "log.h"
#include "startup.h"

int
main(int argc, char **argv, char **envp)
{
	static const char *const extra[] = {
	    "space", "standby", "wake-fd", NULL};
	struct cm_config cfg;
	struct cm_startup su;
	const char *space_id, *standby;
	int wake_fd = -1, rc;

	/* Signals arrive through the loop's signalfd, never a handler. */
	if ((rc = cm_startup(&su, &cfg, "spaced-actor", argc, argv, envp, extra,
	         0)) != CM_EXIT_OK)
		return rc;
	space_id = cm_config_extra(&cfg, "space");
	standby = cm_config_extra(&cfg, "standby");
	if ((space_id == NULL) == (standby == NULL) ||
	    !cm_uuid_valid(space_id != NULL ? space_id : standby)) {
		cm_warnx("usage: spaced-actor --space <space id> | --standby "
		         "<instance id>");
		cm_startup_fini(&su);
		return CM_EXIT_PERMANENT;
	}
	if (cm_startup_fd(&cfg, "wake-fd", &wake_fd) != 0) {
		cm_startup_fini(&su);
		return CM_EXIT_PERMANENT;
	}
	/* Both write the readiness line and close notify_fd. */
	if (standby != NULL)
		return act_standby_run(&cfg, standby, su.notify_fd, wake_fd);
	return act_run(&cfg, space_id, su.notify_fd, wake_fd);
}
