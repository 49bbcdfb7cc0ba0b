/*
 * test_egress.c: the egress proxy (space-actor/egress.h): the one address
 * classifier range by range, the request-head parser on good and hostile
 * heads, and a proxy driven in this test's own loop with the curl binary
 * (and raw sockets for spellings curl would rewrite) against a local
 * server and a local DNS server that answers 127.0.0.1 for every name;
 * and the proxy's bounds (connections, bytes per second, idle times, the
 * head's size, bounded buffers) with a bulk server in a thread.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
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
#include "clock.h"
#include "egress.h"

/* ---- the classifier */

static bool
priv(const char *s)
{
	unsigned char a[16];

	if (inet_pton(AF_INET, s, a) == 1)
		return cm_addr_private(AF_INET, a);
	cr_assert_eq(inet_pton(AF_INET6, s, a), 1, "%s", s);
	return cm_addr_private(AF_INET6, a);
}

Test(classifier, each_range_and_its_edges)
{
	static const struct {
		const char *addr;
		bool priv;
	} t[] = {
	    /* loopback 127/8 */
	    {"127.0.0.1", true},
	    {"127.255.255.255", true},
	    {"126.255.255.255", false},
	    {"128.0.0.0", false},
	    /* unspecified and "this network" 0/8 */
	    {"0.0.0.0", true},
	    {"0.255.255.255", true},
	    /* RFC 1918 */
	    {"10.0.0.0", true},
	    {"10.255.255.255", true},
	    {"11.0.0.0", false},
	    {"9.255.255.255", false},
	    {"172.16.0.0", true},
	    {"172.31.255.255", true},
	    {"172.15.255.255", false},
	    {"172.32.0.0", false},
	    {"192.168.0.0", true},
	    {"192.168.255.255", true},
	    {"192.167.255.255", false},
	    {"192.169.0.0", false},
	    /* link-local 169.254/16 */
	    {"169.254.0.0", true},
	    {"169.254.169.254", true},
	    {"169.253.255.255", false},
	    {"169.255.0.0", false},
	    /* CGNAT 100.64/10 */
	    {"100.64.0.0", true},
	    {"100.127.255.255", true},
	    {"100.63.255.255", false},
	    {"100.128.0.0", false},
	    /* multicast 224/4, reserved 240/4 and broadcast */
	    {"224.0.0.0", true},
	    {"239.255.255.255", true},
	    {"240.0.0.1", true},
	    {"255.255.255.255", true},
	    {"223.255.255.255", false},
	    /* public */
	    {"8.8.8.8", false},
	    {"1.1.1.1", false},
	    /* IPv6: unspecified, loopback */
	    {"::", true},
	    {"::1", true},
	    /* IPv4-compatible ::a.b.c.d: ::2 is 0.0.0.2 */
	    {"::2", true},
	    {"::808:808", false},
	    /* ULA fc00::/7 */
	    {"fc00::", true},
	    {"fdff:ffff::1", true},
	    {"fbff::1", false},
	    {"fe00::1", false},
	    /* link-local fe80::/10 (and site-local fec0::/10) */
	    {"fe80::1", true},
	    {"febf::1", true},
	    {"fec0::1", true},
	    /* multicast */
	    {"ff02::1", true},
	    /* IPv4-mapped, judged as their IPv4 address */
	    {"::ffff:127.0.0.2", true},
	    {"::ffff:10.1.2.3", true},
	    {"::ffff:169.254.1.1", true},
	    {"::ffff:100.64.0.1", true},
	    {"::ffff:8.8.8.8", false},
	    /* NAT64 and 6to4 of private addresses */
	    {"64:ff9b::a00:1", true},
	    {"2002:c0a8:101::1", true},
	    {"2002:808:808::1", false},
	    /* public */
	    {"2001:4860:4860::8888", false},
	    {"2606:4700::1111", false},
	};

	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++)
		cr_expect_eq(priv(t[k].addr), t[k].priv, "%s", t[k].addr);
	cr_expect(cm_addr_private(AF_UNIX, "x"), "an unknown family");
}

Test(classifier, numeric_hosts_are_their_address)
{
	static const char *const v4[] = {"127.0.0.2", "0x7f000002",
	    "2130706434", "0x7f.0.0.2", "0177.0.0.2", "127.0.2", NULL};
	unsigned char a[16];
	char canon[CM_HOST_MAX + 3];
	int fam = 0;

	for (size_t k = 0; v4[k] != NULL; k++) {
		cr_assert_eq(
		    cm_host_numeric(v4[k], &fam, a, canon, sizeof(canon)), 1,
		    "%s", v4[k]);
		cr_expect_eq(fam, AF_INET);
		cr_expect_str_eq(canon, "127.0.0.2", "%s", v4[k]);
	}
	cr_assert_eq(
	    cm_host_numeric("127.1", &fam, a, canon, sizeof(canon)), 1);
	cr_expect_str_eq(canon, "127.0.0.1");
	cr_assert_eq(cm_host_numeric(
	                 "[::ffff:127.0.0.2]", &fam, a, canon, sizeof(canon)),
	    1);
	cr_expect_eq(fam, AF_INET6);
	cr_expect(cm_addr_private(fam, a));
	cr_expect_eq(
	    cm_host_numeric("Example.COM.", &fam, a, canon, sizeof(canon)), 0);
	cr_expect_str_eq(canon, "example.com");
	cr_expect_eq(
	    cm_host_numeric("1.2.3.4.5", &fam, a, canon, sizeof(canon)), -1);
	cr_expect_eq(cm_host_numeric("a b", &fam, a, canon, sizeof(canon)), -1);
}

/* ---- the head parser */

#define AUTH "Basic c3BhY2VkOnNlY3JldA=="

