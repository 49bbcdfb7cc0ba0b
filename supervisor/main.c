/*
 * spaced: the supervisor, and the binary users run.
 *
 * It starts the store, waits for its readiness line, bootstraps an empty
 * store (bootstrap.h), starts the api (when built) once that is done,
 * then one actor per Space that is not closed, and keeps them alive:
 * reaping through a signalfd, finalising the task of an actor that died
 * (SPEC 3 rule 10) and restarting by the policy table.  Its loop never
 * waits on the store: every store call is asynchronous (storework.h).
 * SIGTERM stops everything within bounds (CM_SUP_STOP_*).  Exit codes:
 * 0 stopped cleanly, 1 gave up on a permanent child (let systemd restart
 * the whole service), 100 bad configuration or data dir in use.
 */
#include <errno.h>
#include <fcntl.h>
#include <nng/nng.h>
#include <nng/protocol/pubsub0/sub.h>
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

void
sup_start_child(struct sup *s, struct sup_child *ch)
{
	int64_t now = cm_mono_ms();

	if (sup_child_spawn(&s->kids, ch, now) != 0) {
		ch->state = SUP_BACKOFF;
		ch->restart_at_ms =
		    now + sup_kinds[ch->kind].policy->backoff_min_ms;
		return;
	}
	cm_debug("supervisor: started %s %s pid %d", sup_kinds[ch->kind].name,
	    ch->space_id, (int)ch->pid);
}

/* No actor starts for a Space while a job about it waits: its lost task
 * is finalised, or the Space marked, first.  A standby of the Space's
 * instance, when one runs, becomes its actor instead. */
void
sup_ensure_actor(struct sup *s, const char *space_id, const char *instance_id)
{
	struct sup_child *ch;

	if (s->stop || sup_child_by_space(&s->kids, space_id) != NULL ||
	    sup_jobs_pending(&s->jobs, space_id) ||
	    sup_standby_adopt(s, space_id, instance_id))
		return;
	if ((ch = sup_child_add(&s->kids, SUP_ACTOR, space_id)) == NULL)
		return;
	if (instance_id != NULL)
		snprintf(ch->instance_id, sizeof(ch->instance_id), "%s",
		    instance_id);
	sup_start_child(s, ch);
}

void
sup_start_api(struct sup *s)
{
	struct sup_child *api;

	if (s->stop || !sup_kind_available(&s->kids, SUP_API) ||
	    sup_child_by_kind(&s->kids, SUP_API) != NULL)
		return;
	if ((api = sup_child_add(&s->kids, SUP_API, NULL)) != NULL)
		sup_start_child(s, api);
}

/* Acts on a step: sends its request, or ends the bootstrap. */
/* ---- children ----------------------------------------------------------- */

