/*
 * egress_conn.c: a connection of the egress proxy (egress_int.h), from its
 * request head to its close: the policy's verdict, DNS, connect address
 * after address, and the relay within the token bucket.
 *
 * A DNS answer may come for a connection that is gone: queries carry the
 * connection's id, never a pointer, and ids are never reused.
 */
#include "egress_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

/* The DNS answer's way back to its connection. */
struct eg_query {
	struct act_egress *e;
	uint64_t id;
};

/* ---- connections */

static struct eg_conn *
eg_find(struct act_egress *e, uint64_t id)
{
	for (int k = 0; k < e->conns_max; k++)
		if (e->conn[k] != NULL && e->conn[k]->id == id)
			return e->conn[k];
	return NULL;
}

void
act_egc_free(struct act_egress *e, struct eg_conn *c)
{
	for (int k = 0; k < e->conns_max; k++)
		if (e->conn[k] == c)
			e->conn[k] = NULL;
	if (c->cfd >= 0)
		close(c->cfd);
	if (c->sfd >= 0)
		close(c->sfd);
	free(c);
	e->n_conns--;
}

/* Answers the client with a canned response and closes after it. */
void
act_egc_reply(
    struct eg_conn *c, int status, const char *extra, const char *body)
{
	const char *text = status == 403   ? "Forbidden"
	                   : status == 407 ? "Proxy Authentication Required"
	                   : status == 431 ? "Request Header Fields Too Large"
	                   : status == 501 ? "Not Implemented"
	                   : status == 502 ? "Bad Gateway"
	                   : status == 504 ? "Gateway Timeout"
	                                   : "Bad Request";
	int n = snprintf(c->down, sizeof(c->down),
	    "HTTP/1.1 %d %s\r\n%sContent-Type: text/plain\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
	    status, text, extra, strlen(body), body);

	c->down_off = 0;
	c->down_len = n > 0 && (size_t)n < sizeof(c->down) ? (size_t)n : 0;
	c->state = EG_REPLY;
	c->deadline_ms = cm_mono_ms() + CM_EGRESS_HEAD_MS;
	if (c->sfd >= 0) {
		close(c->sfd);
		c->sfd = -1;
	}
}

/* A refusal by the policy: a 403, counted and reported (host only). */
static void
eg_refuse(struct act_egress *e, struct eg_conn *c, const char *reason)
{
	char body[CM_HOST_MAX + 96];

	snprintf(e->recent[e->refusals % CM_EGRESS_RECENT].host,
	    sizeof(e->recent[0].host), "%s", c->host);
	e->recent[e->refusals % CM_EGRESS_RECENT].at_ms = cm_mono_ms();
	e->refusals++;
	snprintf(body, sizeof(body), "spaced egress: %s refused (%s)\n",
	    c->host, reason);
	cm_debug("egress: %s refused: %s", c->host, reason);
	if (e->refused != NULL)
		e->refused(e->refused_arg, c->host, reason);
	act_egc_reply(c, 403, "X-Spaced-Egress: refused\r\n", body);
}

/* Connects to the next address judged; false when none is left. */
static bool
eg_connect_next(struct eg_conn *c)
{
	while (c->next_addr < c->n_addr) {
		const struct sockaddr_storage *a = &c->addr[c->next_addr++];
		socklen_t len = a->ss_family == AF_INET
		                    ? sizeof(struct sockaddr_in)
		                    : sizeof(struct sockaddr_in6);
		int fd = socket(a->ss_family,
		    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

		if (fd < 0)
			continue;
		if (connect(fd, (const struct sockaddr *)a, len) == 0 ||
		    errno == EINPROGRESS) {
			if (c->sfd >= 0)
				close(c->sfd);
			c->sfd = fd;
			c->state = EG_CONNECT;
			return true;
		}
		close(fd);
	}
	return false;
}

/* Adds one judged address (port set) to c. */
static void
eg_add_addr(struct eg_conn *c, int family, const void *addr)
{
	struct sockaddr_storage *a;

	if (c->n_addr >= CM_EGRESS_ADDRS_MAX)
		return;
	a = &c->addr[c->n_addr++];
	memset(a, 0, sizeof(*a));
	if (family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)a;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(c->port);
		memcpy(&s4->sin_addr, addr, 4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)a;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(c->port);
		memcpy(&s6->sin6_addr, addr, 16);
	}
}

static void
eg_go(struct eg_conn *c)
{
	c->deadline_ms = cm_mono_ms() + CM_EGRESS_CONNECT_MS;
	if (!eg_connect_next(c))
		act_egc_reply(c, 502, "", "spaced egress: cannot connect\n");
}