static char out[CM_EGRESS_BUF];

static int
parse(const char *head, struct act_egress_head *h)
{
	return act_egress_parse_head(
	    head, strlen(head), AUTH, h, out, sizeof(out));
}

Test(head, forward_in_origin_form_without_hop_headers)
{
	struct act_egress_head h;
	const char *req =
	    "GET http://Example.com:8080/a/b?q=1#frag HTTP/1.1\r\n"
	    "Host: example.com:8080\r\n"
	    "Proxy-Authorization: " AUTH "\r\n"
	    "Proxy-Connection: keep-alive\r\n"
	    "Connection: keep-alive\r\nKeep-Alive: 5\r\nTE: trailers\r\n"
	    "Accept: */*\r\nContent-Length: 3\r\n\r\nabc";

	cr_assert_eq(parse(req, &h), 200);
	cr_expect_not(h.connect);
	cr_expect_str_eq(h.host, "Example.com");
	cr_expect_eq(h.port, 8080);
	cr_expect(h.auth_ok);
	cr_expect_eq(h.body_len, 3);
	cr_expect_eq(h.head_len, strlen(req) - 3);
	out[h.out_len] = '\0';
	cr_expect_str_eq(out, "GET /a/b?q=1 HTTP/1.1\r\n"
	                      "Host: Example.com:8080\r\n"
	                      "Accept: */*\r\nContent-Length: 3\r\n"
	                      "Connection: close\r\n\r\n");
}

Test(head, connect_and_defaults)
{
	struct act_egress_head h;

	cr_assert_eq(
	    parse("CONNECT [::1]:443 HTTP/1.1\r\nHost: x\r\n\r\n", &h), 200);
	cr_expect(h.connect);
	cr_expect_str_eq(h.host, "::1");
	cr_expect_eq(h.port, 443);
	cr_expect_not(h.auth_ok);
	cr_expect_eq(h.out_len, 0);
	cr_assert_eq(parse("GET http://a.b HTTP/1.0\r\n\r\n", &h), 200);
	cr_expect_eq(h.port, 80);
	out[h.out_len] = '\0';
	cr_expect_str_eq(
	    out, "GET / HTTP/1.1\r\nHost: a.b\r\nConnection: close\r\n\r\n");
	cr_assert_eq(parse("GET http://a.b?x HTTP/1.1\r\n\r\n", &h), 200);
	out[h.out_len] = '\0';
	cr_expect(strncmp(out, "GET /?x HTTP/1.1\r\n", 18) == 0, "%s", out);
	/* Incomplete: more to come. */
	cr_expect_eq(parse("GET http://a.b/ HTTP/1.1\r\nAccept: x\r\n", &h), 0);
}

Test(head, hostile_heads)
{
	static const struct {
		const char *head;
		int want;
	} t[] = {
	    {"GET /relative HTTP/1.1\r\n\r\n", 400},
	    {"GET https://a.b/ HTTP/1.1\r\n\r\n", 400},
	    {"GET http://user:pw@a.b/ HTTP/1.1\r\n\r\n", 400},
	    {"GET http://a.b:0/ HTTP/1.1\r\n\r\n", 400},
	    {"GET http://a.b:65536/ HTTP/1.1\r\n\r\n", 400},
	    {"GET http://a.b:8x/ HTTP/1.1\r\n\r\n", 400},
	    {"GET http://[::1/ HTTP/1.1\r\n\r\n", 400},
	    {"GET http://:80/ HTTP/1.1\r\n\r\n", 400},
	    {"CONNECT a.b HTTP/1.1\r\n\r\n", 400},
	    {"CONNECT a.b:443 HTTP/2.0\r\n\r\n", 400},
	    {"GET  http://a.b/ HTTP/1.1\r\n\r\n", 400},
	    {"GET http://a.b/ HTTP/1.1 \r\n\r\n", 400},
	    {"G(T http://a.b/ HTTP/1.1\r\n\r\n", 400},
	    {"GET http://a.b/ HTTP/1.1\r\n folded\r\n\r\n", 400},
	    {"GET http://a.b/ HTTP/1.1\r\nNo colon\r\n\r\n", 400},
	    {"GET http://a.b/ HTTP/1.1\r\nBad name: x\r\n\r\n", 400},
	    {"GET http://a.b/ HTTP/1.1\r\nX: a\rb\r\n\r\n", 400},
	    {"GET http://a.b/ HTTP/1.1\nX: y\n\n\r\n\r\n", 400},
	    {"GET http://a.b/ HTTP/1.1\r\nContent-Length: 1\r\n"
	     "Content-Length: 2\r\n\r\n",
	        400},
	    {"GET http://a.b/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400},
	    {"POST http://a.b/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
	        501},
	};
	struct act_egress_head h;

	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++)
		cr_expect_eq(parse(t[k].head, &h), t[k].want, "%s", t[k].head);
}

Test(head, bounds)
{
	static char big[CM_EGRESS_HEAD_MAX + 64];
	struct act_egress_head h;
	size_t n;

	/* No end of head within the bound: 431, not "more". */
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET http://a.b/ HTTP/1.1\r\nX: ", 29);
	cr_expect_eq(
	    act_egress_parse_head(big, sizeof(big), AUTH, &h, out, sizeof(out)),
	    431);
	/* One that ends just past the bound: 431 too. */
	n = CM_EGRESS_HEAD_MAX + 1;
	memcpy(big + n - 4, "\r\n\r\n", 4);
	cr_expect_eq(
	    act_egress_parse_head(big, n, AUTH, &h, out, sizeof(out)), 431);
	/* A NUL in the head. */
	cr_expect_eq(
	    act_egress_parse_head("GET http://a.b/ HTTP/1.1\r\nX: \0\r\n\r\n",
	        34, AUTH, &h, out, sizeof(out)),
	    400);
	/* An output buffer too small for the forwarded head. */
	cr_expect_eq(act_egress_parse_head("GET http://a.b/ HTTP/1.1\r\n\r\n",
	                 28, AUTH, &h, out, 10),
	    431);
	/* A wrong secret is not authorised, one of the same length either. */
	cr_assert_eq(parse("CONNECT a.b:1 HTTP/1.1\r\nProxy-Authorization: "
	                   "Basic c3BhY2VkOnNlY3JldB==\r\n\r\n",
	                 &h),
	    200);
	cr_expect_not(h.auth_ok);
}

