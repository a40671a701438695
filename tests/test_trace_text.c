/* SPDX-License-Identifier: GPL-2.0-only */
/* test_trace_text.c - the text encoding: what the reader accepts, what the writer prints. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "trace.h"

#define MAXEV 64

struct parsed {
	struct pt_header h;
	struct pt_event ev[MAXEV];
	char text[MAXEV][PT_MAX_LINE + 1];
	int n;
	struct pt_error err;
	int rc;		/* 0 clean end, -1 error (err) */
};

/* Read all of s (as a file called t.ptt). */
static struct parsed *parse(const char *s)
{
	static struct parsed p;
	struct pt_reader *r;

	memset(&p, 0, sizeof(p));
	r = pt_reader_open_mem(s, strlen(s), "t.ptt", &p.err);
	if (!r) {
		p.rc = -1;
		return &p;
	}
	p.h = *pt_reader_header(r);
	for (int i = 0; (p.rc = pt_reader_next(r, &p.ev[i], &p.err)) == 1; i = p.n < MAXEV ? p.n : MAXEV - 1) {
		if (p.ev[i].text) {	/* events past MAXEV are counted, not kept */
			strcpy(p.text[i], p.ev[i].text);
			p.ev[i].text = p.text[i];
		}
		p.n++;
	}
	pt_reader_close(r);
	return &p;
}

static const char *fmt(const struct pt_event *ev)
{
	static char line[PT_MAX_LINE + 64];
	pt_event_format_text(ev, line, sizeof(line));
	return line;
}

/* The one event of line s, which must parse. */
static struct pt_event one(const char *s)
{
	char line[PT_MAX_LINE + 2];
	snprintf(line, sizeof(line), "%s\n", s);
	struct parsed *p = parse(line);
	if (p->rc || p->n != 1)
		fail_msg("%s: rc %d, %d events: %s", s, p->rc, p->n, p->err.msg);
	return p->ev[0];
}

/* parse(line) formats back to canon */
static void canon(const char *line, const char *expect)
{
	struct pt_event ev = one(line);
	assert_string_equal(fmt(&ev), expect);
}

static void test_canonical_addresses_and_flags_are_hex(void **state)
{
	(void)state;
	canon("cpu0 lock mmap key=1 flags=1", "cpu0 lock mmap key=0x1 flags=0x1");
	canon("cpu1 pt_zero pa=2G", "cpu1 pt_zero pa=0x80000000");
	canon("cpu0 lock_rule pmd root=4096 key=16", "cpu0 lock_rule pmd root=0x1000 key=0x10");
	canon("cpu0 mremap va=0 len=4K new_va=8K", "cpu0 mremap va=0x0 len=4K new_va=0x2000");
}

static void test_canonical_lengths_take_the_largest_exact_suffix(void **state)
{
	(void)state;
	canon("cpu0 munmap va=0 len=2097152", "cpu0 munmap va=0x0 len=2M");
	canon("cpu0 munmap va=0 len=0x1800", "cpu0 munmap va=0x0 len=6K");
	canon("cpu0 munmap va=0 len=3072M", "cpu0 munmap va=0x0 len=3G");
	canon("cpu0 munmap va=0 len=1024G", "cpu0 munmap va=0x0 len=1T");
	canon("cpu0 munmap va=0 len=4097", "cpu0 munmap va=0x0 len=0x1001");
	canon("cpu0 munmap va=0 len=512", "cpu0 munmap va=0x0 len=0x200");
	canon("cpu0 munmap va=0 len=0", "cpu0 munmap va=0x0 len=0x0");
	canon("cpu0 mremap va=0 len=4K new_len=1M", "cpu0 mremap va=0x0 len=4K new_len=1M");
}

static void test_canonical_counts_in_length_fields_are_decimal(void **state)
{
	(void)state;
	canon("cpu0 migrate tid=3 to=0x1", "cpu0 migrate tid=3 to=1");
	struct parsed *p = parse("cpu0 thread tid=9\ncpu0 sched dsb steps=1K tid=9\n");	/* a declared thread */
	assert_int_equal(p->rc, 0);
	assert_int_equal(p->n, 2);
	assert_string_equal(fmt(&p->ev[1]), "cpu0 sched dsb tid=9 steps=1024");
	canon("cpu0 begin mprotect bound=2K", "cpu0 begin mprotect bound=2048");
	canon("cpu0 tlbi rvale1is va=0 asid=0x10 ttl=3 num=0x1f scale=3",
	      "cpu0 tlbi rvale1is asid=16 ttl=3 num=31 scale=3");
}

