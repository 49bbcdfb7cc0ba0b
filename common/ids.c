#include "ids.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>

#include "clock.h"
#include "limits.h"
#include "log.h"

void
cm_random_bytes(void *buf, size_t len)
{
	unsigned char *p = buf;

	while (len > 0) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			cm_fatalx("getrandom: %s", strerror(errno));
		}
		/* Reads above 256 bytes may be short; keep going. */
		p += n;
		len -= (size_t)n;
	}
}

/*
 * RFC 9562 section 6.2, method 1: a 12-bit counter in rand_a makes ids
 * from one process strictly increasing even within one millisecond or when
 * the wall clock steps back.  The counter restarts from a random value
 * below 2048 each new millisecond, leaving at least 2048 increments; on
 * overflow the timestamp borrows the next millisecond, as the RFC allows.
 * The other 62 bits stay random, so processes (and forked children that
 * inherit this state) do not collide.
 */
static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t ids_last_ms;
static unsigned ids_counter;

/*
 * The random bits come from a pool refilled by one getrandom call every
 * IDS_POOL / 10 ids: a system call per id cost more than the rest of the
 * id.  Ids are not secrets (tokens take cm_random_bytes directly).  A
 * forked child empties its pool, so it never repeats its parent's bits.
 */
#define IDS_POOL 320
static unsigned char ids_pool[IDS_POOL];
static size_t ids_pool_left;
static pthread_once_t ids_once = PTHREAD_ONCE_INIT;

/* fork() holds the lock, so the child sees no half-taken pool. */
static void
ids_fork_prepare(void)
{
	pthread_mutex_lock(&ids_lock);
}

static void
ids_fork_parent(void)
{
	pthread_mutex_unlock(&ids_lock);
}

static void
ids_fork_child(void)
{
	ids_pool_left = 0;
	pthread_mutex_unlock(&ids_lock);
}

static void
ids_init(void)
{
	pthread_atfork(ids_fork_prepare, ids_fork_parent, ids_fork_child);
}

/* Takes n random bytes from the pool.  Call locked. */
static void
ids_take(unsigned char *out, size_t n)
{
	if (ids_pool_left < n) {
		cm_random_bytes(ids_pool, sizeof(ids_pool));
		ids_pool_left = sizeof(ids_pool);
	}
	memcpy(out, ids_pool + sizeof(ids_pool) - ids_pool_left, n);
	/* Bits handed out once are never handed out again. */
	memset(ids_pool + sizeof(ids_pool) - ids_pool_left, 0, n);
	ids_pool_left -= n;
}

#define IDS_COUNTER_MAX 0xfffu

void
cm_uuid7(char out[CM_UUID_LEN])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[16];
	unsigned char rnd[10];
	unsigned seed;
	int64_t now = cm_now_ms();
	uint64_t ts;
	unsigned counter;
	size_t o = 0;

	pthread_once(&ids_once, ids_init);
	pthread_mutex_lock(&ids_lock);
	ids_take(rnd, sizeof(rnd));
	seed = ((unsigned)rnd[8] << 8 | rnd[9]) & 0x7ffu;
	if (now > ids_last_ms) {
		ids_last_ms = now;
		ids_counter = seed;
	} else if (++ids_counter > IDS_COUNTER_MAX) {
		ids_last_ms++;
		ids_counter = seed;
	}
	ts = (uint64_t)ids_last_ms;
	counter = ids_counter;
	pthread_mutex_unlock(&ids_lock);

	b[0] = (unsigned char)(ts >> 40);
	b[1] = (unsigned char)(ts >> 32);
	b[2] = (unsigned char)(ts >> 24);
	b[3] = (unsigned char)(ts >> 16);
	b[4] = (unsigned char)(ts >> 8);
	b[5] = (unsigned char)ts;
	b[6] = (unsigned char)(0x70u | (counter >> 8));
	b[7] = (unsigned char)(counter & 0xffu);
	b[8] = (unsigned char)(0x80u | (rnd[0] & 0x3fu));
	memcpy(&b[9], &rnd[1], 7);

	for (size_t i = 0; i < sizeof b; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[b[i] >> 4];
		out[o++] = hex[b[i] & 0xfu];
	}
	out[o] = '\0';
}

static int
ids_is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

int
cm_uuid_valid(const char *s)
{
	size_t i;

	if (s == NULL)
		return 0;
	/* RFC 9562: hex digits are case-insensitive on input. */
	for (i = 0; i < CM_UUID_LEN - 1; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return 0;
		} else if (!ids_is_hex(s[i])) {
			/* Also stops at a NUL before 36 characters. */
			return 0;
		}
	}
	return s[i] == '\0';
}

/* 1..max of [A-Za-z0-9._-], not starting with '.'. */
static int
ids_name_ok(const char *s, size_t n, size_t max)
{
	if (s == NULL || n == 0 || n > max || s[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		        (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
		        ch == '.'))
			return 0;
	}
	return 1;
}

int
cm_artifact_name_valid(const char *s, size_t n)
{
	return ids_name_ok(s, n, CM_ID_MAX);
}

int
cm_file_name_valid(const char *s, size_t n)
{
	return ids_name_ok(s, n, CM_FILE_NAME_MAX);
}
