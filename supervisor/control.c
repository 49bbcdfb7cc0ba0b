#include "control.h"

#include <nng/protocol/reqrep0/rep.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "proto.h"
#include "recv.h"

int
sup_control_open(
    nng_socket *s, struct cm_listener *l, const char *url, int *recv_fd)
{
	int rv;

	if ((rv = nng_rep0_open(s)) != 0)
		return rv;
	if ((rv = nng_socket_set_size(*s, NNG_OPT_RECVMAXSZ, 4096)) != 0 ||
	    (rv = cm_listener_start(l, *s, url, 0600)) != 0 ||
	    (rv = nng_socket_get_int(*s, NNG_OPT_RECVFD, recv_fd)) != 0) {
		nng_close(*s);
		return rv;
	}
	return 0;
}

static int
by_serial(const void *a, const void *b)
{
	uint64_t x = (*(const struct sup_child *const *)a)->serial;
	uint64_t y = (*(const struct sup_child *const *)b)->serial;

	return x < y ? -1 : x > y;
}

/*
 * One page of the table: the rows whose serial is past after, in serial
 * order, at most CM_SUP_STATUS_PAGE_MAX.  A full page means the reader
 * asks again after its last row's serial; rows added meanwhile come
 * later, and none comes twice.
 */
static void
status_reply(const struct sup_children *c, int64_t after, int64_t now,
    struct pr_rep *rep)
{
	const struct sup_child **past;
	size_t n = 0;

	if (after < 0) {
		pr_rep_error(rep, CM_E_INVALID_REQUEST,
		    "after_sequence must be 0 or more");
		return;
	}
	if ((past = malloc((c->n ? c->n : 1) * sizeof(*past))) == NULL) {
		pr_rep_error(rep, CM_E_INTERNAL, "out of memory");
		return;
	}
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i]->serial > (uint64_t)after)
			past[n++] = c->v[i];
	qsort(past, n, sizeof(*past), by_serial);
	if (n > CM_SUP_STATUS_PAGE_MAX)
		n = CM_SUP_STATUS_PAGE_MAX;
	rep->children = pr_rep_alloc(rep, (n ? n : 1) * sizeof(*rep->children));
	if (rep->children == NULL) {
		free(past);
		pr_rep_error(rep, CM_E_INTERNAL, "out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct sup_child *ch = past[i];
		struct pr_child *o = &rep->children[i];

		o->serial = (int64_t)ch->serial;
		o->kind = ch->standby ? "standby" : sup_kinds[ch->kind].name;
		o->pid = ch->pid;
		o->space_id = ch->space_id[0] ? ch->space_id : NULL;
		o->state = sup_state_name(ch->state);
		o->restarts = ch->restarts;
		o->uptime_ms = ch->pid > 0 ? now - ch->started_ms : 0;
	}
	rep->n_children = n;
	free(past);
}

void
sup_control_serve(
    nng_socket s, nng_aio *rx, const struct sup_children *c, int64_t now_ms)
{
	nng_msg *m;

	while (cm_recv_try(s, rx, &m) == 0) {
		struct pr_req req;
		struct pr_rep rep;
		char err[128], *buf = NULL;
		size_t len = 0;

		memset(&req, 0, sizeof(req));
		memset(&rep, 0, sizeof(rep));
		if (pr_req_decode(nng_msg_body(m), nng_msg_len(m), &req, err,
		        sizeof(err)) != 0)
			pr_rep_error(&rep, CM_E_INVALID_REQUEST, "%s", err);
		else if (req.op != PR_OP_SUP_STATUS)
			pr_rep_error(&rep, CM_E_INVALID_REQUEST,
			    "the supervisor answers only sup.status");
		else
			status_reply(c, req.after_sequence, now_ms, &rep);
		nng_msg_clear(m);
		if (pr_rep_encode(&rep, &buf, &len) != 0 ||
		    nng_msg_append(m, buf, len) != 0 ||
		    nng_sendmsg(s, m, 0) != 0)
			nng_msg_free(m);
		free(buf);
		pr_req_free(&req);
		pr_rep_free(&rep);
	}
}
