#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "ids.h"

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The 48-bit timestamp of a UUIDv7: its first 12 hex digits. */
static int64_t
uuid_ms(const char *u)
{
	int64_t ms = 0;

	for (int i = 0; i < 13; i++) {
		if (i == 8)
			continue;
		ms = ms * 16 + hexval(u[i]);
	}
	return ms;
}

Test(ids, uuid7_shape_version_variant)
{
	char u[CM_UUID_LEN];

	for (int i = 0; i < 1000; i++) {
		cm_uuid7(u);
		cr_assert_eq(strlen(u), 36);
		for (int j = 0; j < 36; j++) {
			if (j == 8 || j == 13 || j == 18 || j == 23)
				cr_assert_eq(u[j], '-', "%s", u);
			else
				cr_assert_geq(hexval(u[j]), 0,
				    "lowercase hex only: %s", u);
		}
		cr_assert_eq(u[14], '7', "version nibble: %s", u);
		/* Variant 10xx: the 17th hex digit is 8, 9, a or b. */
		cr_assert(strchr("89ab", u[19]) != NULL, "variant: %s", u);
		cr_assert(cm_uuid_valid(u));
	}
}

Test(ids, uuid7_timestamp_is_now)
{
	char u[CM_UUID_LEN];
	int64_t before = cm_now_ms();
	int64_t ts;

	cm_uuid7(u);
	ts = uuid_ms(u);
	cr_assert_geq(ts, before);
	/* Borrowing ahead happens only after 2048 ids in one millisecond. */
	cr_assert_leq(ts, cm_now_ms() + 1);
}

Test(ids, uuid7_strictly_increasing_within_process)
{
	char prev[CM_UUID_LEN], cur[CM_UUID_LEN];

	cm_uuid7(prev);
	for (int i = 0; i < 20000; i++) {
		cm_uuid7(cur);
		cr_assert_leq(uuid_ms(prev), uuid_ms(cur));
		cr_assert_lt(strcmp(prev, cur), 0, "%s !< %s", prev, cur);
		memcpy(prev, cur, sizeof cur);
	}
}

static int
cmp_uuid(const void *a, const void *b)
{
	return strcmp(a, b);
}

Test(ids, uuid7_unique_over_10000)
{
	enum { N = 10000 };
	char(*u)[CM_UUID_LEN] = calloc(N, CM_UUID_LEN);

	cr_assert_not_null(u);
	for (int i = 0; i < N; i++)
		cm_uuid7(u[i]);
	qsort(u, N, CM_UUID_LEN, cmp_uuid);
	for (int i = 1; i < N; i++)
		cr_assert_neq(strcmp(u[i - 1], u[i]), 0, "dup %s", u[i]);
	free(u);
}

#define THREADS 4
#define PER_THREAD 2000

static void *
gen_thread(void *arg)
{
	char(*out)[CM_UUID_LEN] = arg;

	for (int i = 0; i < PER_THREAD; i++)
		cm_uuid7(out[i]);
	return NULL;
}

Test(ids, uuid7_unique_and_ordered_across_threads)
{
	char(*u)[CM_UUID_LEN] = calloc(THREADS * PER_THREAD, CM_UUID_LEN);
	pthread_t t[THREADS];

	cr_assert_not_null(u);
	for (int i = 0; i < THREADS; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, gen_thread,
		                 u + (size_t)i * PER_THREAD),
		    0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	/* Each thread's own sequence is increasing. */
	for (int i = 0; i < THREADS; i++)
		for (int j = 1; j < PER_THREAD; j++)
			cr_assert_lt(strcmp(u[i * PER_THREAD + j - 1],
			                 u[i * PER_THREAD + j]),
			    0);
	qsort(u, THREADS * PER_THREAD, CM_UUID_LEN, cmp_uuid);
	for (int i = 1; i < THREADS * PER_THREAD; i++)
		cr_assert_neq(strcmp(u[i - 1], u[i]), 0);
	free(u);
}

