/*
 * page_frames.c: the frames of a page.
 *
 * Out-of-process frames.  A frame of another site runs in a renderer of
 * its own, and the page's interception (page_fetch.c) never sees its
 * requests: only its document's, which its parent asks for.  The page's
 * session auto-attaches each such frame as a flat session of the same
 * connection (act_page_attach_params), held before it runs; the frame's
 * requests are made to pause as the page's do, its own frames to attach
 * in turn, and only then is it let run.  One past CM_FRAMES_MAX sessions,
 * or deeper than CM_FRAME_DEPTH_MAX, or whose interception the browser
 * refused, is never let run: it shows and loads nothing.  A frame's
 * session's events never move the page: the main frame is the page's
 * session's alone.
 *
 * Snapshots.  The main document's script (snapshot_js.h) gives each
 * iframe's node the place of its element in the world's list.  Each is
 * read in turn, breadth first, at most CM_FRAMES_MAX in a snapshot and
 * CM_FRAME_DEPTH_MAX deep: its element, the frame it holds
 * (DOM.describeNode), the session its document lives in (an attached
 * frame's target id is its frame id; any other frame is in its parent's
 * renderer), an isolated world of its document, kept while the document
 * lasts, and the same script there.  Its nodes nest under the iframe's,
 * and outline.c writes the whole in document order within max_chars and
 * the refs' bound.  Before its script, the frame's elements clickable by
 * a listener alone are handed to its world (page_listeners.c).  Cost:
 * four round trips a frame read (three once its world is kept), each
 * bounded as the main document's, and the listeners' five and one per
 * element found.
 *
 * Refs.  A ref of a frame's element carries its slot in the snapshot's
 * table (id >> 32) and its place in that frame's list.  It is resolved in
 * that frame's world, on its session; the element is scrolled into view,
 * and the offsets of the iframes around it, up to the top page, are
 * added to its point (DOM.getBoxModel of each iframe: within one renderer
 * the box is in its top frame's viewport already, so only each renderer's
 * own top frame adds one), so input goes to the top page where a person's
 * would.  A frame that navigated or went away makes its refs stale: its
 * world is gone with its document, and a context id is never reused, so
 * a ref never names an element of another document.
 */
#include "page.h"
#include "page_int.h"

#include "snapshot_js.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

/* Brings an element into the view of its frame and of every frame above
 * it, before its point and its frames' offsets are read. */
static const char JS_INTO_VIEW[] =
    "function(){this.scrollIntoView({block:'center',inline:'center'});}";

/* An out-of-process frame's session. */
struct frames_child {
	bool used;
	char session[CM_ID_MAX + 1];
	char target[CM_ID_MAX + 1]; /* its frame's id too */
	char parent[CM_ID_MAX + 1]; /* the session that attached it */
	int depth;                  /* 1: a frame of the page's document */
	int64_t cmd;                /* its setup command awaited; 0: none */
	struct act_page *page;
};

/* A frame a snapshot read: slot k (from 1) of its refs' ids. */
struct frames_slot {
	char frame[CM_ID_MAX + 1];
	char session[CM_ID_MAX + 1]; /* where its document lives */
	int64_t world;               /* its world; 0: gone, or not read */
	int64_t owner; /* its iframe element, in its parent's session */
	int64_t doc;   /* its document's backend id, when its parent's
	                  renderer has it (0: an out-of-process frame) */
	int parent;    /* its parent's slot; 0: the main frame */
};

/* An iframe's node to be read. */
struct frames_queued {
	json_t *node;  /* borrowed from the nodes being built */
	int parent;    /* the slot of the frame it is in */
	int64_t index; /* its element's place in that frame's list */
	int depth;     /* the outline level of its line */
	int level;     /* 1: an iframe of the main document */
};

