/*
 * standby.h: warm standby browsers (the setting warm_standby).  An idle
 * managed instance of this host (ready, no open Space, an ephemeral
 * profile) gets one standby actor (spaced-actor --standby), whose browser is
 * launched before any Space is known.  A Space opened on the instance is
 * handed to that actor (sup_standby_adopt) instead of a new one starting;
 * when it closes, that actor exits with its browser and profile, and the
 * next walk of the instances starts a fresh standby.  A standby that dies
 * restarts under the actor policy; one that keeps dying rests for
 * CM_SUP_STANDBY_REST_MS.  Nothing here waits on the store or a child.
 */
#ifndef SUP_STANDBY_H
#define SUP_STANDBY_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "proto.h"

struct sup;
struct sup_child;

/* Pure: whether instance in should keep a standby on this host under cfg
 * (whether a Space holds it aside). */
bool sup_standby_fits(
    const struct cm_config *cfg, const struct pr_instance *in);

/*
 * Acts on one instance.list reply (every instance; complete unless it
 * holds CM_ADMIN_LIST_MAX rows): starts a standby for each idle instance
 * that fits and has no actor row, stops the standbys of instances that no
 * longer fit or are gone.
 */
void sup_standby_sync(struct sup *s, const struct pr_rep *r);

/*
 * A Space opened on instance_id: when a standby of that instance runs, it
 * becomes the Space's actor (sup_child_adopt) and true is returned.
 * Otherwise false, after dropping a standby row that is not running, and
 * the caller starts the Space's actor as usual (cold).
 */
bool sup_standby_adopt(
    struct sup *s, const char *space_id, const char *instance_id);

/* A standby row's process died, not by request (it was not stopping):
 * an exit 0 removes the row; a crash restarts it under the actor policy,
 * or lets the instance rest when the policy gives up. */
void sup_standby_died(
    struct sup *s, struct sup_child *ch, bool exited, int code, int64_t now_ms);

#endif
