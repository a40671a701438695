/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_program.c - the ops-level fuzz input (fuzzers/program.h) and its
 * mutators: any bytes decode to a valid program, deterministically; a decoded
 * program encodes to an input that decodes to exactly it; every corpus trace
 * the grammar holds goes trace -> input -> trace unchanged; mutations and the
 * AFL++ trim move whole records.
 *
 * usage: test_program CORPUS_DIR...   (the traces for the round trip)
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "ops_mutator.h"
#include "program.h"
#include "trace.h"

int32_t afl_custom_init_trim(void *data, uint8_t *buf, size_t buf_size);
size_t afl_custom_trim(void *data, uint8_t **out_buf);
int32_t afl_custom_post_trim(void *data, uint8_t success);
void *afl_custom_init(void *afl, unsigned int seed);
void afl_custom_deinit(void *data);

static char **dirs;
static int ndirs;

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static size_t random_input(uint8_t *buf, size_t max, uint64_t *s)
{
	size_t n = rnd(s) % max;
	for (size_t i = 0; i < n; i++)
		buf[i] = (uint8_t)rnd(s);
	/* some literal-looking records too */
	if (n > 8 && rnd(s) % 4 == 0)
		buf[1 + rnd(s) % (n - 1)] = PT_PROG_LITERAL;
	return n;
}

static bool same_events(const struct pt_event *a, const struct pt_event *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct pt_event x = a[i], y = b[i];
		x.text = y.text = NULL;
		if (memcmp(&x, &y, sizeof(x)))
			return false;
	}
	return true;
}

/* What a valid program is: events of the schema, threads with fresh tids above the CPUs,
 * sched / migrate naming threads that exist. */
static void assert_valid(const struct pt_program *p, unsigned max_ops)
{
	uint32_t tids[8];
	unsigned nt = 0;
	assert_in_range(p->h.cpus, 1, PT_PROG_MAX_CPUS);
	assert_true(p->n <= max_ops);
	for (unsigned i = 0; i < p->n; i++) {
		const struct pt_event *e = &p->ev[i];
		assert_true(pt_event_valid(e, p->h.cpus));
		if (e->kind == PT_EV_THREAD) {
			assert_true(e->tid >= p->h.cpus);
			for (unsigned j = 0; j < nt; j++)
				assert_int_not_equal(tids[j], e->tid);
			assert_true(nt < 8);
			tids[nt++] = e->tid;
		}
		if (e->kind == PT_EV_SCHED || e->kind == PT_EV_MIGRATE) {
			bool known = false;
			for (unsigned j = 0; j < nt; j++)
				known |= tids[j] == e->tid;
			assert_true(known);
		}
		if (e->kind == PT_EV_MIGRATE)
			assert_true(e->len < p->h.cpus);
		if (e->kind == PT_EV_TOUCH)
			assert_true(e->len <= PT_PROG_MAX_TOUCH);
		if (e->kind == PT_EV_MMAP || e->kind == PT_EV_MREMAP)
			assert_true(e->len <= PT_PROG_MAX_LEN && e->len2 <= PT_PROG_MAX_LEN);
	}
}

static void test_any_bytes_decode_to_a_valid_program(void **state)
{
	(void)state;
	static uint8_t buf[2048];
	struct pt_program p, q;
	uint64_t s = 0x1234567;
	pt_program_init(&p);
	pt_program_init(&q);
	unsigned nonempty = 0;
	for (int it = 0; it < 20000; it++) {
		size_t n = random_input(buf, sizeof(buf), &s);
		pt_program_decode(buf, n, NULL, &p);
		assert_valid(&p, PT_PROG_MAX_OPS);
		nonempty += p.n > 0;
		/* deterministic */
		pt_program_decode(buf, n, NULL, &q);
		assert_int_equal(p.n, q.n);
		assert_true(same_events(p.ev, q.ev, p.n));
	}
	assert_true(nonempty > 19000);	/* the grammar is dense: random bytes are programs */
	pt_program_free(&p);
	pt_program_free(&q);
}

static void test_max_ops_bounds_the_program(void **state)
{
	(void)state;
	static uint8_t buf[4096];
	struct pt_program p;
	pt_program_init(&p);
	memset(buf, 11, sizeof(buf));	/* every record a touch (tag 11) */
	buf[0] = 3;
	pt_program_decode(buf, sizeof(buf), &(struct pt_program_opts){ .max_ops = 8 }, &p);
	assert_true(p.n <= 8);
	pt_program_decode(buf, sizeof(buf), NULL, &p);
	assert_true(p.n > 8 && p.n <= PT_PROG_MAX_OPS);
	pt_program_free(&p);
}

