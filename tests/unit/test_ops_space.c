/*
 * test_ops_space.c: a Space's reads, close and error, and the event log
 * (section "events"); its creation is test_ops_space_create.c.
 */
#include <jansson.h>

#include "store_fixture.h"

static struct fx fx;

static void
setup(void)
{
	fx_setup(&fx, 0);
	fx_provision(&fx, 3);
}

static void
teardown(void)
{
	fx_teardown(&fx);
}

TestSuite(space, .init = setup, .fini = teardown);
TestSuite(events, .init = setup, .fini = teardown);

/* ---- get and list
 * ----------------------------------------------------------------- */

Test(space, get_shows_the_active_task)
{
	const char *sp = fx_space(&fx, 0), *task;
	struct pr_rep *r;

	r = fx_space_get(&fx, fx.ws, sp);
	FX_EXPECT(r, CM_OK);
	cr_assert_eq(r->n_tasks, 0, "a Space without tasks shows one");

	task = fx_task(&fx, sp, "r1");
	r = fx_space_get(&fx, fx.ws, sp);
	cr_assert_eq(r->n_tasks, 1);
	cr_assert_str_eq(r->tasks[0].task_id, task);
	cr_assert_str_eq(r->tasks[0].status, "queued");

	fx_claim(&fx, sp, "actor-1");
	r = fx_space_get(&fx, fx.ws, sp);
	cr_assert_str_eq(r->spaces[0].status, "running");
	cr_assert_eq(r->n_tasks, 1);
	cr_assert_str_eq(r->tasks[0].status, "running");

	FX_FINISH(&fx, task, "actor-1", "completed", NULL, NULL, CM_OK);
	r = fx_space_get(&fx, fx.ws, sp);
	cr_assert_str_eq(r->spaces[0].status, "idle");
	cr_assert_eq(r->n_tasks, 0, "a finished task is still shown active");

	FX_EXPECT(fx_space_get(&fx, fx.ws, "no-such-space"), CM_E_NOT_FOUND);
}

static struct pr_rep *
space_page(const char *status, const char *owner, int64_t limit,
    const char *after, enum cm_err want)
{
	struct pr_req q;

	fx_req(&fx, &q, PR_OP_SPACE_LIST);
	q.workspace_id = fx.ws;
	q.status = status;
	q.owner_id = owner;
	q.limit = limit;
	q.after_id = after;
	return FX_CALL(&fx, &q, want);
}

static struct pr_rep *
space_list(
    const char *status, const char *owner, int64_t limit, enum cm_err want)
{
	return space_page(status, owner, limit, NULL, want);
}

Test(space, list_filters_by_status_and_owner)
{
	struct pr_req q;
	struct pr_rep *r;
	const char *a, *b, *c;

	a = fx_space(&fx, 0);
	fx_advance(&fx, 10);
	fx_create_req(&fx, &q, 1);
	q.owner_id = fx.member;
	b = FX_CALL(&fx, &q, CM_OK)->spaces[0].space_id;
	fx_advance(&fx, 10);
	c = fx_space(&fx, 2);
	fx_mark_closed(&fx, c);

	r = space_list(NULL, NULL, 0, CM_OK);
	cr_assert_eq(r->n_spaces, 3);
	/* Newest first. */
	cr_assert_str_eq(r->spaces[0].space_id, c);
	cr_assert_str_eq(r->spaces[1].space_id, b);
	cr_assert_str_eq(r->spaces[2].space_id, a);

	r = space_list("idle", NULL, 0, CM_OK);
	cr_assert_eq(r->n_spaces, 2);
	r = space_list("closed", NULL, 0, CM_OK);
	cr_assert_eq(r->n_spaces, 1);
	cr_assert_str_eq(r->spaces[0].space_id, c);
	r = space_list(NULL, fx.member, 0, CM_OK);
	cr_assert_eq(r->n_spaces, 1);
	cr_assert_str_eq(r->spaces[0].space_id, b);
	r = space_list("closed", fx.member, 0, CM_OK);
	cr_assert_eq(r->n_spaces, 0);
	space_list("open", NULL, 0, CM_E_INVALID_REQUEST);

	/* Another workspace sees none of them. */
	fx_req(&fx, &q, PR_OP_SPACE_LIST);
	q.workspace_id = fx.ws2;
	cr_assert_eq(FX_CALL(&fx, &q, CM_OK)->n_spaces, 0);
}

