/*
 * Who may do what, over real HTTP against the real service (the rules
 * of common/authz.h, as the routes apply them): every Space route
 * against every kind of caller, a foreign Space, the active-Space quota,
 * and the 422 answers to every kind of bad body on create and submit.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_fixture.h"

TestSuite(authz, .timeout = 120);

/* Callers, as seen from one Space. */
enum col {
	C_NONE,      /* no Authorization header */
	C_UNKNOWN,   /* a well-formed token nobody issued */
	C_REVOKED,   /* the owner's token, revoked */
	C_EXPIRED,   /* the owner's token, past expires_at */
	C_NONMEMBER, /* a manager of another workspace */
	C_MEMBER,    /* a member who owns nothing */
	C_OWNER,     /* the member who owns the Space */
	C_OTHER,     /* a member who owns the other Space, not this one */
	C_MANAGER,   /* a manager of the workspace */
	C_ADMIN,     /* an admin, with no membership */
	C__N
};

static const char *const col_name[C__N] = {"no token", "unknown token",
    "revoked token", "expired token", "non-member", "member", "owner",
    "other owner", "manager", "admin"};

enum route {
	R_LIST,
	R_INSTANCES,
	R_CREATE,
	R_SUBMIT,
	R_GET,
	R_TASKS,
	R_TASK,
	R_EVENTS,
	R_CANCEL,
	R_CLOSE,
	R_SSE,
	R__N
};

#define U 401
#define F 403
/* The exact status of every cell.  Allowed cells: list, read and events
 * 200; create 201; submit 202 (new task); cancel 200 (the newest task has
 * finished); close 202 (teardown pending); SSE 200 (on a closed Space, so
 * the stream ends). */
static const struct {
	const char *name;
	int want[C__N];
} matrix[R__N] = {
    [R_LIST] = {"GET browser-spaces", {U, U, U, U, F, 200, 200, 200, 200, 200}},
    [R_INSTANCES] = {"GET browser-instances",
        {U, U, U, U, F, 200, 200, 200, 200, 200}},
    [R_CREATE] = {"POST browser-spaces", {U, U, U, U, F, F, 201, F, 201, 201}},
    [R_SUBMIT] = {"POST tasks", {U, U, U, U, F, F, 202, F, 202, 202}},
    [R_GET] = {"GET space", {U, U, U, U, F, F, 200, F, 200, 200}},
    [R_TASKS] = {"GET tasks", {U, U, U, U, F, F, 200, F, 200, 200}},
    [R_TASK] = {"GET tasks/{id}", {U, U, U, U, F, F, 200, F, 200, 200}},
    [R_EVENTS] = {"GET events", {U, U, U, U, F, F, 200, F, 200, 200}},
    [R_CANCEL] = {"POST cancel", {U, U, U, U, F, F, 200, F, 200, 200}},
    [R_CLOSE] = {"POST close", {U, U, U, U, F, F, 202, F, 202, 202}},
    [R_SSE] = {"GET events (SSE)", {U, U, U, U, F, F, 200, F, 200, 200}},
};
#undef U
#undef F

/* One target Space and who is who for it. */
struct target {
	const char *owner_type;
	char owner_id[CM_ID_MAX + 1];
	char space[CM_ID_MAX + 1];
	char task[CM_ID_MAX + 1]; /* its first task */
	const char *tok[C__N];
	const char *pid[C__N]; /* principal ids of the member columns */
	char closed[C__N][CM_ID_MAX + 1]; /* Spaces each caller closed */
	int n_tasks;
};

struct matrix_env {
	struct hf_env e;
	char op_id[CM_ID_MAX + 1], agent_id[CM_ID_MAX + 1];
	char member_id[CM_ID_MAX + 1], outsider_id[CM_ID_MAX + 1];
	char op_tok[CM_TOKEN_MAX + 1], agent_tok[CM_TOKEN_MAX + 1];
	char member_tok[CM_TOKEN_MAX + 1], outsider_tok[CM_TOKEN_MAX + 1];
	char revoked[CM_TOKEN_MAX + 1], expired[CM_TOKEN_MAX + 1];
	char unknown[CM_TOKEN_LEN];
	struct target t[2];
	size_t next_instance;
	int seq;
};

