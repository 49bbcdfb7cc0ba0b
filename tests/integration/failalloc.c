/*
 * failalloc.c: a library preloaded (LD_PRELOAD) into a binary under test
 * to make its large allocations fail: every malloc, calloc and realloc of
 * at least FAILALLOC_MIN_BYTES bytes (the environment's; unset or 0: none)
 * returns NULL with ENOMEM, as it would once memory is short.  Smaller
 * ones go to glibc's allocator, so the process starts and runs as usual
 * up to the allocation the test aims at.
 *
 * Not for a sanitized build: a sanitizer's runtime must come first.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);

/* Read at each large request: the environment is there by then, and
 * getenv allocates nothing. */
static int
refused(size_t n)
{
	const char *v;
	char *end;
	unsigned long long min;

	if (n < 1024 || (v = getenv("FAILALLOC_MIN_BYTES")) == NULL)
		return 0;
	min = strtoull(v, &end, 10);
	if (*end != '\0' || min == 0 || n < min)
		return 0;
	errno = ENOMEM;
	return 1;
}

void *
malloc(size_t n)
{
	return refused(n) ? NULL : __libc_malloc(n);
}

void *
calloc(size_t n, size_t size)
{
	if (size != 0 && n > (size_t)-1 / size)
		return __libc_calloc(n, size); /* its own overflow check */
	return refused(n * size) ? NULL : __libc_calloc(n, size);
}

void *
realloc(void *p, size_t n)
{
	return refused(n) ? NULL : __libc_realloc(p, n);
}
