/*
 * metrics.h: the api's Prometheus metrics, rendered for GET /metrics in
 * the text exposition format (version 0.0.4).
 *
 * What is measured where (every number lives in this api process and
 * starts from zero when it starts; several api processes are summed by
 * the scraper):
 *
 *   spaced_http_requests_total{route,method,status}        counter
 *   spaced_http_request_duration_seconds{route,method}     histogram
 *       Counted in the worker (main.c, run_job) once per request, after
 *       its answer is built.  route is the route table's pattern ('*'
 *       for each id segment) so ids never become labels; a request that
 *       matched no pattern is route="unmatched".  A 405 carries the
 *       pattern its path matched.  method is one of the standard methods
 *       or "other".  The duration runs from the worker taking the request
 *       to the answer being ready: time spent waiting for a free worker
 *       and in nng's own I/O is not in it.  An SSE stream counts once,
 *       with status 200, when it has been handed to the events thread.
 *
 *   spaced_tasks_finished_total{status,error_code}         counter
 *   spaced_task_duration_seconds{status}                   histogram
 *   spaced_task_queue_seconds                              histogram
 *   spaced_task_tracking_evictions_total                   counter
 *       From the store's committed events, fed to api_metrics_event by
 *       the events thread.  Times are the events' created_at, which the
 *       store stamps in its transaction: queue time is started - queued,
 *       run time is completed/failed/cancelled - started.  A task whose
 *       earlier events this process did not see (it started later, the
 *       PUB socket dropped them, or the task was evicted from the bounded
 *       map of CM_METRICS_TASKS_MAX tasks) is still counted as finished
 *       but adds no latency sample.  A task cancelled or failed before it
 *       started has no queue or run sample.  A dropped terminal event is
 *       a finish not counted: nng pub/sub may drop under bursts.
 *
 *   spaced_egress_blocked_total{reason}                    counter
 *       From the store's network_blocked events (the Spaces' egress
 *       proxies refusing a connection), by the event's reason:
 *       host_not_allowed, private_address, no_policy or other.  Same
 *       feed, same caveats as the task counters.
 *
 *   spaced_spaces_active                                   gauge
 *       Asked of the store (sup.list_active, every page) on each scrape:
 *       Spaces whose status is not closed, on every host, all of them.
 *       Absent when the store did not answer every page in time.
 *   spaced_actor_restarts_total                            counter
 *       From the supervisor's control socket (sup.status) on each scrape:
 *       the sum, over actor rows, of the restarts seen grow since the
 *       previous scrape.  The supervisor forgets a row when its Space
 *       closes, so its own sum can shrink; this counter never does.
 *       Restarts of a row that appeared and vanished between two scrapes
 *       are missed.
 *   spaced_sse_streams_cut_total                           counter
 *       Event streams the api cut off because their client took nothing
 *       for CM_SSE_STALL_MS with more than CM_SSE_PENDING_MAX waiting.
 *   spaced_metrics_source_up{source="store"|"supervisor"}  gauge
 *       Whether that source answered the last scrape.
 *   spaced_metrics_series_overflow_total                   counter
 *       Request samples dropped because CM_METRICS_SERIES_MAX series
 *       exist already (a bug: the route table bounds the series).
 *
 * Every function is thread-safe (one mutex) and never blocks on I/O.
 */
#ifndef API_METRICS_H
#define API_METRICS_H

#include <stddef.h>

#include "proto.h"

/*
 * Counts one answered request.  route must outlive the process (a route
 * table pattern) or be NULL for "unmatched"; method may be anything.
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

/* Counts a stream cut off (spaced_sse_streams_cut_total). */
void api_metrics_stream_cut(void);

/* Sets spaced_spaces_active; n < 0 means the store did not answer. */
void api_metrics_gauge_spaces(long n);

/*
 * Folds the supervisor's child table (n rows, from sup.status) into
 * spaced_actor_restarts_total; n < 0 means the supervisor did not answer.
 */
void api_metrics_actor_restarts(const struct pr_child *children, long n);

/*
 * The whole exposition, malloc'd and NUL-terminated (the caller frees);
 * NULL on allocation failure.  O(series).
 */
char *api_metrics_render(void);

/* Forgets everything (tests). */
void api_metrics_reset(void);

#endif
