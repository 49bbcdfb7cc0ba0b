/*
 * test_proto.c: the proto.h codec on every op, every record and every bound.
 *
 * Raw messages are built with a small msgpack writer of our own (struct mp)
 * rather than with the codec under test or msgpack-c, so a test can send
 * what no correct encoder would: wrong types, oversize strings, duplicate
 * keys, nil, odd integer widths.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

/* ---- a raw msgpack writer ------------------------------------------------ */

struct mp {
	unsigned char *b;
	size_t n, cap;
};

static void
mp_put(struct mp *m, const void *p, size_t n)
{
	if (n == 0)
		return;
	if (m->n + n > m->cap) {
		m->cap = (m->n + n) * 2 + 64;
		m->b = realloc(m->b, m->cap);
		cr_assert_not_null(m->b);
	}
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

static void
mp_byte(struct mp *m, unsigned c)
{
	unsigned char b = (unsigned char)c;

	mp_put(m, &b, 1);
}

static void
mp_be(struct mp *m, uint64_t v, int w)
{
	for (int i = w - 1; i >= 0; i--)
		mp_byte(m, (unsigned)(v >> (8 * i)) & 0xff);
}

/* fix, 16-bit and 32-bit headers of a map, array or str. */
static void
mp_hdr(struct mp *m, size_t n, unsigned fix, size_t fixmax, unsigned b16)
{
	if (n <= fixmax) {
		mp_byte(m, fix | (unsigned)n);
	} else if (n <= 0xffff) {
		mp_byte(m, b16);
		mp_be(m, n, 2);
	} else {
		mp_byte(m, b16 + 1);
		mp_be(m, n, 4);
	}
}

static void
mp_map(struct mp *m, size_t n)
{
	mp_hdr(m, n, 0x80, 15, 0xde);
}

static void
mp_arr(struct mp *m, size_t n)
{
	mp_hdr(m, n, 0x90, 15, 0xdc);
}

static void
mp_strn(struct mp *m, const char *s, size_t n)
{
	if (n > 31 && n < 256) {
		mp_byte(m, 0xd9);
		mp_byte(m, (unsigned)n);
	} else {
		mp_hdr(m, n, 0xa0, 31, 0xda);
	}
	mp_put(m, s, n);
}

static void
mp_str(struct mp *m, const char *s)
{
	mp_strn(m, s, strlen(s));
}

/* Small values as fixints; the rest in full 64 bits, which is legal too. */
static void
mp_int(struct mp *m, int64_t v)
{
	if (v >= 0 && v < 128) {
		mp_byte(m, (unsigned)v);
	} else if (v < 0 && v >= -32) {
		mp_byte(m, 0xe0 | (unsigned)(v & 0x1f));
	} else if (v >= 0) {
		mp_byte(m, 0xcf);
		mp_be(m, (uint64_t)v, 8);
	} else {
		mp_byte(m, 0xd3);
		mp_be(m, (uint64_t)v, 8);
	}
}

static void
mp_bool(struct mp *m, bool v)
{
	mp_byte(m, v ? 0xc3 : 0xc2);
}

static void
mp_nil(struct mp *m)
{
	mp_byte(m, 0xc0);
}

static void
mp_strlist(struct mp *m, const struct pr_strlist *l)
{
	mp_arr(m, l->n);
	for (size_t i = 0; i < l->n; i++)
		mp_str(m, l->v[i]);
}

static void
mp_bin(struct mp *m, const struct pr_bin *b)
{
	if (b->n < 256) {
		mp_byte(m, 0xc4);
		mp_be(m, b->n, 1);
	} else if (b->n <= 0xffff) {
		mp_byte(m, 0xc5);
		mp_be(m, b->n, 2);
	} else {
		mp_byte(m, 0xc6);
		mp_be(m, b->n, 4);
	}
	mp_put(m, b->p, b->n);
}

static void
mp_kv(struct mp *m, const char *k, const char *v)
{
	mp_str(m, k);
	mp_str(m, v);
}

static void
mp_free(struct mp *m)
{
	free(m->b);
	memset(m, 0, sizeof(*m));
}

/* ---- the ops table, seen from outside ------------------------------------ */

static const struct {
	const char *name;
	bool write;
	uint64_t req, opt;
} ops[PR_OP__COUNT] = {
#define OP_ROW(e, n, w, rq, op) [PR_OP_##e] = {n, w, rq, op},
    PR_OPS(OP_ROW)
#undef OP_ROW
};

static const char *const field_names[PR_F__COUNT] = {
#define F_NAME(e, m, t, max) [PR_F_##e] = #m,
    PR_REQ_FIELDS(F_NAME)
#undef F_NAME
};

/* Writes a request the way the spec says, fields in mask only. */
#define RAW_PR_STR(m, x) mp_str(m, x)
#define RAW_PR_INT(m, x) mp_int(m, x)
#define RAW_PR_BOOL(m, x) mp_bool(m, x)
#define RAW_PR_STRLIST(m, x) mp_strlist(m, &(x))
#define RAW_PR_BIN(m, x) mp_bin(m, &(x))
static void
mp_req(struct mp *m, const struct pr_req *r, uint64_t mask)
{
	mp_map(m, 1 + (size_t)__builtin_popcountll(mask));
	mp_kv(m, "op", ops[r->op].name);
#define RAW_REQ(e, f, t, max)     \
	if (mask & PRM(e)) {      \
		mp_str(m, #f);    \
		RAW_##t(m, r->f); \
	}
	PR_REQ_FIELDS(RAW_REQ)
#undef RAW_REQ
}

/* ---- comparisons, generated from the X-macros ---------------------------- */

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
	    !str_eq(a->args, b->args) || a->count != b->count)
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

/* ---- fillers --------------------------------------------------------------
 */

static const char *items3[] = {"browser.navigate", "page.read", "x"};
/* Bytes no string may hold: a NUL and a PNG's signature. */
static const unsigned char bytes9[] = {
    0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0};

/* Distinct per field, covering fixint, negative and full-width forms. */
static int64_t
int_value(int k)
{
	switch (k % 4) {
	case 0:
		return INT64_MAX - k;
	case 1:
		return INT64_MIN + k;
	case 2:
		return -k - 1;
	default:
		return 100000 + k;
	}
}

#define FILL_PR_STR(x, m, k) x = #m "-v"
#define FILL_PR_INT(x, m, k) x = int_value(k)
#define FILL_PR_BOOL(x, m, k) x = true
#define FILL_PR_STRLIST(x, m, k) \
	x = (struct pr_strlist)  \
	{                        \
		3, items3        \
	}
#define FILL_PR_BIN(x, m, k) \
	x = (struct pr_bin)  \
	{                    \
		9, bytes9    \
	}

static void
req_fill(struct pr_req *r, enum pr_op op, uint64_t mask)
{
	memset(r, 0, sizeof(*r));
	r->op = op;
#define FILL_REQ(e, m, t, max) \
	if (mask & PRM(e))     \
		FILL_##t(r->m, m, PR_F_##e);
	PR_REQ_FIELDS(FILL_REQ)
#undef FILL_REQ
}

static const char *
rep_fmt(struct pr_rep *r, const char *field, size_t i)
{
	char *s = pr_rep_alloc(r, 64);

	cr_assert_not_null(s);
	snprintf(s, 64, "%s-%zu", field, i);
	return s;
}

/* Record i of n: strings "<field>-<i>", every second bool set. */
#define RFILL_PR_STR(x, m, i) x = rep_fmt(r, #m, i)
#define RFILL_PR_INT(x, m, i) x = int_value((int)(i) + __LINE__)
#define RFILL_PR_BOOL(x, m, i) x = (i) % 2 == 0
#define RFILL_PR_STRLIST(x, m, i)   \
	x = (struct pr_strlist)     \
	{                           \
		1 + (i) % 3, items3 \
	}
#define RFILL_PR_BIN(x, m, i)       \
	x = (struct pr_bin)         \
	{                           \
		1 + (i) % 9, bytes9 \
	}
#define RFILL_FIELD(m, t, max) RFILL_##t(x->m, m, i);
static void
rep_fill(struct pr_rep *r, size_t n)
{
	memset(r, 0, sizeof(*r));
	r->err = CM_E_CONFLICT;
	r->msg = "conflict: space s1 is busy";
	r->created = r->cancel_requested = r->close_requested = true;
	r->args = "{\"url\":\"https://example.com\"}";
	r->count = -42;
#define RFILL_LIST(tag, list, fields)                    \
	r->list = pr_rep_alloc(r, n * sizeof(*r->list)); \
	cr_assert_not_null(r->list);                     \
	r->n_##list = n;                                 \
	for (size_t i = 0; i < n; i++) {                 \
		struct pr_##tag *x = &r->list[i];        \
		fields(RFILL_FIELD)                      \
	}
	PR_RECORDS(RFILL_LIST)
#undef RFILL_LIST
}

static void
event_fill(struct pr_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->space_id = "0190b0b2-7c1e-7000-8000-000000000002";
	ev->workspace_id = "0190b0b2-7c1e-7000-8000-000000000001";
	ev->task_id = "t1";
	ev->sequence = 77;
	ev->kind = "task.succeeded";
	ev->payload = "{\"ok\":true}";
	ev->created_at = 1700000000000;
}

/* The row of the task event_fill's event ends. */
static void
task_fill(struct pr_task *t)
{
	memset(t, 0, sizeof(*t));
	t->task_id = "t1";
	t->space_id = "0190b0b2-7c1e-7000-8000-000000000002";
	t->workspace_id = "0190b0b2-7c1e-7000-8000-000000000001";
	t->request_id = "req-1";
	t->capability = "browser.snapshot";
	t->arg_keys.v = items3;
	t->arg_keys.n = 3;
	t->timeout_ms = 30000;
	t->status = "completed";
	t->result = "{\"title\":\"Docs\"}";
	t->created_at = 1700000000000;
	t->started_at = 1700000000005;
	t->finished_at = t->updated_at = 1700000000042;
}

/* ---- decode helpers -------------------------------------------------------
 */

static char err[256];

static bool
all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i] != 0)
			return false;
	return true;
}

