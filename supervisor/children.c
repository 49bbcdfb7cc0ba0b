/*
 * children.c: spawning children.  After fork the child only calls
 * async-signal-safe functions and execs at once: nng and SQLite are never
 * touched between fork and exec, since another thread may have held
 * their locks at the fork.
 */
#include "children.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "startup.h"

const struct sup_kind_info sup_kinds[SUP_KIND__COUNT] = {
    [SUP_STORE] = {"store", "spaced-store", &sup_policy_permanent},
    [SUP_API] = {"api", "spaced-api", &sup_policy_permanent},
    [SUP_ACTOR] = {"actor", "spaced-actor", &sup_policy_actor},
};

int
sup_children_init(struct sup_children *c, const struct cm_config *cfg)
{
	char self[CM_PATH_MAX];
	ssize_t n;

	memset(c, 0, sizeof(*c));
	c->conf_fd = -1;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || (size_t)n >= sizeof(self) - 1)
		return -1;
	self[n] = '\0';
	snprintf(c->bin_dir, sizeof(c->bin_dir), "%s", dirname(self));
	if ((c->conf_fd = cm_config_to_fd(cfg)) < 0) {
		cm_warn("supervisor: config memfd");
		return -1;
	}
	if ((c->child_env = cm_config_child_env(NULL)) == NULL)
		return -1;
	return 0;
}

void
sup_children_fini(struct sup_children *c)
{
	for (size_t i = 0; i < c->n; i++) {
		sup_child_gone(c->v[i]);
		free(c->v[i]);
	}
	free(c->v);
	if (c->conf_fd >= 0)
		close(c->conf_fd);
	free(c->child_env);
	memset(c, 0, sizeof(*c));
	c->conf_fd = -1;
}

struct sup_child *
sup_child_add(struct sup_children *c, enum sup_kind kind, const char *space_id)
{
	struct sup_child *ch;

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		struct sup_child **v = realloc(c->v, cap * sizeof(*v));

		if (v == NULL)
			return NULL;
		c->v = v;
		c->cap = cap;
	}
	if ((ch = calloc(1, sizeof(*ch))) == NULL)
		return NULL;
	ch->serial = ++c->last_serial;
	ch->kind = kind;
	ch->notify_fd = -1;
	ch->wake_fd = -1;
	if (space_id != NULL)
		snprintf(ch->space_id, sizeof(ch->space_id), "%s", space_id);
	c->v[c->n++] = ch;
	return ch;
}

void
sup_child_remove(struct sup_children *c, struct sup_child *ch)
{
	for (size_t i = 0; i < c->n; i++) {
		if (c->v[i] != ch)
			continue;
		sup_child_gone(ch);
		free(ch);
		c->v[i] = c->v[--c->n];
		return;
	}
}

struct sup_child *
sup_child_by_pid(struct sup_children *c, pid_t pid)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i]->pid == pid)
			return c->v[i];
	return NULL;
}

struct sup_child *
sup_child_by_space(struct sup_children *c, const char *space_id)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i]->kind == SUP_ACTOR &&
		    strcmp(c->v[i]->space_id, space_id) == 0)
			return c->v[i];
	return NULL;
}

struct sup_child *
sup_child_by_kind(struct sup_children *c, enum sup_kind kind)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i]->kind == kind)
			return c->v[i];
	return NULL;
}

struct sup_child *
sup_child_by_instance(struct sup_children *c, const char *instance_id)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i]->kind == SUP_ACTOR && instance_id[0] != '\0' &&
		    strcmp(c->v[i]->instance_id, instance_id) == 0)
			return c->v[i];
	return NULL;
}

bool
sup_kind_available(const struct sup_children *c, enum sup_kind kind)
{
	char path[CM_PATH_MAX + 64];

	snprintf(
	    path, sizeof(path), "%s/%s", c->bin_dir, sup_kinds[kind].binary);
	return access(path, X_OK) == 0;
}

void
sup_child_wake(struct sup_child *ch, char why)
{
	if (ch->wake_fd >= 0 && write(ch->wake_fd, &why, 1) < 0 &&
	    errno != EAGAIN)
		cm_warn("supervisor: wake %s", ch->space_id);
}