static bool
token_expired(void *arg)
{
	struct matrix_env *m = arg;
	char path[1024];

	hf_path(&m->e, path, sizeof(path), NULL, NULL, NULL);
	return tk_http(&m->e.sf.p, "GET", path, m->expired, NULL, NULL, NULL) ==
	       401;
}

static void
matrix_setup(struct matrix_env *m)
{
	struct hf_env *e = &m->e;
	char ws2[CM_ID_MAX + 1], tok_id[CM_ID_MAX + 1], path[1024];

	hf_start(e, "authz", 16, NULL);
	hf_principal(e, "operator", "owner-op", "member", m->op_id, m->op_tok);
	hf_principal(e, "runtime_agent", "owner-agent", "member", m->agent_id,
	    m->agent_tok);
	hf_principal(
	    e, "operator", "member", "member", m->member_id, m->member_tok);
	af_create(&e->af, "/api/v1/admin/workspaces", "{\"name\": \"w2\"}",
	    "workspace_id", ws2);
	hf_principal(
	    e, "operator", "outsider", NULL, m->outsider_id, m->outsider_tok);
	af_member_put(&e->af, ws2, m->outsider_id, "manager");
	cm_token_new(m->unknown);

	/* The owner's token that expires (waited for below) and the one that
	 * is revoked, after it was shown to work. */
	af_issue(&e->af, m->op_id, "{\"expires_in_seconds\": 1}", tok_id,
	    m->expired);
	af_issue(&e->af, m->op_id, NULL, tok_id, m->revoked);
	hf_path(e, path, sizeof(path), NULL, NULL, NULL);
	hf_expect(e, "GET", path, m->revoked, NULL, 200, NULL);
	snprintf(path, sizeof(path), "/api/v1/admin/tokens/%s", tok_id);
	hf_expect(e, "DELETE", path, e->af.admin, NULL, 200, NULL);

	for (int i = 0; i < 2; i++) {
		struct target *t = &m->t[i];
		const char *own_tok = i == 0 ? m->op_tok : m->agent_tok;
		const char *other_tok = i == 0 ? m->agent_tok : m->op_tok;

		t->owner_type = i == 0 ? "operator" : "runtime_agent";
		snprintf(t->owner_id, sizeof(t->owner_id), "%s",
		    i == 0 ? m->op_id : m->agent_id);
		t->tok[C_NONE] = NULL;
		t->tok[C_UNKNOWN] = m->unknown;
		t->tok[C_REVOKED] = m->revoked;
		t->tok[C_EXPIRED] = m->expired;
		t->tok[C_NONMEMBER] = m->outsider_tok;
		t->tok[C_MEMBER] = m->member_tok;
		t->tok[C_OWNER] = own_tok;
		t->tok[C_OTHER] = other_tok;
		t->tok[C_MANAGER] = e->manager;
		t->tok[C_ADMIN] = e->af.admin;
		t->pid[C_MEMBER] = m->member_id;
		t->pid[C_OWNER] = i == 0 ? m->op_id : m->agent_id;
		t->pid[C_OTHER] = i == 0 ? m->agent_id : m->op_id;
		/* Each owner creates its own Space. */
		cr_assert_eq(
		    hf_create(e, own_tok, e->sf.w.instance_id[i], t->owner_type,
		        t->owner_id, "[\"noop\"]", t->space),
		    201);
	}
	m->next_instance = 2;
	cr_assert(tk_wait_until(token_expired, m, HF_WAIT_MS),
	    "the token never expired");
}

/* A fresh Space for the target's owner, made by the manager. */
static void
fresh_space(struct matrix_env *m, struct target *t, char *out)
{
	cr_assert_lt(m->next_instance, m->e.sf.w.n_instances);
	cr_assert_eq(hf_create(&m->e, m->e.manager,
	                 m->e.sf.w.instance_id[m->next_instance++],
	                 t->owner_type, t->owner_id, "[\"noop\"]", out),
	    201);
}

