/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_trace_frames.c - binary traces are written as bounded zstd frames,
 * each with its checksum, and the reader verifies a frame before it hands
 * out any of its events: a damaged byte anywhere gives either the undamaged
 * trace or an error at its frame, and never an event of the damaged frame.
 * Single-frame traces of older writers still read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zstd.h>

#include "trace.h"

#define FRAME_MAX (64u * 1024)	/* what the writer promises (binary.c BIN_FRAME) */
#define NEVENTS 20000u

struct trace {
	struct pt_event *ev;
	char (*text)[64];
	size_t n;
};

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Events zstd cannot squeeze much: stores of random descriptors, comments of random hex. */
static struct trace synth(size_t n)
{
	struct trace t = { calloc(n, sizeof(struct pt_event)), calloc(n, 64), n };
	uint64_t s = 0x9e3779b97f4a7c15ull;

	assert_non_null(t.ev);
	assert_non_null(t.text);
	for (size_t i = 0; i < n; i++) {
		struct pt_event *ev = &t.ev[i];
		switch (i % 3) {
		case 0:
			ev->kind = PT_EV_PT_WRITE;
			ev->cpu = (uint16_t)(i % 4);
			ev->pa = 0x40000000ull + (rng(&s) & 0xff8);
			ev->val = (rng(&s) & 0xfffffff000ull) | 0x703;
			break;
		case 1:
			ev->kind = PT_EV_COMMENT;
			snprintf(t.text[i], sizeof(t.text[i]), "event %zu %016llx", i, (unsigned long long)rng(&s));
			ev->text = t.text[i];
			break;
		default:
			ev->kind = PT_EV_ISB;
			ev->cpu = (uint16_t)(rng(&s) % 4);
			break;
		}
	}
	return t;
}

static void trace_free(struct trace *t)
{
	free(t->ev);
	free(t->text);
}

static uint8_t *encode(const struct trace *t, size_t *size)
{
	struct pt_header h;
	struct pt_error err = { 0 };
	void *data;

	pt_header_default(&h);
	struct pt_writer *w = pt_writer_open_mem(PT_ENC_BINARY, &h, &err);
	assert_non_null(w);
	for (size_t i = 0; i < t->n; i++)
		assert_int_equal(pt_writer_put(w, &t->ev[i], &err), 0);
	assert_int_equal(pt_writer_close_mem(w, &data, size, &err), 0);
	return data;
}

/* The whole zstd stream of buf decoded (malloc'd), its length in *n. */
static uint8_t *decompress_all(const uint8_t *buf, size_t size, size_t *n)
{
	ZSTD_DStream *zd = ZSTD_createDStream();
	size_t cap = 1 << 20;
	uint8_t *out = malloc(cap);
	ZSTD_inBuffer zi = { buf, size, 0 };
	ZSTD_outBuffer zo = { out, cap, 0 };
	size_t ret = 1;

	while (zi.pos < zi.size || ret != 0) {
		if (zo.pos == zo.size) {
			cap *= 2;
			out = realloc(out, cap);
			zo.dst = out;
			zo.size = cap;
		}
		ret = ZSTD_decompressStream(zd, &zo, &zi);
		assert_false(ZSTD_isError(ret));
	}
	ZSTD_freeDStream(zd);
	*n = zo.pos;
	return out;
}

static bool same_event(const struct pt_event *a, const struct pt_event *b)
{
	return a->kind == b->kind && a->cpu == b->cpu && a->pa == b->pa && a->val == b->val &&
	       !strcmp(a->text ? a->text : "", b->text ? b->text : "");
}

/*
 * Read buf: how many events came out, all of them the trace's own, in order
 * (-1 if one differs); *rc the last pt_reader_next() (or -1 if the header
 * did not read), err the error.
 */
static long read_back(const uint8_t *buf, size_t size, const struct trace *t, int *rc, struct pt_error *err)
{
	struct pt_reader *r = pt_reader_open_mem(buf, size, "t.ptt.zst", err);
	struct pt_event ev;
	long n = 0;

	*rc = -1;
	if (!r)
		return 0;
	while ((*rc = pt_reader_next(r, &ev, err)) == 1) {
		if ((size_t)n >= t->n || !same_event(&ev, &t->ev[n])) {
			pt_reader_close(r);
			return -1;
		}
		n++;
	}
	pt_reader_close(r);
	return n;
}

