/*
 * test_live.c: the live view of a Space on a real Chromium, through the
 * API.  A viewer gets frames that are whole JPEGs of the size they say;
 * after the agent navigates, a frame differs; a second viewer gets the
 * screen at once; viewers past CM_VIEWERS_MAX are refused with 429
 * viewers_exceeded; the screencast stops when the last viewer leaves
 * (the actor's frame socket is gone from run_dir); a member who is not
 * the Space's owner is refused as a GET of the Space is; a closed Space
 * has nothing to watch.  And the actor's live.input, sent on its control
 * socket as the api would, names what is under the pointer and clicks a
 * link, which the page follows.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "b64.h"
#include "clock.h"
#include "pages.h"
#include "raw_fixture.h"

#define LIVE_WAIT_MS 30000 /* a browser's frame, on a loaded machine */

TestSuite(live, .timeout = 300);

#define LIVE_GRANTS "[\"navigate\", \"snapshot\", \"click\"]"

/* A viewer: its connection and what it read and has not used yet. */
struct viewer {
	int fd;
	char *buf;
	size_t len, cap;
	bool eof;
};

/* Reads what the socket has within ms; false on timeout or end. */
static bool
viewer_read(struct viewer *v, int ms)
{
	struct pollfd p = {.fd = v->fd, .events = POLLIN};
	ssize_t n;

	if (v->eof || poll(&p, 1, ms) <= 0)
		return false;
	if (v->cap - v->len < 65536) {
		v->cap = v->cap * 2 + 65536;
		cr_assert_not_null(v->buf = realloc(v->buf, v->cap + 1));
	}
	n = read(v->fd, v->buf + v->len, v->cap - v->len);
	if (n <= 0) {
		v->eof = true;
		return false;
	}
	v->len += (size_t)n;
	v->buf[v->len] = '\0';
	return true;
}

static void
viewer_consume(struct viewer *v, size_t n)
{
	memmove(v->buf, v->buf + n, v->len - n);
	v->len -= n;
	v->buf[v->len] = '\0';
}

/* Opens GET .../live as token; returns the answer's status.  On an
 * error, *code (may be NULL) gets its error code (a static buffer). */
static int
viewer_open(struct hf_env *e, const char *token, const char *space,
    struct viewer *v, const char **code)
{
	static char err_code[64];
	char req[2048], *end;
	int64_t until = cm_mono_ms() + LIVE_WAIT_MS;
	int status = 0;

	memset(v, 0, sizeof(*v));
	v->fd = raw_connect(e);
	snprintf(req, sizeof(req),
	    "GET /api/v1/workspaces/%s/browser-spaces/%s/live HTTP/1.1\r\n"
	    "Host: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
	    "Accept: text/event-stream\r\n\r\n",
	    hf_ws(e), space, token);
	raw_send(v->fd, req, strlen(req));
	while ((v->buf == NULL || strstr(v->buf, "\r\n\r\n") == NULL) &&
	       cm_mono_ms() < until)
		viewer_read(v, 100);
	cr_assert(v->buf != NULL && (end = strstr(v->buf, "\r\n\r\n")),
	    "no answer to the live view");
	cr_assert_eq(sscanf(v->buf, "HTTP/1.1 %d", &status), 1);
	if (status == 200) {
		cr_assert(hf_contains(v->buf, (size_t)(end - v->buf),
		    "Content-Type: text/event-stream"));
		viewer_consume(v, (size_t)(end + 4 - v->buf));
		return status;
	}
	/* An error's body is small, and the connection closes after it. */
	while (!v->eof && cm_mono_ms() < until)
		viewer_read(v, 100);
	if (code != NULL) {
		json_t *j = json_loads(strstr(v->buf, "\r\n\r\n") + 4, 0, NULL);
		const char *c = json_string_value(
		    json_object_get(json_object_get(j, "error"), "code"));

		snprintf(err_code, sizeof(err_code), "%s", c ? c : "");
		json_decref(j);
		*code = err_code;
	}
	return status;
}

static void
viewer_close(struct viewer *v)
{
	close(v->fd);
	free(v->buf);
	memset(v, 0, sizeof(*v));
}