static void
eg_resolved(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
	struct eg_query *q = arg;
	struct act_egress *e = q->e;
	struct eg_conn *c;
	bool priv = false;

	(void)timeouts;
	c = status == ARES_EDESTRUCTION ? NULL : eg_find(e, q->id);
	free(q);
	if (c == NULL || c->state != EG_RESOLVE) {
		ares_freeaddrinfo(res);
		return;
	}
	/* Every address is judged, also those past the ones kept. */
	for (struct ares_addrinfo_node *n = res ? res->nodes : NULL;
	     status == ARES_SUCCESS && n != NULL; n = n->ai_next) {
		const void *a =
		    n->ai_family == AF_INET
		        ? (const void *)&((struct sockaddr_in *)n->ai_addr)
		              ->sin_addr
		        : (const void *)&((struct sockaddr_in6 *)n->ai_addr)
		              ->sin6_addr;

		if (n->ai_family != AF_INET && n->ai_family != AF_INET6)
			continue;
		if (cm_addr_private(n->ai_family, a))
			priv = true;
		eg_add_addr(c, n->ai_family, a);
	}
	ares_freeaddrinfo(res);
	if (c->n_addr == 0)
		act_egc_reply(
		    c, 502, "", "spaced egress: the name does not resolve\n");
	else if (priv && e->policy != NULL && e->policy->deny_private_networks)
		eg_refuse(e, c, ACT_EGRESS_PRIVATE);
	else
		eg_go(c);
}

/* Why the policy refused host: its private range, or allow_hosts. */
static const char *
eg_reason(const struct cm_policy *p, int kind, int family,
    const unsigned char *addr, const char *canon)
{
	/* The open policy with deny_private_networks: the same matcher says
	 * whether a name ("localhost") is private by itself. */
	static const struct cm_policy deny_only = {
	    .deny_private_networks = true};

	if (!p->deny_private_networks)
		return ACT_EGRESS_NOT_ALLOWED;
	if (kind == 1 ? cm_addr_private(family, addr)
	              : !cm_policy_allows_host(&deny_only, canon))
		return ACT_EGRESS_PRIVATE;
	return ACT_EGRESS_NOT_ALLOWED;
}

/* The head is in: judge the name, authorise, then resolve or connect. */
static void
eg_head_done(struct act_egress *e, struct eg_conn *c,
    const struct act_egress_head *h, const char *fwd)
{
	unsigned char addr[16];
	char canon[CM_HOST_MAX + 3];
	int family = 0, kind;
	size_t rest = c->head_len - h->head_len;

	snprintf(c->host, sizeof(c->host), "%s", h->host);
	c->port = h->port;
	c->connect = h->connect;
	if ((kind = cm_host_numeric(
	         h->host, &family, addr, canon, sizeof(canon))) < 0) {
		act_egc_reply(c, 400, "", "spaced egress: not a host\n");
		return;
	}
	/* Judged and reported as what it is: 0x7f000002 is 127.0.0.2. */
	snprintf(c->host, sizeof(c->host), "%s", canon);
	if (e->seen != NULL && !e->seen(e->seen_arg, c->host, c->port)) {
		eg_refuse(e, c, ACT_EGRESS_NOT_ALLOWED);
		return;
	}
	if (e->policy == NULL) {
		eg_refuse(e, c, ACT_EGRESS_NO_POLICY);
		return;
	}
	if (!cm_policy_allows_host(e->policy, canon)) {
		eg_refuse(
		    e, c, eg_reason(e->policy, kind, family, addr, canon));
		return;
	}
	/*
	 * The secret is asked for only now: what the policy refuses by its
	 * name is refused (and reported) whoever asks, which gives no one
	 * anything.  Chromium sends the secret only once a 407 made it ask
	 * (Fetch.authRequired), and a WebSocket's or a service worker's
	 * request may come before it has: a refusal must not hide behind
	 * that 407.  Nothing is resolved or connected without the secret.
	 */
	if (!h->auth_ok) {
		act_egc_reply(c, 407,
		    "Proxy-Authenticate: Basic realm=\"spaced\"\r\n",
		    "spaced egress: proxy authorization required\n");
		return;
	}
	/* What goes up first: the forwarded head and the body bytes that
	 * came with it (at most the body's length: a second request on the
	 * same connection is never relayed unjudged). */
	c->body_left = h->body_len;
	if (!c->connect) {
		memcpy(c->up, fwd, h->out_len);
		c->up_len = h->out_len;
		if (rest > c->body_left)
			rest = (size_t)c->body_left;
		memcpy(c->up + c->up_len, c->head + h->head_len, rest);
		c->up_len += rest;
		c->body_left -= rest;
	} else if (rest > 0) {
		/* A tunnel's first bytes came early: they go up as they are. */
		memcpy(c->up, c->head + h->head_len, rest);
		c->up_len = rest;
	}
	if (kind == 1) {
		eg_add_addr(c, family, addr);
		eg_go(c);
		return;
	}
	{
		struct ares_addrinfo_hints hints;
		struct eg_query *q = malloc(sizeof(*q));
		char port[8];

		if (q == NULL) {
			act_egc_reply(
			    c, 502, "", "spaced egress: out of memory\n");
			return;
		}
		q->e = e;
		q->id = c->id;
		memset(&hints, 0, sizeof(hints));
		hints.ai_family = AF_UNSPEC;
		hints.ai_socktype = SOCK_STREAM;
		snprintf(port, sizeof(port), "%u", c->port);
		c->state = EG_RESOLVE;
		c->deadline_ms = cm_mono_ms() + CM_EGRESS_CONNECT_MS;
		/* The answer may come at once (the hosts file): c may have
		 * moved on when this returns. */
		ares_getaddrinfo(e->ares, canon, port, &hints, eg_resolved, q);
	}
}

