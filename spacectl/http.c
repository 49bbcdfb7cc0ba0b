/*
 * http.c: spacectl's only way to the api, libcurl's easy interface (a CLI
 * makes one request at a time, so blocking is what it wants).
 *
 * Every body is bounded before it is kept, and parsed with cm_json_parse
 * before any field is read.  CURLOPT_VERBOSE is never set: it would print
 * the Authorization header, and the token must never be printed.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bbuf.h"
#include "ctl.h"
#include "json.h"
#include "status.h"

/* A handle for one request to path, with the token and the headers (an
 * extra one may be NULL); *hdrs is freed by the caller.  NULL when
 * libcurl is out of memory (*hdrs is NULL then). */
static CURL *
handle_typed(struct ctl *c, const char *method, const char *path,
    const char *ctype, const char *extra, struct curl_slist **hdrs)
{
	char url[2 * (CM_URL_MAX + 1)], auth[CM_TOKEN_MAX + 32];
	const char *add[3] = {auth, ctype, extra};
	CURL *h = curl_easy_init();

	*hdrs = NULL;
	if (h == NULL)
		return NULL;
	snprintf(url, sizeof(url), "%s%s", c->url, path);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", c->token);
	for (size_t i = 0; i < 3 && add[i] != NULL; i++) {
		/* A failed append leaves the list as it was. */
		struct curl_slist *l = curl_slist_append(*hdrs, add[i]);

		if (l == NULL) {
			explicit_bzero(auth, sizeof(auth));
			curl_slist_free_all(*hdrs);
			*hdrs = NULL;
			curl_easy_cleanup(h);
			return NULL;
		}
		*hdrs = l;
	}
	explicit_bzero(auth, sizeof(auth));
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdrs);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)CM_CTL_CONNECT_MS);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	/* extra is never the token (a resumed stream's Last-Event-ID). */
	if (c->verbose)
		fprintf(stderr, "> %s %s%s%s\n", method, url,
		    extra != NULL ? "  " : "", extra != NULL ? extra : "");
	return h;
}

/* handle_typed for a JSON body, as every request but a file's put. */
static CURL *
handle(struct ctl *c, const char *method, const char *path, const char *extra,
    struct curl_slist **hdrs)
{
	return handle_typed(
	    c, method, path, "Content-Type: application/json", extra, hdrs);
}

/* Prints the api's error envelope in b (or why there is none). */
static void
print_error(long status, const struct cm_bbuf *b)
{
	json_t *v = NULL, *e;
	char err[128];

	if (b->p != NULL &&
	    cm_json_parse(b->p, b->len, CM_CTL_JSON_MAX, CM_JSON_DEPTH_MAX, &v,
	        err, sizeof(err)) == 0 &&
	    json_is_object(e = json_object_get(v, "error")) &&
	    json_is_string(json_object_get(e, "code"))) {
		const char *msg =
		    json_string_value(json_object_get(e, "message"));

		fprintf(stderr, "error: %s: %s\n",
		    json_string_value(json_object_get(e, "code")),
		    msg ? msg : "");
	} else {
		fprintf(stderr, "error: http_%ld: the api answered %ld\n",
		    status, status);
	}
	json_decref(v);
}

/*
 * Runs h, its answer into b; on a failure prints why.  Returns the
 * status, or the exit code (negated) to end with: -CTL_EXIT_API when the
 * api could not be reached or answered too much, -CTL_EXIT_INTERNAL when
 * spacectl ran out of memory (libcurl's own, or b's: cm_bbuf_write
 * refuses a write only for that when b is not over).
 */
