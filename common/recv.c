/*
 * recv.c: a non-blocking receive through an aio the caller keeps.
 */
#include "recv.h"

#include <nng/protocol/pubsub0/sub.h>
#include <string.h>

int
cm_recv_try(nng_socket s, nng_aio *aio, nng_msg **out)
{
	int rv;

	*out = NULL;
	/* A zero timeout: the receive completes now, with a message or with
	 * NNG_ETIMEDOUT, as nng_recvmsg's NNG_FLAG_NONBLOCK does. */
	nng_aio_set_timeout(aio, NNG_DURATION_ZERO);
	nng_recv_aio(s, aio);
	nng_aio_wait(aio);
	if ((rv = nng_aio_result(aio)) != 0)
		return rv == NNG_ETIMEDOUT ? NNG_EAGAIN : rv;
	*out = nng_aio_get_msg(aio);
	nng_aio_set_msg(aio, NULL);
	return 0;
}

int
cm_sub_open(nng_socket *s, const char *topic, int recvbuf, size_t recvmax)
{
	int rv;

	if ((rv = nng_sub0_open(s)) != 0)
		return rv;
	if ((rv = nng_socket_set(
	         *s, NNG_OPT_SUB_SUBSCRIBE, topic, strlen(topic))) != 0 ||
	    (rv = nng_socket_set_int(*s, NNG_OPT_RECVBUF, recvbuf)) != 0 ||
	    (rv = nng_socket_set_size(*s, NNG_OPT_RECVMAXSZ, recvmax)) != 0 ||
	    (rv = nng_socket_set_ms(*s, NNG_OPT_RECONNMINT, 10)) != 0 ||
	    (rv = nng_socket_set_ms(*s, NNG_OPT_RECONNMAXT, 200)) != 0)
		nng_close(*s);
	return rv;
}
