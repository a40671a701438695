/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * core.c - the model's primitives (the only producers of arch events), the
 * page allocator, page-table allocation, the address spaces, and the model's
 * life cycle (new, reset, free, state hash).  The arm64 helpers the
 * routines build on are in engine/arm64/ (pgtable.c, tlbflush.c), the VMA
 * tree in engine/mm/vma.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_internal.h"
#include "ptdebug.h"

static const char RULE_CONTRACT[] =
	"A caller broke an API contract that the kernel only WARNs about (e.g. vunmap of a sub-range of a "
	"PMD/PUD block, a move onto a destination entry that is not none); reported apart from bugs in "
	"the routine itself.";

/* ---- primitives ---- */

struct mm_thread *mm_thread_of(struct mm_model *mm, const struct pt_event *ev)
{
	return mm->on_cpu[ev->cpu] ? mm->on_cpu[ev->cpu] : &mm->thread[ev->cpu];
}

static unsigned sched_on(unsigned kind)
{
	switch (kind) {
	case PT_EV_PT_WRITE: return PT_SCHED_PT_WRITE;
	case PT_EV_TLBI: return PT_SCHED_TLBI;
	case PT_EV_DSB: return PT_SCHED_DSB;
	case PT_EV_DMB: return PT_SCHED_DMB;
	case PT_EV_ISB: return PT_SCHED_ISB;
	case PT_EV_LOCK: return PT_SCHED_LOCK;
	case PT_EV_UNLOCK: return PT_SCHED_UNLOCK;
	case PT_EV_PAGE_ALLOC: return PT_SCHED_PAGE_ALLOC;
	case PT_EV_PAGE_FREE: return PT_SCHED_PAGE_FREE;
	case PT_EV_ACCESS: return PT_SCHED_ACCESS;
	default: return PT_SCHED_ANY;
	}
}

static void emit_now(struct mm_model *mm, struct mm_thread *t, struct pt_event *ev)
{
	ev->cpu = (uint16_t)t->cpu;
	pt_dbg(PT_DBG_ENTRY, "cpu%u tid=%u %s%s%s va=%#llx pa=%#llx", t->cpu, t->tid,
	       pt_kind_name(ev->kind), *pt_op_name(ev->kind, ev->op) ? " " : "",
	       pt_op_name(ev->kind, ev->op), (unsigned long long)ev->va, (unsigned long long)ev->pa);
	mm->sink.emit_kind[ev->kind](mm->sink.ctx, ev);
}

void mm_emit(struct mm_model *mm, struct mm_thread *t, struct pt_event *ev)
{
	/* every shared access is a scheduling point; begin/end only bracket */
	if (ev->kind != PT_EV_BEGIN && ev->kind != PT_EV_END)
		mm_sched_point(mm, t, sched_on(ev->kind));
	emit_now(mm, t, ev);
}

/*
 * The routine's own next instruction fetch, from the kernel image, where the model has a
 * kernel flush routine return to C code that the oracle should see (clear_flush() on
 * init_mm): after a kernel invalidation its ISB must come first (tlbflush.h).  Kernel
 * text is private to nobody and no page-table state: no scheduling point.
 */
void mm_text_fetch(struct mm_model *mm, struct mm_thread *t)
{
	struct pt_event ev = { .kind = PT_EV_ACCESS, .va = KERNEL_TEXT_VA };
	emit_now(mm, t, &ev);
}

uint64_t mm_read(struct mm_model *mm, struct mm_thread *t, uint64_t entry_pa)
{
	const uint64_t *latest;
	mm_sched_point(mm, t, PT_SCHED_READ);
	return mm_entry_at(mm, entry_pa, 0, &latest);
}

/*
 * The entries of the page entry_pa is in from entry_pa on, at most n of them (*k: how many):
 * where the page is a table, its latest entries from entry_pa's on, which mm_entry_at() reads
 * one by one, looking them up once a page; else NULL (no table: mm_entry_at() gives 0 for each).
 */
static inline const uint64_t *page_latest(struct mm_model *mm, uint64_t entry_pa, unsigned n, unsigned *k)
{
	unsigned idx = (unsigned)((entry_pa >> 3) & (PTRS_PER_PTE - 1));
	*k = n < PTRS_PER_PTE - idx ? n : PTRS_PER_PTE - idx;
	uint32_t f = pt_machine_lookup(mm->m, entry_pa);
	const uint64_t *latest = f == PT_NO_FRAME ? NULL : pt_machine_table_latest(mm->m, f);
	return latest ? latest + idx : NULL;
}