struct act_frames {
	struct frames_child kids[CM_FRAMES_MAX];
	struct frames_slot slots[CM_FRAMES_MAX + 1]; /* [0]: unused */
	int n_slots;
	/* The snapshot being read: the main document's reply, which the
	 * frames' nodes join, what is still to read, and the last table,
	 * whose worlds are kept for the same documents. */
	json_t *v;
	struct frames_queued queued[CM_FRAMES_MAX];
	int n_queued, done_queued;
	int left_out; /* frames past the bounds */
	int unread;   /* frames that went away or could not be read */
	struct frames_slot prev[CM_FRAMES_MAX + 1];
	int n_prev;
	bool kept_world;    /* the frame being read has a kept world */
	page_step run_next; /* after its script, the frame being read */
	int at_slot;        /* the element's offsets: the frame they are at */
};

json_t *
act_page_attach_params(void)
{
	return json_pack("{s:b, s:b, s:b, s:[{s:s}]}", "autoAttach", 1,
	    "waitForDebuggerOnStart", 1, "flatten", 1, "filter", "type",
	    "iframe");
}

static struct act_frames *
frames_of(struct act_page *p)
{
	if (p->frames == NULL)
		p->frames = calloc(1, sizeof(*p->frames));
	return p->frames;
}

static struct frames_child *
frames_child(struct act_frames *f, const char *session)
{
	for (int i = 0; f != NULL && session != NULL && i < CM_FRAMES_MAX; i++)
		if (f->kids[i].used && strcmp(f->kids[i].session, session) == 0)
			return &f->kids[i];
	return NULL;
}

/* The session slot k's document lives in. */
static const char *
frames_session(const struct act_page *p, int k)
{
	return k == 0 ? p->session : p->frames->slots[k].session;
}

/* Slot k and every slot under it name nothing any more. */
static void
frames_stale(struct act_frames *f, int k)
{
	f->slots[k].world = 0;
	for (int i = 1; i <= f->n_slots; i++)
		for (int up = f->slots[i].parent, n = 0;
		     up != 0 && n <= CM_FRAME_DEPTH_MAX;
		     up = f->slots[up].parent, n++)
			if (up == k)
				f->slots[i].world = 0;
}

void
page_frames_gone(struct act_page *p, const char *session, const char *frame)
{
	struct act_frames *f = p->frames;

	/* Only the renderer the frame's document was in: a frame moved to
	 * another one (detached, "swap") lives on there. */
	for (int i = 1; f != NULL && frame != NULL && i <= f->n_slots; i++)
		if (strcmp(f->slots[i].frame, frame) == 0 &&
		    strcmp(frames_session(p, i), session) == 0)
			frames_stale(f, i);
}

/* ---- out-of-process frames */

static int64_t
frames_soon(void)
{
	return cm_mono_ms() + CM_BROWSER_START_MS;
}

/* Its own frames attach as it does: now it may run. */
static void
child_attaching(void *arg, const json_t *result, const json_t *error)
{
	struct frames_child *k = arg;

	(void)result;
	k->cmd = 0;
	if (error != NULL)
		return; /* held: a frame of it would escape the policy */
	act_cdp_call(k->page->cdp, k->session,
	    "Runtime.runIfWaitingForDebugger", NULL, frames_soon(), NULL, NULL);
}

/* Its requests pause as the page's do. */
static void
child_fetching(void *arg, const json_t *result, const json_t *error)
{
	struct frames_child *k = arg;

	(void)result;
	k->cmd = 0;
	if (error != NULL)
		return; /* held: its requests would not meet the policy */
	k->cmd = act_cdp_call(k->page->cdp, k->session, "Target.setAutoAttach",
	    act_page_attach_params(), frames_soon(), child_attaching, k);
	if (k->cmd < 0)
		k->cmd = 0;
}

void
page_frames_attached(
    struct act_page *p, const char *parent, const json_t *params)
{
	const char *sid =
	    json_string_value(json_object_get(params, "sessionId"));
	const json_t *info = json_object_get(params, "targetInfo");
	const char *type = json_string_value(json_object_get(info, "type"));
	const char *id = json_string_value(json_object_get(info, "targetId"));
	struct act_frames *f = frames_of(p);
	struct frames_child *up = frames_child(f, parent), *k = NULL;
	int depth = up != NULL ? up->depth + 1 : 1;

