/*
 * probe.c: ready or unavailable, for each cdp instance (see probe.h).
 *
 * One round at a time: the tick lists the instances, every probe of the
 * round runs at once on the multi handle, and the status changes they
 * show are written one after the other.  A tick that comes while a round
 * is under way is skipped: a round ends within CM_PROBE_TIMEOUT_MS of its
 * list, whatever the browsers do.
 */
#include "probe.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "cdp_endpoint.h"
#include "curlm.h"
#include "log.h"
#include "rpc.h"
#include "status.h"

struct probe_item {
	char id[CM_ID_MAX + 1];
	bool was_ready;
	bool running; /* its request is under way */
	bool ready;   /* the answer */
	bool write;   /* its new status waits to be written */
	struct cm_cdpep_version v;
};

struct sup_probe {
	char host[CM_HOST_MAX + 1];
	int ep;   /* epoll: the tick, the multi handle, the two calls */
	int tick; /* timerfd, every probe_interval_ms */
	struct cm_curlm *m;
	struct cm_rpc_async *list, *set;
	struct probe_item items[CM_PROBE_MAX];
	size_t n, running;
};

static int
probe_watch(struct sup_probe *p, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

	return epoll_ctl(p->ep, EPOLL_CTL_ADD, fd, &ev);
}

int
sup_probe_open(
    struct sup_probe **out, const struct cm_config *cfg, nng_socket store)
{
	struct sup_probe *p = calloc(1, sizeof(*p));
	struct itimerspec its = {0};