static void test_decode_encode_decode_is_stable(void **state)
{
	(void)state;
	static uint8_t buf[2048];
	struct pt_program p, q;
	uint64_t s = 0xfeedbeef;
	char why[256];
	pt_program_init(&p);
	pt_program_init(&q);
	for (int it = 0; it < 5000; it++) {
		size_t n = random_input(buf, sizeof(buf), &s), m;
		struct pt_program_opts o = { .allow_contract = it % 3 == 0 };
		pt_program_decode(buf, n, &o, &p);
		unsigned dropped = 99;
		uint8_t *enc = pt_program_encode(&p.h, p.ev, p.n, &m, &dropped, why, sizeof(why));
		assert_non_null(enc);
		o.max_ops = p.n + 1;
		pt_program_decode(enc, m, &o, &q);
		assert_int_equal(q.dropped, 0);
		assert_int_equal(p.h.cpus, q.h.cpus);
		assert_int_equal(p.n, q.n);
		assert_true(same_events(p.ev, q.ev, p.n));
		free(enc);
	}
	pt_program_free(&p);
	pt_program_free(&q);
}

static void test_contracts_are_kept_unless_allowed(void **state)
{
	(void)state;
	static uint8_t buf[2048];
	struct pt_program p;
	uint64_t s = 77;
	unsigned cut = 0;
	pt_program_init(&p);
	for (int it = 0; it < 5000; it++) {
		size_t n = random_input(buf, sizeof(buf), &s);
		for (int allow = 0; allow < 2; allow++) {
			pt_program_decode(buf, n, &(struct pt_program_opts){ .allow_contract = allow }, &p);
			/* a vunmap names a whole area the program vmapped, unless contract breaks are allowed */
			for (unsigned i = 0; i < p.n; i++) {
				if (p.ev[i].kind != PT_EV_VUNMAP)
					continue;
				bool whole = false;
				for (unsigned j = 0; j < i; j++)
					whole |= (p.ev[j].kind == PT_EV_VMAP ||
						  (p.ev[j].kind == PT_EV_IRQ && p.ev[j].op == PT_OP_VMAP)) &&
						 p.ev[j].va == p.ev[i].va && p.ev[j].len == p.ev[i].len;
				if (!allow)
					assert_true(whole);
				cut += allow && !whole;
			}
		}
	}
	assert_true(cut > 0);	/* and allow_contract does reach the cut vunmaps */
	pt_program_free(&p);
}

/* Decode the literal program of events ev[0..n) on cpus CPUs; @return : events dropped. */
static unsigned decode_events(const struct pt_event *ev, unsigned n, unsigned cpus, struct pt_program *p)
{
	struct pt_header h;
	pt_header_default(&h);
	h.cpus = cpus;
	char why[256];
	size_t m;
	uint8_t *enc = pt_program_encode(&h, ev, n, &m, NULL, why, sizeof(why));
	assert_non_null(enc);
	pt_program_decode(enc, m, &(struct pt_program_opts){ .max_ops = n + 1 }, p);
	free(enc);
	return p->dropped;
}

#define KVA 0xffff800010000000ull

/*
 * An interrupt handler may only map into kernel page tables that exist (program.c,
 * irq_vmap_ok()).  The first program is docs/open-findings.md's former
 * I12/lock/lock-held-twice/vmap_small_pages_range_noflush: the handler's vmap needs a
 * new table while the interrupted thread's vmalloc, suspended, holds init_mm's
 * page-table lock; the decoder drops it.  The second is lazy-mmu-irq's reproducer: the
 * table exists (a vmap before the thread made it), the handler only stores ptes: kept.
 */
/* a vmap maps pages its caller owns, never pages the model's allocator may hand out again
 * (a literal vmap of pa=0x100000000 was freed under its mapping once a 1G hugetlb set took it) */
static void test_vmap_pages_stay_out_of_the_allocator(void **state)
{
	(void)state;
	struct pt_program p;
	pt_program_init(&p);
	static const struct { uint64_t pa, len; unsigned dropped; } cases[] = {
		{ 0x40000000, 0x1000, 0 },	/* device-like memory below the allocator */
		{ 0x7ffff000, 0x1000, 0 },	/* its last page */
		{ 0x7ffff000, 0x2000, 1 },	/* into the allocator's first page */
		{ 0x80000000, 0x1000, 1 },	/* the allocator's PHYS_BASE */
		{ 0x100000000, 0x1000, 1 },
		{ 0x300000000, 0x1000, 0 },	/* a hotplugged bank the allocator never reaches */
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct pt_event ev[] = {
			{ .kind = PT_EV_VMAP, .cpu = 0, .va = KVA, .len = cases[i].len, .pa = cases[i].pa },
		};
		assert_int_equal(decode_events(ev, 1, 1, &p), cases[i].dropped);
	}
	pt_program_free(&p);
}

