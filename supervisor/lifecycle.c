/*
 * lifecycle.c: the supervisor's children from start to end: starting a
 * row (or putting it in backoff), an actor per Space and the api once,
 * the readiness line, reaping through the signalfd, a death (finalising
 * an actor's lost task as outcome_unknown, or cancelled when a cancel
 * was asked for, and the restart policy's
 * verdict), restarts when their backoff is over, and stopping kinds of
 * children within bounds at shutdown.  The loop that calls all this is
 * main.c's.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "children.h"
#include "clock.h"
#include "log.h"
#include "standby.h"
#include "startup.h"
#include "storework.h"
#include "sup.h"

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

/* The live view's socket files of an actor that is gone (live.h): one
 * killed leaves them, and nothing else removes them once its Space is
 * closed.  No other actor of the Space runs until this one is reaped. */
static void
actor_sockets_remove(const struct sup *s, const char *space_id)
{
	static const char *const kinds[] = {"ctl", "live"};
	char path[CM_PATH_MAX];

	if (space_id[0] == '\0')
		return;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		int n = snprintf(path, sizeof(path), "%s/%s-%s.ipc",
		    s->cfg.run_dir, kinds[i], space_id);

		if (n > 0 && (size_t)n < sizeof(path))
			unlink(path);
	}
}

/* Acts on a step: sends its request, or ends the bootstrap. */
static void
child_died(struct sup *s, struct sup_child *ch, int status)
{
	const struct sup_policy *p = sup_kinds[ch->kind].policy;
	bool exited = WIFEXITED(status);
	int code = exited ? WEXITSTATUS(status) : 0;
	int64_t now = cm_mono_ms(), delay;
	enum sup_verdict v;

	/* No browser outlives its actor. */
	if (ch->kind == SUP_ACTOR) {
		kill(-ch->pid, SIGKILL);
		actor_sockets_remove(s, ch->space_id);
	}
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

void
sup_reap(struct sup *s)
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

void
sup_read_ready(struct sup *s, struct sup_child *ch)
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
bool
sup_held_by_job(struct sup *s, const struct sup_child *ch)
{
	return ch->kind == SUP_ACTOR &&
	       sup_jobs_pending(&s->jobs, ch->space_id);
}

/* A row whose backoff is over starts again; an actor's lost task is
 * finalised before its replacement may claim anything. */
void
sup_restart_due(struct sup *s, int64_t now)
{
	for (size_t i = 0; i < s->kids.n; i++) {
		struct sup_child *ch = s->kids.v[i];

		if (ch->state != SUP_BACKOFF || now < ch->restart_at_ms ||
		    sup_held_by_job(s, ch))
			continue;
		sup_start_child(s, ch);
	}
}

static bool
stopping(const struct sup_child *ch, unsigned kinds)
{
	return (kinds & SUP_KIND(ch->kind)) != 0 && ch->pid > 0;
}

/*
 * Sends SIGTERM to every child of the kinds and reaps them; SIGKILL (an
 * actor's whole process group) to any left after grace_ms, and gives up
 * waiting CM_SUP_KILL_WAIT_MS later.  Other children that die meanwhile
 * are reaped too.  Bounded whatever the children do.
 */
void
sup_stop_kinds(struct sup *s, unsigned kinds, int grace_ms)
{
	int64_t deadline = cm_mono_ms() + grace_ms;
	bool killed = false, left;

	for (size_t i = 0; i < s->kids.n; i++) {
		struct sup_child *ch = s->kids.v[i];

		if (!(kinds & SUP_KIND(ch->kind)))
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
		if (kinds & SUP_KIND(s->kids.v[i]->kind))
			sup_child_remove(&s->kids, s->kids.v[i]);
}
