/*
 * common/startup: the start every binary shares.  Each Criterion test
 * runs in a process of its own, so blocking signals here touches no
 * other test.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "startup.h"

static char *const no_env[] = {NULL};

/* cm_startup with argv "test --config=/dev/null" and then flags. */
static int
start(struct cm_startup *st, struct cm_config *cfg, const char *const *extra,
    unsigned flags, const char *const *args)
{
	const char *argv[16] = {"test", "--config=/dev/null"};
	int argc = 2;

	for (; args != NULL && *args != NULL && argc < 15; args++)
		argv[argc++] = *args;
	argv[argc] = NULL;
	return cm_startup(
	    st, cfg, "test", argc, (char *const *)argv, no_env, extra, flags);
}

Test(startup, an_unknown_flag_is_a_permanent_failure)
{
	static const char *const args[] = {"--no-such-flag=1", NULL};
	struct cm_config cfg;
	struct cm_startup st;

	cr_assert_eq(start(&st, &cfg, NULL, 0, args), CM_EXIT_PERMANENT);
	cr_assert_eq(st.notify_fd, -1);
	cr_assert_eq(st.sig_fd, -1);
}

Test(startup, a_notify_fd_that_is_no_number_is_a_permanent_failure)
{
	static const char *const bad[] = {"--notify-fd=", "--notify-fd=abc",
	    "--notify-fd=-1", "--notify-fd=+3", "--notify-fd= 3",
	    "--notify-fd=3x", "--notify-fd=65536",
	    "--notify-fd=99999999999999999999", NULL};

	for (size_t i = 0; bad[i] != NULL; i++) {
		const char *args[] = {bad[i], NULL};
		struct cm_config cfg;
		struct cm_startup st;

		cr_assert_eq(start(&st, &cfg, NULL, 0, args), CM_EXIT_PERMANENT,
		    "%s", bad[i]);
		cr_assert_eq(st.notify_fd, -1, "%s", bad[i]);
	}
}

Test(startup, the_readiness_line_is_written_once_and_the_fd_closed)
{
	struct cm_config cfg;
	struct cm_startup st;
	char arg[32], buf[16];
	int p[2];

	cr_assert_eq(pipe(p), 0);
	snprintf(arg, sizeof(arg), "--notify-fd=%d", p[1]);
	cr_assert_eq(
	    start(&st, &cfg, NULL, 0, (const char *[]){arg, NULL}), CM_EXIT_OK);
	cr_assert_eq(st.notify_fd, p[1]);
	cr_assert(fcntl(st.notify_fd, F_GETFD) & FD_CLOEXEC,
	    "a child this process execs would hold the readiness pipe");
	cm_ready_notify(&st.notify_fd);
	cr_assert_eq(st.notify_fd, -1);
	cm_ready_notify(&st.notify_fd); /* a no-op now */
	cr_assert_eq(fcntl(p[1], F_GETFD), -1, "the write end is still open");
	cr_assert_eq(read(p[0], buf, sizeof(buf)), 6);
	cr_assert_eq(memcmp(buf, CM_READY_LINE, 6), 0);
	cr_assert_eq(read(p[0], buf, sizeof(buf)), 0, "more than one line");
	close(p[0]);
	cm_startup_fini(&st);
}

Test(startup, an_extra_fd_flag_is_checked_the_same_way)
{
	static const char *const extra[] = {"wake-fd", NULL};
	struct cm_config cfg;
	struct cm_startup st;
	int fd = -7;

	cr_assert_eq(
	    start(&st, &cfg, extra, 0, (const char *[]){"--wake-fd=abc", NULL}),
	    CM_EXIT_OK);
	cr_assert_eq(cm_startup_fd(&cfg, "wake-fd", &fd), -1);
	cr_assert_eq(fd, -7);
	cr_assert_eq(start(&st, &cfg, extra, 0, NULL), CM_EXIT_OK);
	cr_assert_eq(cm_startup_fd(&cfg, "wake-fd", &fd), 0);
	cr_assert_eq(fd, -7, "an absent flag leaves the fd alone");
}

Test(startup, signals_are_blocked_and_read_from_the_signalfd)
{
	struct cm_config cfg;
	struct cm_startup st;
	struct signalfd_siginfo si;
	sigset_t now;

	cr_assert_eq(start(&st, &cfg, NULL,
	                 CM_STARTUP_SIGCHLD | CM_STARTUP_SIGNALFD, NULL),
	    CM_EXIT_OK);
	cr_assert_eq(sigprocmask(SIG_BLOCK, NULL, &now), 0);
	cr_assert(sigismember(&now, SIGTERM));
	cr_assert(sigismember(&now, SIGINT));
	cr_assert(sigismember(&now, SIGCHLD));
	cr_assert_geq(st.sig_fd, 0);
	cr_assert(fcntl(st.sig_fd, F_GETFL) & O_NONBLOCK);
	cr_assert(fcntl(st.sig_fd, F_GETFD) & FD_CLOEXEC);
	cr_assert_eq(read(st.sig_fd, &si, sizeof(si)), -1, "nothing pending");
	/* To this thread: a signal to the process may go to another of its
	 * threads (the sanitizers', the test runner's) that has it open. */
	cr_assert_eq(pthread_kill(pthread_self(), SIGTERM), 0);
	cr_assert_eq(read(st.sig_fd, &si, sizeof(si)), (ssize_t)sizeof(si));
	cr_assert_eq(si.ssi_signo, SIGTERM);
	cm_startup_fini(&st);
	cr_assert_eq(st.sig_fd, -1);
}

Test(startup, without_sigchld_it_stays_unblocked)
{
	struct cm_config cfg;
	struct cm_startup st;
	sigset_t now;

	cr_assert_eq(start(&st, &cfg, NULL, 0, NULL), CM_EXIT_OK);
	cr_assert_eq(sigprocmask(SIG_BLOCK, NULL, &now), 0);
	cr_assert(sigismember(&now, SIGTERM));
	cr_assert_not(sigismember(&now, SIGCHLD));
	cr_assert_eq(st.sig_fd, -1);
}

Test(startup, the_data_and_run_dirs_are_made_private)
{
	char dir[] = "/tmp/spaced-startup-XXXXXX", arg[64], run[96];
	struct cm_config cfg;
	struct cm_startup st;
	struct stat sb;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(arg, sizeof(arg), "--data-dir=%s/data", dir);
	cr_assert_eq(start(&st, &cfg, NULL, CM_STARTUP_DIRS,
	                 (const char *[]){arg, NULL}),
	    CM_EXIT_OK);
	cr_assert_eq(stat(cfg.data_dir, &sb), 0);
	cr_assert_eq(sb.st_mode & 0777, 0700);
	cr_assert_eq(stat(cfg.run_dir, &sb), 0);
	cr_assert_eq(sb.st_mode & 0777, 0700);
	snprintf(run, sizeof(run), "%s/data/run", dir);
	cr_assert_str_eq(cfg.run_dir, run);
	rmdir(run);
	snprintf(run, sizeof(run), "%s/data", dir);
	rmdir(run);
	rmdir(dir);
}
