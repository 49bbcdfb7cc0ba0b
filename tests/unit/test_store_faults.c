/*
 * Allocation failures in the store's request path: the Nth allocation
 * SQLite makes fails (st_fault_fail_nth, a wrapper this test installs
 * before the store opens), for every N that a write reaches.  Each write is
 * answered, with a typed error when it did not commit; an acknowledged write is
 * there, a failed one is not; the store goes on, and the database stays whole.
 */
#include <criterion/criterion.h>

#include "fault.h"
#include "store_fixture.h"

static struct fx fx;

static void
setup(void)
{
	/* Before SQLite starts: the store opens its database in fx_setup. */
	cr_assert_eq(st_fault_install(), 0, "SQLite started before the test");
	fx_setup(&fx, 0);
}

static void
teardown(void)
{
	fx_teardown(&fx);
}

TestSuite(store_faults, .init = setup, .fini = teardown);

/* Creates workspace name with the nth allocation failing; whether the
 * fault fired, and the reply's code in *err. */
static bool
create_failing(const char *name, long nth, enum cm_err *err)
{
	struct pr_req q;
	struct pr_rep rep;
	bool fired;

	fx_req(&fx, &q, PR_OP_WORKSPACE_CREATE);
	q.name = name;
	st_fault_fail_nth(nth);
	st_store_call(fx.st, &q, &rep, fx_publish, &fx);
	fired = st_fault_fired();
	st_fault_fail_nth(0);
	*err = rep.err;
	pr_rep_free(&rep);
	return fired;
}

static void
sweep(const char *tag, bool warm)
{
	char name[64];
	long n;
	int failed = 0;

	if (warm)
		fx_workspace(&fx, "warm");
	for (n = 1;; n++) {
		enum cm_err err;
		bool fired;
		int64_t rows;

		cr_assert_lt(n, 100000, "a write that never ends allocating");
		snprintf(name, sizeof(name), "%s-%ld", tag, n);
		fired = create_failing(name, n, &err);
		rows = fx_sql_int(&fx,
		    "SELECT count(*) FROM workspaces WHERE name = ?1", name,
		    NULL);
		if (err == CM_OK) {
			cr_assert_eq(rows, 1,
			    "allocation %ld failed: %s was"
			    " acknowledged but is not there",
			    n, name);
		} else {
			cr_assert(err == CM_E_INTERNAL ||
			              err == CM_E_STORE_UNAVAILABLE,
			    "allocation %ld failed: %s", n, cm_err_code(err));
			cr_assert_eq(rows, 0,
			    "allocation %ld failed: %s failed but is there", n,
			    name);
			failed++;
		}
		if (!fired)
			break;
	}
	cr_assert_gt(failed, 0, "no failed allocation failed a write");
	cr_log_info("allocation failures (%s): %ld allocations swept, %d"
	            " writes failed",
	    tag, n - 1, failed);
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT count(*) FROM pragma_integrity_check"
	                 " WHERE integrity_check = 'ok'",
	                 NULL),
	    1, "the database is not whole");
	/* And the store goes on. */
	snprintf(name, sizeof(name), "%s-after", tag);
	fx_workspace(&fx, name);
}

Test(store_faults, every_failed_allocation_of_a_write_is_an_error_reply)
{
	sweep("warm", true);
}

/* The first write of a kind also prepares its statements. */
Test(store_faults, a_failed_allocation_while_preparing_is_an_error_reply)
{
	sweep("cold", false);
}

/*
 * A task submit, which also appends an event and publishes it: a failed
 * one leaves no task and publishes nothing; an acknowledged one is there
 * (and is cancelled, so the next may queue).
 */
Test(store_faults, every_failed_allocation_of_a_submit_is_an_error_reply)
{
	const char *sp;
	char rid[32];
	long n;
	int failed = 0;

	fx_provision(&fx, 1);
	sp = fx_space(&fx, 0);
	fx_cancel_at(
	    &fx, sp, fx_task(&fx, sp, "warm"), CM_OK, __FILE__, __LINE__);
	for (n = 1;; n++) {
		struct pr_req q;
		struct pr_rep rep;
		size_t pubs = fx.n_pubs;
		bool fired;
		int64_t rows;

		cr_assert_lt(n, 100000, "a write that never ends allocating");
		snprintf(rid, sizeof(rid), "af-%ld", n);
		fx_req(&fx, &q, PR_OP_TASK_SUBMIT);
		q.workspace_id = fx.ws;
		q.space_id = sp;
		q.request_id = rid;
		q.capability = "noop";
		q.args = "{}";
		st_fault_fail_nth(n);
		st_store_call(fx.st, &q, &rep, fx_publish, &fx);
		fired = st_fault_fired();
		st_fault_fail_nth(0);
		rows = fx_sql_int(&fx,
		    "SELECT count(*) FROM browser_space_tasks WHERE request_id "
		    "= ?1",
		    rid, NULL);
		if (rep.err == CM_OK) {
			cr_assert_eq(rows, 1,
			    "allocation %ld failed: task %s"
			    " was acknowledged but is not there",
			    n, rid);
			fx_cancel_at(&fx, sp, rep.tasks[0].task_id, CM_OK,
			    __FILE__, __LINE__);
		} else {
			cr_assert(rep.err == CM_E_INTERNAL ||
			              rep.err == CM_E_STORE_UNAVAILABLE,
			    "allocation %ld failed: %s", n,
			    cm_err_code(rep.err));
			cr_assert_eq(rows, 0,
			    "allocation %ld failed: task %s failed but is "
			    "there",
			    n, rid);
			cr_assert_eq(fx.n_pubs, pubs,
			    "allocation %ld failed: a failed submit published",
			    n);
			failed++;
		}
		pr_rep_free(&rep);
		if (!fired)
			break;
	}
	cr_assert_gt(failed, 0, "no failed allocation failed a submit");
	cr_log_info("allocation failures (submit): %ld allocations swept, %d"
	            " writes failed",
	    n - 1, failed);
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT count(*) FROM pragma_integrity_check"
	                 " WHERE integrity_check = 'ok'",
	                 NULL),
	    1, "the database is not whole");
	fx_task(&fx, sp, "after");
}
