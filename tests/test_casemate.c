/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_casemate.c - the Casemate importer (traces/import/casemate.c): its parser,
 * its mapping onto ptfuzz events, and the agreement table of Casemate's
 * example logs (docs/casemate.md), replayed through a session.
 *
 *   test_casemate            run the tests
 *   test_casemate --table    print the agreement table as ptfuzz sees it now
 *
 * The example logs are read from CASEMATE_EXAMPLES (tests/casemate.cmake).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "casemate.h"
#include "session.h"
#include "trace.h"

#ifndef CASEMATE_EXAMPLES
#define CASEMATE_EXAMPLES ""
#endif

/* ------------------------------------------------------------------ */
/* a sink that keeps what the importer produced                        */

#define MAX_EVENTS 256

struct capture {
	struct pt_header h;
	bool have_header;
	unsigned n;
	struct pt_event ev[MAX_EVENTS];
	char text[MAX_EVENTS][128];
};

static int cap_header(void *ctx, const struct pt_header *h, struct pt_error *err)
{
	struct capture *c = ctx;
	(void)err;
	c->h = *h;
	c->have_header = true;
	return 0;
}

static int cap_event(void *ctx, const struct pt_event *ev, struct pt_error *err)
{
	struct capture *c = ctx;
	(void)err;
	assert_true(c->n < MAX_EVENTS);
	c->ev[c->n] = *ev;
	if (ev->kind == PT_EV_COMMENT) {
		snprintf(c->text[c->n], sizeof(c->text[0]), "%s", ev->text);
		c->ev[c->n].text = c->text[c->n];
	}
	c->n++;
	return 0;
}

static int import(const char *log, struct capture *c, struct pt_casemate_info *info, struct pt_error *err)
{
	const struct pt_casemate_sink sink = { cap_header, cap_event, c };
	memset(c, 0, sizeof(*c));
	memset(err, 0, sizeof(*err));
	return pt_import_casemate_mem(log, strlen(log), "t.log", &sink, info, err);
}

/* The non-comment events, as their canonical text lines joined by '\n'. */
static const char *events_text(const struct capture *c)
{
	static char buf[8192];
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < c->n; i++) {
		if (c->ev[i].kind == PT_EV_COMMENT)
			continue;
		n += pt_event_format_text(&c->ev[i], buf + n, sizeof(buf) - n - 1);
		buf[n++] = '\n';
		buf[n] = '\0';
	}
	return buf;
}

static void expect_error(const char *log, const char *msg)
{
	struct capture c;
	struct pt_error err;

	assert_int_equal(import(log, &c, NULL, &err), -1);
	assert_int_equal(err.code, PT_ERR_IMPORT);
	if (!strstr(err.msg, msg))
		fail_msg("error \"%s\" does not contain \"%s\"", err.msg, msg);
	/* a bad log fails in the first pass: nothing was produced */
	assert_false(c.have_header);
	assert_int_equal(c.n, 0);
}

/* ------------------------------------------------------------------ */
/* parser                                                              */

static void test_keyed_and_positional_forms_are_the_same_event(void **state)
{
	struct capture a, b;
	struct pt_error err;
	(void)state;
	const char *pre = "(mem-init (id 0) (tid 0) (address 0x1000) (size 0x1000))\n"
			  "(sysreg-write (id 1) (tid 0) (sysreg vttbr_el2) (value 0x1000))\n";
	char keyed[512], positional[512];

	snprintf(keyed, sizeof(keyed), "%s(mem-write (id 2) (tid 1) (mem-order release) (address 1008) (value 0x3))\n"
		 "(barrier (id 3) (tid 1) dsb (kind ishst) (src \"f.c:1\"))\n", pre);
	snprintf(positional, sizeof(positional), "%s(mem-write 2 1 \"f.c:9\" RELEASE 1008 3)\n(barrier 3 1 DSB ISHST)\n",
		 pre);
	assert_int_equal(import(keyed, &a, NULL, &err), 0);
	assert_int_equal(import(positional, &b, NULL, &err), 0);
	assert_string_equal(events_text(&a), events_text(&b));
	assert_int_equal(a.h.cpus, 2);
}

static void test_hex_without_prefix_and_multiline_records(void **state)
{
	struct capture c;
	struct pt_error err;
	(void)state;

	assert_int_equal(import("(mem-init\n  (id 5)\n  (thread 0)\n  (address 23f000)\n  (size 1000)\n  (src \"x.c:1\"))\n"
				"(sysreg-write (id 6) (tid 0) (sysreg vttbr_el2) (value 100000023f000))",
				&c, NULL, &err),
			 0);
	assert_string_equal(events_text(&c), "cpu0 page_alloc table pa=0x23f000 flags=0x1\n"
					     "cpu0 dmb ishst\n"
					     "cpu0 ttbr0 pa=0x23f000 asid=1\n");
}