/*
 * mm_entry_at() of entries 0..n-1 from entry_pa on (an entry's address, 8-aligned): a page's
 * entries at a time (page_latest()).
 */
void mm_peek(struct mm_model *mm, uint64_t entry_pa, uint64_t *old, unsigned n)
{
	for (unsigned i = 0, k; i < n; i += k) {
		const uint64_t *latest = page_latest(mm, entry_pa + 8ull * i, n - i, &k);
		if (latest)
			memcpy(old + i, latest, k * sizeof(*old));
		else
			memset(old + i, 0, k * sizeof(*old));
	}
}

/*
 * mm_read() of the entries from entry_pa on, in order, up to the first that is not none (at
 * most n of them).  The reads change nothing and nothing else comes between them: where no
 * thread can run at any of their scheduling points (mm_sched_points()), no other thread stores
 * between them either, so they are made first and the points (one per read made) taken after,
 * at once.  Otherwise, or without runs, one by one.
 */
unsigned mm_read_until_present(struct mm_model *mm, struct mm_thread *t, uint64_t entry_pa, unsigned n)
{
	unsigned i = 0;
	if (n > 1 && !mm->no_runs) {
		/* mm_entry_at() of each, in order, a page of them at a time (page_latest()): two at
		 * a time while both are none (pte_none() is a test for zero: of their OR, of both),
		 * then one at a time to the first that is not */
		for (unsigned k; i < n; i += k) {
			const uint64_t *p = page_latest(mm, entry_pa + 8ull * i, n - i, &k);
			if (!p)
				continue;	/* no table: all none */
			unsigned j = 0;
			while (j + 1 < k && pte_none(p[j] | p[j + 1]))
				j += 2;
			while (j < k && pte_none(p[j]))
				j++;
			if (j < k) {
				i += j;
				break;
			}
		}
		if (mm_sched_points(mm, t, PT_SCHED_READ, i < n ? i + 1 : n))
			return i;
	}
	for (i = 0; i < n; i++)
		if (!pte_none(mm_read(mm, t, entry_pa + 8ull * i)))
			break;
	return i;
}

void mm_write(struct mm_model *mm, struct mm_thread *t, uint64_t entry_pa, uint64_t val)
{
	struct pt_event ev = { .kind = PT_EV_PT_WRITE, .pa = entry_pa, .val = val };
	mm_emit(mm, t, &ev);
}

uint64_t mm_xchg(struct mm_model *mm, struct mm_thread *t, uint64_t entry_pa, uint64_t val)
{
	uint64_t old = mm_read(mm, t, entry_pa);
	mm_write(mm, t, entry_pa, val);
	return old;
}

void mm_dsb(struct mm_model *mm, struct mm_thread *t, enum pt_barrier dom)
{
	struct pt_event ev = { .kind = PT_EV_DSB, .op = (uint8_t)dom };
	mm_emit(mm, t, &ev);
}

void mm_dmb(struct mm_model *mm, struct mm_thread *t, enum pt_barrier dom)
{
	struct pt_event ev = { .kind = PT_EV_DMB, .op = (uint8_t)dom };
	mm_emit(mm, t, &ev);
}

void mm_isb(struct mm_model *mm, struct mm_thread *t)
{
	struct pt_event ev = { .kind = PT_EV_ISB };
	mm_emit(mm, t, &ev);
}

void mm_tlbi(struct mm_model *mm, struct mm_thread *t, enum pt_tlbi op, uint64_t va, uint16_t asid, unsigned ttl,
	     unsigned num, unsigned scale)
{
	struct pt_event ev = { .kind = PT_EV_TLBI, .op = (uint8_t)op, .va = va, .asid = asid,
			       .level = (uint8_t)ttl, .num = (uint8_t)num, .scale = (uint8_t)scale };
	mm_emit(mm, t, &ev);
}