static void test_irq_maps_only_into_existing_tables(void **state)
{
	(void)state;
	struct pt_program p;
	pt_program_init(&p);
	const struct pt_event no_table[] = {
		{ .kind = PT_EV_THREAD, .cpu = 0, .tid = 10 },
		{ .kind = PT_EV_VMALLOC, .cpu = 0, .va = KVA, .len = 0x1000 },
		{ .kind = PT_EV_SCHED, .cpu = 0, .tid = 10, .op = PT_SCHED_PT_WRITE, .len = 1 },
		{ .kind = PT_EV_IRQ, .cpu = 0, .op = PT_OP_VMAP, .va = KVA + 0x10000, .len = 0x1000, .pa = 0x40000000 },
	};
	assert_int_equal(decode_events(no_table, 4, 1, &p), 1);
	assert_int_equal(p.n, 3);
	assert_int_not_equal(p.ev[2].kind, PT_EV_IRQ);
	const struct pt_event table[] = {
		{ .kind = PT_EV_VMAP, .cpu = 0, .va = KVA + 0x100000, .len = 0x1000, .pa = 0x1000000 },
		{ .kind = PT_EV_THREAD, .cpu = 0, .tid = 10 },
		{ .kind = PT_EV_VMALLOC, .cpu = 0, .va = KVA, .len = 0x4000 },
		{ .kind = PT_EV_SCHED, .cpu = 0, .tid = 10, .op = PT_SCHED_PT_WRITE, .len = 2 },
		{ .kind = PT_EV_IRQ, .cpu = 0, .op = PT_OP_VMAP, .va = KVA + 0x10000, .len = 0x1000, .pa = 0x40000000 },
	};
	assert_int_equal(decode_events(table, 5, 2, &p), 0);
	/* ... but not over VA an area had (a lazily freed one would need a purge), nor into a
	 * 2M range whose table only a queued op makes, nor after a huge vmap of the range */
	struct pt_event over[5];
	memcpy(over, table, sizeof(over));
	over[4].va = KVA;
	assert_int_equal(decode_events(over, 5, 2, &p), 1);
	memcpy(over, table, sizeof(over));
	over[4].va = KVA + 0x200000;	/* the next 2M: no table */
	assert_int_equal(decode_events(over, 5, 2, &p), 1);
	/* a huge vmap over a 2M range whose areas are gone may replace its (empty) table */
	const struct pt_event replaced[] = {
		{ .kind = PT_EV_VMAP, .cpu = 0, .va = KVA + 0x200000, .len = 0x1000, .pa = 0x1000000 },
		{ .kind = PT_EV_VUNMAP, .cpu = 0, .va = KVA + 0x200000, .len = 0x1000 },
		{ .kind = PT_EV_THREAD, .cpu = 0, .tid = 10 },
		{ .kind = PT_EV_VMAP, .cpu = 0, .va = KVA + 0x200000, .len = 0x200000, .pa = 0x40000000,
		  .flags = PT_MAP_HUGE },
		{ .kind = PT_EV_IRQ, .cpu = 0, .op = PT_OP_VMAP, .va = KVA + 0x210000, .len = 0x1000, .pa = 0x40000000 },
	};
	assert_int_equal(decode_events(replaced, 5, 2, &p), 1);
	assert_int_equal(p.ev[p.n - 1].kind, PT_EV_VMAP);
	memcpy(over, replaced, sizeof(over));
	over[3].va = KVA + 0x400000;	/* the huge vmap elsewhere: the table stays */
	assert_int_equal(decode_events(over, 5, 2, &p), 0);
	/* the handler does nothing else: vmalloc, vunmap and vfree sleep or BUG in IRQ context */
	const struct pt_event other[] = {
		table[0],
		{ .kind = PT_EV_IRQ, .cpu = 0, .op = PT_OP_VMALLOC, .va = KVA + 0x10000, .len = 0x1000 },
		{ .kind = PT_EV_IRQ, .cpu = 0, .op = PT_OP_VFREE, .va = KVA + 0x100000 },
		{ .kind = PT_EV_IRQ, .cpu = 0, .op = PT_OP_VUNMAP, .va = KVA + 0x100000, .len = 0x1000 },
	};
	assert_int_equal(decode_events(other, 4, 1, &p), 3);
	pt_program_free(&p);
}

/*
 * A kernel address is used only once the op that maps it surely ran: a default-model
 * I6/missed-barrier/kernel-map/used-before-barrier/arch found by fuzzing was an access
 * from another CPU to the area a suspended thread was still vmalloc'ing (the caller's
 * bug).  The same access after that thread ran to the end of its queue is kept.
 */
