/*
 * browser.h: launching a managed Chromium (docs/architecture.md).
 *
 * The browser runs headless in a process group of its own, speaks CDP on
 * the private pipe of --remote-debugging-pipe (its fds 3 and 4) and
 * listens on no port.  It dies with its actor: PR_SET_PDEATHSIG, and
 * Chromium exits by itself when the pipe closes.  Its flags come from one
 * table in browser.c.
 */
#ifndef ACT_BROWSER_H
#define ACT_BROWSER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "limits.h"

struct act_browser {
	pid_t pid; /* also its process group; 0 when none runs */
	int wfd;   /* we write CDP here: the browser's fd 3 */
	int rfd;   /* we read CDP here: the browser's fd 4 */
	/* Its processes as act_browser_list saw them (the leader first);
	 * n_procs 0 when not listed. */
	pid_t procs[CM_BROWSER_TREE_MAX];
	int n_procs;
};

/*
 * Starts chromium_path with profile_dir as its --user-data-dir (which
 * must exist), tmp_dir, when not NULL, as its TMPDIR and HOME (where
 * Chromium keeps its single-instance socket, its shared memory with
 * /dev/shm off, its crash database, and what GLib and NSS keep under a
 * home; it must exist) and proxy, when not NULL, as its --proxy-server. Returns
 * 0 with *b filled (the caller owns both fds and must reap the pid), or -1 with
 * a reason in err.  Nothing in err or the browser's command line is a secret of
 * the instance beyond the profile path, which the caller keeps out of responses
 * and logs.
 */
int act_browser_launch(const char *chromium_path, const char *profile_dir,
    const char *tmp_dir, const char *proxy, struct act_browser *b, char *err,
    size_t errlen);

/*
 * Lists the browser's processes now: the leader and its descendants, as
 * /proc/<pid>/task/<tid>/children gives them.  A driver lists them while
 * it waits anyway (between calls), so that a kill need not walk the tree
 * on the close's path; the list counts only until the next call, and a
 * new browser starts without one.
 */
void act_browser_list(struct act_browser *b);

/*
 * Puts the browser's processes, every thread of each, in SCHED_IDLE,
 * where any other task's wake-up preempts them at once: a browser about
 * to be killed, whose teardown must not delay anyone.  The processes
 * listed, those still in the browser's process group; with no list, the
 * tree is walked now.  A thread born after the list or the walk, or a
 * kernel without the children lists, is missed.
 */
void act_browser_idle(const struct act_browser *b);

/*
 * Kills the browser's process group and reaps its leader, waiting at
 * most CM_BROWSER_REAP_MS (it was sent SIGKILL).  Closes neither fd.
 * Safe on a browser that is not running.
 */
void act_browser_kill(struct act_browser *b);

/*
 * Sends SIGKILL to the browser's whole process group and forgets it,
 * without waiting for the kernel to free what it held (on a small host,
 * a tenth of a second of a close's time).  From the return no process of
 * the browser runs code again: every member has SIGKILL pending, and a
 * fork racing the kill fails.  Its leader is left to act_browser_reap;
 * the caller must not start another browser on the same profile before
 * that (Chromium's profile lock).  Closes neither fd.
 */
void act_browser_end(struct act_browser *b);

/*
 * The process is stopping (SIGTERM): from now on a browser it kills dies
 * at the priority it ran at, neither idled nor niced.  No close's path is
 * left to keep clear of its teardown, and the process reaps it before it
 * exits, within its stop's bound: in SCHED_IDLE on a busy host the reap
 * of a killed leader alone took half a second.
 */
void act_browser_stopping(void);

/*
 * Reaps the browsers act_browser_end killed, waiting for them until
 * deadline_ms (cm_mono_ms; 0 waits for none).  An actor calls it before
 * it exits, so that no browser it ended outlives it.  Returns 0 when none
 * is left, 1 when some still run at the deadline.
 */
int act_browser_reap(int64_t deadline_ms);

/*
 * Chromium keeps a profile's single-instance socket in a directory of its
 * own under $TMPDIR, named by the profile's SingletonSocket symlink, and
 * removes it only when it exits cleanly: every killed browser (every
 * closed Space) would leave one behind.  Removes it, for a profile whose
 * browser no longer runs (before the profile goes, or before a kept one's
 * next launch).  Only a directory of Chromium's name and of our own uid
 * is touched, only its two entries are unlinked, and it stays when
 * anything else is in it.
 */
void act_browser_rm_singleton(const char *profile_dir);

#endif