	*out = NULL;
	if (p == NULL)
		return -1;
	p->ep = p->tick = -1;
	snprintf(p->host, sizeof(p->host), "%s", cfg->host_id);
	/* The first round at once, then one every interval. */
	its.it_value.tv_nsec = 1;
	its.it_interval.tv_sec = cfg->probe_interval_ms / 1000;
	its.it_interval.tv_nsec = (cfg->probe_interval_ms % 1000) * 1000000L;
	if ((p->ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    (p->tick = timerfd_create(
	         CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0 ||
	    timerfd_settime(p->tick, 0, &its, NULL) != 0 ||
	    cm_rpc_async_open(&p->list, store) != 0 ||
	    cm_rpc_async_open(&p->set, store) != 0 ||
	    probe_watch(p, p->tick) != 0 ||
	    probe_watch(p, cm_rpc_async_fd(p->list)) != 0 ||
	    probe_watch(p, cm_rpc_async_fd(p->set)) != 0) {
		sup_probe_close(p);
		return -1;
	}
	*out = p;
	return 0;
}

static void
probe_end(struct sup_probe *p, struct probe_item *it)
{
	if (it->v.e != NULL) {
		cm_curlm_remove(p->m, it->v.e);
		cm_cdpep_version_end(&it->v);
	}
	if (it->running) {
		it->running = false;
		p->running--;
	}
}

void
sup_probe_close(struct sup_probe *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->n; i++)
		probe_end(p, &p->items[i]);
	cm_rpc_async_close(p->list);
	cm_rpc_async_close(p->set);
	cm_curlm_free(p->m);
	if (p->tick >= 0)
		close(p->tick);
	if (p->ep >= 0)
		close(p->ep);
	free(p);
}

int
sup_probe_fd(const struct sup_probe *p)
{
	return p->ep;
}

/* The next status change waiting, written when no write is under way. */
static void
probe_write_next(struct sup_probe *p)
{
	struct pr_req q;

	if (cm_rpc_async_busy(p->set))
		return;
	for (size_t i = 0; i < p->n; i++) {
		struct probe_item *it = &p->items[i];

		if (!it->write || it->running)
			continue;
		memset(&q, 0, sizeof(q));
		q.op = PR_OP_INSTANCE_SET_STATUS;
		q.browser_instance_id = it->id;
		q.status = cm_instance_status_name(
		    it->ready ? CM_INSTANCE_READY : CM_INSTANCE_UNAVAILABLE);
		/* Only from what this round read: an operator's disable
		 * since then stands (a conflict, and the next round reads
		 * again). */
		q.if_status = cm_instance_status_name(
		    it->ready ? CM_INSTANCE_UNAVAILABLE : CM_INSTANCE_READY);
		if (cm_rpc_async_start(
		        p->set, &q, CM_SUP_STORE_ATTEMPT_MS, 0) != CM_OK)
			return; /* the next round sees the change again */
		it->write = false;
		cm_info(
		    "probe: browser instance %s: setting %s", it->id, q.status);
		return;
	}
}

static void
probe_answered(struct probe_item *it, bool ready)
{
	it->running = false;
	it->ready = ready;
	it->write = ready != it->was_ready;
}

/* A round: one request per instance the store listed. */
static void
probe_round(struct sup_probe *p, const struct pr_rep *r)
{
	size_t n = r->n_instances < r->n_instance_secrets
	               ? r->n_instances
	               : r->n_instance_secrets;

	for (size_t i = 0; i < p->n; i++)
		probe_end(p, &p->items[i]);
	p->n = 0;
	/* libcurl is loaded by the first round that has an instance to
	 * ask: a supervisor with no cdp instance never loads it, nor do
	 * the children it forks. */
	if (n > 0 && p->m == NULL &&
	    (cm_curlm_new(&p->m) != 0 ||
	        probe_watch(p, cm_curlm_fd(p->m)) != 0)) {
		cm_warnx("probe: libcurl cannot be used: no probe this round");
		cm_curlm_free(p->m);
		p->m = NULL;
		return;
	}
	for (size_t i = 0; i < n && p->n < CM_PROBE_MAX; i++) {
		const struct pr_instance *in = &r->instances[i];
		struct probe_item *it = &p->items[p->n];
		enum cm_instance_status st =
		    cm_instance_status_parse(in->status);
		struct cm_cdpep ep;

		/* disabled is the operator's, not ours; a status of no row
		 * (none at all) is no instance the probe knows. */
		if (st == CM_INSTANCE_STATUS__COUNT ||
		    st == CM_INSTANCE_DISABLED)
			continue;
		memset(it, 0, sizeof(*it));
		snprintf(it->id, sizeof(it->id), "%s", in->browser_instance_id);
		it->was_ready = st == CM_INSTANCE_READY;
		p->n++;
		if (cm_cdpep_parse(r->instance_secrets[i].endpoint, &ep) != 0 ||
		    cm_cdpep_version_begin(
		        &it->v, &ep, (long)CM_PROBE_TIMEOUT_MS) != 0 ||
		    cm_curlm_add(p->m, it->v.e) != 0) {
			cm_cdpep_version_end(&it->v);
			probe_answered(it, false);
			continue;
		}
		it->running = true;
		p->running++;
	}
}

static void
probe_list_reply(struct sup_probe *p)
{
	struct pr_rep r;

	if (!cm_rpc_async_take(p->list, &r, NULL))
		return;
	if (r.err == CM_OK)
		probe_round(p, &r);
	else
		cm_warnx("probe: sup.list_cdp: %s", cm_err_code(r.err));
	pr_rep_free(&r);
}

static void
probe_curl_done(struct sup_probe *p)
{
	CURLcode rc;
	CURL *e;

	cm_curlm_step(p->m);
	while ((e = cm_curlm_done(p->m, &rc)) != NULL) {
		for (size_t i = 0; i < p->n; i++) {
			struct probe_item *it = &p->items[i];
			bool ready;

			if (it->v.e != e)
				continue;
			ready = cm_cdpep_version_path(&it->v, rc, NULL, 0) == 0;
			probe_end(p, it);
			probe_answered(it, ready);
		}
	}
}

static void
probe_tick(struct sup_probe *p)
{
	struct pr_req q;
	uint64_t ticks;

	if (read(p->tick, &ticks, sizeof(ticks)) < 0)
		return;
	/* A round under way (or its writes) goes first. */
	if (p->running > 0 || cm_rpc_async_busy(p->list) ||
	    cm_rpc_async_busy(p->set))
		return;
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_SUP_LIST_CDP;
	q.host = p->host;
	cm_rpc_async_start(p->list, &q, CM_SUP_STORE_ATTEMPT_MS, 0);
}

void
sup_probe_step(struct sup_probe *p)
{
	struct epoll_event evs[4];
	struct pr_rep r;
	int n = epoll_wait(p->ep, evs, 4, 0);

	for (int i = 0; i < n; i++) {
		int fd = evs[i].data.fd;

		if (fd == p->tick)
			probe_tick(p);
		else if (fd == cm_rpc_async_fd(p->list))
			probe_list_reply(p);
		else if (p->m != NULL && fd == cm_curlm_fd(p->m))
			probe_curl_done(p);
		else if (fd == cm_rpc_async_fd(p->set) &&
		         cm_rpc_async_take(p->set, &r, NULL)) {
			if (r.err != CM_OK && r.err != CM_E_CONFLICT)
				cm_warnx("probe: instance.set_status: %s",
				    cm_err_code(r.err));
			pr_rep_free(&r);
		}
	}
	probe_write_next(p);
}