/* Runs one cell; returns the status and leaves the body in *res. */
static int
cell(struct matrix_env *m, struct target *t, enum route r, enum col c,
    json_t **res)
{
	struct hf_env *e = &m->e;
	const char *tok = t->tok[c];
	bool allowed = matrix[r].want[c] < 400;
	char path[1024], rest[128], rid[64], *text = NULL;
	int status;

	*res = NULL;
	switch (r) {
	case R_LIST:
		hf_path(e, path, sizeof(path), NULL, NULL, "?limit=100");
		return hf_call(e, "GET", path, tok, NULL, res);
	case R_INSTANCES:
		snprintf(path, sizeof(path),
		    "/api/v1/workspaces/%s/browser-instances", hf_ws(e));
		return hf_call(e, "GET", path, tok, NULL, res);
	case R_CREATE:
		cr_assert_lt(m->next_instance, e->sf.w.n_instances);
		hf_path(e, path, sizeof(path), NULL, NULL, NULL);
		{
			char body[512];

			snprintf(body, sizeof(body),
			    "{\"browser_instance_id\": \"%s\", \"owner_type\": "
			    "\"%s\", \"owner_id\": \"%s\"}",
			    e->sf.w.instance_id[m->next_instance],
			    t->owner_type, t->owner_id);
			status = hf_call(e, "POST", path, tok, body, res);
		}
		if (status == 201)
			m->next_instance++;
		return status;
	case R_SUBMIT:
		snprintf(rid, sizeof(rid), "cell-%d", m->seq++);
		status = hf_submit(
		    e, tok, t->space, "", rid, "noop", "{}", res, NULL);
		if (status == 202) {
			const char *id = af_data_str(*res, "task_id");

			cr_assert_not_null(id);
			if (t->task[0] == '\0')
				snprintf(t->task, sizeof(t->task), "%s", id);
			t->n_tasks++;
			cr_assert(hf_wait_task(e, t->space, id, "completed"));
		}
		return status;
	case R_GET:
	case R_TASKS:
	case R_EVENTS:
	case R_TASK:
		if (r == R_TASK)
			snprintf(rest, sizeof(rest), "/tasks/%s", t->task);
		else
			snprintf(rest, sizeof(rest), "%s",
			    r == R_GET     ? ""
			    : r == R_TASKS ? "/tasks"
			                   : "/events");
		hf_path(e, path, sizeof(path), NULL, t->space, rest);
		return hf_call(e, "GET", path, tok, NULL, res);
	case R_CANCEL:
		return hf_post(e, tok, t->space, "cancel", "{}", res);
	case R_CLOSE:
		if (!allowed)
			return hf_post(e, tok, t->space, "close", NULL, res);
		fresh_space(m, t, t->closed[c]);
		return hf_post(e, tok, t->closed[c], "close", NULL, res);
	case R_SSE:
		if (!allowed) {
			status = hf_sse(e, tok, t->space, &text);
			*res = text ? json_loads(text, 0, NULL) : NULL;
			free(text);
			return status;
		}
		cr_assert(hf_wait_space(e, t->closed[c], "closed"));
		status = hf_sse(e, tok, t->closed[c], &text);
		cr_assert_not_null(
		    strstr(text ? text : "", "event: space_closed"),
		    "the stream did not replay to its end");
		cr_assert_not_null(strstr(text, "event: space_opened"));
		free(text);
		return status;
	case R__N:
		break;
	}
	cr_assert_fail("no such route");
	return -1;
}

/* What an allowed answer must hold. */
static void
check_allowed(struct target *t, enum route r, enum col c, json_t *res)
{
	json_t *d = af_data(res), *v;
	size_t i;

	switch (r) {
	case R_LIST:
		cr_assert(json_is_array(d));
		json_array_foreach(d, i, v)
		{
			if (c == C_MEMBER || c == C_OWNER || c == C_OTHER)
				cr_assert_str_eq(sf_str(v, "owner_id"),
				    t->pid[c],
				    "a member sees only its own Spaces");
		}
		if (c != C_MEMBER && c != C_OTHER)
			cr_assert_geq(af_find(d, "space_id", t->space), 0);
		else
			cr_assert_lt(af_find(d, "space_id", t->space), 0);
		break;
	case R_INSTANCES:
		cr_assert_eq(json_array_size(d), 16);
		break;
	case R_CREATE:
		cr_assert_str_eq(sf_str(d, "owner_id"), t->owner_id);
		cr_assert_str_eq(sf_str(d, "owner_type"), t->owner_type);
		break;
	case R_GET:
		cr_assert_str_eq(sf_str(d, "space_id"), t->space);
		break;
	case R_TASKS:
	case R_EVENTS:
		cr_assert(json_is_array(d) && json_array_size(d) > 0);
		break;
	case R_TASK:
		cr_assert_str_eq(sf_str(d, "task_id"), t->task);
		break;
	case R_CANCEL:
		cr_assert_str_eq(sf_str(d, "status"), "completed");
		break;
	case R_CLOSE:
		cr_assert(json_is_true(json_object_get(d, "close_requested")));
		break;
	default:
		break;
	}
}

