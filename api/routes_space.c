/*
 * routes_space.c: the routes of one workspace's Spaces, their tasks,
 * events and artifacts, and the instances and bundles it may use.  Each
 * handler authorizes through the one authz module, calls the store, and
 * answers through the one set of builders; a ?wait= asks wait.h to park
 * the request rather than answer it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "clock.h"
#include "status.h"
#include "wait.h"

static struct pr_req
req_for(const struct api_ctx *c, enum pr_op op)
{
	struct pr_req q;

	memset(&q, 0, sizeof(q));
	q.op = op;
	q.workspace_id = c->workspace_id;
	q.space_id = c->space_id;
	return q;
}

/* Answers an authorization refusal; true when allowed. */
static bool
allowed(struct api_ctx *c, enum cm_action a, const struct pr_space *sp,
    const char *owner_type, const char *owner_id)
{
	const char *why = NULL;
	enum cm_err e = cm_authz_check(
	    &c->id, a, c->workspace_id, sp, owner_type, owner_id, &why);

	if (e == CM_OK)
		return true;
	api_fail(c, 0, e, why && *why ? why : NULL);
	return false;
}

/*
 * Loads the Space of the path and checks the caller may act on it.  The
 * caller frees *r.  A Space the store does not know (or that belongs to
 * another workspace) is judged with no Space: 403 for a non-member, 404
 * for everyone else.
 */
bool
api_space_for(struct api_ctx *c, enum cm_action a, struct pr_rep *r)
{
	struct pr_req q = req_for(c, PR_OP_SPACE_GET);

	if (!api_call(c, &q, r))
		return false;
	if (r->err != CM_OK && r->err != CM_E_NOT_FOUND) {
		api_fail_rep(c, r);
		return false;
	}
	return allowed(
	    c, a, r->err == CM_OK ? &r->spaces[0] : NULL, NULL, NULL);
}

/* The lists a route can answer with. */
enum list_of { LIST_SPACES, LIST_TASKS, LIST_EVENTS, LIST_INSTANCES };

/* Calls the store and answers 200 with the reply's list of one kind. */
static void
answer_list(struct api_ctx *c, const struct pr_req *q, enum list_of what)
{
	struct pr_rep r;
	json_t *list;
	size_t n;

	if (!api_call(c, q, &r))
		return;
	if (r.err != CM_OK) {
		api_fail_rep(c, &r);
		pr_rep_free(&r);
		return;
	}
	if (what == LIST_SPACES && api_ok_kept(c)) {
		pr_rep_free(&r);
		return;
	}
	n = what == LIST_SPACES   ? r.n_spaces
	    : what == LIST_TASKS  ? r.n_tasks
	    : what == LIST_EVENTS ? r.n_events
	                          : r.n_instances;
	list = json_array();
	for (size_t i = 0; list != NULL && i < n; i++)
		json_array_append_new(list,
		    what == LIST_SPACES   ? api_dto_space(&r.spaces[i], NULL)
		    : what == LIST_TASKS  ? api_dto_task(&r.tasks[i])
		    : what == LIST_EVENTS ? api_dto_event(&r.events[i])
		                          : api_dto_instance(&r.instances[i]));
	api_ok(c, 200, list);
	if (what == LIST_SPACES)
		api_ok_keep(c);
	pr_rep_free(&r);
}

void
api_space_list(struct api_ctx *c)
{
	struct pr_req q = req_for(c, PR_OP_SPACE_LIST);
	char status[16], owner[CM_ID_MAX + 2], after[CM_ID_MAX + 2];
	const char *filter = NULL, *why = NULL;
	enum cm_err e;
	long limit;

	if (!api_query_int(c, "limit", 1, CM_LIST_LIMIT_MAX,
	        CM_LIST_LIMIT_DEFAULT, &limit) ||
	    !api_query_id(c, "after", after, &q.after_id))
		return;
	if (!api_query(c, "owner_id", owner, sizeof(owner)))
		owner[0] = '\0';
	/* owner has room for one byte past an id: a longer one is refused
	 * here, not cut, and not sent on to the store, whose protocol has no
	 * room for it (found by fuzz_routes: a 500). */
	if (strlen(owner) > CM_ID_MAX) {
		api_fail(c, 0, CM_E_INVALID_REQUEST,
		    "owner_id is longer than an id");
		return;
	}
	e = cm_authz_list_filter(
	    &c->id, c->workspace_id, owner[0] ? owner : NULL, &filter, &why);
	if (e != CM_OK) {
		api_fail(c, 0, e, why);
		return;
	}
	if (api_query(c, "status", status, sizeof(status)) && status[0])
		q.status = status;
	q.owner_id = filter;
	q.limit = limit;
	q.space_id = NULL;
	answer_list(c, &q, LIST_SPACES);
}

