/*
 * siege.c: the clients of siege.h.  The siege's thread never blocks on
 * the api: connects are non-blocking, a write the socket does not take
 * is tried again a second later, and poll() wakes it for a close.
 */
#include "siege.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"

#define SIEGE_BYTE_MS 1000    /* a slow connection sends a byte this often */
#define SIEGE_POLL_MS 50      /* the longest the thread sleeps */
#define SIEGE_RETRY_MS 100    /* a connection that could not open, again */
#define SIEGE_ANSWER_MAX 8192 /* what a well-behaved GET reads at most */

enum siege_kind { SG_HEAD, SG_BODY, SG_IDLE };

struct siege_conn {
	int fd; /* -1: to be opened at next_ms */
	enum siege_kind kind;
	size_t sent;     /* bytes of the script sent */
	bool answered;   /* the api wrote something before it closed */
	int64_t next_ms; /* the next byte, or the next attempt to open */
};

struct tk_siege {
	struct sockaddr_in addr;
	int n;
	struct siege_conn *c;
	struct pollfd *pfd;
	int *pfd_conn; /* pfd[k] is connection pfd_conn[k] */
	pthread_t thread;
	atomic_bool stop;
	atomic_int open_now;
	struct tk_siege_stats st;
};

/* What a slow connection sends before its endless tail of 'a's: a head
 * whose last field never ends, or a whole head whose body never does. */
static const char head_script[] = "GET /healthz HTTP/1.1\r\nHost: siege\r\n"
                                  "X-Slow: ";
static const char body_script[] = "POST /healthz HTTP/1.1\r\nHost: siege\r\n"
                                  "Content-Type: application/json\r\n"
                                  "Content-Length: 60000\r\n\r\n";

static int
connect_nb(const struct sockaddr_in *addr)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) != 0 &&
	    errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

static void
siege_open(struct tk_siege *s, struct siege_conn *c, int64_t now)
{
	if ((c->fd = connect_nb(&s->addr)) < 0) {
		c->next_ms = now + SIEGE_RETRY_MS;
		return;
	}
	c->sent = 0;
	c->answered = false;
	c->next_ms = now; /* a body's head goes at once */
	s->st.opened++;
	if (atomic_fetch_add(&s->open_now, 1) + 1 > s->st.open_max)
		s->st.open_max = atomic_load(&s->open_now);
}

static void
siege_close(struct tk_siege *s, struct siege_conn *c, int64_t now)
{
	close(c->fd);
	c->fd = -1;
	c->next_ms = now; /* opened again at once */
	atomic_fetch_sub(&s->open_now, 1);
}

/* A slow connection's next byte (a body's whole head at first). */
static void
siege_send(struct tk_siege *s, struct siege_conn *c, int64_t now)
{
	const char *script = c->kind == SG_HEAD ? head_script : body_script;
	size_t len = c->kind == SG_HEAD ? sizeof(head_script) - 1
	                                : sizeof(body_script) - 1;
	char one = 'a';
	const char *p = &one;
	size_t n = 1;
	ssize_t w;

	if (c->kind == SG_BODY && c->sent == 0) {
		p = script;
		n = len;
	} else if (c->sent < len) {
		p = script + c->sent;
	}
	c->next_ms = now + SIEGE_BYTE_MS;
	/* Not connected yet, or a full buffer: the same byte next time. */
	if ((w = send(c->fd, p, n, MSG_NOSIGNAL)) <= 0)
		return;
	c->sent += (size_t)w;
	s->st.bytes += w;
}

/* The api wrote or closed: read it all, and reopen once it closed. */
static void
siege_read(struct tk_siege *s, struct siege_conn *c, int64_t now)
{
	char buf[4096];
	ssize_t n;

	while ((n = read(c->fd, buf, sizeof(buf))) > 0)
		c->answered = true;
	if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		s->st.closed++;
		if (c->answered)
			s->st.answered++;
		siege_close(s, c, now);
	}
}

static void *
siege_main(void *arg)
{
	struct tk_siege *s = arg;

	while (!atomic_load(&s->stop)) {
		int64_t now = cm_mono_ms(), wake = now + SIEGE_POLL_MS;
		int k = 0;

		for (int i = 0; i < s->n; i++) {
			struct siege_conn *c = &s->c[i];

			if (c->fd < 0 && now >= c->next_ms)
				siege_open(s, c, now);
			if (c->fd >= 0 && c->kind != SG_IDLE &&
			    now >= c->next_ms)
				siege_send(s, c, now);
			if (c->fd < 0 || c->kind != SG_IDLE)
				wake = c->next_ms < wake ? c->next_ms : wake;
			if (c->fd >= 0) {
				s->pfd[k] = (struct pollfd){c->fd, POLLIN, 0};
				s->pfd_conn[k++] = i;
			}
		}
		now = cm_mono_ms();
		if (poll(s->pfd, (nfds_t)k,
		        wake > now ? (int)(wake - now) : 0) <= 0)
			continue;
		now = cm_mono_ms();
		for (int j = 0; j < k; j++)
			if (s->pfd[j].revents != 0)
				siege_read(s, &s->c[s->pfd_conn[j]], now);
	}
	return NULL;
}

