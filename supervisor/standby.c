/*
 * standby.c: the supervisor's side of warm standby browsers (standby.h).
 *
 * The handover is the supervisor's to decide, and it decides in its one
 * loop: the row of the standby is relabelled with the Space before the
 * adopt message is written, so sup_child_by_space finds it from then on
 * and no second actor can start for the Space, whatever the standby does
 * next.  Should the standby die before it reads the message, or at any
 * point after, the row is an ordinary actor row that died: its lost task
 * (if any) is finalised and it restarts with --space, launching cold.
 */
#include "standby.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "status.h"
#include "sup.h"

bool
sup_standby_fits(const struct cm_config *cfg, const struct pr_instance *in)
{
	return cfg->warm_standby &&
	       cm_driver_parse(in->driver) == CM_DRIVER_MANAGED &&
	       cm_instance_status_parse(in->status) == CM_INSTANCE_READY &&
	       cm_profile_mode_parse(in->profile_mode) ==
	           CM_PROFILE_EPHEMERAL &&
	       in->host != NULL && strcmp(in->host, cfg->host_id) == 0;
}

static void
standby_start(struct sup *s, const char *instance_id)
{
	struct sup_child *ch = sup_child_add(&s->kids, SUP_ACTOR, NULL);

	if (ch == NULL)
		return;
	ch->standby = true;
	snprintf(ch->instance_id, sizeof(ch->instance_id), "%s", instance_id);
	sup_start_child(s, ch);
}

/* A standby whose instance no longer wants one goes (once reaped). */
static void
standby_stop(struct sup *s, struct sup_child *ch)
{
	if (ch->pid <= 0) {
		sup_child_remove(&s->kids, ch);
		return;
	}
	if (ch->state != SUP_STOPPING) {
		ch->state = SUP_STOPPING;
		kill(ch->pid, SIGTERM);
	}
}

static const struct pr_instance *
listed(const struct pr_rep *r, const char *instance_id)
{
	for (size_t i = 0; i < r->n_instances; i++)
		if (r->instances[i].browser_instance_id != NULL &&
		    strcmp(r->instances[i].browser_instance_id, instance_id) ==
		        0)
			return &r->instances[i];
	return NULL;
}

void
sup_standby_sync(struct sup *s, const struct pr_rep *r)
{
	bool complete = r->n_instances < CM_ADMIN_LIST_MAX;

	if (s->stop)
		return;
	for (size_t i = 0; i < r->n_instances; i++) {
		const struct pr_instance *in = &r->instances[i];

		/* An instance with any actor row is taken care of: its
		 * standby, or the actor of a Space on it (a reply older than
		 * that Space may still call the instance idle). */
		if (in->browser_instance_id == NULL || in->in_use ||
		    !sup_standby_fits(&s->cfg, in) ||
		    sup_child_by_instance(&s->kids, in->browser_instance_id) !=
		        NULL)
			continue;
		standby_start(s, in->browser_instance_id);
	}
	/* From the end: a stop may remove the row. */
	for (size_t i = s->kids.n; i-- > 0;) {
		struct sup_child *ch = s->kids.v[i];
		const struct pr_instance *in;

		if (!ch->standby)
			continue;
		in = listed(r, ch->instance_id);
		if ((in == NULL && complete) ||
		    (in != NULL && !sup_standby_fits(&s->cfg, in)))
			standby_stop(s, ch);
	}
}

bool
sup_standby_adopt(struct sup *s, const char *space_id, const char *instance_id)
{
	struct sup_child *ch;

	/* Without warm standby no row is one: no walk of the rows. */
	if (!s->cfg.warm_standby || instance_id == NULL ||
	    instance_id[0] == '\0' ||
	    (ch = sup_child_by_instance(&s->kids, instance_id)) == NULL ||
	    !ch->standby)
		return false;
	if (ch->pid <= 0 || ch->state == SUP_STOPPING) {
		/* Resting or going: the Space starts cold.  One that is
		 * going is removed when it is reaped. */
		if (ch->pid <= 0)
			sup_child_remove(&s->kids, ch);
		return false;
	}
	if (sup_child_adopt(ch, space_id) != 0)
		cm_warnx("supervisor: standby %d did not take space %s; its "
		         "actor starts again",
		    (int)ch->pid, space_id);
	else
		cm_debug("supervisor: space %s goes to standby %d", space_id,
		    (int)ch->pid);
	return true;
}

void
sup_standby_died(
    struct sup *s, struct sup_child *ch, bool exited, int code, int64_t now)
{
	int64_t delay;

	if (exited && code == 0) {
		sup_child_remove(&s->kids, ch);
		return;
	}
	cm_warnx("supervisor: standby of instance %s died (%s %d)",
	    ch->instance_id, exited ? "exit" : "signal", code);
	ch->state = SUP_BACKOFF;
	ch->restarts++;
	if (sup_policy_exit(&sup_policy_actor, &ch->history, now, exited, code,
	        &delay) == SUP_RESTART) {
		ch->restart_at_ms = now + delay;
		return;
	}
	/* A crash loop: no Space to mark, so the instance rests. */
	cm_warnx("supervisor: standby of instance %s keeps failing; none for "
	         "%d ms",
	    ch->instance_id, CM_SUP_STANDBY_REST_MS);
	ch->restart_at_ms = now + CM_SUP_STANDBY_REST_MS;
	ch->history.n = 0;
}