static void test_canonical_optional_keys_only_when_nonzero(void **state)
{
	(void)state;
	canon("cpu0 mmap va=0x1000 len=4K prot=none asid=0 flags=0 order=0", "cpu0 mmap va=0x1000 len=4K");
	canon("cpu0 tlbi vmalle1is", "cpu0 tlbi vmalle1is");
	canon("cpu0 access va=0", "cpu0 access va=0x0");	/* required: always printed */
}

static void test_prot_is_none_or_rwx_letters_in_any_order(void **state)
{
	(void)state;
	canon("cpu0 mprotect va=0 len=4K prot=xr", "cpu0 mprotect va=0x0 len=4K prot=rx");
	canon("cpu0 mprotect va=0 len=4K prot=wxr", "cpu0 mprotect va=0x0 len=4K prot=rwx");
	canon("cpu0 mprotect va=0 len=4K prot=2", "cpu0 mprotect va=0x0 len=4K prot=w");
	canon("cpu0 mprotect va=0 len=4K prot=none", "cpu0 mprotect va=0x0 len=4K");
	assert_int_equal(parse("cpu0 mprotect va=0 len=4K prot=rr\n")->err.code, PT_ERR_NUMBER);
	assert_int_equal(parse("cpu0 mprotect va=0 len=4K prot=\n")->err.code, PT_ERR_NUMBER);
	assert_int_equal(parse("cpu0 mprotect va=0 len=4K prot=R\n")->err.code, PT_ERR_NUMBER);
}

static void test_val_takes_descriptor_syntax_or_raw_hex(void **state)
{
	(void)state;
	canon("cpu0 pt_write pa=0x1000 val=0x0", "cpu0 pt_write pa=0x1000 val=inv");
	canon("cpu0 pt_write pa=0x1000 val=0x80000003", "cpu0 pt_write pa=0x1000 val=tbl@0x80000000");
	canon("cpu0 pt_write pa=0x1000 val=0x60000080000703",
	      "cpu0 pt_write pa=0x1000 val=pg@0x80000000,sh=3,af,pxn,uxn");
	canon("cpu0 pt_write pa=0x1000 val=blk@0x40000000,af,ng,cont",
	      "cpu0 pt_write pa=0x1000 val=blk@0x40000000,af,ng,cont");
	canon("cpu0 pt_write pa=0x1000 val=inv,protnone", "cpu0 pt_write pa=0x1000 val=inv,protnone");
	assert_int_equal(parse("cpu0 pt_write pa=0x1000 val=12\n")->err.code, PT_ERR_NUMBER);
}

static void test_keys_come_in_any_order_numbers_in_any_base(void **state)
{
	(void)state;
	struct pt_event ev = one("cpu1 mmap order=2 flags=0x5 prot=rw asid=0x10 len=2097152 va=1G\n");
	assert_int_equal(ev.kind, PT_EV_MMAP);
	assert_int_equal(ev.cpu, 1);
	assert_int_equal(ev.va, 1ull << 30);
	assert_int_equal(ev.len, 2ull << 20);
	assert_int_equal(ev.asid, 16);
	assert_int_equal(ev.prot, PT_PROT_READ | PT_PROT_WRITE);
	assert_int_equal(ev.flags, 5);
	assert_int_equal(ev.order, 2);
	assert_string_equal(fmt(&ev), "cpu1 mmap va=0x40000000 len=2M prot=rw asid=16 flags=0x5 order=2");
}

