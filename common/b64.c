/*
 * b64.c: base64 through OpenSSL's block coder, and a JPEG's size from
 * its start-of-frame segment.
 */
#include "b64.h"

#include <openssl/evp.h>
#include <stdlib.h>

int
cm_b64_decode(
    const char *in, size_t n, size_t max, unsigned char **out, size_t *out_len)
{
	unsigned char *buf;
	size_t pad = 0;
	int got;

	/* EVP_DecodeBlock decodes whole groups of four and counts each '='
	 * of the last group as a zero byte: the padding comes off here. */
	if (n == 0 || n % 4 != 0 || n > CM_B64_LEN(max) || n > INT32_MAX)
		return -1;
	if ((buf = malloc(n / 4 * 3)) == NULL)
		return -1;
	got = EVP_DecodeBlock(buf, (const unsigned char *)in, (int)n);
	if (got < 0 || (size_t)got != n / 4 * 3) {
		free(buf);
		return -1;
	}
	if (in[n - 1] == '=')
		pad++;
	if (in[n - 2] == '=')
		pad++;
	if ((size_t)got - pad > max) {
		free(buf);
		return -1;
	}
	*out = buf;
	*out_len = (size_t)got - pad;
	return 0;
}

size_t
cm_b64_encode(const unsigned char *in, size_t n, char *out)
{
	return (size_t)EVP_EncodeBlock((unsigned char *)out, in, (int)n);
}

static unsigned
be16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

bool
cm_jpeg_size(
    const unsigned char *p, size_t n, unsigned *width, unsigned *height)
{
	size_t i = 2;

	if (n < 4 || p[0] != 0xff || p[1] != 0xd8 || p[n - 2] != 0xff ||
	    p[n - 1] != 0xd9)
		return false;
	/* Segments after SOI: 0xff, a marker, a length that counts itself. */
	while (i + 4 <= n && p[i] == 0xff) {
		unsigned char m = p[i + 1];
		size_t len = be16(p + i + 2);

		if (m == 0xda || len < 2) /* the scan: no size before it */
			return false;
		/* SOFn, but DHT, JPG and DAC, which share the range. */
		if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 &&
		    m != 0xcc) {
			if (len < 7 || i + 2 + len > n)
				return false;
			*height = be16(p + i + 5);
			*width = be16(p + i + 7);
			return *width > 0 && *height > 0;
		}
		i += 2 + len;
	}
	return false;
}
