/*
 * events.h: live events out of the HTTP front.  One thread reads the
 * store's committed events once and hands each to the external nng PUB
 * socket (SPEC 5) and to the Server-Sent Events streams watching its
 * Space.
 */
#ifndef API_EVENTS_H
#define API_EVENTS_H

#include <nng/nng.h>
#include <nng/supplemental/http/http.h>

#include "api.h"

/* Binds the external PUB (events_url, mode 0660), subscribes to the
 * store's feed and starts the events thread.  Returns 0 or -1. */
int api_events_start(const struct cm_config *cfg);
void api_events_stop(void);

/*
 * Blocks until any task finishes (a completed, failed or cancelled event
 * arrives) or deadline_ms (monotonic) passes, whichever is first; at most
 * one second at a time, so a lost event costs a second.  The caller
 * re-reads its task from the store.
 */
void api_events_wait(int64_t deadline_ms);

/*
 * Serves GET .../events with Accept: text/event-stream on conn, which the
 * caller has hijacked from the HTTP server: writes the headers, replays
 * the events after `after` from the store, then hands the stream to the
 * events thread for live events, heartbeats and the end after
 * space_closed.  The connection is owned here from the call on.
 */
void api_sse_serve(struct api_ctx *c, nng_http_conn *conn, int64_t after);

#endif
