#include "rpc.h"

#include <nng/protocol/reqrep0/req.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids.h"
#include "limits.h"
#include "log.h"

int
cm_rpc_open(nng_socket *s, const char *url)
{
	int rv;

	if ((rv = nng_req0_open(s)) != 0)
		return rv;
	/*
	 * The store may restart; REQ re-sends on the new pipe, and the store's
	 * op_id memory makes a re-sent write harmless.  The default resend
	 * time (60 s) would turn a lost reply into a minute of silence.
	 */
	if ((rv = nng_socket_set_ms(
	         *s, NNG_OPT_REQ_RESENDTIME, CM_RPC_RESEND_MS)) != 0 ||
	    (rv = nng_socket_set_size(*s, NNG_OPT_RECVMAXSZ, CM_MSG_MAX)) !=
	        0 ||
	    (rv = nng_socket_set_ms(*s, NNG_OPT_RECONNMINT, 10)) != 0 ||
	    (rv = nng_socket_set_ms(*s, NNG_OPT_RECONNMAXT, 200)) != 0 ||
	    (rv = nng_dial(*s, url, NULL, NNG_FLAG_NONBLOCK)) != 0) {
		nng_close(*s);
		return rv;
	}
	return 0;
}

enum cm_err
cm_rpc_call(
    nng_socket s, const struct pr_req *req, struct pr_rep *rep, int timeout_ms)
{
	struct pr_req copy;
	char op_id[CM_UUID_LEN];
	char *buf = NULL;
	size_t len = 0;
	nng_ctx ctx;
	nng_aio *aio = NULL;
	nng_msg *msg = NULL;
	char err[128];
	int rv;

	memset(rep, 0, sizeof(*rep));
	if (timeout_ms <= 0)
		timeout_ms = CM_RPC_TIMEOUT_MS;

	copy = *req;
	if (pr_op_is_write(req->op) && req->op_id == NULL) {
		cm_uuid7(op_id);
		copy.op_id = op_id;
	}
	if (pr_req_encode(&copy, &buf, &len) != 0) {
		cm_warnx("rpc: cannot encode %s", pr_op_name(req->op));
		rep->err = CM_E_INTERNAL;
		return CM_E_INTERNAL;
	}

	if ((rv = nng_aio_alloc(&aio, NULL, NULL)) != 0) {
		free(buf);
		rep->err = CM_E_INTERNAL;
		return CM_E_INTERNAL;
	}
	if ((rv = nng_ctx_open(&ctx, s)) != 0) {
		nng_aio_free(aio);
		free(buf);
		rep->err = CM_E_STORE_UNAVAILABLE;
		return CM_E_STORE_UNAVAILABLE;
	}
	if ((rv = nng_msg_alloc(&msg, 0)) != 0 ||
	    (rv = nng_msg_append(msg, buf, len)) != 0) {
		free(buf);
		nng_msg_free(msg);
		nng_aio_free(aio);
		nng_ctx_close(ctx);
		rep->err = CM_E_INTERNAL;
		return CM_E_INTERNAL;
	}
	free(buf);

	/*
	 * nng 1.5.2 has no synchronous context calls; an aio does the same.
	 * The send completes before the receive starts, so a timed-out
	 * receive is never cancelled with its send still in flight (a known
	 * crash of this nng version).
	 */
	nng_aio_set_timeout(aio, timeout_ms);
	nng_aio_set_msg(aio, msg);
	nng_ctx_send(ctx, aio);
	nng_aio_wait(aio);
	if ((rv = nng_aio_result(aio)) != 0) {
		/* A failed send leaves the message with us. */
		nng_msg_free(nng_aio_get_msg(aio));
		goto unavailable;
	}
	nng_ctx_recv(ctx, aio);
	nng_aio_wait(aio);
	if ((rv = nng_aio_result(aio)) != 0)
		goto unavailable;
	msg = nng_aio_get_msg(aio);
	nng_aio_free(aio);
	nng_ctx_close(ctx);

	rv = pr_rep_decode(
	    nng_msg_body(msg), nng_msg_len(msg), rep, err, sizeof(err));
	nng_msg_free(msg);
	if (rv != 0) {
		cm_warnx("rpc: bad reply to %s from the store: %s",
		    pr_op_name(req->op), err);
		pr_rep_free(rep);
		memset(rep, 0, sizeof(*rep));
		rep->err = CM_E_INTERNAL;
		return CM_E_INTERNAL;
	}
	return CM_OK;

unavailable:
	nng_aio_free(aio);
	nng_ctx_close(ctx);
	rep->err = CM_E_STORE_UNAVAILABLE;
	return CM_E_STORE_UNAVAILABLE;
}

int
cm_ipc_url(char *buf, size_t len, const char *run_dir, const char *file)
{
	int n = snprintf(buf, len, "ipc://%s/%s", run_dir, file);

	if (n < 0 || (size_t)n >= len ||
	    (size_t)n - strlen("ipc://") > CM_IPC_PATH_MAX)
		return -1;
	return 0;
}
