/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * contpte.c - arm64 contpte blocks of user mappings and the contpte-transparent
 * PTE API (arch/arm64/mm/contpte.c and the wrappers of
 * arch/arm64/include/asm/pgtable.h), the form seed 000 builds on
 * (set_ptes_anysz() of #06 for the hoisted barriers of __set_ptes()).
 *
 * Why unfold/fold at all: "Misprogramming of the Contiguous bit" (Arm ARM
 * D8.7.1) — while any entry of an aligned 16-entry group is valid with CONT,
 * all 16 must be valid, CONT, consecutive and attribute-identical, and the
 * TLB may hold one entry for the whole 64K.  So a subset may not be changed
 * in place: the whole group is broken (all 16 cleared), the 64K range is
 * invalidated, and the group is rewritten without CONT (unfold) before the
 * subset changes; folding goes the same way in the other direction.  This is
 * break-before-make on 16 entries (pgattr_change_is_safe(): "live contiguous
 * mappings may not be manipulated at all").
 *
 * Simplification: no FEAT_BBM level-2 ("noabort") path — the model always
 * breaks, which is what the kernel does on hardware without BBML2.
 */
#include "contpte.h"

/* mm_is_user(): never fold/unfold kernel mappings, a racing kernel fault cannot be retried */
static bool mm_is_user(const struct mm_space *s) { return !s->kernel; }

/* ---- the raw layer ---- */

uint64_t __ptep_get(struct mm_model *mm, struct mm_thread *t, uint64_t ptep)
{
	return mm_read(mm, t, ptep);
}

uint64_t __ptep_get_and_clear(struct mm_model *mm, struct mm_thread *t, uint64_t ptep)
{
	return mm_xchg(mm, t, ptep, 0);
}

void __set_ptes(struct mm_model *mm, struct mm_thread *t, uint64_t ptep, uint64_t pte, unsigned nr)
{
	/* set_ptes_anysz() (seed 000 #06): all stores first, the barriers (kernel ptes only)
	 * once after the last one */
	uint64_t run[PTRS_PER_PTE], next = pte;
	for (unsigned i = 0; i < nr && i < PTRS_PER_PTE; i++) {
		run[i] = next;
		if (next)
			next = pte_advance_pa(next, 1);
	}
	/* __set_pte_nosync() is one store: the loop can go as one run of stores */
	if (nr <= PTRS_PER_PTE && mm_step_write_run(mm, t, ptep, run, nr)) {
		__set_pte_complete(mm, t, next);
		return;
	}
	for (unsigned i = 0; i < nr; i++) {
		if (!mm_step(mm, t))
			break;
		__set_pte_nosync(mm, t, ptep + 8ull * i, pte);
		if (pte)
			pte = pte_advance_pa(pte, 1);
	}
	__set_pte_complete(mm, t, pte);
}

uint64_t __get_and_clear_full_ptes(struct mm_model *mm, struct mm_thread *t, uint64_t ptep, unsigned nr)
{
	uint64_t old[PTRS_PER_PTE];
	if (mm_step_clear_run(mm, t, ptep, old, nr)) {
		/* __ptep_get_and_clear() is a read and a store: the loop went as one run */
		return pte_gather_ad_run(old[0], old + 1, nr - 1);
	}
	uint64_t pte = __ptep_get_and_clear(mm, t, ptep);
	for (unsigned i = 1; i < nr; i++) {
		if (!mm_step(mm, t))
			break;
		uint64_t tmp = __ptep_get_and_clear(mm, t, ptep + 8ull * i);
		pte = pte_gather_ad(pte, tmp);
	}
	return pte;
}

void __wrprotect_ptes(struct mm_model *mm, struct mm_thread *t, uint64_t ptep, unsigned nr)
{
	for (unsigned i = 0; i < nr; i++, ptep += 8) {
		if (!mm_step(mm, t))
			break;
		/* __ptep_set_wrprotect(): a cmpxchg loop against hardware AF/DBM updates */
		uint64_t old = __ptep_get(mm, t, ptep);
		if (pte_valid(old))
			mm_write(mm, t, ptep, pte_wrprotect(old));
	}
}

/* ---- contpte.c ---- */

/*
 * contpte_convert(): rewrite the whole block of ptep as pte's attributes (with or
 * without CONT): break all 16, invalidate the 64K (last level: no table goes),
 * make.  Dirty and young of any entry survive into all of them.
 */
static void contpte_convert(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			    uint64_t ptep, uint64_t pte)
{
	const char *prev = mm_site(mm, t, "contpte_convert");
	uint64_t start_ptep = contpte_align_down(ptep);
	uint64_t start_addr = ALIGN_DOWN(addr, CONT_PTE_SIZE);

	pte = (pte & ~PT_DESC_OA_MASK) | ALIGN_DOWN(desc_pa(pte), CONT_PTE_SIZE);
	uint64_t old[CONT_PTES];
	if (mm_step_clear_each_run(mm, t, start_ptep, old, CONT_PTES)) {
		/* the (step, __ptep_get_and_clear()) loop below, as one run */
		pte = pte_gather_ad_run(pte, old, CONT_PTES);
	} else {
		for (unsigned i = 0; i < CONT_PTES; i++) {
			if (!mm_step(mm, t))
				break;
			uint64_t ptent = __ptep_get_and_clear(mm, t, start_ptep + 8ull * i);
			pte = pte_gather_ad(pte, ptent);
		}
	}
	/* the break must be complete on every CPU before the make (BBM) */
	__flush_tlb_range(mm, t, s, start_addr, start_addr + CONT_PTE_SIZE, PAGE_SIZE, /*last_level=*/true, 3);
	__set_ptes(mm, t, start_ptep, pte, CONT_PTES);
	mm_site(mm, t, prev);
}

void __contpte_try_unfold(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			  uint64_t ptep, uint64_t pte)
{
	if (!mm_is_user(s))
		return;
	contpte_convert(mm, t, s, addr, ptep, pte_mknoncont(pte));
}

void contpte_try_unfold(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			uint64_t ptep, uint64_t pte)
{
	if (!pte_valid_cont(pte))
		return;
	/* bug zoo: the caller goes on to change a subset of a live contpte block in place */
	if (mm_variant(mm, MMV_CONTPTE_NO_UNFOLD))
		return;
	__contpte_try_unfold(mm, t, s, addr, ptep, pte);
}

void contpte_try_unfold_partial(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
				uint64_t ptep, unsigned nr)
{
	if (!nr)
		return;
	/* a block covered whole may be cleared/modified as a unit; only the ends can be partial */
	if (ptep != contpte_align_down(ptep) || nr < CONT_PTES)
		contpte_try_unfold(mm, t, s, addr, ptep, __ptep_get(mm, t, ptep));
	uint64_t endp = ptep + 8ull * nr;
	if (endp != contpte_align_down(endp)) {
		uint64_t last_ptep = endp - 8;
		contpte_try_unfold(mm, t, s, addr + PAGE_SIZE * (nr - 1), last_ptep, __ptep_get(mm, t, last_ptep));
	}
}

/*
 * page_folio() stand-in: the folio holding pa is the naturally aligned block of
 * the order it was allocated with (the machine's frame records it).  A subpage
 * freed and reallocated since belongs to another folio: its order differs.
 */
unsigned folio_order(struct mm_model *mm, uint64_t pa)
{
	unsigned order, node;
	return pt_machine_data_page(mm->m, pa, &order, &node) ? order : 0;
}

bool folio_covers(struct mm_model *mm, uint64_t pa, uint64_t lo, uint64_t hi)
{
	unsigned order, node;
	if (!pt_machine_data_page(mm->m, pa, &order, &node))
		return false;
	return folio_at_covers(mm, ALIGN_DOWN(pa, PAGE_SIZE << order), order, lo, hi);
}

bool folio_at_covers(struct mm_model *mm, uint64_t start, unsigned order, uint64_t lo, uint64_t hi)
{
	uint64_t end = start + (PAGE_SIZE << order);
	if (start > lo || end < hi)
		return false;
	unsigned n = hi > lo ? (unsigned)((hi - lo + PAGE_SIZE - 1) >> PAGE_SHIFT) : 0;
	return pt_machine_data_pages(mm->m, lo, n, order) == n;
}

static void __contpte_try_fold(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			       uint64_t ptep, uint64_t pte)
{
	if (!mm_is_user(s) || mm_variant(mm, MMV_USER_PRE_CONTPTE))
		return;
	/* the block must be covered by one folio: CONT promises one translation for 64K */
	uint64_t pa0 = ALIGN_DOWN(desc_pa(pte), CONT_PTE_SIZE);
	if (!folio_covers(mm, desc_pa(pte), pa0, pa0 + CONT_PTE_SIZE))
		return;
	/* all 16 valid, consecutive, same attributes; young/dirty do not matter (ORed on fold) */
	uint64_t expected = (pte_mkold(pte_mkclean(pte)) & ~PT_DESC_OA_MASK) | pa0;
	uint64_t p = contpte_align_down(ptep);
	for (unsigned i = 0; i < CONT_PTES; i++, p += 8) {
		uint64_t sub = pte_mkold(pte_mkclean(__ptep_get(mm, t, p)));
		if (sub != expected)
			return;
		expected = pte_advance_pa(expected, 1);
	}
	contpte_convert(mm, t, s, addr, ptep, pte_mkcont(pte));
}

void contpte_try_fold(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr, uint64_t ptep,
		      uint64_t pte)
{
	/* only at the last entry of a group (core code fills low to high), VA and PA aligned alike,
	 * never a special mapping (no folio behind it) */
	const uint64_t contmask = CONT_PTES - 1;
	if (((addr >> PAGE_SHIFT) & contmask) != contmask)
		return;
	if (((desc_pa(pte) >> PAGE_SHIFT) & contmask) != contmask)
		return;
	if (!pte_valid(pte) || pte_cont(pte) || (pte & PT_DESC_SPECIAL))
		return;
	__contpte_try_fold(mm, t, s, addr, ptep, pte);
}

/*
 * contpte_set_ptes()'s loop below as one run of stores: the entries each __set_ptes() of a
 * 64K chunk stores, after a step per chunk, where no chunk's __set_pte_complete() emits
 * barriers between them.  False (nothing done) where it cannot go as one run.
 */
static bool contpte_set_ptes_run(struct mm_model *mm, struct mm_thread *t, uint64_t addr, uint64_t ptep,
				 uint64_t pte, unsigned nr)
{
	if (nr < 2 || nr > PTRS_PER_PTE)
		return false;
	uint64_t run[PTRS_PER_PTE], end = addr + ((uint64_t)nr << PAGE_SHIFT);
	uint64_t pa = desc_pa(pte), prot = pte & ~PT_DESC_OA_MASK;
	unsigned k = 0, chunks = 0;
	do {
		uint64_t next = pt_next_addr(addr, end, CONT_PTE_SIZE);
		unsigned n = (unsigned)((next - addr) >> PAGE_SHIFT);
		uint64_t e = pa | prot;
		e = ((addr | next | pa) & ~CONT_PTE_MASK) == 0 ? pte_mkcont(e) : pte_mknoncont(e);
		for (unsigned i = 0; i < n; i++) {
			run[k++] = e;
			if (e)
				e = pte_advance_pa(e, 1);
		}
		if (pte_valid_not_user(e))
			return false;	/* __set_pte_complete() of the chunk would queue barriers */
		chunks++;
		addr = next;
		pa += (uint64_t)n << PAGE_SHIFT;
	} while (addr != end);
	return mm_write_run(mm, t, ptep, run, nr, /* steps= */chunks + nr, /* reads= */0);
}

void contpte_set_ptes(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr, uint64_t ptep,
		      uint64_t pte, unsigned nr)
{
	/* set_ptes() with nr > 1 starts from none entries: nothing to unfold first */
	if (!mm_is_user(s) || mm_variant(mm, MMV_USER_PRE_CONTPTE)) {
		__set_ptes(mm, t, ptep, pte, nr);
		return;
	}
	if (contpte_set_ptes_run(mm, t, addr, ptep, pte, nr))
		return;
	uint64_t end = addr + ((uint64_t)nr << PAGE_SHIFT);
	uint64_t pa = desc_pa(pte);
	uint64_t prot = pte & ~PT_DESC_OA_MASK;
	do {
		if (!mm_step(mm, t))
			break;
		uint64_t next = pt_next_addr(addr, end, CONT_PTE_SIZE);
		unsigned n = (unsigned)((next - addr) >> PAGE_SHIFT);
		uint64_t e = pa | prot;
		if (((addr | next | pa) & ~CONT_PTE_MASK) == 0)
			e = pte_mkcont(e);
		else
			e = pte_mknoncont(e);
		__set_ptes(mm, t, ptep, e, n);
		addr = next;
		ptep += 8ull * n;
		pa += (uint64_t)n << PAGE_SHIFT;
	} while (addr != end);
}

uint64_t contpte_ptep_get(struct mm_model *mm, struct mm_thread *t, uint64_t ptep, uint64_t orig_pte)
{
	/* the PTL is held: the block cannot change under us */
	uint64_t p = contpte_align_down(ptep);
	for (unsigned i = 0; i < CONT_PTES; i++, p += 8) {
		uint64_t pte = __ptep_get(mm, t, p);
		orig_pte = pte_gather_ad(orig_pte, pte);
	}
	return orig_pte;
}

uint64_t contpte_get_and_clear_full_ptes(struct mm_model *mm, struct mm_thread *t, struct mm_space *s,
					 uint64_t addr, uint64_t ptep, unsigned nr)
{
	contpte_try_unfold_partial(mm, t, s, addr, ptep, nr);
	return __get_and_clear_full_ptes(mm, t, ptep, nr);
}

/* ---- the public PTE API ---- */

uint64_t ptep_get(struct mm_model *mm, struct mm_thread *t, uint64_t ptep)
{
	uint64_t pte = __ptep_get(mm, t, ptep);
	if (!pte_valid_cont(pte))
		return pte;
	return contpte_ptep_get(mm, t, ptep, pte);
}

void set_ptes(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr, uint64_t ptep,
	      uint64_t pte, unsigned nr)
{
	pte = pte_mknoncont(pte);
	if (nr == 1) {
		contpte_try_unfold(mm, t, s, addr, ptep, __ptep_get(mm, t, ptep));
		__set_ptes(mm, t, ptep, pte, 1);
		contpte_try_fold(mm, t, s, addr, ptep, pte);
	} else {
		contpte_set_ptes(mm, t, s, addr, ptep, pte, nr);
	}
}

uint64_t ptep_get_and_clear(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			    uint64_t ptep)
{
	contpte_try_unfold(mm, t, s, addr, ptep, __ptep_get(mm, t, ptep));
	return __ptep_get_and_clear(mm, t, ptep);
}

uint64_t get_and_clear_full_ptes(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
				 uint64_t ptep, unsigned nr)
{
	if (nr == 1)
		return ptep_get_and_clear(mm, t, s, addr, ptep);
	return contpte_get_and_clear_full_ptes(mm, t, s, addr, ptep, nr);
}

void pte_clear(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr, uint64_t ptep)
{
	contpte_try_unfold(mm, t, s, addr, ptep, __ptep_get(mm, t, ptep));
	mm_write(mm, t, ptep, 0);
}

uint64_t ptep_clear_flush(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			  uint64_t ptep)
{
	/* mm/pgtable-generic.c: only an entry the walker could have cached needs the flush.
	 * arm64 pte_accessible(): pte_valid(), or pte_present() while an mmu_gather of the mm
	 * has not flushed yet (mm_tlb_flush_pending()): a PROT_NONE entry a racing NUMA scan
	 * just wrote may still be cached in its old, valid form */
	uint64_t pte = ptep_get_and_clear(mm, t, s, addr, ptep);
	if (pte_valid(pte) || (s->tlb_flush_pending && pte_present(pte)))
		flush_tlb_page(mm, t, s, addr);
	return pte;
}

uint64_t modify_prot_start_ptes(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
				uint64_t ptep, unsigned nr)
{
	return get_and_clear_full_ptes(mm, t, s, addr, ptep, nr);
}

void modify_prot_commit_ptes(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			     uint64_t ptep, uint64_t old_pte, uint64_t pte, unsigned nr)
{
	(void)old_pte;
	set_ptes(mm, t, s, addr, ptep, pte, nr);
}
