/*
 * fuzz_proto.c: libFuzzer target for the proto.h decoders.
 *
 * Arbitrary bytes go to pr_req_decode, pr_rep_decode, pr_pub_decode
 * (with and without a task to decode into), pr_beat_decode (the store's
 * beat on its feed) and pr_frame_decode (a live view's frame, as the api
 * takes it off an actor's socket).
 * Whatever a decoder accepts must re-encode (it met every bound on the way
 * in) and decode again to an identical struct; anything else aborts.
 *
 *   clang -fsanitize=fuzzer,address,undefined -I common \
 *       tests/fuzz/fuzz_proto.c common/proto.c common/errors.c -lmsgpackc
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool
str_eq(const char *a, const char *b)
{
	return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

static bool
strlist_eq(const struct pr_strlist *a, const struct pr_strlist *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (!str_eq(a->v[i], b->v[i]))
			return false;
	return true;
}

static bool
bin_eq(const struct pr_bin *a, const struct pr_bin *b)
{
	return a->n == b->n && (a->n == 0 || memcmp(a->p, b->p, a->n) == 0);
}

/* Field comparisons, generated from the same X-macros as the codec. */
#define EQ_PR_STR(a, b) str_eq(a, b)
#define EQ_PR_INT(a, b) ((a) == (b))
#define EQ_PR_BOOL(a, b) ((a) == (b))
#define EQ_PR_STRLIST(a, b) strlist_eq(&(a), &(b))
#define EQ_PR_BIN(a, b) bin_eq(&(a), &(b))

