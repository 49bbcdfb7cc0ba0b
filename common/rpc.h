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

#include "errors.h"
#include "proto.h"

/* REQ re-sends a request after this long without a reply (DESIGN 6). */
#define CM_RPC_RESEND_MS 2000
#define CM_RPC_TIMEOUT_MS 10000

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
 * outcome).  A write without op_id gets a fresh one, which every nng
 * re-send carries, so the store applies it at most once.  Safe to call
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

/* The ipc:// URL of a socket file in run_dir; -1 when it does not fit in
 * sun_path. */
int cm_ipc_url(char *buf, size_t len, const char *run_dir, const char *file);

#endif
