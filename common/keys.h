/*
 * keys.h: the keys a press may name, for the bundle's "key" format
 * (capability_schema.c) and for the key events the actor sends
 * (space-actor/page_input.c): one table, so what the schema accepts is
 * what the actor can press.
 *
 * A key is a named key (Enter, Tab, Escape, Backspace, Delete, the
 * arrows, Home, End, PageUp, PageDown, F1 to F12, and " ") or one
 * printable Unicode character (one code point of valid UTF-8, not a
 * control character).
 */
#ifndef CM_KEYS_H
#define CM_KEYS_H

#include <stdbool.h>

/* A key as a browser's key events describe it. */
struct cm_key {
	char code[16]; /* the physical key ("KeyA", "Enter"); "" when none */
	int vk;        /* Windows virtual key code; 0 when none */
	char text[8];  /* what it types ("" for none), NUL-terminated */
};

/* Fills *k for name and returns 0, or returns -1 when name is no key. */
int cm_key_find(const char *name, struct cm_key *k);

#endif
