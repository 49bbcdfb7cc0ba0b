/*
 * test_proto_alloc.c: the proto.h decoders when memory runs out.
 *
 * Every message kind (a request of each op with every field it may carry,
 * a reply with records of each kind, an internal event) is decoded again
 * and again with its Nth allocation failing, for N = 1, 2, ... until a
 * decode makes fewer than N: the allocations of msgpack-c (its zone) and
 * ours (the arena) alike, through failmalloc.h.  Each failed decode must
 * return an error, leave nothing allocated (the decoder frees what it
 * took; for an event, the caller's arena), and crash nowhere; under ASan
 * (make test-sanitize) no block may be touched after it is freed.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failmalloc.h"
#include "proto.h"

/* As many names as a grant may hold: their objects outgrow the first
 * chunk of msgpack-c's zone. */
static const char *const caps[CM_GRANTED_MAX] = {"navigate", "click",
    "snapshot", "screenshot", "type", "scroll", "wait_for", "extract_text",
    "c08", "c09", "c10", "c11", "c12", "c13", "c14", "c15", "c16", "c17", "c18",
    "c19", "c20", "c21", "c22", "c23", "c24", "c25", "c26", "c27", "c28", "c29",
    "c30", "c31"};
static const unsigned char bytes[] = {0x89, 'P', 'N', 'G', 0, 1, 2};

/* Sets a field of any type to a value within its bound. */
#define FILL_PR_STR(p, name) (*(p) = (name))
#define FILL_PR_INT(p, name) (*(p) = 7)
#define FILL_PR_BOOL(p, name) (*(p) = true)
#define FILL_PR_STRLIST(p, name) \
	(*(p) = (struct pr_strlist){CM_GRANTED_MAX, (const char **)caps})
#define FILL_PR_BIN(p, name) (*(p) = (struct pr_bin){sizeof(bytes), bytes})

/* The ops, with the fields each may carry (required | optional). */
static const struct {
	enum pr_op op;
	uint64_t fields;
} ops[] = {
#define OP_ROW(e, n, w, rq, op) {PR_OP_##e, (rq) | (op)},
    PR_OPS(OP_ROW)
#undef OP_ROW
};

/* A request of op with every field it may carry. */
static void
encode_req(size_t i, char **buf, size_t *len)
{
	struct pr_req q;

	memset(&q, 0, sizeof(q));
	q.op = ops[i].op;
#define REQ_FILL(e, m, t, max)      \
	if (ops[i].fields & PRM(e)) \
		FILL_##t(&q.m, #m);
	PR_REQ_FIELDS(REQ_FILL)
#undef REQ_FILL
	cr_assert_eq(pr_req_encode(&q, buf, len), 0, "%s", pr_op_name(q.op));
}

/* Records of every kind, three of each: enough that msgpack-c's zone
 * grows past its first chunk. */
#define N_RECS 3
#define REC_ARRAY(tag, list, fields) static struct pr_##tag list[N_RECS];
PR_RECORDS(REC_ARRAY)
#undef REC_ARRAY

/* A reply carrying only the list of record kind k (and its scalars). */
static void
encode_rep(int k, char **buf, size_t *len)
{
	struct pr_rep r;
	int kind = 0;

	memset(&r, 0, sizeof(r));
	r.err = CM_E_NOT_FOUND;
	r.msg = "no such thing";
	r.created = r.cancel_requested = r.close_requested = true;
	r.args = "{\"url\":\"https://example.com/\"}";
	r.count = 3;
#define REC_FIELD(m, t, max) FILL_##t(&rec->m, #m);
#define REP_FILL(tag, list, fields)                      \
	if (kind++ == k) {                               \
		for (size_t j = 0; j < N_RECS; j++) {    \
			struct pr_##tag *rec = &list[j]; \
			fields(REC_FIELD)                \
		}                                        \
		r.list = list;                           \
		r.n_##list = N_RECS;                     \
	}
	PR_RECORDS(REP_FILL)
#undef REP_FILL
	cr_assert_eq(pr_rep_encode(&r, buf, len), 0, "record kind %d", k);
}

static int
n_record_kinds(void)
{
	int n = 0;
#define COUNT(tag, list, fields) n++;
	PR_RECORDS(COUNT)
#undef COUNT
	return n;
}

enum kind { REQ, REP, PUB };

/* One decode of buf with its fail_at-th allocation failing; returns the
 * decoder's verdict and sets *made to the allocations it made. */
