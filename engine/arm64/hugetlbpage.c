/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hugetlbpage.c - arm64 hugetlb page-table helpers (arch/arm64/mm/hugetlbpage.c,
 * arch/arm64/include/asm/hugetlb.h and the *_anysz() helpers of
 * arch/arm64/include/asm/pgtable.h) as patched by seed 000:
 *
 *   #01  the huge pte size comes from the caller (num_contig_ptes(sz)), or from
 *        the table walk (find_num_contig()) for present contiguous entries;
 *   #02  TLBI stride and level hint from the entry size, last level only;
 *        set_huge_pte_at() breaks a contiguous range only if it is valid;
 *   #04/#05  set_ptes_anysz() / ptep_get_and_clear_anysz() for every entry size;
 *   #06  the barriers of set_ptes_anysz() once, after the loop;
 *   #09  clear_flush() on init_mm uses flush_tlb_kernel_range() (huge vmap).
 *
 * The `hugetlb` op that drives them is mm/hugetlb.c's (engine/mm/hugetlb.c).
 */
#include "hugetlb.h"

uint64_t pgprot_kernel(unsigned prot)
{
	uint64_t p = PTE_TYPE_PAGE | PAGE_KERNEL;
	if (prot && !(prot & PT_PROT_WRITE))
		p = (p & ~(PT_DESC_DBM | PT_DESC_DIRTY)) | PT_DESC_RDONLY;	/* PAGE_KERNEL_RO */
	if (prot & PT_PROT_EXEC)
		p &= ~PT_DESC_PXN;						/* PAGE_KERNEL_EXEC */
	return p;
}

/* ---- sizes ---- */

unsigned num_contig_ptes(uint64_t size, uint64_t *pgsize)
{
	*pgsize = size;
	switch (size) {
	case PUD_SIZE:
	case PMD_SIZE:
		return 1;
	case CONT_PMD_SIZE:
		*pgsize = PMD_SIZE;
		return CONT_PMDS;
	case CONT_PTE_SIZE:
		*pgsize = PAGE_SIZE;
		return CONT_PTES;
	default:
		return 0;
	}
}

uint64_t arch_make_huge_pte(uint64_t pte, unsigned shift)
{
	/* blocks are bits[1:0] = 0b01 (pmd_mkhuge/pud_mkhuge clear the table bit) */
	switch (1ull << shift) {
	case PUD_SIZE:
	case PMD_SIZE:
		return pte & ~PT_DESC_TABLE;
	case CONT_PMD_SIZE:
		return (pte & ~PT_DESC_TABLE) | PT_DESC_CONT;
	case CONT_PTE_SIZE:
		return pte | PT_DESC_CONT;
	default:
		return pte;
	}
}

/* find_num_contig(): a present contiguous entry's size from where it sits: the PMD entry of
 * addr (CONT_PMD) or a PTE (CONT_PTE) */
static unsigned find_num_contig(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
				uint64_t ptep, uint64_t *pgsize)
{
	*pgsize = PAGE_SIZE;
	if (mm_walk_entry(mm, t, s, addr, 2) == ptep) {
		*pgsize = PMD_SIZE;
		return CONT_PMDS;
	}
	return CONT_PTES;
}

/* ---- set_ptes_anysz / ptep_get_and_clear_anysz (asm/pgtable.h, seed 000 #04, #06) ---- */

/* __check_safe_pte_update() (CONFIG_DEBUG_VM): a live entry may only change what
 * pgattr_change_is_safe() allows; the kernel WARNs, and writes anyway */
static void __check_safe_pte_update(struct mm_model *mm, struct mm_thread *t, uint64_t ptep, uint64_t pte)
{
	uint64_t old = __ptep_get(mm, t, ptep);
	if (!pte_valid(old) || !pte_valid(pte))
		return;
	if (!pt_pgattr_change_is_safe(old, pte))
		mm_warn(mm, t, "unsafe-attribute-change", 0,
			"__check_safe_pte_update: unsafe attribute change of entry 0x%llx: 0x%llx -> 0x%llx",
			(unsigned long long)ptep, (unsigned long long)old, (unsigned long long)pte);
}

void set_ptes_anysz(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t ptep, uint64_t pte,
		    unsigned nr, uint64_t pgsize)
{
	(void)s;
	for (;;) {
		if (!mm_step(mm, t))
			break;
		__check_safe_pte_update(mm, t, ptep, pte);
		__set_pte_nosync(mm, t, ptep, pte);
		if (--nr == 0)
			break;
		ptep += 8;
		pte += pgsize;	/* pte_advance_pfn(pte, pgsize >> PAGE_SHIFT) */
	}
	/* seed 000 #06: one dsb(ishst) + isb for the whole batch (queued in lazy MMU mode, #11),
	 * only for a valid kernel entry; the variant loses it */
	if (mm_variant(mm, MMV_SET_PTES_NO_BARRIER))
		return;
	__set_pte_complete(mm, t, pte);
}

