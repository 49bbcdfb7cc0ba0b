/*
 * http_fixture.h: what the acceptance and authorization tests share.
 *
 * One real spaced per test on its own /tmp directory (extra config flags
 * allowed), its log in <dir>/spaced.out, the world of tk_provision_with:
 * the workspace "default", its manager "op" and n fake instances bound to
 * it whose runtime log is <dir>/fake.log.  Setup may go through the store
 * or the admin api; the behaviour under test goes through HTTP only.
 *
 * Built on space_fixture.h (the fake runtime's log) and admin_fixture.h
 * (the admin token, principals, tokens, memberships): struct hf_env holds
 * one of each, describing the same process.  Header-only, static inline.
 * Keep a struct hf_env in static storage (Criterion forks each test).
 * Waits are bounded polls.
 */
#ifndef SPACED_HTTP_FIXTURE_H
#define SPACED_HTTP_FIXTURE_H

#include <ctype.h>
#include <sqlite3.h>

#include "admin_fixture.h"
#include "space_fixture.h"

#define HF_WAIT_MS 15000

struct hf_env {
	struct sf_env sf; /* dir, fake_log, out, p, s (the store), w */
	struct af_env af; /* the same process, and the admin token */
	char manager[CM_TOKEN_MAX + 1]; /* the world's operator, a manager */
	bool record;                    /* keep every response body in seen */
	char *seen;
	size_t seen_len;
};

/* Starts spaced with extra flags (may be NULL) and provisions n fake
 * instances; e->manager signs in as the workspace's manager. */
static inline void
hf_start(struct hf_env *e, const char *tag, size_t n_instances,
    const char *const *flags)
{
	char cfg[300], tok_id[CM_ID_MAX + 1];

	memset(e, 0, sizeof(*e));
	tk_tmpdir(e->sf.dir, sizeof(e->sf.dir), tag);
	snprintf(
	    e->sf.fake_log, sizeof(e->sf.fake_log), "%s/fake.log", e->sf.dir);
	snprintf(e->sf.out, sizeof(e->sf.out), "%s/spaced.out", e->sf.dir);
	cr_assert_eq(
	    tk_spaced_start_logged(&e->sf.p, e->sf.dir, flags, e->sf.out), 0,
	    "spaced did not start (see %s)", e->sf.out);
	cr_assert(tk_http_ready(&e->sf.p, 20000), "the api never answered");
	cr_assert_eq(cm_rpc_open(&e->sf.s, e->sf.p.store_url), 0);
	snprintf(cfg, sizeof(cfg), "{\"log_path\": \"%s\", \"reset_ms\": 100}",
	    e->sf.fake_log);
	cr_assert_eq(tk_provision_with(e->sf.s, &e->sf.w, n_instances, cfg), 0);

	snprintf(e->af.dir, sizeof(e->af.dir), "%s", e->sf.dir);
	snprintf(e->af.log, sizeof(e->af.log), "%s", e->sf.out);
	e->af.p = e->sf.p;
	cr_assert(tk_wait_until(af_admin_token_works, &e->af, 20000),
	    "no working admin token in %s/admin.token", e->sf.dir);
	af_issue(&e->af, e->sf.w.operator_id, NULL, tok_id, e->manager);
}

static inline void
hf_stop(struct hf_env *e)
{
	nng_close(e->sf.s);
	tk_proc_stop(&e->sf.p, SIGTERM);
	tk_rmrf(e->sf.dir);
	free(e->seen);
	e->seen = NULL;
}

static inline const char *
hf_ws(const struct hf_env *e)
{
	return e->sf.w.workspace_id;
}

