/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vma.c - the VMA tree of an address space (mm/vma.c, mm/mmap.c): lookup,
 * insert, split at range edges, merge of compatible neighbours, removal,
 * and whether a range is all mapped or all free.  Sorted array, binary
 * search: the model's mms hold a handful of VMAs.  And mmap (mm/mmap.c do_mmap
 * -> __mmap_region, with MAP_FIXED's unmap and MAP_POPULATE's faults), and munmap (mm/vma.c
 * do_vmi_munmap -> vms_clear_ptes, the kernel's unmap_region), which updates the
 * tree first, then zaps (memory.c) and frees the page tables into one mmu_gather.
 *
 * Simplification: munmap keeps mmap_lock for write to the end (the kernel
 * downgrades it to read before clearing the page tables when it can); the
 * PMD/PUD clears of free_pgtables() rely on the write lock in the I12 rule.
 */
#include <stdlib.h>
#include <string.h>

#include "tlb.h"

struct mm_vma *find_vma(struct mm_space *s, uint64_t addr)
{
	/* the VMAs are sorted and do not overlap: one that contains addr is the answer (a touch
	 * or a fault asks for the pages of one VMA in turn) */
	uint32_t h = s->vma_hint;
	if (h < s->nvma && s->vma[h].start <= addr && addr < s->vma[h].end)
		return &s->vma[h];
	uint32_t lo = vma_index_above(s, addr);
	if (lo < s->nvma && s->vma[lo].start <= addr) {
		s->vma_hint = lo;
		return &s->vma[lo];
	}
	return NULL;
}

static uint32_t vma_slot(struct mm_space *s, uint64_t addr)
{
	uint32_t i = 0;
	while (i < s->nvma && s->vma[i].start < addr)
		i++;
	return i;
}

static void vma_insert_at(struct mm_space *s, uint32_t i, const struct mm_vma *v)
{
	if (s->nvma == s->capvma) {
		s->capvma = s->capvma ? s->capvma * 2 : 8;
		s->vma = realloc(s->vma, s->capvma * sizeof(*s->vma));
		if (!s->vma)
			abort();
	}
	memmove(&s->vma[i + 1], &s->vma[i], (s->nvma - i) * sizeof(*s->vma));
	s->vma[i] = *v;
	s->nvma++;
}

struct mm_vma *vma_insert(struct mm_space *s, uint64_t start, uint64_t end, unsigned prot, unsigned order,
			  uint32_t flags, uint64_t anon_id)
{
	struct mm_vma v = { start, end, (uint8_t)prot, (uint8_t)order, flags, anon_id };
	uint32_t i = vma_slot(s, start);
	vma_insert_at(s, i, &v);
	return &s->vma[i];
}

void vma_split_range(struct mm_space *s, uint64_t start, uint64_t end)
{
	for (uint32_t i = 0; i < s->nvma; i++) {
		struct mm_vma *v = &s->vma[i];
		uint64_t cut = v->start < start && start < v->end ? start : v->start < end && end < v->end ? end : 0;
		if (!cut)
			continue;
		struct mm_vma hi = *v;
		hi.start = cut;
		s->vma[i].end = cut;
		vma_insert_at(s, i + 1, &hi);
	}
}

/* is_mergeable_vma() + is_mergeable_anon_vma() (mm/vma.c): nothing tells the two apart */
static bool vma_mergeable(const struct mm_vma *a, const struct mm_vma *b)
{
	return a->end == b->start && a->prot == b->prot && a->order == b->order && a->flags == b->flags &&
	       a->anon_id == b->anon_id;
}

void vma_merge_range(struct mm_space *s, uint64_t start, uint64_t end)
{
	for (uint32_t i = 1; i < s->nvma;) {
		struct mm_vma *prev = &s->vma[i - 1], *v = &s->vma[i];
		if (v->start >= start && v->start <= end && vma_mergeable(prev, v)) {
			prev->end = v->end;
			memmove(v, v + 1, (s->nvma - i - 1) * sizeof(*v));
			s->nvma--;
			continue;
		}
		i++;
	}
}

void vma_remove_range(struct mm_space *s, uint64_t start, uint64_t end)
{
	vma_split_range(s, start, end);
	uint32_t k = 0;
	for (uint32_t i = 0; i < s->nvma; i++)
		if (!(s->vma[i].start >= start && s->vma[i].end <= end))
			s->vma[k++] = s->vma[i];
	s->nvma = k;
}

bool range_is_mapped(struct mm_space *s, uint64_t start, uint64_t end)
{
	uint64_t a = start;
	while (a < end) {
		struct mm_vma *v = find_vma(s, a);
		if (!v)
			return false;
		a = v->end;
	}
	return true;
}

bool range_is_free(struct mm_space *s, uint64_t start, uint64_t end)
{
	for (uint32_t i = 0; i < s->nvma; i++)
		if (s->vma[i].start < end && start < s->vma[i].end)
			return false;
	return true;
}

/* ---- munmap: do_vmi_munmap() -> do_vmi_align_munmap() -> vms_clear_ptes() ---- */

/* The parts of VMAs inside [start, end), in order (the VMAs vms_gather_munmap_vmas() detaches). */
uint32_t vmas_in_range(struct mm_space *s, uint64_t start, uint64_t end, struct vma_range *room,
		       struct vma_range **out)
{
	/* the VMAs are sorted and do not overlap: those inside are the ones from the first that
	 * ends above start on, up to the first that starts at or past end */
	uint32_t first = vma_index_above(s, start), n = 0;
	while (first + n < s->nvma && s->vma[first + n].start < end)
		n++;
	struct vma_range *v = room_get(room, VMA_RANGE_ROOM, n, sizeof(*v));
	for (uint32_t k = 0; k < n; k++) {
		const struct mm_vma *a = &s->vma[first + k];
		v[k] = (struct vma_range){ a->start > start ? a->start : start, a->end < end ? a->end : end, a->flags,
					   a->order, a->anon_id };
	}
	*out = v;
	return n;
}

struct first_leaf {
	uint64_t va;
	bool found;
};

static bool note_first_leaf(void *ctx, uint64_t va, unsigned level, uint64_t desc)
{
	(void)level;
	(void)desc;
	struct first_leaf *f = ctx;
	f->va = va;
	f->found = true;
	return false;
}

/*
 * ref_check() of a range the op left empty: page by page for a small one; for a large
 * one, only where the page tables still have a leaf (pt_walk_range() visits existing
 * tables only), so that a huge munmap of a sparse region costs what was mapped.
 */
static bool ref_check_emptied(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t a, uint64_t b,
			      const char *opname)
{
	if (b - a <= 16 * PMD_SIZE)
		return ref_check(mm, t, s, a, b, opname);
	struct first_leaf f = { 0, false };
	pt_walk_range(mm->m, /*kernel=*/false, s->asid, a, b, note_first_leaf, &f);
	if (!f.found)
		return true;
	uint64_t va = f.va > a ? f.va : a;
	return ref_check(mm, t, s, va, va + PAGE_SIZE, opname);
}

/*
 * ref_check() over the VMA parts an op emptied, and the PMD-sized margins around
 * [start, end) where a split THP or an unfolded contpte block must have kept its pages.
 * Only where mappings were: a huge range of holes costs nothing.
 */
void ref_check_ranges(struct mm_model *mm, struct mm_thread *t, struct mm_space *s,
		      const struct vma_range *v, uint32_t n, uint64_t start, uint64_t end, const char *opname)
{
	if (t->hung)
		return;
	ref_check(mm, t, s, ALIGN_DOWN(start, PMD_SIZE), start, opname);
	for (uint32_t i = 0; i < n; i++)
		if (!ref_check_emptied(mm, t, s, v[i].start, v[i].end, opname))
			break;
	if (end < TASK_SIZE)
		ref_check(mm, t, s, end, ALIGN_UP(end, PMD_SIZE), opname);
}

void pgtables_floor_ceiling(const struct mm_space *s, uint64_t start, uint64_t end, uint64_t *floor,
			    uint64_t *ceiling)
{
	*floor = *ceiling = 0;	/* FIRST_USER_ADDRESS, USER_PGTABLES_CEILING */
	for (uint32_t i = 0; i < s->nvma; i++) {
		if (s->vma[i].end <= start)
			*floor = s->vma[i].end;
		if (s->vma[i].start >= end && !*ceiling)
			*ceiling = s->vma[i].start;
	}
}

/*
 * do_munmap() of the page-aligned range [start, end), whose VMA parts are v[0..n)
 * (vmas_in_range() of it, the VMAs as they are now); v stays the caller's.
 */
static int munmap_vmas(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start, uint64_t end,
		       const struct vma_range *v, uint32_t n)
{
	const char *prev = mm_site(mm, t, "do_vmi_munmap");
	int rc = 0;
	if (!n)
		goto out;
	/* __split_vma(): a hugetlb VMA splits only at its huge page size (hugetlb_vm_op_split()) */
	struct mm_vma *first = find_vma(s, v[0].start);
	if ((first->flags & MM_VMA_HUGETLB) && first->start < start) {
		if (!IS_ALIGNED(start, PAGE_SIZE << first->order))
			rc = EINVAL;
	}
	struct mm_vma *last = find_vma(s, v[n - 1].end - 1);
	if ((last->flags & MM_VMA_HUGETLB) && last->end > end) {
		if (!IS_ALIGNED(end, PAGE_SIZE << last->order))
			rc = EINVAL;
	}
	if (rc)
		goto out;
	/* __split_vma() -> vma_adjust_trans_huge(): a THP across a new VMA boundary is split */
	if (first->start < start)
		split_huge_pmd_if_needed(mm, t, s, first->start, first->end, start);
	last = find_vma(s, v[n - 1].end - 1);
	if (last->end > end)
		split_huge_pmd_if_needed(mm, t, s, last->start, last->end, end);

	/* the VMA tree is updated first; the page tables follow (vms_complete_munmap_vmas()) */
	vma_remove_range(s, start, end);
	uint64_t floor, ceiling;
	pgtables_floor_ceiling(s, start, end, &floor, &ceiling);

	/* vms_clear_ptes(), the kernel's unmap_region() */
	struct mmu_gather tlb;
	tlb_gather_mmu(&tlb, s);
	for (uint32_t i = 0; i < n; i++)
		unmap_single_vma(mm, t, &tlb, &v[i]);	/* unmap_vmas() */
	free_pgtables(mm, t, &tlb, v, n, floor, ceiling);
	tlb_finish_mmu(mm, t, &tlb);
	ref_clear_range(s, start, end);
out:
	mm_site(mm, t, prev);
	return rc;
}

int do_munmap(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start, uint64_t len)
{
	if (!IS_ALIGNED(start, PAGE_SIZE) || start > TASK_SIZE || len > TASK_SIZE - start)
		return EINVAL;
	len = ALIGN_UP(len, PAGE_SIZE);
	if (!len)
		return EINVAL;
	struct vma_range room[VMA_RANGE_ROOM], *v;
	uint32_t n = vmas_in_range(s, start, start + len, room, &v);
	int rc = munmap_vmas(mm, t, s, start, start + len, v, n);
	room_free(v, room);
	return rc;
}

int mm_do_munmap(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	struct mm_space *s = t->op_space;	/* run_desc()'s mm_space_get(mm, t, ev->asid) */
	uint64_t start = ev->va;
	if (!IS_ALIGNED(start, PAGE_SIZE) || start > TASK_SIZE || ev->len > TASK_SIZE - start ||
	    !ALIGN_UP(ev->len, PAGE_SIZE))
		return EINVAL;
	uint64_t end = start + ALIGN_UP(ev->len, PAGE_SIZE);
	mm_lock(mm, t, PT_LOCK_MMAP, s->asid, true);
	struct vma_range room[VMA_RANGE_ROOM], *v;
	uint32_t n = vmas_in_range(s, start, end, room, &v);
	/* do_munmap(): the range passes its checks (above), and its VMA parts are these */
	int rc = munmap_vmas(mm, t, s, start, end, v, n);
	mm_unlock(mm, t, PT_LOCK_MMAP, s->asid);
	/* exactly the range goes: what was mapped in it, and what is left of a THP or a contpte
	 * block split at its ends (the holes between VMAs had nothing to lose) */
	ref_check_ranges(mm, t, s, v, n, start, end, "munmap");
	room_free(v, room);
	return rc;
}

/* ---- mmap (mm/mmap.c do_mmap -> mm/vma.c __mmap_region, and __mm_populate) ---- */

int mm_do_mmap(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	struct mm_space *s = t->op_space;	/* run_desc()'s mm_space_get(mm, t, ev->asid) */
	uint64_t start = ev->va, len = ALIGN_UP(ev->len, PAGE_SIZE);
	mm_site(mm, t, "do_mmap");
	if (!len || !IS_ALIGNED(start, PAGE_SIZE) || start + len < start || start + len > TASK_SIZE)
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
