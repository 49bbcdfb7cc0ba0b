/*
 * proto.c: one table-driven msgpack codec for every message in proto.h.
 *
 * Each message shape is a table of {wire name, type, offset, max} rows
 * generated from the X-macros in proto.h, so a field is declared exactly
 * once and the encoder, the decoder and the bounds can never disagree.
 *
 * This file owns the tables (shared through proto_int.h) and the encoder;
 * the decoder is proto_dec.c's, the arena and the reply builders are
 * proto_arena.c's.
 */
#include "proto.h"
#include "proto_int.h"

#include <msgpack.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- tables -------------------------------------------------------------- */

const struct pr_opdesc pr_op_tab[PR_OP__COUNT] = {
#define PR_OP_ROW(e, n, w, rq, op) [PR_OP_##e] = {n, w, rq, op},
    PR_OPS(PR_OP_ROW)
#undef PR_OP_ROW
};

/* Row 0 is "op" (encoded first); field e is row 1 + PR_F_e. */
const struct pr_fdesc pr_req_tab[1 + PR_F__COUNT] = {
    [0] = {"op", PR_K_OP, offsetof(struct pr_req, op), 0},
#define PR_REQ_ROW(e, m, t, max) \
	[1 + PR_F_##e] = {#m, t, offsetof(struct pr_req, m), max},
    PR_REQ_FIELDS(PR_REQ_ROW)
#undef PR_REQ_ROW
};
_Static_assert(1 + PR_F__COUNT <= PR_KEYS_MAX, "too many request fields");

/*
 * Record rows need offsetof(struct pr_<tag>, m) but the field macros do not
 * name their struct, so each case gets a block-scope typedef for it.
 */
#define PR_ROW(m, t, max) {#m, t, offsetof(pr_cur_t, m), max},
const struct pr_rdesc *
pr_rec(size_t i)
{
	switch (i) {
#define PR_REC_CASE(tag, list, fields)                                  \
	case PR_R_##tag: {                                              \
		typedef struct pr_##tag pr_cur_t;                       \
		static const struct pr_fdesc f[] = {fields(PR_ROW)};    \
		static const struct pr_rdesc d = {sizeof(pr_cur_t),     \
		    offsetof(struct pr_rep, list),                      \
		    offsetof(struct pr_rep, n_##list), f,               \
		    sizeof(f) / sizeof(f[0])};                          \
		_Static_assert(sizeof(f) / sizeof(f[0]) <= PR_KEYS_MAX, \
		    "too many record fields");                          \
		return &d;                                              \
	}
		PR_RECORDS(PR_REC_CASE)
#undef PR_REC_CASE
	}
	abort(); /* only ever called with an index from pr_rep_tab */
}
#undef PR_ROW

#define PR_REP_ROW(tag, list, fields) \
	{#list, PR_K_RECS, offsetof(struct pr_rep, list), PR_R_##tag},
#define PR_REP_ROWS                                                           \
	{"err", PR_K_ERR, offsetof(struct pr_rep, err), CM_ERROR_CODE_MAX},   \
	    {"msg", PR_STR, offsetof(struct pr_rep, msg),                     \
	        CM_ERROR_MESSAGE_MAX},                                        \
	    {"created", PR_BOOL, offsetof(struct pr_rep, created), 0},        \
	    {"cancel_requested", PR_BOOL,                                     \
	        offsetof(struct pr_rep, cancel_requested), 0},                \
	    {"close_requested", PR_BOOL,                                      \
	        offsetof(struct pr_rep, close_requested), 0},                 \
	    {"args", PR_STR, offsetof(struct pr_rep, args), CM_ARGS_MAX},     \
	    {"count", PR_INT, offsetof(struct pr_rep, count), 0},             \
	    {"feed_serial", PR_INT, offsetof(struct pr_rep, feed_serial), 0}, \
	    PR_RECORDS(PR_REP_ROW)
const struct pr_fdesc pr_rep_tab[] = {PR_REP_ROWS};
/* Exactly as many rows as declared (proto_int.h). */
_Static_assert(
    sizeof((const struct pr_fdesc[]){PR_REP_ROWS}) == sizeof(pr_rep_tab),
    "PR_REP_NROWS is not the number of reply rows");
#undef PR_REP_ROWS
#undef PR_REP_ROW
_Static_assert(PR_NROWS(pr_rep_tab) <= PR_KEYS_MAX, "too many reply keys");

const char *
pr_op_name(enum pr_op op)
{
	/* Never NULL, so a caller can log it; "unknown" never decodes. */
	if ((unsigned)op >= PR_OP__COUNT)
		return "unknown";
	return pr_op_tab[op].name;
}

bool
pr_op_is_write(enum pr_op op)
{
	return (unsigned)op < PR_OP__COUNT && pr_op_tab[op].write;
}

size_t
pr_req_max(enum pr_op op)
{
	if ((unsigned)op < PR_OP__COUNT &&
	    ((pr_op_tab[op].req | pr_op_tab[op].opt) & PRM(ARTIFACT)))
		return CM_STORE_RECV_MAX;
	return CM_REQ_MSG_MAX;
}

/* ---- encoding ------------------------------------------------------------ */

static bool
enc_present(const struct pr_fdesc *f, const void *base)
{
	const char *p = (const char *)base + f->off;

	switch (f->type) {
	case PR_STR:
		return *(const char *const *)p != NULL;
	case PR_INT:
		return *(const int64_t *)p != 0;
	case PR_BOOL:
		return *(const bool *)p;
	case PR_STRLIST:
		return ((const struct pr_strlist *)p)->n != 0;
	case PR_BIN:
		return ((const struct pr_bin *)p)->n != 0;
	case PR_K_OP:
		return true;
	case PR_K_ERR:
		return *(const enum cm_err *)p != CM_OK;
	default: /* PR_K_RECS */
		return *(const size_t *)((const char *)base +
		                         pr_rec(f->max)->n_off) != 0;
	}
}

static int
enc_str(msgpack_packer *pk, const char *s, size_t max)
{
	/* strnlen: a bound violation costs at most max + 1 bytes of reading. */
	size_t n = s == NULL ? max + 1 : strnlen(s, max + 1);

	if (n > max)
		return -1;
	return msgpack_pack_str(pk, n) || msgpack_pack_str_body(pk, s, n);
}

static int enc_map(msgpack_packer *pk, const struct pr_fdesc *tab, size_t nt,
    const void *base);

static int
enc_value(msgpack_packer *pk, const struct pr_fdesc *f, const void *base)
{
	const char *p = (const char *)base + f->off;
	const struct pr_strlist *sl;
	const struct pr_rdesc *rd;
	const struct pr_bin *bin;
	const char *items;
	size_t i, n;

	switch (f->type) {
	case PR_STR:
		return enc_str(pk, *(const char *const *)p, f->max);
	case PR_INT:
		return msgpack_pack_int64(pk, *(const int64_t *)p);
	case PR_BOOL:
		return msgpack_pack_true(pk);
	case PR_STRLIST:
		sl = (const struct pr_strlist *)p;
		if (sl->n > f->max || sl->v == NULL ||
		    msgpack_pack_array(pk, sl->n) != 0)
			return -1;
		for (i = 0; i < sl->n; i++)
			if (enc_str(pk, sl->v[i], CM_CAPABILITY_MAX) != 0)
				return -1;
		return 0;
	case PR_BIN:
		bin = (const struct pr_bin *)p;
		if (bin->n > f->max || bin->p == NULL)
			return -1;
		return msgpack_pack_bin(pk, bin->n) ||
		       msgpack_pack_bin_body(pk, bin->p, bin->n);
	case PR_K_OP:
		n = *(const enum pr_op *)p; /* negative: huge, so refused */
		if (n >= PR_OP__COUNT)
			return -1;
		return enc_str(pk, pr_op_tab[n].name, CM_NAME_MAX);
	case PR_K_ERR:
		n = *(const enum cm_err *)p;
		if (n >= CM_ERR__COUNT)
			return -1;
		return enc_str(pk, cm_err_code((enum cm_err)n), f->max);
	default: /* PR_K_RECS */
		rd = pr_rec(f->max);
		items = *(const char *const *)p;
		n = *(const size_t *)((const char *)base + rd->n_off);
		if (n > CM_PROTO_LIST_MAX || items == NULL ||
		    msgpack_pack_array(pk, n) != 0)
			return -1;
		for (i = 0; i < n; i++)
			if (enc_map(pk, rd->f, rd->nf, items + i * rd->size))
				return -1;
		return 0;
	}
}

/* Omitted rows (enc_present false) are what the decoder leaves zeroed. */
static int
enc_map(
    msgpack_packer *pk, const struct pr_fdesc *tab, size_t nt, const void *base)
{
	size_t i, n = 0;

	for (i = 0; i < nt; i++)
		n += enc_present(&tab[i], base);
	if (msgpack_pack_map(pk, n) != 0)
		return -1;
	for (i = 0; i < nt; i++) {
		if (!enc_present(&tab[i], base))
			continue;
		if (enc_str(pk, tab[i].name, CM_NAME_MAX) != 0 ||
		    enc_value(pk, &tab[i], base) != 0)
			return -1;
	}
	return 0;
}

/*
 * An encode buffer starts small enough for the allocator's per-thread
 * cache (about a kilobyte in glibc); msgpack's own first allocation is
 * 8 KiB, which every request, reply and event would take from the heap's
 * bins and give back.  Most messages fit; a larger one doubles as usual.
 */
#define PR_ENC_FIRST 960

static void
enc_init(msgpack_sbuffer *sb, msgpack_packer *pk)
{
	msgpack_sbuffer_init(sb);
	if ((sb->data = malloc(PR_ENC_FIRST)) != NULL)
		sb->alloc = PR_ENC_FIRST;
	msgpack_packer_init(pk, sb, msgpack_sbuffer_write);
}

/* Takes rv from the packing; hands the buffer over only on success. */
static int
enc_finish(msgpack_sbuffer *sb, int rv, char **buf, size_t *len)
{
	if (rv != 0 || sb->size > CM_MSG_MAX) {
		msgpack_sbuffer_destroy(sb);
		return -1;
	}
	*buf = sb->data;
	*len = sb->size;
	return 0;
}

int
pr_req_encode(const struct pr_req *r, char **buf, size_t *len)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	uint64_t allowed, bit;
	bool present;
	size_t i;

	*buf = NULL;
	*len = 0;
	if ((unsigned)r->op >= PR_OP__COUNT)
		return -1;
	/* Refuse what the receiver would refuse, so the bug shows up here. */
	allowed = pr_op_tab[r->op].req | pr_op_tab[r->op].opt;
	for (i = 0; i < PR_F__COUNT; i++) {
		bit = UINT64_C(1) << i;
		present = enc_present(&pr_req_tab[1 + i], r);
		if ((present && !(allowed & bit)) ||
		    (!present && (pr_op_tab[r->op].req & bit)))
			return -1;
	}
	enc_init(&sb, &pk);
	if (enc_finish(&sb, enc_map(&pk, pr_req_tab, PR_NROWS(pr_req_tab), r),
	        buf, len) != 0)
		return -1;
	if (*len > pr_req_max(r->op)) {
		free(*buf);
		*buf = NULL;
		*len = 0;
		return -1;
	}
	return 0;
}

int
pr_rep_encode(const struct pr_rep *r, char **buf, size_t *len)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;

	*buf = NULL;
	*len = 0;
	enc_init(&sb, &pk);
	return enc_finish(
	    &sb, enc_map(&pk, pr_rep_tab, PR_NROWS(pr_rep_tab), r), buf, len);
}

