/*
 * live.h: a Space's live view, in its actor's loop (docs/architecture.md).
 *
 * The actor binds a control socket (REP, ipc <run_dir>/ctl-<space>.ipc)
 * for its whole life and answers the api's live.watch, live.stop and
 * live.input on it (proto.h).  While a watch's lease runs, the current
 * page of the Space's session is screencast (Page.startScreencast, the
 * bounds of limits.h) and each frame is published on a PUB socket,
 * <run_dir>/live-<space>.ipc, bound only while watched; the screencast
 * follows the session's current page (a tab switch, a replaced page).
 * Frames go nowhere else: not to the store, not to a log.
 *
 * Everything is non-blocking and single-threaded: the loop polls the
 * control socket's fd (act_live_pollfds) and steps the module after
 * every poll (act_live_step) with the driver's session, or NULL while
 * there is none.  An input holds its request until its CDP calls are
 * answered (at most CM_LIVE_INPUT_MS), and the control socket is not
 * read meanwhile.
 */
#ifndef ACT_LIVE_H
#define ACT_LIVE_H

#include <poll.h>
#include <stdint.h>

#include "redact.h"
#include "session.h"

struct act_live;

/*
 * Binds the control socket of space_id in run_dir (mode 0600).  secrets
 * (borrowed; NULL: none) redact the name of an input's target.  Returns
 * 0, or -1 when the socket cannot be bound (logged): the Space then runs
 * without a live view.
 */
int act_live_open(struct act_live **out, const char *run_dir,
    const char *space_id, const struct cm_secrets *secrets);

/* Stops a screencast on s (NULL: there is no session any more), closes
 * both sockets and frees l.  NULL is accepted. */
void act_live_close(struct act_live *l, struct act_session *s);

/* Fills at most max pollfds (0 or 1) and sets *wake_ms (monotonic; -1:
 * none) to when the module next needs a step.  Returns the count. */
int act_live_pollfds(
    struct act_live *l, struct pollfd *fds, int max, int64_t *wake_ms);

/* After poll: answers what came on the control socket and brings the
 * screencast in line with the lease and s's current page. */
void act_live_step(struct act_live *l, struct act_session *s,
    const struct pollfd *fds, int nfds);

#endif