static void test_each_record_is_kept_as_a_comment(void **state)
{
	struct capture c;
	struct pt_error err;
	(void)state;

	assert_int_equal(import("(lock (id 7)\n (tid 0) (address 42) (src \"a.c:3\"))\n! must write\n", &c, NULL, &err), 0);
	assert_int_equal(c.n, 3);
	assert_string_equal(c.ev[0].text, "(lock (id 7) (tid 0) (address 42) (src \"a.c:3\"))");
	assert_string_equal(events_text(&c), "cpu0 lock other key=0x42\n");
	assert_string_equal(c.ev[2].text, "casemate verdict: ! must write");
}

static void test_verdict_line_is_reported(void **state)
{
	struct capture c;
	struct pt_error err;
	struct pt_casemate_info info;
	(void)state;

	assert_int_equal(import("(lock (id 0) (tid 3) (address 1))\n!   BBM valid->valid  \n", &c, &info, &err), 0);
	assert_string_equal(info.verdict, "BBM valid->valid");
	assert_int_equal(info.records, 1);
	assert_int_equal(info.cpus, 4);
	assert_int_equal(info.events, c.n);
}

static void test_empty_log_is_an_empty_trace(void **state)
{
	struct capture c;
	struct pt_error err;
	(void)state;

	assert_int_equal(import("", &c, NULL, &err), 0);
	assert_true(c.have_header);
	assert_int_equal(c.h.cpus, 1);
	assert_string_equal(c.h.method, "casemate");
	assert_int_equal(c.n, 0);
}

static void test_unclosed_record_names_where_it_opened(void **state)
{
	(void)state;
	expect_error("(lock (id 0) (tid 0)\n (address 1)", "t.log:2:13: expected ')' to close the record opened at 1:1, "
						       "got end of file");
}

static void test_unknown_kind_is_named(void **state)
{
	(void)state;
	expect_error("(lock (id 0) (tid 0) (address 1))\n  (mem-frob (id 1) (tid 0))",
		     "t.log:2:4: expected a Casemate event kind");
	expect_error("(mem-frob (id 1) (tid 0))", "got unknown kind 'mem-frob'");
}

static void test_unknown_tlbi_hint_sysreg_and_barrier_are_named(void **state)
{
	(void)state;
	expect_error("(tlbi (id 0) (tid 0) vae1is (value 0))", "got unknown TLBI 'vae1is'");
	expect_error("(hint (id 0) (tid 0) (kind set_colour) (location 0) (value 0))", "got 'set_colour'");
	expect_error("(sysreg-write (id 0) (tid 0) (sysreg ttbr1_el1) (value 0))", "got 'ttbr1_el1'");
	expect_error("(barrier (id 0) (tid 0) dsb (kind osh))", "got 'osh'");
	expect_error("(barrier (id 0) (tid 0) dsb)", "t.log:1:1: expected (kind ish|ishst|nsh|sy) after dsb");
	expect_error("(mem-write (id 0) (tid 0) (mem-order relaxed) (address 0) (value 0))", "got 'relaxed'");
}

static void test_bad_numbers_and_fields(void **state)
{
	(void)state;
	expect_error("(lock (id 0) (tid 0) (address 0xZZ))",
		     "t.log:1:31: expected a hexadecimal number for (address ...), got '0xZZ'");
	expect_error("(lock (id 0) (tid 0) (address 10000000000000000))", "expected a 64-bit number");
	expect_error("(lock (id x) (tid 0) (address 1))", "t.log:1:11: expected a decimal number for (id ...)");
	expect_error("(lock (id 0) (tid 0))", "t.log:1:1: expected (address HEX) in a lock record");
	expect_error("(lock (id 0) (tid 0) (address 1) (colour 2))",
		     "t.log:1:35: expected a field of a lock record, got unknown field (colour ...)");
	expect_error("(lock (id 0) (tid 0) (address 1) (address 2))", "got it twice");
	expect_error("(lock (id 0) (tid 0) (address 1) 7)", "has no field left for '7'");
	expect_error("(lock (id 0) (tid 64) (address 1))", "expected a tid below 64");
	expect_error("(lock (id 0) (tid 0) (address \"1\"))", "got a string");
}

static void test_lexical_errors(void **state)
{
	(void)state;
	expect_error("lock", "t.log:1:1: expected '(' to start a record, got 'l'");
	expect_error("(lock (id 0) (tid 0) (address 1) (src \"a.c:1))",
		     "t.log:1:47: expected '\"' to close the string opened at 1:39, got end of file");
	expect_error("(\x01lock)", "t.log:1:2: expected the record kind after '(', got byte 0x01");
	expect_error("(lock (id 0) (tid 0) (address))", "t.log:1:30: expected a value for (address ...), got ')'");
	expect_error("(lock (id 0) (tid 0) (address 1 2))", "expected ')' after the value of (address ...), got '2'");
	expect_error("(lock ((id 0)))", "t.log:1:8: expected a field name after '('");
}

