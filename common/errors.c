#include "errors.h"

#include <string.h>

static const struct {
	const char *code;
	int http;
	bool retryable;
} cm_err_table[CM_ERR__COUNT] = {
#define CM_ERR_ROW(e, s, h, r) [e] = {s, h, r},
    CM_ERRORS(CM_ERR_ROW)
#undef CM_ERR_ROW
};

const char *
cm_err_code(enum cm_err e)
{
	if ((unsigned)e >= CM_ERR__COUNT)
		return "internal";
	return cm_err_table[e].code;
}

int
cm_err_http(enum cm_err e)
{
	if ((unsigned)e >= CM_ERR__COUNT)
		return 500;
	return cm_err_table[e].http;
}

bool
cm_err_retryable(enum cm_err e)
{
	if ((unsigned)e >= CM_ERR__COUNT)
		return true;
	return cm_err_table[e].retryable;
}

enum cm_err
cm_err_from_code(const char *s)
{
	if (s == NULL)
		return CM_ERR__COUNT;
	for (int i = 0; i < CM_ERR__COUNT; i++)
		if (strcmp(cm_err_table[i].code, s) == 0)
			return (enum cm_err)i;
	return CM_ERR__COUNT;
}
