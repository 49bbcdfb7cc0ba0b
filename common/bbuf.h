/*
 * bbuf.h: a byte buffer that grows up to a bound, and the libcurl write
 * callback that fills one (every body spaced reads with libcurl is
 * bounded before it is parsed).
 */
#ifndef CM_BBUF_H
#define CM_BBUF_H

#include <stdbool.h>
#include <stddef.h>

struct cm_bbuf {
	char *p;    /* NUL-terminated once anything is in it; owned */
	size_t len; /* bytes in p, less the NUL */
	size_t cap; /* the bound on len, set by the caller */
	bool over;  /* a write would have passed cap */
};

/*
 * A CURLOPT_WRITEFUNCTION with a struct cm_bbuf as its data: appends the
 * bytes and returns their count, or returns 0 (curl then fails the
 * transfer with CURLE_WRITE_ERROR) when they would pass cap (over is
 * set) or memory is short.
 */
size_t cm_bbuf_write(char *data, size_t size, size_t n, void *arg);

/* Frees p; the buffer is empty afterwards, its cap kept. */
void cm_bbuf_free(struct cm_bbuf *b);

#endif
