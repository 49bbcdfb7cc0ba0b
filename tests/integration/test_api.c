/*
 * The HTTP front over real HTTP (libcurl), the real service behind it:
 * scoped create, authorization, the atomic reservation, and the error
 * mapping they rest on.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testkit.h"
#include "token.h"

struct api_env {
	char dir[128];
	struct tk_proc p;
	nng_socket s;
	struct tk_world w;
	char manager[CM_TOKEN_LEN];    /* the world's operator, a manager */
	char member_id[CM_ID_MAX + 1]; /* a plain member */
	char member[CM_TOKEN_LEN];
	char outsider[CM_TOKEN_LEN]; /* a member of another workspace */
};

static void
issue(struct api_env *e, const char *principal_id, char *token)
{
	cr_assert_eq(tk_token_issue(e->s, principal_id, token), 0);
}

static void
principal_in(struct api_env *e, const char *ws, const char *role, char *id)
{
	struct pr_req q;
	struct pr_rep r;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_PRINCIPAL_CREATE;
	q.kind = "operator";
	q.name = "someone";
	cr_assert_eq(tk_call(e->s, &q, &r), CM_OK);
	snprintf(id, CM_ID_MAX + 1, "%s", r.principals[0].principal_id);
	pr_rep_free(&r);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_MEMBER_PUT;
	q.workspace_id = ws;
	q.principal_id = id;
	q.role = role;
	cr_assert_eq(tk_call(e->s, &q, &r), CM_OK);
	pr_rep_free(&r);
}

static void
env_start(struct api_env *e, const char *tag, size_t n_instances)
{
	char other_ws[CM_ID_MAX + 1], outsider_id[CM_ID_MAX + 1];
	struct pr_req q;
	struct pr_rep r;

	memset(e, 0, sizeof(*e));
	tk_tmpdir(e->dir, sizeof(e->dir), tag);
	cr_assert_eq(tk_spaced_start(&e->p, e->dir, NULL), 0);
	cr_assert(tk_http_ready(&e->p, 20000), "the api never answered");
	cr_assert_eq(cm_rpc_open(&e->s, e->p.store_url), 0);
	cr_assert_eq(tk_provision(e->s, &e->w, n_instances), 0);
	issue(e, e->w.operator_id, e->manager);
	principal_in(e, e->w.workspace_id, "member", e->member_id);
	issue(e, e->member_id, e->member);

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_WORKSPACE_CREATE;
	q.name = "elsewhere";
	cr_assert_eq(tk_call(e->s, &q, &r), CM_OK);
	snprintf(
	    other_ws, sizeof(other_ws), "%s", r.workspaces[0].workspace_id);
	pr_rep_free(&r);
	principal_in(e, other_ws, "manager", outsider_id);
	issue(e, outsider_id, e->outsider);
}

static void
env_stop(struct api_env *e)
{
	nng_close(e->s);
	tk_proc_stop(&e->p, SIGTERM);
	tk_rmrf(e->dir);
}

/* status of a request; *out gets the parsed body (caller decrefs). */
static int
call(struct api_env *e, const char *method, const char *path, const char *token,
    const char *body, json_t **out)
{
	char *text = NULL;
	int status = tk_http(&e->p, method, path, token, body, NULL, &text);

	if (out != NULL)
		*out = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	return status;
}

static const char *
error_code(json_t *body)
{
	return json_string_value(
	    json_object_get(json_object_get(body, "error"), "code"));
}

static void
spaces_path(struct api_env *e, char *buf, size_t len, const char *rest)
{
	snprintf(buf, len, "/api/v1/workspaces/%s/browser-spaces%s",
	    e->w.workspace_id, rest ? rest : "");
}

/* Creates a Space for owner on instance i as token; returns its id. */
static int
create(struct api_env *e, const char *token, size_t i, const char *owner,
    char *space_id)
{
	char path[256], body[512];
	json_t *out;
	int status;

	spaces_path(e, path, sizeof(path), NULL);
	snprintf(body, sizeof(body),
	    "{\"browser_instance_id\": \"%s\", \"owner_type\": \"operator\", "
	    "\"owner_id\": \"%s\", \"granted_capabilities\": [\"noop\", "
	    "\"sleep\", \"fail\"]}",
	    e->w.instance_id[i], owner);
	status = call(e, "POST", path, token, body, &out);
	if (status == 201 && space_id != NULL)
		snprintf(space_id, CM_ID_MAX + 1, "%s",
		    json_string_value(json_object_get(
		        json_object_get(out, "data"), "space_id")));
	json_decref(out);
	return status;
}

