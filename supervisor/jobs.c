#include "jobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

int
sup_jobs_open(struct sup_jobs *j, nng_socket store, const char *host)
{
	memset(j, 0, sizeof(*j));
	j->host = host;
	return cm_rpc_async_open(&j->rpc, store) == 0 ? 0 : -1;
}

void
sup_jobs_close(struct sup_jobs *j)
{
	cm_rpc_async_close(j->rpc);
	free(j->v);
	memset(j, 0, sizeof(*j));
}

int
sup_jobs_push(struct sup_jobs *j, enum pr_op op, const char *space_id,
    const char *error_code)
{
	struct sup_job *job;

	if (j->n == j->cap) {
		size_t cap = j->cap ? j->cap * 2 : 16;
		struct sup_job *v = realloc(j->v, cap * sizeof(*v));

		if (v == NULL)
			return -1;
		j->v = v;
		j->cap = cap;
	}
	job = &j->v[j->n++];
	memset(job, 0, sizeof(*job));
	job->op = op;
	snprintf(job->space_id, sizeof(job->space_id), "%s", space_id);
	job->error_code = error_code;
	cm_uuid7(job->op_id);
	return 0;
}

bool
sup_jobs_pending(const struct sup_jobs *j, const char *space_id)
{
	for (size_t i = 0; i < j->n; i++)
		if (strcmp(j->v[i].space_id, space_id) == 0)
			return true;
	return false;
}

int
sup_jobs_fd(const struct sup_jobs *j)
{
	return cm_rpc_async_fd(j->rpc);
}

int64_t
sup_jobs_due(const struct sup_jobs *j, int64_t now_ms)
{
	if (j->n == 0 || cm_rpc_async_busy(j->rpc))
		return -1;
	return j->retry_at > now_ms ? j->retry_at : now_ms;
}

void
sup_jobs_run(struct sup_jobs *j, int64_t now_ms)
{
	const struct sup_job *job;
	struct pr_req q;

	if (j->n == 0 || cm_rpc_async_busy(j->rpc) || now_ms < j->retry_at)
		return;
	job = &j->v[0]; /* v is NULL while no job was ever queued */
	memset(&q, 0, sizeof(q));
	q.op = job->op;
	q.space_id = job->space_id;
	q.error_code = job->error_code;
	q.op_id = job->op_id;
	if (job->op == PR_OP_SUP_FINALIZE_LOST)
		q.host = j->host;
	/* No bound on attempts: the job waits for the store, however long
	 * it is down. */
	if (cm_rpc_async_start(j->rpc, &q, CM_SUP_STORE_ATTEMPT_MS, 0) != CM_OK)
		j->retry_at = now_ms + CM_SUP_JOB_RETRY_MS;
}

static void
report(const struct sup_job *job, const struct pr_rep *r)
{
	if (job->op == PR_OP_SUP_FINALIZE_LOST && r->err == CM_OK &&
	    r->count > 0)
		cm_info("supervisor: space %s: the lost actor's task is %s",
		    job->space_id,
		    r->n_tasks ? r->tasks[0].status : "finalised");
	/* Finalising a Space the store no longer has leaves nothing to do. */
	else if (r->err != CM_OK && !(job->op == PR_OP_SUP_FINALIZE_LOST &&
	                                r->err == CM_E_NOT_FOUND))
		cm_warnx("supervisor: space %s: %s failed: %s", job->space_id,
		    pr_op_name(job->op), cm_err_code(r->err));
}

bool
sup_jobs_take(struct sup_jobs *j, int64_t now_ms, struct sup_job *done)
{
	struct pr_rep r;
	bool again;

	if (!cm_rpc_async_take(j->rpc, &r, NULL))
		return false;
	again = r.err != CM_OK && cm_err_retryable(r.err);
	if (!again)
		report(&j->v[0], &r);
	pr_rep_free(&r);
	if (again) {
		j->retry_at = now_ms + CM_SUP_JOB_RETRY_MS;
		return false;
	}
	*done = j->v[0];
	/* O(n) in the jobs waiting: a handful, one per actor that died. */
	memmove(&j->v[0], &j->v[1], (j->n - 1) * sizeof(j->v[0]));
	j->n--;
	j->retry_at = 0;
	return true;
}
