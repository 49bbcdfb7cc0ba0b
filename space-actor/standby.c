/*
 * standby.c: a warm standby (actor.h).  An idle managed instance keeps one
 * browser launched ahead of time, owned by this process, so that the
 * Space created on it next finds its browser running: Chromium takes about
 * 250 ms to launch, a Space's first task should not wait for that.
 *
 * Nothing of one Space reaches the next: the standby's profile is fresh
 * (driver.h: standby-<pid>) and goes with the browser when the Space that
 * took it closes; the supervisor then starts a new standby.
 *
 * The one-actor rule holds by the mechanism that holds it for any actor:
 * the supervisor's row for this process is relabelled with the Space
 * before the adopt message is written, so it never starts a second actor
 * for that Space, and this process claims the Space's tasks under its
 * lease like any actor.  If it dies before or after reading the message,
 * the row restarts as the Space's ordinary actor, launching cold.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "actor.h"
#include "browser.h"
#include "clock.h"
#include "egress.h"
#include "ids.h"
#include "log.h"
#include "loop.h"
#include "startup.h"

/* The adopt message as it arrives, possibly in pieces. */
struct standby_msg {
	char buf[CM_WAKE_ADOPT_LEN + 1];
	size_t len;
};

/*
 * Reads what the wake pipe holds.  Returns 1 with the Space's id in
 * space_id once a whole adopt message is in, 0 when more is to come, -1
 * when the pipe is closed (the supervisor is gone), -2 when the message
 * is not one (a bug of the supervisor: logged; the row may name a Space
 * already, so the exit is a failure and the Space's actor starts again).  Bytes
 * after the message are wake-ups, which the actor's first claim covers.
 */
static int
standby_read(int fd, struct standby_msg *m, char space_id[CM_ID_MAX + 1])
{
	char buf[CM_ACTOR_WAKE_READ];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (m->len >= CM_WAKE_ADOPT_LEN)
					goto bad;
				m->buf[m->len++] = buf[i];
				continue;
			}
			m->buf[m->len] = '\0';
			if (m->buf[0] != CM_WAKE_ADOPT ||
			    !cm_uuid_valid(m->buf + 1))
				goto bad;
			snprintf(space_id, CM_ID_MAX + 1, "%s", m->buf + 1);
			return 1;
		}
	}
	if (n == 0)
		return -1;
	return errno == EAGAIN || errno == EINTR ? 0 : -1;
bad:
	cm_warnx("standby: the supervisor sent something other than an "
	         "adopt message");
	return -2;
}

int
act_standby_run(const struct cm_config *cfg, const char *instance_id,
    int notify_fd, int wake_fd)
{
	const struct act_driver_ops *ops = &act_driver_managed;
	struct act_driver *drv = NULL;
	struct act_egress *egress = NULL;
	struct act_egress_opts eo = {
	    .conns_max = cfg->egress_connections,
	    .bytes_per_s = cfg->egress_bytes_per_second,
	};
	struct standby_msg msg = {.len = 0};
	char err[CM_ERROR_MESSAGE_MAX + 1], space_id[CM_ID_MAX + 1];
	bool stopped = false;
	sigset_t mask;
	int sig_fd, rc = 1;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	if ((sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		cm_warn("standby: signalfd");
		return 1;
	}
	act_managed_sweep(cfg);
	/* Its browser goes through a proxy from the start, which refuses
	 * every host until a Space's policy is given to it (act_run_warm):
	 * a standby has no Space, so nothing may be reached yet. */
	if (act_egress_open(&eo, &egress, err, sizeof(err)) != 0 ||
	    act_managed_standby_open(cfg, egress, &drv, err, sizeof(err)) !=
	        0) {
		cm_warnx(
		    "standby: instance %s: no browser: %s", instance_id, err);
		act_egress_close(egress);
		cm_ready_notify(&notify_fd);
		close(sig_fd);
		return 1;
	}
	cm_ready_notify(&notify_fd);
	cm_debug("standby: instance %s: browser launched", instance_id);

	for (;;) {
		struct pollfd pfd[2 + CM_ACTOR_POLLFDS + CM_EGRESS_POLLFDS];
		struct act_outcome out;
		int64_t wake = -1, now;
		int ndrv, neg, adopt = 0, timeout;

		pfd[0].fd = wake_fd;
		pfd[0].events = POLLIN;
		pfd[1].fd = sig_fd;
		pfd[1].events = POLLIN;
		ndrv = ops->pollfds(drv, pfd + 2, CM_ACTOR_POLLFDS, &wake);
		neg = act_egress_pollfds(
		    egress, pfd + 2 + ndrv, CM_EGRESS_POLLFDS, &wake);
		now = cm_mono_ms();
		timeout = wake < 0 ? -1 : wake <= now ? 0 : (int)(wake - now);
		if (poll(pfd, (nfds_t)(2 + ndrv + neg), timeout) < 0 &&
		    errno != EINTR) {
			cm_warn("standby: poll");
			break;
		}
		if (pfd[1].revents & POLLIN) {
			act_browser_stopping();
			stopped = true;
			rc = 0;
			break;
		}
		if (pfd[0].revents & (POLLIN | POLLHUP) &&
		    (adopt = standby_read(wake_fd, &msg, space_id)) < 0) {
			rc = adopt == -1 ? 0 : 1;
			break;
		}
		if (adopt == 1) {
			/* The actor's own signalfd takes over; a signal that
			 * came meanwhile is still pending for it. */
			close(sig_fd);
			cm_debug("standby: instance %s: adopted by space %s",
			    instance_id, space_id);
			return act_run_warm(
			    cfg, space_id, -1, wake_fd, drv, egress);
		}
		/* With no call, a step only keeps the browser going. */
		memset(&out, 0, sizeof(out));
		ops->step(drv, pfd + 2, ndrv, &out);
		act_egress_step(egress, pfd + 2 + ndrv, neg);
		if (!act_managed_alive(drv)) {
			cm_warnx("standby: instance %s: the browser went away",
			    instance_id);
			break;
		}
	}
	/* As a stopping actor's (actor.c): the profile goes as soon as the
	 * browser is killed, and the reap is bounded within the stop's. */
	ops->close(drv);
	act_managed_sweep(cfg);
	(void)act_browser_reap(cm_mono_ms() + (stopped ? CM_ACTOR_STOP_REAP_MS
	                                               : CM_BROWSER_REAP_MS));
	act_egress_close(egress);
	if (wake_fd >= 0)
		close(wake_fd);
	close(sig_fd);
	return rc;
}
