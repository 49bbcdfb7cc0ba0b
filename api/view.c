/*
 * view.c: the Spaces' view (view.h).
 *
 * Why an answer from the view is current.  Every change to a Space's row
 * or to one of its tasks commits with an event of that Space
 * (store/events.c), and principals' names never change.  The store
 * publishes every event with a serial, counted without gaps in the order
 * the events leave, and a beat with the last serial when it has sent no
 * event for CM_STORE_BEAT_MS (acker.h).  A space.get answer carries the
 * serial as of its read (feed_serial).  The view keeps it, and
 *  - drops it when the feed brings an event of its Space, before that
 *    event reaches any client of this process (stream, PUB, or a parked
 *    request);
 *  - drops it when this process calls the store about that Space (a
 *    write, or a read of its tasks or events, whose answer may be newer
 *    than the view's), before that answer reaches the client;
 *  - drops every answer when a write names no Space (an admin's may end
 *    holds), when a serial is missed (a jump, or a beat that is not the
 *    last serial seen), when a feed message cannot be decoded, and when
 *    the feed's pipe comes or goes;
 *  - keeps a fill only if none of the above happened while the store was
 *    being asked (the ticket's generations);
 *  - serves an answer only once the feed has delivered every serial up
 *    to its read's, and while the feed has been heard from within
 *    CM_API_VIEW_QUIET_MS.
 * So no answer from the view is older than an event this process has
 * handed to any client, nor than any answer it has given about that
 * Space: a client reads its own writes.  A change made elsewhere (an
 * actor's, the supervisor's) shows once its event arrives, or, when that
 * event was lost, at the next beat at the latest.
 */
#include "view.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "limits.h"

struct slot {
	uint64_t generation; /* + 1 at every drop of this slot */
	uint64_t filled_in;  /* the view's generation when filled */
	char space[CM_ID_MAX + 1];
	char workspace[CM_ID_MAX + 1];
	int64_t serial;   /* feed_serial of the read */
	int64_t revision; /* of the Space as read */
	char *reply;      /* the encoded space.get reply; NULL: empty */
	size_t len;
};

static struct {
	pthread_mutex_t lock;
	bool on;
	uint64_t generation; /* + 1 at every loss: older fills are void */
	bool known;          /* fed is the feed's last serial */
	int64_t fed;
	int64_t heard_ms; /* cm_mono_ms of the feed's last message */
	struct api_view_counts n;
	struct slot *slot; /* CM_API_VIEW_SLOTS, direct-mapped */
} view = {.lock = PTHREAD_MUTEX_INITIALIZER, .generation = 1};

_Static_assert((CM_API_VIEW_SLOTS & (CM_API_VIEW_SLOTS - 1)) == 0,
    "CM_API_VIEW_SLOTS is a power of two");

