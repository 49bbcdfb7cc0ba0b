/*
 * spaced-api: the HTTP front.
 *
 *   spaced-api [--notify-fd=N] [config flags]
 *
 * One loop thread owns every client connection and a small pool of
 * worker threads runs the requests (api/http.h): a worker may wait on the
 * store, never on a client, and nothing waits on a client at all.
 * Exit codes: 0 stopped, 1 failed, 100 bad configuration.
 */
#include <errno.h>
#include <nng/nng.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "api.h"
#include "clock.h"
#include "http.h"
#include "log.h"
#include "rpc.h"

#define EXIT_PERMANENT 100

int
main(int argc, char **argv, char **envp)
{
	static const char *const extra[] = {"notify-fd", NULL};
	static struct cm_config cfg;
	enum cm_log_level level = CM_LOG_INFO;
	nng_socket store;
	char err[256], url[CM_PATH_MAX];
	const char *fd_arg;
	struct signalfd_siginfo si;
	sigset_t mask;
	int sig_fd, notify_fd = -1;

	cm_log_init("spaced-api", CM_LOG_INFO, false);
	if (cm_config_load(&cfg, argc, argv, envp, extra, err, sizeof(err)) !=
	    0) {
		cm_warnx("config: %s", err);
		return EXIT_PERMANENT;
	}
	cm_log_level_parse(cfg.log_level, &level);
	cm_log_init("spaced-api", level, strcmp(cfg.log_format, "text") != 0);
	if ((fd_arg = cm_config_extra(&cfg, "notify-fd")) != NULL) {
		char *end;
		long v = strtol(fd_arg, &end, 10);

		if (*end != '\0' || v < 0 || v > 65535) {
			cm_warnx("config: notify-fd must be a file descriptor "
			         "number");
			return EXIT_PERMANENT;
		}
		notify_fd = (int)v;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((sig_fd = signalfd(-1, &mask, SFD_CLOEXEC)) < 0) {
		cm_warn("api: signalfd");
		return 1;
	}

	if (cm_ipc_url(url, sizeof(url), cfg.run_dir, "store.ipc") != 0 ||
	    cm_rpc_open(&store, url) != 0) {
		cm_warnx("api: cannot reach the store");
		return 1;
	}
	if (api_http_start(&cfg, store) != 0)
		return 1;
	if (notify_fd >= 0) {
		static const char ready[] = "ready\n";
		if (write(notify_fd, ready, sizeof(ready) - 1) < 0)
			cm_warn("api: readiness notification");
		close(notify_fd);
	}
	cm_info("api: listening on http://%s/", cfg.http_listen);

	while (read(sig_fd, &si, sizeof(si)) < 0 && errno == EINTR)
		;
	cm_info("api: signal %u, stopping", si.ssi_signo);
	api_http_stop();
	nng_close(store);
	return 0;
}
