/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mremap.c - mremap(2): mm/mremap.c (do_mremap, mremap_to, expand_vma,
 * move_vma, move_page_tables, move_ptes, move_normal_pmd, move_normal_pud,
 * try_realign_addr) and move_huge_pmd() from mm/huge_memory.c (its
 * split_huge_pmd() is shared, in memory.c), as patched by seed 004
 * ("Speedup mremap on ppc64", v7) and the later fixes:
 *
 *  - #01/#02 and Hugh Dickins' answer: a MOVE_PMD / MOVE_PUD takes the rmap
 *    locks unconditionally (should_take_rmap_locks()), so that pageout's rmap
 *    walk cannot see the old pte, lose the table under it to the move, and
 *    free the page while CPU 3 caches the new translation;
 *  - #05 move_huge_pud() (see below: not built on arm64), #07 pmd_populate /
 *    pud_populate for the moved tables, #09 arch_supports_page_table_move();
 *  - the page-walk-cache concern of #10 is arm64's flush_tlb_range(), which
 *    is never last-level-only because tables may have moved (tlbflush.h);
 *  - CVE-2018-18281 (commit eb66ae030829): move_ptes() flushes the TLB for
 *    the old range *before* it drops the PTL;
 *  - move_normal_pmd() backs off if it races with a collapse (a leaf or a
 *    non-present pmd under the lock), and try_realign_addr() (Joel Fernandes,
 *    2023) moves mutually misaligned ranges by whole PMDs when nothing else is
 *    in the way.
 *
 * Simplifications (the model has anonymous private VMAs only): no
 * userfaultfd, KSM, mlock, accounting, soft-dirty or mseal; hugetlb VMAs
 * (move_hugetlb_page_tables) are not modelled (ENOSYS); copy_vma() never
 * merges, so need_rmap_locks is always false for move_ptes (the kernel's
 * value for a fresh VMA) and the rmap lock is taken only where the kernel
 * forces it; move_ptes() works per PTE (ptep_get_and_clear / set_pte_at,
 * the form before mremap_folio_pte_batch()), which on arm64 unfolds a
 * contpte block at the source first and may fold one at the destination.
 */
#include "contpte.h"
#include "mm_internal.h"

/* the top of the top-down mmap layout the model's get_unmapped_area() searches under */
#define MMAP_BASE	0x7f0000000000ull
#define MMAP_MIN_ADDR	0x10000ull

/* ---- move_page_tables() state: the kernel's struct pagetable_move_control ---- */

struct pagetable_move_control {
	struct mm_space *s;
	struct mm_vma old, new;		/* copies: the VMA array moves when a VMA is inserted */
	uint64_t old_addr, new_addr;	/* advance as the move proceeds (may be realigned down) */
	uint64_t old_end;
	uint64_t len_in;		/* the length asked for */
	bool need_rmap_locks;
};

enum pgt_entry { NORMAL_PMD, HPAGE_PMD, NORMAL_PUD };

static bool pmd_table_present(uint64_t pmd) { return pte_valid(pmd) && pmd_table(pmd); }
/* pmd_present(): valid, or a PROT_NONE / invalidated leaf the kernel still counts as mapped */
static bool pmd_present(uint64_t pmd) { return pte_valid(pmd) || (pmd & PT_DESC_PROTNONE); }

/* pmd_lock()/pmd_lockptr(): split PMD ptlocks, keyed by the PMD table */
static uint64_t pmd_lockptr(uint64_t pmdp) { return pmdp & PAGE_MASK; }

/*
 * The reference semantics follow each entry as it moves, under the lock that
 * moves it: a racing op (pageout) then sees the reference and the page
 * tables agree at every scheduling point it can observe.
 */
static void ref_move_page(struct mm_space *s, uint64_t old_addr, uint64_t new_addr)
{
	uint64_t w = ref_get(s, old_addr);
	ref_clear_range(s, old_addr, old_addr + PAGE_SIZE);
	if (w)
		ref_set(s, new_addr, w, w & ~PT_DESC_OA_MASK);
}

/* ---- the rmap locks ---- */

static void take_rmap_locks(struct mm_model *mm, struct mm_thread *t, const struct pagetable_move_control *pmc)
{
	/* anon_vma_lock_write(vma->anon_vma): rmap walkers (pageout) take it for read */
	mm_lock(mm, t, PT_LOCK_RMAP, pmc->old.anon_id, true);
}

static void drop_rmap_locks(struct mm_model *mm, struct mm_thread *t, const struct pagetable_move_control *pmc)
{
	mm_unlock(mm, t, PT_LOCK_RMAP, pmc->old.anon_id);
}

/* ---- finding and allocating the tables ---- */

/* get_old_pud(): the pud entry of addr, or 0 if there is no table below it */
static uint64_t get_old_pud(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr)
{
	uint64_t pgd = mm_read(mm, t, mm_pgd_entry(s, addr));
	if (!pmd_table_present(pgd))
		return 0;
	uint64_t pudp = pt_entry_pa(desc_pa(pgd), 1, addr);
	uint64_t pud = mm_read(mm, t, pudp);
	if (pte_none(pud))
		return 0;
	/*
	 * pud_none_or_clear_bad(): arm64 has no PUD-sized THP, so a PUD leaf here
	 * (outside hugetlb, which never comes this way) is pud_bad().
	 */
	if (MM_WARN_ON(mm, t, !pmd_table_present(pud), "mremap-bad-pud", addr,
		       "get_old_pud: pud 0x%llx for va 0x%llx is not a table", (unsigned long long)pud,
		       (unsigned long long)addr))
		return 0;
	return pudp;
}