static void test_full_line_comment_is_an_event_trailing_comment_is_kept_with_its_event(void **state)
{
	(void)state;
	struct parsed *p = parse("# one\n#two\n#  three\n#\ncpu0 isb # kept\n\t # indented\n");
	assert_int_equal(p->rc, 0);
	assert_int_equal(p->n, 6);
	assert_string_equal(p->ev[0].text, "one");
	assert_string_equal(p->ev[1].text, "two");
	assert_string_equal(p->ev[2].text, " three");	/* only one space goes */
	assert_string_equal(p->ev[3].text, "");
	assert_int_equal(p->ev[4].kind, PT_EV_ISB);
	assert_string_equal(p->ev[4].text, "kept");	/* the event's own: no event of its own */
	assert_string_equal(fmt(&p->ev[4]), "cpu0 isb   # kept");
	/* and through the binary encoding */
	struct pt_header h;
	struct pt_error err = { 0 };
	void *data;
	size_t size;
	pt_header_default(&h);
	struct pt_writer *w = pt_writer_open_mem(PT_ENC_BINARY, &h, &err);
	assert_non_null(w);
	assert_int_equal(pt_writer_put(w, &p->ev[4], &err), 0);
	assert_int_equal(pt_writer_close_mem(w, &data, &size, &err), 0);
	struct pt_reader *r = pt_reader_open_mem(data, size, "t.ptt.zst", &err);
	assert_non_null(r);
	struct pt_event ev;
	assert_int_equal(pt_reader_next(r, &ev, &err), 1);
	assert_string_equal(fmt(&ev), "cpu0 isb   # kept");
	pt_reader_close(r);
	free(data);
	assert_string_equal(p->ev[5].text, "indented");
	assert_string_equal(fmt(&p->ev[0]), "# one");
	assert_string_equal(fmt(&p->ev[2]), "#  three");
	assert_string_equal(fmt(&p->ev[3]), "#");
	for (int i = 0; i < p->n; i++)
		assert_int_equal(p->ev[i].cpu, 0);
}

static void test_blank_lines_tabs_and_crlf_are_accepted(void **state)
{
	(void)state;
	struct parsed *p = parse("\r\n  \t \n\tcpu1\tdsb\tish\t\r\ncpu0 isb\r\n# crlf\r\n\n");
	assert_int_equal(p->rc, 0);
	assert_int_equal(p->n, 3);
	assert_string_equal(fmt(&p->ev[0]), "cpu1 dsb ish");
	assert_string_equal(p->ev[2].text, "crlf");
}

/* A trace cut in the middle of its last line may still parse (pa=0x5000 cut
 * to pa=0): a last line without its newline is an error, at its end. */
static void test_last_line_without_newline_is_an_error(void **state)
{
	(void)state;
	struct parsed *p = parse("cpu0 isb\ncpu0 pt_write pa=0x5000 val=inv\n");
	assert_int_equal(p->rc, 0);
	assert_int_equal(p->n, 2);
	p = parse("cpu0 isb\ncpu0 pt_write pa=0x5000 val=inv");	/* complete by the grammar: still refused */
	assert_int_equal(p->rc, -1);
	assert_int_equal(p->n, 1);
	assert_int_equal(p->err.code, PT_ERR_SYNTAX);
	assert_string_equal(p->err.msg, "t.ptt:2:32: expected a newline at the end of the last line "
			    "(the file may be truncated)");
	p = parse("cpu0 isb\ncpu0 pt_write val=inv pa=0");	/* cut from pa=0x5000 */
	assert_int_equal(p->rc, -1);
	assert_int_equal(p->n, 1);
	assert_non_null(strstr(p->err.msg, "t.ptt:2:"));
	p = parse("cpu0 isb\r\n# cut comm");
	assert_int_equal(p->rc, -1);
	assert_int_equal(p->n, 1);
	p = parse("cpu0 isb\n  ");	/* blanks after the last newline are a cut line too */
	assert_int_equal(p->rc, -1);
	p = parse("@ptt version=1 cpus=2");	/* a header alone, cut */
	assert_int_equal(p->rc, -1);
	assert_int_equal(p->err.code, PT_ERR_SYNTAX);
	assert_non_null(strstr(p->err.msg, "t.ptt:1:22: expected a newline"));
}