/* Every prefix of a real log either imports or fails with a located one-line message: never a crash. */
static void test_every_prefix_imports_or_fails_cleanly(void **state)
{
	(void)state;
	const char *log = "(mem-init (id 0) (tid 0) (address 0xaaaadccc5000) (size 0x1000) (src \"b.c:25\"))\n"
			  "(mem-init (id 1) (tid 0) (address 0xaaaadccc6000) (size 0x1000) (src \"b.c:26\"))\n"
			  "(hint (id 3) (tid 0) (kind set_root_lock) (location 0xaaaadccc5000) (value 0xaaaadccc8000))\n"
			  "(mem-write (id 6) (tid 0) (mem-order plain) (address 0xaaaadccc5000) (value 0xaaaadccc6003))\n"
			  "(sysreg-write (id 7) (tid 0) (sysreg vttbr_el2) (value 0xaaaadccc5000))\n"
			  "(barrier (id 10) (tid 0) dsb (kind ish))\n"
			  "(tlbi (id 11) (tid 0) ipas2e1is (value 0x300000000000))\n"
			  "! BBM invalid unclean->valid\n";
	size_t len = strlen(log);
	char *buf = malloc(len + 1);

	assert_non_null(buf);
	for (size_t n = 0; n <= len; n++) {
		struct capture c;
		struct pt_error err;
		const struct pt_casemate_sink sink = { cap_header, cap_event, &c };
		memcpy(buf, log, n);
		memset(&c, 0, sizeof(c));
		memset(&err, 0, sizeof(err));
		if (pt_import_casemate_mem(buf, n, "p.log", &sink, NULL, &err) == 0)
			continue;
		assert_int_equal(err.code, PT_ERR_IMPORT);
		assert_true(!strncmp(err.msg, "p.log:", 6));
		assert_non_null(strstr(err.msg, ": expected "));
		assert_null(strchr(err.msg, '\n'));
	}
	free(buf);
}

/* Random edits of a real log (fixed seed): never a crash, never an unlocated message. */
static void test_mutated_logs_import_or_fail_cleanly(void **state)
{
	(void)state;
	static const char alphabet[] = "()\" \n!0x1f-_abcdeilmnorstvwy\t\x01\xff";
	const char *log = "(mem-init (id 5) (tid 0) (address 23f000) (size 1000) (src \"g.c:25\"))\n"
			  "(mem-init (id 6) (tid 0) (address 240000) (size 2000) (src \"g.c:26\"))\n"
			  "(hint (id 8) (tid 0) (kind set_root_lock) (location 23f000) (value 242000))\n"
			  "(mem-write (id 11) (tid 0) (mem-order plain) (address 23f000) (value 240003))\n"
			  "(mem-write (id 12) (tid 1) (mem-order plain) (address 240000) (value dead001))\n"
			  "(sysreg-write (id 12) (tid 0) (sysreg vttbr_el2) (value 23f000))\n"
			  "(lock (id 14) (tid 0) (address 242000))\n"
			  "(barrier (id 16) (tid 0) dsb (kind ish))\n"
			  "(tlbi (id 17) (tid 0) vae2is (value 300000000000))\n"
			  "(hint (id 19) (tid 0) (kind release_table) (location 241000) (value 0))\n"
			  "(unlock (id 20) (tid 0) (address 242000))\n! BBM\n";
	size_t len = strlen(log);
	char *buf = malloc(2 * len + 16);
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	unsigned ok = 0;

	assert_non_null(buf);
	for (unsigned round = 0; round < 4000; round++) {
		size_t n = len;
		memcpy(buf, log, len);
		for (unsigned k = 0, edits = 1 + round % 4; k < edits; k++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			size_t at = (size_t)(seed >> 33) % n;
			unsigned what = (unsigned)(seed >> 20) % 3;
			char ch = alphabet[(seed >> 40) % (sizeof(alphabet) - 1)];
			if (what == 0) {
				buf[at] = ch;
			} else if (what == 1 && n > 1) {
				memmove(buf + at, buf + at + 1, n - at - 1);
				n--;
			} else if (n < 2 * len) {
				memmove(buf + at + 1, buf + at, n - at);
				buf[at] = ch;
				n++;
			}
		}
		struct capture *c = malloc(sizeof(*c));
		struct pt_error err;
		const struct pt_casemate_sink sink = { cap_header, cap_event, c };
		assert_non_null(c);
		memset(c, 0, sizeof(*c));
		memset(&err, 0, sizeof(err));
		if (pt_import_casemate_mem(buf, n, "m.log", &sink, NULL, &err) == 0) {
			ok++;
		} else {
			unsigned line, col;
			assert_int_equal(err.code, PT_ERR_IMPORT);
			if (sscanf(err.msg, "m.log:%u:%u: expected ", &line, &col) != 2 || !line || !col ||
			    !strstr(err.msg, ": expected ") || strchr(err.msg, '\n'))
				fail_msg("badly formed error: %s", err.msg);
		}
		free(c);
	}
	assert_true(ok > 0);
	free(buf);
}

