/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_mm_vmalloc.c - the vmalloc family (engine/mm/vmalloc.c) and the hugetlb
 * helpers it shares (engine/arm64/hugetlbpage.c): the arch-level shape of what they
 * emit, and the costs that seed 000 claims, under the patched default and under
 * the pre-patch baselines (mm->variant[] set directly, through a harness that
 * owns the model).
 *
 * The numbers behind the #11 claim ("a 16-page huge vmalloc emits one DSB+ISB
 * pair") are printed by test_lazy_mmu_barrier_cost.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check.h"
#include "machine.h"
#include "mm_internal.h"
#include "trace.h"

#include "mm_harness.h"

/* the recorded events of the n-th (0-based) op of kind `op`: [*b, *e) */
static void op_span(const struct harness *h, unsigned op, unsigned n, size_t *b, size_t *e)
{
	*b = *e = 0;	/* fail_msg() does not return, but gcc does not know */
	for (size_t i = 0; i < h->nrec; i++) {
		if (h->rec[i].kind != PT_EV_BEGIN || h->rec[i].op != op || n--)
			continue;
		*b = i;
		for (*e = i + 1; *e < h->nrec && h->rec[*e].kind != PT_EV_END; (*e)++)
			;
		return;
	}
	fail_msg("no op %u in the record", op);
}

static unsigned count_kind(const struct harness *h, size_t b, size_t e, unsigned kind)
{
	unsigned n = 0;
	for (size_t i = b; i < e; i++)
		n += h->rec[i].kind == kind;
	return n;
}

static const char HDR[] = "@ptt version=1 granule=4K va_bits=48 cpus=2 method=hand\n";
/* the page tables of the vmalloc range are made by a vmap first: the vmalloc measured
 * below is only its PTE loop */
static const char WARM[] = "cpu0 vmap va=0xffff800010100000 len=4K pa=0x1000000\n";

struct cost { unsigned dsb, isb, writes, cont; };

static struct cost vmalloc_cost(bool huge, const enum mm_variant_id *vs, unsigned nvs)
{
	struct harness *h = h_new(2);
	for (unsigned i = 0; i < nvs; i++)
		h->mm->variant[vs[i]] = true;
	char text[512];
	snprintf(text, sizeof(text), "%s%scpu0 vmalloc va=0xffff800010000000 len=64K%s\n", HDR, WARM,
		 huge ? " flags=0x1" : "");
	h_run(h, text);
	size_t b, e;
	op_span(h, PT_OP_VMALLOC, 0, &b, &e);
	struct cost c = { count_kind(h, b, e, PT_EV_DSB), count_kind(h, b, e, PT_EV_ISB),
			  count_kind(h, b, e, PT_EV_PT_WRITE), 0 };
	for (size_t i = b; i < e; i++)
		c.cont += h->rec[i].kind == PT_EV_PT_WRITE && (h->rec[i].val & PT_DESC_CONT);
	assert_int_equal(pt_checker_count(h->c), 0);
	h_free(h);
	return c;
}

/* seed 000 #06/#09/#10/#11: what a 16-page vmalloc costs in barriers, patched and baselines */
static void test_lazy_mmu_barrier_cost(void **state)
{
	(void)state;
	const enum mm_variant_id nolazy[] = { MMV_VMALLOC_NO_LAZY_MMU };
	const enum mm_variant_id precont[] = { MMV_VMALLOC_PRE_CONTPTE };
	const enum mm_variant_id both[] = { MMV_VMALLOC_NO_LAZY_MMU, MMV_VMALLOC_PRE_CONTPTE };
	struct {
		const char *what;
		bool huge;
		const enum mm_variant_id *vs;
		unsigned nvs;
		unsigned want_pairs, want_cont;
	} rows[] = {
		{ "huge,  patched (contpte, lazy MMU)", true, NULL, 0, 1, 16 },
		{ "huge,  vmalloc-no-lazy-mmu", true, nolazy, 1, 1, 16 },
		{ "huge,  vmalloc-pre-contpte", true, precont, 1, 1, 0 },
		{ "huge,  pre-contpte + no-lazy-mmu", true, both, 2, 16, 0 },
		{ "small, patched (lazy MMU)", false, NULL, 0, 1, 0 },
		{ "small, vmalloc-no-lazy-mmu", false, nolazy, 1, 16, 0 },
	};
	print_message("16-page vmalloc (64K), PTE loop only:\n");
	for (unsigned i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct cost c = vmalloc_cost(rows[i].huge, rows[i].vs, rows[i].nvs);
		print_message("  %-36s pt_writes=%2u cont=%2u dsb=%2u isb=%2u\n", rows[i].what, c.writes, c.cont,
			      c.dsb, c.isb);
		assert_int_equal(c.writes, 16);
		assert_int_equal(c.cont, rows[i].want_cont);
		assert_int_equal(c.dsb, rows[i].want_pairs);
		assert_int_equal(c.isb, rows[i].want_pairs);
	}
}

