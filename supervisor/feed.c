/*
 * feed.c: the store's notices as the supervisor reads them: a Space
 * opened on this host gets its actor, and the notices an actor acts on
 * wake just that actor.  When the feed's pipe to the store comes up
 * again, the notices lost meanwhile are made up by a rescan.
 */
#include <nng/nng.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "children.h"
#include "json.h"
#include "log.h"
#include "recv.h"
#include "status.h"
#include "storework.h"
#include "sup.h"

/*
 * The notices an actor acts on (cm_event_kind_wakes_actor).  Actors do
 * not subscribe to the store themselves: nng 1.5.2 filters topics on the
 * subscriber, so every actor would receive every event of every Space
 * (measured: 63 idle actors took a whole CPU at ~500 tasks/s).  The
 * supervisor wakes just the actor concerned through its wake pipe.  It
 * reads the store's notices (store-notices.ipc), not its whole feed: only
 * the events it acts on, and a queued one only when the store holds no
 * claim of that Space's actor, which its answer then wakes.
 */

/*
 * A Space opened: its actor starts here only when its instance is on this
 * host (the host the store's notice names); a Space on another host's
 * instance is that host's to run, whichever api created it.  A notice
 * without a host (one another host's store announced) is checked by the
 * rescan, which lists only this host's Spaces.  The instance the payload
 * names lets a standby of that instance take the Space.
 */
static void
sup_space_opened(struct sup *s, const struct pr_event *ev)
{
	char inst[CM_ID_MAX + 1] = "", err[128];
	json_t *payload = NULL;
	const char *v;

	if (ev->host == NULL) {
		sup_work_rescan(s);
		return;
	}
	if (strcmp(ev->host, s->cfg.host_id) != 0)
		return;

	if (ev->payload != NULL &&
	    cm_json_parse(ev->payload, strlen(ev->payload), CM_RESULT_MAX,
	        CM_JSON_DEPTH_MAX, &payload, err, sizeof(err)) == 0 &&
	    (v = json_string_value(
	         json_object_get(payload, "browser_instance_id"))) != NULL)
		snprintf(inst, sizeof(inst), "%s", v);
	json_decref(payload);
	sup_ensure_actor(s, ev->space_id, inst[0] ? inst : NULL);
}

void
sup_drain_events(struct sup *s)
{
	nng_msg *m;

	while (cm_recv_try(s->events, s->events_rx, &m) == 0) {
		struct pr_arena arena = {0};
		struct pr_event ev;
		enum cm_event_kind kind;
		char err[128];

		if (pr_pub_decode(nng_msg_body(m), nng_msg_len(m), &ev, NULL,
		        &arena, err, sizeof(err)) != 0) {
			cm_warnx(
			    "supervisor: bad event from the store: %s", err);
		} else if (cm_event_kind_is(ev.kind, CM_EV_SPACE_OPENED)) {
			sup_space_opened(s, &ev);
		} else if (cm_event_kind_wakes_actor(
		               kind = cm_event_kind_parse(ev.kind))) {
			struct sup_child *ch =
			    sup_child_by_space(&s->kids, ev.space_id);

			if (ch != NULL)
				sup_child_wake(ch, kind == CM_EV_CLOSE_REQUESTED
				                       ? CM_WAKE_CLOSE
				                   : kind == CM_EV_QUEUED
				                       ? CM_WAKE_QUEUED
				                       : CM_WAKE_ANY);
		}
		pr_arena_free(&arena);
		nng_msg_free(m);
	}
}

/*
 * Runs on an nng thread when the events SUB gets a pipe to the store: at
 * start and after every store restart.  Notices published before that
 * were lost, so the loop rescans at once instead of at the next timer.
 * Only a write to the self-pipe happens here; a full pipe already holds a
 * wake-up.
 */
void
sup_events_pipe_up(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct sup *s = arg;
	char one = 1;
	ssize_t n;

	(void)p;
	(void)ev;
	n = write(s->pipe_up[1], &one, 1);
	(void)n;
}

void
sup_pipe_came_up(struct sup *s)
{
	char buf[64];

	while (read(s->pipe_up[0], buf, sizeof(buf)) > 0)
		;
	if (s->store_up)
		sup_work_rescan(s);
}
