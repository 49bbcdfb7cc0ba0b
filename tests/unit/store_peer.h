/*
 * store_peer.h: a stand-in store for unit tests of store clients (the
 * asynchronous call, the supervisor's jobs).  A REP socket on a thread of
 * its own, listening on ipc://<a fresh /tmp directory>/store.ipc, in the
 * test's own process.  It reads the first `drop` requests and never
 * answers them, answers the next `fail` with internal (worth another
 * try), and every other with err ok and count 7.  It records the op,
 * space_id and op_id of the first SP_SEEN_MAX requests, and counts all.
 *
 * Header-only: sp_setup and sp_teardown are a suite's init and fini.
 */
#ifndef SPACED_STORE_PEER_H
#define SPACED_STORE_PEER_H

#include <criterion/criterion.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto.h"

#define SP_SEEN_MAX 16

static char sp_dir[64];
static char sp_url[128]; /* where the peer listens */

static inline void
sp_setup(void)
{
	snprintf(sp_dir, sizeof(sp_dir), "/tmp/spaced-peer-XXXXXX");
	cr_assert_not_null(mkdtemp(sp_dir));
	snprintf(sp_url, sizeof(sp_url), "ipc://%s/store.ipc", sp_dir);
}

static inline void
sp_teardown(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/store.ipc", sp_dir);
	unlink(path);
	rmdir(sp_dir);
}

struct sp_peer {
	nng_socket rep;
	pthread_t thread;
	int drop, fail;
	atomic_int seen;
	enum pr_op op[SP_SEEN_MAX];
	char space[SP_SEEN_MAX][CM_ID_MAX + 1];
	char op_id[SP_SEEN_MAX][CM_ID_MAX + 1];
};

static inline void *
sp_run(void *arg)
{
	struct sp_peer *p = arg;
	nng_msg *m;

	while (nng_recvmsg(p->rep, &m, 0) == 0) {
		struct pr_req q;
		struct pr_rep r;
		char err[128], *buf;
		size_t len;
		int n = atomic_load(&p->seen);

		cr_assert_eq(pr_req_decode(nng_msg_body(m), nng_msg_len(m), &q,
		                 err, sizeof(err)),
		    0, "%s", err);
		if (n < SP_SEEN_MAX) {
			p->op[n] = q.op;
			snprintf(p->space[n], sizeof(p->space[n]), "%s",
			    q.space_id ? q.space_id : "");
			snprintf(p->op_id[n], sizeof(p->op_id[n]), "%s",
			    q.op_id ? q.op_id : "");
		}
		pr_req_free(&q);
		atomic_store(&p->seen, n + 1);
		if (n < p->drop) {
			nng_msg_free(m);
			continue;
		}
		memset(&r, 0, sizeof(r));
		if (n < p->drop + p->fail)
			pr_rep_error(&r, CM_E_INTERNAL, "try again");
		else
			r.count = 7;
		cr_assert_eq(pr_rep_encode(&r, &buf, &len), 0);
		pr_rep_free(&r);
		nng_msg_clear(m);
		nng_msg_append(m, buf, len);
		free(buf);
		if (nng_sendmsg(p->rep, m, 0) != 0)
			nng_msg_free(m);
	}
	return NULL;
}

static inline void
sp_start(struct sp_peer *p, int drop, int fail)
{
	memset(p, 0, sizeof(*p));
	p->drop = drop;
	p->fail = fail;
	cr_assert_eq(nng_rep0_open(&p->rep), 0);
	cr_assert_eq(nng_listen(p->rep, sp_url, NULL, 0), 0);
	cr_assert_eq(pthread_create(&p->thread, NULL, sp_run, p), 0);
}

static inline void
sp_stop(struct sp_peer *p)
{
	nng_close(p->rep);
	pthread_join(p->thread, NULL);
}

#endif
