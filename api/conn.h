/*
 * conn.h: one client connection's state machine (api/conn.c, which
 * reads requests with api/conn_read.c), driven by the connection loop
 * (api/http.c).  Loop thread only; what events.c, wait.c and the loop
 * may do with a connection from outside is in http.h.
 */
#ifndef API_CONN_H
#define API_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "http.h"

/* The epoll set connections add themselves to. */
void api_conns_init(int ep);
/*
 * Takes fd, just accepted (non-blocking).  Under cap open connections it
 * starts reading a request; past it, it is answered 503 and closed, or
 * closed at once when CM_HTTP_REFUSING_MAX are being answered so.
 */
void api_conn_accept(int fd, size_t cap, int64_t now);
/* epoll reported events on c (its data.ptr). */
void api_conn_event(struct api_conn *c, uint32_t events, int64_t now);
/* A job of j->conn came back from a worker: answer, park or stream, or
 * drop it when the connection has closed meanwhile.  Takes j. */
void api_conn_job_done(struct api_job *j, int64_t now);
/* Closes connections whose deadline has passed (a 408 for a request
 * that was under way), or whose client took no output for
 * CM_HTTP_WRITE_TIMEOUT_MS. */
void api_conns_sweep(int64_t now);
/* Frees the closed connections no worker holds a job of any more. */
void api_conns_bury(void);
void api_conns_close_all(void);

#endif