/* ------------------------------------------------------------------ */
/* mapping                                                             */

static const char *one_tlbi(const char *prefix, const char *tlbi)
{
	static char log[1024];
	static struct capture c;
	struct pt_error err;

	snprintf(log, sizeof(log), "%s(tlbi (id 9) (tid 0) %s)\n", prefix, tlbi);
	assert_int_equal(import(log, &c, NULL, &err), 0);
	return events_text(&c);
}

/* The last event line of a text. */
static const char *last_line(const char *t)
{
	static char line[256];
	size_t n = strlen(t);
	const char *p;

	if (n && t[n - 1] == '\n')
		n--;
	for (p = t + n; p > t && p[-1] != '\n'; p--)
		;
	snprintf(line, sizeof(line), "%.*s", (int)(t + n - p), p);
	return line;
}

static void test_el2_tlbis_map_to_their_nearest_el1_op(void **state)
{
	(void)state;
	/* the current VMID of CPU 0 is 5 */
	const char *vm = "(sysreg-write (id 0) (tid 0) (sysreg vttbr_el2) (value 0x5000000002000))\n";
	static const struct { const char *cm, *pt; } map[] = {
		{ "vmalls12e1is", "cpu0 tlbi aside1is asid=5" },
		{ "vmalls12e1", "cpu0 tlbi aside1 asid=5" },
		{ "vmalle1is", "cpu0 tlbi aside1is asid=5" },
		{ "vmalle1", "cpu0 tlbi aside1 asid=5" },
		{ "alle1is", "cpu0 tlbi vmalle1is" },
		{ "alle1", "cpu0 tlbi vmalle1" },
		{ "alle2is", "cpu0 tlbi vmalle1is" },
		{ "alle2", "cpu0 tlbi vmalle1" },
		{ "vae2is (value 0x300000000012)", "cpu0 tlbi vaae1is va=0xffff000000012000" },
		{ "vae2 (value 0x12)", "cpu0 tlbi vaae1 va=0xffff000000012000" },
		{ "vale2is (value 0x700000000012)", "cpu0 tlbi vaale1is va=0xffff000000012000 ttl=3" },
		{ "vale2 (value 0x600000000012)", "cpu0 tlbi vaale1 va=0xffff000000012000 ttl=2" },
		{ "ipas2e1is (value 0x300000000040)", "cpu0 tlbi vae1is va=0x40000 asid=5" },
		{ "ipas2e1 (value 0x40)", "cpu0 tlbi vae1 va=0x40000 asid=5" },
		{ "ipas2le1is (value 0x40)", "cpu0 tlbi vale1is va=0x40000 asid=5" },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		const char *got = last_line(one_tlbi(vm, map[i].cm));
		if (strcmp(got, map[i].pt))
			fail_msg("tlbi %s: expected \"%s\", got \"%s\"", map[i].cm, map[i].pt, got);
	}
	expect_error("(tlbi (id 0) (tid 0) vae2is)", "expected (value HEX) for TLBI vae2is");
	expect_error("(tlbi (id 0) (tid 0) alle1is (value 1))", "expected no (value ...) for TLBI alle1is");
	expect_error("(tlbi (id 0) (tid 0) vae2is (value 0xfffffffffff))", "expected a TLBI address below 2^48");
}

static void test_ttbrs_install_roots_and_the_lock_rule_binds_at_install(void **state)
{
	struct capture c;
	struct pt_error err;
	(void)state;

	assert_int_equal(import("(mem-init (id 0) (tid 0) (address 2000) (size 1000))\n"
				"(mem-init (id 1) (tid 0) (address 3000) (size 1000))\n"
				"(hint (id 2) (tid 0) (kind set_root_lock) (location 2000) (value 9000))\n"
				"(mem-write (id 3) (tid 0) (mem-order plain) (address 2000) (value 3003))\n"
				"(sysreg-write (id 4) (tid 0) (sysreg ttbr0_el2) (value 2001))\n"
				"(hint (id 5) (tid 0) (kind set_root_lock) (location 2000) (value 9008))\n"
				"(sysreg-write (id 6) (tid 0) (sysreg ttbr0_el2) (value 2000))\n"
				"(sysreg-write (id 7) (tid 0) (sysreg tcr_el2) (value 10))\n",
				&c, NULL, &err),
			 0);
	assert_string_equal(events_text(&c), "cpu0 page_alloc table pa=0x2000 flags=0x1\n"
					     "cpu0 dmb ishst\n"
					     "cpu0 page_alloc table pa=0x3000 level=1 flags=0x1\n"
					     "cpu0 dmb ishst\n"
					     "cpu0 pt_write pa=0x2000 val=tbl@0x3000\n"
					     "cpu0 ttbr1 pa=0x2000\n"
					     "cpu0 lock_rule other root=0x2000 key=0x9000\n"
					     "cpu0 lock_rule other root=0x2000 key=0x9008\n"
					     "cpu0 ttbr1 pa=0x2000\n");
	expect_error("(sysreg-write (id 0) (tid 0) (sysreg vttbr_el2) (value 2800))",
		     "expected a page-aligned table base in vttbr_el2, got 0x2800");
	expect_error("(sysreg-write (id 0) (tid 0) (sysreg vtcr_el2) (value 19))", "got T0SZ 25");
}

