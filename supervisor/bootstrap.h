/*
 * bootstrap.h: the first start of an empty data dir.
 *
 * A store without any principal gets an admin operator, whose token goes
 * to <data_dir>/admin.token (mode 0600, the only copy there will ever be),
 * a workspace named "default" that the admin manages, and the runtime
 * bundles of etc/bundles/.  A store that has principals is left alone,
 * except to finish a bootstrap that an earlier start left half-way.
 */
#ifndef SUP_BOOTSTRAP_H
#define SUP_BOOTSTRAP_H

#include <nng/nng.h>

#include "config.h"

#define SUP_ADMIN_TOKEN_FILE "admin.token"

/*
 * Bootstraps the store behind the REQ socket store, or finishes an
 * earlier bootstrap, or finds nothing to do.  Bundles are read from
 * <bin_dir>/../etc/bundles when that directory exists, else from
 * ./etc/bundles.  Blocks on the store: each call is retried a few times
 * while the store does not answer, with the same op_id, so a write is
 * applied at most once.
 *
 * Returns 0 when there is nothing left to do, including the states it
 * refuses to repair (it logs a warning that says how to recover), and
 * -1 when the store or the file system failed: calling it again, now or
 * at the next start, resumes where it stopped.  On 0 it prints the
 * console URL (http://<http_listen>/) and, when the file exists, where
 * the admin token is, to stderr.  The token itself is never logged.
 */
int sup_bootstrap(
    nng_socket store, const struct cm_config *cfg, const char *bin_dir);

#endif