static int
dec_req(const void *b, size_t n, struct pr_req *r)
{
	err[0] = '\0';
	memset(r, 0xa5, sizeof(*r)); /* the decoder must treat *r as output */
	return pr_req_decode(b, n, r, err, sizeof(err));
}

static int
dec_rep(const void *b, size_t n, struct pr_rep *r)
{
	err[0] = '\0';
	memset(r, 0xa5, sizeof(*r));
	return pr_rep_decode(b, n, r, err, sizeof(err));
}

/* A rejection gives a reason and leaves nothing behind. */
static void
req_rejects(const void *b, size_t n, const char *why)
{
	struct pr_req r;

	cr_expect_eq(dec_req(b, n, &r), -1, "%s: accepted", why);
	cr_expect_neq(err[0], '\0', "%s: no reason given", why);
	cr_expect(all_zero(&r, sizeof(r)), "%s: left data behind", why);
	pr_req_free(&r);
}

static void
rep_rejects(const void *b, size_t n, const char *why)
{
	struct pr_rep r;

	cr_expect_eq(dec_rep(b, n, &r), -1, "%s: accepted", why);
	cr_expect_neq(err[0], '\0', "%s: no reason given", why);
	cr_expect(all_zero(&r, sizeof(r)), "%s: left data behind", why);
	pr_rep_free(&r);
}

/* Rejected whether the task is wanted or dropped. */
static void
pub_rejects(const void *b, size_t n, const char *why)
{
	struct pr_arena a = {0};
	struct pr_event ev;
	struct pr_task t;

	memset(&ev, 0xa5, sizeof(ev));
	err[0] = '\0';
	cr_expect_eq(pr_pub_decode(b, n, &ev, NULL, &a, err, sizeof(err)), -1,
	    "%s: accepted", why);
	cr_expect_neq(err[0], '\0', "%s: no reason given", why);
	cr_expect(all_zero(&ev, sizeof(ev)), "%s: left data behind", why);
	memset(&ev, 0xa5, sizeof(ev));
	memset(&t, 0xa5, sizeof(t));
	cr_expect_eq(pr_pub_decode(b, n, &ev, &t, &a, err, sizeof(err)), -1,
	    "%s: accepted with its task", why);
	cr_expect(all_zero(&ev, sizeof(ev)), "%s: left an event behind", why);
	cr_expect(all_zero(&t, sizeof(t)), "%s: left a task behind", why);
	pr_arena_free(&a);
}

static void
mp_req_rejects(struct mp *m, const char *why)
{
	req_rejects(m->b, m->n, why);
	mp_free(m);
}

static void
mp_rep_rejects(struct mp *m, const char *why)
{
	rep_rejects(m->b, m->n, why);
	mp_free(m);
}

static char *
xstr(size_t n)
{
	char *s = malloc(n + 1);

	cr_assert_not_null(s);
	memset(s, 'x', n);
	s[n] = '\0';
	return s;
}

/* ---- round trips ----------------------------------------------------------
 */

Test(proto, op_table)
{
	for (int op = 0; op < PR_OP__COUNT; op++) {
		cr_expect_str_eq(pr_op_name((enum pr_op)op), ops[op].name);
		cr_expect_eq(pr_op_is_write((enum pr_op)op), ops[op].write);
		/* The store dedups writes by op_id: a re-sent write is answered
		 * from its memory, never applied twice. */
		if (ops[op].write)
			cr_expect(ops[op].req & PRM(OP_ID), "%s", ops[op].name);
	}
	cr_expect_str_eq(pr_op_name(PR_OP__COUNT), "unknown");
	cr_expect_str_eq(pr_op_name((enum pr_op) - 1), "unknown");
	cr_expect_not(pr_op_is_write(PR_OP__COUNT));
	cr_expect(pr_op_is_write(PR_OP_TASK_SUBMIT));
	cr_expect_not(pr_op_is_write(PR_OP_TASK_GET));
}

Test(proto, req_roundtrip_every_op_all_fields)
{
	for (int op = 0; op < PR_OP__COUNT; op++) {
		uint64_t mask = ops[op].req | ops[op].opt;
		struct pr_req in, out;
		struct mp m = {0};
		char *buf;
		size_t len;

		req_fill(&in, (enum pr_op)op, mask);
		cr_assert_eq(
		    pr_req_encode(&in, &buf, &len), 0, "%s", ops[op].name);
		cr_assert_eq(
		    dec_req(buf, len, &out), 0, "%s: %s", ops[op].name, err);
		memset(buf, 0, len); /* out must own its strings */
		free(buf);
		cr_expect(req_eq(&in, &out), "%s differs", ops[op].name);
		pr_req_free(&out);

		/* The same message from an independent writer decodes too. */
		mp_req(&m, &in, mask);
		cr_assert_eq(dec_req(m.b, m.n, &out), 0, "%s raw: %s",
		    ops[op].name, err);
		cr_expect(req_eq(&in, &out), "%s raw differs", ops[op].name);
		pr_req_free(&out);
		mp_free(&m);
	}
}

Test(proto, req_required_only_and_op_anywhere)
{
	struct pr_req r;
	struct mp m = {0};

	/* "op" last, after the fields it governs. */
	mp_map(&m, 3);
	mp_kv(&m, "space_id", "s1");
	mp_kv(&m, "workspace_id", "w1");
	mp_kv(&m, "op", "space.get");
	cr_assert_eq(dec_req(m.b, m.n, &r), 0, "%s", err);
	cr_expect_eq(r.op, PR_OP_SPACE_GET);
	cr_expect_str_eq(r.space_id, "s1");
	cr_expect_str_eq(r.workspace_id, "w1");
	cr_expect_null(r.task_id);
	pr_req_free(&r);
	mp_free(&m);
}

Test(proto, rep_roundtrip_every_record_list)
{
	struct pr_rep in, out;
	char *buf;
	size_t len;

	rep_fill(&in, 3);
	cr_assert_eq(pr_rep_encode(&in, &buf, &len), 0);
	cr_assert_eq(dec_rep(buf, len, &out), 0, "%s", err);
	memset(buf, 0, len); /* out must own its strings */
	free(buf);
	cr_expect(rep_eq(&in, &out));
	/* Spot checks, in case rep_eq itself were wrong. */
	cr_expect_eq(out.n_tasks, 3);
	cr_expect_str_eq(out.tasks[2].error_message, "error_message-2");
	cr_expect_eq(out.spaces[1].granted.n, 2);
	cr_expect_str_eq(out.spaces[1].granted.v[1], "page.read");
	cr_expect(out.instances[0].in_use);
	cr_expect_not(out.instances[1].in_use);
	cr_expect_eq(out.count, -42);
	cr_expect_eq(out.err, CM_E_CONFLICT);
	pr_rep_free(&out);
	pr_rep_free(&in);
}

Test(proto, empty_reply_is_an_empty_map)
{
	struct pr_rep in = {0}, out;
	char *buf;
	size_t len;

	cr_assert_eq(pr_rep_encode(&in, &buf, &len), 0);
	cr_expect_eq(len, 1);
	cr_expect_eq((unsigned char)buf[0], 0x80, "CM_OK and zeros omitted");
	cr_assert_eq(dec_rep(buf, len, &out), 0);
	cr_expect_eq(out.err, CM_OK);
	cr_expect_null(out.msg);
	cr_expect_null(out.spaces);
	pr_rep_free(&out);
	free(buf);
}

/* ---- shape errors ---------------------------------------------------------
 */

Test(proto, unknown_or_missing_op)
{
	static const char *bad[] = {
	    "space.explode", "", "PING", "ping ", "ping\x01", "unknown"};
	struct mp m = {0};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mp_map(&m, 1);
		mp_kv(&m, "op", bad[i]);
		mp_req_rejects(&m, bad[i]);
	}
	mp_map(&m, 0);
	mp_req_rejects(&m, "empty map");
	mp_map(&m, 1);
	mp_kv(&m, "op_id", "x");
	mp_req_rejects(&m, "no op");
}

Test(proto, unknown_key_rejected)
{
	struct mp m = {0};

	mp_map(&m, 2);
	mp_kv(&m, "op", "ping");
	mp_kv(&m, "bogus", "x");
	mp_req_rejects(&m, "request");
	mp_map(&m, 2);
	mp_kv(&m, "op", "ping");
	mp_kv(&m, "spaces", "x"); /* a reply key is not a request key */
	mp_req_rejects(&m, "reply key in request");

	mp_map(&m, 1);
	mp_kv(&m, "op", "ping"); /* a request key is not a reply key */
	mp_rep_rejects(&m, "op in reply");
	mp_map(&m, 1);
	mp_str(&m, "spaces");
	mp_arr(&m, 1);
	mp_map(&m, 1);
	mp_kv(&m, "task_id", "t"); /* a task field is not a space field */
	mp_rep_rejects(&m, "record");
}

Test(proto, key_not_allowed_for_op)
{
	for (int op = 0; op < PR_OP__COUNT; op++) {
		uint64_t allowed = ops[op].req | ops[op].opt;

		for (int f = 0; f < PR_F__COUNT; f++) {
			uint64_t bit = UINT64_C(1) << f;
			struct pr_req r;
			struct mp m = {0};
			char *buf;
			size_t len;

			if (allowed & bit)
				continue;
			req_fill(&r, (enum pr_op)op, ops[op].req | bit);
			mp_req(&m, &r, ops[op].req | bit);
			req_rejects(m.b, m.n, field_names[f]);
			cr_expect_neq(pr_req_encode(&r, &buf, &len), 0,
			    "%s encoded with %s", ops[op].name, field_names[f]);
			cr_expect_null(buf);
			mp_free(&m);
		}
	}
}

