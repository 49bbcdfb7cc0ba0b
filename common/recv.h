/*
 * recv.h: a non-blocking receive for the poll() loops that drain an nng
 * socket through NNG_OPT_RECVFD (the store's requests, the events the api
 * and the supervisor follow, the supervisor's control requests).
 *
 * nng_recvmsg allocates an aio for every call, and nng 1.5.2 places each
 * new aio on an expiry queue drawn at random: a getrandom system call per
 * message, and one more per drain.  Here the caller keeps one aio.
 */
#ifndef CM_RECV_H
#define CM_RECV_H

#include <nng/nng.h>

/*
 * Takes the next message waiting on s into *out without blocking, through
 * aio (from nng_aio_alloc(&aio, NULL, NULL), used by one thread only).
 * Returns 0, NNG_EAGAIN when none is waiting, or another nng error (the
 * socket was closed, say).
 */
int cm_recv_try(nng_socket s, nng_aio *aio, nng_msg **out);

/*
 * Opens a SUB socket for such a loop: subscribed to topic (a prefix; ""
 * for every message), a receive queue of recvbuf messages, at most
 * recvmax bytes a message, and a redial 10 ms after a lost publisher,
 * backing off to 200 ms (nng's default grows to about a second; a
 * publisher here restarts or comes and goes).  The caller dials.
 * Returns 0 or an nng error (the socket is then closed).
 */
int cm_sub_open(nng_socket *s, const char *topic, int recvbuf, size_t recvmax);

#endif