static long
perform(struct ctl *c, CURL *h, const struct cm_bbuf *b)
{
	CURLcode rc = curl_easy_perform(h);
	long status = -CTL_EXIT_API;

	if (rc == CURLE_OUT_OF_MEMORY || (rc == CURLE_WRITE_ERROR && !b->over))
		return -ctl_internal("out of memory");
	if (rc != CURLE_OK && !b->over) {
		fprintf(stderr, "error: unreachable: %s: %s\n", c->url,
		    curl_easy_strerror(rc));
		return -CTL_EXIT_API;
	}
	if (b->over) {
		fprintf(stderr,
		    "error: too_large: the answer is over %zu bytes\n", b->cap);
		return -CTL_EXIT_API;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (c->verbose)
		fprintf(stderr, "< %ld\n", status);
	return status;
}

void
ctl_set(json_t **obj, const char *key, json_t *v)
{
	if (*obj == NULL) {
		json_decref(v);
		return;
	}
	/* json_object_set_new takes v whether or not it succeeds. */
	if (json_object_set_new(*obj, key, v) != 0) {
		json_decref(*obj);
		*obj = NULL;
	}
}

/* POST and PUT carry a JSON body, always (ctl.h). */
static bool
sends_body(const char *method)
{
	return strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0;
}

/* Sends h (its body set, or none) and reads the JSON answer, as ctl_call
 * says; h and hdrs are freed. */
static int
call_on(
    CURL *h, struct curl_slist *hdrs, struct ctl *c, int *status, json_t **out)
{
	struct cm_bbuf b = {.cap = CM_CTL_JSON_MAX};
	char err[128];
	long st;
	int rc = CTL_EXIT_API;

	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)CM_CTL_REQUEST_MS);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, cm_bbuf_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	if ((st = perform(c, h, &b)) < 0) {
		rc = (int)-st;
		goto done;
	}
	*status = (int)st;
	if (st < 200 || st > 299) {
		print_error(st, &b);
		goto done;
	}
	if (b.len > 0 && cm_json_parse(b.p, b.len, CM_CTL_JSON_MAX,
	                     CM_JSON_DEPTH_MAX, out, err, sizeof(err)) != 0) {
		fprintf(stderr, "error: bad_answer: %s\n", err);
		goto done;
	}
	rc = CTL_EXIT_OK;
done:
	free(b.p);
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(h);
	return rc;
}

int
ctl_call(struct ctl *c, const char *method, const char *path, json_t *body,
    int *status, json_t **out)
{
	struct curl_slist *hdrs;
	CURL *h = handle(c, method, path, NULL, &hdrs);
	char *text = NULL;
	int rc;

	*out = NULL;
	if (h == NULL)
		return ctl_internal("out of memory");
	if ((body == NULL && sends_body(method)) ||
	    (body != NULL && (text = json_dumps(body, JSON_COMPACT)) == NULL)) {
		curl_slist_free_all(hdrs);
		curl_easy_cleanup(h);
		return ctl_internal("out of memory: no request body");
	}
	if (text != NULL)
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, text);
	rc = call_on(h, hdrs, c, status, out);
	free(text);
	return rc;
}

int
ctl_put_bytes(struct ctl *c, const char *path, const void *p, size_t n,
    const char *mime, int *status, json_t **out)
{
	char ctype[CM_MIME_MAX + 32];
	struct curl_slist *hdrs;
	CURL *h;

	*out = NULL;
	snprintf(ctype, sizeof(ctype), "Content-Type: %s", mime);
	if ((h = handle_typed(c, "PUT", path, ctype, NULL, &hdrs)) == NULL)
		return ctl_internal("out of memory");
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, p);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)n);
	return call_on(h, hdrs, c, status, out);
}

int
ctl_get(struct ctl *c, const char *path, json_t **data)
{
	json_t *res;
	int status, rc = ctl_call(c, "GET", path, NULL, &status, &res);

	*data = NULL;
	if (rc != CTL_EXIT_OK)
		return rc;
	*data = json_incref(json_object_get(res, "data"));
	json_decref(res);
	if (*data == NULL) {
		fprintf(stderr, "error: bad_answer: no data in the answer\n");
		return CTL_EXIT_API;
	}
	return CTL_EXIT_OK;
}

static int
write_file(const char *file, const char *p, size_t len)
{
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t off = 0;

	if (fd < 0) {
		fprintf(stderr, "error: %s: %s\n", file, strerror(errno));
		return CTL_EXIT_API;
	}
	while (off < len) {
		ssize_t n = write(fd, p + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(
			    stderr, "error: %s: %s\n", file, strerror(errno));
			close(fd);
			return CTL_EXIT_API;
		}
		off += (size_t)n;
	}
	if (close(fd) != 0) {
		fprintf(stderr, "error: %s: %s\n", file, strerror(errno));
		return CTL_EXIT_API;
	}
	return CTL_EXIT_OK;
}

