/*
 * loop.h: the state of one actor's loop, shared by its files: actor.c
 * (the loop, and the task it runs through the driver), calls.c (its
 * store calls, one at a time through an asynchronous handle) and
 * upload.c (the files an upload fetches before its call starts).
 * Private to space-actor/; the actor's interface is actor.h.
 */
#ifndef ACT_LOOP_H
#define ACT_LOOP_H

#include <jansson.h>
#include <nng/nng.h>
#include <stdbool.h>
#include <stdint.h>

#include "driver.h"
#include "egress.h"
#include "ids.h"
#include "instance.h"
#include "live.h"
#include "page_log.h"
#include "proto.h"
#include "rpc.h"
#include "status.h"

/* The store call under way, if any. */
enum act_call_kind {
	CALL_NONE,
	CALL_CLAIM,
	CALL_HEARTBEAT,
	CALL_CANCEL,
	CALL_FINISH,
	CALL_MARK_ERROR,
	CALL_MARK_CLOSED,
	CALL_BLOCKED,
	CALL_PAGE_EVENT,
	CALL_FILE_GET,
};

/* A refusal of the egress proxy waiting to be recorded as a
 * network_blocked event. */
struct act_blocked {
	char host[CM_HOST_MAX + 3];
	const char *reason; /* static (egress.h) */
	char op_id[CM_UUID_LEN];
	int64_t at; /* when it was queued (monotonic) */
};

/*
 * An upload's files, fetched from the store one at a time (space.file_get)
 * and written under dir before the driver's call starts.  dir is the
 * task's own directory inside the driver's upload_dir ("": the runtime
 * takes no files, which are only fetched).
 */
struct act_upload {
	bool fetching; /* files are still to get: the call waits */
	size_t next;   /* the index in args.files of the next one */
	bool called;   /* the call started: the page may read them later */
	char dir[CM_PATH_MAX];
};

/* The directories of the last CM_UPLOAD_TASKS_KEPT uploads whose call
 * started, kept for the page to read (a ring, oldest at n % max). */
struct act_uploads_kept {
	char dir[CM_UPLOAD_TASKS_KEPT][CM_PATH_MAX];
	unsigned n;
};

/* A write the store has not confirmed yet; its op_id is kept for every
 * attempt and every retry after an error reply. */
struct act_write {
	bool pending;
	char op_id[CM_UUID_LEN];
};

struct actor {
	const struct cm_config *cfg;
	char space_id[CM_ID_MAX + 1];
	char holder[CM_ID_MAX + 1];
	nng_socket req;
	struct cm_rpc_async *call;
	enum act_call_kind inflight;
	int64_t retry_at_ms; /* no new call before (after an error reply) */
	int wake_fd;         /* -1: no supervisor, timers only */
	int sig_fd;

	struct pr_rep load; /* owns the strings inst.env points at */
	struct act_instance inst;
	const struct act_driver_ops *ops;
	struct act_driver *drv;
	/* A managed runtime's egress proxy (egress.h), for the actor's whole
	 * life: the driver borrows it. */
	struct act_egress *egress;
	/* The live view's control socket and screencast (live.h); NULL:
	 * none could be bound, and the Space runs without one. */
	struct act_live *live;

	bool need_claim;
	int64_t next_claim_ms;
	int64_t claim_at_ms; /* when the last claim was sent */
	bool closing;
	bool stopping;
	int64_t stop_deadline_ms;
	bool failed; /* something is unrecorded: exit non-zero */
	/* A claim was dropped before its answer came: it may have taken a
	 * task this actor never heard of, so the exit is non-zero too, and
	 * the supervisor finalises what the Space's lost actor held. */
	bool claim_unheard;

	/*
	 * A reset of the runtime under way (driver.h), and what ends with it:
	 * the cancelled or timed-out outcome of the task it cleans up after,
	 * or nothing (a task lost to the lease sweep).  No task is claimed
	 * meanwhile.
	 */
	enum { CLEAN_NONE, CLEAN_CANCEL, CLEAN_TIMEOUT, CLEAN_QUIET } cleanup;

	/* The task held: running while !outcome.pending, then recording. */
	bool have_task;
	bool cancel_wanted;
	bool cancel_on_record; /* the store has the task's cancel request */
	char task_id[CM_ID_MAX + 1];
	char request_id[CM_ID_MAX + 1];
	char capability[CM_CAPABILITY_MAX + 1];
	json_t *args;
	int64_t deadline_ms;
	int64_t next_heartbeat_ms;

