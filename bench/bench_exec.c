/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bench_exec.c - what one fuzzer-sized exec of the mm model costs.
 *
 *   ptfuzz-bench-exec [--reps N] [--execs N] [--seed N] [--mode fresh|reset|both] [--ops N]
 *                     [--breakdown] [--dump K] [--no-checkers]
 *
 * An exec is what a persistent-mode fuzz harness does per input: a session
 * for the program's header (pt_session_new(), or pt_session_reset() of the
 * previous exec's session), the program's ops-level events, and
 * pt_session_finish(), every checker on.  The programs are built directly as
 * struct pt_event arrays from a PRNG with a fixed seed (so two runs time the
 * same work): 1-4 CPUs; mmap + touch of 4K..2M regions (mostly 64K, folio
 * orders 0, 4 (64K mTHP) and 9 (2M THP)); mprotect of half a region; a
 * 2M-aligned THP mremap (MAYMOVE|FIXED); munmap of half a region; vmalloc of
 * 16K/64K (sometimes VM_ALLOW_HUGE_VMAP) and its vfree.
 *
 * Each program runs on CPUs with no scheduled thread, a vfree runs on its
 * vmalloc's CPU, and the op after a vfree runs on that CPU too: the default
 * model reports I1 (page-freed-while-mapped) when the pages of a vfree are
 * re-used by a user fault and freed by a munmap on another CPU before the
 * vfree's CPU executed a DSB (its lazily cleared PTEs are still in its store
 * buffer) - issue 7, item 7, which this benchmark is not about.  Every program is first
 * replayed once fresh and once after a reset and must give 0 violations and
 * the same state hash both ways; the benchmark exits 1 otherwise.
 *
 * --no-checkers times the execs with the machine's checkers detached
 * (pt_session_set_checkers()): the cost of the mm model and the machine alone, a floor
 * for what the checkers' cost can be traded against.  --dump K prints program K (0..63) of the --ops pool as a trace, for `ptfuzz stats` or
 * `ptfuzz replay --record` to show what the mix does.
 *
 * Rates are per core by CPU time (CLOCK_PROCESS_CPUTIME_ID), median of the
 * repetitions; each repetition runs `execs` execs cycling through a pool of
 * programs.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session.h"
#include "trace.h"

#define POOL 64			/* programs per size, cycled through */
#define MAX_OPS 32
#define MAX_REPS 64
#define SLOTS 8
#define SLOT(i) (0x10000000ull + (uint64_t)(i) * 0x10000000ull)	/* 256M apart, PMD aligned */
#define SLOT_MOVED 0x8000000ull	/* a THP mremap moves slot i 128M up (2M aligned) */
#define KSLOT(k) (0xffff800010000000ull + (uint64_t)(k) * 0x800000ull)	/* vmalloc areas, 8M apart */
#define RW (PT_PROT_READ | PT_PROT_WRITE)

struct program {
	struct pt_header h;
	struct pt_event ev[MAX_OPS];
	unsigned n;
};

static uint64_t rng_state;
static bool checkers = true;	/* --no-checkers clears it */