/* The next frame's data (a new object), or NULL when none came in ms. */
static json_t *
viewer_frame(struct viewer *v, int ms)
{
	int64_t until = cm_mono_ms() + ms;

	for (;;) {
		char *ev =
		    v->buf ? strstr(v->buf, "event: frame\ndata: ") : NULL;
		char *end = ev ? strstr(ev, "\n\n") : NULL;

		if (end != NULL) {
			json_t *j;

			*end = '\0';
			j = json_loads(
			    ev + strlen("event: frame\ndata: "), 0, NULL);
			viewer_consume(v, (size_t)(end + 2 - v->buf));
			cr_assert_not_null(j, "a frame's data is not JSON");
			return j;
		}
		if (cm_mono_ms() >= until ||
		    !viewer_read(v, (int)(until - cm_mono_ms())))
			if (cm_mono_ms() >= until || v->eof)
				return NULL;
	}
}

/* The frame's JPEG, checked: base64 of a whole JPEG (SOI ... EOI) within
 * CM_LIVE_FRAME_MAX whose own header gives the size the frame says. */
static unsigned char *
frame_jpeg(const json_t *f, size_t *n)
{
	const char *b = json_string_value(json_object_get(f, "jpeg"));
	unsigned char *jpeg = NULL;
	unsigned w = 0, h = 0;

	cr_assert_not_null(b, "a frame without its jpeg");
	cr_assert_eq(cm_b64_decode(b, strlen(b), CM_LIVE_FRAME_MAX, &jpeg, n),
	    0, "the jpeg is not base64 within the bound");
	cr_assert(*n > 4 && jpeg[0] == 0xff && jpeg[1] == 0xd8 &&
	              jpeg[*n - 2] == 0xff && jpeg[*n - 1] == 0xd9,
	    "not a whole JPEG (SOI ... EOI)");
	cr_assert(cm_jpeg_size(jpeg, *n, &w, &h));
	cr_assert_eq(w, json_integer_value(json_object_get(f, "width")));
	cr_assert_eq(h, json_integer_value(json_object_get(f, "height")));
	cr_assert(w > 0 && w <= CM_LIVE_MAX_WIDTH && h > 0 &&
	          h <= CM_LIVE_MAX_HEIGHT);
	cr_assert_gt(json_integer_value(json_object_get(f, "seq")), 0);
	cr_assert_gt(json_integer_value(json_object_get(f, "at")), 0);
	return jpeg;
}

/* The actor's socket file name (ctl or live) of space, in run_dir. */
static void
actor_socket(struct hf_env *e, const char *kind, const char *space, char *path,
    size_t len)
{
	const char *url = e->sf.p.store_url + strlen("ipc://");
	const char *slash = strrchr(url, '/');

	snprintf(
	    path, len, "%.*s/%s-%s.ipc", (int)(slash - url), url, kind, space);
}

static bool
path_gone(void *arg)
{
	struct stat st;

	return stat(arg, &st) != 0;
}

static bool
path_there(void *arg)
{
	return !path_gone(arg);
}

/* Starts spaced with one managed instance, a Space on it owned by the
 * world's operator, and navigates it to path of the page server. */
static void
live_space(
    struct hf_env *e, const char *tag, int port, const char *path, char *space)
{
	char inst[CM_ID_MAX + 1], args[256], ctl[512];

	hf_start(e, tag, 0, NULL);
	hf_managed_instance(e, "chromium-live", inst);
	cr_assert_eq(hf_create(e, e->manager, inst, "operator",
	                 e->sf.w.operator_id, LIVE_GRANTS, space),
	    201);
	snprintf(args, sizeof(args), "{\"url\": \"http://127.0.0.1:%d%s\"}",
	    port, path);
	cr_assert_eq(hf_submit(e, e->manager, space, "?wait=30", "nav-1",
	                 "navigate", args, NULL, NULL),
	    200);
	actor_socket(e, "ctl", space, ctl, sizeof(ctl));
	cr_assert(tk_wait_until(path_there, ctl, LIVE_WAIT_MS),
	    "the actor bound no control socket at %s", ctl);
}

