/*
 * egress_thread.c: an egress proxy stepped in a thread of its own.
 */
#include "egress_thread.h"

#include <poll.h>

#include "clock.h"
#include "limits.h"

/* The longest poll: how soon the thread sees its stop flag. */
#define TK_EGRESS_POLL_MS 50

static void *
egress_thread_run(void *arg)
{
	struct tk_egress_thread *t = arg;
	struct pollfd fds[CM_EGRESS_POLLFDS];

	while (!atomic_load(&t->stop)) {
		int64_t wake = -1, now = cm_mono_ms();
		int n = act_egress_pollfds(
		    t->egress, fds, CM_EGRESS_POLLFDS, &wake);
		int timeout = wake < 0 || wake - now > TK_EGRESS_POLL_MS
		                  ? TK_EGRESS_POLL_MS
		              : wake <= now ? 0
		                            : (int)(wake - now);

		poll(fds, (nfds_t)n, timeout);
		act_egress_step(t->egress, fds, n);
	}
	return NULL;
}

int
tk_egress_thread_start(struct tk_egress_thread *t, struct act_egress *e)
{
	t->egress = e;
	atomic_store(&t->stop, false);
	return pthread_create(&t->thread, NULL, egress_thread_run, t) == 0 ? 0
	                                                                   : -1;
}

void
tk_egress_thread_stop(struct tk_egress_thread *t)
{
	atomic_store(&t->stop, true);
	pthread_join(t->thread, NULL);
}
