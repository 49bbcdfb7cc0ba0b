/*
 * The service's core promises, one test each (acceptance_01 to
 * acceptance_13: scoped create, authorization, the atomic reservation,
 * the one capability path, validation before dispatch, one task at a
 * time, Spaces in parallel, idempotent submit, cancel, runtime failure,
 * close, no secret leaks, event replay), over real HTTP against the real
 * service and the deterministic fake runtime.  Setup may use the store or
 * the admin api; the behaviour each test names goes through the Space
 * routes.  Ordering facts come from the fake runtime's log
 * (<dir>/fake.log), never from timing.  The rows acceptance_03 and
 * acceptance_12 read are the database's on either backend (tk_db_count,
 * tk_db_each): pg/test_acceptance runs all of it on PostgreSQL.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_fixture.h"

TestSuite(acceptance, .timeout = 120);

static const char *
task_status(json_t *task)
{
	const char *s = json_string_value(json_object_get(task, "status"));

	return s ? s : "";
}

static const char *
task_error_code(json_t *task)
{
	return sf_str(json_object_get(task, "error"), "code");
}

static bool
has_str(json_t *array, const char *s)
{
	json_t *v;
	size_t i;

	json_array_foreach(
	    array, i, v) if (json_is_string(v) &&
	                     strcmp(json_string_value(v), s) == 0) return true;
	return false;
}

/* Waits for the fake runtime's start line of task. */
static void
wait_started(struct hf_env *e, const char *task)
{
	cr_assert(sf_wait_fake(&e->sf, "start", "task_id", task, HF_WAIT_MS),
	    "task %s never reached the runtime", task);
}

/* 1. An authorised create on a bound instance returns a Space scoped to
 * the requested workspace and owner. */
Test(acceptance, acceptance_01_create_scoped, .fini = tk_cleanup)
{
	static struct hf_env e;
	char owner[CM_ID_MAX + 1], tok[CM_TOKEN_MAX + 1];
	char space[CM_ID_MAX + 1], mine[CM_ID_MAX + 1], path[1024];
	json_t *res, *d, *g;

	hf_start(&e, "acc01", 2, NULL);
	hf_principal(&e, "operator", "owner", "member", owner, tok);

	cr_assert_eq(hf_create(&e, e.manager, e.sf.w.instance_id[0], "operator",
	                 owner, "[\"snapshot\", \"navigate\"]", space),
	    201);
	d = hf_space(&e, NULL, space);
	cr_assert_str_eq(sf_str(d, "space_id"), space);
	cr_assert_str_eq(sf_str(d, "workspace_id"), hf_ws(&e));
	cr_assert_str_eq(sf_str(d, "owner_type"), "operator");
	cr_assert_str_eq(sf_str(d, "owner_id"), owner);
	cr_assert_str_eq(
	    sf_str(d, "browser_instance_id"), e.sf.w.instance_id[0]);
	cr_assert_neq(sf_str(d, "binding_id")[0], '\0', "no binding_id");
	cr_assert_str_eq(sf_str(d, "status"), "idle");
	g = json_object_get(d, "granted_capabilities");
	cr_assert_eq(json_array_size(g), 2);
	cr_assert(has_str(g, "snapshot") && has_str(g, "navigate"));
	cr_assert(json_is_false(json_object_get(d, "close_requested")));
	cr_assert(json_is_null(json_object_get(d, "active_task")));
	cr_assert(json_is_null(json_object_get(d, "closed_at")));
	cr_assert(json_is_string(json_object_get(d, "created_at")));
	cr_assert_geq(json_integer_value(json_object_get(d, "revision")), 1);
	json_decref(d);

	/* The owner reads it, and finds it in its own list. */
	hf_path(&e, path, sizeof(path), NULL, space, NULL);
	cr_assert_eq(hf_call(&e, "GET", path, tok, NULL, &res), 200);
	cr_assert_str_eq(af_data_str(res, "owner_id"), owner);
	json_decref(res);
	hf_path(&e, path, sizeof(path), NULL, NULL, NULL);
	cr_assert_eq(hf_call(&e, "GET", path, tok, NULL, &res), 200);
	cr_assert_eq(json_array_size(af_data(res)), 1);
	cr_assert_eq(af_find(af_data(res), "space_id", space), 0);
	json_decref(res);

	/* A member creates for itself on the other bound instance. */
	cr_assert_eq(hf_create(&e, tok, e.sf.w.instance_id[1], "operator",
	                 owner, NULL, mine),
	    201);
	d = hf_space(&e, NULL, mine);
	cr_assert_str_eq(sf_str(d, "workspace_id"), hf_ws(&e));
	cr_assert_str_eq(sf_str(d, "owner_id"), owner);
	json_decref(d);
	hf_stop(&e);
}

/* 2. A different workspace, or an owner without authority, cannot list,
 * read, create, submit, cancel or close that Space. */
