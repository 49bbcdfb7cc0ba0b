/*
 * instance.h: what an actor knows of its Space's browser instance, parsed
 * once from the store's actor.load reply: the runtime bundle, the network
 * policy, the instance config, and the literal secrets the redactor hides.
 */
#ifndef ACT_INSTANCE_H
#define ACT_INSTANCE_H

#include <jansson.h>

#include "capability.h"
#include "driver.h"
#include "proto.h"
#include "redact.h"

struct act_instance {
	char workspace_id[CM_ID_MAX + 1];
	bool close_requested;
	struct cm_bundle *bundle;
	struct cm_policy policy;
	json_t *config;
	struct cm_secrets secrets;
	struct act_env env; /* points into the reply and into this struct */
};

/*
 * Fills *in from an actor.load reply r whose err is CM_OK, for space_id.
 * in->env borrows r's strings and in's own members, so r and in must stay
 * where they are until act_instance_fini.  Returns 1 ready to run, 0 when
 * the Space has nothing to run (closed or in error), -1 when the reply
 * cannot be used (err says why).  cfg is the process configuration.
 */
int act_instance_init(struct act_instance *in, const struct pr_rep *r,
    const char *space_id, const struct cm_config *cfg, char *err,
    size_t errlen);

/* Frees what act_instance_init parsed.  A zeroed struct is accepted. */
void act_instance_fini(struct act_instance *in);

#endif
