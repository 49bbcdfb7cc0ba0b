/*
 * common/startup: the start every binary shares.  Each Criterion test
 * runs in a process of its own, so blocking signals here touches no
 * other test.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
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

/*
 * Runs start() with stderr on fd, then logs one line; returns the first
 * byte of what reached the other end (read from peer), or -1.  stderr
 * is put back before returning.
 */
static int
start_and_log(int fd, int peer, struct cm_config *cfg, const char *const *args)
{
	struct cm_startup st;
	char buf[512];
	int saved = dup(STDERR_FILENO);
	ssize_t n;
	int rc;

	cr_assert_geq(saved, 0);
	cr_assert_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	rc = start(&st, cfg, NULL, 0, args);
	if (rc == CM_EXIT_OK)
		cm_info("startup: one line");
	cr_assert_eq(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	cr_assert_eq(rc, CM_EXIT_OK);
	n = read(peer, buf, sizeof(buf) - 1);
	cr_assert_gt(n, 0, "nothing was logged");
	buf[n] = '\0';
	cr_assert(strstr(buf, "startup: one line") != NULL, "%s", buf);
	return (unsigned char)buf[0];
}

/* A terminal: the two ends of a new pseudo-terminal. */
static void
open_tty(int *tty, int *master)
{
	*master = posix_openpt(O_RDWR | O_NOCTTY);
	cr_assert_geq(*master, 0);
	cr_assert_eq(grantpt(*master), 0);
	cr_assert_eq(unlockpt(*master), 0);
	*tty = open(ptsname(*master), O_RDWR | O_NOCTTY);
	cr_assert_geq(*tty, 0);
}

Test(startup, logs_are_text_on_a_terminal_and_json_lines_otherwise)
{
	struct cm_config cfg;
	int p[2], tty, master;

	open_tty(&tty, &master);
	cr_assert_neq(start_and_log(tty, master, &cfg, NULL), '{');
	cr_assert_str_eq(cfg.log_format, "text");
	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(start_and_log(p[1], p[0], &cfg, NULL), '{');
	cr_assert_str_eq(cfg.log_format, "json");
	/* Configured, it is what it says wherever it goes. */
	cr_assert_eq(start_and_log(tty, master, &cfg,
	                 (const char *[]){"--log-format=json", NULL}),
	    '{');
	cr_assert_neq(start_and_log(p[1], p[0], &cfg,
	                  (const char *[]){"--log-format=text", NULL}),
	    '{');
	cr_assert_str_eq(cfg.log_format, "text");
	close(p[0]);
	close(p[1]);
	close(tty);
	close(master);
}

/* A child reads its parent's configuration from --config-fd: it writes
 * what its parent decided, whatever its own stderr is. */
Test(startup, a_child_follows_its_parents_decision)
{
	struct cm_config parent, child;
	char arg[32];
	int p[2], tty, master, fd;

	open_tty(&tty, &master);
	cr_assert_neq(start_and_log(tty, master, &parent, NULL), '{');
	fd = cm_config_to_fd(&parent);
	cr_assert_geq(fd, 0);
	snprintf(arg, sizeof(arg), "--config-fd=%d", fd);
	cr_assert_eq(pipe(p), 0);
	/* start() names --config=/dev/null, which excludes --config-fd. */
	{
		const char *argv[] = {"test", arg, NULL};
		struct cm_startup st;
		int saved = dup(STDERR_FILENO);
		char buf[512];
		ssize_t n;

		cr_assert_eq(dup2(p[1], STDERR_FILENO), STDERR_FILENO);
		cr_assert_eq(cm_startup(&st, &child, "test", 2,
		                 (char *const *)argv, no_env, NULL, 0),
		    CM_EXIT_OK);
		cm_info("startup: one line");
		cr_assert_eq(dup2(saved, STDERR_FILENO), STDERR_FILENO);
		close(saved);
		n = read(p[0], buf, sizeof(buf) - 1);
		cr_assert_gt(n, 0);
		cr_assert_neq(buf[0], '{', "the child wrote JSON lines");
	}
	cr_assert_str_eq(child.log_format, "text");
	close(p[0]);
	close(p[1]);
	close(tty);
	close(master);
}

/*
 * A child that asks to die with its parent: killed when the parent
 * dies; and told -1 when the parent had died before it asked (a request
 * that would never fire: the race between fork and prctl).
 */
Test(startup, a_child_dies_with_its_parent_or_knows_it_is_gone)
{
	struct pollfd pfd;
	int p[2];
	char c = 0;
	pid_t mid;
	int st;

	/* The parent lives: 0; it is killed: so is the child, whose end
	 * of the pipe closes. */
	cr_assert_eq(pipe(p), 0);
	if ((mid = fork()) == 0) {
		pid_t me = getpid();

		close(p[0]);
		if (fork() == 0) {
			c = cm_die_with_parent(me) == 0 ? 'y' : 'n';
			(void)!write(p[1], &c, 1);
			for (;;)
				pause();
		}
		close(p[1]);
		for (;;)
			pause();
	}
	close(p[1]);
	cr_assert_eq(read(p[0], &c, 1), 1);
	cr_assert_eq(c, 'y', "the parent was there");
	cr_assert_eq(kill(mid, SIGKILL), 0);
	cr_assert_eq(waitpid(mid, &st, 0), mid);
	pfd = (struct pollfd){.fd = p[0], .events = POLLIN};
	cr_assert_eq(poll(&pfd, 1, 10000), 1, "the child outlived its parent");
	cr_assert_eq(read(p[0], &c, 1), 0, "the child outlived its parent");
	close(p[0]);

	/* The parent died before the child asked: -1. */
	cr_assert_eq(pipe(p), 0);
	if ((mid = fork()) == 0) {
		pid_t me = getpid();

		close(p[0]);
		if (fork() == 0) {
			while (getppid() == me)
				usleep(1000);
			c = cm_die_with_parent(me) == 0 ? 'y' : 'n';
			(void)!write(p[1], &c, 1);
			_exit(0);
		}
		_exit(0);
	}
	close(p[1]);
	cr_assert_eq(waitpid(mid, &st, 0), mid);
	cr_assert_eq(read(p[0], &c, 1), 1);
	cr_assert_eq(c, 'n', "the parent had gone");
	close(p[0]);
}
