/*
 * live.c: the live view's control socket, the watch's lease and the
 * screencast (live.h).
 *
 * Why the ack is held: Chromium sends the next screencast frame only
 * once the last one is acked, so holding the ack until 1 /
 * CM_LIVE_FRAMES_PER_S has passed bounds the rate at the source; the
 * browser encodes no frame that would be thrown away.
 */
#include "live.h"
#include "live_int.h"

#include <nng/protocol/pubsub0/pub.h>
#include <nng/protocol/reqrep0/rep.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "b64.h"
#include "cdp.h"
#include "clock.h"
#include "log.h"
#include "recv.h"
#include "rpc.h"

static void
live_send(struct act_live *l, const char *buf, size_t len)
{
	nng_msg *m;

	if (nng_msg_alloc(&m, 0) != 0)
		return;
	if (nng_msg_append(m, buf, len) != 0 ||
	    nng_sendmsg(l->ctl, m, NNG_FLAG_NONBLOCK) != 0)
		nng_msg_free(m); /* the api's call times out */
}

void
live_reply(struct act_live *l, struct pr_rep *r)
{
	char *buf;
	size_t len;

	if (pr_rep_encode(r, &buf, &len) == 0) {
		live_send(l, buf, len);
		free(buf);
	} else {
		cm_warnx("actor: space %s: a live reply did not encode",
		    l->space_id);
	}
	pr_rep_free(r);
}

void
live_reply_err(struct act_live *l, enum cm_err err, const char *msg)
{
	struct pr_rep r;

	memset(&r, 0, sizeof(r));
	pr_rep_error(&r, err, "%s", msg);
	live_reply(l, &r);
}

int
act_live_open(struct act_live **out, const char *run_dir, const char *space_id,
    const struct cm_secrets *secrets)
{
	struct act_live *l = calloc(1, sizeof(*l));
	char file[CM_ID_MAX + 16], url[CM_IPC_PATH_MAX + 16];
	int rv = NNG_ENOMEM;

	*out = NULL;
	if (l == NULL)
		return -1;
	snprintf(l->space_id, sizeof(l->space_id), "%s", space_id);
	l->secrets = secrets;
	l->ctl_fd = -1;
	snprintf(file, sizeof(file), "live-%s.ipc", space_id);
	if (cm_ipc_url(l->pub_url, sizeof(l->pub_url), run_dir, file) != 0) {
		cm_warnx("actor: space %s: run_dir is too long for a live view",
		    space_id);
		free(l);
		return -1;
	}
	snprintf(file, sizeof(file), "ctl-%s.ipc", space_id);
	if (cm_ipc_url(url, sizeof(url), run_dir, file) != 0 ||
	    (rv = nng_aio_alloc(&l->rx, NULL, NULL)) != 0 ||
	    (rv = nng_rep0_open(&l->ctl)) != 0 ||
	    (rv = nng_socket_set_size(
	         l->ctl, NNG_OPT_RECVMAXSZ, CM_REQ_MSG_MAX)) != 0 ||
	    (rv = cm_listener_start(&l->ctl_l, l->ctl, url, 0600)) != 0 ||
	    (rv = nng_socket_get_int(l->ctl, NNG_OPT_RECVFD, &l->ctl_fd)) !=
	        0) {
		cm_warnx("actor: space %s: no control socket: %s", space_id,
		    nng_strerror(rv));
		nng_close(l->ctl);
		if (l->rx != NULL)
			nng_aio_free(l->rx);
		free(l);
		return -1;
	}
	*out = l;
	return 0;
}

/* Sends method on the page session sid, answered by nobody: the
 * screencast's commands and acks, whose failure changes nothing here. */
static void
cast_cmd(
    struct act_session *s, const char *sid, const char *method, json_t *params)
{
	if (s == NULL || s->cdp == NULL) {
		json_decref(params);
		return;
	}
	if (act_cdp_call(s->cdp, sid, method, params,
	        cm_mono_ms() + CM_LIVE_CALL_MS, NULL, NULL) < 0)
		cm_debug("actor: live: %s could not be sent", method);
}

static void
ack(struct act_live *l, const char *sid, int64_t id)
{
	cast_cmd(l->sess, sid, "Page.screencastFrameAck",
	    json_pack("{s:I}", "sessionId", (json_int_t)id));
}

static void
pub_close(struct act_live *l)
{
	if (!l->pub_open)
		return;
	nng_close(l->pub); /* nng removes the socket file */
	l->pub_open = false;
}

