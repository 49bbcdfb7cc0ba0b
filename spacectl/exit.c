/*
 * exit.c: the message that goes with an exit code other than the api's
 * (ctl.h has the table): a usage error, or a failure of spacectl itself.
 * Every command and helper reports through it, so that a code always
 * means the same thing.
 */
#include <stdarg.h>
#include <stdio.h>

#include "ctl.h"

int
ctl_fail(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("spacectl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}
