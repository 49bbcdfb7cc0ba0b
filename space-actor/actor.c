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
 * asynchronous handle (common/rpc.h, driven by calls.c) whose fd the loop
 * polls with the wake pipe, the signalfd and the driver's fds, so a store
 * that is slow, stopped or gone delays only what needs its answer: the
 * driver keeps being stepped.
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

#include "browser.h"
#include "clock.h"
#include "drivers.h"
#include "json.h"
#include "log.h"
#include "loop.h"
#include "startup.h"

void
act_write_begin(struct act_write *w)
{
	w->pending = true;
	cm_uuid7(w->op_id);
}

void
act_task_drop(struct actor *a)
{
	a->have_task = false;
	a->cancel_wanted = false;
	a->cancel_on_record = false;
	a->cancel.pending = false;
	a->outcome.pending = false;
	free(a->out_result);
	free(a->out_message);
	a->out_result = a->out_message = NULL;
	free(a->art.artifact);
	memset(&a->art, 0, sizeof(a->art));
	act_upload_drop(a);
	json_decref(a->args);
	a->args = NULL;
}

/*
 * The running task has ended: its outcome waits to be recorded (the next
 * call the loop makes).  Result and message pass through the one
 * redactor, with the instance's literal secrets, first.
 */
static void
record_outcome(struct actor *a, enum cm_task_status status, const char *result,
    enum cm_err err, const char *message)
{
	const struct cm_secrets *sec = &a->inst.secrets;

	a->out_status = status;
	a->out_code = status == CM_TASK_FAILED ? cm_err_code(err) : NULL;
	if (result != NULL)
		a->out_result = cm_redact_result(result, strlen(result), sec);
	if (a->out_code != NULL)
		a->out_message = cm_redact_text_max(message ? message : "",
		    message ? strlen(message) : 0, sec, CM_ERROR_MESSAGE_MAX);
	act_write_begin(&a->outcome);
}

void
act_task_fail(struct actor *a, enum cm_err err, const char *message)
{
	record_outcome(a, CM_TASK_FAILED, NULL, err, message);
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

void
act_task_start(struct actor *a, const struct pr_task *t, const char *args)
{
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
		record_outcome(a, CM_TASK_FAILED, NULL, CM_E_RUNTIME_ERROR,
		    "args unreadable");
		return;
	}
	if ((e = check_hosts(a, a->args, err, sizeof(err))) != CM_OK) {
		record_outcome(a, CM_TASK_FAILED, NULL, e, err);
		return;
	}
	if (a->stopping) {
		/* Claimed as the stop came: cancelled, never run. */
		if (!a->cancel_on_record)
			act_write_begin(&a->cancel);
		record_outcome(a, CM_TASK_CANCELLED, NULL, CM_OK, NULL);
		return;
	}
	/* An upload's files are fetched first; its call starts after. */
	if (strcmp(a->capability, "upload") == 0) {
		act_upload_begin(a);
		return;
	}
	act_task_call(a);
}

void
act_task_call(struct actor *a)
{
	struct act_call call;

	memset(&call, 0, sizeof(call));
	call.task_id = a->task_id;
	call.request_id = a->request_id;
	call.capability = a->capability;
	call.args = a->args;
	call.deadline_ms = a->deadline_ms;
	call.upload_dir = a->up.dir;
	if (a->ops->start(a->drv, &call) != 0)
		record_outcome(a, CM_TASK_FAILED, NULL, CM_E_RUNTIME_ERROR,
		    "the runtime refused the call");
}

/*
 * The runtime cannot be used any more (a browser that failed to start
 * CM_BROWSER_LAUNCH_TRIES times in a row): once the task's outcome is
 * recorded, the Space goes to error and its instance out of service.
 */
static void
runtime_unusable(struct actor *a)
{
	if (a->mark_error.pending)
		return;
	a->error_code = cm_err_code(CM_E_RUNTIME_CRASHED);
	a->instance_down = true;
	act_write_begin(&a->mark_error);
	a->retiring = true;
}

/*
 * The runtime is at rest after a cancel (usable or not): only now is the
 * task cancelled, since a running task is never reported cancelled before
 * its executor has aborted the call and cleaned up.  A runtime that cannot
 * be cleaned up leaves the Space in error.  Stopping by signal, the cancel
 * is recorded first when the store does not have it yet, so the task ends
 * as cancelled, in order.
 */