Test(authz, space_routes_by_identity, .fini = tk_cleanup)
{
	static struct matrix_env m;
	char path[1024];
	json_t *res, *events;
	int cells = 0;

	memset(&m, 0, sizeof(m));
	matrix_setup(&m);
	for (int r = 0; r < R__N; r++) {
		for (int i = 0; i < 2; i++) {
			struct target *t = &m.t[i];

			for (int c = 0; c < C__N; c++) {
				int want = matrix[r].want[c];
				int got = cell(
				    &m, t, (enum route)r, (enum col)c, &res);

				cr_assert_eq(got, want,
				    "%s on the %s's Space as %s: %d, want %d",
				    matrix[r].name, t->owner_type, col_name[c],
				    got, want);
				if (want == 401)
					cr_assert_str_eq(af_error_code(res),
					    "unauthenticated");
				else if (want == 403)
					cr_assert_str_eq(af_error_code(res),
					    "forbidden", "%s as %s",
					    matrix[r].name, col_name[c]);
				else if (r != R_SSE)
					check_allowed(
					    t, (enum route)r, (enum col)c, res);
				json_decref(res);
				cells++;
			}
		}
	}
	cr_assert_eq(cells, R__N * 2 * C__N);

	/* The refused calls changed nothing. */
	for (int i = 0; i < 2; i++) {
		struct target *t = &m.t[i];
		json_t *d = hf_space(&m.e, NULL, t->space);

		cr_assert_str_eq(sf_str(d, "status"), "idle");
		cr_assert(json_is_false(json_object_get(d, "close_requested")));
		json_decref(d);
		hf_path(&m.e, path, sizeof(path), NULL, t->space, "/tasks");
		cr_assert_eq(
		    hf_call(&m.e, "GET", path, m.e.manager, NULL, &res), 200);
		cr_assert_eq(json_array_size(af_data(res)), 3);
		cr_assert_eq(t->n_tasks, 3);
		json_decref(res);
		events = hf_all_events(&m.e, t->space);
		cr_assert_eq(
		    hf_event_count(events, "cancel_requested", NULL, NULL), 0);
		json_decref(events);
	}
	/* Two Spaces, six allowed creates and six closed: no other row. */
	hf_path(&m.e, path, sizeof(path), NULL, NULL, "?limit=100");
	cr_assert_eq(hf_call(&m.e, "GET", path, m.e.manager, NULL, &res), 200);
	cr_assert_eq(json_array_size(af_data(res)), 14);
	json_decref(res);
	cr_assert_eq(
	    hf_db_count(&m.e, "SELECT count(*) FROM browser_spaces", NULL), 14);
	hf_stop(&m.e);
}

/* A Space of another workspace, named under this workspace's path, is
 * not found, even for this workspace's manager and for an admin. */