void
api_space_create(struct api_ctx *c)
{
	static const char *const keys[] = {"browser_instance_id", "binding_id",
	    "owner_type", "owner_id", "granted_capabilities", "request_id",
	    "dialog_policy", NULL};
	const char *granted[CM_GRANTED_MAX];
	struct pr_req q = req_for(c, PR_OP_SPACE_CREATE);
	struct pr_rep r;
	json_t *body, *g, *item;
	size_t i;

	if ((body = api_body(c, keys, false)) == NULL)
		return;
	if (!api_body_str(c, body, "browser_instance_id", CM_ID_MAX, true,
	        &q.browser_instance_id) ||
	    !api_body_str(
	        c, body, "binding_id", CM_ID_MAX, false, &q.binding_id) ||
	    !api_body_str(c, body, "owner_type", 32, true, &q.owner_type) ||
	    !api_body_str(c, body, "owner_id", CM_ID_MAX, true, &q.owner_id) ||
	    !api_body_str(
	        c, body, "request_id", CM_ID_MAX, false, &q.request_id) ||
	    !api_body_str(
	        c, body, "dialog_policy", 16, false, &q.dialog_policy))
		goto out;
	if (q.dialog_policy != NULL && strcmp(q.dialog_policy, "accept") != 0 &&
	    strcmp(q.dialog_policy, "dismiss") != 0) {
		api_fail(c, 0, CM_E_INVALID_REQUEST,
		    "dialog_policy must be accept or dismiss");
		goto out;
	}
	if ((g = json_object_get(body, "granted_capabilities")) != NULL) {
		if (!json_is_array(g) || json_array_size(g) > CM_GRANTED_MAX) {
			api_fail(c, 0, CM_E_INVALID_REQUEST,
			    "granted_capabilities must be an array of at most "
			    "32 names");
			goto out;
		}
		json_array_foreach(g, i, item)
		{
			if (!json_is_string(item) ||
			    json_string_length(item) == 0 ||
			    json_string_length(item) > CM_CAPABILITY_MAX) {
				api_fail(c, 0, CM_E_INVALID_REQUEST,
				    "granted_capabilities must hold capability "
				    "names");
				goto out;
			}
			granted[i] = json_string_value(item);
		}
		q.granted.n = json_array_size(g);
		q.granted.v = granted;
	}
	if (!allowed(c, CM_ACT_SPACE_CREATE, NULL, q.owner_type, q.owner_id))
		goto out;
	q.space_id = NULL;
	if (!api_call(c, &q, &r))
		goto out;
	if (r.err != CM_OK)
		api_fail_rep(c, &r);
	else
		api_ok(c, r.created ? 201 : 200,
		    api_dto_space(&r.spaces[0], NULL));
	pr_rep_free(&r);
out:
	json_decref(body);
}

void
api_space_get(struct api_ctx *c)
{
	struct pr_rep r;

	if (api_space_for(c, CM_ACT_SPACE_READ, &r) && !api_ok_kept(c)) {
		api_ok(c, 200,
		    api_dto_space(
		        &r.spaces[0], r.n_tasks ? &r.tasks[0] : NULL));
		api_ok_keep(c);
	}
	pr_rep_free(&r);
}

static bool
terminal(const char *status)
{
	return cm_task_status_terminal(cm_task_status_parse(status));
}