Test(proto, missing_required_field)
{
	for (int op = 0; op < PR_OP__COUNT; op++) {
		struct pr_req r, out;
		struct mp m = {0};
		char *buf;
		size_t len;

		/* Exactly the required fields: accepted. */
		req_fill(&r, (enum pr_op)op, ops[op].req);
		mp_req(&m, &r, ops[op].req);
		cr_expect_eq(
		    dec_req(m.b, m.n, &out), 0, "%s: %s", ops[op].name, err);
		pr_req_free(&out);
		mp_free(&m);

		for (int f = 0; f < PR_F__COUNT; f++) {
			uint64_t bit = UINT64_C(1) << f;

			if (!(ops[op].req & bit))
				continue;
			req_fill(&r, (enum pr_op)op,
			    (ops[op].req | ops[op].opt) & ~bit);
			mp_req(&m, &r, (ops[op].req | ops[op].opt) & ~bit);
			req_rejects(m.b, m.n, field_names[f]);
			cr_expect_neq(pr_req_encode(&r, &buf, &len), 0,
			    "%s encoded without %s", ops[op].name,
			    field_names[f]);
			mp_free(&m);
		}
	}
}

Test(proto, wrong_wire_types)
{
	struct mp m = {0};

	mp_map(&m, 3); /* PR_STR given an int */
	mp_kv(&m, "op", "space.get");
	mp_str(&m, "workspace_id");
	mp_int(&m, 5);
	mp_kv(&m, "space_id", "s");
	mp_req_rejects(&m, "str as int");

	mp_map(&m, 3); /* PR_INT given a str, then a bool */
	mp_kv(&m, "op", "space.list");
	mp_kv(&m, "workspace_id", "w");
	mp_kv(&m, "limit", "5");
	mp_req_rejects(&m, "int as str");
	mp_map(&m, 3);
	mp_kv(&m, "op", "space.list");
	mp_kv(&m, "workspace_id", "w");
	mp_str(&m, "limit");
	mp_bool(&m, true);
	mp_req_rejects(&m, "int as bool");

	mp_map(&m, 5); /* PR_BOOL given an int */
	mp_kv(&m, "op", "principal.create");
	mp_kv(&m, "op_id", "o");
	mp_kv(&m, "kind", "user");
	mp_kv(&m, "name", "n");
	mp_str(&m, "is_admin");
	mp_int(&m, 1);
	mp_req_rejects(&m, "bool as int");

	for (int variant = 0; variant < 3; variant++) {
		mp_map(&m, 7); /* PR_STRLIST as str, as map, items as int */
		mp_kv(&m, "op", "space.create");
		mp_kv(&m, "op_id", "o");
		mp_kv(&m, "workspace_id", "w");
		mp_kv(&m, "browser_instance_id", "i");
		mp_kv(&m, "owner_type", "principal");
		mp_kv(&m, "owner_id", "p");
		mp_str(&m, "granted");
		if (variant == 0) {
			mp_str(&m, "browser.navigate");
		} else if (variant == 1) {
			mp_map(&m, 0);
		} else {
			mp_arr(&m, 1);
			mp_int(&m, 1);
		}
		mp_req_rejects(&m, "strlist");
	}

	mp_map(&m, 1); /* op given an int */
	mp_str(&m, "op");
	mp_int(&m, 0);
	mp_req_rejects(&m, "op as int");

	mp_map(&m, 1); /* a key that is not a string */
	mp_int(&m, 1);
	mp_str(&m, "ping");
	mp_req_rejects(&m, "int key");

	mp_map(&m, 1); /* err given an int */
	mp_str(&m, "err");
	mp_int(&m, 404);
	mp_rep_rejects(&m, "err as int");
	mp_map(&m, 1); /* a bool given a str */
	mp_kv(&m, "created", "true");
	mp_rep_rejects(&m, "created as str");
	mp_map(&m, 1); /* a record list given a map */
	mp_str(&m, "spaces");
	mp_map(&m, 0);
	mp_rep_rejects(&m, "list as map");
	mp_map(&m, 1); /* a record given an array */
	mp_str(&m, "spaces");
	mp_arr(&m, 1);
	mp_arr(&m, 0);
	mp_rep_rejects(&m, "record as array");
	mp_map(&m, 1); /* a record field of the wrong type */
	mp_str(&m, "tasks");
	mp_arr(&m, 1);
	mp_map(&m, 1);
	mp_str(&m, "timeout_ms");
	mp_str(&m, "60");
	mp_rep_rejects(&m, "record int as str");

	/* Floats, bin and ext never match any field. */
	static const unsigned char fl[] = {0x81, 0xa5, 'c', 'o', 'u', 'n', 't',
	    0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0};
	rep_rejects(fl, sizeof(fl), "float");
	static const unsigned char bin[] = {
	    0x81, 0xa3, 'm', 's', 'g', 0xc4, 1, 'x'};
	rep_rejects(bin, sizeof(bin), "bin");
	static const unsigned char ext[] = {
	    0x81, 0xa3, 'm', 's', 'g', 0xd4, 1, 'x'};
	rep_rejects(ext, sizeof(ext), "ext");
}

Test(proto, top_level_must_be_a_map)
{
	static const unsigned char arr[] = {0x91, 0xa2, 'o', 'p'};
	static const unsigned char str[] = {0xa4, 'p', 'i', 'n', 'g'};
	static const unsigned char num[] = {0x05};
	static const unsigned char yes[] = {0xc3};

	req_rejects(arr, sizeof(arr), "array");
	req_rejects(str, sizeof(str), "str");
	req_rejects(num, sizeof(num), "int");
	rep_rejects(yes, sizeof(yes), "bool");
	req_rejects("", 0, "empty");
	rep_rejects("", 0, "empty");
	rep_rejects(NULL, 0, "NULL");
}

Test(proto, int64_range)
{
	struct pr_rep r;
	struct mp m = {0};

	mp_map(&m, 1);
	mp_str(&m, "count");
	mp_int(&m, INT64_MAX);
	cr_assert_eq(dec_rep(m.b, m.n, &r), 0, "%s", err);
	cr_expect_eq(r.count, INT64_MAX);
	pr_rep_free(&r);
	mp_free(&m);

	mp_map(&m, 1);
	mp_str(&m, "count");
	mp_int(&m, INT64_MIN);
	cr_assert_eq(dec_rep(m.b, m.n, &r), 0, "%s", err);
	cr_expect_eq(r.count, INT64_MIN);
	pr_rep_free(&r);
	mp_free(&m);

	/* uint64 just past INT64_MAX, then the largest. */
	for (int i = 0; i < 2; i++) {
		mp_map(&m, 1);
		mp_str(&m, "count");
		mp_byte(&m, 0xcf);
		mp_be(&m, i ? UINT64_MAX : (uint64_t)INT64_MAX + 1, 8);
		mp_rep_rejects(&m, "uint64 over int64");
	}

	/* Non-minimal widths are still the same integer. */
	static const unsigned char wide[] = {
	    0x81, 0xa5, 'c', 'o', 'u', 'n', 't', 0xd1, 0xff, 0xfe};
	cr_assert_eq(dec_rep(wide, sizeof(wide), &r), 0, "%s", err);
	cr_expect_eq(r.count, -2);
	pr_rep_free(&r);
}

/* ---- bounds ---------------------------------------------------------------
 */

/* Only PR_STR members can take a string; the other types skip. */
#define SETSTR_PR_STR(x, s) ((x) = (s), true)
#define SETSTR_PR_INT(x, s) false
#define SETSTR_PR_BOOL(x, s) false
#define SETSTR_PR_STRLIST(x, s) false
#define SETSTR_PR_BIN(x, s) false