static void test_header_is_optional_with_defaults(void **state)
{
	struct pt_header d;
	(void)state;

	pt_header_default(&d);
	struct parsed *p = parse("cpu3 isb\n");
	assert_int_equal(p->rc, 0);
	assert_memory_equal(&p->h, &d, sizeof(d));
	p = parse("@ptt version=1\ncpu3 isb\n");
	assert_int_equal(p->rc, 0);
	assert_memory_equal(&p->h, &d, sizeof(d));
	p = parse("");
	assert_int_equal(p->rc, 0);
	assert_int_equal(p->n, 0);
	assert_memory_equal(&p->h, &d, sizeof(d));
}

static void test_header_keys_any_order_strings_quoted_or_bare(void **state)
{
	(void)state;
	struct parsed *p = parse("@ptt machine=\"qemu \\\"virt\\\" \\\\ max\" cpus=0x2 kernel=6.1.0-28 "
				 "method=\"\" va_bits=48 granule=4096 version=1 # a trailing comment\n");
	assert_int_equal(p->rc, 0);
	assert_int_equal(p->h.cpus, 2);
	assert_string_equal(p->h.machine, "qemu \"virt\" \\ max");
	assert_string_equal(p->h.kernel, "6.1.0-28");
	assert_string_equal(p->h.method, "");

	char line[PT_MAX_LINE];
	pt_header_default(&p->h);	/* the canonical header line */
	struct pt_writer *w = pt_writer_open_mem(PT_ENC_TEXT, &p->h, &p->err);
	void *data;
	size_t size;
	assert_non_null(w);
	assert_int_equal(pt_writer_close_mem(w, &data, &size, &p->err), 0);
	snprintf(line, sizeof(line), "%.*s", (int)size, (char *)data);
	assert_string_equal(line, "@ptt version=1 granule=4K va_bits=48 cpus=4 method=hand kernel=\"\" machine=\"\"\n");
	free(data);
}

static void test_header_strings_survive_the_text_form(void **state)
{
	struct pt_header h;
	struct pt_error err = { 0 };
	void *data;
	size_t size;
	(void)state;

	pt_header_default(&h);
	h.cpus = 8;
	strcpy(h.kernel, "a \"quoted\" \\ back\\slash # not a comment");
	strcpy(h.machine, "m\xc3\xa4schine");
	strcpy(h.method, "qemu-plugin");
	struct pt_writer *w = pt_writer_open_mem(PT_ENC_TEXT, &h, &err);
	assert_non_null(w);
	assert_int_equal(pt_writer_close_mem(w, &data, &size, &err), 0);
	char *s = strndup(data, size);
	struct parsed *p = parse(s);
	assert_int_equal(p->rc, 0);
	assert_memory_equal(&p->h, &h, sizeof(h));
	free(s);
	free(data);
}

static void test_comments_before_the_header_stay_first(void **state)
{
	(void)state;
	struct parsed *p = parse("# title\n\n# more\n@ptt version=1 cpus=8\ncpu7 isb\n# after\n");
	assert_int_equal(p->rc, 0);
	assert_int_equal(p->h.cpus, 8);
	assert_int_equal(p->n, 4);
	assert_string_equal(p->ev[0].text, "title");
	assert_string_equal(p->ev[1].text, "more");
	assert_int_equal(p->ev[2].cpu, 7);
	assert_string_equal(p->ev[3].text, "after");
}

static void test_only_comments_beyond_the_preamble_limit_is_an_error(void **state)
{
	(void)state;
	size_t n = 0, cap = 1300 * 1024;
	char *s = malloc(cap + 1);
	while (n + 64 < cap) {	/* 64-byte comment lines */
		memset(s + n, 'c', 64);
		s[n] = '#';
		s[n + 63] = '\n';
		n += 64;
	}
	s[n] = '\0';
	struct parsed *p = parse(s);
	assert_int_equal(p->rc, -1);
	assert_int_equal(p->err.code, PT_ERR_HEADER);
	assert_non_null(strstr(p->err.msg, "t.ptt:"));
	/* the same block after the first event is fine: nothing is buffered then */
	memcpy(s, "cpu0 isb\n#", 10);
	p = parse(s);
	assert_int_equal(p->rc, 0);
	free(s);
}