/* FNV-1a of the id, to its slot. */
static struct slot *
slot_of(const char *space_id)
{
	uint64_t h = 14695981039346656037ULL;

	for (const unsigned char *p = (const unsigned char *)space_id; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return &view.slot[h & (CM_API_VIEW_SLOTS - 1)];
}

static void
slot_empty(struct slot *s)
{
	free(s->reply);
	s->reply = NULL;
	s->len = 0;
	s->space[0] = '\0';
}

static bool
id_ok(const char *id)
{
	return id != NULL && *id != '\0' && strlen(id) <= CM_ID_MAX;
}

void
api_view_start(const struct cm_config *cfg)
{
	pthread_mutex_lock(&view.lock);
	if (cfg->postgres_dsn[0] == '\0' && view.slot == NULL)
		view.slot = calloc(CM_API_VIEW_SLOTS, sizeof(*view.slot));
	view.on = view.slot != NULL;
	pthread_mutex_unlock(&view.lock);
}

void
api_view_stop(void)
{
	pthread_mutex_lock(&view.lock);
	for (size_t i = 0; view.slot != NULL && i < CM_API_VIEW_SLOTS; i++)
		slot_empty(&view.slot[i]);
	free(view.slot);
	view.slot = NULL;
	view.on = false;
	pthread_mutex_unlock(&view.lock);
}

/* With the lock held.  The first message heard is no loss. */
static void
lose(void)
{
	view.generation++;
	view.n.losses += view.known;
	view.known = false;
}

static void
drop(const char *space_id)
{
	struct slot *s = slot_of(space_id);

	s->generation++;
	slot_empty(s);
}

bool
api_view_get(
    const struct pr_req *q, struct pr_rep *r, struct api_view_ticket *t)
{
	char err[64];
	struct slot *s;
	bool hit = false;

	memset(t, 0, sizeof(*t));
	if (q->op != PR_OP_SPACE_GET || !id_ok(q->space_id) ||
	    !id_ok(q->workspace_id))
		return false;
	pthread_mutex_lock(&view.lock);
	if (!view.on) {
		pthread_mutex_unlock(&view.lock);
		return false;
	}
	s = slot_of(q->space_id);
	if (s->reply != NULL && s->filled_in == view.generation && view.known &&
	    s->serial <= view.fed &&
	    cm_mono_ms() - view.heard_ms <= CM_API_VIEW_QUIET_MS &&
	    strcmp(s->space, q->space_id) == 0 &&
	    strcmp(s->workspace, q->workspace_id) == 0)
		hit = pr_rep_decode(s->reply, s->len, r, err, sizeof(err)) == 0;
	if (hit) {
		view.n.hits++;
	} else {
		view.n.misses++;
		t->generation = view.generation;
		t->slot_generation = s->generation;
		t->valid = true;
	}
	pthread_mutex_unlock(&view.lock);
	return hit;
}

/* Fills q's slot with r, unless something changed since t. */
static void
fill(const struct pr_req *q, const struct pr_rep *r,
    const struct api_view_ticket *t)
{
	struct slot *s;
	char *buf;
	size_t len;

	if (t == NULL || !t->valid || r->err != CM_OK || r->n_spaces != 1 ||
	    r->feed_serial <= 0 || pr_rep_encode(r, &buf, &len) != 0)
		return;
	pthread_mutex_lock(&view.lock);
	s = slot_of(q->space_id);
	if (view.on && t->generation == view.generation &&
	    t->slot_generation == s->generation) {
		slot_empty(s);
		memcpy(s->space, q->space_id, strlen(q->space_id) + 1);
		memcpy(
		    s->workspace, q->workspace_id, strlen(q->workspace_id) + 1);
		s->filled_in = view.generation;
		s->serial = r->feed_serial;
		s->revision = r->spaces[0].revision;
		s->reply = buf;
		s->len = len;
		buf = NULL;
	}
	pthread_mutex_unlock(&view.lock);
	free(buf);
}

void
api_view_after(const struct pr_req *q, const struct pr_rep *r,
    const struct api_view_ticket *t)
{
	if (q->op == PR_OP_SPACE_GET && r != NULL) {
		if (id_ok(q->space_id) && id_ok(q->workspace_id))
			fill(q, r, t);
		return;
	}
	pthread_mutex_lock(&view.lock);
	if (!view.on) {
		pthread_mutex_unlock(&view.lock);
		return;
	}
	if (id_ok(q->space_id)) {
		drop(q->space_id);
	} else if (pr_op_is_write(q->op)) {
		view.generation++;
	} else if (r != NULL) {
		/* A list shows each Space as it is now: the view must not
		 * show one older afterwards. */
		for (size_t i = 0; i < r->n_spaces; i++) {
			const struct pr_space *sp = &r->spaces[i];
			struct slot *s;

			if (!id_ok(sp->space_id))
				continue;
			s = slot_of(sp->space_id);
			if (s->reply != NULL &&
			    strcmp(s->space, sp->space_id) == 0 &&
			    s->revision != sp->revision)
				drop(sp->space_id);
		}
	}
	pthread_mutex_unlock(&view.lock);
}

void
api_view_drop(const char *space_id)
{
	if (!id_ok(space_id))
		return;
	pthread_mutex_lock(&view.lock);
	if (view.on)
		drop(space_id);
	pthread_mutex_unlock(&view.lock);
}

void
api_view_event(const char *space_id, int64_t serial)
{
	pthread_mutex_lock(&view.lock);
	if (view.on) {
		if (!view.known || serial != view.fed + 1)
			lose();
		view.known = serial > 0;
		view.fed = serial;
		view.heard_ms = cm_mono_ms();
		if (space_id != NULL && id_ok(space_id))
			drop(space_id);
		else if (space_id != NULL)
			lose();
	}
	pthread_mutex_unlock(&view.lock);
}

void
api_view_beat(int64_t serial)
{
	pthread_mutex_lock(&view.lock);
	if (view.on) {
		view.n.beats++;
		if (!view.known || serial != view.fed)
			lose();
		view.known = true;
		view.fed = serial;
		view.heard_ms = cm_mono_ms();
	}
	pthread_mutex_unlock(&view.lock);
}

void
api_view_lose(void)
{
	pthread_mutex_lock(&view.lock);
	lose();
	pthread_mutex_unlock(&view.lock);
}

void
api_view_counts(struct api_view_counts *out)
{
	pthread_mutex_lock(&view.lock);
	*out = view.n;
	pthread_mutex_unlock(&view.lock);
}