uint64_t ptep_get_and_clear_anysz(struct mm_model *mm, struct mm_thread *t, uint64_t ptep, uint64_t pgsize)
{
	(void)pgsize;	/* only page_table_check cares which level it is */
	return __ptep_get_and_clear(mm, t, ptep);
}

/* ---- TLB maintenance (asm/hugetlb.h, seed 000 #02) ---- */

void __flush_hugetlb_tlb_range(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start,
			       uint64_t end, uint64_t stride, bool last_level)
{
	uint64_t tlb_stride = PAGE_SIZE;
	unsigned level = TLBI_TTL_UNKNOWN;

	switch (stride) {
	case PUD_SIZE:
		tlb_stride = PUD_SIZE, level = 1;
		break;
	case CONT_PMD_SIZE:
	case PMD_SIZE:
		tlb_stride = PMD_SIZE, level = 2;
		break;
	case CONT_PTE_SIZE:
		tlb_stride = PAGE_SIZE, level = 3;
		break;
	default:
		break;	/* e.g. the PAGE_SIZE pgsize of a contpte range: no level hint */
	}
	/* the bug: a hint one level too wide, whose TTL does not match the entries
	 * ("if the level is wrong, no invalidation may take place") */
	if (mm_variant(mm, MMV_HUGETLB_WRONG_STRIDE) && level > 1) {
		level--;
		tlb_stride = level == 1 ? PUD_SIZE : PMD_SIZE;
	}
	__flush_tlb_range(mm, t, s, start, end, tlb_stride, last_level, level);
}

/* ---- break helpers (hugetlbpage.c) ---- */

/*
 * get_clear_contig(): the "break" of a contiguous range ("Misprogramming of the
 * Contiguous bit"): clear every entry; the hardware may have set dirty or young on
 * any of them, so those of the others are folded into the first, if it was present.
 */
static uint64_t get_clear_contig(struct mm_model *mm, struct mm_thread *t, uint64_t ptep, uint64_t pgsize,
				 unsigned ncontig)
{
	uint64_t pte = ptep_get_and_clear_anysz(mm, t, ptep, pgsize);
	bool present = pte_present(pte);
	while (--ncontig) {
		if (!mm_step(mm, t))
			break;
		ptep += 8;
		uint64_t tmp = ptep_get_and_clear_anysz(mm, t, ptep, pgsize);
		if (present)
			pte = pte_gather_ad(pte, tmp);
	}
	return pte;
}

/* get_clear_contig_flush(): the break, then its TLB flush (#02: stride pgsize, last level).
 * No init_mm case here, unlike clear_flush() (#09): it is the user-style flush. */
static uint64_t get_clear_contig_flush(struct mm_model *mm, struct mm_thread *t, struct mm_space *s,
				       uint64_t addr, uint64_t ptep, uint64_t pgsize, unsigned ncontig)
{
	const char *prev = mm_site(mm, t, "get_clear_contig_flush");
	uint64_t orig = get_clear_contig(mm, t, ptep, pgsize, ncontig);
	__flush_hugetlb_tlb_range(mm, t, s, addr, addr + pgsize * ncontig, pgsize, /*last_level=*/true);
	mm_site(mm, t, prev);
	return orig;
}

/* clear_flush(): the break when the old value is not needed.  seed 000 #09: for init_mm
 * (huge vmap) the kernel flush, whose ISB discards what was fetched through the old mapping. */
static void clear_flush(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			uint64_t ptep, uint64_t pgsize, unsigned ncontig)
{
	const char *prev = mm_site(mm, t, "clear_flush");
	uint64_t saddr = addr;
	for (unsigned i = 0; i < ncontig; i++, addr += pgsize, ptep += 8) {
		if (!mm_step(mm, t))
			break;
		ptep_get_and_clear_anysz(mm, t, ptep, pgsize);
	}
	if (s->kernel && !mm_variant(mm, MMV_HUGETLB_USER_FLUSH_FOR_KERNEL))
		flush_tlb_kernel_range(mm, t, saddr, addr);
	else
		__flush_hugetlb_tlb_range(mm, t, s, saddr, addr, pgsize, /*last_level=*/true);
	/* back in set_huge_pte_at(): the next instruction of the routine's own context, which
	 * the kernel flush's ISB precedes (the variant's user flush has none: I6) */
	if (s->kernel)
		mm_text_fetch(mm, t);
	mm_site(mm, t, prev);
}

