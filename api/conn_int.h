/*
 * conn_int.h: what the two halves of a connection share, internal to
 * api/conn.c (the set of connections, their output and their jobs) and
 * api/conn_read.c (reading a request).  Loop thread only, like conn.h.
 */
#ifndef API_CONN_INT_H
#define API_CONN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "errors.h"
#include "http.h"

enum conn_state {
	C_HEAD,   /* reading a request head (or idle between requests) */
	C_BODY,   /* reading its body */
	C_WORK,   /* a worker has the request */
	C_OUT,    /* writing the answer */
	C_PARKED, /* a ?wait= request waiting for its task */
	C_STREAM, /* an event stream */
	C_LINGER, /* answered and shut for writing; reading what is left */
};

struct api_conn {
	int fd;
	enum conn_state state;
	char *in; /* bytes read and not yet used; NULL when none */
	size_t in_len, in_cap;
	struct api_job *job; /* C_BODY: the request waiting for its body */
	size_t head_len;
	char *out; /* bytes to write, from out_off */
	size_t out_len, out_off;
	int64_t deadline_ms; /* C_HEAD, C_BODY, C_LINGER; 0: none */
	int64_t progress_ms; /* output began, or last took a byte */
	bool close_after;    /* linger and close once the output is written */
	bool refused;        /* over the cap: told 503 */
	bool closed;
	int jobs;         /* jobs of this connection the workers hold */
	uint32_t watched; /* epoll interest; 0: not in the set */
	struct api_stream *stream; /* C_STREAM */
	struct api_wait *wait;     /* C_PARKED, and its WORK in between */
	struct api_viewer *viewer; /* C_STREAM of a live view */
	struct api_conn *prev, *next;
};

/* conn.c: brings the epoll set in line with c's state. */
void api_conn_watch(struct api_conn *c);
/* conn.c: writes what the socket takes of c's output; once it is all
 * written, moves on (the next request, a linger, a stream's next page).
 * c may be closed on return. */
void api_conn_flush(struct api_conn *c, int64_t now);

/* conn_read.c: an answer the loop gives itself (a bad or late request),
 * with the error envelope of err; the connection closes after it. */
void api_conn_refuse(struct api_conn *c, int status, enum cm_err err,
    const char *why, int64_t now);
/* conn_read.c: moves c on with what it has read: a head parsed, 100
 * Continue, and a whole request given to a worker (C_WORK). */
void api_conn_process(struct api_conn *c, int64_t now);
/* conn_read.c: reads what the socket has (C_HEAD, C_BODY), within the
 * bound of the request's state, then api_conn_process. */
void api_conn_read(struct api_conn *c, int64_t now);
/* conn_read.c: in C_LINGER, throws away what arrives; closes c at its
 * end. */
void api_conn_drain(struct api_conn *c);

#endif