/* The caller's role in c's workspace ("member", "manager"), or NULL. */
static const char *
caller_role(const struct api_ctx *c)
{
	const struct pr_principal *p = c->id.principal;
	const char *role = NULL;

	for (size_t i = 0; p != NULL && i < c->id.n_memberships; i++) {
		const struct pr_membership *m = &c->id.memberships[i];

		if (m->workspace_id != NULL && m->principal_id != NULL &&
		    strcmp(m->workspace_id, c->workspace_id) == 0 &&
		    strcmp(m->principal_id, p->principal_id) == 0)
			role = m->role;
	}
	return role;
}

/*
 * A submit names its caller, and the store decides with the authz module
 * on the Space row it reads anyway: no space.get first.  What needs no
 * row is decided here, so the store is asked only on behalf of an
 * authenticated member or admin (a missing principal_id would make the
 * caller a trusted one).  q borrows c's memory.
 */
static bool
submit_caller(struct api_ctx *c, struct pr_req *q)
{
	const struct pr_principal *p = c->id.principal;
	const char *why = NULL;
	enum cm_err e = cm_authz_check(&c->id, CM_ACT_SPACE_SUBMIT,
	    c->workspace_id, NULL, NULL, NULL, &why);

	/* Without a Space every allowed caller is told not_found. */
	if (e != CM_E_NOT_FOUND || p == NULL || p->principal_id == NULL) {
		api_fail(c, 0, e == CM_OK ? CM_E_INTERNAL : e,
		    why && *why ? why : NULL);
		return false;
	}
	q->principal_id = p->principal_id;
	q->kind = p->kind;
	q->is_admin = p->is_admin;
	q->role = caller_role(c);
	return true;
}

void
api_task_submit(struct api_ctx *c)
{
	static const char *const keys[] = {
	    "request_id", "capability", "args", "timeout_seconds", NULL};
	struct pr_req q = req_for(c, PR_OP_TASK_SUBMIT);
	struct pr_rep r;
	json_t *body, *args, *t;
	char *args_text = NULL;
	long wait;

	if (!api_query_int(c, "wait", 0, CM_WAIT_MAX_S, 0, &wait))
		return;
	if ((body = api_body(c, keys, false)) == NULL)
		return;
	if (!api_body_str(
	        c, body, "request_id", CM_ID_MAX, true, &q.request_id) ||
	    !api_body_str(
	        c, body, "capability", CM_CAPABILITY_MAX, true, &q.capability))
		goto out;
	args = json_object_get(body, "args");
	if (args != NULL && !json_is_object(args)) {
		api_fail(c, 0, CM_E_INVALID_ARGS, "args must be an object");
		goto out;
	}
	if (args != NULL) {
		args_text = json_dumps(args, JSON_COMPACT);
		if (args_text == NULL || strlen(args_text) > CM_ARGS_MAX) {
			api_fail(
			    c, 0, CM_E_INVALID_ARGS, "args are over 16 KiB");
			goto out;
		}
		q.args = args_text;
	}
	if ((t = json_object_get(body, "timeout_seconds")) != NULL) {
		if (!json_is_integer(t) ||
		    json_integer_value(t) < CM_TIMEOUT_MIN_S ||
		    json_integer_value(t) > c->cfg->task_timeout_max) {
			char msg[64];

			snprintf(msg, sizeof(msg),
			    "timeout_seconds must be an integer in %d..%d",
			    CM_TIMEOUT_MIN_S, c->cfg->task_timeout_max);
			api_fail(c, 0, CM_E_INVALID_TIMEOUT, msg);
			goto out;
		}
		q.timeout_ms = json_integer_value(t) * 1000;
	}
	if (!submit_caller(c, &q))
		goto out;
	if (!api_call(c, &q, &r))
		goto out;
	if (r.err == CM_E_RUNTIME_NOT_READY && r.n_tasks == 1) {
		/* The failed task is on record: it is the answer's data. */
		json_t *env = json_pack("{s:o, s:{s:s, s:s, s:b}}", "data",
		    api_dto_task(&r.tasks[0]), "error", "code",
		    cm_err_code(r.err), "message", r.msg ? r.msg : "",
		    "retryable", true);
		free(c->res->body);
		c->res->status = 503;
		c->res->body = json_dumps(env, JSON_COMPACT);
		json_decref(env);
	} else if (r.err != CM_OK) {
		api_fail_rep(c, &r);
	} else if (wait > 0 && !terminal(r.tasks[0].status)) {
		api_wait_park(c, r.tasks[0].task_id, wait);
	} else {
		api_ok(c, terminal(r.tasks[0].status) || !r.created ? 200 : 202,
		    api_dto_task(&r.tasks[0]));
	}
	pr_rep_free(&r);
out:
	free(args_text);
	json_decref(body);
}

