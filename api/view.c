/*
 * view.c: the Spaces' view (view.h): a Space's detail, and the list of a
 * workspace's Spaces as one caller asked for it.
 *
 * Why an answer from the view is current.  Every change to a Space's row
 * or to one of its tasks commits with an event of that Space
 * (store/events.c), and principals' names never change.  The store
 * publishes every event with a serial, counted without gaps in the order
 * the events leave, and a beat with the last serial when it has sent no
 * event for CM_STORE_BEAT_MS (acker.h).  A space.get or space.list
 * answer carries the serial as of its read (feed_serial).  The view keeps
 * it, and
 *  - drops it when the feed brings an event of its Space (a list: of any
 *    Space of its workspace), before that event reaches any client of
 *    this process (stream, PUB, or a parked request);
 *  - drops it when this process calls the store about that Space (a
 *    write, or a read of its tasks or events, whose answer may be newer
 *    than the view's), and the lists of its workspace, before that answer
 *    reaches the client;
 *  - drops every answer when a write names no Space (an admin's may end
 *    holds), when a serial is missed (a jump, or a beat that is not the
 *    last serial seen), when a feed message cannot be decoded, and when
 *    the feed's pipe comes or goes;
 *  - keeps a fill only if none of the above happened while the store was
 *    being asked (the ticket's generations), and never over a newer
 *    answer of the same ask (a higher serial);
 *  - serves an answer only once the feed has delivered every serial up
 *    to its read's, and while the feed has been heard from within
 *    CM_API_VIEW_QUIET_MS.
 * So no answer from the view is older than an event this process has
 * handed to any client, nor than any answer it has given about that
 * Space: a client reads its own writes.  A change made elsewhere (an
 * actor's, the supervisor's) shows once its event arrives, or, when that
 * event was lost, at the next beat at the latest.
 *
 * A route may keep with an answer the body it rendered from it
 * (api_view_keep_body), when that body is made of the answer alone; the
 * next hit of the same answer is then answered with that body, and
 * nothing is rendered again.  The body is freed with its answer, and is
 * served only while the answer it was made from is still the one held
 * (its fill) and nothing has voided it since.
 */
#include "view.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "limits.h"

/* A list's key: its workspace, owner filter, status, limit and cursor,
 * each after its length, so that no two asks share one. */
#define VIEW_KEY_MAX (2 * CM_ID_MAX + CM_ID_MAX + 64 + 5 * 24)

struct slot {
	uint64_t generation;    /* + 1 at every drop of this slot */
	uint64_t filled_in;     /* the view's generation when filled */
	uint64_t ws_generation; /* a list's: its workspace's when filled */
	char key[VIEW_KEY_MAX]; /* a detail's Space id, a list's key */
	char workspace[CM_ID_MAX + 1];
	int64_t serial;   /* feed_serial of the read */
	int64_t revision; /* a detail's: of the Space as read */
	char *reply;      /* the encoded reply; NULL: empty */
	size_t len;
	uint64_t fill; /* which fill it is (view.fills); 0: empty */
	char *body;    /* a body rendered from reply alone; NULL: none */
	size_t body_len;
};

static struct {
	pthread_mutex_t lock;
	bool on;
	uint64_t generation; /* + 1 at every loss: older fills are void */
	uint64_t fills;      /* + 1 at every fill: its id */
	bool known;          /* fed is the feed's last serial */
	int64_t fed;
	int64_t heard_ms; /* cm_mono_ms of the feed's last message */
	struct api_view_counts n;
	struct slot *slot;  /* CM_API_VIEW_SLOTS details, direct-mapped */
	struct slot *lists; /* CM_API_VIEW_LISTS lists, direct-mapped */
	/* + 1 at every change of a workspace (direct-mapped: a collision
	 * only drops more). */
	uint64_t ws_generation[CM_API_VIEW_WORKSPACES];
} view = {.lock = PTHREAD_MUTEX_INITIALIZER, .generation = 1};

_Static_assert((CM_API_VIEW_SLOTS & (CM_API_VIEW_SLOTS - 1)) == 0 &&
                   (CM_API_VIEW_LISTS & (CM_API_VIEW_LISTS - 1)) == 0 &&
                   (CM_API_VIEW_WORKSPACES & (CM_API_VIEW_WORKSPACES - 1)) == 0,
    "the view's tables are powers of two");

/* FNV-1a of s. */
static uint64_t
hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return h;
}

static struct slot *
slot_of(const char *space_id)
{
	return &view.slot[hash(space_id) & (CM_API_VIEW_SLOTS - 1)];
}

static uint64_t *
ws_gen(const char *workspace_id)
{
	return &view.ws_generation[hash(workspace_id) &
	                           (CM_API_VIEW_WORKSPACES - 1)];
}

static void
slot_empty(struct slot *s)
{
	free(s->reply);
	free(s->body);
	s->reply = s->body = NULL;
	s->len = s->body_len = 0;
	s->fill = 0;
	s->key[0] = '\0';
}

static bool
id_ok(const char *id)
{
	return id != NULL && *id != '\0' && strlen(id) <= CM_ID_MAX;
}