Test(authz, foreign_space_is_not_found, .fini = tk_cleanup)
{
	static struct hf_env e;
	char ws2[CM_ID_MAX + 1], inst2[CM_ID_MAX + 1], o2[CM_ID_MAX + 1];
	char mem[CM_ID_MAX + 1], mem_tok[CM_TOKEN_MAX + 1], tid[CM_ID_MAX + 1];
	char s2[CM_ID_MAX + 1], t2[CM_ID_MAX + 1], body[1024], path[1024];
	char rest[128], *text = NULL;
	const char *who[3];
	json_t *res, *d;

	hf_start(&e, "foreign", 1, NULL);
	hf_principal(&e, "operator", "member", "member", mem, mem_tok);
	who[0] = e.manager;
	who[1] = mem_tok;
	who[2] = e.af.admin;
	af_create(&e.af, "/api/v1/admin/workspaces", "{\"name\": \"w2\"}",
	    "workspace_id", ws2);
	af_principal(&e.af, "operator", "owner-2", o2);
	af_member_put(&e.af, ws2, o2, "manager");
	snprintf(body, sizeof(body),
	    "{\"name\": \"w2-inst\", \"driver\": \"fake\", \"bundle_id\": "
	    "\"%s\"}",
	    e.sf.w.bundle_id);
	af_create(&e.af, "/api/v1/admin/browser-instances", body,
	    "browser_instance_id", inst2);
	snprintf(body, sizeof(body),
	    "{\"workspace_id\": \"%s\", \"browser_instance_id\": \"%s\"}", ws2,
	    inst2);
	af_create(&e.af, "/api/v1/admin/bindings", body, "binding_id", tid);
	hf_path(&e, path, sizeof(path), ws2, NULL, NULL);
	snprintf(body, sizeof(body),
	    "{\"browser_instance_id\": \"%s\", \"owner_type\": \"operator\", "
	    "\"owner_id\": \"%s\", \"granted_capabilities\": [\"noop\"]}",
	    inst2, o2);
	cr_assert_eq(hf_call(&e, "POST", path, e.af.admin, body, &res), 201);
	snprintf(s2, sizeof(s2), "%s", af_data_str(res, "space_id"));
	json_decref(res);
	hf_path(&e, path, sizeof(path), ws2, s2, "/tasks?wait=10");
	cr_assert_eq(
	    hf_call(&e, "POST", path, e.af.admin,
	        "{\"request_id\": \"r\", \"capability\": \"noop\"}", &res),
	    200);
	snprintf(t2, sizeof(t2), "%s", af_data_str(res, "task_id"));
	json_decref(res);

	snprintf(rest, sizeof(rest), "/tasks/%s", t2);
	for (int i = 0; i < 3; i++) {
		static const char *const gets[] = {"", "/tasks", "/events"};
		const char *tok = who[i];

		for (int k = 0; k < 3; k++) {
			hf_path(&e, path, sizeof(path), NULL, s2, gets[k]);
			hf_expect(&e, "GET", path, tok, NULL, 404, "not_found");
		}
		hf_path(&e, path, sizeof(path), NULL, s2, rest);
		hf_expect(&e, "GET", path, tok, NULL, 404, "not_found");
		cr_assert_eq(hf_sse(&e, tok, s2, &text), 404);
		free(text);
		cr_assert_eq(
		    hf_submit(&e, tok, s2, "", "x", "noop", "{}", &res, NULL),
		    404);
		cr_assert_str_eq(af_error_code(res), "not_found");
		json_decref(res);
		hf_path(&e, path, sizeof(path), NULL, s2, "/cancel");
		hf_expect(&e, "POST", path, tok, "{}", 404, "not_found");
		hf_path(&e, path, sizeof(path), NULL, s2, "/close");
		hf_expect(&e, "POST", path, tok, NULL, 404, "not_found");
		/* Nor is the other workspace's instance usable here. */
		cr_assert_eq(hf_create(&e, tok, inst2, "operator",
		                 i == 1 ? mem : e.sf.w.operator_id, NULL, NULL),
		    404);
	}
	/* Under its own workspace's path, this manager is no member. */
	hf_path(&e, path, sizeof(path), ws2, s2, NULL);
	hf_expect(&e, "GET", path, e.manager, NULL, 403, "forbidden");
	snprintf(path, sizeof(path), "/api/v1/workspaces/%s/browser-instances",
	    hf_ws(&e));
	cr_assert_eq(hf_call(&e, "GET", path, e.manager, NULL, &res), 200);
	cr_assert_lt(af_find(af_data(res), "browser_instance_id", inst2), 0);
	json_decref(res);

	/* The foreign Space is untouched. */
	hf_path(&e, path, sizeof(path), ws2, s2, NULL);
	cr_assert_eq(hf_call(&e, "GET", path, e.af.admin, NULL, &res), 200);
	d = af_data(res);
	cr_assert_str_eq(sf_str(d, "status"), "idle");
	cr_assert(json_is_false(json_object_get(d, "close_requested")));
	json_decref(res);
	hf_path(&e, path, sizeof(path), ws2, s2, "/tasks");
	cr_assert_eq(hf_call(&e, "GET", path, e.af.admin, NULL, &res), 200);
	cr_assert_eq(json_array_size(af_data(res)), 1);
	json_decref(res);
	hf_stop(&e);
}