Test(acceptance, acceptance_02_foreign_and_unauthorised_refused,
    .fini = tk_cleanup)
{
	static struct hf_env e;
	char owner[CM_ID_MAX + 1], owner_tok[CM_TOKEN_MAX + 1];
	char other[CM_ID_MAX + 1], other_tok[CM_TOKEN_MAX + 1];
	char out_id[CM_ID_MAX + 1], out_tok[CM_TOKEN_MAX + 1], tid[64];
	char ws2[CM_ID_MAX + 1], space[CM_ID_MAX + 1], task[CM_ID_MAX + 1];
	char base[512], path[1024], rest[128];
	const char *const who[] = {out_tok, other_tok};
	json_t *res, *d, *events;
	size_t n_events;

	hf_start(&e, "acc02", 2, NULL);
	hf_principal(&e, "operator", "owner", "member", owner, owner_tok);
	hf_principal(&e, "operator", "other", "member", other, other_tok);
	af_create(&e.af, "/api/v1/admin/workspaces", "{\"name\": \"w2\"}",
	    "workspace_id", ws2);
	hf_principal(&e, "operator", "outsider", NULL, out_id, out_tok);
	af_member_put(&e.af, ws2, out_id, "manager");

	cr_assert_eq(hf_create(&e, owner_tok, e.sf.w.instance_id[0], "operator",
	                 owner, "[\"noop\"]", space),
	    201);
	cr_assert_eq(hf_submit(&e, owner_tok, space, "?wait=10", "r1", "noop",
	                 "{}", NULL, task),
	    200);
	events = hf_all_events(&e, space);
	n_events = json_array_size(events);
	json_decref(events);

	hf_path(&e, base, sizeof(base), NULL, space, NULL);
	snprintf(rest, sizeof(rest), "/tasks/%s", task);
	for (size_t i = 0; i < 2; i++) {
		const char *t = who[i];
		static const char *const reads[] = {"", "/tasks", "/events"};

		/* list: refused, or without that Space */
		hf_path(&e, path, sizeof(path), NULL, NULL, NULL);
		if (i == 0) {
			hf_expect(&e, "GET", path, t, NULL, 403, "forbidden");
		} else {
			cr_assert_eq(
			    hf_call(&e, "GET", path, t, NULL, &res), 200);
			cr_assert_lt(
			    af_find(af_data(res), "space_id", space), 0);
			json_decref(res);
			snprintf(path + strlen(path),
			    sizeof(path) - strlen(path), "?owner_id=%s", owner);
			hf_expect(&e, "GET", path, t, NULL, 403, "forbidden");
		}
		for (size_t k = 0; k < 3; k++) {
			snprintf(path, sizeof(path), "%s%s", base, reads[k]);
			hf_expect(&e, "GET", path, t, NULL, 403, "forbidden");
		}
		snprintf(path, sizeof(path), "%s%s", base, rest);
		hf_expect(&e, "GET", path, t, NULL, 403, "forbidden");
		/* create for the owner on the free instance */
		cr_assert_eq(hf_create(&e, t, e.sf.w.instance_id[1], "operator",
		                 owner, NULL, NULL),
		    403);
		snprintf(tid, sizeof(tid), "x%zu", i);
		cr_assert_eq(
		    hf_submit(&e, t, space, "", tid, "noop", "{}", &res, NULL),
		    403);
		cr_assert_str_eq(af_error_code(res), "forbidden");
		json_decref(res);
		snprintf(path, sizeof(path), "%s/cancel", base);
		hf_expect(&e, "POST", path, t, "{}", 403, "forbidden");
		snprintf(path, sizeof(path), "%s/close", base);
		hf_expect(&e, "POST", path, t, NULL, 403, "forbidden");
	}
	/* Under its own workspace the outsider cannot see the Space at all. */
	hf_path(&e, path, sizeof(path), ws2, space, NULL);
	hf_expect(&e, "GET", path, out_tok, NULL, 404, "not_found");
	hf_path(&e, path, sizeof(path), ws2, space, "/close");
	hf_expect(&e, "POST", path, out_tok, NULL, 404, "not_found");

	/* Nothing changed: one task, no new event, still open, no new Space. */
	hf_path(&e, path, sizeof(path), NULL, space, "/tasks");
	cr_assert_eq(hf_call(&e, "GET", path, e.manager, NULL, &res), 200);
	cr_assert_eq(json_array_size(af_data(res)), 1);
	json_decref(res);
	events = hf_all_events(&e, space);
	cr_assert_eq(json_array_size(events), n_events);
	json_decref(events);
	d = hf_space(&e, NULL, space);
	cr_assert_str_eq(sf_str(d, "status"), "idle");
	cr_assert(json_is_false(json_object_get(d, "close_requested")));
	json_decref(d);
	hf_path(&e, path, sizeof(path), NULL, NULL, NULL);
	cr_assert_eq(hf_call(&e, "GET", path, e.manager, NULL, &res), 200);
	cr_assert_eq(json_array_size(af_data(res)), 1);
	json_decref(res);
	hf_stop(&e);
}

struct racer {
	struct hf_env *e;
	pthread_barrier_t *start;
	int status;
	char code[64];
};

static void *
race(void *arg)
{
	struct racer *r = arg;
	char path[1024], body[512], *text = NULL;
	json_t *out;

	hf_path(r->e, path, sizeof(path), NULL, NULL, NULL);
	snprintf(body, sizeof(body),
	    "{\"browser_instance_id\": \"%s\", \"owner_type\": \"operator\", "
	    "\"owner_id\": \"%s\"}",
	    r->e->sf.w.instance_id[0], r->e->sf.w.operator_id);
	pthread_barrier_wait(r->start);
	r->status = tk_http(
	    &r->e->sf.p, "POST", path, r->e->manager, body, NULL, &text);
	out = text ? json_loads(text, 0, NULL) : NULL;
	snprintf(r->code, sizeof(r->code), "%s",
	    af_error_code(out) ? af_error_code(out) : "");
	json_decref(out);
	free(text);
	return NULL;
}

/* 3. Two (here sixteen) concurrent creates for the same instance leave at
 * most one active Space; every loser gets 409 browser_instance_in_use and
 * leaves no row. */
Test(acceptance, acceptance_03_concurrent_create, .fini = tk_cleanup)
{
	static struct hf_env e;
	enum { N = 16 };
	struct racer r[N];
	pthread_t t[N];
	pthread_barrier_t start;
	char path[1024];
	json_t *res;
	int won = 0, lost = 0;

	hf_start(&e, "acc03", 1, NULL);
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
		else
			cr_log_error(
			    "racer %d: %d %s", i, r[i].status, r[i].code);
	}
	pthread_barrier_destroy(&start);
	cr_assert_eq(won, 1);
	cr_assert_eq(lost, N - 1);

	hf_path(&e, path, sizeof(path), NULL, NULL, NULL);
	cr_assert_eq(hf_call(&e, "GET", path, e.manager, NULL, &res), 200);
	cr_assert_eq(json_array_size(af_data(res)), 1);
	json_decref(res);
	cr_assert_eq(hf_db_count(&e,
	                 "SELECT count(*) FROM browser_spaces "
	                 "WHERE browser_instance_id = ?",
	                 e.sf.w.instance_id[0]),
	    1, "a loser left a row");
	cr_assert_eq(hf_db_count(&e,
	                 "SELECT count(*) FROM browser_space_events "
	                 "WHERE kind = 'space_opened'",
	                 NULL),
	    1);
	hf_stop(&e);
}

