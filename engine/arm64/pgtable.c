/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pgtable.c - the arm64 PTE/PMD/PUD setters and the lazy-MMU barrier batching
 * (arch/arm64/include/asm/pgtable.h), as patched by seed 000 (#06 hoisted
 * barriers, #11 lazy-MMU barrier batching in the form merged after Catalin
 * Marinas' review: queue_pte_barriers() emits at once in interrupt context,
 * and lazy mode is not entered there), and the descriptors the model makes
 * for user and kernel pages.
 */
#include "mm_internal.h"

void emit_pte_barriers(struct mm_model *mm, struct mm_thread *t)
{
	/* the dsb makes the store visible to the walker; the isb drops a speculative
	 * "invalid translation" marker (seed 000 #11) */
	mm_dsb(mm, t, PT_BAR_ISHST);
	mm_isb(mm, t);
}

bool pte_barriers_deferred(const struct mm_model *mm, const struct mm_thread *t)
{
	/* in interrupt context the interrupted thread may be in lazy mode: emit now
	 * (Catalin Marinas' counter-example on seed 000 #11) */
	if (t->irq_depth && !mm_variant(mm, MMV_LAZY_MMU_IRQ))
		return false;
	return t->lazy_mmu;
}

void queue_pte_barriers(struct mm_model *mm, struct mm_thread *t)
{
	if (pte_barriers_deferred(mm, t)) {
		t->lazy_pending = true;
		return;
	}
	emit_pte_barriers(mm, t);
}

void arch_enter_lazy_mmu_mode(struct mm_model *mm, struct mm_thread *t)
{
	if (mm_variant(mm, MMV_VMALLOC_NO_LAZY_MMU))
		return;		/* baseline: every kernel pte pays its own dsb + isb */
	if (t->irq_depth)
		return;
	t->lazy_mmu = true;
}

void arch_flush_lazy_mmu_mode(struct mm_model *mm, struct mm_thread *t)
{
	if (t->irq_depth)
		return;
	if (t->lazy_pending) {
		t->lazy_pending = false;
		if (!mm_variant(mm, MMV_LAZY_MMU_NO_FLUSH_ON_LEAVE))
			emit_pte_barriers(mm, t);
	}
}

void arch_leave_lazy_mmu_mode(struct mm_model *mm, struct mm_thread *t)
{
	if (t->irq_depth)
		return;
	arch_flush_lazy_mmu_mode(mm, t);
	t->lazy_mmu = false;
}

void __set_pte_nosync(struct mm_model *mm, struct mm_thread *t, uint64_t ptep, uint64_t pte)
{
	mm_write(mm, t, ptep, pte);
}

void __set_pte_complete(struct mm_model *mm, struct mm_thread *t, uint64_t pte)
{
	/* only valid kernel ptes: user ones get TLB maintenance or a retried fault */
	if (pte_valid_not_user(pte))
		queue_pte_barriers(mm, t);
}

void __set_pte(struct mm_model *mm, struct mm_thread *t, uint64_t ptep, uint64_t pte)
{
	__set_pte_nosync(mm, t, ptep, pte);
	__set_pte_complete(mm, t, pte);
}

void set_pmd(struct mm_model *mm, struct mm_thread *t, uint64_t pmdp, uint64_t pmd)
{
	mm_write(mm, t, pmdp, pmd);
	/* for pmd/pud the barriers are emitted for user mappings too (coarser granularity) */
	if (pte_valid(pmd))
		queue_pte_barriers(mm, t);
}

void set_pud(struct mm_model *mm, struct mm_thread *t, uint64_t pudp, uint64_t pud)
{
	set_pmd(mm, t, pudp, pud);
}

void set_pgd(struct mm_model *mm, struct mm_thread *t, uint64_t pgdp, uint64_t pgd)
{
	mm_write(mm, t, pgdp, pgd);
	queue_pte_barriers(mm, t);
}

void pmd_clear(struct mm_model *mm, struct mm_thread *t, uint64_t pmdp)
{
	set_pmd(mm, t, pmdp, 0);
}

void pud_clear(struct mm_model *mm, struct mm_thread *t, uint64_t pudp)
{
	set_pud(mm, t, pudp, 0);
}

uint64_t mk_user_pte(uint64_t pa, unsigned prot)
{
	uint64_t d = pa | PTE_TYPE_PAGE | PAGE_USER_BASE;
	if (!(prot & PT_PROT_EXEC))
		d |= PT_DESC_UXN;
	if (prot & PT_PROT_WRITE)
		d |= PT_DESC_DBM | PT_DESC_DIRTY;	/* writable, already dirty: no RDONLY */
	else
		d |= PT_DESC_RDONLY;
	if (!(prot & (PT_PROT_READ | PT_PROT_WRITE | PT_PROT_EXEC)))
		d = (d & ~PT_DESC_VALID) | PT_DESC_PROTNONE;	/* PAGE_NONE */
	return d;
}

uint64_t mk_user_pmd(uint64_t pa, unsigned prot)
{
	/* a block: bits[1:0] = 0b01 */
	return mk_user_pte(pa, prot) & ~PT_DESC_TABLE;
}

uint64_t mk_kernel_pte(uint64_t pa)
{
	return pa | PTE_TYPE_PAGE | PAGE_KERNEL;
}
