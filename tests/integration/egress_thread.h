/*
 * egress_thread.h: an egress proxy (space-actor/egress.h) stepped in a
 * thread of its own, for tests and benchmarks that drive a browser
 * through it from their own loop (the actor steps it in its loop, beside
 * the driver).  The proxy is single-threaded: between start and stop only
 * the thread touches it, and whatever its callbacks share with the caller
 * is theirs to guard.
 */
#ifndef TK_EGRESS_THREAD_H
#define TK_EGRESS_THREAD_H

#include <pthread.h>
#include <stdatomic.h>

#include "egress.h"

struct tk_egress_thread {
	struct act_egress *egress; /* borrowed */
	atomic_bool stop;
	pthread_t thread;
};

/* Starts stepping e in a new thread.  0, or -1 when none could start. */
int tk_egress_thread_start(struct tk_egress_thread *t, struct act_egress *e);

/* Stops the thread and waits for it; the proxy stays open (the caller
 * closes it).  Only after a start that returned 0. */
void tk_egress_thread_stop(struct tk_egress_thread *t);

#endif
