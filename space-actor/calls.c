/*
 * calls.c: an actor's store calls (see loop.h).  One call is under way at
 * a time, on one asynchronous handle whose fd the loop polls; what must
 * be recorded goes first, in order (what the page did during a task
 * before the task's outcome, a cancel request before the cancelled
 * outcome, an outcome before the next claim, a Space's error after the
 * task's outcome).  A write keeps its op_id across attempts (common/rpc)
 * and across retries after an error reply, so the store applies it once.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "loop.h"

static void
req_init(struct pr_req *q, enum pr_op op)
{
	memset(q, 0, sizeof(*q));
	q->op = op;
}

/*
 * An error reply worth asking again (the store was busy or failed): the
 * write stays pending, with its op_id, and goes again shortly.  Returns
 * true when r is one.
 */
static bool
retry_later(struct actor *a, const struct pr_rep *r)
{
	if (r->err != CM_E_STORE_UNAVAILABLE && r->err != CM_E_INTERNAL)
		return false;
	a->retry_at_ms = cm_mono_ms() + CM_ACTOR_RETRY_MS;
	return true;
}

static void
on_claim(struct actor *a, const struct pr_rep *r)
{
	if (r->err != CM_OK)
		return; /* the idle timer asks again */
	if (r->close_requested ||
	    (r->n_spaces == 1 &&
	        cm_space_status_is(r->spaces[0].status, CM_SPACE_CLOSED)))
		a->closing = true;
	if (r->n_tasks == 1) {
		act_task_start(a, &r->tasks[0], r->args);
		return;
	}
	/* Held by the store until its wait ran out: asked again at once, so
	 * that one is always held (CM_CLAIM_WAIT_MS). */
	if (cm_mono_ms() - a->claim_at_ms >= CM_CLAIM_WAIT_MS / 2)
		a->next_claim_ms = cm_mono_ms();
}

static void
on_heartbeat(struct actor *a, const struct pr_rep *r)
{
	if (r->err == CM_E_LEASE_EXPIRED || r->err == CM_E_NOT_FOUND) {
		/* Finalised without us: stop working on it, report nothing. */
		cm_warnx("actor: lost the lease on %s", a->task_id);
		if (!a->outcome.pending && a->cleanup == CLEAN_NONE) {
			a->ops->cancel(a->drv);
			if (a->ops->reset(a->drv) == 1)
				a->cleanup = CLEAN_QUIET;
		} else if (a->cleanup != CLEAN_NONE) {
			a->cleanup = CLEAN_QUIET; /* nothing to record now */
		}
		act_task_drop(a);
		a->need_claim = true;
		return;
	}
	if (r->err != CM_OK)
		return; /* the lease outlives a few missed beats */
	if (r->cancel_requested)
		a->cancel_wanted = a->cancel_on_record = true;
	if (r->close_requested)
		a->closing = true;
}

static void
on_cancel(struct actor *a, const struct pr_rep *r)
{
	if (retry_later(a, r))
		return;
	a->cancel.pending = false;
	if (r->err != CM_OK) {
		/* The finish says what became of the task. */
		cm_warnx(
		    "actor: cancel of %s: %s", a->task_id, cm_err_code(r->err));
		return;
	}
	a->cancel_on_record = true;
}

static void
on_finish(struct actor *a, const struct pr_rep *r)
{
	if (retry_later(a, r))
		return;
	if (r->err == CM_E_INVALID_REQUEST &&
	    a->out_status == CM_TASK_CANCELLED && !a->cancel_on_record) {
		/* The store has no cancel request for the task: record one
		 * (the store refuses a cancelled outcome without it). */
		act_write_begin(&a->cancel);
		return;
	}
	if (r->err == CM_E_INVALID_REQUEST) {
		/* A bug: the outcome will never be taken.  Exiting non-zero
		 * makes the supervisor finalise the task. */
		cm_warnx("actor: the store refused the outcome of %s: %s",
		    a->task_id, r->msg ? r->msg : cm_err_code(r->err));
		a->failed = true;
	} else if (r->err != CM_OK && r->err != CM_E_LEASE_EXPIRED) {
		cm_warnx(
		    "actor: finish of %s: %s", a->task_id, cm_err_code(r->err));
	}
	act_task_drop(a);
	if (r->close_requested)
		a->closing = true;
	/* The next claim goes at once: it takes the task queued meanwhile,
	 * or the store holds it until one is submitted (CM_CLAIM_WAIT_MS). */
	a->need_claim = true;
	a->next_claim_ms = cm_mono_ms() + CM_ACTOR_IDLE_POLL_MS;
}

