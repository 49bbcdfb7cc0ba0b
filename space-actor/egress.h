/*
 * egress.h: a Space's egress proxy (docs/security.md).  Every connection
 * the Space's managed browser makes goes through it: an HTTP proxy on
 * 127.0.0.1 at an ephemeral port, in the actor's one poll() loop (its fds
 * next to the driver's, stepped after each poll; nothing here blocks).
 *
 * For each request (CONNECT host:port, or an absolute-URI request such as
 * GET http://host/path, forwarded in origin-form without hop-by-hop or
 * Proxy-* headers and with Connection: close) the proxy
 *   1. requires the per-launch secret in Proxy-Authorization (Basic), or
 *      answers 407 with Proxy-Authenticate: Basic;
 *   2. judges the host with the one matcher (cm_policy_allows_host); a
 *      numeric host in any spelling is its address (cm_host_numeric);
 *   3. resolves a name with c-ares (its sockets in the poll set, its
 *      timeouts through ares_timeout) and, under deny_private_networks,
 *      refuses when ANY address is private (cm_addr_private);
 *   4. connects, without blocking, to an address it judged (never
 *      resolving twice), and relays bytes both ways through bounded
 *      buffers, within the Space's connection cap and bytes-per-second
 *      token bucket, closing a connection that stays idle.
 * A refusal by the policy is a 403 with a short text body and the header
 * "X-Spaced-Egress: refused" (which the page's Fetch layer reads to fail
 * a navigation with host_not_allowed), and is reported to the refused
 * callback with the host and a reason, never a URL.
 *
 * Single-threaded.  Who may use it: only whoever knows the secret, which
 * reaches the browser through Fetch.authRequired (page.h), never argv.
 */
#ifndef ACT_EGRESS_H
#define ACT_EGRESS_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capability.h"
#include "limits.h"
#include "status.h"

/* Why a connection was refused (the reason of a network_blocked event;
 * common/status.h). */
#define ACT_EGRESS_NOT_ALLOWED CM_BLOCK_NOT_ALLOWED
#define ACT_EGRESS_PRIVATE CM_BLOCK_PRIVATE
#define ACT_EGRESS_NO_POLICY CM_BLOCK_NO_POLICY

/* The user name of the proxy's Basic credentials; the password is the
 * per-launch secret. */
#define ACT_EGRESS_USER "spaced"

/* What a parsed request head asks for. */
struct act_egress_head {
	bool connect;               /* CONNECT, else an absolute-URI request */
	char host[CM_HOST_MAX + 3]; /* as given, without brackets */
	uint16_t port;              /* 80 when an http URI names none */
	bool auth_ok;               /* Proxy-Authorization matched */
	uint64_t body_len;          /* forward: Content-Length, else 0 */
	size_t head_len;            /* bytes of the head, CRLFCRLF included */
	size_t out_len;             /* forward: the head written to out */
};

/*
 * Parses the request head at the start of buf (len bytes so far).  auth is
 * the whole Proxy-Authorization value that counts as authorised ("Basic
 * ..."), compared in constant time.  Returns 0 when the head is not
 * complete yet, 200 when *h is filled (a forwarded request's head, in
 * origin-form with Host and Connection: close, is in out: out_len bytes),
 * or the status to refuse it with: 400 (malformed: a bad request line,
 * header line, port, or an https or userinfo URI), 431 (the head passes
 * CM_EGRESS_HEAD_MAX, or out is too small), 501 (a forwarded request with
 * Transfer-Encoding).  Pure: no I/O.
 */
int act_egress_parse_head(const char *buf, size_t len, const char *auth,
    struct act_egress_head *h, char *out, size_t outlen);

struct act_egress;

struct act_egress_opts {
	int conns_max;       /* 1..CM_EGRESS_CONNS_MAX */
	int64_t bytes_per_s; /* CM_EGRESS_BPS_MIN..CM_EGRESS_BPS_MAX */
	const char *dns;     /* NULL: the system's resolvers; else c-ares
	                        "host:port,..." (tests) */
	int head_ms; /* accept to the end of the head; 0: CM_EGRESS_HEAD_MS */
	int idle_ms; /* a relay that moves no byte; 0: CM_EGRESS_IDLE_MS */
};

/* A refusal: host (canonical, no URL) and one of the reasons above. */
typedef void (*act_egress_refused_fn)(
    void *arg, const char *host, const char *reason);

/*
 * Opens the proxy: listening on 127.0.0.1 at an ephemeral port, with a
 * fresh secret.  Until act_egress_policy gives it one it refuses every
 * host (no_policy).  Returns 0 with *out, or -1 with a reason in err.
 */
int act_egress_open(const struct act_egress_opts *o, struct act_egress **out,
    char *err, size_t errlen);

/* The policy from now on (borrowed: it must outlive e, or be replaced),
 * and who hears of refusals (fn may be NULL). */
void act_egress_policy(struct act_egress *e, const struct cm_policy *policy,
    act_egress_refused_fn fn, void *arg);

/*
 * Who looks at each request the proxy receives (a test, recording what a
 * browser asks for: the actor sets none), with its host in the canonical
 * spelling the policy judges and its port.  Called once per request head,
 * as soon as it is parsed and before the policy, the secret or a resolver
 * sees it, so also for a request that a 407 or the policy then ends.
 * Returning false refuses it as the policy does (a 403, not_allowed,
 * reported to the refused callback): nothing is resolved or connected
 * for it.  fn NULL: no one.
 */
typedef bool (*act_egress_seen_fn)(void *arg, const char *host, uint16_t port);
void act_egress_observe(struct act_egress *e, act_egress_seen_fn fn, void *arg);

/* The port it listens on, on 127.0.0.1. */
int act_egress_port(const struct act_egress *e);

/* The password of its Basic credentials (user ACT_EGRESS_USER); owned
 * by e.  A secret: never in argv, a log or an event. */
const char *act_egress_secret(const struct act_egress *e);

/*
 * True when e refused host (any spelling: judged as a request for it
 * is) at or after since_ms (monotonic), among its last CM_EGRESS_RECENT
 * refusals.  A refused CONNECT leaves the browser no response to read
 * the refusal from: this is how its call learns of it.  O(CM_EGRESS_RECENT).
 */
bool act_egress_refused_since(
    const struct act_egress *e, const char *host, int64_t since_ms);

/* Connections open now, and refusals so far (tests). */
int act_egress_conns(const struct act_egress *e);
uint64_t act_egress_refusals(const struct act_egress *e);

/*
 * Fills up to max pollfds (CM_EGRESS_POLLFDS is enough) and lowers *wake_ms
 * (monotonic; -1: none) to when it next needs a step.  Returns the count.
 * act_egress_step takes the same fds after poll().
 */
int act_egress_pollfds(
    struct act_egress *e, struct pollfd *fds, int max, int64_t *wake_ms);
void act_egress_step(struct act_egress *e, const struct pollfd *fds, int nfds);

/* Closes every connection and the listener.  NULL is accepted. */
void act_egress_close(struct act_egress *e);

#endif
