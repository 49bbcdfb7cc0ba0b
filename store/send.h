/*
 * send.h: messages leaving one socket through aios without callbacks.
 *
 * A sender belongs to one thread (the loop's acker), which alone sends
 * through it.  A message that cannot be sent is dropped: a requester
 * re-sends, and a subscriber recovers from the sequence gap.
 */
#ifndef ST_SEND_H
#define ST_SEND_H

#include <nng/nng.h>

struct st_sender;

/*
 * Allocates a sender's aios for sock, which the caller keeps open and
 * owns.  Returns 0 with *out set, or nng's error with *out NULL.
 */
int st_sender_open(struct st_sender **out, nng_socket sock);
/*
 * Sends m (taken) once the slot it gets has finished its last send,
 * without waiting for this one.
 */
void st_sender_send(struct st_sender *r, nng_msg *m);
/*
 * Waits for every send and frees the sender; NULL is ignored.  Call it
 * after the socket is closed, so that no send is still waiting.
 */
void st_sender_close(struct st_sender *r);

#endif