void mm_lock(struct mm_model *mm, struct mm_thread *t, enum pt_lock_class cls, uint64_t key, bool write)
{
	/* the scheduling point comes first, then the wait, then the acquisition with no point in
	 * between: nothing can take the lock after the wait saw it free */
	mm_sched_point(mm, t, PT_SCHED_LOCK);
	mm_wait_lock(mm, t, cls, key, write);
	struct pt_event ev = { .kind = PT_EV_LOCK, .op = (uint8_t)cls, .pa = key, .flags = write ? PT_LOCK_WRITE : 0 };
	emit_now(mm, t, &ev);
}

void mm_unlock(struct mm_model *mm, struct mm_thread *t, enum pt_lock_class cls, uint64_t key)
{
	struct pt_event ev = { .kind = PT_EV_UNLOCK, .op = (uint8_t)cls, .pa = key };
	mm_emit(mm, t, &ev);
}

/* free_vmap_area_noflush() / __purge_vmap_area_lazy(): the purge list's bookkeeping, told to
 * the machine as it changes (under vn->lazy.lock: not a scheduling point of its own) */
void mm_vmap_area(struct mm_model *mm, struct mm_thread *t, enum pt_vmap_area_ev what, uint64_t va, uint64_t len)
{
	struct pt_event ev = { .kind = PT_EV_VMAP_AREA, .op = (uint8_t)what, .va = va, .len = len };
	emit_now(mm, t, &ev);
}

/* ---- the page allocator: deterministic, per-order free lists, splitting, one bump region per node ---- */

/* Room for n more blocks on the free list of order. */
static void free_reserve(struct mm_model *mm, unsigned order, uint64_t n)
{
	if (mm->capfree[order] - mm->nfree[order] >= n)
		return;
	uint64_t cap = mm->capfree[order] ? mm->capfree[order] : 64;
	while (cap - mm->nfree[order] < n)
		cap *= 2;
	mm->freel[order] = realloc(mm->freel[order], cap * sizeof(uint64_t));
	if (!mm->freel[order])
		abort();
	mm->capfree[order] = (uint32_t)cap;
}

/* free_push() of n blocks of order, pa first and each the one before plus a block, with room made
 * once */
static void free_push_run(struct mm_model *mm, unsigned order, uint64_t pa, unsigned n)
{
	free_reserve(mm, order, n);
	uint64_t *fl = mm->freel[order] + mm->nfree[order];
	for (unsigned i = 0; i < n; i++)
		fl[i] = pa + ((uint64_t)i << (PAGE_SHIFT + order));
	mm->nfree[order] += n;
	mm->free_orders |= 1u << order;
}

static void free_push(struct mm_model *mm, unsigned order, uint64_t pa)
{
	free_push_run(mm, order, pa, 1);
}

/*
 * The pages phys_alloc() skips to align a block go on the order-0 list lowest first, one entry
 * per page in the list as phys_alloc() uses it.  Up to FREE_RUN_PAGES of them are kept as one
 * entry, a run: the address of its first page with, in the bits under the page, the number of
 * pages after it (an entry without those bits is one page, as before).  A run stands for its
 * pages in place, lowest first; a 2M block skips up to 511 pages, most never taken again.  All
 * pages of a run are on one node: a run lies below the block it aligns, and the node ranges
 * start at multiples of 2^31, which the block sizes (up to 1G) divide.
 */
#define FREE_RUN_PAGES (PAGE_SIZE)

/* The order-0 list with each run written out as its pages, in place: the list they stand for. */
static void free_runs_expand(struct mm_model *mm)
{
	uint64_t *fl = mm->freel[0];
	uint64_t pages = 0;
	for (uint32_t i = 0; i < mm->nfree[0]; i++)
		pages += (fl[i] & ~PAGE_MASK) + 1;
	free_reserve(mm, 0, pages - mm->nfree[0]);
	fl = mm->freel[0];
	/* from the top down: entry i's pages go at or above i, over entries already read */
	uint64_t w = pages;
	for (uint32_t i = mm->nfree[0]; i-- > 0;) {
		uint64_t e = fl[i];
		for (uint64_t k = (e & ~PAGE_MASK) + 1; k-- > 0;)
			fl[--w] = (e & PAGE_MASK) + (k << PAGE_SHIFT);
	}
	mm->nfree[0] = (uint32_t)pages;
	mm->free_runs = false;
}

