/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rmap.c - reclaim of an anonymous folio through the reverse map: the
 * pageout side of seed 004's race (mm/vmscan.c shrink_folio_list ->
 * mm/rmap.c try_to_unmap -> rmap_walk_anon -> try_to_unmap_one, with
 * mm/page_vma_mapped.c page_vma_mapped_walk), and MADV_PAGEOUT
 * (mm/madvise.c madvise_pageout -> reclaim_pages).
 *
 * Seed 004, as merged after Hugh Dickins' and Linus' review: pageout does
 * NOT take the PMD (or PUD) lock around the PTE it unmaps (the v7 patches
 * that made page_vma_mapped_walk() do so were dropped); instead mremap's
 * MOVE_PMD/MOVE_PUD always take the rmap locks (take_rmap_locks()), and
 * rmap_walk_anon() holds the anon_vma lock for read across
 * try_to_unmap_one().  So a page-table move cannot happen between the PTE
 * lookup here and its ptep_clear_flush(): otherwise the flush would name the
 * old address while CPU 3 caches the page at the new one, and the page
 * would be freed under that stale entry (the CPU 1 / CPU 2 / CPU 3 diagram).
 *
 * The model has no swap: an unmapped anonymous page simply goes (freed
 * after its flush), the reference becomes not-present, and a later touch
 * faults in a new page.  Simplifications:
 *  - the folio is the one mapped at the given address, found by a lockless
 *    walk (the kernel finds it on an LRU list); its rmap is the VMAs of the
 *    same anon_vma, and the folio is looked for at the same offset (the
 *    model's VMAs carry no vm_pgoff, so a folio moved by a concurrent
 *    mremap is missed rather than found at its new address — a lost
 *    reclaim, never a wrong one);
 *  - ptep_clear_flush() per PTE, i.e. without TTU_BATCH_FLUSH (arm64's
 *    batched unmap flush defers the DSB to arch_tlbbatch_flush() before
 *    the folios are freed, with the same ordering against the free);
 *  - a PMD-mapped THP is split first (TTU_SPLIT_HUGE_PMD, as the kernel
 *    does for a swap-backed THP), then its PTEs are unmapped one by one; a
 *    contpte block is unfolded by the first ptep_clear_flush() of its PTEs
 *    (ptep_get_and_clear() -> contpte_try_unfold()), then cleared entry by
 *    entry like any PTE.
 */
#include <stdlib.h>

#include "contpte.h"

/* the folio being reclaimed, and where it sits in this address space */
struct folio_ref {
	uint64_t pa;		/* first page */
	unsigned order;
	uint64_t va;		/* where page 0 maps (folio VA base in its VMA) */
};

struct page_vma_mapped_walk {
	struct mm_model *mm;
	struct mm_thread *t;
	struct mm_space *s;
	const struct folio_ref *folio;
	uint64_t address;	/* current address; [lo, hi) is the VMA part walked */
	uint64_t hi;
	uint64_t pmdp, ptep;	/* ptep 0 with pmdp set: a PMD-mapped THP (pmd lock held) */
	uint64_t pmd_ptl, pte_ptl;	/* held lock keys, 0 if none */
};

static void pvmw_unlock(struct page_vma_mapped_walk *w)
{
	if (w->pte_ptl)
		mm_unlock(w->mm, w->t, PT_LOCK_PTL, w->pte_ptl);
	if (w->pmd_ptl)
		mm_unlock(w->mm, w->t, PT_LOCK_PMD, w->pmd_ptl);
	w->pte_ptl = w->pmd_ptl = 0;
}

static void page_vma_mapped_walk_done(struct page_vma_mapped_walk *w)
{
	pvmw_unlock(w);
	w->pmdp = w->ptep = 0;
}

/* page_vma_mapped_walk_restart(): drop the locks, walk again from the PMD (after a split) */
static void page_vma_mapped_walk_restart(struct page_vma_mapped_walk *w)
{
	page_vma_mapped_walk_done(w);
}