static long
metric(struct hf_env *e, const char *name)
{
	char *body = NULL, line[128], *at;
	long v = -1;

	cr_assert_eq(
	    tk_http(&e->sf.p, "GET", "/metrics", NULL, NULL, NULL, &body), 200);
	snprintf(line, sizeof(line), "\n%s ", name);
	if ((at = strstr(body, line)) != NULL)
		v = strtol(at + strlen(line), NULL, 10);
	free(body);
	return v;
}

Test(live, frames_viewers_bound_and_stop, .fini = tk_cleanup)
{
	static struct hf_env e;
	struct viewer v[CM_VIEWERS_MAX + 1];
	char space[CM_ID_MAX + 1], args[256], pub[512];
	struct tk_pages *pages;
	unsigned char *first, *jpeg = NULL;
	size_t first_n, n = 0;
	const char *code = NULL;
	json_t *f;
	int port;

	cr_assert_not_null(pages = tk_pages_start(&port));
	live_space(&e, "live", port, "/", space);
	actor_socket(&e, "live", space, pub, sizeof(pub));
	cr_assert(path_gone(pub), "frames are published with no viewer");

	/* The first viewer starts the screencast and gets a frame. */
	cr_assert_eq(viewer_open(&e, e.manager, space, &v[0], NULL), 200);
	cr_assert_not_null(f = viewer_frame(&v[0], LIVE_WAIT_MS), "no frame");
	first = frame_jpeg(f, &first_n);
	json_decref(f);
	cr_assert(path_there(pub), "no frame socket while watched");

	/* A second viewer gets the screen as it is, at once. */
	cr_assert_eq(viewer_open(&e, e.manager, space, &v[1], NULL), 200);
	cr_assert_not_null(f = viewer_frame(&v[1], LIVE_WAIT_MS),
	    "the second viewer got no frame");
	free(frame_jpeg(f, &n));
	json_decref(f);

	/* The agent navigates: a frame of the new page differs. */
	snprintf(args, sizeof(args),
	    "{\"url\": \"http://127.0.0.1:%d/links?n=40\"}", port);
	cr_assert_eq(hf_submit(&e, e.manager, space, "?wait=30", "nav-2",
	                 "navigate", args, NULL, NULL),
	    200);
	for (;;) {
		cr_assert_not_null(f = viewer_frame(&v[0], LIVE_WAIT_MS),
		    "no frame after the navigation");
		jpeg = frame_jpeg(f, &n);
		json_decref(f);
		if (n != first_n || memcmp(jpeg, first, n) != 0)
			break;
		free(jpeg);
	}
	free(jpeg);
	free(first);

	/* Up to CM_VIEWERS_MAX viewers, and not one more. */
	for (int i = 2; i < CM_VIEWERS_MAX; i++)
		cr_assert_eq(viewer_open(&e, e.manager, space, &v[i], NULL),
		    200, "viewer %d", i + 1);
	cr_assert_eq(
	    viewer_open(&e, e.manager, space, &v[CM_VIEWERS_MAX], &code), 429);
	cr_assert_str_eq(code, "viewers_exceeded");
	viewer_close(&v[CM_VIEWERS_MAX]);
	cr_assert_eq(metric(&e, "spaced_live_viewers"), CM_VIEWERS_MAX);
	cr_assert_gt(metric(&e, "spaced_live_frames_sent_total"), 0);

	/* One leaves: one more may come. */
	viewer_close(&v[1]);
	cr_assert_eq(viewer_open(&e, e.manager, space, &v[1], NULL), 200);

	/* The last one gone, the screencast stops and its socket goes. */
	for (int i = 0; i < CM_VIEWERS_MAX; i++)
		viewer_close(&v[i]);
	cr_assert(tk_wait_until(path_gone, pub, LIVE_WAIT_MS),
	    "the frame socket stayed after the last viewer left");

	/* Watched again, it starts again. */
	cr_assert_eq(viewer_open(&e, e.manager, space, &v[0], NULL), 200);
	cr_assert_not_null(f = viewer_frame(&v[0], LIVE_WAIT_MS));
	json_decref(f);
	viewer_close(&v[0]);

	/* A closed Space has nothing to watch. */
	cr_assert_eq(
	    hf_post(&e, e.manager, space, "close?wait=30", NULL, NULL), 200);
	cr_assert_eq(viewer_open(&e, e.manager, space, &v[0], &code), 409);
	cr_assert_str_eq(code, "space_closed");
	viewer_close(&v[0]);
	cr_assert(tk_wait_until(path_gone, pub, LIVE_WAIT_MS));
	hf_stop(&e);
	tk_pages_stop(pages);
}

