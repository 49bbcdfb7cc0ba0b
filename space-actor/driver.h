/*
 * driver.h: the runtime driver interface (docs/architecture.md).
 *
 * An actor owns one driver.  Everything is non-blocking: the actor's single
 * poll() loop asks the driver which fds to watch and when it next needs
 * time, then steps it.  One invocation runs at a time, by construction of
 * the actor loop above it.
 */
#ifndef ACT_DRIVER_H
#define ACT_DRIVER_H

#include <jansson.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "capability.h"
#include "config.h"
#include "errors.h"
#include "limits.h"
#include "redact.h"
#include "status.h"

/*
 * What a Space's page did besides a call's result (page_events.c): it
 * opened a dialog, opened a tab, or began or ended a download.  kind is
 * CM_EV_DIALOG, CM_EV_TAB_OPENED or CM_EV_DOWNLOAD, and only its kind's
 * members are set, raw: the actor bounds and redacts them into the
 * event's payload (docs/api.md).  Every string is borrowed for the call.
 */
struct act_page_event {
	enum cm_event_kind kind;
	/* dialog */
	const char *type; /* alert, confirm, prompt or beforeunload */
	const char *message;
	const char *default_prompt; /* a prompt's; NULL for another type */
	bool accepted;              /* accepted, not dismissed */
	/* tab_opened */
	const char *url;
	bool closed; /* closed as it opened: CM_TABS_MAX were open */
	/* download */
	const char *name;  /* the site's name for it: bounded, no path */
	const char *state; /* in_progress (begun), completed or canceled */
	int64_t bytes;
	/* a download's end, during a task: the artifact it was stored as
	 * (NULL: not stored) and its sha256, or too_large: it was refused
	 * for being over CM_ARTIFACT_MAX */
	const char *artifact;
	const char *sha256;
	bool too_large;
};

/* Told of one such event, on the actor's loop, as the page's CDP event
 * arrives; it must return at once (the actor only queues it). */
typedef void (*act_page_event_fn)(void *arg, const struct act_page_event *ev);

/* What a driver is opened with: the instance as the store knows it. */
struct act_env {
	const char *space_id;
	const char *instance_id;
	enum cm_driver driver; /* CM_DRIVER__COUNT: a name of no driver */
	const char *endpoint;  /* secret */
	enum cm_profile_mode profile_mode;
	const char *profile;  /* secret; "" or NULL: none given */
	const json_t *config; /* the instance config object (secret) */
	const struct cm_bundle *bundle;
	const struct cm_policy *policy;
	const struct cm_config *cfg;
	/* managed: the Space's egress proxy (egress.h), which every request
	 * of the browser goes through; owned by the actor.  NULL: none. */
	struct act_egress *egress;
	/* managed and cdp: told of what the page does besides a call's
	 * result, with page_event_arg (NULL: nobody is).  The actor records
	 * each in the Space's log; the driver hands it to the page through
	 * the session (act_session_events).  The fake driver has no page. */
	act_page_event_fn page_event;
	void *page_event_arg;
	/* The Space's dialog policy: "accept" or "dismiss" answers every
	 * dialog so; NULL leaves each open for handle_dialog. */
	const char *dialog_policy;
};

struct act_call {
	const char *task_id;
	const char *request_id;
	const char *capability;
	const json_t *args;  /* validated against the bundle */
	int64_t deadline_ms; /* monotonic */
	/* upload: the directory the actor wrote the call's files into, one
	 * per name of args.files under that very name (the driver's
	 * upload_dir, then the task's own); NULL or "": none were. */
	const char *upload_dir;
};

enum act_state {
	ACT_PENDING, /* still running: poll and step again */
	ACT_DONE,    /* finished: see the outcome */
	ACT_CLEAN,   /* a reset under way is over: out->err says whether
	                the runtime is usable (CM_OK) */
};

struct act_outcome {
	enum cm_err err; /* CM_OK, or a task error code */
	char *result;    /* malloc'd JSON text on success; caller frees */
	char message[CM_ERROR_MESSAGE_MAX + 1]; /* raw: the actor redacts */
	/*
	 * What a successful call made besides its result (a screenshot, or
	 * the file the page downloaded), or artifact NULL: artifact_len
	 * bytes, at most CM_ARTIFACT_MAX, malloc'd (the caller frees); its
	 * name (cm_artifact_name_valid) is the outcome's own, its mime a
	 * static string (common/mime.h).  The result names it; the store
	 * keeps it with the task.
	 */
	unsigned char *artifact;
	size_t artifact_len;
	char artifact_name[CM_ID_MAX + 1];
	const char *artifact_mime;
};