/* get_old_pmd(): the pmd entry of addr, or 0 if it is none */
static uint64_t get_old_pmd(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr)
{
	uint64_t pudp = get_old_pud(mm, t, s, addr);
	if (!pudp)
		return 0;
	uint64_t pmdp = pt_entry_pa(desc_pa(mm_read(mm, t, pudp)), 2, addr);
	return pte_none(mm_read(mm, t, pmdp)) ? 0 : pmdp;
}

/* alloc_new_pud(): p4d is folded; pud_alloc() installs a PUD table under the pgd if needed */
static uint64_t alloc_new_pud(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr)
{
	uint64_t pgdp = mm_pgd_entry(s, addr);
	uint64_t pgd = mm_read(mm, t, pgdp);
	uint64_t table = pte_none(pgd) ? mm_table_alloc_install(mm, t, s, pgdp, 1) :
			 pmd_table_present(pgd) ? desc_pa(pgd) : 0;
	return table ? pt_entry_pa(table, 1, addr) : 0;
}

/* alloc_new_pmd(): pmd_alloc() installs a PMD table under the pud if needed */
static uint64_t alloc_new_pmd(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr)
{
	uint64_t pudp = alloc_new_pud(mm, t, s, addr);
	if (!pudp)
		return 0;
	uint64_t pud = mm_read(mm, t, pudp);
	uint64_t table = pte_none(pud) ? mm_table_alloc_install(mm, t, s, pudp, 2) :
			 pmd_table_present(pud) ? desc_pa(pud) : 0;
	if (!table)
		return 0;
	uint64_t pmdp = pt_entry_pa(table, 2, addr);
	/* VM_BUG_ON(pmd_trans_huge(*pmd)): the destination has no VMA, so no THP */
	if (MM_WARN_ON(mm, t, pmd_trans_huge(mm_read(mm, t, pmdp)), "mremap-dst-thp", addr,
		       "alloc_new_pmd: a THP at destination va 0x%llx", (unsigned long long)addr))
		return 0;
	return pmdp;
}

/* pte_alloc(): a PTE table under the new pmd if it is none; false if it could not be had */
static bool pte_alloc(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t pmdp)
{
	uint64_t pmd = mm_read(mm, t, pmdp);
	if (pte_none(pmd))
		mm_table_alloc_install(mm, t, s, pmdp, 3);
	return pmd_table_present(mm_read(mm, t, pmdp));
}

/* ---- the PTE level ---- */

/*
 * move_ptes() (mm/mremap.c): move the PTEs of [old_addr, old_addr + extent),
 * which lies in one PTE table at each end, one by one.
 */
static int move_ptes(struct mm_model *mm, struct mm_thread *t, struct pagetable_move_control *pmc, uint64_t extent,
		     uint64_t old_pmdp, uint64_t new_pmdp)
{
	const char *prev = mm_site(mm, t, "move_ptes");
	struct mm_space *s = pmc->s;
	uint64_t old_addr = pmc->old_addr, new_addr = pmc->new_addr;
	uint64_t old_end = old_addr + extent, len = extent;
	bool force_flush = false, warned = false;
	int err = 0;

	/*
	 * need_rmap_locks: so that an rmap walk sees the old or the new pte.  When
	 * false, the new VMA comes after the old one in the anon_vma's rmap order:
	 * a walk that misses the old pte finds the new one later.
	 */
	if (pmc->need_rmap_locks)
		take_rmap_locks(mm, t, pmc);

	/* pte_offset_map_lock() fails if the pmd is no longer a table (a racing collapse): EAGAIN
	 * (positive, as every errno of the model, mm.h; the kernel's -EAGAIN) */
	uint64_t old_pmd = mm_read(mm, t, old_pmdp);
	uint64_t new_pmd = mm_read(mm, t, new_pmdp);
	if (!pmd_table_present(old_pmd) || !pmd_table_present(new_pmd)) {
		err = EAGAIN;
		goto out;
	}
	/* no ordering between the two PTLs: the exclusive mmap_lock prevents a deadlock */
	uint64_t old_ptl = desc_pa(old_pmd), new_ptl = desc_pa(new_pmd);
	mm_lock(mm, t, PT_LOCK_PTL, old_ptl, true);
	if (new_ptl != old_ptl)
		mm_lock(mm, t, PT_LOCK_PTL, new_ptl, true);
	arch_enter_lazy_mmu_mode(mm, t);

	uint64_t old_ptep = pt_entry_pa(old_ptl, 3, old_addr), new_ptep = pt_entry_pa(new_ptl, 3, new_addr);
	for (; old_addr < old_end; old_ptep += 8, old_addr += PAGE_SIZE, new_ptep += 8, new_addr += PAGE_SIZE) {
		if (!mm_step(mm, t))
			break;
		/* VM_WARN_ON_ONCE(!pte_none(*new_pte)) */
		if (!warned && !pte_none(mm_read(mm, t, new_ptep))) {
			warned = true;
			mm_warn(mm, t, "mremap-dst-pte-not-none", new_addr,
				"move_ptes: destination pte of va 0x%llx is not none", (unsigned long long)new_addr);
		}
		uint64_t old_pte = ptep_get(mm, t, old_ptep);
		if (pte_none(old_pte))
			continue;
		/*
		 * A present pte must have its TLB flushed before the PTL is dropped:
		 * the old PTL for folio_mkclean(), the new one so that the page stays
		 * valid until the old translation is gone (CVE-2018-18281).
		 */
		if (pte_present(old_pte))
			force_flush = true;
		/* arm64: unfolds a contpte block first (the other 15 entries are rewritten non-CONT) */
		uint64_t pte = ptep_get_and_clear(mm, t, s, old_addr, old_ptep);
		/* may fold the destination block when its 16th entry lands */
		set_pte_at(mm, t, s, new_addr, new_ptep, pte);
		ref_move_page(s, old_addr, new_addr);
	}

	arch_leave_lazy_mmu_mode(mm, t);
	if (force_flush && !mm_variant(mm, MMV_MREMAP_FLUSH_AFTER_PTL_DROP))
		flush_tlb_range(mm, t, s, old_end - len, old_end);
	if (new_ptl != old_ptl)
		mm_unlock(mm, t, PT_LOCK_PTL, new_ptl);
	mm_unlock(mm, t, PT_LOCK_PTL, old_ptl);
	/* bug zoo: the pre-2018 order, the old translation survives the PTL */
	if (force_flush && mm_variant(mm, MMV_MREMAP_FLUSH_AFTER_PTL_DROP))
		flush_tlb_range(mm, t, s, old_end - len, old_end);
out:
	if (pmc->need_rmap_locks)
		drop_rmap_locks(mm, t, pmc);
	mm_site(mm, t, prev);
	return err;
}

