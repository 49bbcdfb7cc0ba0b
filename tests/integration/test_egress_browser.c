/*
 * test_egress_browser.c: the network policy enforced at the browser's
 * egress, with real Chromium through the API.
 *
 * The test serves its pages on 127.0.0.1 and keeps a second listener on
 * 127.0.0.2 that only counts the connections it gets: whatever a case
 * does, nothing may reach 127.0.0.2.  Two instances:
 *   A: allow_hosts ["localhost", "127.0.0.1"], deny_private_networks off;
 *   B: every host (an empty allow_hosts), deny_private_networks on.
 * On A, a WebSocket and a service worker's fetch (which the page's Fetch
 * interception never sees) to 127.0.0.2 fail at the proxy and leave a
 * network_blocked event naming the host; a redirect to 127.0.0.2 and
 * fetch() to its numeric spellings are blocked; another local process
 * that finds the proxy's port in /proc/net/tcp gets 407 (403 for a host
 * the policy refuses) and no relay.
 * On B, localhost, and a name of this host that resolves to loopback,
 * fail navigate with host_not_allowed, over http and over https (a
 * refused CONNECT); on A, localhost loads.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <jansson.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "http_fixture.h"

#define EG_WAIT_MS 60000 /* a browser task, on a loaded machine */
#define EG_GRANTS "[\"navigate\", \"snapshot\", \"wait_for\"]"

TestSuite(egress, .timeout = 400);

/* ---- the test's own servers */

static int page_fd = -1, other_fd = -1, page_port, other_port;
static atomic_int other_hits;
static atomic_bool servers_stop;
static pthread_t servers;

static int
listen_at(const char *ip, int *port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	cr_assert(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	inet_pton(AF_INET, ip, &sin.sin_addr);
	cr_assert_eq(
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0, "%s", ip);
	cr_assert_eq(listen(fd, 64), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&sin, &sl), 0);
	*port = ntohs(sin.sin_port);
	return fd;
}

/* The body for path, or NULL (404); *type its content type. */
static const char *
page_for(const char *path, const char **type, char *buf, size_t len)
{
	*type = "text/html";
	if (strcmp(path, "/") == 0)
		return "<html><head><title>Home</title></head>"
		       "<body><h1>Welcome</h1></body></html>";
	if (strcmp(path, "/ws") == 0) {
		snprintf(buf, len,
		    "<html><head><title>ws</title></head><body>"
		    "<p id=o>ws: waiting</p><script>"
		    "var w = new WebSocket('ws://127.0.0.2:%d/');"
		    "w.onopen = function () { o.textContent = 'ws: open'; };"
		    "w.onerror = function () { o.textContent = 'ws: failed'; };"
		    "</script></body></html>",
		    other_port);
		return buf;
	}
	if (strcmp(path, "/sw") == 0)
		return "<html><head><title>sw</title></head><body>"
		       "<p id=o>sw: waiting</p><script>"
		       "navigator.serviceWorker.onmessage = function (m) {"
		       "  o.textContent = 'sw: ' + m.data; };"
		       "navigator.serviceWorker.register('/sw.js').catch("
		       "  function (e) { o.textContent = 'sw: no worker'; });"
		       "</script></body></html>";
	if (strcmp(path, "/sw.js") == 0) {
		*type = "text/javascript";
		snprintf(buf, len,
		    "self.addEventListener('activate', function (ev) {"
		    "  ev.waitUntil(fetch('http://127.0.0.3:%d/from-worker')"
		    "    .then(function () { return 'reached'; },"
		    "      function () { return 'failed'; })"
		    "    .then(function (r) { return self.clients.matchAll("
		    "      {includeUncontrolled: true}).then(function (cs) {"
		    "        cs.forEach(function (c) { c.postMessage(r); });"
		    "      }); }));"
		    "});",
		    other_port);
		return buf;
	}
	if (strcmp(path, "/num") == 0) {
		snprintf(buf, len,
		    "<html><head><title>num</title></head><body>"
		    "<p id=o>num: waiting</p><script>"
		    "Promise.allSettled(['http://[::ffff:127.0.0.2]:%d/',"
		    "  'http://0x7f000002:%d/', 'http://2130706434:%d/']"
		    "  .map(function (u) { return fetch(u, {mode: 'no-cors'}); "
		    "}))"
		    ".then(function () { o.textContent = 'num: done'; });"
		    "</script></body></html>",
		    other_port, other_port, other_port);
		return buf;
	}
	return NULL;
}

