#include "rpc.h"

#include <errno.h>
#include <nng/protocol/reqrep0/req.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "clock.h"
#include "ids.h"
#include "limits.h"
#include "log.h"

/*
 * nng 1.5.2 can leave a dialer that never redials: a REQ socket that
 * dials while the store is being killed may stay without a pipe for good,
 * while its siblings reconnect to the restarted store (measured: an actor
 * started as the store died waited on it for ever).  So every socket
 * opened here keeps its dialer and a count of its pipes, and a call on a
 * socket that has had no pipe for CM_RPC_RESEND_MS replaces the dialer,
 * before it sends and again after a timeout.  A healthy dialer that is
 * merely waiting to reconnect loses nothing by being replaced.  Entries
 * are never freed (a process opens a handful of sockets); the pipe
 * callbacks point at them.
 */
#define RPC_LINKS_MAX 64

struct rpc_link {
	uint32_t socket_id;
	nng_dialer dialer;
	int64_t dialed_ms; /* monotonic */
	atomic_int pipes;
	char url[CM_IPC_PATH_MAX + 16];
};

static struct rpc_link *rpc_links[RPC_LINKS_MAX];
static pthread_mutex_t rpc_links_lock = PTHREAD_MUTEX_INITIALIZER;

/* On an nng thread: a pipe to the store came or went. */
static void
rpc_pipe_event(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct rpc_link *l = arg;

	(void)p;
	atomic_fetch_add(&l->pipes, ev == NNG_PIPE_EV_ADD_PRE ? 1 : -1);
}

/* The link of socket s; NULL when it has none.  Call locked. */
static struct rpc_link *
rpc_link_find(nng_socket s)
{
	uint32_t id = (uint32_t)nng_socket_id(s);

	for (size_t i = 0; i < RPC_LINKS_MAX && rpc_links[i] != NULL; i++)
		if (rpc_links[i]->socket_id == id)
			return rpc_links[i];
	return NULL;
}

/* Dials url for s, remembering the dialer when there is room to. */
static int
rpc_dial(nng_socket s, const char *url)
{
	struct rpc_link *l;
	size_t i;
	int rv;

	pthread_mutex_lock(&rpc_links_lock);
	if ((l = rpc_link_find(s)) == NULL) {
		for (i = 0; i < RPC_LINKS_MAX && rpc_links[i] != NULL; i++)
			;
		if (i < RPC_LINKS_MAX && strlen(url) < sizeof(l->url) &&
		    (l = calloc(1, sizeof(*l))) != NULL)
			rpc_links[i] = l;
	}
	if (l != NULL) {
		/* A socket id seen before belongs to a closed socket. */
		l->socket_id = (uint32_t)nng_socket_id(s);
		atomic_store(&l->pipes, 0);
		snprintf(l->url, sizeof(l->url), "%s", url);
		if ((rv = nng_pipe_notify(
		         s, NNG_PIPE_EV_ADD_PRE, rpc_pipe_event, l)) != 0 ||
		    (rv = nng_pipe_notify(
		         s, NNG_PIPE_EV_REM_POST, rpc_pipe_event, l)) != 0) {
			pthread_mutex_unlock(&rpc_links_lock);
			return rv;
		}
	}
	rv = nng_dial(s, url, l != NULL ? &l->dialer : NULL, NNG_FLAG_NONBLOCK);
	if (l != NULL)
		l->dialed_ms = cm_mono_ms();
	pthread_mutex_unlock(&rpc_links_lock);
	return rv;
}

/*
 * A socket that has had no pipe for a while gets a new dialer.  link is
 * the socket's link when the caller knows it: a socket with a pipe, the
 * case of nearly every call, then costs no lock (the process's callers
 * would all take the same one).
 */
static void
rpc_redial_if_lost(nng_socket s, struct rpc_link *link)
{
	struct rpc_link *l;
	int64_t now;

	if (link != NULL && atomic_load(&link->pipes) > 0)
		return;
	now = cm_mono_ms();
	pthread_mutex_lock(&rpc_links_lock);
	if ((l = rpc_link_find(s)) != NULL && atomic_load(&l->pipes) <= 0 &&
	    now - l->dialed_ms >= CM_RPC_RESEND_MS) {
		nng_dialer old = l->dialer;

		if (nng_dial(s, l->url, &l->dialer, NNG_FLAG_NONBLOCK) == 0) {
			nng_dialer_close(old);
			l->dialed_ms = now;
			cm_warnx("rpc: no pipe to %s; dialing again", l->url);
		}
	}
	pthread_mutex_unlock(&rpc_links_lock);
}

