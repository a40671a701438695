/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tlb.h - the mmu_gather (include/asm-generic/tlb.h, mm/mmu_gather.c, with the
 * arm64 tlb_flush() of arch/arm64/include/asm/tlb.h), one for every routine
 * that clears entries in bulk: munmap and MADV_DONTNEED (memory.c), mprotect
 * and the NUMA scan (mprotect.c), the hugetlb teardown.
 *
 * The rule the mmu_gather exists for (I1): a page or a page table may be
 * freed only once no CPU can still reach it through a TLB or walk-cache
 * entry.  So a routine clears entries and *records* the range, the levels
 * and whether tables went; tlb_flush() turns that into one range TLBI
 * (last-level only if no table was freed, stride and TTL from the levels
 * cleared); and only after its DSB ISH are the batched pages and tables
 * freed (tlb_flush_mmu_free()).
 *
 * Simplification: the batch is unbounded.  The kernel flushes early when a
 * batch page fills (force_flush), which changes the number of flushes, not
 * their order against the frees.
 */
#ifndef PTFUZZ_TLB_H
#define PTFUZZ_TLB_H

#include "mm_internal.h"

/*! ref_snapshot_add() : append (va, word); a ref_for_each() callback. */
void ref_snapshot_add(void *ctx, uint64_t va, uint64_t word);
/*! ref_snapshot_sort() : in va order (ref_for_each() gives chunks in no order). */
void ref_snapshot_sort(struct ref_snapshot *x);

struct tlb_page {			/* n blocks of 2^order pages, one after the other from pa */
	uint64_t pa;
	unsigned order, n;
};

/* the batches' room inside the gather: an op's batches mostly fit, and then take no allocation */
#define TLB_PAGE_ROOM	32
#define TLB_TABLE_ROOM	8

struct mmu_gather {
	struct mm_space *s;
	uint64_t start, end;		/* the range to invalidate: [TASK_SIZE, 0) when empty */
	bool freed_tables;		/* a table was unhooked: walk caches too (not last level) */
	bool cleared_ptes, cleared_pmds, cleared_puds, cleared_p4ds;
	struct tlb_page *pages;		/* freed only after the flush; page_room or the heap */
	uint32_t npages, cappages;
	uint64_t *tables;		/* table_room or the heap */
	uint32_t ntables, captables;
	struct tlb_page page_room[TLB_PAGE_ROOM];
	uint64_t table_room[TLB_TABLE_ROOM];
};

/*! tlb_gather_mmu() : start a gather over s (inc_tlb_flush_pending()). */
void tlb_gather_mmu(struct mmu_gather *tlb, struct mm_space *s);
/*! tlb_finish_mmu() : flush what is left, free the batches, dec_tlb_flush_pending(). */
void tlb_finish_mmu(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb);
/*!
 * tlb_end_vma() : arm64 does not select MMU_GATHER_MERGE_VMAS, so the entries of
 * each VMA are flushed at its end and the range restarts (it would otherwise
 * grow over the gaps between VMAs).  Pages and tables stay batched.
 */
void tlb_end_vma(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb);

/* tlb_flush_{pte,pmd,pud,p4d}_range(): entries of that level in [address, address + size) were
 * cleared or changed (pte_needs_flush() is always true on arm64) */
void tlb_flush_pte_range(struct mmu_gather *tlb, uint64_t address, uint64_t size);
void tlb_flush_pmd_range(struct mmu_gather *tlb, uint64_t address, uint64_t size);
void tlb_flush_pud_range(struct mmu_gather *tlb, uint64_t address, uint64_t size);
void tlb_flush_p4d_range(struct mmu_gather *tlb, uint64_t address, uint64_t size);
static inline void tlb_remove_tlb_entries(struct mmu_gather *tlb, uint64_t address, unsigned nr)
{
	tlb_flush_pte_range(tlb, address, PAGE_SIZE * nr);
}
static inline void tlb_remove_pmd_tlb_entry(struct mmu_gather *tlb, uint64_t address)
{
	tlb_flush_pmd_range(tlb, address, PMD_SIZE);
}
/*! tlb_remove_huge_tlb_entry() : the level recorded is the huge page's (its stride and TTL). */
void tlb_remove_huge_tlb_entry(struct mmu_gather *tlb, uint64_t sz, uint64_t address);

/*! tlb_remove_page_size() : a whole folio of order `order` at pa goes to the batch. */
void tlb_remove_page_size(struct mmu_gather *tlb, uint64_t pa, unsigned order);
/*!
 * __tlb_remove_folio_pages() : nr pages of one folio starting at pa were unmapped.
 * A folio has no refcount in the model (each data page is mapped at most once):
 * a whole folio is freed as itself, a part of one page by page.
 */
void __tlb_remove_folio_pages(struct mm_model *mm, struct mmu_gather *tlb, uint64_t pa, unsigned nr);
/*! {pte,pmd,pud}_free_tlb() : the table that covered address was unhooked from its parent entry;
 * it is freed after the (non-last-level) flush. */
void pte_free_tlb(struct mmu_gather *tlb, uint64_t table, uint64_t address);
void pmd_free_tlb(struct mmu_gather *tlb, uint64_t table, uint64_t address);
void pud_free_tlb(struct mmu_gather *tlb, uint64_t table, uint64_t address);

#endif