static uint64_t phys_alloc(struct mm_model *mm, unsigned order, unsigned node)
{
	/* the non-empty lists of orders from order on, in increasing order: the empty ones have
	 * nothing to reuse */
	for (uint32_t live = order <= 18 ? mm->free_orders >> order << order : 0; live; live &= live - 1) {
		unsigned o = (unsigned)__builtin_ctz(live);
		uint64_t *top = &mm->freel[o][mm->nfree[o] - 1];
		if (*top & ~PAGE_MASK && ((*top - PHYS_BASE) >> 34) == node) {
			/* a run on top (order 0) of the node: its last page is the top of the list
			 * the loop below takes; the run keeps the pages under it */
			*top -= 1;
			return (*top & PAGE_MASK) + ((*top & ~PAGE_MASK) + 1) * PAGE_SIZE;
		}
		if (o == 0 && mm->free_runs && ((*top - PHYS_BASE) >> 34) != node)
			free_runs_expand(mm);	/* the loop looks below the top: one page an entry */
		/* free blocks are reused only on their own node range */
		for (uint32_t i = mm->nfree[o]; i-- > 0;) {
			uint64_t pa = mm->freel[o][i];
			if (((pa - PHYS_BASE) >> 34) != node)
				continue;
			mm->freel[o][i] = mm->freel[o][--mm->nfree[o]];
			if (!mm->nfree[o])
				mm->free_orders &= ~(1u << o);
			while (o > order) {	/* split: keep the low half, free the high half */
				o--;
				free_push(mm, o, pa + (PAGE_SIZE << o));
			}
			return pa;
		}
	}
	uint64_t size = PAGE_SIZE << order;
	uint64_t pa = ALIGN_UP(mm->bump[node], size);
	/* the pages skipped to align the block (bump and pa are page-aligned), as runs */
	uint64_t gap = mm->bump[node];
	free_reserve(mm, 0, (pa - gap) / (FREE_RUN_PAGES * PAGE_SIZE) + 1);
	for (uint64_t n; gap < pa; gap += n * PAGE_SIZE) {
		n = (pa - gap) >> PAGE_SHIFT;
		if (n > FREE_RUN_PAGES)
			n = FREE_RUN_PAGES;
		mm->freel[0][mm->nfree[0]++] = gap | (n - 1);
		mm->free_orders |= 1u;
		mm->free_runs = true;
	}
	mm->bump[node] = pa + size;
	return pa;
}

uint64_t mm_alloc_pages(struct mm_model *mm, struct mm_thread *t, unsigned order, unsigned node)
{
	if (node >= mm->nnodes)
		node = 0;
	uint64_t pa = phys_alloc(mm, order, node);
	struct pt_event ev = { .kind = PT_EV_PAGE_ALLOC, .op = PT_FRAME_DATA, .pa = pa, .order = (uint8_t)order,
			       .node = (uint8_t)node };
	mm_emit(mm, t, &ev);
	return pa;
}

static uint64_t alloc_table(struct mm_model *mm, struct mm_thread *t, unsigned level, bool zero)
{
	uint64_t pa = phys_alloc(mm, 0, 0);
	mm->ntables++;
	struct pt_event ev = { .kind = PT_EV_PAGE_ALLOC, .op = PT_FRAME_TABLE, .pa = pa, .level = (uint8_t)level,
			       .flags = zero ? PT_ALLOC_ZERO : 0 };
	mm_emit(mm, t, &ev);
	return pa;
}

uint64_t mm_alloc_table(struct mm_model *mm, struct mm_thread *t, unsigned level)
{
	return alloc_table(mm, t, level, true);
}

uint64_t mm_alloc_table_nozero(struct mm_model *mm, struct mm_thread *t, unsigned level)
{
	return alloc_table(mm, t, level, false);
}

void mm_free_pages(struct mm_model *mm, struct mm_thread *t, uint64_t pa, unsigned order)
{
	struct pt_event ev = { .kind = PT_EV_PAGE_FREE, .pa = pa, .order = (uint8_t)order };
	mm_emit(mm, t, &ev);
	free_push(mm, order, pa);
}

void mm_free_table(struct mm_model *mm, struct mm_thread *t, uint64_t pa)
{
	if (mm->ntables)
		mm->ntables--;
	mm_free_pages(mm, t, pa, 0);
}

