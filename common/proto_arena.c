/*
 * proto_arena.c: the arena every decoded message and every reply lives
 * in (proto.h), its frees, and the reply builders that allocate from it.
 * One free releases a message and everything in it.
 */
#include "proto.h"
#include "proto_int.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PR_CHUNK_SIZE 4096
/*
 * An arena's first chunk, header included, fits glibc's per-thread cache
 * (about a kilobyte); most messages need no more.  Later chunks are
 * PR_CHUNK_SIZE.
 */
#define PR_CHUNK_FIRST (1024 - sizeof(struct pr_chunk))
/* Bigger blocks get a chunk of their own so they never waste a chunk. */
#define PR_CHUNK_BIG (PR_CHUNK_SIZE / 4)

struct pr_chunk {
	struct pr_chunk *next;
	size_t used;
	size_t cap;
	max_align_t data[];
};

/* Chunks come from malloc: only what pr_arena_alloc hands out is zeroed. */
void *
pr_arena_take(struct pr_arena *a, size_t n, size_t align)
{
	struct pr_chunk *c = a->head;
	size_t at, cap;

	if (n == 0)
		n = 1; /* NULL means out of memory, so hand out a real byte */
	if (c != NULL) {
		at = (c->used + align - 1) & ~(align - 1);
		if (at <= c->cap && n <= c->cap - at) {
			c->used = at + n;
			return (unsigned char *)c->data + at;
		}
	}
	if (n > PR_CHUNK_BIG)
		cap = n;
	else if (a->head == NULL && n <= PR_CHUNK_FIRST)
		cap = PR_CHUNK_FIRST;
	else
		cap = PR_CHUNK_SIZE;
	if (cap > SIZE_MAX - sizeof(*c))
		return NULL;
	if ((c = malloc(sizeof(*c) + cap)) == NULL)
		return NULL;
	c->cap = cap;
	c->used = n;
	if (cap == n && a->head != NULL) {
		/* Link a private chunk behind the head, whose room stays
		 * usable. */
		c->next = a->head->next;
		a->head->next = c;
	} else {
		c->next = a->head;
		a->head = c;
	}
	return c->data;
}

void *
pr_arena_alloc(struct pr_arena *a, size_t n)
{
	void *p = pr_arena_take(a, n, _Alignof(max_align_t));

	if (p != NULL)
		memset(p, 0, n);
	return p;
}

char *
pr_arena_strndup(struct pr_arena *a, const char *s, size_t n)
{
	char *p;

	if (s == NULL)
		return NULL;
	n = strnlen(s, n);
	if (n == SIZE_MAX || (p = pr_arena_take(a, n + 1, 1)) == NULL)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
pr_arena_strdup(struct pr_arena *a, const char *s)
{
	return s == NULL ? NULL : pr_arena_strndup(a, s, strlen(s));
}

void
pr_arena_free(struct pr_arena *a)
{
	struct pr_chunk *c, *next;

	if (a == NULL)
		return;
	for (c = a->head; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	a->head = NULL;
}

void
pr_req_free(struct pr_req *r)
{
	if (r == NULL)
		return;
	pr_arena_free(&r->arena);
	memset(r, 0, sizeof(*r)); /* no pointer may outlive its arena */
}

void
pr_rep_free(struct pr_rep *r)
{
	if (r == NULL)
		return;
	pr_arena_free(&r->arena);
	memset(r, 0, sizeof(*r));
}

/* ---- reply building ------------------------------------------------------ */

const char *
pr_rep_strdup(struct pr_rep *r, const char *s)
{
	return pr_arena_strdup(&r->arena, s);
}

void *
pr_rep_alloc(struct pr_rep *r, size_t n)
{
	return pr_arena_alloc(&r->arena, n);
}

void
pr_rep_error(struct pr_rep *r, enum cm_err err, const char *fmt, ...)
{
	/* One spare byte shows whether the text ran past the limit. */
	size_t cap = CM_ERROR_MESSAGE_MAX + 2, cut;
	va_list ap;
	char *buf;
	int n;

	r->err = err;
	r->msg = NULL;
	if (fmt == NULL || (buf = pr_arena_alloc(&r->arena, cap)) == NULL)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > CM_ERROR_MESSAGE_MAX) {
		/* Cut before a split UTF-8 character: msg may end up in JSON.
		 */
		cut = CM_ERROR_MESSAGE_MAX;
		while (cut > CM_ERROR_MESSAGE_MAX - 3 &&
		       ((unsigned char)buf[cut] & 0xc0) == 0x80)
			cut--;
		buf[cut] = '\0';
	}
	r->msg = buf;
}
