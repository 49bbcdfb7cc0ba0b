/*
 * Reads of a Space's detail without the store (docs/architecture.md,
 * "Reads without the store"), through the real spaced: the api's view
 * answers them, and no answer is older than what the same client did or
 * was shown.
 *
 *  - a client reads its own writes: a submit, then at once the detail,
 *    round after round, each round's view filled first;
 *  - and never a state older than an event it was shown: a submit with
 *    ?wait= answers from the task's ending event, and the detail read
 *    right after shows that task ended;
 *  - a change no client of the api made (a task submitted straight to the
 *    store, run by the actor) shows as soon as the feed brings it;
 *  - an idle Space keeps being answered from the view across the store's
 *    beats, which the api hears;
 *  - a list of the workspace's Spaces shows a Space created through the
 *    api at once, and one created straight in the store once its event
 *    comes;
 *  - what the view holds is answered on the connection loop, with no
 *    worker, and nothing else is: a task list, and a Space the store
 *    does not know, are a worker's to answer.
 * Each checks that the view did answer reads (its hit counter on
 * /metrics), so that none of this passes with the view left out.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "space_fixture.h"
#include "token.h"

#define ROUNDS 150

static struct sf_env env;
static char token[CM_TOKEN_LEN];
static char space[CM_ID_MAX + 1];
static char detail[512];

static void
setup(void)
{
	sf_start(&env, "view", 3);
	cr_assert(tk_http_ready(&env.p, 20000));
	cr_assert_eq(tk_token_issue(env.s, env.w.operator_id, token), 0);
	sf_create_ok(&env, 0, space);
	snprintf(detail, sizeof(detail),
	    "/api/v1/workspaces/%s/browser-spaces/%s", env.w.workspace_id,
	    space);
}

static void
teardown(void)
{
	sf_stop(&env);
}

TestSuite(view, .init = setup, .fini = teardown);

/* GET of the detail; the caller json_decref's the data object. */
static json_t *
get_detail(void)
{
	char *out = NULL;
	json_t *j, *data;
	int st = tk_http(&env.p, "GET", detail, token, NULL, NULL, &out);

	cr_assert_eq(st, 200, "GET detail answered %d: %s", st, out);
	j = json_loads(out, 0, NULL);
	free(out);
	cr_assert_not_null(j);
	data = json_incref(json_object_get(j, "data"));
	json_decref(j);
	cr_assert_not_null(data);
	return data;
}

static json_int_t
revision_of(const json_t *d)
{
	return json_integer_value(json_object_get(d, "revision"));
}

/* The active task's id in d, or NULL. */
static const char *
active_of(const json_t *d)
{
	return json_string_value(
	    json_object_get(json_object_get(d, "active_task"), "task_id"));
}

static double
metric(const char *key)
{
	char *out = NULL, admin[CM_TOKEN_LEN + 1];
	double v;

	cr_assert(tk_admin_token(&env.p, admin, sizeof(admin), 20000));
	cr_assert_eq(
	    tk_http(&env.p, "GET", "/metrics", admin, NULL, NULL, &out), 200);
	v = tk_prom_sample(out, key);
	free(out);
	return v;
}

static double
hits(void)
{
	return metric("spaced_api_view_reads_total{result=\"hit\"}");
}

static double
loop_answers(void)
{
	return metric("spaced_api_loop_answers_total");
}

/* POSTs a noop; with wait, ?wait=30.  The task's id goes to task, its
 * status as answered to status.  Returns the HTTP status. */
static int
submit(int round, bool wait, char *task, char *status)
{
	char path[600], body[200], *out = NULL;
	json_t *j, *d;
	int st;

	snprintf(
	    path, sizeof(path), "%s/tasks%s", detail, wait ? "?wait=30" : "");
	snprintf(body, sizeof(body),
	    "{\"capability\": \"noop\", \"request_id\": \"r-%c-%d\"}",
	    wait ? 'w' : 'n', round);
	st = tk_http(&env.p, "POST", path, token, body, NULL, &out);
	j = json_loads(out, 0, NULL);
	free(out);
	cr_assert_not_null(j);
	d = json_object_get(j, "data");
	snprintf(task, CM_ID_MAX + 1, "%s",
	    json_string_value(json_object_get(d, "task_id")));
	snprintf(
	    status, 32, "%s", json_string_value(json_object_get(d, "status")));
	json_decref(j);
	return st;
}

