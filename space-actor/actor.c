/*
 * actor.c: the loop of one Space's executor.
 *
 * States: idle (polling for a task), running (one driver call in flight,
 * its lease renewed), recording (the call has ended and its outcome goes
 * to the store), closing.  Pub/sub notices (queued, cancel_requested,
 * close_requested) only make it react sooner: a timer asks the store
 * anyway, so a lost message costs latency, never correctness.
 *
 * The loop never waits on the store.  Every store call goes through one
 * asynchronous handle (common/rpc.h) whose fd the loop polls with the wake
 * pipe, the signalfd and the driver's fds, so a store that is slow,
 * stopped or gone delays only what needs its answer: the driver keeps
 * being stepped.  One call is under way at a time, and what is recorded
 * goes in order: a cancel request before the cancelled outcome, an
 * outcome before the next claim.  Each recording call keeps its op_id
 * across attempts and retries, so the store applies it once.
 */
#include "actor.h"

#include <errno.h>
#include <nng/nng.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "clock.h"
#include "driver.h"
#include "ids.h"
#include "instance.h"
#include "json.h"
#include "log.h"
#include "rpc.h"

/* The store call under way, if any. */
enum act_call_kind {
	CALL_NONE,
	CALL_CLAIM,
	CALL_HEARTBEAT,
	CALL_CANCEL,
	CALL_FINISH,
	CALL_MARK_ERROR,
	CALL_MARK_CLOSED,
};

/* A write the store has not confirmed yet; its op_id is kept for every
 * attempt and every retry after an error reply. */
struct act_write {
	bool pending;
	char op_id[CM_UUID_LEN];
};

struct actor {
	const struct cm_config *cfg;
	char space_id[CM_ID_MAX + 1];
	char holder[CM_ID_MAX + 1];
	nng_socket req;
	struct cm_rpc_async *call;
	enum act_call_kind inflight;
	int64_t retry_at_ms; /* no new call before (after an error reply) */
	int wake_fd;         /* -1: no supervisor, timers only */
	int sig_fd;

	struct pr_rep load; /* owns the strings inst.env points at */
	struct act_instance inst;
	const struct act_driver_ops *ops;
	struct act_driver *drv;

	bool need_claim;
	int64_t next_claim_ms;
	bool closing;
	bool stopping;
	int64_t stop_deadline_ms;
	bool failed; /* something is unrecorded: exit non-zero */

	/* The task held: running while !outcome.pending, then recording. */
	bool have_task;
	bool cancel_wanted;
	bool cancel_on_record; /* the store has the task's cancel request */
	char task_id[CM_ID_MAX + 1];
	char request_id[CM_ID_MAX + 1];
	char capability[CM_CAPABILITY_MAX + 1];
	json_t *args;
	int64_t deadline_ms;
	int64_t next_heartbeat_ms;

	struct act_write cancel; /* task.cancel, before a cancelled outcome */
	struct act_write outcome;
	const char *out_status;
	const char *out_code; /* a static code string, failed only */
	char *out_result;     /* redacted, malloc'd */
	char *out_message;    /* redacted, malloc'd */

	struct act_write mark_error;
	const char *error_code;
	struct act_write mark_closed;
	bool close_begun; /* mark_closed was asked for (once) */
};

static void
req_init(struct pr_req *q, enum pr_op op)
{
	memset(q, 0, sizeof(*q));
	q->op = op;
}

static void
write_begin(struct act_write *w)
{
	w->pending = true;
	cm_uuid7(w->op_id);
}

/* Cuts s to at most max bytes without splitting a UTF-8 sequence. */
static void
utf8_cut(char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max)
		return;
	while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
		max--;
	s[max] = '\0';
}

static void
drop_task(struct actor *a)
{
	a->have_task = false;
	a->cancel_wanted = false;
	a->cancel_on_record = false;
	a->cancel.pending = false;
	a->outcome.pending = false;
	free(a->out_result);
	free(a->out_message);
	a->out_result = a->out_message = NULL;
	json_decref(a->args);
	a->args = NULL;
}

/*
 * The running task has ended: its outcome waits to be recorded (the next
 * call the loop makes).  Result and message pass through the one
 * redactor, with the instance's literal secrets, first.
 */
static void
record_outcome(struct actor *a, const char *status, const char *result,
    enum cm_err err, const char *message)
{
	const struct cm_secrets *sec = &a->inst.secrets;