/* ---- a proxy in this test's loop */

static struct act_egress *eg;
static struct cm_policy pol;
static char blocked_host[CM_HOST_MAX + 3], blocked_reason[32];
static int n_blocked;

/* The origin server: answers every request with "hello", keeping the
 * last request head it read. */
static int srv_fd = -1, srv_port;
static int srv_conn = -1;
static char srv_head[4096];
static size_t srv_len;

/* A DNS server that answers 127.0.0.1 for every A question, and counts
 * the questions. */
static int dns_fd = -1, dns_port, dns_questions;

static int
listen_on(int type, int *port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sin);
	int fd = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert(fd >= 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	if (type == SOCK_STREAM)
		cr_assert_eq(listen(fd, 16), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&sin, &sl), 0);
	*port = ntohs(sin.sin_port);
	return fd;
}

static void
refused(void *arg, const char *host, const char *reason)
{
	(void)arg;
	snprintf(blocked_host, sizeof(blocked_host), "%s", host);
	snprintf(blocked_reason, sizeof(blocked_reason), "%s", reason);
	n_blocked++;
}

/* A proxy with policy_json and the bounds of o (its dns is set here). */
static void
setup_proxy_with(const char *policy_json, struct act_egress_opts o)
{
	char err[256], dns[64];

	signal(SIGPIPE, SIG_IGN);
	srv_fd = listen_on(SOCK_STREAM, &srv_port);
	dns_fd = listen_on(SOCK_DGRAM, &dns_port);
	snprintf(dns, sizeof(dns), "127.0.0.1:%d", dns_port);
	o.dns = dns;
	cr_assert_eq(cm_policy_parse(policy_json, strlen(policy_json), &pol,
	                 err, sizeof(err)),
	    0, "%s", err);
	cr_assert_eq(act_egress_open(&o, &eg, err, sizeof(err)), 0, "%s", err);
	act_egress_policy(eg, &pol, refused, NULL);
	n_blocked = 0;
	blocked_host[0] = blocked_reason[0] = '\0';
}

static void
setup_proxy(const char *policy_json)
{
	setup_proxy_with(
	    policy_json, (struct act_egress_opts){.conns_max = 8,
	                     .bytes_per_s = CM_EGRESS_BPS_DEFAULT});
}

static void
teardown_proxy(void)
{
	act_egress_close(eg);
	eg = NULL;
	close(srv_fd);
	close(dns_fd);
	if (srv_conn >= 0)
		close(srv_conn);
	srv_conn = -1;
}

static void
dns_answer(void)
{
	unsigned char q[512], r[600];
	struct sockaddr_in from;
	socklen_t fl = sizeof(from);
	ssize_t n =
	    recvfrom(dns_fd, q, sizeof(q), 0, (struct sockaddr *)&from, &fl);
	size_t at = 12, qend;
	bool a;

	if (n < 17)
		return;
	dns_questions++;
	while (at < (size_t)n && q[at] != 0)
		at += q[at] + 1u;
	qend = at + 5;
	if (qend > (size_t)n)
		return;
	a = q[at + 1] == 0 && q[at + 2] == 1;
	memcpy(r, q, qend);
	r[2] = 0x81;
	r[3] = 0x80;
	r[6] = 0;
	r[7] = a ? 1 : 0;
	r[8] = r[9] = r[10] = r[11] = 0;
	if (a) {
		static const unsigned char ans[] = {
		    0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1};
		memcpy(r + qend, ans, sizeof(ans));
		qend += sizeof(ans);
	}
	sendto(dns_fd, r, qend, 0, (struct sockaddr *)&from, fl);
}

static void
srv_step(void)
{
	static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
	                           "Connection: close\r\n\r\nhello";
	ssize_t n;

	if (srv_conn < 0) {
		srv_conn = accept4(srv_fd, NULL, NULL, SOCK_CLOEXEC);
		srv_len = 0;
		return;
	}
	n = recv(srv_conn, srv_head + srv_len, sizeof(srv_head) - 1 - srv_len,
	    MSG_DONTWAIT);
	if (n > 0) {
		srv_len += (size_t)n;
		srv_head[srv_len] = '\0';
		if (strstr(srv_head, "\r\n\r\n") != NULL) {
			/* Small: one send of a blocking socket. */
			fcntl(srv_conn, F_SETFL, 0);
			send(srv_conn, resp, sizeof(resp) - 1, MSG_NOSIGNAL);
			shutdown(srv_conn, SHUT_WR);
		}
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		close(srv_conn);
		srv_conn = -1;
	}
}

