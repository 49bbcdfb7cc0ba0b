/*
 * probe.h: the supervisor's probe of cdp instances, the remote browsers
 * it does not run.
 *
 * Every probe_interval_ms (config, CM_PROBE_INTERVAL_MS by default) it
 * reads the cdp instances of its host from the store (sup.list_cdp, the
 * endpoints included: a secret only the supervisor and actors get), asks
 * each one's /json/version (cdp_endpoint.h), bounded by
 * CM_PROBE_TIMEOUT_MS, and, when the answer changes an instance's status,
 * sets it ready or unavailable (instance.set_status).  A disabled
 * instance is left alone.  No endpoint, host or port reaches a log.
 *
 * Never blocking: the store calls are asynchronous (cm_rpc_async) and the
 * requests run on a curl multi handle (curlm.h), made (and libcurl
 * loaded) by the first round that has an instance to ask; all of it sits
 * behind one fd that the supervisor's loop polls.
 */
#ifndef SUP_PROBE_H
#define SUP_PROBE_H

#include <nng/nng.h>

#include "config.h"

struct sup_probe;

/* Starts probing through the store socket store (borrowed; it must
 * outlive the probe).  Returns 0 or -1. */
int sup_probe_open(
    struct sup_probe **out, const struct cm_config *cfg, nng_socket store);

/* Abandons what is under way and frees.  NULL is accepted. */
void sup_probe_close(struct sup_probe *p);

/* Readable when the probe has work: poll it for POLLIN. */
int sup_probe_fd(const struct sup_probe *p);

/* Does what is ready, without waiting. */
void sup_probe_step(struct sup_probe *p);

#endif
