/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mm_internal.h - what the model's routines share: the model state, the
 * primitives every page-table access goes through, the arm64 pgtable and
 * tlbflush helpers, VMAs and the reference semantics.
 *
 * The one rule: every shared page-table read or write, TLBI, barrier, lock
 * and page allocation goes through an mm_* primitive below.  They are the
 * scheduling points where the concurrency layer interleaves threads, and
 * the only place arch events are produced.  Routines never touch the
 * machine directly.
 */
#ifndef PTFUZZ_MM_INTERNAL_H
#define PTFUZZ_MM_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "hmap.h"
#include "mm.h"

#define PAGE_SHIFT	12
#define PAGE_SIZE	(1ull << PAGE_SHIFT)
#define PAGE_MASK	(~(PAGE_SIZE - 1))
#define PMD_SHIFT	21
#define PMD_SIZE	(1ull << PMD_SHIFT)
#define PMD_MASK	(~(PMD_SIZE - 1))
#define PUD_SHIFT	30
#define PUD_SIZE	(1ull << PUD_SHIFT)
#define PUD_MASK	(~(PUD_SIZE - 1))
#define PGDIR_SHIFT	39
#define PGDIR_SIZE	(1ull << PGDIR_SHIFT)
#define PGDIR_MASK	(~(PGDIR_SIZE - 1))
#define CONT_PTES	16
#define CONT_PTE_SIZE	(CONT_PTES * PAGE_SIZE)
#define CONT_PTE_MASK	(~(CONT_PTE_SIZE - 1))
#define CONT_PMDS	16
#define CONT_PMD_SIZE	(CONT_PMDS * PMD_SIZE)
#define CONT_PMD_MASK	(~(CONT_PMD_SIZE - 1))
#define PTRS_PER_PTE	512

#define ALIGN_DOWN(x, a) ((x) & ~((uint64_t)(a) - 1))
#define ALIGN_UP(x, a) (((x) + (uint64_t)(a) - 1) & ~((uint64_t)(a) - 1))
#define IS_ALIGNED(x, a) (((x) & ((uint64_t)(a) - 1)) == 0)

/* Descriptor templates (arch/arm64/include/asm/pgtable-prot.h, 4K, no LPA2). */
#define MT_NORMAL		0
#define MT_NORMAL_TAGGED	1
#define MT_NORMAL_NC		2
#define MT_DEVICE_nGnRnE	3
#define MT_DEVICE_nGnRE		4
#define PTE_TYPE_PAGE	(PT_DESC_VALID | PT_DESC_TABLE)
#define PMD_TYPE_TABLE	(PT_DESC_VALID | PT_DESC_TABLE)
#define PMD_TYPE_SECT	PT_DESC_VALID
#define PTE_SHARED	(3ull << 8)
#define PROT_DEFAULT	(PT_DESC_AF | PTE_SHARED)
/* PAGE_KERNEL: global, PXN/UXN, normal memory, writable (DBM + dirty) */
#define PAGE_KERNEL	(PROT_DEFAULT | PT_DESC_PXN | PT_DESC_UXN | PT_DESC_DBM | PT_DESC_DIRTY)
/* user pages: nG, EL0 access; RDONLY unless writable+dirty (hardware DBM) */
#define PAGE_USER_BASE	(PROT_DEFAULT | PT_DESC_NG | PT_DESC_USER | PT_DESC_PXN)

/*
 * Kernel VA layout used by the model (48-bit VA, 4K).  VA_BITS is the header's
 * va_bits of every trace the model runs: a trace with lpa2=1 (52-bit VAs) may
 * hold arch-level events only (traces/reader.c refuses its ops-level events).
 * TASK_SIZE is the top of a user address space (TTBR0's 2^VA_BITS bytes),
 * PAGE_OFFSET the first VA of TTBR1's, where the linear map starts (event.h's
 * PT_VA_BITS, PT_USER_VA_END and PT_KERNEL_VA_BASE, which every layer uses).
 */
#define VA_BITS		PT_VA_BITS
#define TASK_SIZE	PT_USER_VA_END
#define VMALLOC_START	0xffff800008000000ull
#define VMALLOC_END	0xfffffbfff0000000ull
#define PAGE_OFFSET	PT_KERNEL_VA_BASE	/* linear map */
#define FIXADDR_TOP	0xfffffbfffe800000ull
#define KERNEL_TEXT_VA	0xffff800008010000ull	/* in the kernel image, at VMALLOC_START (KIMAGE_VADDR): no model op maps it */
#define PHYS_BASE	0x80000000ull		/* first physical address the allocator hands out */

/* ---- variants: decision points that the bug zoo switches (issue: races and the bug zoo) ---- */
enum mm_variant_id {
	MMV_NONE = 0,
	MMV_MREMAP_PMD_NO_RMAP_LOCK, MMV_MREMAP_PUD_NO_RMAP_LOCK, MMV_MREMAP_LEAF_ONLY_FLUSH,
	MMV_MREMAP_DST_NOT_NONE, MMV_MREMAP_FLUSH_AFTER_PTL_DROP,
	MMV_VUNMAP_CONTPTE_SINGLE_CLEAR, MMV_VUNMAP_NO_ALIGN_DOWN,
	MMV_LAZY_MMU_NO_FLUSH_ON_LEAVE, MMV_LAZY_MMU_IRQ, MMV_SWITCH_TO_NO_DSB, MMV_SET_PTES_NO_BARRIER,
	MMV_HUGETLB_BBM_ELIDE_FIRST_ONLY, MMV_HUGETLB_USER_FLUSH_FOR_KERNEL, MMV_KERNEL_PGTABLE_FLUSH_NO_ISB,
	MMV_HUGETLB_WRONG_STRIDE, MMV_MPROTECT_NUMA_ZERO_STEP, MMV_MPROTECT_BATCH_OVERRUN,
	MMV_PGTABLE_NO_ZERO_DSB, MMV_PGTABLE_FIXMAP_NO_FLUSH, MMV_CONTPTE_NO_UNFOLD,
	MMV_TLB_TTL_FREED_TABLES, MMV_ANON_FOLIO_PAST_VMA,
	/* baselines: correct but costlier pre-patch logic */
	MMV_VMALLOC_PRE_CONTPTE, MMV_VMALLOC_NO_LAZY_MMU, MMV_PGTABLE_FIXMAP_TWICE, MMV_MREMAP_NO_MOVE_PMD,
	MMV_MPROTECT_NO_BATCH, MMV_USER_PRE_CONTPTE, MMV_MREMAP_NO_REALIGN, MMV_UNMAPPED_AREA_NO_THP_ALIGN,
	MMV_COUNT
};