#define REC_EQ_FIELD(m, t, max)  \
	if (!EQ_##t(a->m, b->m)) \
		return false;
#define REC_EQ_FN(tag, list, fields)                            \
	static bool eq_##tag(                                   \
	    const struct pr_##tag *a, const struct pr_##tag *b) \
	{                                                       \
		fields(REC_EQ_FIELD) return true;               \
	}
PR_RECORDS(REC_EQ_FN)

static bool
req_eq(const struct pr_req *a, const struct pr_req *b)
{
	if (a->op != b->op)
		return false;
#define REQ_EQ_FIELD(e, m, t, max) REC_EQ_FIELD(m, t, max)
	PR_REQ_FIELDS(REQ_EQ_FIELD)
	return true;
}

static bool
rep_eq(const struct pr_rep *a, const struct pr_rep *b)
{
	if (a->err != b->err || !str_eq(a->msg, b->msg) ||
	    a->created != b->created ||
	    a->cancel_requested != b->cancel_requested ||
	    a->close_requested != b->close_requested ||
	    !str_eq(a->args, b->args) || a->count != b->count ||
	    a->feed_serial != b->feed_serial)
		return false;
#define REP_LIST_EQ(tag, list, fields)                   \
	if (a->n_##list != b->n_##list)                  \
		return false;                            \
	for (size_t i = 0; i < a->n_##list; i++)         \
		if (!eq_##tag(&a->list[i], &b->list[i])) \
			return false;
	PR_RECORDS(REP_LIST_EQ)
	return true;
}

_Noreturn static void
die(const char *what, const char *err)
{
	fprintf(stderr, "fuzz_proto: %s: %s\n", what, err);
	abort();
}

static void
fuzz_req(const uint8_t *data, size_t size)
{
	struct pr_req a, b;
	char err[256], *buf;
	size_t len;

	if (pr_req_decode(data, size, &a, err, sizeof(err)) != 0)
		return;
	if (pr_req_encode(&a, &buf, &len) != 0)
		die("request decoded but does not encode", pr_op_name(a.op));
	if (len > size)
		die("request grew on re-encoding", pr_op_name(a.op));
	if (pr_req_decode(buf, len, &b, err, sizeof(err)) != 0)
		die("re-encoded request does not decode", err);
	if (!req_eq(&a, &b))
		die("request round trip differs", pr_op_name(a.op));
	free(buf);
	pr_req_free(&a);
	pr_req_free(&b);
}

static void
fuzz_rep(const uint8_t *data, size_t size)
{
	struct pr_rep a, b;
	char err[256], *buf;
	size_t len;

	if (pr_rep_decode(data, size, &a, err, sizeof(err)) != 0)
		return;
	if (pr_rep_encode(&a, &buf, &len) != 0)
		die("reply decoded but does not encode", cm_err_code(a.err));
	if (len > size)
		die("reply grew on re-encoding", cm_err_code(a.err));
	if (pr_rep_decode(buf, len, &b, err, sizeof(err)) != 0)
		die("re-encoded reply does not decode", err);
	if (!rep_eq(&a, &b))
		die("reply round trip differs", cm_err_code(a.err));
	free(buf);
	pr_rep_free(&a);
	pr_rep_free(&b);
}

/* What decodes with a task to decode into decodes without one, to the
 * same event. */
static void
fuzz_pub(const uint8_t *data, size_t size)
{
	struct pr_arena arena = {0};
	struct pr_event a, b, c;
	struct pr_task ta, tb;
	char err[256], *buf;
	size_t len;

	if (pr_pub_decode(data, size, &a, &ta, &arena, err, sizeof(err)) != 0) {
		pr_arena_free(&arena);
		return;
	}
	if (pr_pub_decode(data, size, &c, NULL, &arena, err, sizeof(err)) != 0)
		die("an event with its task does not decode without it", err);
	if (!eq_event(&a, &c))
		die("the event decodes differently without its task",
		    a.space_id);
	if (pr_pub_encode(&a, ta.task_id ? &ta : NULL, &buf, &len) != 0)
		die("event decoded but does not encode", a.space_id);
	if (pr_pub_decode(buf, len, &b, &tb, &arena, err, sizeof(err)) != 0)
		die("re-encoded event does not decode", err);
	if (!eq_event(&a, &b))
		die("event round trip differs", a.space_id);
	if (ta.task_id ? tb.task_id == NULL || !eq_task(&ta, &tb)
	               : tb.task_id != NULL)
		die("the event's task round trip differs", a.space_id);
	free(buf);
	pr_arena_free(&arena);
}

/* A beat that decodes has a serial of 0 or more, and round-trips. */
static void
fuzz_beat(const uint8_t *data, size_t size)
{
	int64_t serial, again;
	char *buf;
	size_t len;

	if (pr_beat_decode(data, size, &serial) != 0)
		return;
	if (serial < 0)
		die("a beat decodes to a negative serial", "");
	if (pr_beat_encode(serial, &buf, &len) != 0)
		die("a beat decoded but does not encode", "");
	if (pr_beat_decode(buf, len, &again) != 0 || again != serial)
		die("a beat's round trip differs", "");
	free(buf);
}

/* A live frame that decodes is one the decoder promises (positive seq,
 * width, height and at; a JPEG, at most CM_LIVE_FRAME_MAX), and it
 * round-trips. */
static void
fuzz_frame(const uint8_t *data, size_t size)
{
	struct pr_arena arena = {0};
	struct pr_frame a, b;
	char err[256], *buf;
	size_t len;

	if (pr_frame_decode(data, size, &a, &arena, err, sizeof(err)) != 0) {
		pr_arena_free(&arena);
		return;
	}
	if (a.seq < 1 || a.width < 1 || a.height < 1 || a.at < 1 ||
	    a.jpeg.n == 0 || a.jpeg.n > CM_LIVE_FRAME_MAX)
		die("a frame decoded outside its bounds", "frame");
	if (pr_frame_encode(&a, &buf, &len) != 0)
		die("frame decoded but does not encode", "frame");
	if (pr_frame_decode(buf, len, &b, &arena, err, sizeof(err)) != 0)
		die("re-encoded frame does not decode", err);
	if (!eq_frame(&a, &b))
		die("frame round trip differs", "frame");
	free(buf);
	pr_arena_free(&arena);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_req(data, size);
	fuzz_rep(data, size);
	fuzz_pub(data, size);
	fuzz_beat(data, size);
	fuzz_frame(data, size);
	return 0;
}
