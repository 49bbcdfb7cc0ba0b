/*
 * live_int.h: what the live view's two files share: live.c (its sockets,
 * the watch's lease and the screencast) and live_input.c (an operator's
 * input on the current page).  Private to space-actor/.
 */
#ifndef ACT_LIVE_INT_H
#define ACT_LIVE_INT_H

#include <nng/nng.h>
#include <stdbool.h>
#include <stdint.h>

#include "limits.h"
#include "listen.h"
#include "live.h"
#include "proto.h"

/* An operator's input under way: its request's fields, checked, and the
 * step its CDP calls are at. */
struct live_input {
	bool busy;
	int step;
	char kind[16];
	int64_t x, y, dx, dy;
	char button[16];
	char key[CM_LIVE_KEY_MAX + 1];
	char text[CM_LIVE_TEXT_MAX + 1];
	char session[CM_ID_MAX + 1]; /* the page it acts on */
	struct act_cdp *cdp;         /* the connection its commands went on */
	int64_t cmd;                 /* the command awaited; 0: none */
	int64_t deadline_ms;
	char role[CM_NAME_MAX + 1];
	char name[CM_LIVE_TARGET_NAME_MAX + 1];
	bool failed;
	char why[128];
	/* The rate bound: a second's window and the inputs in it. */
	int64_t window_ms;
	int in_window;
};

struct act_live {
	char space_id[CM_ID_MAX + 1];
	const struct cm_secrets *secrets;
	char pub_url[CM_IPC_PATH_MAX + 16];
	nng_socket ctl;
	struct cm_listener ctl_l;
	nng_aio *rx;
	int ctl_fd;
	/* A watch: its lease, and the PUB socket while one runs. */
	bool watching;
	int64_t lease_end_ms;
	bool pub_open;
	nng_socket pub;
	struct cm_listener pub_l;
	/* The screencast: on which page session, and the next frame's
	 * sequence. */
	bool casting;
	char cast_session[CM_ID_MAX + 1];
	int64_t seq;
	/* The ack of the last frame, held until the rate allows the next. */
	bool ack_held;
	int64_t ack_id;
	int64_t ack_due_ms;
	int64_t last_frame_ms;
	struct act_session *sess; /* the one of the current step */
	struct live_input in;
};

/* live.c: answers the request being held with r (encoded by the one
 * codec); r is freed. */
void live_reply(struct act_live *l, struct pr_rep *r);
/* live.c: answers the request being held with err and msg. */
void live_reply_err(struct act_live *l, enum cm_err err, const char *msg);

/* live_input.c: begins the input q asks for on s's current page, or
 * answers its refusal at once. */
void live_input_begin(
    struct act_live *l, struct act_session *s, const struct pr_req *q);
/* live_input.c: an input whose commands cannot be answered any more (the
 * session went, or its time is up) is answered failed. */
void live_input_tick(struct act_live *l, struct act_session *s, int64_t now);

#endif