/* 4. A granted capability runs through the one capability path and
 * returns a bounded, redacted result. */
Test(acceptance, acceptance_04_capability_result, .fini = tk_cleanup)
{
	static const char *const canaries[] = {"fake-cookie-canary-7f3a",
	    "fake-bearer-canary-91c2", "fake-token-canary-55e1",
	    "fake-pass-canary-0b9d"};
	static struct hf_env e;
	char space[CM_ID_MAX + 1], snap[CM_ID_MAX + 1], big[CM_ID_MAX + 1];
	char leak[CM_ID_MAX + 1];
	json_t *res, *d, *lines, *events, *ev;
	char *text;
	size_t i;

	hf_start(&e, "acc04", 1, NULL);
	hf_create_ok(&e, 0, "[\"snapshot\", \"big\", \"leak\"]", space);

	cr_assert_eq(hf_submit(&e, e.manager, space, "?wait=10", "s1",
	                 "snapshot", "{}", &res, snap),
	    200);
	d = af_data(res);
	cr_assert_str_eq(task_status(d), "completed");
	cr_assert(json_is_null(json_object_get(d, "error")));
	cr_assert_eq(json_array_size(json_object_get(d, "arg_keys")), 0);
	cr_assert_null(json_object_get(d, "args"), "args are never returned");
	cr_assert(
	    json_is_true(json_object_get(json_object_get(d, "result"), "ok")));
	cr_assert_str_eq(
	    sf_str(json_object_get(d, "result"), "capability"), "snapshot");
	json_decref(res);
	/* Exactly one runtime call for the task, and it completed. */
	lines = hf_fake_task(&e, "start", snap);
	cr_assert_eq(json_array_size(lines), 1);
	json_decref(lines);
	lines = hf_fake_task(&e, "end", snap);
	cr_assert_eq(json_array_size(lines), 1);
	cr_assert_str_eq(
	    sf_str(json_array_get(lines, 0), "outcome"), "completed");
	json_decref(lines);

	/* Over 64 KiB: replaced by the marker. */
	cr_assert_eq(hf_submit(&e, e.manager, space, "?wait=10", "b1", "big",
	                 NULL, &res, big),
	    200);
	d = json_object_get(af_data(res), "result");
	cr_assert_str_eq(task_status(af_data(res)), "completed");
	cr_assert(json_is_true(json_object_get(d, "truncated")));
	cr_assert_str_eq(sf_str(d, "reason"), "result_too_large");
	cr_assert_eq(json_object_size(d), 2);
	json_decref(res);

	/* Secrets in a result are redacted before anyone sees them. */
	cr_assert_eq(hf_submit(&e, e.manager, space, "?wait=10", "l1", "leak",
	                 NULL, &res, leak),
	    200);
	cr_assert_str_eq(task_status(af_data(res)), "completed");
	cr_assert(json_is_object(json_object_get(af_data(res), "result")));
	text = json_dumps(res, JSON_COMPACT);
	for (i = 0; i < 4; i++)
		cr_assert_not(hf_contains(text, strlen(text), canaries[i]),
		    "%s in %s", canaries[i], text);
	free(text);
	json_decref(res);
	d = hf_task(&e, space, big);
	cr_assert_str_eq(
	    sf_str(json_object_get(d, "result"), "reason"), "result_too_large");
	json_decref(d);

	/* Event payloads are bounded too. */
	events = hf_all_events(&e, space);
	json_array_foreach(events, i, ev)
	{
		text = json_dumps(json_object_get(ev, "payload"), JSON_COMPACT);
		cr_assert_leq(strlen(text), CM_RESULT_MAX);
		for (size_t k = 0; k < 4; k++)
			cr_assert_not(
			    hf_contains(text, strlen(text), canaries[k]));
		free(text);
	}
	json_decref(events);
	hf_stop(&e);
}

/* 5. An ungranted or unknown capability, or invalid args, is rejected
 * before any runtime dispatch: 422, no runtime call, no task row. */
Test(acceptance, acceptance_05_rejected_before_dispatch, .fini = tk_cleanup)
{
	static const struct {
		const char *cap, *args, *code;
	} bad[] = {
	    {"navigate", "{\"url\": \"https://example.test/\"}",
	        "capability_not_granted"},
	    {"snapshot", "{}", "capability_not_granted"},
	    {"eval", "{}", "capability_unknown"},
	    {"sleep", "{\"ms\": \"soon\"}", "invalid_args"},
	    {"sleep", "{}", "invalid_args"},
	    {"sleep", "{\"ms\": 1, \"extra\": 1}", "invalid_args"},
	    {"sleep", "{\"ms\": -1}", "invalid_args"},
	    {"noop", "[]", "invalid_args"},
	    {"noop", "{\"x\": 1}", "invalid_args"},
	};
	static struct hf_env e;
	char space[CM_ID_MAX + 1], rid[32], path[1024], task[CM_ID_MAX + 1];
	json_t *res, *lines, *events;

	hf_start(&e, "acc05", 1, NULL);
	hf_create_ok(&e, 0, "[\"noop\", \"sleep\"]", space);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(rid, sizeof(rid), "bad-%zu", i);
		cr_assert_eq(hf_submit(&e, e.manager, space, "", rid,
		                 bad[i].cap, bad[i].args, &res, NULL),
		    422, "%s %s", bad[i].cap, bad[i].args);
		cr_assert_str_eq(af_error_code(res), bad[i].code, "%s %s",
		    bad[i].cap, bad[i].args);
		cr_assert_null(json_object_get(res, "data"));
		json_decref(res);
	}
	hf_path(&e, path, sizeof(path), NULL, space, "/tasks");
	cr_assert_eq(hf_call(&e, "GET", path, e.manager, NULL, &res), 200);
	cr_assert_eq(
	    json_array_size(af_data(res)), 0, "a task row was written");
	json_decref(res);
	events = hf_all_events(&e, space);
	cr_assert_eq(json_array_size(events), 1, "only space_opened");
	json_decref(events);
	lines = sf_fake_lines(&e.sf);
	cr_assert_eq(json_array_size(lines), 0, "the runtime was called");
	json_decref(lines);

	/* The same Space and runtime do run a valid task. */
	cr_assert_eq(hf_submit(&e, e.manager, space, "?wait=10", "good", "noop",
	                 "{}", NULL, task),
	    200);
	lines = sf_fake_lines(&e.sf);
	cr_assert_eq(json_array_size(lines), 2, "one start, one end");
	cr_assert_str_eq(sf_str(json_array_get(lines, 0), "task_id"), task);
	json_decref(lines);
	hf_stop(&e);
}

