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

/*
 * The ranges of s that other ops are in the middle of changing.  Ops that share the mmap lock
 * for read (faults, MADV_DONTNEED/FREE/PAGEOUT, the NUMA scan, pageout) run side by side; the
 * reference of a page another op is still working on is what that op makes of it, known only
 * when it returns, and its own check at its end judges the page.  An op's range counts out to
 * whole PMDs (a THP it splits or pages out), and for mremap the destination too.
 */
#define FLUX_MAX (2 * (PT_MAX_CPUS + MM_MAX_THREADS))
struct flux {
	unsigned n;
	bool all;		/* a vfree: its area is named by its address only */
	uint64_t lo[FLUX_MAX], hi[FLUX_MAX];
};

static void flux_add_op(struct flux *x, const struct mm_thread *o, const struct mm_thread *self,
			const struct mm_space *s)
{
	const struct pt_event *ev = o->op_ev;
	if (o == self || !o->busy || !ev || o->op_space != s)
		return;
	if (ev->kind == PT_EV_VFREE) {
		x->all = true;
		return;
	}
	uint64_t len = ev->len ? ev->len : PAGE_SIZE;
	x->lo[x->n] = ALIGN_DOWN(ev->va, PMD_SIZE);
	x->hi[x->n++] = ALIGN_UP(ev->va + len, PMD_SIZE);
	if (ev->kind == PT_EV_MREMAP) {
		x->lo[x->n] = ALIGN_DOWN(ev->va2, PMD_SIZE);
		x->hi[x->n++] = ALIGN_UP(ev->va2 + ev->len2, PMD_SIZE);
	}
}

/* NULL if no other op on s is in flight (the common case: nothing to skip) */
static const struct flux *flux_of(struct mm_model *mm, const struct mm_thread *self, const struct mm_space *s,
				  struct flux *x)
{
	x->n = 0;
	x->all = false;
	for (unsigned i = 0; i < mm->ncpus; i++)
		flux_add_op(x, &mm->thread[i], self, s);
	for (unsigned i = 0; i < mm->nextra; i++)
		flux_add_op(x, mm->extra[i], self, s);
	return x->n || x->all ? x : NULL;
}

static bool in_flux(const struct flux *x, uint64_t va)
{
	if (!x)
		return false;
	if (x->all)
		return true;
	for (unsigned i = 0; i < x->n; i++)
		if (va >= x->lo[i] && va < x->hi[i])
			return true;
	return false;
}

/* One page: the reference against what the page tables give; reports I10 and returns false on a
 * mismatch. */
static bool ref_check_page(struct mm_model *mm, struct mm_space *s, uint64_t va, const char *opname,
			   const struct flux *fx)
{
	if (in_flux(fx, va))
		return true;
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
		return true;
	const char *what = !want ? "is mapped where the call left nothing" :
			   !got ? "is not mapped where the call left a page" :
			   (got & PT_DESC_OA_MASK) != (want & PT_DESC_OA_MASK) ? "maps another page" :
			   "has other permissions";
	pt_checker_report(mm->c, PT_I10, "reference-mismatch", RULE_SEMANTICS, va, want & PT_DESC_OA_MASK, want, got,
			  NULL, "after %s, va 0x%llx %s (expected 0x%llx, page tables give 0x%llx)", opname,
			  (unsigned long long)va, what, (unsigned long long)want, (unsigned long long)got);
	return false;
}

struct leaf_scan {
	struct mm_model *mm;
	struct mm_space *s;
	uint64_t start, end;
	const char *opname;
	const struct flux *fx;
	bool ok;
};

static bool scan_leaf(void *ctx, uint64_t va, unsigned level, uint64_t desc)
{
	struct leaf_scan *x = ctx;
	(void)desc;
	uint64_t lo = va > x->start ? va : x->start, size = pt_level_size(level);
	uint64_t hi = va + size < x->end ? va + size : x->end;
	for (uint64_t a = lo; a < hi; a += PAGE_SIZE)
		if (!ref_check_page(x->mm, x->s, a, x->opname, x->fx)) {
			x->ok = false;
			return false;
		}
	return true;
}

bool ref_check(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start, uint64_t end,
	       const char *opname)
{
	struct flux fbuf;
	const struct flux *fx = flux_of(mm, t, s, &fbuf);
	uint64_t pages = (end - start) >> PAGE_SHIFT;
	if (pages <= s->ref.count + 4096) {
		for (uint64_t va = start; va < end; va += PAGE_SIZE)
			if (!ref_check_page(mm, s, va, opname, fx))
				return false;
		return true;
	}
	/* a range far larger than what is mapped: check what the page tables map in it, then
	 * every page the reference has in it (work proportional to the mappings, not the range) */
	struct leaf_scan x = { mm, s, start, end, opname, fx, true };
	pt_walk_range(mm->m, s->kernel, s->asid, start, end, scan_leaf, &x);
	if (!x.ok)
		return false;
	for (uint64_t i = 0; i <= s->ref.mask; i++) {
		uint64_t k = s->ref.slot[i].key;
		if (k == HMAP_EMPTY || (k << PAGE_SHIFT) < start || (k << PAGE_SHIFT) >= end)
			continue;
		if (!ref_check_page(mm, s, k << PAGE_SHIFT, opname, fx))
			return false;
	}
	return true;
}