uint64_t mm_work(const struct mm_model *mm)
{
	uint64_t w = mm->kernel.ref.count + PTRS_PER_PTE * mm->ntables;
	for (uint32_t i = 0; i < mm->nspace; i++)
		w += mm->space[i]->ref.count;
	return w;
}

bool mm_capacity_ok(const struct mm_model *mm, uint64_t units)
{
	uint64_t w = mm_work(mm);
	return w <= mm->capacity && units <= mm->capacity - w;
}

void mm_model_set_limits(struct mm_model *mm, uint64_t capacity, uint64_t allowance, uint64_t per_op)
{
	mm->capacity = capacity;
	mm->trace_budget = allowance;
	mm->per_op = per_op;
}

bool mm_model_over_budget(const struct mm_model *mm)
{
	return mm->over_budget;
}

void mm_zero_table(struct mm_model *mm, struct mm_thread *t, uint64_t pa)
{
	struct pt_event ev = { .kind = PT_EV_PT_ZERO, .pa = pa };
	mm_emit(mm, t, &ev);
}

bool mm_step(struct mm_model *mm, struct mm_thread *t)
{
	if (t->hung)
		return false;
	if (++mm->trace_steps > mm->trace_budget) {
		/* the trace's budget, not the op's: no verdict (the caller rejects the trace) */
		mm->over_budget = true;
		t->hung = true;
		return false;
	}
	if (++t->steps <= t->bound)
		return true;
	t->hung = true;
	pt_checker_report(mm->c, PT_I11, "step-bound",
			  "A page-table routine makes progress: the operation exceeded its step bound (e.g. a loop "
			  "that advances by 0 entries).",
			  0, 0, 0, 0, NULL, "%s exceeded its bound of %llu loop steps", t->site ? t->site : "op",
			  (unsigned long long)t->bound);
	return false;
}

/* Would n mm_step() calls in a row all succeed?  (Nothing taken.) */
static bool steps_fit(const struct mm_model *mm, const struct mm_thread *t, uint64_t n)
{
	return !t->hung && mm->trace_steps + n <= mm->trace_budget && t->steps + n <= t->bound;
}

/*
 * Can a run of n events with `steps` loop steps among them go at once, as far as the steps go?
 * The steps are checked first and the scheduling points taken next (run_ok()): if no thread can
 * run at any point, none can see the steps taken early (run_steps()).  Per-entry debug lines
 * need the events one by one.
 */
static bool run_fits(const struct mm_model *mm, const struct mm_thread *t, unsigned n, unsigned steps)
{
	return PTFUZZ_DEBUG < PT_DBG_ENTRY && mm->sink.emit_run && !mm->no_runs && n >= 2 && steps_fit(mm, t, steps);
}

static void run_steps(struct mm_model *mm, struct mm_thread *t, unsigned steps)
{
	mm->trace_steps += steps;
	t->steps += steps;
}

/* A run of n (step, event) pairs at once, the events' points of kind on. */
static bool run_ok(struct mm_model *mm, struct mm_thread *t, unsigned on, unsigned n, unsigned steps)
{
	if (!run_fits(mm, t, n, steps) || !mm_sched_points(mm, t, on, n))
		return false;
	run_steps(mm, t, steps);
	return true;
}

/* A run of n stores at once, with `steps` loop steps and `reads` reads among them, each store
 * after the reads of its iteration: the last point is a store's. */
static bool store_run_ok(struct mm_model *mm, struct mm_thread *t, unsigned n, unsigned steps, unsigned reads)
{
	if (!run_fits(mm, t, n, steps) || !mm_sched_points_last(mm, t, PT_SCHED_READ, reads, PT_SCHED_PT_WRITE, n))
		return false;
	run_steps(mm, t, steps);
	return true;
}

/* n stores to the entries from entry_pa on, with `steps` loop steps and `reads` reads among them */
bool mm_write_run(struct mm_model *mm, struct mm_thread *t, uint64_t entry_pa, const uint64_t *vals, unsigned n,
		  unsigned steps, unsigned reads)
{
	if (!store_run_ok(mm, t, n, steps, reads))
		return false;
	struct pt_event ev = { .kind = PT_EV_PT_WRITE, .cpu = (uint16_t)t->cpu, .pa = entry_pa, .val = vals[0] };
	mm->sink.emit_run(mm->sink.ctx, &ev, vals, n);
	return true;
}