/* 6. Two tasks on one Space never run at once; the second gets 409
 * space_task_in_progress. */
Test(acceptance, acceptance_06_one_task_at_a_time, .fini = tk_cleanup)
{
	static struct hf_env e;
	char space[CM_ID_MAX + 1], a[CM_ID_MAX + 1], c[CM_ID_MAX + 1];
	char path[1024];
	json_t *res, *lines, *o;
	int running = 0, starts = 0;
	size_t i;

	hf_start(&e, "acc06", 1, NULL);
	hf_create_ok(&e, 0, "[\"noop\", \"sleep\"]", space);
	cr_assert_eq(hf_submit(&e, e.manager, space, "", "a", "sleep",
	                 "{\"ms\": 60000}", NULL, a),
	    202);
	wait_started(&e, a);
	cr_assert_eq(
	    hf_submit(&e, e.manager, space, "", "b", "noop", "{}", &res, NULL),
	    409);
	cr_assert_str_eq(af_error_code(res), "space_task_in_progress");
	json_decref(res);
	hf_path(&e, path, sizeof(path), NULL, space, "/tasks");
	cr_assert_eq(hf_call(&e, "GET", path, e.manager, NULL, &res), 200);
	cr_assert_eq(json_array_size(af_data(res)), 1);
	json_decref(res);

	/* Once the first is over, the next one runs. */
	cr_assert_eq(hf_post(&e, e.manager, space, "cancel", "{}", NULL), 202);
	cr_assert(hf_wait_task(&e, space, a, "cancelled"));
	cr_assert_eq(hf_submit(&e, e.manager, space, "?wait=10", "c", "noop",
	                 "{}", NULL, c),
	    200);

	/* The runtime saw start a, end a, start c, end c: never two at once,
	 * and never the refused b. */
	lines = sf_fake_lines(&e.sf);
	json_array_foreach(lines, i, o)
	{
		cr_assert_str_neq(sf_str(o, "request_id"), "b");
		if (strcmp(sf_str(o, "ev"), "start") == 0) {
			starts++;
			cr_assert_eq(++running, 1, "two tasks ran at once");
		} else {
			running--;
		}
	}
	cr_assert_eq(starts, 2);
	cr_assert_lt(sf_t_ns(sf_fake_find(lines, "end", "task_id", a, 0)),
	    sf_t_ns(sf_fake_find(lines, "start", "task_id", c, 0)));
	json_decref(lines);
	hf_stop(&e);
}

/* 7. Tasks on two Spaces backed by two instances run at the same time:
 * both are in the runtime together (long sleeps, so no timing is
 * assumed), then both are cancelled. */
Test(acceptance, acceptance_07_spaces_run_concurrently, .fini = tk_cleanup)
{
	static struct hf_env e;
	char s1[CM_ID_MAX + 1], s2[CM_ID_MAX + 1];
	char t1[CM_ID_MAX + 1], t2[CM_ID_MAX + 1];
	json_t *lines, *st1, *st2, *en1, *en2;

	hf_start(&e, "acc07", 2, NULL);
	hf_create_ok(&e, 0, "[\"sleep\"]", s1);
	hf_create_ok(&e, 1, "[\"sleep\"]", s2);
	cr_assert_eq(hf_submit(&e, e.manager, s1, "", "a", "sleep",
	                 "{\"ms\": 60000}", NULL, t1),
	    202);
	cr_assert_eq(hf_submit(&e, e.manager, s2, "", "a", "sleep",
	                 "{\"ms\": 60000}", NULL, t2),
	    202);
	wait_started(&e, t1);
	wait_started(&e, t2);
	/* Both started, neither ended: they run at the same time. */
	cr_assert_eq(sf_fake_count(&e.sf, "end", "task_id", t1), 0);
	cr_assert_eq(sf_fake_count(&e.sf, "end", "task_id", t2), 0);
	{
		json_t *d1 = hf_task(&e, s1, t1), *d2 = hf_task(&e, s2, t2);

		cr_assert_str_eq(task_status(d1), "running");
		cr_assert_str_eq(task_status(d2), "running");
		json_decref(d1);
		json_decref(d2);
	}
	cr_assert_eq(hf_post(&e, e.manager, s1, "cancel", "{}", NULL), 202);
	cr_assert_eq(hf_post(&e, e.manager, s2, "cancel", "{}", NULL), 202);
	cr_assert(hf_wait_task(&e, s1, t1, "cancelled"));
	cr_assert(hf_wait_task(&e, s2, t2, "cancelled"));

	lines = sf_fake_lines(&e.sf);
	st1 = sf_fake_find(lines, "start", "task_id", t1, 0);
	st2 = sf_fake_find(lines, "start", "task_id", t2, 0);
	en1 = sf_fake_find(lines, "end", "task_id", t1, 0);
	en2 = sf_fake_find(lines, "end", "task_id", t2, 0);
	cr_assert(st1 && st2 && en1 && en2);
	cr_assert_lt(sf_t_ns(st1), sf_t_ns(en2), "the intervals overlap");
	cr_assert_lt(sf_t_ns(st2), sf_t_ns(en1), "the intervals overlap");
	cr_assert_str_neq(sf_str(st1, "space_id"), sf_str(st2, "space_id"));
	json_decref(lines);
	hf_stop(&e);
}

