/*
 * opid.h: the op_id memory, the first reply of every write that changed
 * something, kept by op_id (table store_ops) for CM_OPID_TTL_MS, so that a
 * write sent again, even to a store started since, is answered and not
 * applied twice.  Internal to the store; every call runs in the caller's
 * transaction.
 */
#ifndef ST_OPID_H
#define ST_OPID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"

/*
 * The reply remembered for op_id, copied into *rep (malloc'd, the caller
 * frees) and *rep_len.  Returns false, leaving both alone, when there is
 * none, or the read or the copy fails.
 */
bool st_opid_recall(
    struct st_db *db, const char *op_id, char **rep, size_t *rep_len);
/*
 * Remembers rep as op_id's reply, written at now (ms).  Returns 0, or -1
 * when it cannot be written, in particular when op_id is remembered
 * already.  Sent ahead while the database defers (db.h): a failure then
 * fails the pass.
 */
int st_opid_remember(struct st_db *db, const char *op_id, const void *rep,
    size_t rep_len, int64_t now);
/*
 * Forgets the limit oldest op_ids older than CM_OPID_TTL_MS at now (ms),
 * and any more of the same millisecond as the last of them.  Returns how
 * many (0 when sent ahead: db.h), or -1.
 */
int64_t st_opid_prune(struct st_db *db, int64_t now, int64_t limit);

#endif