bool mm_step_write_run(struct mm_model *mm, struct mm_thread *t, uint64_t entry_pa, const uint64_t *vals,
		       unsigned n)
{
	return mm_write_run(mm, t, entry_pa, vals, n, n, 0);
}

/* n (read, clear) pairs of the entries from entry_pa on, with `steps` loop steps among them */
static bool clear_run(struct mm_model *mm, struct mm_thread *t, uint64_t entry_pa, uint64_t *old, unsigned n,
		      unsigned steps)
{
	static const uint64_t zeros[PT_PTRS];
	if (n > PT_PTRS || !store_run_ok(mm, t, n, steps, n))
		return false;
	/* each read is of an entry no store of the run has touched yet: all of them first */
	mm_peek(mm, entry_pa, old, n);
	struct pt_event ev = { .kind = PT_EV_PT_WRITE, .cpu = (uint16_t)t->cpu, .pa = entry_pa };
	mm->sink.emit_run(mm->sink.ctx, &ev, zeros, n);
	return true;
}

bool mm_step_clear_run(struct mm_model *mm, struct mm_thread *t, uint64_t entry_pa, uint64_t *old, unsigned n)
{
	return n && clear_run(mm, t, entry_pa, old, n, n - 1);
}

bool mm_step_clear_each_run(struct mm_model *mm, struct mm_thread *t, uint64_t entry_pa, uint64_t *old, unsigned n)
{
	return clear_run(mm, t, entry_pa, old, n, n);
}

void mm_free_pages_run(struct mm_model *mm, struct mm_thread *t, uint64_t pa, unsigned order, unsigned n)
{
	if (!run_ok(mm, t, PT_SCHED_PAGE_FREE, n, 0)) {
		for (unsigned i = 0; i < n; i++)
			mm_free_pages(mm, t, pa + ((uint64_t)i << (PAGE_SHIFT + order)), order);
		return;
	}
	struct pt_event ev = { .kind = PT_EV_PAGE_FREE, .cpu = (uint16_t)t->cpu, .pa = pa, .order = (uint8_t)order };
	mm->sink.emit_run(mm->sink.ctx, &ev, NULL, n);
	/* no other thread ran in between to allocate: the free lists may take them after */
	free_push_run(mm, order, pa, n);
}

bool mm_step_access_run(struct mm_model *mm, struct mm_thread *t, uint64_t va, uint16_t asid, uint8_t flags,
			unsigned n)
{
	if (!run_ok(mm, t, PT_SCHED_ACCESS, n, n))
		return false;
	struct pt_event ev = { .kind = PT_EV_ACCESS, .cpu = (uint16_t)t->cpu, .va = va, .asid = asid, .flags = flags };
	mm->sink.emit_run(mm->sink.ctx, &ev, NULL, n);
	return true;
}

const char *mm_site(struct mm_model *mm, struct mm_thread *t, const char *site)
{
	const char *prev = t->site;
	if (site && site != prev)
		pt_dbg(PT_DBG_LEVEL, "cpu%u tid=%u %s", t->cpu, t->tid, site);
	t->site = site;
	pt_checker_set_site(mm->c, site);
	return prev;
}

void mm_warn(struct mm_model *mm, struct mm_thread *t, const char *tag, uint64_t va, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	(void)t;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	pt_checker_report(mm->c, PT_I9, tag, RULE_CONTRACT, va, 0, 0, 0, NULL, "%s", what);
}

/* ---- geometry ---- */

uint64_t mm_pgd_entry(struct mm_space *s, uint64_t va)
{
	return pt_entry_pa(s->pgd, 0, va);
}

uint64_t mm_walk_entry(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t va, unsigned level)
{
	uint64_t table = s->pgd;
	for (unsigned l = 0; l < level; l++) {
		uint64_t e = mm_read(mm, t, pt_entry_pa(table, l, va));
		if (!pte_valid(e) || !pmd_table(e))
			return 0;
		table = desc_pa(e);
	}
	return pt_entry_pa(table, level, va);
}

/* ---- __pte_alloc() / __pmd_alloc() / __pud_alloc() (mm/memory.c) ---- */