static void test_reader_where_names_the_line_or_byte(void **state)
{
	struct pt_error err = { 0 };
	struct pt_event ev;
	const char *s = "# c\n\ncpu0 isb\n";
	(void)state;

	struct pt_reader *r = pt_reader_open_mem(s, strlen(s), "w.ptt", &err);
	assert_non_null(r);
	assert_int_equal(pt_reader_encoding(r), PT_ENC_TEXT);
	assert_int_equal(pt_reader_next(r, &ev, &err), 1);
	assert_string_equal(pt_reader_where(r), "line 1");
	assert_int_equal(pt_reader_next(r, &ev, &err), 1);
	assert_string_equal(pt_reader_where(r), "line 3");
	assert_int_equal(pt_reader_next(r, &ev, &err), 0);
	assert_int_equal(pt_reader_next(r, &ev, &err), 0);
	pt_reader_close(r);

	/* binary: the byte offset of the record in the decompressed stream */
	struct pt_header h;
	void *data;
	size_t size;
	pt_header_default(&h);
	struct pt_writer *w = pt_writer_open_mem(PT_ENC_BINARY, &h, &err);
	ev = one("cpu1 isb");
	assert_int_equal(pt_writer_put(w, &ev, &err), 0);
	assert_int_equal(pt_writer_put(w, &ev, &err), 0);
	assert_int_equal(pt_writer_close_mem(w, &data, &size, &err), 0);
	r = pt_reader_open_mem(data, size, "w.ptt.zst", &err);
	assert_non_null(r);
	assert_int_equal(pt_reader_encoding(r), PT_ENC_BINARY);
	assert_int_equal(pt_reader_next(r, &ev, &err), 1);
	assert_int_equal(pt_reader_next(r, &ev, &err), 1);
	/* header: 1 + 2 (version) + 3 (granule) + 2 (va_bits) + 2 (cpus) + 6 (method "hand") */
	assert_string_equal(pt_reader_where(r), "byte 21");
	pt_reader_close(r);
	free(data);
}

static void test_encoding_is_told_by_magic_not_name(void **state)
{
	struct pt_error err = { 0 };
	(void)state;
	assert_int_equal(pt_encoding_for_path("a.ptt.zst"), PT_ENC_BINARY);
	assert_int_equal(pt_encoding_for_path("a.ptt"), PT_ENC_TEXT);
	assert_int_equal(pt_encoding_for_path("zst"), PT_ENC_TEXT);
	/* three bytes of the magic are text (and not valid text) */
	struct pt_reader *r = pt_reader_open_mem("\x28\xb5\x2f", 3, "m", &err);
	assert_non_null(r);
	assert_int_equal(pt_reader_encoding(r), PT_ENC_TEXT);
	pt_reader_close(r);
	r = pt_reader_open_mem("\x28\xb5\x2f\xfd", 4, "m", &err);
	assert_null(r);
	assert_int_equal(err.code, PT_ERR_TRUNCATED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canonical_addresses_and_flags_are_hex),
		cmocka_unit_test(test_canonical_lengths_take_the_largest_exact_suffix),
		cmocka_unit_test(test_canonical_counts_in_length_fields_are_decimal),
		cmocka_unit_test(test_canonical_optional_keys_only_when_nonzero),
		cmocka_unit_test(test_prot_is_none_or_rwx_letters_in_any_order),
		cmocka_unit_test(test_val_takes_descriptor_syntax_or_raw_hex),
		cmocka_unit_test(test_keys_come_in_any_order_numbers_in_any_base),
		cmocka_unit_test(test_full_line_comment_is_an_event_trailing_comment_is_kept_with_its_event),
		cmocka_unit_test(test_blank_lines_tabs_and_crlf_are_accepted),
		cmocka_unit_test(test_last_line_without_newline_is_an_error),
		cmocka_unit_test(test_header_is_optional_with_defaults),
		cmocka_unit_test(test_header_keys_any_order_strings_quoted_or_bare),
		cmocka_unit_test(test_header_strings_survive_the_text_form),
		cmocka_unit_test(test_comments_before_the_header_stay_first),
		cmocka_unit_test(test_only_comments_beyond_the_preamble_limit_is_an_error),
		cmocka_unit_test(test_reader_where_names_the_line_or_byte),
		cmocka_unit_test(test_encoding_is_told_by_magic_not_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
