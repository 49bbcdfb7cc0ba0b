/*
 * rpc_async.c: the asynchronous store call (cm_rpc_async_*, rpc.h), for
 * a loop that must stay live: the attempts run on nng's threads, and the
 * loop learns the outcome from an eventfd it polls.  Sockets, dialers and
 * the synchronous call are rpc.c's.
 */
#include "rpc.h"
#include "rpc_int.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "clock.h"
#include "limits.h"
#include "log.h"

/*
 * The asynchronous call.  Its aios' callback runs the attempts on nng's
 * threads: send, receive, and on a failure a pause (nng_sleep_aio) before
 * the next attempt.  The pause has an aio of its own: in nng 1.5.2 an aio
 * that once slept reports a later timeout as success, with the message
 * still on it (seen in test_rpc).  Only the send completes before the receive
 * starts, so no receive is ever cancelled while its send is in flight (a known
 * crash of nng 1.5.2).  The callback publishes the outcome through `state` and
 * the eventfd; the loop reads the other fields only after it has seen
 * RPC_DONE, so they need no lock.
 */
enum rpc_async_state {
	RPC_IDLE,
	RPC_SENDING,
	RPC_RECEIVING,
	RPC_PAUSED,
	RPC_DONE,
};

struct cm_rpc_async {
	nng_socket sock;
	nng_ctx ctx;
	nng_aio *aio;   /* sends and receives */
	nng_aio *pause; /* sleeps between attempts */
	int efd;
	bool ctx_open;
	_Atomic int state;
	atomic_bool closing;
	nng_msg *request; /* the encoded request; each attempt sends a copy */
	nng_msg *reply;   /* set with RPC_DONE when a reply came */
	enum pr_op op;
	int timeout_ms;
	int attempts_max; /* <= 0: no bound */
	int attempts;     /* made so far */
	int64_t attempt_start_ms;
	struct rpc_link *link;
};

static void
rpc_async_done(struct cm_rpc_async *c)
{
	uint64_t one = 1;

	atomic_store(&c->state, RPC_DONE);
	if (write(c->efd, &one, sizeof(one)) != sizeof(one))
		cm_warn("rpc: eventfd");
}

/* Sends a copy of the request; the start of one attempt.  On nng's thread
 * or the loop's, never both: an attempt starts only when none runs. */
static void
rpc_async_send(struct cm_rpc_async *c)
{
	nng_msg *copy;

	c->attempts++;
	c->attempt_start_ms = cm_mono_ms();
	cm_rpc_redial_if_lost(c->sock, c->link);
	if (nng_msg_dup(&copy, c->request) != 0) {
		rpc_async_done(c);
		return;
	}
	atomic_store(&c->state, RPC_SENDING);
	nng_aio_set_timeout(c->aio, c->timeout_ms);
	nng_aio_set_msg(c->aio, copy);
	nng_ctx_send(c->ctx, c->aio);
}

/* An attempt failed: the next one after a pause, or the end. */
static void
rpc_async_retry(struct cm_rpc_async *c, int rv)
{
	int64_t waited = cm_mono_ms() - c->attempt_start_ms;

	if (rv == NNG_ECLOSED || rv == NNG_ECANCELED ||
	    atomic_load(&c->closing) ||
	    (c->attempts_max > 0 && c->attempts >= c->attempts_max)) {
		rpc_async_done(c);
		return;
	}
	/*
	 * A context that saw a failure is replaced, as cm_rpc_call's are, so
	 * no attempt inherits the state a cancelled one left in it.  Nothing
	 * else uses the context now.
	 */
	nng_ctx_close(c->ctx);
	if (nng_ctx_open(&c->ctx, c->sock) != 0) {
		c->ctx_open = false;
		rpc_async_done(c);
		return;
	}
	if (rv == NNG_ETIMEDOUT)
		cm_rpc_redial_if_lost(c->sock, c->link);
	if (waited >= CM_RPC_RETRY_MIN_MS) {
		rpc_async_send(c);
		return;
	}
	atomic_store(&c->state, RPC_PAUSED);
	nng_sleep_aio((nng_duration)(CM_RPC_RETRY_MIN_MS - waited), c->pause);
}

