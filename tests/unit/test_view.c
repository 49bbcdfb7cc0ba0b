/*
 * api/view: when the api answers a Space's detail from its view and when
 * it asks the store.  Each case drives the view as the api does (a read
 * through api_view_get and api_view_after, the feed through
 * api_view_event and api_view_beat) with replies made here, and checks
 * that no answer is served that could be older than what a client was
 * shown: after a write, an event, a lost serial, a beat that disagrees, a
 * fill that raced an event, a list that showed the Space newer, and a
 * feed that fell silent; and that it is off on a shared database.  A
 * body kept with an answer (api_view_keep_body) is served only with
 * that answer, and goes when it goes.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "clock.h"
#include "config.h"
#include "limits.h"
#include "view.h"

#define WS "01a2508b-0a30-722b-83ac-71b7e6987388"
#define SP "01a2508b-0a45-7720-b14b-43d1759c6d0e"
#define SP2 "01a2508b-0a45-7720-b14b-43d1759c6d0f"

static struct cm_config cfg;

static void
setup(void)
{
	memset(&cfg, 0, sizeof(cfg));
	api_view_start(&cfg);
}

static void
teardown(void)
{
	api_view_stop();
}

TestSuite(view, .init = setup, .fini = teardown);

static struct pr_req
get_of(const char *space)
{
	struct pr_req q;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SPACE_GET;
	q.workspace_id = WS;
	q.space_id = space;
	return q;
}

/* The store's answer to a space.get of space at revision rev, read when
 * the feed's serial was serial. */
static struct pr_rep
answer(const char *space, int64_t rev, int64_t serial)
{
	static struct pr_space sp[8];
	static int k;
	struct pr_rep r;

	memset(&r, 0, sizeof(r));
	memset(&sp[k % 8], 0, sizeof(sp[0]));
	sp[k % 8].space_id = space;
	sp[k % 8].workspace_id = WS;
	sp[k % 8].status = "idle";
	sp[k % 8].revision = rev;
	r.err = CM_OK;
	r.feed_serial = serial;
	r.spaces = &sp[k++ % 8];
	r.n_spaces = 1;
	return r;
}

/* A read as api_call makes it: the view's answer, or else r (the
 * store's) filling it.  Returns the revision answered and whether the
 * view answered. */
static int64_t
read_space(const char *space, const struct pr_rep *store, bool *hit)
{
	struct pr_req q = get_of(space);
	struct api_view_ticket t;
	struct pr_rep got;
	int64_t rev;

	*hit = api_view_get(&q, &got, &t);
	if (*hit) {
		cr_assert_eq(got.n_spaces, 1);
		cr_assert_str_eq(got.spaces[0].space_id, space);
		rev = got.spaces[0].revision;
		pr_rep_free(&got);
		return rev;
	}
	api_view_after(&q, store, &t);
	return store->spaces[0].revision;
}

/* The feed has delivered serials 1..n, the last of them beaten. */
static void
feed_to(int64_t n)
{
	api_view_beat(n);
}

static void
assert_hit(const char *space, int64_t rev)
{
	struct pr_rep none = answer(space, -1, 1);
	bool hit;
	int64_t got = read_space(space, &none, &hit);

	cr_assert(hit, "the view did not answer %s", space);
	cr_assert_eq(got, rev, "the view answered revision %lld, not %lld",
	    (long long)got, (long long)rev);
}

static void
assert_miss(const char *space)
{
	struct pr_req q = get_of(space);
	struct api_view_ticket t;
	struct pr_rep got;

	cr_assert_not(api_view_get(&q, &got, &t),
	    "the view answered %s (revision %lld)", space,
	    (long long)got.spaces[0].revision);
}

Test(view, a_fill_is_served_once_the_feed_has_reached_its_read)
{
	struct pr_rep r = answer(SP, 3, 10);
	bool hit;

	feed_to(9);
	read_space(SP, &r, &hit);
	cr_assert_not(hit);
	/* The feed has not delivered serial 10 yet: the store's answer may
	 * be newer than what a stream of this api has shown. */
	assert_miss(SP);
	api_view_event(WS, SP2, 10);
	assert_hit(SP, 3);
	assert_hit(SP, 3);
}

