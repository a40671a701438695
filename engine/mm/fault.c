/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fault.c - mmap() and the anonymous page-fault paths a touch takes
 * (mm/memory.c do_anonymous_page, mm/huge_memory.c do_huge_pmd_anonymous_page,
 * mTHP folios mapped with arm64 contpte: arch/arm64/mm/contpte.c via set_ptes()).
 *
 * Simplification: every anonymous fault maps a fresh page (no shared zero page),
 * writable and dirty if the VMA is writable; a fault fails with ENOMEM (VM_FAULT_OOM,
 * nothing mapped) only when its folio and tables would take the model past its
 * capacity (MM_CAPACITY), which ends a touch or a MAP_POPULATE there.
 */
#include "mm_internal.h"

int mm_do_mmap(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	struct mm_space *s = mm_space_get(mm, t, ev->asid);
	uint64_t start = ev->va, len = ALIGN_UP(ev->len, PAGE_SIZE);
	mm_site(mm, t, "do_mmap");
	if (!len || !IS_ALIGNED(start, PAGE_SIZE) || start + len < start || start + len > (1ull << 48))
		return EINVAL;
	mm_lock(mm, t, PT_LOCK_MMAP, s->asid, true);
	if (!range_is_free(s, start, start + len)) {
		if (!(ev->flags & PT_MAP_FIXED)) {
			mm_unlock(mm, t, PT_LOCK_MMAP, s->asid);
			return ENOMEM;	/* the model does not pick another address */
		}
		/* MAP_FIXED replaces what was there, or fails as its unmap does (mmap_region():
		 * a hugetlb VMA splits only at its huge page size, hugetlb_vm_op_split()) */
		int rc = do_munmap(mm, t, s, start, len);
		if (rc) {
			mm_unlock(mm, t, PT_LOCK_MMAP, s->asid);
			return rc;
		}
	}
	unsigned order = ev->order;
	if (order != 0 && order != 4 && order != 9)
		order = 0;
	vma_insert(s, start, start + len, ev->prot, order, 0, mm->next_anon_id++);
	mm_unlock(mm, t, PT_LOCK_MMAP, s->asid);
	if (ev->flags & PT_MAP_POPULATE) {
		/* __mm_populate(): after do_mmap() dropped the lock for write, the faults run under
		 * mmap_lock for read, like any fault; a munmap or mremap in between waits for them,
		 * and a fault that finds the VMA gone stops (handle_mm_fault() fails) */
		mm_lock(mm, t, PT_LOCK_MMAP, s->asid, false);
		for (uint64_t a = start; a < start + len; a += PAGE_SIZE)
			if (handle_mm_fault(mm, t, s, a, ev->prot & PT_PROT_WRITE) || !mm_step(mm, t))
				break;
		mm_unlock(mm, t, PT_LOCK_MMAP, s->asid);
	}
	ref_check(mm, t, s, start, start + len, "mmap");
	if (ev == mm->res_ev)
		mm->res.addr = start;
	return 0;
}

/* Ensure the tables down to `level` exist for addr; returns the entry pa at that level. */
static uint64_t walk_alloc(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			   unsigned level)
{
	uint64_t table = s->pgd;
	for (unsigned l = 0; l < level; l++) {
		uint64_t ep = pt_entry_pa(table, l, addr);
		uint64_t e = mm_read(mm, t, ep);
		if (pte_none(e)) {
			table = mm_table_alloc_install(mm, t, s, ep, l + 1);
		} else if (pte_valid(e) && pmd_table(e)) {
			table = desc_pa(e);
		} else if (l == 2 && !pte_valid(e)) {
			/* a PMD invalidated by a THP split in progress (pmdp_invalidate): the fault waits
			 * for the splitter's pmd_lock and looks again; unchanged after that, it is a
			 * settled PROT_NONE / NUMA-hinted THP, a block in the way */
			uint64_t ptl = ep & PAGE_MASK;
			mm_lock(mm, t, PT_LOCK_PMD, ptl, true);
			bool same = mm_read(mm, t, ep) == e;
			mm_unlock(mm, t, PT_LOCK_PMD, ptl);
			if (!mm_step(mm, t) || same)
				return 0;
			l--;
		} else {
			return 0;	/* a block is in the way */
		}
	}
	return pt_entry_pa(table, level, addr);
}