	if (sid == NULL || strlen(sid) > CM_ID_MAX)
		return;
	if (type == NULL || strcmp(type, "iframe") != 0) {
		/* Not a frame (the filter lets none through): it goes on as
		 * it would have, unattached. */
		act_cdp_call(p->cdp, sid, "Runtime.runIfWaitingForDebugger",
		    NULL, frames_soon(), NULL, NULL);
		act_cdp_call(p->cdp, parent, "Target.detachFromTarget",
		    json_pack("{s:s}", "sessionId", sid), frames_soon(), NULL,
		    NULL);
		return;
	}
	for (int i = 0; f != NULL && i < CM_FRAMES_MAX && k == NULL; i++)
		if (!f->kids[i].used)
			k = &f->kids[i];
	/* Past a bound (or out of memory), the frame is held: it never
	 * runs, so nothing of it loads or shows. */
	if (k == NULL || depth > CM_FRAME_DEPTH_MAX || id == NULL ||
	    strlen(id) > CM_ID_MAX)
		return;
	memset(k, 0, sizeof(*k));
	k->used = true;
	k->page = p;
	k->depth = depth;
	snprintf(k->session, sizeof(k->session), "%s", sid);
	snprintf(k->target, sizeof(k->target), "%s", id);
	snprintf(k->parent, sizeof(k->parent), "%s", parent);
	/* Page for its navigations (a new document makes its refs stale);
	 * then Fetch, as the page's, and only once it holds, the rest. */
	act_cdp_call(
	    p->cdp, sid, "Page.enable", NULL, frames_soon(), NULL, NULL);
	k->cmd = act_cdp_call(p->cdp, sid, "Fetch.enable",
	    act_page_fetch_params(p->proxy != NULL), frames_soon(),
	    child_fetching, k);
	if (k->cmd < 0)
		k->cmd = 0;
}

/* Forgets child k and the children it attached. */
static void
frames_forget(struct act_page *p, struct frames_child *k, int depth)
{
	struct act_frames *f = p->frames;

	if (k->cmd > 0)
		act_cdp_forget(p->cdp, k->cmd);
	for (int i = 1; i <= f->n_slots; i++)
		if (strcmp(f->slots[i].session, k->session) == 0)
			frames_stale(f, i);
	for (int i = 0; i < CM_FRAMES_MAX && depth <= CM_FRAME_DEPTH_MAX; i++)
		if (f->kids[i].used &&
		    strcmp(f->kids[i].parent, k->session) == 0)
			frames_forget(p, &f->kids[i], depth + 1);
	memset(k, 0, sizeof(*k));
}

void
page_frames_detached(struct act_page *p, const json_t *params)
{
	struct frames_child *k = frames_child(
	    p->frames, json_string_value(json_object_get(params, "sessionId")));

	if (k != NULL)
		frames_forget(p, k, 0);
}

void
page_frames_event(struct act_page *p, const char *session, const char *method,
    const json_t *params)
{
	if (frames_child(p->frames, session) == NULL)
		return;
	if (strcmp(method, "Fetch.requestPaused") == 0)
		page_request_paused(p, session, params);
	else if (strcmp(method, "Fetch.authRequired") == 0)
		page_auth_required(p, session, params);
	else if (strcmp(method, "Target.attachedToTarget") == 0)
		page_frames_attached(p, session, params);
	else if (strcmp(method, "Target.detachedFromTarget") == 0)
		page_frames_detached(p, params);
	else if (strcmp(method, "Page.frameNavigated") == 0)
		page_frames_gone(p, session,
		    json_string_value(json_object_get(
		        json_object_get(params, "frame"), "id")));
	else if (strcmp(method, "Page.frameDetached") == 0)
		page_frames_gone(p, session,
		    json_string_value(json_object_get(params, "frameId")));
}

