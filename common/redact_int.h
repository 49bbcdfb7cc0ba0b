/*
 * redact_int.h: what the redactor's two files share: redact.c (text: the
 * detectors, the mask and the emitter) and redact_json.c (JSON values and
 * results, whose strings go through the text redactor).  Nothing outside
 * the redactor includes it; everyone else sees redact.h.
 */
#ifndef CM_REDACT_INT_H
#define CM_REDACT_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "redact.h"

/* Longest normalised key suffix we compare ("authorization" is 13). */
#define RD_KEY_TAIL 16

/* Literal secrets prepared once per public call: lowercased, with a KMP
 * failure table, so walking a JSON value with many strings reuses them. */
struct rd_ctx {
	size_t n;
	struct {
		char *lit;
		size_t len;
		size_t *fail;
	} sec[CM_SECRETS_MAX];
};

/* Prepares s (NULL: none; literals shorter than CM_SECRET_MIN skipped)
 * into c.  Returns 0, or -1 when memory is short (c then holds nothing).
 * Release with cm_rd_ctx_fini. */
int cm_rd_ctx_init(struct rd_ctx *c, const struct cm_secrets *s);
void cm_rd_ctx_fini(struct rd_ctx *c);

/* The core of cm_redact_text with prepared secrets: a new NUL-terminated
 * text (the caller frees; NULL when memory is short), *outlen its length
 * (the text may hold NUL bytes).  O(len). */
char *cm_rd_text(
    const struct rd_ctx *c, const char *in, size_t len, size_t *outlen);

/* Normalises the identifier ending just before end into the last
 * RD_KEY_TAIL bytes of tail; returns how many it wrote.  *whole tells
 * whether that is the entire identifier. */
size_t cm_rd_key_tail(
    const char *s, size_t end, char tail[RD_KEY_TAIL], bool *whole);
/* True when the n normalised bytes in tail end with word. */
bool cm_rd_tail_is(const char tail[RD_KEY_TAIL], size_t n, const char *word);

#endif