/* The id of the browser bundle (etc/bundles) into bundle. */
static inline void
hf_browser_bundle(struct hf_env *e, char bundle[CM_ID_MAX + 1])
{
	json_t *res, *v;
	size_t i;

	bundle[0] = '\0';
	cr_assert_eq(af_call(&e->af, "GET", "/api/v1/admin/runtime-bundles",
	                 e->af.admin, NULL, &res),
	    200);
	json_array_foreach(
	    af_data(res), i, v) if (strcmp(sf_str(v, "name"), "browser") == 0)
	    snprintf(bundle, CM_ID_MAX + 1, "%s", sf_str(v, "bundle_id"));
	json_decref(res);
	cr_assert_neq(bundle[0], '\0', "no browser bundle");
}

/* Binds instance inst to the workspace, as the admin. */
static inline void
hf_bind(struct hf_env *e, const char *inst)
{
	char bind[CM_ID_MAX + 1], body[256];

	snprintf(body, sizeof(body),
	    "{\"workspace_id\": \"%s\", \"browser_instance_id\": \"%s\"}",
	    hf_ws(e), inst);
	af_create(&e->af, "/api/v1/admin/bindings", body, "binding_id", bind);
}

/*
 * Registers, as the admin, a managed instance named name on the browser
 * bundle with network_policy policy (a JSON object text), and binds it
 * to the workspace; its id goes to inst.
 */
static inline void
hf_managed_instance_with(
    struct hf_env *e, const char *name, const char *policy, char *inst)
{
	char bundle[CM_ID_MAX + 1], body[2048];

	hf_browser_bundle(e, bundle);
	snprintf(body, sizeof(body),
	    "{\"name\": \"%s\", \"driver\": \"managed\", "
	    "\"bundle_id\": \"%s\", \"network_policy\": %s}",
	    name, bundle, policy);
	af_create(&e->af, "/api/v1/admin/browser-instances", body,
	    "browser_instance_id", inst);
	hf_bind(e, inst);
}

/* hf_managed_instance_with a policy that may reach 127.0.0.1 only. */
static inline void
hf_managed_instance(struct hf_env *e, const char *name, char *inst)
{
	hf_managed_instance_with(e, name,
	    "{\"allow_hosts\": [\"127.0.0.1\"], "
	    "\"deny_private_networks\": false}",
	    inst);
}

static inline void
hf_keep(struct hf_env *e, const char *text)
{
	size_t n = text ? strlen(text) : 0;
	char *grown;

	if (!e->record || n == 0)
		return;
	grown = realloc(e->seen, e->seen_len + n + 2);
	cr_assert_not_null(grown);
	memcpy(grown + e->seen_len, text, n);
	e->seen_len += n;
	grown[e->seen_len++] = '\n';
	grown[e->seen_len] = '\0';
	e->seen = grown;
}

/* One request with extra headers (may be NULL); *text (may be NULL) gets
 * the raw body (caller frees). */
static inline int
hf_call_h(struct hf_env *e, const char *method, const char *path,
    const char *token, const char *body, const char *const *headers,
    char **text)
{
	char *t = NULL;
	int status = tk_http(&e->sf.p, method, path, token, body, headers, &t);

	hf_keep(e, t);
	if (text != NULL)
		*text = t;
	else
		free(t);
	return status;
}

/* One request; *out (may be NULL) gets the parsed body (caller decrefs). */
static inline int
hf_call(struct hf_env *e, const char *method, const char *path,
    const char *token, const char *body, json_t **out)
{
	char *text = NULL;
	int status = hf_call_h(e, method, path, token, body, NULL, &text);

	if (out != NULL)
		*out = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	return status;
}

/* Asserts status and, for an error, its code; decrefs the body. */
static inline void
hf_expect(struct hf_env *e, const char *method, const char *path,
    const char *token, const char *body, int status, const char *code)
{
	json_t *out = NULL;
	int got = hf_call(e, method, path, token, body, &out);

	cr_assert_eq(got, status, "%s %s %s: %d, want %d", method, path,
	    body ? body : "", got, status);
	if (code != NULL)
		cr_assert_str_eq(af_error_code(out) ? af_error_code(out) : "",
		    code, "%s %s %s", method, path, body ? body : "");
	json_decref(out);
}

