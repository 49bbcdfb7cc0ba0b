/*
 * cdp_ws.c: CDP over a websocket: discovery, connection and upgrade with
 * libcurl, framing with wslay (see cdp_ws.h).
 *
 * Why CONNECT_ONLY and not nng's ws client: nng 1.5.2 rejects Chromium's
 * handshake reply (Upgrade: WebSocket), and Debian's curl 7.88 has no
 * websocket support of its own.  The easy handle stays in its multi
 * handle after the connection is made: curl_easy_send/recv find the
 * connection through it.
 */
#include "cdp_ws.h"

#include <openssl/evp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <wslay/wslay.h>

#include "cdp.h"
#include "cdp_endpoint.h"
#include "clock.h"
#include "curlfn.h"
#include "curlm.h"
#include "ids.h"
#include "limits.h"

/* RFC 6455 section 1.3. */
#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define WS_KEY_RAW 16
#define WS_B64(n) (((n) + 2) / 3 * 4 + 1) /* padded, with the NUL */

enum ws_state {
	WS_DISCOVER, /* GET /json/version */
	WS_CONNECT,  /* CONNECT_ONLY under way */
	WS_UPGRADE,  /* the upgrade request written, the 101 read */
	WS_OPEN,
	WS_BROKEN,
};

struct act_ws {
	enum ws_state state;
	const char *why; /* static text: why it broke */
	int64_t deadline_ms;
	struct cm_cdpep ep;
	struct cm_curlm *m;
	struct cm_cdpep_version ver;
	CURL *conn; /* the CONNECT_ONLY handle */
	curl_socket_t fd;
	char key[WS_B64(WS_KEY_RAW)];
	/* The upgrade: request bytes to write, then the head read. */
	char *req;
	size_t req_len, req_off;
	char head[CM_WS_HEAD_MAX];
	size_t head_len;
	size_t spare_off, spare_len; /* bytes read past the head */
	wslay_event_context_ptr ctx;
	/* The data message being received, put together here within
	 * CM_CDP_MSG_MAX (wslay buffers only control frames); one over it
	 * is dropped, its first bytes kept in top. */
	char *in;
	size_t in_len, in_cap;
	bool in_frame_data, in_frame_fin, in_skipping;
	char top[CM_CDP_HEAD_MAX];
	size_t top_len;
	/* The message callback, set during a step. */
	act_ws_msg_fn fn;
	void *fn_arg;
};

static void
ws_break(struct act_ws *w, const char *why)
{
	if (w->state != WS_BROKEN) {
		w->state = WS_BROKEN;
		w->why = why;
	}
}

/* ---- wslay's callbacks: curl moves the bytes */