/* #09: the 16 entries of a naturally aligned 64K chunk of a huge vmap carry CONT and map
 * consecutive pages; the barriers come once, after the 16th store */
static void test_vmap_contpte_block_shape(void **state)
{
	(void)state;
	struct harness *h = h_new(2);
	char text[512];
	snprintf(text, sizeof(text), "%s%scpu0 vmap va=0xffff800010000000 len=64K pa=0x40000000 flags=0x1\n", HDR,
		 WARM);
	h_run(h, text);
	size_t b, e;
	op_span(h, PT_OP_VMAP, 1, &b, &e);
	unsigned n = 0;
	for (size_t i = b; i < e; i++) {
		if (h->rec[i].kind != PT_EV_PT_WRITE)
			continue;
		assert_true(h->rec[i].val & PT_DESC_CONT);
		assert_int_equal(desc_pa(h->rec[i].val), 0x40000000ull + n * PAGE_SIZE);
		assert_int_equal(count_kind(h, b, i, PT_EV_DSB), 0);	/* no barrier inside the batch */
		n++;
	}
	assert_int_equal(n, 16);
	assert_int_equal(pt_checker_count(h->c), 0);
	h_free(h);
}

/* #08: vunmap() of a contpte area clears each block whole and leaves the flush to the purge;
 * vunmap_range() of a part flushes at once (kernel flush: VAALE1IS forms, DSB ISH, ISB) */
static void test_vunmap_contpte_lazy_and_range(void **state)
{
	(void)state;
	struct harness *h = h_new(2);
	char text[1024];
	snprintf(text, sizeof(text),
		 "%s%s"
		 "cpu0 vmap va=0xffff800010000000 len=128K pa=0x40000000 flags=0x1\n"
		 "cpu0 vunmap va=0xffff800010010000 len=64K\n"
		 "cpu0 vunmap va=0xffff800010000000 len=128K\n",
		 HDR, WARM);
	h_run(h, text);
	size_t b, e;
	/* the part: 16 clears, then DSB ISHST, a range TLBI over the 64K, DSB ISH, ISB */
	op_span(h, PT_OP_VUNMAP, 0, &b, &e);
	assert_int_equal(count_kind(h, b, e, PT_EV_PT_WRITE), 16);
	assert_int_equal(count_kind(h, b, e, PT_EV_TLBI), 1);
	assert_int_equal(count_kind(h, b, e, PT_EV_ISB), 1);
	for (size_t i = b; i < e; i++)
		if (h->rec[i].kind == PT_EV_TLBI)
			assert_int_equal(h->rec[i].op, PT_TLBI_RVAALE1IS);
	/* the whole area: the other 16 entries cleared, nothing flushed yet */
	op_span(h, PT_OP_VUNMAP, 1, &b, &e);
	assert_int_equal(count_kind(h, b, e, PT_EV_PT_WRITE), 32);
	assert_int_equal(count_kind(h, b, e, PT_EV_TLBI), 0);
	assert_int_equal(count_kind(h, b, e, PT_EV_DSB), 0);
	assert_int_equal(pt_checker_count(h->c), 0);
	h_free(h);
}

/* alloc_vmap_area() purges lazily freed areas that hold the VA before mapping it again:
 * the flush comes before the first page-table store of the new vmap */
static void test_purge_before_reuse(void **state)
{
	(void)state;
	struct harness *h = h_new(2);
	char text[1024];
	snprintf(text, sizeof(text),
		 "%s%s"
		 "cpu0 vmap va=0xffff800010000000 len=16K pa=0x40000000\n"
		 "cpu0 vunmap va=0xffff800010000000 len=16K\n"
		 "cpu0 vmap va=0xffff800010000000 len=16K pa=0x40100000\n",
		 HDR, WARM);
	h_run(h, text);
	size_t b, e, tlbi = 0, write = 0;
	op_span(h, PT_OP_VMAP, 2, &b, &e);
	for (size_t i = b; i < e; i++) {
		if (h->rec[i].kind == PT_EV_TLBI && !tlbi)
			tlbi = i;
		if (h->rec[i].kind == PT_EV_PT_WRITE && !write)
			write = i;
	}
	assert_true(tlbi && write && tlbi < write);
	assert_int_equal(pt_checker_count(h->c), 0);
	h_free(h);
}