void
page_frames_fini(struct act_page *p)
{
	struct act_frames *f = p->frames;

	if (f == NULL)
		return;
	for (int i = 0; i < CM_FRAMES_MAX; i++)
		if (f->kids[i].used && f->kids[i].cmd > 0)
			act_cdp_forget(p->cdp, f->kids[i].cmd);
	json_decref(f->v);
	free(f);
	p->frames = NULL;
}

/* The element at index of world's list, by reference. */
static void
frames_ref(struct act_page *p, const char *session, int64_t world,
    int64_t index, page_step next)
{
	page_send_soft(p, session, "Runtime.callFunctionOn",
	    json_pack("{s:s, s:I, s:[{s:I}], s:b}", "functionDeclaration",
	        ACT_SNAPSHOT_REF_JS, "executionContextId", (json_int_t)world,
	        "arguments", "value", (json_int_t)index, "returnByValue", 0),
	    next);
}

static const char *
frames_object(const json_t *result)
{
	const char *id = json_string_value(
	    json_object_get(json_object_get(result, "result"), "objectId"));

	return json_object_get(result, "exceptionDetails") == NULL &&
	               id != NULL && strlen(id) < CM_ID_MAX * 2 + 1
	           ? id
	           : NULL;
}

/* ---- snapshots */

static void frames_read_next(struct act_page *p);

/*
 * Takes the nodes of one document's reply (nodes, ids "0"... in order,
 * parents first) into the snapshot: for a frame's (slot k > 0) under
 * node at, renamed "k:i", their refs' ids carrying k.  The iframes among
 * them are queued, their lines at their level counted from depth (the
 * level of the document's root), or counted out past the bounds.
 */
static int
frames_take(
    struct act_page *p, json_t *nodes, int k, json_t *at, int depth, int level)
{
	struct act_frames *f = p->frames;
	json_t *all = json_object_get(f->v, "nodes");
	size_t n = json_array_size(nodes), i, j;
	int *lv = n > 0 ? calloc(n, sizeof(*lv)) : NULL;
	json_t *node, *kid;
	char id[32];

	if (n == 0 || lv == NULL || !json_is_array(all)) {
		free(lv);
		return -1;
	}
	lv[0] = depth;
	json_array_foreach(nodes, i, node)
	{
		const json_t *b = json_object_get(node, "backendDOMNodeId");
		json_t *kids = json_object_get(node, "childIds");
		const char *role = json_string_value(
		    json_object_get(json_object_get(node, "role"), "value"));

		json_array_foreach(kids, j, kid)
		{
			char *end;
			const char *s = json_string_value(kid);
			unsigned long c = s != NULL ? strtoul(s, &end, 10) : 0;

			if (s != NULL && *end == '\0' && c > i && c < n)
				lv[c] = lv[i] + 1;
			if (k > 0 && s != NULL) {
				snprintf(id, sizeof(id), "%d:%s", k, s);
				json_array_set_new(kids, j, json_string(id));
			}
		}
		if (role != NULL && strcmp(role, "Iframe") == 0 &&
		    json_is_integer(b)) {
			if (level > CM_FRAME_DEPTH_MAX ||
			    f->n_queued >= CM_FRAMES_MAX)
				f->left_out++;
			else
				f->queued[f->n_queued++] =
				    (struct frames_queued){.node = node,
				        .parent = k,
				        .index = json_integer_value(b),
				        .depth = lv[i],
				        .level = level};
			json_object_del(node, "backendDOMNodeId");
		} else if (k > 0 && json_is_integer(b)) {
			json_object_set_new(node, "backendDOMNodeId",
			    json_integer(((json_int_t)k << 32) |
			                 (json_integer_value(b) & 0xffffffff)));
			json_object_set_new(node, "frame", json_integer(k));
		}
		if (k > 0) {
			snprintf(id, sizeof(id), "%d:%zu", k, i);
			json_object_set_new(node, "nodeId", json_string(id));
			json_array_append(all, node);
		}
	}
	free(lv);
	if (k > 0) {
		snprintf(id, sizeof(id), "%d:0", k);
		json_array_append_new(
		    json_object_get(at, "childIds"), json_string(id));
	}
	return 0;
}