/* check_pte(): does the PTE map this folio's page for the address? */
static bool check_pte(struct page_vma_mapped_walk *w)
{
	uint64_t pte = mm_read(w->mm, w->t, w->ptep);
	if (!pte_present(pte))
		return false;
	return desc_pa(pte) == w->folio->pa + (w->address - w->folio->va);
}

static bool not_found(struct page_vma_mapped_walk *w)
{
	page_vma_mapped_walk_done(w);
	return false;
}

/*
 * page_vma_mapped_walk(): the next PTE (or the PMD) mapping a page of the folio in
 * [address, hi), returned with its lock held — the PTE table lock for a PTE, pmd_lock
 * for a THP.  Following the merged seed 004 fix, a PTE is looked at under its PTE
 * lock only; the rmap lock held by the caller is what keeps mremap from moving the
 * table underneath.
 */
static bool page_vma_mapped_walk(struct page_vma_mapped_walk *w)
{
	struct mm_model *mm = w->mm;
	struct mm_thread *t = w->t;
	if (w->ptep)
		goto next_pte;
restart:
	if (w->address >= w->hi)
		return not_found(w);
	w->pmdp = mm_walk_entry(mm, t, w->s, w->address, 2);
	if (!w->pmdp)
		return not_found(w);
	uint64_t pmde = mm_read(mm, t, w->pmdp);
	if (pmd_trans_huge(pmde)) {
		w->pmd_ptl = w->pmdp & PAGE_MASK;
		mm_lock(mm, t, PT_LOCK_PMD, w->pmd_ptl, true);
		pmde = mm_read(mm, t, w->pmdp);
		if (pmd_trans_huge(pmde)) {
			if (ALIGN_DOWN(desc_pa(pmde), PMD_SIZE) == ALIGN_DOWN(w->folio->pa, PMD_SIZE))
				return true;
			return not_found(w);
		}
		/* split under us: handle it at the PTE level */
		mm_unlock(mm, t, PT_LOCK_PMD, w->pmd_ptl);
		w->pmd_ptl = 0;
	}
	if (!pte_valid(pmde) || !pmd_table(pmde))
		return not_found(w);
	/* map_pte(): lock the table, then make sure the PMD still points at it */
	w->ptep = pt_entry_pa(desc_pa(pmde), 3, w->address);
	w->pte_ptl = desc_pa(pmde);
	mm_lock(mm, t, PT_LOCK_PTL, w->pte_ptl, true);
	if (mm_read(mm, t, w->pmdp) != pmde) {
		pvmw_unlock(w);
		w->ptep = 0;
		goto restart;
	}
	for (;;) {
		if (check_pte(w))
			return true;
next_pte:
		do {
			if (!mm_step(mm, t))
				return not_found(w);
			w->address += PAGE_SIZE;
			if (w->address >= w->hi)
				return not_found(w);
			/* did we cross a page-table boundary? */
			if (IS_ALIGNED(w->address, PMD_SIZE)) {
				pvmw_unlock(w);
				w->ptep = 0;
				goto restart;
			}
			w->ptep += 8;
		} while (pte_none(mm_read(mm, t, w->ptep)));
	}
}

struct unmapped {
	uint64_t *va;		/* addresses whose page this call unmapped */
	uint32_t n, cap;
};

static void unmapped_push(struct unmapped *u, uint64_t va)
{
	if (u->n == u->cap) {
		u->cap = u->cap ? 2 * u->cap : 16;
		u->va = realloc(u->va, u->cap * sizeof(*u->va));
		if (!u->va)
			abort();
	}
	u->va[u->n++] = va;
}

/*
 * try_to_unmap_one(): unmap the folio's pages mapped in [lo, hi) of one VMA.  Each
 * PTE is cleared and flushed (ptep_clear_flush(): flush_tlb_page()) under its PTE
 * lock, before the page can be freed.
 */