Test(live, watched_only_as_the_space_is_read, .fini = tk_cleanup)
{
	static struct hf_env e;
	char space[CM_ID_MAX + 1], mem[CM_ID_MAX + 1],
	    mem_tok[CM_TOKEN_MAX + 1];
	char path[1024], outsider[CM_ID_MAX + 1], out_tok[CM_TOKEN_MAX + 1];
	struct tk_pages *pages;
	struct viewer v;
	const char *code = NULL;
	int port, get;

	cr_assert_not_null(pages = tk_pages_start(&port));
	live_space(&e, "live-authz", port, "/", space);
	hf_path(&e, path, sizeof(path), NULL, space, NULL);

	/* A member who does not own the Space. */
	hf_principal(&e, "operator", "member", "member", mem, mem_tok);
	get = hf_call(&e, "GET", path, mem_tok, NULL, NULL);
	cr_assert(get == 403 || get == 404, "GET answered %d", get);
	cr_assert_eq(viewer_open(&e, mem_tok, space, &v, &code), get);
	viewer_close(&v);

	/* Someone of no membership of the workspace. */
	hf_principal(&e, "operator", "outsider", NULL, outsider, out_tok);
	get = hf_call(&e, "GET", path, out_tok, NULL, NULL);
	cr_assert(get == 403 || get == 404, "GET answered %d", get);
	cr_assert_eq(viewer_open(&e, out_tok, space, &v, &code), get);
	viewer_close(&v);

	/* No token at all. */
	cr_assert_eq(viewer_open(&e, "nope", space, &v, &code), 401);
	viewer_close(&v);
	hf_stop(&e);
	tk_pages_stop(pages);
}

/* live.input on the actor's control socket, as the api sends it. */
static enum cm_err
input(nng_socket s, const char *space, const char *kind, long x, long y,
    struct pr_rep *r)
{
	struct pr_req q;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_LIVE_INPUT;
	q.space_id = space;
	q.kind = kind;
	q.x = x;
	q.y = y;
	cr_assert_eq(cm_rpc_call(s, &q, r, LIVE_WAIT_MS), CM_OK);
	return r->err;
}

struct title_is {
	struct hf_env *e;
	const char *space, *want;
	int n;
};

/* A snapshot's title is w->want. */
static bool
title_is(void *arg)
{
	struct title_is *w = arg;
	char rid[32];
	const char *title;
	json_t *j = NULL;
	bool ok;

	snprintf(rid, sizeof(rid), "snap-%d", w->n++);
	hf_submit(w->e, w->e->manager, w->space, "?wait=30", rid, "snapshot",
	    "{}", &j, NULL);
	title = sf_str(
	    json_object_get(json_object_get(j, "data"), "result"), "title");
	ok = title != NULL && strcmp(title, w->want) == 0;
	json_decref(j);
	return ok;
}