Test(space, list_limit_bounds)
{
	/* 25 Spaces, one after another on the same instance. */
	for (int i = 0; i < 25; i++) {
		fx_mark_closed(&fx, fx_space(&fx, 0));
		fx_advance(&fx, 1);
	}
	cr_assert_eq(
	    space_list(NULL, NULL, 0, CM_OK)->n_spaces, CM_LIST_LIMIT_DEFAULT);
	cr_assert_eq(space_list(NULL, NULL, 1, CM_OK)->n_spaces, 1);
	cr_assert_eq(space_list(NULL, NULL, 100, CM_OK)->n_spaces, 25);
	space_list(NULL, NULL, 101, CM_E_INVALID_REQUEST);
	space_list(NULL, NULL, -1, CM_E_INVALID_REQUEST);
}

/*
 * Pages after the last row of the one before cover the list once, in
 * its order, Spaces created in the same millisecond among them; a cursor
 * that names no Space of the workspace is refused, never an empty page.
 */
Test(space, pages_after_a_cursor_cover_the_list_once)
{
	const struct pr_rep *all, *r;
	const char *after = NULL;
	struct pr_req q;
	size_t seen = 0;

	for (int i = 0; i < 25; i++) {
		fx_mark_closed(&fx, fx_space(&fx, 0));
		if (i % 3 == 0)
			fx_advance(&fx, 1); /* the others share a created_at */
	}
	all = space_list(NULL, NULL, 100, CM_OK);
	cr_assert_eq(all->n_spaces, 25);
	do {
		r = space_page(NULL, NULL, 7, after, CM_OK);
		for (size_t i = 0; i < r->n_spaces; i++, seen++) {
			cr_assert_lt(seen, 25);
			cr_assert_str_eq(r->spaces[i].space_id,
			    all->spaces[seen].space_id, "row %zu", seen);
		}
		if (r->n_spaces > 0)
			after = r->spaces[r->n_spaces - 1].space_id;
	} while (r->n_spaces == 7);
	cr_assert_eq(seen, 25);
	/* Past the last row: the end, an empty page. */
	cr_assert_eq(space_page(NULL, NULL, 7, all->spaces[24].space_id, CM_OK)
	                 ->n_spaces,
	    0);
	/* The filters hold past a cursor too. */
	cr_assert_eq(
	    space_page("idle", NULL, 100, all->spaces[0].space_id, CM_OK)
	        ->n_spaces,
	    0);
	space_page(NULL, NULL, 7, "no-such-space", CM_E_INVALID_REQUEST);
	/* Another workspace's Space is no cursor of this one's list. */
	fx_req(&fx, &q, PR_OP_SPACE_LIST);
	q.workspace_id = fx.ws2;
	q.after_id = all->spaces[3].space_id;
	FX_CALL(&fx, &q, CM_E_INVALID_REQUEST);
}

/* ---- close, mark_closed, mark_error
 * -------------------------------------------------- */

Test(space, close_of_an_idle_space_blocks_new_tasks)
{
	const char *sp = fx_space(&fx, 0);
	struct pr_rep *r;
	size_t pubs = fx.n_pubs;

	fx_advance(&fx, 50);
	fx.pub_check_commit = true;
	r = fx_close(&fx, sp);
	/* The actor is woken by a notice, which is not a log event. */
	cr_assert_eq(fx.n_pubs, pubs + 1);
	cr_assert(fx_is_notice(&fx.pubs[pubs]));
	cr_assert_str_eq(fx.pubs[pubs].ev.kind, "close_requested");
	cr_assert_str_eq(fx.pubs[pubs].ev.space_id, sp);
	cr_assert(fx.pubs[pubs].visible, "notice published before its commit");
	cr_assert_eq(r->n_spaces, 1);
	cr_assert(r->spaces[0].close_requested);
	/* Not closed until the actor has torn the browser down. */
	cr_assert_str_eq(r->spaces[0].status, "idle");
	cr_assert_eq(r->spaces[0].closed_at, 0);
	cr_assert_eq(r->spaces[0].revision, 2);
	cr_assert_eq(r->spaces[0].updated_at, FX_T0 + 50);

	FX_SUBMIT(&fx, sp, "after-close", "noop", "{}", CM_E_SPACE_CLOSED);
	cr_assert_eq(fx_count_tasks(&fx, sp), 0);
	/* A second close changes nothing and wakes no one. */
	r = fx_close(&fx, sp);
	cr_assert_eq(r->spaces[0].revision, 2);
	cr_assert_eq(fx.n_pubs, pubs + 1);

	fx_advance(&fx, 50);
	r = fx_mark_closed(&fx, sp);
	cr_assert_str_eq(r->spaces[0].status, "closed");
	cr_assert_eq(r->spaces[0].closed_at, FX_T0 + 100);
	FX_SUBMIT(&fx, sp, "after-closed", "noop", "{}", CM_E_SPACE_CLOSED);
	/* mark_closed twice: one space_closed. */
	fx_mark_closed(&fx, sp);
	FX_LOG(&fx, sp, "space_opened", "space_closed");
}

