#include "storework.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "standby.h"
#include "status.h"

static void
req_init(struct pr_req *q, enum pr_op op)
{
	memset(q, 0, sizeof(*q));
	q->op = op;
}

/* A store call on an idle handle, made again until the store answers. */
static bool
store_start(struct cm_rpc_async *c, const struct pr_req *q)
{
	return cm_rpc_async_start(c, q, CM_SUP_STORE_ATTEMPT_MS, 0) == CM_OK;
}

void
sup_work_queue(
    struct sup *s, enum pr_op op, const char *space_id, const char *code)
{
	/* Crash-only: what the job would write is still due in the store
	 * (a running task's lease expires), so a restart loses nothing. */
	if (sup_jobs_push(&s->jobs, op, space_id, code) != 0)
		cm_fatalx("supervisor: out of memory");
}

static void
boot_advance(struct sup *s, enum sup_boot_step step, const struct pr_req *q)
{
	if (step == SUP_BOOT_CALL && store_start(s->boot_rpc, q))
		return;
	sup_boot_free(s->boot);
	s->boot = NULL;
	if (step == SUP_BOOT_DONE) {
		s->booted = true;
		/* Only now: the api's /readyz says ready once it runs, and
		 * the token file exists from here on. */
		sup_start_api(s);
		return;
	}
	s->boot_retry_at = cm_mono_ms() + CM_SUP_BOOT_RETRY_MS;
	cm_warnx("bootstrap: not finished; trying again in %d ms",
	    CM_SUP_BOOT_RETRY_MS);
}

void
sup_work_boot_kick(struct sup *s, int64_t now)
{
	struct pr_req q;

	if (s->booted || s->boot != NULL || !s->store_up ||
	    now < s->boot_retry_at)
		return;
	if (sup_boot_new(&s->boot, &s->cfg, s->kids.bin_dir) != 0) {
		s->boot_retry_at = now + CM_SUP_BOOT_RETRY_MS;
		return;
	}
	boot_advance(s, sup_boot_step(s->boot, NULL, &q), &q);
}

void
sup_work_boot_reply(struct sup *s)
{
	struct pr_rep r;
	struct pr_req q;

	if (s->boot == NULL || !cm_rpc_async_take(s->boot_rpc, &r, NULL))
		return;
	boot_advance(s, sup_boot_step(s->boot, &r, &q), &q);
	pr_rep_free(&r);
}

/* The fallback for lost notices: what should run, from the store, a page
 * at a time. */
void
sup_work_rescan(struct sup *s)
{
	struct pr_req q;

	if (cm_rpc_async_busy(s->scan_rpc)) {
		s->scan_again = true;
		return;
	}
	req_init(&q, PR_OP_SUP_LIST_ACTIVE);
	q.host = s->cfg.host_id;
	q.after_id = s->scan_after[0] ? s->scan_after : NULL;
	s->scan_jobs = s->jobs_done;
	if (!store_start(s->scan_rpc, &q))
		s->next_rescan = cm_mono_ms() + CM_SUP_RESCAN_MS;
}

/*
 * The first scan since this supervisor started, of a Space of its host
 * whose task is running and which has no actor of ours: that task's actor
 * was the supervisor's before, and died with it (PR_SET_PDEATHSIG), so
 * the task is lost.  It is finalised at once (failed with
 * outcome_unknown, or cancelled when a cancel was asked for), not once its
 * lease has run out, and the Space's actor starts when that is done, as after
 * an actor's crash (a row waiting to restart, held by the job).  True when so.
 */
static bool
boot_lost(struct sup *s, const struct pr_space *sp)
{
	struct sup_child *ch;

	if (s->running || !cm_space_status_is(sp->status, CM_SPACE_RUNNING) ||
	    sup_child_by_space(&s->kids, sp->space_id) != NULL ||
	    sup_jobs_pending(&s->jobs, sp->space_id) ||
	    (ch = sup_child_add(&s->kids, SUP_ACTOR, sp->space_id)) == NULL)
		return false;
	snprintf(ch->instance_id, sizeof(ch->instance_id), "%s",
	    sp->browser_instance_id);
	ch->state = SUP_BACKOFF;
	ch->restart_at_ms = cm_mono_ms();
	sup_work_queue(s, PR_OP_SUP_FINALIZE_LOST, sp->space_id, NULL);
	cm_info("supervisor: space %s: its task was running when this host's "
	        "spaced stopped; finalising it",
	    sp->space_id);
	return true;
}

