/*
 * browsers.h: the managed instances of a first start (the setting
 * managed_browsers), a part of the bootstrap (bootstrap.h) that runs
 * before its last write.  When chromium_path is an executable file, the
 * bootstrap of a new data dir registers managed_browsers managed
 * instances, chromium-1 .. chromium-N, on the "browser" runtime bundle,
 * each with a fresh profile per Space, and binds them to the workspace
 * default, so `make run` serves real browsers at once.  A data dir that
 * was bootstrapped already never gets any.
 *
 * Like the bootstrap, it is a machine the supervisor's loop drives, one
 * store request a step.  After a crash it resumes: an instance whose name
 * is registered already is bound (again: a conflict is fine) and not
 * registered twice.
 */
#ifndef SUP_BROWSERS_H
#define SUP_BROWSERS_H

#include "bootstrap.h"
#include "config.h"
#include "proto.h"

struct sup_browsers;

/*
 * Begins for workspace ws_id (a string that outlives the machine).
 * SUP_BOOT_CALL: *q is the first request and *out the machine, whose
 * sup_browsers_step takes the reply.  SUP_BOOT_DONE: nothing to register
 * (managed_browsers is 0, or no browser at chromium_path: logged), *out
 * NULL.  SUP_BOOT_FAILED: memory is short.
 */
enum sup_boot_step sup_browsers_begin(struct sup_browsers **out,
    const struct cm_config *cfg, const char *ws_id, struct pr_req *q);

/* The next step after the reply r to the last request: as
 * sup_boot_step.  SUP_BOOT_DONE once every instance is bound (the count
 * is logged). */
enum sup_boot_step sup_browsers_step(
    struct sup_browsers *b, const struct pr_rep *r, struct pr_req *q);

/* NULL is accepted. */
void sup_browsers_free(struct sup_browsers *b);

#endif
