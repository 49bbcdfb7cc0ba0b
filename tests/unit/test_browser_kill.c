/*
 * test_browser_kill.c: the kill of a browser's process group
 * (space-actor/browser.h) on a tree of processes made here, standing in
 * for a Chromium: a leader with a second thread, a child and a grandchild.
 * act_browser_idle puts every thread of that tree in SCHED_IDLE and
 * nothing else (the caller, a process beside the tree), walking it, or
 * from act_browser_list's list, without what has left the browser's
 * process group since; act_browser_kill leaves none of the tree running.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "browser.h"

/* What a test started, killed after it whatever became of it. */
static pid_t tree_group, beside;

/* A thread that only waits. */
static void *
waiter(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* SIGUSR1: the process leaves the tree's process group. */
static void
leave_group(int sig)
{
	(void)sig;
	setpgid(0, 0);
}

/* In a forked process: says its pid on fd, and waits to be killed. */
static void
stay(int fd)
{
	pid_t me = getpid();

	signal(SIGUSR1, leave_group);
	if (write(fd, &me, sizeof(me)) != sizeof(me))
		_exit(1);
	for (;;)
		pause();
}

/* The tree: a leader in a process group of its own, with a second
 * thread, a child, and the child's child.  pids gets leader, child and
 * grandchild, once each has started. */
static void
tree_start(pid_t pids[3])
{
	int fds[2];
	pid_t leader;

	cr_assert_eq(pipe(fds), 0);
	leader = fork();
	cr_assert_geq(leader, 0);
	if (leader == 0) {
		pthread_t t;

		setpgid(0, 0);
		if (pthread_create(&t, NULL, waiter, NULL) != 0)
			_exit(1);
		if (fork() == 0) {
			if (fork() == 0)
				stay(fds[1]);
			stay(fds[1]);
		}
		stay(fds[1]);
	}
	setpgid(leader, leader);
	tree_group = leader;
	close(fds[1]);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(read(fds[0], &pids[i], sizeof(pids[i])),
		    sizeof(pids[i]), "a process of the tree did not start");
	close(fds[0]);
	/* In the order they said so; the leader is known. */
	for (int i = 0; i < 3; i++)
		if (pids[i] == leader && i != 0) {
			pids[i] = pids[0];
			pids[0] = leader;
		}
}

/* The policy of every thread of pid; the count of threads in *n. */
static bool
all_threads(pid_t pid, int policy, int *n)
{
	char path[64];
	struct dirent *de;
	bool all = true;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	cr_assert_not_null(d, "no %s", path);
	*n = 0;
	while ((de = readdir(d)) != NULL) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end != '\0' || tid <= 0 || tid > INT32_MAX)
			continue; /* "." and ".." */
		(*n)++;
		all = all && sched_getscheduler((pid_t)tid) == policy;
	}
	closedir(d);
	return all;
}

/* The leader is gone, and the child and grandchild died of SIGKILL: we
 * reap them, their subreaper once their parents died (each is ours
 * before its parent is reaped). */
static void
tree_reaped(const pid_t pids[3])
{
	int seen = 0;

	cr_assert_eq(kill(pids[0], 0), -1, "the leader is still there");
	while (seen != 3) {
		int status;
		pid_t r = waitpid(-1, &status, 0);

		if (r < 0 && errno == EINTR)
			continue;
		cr_assert_gt(r, 0, "waitpid: %s", strerror(errno));
		for (int i = 1; i < 3; i++)
			if (r == pids[i]) {
				cr_assert(WIFSIGNALED(status) &&
				              WTERMSIG(status) == SIGKILL,
				    "process %d of the tree was not killed", i);
				seen |= 1 << (i - 1);
			}
	}
}

static void
subreaper(void)
{
	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
}

static void
leftovers(void)
{
	if (tree_group > 0)
		kill(-tree_group, SIGKILL);
	if (beside > 0)
		kill(beside, SIGKILL);
}

