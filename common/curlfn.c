/*
 * curlfn.c: libcurl through dlopen (see curlfn.h).
 */
#include "curlfn.h"

#include <dlfcn.h>

#include "log.h"

struct cm_curlfn cm_curl;

int
cm_curl_load(void)
{
	static int state; /* 0 not tried, 1 loaded, -1 failed */
	void *lib;

	if (state != 0)
		return state > 0 ? 0 : -1;
	state = -1;
	if ((lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL)) == NULL) {
		cm_warnx("curl: libcurl.so.4 cannot be loaded");
		return -1;
	}
	/* POSIX: a function pointer may be read from dlsym's object. */
#define CM_CURL_SYM(r, n, a)                                           \
	if ((*(void **)&cm_curl.n = dlsym(lib, "curl_" #n)) == NULL) { \
		cm_warnx("curl: no curl_" #n " in libcurl.so.4");      \
		return -1;                                             \
	}
	CM_CURL_FNS(CM_CURL_SYM)
#undef CM_CURL_SYM
	state = 1;
	return 0;
}