void
api_task_list(struct api_ctx *c)
{
	struct pr_req q = req_for(c, PR_OP_TASK_LIST);
	char after[CM_ID_MAX + 2];
	struct pr_rep sp;
	long limit;

	if (!api_query_int(c, "limit", 1, CM_LIST_LIMIT_MAX,
	        CM_LIST_LIMIT_DEFAULT, &limit) ||
	    !api_query_id(c, "after", after, &q.after_id))
		return;
	if (!api_space_for(c, CM_ACT_SPACE_READ, &sp)) {
		pr_rep_free(&sp);
		return;
	}
	pr_rep_free(&sp);
	q.limit = limit;
	answer_list(c, &q, LIST_TASKS);
}

/*
 * A task, and what it made, may be read by whoever may read its Space:
 * one path for both.  Asks the store op (task.get or artifact.get) for the
 * task of the path and true when r holds its answer (the caller frees r);
 * otherwise the refusal or error is answered and r holds nothing.
 */
static bool
task_read(struct api_ctx *c, enum pr_op op, struct pr_rep *r)
{
	struct pr_req q = req_for(c, op);
	struct pr_rep sp;
	bool ok = api_space_for(c, CM_ACT_SPACE_READ, &sp);

	pr_rep_free(&sp);
	memset(r, 0, sizeof(*r));
	if (!ok)
		return false;
	q.task_id = c->task_id;
	if (op == PR_OP_ARTIFACT_GET)
		q.artifact_name = c->artifact_name;
	if (!api_call(c, &q, r))
		return false;
	if (r->err != CM_OK) {
		api_fail_rep(c, r);
		pr_rep_free(r);
		return false;
	}
	return true;
}

void
api_task_get(struct api_ctx *c)
{
	struct pr_rep r;

	if (task_read(c, PR_OP_TASK_GET, &r))
		api_ok(c, 200, api_dto_task(&r.tasks[0]));
	pr_rep_free(&r);
}

void
api_artifact_get(struct api_ctx *c)
{
	struct pr_rep r;

	if (strlen(c->artifact_name) > CM_ID_MAX) {
		api_fail(c, 0, CM_E_NOT_FOUND, "no such artifact");
		return;
	}
	if (!task_read(c, PR_OP_ARTIFACT_GET, &r))
		return;
	if (r.n_artifacts != 1)
		api_fail(c, 500, CM_E_INTERNAL, "the store sent no artifact");
	else
		api_ok_bytes(c, r.artifacts[0].mime, r.artifacts[0].name,
		    r.artifacts[0].bytes.p, r.artifacts[0].bytes.n);
	pr_rep_free(&r);
}

void
api_space_cancel(struct api_ctx *c)
{
	static const char *const keys[] = {"task_id", NULL};
	struct pr_req q = req_for(c, PR_OP_TASK_CANCEL);
	struct pr_rep sp, r;
	json_t *body;

	if ((body = api_body(c, keys, true)) == NULL)
		return;
	if (!api_body_str(c, body, "task_id", CM_ID_MAX, false, &q.task_id))
		goto out;
	if (!api_space_for(c, CM_ACT_SPACE_CANCEL, &sp)) {
		pr_rep_free(&sp);
		goto out;
	}
	pr_rep_free(&sp);
	if (!api_call(c, &q, &r))
		goto out;
	if (r.err != CM_OK)
		api_fail_rep(c, &r);
	else /* 202 until the executor has acknowledged and cleaned up */
		api_ok(c, terminal(r.tasks[0].status) ? 200 : 202,
		    api_dto_task(&r.tasks[0]));
	pr_rep_free(&r);
out:
	json_decref(body);
}

