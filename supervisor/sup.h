/*
 * sup.h: the supervisor's state, shared by its loop (main.c), its
 * children's lifecycle (lifecycle.c), the store's event feed (feed.c) and
 * the store work the loop drives (storework.h).  Internal to spaced.
 */
#ifndef SUP_SUP_H
#define SUP_SUP_H

#include <nng/nng.h>
#include <stdbool.h>
#include <stdint.h>

#include "bootstrap.h"
#include "children.h"
#include "config.h"
#include "jobs.h"
#include "listen.h"
#include "rpc.h"

struct sup {
	struct cm_config cfg;
	struct sup_children kids;
	nng_socket store;    /* REQ */
	nng_socket events;   /* SUB to the store's PUB */
	nng_aio *events_rx;  /* its receives */
	nng_aio *control_rx; /* the control socket's receives */
	nng_socket control;  /* REP */
	struct cm_listener control_l;
	int events_fd;
	int pipe_up[2]; /* self-pipe: the events SUB (re)connected */
	int control_fd;
	int sig_fd;
	int notify_fd; /* our own readiness line, for whoever started us */
	/*
	 * Every store call is asynchronous, one call per kind of work, its
	 * outcome taken when the loop polls the call's fd: reaping,
	 * restarting and SIGTERM never wait behind the store.
	 */
	struct cm_rpc_async *boot_rpc, *scan_rpc, *sweep_rpc;
	struct cm_rpc_async *standby_rpc; /* instance.list for standby.h */
	struct sup_jobs jobs;             /* writes about one Space, in order */
	struct sup_boot *boot;            /* the bootstrap under way, or NULL */
	struct sup_probe *probe;          /* cdp instances (probe.h) */
	int64_t boot_retry_at;
	char scan_after[CM_ID_MAX + 1]; /* the rescan's cursor; "" first */
	bool scan_again;    /* rescan once the one under way is done */
	uint64_t jobs_done; /* jobs finished, ever */
	uint64_t scan_jobs; /* jobs_done when this rescan page was asked */
	bool store_up;      /* the store said ready at least once */
	bool booted;        /* the bootstrap has nothing left to do */
	bool running;       /* store up and first scan done */
	bool stop;
	int exit_code;
	int64_t next_rescan, next_sweep, next_standby;
};

/* lifecycle.c: an actor for the Space (on instance_id, NULL when not known)
 * unless one runs, or a job about the Space waits; a standby of the
 * instance is adopted rather than a new actor started.  The api once,
 * when it is built.  sup_start_child spawns a row, or puts it in backoff
 * when the spawn fails. */
void sup_ensure_actor(
    struct sup *s, const char *space_id, const char *instance_id);
void sup_start_api(struct sup *s);
void sup_start_child(struct sup *s, struct sup_child *ch);

/* lifecycle.c, for the loop.  sup_reap reads the signalfd (SIGTERM or
 * SIGINT sets s->stop) and reaps every child that exited, acting on each
 * death.  sup_read_ready reads ch's readiness line once its notify fd is
 * readable.  sup_restart_due starts each row whose backoff is over and
 * that no job holds (sup_held_by_job: an actor whose Space has a job
 * waiting). */
void sup_reap(struct sup *s);
void sup_read_ready(struct sup *s, struct sup_child *ch);
bool sup_held_by_job(struct sup *s, const struct sup_child *ch);
void sup_restart_due(struct sup *s, int64_t now);

/* A set of kinds for sup_stop_kinds. */
#define SUP_KIND(k) (1u << (k))
/* Sends SIGTERM to every child of the kinds and reaps them; SIGKILL to
 * any left after grace_ms, and gives up waiting CM_SUP_KILL_WAIT_MS
 * later.  Bounded whatever the children do; the rows are removed. */
void sup_stop_kinds(struct sup *s, unsigned kinds, int grace_ms);

/* feed.c.  sup_drain_events handles every event the SUB has received.
 * sup_events_pipe_up is the SUB's pipe callback (an nng thread: it only
 * writes s->pipe_up); sup_pipe_came_up, in the loop, drains that pipe
 * and rescans when the store is up. */
void sup_drain_events(struct sup *s);
void sup_events_pipe_up(nng_pipe p, nng_pipe_ev ev, void *arg);
void sup_pipe_came_up(struct sup *s);

#endif
