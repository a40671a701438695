/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mmu_gather.c - the mmu_gather (mm/mmu_gather.c and the inline half of
 * include/asm-generic/tlb.h, arm64's tlb_flush() and tlb_get_level() of
 * arch/arm64/include/asm/tlb.h).  See tlb.h for the rule it keeps.
 */
#include <stdlib.h>
#include <string.h>

#include "contpte.h"
#include "tlb.h"

void ref_snapshot_add(void *ctx, uint64_t va, uint64_t word)
{
	struct ref_snapshot *x = ctx;
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 64;
		x->w = realloc(x->w, 2 * x->cap * sizeof(*x->w));
		if (!x->w)
			abort();
	}
	x->w[2 * x->n] = va;
	x->w[2 * x->n++ + 1] = word;
}

static int pair_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

void ref_snapshot_sort(struct ref_snapshot *x)
{
	if (x->n > 1)
		qsort(x->w, x->n, 2 * sizeof(*x->w), pair_cmp);
}

static void __tlb_reset_range(struct mmu_gather *tlb)
{
	tlb->start = TASK_SIZE;
	tlb->end = 0;
	tlb->freed_tables = false;
	tlb->cleared_ptes = tlb->cleared_pmds = tlb->cleared_puds = tlb->cleared_p4ds = false;
}

void tlb_gather_mmu(struct mmu_gather *tlb, struct mm_space *s)
{
	/* every field but the rooms, which are read only below npages and ntables */
	tlb->s = s;
	tlb->pages = tlb->page_room;
	tlb->npages = 0;
	tlb->cappages = TLB_PAGE_ROOM;
	tlb->tables = tlb->table_room;
	tlb->ntables = 0;
	tlb->captables = TLB_TABLE_ROOM;
	__tlb_reset_range(tlb);
	s->tlb_flush_pending++;	/* inc_tlb_flush_pending() */
}

static void __tlb_adjust_range(struct mmu_gather *tlb, uint64_t address, uint64_t range_size)
{
	if (address < tlb->start)
		tlb->start = address;
	if (address + range_size > tlb->end)
		tlb->end = address + range_size;
}

void tlb_flush_pte_range(struct mmu_gather *tlb, uint64_t address, uint64_t size)
{
	__tlb_adjust_range(tlb, address, size);
	tlb->cleared_ptes = true;
}

void tlb_flush_pmd_range(struct mmu_gather *tlb, uint64_t address, uint64_t size)
{
	__tlb_adjust_range(tlb, address, size);
	tlb->cleared_pmds = true;
}

void tlb_flush_pud_range(struct mmu_gather *tlb, uint64_t address, uint64_t size)
{
	__tlb_adjust_range(tlb, address, size);
	tlb->cleared_puds = true;
}

void tlb_flush_p4d_range(struct mmu_gather *tlb, uint64_t address, uint64_t size)
{
	__tlb_adjust_range(tlb, address, size);
	tlb->cleared_p4ds = true;
}

void tlb_remove_huge_tlb_entry(struct mmu_gather *tlb, uint64_t sz, uint64_t address)
{
	if (sz >= PUD_SIZE)
		tlb_flush_pud_range(tlb, address, sz);
	else if (sz >= PMD_SIZE)
		tlb_flush_pmd_range(tlb, address, sz);
	else
		tlb_flush_pte_range(tlb, address, sz);
}

/* A batch of cap entries of size bytes at v, full, made twice as long: out of its room in the
 * gather onto the heap, or larger there. */
static void *batch_grow(void *v, const void *room, uint32_t *cap, size_t size)
{
	void *w = v == room ? malloc(2 * *cap * size) : realloc(v, 2 * *cap * size);
	if (!w)
		abort();
	if (v == room)
		memcpy(w, room, *cap * size);
	*cap *= 2;
	return w;
}

/*
 * n blocks of 2^order pages from pa go to the batch.  Blocks of one order that follow the
 * batch's last ones join its last entry: each entry is a run tlb_flush_mmu_free() frees at once,
 * the longest there is in the batch's order of blocks.
 */
static void tlb_batch_push_page(struct mmu_gather *tlb, uint64_t pa, unsigned order, unsigned n)
{
	struct tlb_page *last = tlb->npages ? &tlb->pages[tlb->npages - 1] : NULL;
	if (last && last->order == order && pa == last->pa + ((uint64_t)last->n << (PAGE_SHIFT + order))) {
		last->n += n;
		return;
	}
	if (tlb->npages == tlb->cappages)
		tlb->pages = batch_grow(tlb->pages, tlb->page_room, &tlb->cappages, sizeof(*tlb->pages));
	tlb->pages[tlb->npages++] = (struct tlb_page){ pa, order, n };
}

void tlb_remove_page_size(struct mmu_gather *tlb, uint64_t pa, unsigned order)
{
	tlb_batch_push_page(tlb, pa, order, 1);
}

void __tlb_remove_folio_pages(struct mm_model *mm, struct mmu_gather *tlb, uint64_t pa, unsigned nr)
{
	unsigned order = folio_order(mm, pa);
	if (order && nr == 1u << order && IS_ALIGNED(pa, PAGE_SIZE << order))
		tlb_batch_push_page(tlb, pa, order, 1);
	else if (nr)
		tlb_batch_push_page(tlb, pa, 0, nr);	/* its pages one by one */
}