static void
child_died(struct sup *s, struct sup_child *ch, int status)
{
	const struct sup_policy *p = sup_kinds[ch->kind].policy;
	bool exited = WIFEXITED(status);
	int code = exited ? WEXITSTATUS(status) : 0;
	int64_t now = cm_mono_ms(), delay;
	enum sup_verdict v;

	/* No browser outlives its actor. */
	if (ch->kind == SUP_ACTOR)
		kill(-ch->pid, SIGKILL);
	ch->pid = 0;
	sup_child_gone(ch);
	if (s->stop || ch->state == SUP_STOPPING) {
		sup_child_remove(&s->kids, ch);
		return;
	}
	if (ch->standby) {
		sup_standby_died(
		    s, ch, exited, exited ? code : WTERMSIG(status), now);
		return;
	}
	if (exited && code == 0)
		cm_debug("supervisor: %s %s exited", sup_kinds[ch->kind].name,
		    ch->space_id);
	else
		cm_warnx("supervisor: %s %s died (%s %d)",
		    sup_kinds[ch->kind].name, ch->space_id,
		    exited ? "exit" : "signal",
		    exited ? code : WTERMSIG(status));

	/* Queued, never waited on: while it waits, no actor for the Space
	 * starts (restart_due, ensure_actor). */
	if (ch->kind == SUP_ACTOR && !(exited && code == 0))
		sup_work_queue(s, PR_OP_SUP_FINALIZE_LOST, ch->space_id, NULL);
	v = sup_policy_exit(p, &ch->history, now, exited, code, &delay);
	switch (v) {
	case SUP_RESTART:
		ch->state = SUP_BACKOFF;
		ch->restart_at_ms = now + delay;
		ch->restarts++;
		break;
	case SUP_DONE:
		/* A Space closed: its instance may want a standby now. */
		if (ch->kind == SUP_ACTOR)
			s->next_standby = now;
		sup_child_remove(&s->kids, ch);
		break;
	case SUP_GIVE_UP:
		if (ch->kind != SUP_ACTOR) {
			cm_warnx("supervisor: the %s keeps failing; giving up",
			    sup_kinds[ch->kind].name);
			s->stop = true;
			s->exit_code = CM_EXIT_FAILED;
			sup_child_remove(&s->kids, ch);
			break;
		}
		cm_warnx(
		    "supervisor: space %s: actor crash loop", ch->space_id);
		sup_work_queue(s, PR_OP_SPACE_MARK_ERROR, ch->space_id,
		    "actor_crash_loop");
		sup_child_remove(&s->kids, ch);
		break;
	}
}

static void
reap(struct sup *s)
{
	struct signalfd_siginfo si;
	int status;
	pid_t pid;

	while (read(s->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
			cm_info("supervisor: signal %u, shutting down",
			    si.ssi_signo);
			s->stop = true;
		}
	}
	/* One SIGCHLD may stand for many exits: reap until none is left. */
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		struct sup_child *ch = sup_child_by_pid(&s->kids, pid);

		if (ch != NULL)
			child_died(s, ch, status);
	}
}

static void
read_ready(struct sup *s, struct sup_child *ch)
{
	char line[16];
	ssize_t n = read(ch->notify_fd, line, sizeof(line));

	close(ch->notify_fd);
	ch->notify_fd = -1;
	if (n >= (ssize_t)sizeof(CM_READY_LINE) - 1 &&
	    memcmp(line, CM_READY_LINE, sizeof(CM_READY_LINE) - 1) == 0) {
		ch->state = SUP_READY;
		/* The bootstrap starts in the loop (boot_kick); a restarted
		 * store is rescanned when the events SUB reconnects. */
		if (ch->kind == SUP_STORE && !s->store_up) {
			s->store_up = true;
			sup_work_rescan(s);
		}
	}
}

/* An actor row that must wait: a job about its Space is not done. */
static bool
held_by_job(struct sup *s, const struct sup_child *ch)
{
	return ch->kind == SUP_ACTOR &&
	       sup_jobs_pending(&s->jobs, ch->space_id);
}

/* A row whose backoff is over starts again; an actor's lost task is
 * finalised before its replacement may claim anything. */
static void
restart_due(struct sup *s, int64_t now)
{
	for (size_t i = 0; i < s->kids.n; i++) {
		struct sup_child *ch = s->kids.v[i];

		if (ch->state != SUP_BACKOFF || now < ch->restart_at_ms ||
		    held_by_job(s, ch))
			continue;
		sup_start_child(s, ch);
	}
}

/*
 * The notices an actor acts on.  Actors do not subscribe to the store
 * themselves: nng 1.5.2 filters topics on the subscriber, so every actor
 * would receive every event of every Space (measured: 63 idle actors took
 * a whole CPU at ~500 tasks/s).  The supervisor, which reads the feed
 * anyway, wakes just the actor concerned through its wake pipe.
 */
static bool
actor_wants(enum cm_event_kind kind)
{
	return kind == CM_EV_QUEUED || kind == CM_EV_CANCEL_REQUESTED ||
	       kind == CM_EV_CLOSE_REQUESTED || kind == CM_EV_SPACE_CLOSED;
}