/* Whether the detail reads idle with no task active. */
static bool
idle_through_api(void *arg)
{
	json_t *d = get_detail();
	const char *st = json_string_value(json_object_get(d, "status"));
	bool yes =
	    st != NULL && strcmp(st, "idle") == 0 && active_of(d) == NULL;

	(void)arg;
	json_decref(d);
	return yes;
}

Test(view, a_client_reads_its_own_writes)
{
	double h0 = hits(), l0 = loop_answers();

	for (int i = 0; i < ROUNDS; i++) {
		char task[CM_ID_MAX + 1], status[32];
		json_t *before, *after;
		json_int_t rev;
		const char *active;
		int st;

		/* Twice: the first may fill the view, the second may be
		 * answered from it. */
		json_decref(get_detail());
		before = get_detail();
		rev = revision_of(before);
		cr_assert_null(
		    active_of(before), "round %d: a task is active", i);
		json_decref(before);
		st = submit(i, false, task, status);
		cr_assert(st == 201 || st == 202, "round %d: submit %d", i, st);
		after = get_detail();
		active = active_of(after);
		/* The task is there, or it has run already and moved the
		 * Space on. */
		cr_assert((active != NULL && strcmp(active, task) == 0) ||
		              revision_of(after) > rev,
		    "round %d: the detail after the submit of %s shows "
		    "revision %lld (was %lld) and active task %s",
		    i, task, (long long)revision_of(after), (long long)rev,
		    active ? active : "none");
		json_decref(after);
		cr_assert(
		    sf_wait_task(&env, space, task, "completed", SF_WAIT_MS),
		    "round %d: task %s never completed", i, task);
		/* Idle again once the api says so: what the test reads from
		 * the store itself, this api has not shown it, and its feed
		 * may bring it a moment later. */
		cr_assert(tk_wait_until(idle_through_api, NULL, SF_WAIT_MS),
		    "round %d: the detail never read idle", i);
	}
	cr_assert_gt(hits(), h0, "the view answered no read");
	cr_assert_gt(loop_answers(), l0, "the loop answered no read");
}

Test(view, never_older_than_an_event_the_client_was_shown)
{
	double h0 = hits();

	for (int i = 0; i < ROUNDS; i++) {
		char task[CM_ID_MAX + 1], status[32];
		const char *active, *st_after;
		json_t *d;
		int st;

		json_decref(get_detail());
		json_decref(get_detail());
		/* Answered from the event that ended the task. */
		st = submit(i, true, task, status);
		cr_assert_eq(st, 200, "round %d: submit answered %d", i, st);
		cr_assert_str_eq(status, "completed", "round %d", i);
		d = get_detail();
		active = active_of(d);
		st_after = json_string_value(json_object_get(d, "status"));
		cr_assert(active == NULL || strcmp(active, task) != 0,
		    "round %d: completed task %s still active in the detail", i,
		    task);
		cr_assert_str_neq(st_after, "running",
		    "round %d: the Space still reads running after %s "
		    "completed",
		    i, task);
		json_decref(d);
	}
	cr_assert_gt(hits(), h0, "the view answered no read");
}

/* Whether the detail shows the Space past revision *arg, no task active. */
static bool
moved_past(void *arg)
{
	json_t *d = get_detail();
	bool yes = revision_of(d) > *(json_int_t *)arg && active_of(d) == NULL;

	json_decref(d);
	return yes;
}

Test(view, a_change_no_client_made_shows_when_its_event_comes)
{
	for (int i = 0; i < 20; i++) {
		char rid[32], task[CM_ID_MAX + 1];
		json_int_t rev;
		json_t *d;

		json_decref(get_detail());
		d = get_detail();
		rev = revision_of(d);
		json_decref(d);
		/* Not through this api: it learns of it from the feed alone. */
		snprintf(rid, sizeof(rid), "store-%d", i);
		cr_assert_eq(
		    sf_submit(&env, space, rid, "noop", NULL, 0, task), CM_OK);
		cr_assert(
		    sf_wait_task(&env, space, task, "completed", SF_WAIT_MS));
		cr_assert(sf_wait_space(&env, space, "idle", SF_WAIT_MS));
		/* The store has it all: the detail must follow, within the
		 * feed's delay. */
		cr_assert(tk_wait_until(moved_past, &rev, SF_WAIT_MS),
		    "round %d: the detail never showed task %s's run", i, task);
	}
}