static void test_kernel_access_waits_for_its_mapping(void **state)
{
	(void)state;
	struct pt_program p;
	pt_program_init(&p);
	const struct pt_event ev[] = {
		{ .kind = PT_EV_VMAP, .cpu = 0, .va = KVA + 0x100000, .len = 0x1000, .pa = 0x1000000 },
		{ .kind = PT_EV_THREAD, .cpu = 0, .tid = 10 },
		{ .kind = PT_EV_VMALLOC, .cpu = 0, .va = KVA, .len = 0x4000 },
		{ .kind = PT_EV_SCHED, .cpu = 0, .tid = 10, .op = PT_SCHED_PT_WRITE, .len = 2 },
		{ .kind = PT_EV_ACCESS, .cpu = 1, .va = KVA },
		{ .kind = PT_EV_ACCESS, .cpu = 1, .va = KVA + 0x100000 },
	};
	assert_int_equal(decode_events(ev, 6, 2, &p), 1);
	assert_int_equal(p.ev[p.n - 1].va, KVA + 0x100000);
	struct pt_event done[6];
	memcpy(done, ev, sizeof(done));
	done[3].len = 0;	/* to the end of its queue: the vmalloc returned */
	assert_int_equal(decode_events(done, 6, 2, &p), 0);
	pt_program_free(&p);
}

/*
 * Nor through a stale pointer into a gone area whose VA an op that may not have run yet
 * maps again: a default-model I6/missed-barrier/kernel-map/used-before-barrier found by
 * fuzzing (session 18, run h4) was an access through a vfree'd 16K area to the page a
 * thread's new vmalloc of that VA was mapping, stopped before its DSB and ISB.  The same
 * records with the new vmalloc beside the gone area keep the access.
 */
static void test_stale_kernel_access_waits_for_a_remapping(void **state)
{
	(void)state;
	struct pt_program p;
	pt_program_init(&p);
	uint8_t in[] = {
		1,					/* 2 CPUs */
		15, 0, 1, 0, 0, 0, 0, 0,		/* vmalloc 4K, slot 1 (entry 0) */
		15, 0, 2, 1, 0, 0, 0, 0,		/* vmalloc 16K, slot 2 (entry 1) */
		19, 0, 0, 0, 0, 0, 0, 0,		/* vfree entry 0 */
		19, 0, 1, 0, 0, 0, 0, 0,		/* vfree entry 1 */
		22, 1, 0, 0, 0, 0, 0, 0,		/* a thread on cpu1 */
		15, 1, 2, 0, 6, 0, 0, 0,		/* its vmalloc 4K at slot 2 + 4K (takes entry 0) */
		24, 0, 0, 2, 2, 0, 0, 0,		/* sched pt_write steps=1 */
		29, 1, 0, 2, 0, 0, 0x80, 0,		/* kernel access, entry 1 + 4K, on cpu1 */
	};
	pt_program_decode(in, sizeof(in), NULL, &p);
	assert_int_equal(p.n, 7);
	assert_int_equal(p.ev[5].kind, PT_EV_VMALLOC);
	assert_int_not_equal(p.ev[p.n - 1].kind, PT_EV_ACCESS);
	in[1 + 5 * 8 + 2] = 3;	/* the new vmalloc in slot 3, beside the gone area */
	pt_program_decode(in, sizeof(in), NULL, &p);
	assert_int_equal(p.n, 8);
	assert_int_equal(p.ev[7].kind, PT_EV_ACCESS);
	assert_int_equal(p.ev[7].va, p.ev[1].va + 0x1000);
	pt_program_free(&p);
}

/*
 * A sched to the end of the only thread's queue says its vmalloc ran only while no op was
 * issued directly on another CPU: such an op may hold a lock the thread waits for (a default-
 * model I6 used-before-barrier found by fuzzing, session 19).  The same program with the mmap
 * issued on the thread's CPU (queued behind the vmalloc) keeps the access.
 */
static void test_kernel_access_after_sched_done_needs_no_direct_ops(void **state)
{
	(void)state;
	struct pt_program p;
	pt_program_init(&p);
	struct pt_event ev[] = {
		{ .kind = PT_EV_THREAD, .cpu = 0, .tid = 10 },
		{ .kind = PT_EV_MMAP, .cpu = 1, .va = 0x10000000, .len = 0x1000, .asid = 1,
		  .prot = PT_PROT_READ | PT_PROT_WRITE },
		{ .kind = PT_EV_VMALLOC, .cpu = 0, .va = KVA, .len = 0x4000 },
		{ .kind = PT_EV_SCHED, .cpu = 0, .tid = 10, .op = PT_SCHED_ANY, .len = 0 },
		{ .kind = PT_EV_ACCESS, .cpu = 1, .va = KVA },
	};
	assert_int_equal(decode_events(ev, 5, 2, &p), 1);
	assert_int_not_equal(p.ev[p.n - 1].kind, PT_EV_ACCESS);
	ev[1].cpu = 0;
	assert_int_equal(decode_events(ev, 5, 2, &p), 0);
	assert_int_equal(p.ev[p.n - 1].kind, PT_EV_ACCESS);
	pt_program_free(&p);
}

/* A kernel huge page is never set over an area whose vunmap is still queued (a default-
 * model I9 vunmap-splits-contpte found by fuzzing: the vunmap ran after the set). */
