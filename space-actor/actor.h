/*
 * actor.h: one Space's executor.  A single thread and a single poll()
 * loop over the store's event feed, the driver's fds and a timer, so the
 * Space's tasks run one after another by construction.
 */
#ifndef ACT_ACTOR_H
#define ACT_ACTOR_H

#include "config.h"

/*
 * Runs the actor for space_id until the Space is closed (returns 0), the
 * actor is told to stop by SIGTERM (returns 0 after cancelling its task
 * and tearing its runtime down), or something fails that a restart may
 * cure (returns 1).  notify_fd (>= 0) gets one readiness line once the
 * runtime is open.  wake_fd (>= 0) is the read end of the supervisor's
 * wake pipe, which the actor owns from here on; without one it relies on
 * its timers.  SIGTERM and SIGINT must be blocked by the caller.
 */
int act_run(const struct cm_config *cfg, const char *space_id, int notify_fd,
    int wake_fd);

struct act_driver;
struct act_egress;

/*
 * act_run for a Space handed to a warm standby: warm (owned from here on,
 * NULL for none) is the standby's managed driver, and warm_egress (owned
 * from here on, NULL for none) the egress proxy its browser goes through;
 * the Space takes both when its instance is managed with an ephemeral
 * profile, and the proxy gets the Space's policy; otherwise they are closed
 * (browser and profile gone) and the Space's own runtime opens.
 * The Space is held as any actor holds it: its tasks are claimed under
 * this actor's lease before one runs.
 */
int act_run_warm(const struct cm_config *cfg, const char *space_id,
    int notify_fd, int wake_fd, struct act_driver *warm,
    struct act_egress *warm_egress);

/*
 * A warm standby for instance_id (spaced-actor --standby): launches a
 * managed browser with a fresh profile before any Space is known, writes
 * its readiness line, and waits.  The supervisor hands it a Space with an
 * adopt message on the wake pipe (CM_WAKE_ADOPT in limits.h); it then
 * runs as that Space's actor (act_run_warm) and returns what that
 * returns.  Otherwise it returns 0 on SIGTERM and 1 when its browser goes
 * away, so the supervisor starts another under the actor restart policy.
 * Either way the browser and its profile are gone when it returns.
 */
int act_standby_run(const struct cm_config *cfg, const char *instance_id,
    int notify_fd, int wake_fd);

#endif