/* The frames of buf: their offsets (off[k]) and the events read through the end of frame k. */
struct frames {
	size_t n;
	size_t off[1024];
	long events[1024];
};

static void split(const uint8_t *buf, size_t size, const struct trace *t, struct frames *f)
{
	size_t pos = 0;
	f->n = 0;
	while (pos < size) {
		size_t fs = ZSTD_findFrameCompressedSize(buf + pos, size - pos);
		assert_false(ZSTD_isError(fs));
		assert_true(f->n < 1024);
		f->off[f->n] = pos;
		pos += fs;
		int rc;
		struct pt_error err = { 0 };
		f->events[f->n] = read_back(buf, pos, t, &rc, &err);
		if (rc != 0)
			fail_msg("the first %zu frames do not read cleanly: %s", f->n + 1, err.msg);
		f->n++;
	}
}

/* The frame byte pos of the file falls in. */
static size_t frame_of(const struct frames *f, size_t pos)
{
	size_t k = 0;
	while (k + 1 < f->n && f->off[k + 1] <= pos)
		k++;
	return k;
}

/* Where frame k ends: the next one's start, or the end of the file (size). */
static size_t frame_end(const struct frames *f, size_t k, size_t size)
{
	return k + 1 < f->n ? f->off[k + 1] : size;
}

/* A synthetic trace of NEVENTS, encoded into *buf (*size bytes) and split into its frames. */
static struct trace setup(uint8_t **buf, size_t *size, struct frames *f)
{
	struct trace t = synth(NEVENTS);
	*buf = encode(&t, size);
	split(*buf, *size, &t, f);
	return t;
}

static void test_writer_makes_bounded_frames_with_checksums(void **state)
{
	(void)state;
	size_t size;
	uint8_t *buf;
	struct frames f;
	struct trace t = setup(&buf, &size, &f);

	assert_true(f.n >= 4);
	for (size_t k = 0; k < f.n; k++) {
		size_t end = frame_end(&f, k, size);
		/* magic, then the frame header descriptor: bit 2 is Content_Checksum_flag (RFC 8878) */
		assert_memory_equal(buf + f.off[k], "\x28\xb5\x2f\xfd", 4);
		assert_true(buf[f.off[k] + 4] & 0x04);
		/* each frame decodes alone, to at most FRAME_MAX bytes of whole records */
		static uint8_t out[FRAME_MAX + 1];
		size_t got = ZSTD_decompress(out, sizeof(out), buf + f.off[k], end - f.off[k]);
		assert_false(ZSTD_isError(got));
		assert_true(got <= FRAME_MAX);
	}
	/* still one plain zstd stream: the frames decode as one */
	size_t whole;
	free(decompress_all(buf, size, &whole));
	assert_true(whole > 3 * FRAME_MAX);
	int rc;
	struct pt_error err = { 0 };
	assert_int_equal(read_back(buf, size, &t, &rc, &err), (long)NEVENTS);
	assert_int_equal(rc, 0);
	free(buf);
	trace_free(&t);
}

/* Damage one byte at pos (xor x): the undamaged trace, or an error at a frame and only the frames before it. */
static void check_flip(uint8_t *buf, size_t size, size_t pos, uint8_t x, const struct trace *t,
		       const struct frames *f, unsigned *errors)
{
	struct pt_error err = { 0 };
	int rc;

	buf[pos] ^= x;
	long n = read_back(buf, size, t, &rc, &err);
	buf[pos] ^= x;
	if (n < 0)
		fail_msg("flip 0x%02x at byte %zu: an event that is not the trace's was handed out", x, pos);
	if (rc == 0) {
		if ((size_t)n != t->n)
			fail_msg("flip 0x%02x at byte %zu: a clean end after %ld of %zu events", x, pos, n, t->n);
		return;
	}
	(*errors)++;
	/* the events handed out are the frames before the damaged one (k), or - when the flip left
	 * frame k's content as it was, e.g. it cleared its checksum flag - frame k too: read_back()
	 * has compared each event with the trace's own */
	size_t k = frame_of(f, pos);
	long before = k ? f->events[k - 1] : 0;
	if (n != before && n != f->events[k])
		fail_msg("flip 0x%02x at byte %zu (frame %zu at byte %zu): %ld events handed out, "
			 "expected the %ld of the frames before it: %s", x, pos, k, f->off[k], n, before, err.msg);
	if ((err.code == PT_ERR_ZSTD || err.code == PT_ERR_TRUNCATED) && !strstr(err.msg, "frame at byte "))
		fail_msg("flip 0x%02x at byte %zu: the error does not name its frame: %s", x, pos, err.msg);
	assert_null(strchr(err.msg, '\n'));
}

