/*
 * test_jobs.c: the supervisor's FIFO of store jobs (supervisor/jobs.h)
 * against a REP peer of the test's own: jobs end in the order they were
 * queued, a verdict worth another try keeps a job first with its op_id,
 * and a store that is not there yet delays the jobs without losing one.
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
#include "jobs.h"
#include "rpc.h"
#include "store_peer.h"

#define WAIT_MS 10000 /* the most any wait here may take */

TestSuite(sup_jobs, .init = sp_setup, .fini = sp_teardown, .timeout = 60);

/* The supervisor's loop, for the jobs alone: until n jobs are done or
 * until_ms passes.  Returns how many were done, their copies in done. */
static int
drive(struct sup_jobs *j, struct sup_job *done, int n, int64_t until_ms)
{
	int got = 0;

	while (got < n && cm_mono_ms() < until_ms) {
		int64_t now = cm_mono_ms(), due = sup_jobs_due(j, now);
		int timeout = (int)(until_ms - now);
		struct pollfd pfd = {sup_jobs_fd(j), POLLIN, 0};

		if (due >= 0 && due - now < timeout)
			timeout = (int)(due - now);
		poll(&pfd, 1, timeout > 0 ? timeout : 0);
		if (sup_jobs_take(j, cm_mono_ms(), &done[got]))
			got++;
		sup_jobs_run(j, cm_mono_ms());
	}
	return got;
}

Test(sup_jobs, done_in_order_and_retried_with_the_same_op_id)
{
	struct sup_job done[3];
	struct sup_jobs j;
	struct sp_peer p;
	nng_socket s;

	sp_start(&p, 0, 1);
	cr_assert_eq(cm_rpc_open(&s, sp_url), 0);
	cr_assert_eq(sup_jobs_open(&j, s, NULL), 0);
	cr_assert_eq(sup_jobs_push(&j, PR_OP_SUP_FINALIZE_LOST, "s1", NULL), 0);
	cr_assert_eq(
	    sup_jobs_push(&j, PR_OP_SPACE_MARK_ERROR, "s1", "actor_crash_loop"),
	    0);
	cr_assert_eq(sup_jobs_push(&j, PR_OP_SUP_FINALIZE_LOST, "s2", NULL), 0);
	cr_assert(sup_jobs_pending(&j, "s1"));
	cr_assert(sup_jobs_pending(&j, "s2"));
	cr_assert_not(sup_jobs_pending(&j, "s3"));

	cr_assert_eq(drive(&j, done, 3, cm_mono_ms() + WAIT_MS), 3);
	cr_assert_eq(done[0].op, PR_OP_SUP_FINALIZE_LOST);
	cr_assert_str_eq(done[0].space_id, "s1");
	cr_assert_eq(done[1].op, PR_OP_SPACE_MARK_ERROR);
	cr_assert_str_eq(done[1].error_code, "actor_crash_loop");
	cr_assert_str_eq(done[2].space_id, "s2");
	cr_assert_not(sup_jobs_pending(&j, "s1"));
	cr_assert_not(sup_jobs_pending(&j, "s2"));
	cr_assert_eq(sup_jobs_due(&j, cm_mono_ms()), -1);

	/* The first answer said internal: the same job, the same op_id. */
	cr_assert_eq(atomic_load(&p.seen), 4);
	cr_assert_str_eq(p.space[0], "s1");
	cr_assert_str_eq(p.space[1], "s1");
	cr_assert_eq(p.op[1], PR_OP_SUP_FINALIZE_LOST);
	cr_assert_str_not_empty(p.op_id[0]);
	cr_assert_str_eq(p.op_id[0], p.op_id[1]);
	cr_assert_eq(p.op[2], PR_OP_SPACE_MARK_ERROR);
	cr_assert_str_eq(p.space[3], "s2");
	cr_assert_str_neq(p.op_id[2], p.op_id[3]);

	sup_jobs_close(&j);
	nng_close(s);
	sp_stop(&p);
}

Test(sup_jobs, wait_for_a_store_that_is_not_there_yet)
{
	struct sup_job done[2];
	struct sup_jobs j;
	struct sp_peer p;
	nng_socket s;

	cr_assert_eq(cm_rpc_open(&s, sp_url), 0);
	cr_assert_eq(sup_jobs_open(&j, s, NULL), 0);
	cr_assert_eq(sup_jobs_push(&j, PR_OP_SUP_FINALIZE_LOST, "s1", NULL), 0);
	cr_assert_eq(sup_jobs_push(&j, PR_OP_SPACE_MARK_CLOSED, "s2", NULL), 0);
	/* No store: nothing ends, nothing is lost. */
	cr_assert_eq(drive(&j, done, 2, cm_mono_ms() + 300), 0);
	cr_assert(sup_jobs_pending(&j, "s1"));
	cr_assert(sup_jobs_pending(&j, "s2"));

	sp_start(&p, 0, 0);
	cr_assert_eq(drive(&j, done, 2, cm_mono_ms() + WAIT_MS), 2);
	cr_assert_str_eq(done[0].space_id, "s1");
	cr_assert_str_eq(done[1].space_id, "s2");
	cr_assert_eq(done[1].op, PR_OP_SPACE_MARK_CLOSED);
	sup_jobs_close(&j);
	nng_close(s);
	sp_stop(&p);
}