Test(
    api, authorised_create_is_scoped_to_workspace_and_owner, .fini = tk_cleanup)
{
	static struct api_env e;
	char space[CM_ID_MAX + 1], path[256];
	json_t *out, *d;

	env_start(&e, "api1", 2);
	cr_assert_eq(create(&e, e.manager, 0, e.w.operator_id, space), 201);
	spaces_path(&e, path, sizeof(path), "/");
	strncat(path, space, sizeof(path) - strlen(path) - 1);
	cr_assert_eq(call(&e, "GET", path, e.manager, NULL, &out), 200);
	d = json_object_get(out, "data");
	cr_assert_str_eq(json_string_value(json_object_get(d, "workspace_id")),
	    e.w.workspace_id);
	cr_assert_str_eq(
	    json_string_value(json_object_get(d, "owner_id")), e.w.operator_id);
	cr_assert_str_eq(
	    json_string_value(json_object_get(d, "status")), "idle");
	cr_assert(json_is_null(json_object_get(d, "active_task")));
	json_decref(out);

	/* A member creates for itself, and not for someone else. */
	cr_assert_eq(create(&e, e.member, 1, e.w.operator_id, NULL), 403);
	cr_assert_eq(create(&e, e.member, 1, e.member_id, NULL), 201);
	env_stop(&e);
}

Test(api, other_workspace_and_non_owner_are_refused, .fini = tk_cleanup)
{
	static struct api_env e;
	char space[CM_ID_MAX + 1], base[256], path[320];
	static const char *const actions[][3] = {
	    {"GET", "", NULL},
	    {"GET", "/tasks", NULL},
	    {"GET", "/events", NULL},
	    {"POST", "/tasks",
	        "{\"request_id\": \"x\", \"capability\": \"noop\"}"},
	    {"POST", "/cancel", "{}"},
	    {"POST", "/close", NULL},
	};
	json_t *out;

	env_start(&e, "api2", 1);
	cr_assert_eq(create(&e, e.manager, 0, e.w.operator_id, space), 201);
	spaces_path(&e, base, sizeof(base), "/");

	for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
		snprintf(
		    path, sizeof(path), "%s%s%s", base, space, actions[i][1]);
		cr_assert_eq(call(&e, actions[i][0], path, e.outsider,
		                 actions[i][2], &out),
		    403, "%s %s as an outsider", actions[i][0], actions[i][1]);
		cr_assert_str_eq(error_code(out), "forbidden");
		json_decref(out);
		cr_assert_eq(call(&e, actions[i][0], path, e.member,
		                 actions[i][2], &out),
		    403, "%s %s as a non-owner", actions[i][0], actions[i][1]);
		json_decref(out);
		cr_assert_eq(
		    call(&e, actions[i][0], path, NULL, actions[i][2], &out),
		    401);
		cr_assert_str_eq(error_code(out), "unauthenticated");
		json_decref(out);
		cr_assert_eq(call(&e, actions[i][0], path, "spd_not-a-token",
		                 actions[i][2], NULL),
		    401);
	}
	/* Listing: the outsider is refused, the member sees none of it. */
	spaces_path(&e, path, sizeof(path), NULL);
	cr_assert_eq(call(&e, "GET", path, e.outsider, NULL, NULL), 403);
	cr_assert_eq(call(&e, "GET", path, e.member, NULL, &out), 200);
	cr_assert_eq(json_array_size(json_object_get(out, "data")), 0);
	json_decref(out);
	cr_assert_eq(call(&e, "GET", path, e.manager, NULL, &out), 200);
	cr_assert_eq(json_array_size(json_object_get(out, "data")), 1);
	json_decref(out);
	/* And the outsider cannot create in this workspace. */
	cr_assert_eq(create(&e, e.outsider, 0, e.w.operator_id, NULL), 403);
	env_stop(&e);
}

struct racer {
	struct api_env *e;
	pthread_barrier_t *start;
	int status;
	char code[64];
};

