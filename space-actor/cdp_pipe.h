/*
 * cdp_pipe.h: the pipe transport of the CDP client (cdp.h).
 *
 * Chromium started with --remote-debugging-pipe reads NUL-terminated JSON
 * messages on its fd 3 and writes them on its fd 4: no TCP port is open.
 * Both ends here are non-blocking and driven by the actor's poll() loop;
 * messages to send wait in a bounded buffer until the pipe takes them.
 */
#ifndef ACT_CDP_PIPE_H
#define ACT_CDP_PIPE_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>

struct act_pipe;

/* Called for each whole message received; returns 0, or -1 to stop
 * reading (the connection is then treated as broken). */
typedef int (*act_pipe_msg_fn)(void *arg, const char *msg, size_t len);

/*
 * Takes the write end (the browser's fd 3) and the read end (its fd 4),
 * sets both non-blocking, and owns them from then on.  A write to a
 * browser that died raises SIGPIPE: the process must ignore it (the
 * actor does; so must a test that drives a browser itself).  Returns NULL when
 * memory is short (the fds are then closed).
 */
struct act_pipe *act_pipe_new(int wfd, int rfd);

/* Closes both fds and frees.  NULL is accepted. */
void act_pipe_free(struct act_pipe *p);

/*
 * Queues len bytes of one message and its NUL, writing what the pipe
 * takes now.  Returns 0, or -1 when the pipe is broken or the queue would
 * pass CM_CDP_OUTBUF_MAX.
 */
int act_pipe_send(struct act_pipe *p, const char *msg, size_t len);

/* Fills up to two pollfds (reading always, writing while output waits).
 * Returns the count. */
int act_pipe_pollfds(const struct act_pipe *p, struct pollfd *fds, int max);

/*
 * After poll(): reads what is there and hands each whole message to fn,
 * and writes what waits.  A message over CM_CDP_MSG_MAX is read and
 * dropped, never held: when it is a reply, fn gets an error reply for
 * its command instead (code ACT_CDP_E_TOO_BIG), so a page that makes a
 * huge answer fails its call and not the browser.  Returns 0, or -1 when
 * the pipe ended (end of file, an error, or fn said stop).  fds
 * and nfds are the whole set the loop polled; the pipe finds its own.
 */
int act_pipe_step(struct act_pipe *p, const struct pollfd *fds, int nfds,
    act_pipe_msg_fn fn, void *arg);

/* True once the pipe has ended. */
bool act_pipe_broken(const struct act_pipe *p);

#endif