int
sup_child_adopt(struct sup_child *ch, const char *space_id)
{
	char msg[CM_WAKE_ADOPT_LEN + 1];
	int n;

	ch->standby = false;
	snprintf(ch->space_id, sizeof(ch->space_id), "%s", space_id);
	n = snprintf(msg, sizeof(msg), "%c%s\n", CM_WAKE_ADOPT, space_id);
	/* An empty pipe (nothing wakes a standby) takes it whole. */
	if (ch->wake_fd < 0 || n <= 0 || (size_t)n >= sizeof(msg) ||
	    write(ch->wake_fd, msg, (size_t)n) != n)
		return -1;
	return 0;
}

void
sup_child_gone(struct sup_child *ch)
{
	if (ch->notify_fd >= 0)
		close(ch->notify_fd);
	if (ch->wake_fd >= 0)
		close(ch->wake_fd);
	ch->notify_fd = ch->wake_fd = -1;
}

int
sup_child_spawn(struct sup_children *c, struct sup_child *ch, int64_t now_ms)
{
	char path[CM_PATH_MAX + 64], fdarg[32], wakearg[32], confarg[32];
	char spacearg[CM_ID_MAX + 16];
	const char *argv[8];
	size_t argc = 0;
	int fds[2], wake[2] = {-1, -1};
	pid_t pid, self = getpid();

	snprintf(path, sizeof(path), "%s/%s", c->bin_dir,
	    sup_kinds[ch->kind].binary);
	if (pipe2(fds, O_CLOEXEC) != 0) {
		cm_warn("supervisor: pipe");
		return -1;
	}
	/* The wake pipe never blocks the supervisor: a full one is awake. */
	if (ch->kind == SUP_ACTOR && pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
		cm_warn("supervisor: pipe");
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	/* Everything the child needs is built before fork. */
	snprintf(fdarg, sizeof(fdarg), "--notify-fd=%d", fds[1]);
	snprintf(wakearg, sizeof(wakearg), "--wake-fd=%d", wake[0]);
	if (ch->standby)
		snprintf(spacearg, sizeof(spacearg), "--standby=%s",
		    ch->instance_id);
	else
		snprintf(
		    spacearg, sizeof(spacearg), "--space=%s", ch->space_id);
	snprintf(confarg, sizeof(confarg), "--config-fd=%d", c->conf_fd);
	argv[argc++] = path;
	argv[argc++] = confarg;
	argv[argc++] = fdarg;
	if (ch->kind == SUP_ACTOR) {
		argv[argc++] = spacearg;
		argv[argc++] = wakearg;
	}
	argv[argc] = NULL;

	if ((pid = fork()) < 0) {
		cm_warn("supervisor: fork");
		close(fds[0]);
		close(fds[1]);
		if (wake[0] >= 0) {
			close(wake[0]);
			close(wake[1]);
		}
		return -1;
	}
	if (pid == 0) {
		sigset_t none;

		if (ch->kind == SUP_ACTOR)
			setpgid(0, 0);
		/* A supervisor killed right after the fork leaves no
		 * orphan (one waited for its store for ever). */
		if (cm_die_with_parent(self) != 0)
			_exit(127);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* The only fds that cross exec: the config, readiness, wake-up.
		 */
		fcntl(fds[1], F_SETFD, 0);
		fcntl(c->conf_fd, F_SETFD, 0);
		if (wake[0] >= 0)
			fcntl(wake[0], F_SETFD, 0);
		execve(path, (char *const *)argv, c->child_env);
		_exit(127);
	}
	/* Set it here too: whichever of parent and child runs first. */
	if (ch->kind == SUP_ACTOR)
		setpgid(pid, pid);
	close(fds[1]);
	sup_child_gone(ch);
	ch->notify_fd = fds[0];
	if (wake[0] >= 0) {
		close(wake[0]);
		ch->wake_fd = wake[1];
	}
	ch->pid = pid;
	ch->state = SUP_STARTING;
	ch->started_ms = now_ms;
	return 0;
}

const char *
sup_state_name(enum sup_state s)
{
	switch (s) {
	case SUP_STARTING:
		return "starting";
	case SUP_READY:
		return "ready";
	case SUP_BACKOFF:
		return "backoff";
	case SUP_STOPPING:
		return "stopping";
	}
	return "unknown";
}