Test(space, close_cancels_a_queued_task)
{
	const char *sp = fx_space(&fx, 0), *task;
	struct pr_rep *r;

	task = fx_task(&fx, sp, "r1");
	r = fx_close(&fx, sp);
	cr_assert_eq(r->n_tasks, 0, "the queued task is still active");
	r = fx_task_get(&fx, sp, task);
	cr_assert_str_eq(r->tasks[0].status, "cancelled");
	cr_assert(r->tasks[0].cancel_requested);
	cr_assert_eq(r->tasks[0].finished_at, FX_T0);
	FX_LOG(
	    &fx, sp, "space_opened", "queued", "cancel_requested", "cancelled");
	fx_mark_closed(&fx, sp);
	FX_LOG(&fx, sp, "space_opened", "queued", "cancel_requested",
	    "cancelled", "space_closed");
}

Test(space, close_of_a_running_task_goes_through_cancel)
{
	const char *sp = fx_space(&fx, 0), *task;
	struct pr_rep *r;

	task = fx_task(&fx, sp, "r1");
	fx_claim(&fx, sp, "actor-1");
	r = fx_close(&fx, sp);
	cr_assert_eq(r->n_tasks, 1);
	cr_assert_str_eq(r->tasks[0].status, "running");
	cr_assert(r->tasks[0].cancel_requested);
	FX_FINISH(&fx, task, "actor-1", "cancelled", NULL, NULL, CM_OK);
	fx_mark_closed(&fx, sp);
	FX_LOG(&fx, sp, "space_opened", "queued", "started", "cancel_requested",
	    "cancelled", "space_closed");
	cr_assert_str_eq(
	    fx_task_get(&fx, sp, task)->tasks[0].status, "cancelled");
}

Test(space, mark_closed_ends_a_task_the_teardown_interrupted)
{
	const char *sp = fx_space(&fx, 0), *task;

	task = fx_task(&fx, sp, "r1");
	fx_claim(&fx, sp, "actor-1");
	fx_close(&fx, sp);
	fx_mark_closed(&fx, sp);
	cr_assert_str_eq(
	    fx_task_get(&fx, sp, task)->tasks[0].status, "cancelled");
	FX_LOG(&fx, sp, "space_opened", "queued", "started", "cancel_requested",
	    "cancelled", "space_closed");
}

static struct pr_rep *
mark_error(const char *sp, const char *code, enum cm_err want)
{
	struct pr_req q;

	fx_req(&fx, &q, PR_OP_SPACE_MARK_ERROR);
	q.space_id = sp;
	q.error_code = code;
	q.error_message = "the browser will not relaunch";
	return FX_CALL(&fx, &q, want);
}

