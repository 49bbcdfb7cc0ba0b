/*
 * instance.c: the actor.load reply, parsed once (see instance.h).
 */
#include "instance.h"

#include <stdio.h>
#include <string.h>

#include "json.h"
#include "limits.h"
#include "status.h"

/* Collects the literal secrets of the instance for the redactor. */
static void
collect_secrets(struct cm_secrets *s, const json_t *v, int depth)
{
	const char *key;
	json_t *item;
	size_t i;

	if (depth > CM_JSON_DEPTH_MAX)
		return;
	if (json_is_string(v)) {
		cm_secrets_add(s, json_string_value(v));
	} else if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, item)
		    collect_secrets(s, item, depth + 1);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, item)
		    collect_secrets(s, item, depth + 1);
	}
}

int
act_instance_init(struct act_instance *in, const struct pr_rep *r,
    const char *space_id, const struct cm_config *cfg, char *err, size_t errlen)
{
	char why[CM_ERROR_MESSAGE_MAX + 1];
	const char *m;

	if (r->n_spaces != 1 || r->n_instances != 1 ||
	    r->n_instance_secrets != 1 || r->n_bundles != 1) {
		snprintf(err, errlen, "the store's reply has the wrong shape");
		return -1;
	}
	if (cm_space_status_is(r->spaces[0].status, CM_SPACE_CLOSED) ||
	    cm_space_status_is(r->spaces[0].status, CM_SPACE_ERROR))
		return 0;
	snprintf(in->workspace_id, sizeof(in->workspace_id), "%s",
	    r->spaces[0].workspace_id);
	in->close_requested = r->spaces[0].close_requested;

	m = r->bundles[0].manifest;
	if (cm_bundle_parse(m, strlen(m), &in->bundle, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "the bundle does not parse: %s", why);
		return -1;
	}
	m = r->instances[0].network_policy ? r->instances[0].network_policy
	                                   : "";
	if (cm_policy_parse(m, strlen(m), &in->policy, why, sizeof(why)) != 0) {
		snprintf(
		    err, errlen, "the network policy does not parse: %s", why);
		return -1;
	}
	m = r->instance_secrets[0].config ? r->instance_secrets[0].config
	                                  : "{}";
	if (cm_json_parse(m, strlen(m), CM_INSTANCE_CONFIG_MAX,
	        CM_JSON_DEPTH_MAX, &in->config, why, sizeof(why)) != 0 ||
	    !json_is_object(in->config)) {
		snprintf(err, errlen, "the instance config is not an object");
		return -1;
	}
	cm_secrets_add(&in->secrets, r->instance_secrets[0].endpoint);
	cm_secrets_add(&in->secrets, r->instance_secrets[0].profile);
	collect_secrets(&in->secrets, in->config, 0);

	in->env.space_id = space_id;
	in->env.instance_id = r->instances[0].browser_instance_id;
	in->env.driver = cm_driver_parse(r->instances[0].driver);
	in->env.endpoint = r->instance_secrets[0].endpoint;
	in->env.profile_mode =
	    cm_profile_mode_parse(r->instances[0].profile_mode);
	in->env.profile = r->instance_secrets[0].profile;
	in->env.config = in->config;
	in->env.bundle = in->bundle;
	in->env.policy = &in->policy;
	in->env.cfg = cfg;
	in->env.dialog_policy = r->spaces[0].dialog_policy;
	return 1;
}

void
act_instance_fini(struct act_instance *in)
{
	json_decref(in->config);
	in->config = NULL;
	cm_bundle_free(in->bundle);
	in->bundle = NULL;
}
