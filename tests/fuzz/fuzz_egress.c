/*
 * fuzz_egress.c: libFuzzer target for the egress proxy's request-head
 * parser (space-actor/egress.h), which reads bytes from whatever connects
 * to the proxy.
 *
 * Whatever it accepts must hold together: the head ends within the input
 * and the bound, a forwarded head fits its buffer and ends in the one
 * empty line, the host is a string that fits and a port is never 0.
 * Anything else aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char out[CM_EGRESS_BUF];
	struct act_egress_head h;
	int st = act_egress_parse_head((const char *)data, size,
	    "Basic c3BhY2VkOnNlY3JldA==", &h, out, sizeof(out));

	if (st != 0 && st != 200 && st != 400 && st != 431 && st != 501)
		abort();
	if (st != 200)
		return 0;
	if (h.head_len > size || h.head_len > CM_EGRESS_HEAD_MAX ||
	    memchr(h.host, '\0', sizeof(h.host)) == NULL || h.host[0] == '\0')
		abort();
	if (h.connect ? h.out_len != 0 || h.port == 0
	              : h.out_len > sizeof(out) || h.out_len < 4 ||
	                    memcmp(out + h.out_len - 4, "\r\n\r\n", 4) != 0 ||
	                    memmem(out, h.out_len - 2, "\r\n\r\n", 4) != NULL)
		abort();
	return 0;
}