void
api_space_close(struct api_ctx *c)
{
	struct pr_req q = req_for(c, PR_OP_SPACE_CLOSE);
	struct pr_rep sp, r;
	bool closed;
	long wait;

	if (!api_query_int(c, "wait", 0, CM_WAIT_MAX_S, 0, &wait))
		return;
	if (c->req->body_len > 0) {
		json_t *body = api_body(c, (const char *const[]){NULL}, true);
		if (body == NULL)
			return;
		json_decref(body);
	}
	if (!api_space_for(c, CM_ACT_SPACE_CLOSE, &sp)) {
		pr_rep_free(&sp);
		return;
	}
	pr_rep_free(&sp);
	if (!api_call(c, &q, &r))
		return;
	if (r.err != CM_OK)
		api_fail_rep(c, &r);
	else if (!(closed = cm_space_status_is(
	               r.spaces[0].status, CM_SPACE_CLOSED)) &&
	         wait > 0)
		api_wait_park(c, NULL, wait);
	else /* closed only once the actor has torn the browser down */
		api_ok(c, closed ? 200 : 202,
		    api_dto_space(
		        &r.spaces[0], r.n_tasks ? &r.tasks[0] : NULL));
	pr_rep_free(&r);
}

/*
 * POST .../takeover {"ttl_s": optional}: the caller (the owner or a
 * manager) holds the Space for ttl_s, or renews its hold.  200 with the
 * Space held; 202 while the task that ran is on its way down the cancel
 * path (the hold begins once it has ended).
 */
void
api_space_takeover(struct api_ctx *c)
{
	static const char *const keys[] = {"ttl_s", NULL};
	struct pr_req q = req_for(c, PR_OP_SPACE_TAKEOVER);
	struct pr_rep sp, r;
	json_t *body, *ttl = NULL;
	char msg[64];

	if ((body = api_body(c, keys, true)) == NULL)
		return;
	if (api_body_member(c, body, "ttl_s", false, &ttl) < 0)
		goto out;
	if (ttl != NULL &&
	    (!json_is_integer(ttl) || json_integer_value(ttl) < 1 ||
	        json_integer_value(ttl) > CM_TAKEOVER_TTL_MAX_S)) {
		snprintf(msg, sizeof(msg), "ttl_s must be an integer in 1..%d",
		    CM_TAKEOVER_TTL_MAX_S);
		api_fail(c, 0, CM_E_INVALID_REQUEST, msg);
		goto out;
	}
	if (!api_space_for(c, CM_ACT_SPACE_TAKEOVER, &sp)) {
		pr_rep_free(&sp);
		goto out;
	}
	pr_rep_free(&sp);
	q.principal_id = c->id.principal->principal_id;
	q.token_id = c->auth.n_tokens ? c->auth.tokens[0].token_id : NULL;
	q.ttl_ms = 1000 * (ttl != NULL ? json_integer_value(ttl)
	                               : c->cfg->takeover_ttl);
	if (q.token_id == NULL) {
		api_fail(
		    c, 500, CM_E_INTERNAL, "the caller's token is unknown");
		goto out;
	}
	if (!api_call(c, &q, &r))
		goto out;
	if (r.err != CM_OK)
		api_fail_rep(c, &r);
	else
		api_ok(c, r.spaces[0].hold_pending ? 202 : 200,
		    api_dto_space(
		        &r.spaces[0], r.n_tasks ? &r.tasks[0] : NULL));
	pr_rep_free(&r);
out:
	json_decref(body);
}

/* POST .../release: the holder, or a manager, hands the Space back. */
void
api_space_release(struct api_ctx *c)
{
	struct pr_req q = req_for(c, PR_OP_SPACE_RELEASE);
	struct pr_rep sp, r;
	json_t *body;

	if ((body = api_body(c, (const char *const[]){NULL}, true)) == NULL)
		return;
	json_decref(body);
	if (!api_space_for(c, CM_ACT_SPACE_TAKEOVER, &sp)) {
		pr_rep_free(&sp);
		return;
	}
	pr_rep_free(&sp);
	q.principal_id = c->id.principal->principal_id;
	q.is_admin = c->id.principal->is_admin;
	q.role = caller_role(c);
	if (!api_call(c, &q, &r))
		return;
	if (r.err != CM_OK)
		api_fail_rep(c, &r);
	else
		api_ok(c, 200,
		    api_dto_space(
		        &r.spaces[0], r.n_tasks ? &r.tasks[0] : NULL));
	pr_rep_free(&r);
}