/* /api/v1/workspaces/<ws>/browser-spaces[/<space>][rest] */
static inline void
hf_path(const struct hf_env *e, char *buf, size_t len, const char *ws,
    const char *space, const char *rest)
{
	if (space != NULL)
		snprintf(buf, len, "/api/v1/workspaces/%s/browser-spaces/%s%s",
		    ws ? ws : hf_ws(e), space, rest ? rest : "");
	else
		snprintf(buf, len, "/api/v1/workspaces/%s/browser-spaces%s",
		    ws ? ws : hf_ws(e), rest ? rest : "");
}

/* POST a create; granted is a JSON array text (NULL: left out).  On 201
 * the Space's id goes to out (may be NULL). */
static inline int
hf_create(struct hf_env *e, const char *token, const char *instance,
    const char *owner_type, const char *owner_id, const char *granted,
    char *out)
{
	char path[1024], body[1024];
	json_t *res = NULL;
	int status;

	hf_path(e, path, sizeof(path), NULL, NULL, NULL);
	snprintf(body, sizeof(body),
	    "{\"browser_instance_id\": \"%s\", \"owner_type\": \"%s\", "
	    "\"owner_id\": \"%s\"%s%s}",
	    instance, owner_type, owner_id,
	    granted ? ", \"granted_capabilities\": " : "",
	    granted ? granted : "");
	status = hf_call(e, "POST", path, token, body, &res);
	if (status == 201 && out != NULL)
		snprintf(
		    out, CM_ID_MAX + 1, "%s", af_data_str(res, "space_id"));
	json_decref(res);
	return status;
}

/* A Space on the world's instance i for the world's manager. */
static inline void
hf_create_ok(struct hf_env *e, size_t i, const char *granted, char *out)
{
	cr_assert_eq(hf_create(e, e->manager, e->sf.w.instance_id[i],
	                 "operator", e->sf.w.operator_id, granted, out),
	    201, "create on instance %zu", i);
}

/* POST a task; query is "" or "?wait=N"; args is JSON text (NULL: left
 * out).  *out (may be NULL) gets the body; the task id goes to task (may
 * be NULL) when the body holds one. */
static inline int
hf_submit(struct hf_env *e, const char *token, const char *space,
    const char *query, const char *rid, const char *cap, const char *args,
    json_t **out, char *task)
{
	char rest[64], path[1024], body[1024];
	json_t *res = NULL;
	int status;

	snprintf(rest, sizeof(rest), "/tasks%s", query ? query : "");
	hf_path(e, path, sizeof(path), NULL, space, rest);
	snprintf(body, sizeof(body),
	    "{\"request_id\": \"%s\", \"capability\": \"%s\"%s%s}", rid, cap,
	    args ? ", \"args\": " : "", args ? args : "");
	status = hf_call(e, "POST", path, token, body, &res);
	if (task != NULL && af_data_str(res, "task_id") != NULL)
		snprintf(
		    task, CM_ID_MAX + 1, "%s", af_data_str(res, "task_id"));
	if (out != NULL)
		*out = res;
	else
		json_decref(res);
	return status;
}

/* GET the task as the manager: its data (caller decrefs). */
static inline json_t *
hf_task(struct hf_env *e, const char *space, const char *task)
{
	char rest[128], path[1024];
	json_t *res = NULL, *d;

	snprintf(rest, sizeof(rest), "/tasks/%s", task);
	hf_path(e, path, sizeof(path), NULL, space, rest);
	cr_assert_eq(hf_call(e, "GET", path, e->manager, NULL, &res), 200,
	    "GET %s", path);
	d = json_incref(af_data(res));
	json_decref(res);
	return d;
}

static inline bool
hf_terminal(const char *status)
{
	return status != NULL && sf_terminal(status);
}

struct hf_task_wait {
	struct hf_env *e;
	const char *space, *task, *want;
	char seen[33];
};

