/*
 * listen.h: an nng listener that keeps accepting.
 *
 * nng 1.5.2 (Debian 12's) stops a listener for good when a peer goes away
 * while the two ends exchange their protocol headers: the failed exchange
 * completes the listener's pending accept with NNG_ECLOSED (the EPIPE of
 * its header send), which nng's listener takes for its own closing, and
 * it never accepts again (nng issue #1518, fixed in 1.10).  Connections
 * made after that wait in the transport for ever, and a store, say,
 * answers nobody new.  It happens when a client dials a busy process and
 * gives up (or dies) before the process gets to the connection: a
 * supervisor that dials again, an actor killed at the wrong moment.
 *
 * The only trace nng leaves is the listener's "other" error counter, which
 * also counts errors that nng recovers from by itself.  So each time that
 * counter moves, the listener is closed and a new one started.  Closing
 * it closes its connections too, the good ones with the stuck ones: a
 * connection that nng took in but never handed to the socket must end for
 * its client to dial again.  Every client of a listener here dials again
 * by itself (nng's dialers reconnect) and re-sends what was unanswered
 * (REQ), or recovers what it missed from sequence numbers (SUB).
 */
#ifndef CM_LISTEN_H
#define CM_LISTEN_H

#include <nng/nng.h>
#include <stdbool.h>
#include <stdint.h>

#include "limits.h"

struct cm_listener {
	nng_socket sock;
	char url[CM_IPC_PATH_MAX + 16];
	int ipc_mode; /* NNG_OPT_IPC_PERMISSIONS, or 0 */
	nng_listener l;
	bool open;        /* l listens (starting it again failed) */
	uint64_t errors;  /* the listener's "other" errors, when last seen */
	int64_t next_ms;  /* the next look at the counters */
	uint64_t renewed; /* times the listener was started again */
};

/*
 * Listens on url with s (ipc_mode: the socket file's permissions on ipc;
 * 0 leaves nng's).  cl is the caller's, and used by one thread only.
 * Returns 0 or an nng error.
 */
int cm_listener_start(
    struct cm_listener *cl, nng_socket s, const char *url, int ipc_mode);

/*
 * From the owner's loop, as often as it likes: at most once every
 * CM_LISTEN_LOOK_MS it looks at nng's counters, and starts the listener
 * again when they moved (above).  Returns true when it did.
 */
bool cm_listener_tend(struct cm_listener *cl, int64_t now_ms);

/* The next time cm_listener_tend has something to look at. */
int64_t cm_listener_due(const struct cm_listener *cl);

#endif
