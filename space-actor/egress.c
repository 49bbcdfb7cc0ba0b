/*
 * egress.c: the egress proxy (egress.h).
 *
 * A connection goes HEAD (reading the request head) -> RESOLVE (c-ares,
 * names only) -> CONNECT (non-blocking, address after address) -> RELAY,
 * or to REPLY (a canned answer: 403, 407, 4xx/5xx) and then closes.  Each
 * holds CM_EGRESS_HEAD_MAX + 2 * CM_EGRESS_BUF bytes, allocated when it
 * is accepted and freed when it closes, so an idle proxy costs almost
 * nothing (the actor's PSS target is 2 MiB).
 *
 * This file is the listener, the poll set and each connection's turn;
 * egress_conn.c is a connection's own life.
 */
#include "egress.h"
#include "egress_int.h"

#include <ares.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

/* ---- the proxy */

int
act_egress_open(const struct act_egress_opts *o, struct act_egress **out,
    char *err, size_t errlen)
{
	struct act_egress *e = calloc(1, sizeof(*e));
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	struct ares_options ao;
	unsigned char raw[CM_EGRESS_SECRET_BYTES];
	char cred[sizeof(ACT_EGRESS_USER) + 2 * CM_EGRESS_SECRET_BYTES + 1];
	int n;

	*out = NULL;
	if (e == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	e->lfd = -1;
	e->conns_max = o->conns_max < 1 ? 1
	               : o->conns_max > CM_EGRESS_CONNS_MAX
	                   ? CM_EGRESS_CONNS_MAX
	                   : o->conns_max;
	e->rate = o->bytes_per_s < CM_EGRESS_BPS_MIN   ? CM_EGRESS_BPS_MIN
	          : o->bytes_per_s > CM_EGRESS_BPS_MAX ? CM_EGRESS_BPS_MAX
	                                               : o->bytes_per_s;
	e->tokens = e->rate;
	e->refill_ms = cm_mono_ms();
	e->head_ms = o->head_ms > 0 ? o->head_ms : CM_EGRESS_HEAD_MS;
	e->idle_ms = o->idle_ms > 0 ? o->idle_ms : CM_EGRESS_IDLE_MS;
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		snprintf(err, errlen, "no random bytes for the proxy secret");
		free(e);
		return -1;
	}
	for (size_t k = 0; k < sizeof(raw); k++)
		snprintf(e->secret + 2 * k, 3, "%02x", raw[k]);
	n = snprintf(cred, sizeof(cred), "%s:%s", ACT_EGRESS_USER, e->secret);
	memcpy(e->auth, "Basic ", 6);
	EVP_EncodeBlock((unsigned char *)e->auth + 6, (unsigned char *)cred, n);
	memset(&ao, 0, sizeof(ao));
	ao.timeout = CM_EGRESS_DNS_TIMEOUT_MS;
	ao.tries = CM_EGRESS_DNS_TRIES;
	if (ares_library_init(ARES_LIB_INIT_ALL) != ARES_SUCCESS ||
	    ares_init_options(&e->ares, &ao,
	        ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES) != ARES_SUCCESS) {
		snprintf(err, errlen, "cannot start the resolver");
		free(e);
		return -1;
	}
	if (o->dns != NULL &&
	    ares_set_servers_ports_csv(e->ares, o->dns) != ARES_SUCCESS) {
		snprintf(err, errlen, "bad DNS servers");
		act_egress_close(e);
		return -1;
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((e->lfd = socket(
	         AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(e->lfd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    listen(e->lfd, CM_EGRESS_CONNS_MAX) != 0 ||
	    getsockname(e->lfd, (struct sockaddr *)&sin, &sl) != 0) {
		snprintf(err, errlen, "cannot listen on 127.0.0.1: %s",
		    strerror(errno));
		act_egress_close(e);
		return -1;
	}
	e->port = ntohs(sin.sin_port);
	*out = e;
	return 0;
}

void
act_egress_policy(struct act_egress *e, const struct cm_policy *policy,
    act_egress_refused_fn fn, void *arg)
{
	e->policy = policy;
	e->refused = fn;
	e->refused_arg = arg;
}

void
act_egress_observe(struct act_egress *e, act_egress_seen_fn fn, void *arg)
{
	e->seen = fn;
	e->seen_arg = arg;
}

int
act_egress_port(const struct act_egress *e)
{
	return e->port;
}

const char *
act_egress_secret(const struct act_egress *e)
{
	return e->secret;
}

bool
act_egress_refused_since(
    const struct act_egress *e, const char *host, int64_t since_ms)
{
	unsigned char addr[16];
	char canon[CM_HOST_MAX + 3];
	int family;
	uint64_t n =
	    e->refusals < CM_EGRESS_RECENT ? e->refusals : CM_EGRESS_RECENT;

	if (cm_host_numeric(host, &family, addr, canon, sizeof(canon)) < 0)
		return false;
	for (uint64_t k = 0; k < n; k++)
		if (e->recent[k].at_ms >= since_ms &&
		    strcmp(e->recent[k].host, canon) == 0)
			return true;
	return false;
}

int
act_egress_conns(const struct act_egress *e)
{
	return e->n_conns;
}

uint64_t
act_egress_refusals(const struct act_egress *e)
{
	return e->refusals;
}

static int64_t
eg_min(int64_t a, int64_t b)
{
	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

static int
eg_add(struct pollfd *fds, int max, int *n, int fd, short ev)
{
	if (*n >= max)
		return -1;
	fds[*n].fd = fd;
	fds[*n].events = ev;
	fds[*n].revents = 0;
	return (*n)++;
}

int
act_egress_pollfds(
    struct act_egress *e, struct pollfd *fds, int max, int64_t *wake_ms)
{
	ares_socket_t socks[ARES_GETSOCK_MAXNUM];
	struct timeval tv, *tvp;
	int n = 0, bits;
	int64_t now = cm_mono_ms();
	bool starved;

	act_egc_refill(e, now);
	starved = e->tokens <= 0;
	e->lidx = e->n_conns < e->conns_max
	              ? eg_add(fds, max, &n, e->lfd, POLLIN)
	              : -1;
	e->n_dns = 0;
	bits = ares_getsock(e->ares, socks, ARES_GETSOCK_MAXNUM);
	for (int k = 0; k < ARES_GETSOCK_MAXNUM && e->n_dns < CM_EGRESS_DNS_FDS;
	     k++) {
		/* Not c-ares's ARES_GETSOCK_WRITABLE: it shifts a signed 1
		 * into the sign bit for the sixteenth socket. */
		unsigned ub = (unsigned)bits;
		short ev =
		    (short)(((ub >> k) & 1u ? POLLIN : 0) |
		            ((ub >> (k + ARES_GETSOCK_MAXNUM)) & 1u ? POLLOUT
		                                                    : 0));
		if (ev == 0)
			continue;
		e->dns_fd[e->n_dns] = socks[k];
		e->dns_idx[e->n_dns++] = eg_add(fds, max, &n, socks[k], ev);
	}
	if ((tvp = ares_timeout(e->ares, NULL, &tv)) != NULL)
		*wake_ms = eg_min(*wake_ms,
		    now + tvp->tv_sec * 1000 + (tvp->tv_usec + 999) / 1000);
	for (int k = 0; k < e->conns_max; k++) {
		struct eg_conn *c = e->conn[k];
		short cev = 0, sev = 0;

		if (c == NULL)
			continue;
		*wake_ms = eg_min(*wake_ms, c->deadline_ms);
		switch (c->state) {
		case EG_HEAD:
			cev = POLLIN;
			break;
		case EG_RESOLVE:
			break;
		case EG_CONNECT:
			sev = POLLOUT;
			break;
		case EG_REPLY:
			cev = POLLOUT;
			break;
		case EG_RELAY:
			if (act_egc_up_open(c) && c->up_len < sizeof(c->up) &&
			    !starved)
				cev |= POLLIN;
			if (!c->s_eof && c->down_len < sizeof(c->down) &&
			    !starved)
				sev |= POLLIN;
			if (c->up_len > 0)
				sev |= POLLOUT;
			if (c->down_len > 0)
				cev |= POLLOUT;
			break;
		}
		c->cidx = c->cfd >= 0 ? eg_add(fds, max, &n, c->cfd, cev) : -1;
		c->sidx = c->sfd >= 0 ? eg_add(fds, max, &n, c->sfd, sev) : -1;
	}
	if (starved)
		*wake_ms = eg_min(*wake_ms, now + CM_EGRESS_REFILL_MS);
	return n;
}

static short
eg_rev(const struct pollfd *fds, int nfds, int idx, int fd)
{
	return idx >= 0 && idx < nfds && fds[idx].fd == fd ? fds[idx].revents
	                                                   : 0;
}

static void
eg_accept(struct act_egress *e)
{
	while (e->n_conns < e->conns_max) {
		int fd =
		    accept4(e->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct eg_conn *c;
		int k;

		if (fd < 0)
			return;
		if ((c = malloc(sizeof(*c))) == NULL) {
			close(fd);
			return;
		}
		memset(c, 0, offsetof(struct eg_conn, head));
		c->state = EG_HEAD;
		c->id = ++e->next_id;
		c->cfd = fd;
		c->sfd = -1;
		c->cidx = c->sidx = -1;
		c->deadline_ms = cm_mono_ms() + e->head_ms;
		for (k = 0; e->conn[k] != NULL; k++)
			;
		e->conn[k] = c;
		e->n_conns++;
	}
}

void
act_egress_step(struct act_egress *e, const struct pollfd *fds, int nfds)
{
	int64_t now = cm_mono_ms();

	act_egc_refill(e, now);
	/* DNS first: answers move connections on to CONNECT. */
	for (int k = 0; k < e->n_dns; k++) {
		short rev = eg_rev(fds, nfds, e->dns_idx[k], e->dns_fd[k]);
		if (rev != 0)
			ares_process_fd(e->ares,
			    rev & (POLLIN | POLLHUP | POLLERR)
			        ? e->dns_fd[k]
			        : ARES_SOCKET_BAD,
			    rev & POLLOUT ? e->dns_fd[k] : ARES_SOCKET_BAD);
	}
	e->n_dns = 0;
	/* Timeouts of queries. */
	ares_process_fd(e->ares, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	for (int k = 0; k < e->conns_max; k++) {
		struct eg_conn *c = e->conn[k];
		short crev, srev;

		if (c == NULL)
			continue;
		crev = c->cfd >= 0 ? eg_rev(fds, nfds, c->cidx, c->cfd) : 0;
		srev = c->sfd >= 0 ? eg_rev(fds, nfds, c->sidx, c->sfd) : 0;
		c->cidx = c->sidx = -1;
		switch (c->state) {
		case EG_HEAD:
			if (crev != 0)
				act_egc_read_head(e, c);
			break;
		case EG_RESOLVE:
			break;
		case EG_CONNECT:
			if (srev != 0)
				act_egc_connected(e, c);
			break;
		case EG_REPLY:
			if (crev & (POLLHUP | POLLERR) ||
			    (crev & POLLOUT &&
			        (act_egc_push(c->cfd, c->down, &c->down_off,
			             &c->down_len) < 0 ||
			            c->down_len == 0))) {
				/* Said: closing with unread input would reset
				 * the connection before the client read it. */
				shutdown(c->cfd, SHUT_WR);
				act_egc_free(e, c);
			}
			break;
		case EG_RELAY:
			if (crev != 0 || srev != 0)
				act_egc_relay(e, c, crev, srev);
			break;
		}
	}
	for (int k = 0; k < e->conns_max; k++) {
		struct eg_conn *c = e->conn[k];

		if (c == NULL || now < c->deadline_ms)
			continue;
		if (c->state == EG_RESOLVE || c->state == EG_CONNECT)
			act_egc_reply(c, 504, "", "spaced egress: timed out\n");
		else
			act_egc_free(e, c);
	}
	if (e->lidx >= 0 && eg_rev(fds, nfds, e->lidx, e->lfd) & POLLIN)
		eg_accept(e);
	e->lidx = -1;
}

void
act_egress_close(struct act_egress *e)
{
	if (e == NULL)
		return;
	for (int k = 0; k < CM_EGRESS_CONNS_MAX; k++)
		if (e->conn[k] != NULL)
			act_egc_free(e, e->conn[k]);
	/* Pending queries are called back with ARES_EDESTRUCTION. */
	if (e->ares != NULL)
		ares_destroy(e->ares);
	if (e->lfd >= 0)
		close(e->lfd);
	free(e);
}