/* ---- model state ---- */

struct mm_vma {
	uint64_t start, end;
	uint8_t prot;		/* PT_PROT_* */
	uint8_t order;		/* folio order faults use: 0 (4K), 4 (64K mTHP, contpte), 9 (2M THP) */
	uint32_t flags;		/* MM_VMA_* */
	uint64_t anon_id;	/* the anon_vma (rmap lock key) */
};
#define MM_VMA_HUGEPAGE		0x1u	/* MADV_HUGEPAGE */
#define MM_VMA_NOHUGEPAGE	0x2u
#define MM_VMA_HUGETLB		0x4u
#define MM_VMA_HUGETLB_OWNED	0x100000u	/* the hugetlb op allocated the huge page: its unmap frees it */

/*
 * The reference semantics of a space: va page -> REF_* word (ref.c), kept in
 * 2 MiB chunks of direct-indexed words, so that the faults of a THP or a
 * 64K folio and the per-op check read a few chunks rather than hashing every
 * page, and a reset hands chunks back without clearing them word by word.
 */
struct ref_chunk {
	uint64_t key;			/* va >> PMD_SHIFT */
	uint64_t present[PTRS_PER_PTE / 64];	/* bit i: word i is set */
	uint64_t word[PTRS_PER_PTE];
	/* every word is present and each is the one before plus a page, the output addresses
	 * staying below the top of their field (ref_set_run() of the whole chunk, ref.c) */
	bool linear;
	/* word[] is not written (a whole chunk set at once): word i is first plus i pages (ref.c) */
	bool lazy;
	uint64_t first;
};

/* (va, word) pairs of the reference, as they were (MADV_DONTNEED, memory.c) */
struct ref_snapshot { uint64_t n, cap, *w; };

/* the snapshots of the zaps in flight on a space: at most one per thread */
#define REF_WATCH_MAX	(PT_MAX_CPUS + PT_MAX_THREADS)

/*
 * The translation of consecutive pages, one root-to-leaf walk per subtree
 * instead of one per page: ref_check() reads the page tables and changes
 * nothing, so a walk's result holds for every page its last entry covers,
 * and the PTE table it ended in serves every page of its 2M (ref.c).
 */
struct walk_cache {
	uint64_t lo, hi;		/* [lo, hi): pages whose walk gives `r` (pa rebased), empty if lo == hi */
	struct pt_walk_result r;
	bool mapped;
	uint64_t pte_lo;		/* the PTE table `pte` translates [pte_lo, pte_lo + PMD_SIZE) */
	const uint64_t *pte;		/* NULL: none cached */
	const uint64_t *pte_stored;	/* its entries stored to (pt_machine_table_stored()) */
	uint32_t pte_frame;
	const struct mm_vma *vma;	/* the VMA found last (the VMAs do not change during a check) */
};

struct ref_map {
	struct ref_chunk **chunk;	/* in use: chunk[0..nchunk) */
	uint32_t nchunk, capchunk;	/* chunk[nchunk..capchunk): free, for re-use */
	struct hmap by_key;		/* key -> index in chunk */
	uint32_t last;			/* index of the chunk found last (a cache), UINT32_MAX if none */
	uint64_t count;			/* words set */
	/* snapshots sorted by va whose words a clear of their va forgets (ref_watch()) */
	struct ref_snapshot *watch[REF_WATCH_MAX];
	unsigned nwatch;
	/* the walks of the space's last reference checks and faults (ref_walk()), kept for the
	 * next while the machine's tables stay as they were: table_gen, latest_gen are theirs then */
	struct walk_cache wc;
	uint64_t wc_table_gen, wc_latest_gen;
};

void ref_map_init(struct ref_map *r);
/*! ref_map_reset() : empty, as ref_map_init() leaves it, keeping its chunks. */
void ref_map_reset(struct ref_map *r);
void ref_map_destroy(struct ref_map *r);
/*! ref_map_hash() : an order-independent hash of the words (mm_model_hash()). */
uint64_t ref_map_hash(const struct ref_map *r);
/*!
 * ref_watch() : from now on, a ref_clear_range() of a va in x (sorted by va) zeroes x's word
 * for it, whoever clears it: what x remembers of a page is then no longer the page there.
 * ref_unwatch() ends it.
 */
void ref_watch(struct ref_map *r, struct ref_snapshot *x);
void ref_unwatch(struct ref_map *r, struct ref_snapshot *x);

/* An address space: a user mm (per ASID) or init_mm (the kernel). */
struct mm_space {
	uint16_t asid;
	bool kernel;
	uint64_t pgd;			/* root table physical address */
	struct mm_vma *vma;		/* sorted, non-overlapping */
	uint32_t nvma, capvma;
	uint32_t vma_hint;		/* find_vma()'s last answer, or vma_span()'s (an index, checked before use) */
	struct ref_map ref;		/* reference semantics: va page -> REF_* word (see ref.c) */
	unsigned tlb_flush_pending;	/* mm->tlb_flush_pending: mmu_gathers not yet finished */
};

struct coro;