Test(view, an_event_of_the_space_drops_it_and_not_the_others)
{
	struct pr_rep a = answer(SP, 3, 5), b = answer(SP2, 7, 5);
	bool hit;

	feed_to(5);
	read_space(SP, &a, &hit);
	read_space(SP2, &b, &hit);
	assert_hit(SP, 3);
	assert_hit(SP2, 7);
	api_view_event(WS, SP, 6);
	assert_miss(SP);
	assert_hit(SP2, 7);
}

Test(view, any_other_call_about_the_space_drops_it)
{
	static const enum pr_op ops[] = {PR_OP_TASK_SUBMIT, PR_OP_TASK_GET,
	    PR_OP_EVENT_LIST, PR_OP_SPACE_CLOSE, PR_OP_SPACE_TAKEOVER};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct pr_rep r = answer(SP, 3, 5), ok;
		struct pr_req q = get_of(SP);
		bool hit;

		feed_to(5);
		read_space(SP, &r, &hit);
		assert_hit(SP, 3);
		memset(&ok, 0, sizeof(ok));
		q.op = ops[i];
		api_view_after(&q, &ok, NULL);
		assert_miss(SP);
	}
}

Test(view, a_call_that_got_no_answer_drops_the_space)
{
	struct pr_rep r = answer(SP, 3, 5);
	struct pr_req q = get_of(SP);
	bool hit;

	feed_to(5);
	read_space(SP, &r, &hit);
	q.op = PR_OP_TASK_SUBMIT;
	api_view_after(&q, NULL, NULL); /* timed out: it may have happened */
	assert_miss(SP);
}

Test(view, a_write_that_names_no_space_drops_them_all)
{
	struct pr_rep r = answer(SP, 3, 5), ok;
	struct pr_req q;
	bool hit;

	feed_to(5);
	read_space(SP, &r, &hit);
	memset(&q, 0, sizeof(q));
	memset(&ok, 0, sizeof(ok));
	q.op = PR_OP_MEMBER_REMOVE;
	q.workspace_id = WS;
	api_view_after(&q, &ok, NULL);
	assert_miss(SP);
	/* A read that names no Space changes nothing. */
	read_space(SP, &r, &hit);
	q.op = PR_OP_WORKSPACE_LIST;
	api_view_after(&q, &ok, NULL);
	assert_hit(SP, 3);
}

Test(view, a_list_showing_the_space_newer_drops_it)
{
	struct pr_rep r = answer(SP, 3, 5), b = answer(SP2, 7, 5);
	struct pr_rep list = answer(SP, 4, 0);
	struct pr_req q;
	bool hit;

	feed_to(5);
	read_space(SP, &r, &hit);
	read_space(SP2, &b, &hit);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SPACE_LIST;
	q.workspace_id = WS;
	api_view_after(&q, &list, NULL);
	assert_miss(SP);
	assert_hit(SP2, 7);
}

Test(view, a_fill_that_raced_an_event_is_not_kept)
{
	struct pr_req q = get_of(SP);
	struct pr_rep r = answer(SP, 3, 5), got;
	struct api_view_ticket t;

	feed_to(5);
	cr_assert_not(api_view_get(&q, &got, &t));
	/* While the store was asked, the feed brought an event of it. */
	api_view_event(WS, SP, 6);
	api_view_after(&q, &r, &t);
	assert_miss(SP);
}

Test(view, a_fill_that_raced_a_loss_is_not_kept)
{
	struct pr_req q = get_of(SP);
	struct pr_rep r = answer(SP, 3, 5), got;
	struct api_view_ticket t;

	feed_to(5);
	cr_assert_not(api_view_get(&q, &got, &t));
	api_view_lose();
	feed_to(5);
	api_view_after(&q, &r, &t);
	assert_miss(SP);
}

Test(view, a_skipped_serial_empties_the_view)
{
	struct pr_rep r = answer(SP, 3, 5);
	bool hit;

	feed_to(5);
	read_space(SP, &r, &hit);
	assert_hit(SP, 3);
	api_view_event(WS, SP2, 7); /* 6 was lost: it may have been SP's */
	assert_miss(SP);
}

