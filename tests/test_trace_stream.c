/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_trace_stream.c - readers and writers stream: millions of events go
 * through in constant memory, in both encodings.
 *
 * usage: test_trace_stream                 the tests (2 M events each way)
 *        test_trace_stream --bench [N]     decode throughput of N (10 M) small binary events
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "trace.h"

#define NEVENTS 2000000u
#define WARMUP 100000u
#define RSS_SLACK_KB (16 * 1024)	/* growth allowed after warm-up: buffers, not events */

static char path[128];

static long maxrss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Event i of the synthetic trace: the small arch events a real capture is made of. */
static struct pt_event synth(uint64_t i)
{
	struct pt_event ev = { .cpu = (uint16_t)(i % 4) };

	switch (i % 5) {
	case 0:
		ev.kind = PT_EV_PT_WRITE;
		ev.pa = 0x80000000ull + (i % 512) * 8;
		ev.val = (0x80200000ull + (i << 12 & 0xfffff000ull)) | 0x703;
		break;
	case 1:
		ev.kind = PT_EV_TLBI;
		ev.op = PT_TLBI_VALE1IS;
		ev.va = 0x400000ull + (i << 12 & 0xffffff000ull);
		ev.asid = (uint16_t)(i % 7);
		ev.level = 3;
		break;
	case 2:
		ev.kind = PT_EV_DSB;
		ev.op = PT_BAR_ISH;
		break;
	case 3:
		ev.kind = PT_EV_ISB;
		break;
	default:
		ev.kind = PT_EV_ACCESS;
		ev.va = 0x400000ull + (i << 12 & 0xffffff000ull);
		ev.asid = (uint16_t)(i % 7);
		break;
	}
	return ev;
}

static void write_trace(enum pt_encoding enc, uint64_t n)
{
	struct pt_header h;
	struct pt_error err = { 0 };
	long rss = 0;

	pt_header_default(&h);
	struct pt_writer *w = pt_writer_open(path, enc, &h, &err);
	if (!w)
		fail_msg("%s", err.msg);
	for (uint64_t i = 0; i < n; i++) {
		struct pt_event ev = synth(i);
		if (pt_writer_put(w, &ev, &err))
			fail_msg("%s", err.msg);
		if (i == WARMUP)
			rss = maxrss_kb();
	}
	if (pt_writer_close(w, &err))
		fail_msg("%s", err.msg);
	if (n > WARMUP && maxrss_kb() - rss > RSS_SLACK_KB)
		fail_msg("writing grew the RSS by %ld KiB", maxrss_kb() - rss);
}

/* Read it all back, checking each event; returns seconds spent. */
static double read_trace(enum pt_encoding enc, uint64_t n)
{
	struct pt_error err = { 0 };
	struct pt_event ev;
	uint64_t i = 0;
	long rss = 0;
	int rc;

	double t0 = now();
	struct pt_reader *r = pt_reader_open(path, &err);
	if (!r)
		fail_msg("%s", err.msg);
	assert_int_equal(pt_reader_encoding(r), enc);
	while ((rc = pt_reader_next(r, &ev, &err)) == 1) {
		struct pt_event want = synth(i);
		if (ev.kind != want.kind || ev.cpu != want.cpu || ev.va != want.va || ev.pa != want.pa ||
		    ev.val != want.val || ev.op != want.op || ev.asid != want.asid)
			fail_msg("event %llu differs", (unsigned long long)i);
		if (++i == WARMUP)
			rss = maxrss_kb();
	}
	double t = now() - t0;
	if (rc < 0)
		fail_msg("%s", err.msg);
	pt_reader_close(r);
	assert_int_equal(i, n);
	if (n > WARMUP && maxrss_kb() - rss > RSS_SLACK_KB)
		fail_msg("reading grew the RSS by %ld KiB", maxrss_kb() - rss);
	return t;
}

static void test_binary_streams_two_million_events_in_constant_memory(void **state)
{
	(void)state;
	write_trace(PT_ENC_BINARY, NEVENTS);
	double t = read_trace(PT_ENC_BINARY, NEVENTS);
	print_message("binary: %u events read back in %.3f s (%.1f M events/s, checks included)\n", NEVENTS, t,
		      NEVENTS / t / 1e6);
	unlink(path);
}

static void test_text_streams_two_million_events_in_constant_memory(void **state)
{
	(void)state;
	write_trace(PT_ENC_TEXT, NEVENTS);
	double t = read_trace(PT_ENC_TEXT, NEVENTS);
	print_message("text: %u events read back in %.3f s (%.1f M events/s, checks included)\n", NEVENTS, t,
		      NEVENTS / t / 1e6);
	unlink(path);
}

/* Decode only: what `ptfuzz replay` pays for reading a capture. */
static int bench(uint64_t n)
{
	struct pt_error err = { 0 };
	struct pt_event ev;
	double best = 1e9;

	write_trace(PT_ENC_BINARY, n);
	for (int round = 0; round < 3; round++) {
		uint64_t k = 0, sum = 0;
		double t0 = now();
		struct pt_reader *r = pt_reader_open(path, &err);
		if (!r)
			return fprintf(stderr, "%s\n", err.msg), 1;
		while (pt_reader_next(r, &ev, &err) == 1) {
			k++;
			sum += ev.va ^ ev.val;
		}
		pt_reader_close(r);
		double t = now() - t0;
		if (k != n)
			return fprintf(stderr, "read %llu of %llu events: %s\n", (unsigned long long)k,
				       (unsigned long long)n, err.msg), 1;
		if (t < best)
			best = t;
		printf("round %d: %llu events in %.3f s = %.1f M events/s (checksum %llx)\n", round,
		       (unsigned long long)k, t, k / t / 1e6, (unsigned long long)sum);
	}
	FILE *f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fclose(f);
	printf("best: %.1f M events/s; file %ld bytes (%.2f bytes/event)\n", n / best / 1e6, size,
	       (double)size / (double)n);
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_binary_streams_two_million_events_in_constant_memory),
		cmocka_unit_test(test_text_streams_two_million_events_in_constant_memory),
	};
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	snprintf(path, sizeof(path), "%.40s/ptfuzz-stream-%d.ptt", tmp, (int)getpid());
	if (argc >= 2 && !strcmp(argv[1], "--bench")) {
		snprintf(path, sizeof(path), "%.40s/ptfuzz-stream-%d.ptt.zst", tmp, (int)getpid());
		return bench(argc > 2 ? strtoull(argv[2], NULL, 0) : 10000000u);
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
