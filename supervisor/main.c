/*
 * spaced: the supervisor, and the binary users run.
 *
 * It starts the store, waits for its readiness line, bootstraps an empty
 * store (bootstrap.h), starts the api (when built) once that is done,
 * then one actor per Space that is not closed, and keeps them alive:
 * reaping through a signalfd, finalising the task of an actor that died
 * (failed with outcome_unknown, or cancelled when a cancel was asked
 * for) and restarting by the policy table.  Its loop never
 * waits on the store: every store call is asynchronous (storework.h).
 * SIGTERM stops everything within bounds (CM_SUP_STOP_*).  Exit codes:
 * 0 stopped cleanly, 1 gave up on a permanent child (let systemd restart
 * the whole service), 100 bad configuration or data dir in use.
 */
#include <errno.h>
#include <fcntl.h>
#include <nng/nng.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "bootstrap.h"
#include "children.h"
#include "clock.h"
#include "config.h"
#include "control.h"
#include "json.h"
#include "log.h"
#include "probe.h"
#include "recv.h"
#include "rpc.h"
#include "standby.h"
#include "startup.h"
#include "status.h"
#include "storework.h"

static void
wake_at(int64_t *wake, int64_t t)
{
	if (*wake < 0 || t < *wake)
		*wake = t;
}

/* The earliest timer due; -1 for none.  A call under way has no timer:
 * its fd wakes the loop. */
static int64_t
next_wake(struct sup *s, int64_t now)
{
	int64_t wake = -1, due;

	if (s->store_up && !cm_rpc_async_busy(s->scan_rpc))
		wake_at(&wake, s->next_rescan);
	if (s->running && !cm_rpc_async_busy(s->sweep_rpc))
		wake_at(&wake, s->next_sweep);
	if (s->running && s->cfg.warm_standby &&
	    !cm_rpc_async_busy(s->standby_rpc))
		wake_at(&wake, s->next_standby);
	if (s->store_up && !s->booted && s->boot == NULL)
		wake_at(&wake, s->boot_retry_at);
	if ((due = sup_jobs_due(&s->jobs, now)) >= 0)
		wake_at(&wake, due);
	wake_at(&wake, cm_listener_due(&s->control_l));
	for (size_t i = 0; i < s->kids.n; i++) {
		const struct sup_child *ch = s->kids.v[i];

		/* One held by a job wakes when the job is done. */
		if (ch->state == SUP_BACKOFF && !sup_held_by_job(s, ch))
			wake_at(&wake, ch->restart_at_ms);
	}
	return wake;
}

static void
notify_ready(struct sup *s)
{
	static bool told_systemd;

	/* Under systemd (Type=notify); a no-op anywhere else. */
	if (!told_systemd) {
		sd_notify(0, "READY=1");
		told_systemd = true;
	}
	cm_ready_notify(&s->notify_fd);
}

/* The loop's own fds, in pfd[0..SERVE_FIXED). */
enum {
	SERVE_SIG,
	SERVE_EVENTS,
	SERVE_CONTROL,
	SERVE_PIPE_UP,
	SERVE_BOOT,
	SERVE_SCAN,
	SERVE_SWEEP,
	SERVE_JOBS,
	SERVE_STANDBY,
	SERVE_PROBE,
	SERVE_FIXED
};