/* 8. Repeating a request_id gives one task and one runtime call. */
Test(acceptance, acceptance_08_idempotent_submit, .fini = tk_cleanup)
{
	static struct hf_env e;
	char space[CM_ID_MAX + 1], t1[CM_ID_MAX + 1], t2[CM_ID_MAX + 1];
	char t3[CM_ID_MAX + 1], path[1024];
	json_t *res, *events;

	hf_start(&e, "acc08", 1, NULL);
	hf_create_ok(&e, 0, "[\"sleep\"]", space);
	cr_assert_eq(hf_submit(&e, e.manager, space, "", "once", "sleep",
	                 "{\"ms\": 100}", NULL, t1),
	    202);
	cr_assert_eq(hf_submit(&e, e.manager, space, "", "once", "sleep",
	                 "{\"ms\": 100}", NULL, t2),
	    200);
	cr_assert_str_eq(t1, t2);
	cr_assert(hf_wait_task(&e, space, t1, "completed"));
	cr_assert_eq(hf_submit(&e, e.manager, space, "", "once", "sleep",
	                 "{\"ms\": 100}", &res, t3),
	    200);
	cr_assert_str_eq(t1, t3);
	cr_assert_str_eq(task_status(af_data(res)), "completed");
	json_decref(res);
	/* Different content under the same key: refused. */
	cr_assert_eq(hf_submit(&e, e.manager, space, "", "once", "sleep",
	                 "{\"ms\": 5}", &res, NULL),
	    409);
	cr_assert_str_eq(af_error_code(res), "idempotency_key_reused");
	json_decref(res);

	cr_assert_eq(sf_fake_count(&e.sf, "start", "request_id", "once"), 1,
	    "the runtime was called more than once");
	hf_path(&e, path, sizeof(path), NULL, space, "/tasks");
	cr_assert_eq(hf_call(&e, "GET", path, e.manager, NULL, &res), 200);
	cr_assert_eq(json_array_size(af_data(res)), 1);
	json_decref(res);
	events = hf_all_events(&e, space);
	cr_assert_eq(hf_event_count(events, "queued", NULL, NULL), 1);
	cr_assert_eq(hf_event_count(events, "started", NULL, NULL), 1);
	json_decref(events);
	hf_stop(&e);
}

struct cancel_watch {
	struct hf_env *e;
	const char *space, *task;
	bool early; /* cancelled seen before the runtime's cleanup line */
};

/* Reads the status first, then the fake log: if the task is cancelled,
 * the cleanup line must already be there. */
static bool
cancelled_after_cleanup(void *arg)
{
	struct cancel_watch *w = arg;
	json_t *d = hf_task(w->e, w->space, w->task), *ends;
	bool cancelled = strcmp(task_status(d), "cancelled") == 0;
	bool cleaned = false;
	size_t i;
	json_t *o;

	json_decref(d);
	if (!cancelled)
		return false;
	ends = hf_fake_task(w->e, "end", w->task);
	json_array_foreach(ends, i, o) cleaned =
	    cleaned || (strcmp(sf_str(o, "outcome"), "cancelled") == 0 &&
	                   json_is_true(json_object_get(o, "cleanup")));
	json_decref(ends);
	w->early = !cleaned;
	return true;
}

/* 9. Cancel is idempotent and never reports cancelled before the executor
 * acknowledges it and cleans up. */
Test(acceptance, acceptance_09_cancel, .fini = tk_cleanup)
{
	static struct hf_env e;
	char space[CM_ID_MAX + 1], t[CM_ID_MAX + 1], t2[CM_ID_MAX + 1];
	char body[128];
	struct cancel_watch w = {&e, space, t, false};
	json_t *res, *d, *events;
	json_int_t q, s, cr, c;
	int status;

	hf_start(&e, "acc09", 1, NULL);
	hf_create_ok(&e, 0, "[\"sleep\", \"noop\"]", space);
	/* A Space that never had a task. */
	cr_assert_eq(hf_post(&e, e.manager, space, "cancel", "{}", &res), 409);
	cr_assert_str_eq(af_error_code(res), "no_task");
	json_decref(res);

	cr_assert_eq(hf_submit(&e, e.manager, space, "", "long", "sleep",
	                 "{\"ms\": 60000}", NULL, t),
	    202);
	wait_started(&e, t);
	cr_assert(hf_wait_task(&e, space, t, "running"));
	cr_assert_eq(hf_post(&e, e.manager, space, "cancel", "{}", &res), 202);
	d = af_data(res);
	cr_assert_str_eq(sf_str(d, "task_id"), t);
	cr_assert(json_is_true(json_object_get(d, "cancel_requested")));
	cr_assert_str_eq(task_status(d), "running",
	    "cancelled reported before the executor acknowledged");
	json_decref(res);

	/* Again, by id: same task, no second event. */
	snprintf(body, sizeof(body), "{\"task_id\": \"%s\"}", t);
	status = hf_post(&e, e.manager, space, "cancel", body, &res);
	d = af_data(res);
	cr_assert(json_is_true(json_object_get(d, "cancel_requested")));
	if (status == 202)
		cr_assert_str_eq(task_status(d), "running");
	else
		cr_assert(
		    status == 200 && strcmp(task_status(d), "cancelled") == 0,
		    "repeated cancel: %d %s", status, task_status(d));
	json_decref(res);

	cr_assert(tk_wait_until(cancelled_after_cleanup, &w, HF_WAIT_MS),
	    "the task never became cancelled");
	cr_assert_not(w.early, "cancelled before the runtime's cleanup line");
	events = hf_all_events(&e, space);
	cr_assert_eq(hf_event_count(events, "cancel_requested", t, &cr), 1);
	cr_assert_eq(hf_event_count(events, "cancelled", t, &c), 1);
	cr_assert_eq(hf_event_count(events, "queued", t, &q), 1);
	cr_assert_eq(hf_event_count(events, "started", t, &s), 1);
	cr_assert(q < s && s < cr && cr < c, "event order");
	cr_assert_eq(hf_event_count(events, "completed", t, NULL), 0);
	json_decref(events);

	/* On a finished task: 200 with its terminal state, and no event. */
	cr_assert_eq(hf_post(&e, e.manager, space, "cancel", body, &res), 200);
	cr_assert_str_eq(task_status(af_data(res)), "cancelled");
	json_decref(res);
	cr_assert_eq(hf_submit(&e, e.manager, space, "?wait=10", "quick",
	                 "noop", "{}", NULL, t2),
	    200);
	cr_assert_eq(hf_post(&e, e.manager, space, "cancel", "{}", &res), 200);
	d = af_data(res);
	cr_assert_str_eq(sf_str(d, "task_id"), t2);
	cr_assert_str_eq(task_status(d), "completed");
	cr_assert(json_is_false(json_object_get(d, "cancel_requested")));
	json_decref(res);
	events = hf_all_events(&e, space);
	cr_assert_eq(hf_event_count(events, "cancel_requested", NULL, NULL), 1);
	cr_assert_eq(hf_event_count(events, "cancelled", NULL, NULL), 1);
	json_decref(events);
	hf_stop(&e);
}