/* One turn: the proxy's fds, the server's, the DNS server's. */
static void
turn(int extra_fd, short extra_ev, short *extra_rev)
{
	struct pollfd fds[CM_EGRESS_POLLFDS + 4];
	int64_t wake = -1, now;
	int n, base, timeout;

	n = act_egress_pollfds(eg, fds, CM_EGRESS_POLLFDS, &wake);
	base = n;
	fds[n].fd = srv_conn >= 0 ? srv_conn : srv_fd;
	fds[n++].events = POLLIN;
	fds[n].fd = dns_fd;
	fds[n++].events = POLLIN;
	fds[n].fd = extra_fd;
	fds[n++].events = extra_ev;
	now = cm_mono_ms();
	timeout = wake < 0 || wake - now > 20 ? 20
	          : wake <= now               ? 0
	                                      : (int)(wake - now);
	cr_assert(poll(fds, (nfds_t)n, timeout) >= 0);
	act_egress_step(eg, fds, base);
	if (fds[base].revents)
		srv_step();
	if (fds[base + 1].revents & POLLIN)
		dns_answer();
	if (extra_rev != NULL)
		*extra_rev = fds[base + 2].revents;
}

/*
 * Runs curl through the proxy (args after the proxy's, NULL-terminated;
 * with_auth: the right credentials) while the loop turns.  Returns the
 * HTTP status curl saw; body gets what it printed.
 */
static int
curl(bool with_auth, char *body, size_t bodylen, const char *const *args)
{
	char proxy[64], user[128], outf[] = "/tmp/test_egress_XXXXXX";
	const char *argv[32];
	int fd = mkstemp(outf), status = 0, k = 0, code = 0;
	int64_t end = cm_mono_ms() + 10000;
	pid_t pid;
	FILE *f;

	cr_assert(fd >= 0);
	snprintf(
	    proxy, sizeof(proxy), "http://127.0.0.1:%d", act_egress_port(eg));
	snprintf(user, sizeof(user), "%s:%s", ACT_EGRESS_USER,
	    with_auth ? act_egress_secret(eg) : "wrong");
	argv[k++] = "curl";
	argv[k++] = "-s";
	argv[k++] = "-x";
	argv[k++] = proxy;
	argv[k++] = "--proxy-user";
	argv[k++] = user;
	argv[k++] = "-w";
	/* A CONNECT's answer is http_connect; a request's http_code. */
	argv[k++] = "\n%{http_connect} %{http_code}";
	while (*args != NULL)
		argv[k++] = *args++;
	argv[k] = NULL;
	if ((pid = fork()) == 0) {
		dup2(fd, 1);
		execvp("curl", (char *const *)argv);
		_exit(127);
	}
	while (waitpid(pid, &status, WNOHANG) == 0 && cm_mono_ms() < end)
		turn(-1, 0, NULL);
	if (cm_mono_ms() >= end) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	f = fdopen(fd, "r");
	rewind(f);
	body[0] = '\0';
	{
		size_t n = fread(body, 1, bodylen - 1, f);
		char *nl;
		body[n] = '\0';
		nl = strrchr(body, '\n');
		if (nl != NULL) {
			int conn = 0, req = 0;
			sscanf(nl + 1, "%d %d", &conn, &req);
			code = req != 0 ? req : conn;
			*nl = '\0';
		}
	}
	fclose(f);
	unlink(outf);
	return code;
}

/* A plain GET of url through the proxy, with the right credentials. */
static int
get(char *body, size_t bodylen, const char *url)
{
	return curl(true, body, bodylen, (const char *const[]){url, NULL});
}

/* A GET of http://host:<the server's port>/ reaches the server. */
static void
expect_relayed(const char *host)
{
	char body[512], url[CM_HOST_MAX + 32];

	snprintf(url, sizeof(url), "http://%s:%d/", host, srv_port);
	cr_expect_eq(get(body, sizeof(body), url), 200, "%s", host);
	cr_expect_str_eq(body, "hello");
}

/* Sends raw bytes to the proxy and returns what it answered (until it
 * closes), while the loop turns; true when the proxy closed in 10 s. */
static bool
raw(const char *req, char *resp, size_t resplen)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int64_t end = cm_mono_ms() + 10000;
	size_t got = 0;
	short rev = 0;
	bool closed = false;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)act_egress_port(eg));
	cr_assert_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	cr_assert_eq(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
	while (cm_mono_ms() < end) {
		turn(fd, POLLIN, &rev);
		if (rev & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = recv(fd, resp + got, resplen - 1 - got, 0);
			if (n <= 0) {
				closed = true;
				break;
			}
			got += (size_t)n;
		}
	}
	resp[got] = '\0';
	close(fd);
	return closed;
}

/* Proxy-Authorization for the proxy's own secret. */
static const char *
auth_line(void)
{
	static char line[256];
	char cred[128];
	FILE *p;

	snprintf(cred, sizeof(cred), "printf %%s '%s:%s' | base64 -w0",
	    ACT_EGRESS_USER, act_egress_secret(eg));
	p = popen(cred, "r");
	cr_assert(p != NULL);
	snprintf(line, sizeof(line), "Proxy-Authorization: Basic ");
	cr_assert(fgets(line + strlen(line), (int)(sizeof(line) - strlen(line)),
	              p) != NULL);
	pclose(p);
	return line;
}

Test(proxy, allowed_host_is_relayed_in_origin_form, .fini = teardown_proxy)
{
	char body[512], url[128];

	setup_proxy("{\"allow_hosts\":[\"127.0.0.1\"]}");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/p?q=1", srv_port);
	cr_assert_eq(curl(true, body, sizeof(body),
	                 (const char *const[]){"-H", "X-Test: 1", url, NULL}),
	    200);
	cr_expect_str_eq(body, "hello");
	cr_expect(strncmp(srv_head, "GET /p?q=1 HTTP/1.1\r\n", 21) == 0, "%s",
	    srv_head);
	cr_expect(strstr(srv_head, "X-Test: 1\r\n") != NULL);
	cr_expect(strcasestr(srv_head, "Proxy-") == NULL, "%s", srv_head);
	cr_expect(strstr(srv_head, "Connection: close\r\n") != NULL);
	cr_expect_eq(n_blocked, 0);
}

