#include "clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * clock_gettime can only fail for an unknown clock id, so a failure is a
 * broken invariant.  cm_fatalx would log a timestamp and recurse back here,
 * so this reports with a bare write(2) instead.
 */
static void
clock_die(const char *what)
{
	static const char prefix[] = "spaced: clock_gettime failed: ";
	ssize_t r = write(STDERR_FILENO, prefix, sizeof prefix - 1);
	r = write(STDERR_FILENO, what, strlen(what));
	r = write(STDERR_FILENO, "\n", 1);
	(void)r;
	abort();
}

static struct timespec
clock_read(clockid_t id, const char *what)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0)
		clock_die(what);
	return ts;
}

int64_t
cm_now_ms(void)
{
	struct timespec ts = clock_read(CLOCK_REALTIME, "CLOCK_REALTIME");

	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
cm_mono_ms(void)
{
	struct timespec ts = clock_read(CLOCK_MONOTONIC, "CLOCK_MONOTONIC");

	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
cm_mono_ns(void)
{
	struct timespec ts = clock_read(CLOCK_MONOTONIC, "CLOCK_MONOTONIC");

	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int
cm_rfc3339(int64_t ms, char *buf, size_t len)
{
	int64_t sec = ms / 1000;
	int64_t frac = ms % 1000;
	struct tm tm;
	time_t t;
	int n;

	if (buf == NULL || len == 0)
		return -1;
	buf[0] = '\0';
	/* C division truncates toward zero; times before 1970 need floor. */
	if (frac < 0) {
		frac += 1000;
		sec--;
	}
	t = (time_t)sec;
	if (gmtime_r(&t, &tm) == NULL)
		return -1;
	n = snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
	    tm.tm_sec, (int)frac);
	if (n < 0 || (size_t)n >= len) {
		buf[0] = '\0';
		return -1;
	}
	return 0;
}
