/*
 * proto_int.h: what the codec's files share: the tables proto.c builds
 * from the X-macros in proto.h (and encodes with), which proto_dec.c
 * decodes with, and the arena's raw allocator (proto_arena.c).  Nothing
 * outside the codec includes it; everyone else sees proto.h.
 */
#ifndef CM_PROTO_INT_H
#define CM_PROTO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/* Kinds that only the codec itself knows, beyond the wire types. */
enum { PR_K_OP = PR_BIN + 1, PR_K_ERR, PR_K_RECS };

struct pr_fdesc {
	const char *name;
	int type;
	size_t off;
	size_t max; /* bytes, items, or for PR_K_RECS the record index */
};

struct pr_rdesc {
	size_t size;
	size_t list_off, n_off; /* the list and its count in struct pr_rep */
	const struct pr_fdesc *f;
	size_t nf;
};

/* A seen-keys bitmask is one uint64_t, so no map may have more keys. */
#define PR_KEYS_MAX 64

#define PR_NROWS(t) (sizeof(t) / sizeof((t)[0]))

/* Each op: its wire name, whether it writes, its required and optional
 * fields (bit i is field PR_F_i). */
struct pr_opdesc {
	const char *name;
	bool write;
	uint64_t req, opt;
};
extern const struct pr_opdesc pr_op_tab[PR_OP__COUNT];

/* Row 0 is "op" (encoded first); field e is row 1 + PR_F_e. */
extern const struct pr_fdesc pr_req_tab[1 + PR_F__COUNT];

enum {
#define PR_R_ENUM(tag, list, fields) PR_R_##tag,
	PR_RECORDS(PR_R_ENUM)
#undef PR_R_ENUM
	    PR_R__COUNT
};

/* The reply's rows: err, msg, created, cancel_requested, close_requested,
 * args, count, then one per record list.  A table of more rows does not
 * compile (proto.c defines it with this declaration in view), and one of
 * fewer fails proto.c's check of its last row. */
#define PR_REP_NROWS (8 + PR_R__COUNT)
extern const struct pr_fdesc pr_rep_tab[PR_REP_NROWS];

/* The table of record i (a PR_R_ value; anything else aborts). */
const struct pr_rdesc *pr_rec(size_t i);

/*
 * n bytes aligned to align from the arena, NOT zeroed (chunks come from
 * malloc); NULL when memory is short.  They live until pr_arena_free.
 */
void *pr_arena_take(struct pr_arena *a, size_t n, size_t align);

#endif
