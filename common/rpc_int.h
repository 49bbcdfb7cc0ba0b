/*
 * rpc_int.h: what the store client's files share: rpc.c (sockets, their
 * dialers, the synchronous call) and rpc_async.c (the asynchronous call).
 * Nothing outside the client includes it; everyone else sees rpc.h.
 */
#ifndef CM_RPC_INT_H
#define CM_RPC_INT_H

#include <nng/nng.h>

/* A socket's dialer and its count of pipes (rpc.c says why it exists).
 * Never freed: a pointer to one stays valid for the process's life. */
struct rpc_link;

/* The link of socket s (opened with cm_rpc_open), or NULL when it has
 * none.  Takes the links' lock. */
struct rpc_link *cm_rpc_link_of(nng_socket s);

/*
 * Gives socket s a new dialer when it has had no pipe for
 * CM_RPC_RESEND_MS.  link is the socket's link when the caller knows it
 * (NULL: looked up): a socket with a pipe then costs no lock.
 */
void cm_rpc_redial_if_lost(nng_socket s, struct rpc_link *link);

#endif
