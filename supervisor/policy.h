/*
 * policy.h: restart policy as pure functions: what to do is decided
 * here, and done by the caller's loop.  No clocks, no processes: callers
 * pass the time in.
 */
#ifndef SUP_POLICY_H
#define SUP_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "startup.h"

/* Exit code meaning "permanent failure, do not restart" (s6 style). */
#define SUP_EXIT_PERMANENT CM_EXIT_PERMANENT

struct sup_policy {
	bool permanent;         /* restart even after a clean exit */
	int64_t backoff_min_ms; /* first delay after the first failure */
	int64_t backoff_max_ms; /* the delay doubles up to this */
	bool first_immediate; /* the first failure in a window restarts at 0 */
	int max_failures;     /* more than this many in window: give up */
	int64_t window_ms;
};

/* The store and the api: 100 ms doubling to 5 s; 5 failures in 10 s and
 * the supervisor gives up.  Actors: transient; more than 3 crashes in
 * 60 s is a crash loop. */
extern const struct sup_policy sup_policy_permanent;
extern const struct sup_policy sup_policy_actor;

#define SUP_HISTORY_MAX 16

/* Failure times of one child, newest last. */
struct sup_history {
	int n;
	int64_t at[SUP_HISTORY_MAX];
};

enum sup_verdict {
	SUP_RESTART, /* start it again after *delay_ms */
	SUP_DONE,    /* a transient child finished: do not restart */
	SUP_GIVE_UP, /* too many failures, or a permanent failure */
};

/*
 * Records that a child exited at now_ms with the given wait status
 * (exited: 0 or a code; killed by a signal counts as a crash) and decides.
 * Failures older than the policy's window are forgotten.
 */
enum sup_verdict sup_policy_exit(const struct sup_policy *p,
    struct sup_history *h, int64_t now_ms, bool exited, int code,
    int64_t *delay_ms);

/* Failures within the window ending at now_ms. */
int sup_policy_recent(
    const struct sup_policy *p, const struct sup_history *h, int64_t now_ms);

#endif
