/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * memory.c - tearing down user mappings: munmap (mm/vma.c do_vmi_munmap ->
 * vms_clear_ptes, the kernel's unmap_region), madvise (mm/madvise.c), the
 * mmu_gather (include/asm-generic/tlb.h, mm/mmu_gather.c,
 * arch/arm64/include/asm/tlb.h), zap_*_range and free_pgtables (mm/memory.c),
 * the THP split (mm/huge_memory.c __split_huge_pmd_locked), and the teardown of
 * hugetlb VMAs met on the way (mm/hugetlb.c __unmap_hugepage_range, with the
 * helpers of hugetlb.c).
 *
 * The rule the mmu_gather exists for (I1): a page or a page table may be
 * freed only once no CPU can still reach it through a TLB or walk-cache
 * entry.  So zapping clears entries and *records* the range, the level and
 * whether tables went; tlb_flush() turns that into one range TLBI
 * (last-level only if no table was freed, stride and TTL from the levels
 * cleared); and only after its DSB ISH are the batched pages and tables
 * freed (tlb_flush_mmu_free()).
 *
 * Simplifications, each with its reason:
 *  - the gather's batch is unbounded: the kernel flushes early when a batch
 *    page fills (force_flush), which changes the number of flushes, not
 *    their order against the frees;
 *  - munmap keeps mmap_lock for write to the end (the kernel downgrades it to
 *    read before clearing the page tables when it can); the PMD/PUD clears of
 *    free_pgtables() rely on the write lock in the I12 rule;
 *  - a folio has no refcount: each data page is mapped at most once (no fork,
 *    no shared zero page), so the pages a zap clears are freed at once (a
 *    whole folio as one free, a part of one page by page) — the kernel would
 *    keep a partly unmapped large folio until its deferred split;
 *  - MADV_FREE is treated as MADV_DONTNEED (the kernel keeps lazily-freed
 *    pages mapped until reclaim finds them clean); MADV_COLD changes no
 *    page-table entry (the kernel also clears the access flags).
 */
#include <stdlib.h>
#include <string.h>

#include "hugetlb.h"

#define TASK_SIZE	(1ull << 48)

/* madvise_pageout() lives with the reclaim path (rmap.c) */
int madvise_pageout(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start, uint64_t end);

/* a part of a VMA an op works on (a copy: other threads may move s->vma meanwhile) */
struct vma_range {
	uint64_t start, end;
	uint32_t flags;
	unsigned order;
};

/* ---- the mmu_gather ---- */

struct tlb_page {
	uint64_t pa;
	unsigned order;
};

struct mmu_gather {
	struct mm_space *s;
	uint64_t start, end;		/* the range to invalidate */
	bool freed_tables;		/* a table was unhooked: walk caches too (not last level) */
	bool cleared_ptes, cleared_pmds, cleared_puds, cleared_p4ds;
	struct tlb_page *pages;		/* freed only after the flush */
	uint32_t npages, cappages;
	uint64_t *tables;
	uint32_t ntables, captables;
	struct ref_snapshot *zapped;	/* MADV_DONTNEED: the ranges this zap cleared, or NULL */
};

/* (va, word) pairs of the reference, as they were */
struct ref_snapshot { uint64_t n, cap, *w; };

static void ref_snapshot_add(void *ctx, uint64_t va, uint64_t word)
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

/* The zap cleared the reference of [va, va + len) with the entries: remembered for its end. */
static void tlb_zapped(struct mmu_gather *tlb, uint64_t va, uint64_t len)
{
	if (tlb->zapped)
		ref_snapshot_add(tlb->zapped, va, len);
}

static void __tlb_reset_range(struct mmu_gather *tlb)
{
	tlb->start = TASK_SIZE;
	tlb->end = 0;
	tlb->freed_tables = false;
	tlb->cleared_ptes = tlb->cleared_pmds = tlb->cleared_puds = tlb->cleared_p4ds = false;
}

static void tlb_gather_mmu(struct mmu_gather *tlb, struct mm_space *s)
{
	memset(tlb, 0, sizeof(*tlb));
	tlb->s = s;
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

static void tlb_flush_pte_range(struct mmu_gather *tlb, uint64_t address, uint64_t size)
{
	__tlb_adjust_range(tlb, address, size);
	tlb->cleared_ptes = true;
}

static void tlb_flush_pmd_range(struct mmu_gather *tlb, uint64_t address, uint64_t size)
{
	__tlb_adjust_range(tlb, address, size);
	tlb->cleared_pmds = true;
}

static void tlb_flush_pud_range(struct mmu_gather *tlb, uint64_t address, uint64_t size)
{
	__tlb_adjust_range(tlb, address, size);
	tlb->cleared_puds = true;
}

static void tlb_flush_p4d_range(struct mmu_gather *tlb, uint64_t address, uint64_t size)
{
	__tlb_adjust_range(tlb, address, size);
	tlb->cleared_p4ds = true;
}

static void tlb_remove_tlb_entries(struct mmu_gather *tlb, uint64_t address, unsigned nr)
{
	tlb_flush_pte_range(tlb, address, PAGE_SIZE * nr);
}

static void tlb_remove_pmd_tlb_entry(struct mmu_gather *tlb, uint64_t address)
{
	tlb_flush_pmd_range(tlb, address, PMD_SIZE);
}

static void tlb_batch_push_page(struct mmu_gather *tlb, uint64_t pa, unsigned order)
{
	if (tlb->npages == tlb->cappages) {
		tlb->cappages = tlb->cappages ? 2 * tlb->cappages : 64;
		tlb->pages = realloc(tlb->pages, tlb->cappages * sizeof(*tlb->pages));
		if (!tlb->pages)
			abort();
	}
	tlb->pages[tlb->npages++] = (struct tlb_page){ pa, order };
}

/* tlb_remove_page_size(): a whole folio (THP) goes to the batch */
static void tlb_remove_page_size(struct mmu_gather *tlb, uint64_t pa, unsigned order)
{
	tlb_batch_push_page(tlb, pa, order);
}

/*
 * __tlb_remove_folio_pages(): nr pages of one folio starting at pa were unmapped.
 * A whole folio is freed as itself; a part of one page by page (see the header).
 */
static void __tlb_remove_folio_pages(struct mm_model *mm, struct mmu_gather *tlb, uint64_t pa, unsigned nr)
{
	unsigned order = folio_order(mm, pa);
	if (order && nr == 1u << order && IS_ALIGNED(pa, PAGE_SIZE << order)) {
		tlb_batch_push_page(tlb, pa, order);
		return;
	}
	for (unsigned i = 0; i < nr; i++)
		tlb_batch_push_page(tlb, pa + (uint64_t)i * PAGE_SIZE, 0);
}

static void tlb_remove_table(struct mmu_gather *tlb, uint64_t table)
{
	if (tlb->ntables == tlb->captables) {
		tlb->captables = tlb->captables ? 2 * tlb->captables : 8;
		tlb->tables = realloc(tlb->tables, tlb->captables * sizeof(*tlb->tables));
		if (!tlb->tables)
			abort();
	}
	tlb->tables[tlb->ntables++] = table;
}

/* pte_free_tlb(): the PTE table that covered address was unhooked from its PMD entry */
static void pte_free_tlb(struct mmu_gather *tlb, uint64_t table, uint64_t address)
{
	tlb_flush_pmd_range(tlb, address, PAGE_SIZE);
	tlb->freed_tables = true;
	tlb_remove_table(tlb, table);
}

static void pmd_free_tlb(struct mmu_gather *tlb, uint64_t table, uint64_t address)
{
	tlb_flush_pud_range(tlb, address, PAGE_SIZE);
	tlb->freed_tables = true;
	tlb_remove_table(tlb, table);
}

static void pud_free_tlb(struct mmu_gather *tlb, uint64_t table, uint64_t address)
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

/* tlb_flush() (arch/arm64/include/asm/tlb.h): leaves only unless a table went */
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
	for (uint32_t i = 0; i < tlb->npages; i++)
		mm_free_pages(mm, t, tlb->pages[i].pa, tlb->pages[i].order);
	tlb->npages = 0;
}

static void tlb_flush_mmu(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb)
{
	tlb_flush_mmu_tlbonly(mm, t, tlb);
	tlb_flush_mmu_free(mm, t, tlb);
}

/*
 * tlb_end_vma(): arm64 does not select MMU_GATHER_MERGE_VMAS, so the leaves of each
 * VMA are flushed at its end and the range restarts (it would otherwise grow over
 * the gaps between VMAs).  Pages stay batched.
 */
static void tlb_end_vma(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb)
{
	tlb_flush_mmu_tlbonly(mm, t, tlb);
}

static void tlb_finish_mmu(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb)
{
	tlb_flush_mmu(mm, t, tlb);
	tlb->s->tlb_flush_pending--;	/* dec_tlb_flush_pending() */
	free(tlb->pages);
	free(tlb->tables);
	tlb->pages = NULL;
	tlb->tables = NULL;
}

/* ---- THP split (mm/huge_memory.c) ---- */

bool pmd_trans_huge(uint64_t pmd)
{
	if (pmd_sect(pmd))
		return true;
	/* a PROT_NONE / NUMA-hinting THP: present but invalid, still a block */
	return !pte_valid(pmd) && (pmd & PT_DESC_PROTNONE) && !(pmd & PT_DESC_TABLE);
}

/* pmd_mkinvalid(): not valid for the walker, still "present" for the kernel */
static uint64_t pmd_mkinvalid(uint64_t pmd)
{
	return (pmd & ~PT_DESC_VALID) | PT_DESC_PROTNONE;
}

/*
 * pmdp_invalidate() (mm/pgtable-generic.c): xchg the block to invalid and flush it
 * with the PMD-level hint (flush_pmd_tlb_range(): stride PMD_SIZE, TTL 2, not last
 * level only).  This is the "break": the block's TLB entries are gone on every CPU
 * before the PTE table replaces it.
 */
static uint64_t pmdp_invalidate(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t haddr,
				uint64_t pmdp)
{
	uint64_t old = mm_read(mm, t, pmdp);
	mm_write(mm, t, pmdp, pmd_mkinvalid(old));
	__flush_tlb_range(mm, t, s, haddr, haddr + PMD_SIZE, PMD_SIZE, false, 2);
	return old;
}

void split_huge_pmd_locked(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			   uint64_t pmdp)
{
	const char *prev = mm_site(mm, t, "__split_huge_pmd_locked");
	mm_kernel_call(mm, PT_KEV_SPLIT_HUGE_PMD);
	uint64_t haddr = ALIGN_DOWN(addr, PMD_SIZE);
	uint64_t pgtable = hmap_get(&mm->deposit, pmdp, HMAP_EMPTY);
	if (pgtable == HMAP_EMPTY) {
		/* every anonymous THP deposits a table at fault (or its move carries it) */
		mm_warn(mm, t, "split-no-deposit", haddr, "THP at 0x%llx has no deposited PTE table",
			(unsigned long long)haddr);
		goto out;
	}
	uint64_t old_pmd = pmdp_invalidate(mm, t, s, haddr, pmdp);
	/* pgtable_trans_huge_withdraw() */
	hmap_del(&mm->deposit, pmdp);
	/* the PTEs carry the block's attributes and page (mk_pte(page, vma->vm_page_prot) with
	 * its write/young/dirty); a PROT_NONE block gives PROT_NONE ptes */
	uint64_t entry = (old_pmd & ~PT_DESC_CONT) | PT_DESC_TABLE;
	/* set_ptes() over a none table: naturally aligned 64K chunks become contpte blocks */
	set_ptes(mm, t, s, haddr, pgtable, entry, PTRS_PER_PTE);
	/* smp_wmb(): the PTEs are visible before the table is (pmd_populate) */
	mm_dmb(mm, t, PT_BAR_ISHST);
	set_pmd(mm, t, pmdp, pgtable | PMD_TYPE_TABLE);
out:
	mm_site(mm, t, prev);
}

void split_huge_pmd(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t pmdp, uint64_t addr)
{
	uint64_t ptl = pmdp & PAGE_MASK;
	mm_lock(mm, t, PT_LOCK_PMD, ptl, true);
	/* recheck under the lock: it may have been split or zapped meanwhile */
	if (pmd_trans_huge(mm_read(mm, t, pmdp)))
		split_huge_pmd_locked(mm, t, s, addr, pmdp);
	mm_unlock(mm, t, PT_LOCK_PMD, ptl);
}

void split_huge_pmd_address(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr)
{
	uint64_t pmdp = mm_walk_entry(mm, t, s, addr, 2);
	if (pmdp && pmd_trans_huge(mm_read(mm, t, pmdp)))
		split_huge_pmd(mm, t, s, pmdp, addr);
}

/* split_huge_pmd_if_needed() (vma_adjust_trans_huge()): a VMA boundary inside a THP splits it */
static void split_huge_pmd_if_needed(struct mm_model *mm, struct mm_thread *t, struct mm_space *s,
				     uint64_t vm_start, uint64_t vm_end, uint64_t address)
{
	if (IS_ALIGNED(address, PMD_SIZE))
		return;
	uint64_t lo = ALIGN_DOWN(address, PMD_SIZE), hi = ALIGN_UP(address, PMD_SIZE);
	if (lo >= vm_start && hi <= vm_end)
		split_huge_pmd_address(mm, t, s, address);
}

/* ---- zap: unmap_page_range() and its levels (mm/memory.c) ---- */

/* folio_pte_batch(): how many PTEs from ptep map consecutive pages of one folio alike; a
 * page of the folio's range reallocated since is another folio's (see mprotect.c) */
static unsigned folio_pte_batch(struct mm_model *mm, struct mm_thread *t, uint64_t ptep, uint64_t pte,
				unsigned max_nr)
{
	uint64_t pa = desc_pa(pte);
	unsigned order = folio_order(mm, pa);
	uint64_t folio_end = ALIGN_DOWN(pa, PAGE_SIZE << order) + (PAGE_SIZE << order);
	uint64_t in_folio = (folio_end - pa) >> PAGE_SHIFT;
	if (in_folio < max_nr)
		max_nr = (unsigned)in_folio;
	/* young/dirty may differ between the PTEs of one folio */
	const uint64_t ignore = PT_DESC_AF | PT_DESC_DIRTY | PT_DESC_RDONLY;
	uint64_t expected = pte & ~ignore;
	unsigned nr = 1;
	while (nr < max_nr) {
		expected += PAGE_SIZE;
		uint64_t next = mm_read(mm, t, ptep + 8ull * nr);
		if ((next & ~ignore) != expected ||
		    !folio_covers(mm, pa, desc_pa(next), desc_pa(next) + PAGE_SIZE))
			break;
		nr++;
	}
	return nr;
}

/* zap_present_ptes() + zap_present_folio_ptes(): clear a batch, record it, queue its pages */
static unsigned zap_present_ptes(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb, uint64_t ptep,
				 uint64_t ptent, unsigned max_nr, uint64_t addr)
{
	unsigned nr = folio_pte_batch(mm, t, ptep, ptent, max_nr);
	/* get_and_clear_full_ptes() unfolds a contpte block the batch covers only in part */
	get_and_clear_full_ptes(mm, t, tlb->s, addr, ptep, nr);
	/* the pages go now, under the PTL (racing faults and scans see them gone from here on) */
	ref_clear_range(tlb->s, addr, addr + (uint64_t)nr * PAGE_SIZE);
	tlb_zapped(tlb, addr, (uint64_t)nr * PAGE_SIZE);
	tlb_remove_tlb_entries(tlb, addr, nr);
	__tlb_remove_folio_pages(mm, tlb, desc_pa(ptent), nr);
	return nr;
}

static void zap_pte_range(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb, uint64_t pmd,
			  uint64_t addr, uint64_t end)
{
	uint64_t table = desc_pa(pmd);
	uint64_t ptep = pt_entry_pa(table, 3, addr);
	unsigned nr;
	mm_lock(mm, t, PT_LOCK_PTL, table, true);
	arch_enter_lazy_mmu_mode(mm, t);
	do {
		nr = 1;
		if (!mm_step(mm, t))
			break;
		uint64_t ptent = ptep_get(mm, t, ptep);
		if (pte_none(ptent))
			continue;
		if (pte_present(ptent)) {
			nr = zap_present_ptes(mm, t, tlb, ptep, ptent, (unsigned)((end - addr) >> PAGE_SHIFT), addr);
			continue;
		}
		/* not present, not none (no swap in the model): just clear it */
		pte_clear(mm, t, tlb->s, addr, ptep);
	} while (ptep += 8ull * nr, addr += PAGE_SIZE * nr, addr != end);
	arch_leave_lazy_mmu_mode(mm, t);
	mm_unlock(mm, t, PT_LOCK_PTL, table);
}

/* zap_huge_pmd() (mm/huge_memory.c): a whole THP goes with its PMD */
static bool zap_huge_pmd(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb, uint64_t pmdp,
			 uint64_t addr)
{
	uint64_t ptl = pmdp & PAGE_MASK;
	mm_lock(mm, t, PT_LOCK_PMD, ptl, true);
	uint64_t orig = mm_read(mm, t, pmdp);
	if (!pmd_trans_huge(orig)) {
		mm_unlock(mm, t, PT_LOCK_PMD, ptl);
		return false;
	}
	mm_xchg(mm, t, pmdp, 0);		/* pmdp_huge_get_and_clear_full() */
	ref_clear_range(tlb->s, ALIGN_DOWN(addr, PMD_SIZE), ALIGN_DOWN(addr, PMD_SIZE) + PMD_SIZE);
	tlb_zapped(tlb, ALIGN_DOWN(addr, PMD_SIZE), PMD_SIZE);
	tlb_remove_pmd_tlb_entry(tlb, addr);
	/* zap_deposited_table(): never hooked, so no walker can hold it: freed at once */
	uint64_t pgtable = hmap_get(&mm->deposit, pmdp, HMAP_EMPTY);
	if (pgtable != HMAP_EMPTY) {
		hmap_del(&mm->deposit, pmdp);
		mm_free_table(mm, t, pgtable);
	}
	mm_unlock(mm, t, PT_LOCK_PMD, ptl);
	tlb_remove_page_size(tlb, desc_pa(orig), 9);
	return true;
}

static void zap_pmd_range(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb, uint64_t pud,
			  uint64_t addr, uint64_t end)
{
	uint64_t pmdp = pt_entry_pa(desc_pa(pud), 2, addr);
	uint64_t next;
	do {
		next = pmd_addr_end(addr, end);
		if (!mm_step(mm, t))
			break;
		uint64_t pmd = mm_read(mm, t, pmdp);
		if (pmd_trans_huge(pmd)) {
			/* a part of a THP: split it, then zap its PTEs */
			if (next - addr != PMD_SIZE)
				split_huge_pmd(mm, t, tlb->s, pmdp, addr);
			else if (zap_huge_pmd(mm, t, tlb, pmdp, addr))
				continue;
			pmd = mm_read(mm, t, pmdp);
		}
		if (pte_none(pmd) || !pmd_table(pmd))
			continue;
		zap_pte_range(mm, t, tlb, pmd, addr, next);
	} while (pmdp += 8, addr = next, addr != end);
}

static void zap_pud_range(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb, uint64_t p4d,
			  uint64_t addr, uint64_t end)
{
	uint64_t pudp = pt_entry_pa(desc_pa(p4d), 1, addr);
	uint64_t next;
	do {
		next = pud_addr_end(addr, end);
		uint64_t pud = mm_read(mm, t, pudp);
		if (pte_none(pud) || !pmd_table(pud))
			continue;	/* no anonymous PUD-sized folios in the model */
		zap_pmd_range(mm, t, tlb, pud, addr, next);
	} while (pudp += 8, addr = next, addr != end);
}

/* unmap_page_range(): the p4d level is folded (4 levels), so the PGD entry is the p4d */
static void unmap_page_range(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb, uint64_t addr,
			     uint64_t end)
{
	const char *prev = mm_site(mm, t, "zap_pte_range");
	uint64_t pgdp = mm_pgd_entry(tlb->s, addr);
	uint64_t next;
	/* tlb_start_vma(): flush_cache_range() is a no-op on arm64 */
	do {
		next = pgd_addr_end(addr, end);
		uint64_t pgd = mm_read(mm, t, pgdp);
		if (pte_none(pgd) || !pmd_table(pgd))
			continue;
		zap_pud_range(mm, t, tlb, pgd, addr, next);
	} while (pgdp += 8, addr = next, addr != end);
	tlb_end_vma(mm, t, tlb);
	mm_site(mm, t, prev);
}

/* tlb_remove_huge_tlb_entry(): the level recorded is the huge page's (its stride and TTL) */
static void tlb_remove_huge_tlb_entry(struct mmu_gather *tlb, uint64_t sz, uint64_t address)
{
	if (sz >= PUD_SIZE)
		tlb_flush_pud_range(tlb, address, sz);
	else if (sz >= PMD_SIZE)
		tlb_flush_pmd_range(tlb, address, sz);
	else
		tlb_flush_pte_range(tlb, address, sz);
}

/*
 * __unmap_hugepage_range() (mm/hugetlb.c): each huge page of a hugetlb VMA is
 * cleared whole by huge_ptep_get_and_clear() (all entries of a contiguous one)
 * under its huge_pte_lock(), recorded at its own level, and freed after the
 * gather's flush.  (A model hugetlb VMA is one huge page, created by the hugetlb op.)
 */
static void unmap_hugepage_range(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb,
				 const struct vma_range *v)
{
	const char *prev = mm_site(mm, t, "__unmap_hugepage_range");
	uint64_t sz = PAGE_SIZE << v->order;
	unsigned level = sz >= PUD_SIZE ? 1 : sz >= PMD_SIZE ? 2 : 3;
	for (uint64_t addr = v->start; addr < v->end; addr += sz) {
		if (!mm_step(mm, t))
			break;
		uint64_t ptep = mm_walk_entry(mm, t, tlb->s, addr, level);
		if (!ptep)
			continue;
		/* huge_pte_lockptr(): the PTE table's lock below PMD_SIZE, the PMD table's below
		 * PUD_SIZE, page_table_lock for a PUD */
		enum pt_lock_class cls = sz >= PUD_SIZE ? PT_LOCK_PUD : sz >= PMD_SIZE ? PT_LOCK_PMD : PT_LOCK_PTL;
		uint64_t key = sz >= PUD_SIZE ? tlb->s->asid : ptep & PAGE_MASK;
		mm_lock(mm, t, cls, key, true);
		uint64_t pte = huge_ptep_get_and_clear(mm, t, tlb->s, addr, ptep, sz);
		mm_unlock(mm, t, cls, key);
		if (!pte_present(pte))
			continue;
		tlb_remove_huge_tlb_entry(tlb, sz, addr);
		if (v->flags & MM_VMA_HUGETLB_OWNED)
			tlb_remove_page_size(tlb, desc_pa(pte), v->order);
	}
	tlb_end_vma(mm, t, tlb);
	mm_site(mm, t, prev);
}

/* unmap_single_vma(): hugetlb VMAs have their own teardown */
static void unmap_single_vma(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb,
			     const struct vma_range *v)
{
	if (v->flags & MM_VMA_HUGETLB)
		unmap_hugepage_range(mm, t, tlb, v);
	else
		unmap_page_range(mm, t, tlb, v->start, v->end);
}

/* ---- free_pgtables() (mm/memory.c) ---- */

/* free_pte_range(): unhook a PTE table; it is freed after the (non-last-level) flush */
static void free_pte_range(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb, uint64_t pmdp,
			   uint64_t addr)
{
	uint64_t token = desc_pa(mm_read(mm, t, pmdp));
	pmd_clear(mm, t, pmdp);
	pte_free_tlb(tlb, token, addr);
}

/* pXd_none_or_clear_bad(): a block where a table was expected is cleared (pmd_clear_bad()) */
static bool none_or_clear_bad(struct mm_model *mm, struct mm_thread *t, uint64_t entryp, unsigned level)
{
	uint64_t e = mm_read(mm, t, entryp);
	if (pte_none(e))
		return true;
	if (pte_valid(e) && pmd_table(e))
		return false;
	mm_warn(mm, t, "pgtable-bad", 0, "bad level-%u entry 0x%llx where a table was expected", level,
		(unsigned long long)e);
	mm_write(mm, t, entryp, 0);
	return true;
}

/*
 * The floor/ceiling rule: a table is freed only if the whole range it maps lies in
 * [floor, ceiling), i.e. no neighbouring VMA can have entries in it.  ceiling 0 means
 * the top of the address space (USER_PGTABLES_CEILING).
 */
static void free_pmd_range(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb, uint64_t pudp,
			   uint64_t addr, uint64_t end, uint64_t floor, uint64_t ceiling)
{
	uint64_t start = addr;
	uint64_t pmdp = pt_entry_pa(desc_pa(mm_read(mm, t, pudp)), 2, addr);
	uint64_t next;
	do {
		next = pmd_addr_end(addr, end);
		if (!mm_step(mm, t))
			return;
		if (none_or_clear_bad(mm, t, pmdp, 2))
			continue;
		free_pte_range(mm, t, tlb, pmdp, addr);
	} while (pmdp += 8, addr = next, addr != end);

	start &= PUD_MASK;
	if (start < floor)
		return;
	if (ceiling) {
		ceiling &= PUD_MASK;
		if (!ceiling)
			return;
	}
	if (end - 1 > ceiling - 1)
		return;
	uint64_t pmd_table = desc_pa(mm_read(mm, t, pudp));
	pud_clear(mm, t, pudp);
	pmd_free_tlb(tlb, pmd_table, start);
}

static void free_pud_range(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb, uint64_t p4dp,
			   uint64_t addr, uint64_t end, uint64_t floor, uint64_t ceiling)
{
	uint64_t start = addr;
	uint64_t pudp = pt_entry_pa(desc_pa(mm_read(mm, t, p4dp)), 1, addr);
	uint64_t next;
	do {
		next = pud_addr_end(addr, end);
		if (none_or_clear_bad(mm, t, pudp, 1))
			continue;
		free_pmd_range(mm, t, tlb, pudp, addr, next, floor, ceiling);
	} while (pudp += 8, addr = next, addr != end);

	start &= PGDIR_MASK;		/* P4D_MASK: the p4d is folded into the pgd */
	if (start < floor)
		return;
	if (ceiling) {
		ceiling &= PGDIR_MASK;
		if (!ceiling)
			return;
	}
	if (end - 1 > ceiling - 1)
		return;
	uint64_t pud_table = desc_pa(mm_read(mm, t, p4dp));
	set_pgd(mm, t, p4dp, 0);	/* p4d_clear() -> set_p4d(): barriers even when clearing */
	pud_free_tlb(tlb, pud_table, start);
}

/* free_pgd_range(): free_p4d_range() is the folded level, its own clear/free are no-ops */
static void free_pgd_range(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb, uint64_t addr,
			   uint64_t end, uint64_t floor, uint64_t ceiling)
{
	/* only whole PMD ranges between floor and ceiling: a PTE table shared with a
	 * neighbour (or with what is left of a split VMA) stays */
	addr &= PMD_MASK;
	if (addr < floor) {
		addr += PMD_SIZE;
		if (!addr)
			return;
	}
	if (ceiling) {
		ceiling &= PMD_MASK;
		if (!ceiling)
			return;
	}
	if (end - 1 > ceiling - 1)
		end -= PMD_SIZE;
	if (addr > end - 1)
		return;
	uint64_t pgdp = mm_pgd_entry(tlb->s, addr);
	uint64_t next;
	do {
		next = pgd_addr_end(addr, end);
		if (none_or_clear_bad(mm, t, pgdp, 0))
			continue;
		free_pud_range(mm, t, tlb, pgdp, addr, next, floor, ceiling);
	} while (pgdp += 8, addr = next, addr != end);
}

/* free_pgtables(): the detached VMAs, nearby ones gathered into one call down */
static void free_pgtables(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb,
			  const struct vma_range *v, uint32_t n, uint64_t floor, uint64_t ceiling)
{
	const char *prev = mm_site(mm, t, "free_pgtables");
	for (uint32_t i = 0; i < n; i++) {
		uint64_t addr = v[i].start, end = v[i].end;
		while (i + 1 < n && v[i + 1].start <= end + PMD_SIZE)
			end = v[++i].end;
		free_pgd_range(mm, t, tlb, addr, end, floor, i + 1 < n ? v[i + 1].start : ceiling);
	}
	mm_site(mm, t, prev);
}

/* ---- munmap ---- */

/* The parts of VMAs inside [start, end), in order (the VMAs vms_gather_munmap_vmas() detaches). */
static uint32_t vmas_in_range(struct mm_space *s, uint64_t start, uint64_t end, struct vma_range **out)
{
	uint32_t n = 0;
	*out = NULL;
	for (uint32_t i = 0; i < s->nvma; i++)
		if (s->vma[i].start < end && start < s->vma[i].end)
			n++;
	if (!n)
		return 0;
	struct vma_range *v = malloc(n * sizeof(*v));
	if (!v)
		abort();
	n = 0;
	for (uint32_t i = 0; i < s->nvma; i++)
		if (s->vma[i].start < end && start < s->vma[i].end)
			v[n++] = (struct vma_range){ s->vma[i].start > start ? s->vma[i].start : start,
						     s->vma[i].end < end ? s->vma[i].end : end, s->vma[i].flags,
						     s->vma[i].order };
	*out = v;
	return n;
}

static void ref_check_ranges(struct mm_model *mm, struct mm_thread *t, struct mm_space *s,
			     const struct vma_range *v, uint32_t n, uint64_t start, uint64_t end, const char *opname);

int do_munmap(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start, uint64_t len)
{
	if (!IS_ALIGNED(start, PAGE_SIZE) || start > TASK_SIZE || len > TASK_SIZE - start)
		return EINVAL;
	len = ALIGN_UP(len, PAGE_SIZE);
	if (!len)
		return EINVAL;
	uint64_t end = start + len;
	const char *prev = mm_site(mm, t, "do_vmi_munmap");

	struct vma_range *v;
	int rc = 0;
	uint32_t n = vmas_in_range(s, start, end, &v);
	if (!n)
		goto out;
	/* __split_vma(): a hugetlb VMA splits only at its huge page size (hugetlb_vm_op_split()) */
	struct mm_vma *first = find_vma(s, v[0].start);
	if ((first->flags & MM_VMA_HUGETLB) && first->start < start) {
		if (!IS_ALIGNED(start, PAGE_SIZE << first->order))
			rc = EINVAL;
	}
	struct mm_vma *last = find_vma(s, v[n - 1].end - 1);
	if ((last->flags & MM_VMA_HUGETLB) && last->end > end) {
		if (!IS_ALIGNED(end, PAGE_SIZE << last->order))
			rc = EINVAL;
	}
	if (rc) {
		free(v);
		goto out;
	}
	/* __split_vma() -> vma_adjust_trans_huge(): a THP across a new VMA boundary is split */
	if (first->start < start)
		split_huge_pmd_if_needed(mm, t, s, first->start, first->end, start);
	last = find_vma(s, v[n - 1].end - 1);
	if (last->end > end)
		split_huge_pmd_if_needed(mm, t, s, last->start, last->end, end);

	/* the VMA tree is updated first; the page tables follow (vms_complete_munmap_vmas()) */
	vma_remove_range(s, start, end);
	uint64_t floor = 0, ceiling = 0;	/* FIRST_USER_ADDRESS, USER_PGTABLES_CEILING */
	for (uint32_t i = 0; i < s->nvma; i++) {
		if (s->vma[i].end <= start)
			floor = s->vma[i].end;
		if (s->vma[i].start >= end && !ceiling)
			ceiling = s->vma[i].start;
	}

	/* vms_clear_ptes(), the kernel's unmap_region() */
	struct mmu_gather tlb;
	tlb_gather_mmu(&tlb, s);
	for (uint32_t i = 0; i < n; i++)
		unmap_single_vma(mm, t, &tlb, &v[i]);	/* unmap_vmas() */
	free_pgtables(mm, t, &tlb, v, n, floor, ceiling);
	tlb_finish_mmu(mm, t, &tlb);
	free(v);
	ref_clear_range(s, start, end);
out:
	mm_site(mm, t, prev);
	return rc;
}

int mm_do_munmap(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	struct mm_space *s = mm_space_get(mm, t, ev->asid);
	uint64_t start = ev->va;
	if (!IS_ALIGNED(start, PAGE_SIZE) || start > TASK_SIZE || ev->len > TASK_SIZE - start ||
	    !ALIGN_UP(ev->len, PAGE_SIZE))
		return EINVAL;
	uint64_t end = start + ALIGN_UP(ev->len, PAGE_SIZE);
	mm_lock(mm, t, PT_LOCK_MMAP, s->asid, true);
	struct vma_range *v;
	uint32_t n = vmas_in_range(s, start, end, &v);
	int rc = do_munmap(mm, t, s, start, end - start);
	mm_unlock(mm, t, PT_LOCK_MMAP, s->asid);
	/* exactly the range goes: what was mapped in it, and what is left of a THP or a contpte
	 * block split at its ends (the holes between VMAs had nothing to lose) */
	ref_check_ranges(mm, t, s, v, n, start, end, "munmap");
	free(v);
	return rc;
}

struct first_leaf {
	uint64_t va;
	bool found;
};

static bool note_first_leaf(void *ctx, uint64_t va, unsigned level, uint64_t desc)
{
	(void)level;
	(void)desc;
	struct first_leaf *f = ctx;
	f->va = va;
	f->found = true;
	return false;
}

/*
 * ref_check() of a range the op left empty: page by page for a small one; for a large
 * one, only where the page tables still have a leaf (pt_walk_range() visits existing
 * tables only), so that a huge munmap of a sparse region costs what was mapped.
 */
static bool ref_check_emptied(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t a, uint64_t b,
			      const char *opname)
{
	if (b - a <= 16 * PMD_SIZE)
		return ref_check(mm, t, s, a, b, opname);
	struct first_leaf f = { 0, false };
	pt_walk_range(mm->m, false, s->asid, a, b, note_first_leaf, &f);
	if (!f.found)
		return true;
	uint64_t va = f.va > a ? f.va : a;
	return ref_check(mm, t, s, va, va + PAGE_SIZE, opname);
}

/*
 * ref_check() over the VMA parts an op emptied, and the PMD-sized margins around
 * [start, end) where a split THP or an unfolded contpte block must have kept its pages.
 * Only where mappings were: a huge range of holes costs nothing.
 */
static void ref_check_ranges(struct mm_model *mm, struct mm_thread *t, struct mm_space *s,
			     const struct vma_range *v, uint32_t n, uint64_t start, uint64_t end, const char *opname)
{
	if (t->hung)
		return;
	ref_check(mm, t, s, ALIGN_DOWN(start, PMD_SIZE), start, opname);
	for (uint32_t i = 0; i < n; i++)
		if (!ref_check_emptied(mm, t, s, v[i].start, v[i].end, opname))
			break;
	if (end < TASK_SIZE)
		ref_check(mm, t, s, end, ALIGN_UP(end, PMD_SIZE), opname);
}

/* ---- madvise ---- */

/*
 * zap_page_range_single() (madvise_dontneed_single_vma()): the pages go, the VMA
 * and the page tables stay; the next touch faults in a fresh page.
 */
static void zap_page_range_single(struct mm_model *mm, struct mm_thread *t, struct mm_space *s,
				  const struct vma_range *v)
{
	/* the reference of the range as the zap starts.  Each page's goes as the zap clears its
	 * entry; a page a racing fault maps again after that (both under mmap_lock for read) is
	 * the fault's, and stays; what is left unchanged at the end goes (a missed entry shows) */
	struct ref_snapshot snap = { 0 };
	ref_for_each(s, v->start, v->end, ref_snapshot_add, &snap);
	uint64_t n = snap.n, *was = snap.w;
	struct mmu_gather tlb;
	struct ref_snapshot zapped = { 0 };
	tlb_gather_mmu(&tlb, s);
	tlb.zapped = &zapped;
	unmap_single_vma(mm, t, &tlb, v);
	tlb_finish_mmu(mm, t, &tlb);
	/* what the zap cleared is gone already; a page it did not clear but that is unchanged is
	 * a missed entry and goes too (the page tables then show it) — never one it cleared and a
	 * racing fault mapped again, even with the very page the zap freed */
	for (uint64_t i = 0; i < n; i++) {
		bool cleared = false;
		for (uint64_t j = 0; j < zapped.n && !cleared; j++)
			cleared = was[2 * i] - zapped.w[2 * j] < zapped.w[2 * j + 1];
		if (!cleared && ref_get(s, was[2 * i]) == was[2 * i + 1])
			ref_clear_range(s, was[2 * i], was[2 * i] + PAGE_SIZE);
	}
	free(zapped.w);
	free(was);
}

static void madvise_update_vma_flags(struct mm_space *s, uint64_t start, uint64_t end, uint32_t set,
				     uint32_t clear)
{
	/* vma_modify_flags(): the VMAs are split so that exactly the range changes */
	vma_split_range(s, start, end);
	for (uint32_t i = 0; i < s->nvma; i++)
		if (s->vma[i].start >= start && s->vma[i].end <= end)
			s->vma[i].flags = (s->vma[i].flags & ~clear) | set;
}

int mm_do_madvise(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	struct mm_space *s = mm_space_get(mm, t, ev->asid);
	uint64_t start = ev->va;
	unsigned advice = ev->op;
	if (advice >= PT_ADV_COUNT || !IS_ALIGNED(start, PAGE_SIZE) || start > TASK_SIZE ||
	    ev->len > TASK_SIZE - start)
		return EINVAL;
	uint64_t end = start + ALIGN_UP(ev->len, PAGE_SIZE);
	if (end == start)
		return 0;
	/* madvise_need_mmap_write(): only the VMA-flag advices change the VMAs */
	bool write = advice == PT_ADV_HUGEPAGE || advice == PT_ADV_NOHUGEPAGE;
	const char *prev = mm_site(mm, t, "do_madvise");
	mm_lock(mm, t, PT_LOCK_MMAP, s->asid, write);
	/* madvise_walk_vmas(): the advice applies to the mapped parts; a hole gives ENOMEM */
	int rc = range_is_mapped(s, start, end) ? 0 : ENOMEM;
	struct vma_range *v;
	uint32_t n = vmas_in_range(s, start, end, &v);
	for (uint32_t i = 0; i < n; i++) {
		switch (advice) {
		case PT_ADV_DONTNEED:
		case PT_ADV_FREE:
			/* hugetlb: DONTNEED of whole huge pages only; MADV_FREE not at all */
			if (v[i].flags & MM_VMA_HUGETLB) {
				uint64_t sz = PAGE_SIZE << v[i].order;
				if (advice == PT_ADV_FREE || !IS_ALIGNED(v[i].start, sz) || !IS_ALIGNED(v[i].end, sz)) {
					rc = EINVAL;
					break;
				}
			}
			zap_page_range_single(mm, t, s, &v[i]);
			break;
		case PT_ADV_PAGEOUT:
			/* can_madv_lru_vma(): not for hugetlb */
			if (!(v[i].flags & MM_VMA_HUGETLB))
				madvise_pageout(mm, t, s, v[i].start, v[i].end);
			break;
		case PT_ADV_COLD:
			break;
		case PT_ADV_HUGEPAGE:
			madvise_update_vma_flags(s, v[i].start, v[i].end, MM_VMA_HUGEPAGE, MM_VMA_NOHUGEPAGE);
			break;
		case PT_ADV_NOHUGEPAGE:
			madvise_update_vma_flags(s, v[i].start, v[i].end, MM_VMA_NOHUGEPAGE, MM_VMA_HUGEPAGE);
			break;
		}
	}
	mm_unlock(mm, t, PT_LOCK_MMAP, s->asid);
	mm_site(mm, t, prev);
	if (advice == PT_ADV_DONTNEED || advice == PT_ADV_FREE)
		ref_check_ranges(mm, t, s, v, n, start, end, "madvise");
	else if (advice == PT_ADV_PAGEOUT)
		for (uint32_t i = 0; i < n && ref_check(mm, t, s, v[i].start, v[i].end, "madvise"); i++)
			;
	free(v);
	return rc;
}