Test(proto, req_string_at_max_passes_over_max_fails)
{
	size_t checked = 0;

	for (int f = 0; f < PR_F__COUNT; f++) {
		int op;

		for (op = 0; op < PR_OP__COUNT; op++)
			if ((ops[op].req | ops[op].opt) & UINT64_C(1) << f)
				break;
		/* A field no op may carry would be dead weight on the wire. */
		cr_assert_neq(
		    op, PR_OP__COUNT, "request field %d is in no op", f);
		for (size_t over = 0; over < 2; over++) {
			uint64_t mask = ops[op].req | ops[op].opt;
			struct pr_req r, out;
			struct mp m = {0};
			char *s = NULL, *buf;
			bool is_str = false;
			size_t len;

			req_fill(&r, (enum pr_op)op, mask);
#define REQ_SET_LONG(e, mm, t, max)                            \
	if (f == PR_F_##e && (s = xstr((max) + over)) != NULL) \
		is_str = SETSTR_##t(r.mm, s);
			PR_REQ_FIELDS(REQ_SET_LONG)
#undef REQ_SET_LONG
			if (!is_str) {
				free(s);
				break;
			}
			mp_req(&m, &r, mask);
			if (over) {
				req_rejects(m.b, m.n, field_names[f]);
				cr_expect_neq(pr_req_encode(&r, &buf, &len), 0,
				    "%s over max encoded", field_names[f]);
			} else {
				cr_expect_eq(dec_req(m.b, m.n, &out), 0,
				    "%s at max: %s", field_names[f], err);
				cr_expect(req_eq(&r, &out));
				pr_req_free(&out);
				cr_expect_eq(pr_req_encode(&r, &buf, &len), 0,
				    "%s at max", field_names[f]);
				free(buf);
				checked++;
			}
			mp_free(&m);
			free(s);
		}
	}
	cr_expect_geq(checked, 30, "string fields carried by some op");
}

/* Encode {list: [item]}: at max it must round trip, over max fail both ways. */
static void
rec_bound(struct pr_rep *rep, const char *list, const char *field,
    const char *s, bool over)
{
	struct pr_rep out;
	struct mp m = {0};
	char *buf, *buf2;
	size_t len, len2;

	mp_map(&m, 1);
	mp_str(&m, list);
	mp_arr(&m, 1);
	mp_map(&m, 1);
	mp_kv(&m, field, s);
	if (over) {
		cr_expect_neq(
		    pr_rep_encode(rep, &buf, &len), 0, "%s.%s", list, field);
		rep_rejects(m.b, m.n, field);
	} else {
		cr_assert_eq(
		    pr_rep_encode(rep, &buf, &len), 0, "%s.%s", list, field);
		cr_assert_eq(dec_rep(buf, len, &out), 0, "%s", err);
		cr_assert_eq(pr_rep_encode(&out, &buf2, &len2), 0);
		cr_expect(len == len2 && memcmp(buf, buf2, len) == 0,
		    "%s.%s round trip", list, field);
		pr_rep_free(&out);
		cr_expect_eq(dec_rep(m.b, m.n, &out), 0, "%s", err);
		pr_rep_free(&out);
		free(buf);
		free(buf2);
	}
	mp_free(&m);
}

Test(proto, record_string_at_max_passes_over_max_fails)
{
	struct pr_rep rep;

#define REC_STR_BOUND(m, t, max)                              \
	for (int over = 0; over < 2; over++) {                \
		cur_t item;                                   \
		char *s = xstr((size_t)(max) + (size_t)over); \
		memset(&item, 0, sizeof(item));               \
		if (SETSTR_##t(item.m, s)) {                  \
			memset(&rep, 0, sizeof(rep));         \
			*listp = &item;                       \
			*np = 1;                              \
			rec_bound(&rep, lname, #m, s, over);  \
		}                                             \
		free(s);                                      \
	}
#define REC_BOUNDS(tag, list, fields)          \
	{                                      \
		typedef struct pr_##tag cur_t; \
		cur_t **listp = &rep.list;     \
		size_t *np = &rep.n_##list;    \
		const char *lname = #list;     \
		fields(REC_STR_BOUND)          \
	}
	PR_RECORDS(REC_BOUNDS)
}

Test(proto, reply_msg_and_args_bounds)
{
	static const struct {
		const char *key;
		size_t max;
	} f[] = {{"msg", CM_ERROR_MESSAGE_MAX}, {"args", CM_ARGS_MAX}};

	for (size_t i = 0; i < 2; i++) {
		for (size_t over = 0; over < 2; over++) {
			struct pr_rep r = {0}, out;
			struct mp m = {0};
			char *s = xstr(f[i].max + over), *buf;
			size_t len;

			*(i == 0 ? &r.msg : &r.args) = s;
			mp_map(&m, 1);
			mp_kv(&m, f[i].key, s);
			if (over) {
				cr_expect_neq(pr_rep_encode(&r, &buf, &len), 0);
				mp_rep_rejects(&m, f[i].key);
			} else {
				cr_expect_eq(pr_rep_encode(&r, &buf, &len), 0);
				free(buf);
				cr_expect_eq(dec_rep(m.b, m.n, &out), 0);
				cr_expect_str_eq(
				    i == 0 ? out.msg : out.args, s);
				pr_rep_free(&out);
				mp_free(&m);
			}
			free(s);
		}
	}
}

/* n copies of s, in v (room for 64). */
static const char **
items_of(const char **v, size_t n, const char *s)
{
	cr_assert_leq(n, 64);
	for (size_t i = 0; i < n; i++)
		v[i] = s;
	return v;
}

Test(proto, strlist_bounds)
{
	/* {count, item length}: at the limits, then one past each. */
	static const size_t cases[][3] = {{CM_GRANTED_MAX, 3, 0},
	    {CM_GRANTED_MAX + 1, 3, 1}, {1, CM_CAPABILITY_MAX, 0},
	    {1, CM_CAPABILITY_MAX + 1, 1}, {0, 0, 0}};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct pr_req r, out;
		struct mp m = {0};
		uint64_t mask = ops[PR_OP_SPACE_CREATE].req | PRM(GRANTED);
		const char *v[64];
		char *buf, *item = xstr(cases[c][1]);
		size_t len;

		req_fill(&r, PR_OP_SPACE_CREATE, mask);
		r.granted.n = cases[c][0];
		r.granted.v = items_of(v, cases[c][0], item);
		mp_req(&m, &r, mask);
		if (cases[c][2]) {
			req_rejects(m.b, m.n, "granted");
			cr_expect_neq(pr_req_encode(&r, &buf, &len), 0);
		} else {
			cr_expect_eq(dec_req(m.b, m.n, &out), 0, "%s", err);
			cr_expect(req_eq(&r, &out), "case %zu", c);
			pr_req_free(&out);
			cr_expect_eq(pr_req_encode(&r, &buf, &len), 0);
			free(buf);
		}
		mp_free(&m);
		free(item);
	}

	/* A record's list: tasks[].arg_keys, at most CM_SCHEMA_PROPS_MAX. */
	for (size_t over = 0; over < 2; over++) {
		struct pr_task t = {0};
		struct pr_rep r = {0};
		char *buf;
		size_t len;
		struct mp m = {0};
		size_t n = CM_SCHEMA_PROPS_MAX + over;
		const char *v[64];

		t.arg_keys.n = n;
		t.arg_keys.v = items_of(v, n, "field");
		r.tasks = &t;
		r.n_tasks = 1;
		mp_map(&m, 1);
		mp_str(&m, "tasks");
		mp_arr(&m, 1);
		mp_map(&m, 1);
		mp_str(&m, "arg_keys");
		mp_strlist(&m, &t.arg_keys);
		if (over) {
			cr_expect_neq(pr_rep_encode(&r, &buf, &len), 0);
			mp_rep_rejects(&m, "arg_keys");
		} else {
			struct pr_rep out;

			cr_expect_eq(pr_rep_encode(&r, &buf, &len), 0);
			free(buf);
			cr_expect_eq(dec_rep(m.b, m.n, &out), 0, "%s", err);
			cr_expect_eq(out.tasks[0].arg_keys.n, n);
			pr_rep_free(&out);
			mp_free(&m);
		}
	}
}

Test(proto, record_list_bound)
{
	static struct pr_workspace ws[CM_PROTO_LIST_MAX + 1];

	for (size_t over = 0; over < 2; over++) {
		struct pr_rep r = {0}, out;
		size_t n = CM_PROTO_LIST_MAX + over;
		struct mp m = {0};
		char *buf;
		size_t len;

		r.workspaces = ws;
		r.n_workspaces = n;
		mp_map(&m, 1);
		mp_str(&m, "workspaces");
		mp_arr(&m, n);
		for (size_t i = 0; i < n; i++)
			mp_map(&m, 0);
		if (over) {
			cr_expect_neq(pr_rep_encode(&r, &buf, &len), 0);
			mp_rep_rejects(&m, "workspaces");
		} else {
			cr_expect_eq(pr_rep_encode(&r, &buf, &len), 0);
			free(buf);
			cr_expect_eq(dec_rep(m.b, m.n, &out), 0, "%s", err);
			cr_expect_eq(out.n_workspaces, n);
			pr_rep_free(&out);
			mp_free(&m);
		}
	}
}

/* Fills every field op may carry at its bound: the largest request. */
static void
req_fill_max(struct pr_req *r, enum pr_op op, void **keep)
{
	uint64_t mask = ops[op].req | ops[op].opt;
	static const char *caps[CM_GRANTED_MAX];
	static char cap[CM_CAPABILITY_MAX + 1];
	char *pool;
	size_t at = 0, need = 0;

	memset(cap, 'c', CM_CAPABILITY_MAX);
	for (size_t i = 0; i < CM_GRANTED_MAX; i++)
		caps[i] = cap;
#define NEED_PR_STR(max) need += (size_t)(max) + 1;
#define NEED_PR_BIN(max) need += (size_t)(max);
#define NEED_PR_INT(max)
#define NEED_PR_BOOL(max)
#define NEED_PR_STRLIST(max)
#define NEED(e, m, t, max)    \
	if (mask & PRM(e)) {  \
		NEED_##t(max) \
	}
	PR_REQ_FIELDS(NEED)
#undef NEED
	pool = malloc(need + 1);
	cr_assert_not_null(pool);
	memset(pool, 'x', need + 1);
	memset(r, 0, sizeof(*r));
	r->op = op;
#define MAX_PR_STR(x, max)               \
	x = pool + at;                   \
	pool[at + (size_t)(max)] = '\0'; \
	at += (size_t)(max) + 1;
#define MAX_PR_BIN(x, max)                                              \
	x = (struct pr_bin){(size_t)(max), (unsigned char *)pool + at}; \
	at += (size_t)(max);
#define MAX_PR_INT(x, max) x = INT64_MIN;
#define MAX_PR_BOOL(x, max) x = true;
#define MAX_PR_STRLIST(x, max) x = (struct pr_strlist){(size_t)(max), caps};
#define FILL_MAX(e, m, t, max)     \
	if (mask & PRM(e)) {       \
		MAX_##t(r->m, max) \
	}
	PR_REQ_FIELDS(FILL_MAX)
#undef FILL_MAX
	*keep = pool;
}

Test(proto, every_request_fits_its_ops_bound)
{
	size_t artifact_ops = 0;

	cr_expect_eq(pr_req_max(PR_OP_ACTOR_FINISH), CM_STORE_RECV_MAX);
	cr_expect_eq(pr_req_max(PR_OP_TASK_SUBMIT), CM_REQ_MSG_MAX);
	cr_expect_eq(pr_req_max(PR_OP__COUNT), CM_REQ_MSG_MAX);
	cr_expect_lt(CM_STORE_RECV_MAX, CM_MSG_MAX);
	for (int op = 0; op < PR_OP__COUNT; op++) {
		struct pr_req r, out;
		void *pool;
		char *buf;
		size_t len;
		bool artifact = (ops[op].req | ops[op].opt) & PRM(ARTIFACT);

		/* Only actor.finish and space.file_put may be larger than
		 * CM_REQ_MSG_MAX. */
		cr_expect_eq(pr_req_max((enum pr_op)op),
		    artifact ? CM_STORE_RECV_MAX : CM_REQ_MSG_MAX, "%s",
		    ops[op].name);
		artifact_ops += artifact;
		req_fill_max(&r, (enum pr_op)op, &pool);
		cr_assert_eq(pr_req_encode(&r, &buf, &len), 0,
		    "%s with every field at its bound", ops[op].name);
		cr_expect_leq(len, pr_req_max((enum pr_op)op), "%s: %zu",
		    ops[op].name, len);
		if (artifact)
			cr_expect_gt(len, CM_ARTIFACT_MAX, "%s", ops[op].name);
		cr_assert_eq(
		    dec_req(buf, len, &out), 0, "%s: %s", ops[op].name, err);
		cr_expect(req_eq(&r, &out), "%s differs", ops[op].name);
		pr_req_free(&out);
		free(buf);
		free(pool);
	}
	cr_expect_eq(artifact_ops, 2,
	    "only actor.finish and space.file_put carry bytes");
}

Test(proto, artifact_bytes_at_their_bound_pass_and_over_it_fail)
{
	unsigned char *b = malloc((size_t)CM_ARTIFACT_MAX + 1);
	struct pr_req r, out;
	struct pr_rep rep, rout;
	struct mp m = {0};
	char *buf;
	size_t len;

	cr_assert_not_null(b);
	for (size_t i = 0; i <= CM_ARTIFACT_MAX; i++)
		b[i] = (unsigned char)(i % 253);
	for (int over = 0; over < 2; over++) {
		req_fill(&r, PR_OP_ACTOR_FINISH,
		    ops[PR_OP_ACTOR_FINISH].req | PRM(ARTIFACT_NAME) |
		        PRM(MIME) | PRM(ARTIFACT));
		r.artifact = (struct pr_bin){(size_t)CM_ARTIFACT_MAX + over, b};
		mp_req(&m, &r,
		    ops[PR_OP_ACTOR_FINISH].req | PRM(ARTIFACT_NAME) |
		        PRM(MIME) | PRM(ARTIFACT));
		if (over) {
			cr_expect_neq(pr_req_encode(&r, &buf, &len), 0);
			req_rejects(m.b, m.n, "artifact over its bound");
		} else {
			cr_assert_eq(pr_req_encode(&r, &buf, &len), 0);
			cr_assert_eq(dec_req(buf, len, &out), 0, "%s", err);
			cr_expect(req_eq(&r, &out));
			pr_req_free(&out);
			free(buf);
			cr_assert_eq(dec_req(m.b, m.n, &out), 0, "%s", err);
			cr_expect_eq(out.artifact.n, (size_t)CM_ARTIFACT_MAX);
			pr_req_free(&out);
		}
		mp_free(&m);

		/* The reply of artifact.get: the same bound. */
		memset(&rep, 0, sizeof(rep));
		rep.artifacts = pr_rep_alloc(&rep, sizeof(*rep.artifacts));
		rep.n_artifacts = 1;
		rep.artifacts[0].name = "screenshot.png";
		rep.artifacts[0].bytes =
		    (struct pr_bin){(size_t)CM_ARTIFACT_MAX + over, b};
		if (over) {
			cr_expect_neq(pr_rep_encode(&rep, &buf, &len), 0);
		} else {
			cr_assert_eq(pr_rep_encode(&rep, &buf, &len), 0);
			cr_assert_eq(dec_rep(buf, len, &rout), 0, "%s", err);
			cr_expect_eq(
			    rout.artifacts[0].bytes.n, (size_t)CM_ARTIFACT_MAX);
			cr_expect_eq(memcmp(rout.artifacts[0].bytes.p, b,
			                 CM_ARTIFACT_MAX),
			    0);
			pr_rep_free(&rout);
			free(buf);
		}
		pr_rep_free(&rep);
	}
	/* Bytes are bin only: a str of bytes is refused, and bin for a str. */
	mp_map(&m, 1);
	mp_str(&m, "artifacts");
	mp_arr(&m, 1);
	mp_map(&m, 1);
	mp_kv(&m, "bytes", "abc");
	mp_rep_rejects(&m, "bytes as a str");
	mp_map(&m, 1);
	mp_str(&m, "artifacts");
	mp_arr(&m, 1);
	mp_map(&m, 1);
	mp_str(&m, "name");
	mp_bin(&m, &(struct pr_bin){3, b});
	mp_rep_rejects(&m, "a name as bin");
	/* A bin that declares more than the message holds. */
	static const unsigned char cut[] = {0x81, 0xa9, 'a', 'r', 't', 'i', 'f',
	    'a', 'c', 't', 's', 0x91, 0x81, 0xa5, 'b', 'y', 't', 'e', 's', 0xc6,
	    0x7f, 0xff, 0xff, 0xff, 'x'};
	rep_rejects(cut, sizeof(cut), "truncated bin");
	free(b);
}

Test(proto, oversize_message)
{
	size_t big = (size_t)CM_MSG_MAX + 1;
	unsigned char *b = calloc(1, big);
	struct pr_rep r = {0};
	char *buf, *manifest = xstr(CM_MANIFEST_MAX);
	size_t len, n = CM_MSG_MAX / CM_MANIFEST_MAX + 1;

	cr_assert_leq(n, CM_PROTO_LIST_MAX, "the size check is what fails");

	/* A valid map followed by zeros: the length check must come first. */
	cr_assert_not_null(b);
	b[0] = 0x80;
	req_rejects(b, big, "request");
	rep_rejects(b, big, "reply");
	memcpy(b, "ev/w/s/\x80", 8);
	pub_rejects(b, big, "pub");
	free(b);

	/* A reply valid in every field and count, over CM_MSG_MAX in all. */
	struct mp m = {0};
	mp_map(&m, 1);
	mp_str(&m, "bundles");
	mp_arr(&m, n);
	for (size_t i = 0; i < n; i++) {
		mp_map(&m, 1);
		mp_kv(&m, "manifest", manifest);
	}
	cr_assert_gt(m.n, CM_MSG_MAX);
	mp_rep_rejects(&m, "reply over CM_MSG_MAX");

	/* Each field in bounds, the whole over CM_MSG_MAX: refused. */
	r.bundles = calloc(n, sizeof(*r.bundles));
	cr_assert_not_null(r.bundles);
	for (size_t i = 0; i < n; i++)
		r.bundles[i].manifest = manifest;
	r.n_bundles = n;
	cr_expect_neq(pr_rep_encode(&r, &buf, &len), 0);
	cr_expect_null(buf);
	r.n_bundles = n / 2;
	cr_expect_eq(pr_rep_encode(&r, &buf, &len), 0);
	free(buf);
	free(r.bundles);
	free(manifest);
}

Test(proto, huge_declared_counts_rejected_without_allocating)
{
	/* msgpack-c would allocate 24..48 bytes per declared element. */
	static const unsigned char arr32[] = {0x81, 0xa6, 's', 'p', 'a', 'c',
	    'e', 's', 0xdd, 0xff, 0xff, 0xff, 0xff};
	static const unsigned char map32[] = {0xdf, 0xff, 0xff, 0xff, 0xff};
	static const unsigned char str32[] = {
	    0x81, 0xa3, 'm', 's', 'g', 0xdb, 0xff, 0xff, 0xff, 0xff, 'x'};
	static const unsigned char arr16[] = {
	    0x81, 0xa6, 's', 'p', 'a', 'c', 'e', 's', 0xdc, 0x00, 0x05, 0x80};

	rep_rejects(arr32, sizeof(arr32), "array32");
	rep_rejects(map32, sizeof(map32), "map32");
	rep_rejects(str32, sizeof(str32), "str32");
	rep_rejects(arr16, sizeof(arr16), "array16 short of items");
	req_rejects(map32, sizeof(map32), "map32");
}

Test(proto, nesting_deeper_than_any_message_rejected)
{
	struct mp m = {0};

	/* {"spaces": [{"granted": [[...]]}]}: one level past string lists. */
	mp_map(&m, 1);
	mp_str(&m, "spaces");
	mp_arr(&m, 1);
	mp_map(&m, 1);
	mp_str(&m, "granted");
	mp_arr(&m, 1);
	mp_arr(&m, 0);
	mp_rep_rejects(&m, "depth 5");

	for (int i = 0; i < 100; i++)
		mp_arr(&m, 1);
	mp_arr(&m, 0);
	mp_rep_rejects(&m, "depth 101");
}

/* ---- content errors -------------------------------------------------------
 */

Test(proto, nul_inside_string_rejected)
{
	struct mp m = {0};

	mp_map(&m, 3);
	mp_kv(&m, "op", "space.get");
	mp_str(&m, "workspace_id");
	mp_strn(&m, "w\0x", 3);
	mp_kv(&m, "space_id", "s");
	mp_req_rejects(&m, "field");

	mp_map(&m, 1);
	mp_str(&m, "op");
	mp_strn(&m, "ping\0", 5);
	mp_req_rejects(&m, "op");

	mp_map(&m, 1);
	mp_str(&m, "spaces");
	mp_arr(&m, 1);
	mp_map(&m, 1);
	mp_str(&m, "granted");
	mp_arr(&m, 1);
	mp_strn(&m, "a\0", 2);
	mp_rep_rejects(&m, "strlist item");

	mp_map(&m, 1);
	mp_str(&m, "msg");
	mp_strn(&m, "\0", 1);
	mp_rep_rejects(&m, "msg");

	mp_map(&m, 1);
	mp_str(&m, "err");
	mp_strn(&m, "not_found\0", 10);
	mp_rep_rejects(&m, "err");
}

Test(proto, duplicate_key_rejected)
{
	struct mp m = {0};

	mp_map(&m, 2);
	mp_kv(&m, "op", "ping");
	mp_kv(&m, "op", "ping");
	mp_req_rejects(&m, "op twice");

	mp_map(&m, 4);
	mp_kv(&m, "op", "space.get");
	mp_kv(&m, "workspace_id", "w");
	mp_kv(&m, "space_id", "s");
	mp_kv(&m, "workspace_id", "w");
	mp_req_rejects(&m, "field twice");

	mp_map(&m, 2);
	mp_kv(&m, "err", "not_found");
	mp_kv(&m, "err", "not_found");
	mp_rep_rejects(&m, "err twice");

	mp_map(&m, 2);
	mp_str(&m, "spaces");
	mp_arr(&m, 0);
	mp_str(&m, "spaces");
	mp_arr(&m, 0);
	mp_rep_rejects(&m, "list twice");

	mp_map(&m, 1);
	mp_str(&m, "tasks");
	mp_arr(&m, 2);
	mp_map(&m, 1);
	mp_kv(&m, "task_id", "a");
	mp_map(&m, 2);
	mp_kv(&m, "task_id", "b");
	mp_kv(&m, "task_id", "c");
	mp_rep_rejects(&m, "record field twice");
}

Test(proto, nil_rejected)
{
	struct mp m = {0};

	mp_map(&m, 3);
	mp_kv(&m, "op", "space.get");
	mp_str(&m, "workspace_id");
	mp_nil(&m);
	mp_kv(&m, "space_id", "s");
	mp_req_rejects(&m, "field");

	mp_map(&m, 1);
	mp_str(&m, "op");
	mp_nil(&m);
	mp_req_rejects(&m, "op");

	mp_nil(&m);
	mp_req_rejects(&m, "top level");

	mp_map(&m, 1);
	mp_str(&m, "msg");
	mp_nil(&m);
	mp_rep_rejects(&m, "msg");

	mp_map(&m, 1);
	mp_str(&m, "spaces");
	mp_nil(&m);
	mp_rep_rejects(&m, "list");

	mp_map(&m, 1);
	mp_str(&m, "spaces");
	mp_arr(&m, 1);
	mp_map(&m, 1);
	mp_str(&m, "granted");
	mp_arr(&m, 1);
	mp_nil(&m);
	mp_rep_rejects(&m, "strlist item");
}

Test(proto, trailing_bytes_rejected)
{
	struct pr_req r;
	struct pr_event ev;
	char *buf, *two;
	size_t len;

	req_fill(&r, PR_OP_SPACE_GET, ops[PR_OP_SPACE_GET].req);
	cr_assert_eq(pr_req_encode(&r, &buf, &len), 0);
	two = malloc(2 * len);
	cr_assert_not_null(two);
	memcpy(two, buf, len);
	memcpy(two + len, buf, len);
	req_rejects(two, len + 1, "one byte");
	req_rejects(two, 2 * len, "a second message");
	rep_rejects("\x80\x80", 2, "empty reply twice");
	free(two);
	free(buf);

	event_fill(&ev);
	cr_assert_eq(pr_pub_encode(&ev, NULL, &buf, &len), 0);
	two = malloc(len + 1);
	cr_assert_not_null(two);
	memcpy(two, buf, len);
	two[len] = 0x00;
	pub_rejects(two, len + 1, "pub");
	free(two);
	free(buf);
}

Test(proto, every_prefix_rejected)
{
	struct pr_req r;
	struct pr_rep rep;
	struct pr_event ev;
	char *req_buf, *rep_buf, *pub_buf, *p;
	size_t req_len, rep_len, pub_len;

	req_fill(&r, PR_OP_SPACE_CREATE,
	    ops[PR_OP_SPACE_CREATE].req | ops[PR_OP_SPACE_CREATE].opt);
	cr_assert_eq(pr_req_encode(&r, &req_buf, &req_len), 0);
	rep_fill(&rep, 2);
	cr_assert_eq(pr_rep_encode(&rep, &rep_buf, &rep_len), 0);
	pr_rep_free(&rep);
	event_fill(&ev);
	cr_assert_eq(pr_pub_encode(&ev, NULL, &pub_buf, &pub_len), 0);

	/* A private copy per prefix so ASan sees a read past its end. */
	for (size_t n = 0; n < req_len; n++) {
		p = malloc(n + 1);
		memcpy(p, req_buf, n);
		req_rejects(p, n, "request prefix");
		free(p);
	}
	for (size_t n = 0; n < rep_len; n++) {
		p = malloc(n + 1);
		memcpy(p, rep_buf, n);
		rep_rejects(p, n, "reply prefix");
		free(p);
	}
	for (size_t n = 0; n < pub_len; n++) {
		p = malloc(n + 1);
		memcpy(p, pub_buf, n);
		pub_rejects(p, n, "pub prefix");
		free(p);
	}
	free(req_buf);
	free(rep_buf);
	free(pub_buf);
}

/* ---- garbage --------------------------------------------------------------
 */

static uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Decodes b with all three decoders.  A rejection must leave *out zeroed;
 * an acceptance must re-encode and decode to the same struct.  Returns how
 * many decoders accepted.
 */
static int
decode_any(const unsigned char *b, size_t n)
{
	struct pr_arena a = {0};
	struct pr_req rq, rq2;
	struct pr_rep rp, rp2;
	struct pr_event ev, ev2;
	char *buf;
	size_t len;
	int ok = 0;

	if (dec_req(b, n, &rq) == 0) {
		ok++;
		cr_assert_eq(pr_req_encode(&rq, &buf, &len), 0);
		cr_assert_eq(dec_req(buf, len, &rq2), 0, "%s", err);
		cr_assert(req_eq(&rq, &rq2));
		pr_req_free(&rq2);
		free(buf);
	} else {
		cr_assert(all_zero(&rq, sizeof(rq)));
	}
	pr_req_free(&rq);
	if (dec_rep(b, n, &rp) == 0) {
		ok++;
		cr_assert_eq(pr_rep_encode(&rp, &buf, &len), 0);
		cr_assert_eq(dec_rep(buf, len, &rp2), 0, "%s", err);
		cr_assert(rep_eq(&rp, &rp2));
		pr_rep_free(&rp2);
		free(buf);
	} else {
		cr_assert(all_zero(&rp, sizeof(rp)));
	}
	pr_rep_free(&rp);
	if (pr_pub_decode(b, n, &ev, NULL, &a, err, sizeof(err)) == 0) {
		ok++;
		cr_assert_eq(pr_pub_encode(&ev, NULL, &buf, &len), 0);
		cr_assert_eq(
		    pr_pub_decode(buf, len, &ev2, NULL, &a, err, sizeof(err)),
		    0, "%s", err);
		cr_assert(eq_event(&ev, &ev2));
		free(buf);
	} else {
		cr_assert(all_zero(&ev, sizeof(ev)));
	}
	pr_arena_free(&a);
	return ok;
}

Test(proto, random_garbage_never_crashes)
{
	uint64_t seed = 0x9e3779b97f4a7c15u;
	unsigned char b[512];

	for (int it = 0; it < 20000; it++) {
		size_t n = xorshift(&seed) % sizeof(b);

		for (size_t i = 0; i < n; i++)
			b[i] = (unsigned char)xorshift(&seed);
		/* Every tenth input starts like a map, to get further in. */
		if (it % 10 == 0 && n > 0)
			b[0] = 0x80 | (b[0] & 0x0f);
		decode_any(b, n);
	}
}

Test(proto, mutated_messages_never_crash)
{
	uint64_t seed = 42;
	struct pr_req r;
	struct pr_rep rep;
	struct pr_event ev;
	char *src[3];
	size_t len[3];
	int accepted = 0;

	req_fill(&r, PR_OP_TASK_SUBMIT,
	    ops[PR_OP_TASK_SUBMIT].req | ops[PR_OP_TASK_SUBMIT].opt);
	cr_assert_eq(pr_req_encode(&r, &src[0], &len[0]), 0);
	rep_fill(&rep, 2);
	cr_assert_eq(pr_rep_encode(&rep, &src[1], &len[1]), 0);
	pr_rep_free(&rep);
	event_fill(&ev);
	cr_assert_eq(pr_pub_encode(&ev, NULL, &src[2], &len[2]), 0);

	for (int it = 0; it < 30000; it++) {
		size_t k = (size_t)it % 3, n = len[k];
		unsigned char *b = malloc(n);

		memcpy(b, src[k], n);
		for (uint64_t f = 1 + xorshift(&seed) % 3; f > 0; f--)
			b[xorshift(&seed) % n] = (unsigned char)xorshift(&seed);
		accepted += decode_any(b, n);
		free(b);
	}
	/* Flips inside string bodies keep a message valid: paths were run. */
	cr_expect_gt(accepted, 1000);
	for (int k = 0; k < 3; k++)
		free(src[k]);
}

/* ---- reply errors ---------------------------------------------------------
 */

Test(proto, err_code_mapping)
{
	struct pr_rep r = {0}, out;
	struct mp m = {0};
	char *buf;
	size_t len;

	for (int e = 0; e < CM_ERR__COUNT; e++) {
		r.err = (enum cm_err)e;
		cr_assert_eq(pr_rep_encode(&r, &buf, &len), 0);
		cr_assert_eq(dec_rep(buf, len, &out), 0, "%s", err);
		cr_expect_eq(out.err, (enum cm_err)e, "%s", cm_err_code(e));
		pr_rep_free(&out);
		free(buf);
	}

	mp_map(&m, 1);
	mp_kv(&m, "err", "space_task_in_progress");
	cr_assert_eq(dec_rep(m.b, m.n, &out), 0, "%s", err);
	cr_expect_eq(out.err, CM_E_TASK_IN_PROGRESS);
	pr_rep_free(&out);
	mp_free(&m);

	mp_map(&m, 1);
	mp_kv(&m, "err", "ok"); /* never sent, but it is a code */
	cr_assert_eq(dec_rep(m.b, m.n, &out), 0, "%s", err);
	cr_expect_eq(out.err, CM_OK);
	pr_rep_free(&out);
	mp_free(&m);

	mp_map(&m, 1);
	mp_kv(&m, "err", "no_such_code");
	mp_rep_rejects(&m, "unknown code");
	mp_map(&m, 1);
	mp_kv(&m, "err", "");
	mp_rep_rejects(&m, "empty code");
	mp_map(&m, 1);
	mp_kv(&m, "err", "NOT_FOUND");
	mp_rep_rejects(&m, "case");

	r.err = CM_ERR__COUNT;
	cr_expect_neq(pr_rep_encode(&r, &buf, &len), 0);
	r.err = (enum cm_err) - 1;
	cr_expect_neq(pr_rep_encode(&r, &buf, &len), 0);
}

Test(proto, rep_error_formats_and_truncates)
{
	struct pr_rep r = {0}, out;
	char *big = xstr(CM_ERROR_MESSAGE_MAX + 50), *buf;
	size_t len;

	pr_rep_error(&r, CM_E_NOT_FOUND, "space %s: %d", "s1", 404);
	cr_expect_eq(r.err, CM_E_NOT_FOUND);
	cr_expect_str_eq(r.msg, "space s1: 404");

	pr_rep_error(&r, CM_E_INTERNAL, "%s", big);
	cr_expect_eq(r.err, CM_E_INTERNAL);
	cr_expect_eq(strlen(r.msg), CM_ERROR_MESSAGE_MAX);
	cr_assert_eq(pr_rep_encode(&r, &buf, &len), 0, "truncated must fit");
	cr_assert_eq(dec_rep(buf, len, &out), 0, "%s", err);
	cr_expect_str_eq(out.msg, r.msg);
	pr_rep_free(&out);
	free(buf);

	/* A two-byte character straddling the limit is dropped whole. */
	big[CM_ERROR_MESSAGE_MAX - 1] = '\xc3';
	big[CM_ERROR_MESSAGE_MAX] = '\xa9';
	pr_rep_error(&r, CM_E_INTERNAL, "%s", big);
	cr_expect_eq(strlen(r.msg), CM_ERROR_MESSAGE_MAX - 1);
	cr_expect_eq(r.msg[CM_ERROR_MESSAGE_MAX - 2], 'x');

	pr_rep_error(&r, CM_E_CONFLICT, NULL);
	cr_expect_eq(r.err, CM_E_CONFLICT);
	cr_expect_null(r.msg);
	pr_rep_free(&r);
	cr_expect(all_zero(&r, sizeof(r)));
	free(big);
}

/* ---- events ---------------------------------------------------------------
 */

Test(proto, event_topic)
{
	char buf[CM_TOPIC_MAX], big[4 * CM_TOPIC_MAX];
	char *id = xstr(CM_TOPIC_MAX);

	cr_expect_eq(pr_event_topic("w1", "s1", buf, sizeof(buf)), 9);
	cr_expect_str_eq(buf, "ev/w1/s1/");
	cr_expect_eq(pr_event_topic("w1", "s1", buf, 10), 9, "exact fit");
	cr_expect_eq(pr_event_topic("w1", "s1", buf, 9), -1, "no room for NUL");
	cr_expect_eq(pr_event_topic(NULL, "s1", buf, sizeof(buf)), -1);
	cr_expect_eq(pr_event_topic("w1", NULL, buf, sizeof(buf)), -1);
	cr_expect_eq(pr_event_topic("w/1", "s1", buf, sizeof(buf)), -1);
	cr_expect_eq(pr_event_topic("w1", "s/1", buf, sizeof(buf)), -1);
	cr_expect_eq(pr_event_topic(id, "s1", buf, sizeof(buf)), -1);
	/* A topic must stay under CM_TOPIC_MAX whatever the buffer. */
	id[CM_TOPIC_MAX - 3 - 4] = '\0';
	cr_expect_eq(pr_event_topic(id, "s1", big, sizeof(big)), -1);
	id[CM_TOPIC_MAX - 3 - 4 - 1] = '\0';
	cr_expect_eq(
	    pr_event_topic(id, "s1", big, sizeof(big)), CM_TOPIC_MAX - 1);
	free(id);
}

Test(proto, pub_roundtrip)
{
	struct pr_arena a = {0};
	struct pr_event in, out;
	char topic[CM_TOPIC_MAX], *buf;
	size_t len;
	int n;

	event_fill(&in);
	n = pr_event_topic(in.workspace_id, in.space_id, topic, sizeof(topic));
	cr_assert_gt(n, 0);
	cr_assert_eq(pr_pub_encode(&in, NULL, &buf, &len), 0);
	cr_assert_gt(len, (size_t)n);
	cr_expect(memcmp(buf, topic, (size_t)n) == 0, "topic first");
	cr_expect_eq((unsigned char)buf[n] & 0xf0, 0x80, "then a map");
	cr_assert_eq(pr_pub_decode(buf, len, &out, NULL, &a, err, sizeof(err)),
	    0, "%s", err);
	cr_expect(eq_event(&in, &out));
	free(buf);
	pr_arena_free(&a);
}

Test(proto, pub_carries_the_task_it_ends)
{
	struct pr_arena a = {0};
	struct pr_event in, out;
	struct pr_task t, tout;
	char *with, *without;
	size_t wlen, len;

	event_fill(&in);
	task_fill(&t);
	cr_assert_eq(pr_pub_encode(&in, &t, &with, &wlen), 0);
	cr_assert_eq(pr_pub_encode(&in, NULL, &without, &len), 0);
	/* The event's message as it was, then the task's map. */
	cr_assert_gt(wlen, len);
	cr_expect(memcmp(with, without, len) == 0);
	cr_expect_eq((unsigned char)with[len] & 0xf0, 0x80, "then a map");

	cr_assert_eq(
	    pr_pub_decode(with, wlen, &out, &tout, &a, err, sizeof(err)), 0,
	    "%s", err);
	cr_expect(eq_event(&in, &out));
	cr_expect(eq_task(&t, &tout));
	/* Dropped by a reader that does not want it. */
	cr_assert_eq(
	    pr_pub_decode(with, wlen, &out, NULL, &a, err, sizeof(err)), 0,
	    "%s", err);
	cr_expect(eq_event(&in, &out));
	/* Without one, none is made up. */
	memset(&tout, 0xa5, sizeof(tout));
	cr_assert_eq(
	    pr_pub_decode(without, len, &out, &tout, &a, err, sizeof(err)), 0,
	    "%s", err);
	cr_expect(all_zero(&tout, sizeof(tout)));
	free(with);
	free(without);
	pr_arena_free(&a);
}

/* The encoder refuses, and the decoder rejects, a task that is not the
 * one its event ends, and what follows the task. */
Test(proto, pub_task_is_its_events_alone)
{
	struct pr_event ev, other;
	struct pr_task t;
	char *with, *buf, *two;
	size_t wlen, elen, len;

	event_fill(&ev);
	task_fill(&t);
	t.task_id = "t2";
	cr_expect_neq(pr_pub_encode(&ev, &t, &buf, &len), 0, "other task");
	cr_expect_null(buf);
	task_fill(&t);
	t.space_id = "0190b0b2-7c1e-7000-8000-000000000003";
	cr_expect_neq(pr_pub_encode(&ev, &t, &buf, &len), 0, "other Space");
	task_fill(&t);
	t.workspace_id = "0190b0b2-7c1e-7000-8000-000000000003";
	cr_expect_neq(pr_pub_encode(&ev, &t, &buf, &len), 0, "other workspace");
	task_fill(&t);
	t.status = NULL;
	cr_expect_neq(pr_pub_encode(&ev, &t, &buf, &len), 0, "no status");
	task_fill(&t);
	t.capability = NULL;
	cr_expect_neq(pr_pub_encode(&ev, &t, &buf, &len), 0, "no capability");
	task_fill(&t);
	ev.task_id = NULL;
	cr_expect_neq(pr_pub_encode(&ev, &t, &buf, &len), 0, "no task event");

	/* t1's row behind an event of t2. */
	event_fill(&ev);
	cr_assert_eq(pr_pub_encode(&ev, &t, &with, &wlen), 0);
	cr_assert_eq(pr_pub_encode(&ev, NULL, &buf, &elen), 0);
	free(buf);
	event_fill(&other);
	other.task_id = "t2";
	cr_assert_eq(pr_pub_encode(&other, NULL, &buf, &len), 0);
	two = malloc(len + (wlen - elen) + 1);
	cr_assert_not_null(two);
	memcpy(two, buf, len);
	memcpy(two + len, with + elen, wlen - elen);
	pub_rejects(two, len + (wlen - elen), "another task's row");
	free(buf);

	/* Anything after the task. */
	memcpy(two, with, wlen);
	two[wlen] = 0x00;
	pub_rejects(two, wlen + 1, "a byte after the task");
	pub_rejects(two, wlen - 1, "a task cut short");
	free(two);
	free(with);
}

/* Publishes `topic` followed by an event map with the given ids. */
static void
raw_pub(struct mp *m, const char *topic, const char *ws, const char *sp)
{
	mp_put(m, topic, strlen(topic));
	mp_map(m, (ws != NULL) + (sp != NULL) + 1);
	if (ws != NULL)
		mp_kv(m, "workspace_id", ws);
	if (sp != NULL)
		mp_kv(m, "space_id", sp);
	mp_kv(m, "kind", "space.closed");
}

Test(proto, pub_topic_must_match_record)
{
	static const struct {
		const char *topic, *ws, *sp, *why;
	} bad[] = {
	    {"ev/w1/s2/", "w1", "s1", "space differs"},
	    {"ev/w2/s1/", "w1", "s1", "workspace differs"},
	    {"ev/w/s1/", "w1", "s1", "workspace prefix"},
	    {"ev/w1/s/", "w1", "s1", "space prefix"},
	    {"ev/w1/s1/", "w1", NULL, "no space_id"},
	    {"ev/w1/s1/", NULL, "s1", "no workspace_id"},
	    {"ev//s1/", "", "s2", "empty workspace, other space"},
	    {"xv/w1/s1/", "w1", "s1", "wrong prefix"},
	    {"ev/w1/s1", "w1", "s1", "no third slash"},
	    {"", "w1", "s1", "no topic"},
	};
	struct pr_arena a = {0};
	struct pr_event ev;
	struct mp m = {0};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		raw_pub(&m, bad[i].topic, bad[i].ws, bad[i].sp);
		pub_rejects(m.b, m.n, bad[i].why);
		mp_free(&m);
	}

	raw_pub(&m, "ev/w1/s1/", "w1", "s1");
	cr_assert_eq(pr_pub_decode(m.b, m.n, &ev, NULL, &a, err, sizeof(err)),
	    0, "%s", err);
	cr_expect_str_eq(ev.kind, "space.closed");
	mp_free(&m);

	/* Topic fine, body broken. */
	mp_put(&m, "ev/w1/s1/", 9);
	mp_map(&m, 1);
	mp_kv(&m, "bogus", "x");
	pub_rejects(m.b, m.n, "unknown key");
	mp_free(&m);
	pr_arena_free(&a);
}