struct tk_siege *
tk_siege_start(const struct tk_proc *p, int n_slow, int n_idle)
{
	struct tk_siege *s = calloc(1, sizeof(*s));
	int64_t now = cm_mono_ms();

	if (s == NULL)
		return NULL;
	s->n = n_slow + n_idle;
	s->c = calloc((size_t)s->n + 1, sizeof(*s->c));
	s->pfd = calloc((size_t)s->n + 1, sizeof(*s->pfd));
	s->pfd_conn = calloc((size_t)s->n + 1, sizeof(*s->pfd_conn));
	if (s->c == NULL || s->pfd == NULL || s->pfd_conn == NULL) {
		tk_siege_stop(s, NULL);
		return NULL;
	}
	s->addr.sin_family = AF_INET;
	s->addr.sin_port = htons((uint16_t)p->http_port);
	s->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int i = 0; i < s->n; i++) {
		s->c[i].fd = -1;
		s->c[i].kind = i >= n_slow ? SG_IDLE
		               : i % 2     ? SG_BODY
		                           : SG_HEAD;
		/* Spread over the first second, as over every one after. */
		s->c[i].next_ms =
		    now +
		    (i < n_slow ? (int64_t)i * SIEGE_BYTE_MS / n_slow : 0);
	}
	if (pthread_create(&s->thread, NULL, siege_main, s) != 0) {
		fprintf(stderr, "siege: cannot start its thread\n");
		free(s->c);
		s->c = NULL;
		tk_siege_stop(s, NULL);
		return NULL;
	}
	return s;
}

int
tk_siege_open(struct tk_siege *s)
{
	return atomic_load(&s->open_now);
}

void
tk_siege_stop(struct tk_siege *s, struct tk_siege_stats *st)
{
	if (s == NULL)
		return;
	if (s->c != NULL && s->pfd != NULL && s->pfd_conn != NULL) {
		atomic_store(&s->stop, true);
		pthread_join(s->thread, NULL);
		for (int i = 0; i < s->n; i++)
			if (s->c[i].fd >= 0)
				close(s->c[i].fd);
	}
	if (st != NULL)
		*st = s->st;
	free(s->c);
	free(s->pfd);
	free(s->pfd_conn);
	free(s);
}

/* Waits for events on fd until deadline_ms; false when it ran out. */
static bool
wait_fd(int fd, short events, int64_t deadline_ms)
{
	for (;;) {
		int64_t left = deadline_ms - cm_mono_ms();
		struct pollfd pfd = {fd, events, 0};
		int n;

		if (left <= 0)
			return false;
		if ((n = poll(&pfd, 1, (int)left)) > 0)
			return true;
		if (n < 0 && errno != EINTR)
			return false;
	}
}

int
tk_http_get_within(const struct tk_proc *p, const char *path, const char *token,
    int timeout_ms, int64_t *ns)
{
	struct sockaddr_in addr = {.sin_family = AF_INET};
	int64_t t0 = cm_mono_ns(), deadline = cm_mono_ms() + timeout_ms;
	char req[4096], buf[SIEGE_ANSWER_MAX + 1];
	size_t got = 0, off = 0, len;
	int fd, status = -1, err = 0;
	socklen_t elen = sizeof(err);

	addr.sin_port = htons((uint16_t)p->http_port);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	len = (size_t)snprintf(req, sizeof(req),
	    "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s%s%sConnection: close\r\n"
	    "\r\n",
	    path, token ? "Authorization: Bearer " : "", token ? token : "",
	    token ? "\r\n" : "");
	if (len >= sizeof(req) || (fd = connect_nb(&addr)) < 0)
		return -1;
	if (!wait_fd(fd, POLLOUT, deadline) ||
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0 || err != 0)
		goto out;
	while (off < len) {
		ssize_t w = send(fd, req + off, len - off, MSG_NOSIGNAL);

		if (w > 0)
			off += (size_t)w;
		else if (w < 0 && errno == EAGAIN &&
		         wait_fd(fd, POLLOUT, deadline))
			continue;
		else
			goto out;
	}
	/* Connection: close: the answer ends where the api closes. */
	for (;;) {
		char sink[512];
		ssize_t n;

		if (!wait_fd(fd, POLLIN, deadline))
			goto out;
		/* Past the first SIEGE_ANSWER_MAX bytes only the end counts. */
		n = got < SIEGE_ANSWER_MAX
		        ? read(fd, buf + got, SIEGE_ANSWER_MAX - got)
		        : read(fd, sink, sizeof(sink));
		if (n == 0)
			break;
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			goto out;
		if (n > 0 && got < SIEGE_ANSWER_MAX)
			got += (size_t)n;
	}
	buf[got] = '\0';
	if (sscanf(buf, "HTTP/1.1 %d ", &status) != 1)
		status = -1;
out:
	close(fd);
	if (ns != NULL)
		*ns = cm_mono_ns() - t0;
	return status;
}