/* Is the range to be replaced live?  The patched kernel (#02) looks at the first entry
 * only, which is right while a contiguous range is all valid or all invalid; the model
 * checks every entry, and the variant is the first-entry test. */
static bool huge_range_valid(struct mm_model *mm, struct mm_thread *t, uint64_t ptep, unsigned ncontig)
{
	if (mm_variant(mm, MMV_HUGETLB_BBM_ELIDE_FIRST_ONLY))
		ncontig = 1;
	for (unsigned i = 0; i < ncontig; i++)
		if (pte_valid(__ptep_get(mm, t, ptep + 8ull * i)))
			return true;
	return false;
}

void set_huge_pte_at(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr, uint64_t ptep,
		     uint64_t pte, uint64_t sz)
{
	const char *prev = mm_site(mm, t, "set_huge_pte_at");
	uint64_t pgsize;
	unsigned ncontig = num_contig_ptes(sz, &pgsize);

	if (!pte_present(pte)) {
		for (unsigned i = 0; i < ncontig; i++, ptep += 8)
			set_ptes_anysz(mm, t, s, ptep, pte, 1, pgsize);
		mm_site(mm, t, prev);
		return;
	}
	/* seed 000 #02: break-before-make only for valid -> valid (a PMD/PUD block is one
	 * entry: its callers clear it first) */
	if (pte_cont(pte) && huge_range_valid(mm, t, ptep, ncontig))
		clear_flush(mm, t, s, addr, ptep, pgsize, ncontig);
	set_ptes_anysz(mm, t, s, ptep, pte, ncontig, pgsize);
	mm_site(mm, t, prev);
}

uint64_t huge_ptep_get_and_clear(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
				 uint64_t ptep, uint64_t sz)
{
	(void)s;
	(void)addr;
	uint64_t pgsize;
	unsigned ncontig = num_contig_ptes(sz, &pgsize);
	return get_clear_contig(mm, t, ptep, pgsize, ncontig);
}

/* huge_ptep_get(): a contiguous range's dirty/young are those of any of its entries */
uint64_t huge_ptep_get(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
		       uint64_t ptep)
{
	uint64_t orig = __ptep_get(mm, t, ptep), pgsize;
	if (!pte_present(orig) || !pte_cont(orig))
		return orig;
	unsigned ncontig = find_num_contig(mm, t, s, addr, ptep, &pgsize);
	for (unsigned i = 0; i < ncontig; i++) {
		uint64_t pte = __ptep_get(mm, t, ptep + 8ull * i);
		orig = pte_gather_ad(orig, pte);
	}
	return orig;
}

/* ---- wrprotect / access flags ---- */

/* __ptep_set_wrprotect(): a cmpxchg loop against hardware AF/DBM updates, in place */
static void __ptep_set_wrprotect(struct mm_model *mm, struct mm_thread *t, uint64_t ptep)
{
	uint64_t old = __ptep_get(mm, t, ptep);
	mm_write(mm, t, ptep, pte_wrprotect(old));
}

void huge_ptep_set_wrprotect(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			     uint64_t ptep)
{
	const char *prev = mm_site(mm, t, "huge_ptep_set_wrprotect");
	uint64_t pte = __ptep_get(mm, t, ptep), pgsize;
	if (!pte_present(pte))
		mm_warn(mm, t, "huge-pte-not-present", addr, "huge_ptep_set_wrprotect on a non-present entry");
	/* a block is one entry: RDONLY may change live (pgattr_change_is_safe); a contiguous
	 * range may not be changed in part, so it is broken, flushed and rewritten whole
	 * (the variant changes its first entry in place) */
	if (!pte_cont(pte) || mm_variant(mm, MMV_CONTPTE_NO_UNFOLD)) {
		__ptep_set_wrprotect(mm, t, ptep);
		mm_site(mm, t, prev);
		return;
	}
	unsigned ncontig = find_num_contig(mm, t, s, addr, ptep, &pgsize);
	pte = get_clear_contig_flush(mm, t, s, addr, ptep, pgsize, ncontig);
	pte = pte_wrprotect(pte);
	set_ptes_anysz(mm, t, s, ptep, pte, ncontig, pgsize);
	mm_site(mm, t, prev);
}

/* __ptep_set_access_flags() (arch/arm64/mm/fault.c): only relax, atomically against the
 * hardware; a stale read-only entry is flushed when the entry became writable+dirty */