/* ---- moving whole tables (seed 004) ---- */

/* arch_supports_page_table_move() (#09): arm64 selects HAVE_MOVE_PMD and HAVE_MOVE_PUD */
static bool arch_supports_page_table_move(struct mm_model *mm)
{
	/* baseline: the kernel before MOVE_PMD/MOVE_PUD moves PTE by PTE */
	return !mm_variant(mm, MMV_MREMAP_NO_MOVE_PMD);
}

/*
 * The flush after a table moved: the old VA's walk-cache entries point at a
 * table that now translates another range, so the invalidation must not be
 * last-level only (flush_tlb_range(), tlbflush.h: "we could be removing
 * tables"; ppc64's page-walk-cache flush of #10).
 */
static void flush_moved_table(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start,
			      uint64_t size)
{
	if (mm_variant(mm, MMV_MREMAP_LEAF_ONLY_FLUSH))
		__flush_tlb_range(mm, t, s, start, start + size, PAGE_SIZE, /*last_level=*/true, TLBI_TTL_UNKNOWN);
	else
		flush_tlb_range(mm, t, s, start, start + size);
}

/* move_normal_pmd() (mm/mremap.c, HAVE_MOVE_PMD): hook the whole PTE table at the new pmd */
static bool move_normal_pmd(struct mm_model *mm, struct mm_thread *t, struct pagetable_move_control *pmc,
			    uint64_t old_pmdp, uint64_t new_pmdp)
{
	struct mm_space *s = pmc->s;
	bool res = false;

	if (!arch_supports_page_table_move(mm))
		return false;
	mm_site_scoped(mm, t, "move_normal_pmd");
	/*
	 * The destination pmd should be none: free_pgtables() released it.  If not
	 * (exec's overlapping stack move, a table left behind), WARN and move the
	 * ptes one by one instead of overwriting a live table.
	 */
	if (MM_WARN_ON(mm, t, !mm_variant(mm, MMV_MREMAP_DST_NOT_NONE) && !pte_none(mm_read(mm, t, new_pmdp)),
		       "mremap-dst-pmd-not-none", pmc->new_addr,
		       "move_normal_pmd: WARN_ON_ONCE(!pmd_none(*new_pmd)) for va 0x%llx",
		       (unsigned long long)pmc->new_addr))
		return false;
	uint64_t old_ptl = pmd_lockptr(old_pmdp), new_ptl = pmd_lockptr(new_pmdp);
	mm_lock(mm, t, PT_LOCK_PMD, old_ptl, true);
	if (new_ptl != old_ptl)
		mm_lock(mm, t, PT_LOCK_PMD, new_ptl, true);
	uint64_t pmd = mm_read(mm, t, old_pmdp);
	/* racing with a collapse: a leaf or nothing where the table was */
	if (pmd_table_present(pmd)) {
		pmd_clear(mm, t, old_pmdp);
		/* pmd_populate() (#07): set_pmd() of a table, dsb(ishst) + isb */
		set_pmd(mm, t, new_pmdp, desc_pa(pmd) | PMD_TYPE_TABLE);
		ref_move(s, pmc->old_addr, pmc->new_addr, PMD_SIZE);
		flush_moved_table(mm, t, s, pmc->old_addr, PMD_SIZE);
		res = true;
	}
	if (new_ptl != old_ptl)
		mm_unlock(mm, t, PT_LOCK_PMD, new_ptl);
	mm_unlock(mm, t, PT_LOCK_PMD, old_ptl);
	return res;
}

