/* clock.h: wall and monotonic time. */
#ifndef CM_CLOCK_H
#define CM_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* Unix time in milliseconds (CLOCK_REALTIME). */
int64_t cm_now_ms(void);
/* Monotonic milliseconds and nanoseconds (CLOCK_MONOTONIC). */
int64_t cm_mono_ms(void);
int64_t cm_mono_ns(void);
/*
 * Formats Unix milliseconds as RFC 3339 UTC with milliseconds,
 * "2026-11-29T08:27:14.123Z".  buf needs CM_RFC3339_LEN bytes.
 * Returns 0, or -1 when the buffer is too small.
 */
#define CM_RFC3339_LEN 32
int cm_rfc3339(int64_t ms, char *buf, size_t len);

#endif
