/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * machine.h - the arm64 machine model: physical frames, page tables, store
 * visibility, and per-CPU TLBs and walk caches modelled as what the
 * architecture *permits* to be cached (oracle-semantics.md, "What may be
 * cached").
 *
 * Model of the caches.  A translation whose descriptors are visible to the
 * walker is "live": any CPU may hold it at any time, whatever TLBIs ran
 * (it can always be walked again).  When a visible descriptor stops being
 * live (its entry is overwritten, or the table that holds it is unhooked)
 * the translations through it become *stale facts*: they may stay cached
 * by every CPU until a completed TLBI that covers them, issued after the
 * change became visible.  Stale facts are kept explicitly:
 *
 *  - stale leaves: (ASID|global, VA, level, descriptor) — a TLB entry;
 *  - stale positions: a table reachable at (ASID|global, VA range, level)
 *    through a cached walk-cache entry only.  Every valid leaf of such a
 *    table (and of its subtables) may be cached at that VA, with the
 *    table's *current* contents: a walk through the stale walk-cache entry
 *    reads them.
 *
 * A table's positions (live or stale) are where its entries translate;
 * a leaf change in a table materializes a stale leaf at each of them.
 *
 * The machine only applies events and keeps state; the checkers
 * (engine/check) observe through struct pt_observer and the queries below.
 */
#ifndef PTFUZZ_MACHINE_H
#define PTFUZZ_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"

#define PT_LEVELS 4			/* levels 0..3: the 48-bit regime (52-bit adds level -1) */
#define PT_LEVEL_MIN (-1)		/* the first level of the 4K granule with 52-bit VAs (LPA2) */
#define PT_PAGE_SHIFT 12
#define PT_PTRS 512u
#define PT_CONT_PTES 16u		/* CONT_PTES for the 4K granule */
#define PT_CONT_PMDS 16u		/* CONT_PMDS for the 4K granule */
#define PT_NO_FRAME UINT32_MAX

/*
 * Levels are the Arm ARM's: 0..3, and -1 for the 4K granule with 52-bit VAs (FEAT_LPA2, 5
 * levels).  They are int; code that holds one in an unsigned variable passes level -1 as
 * UINT_MAX, which these helpers take back as -1.
 */

/* Bytes translated by one descriptor of a level-`level` table (level -1: 256 TiB). */
static inline uint64_t pt_level_size(int level)
{
	return 1ull << (PT_PAGE_SHIFT + 9 * (3 - level));
}

static inline bool pt_desc_valid(uint64_t d) { return d & PT_DESC_VALID; }
/* A table descriptor: levels -1..2 with bits[1:0] = 0b11. */
static inline bool pt_desc_is_table(uint64_t d, int level)
{
	return level < 3 && (d & 3) == 3;
}
/* A leaf: a valid block (levels 1-2, 0b01) or page (level 3, 0b11).  (FEAT_LPA2 also allows
 * 512 GiB blocks at level 0; Linux never makes them and the model treats them as invalid.)
 * (Both patterns have the valid bit, bit 0: no test of its own, which compilers keep.) */
static inline bool pt_desc_is_leaf(uint64_t d, int level)
{
	return level == 3 ? (d & 3) == 3 : (level > 0 && (d & 3) == 1);
}
/* Output address (or next-level table address) of a descriptor without FEAT_LPA2: OA[47:12]. */
static inline uint64_t pt_desc_oa(uint64_t d) { return d & PT_DESC_OA_MASK; }
/* The same with FEAT_LPA2 (TCR_EL1.DS=1): OA[49:12] in place, OA[51:50] from bits [9:8]. */
static inline uint64_t pt_desc_oa_lpa2(uint64_t d)
{
	return (d & PT_DESC_OA_MASK_LPA2) | (d & PT_DESC_OA_HI_LPA2) << 42;
}
/* The descriptor format of a trace (header lpa2=). */
static inline uint64_t pt_desc_oa_fmt(uint64_t d, bool lpa2)
{
	return lpa2 ? pt_desc_oa_lpa2(d) : pt_desc_oa(d);
}

enum pt_frame_state { PT_FS_FREE = 0, PT_FS_DATA, PT_FS_TABLE };
enum pt_zero_state { PT_ZS_GARBAGE = 0, PT_ZS_PENDING, PT_ZS_ORDERED };

struct pt_table;

struct pt_frame {
	uint64_t pfn;
	uint8_t state;		/* enum pt_frame_state */
	int8_t level;		/* table level, -1..3 (tables) */
	uint8_t order, node;
	uint8_t zero;		/* enum pt_zero_state (tables) */
	uint8_t level_known;
	uint16_t zero_cpu;
	uint64_t page_id;	/* identity of the data page (bumped on each allocation) */
	uint64_t alloc_event;	/* event index of the last allocation */
	struct pt_table *tbl;	/* entries, for tables */
	/* where a table hangs in the latest (program-order) tables, even before a DSB makes the
	 * store that hooked it visible: its space (0 unknown, 1 user, 2 kernel), ASID and VA */
	uint8_t latest_space;
	uint16_t latest_asid;
	uint64_t latest_va;
};

/* A place where a table translates: live (hooked, visible) or stale (walk cache). */
struct pt_pos {
	uint32_t frame;		/* the table */
	uint32_t parent;	/* position it derives from, or UINT32_MAX (root / orphan) */
	uint32_t next;		/* next position of the same table */
	uint16_t asid;
	uint8_t global;
	uint8_t live;
	uint8_t in_use;
	uint16_t by_cpu;	/* CPU whose store made it stale */
	uint64_t va;		/* first VA the table translates */
	uint64_t since;		/* event index at which it became stale */
	uint64_t seq;		/* visibility sequence at which it became stale */
	uint64_t cpumask;	/* CPUs that may hold the walk-cache entry */
	uint32_t op;		/* id of the operation during which it went stale */
	uint32_t stale_idx;	/* index in the stale-position list */
};

/* A stale leaf TLB entry. */
struct pt_fact {
	uint64_t va;
	uint64_t desc;
	uint64_t since, seq, cpumask;
	uint16_t asid;
	uint8_t global, level, in_use;
	uint16_t by_cpu;
	uint32_t op;
};

/* Per-thread state that follows a thread across CPUs. */
struct pt_thread {
	uint32_t tid;
	uint16_t cpu;		/* CPU it runs on, or UINT16_MAX if not running */
	uint8_t in_irq;
};

/* An operation bracket (begin ... end) of one CPU. */
struct pt_opctx {
	bool open;
	uint8_t kind;		/* enum pt_op_kind */
	uint16_t asid;
	uint32_t id;		/* operation id, unique in the trace */
	uint64_t va, len;
	uint64_t begin_event;
	uint64_t steps, bound;
	bool hang_reported;
	uint32_t err;		/* the errno the operation returned (END's err), 0 = success */
};

struct pt_machine;

/*
 * Observer hooks, called by the machine while it applies an event.  The
 * checkers implement them; the machine never depends on what they do.
 */
struct pt_observer {
	/* before a pt_write is applied: entry (table frame, index) goes from `old` (latest) to `new` */
	void (*pt_store)(void *ctx, struct pt_machine *m, uint32_t frame, unsigned idx, uint64_t old,
			 uint64_t new);
	/* after a pt_write is applied to the latest (program-order) tables (its pt_store came last) */
	void (*pt_stored)(void *ctx, struct pt_machine *m, uint32_t frame, unsigned idx, uint64_t old,
			  uint64_t new);
	/*
	 * pt_machine_write_run() is about to make n pt_writes of cpu to entries idx..idx+n-1 of
	 * table frame, of the values vals[0..n-1], none a table descriptor: called once, before
	 * the first (the latest entries still hold the old values).  An observer with this hook
	 * has run_store and run_stored too, and the run's stores call those instead of pt_store
	 * and pt_stored, with k for entry idx + k, unless the hook returns true: the observer
	 * has judged the run whole (its run_store and run_stored would report nothing, and it
	 * made what they would change itself), and the stores call no hook of it but step.
	 * Until the last one's run_stored (or the last store) only the run's run_store,
	 * run_stored and step hooks come, and no table's level, positions or program-order
	 * place change.
	 */
	bool (*pt_store_run)(void *ctx, struct pt_machine *m, uint32_t frame, unsigned idx, unsigned n,
			     unsigned cpu, const uint64_t *vals);
	void (*run_store)(void *ctx, struct pt_machine *m, unsigned k, uint64_t old, uint64_t new);
	void (*run_stored)(void *ctx, struct pt_machine *m, unsigned k, uint64_t old, uint64_t new);
	/* a store became visible to walkers: (frame, idx) changed from old to new */
	void (*pt_visible)(void *ctx, struct pt_machine *m, uint32_t frame, unsigned idx, uint64_t old,
			   uint64_t new, unsigned by_cpu);
	/* a valid leaf became visible at (asid|global, va, level) in a table position */
	void (*leaf_live)(void *ctx, struct pt_machine *m, uint64_t va, unsigned level, uint16_t asid,
			  bool global, uint64_t desc, unsigned by_cpu);
	/* a valid table descriptor became visible at a position covering va at `level` */
	void (*table_live)(void *ctx, struct pt_machine *m, uint64_t va, unsigned level, uint16_t asid,
			   bool global, uint32_t child, unsigned by_cpu);
	/* a frame is about to be freed */
	void (*frame_free)(void *ctx, struct pt_machine *m, uint32_t frame);
	/* barriers, TLBIs (at completion), accesses, ops, locks */
	void (*barrier)(void *ctx, struct pt_machine *m, const struct pt_event *ev);
	void (*tlbi_done)(void *ctx, struct pt_machine *m, unsigned cpu, unsigned op, uint64_t va,
			  uint64_t size);
	void (*access)(void *ctx, struct pt_machine *m, const struct pt_event *ev);	/* kernel VAs only */
	void (*op_begin)(void *ctx, struct pt_machine *m, unsigned cpu, const struct pt_opctx *op);
	void (*op_end)(void *ctx, struct pt_machine *m, unsigned cpu, const struct pt_opctx *op);
	void (*lock)(void *ctx, struct pt_machine *m, const struct pt_event *ev, bool contended);
	void (*table_zero_publish)(void *ctx, struct pt_machine *m, uint32_t parent, unsigned idx,
				   uint32_t child);
	/* an event of an op that has gone past its step bound (op->steps > op->bound): each one */
	void (*step)(void *ctx, struct pt_machine *m, unsigned cpu, const struct pt_opctx *op);
	/* __purge_vmap_area_lazy() hands the lazily freed areas inside [start, end) back to the
	 * allocator (called before they leave the purge list) */
	void (*vmap_purge)(void *ctx, struct pt_machine *m, unsigned cpu, uint64_t start, uint64_t end);
	/*
	 * The machine is about to free the pages [lo, hi), in order, as one page_free event of a
	 * folio of 16 pages or more, or as a run of page_free events with no other event between
	 * them (pt_machine_free_run()): called once, before the first page's frame_free.  True
	 * tells the machine that frame_free would find nothing to report for any of these frames
	 * that is not a table when its turn comes, and change nothing that matters: frame_free is
	 * then called for the tables among them only.
	 */
	bool (*frame_free_run)(void *ctx, struct pt_machine *m, uint64_t lo, uint64_t hi);
	/*
	 * Instead of leaf_live, for a run of n entries of one table (level `level`, one position)
	 * made visible by one DSB whose old values were no leaves: leaf_live of each descs[k] that
	 * is a leaf, at va + k * pt_level_size(level), in order, is what the observer must do.  It
	 * comes once all n are visible; nothing leaf_live depends on (stale facts, stale
	 * positions) changed meanwhile.
	 */
	void (*leaf_live_run)(void *ctx, struct pt_machine *m, uint64_t va, unsigned n, unsigned level,
			      uint16_t asid, bool global, const uint64_t *descs, unsigned by_cpu);
};

/*!
 * pt_machine_new() : a machine for header h (granule 4K; 48-bit VA, 4 levels from level 0; or
 * 52-bit VA with LPA2, 5 levels from level -1; h->cpus CPUs); NULL if unsupported.
 */
struct pt_machine *pt_machine_new(const struct pt_header *h);
void pt_machine_free(struct pt_machine *m);
/*! pt_machine_supports() : can a machine run traces with header h (granule 4K, va_bits 48 (lpa2 0
 * or 1) or 52 (lpa2 1), 1..64 CPUs)? */
bool pt_machine_supports(const struct pt_header *h);
/*!
 * pt_machine_reset() : back to the state of pt_machine_new(h), keeping allocations (frames,
 * tables, indexes); the cost is what the previous run touched.  The observer is kept.
 * @return : 0, or -1 if h is unusable (m is then unchanged).
 */
int pt_machine_reset(struct pt_machine *m, const struct pt_header *h);
void pt_machine_set_observer(struct pt_machine *m, const struct pt_observer *obs, void *ctx);
/*!
 * pt_machine_event() : apply one arch-level event.  ops-level kinds are not
 * the machine's business (the mm model turns them into arch events) and
 * return -1.  @return : 0 applied, -1 not an arch event.
 */
int pt_machine_event(struct pt_machine *m, const struct pt_event *ev);
/*
 * pt_machine_event() of an event of the kind each is named after (ev->kind is that kind, ev->cpu
 * one of the machine's CPUs): the same, without the dispatch on the kind.
 */
void pt_machine_lock_event(struct pt_machine *m, const struct pt_event *ev);
void pt_machine_unlock_event(struct pt_machine *m, const struct pt_event *ev);
void pt_machine_dsb_event(struct pt_machine *m, const struct pt_event *ev);
void pt_machine_dmb_event(struct pt_machine *m, const struct pt_event *ev);
void pt_machine_isb_event(struct pt_machine *m, const struct pt_event *ev);
void pt_machine_begin_event(struct pt_machine *m, const struct pt_event *ev);
void pt_machine_end_event(struct pt_machine *m, const struct pt_event *ev);
void pt_machine_alloc_event(struct pt_machine *m, const struct pt_event *ev);
/* (true if the first page freed was a table's before it: what pt_machine_free_run() counts) */
bool pt_machine_free_event(struct pt_machine *m, const struct pt_event *ev);
void pt_machine_write_event(struct pt_machine *m, const struct pt_event *ev);
void pt_machine_tlbi_event(struct pt_machine *m, const struct pt_event *ev);
void pt_machine_access_event(struct pt_machine *m, const struct pt_event *ev);
/*!
 * pt_machine_free_run() : n PT_EV_PAGE_FREE events of first's CPU, the i-th of the 2^order pages
 * from first->pa + i * 2^order pages, leaving what n pt_machine_event() calls would (the same
 * frame_free hooks, but for the frames the observer's frame_free_run hook vouches for).
 * @return : how many of them began with a page that was a table's before its free.
 */
unsigned pt_machine_free_run(struct pt_machine *m, const struct pt_event *first, unsigned n);
/*!
 * pt_machine_access_run() : n PT_EV_ACCESS events of first's CPU, the i-th at page
 * first->va + 4K * i, leaving what n pt_machine_event() calls would; user pages inside the
 * op's step bound go at once.
 */
void pt_machine_access_run(struct pt_machine *m, const struct pt_event *first, unsigned n);
/*!
 * pt_machine_write_run() : n PT_EV_PT_WRITE events of first's CPU, the i-th of vals[i] to the
 * entry at first->pa + 8 * i, leaving what n pt_machine_event() calls would (the same hooks, in
 * the same order); the frame is looked up once when they all go to one table.
 */
void pt_machine_write_run(struct pt_machine *m, const struct pt_event *first, const uint64_t *vals, unsigned n);
uint64_t pt_machine_hash(const struct pt_machine *m);

/* ---- queries (for checkers, reports and the mm model) ---- */

unsigned pt_machine_cpus(const struct pt_machine *m);
/*! pt_machine_lpa2() : does the machine decode descriptors and TLBI operands as FEAT_LPA2 (header lpa2=1)? */
bool pt_machine_lpa2(const struct pt_machine *m);
/*! pt_machine_start_level() : the level of the root tables: 0 (48-bit VA), -1 (52-bit VA). */
int pt_machine_start_level(const struct pt_machine *m);
/*! pt_machine_kernel_base() : the first VA of TTBR1's region: 2^64 - 2^va_bits. */
uint64_t pt_machine_kernel_base(const struct pt_machine *m);
/*! pt_machine_last_cpu() : the CPU of the last event applied (model reports between events). */
unsigned pt_machine_last_cpu(const struct pt_machine *m);
uint64_t pt_machine_event_index(const struct pt_machine *m);	/* index of the event being applied */
/*! pt_machine_table_gen() : a count of the events applied that may have changed a table entry, a
 * root, a frame or a store buffer (every kind but ACCESS, LOCK, UNLOCK, BEGIN, END, ISB and
 * COMMENT): while it stays the same, so does every walk of the tables. */
uint64_t pt_machine_table_gen(const struct pt_machine *m);
const struct pt_event *pt_machine_current_event(const struct pt_machine *m);
struct pt_frame *pt_machine_frame(struct pt_machine *m, uint32_t idx);
/*! pt_machine_lookup() : frame index for a physical address, or PT_NO_FRAME. */
uint32_t pt_machine_lookup(const struct pt_machine *m, uint64_t pa);
uint64_t pt_machine_entry_latest(const struct pt_machine *m, uint32_t frame, unsigned idx);
/*! pt_machine_data_page() : page pa is a data page (its frame PT_FS_DATA); *order and *node
 * get its order and node where it is one, without a frame made for it. */
bool pt_machine_data_page(const struct pt_machine *m, uint64_t pa, unsigned *order, unsigned *node);
/*! pt_machine_data_pages() : how many of the n pages from pa on are, from the first, data pages
 * of `order` (pt_machine_data_page() of each, to the first that is not). */
unsigned pt_machine_data_pages(const struct pt_machine *m, uint64_t pa, unsigned n, unsigned order);
uint64_t pt_machine_entry_visible(const struct pt_machine *m, uint32_t frame, unsigned idx);
/*! pt_machine_first_pos() : first position of a table (index), UINT32_MAX if none; then ->next. */
uint32_t pt_machine_first_pos(const struct pt_machine *m, uint32_t frame);
const struct pt_pos *pt_machine_pos(const struct pt_machine *m, uint32_t pos);
/* Stale facts: iterate with index 0..n-1, skipping !in_use. */
uint32_t pt_machine_nfacts(const struct pt_machine *m);
const struct pt_fact *pt_machine_fact(const struct pt_machine *m, uint32_t i);
uint32_t pt_machine_nstale_pos(const struct pt_machine *m);
const struct pt_pos *pt_machine_stale_pos(const struct pt_machine *m, uint32_t i);
/*! pt_machine_facts_mapping() : stale leaf facts whose output covers pa (up to max); returns count. */
uint32_t pt_machine_facts_mapping(const struct pt_machine *m, uint64_t pa, uint32_t *out, uint32_t max);
/*! pt_machine_facts_overlapping() : stale leaf facts whose VA range overlaps [va, va+size) (up to max;
 * none for size 0); the range may end at the top of the VA space.  Returns count. */
uint32_t pt_machine_facts_overlapping(const struct pt_machine *m, uint64_t va, uint64_t size, uint32_t *out,
				      uint32_t max);
/*! pt_machine_leaves_maybe_in() : false if no page of [lo, hi) has a leaf mapping it
 * (pt_machine_leaves_mapping() would find none for any of them); true if some may. */
bool pt_machine_leaves_maybe_in(const struct pt_machine *m, uint64_t lo, uint64_t hi);
/*! pt_machine_leaves_mapping() : visible valid leaves mapping pa, as frame << 9 | index. */
uint32_t pt_machine_leaves_mapping(const struct pt_machine *m, uint64_t pa, uint64_t *out, uint32_t max);
/*! pt_machine_table_latest() : the latest entries of a table frame (512), NULL if not a table. */
const uint64_t *pt_machine_table_latest(const struct pt_machine *m, uint32_t frame);
/*! pt_machine_table_visible() : the visible entries of a table frame (512: what
 * pt_machine_entry_visible() gives for each), NULL if not a table. */
const uint64_t *pt_machine_table_visible(const struct pt_machine *m, uint32_t frame);
/*! pt_machine_table_stored() : a bitmap of a table frame's entries (PT_PTRS / 64 words, bit i of
 * word i / 64 for entry i) stored to since the table was made; an entry whose bit is clear is
 * zero, latest and visible.  NULL if not a table. */
const uint64_t *pt_machine_table_stored(const struct pt_machine *m, uint32_t frame);
/*! pt_stored_next() : the first entry from idx on (idx <= PT_PTRS) whose bit is set in a bitmap
 * of stored entries (pt_machine_table_stored()'s), PT_PTRS if none. */
static inline unsigned pt_stored_next(const uint64_t *stored, unsigned idx)
{
	for (unsigned w = idx / 64; w < PT_PTRS / 64; w++) {
		uint64_t b = stored[w] & (w == idx / 64 ? ~0ull << (idx % 64) : ~0ull);
		if (b)
			return w * 64 + (unsigned)__builtin_ctzll(b);
	}
	return PT_PTRS;
}
/*! pt_machine_cont_group() : does group `group` (16 entries) of a table hold a CONT entry (latest)? */
bool pt_machine_cont_group(const struct pt_machine *m, uint32_t frame, unsigned group);
bool pt_machine_has_lock_rules(const struct pt_machine *m);
/*! pt_machine_npending() : page-table stores of cpu not yet visible to walkers. */
uint32_t pt_machine_npending(const struct pt_machine *m, unsigned cpu);
void pt_machine_pending(const struct pt_machine *m, unsigned cpu, uint32_t i, uint32_t *frame, unsigned *idx,
			uint64_t *val);
/*! pt_machine_pending_op() : the id of the operation that made pending store i of cpu (0: none). */
uint32_t pt_machine_pending_op(const struct pt_machine *m, unsigned cpu, uint32_t i);
/*! pt_machine_va_lazy() : is [va, va+size) inside a vmap area on the purge list (its kernel
 * TLB entries may stay stale until the purge)? */
bool pt_machine_va_lazy(const struct pt_machine *m, uint64_t va, uint64_t size);
/* The areas on the purge list: i in 0..n-1, [start, end). */
uint32_t pt_machine_nlazy_areas(const struct pt_machine *m);
void pt_machine_lazy_area(const struct pt_machine *m, uint32_t i, uint64_t *start, uint64_t *end);
/*! pt_stale_is_harmless() : would a cached `oldd` still be correct, if less permissive, once `newd` is live
 * (descriptors in the format of lpa2)? */
bool pt_stale_is_harmless(uint64_t oldd, uint64_t newd, unsigned level, bool lpa2);
const struct pt_opctx *pt_machine_op(const struct pt_machine *m, unsigned cpu);
/*! pt_machine_tid() : thread currently on cpu. */
uint32_t pt_machine_tid(const struct pt_machine *m, unsigned cpu);
/*! pt_machine_context() : the execution context on cpu: its thread, or an interrupt handler
 * running on top of it (bit 31 | depth << 24 | tid).  Barrier obligations belong to a context. */
uint32_t pt_machine_context(const struct pt_machine *m, unsigned cpu);
/*! pt_machine_lock_holder() : thread holding lock (class, key), or UINT32_MAX. */
uint32_t pt_machine_lock_holder(const struct pt_machine *m, unsigned cls, uint64_t key, bool *write);
/*! pt_machine_locks_gen() : a number that changes whenever a lock is taken or released (and at a reset):
 * while it stays the same, so do the answers of pt_machine_lock_holder(). */
uint64_t pt_machine_locks_gen(const struct pt_machine *m);
/*! pt_machine_latest_gen() : a number that goes up by one with each store to a table's latest entries
 * (a pt_write, each entry a pt_zero clears) and changes whenever a table is made or the machine reset:
 * one more than when a hook last saw it means no other latest entry of any table changed since. */
uint64_t pt_machine_latest_gen(const struct pt_machine *m);
/*! pt_machine_facts_gen() : a number that changes whenever a stale fact is added or removed (and at a
 * reset): while it stays the same, so does the set of stale facts' VAs and levels (a fact's CPUs and
 * stamps may change, and its index in pt_machine_fact()). */
uint64_t pt_machine_facts_gen(const struct pt_machine *m);
/*! pt_machine_lock_rule() : the lock (class, key) required for tables under root frame, false if none. */
bool pt_machine_lock_rule(const struct pt_machine *m, uint32_t root, unsigned *cls, uint64_t *key);
/*! pt_machine_locks_recorded() : true once the trace has shown any lock event. */
bool pt_machine_locks_recorded(const struct pt_machine *m);
/*! pt_machine_table_root() : the root frame a table is (first) reachable from, PT_NO_FRAME if none. */
uint32_t pt_machine_table_root(const struct pt_machine *m, uint32_t frame);

/*
 * pt_walk() : translate va in the address space (kernel, or user asid) over
 * the *latest* (program-order) page tables.  Fills level, descriptor and
 * the table/index of the leaf.  @return : true if a valid leaf was found.
 */
struct pt_walk_result {
	unsigned level;
	uint64_t desc;
	uint32_t frame;		/* table holding the leaf (or the invalid entry) */
	unsigned idx;
	uint64_t pa;		/* translated physical address */
};
bool pt_walk(const struct pt_machine *m, bool kernel, uint16_t asid, uint64_t va, bool visible,
	     struct pt_walk_result *res);

/*
 * pt_walk_range() : call fn for each valid leaf intersecting [start, end)
 * (latest tables), with the leaf's VA base and level.  Stops early if fn
 * returns false.
 */
typedef bool (*pt_leaf_fn)(void *ctx, uint64_t va, unsigned level, uint64_t desc);
void pt_walk_range(const struct pt_machine *m, bool kernel, uint16_t asid, uint64_t start, uint64_t end,
		   pt_leaf_fn fn, void *ctx);

/* pgattr_change_is_safe() (arch/arm64/mm/mmu.c): may a live entry go from old to new without BBM? */
bool pt_pgattr_change_is_safe(uint64_t old, uint64_t new);

/*! pt_machine_pos_gen() : a number that changes whenever a table's position (live or stale) is
 * added or removed, and at a reset; a position's frame, VA and tag never change in place. */
uint64_t pt_machine_pos_gen(const struct pt_machine *m);

#endif