Test(proxy, connect_is_relayed, .fini = teardown_proxy)
{
	char body[512], url[128];

	setup_proxy("{\"allow_hosts\":[\"127.0.0.1\"]}");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/t", srv_port);
	cr_assert_eq(curl(true, body, sizeof(body),
	                 (const char *const[]){"-p", url, NULL}),
	    200);
	cr_expect_str_eq(body, "hello");
	/* Through a tunnel the server sees the request as curl wrote it. */
	cr_expect(
	    strncmp(srv_head, "GET /t HTTP/1.1\r\n", 17) == 0, "%s", srv_head);
}

Test(proxy, disallowed_host_gets_403_and_is_reported, .fini = teardown_proxy)
{
	char body[512], url[128];

	setup_proxy("{\"allow_hosts\":[\"localhost\"]}");
	snprintf(
	    url, sizeof(url), "http://127.0.0.1:%d/secret?token=x", srv_port);
	cr_assert_eq(get(body, sizeof(body), url), 403);
	cr_expect(strstr(body, "127.0.0.1") != NULL, "%s", body);
	cr_expect_eq(srv_len, 0, "nothing reached the server");
	cr_expect_eq(n_blocked, 1);
	cr_expect_str_eq(blocked_host, "127.0.0.1");
	cr_expect_str_eq(blocked_reason, ACT_EGRESS_NOT_ALLOWED);
	/* CONNECT is judged the same way. */
	cr_expect_eq(curl(true, body, sizeof(body),
	                 (const char *const[]){"-p", url, NULL}),
	    403);
	cr_expect_eq(n_blocked, 2);
	/* A name the policy allows is resolved and relayed. */
	expect_relayed("localhost");
}

Test(proxy, missing_or_wrong_secret_gets_407, .fini = teardown_proxy)
{
	char resp[2048], req[256];

	setup_proxy("{\"allow_hosts\":[\"127.0.0.1\"]}");
	snprintf(req, sizeof(req),
	    "GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", srv_port);
	raw(req, resp, sizeof(resp));
	cr_expect(strncmp(resp, "HTTP/1.1 407 ", 13) == 0, "%s", resp);
	cr_expect(strstr(resp, "Proxy-Authenticate: Basic") != NULL);
	cr_expect_eq(srv_len, 0, "nothing reached the server");
	cr_expect_eq(
	    curl(false, resp, sizeof(resp),
	        (const char *const[]){"-p", "http://127.0.0.1:1/", NULL}),
	    407);
	cr_expect_eq(n_blocked, 0, "not a refusal of the policy");
}

Test(proxy, numeric_spellings_are_judged_as_addresses, .fini = teardown_proxy)
{
	static const char *const hosts[] = {"0x7f000002", "2130706434",
	    "[::ffff:127.0.0.2]", "127.0.0.2", NULL};
	char resp[2048], req[512];

	setup_proxy("{\"allow_hosts\":[\"localhost\",\"127.0.0.1\"]}");
	for (size_t k = 0; hosts[k] != NULL; k++) {
		snprintf(req, sizeof(req),
		    "GET http://%s:%d/ HTTP/1.1\r\n%s\r\n\r\n", hosts[k],
		    srv_port, auth_line());
		raw(req, resp, sizeof(resp));
		cr_expect(strncmp(resp, "HTTP/1.1 403 ", 13) == 0, "%s: %s",
		    hosts[k], resp);
		cr_expect_str_eq(blocked_host,
		    hosts[k][0] == '[' ? "::ffff:127.0.0.2" : "127.0.0.2");
	}
	/* 127.1 is 127.0.0.1, which is allowed. */
	snprintf(req, sizeof(req),
	    "GET http://127.1:%d/x HTTP/1.1\r\n%s\r\n\r\n", srv_port,
	    auth_line());
	raw(req, resp, sizeof(resp));
	cr_expect(strncmp(resp, "HTTP/1.1 200 ", 13) == 0, "%s", resp);
	cr_expect_eq(srv_len > 0, true);
}

Test(proxy, private_address_refused_after_resolving, .fini = teardown_proxy)
{
	char body[512], url[128];

	/* rebind.example is public by name; its only address is 127.0.0.1. */
	setup_proxy("{\"deny_private_networks\":true}");
	snprintf(url, sizeof(url), "http://rebind.example:%d/", srv_port);
	cr_assert_eq(get(body, sizeof(body), url), 403);
	cr_expect_str_eq(blocked_host, "rebind.example");
	cr_expect_str_eq(blocked_reason, ACT_EGRESS_PRIVATE);
	cr_expect_eq(srv_len, 0, "nothing reached the server");
	/* A literal private address, by the same classifier. */
	snprintf(url, sizeof(url), "http://10.0.0.1:%d/", srv_port);
	cr_expect_eq(get(body, sizeof(body), url), 403);
	cr_expect_str_eq(blocked_reason, ACT_EGRESS_PRIVATE);
	teardown_proxy();
	/* Without deny_private_networks the same name is resolved (by our
	 * DNS server, through c-ares) and relayed. */
	setup_proxy("{\"allow_hosts\":[\"rebind.example\"]}");
	expect_relayed("rebind.example");
}

Test(proxy, no_policy_refuses_everything, .fini = teardown_proxy)
{
	char body[512], url[128];

	setup_proxy("{}");
	act_egress_policy(eg, NULL, refused, NULL);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", srv_port);
	cr_expect_eq(get(body, sizeof(body), url), 403);
	cr_expect_str_eq(blocked_reason, ACT_EGRESS_NO_POLICY);
}

/* What the observer saw: each request's host and port, in order. */
static char seen_host[4][CM_HOST_MAX + 3];
static int seen_port[4], n_seen;

