/*
 * view.h: the Spaces' view.  A Space's detail (space.get) and a list of
 * a workspace's Spaces (space.list, by its filter, limit and cursor) are
 * answered from the store's last answer for as long as the store's feed
 * proves nothing of them has changed since; otherwise by the store,
 * whose answer then fills the view.  view.c says why such an
 * answer is current.
 *
 * Thread-safe: workers read and fill it (api_call), the loop feeds it
 * (events.c), nng's threads tell it the feed's pipe came or went.
 */
#ifndef API_VIEW_H
#define API_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "proto.h"

/* What a read saw of the view: on a miss, what the fill must find
 * unchanged; on a hit, which answer it was (fill, not 0), with which a
 * body rendered from it may be kept. */
struct api_view_ticket {
	uint64_t generation, slot_generation;
	bool valid;
	uint64_t fill;
	size_t index;
	bool list;
};

/* Turns the view on, unless the database is shared with other hosts
 * (postgres_dsn): their apis answer the same clients, and this feed does
 * not see what they answered. */
void api_view_start(const struct cm_config *cfg);
/* Frees every answer held. */
void api_view_stop(void);

/* space.get or space.list q from the view into *r (its own arena;
 * pr_rep_free it); true on a hit.  *t says what was seen. */
bool api_view_get(
    const struct pr_req *q, struct pr_rep *r, struct api_view_ticket *t);
/* api_view_get, but a miss is not counted: the store will be asked, and
 * the view looked at, again (the connection loop's try). */
bool api_view_look(
    const struct pr_req *q, struct pr_rep *r, struct api_view_ticket *t);
/* The answer body rendered from the answer t hit, kept with it
 * (api_view_keep_body), as a malloc'd copy of *len bytes; NULL when
 * there is none, or that answer is gone. */
char *api_view_body(const struct api_view_ticket *t, size_t *len);
/* Keeps len bytes of body with the answer t hit, for as long as that
 * answer stays; rendered from it alone, so that any caller the view
 * serves it to may be given it.  Nothing when it is gone. */
void api_view_keep_body(
    const struct api_view_ticket *t, const char *body, size_t len);
/*
 * After the store answered q with r (NULL: no answer, the call may or
 * may not have happened): a space.get or space.list fills the view (t,
 * from api_view_get); any other call about a Space drops that Space's
 * answer and its workspace's lists; a write about none drops them all;
 * a list drops each Space it shows newer than the view holds it.
 */
void api_view_after(const struct pr_req *q, const struct pr_rep *r,
    const struct api_view_ticket *t);
/* space_id's answer, and workspace_id's lists, are no longer current (a
 * client is about to see something newer of it). */
void api_view_drop(const char *workspace_id, const char *space_id);

/* The feed (events.c, before the event reaches anyone): an event of
 * space_id of that serial (NULL: a notice, which changes nothing), or a
 * beat with the store's last serial. */
void api_view_event(
    const char *workspace_id, const char *space_id, int64_t serial);
void api_view_beat(int64_t serial);
/* The feed lost or may have lost a message: no answer held is current. */
void api_view_lose(void);

/* Counters since start, for /metrics. */
struct api_view_counts {
	uint64_t hits, misses, losses, beats;
};
void api_view_counts(struct api_view_counts *out);

#endif
