#include <criterion/criterion.h>
#include <string.h>
#include <time.h>

#include "clock.h"

static void
expect_rfc3339(int64_t ms, const char *want)
{
	char buf[CM_RFC3339_LEN];

	cr_assert_eq(
	    cm_rfc3339(ms, buf, sizeof buf), 0, "ms=%lld", (long long)ms);
	cr_assert_str_eq(buf, want);
}

Test(clock, rfc3339_epoch)
{
	expect_rfc3339(0, "1970-01-01T00:00:00.000Z");
}

Test(clock, rfc3339_header_example)
{
	expect_rfc3339(1795940834123, "2026-11-29T08:27:14.123Z");
}

Test(clock, rfc3339_leap_day_and_millisecond_padding)
{
	expect_rfc3339(951868799007, "2000-02-29T23:59:59.007Z");
	expect_rfc3339(951868799999, "2000-02-29T23:59:59.999Z");
	expect_rfc3339(951868800000, "2000-03-01T00:00:00.000Z");
}

Test(clock, rfc3339_before_epoch_floors)
{
	/* Truncating division would give 00:00:00.-01 or similar. */
	expect_rfc3339(-1, "1969-12-31T23:59:59.999Z");
	expect_rfc3339(-1000, "1969-12-31T23:59:59.000Z");
	expect_rfc3339(-1001, "1969-12-31T23:59:58.999Z");
}

Test(clock, rfc3339_far_future)
{
	expect_rfc3339(253402300799999, "9999-12-31T23:59:59.999Z");
}

Test(clock, rfc3339_buffer_bounds)
{
	char buf[CM_RFC3339_LEN];
	const size_t need = strlen("1970-01-01T00:00:00.000Z") + 1;

	memset(buf, 'x', sizeof buf);
	cr_assert_eq(cm_rfc3339(0, buf, need), 0);
	cr_assert_str_eq(buf, "1970-01-01T00:00:00.000Z");

	memset(buf, 'x', sizeof buf);
	cr_assert_eq(cm_rfc3339(0, buf, need - 1), -1);
	cr_assert_eq(buf[0], '\0', "a failed format leaves an empty string");
	cr_assert_eq(cm_rfc3339(0, buf, 0), -1);
	cr_assert_eq(cm_rfc3339(0, NULL, 32), -1);
}

static int64_t
realtime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Against CLOCK_REALTIME itself: time() reads the kernel's coarse clock,
 * which can still show the last second a few milliseconds after the
 * precise clock has passed into the next.
 */
Test(clock, now_ms_matches_time)
{
	int64_t before = realtime_ms();
	int64_t now = cm_now_ms();
	int64_t after = realtime_ms();

	cr_assert_geq(now, before);
	cr_assert_leq(now, after);
}

Test(clock, monotonic_never_goes_back)
{
	int64_t prev_ms = cm_mono_ms();
	int64_t prev_ns = cm_mono_ns();

	for (int i = 0; i < 10000; i++) {
		int64_t ms = cm_mono_ms();
		int64_t ns = cm_mono_ns();

		cr_assert_geq(ms, prev_ms);
		cr_assert_geq(ns, prev_ns);
		prev_ms = ms;
		prev_ns = ns;
	}
}

Test(clock, mono_ms_and_ns_agree)
{
	int64_t ms = cm_mono_ms();
	int64_t ns = cm_mono_ns();
	int64_t ms2 = cm_mono_ms();

	cr_assert_geq(ns / 1000000, ms);
	cr_assert_leq(ns / 1000000, ms2);
}

Test(clock, mono_ns_advances_across_sleep)
{
	struct timespec d = {0, 5 * 1000 * 1000};
	int64_t a = cm_mono_ns();

	nanosleep(&d, NULL);
	cr_assert_geq(cm_mono_ns() - a, 5 * 1000 * 1000);
}