static void
scan_page(struct sup *s, const struct pr_rep *r)
{
	for (size_t i = 0; i < r->n_spaces; i++) {
		const struct pr_space *sp = &r->spaces[i];

		if (!cm_space_status_is(sp->status, CM_SPACE_ERROR)) {
			if (!boot_lost(s, sp))
				sup_ensure_actor(
				    s, sp->space_id, sp->browser_instance_id);
			continue;
		}
		/* No actor serves a Space in error: close it on its behalf. */
		if (sp->close_requested &&
		    sup_child_by_space(&s->kids, sp->space_id) == NULL &&
		    !sup_jobs_pending(&s->jobs, sp->space_id))
			sup_work_queue(
			    s, PR_OP_SPACE_MARK_CLOSED, sp->space_id, NULL);
	}
}

void
sup_work_scan_reply(struct sup *s)
{
	struct pr_rep r;
	const char *last;

	if (!cm_rpc_async_take(s->scan_rpc, &r, NULL))
		return;
	if (r.err != CM_OK) {
		cm_warnx("supervisor: sup.list_active: %s", cm_err_code(r.err));
	} else if (s->scan_jobs != s->jobs_done) {
		/* A job ended since this page was asked for (a Space marked in
		 * error, say): the page may be stale.  Walk again. */
		s->scan_again = true;
	} else {
		scan_page(s, &r);
		last = r.n_spaces ? r.spaces[r.n_spaces - 1].space_id : NULL;
		/* A short page is the last; so is one whose last id does not
		 * move the cursor on (a store that ignores after_id). */
		if (r.n_spaces >= CM_ACTIVE_PAGE_MAX && last != NULL &&
		    strcmp(last, s->scan_after) > 0) {
			snprintf(
			    s->scan_after, sizeof(s->scan_after), "%s", last);
			pr_rep_free(&r);
			sup_work_rescan(s);
			return;
		}
		s->running = true;
	}
	pr_rep_free(&r);
	s->scan_after[0] = '\0';
	s->next_rescan = cm_mono_ms() + CM_SUP_RESCAN_MS;
	if (s->scan_again) {
		s->scan_again = false;
		sup_work_rescan(s);
	}
}

void
sup_work_sweep(struct sup *s)
{
	struct pr_req q;

	req_init(&q, PR_OP_SUP_SWEEP_LEASES);
	q.host = s->cfg.host_id;
	if (!store_start(s->sweep_rpc, &q))
		s->next_sweep = cm_mono_ms() + CM_SUP_SWEEP_MS;
}

void
sup_work_sweep_reply(struct sup *s)
{
	struct pr_rep r;

	if (!cm_rpc_async_take(s->sweep_rpc, &r, NULL))
		return;
	if (r.err == CM_OK && r.count > 0)
		cm_info("supervisor: %lld expired leases", (long long)r.count);
	pr_rep_free(&r);
	s->next_sweep = cm_mono_ms() + CM_SUP_SWEEP_MS;
}

void
sup_work_standby_scan(struct sup *s)
{
	struct pr_req q;

	req_init(&q, PR_OP_INSTANCE_LIST);
	if (!store_start(s->standby_rpc, &q))
		s->next_standby = cm_mono_ms() + CM_SUP_RESCAN_MS;
}

void
sup_work_standby_reply(struct sup *s)
{
	struct pr_rep r;

	if (!cm_rpc_async_take(s->standby_rpc, &r, NULL))
		return;
	if (r.err == CM_OK)
		sup_standby_sync(s, &r);
	else
		cm_warnx("supervisor: instance.list: %s", cm_err_code(r.err));
	pr_rep_free(&r);
	s->next_standby = cm_mono_ms() + CM_SUP_RESCAN_MS;
}

void
sup_work_jobs_reply(struct sup *s)
{
	struct sup_job done;

	if (sup_jobs_take(&s->jobs, cm_mono_ms(), &done))
		s->jobs_done++;
}