/* The frame being read is done with (read or not). */
static void
frames_read_over(struct act_page *p, bool read)
{
	if (!read) {
		p->frames->unread++;
		p->frames->slots[p->frames->n_slots].world = 0;
	}
	frames_read_next(p);
}

static void
frames_read_done(struct act_page *p, const json_t *result)
{
	struct act_frames *f = p->frames;
	struct frames_queued *t = &f->queued[f->done_queued - 1];
	const json_t *v =
	    json_object_get(json_object_get(result, "result"), "value");
	const char *cut = json_string_value(json_object_get(v, "cut"));
	const char *was = json_string_value(json_object_get(f->v, "cut"));

	if (result == NULL || json_object_get(result, "exceptionDetails") ||
	    frames_take(p, json_object_get(v, "nodes"), f->n_slots, t->node,
	        t->depth + 1, t->level + 1) != 0) {
		frames_read_over(p, false);
		return;
	}
	/* The first reason a walk stopped is the outline's. */
	if (cut != NULL && cut[0] != '\0' && (was == NULL || was[0] == '\0'))
		json_object_set_new(f->v, "cut", json_string(cut));
	frames_read_over(p, true);
}

static void frames_read_world(struct act_page *p, const json_t *result);

static void
frames_read_run(struct act_page *p, page_step next)
{
	struct act_frames *f = p->frames;
	struct frames_queued *t = &f->queued[f->done_queued - 1];
	struct frames_slot *s = &f->slots[f->n_slots];
	json_t *o =
	    page_snapshot_bounds(p, CM_SNAPSHOT_DEPTH_MAX - t->depth - 1);

	if (o == NULL) {
		page_fail(p, CM_E_RUNTIME_ERROR, "out of memory");
		return;
	}
	page_send_soft(p, s->session, "Runtime.callFunctionOn",
	    json_pack("{s:s, s:I, s:[{s:o}], s:b, s:b}", "functionDeclaration",
	        ACT_SNAPSHOT_JS, "executionContextId", (json_int_t)s->world,
	        "arguments", "value", o, "returnByValue", 1, "awaitPromise", 0),
	    next);
}

/* The frame's elements clickable by a listener alone, then its script. */
static void
frames_read_listened(struct act_page *p)
{
	frames_read_run(p, p->frames->run_next);
}

static void
frames_read_listen(struct act_page *p, page_step next)
{
	struct frames_slot *s = &p->frames->slots[p->frames->n_slots];

	p->frames->run_next = next;
	page_listeners_find(
	    p, s->session, s->world, s->doc, frames_read_listened);
}

/* A kept world that the browser no longer knows is made again, once. */
static void
frames_read_ran(struct act_page *p, const json_t *result)
{
	struct act_frames *f = p->frames;
	struct frames_slot *s = &f->slots[f->n_slots];

	if (result == NULL && f->kept_world) {
		f->kept_world = false;
		page_send_soft(p, s->session, "Page.createIsolatedWorld",
		    json_pack("{s:s, s:s, s:b}", "frameId", s->frame,
		        "worldName", PAGE_SNAPSHOT_WORLD, "grantUniveralAccess",
		        0),
		    frames_read_world);
		return;
	}
	frames_read_done(p, result);
}

static void
frames_read_world(struct act_page *p, const json_t *result)
{
	struct act_frames *f = p->frames;
	const json_t *id = json_object_get(result, "executionContextId");

	if (!json_is_integer(id) || json_integer_value(id) <= 0) {
		frames_read_over(p, false);
		return;
	}
	f->slots[f->n_slots].world = json_integer_value(id);
	frames_read_listen(p, frames_read_done);
}

