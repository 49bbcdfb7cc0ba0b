/*
 * test_bbuf.c: the bounded byte buffer that every libcurl body fills.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "bbuf.h"

Test(bbuf, fills_up_to_its_bound_and_refuses_past_it)
{
	struct cm_bbuf b = {.cap = 8};
	char abc[] = "abc", more[] = "defgh", one[] = "i";

	cr_assert_eq(cm_bbuf_write(abc, 1, 3, &b), 3);
	cr_assert_str_eq(b.p, "abc");
	cr_assert_eq(cm_bbuf_write(more, 1, 5, &b), 5);
	cr_assert_eq(b.len, 8);
	cr_assert_str_eq(b.p, "abcdefgh");
	cr_assert_not(b.over);
	/* One byte more than the bound: refused whole, nothing kept. */
	cr_assert_eq(cm_bbuf_write(one, 1, 1, &b), 0);
	cr_assert(b.over);
	cr_assert_eq(b.len, 8);
	cr_assert_str_eq(b.p, "abcdefgh");
	cm_bbuf_free(&b);
	cr_assert_null(b.p);
	cr_assert_eq(b.len, 0);
	cr_assert_eq(b.cap, 8);
}

Test(bbuf, a_size_that_overflows_is_refused)
{
	struct cm_bbuf b = {.cap = SIZE_MAX};
	char x[] = "x";

	cr_assert_eq(cm_bbuf_write(x, SIZE_MAX / 2 + 1, 2, &b), 0);
	cr_assert(b.over);
	cr_assert_null(b.p);
}
