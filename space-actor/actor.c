/*
 * actor.c: the loop of one Space's executor.
 *
 * States: idle (polling for a task), running (one driver call in flight,
 * its lease renewed), closing.  Pub/sub notices (queued, cancel_requested,
 * close_requested) only make it react sooner: a timer asks the store
 * anyway, so a lost message costs latency, never correctness.
 */
#include "actor.h"

#include <errno.h>
#include <nng/nng.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "driver.h"
#include "ids.h"
#include "json.h"
#include "log.h"
#include "rpc.h"

#define ACT_IDLE_POLL_MS 1000 /* ask the store even without a notice */
#define ACT_LOAD_TRIES 100    /* x 100 ms while the store starts */
#define ACT_FINISH_TRIES 30   /* x CM_RPC_TIMEOUT_MS at most */
#define ACT_POLLFDS 8

struct actor {
	const struct cm_config *cfg;
	char space_id[CM_ID_MAX + 1];
	char workspace_id[CM_ID_MAX + 1];
	char holder[CM_ID_MAX + 1];
	nng_socket req;
	int wake_fd; /* -1: no supervisor, timers only */
	int sig_fd;

	struct pr_rep load; /* owns the strings the env points at */
	struct cm_bundle *bundle;
	struct cm_policy policy;
	json_t *config;
	struct cm_secrets secrets;
	struct act_env env;
	const struct act_driver_ops *ops;
	struct act_driver *drv;

	bool need_claim;
	int64_t next_claim_ms;
	bool closing;
	bool stopping;

	bool running;
	bool cancel_wanted;
	char task_id[CM_ID_MAX + 1];
	char request_id[CM_ID_MAX + 1];
	char capability[CM_CAPABILITY_MAX + 1];
	json_t *args;
	int64_t deadline_ms;
	int64_t next_heartbeat_ms;
};

static void
req_init(struct pr_req *q, enum pr_op op)
{
	memset(q, 0, sizeof(*q));
	q->op = op;
}

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

static int
mark_error(struct actor *a, const char *code)
{
	struct pr_req q;
	struct pr_rep r;
	enum cm_err e;

	req_init(&q, PR_OP_SPACE_MARK_ERROR);
	q.space_id = a->space_id;
	q.error_code = code;
	e = cm_rpc_call(a->req, &q, &r, 0);
	pr_rep_free(&r);
	return e == CM_OK ? 0 : -1;
}

/*
 * Loads the Space and its instance.  Returns 1 ready to run, 0 nothing to
 * do (the Space is closed or in error), -1 failure.
 */
