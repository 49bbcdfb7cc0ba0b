/*
 * reply.h: building a handler's reply (struct pr_rep) in its arena: a
 * list grown by one, a JSON array of strings as a string list, and the
 * answer to a database failure.  Internal to the store.
 */
#ifndef ST_REPLY_H
#define ST_REPLY_H

#include <stddef.h>

#include "proto.h"

struct st_ctx;

/* Sets rep to CM_E_INTERNAL for a database failure and logs it, with
 * what failed and the database's own message. */
void st_db_failed(struct st_ctx *ctx, struct pr_rep *rep, const char *what);

/*
 * Grows a reply list (*list, *n elements of size bytes) by one zeroed
 * element in rep's arena and returns it; NULL past CM_PROTO_LIST_MAX or
 * on allocation failure, the list unchanged.
 */
void *st_rep_push(struct pr_rep *rep, void **list, size_t *n, size_t size);
/* st_rep_push on the reply list rep->list, typed. */
#define ST_PUSH(rep, list)                                                  \
	((__typeof__((rep)->list))st_rep_push((rep), (void **)&(rep)->list, \
	    &(rep)->n_##list, sizeof(*(rep)->list)))

/*
 * Parses json, a JSON array (granted capabilities), into out, its strings
 * copied into rep's arena; an element that is not a string is skipped.
 * NULL json gives an empty list.  Returns 0, or -1 when json is not an
 * array or memory runs out.
 */
int st_strlist_from_json(
    struct pr_rep *rep, const char *json, struct pr_strlist *out);

#endif