static void
cancelled(struct actor *a, bool usable)
{
	if (!usable)
		runtime_unusable(a);
	if (!a->cancel_on_record)
		act_write_begin(&a->cancel);
	record_outcome(a, CM_TASK_CANCELLED, NULL, CM_OK, NULL);
}

static void
timed_out(struct actor *a)
{
	char msg[CM_CAPABILITY_MAX + CM_ERROR_CODE_MAX];

	snprintf(msg, sizeof(msg), "%s did not finish in time", a->capability);
	record_outcome(a, CM_TASK_FAILED, NULL, CM_E_TASK_TIMEOUT, msg);
}

/*
 * Abandons the running call and begins the runtime's reset; the outcome
 * (why) is recorded once the reset is over, which may be at once or in a
 * later step of the loop.
 */
static void
clean_up_running(struct actor *a, int why)
{
	int rc = a->ops->cancel(a->drv) != 0 ? -1 : a->ops->reset(a->drv);

	if (rc == 1) {
		a->cleanup = why;
		return;
	}
	if (why == CLEAN_CANCEL)
		cancelled(a, rc == 0);
	else
		timed_out(a);
}

/* A reset begun by clean_up_running (or a lost lease) is over. */
static void
clean_done(struct actor *a, bool usable)
{
	int why = a->cleanup;

	a->cleanup = CLEAN_NONE;
	if (why == CLEAN_CANCEL && a->have_task && !a->outcome.pending)
		cancelled(a, usable);
	else if (why == CLEAN_TIMEOUT && a->have_task && !a->outcome.pending)
		timed_out(a);
}

/*
 * The supervisor writes a byte on the wake pipe when the store publishes
 * something this Space's actor acts on (a queued task, a cancel or close
 * request).  Running, the actor asks the store at once (a heartbeat)
 * whether the task is to be cancelled or the Space closed, but not for a
 * queued task, which the claim after its finish takes; otherwise it claims
 * once the outcome it may be recording is in.  The byte says only "look
 * now", and the store says what, but for CM_WAKE_CLOSE: a close the store
 * committed, which needs no claim to learn of.
 */