/* ---- internal events ----------------------------------------------------- */

int
pr_event_topic(
    const char *workspace_id, const char *space_id, char *buf, size_t len)
{
	int n;

	/* A '/' inside an id would move the topic's field boundaries. */
	if (workspace_id == NULL || space_id == NULL ||
	    strchr(workspace_id, '/') != NULL || strchr(space_id, '/') != NULL)
		return -1;
	n = snprintf(buf, len, "ev/%s/%s/", workspace_id, space_id);
	if (n < 0 || (size_t)n >= len || n >= CM_TOPIC_MAX)
		return -1;
	return n;
}

int
pr_pub_encode(const struct pr_event *ev, const struct pr_task *task, char **buf,
    size_t *len)
{
	const struct pr_rdesc *rd = pr_rec(PR_R_event);
	const struct pr_rdesc *td = pr_rec(PR_R_task);
	char topic[CM_TOPIC_MAX];
	msgpack_sbuffer sb;
	msgpack_packer pk;
	int n;

	*buf = NULL;
	*len = 0;
	if ((n = pr_event_topic(
	         ev->workspace_id, ev->space_id, topic, sizeof(topic))) < 0)
		return -1;
	/* A task rides only with an event of that task. */
	if (task != NULL && !pr_pub_task_fits(ev, task))
		return -1;
	enc_init(&sb, &pk);
	return enc_finish(&sb,
	    msgpack_sbuffer_write(&sb, topic, (size_t)n) ||
	        enc_map(&pk, rd->f, rd->nf, ev) ||
	        (task != NULL && enc_map(&pk, td->f, td->nf, task)),
	    buf, len);
}

