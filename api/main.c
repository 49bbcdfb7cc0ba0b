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
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "api.h"
#include "http.h"
#include "log.h"
#include "rpc.h"
#include "startup.h"

int
main(int argc, char **argv, char **envp)
{
	static struct cm_config cfg;
	struct cm_startup su;
	struct pollfd pfd;
	nng_socket store;
	char url[CM_PATH_MAX];
	struct signalfd_siginfo si;
	int rc;

	if ((rc = cm_startup(&su, &cfg, "spaced-api", argc, argv, envp, NULL,
	         CM_STARTUP_SIGNALFD)) != CM_EXIT_OK)
		return rc;
	if (cm_ipc_url(url, sizeof(url), cfg.run_dir, "store.ipc") != 0 ||
	    cm_rpc_open(&store, url) != 0) {
		cm_warnx("api: cannot reach the store");
		cm_startup_fini(&su);
		return CM_EXIT_FAILED;
	}
	if (api_http_start(&cfg, store) != 0) {
		cm_startup_fini(&su);
		return CM_EXIT_FAILED;
	}
	cm_ready_notify(&su.notify_fd);
	cm_info("api: listening on http://%s/", cfg.http_listen);

	/* This thread has nothing else to do: it waits for a stop. */
	pfd.fd = su.sig_fd;
	pfd.events = POLLIN;
	while (read(su.sig_fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
			cm_fatalx("api: poll: %s", strerror(errno));
	cm_info("api: signal %u, stopping", si.ssi_signo);
	api_http_stop();
	nng_close(store);
	cm_startup_fini(&su);
	return CM_EXIT_OK;
}