void
act_egc_read_head(struct act_egress *e, struct eg_conn *c)
{
	static char fwd[CM_EGRESS_BUF];
	struct act_egress_head h;
	ssize_t n = recv(
	    c->cfd, c->head + c->head_len, sizeof(c->head) - c->head_len, 0);
	int st;

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		act_egc_free(e, c);
		return;
	}
	if (n < 0)
		return;
	c->head_len += (size_t)n;
	st = act_egress_parse_head(
	    c->head, c->head_len, e->auth, &h, fwd, sizeof(fwd));
	if (st == 0)
		return;
	if (st != 200) {
		act_egc_reply(c, st, "", "spaced egress: bad request\n");
		return;
	}
	eg_head_done(e, c, &h, fwd);
}

/* ---- the relay and the bucket */

void
act_egc_refill(struct act_egress *e, int64_t now)
{
	int64_t dt = now - e->refill_ms;

	if (dt <= 0)
		return;
	e->refill_ms = now;
	e->tokens += e->rate * dt / 1000;
	if (e->tokens > e->rate)
		e->tokens = e->rate;
}

/* Reads what fd has into buf (within the bucket and limit); -1 on an
 * error, 0 at end of file, else 1. */
static int
eg_pull(struct act_egress *e, int fd, char *buf, size_t cap, size_t *len,
    uint64_t limit, bool *eof)
{
	size_t room = cap - *len;
	ssize_t n;

	if (room > limit)
		room = (size_t)limit;
	if (room > (uint64_t)e->tokens)
		room = (size_t)e->tokens;
	if (room == 0)
		return 1;
	n = recv(fd, buf + *len, room, 0);
	if (n == 0) {
		*eof = true;
		return 0;
	}
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 1 : -1;
	*len += (size_t)n;
	e->tokens -= n;
	return 1;
}

/* Writes what buf holds to fd; -1 on an error. */
int
act_egc_push(int fd, char *buf, size_t *off, size_t *len)
{
	ssize_t n;

	if (*len == *off)
		return 0;
	n = send(fd, buf + *off, *len - *off, MSG_NOSIGNAL);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	*off += (size_t)n;
	if (*off == *len)
		*off = *len = 0;
	return 0;
}

bool
act_egc_up_open(const struct eg_conn *c)
{
	return !c->c_eof && (c->connect || c->body_left > 0);
}

void
act_egc_relay(struct act_egress *e, struct eg_conn *c, short crev, short srev)
{
	size_t before = c->up_len + c->down_len;
	uint64_t lim = c->connect ? UINT64_MAX : c->body_left;
	size_t was;

	/* A client gone while its request has no body left to send. */
	if ((crev & (POLLHUP | POLLERR)) && !act_egc_up_open(c))
		goto gone;
	if ((crev & (POLLIN | POLLHUP | POLLERR)) && act_egc_up_open(c)) {
		was = c->up_len;
		if (eg_pull(e, c->cfd, c->up, sizeof(c->up), &c->up_len, lim,
		        &c->c_eof) < 0)
			goto gone;
		if (!c->connect)
			c->body_left -= c->up_len - was;
	}
	if ((srev & (POLLIN | POLLHUP | POLLERR)) && !c->s_eof &&
	    eg_pull(e, c->sfd, c->down, sizeof(c->down), &c->down_len,
	        UINT64_MAX, &c->s_eof) < 0)
		goto gone;
	if (act_egc_push(c->sfd, c->up, &c->up_off, &c->up_len) < 0 ||
	    act_egc_push(c->cfd, c->down, &c->down_off, &c->down_len) < 0)
		goto gone;
	if (c->up_len + c->down_len != before || (crev | srev) & POLLOUT)
		c->deadline_ms = cm_mono_ms() + e->idle_ms;
	/* The client sends no more: nor do we, once its bytes are up. */
	if (c->c_eof && c->up_len == 0 && !c->s_shut) {
		shutdown(c->sfd, SHUT_WR);
		c->s_shut = true;
	}
	/* The server is done: the client gets what is left, then the end. */
	if (c->s_eof && c->down_len == 0)
		goto gone;
	return;
gone:
	act_egc_free(e, c);
}

/* c's server socket became writable or failed while connecting. */
void
act_egc_connected(struct act_egress *e, struct eg_conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->sfd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 ||
	    err != 0) {
		if (!eg_connect_next(c))
			act_egc_reply(
			    c, 502, "", "spaced egress: cannot connect\n");
		return;
	}
	if (c->connect) {
		static const char ok[] =
		    "HTTP/1.1 200 Connection established\r\n\r\n";
		memcpy(c->down, ok, sizeof(ok) - 1);
		c->down_len = sizeof(ok) - 1;
	}
	c->state = EG_RELAY;
	c->deadline_ms = cm_mono_ms() + e->idle_ms;
}