static void
serve(struct sup *s)
{
	struct pollfd *pfd = NULL;
	struct sup_child **owner = NULL;
	size_t cap = 0;

	while (!s->stop) {
		int64_t now = cm_mono_ms(), wake;
		size_t n = SERVE_FIXED;
		int timeout;

		if (s->kids.n + SERVE_FIXED > cap) {
			cap = (s->kids.n + SERVE_FIXED) * 2;
			pfd = realloc(pfd, cap * sizeof(*pfd));
			owner = realloc(owner, cap * sizeof(*owner));
			if (pfd == NULL || owner == NULL)
				cm_fatalx("supervisor: out of memory");
		}
		pfd[SERVE_SIG].fd = s->sig_fd;
		pfd[SERVE_EVENTS].fd = s->events_fd;
		pfd[SERVE_CONTROL].fd = s->control_fd;
		pfd[SERVE_PIPE_UP].fd = s->pipe_up[0];
		pfd[SERVE_BOOT].fd = cm_rpc_async_fd(s->boot_rpc);
		pfd[SERVE_SCAN].fd = cm_rpc_async_fd(s->scan_rpc);
		pfd[SERVE_SWEEP].fd = cm_rpc_async_fd(s->sweep_rpc);
		pfd[SERVE_JOBS].fd = sup_jobs_fd(&s->jobs);
		pfd[SERVE_STANDBY].fd = cm_rpc_async_fd(s->standby_rpc);
		pfd[SERVE_PROBE].fd = sup_probe_fd(s->probe);
		for (size_t i = 0; i < SERVE_FIXED; i++)
			pfd[i].events = POLLIN;
		for (size_t i = 0; i < s->kids.n; i++) {
			if (s->kids.v[i]->notify_fd < 0)
				continue;
			owner[n] = s->kids.v[i];
			pfd[n].fd = s->kids.v[i]->notify_fd;
			pfd[n++].events = POLLIN;
		}
		wake = next_wake(s, now);
		timeout = wake < 0 ? -1 : wake <= now ? 0 : (int)(wake - now);
		if (poll(pfd, n, timeout) < 0 && errno != EINTR)
			cm_fatalx("supervisor: poll: %s", strerror(errno));

		/* Readiness before reaping: reap frees the rows in owner[]. */
		for (size_t i = SERVE_FIXED; i < n; i++)
			if (pfd[i].revents & (POLLIN | POLLHUP))
				sup_read_ready(s, owner[i]);
		if (pfd[SERVE_SIG].revents & POLLIN)
			sup_reap(s);
		if (pfd[SERVE_EVENTS].revents & POLLIN)
			sup_drain_events(s);
		if (pfd[SERVE_CONTROL].revents & POLLIN)
			sup_control_serve(
			    s->control, s->control_rx, &s->kids, cm_mono_ms());
		if (pfd[SERVE_PIPE_UP].revents & POLLIN)
			sup_pipe_came_up(s);
		if (pfd[SERVE_BOOT].revents & POLLIN)
			sup_work_boot_reply(s);
		if (pfd[SERVE_SCAN].revents & POLLIN)
			sup_work_scan_reply(s);
		if (pfd[SERVE_SWEEP].revents & POLLIN)
			sup_work_sweep_reply(s);
		if (pfd[SERVE_JOBS].revents & POLLIN)
			sup_work_jobs_reply(s);
		if (pfd[SERVE_STANDBY].revents & POLLIN)
			sup_work_standby_reply(s);
		if (pfd[SERVE_PROBE].revents & POLLIN)
			sup_probe_step(s->probe);
		if (s->stop)
			break;

		now = cm_mono_ms();
		sup_jobs_run(&s->jobs, now);
		cm_listener_tend(&s->control_l, now);
		sup_restart_due(s, now);
		sup_work_boot_kick(s, now);
		if (s->store_up && now >= s->next_rescan &&
		    !cm_rpc_async_busy(s->scan_rpc))
			sup_work_rescan(s);
		if (s->running && now >= s->next_sweep &&
		    !cm_rpc_async_busy(s->sweep_rpc))
			sup_work_sweep(s);
		if (s->running && s->cfg.warm_standby &&
		    now >= s->next_standby &&
		    !cm_rpc_async_busy(s->standby_rpc))
			sup_work_standby_scan(s);
		if (s->running && s->booted)
			notify_ready(s);
	}
	free(pfd);
	free(owner);
}

static int
lock_data_dir(const struct cm_config *cfg)
{
	char path[CM_PATH_MAX + 16], pid[32];
	int fd;

	snprintf(path, sizeof(path), "%s/spaced.pid", cfg->run_dir);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0) {
		cm_warn("supervisor: %s", path);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		ssize_t n = read(fd, pid, sizeof(pid) - 1);

		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		cm_warnx("supervisor: another spaced (pid %s) is running on %s",
		    pid[0] ? pid : "?", cfg->data_dir);
		close(fd);
		return -1;
	}
	if (ftruncate(fd, 0) == 0) {
		int len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
		if (write(fd, pid, (size_t)len) < 0)
			cm_warn("supervisor: %s", path);
	}
	return fd; /* held open, and so locked, until we exit */
}