static void
serve_page(int fd)
{
	char req[4096], body_buf[2048], head[256], path[256] = "";
	const char *type, *body;
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(req) - 1 &&
	       (n = recv(fd, req + got, sizeof(req) - 1 - got, 0)) > 0) {
		got += (size_t)n;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n") != NULL)
			break;
	}
	req[got] = '\0';
	sscanf(req, "%*s %255s", path);
	if (strcmp(path, "/redir") == 0) {
		snprintf(head, sizeof(head),
		    "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.2:%d/"
		    "target\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
		    other_port);
		send(fd, head, strlen(head), MSG_NOSIGNAL);
		return;
	}
	body = page_for(path, &type, body_buf, sizeof(body_buf));
	snprintf(head, sizeof(head),
	    "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
	    "Connection: close\r\n\r\n",
	    body ? "200 OK" : "404 Not Found", type, body ? strlen(body) : 0);
	send(fd, head, strlen(head), MSG_NOSIGNAL);
	if (body != NULL)
		send(fd, body, strlen(body), MSG_NOSIGNAL);
}

static void *
servers_run(void *arg)
{
	(void)arg;
	while (!atomic_load(&servers_stop)) {
		struct pollfd p[2] = {
		    {.fd = page_fd, .events = POLLIN},
		    {.fd = other_fd, .events = POLLIN},
		};

		if (poll(p, 2, 50) <= 0)
			continue;
		if (p[0].revents & POLLIN) {
			int c = accept4(page_fd, NULL, NULL, SOCK_CLOEXEC);
			if (c >= 0) {
				serve_page(c);
				close(c);
			}
		}
		if (p[1].revents & POLLIN) {
			int c = accept4(other_fd, NULL, NULL, SOCK_CLOEXEC);
			if (c >= 0) {
				atomic_fetch_add(&other_hits, 1);
				close(c);
			}
		}
	}
	return NULL;
}

static void
servers_start(void)
{
	page_fd = listen_at("127.0.0.1", &page_port);
	other_fd = listen_at("127.0.0.2", &other_port);
	cr_assert_eq(pthread_create(&servers, NULL, servers_run, NULL), 0);
}

static void
servers_end(void)
{
	atomic_store(&servers_stop, true);
	pthread_join(servers, NULL);
	close(page_fd);
	close(other_fd);
}

/* ---- tasks */

/* Submits cap with args and waits for it to end; returns its data. */
static json_t *
run_task(struct hf_env *e, const char *space, const char *rid, const char *cap,
    const char *args)
{
	char task[CM_ID_MAX + 1];
	struct hf_task_wait w = {e, space, task, "completed", ""};
	int status =
	    hf_submit(e, e->manager, space, "", rid, cap, args, NULL, task);

	cr_assert_eq(status, 202, "%s: submit answered %d", cap, status);
	cr_assert(tk_wait_until(hf_task_settled, &w, EG_WAIT_MS),
	    "%s did not end", rid);
	return hf_task(e, space, task);
}

static void
expect_status(json_t *t, const char *status, const char *code)
{
	cr_assert_str_eq(sf_str(t, "status"), status, "%s (%s: %s)",
	    sf_str(t, "status"), sf_str(json_object_get(t, "error"), "code"),
	    sf_str(json_object_get(t, "error"), "message"));
	if (code != NULL)
		cr_assert_str_eq(
		    sf_str(json_object_get(t, "error"), "code"), code);
	json_decref(t);
}

/* Navigates to http://host:<page port>path; returns the task. */
static json_t *
navigate(struct hf_env *e, const char *space, const char *rid, const char *host,
    const char *path)
{
	char args[512];

	snprintf(args, sizeof(args), "{\"url\": \"http://%s:%d%s\"}", host,
	    page_port, path);
	return run_task(e, space, rid, "navigate", args);
}