int
pr_beat_encode(int64_t serial, char **buf, size_t *len)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;

	*buf = NULL;
	*len = 0;
	if (serial < 0)
		return -1;
	enc_init(&sb, &pk);
	return enc_finish(&sb,
	    msgpack_sbuffer_write(&sb, PR_BEAT_TOPIC, strlen(PR_BEAT_TOPIC)) ||
	        msgpack_pack_int64(&pk, serial),
	    buf, len);
}

bool
pr_pub_task_fits(const struct pr_event *ev, const struct pr_task *task)
{
	return ev->task_id != NULL && task->task_id != NULL &&
	       strcmp(ev->task_id, task->task_id) == 0 &&
	       task->space_id != NULL &&
	       strcmp(ev->space_id, task->space_id) == 0 &&
	       task->workspace_id != NULL &&
	       strcmp(ev->workspace_id, task->workspace_id) == 0 &&
	       task->capability != NULL && task->status != NULL;
}

/* ---- live frames --------------------------------------------------------- */

int
pr_frame_encode(const struct pr_frame *f, char **buf, size_t *len)
{
	const struct pr_rdesc *rd = pr_rec(PR_R_frame);
	msgpack_sbuffer sb;
	msgpack_packer pk;

	*buf = NULL;
	*len = 0;
	enc_init(&sb, &pk);
	if (enc_finish(&sb, enc_map(&pk, rd->f, rd->nf, f), buf, len) != 0)
		return -1;
	if (*len > CM_LIVE_MSG_MAX) {
		free(*buf);
		*buf = NULL;
		*len = 0;
		return -1;
	}
	return 0;
}