/*
 * do_huge_pmd_numa_page() (mm/huge_memory.c): a fault on a THP the NUMA scan made
 * PROT_NONE (change_huge_pmd() with MM_CP_PROT_NUMA: the block invalid, its TLB entries
 * already flushed by pmdp_invalidate_ad()) restores the block with the VMA's protection,
 * under the PMD lock, if the entry is still the hinted block (a split may have replaced it).
 * Returns true if it did.
 */
static bool do_huge_pmd_numa_page(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, struct mm_vma *v,
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
		for (unsigned i = 0; i < 512; i++)
			ref_set(s, haddr + i * PAGE_SIZE, page + i * PAGE_SIZE, ref_prot(v->prot));
	return same;
}

/* do_huge_pmd_anonymous_page(): a 2M folio mapped by one PMD block; its PTE table is deposited. */
static int fault_thp(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, struct mm_vma *v, uint64_t haddr)
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
	for (unsigned i = 0; i < 512; i++)
		ref_set(s, haddr + i * PAGE_SIZE, page + i * PAGE_SIZE, ref_prot(v->prot));
	return 0;
}

/* do_anonymous_page() with a large folio of 2^order pages (order 4: one contpte block). */
static int fault_pte(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, struct mm_vma *v, uint64_t addr,
		     unsigned order)
{
	uint64_t nr = 1ull << order, base = ALIGN_DOWN(addr, PAGE_SIZE << order);
	uint64_t ptep = walk_alloc(mm, t, s, base, 3);
	if (!ptep)
		return -1;
	uint64_t ptl = ptep & PAGE_MASK;
	uint64_t page = mm_alloc_pages(mm, t, order, 0);
	mm_dmb(mm, t, PT_BAR_ISHST);
	mm_lock(mm, t, PT_LOCK_PTL, ptl, true);
	for (uint64_t i = 0; i < nr; i++) {
		if (!pte_none(mm_read(mm, t, ptep + 8 * i))) {
			/* raced (or partly populated): the whole folio backs off (alloc_anon_folio checks) */
			mm_unlock(mm, t, PT_LOCK_PTL, ptl);
			mm_free_pages(mm, t, page, order);
			return order ? fault_pte(mm, t, s, v, addr, 0) : 0;
		}
	}
	/* set_ptes(): for a naturally aligned 64K folio, contpte_set_ptes() writes the CONT bit */
	uint64_t cont = order == 4 && !mm_variant(mm, MMV_USER_PRE_CONTPTE) ? PT_DESC_CONT : 0;
	for (uint64_t i = 0; i < nr; i++) {
		mm_write(mm, t, ptep + 8 * i, mk_user_pte(page + i * PAGE_SIZE, v->prot) | cont);
		ref_set(s, base + i * PAGE_SIZE, page + i * PAGE_SIZE, ref_prot(v->prot));
	}
	mm_unlock(mm, t, PT_LOCK_PTL, ptl);
	return 0;
}

/* May a fault at an address of VMA v (NULL: none) proceed?  (Otherwise SIGSEGV.) */
static bool fault_vma_ok(const struct mm_vma *v, bool write)
{
	return v && !(write && !(v->prot & PT_PROT_WRITE)) && (v->prot & (PT_PROT_READ | PT_PROT_WRITE | PT_PROT_EXEC));
}

/*
 * What a touch knows of the pages after the one it faulted: handle_mm_fault() found the page
 * mapped by a leaf covering [lo, hi), and while no event changed a table since (gen, the
 * machine's pt_machine_table_gen()) its walk of any page there finds that leaf again.
 */
struct fault_memo {
	uint64_t lo, hi, gen;
};