/* wait_for text on the page. */
static void
wait_text(
    struct hf_env *e, const char *space, const char *rid, const char *text)
{
	char args[256];

	snprintf(args, sizeof(args),
	    "{\"text\": \"%s\", \"timeout_ms\": 30000}", text);
	expect_status(
	    run_task(e, space, rid, "wait_for", args), "completed", NULL);
}

struct blocked_wait {
	struct hf_env *e;
	const char *space, *host;
	int more_than;
	char reason[32];
};

/* network_blocked events in the Space's log naming w->host. */
static int
blocked_count(struct blocked_wait *w)
{
	json_t *events = hf_all_events(w->e, w->space), *ev;
	size_t i;
	int n = 0;

	json_array_foreach(events, i, ev)
	{
		json_t *pl = json_object_get(ev, "payload");

		if (strcmp(sf_str(ev, "kind"), "network_blocked") != 0 ||
		    strcmp(sf_str(pl, "host"), w->host) != 0)
			continue;
		/* Host and reason, never a URL. */
		cr_assert_eq(json_object_size(pl), 2);
		snprintf(
		    w->reason, sizeof(w->reason), "%s", sf_str(pl, "reason"));
		n++;
	}
	json_decref(events);
	return n;
}

static bool
blocked_grew(void *arg)
{
	struct blocked_wait *w = arg;

	return blocked_count(w) > w->more_than;
}

/* Waits for a new network_blocked event naming host (counted from none
 * when the host is not the last one's); returns its reason in w. */
static void
expect_blocked_event(struct blocked_wait *w, const char *host)
{
	if (w->host == NULL || strcmp(w->host, host) != 0)
		w->more_than = 0;
	w->host = host;
	cr_assert(tk_wait_until(blocked_grew, w, EG_WAIT_MS),
	    "no new network_blocked event for %s", host);
	w->more_than = blocked_count(w);
}

/* ---- the proxy's port, as another process on the host finds it */

/* The port of the TCP socket listening on 127.0.0.1 among pid's fds. */
static int
listening_port(pid_t pid)
{
	char dir[64], line[512];
	unsigned long inodes[256];
	int n = 0, port = 0;
	struct dirent *de;
	FILE *f;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	cr_assert_not_null(d = opendir(dir));
	while ((de = readdir(d)) != NULL && n < 256) {
		char link[400], target[64];
		ssize_t k;

		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		if ((k = readlink(link, target, sizeof(target) - 1)) <= 0)
			continue;
		target[k] = '\0';
		if (sscanf(target, "socket:[%lu]", &inodes[n]) == 1)
			n++;
	}
	closedir(d);
	cr_assert_not_null(f = fopen("/proc/net/tcp", "r"));
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned addr, lport, st;
		unsigned long ino;

		if (sscanf(line,
		        " %*d: %x:%x %*x:%*x %x %*s %*s %*s %*s %*s %lu", &addr,
		        &lport, &st, &ino) != 4 ||
		    st != 0x0A || addr != 0x0100007F)
			continue;
		for (int k = 0; k < n; k++)
			if (inodes[k] == ino)
				port = (int)lport;
	}
	fclose(f);
	return port;
}

/* Sends req to 127.0.0.1:port and returns the first line answered. */
static void
ask_proxy(int port, const char *req, char *line, size_t len)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = {10, 0};
	char buf[2048];
	ssize_t n;

	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	cr_assert_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	cr_assert_eq(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	snprintf(line, len, "%.*s", (int)strcspn(buf, "\r\n"), buf);
	close(fd);
}

/* ---- the cases */

/* This host's own name in self, true when it is a name with no dot that
 * resolves to a loopback address (/etc/hosts): no check of the name can
 * tell, only the proxy once it resolved it. */
