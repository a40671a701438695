/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bench_model.c - what the mm model costs.
 *
 *   ptfuzz-bench-model [OPS]
 *
 * (1) Mixed sequences: OPS ops-level events (default 200000) cycling through
 *     mmap, touch (4K, 64K mTHP and 2M THP folios), mprotect, mremap (PTE and
 *     PMD moves), madvise, pageout, munmap on one address space, and
 *     vmalloc / vfree in the kernel, on a bounded set of addresses; ops/s and
 *     the arch events per second the model produces and the machine checks.
 * (2) The heavy case of seed 004 #11: one 1 GiB mremap, PTE-aligned (the
 *     move writes 2 x 262,144 PTEs) and PMD-aligned (512 PMD entries), timed
 *     on its own.  Best of 3 (the machine is noisy).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct pt_session *new_session(void)
{
	struct pt_header h;
	pt_header_default(&h);
	return pt_session_new(&h);
}

static void op(struct pt_session *s, struct pt_event e)
{
	pt_session_event(s, &e);
}

#define RW (PT_PROT_READ | PT_PROT_WRITE)
#define SLOTS 8
#define SLOT(i) (0x10000000ull + (uint64_t)(i) * 0x10000000ull)	/* 256M apart */

/* One round of the mix on slot i (ops emitted: 12). */
static unsigned round_ops(struct pt_session *s, unsigned i, unsigned r)
{
	uint64_t a = SLOT(i), b = SLOT(i) + 0x8000000ull;	/* b: 128M above, PMD aligned */
	unsigned order = r % 3 == 0 ? 0 : r % 3 == 1 ? 4 : 9;
	uint64_t len = 4ull << 20;
	unsigned n = 0;
	op(s, (struct pt_event){ .kind = PT_EV_MMAP, .va = a, .len = len, .prot = RW, .asid = 1, .order = (uint8_t)order });
	op(s, (struct pt_event){ .kind = PT_EV_TOUCH, .va = a, .len = 1ull << 20, .asid = 1, .flags = PT_ACC_WRITE });
	op(s, (struct pt_event){ .kind = PT_EV_MPROTECT, .va = a, .len = 512ull << 10, .prot = PT_PROT_READ, .asid = 1 });
	op(s, (struct pt_event){ .kind = PT_EV_MPROTECT, .va = a, .len = 512ull << 10, .prot = RW, .asid = 1 });
	op(s, (struct pt_event){ .kind = PT_EV_MADVISE, .op = PT_ADV_DONTNEED, .va = a + (64 << 10), .len = 64 << 10, .asid = 1 });
	op(s, (struct pt_event){ .kind = PT_EV_PAGEOUT, .va = a + (256 << 10), .asid = 1 });
	/* PMD-aligned move of the whole region, then a PTE-level move of 64K back to a misaligned spot */
	op(s, (struct pt_event){ .kind = PT_EV_MREMAP, .va = a, .len = len, .va2 = b, .len2 = len, .asid = 1,
				 .flags = PT_MREMAP_MAYMOVE | PT_MREMAP_FIXED });
	op(s, (struct pt_event){ .kind = PT_EV_MREMAP, .va = b, .len = 64 << 10, .va2 = a + 0x1000, .len2 = 64 << 10,
				 .asid = 1, .flags = PT_MREMAP_MAYMOVE | PT_MREMAP_FIXED });
	op(s, (struct pt_event){ .kind = PT_EV_MUNMAP, .va = b, .len = len, .asid = 1 });
	op(s, (struct pt_event){ .kind = PT_EV_MUNMAP, .va = a, .len = len, .asid = 1 });
	uint64_t k = 0xffff800010000000ull + (uint64_t)i * 0x400000ull;
	op(s, (struct pt_event){ .kind = PT_EV_VMALLOC, .va = k, .len = (r % 2 ? 64ull : 16ull) << 10,
				 .flags = r % 4 == 0 ? PT_MAP_HUGE : 0 });
	op(s, (struct pt_event){ .kind = PT_EV_VFREE, .va = k });
	n = 12;
	return n;
}

static void mixed(uint64_t nops)
{
	double best = 1e9;
	uint64_t done = 0, events = 0;
	unsigned violations = 0;
	for (int rep = 0; rep < 3; rep++) {
		struct pt_session *s = new_session();
		double t0 = now();
		uint64_t n = 0;
		for (unsigned r = 0; n < nops; r++)
			n += round_ops(s, r % SLOTS, r / SLOTS);
		pt_session_finish(s);
		double t = now() - t0;
		if (t < best) {
			best = t;
			done = n;
			events = pt_session_counters(s)->model_events;
			violations = pt_session_nviolations(s);
		}
		pt_session_free(s);
	}
	printf("mixed ops: %" PRIu64 " ops in %.3f s: %.0f ops/s; %" PRIu64 " arch events from the model, %.2f M/s; "
	       "%u violations\n", done, best, (double)done / best, events, (double)events / best / 1e6, violations);
	printf("RESULT mixed ops=%" PRIu64 " s=%.4f ops_per_s=%.0f model_events=%" PRIu64 " violations=%u\n", done, best,
	       (double)done / best, events, violations);
	if (violations)
		exit(1);
}

/* A 1 GiB region faulted in, then moved by one mremap; returns the seconds of the mremap. */
enum align { A_PTE, A_PMD, A_PUD };

static double move_1g(enum align al, uint64_t *writes)
{
	double best = 1e9;
	for (int rep = 0; rep < 3; rep++) {
		struct pt_session *s = new_session();
		uint64_t src = 1ull << 30;
		uint64_t dst = (4ull << 30) + (al == A_PTE ? 0x1000 : al == A_PMD ? 0x200000 : 0);
		op(s, (struct pt_event){ .kind = PT_EV_MMAP, .va = src, .len = 1ull << 30, .prot = RW, .asid = 1,
					 .order = al == A_PTE ? 0 : 9 });
		op(s, (struct pt_event){ .kind = PT_EV_TOUCH, .va = src, .len = 1ull << 30, .asid = 1, .flags = PT_ACC_WRITE });
		uint64_t w0 = pt_session_counters(s)->per_op[PT_EV_MREMAP].pt_writes;
		double t0 = now();
		op(s, (struct pt_event){ .kind = PT_EV_MREMAP, .va = src, .len = 1ull << 30, .va2 = dst, .len2 = 1ull << 30,
					 .asid = 1, .flags = PT_MREMAP_MAYMOVE | PT_MREMAP_FIXED });
		double t = now() - t0;
		*writes = pt_session_counters(s)->per_op[PT_EV_MREMAP].pt_writes - w0;
		if (pt_session_nviolations(s)) {
			fprintf(stderr, "ptfuzz-bench-model: the 1 GiB move reported violations\n");
			exit(1);
		}
		pt_session_free(s);
		if (t < best)
			best = t;
	}
	return best;
}

int main(int argc, char **argv)
{
	uint64_t nops = argc > 1 ? strtoull(argv[1], NULL, 0) : 200000;
	mixed(nops);
	static const char *const names[] = { "pte", "pmd", "pud" };
	for (int al = A_PTE; al <= A_PUD; al++) {
		uint64_t w;
		double t = move_1g((enum align)al, &w);
		printf("1 GiB mremap, %s-aligned destination: %.4f s, %" PRIu64 " PT writes\n", names[al], t, w);
		printf("RESULT move1g align=%s s=%.4f pt_writes=%" PRIu64 "\n", names[al], t, w);
	}
	return 0;
}
