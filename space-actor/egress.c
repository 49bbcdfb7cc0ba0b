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
 * A DNS answer may come for a connection that is gone: queries carry the
 * connection's id, never a pointer, and ids are never reused.
 */
#include "egress.h"

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

enum eg_state { EG_HEAD, EG_RESOLVE, EG_CONNECT, EG_RELAY, EG_REPLY };

struct eg_conn {
	enum eg_state state;
	uint64_t id;
	int cfd, sfd;   /* client (the browser), server */
	int cidx, sidx; /* their pollfds in the last act_egress_pollfds */
	int64_t deadline_ms;
	bool connect;       /* a tunnel, else one forwarded request */
	uint64_t body_left; /* forward: request body bytes still to relay */
	bool c_eof, s_eof;  /* read 0 from the client / the server */
	bool s_shut;        /* the server was told we send no more */
	char host[CM_HOST_MAX + 3];
	uint16_t port;
	struct sockaddr_storage addr[CM_EGRESS_ADDRS_MAX];
	size_t n_addr, next_addr;
	size_t head_len, up_off, up_len, down_off, down_len;
	/* The buffers last: a new connection zeroes only what precedes. */
	char head[CM_EGRESS_HEAD_MAX];
	char up[CM_EGRESS_BUF];   /* to the server */
	char down[CM_EGRESS_BUF]; /* to the client */
};

struct act_egress {
	int lfd, port, lidx;
	int conns_max;
	int head_ms, idle_ms; /* the opts', defaults filled in */
	struct eg_conn *conn[CM_EGRESS_CONNS_MAX];
	int n_conns;
	uint64_t next_id;
	uint64_t refusals;
	ares_channel ares;
	ares_socket_t dns_fd[CM_EGRESS_DNS_FDS];
	int dns_idx[CM_EGRESS_DNS_FDS];
	int n_dns;
	/* The token bucket: bytes that may move now, both ways together. */
	int64_t rate, tokens, refill_ms;
	const struct cm_policy *policy;
	/* The last CM_EGRESS_RECENT refusals, a ring (slot refusals %). */
	struct {
		char host[CM_HOST_MAX + 3];
		int64_t at_ms;
	} recent[CM_EGRESS_RECENT];
	act_egress_refused_fn refused;
	void *refused_arg;
	char secret[2 * CM_EGRESS_SECRET_BYTES + 1];
	char auth[4 * (sizeof(ACT_EGRESS_USER) + 2 * CM_EGRESS_SECRET_BYTES) /
	              3 +
	          16]; /* "Basic " + base64("spaced:<secret>") */
};

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

static void
eg_free(struct act_egress *e, struct eg_conn *c)
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
static void
eg_reply(struct eg_conn *c, int status, const char *extra, const char *body)
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
	eg_reply(c, 403, "X-Spaced-Egress: refused\r\n", body);
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
		eg_reply(c, 502, "", "spaced egress: cannot connect\n");
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
		eg_reply(
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
		eg_reply(c, 400, "", "spaced egress: not a host\n");
		return;
	}
	/* Judged and reported as what it is: 0x7f000002 is 127.0.0.2. */
	snprintf(c->host, sizeof(c->host), "%s", canon);
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
		eg_reply(c, 407,
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
			eg_reply(c, 502, "", "spaced egress: out of memory\n");
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

static void
eg_read_head(struct act_egress *e, struct eg_conn *c)
{
	static char fwd[CM_EGRESS_BUF];
	struct act_egress_head h;
	ssize_t n = recv(
	    c->cfd, c->head + c->head_len, sizeof(c->head) - c->head_len, 0);
	int st;

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		eg_free(e, c);
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
		eg_reply(c, st, "", "spaced egress: bad request\n");
		return;
	}
	eg_head_done(e, c, &h, fwd);
}

/* ---- the relay and the bucket */

static void
eg_refill(struct act_egress *e, int64_t now)
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
static int
eg_push(int fd, char *buf, size_t *off, size_t *len)
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

static bool
eg_up_open(const struct eg_conn *c)
{
	return !c->c_eof && (c->connect || c->body_left > 0);
}

static void
eg_relay(struct act_egress *e, struct eg_conn *c, short crev, short srev)
{
	size_t before = c->up_len + c->down_len;
	uint64_t lim = c->connect ? UINT64_MAX : c->body_left;
	size_t was;

	/* A client gone while its request has no body left to send. */
	if ((crev & (POLLHUP | POLLERR)) && !eg_up_open(c))
		goto gone;
	if ((crev & (POLLIN | POLLHUP | POLLERR)) && eg_up_open(c)) {
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
	if (eg_push(c->sfd, c->up, &c->up_off, &c->up_len) < 0 ||
	    eg_push(c->cfd, c->down, &c->down_off, &c->down_len) < 0)
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
	eg_free(e, c);
}

/* c's server socket became writable or failed while connecting. */
static void
eg_connected(struct act_egress *e, struct eg_conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->sfd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 ||
	    err != 0) {
		if (!eg_connect_next(c))
			eg_reply(c, 502, "", "spaced egress: cannot connect\n");
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

	eg_refill(e, now);
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
			if (eg_up_open(c) && c->up_len < sizeof(c->up) &&
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

	eg_refill(e, now);
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
				eg_read_head(e, c);
			break;
		case EG_RESOLVE:
			break;
		case EG_CONNECT:
			if (srev != 0)
				eg_connected(e, c);
			break;
		case EG_REPLY:
			if (crev & (POLLHUP | POLLERR) ||
			    (crev & POLLOUT &&
			        (eg_push(c->cfd, c->down, &c->down_off,
			             &c->down_len) < 0 ||
			            c->down_len == 0))) {
				/* Said: closing with unread input would reset
				 * the connection before the client read it. */
				shutdown(c->cfd, SHUT_WR);
				eg_free(e, c);
			}
			break;
		case EG_RELAY:
			if (crev != 0 || srev != 0)
				eg_relay(e, c, crev, srev);
			break;
		}
	}
	for (int k = 0; k < e->conns_max; k++) {
		struct eg_conn *c = e->conn[k];

		if (c == NULL || now < c->deadline_ms)
			continue;
		if (c->state == EG_RESOLVE || c->state == EG_CONNECT)
			eg_reply(c, 504, "", "spaced egress: timed out\n");
		else
			eg_free(e, c);
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
			eg_free(e, e->conn[k]);
	/* Pending queries are called back with ARES_EDESTRUCTION. */
	if (e->ares != NULL)
		ares_destroy(e->ares);
	if (e->lfd >= 0)
		close(e->lfd);
	free(e);
}
