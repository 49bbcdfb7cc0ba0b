/* loop.h: spaced-store's socket loop around the engine. */
#ifndef ST_LOOP_H
#define ST_LOOP_H

#include "store.h"

/*
 * Binds the REP socket at rep_url, the PUB socket of every event at
 * pub_url and the one of the supervisor's notices at notice_url (the
 * events cm_event_kind_for_supervisor names, but a queued one the held
 * claim of its Space answers), writes
 * one readiness line to notify_fd (when >= 0) and serves until SIGTERM or
 * SIGINT, which the caller must have blocked.  Each wake-up drains up to
 * CM_GROUP_COMMIT_MAX requests into one group commit.  Returns 0 on a
 * clean stop, -1 when a socket cannot be set up.
 */
int st_loop_run(struct st_store *st, const char *rep_url, const char *pub_url,
    const char *notice_url, int notify_fd);

#endif