static void *
race(void *arg)
{
	struct racer *r = arg;
	char path[256], body[512], *text = NULL;
	json_t *out;

	spaces_path(r->e, path, sizeof(path), NULL);
	snprintf(body, sizeof(body),
	    "{\"browser_instance_id\": \"%s\", \"owner_type\": \"operator\", "
	    "\"owner_id\": \"%s\"}",
	    r->e->w.instance_id[0], r->e->w.operator_id);
	pthread_barrier_wait(r->start);
	r->status =
	    tk_http(&r->e->p, "POST", path, r->e->manager, body, NULL, &text);
	out = text ? json_loads(text, 0, NULL) : NULL;
	if (error_code(out) != NULL)
		snprintf(r->code, sizeof(r->code), "%s", error_code(out));
	json_decref(out);
	free(text);
	return NULL;
}

Test(api, concurrent_creates_leave_one_space, .fini = tk_cleanup)
{
	static struct api_env e;
	enum { N = 16 };
	struct racer r[N];
	pthread_t t[N];
	pthread_barrier_t start;
	struct pr_req q;
	struct pr_rep rep;
	int won = 0, lost = 0;

	env_start(&e, "api3", 1);
	pthread_barrier_init(&start, NULL, N);
	for (int i = 0; i < N; i++) {
		r[i] = (struct racer){&e, &start, 0, ""};
		pthread_create(&t[i], NULL, race, &r[i]);
	}
	for (int i = 0; i < N; i++) {
		pthread_join(t[i], NULL);
		if (r[i].status == 201)
			won++;
		else if (r[i].status == 409 &&
		         strcmp(r[i].code, "browser_instance_in_use") == 0)
			lost++;
	}
	pthread_barrier_destroy(&start);
	cr_assert_eq(won, 1);
	cr_assert_eq(lost, N - 1);

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SPACE_LIST;
	q.workspace_id = e.w.workspace_id;
	q.limit = 100;
	cr_assert_eq(tk_call(e.s, &q, &rep), CM_OK);
	cr_assert_eq(rep.n_spaces, 1, "the losers left rows behind");
	pr_rep_free(&rep);
	env_stop(&e);
}

Test(api, bad_input_is_rejected_with_its_code, .fini = tk_cleanup)
{
	static struct api_env e;
	char path[256], *big;
	json_t *out;
	static const size_t sizes[] = {CM_BODY_MAX + 10, 2 * 1024 * 1024};
	size_t n;

	env_start(&e, "api4", 1);
	spaces_path(&e, path, sizeof(path), NULL);
	cr_assert_eq(
	    call(&e, "POST", path, e.manager, "{\"nope\": 1}", &out), 422);
	cr_assert_str_eq(error_code(out), "invalid_request");
	json_decref(out);
	cr_assert_eq(call(&e, "POST", path, e.manager,
	                 "{\"browser_instance_id\": 7, \"owner_type\": "
	                 "\"operator\", \"owner_id\": \"x\"}",
	                 NULL),
	    422);
	cr_assert_eq(
	    call(&e, "POST", path, e.manager, "{\"a\":1,\"a\":2}", NULL), 422);
	cr_assert_eq(call(&e, "POST", path, e.manager, "[", NULL), 422);

	/* Just over the bound, and far over it: both judged by their
	 * Content-Length, the large one never read whole. */
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		n = sizes[i];
		big = malloc(n + 1);
		memset(big, ' ', n);
		big[0] = '{';
		big[n - 1] = '}';
		big[n] = '\0';
		cr_assert_eq(call(&e, "POST", path, e.manager, big, &out), 413,
		    "%zu", n);
		cr_assert_str_eq(error_code(out), "payload_too_large");
		json_decref(out);
		free(big);
	}

	spaces_path(&e, path, sizeof(path), "?limit=101");
	cr_assert_eq(call(&e, "GET", path, e.manager, NULL, NULL), 422);
	spaces_path(&e, path, sizeof(path), "?limit=0");
	cr_assert_eq(call(&e, "GET", path, e.manager, NULL, NULL), 422);
	/* Unknown and foreign Spaces look the same: 404. */
	spaces_path(&e, path, sizeof(path), "/no-such-space");
	cr_assert_eq(call(&e, "GET", path, e.manager, NULL, &out), 404);
	cr_assert_str_eq(error_code(out), "not_found");
	json_decref(out);
	cr_assert_eq(
	    call(&e, "GET", "/api/v1/nowhere", e.manager, NULL, NULL), 404);
	env_stop(&e);
}

struct task_done {
	struct api_env *e;
	char path[400];
};