/*
 * Each thread keeps a context and an aio per socket it calls through:
 * opening and closing them took a tenth of a call's work.  A context
 * that saw a failure is closed rather than reused.
 */
#define RPC_SLOTS 4

struct rpc_slot {
	uint32_t socket_id;
	nng_ctx ctx;
	nng_aio *aio;
	struct rpc_link *link; /* the socket's, if it has one */
};

struct rpc_cache {
	struct rpc_slot slot[RPC_SLOTS];
	size_t n;
};

static pthread_key_t rpc_key;
static pthread_once_t rpc_once = PTHREAD_ONCE_INIT;
static int rpc_key_ok;

static void
rpc_slot_close(struct rpc_slot *sl)
{
	nng_aio_free(sl->aio);
	nng_ctx_close(sl->ctx);
}

static void
rpc_cache_free(void *arg)
{
	struct rpc_cache *c = arg;

	for (size_t i = 0; i < c->n; i++)
		rpc_slot_close(&c->slot[i]);
	free(c);
}

static void
rpc_key_init(void)
{
	rpc_key_ok = pthread_key_create(&rpc_key, rpc_cache_free) == 0;
}

/* The calling thread's context for s, opened on first use; NULL on error. */
static struct rpc_slot *
rpc_slot_get(nng_socket s)
{
	uint32_t id = (uint32_t)nng_socket_id(s);
	struct rpc_cache *c;
	struct rpc_slot *sl;

	pthread_once(&rpc_once, rpc_key_init);
	if (!rpc_key_ok)
		return NULL;
	if ((c = pthread_getspecific(rpc_key)) == NULL) {
		if ((c = calloc(1, sizeof(*c))) == NULL)
			return NULL;
		if (pthread_setspecific(rpc_key, c) != 0) {
			free(c);
			return NULL;
		}
	}
	for (size_t i = 0; i < c->n; i++)
		if (c->slot[i].socket_id == id)
			return &c->slot[i];
	if (c->n == RPC_SLOTS) { /* the oldest makes room */
		rpc_slot_close(&c->slot[0]);
		memmove(&c->slot[0], &c->slot[1],
		    (RPC_SLOTS - 1) * sizeof(c->slot[0]));
		c->n--;
	}
	sl = &c->slot[c->n];
	sl->socket_id = id;
	pthread_mutex_lock(&rpc_links_lock);
	sl->link = rpc_link_find(s);
	pthread_mutex_unlock(&rpc_links_lock);
	if (nng_aio_alloc(&sl->aio, NULL, NULL) != 0)
		return NULL;
	if (nng_ctx_open(&sl->ctx, s) != 0) {
		nng_aio_free(sl->aio);
		return NULL;
	}
	c->n++;
	return sl;
}

/* Closes the calling thread's context sl, which saw a failure. */
static void
rpc_slot_drop(struct rpc_slot *sl)
{
	struct rpc_cache *c = pthread_getspecific(rpc_key);
	size_t i = (size_t)(sl - c->slot);

	rpc_slot_close(sl);
	memmove(
	    &c->slot[i], &c->slot[i + 1], (c->n - i - 1) * sizeof(c->slot[0]));
	c->n--;
}

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
	    (rv = rpc_dial(*s, url)) != 0) {
		nng_close(*s);
		return rv;
	}
	return 0;
}

int
cm_rpc_request(const struct pr_req *req, nng_msg **out)
{
	struct pr_req copy;
	char op_id[CM_UUID_LEN];
	char *buf = NULL;
	size_t len = 0;
	nng_msg *msg = NULL;

	*out = NULL;
	copy = *req;
	if (pr_op_is_write(req->op) && req->op_id == NULL) {
		cm_uuid7(op_id);
		copy.op_id = op_id;
	}
	if (pr_req_encode(&copy, &buf, &len) != 0) {
		cm_warnx("rpc: cannot encode %s", pr_op_name(req->op));
		return -1;
	}
	if (nng_msg_alloc(&msg, 0) != 0 || nng_msg_append(msg, buf, len) != 0) {
		free(buf);
		nng_msg_free(msg);
		return -1;
	}
	free(buf);
	*out = msg;
	return 0;
}

