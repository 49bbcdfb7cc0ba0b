/*
 * children.h: the supervisor's table of children, one row per process,
 * and the kinds they come in (OpenBSD privsep style).
 */
#ifndef SUP_CHILDREN_H
#define SUP_CHILDREN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "limits.h"
#include "policy.h"

enum sup_kind { SUP_STORE, SUP_API, SUP_ACTOR, SUP_KIND__COUNT };

enum sup_state {
	SUP_STARTING, /* forked, readiness line not seen yet */
	SUP_READY,    /* said it is ready */
	SUP_BACKOFF,  /* dead; restarts at restart_at_ms */
	SUP_STOPPING, /* told to stop; reaped when it exits */
};

struct sup_kind_info {
	const char *name;   /* "store", "api", "actor" */
	const char *binary; /* found beside the supervisor's own executable */
	const struct sup_policy *policy;
};
extern const struct sup_kind_info sup_kinds[SUP_KIND__COUNT];

struct sup_child {
	uint64_t
	    serial; /* from 1, in the order rows were added; never reused */
	enum sup_kind kind;
	enum sup_state state;
	pid_t pid;                    /* 0 when not running */
	int notify_fd;                /* readiness pipe, -1 once read */
	int wake_fd;                  /* actors: write end of the wake pipe */
	char space_id[CM_ID_MAX + 1]; /* actors only; "" for a standby */
	/* Actors: the Space's browser instance when known; a standby's. */
	char instance_id[CM_ID_MAX + 1];
	bool standby;       /* a warm standby no Space has adopted yet */
	int64_t started_ms; /* monotonic */
	int64_t restart_at_ms;
	int restarts;
	struct sup_history history;
};

struct sup_children {
	size_t n, cap;
	struct sup_child **v; /* in no order: a removal moves the last row */
	uint64_t last_serial;
	char bin_dir[CM_PATH_MAX];
	int conf_fd;      /* the sealed config every child reads (-1: none) */
	char **child_env; /* the environment less secrets; entries borrowed */
};

/*
 * Finds the binaries' directory, writes the config once into a sealed
 * memfd, and builds the children's environment: the process's own, less
 * the variables of secret keys.  The process must not change its
 * environment while c lives (the entries are borrowed).
 */
int sup_children_init(struct sup_children *c, const struct cm_config *cfg);
void sup_children_fini(struct sup_children *c);

/* Adds a row (not started).  NULL on allocation failure. */
struct sup_child *sup_child_add(
    struct sup_children *c, enum sup_kind kind, const char *space_id);
void sup_child_remove(struct sup_children *c, struct sup_child *ch);
struct sup_child *sup_child_by_pid(struct sup_children *c, pid_t pid);
struct sup_child *sup_child_by_space(
    struct sup_children *c, const char *space_id);
struct sup_child *sup_child_by_kind(struct sup_children *c, enum sup_kind kind);
/* The actor row (a standby, or a Space's actor) of an instance, or NULL. */
struct sup_child *sup_child_by_instance(
    struct sup_children *c, const char *instance_id);

/*
 * fork+exec of the row's binary with --config-fd (nothing of the config
 * on its command line or, for secrets, in its environment), --notify-fd
 * and, for an
 * actor, --space (--standby with the instance for a standby row) and
 * --wake-fd (the read end of a pipe whose write end the row keeps; see
 * sup_child_wake).  Actors get their own process group so
 * that killing the group takes their browser with them.  Every child dies with
 * the supervisor (PR_SET_PDEATHSIG).  Returns 0, or -1 (nothing started).
 */
int sup_child_spawn(
    struct sup_children *c, struct sup_child *ch, int64_t now_ms);

/*
 * Wakes an actor: one byte on its wake pipe (CM_WAKE_CLOSE, CM_WAKE_QUEUED
 * or CM_WAKE_ANY), never blocking (a full pipe already holds a wake-up,
 * and the store tells the actor the rest).  A no-op for a row with no
 * running actor.
 */
void sup_child_wake(struct sup_child *ch, char why);

/*
 * Hands space_id to a running standby: the row becomes the Space's actor
 * row first (so no second actor ever starts for the Space), then the
 * adopt message goes on the wake pipe in one atomic write, never
 * blocking.  Returns 0, or -1 when the message could not be written (the
 * standby is dying: the row restarts as the Space's ordinary actor).
 */
int sup_child_adopt(struct sup_child *ch, const char *space_id);

/* Closes the row's pipes to a process that is gone. */
void sup_child_gone(struct sup_child *ch);

/* True when the binary of a kind exists (the api may not be built). */
bool sup_kind_available(const struct sup_children *c, enum sup_kind kind);

const char *sup_state_name(enum sup_state s);

#endif
