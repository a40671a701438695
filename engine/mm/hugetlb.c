/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hugetlb.c - the `hugetlb` op: mm/hugetlb.c's routines over the arm64
 * helpers of engine/arm64/hugetlbpage.c.  `hugetlb set|clear|wrprotect|access_flags
 * va= len=<64K|2M|32M|1G> [pa=] [prot=] [asid=]`, for a user address space, or
 * for init_mm when va is a kernel address (inside the vmalloc range, where
 * seed 000 #09 uses set_huge_pte_at() for huge vmap).  What each op means (the
 * reference): set maps [va, va+len) to [pa, pa+len) (a fresh huge page when pa
 * is not given), clear unmaps it, wrprotect makes it read-only, access_flags
 * sets young (and, for prot with w, dirty + writable again).
 *
 * Simplifications: the callers are reduced to their page-table steps — set is
 * hugetlb_no_page() (a missing hugetlb VMA is created, as by an mmap of
 * hugetlbfs), clear is the unmap (huge_ptep_get_and_clear() per huge page, then
 * the mmu_gather flush, whose stride and level for a huge page are those of
 * __flush_hugetlb_tlb_range(), then the page is freed), wrprotect is fork's
 * copy_hugetlb_page_range() for the parent (then dup_mmap()'s flush_tlb_mm()),
 * access_flags is hugetlb_fault() on a present entry (set_huge_ptep_writable()
 * for a write).  No reservations, no PMD sharing, no page_table_check, no
 * hugetlb_fault_mutex; prot=none is taken as rw (the key cannot tell it from
 * absent).  init_mm has no hugetlb callers in the kernel: for a kernel va the
 * op runs the same helpers on init_mm (the kernel flush after the op comes
 * from flush_tlb_kernel_range()), and the range is recorded as a kernel VMA so
 * that vmalloc does not reuse it.
 */
#include "hugetlb.h"
#include "tlb.h"

/* huge_pte_lock(): the exact page-table lock core-mm walkers take for that table
 * (include/linux/hugetlb.h huge_pte_lockptr(), 2024): the PTE table's below PMD_SIZE,
 * the PMD table's split lock below PUD_SIZE, page_table_lock for PUDs.  init_mm: none
 * (kernel tables belong to whoever owns the VA range). */
struct huge_ptl {
	enum pt_lock_class cls;
	uint64_t key;
	bool taken;
};

static struct huge_ptl huge_pte_lock(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t ptep,
				     uint64_t sz)
{
	struct huge_ptl l = { PT_LOCK_PTL, ptep & PAGE_MASK, !s->kernel };
	if (sz >= PUD_SIZE)
		l.cls = PT_LOCK_PUD, l.key = s->asid;
	else if (sz >= PMD_SIZE)
		l.cls = PT_LOCK_PMD;
	if (l.taken)
		mm_lock(mm, t, l.cls, l.key, true);
	return l;
}

static void huge_pte_unlock(struct mm_model *mm, struct mm_thread *t, struct huge_ptl l)
{
	if (l.taken)
		mm_unlock(mm, t, l.cls, l.key);
}


struct huge_op {
	struct mm_model *mm;
	struct mm_thread *t;
	struct mm_space *s;
	uint64_t va, sz;
	unsigned order;		/* of the huge page */
	unsigned prot;		/* PT_PROT_* of the event (0: rw) */
};

/* what the mapping means, per 4K page */
static uint64_t huge_ref_flags(const struct huge_op *op, unsigned prot)
{
	uint64_t f = REF_PRESENT | REF_READ;
	if (prot & PT_PROT_WRITE)
		f |= REF_WRITE;
	if (prot & PT_PROT_EXEC)
		f |= REF_EXEC;
	(void)op;
	return f;
}

static void huge_ref_set(const struct huge_op *op, uint64_t pa, unsigned prot)
{
	ref_set_run(op->s, op->va, (op->sz + PAGE_SIZE - 1) >> PAGE_SHIFT, pa, huge_ref_flags(op, prot));
}

/* the huge pte for pa: a user page (mk_huge_pte + make_huge_pte) or a kernel one */
static uint64_t mk_huge_pte(const struct huge_op *op, uint64_t pa)
{
	uint64_t pte = op->s->kernel ? pa | pgprot_kernel(op->prot) : mk_user_pte(pa, op->prot);
	return arch_make_huge_pte(pte, op->order + PAGE_SHIFT);
}

/* the mmap_lock a user op holds (init_mm: none) */
static void op_lock(const struct huge_op *op, bool write)
{
	if (!op->s->kernel)
		mm_lock(op->mm, op->t, PT_LOCK_MMAP, op->s->asid, write);
}

static void op_unlock(const struct huge_op *op)
{
	if (!op->s->kernel)
		mm_unlock(op->mm, op->t, PT_LOCK_MMAP, op->s->asid);
}

/* the hugetlb VMA of exactly [va, va + sz), or NULL */
static struct mm_vma *huge_vma(const struct huge_op *op)
{
	struct mm_vma *v = find_vma(op->s, op->va);
	if (!v || !(v->flags & MM_VMA_HUGETLB) || v->start != op->va || v->end != op->va + op->sz)
		return NULL;
	return v;
}

/* hugetlb_no_page(): map a huge page at va (creating the hugetlb VMA first if there is none) */
static int hugetlb_set(struct huge_op *op, uint64_t pa)
{
	struct mm_model *mm = op->mm;
	struct mm_thread *t = op->t;
	uint64_t pgsize;
	unsigned ncontig = num_contig_ptes(op->sz, &pgsize);
	int rc = 0;

	if (pa && !IS_ALIGNED(pa, op->sz))
		return EINVAL;
	if (!mm_capacity_ok(mm, mm_map_units(op->sz, PMD_SIZE)))
		return ENOMEM;	/* the model's memory is full (MM_CAPACITY) */
	op_lock(op, /*write=*/true);
	struct mm_vma *v = huge_vma(op);
	bool created = false;
	if (!v) {
		if (!range_is_free(op->s, op->va, op->va + op->sz)) {
			op_unlock(op);
			return EINVAL;	/* another mapping is there (the model does not split VMAs) */
		}
		v = vma_insert(op->s, op->va, op->va + op->sz, op->prot, op->order, MM_VMA_HUGETLB,
			       mm->next_anon_id++);
		created = true;
	}
	if (v->prot != op->prot)
		op->prot = v->prot;	/* the VMA's protection is what the fault maps */
	uint64_t ptep = huge_pte_alloc(mm, t, op->s, op->va, op->sz);
	/* a table where the block goes: the kernel never gets here (free_pgtables() removed it,
	 * or the VA range of a huge vmap had none); the model does not replace it */
	for (unsigned i = 0; ptep && pgsize >= PMD_SIZE && i < ncontig; i++)
		if (pmd_table(__ptep_get(mm, t, ptep + 8ull * i)))
			ptep = 0;
	if (!ptep) {
		if (created)
			vma_remove_range(op->s, op->va, op->va + op->sz);
		op_unlock(op);
		return EINVAL;
	}
	uint64_t old = __ptep_get(mm, t, ptep);
	bool owned = v->flags & MM_VMA_HUGETLB_OWNED;
	if (!pa && pte_valid(old)) {
		pa = desc_pa(old);	/* map the page that is there again */
	} else if (!pa) {
		/* alloc_hugetlb_folio(), zeroed and marked uptodate (smp_wmb) before it is mapped */
		pa = mm_alloc_pages(mm, t, op->order, 0);
		mm_dmb(mm, t, PT_BAR_ISHST);
		owned = true;
	} else {
		owned = false;	/* the caller's page (a page we allocated before is left to it) */
	}
	v = huge_vma(op);	/* the VMA array may have moved while we allocated */
	if (!v) {
		op_unlock(op);
		return EINVAL;	/* a concurrent clear of a kernel range took it */
	}
	v->flags = (v->flags & ~MM_VMA_HUGETLB_OWNED) | (owned ? MM_VMA_HUGETLB_OWNED : 0);

	struct huge_ptl l = huge_pte_lock(mm, t, op->s, ptep, op->sz);
	set_huge_pte_at(mm, t, op->s, op->va, ptep, mk_huge_pte(op, pa), op->sz);
	huge_pte_unlock(mm, t, l);
	op_unlock(op);
	huge_ref_set(op, pa, op->prot);
	return rc;
}

/* the unmap of one huge page: clear, flush (the mmu_gather), free the page */
static int hugetlb_clear(struct huge_op *op)
{
	struct mm_model *mm = op->mm;
	struct mm_thread *t = op->t;

	op_lock(op, /*write=*/true);
	struct mm_vma *v = huge_vma(op);
	if (!v) {
		op_unlock(op);
		return EINVAL;
	}
	bool owned = v->flags & MM_VMA_HUGETLB_OWNED;
	uint64_t ptep = huge_pte_offset(mm, t, op->s, op->va, op->sz), old = 0;
	if (ptep) {
		struct huge_ptl l = huge_pte_lock(mm, t, op->s, ptep, op->sz);
		old = huge_ptep_get_and_clear(mm, t, op->s, op->va, ptep, op->sz);
		huge_pte_unlock(mm, t, l);
	}
	if (pte_present(old)) {
		/* tlb_remove_huge_tlb_entry() + tlb_finish_mmu(): for init_mm the kernel flush */
		if (op->s->kernel)
			flush_tlb_kernel_range(mm, t, op->va, op->va + op->sz);
		else
			__flush_hugetlb_tlb_range(mm, t, op->s, op->va, op->va + op->sz, op->sz, /*last_level=*/true);
		if (owned)
			mm_free_pages(mm, t, desc_pa(old), op->order);
	}
	vma_remove_range(op->s, op->va, op->va + op->sz);
	if (!op->s->kernel) {
		/* the unmap's free_pgtables() (hugetlb_free_pgd_range()), as after any munmap: the
		 * range's tables go if no VMA is left in theirs, flushed by tlb_finish_mmu().  Without
		 * it a table no VMA covered stayed hooked, and a later unmap that freed the table
		 * above it flushed only its own range (I3 stale walk on the default model, found by
		 * fuzzing: corpus/mm/regressions/fuzz-hugetlb-clear-frees-its-tables.good.ptt) */
		struct vma_range r = { op->va, op->va + op->sz, MM_VMA_HUGETLB, op->order };
		uint64_t floor, ceiling;
		pgtables_floor_ceiling(op->s, r.start, r.end, &floor, &ceiling);
		struct mmu_gather tlb;
		tlb_gather_mmu(&tlb, op->s);
		free_pgtables(mm, t, &tlb, &r, 1, floor, ceiling);
		tlb_finish_mmu(mm, t, &tlb);
	}
	op_unlock(op);
	ref_clear_range(op->s, op->va, op->va + op->sz);
	return 0;
}

/* fork's copy_hugetlb_page_range() for the parent's entry, then dup_mmap()'s flush_tlb_mm() */
static int hugetlb_wrprotect(struct huge_op *op)
{
	struct mm_model *mm = op->mm;
	struct mm_thread *t = op->t;

	op_lock(op, /*write=*/true);
	struct mm_vma *v = huge_vma(op);
	if (!v) {
		op_unlock(op);
		return EINVAL;
	}
	unsigned vprot = v->prot;	/* v may move at the next scheduling point */
	uint64_t ptep = huge_pte_offset(mm, t, op->s, op->va, op->sz);
	if (ptep && pte_present(__ptep_get(mm, t, ptep))) {
		struct huge_ptl l = huge_pte_lock(mm, t, op->s, ptep, op->sz);
		huge_ptep_set_wrprotect(mm, t, op->s, op->va, ptep);
		huge_pte_unlock(mm, t, l);
		if (op->s->kernel)
			flush_tlb_kernel_range(mm, t, op->va, op->va + op->sz);
		else
			flush_tlb_mm(mm, t, op->s);
		uint64_t pa = desc_pa(__ptep_get(mm, t, ptep));
		huge_ref_set(op, pa, vprot & ~PT_PROT_WRITE);
	}
	op_unlock(op);
	return 0;
}

/* hugetlb_fault() on a present entry: young; for a write (prot with w) the CoW reuse of an
 * exclusive page, set_huge_ptep_writable(): writable and dirty again */
static int hugetlb_access_flags(struct huge_op *op, unsigned prot)
{
	struct mm_model *mm = op->mm;
	struct mm_thread *t = op->t;
	bool write = prot & PT_PROT_WRITE;
	int rc = 0;

	op_lock(op, /*write=*/false);
	struct mm_vma *v = huge_vma(op);
	if (!v || (write && !(v->prot & PT_PROT_WRITE))) {
		op_unlock(op);
		return EFAULT;	/* SIGSEGV */
	}
	unsigned vprot = v->prot;	/* v may move at the next scheduling point */
	uint64_t ptep = huge_pte_offset(mm, t, op->s, op->va, op->sz);
	if (ptep && pte_present(__ptep_get(mm, t, ptep))) {
		struct huge_ptl l = huge_pte_lock(mm, t, op->s, ptep, op->sz);
		uint64_t entry = pte_mkyoung(huge_ptep_get(mm, t, op->s, op->va, ptep));
		if (write)
			entry = pte_mkwrite(pte_mkdirty(entry));
		huge_ptep_set_access_flags(mm, t, op->s, op->va, ptep, entry, write, op->sz);
		huge_pte_unlock(mm, t, l);
		if (write)
			huge_ref_set(op, desc_pa(entry), vprot);
	}
	op_unlock(op);
	return rc;
}

int mm_do_hugetlb(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	uint64_t pgsize;
	bool kernel = ev->va >= PAGE_OFFSET;
	if (!num_contig_ptes(ev->len, &pgsize) || !IS_ALIGNED(ev->va, ev->len) || ev->va + ev->len < ev->va)
		return EINVAL;
	if (kernel ? ev->va < VMALLOC_START || ev->va + ev->len > VMALLOC_END : ev->va + ev->len > TASK_SIZE)
		return EINVAL;
	struct huge_op op = {
		.mm = mm, .t = t, .va = ev->va, .sz = ev->len,
		.s = kernel ? mm_kernel(mm, t) : t->op_space,
		.prot = ev->prot ? ev->prot : PT_PROT_READ | PT_PROT_WRITE,
	};
	while ((PAGE_SIZE << op.order) < op.sz)
		op.order++;
	static const char *const site[PT_HUGE_OP_COUNT] = {
		"hugetlb_no_page", "unmap_hugepage_range", "copy_hugetlb_page_range", "hugetlb_fault",
	};
	if (ev->op >= PT_HUGE_OP_COUNT)
		return EINVAL;
	const char *prev = mm_site(mm, t, site[ev->op]);
	int rc;
	switch (ev->op) {
	case PT_HUGE_SET: rc = hugetlb_set(&op, ev->pa); break;
	case PT_HUGE_CLEAR: rc = hugetlb_clear(&op); break;
	case PT_HUGE_WRPROTECT: rc = hugetlb_wrprotect(&op); break;
	default: rc = hugetlb_access_flags(&op, ev->prot); break;
	}
	if (!rc)
		ref_check(mm, t, op.s, op.va, op.va + op.sz, "hugetlb");
	mm_site(mm, t, prev);
	return rc;
}
