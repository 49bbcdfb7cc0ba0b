/*
 * egress_int.h: the egress proxy's own state, shared by egress.c (the
 * listener, the poll set and each connection's turn) and egress_conn.c (a
 * connection's life: its head, resolution, connect and relay).  Nothing
 * outside the proxy includes it.
 */
#ifndef ACT_EGRESS_INT_H
#define ACT_EGRESS_INT_H

#include <ares.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "egress.h"

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
	act_egress_seen_fn seen; /* act_egress_observe */
	void *seen_arg;
	char secret[2 * CM_EGRESS_SECRET_BYTES + 1];
	char auth[4 * (sizeof(ACT_EGRESS_USER) + 2 * CM_EGRESS_SECRET_BYTES) /
	              3 +
	          16]; /* "Basic " + base64("spaced:<secret>") */
};

/*
 * The connections' side, egress_conn.c.  Each takes a connection of e's;
 * act_egc_free, act_egc_read_head, act_egc_connected and act_egc_relay
 * may free it: after them, only a connection still in e->conn is used.
 */

/* Takes c out of e, closes its sockets and frees it (a DNS answer still
 * due finds no connection of its id). */
void act_egc_free(struct act_egress *e, struct eg_conn *c);
/* Answers the client with a canned response and closes after it. */
void act_egc_reply(
    struct eg_conn *c, int status, const char *extra, const char *body);
/* Reads more of c's request head and, once whole, acts on it. */
void act_egc_read_head(struct act_egress *e, struct eg_conn *c);
/* c's server socket became writable or failed while connecting. */
void act_egc_connected(struct act_egress *e, struct eg_conn *c);
/* Moves bytes both ways after poll() said crev (client) and srev. */
void act_egc_relay(
    struct act_egress *e, struct eg_conn *c, short crev, short srev);
/* Adds the tokens earned since the last refill (at most one second's). */
void act_egc_refill(struct act_egress *e, int64_t now);
/* Writes what buf holds to fd; -1 on an error. */
int act_egc_push(int fd, char *buf, size_t *off, size_t *len);
/* Whether the client may still send bytes up (a tunnel, or a body). */
bool act_egc_up_open(const struct eg_conn *c);

#endif