/* move_normal_pud() (mm/mremap.c, HAVE_MOVE_PUD): hook the whole PMD table at the new pud */
static bool move_normal_pud(struct mm_model *mm, struct mm_thread *t, struct pagetable_move_control *pmc,
			    uint64_t old_pudp, uint64_t new_pudp)
{
	struct mm_space *s = pmc->s;

	if (!arch_supports_page_table_move(mm))
		return false;
	mm_site_scoped(mm, t, "move_normal_pud");
	if (MM_WARN_ON(mm, t, !mm_variant(mm, MMV_MREMAP_DST_NOT_NONE) && !pte_none(mm_read(mm, t, new_pudp)),
		       "mremap-dst-pud-not-none", pmc->new_addr,
		       "move_normal_pud: WARN_ON_ONCE(!pud_none(*new_pud)) for va 0x%llx",
		       (unsigned long long)pmc->new_addr))
		return false;
	/* pud_lock(): the mm's page_table_lock, one lock for both */
	mm_lock(mm, t, PT_LOCK_PUD, s->asid, true);
	uint64_t pud = mm_read(mm, t, old_pudp);
	pud_clear(mm, t, old_pudp);
	/* pud_populate() (#07) */
	set_pud(mm, t, new_pudp, desc_pa(pud) | PMD_TYPE_TABLE);
	ref_move(s, pmc->old_addr, pmc->new_addr, PUD_SIZE);
	flush_moved_table(mm, t, s, pmc->old_addr, PUD_SIZE);
	mm_unlock(mm, t, PT_LOCK_PUD, s->asid);
	return true;
}

/*
 * move_huge_pud() (#05) is not modelled: arm64 has no PUD-sized THP
 * (CONFIG_HAVE_ARCH_TRANSPARENT_HUGEPAGE_PUD), so pud_trans_huge() is always
 * false in move_page_tables() and the kernel compiles only the WARN_ON_ONCE fallback.
 */

/*
 * move_huge_pmd() (mm/huge_memory.c): move a THP's PMD block whole.  Its
 * deposited PTE table (for a later split) moves with it: the model keys the
 * deposit by pmd entry, so it is always withdrawn and deposited again (the
 * kernel does so when the PMD locks differ, pmd_move_must_withdraw()).
 */
static bool move_huge_pmd(struct mm_model *mm, struct mm_thread *t, struct pagetable_move_control *pmc,
			  uint64_t old_pmdp, uint64_t new_pmdp)
{
	struct mm_space *s = pmc->s;
	bool res = false;

	mm_kernel_call(mm, PT_KEV_MOVE_HUGE_PMD);
	/* a table may be there already (racing collapse): not a WARN, the caller splits */
	if (!pte_none(mm_read(mm, t, new_pmdp)))
		return false;
	const char *prev = mm_site(mm, t, "move_huge_pmd");
	/* __pmd_trans_huge_lock() */
	uint64_t old_ptl = pmd_lockptr(old_pmdp), new_ptl = pmd_lockptr(new_pmdp);
	mm_lock(mm, t, PT_LOCK_PMD, old_ptl, true);
	if (!pmd_trans_huge(mm_read(mm, t, old_pmdp))) {
		mm_unlock(mm, t, PT_LOCK_PMD, old_ptl);
		goto out;
	}
	if (new_ptl != old_ptl)
		mm_lock(mm, t, PT_LOCK_PMD, new_ptl, true);
	/* pmdp_huge_get_and_clear() */
	uint64_t pmd = mm_xchg(mm, t, old_pmdp, 0);
	bool force_flush = pmd_present(pmd);
	uint64_t pgtable = hmap_get(&mm->deposit, old_pmdp, HMAP_EMPTY);
	if (pgtable != HMAP_EMPTY) {
		hmap_del(&mm->deposit, old_pmdp);	/* pgtable_trans_huge_withdraw() */
		hmap_set(&mm->deposit, new_pmdp, pgtable);	/* pgtable_trans_huge_deposit() */
	}
	/* set_pmd_at(): a user block, no barriers (the flush below orders the clear) */
	mm_write(mm, t, new_pmdp, pmd);
	ref_move(s, pmc->old_addr, pmc->new_addr, PMD_SIZE);
	/* flush_pmd_tlb_range(): arm64 __flush_tlb_range(.., PMD_SIZE, false, 2) */
	if (force_flush)
		__flush_tlb_range(mm, t, s, pmc->old_addr, pmc->old_addr + PMD_SIZE, PMD_SIZE, /*last_level=*/false, 2);
	if (new_ptl != old_ptl)
		mm_unlock(mm, t, PT_LOCK_PMD, new_ptl);
	mm_unlock(mm, t, PT_LOCK_PMD, old_ptl);
	res = true;
out:
	mm_site(mm, t, prev);
	return res;
}

/* ---- move_page_tables() ---- */

/*
 * get_extent(): the bytes from old_addr to the next boundary of the entry's
 * size, bounded by the end of the range and by the next boundary at the
 * destination: an entry can move whole only if both ends are aligned alike.
 */
static uint64_t get_extent(enum pgt_entry entry, const struct pagetable_move_control *pmc)
{
	uint64_t size = entry == NORMAL_PUD ? PUD_SIZE : PMD_SIZE, mask = ~(size - 1);
	uint64_t next = (pmc->old_addr + size) & mask;
	/* even if next overflowed, the extent is right */
	uint64_t extent = next - pmc->old_addr;
	if (extent > pmc->old_end - pmc->old_addr)
		extent = pmc->old_end - pmc->old_addr;
	next = (pmc->new_addr + size) & mask;
	if (extent > next - pmc->new_addr)
		extent = next - pmc->new_addr;
	return extent;
}

