/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_trace_errors.c - every class of malformed trace gives its numbered
 * error and one line that names the input and the place (byte offset,
 * compressed or decompressed, or line:column), and the events before the
 * error are still delivered.
 *
 * Each case is built here (binary cases by hand-encoding the .proto, so
 * they also check the contract) and is also a file in tests/data/malformed/
 * (written by `test_trace_errors --write-malformed DIR`), which the test
 * reads from disk as well, and which the fuzz regression runs replay.
 *
 * usage: test_trace_errors MALFORMED_DIR
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <zstd.h>

#include "trace.h"

static const char *malformed_dir;

/* ---- hand encoding of ptfuzz.proto ---- */

struct buf {
	uint8_t b[1 << 20];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	assert_true(b->n + n <= sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put_byte(struct buf *b, uint8_t c)
{
	put(b, &c, 1);
}

static void put_varint(struct buf *b, uint64_t v)
{
	while (v >= 0x80) {
		put_byte(b, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	put_byte(b, (uint8_t)v);
}

static void fv(struct buf *m, unsigned field, uint64_t v)	/* varint field */
{
	put_varint(m, field << 3);
	put_varint(m, v);
}

static void fs(struct buf *m, unsigned field, const char *s)	/* string field */
{
	put_varint(m, field << 3 | 2);
	put_varint(m, strlen(s));
	put(m, s, strlen(s));
}

static void record(struct buf *stream, const struct buf *m)
{
	put_varint(stream, m->n);
	put(stream, m->b, m->n);
}

/* Header fields: version 1, granule 2, va_bits 3, cpus 4, kernel 5, machine 6, method 7 */
static void header(struct buf *s, unsigned version, unsigned granule, unsigned va_bits, unsigned cpus)
{
	static struct buf m;	/* 1 MiB: static, not on the stack */
	m.n = 0;
	fv(&m, 1, version);
	fv(&m, 2, granule);
	fv(&m, 3, va_bits);
	fv(&m, 4, cpus);
	record(s, &m);	/* 10 bytes for the usual values: events start at byte 10 */
}

static void std_header(struct buf *s)
{
	header(s, 1, 4096, 48, 4);
	assert_int_equal(s->n, 10);
}

/* Event fields: kind 1, cpu 2, op 3, pa 4, val 5, va 6, len 7, asid 8, level 9, ... text 19 */
static void isb(struct buf *s, unsigned cpu)
{
	static struct buf m;
	m.n = 0;
	fv(&m, 1, 5);
	if (cpu)
		fv(&m, 2, cpu);
	record(s, &m);
}

static void zcompress(struct buf *out, const struct buf *in, int checksum, int window_log)
{
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 3);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, checksum);
	if (window_log)
		ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, window_log);
	ZSTD_inBuffer zi = { in->b, in->n, 0 };
	ZSTD_outBuffer zo = { out->b, sizeof(out->b), 0 };
	/* stream it (continue, then end), as the writer does: the frame header
	 * then carries the window size, not the content size */
	size_t r = ZSTD_compressStream2(cc, &zo, &zi, ZSTD_e_continue);
	assert_false(ZSTD_isError(r));
	r = ZSTD_compressStream2(cc, &zo, &zi, ZSTD_e_end);
	assert_false(ZSTD_isError(r));
	assert_int_equal(r, 0);
	out->n = zo.pos;
	ZSTD_freeCCtx(cc);
}

/* ---- the cases ---- */

struct kase {
	const char *file;
	enum pt_err code;
	const char *where;	/* after the name; '#' matches a number */
	int nvalid;		/* events delivered before the error; -1 any, -2 at least one */
	const char *text;	/* a text case, or NULL for build() */
	void (*build)(struct buf *out);
};

/* binary builders: raw is the decompressed stream, out the .ptt.zst */
#define BIN(name, body)                                        \
	static void name(struct buf *out)                      \
	{                                                      \
		static struct buf raw, m;                      \
		raw.n = 0;                                     \
		m.n = 0;                                       \
		(void)m;                                       \
		body;                                          \
		zcompress(out, &raw, 0, 0);                    \
	}

static void b_truncated_zstd(struct buf *out)
{
	static struct buf raw;
	raw.n = 0;
	std_header(&raw);
	for (int i = 0; i < 100; i++)
		isb(&raw, (unsigned)i % 4);
	zcompress(out, &raw, 1, 0);
	out->n -= 7;	/* cut into the last block */
}

static void b_corrupt_checksum(struct buf *out)
{
	static struct buf raw;
	raw.n = 0;
	std_header(&raw);
	for (int i = 0; i < 200000; i++)	/* 600 KB: five zstd blocks */
		isb(&raw, 0);
	zcompress(out, &raw, 1, 0);
	out->b[out->n - 1] ^= 0x55;	/* XXH64 content checksum */
}

static void b_garbage_after_frame(struct buf *out)
{
	static struct buf raw;
	raw.n = 0;
	std_header(&raw);
	for (int i = 0; i < 3; i++)
		isb(&raw, 0);
	zcompress(out, &raw, 1, 0);
	put(out, "garbage!", 8);
}

static void b_corrupt_block(struct buf *out)
{
	static struct buf raw;
	raw.n = 0;
	std_header(&raw);
	isb(&raw, 0);
	zcompress(out, &raw, 0, 0);
	/* frame header: magic(4) FHD(1) [window] ...; make the first block header reserved (type 3) */
	size_t fh = 4 + 1 + ((out->b[4] & 0x20) ? 0 : 1) + ((out->b[4] & 3) ? (1u << ((out->b[4] & 3) - 1)) : 0) +
		    ((out->b[4] >> 6) ? (1u << (out->b[4] >> 6)) : ((out->b[4] & 0x20) ? 1 : 0));
	out->b[fh] |= 0x06;
}

static void b_window_too_large(struct buf *out)
{
	static struct buf raw;
	raw.n = 0;
	std_header(&raw);
	isb(&raw, 0);
	zcompress(out, &raw, 0, 27);	/* asks for a 128 MiB window: refused before allocating */
}

BIN(b_varint_too_long, { std_header(&raw); isb(&raw, 0); for (int i = 0; i < 11; i++) put_byte(&raw, 0xff); })
BIN(b_varint_overflow, { std_header(&raw); for (int i = 0; i < 9; i++) put_byte(&raw, 0xff); put_byte(&raw, 0x02); })
BIN(b_length_over, { std_header(&raw); put_varint(&raw, PT_MAX_MESSAGE + 1); })
BIN(b_length_absurd, { std_header(&raw); put_varint(&raw, 1ull << 62); })
BIN(b_truncated_record, { std_header(&raw); isb(&raw, 1); put_varint(&raw, 20); put(&raw, "\x08\x05\x10\x01\x18", 5); })
BIN(b_truncated_varint, { std_header(&raw); isb(&raw, 1); put_byte(&raw, 0x80); })
BIN(b_protobuf_wire, { std_header(&raw); put_byte(&m, 0x0f); record(&raw, &m); })
BIN(b_protobuf_unknown_field, { std_header(&raw); fv(&m, 1, 5); fv(&m, 30, 1); record(&raw, &m); })
BIN(b_protobuf_bad_length, { std_header(&raw); fv(&m, 1, 22); put_byte(&m, 19 << 3 | 2); put_byte(&m, 50); put(&m, "abc", 3); record(&raw, &m); })
BIN(b_unknown_kind, { std_header(&raw); isb(&raw, 0); fv(&m, 1, 30); record(&raw, &m); })
BIN(b_kind_none, { std_header(&raw); record(&raw, &m); })
BIN(b_kind_negative, { std_header(&raw); fv(&m, 1, (uint64_t)-5); record(&raw, &m); })
BIN(b_unknown_op, { std_header(&raw); fv(&m, 1, 6); fv(&m, 3, 25); record(&raw, &m); })
BIN(b_op_on_kind_without_ops, { std_header(&raw); fv(&m, 1, 5); fv(&m, 3, 1); record(&raw, &m); })
BIN(b_version, { header(&raw, 2, 4096, 48, 4); isb(&raw, 0); })
BIN(b_header_cpus_zero, { header(&raw, 1, 4096, 48, 0); })
BIN(b_header_cpus_65, { header(&raw, 1, 4096, 48, 65); })
BIN(b_header_granule, { header(&raw, 1, 65536, 48, 4); })
BIN(b_header_va_bits, { header(&raw, 1, 4096, 52, 4); })
BIN(b_header_empty, { (void)raw; })
BIN(b_header_string, { fv(&m, 1, 1); fv(&m, 2, 4096); fv(&m, 3, 48); fv(&m, 4, 2); fs(&m, 5, "6.1\nrc1"); record(&raw, &m); })
BIN(b_header_long_string, { char s[200]; memset(s, 'k', 199); s[199] = 0; fv(&m, 1, 1); fv(&m, 2, 4096); fv(&m, 3, 48); fv(&m, 4, 2); fs(&m, 5, s); record(&raw, &m); })
BIN(b_field_not_allowed, { std_header(&raw); fv(&m, 1, 3); fv(&m, 6, 0x1000); record(&raw, &m); })
BIN(b_field_out_of_range, { std_header(&raw); fv(&m, 1, 6); fv(&m, 9, 4); record(&raw, &m); })
BIN(b_field_over_width, { std_header(&raw); fv(&m, 1, 20); fv(&m, 8, 70000); record(&raw, &m); })
BIN(b_comment_cpu, { std_header(&raw); fv(&m, 1, 22); fv(&m, 2, 1); fs(&m, 19, "x"); record(&raw, &m); })
BIN(b_comment_newline, { std_header(&raw); fv(&m, 1, 22); fs(&m, 19, "two\nlines"); record(&raw, &m); })
BIN(b_text_in_event, { std_header(&raw); fv(&m, 1, 5); fs(&m, 19, "an end-of-line\ncomment"); record(&raw, &m); })
BIN(b_cpu_over_header, { std_header(&raw); isb(&raw, 3); isb(&raw, 4); })

BIN(b_ref_migrate_to, { std_header(&raw); fv(&m, 1, 17); fv(&m, 7, 4); record(&raw, &m); })
BIN(b_ref_irq_exit, { std_header(&raw); fv(&m, 1, 15); fv(&m, 2, 1); record(&raw, &m); })
BIN(b_ref_thread_cpu_tid, { std_header(&raw); fv(&m, 1, 52); fv(&m, 13, 2); record(&raw, &m); })

/* a text case built here: one thread more than a trace may declare */
static void t_too_many_threads(struct buf *out)
{
	char line[64];
	for (unsigned i = 0; i <= PT_MAX_THREADS; i++) {
		int n = snprintf(line, sizeof(line), "cpu%u thread tid=%u\n", i % 4, 100 + i);
		put(out, line, (size_t)n);
	}
}

static char long_line[PT_MAX_LINE + 64];

static const struct kase cases[] = {
	/* ---- binary ---- */
	{ "bin-truncated-zstd.ptt.zst", PT_ERR_TRUNCATED, ": byte # (compressed): ", -1, NULL, b_truncated_zstd },
	{ "bin-corrupt-checksum.ptt.zst", PT_ERR_ZSTD, ": byte # (compressed): ", -2, NULL, b_corrupt_checksum },
	{ "bin-corrupt-block.ptt.zst", PT_ERR_ZSTD, ": byte # (compressed): ", 0, NULL, b_corrupt_block },
	{ "bin-garbage-after-frame.ptt.zst", PT_ERR_ZSTD, ": byte # (compressed): ", 3, NULL, b_garbage_after_frame },
	{ "bin-window-too-large.ptt.zst", PT_ERR_ZSTD, ": byte # (compressed): ", 0, NULL, b_window_too_large },
	{ "bin-varint-too-long.ptt.zst", PT_ERR_VARINT, ": byte 13 (decompressed): ", 1, NULL, b_varint_too_long },
	{ "bin-varint-overflow.ptt.zst", PT_ERR_VARINT, ": byte 10 (decompressed): ", 0, NULL, b_varint_overflow },
	{ "bin-length-over-limit.ptt.zst", PT_ERR_LENGTH, ": byte 10 (decompressed): ", 0, NULL, b_length_over },
	{ "bin-length-absurd.ptt.zst", PT_ERR_LENGTH, ": byte 10 (decompressed): ", 0, NULL, b_length_absurd },
	{ "bin-truncated-record.ptt.zst", PT_ERR_TRUNCATED, ": byte 15 (decompressed): ", 1, NULL, b_truncated_record },
	{ "bin-truncated-varint.ptt.zst", PT_ERR_TRUNCATED, ": byte 15 (decompressed): ", 1, NULL, b_truncated_varint },
	{ "bin-protobuf-wire-type.ptt.zst", PT_ERR_PROTOBUF, ": byte 10 (decompressed): ", 0, NULL, b_protobuf_wire },
	{ "bin-protobuf-unknown-field.ptt.zst", PT_ERR_PROTOBUF, ": byte 10 (decompressed): ", 0, NULL, b_protobuf_unknown_field },
	{ "bin-protobuf-bad-length.ptt.zst", PT_ERR_PROTOBUF, ": byte 10 (decompressed): ", 0, NULL, b_protobuf_bad_length },
	{ "bin-unknown-kind.ptt.zst", PT_ERR_UNKNOWN_KIND, ": byte 13 (decompressed): ", 1, NULL, b_unknown_kind },
	{ "bin-kind-none.ptt.zst", PT_ERR_UNKNOWN_KIND, ": byte 10 (decompressed): ", 0, NULL, b_kind_none },
	{ "bin-kind-negative.ptt.zst", PT_ERR_UNKNOWN_KIND, ": byte 10 (decompressed): ", 0, NULL, b_kind_negative },
	{ "bin-unknown-op.ptt.zst", PT_ERR_UNKNOWN_OP, ": byte 10 (decompressed): ", 0, NULL, b_unknown_op },
	{ "bin-op-on-kind-without-ops.ptt.zst", PT_ERR_FIELD, ": byte 10 (decompressed): ", 0, NULL, b_op_on_kind_without_ops },
	{ "bin-version.ptt.zst", PT_ERR_VERSION, ": byte 0 (decompressed): ", 0, NULL, b_version },
	{ "bin-header-cpus-zero.ptt.zst", PT_ERR_HEADER, ": byte 0 (decompressed): ", 0, NULL, b_header_cpus_zero },
	{ "bin-header-cpus-65.ptt.zst", PT_ERR_HEADER, ": byte 0 (decompressed): ", 0, NULL, b_header_cpus_65 },
	{ "bin-header-granule.ptt.zst", PT_ERR_HEADER, ": byte 0 (decompressed): ", 0, NULL, b_header_granule },
	{ "bin-header-va-bits.ptt.zst", PT_ERR_HEADER, ": byte 0 (decompressed): ", 0, NULL, b_header_va_bits },
	{ "bin-header-missing.ptt.zst", PT_ERR_HEADER, ": byte 0 (decompressed): ", 0, NULL, b_header_empty },
	{ "bin-header-control-char.ptt.zst", PT_ERR_HEADER, ": byte 0 (decompressed): ", 0, NULL, b_header_string },
	{ "bin-header-long-string.ptt.zst", PT_ERR_HEADER, ": byte 0 (decompressed): ", 0, NULL, b_header_long_string },
	{ "bin-field-not-allowed.ptt.zst", PT_ERR_FIELD, ": byte 10 (decompressed): ", 0, NULL, b_field_not_allowed },
	{ "bin-field-out-of-range.ptt.zst", PT_ERR_FIELD, ": byte 10 (decompressed): ", 0, NULL, b_field_out_of_range },
	{ "bin-field-over-width.ptt.zst", PT_ERR_FIELD, ": byte 10 (decompressed): ", 0, NULL, b_field_over_width },
	{ "bin-comment-with-cpu.ptt.zst", PT_ERR_FIELD, ": byte 10 (decompressed): ", 0, NULL, b_comment_cpu },
	{ "bin-comment-newline.ptt.zst", PT_ERR_FIELD, ": byte 10 (decompressed): ", 0, NULL, b_comment_newline },
	{ "bin-text-in-event.ptt.zst", PT_ERR_FIELD, ": byte 10 (decompressed): ", 0, NULL, b_text_in_event },
	{ "bin-cpu-over-header.ptt.zst", PT_ERR_CPU, ": byte 15 (decompressed): ", 1, NULL, b_cpu_over_header },
	{ "bin-ref-migrate-to-missing-cpu.ptt.zst", PT_ERR_REF, ": byte 10 (decompressed): ", 0, NULL, b_ref_migrate_to },
	{ "bin-ref-irq-exit-extra.ptt.zst", PT_ERR_REF, ": byte 10 (decompressed): ", 0, NULL, b_ref_irq_exit },
	{ "bin-ref-thread-cpu-tid.ptt.zst", PT_ERR_REF, ": byte 10 (decompressed): ", 0, NULL, b_ref_thread_cpu_tid },
	/* ---- text ---- */
	{ "syntax-not-an-event.ptt", PT_ERR_SYNTAX, ":2:1: ", 1, "cpu0 isb\nhello world\n", NULL },
	{ "syntax-word-not-key.ptt", PT_ERR_SYNTAX, ":1:10: ", 0, "cpu0 isb now\n", NULL },
	{ "syntax-duplicate-key.ptt", PT_ERR_SYNTAX, ":1:24: ", 0, "cpu0 pt_zero pa=0x1000 pa=0x2000\n", NULL },
	{ "syntax-no-kind.ptt", PT_ERR_SYNTAX, ":1:6: ", 0, "cpu0 # nothing\n", NULL },
	{ "syntax-line-too-long.ptt", PT_ERR_SYNTAX, ":3:4097: ", 2, NULL, NULL },	/* long_line */
	{ "syntax-control-char.ptt", PT_ERR_SYNTAX, ":2:3: ", 1, "cpu0 isb\n# bell\a here\n", NULL },
	{ "syntax-bad-utf8.ptt", PT_ERR_SYNTAX, ":1:3: ", 0, "# caf\xe9\n", NULL },
	{ "syntax-nul-byte.ptt", PT_ERR_SYNTAX, ":1:3: ", 0, "# a\0b\n", NULL },
	{ "unknown-kind.ptt", PT_ERR_UNKNOWN_KIND, ":1:6: ", 0, "cpu0 frobnicate\n", NULL },
	{ "unknown-op.ptt", PT_ERR_UNKNOWN_OP, ":1:11: ", 0, "cpu0 tlbi vae9is va=0x1000\n", NULL },
	{ "unknown-op-missing.ptt", PT_ERR_UNKNOWN_OP, ":1:9: ", 0, "cpu0 dsb\n", NULL },
	{ "missing-key.ptt", PT_ERR_MISSING, ":1:24: ", 0, "cpu0 pt_write pa=0x1000\n", NULL },
	{ "number-bad.ptt", PT_ERR_NUMBER, ":1:17: ", 0, "cpu0 pt_zero pa=0xzz\n", NULL },
	{ "number-empty.ptt", PT_ERR_NUMBER, ":1:17: ", 0, "cpu0 pt_zero pa=\n", NULL },
	{ "number-overflow.ptt", PT_ERR_NUMBER, ":1:17: ", 0, "cpu0 pt_zero pa=0x10000000000000000\n", NULL },
	{ "number-suffix-overflow.ptt", PT_ERR_NUMBER, ":1:22: ", 0, "cpu0 munmap va=0 len=16777216T\n", NULL },
	{ "number-bad-descriptor.ptt", PT_ERR_NUMBER, ":1:29: ", 0, "cpu0 pt_write pa=0x1000 val=pg@0x1001\n", NULL },
	{ "number-bad-prot.ptt", PT_ERR_NUMBER, ":1:32: ", 0, "cpu0 mprotect va=0 len=4K prot=rwq\n", NULL },
	{ "number-header.ptt", PT_ERR_NUMBER, ":1:14: ", 0, "@ptt version=one\n", NULL },
	{ "field-unknown-key.ptt", PT_ERR_FIELD, ":1:10: ", 0, "cpu0 isb va=0x1000\n", NULL },
	{ "field-out-of-range.ptt", PT_ERR_FIELD, ":1:22: ", 0, "cpu0 tlbi vae1is ttl=4\n", NULL },
	{ "field-prot-out-of-range.ptt", PT_ERR_FIELD, ":1:32: ", 0, "cpu0 mprotect va=0 len=4K prot=8\n", NULL },
	{ "cpu-over-header.ptt", PT_ERR_CPU, ":3:1: ", 1, "@ptt version=1 cpus=2\ncpu1 isb\ncpu2 isb\n", NULL },
	{ "cpu-huge.ptt", PT_ERR_CPU, ":1:1: ", 0, "cpu99999999999999999999999 isb\n", NULL },
	/* references the trace cannot keep: located at the key (or the kind) that makes them */
	{ "ref-migrate-to-missing-cpu.ptt", PT_ERR_REF, ":3:20: ", 1, "@ptt version=1 cpus=2\ncpu0 switch tid=5\ncpu0 migrate tid=5 to=2\n", NULL },
	{ "ref-migrate-unknown-tid.ptt", PT_ERR_REF, ":2:14: ", 0, "@ptt version=1 cpus=2\ncpu0 migrate tid=7 to=1\n", NULL },
	{ "ref-sched-unknown-tid.ptt", PT_ERR_REF, ":2:16: ", 1, "cpu0 thread tid=10\ncpu0 sched any tid=11\n", NULL },
	{ "ref-sched-cpu-thread.ptt", PT_ERR_REF, ":1:16: ", 0, "cpu0 sched any tid=1\n", NULL },
	{ "ref-irq-exit-extra.ptt", PT_ERR_REF, ":3:6: ", 2, "cpu1 irq_enter\ncpu1 irq_exit\ncpu1 irq_exit\n", NULL },
	{ "ref-irq-exit-other-cpu.ptt", PT_ERR_REF, ":2:6: ", 1, "cpu0 irq_enter\ncpu1 irq_exit\n", NULL },
	{ "ref-thread-cpu-tid.ptt", PT_ERR_REF, ":2:13: ", 0, "@ptt version=1 cpus=4\ncpu0 thread tid=3\n", NULL },
	{ "ref-thread-twice.ptt", PT_ERR_REF, ":2:13: ", 1, "cpu0 thread tid=10\ncpu1 thread tid=10\n", NULL },
	{ "ref-thread-idle-tid.ptt", PT_ERR_REF, ":1:13: ", 0, "cpu0 thread tid=0x7fffffff\n", NULL },
	{ "ref-thread-too-many.ptt", PT_ERR_REF, ":65:13: ", 64, NULL, t_too_many_threads },
	{ "header-version.ptt", PT_ERR_VERSION, ":1:6: ", 0, "@ptt version=2\ncpu0 isb\n", NULL },
	{ "header-cpus-zero.ptt", PT_ERR_HEADER, ":1:16: ", 0, "@ptt version=1 cpus=0\n", NULL },
	{ "header-cpus-65.ptt", PT_ERR_HEADER, ":1:16: ", 0, "@ptt version=1 cpus=65\n", NULL },
	{ "header-granule.ptt", PT_ERR_HEADER, ":1:16: ", 0, "@ptt version=1 granule=16K\n", NULL },
	{ "header-va-bits.ptt", PT_ERR_HEADER, ":1:16: ", 0, "@ptt version=1 va_bits=52\n", NULL },
	{ "header-lpa2-two.ptt", PT_ERR_HEADER, ":1:16: ", 0, "@ptt version=1 lpa2=2\n", NULL },
	{ "header-va-bits-52-lpa2-0.ptt", PT_ERR_HEADER, ":1:16: ", 0, "@ptt version=1 va_bits=52 lpa2=0\n", NULL },
	{ "lpa2-range-tlbi-not-64k.ptt", PT_ERR_FIELD, ":3:19: ", 1,
	  "@ptt version=1 va_bits=52 lpa2=1\ncpu0 tlbi rvae1is va=0x10000 num=0 scale=0\n"
	  "cpu0 tlbi rvae1is va=0x11000 num=0 scale=0\n", NULL },
	{ "lpa2-ops-level.ptt", PT_ERR_FIELD, ":2:6: ", 0, "@ptt version=1 va_bits=52 lpa2=1\ncpu0 munmap va=0 len=4K\n",
	  NULL },
	{ "header-not-first.ptt", PT_ERR_HEADER, ":3:1: ", 2, "# fine\ncpu0 isb\n@ptt version=1\n", NULL },
	{ "header-unknown-key.ptt", PT_ERR_HEADER, ":1:16: ", 0, "@ptt version=1 colour=blue\n", NULL },
	{ "header-duplicate-key.ptt", PT_ERR_HEADER, ":1:23: ", 0, "@ptt version=1 cpus=2 cpus=3\n", NULL },
	{ "header-no-version.ptt", PT_ERR_HEADER, ":2:1: ", 0, "# comment first\n@ptt cpus=2\n", NULL },
	{ "header-unterminated.ptt", PT_ERR_HEADER, ":1:23: ", 0, "@ptt version=1 kernel=\"6.1\n", NULL },
	{ "header-bad-escape.ptt", PT_ERR_HEADER, ":1:25: ", 0, "@ptt version=1 kernel=\"a\\nb\"\n", NULL },
	{ "header-long-string.ptt", PT_ERR_HEADER, ":1:23: ", 0,
	  "@ptt version=1 method=0123456789012345678901234567890123456789012345678901234567890123456789\n", NULL },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* The bytes of a case. */
static size_t case_bytes(const struct kase *k, struct buf *out)
{
	out->n = 0;
	if (k->build) {
		k->build(out);
	} else if (k->text) {
		/* text cases may hold a NUL: their length is up to the last newline */
		size_t n = strlen(k->text);
		if (!strcmp(k->file, "syntax-nul-byte.ptt"))
			n = 6;
		put(out, k->text, n);
	} else {
		/* syntax-line-too-long: two events, then a comment line longer than PT_MAX_LINE */
		put(out, "cpu0 isb\n# ok\n", 14);
		memset(long_line, 'x', sizeof(long_line) - 1);
		long_line[0] = '#';
		long_line[sizeof(long_line) - 2] = '\n';
		put(out, long_line, sizeof(long_line) - 1);
	}
	return out->n;
}

/* s matches pat where '#' is one or more digits; returns the rest of s or NULL. */
static const char *match(const char *s, const char *pat)
{
	for (; *pat; pat++) {
		if (*pat == '#') {
			if (*s < '0' || *s > '9')
				return NULL;
			while (*s >= '0' && *s <= '9')
				s++;
		} else if (*s++ != *pat) {
			return NULL;
		}
	}
	return s;
}

/* Run a reader over the case; check the code, the place, the events before, stickiness. */
static void check_reader(const struct kase *k, struct pt_reader *r, struct pt_error *err, const char *name)
{
	int n = 0, rc = -1;
	struct pt_event ev;

	if (r) {
		while ((rc = pt_reader_next(r, &ev, err)) == 1)
			n++;
	}
	if (rc != -1 || err->code != k->code)
		fail_msg("%s: expected error %s (%d), got rc %d code %s (%d): %s", k->file, pt_err_name(k->code),
			 k->code, rc, pt_err_name(err->code), err->code, err->msg);
	size_t nl = strlen(name);
	const char *rest = !strncmp(err->msg, name, nl) ? match(err->msg + nl, k->where) : NULL;
	if (!rest)
		fail_msg("%s: expected the message to start with \"%s%s\", got: %s", k->file, name, k->where,
			 err->msg);
	if (!strstr(rest, "expected"))
		fail_msg("%s: the message does not say what was expected: %s", k->file, err->msg);
	assert_null(strchr(err->msg, '\n'));
	if (k->nvalid == -2 && n < 1)
		fail_msg("%s: expected events before the error, got none", k->file);
	if (k->nvalid >= 0 && n != k->nvalid)
		fail_msg("%s: expected %d events before the error, got %d", k->file, k->nvalid, n);
	if (r) {
		struct pt_error again = { 0 };
		assert_int_equal(pt_reader_next(r, &ev, &again), -1);
		assert_int_equal(again.code, k->code);
		assert_int_equal(pt_reader_next(r, &ev, &again), -1);
		pt_reader_close(r);
	}
}

static void test_each_malformed_input_gives_its_error_and_place(void **state)
{
	static struct buf b;
	(void)state;

	for (size_t i = 0; i < NCASES; i++) {
		struct pt_error err = { 0 };
		size_t n = case_bytes(&cases[i], &b);
		struct pt_reader *r = pt_reader_open_mem(b.b, n, cases[i].file, &err);
		check_reader(&cases[i], r, &err, cases[i].file);
	}
}

static void test_each_malformed_file_gives_its_error_and_place(void **state)
{
	static struct buf b;
	char path[1024];
	(void)state;

	for (size_t i = 0; i < NCASES; i++) {
		struct pt_error err = { 0 };
		snprintf(path, sizeof(path), "%s/%s", malformed_dir, cases[i].file);
		/* the file on disk is the case: regenerate with --write-malformed if this fails */
		FILE *f = fopen(path, "rb");
		if (!f)
			fail_msg("%s: missing; run test_trace_errors --write-malformed %s", path, malformed_dir);
		size_t n = case_bytes(&cases[i], &b);
		uint8_t *disk = malloc(n + 1);
		size_t got = fread(disk, 1, n + 1, f);
		fclose(f);
		if (got != n || memcmp(disk, b.b, n))
			fail_msg("%s: differs from the case; run test_trace_errors --write-malformed %s", path,
				 malformed_dir);
		free(disk);
		struct pt_reader *r = pt_reader_open(path, &err);
		check_reader(&cases[i], r, &err, path);
	}
}

/* The error is the first thing a reader says: a file that does not exist, an empty stream. */
static void test_missing_file_is_an_io_error_naming_it(void **state)
{
	struct pt_error err = { 0 };
	(void)state;

	assert_null(pt_reader_open("/nonexistent/dir/x.ptt", &err));
	assert_int_equal(err.code, PT_ERR_IO);
	assert_non_null(strstr(err.msg, "/nonexistent/dir/x.ptt"));
}

/* Every error code has a stable name; the numbers are the ABI. */
static void test_error_codes_are_stable(void **state)
{
	(void)state;
	assert_int_equal(PT_ERR_ZSTD, 2);
	assert_int_equal(PT_ERR_TRUNCATED, 3);
	assert_int_equal(PT_ERR_CPU, 15);
	assert_int_equal(PT_ERR_USAGE, 17);
	assert_int_equal(PT_ERR_REF, 18);
	for (int c = PT_OK; c <= PT_ERR_REF; c++)
		assert_string_not_equal(pt_err_name(c), "?");
	assert_string_equal(pt_err_name(99), "?");
}

static int write_malformed(const char *dir)
{
	static struct buf b;
	char path[1024];

	for (size_t i = 0; i < NCASES; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, cases[i].file);
		size_t n = case_bytes(&cases[i], &b);
		FILE *f = fopen(path, "wb");
		if (!f || fwrite(b.b, 1, n, f) != n || fclose(f)) {
			perror(path);
			return 1;
		}
	}
	printf("wrote %zu cases to %s\n", NCASES, dir);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_malformed_input_gives_its_error_and_place),
		cmocka_unit_test(test_each_malformed_file_gives_its_error_and_place),
		cmocka_unit_test(test_missing_file_is_an_io_error_naming_it),
		cmocka_unit_test(test_error_codes_are_stable),
	};

	if (argc == 3 && !strcmp(argv[1], "--write-malformed"))
		return write_malformed(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: %s MALFORMED_DIR | --write-malformed DIR\n", argv[0]);
		return 2;
	}
	malformed_dir = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