/* q's list key into key; false when q is not a list the view keeps. */
static bool
list_key(const struct pr_req *q, char key[VIEW_KEY_MAX])
{
	const char *o = q->owner_id ? q->owner_id : "",
	           *st = q->status ? q->status : "",
	           *a = q->after_id ? q->after_id : "";
	int n;

	if (q->op != PR_OP_SPACE_LIST || !id_ok(q->workspace_id) ||
	    strlen(o) > CM_ID_MAX || strlen(st) > 64 || strlen(a) > CM_ID_MAX)
		return false;
	n = snprintf(key, VIEW_KEY_MAX, "%zu:%s%zu:%s%zu:%s%zu:%s%lld",
	    strlen(q->workspace_id), q->workspace_id, strlen(o), o, strlen(st),
	    st, strlen(a), a, (long long)q->limit);
	return n > 0 && n < VIEW_KEY_MAX;
}

/* The slot q reads (its key into key), or NULL: not one the view keeps.
 * With the lock held. */
static struct slot *
slot_for(const struct pr_req *q, char key[VIEW_KEY_MAX])
{
	if (q->op == PR_OP_SPACE_GET && id_ok(q->space_id) &&
	    id_ok(q->workspace_id)) {
		snprintf(key, VIEW_KEY_MAX, "%s", q->space_id);
		return slot_of(q->space_id);
	}
	if (list_key(q, key))
		return &view.lists[hash(key) & (CM_API_VIEW_LISTS - 1)];
	return NULL;
}

void
api_view_start(const struct cm_config *cfg)
{
	pthread_mutex_lock(&view.lock);
	if (cfg->postgres_dsn[0] == '\0' && view.slot == NULL) {
		view.slot = calloc(CM_API_VIEW_SLOTS, sizeof(*view.slot));
		view.lists = calloc(CM_API_VIEW_LISTS, sizeof(*view.lists));
	}
	view.on = view.slot != NULL && view.lists != NULL;
	pthread_mutex_unlock(&view.lock);
}