Test(proto, pub_encode_enforces_bounds)
{
	struct pr_event ev;
	char *buf, *long_kind = xstr(33);
	size_t len;

	event_fill(&ev);
	ev.space_id = NULL;
	cr_expect_neq(pr_pub_encode(&ev, NULL, &buf, &len), 0, "no space_id");
	event_fill(&ev);
	ev.workspace_id = "a/b";
	cr_expect_neq(pr_pub_encode(&ev, NULL, &buf, &len), 0, "slash in id");
	event_fill(&ev);
	ev.kind = long_kind;
	cr_expect_neq(pr_pub_encode(&ev, NULL, &buf, &len), 0, "kind over 32");
	cr_expect_null(buf);
	free(long_kind);
}

/* ---- memory ---------------------------------------------------------------
 */

Test(proto, arena)
{
	static const size_t sizes[] = {
	    0, 1, 7, 16, 1000, 1024, 1025, 4096, 5000, 3, 100000, 2, 4095};
	struct pr_arena a = {0};
	char *s;

	for (int round = 0; round < 3; round++) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			unsigned char *p = pr_arena_alloc(&a, sizes[i]);

			cr_assert_not_null(p, "size %zu", sizes[i]);
			cr_expect_eq((uintptr_t)p % _Alignof(max_align_t), 0);
			cr_expect(all_zero(p, sizes[i]), "size %zu", sizes[i]);
			memset(p, 0xff, sizes[i]); /* ASan checks the extent */
		}
	}
	s = pr_arena_strdup(&a, "hello");
	cr_expect_str_eq(s, "hello");
	s = pr_arena_strndup(&a, "hello", 3);
	cr_expect_str_eq(s, "hel");
	s = pr_arena_strndup(&a, "hi\0there", 8);
	cr_expect_str_eq(s, "hi");
	cr_expect_null(pr_arena_strdup(&a, NULL));
	cr_expect_null(pr_arena_strndup(&a, NULL, 4));
	pr_arena_free(&a);
	cr_expect_null(a.head);
	pr_arena_free(&a); /* twice is fine */
	pr_arena_free(NULL);

	struct pr_req rq = {0};
	struct pr_rep rp = {0};

	pr_req_free(&rq);
	pr_rep_free(&rp);
	cr_expect_null(pr_rep_strdup(&rp, NULL));
	cr_expect_str_eq(pr_rep_strdup(&rp, "x"), "x");
	cr_expect_not_null(pr_rep_alloc(&rp, 10));
	pr_rep_free(&rp);
	cr_expect(all_zero(&rp, sizeof(rp)));
}