/* The frame the iframe holds: where its document lives, and its world. */
static void
frames_read_described(struct act_page *p, const json_t *result)
{
	struct act_frames *f = p->frames;
	struct frames_queued *t = &f->queued[f->done_queued - 1];
	const json_t *node = json_object_get(result, "node");
	const char *frame = json_string_value(json_object_get(node, "frameId"));
	const json_t *owner = json_object_get(node, "backendNodeId");
	const char *session = frames_session(p, t->parent);
	struct frames_slot *s;

	if (frame == NULL || strlen(frame) > CM_ID_MAX ||
	    !json_is_integer(owner)) {
		f->unread++; /* no frame in it (yet) */
		frames_read_next(p);
		return;
	}
	for (int i = 0; i < CM_FRAMES_MAX; i++)
		if (f->kids[i].used && strcmp(f->kids[i].target, frame) == 0)
			session = f->kids[i].session;
	s = &f->slots[++f->n_slots];
	memset(s, 0, sizeof(*s));
	snprintf(s->frame, sizeof(s->frame), "%s", frame);
	snprintf(s->session, sizeof(s->session), "%s", session);
	s->owner = json_integer_value(owner);
	s->parent = t->parent;
	if (strcmp(session, frames_session(p, t->parent)) == 0 &&
	    json_is_integer(json_object_get(
	        json_object_get(node, "contentDocument"), "backendNodeId")))
		s->doc = json_integer_value(json_object_get(
		    json_object_get(node, "contentDocument"), "backendNodeId"));
	f->kept_world = false;
	for (int i = 1; i <= f->n_prev; i++)
		if (f->prev[i].world > 0 &&
		    strcmp(f->prev[i].frame, frame) == 0 &&
		    strcmp(f->prev[i].session, session) == 0) {
			s->world = f->prev[i].world;
			f->kept_world = true;
		}
	if (f->kept_world) {
		frames_read_listen(p, frames_read_ran);
		return;
	}
	page_send_soft(p, s->session, "Page.createIsolatedWorld",
	    json_pack("{s:s, s:s, s:b}", "frameId", frame, "worldName",
	        PAGE_SNAPSHOT_WORLD, "grantUniveralAccess", 0),
	    frames_read_world);
}

static void
frames_read_owner(struct act_page *p, const json_t *result)
{
	struct act_frames *f = p->frames;
	struct frames_queued *t = &f->queued[f->done_queued - 1];
	const char *id = frames_object(result);

	if (id == NULL) {
		f->unread++;
		frames_read_next(p);
		return;
	}
	page_send_soft(p, frames_session(p, t->parent), "DOM.describeNode",
	    json_pack("{s:s}", "objectId", id), frames_read_described);
}

static void
frames_read_next(struct act_page *p)
{
	struct act_frames *f = p->frames;
	struct frames_queued *t;
	int64_t world;
	char more[160] = "";

	if (f->done_queued < f->n_queued) {
		t = &f->queued[f->done_queued++];
		world = t->parent == 0 ? p->world : f->slots[t->parent].world;
		if (world <= 0 || t->depth + 1 >= CM_SNAPSHOT_DEPTH_MAX) {
			f->unread += world <= 0;
			f->left_out += world > 0;
			frames_read_next(p);
			return;
		}
		frames_ref(p, frames_session(p, t->parent), world, t->index,
		    frames_read_owner);
		return;
	}
	if (f->left_out > 0)
		snprintf(more, sizeof(more),
		    "the content of %d frames is not shown: a snapshot reads "
		    "at most %d frames, %d deep",
		    f->left_out, CM_FRAMES_MAX, CM_FRAME_DEPTH_MAX);
	if (f->unread > 0)
		snprintf(more + strlen(more), sizeof(more) - strlen(more),
		    "%sthe content of %d frames could not be read",
		    more[0] != '\0' ? "; " : "", f->unread);
	page_snapshot_write(p, f->v, more[0] != '\0' ? more : NULL);
	json_decref(f->v);
	f->v = NULL;
}