/* --max-spaces-per-workspace=2: the third active Space is refused. */
Test(authz, active_space_quota, .fini = tk_cleanup)
{
	static const char *const flags[] = {
	    "--max-spaces-per-workspace=2", NULL};
	static struct hf_env e;
	char s0[CM_ID_MAX + 1], s1[CM_ID_MAX + 1], s2[CM_ID_MAX + 1];
	char path[1024];
	json_t *res;

	hf_start(&e, "quota", 3, flags);
	hf_create_ok(&e, 0, NULL, s0);
	hf_create_ok(&e, 1, NULL, s1);
	hf_path(&e, path, sizeof(path), NULL, NULL, NULL);
	{
		char body[512];

		snprintf(body, sizeof(body),
		    "{\"browser_instance_id\": \"%s\", \"owner_type\": "
		    "\"operator\", \"owner_id\": \"%s\"}",
		    e.sf.w.instance_id[2], e.sf.w.operator_id);
		cr_assert_eq(
		    hf_call(&e, "POST", path, e.manager, body, &res), 429);
	}
	cr_assert_str_eq(af_error_code(res), "quota_exceeded");
	cr_assert(json_is_true(
	    json_object_get(json_object_get(res, "error"), "retryable")));
	json_decref(res);
	cr_assert_eq(hf_call(&e, "GET", path, e.manager, NULL, &res), 200);
	cr_assert_eq(json_array_size(af_data(res)), 2);
	json_decref(res);
	cr_assert_eq(
	    hf_db_count(&e, "SELECT count(*) FROM browser_spaces", NULL), 2);

	/* A closed Space no longer counts. */
	cr_assert_eq(hf_post(&e, e.manager, s0, "close", NULL, NULL), 202);
	cr_assert(hf_wait_space(&e, s0, "closed"));
	hf_create_ok(&e, 2, NULL, s2);
	hf_stop(&e);
}

/* {"a": {"a": ... }} nested depth containers deep in all, as the value of
 * args inside a submit body (which is the first level). */
static char *
nested_args_body(int depth)
{
	size_t cap = (size_t)depth * 8 + 128, n;
	char *s = malloc(cap);

	cr_assert_not_null(s);
	n = (size_t)snprintf(s, cap,
	    "{\"request_id\": \"deep\", \"capability\": \"noop\", \"args\": ");
	for (int i = 1; i < depth - 1; i++)
		n += (size_t)snprintf(s + n, cap - n, "{\"a\": ");
	n += (size_t)snprintf(s + n, cap - n, "{}");
	for (int i = 1; i < depth; i++)
		n += (size_t)snprintf(s + n, cap - n, "}");
	return s;
}

/* A body of n bytes whose args hold one string of filler. */
static char *
sized_args_body(size_t n)
{
	static const char head[] =
	    "{\"request_id\": \"big\", \"capability\": \"noop\", \"args\": "
	    "{\"k\": \"";
	char *s = malloc(n + 1);

	cr_assert_not_null(s);
	cr_assert_gt(n, sizeof(head) + 4);
	memcpy(s, head, sizeof(head) - 1);
	memset(s + sizeof(head) - 1, 'x', n - (sizeof(head) - 1) - 3);
	memcpy(s + n - 3, "\"}}", 3);
	s[n] = '\0';
	return s;
}