Test(space, mark_error_makes_the_space_unusable)
{
	const char *sp = fx_space(&fx, 0), *task;
	struct pr_rep *r;

	task = fx_task(&fx, sp, "r1");
	fx_claim(&fx, sp, "actor-1");
	r = mark_error(sp, "actor_crash_loop", CM_OK);
	cr_assert_str_eq(r->spaces[0].status, "error");
	cr_assert_str_eq(r->spaces[0].last_error_code, "actor_crash_loop");
	r = fx_task_get(&fx, sp, task);
	cr_assert_str_eq(r->tasks[0].status, "failed");
	cr_assert_str_eq(r->tasks[0].error_code, "actor_crash_loop");

	FX_SUBMIT(&fx, sp, "r2", "noop", "{}", CM_E_SPACE_UNUSABLE);
	cr_assert_eq(fx_count_tasks(&fx, sp), 1);
	/* Still reserved; a second mark_error writes nothing. */
	cr_assert_eq(fx_count_open_spaces(&fx, fx.inst[0]), 1);
	mark_error(sp, "actor_crash_loop", CM_OK);
	FX_LOG(&fx, sp, "space_opened", "queued", "started", "failed",
	    "space_error");
	/* An errored Space can still be closed, which frees the instance. */
	fx_close(&fx, sp);
	fx_mark_closed(&fx, sp);
	mark_error(sp, "late", CM_E_SPACE_CLOSED);
	fx_space(&fx, 0);
}

/* ---- events
 * ------------------------------------------------------------------------- */

static struct pr_rep *
event_list(const char *ws, const char *sp, int64_t after, int64_t limit,
    enum cm_err want)
{
	struct pr_req q;

	fx_req(&fx, &q, PR_OP_EVENT_LIST);
	q.workspace_id = ws;
	q.space_id = sp;
	q.after_sequence = after;
	q.limit = limit;
	return FX_CALL(&fx, &q, want);
}

Test(events, paging_after_sequence_and_limits)
{
	const char *sp = fx_space(&fx, 0);
	struct pr_rep *r;
	char rid[32];
	size_t n;

	/* 34 submit + cancel cycles: 1 + 34 * 3 = 103 events. */
	for (int i = 0; i < 34; i++) {
		snprintf(rid, sizeof(rid), "r%d", i);
		fx_task(&fx, sp, rid);
		FX_CANCEL(&fx, sp, NULL, CM_OK);
	}
	n = FX_LOG_LEN(&fx, sp);
	cr_assert_eq(n, 103);
	cr_assert_eq(
	    fx_check_log_at(&fx, fx.ws, sp, 7, NULL, 0, __FILE__, __LINE__),
	    103, "paging by 7 reads a different log");

	r = event_list(fx.ws, sp, 0, 0, CM_OK);
	cr_assert_eq(r->n_events, 100, "the default page is 100");
	cr_assert_eq(r->events[0].sequence, 1);
	cr_assert_eq(r->events[99].sequence, 100);
	r = event_list(fx.ws, sp, 0, 100, CM_OK);
	cr_assert_eq(r->n_events, 100);
	r = event_list(fx.ws, sp, 100, 100, CM_OK);
	cr_assert_eq(r->n_events, 3);
	cr_assert_eq(r->events[0].sequence, 101);
	cr_assert_eq(r->events[2].sequence, 103);
	cr_assert_str_eq(r->events[2].kind, "cancelled");
	r = event_list(fx.ws, sp, 50, 10, CM_OK);
	cr_assert_eq(r->n_events, 10);
	cr_assert_eq(r->events[0].sequence, 51);
	cr_assert_eq(r->events[9].sequence, 60);
	r = event_list(fx.ws, sp, 103, 0, CM_OK);
	cr_assert_eq(r->n_events, 0);
	r = event_list(fx.ws, sp, 5000, 0, CM_OK);
	cr_assert_eq(r->n_events, 0);

	event_list(fx.ws, sp, 0, 101, CM_E_INVALID_REQUEST);
	event_list(fx.ws, sp, 0, -1, CM_E_INVALID_REQUEST);
	event_list(fx.ws, sp, -1, 0, CM_E_INVALID_REQUEST);
	/* Another workspace, or an unknown Space, sees nothing. */
	event_list(fx.ws2, sp, 0, 0, CM_E_NOT_FOUND);
	event_list(fx.ws, "no-such-space", 0, 0, CM_E_NOT_FOUND);
}