static ssize_t
ws_recv_cb(
    wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags, void *arg)
{
	struct act_ws *w = arg;
	size_t n = 0;
	CURLcode rc;

	(void)flags;
	if (w->spare_len > 0) { /* frames that came with the 101 */
		n = len < w->spare_len ? len : w->spare_len;
		memcpy(buf, w->head + w->spare_off, n);
		w->spare_off += n;
		w->spare_len -= n;
		return (ssize_t)n;
	}
	rc = cm_curl.easy_recv(w->conn, buf, len, &n);
	if (rc == CURLE_AGAIN) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	if (rc != CURLE_OK || n == 0) {
		ws_break(w, "the browser connection ended");
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	return (ssize_t)n;
}

static ssize_t
ws_send_cb(wslay_event_context_ptr ctx, const uint8_t *data, size_t len,
    int flags, void *arg)
{
	struct act_ws *w = arg;
	size_t n = 0;
	CURLcode rc;

	(void)flags;
	rc = cm_curl.easy_send(w->conn, data, len, &n);
	if (rc == CURLE_AGAIN) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	if (rc != CURLE_OK) {
		ws_break(w, "the browser connection ended");
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	return (ssize_t)n;
}

static int
ws_genmask_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, void *arg)
{
	(void)ctx;
	(void)arg;
	cm_random_bytes(buf, len);
	return 0;
}

/* Control messages: wslay answers ping with pong. */
static void
ws_msg_cb(wslay_event_context_ptr ctx,
    const struct wslay_event_on_msg_recv_arg *m, void *arg)
{
	struct act_ws *w = arg;

	(void)ctx;
	if (w->state == WS_OPEN && m->opcode == WSLAY_CONNECTION_CLOSE)
		ws_break(w, "the browser closed the connection");
}

static void
ws_frame_start_cb(wslay_event_context_ptr ctx,
    const struct wslay_event_on_frame_recv_start_arg *f, void *arg)
{
	struct act_ws *w = arg;

	(void)ctx;
	w->in_frame_data = !wslay_is_ctrl_frame(f->opcode);
	if (!w->in_frame_data)
		return;
	w->in_frame_fin = f->fin != 0;
	if (f->opcode != WSLAY_CONTINUATION_FRAME) {
		w->in_len = w->top_len = 0;
		w->in_skipping = false;
	}
}

static void
ws_frame_chunk_cb(wslay_event_context_ptr ctx,
    const struct wslay_event_on_frame_recv_chunk_arg *c, void *arg)
{
	struct act_ws *w = arg;
	size_t len = c->data_length, take;

	(void)ctx;
	if (!w->in_frame_data || w->state != WS_OPEN)
		return;
	take = sizeof(w->top) - w->top_len < len ? sizeof(w->top) - w->top_len
	                                         : len;
	memcpy(w->top + w->top_len, c->data, take);
	w->top_len += take;
	if (w->in_skipping)
		return;
	if (len > CM_CDP_MSG_MAX - w->in_len) {
		w->in_skipping = true; /* the rest is read and dropped */
		return;
	}
	if (w->in_len + len > w->in_cap) {
		size_t cap = w->in_cap ? w->in_cap : CM_WS_HEAD_MAX;
		char *m;

		while (cap < w->in_len + len)
			cap *= 2;
		if (cap > CM_CDP_MSG_MAX)
			cap = CM_CDP_MSG_MAX;
		if ((m = realloc(w->in, cap)) == NULL) {
			ws_break(w, "out of memory");
			return;
		}
		w->in = m;
		w->in_cap = cap;
	}
	memcpy(w->in + w->in_len, c->data, len);
	w->in_len += len;
}

static void
ws_frame_end_cb(wslay_event_context_ptr ctx, void *arg)
{
	struct act_ws *w = arg;
	char reply[ACT_CDP_TOO_BIG_LEN];
	size_t n;
	int rc = 0;

	if (!w->in_frame_data || !w->in_frame_fin || w->state != WS_OPEN)
		return;
	if (w->fn == NULL)
		rc = -1;
	else if (!w->in_skipping)
		rc = w->fn(w->fn_arg, w->in, w->in_len);
	else if ((n = act_cdp_too_big(
	              w->top, w->top_len, reply, sizeof(reply))) > 0)
		rc = w->fn(w->fn_arg, reply, n);
	w->in_len = w->top_len = 0;
	w->in_skipping = false;
	if (rc != 0) {
		ws_break(w, "the browser sent a message that is not CDP");
		wslay_event_shutdown_read(ctx);
	}
}

/* ---- connecting */

static int
ws_connect_begin(struct act_ws *w)
{
	char url[sizeof(w->ep.hostport) + 16];

	snprintf(url, sizeof(url), "%s://%s/", w->ep.tls ? "https" : "http",
	    w->ep.hostport);
	if ((w->conn = cm_curl.easy_init()) == NULL ||
	    cm_curl.easy_setopt(w->conn, CURLOPT_URL, url) != CURLE_OK ||
	    cm_curl.easy_setopt(w->conn, CURLOPT_CONNECT_ONLY, 1L) !=
	        CURLE_OK ||
	    cm_curl.easy_setopt(w->conn, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    cm_curl.easy_setopt(w->conn, CURLOPT_CONNECTTIMEOUT_MS,
	        (long)CM_CDP_CONNECT_MS) != CURLE_OK ||
	    cm_curlm_add(w->m, w->conn) != 0)
		return -1;
	w->state = WS_CONNECT;
	return 0;
}

/* The upgrade request for the websocket at path. */
static int
ws_upgrade_begin(struct act_ws *w)
{
	unsigned char raw[WS_KEY_RAW];
	curl_socket_t fd;
	size_t cap = strlen(w->ep.path) + sizeof(w->ep.hostport) + 256;
	int n;

	if (cm_curl.easy_getinfo(w->conn, CURLINFO_ACTIVESOCKET, &fd) !=
	        CURLE_OK ||
	    fd == CURL_SOCKET_BAD || (w->req = malloc(cap)) == NULL)
		return -1;
	w->fd = fd;
	cm_random_bytes(raw, sizeof(raw));
	EVP_EncodeBlock((unsigned char *)w->key, raw, sizeof(raw));
	n = snprintf(w->req, cap,
	    "GET %s HTTP/1.1\r\n"
	    "Host: %s\r\n"
	    "Upgrade: websocket\r\n"
	    "Connection: Upgrade\r\n"
	    "Sec-WebSocket-Key: %s\r\n"
	    "Sec-WebSocket-Version: 13\r\n\r\n",
	    w->ep.path, w->ep.hostport, w->key);
	if (n < 0 || (size_t)n >= cap)
		return -1;
	w->req_len = (size_t)n;
	w->state = WS_UPGRADE;
	return 0;
}

/* The value of header name in the head (NUL-terminated, lines ending in
 * CRLF), copied to out; -1 when absent or too long. */
static int
ws_header(const char *head, const char *name, char *out, size_t outlen)
{
	size_t nl = strlen(name);

	for (const char *l = strstr(head, "\r\n"); l != NULL;
	     l = strstr(l + 2, "\r\n")) {
		const char *v = l + 2;
		size_t len;

		if (strncasecmp(v, name, nl) != 0 || v[nl] != ':')
			continue;
		v += nl + 1;
		v += strspn(v, " \t");
		len = strcspn(v, "\r");
		while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t'))
			len--;
		if (len >= outlen)
			return -1;
		memcpy(out, v, len);
		out[len] = '\0';
		return 0;
	}
	return -1;
}

/* Checks the 101: status, Upgrade and the accept key. */
static int
ws_check_head(struct act_ws *w)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	char in[sizeof(w->key) + sizeof(WS_GUID)], want[WS_B64(20)];
	char got[128];
	unsigned md_len = 0;

	if (strncmp(w->head, "HTTP/1.1 101", 12) != 0 ||
	    ws_header(w->head, "Upgrade", got, sizeof(got)) != 0 ||
	    strcasecmp(got, "websocket") != 0 ||
	    ws_header(w->head, "Sec-WebSocket-Accept", got, sizeof(got)) != 0)
		return -1;
	snprintf(in, sizeof(in), "%s%s", w->key, WS_GUID);
	if (EVP_Digest(in, strlen(in), md, &md_len, EVP_sha1(), NULL) != 1 ||
	    md_len != 20)
		return -1;
	EVP_EncodeBlock((unsigned char *)want, md, 20);
	return strcmp(got, want) == 0 ? 0 : -1;
}

static int
ws_open_framing(struct act_ws *w)
{
	static const struct wslay_event_callbacks cbs = {
	    .recv_callback = ws_recv_cb,
	    .send_callback = ws_send_cb,
	    .genmask_callback = ws_genmask_cb,
	    .on_frame_recv_start_callback = ws_frame_start_cb,
	    .on_frame_recv_chunk_callback = ws_frame_chunk_cb,
	    .on_frame_recv_end_callback = ws_frame_end_cb,
	    .on_msg_recv_callback = ws_msg_cb,
	};

	if (wslay_event_context_client_init(&w->ctx, &cbs, w) != 0)
		return -1;
	/* Data messages are put together here, within the bound, so that
	 * one over it costs its command, not the connection. */
	wslay_event_config_set_no_buffering(w->ctx, 1);
	w->state = WS_OPEN;
	return 0;
}

/* Writes the request and reads the head as far as the socket allows. */
static void
ws_upgrade_step(struct act_ws *w)
{
	CURLcode rc;
	size_t n;
	char *end;

	while (w->req_off < w->req_len) {
		rc = cm_curl.easy_send(
		    w->conn, w->req + w->req_off, w->req_len - w->req_off, &n);
		if (rc == CURLE_AGAIN)
			return;
		if (rc != CURLE_OK) {
			ws_break(w, "the browser connection failed");
			return;
		}
		w->req_off += n;
	}
	for (;;) {
		if (w->head_len + 1 >= sizeof(w->head)) {
			ws_break(w, "the browser's upgrade answer is too long");
			return;
		}
		rc = cm_curl.easy_recv(w->conn, w->head + w->head_len,
		    sizeof(w->head) - 1 - w->head_len, &n);
		if (rc == CURLE_AGAIN)
			return;
		if (rc != CURLE_OK || n == 0) {
			ws_break(
			    w, "the browser did not upgrade the connection");
			return;
		}
		w->head_len += n;
		w->head[w->head_len] = '\0';
		if (memchr(w->head, '\0', w->head_len) != NULL) {
			ws_break(w, "the browser's upgrade answer is not HTTP");
			return;
		}
		if ((end = strstr(w->head, "\r\n\r\n")) == NULL)
			continue;
		end += 4;
		w->spare_off = (size_t)(end - w->head);
		w->spare_len = w->head_len - w->spare_off;
		end[-2] = '\0'; /* the head ends at its last CRLF */
		if (ws_check_head(w) != 0) {
			ws_break(
			    w, "the browser did not upgrade the connection");
			return;
		}
		if (ws_open_framing(w) != 0)
			ws_break(w, "out of memory");
		return;
	}
}

/* Discovery and connection: what the multi handle finished. */
static void
ws_curl_step(struct act_ws *w)
{
	CURLcode rc;
	CURL *e;

	cm_curlm_step(w->m);
	while (
	    w->state < WS_UPGRADE && (e = cm_curlm_done(w->m, &rc)) != NULL) {
		if (e == w->ver.e) {
			int bad = cm_cdpep_version_path(
			    &w->ver, rc, w->ep.path, sizeof(w->ep.path));

			cm_curlm_remove(w->m, w->ver.e);
			cm_cdpep_version_end(&w->ver);
			if (bad != 0) {
				ws_break(w, "the browser's /json/version did "
				            "not answer");
				return;
			}
			if (ws_connect_begin(w) != 0) {
				ws_break(w, "the browser connection failed");
				return;
			}
		} else if (e == w->conn) {
			if (rc != CURLE_OK || ws_upgrade_begin(w) != 0) {
				ws_break(w, "the browser connection failed");
				return;
			}
			ws_upgrade_step(w);
		}
	}
}

int
act_ws_open(const char *endpoint, int64_t deadline_ms, struct act_ws **out,
    char *err, size_t errlen)
{
	struct act_ws *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (w == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	w->deadline_ms = deadline_ms;
	w->fd = CURL_SOCKET_BAD;
	if (cm_cdpep_parse(endpoint, &w->ep) != 0) {
		snprintf(err, errlen,
		    "the endpoint is not http(s)://host:port or "
		    "ws(s)://host:port/path");
		free(w);
		return -1;
	}
	if (cm_curlm_new(&w->m) != 0) {
		snprintf(err, errlen, "cannot start a connection");
		free(w);
		return -1;
	}
	if (w->ep.direct) {
		if (ws_connect_begin(w) != 0)
			ws_break(w, "the browser connection failed");
	} else if (cm_cdpep_version_begin(
	               &w->ver, &w->ep, (long)CM_CDP_CONNECT_MS) != 0 ||
	           cm_curlm_add(w->m, w->ver.e) != 0) {
		ws_break(w, "the browser connection failed");
	}
	w->state = w->state == WS_BROKEN ? WS_BROKEN
	           : w->ep.direct        ? WS_CONNECT
	                                 : WS_DISCOVER;
	*out = w;
	return 0;
}

void
act_ws_free(struct act_ws *w)
{
	if (w == NULL)
		return;
	if (w->ctx != NULL)
		wslay_event_context_free(w->ctx);
	if (w->ver.e != NULL) {
		cm_curlm_remove(w->m, w->ver.e);
		cm_cdpep_version_end(&w->ver);
	}
	if (w->conn != NULL) {
		cm_curlm_remove(w->m, w->conn);
		cm_curl.easy_cleanup(w->conn);
	}
	cm_curlm_free(w->m);
	free(w->req);
	free(w->in);
	free(w);
}

bool
act_ws_ready(const struct act_ws *w)
{
	return w->state == WS_OPEN;
}

bool
act_ws_broken(const struct act_ws *w, const char **why)
{
	if (why != NULL)
		*why = w->why;
	return w->state == WS_BROKEN;
}

/* Sends what wslay holds until the socket would block. */
static void
ws_flush(struct act_ws *w)
{
	if (w->state == WS_OPEN && wslay_event_want_write(w->ctx) &&
	    wslay_event_send(w->ctx) != 0)
		ws_break(w, "the browser connection ended");
}

int
act_ws_send(struct act_ws *w, const char *msg, size_t len)
{
	struct wslay_event_msg m = {
	    WSLAY_TEXT_FRAME, (const uint8_t *)msg, len};

	if (w->state != WS_OPEN || len > CM_CDP_MSG_MAX ||
	    wslay_event_get_queued_msg_length(w->ctx) + len >
	        CM_CDP_OUTBUF_MAX ||
	    wslay_event_queue_msg(w->ctx, &m) != 0)
		return -1;
	ws_flush(w);
	return w->state == WS_OPEN ? 0 : -1;
}

int
act_ws_pollfds(const struct act_ws *w, struct pollfd *fds, int max)
{
	short ev = POLLIN;

	if (max < 1 || w->state == WS_BROKEN)
		return 0;
	if (w->state < WS_UPGRADE) {
		fds[0] =
		    (struct pollfd){.fd = cm_curlm_fd(w->m), .events = POLLIN};
		return 1;
	}
	if ((w->state == WS_UPGRADE && w->req_off < w->req_len) ||
	    (w->state == WS_OPEN && wslay_event_want_write(w->ctx)))
		ev |= POLLOUT;
	fds[0] = (struct pollfd){.fd = w->fd, .events = ev};
	return 1;
}

int
act_ws_step(struct act_ws *w, const struct pollfd *fds, int nfds,
    act_ws_msg_fn fn, void *arg)
{
	bool ready = false;

	for (int i = 0; i < nfds; i++)
		if (fds[i].revents != 0 &&
		    (fds[i].fd == w->fd || (w->state < WS_UPGRADE &&
		                               fds[i].fd == cm_curlm_fd(w->m))))
			ready = true;
	if (w->state < WS_OPEN && w->state != WS_BROKEN &&
	    cm_mono_ms() >= w->deadline_ms)
		ws_break(w, "the browser did not answer in time");
	if (ready && w->state < WS_UPGRADE)
		ws_curl_step(w);
	else if (ready && w->state == WS_UPGRADE)
		ws_upgrade_step(w);
	/* Frames that came with the 101 are read now, whatever poll said. */
	if (w->state == WS_OPEN && (ready || w->spare_len > 0)) {
		w->fn = fn;
		w->fn_arg = arg;
		if (wslay_event_recv(w->ctx) != 0)
			ws_break(w, "the browser connection ended");
		w->fn = NULL;
		/* Read is off once a close came or a message was too big. */
		if (w->state == WS_OPEN &&
		    !wslay_event_get_read_enabled(w->ctx))
			ws_break(
			    w, "the browser sent a message over the bound");
	}
	ws_flush(w);
	return w->state == WS_BROKEN ? -1 : 0;
}