struct mm_thread {
	uint32_t tid;
	unsigned cpu;
	/* concurrency (sched.c): a thread created by a `thread` event runs its queued ops on its
	 * own stack, suspended at every scheduling point (the mm_* primitives) */
	bool scheduled;
	struct mm_model *owner;
	struct coro *co;
	struct pt_event *queue;		/* ops-level events waiting to run */
	uint64_t *qseq;			/* the order each was issued in (mm_model.op_seq) */
	uint32_t qhead, qn, qcap;
	uint64_t cur_seq;		/* that of the op running (or waiting) */
	uint64_t budget;		/* scheduling points left in this slice (UINT64_MAX: unlimited) */
	unsigned budget_on;		/* enum pt_sched_on: which points count */
	bool blocked;			/* waiting for a lock */
	bool busy;			/* in the middle of an op */
	/* a CPU's built-in thread running direct ops on its own stack because another thread
	 * was suspended mid-op when they were issued: they may have to wait for its locks */
	bool implicit;
	int rc;				/* what the last op it ran returned */
	uint64_t steps_total;		/* scheduling points passed, ever */
	bool lazy_mmu;			/* TIF_LAZY_MMU */
	bool lazy_pending;		/* TIF_LAZY_MMU_PENDING */
	unsigned irq_depth;		/* in_interrupt() */
	uint64_t steps, bound;		/* loop steps of the current op, and its bound (I11) */
	bool hung;			/* the bound was exceeded: routines unwind */
	const char *site;		/* the routine running (signatures) */
	const struct pt_event *op_ev;	/* the op running (or waiting), and its address space */
	struct mm_space *op_space;
};

#define MM_MAX_THREADS PT_MAX_THREADS	/* the reader refuses more (PT_ERR_REF) */
#define MM_IDLE_TID PT_TID_IDLE

struct mm_model {
	struct pt_machine *m;
	struct pt_checker *c;
	struct mm_sink sink;
	bool no_runs;		/* mm_model_set_runs(false): every event through sink.emit */
	unsigned ncpus;
	struct mm_thread thread[PT_MAX_CPUS];	/* the implicit thread of each CPU (tid = cpu) */
	struct mm_thread *extra[MM_MAX_THREADS];	/* threads created by `thread` events beyond those */
	unsigned nextra;
	struct mm_thread *on_cpu[PT_MAX_CPUS];	/* the thread ops-level events of a CPU go to */
	uint32_t cpu_tid[PT_MAX_CPUS];		/* the thread the machine last saw switched in */
	struct mm_thread *running;		/* the thread executing on its own stack, or NULL */
	unsigned nbusy;				/* threads in the middle of an op (busy) */
	bool started;				/* a thread was scheduled (start_thread()) since the reset */
	uint64_t op_seq;			/* ops queued so far */
	struct coro *main_co;
	/* coroutines (with their 256 KiB stacks) of the threads of sessions before a reset,
	 * for the next threads to run on */
	struct coro *co_pool[PT_MAX_CPUS + MM_MAX_THREADS];
	unsigned nco_pool;
	struct mm_space kernel;
	struct mm_space **space;		/* user spaces, by index */
	uint32_t nspace;
	uint32_t capspace;			/* allocated spaces: those past nspace are empty, for re-use */
	uint16_t cur_asid[PT_MAX_CPUS];	/* ASID in TTBR0 of each CPU, 0 = none */
	/* physical allocator: per order free lists and a bump pointer per node */
	uint64_t *freel[19];
	uint32_t nfree[19], capfree[19];
	uint32_t free_orders;			/* bit o set iff nfree[o] > 0 */
	bool free_runs;				/* freel[0] may hold runs of pages (phys_alloc()) */
	uint64_t bump[8];
	unsigned nnodes;
	uint64_t next_anon_id;
	uint64_t ntables;			/* page tables allocated and not freed (mm_work()) */
	uint64_t capacity;			/* MM_CAPACITY unless mm_model_set_limits() */
	uint64_t trace_steps, trace_budget;	/* loop steps of the trace so far, and its budget */
	uint64_t per_op;			/* what each ops-level event adds to the budget */
	bool over_budget;			/* past it: the model stopped */
	bool variant[MMV_COUNT];
	struct hmap deposit;		/* pmd entry pa -> deposited PTE table of a THP (pgtable_trans_huge_deposit) */
	/* linear map / fixmap state (seed 003) */
	uint64_t fixmap_pte;		/* the fixmap PTE table */
	/* the VAs of vmalloc calls that failed (returned NULL): a later `vfree` of one frees what
	 * the caller got, NULL (vmalloc.c); a ring, the oldest forgotten first */
	uint64_t vmalloc_null[64];
	unsigned nvmalloc_null;
	/* the result of the ops-level event mm_model_op() runs (mm_model_op_result()) */
	struct mm_op_result res;
	const struct pt_event *res_ev;	/* that event, while it runs */
};

/* ---- primitives (scheduling points) ---- */

/*! mm_thread_of() : the thread that runs ev (one per CPU for now). */
struct mm_thread *mm_thread_of(struct mm_model *mm, const struct pt_event *ev);
void mm_emit(struct mm_model *mm, struct mm_thread *t, struct pt_event *ev);
void mm_text_fetch(struct mm_model *mm, struct mm_thread *t);
/*! mm_sched_point() : a scheduling point of kind `on` (sched.c): the thread may be suspended here. */
void mm_sched_point(struct mm_model *mm, struct mm_thread *t, unsigned on);
/*! mm_sched_points() : n points of kind `on` at once when no other thread could run at any of
 * them (then true); otherwise false and none taken (sched.c). */
bool mm_sched_points(struct mm_model *mm, struct mm_thread *t, unsigned on, uint64_t n);
/*! mm_sched_points_last() : the same for n points of kind `on` and nlast of kind `last`, in any
 * order, but for the last of them, which is of kind `last` (sched.c): n (on, last) pairs among
 * them. */
bool mm_sched_points_last(struct mm_model *mm, struct mm_thread *t, unsigned on, uint64_t n, unsigned last,
			  uint64_t nlast);