/*
 * should_take_rmap_locks() (seed 004 #01/#02, Hugh Dickins: "neither of you
 * have mentioned mremap's take_rmap_locks()"): a moved table takes the ptes
 * away from under a pageout that found them through the old address and
 * holds only their PTL; with the rmap lock held for write, that rmap walk
 * cannot be in progress.
 */
static bool should_take_rmap_locks(struct mm_model *mm, const struct pagetable_move_control *pmc,
				   enum pgt_entry entry)
{
	switch (entry) {
	case NORMAL_PMD:
		/* bug zoo: the pre-fix need_rmap_locks, false for a fresh VMA */
		return mm_variant(mm, MMV_MREMAP_PMD_NO_RMAP_LOCK) ? pmc->need_rmap_locks : true;
	case NORMAL_PUD:
		return mm_variant(mm, MMV_MREMAP_PUD_NO_RMAP_LOCK) ? pmc->need_rmap_locks : true;
	default:
		return pmc->need_rmap_locks;
	}
}

/* move_pgt_entry(): try to move one entry at the level of `entry`; false: go down a level */
static bool move_pgt_entry(struct mm_model *mm, struct mm_thread *t, struct pagetable_move_control *pmc,
			   enum pgt_entry entry, uint64_t old_entry, uint64_t new_entry)
{
	bool moved = false;
	bool need_rmap_locks = should_take_rmap_locks(mm, pmc, entry);

	if (need_rmap_locks)
		take_rmap_locks(mm, t, pmc);
	switch (entry) {
	case NORMAL_PMD:
		moved = move_normal_pmd(mm, t, pmc, old_entry, new_entry);
		break;
	case NORMAL_PUD:
		moved = move_normal_pud(mm, t, pmc, old_entry, new_entry);
		break;
	case HPAGE_PMD:
		moved = move_huge_pmd(mm, t, pmc, old_entry, new_entry);
		break;
	}
	if (need_rmap_locks)
		drop_rmap_locks(mm, t, pmc);
	return moved;
}

/*
 * can_align_down(): addr_to_align must start its VMA, and nothing may be
 * mapped between the aligned-down address and it (the moved table would
 * carry that range along).
 */
static bool can_align_down(const struct pagetable_move_control *pmc, const struct mm_vma *vma,
			   uint64_t addr_to_align, uint64_t mask)
{
	uint64_t addr_masked = addr_to_align & mask;
	if (vma->start != addr_to_align)
		return false;
	return range_is_free(pmc->s, addr_masked, vma->start);
}

/* can_realign_addr(): worth it (the range reaches the next boundary) and safe */
static bool can_realign_addr(const struct pagetable_move_control *pmc, uint64_t pagetable_mask)
{
	uint64_t align_mask = ~pagetable_mask;
	uint64_t old_align = pmc->old_addr & align_mask, new_align = pmc->new_addr & align_mask;
	uint64_t old_align_next = (align_mask + 1) - old_align;

	if (pmc->len_in < old_align_next)
		return false;
	if (old_align == 0)
		return false;
	/* only mutually aligned ranges: then every later extent is a whole entry */
	if (old_align != new_align)
		return false;
	return can_align_down(pmc, &pmc->old, pmc->old_addr, pagetable_mask) &&
	       can_align_down(pmc, &pmc->new, pmc->new_addr, pagetable_mask);
}

/*
 * try_realign_addr() (Joel Fernandes, 2023): start the move at the PMD boundary below both
 * addresses so that the first, partial PMD moves as a table too.  old_end is
 * unchanged: the realignment only moves the start.
 */
static void try_realign_addr(struct pagetable_move_control *pmc, uint64_t pagetable_mask)
{
	if (!can_realign_addr(pmc, pagetable_mask))
		return;
	pmc->old_addr &= pagetable_mask;
	pmc->new_addr &= pagetable_mask;
}

/* pmc_progress(): how much of the asked range has been moved */
static uint64_t pmc_progress(const struct pagetable_move_control *pmc)
{
	uint64_t orig_old_addr = pmc->old_end - pmc->len_in;
	return pmc->old_addr < orig_old_addr ? 0 : pmc->old_addr - orig_old_addr;
}

/*
 * move_page_tables(): per PUD, then per PMD, the largest move that the
 * alignment of both ends allows (get_extent()): a whole PMD table (MOVE_PUD),
 * a whole PTE table (MOVE_PMD), a THP block, or PTE by PTE.  Returns the
 * number of bytes moved.
 */