static int
actor_load(struct actor *a)
{
	struct pr_req q;
	struct pr_rep *r = &a->load;
	struct timespec pause = {0, 100 * 1000 * 1000};
	const char *m;
	char err[256];

	req_init(&q, PR_OP_ACTOR_LOAD);
	q.space_id = a->space_id;
	for (int i = 0;; i++) {
		if (cm_rpc_call(a->req, &q, r, 2000) == CM_OK)
			break;
		pr_rep_free(r);
		if (i == ACT_LOAD_TRIES) {
			cm_warnx("actor: the store does not answer");
			return -1;
		}
		nanosleep(&pause, NULL);
	}
	if (r->err == CM_E_NOT_FOUND)
		return 0;
	if (r->err != CM_OK || r->n_spaces != 1 || r->n_instances != 1 ||
	    r->n_instance_secrets != 1 || r->n_bundles != 1) {
		cm_warnx("actor: cannot load space %s: %s", a->space_id,
		    cm_err_code(r->err));
		return -1;
	}
	if (strcmp(r->spaces[0].status, "closed") == 0 ||
	    strcmp(r->spaces[0].status, "error") == 0)
		return 0;
	snprintf(a->workspace_id, sizeof(a->workspace_id), "%s",
	    r->spaces[0].workspace_id);
	a->closing = r->spaces[0].close_requested;

	m = r->bundles[0].manifest;
	if (cm_bundle_parse(m, strlen(m), &a->bundle, err, sizeof(err)) != 0) {
		cm_warnx("actor: the bundle does not parse: %s", err);
		return -1;
	}
	m = r->instances[0].network_policy ? r->instances[0].network_policy
	                                   : "";
	if (cm_policy_parse(m, strlen(m), &a->policy, err, sizeof(err)) != 0) {
		cm_warnx("actor: the network policy does not parse: %s", err);
		return -1;
	}
	m = r->instance_secrets[0].config ? r->instance_secrets[0].config
	                                  : "{}";
	if (cm_json_parse(m, strlen(m), CM_INSTANCE_CONFIG_MAX,
	        CM_JSON_DEPTH_MAX, &a->config, err, sizeof(err)) != 0 ||
	    !json_is_object(a->config)) {
		cm_warnx("actor: the instance config is not an object");
		return -1;
	}
	cm_secrets_add(&a->secrets, r->instance_secrets[0].endpoint);
	cm_secrets_add(&a->secrets, r->instance_secrets[0].profile);
	collect_secrets(&a->secrets, a->config, 0);

	a->env.space_id = a->space_id;
	a->env.instance_id = r->instances[0].browser_instance_id;
	a->env.driver = r->instances[0].driver;
	a->env.endpoint = r->instance_secrets[0].endpoint;
	a->env.profile = r->instance_secrets[0].profile;
	a->env.config = a->config;
	a->env.bundle = a->bundle;
	a->env.policy = &a->policy;
	a->env.cfg = a->cfg;
	return 1;
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

/*
 * Reports the end of the running task.  The same op_id goes with every
 * attempt, so a store that restarts in between applies it once.
 */
static void
finish(struct actor *a, const char *status, const char *result, enum cm_err err,
    const char *message)
{
	char op_id[CM_UUID_LEN];
	char *msg = NULL, *res = NULL;
	struct pr_req q;
	struct pr_rep r;
	int i;

	if (result != NULL)
		res = cm_redact_result(result, strlen(result), &a->secrets);
	if (message != NULL && (msg = cm_redact_text(message, strlen(message),
	                            &a->secrets)) != NULL)
		utf8_cut(msg, CM_ERROR_MESSAGE_MAX);

	cm_uuid7(op_id);
	req_init(&q, PR_OP_ACTOR_FINISH);
	q.op_id = op_id;
	q.task_id = a->task_id;
	q.lease_holder = a->holder;
	q.status = status;
	q.result = res;
	if (strcmp(status, "failed") == 0) {
		q.error_code = cm_err_code(err);
		q.error_message = msg ? msg : "";
	}
	for (i = 0; i < ACT_FINISH_TRIES; i++) {
		enum cm_err e = cm_rpc_call(a->req, &q, &r, 0);

		if (e == CM_OK && r.err != CM_OK && r.err != CM_E_LEASE_EXPIRED)
			cm_warnx("actor: finish of %s: %s", a->task_id,
			    cm_err_code(r.err));
		pr_rep_free(&r);
		if (e == CM_OK)
			break;
	}
	if (i == ACT_FINISH_TRIES) {
		/* The supervisor will record the outcome as unknown. */
		cm_fatalx("actor: the store never took the outcome of %s",
		    a->task_id);
	}
	free(res);
	free(msg);
	a->running = false;
	a->cancel_wanted = false;
	json_decref(a->args);
	a->args = NULL;
	a->need_claim = true;
}

/* A URL argument outside the network policy fails before dispatch. */
static enum cm_err
check_hosts(struct actor *a, const json_t *args, char *bad, size_t badlen)
{
	const struct cm_capability *c =
	    cm_bundle_find(a->bundle, a->capability);
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
		if (cm_policy_check_url(&a->policy, url) != CM_OK) {
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
	char err[256];
	enum cm_err e;

	snprintf(a->task_id, sizeof(a->task_id), "%s", t->task_id);
	snprintf(a->request_id, sizeof(a->request_id), "%s", t->request_id);
	snprintf(a->capability, sizeof(a->capability), "%s", t->capability);
	a->running = true;
	a->cancel_wanted = t->cancel_requested;
	a->deadline_ms = cm_mono_ms() + t->timeout_ms;
	a->next_heartbeat_ms = cm_mono_ms() + CM_HEARTBEAT_MS;
	if (cm_json_parse(args ? args : "{}", args ? strlen(args) : 2,
	        CM_ARGS_MAX, CM_JSON_DEPTH_MAX, &a->args, err,
	        sizeof(err)) != 0) {
		finish(
		    a, "failed", NULL, CM_E_RUNTIME_ERROR, "args unreadable");
		return;
	}
	if ((e = check_hosts(a, a->args, err, sizeof(err))) != CM_OK) {
		finish(a, "failed", NULL, e, err);
		return;
	}
	memset(&call, 0, sizeof(call));
	call.task_id = a->task_id;
	call.request_id = a->request_id;
	call.capability = a->capability;
	call.args = a->args;
	call.deadline_ms = a->deadline_ms;
	if (a->ops->start(a->drv, &call) != 0)
		finish(a, "failed", NULL, CM_E_RUNTIME_ERROR,
		    "the runtime refused the call");
}

static void
claim(struct actor *a)
{
	struct pr_req q;
	struct pr_rep r;

	a->need_claim = false;
	a->next_claim_ms = cm_mono_ms() + ACT_IDLE_POLL_MS;
	req_init(&q, PR_OP_ACTOR_CLAIM);
	q.space_id = a->space_id;
	q.lease_holder = a->holder;
	if (cm_rpc_call(a->req, &q, &r, 0) != CM_OK || r.err != CM_OK) {
		pr_rep_free(&r);
		return;
	}
	if (r.close_requested)
		a->closing = true;
	if (r.n_spaces == 1 && strcmp(r.spaces[0].status, "closed") == 0)
		a->closing = true;
	if (r.n_tasks == 1)
		start_task(a, &r.tasks[0], r.args);
	pr_rep_free(&r);
}

static void
heartbeat(struct actor *a)
{
	struct pr_req q;
	struct pr_rep r;

	a->next_heartbeat_ms = cm_mono_ms() + CM_HEARTBEAT_MS;
	req_init(&q, PR_OP_ACTOR_HEARTBEAT);
	q.task_id = a->task_id;
	q.lease_holder = a->holder;
	if (cm_rpc_call(a->req, &q, &r, 0) != CM_OK) {
		pr_rep_free(&r);
		return; /* the lease outlives a few missed beats */
	}
	if (r.err == CM_E_LEASE_EXPIRED || r.err == CM_E_NOT_FOUND) {
		/* Finalised without us: stop working on it, report nothing. */
		cm_warnx("actor: lost the lease on %s", a->task_id);
		a->ops->cancel(a->drv);
		a->ops->reset(a->drv);
		a->running = false;
		json_decref(a->args);
		a->args = NULL;
		a->need_claim = true;
	} else {
		if (r.cancel_requested)
			a->cancel_wanted = true;
		if (r.close_requested)
			a->closing = true;
	}
	pr_rep_free(&r);
}

/* Stopping by signal: the cancel is recorded before the task ends, so it
 * ends as cancelled, in order. */
static void
request_cancel(struct actor *a)
{
	struct pr_req q;
	struct pr_rep r;

	req_init(&q, PR_OP_TASK_CANCEL);
	q.workspace_id = a->workspace_id;
	q.space_id = a->space_id;
	q.task_id = a->task_id;
	cm_rpc_call(a->req, &q, &r, 0);
	pr_rep_free(&r);
}

static void
cancel_running(struct actor *a)
{
	/* Abort, clean up, and only then say cancelled (SPEC 3 rule 7). */
	if (a->ops->cancel(a->drv) != 0 || a->ops->reset(a->drv) != 0) {
		finish(a, "cancelled", NULL, CM_OK, NULL);
		mark_error(a, "runtime_crashed");
		a->closing = true;
		return;
	}
	finish(a, "cancelled", NULL, CM_OK, NULL);
}

static void
time_out_running(struct actor *a)
{
	char msg[CM_CAPABILITY_MAX + 64];

	snprintf(msg, sizeof(msg), "%s did not finish in time", a->capability);
	a->ops->cancel(a->drv);
	a->ops->reset(a->drv);
	finish(a, "failed", NULL, CM_E_TASK_TIMEOUT, msg);
}

/*
 * The supervisor writes a byte on the wake pipe when the store publishes
 * something this Space's actor acts on (a queued task, a cancel or close
 * request).  Idle, the actor then claims; running, it asks the store at
 * once (a heartbeat) whether the task is to be cancelled or the Space
 * closed.  The byte says only "look now": the store says what.
 */
static void
drain_wake(struct actor *a)
{
	char buf[64];

	while (read(a->wake_fd, buf, sizeof(buf)) > 0)
		;
	if (a->running)
		a->next_heartbeat_ms = cm_mono_ms();
	else
		a->need_claim = true;
}

static int
mark_closed(struct actor *a)
{
	struct pr_req q;
	struct pr_rep r;
	enum cm_err e;

	req_init(&q, PR_OP_SPACE_MARK_CLOSED);
	q.space_id = a->space_id;
	for (int i = 0; i < ACT_FINISH_TRIES; i++) {
		e = cm_rpc_call(a->req, &q, &r, 0);
		pr_rep_free(&r);
		if (e == CM_OK)
			return 0;
	}
	return -1;
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

/* One turn of the loop.  Returns 1 to go on, 0 when done. */
static int
actor_turn(struct actor *a)
{
	struct pollfd pfd[ACT_POLLFDS + 2];
	int64_t wake = -1, drv_wake = -1, now;
	int ndrv, timeout;

	if (!a->running) {
		if (a->closing || a->stopping)
			return 0;
		if (a->need_claim || cm_mono_ms() >= a->next_claim_ms)
			claim(a);
	}
	if (a->running) {
		/* Close sent the running task down the cancel path already. */
		if (a->closing)
			a->cancel_wanted = true;
		if (a->stopping && !a->cancel_wanted) {
			request_cancel(a);
			a->cancel_wanted = true;
		}
		if (a->cancel_wanted) {
			cancel_running(a);
			return 1;
		}
		if (cm_mono_ms() >= a->deadline_ms) {
			time_out_running(a);
			return 1;
		}
		if (cm_mono_ms() >= a->next_heartbeat_ms) {
			heartbeat(a);
			/* A cancel or close it just learnt of is acted on at
			 * once, not after the next heartbeat. */
			if (!a->running || a->cancel_wanted || a->closing)
				return 1;
		}
		wake = min_wake(a->deadline_ms, a->next_heartbeat_ms);
	} else {
		if (a->closing || a->need_claim)
			return 1;
		wake = a->next_claim_ms;
	}

	pfd[0].fd = a->wake_fd;
	pfd[0].events = POLLIN;
	pfd[1].fd = a->sig_fd;
	pfd[1].events = POLLIN;
	ndrv = a->ops->pollfds(a->drv, pfd + 2, ACT_POLLFDS, &drv_wake);
	wake = min_wake(wake, drv_wake);
	now = cm_mono_ms();
	timeout = wake < 0 ? -1 : wake <= now ? 0 : (int)(wake - now);
	if (poll(pfd, (nfds_t)(2 + ndrv), timeout) < 0 && errno != EINTR) {
		cm_warn("actor: poll");
		return 0;
	}
	if (pfd[1].revents & POLLIN) {
		struct signalfd_siginfo si;
		if (read(a->sig_fd, &si, sizeof(si)) == sizeof(si))
			a->stopping = true;
	}
	if (pfd[0].revents & POLLIN)
		drain_wake(a);
	if (a->running && !a->cancel_wanted) {
		struct act_outcome out;

		memset(&out, 0, sizeof(out));
		if (a->ops->step(a->drv, pfd + 2, ndrv, &out) == ACT_DONE) {
			if (out.err == CM_OK)
				finish(a, "completed",
				    out.result ? out.result : "null", CM_OK,
				    NULL);
			else
				finish(a, "failed", NULL, out.err, out.message);
			free(out.result);
		}
	} else if (!a->running) {
		struct act_outcome out;

		/* Idle, the runtime still reads what its browser says. */
		memset(&out, 0, sizeof(out));
		if (a->ops->step(a->drv, pfd + 2, ndrv, &out) == ACT_DONE)
			free(out.result);
	}
	return 1;
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
	char url[CM_PATH_MAX], err[256];
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
	if ((loaded = actor_load(&a)) <= 0) {
		rc = loaded == 0 ? 0 : 1;
		notify_ready(notify_fd);
		goto out;
	}
	if ((a.ops = act_driver_find(a.env.driver)) == NULL ||
	    a.ops->open(&a.env, &a.drv, err, sizeof(err)) != 0) {
		/* The runtime cannot be used: the Space goes to error. */
		cm_warnx("actor: space %s: runtime %s unusable: %s", a.space_id,
		    a.env.driver, a.ops ? err : "no such driver in this build");
		a.ops = NULL;
		rc = mark_error(&a, "runtime_not_ready") == 0 ? 0 : 1;
		notify_ready(notify_fd);
		goto out;
	}
	notify_ready(notify_fd);
	cm_debug("actor: space %s ready (%s)", a.space_id, a.env.driver);

	a.need_claim = true;
	while (actor_turn(&a))
		;
	a.ops->close(a.drv);
	a.drv = NULL;
	rc = 0;
	if (a.closing && !a.stopping && mark_closed(&a) != 0)
		rc = 1;
out:
	if (a.ops != NULL && a.drv != NULL)
		a.ops->close(a.drv);
	json_decref(a.args);
	json_decref(a.config);
	cm_bundle_free(a.bundle);
	pr_rep_free(&a.load);
	nng_close(a.req);
	if (a.wake_fd >= 0)
		close(a.wake_fd);
	close(a.sig_fd);
	return rc;
}
