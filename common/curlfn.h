/*
 * curlfn.h: libcurl, loaded when first needed.
 *
 * Every actor is the same binary, and linking libcurl into it brought
 * some 30 more shared libraries (41 instead of 12) to every exec, remote
 * driver or not.  Measured once, on this machine under a load average
 * above 50: a spaced-actor exec that stops at its flags took 255 ms
 * against spaced-api's 129 ms (50 execs each), and test_many_spaces saw
 * 1,445 and 809 of its 1,500 actors within its bound in two runs.  So the
 * few curl functions spaced uses are looked up with dlopen, once, by the
 * first caller that needs them (a cdp driver, the probe, a cdp
 * registration).  Single-threaded per process.
 */
#ifndef CM_CURLFN_H
#define CM_CURLFN_H

#include <curl/curl.h>

/* X(return type, name without curl_, parameters) */
#define CM_CURL_FNS(X)                                                      \
	X(CURL *, easy_init, (void))                                        \
	X(CURLcode, easy_setopt, (CURL *, CURLoption, ...))                 \
	X(CURLcode, easy_getinfo, (CURL *, CURLINFO, ...))                  \
	X(void, easy_cleanup, (CURL *))                                     \
	X(CURLcode, easy_send, (CURL *, const void *, size_t, size_t *))    \
	X(CURLcode, easy_recv, (CURL *, void *, size_t, size_t *))          \
	X(void, free, (void *))                                             \
	X(CURLM *, multi_init, (void))                                      \
	X(CURLMcode, multi_setopt, (CURLM *, CURLMoption, ...))             \
	X(CURLMcode, multi_cleanup, (CURLM *))                              \
	X(CURLMcode, multi_add_handle, (CURLM *, CURL *))                   \
	X(CURLMcode, multi_remove_handle, (CURLM *, CURL *))                \
	X(CURLMcode, multi_socket_action,                                   \
	    (CURLM *, curl_socket_t, int, int *))                           \
	X(CURLMsg *, multi_info_read, (CURLM *, int *))                     \
	X(CURLU *, url, (void))                                             \
	X(void, url_cleanup, (CURLU *))                                     \
	X(CURLUcode, url_set, (CURLU *, CURLUPart, const char *, unsigned)) \
	X(CURLUcode, url_get, (const CURLU *, CURLUPart, char **, unsigned))

struct cm_curlfn {
#define CM_CURL_PTR(r, n, a) r(*n) a;
	CM_CURL_FNS(CM_CURL_PTR)
#undef CM_CURL_PTR
};

/* The functions, valid once cm_curl_load has returned 0. */
extern struct cm_curlfn cm_curl;

/* Loads libcurl on the first call.  Returns 0, or -1 when it cannot be
 * loaded (then every later call returns -1 too). */
int cm_curl_load(void);

#endif