static bool
task_completed(void *arg)
{
	struct task_done *t = arg;
	json_t *out;
	bool done;

	done = call(t->e, "GET", t->path, t->e->manager, NULL, &out) == 200 &&
	       strcmp(json_string_value(json_object_get(
	                  json_object_get(out, "data"), "status")),
	           "completed") == 0;
	json_decref(out);
	return done;
}

/* task (a task's JSON) failed with code. */
static void
assert_failed(json_t *task, const char *code)
{
	cr_assert_str_eq(
	    json_string_value(json_object_get(task, "status")), "failed");
	cr_assert_str_eq(json_string_value(json_object_get(
	                     json_object_get(task, "error"), "code")),
	    code);
}

/* A task as a ?wait= answer gave it is the task as a read gives it. */
static void
same_as_read(struct api_env *e, json_t *task)
{
	char path[320];
	json_t *out;

	snprintf(path, sizeof(path),
	    "/api/v1/workspaces/%s/browser-spaces/%s/tasks/%s",
	    e->w.workspace_id,
	    json_string_value(json_object_get(task, "space_id")),
	    json_string_value(json_object_get(task, "task_id")));
	cr_assert_eq(call(e, "GET", path, e->manager, NULL, &out), 200);
	cr_expect(json_equal(json_object_get(out, "data"), task),
	    "the answer differs from a read of the task");
	json_decref(out);
}

Test(api, task_runs_and_events_replay_in_order, .fini = tk_cleanup)
{
	static struct api_env e;
	struct task_done td;
	char space[CM_ID_MAX + 1], path[320];
	json_t *out, *d, *events;
	int64_t last = 0;
	size_t i;

	env_start(&e, "api5", 1);
	cr_assert_eq(create(&e, e.manager, 0, e.w.operator_id, space), 201);
	snprintf(path, sizeof(path),
	    "/api/v1/workspaces/%s/browser-spaces/%s/tasks", e.w.workspace_id,
	    space);
	cr_assert_eq(call(&e, "POST", path, e.manager,
	                 "{\"request_id\": \"r1\", \"capability\": \"noop\", "
	                 "\"args\": {}}",
	                 &out),
	    202);
	d = json_object_get(out, "data");
	cr_assert(json_is_array(json_object_get(d, "arg_keys")));
	cr_assert_null(json_object_get(d, "args"), "args are never returned");
	td.e = &e;
	snprintf(td.path, sizeof(td.path), "%s/%s", path,
	    json_string_value(json_object_get(d, "task_id")));
	json_decref(out);
	cr_assert(tk_wait_until(task_completed, &td, 10000));

	/* The same request_id: the same task, 200, no second call. */
	cr_assert_eq(call(&e, "POST", path, e.manager,
	                 "{\"request_id\": \"r1\", \"capability\": \"noop\", "
	                 "\"args\": {}}",
	                 NULL),
	    200);
	cr_assert_eq(call(&e, "POST", path, e.manager,
	                 "{\"request_id\": \"r1\", \"capability\": \"sleep\", "
	                 "\"args\": {\"ms\": 1}}",
	                 &out),
	    409);
	cr_assert_str_eq(error_code(out), "idempotency_key_reused");
	json_decref(out);
	cr_assert_eq(
	    call(&e, "POST", path, e.manager,
	        "{\"request_id\": \"r2\", \"capability\": \"navigate\", "
	        "\"args\": {\"url\": \"https://example.test/\"}}",
	        &out),
	    422);
	cr_assert_str_eq(error_code(out), "capability_not_granted");
	json_decref(out);
	cr_assert_eq(call(&e, "POST", path, e.manager,
	                 "{\"request_id\": \"r3\", \"capability\": \"noop\", "
	                 "\"timeout_seconds\": 601}",
	                 &out),
	    422);
	cr_assert_str_eq(error_code(out), "invalid_timeout");
	json_decref(out);

	/* ?wait: the finished task, 200, as a read of it shows it (the
	 * answer is made from the row the task's event carries). */
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "?wait=10");
	cr_assert_eq(call(&e, "POST", path, e.manager,
	                 "{\"request_id\": \"w1\", \"capability\": \"sleep\", "
	                 "\"args\": {\"ms\": 50}}",
	                 &out),
	    200);
	cr_assert_str_eq(json_string_value(json_object_get(
	                     json_object_get(out, "data"), "status")),
	    "completed");
	same_as_read(&e, json_object_get(out, "data"));
	json_decref(out);
	cr_assert_eq(call(&e, "POST", path, e.manager,
	                 "{\"request_id\": \"w3\", \"capability\": \"fail\", "
	                 "\"args\": {\"code\": \"element_not_found\", "
	                 "\"message\": \"no such element\"}}",
	                 &out),
	    200);
	d = json_object_get(out, "data");
	assert_failed(d, "element_not_found");
	same_as_read(&e, d);
	json_decref(out);
	path[strlen(path) - 2] = '3';
	path[strlen(path) - 1] = '1';
	cr_assert_eq(
	    call(&e, "POST", path, e.manager,
	        "{\"request_id\": \"w2\", \"capability\": \"noop\"}", NULL),
	    422);

	snprintf(path, sizeof(path),
	    "/api/v1/workspaces/%s/browser-spaces/%s/events?after_sequence=1",
	    e.w.workspace_id, space);
	cr_assert_eq(call(&e, "GET", path, e.manager, NULL, &out), 200);
	events = json_object_get(out, "data");
	cr_assert_geq(json_array_size(events), 3);
	json_array_foreach(events, i, d)
	{
		int64_t seq =
		    json_integer_value(json_object_get(d, "sequence"));
		cr_assert_eq(seq, (i == 0 ? 2 : last + 1), "event order");
		last = seq;
	}
	cr_assert_str_eq(
	    json_string_value(json_object_get(
	        json_array_get(events, json_array_size(events) - 1), "kind")),
	    "failed");
	json_decref(out);
	env_stop(&e);
}

