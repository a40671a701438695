/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_mm_mprotect.c - the cost claims of seed 001 (mprotect, engine/mm/mprotect.c)
 * and seed 003 (linear-map creation, engine/arm64/mmu.c), measured on the model
 * itself: a machine, its checkers and an mm model wired together here (as a
 * replay session does) so that a test can switch a baseline on and read the
 * model's loop count.
 *
 * How "one batch per folio" is measured:
 *  - a NUMA scan that skips folios writes nothing, so the count is the
 *    model's own: the op's loop steps (mm_step() calls: one per iteration of
 *    change_pte_range() and of the pgd/pud/pmd loops above it);
 *  - a scan that hints folios is read from its arch events: each batch
 *    rewrites its PTEs to PAGE_NONE as one run of consecutive stores
 *    (modify_prot_commit_ptes()), so the runs of PAGE_NONE stores count
 *    the batches.
 * Both against the pre-series baseline (mprotect-no-batch: one PTE at a time).
 *
 * "Linear-map creation fixmaps each table once" is counted from the fixmap
 * slot's events: one access through the slot per mapping, one TLBI per unmap.
 */
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

#define M (1ull << 20)
#define FIXMAP_LO (FIXADDR_TOP - PMD_SIZE)

struct rig {
	struct pt_machine *m;
	struct pt_checker *c;
	struct mm_model *mm;
	bool counting;
	/* what the counted op emitted */
	uint64_t pt_writes, none_runs, tlbi, fixmap_maps, fixmap_tlbi;
	bool in_none_run;
};

static void rig_emit(void *ctx, const struct pt_event *ev)
{
	struct rig *r = ctx;
	if (r->counting) {
		bool none = ev->kind == PT_EV_PT_WRITE && !(ev->val & PT_DESC_VALID) && (ev->val & PT_DESC_PROTNONE);
		if (none && !r->in_none_run)
			r->none_runs++;
		if (ev->kind == PT_EV_PT_WRITE) {
			r->in_none_run = none;
			r->pt_writes++;
		}
		if (ev->kind == PT_EV_TLBI) {
			r->tlbi++;
			if (ev->va >= FIXMAP_LO && ev->va < FIXADDR_TOP)
				r->fixmap_tlbi++;
		}
		if (ev->kind == PT_EV_ACCESS && ev->va >= FIXMAP_LO && ev->va < FIXADDR_TOP)
			r->fixmap_maps++;
	}
	pt_machine_event(r->m, ev);
}

static void rig_new(struct rig *r, const char *variant)
{
	struct pt_header h;
	memset(r, 0, sizeof(*r));
	pt_header_default(&h);
	h.cpus = 2;
	r->m = pt_machine_new(&h);
	assert_non_null(r->m);
	r->c = pt_checker_new(r->m);
	struct mm_sink sink = { rig_emit, r };
	r->mm = mm_model_new(r->m, r->c, &sink);
	if (variant) {
		int id = mm_variant_lookup(variant);
		assert_true(id > 0);
		mm_model_set_variant(r->mm, (unsigned)id);
	}
}

static void rig_free(struct rig *r)
{
	mm_model_free(r->mm);
	pt_checker_free(r->c);
	pt_machine_free(r->m);
}

static int op(struct rig *r, struct pt_event ev)
{
	return mm_model_op(r->mm, &ev);
}

/* run ev with the counters on; returns the op's loop steps */
static uint64_t counted(struct rig *r, struct pt_event ev)
{
	r->pt_writes = r->none_runs = r->tlbi = r->fixmap_maps = r->fixmap_tlbi = 0;
	r->in_none_run = false;
	r->counting = true;
	assert_int_equal(op(r, ev), 0);
	r->counting = false;
	return r->mm->thread[ev.cpu].steps;
}

static void assert_clean(struct rig *r)
{
	for (unsigned i = 0; i < pt_checker_count(r->c); i++)
		print_error("violation: %s: %s\n", pt_checker_get(r->c, i)->signature, pt_checker_get(r->c, i)->what);
	assert_int_equal(pt_checker_count(r->c), 0);
}

/* 1M of 64K mTHP folios at 0x10000000 in asid 1, faulted in by writes on cpu (the CPU that
 * will change them: a fault's user PTE stores stay pending without a DSB) */
static void mthp_region(struct rig *r, unsigned cpu)
{
	assert_int_equal(op(r, (struct pt_event){ .kind = PT_EV_MMAP, .va = 0x10000000, .len = M, .asid = 1,
						  .prot = PT_PROT_READ | PT_PROT_WRITE, .order = 4 }), 0);
	assert_int_equal(op(r, (struct pt_event){ .kind = PT_EV_TOUCH, .cpu = (uint16_t)cpu, .va = 0x10000000,
						  .len = M, .asid = 1, .flags = PT_ACC_WRITE }), 0);
}

static struct pt_event numa_scan(unsigned cpu)
{
	return (struct pt_event){ .kind = PT_EV_MPROTECT, .cpu = (uint16_t)cpu, .va = 0x10000000, .len = M,
				  .asid = 1, .flags = PT_MPROT_NUMA };
}

/* the pgd, pud and pmd loops each take one step for a range inside one PMD */
#define UPPER_STEPS 3

