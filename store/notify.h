/*
 * notify.h: events across hosts on PostgreSQL.
 *
 * Every store on one database announces each event it commits with a
 * NOTIFY on ST_NOTIFY_CHANNEL, in the event's own transaction
 * (st_db_announce), so the announcement is delivered only if the commit
 * happens.  Each store also holds a second connection that LISTENs there
 * and hands its loop what other stores committed; the loop reads each
 * event's row and publishes it on its own PUB socket exactly as it
 * publishes its own (st_store_republish), so actors, the supervisor and
 * the api on every host see every Space's events.
 *
 * The listening connection never blocks: it connects, LISTENs and reads
 * through libpq's non-blocking calls, driven by the loop's poll().  A lost
 * connection is connected again with backoff, and is not fatal:
 * subscribers fill any gap from the event table, so a lost announcement
 * costs latency only.
 */
#ifndef ST_NOTIFY_H
#define ST_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "limits.h"

/* The one channel every store announces on and listens to. */
#define ST_NOTIFY_CHANNEL "spaced_events"

struct st_notify;

/* What one announcement names: an event, or a notice (sequence 0). */
struct st_heard {
	char space_id[CM_ID_MAX + 1];
	int64_t sequence;
	char kind[CM_ID_MAX + 1]; /* a notice's kind; "" for an event */
};

/*
 * Starts listening at dsn (a secret, kept by libpq alone), ignoring what
 * the n_self server processes self (the store's writing connections,
 * st_db_sessions, at most CM_PG_WRITERS) announced themselves.  Never
 * blocks: the connection is made by st_notify_tend.  Returns 0, or -1
 * when out of memory.
 */
int st_notify_open(struct st_notify **out, const char *dsn, const int64_t *self,
    size_t n_self);
/* Closes the listening connection and frees n, its copy of the DSN wiped
 * first; NULL is ignored. */
void st_notify_close(struct st_notify *n);

/* The socket to poll and for what (POLLIN/POLLOUT), or -1 when there is
 * none to watch (waiting to connect again). */
int st_notify_fd(const struct st_notify *n, short *events);
/* When st_notify_tend must run even if the socket says nothing
 * (cm_mono_ms; INT64_MAX for never). */
int64_t st_notify_due(const struct st_notify *n);
/*
 * Advances the connection at now_ms (cm_mono_ms): connects, LISTENs,
 * reads what the server sent, or, once it is lost, closes it and waits
 * CM_NOTIFY_RETRY_MIN_MS, doubling up to CM_NOTIFY_RETRY_MAX_MS, before
 * connecting again.  Never blocks.
 */
void st_notify_tend(struct st_notify *n, int64_t now_ms);
/*
 * Takes the next announcement another store made into *out.  False when
 * none is waiting.  A malformed one is logged and skipped.
 */
bool st_notify_next(struct st_notify *n, struct st_heard *out);
/* Whether the connection is listening (tests and the log). */
bool st_notify_listening(const struct st_notify *n);

#endif
