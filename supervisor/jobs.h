/*
 * jobs.h: the supervisor's writes about one Space that must not be lost:
 * the task of an actor that died, to finalise; a Space to mark in error
 * or closed.  They wait in one FIFO and go to the store one at a time on
 * an asynchronous call that is made again until the store answers, so a
 * store that is down delays them, in order, and never drops one.
 */
#ifndef SUP_JOBS_H
#define SUP_JOBS_H

#include <nng/nng.h>
#include <stdbool.h>
#include <stdint.h>

#include "ids.h"
#include "limits.h"
#include "proto.h"
#include "rpc.h"

struct sup_job {
	/* PR_OP_SUP_FINALIZE_LOST, PR_OP_SPACE_MARK_ERROR or
	 * PR_OP_SPACE_MARK_CLOSED */
	enum pr_op op;
	char space_id[CM_ID_MAX + 1];
	const char *error_code;  /* mark_error: a string that lives forever */
	char op_id[CM_UUID_LEN]; /* the same in every attempt */
};

struct sup_jobs {
	struct cm_rpc_async *rpc;
	struct sup_job *v; /* v[0] is the job under way or next */
	size_t n, cap;
	int64_t retry_at; /* v[0] waits until then (monotonic ms) */
	const char *host; /* finalise only tasks on this host's instances */
};

/* An empty FIFO with its call on the REQ socket store, finalising lost
 * tasks only of Spaces on host (NULL: any; it must outlive j).  0 or -1. */
int sup_jobs_open(struct sup_jobs *j, nng_socket store, const char *host);
/* Abandons the job under way and frees the rest: before the socket. */
void sup_jobs_close(struct sup_jobs *j);

/* Queues a job, behind every other.  0, or -1 when memory is short. */
int sup_jobs_push(struct sup_jobs *j, enum pr_op op, const char *space_id,
    const char *error_code);
/* True while a job about space_id waits or is under way: no actor may
 * claim for that Space until it is done. */
bool sup_jobs_pending(const struct sup_jobs *j, const char *space_id);

/* Readable when the job under way has an outcome to take. */
int sup_jobs_fd(const struct sup_jobs *j);
/* The time the loop should next call sup_jobs_run, -1 for none. */
int64_t sup_jobs_due(const struct sup_jobs *j, int64_t now_ms);
/* Sends the first job when none is under way and its time has come. */
void sup_jobs_run(struct sup_jobs *j, int64_t now_ms);
/*
 * Takes the outcome of the job under way, without blocking.  True when
 * the job is done (the store gave a verdict that another attempt would
 * not change, logged when not ok): it leaves the FIFO and a copy goes to
 * *done.  A verdict worth another try keeps it first, CM_SUP_JOB_RETRY_MS
 * later.
 */
bool sup_jobs_take(struct sup_jobs *j, int64_t now_ms, struct sup_job *done);

#endif