/*
 * One attempt of a synchronous call: sends a copy of msg on the calling
 * thread's context for s and waits up to attempt_ms for the reply, into
 * *reply.  Returns 0 or the nng error.
 */
static int
rpc_attempt(nng_socket s, nng_msg *msg, int attempt_ms, nng_msg **reply)
{
	struct rpc_slot *sl;
	struct rpc_link *link;
	nng_msg *copy;
	int rv;

	if ((sl = rpc_slot_get(s)) == NULL) {
		rpc_redial_if_lost(s, NULL);
		return NNG_ENOMEM;
	}
	link = sl->link;
	rpc_redial_if_lost(s, link);
	if ((rv = nng_msg_dup(&copy, msg)) != 0)
		return rv;
	/*
	 * nng 1.5.2 has no synchronous context calls; an aio does the same.
	 * The send completes before the receive starts, so a timed-out
	 * receive is never cancelled with its send still in flight (a known
	 * crash of this nng version).
	 */
	nng_aio_set_timeout(sl->aio, attempt_ms);
	nng_aio_set_msg(sl->aio, copy);
	nng_ctx_send(sl->ctx, sl->aio);
	nng_aio_wait(sl->aio);
	if ((rv = nng_aio_result(sl->aio)) != 0) {
		/* A failed send leaves the message with us. */
		nng_msg_free(nng_aio_get_msg(sl->aio));
		goto failed;
	}
	nng_ctx_recv(sl->ctx, sl->aio);
	nng_aio_wait(sl->aio);
	if ((rv = nng_aio_result(sl->aio)) != 0)
		goto failed;
	*reply = nng_aio_get_msg(sl->aio);
	nng_aio_set_msg(sl->aio, NULL);
	return 0;

failed:
	rpc_slot_drop(sl);
	if (rv == NNG_ETIMEDOUT)
		rpc_redial_if_lost(s, link);
	return rv;
}

enum cm_err
cm_rpc_call(
    nng_socket s, const struct pr_req *req, struct pr_rep *rep, int timeout_ms)
{
	nng_msg *msg = NULL, *reply = NULL;
	int64_t deadline, left;
	char err[128];
	int rv;

	memset(rep, 0, sizeof(*rep));
	if (timeout_ms <= 0)
		timeout_ms = CM_RPC_TIMEOUT_MS;
	deadline = cm_mono_ms() + timeout_ms;

	if (cm_rpc_request(req, &msg) != 0) {
		rep->err = CM_E_INTERNAL;
		return CM_E_INTERNAL;
	}
	/*
	 * Attempts of at most CM_RPC_ATTEMPT_MS, each a copy of one message
	 * (a write keeps its op_id): a dialer that nng left without a pipe
	 * is replaced between two of them, not only once the whole call
	 * has timed out.
	 */
	do {
		if ((left = deadline - cm_mono_ms()) < 1)
			left = 1;
		rv = rpc_attempt(s, msg,
		    (int)(left < CM_RPC_ATTEMPT_MS ? left : CM_RPC_ATTEMPT_MS),
		    &reply);
	} while (rv == NNG_ETIMEDOUT && cm_mono_ms() < deadline);
	nng_msg_free(msg);
	if (rv != 0) {
		rep->err = CM_E_STORE_UNAVAILABLE;
		return CM_E_STORE_UNAVAILABLE;
	}
	rv = pr_rep_decode(
	    nng_msg_body(reply), nng_msg_len(reply), rep, err, sizeof(err));
	nng_msg_free(reply);
	if (rv != 0) {
		cm_warnx("rpc: bad reply to %s from the store: %s",
		    pr_op_name(req->op), err);
		pr_rep_free(rep);
		memset(rep, 0, sizeof(*rep));
		rep->err = CM_E_INTERNAL;
		return CM_E_INTERNAL;
	}
	return CM_OK;
}

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
	rpc_redial_if_lost(c->sock, c->link);
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
		rpc_redial_if_lost(c->sock, c->link);
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
	pthread_mutex_lock(&rpc_links_lock);
	c->link = rpc_link_find(s);
	pthread_mutex_unlock(&rpc_links_lock);
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

int
cm_ipc_url(char *buf, size_t len, const char *run_dir, const char *file)
{
	int n = snprintf(buf, len, "ipc://%s/%s", run_dir, file);

	if (n < 0 || (size_t)n >= len ||
	    (size_t)n - strlen("ipc://") > CM_IPC_PATH_MAX)
		return -1;
	return 0;
}