Test(events, every_event_is_published_once_with_its_sequence)
{
	const char *a = fx_space(&fx, 0), *b = fx_space(&fx, 1), *task;
	size_t pubs = 0;
	int64_t next_a = 1, next_b = 1;
	struct pr_rep *r;

	task = fx_task(&fx, a, "r1");
	fx_task(&fx, b, "r1");
	fx_claim(&fx, a, "actor-a");
	FX_FINISH(&fx, task, "actor-a", "failed", NULL, "runtime_error", CM_OK);
	FX_CANCEL(&fx, b, NULL, CM_OK);
	fx_close(&fx, a);
	fx_mark_closed(&fx, a);

	/* Per Space, the published sequences are 1, 2, 3... in order. */
	for (size_t i = 0; i < fx.n_pubs; i++) {
		const struct pr_event *ev = &fx.pubs[i].ev;

		if (fx_is_notice(&fx.pubs[i]))
			continue;
		if (strcmp(ev->space_id, a) == 0)
			cr_assert_eq(ev->sequence, next_a++,
			    "a: published %s #%lld, want #%lld", ev->kind,
			    (long long)ev->sequence, (long long)(next_a - 1));
		else if (strcmp(ev->space_id, b) == 0)
			cr_assert_eq(ev->sequence, next_b++,
			    "b: published %s #%lld, want #%lld", ev->kind,
			    (long long)ev->sequence, (long long)(next_b - 1));
		else
			continue;
		cr_assert_str_eq(ev->workspace_id, fx.ws);
		pubs++;
	}
	cr_assert_eq(
	    next_a - 1, (int64_t)FX_LOG(&fx, a, "space_opened", "queued",
	                    "started", "failed", "space_closed"));
	cr_assert_eq(
	    next_b - 1, (int64_t)FX_LOG(&fx, b, "space_opened", "queued",
	                    "cancel_requested", "cancelled"));
	cr_assert_eq(pubs, 9);
	/* Besides the log, one wake-up notice: a's close. */
	cr_assert_eq(fx_pubs_count(&fx, 0, a, true), 1);
	cr_assert_eq(fx_pubs_count(&fx, 0, b, true), 0);

	/* The failed event says why; the stored log matches what was sent. */
	r = event_list(fx.ws, a, 3, 1, CM_OK);
	cr_assert_str_eq(r->events[0].kind, "failed");
	cr_assert_str_eq(r->events[0].task_id, task);
	cr_assert(strstr(r->events[0].payload, "runtime_error") != NULL,
	    "failed payload: %s", r->events[0].payload);
}

/* ---- page events
 * ------------------------------------------------------------------ */

/* space.page_event of kind with payload, during task (NULL: none). */
static struct pr_rep *
page_event(const char *sp, const char *task, const char *kind,
    const char *payload, enum cm_err want)
{
	struct pr_req q;

	fx_req(&fx, &q, PR_OP_SPACE_PAGE_EVENT);
	q.space_id = sp;
	q.task_id = task;
	q.kind = kind;
	q.payload = payload;
	return FX_CALL(&fx, &q, want);
}

/* The Space's event at seq, read back through event.list. */
static const struct pr_event *
event_at(const char *sp, int64_t seq)
{
	struct pr_rep *r = event_list(fx.ws, sp, seq - 1, 1, CM_OK);

	cr_assert_eq(r->n_events, 1, "no event #%lld", (long long)seq);
	return &r->events[0];
}

#define ALERT "{\"type\":\"alert\",\"message\":\"Saved\",\"accepted\":false}"