Test(proto, late_failure_frees_everything)
{
	struct mp m = {0};

	/* Strings are copied into the arena before the bad key is reached. */
	mp_map(&m, 3);
	mp_kv(&m, "op", "space.get");
	mp_kv(&m, "workspace_id", "w");
	mp_kv(&m, "bogus", "x");
	mp_req_rejects(&m, "request");

	mp_map(&m, 2);
	mp_str(&m, "tasks");
	mp_arr(&m, 2);
	mp_map(&m, 1);
	mp_kv(&m, "task_id", "t1");
	mp_map(&m, 1);
	mp_kv(&m, "task_id", "t2");
	mp_str(&m, "err");
	mp_str(&m, "bogus");
	mp_rep_rejects(&m, "reply");
}

Test(proto, encoder_rejects_broken_structs)
{
	struct pr_req r;
	struct pr_rep rep = {0};
	struct pr_space sp = {0};
	const char *null_item[] = {NULL};
	char *buf;
	size_t len;

	memset(&r, 0, sizeof(r));
	r.op = PR_OP__COUNT;
	cr_expect_neq(pr_req_encode(&r, &buf, &len), 0, "op out of range");
	r.op = (enum pr_op) - 1;
	cr_expect_neq(pr_req_encode(&r, &buf, &len), 0, "negative op");

	req_fill(&r, PR_OP_SPACE_CREATE, ops[PR_OP_SPACE_CREATE].req);
	r.granted = (struct pr_strlist){2, NULL};
	cr_expect_neq(pr_req_encode(&r, &buf, &len), 0, "strlist without v");
	r.granted = (struct pr_strlist){1, null_item};
	cr_expect_neq(pr_req_encode(&r, &buf, &len), 0, "NULL item");

	rep.n_spaces = 1;
	cr_expect_neq(pr_rep_encode(&rep, &buf, &len), 0, "list without ptr");
	rep.spaces = &sp;
	cr_expect_eq(pr_rep_encode(&rep, &buf, &len), 0);
	free(buf);
}

