/*
 * metrics.h: the api's Prometheus metrics, rendered for GET /metrics in
 * the text exposition format (version 0.0.4).
 *
 * Every number lives in this api process and starts from zero when it
 * starts.  What is measured where, and by which thread:
 *
 *   spaced_http_requests_total{route,method,status}        counter
 *   spaced_http_request_duration_seconds{route,method}     histogram
 *       api_metrics_request, from api_work_conclude (work.c), once per
 *       routed request when its answer is ready: on the worker that ran
 *       the route, or, for a ?wait= request answered from the row its
 *       task's event carried (wait.h), on the connection loop.  route is
 *       the route table's pattern ('*' for each id segment), so ids never
 *       become labels; a 405 carries the pattern its path matched, and a
 *       path that matched none is route="unmatched".  method is one of
 *       GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS, or "other".  The
 *       duration runs from the loop having read the request's last byte
 *       to its answer being rendered: it includes the wait for a free
 *       worker and, for a parked ?wait= request, the whole time parked,
 *       and not the writing of the answer.  A parked request counts once,
 *       when it is answered (not if its client left first); an event
 *       stream counts once, with status 200, when its route hands it to
 *       the loop.  The answers the loop gives itself (a malformed, too
 *       large or too slow request, a refusal past the connection cap) go
 *       through no route and are not counted.
 *
 *   spaced_tasks_finished_total{status,error_code}         counter
 *   spaced_task_duration_seconds{status}                   histogram
 *   spaced_task_queue_seconds                              histogram
 *   spaced_task_tracking_evictions_total                   counter
 *       api_metrics_event, on the connection loop (events.c), for every
 *       committed event of the store's internal feed.  Times are the
 *       events' created_at, which the store stamps in its transaction:
 *       queue time is started - queued, run time is completed, failed or
 *       cancelled - started.  A task whose earlier events this process
 *       did not see (it started later, the feed dropped them, or the task
 *       was evicted from the bounded map of CM_METRICS_TASKS_MAX tasks)
 *       is still counted as finished but adds no latency sample.  A task
 *       cancelled or failed before it started has no queue or run sample.
 *       A dropped terminal event is a finish not counted: nng pub/sub may
 *       drop under bursts.
 *
 *   spaced_egress_blocked_total{reason}                    counter
 *       The same feed's network_blocked events (the Spaces' egress
 *       proxies refusing a connection), by the event's reason:
 *       host_not_allowed, private_address, no_policy or other.  Same
 *       thread, same caveats as the task counters.
 *
 *   spaced_sse_streams_cut_total                           counter
 *       api_metrics_stream_cut, on the connection loop (events.c): event
 *       streams cut off because their client took nothing for
 *       CM_SSE_STALL_MS with more than CM_SSE_PENDING_MAX waiting.
 *
 *   spaced_api_loop_answers_total                          counter
 *       api_metrics_loop_answer, on the connection loop (conn_read.c):
 *       requests the loop answered itself, with no worker (router.c's
 *       loop routes): a read whose answer the Spaces' view (view.h) and
 *       the auth cache held, /healthz, or a refusal decided without the
 *       store (no token, a bad query, a caller not allowed).  They count
 *       in the request counters too.
 *
 *   spaced_spaces_active                                   gauge
 *   spaced_actor_restarts_total                            counter
 *   spaced_metrics_source_up{source="store"|"supervisor"}  gauge
 *       Asked by the worker that runs GET /metrics (routes_meta.c), before
 *       it renders, each source within a bound of its own.  The store
 *       (sup.list_active, every page) gives api_metrics_gauge_spaces the
 *       Spaces whose status is not closed, on every host; the gauge is
 *       absent when the store did not answer every page in time.  The
 *       supervisor's control socket (sup.status, every page) gives
 *       api_metrics_actor_restarts its child table: the counter adds, per
 *       actor row, the growth of its restart count since the previous
 *       answer, and all of the count of a row that is new or whose count
 *       went down (its Space's actor was replaced), so the first scrape
 *       after this process starts adds every row's count.  The
 *       supervisor forgets a row when its Space closes, so its own sum
 *       can shrink; this counter never does.  Restarts of a row that
 *       appeared and vanished between two answers are missed.
 *       source_up says whether each source answered the last scrape; it
 *       is absent before the first.
 *
 *   spaced_live_viewers                                    gauge
 *       api_metrics_live_viewers: viewers of live views attached now.
 *   spaced_live_frames_sent_total                          counter
 *   spaced_live_frame_bytes_sent_total                     counter
 *       api_metrics_live_frame, once per frame written to a viewer.
 *   spaced_mcp_sessions                                    gauge
 *       MCP sessions open (mcp_session.h), counted by the worker that
 *       runs GET /metrics before it renders, idle ones past their time
 *       dropped first; absent before the first scrape.
 *
 *   spaced_mcp_tool_calls_total{tool,outcome}              counter
 *       api_metrics_mcp_call, once per tools/call answered (mcp_tools.c):
 *       on the worker that ran it, or for a call parked on its task
 *       (wait.h), where its answer is made.  tool is the tool's name once
 *       the call found it among its URL's tools (browser_space_close
 *       too), else "unknown"; past CM_METRICS_MCP_TOOLS_MAX names,
 *       "other".  outcome is one of enum api_mcp_outcome.
 *
 *   spaced_metrics_series_overflow_total                   counter
 *       Request samples dropped because CM_METRICS_SERIES_MAX series
 *       exist already (a bug: the route table bounds the series).
 *
 * Every function is thread-safe (one mutex) and never blocks on I/O; a
 * render holds the mutex throughout, so a scrape is one consistent
 * reading.
 */