Test(authz, invalid_bodies_on_create_and_submit, .fini = tk_cleanup)
{
	static const char *const create_bad[] = {
	    "{\"browser_instance_id\": ",
	    "[]",
	    "\"space\"",
	    "42",
	    "null",
	    "{\"browser_instance_id\": \"%I\", \"owner_type\": \"operator\", "
	    "\"owner_id\": \"%O\", \"colour\": \"red\"}",
	    "{\"browser_instance_id\": 7, \"owner_type\": \"operator\", "
	    "\"owner_id\": \"%O\"}",
	    "{\"browser_instance_id\": \"%I\", \"binding_id\": 7, "
	    "\"owner_type\": \"operator\", \"owner_id\": \"%O\"}",
	    "{\"browser_instance_id\": \"%I\", \"owner_type\": 1, "
	    "\"owner_id\": \"%O\"}",
	    "{\"browser_instance_id\": \"%I\", \"owner_type\": \"operator\", "
	    "\"owner_id\": true}",
	    "{\"browser_instance_id\": \"%I\", \"owner_type\": \"operator\", "
	    "\"owner_id\": \"%O\", \"granted_capabilities\": \"noop\"}",
	    "{\"browser_instance_id\": \"%I\", \"owner_type\": \"operator\", "
	    "\"owner_id\": \"%O\", \"granted_capabilities\": [1]}",
	    "{\"browser_instance_id\": \"%I\", \"owner_type\": \"operator\", "
	    "\"owner_id\": \"%O\", \"granted_capabilities\": [\"\"]}",
	    "{\"browser_instance_id\": \"%I\", \"owner_type\": \"operator\", "
	    "\"owner_id\": \"%O\", \"request_id\": {}}",
	    "{\"owner_type\": \"operator\", \"owner_id\": \"%O\"}",
	    "{\"browser_instance_id\": \"%I\", \"owner_type\": \"operator\"}",
	    "{\"browser_instance_id\": \"%I\", \"owner_type\": \"robot\", "
	    "\"owner_id\": \"%O\"}",
	    "{\"browser_instance_id\": \"\", \"owner_type\": \"operator\", "
	    "\"owner_id\": \"%O\"}",
	    "{\"browser_instance_id\": \"%I\", \"owner_type\": \"operator\", "
	    "\"owner_id\": \"%O\", \"owner_id\": \"%O\"}",
	    "{\"browser_instance_id\": \"%I\", \"owner_type\": \"operator\", "
	    "\"owner_id\": \"%O\", \"request_id\": "
	    "\"0123456789012345678901234567890123456789012345678901234567890123"
	    "4\"}",
	};
	static const struct {
		const char *body, *code;
	} submit_bad[] = {
	    {"{\"request_id\": \"r\", ", "invalid_request"},
	    {"[]", "invalid_request"},
	    {"\"task\"", "invalid_request"},
	    {"1", "invalid_request"},
	    {"null", "invalid_request"},
	    {"{\"request_id\": \"r\", \"capability\": \"noop\", \"x\": 1}",
	        "invalid_request"},
	    {"{\"request_id\": \"r\", \"request_id\": \"r\", \"capability\": "
	     "\"noop\"}",
	        "invalid_request"},
	    {"{\"request_id\": 5, \"capability\": \"noop\"}",
	        "invalid_request"},
	    {"{\"request_id\": \"\", \"capability\": \"noop\"}",
	        "invalid_request"},
	    {"{\"capability\": \"noop\"}", "invalid_request"},
	    {"{\"request_id\": \"r\"}", "invalid_request"},
	    {"{\"request_id\": \"r\", \"capability\": [\"noop\"]}",
	        "invalid_request"},
	    {"{\"request_id\": \"r\", \"capability\": \"noop\", \"args\": "
	     "\"x\"}",
	        "invalid_args"},
	    {"{\"request_id\": \"r\", \"capability\": \"noop\", \"args\": []}",
	        "invalid_args"},
	    {"{\"request_id\": \"r\", \"capability\": \"noop\", \"args\": 5}",
	        "invalid_args"},
	    {"{\"request_id\": \"r\", \"capability\": \"noop\", \"args\": "
	     "true}",
	        "invalid_args"},
	    {"{\"request_id\": \"r\", \"capability\": \"noop\", "
	     "\"timeout_seconds\": 0}",
	        "invalid_timeout"},
	    {"{\"request_id\": \"r\", \"capability\": \"noop\", "
	     "\"timeout_seconds\": 601}",
	        "invalid_timeout"},
	    {"{\"request_id\": \"r\", \"capability\": \"noop\", "
	     "\"timeout_seconds\": -1}",
	        "invalid_timeout"},
	    {"{\"request_id\": \"r\", \"capability\": \"noop\", "
	     "\"timeout_seconds\": 1.5}",
	        "invalid_timeout"},
	    /* A string is a bad type, but of the timeout: any bad
	     * timeout_seconds is invalid_timeout, whatever its fault. */
	    {"{\"request_id\": \"r\", \"capability\": \"noop\", "
	     "\"timeout_seconds\": \"60\"}",
	        "invalid_timeout"},
	};
	static struct hf_env e;
	char space[CM_ID_MAX + 1], path[1024], body[1024];
	char *big;
	json_t *res;

	hf_start(&e, "bodies", 1, NULL);
	hf_path(&e, path, sizeof(path), NULL, NULL, NULL);
	for (size_t i = 0; i < sizeof(create_bad) / sizeof(create_bad[0]);
	     i++) {
		size_t n = 0;

		/* %I: the instance, %O: the owner. */
		for (const char *p = create_bad[i]; *p && n + 80 < sizeof(body);
		     p++) {
			if (p[0] == '%' && (p[1] == 'I' || p[1] == 'O')) {
				n += (size_t)snprintf(body + n,
				    sizeof(body) - n, "%s",
				    p[1] == 'I' ? e.sf.w.instance_id[0]
				                : e.sf.w.operator_id);
				p++;
			} else {
				body[n++] = *p;
			}
		}
		body[n] = '\0';
		hf_expect(
		    &e, "POST", path, e.manager, body, 422, "invalid_request");
	}
	/* Deeper than 32: the parser refuses it before any field is read. */
	big = nested_args_body(33);
	hf_expect(&e, "POST", path, e.manager, big, 422, "invalid_request");
	free(big);
	/* 33 names of the 32 a grant may hold. */
	{
		size_t n = (size_t)snprintf(body, sizeof(body),
		    "{\"browser_instance_id\": \"%s\", \"owner_type\": "
		    "\"operator\", \"owner_id\": \"%s\", "
		    "\"granted_capabilities\": [",
		    e.sf.w.instance_id[0], e.sf.w.operator_id);

		for (int k = 0; k < 33; k++)
			n += (size_t)snprintf(body + n, sizeof(body) - n,
			    "%s\"noop\"", k ? "," : "");
		snprintf(body + n, sizeof(body) - n, "]}");
		hf_expect(
		    &e, "POST", path, e.manager, body, 422, "invalid_request");
	}
	big = sized_args_body(CM_BODY_MAX + 1);
	hf_expect(&e, "POST", path, e.manager, big, 413, "payload_too_large");
	free(big);
	cr_assert_eq(hf_call(&e, "GET", path, e.manager, NULL, &res), 200);
	cr_assert_eq(
	    json_array_size(af_data(res)), 0, "a refused create left a row");
	json_decref(res);

	/* Submit. */
	hf_create_ok(&e, 0, "[\"noop\"]", space);
	hf_path(&e, path, sizeof(path), NULL, space, "/tasks");
	for (size_t i = 0; i < sizeof(submit_bad) / sizeof(submit_bad[0]); i++)
		hf_expect(&e, "POST", path, e.manager, submit_bad[i].body, 422,
		    submit_bad[i].code);
	/* Nesting: 32 levels parse (noop then refuses the key), 33 do not. */
	big = nested_args_body(32);
	hf_expect(&e, "POST", path, e.manager, big, 422, "invalid_args");
	free(big);
	big = nested_args_body(33);
	hf_expect(&e, "POST", path, e.manager, big, 422, "invalid_request");
	free(big);
	/* args over 16 KiB in a body under 64 KiB: invalid_args (args are
	 * bounded at CM_ARGS_MAX; 413 is for bodies over CM_BODY_MAX). */
	big = sized_args_body(CM_ARGS_MAX + 200);
	hf_expect(&e, "POST", path, e.manager, big, 422, "invalid_args");
	free(big);
	big = sized_args_body(CM_BODY_MAX + 1);
	hf_expect(&e, "POST", path, e.manager, big, 413, "payload_too_large");
	free(big);
	cr_assert_eq(hf_call(&e, "GET", path, e.manager, NULL, &res), 200);
	cr_assert_eq(
	    json_array_size(af_data(res)), 0, "a refused submit left a task");
	json_decref(res);
	res = sf_fake_lines(&e.sf);
	cr_assert_eq(json_array_size(res), 0, "the runtime was called");
	json_decref(res);

	/* The bounds themselves are accepted. */
	hf_path(&e, path, sizeof(path), NULL, space, "/tasks?wait=10");
	cr_assert_eq(hf_call(&e, "POST", path, e.manager,
	                 "{\"request_id\": \"t1\", \"capability\": \"noop\", "
	                 "\"timeout_seconds\": 1}",
	                 &res),
	    200);
	cr_assert_eq(json_integer_value(
	                 json_object_get(af_data(res), "timeout_seconds")),
	    1);
	json_decref(res);
	cr_assert_eq(hf_call(&e, "POST", path, e.manager,
	                 "{\"request_id\": \"t600\", \"capability\": \"noop\", "
	                 "\"timeout_seconds\": 600}",
	                 &res),
	    200);
	cr_assert_eq(json_integer_value(
	                 json_object_get(af_data(res), "timeout_seconds")),
	    600);
	json_decref(res);
	hf_stop(&e);
}