static void test_huge_set_waits_for_a_queued_free(void **state)
{
	(void)state;
	struct pt_program p;
	pt_program_init(&p);
	const struct pt_event ev[] = {
		{ .kind = PT_EV_VMAP, .cpu = 0, .va = KVA, .len = 0x1000, .pa = 0x40000000 },
		{ .kind = PT_EV_THREAD, .cpu = 1, .tid = 11 },
		{ .kind = PT_EV_VUNMAP, .cpu = 1, .va = KVA, .len = 0x1000 },
		{ .kind = PT_EV_HUGETLB, .cpu = 0, .op = PT_HUGE_SET, .va = KVA, .len = 0x10000 },
	};
	assert_int_equal(decode_events(ev, 4, 2, &p), 1);
	assert_int_equal(p.ev[p.n - 1].kind, PT_EV_VUNMAP);
	struct pt_event ran[4];
	memcpy(ran, ev, sizeof(ran));
	ran[2].cpu = 0;	/* a vunmap that ran at once: its VA is free */
	ran[1].cpu = 1;
	const struct pt_event order[] = { ran[0], ran[2], ran[1], ran[3] };
	assert_int_equal(decode_events(order, 4, 2, &p), 0);
	pt_program_free(&p);
}

/*
 * A literal thread's tid with bit 31 set read as a CPU's implicit context (IMPLICIT | cpu) in
 * order_after(): a vfree of a vmalloc queued on that thread went to another CPU and ran
 * first (default-model I9 vfree-nonexistent-area and I2 lazy-area-remapped, found by
 * fuzzing; corpus/fuzz/ops_invariants/decoder-literal-tid-*.bin).  Such a thread is
 * dropped, and the vfree of the grammar then follows its vmalloc; the same tid without
 * bit 31 is kept.
 */
static void test_literal_tid_is_not_an_implicit_context(void **state)
{
	(void)state;
	struct pt_program p;
	pt_program_init(&p);
	struct pt_event ev[] = {
		{ .kind = PT_EV_THREAD, .cpu = 0, .tid = 0xc0000001u },
		{ .kind = PT_EV_VMALLOC, .cpu = 0, .va = KVA, .len = 0x4000 },
		{ .kind = PT_EV_THREAD, .cpu = 1, .tid = 0xc0000000u },
	};
	assert_int_equal(decode_events(ev, 3, 2, &p), 2);
	assert_int_equal(p.ev[0].kind, PT_EV_VMALLOC);
	ev[0].tid = 0x40000001u;
	ev[2].tid = 0x40000000u;
	assert_int_equal(decode_events(ev, 3, 2, &p), 0);
	assert_int_equal(p.ev[0].kind, PT_EV_THREAD);
	assert_int_equal(p.ev[0].tid, 0x40000001u);
	pt_program_free(&p);
}

/* The same rule checked from outside on random programs: every IRQ the decoder emits is a
 * 4K-page vmap inside 2M ranges a non-huge vmalloc / vmap issued before any thread
 * covered, that no huge kernel mapping issued since overlaps, at VA no area had before. */
static void test_random_irqs_keep_the_handler_contract(void **state)
{
	(void)state;
	static uint8_t buf[2048];
	struct pt_program p;
	uint64_t s = 0x5eed;
	unsigned irqs = 0;
	pt_program_init(&p);
	for (int it = 0; it < 40000; it++) {
		size_t n = random_input(buf, sizeof(buf), &s);
		pt_program_decode(buf, n, NULL, &p);
		for (unsigned i = 0; i < p.n; i++) {
			const struct pt_event *e = &p.ev[i];
			if (e->kind != PT_EV_IRQ)
				continue;
			irqs++;
			assert_int_equal(e->op, PT_OP_VMAP);
			assert_true(e->len && e->len <= 0x10000);
			uint64_t lo = e->va >> 21, hi = (e->va + e->len - 1) >> 21;
			for (uint64_t r = lo; r <= hi; r++) {
				bool made = false, threads = false;
				for (unsigned j = 0; j < i; j++) {
					const struct pt_event *f = &p.ev[j];
					threads |= f->kind == PT_EV_THREAD;
					bool kmap = f->kind == PT_EV_VMALLOC || f->kind == PT_EV_VMAP;
					if (!kmap || f->va >> 21 > r || (f->va + f->len - 1) >> 21 < r)
						continue;
					if (f->flags & PT_MAP_HUGE)
						made = false;
					else if (!threads)
						made = true;
				}
				assert_true(made);
			}
			for (unsigned j = 0; j < i; j++) {
				const struct pt_event *f = &p.ev[j];
				bool area = f->kind == PT_EV_VMALLOC || f->kind == PT_EV_VMAP ||
					    (f->kind == PT_EV_IRQ && f->op == PT_OP_VMAP);
				if (area)
					assert_false(e->va < f->va + f->len && f->va < e->va + e->len);
			}
		}
	}
	assert_true(irqs > 100);	/* and random programs do have them */
	pt_program_free(&p);
}

static bool ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