void
page_frames_read(struct act_page *p, const json_t *v)
{
	struct act_frames *f = frames_of(p);
	const json_t *node;
	size_t i;
	bool any = false;

	json_array_foreach(json_object_get(v, "nodes"), i, node)
	{
		const char *role = json_string_value(
		    json_object_get(json_object_get(node, "role"), "value"));

		any = any || (role != NULL && strcmp(role, "Iframe") == 0 &&
		                 json_is_integer(json_object_get(
		                     node, "backendDOMNodeId")));
	}
	if (!any) {
		page_snapshot_write(p, v, NULL);
		return;
	}
	if (f == NULL) {
		page_fail(p, CM_E_RUNTIME_ERROR, "out of memory");
		return;
	}
	/* The last table's worlds are kept for the documents still there. */
	memcpy(f->prev, f->slots, sizeof(f->prev));
	f->n_prev = f->n_slots;
	f->n_slots = f->n_queued = f->done_queued = 0;
	f->left_out = f->unread = 0;
	json_decref(f->v);
	f->v = json_deep_copy(v);
	if (f->v == NULL || frames_take(p, json_object_get(f->v, "nodes"), 0,
	                        NULL, 0, 1) != 0) {
		page_fail(p, CM_E_RUNTIME_ERROR, "out of memory");
		return;
	}
	frames_read_next(p);
}

/* ---- refs */

static void frames_offset(struct act_page *p);

/* The iframe's content box, where its frame's viewport begins. */
static void
frames_offset_got(struct act_page *p, const json_t *result)
{
	struct act_frames *f = p->frames;
	const json_t *q =
	    json_object_get(json_object_get(result, "model"), "content");
	int r;

	if (!json_is_number(json_array_get(q, 0)) ||
	    !json_is_number(json_array_get(q, 1))) {
		page_not_found(p, "the element's frame is gone");
		return;
	}
	p->at_dx += json_number_value(json_array_get(q, 0));
	p->at_dy += json_number_value(json_array_get(q, 1));
	/* Up to the top frame of the parent's renderer, whose iframe adds
	 * the next offset; the page's own top frame adds none. */
	r = f->slots[f->at_slot].parent;
	for (int n = 0; r != 0 && n <= CM_FRAME_DEPTH_MAX; n++) {
		if (strcmp(f->slots[r].session,
		        frames_session(p, f->slots[r].parent)) != 0)
			break;
		r = f->slots[r].parent;
	}
	if (r == 0) {
		p->then(p);
		return;
	}
	f->at_slot = r;
	frames_offset(p);
}

static void
frames_offset(struct act_page *p)
{
	struct act_frames *f = p->frames;
	struct frames_slot *s = &f->slots[f->at_slot];

	if (s->world <= 0) {
		page_not_found(p, "the element's frame has navigated or gone");
		return;
	}
	page_send_soft(p, frames_session(p, s->parent), "DOM.getBoxModel",
	    json_pack("{s:I}", "backendNodeId", (json_int_t)s->owner),
	    frames_offset_got);
}

static void
frames_element_seen(struct act_page *p, const json_t *result)
{
	if (result == NULL) {
		page_not_found(p, "the element is gone");
		return;
	}
	frames_offset(p);
}

static void
frames_element_found(struct act_page *p, const json_t *result)
{
	struct act_frames *f = p->frames;
	const char *id = frames_object(result);
	const char *session = f->slots[f->at_slot].session;

	if (id == NULL) {
		page_not_found(p, "the element is gone");
		return;
	}
	snprintf(p->object, sizeof(p->object), "%s", id);
	if (strcmp(session, p->session) != 0)
		snprintf(p->at, sizeof(p->at), "%s", session);
	page_send_soft(p, session, "Runtime.callFunctionOn",
	    json_pack("{s:s, s:s, s:b}", "objectId", p->object,
	        "functionDeclaration", JS_INTO_VIEW, "returnByValue", 1),
	    frames_element_seen);
}

void
page_frames_element(struct act_page *p, int64_t id)
{
	struct act_frames *f = p->frames;
	int k = (int)(id >> 32);

	if (f == NULL || k < 1 || k > f->n_slots || f->slots[k].world <= 0) {
		page_not_found(p, "the ref's frame has navigated or gone");
		return;
	}
	f->at_slot = k;
	p->at_dx = p->at_dy = 0;
	frames_ref(p, f->slots[k].session, f->slots[k].world, id & 0xffffffff,
	    frames_element_found);
}
