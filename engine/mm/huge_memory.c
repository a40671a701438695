/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * huge_memory.c - the transparent huge PMD (mm/huge_memory.c): the split of a
 * THP into a PTE table (__split_huge_pmd_locked, with pmdp_invalidate() of
 * mm/pgtable-generic.c), the split at a new VMA boundary
 * (vma_adjust_trans_huge), zap_huge_pmd() for the zap of memory.c, and the
 * THP faults (do_huge_pmd_anonymous_page, do_huge_pmd_numa_page) for
 * handle_mm_fault() in memory.c.  (change_huge_pmd is in mprotect.c,
 * move_huge_pmd in mremap.c.)
 */
#include "contpte.h"
#include "tlb.h"

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
	__flush_tlb_range(mm, t, s, haddr, haddr + PMD_SIZE, PMD_SIZE, /*last_level=*/false, 2);
	return old;
}

void split_huge_pmd_locked(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			   uint64_t pmdp)
{
	mm_site_scoped(mm, t, "__split_huge_pmd_locked");
	mm_kernel_call(mm, PT_KEV_SPLIT_HUGE_PMD);
	uint64_t haddr = ALIGN_DOWN(addr, PMD_SIZE);
	uint64_t pgtable = hmap_get(&mm->deposit, pmdp, HMAP_EMPTY);
	/* every anonymous THP deposits a table at fault (or its move carries it) */
	if (MM_WARN_ON(mm, t, pgtable == HMAP_EMPTY, "split-no-deposit", haddr,
		       "THP at 0x%llx has no deposited PTE table", (unsigned long long)haddr))
		return;
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
void split_huge_pmd_if_needed(struct mm_model *mm, struct mm_thread *t, struct mm_space *s,
			      uint64_t vm_start, uint64_t vm_end, uint64_t address)
{
	if (IS_ALIGNED(address, PMD_SIZE))
		return;
	uint64_t lo = ALIGN_DOWN(address, PMD_SIZE), hi = ALIGN_UP(address, PMD_SIZE);
	if (lo >= vm_start && hi <= vm_end)
		split_huge_pmd_address(mm, t, s, address);
}

/* zap_huge_pmd(): a whole THP goes with its PMD */
bool zap_huge_pmd(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb, uint64_t pmdp, uint64_t addr)
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

/* ---- faults ---- */

/*
 * do_huge_pmd_numa_page() (mm/huge_memory.c): a fault on a THP the NUMA scan made
 * PROT_NONE (change_huge_pmd() with MM_CP_PROT_NUMA: the block invalid, its TLB entries
 * already flushed by pmdp_invalidate_ad()) restores the block with the VMA's protection,
 * under the PMD lock, if the entry is still the hinted block (a split may have replaced it).
 * Returns true if it did.
 */
bool do_huge_pmd_numa_page(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, struct mm_vma *v,
			   uint64_t haddr)
{
	uint64_t pmdp = mm_walk_entry(mm, t, s, haddr, 2);
	if (!pmdp)
		return false;
	uint64_t pmd = mm_read(mm, t, pmdp);
	if (pte_valid(pmd) || !(pmd & PT_DESC_PROTNONE) || (pmd & PT_DESC_TABLE))	/* a hinted block */
		return false;
	uint64_t ptl = pmdp & PAGE_MASK, page = desc_pa(pmd);
	mm_lock(mm, t, PT_LOCK_PMD, ptl, true);
	bool same = mm_read(mm, t, pmdp) == pmd;
	if (same)
		mm_write(mm, t, pmdp, mk_user_pmd(page, v->prot));	/* invalid -> valid: no break needed */
	mm_unlock(mm, t, PT_LOCK_PMD, ptl);
	if (same)
		ref_set_run(s, haddr, 512, page, ref_prot(v->prot));
	return same;
}

/* do_huge_pmd_anonymous_page(): a 2M folio mapped by one PMD block; its PTE table is deposited. */
int fault_thp(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, struct mm_vma *v, uint64_t haddr)
{
	uint64_t pmdp = walk_alloc(mm, t, s, haddr, 2);
	if (!pmdp)
		return -1;
	uint64_t pgtable = mm_alloc_table(mm, t, 3);		/* pte_alloc_one() for a later split */
	uint64_t page = mm_alloc_pages(mm, t, 9, 0);
	mm_dmb(mm, t, PT_BAR_ISHST);				/* __folio_mark_uptodate(): smp_wmb() */
	uint64_t ptl = pmdp & PAGE_MASK;
	mm_lock(mm, t, PT_LOCK_PMD, ptl, true);
	if (!pte_none(mm_read(mm, t, pmdp))) {
		mm_unlock(mm, t, PT_LOCK_PMD, ptl);
		mm_free_pages(mm, t, page, 9);
		mm_free_table(mm, t, pgtable);
		return 0;
	}
	hmap_set(&mm->deposit, pmdp, pgtable);		/* pgtable_trans_huge_deposit() */
	mm_write(mm, t, pmdp, mk_user_pmd(page, v->prot));	/* set_pmd_at(): user, no barriers */
	mm_unlock(mm, t, PT_LOCK_PMD, ptl);
	ref_set_run(s, haddr, 512, page, ref_prot(v->prot));
	return 0;
}