/*! mm_wait_lock() : block (yield) until lock (cls, key) can be taken by t (sched.c). */
void mm_wait_lock(struct mm_model *mm, struct mm_thread *t, enum pt_lock_class cls, uint64_t key, bool write);
int mm_run_op(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev);
/*! mm_run_direct() : run a direct op (t is its CPU's unscheduled built-in thread) as a real CPU
 * would: at once, or, if it must wait for a lock a suspended thread holds, as soon as it is free. */
int mm_run_direct(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev);
void mm_sched_init(struct mm_model *mm);
void mm_sched_free(struct mm_model *mm);
/*! mm_sched_reset() : drop every thread's coroutine, queue and state (threads may be mid-op). */
void mm_sched_reset(struct mm_model *mm);
/* READ_ONCE of a page-table entry at physical address entry_pa (program order) */
uint64_t mm_read(struct mm_model *mm, struct mm_thread *t, uint64_t entry_pa);
/*! mm_peek() : old[i] = what mm_read() of entry entry_pa + 8 * i gives now, for i < n, without
 * their scheduling points: only for a run that takes them after (mm_write_run()'s reads). */
void mm_peek(struct mm_model *mm, uint64_t entry_pa, uint64_t *old, unsigned n);
/*! mm_entry_at() : entry i of the entries from entry_pa on (an entry's address, 8-aligned) as
 * mm_read() sees it (0 where no table is), without its scheduling point, for entries read in
 * order with nothing between them: *latest is the latest entries of the page entry i - 1 was in
 * (NULL: no table), looked up again at i == 0 and at a page's start. */
static inline uint64_t mm_entry_at(struct mm_model *mm, uint64_t entry_pa, unsigned i, const uint64_t **latest)
{
	uint64_t pa = entry_pa + 8ull * i;
	if (i == 0 || !(pa & (PAGE_SIZE - 1))) {
		uint32_t f = pt_machine_lookup(mm->m, pa);
		*latest = f == PT_NO_FRAME ? NULL : pt_machine_table_latest(mm->m, f);
	}
	return *latest ? (*latest)[(pa >> 3) & (PTRS_PER_PTE - 1)] : 0;
}
/*! mm_read_until_present() : mm_read() of the entries from entry_pa on until one is not none,
 * at most n.  @return : the index of that one, or n if all n are none. */
unsigned mm_read_until_present(struct mm_model *mm, struct mm_thread *t, uint64_t entry_pa, unsigned n);
/* WRITE_ONCE of a page-table entry */
void mm_write(struct mm_model *mm, struct mm_thread *t, uint64_t entry_pa, uint64_t val);
/* xchg / cmpxchg-style get_and_clear: returns the old value, stores val */
uint64_t mm_xchg(struct mm_model *mm, struct mm_thread *t, uint64_t entry_pa, uint64_t val);
void mm_dsb(struct mm_model *mm, struct mm_thread *t, enum pt_barrier dom);
void mm_dmb(struct mm_model *mm, struct mm_thread *t, enum pt_barrier dom);
void mm_isb(struct mm_model *mm, struct mm_thread *t);
/* one TLBI; va is the VA (not Xt), ttl the level hint (0: none), num/scale for range forms */
void mm_tlbi(struct mm_model *mm, struct mm_thread *t, enum pt_tlbi op, uint64_t va, uint16_t asid,
	     unsigned ttl, unsigned num, unsigned scale);
void mm_lock(struct mm_model *mm, struct mm_thread *t, enum pt_lock_class cls, uint64_t key, bool write);
void mm_unlock(struct mm_model *mm, struct mm_thread *t, enum pt_lock_class cls, uint64_t key);
void mm_vmap_area(struct mm_model *mm, struct mm_thread *t, enum pt_vmap_area_ev what, uint64_t va, uint64_t len);
/* the page allocator; tables come zeroed (__GFP_ZERO: zeroing by this CPU, ordered by its next barrier) */
uint64_t mm_alloc_table(struct mm_model *mm, struct mm_thread *t, unsigned level);
uint64_t mm_alloc_table_nozero(struct mm_model *mm, struct mm_thread *t, unsigned level);
uint64_t mm_alloc_pages(struct mm_model *mm, struct mm_thread *t, unsigned order, unsigned node);
void mm_free_pages(struct mm_model *mm, struct mm_thread *t, uint64_t pa, unsigned order);
/*! mm_free_pages_run() : n mm_free_pages() of the blocks of 2^order pages from pa on, in a row. */
void mm_free_pages_run(struct mm_model *mm, struct mm_thread *t, uint64_t pa, unsigned order, unsigned n);
void mm_free_table(struct mm_model *mm, struct mm_thread *t, uint64_t pa);
/* clear_page() of a table through its kernel address (pt_zero event) */
void mm_zero_table(struct mm_model *mm, struct mm_thread *t, uint64_t pa);
/*! mm_step() : one iteration of a per-entry loop; false once the op's step bound is exceeded (I11 reported). */
bool mm_step(struct mm_model *mm, struct mm_thread *t);
/*!
 * mm_step_write_run() : n iterations of a loop that stores vals[i] to entry entry_pa + 8 * i
 * and does nothing else (set_ptes()), taken at once: the same steps, scheduling points and
 * stores as n (mm_step(), mm_write()) pairs, when all n steps are within the bounds and no
 * other thread could run in between.  @return : false if not (nothing done: loop one by one).
 */
bool mm_step_write_run(struct mm_model *mm, struct mm_thread *t, uint64_t entry_pa, const uint64_t *vals,
		       unsigned n);
/*! mm_write_run() : the same for n mm_write() calls with `steps` mm_step() calls and `reads`
 * mm_read() calls among them and nothing else (the steps are all taken first, as run one by one
 * they would all succeed); the caller has the reads' values from mm_peek() before, as no other
 * thread can store in between, and none of them is of an entry a store of the run changed. */
