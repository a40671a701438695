// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_debug.c - pt_dbg() keeps the levels up to PTFUZZ_DEBUG, indents by
 * level, and in a default build (test_debug_off.c) prints nothing at all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#undef PTFUZZ_DEBUG
#define PTFUZZ_DEBUG 2
#include "ptdebug.h"

void debug_off_all_levels(void);

static char *capture(void (*emit)(void), size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	pt_dbg_stream = f;
	emit();
	pt_dbg_stream = NULL;
	fclose(f);
	return buf;
}

static void debug_two_all_levels(void)
{
	pt_dbg(PT_DBG_TRACE, "trace %d", 1);
	pt_dbg(PT_DBG_OP, "op %s", "mremap");
	pt_dbg(PT_DBG_LEVEL, "level %d", 3);
	pt_dbg(PT_DBG_ENTRY, "entry %#x", 0x10);
}

static void test_debug_keeps_levels_up_to_its_setting(void **state)
{
	size_t len;
	char *out = capture(debug_two_all_levels, &len);

	(void)state;
	assert_string_equal(out, "ptdbg1 trace 1\nptdbg2   op mremap\n");
	free(out);
}

static void test_debug_default_build_prints_nothing(void **state)
{
	size_t len;
	char *out = capture(debug_off_all_levels, &len);

	(void)state;
	assert_int_equal(len, 0);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debug_keeps_levels_up_to_its_setting),
		cmocka_unit_test(test_debug_default_build_prints_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
