/*
 * wait.h: parked requests.  POST .../tasks?wait=SECONDS answers 200 with
 * the task once it has finished, POST .../close?wait=SECONDS 200 with the
 * Space once it is closed; when the wait runs out first, 202 with the
 * task (or the Space) as it stands.  Meanwhile the request is parked on
 * the connection loop: it holds its connection, and no thread.
 *
 * A wait's life, and who calls what:
 *
 *   worker  A route, once the store has the request, calls api_wait_park:
 *           no answer yet, and the job goes back to the loop with
 *           outcome API_OUT_PARK and what it waits for (api_work_conclude
 *           copies that from the context into the job).
 *   loop    The connection layer (conn.c) parks the connection with
 *           api_wait_hold, and calls api_wait_drop once the job that
 *           answers the wait is back, or when the connection closes (the
 *           client left, or the loop stops).
 *   loop    The event feed (events.c) hands every committed event to
 *           api_wait_event.  The event that ends a waited-for task, when
 *           it carries the task's row as its commit left it, answers the
 *           wait there and then, with no store call and no worker.
 *           Without the row, and on a waited-for Space's space_closed, a
 *           worker is asked to look (a job of kind API_JOB_WAIT).
 *   loop    The connection loop (http.c) calls api_wait_tick: a wait
 *           nobody has looked at for CM_WAIT_RECHECK_MS, or whose
 *           deadline has come, goes to a worker (pub/sub may drop the
 *           event that would have answered it).
 *   worker  api_wait_run runs an API_JOB_WAIT job: it reads the task (or
 *           the Space) from the store and answers 200 when it has
 *           finished (is closed), 202 when the deadline has passed, and
 *           otherwise parks it again (API_OUT_PARK: api_wait_hold keeps
 *           the connection's wait).
 *
 * A wait is looked at by one worker at a time.  Waits are the loop's and
 * take no lock; wait.c owns each one's memory, the connection points at
 * its own (api_conn_wait), and a job carries copies of its fields, never
 * a pointer to it.  The request was authorized when it was made: looking
 * at it again authorizes nothing.
 */
#ifndef API_WAIT_H
#define API_WAIT_H

#include <stdbool.h>
#include <stdint.h>

#include "http.h"

struct api_ctx;
struct pr_event;
struct pr_task;

/*
 * worker, a route: the answer to c waits for task_id (in c->workspace_id
 * and c->space_id) to finish, or with task_id NULL for that Space to
 * close, at most wait_s seconds (1..CM_WAIT_MAX_S) from now.  Sets
 * c->later and the c->later_* fields; c gets no answer.
 */
void api_wait_park(struct api_ctx *c, const char *task_id, long wait_s);

/*
 * worker: j (API_JOB_WAIT), looked at: one store read on store, then j
 * holds the answer (200, 202, or the store's error) or outcome
 * API_OUT_PARK.  cfg is the api's configuration.
 */
void api_wait_run(
    struct api_job *j, const struct cm_config *cfg, nng_socket store);

/*
 * loop: parks c on what j waits for (j came back with API_OUT_PARK).  A
 * connection parked again keeps its wait.  When that task (Space) is among
 * the last CM_WAIT_RECENT tasks to finish and Spaces to close, a worker
 * looks at once.  Out of memory, c is cut.
 */
void api_wait_hold(struct api_conn *c, const struct api_job *j);
/* loop: frees c's wait, if it has one. */
void api_wait_drop(struct api_conn *c);

/*
 * loop: e, a committed event off the store's feed, with t the task that
 * e ended, as its commit left it (NULL: e carried none).  Waits it
 * answers write their answer, and their connections go on to the next
 * request; e and t are only read, and only during the call.
 */
void api_wait_event(const struct pr_event *e, const struct pr_task *t);
/* loop: the waits whose next look or deadline has come go to a worker. */
void api_wait_tick(int64_t now_ms);

/* Whether j, a parked MCP call, is answered on an event stream: it asked
 * for progress, or its session set a log level. */
bool api_wait_streamed(const struct api_job *j);
/* worker or loop: an event stream's message event carrying body (a
 * JSON-RPC message: a call's answer, the stream's last, or a
 * notification), malloc'd; NULL, *len 0, out of memory or without one. */
char *api_wait_sse_message(const char *body, size_t *len);

#endif