static void try_to_unmap_one(struct mm_model *mm, struct mm_thread *t, struct mm_space *s,
			     const struct folio_ref *folio, uint64_t lo, uint64_t hi, struct unmapped *u)
{
	const char *prev = mm_site(mm, t, "try_to_unmap_one");
	struct page_vma_mapped_walk w = { .mm = mm, .t = t, .s = s, .folio = folio, .address = lo, .hi = hi };
	bool split = true;	/* TTU_SPLIT_HUGE_PMD */
	while (page_vma_mapped_walk(&w)) {
		if (!w.ptep) {
			if (!split) {
				page_vma_mapped_walk_done(&w);
				break;
			}
			split_huge_pmd_locked(mm, t, s, w.address, w.pmdp);
			split = false;
			page_vma_mapped_walk_restart(&w);
			continue;
		}
		uint64_t pteval = ptep_clear_flush(mm, t, s, w.address, w.ptep);
		if (pte_present(pteval)) {
			unmapped_push(u, w.address);
			/* the reference changes with the PTE, under its PTL: a concurrent operation
			 * checking the range sees both agree */
			ref_clear_range(s, w.address, w.address + PAGE_SIZE);
		}
	}
	mm_site(mm, t, prev);
}

/* folio_lookup(): the folio mapped at va (a lockless walk), false if none */
static bool folio_lookup(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t va,
			 struct folio_ref *f)
{
	uint64_t pmdp = mm_walk_entry(mm, t, s, va, 2);
	if (!pmdp)
		return false;
	uint64_t pmd = mm_read(mm, t, pmdp);
	uint64_t pa;
	if (pmd_trans_huge(pmd)) {
		pa = desc_pa(pmd) + (va & (PMD_SIZE - 1) & PAGE_MASK);
	} else {
		if (!pte_valid(pmd) || !pmd_table(pmd))
			return false;
		uint64_t pte = mm_read(mm, t, pt_entry_pa(desc_pa(pmd), 3, va));
		if (!pte_present(pte))
			return false;
		pa = desc_pa(pte);
	}
	f->order = folio_order(mm, pa);
	f->pa = ALIGN_DOWN(pa, PAGE_SIZE << f->order);
	f->va = (va & PAGE_MASK) - (pa - f->pa);
	return true;
}

/*
 * shrink_folio_list() for one folio, restricted to [lo, hi) (madvise_pageout()
 * reclaims only the range asked; a large folio partly outside it is reclaimed
 * page by page, as the kernel does after splitting it):
 * try_to_unmap() -> rmap_walk_anon(): anon_vma lock for read, each VMA of the
 * anon_vma, try_to_unmap_one(); then the unmapped pages are freed.
 */
static uint64_t reclaim_folio(struct mm_model *mm, struct mm_thread *t, struct mm_space *s,
			      const struct folio_ref *f, uint64_t anon_id, uint64_t lo, uint64_t hi)
{
	uint64_t fva_end = f->va + (PAGE_SIZE << f->order);
	if (lo < f->va)
		lo = f->va;
	if (hi > fva_end)
		hi = fva_end;
	struct unmapped u = { 0 };
	mm_lock(mm, t, PT_LOCK_RMAP, anon_id, false);	/* anon_vma_lock_read() */
	/* the VMAs of the anon_vma over the folio: copied, other threads may change s->vma */
	struct vma_part { uint64_t lo, hi; } part[8];
	unsigned np = 0;
	for (uint32_t i = 0; i < s->nvma && np < 8; i++) {
		const struct mm_vma *v = &s->vma[i];
		if (v->anon_id != anon_id || v->end <= lo || v->start >= hi)
			continue;
		part[np].lo = v->start > lo ? v->start : lo;
		part[np].hi = v->end < hi ? v->end : hi;
		np++;
	}
	for (unsigned i = 0; i < np; i++)
		try_to_unmap_one(mm, t, s, f, part[i].lo, part[i].hi, &u);
	mm_unlock(mm, t, PT_LOCK_RMAP, anon_id);

	/* no swap: the unmapped pages go (the folio whole if all of it was unmapped here) */
	uint64_t nr = 1ull << f->order;
	if (f->order && u.n == nr) {
		mm_free_pages(mm, t, f->pa, f->order);
	} else {
		for (uint32_t i = 0; i < u.n; i++)
			mm_free_pages(mm, t, f->pa + (u.va[i] - f->va), 0);
	}
	free(u.va);
	return u.n;
}