TestSuite(browser_kill, .init = subreaper, .fini = leftovers, .timeout = 30);

Test(browser_kill, the_whole_tree_goes_idle_and_nothing_else)
{
	struct act_browser b = {.wfd = -1, .rfd = -1};
	pid_t pids[3];
	int n;

	tree_start(pids);
	/* A process beside the tree, in the same group as the test. */
	if ((beside = fork()) == 0)
		for (;;)
			pause();
	cr_assert_gt(beside, 0);

	b.pid = pids[0];
	act_browser_idle(&b);
	cr_assert(all_threads(pids[0], SCHED_IDLE, &n),
	    "a thread of the leader is not idle");
	cr_assert_eq(n, 2, "the leader has %d threads", n);
	cr_assert(all_threads(pids[1], SCHED_IDLE, &n), "the child");
	cr_assert(all_threads(pids[2], SCHED_IDLE, &n), "the grandchild");
	cr_assert(all_threads(getpid(), SCHED_OTHER, &n),
	    "the caller's threads were touched");
	cr_assert(all_threads(beside, SCHED_OTHER, &n),
	    "a process beside the tree was touched");

	act_browser_kill(&b);
	cr_assert_eq(b.pid, 0);
	tree_reaped(pids);
	cr_assert(all_threads(beside, SCHED_OTHER, &n), "killed beside");
	kill(beside, SIGKILL);
	waitpid(beside, NULL, 0);
}

Test(browser_kill, a_tree_whose_leader_is_gone_is_left_alone)
{
	struct act_browser b = {.wfd = -1, .rfd = -1};
	pid_t pids[3];
	int n;

	tree_start(pids);
	kill(pids[0], SIGKILL);
	cr_assert_eq(waitpid(pids[0], NULL, 0), pids[0]);
	/* Its children are ours now (the subreaper): not walked from a
	 * leader that no longer exists. */
	b.pid = pids[0];
	act_browser_idle(&b);
	cr_assert(all_threads(pids[1], SCHED_OTHER, &n));
	kill(-pids[0], SIGKILL);
	tree_reaped(pids);
}

Test(browser_kill, a_listed_tree_goes_idle_but_what_left_its_group)
{
	struct act_browser b = {.wfd = -1, .rfd = -1};
	pid_t pids[3];
	int n, found = 0;

	tree_start(pids);
	b.pid = pids[0];
	act_browser_list(&b);
	cr_assert_eq(b.n_procs, 3, "listed %d processes", b.n_procs);
	cr_assert_eq(b.procs[0], pids[0], "the leader comes first");
	for (int i = 0; i < b.n_procs; i++)
		found += b.procs[i] == pids[1] || b.procs[i] == pids[2];
	cr_assert_eq(found, 2, "the child and grandchild are listed");
	cr_assert(
	    all_threads(pids[0], SCHED_OTHER, &n), "listing changed a policy");

	/* The grandchild leaves the group, as a pid reused by another
	 * process would not be in it (and the group's kill after a test). */
	beside = pids[2];
	kill(pids[2], SIGUSR1);
	for (int i = 0; i < 5000 && getpgid(pids[2]) != pids[2]; i++) {
		struct timespec ms = {0, 1000 * 1000};

		nanosleep(&ms, NULL);
	}
	cr_assert_eq(getpgid(pids[2]), pids[2], "it never left the group");

	act_browser_idle(&b);
	cr_assert(all_threads(pids[0], SCHED_IDLE, &n), "the leader");
	cr_assert(all_threads(pids[1], SCHED_IDLE, &n), "the child");
	cr_assert(all_threads(pids[2], SCHED_OTHER, &n),
	    "a listed process outside the group was touched");
	cr_assert(all_threads(getpid(), SCHED_OTHER, &n), "the caller");

	act_browser_kill(&b);
	cr_assert_eq(b.n_procs, 0, "the list outlived its browser");
	kill(pids[2], SIGKILL);
	tree_reaped(pids);
}
