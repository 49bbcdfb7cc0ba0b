/*
 * store.h: the store engine, independent of any socket.
 *
 * spaced-store's loop (loop.c) feeds it encoded requests in groups; tests
 * drive it directly against a temporary or in-memory database.  It is
 * single-threaded: one st_store is used by one thread.
 */
#ifndef ST_STORE_H
#define ST_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "proto.h"

struct st_store;

struct st_store_opts {
	const char *sqlite_path; /* file path, or ":memory:" */
	/* Not NULL: PostgreSQL at this libpq DSN (a secret) instead. */
	const char *postgres_dsn;
	int max_spaces_per_workspace; /* 0: CM_SPACES_PER_WS_DEFAULT */
	int task_timeout_default_s;   /* 0: CM_TIMEOUT_DEFAULT_S */
	int task_timeout_max_s;       /* 0: CM_TIMEOUT_MAX_S */
	const char *host_id;          /* default host of new instances */
	/*
	 * A group's commit does not wait for the disk; the caller makes it
	 * durable (st_store_pending_sync) before acknowledging it.
	 */
	bool defer_sync;
	/* Clock for timestamps and leases; NULL means cm_now_ms. */
	int64_t (*now_ms)(void *arg);
	void *now_arg;
};

/*
 * Called once per committed event, after the commit, with the message to
 * publish (topic and msgpack record, see pr_pub_encode), the Space it is
 * of, its kind and its serial (PR_REC_EVENT).  The buffer is valid only
 * during the call.
 */
typedef void (*st_publish_fn)(void *arg, const char *space_id, const char *kind,
    const void *msg, size_t len, int64_t serial);

/* Opens the database, applies pending migrations.  Returns 0 or -1. */
int st_store_open(struct st_store **out, const struct st_store_opts *opts);
/* Closes the database and frees st; NULL is ignored. */
void st_store_close(struct st_store *st);

/*
 * What the caller may do with an item's answer besides sending it
 * (proto.h, actor.claim wait_ms).  ST_HOLD_PARK: an idle claim that found
 * no task, whose answer (no task) may wait up to hold_ms, and the claim
 * run again (st_store_exec) once a group publishes an event of space_id.
 * ST_HOLD_DROP: space_id's actor was declared lost (sup.finalize_lost): a
 * claim of that Space held from before is dropped, never run again.
 */
/* PARK: an idle claim to hold (held.h); DROP: a Space's actor declared
 * lost, its held claim dropped; NEXT: a finish answered, after which its
 * actor claims at once (st_held_expect). */
enum st_hold { ST_HOLD_NONE, ST_HOLD_PARK, ST_HOLD_DROP, ST_HOLD_NEXT };

/* One request in a group: the caller sets req/req_len; exec sets rep. */
struct st_item {
	const void *req;
	size_t req_len;
	char *rep; /* malloc'd encoded reply; the caller frees */
	size_t rep_len;
	/* Set by exec: a write, whose reply stands only if its group's
	 * commit finishes (st_store_sync). */
	bool write;
	/* Set by exec (see enum st_hold). */
	enum st_hold hold;
	int64_t hold_ms;
	char space_id[CM_ID_MAX + 1];
};

/*
 * Group commit: runs every item inside one transaction, each
 * write in its own SAVEPOINT, commits once, then calls publish for every
 * event of the group in commit order, then returns.  A request that cannot
 * be decoded gets an invalid_request reply and is logged as a bug.  A
 * write that changed something is remembered by op_id, in the same
 * transaction, and a request repeating that op_id gets the first reply
 * again, even after a restart; a write that changed nothing (a failed
 * check, a claim that found no task) is not remembered, since applying it
 * again is just as harmless.  The group also forgets up to 2n op_ids that
 * have outlived CM_OPID_TTL_MS.  When the
 * commit fails every write in the group is answered store_unavailable and
 * nothing is published.  Every item gets a reply unless allocation fails,
 * in which case rep is NULL.  Returns 0, or -1 when the commit failed.
 */
int st_store_exec(struct st_store *st, struct st_item *items, size_t n,
    st_publish_fn publish, void *arg);

/*
 * Publishes, through publish, an event another store committed (heard
 * through store/notify.h): the message its own store published, read
 * back from the event's row, or for a notice (sequence 0, kind) the same
 * wake-up with this store's clock.  Outside any group; one read.
 * Returns 0, or -1 when the database holds no such event or Space (one
 * in another schema of the same database, or not yet visible).
 */
int st_store_republish(struct st_store *st, const char *space_id,
    int64_t sequence, const char *kind, st_publish_fn publish, void *arg);
/* The DSN other stores' events are heard at (PostgreSQL), or NULL. */
const char *st_store_listen_dsn(const struct st_store *st);
/* The server processes the store's own announcements come from (its
 * writing connections, st_db_sessions) into out, at most max; returns
 * how many (none on SQLite). */
size_t st_store_sessions(struct st_store *st, int64_t *out, size_t max);

/*
 * With opts.defer_sync: what the last group left to finish (st_store_sync)
 * before any reply to, or event of, it leaves the process, or NULL when
 * it left nothing.  On SQLite the write-ahead log's sync; on PostgreSQL
 * the group's COMMIT itself, sent and not yet answered (store/db_pg.c),
 * which the group after next waits for: every sync must be finished.
 */
struct st_sync;
struct st_sync *st_store_pending_sync(struct st_store *st);
/*
 * Finishes sync, on one thread beside the store's (the loop's acker), in
 * the order of the groups.  Returns 0 once its group is committed and
 * durable.  Returns -1 when its COMMIT failed (PostgreSQL): nothing of the
 * group stands, none of its events may be published, and each of its
 * writes (st_item.write) is answered *rep instead (malloc'd, the caller
 * frees; NULL when out of memory), the store_unavailable reply
 * st_store_exec gives when a commit fails.  A failure that leaves the
 * database's state unknown ends the process (st_db_sync).
 */
int st_store_sync(
    struct st_store *st, struct st_sync *sync, char **rep, size_t *rep_len);
/* Whether one sync finishes every earlier group's too (SQLite), so that
 * only the newest of those waiting needs finishing. */
bool st_store_sync_covers(const struct st_store *st);

/*
 * Nanoseconds the store's thread has spent in the groups' BEGIN and
 * COMMIT (cm_mono_ns), for the log line at exit: the time a group's
 * transaction kept the thread waiting on the database rather than
 * running requests.
 */
int64_t st_store_txn_ns(const struct st_store *st);

/* Convenience for tests and tools: one request through st_store_exec. */
int st_store_call(struct st_store *st, const struct pr_req *req,
    struct pr_rep *rep, st_publish_fn publish, void *arg);

/*
 * Deletes at most CM_OPID_PRUNE_MAX remembered op_id replies older than
 * CM_OPID_TTL_MS, oldest first (every group also deletes some, see
 * st_store_exec).  Returns how many, or -1.
 */
int st_store_prune(struct st_store *st);

/* The work the store's queries have done, in SQLite VM steps (tests). */
int64_t st_store_work(struct st_store *st);

/* The PRAGMA synchronous value (2 is FULL), for tests. */
int st_store_synchronous(struct st_store *st);

#endif