static uint64_t move_page_tables(struct mm_model *mm, struct mm_thread *t, struct pagetable_move_control *pmc)
{
	struct mm_space *s = pmc->s;
	uint64_t extent;

	if (!pmc->len_in)
		return 0;
	const char *prev = mm_site(mm, t, "move_page_tables");
	bool first = !mm->res.calls[PT_KEV_MOVE_PAGE_TABLES];
	mm_kernel_call(mm, PT_KEV_MOVE_PAGE_TABLES);
	if (first) {
		mm->res.mpt_old = pmc->old_addr;
		mm->res.mpt_new = pmc->new_addr;
		mm->res.mpt_len = pmc->len_in;
	}
	if (!mm_variant(mm, MMV_MREMAP_NO_REALIGN))
		try_realign_addr(pmc, PMD_MASK);

	for (; pmc->old_addr < pmc->old_end; pmc->old_addr += extent, pmc->new_addr += extent) {
		if (!mm_step(mm, t))
			break;
		/* a PUD-sized extent: try to move the whole PMD table */
		extent = get_extent(NORMAL_PUD, pmc);
		uint64_t old_pud = get_old_pud(mm, t, s, pmc->old_addr);
		if (!old_pud)
			continue;
		uint64_t new_pud = alloc_new_pud(mm, t, s, pmc->new_addr);
		if (!new_pud)
			break;
		if (extent == PUD_SIZE && move_pgt_entry(mm, t, pmc, NORMAL_PUD, old_pud, new_pud))
			continue;

		extent = get_extent(NORMAL_PMD, pmc);
		uint64_t old_pmd = get_old_pmd(mm, t, s, pmc->old_addr);
		if (!old_pmd)
			continue;
		uint64_t new_pmd = alloc_new_pmd(mm, t, s, pmc->new_addr);
		if (!new_pmd)
			break;
again:
		if (pmd_trans_huge(mm_read(mm, t, old_pmd))) {
			if (extent == PMD_SIZE && move_pgt_entry(mm, t, pmc, HPAGE_PMD, old_pmd, new_pmd))
				continue;
			split_huge_pmd(mm, t, s, old_pmd, pmc->old_addr);
		} else if (extent == PMD_SIZE) {
			/* a PMD-sized extent: try to move the whole PTE table */
			if (move_pgt_entry(mm, t, pmc, NORMAL_PMD, old_pmd, new_pmd))
				continue;
		}
		if (pte_none(mm_read(mm, t, old_pmd)))
			continue;
		if (!pte_alloc(mm, t, s, new_pmd))
			break;
		if (move_ptes(mm, t, pmc, extent, old_pmd, new_pmd) == EAGAIN) {
			if (!mm_step(mm, t))
				break;
			goto again;
		}
	}
	mm_site(mm, t, prev);
	if (first)
		mm->res.mpt_ret = pmc_progress(pmc);
	return pmc_progress(pmc);
}

/* ---- the syscall ---- */

enum mremap_type { MREMAP_INVALID, MREMAP_NO_RESIZE, MREMAP_SHRINK, MREMAP_EXPAND };

/* struct vma_remap_struct: one mremap() call */
struct vma_remap_struct {
	struct mm_space *s;
	uint64_t addr, old_len, new_len, new_addr;
	uint32_t flags;
	uint64_t delta;
	enum mremap_type remap_type;
	uint64_t orig_old_len;
	bool moved;			/* the pages now live at new_addr */
};

static bool vrm_implies_new_addr(const struct vma_remap_struct *vrm)
{
	return vrm->flags & (PT_MREMAP_FIXED | PT_MREMAP_DONTUNMAP);
}

static bool vrm_overlaps(const struct vma_remap_struct *vrm)
{
	uint64_t end_old = vrm->addr + vrm->old_len, end_new = vrm->new_addr + vrm->new_len;
	return end_old > vrm->new_addr && end_new > vrm->addr;
}

/* check_mremap_params() */
static int check_mremap_params(const struct vma_remap_struct *vrm)
{
	if (vrm->flags & ~(PT_MREMAP_FIXED | PT_MREMAP_MAYMOVE | PT_MREMAP_DONTUNMAP))
		return EINVAL;
	if (!IS_ALIGNED(vrm->addr, PAGE_SIZE))
		return EINVAL;
	/*
	 * A zero old_len is the "duplicate shm" case; a zero new_len makes no sense.
	 * (Model bound: lengths beyond TASK_SIZE are refused here; the kernel fails
	 * them later, with EINVAL, EFAULT or ENOMEM depending on the path.)
	 */
	if (!ALIGN_UP(vrm->new_len, PAGE_SIZE) || vrm->new_len > TASK_SIZE || vrm->old_len > TASK_SIZE)
		return EINVAL;
	if (!vrm_implies_new_addr(vrm))
		return 0;
	if (!IS_ALIGNED(vrm->new_addr, PAGE_SIZE))
		return EINVAL;
	/* a fixed address implies a move */
	if (!(vrm->flags & PT_MREMAP_MAYMOVE))
		return EINVAL;
	/* MREMAP_DONTUNMAP does not resize */
	if ((vrm->flags & PT_MREMAP_DONTUNMAP) && vrm->old_len != vrm->new_len)
		return EINVAL;
	return 0;
}

/* remap_is_valid(): the range lies in one VMA and may grow */
static int remap_is_valid(const struct vma_remap_struct *vrm, const struct mm_vma *vma)
{
	/* !old_len duplicates a mapping: nonsense for a private one (all of the model's) */
	if (!vrm->old_len)
		return EINVAL;
	if (vrm->old_len > vma->end - vrm->addr)
		return EFAULT;
	return 0;
}

/*
 * get_unmapped_area(): where a VMA moves when the caller did not fix the
 * address.  A hint (MREMAP_DONTUNMAP's new_addr, or, for a trace recorded
 * from a real kernel, the address that kernel returned) is taken if free;
 * otherwise the highest free gap under the top-down mmap base.  A length
 * that is a multiple of PMD_SIZE is placed congruent to the old address
 * modulo PMD_SIZE (thp_get_unmapped_area() aligns by the pgoff, which for an
 * anonymous VMA is its original address).
 */
