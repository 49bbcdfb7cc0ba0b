/*
 * listen.c: an nng listener that keeps accepting (listen.h says why).
 */
#include "listen.h"

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

/* nng's count of the listener's "other" errors, or UINT64_MAX when it
 * keeps no statistics (then there is nothing to go by). */
static uint64_t
listener_errors(const struct cm_listener *cl)
{
	nng_stat *all, *st, *other;
	uint64_t n = UINT64_MAX;

	if (nng_stats_get(&all) != 0)
		return UINT64_MAX;
	if ((st = nng_stat_find_listener(all, cl->l)) != NULL &&
	    (other = nng_stat_find(st, "other")) != NULL)
		n = nng_stat_value(other);
	nng_stats_free(all);
	return n;
}

int64_t
cm_listener_due(const struct cm_listener *cl)
{
	return cl->next_ms;
}

bool
cm_listener_tend(struct cm_listener *cl, int64_t now_ms)
{
	uint64_t errors;
	int rv;

	if (now_ms < cl->next_ms)
		return false;
	cl->next_ms = now_ms + CM_LISTEN_LOOK_MS;
	if (cl->open) {
		if ((errors = listener_errors(cl)) == UINT64_MAX ||
		    errors == cl->errors)
			return false;
		/* A listener that nng may have stopped.  Closing it unlinks
		 * an ipc socket file: the new one binds the path afresh. */
		nng_listener_close(cl->l);
		cl->open = false;
	}
	if ((rv = listener_open(cl)) != 0) {
		/* Tried again at the next look. */
		cm_warnx("listen: cannot listen again on %s: %s", cl->url,
		    nng_strerror(rv));
		return false;
	}
	cl->renewed++;
	cm_warnx("listen: a connection to %s failed before it was accepted; "
	         "listening again (nng stops its listener then)",
	    cl->url);
	return true;
}
