/* SPDX-License-Identifier: GPL-2.0-only */
/* test_trace_desc.c - descriptor text (pt_desc_format / pt_desc_parse) and numbers (pt_parse_u64). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "trace.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;	/* fixed seed: the run is the same every time */

static uint64_t next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static void round_trip(uint64_t d)
{
	char a[256], b[256];
	uint64_t back = ~d;

	size_t n = pt_desc_format(d, a, sizeof(a));
	assert_int_equal(n, strlen(a));
	if (pt_desc_parse(a, n, &back) || back != d)
		fail_msg("0x%016llx -> \"%s\" -> 0x%016llx", (unsigned long long)d, a, (unsigned long long)back);
	pt_desc_format(back, b, sizeof(b));
	assert_string_equal(a, b);
}

static void test_descriptor_text_round_trips_random_values(void **state)
{
	(void)state;
	for (int i = 0; i < 200000; i++) {
		uint64_t r = next();
		round_trip(r);					/* anything */
		round_trip(r & ~PT_DESC_VALID);			/* invalid, with software bits */
		round_trip((r & (PT_DESC_OA_MASK | 0xfc0ull | PT_DESC_DBM | PT_DESC_CONT | PT_DESC_PXN |
				 PT_DESC_UXN | PT_DESC_DIRTY)) | PT_DESC_VALID | PT_DESC_TABLE);	/* pages */
		round_trip((r & PT_DESC_OA_MASK) | PT_DESC_VALID | PT_DESC_TABLE);	/* tables */
		round_trip((r & (PT_DESC_OA_MASK & ~0x1fffffull)) | PT_DESC_VALID | PT_DESC_AF);	/* blocks */
	}
	round_trip(0);
	round_trip(UINT64_MAX);
	round_trip(PT_DESC_VALID);
	round_trip(PT_DESC_VALID | PT_DESC_TABLE);
}

static void test_descriptor_text_reads_as_documented(void **state)
{
	static const struct { const char *text; uint64_t d; } v[] = {
		{ "inv", 0 },
		{ "0x0", 0 },
		{ "0xffffffffffffffff", UINT64_MAX },
		{ "tbl@0x80000000", 0x80000003ull },
		{ "pg@0x80000000,af", 0x80000403ull },
		{ "blk@0x40000000,attr=4,sh=3,af,ng,uxn", 0x0040000040000f11ull },
		{ "inv,protnone,x=0x2", PT_DESC_PROTNONE | 2 },
		{ "pg@0x1000,user,ro,af,ng,dbm,cont,pxn,uxn,dirty,special",
		  0x1000 | 3 | PT_DESC_USER | PT_DESC_RDONLY | PT_DESC_AF | PT_DESC_NG | PT_DESC_DBM |
		  PT_DESC_CONT | PT_DESC_PXN | PT_DESC_UXN | PT_DESC_DIRTY | PT_DESC_SPECIAL },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint64_t d;
		assert_int_equal(pt_desc_parse(v[i].text, strlen(v[i].text), &d), 0);
		assert_int_equal(d, v[i].d);
	}
	/* tbl and pg are the same bits; pg is printed when bits [11:2] say it is a page */
	char buf[64];
	pt_desc_format(0x80000003ull, buf, sizeof(buf));
	assert_string_equal(buf, "tbl@0x80000000");
	pt_desc_format(0x80000403ull, buf, sizeof(buf));
	assert_string_equal(buf, "pg@0x80000000,af");
}

static void test_descriptor_text_rejects_malformed(void **state)
{
	static const char *const bad[] = {
		"", "0x", "inv@0x1000", "pg", "pg@", "pg@0x1001", "pg@0x1000000000000", "blk@0x1000,attr=8",
		"blk@0x1000,sh=4", "blk@0x1000,attr=", "inv,", "inv,,af", "inv,bogus", "inv,x=", "inv,x=zz",
		"tbl@0x1000 ", "TBL@0x1000", "12", "pg@-1", "inv,af=1",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t d;
		if (pt_desc_parse(bad[i], strlen(bad[i]), &d) != -1)
			fail_msg("\"%s\" parsed", bad[i]);
	}
}