static void test_numa_scan_skips_a_folio_per_iteration(void **state)
{
	(void)state;
	struct rig r;
	rig_new(&r, NULL);
	mthp_region(&r, 0);
	/* cpu0 is on node 0, where the folios are: every folio is skipped, as one batch */
	uint64_t steps = counted(&r, numa_scan(0));
	print_message("skip scan, batched: %llu steps\n", (unsigned long long)steps);
	assert_int_equal(steps - UPPER_STEPS, 16);
	assert_int_equal(r.pt_writes, 0);
	assert_int_equal(r.tlbi, 0);
	assert_clean(&r);
	rig_free(&r);

	rig_new(&r, "mprotect-no-batch");
	mthp_region(&r, 0);
	steps = counted(&r, numa_scan(0));
	print_message("skip scan, mprotect-no-batch: %llu steps\n", (unsigned long long)steps);
	assert_int_equal(steps - UPPER_STEPS, 256);
	assert_int_equal(r.pt_writes, 0);
	assert_clean(&r);
	rig_free(&r);
}

static void test_numa_scan_hints_a_folio_per_batch(void **state)
{
	(void)state;
	struct rig r;
	rig_new(&r, NULL);
	mthp_region(&r, 1);
	/* cpu1 is on node 1: every folio is hinted, its 16 PTEs cleared and rewritten as one */
	counted(&r, numa_scan(1));
	print_message("hint scan, batched: %llu batches, %llu pt_writes, %llu tlbi\n", (unsigned long long)r.none_runs,
		      (unsigned long long)r.pt_writes, (unsigned long long)r.tlbi);
	assert_int_equal(r.none_runs, 16);
	assert_int_equal(r.pt_writes, 2 * 256);
	assert_int_equal(r.tlbi, 1);		/* the gather's one range flush */
	/* a second scan finds PAGE_NONE everywhere: nothing to do, nothing to flush */
	counted(&r, numa_scan(1));
	assert_int_equal(r.pt_writes, 0);
	assert_int_equal(r.tlbi, 0);
	assert_clean(&r);
	rig_free(&r);

	/* the baseline: one PTE per transaction, each block unfolded (break, TLBI, make) first */
	rig_new(&r, "mprotect-no-batch");
	mthp_region(&r, 1);
	counted(&r, numa_scan(1));
	print_message("hint scan, mprotect-no-batch: %llu batches, %llu pt_writes, %llu tlbi\n",
		      (unsigned long long)r.none_runs, (unsigned long long)r.pt_writes, (unsigned long long)r.tlbi);
	assert_int_equal(r.none_runs, 256);
	assert_int_equal(r.pt_writes, 2 * 256 + 16 * 2 * 16);
	assert_int_equal(r.tlbi, 16 + 1);
	assert_clean(&r);
	rig_free(&r);
}

static void test_mprotect_batch_stops_at_end_and_folio(void **state)
{
	(void)state;
	struct rig r;
	rig_new(&r, NULL);
	mthp_region(&r, 0);
	/* 80K from a folio boundary: one batch of 16 (bounded by the folio), one of 4 (by end) */
	counted(&r, (struct pt_event){ .kind = PT_EV_MPROTECT, .cpu = 0, .va = 0x10010000, .len = 80 << 10,
				       .asid = 1, .prot = 0 });
	assert_int_equal(r.none_runs, 2);
	/* the second block was covered in part: unfolded (16 + 16 writes) before its 4 PTEs changed */
	assert_int_equal(r.pt_writes, 2 * 16 + 32 + 2 * 4);
	assert_clean(&r);
	rig_free(&r);
}

static void test_mprotect_zero_step_ends_as_hang(void **state)
{
	(void)state;
	struct rig r;
	rig_new(&r, "mprotect-numa-zero-step");
	mthp_region(&r, 1);
	/* the folios are on the lower tier (node 0): cpu1's scan takes the access-time path */
	assert_int_equal(op(&r, numa_scan(1)), 0);
	bool hang = false;
	for (unsigned i = 0; i < pt_checker_count(r.c); i++)
		hang |= pt_checker_get(r.c, i)->id == PT_I11;
	assert_true(hang);
	assert_true(r.mm->thread[1].steps > r.mm->thread[1].bound);
	rig_free(&r);
}

/* seed 003: 1G + 4M + 68K from PHYS_BASE: a PUD, a PMD and a PTE table for the linear map */
static struct pt_event map_mem_bank(void)
{
	return (struct pt_event){ .kind = PT_EV_MAP_MEM, .pa = PHYS_BASE, .len = 0x40411000, .flags = PT_MAP_HUGE };
}

static void test_linear_map_fixmaps_each_table_once(void **state)
{
	(void)state;
	struct rig r;
	rig_new(&r, NULL);
	counted(&r, map_mem_bank());
	print_message("map_mem, patched: %llu fixmap maps, %llu fixmap TLBIs\n", (unsigned long long)r.fixmap_maps,
		      (unsigned long long)r.fixmap_tlbi);
	assert_int_equal(r.fixmap_maps, 3);
	assert_int_equal(r.fixmap_tlbi, 3);
	assert_int_equal(r.tlbi, 3);
	assert_clean(&r);
	rig_free(&r);

	/* pre-patch: zeroed through FIX_PTE at allocation, mapped again to be filled */
	rig_new(&r, "pgtable-fixmap-twice");
	counted(&r, map_mem_bank());
	print_message("map_mem, pgtable-fixmap-twice: %llu fixmap maps, %llu fixmap TLBIs\n",
		      (unsigned long long)r.fixmap_maps, (unsigned long long)r.fixmap_tlbi);
	assert_int_equal(r.fixmap_maps, 6);
	assert_int_equal(r.fixmap_tlbi, 6);
	assert_int_equal(r.tlbi, 6);
	assert_clean(&r);
	rig_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numa_scan_skips_a_folio_per_iteration),
		cmocka_unit_test(test_numa_scan_hints_a_folio_per_batch),
		cmocka_unit_test(test_mprotect_batch_stops_at_end_and_folio),
		cmocka_unit_test(test_mprotect_zero_step_ends_as_hang),
		cmocka_unit_test(test_linear_map_fixmaps_each_table_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
