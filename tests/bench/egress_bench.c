/*
 * egress_bench: what the per-Space egress proxy (space-actor/egress.h)
 * costs, in one run with and without it; measured and reported, never
 * asserted.
 *
 * The proxy is the actor's own code, opened in this process and stepped
 * in a thread of its own (the actor steps it in its loop), with a policy
 * that allows 127.0.0.1 and the bytes-per-second bound at
 * CM_EGRESS_BPS_MAX: nothing in spaced's config turns it off, so the
 * comparison is made here.
 *
 *   lifecycle: two browsers launched alike by the direct CDP client
 *     (tests/integration/cdp_rig.h), one with --proxy-server at the
 *     proxy; each has one page set up before the runs (Page and Fetch on,
 *     as a Space's page, and one navigation already made, so the proxy's
 *     407 and the credentials are behind it).  A run, on each in turn: a
 *     navigate to a page of the bench's own server (a new URL each time,
 *     so nothing comes from the cache) until its load event, and the
 *     accessibility tree (the snapshot's CDP call).
 *   download: a body of EGRESS_MIB MiB from a server of the bench's own
 *     on 127.0.0.1, fetched by the curl binary to /dev/null, in turn
 *     straight and through the proxy (a forwarded GET).
 *
 *   egress_bench
 *   EGRESS_RUNS=N   lifecycle runs of each, 2..1000 (default 20)
 *   EGRESS_MIB=N    the download's size in MiB, 1..1024 (default 64)
 *   EGRESS_DL=N     downloads of each, 1..100 (default 5)
 *
 * Figures are ms to the microsecond, truncated; p50 and p99 nearest-rank;
 * throughput in MiB/s of the median download.  Exit: 0 measured, 1 a step
 * failed, 2 a bad knob or no chromium or curl.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capability.h"
#include "cdp_rig.h"
#include "clock.h"
#include "egress.h"
#include "egress_thread.h"
#include "page.h"
#include "pages.h"
#include "testkit.h"

#define EB_STEP_MS 60000 /* any one step of a run */
#define EB_RUNS_MAX 1000
#define EB_DL_MAX 100
#define EB_POLL_MS 50 /* the bulk server looks at its stop flag */
#define EB_CHUNK (256 * 1024)

#define fail(...) tk_fail("egress_bench", __VA_ARGS__)

#define report(name, v, n) tk_report("egress_bench", name, v, n)

/* ---- a bulk server: every connection gets size bytes */

struct bulk {
	int fd, port;
	size_t size;
	atomic_bool stop;
	pthread_t thread;
};

static void
bulk_serve(struct bulk *b, int c)
{
	static char buf[EB_CHUNK];
	char head[128];
	size_t got = 0, sent = 0;
	int hl;

	while (got < sizeof(head) - 1) {
		ssize_t n = recv(c, head + got, sizeof(head) - 1 - got, 0);
		if (n <= 0)
			return;
		got += (size_t)n;
		head[got] = '\0';
		if (strstr(head, "\r\n\r\n") != NULL)
			break;
		/* A longer head: only its end matters. */
		if (got > 64) {
			memmove(head, head + got - 4, 4);
			got = 4;
		}
	}
	hl = snprintf(head, sizeof(head),
	    "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n"
	    "Content-Type: application/octet-stream\r\n"
	    "Connection: close\r\n\r\n",
	    b->size);
	if (send(c, head, (size_t)hl, MSG_NOSIGNAL) != hl)
		return;
	memset(buf, 'x', sizeof(buf));
	while (sent < b->size) {
		size_t n =
		    b->size - sent < sizeof(buf) ? b->size - sent : sizeof(buf);
		ssize_t w = send(c, buf, n, MSG_NOSIGNAL);
		if (w <= 0)
			return;
		sent += (size_t)w;
	}
}

static void *
bulk_run(void *arg)
{
	struct bulk *b = arg;

	while (!atomic_load(&b->stop)) {
		struct pollfd p = {.fd = b->fd, .events = POLLIN};
		int c;

		if (poll(&p, 1, EB_POLL_MS) != 1 ||
		    (c = accept4(b->fd, NULL, NULL, SOCK_CLOEXEC)) < 0)
			continue;
		bulk_serve(b, c);
		close(c);
	}
	return NULL;
}

