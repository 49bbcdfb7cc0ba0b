/*
 * b64.h: standard, padded base64 (RFC 4648), as CDP and JSON carry
 * images, and the one look at a JPEG's own header that the live view
 * needs.  Pure functions on caller buffers.
 */
#ifndef CM_B64_H
#define CM_B64_H

#include <stdbool.h>
#include <stddef.h>

/* Characters of the base64 of n bytes, padding included. */
#define CM_B64_LEN(n) (((size_t)(n) + 2) / 3 * 4)

/*
 * Decodes the n characters at in into a new buffer (*out, *out_len; the
 * caller frees).  At most max bytes come out: a longer input is refused
 * before anything is allocated.  Returns 0, or -1 when in is not such
 * base64, is empty or too long, or memory is short.
 */
int cm_b64_decode(
    const char *in, size_t n, size_t max, unsigned char **out, size_t *out_len);

/* The base64 of the n bytes at in, NUL-terminated, into out, which has
 * room for CM_B64_LEN(n) + 1 characters.  Returns its length. */
size_t cm_b64_encode(const unsigned char *in, size_t n, char *out);

/*
 * True when the n bytes at p are a whole JPEG: they begin with SOI and
 * end with EOI, and a start-of-frame segment before the first scan
 * gives its size (*width, *height, in pixels, both > 0).
 */
bool cm_jpeg_size(
    const unsigned char *p, size_t n, unsigned *width, unsigned *height);

#endif
