/*
 * pages.c: the page server of browser tests.
 */
#include "pages.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PAGES_SET_COOKIE 1
#define PAGES_SAYS_COOKIE 2
#define PAGES_COOKIE "spaced_test=1"

/*
 * The site.  A body or a redirect may name the server's own port as %d:
 * "localhost" and "127.0.0.1" reach the same server under two hosts, so a
 * test can allow one and refuse the other.
 */
static const struct {
	const char *path;
	const char *body;
	const char *location; /* a 302 to here, when not NULL */
	/* PAGES_SET_COOKIE: the answer sets one; PAGES_SAYS_COOKIE: body is
	 * the other page's when the request carried it. */
	int cookie;
	const char *body_with_cookie;
} site[] = {
    {"/",
        "<!doctype html><html><head><title>Home</title></head><body>"
        "<h1>Welcome</h1><p>The spaced test site.</p>"
        "<a href=\"/next\">Next page</a>"
        "<form action=\"/search\"><input name=\"q\" aria-label=\"Query\">"
        "<button type=\"submit\">Search</button></form></body></html>",
        NULL, 0, NULL},
    {"/next",
        "<!doctype html><html><head><title>Next</title></head><body>"
        "<h1>Second page</h1><p>You followed the link.</p>"
        "</body></html>",
        NULL, 0, NULL},
    {"/search",
        "<!doctype html><html><head><title>Results</title></head><body>"
        "<h1>Results</h1><p>You searched the site.</p></body></html>",
        NULL, 0, NULL},
    {"/redirect", "", "http://localhost:%d/next", 0, NULL},
    {"/sub",
        "<!doctype html><html><head><title>Sub</title></head><body>"
        "<h1>With a picture</h1>"
        "<img alt=\"pixel\" src=\"http://localhost:%d/pixel\">"
        "</body></html>",
        NULL, 0, NULL},
    {"/pixel", "not really a picture", NULL, 0, NULL},
    {"/setcookie",
        "<!doctype html><html><head><title>Cookie</title></head><body>"
        "<h1>Cookie set</h1></body></html>",
        NULL, PAGES_SET_COOKIE, NULL},
    {"/cookie",
        "<!doctype html><html><head><title>Cookie</title></head><body>"
        "<h1>No cookie</h1></body></html>",
        NULL, PAGES_SAYS_COOKIE,
        "<!doctype html><html><head><title>Cookie</title></head><body>"
        "<h1>Has cookie</h1></body></html>"},
};

#define SITE_PAGES (sizeof(site) / sizeof(site[0]))

struct tk_pages {
	int fd;
	int port;
	int stop[2];
	pthread_t thread;
	atomic_int hits[SITE_PAGES];
};

/* Copies tmpl into out with its one "%d", if any, made the port. */
static void
pages_fill(char *out, size_t len, const char *tmpl, int port)
{
	const char *at = strstr(tmpl, "%d");

	if (at == NULL)
		snprintf(out, len, "%s", tmpl);
	else
		snprintf(
		    out, len, "%.*s%d%s", (int)(at - tmpl), tmpl, port, at + 2);
}

static void
pages_serve(struct tk_pages *s, int c)
{
	char req[4096], head[512], path[1024], where[256], text[2048];
	size_t len = 0;
	const char *body = NULL, *location = NULL, *set_cookie = "";
	int status = 404;
	ssize_t n;

	/* The request head; a browser sends it in one piece. */
	while (len < sizeof(req) - 1) {
		struct pollfd p = {.fd = c, .events = POLLIN};

		if (poll(&p, 1, 5000) <= 0 ||
		    (n = read(c, req + len, sizeof(req) - 1 - len)) <= 0)
			return;
		len += (size_t)n;
		req[len] = '\0';
		if (strstr(req, "\r\n\r\n") != NULL)
			break;
	}
	if (sscanf(req, "GET %1023s ", path) != 1)
		return;
	path[strcspn(path, "?")] = '\0';
	for (size_t i = 0; i < SITE_PAGES; i++)
		if (strcmp(site[i].path, path) == 0) {
			body = site[i].body;
			location = site[i].location;
			if (site[i].cookie == PAGES_SET_COOKIE)
				set_cookie =
				    "Set-Cookie: " PAGES_COOKIE "; Path=/\r\n";
			if (site[i].cookie == PAGES_SAYS_COOKIE &&
			    strstr(req, PAGES_COOKIE) != NULL)
				body = site[i].body_with_cookie;
			status = 200;
			atomic_fetch_add(&s->hits[i], 1);
		}
	if (body == NULL)
		body = "<!doctype html><title>Not found</title>";
	if (location != NULL) {
		status = 302;
		pages_fill(where, sizeof(where), location, s->port);
	}
	pages_fill(text, sizeof(text), body, s->port);
	n = snprintf(head, sizeof(head),
	    "HTTP/1.1 %d %s\r\nContent-Type: text/html; charset=utf-8\r\n"
	    "Content-Length: %zu\r\n%s%s%s%sConnection: close\r\n\r\n",
	    status,
	    status == 200   ? "OK"
	    : status == 302 ? "Found"
	                    : "Not Found",
	    strlen(text), location ? "Location: " : "", location ? where : "",
	    location ? "\r\n" : "", set_cookie);
	if (write(c, head, (size_t)n) == n)
		(void)!write(c, text, strlen(text));
}

static void *
pages_run(void *arg)
{
	struct tk_pages *s = arg;

	for (;;) {
		struct pollfd p[2] = {{.fd = s->fd, .events = POLLIN},
		    {.fd = s->stop[0], .events = POLLIN}};
		int c;

		if (poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents)
			return NULL;
		if ((c = accept(s->fd, NULL, NULL)) < 0)
			continue;
		pages_serve(s, c);
		close(c);
	}
}

struct tk_pages *
tk_pages_start(int *port)
{
	struct tk_pages *s = calloc(1, sizeof(*s));
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t alen = sizeof(a);
	int one = 1;

	if (s == NULL)
		return NULL;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) !=
	        0 ||
	    bind(s->fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(s->fd, 64) != 0 ||
	    getsockname(s->fd, (struct sockaddr *)&a, &alen) != 0 ||
	    (s->port = ntohs(a.sin_port)) == 0 || pipe(s->stop) != 0 ||
	    pthread_create(&s->thread, NULL, pages_run, s) != 0) {
		if (s->fd >= 0)
			close(s->fd);
		free(s);
		return NULL;
	}
	*port = s->port;
	return s;
}

void
tk_pages_stop(struct tk_pages *s)
{
	if (s == NULL)
		return;
	(void)!write(s->stop[1], "x", 1);
	pthread_join(s->thread, NULL);
	close(s->fd);
	close(s->stop[0]);
	close(s->stop[1]);
	free(s);
}

int
tk_pages_hits(struct tk_pages *s, const char *path)
{
	for (size_t i = 0; i < SITE_PAGES; i++)
		if (strcmp(site[i].path, path) == 0)
			return atomic_load(&s->hits[i]);
	return -1;
}
