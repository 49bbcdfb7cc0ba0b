/*
 * bbuf.c: a byte buffer that grows up to a bound (bbuf.h).
 */
#include "bbuf.h"

#include <stdlib.h>
#include <string.h>

size_t
cm_bbuf_write(char *data, size_t size, size_t n, void *arg)
{
	struct cm_bbuf *b = arg;
	size_t add = size * n;
	char *np;

	if (n != 0 && add / n != size) {
		b->over = true;
		return 0;
	}
	if (add > b->cap - b->len) {
		b->over = true;
		return 0;
	}
	if ((np = realloc(b->p, b->len + add + 1)) == NULL)
		return 0;
	b->p = np;
	memcpy(b->p + b->len, data, add);
	b->len += add;
	b->p[b->len] = '\0';
	return add;
}

void
cm_bbuf_free(struct cm_bbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = 0;
	b->over = false;
}