static int
bulk_start(struct bulk *b, size_t size)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sin);

	b->size = size;
	atomic_store(&b->stop, false);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((b->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(b->fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    listen(b->fd, 16) != 0 ||
	    getsockname(b->fd, (struct sockaddr *)&sin, &sl) != 0 ||
	    pthread_create(&b->thread, NULL, bulk_run, b) != 0)
		return fail("the bulk server did not start");
	b->port = ntohs(sin.sin_port);
	return 0;
}

static void
bulk_stop(struct bulk *b)
{
	atomic_store(&b->stop, true);
	pthread_join(b->thread, NULL);
	close(b->fd);
}

/* One curl of url to /dev/null (through proxy with user when not NULL);
 * *took its wall time in ns.  0 when it got want bytes. */
static int
download(const char *url, const char *proxy, const char *user, size_t want,
    int64_t *took)
{
	const char *argv[16];
	char out[64] = "";
	int k = 0, pfd[2], status = 0;
	unsigned long long size = 0;
	int64_t t0;
	ssize_t n;
	pid_t pid;

	argv[k++] = "curl";
	argv[k++] = "-s";
	argv[k++] = "-o";
	argv[k++] = "/dev/null";
	argv[k++] = "-w";
	argv[k++] = "%{size_download}";
	argv[k++] = "--noproxy";
	argv[k++] = proxy != NULL ? "" : "*";
	if (proxy != NULL) {
		argv[k++] = "-x";
		argv[k++] = proxy;
		argv[k++] = "--proxy-user";
		argv[k++] = user;
	}
	argv[k++] = url;
	argv[k] = NULL;
	if (pipe2(pfd, O_CLOEXEC) != 0)
		return fail("pipe");
	t0 = cm_mono_ns();
	if ((pid = fork()) == 0) {
		dup2(pfd[1], 1);
		execvp("curl", (char *const *)argv);
		_exit(127);
	}
	close(pfd[1]);
	n = read(pfd[0], out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = '\0';
	close(pfd[0]);
	waitpid(pid, &status, 0);
	*took = cm_mono_ns() - t0;
	sscanf(out, "%llu", &size);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || size != want)
		return fail("curl %s%s: exit %d, %llu bytes", url,
		    proxy ? " (proxied)" : "",
		    WIFEXITED(status) ? WEXITSTATUS(status) : -1, size);
	return 0;
}

/* ---- the lifecycle's calls, on a page set up before */

struct eb_page {
	struct tk_rig r;
	char sid[CM_ID_MAX * 2];
};

static const char *
str_at(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* Navigates to url until the load event, then the accessibility tree. */
static int
page_use(struct eb_page *pg, const char *url)
{
	json_t *v;

	tk_rig_expect(&pg->r, "Page.loadEventFired");
	if ((v = tk_rig_call(&pg->r, pg->sid, "Page.navigate",
	         json_pack("{s:s}", "url", url), EB_STEP_MS)) == NULL ||
	    str_at(v, "errorText") != NULL || !tk_rig_await(&pg->r, EB_STEP_MS))
		return fail("navigate to %s failed%s%s", url,
		    v != NULL && str_at(v, "errorText") ? ": " : "",
		    v != NULL && str_at(v, "errorText") ? str_at(v, "errorText")
		                                        : "");
	if ((v = tk_rig_call(&pg->r, pg->sid, "Accessibility.getFullAXTree",
	         NULL, EB_STEP_MS)) == NULL ||
	    json_array_size(json_object_get(v, "nodes")) == 0)
		return fail("getFullAXTree failed");
	return 0;
}

/* A browser (behind proxy when not NULL) with one page attached, Page
 * and Fetch on, and one navigation to url made. */
static int
page_open(struct eb_page *pg, const char *proxy, const char *user,
    const char *password, const char *url)
{
	char err[256];
	json_t *v;

	if (tk_rig_start_via(&pg->r, proxy, user, password, err, sizeof(err)) !=
	    0)
		return fail("launch: %s", err);
	if ((v = tk_rig_call(&pg->r, NULL, "Target.createTarget",
	         json_pack("{s:s}", "url", "about:blank"), EB_STEP_MS)) ==
	        NULL ||
	    str_at(v, "targetId") == NULL)
		return fail("createTarget failed");
	v = tk_rig_call(&pg->r, NULL, "Target.attachToTarget",
	    json_pack(
	        "{s:s, s:b}", "targetId", str_at(v, "targetId"), "flatten", 1),
	    EB_STEP_MS);
	if (v == NULL || str_at(v, "sessionId") == NULL)
		return fail("attachToTarget failed");
	snprintf(pg->sid, sizeof(pg->sid), "%s", str_at(v, "sessionId"));
	if (tk_rig_call(&pg->r, pg->sid, "Page.enable", NULL, EB_STEP_MS) ==
	        NULL ||
	    tk_rig_call(&pg->r, pg->sid, "Fetch.enable",
	        act_page_fetch_params(true), EB_STEP_MS) == NULL)
		return fail("Page.enable or Fetch.enable failed");
	return page_use(pg, url);
}

int
main(void)
{
	static int64_t direct[EB_RUNS_MAX], proxied[EB_RUNS_MAX];
	static int64_t dl_direct[EB_DL_MAX], dl_proxied[EB_DL_MAX];
	static struct eb_page pd, pp;
	int n = tk_knob("EGRESS_RUNS", 20, 2, EB_RUNS_MAX);
	int mib = tk_knob("EGRESS_MIB", 64, 1, 1024);
	int n_dl = tk_knob("EGRESS_DL", 5, 1, EB_DL_MAX);
	const char *policy_json = "{\"allow_hosts\": [\"127.0.0.1\"], "
	                          "\"deny_private_networks\": false}";
	struct act_egress_opts o = {.conns_max = CM_EGRESS_CONNS_DEFAULT,
	    .bytes_per_s = CM_EGRESS_BPS_MAX};
	char proxy[CM_PROXY_URL_MAX], user[128], url[256], err[256];
	struct cm_policy policy;
	struct tk_pages *pages_d, *pages_p;
	struct act_egress *eg;
	struct bulk bulk;
	struct tk_egress_thread pt;
	int port_d, port_p, rc = 0;
	int64_t p50d, p50p;

	if (n < 0 || mib < 0 || n_dl < 0)
		return 2;
	if (access(TK_CHROMIUM, X_OK) != 0) {
		fail("no chromium at %s", TK_CHROMIUM);
		return 2;
	}
	if (system("curl --version >/dev/null 2>&1") != 0) {
		fail("no curl");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	printf(
	    "egress_bench: %ld CPUs online\n", sysconf(_SC_NPROCESSORS_ONLN));
	fflush(stdout);
	if (cm_policy_parse(policy_json, strlen(policy_json), &policy, err,
	        sizeof(err)) != 0 ||
	    act_egress_open(&o, &eg, err, sizeof(err)) != 0) {
		fail("the proxy did not open: %s", err);
		return 1;
	}
	act_egress_policy(eg, &policy, NULL, NULL);
	snprintf(
	    proxy, sizeof(proxy), "http://127.0.0.1:%d", act_egress_port(eg));
	snprintf(user, sizeof(user), "%s:%s", ACT_EGRESS_USER,
	    act_egress_secret(eg));
	if (tk_egress_thread_start(&pt, eg) != 0) {
		fail("no proxy thread");
		return 1;
	}
	/* A page server for each browser: the server takes one connection
	 * at a time, and a browser keeps an idle connection open to a site
	 * it visited (a preconnect), which would hold the other's requests
	 * (up to the server's 5 s). */
	pages_d = tk_pages_start(&port_d);
	pages_p = tk_pages_start(&port_p);
	if (pages_d == NULL || pages_p == NULL) {
		fail("the page servers did not start");
		tk_pages_stop(pages_d);
		tk_pages_stop(pages_p);
		rc = 1;
		goto out_proxy;
	}
	/* ---- lifecycle: the two browsers' runs interleaved */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/?warm", port_d);
	if (page_open(&pd, NULL, NULL, NULL, url) != 0)
		rc = 1;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/?warm", port_p);
	if (rc == 0 && page_open(&pp, proxy, ACT_EGRESS_USER,
	                   act_egress_secret(eg), url) != 0)
		rc = 1;
	for (int i = 0; i < n && rc == 0; i++) {
		int64_t t0;

		snprintf(
		    url, sizeof(url), "http://127.0.0.1:%d/?d=%d", port_d, i);
		t0 = cm_mono_ns();
		if (page_use(&pd, url) != 0) {
			rc = 1;
			break;
		}
		direct[i] = cm_mono_ns() - t0;
		snprintf(
		    url, sizeof(url), "http://127.0.0.1:%d/?p=%d", port_p, i);
		t0 = cm_mono_ns();
		if (page_use(&pp, url) != 0) {
			rc = 1;
			break;
		}
		proxied[i] = cm_mono_ns() - t0;
	}
	tk_rig_stop(&pd.r);
	tk_rig_stop(&pp.r);
	tk_pages_stop(pages_d);
	tk_pages_stop(pages_p);
	/* ---- download: straight and proxied in turn */
	if (rc == 0 && bulk_start(&bulk, (size_t)mib * 1024 * 1024) != 0)
		rc = 1;
	else if (rc == 0) {
		snprintf(
		    url, sizeof(url), "http://127.0.0.1:%d/bulk", bulk.port);
		for (int i = 0; i < n_dl && rc == 0; i++)
			if (download(url, NULL, NULL, bulk.size,
			        &dl_direct[i]) != 0 ||
			    download(url, proxy, user, bulk.size,
			        &dl_proxied[i]) != 0)
				rc = 1;
		bulk_stop(&bulk);
	}
out_proxy:
	tk_egress_thread_stop(&pt);
	act_egress_close(eg);
	if (rc != 0)
		return 1;
	p50d = report("lifecycle direct navigate_and_snapshot", direct, n);
	p50p = report("lifecycle proxied navigate_and_snapshot", proxied, n);
	printf("egress_bench: lifecycle p50 proxied-direct=%lld us "
	       "ratio=%lld.%03lld\n",
	    (long long)((p50p - p50d) / 1000), (long long)(p50p / p50d),
	    (long long)(p50p * 1000 / p50d % 1000));
	p50d = report("download direct", dl_direct, n_dl);
	p50p = report("download proxied", dl_proxied, n_dl);
	printf("egress_bench: download %d MiB p50 direct=%lld MiB/s "
	       "proxied=%lld MiB/s (bytes_per_s bound %d)\n",
	    mib, (long long)((int64_t)mib * 1000000000 / p50d),
	    (long long)((int64_t)mib * 1000000000 / p50p), CM_EGRESS_BPS_MAX);
	return 0;
}