static int __ptep_set_access_flags(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
				   uint64_t ptep, uint64_t entry, bool dirty)
{
	uint64_t pte = __ptep_get(mm, t, ptep);
	if (pte == entry)
		return 0;
	entry &= PT_DESC_RDONLY | PT_DESC_AF | PT_DESC_DBM | PT_DESC_DIRTY;
	/* RDONLY becomes the most permissive (lowest) of the two: a & b == ~(~a | ~b) */
	entry ^= PT_DESC_RDONLY;
	uint64_t val = pte ^ PT_DESC_RDONLY;
	val |= entry;
	val ^= PT_DESC_RDONLY;
	mm_write(mm, t, ptep, val);	/* cmpxchg_relaxed() */
	if (dirty)
		flush_tlb_page(mm, t, s, addr);
	return 1;
}

static bool __cont_access_flags_changed(struct mm_model *mm, struct mm_thread *t, uint64_t ptep, uint64_t pte,
					unsigned ncontig)
{
	if (pte_write(pte) != pte_write(__ptep_get(mm, t, ptep)))
		return true;
	for (unsigned i = 0; i < ncontig; i++) {
		uint64_t orig = __ptep_get(mm, t, ptep + 8ull * i);
		if (pte_dirty(pte) != pte_dirty(orig) || pte_young(pte) != pte_young(orig))
			return true;
	}
	return false;
}

int huge_ptep_set_access_flags(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			       uint64_t ptep, uint64_t pte, bool dirty, uint64_t sz)
{
	mm_site_scoped(mm, t, "huge_ptep_set_access_flags");
	uint64_t pgsize;

	MM_WARN_ON(mm, t, !pte_present(pte), "huge-pte-not-present", addr,
		   "huge_ptep_set_access_flags with a non-present pte");
	if (!pte_cont(pte))
		return __ptep_set_access_flags(mm, t, s, addr, ptep, pte, dirty);
	unsigned ncontig = num_contig_ptes(sz, &pgsize);	/* #01: the size from the VMA */
	if (!__cont_access_flags_changed(mm, t, ptep, pte, ncontig))
		return 0;
	uint64_t orig = get_clear_contig_flush(mm, t, s, addr, ptep, pgsize, ncontig);
	MM_WARN_ON(mm, t, !pte_present(orig), "huge-pte-not-present", addr,
		   "huge_ptep_set_access_flags: the range was not present");
	/* do not lose the dirty or young state the hardware set meanwhile */
	pte = pte_gather_ad(pte, orig);
	set_ptes_anysz(mm, t, s, ptep, pte, ncontig, pgsize);
	return 1;
}

/* ---- table walk (huge_pte_alloc / huge_pte_offset) ---- */

/* The next table under entry_pa, allocated if none; 0 if a block is in the way. */
static uint64_t table_alloc(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t entry_pa,
			    unsigned child_level)
{
	uint64_t e = mm_read(mm, t, entry_pa);
	if (pte_none(e))
		return mm_table_alloc_install(mm, t, s, entry_pa, child_level);
	return pte_valid(e) && pmd_table(e) ? desc_pa(e) : 0;
}

/* huge_pte_alloc(): the entry of a huge pte of size sz: the PUD (1G), the PMD (2M, 32M)
 * or the PTE (64K); tables allocated on the way.  0 if a block is in the way. */
uint64_t huge_pte_alloc(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			uint64_t sz)
{
	uint64_t pud = table_alloc(mm, t, s, mm_pgd_entry(s, addr), 1);
	if (!pud)
		return 0;
	uint64_t pudp = pt_entry_pa(pud, 1, addr);
	if (sz == PUD_SIZE)
		return pudp;
	uint64_t pmd = table_alloc(mm, t, s, pudp, 2);
	if (!pmd)
		return 0;
	uint64_t pmdp = pt_entry_pa(pmd, 2, addr);
	if (sz == PMD_SIZE || sz == CONT_PMD_SIZE)
		return pmdp;
	uint64_t pte = table_alloc(mm, t, s, pmdp, 3);	/* pte_alloc_huge() */
	return pte ? pt_entry_pa(pte, 3, addr) : 0;
}

/* huge_pte_offset(): the entry of a huge pte of size sz, or 0 if no table leads there. */
uint64_t huge_pte_offset(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			 uint64_t sz)
{
	unsigned level = sz == PUD_SIZE ? 1 : sz == CONT_PTE_SIZE ? 3 : 2;
	return mm_walk_entry(mm, t, s, addr, level);
}
