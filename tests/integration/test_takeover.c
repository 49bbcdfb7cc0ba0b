/*
 * An operator's take-over of a Space, over real HTTP against the real
 * service on the fake runtime: the hold refuses the agent's tasks with
 * 409 space_held naming its holder and deadline, waits for a running
 * task to be cancelled before it begins, ends at its release, its
 * deadline, its token's revocation and its holder's removal, survives a
 * kill -9 of the store, the api and the actor; request_help marks the
 * Space and a take-over clears it.  Who may take over: the owner or a
 * manager, never another member.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "http_fixture.h"

TestSuite(takeover, .timeout = 180);

static struct hf_env e;
static char owner[CM_ID_MAX + 1], owner_tok[CM_TOKEN_MAX + 1];
static char owner_tok_id[CM_ID_MAX + 1];
static char other[CM_ID_MAX + 1], other_tok[CM_TOKEN_MAX + 1];
static char space[CM_ID_MAX + 1];

static void
setup(void)
{
	hf_start(&e, "takeover", 1, NULL);
	af_principal(&e.af, "operator", "Olga Owner", owner);
	af_member_put(&e.af, hf_ws(&e), owner, "member");
	af_issue(&e.af, owner, NULL, owner_tok_id, owner_tok);
	hf_principal(&e, "operator", "Otto Other", "member", other, other_tok);
	cr_assert_eq(hf_create(&e, e.manager, e.sf.w.instance_id[0], "operator",
	                 owner, NULL, space),
	    201);
}

static void
teardown(void)
{
	hf_stop(&e);
}

/* POST .../takeover as token with body (NULL: none); its status, the
 * answer's data in *d when d is not NULL (caller decrefs). */
static int
take(const char *token, const char *body, json_t **d)
{
	json_t *res = NULL;
	int st = hf_post(&e, token, space, "takeover", body, &res);

	if (d != NULL)
		*d = json_incref(af_data(res));
	json_decref(res);
	return st;
}

/* A sleep of ms submitted as token with request id rid: its status, the
 * error code into code (may be NULL), the message into msg. */
static int
sleep_as(const char *token, const char *rid, int ms, char *code, char *msg)
{
	char args[64];
	json_t *res = NULL;
	int st;

	snprintf(args, sizeof(args), "{\"ms\": %d}", ms);
	st = hf_submit(&e, token, space, "", rid, "sleep", args, &res, NULL);
	if (code != NULL)
		snprintf(code, 64, "%s",
		    af_error_code(res) ? af_error_code(res) : "");
	if (msg != NULL)
		snprintf(msg, 512, "%s",
		    json_string_value(json_object_get(
		        json_object_get(res, "error"), "message"))
		        ? json_string_value(json_object_get(
		              json_object_get(res, "error"), "message"))
		        : "");
	json_decref(res);
	return st;
}

/* The payload's reason of the Space's last takeover_ended, into out. */
static void
last_end_reason(char *out, size_t len)
{
	json_t *events = hf_all_events(&e, space), *ev;
	size_t i;

	out[0] = '\0';
	json_array_foreach(events, i,
	    ev) if (strcmp(sf_str(ev, "kind"), "takeover_ended") == 0)
	    snprintf(out, len, "%s",
	        json_string_value(
	            json_object_get(json_object_get(ev, "payload"), "reason")));
	json_decref(events);
}

Test(takeover, a_hold_refuses_the_agent_and_ends_at_its_release, .init = setup,
    .fini = teardown)
{
	char code[64], msg[512];
	json_t *d, *events;

	/* Another member may not; the owner may. */
	cr_assert_eq(take(other_tok, NULL, NULL), 403);
	cr_assert_eq(take(owner_tok, "{\"ttl_s\": 0}", NULL), 422);
	cr_assert_eq(take(owner_tok, "{\"ttl_s\": 120}", &d), 200);
	cr_assert_str_eq(sf_str(d, "status"), "held");
	cr_assert_str_eq(sf_str(json_object_get(d, "hold"), "held_by"), owner);
	cr_assert_str_eq(
	    sf_str(json_object_get(d, "hold"), "held_by_name"), "Olga Owner");
	cr_assert_not_null(sf_str(json_object_get(d, "hold"), "held_until"));
	json_decref(d);
	/* The agent's task is refused, saying by whom and until when. */
	cr_assert_eq(sleep_as(owner_tok, "r1", 10, code, msg), 409);
	cr_assert_str_eq(code, "space_held");
	cr_assert_not_null(strstr(msg, "Olga Owner"), "%s", msg);
	cr_assert_not_null(strstr(msg, " until 20"), "%s", msg);
	/* A manager is refused while another holds it, but may release. */
	cr_assert_eq(take(e.manager, NULL, NULL), 409);
	cr_assert_eq(hf_post(&e, other_tok, space, "release", NULL, NULL), 403);
	cr_assert_eq(hf_post(&e, e.manager, space, "release", NULL, NULL), 200);
	cr_assert_eq(hf_post(&e, e.manager, space, "release", NULL, NULL), 409);
	cr_assert(hf_wait_space(&e, space, "idle"));
	/* Handed back: the agent's next task runs. */
	cr_assert_eq(sleep_as(owner_tok, "r2", 10, NULL, NULL), 202);
	events = hf_all_events(&e, space);
	cr_assert_eq(hf_event_count(events, "takeover_started", NULL, NULL), 1);
	cr_assert_eq(hf_event_count(events, "takeover_ended", NULL, NULL), 1);
	json_decref(events);
	last_end_reason(msg, sizeof(msg));
	cr_assert_str_eq(msg, "released");
}