static void
on_mark(struct actor *a, struct act_write *w, const struct pr_rep *r)
{
	if (retry_later(a, r))
		return;
	w->pending = false;
	if (r->err != CM_OK) {
		cm_warnx("actor: marking space %s: %s", a->space_id,
		    cm_err_code(r->err));
		a->failed = true;
	}
}

void
act_blocked_add(struct actor *a, const char *host, const char *reason)
{
	int64_t now = cm_mono_ms();
	struct act_blocked *b;

	for (int k = 0; k < a->n_blocked; k++)
		if (a->blocked[k].reason == reason &&
		    strcmp(a->blocked[k].host, host) == 0)
			return;
	/* A browser retries what was refused: one event for a host and
	 * reason per CM_ACTOR_BLOCKED_REPEAT_MS. */
	for (int k = 0; k < CM_ACTOR_BLOCKED_MAX; k++) {
		struct act_blocked *r = &a->recent[k];

		if (r->reason == reason && strcmp(r->host, host) == 0 &&
		    now - r->at < CM_ACTOR_BLOCKED_REPEAT_MS)
			return;
	}
	if (a->n_blocked == CM_ACTOR_BLOCKED_MAX) {
		cm_debug(
		    "actor: space %s: egress refused %s (%s), not recorded",
		    a->space_id, host, reason);
		return;
	}
	b = &a->blocked[a->n_blocked++];
	snprintf(b->host, sizeof(b->host), "%s", host);
	b->reason = reason;
	b->at = now;
	cm_uuid7(b->op_id);
	a->recent[a->n_recent++ % CM_ACTOR_BLOCKED_MAX] = *b;
}

static void
on_blocked(struct actor *a, const struct pr_rep *r)
{
	if (retry_later(a, r))
		return;
	if (r->err != CM_OK)
		cm_warnx("actor: network_blocked of space %s: %s", a->space_id,
		    cm_err_code(r->err));
	memmove(&a->blocked[0], &a->blocked[1],
	    (size_t)(--a->n_blocked) * sizeof(a->blocked[0]));
}

static void
on_page_event(struct actor *a, const struct pr_rep *r)
{
	if (retry_later(a, r))
		return;
	/* Refused (a bug): nothing would make it go in. */
	if (r->err != CM_OK)
		cm_warnx("actor: %s event of space %s: %s",
		    cm_event_kind_name(a->page.ev[0].kind), a->space_id,
		    r->msg ? r->msg : cm_err_code(r->err));
	act_page_log_pop(&a->page);
}

/* Takes the outcome of the call under way, if it has ended. */
void
act_calls_take(struct actor *a)
{
	enum act_call_kind kind = a->inflight;
	struct pr_rep r;

	if (kind == CALL_NONE || !cm_rpc_async_take(a->call, &r, NULL))
		return;
	a->inflight = CALL_NONE;
	switch (kind) {
	case CALL_CLAIM:
		on_claim(a, &r);
		break;
	case CALL_HEARTBEAT:
		on_heartbeat(a, &r);
		break;
	case CALL_CANCEL:
		on_cancel(a, &r);
		break;
	case CALL_FINISH:
		on_finish(a, &r);
		break;
	case CALL_MARK_ERROR:
		on_mark(a, &a->mark_error, &r);
		break;
	case CALL_MARK_CLOSED:
		on_mark(a, &a->mark_closed, &r);
		break;
	case CALL_BLOCKED:
		on_blocked(a, &r);
		break;
	case CALL_PAGE_EVENT:
		on_page_event(a, &r);
		break;
	case CALL_FILE_GET:
		if (!retry_later(a, &r))
			act_upload_got(a, &r);
		break;
	case CALL_NONE:
		break;
	}
	pr_rep_free(&r);
}

static void
call_start(struct actor *a, enum act_call_kind kind, const struct pr_req *q,
    int attempt_ms, int attempts)
{
	enum cm_err e = cm_rpc_async_start(a->call, q, attempt_ms, attempts);

	if (e == CM_E_STORE_UNAVAILABLE) {
		/* nng had no context for it: try again shortly. */
		a->retry_at_ms = cm_mono_ms() + CM_ACTOR_RETRY_MS;
		return;
	}
	if (e != CM_OK) {
		/* Encoding failed: a bug, logged by rpc; nothing to wait on. */
		a->failed = a->stopping = true;
		a->stop_deadline_ms = cm_mono_ms();
		return;
	}
	a->inflight = kind;
}