static void tlb_remove_table(struct mmu_gather *tlb, uint64_t table)
{
	if (tlb->ntables == tlb->captables)
		tlb->tables = batch_grow(tlb->tables, tlb->table_room, &tlb->captables, sizeof(*tlb->tables));
	tlb->tables[tlb->ntables++] = table;
}

void pte_free_tlb(struct mmu_gather *tlb, uint64_t table, uint64_t address)
{
	tlb_flush_pmd_range(tlb, address, PAGE_SIZE);
	tlb->freed_tables = true;
	tlb_remove_table(tlb, table);
}

void pmd_free_tlb(struct mmu_gather *tlb, uint64_t table, uint64_t address)
{
	tlb_flush_pud_range(tlb, address, PAGE_SIZE);
	tlb->freed_tables = true;
	tlb_remove_table(tlb, table);
}

void pud_free_tlb(struct mmu_gather *tlb, uint64_t table, uint64_t address)
{
	tlb_flush_p4d_range(tlb, address, PAGE_SIZE);
	tlb->freed_tables = true;
	tlb_remove_table(tlb, table);
}

/* tlb_get_unmap_size(): the stride is the smallest level that had entries cleared */
static uint64_t tlb_get_unmap_size(const struct mmu_gather *tlb)
{
	if (tlb->cleared_ptes)
		return PAGE_SIZE;
	if (tlb->cleared_pmds)
		return PMD_SIZE;
	if (tlb->cleared_puds)
		return PUD_SIZE;
	if (tlb->cleared_p4ds)
		return PGDIR_SIZE;
	return PAGE_SIZE;
}

/*
 * tlb_get_level() (arm64): the TTL hint is only valid for leaf entries of a single
 * level; with a table freed or levels mixed it must be "unknown", or the TLBI may
 * miss the walk-cache entries (oracle-semantics.md, TTL).  The variant is the code
 * before "arm64: tlb: fix the TTL value of tlb_get_level" (2020): the leaf level of
 * the cleared entries is passed even when page tables were freed.
 */
static unsigned tlb_get_level(const struct mm_model *mm, const struct mmu_gather *tlb)
{
	if (tlb->freed_tables && !mm_variant(mm, MMV_TLB_TTL_FREED_TABLES))
		return TLBI_TTL_UNKNOWN;
	if (tlb->cleared_ptes && !(tlb->cleared_pmds || tlb->cleared_puds || tlb->cleared_p4ds))
		return 3;
	if (tlb->cleared_pmds && !(tlb->cleared_ptes || tlb->cleared_puds || tlb->cleared_p4ds))
		return 2;
	if (tlb->cleared_puds && !(tlb->cleared_ptes || tlb->cleared_pmds || tlb->cleared_p4ds))
		return 1;
	return TLBI_TTL_UNKNOWN;
}

/*
 * tlb_flush() (arch/arm64/include/asm/tlb.h): one range invalidation, leaves only
 * unless a table went.  It completes (DSB ISH) before the batches are freed, and
 * before an mprotect returns: a CPU may keep the old, more permissive translation
 * until then, never after.
 */
static void tlb_flush(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb)
{
	bool last_level = !tlb->freed_tables;
	__flush_tlb_range(mm, t, tlb->s, tlb->start, tlb->end, tlb_get_unmap_size(tlb), last_level,
			  tlb_get_level(mm, tlb));
}

static void tlb_flush_mmu_tlbonly(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb)
{
	if (!(tlb->freed_tables || tlb->cleared_ptes || tlb->cleared_pmds || tlb->cleared_puds ||
	      tlb->cleared_p4ds))
		return;
	tlb_flush(mm, t, tlb);
	__tlb_reset_range(tlb);
}

/* tlb_flush_mmu_free(): only after the flush completed — tables (tlb_table_flush), then pages */
static void tlb_flush_mmu_free(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb)
{
	for (uint32_t i = 0; i < tlb->ntables; i++)
		mm_free_table(mm, t, tlb->tables[i]);
	tlb->ntables = 0;
	/* the blocks of one order that follow each other (a folio's pages) go as one run */
	for (uint32_t i = 0; i < tlb->npages; i++)
		mm_free_pages_run(mm, t, tlb->pages[i].pa, tlb->pages[i].order, tlb->pages[i].n);
	tlb->npages = 0;
}

static void tlb_flush_mmu(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb)
{
	tlb_flush_mmu_tlbonly(mm, t, tlb);
	tlb_flush_mmu_free(mm, t, tlb);
}

void tlb_end_vma(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb)
{
	tlb_flush_mmu_tlbonly(mm, t, tlb);
}

void tlb_finish_mmu(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb)
{
	tlb_flush_mmu(mm, t, tlb);
	tlb->s->tlb_flush_pending--;	/* dec_tlb_flush_pending() */
	room_free(tlb->pages, tlb->page_room);
	room_free(tlb->tables, tlb->table_room);
	tlb->pages = NULL;
	tlb->tables = NULL;
}
