/*
 * exec.h: one pass over a group's requests inside its open transaction,
 * each answered into its item.  Internal to the store: the engine
 * (store.c) begins and commits the transaction around it.
 */
#ifndef ST_EXEC_H
#define ST_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops.h"
#include "store.h"

/* The store's clock in ms: opts->now_ms, or cm_now_ms without one. */
int64_t st_exec_now(const struct st_store_opts *opts);

/*
 * Runs reqs[i] for each ok[i], in order, each answered into items[i]
 * (rep, hold).  Unguarded, a write runs bare; guarded, inside a SAVEPOINT
 * of its own, after the op_id memory is read.  Returns false when an
 * unguarded write failed after changing rows: the caller rolls the group
 * back, clears its answers (st_exec_reset) and runs it again, guarded.
 * Stops early, returning true, once the database ended the transaction
 * by itself (an I/O error, a full disk): the commit then fails.
 */
bool st_exec_pass(struct st_ctx *ctx, const struct pr_req *reqs, const bool *ok,
    struct st_item *items, size_t n, bool guarded);
/* Frees the answers of the items ok[i] marks, for a pass run again. */
void st_exec_reset(struct st_item *items, size_t n, const bool *ok);
/* Answers it (any answer before freed) with err and msg alone; it->rep
 * is NULL when even that cannot be encoded. */
void st_item_error(struct st_item *it, enum cm_err err, const char *msg);

#endif