Test(live, input_clicks_a_link_and_an_unrenewed_watch_ends, .fini = tk_cleanup)
{
	static struct hf_env e;
	char space[CM_ID_MAX + 1], ctl[512], url[600];
	struct title_is w = {&e, NULL, "Next", 0};
	struct tk_pages *pages;
	struct pr_rep r;
	nng_socket s;
	long y, link_y = -1;
	int port;

	cr_assert_not_null(pages = tk_pages_start(&port));
	live_space(&e, "live-input", port, "/", space);
	actor_socket(&e, "ctl", space, ctl, sizeof(ctl));
	snprintf(url, sizeof(url), "ipc://%s", ctl);
	cr_assert_eq(cm_rpc_open(&s, url), 0);

	/* Out of the viewport, or text where a pointer goes: refused. */
	cr_assert_eq(input(s, space, "click", CM_BROWSER_WIDTH, 10, &r),
	    CM_E_INVALID_REQUEST);
	pr_rep_free(&r);
	cr_assert_eq(
	    input(s, space, "dance", 10, 10, &r), CM_E_INVALID_REQUEST);
	pr_rep_free(&r);

	/* The pointer moves down the page's left edge until it is over the
	 * link, which the answer names. */
	for (y = 60; y < 240 && link_y < 0; y += 4) {
		cr_assert_eq(input(s, space, "move", 24, y, &r), CM_OK,
		    "move: %s", r.msg ? r.msg : "");
		cr_assert_eq(r.n_inputs, 1);
		cr_assert_str_eq(r.inputs[0].kind, "move");
		if (r.inputs[0].role != NULL &&
		    strcmp(r.inputs[0].role, "link") == 0) {
			cr_assert_str_eq(r.inputs[0].name, "Next page");
			link_y = y;
		}
		pr_rep_free(&r);
	}
	cr_assert_geq(link_y, 0, "the pointer never met the link");

	/* A click there, and the page follows the link. */
	cr_assert_eq(input(s, space, "click", 24, link_y, &r), CM_OK);
	cr_assert_str_eq(r.inputs[0].kind, "click");
	cr_assert_str_eq(r.inputs[0].role, "link");
	pr_rep_free(&r);
	w.space = space;
	cr_assert(tk_wait_until(title_is, &w, LIVE_WAIT_MS),
	    "the page did not follow the click");

	/* A watch nobody renews (an api that died) ends with its lease:
	 * the frame socket goes within CM_LIVE_LEASE_MS. */
	{
		struct pr_req q;
		char pub[512];
		int64_t t0;

		actor_socket(&e, "live", space, pub, sizeof(pub));
		memset(&q, 0, sizeof(q));
		q.op = PR_OP_LIVE_WATCH;
		q.space_id = space;
		cr_assert_eq(cm_rpc_call(s, &q, &r, LIVE_WAIT_MS), CM_OK);
		cr_assert_eq(r.err, CM_OK, "%s", r.msg ? r.msg : "");
		pr_rep_free(&r);
		t0 = cm_mono_ms();
		cr_assert(path_there(pub), "no frame socket while watched");
		cr_assert(tk_wait_until(path_gone, pub, CM_LIVE_LEASE_MS * 3),
		    "the watch outlived its lease");
		cr_assert_geq(cm_mono_ms() - t0, CM_LIVE_LEASE_MS / 2,
		    "the watch ended long before its lease");
		/* Another Space's id is refused. */
		q.space_id = "0190a0b0-0000-7000-8000-00000000ffff";
		cr_assert_eq(cm_rpc_call(s, &q, &r, LIVE_WAIT_MS), CM_OK);
		cr_assert_eq(r.err, CM_E_NOT_FOUND);
		pr_rep_free(&r);
	}
	nng_close(s);
	hf_stop(&e);
	tk_pages_stop(pages);
}

/* POST .../live/input as token with body: its status, the answer in *out
 * (may be NULL; caller decrefs). */
static int
api_input(struct hf_env *e, const char *token, const char *space,
    const char *body, json_t **out)
{
	char path[1024];

	hf_path(e, path, sizeof(path), NULL, space, "/live/input");
	return hf_call(e, "POST", path, token, body, out);
}

/* A text no event, log line or answer may hold. */
#define CANARY "canary-0p3rat0r-pw-5150"

/*
 * The holder's input through the api: refused while the Space is not
 * held by the caller; once taken over, a pointer names what it is over
 * and a click follows the link; each is an operator_input event naming
 * the holder, the kind and the element, and the text typed is in no
 * event, answer or log line; released, the agent's next snapshot is the
 * page the operator left.
 */
