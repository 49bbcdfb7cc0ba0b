/*
 * siege.h: hostile and well-behaved HTTP clients of the api, shared by
 * the hostile-HTTP tests (test_hostile_http) and the bench that measures
 * a client's latency under the same siege (http_bench).
 *
 * A siege is one thread of its own with every connection non-blocking
 * under one poll(): slow connections each send one byte a second (a
 * request head that never ends, or a body that never ends), idle ones
 * send nothing.  Each connection the api closes is opened again, so the
 * counts hold for as long as the siege runs.
 */
#ifndef TK_SIEGE_H
#define TK_SIEGE_H

#include <stdint.h>

#include "testkit.h"

struct tk_siege;

struct tk_siege_stats {
	long opened;   /* connections made, reopened ones included */
	long closed;   /* connections the api closed */
	long answered; /* of those, the ones answered first (a 408) */
	long bytes;    /* bytes the slow connections sent */
	int open_max;  /* connections open at once, at most */
};

/*
 * Starts a siege of p's api: n_slow connections sending a byte a second
 * (half a head, half a body after a whole head) and n_idle that send
 * nothing.  The caller's RLIMIT_NOFILE must allow n_slow + n_idle more
 * files.  Returns NULL (said why on stderr) when it cannot start.
 */
struct tk_siege *tk_siege_start(
    const struct tk_proc *p, int n_slow, int n_idle);
/* The connections open now (connected or connecting). */
int tk_siege_open(struct tk_siege *s);
/* Stops the siege, closes every connection and frees s; its counts go
 * to st (may be NULL).  NULL is fine. */
void tk_siege_stop(struct tk_siege *s, struct tk_siege_stats *st);

/*
 * GET path as token (may be NULL) on a fresh connection, as a
 * well-behaved client would, waiting at most timeout_ms for the whole
 * answer.  Returns its status, or -1 when none came in time (or the
 * connection failed); *ns (may be NULL) gets how long it took.
 */
int tk_http_get_within(const struct tk_proc *p, const char *path,
    const char *token, int timeout_ms, int64_t *ns);

#endif