/* A take-over of a Space whose task runs sends the task down the cancel
 * path; the hold begins once it has ended cancelled, never before. */
Test(takeover, a_take_over_begins_after_the_running_task_is_cancelled,
    .init = setup, .fini = teardown)
{
	char task[CM_ID_MAX + 1];
	json_int_t cancelled, started;
	json_t *d, *events;
	int st;

	cr_assert_eq(hf_submit(&e, owner_tok, space, "", "long", "sleep",
	                 "{\"ms\": 60000}", NULL, task),
	    202);
	cr_assert(sf_wait_fake(&e.sf, "start", "task_id", task, SF_WAIT_MS));
	st = take(owner_tok, NULL, &d);
	cr_assert(st == 202 || st == 200, "%d", st);
	if (st == 202) {
		cr_assert(json_is_true(
		    json_object_get(json_object_get(d, "hold"), "pending")));
		cr_assert_str_neq(sf_str(d, "status"), "held");
	}
	json_decref(d);
	cr_assert(hf_wait_task(&e, space, task, "cancelled"));
	cr_assert(hf_wait_space(&e, space, "held"));
	events = hf_all_events(&e, space);
	cr_assert_eq(hf_event_count(events, "cancelled", task, &cancelled), 1);
	cr_assert_eq(
	    hf_event_count(events, "takeover_started", NULL, &started), 1);
	cr_assert_lt(cancelled, started);
	json_decref(events);
}

struct until_reason {
	const char *want;
};

static bool
ended_with(void *arg)
{
	const struct until_reason *u = arg;
	char reason[64];

	last_end_reason(reason, sizeof(reason));
	return strcmp(reason, u->want) == 0;
}

Test(takeover, a_hold_ends_at_its_deadline_and_with_its_token, .init = setup,
    .fini = teardown)
{
	struct until_reason expired = {"expired"}, revoked = {"token_revoked"};
	char path[256], task[CM_ID_MAX + 1];

	/* Its deadline: the sweep ends it, and a submit after it runs. */
	cr_assert_eq(take(owner_tok, "{\"ttl_s\": 1}", NULL), 200);
	cr_assert(tk_wait_until(ended_with, &expired, HF_WAIT_MS));
	cr_assert(hf_wait_space(&e, space, "idle"));
	cr_assert_eq(hf_submit(&e, owner_tok, space, "", "after", "sleep",
	                 "{\"ms\": 10}", NULL, task),
	    202);
	/* Ended, not only queued (a queued task's Space still reads idle):
	 * a take-over now begins at once. */
	cr_assert(hf_wait_task(&e, space, task, "completed"));
	/* Renewed by its holder, it is still the one hold. */
	cr_assert_eq(take(owner_tok, "{\"ttl_s\": 60}", NULL), 200);
	cr_assert_eq(take(owner_tok, "{\"ttl_s\": 120}", NULL), 200);
	/* The token it was taken with revoked: the hold ends. */
	snprintf(path, sizeof(path), "/api/v1/admin/tokens/%s", owner_tok_id);
	cr_assert_eq(
	    af_call(&e.af, "DELETE", path, e.af.admin, NULL, NULL), 200);
	cr_assert(tk_wait_until(ended_with, &revoked, HF_WAIT_MS));
	cr_assert(hf_wait_space(&e, space, "idle"));
}