/* README "Limits": a call past the model's capacity fails before it maps anything (the VA stays
 * free), a touch fills the capacity and stops there, and the model never holds more than it:
 * counted by mm_work(), not timed */
static void test_capacity_bounds_huge_ops(void **state)
{
	(void)state;
	struct harness *h = h_new(2);
	char text[1024];
	snprintf(text, sizeof(text),
		 "%scpu0 vmap va=0xffff800010000000 len=64T pa=0x40000000\n"
		 "cpu1 vmalloc va=0xffff800010000000 len=1T flags=0x1\n",
		 HDR);
	h_run(h, text);
	size_t b, e;
	for (unsigned op = PT_OP_VMAP, n = 0; n < 2; op = PT_OP_VMALLOC, n++) {
		op_span(h, op, 0, &b, &e);
		assert_int_equal(count_kind(h, b, e, PT_EV_PT_WRITE), 0);
		assert_int_equal(h->rec[e].len, ENOMEM);	/* the op's END carries its return */
	}
	assert_int_equal(h->mm->kernel.nvma, 0);
	assert_true(mm_work(h->mm) < 4096);
	/* a touch of 1T maps what fits, then ENOMEM; after it, a vmalloc of 64K does not fit */
	snprintf(text, sizeof(text),
		 "%scpu0 mmap va=0x100000000 len=1T prot=rw asid=1\n"
		 "cpu0 touch va=0x100000000 len=1T asid=1 flags=0x1\n"
		 "cpu1 vmalloc va=0xffff800010000000 len=64K\n",
		 HDR);
	h_run(h, text);
	op_span(h, PT_OP_FAULT, 0, &b, &e);
	assert_int_equal(h->rec[e].len, ENOMEM);
	assert_true(count_kind(h, b, e, PT_EV_PT_WRITE) > 400000);
	assert_true(mm_work(h->mm) <= MM_CAPACITY);
	assert_true(mm_work(h->mm) > MM_CAPACITY - mm_map_units(PAGE_SIZE, PMD_SIZE));
	op_span(h, PT_OP_VMALLOC, 1, &b, &e);
	assert_int_equal(h->rec[e].len, ENOMEM);
	assert_int_equal(h->mm->kernel.nvma, 0);
	assert_int_equal(pt_checker_count(h->c), 0);
	h_free(h);
}

/* lazy_max_pages(): fls(ncpus) * 128 pages in the model; the vunmap that takes the lazy total
 * above it flushes, the ones before do not */
static void test_lazy_max_pages_threshold(void **state)
{
	(void)state;
	struct harness *h = h_new(4);	/* fls(4) = 3: 384 pages */
	char text[2048];
	snprintf(text, sizeof(text),
		 "@ptt version=1 granule=4K va_bits=48 cpus=4 method=hand\n"
		 "cpu0 vmap va=0xffff800010000000 len=1M pa=0x40000000\n"
		 "cpu0 vunmap va=0xffff800010000000 len=1M\n"
		 "cpu0 vmap va=0xffff800010100000 len=512K pa=0x40000000\n"
		 "cpu0 vunmap va=0xffff800010100000 len=512K\n"
		 "cpu0 vmap va=0xffff800010180000 len=4K pa=0x40000000\n"
		 "cpu0 vunmap va=0xffff800010180000 len=4K\n");
	h_run(h, text);
	size_t b, e;
	unsigned want[] = { 0, 0, 1 };	/* 256, 384 (not above), 385 pages lazy */
	for (unsigned n = 0; n < 3; n++) {
		op_span(h, PT_OP_VUNMAP, n, &b, &e);
		assert_int_equal(count_kind(h, b, e, PT_EV_ISB), want[n]);
	}
	h_free(h);
}

/* seed 000 #09: clear_flush() on init_mm uses the kernel flush (all ASIDs, ISB after DSB ISH);
 * the hugetlb-user-flush-for-kernel variant uses the user-range flush: ASID 0, no ISB */