Test(api, runtime_not_ready_persists_a_failed_task, .fini = tk_cleanup)
{
	static struct api_env e;
	char space[CM_ID_MAX + 1], path[320];
	struct pr_req q;
	struct pr_rep r;
	json_t *out;

	env_start(&e, "api6", 1);
	cr_assert_eq(create(&e, e.manager, 0, e.w.operator_id, space), 201);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_INSTANCE_SET_STATUS;
	q.browser_instance_id = e.w.instance_id[0];
	q.status = "disabled";
	cr_assert_eq(tk_call(e.s, &q, &r), CM_OK);
	pr_rep_free(&r);

	snprintf(path, sizeof(path),
	    "/api/v1/workspaces/%s/browser-spaces/%s/tasks", e.w.workspace_id,
	    space);
	cr_assert_eq(
	    call(&e, "POST", path, e.manager,
	        "{\"request_id\": \"r1\", \"capability\": \"noop\"}", &out),
	    503);
	cr_assert_str_eq(error_code(out), "runtime_not_ready");
	assert_failed(json_object_get(out, "data"), "runtime_not_ready");
	json_decref(out);
	env_stop(&e);
}

struct revoked_wait {
	struct api_env *e;
	const char *token;
	const char *path;
};

static bool
refused(void *arg)
{
	struct revoked_wait *w = arg;

	return call(w->e, "GET", w->path, w->token, NULL, NULL) == 401;
}

/* A token revoked behind the api's back (straight in the store, as another
 * api process would) stops working once its cached lookup ages out. */
Test(api, token_revoked_elsewhere_stops_working, .fini = tk_cleanup)
{
	static struct api_env e;
	char path[256], token[CM_TOKEN_LEN], hash[CM_TOKEN_HASH_LEN];
	char token_id[CM_ID_MAX + 1];
	struct revoked_wait w;
	struct pr_req q;
	struct pr_rep r;

	env_start(&e, "api7", 1);
	cm_token_new(token);
	cr_assert_eq(cm_token_hash(token, strlen(token), hash), 0);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_TOKEN_ISSUE;
	q.principal_id = e.w.operator_id;
	q.token_hash = hash;
	cr_assert_eq(tk_call(e.s, &q, &r), CM_OK);
	snprintf(token_id, sizeof(token_id), "%s", r.tokens[0].token_id);
	pr_rep_free(&r);

	spaces_path(&e, path, sizeof(path), NULL);
	cr_assert_eq(call(&e, "GET", path, token, NULL, NULL), 200);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_TOKEN_REVOKE;
	q.token_id = token_id;
	cr_assert_eq(tk_call(e.s, &q, &r), CM_OK);
	pr_rep_free(&r);
	w = (struct revoked_wait){&e, token, path};
	cr_assert(
	    tk_wait_until(refused, &w, 5000), "a revoked token kept working");
	env_stop(&e);
}
