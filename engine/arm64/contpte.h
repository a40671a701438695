/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * contpte.h - arm64 contpte (64K contiguous PTE blocks) for user mappings,
 * and the contpte-transparent PTE API of arch/arm64/include/asm/pgtable.h
 * built on it (arch/arm64/mm/contpte.c; seed 000 extends the same blocks to
 * vmalloc, whose kernel-side code lives in vmalloc.c).
 *
 * Who calls what:
 *
 *  - Core-mm routines (zap, mprotect, mremap, pageout) use the *public* API
 *    below (set_ptes, ptep_get, ptep_get_and_clear, get_and_clear_full_ptes,
 *    modify_prot_start_ptes/commit_ptes, ptep_clear_flush).  Like the kernel's,
 *    these unfold a contpte block that the call covers only partly, so the
 *    caller never sees the CONT bit.
 *  - Routines that touch PTEs with raw mm_read/mm_write (or the __ variants
 *    below) must first call contpte_try_unfold() on each entry, or
 *    contpte_try_unfold_partial() on the [addr, addr + nr pages) range, when
 *    they change a *subset* of a block (permissions, output address, clear).
 *    A range that covers whole aligned blocks needs no unfold.
 *
 * All of it is for a user space s (mm_is_user(): never init_mm; kernel
 * contpte mappings are never folded/unfolded dynamically, because a racing
 * fault on a kernel address cannot be tolerated).  Every routine here must be
 * called with the PTE table's PTL held (PT_LOCK_PTL, key = table pa): the
 * unfold writes the other 15 entries of the block.  ptep is the physical
 * address of the PTE for addr (mm_walk_entry(..., 3)); nr counts PTEs and
 * must not cross the PTE table.
 *
 * The variant MMV_CONTPTE_NO_UNFOLD ("a subset of a contpte block modified
 * without unfolding it first") switches contpte_try_unfold(), the one
 * decision point every caller goes through.
 *
 * This API is stable: other families (mprotect.c, mremap.c, rmap.c) depend on it.
 */
#ifndef PTFUZZ_MM_CONTPTE_H
#define PTFUZZ_MM_CONTPTE_H

#include "mm_internal.h"

static inline bool pte_valid_cont(uint64_t pte) { return pte_valid(pte) && pte_cont(pte); }
/* the PTE entry address of the first entry of ptep's aligned 16-entry group */
static inline uint64_t contpte_align_down(uint64_t ptep) { return ALIGN_DOWN(ptep, 8 * CONT_PTES); }

/* ---- the raw (non-contpte-aware) layer: arm64's __ptep_get / __set_ptes / ... ---- */

/*! __ptep_get() : READ_ONCE of the PTE at ptep. */
uint64_t __ptep_get(struct mm_model *mm, struct mm_thread *t, uint64_t ptep);
/*! __ptep_get_and_clear() : xchg(ptep, 0); returns the old PTE. */
uint64_t __ptep_get_and_clear(struct mm_model *mm, struct mm_thread *t, uint64_t ptep);
/*!
 * __set_ptes() : write nr consecutive PTEs starting with pte, the output address
 * advancing by a page each (set_ptes_anysz(): stores first, then the barriers of
 * the last one once; user ptes have none).  No CONT handling.
 */
void __set_ptes(struct mm_model *mm, struct mm_thread *t, uint64_t ptep, uint64_t pte, unsigned nr);
/*! __get_and_clear_full_ptes() : clear nr PTEs; returns the first with the others' dirty/young ORed in. */
uint64_t __get_and_clear_full_ptes(struct mm_model *mm, struct mm_thread *t, uint64_t ptep, unsigned nr);
/*! __wrprotect_ptes() : set RDONLY (clear write permission) on nr valid PTEs in place (a test's). */
void __wrprotect_ptes(struct mm_model *mm, struct mm_thread *t, uint64_t ptep, unsigned nr);

/* ---- contpte.c ---- */

/*!
 * contpte_try_unfold() : if pte (the current value at ptep) is valid and CONT,
 * rewrite its whole aligned block without CONT: clear all 16 (break), flush the
 * 64K range (last level, TTL 3), write them back without CONT (make).  Dirty and
 * young of the block are ORed into every entry.  No-op for a non-CONT pte or a
 * kernel space.  The MMV_CONTPTE_NO_UNFOLD decision point.
 */
void contpte_try_unfold(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			uint64_t ptep, uint64_t pte);
/*! __contpte_try_unfold() : the unconditional unfold of pte's block (caller checked pte_valid_cont). */
void __contpte_try_unfold(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			  uint64_t ptep, uint64_t pte);
/*!
 * contpte_try_unfold_partial() : unfold the contpte blocks that [addr, addr + nr pages)
 * covers only partly, at its start and at its end (blocks covered whole are left folded).
 */
void contpte_try_unfold_partial(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
				uint64_t ptep, unsigned nr);
/*!
 * contpte_try_fold() : after pte was written at ptep, fold its block if addr is the
 * last entry of an aligned group, the physical address is aligned likewise, and all
 * 16 entries map one folio consecutively with the same attributes (ignoring
 * young/dirty): break all 16, flush, rewrite with CONT.
 */
void contpte_try_fold(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr, uint64_t ptep,
		      uint64_t pte);
/*!
 * contpte_set_ptes() : map nr (>1) PTEs over none entries; each naturally aligned
 * 64K chunk (VA and PA) gets CONT, the rest not.
 */
void contpte_set_ptes(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr, uint64_t ptep,
		      uint64_t pte, unsigned nr);
/*! contpte_ptep_get() : orig_pte with the block's dirty/young gathered in. */
uint64_t contpte_ptep_get(struct mm_model *mm, struct mm_thread *t, uint64_t ptep, uint64_t orig_pte);
uint64_t contpte_get_and_clear_full_ptes(struct mm_model *mm, struct mm_thread *t, struct mm_space *s,
					 uint64_t addr, uint64_t ptep, unsigned nr);

/* ---- the public, contpte-transparent PTE API (arm64 pgtable.h) ---- */

/*! ptep_get() : the PTE, with a block's dirty/young gathered (CONT bit kept, as the kernel's). */
uint64_t ptep_get(struct mm_model *mm, struct mm_thread *t, uint64_t ptep);
/*! set_ptes() : nr == 1: unfold what is there, write, try to fold; nr > 1: contpte_set_ptes(). */
void set_ptes(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr, uint64_t ptep,
	      uint64_t pte, unsigned nr);
static inline void set_pte_at(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			      uint64_t ptep, uint64_t pte)
{
	set_ptes(mm, t, s, addr, ptep, pte, 1);
}
/*! ptep_get_and_clear() : unfold the block of ptep if any, then clear the one entry; returns it. */
uint64_t ptep_get_and_clear(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			    uint64_t ptep);
/*! get_and_clear_full_ptes() : clear nr PTEs (unfolding partly covered blocks); dirty/young ORed. */
uint64_t get_and_clear_full_ptes(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
				 uint64_t ptep, unsigned nr);
void pte_clear(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr, uint64_t ptep);
/*!
 * ptep_clear_flush() : (mm/pgtable-generic.c) ptep_get_and_clear(), then
 * flush_tlb_page() if the old entry was accessible; returns the old PTE.
 */
uint64_t ptep_clear_flush(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			  uint64_t ptep);
/*!
 * modify_prot_start_ptes() / modify_prot_commit_ptes() : (arch/arm64/mm/mmu.c) the
 * mprotect transaction over nr PTEs of one folio: get_and_clear_full_ptes (unfolding
 * partly covered blocks), then set_ptes; whole blocks stay folded.
 */
uint64_t modify_prot_start_ptes(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
				uint64_t ptep, unsigned nr);
void modify_prot_commit_ptes(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			     uint64_t ptep, uint64_t old_pte, uint64_t pte, unsigned nr);

/*!
 * folio_order() : page_folio() stand-in: the order of the folio holding data page pa
 * (the naturally aligned block it was allocated as); 0 if pa is no data page.
 * folio_covers() : pa's folio holds all of [lo, hi) (no subpage reallocated since).
 */
unsigned folio_order(struct mm_model *mm, uint64_t pa);
bool folio_covers(struct mm_model *mm, uint64_t pa, uint64_t lo, uint64_t hi);
/*! folio_at_covers() : folio_covers() where pa's folio is known: the data folio of `order` at start. */
bool folio_at_covers(struct mm_model *mm, uint64_t start, unsigned order, uint64_t lo, uint64_t hi);

/* pte helpers for the CONT-aware callers */
static inline uint64_t pte_mknoncont(uint64_t pte) { return pte & ~PT_DESC_CONT; }
static inline uint64_t pte_mkcont(uint64_t pte) { return pte | PT_DESC_CONT; }

#endif