int
ctl_download(struct ctl *c, const char *path, const char *file, char *mime,
    size_t mime_len, size_t *size)
{
	struct cm_bbuf b = {.cap = CM_ARTIFACT_MAX};
	struct curl_slist *hdrs;
	CURL *h = handle(c, "GET", path, NULL, &hdrs);
	char *ct = NULL;
	long st;
	int rc = CTL_EXIT_API;

	if (h == NULL)
		return ctl_internal("out of memory");
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)CM_CTL_REQUEST_MS);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, cm_bbuf_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	if ((st = perform(c, h, &b)) < 0) {
		rc = (int)-st;
		goto done;
	}
	if (st != 200) {
		print_error(st, &b);
		goto done;
	}
	curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
	if (mime != NULL)
		snprintf(mime, mime_len, "%s", ct ? ct : "");
	*size = b.len;
	rc = write_file(file, b.p ? b.p : "", b.len);
done:
	free(b.p);
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(h);
	return rc;
}

/* --- Server-Sent Events -------------------------------------------------- */

struct sse {
	struct ctl *c;
	int64_t *last;
	bool (*fn)(void *arg, json_t *ev);
	void *arg;
	char line[CM_CTL_SSE_LINE_MAX + 1];
	size_t line_len;
	bool line_over; /* the line in progress is cut: dropped */
	char data[CM_CTL_SSE_LINE_MAX + 1]; /* the event's data: line */
	size_t data_len;
	bool got;           /* this connection brought an event */
	bool stop;          /* fn asked to stop */
	bool closed;        /* space_closed was seen: the api ends the stream */
	bool invalid;       /* the api sent what is not an event */
	struct cm_bbuf err; /* the body of an answer that is not 200 */
	long status;
};

/* The event whose data: lines are in s->data, at its blank line. */
static void
sse_dispatch(struct sse *s)
{
	json_t *ev = NULL;
	json_int_t seq;
	char err[128];

	if (s->data_len == 0)
		return;
	if (cm_json_parse(s->data, s->data_len, CM_CTL_SSE_LINE_MAX,
	        CM_JSON_DEPTH_MAX, &ev, err, sizeof(err)) != 0 ||
	    !json_is_integer(json_object_get(ev, "sequence"))) {
		fprintf(stderr, "error: bad_answer: an event: %s\n", err);
		s->invalid = true;
		json_decref(ev);
		s->data_len = 0;
		return;
	}
	s->data_len = 0;
	seq = json_integer_value(json_object_get(ev, "sequence"));
	/* Last-Event-ID makes the api start after *last; a sequence at or
	 * below it would be a duplicate, and is never shown twice. */
	if (seq > *s->last) {
		*s->last = seq;
		s->got = true;
		if (s->fn(s->arg, ev))
			s->stop = true;
	}
	if (cm_event_kind_is(json_string_value(json_object_get(ev, "kind")),
	        CM_EV_SPACE_CLOSED))
		s->closed = true;
	json_decref(ev);
}

static void
sse_line(struct sse *s)
{
	const char *v;
	size_t n;

	if (s->line_len == 0) {
		sse_dispatch(s);
		return;
	}
	if (strncmp(s->line, "data:", 5) != 0)
		return; /* id: and event: repeat what data: holds; ':' comments
		         */
	v = s->line + 5;
	if (*v == ' ')
		v++;
	n = s->line_len - (size_t)(v - s->line);
	if (s->data_len + n + 1 > CM_CTL_SSE_LINE_MAX) {
		s->invalid = true;
		return;
	}
	if (s->data_len > 0)
		s->data[s->data_len++] = '\n';
	memcpy(s->data + s->data_len, v, n);
	s->data_len += n;
	s->data[s->data_len] = '\0';
}