Test(events, page_events_go_with_the_task_they_happened_in)
{
	const char *sp = fx_space(&fx, 0), *task;
	const struct pr_event *ev;
	size_t pubs;

	/* Between tasks: with no task. */
	page_event(sp, NULL, "tab_opened",
	    "{\"url\":\"http://127.0.0.1/next\",\"closed\":false}", CM_OK);
	task = fx_task(&fx, sp, "r1");
	/* A queued task has not started: the event is none of its. */
	page_event(sp, task, "download",
	    "{\"name\":\"report.txt\",\"state\":\"in_progress\",\"bytes\":0}",
	    CM_OK);
	fx_claim(&fx, sp, "actor-1");
	pubs = fx.n_pubs;
	page_event(sp, task, "dialog", ALERT, CM_OK);
	cr_assert_eq(fx_pubs_count(&fx, pubs, sp, false), 1,
	    "the event was not published once");
	page_event(sp, task, "download",
	    "{\"name\":\"report.txt\",\"state\":\"completed\",\"bytes\":18}",
	    CM_OK);
	FX_FINISH(&fx, task, "actor-1", "completed", NULL, NULL, CM_OK);
	/* After its end, a task's name no longer places an event. */
	page_event(sp, task, "dialog",
	    "{\"type\":\"prompt\",\"message\":\"Name?\",\"accepted\":false,"
	    "\"default_prompt\":\"Ann\"}",
	    CM_OK);
	FX_LOG(&fx, sp, "space_opened", "tab_opened", "queued", "download",
	    "started", "dialog", "download", "completed", "dialog");

	ev = event_at(sp, 2);
	cr_assert_null(ev->task_id);
	cr_assert_str_eq(ev->payload,
	    "{\"url\":\"http://127.0.0.1/next\",\"closed\":false}");
	cr_assert_null(event_at(sp, 4)->task_id, "a queued task's event");
	ev = event_at(sp, 6);
	cr_assert_str_eq(ev->task_id, task);
	cr_assert_str_eq(ev->payload, ALERT);
	cr_assert_str_eq(event_at(sp, 7)->task_id, task);
	cr_assert_null(event_at(sp, 9)->task_id, "an ended task's event");
	cr_assert(
	    strstr(event_at(sp, 9)->payload, "\"default_prompt\":\"Ann\""));
}

Test(events, a_page_event_of_another_kind_or_shape_is_refused)
{
	static const char *const bad_kinds[] = {"started", "completed",
	    "network_blocked", "space_error", "close_requested", "exploded",
	    ""};
	static const char *const bad[][2] = {
	    /* Not an object, or not JSON. */
	    {"dialog", "[]"},
	    {"dialog", "\"alert\""},
	    {"dialog", "{\"type\":\"alert\""},
	    {"dialog", "{\"type\":\"alert\",\"type\":\"alert\","
	               "\"message\":\"m\",\"accepted\":false}"},
	    /* A dialog's members, each missing or of the wrong kind. */
	    {"dialog", "{\"message\":\"m\",\"accepted\":false}"},
	    {"dialog", "{\"type\":\"toast\",\"message\":\"m\",\"accepted\":0}"},
	    {"dialog", "{\"type\":\"alert\",\"accepted\":false}"},
	    {"dialog", "{\"type\":\"alert\",\"message\":1,\"accepted\":false}"},
	    {"dialog", "{\"type\":\"alert\",\"message\":\"m\"}"},
	    {"dialog", "{\"type\":\"alert\",\"message\":\"m\",\"accepted\":1}"},
	    {"dialog", "{\"type\":\"alert\",\"message\":\"m\","
	               "\"accepted\":false,\"url\":\"x\"}"},
	    /* Only a prompt has a default. */
	    {"dialog", "{\"type\":\"alert\",\"message\":\"m\","
	               "\"accepted\":false,\"default_prompt\":\"d\"}"},
	    {"dialog", "{\"type\":\"prompt\",\"message\":\"m\","
	               "\"accepted\":false,\"default_prompt\":null}"},
	    /* A tab's. */
	    {"tab_opened", "{\"url\":\"http://x/\"}"},
	    {"tab_opened", "{\"closed\":false}"},
	    {"tab_opened", "{\"url\":null,\"closed\":false}"},
	    {"tab_opened", "{\"url\":\"http://x/\",\"closed\":\"no\"}"},
	    {"tab_opened", ALERT},
	    /* A download's: a name with no path, a state, bytes. */
	    {"download", "{\"name\":\"a/b.txt\",\"state\":\"completed\","
	                 "\"bytes\":1}"},
	    {"download", "{\"name\":\"a\\\\b.txt\",\"state\":\"completed\","
	                 "\"bytes\":1}"},
	    {"download", "{\"name\":\"a.txt\",\"state\":\"inProgress\","
	                 "\"bytes\":1}"},
	    {"download", "{\"name\":\"a.txt\",\"state\":\"completed\","
	                 "\"bytes\":-1}"},
	    {"download", "{\"name\":\"a.txt\",\"state\":\"completed\","
	                 "\"bytes\":1.5}"},
	    {"download", "{\"name\":\"a.txt\",\"state\":\"completed\"}"},
	};
	const char *sp = fx_space(&fx, 0);

	for (size_t i = 0; i < sizeof(bad_kinds) / sizeof(bad_kinds[0]); i++)
		page_event(sp, NULL, bad_kinds[i], ALERT, CM_E_INVALID_REQUEST);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		page_event(
		    sp, NULL, bad[i][0], bad[i][1], CM_E_INVALID_REQUEST);
	page_event("no-such-space", NULL, "dialog", ALERT, CM_E_NOT_FOUND);
	FX_LOG(&fx, sp, "space_opened");
}