static void test_clear_flush_kernel_flush(void **state)
{
	(void)state;
	for (int variant = 0; variant < 2; variant++) {
		struct harness *h = h_new(2);
		if (variant)
			h->mm->variant[MMV_HUGETLB_USER_FLUSH_FOR_KERNEL] = true;
		char text[512];
		snprintf(text, sizeof(text),
			 "%scpu0 hugetlb set va=0xffff800010000000 len=64K\n"
			 "cpu0 hugetlb set va=0xffff800010000000 len=64K pa=0x40000000\n",
			 HDR);
		h_run(h, text);
		size_t b, e, tlbi = 0;
		op_span(h, PT_OP_HUGETLB, 1, &b, &e);
		for (size_t i = b; i < e && !tlbi; i++)
			if (h->rec[i].kind == PT_EV_TLBI)
				tlbi = i;
		assert_true(tlbi);
		assert_int_equal(h->rec[tlbi].op, variant ? PT_TLBI_RVALE1IS : PT_TLBI_RVAALE1IS);
		assert_int_equal(h->rec[tlbi + 1].kind, PT_EV_DSB);
		assert_int_equal(h->rec[tlbi + 1].op, PT_BAR_ISH);
		/* the kernel flush's ISB, or (variant) straight on to the routine's next instruction
		 * (a kernel text fetch) and the 16 stores of the make */
		size_t next = tlbi + 2;
		if (!variant) {
			assert_int_equal(h->rec[next].kind, PT_EV_ISB);
			next++;
		}
		assert_int_equal(h->rec[next].kind, PT_EV_ACCESS);
		assert_true(h->rec[next].va >= 0xffff800000000000ull);
		assert_int_equal(h->rec[next + 1].kind, PT_EV_PT_WRITE);
		h_free(h);
	}
}

/* seed 000 #02: the unmap flush of a user huge pte uses the stride and level of its entries */
static void test_hugetlb_flush_hints(void **state)
{
	(void)state;
	struct {
		const char *len;
		uint64_t va, keep;	/* keep: a 4K VMA in the same table, so the clear frees no table */
		unsigned ttl, wrong_ttl;
	} rows[] = {
		{ "64K", 0x10000000, 0x10100000, 3, 2 }, { "2M", 0x10200000, 0x3fe00000, 2, 1 },
		{ "32M", 0x12000000, 0x3fe00000, 2, 1 }, { "1G", 0x40000000, 0x80000000, 1, 1 },
	};
	for (int variant = 0; variant < 2; variant++) {
		for (unsigned r = 0; r < 4; r++) {
			struct harness *h = h_new(2);
			if (variant)
				h->mm->variant[MMV_HUGETLB_WRONG_STRIDE] = true;
			char text[512];
			snprintf(text, sizeof(text),
				 "%scpu0 mmap va=0x%llx len=4K prot=rw asid=1\n"
				 "cpu0 hugetlb set va=0x%llx len=%s asid=1\ncpu0 hugetlb clear va=0x%llx len=%s asid=1\n",
				 HDR, (unsigned long long)rows[r].keep, (unsigned long long)rows[r].va, rows[r].len,
				 (unsigned long long)rows[r].va, rows[r].len);
			h_run(h, text);
			size_t b, e;
			op_span(h, PT_OP_HUGETLB, 1, &b, &e);
			unsigned n = 0;
			for (size_t i = b; i < e; i++) {
				if (h->rec[i].kind != PT_EV_TLBI)
					continue;
				assert_true(h->rec[i].op == PT_TLBI_RVALE1IS || h->rec[i].op == PT_TLBI_VALE1IS);
				assert_int_equal(h->rec[i].level, variant ? rows[r].wrong_ttl : rows[r].ttl);
				n++;
			}
			assert_true(n >= 1);
			h_free(h);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lazy_mmu_barrier_cost),
		cmocka_unit_test(test_vmap_contpte_block_shape),
		cmocka_unit_test(test_vunmap_contpte_lazy_and_range),
		cmocka_unit_test(test_purge_before_reuse),
		cmocka_unit_test(test_capacity_bounds_huge_ops),
		cmocka_unit_test(test_lazy_max_pages_threshold),
		cmocka_unit_test(test_clear_flush_kernel_flush),
		cmocka_unit_test(test_hugetlb_flush_hints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