bool mm_write_run(struct mm_model *mm, struct mm_thread *t, uint64_t entry_pa, const uint64_t *vals, unsigned n,
		  unsigned steps, unsigned reads);
/*! mm_step_clear_run() : the same for __get_and_clear_full_ptes()'s loop: entry 0 read and
 * cleared, then n - 1 (mm_step(), read, clear) of the next ones; old[i] gets what entry i held. */
bool mm_step_clear_run(struct mm_model *mm, struct mm_thread *t, uint64_t entry_pa, uint64_t *old, unsigned n);
/*! mm_step_clear_each_run() : the same for n (mm_step(), read, clear) of entries from entry_pa on. */
bool mm_step_clear_each_run(struct mm_model *mm, struct mm_thread *t, uint64_t entry_pa, uint64_t *old, unsigned n);
/*! mm_step_access_run() : the same for n (mm_step(), access of page va + 4K * i) pairs (a touch). */
bool mm_step_access_run(struct mm_model *mm, struct mm_thread *t, uint64_t va, uint16_t asid, uint8_t flags,
			unsigned n);
/*
 * The model's capacity (README "Limits"): what it holds at once, counted in units of work a
 * routine may have to do on it: one per 4K page the reference semantics track, 512 per page
 * table (the entries a walk of it visits).  An op that would take the total past
 * MM_CAPACITY fails with ENOMEM before it maps anything (vmalloc() and vmap() return NULL,
 * a fault is VM_FAULT_OOM), so that every op's work, the op's step bound and the memory of
 * a whole trace stay bounded whatever the lengths a trace asks for: 2^20 units, 4 GiB of
 * 4K pages mapped, about 200 MB of model state.
 */
#define MM_CAPACITY (1ull << 20)
/*! mm_work() : the capacity in use now (every address space, and the page tables). */
uint64_t mm_work(const struct mm_model *mm);
/*! mm_capacity_ok() : whether `units` more fit in the capacity. */
bool mm_capacity_ok(const struct mm_model *mm, uint64_t units);
/*! mm_map_units() : the capacity a mapping of `size` bytes of 4K reference pages takes, with
 * its page tables, each spanning `span` bytes (PMD_SIZE for PTE tables), at most. */
static inline uint64_t mm_map_units(uint64_t size, uint64_t span)
{
	return (size >> 12) + 512 * (size / span + 3);
}
/*! mm_site() : set the routine name used in signatures; returns the previous one. */
const char *mm_site(struct mm_model *mm, struct mm_thread *t, const char *site);
struct mm_site_scope {
	struct mm_model *mm;
	struct mm_thread *t;
	const char *prev;
};
static inline void mm_site_restore(struct mm_site_scope *sc) { mm_site(sc->mm, sc->t, sc->prev); }
/*!
 * mm_site_scoped() : mm_site() for the rest of the enclosing block: the previous site comes
 * back when the block is left, by whichever return (the shape of guard() in
 * include/linux/cleanup.h), so that a routine needs no `out:` label for it.  One per block.
 */
#define mm_site_scoped(mm, t, site)								\
	struct mm_site_scope mm_site_scope_ __attribute__((cleanup(mm_site_restore), unused)) = \
		{ (mm), (t), mm_site((mm), (t), (site)) }