static int
pub_open(struct act_live *l)
{
	int rv;

	if (l->pub_open)
		return 0;
	if ((rv = nng_pub0_open(&l->pub)) != 0 ||
	    (rv = nng_socket_set_int(
	         l->pub, NNG_OPT_SENDBUF, CM_LIVE_SUB_BUF)) != 0 ||
	    (rv = cm_listener_start(&l->pub_l, l->pub, l->pub_url, 0600)) !=
	        0) {
		cm_warnx("actor: space %s: cannot publish frames: %s",
		    l->space_id, nng_strerror(rv));
		nng_close(l->pub);
		return -1;
	}
	l->pub_open = true;
	return 0;
}

/* One frame, published as it came (latest wins downstream). */
static void
publish(struct act_live *l, const unsigned char *jpeg, size_t n, unsigned w,
    unsigned h, int64_t at)
{
	struct pr_frame f = {.seq = ++l->seq,
	    .width = w,
	    .height = h,
	    .at = at,
	    .jpeg = {n, jpeg}};
	char *buf;
	size_t len;
	nng_msg *m;

	if (!l->pub_open || pr_frame_encode(&f, &buf, &len) != 0)
		return;
	if (nng_msg_alloc(&m, 0) == 0) {
		if (nng_msg_append(m, buf, len) != 0 ||
		    nng_sendmsg(l->pub, m, NNG_FLAG_NONBLOCK) != 0)
			nng_msg_free(m);
	}
	free(buf);
}

/* Page.screencastFrame of any page session (session.h's on_frame). */
static void
on_frame(void *arg, const char *sid, const json_t *params)
{
	struct act_live *l = arg;
	json_t *data = json_object_get(params, "data");
	json_t *meta = json_object_get(params, "metadata");
	json_int_t id =
	    json_integer_value(json_object_get(params, "sessionId"));
	double ts = json_number_value(json_object_get(meta, "timestamp"));
	int64_t now = cm_mono_ms(), due;
	unsigned char *jpeg = NULL;
	unsigned w, h;
	size_t n = 0;

	if (!l->casting || strcmp(sid, l->cast_session) != 0) {
		ack(l, sid, id); /* an old page's: it stops when told */
		return;
	}
	if (json_is_string(data) &&
	    cm_b64_decode(json_string_value(data), json_string_length(data),
	        CM_LIVE_FRAME_MAX, &jpeg, &n) == 0 &&
	    cm_jpeg_size(jpeg, n, &w, &h))
		publish(l, jpeg, n, w, h,
		    ts > 0 ? (int64_t)(ts * 1000) : cm_now_ms());
	else
		cm_debug("actor: space %s: a frame dropped (not a JPEG "
		         "within %d bytes)",
		    l->space_id, CM_LIVE_FRAME_MAX);
	free(jpeg);
	due = l->last_frame_ms + 1000 / CM_LIVE_FRAMES_PER_S;
	l->last_frame_ms = now > due ? now : due;
	if (now >= due) {
		ack(l, sid, id);
		return;
	}
	l->ack_held = true;
	l->ack_id = id;
	l->ack_due_ms = due;
}

static void
cast_stop(struct act_live *l, struct act_session *s)
{
	if (l->casting && s != NULL && s->state == ACT_SESSION_READY)
		cast_cmd(s, l->cast_session, "Page.stopScreencast", NULL);
	l->casting = false;
	l->ack_held = false;
}

/* The screencast runs on the current page exactly while a lease runs and
 * the page is there. */
static void
cast_sync(struct act_live *l, struct act_session *s, int64_t now)
{
	bool want;

	if (l->watching && now >= l->lease_end_ms) {
		cm_info("actor: space %s: the live view's lease ran out",
		    l->space_id);
		l->watching = false;
	}
	want = l->watching && s != NULL && s->state == ACT_SESSION_READY &&
	       s->page_ok && s->cur->session[0] != '\0';
	if (l->casting && (s == NULL || s->state != ACT_SESSION_READY)) {
		l->casting = false; /* its sessions are gone with the browser */
		l->ack_held = false;
	}
	if (l->casting && (!want || strcmp(l->cast_session, s->cur->session)))
		cast_stop(l, s);
	if (want && !l->casting) {
		snprintf(l->cast_session, sizeof(l->cast_session), "%s",
		    s->cur->session);
		cast_cmd(s, l->cast_session, "Page.startScreencast",
		    json_pack("{s:s, s:i, s:i, s:i, s:i}", "format", "jpeg",
		        "quality", CM_LIVE_JPEG_QUALITY, "maxWidth",
		        CM_LIVE_MAX_WIDTH, "maxHeight", CM_LIVE_MAX_HEIGHT,
		        "everyNthFrame", CM_LIVE_EVERY_NTH_FRAME));
		l->casting = true;
		l->ack_held = false;
	}
	if (l->ack_held && now >= l->ack_due_ms) {
		l->ack_held = false;
		ack(l, l->cast_session, l->ack_id);
	}
	if (!l->watching)
		pub_close(l);
}