/* Starts the next store call, in order of what must be recorded first. */
void
act_calls_next(struct actor *a)
{
	int64_t now = cm_mono_ms();
	struct pr_req q;
	bool beat_due;

	if (a->inflight != CALL_NONE || now < a->retry_at_ms)
		return;
	beat_due = a->have_task && !a->outcome.pending && !a->stopping &&
	           now >= a->next_heartbeat_ms;
	if (a->page.n > 0 && !beat_due) {
		/* First: what the page did during a task goes in before the
		 * task's cancel and outcome, between its started and its end.
		 * A heartbeat that is due goes before it: a busy page never
		 * costs the lease. */
		req_init(&q, PR_OP_SPACE_PAGE_EVENT);
		q.op_id = a->page.ev[0].op_id;
		q.space_id = a->space_id;
		q.kind = cm_event_kind_name(a->page.ev[0].kind);
		q.payload = a->page.ev[0].payload;
		q.task_id = a->page.ev[0].task_id[0] != '\0'
		                ? a->page.ev[0].task_id
		                : NULL;
		call_start(a, CALL_PAGE_EVENT, &q, CM_ACTOR_ATTEMPT_MS, 0);
	} else if (a->have_task && a->cancel.pending) {
		req_init(&q, PR_OP_TASK_CANCEL);
		q.op_id = a->cancel.op_id;
		q.workspace_id = a->inst.workspace_id;
		q.space_id = a->space_id;
		q.task_id = a->task_id;
		call_start(a, CALL_CANCEL, &q, CM_ACTOR_ATTEMPT_MS, 0);
	} else if (a->have_task && a->outcome.pending) {
		req_init(&q, PR_OP_ACTOR_FINISH);
		q.op_id = a->outcome.op_id;
		q.task_id = a->task_id;
		q.lease_holder = a->holder;
		q.status = cm_task_status_name(a->out_status);
		q.result = a->out_result;
		if (a->art.artifact != NULL) {
			q.artifact_name = a->art.artifact_name;
			q.mime = a->art.artifact_mime;
			q.artifact.p = a->art.artifact;
			q.artifact.n = a->art.artifact_len;
		}
		q.error_code = a->out_code;
		if (a->out_code != NULL)
			q.error_message = a->out_message ? a->out_message : "";
		call_start(a, CALL_FINISH, &q, CM_ACTOR_ATTEMPT_MS, 0);
	} else if (a->mark_error.pending) {
		req_init(&q, PR_OP_SPACE_MARK_ERROR);
		q.op_id = a->mark_error.op_id;
		q.space_id = a->space_id;
		q.error_code = a->error_code;
		if (a->instance_down)
			q.instance_status =
			    cm_instance_status_name(CM_INSTANCE_UNAVAILABLE);
		call_start(a, CALL_MARK_ERROR, &q, CM_ACTOR_ATTEMPT_MS, 0);
	} else if (a->have_task && !a->stopping &&
	           now >= a->next_heartbeat_ms) {
		a->next_heartbeat_ms = now + CM_HEARTBEAT_MS;
		req_init(&q, PR_OP_ACTOR_HEARTBEAT);
		q.task_id = a->task_id;
		q.lease_holder = a->holder;
		call_start(a, CALL_HEARTBEAT, &q, CM_ACTOR_ONE_SHOT_MS, 1);
	} else if (a->have_task && !a->outcome.pending && !a->stopping &&
	           act_upload_next(a) != NULL) {
		/* An upload's next file, before its call starts: one
		 * attempt, asked again after an error reply (retry_later)
		 * while the task still runs, so a slow store never holds the
		 * handle past the task's end. */
		req_init(&q, PR_OP_SPACE_FILE_GET);
		q.space_id = a->space_id;
		q.name = act_upload_next(a);
		call_start(a, CALL_FILE_GET, &q, CM_ACTOR_ATTEMPT_MS, 1);
	} else if (a->n_blocked > 0 && !a->stopping && !a->retiring) {
		/* After the lease is renewed: a page that keeps meeting
		 * refusals must not starve the heartbeat. */
		req_init(&q, PR_OP_SPACE_NETWORK_BLOCKED);
		q.op_id = a->blocked[0].op_id;
		q.space_id = a->space_id;
		q.host = a->blocked[0].host;
		q.error_code = a->blocked[0].reason;
		call_start(a, CALL_BLOCKED, &q, CM_ACTOR_ATTEMPT_MS, 0);
	} else if (a->have_task) {
		return;
	} else if (a->stopping || a->retiring) {
		return;
	} else if (a->closing) {
		if (!a->mark_closed.pending)
			return;
		req_init(&q, PR_OP_SPACE_MARK_CLOSED);
		q.op_id = a->mark_closed.op_id;
		q.space_id = a->space_id;
		call_start(a, CALL_MARK_CLOSED, &q, CM_ACTOR_ATTEMPT_MS, 0);
	} else if (a->cleanup != CLEAN_NONE) {
		return; /* the runtime is not at rest yet */
	} else if (a->need_claim || now >= a->next_claim_ms) {
		/* The store holds a claim that finds nothing up to wait_ms,
		 * and answers it with the task submitted meanwhile. */
		a->need_claim = false;
		a->next_claim_ms = now + CM_ACTOR_IDLE_POLL_MS;
		a->claim_at_ms = now;
		req_init(&q, PR_OP_ACTOR_CLAIM);
		q.space_id = a->space_id;
		q.lease_holder = a->holder;
		q.wait_ms = CM_CLAIM_WAIT_MS;
		call_start(a, CALL_CLAIM, &q,
		    CM_CLAIM_WAIT_MS + CM_ACTOR_ONE_SHOT_MS, 1);
	}
}