static void test_stage2_leaves_become_vmid_tagged_stage1_leaves(void **state)
{
	struct capture c;
	struct pt_error err;
	(void)state;

	/* root, level-1 table, level-2 table, level-3 table; S2AP=11 (RW) blocks and a page */
	assert_int_equal(import("(mem-init (id 0) (tid 0) (address 10000) (size 4000))\n"
				"(mem-write (id 1) (tid 0) (mem-order plain) (address 10000) (value 11003))\n"
				"(mem-write (id 2) (tid 0) (mem-order plain) (address 11000) (value 12003))\n"
				"(mem-write (id 3) (tid 0) (mem-order plain) (address 12000) (value 13003))\n"
				"(mem-write (id 4) (tid 0) (mem-order plain) (address 11008) (value 400004c1))\n"
				"(mem-write (id 5) (tid 0) (mem-order plain) (address 13000) (value 400000000007c3))\n"
				"(mem-write (id 6) (tid 0) (mem-order plain) (address 13008) (value 403))\n"
				"(sysreg-write (id 7) (tid 0) (sysreg vttbr_el2) (value 10000))\n",
				&c, NULL, &err),
			 0);
	assert_string_equal(events_text(&c), "cpu0 page_alloc table pa=0x10000 flags=0x1\n"
					     "cpu0 page_alloc table pa=0x11000 level=1 flags=0x1\n"
					     "cpu0 page_alloc table pa=0x12000 level=2 flags=0x1\n"
					     "cpu0 page_alloc table pa=0x13000 level=3 flags=0x1\n"
					     "cpu0 dmb ishst\n"
					     "cpu0 pt_write pa=0x10000 val=tbl@0x11000\n"
					     "cpu0 pt_write pa=0x11000 val=tbl@0x12000\n"
					     "cpu0 pt_write pa=0x12000 val=tbl@0x13000\n"
					     "cpu0 pt_write pa=0x11008 val=blk@0x40000000,user,af,ng\n"
					     "cpu0 pt_write pa=0x13000 val=pg@0x0,sh=3,user,af,ng,uxn\n"
					     "cpu0 pt_write pa=0x13008 val=pg@0x0,ro,af,ng\n"
					     "cpu0 ttbr0 pa=0x10000\n");
}

static void test_stage1_descriptors_are_kept_as_written(void **state)
{
	struct capture c;
	struct pt_error err;
	(void)state;

	assert_int_equal(import("(mem-init (id 0) (tid 0) (address 10000) (size 2000))\n"
				"(mem-write (id 1) (tid 0) (mem-order plain) (address 10000) (value 11003))\n"
				"(mem-write (id 2) (tid 0) (mem-order plain) (address 11000) (value dead001))\n"
				"(sysreg-write (id 3) (tid 0) (sysreg ttbr0_el2) (value 10000))\n",
				&c, NULL, &err),
			 0);
	assert_non_null(strstr(events_text(&c), "cpu0 pt_write pa=0x11000 val=blk@0xdead000\n"));
}

static void test_memory_that_is_not_a_table(void **state)
{
	struct capture c;
	struct pt_error err;
	(void)state;

	/* 16 KiB of data at 0x20000 (one order-2 block), a write to it, a write to unknown memory */
	assert_int_equal(import("(mem-init (id 0) (tid 0) (address 0x20000) (size 0x4000))\n"
				"(mem-write (id 1) (tid 0) (mem-order plain) (address 0x20010) (value 0x3))\n"
				"(mem-write (id 2) (tid 0) (mem-order plain) (address 0x90000) (value 0x3))\n"
				"(mem-read (id 3) (tid 0) (address 0x20010) (value 0x3))\n"
				"(mem-set (id 4) (tid 0) (address 0x20000) (size 0x1000) (value 0xff))\n"
				"(hint (id 5) (tid 0) (kind release_table) (location 0x90000) (value 0))\n"
				"(mem-free (id 6) (tid 0) (address 0x20000) (size 0x2000))\n",
				&c, NULL, &err),
			 0);
	assert_string_equal(events_text(&c), "cpu0 page_alloc data pa=0x20000 order=2\n"
					     "cpu0 page_free pa=0x20000\n"
					     "cpu0 page_free pa=0x21000\n");
}