static int __handle_mm_fault(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			     bool write, struct fault_memo *fm)
{
	const char *prev = mm_site(mm, t, "handle_mm_fault");
	struct mm_vma *v = find_vma(s, addr);
	int rc = 0;
	if (!fault_vma_ok(v, write)) {
		rc = EFAULT;	/* SIGSEGV: no page-table change */
		goto out;
	}
	struct pt_walk_result r;
	if (pt_walk(mm->m, false, s->asid, addr, false, &r)) {
		if (fm) {
			uint64_t size = pt_level_size((int)r.level);
			fm->lo = ALIGN_DOWN(addr, size);
			fm->hi = fm->lo + size;
			fm->gen = pt_machine_table_gen(mm->m);
		}
		goto out;	/* already mapped */
	}
	if (!(v->flags & MM_VMA_HUGETLB) && ALIGN_DOWN(addr, PMD_SIZE) >= v->start &&
	    do_huge_pmd_numa_page(mm, t, s, v, ALIGN_DOWN(addr, PMD_SIZE)))
		goto out;
	unsigned order = v->order;
	if ((v->flags & MM_VMA_HUGEPAGE) && !(v->flags & MM_VMA_NOHUGEPAGE))
		order = 9;
	if (v->flags & MM_VMA_NOHUGEPAGE && order == 9)
		order = 0;
	uint64_t size = PAGE_SIZE << order;
	uint64_t base = ALIGN_DOWN(addr, size);
	if (order && (base < v->start || base + size > v->end) && !mm_variant(mm, MMV_ANON_FOLIO_PAST_VMA))
		order = 0;	/* the folio must fit the VMA (thp_vma_suitable_order()) */
	if (!mm_capacity_ok(mm, mm_map_units(PAGE_SIZE << order, PMD_SIZE))) {
		rc = ENOMEM;	/* VM_FAULT_OOM: the model's memory is full (MM_CAPACITY) */
		goto out;
	}
	if (order == 9) {
		uint64_t pmdp = mm_walk_entry(mm, t, s, base, 2);
		if (!pmdp || pte_none(mm_read(mm, t, pmdp))) {
			if (!fault_thp(mm, t, s, v, base))
				goto out;
		}
		order = 0;	/* a PTE table is already there: fall back */
	}
	if (fault_pte(mm, t, s, v, addr, order) < 0)
		rc = EFAULT;
out:
	mm_site(mm, t, prev);
	return rc;
}

int handle_mm_fault(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr, bool write)
{
	return __handle_mm_fault(mm, t, s, addr, write, NULL);
}

/*
 * handle_mm_fault() of a page that fm says is mapped, without its walk: the VMA is looked up
 * and judged as there, the walk would find the page mapped, and what the call leaves behind is
 * its site restored.  Returns false where handle_mm_fault() must run.
 */
static bool fault_mapped(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr, bool write,
			 const struct fault_memo *fm)
{
	if (addr < fm->lo || addr >= fm->hi || pt_machine_table_gen(mm->m) != fm->gen ||
	    !fault_vma_ok(find_vma(s, addr), write))
		return false;
	mm_site(mm, t, t->site);
	return true;
}

int mm_do_touch(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	struct mm_space *s = mm_space_get(mm, t, ev->asid);
	uint64_t start = ALIGN_DOWN(ev->va, PAGE_SIZE), len = ev->len ? ev->len : PAGE_SIZE;
	uint64_t end = ALIGN_UP(ev->va + len, PAGE_SIZE);
	int rc = 0;
	if (end < start || end > (1ull << 48))
		return EINVAL;
	mm_lock(mm, t, PT_LOCK_MMAP, s->asid, false);	/* faults run under mmap_lock for read */
	struct fault_memo fm = { 0 };
	for (uint64_t a = start; a < end; a += PAGE_SIZE) {
		if (!mm_step(mm, t))
			break;
		bool write = ev->flags & PT_ACC_WRITE;
		if (!fault_mapped(mm, t, s, a, write, &fm))
			rc = __handle_mm_fault(mm, t, s, a, write, &fm);
		if (rc)
			break;
		struct pt_event acc = { .kind = PT_EV_ACCESS, .va = a, .asid = s->asid, .flags = ev->flags & 3 };
		mm_emit(mm, t, &acc);
	}
	mm_unlock(mm, t, PT_LOCK_MMAP, s->asid);
	/* the faults map whole folios (up to a PMD) around the pages touched: check out to the
	 * PMDs around the range, where a folio that overran its VMA would be */
	ref_check(mm, t, s, ALIGN_DOWN(start, PMD_SIZE), ALIGN_UP(end, PMD_SIZE), "touch");
	return rc;
}