static void
drain_wake(struct actor *a)
{
	char buf[CM_ACTOR_WAKE_READ];
	bool close = false, other = false;
	ssize_t n;

	while ((n = read(a->wake_fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++) {
			close = close || buf[i] == CM_WAKE_CLOSE;
			other = other || buf[i] != CM_WAKE_QUEUED;
		}
	/*
	 * The store committed the close (the supervisor read its notice):
	 * the runtime goes at once, as a claim's close_requested would have
	 * it.  Not while a claim is under way, which the store may have
	 * answered with a task before the close: that claim's answer, or the
	 * next one, tells.
	 */
	if (close && a->inflight != CALL_CLAIM)
		a->closing = true;
	if (a->have_task && !a->outcome.pending) {
		if (other)
			a->next_heartbeat_ms = cm_mono_ms();
	} else {
		a->need_claim = true;
	}
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
		act_calls_abandon(a);
		return true;
	}
	if (a->inflight != CALL_NONE || a->have_task || a->mark_error.pending)
		return false;
	if (a->stopping || a->retiring)
		return true;
	return a->close_begun && !a->mark_closed.pending;
}

/* What the running task needs before the loop waits again. */
static void
advance_task(struct actor *a)
{
	if (!a->have_task || a->outcome.pending || a->cleanup != CLEAN_NONE)
		return;
	/* Close and stop send the running task down the cancel path. */
	if (a->closing || a->stopping)
		a->cancel_wanted = true;
	if (a->cancel_wanted)
		clean_up_running(a, CLEAN_CANCEL);
	else if (cm_mono_ms() >= a->deadline_ms)
		clean_up_running(a, CLEAN_TIMEOUT);
}

static void
on_signal(struct actor *a)
{
	struct signalfd_siginfo si;

	if (read(a->sig_fd, &si, sizeof(si)) != sizeof(si) || a->stopping)
		return;
	a->stopping = true;
	a->stop_deadline_ms = cm_mono_ms() + CM_ACTOR_STOP_MS;
	act_browser_stopping();
	/*
	 * Neither a lease renewal nor an idle claim is of use any more.  The
	 * store holds an idle claim until a task comes or CM_CLAIM_WAIT_MS
	 * runs out: waited for, it took most of the stop's bound before the
	 * browser was even killed.  An answer already in is taken (a task
	 * it brings is recorded cancelled, never run); otherwise the handle
	 * is freed at once, for what is still to record.
	 */
	act_calls_take(a);
	if (a->inflight == CALL_HEARTBEAT || a->inflight == CALL_CLAIM) {
		act_calls_abandon(a);
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
	if (a->drv == NULL)
		return;
	switch (a->ops->step(a->drv, fds, nfds, &out)) {
	case ACT_PENDING:
		return;
	case ACT_CLEAN:
		clean_done(a, out.err == CM_OK);
		return;
	case ACT_DONE:
		break;
	}
	/* An outcome while cleaning up belongs to the abandoned call. */
	if (a->have_task && !a->outcome.pending && a->cleanup == CLEAN_NONE) {
		if (out.err == CM_OK) {
			record_outcome(a, CM_TASK_COMPLETED,
			    out.result ? out.result : "null", CM_OK, NULL);
			/* Bounded by the page; its name is in the result. */
			a->art = out;
			a->art.result = NULL;
			out.artifact = NULL;
		} else {
			record_outcome(
			    a, CM_TASK_FAILED, NULL, out.err, out.message);
		}
	}
	free(out.result);
	free(out.artifact);
	/* A runtime that crashed is started again for the next task, if it
	 * can be: the driver says. */
	if (out.err == CM_E_RUNTIME_CRASHED) {
		switch (a->ops->reset(a->drv)) {
		case -1:
			runtime_unusable(a);
			break;
		case 1:
			if (a->cleanup == CLEAN_NONE)
				a->cleanup = CLEAN_QUIET;
			break;
		}
	}
}

/*
 * Stopping, a managed runtime goes as soon as no call runs on it (the
 * actor is idle, or the task's call is cleaned up and its outcome waits
 * to be recorded), before the store is waited on: its browser is killed
 * and an ephemeral profile removed within the stop's bound, whatever the
 * store does.  Its close does not wait for the reap of a browser whose
 * profile is discarded, and one of a kept profile dies at its own
 * priority (act_browser_stopping); the profile can go at once, as no
 * process of the browser runs code again.  Any other runtime closes
 * after the loop, as at a close (a cdp one disposes of its context,
 * which may take CM_CDP_CLOSE_MS).
 */
static void
stop_runtime(struct actor *a)
{
	if (!a->stopping || a->drv == NULL || a->ops != &act_driver_managed ||
	    a->cleanup != CLEAN_NONE || (a->have_task && !a->outcome.pending))
		return;
	a->ops->close(a->drv);
	a->drv = NULL;
	act_managed_sweep(a->cfg);
}

/* The session of the Space's page, for the live view; NULL: none. */
static struct act_session *
live_session(struct actor *a)
{
	return a->drv != NULL && a->ops->session != NULL
	           ? a->ops->session(a->drv)
	           : NULL;
}

/* One turn of the loop.  Returns 1 to go on, 0 when done. */
static int
actor_turn(struct actor *a)
{
	struct pollfd pfd[3 + CM_ACTOR_POLLFDS + CM_EGRESS_POLLFDS + 1];
	int64_t wake = -1, drv_wake = -1, eg_wake = -1, live_wake = -1, now;
	bool stepping;
	int ndrv, neg = 0, nlive = 0, timeout;

	act_calls_take(a);
	if (a->closing && !a->stopping && !a->have_task && !a->close_begun) {
		/*
		 * The runtime is torn down before the Space is marked closed:
		 * the instance stays reserved until its browser and profile
		 * are gone, so a new Space on it never meets the old browser.
		 */
		a->ops->close(a->drv);
		a->drv = NULL;
		a->cleanup = CLEAN_NONE;
		a->close_begun = true;
		act_write_begin(&a->mark_closed);
	}
	advance_task(a);
	stop_runtime(a);
	if (a->call != NULL)
		act_calls_next(a);
	if (actor_done(a))
		return 0;

	stepping = a->have_task && !a->outcome.pending;
	/* Upkeep while the store answers (a call ended, its outcome is on
	 * its way), never while a call or a cleanup runs. */
	if (!stepping && a->cleanup == CLEAN_NONE && !a->closing &&
	    a->drv != NULL && a->ops->rest != NULL)
		a->ops->rest(a->drv);
	now = cm_mono_ms();
	/* Cleaning up, the task's deadline has passed or no longer counts:
	 * the driver's own wake bounds the reset. */
	if (stepping && a->cleanup == CLEAN_NONE)
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
	ndrv = a->drv == NULL ? 0
	                      : a->ops->pollfds(a->drv, pfd + 3,
	                            CM_ACTOR_POLLFDS, &drv_wake);
	if (stepping || a->cleanup != CLEAN_NONE)
		wake = min_wake(wake, drv_wake);
	/* The proxy serves the browser between tasks too: its timers count
	 * whatever the actor is doing. */
	if (a->egress != NULL) {
		neg = act_egress_pollfds(
		    a->egress, pfd + 3 + ndrv, CM_EGRESS_POLLFDS, &eg_wake);
		wake = min_wake(wake, eg_wake);
	}
	/* The live view is served whatever the actor is doing: a screencast
	 * runs beside a task, never in its way. */
	if (a->live != NULL) {
		nlive = act_live_pollfds(
		    a->live, pfd + 3 + ndrv + neg, 1, &live_wake);
		wake = min_wake(wake, live_wake);
	}
	timeout = wake < 0 ? -1 : wake <= now ? 0 : (int)(wake - now);
	if (poll(pfd, (nfds_t)(3 + ndrv + neg + nlive), timeout) < 0 &&
	    errno != EINTR) {
		cm_warn("actor: poll");
		a->failed = true;
		return 0;
	}
	if (pfd[1].revents & POLLIN)
		on_signal(a);
	if (pfd[0].revents & POLLIN)
		drain_wake(a);
	step_driver(a, pfd + 3, ndrv);
	if (a->egress != NULL)
		act_egress_step(a->egress, pfd + 3 + ndrv, neg);
	if (a->live != NULL)
		act_live_step(
		    a->live, live_session(a), pfd + 3 + ndrv + neg, nlive);
	return 1;
}

/* A standby's browser serves a Space whose instance is managed with an
 * ephemeral profile: any other keeps its own kind of runtime. */
static bool
warm_fits(const struct act_env *env)
{
	return env->driver == CM_DRIVER_MANAGED &&
	       env->profile_mode == CM_PROFILE_EPHEMERAL;
}

/* A refusal of the Space's egress proxy: recorded as a network_blocked
 * event (host and reason only), in order, by the loop's store calls. */
static void
egress_refused(void *arg, const char *host, const char *reason)
{
	act_blocked_add(arg, host, reason);
}

/* What the page did (a dialog, a tab, a download): queued as a page
 * event, recorded in order by the loop's store calls.  It is the
 * running task's while its call runs (its cleanup included); once the
 * outcome is decided, or between tasks, it is none's. */
static void
page_did(void *arg, const struct act_page_event *ev)
{
	struct actor *a = arg;

	act_page_log_add(&a->page, ev,
	    a->have_task && !a->outcome.pending ? a->task_id : NULL,
	    &a->inst.secrets, a->space_id);
}

/* The egress proxy of a managed runtime, with the config's bounds. */
static int
open_egress(struct actor *a, char *err, size_t len)
{
	struct act_egress_opts o = {
	    .conns_max = a->cfg->egress_connections,
	    .bytes_per_s = a->cfg->egress_bytes_per_second,
	};

	return act_egress_open(&o, &a->egress, err, len);
}

/* The Space's runtime: the standby's browser when there is one that
 * fits (warm and its proxy, which the actor owns from here on), else a
 * new one; a managed one behind a proxy of the actor's. */
static int
open_runtime(struct actor *a, struct act_driver **warm,
    struct act_egress **warm_egress, char *err, size_t len)
{
	bool managed = a->inst.env.driver == CM_DRIVER_MANAGED;

	/* What the page does goes to the Space's log, in order. */
	a->inst.env.page_event = page_did;
	a->inst.env.page_event_arg = a;
	if (*warm != NULL && *warm_egress != NULL && warm_fits(&a->inst.env)) {
		a->ops = &act_driver_managed;
		a->drv = *warm;
		a->egress = *warm_egress;
		*warm = NULL;
		*warm_egress = NULL;
		a->inst.env.egress = a->egress;
		act_egress_policy(
		    a->egress, &a->inst.policy, egress_refused, a);
		act_managed_adopt(a->drv, &a->inst.env);
		cm_debug(
		    "actor: space %s takes the standby browser", a->space_id);
		return 0;
	}
	if (*warm != NULL) {
		/* Not this instance's kind: the standby's browser goes. */
		act_driver_managed.close(*warm);
		*warm = NULL;
	}
	act_egress_close(*warm_egress);
	*warm_egress = NULL;
	if ((a->ops = act_driver_find(a->inst.env.driver)) == NULL) {
		snprintf(err, len, "no such driver in this build");
		return -1;
	}
	if (managed) {
		if (open_egress(a, err, len) != 0)
			return -1;
		act_egress_policy(
		    a->egress, &a->inst.policy, egress_refused, a);
		a->inst.env.egress = a->egress;
	}
	return a->ops->open(&a->inst.env, &a->drv, err, len);
}

int
act_run_warm(const struct cm_config *cfg, const char *space_id, int notify_fd,
    int wake_fd, struct act_driver *warm, struct act_egress *warm_egress)
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
		if (warm != NULL)
			act_driver_managed.close(warm);
		act_egress_close(warm_egress);
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
	if ((loaded = act_calls_load(&a)) <= 0) {
		rc = loaded == 0 ? 0 : 1;
		cm_ready_notify(&notify_fd);
		goto out;
	}
	if (open_runtime(&a, &warm, &warm_egress, err, sizeof(err)) != 0) {
		cm_warnx("actor: space %s: runtime %s unusable: %s", a.space_id,
		    cm_driver_name(a.inst.env.driver), err);
		a.ops = NULL;
		rc = act_calls_mark_unusable(&a) == 0 ? 0 : 1;
		cm_ready_notify(&notify_fd);
		goto out;
	}
	/* Without a control socket the Space runs on, unwatched. */
	act_live_open(&a.live, cfg->run_dir, a.space_id, &a.inst.secrets);
	cm_ready_notify(&notify_fd);
	cm_debug("actor: space %s ready (%s)", a.space_id,
	    cm_driver_name(a.inst.env.driver));

	a.need_claim = true;
	while (actor_turn(&a))
		;
	act_live_close(a.live, live_session(&a));
	a.live = NULL;
	a.ops->close(a.drv);
	a.drv = NULL;
	rc = a.failed || a.claim_unheard ? 1 : 0;
	if (a.failed)
		cm_warnx("actor: space %s: stopping with an outcome unrecorded",
		    a.space_id);
out:
	act_live_close(a.live, NULL);
	if (a.ops != NULL && a.drv != NULL)
		a.ops->close(a.drv);
	if (warm != NULL)
		act_driver_managed.close(warm);
	/* After the browser that used it. */
	act_egress_close(warm_egress);
	act_egress_close(a.egress);
	/* The Space is closed: what its close discarded goes now, off the
	 * close's path, its browser first.  Stopping, the profile went with
	 * the runtime (stop_runtime), and the reap is bounded within the
	 * stop's. */
	if (act_browser_reap(
	        cm_mono_ms() + (a.stopping ? CM_ACTOR_STOP_REAP_MS
	                                   : CM_BROWSER_REAP_MS)) != 0 &&
	    !a.stopping)
		cm_warnx(
		    "actor: space %s: a browser outlived its reap", a.space_id);
	if (a.inst.env.driver == CM_DRIVER_MANAGED)
		act_managed_sweep(cfg);
	act_task_drop(&a);
	act_page_log_clear(&a.page);
	cm_rpc_async_close(a.call);
	act_instance_fini(&a.inst);
	pr_rep_free(&a.load);
	nng_close(a.req);
	if (a.wake_fd >= 0)
		close(a.wake_fd);
	close(a.sig_fd);
	return rc;
}

int
act_run(const struct cm_config *cfg, const char *space_id, int notify_fd,
    int wake_fd)
{
	return act_run_warm(cfg, space_id, notify_fd, wake_fd, NULL, NULL);
}
