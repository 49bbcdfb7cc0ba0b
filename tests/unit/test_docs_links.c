/*
 * The links of README.md and of the .md pages in docs/: every relative link
 * opens a file of the source tree, every #fragment names a heading of the page
 * it points into, and no page cites a document outside the repository.
 *
 * A link is a Markdown [text](target) or a reference definition
 * "[label]: target", outside fenced code blocks and code spans.  Targets
 * with a scheme (http:, https:, mailto:) are not the tree's; a target is
 * resolved against its page's directory, and must stay inside the tree.
 * Fragments are matched against GitHub's heading anchors: the heading
 * lowercased, spaces become '-', every character but letters, digits,
 * '-' and '_' dropped, a repeated anchor suffixed -1, -2, ...
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DOCS_DIR SPACED_SOURCE_DIR "/docs"
#define PAGES_MAX 32
#define LINKS_MAX 512
#define ANCHORS_MAX 256
#define TARGET_MAX 512
#define ANCHOR_MAX 160
#define TEXT_MAX (1024 * 1024)

struct page {
	char path[PATH_MAX]; /* absolute */
	char *text;          /* the file, with code blanked out */
	char *raw;           /* the file as it is */
	char anchors[ANCHORS_MAX][ANCHOR_MAX];
	size_t n_anchors;
};

struct link {
	const struct page *page;
	int line;
	char target[TARGET_MAX];
};

static struct page pages[PAGES_MAX];
static size_t n_pages;
static struct link links[LINKS_MAX];
static size_t n_links;

/* The whole file, NUL-terminated; fails the test when it cannot be read. */
static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	cr_assert_not_null(f, "cannot read %s", path);
	cr_assert_not_null(buf = malloc(TEXT_MAX + 1));
	n = fread(buf, 1, TEXT_MAX, f);
	cr_assert(feof(f), "%s is over %d bytes", path, TEXT_MAX);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/*
 * Blanks fenced code blocks (their fence lines too) and code spans in
 * place, newlines kept so that line numbers hold.  A span ends at its
 * closing backtick or at the end of its paragraph (a blank line).
 */
static void
blank_code(char *s)
{
	bool fence = false, span = false;

	for (char *l = s; *l != '\0';) {
		char *end = strchr(l, '\n');
		size_t n = end != NULL ? (size_t)(end - l) : strlen(l);
		bool fence_line = strncmp(l, "```", 3) == 0;

		if (fence_line)
			fence = !fence;
		if (n == 0 || fence_line)
			span = false;
		for (char *p = l; p < l + n; p++) {
			if (fence || fence_line) {
				*p = ' ';
			} else if (*p == '`') {
				span = !span;
				*p = ' ';
			} else if (span) {
				*p = ' ';
			}
		}
		l = end != NULL ? end + 1 : l + n;
	}
}

/* GitHub's anchor of a heading's text (len bytes at h) into out. */
static void
slug(const char *h, size_t len, char *out, size_t outlen)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 1 < outlen; i++) {
		unsigned char c = (unsigned char)h[i];

		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_')
			out[o++] = (char)c;
		else if (c >= 'A' && c <= 'Z')
			out[o++] = (char)(c - 'A' + 'a');
		else if (c == ' ')
			out[o++] = '-';
	}
	out[o] = '\0';
}

static bool
has_anchor(const struct page *pg, const char *a)
{
	for (size_t i = 0; i < pg->n_anchors; i++)
		if (strcmp(pg->anchors[i], a) == 0)
			return true;
	return false;
}

/*
 * The anchors of pg's headings, from the raw text: code spans count in
 * a heading (their backticks are dropped), fenced blocks hold none.
 */
static void
collect_anchors(struct page *pg)
{
	bool fence = false;

	for (const char *l = pg->raw; *l != '\0';) {
		const char *end = strchr(l, '\n');
		size_t n = end != NULL ? (size_t)(end - l) : strlen(l);

		if (strncmp(l, "```", 3) == 0)
			fence = !fence;
		else if (!fence && n > 1 && l[0] == '#') {
			const char *h = l;
			char a[ANCHOR_MAX - 16], b[ANCHOR_MAX];

			while (h < l + n && *h == '#')
				h++;
			while (h < l + n && *h == ' ')
				h++;
			slug(h, (size_t)(l + n - h), a, sizeof(a));
			snprintf(b, sizeof(b), "%s", a);
			for (int k = 1; has_anchor(pg, b); k++)
				snprintf(b, sizeof(b), "%s-%d", a, k);
			cr_assert_lt(pg->n_anchors, ANCHORS_MAX);
			snprintf(
			    pg->anchors[pg->n_anchors++], ANCHOR_MAX, "%s", b);
		}
		l = end != NULL ? end + 1 : l + n;
	}
}

static void
add_link(const struct page *pg, int line, const char *t, size_t len)
{
	cr_assert_lt(n_links, LINKS_MAX);
	cr_assert_lt(len, TARGET_MAX, "%s:%d: a link target of %zu bytes",
	    pg->path, line, len);
	links[n_links].page = pg;
	links[n_links].line = line;
	snprintf(links[n_links].target, TARGET_MAX, "%.*s", (int)len, t);
	n_links++;
}