static void test_release_table_frees_the_frame_and_drops_its_lock_rule(void **state)
{
	struct capture c;
	struct pt_error err;
	(void)state;

	assert_int_equal(import("(mem-init (id 0) (tid 0) (address 2000) (size 1000))\n"
				"(hint (id 1) (tid 0) (kind set_root_lock) (location 2000) (value 9000))\n"
				"(sysreg-write (id 2) (tid 0) (sysreg vttbr_el2) (value 2000))\n"
				"(hint (id 3) (tid 0) (kind release_table) (location 2000) (value 0))\n"
				"(mem-init (id 4) (tid 0) (address 2000) (size 1000))\n"
				"(sysreg-write (id 5) (tid 0) (sysreg vttbr_el2) (value 1000000002000))\n",
				&c, NULL, &err),
			 0);
	assert_string_equal(events_text(&c), "cpu0 page_alloc table pa=0x2000 flags=0x1\n"
					     "cpu0 dmb ishst\n"
					     "cpu0 ttbr0 pa=0x2000\n"
					     "cpu0 lock_rule other root=0x2000 key=0x9000\n"
					     "cpu0 page_free pa=0x2000\n"
					     "cpu0 page_alloc table pa=0x2000 flags=0x1\n"
					     "cpu0 dmb ishst\n"
					     "cpu0 ttbr0 pa=0x2000 asid=1\n");
}

static void test_a_table_used_at_two_levels_is_refused(void **state)
{
	(void)state;
	expect_error("(mem-init (id 0) (tid 0) (address 2000) (size 2000))\n"
		     "(mem-write (id 1) (tid 0) (mem-order plain) (address 2000) (value 3003))\n"
		     "(sysreg-write (id 2) (tid 0) (sysreg vttbr_el2) (value 2000))\n"
		     "(sysreg-write (id 3) (tid 0) (sysreg vttbr_el2) (value 1000000003000))\n",
		     "expected table 0x3000 at one level, got level 0 and level 1");
}

/* ------------------------------------------------------------------ */
/* the agreement table (docs/casemate.md)                              */

enum agree { AGREE, DISAGREE, NO_MAP };

#define B(i) (1u << (i))

struct example {
	const char *name;
	const char *casemate;	/* the log's `!` line, "" if Casemate accepts it */
	unsigned ptfuzz;	/* the invariants ptfuzz reports (bit i = Ii) */
	enum agree agree;
	const char *note;
};

/*
 * What each of Casemate's example logs gives, in Casemate and in ptfuzz.
 * The ptfuzz column is what the engine reports today: a change fails the
 * test, and then this table and docs/casemate.md change together.
 */
static const struct example examples[] = {
	{ "bad_EL2_ASID", "TTBR0_EL2 ASID is reserved 0", 0, NO_MAP,
	  "an EL2 register-encoding rule; ptfuzz's TTBR1 has no ASID" },
	{ "bad_bbm_by_wrong_VMID", "BBM invalid unclean->valid", B(4), AGREE,
	  "the TLBIs ran under another VMID: the old table's walk-cache entry survives the re-hook" },
	{ "bad_bbm_missing_tlbi", "BBM invalid unclean->valid", B(4), AGREE,
	  "table descriptor re-pointed through invalid with no TLBI" },
	{ "bad_free_page_without_clean", "cannot release table where children are still unclean", B(1), AGREE,
	  "table freed while the store that hooked it may have been walked (no DSB, no TLBI)" },
	{ "bad_no_assoc_lock", "must have associated root with a lock", 0, NO_MAP,
	  "Casemate requires every root to be annotated with a lock; ptfuzz checks the rules it is given" },
	{ "bad_no_bbm", "BBM valid->valid", B(4), AGREE, "live table descriptor replaced" },
	{ "bad_no_bbm_stage1", "BBM valid->valid", B(4), AGREE, "live table descriptor replaced" },
	{ "bad_overlap_ASID", "duplicate (VM/AS)ID", 0, NO_MAP, "ASID allocation rule; no translation is cached" },
	{ "bad_overlap_VMID", "duplicate (VM/AS)ID", 0, NO_MAP, "VMID allocation rule; no translation is cached" },
	{ "bad_race", "must write to pte while holding owner lock", B(12), AGREE, "CPU 1 writes without the lock" },
	{ "bad_reuse_page", "double-use pte", 0, NO_MAP,
	  "Casemate forbids a table in two trees; ptfuzz allows shared tables" },
	{ "bad_switch_wrong_vmid", "root already associated with an (VM/AS)ID", 0, NO_MAP,
	  "VMID allocation rule; no translation is cached" },
	{ "bad_unlocked_write", "must write to pte while holding owner lock", B(12), AGREE,
	  "write without the root's lock" },
	{ "good_bbm", "", 0, AGREE, "" },
	{ "good_bbm_by_VMID", "", 0, AGREE, "" },
	{ "good_bbm_stage1", "", 0, AGREE, "" },
	{ "good_free_page", "", 0, AGREE, "" },
	{ "good_free_tree", "", 0, AGREE, "" },
	{ "good_release_table", "", 0, AGREE, "" },
	{ "good_switch", "", 0, AGREE, "" },
	{ "good_write", "", 0, AGREE, "" },
	{ "good_write_child", "", 0, AGREE, "" },
	{ "simple", "", 0, AGREE, "writes to memory that is no page table" },
};