/* A read that fails (a 503 from an api whose store is slow on a loaded
 * machine) is logged, and the poll goes on. */
static inline bool
hf_task_settled(void *arg)
{
	struct hf_task_wait *w = arg;
	char rest[128], path[1024];
	json_t *res = NULL;
	const char *s;
	int st;

	snprintf(rest, sizeof(rest), "/tasks/%s", w->task);
	hf_path(w->e, path, sizeof(path), NULL, w->space, rest);
	if ((st = hf_call(w->e, "GET", path, w->e->manager, NULL, &res)) !=
	    200) {
		cr_log_info("GET %s: %d", path, st);
		json_decref(res);
		return false;
	}
	s = json_string_value(json_object_get(af_data(res), "status"));
	snprintf(w->seen, sizeof(w->seen), "%s", s ? s : "");
	json_decref(res);
	return strcmp(w->seen, w->want) == 0 || hf_terminal(w->seen);
}

/* Polls GET for up to timeout_ms until the task has status want (false:
 * it ended otherwise or the wait ran out). */
static inline bool
hf_wait_task_for(struct hf_env *e, const char *space, const char *task,
    const char *want, int timeout_ms)
{
	struct hf_task_wait w = {e, space, task, want, ""};

	tk_wait_until(hf_task_settled, &w, timeout_ms);
	if (strcmp(w.seen, want) != 0)
		cr_log_error("task %s is %s, not %s", task, w.seen, want);
	return strcmp(w.seen, want) == 0;
}

/* The same, waiting up to HF_WAIT_MS. */
static inline bool
hf_wait_task(
    struct hf_env *e, const char *space, const char *task, const char *want)
{
	return hf_wait_task_for(e, space, task, want, HF_WAIT_MS);
}

/* GET the Space as the manager: its data (caller decrefs). */
static inline json_t *
hf_space(struct hf_env *e, const char *ws, const char *space)
{
	char path[1024];
	json_t *res = NULL, *d;

	hf_path(e, path, sizeof(path), ws, space, NULL);
	cr_assert_eq(hf_call(e, "GET", path, e->manager, NULL, &res), 200,
	    "GET %s", path);
	d = json_incref(af_data(res));
	json_decref(res);
	return d;
}

struct hf_space_wait {
	struct hf_env *e;
	const char *space, *want;
};

static inline bool
hf_space_is(void *arg)
{
	struct hf_space_wait *w = arg;
	json_t *d = hf_space(w->e, NULL, w->space);
	const char *s = json_string_value(json_object_get(d, "status"));
	bool ok = s != NULL && strcmp(s, w->want) == 0;

	json_decref(d);
	return ok;
}

/* Polls GET until the Space has status want. */
static inline bool
hf_wait_space(struct hf_env *e, const char *space, const char *want)
{
	struct hf_space_wait w = {e, space, want};

	return tk_wait_until(hf_space_is, &w, HF_WAIT_MS);
}

/* POST .../cancel or .../close (what) with body (may be NULL). */
static inline int
hf_post(struct hf_env *e, const char *token, const char *space,
    const char *what, const char *body, json_t **out)
{
	char rest[64], path[1024];

	snprintf(rest, sizeof(rest), "/%s", what);
	hf_path(e, path, sizeof(path), NULL, space, rest);
	return hf_call(e, "POST", path, token, body, out);
}

/* GET .../events<query> as token: the array in *events (caller decrefs). */
static inline int
hf_events(struct hf_env *e, const char *token, const char *space,
    const char *query, json_t **events)
{
	char rest[128], path[1024];
	json_t *res = NULL;
	int status;

	snprintf(rest, sizeof(rest), "/events%s", query ? query : "");
	hf_path(e, path, sizeof(path), NULL, space, rest);
	status = hf_call(e, "GET", path, token, NULL, &res);
	*events = json_incref(af_data(res));
	json_decref(res);
	return status;
}

/* The Space's whole log as the manager (at most 100 events), checked to
 * run 1, 2, 3... */
