/*
 * recv.c: a non-blocking receive through an aio the caller keeps.
 */
#include "recv.h"

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