static uint64_t get_unmapped_area(const struct mm_model *mm, const struct vma_remap_struct *vrm)
{
	struct mm_space *s = vrm->s;
	uint64_t len = vrm->new_len, hint = vrm->new_addr;
	bool thp = IS_ALIGNED(len, PMD_SIZE) && !mm_variant(mm, MMV_UNMAPPED_AREA_NO_THP_ALIGN);
	uint64_t pad = thp ? PMD_SIZE : 0;

	if (hint && IS_ALIGNED(hint, PAGE_SIZE) && hint <= TASK_SIZE - len && hint >= MMAP_MIN_ADDR &&
	    range_is_free(s, hint, hint + len))
		return hint;
	for (uint32_t i = s->nvma + 1; i-- > 0;) {
		/* the gap below vma[i] (or below the mmap base) and above vma[i - 1] */
		uint64_t hi = i < s->nvma && s->vma[i].start < MMAP_BASE ? s->vma[i].start : MMAP_BASE;
		uint64_t lo = i > 0 ? s->vma[i - 1].end : MMAP_MIN_ADDR;
		if (lo < MMAP_MIN_ADDR)
			lo = MMAP_MIN_ADDR;
		if (hi <= lo || hi - lo < len + pad)
			continue;
		uint64_t addr = hi - len;
		if (thp)
			addr -= (addr - vrm->addr) & (PMD_SIZE - 1);
		return addr;
	}
	return 0;
}

/*
 * move_vma(): copy the VMA to new_addr, move its page tables, then unmap
 * the source (or, with MREMAP_DONTUNMAP, leave it in place, empty).
 */
static int move_vma(struct mm_model *mm, struct mm_thread *t, struct vma_remap_struct *vrm)
{
	struct mm_space *s = vrm->s;
	struct mm_vma *vma = find_vma(s, vrm->addr);
	int err = 0;

	/*
	 * copy_vma(): a fresh VMA sharing the anon_vma (same rmap lock).  It is
	 * linked after the old one in the anon_vma's rmap order, so move_ptes()
	 * needs no rmap lock (need_rmap_locks = false; only a merge into an
	 * earlier VMA would need it, and the model does not merge).
	 */
	struct pagetable_move_control pmc = {
		.s = s, .old = *vma,
		.old_addr = vrm->addr, .new_addr = vrm->new_addr,
		.old_end = vrm->addr + vrm->old_len, .len_in = vrm->old_len,
		.need_rmap_locks = false,
	};
	pmc.new = *vma_insert(s, vrm->new_addr, vrm->new_addr + vrm->new_len, vma->prot, vma->order, vma->flags,
			      vma->anon_id);
	/* what mremap means: the destination holds exactly the pages moved there (each moves
	 * its reference entry with it) */
	ref_clear_range(s, vrm->new_addr, vrm->new_addr + vrm->new_len);

	uint64_t moved_len = move_page_tables(mm, t, &pmc);
	if (moved_len < vrm->old_len) {
		/*
		 * On error, move the entries back from the new area to the old one,
		 * which succeeds since the page tables are still there, and unmap
		 * the new area instead of the old.
		 */
		err = ENOMEM;
		struct pagetable_move_control revert = {
			.s = s, .old = pmc.new, .new = pmc.old,
			.old_addr = vrm->new_addr, .new_addr = vrm->addr,
			.old_end = vrm->new_addr + moved_len, .len_in = moved_len,
			.need_rmap_locks = true,
		};
		move_page_tables(mm, t, &revert);
		do_munmap(mm, t, s, vrm->new_addr, vrm->new_len);
		return err;
	}
	vrm->moved = true;
	if (vrm->flags & PT_MREMAP_DONTUNMAP) {
		/* dontunmap_complete(): the old VMA stays, empty; if all of it moved, its
		 * anon_vma links go (unlink_anon_vmas()): a later fault starts a new anon_vma */
		struct mm_vma *old = find_vma(s, vrm->addr);
		if (old && old->start == vrm->addr && old->end == vrm->addr + vrm->old_len)
			old->anon_id = mm->next_anon_id++;
	} else {
		/* unmap_source_vma(): best effort, an error only leaves the (empty) VMA behind */
		do_munmap(mm, t, s, vrm->addr, vrm->old_len);
	}
	return 0;
}

/* shrink_vma(): unmap the tail beyond new_len */
static int shrink_vma(struct mm_model *mm, struct mm_thread *t, struct vma_remap_struct *vrm)
{
	uint64_t start = vrm->addr + vrm->new_len;
	int err = do_munmap(mm, t, vrm->s, start, vrm->delta);
	if (!err)
		ref_clear_range(vrm->s, start, start + vrm->delta);
	return err;
}