/* Lets 127.0.0.1 on, refuses every other host. */
static bool
seen(void *arg, const char *host, uint16_t port)
{
	(void)arg;
	if (n_seen < 4) {
		snprintf(seen_host[n_seen], sizeof(seen_host[0]), "%s", host);
		seen_port[n_seen] = port;
	}
	n_seen++;
	return strcmp(host, "127.0.0.1") == 0;
}

Test(proxy, the_observer_sees_each_request_and_may_refuse_it,
    .fini = teardown_proxy)
{
	char body[512], url[128];

	/* The open policy: only the observer refuses. */
	setup_proxy("{}");
	n_seen = 0;
	act_egress_observe(eg, seen, NULL);
	/* A host it lets on: seen as its canonical spelling, and relayed. */
	snprintf(url, sizeof(url), "http://0x7f000001:%d/", srv_port);
	cr_assert_eq(get(body, sizeof(body), url), 200);
	cr_expect_str_eq(body, "hello");
	cr_assert_eq(n_seen, 1);
	cr_expect_str_eq(seen_host[0], "127.0.0.1");
	cr_expect_eq(seen_port[0], srv_port);
	/* A name it refuses: a 403 reported as the policy's, and nothing
	 * asked of the DNS server or of the server. */
	srv_len = 0;
	dns_questions = 0;
	snprintf(url, sizeof(url), "http://elsewhere.example:%d/", srv_port);
	cr_assert_eq(get(body, sizeof(body), url), 403);
	cr_expect_eq(n_seen, 2);
	cr_expect_str_eq(seen_host[1], "elsewhere.example");
	cr_expect_eq(n_blocked, 1);
	cr_expect_str_eq(blocked_host, "elsewhere.example");
	cr_expect_str_eq(blocked_reason, ACT_EGRESS_NOT_ALLOWED);
	cr_expect_eq(srv_len, 0, "nothing reached the server");
	cr_expect_eq(dns_questions, 0, "the name was resolved");
	/* Without an observer the open policy resolves the name (the test's
	 * DNS server says 127.0.0.1) and relays it. */
	act_egress_observe(eg, NULL, NULL);
	expect_relayed("elsewhere.example");
	cr_expect_gt(dns_questions, 0);
	cr_expect_eq(n_seen, 2);
}

Test(proxy, a_second_request_on_the_connection_is_not_relayed,
    .fini = teardown_proxy)
{
	char resp[2048], req[1024];

	setup_proxy("{\"allow_hosts\":[\"127.0.0.1\"]}");
	/* The second request names a host the policy refuses: it must not
	 * reach the server that the first one was allowed to. */
	snprintf(req, sizeof(req),
	    "GET http://127.0.0.1:%d/one HTTP/1.1\r\n%s\r\n\r\n"
	    "GET http://127.0.0.2:%d/two HTTP/1.1\r\n\r\n",
	    srv_port, auth_line(), srv_port);
	raw(req, resp, sizeof(resp));
	cr_expect(strncmp(resp, "HTTP/1.1 200 ", 13) == 0, "%s", resp);
	cr_expect(strstr(srv_head, "/two") == NULL, "%s", srv_head);
}

/* What a page asks after a navigation failed with no response: did the
 * proxy refuse this host during the call?  Any spelling of the host; the
 * last CM_EGRESS_RECENT refusals only. */
Test(proxy, refusals_are_remembered_for_the_page, .fini = teardown_proxy)
{
	char resp[2048], req[256];
	int64_t t0;

	setup_proxy("{\"allow_hosts\":[\"localhost\"]}");
	t0 = cm_mono_ms();
	cr_expect_not(act_egress_refused_since(eg, "127.0.0.2", t0));
	snprintf(req, sizeof(req), "CONNECT 127.0.0.2:%d HTTP/1.1\r\n\r\n",
	    srv_port);
	raw(req, resp, sizeof(resp));
	cr_assert(strncmp(resp, "HTTP/1.1 403 ", 13) == 0, "%s", resp);
	cr_expect(act_egress_refused_since(eg, "127.0.0.2", t0));
	cr_expect(act_egress_refused_since(eg, "0x7f000002", t0));
	cr_expect_not(act_egress_refused_since(eg, "127.0.0.3", t0));
	cr_expect_not(act_egress_refused_since(eg, "localhost", t0));
	cr_expect_not(
	    act_egress_refused_since(eg, "127.0.0.2", cm_mono_ms() + 1000),
	    "a refusal before the call is not the call's");
	/* CM_EGRESS_RECENT refusals later, it is forgotten. */
	for (int k = 0; k < CM_EGRESS_RECENT; k++) {
		snprintf(req, sizeof(req),
		    "CONNECT 127.0.1.%d:%d HTTP/1.1\r\n\r\n", k + 1, srv_port);
		raw(req, resp, sizeof(resp));
	}
	cr_expect(act_egress_refused_since(eg, "127.0.1.1", t0));
	cr_expect_not(act_egress_refused_since(eg, "127.0.0.2", t0));
}

/* ---- bounds */

/* A client socket to the proxy (rcvbuf > 0: that receive buffer). */
static int
dial_proxy(int rcvbuf)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert(fd >= 0);
	if (rcvbuf > 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((uint16_t)act_egress_port(eg));
	cr_assert_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	return fd;
}

/* Turns the loop until fd has something to read (or its end) or ms
 * pass; true when it has. */
static bool
turn_until_readable(int fd, int ms)
{
	int64_t end = cm_mono_ms() + ms;
	short rev = 0;

	while (cm_mono_ms() < end) {
		turn(fd, POLLIN, &rev);
		if (rev & (POLLIN | POLLHUP | POLLERR))
			return true;
	}
	return false;
}