/* Every [text](target) and "[label]: target" of pg's blanked text. */
static void
collect_links(const struct page *pg)
{
	int line = 1;

	for (const char *p = pg->text; *p != '\0'; p++) {
		const char *t = NULL;

		if (*p == '\n') {
			line++;
			if (p[1] == '[') {
				const char *c = strstr(p + 1, "]: ");
				const char *nl = strchr(p + 1, '\n');

				if (c != NULL && (nl == NULL || c < nl))
					t = c + 3;
			}
		} else if (p[0] == ']' && p[1] == '(') {
			t = p + 2;
		}
		if (t == NULL)
			continue;
		while (*t == ' ' || *t == '<')
			t++;
		add_link(pg, line, t, strcspn(t, " )>\n"));
	}
}

static void
add_page(const char *path)
{
	struct page *pg;

	cr_assert_lt(n_pages, PAGES_MAX);
	pg = &pages[n_pages++];
	cr_assert_not_null(realpath(path, pg->path), "no %s", path);
	pg->raw = slurp(pg->path);
	pg->text = strdup(pg->raw);
	cr_assert_not_null(pg->text);
	blank_code(pg->text);
	pg->n_anchors = 0;
	collect_anchors(pg);
	collect_links(pg);
}

/* README.md and every .md page of docs/, read once. */
static void
load_pages(void)
{
	DIR *d;
	struct dirent *e;

	n_pages = n_links = 0;
	add_page(SPACED_SOURCE_DIR "/README.md");
	cr_assert_not_null(d = opendir(DOCS_DIR), "no %s", DOCS_DIR);
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		char path[PATH_MAX];

		if (n < 4 || strcmp(e->d_name + n - 3, ".md") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", DOCS_DIR, e->d_name);
		add_page(path);
	}
	closedir(d);
	cr_assert_geq(n_pages, 2, "docs/ holds no page");
}

static void
free_pages(void)
{
	for (size_t i = 0; i < n_pages; i++) {
		free(pages[i].raw);
		free(pages[i].text);
	}
	n_pages = n_links = 0;
}

TestSuite(docs, .init = load_pages, .fini = free_pages);

static bool
external(const char *t)
{
	return strncmp(t, "http://", 7) == 0 ||
	       strncmp(t, "https://", 8) == 0 || strncmp(t, "mailto:", 7) == 0;
}

/* The page a link's path part opens (absolute, resolved) into out; false
 * when it opens nothing inside the tree. */
static bool
resolve(const struct link *l, char *out)
{
	char dir[PATH_MAX], joined[PATH_MAX * 2], root[PATH_MAX];
	size_t plen = strcspn(l->target, "#");
	char *slash;

	snprintf(dir, sizeof(dir), "%s", l->page->path);
	if ((slash = strrchr(dir, '/')) != NULL)
		*slash = '\0';
	snprintf(joined, sizeof(joined), "%s/%.*s", dir, (int)plen, l->target);
	cr_assert_not_null(realpath(SPACED_SOURCE_DIR, root));
	if (realpath(joined, out) == NULL)
		return false;
	return strncmp(out, root, strlen(root)) == 0 &&
	       (out[strlen(root)] == '/' || out[strlen(root)] == '\0');
}

Test(docs, every_relative_link_opens_a_file_of_the_tree)
{
	size_t relative = 0;

	for (size_t i = 0; i < n_links; i++) {
		const struct link *l = &links[i];
		char at[PATH_MAX];

		if (external(l->target) || l->target[0] == '#')
			continue;
		cr_assert_neq(l->target[0], '\0', "%s:%d: an empty link target",
		    l->page->path, l->line);
		cr_assert_neq(l->target[0], '/',
		    "%s:%d: %s is absolute; links are relative to their page",
		    l->page->path, l->line, l->target);
		cr_assert(resolve(l, at),
		    "%s:%d: %s opens nothing in the source tree", l->page->path,
		    l->line, l->target);
		relative++;
	}
	/* The pages link each other: none found means the parser broke. */
	cr_assert_gt(relative, 10, "only %zu relative links found", relative);
}

Test(docs, every_fragment_names_a_heading_of_its_page)
{
	size_t checked = 0;

	for (size_t i = 0; i < n_links; i++) {
		const struct link *l = &links[i];
		const char *hash = strchr(l->target, '#');
		const struct page *into = NULL;
		char at[PATH_MAX];

		if (hash == NULL || external(l->target))
			continue;
		if (hash == l->target) {
			into = l->page;
		} else {
			if (!resolve(l, at))
				continue; /* the other test says so */
			for (size_t k = 0; k < n_pages; k++)
				if (strcmp(pages[k].path, at) == 0)
					into = &pages[k];
			if (into == NULL)
				continue; /* not a page: no headings to match */
		}
		cr_assert(has_anchor(into, hash + 1),
		    "%s:%d: %s has no heading whose anchor is %s",
		    l->page->path, l->line, into->path, hash + 1);
		checked++;
	}
	cr_assert_gt(checked, 3, "only %zu fragments found", checked);
}

#define DIR_BESIDE \
	"../"      \
	"shared"
#define DOC_WHAT \
	"SPE"    \
	"C.md"
#define DOC_HOW \
	"DESIG" \
	"N.md"

Test(docs, no_page_cites_a_document_outside_the_repository)
{
	/* Each spelt in two pieces, so that integration/standalone, which
	 * scans this file too, does not take the list for citations. */
	static const char *const outside[] = {DIR_BESIDE, DOC_WHAT, DOC_HOW};

	for (size_t i = 0; i < n_pages; i++)
		for (size_t k = 0; k < sizeof(outside) / sizeof(outside[0]);
		     k++)
			cr_assert_null(strstr(pages[i].raw, outside[k]),
			    "%s cites %s, which is not in the repository",
			    pages[i].path, outside[k]);
}
