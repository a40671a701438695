/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tlbflush.c - TLB maintenance (arch/arm64/include/asm/tlbflush.h): the
 * flush_tlb_*() family, the range operation (TLBI RVA* by scale and num, or
 * per-page VA* up to MAX_DVM_OPS), and the kernel page-table flush.
 */
#include "mm_internal.h"

#define MAX_DVM_OPS PTRS_PER_PTE
#define TLBI_RANGE_PAGES(num, scale) (((uint64_t)(num) + 1) << (5 * (scale) + 1))
#define MAX_TLBI_RANGE_PAGES TLBI_RANGE_PAGES(31, 3)

void flush_tlb_all(struct mm_model *mm, struct mm_thread *t)
{
	mm_dsb(mm, t, PT_BAR_ISHST);
	mm_tlbi(mm, t, PT_TLBI_VMALLE1IS, 0, 0, 0, 0, 0);
	mm_dsb(mm, t, PT_BAR_ISH);
	mm_isb(mm, t);
}

void flush_tlb_mm(struct mm_model *mm, struct mm_thread *t, struct mm_space *s)
{
	mm_dsb(mm, t, PT_BAR_ISHST);
	mm_tlbi(mm, t, PT_TLBI_ASIDE1IS, 0, s->asid, 0, 0, 0);
	mm_dsb(mm, t, PT_BAR_ISH);
}

void __flush_tlb_page_nosync(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t uaddr)
{
	mm_dsb(mm, t, PT_BAR_ISHST);
	mm_tlbi(mm, t, PT_TLBI_VALE1IS, uaddr & PAGE_MASK, s->asid, TLBI_TTL_UNKNOWN, 0, 0);
}

void flush_tlb_page(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t uaddr)
{
	__flush_tlb_page_nosync(mm, t, s, uaddr);
	mm_dsb(mm, t, PT_BAR_ISH);
}

static enum pt_tlbi range_op(enum pt_tlbi op)
{
	switch (op) {
	case PT_TLBI_VAE1IS: return PT_TLBI_RVAE1IS;
	case PT_TLBI_VALE1IS: return PT_TLBI_RVALE1IS;
	case PT_TLBI_VAAE1IS: return PT_TLBI_RVAAE1IS;
	case PT_TLBI_VAALE1IS: return PT_TLBI_RVAALE1IS;
	default: return op;
	}
}

void __flush_tlb_range_op(struct mm_model *mm, struct mm_thread *t, enum pt_tlbi op, uint64_t start,
			  uint64_t pages, uint64_t stride, uint16_t asid, unsigned tlb_level)
{
	int scale = 3;
	/* FEAT_TLBIRANGE: a range op for as many pages as NUM/SCALE can express, single ops
	 * for what is left (or when one page remains) */
	while (pages > 0) {
		if (pages == 1) {
			mm_tlbi(mm, t, op, start, asid, tlb_level, 0, 0);
			start += stride;
			pages -= stride >> PAGE_SHIFT;
			continue;
		}
		/* __TLBI_RANGE_NUM(pages, scale) */
		uint64_t cap = pages < TLBI_RANGE_PAGES(31, scale) ? pages : TLBI_RANGE_PAGES(31, scale);
		int64_t num = (int64_t)(cap >> (5 * scale + 1)) - 1;
		if (num >= 0) {
			mm_tlbi(mm, t, range_op(op), start, asid, tlb_level, (unsigned)num, (unsigned)scale);
			start += TLBI_RANGE_PAGES(num, scale) << PAGE_SHIFT;
			pages -= TLBI_RANGE_PAGES(num, scale);
		}
		scale--;
		if (scale < 0)
			scale = 3;
	}
}

static bool flush_range_limit_excess(uint64_t pages)
{
	return pages > MAX_TLBI_RANGE_PAGES;
}

void __flush_tlb_range_nosync(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start,
			      uint64_t end, uint64_t stride, bool last_level, unsigned tlb_level)
{
	start = ALIGN_DOWN(start, stride);
	end = ALIGN_UP(end, stride);
	uint64_t pages = (end - start) >> PAGE_SHIFT;
	if (flush_range_limit_excess(pages)) {
		flush_tlb_mm(mm, t, s);
		return;
	}
	mm_dsb(mm, t, PT_BAR_ISHST);
	__flush_tlb_range_op(mm, t, last_level ? PT_TLBI_VALE1IS : PT_TLBI_VAE1IS, start, pages, stride, s->asid,
			     tlb_level);
}

void __flush_tlb_range(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start, uint64_t end,
		       uint64_t stride, bool last_level, unsigned tlb_level)
{
	__flush_tlb_range_nosync(mm, t, s, start, end, stride, last_level, tlb_level);
	mm_dsb(mm, t, PT_BAR_ISH);
}

void flush_tlb_range(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start, uint64_t end)
{
	/* we could be removing tables (mremap, THP collapse): not last level only */
	__flush_tlb_range(mm, t, s, start, end, PAGE_SIZE, false, TLBI_TTL_UNKNOWN);
}

void flush_tlb_kernel_range(struct mm_model *mm, struct mm_thread *t, uint64_t start, uint64_t end)
{
	uint64_t pages = (ALIGN_UP(end, PAGE_SIZE) - ALIGN_DOWN(start, PAGE_SIZE)) >> PAGE_SHIFT;
	if (flush_range_limit_excess(pages)) {
		flush_tlb_all(mm, t);
		return;
	}
	mm_dsb(mm, t, PT_BAR_ISHST);
	__flush_tlb_range_op(mm, t, PT_TLBI_VAALE1IS, ALIGN_DOWN(start, PAGE_SIZE), pages, PAGE_SIZE, 0,
			     TLBI_TTL_UNKNOWN);
	mm_dsb(mm, t, PT_BAR_ISH);
	mm_isb(mm, t);
}

void __flush_tlb_kernel_pgtable(struct mm_model *mm, struct mm_thread *t, uint64_t kaddr)
{
	mm_dsb(mm, t, PT_BAR_ISHST);
	mm_tlbi(mm, t, PT_TLBI_VAAE1IS, kaddr & PAGE_MASK, 0, 0, 0, 0);
	mm_dsb(mm, t, PT_BAR_ISH);
	/* the ISB after walk-cache invalidation: kernel commit 51696d346c49 */
	if (!mm_variant(mm, MMV_KERNEL_PGTABLE_FLUSH_NO_ISB))
		mm_isb(mm, t);
}