	a->out_status = status;
	a->out_code = strcmp(status, "failed") == 0 ? cm_err_code(err) : NULL;
	if (result != NULL)
		a->out_result = cm_redact_result(result, strlen(result), sec);
	if (a->out_code != NULL) {
		a->out_message = cm_redact_text(
		    message ? message : "", message ? strlen(message) : 0, sec);
		if (a->out_message != NULL)
			utf8_cut(a->out_message, CM_ERROR_MESSAGE_MAX);
	}
	write_begin(&a->outcome);
}

/* A URL argument outside the network policy fails before dispatch. */
static enum cm_err
check_hosts(struct actor *a, const json_t *args, char *bad, size_t badlen)
{
	const struct cm_capability *c =
	    cm_bundle_find(a->inst.bundle, a->capability);
	json_t *props =
	    c ? json_object_get(c->args_schema, "properties") : NULL;
	const char *key;
	json_t *schema;

	json_object_foreach(props, key, schema)
	{
		const char *fmt =
		    json_string_value(json_object_get(schema, "format"));
		const char *url = json_string_value(json_object_get(args, key));

		if (fmt == NULL || url == NULL || strcmp(fmt, "http-url") != 0)
			continue;
		if (cm_policy_check_url(&a->inst.policy, url) != CM_OK) {
			snprintf(bad, badlen,
			    "argument %s is not allowed by the "
			    "instance's network policy",
			    key);
			return CM_E_HOST_NOT_ALLOWED;
		}
	}
	return CM_OK;
}

static void
start_task(struct actor *a, const struct pr_task *t, const char *args)
{
	struct act_call call;
	char err[CM_ERROR_MESSAGE_MAX + 1];
	enum cm_err e;

	snprintf(a->task_id, sizeof(a->task_id), "%s", t->task_id);
	snprintf(a->request_id, sizeof(a->request_id), "%s", t->request_id);
	snprintf(a->capability, sizeof(a->capability), "%s", t->capability);
	a->have_task = true;
	/* A wake-up seen while claiming was about this task: only one task
	 * of the Space is queued or running at a time. */
	a->need_claim = false;
	a->cancel_wanted = a->cancel_on_record = t->cancel_requested;
	a->deadline_ms = cm_mono_ms() + t->timeout_ms;
	a->next_heartbeat_ms = cm_mono_ms() + CM_HEARTBEAT_MS;
	if (cm_json_parse(args ? args : "{}", args ? strlen(args) : 2,
	        CM_ARGS_MAX, CM_JSON_DEPTH_MAX, &a->args, err,
	        sizeof(err)) != 0) {
		record_outcome(
		    a, "failed", NULL, CM_E_RUNTIME_ERROR, "args unreadable");
		return;
	}
	if ((e = check_hosts(a, a->args, err, sizeof(err))) != CM_OK) {
		record_outcome(a, "failed", NULL, e, err);
		return;
	}
	if (a->stopping) {
		/* Claimed as the stop came: cancelled, never run. */
		if (!a->cancel_on_record)
			write_begin(&a->cancel);
		record_outcome(a, "cancelled", NULL, CM_OK, NULL);
		return;
	}
	memset(&call, 0, sizeof(call));
	call.task_id = a->task_id;
	call.request_id = a->request_id;
	call.capability = a->capability;
	call.args = a->args;
	call.deadline_ms = a->deadline_ms;
	if (a->ops->start(a->drv, &call) != 0)
		record_outcome(a, "failed", NULL, CM_E_RUNTIME_ERROR,
		    "the runtime refused the call");
}

/*
 * Aborts the running call and cleans up, and only then is the task
 * cancelled (SPEC 3 rule 7).  A runtime that cannot be cleaned up leaves
 * the Space in error.  Stopping by signal, the cancel is recorded first
 * when the store does not have it yet, so the task ends as cancelled, in
 * order.
 */
static void
cancel_running(struct actor *a)
{
	if (a->ops->cancel(a->drv) != 0 || a->ops->reset(a->drv) != 0) {
		a->error_code = "runtime_crashed";
		write_begin(&a->mark_error);
		a->closing = true;
	}
	if (!a->cancel_on_record)
		write_begin(&a->cancel);
	record_outcome(a, "cancelled", NULL, CM_OK, NULL);
}