void
api_view_stop(void)
{
	pthread_mutex_lock(&view.lock);
	for (size_t i = 0; view.slot != NULL && i < CM_API_VIEW_SLOTS; i++)
		slot_empty(&view.slot[i]);
	for (size_t i = 0; view.lists != NULL && i < CM_API_VIEW_LISTS; i++)
		slot_empty(&view.lists[i]);
	free(view.slot);
	free(view.lists);
	view.slot = view.lists = NULL;
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

/* space_id's detail, and every list of workspace_id (unless NULL). */
static void
drop(const char *workspace_id, const char *space_id)
{
	struct slot *s = slot_of(space_id);

	s->generation++;
	slot_empty(s);
	if (workspace_id != NULL && id_ok(workspace_id))
		(*ws_gen(workspace_id))++;
	else
		view.generation++; /* which lists it was in is not known */
}

/* api_view_get; a miss counted when count. */
static bool
get(const struct pr_req *q, struct pr_rep *r, struct api_view_ticket *t,
    bool count)
{
	char err[64], key[VIEW_KEY_MAX];
	struct slot *s;
	bool hit = false, list = q->op == PR_OP_SPACE_LIST;

	memset(t, 0, sizeof(*t));
	pthread_mutex_lock(&view.lock);
	if (!view.on || (s = slot_for(q, key)) == NULL) {
		pthread_mutex_unlock(&view.lock);
		return false;
	}
	if (s->reply != NULL && s->filled_in == view.generation && view.known &&
	    s->serial <= view.fed &&
	    cm_mono_ms() - view.heard_ms <= CM_API_VIEW_QUIET_MS &&
	    strcmp(s->key, key) == 0 &&
	    strcmp(s->workspace, q->workspace_id) == 0 &&
	    (!list || s->ws_generation == *ws_gen(q->workspace_id)))
		hit = pr_rep_decode(s->reply, s->len, r, err, sizeof(err)) == 0;
	if (hit) {
		view.n.hits++;
		t->fill = s->fill;
		t->list = list;
		t->index = (size_t)(s - (list ? view.lists : view.slot));
	} else {
		view.n.misses += count;
		t->generation = view.generation;
		t->slot_generation =
		    list ? *ws_gen(q->workspace_id) : s->generation;
		t->valid = true;
	}
	pthread_mutex_unlock(&view.lock);
	return hit;
}

bool
api_view_get(
    const struct pr_req *q, struct pr_rep *r, struct api_view_ticket *t)
{
	return get(q, r, t, true);
}

bool
api_view_look(
    const struct pr_req *q, struct pr_rep *r, struct api_view_ticket *t)
{
	return get(q, r, t, false);
}

/* The slot whose answer t hit, while it holds it and nothing has made it
 * void since; with the lock held. */
static struct slot *
hit_slot(const struct api_view_ticket *t)
{
	struct slot *s;

	if (!view.on || t->fill == 0 ||
	    t->index >= (t->list ? CM_API_VIEW_LISTS : CM_API_VIEW_SLOTS))
		return NULL;
	s = t->list ? &view.lists[t->index] : &view.slot[t->index];
	if (s->fill != t->fill || s->filled_in != view.generation ||
	    (t->list && s->ws_generation != *ws_gen(s->workspace)))
		return NULL;
	return s;
}

char *
api_view_body(const struct api_view_ticket *t, size_t *len)
{
	struct slot *s;
	char *body = NULL;

	*len = 0;
	pthread_mutex_lock(&view.lock);
	if ((s = hit_slot(t)) != NULL && s->body != NULL &&
	    (body = malloc(s->body_len + 1)) != NULL) {
		memcpy(body, s->body, s->body_len);
		body[s->body_len] = '\0';
		*len = s->body_len;
	}
	pthread_mutex_unlock(&view.lock);
	return body;
}

void
api_view_keep_body(
    const struct api_view_ticket *t, const char *body, size_t len)
{
	char *copy;
	struct slot *s;

	if (t->fill == 0 || body == NULL || len == 0 ||
	    (copy = malloc(len)) == NULL)
		return;
	memcpy(copy, body, len);
	pthread_mutex_lock(&view.lock);
	if ((s = hit_slot(t)) != NULL && s->body == NULL) {
		s->body = copy;
		s->body_len = len;
		copy = NULL;
	}
	pthread_mutex_unlock(&view.lock);
	free(copy);
}

/* Fills q's slot with r, unless something changed since t. */
static void
fill(const struct pr_req *q, const struct pr_rep *r,
    const struct api_view_ticket *t)
{
	bool list = q->op == PR_OP_SPACE_LIST;
	char key[VIEW_KEY_MAX];
	struct slot *s;
	char *buf;
	size_t len;

	if (t == NULL || !t->valid || r->err != CM_OK ||
	    (!list && r->n_spaces != 1) || r->feed_serial < 0 ||
	    pr_rep_encode(r, &buf, &len) != 0)
		return;
	pthread_mutex_lock(&view.lock);
	/* Nor over a newer answer of the same ask, which a worker that asked
	 * later may have put there first: a client may have been given it. */
	if (view.on && (s = slot_for(q, key)) != NULL &&
	    t->generation == view.generation &&
	    t->slot_generation ==
	        (list ? *ws_gen(q->workspace_id) : s->generation) &&
	    !(s->reply != NULL && s->filled_in == view.generation &&
	        strcmp(s->key, key) == 0 && s->serial > r->feed_serial)) {
		slot_empty(s);
		snprintf(s->key, sizeof(s->key), "%s", key);
		snprintf(
		    s->workspace, sizeof(s->workspace), "%s", q->workspace_id);
		s->filled_in = view.generation;
		s->ws_generation = list ? *ws_gen(q->workspace_id) : 0;
		s->serial = r->feed_serial;
		s->revision = list ? 0 : r->spaces[0].revision;
		s->reply = buf;
		s->len = len;
		s->fill = ++view.fills;
		buf = NULL;
	}
	pthread_mutex_unlock(&view.lock);
	free(buf);
}

void
api_view_after(const struct pr_req *q, const struct pr_rep *r,
    const struct api_view_ticket *t)
{
	if ((q->op == PR_OP_SPACE_GET || q->op == PR_OP_SPACE_LIST) &&
	    r != NULL && !(q->op == PR_OP_SPACE_GET && !id_ok(q->space_id)))
		fill(q, r, t);
	pthread_mutex_lock(&view.lock);
	if (!view.on) {
		pthread_mutex_unlock(&view.lock);
		return;
	}
	if (q->op == PR_OP_SPACE_GET && r != NULL) {
		/* The view's own read. */
	} else if (id_ok(q->space_id)) {
		drop(q->workspace_id, q->space_id);
	} else if (pr_op_is_write(q->op) || r == NULL) {
		view.generation++;
	} else {
		/* A list shows each Space as it is now: the view must not
		 * show one older afterwards. */
		for (size_t i = 0; i < r->n_spaces; i++) {
			const struct pr_space *sp = &r->spaces[i];
			struct slot *s;

			if (!id_ok(sp->space_id))
				continue;
			s = slot_of(sp->space_id);
			if (s->reply != NULL &&
			    strcmp(s->key, sp->space_id) == 0 &&
			    s->revision != sp->revision) {
				s->generation++;
				slot_empty(s);
			}
		}
	}
	pthread_mutex_unlock(&view.lock);
}

void
api_view_drop(const char *workspace_id, const char *space_id)
{
	if (!id_ok(space_id))
		return;
	pthread_mutex_lock(&view.lock);
	if (view.on)
		drop(workspace_id, space_id);
	pthread_mutex_unlock(&view.lock);
}

void
api_view_event(const char *workspace_id, const char *space_id, int64_t serial)
{
	pthread_mutex_lock(&view.lock);
	if (view.on) {
		if (!view.known || serial != view.fed + 1)
			lose();
		view.known = serial > 0;
		view.fed = serial;
		view.heard_ms = cm_mono_ms();
		if (space_id != NULL && id_ok(space_id))
			drop(workspace_id, space_id);
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
