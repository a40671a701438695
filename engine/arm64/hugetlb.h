/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hugetlb.h - the arm64 huge-pte helpers (arch/arm64/mm/hugetlbpage.c,
 * arch/arm64/include/asm/hugetlb.h, and set_ptes_anysz() /
 * ptep_get_and_clear_anysz() of arch/arm64/include/asm/pgtable.h) as patched
 * by seed 000 #01-#06 and #09.  hugetlbpage.c defines them; mm/hugetlb.c (the
 * hugetlb op) and vmalloc.c use them, the latter for contpte-mapped vmap
 * (seed 000 #08, #09: vmap_pte_range() maps a 64K block with
 * set_huge_pte_at(&init_mm, ...), vunmap_pte_range() tears it down with
 * huge_ptep_get_and_clear()).
 *
 * A "huge pte" is ncontig entries of pgsize each (num_contig_ptes()):
 *
 *   size      pgsize   ncontig  level
 *   64K       4K       16       3 (CONT_PTE)
 *   2M        2M       1        2 (PMD block)
 *   32M       2M       16       2 (CONT_PMD)
 *   1G        1G       1        1 (PUD block)
 *
 * ptep is the physical address of the first entry; s is the address space
 * (init_mm for kernel mappings).
 */
#ifndef PTFUZZ_MM_HUGETLB_H
#define PTFUZZ_MM_HUGETLB_H

#include "contpte.h"

#define CONT_PTE_SHIFT	16
#define CONT_PMD_SHIFT	25

/*! pgprot_kernel() : page descriptor bits of PAGE_KERNEL (prot 0 or with w), PAGE_KERNEL_RO (no w); x clears PXN. */
uint64_t pgprot_kernel(unsigned prot);

/*! num_contig_ptes() : entries (and *pgsize, the size of each) of a huge pte of size; 0 if unsupported. */
unsigned num_contig_ptes(uint64_t size, uint64_t *pgsize);

/*! arch_make_huge_pte() : pte (a page descriptor) made into the huge pte of 1 << shift: CONT and/or block. */
uint64_t arch_make_huge_pte(uint64_t pte, unsigned shift);

/*!
 * set_ptes_anysz() : write nr entries of pgsize starting with pte (output address
 * advancing by pgsize), then, once, the barriers a valid kernel entry needs
 * (seed 000 #06: hoisted out of the loop; MMV_SET_PTES_NO_BARRIER loses them).
 */
void set_ptes_anysz(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t ptep, uint64_t pte,
		    unsigned nr, uint64_t pgsize);
/*! ptep_get_and_clear_anysz() : xchg the entry with 0; returns the old one. */
uint64_t ptep_get_and_clear_anysz(struct mm_model *mm, struct mm_thread *t, uint64_t ptep, uint64_t pgsize);

/*!
 * set_huge_pte_at() : map the huge pte of size sz at ptep: a contiguous range that is
 * valid is first broken (clear_flush(): cleared and flushed, the kernel flush for
 * init_mm, seed 000 #09), then all entries are written with set_ptes_anysz().
 */
void set_huge_pte_at(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr, uint64_t ptep,
		     uint64_t pte, uint64_t sz);
/*! huge_ptep_get_and_clear() : clear the ncontig entries (no flush); the first, with dirty/young gathered. */
uint64_t huge_ptep_get_and_clear(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
				 uint64_t ptep, uint64_t sz);
/*!
 * __flush_hugetlb_tlb_range() : (asm/hugetlb.h, seed 000 #02) flush [start, end) of a user
 * space with the stride and level hint of entries of size `stride`; last_level when only
 * leaves went.  MMV_HUGETLB_WRONG_STRIDE hints one level too wide.
 */
void __flush_hugetlb_tlb_range(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start,
			       uint64_t end, uint64_t stride, bool last_level);

/*! huge_pte_alloc() : the entry of a huge pte of size sz (PUD, PMD or PTE), tables allocated on the way; 0 if a block is in the way. */
uint64_t huge_pte_alloc(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr, uint64_t sz);
/*! huge_pte_offset() : the entry of a huge pte of size sz, or 0 if no table leads there. */
uint64_t huge_pte_offset(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr, uint64_t sz);
/*! huge_ptep_get() : the entry at ptep, with the dirty/young of any entry of its contiguous range. */
uint64_t huge_ptep_get(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr, uint64_t ptep);
/*! huge_ptep_set_wrprotect() : make the huge pte at ptep read-only (a contiguous range: break, then remake). */
void huge_ptep_set_wrprotect(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			     uint64_t ptep);
/*! huge_ptep_set_access_flags() : set young/dirty/write of the huge pte at ptep to pte's; 1 if it changed. */
int huge_ptep_set_access_flags(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			       uint64_t ptep, uint64_t pte, bool dirty, uint64_t sz);

#endif
