/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * madvise.c - madvise() (mm/madvise.c): MADV_DONTNEED/MADV_FREE zap the pages
 * and keep the VMA and its page tables (zap_page_range_single(), memory.c),
 * MADV_PAGEOUT reclaims them (madvise_pageout(), rmap.c), MADV_HUGEPAGE and
 * MADV_NOHUGEPAGE change the VMA flags.
 *
 * Simplifications: MADV_FREE is treated as MADV_DONTNEED (the kernel keeps
 * lazily-freed pages mapped until reclaim finds them clean); MADV_COLD changes
 * no page-table entry (the kernel also clears the access flags).
 */
#include <stdlib.h>

#include "mm_internal.h"

static void madvise_update_vma_flags(struct mm_space *s, uint64_t start, uint64_t end, uint32_t set,
				     uint32_t clear)
{
	/* vma_modify_flags(): the VMAs are split so that exactly the range changes */
	vma_split_range(s, start, end);
	for (uint32_t i = 0; i < s->nvma; i++)
		if (s->vma[i].start >= start && s->vma[i].end <= end)
			s->vma[i].flags = (s->vma[i].flags & ~clear) | set;
}

/*
 * vma_modify_flags() splits the VMA at the range's ends, and __split_vma() asks a hugetlb
 * VMA first (hugetlb_vm_op_split()): only at its huge page size, else -EINVAL.  (Without
 * the check a 4K madvise split a 64K hugetlb VMA, and a 4K munmap then passed the one in
 * do_munmap() and unmapped the whole huge page: I10 on the default model, found by fuzzing.)
 */
static bool hugetlb_split_ok(struct mm_space *s, const struct vma_range *r)
{
	if (!(r->flags & MM_VMA_HUGETLB))
		return true;
	const struct mm_vma *vma = find_vma(s, r->start);
	uint64_t sz = PAGE_SIZE << r->order;
	return (vma->start == r->start || IS_ALIGNED(r->start, sz)) && (vma->end == r->end || IS_ALIGNED(r->end, sz));
}

int mm_do_madvise(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	struct mm_space *s = t->op_space;	/* run_desc()'s mm_space_get(mm, t, ev->asid) */
	uint64_t start = ev->va;
	unsigned advice = ev->op;
	if (advice >= PT_ADV_COUNT || !IS_ALIGNED(start, PAGE_SIZE) || start > TASK_SIZE ||
	    ev->len > TASK_SIZE - start)
		return EINVAL;
	uint64_t end = start + ALIGN_UP(ev->len, PAGE_SIZE);
	if (end == start)
		return 0;
	/* madvise_need_mmap_write(): only the VMA-flag advices change the VMAs */
	bool write = advice == PT_ADV_HUGEPAGE || advice == PT_ADV_NOHUGEPAGE;
	const char *prev = mm_site(mm, t, "do_madvise");
	mm_lock(mm, t, PT_LOCK_MMAP, s->asid, write);
	/* madvise_walk_vmas(): the advice applies to the mapped parts; a hole gives ENOMEM */
	int rc = range_is_mapped(s, start, end) ? 0 : ENOMEM;
	struct vma_range room[VMA_RANGE_ROOM], *v;
	uint32_t n = vmas_in_range(s, start, end, room, &v);
	for (uint32_t i = 0; i < n; i++) {
		switch (advice) {
		case PT_ADV_DONTNEED:
		case PT_ADV_FREE:
			/* madvise_dontneed_free_valid_vma(): hugetlb takes DONTNEED from a huge page
			 * boundary (else EINVAL), rounds the end down to one ("avoid unexpected data
			 * loss") and does nothing if that leaves nothing; MADV_FREE not at all */
			if (v[i].flags & MM_VMA_HUGETLB) {
				uint64_t sz = PAGE_SIZE << v[i].order;
				if (advice == PT_ADV_FREE || !IS_ALIGNED(v[i].start, sz)) {
					rc = EINVAL;
					break;
				}
				v[i].end = ALIGN_DOWN(v[i].end, sz);
				if (v[i].end <= v[i].start) {
					v[i].end = v[i].start;
					break;
				}
			}
			zap_page_range_single(mm, t, s, &v[i]);
			break;
		case PT_ADV_PAGEOUT:
			/* can_madv_lru_vma(): not for hugetlb */
			if (!(v[i].flags & MM_VMA_HUGETLB))
				madvise_pageout(mm, t, s, v[i].start, v[i].end);
			break;
		case PT_ADV_COLD:
			break;
		case PT_ADV_HUGEPAGE:
		case PT_ADV_NOHUGEPAGE:
			if (!hugetlb_split_ok(s, &v[i])) {
				rc = EINVAL;
				break;
			}
			if (advice == PT_ADV_HUGEPAGE)
				madvise_update_vma_flags(s, v[i].start, v[i].end, MM_VMA_HUGEPAGE, MM_VMA_NOHUGEPAGE);
			else
				madvise_update_vma_flags(s, v[i].start, v[i].end, MM_VMA_NOHUGEPAGE, MM_VMA_HUGEPAGE);
			break;
		}
		if (rc == EINVAL) {
			n = i;	/* madvise_walk_vmas() stops at the VMA that refused (what came before it stays done) */
			break;
		}
	}
	mm_unlock(mm, t, PT_LOCK_MMAP, s->asid);
	mm_site(mm, t, prev);
	if (advice == PT_ADV_DONTNEED || advice == PT_ADV_FREE)
		ref_check_ranges(mm, t, s, v, n, start, end, "madvise");
	else if (advice == PT_ADV_PAGEOUT)
		for (uint32_t i = 0; i < n && ref_check(mm, t, s, v[i].start, v[i].end, "madvise"); i++)
			;
	room_free(v, room);
	return rc;
}
