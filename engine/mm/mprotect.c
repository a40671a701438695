/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mprotect.c - mprotect() and the NUMA-balancing protection scan: mm/mprotect.c
 * (do_mprotect_pkey, mprotect_fixup, change_protection and its walk down to
 * change_pte_range) as patched by seed 001 (Dev Jain, "mm: optimize mprotect()
 * for MM_CP_PROT_NUMA by batch-skipping PTEs") together with the rest of its
 * series as merged ("mm: optimize mprotect() by PTE batching" and the arm64
 * modify_prot_start_ptes()/modify_prot_commit_ptes()), the huge-PMD path of
 * mm/huge_memory.c (change_huge_pmd), and kernel/sched/fair.c task_numa_work()
 * -> mm/mempolicy.c change_prot_numa() for the scan (`mprotect ... flags=0x1`,
 * PT_MPROT_NUMA: MM_CP_PROT_NUMA, the new protection is PAGE_NONE).
 *
 * change_pte_range() steps over the PTEs of one large folio at a time: the
 * scan skips a whole folio that it would not hint (prot_numa_skip_ptes(),
 * mprotect_folio_pte_batch()), and a change is made to a whole batch with one
 * modify_prot_start_ptes()/modify_prot_commit_ptes() pair, which on arm64
 * leaves fully covered contpte blocks folded.  A batch must stop at `end` and
 * at the end of the folio; a batch of 0 would never advance (seed 001 review).
 *
 * NUMA in the model: CPU c runs on node c % nnodes (numa_node_id()); a folio's
 * node is the node it was allocated on.  The memory tiers are stylized so that
 * every path of the scan is reachable from a trace whose faults allocate on
 * node 0: node 0 is the lower memory tier and node 1 the top tier, and NUMA
 * balancing runs with NUMA_BALANCING_NORMAL | NUMA_BALANCING_MEMORY_TIERING.
 * So a scan on cpu0 finds the folios already on its node and skips them by
 * batches, and a scan on cpu1 hints them, recording their access time first
 * (the tiering path).  Every address space is a single-threaded process (the
 * target node is the scanning CPU's node).
 *
 * Simplifications: every anonymous page is exclusive (no fork, no KSM, no
 * zero page, no pinning), so a writable VMA's PTEs are made writable at once
 * (MM_CP_TRY_CHANGE_WRITABLE with can_change_pte_writable() always true) and a
 * batch is committed in one piece (the kernel splits it into sub-batches of
 * like PageAnonExclusive); VMAs are merged back only with the neighbours of the range;
 * no uffd-wp, soft-dirty or swap/migration entries (non-present PTEs are left
 * alone); hugetlb VMAs are not modelled here (EOPNOTSUPP).
 */
#include "contpte.h"
#include "tlb.h"

/* include/linux/sched/sysctl.h: sysctl_numa_balancing_mode */
#define NUMA_BALANCING_NORMAL		0x1u
#define NUMA_BALANCING_MEMORY_TIERING	0x2u
static const unsigned sysctl_numa_balancing_mode = NUMA_BALANCING_NORMAL | NUMA_BALANCING_MEMORY_TIERING;
#define NUMA_LOWER_TIER_NODE 0

/* fpb_t flags of folio_pte_batch_flags() (mm/internal.h) */
#define FPB_RESPECT_DIRTY	0x1u
#define FPB_RESPECT_SOFT_DIRTY	0x2u
#define FPB_RESPECT_WRITE	0x4u

/* vm_normal_folio(): the folio behind a present PTE or huge PMD */
struct folio {
	uint64_t pa;		/* first page */
	unsigned order;
	unsigned node;		/* folio_nid() */
};

/* One change_protection() over [start, end) of one VMA. */
struct prot_op {
	struct mm_model *mm;
	struct mm_thread *t;
	struct mm_space *s;
	struct mmu_gather *tlb;
	unsigned prot;		/* the VMA's new PT_PROT_*; 0 (PAGE_NONE) for the NUMA scan */
	bool prot_numa;		/* MM_CP_PROT_NUMA */
	unsigned target_node;	/* the node of the single-threaded process */
	uint64_t pages;		/* PTEs changed (the return value of change_protection) */
};

/* ---- NUMA ---- */

static unsigned numa_node_id(const struct mm_model *mm, const struct mm_thread *t)
{
	return t->cpu % (mm->nnodes ? mm->nnodes : 1);
}

static bool node_is_toptier(unsigned nid) { return nid != NUMA_LOWER_TIER_NODE; }

/* folio_use_access_time(): memory tiering records when a lower-tier folio was last scanned */
static bool folio_use_access_time(const struct folio *folio)
{
	return (sysctl_numa_balancing_mode & NUMA_BALANCING_MEMORY_TIERING) && !node_is_toptier(folio->node);
}

static bool vm_normal_folio(struct mm_model *mm, uint64_t pa, struct folio *folio)
{
	unsigned order, node;
	if (!pt_machine_data_page(mm->m, pa, &order, &node))
		return false;
	folio->order = order;
	folio->node = node;
	folio->pa = ALIGN_DOWN(pa, PAGE_SIZE << order);
	return true;
}

enum numa_verdict { NUMA_SKIP, NUMA_HINT, NUMA_HINT_ACCESS_TIME };

/*
 * folio_can_map_prot_numa() (mm/mprotect.c; the tests of the seed's
 * prot_numa_skip_ptes()): is this folio worth a NUMA hinting fault?  Not
 * without a folio (zero page, special mappings), not if it is already on the
 * node the (single-threaded) process runs on, not a top-tier folio unless
 * NUMA_BALANCING_NORMAL.  ZONE_DEVICE, KSM, shared COW, pinned and dirty file
 * folios do not exist in the model.
 */
static enum numa_verdict folio_can_map_prot_numa(const struct prot_op *op, const struct folio *folio)
{
	if (!folio)
		return NUMA_SKIP;
	/* don't mess with PTEs if the page is already on the node the process runs on */
	if (folio->node == op->target_node)
		return NUMA_SKIP;
	/* skip scanning a top-tier node if normal NUMA balancing is disabled */
	if (!(sysctl_numa_balancing_mode & NUMA_BALANCING_NORMAL) && node_is_toptier(folio->node))
		return NUMA_SKIP;
	/* folio_xchg_access_time(): the model keeps no access time; the verdict records the path */
	if (folio_use_access_time(folio))
		return NUMA_HINT_ACCESS_TIME;
	return NUMA_HINT;
}

/* ---- PTE batches ---- */

/* __pte_batch_clear_ignored(): what may differ inside a batch (dirty, write, young) */
static uint64_t pte_batch_clear_ignored(uint64_t pte, unsigned flags)
{
	if (!(flags & FPB_RESPECT_DIRTY)) {		/* pte_mkclean() */
		pte &= ~PT_DESC_DIRTY;
		if (pte & PT_DESC_DBM)
			pte |= PT_DESC_RDONLY;
	}
	if (!(flags & FPB_RESPECT_WRITE))		/* pte_wrprotect() */
		pte = (pte & ~PT_DESC_DBM) | PT_DESC_RDONLY;
	return pte & ~PT_DESC_AF;			/* pte_mkold() */
}

/* pte_batch_hint() (arm64): the entries of a contpte block need not be read one by one */
static unsigned pte_batch_hint(uint64_t ptep, uint64_t pte)
{
	if (!pte_valid_cont(pte))
		return 1;
	return CONT_PTES - (unsigned)((ptep >> 3) & (CONT_PTES - 1));
}

/*
 * folio_pte_batch() (mm/internal.h): how many PTEs from ptep map consecutive
 * pages of the folio ending at folio_end with the same attributes, at most
 * max_nr.  The folio bound keeps a batch from running into a neighbouring
 * folio that happens to follow it in physical memory, and so does the test of
 * each page: the model frees the unmapped pages of a partly unmapped large
 * folio at once (memory.c, rmap.c), where the kernel keeps them until the
 * folio's deferred split, so a page inside the folio's range may since have
 * been reallocated as another folio (a refault after MADV_DONTNEED or
 * MADV_PAGEOUT).  In the kernel that page is not the folio's either: either
 * the folio is still whole and the refault got another page (the pfns are
 * not consecutive), or it was split and is no large folio any more.
 */
static unsigned folio_pte_batch(struct prot_op *op, const struct folio *folio, uint64_t folio_end, uint64_t ptep,
				uint64_t pte, unsigned max_nr, unsigned flags)
{
	uint64_t left = (folio_end - desc_pa(pte)) >> PAGE_SHIFT;
	if (left < max_nr)
		max_nr = (unsigned)left;
	unsigned nr = pte_batch_hint(ptep, pte);
	uint64_t expected = pte_batch_clear_ignored(pte_advance_pa(pte, nr), flags);
	ptep += 8ull * nr;
	while (nr < max_nr) {
		pte = ptep_get(op->mm, op->t, ptep);
		if (pte_batch_clear_ignored(pte, flags) != expected ||
		    (folio && !folio_covers(op->mm, folio->pa, desc_pa(pte), desc_pa(pte) + PAGE_SIZE)))
			break;
		unsigned cur = pte_batch_hint(ptep, pte);
		expected = pte_advance_pa(expected, cur);
		ptep += 8ull * cur;
		nr += cur;
	}
	return nr < max_nr ? nr : max_nr;
}

/* mprotect_folio_pte_batch() (seed 001): the batch of a large folio, 1 otherwise */
static unsigned mprotect_folio_pte_batch(struct prot_op *op, const struct folio *folio, uint64_t ptep,
					 uint64_t pte, unsigned max_nr_ptes, unsigned flags)
{
	if (!folio || !folio->order || max_nr_ptes == 1)
		return 1;
	/* baseline: before the series every PTE is visited on its own */
	if (mm_variant(op->mm, MMV_MPROTECT_NO_BATCH))
		return 1;
	uint64_t folio_end = folio->pa + (PAGE_SIZE << folio->order);
	/* bug zoo: the batch runs to the end of the PTE table, past `end` and the folio */
	if (mm_variant(op->mm, MMV_MPROTECT_BATCH_OVERRUN)) {
		max_nr_ptes = PTRS_PER_PTE - (unsigned)((ptep >> 3) & (PTRS_PER_PTE - 1));
		folio_end = UINT64_MAX;
		folio = NULL;
	}
	return folio_pte_batch(op, folio, folio_end, ptep, pte, max_nr_ptes, flags);
}

/*
 * prot_numa_skip_ptes() (seed 001): whether the scan leaves the PTEs from ptep
 * alone, and how many (*nr_ptes).  A PTE already PROT_NONE is skipped on its
 * own (no TLB flush needed); a folio not worth a hint is skipped as one batch.
 * A folio to hint is not skipped, on either path: the review of the seed
 * (Ryan Roberts) caught v4 falling into the skip batch when the access-time
 * path was not taken, and the access-time path answering 0.
 */
static bool prot_numa_skip_ptes(struct prot_op *op, const struct folio *folio, uint64_t ptep, uint64_t oldpte,
				unsigned max_nr_ptes, unsigned *nr_ptes)
{
	*nr_ptes = 1;
	/* avoid a TLB flush if possible */
	if (!pte_valid(oldpte) && (oldpte & PT_DESC_PROTNONE))
		return true;
	switch (folio_can_map_prot_numa(op, folio)) {
	case NUMA_SKIP:
		*nr_ptes = mprotect_folio_pte_batch(op, folio, ptep, oldpte, max_nr_ptes, 0);
		return true;
	case NUMA_HINT_ACCESS_TIME:
		/* bug zoo: the access-time path's 0 taken as the number of PTEs done (the loop
		 * re-reads the same PTE, decides the same, forever) */
		if (mm_variant(op->mm, MMV_MPROTECT_NUMA_ZERO_STEP)) {
			*nr_ptes = 0;
			return true;
		}
		return false;
	case NUMA_HINT:
		return false;
	}
	return false;
}

/* ---- the PTE level ---- */

/* pte_modify() with MM_CP_TRY_CHANGE_WRITABLE: the new permissions, the page and its dirtiness kept */
static uint64_t pte_modify(uint64_t oldpte, unsigned prot)
{
	bool dirty = (oldpte & PT_DESC_DIRTY) || ((oldpte & PT_DESC_DBM) && !(oldpte & PT_DESC_RDONLY));
	uint64_t pte = mk_user_pte(desc_pa(oldpte), prot);
	if (dirty)
		pte |= PT_DESC_DIRTY;
	return pte;
}

/*
 * change_present_ptes() (mm/mprotect.c): the batch is cleared as one
 * (modify_prot_start_ptes(): on arm64 get_and_clear_full_ptes(), which unfolds
 * only a contpte block the batch covers in part, collecting dirty/young) and
 * rewritten as one (modify_prot_commit_ptes(): set_ptes(), which refolds the
 * whole blocks).  The old translations may stay in TLBs until the gather's
 * flush at the end of the VMA: only permissions change, the pages stay.
 */
static void change_present_ptes(struct prot_op *op, uint64_t addr, uint64_t ptep, unsigned nr_ptes)
{
	uint64_t oldpte = modify_prot_start_ptes(op->mm, op->t, op->s, addr, ptep, nr_ptes);
	uint64_t ptent = pte_modify(oldpte, op->prot);
	modify_prot_commit_ptes(op->mm, op->t, op->s, addr, ptep, oldpte, ptent, nr_ptes);
	tlb_flush_pte_range(op->tlb, addr, (uint64_t)nr_ptes * PAGE_SIZE);
}

/*
 * pte_offset_map_lock() (mm/pgtable-generic.c, __pte_offset_map_lock()): the PTE table
 * under pmdp with its PTL held, or 0 if the PMD is not a table now (none, or a THP: a
 * racing fault or split).  The PMD is read locklessly, then rechecked under the PTL; if it
 * changed meanwhile the lock is dropped and it is read again.
 */
static uint64_t pte_offset_map_lock(struct mm_model *mm, struct mm_thread *t, uint64_t pmdp)
{
	for (bool retry = false; !retry || mm_step(mm, t); retry = true) {
		uint64_t pmd = mm_read(mm, t, pmdp);	/* pmdp_get_lockless() */
		if (!pte_valid(pmd) || !pmd_table(pmd))
			return 0;
		uint64_t table = desc_pa(pmd);
		mm_lock(mm, t, PT_LOCK_PTL, table, true);
		if (mm_read(mm, t, pmdp) == pmd)	/* pmd_same() */
			return table;
		mm_unlock(mm, t, PT_LOCK_PTL, table);
	}
	return 0;
}

/* change_pte_range(): the PTEs of [addr, end) under one PMD; EAGAIN if the PMD is no
 * longer a PTE table, for change_pmd_range() to look at it again (the model's errno values
 * are positive, mm.h; the kernel's -EAGAIN) */
static int change_pte_range(struct prot_op *op, uint64_t pmdp, uint64_t addr, uint64_t end)
{
	struct mm_model *mm = op->mm;
	struct mm_thread *t = op->t;
	const char *prev = mm_site(mm, t, "change_pte_range");
	int ret = 0;

	uint64_t table = pte_offset_map_lock(mm, t, pmdp);
	if (!table) {
		ret = EAGAIN;
		goto out;
	}
	arch_enter_lazy_mmu_mode(mm, t);
	uint64_t ptep = pt_entry_pa(table, 3, addr);
	unsigned nr_ptes;
	do {
		if (!mm_step(mm, t))
			break;
		nr_ptes = 1;
		uint64_t oldpte = ptep_get(mm, t, ptep);
		if (!pte_present(oldpte))
			continue;	/* none: nothing to protect; swap entries are not modelled */
		unsigned max_nr_ptes = (unsigned)((end - addr) >> PAGE_SHIFT);
		struct folio f;
		const struct folio *folio = vm_normal_folio(mm, desc_pa(oldpte), &f) ? &f : NULL;
		/* the scan does not trap faults on folios it would not migrate (batch-skipped) */
		if (op->prot_numa && prot_numa_skip_ptes(op, folio, ptep, oldpte, max_nr_ptes, &nr_ptes))
			continue;
		nr_ptes = mprotect_folio_pte_batch(op, folio, ptep, oldpte, max_nr_ptes,
						   FPB_RESPECT_SOFT_DIRTY | FPB_RESPECT_WRITE);
		change_present_ptes(op, addr, ptep, nr_ptes);
		op->pages += nr_ptes;
		/* the kernel's loop ends at addr == end; `<` keeps a batch that overran end (the bug
		 * zoo) from walking off the table */
	} while (ptep += 8ull * nr_ptes, addr += (uint64_t)nr_ptes * PAGE_SIZE, addr < end);
	arch_leave_lazy_mmu_mode(mm, t);
	mm_unlock(mm, t, PT_LOCK_PTL, table);
out:
	mm_site(mm, t, prev);
	return ret;
}

/* ---- the upper levels ---- */

/* pmdp_invalidate_ad() (mm/pgtable-generic.c): break the block and flush it before it is rewritten */
static uint64_t pmdp_invalidate_ad(struct prot_op *op, uint64_t pmdp, uint64_t haddr)
{
	/* pmdp_establish(): an xchg with pmd_mkinvalid(), invalid for the walker, still present
	 * for the kernel */
	uint64_t old = mm_read(op->mm, op->t, pmdp);
	mm_write(op->mm, op->t, pmdp, (old & ~PT_DESC_VALID) | PT_DESC_PROTNONE);
	/* flush_pmd_tlb_range(): stride PMD_SIZE, TTL 2 */
	__flush_tlb_range(op->mm, op->t, op->s, haddr, haddr + PMD_SIZE, PMD_SIZE, /*last_level=*/false, 2);
	return old;
}

/*
 * change_huge_pmd() (mm/huge_memory.c): a THP mapped by one PMD block and covered
 * whole.  Under pmd_lock the block is invalidated and flushed
 * (pmdp_invalidate_ad(): the scan runs under mmap_lock for read, so the entry must
 * never be seen none by a racing MADV_DONTNEED), then rewritten with the new
 * permissions.  Returns the pages changed, 0 if the PMD is no longer huge.
 */
static uint64_t change_huge_pmd(struct prot_op *op, uint64_t pmdp, uint64_t addr)
{
	struct mm_model *mm = op->mm;
	struct mm_thread *t = op->t;
	uint64_t ptl = pmdp & PAGE_MASK, ret = 0;

	mm_lock(mm, t, PT_LOCK_PMD, ptl, true);
	uint64_t pmd = mm_read(mm, t, pmdp);
	if (!pmd_trans_huge(pmd))
		goto unlock;
	ret = PTRS_PER_PTE;
	if (op->prot_numa) {
		struct folio f;
		/* already a hint; or not worth one */
		if (!pte_valid(pmd) || folio_can_map_prot_numa(op, vm_normal_folio(mm, desc_pa(pmd), &f) ? &f : NULL) ==
						       NUMA_SKIP)
			goto unlock;
	}
	uint64_t oldpmd = pmdp_invalidate_ad(op, pmdp, addr);
	uint64_t entry = pte_modify(oldpmd, op->prot) & ~PT_DESC_TABLE;	/* pmd_modify(): a block */
	mm_write(mm, t, pmdp, entry);					/* set_pmd_at() */
	tlb_flush_pmd_range(op->tlb, addr, PMD_SIZE);
	op->pages += PTRS_PER_PTE;
unlock:
	mm_unlock(mm, t, PT_LOCK_PMD, ptl);
	return ret;
}

static void change_pmd_range(struct prot_op *op, uint64_t pudp, uint64_t addr, uint64_t end)
{
	struct mm_model *mm = op->mm;
	struct mm_thread *t = op->t;
	uint64_t pmdp = pt_entry_pa(desc_pa(mm_read(mm, t, pudp)), 2, addr), next;
	do {
again:
		if (!mm_step(mm, t))
			break;
		next = pmd_addr_end(addr, end);
		uint64_t pmd = mm_read(mm, t, pmdp);	/* pmdp_get_lockless() */
		if (pte_none(pmd))
			continue;
		if (pmd_trans_huge(pmd)) {
			/* a THP covered in part is split into PTEs first */
			if (next - addr != PMD_SIZE) {
				split_huge_pmd(mm, t, op->s, pmdp, addr);
			} else if (change_huge_pmd(op, pmdp, addr)) {
				continue;	/* the huge PMD was handled */
			}
			/* fall through: the THP was just split */
		}
		/* the PMD changed under us (zapped, refaulted as a THP, split): look at it again,
		 * as the kernel does, rather than leave its PTEs unprotected */
		if (change_pte_range(op, pmdp, addr, next) == EAGAIN && !t->hung)
			goto again;
	} while (pmdp += 8, addr = next, addr != end);
}

/* change_pud_range(): user PUD leaves are hugetlb only (not here) */
static void change_pud_range(struct prot_op *op, uint64_t pgdp, uint64_t addr, uint64_t end)
{
	struct mm_model *mm = op->mm;
	struct mm_thread *t = op->t;
	uint64_t pudp = pt_entry_pa(desc_pa(mm_read(mm, t, pgdp)), 1, addr), next;
	do {
		if (!mm_step(mm, t))
			break;
		next = pud_addr_end(addr, end);
		uint64_t pud = mm_read(mm, t, pudp);
		if (!pte_valid(pud) || !pmd_table(pud))
			continue;
		change_pmd_range(op, pudp, addr, next);
	} while (pudp += 8, addr = next, addr != end);
}

/* change_protection_range() (p4d folded into the pgd) */
static void change_protection_range(struct prot_op *op, uint64_t addr, uint64_t end)
{
	struct mm_model *mm = op->mm;
	struct mm_thread *t = op->t;
	uint64_t pgdp = mm_pgd_entry(op->s, addr), next;
	do {
		if (!mm_step(mm, t))
			break;
		next = pgd_addr_end(addr, end);
		uint64_t pgd = mm_read(mm, t, pgdp);
		if (!pte_valid(pgd) || !pmd_table(pgd))
			continue;	/* pgd_none_or_clear_bad() */
		change_pud_range(op, pgdp, addr, next);
	} while (pgdp += 8, addr = next, addr != end);
	tlb_end_vma(mm, t, op->tlb);
}

/* change_protection(): MM_CP_PROT_NUMA makes the new protection PAGE_NONE; the NUMA scan hints
 * for target_node, the node it runs on when it starts */
static uint64_t change_protection(struct mm_model *mm, struct mm_thread *t, struct mm_space *s,
				  struct mmu_gather *tlb, uint64_t start, uint64_t end, unsigned prot, bool prot_numa,
				  unsigned target_node)
{
	const char *prev = mm_site(mm, t, prot_numa ? "change_prot_numa" : "change_protection");
	struct prot_op op = {
		.mm = mm, .t = t, .s = s, .tlb = tlb,
		.prot = prot_numa ? 0 : prot,
		.prot_numa = prot_numa,
		.target_node = target_node,
	};
	change_protection_range(&op, start, end);
	mm_site(mm, t, prev);
	return op.pages;
}

/* ---- the reference ---- */

/* mprotect(): the pages of the range keep their place and get the new permissions (ref_prot():
 * PROT_NONE is a present, inaccessible page, like a NUMA hint) */
static void mprotect_reference(struct mm_space *s, uint64_t start, uint64_t end, unsigned prot)
{
	ref_protect(s, start, end, prot);
}

/* The scan: each mapped page whose folio is worth a hint for the node the scan ran for becomes a
 * NUMA hint, page by page (independently of the batches the routine takes). */
static void numa_scan_reference(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start,
				uint64_t end, unsigned target_node)
{
	struct prot_op op = { .mm = mm, .t = t, .s = s, .prot_numa = true, .target_node = target_node };
	for (uint64_t va = start; va < end; va += PAGE_SIZE) {
		uint64_t r = ref_get(s, va);
		if (!(r & REF_PRESENT) || (r & REF_NUMA))
			continue;
		struct folio f;
		if (folio_can_map_prot_numa(&op, vm_normal_folio(mm, r & PT_DESC_OA_MASK, &f) ? &f : NULL) != NUMA_SKIP)
			ref_set(s, va, r & PT_DESC_OA_MASK, (r & ~PT_DESC_OA_MASK) | REF_NUMA);
	}
}

/* ---- the syscall and the scan ---- */

/*
 * mprotect_fixup(): split the VMA to the range, give it the new protection, merge it with a
 * neighbour it no longer differs from (vma_modify_flags() -> vma_merge_existing_range(): an
 * mprotect of one page and back leaves one VMA again), change the range's PTEs.
 */
static void mprotect_fixup(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, struct mmu_gather *tlb,
			   uint64_t start, uint64_t end, unsigned prot)
{
	struct mm_vma *vma = find_vma(s, start);
	if (vma->prot == prot)
		return;
	vma_split_range(s, start, end);
	vma = find_vma(s, start);
	vma->prot = (uint8_t)prot;
	vma_merge_range(s, start, end);
	change_protection(mm, t, s, tlb, start, end, prot, /*prot_numa=*/false, numa_node_id(mm, t));
	mprotect_reference(s, start, end, prot);
}

/* do_mprotect_pkey(): VMA by VMA up to a hole (ENOMEM, with the VMAs before it changed) */
static int do_mprotect_pkey(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start,
			    uint64_t end, unsigned prot)
{
	struct mmu_gather tlb;
	int error = 0;
	uint64_t nstart = start;

	mm_lock(mm, t, PT_LOCK_MMAP, s->asid, true);
	tlb_gather_mmu(&tlb, s);
	while (nstart < end) {
		struct mm_vma *vma = find_vma(s, nstart);
		if (!vma) {
			error = ENOMEM;
			break;
		}
		if (vma->flags & MM_VMA_HUGETLB) {
			error = EOPNOTSUPP;	/* hugetlb_change_protection(): not modelled */
			break;
		}
		uint64_t tmp = vma->end < end ? vma->end : end;
		mprotect_fixup(mm, t, s, &tlb, nstart, tmp, prot);
		if (t->hung)
			break;
		nstart = tmp;
	}
	tlb_finish_mmu(mm, t, &tlb);
	mm_unlock(mm, t, PT_LOCK_MMAP, s->asid);
	/* what was changed must be what the call means, up to the hole */
	if (nstart > start && !t->hung)
		ref_check(mm, t, s, start, ALIGN_UP(nstart, PMD_SIZE), "mprotect");
	return error;
}

/*
 * task_numa_work() -> change_prot_numa(): the scan of [start, end), under
 * mmap_lock for read, over the VMAs it meets (holes are passed by), skipping
 * inaccessible and hugetlb VMAs; each VMA is gathered and flushed on its own.
 */
static int task_numa_work(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start, uint64_t end)
{
	mm_lock(mm, t, PT_LOCK_MMAP, s->asid, false);
	for (uint32_t i = 0; i < s->nvma && !t->hung; i++) {
		const struct mm_vma *vma = &s->vma[i];
		if (vma->end <= start || vma->start >= end)
			continue;
		if ((vma->flags & MM_VMA_HUGETLB) || !(vma->prot & (PT_PROT_READ | PT_PROT_WRITE | PT_PROT_EXEC)))
			continue;
		uint64_t a = vma->start > start ? vma->start : start, b = vma->end < end ? vma->end : end;
		/* the node is read as the scan starts: the thread may migrate before the reference
		 * (kernel: change_pte_range() reads numa_node_id() once for its table) */
		unsigned nid = numa_node_id(mm, t);
		struct mmu_gather tlb;
		tlb_gather_mmu(&tlb, s);
		change_protection(mm, t, s, &tlb, a, b, 0, /*prot_numa=*/true, nid);
		tlb_finish_mmu(mm, t, &tlb);
		numa_scan_reference(mm, t, s, a, b, nid);
		if (!t->hung)
			ref_check(mm, t, s, a, b, "mprotect(numa)");
	}
	mm_unlock(mm, t, PT_LOCK_MMAP, s->asid);
	/* nothing past the range changed (a batch bounded by end) */
	if (!t->hung)
		ref_check(mm, t, s, end, ALIGN_UP(end, PMD_SIZE), "mprotect(numa)");
	return 0;
}

int mm_do_mprotect(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	struct mm_space *s = t->op_space;	/* run_desc()'s mm_space_get(mm, t, ev->asid) */
	uint64_t start = ev->va, len = ALIGN_UP(ev->len, PAGE_SIZE);

	if (!IS_ALIGNED(start, PAGE_SIZE) || (ev->prot & ~(PT_PROT_READ | PT_PROT_WRITE | PT_PROT_EXEC)))
		return EINVAL;
	if (!len)
		return 0;
	uint64_t end = start + len;
	if (end <= start || end > TASK_SIZE)
		return ENOMEM;
	bool numa = ev->flags & PT_MPROT_NUMA;
	const char *prev = mm_site(mm, t, numa ? "task_numa_work" : "do_mprotect_pkey");
	int rc = numa ? task_numa_work(mm, t, s, start, end) : do_mprotect_pkey(mm, t, s, start, end, ev->prot);
	mm_site(mm, t, prev);
	return rc;
}