#define NEXAMPLES (sizeof(examples) / sizeof(examples[0]))

static const char *ids_text(unsigned mask)
{
	static char buf[8][64];
	static unsigned k;
	char *b = buf[k++ % 8];
	size_t n = 0;

	b[0] = '\0';
	for (unsigned i = 1; i < PT_INV_COUNT; i++)
		if (mask & B(i))
			n += (size_t)snprintf(b + n, 64 - n, "%sI%u", n ? ", " : "", i);
	if (!n)
		snprintf(b, 64, "none");
	return b;
}

struct verdict {
	char casemate[256];
	unsigned mask;
	char detail[2048];	/* the violations, one per line */
};

/* Replay a trace file through a session. */
static int replay(const char *path, struct verdict *v, char *why, size_t whysize)
{
	struct pt_error err = { PT_OK, "" };
	struct pt_reader *r = pt_reader_open(path, &err);
	struct pt_event ev;
	struct pt_session *s;
	int rc;

	if (!r) {
		snprintf(why, whysize, "%s", err.msg);
		return -1;
	}
	s = pt_session_new(pt_reader_header(r));
	if (!s) {
		pt_reader_close(r);
		snprintf(why, whysize, "%s: pt_session_new refused the header", path);
		return -1;
	}
	while ((rc = pt_reader_next(r, &ev, &err)) == 1)
		pt_session_event(s, &ev);
	pt_reader_close(r);
	if (rc < 0) {
		pt_session_free(s);
		snprintf(why, whysize, "%s", err.msg);
		return -1;
	}
	pt_session_finish(s);
	v->mask = 0;
	v->detail[0] = '\0';
	size_t n = 0;
	for (unsigned i = 0; i < pt_session_nviolations(s); i++) {
		const struct pt_violation *x = pt_session_violation(s, i);
		v->mask |= B(x->id);
		if (n < sizeof(v->detail))
			n += (size_t)snprintf(v->detail + n, sizeof(v->detail) - n, "    I%u %s at event %llu: %s\n",
					      x->id, x->signature, (unsigned long long)x->event, x->what);
	}
	pt_session_free(s);
	return 0;
}

static char tmpdir[64];

/* Import an example in both encodings and replay each: the verdicts must be the same. */
static int judge(const struct example *ex, struct verdict *v, char *why, size_t whysize)
{
	char log[1024], out[2][160];
	struct pt_casemate_info info;
	struct pt_error err = { PT_OK, "" };
	FILE *f;

	snprintf(log, sizeof(log), "%s/%s.log", CASEMATE_EXAMPLES, ex->name);
	f = fopen(log, "rb");
	if (!f) {
		snprintf(why, whysize, "%.*s: cannot open", (int)(whysize > 16 ? whysize - 16 : 0), log);
		return -1;
	}
	fclose(f);
	snprintf(out[0], sizeof(out[0]), "%s/%s.ptt", tmpdir, ex->name);
	snprintf(out[1], sizeof(out[1]), "%s/%s.ptt.zst", tmpdir, ex->name);
	for (int enc = 0; enc < 2; enc++) {
		struct verdict w;
		if (pt_import_casemate(log, out[enc], &err)) {
			snprintf(why, whysize, "import: %s", err.msg);
			return -1;
		}
		if (replay(out[enc], enc ? &w : v, why, whysize))
			return -1;
		if (enc && w.mask != v->mask) {
			snprintf(why, whysize, "%s: text trace gives %s, binary trace gives %s", ex->name,
				 ids_text(v->mask), ids_text(w.mask));
			return -1;
		}
	}
	/* Casemate's verdict, as the importer reads it from the log */
	{
		struct capture *c = calloc(1, sizeof(*c));
		const struct pt_casemate_sink sink = { cap_header, cap_event, c };
		FILE *in = fopen(log, "rb");
		int rc = c && in ? pt_import_casemate_stream(in, log, &sink, &info, &err) : -1;
		if (in)
			fclose(in);
		free(c);
		if (rc) {
			snprintf(why, whysize, "import: %s", err.msg);
			return -1;
		}
		snprintf(v->casemate, sizeof(v->casemate), "%s", info.verdict);
	}
	return 0;
}