/* A payload of kind whose string member key is n bytes of 'x'. */
static char *
payload_with(const char *kind, const char *key, size_t n)
{
	char *s = malloc(n + 1), *out;
	json_t *o;

	cr_assert_not_null(s);
	memset(s, 'x', n);
	s[n] = '\0';
	if (strcmp(kind, "dialog") == 0)
		o = json_pack("{s:s, s:s, s:b}", "type", "prompt", "message",
		    "m", "accepted", 0);
	else if (strcmp(kind, "tab_opened") == 0)
		o = json_pack("{s:s, s:b}", "url", "u", "closed", 1);
	else
		o = json_pack("{s:s, s:s, s:i}", "name", "n", "state",
		    "canceled", "bytes", 0);
	json_object_set_new(o, key, json_string(s));
	out = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	free(s);
	return out;
}

Test(events, a_page_events_strings_are_bounded)
{
	static const struct {
		const char *kind, *key;
		size_t max;
	} fields[] = {
	    {"dialog", "message", CM_DIALOG_MESSAGE_MAX},
	    {"dialog", "default_prompt", CM_DIALOG_MESSAGE_MAX},
	    {"tab_opened", "url", CM_URL_MAX},
	    {"download", "name", CM_DOWNLOAD_NAME_MAX},
	};
	const char *sp = fx_space(&fx, 0);
	size_t n = 1;
	char *p;

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		p = payload_with(fields[i].kind, fields[i].key, fields[i].max);
		page_event(sp, NULL, fields[i].kind, p, CM_OK);
		free(p);
		n++;
		p = payload_with(
		    fields[i].kind, fields[i].key, fields[i].max + 1);
		page_event(sp, NULL, fields[i].kind, p, CM_E_INVALID_REQUEST);
		free(p);
	}
	cr_assert_eq(FX_LOG_LEN(&fx, sp), n);
	/* Bytes, not characters: a message of 250 two-byte characters is at
	 * its bound, one more is over it. */
	for (size_t chars = CM_DIALOG_MESSAGE_MAX / 2;
	     chars <= CM_DIALOG_MESSAGE_MAX / 2 + 1; chars++) {
		char *m = malloc(2 * chars + 1), *text;
		json_t *o;

		cr_assert_not_null(m);
		for (size_t i = 0; i < chars; i++)
			memcpy(m + 2 * i, "\xc3\xa9", 2);
		m[2 * chars] = '\0';
		o = json_pack("{s:s, s:s, s:b}", "type", "confirm", "message",
		    m, "accepted", 0);
		text = json_dumps(o, JSON_COMPACT);
		page_event(sp, NULL, "dialog", text,
		    chars == CM_DIALOG_MESSAGE_MAX / 2 ? CM_OK
		                                       : CM_E_INVALID_REQUEST);
		free(text);
		json_decref(o);
		free(m);
	}
	cr_assert_eq(FX_LOG_LEN(&fx, sp), n + 1);
}

Test(events, a_closed_space_takes_no_page_event)
{
	const char *sp = fx_space(&fx, 0);

	fx_mark_closed(&fx, sp);
	page_event(sp, NULL, "dialog", ALERT, CM_OK);
	FX_LOG(&fx, sp, "space_opened", "space_closed");
}

Test(events, a_page_event_sent_again_is_recorded_once)
{
	const char *sp = fx_space(&fx, 0);
	struct pr_req q;

	fx_req(&fx, &q, PR_OP_SPACE_PAGE_EVENT);
	q.space_id = sp;
	q.kind = "dialog";
	q.payload = ALERT;
	FX_CALL(&fx, &q, CM_OK);
	FX_CALL(&fx, &q, CM_OK);
	FX_LOG(&fx, sp, "space_opened", "dialog");
}