uint64_t mm_table_alloc_install(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t entry_pa,
				unsigned child_level)
{
	/* __pte_alloc()/__pmd_alloc()/__pud_alloc(): a zeroed table, smp_wmb() so that its
	 * zeroing is ordered before it is published, then populate under the lock */
	uint64_t table = mm_alloc_table(mm, t, child_level);
	bool pte_level = child_level == 3;
	enum pt_lock_class cls = pte_level && !s->kernel ? PT_LOCK_PMD : PT_LOCK_PUD;
	uint64_t key = pte_level && !s->kernel ? (entry_pa & PAGE_MASK) : s->asid;
	mm_dmb(mm, t, PT_BAR_ISHST);
	mm_lock(mm, t, cls, key, true);
	uint64_t cur = mm_read(mm, t, entry_pa);
	if (pte_none(cur)) {
		if (child_level == 1)
			set_pgd(mm, t, entry_pa, table | PMD_TYPE_TABLE);
		else
			set_pmd(mm, t, entry_pa, table | PMD_TYPE_TABLE);
		mm_unlock(mm, t, cls, key);
		return table;
	}
	mm_unlock(mm, t, cls, key);
	mm_free_table(mm, t, table);	/* someone else populated it */
	return desc_pa(cur);
}

/* ---- address spaces ---- */

#define LOG2_DEPOSIT 6

struct mm_space *mm_kernel(struct mm_model *mm, struct mm_thread *t)
{
	struct mm_space *k = &mm->kernel;
	if (!k->pgd) {
		/* swapper_pg_dir exists before any thread runs (boot): as for a user mm in
		 * mm_space_get(), its creation is no point where threads interleave, or a thread
		 * suspended in it would come back and install a second root over the tables another
		 * thread's kernel op hooked into the first */
		struct mm_thread *running = mm->running;
		mm->running = NULL;
		k->kernel = true;
		k->pgd = mm_alloc_table(mm, t, 0);
		mm_dsb(mm, t, PT_BAR_ISHST);
		for (unsigned c = 0; c < mm->ncpus; c++) {
			struct pt_event ev = { .kind = PT_EV_TTBR1, .pa = k->pgd };
			mm_emit(mm, &mm->thread[c], &ev);
		}
		mm_isb(mm, t);
		mm->running = running;
	}
	return k;
}

void mm_switch_to(struct mm_model *mm, struct mm_thread *t, struct mm_space *s)
{
	if (s->kernel || mm->cur_asid[t->cpu] == s->asid)
		return;
	struct pt_event ev = { .kind = PT_EV_TTBR0, .pa = s->pgd, .asid = s->asid };
	mm_emit(mm, t, &ev);
	mm_isb(mm, t);
	mm->cur_asid[t->cpu] = s->asid;
}

struct mm_space *mm_space_get(struct mm_model *mm, struct mm_thread *t, uint16_t asid)
{
	if (!asid)
		asid = 1;
	for (uint32_t i = 0; i < mm->nspace; i++)
		if (mm->space[i]->asid == asid) {
			mm_switch_to(mm, t, mm->space[i]);
			return mm->space[i];
		}
	struct mm_space *s;
	if (mm->nspace < mm->capspace) {
		s = mm->space[mm->nspace];	/* kept by mm_model_reset(), already empty */
	} else {
		if (!(s = calloc(1, sizeof(*s))))
			abort();
		ref_map_init(&s->ref);
		mm->space = realloc(mm->space, (mm->capspace + 1) * sizeof(*mm->space));
		if (!mm->space)
			abort();
		mm->space[mm->capspace++] = s;
	}
	mm->nspace++;
	s->asid = asid;
	/* pgd_alloc(): a zeroed root, visible before TTBR0 points at it.  The mm exists before any
	 * thread runs in it (fork/exec made it): its creation is no point where threads interleave,
	 * or a second thread would create the same address space again */
	struct mm_thread *running = mm->running;
	mm->running = NULL;
	s->pgd = mm_alloc_table(mm, t, 0);
	mm_dsb(mm, t, PT_BAR_ISHST);
	mm->running = running;
	mm_switch_to(mm, t, s);
	return s;
}

/* ---- the model ---- */