#ifndef API_METRICS_H
#define API_METRICS_H

#include <stddef.h>

#include "proto.h"

/*
 * Counts one answered request.  route must outlive the process (a route
 * table pattern) or be NULL for "unmatched"; method may be anything, NULL
 * too ("other" past the standard ones).  A status outside 100..599 counts
 * as 0, and a negative or NaN seconds as 0.
 */
void api_metrics_request(
    const char *route, const char *method, int status, double seconds);

/*
 * Feeds one committed event (sequence >= 1) of the store's internal feed.
 * network_blocked counts by its payload's reason; other kinds than
 * queued, started, completed, failed and cancelled, and task events
 * without a task_id, are ignored.  The error_code label comes from
 * a failed or cancelled event's payload, limited to the codes of
 * errors.h ("other" for anything else, "none" when absent).
 */
void api_metrics_event(const struct pr_event *ev);

/* Counts an event stream cut off (spaced_sse_streams_cut_total). */
void api_metrics_stream_cut(void);
/* Counts a request the loop answered itself
 * (spaced_api_loop_answers_total). */
void api_metrics_loop_answer(void);

/* Sets spaced_spaces_active; n < 0 means the store did not answer. */
void api_metrics_gauge_spaces(long n);

/*
 * Folds the supervisor's child table (n rows, from sup.status) into
 * spaced_actor_restarts_total, remembering up to CM_SUP_STATUS_ROWS_MAX
 * actor rows for the next answer; n < 0 means the supervisor did not answer,
 * and changes nothing but its source_up.
 */
void api_metrics_actor_restarts(const struct pr_child *children, long n);

/*
 * The whole exposition, malloc'd and NUL-terminated (the caller frees);
 * NULL on allocation failure.  O(series), under the mutex.
 */
char *api_metrics_render(void);

/* How a tools/call ended: the outcome label of
 * spaced_mcp_tool_calls_total. */
enum api_mcp_outcome {
	API_MCP_OK,          /* the task completed */
	API_MCP_TOOL_ERROR,  /* the task failed */
	API_MCP_CANCELLED,   /* the task was cancelled */
	API_MCP_BUSY,        /* another task of the Space was running */
	API_MCP_IN_PROGRESS, /* the wait ended before the task did */
	API_MCP_REFUSED,     /* no task: the submit or the Space refused it */
	API_MCP_INVALID,     /* a JSON-RPC error: bad params, unknown tool */
	API_MCP_ERROR,       /* an HTTP error: authorization, store, memory */
	API_MCP_OUTCOME__COUNT
};

/* Counts one tools/call answered; tool NULL or "" counts as "unknown". */
void api_metrics_mcp_call(const char *tool, enum api_mcp_outcome o);

/* Sets spaced_mcp_sessions; n < 0 hides it. */
void api_metrics_mcp_sessions(long n);

struct api_prom;
/* Appends the MCP families to b (under api_metrics_render's lock). */
void api_metrics_mcp_render(struct api_prom *b);
/* Forgets the MCP metrics (api_metrics_reset). */
void api_metrics_mcp_reset(void);

/* Live view (metrics_live.c, from the loop): a viewer attached (+1) or
 * gone (-1), and one frame of n bytes written to a viewer. */
void api_metrics_live_viewers(int delta);
void api_metrics_live_frame(size_t bytes);
/* Appends the live view's families to b. */
void api_metrics_live_render(struct api_prom *b);
/* Forgets the frame counters (api_metrics_reset). */
void api_metrics_live_reset(void);

/* Forgets everything (tests). */
void api_metrics_reset(void);

#endif