static void
on_request(struct act_live *l, struct act_session *s, const struct pr_req *q)
{
	struct pr_rep r;

	if (q->space_id == NULL || strcmp(q->space_id, l->space_id) != 0) {
		live_reply_err(l, CM_E_NOT_FOUND, "not this actor's Space");
		return;
	}
	switch (q->op) {
	case PR_OP_LIVE_WATCH:
		if (s == NULL) {
			live_reply_err(l, CM_E_RUNTIME_NOT_READY,
			    "this Space's runtime has no screen to show");
			return;
		}
		if (pub_open(l) != 0) {
			live_reply_err(
			    l, CM_E_INTERNAL, "the frames cannot be published");
			return;
		}
		l->watching = true;
		l->lease_end_ms = cm_mono_ms() + CM_LIVE_LEASE_MS;
		memset(&r, 0, sizeof(r));
		live_reply(l, &r);
		return;
	case PR_OP_LIVE_STOP:
		l->watching = false;
		memset(&r, 0, sizeof(r));
		live_reply(l, &r);
		return;
	case PR_OP_LIVE_INPUT:
		live_input_begin(l, s, q);
		return;
	default:
		cm_warnx("actor: space %s: control request %s is not one an "
		         "actor answers",
		    l->space_id, pr_op_name(q->op));
		live_reply_err(l, CM_E_INVALID_REQUEST, "not a live request");
	}
}

/* Reads the control socket while no input holds its request. */
static void
read_control(struct act_live *l, struct act_session *s)
{
	nng_msg *m;

	while (!l->in.busy && cm_recv_try(l->ctl, l->rx, &m) == 0) {
		struct pr_req q;
		char err[128];

		if (pr_req_decode(nng_msg_body(m), nng_msg_len(m), &q, err,
		        sizeof(err)) != 0) {
			cm_warnx("actor: space %s: bad control request: %s",
			    l->space_id, err);
			live_reply_err(l, CM_E_INVALID_REQUEST, err);
		} else {
			on_request(l, s, &q);
		}
		pr_req_free(&q);
		nng_msg_free(m);
	}
}

int
act_live_pollfds(
    struct act_live *l, struct pollfd *fds, int max, int64_t *wake_ms)
{
	int64_t w = -1;

	if (l->watching)
		w = l->lease_end_ms;
	if (l->ack_held && (w < 0 || l->ack_due_ms < w))
		w = l->ack_due_ms;
	if (l->in.busy && (w < 0 || l->in.deadline_ms < w))
		w = l->in.deadline_ms;
	*wake_ms = w;
	if (max < 1 || l->in.busy)
		return 0;
	fds[0].fd = l->ctl_fd;
	fds[0].events = POLLIN;
	fds[0].revents = 0;
	return 1;
}

void
act_live_step(struct act_live *l, struct act_session *s,
    const struct pollfd *fds, int nfds)
{
	int64_t now = cm_mono_ms();

	(void)fds;
	(void)nfds;
	l->sess = s;
	if (s != NULL)
		act_session_frames(s, on_frame, l);
	/* The fd says only that a message may wait: a non-blocking read
	 * tells, so it is tried after every poll. */
	read_control(l, s);
	live_input_tick(l, s, now);
	cast_sync(l, s, now);
}

void
act_live_close(struct act_live *l, struct act_session *s)
{
	if (l == NULL)
		return;
	l->sess = s;
	if (l->in.busy && s != NULL && s->cdp == l->in.cdp && l->in.cmd > 0)
		act_cdp_forget(s->cdp, l->in.cmd);
	cast_stop(l, s);
	if (s != NULL)
		act_session_frames(s, NULL, NULL);
	pub_close(l);
	nng_close(l->ctl);
	nng_aio_free(l->rx);
	free(l);
}