/* What mm_model_new() and mm_model_reset() both set: the machine's CPUs and the allocator. */
static void model_init(struct mm_model *mm)
{
	mm->ncpus = pt_machine_cpus(mm->m);
	mm->nnodes = 2;
	for (unsigned n = 0; n < 8; n++)
		mm->bump[n] = PHYS_BASE + ((uint64_t)n << 34);
	for (unsigned i = 0; i < mm->ncpus; i++) {
		mm->thread[i].tid = i;
		mm->thread[i].cpu = i;
		mm->thread[i].budget = UINT64_MAX;
		mm->on_cpu[i] = &mm->thread[i];
		mm->cpu_tid[i] = i;
	}
	mm->kernel.kernel = true;
	mm->next_anon_id = 1;
	mm->ntables = 0;
	mm->capacity = MM_CAPACITY;
	mm->trace_steps = 0;
	mm->trace_budget = MM_TRACE_ALLOWANCE;
	mm->per_op = MM_TRACE_PER_OP;
	mm->over_budget = false;
}

struct mm_model *mm_model_new(struct pt_machine *m, struct pt_checker *c, const struct mm_sink *sink)
{
	struct mm_model *mm = calloc(1, sizeof(*mm));
	if (!mm)
		abort();
	mm->m = m;
	mm->c = c;
	mm->sink = *sink;
	for (unsigned k = 0; k < PT_EV_MMAP; k++)
		if (!mm->sink.emit_kind[k])
			mm->sink.emit_kind[k] = sink->emit;
	ref_map_init(&mm->kernel.ref);
	hmap_init(&mm->deposit, LOG2_DEPOSIT);
	mm_sched_init(mm);
	model_init(mm);
	return mm;
}

/* A space as a new one is before its pgd: no VMAs, an empty reference map (allocations kept). */
static void space_reset(struct mm_space *s)
{
	s->asid = 0;
	s->pgd = 0;
	s->nvma = 0;
	s->tlb_flush_pending = 0;
	ref_map_reset(&s->ref);
}

void mm_model_reset(struct mm_model *mm)
{
	/* threads first: their coroutines may be suspended in the middle of an op */
	mm_sched_reset(mm);
	for (unsigned i = 0; i < mm->ncpus; i++) {
		mm->on_cpu[i] = NULL;
		mm->cpu_tid[i] = 0;
		mm->cur_asid[i] = 0;
	}
	mm->running = NULL;
	mm->op_seq = 0;
	space_reset(&mm->kernel);
	/* user spaces stay allocated past nspace, for mm_space_get() to take again */
	for (uint32_t i = 0; i < mm->nspace; i++)
		space_reset(mm->space[i]);
	mm->nspace = 0;
	for (unsigned o = 0; o <= 18; o++)
		mm->nfree[o] = 0;
	mm->free_orders = 0;
	mm->free_runs = false;
	memset(mm->variant, 0, sizeof(mm->variant));
	memset(&mm->res, 0, sizeof(mm->res));
	mm->res_ev = NULL;
	hmap_reset(&mm->deposit, LOG2_DEPOSIT);
	mm->fixmap_pte = 0;
	mm->nvmalloc_null = 0;
	model_init(mm);
}

void mm_model_set_runs(struct mm_model *mm, bool on) { mm->no_runs = !on; }

void mm_model_free(struct mm_model *mm)
{
	if (!mm)
		return;
	mm_sched_free(mm);
	for (uint32_t i = 0; i < mm->capspace; i++) {
		ref_map_destroy(&mm->space[i]->ref);
		free(mm->space[i]->vma);
		free(mm->space[i]);
	}
	free(mm->space);
	ref_map_destroy(&mm->kernel.ref);
	hmap_destroy(&mm->deposit);
	free(mm->kernel.vma);
	for (unsigned o = 0; o <= 18; o++)
		free(mm->freel[o]);
	free(mm);
}

uint64_t mm_model_hash(const struct mm_model *mm)
{
	uint64_t h = 0;
	const struct mm_space *all[1] = { &mm->kernel };
	for (uint32_t i = 0; i <= mm->nspace; i++) {
		const struct mm_space *s = i < mm->nspace ? mm->space[i] : all[0];
		uint64_t x = hmap_mix(s->asid ^ s->pgd);
		for (uint32_t v = 0; v < s->nvma; v++)
			x += hmap_mix(s->vma[v].start ^ hmap_mix(s->vma[v].end ^ s->vma[v].prot));
		x += ref_map_hash(&s->ref);
		h += hmap_mix(x);
	}
	return h;
}