static size_t
sse_write(char *p, size_t size, size_t n, void *arg)
{
	struct sse *s = arg;
	size_t len = size * n;

	if (s->status != 200)
		return cm_bbuf_write(p, size, n, &s->err);
	for (size_t i = 0; i < len; i++) {
		char ch = p[i];

		if (ch == '\r')
			continue;
		if (ch != '\n') {
			if (s->line_len < CM_CTL_SSE_LINE_MAX)
				s->line[s->line_len++] = ch;
			else
				s->line_over = true;
			continue;
		}
		s->line[s->line_len] = '\0';
		if (s->line_over)
			s->invalid = true;
		else
			sse_line(s);
		s->line_len = 0;
		s->line_over = false;
		if (s->stop || s->invalid)
			return 0; /* ends this transfer */
	}
	return len;
}

/* The status line is known once headers are in: keep it for sse_write. */
static size_t
sse_header(char *p, size_t size, size_t n, void *arg)
{
	struct sse *s = arg;
	size_t len = size * n;
	int st;

	if (len > 9 && strncmp(p, "HTTP/", 5) == 0 &&
	    sscanf(p, "HTTP/%*s %d", &st) == 1)
		s->status = st;
	return len;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int
ctl_stream(struct ctl *c, const char *path, int64_t *last,
    bool (*fn)(void *arg, json_t *ev), void *arg)
{
	struct sse *s = calloc(1, sizeof(*s));
	long backoff = CM_CTL_BACKOFF_MIN_MS;
	int attempts = 0, rc = CTL_EXIT_API;

	if (s == NULL)
		return ctl_internal("out of memory");
	s->c = c;
	s->last = last;
	s->fn = fn;
	s->arg = arg;
	for (;;) {
		char leid[64];
		struct curl_slist *hdrs, *accept;
		CURL *h;

		snprintf(leid, sizeof(leid), "Last-Event-ID: %lld",
		    (long long)*last);
		if ((h = handle(c, "GET", path, leid, &hdrs)) == NULL ||
		    (accept = curl_slist_append(
		         hdrs, "Accept: text/event-stream")) == NULL) {
			curl_slist_free_all(hdrs);
			curl_easy_cleanup(h);
			rc = ctl_internal("out of memory");
			break;
		}
		hdrs = accept;
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
		curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, sse_header);
		curl_easy_setopt(h, CURLOPT_HEADERDATA, s);
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sse_write);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, s);
		/* The api's heartbeat keeps a live stream from ever being this
		 * quiet: a stream that is, is dead. */
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(
		    h, CURLOPT_LOW_SPEED_TIME, (long)CM_CTL_STALL_S);
		s->status = 0;
		s->got = false;
		s->line_len = 0;
		s->data_len = 0;
		s->err = (struct cm_bbuf){.cap = CM_CTL_JSON_MAX};
		curl_easy_perform(h);
		if (c->verbose)
			fprintf(stderr, "< %ld (stream ended)\n", s->status);
		curl_slist_free_all(hdrs);
		curl_easy_cleanup(h);
		if (s->status != 0 && s->status != 200 &&
		    !(s->status >= 500 && s->status <= 599)) {
			print_error(s->status, &s->err);
			free(s->err.p);
			break;
		}
		free(s->err.p);
		s->err.p = NULL;
		if (s->invalid)
			break;
		if (s->stop || s->closed) {
			rc = CTL_EXIT_OK;
			break;
		}
		/* Dropped: resume after *last, sooner when it was making
		 * progress. */
		if (s->got) {
			attempts = 0;
			backoff = CM_CTL_BACKOFF_MIN_MS;
		}
		if (++attempts > CM_CTL_RESUME_MAX) {
			fprintf(stderr,
			    "error: unreachable: the event stream of %s "
			    "dropped %d times in a row\n",
			    c->url, CM_CTL_RESUME_MAX);
			break;
		}
		if (c->verbose)
			fprintf(stderr, "* resuming after %lld in %ld ms\n",
			    (long long)*last, backoff);
		sleep_ms(backoff);
		backoff = backoff * 2 > CM_CTL_BACKOFF_MAX_MS
		              ? CM_CTL_BACKOFF_MAX_MS
		              : backoff * 2;
	}
	free(s);
	return rc;
}