/* ---- space.page_event -----------------------------------------------------
 */

/* A page event as the actor sends one: a dialog during a task. */
static void
page_event_fill(struct pr_req *r)
{
	memset(r, 0, sizeof(*r));
	r->op = PR_OP_SPACE_PAGE_EVENT;
	r->op_id = "0190c0de-0000-7000-8000-000000000001";
	r->space_id = "sp-1";
	r->task_id = "task-1";
	r->kind = "dialog";
	r->payload = "{\"type\":\"alert\",\"message\":\"Saved \\u00e9\","
	             "\"accepted\":false}";
}

Test(proto, page_event_round_trips_with_and_without_its_task)
{
	struct pr_req in, out;
	char *buf;
	size_t len;

	cr_expect_str_eq(
	    pr_op_name(PR_OP_SPACE_PAGE_EVENT), "space.page_event");
	cr_expect(pr_op_is_write(PR_OP_SPACE_PAGE_EVENT));
	for (int with_task = 1; with_task >= 0; with_task--) {
		page_event_fill(&in);
		if (!with_task)
			in.task_id = NULL;
		cr_assert_eq(pr_req_encode(&in, &buf, &len), 0);
		cr_assert_eq(dec_req(buf, len, &out), 0, "%s", err);
		free(buf);
		cr_expect(req_eq(&in, &out), "with_task %d differs", with_task);
		cr_expect_eq(out.op, PR_OP_SPACE_PAGE_EVENT);
		cr_expect_str_eq(out.payload, in.payload);
		if (with_task)
			cr_expect_str_eq(out.task_id, "task-1");
		else
			cr_expect_null(out.task_id);
		pr_req_free(&out);
	}
}

