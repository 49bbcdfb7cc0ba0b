/*
 * listen.h: an nng listener that keeps accepting.
 *
 * nng 1.5.2 (Debian 12's) stops a listener for good when a peer goes away
 * while the two ends exchange their protocol headers: the failed exchange
 * completes the listener's pending accept with NNG_ECLOSED (the EPIPE of
 * its header send), which nng's listener takes for its own closing, and
 * it never accepts again (#1518 on nng's issue tracker, fixed in nng
 * 1.10).  Connections made after that wait in the transport for ever, and
 * a store, say, answers nobody new.  It happens when a client dials a busy
 * process and gives up (or dies) before the process gets to the
 * connection: a supervisor that dials again, an actor killed at the wrong
 * moment.
 *
 * The only trace nng leaves is the listener's "other" error counter, which
 * also counts errors that nng recovers from by itself (a peer that closed
 * before it sent its header: nng accepts again 100 ms later).  So when
 * that counter moves, a probe tells the two apart: a connection of our
 * own to the listener, which a listener that still accepts takes in (its
 * "accept" counter moves: any connection it takes proves it, the probe's
 * or another's) within CM_LISTEN_PROBE_MS.  Only a listener that took
 * none in that time is closed and a new one started.  Closing it closes
 * its connections too, the good ones with the stuck ones: a connection
 * that nng took in but never handed to the socket must end for its
 * client to dial again.  Every client of a listener here dials again by
 * itself (nng's dialers reconnect) and re-sends what was unanswered
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
	bool open;       /* l listens (starting it again failed) */
	uint64_t errors; /* the listener's "other" errors, when last seen */
	int64_t next_ms; /* the next look at the counters */
	/* A probe under way: its socket, the "accept" count when it began,
	 * and when a listener that took nothing in is judged stopped. */
	bool probing;
	nng_socket probe;
	uint64_t accepts;
	int64_t probe_end_ms;
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
 * CM_LISTEN_LOOK_MS it looks at nng's counters, probes the listener when
 * they moved, and starts it again when the probe finds it stopped (above).
 * Returns true when it did.
 */
bool cm_listener_tend(struct cm_listener *cl, int64_t now_ms);

/* The next time cm_listener_tend has something to look at. */
int64_t cm_listener_due(const struct cm_listener *cl);

#endif