static unsigned roundtrip_file(const char *path, unsigned *kept)
{
	struct pt_error err = { 0 };
	struct pt_reader *r = pt_reader_open(path, &err);
	assert_non_null(r);
	struct pt_header h = *pt_reader_header(r);
	struct pt_event ev, *evs = NULL;
	unsigned n = 0, cap = 0;
	bool ops_only = true;
	int rc;
	while ((rc = pt_reader_next(r, &ev, &err)) > 0) {
		if (ev.kind == PT_EV_COMMENT)
			continue;
		const struct pt_kind_schema *sc = pt_kind_schema(ev.kind);
		ops_only &= sc->ops_level || ev.kind == PT_EV_ACCESS || ev.kind == PT_EV_MIGRATE;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			evs = realloc(evs, cap * sizeof(*evs));
			assert_non_null(evs);
		}
		evs[n++] = ev;
	}
	assert_int_equal(rc, 0);
	pt_reader_close(r);
	if (!ops_only || h.cpus > PT_PROG_MAX_CPUS) {
		free(evs);
		return 0;	/* not a program of the fuzz grammar */
	}
	char why[256];
	size_t m;
	unsigned dropped = 0;
	uint8_t *enc = pt_program_encode(&h, evs, n, &m, &dropped, why, sizeof(why));
	assert_non_null(enc);
	struct pt_program p;
	pt_program_init(&p);
	pt_program_decode(enc, m, &(struct pt_program_opts){ .max_ops = n + 1 }, &p);
	assert_int_equal(p.dropped, dropped);
	if (dropped)
		print_message("  %s: %u events outside the grammar\n", path, dropped);
	if (!dropped) {
		/* the whole trace is a program: it comes back exactly */
		if (p.n != n || !same_events(p.ev, evs, n))
			fail_msg("%s: trace -> fuzz input -> trace changed the events", path);
		(*kept)++;
	}
	pt_program_free(&p);
	free(enc);
	free(evs);
	return 1;
}

static unsigned roundtrip_dir(const char *dir, unsigned *kept)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *e;
	unsigned n = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		struct stat st;
		if (stat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode))
			n += roundtrip_dir(path, kept);
		else if (ends_with(path, ".ptt"))
			n += roundtrip_file(path, kept);
	}
	closedir(d);
	return n;
}

static void test_corpus_traces_roundtrip_through_fuzz_inputs(void **state)
{
	(void)state;
	unsigned n = 0, kept = 0;
	for (int i = 0; i < ndirs; i++)
		n += roundtrip_dir(dirs[i], &kept);
	print_message("%u ops-level traces, %u of them whole programs of the grammar\n", n, kept);
	assert_true(n >= 50);
	assert_true(kept * 10 >= n * 8);	/* most corpus traces are programs the fuzzer can reach */
}

static void test_mutations_keep_whole_records(void **state)
{
	(void)state;
	static uint8_t buf[4096], cp[4096];
	static size_t off[1024];
	uint64_t s = 0xabcdef, rng = 42;
	unsigned by_kind[PTM_COUNT] = { 0 };
	for (int it = 0; it < 20000; it++) {
		size_t n = random_input(buf, 600, &s);
		/* only biased records: then every record is 8 bytes, and a whole-record mutation keeps it so */
		for (size_t i = 1; i < n; i++)
			if (buf[i] == PT_PROG_LITERAL)
				buf[i] = 0;
		n = n > 1 ? 1 + (n - 1) / PT_PROG_RECORD * PT_PROG_RECORD : n;
		memcpy(cp, buf, n);
		enum ptm_kind k;
		size_t m = ptm_mutate(buf, n, sizeof(buf), &rng, &k);
		assert_true(m <= sizeof(buf));
		by_kind[k]++;
		size_t nr = ptm_records(buf, m, off, 1024);
		if (m > 1 && k != PTM_WINDOW)
			assert_int_equal((m - 1) % PT_PROG_RECORD, 0);
		/* a window may add literal records (a race names its tids and range): whole ones */
		for (size_t i = 0; i < nr && k == PTM_WINDOW; i++) {
			size_t len = (i + 1 < nr ? off[i + 1] : m) - off[i];
			if (buf[off[i]] == PT_PROG_LITERAL)
				assert_true(len >= 2 && len == 2u + buf[off[i] + 1]);
			else
				assert_int_equal(len, PT_PROG_RECORD);
		}
		if (k == PTM_DELETE && n > 1)
			assert_int_equal(nr, (n - 1) / PT_PROG_RECORD - 1);
		if ((k == PTM_DUPLICATE || k == PTM_INSERT) && n > 1 && m != n)
			assert_int_equal(nr, (n - 1) / PT_PROG_RECORD + 1);
		if (k == PTM_SWAP || k == PTM_RETARGET || k == PTM_MOVE_CPU || k == PTM_TWEAK)
			assert_int_equal(m, n);
	}
	for (unsigned k = 0; k < PTM_COUNT; k++)
		assert_true(by_kind[k] > 0);
	/* crossover: a prefix of records of one, a suffix of the other */
	uint64_t r2 = 9;
	for (int it = 0; it < 2000; it++) {
		size_t a = 1 + PT_PROG_RECORD * (rnd(&s) % 20), b = 1 + PT_PROG_RECORD * (rnd(&s) % 20);
		memset(buf, 1, a);
		memset(cp, 2, b);
		uint8_t out[4096];
		size_t m = ptm_crossover(buf, a, cp, b, out, sizeof(out), &r2);
		assert_true(m >= 1 && m <= a + b);
		assert_int_equal((m - 1) % PT_PROG_RECORD, 0);
	}
}