static bool
beats_past(void *arg)
{
	return metric("spaced_api_feed_beats_total") >= *(double *)arg;
}

Test(view, an_idle_space_is_answered_from_the_view_across_beats)
{
	double want, h0;

	json_decref(get_detail());
	/* Six beats: longer than the view lasts with none. */
	want = metric("spaced_api_feed_beats_total") + 6;
	cr_assert(tk_wait_until(beats_past, &want, SF_WAIT_MS),
	    "the api heard no beats");
	h0 = hits();
	json_decref(get_detail());
	json_decref(get_detail());
	cr_assert_geq(
	    hits(), h0 + 2, "idle reads were not answered from the view");
	cr_assert_eq(metric("spaced_api_feed_losses_total"), 0);
}

/* The ids in the list answer of path, in *n; true when want is among them. */
static bool
list_has(const char *want, int *n)
{
	char path[400], *out = NULL;
	json_t *j, *data, *it;
	bool found = false;
	size_t i;

	snprintf(path, sizeof(path), "/api/v1/workspaces/%s/browser-spaces",
	    env.w.workspace_id);
	cr_assert_eq(
	    tk_http(&env.p, "GET", path, token, NULL, NULL, &out), 200);
	j = json_loads(out, 0, NULL);
	free(out);
	data = json_object_get(j, "data");
	cr_assert(json_is_array(data));
	*n = (int)json_array_size(data);
	json_array_foreach(data, i, it)
	{
		const char *id =
		    json_string_value(json_object_get(it, "space_id"));

		found = found || (id != NULL && strcmp(id, want) == 0);
	}
	json_decref(j);
	return found;
}

static bool
listed(void *arg)
{
	int n;

	return list_has(arg, &n);
}

Test(view, a_list_shows_a_space_created_a_moment_ago)
{
	char body[512], created[CM_ID_MAX + 1], path[400], other[CM_ID_MAX + 1];
	double h0;
	int n;

	cr_assert(list_has(space, &n));
	h0 = hits();
	cr_assert(list_has(space, &n));
	cr_assert_eq(n, 1);
	cr_assert_gt(hits(), h0, "the view answered no list");
	/* Through this api: the next list has it, whatever the feed. */
	snprintf(path, sizeof(path), "/api/v1/workspaces/%s/browser-spaces",
	    env.w.workspace_id);
	snprintf(body, sizeof(body),
	    "{\"browser_instance_id\": \"%s\", \"owner_type\": "
	    "\"operator\", \"owner_id\": \"%s\"}",
	    env.w.instance_id[1], env.w.operator_id);
	cr_assert_eq(tk_http_created(&env.p, path, token, body, "space_id",
	                 created, sizeof(created)),
	    0);
	cr_assert(list_has(created, &n), "the list missed the Space just made");
	cr_assert_eq(n, 2);
	cr_assert(list_has(created, &n));
	/* Straight in the store: the feed's space_opened drops the list. */
	sf_create_ok(&env, 2, other);
	cr_assert(tk_wait_until(listed, other, SF_WAIT_MS),
	    "the list never showed a Space made elsewhere");
}

/* Whether a read of the detail was answered on the loop. */
static bool
read_by_the_loop(void *arg)
{
	double before = loop_answers();

	(void)arg;
	json_decref(get_detail());
	return loop_answers() > before;
}

Test(view, the_loop_answers_only_what_the_view_holds)
{
	char path[600], *out = NULL;
	double l0;

	/* The first read fills the view (a worker's), a later one is the
	 * loop's. */
	cr_assert(tk_wait_until(read_by_the_loop, NULL, SF_WAIT_MS),
	    "no read of the detail was answered on the loop");
	/* The view holds no task list: a worker asks the store. */
	l0 = loop_answers();
	snprintf(path, sizeof(path), "%s/tasks", detail);
	cr_assert_eq(
	    tk_http(&env.p, "GET", path, token, NULL, NULL, &out), 200);
	free(out);
	out = NULL;
	/* Nor a Space the store does not know: answered 404 by a worker. */
	snprintf(path, sizeof(path),
	    "/api/v1/workspaces/%s/browser-spaces/no-such-space",
	    env.w.workspace_id);
	cr_assert_eq(
	    tk_http(&env.p, "GET", path, token, NULL, NULL, &out), 404);
	free(out);
	cr_assert_eq(loop_answers(), l0,
	    "the loop answered a read the view does not hold");
}
