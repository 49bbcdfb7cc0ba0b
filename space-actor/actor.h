/*
 * actor.h: one Space's executor.  A single thread and a single poll()
 * loop over the store's event feed, the driver's fds and a timer, so the
 * Space's tasks run one after another by construction (DESIGN 1).
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

#endif