/* An input that fills the engine's buffer and ends in a record cut short: no mutation
 * writes past it (a literal's cpu byte, a record's address or length bytes at fixed
 * offsets did, into whatever followed the engine's buffer). */
static void test_mutations_stay_inside_a_full_buffer(void **state)
{
	(void)state;
	enum { CANARY = 64 };
	static uint8_t buf[600 + CANARY];
	uint64_t s = 0x5eed, rng = 7;
	for (int it = 0; it < 200000; it++) {
		size_t n = random_input(buf, 600, &s);
		if (n < 2)
			continue;
		/* a literal record starting near the end, cut by it, half the time */
		if (rnd(&s) % 2)
			buf[n - 1 - rnd(&s) % (n - 1 < 3 ? n - 1 : 3)] = PT_PROG_LITERAL;
		memset(buf + n, 0xa5, CANARY);
		enum ptm_kind k;
		size_t m = ptm_mutate(buf, n, n, &rng, &k);
		assert_true(m <= n);
		for (unsigned i = 0; i < CANARY; i++)
			if (buf[n + i] != 0xa5)
				fail_msg("mutation %d wrote byte %zu past a full buffer of %zu", (int)k, n + i, n);
	}
}

/* Does p stop a thread inside a kernel op it runs, and use its CPU meanwhile?  A thread T,
 * a kernel op issued on T's CPU after T exists (queued to T), then a sched of T by a few
 * steps and, right after it, an IRQ or a kernel access on that CPU, or a migration of T.
 * *huge: the op was a kernel hugetlb set of a range set before; *moved: T migrated. */
static bool has_window(const struct pt_program *p, bool *huge, bool *moved)
{
	for (unsigned i = 0; i < p->n; i++) {
		const struct pt_event *t = &p->ev[i];
		if (t->kind != PT_EV_THREAD)
			continue;
		bool op = false, again = false;
		for (unsigned j = i + 1; j + 1 < p->n; j++) {
			const struct pt_event *e = &p->ev[j], *f = &p->ev[j + 1];
			bool kernel = e->kind == PT_EV_VMALLOC || e->kind == PT_EV_VMAP || e->kind == PT_EV_VUNMAP ||
				      e->kind == PT_EV_VFREE || (e->kind == PT_EV_HUGETLB && e->va >= 0xffff000000000000ull);
			if (kernel && e->cpu == t->cpu) {
				op = true;
				for (unsigned k = 0; k < i && e->kind == PT_EV_HUGETLB; k++)
					again |= p->ev[k].kind == PT_EV_HUGETLB && p->ev[k].va == e->va;
			}
			if (op && e->kind == PT_EV_SCHED && e->tid == t->tid && e->len && f->cpu == t->cpu &&
			    (f->kind == PT_EV_IRQ || (f->kind == PT_EV_ACCESS && f->va >= 0xffff000000000000ull))) {
				*huge = again;
				return true;
			}
			if (op && e->kind == PT_EV_SCHED && e->tid == t->tid && e->len && f->kind == PT_EV_MIGRATE &&
			    f->tid == t->tid) {
				*moved = true;	/* stopped inside it, then moved to another CPU */
				return true;
			}
		}
	}
	return false;
}

/* One mutation step of start (len bytes) in buf; a window step's program decoded into p. */
static bool window_mutant(uint8_t *buf, size_t cap, const uint8_t *start, size_t len, uint64_t *rng,
			  struct pt_program *p)
{
	enum ptm_kind k;
	memcpy(buf, start, len);
	size_t n = ptm_mutate(buf, len, cap, rng, &k);
	if (k != PTM_WINDOW)
		return false;
	pt_program_decode(buf, n, NULL, p);
	assert_valid(p, PT_PROG_MAX_OPS);
	return true;
}

