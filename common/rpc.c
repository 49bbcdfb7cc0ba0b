/*
 * rpc.c: the store's client: its sockets and their dialers (with the
 * defence against a dialer that never redials, below), and the
 * synchronous call every thread makes through its own contexts.  The
 * asynchronous call of a loop that must stay live is rpc_async.c's.
 */
#include "rpc.h"
#include "rpc_int.h"

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
	int64_t said_ms;   /* when a redial was last logged */
	unsigned unsaid;   /* redials since, not logged */
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
void
cm_rpc_redial_if_lost(nng_socket s, struct rpc_link *link)
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
			/* Every CM_RPC_RESEND_MS while the store is away, in
			 * every process that calls it: the line is said once
			 * per CM_RPC_REDIAL_LOG_MS, with the count between. */
			if (l->said_ms == 0 ||
			    now - l->said_ms >= CM_RPC_REDIAL_LOG_MS) {
				cm_warnx(
				    "rpc: no pipe to %s; dialing again (%u "
				    "more times since this was last said)",
				    l->url, l->unsaid);
				l->said_ms = now;
				l->unsaid = 0;
			} else {
				l->unsaid++;
			}
		}
	}
	pthread_mutex_unlock(&rpc_links_lock);
}

struct rpc_link *
cm_rpc_link_of(nng_socket s)
{
	struct rpc_link *l;

	pthread_mutex_lock(&rpc_links_lock);
	l = rpc_link_find(s);
	pthread_mutex_unlock(&rpc_links_lock);
	return l;
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
		cm_rpc_redial_if_lost(s, NULL);
		return NNG_ENOMEM;
	}
	link = sl->link;
	cm_rpc_redial_if_lost(s, link);
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
		cm_rpc_redial_if_lost(s, link);
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

int
cm_ipc_url(char *buf, size_t len, const char *run_dir, const char *file)
{
	int n = snprintf(buf, len, "ipc://%s/%s", run_dir, file);

	if (n < 0 || (size_t)n >= len ||
	    (size_t)n - strlen("ipc://") > CM_IPC_PATH_MAX)
		return -1;
	return 0;
}