/*
 * A Space opened: its actor starts here only when its instance is on this
 * host (the host the store's notice names); a Space on another host's
 * instance is that host's to run, whichever api created it.  A notice
 * without a host (one another host's store announced) is checked by the
 * rescan, which lists only this host's Spaces.  The instance the payload
 * names lets a standby of that instance take the Space.
 */
static void
sup_space_opened(struct sup *s, const struct pr_event *ev)
{
	char inst[CM_ID_MAX + 1] = "", err[128];
	json_t *payload = NULL;
	const char *v;

	if (ev->host == NULL) {
		sup_work_rescan(s);
		return;
	}
	if (strcmp(ev->host, s->cfg.host_id) != 0)
		return;

	if (ev->payload != NULL &&
	    cm_json_parse(ev->payload, strlen(ev->payload), CM_RESULT_MAX,
	        CM_JSON_DEPTH_MAX, &payload, err, sizeof(err)) == 0 &&
	    (v = json_string_value(
	         json_object_get(payload, "browser_instance_id"))) != NULL)
		snprintf(inst, sizeof(inst), "%s", v);
	json_decref(payload);
	sup_ensure_actor(s, ev->space_id, inst[0] ? inst : NULL);
}

static void
drain_events(struct sup *s)
{
	nng_msg *m;

	while (cm_recv_try(s->events, s->events_rx, &m) == 0) {
		struct pr_arena arena = {0};
		struct pr_event ev;
		char err[128];

		if (pr_pub_decode(nng_msg_body(m), nng_msg_len(m), &ev, &arena,
		        err, sizeof(err)) != 0) {
			cm_warnx(
			    "supervisor: bad event from the store: %s", err);
		} else if (cm_event_kind_is(ev.kind, CM_EV_SPACE_OPENED)) {
			sup_space_opened(s, &ev);
		} else if (actor_wants(cm_event_kind_parse(ev.kind))) {
			struct sup_child *ch =
			    sup_child_by_space(&s->kids, ev.space_id);

			if (ch != NULL)
				sup_child_wake(ch);
		}
		pr_arena_free(&arena);
		nng_msg_free(m);
	}
}

/*
 * Runs on an nng thread when the events SUB gets a pipe to the store: at
 * start and after every store restart.  Notices published before that
 * were lost, so the loop rescans at once instead of at the next timer.
 * Only a write to the self-pipe happens here; a full pipe already holds a
 * wake-up.
 */
static void
events_pipe_up(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct sup *s = arg;
	char one = 1;
	ssize_t n;

	(void)p;
	(void)ev;
	n = write(s->pipe_up[1], &one, 1);
	(void)n;
}

static void
pipe_came_up(struct sup *s)
{
	char buf[64];

	while (read(s->pipe_up[0], buf, sizeof(buf)) > 0)
		;
	if (s->store_up)
		sup_work_rescan(s);
}

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
		if (ch->state == SUP_BACKOFF && !held_by_job(s, ch))
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
				read_ready(s, owner[i]);
		if (pfd[SERVE_SIG].revents & POLLIN)
			reap(s);
		if (pfd[SERVE_EVENTS].revents & POLLIN)
			drain_events(s);
		if (pfd[SERVE_CONTROL].revents & POLLIN)
			sup_control_serve(
			    s->control, s->control_rx, &s->kids, cm_mono_ms());
		if (pfd[SERVE_PIPE_UP].revents & POLLIN)
			pipe_came_up(s);
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
		restart_due(s, now);
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

#define KIND(k) (1u << (k))

static bool
stopping(const struct sup_child *ch, unsigned kinds)
{
	return (kinds & KIND(ch->kind)) != 0 && ch->pid > 0;
}