static bool
self_loopback_name(char *self, size_t len)
{
	struct addrinfo *ai = NULL;
	bool loop;

	memset(self, 0, len);
	gethostname(self, len - 1);
	loop = getaddrinfo(self, NULL, NULL, &ai) == 0 && ai != NULL &&
	       ai->ai_family == AF_INET &&
	       (ntohl(((struct sockaddr_in *)ai->ai_addr)->sin_addr.s_addr) >>
	           24) == 127 &&
	       strchr(self, '.') == NULL;
	if (ai != NULL)
		freeaddrinfo(ai);
	return loop;
}

static struct hf_env env;

static void
setup(void)
{
	servers_start();
	hf_start(&env, "egress", 0, NULL);
}

static void
teardown(void)
{
	hf_stop(&env);
	servers_end();
	tk_cleanup();
}

#define POLICY_A                                             \
	"{\"allow_hosts\": [\"localhost\", \"127.0.0.1\"], " \
	"\"deny_private_networks\": false}"
#define POLICY_B "{\"allow_hosts\": [], \"deny_private_networks\": true}"

Test(egress, instance_a_blocks_what_fetch_interception_misses, .init = setup,
    .fini = teardown)
{
	char inst[CM_ID_MAX + 1], space[CM_ID_MAX + 1], req[512], line[256];
	struct blocked_wait w = {.e = &env};
	pid_t actors[4];
	int port;

	hf_managed_instance_with(&env, "chromium-a", POLICY_A, inst);
	cr_assert_eq(hf_create(&env, env.manager, inst, "operator",
	                 env.sf.w.operator_id, EG_GRANTS, space),
	    201);
	w.space = space;

	/* The page loads through the proxy. */
	expect_status(navigate(&env, space, "nav-home", "127.0.0.1", "/"),
	    "completed", NULL);

	/* A WebSocket to 127.0.0.2: refused at the proxy. */
	expect_status(navigate(&env, space, "nav-ws", "127.0.0.1", "/ws"),
	    "completed", NULL);
	wait_text(&env, space, "wait-ws", "ws: failed");
	expect_blocked_event(&w, "127.0.0.2");
	cr_expect_str_eq(w.reason, "host_not_allowed");

	/* A service worker's fetch of 127.0.0.3 (another host than the
	 * WebSocket's: one network_blocked event is written for a host and
	 * reason per CM_ACTOR_BLOCKED_REPEAT_MS): refused at the proxy. */
	expect_status(navigate(&env, space, "nav-sw", "127.0.0.1", "/sw"),
	    "completed", NULL);
	wait_text(&env, space, "wait-sw", "sw: failed");
	expect_blocked_event(&w, "127.0.0.3");

	/* A redirect from an allowed page to 127.0.0.2: blocked there. */
	expect_status(navigate(&env, space, "nav-redir", "127.0.0.1", "/redir"),
	    "failed", "host_not_allowed");

	/* fetch() to the numeric spellings of 127.0.0.2. */
	expect_status(navigate(&env, space, "nav-num", "127.0.0.1", "/num"),
	    "completed", NULL);
	wait_text(&env, space, "wait-num", "num: done");

	/* Another process on the host finds the proxy's port and tries it
	 * without the secret: 407, and nothing is relayed. */
	cr_assert_eq(tk_actor_pids(env.sf.p.pid, space, actors, 4), 1);
	cr_assert_gt(port = listening_port(actors[0]), 0,
	    "the actor listens on no port of 127.0.0.1");
	snprintf(req, sizeof(req),
	    "GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
	    page_port);
	ask_proxy(port, req, line, sizeof(line));
	cr_expect_str_eq(line, "HTTP/1.1 407 Proxy Authentication Required");
	/* What the policy refuses is refused before the secret is asked
	 * for: a 403, whoever asks. */
	snprintf(req, sizeof(req), "CONNECT 127.0.0.2:%d HTTP/1.1\r\n\r\n",
	    other_port);
	ask_proxy(port, req, line, sizeof(line));
	cr_expect_str_eq(line, "HTTP/1.1 403 Forbidden");
	snprintf(req, sizeof(req),
	    "CONNECT 127.0.0.1:%d HTTP/1.1\r\nProxy-Authorization: Basic "
	    "c3BhY2VkOmd1ZXNz\r\n\r\n",
	    page_port);
	ask_proxy(port, req, line, sizeof(line));
	cr_expect_str_eq(line, "HTTP/1.1 407 Proxy Authentication Required");

	/* Whatever happened, nothing reached 127.0.0.2. */
	cr_assert_eq(atomic_load(&other_hits), 0,
	    "%d connections reached 127.0.0.2", atomic_load(&other_hits));

	/* /metrics counts the refusals. */
	{
		char *text = NULL;

		cr_assert_eq(tk_http(&env.sf.p, "GET", "/metrics", NULL, NULL,
		                 NULL, &text),
		    200);
		cr_expect_geq(tk_prom_sample(text,
		                  "spaced_egress_blocked_total{reason=\"host_"
		                  "not_allowed\"}"),
		    2, "%s", text);
		free(text);
	}
}