static inline json_t *
hf_all_events(struct hf_env *e, const char *space)
{
	json_t *events, *ev;
	size_t i;

	cr_assert_eq(hf_events(e, e->manager, space, NULL, &events), 200);
	cr_assert(json_is_array(events));
	json_array_foreach(events, i, ev)
	    cr_assert_eq(json_integer_value(json_object_get(ev, "sequence")),
	        (json_int_t)i + 1, "event sequences have a gap");
	return events;
}

/* How many events of kind (for task, NULL: any) the log holds; the
 * sequence of the first goes to *seq (may be NULL; 0: none). */
static inline int
hf_event_count(
    json_t *events, const char *kind, const char *task, json_int_t *seq)
{
	json_t *ev;
	size_t i;
	int n = 0;

	if (seq != NULL)
		*seq = 0;
	json_array_foreach(events, i, ev)
	{
		if (strcmp(sf_str(ev, "kind"), kind) != 0 ||
		    (task != NULL && strcmp(sf_str(ev, "task_id"), task) != 0))
			continue;
		if (n++ == 0 && seq != NULL)
			*seq =
			    json_integer_value(json_object_get(ev, "sequence"));
	}
	return n;
}

/* GET the events as Server-Sent Events; *text gets the stream. */
static inline int
hf_sse(struct hf_env *e, const char *token, const char *space, char **text)
{
	static const char *const headers[] = {
	    "Accept: text/event-stream", NULL};
	char path[1024];

	hf_path(e, path, sizeof(path), NULL, space, "/events");
	return hf_call_h(e, "GET", path, token, NULL, headers, text);
}

/* A principal of kind, with role in the world's workspace (NULL: none),
 * and a token of its own. */
static inline void
hf_principal(struct hf_env *e, const char *kind, const char *name,
    const char *role, char *id, char *token)
{
	char tok_id[CM_ID_MAX + 1];

	af_principal(&e->af, kind, name, id);
	if (role != NULL)
		af_member_put(&e->af, hf_ws(e), id, role);
	af_issue(&e->af, id, NULL, tok_id, token);
}

/* Case-insensitive search of n bytes (NULs allowed) for needle. */
static inline bool
hf_contains(const char *hay, size_t n, const char *needle)
{
	size_t m = strlen(needle);

	for (size_t i = 0; hay != NULL && m <= n && i <= n - m; i++) {
		size_t j = 0;

		while (j < m && tolower((unsigned char)hay[i + j]) ==
		                    tolower((unsigned char)needle[j]))
			j++;
		if (j == m)
			return true;
	}
	return false;
}

/* The fake runtime's lines of event ev for the task (a new array). */
static inline json_t *
hf_fake_task(const struct hf_env *e, const char *ev, const char *task)
{
	json_t *lines = sf_fake_lines(&e->sf), *out = json_array(), *o;
	size_t i;

	json_array_foreach(lines, i, o)
	{
		if (strcmp(sf_str(o, "ev"), ev) == 0 &&
		    strcmp(sf_str(o, "task_id"), task) == 0)
			json_array_append(out, o);
	}
	json_decref(lines);
	return out;
}

/* SQLite's file, read-only (the store keeps writing it): for what
 * only SQLite has (tk_db_count and tk_db_each read either backend). */
static inline sqlite3 *
hf_db_open(const struct hf_env *e)
{
	sqlite3 *db = tk_db_sqlite(e->sf.dir);

	cr_assert_not_null(db, "cannot open %s/spaced.db", e->sf.dir);
	return db;
}

/* SELECT count(*) ... with one text parameter written ? (may be NULL:
 * none), on the backend e's spaced uses (tk_db_count). */
static inline long long
hf_db_count(const struct hf_env *e, const char *sql, const char *arg)
{
	long long n = tk_db_count(e->sf.dir, sql, arg);

	cr_assert_geq(n, 0, "%s", sql);
	return n;
}

#endif
