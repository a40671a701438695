/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vma.c - the VMA tree of an address space (mm/vma.c, mm/mmap.c): lookup,
 * insert, split at range edges, merge of compatible neighbours, removal,
 * and whether a range is all mapped or all free.  Sorted array, binary
 * search: the model's mms hold a handful of VMAs.
 */
#include <string.h>

#include "mm_internal.h"

struct mm_vma *find_vma(struct mm_space *s, uint64_t addr)
{
	/* the VMAs are sorted and do not overlap: one that contains addr is the answer (a touch
	 * or a fault asks for the pages of one VMA in turn) */
	uint32_t h = s->vma_hint;
	if (h < s->nvma && s->vma[h].start <= addr && addr < s->vma[h].end)
		return &s->vma[h];
	uint32_t lo = 0, hi = s->nvma;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (s->vma[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
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