Test(view, a_beat_past_the_last_serial_empties_the_view)
{
	struct pr_rep r = answer(SP, 3, 5);
	bool hit;

	feed_to(5);
	read_space(SP, &r, &hit);
	api_view_beat(5);
	assert_hit(SP, 3);
	/* The last event, 6, never came, and nothing followed it. */
	api_view_beat(6);
	assert_miss(SP);
}

Test(view, a_pipe_come_or_gone_empties_the_view)
{
	struct pr_rep r = answer(SP, 3, 5);
	bool hit;

	feed_to(5);
	read_space(SP, &r, &hit);
	api_view_lose();
	feed_to(5);
	assert_miss(SP);
}

Test(view, a_silent_feed_serves_nothing)
{
	struct pr_rep r = answer(SP, 3, 5);
	struct pr_req q = get_of(SP);
	struct api_view_ticket t;
	struct pr_rep got;
	int64_t t0, waited;
	bool hit;

	feed_to(5);
	t0 = cm_mono_ms();
	read_space(SP, &r, &hit);
	assert_hit(SP, 3);
	/* No beat: the view stops answering once the feed has been silent
	 * for CM_API_VIEW_QUIET_MS, and not before. */
	while ((hit = api_view_get(&q, &got, &t)) &&
	       cm_mono_ms() - t0 < 10 * CM_API_VIEW_QUIET_MS)
		pr_rep_free(&got);
	waited = cm_mono_ms() - t0;
	cr_assert_not(hit, "still answered after %lld ms", (long long)waited);
	cr_assert_geq(waited, CM_API_VIEW_QUIET_MS);
	feed_to(5);
	assert_hit(SP, 3);
}

Test(view, another_workspace_or_an_error_is_never_answered)
{
	struct pr_rep r = answer(SP, 3, 5), err;
	struct pr_req q = get_of(SP);
	struct api_view_ticket t;
	struct pr_rep got;
	bool hit;

	feed_to(5);
	read_space(SP, &r, &hit);
	q.workspace_id = "01a2508b-0a30-722b-83ac-71b7e6987389";
	cr_assert_not(api_view_get(&q, &got, &t));
	memset(&err, 0, sizeof(err));
	err.err = CM_E_NOT_FOUND;
	q = get_of(SP2);
	cr_assert_not(api_view_get(&q, &got, &t));
	api_view_after(&q, &err, &t);
	assert_miss(SP2);
}

Test(view, a_shared_database_turns_it_off)
{
	struct pr_rep r = answer(SP, 3, 5);
	bool hit;

	api_view_stop();
	snprintf(cfg.postgres_dsn, sizeof(cfg.postgres_dsn), "host=/tmp");
	api_view_start(&cfg);
	feed_to(5);
	read_space(SP, &r, &hit);
	assert_miss(SP);
}

Test(view, the_counts_say_what_happened)
{
	struct pr_rep r = answer(SP, 3, 5);
	struct api_view_counts n;
	bool hit;

	feed_to(5);
	read_space(SP, &r, &hit);
	assert_hit(SP, 3);
	api_view_beat(9);
	api_view_counts(&n);
	cr_assert_eq(n.hits, 1);
	cr_assert_eq(n.misses, 1);
	cr_assert_eq(n.losses, 1, "the first beat is no loss; 9 is");
	cr_assert_eq(n.beats, 2);
}

#define WS2 "01a2508b-0a30-722b-83ac-71b7e6987390"

static struct pr_req
list_of(const char *ws, const char *owner, const char *status)
{
	struct pr_req q;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SPACE_LIST;
	q.workspace_id = ws;
	q.owner_id = owner;
	q.status = status;
	q.limit = 100;
	return q;
}

/* A list answer of n Spaces (SP, SP2) at revision rev. */
static struct pr_rep
list_answer(size_t n, int64_t rev, int64_t serial)
{
	static struct pr_space sp[2];
	struct pr_rep r;

	memset(&r, 0, sizeof(r));
	memset(sp, 0, sizeof(sp));
	for (size_t i = 0; i < 2; i++) {
		sp[i].space_id = i == 0 ? SP : SP2;
		sp[i].workspace_id = WS;
		sp[i].status = "idle";
		sp[i].revision = rev;
	}
	r.err = CM_OK;
	r.feed_serial = serial;
	r.spaces = sp;
	r.n_spaces = n;
	return r;
}

