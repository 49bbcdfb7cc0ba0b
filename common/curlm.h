/*
 * curlm.h: libcurl transfers driven from a poll() loop, never blocking.
 *
 * One curl multi handle whose sockets and timer live in an epoll set of
 * their own: the loop polls one fd (cm_curlm_fd, readable when a socket
 * or curl's timer wants a turn) and calls cm_curlm_step, which runs what
 * is ready without waiting.  Used by the cdp transport (discovery and
 * the CONNECT_ONLY connection, space-actor/cdp_ws.c) and by the
 * supervisor's probe of cdp instances (supervisor/probe.c).
 *
 * Errors from curl name the URL or host they were about, and those are
 * secrets here: callers report curl_easy_strerror codes, never a
 * CURLOPT_ERRORBUFFER.  Single-threaded.
 */
#ifndef CM_CURLM_H
#define CM_CURLM_H

#include <curl/curl.h>

struct cm_curlm;

/* Returns 0 with *out set, or -1 (memory, fds, or curl failed). */
int cm_curlm_new(struct cm_curlm **out);

/* Frees the multi handle and its fds; the caller removes and cleans up
 * its easy handles first.  NULL is accepted. */
void cm_curlm_free(struct cm_curlm *m);

/* The one fd the loop polls for POLLIN. */
int cm_curlm_fd(const struct cm_curlm *m);

/* Adds or removes an easy handle (the caller keeps owning it).  Add
 * returns 0 or -1. */
int cm_curlm_add(struct cm_curlm *m, CURL *e);
void cm_curlm_remove(struct cm_curlm *m, CURL *e);

/* Runs every socket and timer that is ready, without waiting. */
void cm_curlm_step(struct cm_curlm *m);

/* The next transfer that has finished, with its result in *rc, or NULL
 * when none has.  The handle stays added until cm_curlm_remove. */
CURL *cm_curlm_done(struct cm_curlm *m, CURLcode *rc);

#endif
