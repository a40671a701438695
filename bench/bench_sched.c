/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bench_sched.c - what interleaving model threads costs.
 *
 *   ptfuzz-bench-sched [RACE_TRACE]
 *
 * (1) Context switches: T threads fault in pages of their own regions, the
 *     schedule switching thread after every scheduling point (`sched any
 *     steps=1`), against the same ops run to completion without threads.
 *     The difference divided by the number of switches is the cost of one
 *     switch (out of a thread and back in), measured in one run.
 * (2) A race trace (a three-CPU reproducer) replayed repeatedly from memory.
 * Each measurement is the best of 5 (the machine is noisy).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coro.h"
#include "session.h"
#include "trace.h"

#define THREADS 3
#define PAGES 2048	/* pages each thread faults in */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void ev(struct pt_session *s, struct pt_event e)
{
	pt_session_event(s, &e);
}

/* Returns seconds; *switches gets the number of slices run. */
static double run(bool threaded, uint64_t *switches)
{
	struct pt_header h;
	pt_header_default(&h);
	struct pt_session *s = pt_session_new(&h);
	double t0 = now();
	for (unsigned i = 0; i < THREADS; i++) {
		struct pt_event m = { .kind = PT_EV_MMAP, .cpu = (uint16_t)i, .va = 0x10000000ull + i * 0x10000000ull,
				      .len = PAGES * 4096ull, .prot = PT_PROT_READ | PT_PROT_WRITE, .asid = 1 };
		ev(s, m);
	}
	for (unsigned i = 0; i < THREADS && threaded; i++) {
		struct pt_event th = { .kind = PT_EV_THREAD, .cpu = (uint16_t)i, .tid = 100 + i, .asid = 1 };
		ev(s, th);
	}
	for (unsigned i = 0; i < THREADS; i++) {
		struct pt_event tc = { .kind = PT_EV_TOUCH, .cpu = (uint16_t)i, .va = 0x10000000ull + i * 0x10000000ull,
				       .len = PAGES * 4096ull, .asid = 1, .flags = PT_ACC_WRITE };
		ev(s, tc);
	}
	uint64_t n = 0;
	if (threaded) {
		/* round robin, one scheduling point per slice, while anything is left to run (reads are
		 * scheduling points that emit no event: a long run of slices without events means done) */
		uint64_t before = pt_session_counters(s)->model_events, idle = 0;
		for (unsigned i = 0; idle < 64 * THREADS; i = (i + 1) % THREADS) {
			struct pt_event sc = { .kind = PT_EV_SCHED, .cpu = (uint16_t)i, .tid = 100 + i, .len = 1 };
			ev(s, sc);
			n++;
			uint64_t after = pt_session_counters(s)->model_events;
			idle = after == before ? idle + 1 : 0;
			before = after;
		}
	}
	pt_session_finish(s);
	double t = now() - t0;
	if (pt_session_nviolations(s)) {
		fprintf(stderr, "ptfuzz-bench-sched: %u violations (the benchmark trace must be clean)\n",
			pt_session_nviolations(s));
		exit(1);
	}
	pt_session_free(s);
	*switches = n;
	return t;
}

static double best(bool threaded, uint64_t *switches)
{
	double b = 1e9;
	for (int r = 0; r < 5; r++) {
		double t = run(threaded, switches);
		if (t < b)
			b = t;
	}
	return b;
}

/* Replay a trace file from memory events, best of 5, returns seconds per replay. */
static double race(const char *path, uint64_t *events, unsigned *violations)
{
	struct pt_error err;
	struct pt_reader *r = pt_reader_open(path, &err);
	if (!r) {
		fprintf(stderr, "%s\n", err.msg);
		exit(2);
	}
	struct pt_header h = *pt_reader_header(r);
	struct pt_event *evs = NULL;
	size_t n = 0, cap = 0;
	struct pt_event e;
	while (pt_reader_next(r, &e, &err) == 1) {
		if (e.kind == PT_EV_COMMENT)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			evs = realloc(evs, cap * sizeof(*evs));
			if (!evs)
				abort();
		}
		evs[n++] = e;
	}
	pt_reader_close(r);
	/* the variant the reproducer is for comes from its `# variant:` line: reread it */
	char variant[64] = "";
	FILE *f = fopen(path, "r");
	char line[512];
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "# variant: %63s", variant) == 1)
			break;
	if (f)
		fclose(f);
	double b = 1e9;
	for (int rep = 0; rep < 5; rep++) {
		double t0 = now();
		unsigned reps = 200;
		for (unsigned k = 0; k < reps; k++) {
			struct pt_session *s = pt_session_new(&h);
			if (variant[0])
				pt_session_set_variant(s, variant);
			for (size_t i = 0; i < n; i++)
				pt_session_event(s, &evs[i]);
			pt_session_finish(s);
			*violations = pt_session_nviolations(s);
			*events = pt_session_counters(s)->events + pt_session_counters(s)->model_events;
			pt_session_free(s);
		}
		double t = (now() - t0) / reps;
		if (t < b)
			b = t;
	}
	free(evs);
	return b;
}

/* The raw switch: two coroutines handing over to each other. */
static struct coro main_co, ping;
static volatile uint64_t pings;

static void ping_body(void *arg)
{
	(void)arg;
	for (;;) {
		pings++;
		coro_switch(&ping, &main_co);
	}
}

static double raw_switch(uint64_t n)
{
	coro_main(&main_co);
	coro_init(&ping, 64 << 10, ping_body, NULL);
	double b = 1e9;
	for (int r = 0; r < 5; r++) {
		double t0 = now();
		for (uint64_t i = 0; i < n; i++)
			coro_switch(&main_co, &ping);
		double t = now() - t0;
		if (t < b)
			b = t;
	}
	coro_free(&ping);
	return b / (double)n / 2;	/* two switches per round trip */
}

int main(int argc, char **argv)
{
	double raw = raw_switch(2000000);
	printf("raw coroutine switch: %.1f ns\n", raw * 1e9);
	printf("RESULT coro ns_per_switch=%.1f\n", raw * 1e9);
	uint64_t sw = 0, none = 0;
	double tt = best(true, &sw), tn = best(false, &none);
	printf("context switches: %u threads x %u page faults, one scheduling point per slice\n", THREADS, PAGES);
	printf("  threaded   %.3f s, %" PRIu64 " slices\n", tt, sw);
	printf("  sequential %.3f s (the same ops run to completion)\n", tn);
	double per = (tt - tn) / (double)sw;
	printf("  switch cost: %.0f ns per slice (out and back in), %.2f M slices/s\n", per * 1e9,
	       per > 0 ? 1e-6 / per : 0.0);
	printf("RESULT sched threads=%u slices=%" PRIu64 " threaded_s=%.4f sequential_s=%.4f ns_per_slice=%.0f\n",
	       THREADS, sw, tt, tn, per * 1e9);
	if (argc > 1) {
		uint64_t events = 0;
		unsigned v = 0;
		double t = race(argv[1], &events, &v);
		printf("race trace %s: %.1f us per replay (%" PRIu64 " events incl. the model's, %u violation%s)\n",
		       argv[1], t * 1e6, events, v, v == 1 ? "" : "s");
		printf("RESULT race file=%s us=%.1f events=%" PRIu64 " violations=%u\n", argv[1], t * 1e6, events, v);
	}
	return 0;
}