Test(proto, page_event_rejects_what_is_not_one)
{
	uint64_t page =
	    ops[PR_OP_SPACE_PAGE_EVENT].req | ops[PR_OP_SPACE_PAGE_EVENT].opt;
	struct pr_req r;
	struct mp m = {0};
	char *big, *buf;
	size_t len;

	/* Each required field, left out. */
	page_event_fill(&r);
	mp_req(&m, &r, page & ~PRM(KIND));
	mp_req_rejects(&m, "no kind");
	mp_req(&m, &r, page & ~PRM(PAYLOAD));
	mp_req_rejects(&m, "no payload");
	mp_req(&m, &r, page & ~PRM(SPACE_ID));
	mp_req_rejects(&m, "no space_id");
	mp_req(&m, &r, page & ~PRM(OP_ID));
	mp_req_rejects(&m, "no op_id");
	/* A field of network_blocked's is none of this op's. */
	r.host = "example.com";
	mp_req(&m, &r, page | PRM(HOST));
	mp_req_rejects(&m, "host");
	cr_expect_neq(pr_req_encode(&r, &buf, &len), 0, "encoded with host");
	r.host = NULL;
	/* The payload within its bound, and one byte over. */
	big = xstr(CM_PAGE_EVENT_PAYLOAD_MAX);
	r.payload = big;
	cr_expect_eq(pr_req_encode(&r, &buf, &len), 0, "payload at its bound");
	free(buf);
	free(big);
	big = xstr(CM_PAGE_EVENT_PAYLOAD_MAX + 1);
	r.payload = big;
	mp_req(&m, &r, page);
	mp_req_rejects(&m, "payload over its bound");
	cr_expect_neq(
	    pr_req_encode(&r, &buf, &len), 0, "payload over its bound encoded");
	free(big);
	/* The payload is a string, never a map. */
	page_event_fill(&r);
	mp_map(&m, 5);
	mp_kv(&m, "op", "space.page_event");
	mp_kv(&m, "op_id", r.op_id);
	mp_kv(&m, "space_id", r.space_id);
	mp_kv(&m, "kind", r.kind);
	mp_str(&m, "payload");
	mp_map(&m, 0);
	mp_req_rejects(&m, "payload as a map");
}

/* The store's beat: a serial round-trips at every msgpack width, and
 * nothing but "bt/" and one unsigned integer decodes; a header that
 * claims 4 G elements is refused without an allocation. */
Test(proto, beat_round_trips_and_refuses_the_rest)
{
	static const int64_t serials[] = {0, 1, 127, 128, 255, 256, 65535,
	    65536, 4294967295LL, 4294967296LL, INT64_MAX};
	static const char *const bad[] = {"bt/", "bt/\xdd\xff\xff\xff\xff",
	    "ev/\x01", "bt/\xff", "bt/\xcd\x01", "bt/\x01\x02", "bt/\xa1x"};
	int64_t got;
	char *buf;
	size_t len;

	for (size_t i = 0; i < sizeof(serials) / sizeof(serials[0]); i++) {
		cr_assert_eq(pr_beat_encode(serials[i], &buf, &len), 0);
		cr_assert_eq(pr_beat_decode(buf, len, &got), 0);
		cr_assert_eq(got, serials[i]);
		free(buf);
	}
	cr_assert_neq(pr_beat_encode(-1, &buf, &len), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_neq(pr_beat_decode(bad[i], strlen(bad[i]), &got), 0,
		    "beat %zu decoded", i);
	/* 2^63: past int64_t. */
	cr_assert_neq(
	    pr_beat_decode("bt/\xcf\x80\x00\x00\x00\x00\x00\x00\x00", 12, &got),
	    0);
}