/* 10. A runtime failure persists a failed task, an ordered failed event
 * and a stable error code. */
Test(acceptance, acceptance_10_runtime_failure, .fini = tk_cleanup)
{
	static struct hf_env e;
	char space[CM_ID_MAX + 1], t[CM_ID_MAX + 1], t2[CM_ID_MAX + 1];
	json_t *res, *d, *events;
	json_int_t q, s, f;

	hf_start(&e, "acc10", 1, NULL);
	hf_create_ok(&e, 0, "[\"fail\", \"noop\"]", space);
	cr_assert_eq(hf_submit(&e, e.manager, space, "?wait=10", "f1", "fail",
	                 "{\"code\": \"no_such_code\", \"message\": \"it "
	                 "fell over\"}",
	                 &res, t),
	    200);
	d = af_data(res);
	cr_assert_str_eq(task_status(d), "failed");
	cr_assert_str_eq(task_error_code(d), "runtime_error");
	cr_assert(json_is_string(
	    json_object_get(json_object_get(d, "error"), "message")));
	cr_assert(json_is_null(json_object_get(d, "result")));
	json_decref(res);

	/* Persisted: the same on a later read. */
	d = hf_task(&e, space, t);
	cr_assert_str_eq(task_status(d), "failed");
	cr_assert_str_eq(task_error_code(d), "runtime_error");
	cr_assert(json_is_string(json_object_get(d, "finished_at")));
	json_decref(d);
	events = hf_all_events(&e, space);
	cr_assert_eq(hf_event_count(events, "queued", t, &q), 1);
	cr_assert_eq(hf_event_count(events, "started", t, &s), 1);
	cr_assert_eq(hf_event_count(events, "failed", t, &f), 1);
	cr_assert(q < s && s < f, "failed comes after started");
	cr_assert_eq(hf_event_count(events, "completed", t, NULL), 0);
	json_decref(events);

	/* The browser is still usable: the Space is not in error. */
	d = hf_space(&e, NULL, space);
	cr_assert_str_eq(sf_str(d, "status"), "idle");
	json_decref(d);
	cr_assert_eq(hf_submit(&e, e.manager, space, "?wait=10", "n1", "noop",
	                 "{}", &res, t2),
	    200);
	cr_assert_str_eq(task_status(af_data(res)), "completed");
	json_decref(res);
	hf_stop(&e);
}

/* 11. Closing a Space blocks new tasks and releases the instance. */
Test(acceptance, acceptance_11_close, .fini = tk_cleanup)
{
	static struct hf_env e;
	char space[CM_ID_MAX + 1], again[CM_ID_MAX + 1], path[1024];
	json_t *res, *d, *events;
	int in;

	hf_start(&e, "acc11", 1, NULL);
	hf_create_ok(&e, 0, "[\"noop\"]", space);
	cr_assert_eq(hf_submit(&e, e.manager, space, "?wait=10", "n1", "noop",
	                 "{}", NULL, NULL),
	    200);
	cr_assert_eq(hf_post(&e, e.manager, space, "close", NULL, &res), 202);
	d = af_data(res);
	cr_assert(json_is_true(json_object_get(d, "close_requested")));
	cr_assert_str_neq(sf_str(d, "status"), "closed");
	json_decref(res);

	/* New tasks are refused at once. */
	cr_assert_eq(
	    hf_submit(&e, e.manager, space, "", "n2", "noop", "{}", &res, NULL),
	    409);
	cr_assert_str_eq(af_error_code(res), "space_closed");
	json_decref(res);

	cr_assert(hf_wait_space(&e, space, "closed"), "never closed");
	d = hf_space(&e, NULL, space);
	cr_assert(json_is_string(json_object_get(d, "closed_at")));
	json_decref(d);
	events = hf_all_events(&e, space);
	cr_assert_str_eq(
	    sf_str(json_array_get(events, json_array_size(events) - 1), "kind"),
	    "space_closed");
	json_decref(events);
	cr_assert_eq(hf_post(&e, e.manager, space, "close", NULL, &res), 200);
	cr_assert_str_eq(af_data_str(res, "status"), "closed");
	json_decref(res);
	cr_assert_eq(
	    hf_submit(&e, e.manager, space, "", "n3", "noop", "{}", &res, NULL),
	    409);
	cr_assert_str_eq(af_error_code(res), "space_closed");
	json_decref(res);

	/* The instance is free again, and can be reserved anew. */
	snprintf(path, sizeof(path), "/api/v1/workspaces/%s/browser-instances",
	    hf_ws(&e));
	cr_assert_eq(hf_call(&e, "GET", path, e.manager, NULL, &res), 200);
	in =
	    af_find(af_data(res), "browser_instance_id", e.sf.w.instance_id[0]);
	cr_assert_geq(in, 0);
	cr_assert(json_is_false(json_object_get(
	    json_array_get(af_data(res), (size_t)in), "in_use")));
	json_decref(res);
	hf_create_ok(&e, 0, "[\"noop\"]", again);
	cr_assert_str_neq(again, space);
	hf_stop(&e);
}