void
api_event_list(struct api_ctx *c)
{
	struct pr_req q = req_for(c, PR_OP_EVENT_LIST);
	struct pr_rep sp;
	long after, limit;

	if (!api_query_int(c, "after_sequence", 0, INT32_MAX, 0, &after) ||
	    !api_query_int(c, "limit", 1, CM_EVENTS_LIMIT_MAX,
	        CM_EVENTS_LIMIT_DEFAULT, &limit))
		return;
	if (!api_space_for(c, CM_ACT_SPACE_READ, &sp)) {
		pr_rep_free(&sp);
		return;
	}
	pr_rep_free(&sp);
	if (c->req->accept != NULL &&
	    strstr(c->req->accept, "text/event-stream") != NULL) {
		/* Last-Event-ID, when the client reconnects, wins. */
		if (c->req->last_event_id != NULL) {
			char *end;
			long long v = strtoll(c->req->last_event_id, &end, 10);

			if (*end != '\0' || v < 0) {
				api_fail(c, 0, CM_E_INVALID_REQUEST,
				    "Last-Event-ID must be a sequence number");
				return;
			}
			after = (long)v;
		}
		c->later = API_LATER_STREAM;
		c->later_after = after;
		return;
	}
	q.after_sequence = after;
	q.limit = limit;
	answer_list(c, &q, LIST_EVENTS);
}

void
api_instance_list(struct api_ctx *c)
{
	struct pr_req q = req_for(c, PR_OP_INSTANCE_LIST);

	if (!allowed(c, CM_ACT_INSTANCE_LIST, NULL, NULL, NULL))
		return;
	q.space_id = NULL;
	answer_list(c, &q, LIST_INSTANCES);
}

/* Whether one of the n instances names bundle_id.  O(n). */
static bool
bundle_in_use(const struct pr_instance *inst, size_t n, const char *bundle_id)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(inst[i].bundle_id, bundle_id) == 0)
			return true;
	return false;
}

/*
 * The bundles of the instances bound to the workspace, whom may see them
 * who may see the instances: a console builds its task forms from their
 * args schemas.  A bundle no bound instance names stays unseen, as a
 * foreign instance does.  Two store calls; bundles are few.
 */
void
api_bundle_list(struct api_ctx *c)
{
	struct pr_req qi = req_for(c, PR_OP_INSTANCE_LIST),
	              qb = req_for(c, PR_OP_BUNDLE_LIST);
	struct pr_rep ri, rb;
	json_t *list;

	if (!allowed(c, CM_ACT_INSTANCE_LIST, NULL, NULL, NULL))
		return;
	qi.space_id = NULL;
	qb.workspace_id = qb.space_id = NULL;
	memset(&ri, 0, sizeof(ri));
	memset(&rb, 0, sizeof(rb));
	if (!api_call(c, &qi, &ri))
		goto out;
	if (ri.err != CM_OK) {
		api_fail_rep(c, &ri);
		goto out;
	}
	if (!api_call(c, &qb, &rb))
		goto out;
	if (rb.err != CM_OK) {
		api_fail_rep(c, &rb);
		goto out;
	}
	list = json_array();
	for (size_t i = 0; list != NULL && i < rb.n_bundles; i++)
		if (bundle_in_use(
		        ri.instances, ri.n_instances, rb.bundles[i].bundle_id))
			json_array_append_new(
			    list, api_dto_bundle(&rb.bundles[i]));
	api_ok(c, 200, list);
out:
	pr_rep_free(&ri);
	pr_rep_free(&rb);
}

bool
api_space_allowed(struct api_ctx *c, enum cm_action a)
{
	struct pr_rep sp;
	bool ok = api_space_for(c, a, &sp);

	pr_rep_free(&sp);
	return ok;
}
