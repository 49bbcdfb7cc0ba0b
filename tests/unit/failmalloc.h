/*
 * failmalloc.h: allocation failure injection for one unit test binary.
 *
 * Include it in exactly one file of a test: it defines malloc, calloc,
 * realloc and free for the whole process, so every allocation goes through
 * it, those made inside shared libraries (msgpack-c, jansson) included.
 * The real allocator is the sanitizer's when there is one (it keeps
 * checking every block) and glibc's otherwise.
 *
 * While armed on a thread, the allocations that thread makes are counted,
 * and the fail_at-th of them (1-based; 0: none) returns NULL, as does every
 * one after it when fail_after is set.  Every block handed out while armed
 * is remembered until it is freed, whenever and on whatever thread, so a
 * test can ask whether what was allocated under the hook is all gone:
 * fm_live() == 0.  At most FM_TRACK_MAX blocks are remembered; more while
 * armed fails the test (fm_overflow).
 */
#ifndef TESTS_FAILMALLOC_H
#define TESTS_FAILMALLOC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FM_INTERCEPTED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define FM_INTERCEPTED 1
#endif
#endif

/* The allocator underneath: a sanitizer's interceptors are named so on
 * Linux (malloc itself is only a weak alias, which this file overrides),
 * and glibc exports its own under these names. */
#ifdef FM_INTERCEPTED
#define FM_REAL(f) __interceptor_##f
#else
#define FM_REAL(f) __libc_##f
#endif
void *FM_REAL(malloc)(size_t n);
void *FM_REAL(calloc)(size_t n, size_t size);
void *FM_REAL(realloc)(void *p, size_t n);
void FM_REAL(free)(void *p);

#define FM_TRACK_MAX 4096

static _Thread_local bool fm_armed;
static _Thread_local unsigned long fm_count, fm_fail_at;
static _Thread_local bool fm_fail_after;
static void *fm_blocks[FM_TRACK_MAX];
static atomic_size_t fm_n_blocks;
static atomic_flag fm_lock = ATOMIC_FLAG_INIT;
static bool fm_overflow;

static void
fm_take(void)
{
	while (
	    atomic_flag_test_and_set_explicit(&fm_lock, memory_order_acquire))
		;
}

static void
fm_give(void)
{
	atomic_flag_clear_explicit(&fm_lock, memory_order_release);
}

/* Counts one allocation; true when it is to fail. */
static bool
fm_fails(void)
{
	if (!fm_armed)
		return false;
	fm_count++;
	return fm_fail_at != 0 && (fm_count == fm_fail_at ||
	                              (fm_fail_after && fm_count > fm_fail_at));
}

static void
fm_remember(void *p)
{
	if (!fm_armed || p == NULL)
		return;
	fm_take();
	if (fm_n_blocks < FM_TRACK_MAX)
		fm_blocks[fm_n_blocks++] = p;
	else
		fm_overflow = true;
	fm_give();
}

static void
fm_forget(void *p)
{
	size_t n;

	if (p == NULL || atomic_load(&fm_n_blocks) == 0)
		return;
	fm_take();
	n = fm_n_blocks;
	for (size_t i = 0; i < n; i++)
		if (fm_blocks[i] == p) {
			fm_blocks[i] = fm_blocks[n - 1];
			fm_n_blocks = n - 1;
			break;
		}
	fm_give();
}

void *malloc(size_t n);
void *calloc(size_t n, size_t size);
void *realloc(void *p, size_t n);
void free(void *p);

void *
malloc(size_t n)
{
	void *p = fm_fails() ? NULL : FM_REAL(malloc)(n);

	fm_remember(p);
	return p;
}

void *
calloc(size_t n, size_t size)
{
	void *p = fm_fails() ? NULL : FM_REAL(calloc)(n, size);

	fm_remember(p);
	return p;
}

void *
realloc(void *p, size_t n)
{
	void *q;

	if (fm_fails())
		return NULL; /* p stays the caller's, as it was */
	if ((q = FM_REAL(realloc)(p, n)) != NULL && q != p) {
		/* A block remembered before keeps being remembered. */
		bool had = false;

		fm_take();
		for (size_t i = 0; i < fm_n_blocks; i++)
			if (p != NULL && fm_blocks[i] == p) {
				fm_blocks[i] = q;
				had = true;
			}
		fm_give();
		if (!had)
			fm_remember(q);
	}
	return q;
}

void
free(void *p)
{
	fm_forget(p);
	FM_REAL(free)(p);
}

/* Arms this thread: its fail_at-th allocation from now fails (and every
 * later one too when after is set); 0 counts without failing. */
static inline void
fm_arm(unsigned long fail_at, bool after)
{
	fm_count = 0;
	fm_fail_at = fail_at;
	fm_fail_after = after;
	fm_armed = true;
}

/* Disarms this thread; returns the allocations it made while armed. */
static inline unsigned long
fm_disarm(void)
{
	fm_armed = false;
	return fm_count;
}

/* Blocks handed out while armed and not freed yet. */
static inline size_t
fm_live(void)
{
	return atomic_load(&fm_n_blocks);
}

#endif