struct act_driver;

struct act_driver_ops {
	/* Launches or attaches.  On failure returns -1 with a reason. */
	int (*open)(const struct act_env *env, struct act_driver **out,
	    char *err, size_t errlen);
	/* Begins a call; may finish at once (then step reports ACT_DONE). */
	int (*start)(struct act_driver *d, const struct act_call *call);
	/*
	 * Fills up to max pollfds and sets *wake_ms (monotonic; -1 for none)
	 * to the next time the driver needs a step.  Returns the fd count.
	 */
	int (*pollfds)(struct act_driver *d, struct pollfd *fds, int max,
	    int64_t *wake_ms);
	/*
	 * Advances the call in progress after poll().  It is called after
	 * every poll, with or without a call: with none it only keeps the
	 * runtime going (reads its events) and returns ACT_PENDING.
	 */
	enum act_state (*step)(struct act_driver *d, const struct pollfd *fds,
	    int nfds, struct act_outcome *out);
	/*
	 * cancel abandons the call in progress: when it returns, no outcome
	 * of that call will be reported.  reset then brings the runtime back
	 * to rest for the next task (a page stops loading, say).  Neither
	 * blocks.  cancel returns 0, or -1 when the runtime is unusable;
	 * reset returns 0 when the runtime is at rest already, 1 when the
	 * reset is under way (step reports ACT_CLEAN when it is over; a call
	 * started meanwhile waits for it), or -1 when the runtime is
	 * unusable.
	 */
	int (*cancel)(struct act_driver *d);
	int (*reset)(struct act_driver *d);
	/* Tears the runtime down and wipes an ephemeral profile. */
	void (*close)(struct act_driver *d);
	/*
	 * Optional (NULL for none).  No call runs and the actor waits, most
	 * often on the store: the moment for upkeep that would otherwise
	 * fall on a call's or the close's path.  Called on every such turn
	 * of the loop; it must return at once when there is nothing to do.
	 */
	void (*rest)(struct act_driver *d);
	/*
	 * Optional (NULL: the runtime cannot upload, as a remote browser
	 * cannot read this host's files).  Writes into dir (len bytes) the
	 * directory, private to the Space and made 0700, under which the
	 * actor writes an upload's files (a directory per task), or ""
	 * when the runtime takes none (the fake driver: the files are only
	 * fetched).  What is under it goes when the driver closes, and with
	 * the next open of the same directory after a crash.  0, or -1.
	 */
	int (*upload_dir)(struct act_driver *d, char *dir, size_t len);
	/*
	 * Optional (NULL: the runtime has no screen, as the fake one).  The
	 * session of the Space's page (session.h), for the live view: its
	 * screencast and an operator's input go to its current page.  The
	 * driver keeps it for its whole life, DOWN while no browser runs.
	 */
	struct act_session *(*session)(struct act_driver *d);
};

/* The drivers of this build (drivers.h finds one by kind). */
extern const struct act_driver_ops act_driver_fake;
extern const struct act_driver_ops act_driver_managed;
extern const struct act_driver_ops act_driver_cdp;

/*
 * Warm standby (driver_managed.c).  A standby actor launches a managed
 * browser before any Space is known, with a fresh profile of its own,
 * <data_dir>/profiles/standby-<its pid>, which goes with the driver (as
 * an ephemeral profile does) whichever Space adopts it.
 */
#define ACT_STANDBY_PROFILE_PREFIX "standby-"

/* Opens the standby's driver: the browser is launched and its page set up
 * in the loop, as md_open does, behind egress (the standby's proxy, which
 * refuses everything until a Space's policy is given to it; borrowed, it
 * must outlive the driver).  0, or -1 with a reason in err. */
int act_managed_standby_open(const struct cm_config *cfg,
    struct act_egress *egress, struct act_driver **out, char *err,
    size_t errlen);
/* False once the standby's browser went away (or never started). */
bool act_managed_alive(const struct act_driver *d);
/* The Space whose instance env is takes the browser: its network policy
 * holds from now on, and its page's events go to env's page_event.  env
 * must outlive d. */
void act_managed_adopt(struct act_driver *d, const struct act_env *env);
/*
 * Removes what is left under <data_dir>/profiles: the standby profiles
 * whose process is gone (a standby killed with -9 leaves its own), and
 * the ephemeral profiles discarded at close (renamed out of use at once,
 * so that a close does not wait for a recursive delete) by this process
 * or by one that is gone.  Called as a standby starts and as an actor
 * of a managed instance ends.
 */
void act_managed_sweep(const struct cm_config *cfg);

#endif