static void test_window_stops_a_thread_inside_a_kernel_op(void **state)
{
	(void)state;
	static uint8_t buf[4096];
	struct pt_program p;
	uint64_t rng = 7;
	unsigned tries = 0, windows = 0, huge = 0, moved = 0;
	pt_program_init(&p);
	while (tries < 2000) {
		/* one CPU, an anonymous mapping: a program with no kernel op and no thread */
		static const uint8_t start[] = { 0, 0, 0, 0, 0, 4, 0, 3, 0 };
		if (!window_mutant(buf, sizeof(buf), start, sizeof(start), &rng, &p))
			continue;
		tries++;
		bool h = false, m = false;
		if (has_window(&p, &h, &m)) {
			windows++;
			huge += h;
			moved += m;
		}
	}
	print_message("window: %u of %u mutations stop a thread inside a kernel op (%u a hugetlb set again, "
		      "%u then migrate it)\n", windows, tries, huge, moved);
	/* one mutation step from a program with neither kernel ops nor threads */
	assert_true(windows * 2 >= tries);
	assert_true(huge * 20 >= tries);
	assert_true(moved * 50 >= tries);

	/* around a user op: a pageout on a second thread stopped inside it, or the mremap
	 * stopped past its PTL while a pageout of its new range runs (threads by tid) */
	unsigned races = 0;
	tries = 0;
	while (tries < 600) {
		static const uint8_t start[] = { 3, 0, 0, 0, 0, 4, 0, 3, 0,	/* mmap 2M */
						 5, 0, 0, 0, 11, 1, 0x80, 0 };	/* mremap it */
		if (!window_mutant(buf, sizeof(buf), start, sizeof(start), &rng, &p))
			continue;
		tries++;
		bool pageout = false, stopped = false, mremap = false;
		for (unsigned i = 0; i < p.n; i++) {
			const struct pt_event *e = &p.ev[i];
			pageout |= e->kind == PT_EV_PAGEOUT;
			mremap |= e->kind == PT_EV_MREMAP;
			stopped |= e->kind == PT_EV_SCHED && e->len &&
				   (e->op == PT_SCHED_LOCK || e->op == PT_SCHED_READ || e->op == PT_SCHED_UNLOCK);
		}
		races += pageout && stopped && mremap;
	}
	print_message("window: %u of %u mutations of an mremap race a stopped pageout or mremap\n", races, tries);
	assert_true(races * 5 >= tries);
	pt_program_free(&p);
}

static void test_afl_trim_removes_whole_records(void **state)
{
	(void)state;
	uint8_t in[1 + 5 * PT_PROG_RECORD];
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i / PT_PROG_RECORD);
	void *m = afl_custom_init(NULL, 1);
	assert_non_null(m);
	assert_int_equal(afl_custom_init_trim(m, in, sizeof(in)), 5);
	uint8_t *out;
	/* keep records 0 and 2; the others can go */
	int32_t step = 0;
	for (int guard = 0; guard < 20 && step < 5; guard++) {
		size_t n = afl_custom_trim(m, &out);
		assert_int_equal((n - 1) % PT_PROG_RECORD, 0);
		bool keeps_0_2 = false;
		for (size_t a = 1; a + PT_PROG_RECORD <= n; a += PT_PROG_RECORD)
			for (size_t b = a + PT_PROG_RECORD; b + PT_PROG_RECORD <= n; b += PT_PROG_RECORD)
				keeps_0_2 |= out[a] == 0 && out[b] == 2;
		step = afl_custom_post_trim(m, keeps_0_2);
		assert_true(step >= 0);
	}
	size_t n = afl_custom_trim(m, &out);
	assert_int_equal(n, 1 + 2 * PT_PROG_RECORD);
	assert_int_equal(out[1], 0);
	assert_int_equal(out[1 + PT_PROG_RECORD], 2);
	afl_custom_deinit(m);
}

int main(int argc, char **argv)
{
	dirs = argv + 1;
	ndirs = argc - 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_any_bytes_decode_to_a_valid_program),
		cmocka_unit_test(test_max_ops_bounds_the_program),
		cmocka_unit_test(test_decode_encode_decode_is_stable),
		cmocka_unit_test(test_contracts_are_kept_unless_allowed),
		cmocka_unit_test(test_vmap_pages_stay_out_of_the_allocator),
		cmocka_unit_test(test_irq_maps_only_into_existing_tables),
		cmocka_unit_test(test_random_irqs_keep_the_handler_contract),
		cmocka_unit_test(test_kernel_access_waits_for_its_mapping),
		cmocka_unit_test(test_stale_kernel_access_waits_for_a_remapping),
		cmocka_unit_test(test_kernel_access_after_sched_done_needs_no_direct_ops),
		cmocka_unit_test(test_huge_set_waits_for_a_queued_free),
		cmocka_unit_test(test_literal_tid_is_not_an_implicit_context),
		cmocka_unit_test(test_corpus_traces_roundtrip_through_fuzz_inputs),
		cmocka_unit_test(test_mutations_keep_whole_records),
		cmocka_unit_test(test_mutations_stay_inside_a_full_buffer),
		cmocka_unit_test(test_window_stops_a_thread_inside_a_kernel_op),
		cmocka_unit_test(test_afl_trim_removes_whole_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