static int
open_sockets(struct sup *s)
{
	char url[CM_PATH_MAX];
	int rv;

	if (cm_ipc_url(url, sizeof(url), s->cfg.run_dir, "store.ipc") != 0 ||
	    cm_rpc_open(&s->store, url) != 0 ||
	    cm_rpc_async_open(&s->boot_rpc, s->store) != 0 ||
	    cm_rpc_async_open(&s->scan_rpc, s->store) != 0 ||
	    cm_rpc_async_open(&s->sweep_rpc, s->store) != 0 ||
	    cm_rpc_async_open(&s->standby_rpc, s->store) != 0 ||
	    sup_jobs_open(&s->jobs, s->store, s->cfg.host_id) != 0)
		return -1;
	if (pipe2(s->pipe_up, O_CLOEXEC | O_NONBLOCK) != 0)
		return -1;
	if (cm_ipc_url(url, sizeof(url), s->cfg.run_dir, "store-notices.ipc") !=
	        0 ||
	    (rv = nng_aio_alloc(&s->events_rx, NULL, NULL)) != 0 ||
	    /* The store comes up after this dial, and may restart: the
	     * redial is soon. */
	    (rv = cm_sub_open(&s->events, "ev/", CM_PUB_BUF, CM_MSG_MAX)) !=
	        0 ||
	    (rv = nng_pipe_notify(s->events, NNG_PIPE_EV_ADD_POST,
	         sup_events_pipe_up, s)) != 0 ||
	    (rv = nng_dial(s->events, url, NULL, NNG_FLAG_NONBLOCK)) != 0 ||
	    (rv = nng_socket_get_int(
	         s->events, NNG_OPT_RECVFD, &s->events_fd)) != 0)
		return -1;
	if (cm_ipc_url(url, sizeof(url), s->cfg.run_dir, "supervisor.ipc") !=
	        0 ||
	    sup_control_open(&s->control, &s->control_l, url, &s->control_fd) !=
	        0 ||
	    nng_aio_alloc(&s->control_rx, NULL, NULL) != 0)
		return -1;
	return 0;
}

/* The actors' and the api's grace at a stop, by how many actors there
 * are (CM_SUP_STOP_CHILDREN_MS). */
static int
stop_grace_ms(const struct sup *s)
{
	int64_t ms = CM_SUP_STOP_CHILDREN_MS;

	for (size_t i = 0; i < s->kids.n; i++)
		if (s->kids.v[i]->kind == SUP_ACTOR)
			ms += CM_SUP_STOP_PER_ACTOR_MS;
	return (int)(ms < CM_SUP_STOP_CHILDREN_MAX_MS
	                 ? ms
	                 : CM_SUP_STOP_CHILDREN_MAX_MS);
}

int
main(int argc, char **argv, char **envp)
{
	static struct sup s;
	struct cm_startup su;
	struct sup_child *store;
	int lock_fd, rc;

	/* Signals, SIGCHLD too, are read from a signalfd, never handled. */
	if ((rc = cm_startup(&su, &s.cfg, "spaced", argc, argv, envp, NULL,
	         CM_STARTUP_DIRS | CM_STARTUP_SIGCHLD | CM_STARTUP_SIGNALFD)) !=
	    CM_EXIT_OK)
		return rc;
	s.notify_fd = su.notify_fd;
	s.sig_fd = su.sig_fd;
	if ((lock_fd = lock_data_dir(&s.cfg)) < 0)
		return CM_EXIT_PERMANENT;
	if (sup_children_init(&s.kids, &s.cfg) != 0) {
		cm_warnx("supervisor: cannot find its own binaries");
		return CM_EXIT_PERMANENT;
	}
	if (open_sockets(&s) != 0 ||
	    sup_probe_open(&s.probe, &s.cfg, s.store) != 0) {
		cm_warnx(
		    "supervisor: cannot open its sockets in %s", s.cfg.run_dir);
		return CM_EXIT_PERMANENT;
	}
	s.next_rescan = s.next_sweep = s.next_standby = s.boot_retry_at =
	    cm_mono_ms();
	if ((store = sup_child_add(&s.kids, SUP_STORE, NULL)) == NULL)
		return CM_EXIT_FAILED;
	sup_start_child(&s, store);
	cm_info("supervisor: data in %s", s.cfg.data_dir);

	serve(&s);

	/* The front and the actors together (each actor cancels its task
	 * and tears its runtime down, which needs the store), then the
	 * store.  Each step is bounded: see CM_SUP_STOP_CHILDREN_MS. */
	sup_stop_kinds(
	    &s, SUP_KIND(SUP_API) | SUP_KIND(SUP_ACTOR), stop_grace_ms(&s));
	sup_stop_kinds(&s, SUP_KIND(SUP_STORE), CM_SUP_STOP_STORE_MS);
	sup_boot_free(s.boot);
	sup_probe_close(s.probe);
	cm_rpc_async_close(s.boot_rpc);
	cm_rpc_async_close(s.scan_rpc);
	cm_rpc_async_close(s.sweep_rpc);
	cm_rpc_async_close(s.standby_rpc);
	sup_jobs_close(&s.jobs);
	nng_close(s.control);
	nng_close(s.events);
	if (s.events_rx != NULL)
		nng_aio_free(s.events_rx);
	if (s.control_rx != NULL)
		nng_aio_free(s.control_rx);
	close(s.pipe_up[0]);
	close(s.pipe_up[1]);
	nng_close(s.store);
	sup_children_fini(&s.kids);
	close(lock_fd);
	cm_info("supervisor: stopped");
	return s.exit_code;
}