Test(ids, uuid_valid_accepts)
{
	cr_assert(cm_uuid_valid("017f22e2-79b0-7cc3-98c4-dc0c0c07398f"));
	cr_assert(cm_uuid_valid("017F22E2-79B0-7CC3-98C4-DC0C0C07398F"));
	cr_assert(cm_uuid_valid("00000000-0000-0000-0000-000000000000"));
	/* Any version: ids from other systems are still UUIDs. */
	cr_assert(cm_uuid_valid("f81d4fae-7dec-11d0-a765-00a0c91e6bf6"));
}

Test(ids, uuid_valid_rejects)
{
	static const char *const bad[] = {
	    "",
	    "017f22e2-79b0-7cc3-98c4-dc0c0c07398",   /* 35 */
	    "017f22e2-79b0-7cc3-98c4-dc0c0c07398f0", /* 37 */
	    "017f22e2-79b0-7cc3-98c4-dc0c0c07398g",  /* not hex */
	    "017f22e279b0-7cc3-98c4-dc0c0c07398f0",  /* hyphen moved */
	    "017f22e2_79b0_7cc3_98c4_dc0c0c07398f",
	    "017f22e2-79b0-7cc3-98c4dc0c0c07398f-",
	    "{017f22e2-79b0-7cc3-98c4-dc0c0c0739}",
	    "017f22e2-79b0-7cc3-98c4-dc0c0c07398f ",
	    " 017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
	    "017f22e279b07cc398c4dc0c0c07398f",
	};

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_not(cm_uuid_valid(bad[i]), "accepted '%s'", bad[i]);
	cr_assert_not(cm_uuid_valid(NULL));
}

Test(ids, uuid_valid_stops_at_embedded_nul)
{
	char s[40] = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f";

	s[20] = '\0';
	cr_assert_not(cm_uuid_valid(s));
}

Test(ids, random_bytes_fill_and_differ)
{
	unsigned char a[4096], b[4096];
	size_t zeros = 0;

	memset(a, 0, sizeof a);
	memset(b, 0, sizeof b);
	/* Above 256 bytes getrandom may return short; all must be filled. */
	cm_random_bytes(a, sizeof a);
	cm_random_bytes(b, sizeof b);
	cr_assert_neq(memcmp(a, b, sizeof a), 0);
	for (size_t i = 0; i < sizeof a; i++)
		zeros += a[i] == 0;
	/* Expected 16; 64 zero bytes out of 4096 is astronomically rare. */
	cr_assert_lt(zeros, 64, "%zu zero bytes", zeros);
	/* The last bytes, written by a possible second read, are set too. */
	zeros = 0;
	for (size_t i = sizeof a - 64; i < sizeof a; i++)
		zeros += a[i] == 0;
	cr_assert_lt(zeros, 16);
}

Test(ids, random_bytes_zero_length)
{
	unsigned char c = 0x5a;

	cm_random_bytes(&c, 0);
	cr_assert_eq(c, 0x5a);
}

/*
 * Ids take their random bits from a pool.  A forked child must not reuse
 * the pool it inherited, or parent and child would mint ids that differ
 * only in time and counter.
 */
Test(ids, uuid7_forked_child_draws_its_own_random_bits)
{
	char parent[CM_UUID_LEN], child[CM_UUID_LEN];
	int fds[2];
	pid_t pid;
	int status;

	cm_uuid7(parent); /* fills the pool */
	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		cm_uuid7(child);
		_exit(write(fds[1], child, sizeof(child)) == sizeof(child) ? 0
		                                                           : 1);
	}
	close(fds[1]);
	cm_uuid7(parent);
	cr_assert_eq(
	    read(fds[0], child, sizeof(child)), (ssize_t)sizeof(child));
	close(fds[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Characters 19 on: the variant nibble and 62 random bits. */
	cr_assert_str_neq(
	    parent + 19, child + 19, "parent %s child %s", parent, child);
}
