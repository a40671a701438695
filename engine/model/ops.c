/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ops.c - one ops-level event in, the kernel's routine for it run: each op is
 * bracketed by begin/end (the checkers' completion points), has a step bound
 * (I11), and is checked against the reference semantics by its handler.
 */
#include "mm_internal.h"
#include "ptdebug.h"

/* An op's step bound (I11), proportional to the pages it names: */
#define MM_STEPS_PER_PAGE 8		/* loop steps a routine may take per page (each is a few at most) */
#define MM_STEPS_BASE 4096		/* and what any op may take whatever its length */
/* the arch-level bound the op's begin event carries (len2): the arch events it may emit, the
 * same as the machine's default for a trace's own begin events */
#define MM_EVENTS_PER_PAGE 64
#define MM_EVENTS_BASE 4096

struct op_desc {
	enum pt_op_kind kind;
	int (*fn)(struct mm_model *, struct mm_thread *, const struct pt_event *);
	bool kernel;
};

static const struct op_desc *op_for(unsigned kind)
{
	static const struct op_desc ops[PT_EV_KIND_COUNT] = {
		[PT_EV_MMAP] = { PT_OP_MMAP, mm_do_mmap, false },
		[PT_EV_MUNMAP] = { PT_OP_MUNMAP, mm_do_munmap, false },
		[PT_EV_MREMAP] = { PT_OP_MREMAP, mm_do_mremap, false },
		[PT_EV_MPROTECT] = { PT_OP_MPROTECT, mm_do_mprotect, false },
		[PT_EV_MADVISE] = { PT_OP_MADVISE, mm_do_madvise, false },
		[PT_EV_TOUCH] = { PT_OP_FAULT, mm_do_touch, false },
		[PT_EV_VMALLOC] = { PT_OP_VMALLOC, mm_do_vmalloc, true },
		[PT_EV_VMAP] = { PT_OP_VMAP, mm_do_vmap, true },
		[PT_EV_VUNMAP] = { PT_OP_VUNMAP, mm_do_vunmap, true },
		[PT_EV_VFREE] = { PT_OP_VFREE, mm_do_vfree, true },
		[PT_EV_PAGEOUT] = { PT_OP_PAGEOUT, mm_do_pageout, false },
		[PT_EV_MAP_MEM] = { PT_OP_MAP_MEM, mm_do_map_mem, true },
		[PT_EV_HUGETLB] = { PT_OP_HUGETLB, mm_do_hugetlb, false },
	};
	return kind < PT_EV_KIND_COUNT && ops[kind].fn ? &ops[kind] : NULL;
}

static int run_desc(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev, const struct op_desc *d)
{
	uint64_t pages = (ev->len + ev->len2) >> PAGE_SHIFT;
	if (ev->kind == PT_EV_VFREE) {
		/* vfree names an area by its address: its size bounds the work */
		struct mm_vma *v = find_vma(&mm->kernel, ev->va);
		if (v)
			pages = (v->end - v->start) >> PAGE_SHIFT;
	}
	/* pageout names a folio by one address: the folio bounds the work, a PMD-sized THP at
	 * most (hugetlb folios are not on the LRU), whose PTEs try_to_unmap_one() may clear and
	 * flush one by one after splitting its PMD (I11 step-bound/zap_pte_range, issue 7: a
	 * 2M THP's pageout overran the bound of a one-page op) */
	if (ev->kind == PT_EV_PAGEOUT)
		pages = PTRS_PER_PTE;
	/* an interrupt's op runs on the interrupted thread: the interrupted op's progress and
	 * bound are its own, given back below (an IRQ's vmap used to leave its one-page bound
	 * and its count to the 4M mremap it interrupted: I11 step-bound/move_ptes, issue 7) */
	const uint64_t outer_steps = t->steps, outer_bound = t->bound;
	const bool outer_hung = t->hung;
	t->steps = 0;
	t->hung = false;
	/* proportional to the work the op asks for, and never more than the model's capacity:
	 * what an op maps is refused past it (ENOMEM), and a walk visits only what is mapped
	 * (the empty levels of a range are skipped whole), so a clean op of any length stays
	 * within the bound, and a routine that makes no progress ends as I11 within seconds */
	if (pages > mm->capacity)
		pages = mm->capacity;
	t->bound = MM_STEPS_PER_PAGE * (pages + 1) + MM_STEPS_BASE;
	t->site = NULL;
	pt_checker_set_site(mm->c, NULL);
	/* what the op works on, for the reference checks of the ops that run beside it (ref.c), and
	 * for the user ops' handlers, which take it rather than ask mm_space_get() again: that
	 * second call would find the same space (the first of ev->asid, created here if new) and,
	 * with TTBR0 switched here and no scheduling point before the handler (begin only
	 * brackets), emit nothing */
	const struct pt_event *outer_ev = t->op_ev;
	struct mm_space *outer_space = t->op_space;
	t->op_space = d->kernel ? mm_kernel(mm, t) : mm_space_get(mm, t, ev->asid);
	t->op_ev = ev;
	struct pt_event b = { .kind = PT_EV_BEGIN, .op = (uint8_t)d->kind, .va = ev->va, .len = ev->len,
			      .asid = d->kernel ? 0 : (ev->asid ? ev->asid : 1),
			      .len2 = MM_EVENTS_PER_PAGE * (pages + 1) + MM_EVENTS_BASE };
	if (ev->kind == PT_EV_HUGETLB && ev->va >= PAGE_OFFSET)
		b.asid = 0;
	mm_emit(mm, t, &b);
	pt_dbg(PT_DBG_OP, "cpu%u tid=%u %s va=%#llx len=%#llx", t->cpu, t->tid, pt_kind_name(ev->kind),
	       (unsigned long long)ev->va, (unsigned long long)ev->len);
	int rc = d->fn(mm, t, ev);
	pt_dbg(PT_DBG_OP, "cpu%u tid=%u %s -> %d", t->cpu, t->tid, pt_kind_name(ev->kind), rc);
	if (ev == mm->res_ev) {
		mm->res.ran = true;
		mm->res.rc = rc;
	}
	struct pt_event e = { .kind = PT_EV_END, .len = (uint64_t)rc };
	mm_emit(mm, t, &e);
	mm_site(mm, t, NULL);
	t->op_ev = outer_ev;	/* an interrupt's op returns to the one it interrupted */
	t->op_space = outer_space;
	if (t->irq_depth) {
		t->steps = outer_steps;
		t->bound = outer_bound;
		t->hung = outer_hung;
	}
	return rc;
}

int mm_sched_event(struct mm_model *mm, const struct pt_event *ev);
int mm_queue_op(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev);

/* Run one ops-level event in thread t, now (on t's own stack if it is scheduled). */
int mm_run_op(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	switch (ev->kind) {
	case PT_EV_IRQ: {
		/* an interrupt whose handler performs an ops-level action in interrupt context */
		static const unsigned kind_of[PT_OP_KIND_COUNT] = {
			[PT_OP_VMALLOC] = PT_EV_VMALLOC, [PT_OP_VMAP] = PT_EV_VMAP,
			[PT_OP_VUNMAP] = PT_EV_VUNMAP, [PT_OP_VFREE] = PT_EV_VFREE,
		};
		unsigned k = ev->op < PT_OP_KIND_COUNT ? kind_of[ev->op] : 0;
		const struct op_desc *d = op_for(k);
		if (!d)
			return EINVAL;
		const char *site = t->site;	/* the interrupted routine's, for when it resumes */
		struct pt_event in = { .kind = PT_EV_IRQ_ENTER };
		mm_emit(mm, t, &in);
		t->irq_depth++;
		struct pt_event inner = *ev;
		inner.kind = (uint8_t)k;
		inner.op = 0;
		int rc = run_desc(mm, t, &inner, d);
		t->irq_depth--;
		struct pt_event out = { .kind = PT_EV_IRQ_EXIT };
		mm_emit(mm, t, &out);
		t->site = site;
		pt_checker_set_site(mm->c, site);
		return rc;
	}
	default:
		break;
	}
	const struct op_desc *d = op_for(ev->kind);
	if (!d)
		return EINVAL;
	return run_desc(mm, t, ev, d);
}

static int mm_model_op_run(struct mm_model *mm, const struct pt_event *ev)
{
	if (mm->over_budget)
		return ENOMEM;	/* the model stopped (mm_model_over_budget()) */
	mm->trace_budget += mm->per_op;
	struct mm_thread *t = mm_thread_of(mm, ev);
	if (ev->kind == PT_EV_THREAD || ev->kind == PT_EV_SCHED)
		return mm_sched_event(mm, ev);
	/* an interrupt arrives now, on top of whatever the CPU's thread is doing */
	if (ev->kind == PT_EV_IRQ)
		return mm_run_op(mm, t, ev);
	if (t->scheduled && !t->implicit)
		return mm_queue_op(mm, t, ev);
	return mm_run_direct(mm, t, ev);
}

int mm_model_op(struct mm_model *mm, const struct pt_event *ev)
{
	/* a copy of an empty record, as memset() leaves it: vector stores, where a memset() of
	 * its size is a rep stos, whose start-up costs more than the stores */
	static const struct mm_op_result none;
	mm->res = none;
	mm->res_ev = ev;
	int rc = mm_model_op_run(mm, ev);
	mm->res_ev = NULL;
	return rc;
}

const struct mm_op_result *mm_model_op_result(const struct mm_model *mm)
{
	return &mm->res;
}