static void
time_out_running(struct actor *a)
{
	char msg[CM_CAPABILITY_MAX + CM_ERROR_CODE_MAX];

	snprintf(msg, sizeof(msg), "%s did not finish in time", a->capability);
	a->ops->cancel(a->drv);
	a->ops->reset(a->drv);
	record_outcome(a, "failed", NULL, CM_E_TASK_TIMEOUT, msg);
}

/* --- store calls ---------------------------------------------------- */

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
	    (r->n_spaces == 1 && strcmp(r->spaces[0].status, "closed") == 0))
		a->closing = true;
	if (r->n_tasks != 1)
		return;
	start_task(a, &r->tasks[0], r->args);
}

static void
on_heartbeat(struct actor *a, const struct pr_rep *r)
{
	if (r->err == CM_E_LEASE_EXPIRED || r->err == CM_E_NOT_FOUND) {
		/* Finalised without us: stop working on it, report nothing. */
		cm_warnx("actor: lost the lease on %s", a->task_id);
		if (!a->outcome.pending) {
			a->ops->cancel(a->drv);
			a->ops->reset(a->drv);
		}
		drop_task(a);
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
	    strcmp(a->out_status, "cancelled") == 0 && !a->cancel_on_record) {
		/* The store has no cancel request for the task: record one
		 * (the store refuses a cancelled outcome without it). */
		write_begin(&a->cancel);
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
	drop_task(a);
	if (r->close_requested)
		a->closing = true;
	/* The reply says whether a task waits: no claim that finds nothing.
	 * A wake-up that came while the finish was under way (a task queued
	 * once the finish committed) still counts. */
	a->need_claim = a->need_claim || r->task_queued;
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

/* Takes the outcome of the call under way, if it has ended. */
static void
take_reply(struct actor *a)
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
static void
next_call(struct actor *a)
{
	int64_t now = cm_mono_ms();
	struct pr_req q;

	if (a->inflight != CALL_NONE || now < a->retry_at_ms)
		return;
	if (a->have_task && a->cancel.pending) {
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
		q.status = a->out_status;
		q.result = a->out_result;
		q.error_code = a->out_code;
		if (a->out_code != NULL)
			q.error_message = a->out_message ? a->out_message : "";
		call_start(a, CALL_FINISH, &q, CM_ACTOR_ATTEMPT_MS, 0);
	} else if (a->mark_error.pending) {
		req_init(&q, PR_OP_SPACE_MARK_ERROR);
		q.op_id = a->mark_error.op_id;
		q.space_id = a->space_id;
		q.error_code = a->error_code;
		call_start(a, CALL_MARK_ERROR, &q, CM_ACTOR_ATTEMPT_MS, 0);
	} else if (a->have_task) {
		if (a->stopping || now < a->next_heartbeat_ms)
			return;
		a->next_heartbeat_ms = now + CM_HEARTBEAT_MS;
		req_init(&q, PR_OP_ACTOR_HEARTBEAT);
		q.task_id = a->task_id;
		q.lease_holder = a->holder;
		call_start(a, CALL_HEARTBEAT, &q, CM_ACTOR_ONE_SHOT_MS, 1);
	} else if (a->stopping) {
		return;
	} else if (a->closing) {
		if (!a->mark_closed.pending)
			return;
		req_init(&q, PR_OP_SPACE_MARK_CLOSED);
		q.op_id = a->mark_closed.op_id;
		q.space_id = a->space_id;
		call_start(a, CALL_MARK_CLOSED, &q, CM_ACTOR_ATTEMPT_MS, 0);
	} else if (a->need_claim || now >= a->next_claim_ms) {
		a->need_claim = false;
		a->next_claim_ms = now + CM_ACTOR_IDLE_POLL_MS;
		req_init(&q, PR_OP_ACTOR_CLAIM);
		q.space_id = a->space_id;
		q.lease_holder = a->holder;
		call_start(a, CALL_CLAIM, &q, CM_ACTOR_ONE_SHOT_MS, 1);
	}
}

/*
 * Abandons the call under way (the stop deadline passed).  A claim whose
 * answer never came may have taken a task: that counts as unrecorded.
 */
static void
abandon_call(struct actor *a)
{
	if (a->inflight == CALL_NONE)
		return;
	if (a->inflight == CALL_CLAIM)
		a->failed = true;
	cm_rpc_async_close(a->call);
	a->call = NULL;
	a->inflight = CALL_NONE;
}

/*
 * The supervisor writes a byte on the wake pipe when the store publishes
 * something this Space's actor acts on (a queued task, a cancel or close
 * request).  Running, the actor asks the store at once (a heartbeat)
 * whether the task is to be cancelled or the Space closed; otherwise it
 * claims once the outcome it may be recording is in.  The byte says only
 * "look now": the store says what.
 */
static void
drain_wake(struct actor *a)
{
	char buf[CM_ACTOR_WAKE_READ];

	while (read(a->wake_fd, buf, sizeof(buf)) > 0)
		;
	if (a->have_task && !a->outcome.pending)
		a->next_heartbeat_ms = cm_mono_ms();
	else
		a->need_claim = true;
}

static int64_t
min_wake(int64_t a, int64_t b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

/* True when nothing is left to do or to record. */
static bool
actor_done(struct actor *a)
{
	if (a->failed && a->stopping)
		return true;
	if (a->stopping && cm_mono_ms() >= a->stop_deadline_ms) {
		if (a->have_task || a->mark_error.pending)
			a->failed = true;
		abandon_call(a);
		return true;
	}
	if (a->inflight != CALL_NONE || a->have_task || a->mark_error.pending)
		return false;
	if (a->stopping)
		return true;
	return a->close_begun && !a->mark_closed.pending;
}

/* What the running task needs before the loop waits again. */
static void
advance_task(struct actor *a)
{
	if (!a->have_task || a->outcome.pending)
		return;
	/* Close and stop send the running task down the cancel path. */
	if (a->closing || a->stopping)
		a->cancel_wanted = true;
	if (a->cancel_wanted)
		cancel_running(a);
	else if (cm_mono_ms() >= a->deadline_ms)
		time_out_running(a);
}

static void
on_signal(struct actor *a)
{
	struct signalfd_siginfo si;

	if (read(a->sig_fd, &si, sizeof(si)) != sizeof(si) || a->stopping)
		return;
	a->stopping = true;
	a->stop_deadline_ms = cm_mono_ms() + CM_ACTOR_STOP_MS;
	/* A lease renewal is of no use any more: the handle is freed for
	 * the outcome at once. */
	if (a->inflight == CALL_HEARTBEAT) {
		abandon_call(a);
		if (cm_rpc_async_open(&a->call, a->req) != 0)
			a->failed = true;
	}
}

/*
 * Steps the driver after every poll, whatever the store is doing: its fds
 * are served even while an outcome is being recorded.  A call that ends
 * while the task runs (even as a stop signal arrives) is its outcome.
 */
static void
step_driver(struct actor *a, const struct pollfd *fds, int nfds)
{
	struct act_outcome out;

	memset(&out, 0, sizeof(out));
	if (a->ops->step(a->drv, fds, nfds, &out) != ACT_DONE)
		return;
	if (a->have_task && !a->outcome.pending) {
		if (out.err == CM_OK)
			record_outcome(a, "completed",
			    out.result ? out.result : "null", CM_OK, NULL);
		else
			record_outcome(a, "failed", NULL, out.err, out.message);
	}
	free(out.result);
}

/* One turn of the loop.  Returns 1 to go on, 0 when done. */
static int
actor_turn(struct actor *a)
{
	struct pollfd pfd[CM_ACTOR_POLLFDS + 3];
	int64_t wake = -1, drv_wake = -1, now;
	bool stepping;
	int ndrv, timeout;

	take_reply(a);
	if (a->closing && !a->stopping && !a->have_task && !a->close_begun) {
		a->close_begun = true;
		write_begin(&a->mark_closed);
	}
	advance_task(a);
	if (a->call != NULL)
		next_call(a);
	if (actor_done(a))
		return 0;

	stepping = a->have_task && !a->outcome.pending;
	now = cm_mono_ms();
	if (stepping)
		wake = a->deadline_ms;
	if (a->stopping)
		wake = min_wake(wake, a->stop_deadline_ms);
	/* The next call's time counts only while no call is under way. */
	if (a->inflight == CALL_NONE && a->retry_at_ms > now)
		wake = min_wake(wake, a->retry_at_ms);
	else if (a->inflight == CALL_NONE && stepping && !a->stopping)
		wake = min_wake(wake, a->next_heartbeat_ms);
	else if (a->inflight == CALL_NONE && !a->have_task && !a->closing &&
	         !a->stopping)
		wake = min_wake(wake, a->next_claim_ms);

	pfd[0].fd = a->wake_fd;
	pfd[0].events = POLLIN;
	pfd[1].fd = a->sig_fd;
	pfd[1].events = POLLIN;
	pfd[2].fd = a->inflight != CALL_NONE ? cm_rpc_async_fd(a->call) : -1;
	pfd[2].events = POLLIN;
	ndrv = a->ops->pollfds(a->drv, pfd + 3, CM_ACTOR_POLLFDS, &drv_wake);
	if (stepping)
		wake = min_wake(wake, drv_wake);
	timeout = wake < 0 ? -1 : wake <= now ? 0 : (int)(wake - now);
	if (poll(pfd, (nfds_t)(3 + ndrv), timeout) < 0 && errno != EINTR) {
		cm_warn("actor: poll");
		a->failed = true;
		return 0;
	}
	if (pfd[1].revents & POLLIN)
		on_signal(a);
	if (pfd[0].revents & POLLIN)
		drain_wake(a);
	step_driver(a, pfd + 3, ndrv);
	return 1;
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
static int
actor_load(struct actor *a)
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
	rc = act_instance_init(
	    &a->inst, &a->load, a->space_id, a->cfg, err, sizeof(err));
	if (rc < 0)
		cm_warnx("actor: space %s: %s", a->space_id, err);
	a->closing = rc > 0 && a->inst.close_requested;
	return rc;
}

/* The runtime cannot be used: the Space goes to error.  Returns 0 once
 * recorded, -1 otherwise. */
static int
mark_unusable(struct actor *a)
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

static void
notify_ready(int fd)
{
	static const char ready[] = "ready\n";

	if (fd < 0)
		return;
	if (write(fd, ready, sizeof(ready) - 1) < 0)
		cm_warn("actor: readiness notification");
	close(fd);
}

int
act_run(const struct cm_config *cfg, const char *space_id, int notify_fd,
    int wake_fd)
{
	struct actor a;
	char url[CM_PATH_MAX], err[CM_ERROR_MESSAGE_MAX + 1];
	sigset_t mask;
	int rc = 1, loaded;

	memset(&a, 0, sizeof(a));
	a.cfg = cfg;
	a.wake_fd = wake_fd;
	snprintf(a.space_id, sizeof(a.space_id), "%s", space_id);
	snprintf(a.holder, sizeof(a.holder), "actor-%ld-", (long)getpid());
	cm_uuid7(a.holder + strlen(a.holder));
	a.holder[CM_ID_MAX] = '\0';

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	if ((a.sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		cm_warn("actor: signalfd");
		return 1;
	}
	if (cm_ipc_url(url, sizeof(url), cfg->run_dir, "store.ipc") != 0 ||
	    cm_rpc_open(&a.req, url) != 0) {
		cm_warnx("actor: cannot reach the store");
		goto out;
	}
	if (cm_rpc_async_open(&a.call, a.req) != 0) {
		cm_warnx("actor: cannot make a store call handle");
		goto out;
	}
	if ((loaded = actor_load(&a)) <= 0) {
		rc = loaded == 0 ? 0 : 1;
		notify_ready(notify_fd);
		goto out;
	}
	if ((a.ops = act_driver_find(a.inst.env.driver)) == NULL ||
	    a.ops->open(&a.inst.env, &a.drv, err, sizeof(err)) != 0) {
		cm_warnx("actor: space %s: runtime %s unusable: %s", a.space_id,
		    a.inst.env.driver,
		    a.ops ? err : "no such driver in this build");
		a.ops = NULL;
		rc = mark_unusable(&a) == 0 ? 0 : 1;
		notify_ready(notify_fd);
		goto out;
	}
	notify_ready(notify_fd);
	cm_debug("actor: space %s ready (%s)", a.space_id, a.inst.env.driver);

	a.need_claim = true;
	while (actor_turn(&a))
		;
	a.ops->close(a.drv);
	a.drv = NULL;
	rc = a.failed ? 1 : 0;
	if (a.failed)
		cm_warnx("actor: space %s: stopping with an outcome unrecorded",
		    a.space_id);
out:
	if (a.ops != NULL && a.drv != NULL)
		a.ops->close(a.drv);
	drop_task(&a);
	cm_rpc_async_close(a.call);
	act_instance_fini(&a.inst);
	pr_rep_free(&a.load);
	nng_close(a.req);
	if (a.wake_fd >= 0)
		close(a.wake_fd);
	close(a.sig_fd);
	return rc;
}