/*
 * walk_page_range() skips what has no page table: from addr (where no folio is mapped), the
 * end of the empty PGD, PUD or PMD entry over it (pgd_none_or_clear_bad() and the like in
 * walk_pgd_range() ... walk_pmd_range()), or the next page inside a PTE table or under a
 * PMD that is neither none nor a table (a THP being split).  The walk costs what is
 * mapped, not the length of the range.
 */
static uint64_t walk_skip(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr, uint64_t end)
{
	uint64_t table = s->pgd;
	for (unsigned l = 0; l < 3; l++) {
		uint64_t e = mm_read(mm, t, pt_entry_pa(table, l, addr));
		if (pte_none(e) || (l < 2 && (!pte_valid(e) || !pmd_table(e))))
			return pt_next_addr(addr, end, pt_level_size(l));
		if (!pte_valid(e) || !pmd_table(e))
			break;
		table = desc_pa(e);
	}
	return addr + PAGE_SIZE;
}

int madvise_pageout(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start, uint64_t end)
{
	/* madvise_cold_or_pageout_pte_range() collects the folios, reclaim_pages() reclaims them */
	const char *prev = mm_site(mm, t, "madvise_pageout");
	struct mm_vma *v = find_vma(s, start);
	uint64_t anon_id = v ? v->anon_id : 0;
	for (uint64_t addr = start; addr < end;) {
		if (!mm_step(mm, t))
			break;
		struct folio_ref f;
		if (!folio_lookup(mm, t, s, addr, &f)) {
			addr = walk_skip(mm, t, s, addr, end);
			continue;
		}
		reclaim_folio(mm, t, s, &f, anon_id, addr, end);
		uint64_t fend = f.va + (PAGE_SIZE << f.order);
		addr = fend < end ? fend : end;
	}
	mm_site(mm, t, prev);
	return 0;
}

/*
 * The pageout op: reclaim (kswapd / the shrinker) takes the folio mapped at va.  It
 * holds no mmap_lock: only the rmap lock and the page-table locks order it against
 * munmap, mremap and faults.
 */
int mm_do_pageout(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	struct mm_space *s = t->op_space;	/* run_desc()'s mm_space_get(mm, t, ev->asid) */
	uint64_t va = ALIGN_DOWN(ev->va, PAGE_SIZE);
	if (va >= TASK_SIZE)
		return EINVAL;
	const char *prev = mm_site(mm, t, "shrink_folio_list");
	struct folio_ref f;
	struct mm_vma *v = find_vma(s, va);
	/* copy what is needed now: the walk below yields, other threads may move s->vma */
	uint64_t anon_id = v ? v->anon_id : 0;
	/* hugetlb folios are not on the LRU: reclaim never meets them (they are freed by unmap
	 * or truncation only) */
	if (v && (v->flags & MM_VMA_HUGETLB))
		v = NULL;
	if (v && folio_lookup(mm, t, s, va, &f)) {
		reclaim_folio(mm, t, s, &f, anon_id, f.va, f.va + (PAGE_SIZE << f.order));
		ref_check(mm, t, s, f.va, f.va + (PAGE_SIZE << f.order), "pageout");
	}
	mm_site(mm, t, prev);
	return 0;
}
