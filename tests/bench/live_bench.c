/*
 * live_bench: the live view of a Space on a real Chromium through the
 * real spaced, measured and reported, never asserted
 * (docs/performance.md).
 *
 * One Space on a managed instance.  First, the frames at the default
 * settings: one viewer of GET .../live while the page paints all the
 * time (/ticker of tests/integration/pages.h, a counter changed every
 * 30 ms), for LIVE_SECONDS: frames/s and bytes/s as the viewer read
 * them.  Then a task's latency with 0, 1 and 4 viewers attached, in
 * that order in the same run: LIVE_RUNS times a navigate (to / and
 * /next in turn) then a snapshot, each a POST .../tasks?wait=30, timed
 * from the navigate's submit to the snapshot's answer; with the frames
 * and bytes the viewers read meanwhile.  A thread reads every viewer as
 * fast as the frames come, as a browser showing them would.
 *
 *   LIVE_RUNS=N (2..1000, default 20)  LIVE_SECONDS=S (1..600, default 5)
 *
 * Figures are ms to the microsecond, truncated; p50 and p99 are
 * nearest-rank.  Exit: 0 measured, 1 a step failed, 2 a bad knob or no
 * chromium.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_world.h"
#include "clock.h"
#include "pages.h"
#include "testkit.h"

#define LB_RUNS_MAX 1000
#define LB_VIEWERS 4
#define fail(...) tk_fail("live_bench", __VA_ARGS__)

static const char frame_tag[] = "event: frame\n";

/* The viewers the reader thread reads, and what it counted. */
static struct {
	pthread_mutex_t lock;
	int fd[LB_VIEWERS];
	int n;
	atomic_bool stop;
	atomic_uint_least64_t frames, bytes;
} rd = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Counts the frames and bytes of every viewer, a frame tag split
 * across two reads included (each viewer's last bytes are kept). */
static void *
reader(void *arg)
{
	static char buf[LB_VIEWERS][256 * 1024 + sizeof(frame_tag)];
	size_t keep[LB_VIEWERS] = {0};

	(void)arg;
	while (!atomic_load(&rd.stop)) {
		struct pollfd p[LB_VIEWERS];
		int n;

		pthread_mutex_lock(&rd.lock);
		n = rd.n;
		for (int i = 0; i < n; i++)
			p[i] =
			    (struct pollfd){.fd = rd.fd[i], .events = POLLIN};
		pthread_mutex_unlock(&rd.lock);
		if (poll(p, (nfds_t)n, 20) <= 0)
			continue;
		for (int i = 0; i < n; i++) {
			char *b = buf[i];
			ssize_t got;
			size_t len;

			if (!(p[i].revents & POLLIN))
				continue;
			got = read(
			    p[i].fd, b + keep[i], sizeof(buf[i]) - keep[i] - 1);
			if (got <= 0)
				continue;
			atomic_fetch_add(&rd.bytes, (uint64_t)got);
			len = keep[i] + (size_t)got;
			b[len] = '\0';
			for (char *at = b; (at = strstr(at, frame_tag)) != NULL;
			     at += sizeof(frame_tag) - 1)
				atomic_fetch_add(&rd.frames, 1);
			keep[i] = len < sizeof(frame_tag) - 1
			              ? len
			              : sizeof(frame_tag) - 1;
			memmove(b, b + len - keep[i], keep[i]);
		}
	}
	return NULL;
}

/* A viewer of space: its connection, once the stream's head came
 * (200); -1 otherwise. */
static int
viewer_open(struct bw_world *w, const char *space)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	char req[1024], head[1024];
	size_t got = 0;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int64_t until = cm_mono_ms() + BW_STEP_MS;

	sa.sin_port = htons((uint16_t)w->p.http_port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		return fail("cannot connect to the api");
	snprintf(req, sizeof(req),
	    "GET /api/v1/workspaces/%s/browser-spaces/%s/live HTTP/1.1\r\n"
	    "Host: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n",
	    w->ws, space, w->user);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		return fail("cannot ask for the live view");
	/* Byte by byte up to the head's end: what follows is the
	 * reader's. */
	while (got < sizeof(head) - 1 && cm_mono_ms() < until) {
		struct pollfd p = {.fd = fd, .events = POLLIN};

		if (poll(&p, 1, 100) <= 0)
			continue;
		if (read(fd, head + got, 1) != 1)
			break;
		head[++got] = '\0';
		if (got >= 4 && memcmp(head + got - 4, "\r\n\r\n", 4) == 0)
			break;
	}
	head[got] = '\0';
	if (strncmp(head, "HTTP/1.1 200", 12) != 0) {
		close(fd);
		return fail("the live view answered: %.60s", head);
	}
	return fd;
}

/* Attaches viewers until n are. */
static int
viewers_set(struct bw_world *w, const char *space, int n)
{
	while (rd.n < n) {
		int fd = viewer_open(w, space);

		if (fd < 0)
			return -1;
		pthread_mutex_lock(&rd.lock);
		rd.fd[rd.n++] = fd;
		pthread_mutex_unlock(&rd.lock);
	}
	pthread_mutex_lock(&rd.lock);
	while (rd.n > n)
		close(rd.fd[--rd.n]);
	pthread_mutex_unlock(&rd.lock);
	return 0;
}

static int
navigate(struct bw_world *w, const char *space, const char *path, int i)
{
	char rid[48], args[256];

	snprintf(rid, sizeof(rid), "nav-%d", i);
	snprintf(args, sizeof(args), "{\"url\": \"%s%s\"}", w->url, path);
	return bw_task(w, space, rid, "navigate", args, NULL);
}

/* The counters' values over a phase of ns. */
static void
rates(const char *phase, uint64_t frames, uint64_t bytes, int64_t ns)
{
	double s = (double)ns / 1e9;

	/* Truncated, never rounded up. */
	printf("live_bench: %s frames=%llu bytes=%llu seconds=%.3f "
	       "frames_per_s=%llu.%02llu bytes_per_s=%llu\n",
	    phase, (unsigned long long)frames, (unsigned long long)bytes,
	    (double)(ns / 1000000) / 1e3, (unsigned long long)(frames / s),
	    (unsigned long long)(frames * 100 / s) % 100,
	    (unsigned long long)(bytes / s));
}

/* LIVE_RUNS navigate+snapshot with nv viewers: latencies into v. */
static int
task_runs(
    struct bw_world *w, const char *space, int nv, int64_t *v, int n, int *seq)
{
	uint64_t f0, b0;
	int64_t t0 = cm_mono_ns();
	char name[64];

	if (viewers_set(w, space, nv) != 0)
		return -1;
	f0 = atomic_load(&rd.frames);
	b0 = atomic_load(&rd.bytes);
	t0 = cm_mono_ns();
	for (int i = 0; i < n; i++) {
		char rid[48];
		int64_t s = cm_mono_ns();

		snprintf(rid, sizeof(rid), "snap-%d", *seq);
		if (navigate(w, space, (*seq) % 2 ? "next" : "", *seq) != 0 ||
		    bw_task(w, space, rid, "snapshot", "{}", NULL) != 0)
			return -1;
		(*seq)++;
		v[i] = cm_mono_ns() - s;
	}
	snprintf(name, sizeof(name), "viewers=%d navigate_snapshot", nv);
	rates(name, atomic_load(&rd.frames) - f0, atomic_load(&rd.bytes) - b0,
	    cm_mono_ns() - t0);
	tk_report("live_bench", name, v, n);
	return 0;
}

int
main(void)
{
	static int64_t lat[3][LB_RUNS_MAX];
	static struct bw_world w;
	int n = tk_knob("LIVE_RUNS", 20, 2, LB_RUNS_MAX);
	int secs = tk_knob("LIVE_SECONDS", 5, 1, 600);
	static const int nviewers[3] = {0, 1, LB_VIEWERS};
	char dir[128], out[192], space[CM_ID_MAX + 1];
	struct tk_pages *pages;
	pthread_t th;
	uint64_t f0, b0;
	int64_t t0;
	int port, rc = 1, seq = 0;

	if (n < 0 || secs < 0)
		return 2;
	if (access(TK_CHROMIUM, X_OK) != 0) {
		fail("no chromium at %s", TK_CHROMIUM);
		return 2;
	}
	w.who = "live_bench";
	signal(SIGPIPE, SIG_IGN);
	printf("live_bench: %ld CPUs online\n", sysconf(_SC_NPROCESSORS_ONLN));
	fflush(stdout);
	if ((pages = tk_pages_start(&port)) == NULL) {
		fail("the page server did not start");
		return 1;
	}
	snprintf(w.url, sizeof(w.url), "http://127.0.0.1:%d/", port);
	tk_tmpdir(dir, sizeof(dir), "lvb");
	snprintf(out, sizeof(out), "%s/spaced.out", dir);
	if (tk_spaced_start_logged(&w.p, dir, NULL, out) != 0) {
		fail("spaced did not start (see %s)", out);
		tk_pages_stop(pages);
		return 1;
	}
	if (pthread_create(&th, NULL, reader, NULL) != 0)
		goto out;
	if (bw_setup(&w) != 0 ||
	    bw_space(&w, "[\"navigate\", \"snapshot\"]", space) != 0 ||
	    navigate(&w, space, "ticker", seq++) != 0 ||
	    viewers_set(&w, space, 1) != 0)
		goto stop;
	/* The frames of a page that paints all the time. */
	f0 = atomic_load(&rd.frames);
	b0 = atomic_load(&rd.bytes);
	t0 = cm_mono_ns();
	while (cm_mono_ns() - t0 < (int64_t)secs * 1000000000)
		usleep(100000); /* a bench's pacing; nothing is waited for */
	rates("ticker viewers=1", atomic_load(&rd.frames) - f0,
	    atomic_load(&rd.bytes) - b0, cm_mono_ns() - t0);
	for (int k = 0; k < 3; k++)
		if (task_runs(&w, space, nviewers[k], lat[k], n, &seq) != 0)
			goto stop;
	rc = 0;
stop:
	atomic_store(&rd.stop, true);
	pthread_join(th, NULL);
	viewers_set(&w, space, 0);
out:
	tk_proc_stop(&w.p, SIGTERM);
	tk_pages_stop(pages);
	if (rc != 0)
		fail("kept %s (log: %s)", dir, out);
	else
		tk_rmrf(dir);
	return rc;
}
