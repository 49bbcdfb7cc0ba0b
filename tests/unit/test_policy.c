/* Restart policy: pure maths, every boundary. */
#include <criterion/criterion.h>

#include "policy.h"

static enum sup_verdict
fail_at(const struct sup_policy *p, struct sup_history *h, int64_t t,
    int64_t *delay)
{
	return sup_policy_exit(p, h, t, false, 0, delay); /* killed */
}

Test(policy, permanent_backoff_doubles_to_five_seconds)
{
	struct sup_history h = {0};
	int64_t d;
	/* Failures spaced 11 s apart never accumulate in the 10 s window. */
	cr_assert_eq(fail_at(&sup_policy_permanent, &h, 0, &d), SUP_RESTART);
	cr_assert_eq(d, 100);
	cr_assert_eq(
	    fail_at(&sup_policy_permanent, &h, 11000, &d), SUP_RESTART);
	cr_assert_eq(d, 100, "an old failure must not raise the backoff");
}

Test(policy, permanent_gives_up_on_fifth_failure_in_ten_seconds)
{
	struct sup_history h = {0};
	const int64_t want[] = {100, 200, 400, 800};
	int64_t d;

	for (int i = 0; i < 4; i++) {
		cr_assert_eq(fail_at(&sup_policy_permanent, &h, i * 1000, &d),
		    SUP_RESTART, "failure %d", i + 1);
		cr_assert_eq(
		    d, want[i], "failure %d: delay %lld", i + 1, (long long)d);
	}
	cr_assert_eq(fail_at(&sup_policy_permanent, &h, 4000, &d), SUP_GIVE_UP);
}

Test(policy, permanent_window_edge)
{
	struct sup_history h = {0};
	int64_t d;

	for (int i = 0; i < 4; i++)
		cr_assert_eq(
		    fail_at(&sup_policy_permanent, &h, i, &d), SUP_RESTART);
	/* The first failure (t=0) is exactly 10 s old: out of the window. */
	cr_assert_eq(
	    fail_at(&sup_policy_permanent, &h, 10000, &d), SUP_RESTART);
	cr_assert_eq(sup_policy_recent(&sup_policy_permanent, &h, 10000), 4);
}

Test(policy, permanent_restarts_even_after_clean_exit)
{
	struct sup_history h = {0};
	int64_t d;

	cr_assert_eq(sup_policy_exit(&sup_policy_permanent, &h, 0, true, 0, &d),
	    SUP_RESTART);
	cr_assert_eq(d, 100);
}

Test(policy, backoff_caps_at_max)
{
	struct sup_policy p = sup_policy_permanent;
	struct sup_history h = {0};
	int64_t d = 0;

	p.max_failures = 12;
	for (int i = 0; i < 12; i++)
		cr_assert_eq(fail_at(&p, &h, i, &d), SUP_RESTART);
	cr_assert_eq(d, 5000);
}

Test(policy, actor_clean_exit_is_done)
{
	struct sup_history h = {0};
	int64_t d = -1;

	cr_assert_eq(
	    sup_policy_exit(&sup_policy_actor, &h, 0, true, 0, &d), SUP_DONE);
	cr_assert_eq(h.n, 0, "a clean exit is not a failure");
}

Test(policy, actor_first_crash_restarts_at_once_then_backs_off)
{
	struct sup_history h = {0};
	int64_t d;

	cr_assert_eq(fail_at(&sup_policy_actor, &h, 0, &d), SUP_RESTART);
	cr_assert_eq(d, 0);
	cr_assert_eq(sup_policy_exit(&sup_policy_actor, &h, 10, true, 1, &d),
	    SUP_RESTART);
	cr_assert_eq(d, 100);
	cr_assert_eq(fail_at(&sup_policy_actor, &h, 20, &d), SUP_RESTART);
	cr_assert_eq(d, 200);
}

Test(policy, actor_crash_loop_is_more_than_three_in_sixty_seconds)
{
	struct sup_history h = {0};
	int64_t d;

	for (int i = 0; i < 3; i++)
		cr_assert_eq(
		    fail_at(&sup_policy_actor, &h, i * 19000, &d), SUP_RESTART);
	/* 4th crash at 57 s: the first (t=0) is still inside 60 s. */
	cr_assert_eq(fail_at(&sup_policy_actor, &h, 57000, &d), SUP_GIVE_UP);
}

Test(policy, actor_crashes_spread_out_never_loop)
{
	struct sup_history h = {0};
	int64_t d;

	for (int i = 0; i < 20; i++)
		cr_assert_eq(fail_at(&sup_policy_actor, &h, i * 21000, &d),
		    SUP_RESTART, "crash %d", i);
}

Test(policy, permanent_failure_code_gives_up_at_once)
{
	struct sup_history h = {0};
	int64_t d;

	cr_assert_eq(sup_policy_exit(&sup_policy_actor, &h, 0, true,
	                 SUP_EXIT_PERMANENT, &d),
	    SUP_GIVE_UP);
	cr_assert_eq(sup_policy_exit(&sup_policy_permanent, &h, 0, true,
	                 SUP_EXIT_PERMANENT, &d),
	    SUP_GIVE_UP);
}
