/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * memory.c - mm/memory.c: the anonymous page faults a touch takes
 * (handle_mm_fault -> do_anonymous_page, mTHP folios mapped with arm64 contpte
 * through set_ptes(); the THP fault is huge_memory.c's), and the zap of user
 * mappings: unmap_page_range() and
 * its levels, for munmap (vma.c) and MADV_DONTNEED (zap_page_range_single(),
 * for madvise.c), with the teardown of hugetlb VMAs met on the way (mm/hugetlb.c
 * __unmap_hugepage_range, with the helpers of hugetlb.c); and free_pgtables().
 * Entries go into the mmu_gather (tlb.h, mmu_gather.c); a THP into zap_huge_pmd()
 * (huge_memory.c).
 *
 * Simplification: a folio has no refcount: each data page is mapped at most once
 * (no fork, no shared zero page), so the pages a zap clears are freed at once (a
 * whole folio as one free, a part of one page by page) — the kernel would keep a
 * partly unmapped large folio until its deferred split.
 */
#include <stdlib.h>

#include "hugetlb.h"
#include "tlb.h"

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
	if (max_nr > 1) {
		/* the loop below with its reads made first and their scheduling points taken after,
		 * at once, where no other thread can run at any of them: then no entry and no folio
		 * changes in between, and pa's folio (of order > 0 here) is found once.  A PTE that
		 * passes the first test maps page pa + nr * PAGE_SIZE, inside the folio (nr < max_nr
		 * <= in_folio): folio_covers() of it asks only whether that page is still the
		 * folio's (pt_machine_data_pages() of it).  The entries are read first, to the first that fails
		 * its test, and the pages they map asked after, at once: the loop stops at the first
		 * entry that fails either, having read it (reads), or at max_nr.  The entries read are
		 * all in ptep's table (max_nr, bounded by zap_pte_range()'s end, does not pass the
		 * PMD): what mm_entry_at() gives of each is its latest value there, looked up once
		 * (none: 0 for each, which fails the test, expected being present) */
		const uint64_t *latest = NULL;
		mm_entry_at(mm, ptep, 0, &latest);
		const uint64_t *p = latest ? latest + ((ptep >> 3) & (PTRS_PER_PTE - 1)) : NULL;
		unsigned same = 1;	/* entries that pass the first test, with the first */
		while (p && same < max_nr && (p[same] & ~ignore) == expected + (uint64_t)same * PAGE_SIZE)
			same++;
		/* those entries map pa + PAGE_SIZE on, in order (the test holds their address) */
		nr = 1 + pt_machine_data_pages(mm->m, pa + PAGE_SIZE, same - 1, order);
		unsigned reads = nr < max_nr ? nr : nr - 1;
		if (mm_sched_points(mm, t, PT_SCHED_READ, reads))
			return nr;
		nr = 1;
	}
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
void unmap_single_vma(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb, const struct vma_range *v)
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
/*
 * unlink_anon_vmas(): free_pgtables() hides a VMA from rmap before its tables go, under the
 * anon_vma lock for write.  So an rmap walk (reclaim's try_to_unmap(), anon_vma lock for read)
 * that found the VMA finishes before its page tables are freed: otherwise it would go on
 * through a freed table, whose page may already be another range's table, unmapping and
 * flushing at its old address.  The VMA is already out of the model's tree (a walk that
 * starts now does not meet it); the lock is the wait.
 */
static void unlink_anon_vmas(struct mm_model *mm, struct mm_thread *t, const struct vma_range *v)
{
	if (!v->anon_id)
		return;
	mm_lock(mm, t, PT_LOCK_RMAP, v->anon_id, true);
	mm_unlock(mm, t, PT_LOCK_RMAP, v->anon_id);
}

void free_pgtables(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb,
		   const struct vma_range *v, uint32_t n, uint64_t floor, uint64_t ceiling)
{
	const char *prev = mm_site(mm, t, "free_pgtables");
	for (uint32_t i = 0; i < n; i++) {
		uint64_t addr = v[i].start, end = v[i].end;
		unlink_anon_vmas(mm, t, &v[i]);
		while (i + 1 < n && v[i + 1].start <= end + PMD_SIZE) {
			end = v[++i].end;
			unlink_anon_vmas(mm, t, &v[i]);
		}
		free_pgd_range(mm, t, tlb, addr, end, floor, i + 1 < n ? v[i + 1].start : ceiling);
	}
	mm_site(mm, t, prev);
}

/*
 * zap_page_range_single() (madvise_dontneed_single_vma()): the pages go, the VMA
 * and the page tables stay; the next touch faults in a fresh page.
 */
void zap_page_range_single(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, const struct vma_range *v)
{
	/* the reference of the range as the zap starts, watched: each page's word goes as it is
	 * cleared, by this zap or any other op (another zap, a pageout).  A page a racing fault
	 * maps after that (both under mmap_lock for read) is the fault's, and stays, even with the
	 * very page freed; what is left unchanged at the end was missed, and goes (the page
	 * tables then show it) */
	struct ref_snapshot snap = { 0 };
	ref_for_each(s, v->start, v->end, ref_snapshot_add, &snap);
	ref_snapshot_sort(&snap);
	ref_watch(&s->ref, &snap);
	struct mmu_gather tlb;
	tlb_gather_mmu(&tlb, s);
	unmap_single_vma(mm, t, &tlb, v);
	tlb_finish_mmu(mm, t, &tlb);
	ref_unwatch(&s->ref, &snap);
	for (uint64_t i = 0; i < snap.n; i++) {
		uint64_t va = snap.w[2 * i], was = snap.w[2 * i + 1];
		if (was && ref_get(s, va) == was)
			ref_clear_range(s, va, va + PAGE_SIZE);
	}
	free(snap.w);
}

/* ---- faults ---- */

/*
 * Simplification: every anonymous fault maps a fresh page (no shared zero page),
 * writable and dirty if the VMA is writable; a fault fails with ENOMEM (VM_FAULT_OOM,
 * nothing mapped) only when its folio and tables would take the model past its
 * capacity (MM_CAPACITY), which ends a touch or a MAP_POPULATE there.
 */

/* Ensure the tables down to `level` exist for addr; returns the entry pa at that level. */
uint64_t walk_alloc(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr, unsigned level)
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
	if (mm_read_until_present(mm, t, ptep, (unsigned)nr) < nr) {
		/* raced (or partly populated): the whole folio backs off (alloc_anon_folio checks) */
		mm_unlock(mm, t, PT_LOCK_PTL, ptl);
		mm_free_pages(mm, t, page, order);
		return order ? fault_pte(mm, t, s, v, addr, 0) : 0;
	}
	/* set_ptes(): for a naturally aligned 64K folio, contpte_set_ptes() writes the CONT bit */
	uint64_t cont = order == 4 && !mm_variant(mm, MMV_USER_PRE_CONTPTE) ? PT_DESC_CONT : 0;
	uint64_t run[PTRS_PER_PTE];
	bool fits = nr <= PTRS_PER_PTE;
	/* mk_user_pte() of each page: the page's address is ORed into bits [47:12], where the
	 * value has nothing else, and the folio's pages stay below bit 48 (no carry reaches the
	 * flags above): a page further is a page added */
	const uint64_t pte0 = mk_user_pte(page, v->prot) | cont;
	for (uint64_t i = 0; fits && i < nr; i++)
		run[i] = pte0 + i * PAGE_SIZE;
	if (fits && mm_write_run(mm, t, ptep, run, (unsigned)nr, /* steps= */0, /* reads= */0)) {
		/* the loop below as one run of stores: no other thread runs in between to see the
		 * reference before the stores are all made */
		ref_set_run(s, base, nr, page, ref_prot(v->prot));
	} else {
		for (uint64_t i = 0; i < nr; i++) {
			mm_write(mm, t, ptep + 8 * i, mk_user_pte(page + i * PAGE_SIZE, v->prot) | cont);
			ref_set(s, base + i * PAGE_SIZE, page + i * PAGE_SIZE, ref_prot(v->prot));
		}
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
 * mapped by a leaf (and the valid PTEs after it in its table) covering [lo, hi), and while no
 * event changed a table since (gen, the machine's pt_machine_table_gen()) its walk of any page
 * there finds a leaf again.
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
	if (ref_walk(mm, s, addr, &r)) {
		if (fm) {
			uint64_t size = pt_level_size((int)r.level);
			fm->lo = ALIGN_DOWN(addr, size);
			fm->hi = fm->lo + size;
			fm->gen = pt_machine_table_gen(mm->m);
			/* the walk of the pages after it ends in the same PTE table: while its next
			 * entries are valid leaves, each of them is found mapped too (a folio) */
			const uint64_t *e = r.level == 3 ? pt_machine_table_latest(mm->m, r.frame) : NULL;
			for (unsigned i = r.idx + 1; e && i < PTRS_PER_PTE && pt_desc_is_leaf(e[i], 3); i++)
				fm->hi += PAGE_SIZE;
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
	struct mm_space *s = t->op_space;	/* run_desc()'s mm_space_get(mm, t, ev->asid) */
	uint64_t start = ALIGN_DOWN(ev->va, PAGE_SIZE), len = ev->len ? ev->len : PAGE_SIZE;
	uint64_t end = ALIGN_UP(ev->va + len, PAGE_SIZE);
	int rc = 0;
	if (end < start || end > TASK_SIZE)
		return EINVAL;
	mm_lock(mm, t, PT_LOCK_MMAP, s->asid, false);	/* faults run under mmap_lock for read */
	struct fault_memo fm = { 0 };
	for (uint64_t a = start; a < end; a += PAGE_SIZE) {
		bool write = ev->flags & PT_ACC_WRITE;
		if (a >= fm.lo && a < fm.hi && pt_machine_table_gen(mm->m) == fm.gen) {
			/* pages the memo finds mapped, in one VMA: fault_mapped() holds for each (an
			 * access changes no table), so the (step, access) pairs can go as one run */
			const struct mm_vma *v = find_vma(s, a);
			uint64_t hi = fm.hi < end ? fm.hi : end;
			if (v && fault_vma_ok(v, write)) {
				if (v->end < hi)
					hi = v->end;
				if (mm_step_access_run(mm, t, a, s->asid, (uint8_t)(ev->flags & 3),
						       (unsigned)((hi - a) >> PAGE_SHIFT))) {
					a = hi - PAGE_SIZE;
					continue;
				}
			}
		}
		if (!mm_step(mm, t))
			break;
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
