/*
 * opid.c: the op_id memory (opid.h).
 */
#include "opid.h"

#include <stdlib.h>
#include <string.h>

#include "limits.h"

bool
st_opid_recall(struct st_db *db, const char *op_id, char **rep, size_t *rep_len)
{
	static const char sql[] =
	    "SELECT reply FROM store_ops WHERE op_id = $1";
	struct st_stmt *s;
	const void *blob;
	char *copy;
	size_t n;
	bool found = false;

	if (st_db_query(db, &s, sql, "s", op_id) != ST_OK)
		return false;
	if (st_stmt_step(s) == ST_ROW &&
	    (blob = st_col_blob(s, 0, &n)) != NULL && n > 0 &&
	    (copy = malloc(n)) != NULL) {
		memcpy(copy, blob, n);
		*rep = copy;
		*rep_len = n;
		found = true;
	}
	st_stmt_done(s);
	return found;
}

int
st_opid_remember(struct st_db *db, const char *op_id, const void *rep,
    size_t rep_len, int64_t now)
{
	static const char sql[] = "INSERT INTO store_ops (op_id, reply,"
	                          " created_at) VALUES ($1, $2, $3)";

	return st_db_send(db, 1, sql, "sBi", op_id, rep, rep_len, now) ==
	               ST_DONE
	           ? 0
	           : -1;
}

/*
 * The bound is a timestamp, the created_at of the limit-th oldest expired
 * row, found on the created_at index; then one range of that index goes.
 * "op_id IN (SELECT ... LIMIT n)" did the same through a temporary table
 * of the keys, built on every call.
 */
int64_t
st_opid_prune(struct st_db *db, int64_t now, int64_t limit)
{
	static const char sql[] =
	    "DELETE FROM store_ops WHERE created_at < $1 AND created_at <="
	    " COALESCE((SELECT created_at FROM store_ops WHERE created_at < $1"
	    " ORDER BY created_at LIMIT 1 OFFSET $2), $1)";

	if (limit < 1)
		return 0;
	if (st_db_send(db, ST_ROWS_ANY, sql, "ii", now - CM_OPID_TTL_MS,
	        limit - 1) != ST_DONE)
		return -1;
	return st_db_changes(db);
}