/*
 * Sends SIGTERM to every child of the kinds and reaps them; SIGKILL (an
 * actor's whole process group) to any left after grace_ms, and gives up
 * waiting CM_SUP_KILL_WAIT_MS later.  Other children that die meanwhile
 * are reaped too.  Bounded whatever the children do.
 */
static void
stop_kinds(struct sup *s, unsigned kinds, int grace_ms)
{
	int64_t deadline = cm_mono_ms() + grace_ms;
	bool killed = false, left;

	for (size_t i = 0; i < s->kids.n; i++) {
		struct sup_child *ch = s->kids.v[i];

		if (!(kinds & KIND(ch->kind)))
			continue;
		ch->state = SUP_STOPPING;
		if (ch->pid > 0)
			kill(ch->pid, SIGTERM);
	}
	for (;;) {
		struct pollfd p = {s->sig_fd, POLLIN, 0};
		struct signalfd_siginfo si;
		int status;
		pid_t pid;

		left = false;
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			struct sup_child *ch = sup_child_by_pid(&s->kids, pid);
			if (ch != NULL)
				child_died(s, ch, status);
		}
		for (size_t i = 0; i < s->kids.n; i++)
			left |= stopping(s->kids.v[i], kinds);
		if (!left)
			break;
		if (cm_mono_ms() >= deadline) {
			if (killed) {
				cm_warnx("supervisor: a child outlives "
				         "SIGKILL; not waiting for it");
				break;
			}
			for (size_t i = 0; i < s->kids.n; i++) {
				struct sup_child *ch = s->kids.v[i];

				if (!stopping(ch, kinds))
					continue;
				cm_warnx("supervisor: %s %s ignored SIGTERM; "
				         "killing it",
				    sup_kinds[ch->kind].name, ch->space_id);
				kill(ch->kind == SUP_ACTOR ? -ch->pid : ch->pid,
				    SIGKILL);
			}
			killed = true;
			deadline = cm_mono_ms() + CM_SUP_KILL_WAIT_MS;
		}
		/* SIGCHLD is blocked and read from the signalfd. */
		if (poll(&p, 1, (int)(deadline - cm_mono_ms())) > 0)
			while (read(s->sig_fd, &si, sizeof(si)) == sizeof(si))
				;
	}
	for (size_t i = s->kids.n; i-- > 0;)
		if (kinds & KIND(s->kids.v[i]->kind))
			sup_child_remove(&s->kids, s->kids.v[i]);
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
	if (cm_ipc_url(url, sizeof(url), s->cfg.run_dir, "store-events.ipc") !=
	        0 ||
	    (rv = nng_aio_alloc(&s->events_rx, NULL, NULL)) != 0 ||
	    (rv = nng_sub0_open(&s->events)) != 0 ||
	    (rv = nng_socket_set(s->events, NNG_OPT_SUB_SUBSCRIBE, "ev/", 3)) !=
	        0 ||
	    (rv = nng_socket_set_int(s->events, NNG_OPT_RECVBUF, CM_PUB_BUF)) !=
	        0 ||
	    (rv = nng_socket_set_size(
	         s->events, NNG_OPT_RECVMAXSZ, CM_MSG_MAX)) != 0 ||
	    /* The store comes up after this dial, and may restart: retry
	     * soon (nng's default backoff grows to about a second). */
	    (rv = nng_socket_set_ms(s->events, NNG_OPT_RECONNMINT, 10)) != 0 ||
	    (rv = nng_socket_set_ms(s->events, NNG_OPT_RECONNMAXT, 200)) != 0 ||
	    (rv = nng_pipe_notify(
	         s->events, NNG_PIPE_EV_ADD_POST, events_pipe_up, s)) != 0 ||
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
	stop_kinds(
	    &s, KIND(SUP_API) | KIND(SUP_ACTOR), CM_SUP_STOP_CHILDREN_MS);
	stop_kinds(&s, KIND(SUP_STORE), CM_SUP_STOP_STORE_MS);
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
