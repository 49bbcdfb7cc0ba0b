/*
 * bootstrap.h: the first start of an empty data dir.
 *
 * A store without any principal gets an admin operator, whose token goes
 * to <data_dir>/admin.token (mode 0600, the only copy there will ever be),
 * a workspace named "default" that the admin manages, and the runtime
 * bundles of etc/bundles/.  A store that has principals is left alone,
 * except to finish a bootstrap that an earlier start left half-way.
 *
 * A bootstrap is a state machine the supervisor's loop drives: each step
 * hands back one store request, and the next step takes its reply.
 * Nothing here waits on the store, so a dead store never holds up the
 * loop; a request is sent once (the loop's asynchronous call retries it
 * with the same op_id), so a write is applied at most once.
 */
#ifndef SUP_BOOTSTRAP_H
#define SUP_BOOTSTRAP_H

#include "config.h"
#include "proto.h"

enum sup_boot_step {
	SUP_BOOT_CALL, /* send the request, and hand its reply to the next step
	                */
	SUP_BOOT_DONE, /* nothing is left to do */
	SUP_BOOT_FAILED, /* the store or the file system failed: start over */
};

struct sup_boot;

/*
 * A bootstrap of the data dir of cfg.  Bundles are read from
 * <bin_dir>/../etc/bundles when that directory exists, else from
 * ./etc/bundles.  cfg must outlive it.  Returns 0, or -1 (logged) when
 * memory is short or the data_dir path is too long.
 */
int sup_boot_new(
    struct sup_boot **out, const struct cm_config *cfg, const char *bin_dir);

/* Wipes the token it held and frees it.  NULL is accepted. */
void sup_boot_free(struct sup_boot *b);

/*
 * One step.  The first call passes rep NULL; each later call passes the
 * outcome of the request the step before returned (rep->err is the
 * store's verdict, or CM_E_STORE_UNAVAILABLE when no reply came).
 *
 * SUP_BOOT_CALL: *q is the next request; its strings belong to b and
 * live until the next step.  SUP_BOOT_DONE: finished, or a state it
 * refuses to repair (a warning says how to recover).  admin.token
 * exists and authenticates from then on when the bootstrap made it or
 * found it; the console URL and, when there is a token, where it is were
 * printed to stderr.  SUP_BOOT_FAILED (logged): free it; a new one
 * resumes where this one stopped, now or at the next start.
 */
enum sup_boot_step sup_boot_step(
    struct sup_boot *b, const struct pr_rep *rep, struct pr_req *q);

#endif