	struct act_write cancel; /* task.cancel, before a cancelled outcome */
	struct act_write outcome;
	enum cm_task_status out_status;
	const char *out_code; /* a static code string, failed only */
	char *out_result;     /* redacted, malloc'd */
	char *out_message;    /* redacted, malloc'd */
	/* A completed call's artifact (image bytes, so not redacted). */
	struct act_outcome art;

	struct act_write mark_error;
	const char *error_code;
	bool instance_down; /* mark_error takes the instance out of service */
	bool retiring;      /* the Space is in error: exit once recorded */
	struct act_write mark_closed;
	bool close_begun; /* mark_closed was asked for (once) */

	/* network_blocked events not recorded yet, oldest first. */
	struct act_blocked blocked[CM_ACTOR_BLOCKED_MAX];
	int n_blocked;
	/* The last ones queued, a ring: no repeat of one of them within
	 * CM_ACTOR_BLOCKED_REPEAT_MS. */
	struct act_blocked recent[CM_ACTOR_BLOCKED_MAX];
	unsigned n_recent;

	/* What the page did, not recorded yet (page_log.h). */
	struct act_page_log page;

	/* The running upload's files, and the last ones' (upload.c). */
	struct act_upload up;
	struct act_uploads_kept up_kept;
};

/* --- actor.c ------------------------------------------------------------ */

/* Marks w pending under a fresh op_id, which every attempt and retry of
 * the write carries. */
void act_write_begin(struct act_write *w);
/* Starts the task a claim returned (args: its JSON, may be NULL). */
void act_task_start(struct actor *a, const struct pr_task *t, const char *args);
/* Forgets the task held, recorded or not, and what was kept for it. */
void act_task_drop(struct actor *a);
/* The running task fails with err and message (raw: redacted here) before
 * its call reached the runtime. */
void act_task_fail(struct actor *a, enum cm_err err, const char *message);
/* Starts the running task's call on the driver (its checks passed and
 * what it needed is in place). */
void act_task_call(struct actor *a);

/* --- calls.c ------------------------------------------------------------ */

/* Takes the outcome of the call under way, if it has ended, and acts on
 * the reply. */
void act_calls_take(struct actor *a);
/* Starts the next store call, in order of what must be recorded first;
 * nothing when a call is under way or none is due. */
void act_calls_next(struct actor *a);
/*
 * Queues a network_blocked event (host and reason) for the store.  One
 * queued for the same host and reason, still or within the last
 * CM_ACTOR_BLOCKED_REPEAT_MS, stands for both; past
 * CM_ACTOR_BLOCKED_MAX queued the refusal is only logged, so a page that
 * hammers a refused host cannot grow the queue or the log without bound.
 */
void act_blocked_add(struct actor *a, const char *host, const char *reason);
/* When a call is under way: abandons it and frees the handle (a->call
 * is NULL after).  A claim whose answer never came counts as unrecorded. */
void act_calls_abandon(struct actor *a);
/*
 * Before the loop: loads the Space and its instance into a->load and
 * a->inst, asking until the store answers.  Returns 1 ready to run, 0
 * nothing to do (the Space is closed or in error, or a stop signal came
 * first), -1 failure.
 */
int act_calls_load(struct actor *a);
/* Before the loop: the runtime cannot be used, so the Space goes to
 * error.  Returns 0 once recorded, -1 otherwise. */
int act_calls_mark_unusable(struct actor *a);

/* --- upload.c ----------------------------------------------------------- */

/*
 * The running task is an upload: its names are checked and its directory
 * made, then its files are fetched (act_upload_next, act_upload_got) and
 * the call starts once the last is written.  A check that fails fails the
 * task before anything reaches the page.
 */
void act_upload_begin(struct actor *a);
/* The name of the file to fetch next, or NULL when none is (borrowed from
 * the task's args). */
const char *act_upload_next(const struct actor *a);
/* The store's answer for that file. */
void act_upload_got(struct actor *a, const struct pr_rep *r);
/* The task is dropped: the files of an upload whose call started stay
 * for the page to read (the last CM_UPLOAD_TASKS_KEPT uploads'), any
 * other's go. */
void act_upload_drop(struct actor *a);

#endif