static uint64_t rnd(void)
{
	/* splitmix64: deterministic, and good enough to pick shapes */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned below(unsigned n) { return (unsigned)(rnd() % n); }

/* What the generator knows of a user region, to aim the next op at it. */
struct region {
	uint64_t va, len;
	unsigned order;
	bool live;
};

#define PAGE 4096ull

/* half a region, in whole pages */
static uint64_t half(uint64_t len) { return (len / 2 + PAGE - 1) & ~(PAGE - 1); }

static void push(struct program *p, struct pt_event e)
{
	if (p->n < MAX_OPS)
		p->ev[p->n++] = e;
}

/* mmap + touch of a new region in slot i: mostly 64K mTHP, sometimes 4K..16K small pages or a 2M THP */
static void gen_mmap(struct program *p, struct region *r, unsigned i, uint16_t cpu)
{
	unsigned pick = below(8);
	uint64_t len = pick < 5 ? 64 << 10 : pick == 5 ? 4 << 10 : pick == 6 ? 16 << 10 : 2 << 20;
	unsigned order = pick < 5 ? 4 : pick == 7 ? 9 : 0;
	r[i] = (struct region){ .va = SLOT(i), .len = len, .order = order, .live = true };
	push(p, (struct pt_event){ .kind = PT_EV_MMAP, .cpu = cpu, .va = SLOT(i), .len = len, .prot = RW,
				   .asid = 1, .order = (uint8_t)order });
	push(p, (struct pt_event){ .kind = PT_EV_TOUCH, .cpu = cpu, .va = SLOT(i), .len = len, .asid = 1,
				   .flags = PT_ACC_WRITE, .order = (uint8_t)order });
}

static void gen_program(struct program *p, unsigned nops)
{
	struct region r[SLOTS] = { 0 };
	unsigned next_k = 0;
	memset(p, 0, sizeof(*p));
	pt_header_default(&p->h);
	p->h.cpus = 1 + below(4);
	int after_vfree = -1;
	while (p->n < nops) {
		uint16_t cpu = (uint16_t)below(p->h.cpus);
		if (after_vfree >= 0)
			cpu = (uint16_t)after_vfree;
		after_vfree = -1;
		unsigned i = below(SLOTS), what = below(10);
		if (!r[i].live || what < 3) {
			if (r[i].live) {
				push(p, (struct pt_event){ .kind = PT_EV_MUNMAP, .cpu = cpu, .va = r[i].va,
							   .len = r[i].len, .asid = 1 });
				r[i].live = false;
			} else
				gen_mmap(p, r, i, cpu);
		} else if (what < 5) {
			push(p, (struct pt_event){ .kind = PT_EV_MPROTECT, .cpu = cpu, .va = r[i].va,
						   .len = half(r[i].len), .prot = PT_PROT_READ, .asid = 1 });
		} else if (what < 6 && r[i].len == 2 << 20 && r[i].va == SLOT(i)) {
			uint64_t to = SLOT(i) + SLOT_MOVED;
			push(p, (struct pt_event){ .kind = PT_EV_MREMAP, .cpu = cpu, .va = r[i].va, .len = r[i].len,
						   .va2 = to, .len2 = r[i].len, .asid = 1,
						   .flags = PT_MREMAP_MAYMOVE | PT_MREMAP_FIXED });
			r[i].va = to;
		} else if (what < 8) {
			/* munmap of the upper half: the lower half stays mapped (a single page goes whole) */
			uint64_t keep = r[i].len > PAGE ? half(r[i].len) : 0;
			push(p, (struct pt_event){ .kind = PT_EV_MUNMAP, .cpu = cpu, .va = r[i].va + keep,
						   .len = r[i].len - keep, .asid = 1 });
			r[i].len = keep;
			r[i].live = keep != 0;
		} else {
			uint64_t k = KSLOT(next_k++ % 16);
			push(p, (struct pt_event){ .kind = PT_EV_VMALLOC, .cpu = cpu, .va = k,
						   .len = (below(2) ? 64ull : 16ull) << 10,
						   .flags = below(4) == 0 ? PT_MAP_HUGE : 0 });
			push(p, (struct pt_event){ .kind = PT_EV_VFREE, .cpu = cpu, .va = k });
			after_vfree = cpu;
		}
	}
	p->n = nops;	/* a pair cut at the end keeps its first half: a vmalloc without vfree is fine */
}

static unsigned run(struct pt_session *s, const struct program *p)
{
	for (unsigned i = 0; i < p->n; i++)
		pt_session_event(s, &p->ev[i]);
	pt_session_finish(s);
	return pt_session_nviolations(s);
}

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A program as a trace one can replay with `ptfuzz replay` (a failing one, or --dump's). */
static void dump_to(FILE *out, const struct program *p)
{
	char line[512];
	fprintf(out, "@ptt version=1 granule=4K va_bits=48 cpus=%u method=hand\n", p->h.cpus);
	for (unsigned i = 0; i < p->n; i++) {
		pt_event_format_text(&p->ev[i], line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
}

static void dump(const struct program *p) { dump_to(stderr, p); }

/* Every program replays clean, and a reset session agrees with a fresh one. */
static int validate(const struct program *pool, unsigned npool, unsigned nops)
{
	struct pt_session *r = pt_session_new(&pool[npool - 1].h);
	int bad = 0;
	run(r, &pool[npool - 1]);
	for (unsigned i = 0; i < npool; i++) {
		struct pt_session *s = pt_session_new(&pool[i].h);
		unsigned nv = run(s, &pool[i]);
		pt_session_reset(r, &pool[i].h);
		unsigned nr = run(r, &pool[i]);
		if (nv || nr || pt_session_hash(s) != pt_session_hash(r)) {
			const struct pt_violation *v = nv ? pt_session_violation(s, 0) : NULL;
			fprintf(stderr, "ptfuzz-bench-exec: %u-op program %u (%u CPUs): %u violations fresh, %u after "
				"reset, hash %016" PRIx64 " / %016" PRIx64 "%s%s\n", nops, i, pool[i].h.cpus, nv, nr,
				pt_session_hash(s), pt_session_hash(r), v ? "; first: " : "", v ? v->signature : "");
			dump(&pool[i]);
			bad = 1;
		}
		pt_session_free(s);
	}
	pt_session_free(r);
	return bad;
}

/*
 * --breakdown: where an exec's time goes, by ops-level kind (and the reset and finish): CPU
 * nanoseconds of the thread (CLOCK_THREAD_CPUTIME_ID, so that a loaded machine's preemptions
 * are not counted; each read is a system call of a few hundred ns, included in the figures)
 * and arch events per op, over the pool.
 */
static double thread_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void breakdown(const struct program *pool, unsigned execs, unsigned nops)
{
	static double ns[PT_EV_KIND_COUNT + 1];
	static uint64_t n[PT_EV_KIND_COUNT + 1], arch[PT_EV_KIND_COUNT + 1];
	struct pt_session *s = pt_session_new(&pool[0].h);
	pt_session_set_checkers(s, checkers);
	double total = 0;
	memset(ns, 0, sizeof(ns));
	memset(n, 0, sizeof(n));
	memset(arch, 0, sizeof(arch));
	for (unsigned e = 0; e < execs; e++) {
		const struct program *p = &pool[e % POOL];
		double t = thread_ns();
		pt_session_reset(s, &p->h);
		double t1 = thread_ns();
		ns[0] += t1 - t;
		n[0]++;
		for (unsigned i = 0; i < p->n; i++) {
			uint64_t before = pt_session_counters(s)->model_events;
			double t0 = thread_ns();
			pt_session_event(s, &p->ev[i]);
			ns[p->ev[i].kind] += thread_ns() - t0;
			n[p->ev[i].kind]++;
			arch[p->ev[i].kind] += pt_session_counters(s)->model_events - before;
		}
		double t0 = thread_ns();
		pt_session_finish(s);
		ns[PT_EV_KIND_COUNT] += thread_ns() - t0;
		n[PT_EV_KIND_COUNT]++;
		total += thread_ns() - t;
	}
	pt_session_free(s);
	printf("%u-op programs, %u execs: %.0f ns per exec (thread CPU time)\n", nops, execs, total / execs);
	printf("| kind | per exec | ns each | share | arch events each |\n|---|---:|---:|---:|---:|\n");
	for (unsigned k = 0; k <= PT_EV_KIND_COUNT; k++) {
		if (!n[k])
			continue;
		const char *name = k == 0 ? "reset" : k == PT_EV_KIND_COUNT ? "finish" : pt_kind_name(k);
		printf("| %s | %.2f | %.0f | %.1f %% | %.1f |\n", name, (double)n[k] / execs, ns[k] / n[k],
		       100 * ns[k] / total, (double)arch[k] / n[k]);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One repetition: execs execs over the pool; returns execs per CPU second. */
static double rep_fresh(const struct program *pool, unsigned execs, unsigned *viol)
{
	double t0 = cpu_now();
	for (unsigned e = 0; e < execs; e++) {
		const struct program *p = &pool[e % POOL];
		struct pt_session *s = pt_session_new(&p->h);
		pt_session_set_checkers(s, checkers);
		*viol += run(s, p);
		pt_session_free(s);
	}
	return execs / (cpu_now() - t0);
}

static double rep_reset(const struct program *pool, unsigned execs, unsigned *viol)
{
	struct pt_session *s = pt_session_new(&pool[0].h);
	pt_session_set_checkers(s, checkers);
	double t0 = cpu_now();
	for (unsigned e = 0; e < execs; e++) {
		const struct program *p = &pool[e % POOL];
		pt_session_reset(s, &p->h);
		*viol += run(s, p);
	}
	double rate = execs / (cpu_now() - t0);
	pt_session_free(s);
	return rate;
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	unsigned reps = 5, execs = 0;
	uint64_t seed = 1;
	const char *mode = "both";
	int only = -1;	/* --ops: one program size (for a profiler) */
	bool by_kind = false;	/* --breakdown: time per ops-level kind instead of the rates */
	int dump_k = -1;	/* --dump K: print program K of the pool (with --ops) as a trace, and stop */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--execs") && i + 1 < argc)
			execs = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--mode") && i + 1 < argc)
			mode = argv[++i];
		else if (!strcmp(argv[i], "--ops") && i + 1 < argc)
			only = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--breakdown"))
			by_kind = true;
		else if (!strcmp(argv[i], "--no-checkers"))
			checkers = false;
		else if (!strcmp(argv[i], "--dump") && i + 1 < argc && atoi(argv[i + 1]) >= 0 &&
			 atoi(argv[i + 1]) < POOL)
			dump_k = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: ptfuzz-bench-exec [--reps N] [--execs N] [--seed N] "
				"[--mode fresh|reset|both] [--ops N] [--breakdown] [--dump K (0..%d)] [--no-checkers]\n",
				POOL - 1);
			return 2;
		}
	}
	if (dump_k >= 0 && only < 0) {
		fprintf(stderr, "ptfuzz-bench-exec: --dump needs --ops\n");
		return 2;
	}
	if (reps < 1 || reps > MAX_REPS) {
		fprintf(stderr, "ptfuzz-bench-exec: --reps must be 1..%d\n", MAX_REPS);
		return 2;
	}
	bool do_fresh = strcmp(mode, "reset"), do_reset = strcmp(mode, "fresh");
	static const unsigned sizes[] = { 0, 8, 16, 32 };
	static struct program pool[POOL];
	int bad = 0;

	if (dump_k < 0) {
		printf("per-exec speed: %u repetitions, median exec/s per core (CPU time), seed %" PRIu64 "%s\n",
		       reps, seed, checkers ? "" : ", checkers detached (--no-checkers)");
		printf("| ops | fresh (new + ops + finish + free) | reset (reset + ops + finish) | reset / fresh | "
		       "execs per rep |\n|---:|---:|---:|---:|---:|\n");
	}
	for (unsigned z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		unsigned nops = sizes[z];
		if (only >= 0 && nops != (unsigned)only)
			continue;
		rng_state = seed * 0x100000001b3ull + nops;
		for (unsigned i = 0; i < POOL; i++)
			gen_program(&pool[i], nops);
		if (dump_k >= 0) {
			dump_to(stdout, &pool[dump_k]);
			return 0;
		}
		if (validate(pool, POOL, nops)) {
			bad = 1;
			continue;
		}
		/* enough execs per repetition for ~0.1-0.3 s of CPU at today's speeds */
		unsigned n = execs ? execs : nops == 0 ? 20000 : nops <= 8 ? 4000 : nops <= 16 ? 2000 : 1000;
		if (by_kind) {
			breakdown(pool, n, nops);
			continue;
		}
		double fresh[MAX_REPS] = { 0 }, reset[MAX_REPS] = { 0 };
		unsigned viol = 0;
		/* interleaved, so that a change of machine load hits both alike */
		for (unsigned r = 0; r < reps; r++) {
			if (do_fresh)
				fresh[r] = rep_fresh(pool, n, &viol);
			if (do_reset)
				reset[r] = rep_reset(pool, n, &viol);
		}
		if (viol) {
			fprintf(stderr, "ptfuzz-bench-exec: %u violations while timing %u-op programs\n", viol, nops);
			bad = 1;
		}
		double mf = do_fresh ? median(fresh, reps) : 0, mr = do_reset ? median(reset, reps) : 0;
		printf("| %u | %.0f | %.0f | %.2f | %u |\n", nops, mf, mr, mf > 0 ? mr / mf : 0, n);
		printf("RESULT exec ops=%u fresh=%.0f reset=%.0f\n", nops, mf, mr);
		fflush(stdout);
	}
	return bad;
}
