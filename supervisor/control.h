/* control.h: the supervisor's control socket (REP), answering sup.status. */
#ifndef SUP_CONTROL_H
#define SUP_CONTROL_H

#include <nng/nng.h>

#include "children.h"
#include "listen.h"

/* Listens on url (mode 0600) through l (which the loop tends).  Returns 0
 * and the socket's receive fd. */
int sup_control_open(
    nng_socket *s, struct cm_listener *l, const char *url, int *recv_fd);
/* Answers every request waiting on s from the child table, receiving
 * through rx (cm_recv_try). */
void sup_control_serve(
    nng_socket s, nng_aio *rx, const struct sup_children *c, int64_t now_ms);

#endif