static inline bool mm_variant(const struct mm_model *mm, enum mm_variant_id v) { return mm->variant[v]; }
/* a call of the kernel function `kev` names (enum pt_kernel_ev), for mm_model_op_result() */
static inline void mm_kernel_call(struct mm_model *mm, unsigned kev) { mm->res.calls[kev]++; }
/* I9 (a contract the kernel WARNs about) and I10 (semantics) reports from the model */
void mm_warn(struct mm_model *mm, struct mm_thread *t, const char *tag, uint64_t va, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/*!
 * MM_WARN_ON() : the shape of the kernel's WARN_ON_ONCE(): cond, reported through mm_warn()
 * (I9: tag, va and the message) when it holds, so that "warn and fall back" reads
 * `if (MM_WARN_ON(mm, t, !pmd_none(pmd), "tag", va, "fmt", ...)) return false;`.
 * Every occurrence is reported (the oracle counts them), not only the first.
 */
#define MM_WARN_ON(mm, t, cond, tag, va, ...) \
	((cond) ? (mm_warn((mm), (t), (tag), (va), __VA_ARGS__), true) : false)

/* ---- page-table geometry ---- */

static inline unsigned pt_index(uint64_t va, unsigned level)
{
	return (unsigned)((va >> (PAGE_SHIFT + 9 * (3 - level))) & 511);
}
/* physical address of the entry for va in the level-`level` table at table_pa */
static inline uint64_t pt_entry_pa(uint64_t table_pa, unsigned level, uint64_t va)
{
	return table_pa + 8ull * pt_index(va, level);
}
static inline uint64_t pt_next_addr(uint64_t addr, uint64_t end, uint64_t size)
{
	uint64_t boundary = (addr + size) & ~(size - 1);
	return boundary - 1 < end - 1 ? boundary : end;
}
#define pgd_addr_end(a, e) pt_next_addr(a, e, PGDIR_SIZE)
#define pud_addr_end(a, e) pt_next_addr(a, e, PUD_SIZE)
#define pmd_addr_end(a, e) pt_next_addr(a, e, PMD_SIZE)

static inline bool pte_none(uint64_t d) { return d == 0; }
static inline bool pte_valid(uint64_t d) { return d & PT_DESC_VALID; }
static inline bool pte_present(uint64_t d) { return (d & PT_DESC_VALID) || (d & PT_DESC_PROTNONE); }
static inline bool pte_cont(uint64_t d) { return d & PT_DESC_CONT; }
static inline bool pte_valid_not_user(uint64_t d)
{
	return (d & (PT_DESC_VALID | PT_DESC_USER | PT_DESC_UXN)) == (PT_DESC_VALID | PT_DESC_UXN);
}
static inline bool pmd_table(uint64_t d) { return (d & 3) == 3; }
static inline bool pmd_sect(uint64_t d) { return (d & 3) == 1; }
static inline uint64_t desc_pa(uint64_t d) { return d & PT_DESC_OA_MASK; }

/* The pte bit helpers of asm/pgtable.h.  PTE_WRITE is the DBM bit; dirty is software dirty, or
 * hardware dirty (DBM set, RDONLY cleared by the CPU). */
static inline bool pte_young(uint64_t pte) { return pte & PT_DESC_AF; }
static inline bool pte_write(uint64_t pte) { return pte & PT_DESC_DBM; }
static inline bool pte_dirty(uint64_t pte)
{
	return (pte & PT_DESC_DIRTY) || ((pte & PT_DESC_DBM) && !(pte & PT_DESC_RDONLY));
}
static inline uint64_t pte_mkyoung(uint64_t pte) { return pte | PT_DESC_AF; }
static inline uint64_t pte_mkold(uint64_t pte) { return pte & ~PT_DESC_AF; }
static inline uint64_t pte_mkdirty(uint64_t pte)
{
	pte |= PT_DESC_DIRTY;
	return pte_write(pte) ? pte & ~PT_DESC_RDONLY : pte;
}
/* pte_mkclean(): a writable (DBM) pte becomes hardware-clean (RDONLY) */
static inline uint64_t pte_mkclean(uint64_t pte)
{
	pte &= ~PT_DESC_DIRTY;
	return pte_write(pte) ? pte | PT_DESC_RDONLY : pte;
}
static inline uint64_t pte_mkwrite(uint64_t pte)
{
	pte |= PT_DESC_DBM;
	return (pte & PT_DESC_DIRTY) ? pte & ~PT_DESC_RDONLY : pte;
}
/* pte_wrprotect(): keep a hardware-dirty state in the software bit, drop write */
static inline uint64_t pte_wrprotect(uint64_t pte)
{
	if (pte_dirty(pte))
		pte |= PT_DESC_DIRTY;
	return (pte & ~PT_DESC_DBM) | PT_DESC_RDONLY;
}
static inline uint64_t pte_advance_pa(uint64_t pte, uint64_t nr) { return pte + nr * PAGE_SIZE; }
/* pte_gather_ad(): pte with the dirty and young state of from added (a contiguous range's
 * access/dirty are those of any of its entries; a hardware update must not be lost) */
static inline uint64_t pte_gather_ad(uint64_t pte, uint64_t from)
{
	if (pte_dirty(from))
		pte = pte_mkdirty(pte);
	if (pte_young(from))
		pte = pte_mkyoung(pte);
	return pte;
}
/*! pte_gather_ad_run() : pte_gather_ad() of pte with from[0], from[1], ... from[n - 1] in turn.
 * pte_mkdirty() and pte_mkyoung() are idempotent, read only pte's DBM (which neither changes)
 * and commute: the result is pte made dirty if any of them is dirty, and young if any is young.
 * Those are found by ORs alone (no branch per entry): hardware-dirty is DBM (bit 51) set with
 * RDONLY (bit 7, shifted up to 51) clear. */
static inline uint64_t pte_gather_ad_run(uint64_t pte, const uint64_t *from, unsigned n)
{
	uint64_t any = 0, hw = 0;
	for (unsigned i = 0; i < n; i++) {
		any |= from[i];
		hw |= from[i] & ~(from[i] << (51 - 7));
	}
	_Static_assert(PT_DESC_DBM == PT_DESC_RDONLY << (51 - 7), "DBM is RDONLY shifted by 44");
	if ((any & PT_DESC_DIRTY) || (hw & PT_DESC_DBM))
		pte = pte_mkdirty(pte);
	if (any & PT_DESC_AF)
		pte = pte_mkyoung(pte);
	return pte;
}

/* Entry physical address of va's PGD/PUD/PMD/PTE entry in space s, walking existing tables
 * (program order); 0 if a level on the way is not a table. */
uint64_t mm_pgd_entry(struct mm_space *s, uint64_t va);
uint64_t mm_walk_entry(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t va,
		       unsigned level);

/* ---- arm64 pgtable.h helpers (each emits what the kernel's does) ---- */

void emit_pte_barriers(struct mm_model *mm, struct mm_thread *t);
void queue_pte_barriers(struct mm_model *mm, struct mm_thread *t);
/*! pte_barriers_deferred() : does queue_pte_barriers() now only leave the barriers pending (no event)? */
bool pte_barriers_deferred(const struct mm_model *mm, const struct mm_thread *t);
void arch_enter_lazy_mmu_mode(struct mm_model *mm, struct mm_thread *t);
void arch_flush_lazy_mmu_mode(struct mm_model *mm, struct mm_thread *t);
void arch_leave_lazy_mmu_mode(struct mm_model *mm, struct mm_thread *t);
void __set_pte(struct mm_model *mm, struct mm_thread *t, uint64_t ptep, uint64_t pte);
void __set_pte_nosync(struct mm_model *mm, struct mm_thread *t, uint64_t ptep, uint64_t pte);
void __set_pte_complete(struct mm_model *mm, struct mm_thread *t, uint64_t pte);
void set_pmd(struct mm_model *mm, struct mm_thread *t, uint64_t pmdp, uint64_t pmd);
void set_pud(struct mm_model *mm, struct mm_thread *t, uint64_t pudp, uint64_t pud);
void set_pgd(struct mm_model *mm, struct mm_thread *t, uint64_t pgdp, uint64_t pgd);
void pmd_clear(struct mm_model *mm, struct mm_thread *t, uint64_t pmdp);
void pud_clear(struct mm_model *mm, struct mm_thread *t, uint64_t pudp);
/* __pte_alloc/__pmd_alloc/__pud_alloc with pmd_install-style ordering; returns the next table's pa */
uint64_t mm_table_alloc_install(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t entry_pa,
				unsigned child_level);
/* user leaf descriptor for pa with VMA protection */
uint64_t mk_user_pte(uint64_t pa, unsigned prot);
uint64_t mk_kernel_pte(uint64_t pa);

/* ---- tlbflush.h (arch/arm64/include/asm/tlbflush.h) ---- */

#define TLBI_TTL_UNKNOWN 0
void flush_tlb_all(struct mm_model *mm, struct mm_thread *t);
void flush_tlb_mm(struct mm_model *mm, struct mm_thread *t, struct mm_space *s);
void __flush_tlb_page_nosync(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t uaddr);
void flush_tlb_page(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t uaddr);
void __flush_tlb_range_nosync(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start,
			      uint64_t end, uint64_t stride, bool last_level, unsigned tlb_level);
void __flush_tlb_range(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start,
		       uint64_t end, uint64_t stride, bool last_level, unsigned tlb_level);
void flush_tlb_range(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start, uint64_t end);
void flush_tlb_kernel_range(struct mm_model *mm, struct mm_thread *t, uint64_t start, uint64_t end);
void __flush_tlb_kernel_pgtable(struct mm_model *mm, struct mm_thread *t, uint64_t kaddr);
/* __flush_tlb_range_op(): the TLBI sequence for [start, start + pages) with range forms */
void __flush_tlb_range_op(struct mm_model *mm, struct mm_thread *t, enum pt_tlbi op, uint64_t start,
			  uint64_t pages, uint64_t stride, uint16_t asid, unsigned tlb_level);

/* ---- address spaces and VMAs ---- */

/*! mm_space_get() : the user space of asid (created, with its pgd and TTBR0, on first use). */
struct mm_space *mm_space_get(struct mm_model *mm, struct mm_thread *t, uint16_t asid);
/*! mm_kernel() : init_mm (created, with its pgd and TTBR1, on first use). */
struct mm_space *mm_kernel(struct mm_model *mm, struct mm_thread *t);
/*! mm_switch_to() : make asid current in TTBR0 of t's CPU (context switch) if it is not. */
void mm_switch_to(struct mm_model *mm, struct mm_thread *t, struct mm_space *s);
/* The index of the first VMA of s that ends above addr (s->nvma if none): the VMAs are sorted
 * and do not overlap, so it is the one containing addr if any, else the first after it. */
static inline uint32_t vma_index_above(const struct mm_space *s, uint64_t addr)
{
	uint32_t lo = 0, hi = s->nvma;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (s->vma[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
struct mm_vma *find_vma(struct mm_space *s, uint64_t addr);	/* the VMA containing addr, or NULL */
/*! vma_insert() : add [start, end) (must not overlap an existing VMA); returns it. */
struct mm_vma *vma_insert(struct mm_space *s, uint64_t start, uint64_t end, unsigned prot, unsigned order,
			  uint32_t flags, uint64_t anon_id);
/*! vma_remove_range() : remove [start, end) from the VMAs, splitting those that straddle it. */
void vma_remove_range(struct mm_space *s, uint64_t start, uint64_t end);
/*! vma_split_range() : split VMAs at start and end so [start, end) is covered by whole VMAs. */
void vma_split_range(struct mm_space *s, uint64_t start, uint64_t end);
/*! vma_merge_range() : merge the VMAs that start inside [start, end] with their predecessor
 * when nothing tells them apart (same protection, folio order, flags and anon_vma). */
void vma_merge_range(struct mm_space *s, uint64_t start, uint64_t end);
/*! range_is_mapped() : every page of [start, end) lies in some VMA. */
bool range_is_mapped(struct mm_space *s, uint64_t start, uint64_t end);
bool range_is_free(struct mm_space *s, uint64_t start, uint64_t end);

/* ---- reference semantics (ref.c): what each op means, per page ---- */

#define REF_PRESENT	0x1ull		/* a page is mapped (else: VMA but not faulted in) */
#define REF_WRITE	0x2ull
#define REF_EXEC	0x4ull
#define REF_READ	0x8ull
#define REF_NUMA	0x10ull		/* PROT_NONE NUMA hint: mapped, inaccessible */
/* the word: page pa | flags */
/*! ref_prot() : the REF_* flags of a present page mapped with PT_PROT_* prot. */
uint64_t ref_prot(unsigned prot);
void ref_set(struct mm_space *s, uint64_t va, uint64_t pa, uint64_t flags);
void ref_set_run(struct mm_space *s, uint64_t va, uint64_t n, uint64_t pa, uint64_t flags);
void ref_clear_range(struct mm_space *s, uint64_t start, uint64_t end);
uint64_t ref_get(const struct mm_space *s, uint64_t va);
/*! ref_for_each() : fn(ctx, va, word) for every page of [start, end) the reference holds. */
void ref_for_each(const struct mm_space *s, uint64_t start, uint64_t end,
		  void (*fn)(void *ctx, uint64_t va, uint64_t word), void *ctx);
void ref_move(struct mm_space *s, uint64_t old, uint64_t new, uint64_t len);
void ref_protect(struct mm_space *s, uint64_t start, uint64_t end, unsigned prot);
/*! ref_walk() : pt_walk() of va in s over the latest tables, answered from the walk cache of the
 * space's reference checks where it holds (ref.c). */
bool ref_walk(struct mm_model *mm, struct mm_space *s, uint64_t va, struct pt_walk_result *r);
/*!
 * ref_check() : after an op, the page tables of s over [start, end) must agree with the
 * reference; a difference is reported as I10 naming the op.  Returns false on mismatch.
 */
bool ref_check(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start, uint64_t end,
	       const char *opname);

/* ---- shared routines ---- */

/*! walk_alloc() : ensure the tables down to `level` exist for addr; the entry pa at that level (0: ENOMEM). */
uint64_t walk_alloc(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr, unsigned level);
/*! handle_mm_fault() : fault in the page at addr (memory.c); 0, or EFAULT outside a VMA / without access. */
int handle_mm_fault(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr, bool write);
/*! user_block_desc() : a user PMD block descriptor for a THP at pa. */
uint64_t mk_user_pmd(uint64_t pa, unsigned prot);

/* a part of a VMA an op works on (a copy: other threads may move s->vma meanwhile) */
struct vma_range {
	uint64_t start, end;
	uint32_t flags;
	unsigned order;
	uint64_t anon_id;	/* the VMA's anon_vma (rmap lock key), 0: none to unlink from */
};
struct mmu_gather;

/* vma.c: munmap */
/*! do_munmap() : unmap [start, start+len) of s: VMAs, page tables, TLB, pages. */
int do_munmap(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start, uint64_t len);
/*! pgtables_floor_ceiling() : free_pgtables()'s floor and ceiling for an unmapped [start, end):
 * the end of the VMA below it and the start of the one above (0: none), with the VMAs gone. */
void pgtables_floor_ceiling(const struct mm_space *s, uint64_t start, uint64_t end, uint64_t *floor,
			    uint64_t *ceiling);
/*! room_get() : an array of n entries of size bytes: room (the caller's, on its stack or in its
 * struct, cap entries) where they fit, else malloc'd; room_free() ends it.  (An op's arrays are
 * mostly small: they then take no allocation.) */
static inline void *room_get(void *room, size_t cap, size_t n, size_t size)
{
	void *v = n <= cap ? room : malloc(n * size);
	if (!v)
		abort();
	return v;
}

/*! room_free() : the end of an array from room_get() (or grown from room onto the heap). */
static inline void room_free(void *v, const void *room)
{
	if (v != room)
		free(v);
}

/*! vmas_in_range() : the parts of VMAs inside [start, end), in order, in *out: room_get() of room
 * (VMA_RANGE_ROOM of them); room_free(*out, room) ends it. */
#define VMA_RANGE_ROOM 8
uint32_t vmas_in_range(struct mm_space *s, uint64_t start, uint64_t end, struct vma_range *room,
		       struct vma_range **out);
/*! ref_check_ranges() : ref_check() over the VMA parts v[0..n) an op emptied and the PMD-sized
 * margins around [start, end), only where mappings were. */
void ref_check_ranges(struct mm_model *mm, struct mm_thread *t, struct mm_space *s,
		      const struct vma_range *v, uint32_t n, uint64_t start, uint64_t end, const char *opname);

/* memory.c: the zap and free_pgtables(), into an mmu_gather (tlb.h) */
void unmap_single_vma(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb, const struct vma_range *v);
/*! free_pgtables() : the tables of the detached VMA parts v[0..n) whose whole range lies in [floor, ceiling). */
void free_pgtables(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb,
		   const struct vma_range *v, uint32_t n, uint64_t floor, uint64_t ceiling);
/*! zap_page_range_single() : MADV_DONTNEED of v: the pages go, the VMA and the page tables stay. */
void zap_page_range_single(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, const struct vma_range *v);

/* rmap.c: madvise_pageout() lives with the reclaim path */
int madvise_pageout(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start, uint64_t end);

/* huge_memory.c: the THP PMD */
/*
 * split_huge_pmd() : if the PMD entry at pmdp (for addr) maps a THP block, split it
 * under pmd_lock (PT_LOCK_PMD, key = PMD table pa): pmdp_invalidate() + PMD-level flush
 * (break), withdraw the deposited PTE table (mm->deposit), fill it with 512 PTEs
 * (set_ptes(): contpte blocks), smp_wmb(), pmd_populate() (make).  Caller holds
 * mmap_lock (or the rmap lock), not the pmd lock.
 * split_huge_pmd_locked() : the same with pmd_lock already held (try_to_unmap_one()).
 * split_huge_pmd_address() : the lockless PMD lookup for addr, then split_huge_pmd().
 * pmd_trans_huge() : a THP PMD (a valid block, or a PROT_NONE/NUMA present-invalid one).
 */
bool pmd_trans_huge(uint64_t pmd);
void split_huge_pmd(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t pmdp, uint64_t addr);
void split_huge_pmd_locked(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr,
			   uint64_t pmdp);
void split_huge_pmd_address(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t addr);
/*! split_huge_pmd_if_needed() : vma_adjust_trans_huge(): a new boundary `address` of the VMA
 * [vm_start, vm_end) inside a THP splits it. */
void split_huge_pmd_if_needed(struct mm_model *mm, struct mm_thread *t, struct mm_space *s,
			      uint64_t vm_start, uint64_t vm_end, uint64_t address);
/*! zap_huge_pmd() : zap the THP at pmdp whole into tlb; false if it is no THP (any more). */
bool zap_huge_pmd(struct mm_model *mm, struct mm_thread *t, struct mmu_gather *tlb, uint64_t pmdp, uint64_t addr);
/*! fault_thp() : do_huge_pmd_anonymous_page(): a 2M folio mapped by one PMD block, its PTE table deposited;
 * 0, or -1 when the tables cannot be allocated. */
int fault_thp(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, struct mm_vma *v, uint64_t haddr);
/*! do_huge_pmd_numa_page() : restore a THP the NUMA scan made PROT_NONE; true if it did. */
bool do_huge_pmd_numa_page(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, struct mm_vma *v,
			   uint64_t haddr);

/* ---- op handlers (ops.c dispatches; each family lives in its own file) ---- */

int mm_do_mmap(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev);
int mm_do_munmap(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev);
int mm_do_madvise(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev);
int mm_do_touch(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev);
int mm_do_pageout(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev);
int mm_do_mremap(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev);
int mm_do_mprotect(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev);
int mm_do_vmalloc(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev);
int mm_do_vmap(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev);
int mm_do_vunmap(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev);
int mm_do_vfree(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev);
int mm_do_map_mem(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev);
int mm_do_hugetlb(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev);

#endif
