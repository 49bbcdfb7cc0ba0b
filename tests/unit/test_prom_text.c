/*
 * api/prom_text: the text exposition format's syntax: escaping in label
 * values and in HELP text, float formatting that reads back exactly, and
 * histogram lines.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "prom_text.h"

static char *
text_of_label(const char *value)
{
	struct api_prom b = {0};

	api_prom_label(&b, "l", value, false);
	return api_prom_finish(&b);
}

Test(prom_text, label_values_escape_backslash_quote_and_newline)
{
	char *t = text_of_label("a\\b\"c\nd\te");

	cr_assert_str_eq(t, "l=\"a\\\\b\\\"c\\nd\te\"");
	free(t);
	t = text_of_label("");
	cr_assert_str_eq(t, "l=\"\"");
	free(t);
}

Test(prom_text, help_escapes_backslash_and_newline_only)
{
	struct api_prom b = {0};
	char *t;

	api_prom_family(&b, "x_total", "counter", "say \"hi\"\\\nbye");
	t = api_prom_finish(&b);
	cr_assert_str_eq(t, "# HELP x_total say \"hi\"\\\\\\nbye\n"
	                    "# TYPE x_total counter\n");
	free(t);
}

Test(prom_text, comma_between_labels)
{
	struct api_prom b = {0};
	char *t;

	api_prom_label(&b, "a", "1", false);
	api_prom_label(&b, "b", "2", true);
	t = api_prom_finish(&b);
	cr_assert_str_eq(t, "a=\"1\",b=\"2\"");
	free(t);
}

Test(prom_text, doubles_are_short_and_exact)
{
	static const double vs[] = {0, 1, 0.1, 0.0005, 600, 100.0035, 0.1 + 0.2,
	    1e-9, 123456789.125, 1.0 / 3};
	static const char *const want[] = {"0", "1", "0.1", "0.0005", "600",
	    "100.0035", "0.30000000000000004", "1e-09", "123456789.125",
	    "0.3333333333333333"};

	for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
		struct api_prom b = {0};
		char *t;

		api_prom_double(&b, vs[i]);
		t = api_prom_finish(&b);
		cr_assert_str_eq(t, want[i]);
		cr_assert(strtod(t, NULL) == vs[i], "%s does not read back", t);
		free(t);
	}
}

Test(prom_text, histogram_lines)
{
	static const double le[] = {0.5, 1};
	static const uint64_t in[] = {2, 0, 3};
	struct api_prom b = {0};
	char *t;

	api_prom_histogram(&b, "h", "", in, le, 2, 7.25);
	api_prom_histogram(&b, "g", "k=\"v\"", in, le, 2, 7.25);
	t = api_prom_finish(&b);
	cr_assert_str_eq(t, "h_bucket{le=\"0.5\"} 2\n"
	                    "h_bucket{le=\"1\"} 2\n"
	                    "h_bucket{le=\"+Inf\"} 5\n"
	                    "h_sum 7.25\n"
	                    "h_count 5\n"
	                    "g_bucket{k=\"v\",le=\"0.5\"} 2\n"
	                    "g_bucket{k=\"v\",le=\"1\"} 2\n"
	                    "g_bucket{k=\"v\",le=\"+Inf\"} 5\n"
	                    "g_sum{k=\"v\"} 7.25\n"
	                    "g_count{k=\"v\"} 5\n");
	free(t);
}

Test(prom_text, empty_text_is_an_empty_string)
{
	struct api_prom b = {0};
	char *t = api_prom_finish(&b);

	cr_assert_not_null(t);
	cr_assert_str_eq(t, "");
	free(t);
	cr_assert_null(b.p);
}

Test(prom_text, grows_past_its_first_allocation)
{
	struct api_prom b = {0};
	char *t;

	for (int i = 0; i < 10000; i++)
		api_prom_printf(&b, "line %d\n", i);
	t = api_prom_finish(&b);
	cr_assert_not_null(t);
	cr_assert(strstr(t, "line 0\n") == t);
	cr_assert_not_null(strstr(t, "\nline 9999\n"));
	free(t);
}