/* A list read as api_call makes it; returns how many Spaces it had, or
 * -1 when the view did not answer (the store's r then fills it). */
static long
read_list(const struct pr_req *q, const struct pr_rep *store)
{
	struct api_view_ticket t;
	struct pr_rep got;
	long n;

	if (api_view_get(q, &got, &t)) {
		n = (long)got.n_spaces;
		pr_rep_free(&got);
		return n;
	}
	api_view_after(q, store, &t);
	return -1;
}

Test(view, a_list_is_served_until_its_workspace_changes)
{
	struct pr_req q = list_of(WS, NULL, NULL),
	              other = list_of(WS2, NULL, NULL);
	struct pr_rep r = list_answer(2, 3, 5), r2 = list_answer(0, 3, 5);

	feed_to(5);
	cr_assert_eq(read_list(&q, &r), -1);
	cr_assert_eq(read_list(&q, &r), 2);
	cr_assert_eq(read_list(&other, &r2), -1);
	cr_assert_eq(read_list(&other, &r2), 0);
	/* An event of any Space of WS, SP2's too, and only WS's lists. */
	api_view_event(WS, SP2, 6);
	cr_assert_eq(read_list(&q, &r), -1);
	cr_assert_eq(read_list(&other, &r2), 0);
	r.feed_serial = 6;
	cr_assert_eq(read_list(&q, &r), 2);
	/* A call of this api about a Space of WS. */
	{
		struct pr_req w = get_of(SP);
		struct pr_rep ok;

		memset(&ok, 0, sizeof(ok));
		w.op = PR_OP_TASK_SUBMIT;
		api_view_after(&w, &ok, NULL);
	}
	cr_assert_eq(read_list(&q, &r), -1);
}

Test(view, each_filter_is_its_own_list)
{
	struct pr_req all = list_of(WS, NULL, NULL),
	              mine = list_of(WS, "owner-a", NULL),
	              idle = list_of(WS, "owner-a", "idle"),
	              /* Lengths are in the key: no owner and status pair
	               * spells another's. */
	    tricky = list_of(WS, "owner-a5:idle", NULL);
	struct pr_rep two = list_answer(2, 3, 5), one = list_answer(1, 3, 5),
	              none = list_answer(0, 3, 5);

	feed_to(5);
	cr_assert_eq(read_list(&all, &two), -1);
	cr_assert_eq(read_list(&mine, &one), -1);
	cr_assert_eq(read_list(&idle, &none), -1);
	cr_assert_eq(read_list(&all, &two), 2);
	cr_assert_eq(read_list(&mine, &one), 1);
	cr_assert_eq(read_list(&idle, &none), 0);
	cr_assert_eq(read_list(&tricky, &two), -1);
	all.limit = 1;
	cr_assert_eq(read_list(&all, &one), -1, "another limit, another list");
}

Test(view, a_list_that_raced_an_event_of_its_workspace_is_not_kept)
{
	struct pr_req q = list_of(WS, NULL, NULL);
	struct pr_rep r = list_answer(2, 3, 5), got;
	struct api_view_ticket t;

	feed_to(5);
	cr_assert_not(api_view_get(&q, &got, &t));
	api_view_event(WS, SP, 6);
	api_view_after(&q, &r, &t);
	r.feed_serial = 6;
	cr_assert_eq(read_list(&q, &r), -1);
}

Test(view, an_older_fill_never_replaces_a_newer_one)
{
	struct pr_req q = get_of(SP);
	struct pr_rep old = answer(SP, 3, 5), newer = answer(SP, 4, 7), got;
	struct api_view_ticket slow, fast;

	feed_to(5);
	/* Two workers miss at once; the one that asked later (after a
	 * change whose event has not come yet) fills first. */
	cr_assert_not(api_view_get(&q, &got, &slow));
	cr_assert_not(api_view_get(&q, &got, &fast));
	api_view_after(&q, &newer, &fast);
	api_view_after(&q, &old, &slow);
	api_view_event(WS, SP2, 6);
	api_view_event(WS, SP2, 7);
	assert_hit(SP, 4);
}

