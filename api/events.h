/*
 * events.h: live events out of the HTTP front.  The loop thread reads the
 * store's committed events once and hands each to the external nng PUB
 * socket (topic "space/<workspace>/<space> ", then the event's JSON), to
 * the Server-Sent Events streams watching its Space, and to the parked
 * ?wait= requests (api_wait_event, wait.h).
 *
 * Everything here runs on the loop thread (api/http.c) and holds no lock,
 * except api_events_page, which a worker runs.  Nothing on the loop
 * thread calls another process: a replay or a gap is read by a worker.
 */
#ifndef API_EVENTS_H
#define API_EVENTS_H

#include "http.h"

/* Binds the external PUB (events_url, mode 0660) and subscribes to the
 * store's feed.  Returns the feed's pollable fd, or -1. */
int api_events_open(const struct cm_config *cfg);
void api_events_close(void);

/* loop: drains the feed (its fd is readable) and hands every event out. */
void api_events_feed(void);
/* loop: heartbeats, and cutting off streams whose client stopped
 * reading. */
void api_events_tick(int64_t now_ms);

/*
 * loop: turns c into the event stream a job asked for (j->ws, j->space,
 * after j->after): writes the headers, then replays from the store a page
 * at a time (each page once the client took the last), then follows the
 * feed, and ends c after space_closed.
 */
void api_events_stream(struct api_conn *c, const struct api_job *j);
/* loop: a page job came back (API_JOB_PAGE); takes j. */
void api_events_page_done(struct api_conn *c, struct api_job *j);
/* loop: c's output is all written. */
void api_events_drained(struct api_conn *c);
/* loop: c is closing; drops its stream, if it has one. */
void api_events_forget(struct api_conn *c);

/*
 * worker: reads up to CM_EVENTS_LIMIT_MAX events after j->after of
 * j->space from the store and formats them as SSE into j->out (outcome
 * API_OUT_PAGE with last, n_events and ending), or API_OUT_FAILED.
 */
void api_events_page(struct api_job *j, nng_socket store);

#endif