/*
 * close?wait=SECONDS: answered 200 once the Space is closed (its runtime
 * torn down), or 202 with the Space as it stands when the wait runs out;
 * a close repeated with a wait waits for the same teardown.
 */
Test(acceptance, close_with_wait_answers_once_closed, .fini = tk_cleanup)
{
	static struct hf_env e;
	char idle[CM_ID_MAX + 1], busy[CM_ID_MAX + 1];
	json_t *res;
	pid_t actor;

	hf_start(&e, "accw", 2, NULL);
	hf_create_ok(&e, 0, "[\"noop\"]", idle);
	cr_assert_eq(
	    hf_post(&e, e.manager, idle, "close?wait=31", NULL, &res), 422);
	json_decref(res);
	cr_assert_eq(
	    hf_post(&e, e.manager, idle, "close?wait=10", NULL, &res), 200);
	cr_assert_str_eq(af_data_str(res, "status"), "closed");
	json_decref(res);

	/* Its actor frozen, a Space cannot be torn down: the wait runs out.
	 */
	hf_create_ok(&e, 1, "[\"noop\"]", busy);
	cr_assert_gt(actor = sf_wait_actor(&e.sf, busy, 0, SF_WAIT_MS), 0);
	cr_assert_eq(kill(actor, SIGSTOP), 0);
	cr_assert_eq(
	    hf_post(&e, e.manager, busy, "close?wait=1", NULL, &res), 202);
	cr_assert(
	    json_is_true(json_object_get(af_data(res), "close_requested")));
	cr_assert_str_neq(af_data_str(res, "status"), "closed");
	json_decref(res);
	cr_assert_eq(kill(actor, SIGCONT), 0);
	cr_assert_eq(
	    hf_post(&e, e.manager, busy, "close?wait=10", NULL, &res), 200);
	cr_assert_str_eq(af_data_str(res, "status"), "closed");
	json_decref(res);
	hf_stop(&e);
}

/* Every string a test must never find. */
static const char *const secrets[] = {"canary", "devtools",
    "fake-cookie-canary-7f3a", "fake-bearer-canary-91c2",
    "fake-token-canary-55e1", "fake-pass-canary-0b9d"};

static void
assert_clean(const char *what, const char *text, size_t n,
    const char *const *tokens, size_t n_tokens)
{
	for (size_t i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++)
		cr_assert_not(hf_contains(text, n, secrets[i]),
		    "%s holds \"%s\"", what, secrets[i]);
	for (size_t i = 0; i < n_tokens; i++)
		cr_assert_not(
		    hf_contains(text, n, tokens[i]), "%s holds a token", what);
}

struct db_scan {
	const char *const *tokens;
	size_t n_tokens;
};

/* One value of the database: clean, but an instance's own secret
 * columns. */
static void
db_cell_clean(
    void *arg, const char *table, const char *col, const void *value, size_t n)
{
	const struct db_scan *scan = arg;
	char what[256];

	if (strcmp(table, "browser_instances") == 0 &&
	    (strcmp(col, "endpoint") == 0 || strcmp(col, "config") == 0 ||
	        strcmp(col, "profile") == 0))
		return;
	snprintf(what, sizeof(what), "%s.%s", table, col);
	assert_clean(what, value, n, scan->tokens, scan->n_tokens);
}

/* Every column of every row of every table the catalog lists, on either
 * backend (tk_db_each). */
static void
assert_db_clean(const struct hf_env *e, const char *const *tokens, size_t nt)
{
	struct db_scan scan = {tokens, nt};

	cr_assert_geq(tk_db_each(e->sf.dir, db_cell_clean, &scan), 10,
	    "not the service's database");
}

/* 12. No new response or row contains endpoint URLs, agent URLs, cookies,
 * credentials, authorization headers, profile paths or unbounded HTML. */