/* A hit of space, its ticket into *t. */
static void
hit_of(const char *space, struct api_view_ticket *t)
{
	struct pr_req q = get_of(space);
	struct pr_rep got;

	cr_assert(
	    api_view_get(&q, &got, t), "the view did not answer %s", space);
	cr_assert_neq(t->fill, 0);
	pr_rep_free(&got);
}

/* The body kept with t's answer: its text, or NULL for none. */
static char *
kept(const struct api_view_ticket *t)
{
	size_t len;
	char *b = api_view_body(t, &len);

	if (b != NULL)
		cr_assert_eq(len, strlen(b));
	return b;
}

Test(view, a_body_is_kept_with_its_answer_and_goes_with_it)
{
	struct pr_rep r3 = answer(SP, 3, 5), r4 = answer(SP, 4, 6);
	struct api_view_ticket t, old;
	char *b;
	bool hit;

	feed_to(5);
	read_space(SP, &r3, &hit);
	hit_of(SP, &t);
	cr_assert_null(kept(&t), "a body nobody kept");
	api_view_keep_body(&t, "rev 3", 5);
	hit_of(SP, &t);
	cr_assert_str_eq(b = kept(&t), "rev 3");
	free(b);
	old = t;
	/* Its Space's event drops the answer, and its body with it. */
	api_view_event(WS, SP, 6);
	assert_miss(SP);
	cr_assert_null(kept(&old), "a body outlived its answer");
	/* A new answer in the same slot has none until one is kept, and the
	 * old ticket keeps nothing with it. */
	read_space(SP, &r4, &hit);
	cr_assert_not(hit);
	api_view_keep_body(&old, "rev 3", 5);
	hit_of(SP, &t);
	cr_assert_neq(t.fill, old.fill);
	cr_assert_null(kept(&t), "the old answer's body came back");
	cr_assert_null(kept(&old));
	api_view_keep_body(&t, "rev 4", 5);
	cr_assert_str_eq(b = kept(&t), "rev 4");
	free(b);
	/* A loss empties the view: no body is served after it. */
	api_view_lose();
	cr_assert_null(kept(&t), "a body outlived a loss");
}

Test(view, a_look_that_misses_is_not_counted)
{
	struct pr_req q = get_of(SP);
	struct pr_rep r = answer(SP, 3, 5), got;
	struct api_view_ticket t;
	struct api_view_counts n;
	bool hit;

	feed_to(5);
	cr_assert_not(api_view_look(&q, &got, &t));
	api_view_counts(&n);
	cr_assert_eq(n.misses, 0);
	read_space(SP, &r, &hit);
	cr_assert(api_view_look(&q, &got, &t));
	cr_assert_eq(got.spaces[0].revision, 3);
	cr_assert_neq(t.fill, 0);
	pr_rep_free(&got);
	api_view_counts(&n);
	cr_assert_eq(n.misses, 1);
	cr_assert_eq(n.hits, 1);
}

Test(view, a_lists_body_goes_when_its_workspace_changes)
{
	struct pr_req q = list_of(WS, NULL, NULL);
	struct pr_rep r = list_answer(2, 3, 5), got;
	struct api_view_ticket t;
	char *b;

	feed_to(5);
	cr_assert_eq(read_list(&q, &r), -1);
	cr_assert(api_view_get(&q, &got, &t));
	pr_rep_free(&got);
	cr_assert(t.list);
	api_view_keep_body(&t, "two", 3);
	cr_assert(api_view_get(&q, &got, &t));
	pr_rep_free(&got);
	cr_assert_str_eq(b = kept(&t), "two");
	free(b);
	/* Any Space of the workspace: the list, and its body, are void. */
	api_view_event(WS, SP2, 6);
	cr_assert_null(kept(&t), "a list's body outlived its workspace's "
	                         "change");
	cr_assert_eq(read_list(&q, &r), -1);
}