/*
 * Abandons the call under way (the actor stops).  A claim whose answer
 * never came may have taken a task (claim_unheard); the store drops one
 * it holds, unanswered, once the actor's pipe closes.
 */
void
act_calls_abandon(struct actor *a)
{
	if (a->inflight == CALL_NONE)
		return;
	if (a->inflight == CALL_CLAIM)
		a->claim_unheard = true;
	cm_rpc_async_close(a->call);
	a->call = NULL;
	a->inflight = CALL_NONE;
}

/*
 * One store call outside the loop (before the runtime is open): waits for
 * its outcome while watching the signalfd.  Returns 1 with *r filled (free
 * with pr_rep_free), 0 when SIGTERM or SIGINT came first.
 */
static int
call_wait(struct actor *a, const struct pr_req *q, int attempt_ms, int attempts,
    struct pr_rep *r)
{
	struct pollfd pfd[2];
	enum cm_err e;

	while ((e = cm_rpc_async_start(a->call, q, attempt_ms, attempts)) ==
	       CM_E_STORE_UNAVAILABLE) {
		pfd[0].fd = a->sig_fd;
		pfd[0].events = POLLIN;
		if (poll(pfd, 1, CM_ACTOR_RETRY_MS) > 0)
			return 0;
	}
	if (e != CM_OK) {
		memset(r, 0, sizeof(*r));
		r->err = e;
		return 1;
	}
	pfd[0].fd = cm_rpc_async_fd(a->call);
	pfd[0].events = POLLIN;
	pfd[1].fd = a->sig_fd;
	pfd[1].events = POLLIN;
	while (!cm_rpc_async_take(a->call, r, NULL)) {
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			cm_warn("actor: poll");
		if (pfd[1].revents & POLLIN)
			return 0; /* the call is abandoned with the handle */
	}
	return 1;
}

/*
 * Loads the Space and its instance, asking until the store answers.
 * Returns 1 ready to run, 0 nothing to do (the Space is closed or in
 * error, or a stop signal came first), -1 failure.
 */
int
act_calls_load(struct actor *a)
{
	struct pr_req q;
	char err[CM_ERROR_MESSAGE_MAX + 1];
	int rc;

	req_init(&q, PR_OP_ACTOR_LOAD);
	q.space_id = a->space_id;
	/* Stopped before it held anything: nothing is left unrecorded. */
	if (call_wait(a, &q, CM_ACTOR_ATTEMPT_MS, 0, &a->load) == 0)
		return 0;
	if (a->load.err == CM_E_NOT_FOUND)
		return 0;
	if (a->load.err != CM_OK) {
		cm_warnx("actor: cannot load space %s: %s", a->space_id,
		    cm_err_code(a->load.err));
		return -1;
	}
	/* Another host's instance is that host's to run: started here by
	 * mistake, this actor leaves without touching the Space. */
	if (a->load.n_instances == 1 && a->load.instances[0].host != NULL &&
	    strcmp(a->load.instances[0].host, a->cfg->host_id) != 0) {
		cm_warnx("actor: space %s: its instance is on another host",
		    a->space_id);
		return 0;
	}
	rc = act_instance_init(
	    &a->inst, &a->load, a->space_id, a->cfg, err, sizeof(err));
	if (rc < 0)
		cm_warnx("actor: space %s: %s", a->space_id, err);
	a->closing = rc > 0 && a->inst.close_requested;
	return rc;
}

/* The runtime cannot be used: the Space goes to error.  Returns 0 once
 * recorded, -1 otherwise. */
int
act_calls_mark_unusable(struct actor *a)
{
	struct pr_req q;
	struct pr_rep r;
	int rc = -1;

	req_init(&q, PR_OP_SPACE_MARK_ERROR);
	q.space_id = a->space_id;
	q.error_code = "runtime_not_ready";
	if (call_wait(a, &q, CM_ACTOR_ATTEMPT_MS, 0, &r) == 0)
		return -1;
	if (r.err == CM_OK)
		rc = 0;
	pr_rep_free(&r);
	return rc;
}