/* On an nng thread. */
static void
rpc_async_cb(void *arg)
{
	struct cm_rpc_async *c = arg;
	int state = atomic_load(&c->state);
	int rv = nng_aio_result(state == RPC_PAUSED ? c->pause : c->aio);
	int64_t left;

	switch (state) {
	case RPC_SENDING:
		if (rv != 0) {
			/* A failed send leaves the message with us. */
			nng_msg_free(nng_aio_get_msg(c->aio));
			nng_aio_set_msg(c->aio, NULL);
			rpc_async_retry(c, rv);
			return;
		}
		left = c->attempt_start_ms + c->timeout_ms - cm_mono_ms();
		atomic_store(&c->state, RPC_RECEIVING);
		nng_aio_set_timeout(c->aio, left > 0 ? (nng_duration)left : 1);
		nng_ctx_recv(c->ctx, c->aio);
		return;
	case RPC_RECEIVING:
		if (rv != 0) {
			rpc_async_retry(c, rv);
			return;
		}
		c->reply = nng_aio_get_msg(c->aio);
		nng_aio_set_msg(c->aio, NULL);
		rpc_async_done(c);
		return;
	case RPC_PAUSED:
		if (rv != 0 || atomic_load(&c->closing)) {
			rpc_async_done(c);
			return;
		}
		rpc_async_send(c);
		return;
	default:
		cm_warnx("rpc: completion of a call in state %d", state);
		abort();
	}
}

int
cm_rpc_async_open(struct cm_rpc_async **out, nng_socket s)
{
	struct cm_rpc_async *c;
	int rv;

	*out = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NNG_ENOMEM;
	c->sock = s;
	atomic_init(&c->state, RPC_IDLE);
	atomic_init(&c->closing, false);
	if ((c->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		free(c);
		return NNG_ENOMEM;
	}
	if ((rv = nng_aio_alloc(&c->aio, rpc_async_cb, c)) != 0) {
		close(c->efd);
		free(c);
		return rv;
	}
	if ((rv = nng_aio_alloc(&c->pause, rpc_async_cb, c)) != 0 ||
	    (rv = nng_ctx_open(&c->ctx, s)) != 0) {
		nng_aio_free(c->pause);
		nng_aio_free(c->aio);
		close(c->efd);
		free(c);
		return rv;
	}
	c->ctx_open = true;
	c->link = cm_rpc_link_of(s);
	*out = c;
	return 0;
}

void
cm_rpc_async_close(struct cm_rpc_async *c)
{
	if (c == NULL)
		return;
	atomic_store(&c->closing, true);
	/* Cancels what is under way and waits for the callback to return;
	 * the callback ends the call rather than start another attempt. */
	nng_aio_stop(c->aio);
	nng_aio_stop(c->pause);
	nng_msg_free(nng_aio_get_msg(c->aio));
	nng_aio_free(c->aio);
	nng_aio_free(c->pause);
	if (c->ctx_open)
		nng_ctx_close(c->ctx);
	nng_msg_free(c->request);
	nng_msg_free(c->reply);
	close(c->efd);
	free(c);
}

int
cm_rpc_async_fd(const struct cm_rpc_async *c)
{
	return c->efd;
}

bool
cm_rpc_async_busy(const struct cm_rpc_async *c)
{
	return atomic_load(&c->state) != RPC_IDLE;
}

enum cm_err
cm_rpc_async_start(struct cm_rpc_async *c, const struct pr_req *req,
    int timeout_ms, int attempts)
{
	if (atomic_load(&c->state) != RPC_IDLE)
		return CM_E_CONFLICT;
	if (!c->ctx_open) {
		if (nng_ctx_open(&c->ctx, c->sock) != 0)
			return CM_E_STORE_UNAVAILABLE;
		c->ctx_open = true;
	}
	if (cm_rpc_request(req, &c->request) != 0)
		return CM_E_INTERNAL;
	c->op = req->op;
	c->timeout_ms = timeout_ms > 0 ? timeout_ms : CM_RPC_TIMEOUT_MS;
	c->attempts_max = attempts;
	c->attempts = 0;
	c->reply = NULL;
	rpc_async_send(c);
	return CM_OK;
}

bool
cm_rpc_async_take(
    struct cm_rpc_async *c, struct pr_rep *rep, int *attempts_made)
{
	uint64_t n;
	char err[128];
	nng_msg *msg;

	if (atomic_load(&c->state) != RPC_DONE)
		return false;
	if (read(c->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		cm_warn("rpc: eventfd");
	memset(rep, 0, sizeof(*rep));
	msg = c->reply;
	c->reply = NULL;
	nng_msg_free(c->request);
	c->request = NULL;
	if (attempts_made != NULL)
		*attempts_made = c->attempts;
	atomic_store(&c->state, RPC_IDLE);
	if (msg == NULL) {
		rep->err = CM_E_STORE_UNAVAILABLE;
		return true;
	}
	if (pr_rep_decode(nng_msg_body(msg), nng_msg_len(msg), rep, err,
	        sizeof(err)) != 0) {
		cm_warnx("rpc: bad reply to %s from the store: %s",
		    pr_op_name(c->op), err);
		pr_rep_free(rep);
		memset(rep, 0, sizeof(*rep));
		rep->err = CM_E_INTERNAL;
	}
	nng_msg_free(msg);
	return true;
}