/* mremap_to(): MREMAP_FIXED or MREMAP_DONTUNMAP: move to (or near) new_addr */
static int mremap_to(struct mm_model *mm, struct mm_thread *t, struct vma_remap_struct *vrm)
{
	struct mm_space *s = vrm->s;
	int err;

	if (vrm->new_len > TASK_SIZE || vrm->new_addr > TASK_SIZE - vrm->new_len)
		return EINVAL;
	if (vrm_overlaps(vrm))
		return EINVAL;
	if (vrm->flags & PT_MREMAP_FIXED) {
		/* like MAP_FIXED: unmap whatever is at the destination */
		err = do_munmap(mm, t, s, vrm->new_addr, vrm->new_len);
		if (err)
			return err;
		/* a remap of part of a VMA elsewhere in the same VMA may have unmapped the source */
		if (!find_vma(s, vrm->addr))
			return EFAULT;
	}
	if (vrm->remap_type == MREMAP_SHRINK) {
		err = shrink_vma(mm, t, vrm);
		if (err)
			return err;
		vrm->old_len = vrm->new_len;
	}
	err = remap_is_valid(vrm, find_vma(s, vrm->addr));
	if (err)
		return err;
	if (!(vrm->flags & PT_MREMAP_FIXED)) {
		vrm->new_addr = get_unmapped_area(mm, vrm);
		if (!vrm->new_addr)
			return ENOMEM;
	}
	return move_vma(mm, t, vrm);
}

/* expand_vma(): grow in place if the VMA ends the range and the space after it is free, else move */
static int expand_vma(struct mm_model *mm, struct mm_thread *t, struct vma_remap_struct *vrm)
{
	struct mm_space *s = vrm->s;
	struct mm_vma *vma = find_vma(s, vrm->addr);
	int err = remap_is_valid(vrm, vma);
	if (err)
		return err;
	/* vrm_can_expand_in_place() / vma_expandable() */
	uint64_t end = vma->end + vrm->delta;
	if (vma->end - vrm->addr == vrm->old_len && end > vma->end && end <= TASK_SIZE &&
	    range_is_free(s, vma->end, end)) {
		vma->end = end;		/* vma_merge_extend(): nothing to map until a fault */
		vrm->new_addr = vrm->addr;
		return 0;
	}
	if (!(vrm->flags & PT_MREMAP_MAYMOVE))
		return ENOMEM;
	vrm->new_addr = get_unmapped_area(mm, vrm);
	if (!vrm->new_addr)
		return ENOMEM;
	return move_vma(mm, t, vrm);
}

/* mremap_at(): resize in place, moving only if it must and may */
static int mremap_at(struct mm_model *mm, struct mm_thread *t, struct vma_remap_struct *vrm)
{
	switch (vrm->remap_type) {
	case MREMAP_NO_RESIZE:
		return 0;
	case MREMAP_SHRINK:
		return shrink_vma(mm, t, vrm);
	case MREMAP_EXPAND:
		return expand_vma(mm, t, vrm);
	default:
		return EINVAL;
	}
}

/*
 * do_mremap() (SYSCALL_DEFINE5(mremap)): va, len (old_len), new_va, new_len,
 * flags (PT_MREMAP_*).  Afterwards the page tables must show the old range's
 * pages at the new address and nothing left at the old one (I10).
 */
int mm_do_mremap(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	struct mm_space *s = t->op_space;	/* run_desc()'s mm_space_get(mm, t, ev->asid) */
	const char *prev = mm_site(mm, t, "do_mremap");
	struct vma_remap_struct vrm = {
		.s = s, .addr = ev->va, .old_len = ev->len, .new_len = ev->len2, .new_addr = ev->va2,
		.flags = ev->flags, .remap_type = MREMAP_INVALID,
	};
	int err = check_mremap_params(&vrm);
	if (err)
		goto out;
	vrm.old_len = ALIGN_UP(vrm.old_len, PAGE_SIZE);
	vrm.new_len = ALIGN_UP(vrm.new_len, PAGE_SIZE);
	vrm.orig_old_len = vrm.old_len;
	vrm.delta = vrm.old_len > vrm.new_len ? vrm.old_len - vrm.new_len : vrm.new_len - vrm.old_len;
	if (vrm.addr > TASK_SIZE - vrm.old_len) {
		err = EFAULT;	/* no VMA can contain it */
		goto out;
	}

	mm_lock(mm, t, PT_LOCK_MMAP, s->asid, true);
	struct mm_vma *vma = find_vma(s, vrm.addr);
	if (!vma) {
		err = EFAULT;
		goto unlock;
	}
	if (vma->flags & MM_VMA_HUGETLB) {
		err = ENOSYS;	/* move_hugetlb_page_tables(): not modelled */
		goto unlock;
	}
	vrm.remap_type = !vrm.delta ? MREMAP_NO_RESIZE : vrm.old_len > vrm.new_len ? MREMAP_SHRINK : MREMAP_EXPAND;
	err = vrm_implies_new_addr(&vrm) ? mremap_to(mm, t, &vrm) : mremap_at(mm, t, &vrm);
unlock:
	mm_unlock(mm, t, PT_LOCK_MMAP, s->asid);
	/* the old range (unchanged on failure, empty or shrunk on success), then where the pages went */
	ref_check(mm, t, s, vrm.addr, vrm.addr + vrm.orig_old_len, "mremap");
	if (!err && vrm.moved)
		ref_check(mm, t, s, vrm.new_addr, vrm.new_addr + vrm.new_len, "mremap");
	else if (!err && vrm.new_len > vrm.orig_old_len)
		ref_check(mm, t, s, vrm.addr + vrm.orig_old_len, vrm.addr + vrm.new_len, "mremap");
out:
	if (!err && ev == mm->res_ev)
		mm->res.addr = vrm.moved ? vrm.new_addr : vrm.addr;
	mm_site(mm, t, prev);
	return err;
}
