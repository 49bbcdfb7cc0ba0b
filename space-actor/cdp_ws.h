/*
 * cdp_ws.h: the websocket transport of the CDP client (cdp.h), for a
 * browser someone else runs (the cdp driver).
 *
 * The endpoint an operator registers is either http(s)://host:port (the
 * browser's /json/version names its webSocketDebuggerUrl; its path is
 * kept, its host is not: Chromium names the host it thinks it has, and
 * the operator's is the one that reaches it) or ws(s)://host:port/path
 * directly.  The connection is libcurl's (CONNECT_ONLY, TLS for https and
 * wss), the HTTP upgrade is written and its 101 read with
 * curl_easy_send/recv, Sec-WebSocket-Accept is checked, and wslay frames
 * the messages.  Every step is non-blocking, in the actor's poll() loop,
 * like the pipe transport (cdp_pipe.h).
 *
 * The endpoint is a secret: no error text here names it, its host or its
 * port, and curl's own error text (which does) is never used.
 */
#ifndef ACT_CDP_WS_H
#define ACT_CDP_WS_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct act_ws;

/* Called for each whole message received; returns 0, or -1 to stop
 * reading (the connection is then treated as broken). */
typedef int (*act_ws_msg_fn)(void *arg, const char *msg, size_t len);

/*
 * Begins connecting to endpoint (copied), to be done by deadline_ms
 * (monotonic).  Returns 0 with *out set, or -1 with a reason in err
 * (which never names the endpoint) when the endpoint is not one of the
 * forms above or memory is short.
 */
int act_ws_open(const char *endpoint, int64_t deadline_ms, struct act_ws **out,
    char *err, size_t errlen);

/* Closes the connection and frees.  NULL is accepted. */
void act_ws_free(struct act_ws *w);

/* True once the upgrade is done: messages may be sent. */
bool act_ws_ready(const struct act_ws *w);

/* True once the connection has failed or ended; why says how (static
 * text, no secret). */
bool act_ws_broken(const struct act_ws *w, const char **why);

/*
 * Queues one text message of len bytes and sends what the socket takes
 * now.  Returns 0, or -1 when the connection is not ready or broken, len
 * is over CM_CDP_MSG_MAX, or what waits would pass CM_CDP_OUTBUF_MAX.
 */
int act_ws_send(struct act_ws *w, const char *msg, size_t len);

/* Fills up to two pollfds.  Returns the count. */
int act_ws_pollfds(const struct act_ws *w, struct pollfd *fds, int max);

/*
 * After poll(): advances the connection, hands each whole message
 * received to fn, and writes what waits.  A message over CM_CDP_MSG_MAX
 * is read and dropped, and fn gets act_cdp_too_big's error reply for its
 * command instead.  Returns 0, or -1 when the connection has failed or
 * ended (a bad upgrade, the deadline passed while connecting, the peer
 * closed, or fn said stop).  fds and nfds are the whole set the loop
 * polled.
 */
int act_ws_step(struct act_ws *w, const struct pollfd *fds, int nfds,
    act_ws_msg_fn fn, void *arg);

#endif
