/*
 * listen.c: an nng listener that keeps accepting (listen.h says why).
 */
#include "listen.h"

#include <nng/protocol/pair0/pair.h>
#include <nng/transport/ipc/ipc.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

static int
listener_open(struct cm_listener *cl)
{
	nng_listener l;
	int rv;

	if ((rv = nng_listener_create(&l, cl->sock, cl->url)) != 0)
		return rv;
	if (cl->ipc_mode != 0 && strncmp(cl->url, "ipc://", 6) == 0 &&
	    (rv = nng_listener_set_int(
	         l, NNG_OPT_IPC_PERMISSIONS, cl->ipc_mode)) != 0) {
		nng_listener_close(l);
		return rv;
	}
	if ((rv = nng_listener_start(l, 0)) != 0) {
		nng_listener_close(l);
		return rv;
	}
	cl->l = l;
	cl->open = true;
	cl->errors = 0;
	return 0;
}

int
cm_listener_start(
    struct cm_listener *cl, nng_socket s, const char *url, int ipc_mode)
{
	memset(cl, 0, sizeof(*cl));
	cl->sock = s;
	cl->ipc_mode = ipc_mode;
	if ((size_t)snprintf(cl->url, sizeof(cl->url), "%s", url) >=
	    sizeof(cl->url))
		return NNG_EADDRINVAL;
	return listener_open(cl);
}

/* nng's counts of the listener's "other" errors and accepted connections;
 * false when it keeps no statistics (then there is nothing to go by). */
static bool
listener_counts(const struct cm_listener *cl, uint64_t *other, uint64_t *accept)
{
	nng_stat *all, *st, *o, *a;
	bool ok = false;

	if (nng_stats_get(&all) != 0)
		return false;
	if ((st = nng_stat_find_listener(all, cl->l)) != NULL &&
	    (o = nng_stat_find(st, "other")) != NULL &&
	    (a = nng_stat_find(st, "accept")) != NULL) {
		*other = nng_stat_value(o);
		*accept = nng_stat_value(a);
		ok = true;
	}
	nng_stats_free(all);
	return ok;
}

static void
probe_end(struct cm_listener *cl)
{
	if (cl->probing)
		nng_close(cl->probe);
	cl->probing = false;
}

/* A connection of our own, for the listener to take in.  Any protocol
 * does: the listener accepts before the socket refuses a wrong peer. */
static void
probe_start(struct cm_listener *cl, uint64_t accepts, int64_t now_ms)
{
	if (nng_pair0_open(&cl->probe) != 0)
		return;
	if (nng_dial(cl->probe, cl->url, NULL, NNG_FLAG_NONBLOCK) != 0) {
		nng_close(cl->probe);
		return;
	}
	cl->probing = true;
	cl->accepts = accepts;
	cl->probe_end_ms = now_ms + CM_LISTEN_PROBE_MS;
}

int64_t
cm_listener_due(const struct cm_listener *cl)
{
	return cl->next_ms;
}

bool
cm_listener_tend(struct cm_listener *cl, int64_t now_ms)
{
	uint64_t other = 0, accept = 0;
	int rv;

	if (now_ms < cl->next_ms)
		return false;
	cl->next_ms = now_ms + CM_LISTEN_LOOK_MS;
	if (cl->open) {
		if (!listener_counts(cl, &other, &accept))
			return false;
		if (cl->probing && accept == cl->accepts &&
		    now_ms >= cl->probe_end_ms) {
			/* Stopped.  Closing it unlinks an ipc socket file:
			 * the new one binds the path afresh. */
			probe_end(cl);
			nng_listener_close(cl->l);
			cl->open = false;
		} else if (cl->probing) {
			if (accept != cl->accepts)
				probe_end(cl); /* it still accepts */
			return false;
		} else {
			if (other != cl->errors)
				probe_start(cl, accept, now_ms);
			cl->errors = other;
			return false;
		}
	}
	if ((rv = listener_open(cl)) != 0) {
		/* Tried again at the next look. */
		cm_warnx("listen: cannot listen again on %s: %s", cl->url,
		    nng_strerror(rv));
		return false;
	}
	cl->renewed++;
	cm_warnx("listen: %s took in no connection for %d ms after one failed "
	         "before it was accepted; listening again (nng stops its "
	         "listener then)",
	    cl->url, CM_LISTEN_PROBE_MS);
	return true;
}
