/*
 * pages.h: a page server for browser tests, on 127.0.0.1 and a port of
 * the test's own.  It serves a fixed site from a table (pages.c): a home
 * page with a heading, a link and a search form, the page the link leads
 * to, the search results (which echo nothing of the query), /redirect
 * (a 302 to /next on host "localhost"), /sub (an image from "localhost"),
 * /cookie (the cookies and the local storage the browser keeps for the
 * site; with ?set=NAME it keeps one more of each), /links?n=N (N links
 * "Link K" to /next?i=K), /nodes?n=N (N elements of every-day kinds, in
 * sections of ten), /quiet?n=N (N elements that print nothing, then a
 * link "End"), /tamper (whose scripts replace the built-ins a
 * script reading it would use), /ticker (a counter that changes every
 * 30 ms), /noise (a tall canvas
 * of random pixels, whose full-page screenshot is too big to keep),
 * /stuck (whose main thread, once the test opens its gate, blocks in a
 * synchronous request to /hang, which is never answered: its connection
 * is held until the server stops), /banner (a Buy button under a fixed
 * cookie banner, a disabled button and a hidden one), /controls (fields
 * that take typed text and fields that take none), /login (a sign-in
 * form with a password field, leading to /next), /spa (a link that
 * moves within the document by history.pushState), /pending (a picture
 * from /hang: the page parses and never loads), /leave (a beforeunload
 * handler, once its button is clicked), /file (an attachment, to
 * download) and /files (a link to it), /order (a title that repeats
 * words of its body), /later (a text that comes 300 ms after a click,
 * and a navigation 200 ms after another), /popup (a link to a new tab
 * and a window.open), /alert and /prompt (dialogs as they load),
 * /state (controls in every state, some set by script), /clickables
 * (elements clickable without a role), /article (a paragraph longer
 * than a snapshot's name), /form2 (a field of every kind fill sets),
 * /select (a select of one and a multiple one), /checks (checkboxes,
 * radio buttons, a switch), /menu (menus that open on hover), /drag
 * (HTML5 draggables and a drop zone), /slider (a knob that follows the
 * pressed mouse), /keys (a field, a paragraph, a button and a link,
 * logging keys and clicks), each logging what it received into its own
 * DOM, /confirm (a confirm and a prompt behind buttons, whose answers it
 * shows in #out); frames: /framed (a frame of the same origin, /inner: a button
 * "Press me" that says "Pressed" once clicked, and a link away), /oopif (/inner
 * from "localhost", another site), /leaky (a "localhost" frame, /leak,
 * that asks "sub.localhost" for /tracker, then titles the top page
 * "Done"), /frames?n=N (N frames of /inner) and /xlogin?n=PORT (/login
 * in a frame from 127.0.0.1:PORT, another page server); tabs: /opens (a
 * link to /leaks in a new tab, and a window.open straight at
 * "sub.localhost"'s /tracker) and /leaks (a picture from "sub.localhost"'s
 * /tracker, and a button "Press" that titles it "Pressed"), and 404
 * for anything else: a test that allows only 127.0.0.1 sees what its
 * browser lets through.  One thread, one request per connection.
 */
#ifndef TK_PAGES_H
#define TK_PAGES_H

#include <stddef.h>

struct tk_pages;

/* Starts the server; NULL on failure.  *port gets its port. */
struct tk_pages *tk_pages_start(int *port);

/* Stops the server and frees it.  NULL is accepted. */
void tk_pages_stop(struct tk_pages *s);

/* Requests served so far for path (the part before any '?'). */
int tk_pages_hits(struct tk_pages *s, const char *path);

/* Lets every /stuck page block from now on. */
void tk_pages_open_gate(struct tk_pages *s);

/*
 * Files: /bigfile is an attachment (big.zip) of 5 MiB; /upload is a form
 * of two file inputs (#one; #many, multiple) and a text field (#text),
 * which posts multipart/form-data to /upload, answered with a page
 * titled "Uploaded"; each input and change event of a file input is
 * appended to the form's #log as "<id>:<type> ".  The last upload's first
 * file part that holds a file (at most 1 MiB in all) is kept: *bytes gets
 * a copy (malloc'd, NUL-terminated, the caller frees; NULL for none) and
 * *len its length, name (nlen bytes) its file name.  Returns how many
 * uploads were taken so far.
 */
int tk_pages_last_upload(
    struct tk_pages *s, char **bytes, size_t *len, char *name, size_t nlen);
/* The file names of every file part of the last upload that holds a file,
 * in order, comma-separated, into names (len bytes; "" for none). */
void tk_pages_upload_names(struct tk_pages *s, char *names, size_t len);

#endif