static void test_damage_is_reported_at_its_frame_and_none_of_it_is_read(void **state)
{
	(void)state;
	size_t size;
	uint8_t *buf;
	struct frames f;
	struct trace t = setup(&buf, &size, &f);
	unsigned errors = 0, flips = 0;

	for (size_t pos = 0; pos < size; pos++) {
		/* every byte of each frame's first 16 and last 8 (frame and block headers,
		 * checksum) two ways, every 401st byte elsewhere */
		size_t k = frame_of(&f, pos);
		size_t end = frame_end(&f, k, size);
		bool edge = pos - f.off[k] < 16 || end - pos <= 8;
		if (!edge && pos % 401)
			continue;
		check_flip(buf, size, pos, 0xff, &t, &f, &errors);
		flips++;
		if (edge) {
			check_flip(buf, size, pos, 0x01, &t, &f, &errors);
			flips++;
		}
	}
	/* nearly every flip is caught; the few that are not landed where nothing changes */
	print_message("%u flips over %zu frames, %u errors\n", flips, f.n, errors);
	assert_true(errors >= flips * 9 / 10);
	free(buf);
	trace_free(&t);
}

/* A truncated file: the frames before the cut, nothing of the cut one. */
static void test_truncation_delivers_whole_frames_only(void **state)
{
	(void)state;
	size_t size;
	uint8_t *buf;
	struct frames f;
	struct trace t = setup(&buf, &size, &f);

	for (size_t cut = 1; cut < size; cut += 1201) {
		struct pt_error err = { 0 };
		int rc;
		long n = read_back(buf, cut, &t, &rc, &err);
		size_t k = frame_of(&f, cut);
		long want = k ? f.events[k - 1] : 0;
		if (f.off[k] == cut)
			continue;	/* cut at a frame boundary: a clean shorter trace is all zstd can tell */
		if (cut < 16 && n == 0)
			continue;	/* not even the header */
		if (rc != -1 || n != want)
			fail_msg("cut at %zu (frame %zu): rc %d, %ld events, expected %ld: %s", cut, k, rc, n, want,
				 err.msg);
		if (err.code == PT_ERR_TRUNCATED && !strstr(err.msg, "frame at byte"))
			fail_msg("cut at %zu: %s", cut, err.msg);
	}
	free(buf);
	trace_free(&t);
}

/* A trace written as one zstd frame (before frames were bounded) still reads, large or small. */
static void test_single_frame_traces_still_read(void **state)
{
	(void)state;
	for (size_t n = 100; n <= 60000; n *= 600) {	/* one frame; and one over the reader's window */
		struct trace t = synth(n);
		size_t size;
		uint8_t *buf = encode(&t, &size);
		/* recompress its content as one frame, as the old writer did (streamed: no content size) */
		size_t raw_n;
		uint8_t *raw = decompress_all(buf, size, &raw_n);
		size_t cap = ZSTD_compressBound(raw_n);
		uint8_t *one = malloc(cap);
		ZSTD_CCtx *cc = ZSTD_createCCtx();
		ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
		ZSTD_inBuffer zi = { raw, raw_n, 0 };
		ZSTD_outBuffer zo = { one, cap, 0 };
		assert_false(ZSTD_isError(ZSTD_compressStream2(cc, &zo, &zi, ZSTD_e_continue)));
		assert_int_equal(ZSTD_compressStream2(cc, &zo, &zi, ZSTD_e_end), 0);
		ZSTD_freeCCtx(cc);
		assert_int_equal(ZSTD_findFrameCompressedSize(one, zo.pos), zo.pos);
		int rc;
		struct pt_error err = { 0 };
		assert_int_equal(read_back(one, zo.pos, &t, &rc, &err), (long)n);
		assert_int_equal(rc, 0);
		free(one);
		free(raw);
		free(buf);
		trace_free(&t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writer_makes_bounded_frames_with_checksums),
		cmocka_unit_test(test_damage_is_reported_at_its_frame_and_none_of_it_is_read),
		cmocka_unit_test(test_truncation_delivers_whole_frames_only),
		cmocka_unit_test(test_single_frame_traces_still_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