static void test_descriptor_format_truncates_safely(void **state)
{
	char buf[8];
	(void)state;
	memset(buf, 'z', sizeof(buf));
	size_t n = pt_desc_format(UINT64_MAX, buf, sizeof(buf));
	assert_true(n < sizeof(buf));
	assert_int_equal(buf[n], '\0');
}

static void test_parse_u64_edge_cases(void **state)
{
	static const struct { const char *s; int rc; uint64_t v; } v[] = {
		{ "0", 0, 0 },
		{ "00", 0, 0 },
		{ "42", 0, 42 },
		{ "0x2a", 0, 42 },
		{ "0X2A", 0, 42 },
		{ "0xDeadBeef", 0, 0xdeadbeef },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "18446744073709551616", -2, 0 },
		{ "99999999999999999999", -2, 0 },
		{ "0xffffffffffffffff", 0, UINT64_MAX },
		{ "0x0000000000000000ffffffffffffffff", 0, UINT64_MAX },	/* leading zeros are fine */
		{ "0x10000000000000000", -2, 0 },
		{ "4K", 0, 4096 },
		{ "2M", 0, 2u << 20 },
		{ "1G", 0, 1u << 30 },
		{ "1T", 0, 1ull << 40 },
		{ "0x10K", 0, 16u << 10 },
		{ "0K", 0, 0 },
		{ "16777215T", 0, 16777215ull << 40 },
		{ "16777216T", -2, 0 },
		{ "0xffffffffffffffffK", -2, 0 },
		{ "", -1, 0 },
		{ "K", -1, 0 },
		{ "0x", -1, 0 },
		{ "0xK", -1, 0 },
		{ "x1", -1, 0 },
		{ "1k", -1, 0 },
		{ "1KB", -1, 0 },
		{ "1.5M", -1, 0 },
		{ "-1", -1, 0 },
		{ "+1", -1, 0 },
		{ " 1", -1, 0 },
		{ "1 ", -1, 0 },
		{ "0x1g", -1, 0 },
		{ "12a", -1, 0 },
		{ "0b101", -1, 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint64_t out = 12345;
		int rc = pt_parse_u64(v[i].s, strlen(v[i].s), &out);
		if (rc != v[i].rc || (rc == 0 && out != v[i].v) || (rc != 0 && out != 12345))
			fail_msg("\"%s\": rc %d value 0x%llx", v[i].s, rc, (unsigned long long)out);
	}
	/* the length is the end: nothing past it is read */
	uint64_t out;
	assert_int_equal(pt_parse_u64("123456", 3, &out), 0);
	assert_int_equal(out, 123);
	assert_int_equal(pt_parse_u64("4Kxyz", 2, &out), 0);
	assert_int_equal(out, 4096);
}

/* The schema and pt_event_valid() agree: required keys set is valid, a foreign field is not. */
static void test_every_kind_validates_its_own_fields_only(void **state)
{
	(void)state;
	for (unsigned k = 0; k < PT_EV_KIND_COUNT; k++) {
		const struct pt_kind_schema *sc = pt_kind_schema(k);
		struct pt_event ev = { .kind = (uint8_t)k };
		if (!sc) {
			assert_false(pt_event_valid(&ev, 4));
			continue;
		}
		bool used[PT_F_COUNT] = { false };
		for (const struct pt_key *key = sc->keys; key->name; key++) {
			used[key->field] = true;
			pt_event_set(&ev, key->field, 1);
		}
		assert_true(pt_event_valid(&ev, 4));
		ev.cpu = 4;
		assert_false(pt_event_valid(&ev, 4));
		ev.cpu = 3;
		for (int f = 0; f < PT_F_COUNT; f++) {
			if (used[f])
				continue;
			struct pt_event bad = ev;
			pt_event_set(&bad, f, 1);
			assert_false(pt_event_valid(&bad, 4));
		}
		if (sc->ops) {
			ev.op = (uint8_t)sc->nops;
			assert_false(pt_event_valid(&ev, 4));
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_descriptor_text_round_trips_random_values),
		cmocka_unit_test(test_descriptor_text_reads_as_documented),
		cmocka_unit_test(test_descriptor_text_rejects_malformed),
		cmocka_unit_test(test_descriptor_format_truncates_safely),
		cmocka_unit_test(test_parse_u64_edge_cases),
		cmocka_unit_test(test_every_kind_validates_its_own_fields_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