static int
decode_once(enum kind k, const char *buf, size_t len, unsigned long fail_at,
    unsigned long *made, char *err, size_t errlen)
{
	struct pr_arena arena = {0};
	struct pr_event ev;
	struct pr_req q;
	struct pr_rep r;
	int rv;

	fm_arm(fail_at, false);
	err[0] = '\0';
	rv = k == REQ ? pr_req_decode(buf, len, &q, err, errlen)
	     : k == REP
	         ? pr_rep_decode(buf, len, &r, err, errlen)
	         : pr_pub_decode(buf, len, &ev, NULL, &arena, err, errlen);
	*made = fm_disarm();
	if (rv != 0 && k != PUB)
		/* The decoder itself frees what it took. */
		cr_assert_eq(
		    fm_live(), 0, "a failed decode left %zu blocks", fm_live());
	if (rv == 0 && k == REQ)
		pr_req_free(&q);
	if (rv == 0 && k == REP)
		pr_rep_free(&r);
	pr_arena_free(&arena);
	cr_assert_eq(fm_live(), 0, "%zu blocks left", fm_live());
	return rv;
}

/*
 * Sweeps N over every allocation a decode of buf makes; returns how many
 * there were.  A decode whose Nth allocation failed is an error that says
 * so (not "malformed": the message was fine); one that made fewer than N
 * allocations succeeds.
 */
static unsigned long
sweep(enum kind k, const char *buf, size_t len, const char *what)
{
	unsigned long made, n;
	char err[128];

	for (n = 1;; n++) {
		int rv = decode_once(k, buf, len, n, &made, err, sizeof(err));

		if (made < n) {
			cr_assert_eq(rv, 0, "%s: no fault, yet %s", what, err);
			break;
		}
		cr_assert_neq(rv, 0,
		    "%s: allocation %lu of %lu failed, yet decoded", what, n,
		    made);
		cr_assert_str_eq(err, "out of memory",
		    "%s: allocation %lu of %lu failed: %s", what, n, made, err);
	}
	cr_assert_gt(n, 1, "%s: decoded without allocating", what);
	cr_assert_not(fm_overflow);
	return n - 1;
}

Test(proto_alloc, every_request_fails_cleanly_at_every_allocation)
{
	unsigned long most = 0;

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		char *buf;
		size_t len;
		unsigned long n;

		encode_req(i, &buf, &len);
		n = sweep(REQ, buf, len, pr_op_name(ops[i].op));
		most = n > most ? n : most;
		free(buf);
	}
	/* The largest grows msgpack-c's zone past its first chunk. */
	cr_assert_geq(most, 3);
}

Test(proto_alloc, every_reply_fails_cleanly_at_every_allocation)
{
	for (int k = 0; k < n_record_kinds(); k++) {
		char *buf, what[32];
		size_t len;

		encode_rep(k, &buf, &len);
		snprintf(what, sizeof(what), "reply of record kind %d", k);
		/* msgpack's zone, its second chunk, and the arena's. */
		cr_assert_geq(sweep(REP, buf, len, what), 2, "%s", what);
		free(buf);
	}
}

Test(proto_alloc, an_event_fails_cleanly_at_every_allocation)
{
	struct pr_event ev = {.space_id = "sp-1",
	    .workspace_id = "ws-1",
	    .task_id = "tk-1",
	    .sequence = 9,
	    .kind = "task_finished",
	    .payload = "{\"status\":\"succeeded\"}",
	    .created_at = 1};
	static const char *keys[] = {"url"};
	struct pr_task t = {.task_id = "tk-1",
	    .space_id = "sp-1",
	    .workspace_id = "ws-1",
	    .capability = "browser.navigate",
	    .arg_keys = {1, keys},
	    .status = "completed",
	    .result = "{\"status\":200}"};
	char *buf;
	size_t len;

	cr_assert_eq(pr_pub_encode(&ev, NULL, &buf, &len), 0);
	sweep(PUB, buf, len, "event");
	free(buf);
	cr_assert_eq(pr_pub_encode(&ev, &t, &buf, &len), 0);
	sweep(PUB, buf, len, "event with its task");
	free(buf);
}

/* Every allocation from the Nth on failing, as when memory is gone for
 * good rather than for one call. */
Test(proto_alloc, a_decode_with_no_memory_left_fails_cleanly)
{
	unsigned long made, n;
	struct pr_rep r;
	char *buf, err[128];
	size_t len;

	encode_rep(0, &buf, &len);
	fm_arm(0, false);
	cr_assert_eq(pr_rep_decode(buf, len, &r, err, sizeof(err)), 0);
	made = fm_disarm();
	pr_rep_free(&r);
	for (n = 1; n <= made; n++) {
		fm_arm(n, true);
		cr_assert_neq(pr_rep_decode(buf, len, &r, err, sizeof(err)), 0);
		fm_disarm();
		cr_assert_eq(fm_live(), 0);
		cr_assert_str_eq(err, "out of memory");
	}
	free(buf);
}
