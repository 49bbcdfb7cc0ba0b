/*
 * cdp_pipe.c: NUL-framed messages over two non-blocking pipes.
 */
#include "cdp_pipe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cdp.h"
#include "limits.h"
#include "log.h"

#define PIPE_READ_CHUNK (64 * 1024)

struct act_pipe {
	int wfd, rfd;
	bool broken;
	char *in;
	size_t in_len, in_cap, in_scanned; /* no NUL in in[0..in_scanned) */
	/* A message over CM_CDP_MSG_MAX is being dropped up to its NUL;
	 * head is its beginning. */
	bool skipping;
	char head[CM_CDP_HEAD_MAX];
	size_t head_len;
	char *out;
	size_t out_off, out_len, out_cap; /* pending: out[out_off..out_len) */
};

static int
pipe_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

struct act_pipe *
act_pipe_new(int wfd, int rfd)
{
	struct act_pipe *p = calloc(1, sizeof(*p));

	if (p == NULL || pipe_nonblock(wfd) != 0 || pipe_nonblock(rfd) != 0) {
		free(p);
		close(wfd);
		close(rfd);
		return NULL;
	}
	p->wfd = wfd;
	p->rfd = rfd;
	return p;
}

void
act_pipe_free(struct act_pipe *p)
{
	if (p == NULL)
		return;
	close(p->wfd);
	close(p->rfd);
	free(p->in);
	free(p->out);
	free(p);
}

bool
act_pipe_broken(const struct act_pipe *p)
{
	return p->broken;
}

/* Writes what waits until the pipe would block.  Returns 0 or -1. */
static int
pipe_flush(struct act_pipe *p)
{
	while (p->out_off < p->out_len) {
		ssize_t n =
		    write(p->wfd, p->out + p->out_off, p->out_len - p->out_off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0) {
			p->broken = true;
			return -1;
		}
		p->out_off += (size_t)n;
	}
	p->out_off = p->out_len = 0;
	return 0;
}

int
act_pipe_send(struct act_pipe *p, const char *msg, size_t len)
{
	size_t need;

	if (p->broken)
		return -1;
	if (p->out_off > 0) { /* keep what waits at the front */
		memmove(p->out, p->out + p->out_off, p->out_len - p->out_off);
		p->out_len -= p->out_off;
		p->out_off = 0;
	}
	need = p->out_len + len + 1;
	if (len > CM_CDP_MSG_MAX || need > CM_CDP_OUTBUF_MAX)
		return -1;
	if (need > p->out_cap) {
		size_t cap = p->out_cap ? p->out_cap : PIPE_READ_CHUNK;
		char *n;

		while (cap < need)
			cap *= 2;
		if ((n = realloc(p->out, cap)) == NULL)
			return -1;
		p->out = n;
		p->out_cap = cap;
	}
	memcpy(p->out + p->out_len, msg, len);
	p->out[p->out_len + len] = '\0';
	p->out_len = need;
	return pipe_flush(p);
}

int
act_pipe_pollfds(const struct act_pipe *p, struct pollfd *fds, int max)
{
	int n = 0;

	if (p->broken)
		return 0;
	if (n < max)
		fds[n++] = (struct pollfd){.fd = p->rfd, .events = POLLIN};
	if (p->out_len > p->out_off && n < max)
		fds[n++] = (struct pollfd){.fd = p->wfd, .events = POLLOUT};
	return n;
}

/*
 * A message over the bound was dropped: its command (if it named one)
 * gets an error reply of ours instead, so that the call fails and the
 * browser stays.
 */
static int
pipe_dropped(struct act_pipe *p, act_pipe_msg_fn fn, void *arg)
{
	char msg[ACT_CDP_TOO_BIG_LEN];
	size_t n = act_cdp_too_big(p->head, p->head_len, msg, sizeof(msg));

	return n > 0 ? fn(arg, msg, n) : 0;
}

/* Hands every whole message in the buffer to fn.  Returns 0 or -1. */
static int
pipe_dispatch(struct act_pipe *p, act_pipe_msg_fn fn, void *arg)
{
	size_t start = 0;
	char *nul;

	while ((nul = memchr(p->in + p->in_scanned, '\0',
	            p->in_len - p->in_scanned)) != NULL) {
		size_t end = (size_t)(nul - p->in);

		p->in_scanned = end + 1;
		if (p->skipping) {
			p->skipping = false;
			if (pipe_dropped(p, fn, arg) != 0)
				return -1;
		} else if (fn(arg, p->in + start, end - start) != 0)
			return -1;
		start = end + 1;
	}
	p->in_scanned = p->in_len;
	if (p->skipping)
		start = p->in_len; /* more of the message being dropped */
	if (start > 0) {
		memmove(p->in, p->in + start, p->in_len - start);
		p->in_len -= start;
		p->in_scanned -= start;
	}
	/* A message, less its NUL, may be CM_CDP_MSG_MAX bytes long; the
	 * rest of a longer one is read and dropped. */
	if (p->in_len > CM_CDP_MSG_MAX) {
		p->skipping = true;
		p->head_len =
		    p->in_len < sizeof(p->head) ? p->in_len : sizeof(p->head);
		memcpy(p->head, p->in, p->head_len);
		p->in_len = p->in_scanned = 0;
	}
	return 0;
}

static int
pipe_read(struct act_pipe *p, act_pipe_msg_fn fn, void *arg)
{
	for (;;) {
		ssize_t n;

		if (p->in_cap - p->in_len < PIPE_READ_CHUNK) {
			size_t cap =
			    p->in_cap ? p->in_cap * 2 : 2 * PIPE_READ_CHUNK;
			char *m;

			if (cap > CM_CDP_MSG_MAX + 2 * PIPE_READ_CHUNK)
				cap = CM_CDP_MSG_MAX + 2 * PIPE_READ_CHUNK;
			if (cap <= p->in_cap ||
			    (m = realloc(p->in, cap)) == NULL)
				return -1;
			p->in = m;
			p->in_cap = cap;
		}
		n = read(p->rfd, p->in + p->in_len, PIPE_READ_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return -1; /* end of file: the browser is gone */
		p->in_len += (size_t)n;
		if (pipe_dispatch(p, fn, arg) != 0)
			return -1;
	}
}

int
act_pipe_step(struct act_pipe *p, const struct pollfd *fds, int nfds,
    act_pipe_msg_fn fn, void *arg)
{
	if (p->broken)
		return -1;
	for (int i = 0; i < nfds; i++) {
		if (fds[i].fd == p->rfd && fds[i].revents != 0 &&
		    pipe_read(p, fn, arg) != 0) {
			p->broken = true;
			return -1;
		}
		if (fds[i].fd == p->wfd && fds[i].revents != 0 &&
		    pipe_flush(p) != 0)
			return -1;
	}
	return 0;
}
