/*
 * keys.c: the named keys, and the one-character keys, of keys.h.
 */
#include "keys.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	int vk;
	const char *text;
} named[] = {
    {"Enter", 13, "\r"},
    {"Tab", 9, ""},
    {"Escape", 27, ""},
    {"Backspace", 8, ""},
    {"Delete", 46, ""},
    {"ArrowUp", 38, ""},
    {"ArrowDown", 40, ""},
    {"ArrowLeft", 37, ""},
    {"ArrowRight", 39, ""},
    {"Home", 36, ""},
    {"End", 35, ""},
    {"PageUp", 33, ""},
    {"PageDown", 34, ""},
    {"F1", 112, ""},
    {"F2", 113, ""},
    {"F3", 114, ""},
    {"F4", 115, ""},
    {"F5", 116, ""},
    {"F6", 117, ""},
    {"F7", 118, ""},
    {"F8", 119, ""},
    {"F9", 120, ""},
    {"F10", 121, ""},
    {"F11", 122, ""},
    {"F12", 123, ""},
};

/*
 * The length of the one UTF-8 sequence s holds, when it holds exactly one
 * code point that prints (not C0, DEL or C1), else 0.  Overlong forms,
 * surrogates and code points past U+10FFFF are not UTF-8.
 */
static size_t
one_printable(const unsigned char *s)
{
	size_t n = s[0] < 0x80             ? 1
	           : (s[0] & 0xe0) == 0xc0 ? 2
	           : (s[0] & 0xf0) == 0xe0 ? 3
	           : (s[0] & 0xf8) == 0xf0 ? 4
	                                   : 0;
	unsigned long cp;

	if (n == 0)
		return 0;
	cp = n == 1 ? s[0] : s[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (s[n] != '\0')
		return 0;
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
		return 0;
	return n;
}

int
cm_key_find(const char *name, struct cm_key *k)
{
	size_t n;
	char c;

	memset(k, 0, sizeof(*k));
	if (strcmp(name, " ") == 0) {
		snprintf(k->code, sizeof(k->code), "Space");
		k->vk = 32;
		snprintf(k->text, sizeof(k->text), " ");
		return 0;
	}
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (strcmp(named[i].name, name) == 0) {
			snprintf(k->code, sizeof(k->code), "%s", name);
			k->vk = named[i].vk;
			snprintf(k->text, sizeof(k->text), "%s", named[i].text);
			return 0;
		}
	if ((n = one_printable((const unsigned char *)name)) == 0)
		return -1;
	memcpy(k->text, name, n);
	/* Letters and digits have a key of their own on every keyboard, and
	 * pages read their key codes (a shortcut's Control+a). */
	c = name[0];
	if (n == 1 && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
		snprintf(k->code, sizeof(k->code), "Key%c", c & ~0x20);
		k->vk = c & ~0x20;
	} else if (n == 1 && c >= '0' && c <= '9') {
		snprintf(k->code, sizeof(k->code), "Digit%c", c);
		k->vk = c;
	}
	return 0;
}
