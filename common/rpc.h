/*
 * rpc.h: the one client of the store's REQ/REP protocol.
 *
 * Every process that talks to the store (actors, supervisor, api, tools,
 * tests) goes through cm_rpc_call, so encoding, op_id assignment, timeouts
 * and error translation exist once.
 */
#ifndef CM_RPC_H
#define CM_RPC_H

#include <nng/nng.h>
#include <stdbool.h>

#include "errors.h"
#include "limits.h"
#include "proto.h"

/*
 * Opens a REQ socket and dials url without waiting for the listener to
 * exist (the dial retries in the background).  Sets the resend time,
 * CM_MSG_MAX as the largest message accepted, and a send timeout.
 * Returns 0 or an nng error.
 */
int cm_rpc_open(nng_socket *s, const char *url);

/*
 * Sends req and waits up to timeout_ms (<= 0: CM_RPC_TIMEOUT_MS) for the
 * reply, which is decoded into *rep (free with pr_rep_free whatever the
 * outcome).  The wait is made of attempts of at most CM_RPC_ATTEMPT_MS,
 * each sending the same message.  A write without op_id gets a fresh one,
 * which every attempt and nng re-send carries, so the store applies it at
 * most once.  Safe to call
 * from many threads on one socket: each thread keeps its own context for
 * the socket between calls, and replaces one that saw a failure.
 *
 * Returns CM_OK when a reply arrived (the store's verdict is rep->err),
 * CM_E_STORE_UNAVAILABLE on timeout or transport failure, CM_E_INTERNAL
 * when req cannot be encoded or the reply cannot be decoded (logged as a
 * bug).  On any non-OK return rep->err is set to the same code.
 */
enum cm_err cm_rpc_call(
    nng_socket s, const struct pr_req *req, struct pr_rep *rep, int timeout_ms);

/*
 * The message cm_rpc_call sends for req, for a caller that drives its own
 * context: a write without op_id gets a fresh one.  Returns 0, or -1 when
 * req cannot be encoded (logged as a bug) or memory is short.
 */
int cm_rpc_request(const struct pr_req *req, nng_msg **out);

/*
 * An asynchronous store call, for a loop that must never wait on the
 * store (the supervisor, an actor).  A handle carries one request at a
 * time on a context of its own; nng completes it on its threads and makes
 * the handle's fd readable, and the loop takes the reply when it polls.
 *
 * A call is made of attempts.  Each attempt waits up to timeout_ms for
 * the reply; one that fails (a timeout, no pipe to the store) is made
 * again with the same message, so a write keeps the op_id it was given at
 * the start and the store applies it at most once however many attempts
 * reach it.  Attempts are at least CM_RPC_RETRY_MIN_MS apart.
 *
 * Every function but cm_rpc_async_fd is for one thread: the loop's.
 */
struct cm_rpc_async;

/* Opens a handle on socket s.  Returns 0 or an nng error. */
int cm_rpc_async_open(struct cm_rpc_async **out, nng_socket s);

/*
 * Abandons any call under way (its reply, if one comes, is dropped; a
 * write may still have been applied) and frees the handle.  Waits for
 * nng's callback to be done with it.  NULL is accepted.  Close every
 * handle of a socket before the socket.
 */
void cm_rpc_async_close(struct cm_rpc_async *c);

/* Readable while a call's outcome is waiting to be taken. */
int cm_rpc_async_fd(const struct cm_rpc_async *c);

/* True from cm_rpc_async_start until the outcome is taken. */
bool cm_rpc_async_busy(const struct cm_rpc_async *c);

/*
 * Starts req on an idle handle: a write without op_id gets a fresh one
 * now.  attempts is the most attempts to make, <= 0 for no bound (until
 * a reply comes or the handle is closed); timeout_ms <= 0 means
 * CM_RPC_TIMEOUT_MS.  req is encoded before this returns, so its strings
 * need not outlive the call.  Returns CM_OK, CM_E_INTERNAL when req
 * cannot be encoded (logged as a bug) or memory is short, CM_E_CONFLICT
 * when the handle is busy, CM_E_STORE_UNAVAILABLE when it has no context
 * (nng could not open one).
 */
enum cm_err cm_rpc_async_start(struct cm_rpc_async *c, const struct pr_req *req,
    int timeout_ms, int attempts);

/*
 * The outcome of the call, without blocking.  Returns false while it is
 * under way (rep untouched).  Returns true when it has ended: *rep holds
 * the reply (free with pr_rep_free), with rep->err set to
 * CM_E_STORE_UNAVAILABLE when every attempt failed, or CM_E_INTERNAL when
 * the reply could not be decoded (logged as a bug); the handle is idle
 * again.  attempts_made, when not NULL, gets the count of attempts.
 */
bool cm_rpc_async_take(
    struct cm_rpc_async *c, struct pr_rep *rep, int *attempts_made);

/* The ipc:// URL of a socket file in run_dir; -1 when it does not fit in
 * sun_path. */
int cm_ipc_url(char *buf, size_t len, const char *run_dir, const char *file);

#endif