/* Turns the loop until the proxy holds n connections, for up to 5 s. */
static bool
turn_until_conns(int n)
{
	int64_t end = cm_mono_ms() + 5000;

	while (act_egress_conns(eg) != n && cm_mono_ms() < end)
		turn(-1, 0, NULL);
	return act_egress_conns(eg) == n;
}

Test(bounds, connections_past_the_cap_wait_until_one_closes,
    .fini = teardown_proxy)
{
	char req[512], resp[256];
	int idle[2], fd;
	ssize_t n;

	setup_proxy_with("{\"allow_hosts\":[\"127.0.0.1\"]}",
	    (struct act_egress_opts){
	        .conns_max = 2, .bytes_per_s = CM_EGRESS_BPS_DEFAULT});
	idle[0] = dial_proxy(0);
	idle[1] = dial_proxy(0);
	cr_assert(turn_until_conns(2));
	/* The third is not taken: it waits in the listener's backlog. */
	fd = dial_proxy(0);
	snprintf(req, sizeof(req),
	    "CONNECT 127.0.0.1:%d HTTP/1.1\r\n%s\r\n\r\n", srv_port,
	    auth_line());
	cr_assert_eq(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
	cr_expect_not(turn_until_readable(fd, 500), "answered past the cap");
	cr_expect_eq(act_egress_conns(eg), 2);
	/* One closes: the cap frees and the third is served. */
	close(idle[0]);
	cr_assert(turn_until_readable(fd, 5000), "not served after a close");
	n = recv(fd, resp, sizeof(resp) - 1, 0);
	resp[n > 0 ? n : 0] = '\0';
	cr_expect(strncmp(resp, "HTTP/1.1 200 ", 13) == 0, "%s", resp);
	cr_expect_eq(act_egress_conns(eg), 2);
	close(idle[1]);
	close(fd);
}

Test(bounds, a_head_that_never_comes_is_closed, .fini = teardown_proxy)
{
	int fd;
	int64_t t0;
	char c;

	setup_proxy_with("{\"allow_hosts\":[\"127.0.0.1\"]}",
	    (struct act_egress_opts){.conns_max = 8,
	        .bytes_per_s = CM_EGRESS_BPS_DEFAULT,
	        .head_ms = 300});
	fd = dial_proxy(0);
	t0 = cm_mono_ms();
	cr_assert(turn_until_conns(1));
	cr_assert(turn_until_readable(fd, 10000), "never closed");
	cr_expect_eq(recv(fd, &c, 1, 0), 0, "closed without an answer");
	cr_expect_geq(cm_mono_ms() - t0, 300, "closed before its time");
	cr_expect(turn_until_conns(0));
	close(fd);
}

Test(bounds, an_idle_tunnel_is_closed, .fini = teardown_proxy)
{
	char req[512], resp[256];
	int fd;
	int64_t t0;
	ssize_t n;

	setup_proxy_with("{\"allow_hosts\":[\"127.0.0.1\"]}",
	    (struct act_egress_opts){.conns_max = 8,
	        .bytes_per_s = CM_EGRESS_BPS_DEFAULT,
	        .idle_ms = 300});
	/* Before the dial: the proxy's idle clock starts at the tunnel's
	 * last byte, which the test reads only some time after it went. */
	t0 = cm_mono_ms();
	fd = dial_proxy(0);
	snprintf(req, sizeof(req),
	    "CONNECT 127.0.0.1:%d HTTP/1.1\r\n%s\r\n\r\n", srv_port,
	    auth_line());
	cr_assert_eq(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
	cr_assert(turn_until_readable(fd, 5000));
	n = recv(fd, resp, sizeof(resp) - 1, 0);
	resp[n > 0 ? n : 0] = '\0';
	cr_assert(strncmp(resp, "HTTP/1.1 200 ", 13) == 0, "%s", resp);
	/* Neither end says a thing: the proxy ends the tunnel. */
	cr_assert(turn_until_readable(fd, 10000), "the idle tunnel stays");
	cr_expect_leq(recv(fd, resp, sizeof(resp), 0), 0);
	cr_expect_geq(cm_mono_ms() - t0, 300, "closed before its time");
	cr_expect(turn_until_conns(0));
	close(fd);
}

Test(bounds, an_over_long_head_gets_431_and_is_closed, .fini = teardown_proxy)
{
	static char big[CM_EGRESS_HEAD_MAX + 64];
	char resp[512];

	setup_proxy("{\"allow_hosts\":[\"127.0.0.1\"]}");
	memset(big, 'a', sizeof(big) - 1);
	memcpy(big, "GET http://127.0.0.1/ HTTP/1.1\r\nX: ", 35);
	big[sizeof(big) - 1] = '\0';
	cr_expect(raw(big, resp, sizeof(resp)), "not closed");
	cr_expect(strncmp(resp, "HTTP/1.1 431 ", 13) == 0, "%s", resp);
	cr_expect_eq(srv_len, 0, "nothing reached the server");
	cr_expect(turn_until_conns(0));
}

/* A bulk origin in a thread: one connection, a response of size bytes
 * (byte i is i % 251), sent counted as it goes. */
struct bulk {
	int fd, port;
	size_t size;
	atomic_size_t sent;
	pthread_t thread;
};

static void *
bulk_run(void *arg)
{
	struct bulk *b = arg;
	struct pollfd p = {.fd = b->fd, .events = POLLIN};
	struct timeval tv = {10, 0};
	char buf[16384], head[128];
	size_t at = 0;
	int c, hl;

	if (poll(&p, 1, 10000) != 1 ||
	    (c = accept4(b->fd, NULL, NULL, SOCK_CLOEXEC)) < 0)
		return NULL;
	/* Never stuck: a send that waits 10 s gives up. */
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (at < sizeof(buf) - 1) {
		ssize_t n = recv(c, buf + at, sizeof(buf) - 1 - at, 0);
		if (n <= 0)
			break;
		at += (size_t)n;
		buf[at] = '\0';
		if (strstr(buf, "\r\n\r\n") != NULL)
			break;
	}
	hl = snprintf(head, sizeof(head),
	    "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n"
	    "Connection: close\r\n\r\n",
	    b->size);
	if (send(c, head, (size_t)hl, MSG_NOSIGNAL) != hl)
		goto out;
	while (atomic_load(&b->sent) < b->size) {
		size_t off = atomic_load(&b->sent), n = b->size - off;
		ssize_t w;

		if (n > sizeof(buf))
			n = sizeof(buf);
		for (size_t k = 0; k < n; k++)
			buf[k] = (char)((off + k) % 251);
		if ((w = send(c, buf, n, MSG_NOSIGNAL)) <= 0)
			break;
		atomic_fetch_add(&b->sent, (size_t)w);
	}
out:
	close(c);
	return NULL;
}

static void
bulk_start(struct bulk *b, size_t size)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sin);

	b->size = size;
	atomic_store(&b->sent, 0);
	b->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(bind(b->fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	cr_assert_eq(listen(b->fd, 4), 0);
	cr_assert_eq(getsockname(b->fd, (struct sockaddr *)&sin, &sl), 0);
	b->port = ntohs(sin.sin_port);
	cr_assert_eq(pthread_create(&b->thread, NULL, bulk_run, b), 0);
}

static void
bulk_end(struct bulk *b)
{
	pthread_join(b->thread, NULL);
	close(b->fd);
}

/* Asks the bulk server through the proxy on fd (a forwarded GET). */
static void
bulk_ask(int fd, const struct bulk *b)
{
	char req[512];

	snprintf(req, sizeof(req),
	    "GET http://127.0.0.1:%d/bulk HTTP/1.1\r\n%s\r\n\r\n", b->port,
	    auth_line());
	cr_assert_eq(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
}

/* Reads the response on fd to its end while the loop turns, for up to
 * ms; returns the body's bytes, each checked against the pattern. */
static size_t
bulk_read(int fd, int ms)
{
	static char buf[65536];
	int64_t end = cm_mono_ms() + ms;
	size_t body = 0, head = 0;
	bool in_body = false;
	short rev = 0;

	while (cm_mono_ms() < end) {
		ssize_t n;
		size_t k = 0;

		turn(fd, POLLIN, &rev);
		if (!(rev & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if ((n = recv(fd, buf, sizeof(buf), 0)) <= 0)
			break;
		/* The head ends at the first CRLFCRLF: a byte state machine
		 * across reads. */
		for (; !in_body && k < (size_t)n; k++) {
			static const char crlf2[] = "\r\n\r\n";
			head = buf[k] == crlf2[head] ? head + 1
			       : buf[k] == '\r'      ? 1
			                             : 0;
			in_body = head == 4;
		}
		for (; k < (size_t)n; k++, body++)
			cr_assert_eq((unsigned char)buf[k], body % 251,
			    "byte %zu of the body", body);
	}
	return body;
}

Test(bounds, bytes_per_second_holds, .fini = teardown_proxy, .timeout = 60)
{
	/* Three seconds' worth at the lowest rate: the bucket starts full
	 * (one second's), so the rest takes at least two. */
	const size_t size = 3 * CM_EGRESS_BPS_MIN;
	struct bulk b;
	int64_t t0, took;
	size_t got;
	int fd;

	setup_proxy_with("{\"allow_hosts\":[\"127.0.0.1\"]}",
	    (struct act_egress_opts){
	        .conns_max = 8, .bytes_per_s = CM_EGRESS_BPS_MIN});
	bulk_start(&b, size);
	fd = dial_proxy(0);
	t0 = cm_mono_ms();
	bulk_ask(fd, &b);
	got = bulk_read(fd, 30000);
	took = cm_mono_ms() - t0;
	close(fd);
	bulk_end(&b);
	cr_assert_eq(got, size);
	cr_expect_geq(took,
	    (int64_t)((size - CM_EGRESS_BPS_MIN) * 1000 / CM_EGRESS_BPS_MIN),
	    "%zu bytes in %lld ms at %d bytes/s", size, (long long)took,
	    CM_EGRESS_BPS_MIN);
}

Test(bounds, a_body_larger_than_the_buffers_is_relayed_to_a_slow_reader,
    .fini = teardown_proxy, .timeout = 120)
{
	/* Far past what the proxy and the sockets between can hold. */
	const size_t size = 32 * 1024 * 1024;
	struct bulk b;
	int64_t end;
	int fd;

	setup_proxy_with("{\"allow_hosts\":[\"127.0.0.1\"]}",
	    (struct act_egress_opts){
	        .conns_max = 8, .bytes_per_s = CM_EGRESS_BPS_MAX});
	bulk_start(&b, size);
	fd = dial_proxy(16384);
	bulk_ask(fd, &b);
	/* The reader reads nothing for a while: the server is held back
	 * (the proxy reads no more than it can pass on) and never gets the
	 * whole body out. */
	end = cm_mono_ms() + 1000;
	while (cm_mono_ms() < end && atomic_load(&b.sent) < size)
		turn(-1, 0, NULL);
	cr_expect_lt(atomic_load(&b.sent), size,
	    "the whole body left the server with nobody reading it");
	cr_expect_gt(atomic_load(&b.sent), 0);
	/* Then it reads: every byte arrives, in order. */
	cr_expect_eq(bulk_read(fd, 60000), size);
	close(fd);
	bulk_end(&b);
}
