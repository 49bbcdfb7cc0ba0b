/*
 * send.c: the store's replies and events, leaving their sockets through
 * aios without callbacks (send.h).
 */
#include "send.h"

#include <stdlib.h>

#include "limits.h"

/*
 * Replies and events leave asynchronously, from the acker thread alone.
 * nng_sendmsg would wait for one of nng's task threads to take each
 * message; an aio does not, and the REP socket's send buffer holds the
 * replies of every group acknowledged at once.  The aios have no callback: nng
 * runs a callback on a task thread, another thread handoff per message
 * (measured: the store switched threads 5.9 times a write with callbacks, 3.1
 * without).  A slot is reused in turn once its send has completed, which by
 * then it almost always has.  A message that cannot be sent is dropped: a
 * requester re-sends, and a subscriber recovers from the sequence gap.
 */
#define ST_SEND_SLOTS (2 * CM_STORE_QUEUE_MAX)

struct st_sender {
	nng_socket sock;
	nng_aio *slot[ST_SEND_SLOTS];
	size_t next;
};

/* Waits for slot a's last send and drops its message if it failed. */
static void
slot_reap(nng_aio *a)
{
	nng_msg *m;

	nng_aio_wait(a);
	if (nng_aio_result(a) != 0 && (m = nng_aio_get_msg(a)) != NULL) {
		nng_aio_set_msg(a, NULL);
		nng_msg_free(m);
	}
}

int
st_sender_open(struct st_sender **out, nng_socket sock)
{
	struct st_sender *r;
	int rv;

	*out = NULL;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NNG_ENOMEM;
	r->sock = sock;
	for (size_t i = 0; i < ST_SEND_SLOTS; i++)
		if ((rv = nng_aio_alloc(&r->slot[i], NULL, NULL)) != 0) {
			st_sender_close(r); /* nothing sent yet */
			return rv;
		}
	*out = r;
	return 0;
}

void
st_sender_close(struct st_sender *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < ST_SEND_SLOTS && r->slot[i] != NULL; i++) {
		slot_reap(r->slot[i]);
		nng_aio_free(r->slot[i]);
	}
	free(r);
}

void
st_sender_send(struct st_sender *r, nng_msg *m)
{
	nng_aio *a = r->slot[r->next++ % ST_SEND_SLOTS];

	slot_reap(a);
	nng_aio_set_msg(a, m);
	nng_send_aio(r->sock, a);
}
