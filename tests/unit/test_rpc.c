/*
 * test_rpc.c: the asynchronous store call (common/rpc.h) against a REP
 * peer of the test's own, in this process: a peer that answers, one that
 * is not there yet, one that drops requests, and a handle closed while its
 * call is under way.
 */
#include <criterion/criterion.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "rpc.h"
#include "store_peer.h"

#define WAIT_MS 10000 /* the most any wait here may take */

TestSuite(rpc_async, .init = sp_setup, .fini = sp_teardown, .timeout = 60);

/* Waits for the handle's fd, then takes the outcome. */
static void
wait_outcome(struct cm_rpc_async *c, struct pr_rep *r, int *attempts)
{
	struct pollfd pfd = {.fd = cm_rpc_async_fd(c), .events = POLLIN};
	int64_t end = cm_mono_ms() + WAIT_MS;

	while (!cm_rpc_async_take(c, r, attempts)) {
		int left = (int)(end - cm_mono_ms());

		cr_assert_gt(left, 0, "no outcome in %d ms", WAIT_MS);
		poll(&pfd, 1, left);
	}
}

static struct pr_req
write_req(void)
{
	struct pr_req q;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SUP_SWEEP_LEASES; /* a write with no other field */
	return q;
}

Test(rpc_async, a_reply_makes_the_fd_readable_and_is_taken_once)
{
	struct cm_rpc_async *c;
	struct sp_peer p;
	struct pr_req q = write_req();
	struct pr_rep r;
	nng_socket s;
	int attempts;

	sp_start(&p, 0, 0);
	cr_assert_eq(cm_rpc_open(&s, sp_url), 0);
	cr_assert_eq(cm_rpc_async_open(&c, s), 0);
	cr_assert_not(cm_rpc_async_busy(c));
	cr_assert_eq(cm_rpc_async_start(c, &q, 2000, 1), CM_OK);
	cr_assert(cm_rpc_async_busy(c));
	cr_assert_eq(cm_rpc_async_start(c, &q, 2000, 1), CM_E_CONFLICT);
	wait_outcome(c, &r, &attempts);
	cr_assert_eq(r.err, CM_OK);
	cr_assert_eq(r.count, 7);
	cr_assert_eq(attempts, 1);
	pr_rep_free(&r);
	cr_assert_not(cm_rpc_async_busy(c));
	cr_assert_not(cm_rpc_async_take(c, &r, NULL));
	/* The handle serves a second call. */
	cr_assert_eq(cm_rpc_async_start(c, &q, 2000, 1), CM_OK);
	wait_outcome(c, &r, NULL);
	cr_assert_eq(r.count, 7);
	pr_rep_free(&r);
	cr_assert_eq(atomic_load(&p.seen), 2);
	cm_rpc_async_close(c);
	nng_close(s);
	sp_stop(&p);
}

Test(rpc_async, no_store_ends_after_the_attempts_it_was_given)
{
	struct cm_rpc_async *c;
	struct pr_req q = write_req();
	struct pr_rep r;
	nng_socket s;
	int attempts;
	int64_t t0;

	cr_assert_eq(cm_rpc_open(&s, sp_url), 0);
	cr_assert_eq(cm_rpc_async_open(&c, s), 0);
	t0 = cm_mono_ms();
	cr_assert_eq(cm_rpc_async_start(c, &q, 50, 3), CM_OK);
	/* The loop's thread is never held: start returned at once. */
	cr_assert_lt(cm_mono_ms() - t0, 1000);
	wait_outcome(c, &r, &attempts);
	cr_assert_eq(r.err, CM_E_STORE_UNAVAILABLE);
	cr_assert_eq(attempts, 3, "attempts %d", attempts);
	pr_rep_free(&r);
	cm_rpc_async_close(c);
	nng_close(s);
}

Test(rpc_async, every_attempt_carries_the_op_id_of_the_first)
{
	struct cm_rpc_async *c;
	struct sp_peer p;
	struct pr_req q = write_req();
	struct pr_rep r;
	nng_socket s;
	int attempts;

	/* The peer reads the first two attempts and answers the third. */
	sp_start(&p, 2, 0);
	cr_assert_eq(cm_rpc_open(&s, sp_url), 0);
	cr_assert_eq(cm_rpc_async_open(&c, s), 0);
	cr_assert_eq(cm_rpc_async_start(c, &q, 200, 0), CM_OK);
	wait_outcome(c, &r, &attempts);
	cr_assert_eq(
	    r.err, CM_OK, "err %s attempts %d", cm_err_code(r.err), attempts);
	cr_assert_geq(attempts, 3);
	pr_rep_free(&r);
	cr_assert_geq(atomic_load(&p.seen), 3);
	cr_assert_neq(p.op_id[0][0], '\0');
	cr_assert_str_eq(p.op_id[1], p.op_id[0]);
	cr_assert_str_eq(p.op_id[2], p.op_id[0]);
	cm_rpc_async_close(c);
	nng_close(s);
	sp_stop(&p);
}

Test(rpc_async, a_store_that_comes_late_is_reached)
{
	struct cm_rpc_async *c;
	struct sp_peer p;
	struct pr_req q = write_req();
	struct pr_rep r;
	struct pollfd pfd;
	nng_socket s;

	cr_assert_eq(cm_rpc_open(&s, sp_url), 0);
	cr_assert_eq(cm_rpc_async_open(&c, s), 0);
	cr_assert_eq(cm_rpc_async_start(c, &q, 100, 0), CM_OK);
	/* Some attempts fail while there is no store. */
	pfd.fd = cm_rpc_async_fd(c);
	pfd.events = POLLIN;
	cr_assert_eq(poll(&pfd, 1, 300), 0);
	cr_assert(cm_rpc_async_busy(c));
	sp_start(&p, 0, 0);
	wait_outcome(c, &r, NULL);
	cr_assert_eq(r.err, CM_OK);
	pr_rep_free(&r);
	cm_rpc_async_close(c);
	nng_close(s);
	sp_stop(&p);
}

Test(rpc_async, a_handle_closed_mid_call_is_freed)
{
	struct cm_rpc_async *c;
	struct sp_peer p;
	struct pr_req q = write_req();
	nng_socket s;
	int64_t end = cm_mono_ms() + WAIT_MS;

	sp_start(&p, 1000, 0); /* never answers */
	cr_assert_eq(cm_rpc_open(&s, sp_url), 0);
	cr_assert_eq(cm_rpc_async_open(&c, s), 0);
	cr_assert_eq(cm_rpc_async_start(c, &q, 5000, 0), CM_OK);
	while (atomic_load(&p.seen) == 0 && cm_mono_ms() < end)
		poll(NULL, 0, 1);
	cr_assert_eq(atomic_load(&p.seen), 1);
	cm_rpc_async_close(c);
	/* And one closed between attempts, and one never started. */
	cr_assert_eq(cm_rpc_async_open(&c, s), 0);
	cr_assert_eq(cm_rpc_async_start(c, &q, 10, 0), CM_OK);
	while (atomic_load(&p.seen) < 3 && cm_mono_ms() < end)
		poll(NULL, 0, 1);
	cm_rpc_async_close(c);
	cr_assert_eq(cm_rpc_async_open(&c, s), 0);
	cm_rpc_async_close(c);
	cm_rpc_async_close(NULL);
	nng_close(s);
	sp_stop(&p);
}