Test(egress, instance_b_refuses_loopback_names_that_instance_a_loads,
    .init = setup, .fini = teardown)
{
	char inst_a[CM_ID_MAX + 1], inst_b[CM_ID_MAX + 1];
	char sa[CM_ID_MAX + 1], sb[CM_ID_MAX + 1], self[256] = "";
	struct blocked_wait w = {.e = &env};

	hf_managed_instance_with(&env, "chromium-a", POLICY_A, inst_a);
	hf_managed_instance_with(&env, "chromium-b", POLICY_B, inst_b);
	cr_assert_eq(hf_create(&env, env.manager, inst_b, "operator",
	                 env.sf.w.operator_id, EG_GRANTS, sb),
	    201);
	cr_assert_eq(hf_create(&env, env.manager, inst_a, "operator",
	                 env.sf.w.operator_id, EG_GRANTS, sa),
	    201);

	/* On B, localhost is refused at navigate. */
	expect_status(navigate(&env, sb, "nav-b", "localhost", "/"), "failed",
	    "host_not_allowed");

	/* A name that is no loopback name by itself but resolves to one
	 * (this host's own name, when /etc/hosts says so) passes every check
	 * of the name, and is refused by the proxy once it resolved it. */
	if (self_loopback_name(self, sizeof(self))) {
		w.space = sb;
		expect_status(navigate(&env, sb, "nav-self", self, "/"),
		    "failed", "host_not_allowed");
		expect_blocked_event(&w, self);
		cr_expect_str_eq(w.reason, "private_address");
	} else {
		cr_log_info("%s does not resolve to loopback: the resolved "
		            "case is not run",
		    self);
	}

	/* On A, the same page loads. */
	expect_status(
	    navigate(&env, sa, "nav-a", "localhost", "/"), "completed", NULL);
	cr_assert_eq(atomic_load(&other_hits), 0);
}

/*
 * https on B: the proxy refuses the CONNECT to a name that resolves to
 * loopback, which Chromium shows as no response at all
 * (ERR_TUNNEL_CONNECTION_FAILED); the call still fails with
 * host_not_allowed, and the event names the host.  The CONNECT is refused
 * before any TLS, so the port serves none.  (localhost itself is refused
 * at submit, by its name.)  A Space of its own: the event is the first
 * for the host in its actor.
 */
Test(egress, instance_b_refused_https_is_host_not_allowed, .init = setup,
    .fini = teardown)
{
	char inst[CM_ID_MAX + 1], sb[CM_ID_MAX + 1], self[256], args[512];
	struct blocked_wait w = {.e = &env};

	if (!self_loopback_name(self, sizeof(self))) {
		cr_log_info("%s does not resolve to loopback: not run", self);
		return;
	}
	hf_managed_instance_with(&env, "chromium-b", POLICY_B, inst);
	cr_assert_eq(hf_create(&env, env.manager, inst, "operator",
	                 env.sf.w.operator_id, EG_GRANTS, sb),
	    201);
	w.space = sb;
	snprintf(args, sizeof(args), "{\"url\": \"https://%s:%d/\"}", self,
	    page_port);
	expect_status(run_task(&env, sb, "nav-https", "navigate", args),
	    "failed", "host_not_allowed");
	expect_blocked_event(&w, self);
	cr_expect_str_eq(w.reason, "private_address");
	cr_assert_eq(atomic_load(&other_hits), 0);
}
