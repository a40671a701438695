/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ref.c - the reference semantics (I10): a plain per-page model of what each
 * op means (page identity and permissions per address space), against which
 * the page tables are compared after each op.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mm_internal.h"

static const char RULE_SEMANTICS[] =
	"The page tables after an operation must match what the call means: mremap moves the same pages, "
	"mprotect changes the permissions of exactly the range, munmap removes exactly the range, vmap maps "
	"exactly the pages given (reference model, DESIGN.md I10).";

#define REF_FLAGS 0xfffull

void ref_set(struct mm_space *s, uint64_t va, uint64_t pa, uint64_t flags)
{
	hmap_set(&s->ref, va >> PAGE_SHIFT, (pa & PT_DESC_OA_MASK) | flags);
}

uint64_t ref_get(const struct mm_space *s, uint64_t va)
{
	uint64_t v = hmap_get(&s->ref, va >> PAGE_SHIFT, HMAP_EMPTY);
	return v == HMAP_EMPTY ? 0 : v;
}

void ref_clear_range(struct mm_space *s, uint64_t start, uint64_t end)
{
	if ((end - start) >> PAGE_SHIFT > s->ref.count * 2) {
		/* sparse: walk the entries rather than the range */
		for (uint64_t i = 0; i <= s->ref.mask;) {
			uint64_t k = s->ref.slot[i].key;
			if (k != HMAP_EMPTY && (k << PAGE_SHIFT) >= start && (k << PAGE_SHIFT) < end) {
				hmap_del(&s->ref, k);
				continue;	/* the slot was refilled by backward shift */
			}
			i++;
		}
		return;
	}
	for (uint64_t va = start; va < end; va += PAGE_SIZE)
		hmap_del(&s->ref, va >> PAGE_SHIFT);
}

void ref_move(struct mm_space *s, uint64_t old, uint64_t new, uint64_t len)
{
	/* copy out first: the ranges may overlap */
	uint64_t n = len >> PAGE_SHIFT, k = 0;
	uint64_t *val = malloc((n ? n : 1) * sizeof(*val));
	if (!val)
		abort();
	for (uint64_t i = 0; i < n; i++)
		val[i] = ref_get(s, old + i * PAGE_SIZE);
	ref_clear_range(s, old, old + len);
	for (uint64_t i = 0; i < n; i++)
		if (val[i]) {
			hmap_set(&s->ref, (new >> PAGE_SHIFT) + i, val[i]);
			k++;
		}
	free(val);
	(void)k;
}

uint64_t ref_prot(unsigned prot)
{
	/* on arm64 a writable or executable user mapping is readable; PROT_NONE is mapped but
	 * inaccessible (PAGE_NONE), which reads back like a NUMA hint */
	uint64_t f = REF_PRESENT;
	if (prot & PT_PROT_READ)
		f |= REF_READ;
	if (prot & PT_PROT_WRITE)
		f |= REF_WRITE | REF_READ;
	if (prot & PT_PROT_EXEC)
		f |= REF_EXEC | REF_READ;
	if (!(prot & (PT_PROT_READ | PT_PROT_WRITE | PT_PROT_EXEC)))
		f |= REF_NUMA;
	return f;
}

void ref_protect(struct mm_space *s, uint64_t start, uint64_t end, unsigned prot)
{
	for (uint64_t va = start; va < end; va += PAGE_SIZE) {
		uint64_t v = ref_get(s, va);
		if (v & REF_PRESENT)
			hmap_set(&s->ref, va >> PAGE_SHIFT, (v & ~(REF_READ | REF_WRITE | REF_EXEC | REF_NUMA)) |
								     ref_prot(prot));
	}
}

/* What a descriptor grants, in REF_* terms. */
static uint64_t desc_flags(uint64_t d, bool kernel)
{
	uint64_t f = REF_PRESENT;
	if (!(d & PT_DESC_VALID))
		return f | REF_NUMA;
	if (kernel || (d & PT_DESC_USER))
		f |= REF_READ;
	if (!(d & PT_DESC_RDONLY) || (d & PT_DESC_DBM))
		f |= REF_WRITE;
	if (kernel ? !(d & PT_DESC_PXN) : !(d & PT_DESC_UXN))
		f |= REF_EXEC;
	return f;
}

bool ref_check(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start, uint64_t end,
	       const char *opname)
{
	(void)t;
	for (uint64_t va = start; va < end; va += PAGE_SIZE) {
		uint64_t want = ref_get(s, va);
		struct pt_walk_result r;
		bool mapped = pt_walk(mm->m, s->kernel, s->asid, va, false, &r);
		uint64_t got = 0;
		if (mapped) {
			got = (r.pa & PT_DESC_OA_MASK) | desc_flags(r.desc, s->kernel);
		} else if (r.level >= 1 && (r.desc & PT_DESC_PROTNONE)) {
			/* PAGE_NONE / a NUMA hint, of a page or of a block */
			uint64_t size = pt_level_size(r.level);
			got = (desc_pa(r.desc) + ((va - (s->kernel ? PT_KERNEL_VA_BASE : 0)) & (size - 1))) |
			      REF_PRESENT | REF_NUMA;
		}
		if ((want & REF_NUMA) && (got & REF_NUMA))
			got = want;	/* a NUMA hint keeps the page, not its permissions */
		if (want && !(want & REF_PRESENT))
			want = 0;
		if (got == want)
			continue;
		const char *what = !want ? "is mapped where the call left nothing" :
				   !got ? "is not mapped where the call left a page" :
				   (got & PT_DESC_OA_MASK) != (want & PT_DESC_OA_MASK) ? "maps another page" :
				   "has other permissions";
		pt_checker_report(mm->c, PT_I10, "reference-mismatch", RULE_SEMANTICS, va, want & PT_DESC_OA_MASK,
				  want, got, NULL, "after %s, va 0x%llx %s (expected 0x%llx, page tables give 0x%llx)",
				  opname, (unsigned long long)va, what, (unsigned long long)want,
				  (unsigned long long)got);
		return false;
	}
	return true;
}