/* A take-over that names no ttl_s lasts the config's takeover_ttl. */
Test(takeover, the_configured_ttl_is_a_holds_by_default, .fini = teardown)
{
	static const char *const flags[] = {"--takeover-ttl=1", NULL};
	struct until_reason expired = {"expired"};
	json_t *d;

	hf_start(&e, "takeover-ttl", 1, flags);
	cr_assert_eq(hf_create(&e, e.manager, e.sf.w.instance_id[0], "operator",
	                 e.sf.w.operator_id, NULL, space),
	    201);
	cr_assert_eq(take(e.manager, NULL, &d), 200);
	cr_assert_str_eq(sf_str(d, "status"), "held");
	json_decref(d);
	cr_assert(tk_wait_until(ended_with, &expired, HF_WAIT_MS));
}

Test(takeover, a_holder_removed_from_the_workspace_loses_the_hold,
    .init = setup, .fini = teardown)
{
	struct until_reason removed = {"holder_removed"};
	char path[512];

	cr_assert_eq(take(owner_tok, NULL, NULL), 200);
	snprintf(path, sizeof(path), "/api/v1/admin/workspaces/%s/members/%s",
	    hf_ws(&e), owner);
	cr_assert_eq(
	    af_call(&e.af, "DELETE", path, e.af.admin, NULL, NULL), 200);
	cr_assert(tk_wait_until(ended_with, &removed, HF_WAIT_MS));
}

Test(takeover, request_help_marks_the_space_until_a_take_over, .init = setup,
    .fini = teardown)
{
	json_t *res = NULL, *d, *events, *ev;
	char task[CM_ID_MAX + 1];
	size_t i;
	bool seen = false;

	cr_assert_eq(
	    hf_submit(&e, owner_tok, space, "?wait=10", "help", "request_help",
	        "{\"reason\": \"a second factor is asked\"}", &res, task),
	    200);
	cr_assert_str_eq(sf_str(af_data(res), "status"), "completed");
	json_decref(res);
	d = hf_space(&e, NULL, space);
	cr_assert(json_is_true(json_object_get(d, "help_requested")));
	cr_assert_str_eq(sf_str(d, "status"), "idle");
	json_decref(d);
	events = hf_all_events(&e, space);
	json_array_foreach(events, i,
	    ev) if (strcmp(sf_str(ev, "kind"), "help_requested") == 0)
	{
		cr_assert_str_eq(
		    sf_str(json_object_get(ev, "payload"), "reason"),
		    "a second factor is asked");
		cr_assert_str_eq(sf_str(ev, "task_id"), task);
		seen = true;
	}
	json_decref(events);
	cr_assert(seen);
	cr_assert_eq(take(e.manager, NULL, &d), 200);
	cr_assert(json_is_false(json_object_get(d, "help_requested")));
	json_decref(d);
}

/* The pid of spaced's one child named name. */
static pid_t
child(const char *name, const char *sp)
{
	pid_t pids[4];

	cr_assert_eq(sf_children(e.sf.p.pid, name, sp, pids, 4), 1, "%s", name);
	return pids[0];
}

struct respawn {
	const char *name, *space;
	pid_t was;
};

/* name's process is back under another pid, and the Space reads held. */
static bool
back_and_held(void *arg)
{
	struct respawn *r = arg;
	pid_t pids[4];
	char path[1024];
	json_t *res = NULL;
	bool held;

	if (sf_children(e.sf.p.pid, r->name, r->space, pids, 4) != 1 ||
	    pids[0] == r->was)
		return false;
	hf_path(&e, path, sizeof(path), NULL, space, NULL);
	if (hf_call(&e, "GET", path, e.manager, NULL, &res) != 200) {
		json_decref(res);
		return false;
	}
	held = strcmp(sf_str(af_data(res), "status"), "held") == 0;
	json_decref(res);
	return held;
}

Test(takeover, a_hold_survives_a_kill_9_of_each_process, .init = setup,
    .fini = teardown)
{
	static const char *const names[] = {
	    "spaced-store", "spaced-api", "spaced-actor"};
	char code[64], msg[512];

	cr_assert_eq(take(owner_tok, NULL, NULL), 200);
	for (size_t i = 0; i < 3; i++) {
		struct respawn r = {names[i], i == 2 ? space : NULL, 0};

		r.was = child(r.name, r.space);
		cr_assert_eq(kill(r.was, SIGKILL), 0);
		cr_assert(tk_wait_until(back_and_held, &r, HF_WAIT_MS),
		    "after %s", r.name);
	}
	cr_assert_eq(sleep_as(owner_tok, "still", 10, code, msg), 409);
	cr_assert_str_eq(code, "space_held");
}