Test(live, the_holders_input_reaches_the_page_and_never_its_text,
    .fini = tk_cleanup)
{
	static struct hf_env e;
	char space[CM_ID_MAX + 1], body[256], other[CM_ID_MAX + 1];
	char other_tok[CM_TOKEN_MAX + 1];
	struct title_is w = {&e, NULL, "Next", 0};
	struct tk_pages *pages;
	json_t *res = NULL, *events, *ev;
	char *log, *text;
	long y, link_y = -1;
	size_t i, n_click = 0;
	int port;

	cr_assert_not_null(pages = tk_pages_start(&port));
	live_space(&e, "live-hold", port, "/", space);
	hf_principal(
	    &e, "operator", "not-the-owner", "member", other, other_tok);
	/* Not held: nobody's input goes. */
	cr_assert_eq(api_input(&e, e.manager, space,
	                 "{\"kind\": \"move\", \"x\": 24, \"y\": 100}", NULL),
	    409);
	cr_assert_eq(
	    hf_post(&e, e.manager, space, "takeover", NULL, NULL), 200);
	/* Held, but not by the caller (nor its owner or a manager). */
	cr_assert_eq(api_input(&e, other_tok, space,
	                 "{\"kind\": \"move\", \"x\": 24, \"y\": 100}", NULL),
	    403);
	cr_assert_eq(
	    api_input(&e, e.manager, space, "{\"kind\": \"dance\"}", NULL),
	    422);
	for (y = 60; y < 240 && link_y < 0; y += 4) {
		snprintf(body, sizeof(body),
		    "{\"kind\": \"move\", \"x\": 24, \"y\": %ld}", y);
		cr_assert_eq(api_input(&e, e.manager, space, body, &res), 200);
		if (strcmp(sf_str(af_data(res), "role"), "link") == 0) {
			cr_assert_str_eq(
			    sf_str(af_data(res), "name"), "Next page");
			link_y = y;
		}
		json_decref(res);
	}
	cr_assert_geq(link_y, 0, "the pointer never met the link");
	cr_assert_eq(
	    api_input(&e, e.manager, space,
	        "{\"kind\": \"text\", \"text\": \"" CANARY "\"}", &res),
	    200);
	text = json_dumps(res, JSON_COMPACT);
	cr_assert_null(strstr(text, CANARY), "%s", text);
	free(text);
	json_decref(res);
	snprintf(body, sizeof(body),
	    "{\"kind\": \"click\", \"x\": 24, \"y\": %ld}", link_y);
	cr_assert_eq(api_input(&e, e.manager, space, body, &res), 200);
	cr_assert_str_eq(sf_str(af_data(res), "role"), "link");
	json_decref(res);
	/* Handed back, the agent finds the page the operator left. */
	cr_assert_eq(hf_post(&e, e.manager, space, "release", NULL, NULL), 200);
	w.space = space;
	cr_assert(tk_wait_until(title_is, &w, LIVE_WAIT_MS),
	    "the agent's snapshot is not the page the operator left");
	/* The events: who, what, where, never the text. */
	events = hf_all_events(&e, space);
	text = json_dumps(events, JSON_COMPACT);
	cr_assert_null(strstr(text, CANARY), "an event holds the typed text");
	free(text);
	json_array_foreach(events, i, ev)
	{
		const json_t *p = json_object_get(ev, "payload");

		if (strcmp(sf_str(ev, "kind"), "operator_input") != 0)
			continue;
		cr_assert_str_eq(sf_str(p, "by"), e.sf.w.operator_id);
		cr_assert_null(json_object_get(p, "text"));
		if (strcmp(sf_str(p, "kind"), "click") == 0) {
			cr_assert_str_eq(sf_str(p, "role"), "link");
			cr_assert_str_eq(sf_str(p, "name"), "Next page");
			cr_assert_eq(
			    json_integer_value(json_object_get(p, "y")),
			    link_y);
			n_click++;
		}
	}
	cr_assert_eq(n_click, 1);
	json_decref(events);
	cr_assert_not_null(log = tk_read_file(e.sf.out, NULL));
	cr_assert_null(strstr(log, CANARY), "the log holds the typed text");
	free(log);
	hf_stop(&e);
	tk_pages_stop(pages);
}