static void test_example(void **state)
{
	const struct example *ex = *state;
	struct verdict v;
	char why[512];

	if (judge(ex, &v, why, sizeof(why)))
		fail_msg("%s", why);
	if (strcmp(v.casemate, ex->casemate))
		fail_msg("%s: the log's Casemate verdict is \"%s\", the table says \"%s\"", ex->name, v.casemate,
			 ex->casemate);
	if (v.mask != ex->ptfuzz)
		fail_msg("%s: ptfuzz now reports %s, the agreement table (docs/casemate.md) says %s\n%s"
			 "  reproduce: ptfuzz import-casemate %s/%s.log -o x.ptt && ptfuzz replay x.ptt",
			 ex->name, ids_text(v.mask), ids_text(ex->ptfuzz), v.detail, CASEMATE_EXAMPLES, ex->name);
}

static int make_tmpdir(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_casemate.XXXXXX", t && strlen(t) < 32 ? t : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static void remove_tmpdir(void)
{
	for (size_t i = 0; i < NEXAMPLES; i++) {
		char p[160];
		snprintf(p, sizeof(p), "%s/%s.ptt", tmpdir, examples[i].name);
		unlink(p);
		snprintf(p, sizeof(p), "%s/%s.ptt.zst", tmpdir, examples[i].name);
		unlink(p);
	}
	rmdir(tmpdir);
}

/* --table: the agreement table as ptfuzz sees it now (the form of docs/casemate.md), then the violations. */
static int print_table(void)
{
	static const char *const agree[] = { "yes", "**no**", "does not map" };
	static char details[16384];
	size_t n = 0;
	int bad = 0;

	printf("| example | Casemate says | ptfuzz says | agree? | note |\n|---|---|---|---|---|\n");
	for (size_t i = 0; i < NEXAMPLES; i++) {
		const struct example *ex = &examples[i];
		struct verdict v;
		char why[512];
		if (judge(ex, &v, why, sizeof(why))) {
			printf("| `%s` | ? | error: %s | | |\n", ex->name, why);
			bad = 1;
			continue;
		}
		printf("| `%s` | %s | %s%s | %s | %s |\n", ex->name, v.casemate[0] ? v.casemate : "no violation",
		       ids_text(v.mask), v.mask == ex->ptfuzz ? "" : " (changed!)", agree[ex->agree], ex->note);
		if (v.mask && n < sizeof(details))
			n += (size_t)snprintf(details + n, sizeof(details) - n, "%s:\n%s", ex->name, v.detail);
		bad |= v.mask != ex->ptfuzz;
	}
	printf("\n%s", details);
	return bad;
}

int main(int argc, char **argv)
{
	static const struct CMUnitTest unit[] = {
		cmocka_unit_test(test_keyed_and_positional_forms_are_the_same_event),
		cmocka_unit_test(test_hex_without_prefix_and_multiline_records),
		cmocka_unit_test(test_each_record_is_kept_as_a_comment),
		cmocka_unit_test(test_verdict_line_is_reported),
		cmocka_unit_test(test_empty_log_is_an_empty_trace),
		cmocka_unit_test(test_unclosed_record_names_where_it_opened),
		cmocka_unit_test(test_unknown_kind_is_named),
		cmocka_unit_test(test_unknown_tlbi_hint_sysreg_and_barrier_are_named),
		cmocka_unit_test(test_bad_numbers_and_fields),
		cmocka_unit_test(test_lexical_errors),
		cmocka_unit_test(test_every_prefix_imports_or_fails_cleanly),
		cmocka_unit_test(test_mutated_logs_import_or_fail_cleanly),
		cmocka_unit_test(test_el2_tlbis_map_to_their_nearest_el1_op),
		cmocka_unit_test(test_ttbrs_install_roots_and_the_lock_rule_binds_at_install),
		cmocka_unit_test(test_stage2_leaves_become_vmid_tagged_stage1_leaves),
		cmocka_unit_test(test_stage1_descriptors_are_kept_as_written),
		cmocka_unit_test(test_memory_that_is_not_a_table),
		cmocka_unit_test(test_release_table_frees_the_frame_and_drops_its_lock_rule),
		cmocka_unit_test(test_a_table_used_at_two_levels_is_refused),
	};
	struct CMUnitTest ex[NEXAMPLES];
	int failed;

	if (make_tmpdir()) {
		perror("test_casemate: mkdtemp");
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], "--table")) {
		failed = print_table();
		remove_tmpdir();
		return failed;
	}
	failed = cmocka_run_group_tests_name("casemate_import", unit, NULL, NULL);
	if (CASEMATE_EXAMPLES[0]) {
		for (size_t i = 0; i < NEXAMPLES; i++)
			ex[i] = (struct CMUnitTest){ examples[i].name, test_example, NULL, NULL, (void *)&examples[i] };
		failed |= _cmocka_run_group_tests("casemate_examples", ex, NEXAMPLES, NULL, NULL);
	} else {
		printf("casemate_examples: skipped (Casemate's example logs were not found at configure time)\n");
	}
	remove_tmpdir();
	return failed ? 1 : 0;
}