Test(acceptance, acceptance_12_no_secret_leaks, .fini = tk_cleanup)
{
	static const char *const flags[] = {"--log-level=debug", NULL};
	static struct hf_env e;
	char inst[CM_ID_MAX + 1], space[CM_ID_MAX + 1], body[1024];
	char path[1024], leak[CM_ID_MAX + 1], big[CM_ID_MAX + 1];
	const char *tokens[2];
	char *text, *sse = NULL;
	json_t *res, *events;
	size_t n;

	hf_start(&e, "acc12", 0, flags);
	tokens[0] = e.manager;
	tokens[1] = e.af.admin;
	e.record = true;
	snprintf(body, sizeof(body),
	    "{\"name\": \"secret-inst\", \"driver\": \"fake\", \"bundle_id\": "
	    "\"%s\", \"endpoint\": \"" CANARY_ENDPOINT
	    "\", \"profile_mode\": \"persistent\", \"profile\": "
	    "\"" CANARY_PROFILE
	    "\", \"config\": {\"latency_ms\": 0, \"secret\": \"" CANARY_CONFIG
	    "\"}}",
	    e.sf.w.bundle_id);
	cr_assert_eq(hf_call(&e, "POST", "/api/v1/admin/browser-instances",
	                 e.af.admin, body, &res),
	    201);
	snprintf(
	    inst, sizeof(inst), "%s", af_data_str(res, "browser_instance_id"));
	json_decref(res);
	snprintf(body, sizeof(body),
	    "{\"workspace_id\": \"%s\", \"browser_instance_id\": \"%s\"}",
	    hf_ws(&e), inst);
	cr_assert_eq(hf_call(&e, "POST", "/api/v1/admin/bindings", e.af.admin,
	                 body, NULL),
	    201);

	cr_assert_eq(hf_create(&e, e.manager, inst, "operator",
	                 e.sf.w.operator_id, "[\"leak\", \"big\"]", space),
	    201);
	cr_assert_eq(hf_submit(&e, e.manager, space, "?wait=10", "l1", "leak",
	                 NULL, &res, leak),
	    200);
	cr_assert_str_eq(task_status(af_data(res)), "completed");
	json_decref(res);
	cr_assert_eq(hf_submit(&e, e.manager, space, "?wait=10", "b1", "big",
	                 NULL, &res, big),
	    200);
	cr_assert_str_eq(task_status(af_data(res)), "completed");
	json_decref(res);

	/* Read everything back through every route that shows it. */
	json_decref(hf_task(&e, space, leak));
	json_decref(hf_task(&e, space, big));
	json_decref(hf_space(&e, NULL, space));
	hf_path(&e, path, sizeof(path), NULL, space, "/tasks");
	cr_assert_eq(hf_call(&e, "GET", path, e.manager, NULL, NULL), 200);
	hf_path(&e, path, sizeof(path), NULL, NULL, NULL);
	cr_assert_eq(hf_call(&e, "GET", path, e.manager, NULL, NULL), 200);
	snprintf(path, sizeof(path), "/api/v1/workspaces/%s/browser-instances",
	    hf_ws(&e));
	cr_assert_eq(hf_call(&e, "GET", path, e.manager, NULL, NULL), 200);
	cr_assert_eq(hf_call(&e, "GET", "/api/v1/admin/browser-instances",
	                 e.af.admin, NULL, NULL),
	    200);
	cr_assert_eq(hf_post(&e, e.manager, space, "close", NULL, NULL), 202);
	cr_assert(hf_wait_space(&e, space, "closed"));
	events = hf_all_events(&e, space);
	cr_assert_geq(json_array_size(events), 8);
	json_decref(events);
	cr_assert_eq(hf_sse(&e, e.manager, space, &sse), 200);
	cr_assert_not_null(strstr(sse, "event: space_closed"));
	free(sse);

	/* Every response body of this test. */
	assert_clean("a response", e.seen, e.seen_len, tokens, 2);
	/* Every table. */
	assert_db_clean(&e, tokens, 2);
	/* The service's log (and that of all its children). */
	text = tk_read_file(e.sf.out, &n);
	cr_assert_not_null(text);
	cr_assert_gt(n, 0);
	assert_clean("the service's log", text, n, tokens, 2);
	free(text);
	hf_stop(&e);
}

/* 13. Event replay returns ascending, bounded events and honours
 * after_sequence. */
Test(acceptance, acceptance_13_event_replay, .fini = tk_cleanup)
{
	static struct hf_env e;
	enum { TASKS = 34, TOTAL = 1 + 3 * TASKS };
	char space[CM_ID_MAX + 1], rid[32], q[64], path[1024];
	json_t *events, *ev;
	json_int_t next = 1;
	size_t i;

	hf_start(&e, "acc13", 1, NULL);
	hf_create_ok(&e, 0, "[\"noop\"]", space);
	for (int k = 0; k < TASKS; k++) {
		snprintf(rid, sizeof(rid), "r%02d", k);
		cr_assert_eq(hf_submit(&e, e.manager, space, "?wait=10", rid,
		                 "noop", "{}", NULL, NULL),
		    200);
	}
	/* Default: the first 100, ascending from 1. */
	cr_assert_eq(hf_events(&e, e.manager, space, "", &events), 200);
	cr_assert_eq(json_array_size(events), 100);
	json_array_foreach(events, i, ev)
	{
		cr_assert_eq(
		    json_integer_value(json_object_get(ev, "sequence")),
		    (json_int_t)i + 1);
		cr_assert(json_is_string(json_object_get(ev, "kind")));
		cr_assert(json_is_string(json_object_get(ev, "created_at")));
		cr_assert_not_null(json_object_get(ev, "payload"));
		cr_assert_not_null(json_object_get(ev, "task_id"));
	}
	cr_assert_str_eq(
	    sf_str(json_array_get(events, 0), "kind"), "space_opened");
	json_decref(events);
	cr_assert_eq(
	    hf_events(&e, e.manager, space, "?after_sequence=100", &events),
	    200);
	cr_assert_eq(json_array_size(events), TOTAL - 100);
	cr_assert_eq(json_integer_value(json_object_get(
	                 json_array_get(events, 0), "sequence")),
	    101);
	json_decref(events);
	cr_assert_eq(hf_events(&e, e.manager, space,
	                 "?after_sequence=50&limit=10", &events),
	    200);
	cr_assert_eq(json_array_size(events), 10);
	json_array_foreach(events, i, ev)
	    cr_assert_eq(json_integer_value(json_object_get(ev, "sequence")),
	        (json_int_t)(51 + i));
	json_decref(events);
	cr_assert_eq(
	    hf_events(&e, e.manager, space, "?limit=100", &events), 200);
	cr_assert_eq(json_array_size(events), 100);
	json_decref(events);
	snprintf(q, sizeof(q), "?after_sequence=%d", TOTAL);
	cr_assert_eq(hf_events(&e, e.manager, space, q, &events), 200);
	cr_assert_eq(json_array_size(events), 0);
	json_decref(events);

	/* Paging by after_sequence reads the whole log once, in order. */
	for (;;) {
		snprintf(q, sizeof(q), "?after_sequence=%lld&limit=7",
		    (long long)next - 1);
		cr_assert_eq(hf_events(&e, e.manager, space, q, &events), 200);
		cr_assert_leq(json_array_size(events), 7);
		if (json_array_size(events) == 0) {
			json_decref(events);
			break;
		}
		json_array_foreach(events, i, ev) cr_assert_eq(
		    json_integer_value(json_object_get(ev, "sequence")),
		    next++);
		json_decref(events);
	}
	cr_assert_eq(next, TOTAL + 1);

	/* Out of range: 422. */
	{
		static const char *const bad[] = {"?limit=101", "?limit=0",
		    "?after_sequence=-1", "?after_sequence=x", "?limit="};

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			snprintf(q, sizeof(q), "/events%s", bad[i]);
			hf_path(&e, path, sizeof(path), NULL, space, q);
			hf_expect(&e, "GET", path, e.manager, NULL, 422,
			    "invalid_request");
		}
	}
	hf_stop(&e);
}
