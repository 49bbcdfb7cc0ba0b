/*
 * live.h: the live view of a Space, on the api's loop thread
 * (docs/api.md, "Live view").
 *
 * A viewer is a connection turned into a stream of frames (SSE, event
 * "frame").  The first viewer of a Space makes the loop ask the Space's
 * actor for a watch (live.watch on the actor's control socket, an
 * asynchronous call whose fd the loop polls, never a wait) and subscribe
 * to the actor's frames; the watch's lease is renewed every
 * CM_LIVE_RENEW_MS while a viewer is attached, and the last viewer gone
 * sends live.stop and unsubscribes.  At most CM_VIEWERS_MAX viewers per
 * Space; past it, 429 viewers_exceeded.  A viewer behind gets only the
 * latest frame once it has taken the last: memory per viewer is one
 * frame's text at most.  Frames are never stored and never logged.
 *
 * Every function runs on the loop thread, but api_live_route (a
 * worker's).
 */
#ifndef API_LIVE_H
#define API_LIVE_H

#include "http.h"

struct api_ctx;

/* Makes the module's epoll set (its fd, which the loop watches, is
 * returned), for the frames and the actors' answers.  -1 on failure. */
int api_live_open(const struct cm_config *cfg);
/* Closes every watch's sockets (after the loop closed every viewer). */
void api_live_close(void);

/* loop: the live fd is readable: takes the actors' answers and frames. */
void api_live_run(void);
/* loop: renewals, heartbeats, and cutting off viewers that stopped
 * reading. */
void api_live_tick(int64_t now_ms);

/* loop: turns c into a viewer of j->space (a job whose route asked for
 * it), or answers the refusal and closes c. */
void api_live_attach(struct api_conn *c, const struct api_job *j);
/* loop: c's output is all written: the latest frame, if it missed one. */
void api_live_drained(struct api_conn *c);
/* loop: c is closing; it stops being a viewer, if it was one. */
void api_live_forget(struct api_conn *c);

/* worker: GET .../browser-spaces/{space}/live.  Authorizes as a GET of
 * the Space and checks that its actor runs; then the loop takes it. */
void api_live_route(struct api_ctx *c);
/* worker: POST .../browser-spaces/{space}/live/input, the holder's
 * pointer or key to the page (live_input.c). */
void api_live_input(struct api_ctx *c);

#endif
