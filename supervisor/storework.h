/*
 * storework.h: every store call the supervisor makes, each asynchronous
 * on a call of its own (struct sup): the bootstrap, the rescan, the lease
 * sweep, and the jobs about one Space.  A *_start or kick function sends
 * a request when it is due; the matching *_reply takes the outcome once
 * the call's fd is readable.  None of them waits on the store.
 */
#ifndef SUP_STOREWORK_H
#define SUP_STOREWORK_H

#include "sup.h"

/* Queues a job about space_id (jobs.h); aborts when memory is short. */
void sup_work_queue(
    struct sup *s, enum pr_op op, const char *space_id, const char *code);

/* Starts a bootstrap when the store is up, none is done or under way and
 * the retry time has come.  Once done, the api starts (sup_start_api). */
void sup_work_boot_kick(struct sup *s, int64_t now_ms);
void sup_work_boot_reply(struct sup *s);

/* Asks the store what should run, a page at a time; a rescan asked for
 * while one is under way runs once it is done.  The first complete walk
 * sets s->running. */
void sup_work_rescan(struct sup *s);
void sup_work_scan_reply(struct sup *s);

void sup_work_sweep(struct sup *s);
void sup_work_sweep_reply(struct sup *s);

/* Asks the store for every instance, for the warm standbys (standby.h),
 * every CM_SUP_RESCAN_MS and whenever an actor is done. */
void sup_work_standby_scan(struct sup *s);
void sup_work_standby_reply(struct sup *s);

/* Takes the outcome of the job under way (counted in s->jobs_done). */
void sup_work_jobs_reply(struct sup *s);

#endif
