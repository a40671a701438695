/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * check.c - the invariant checkers I1-I8, I11, I12, judged from arch-level
 * events; see ../shared/notes/oracle-semantics.md for the facts they rest on.
 */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vec2.h"

#define MAX_KMAPS 512		/* pending new kernel mappings tracked per CPU */
#define MAX_GROUPS 256		/* contiguous groups tracked per operation */
#define MAX_SNAP 1024		/* leaves outside an unmap's range that its stores removed */
#define MAX_HITS 64

static const char *const inv_kinds[PT_INV_COUNT] = {
	[PT_I1] = "stale-tlb/free", [PT_I2] = "stale-tlb/perm", [PT_I3] = "stale-tlb/walk",
	[PT_I4] = "bbm", [PT_I5] = "contig", [PT_I6] = "missed-barrier/kernel-map",
	[PT_I7] = "missed-barrier/table-zero", [PT_I8] = "partial-unmap", [PT_I9] = "contract",
	[PT_I10] = "semantics", [PT_I11] = "hang", [PT_I12] = "lock",
};

const char *pt_inv_kind(unsigned id)
{
	return id > 0 && id < PT_INV_COUNT ? inv_kinds[id] : "?";
}

/*
 * Every rule a checker reports, by invariant and tag (the third part of a signature): the
 * arch-level checkers below, the model's own checks (engine/mm: I10, I11) and the I9
 * caller contracts, the model's WARN sites (mm_warn() in engine/mm).
 * tests/test_rule_coverage.c holds this list against the source and against the corpus.
 */
static const struct pt_rule rules[] = {
	{ PT_I1, "freed-store-pending" }, { PT_I1, "page-freed-tlb-cached" },
	{ PT_I1, "page-freed-walk-cached" }, { PT_I1, "page-freed-while-mapped" },
	{ PT_I1, "table-freed-walk-cached" }, { PT_I1, "table-freed-while-hooked" },
	{ PT_I2, "returned-with-stale-tlb" }, { PT_I2, "returned-before-store-visible" },
	{ PT_I2, "purged-with-stale-tlb" }, { PT_I2, "purged-before-clear-visible" },
	{ PT_I2, "purged-while-mapped" }, { PT_I2, "lazy-area-remapped" },
	{ PT_I3, "returned-with-stale-walk" }, { PT_I3, "returned-before-store-visible" },
	{ PT_I4, "block-table-change" }, { PT_I4, "table-address-change" }, { PT_I4, "live-oa-change" },
	{ PT_I4, "live-cont-change" }, { PT_I4, "live-attr-change" }, { PT_I4, "break-not-visible" },
	{ PT_I4, "tlb-conflict" }, { PT_I4, "table-to-block" }, { PT_I4, "table-replaced-without-tlbi" },
	{ PT_I4, "block-to-table" },
	{ PT_I5, "group-mismatch" }, { PT_I5, "group-incomplete" },
	{ PT_I6, "used-before-barrier" }, { PT_I6, "return-before-barrier" },
	{ PT_I6, "kernel-inval-no-isb" }, { PT_I6, "table-freed-before-isb" },
	{ PT_I7, "published-unzeroed" }, { PT_I7, "published-before-zero-visible" },
	{ PT_I8, "left-mapped" }, { PT_I8, "collateral-unmap" },
	{ PT_I10, "reference-mismatch" },
	{ PT_I11, "step-bound" }, { PT_I11, "deadlock" },
	{ PT_I12, "write-without-owner-lock" }, { PT_I12, "pte-without-ptl" }, { PT_I12, "pmd-without-lock" },
	{ PT_I12, "lock-held-twice" },
	/* I9: the caller contracts the kernel WARNs about (engine/mm, mm_warn()) */
	{ PT_I9, "vmap-remap-mapped" }, { PT_I9, "pmd-free-not-table" }, { PT_I9, "vunmap-splits-contpte" },
	{ PT_I9, "vunmap-bad-pte" }, { PT_I9, "vunmap-splits-pmd-block" }, { PT_I9, "vunmap-splits-pud-block" },
	{ PT_I9, "vmalloc-zero-size" }, { PT_I9, "vfree-bad-address" }, { PT_I9, "vfree-nonexistent-area" },
	{ PT_I9, "mremap-bad-pud" }, { PT_I9, "mremap-dst-thp" }, { PT_I9, "mremap-dst-pte-not-none" },
	{ PT_I9, "mremap-dst-pmd-not-none" }, { PT_I9, "mremap-dst-pud-not-none" },
	{ PT_I9, "map_mem-live-remap" }, { PT_I9, "map_mem-block-in-the-way" }, { PT_I9, "map_mem-table-replaced" },
	{ PT_I9, "map_mem-misaligned" }, { PT_I9, "split-no-deposit" }, { PT_I9, "pgtable-bad" },
	{ PT_I9, "unsafe-attribute-change" }, { PT_I9, "huge-pte-not-present" },
};

const struct pt_rule *pt_checker_rules(unsigned *n)
{
	*n = sizeof(rules) / sizeof(rules[0]);
	return rules;
}

/* The rules, one sentence each, cited in every report. */
static const char RULE_FREE[] =
	"A page or page table may be freed only after a completed TLBI (TLBI then DSB ISH on the issuing "
	"CPU) has removed every TLB and walk-cache entry that can point at it (Arm ARM D8.16; "
	"mm/mmu_gather.c: pages and tables are freed after tlb_flush_mmu_tlbonly()).";
static const char RULE_FREE_LIVE[] =
	"A page or page table may be freed only once no page-table entry maps it any more and the TLB "
	"flush for its unmapping has completed (mm/mmu_gather.c, zap_pte_range + tlb_finish_mmu).";
static const char RULE_PERM[] =
	"An operation that removes or reduces access must complete its TLB invalidation (TLBI, then DSB "
	"ISH) before it returns, or another CPU may keep using the old, more permissive translation "
	"(arch/arm64/include/asm/tlbflush.h: __flush_tlb_range).";
static const char RULE_WALK[] =
	"Unhooking or moving a page table needs a non-last-level TLBI (VAE1IS/RVAE1IS): a last-level "
	"TLBI (VALE1IS) leaves walk-cache entries that point at the old table (Arm ARM D8.17; "
	"tlbflush.h: flush_tlb_range may be removing tables).";
static const char RULE_BBM_LIVE[] =
	"Break-before-make (Arm ARM D8.16.1; arch/arm64/mm/mmu.c pgattr_change_is_safe): a live "
	"descriptor may change only PXN, RDONLY, DBM, nG (global to non-global), AF and software bits; "
	"any other change (output address, CONT, block/table, memory type) needs invalid, DSB, TLBI, "
	"DSB ISH first.";
static const char RULE_BBM_CONFLICT[] =
	"Break-before-make (Arm ARM D8.16.1): a new translation became visible while an old, different "
	"one for the same VA may still be cached because no completed TLBI removed it; the TLB may hold "
	"both (TLB conflict).";
static const char RULE_CONT[] =
	"Misprogramming of the Contiguous bit (Arm ARM D8.6.1): while any entry of an aligned group of 16 "
	"is valid with CONT, all 16 must be valid, CONT, attribute-identical and map consecutive output "
	"addresses from a group-aligned base; a subset is changed only after unfolding the whole group.";
static const char RULE_PURGE[] =
	"A lazily freed vmap area keeps its VA reserved until __purge_vmap_area_lazy(): before the VA "
	"is handed back to the allocator the purge's flush_tlb_kernel_range() (TLBI, DSB ISH) has "
	"removed every translation of it and its page-table clears are visible, and nothing maps it "
	"again before that (mm/vmalloc.c: free_vmap_area_noflush, alloc_vmap_area purges and retries).";
static const char RULE_KMAP[] =
	"A new valid kernel mapping needs DSB ISHST (the store reaches the walker) then ISB (drop a "
	"speculative 'invalid translation') on the creating CPU before it is used or its creator "
	"returns (seed 000 #11: __set_pte_complete, arch_leave_lazy_mmu_mode).";
static const char RULE_KINV_ISB[] =
	"After invalidating kernel mappings the issuing CPU executes ISB after its DSB ISH "
	"(flush_tlb_kernel_range, __flush_tlb_kernel_pgtable; kernel commit 51696d346c49).";
static const char RULE_ZERO[] =
	"A new table's zeroing must be visible to the walker before the descriptor that publishes it "
	"(seed 003 init_clear_pgtable: dsb(ishst) after clear_page; pmd_install: smp_wmb()).";
static const char RULE_UNMAP[] =
	"An unmap of [start,end) leaves nothing inside it reachable and every mapping outside it intact "
	"(no collateral unmap of a block, contpte group or huge page).";
static const char RULE_HANG[] =
	"A page-table routine makes progress: the operation exceeded its step bound (e.g. a loop that "
	"advances by 0 entries).";
static const char RULE_LOCK[] =
	"User page-table entries are written under the lock the kernel requires (PTE: the table's split "
	"PTL; PMD: pmd_lock; upper levels: page_table_lock; or mmap_lock held for write), and a lock is "
	"held by one thread at a time.";

enum kmap_state { KM_NEED_DSB = 1, KM_NEED_ISB = 2 };

/* A new kernel mapping still owing barriers: the DSB is owed by the CPU whose store buffer holds
 * the store, the ISB by the context (thread, or IRQ handler) that created it, wherever it runs. */
struct kmap {
	uint64_t va;
	uint64_t desc;
	uint64_t event;
	uint32_t ctx;
	uint16_t store_cpu;
	uint8_t state;
	uint8_t level;		/* of the leaf: a block's pending mapping covers all its pages */
};

/*
 * What an operation touched, judged when it returns.  An operation follows its thread across
 * CPUs (the machine parks it at a switch) and an interrupt handler's runs on top of the one it
 * interrupted, so each record names its operation: it is kept in the array of the CPU that
 * made it and judged, wherever the operation returns, by the end of that operation only.
 */
struct group_ref {
	uint32_t op;		/* id of the operation whose store touched the group */
	uint32_t frame;
	uint16_t group;
	uint8_t level;
};

struct snap_leaf {
	uint64_t va;
	uint64_t desc;
	uint32_t op;		/* the unmap whose store removed it */
	uint16_t asid;		/* the unmap's address space (kernel: the VA says so) */
	uint8_t level;
	bool foreign;		/* another operation has since stored into its range */
};

struct cpu_state {
	uint64_t kinv_isb_event;	/* event+1 of a kernel TLBI completed without ISB yet */
	struct group_ref groups[MAX_GROUPS];
	unsigned ngroups;
	unsigned group_hint;		/* the group a store found last (an index, checked before use) */
	struct snap_leaf snap[MAX_SNAP];
	unsigned nsnap;
	unsigned op_snaps;		/* snapshots the operation now running here has taken */
	uint32_t hang_op;		/* op id already reported as a hang */
};

/*
 * What cont_group_agrees() (complete=false) makes of one group's 16 entries, kept with a copy
 * of them: it is a function of the entries and the level alone, so the next store to the group
 * updates it rather than rescanning (stores to a group come in runs: set_ptes() of a folio,
 * a contpte unfold or fold, mprotect of a block).  A store that takes a leaf away (a clear
 * of zap_pte_range() or of modify_prot_start_ptes()) leaves the summary of a superset of the
 * group's leaves (`superset`): when those all agree, so do the ones left; only a summary
 * that does not agree must be made again from the entries.
 */
struct cont_memo {
	bool valid;
	bool superset;
	uint8_t level;
	uint16_t group;
	uint32_t frame;
	unsigned nleaf;
	uint64_t gen;		/* pt_machine_latest_gen() when e[] was last made equal to the entries */
	uint64_t attrs, base, diff, cont_or, cont_and;
	uint64_t e[PT_CONT_PTES];
};

/* Where a table translates, in one pass over its positions (or, for a table not walkable yet,
 * where it hangs in program order). */
struct tinfo {
	bool found;		/* it has a position: walkable now or through a walk-cache entry */
	bool kernel, user;	/* positions in the kernel's / a user address space */
	uint16_t asid;		/* the user ASID */
	uint64_t va;		/* the first VA it translates */
};

struct pt_checker {
	struct pt_machine *m;
	struct cont_memo memo;
	struct pt_violation *v;
	unsigned n, cap;
	const char *site;
	struct kmap kmaps[MAX_KMAPS];
	unsigned nkmaps;
	/* one per CPU of the machine, not PT_MAX_CPUS: a state is ~26 KiB, and a fuzzer's
	 * session is created (or reset) for every exec */
	struct cpu_state *cpu;
	unsigned ncpu, capcpu;
	unsigned nsnap_all;		/* I8 snapshots held, all CPUs together */
	/* bit k: cpu[k] may hold a record (a group or a snapshot; none where it is clear): the scans
	 * of the records of all CPUs skip the others, which hold nothing to find */
	uint64_t held;
	/* [snap_lo, snap_hi): the VAs of every snapshot taken since none was held (an end of 0: past
	 * the top of the VA space, a snapshot no store overlaps); a store outside it marks none
	 * foreign (unmap_foreign_store()) */
	uint64_t snap_lo, snap_hi;
	uint32_t *open_ops;		/* ids of the operations begun and not yet returned */
	unsigned nopen, capopen;
	/* what a free of a large folio (one page_free event), or a run of page_free events, can skip
	 * for all its pages at once: no store pending into [lo, hi), no stale fact of it, no leaf
	 * mapping it */
	struct free_memo {
		bool valid;
		uint64_t event;		/* pt_machine_event_index() of the page_free that used it last */
		uint64_t lo, hi;	/* the PAs it answers for */
		uint64_t facts_gen;	/* pt_machine_facts_gen() when it was made */
		bool pending, facts, leaves;	/* false: none anywhere in [lo, hi) */
	} free_memo;
	/* the last page_free of fewer than 16 pages: its event and the PA after its pages */
	uint64_t free_run_event, free_run_next;
	/* [lo, hi): the PAs that the valid pending stores into tables of a known level hook or map
	 * (pending_span()), all of them within it, found at a page_free (free_store_pending()) */
	struct pend_memo {
		bool valid;
		uint64_t event;		/* pt_machine_event_index() of the page_free that used it last */
		uint64_t lo, hi;
	} pend_memo;
	/* whether a stale fact overlaps the VAs of a table that stores went to last ([lo, hi]), for the
	 * stores of a run to it (facts_none_near()) */
	struct facts_memo {
		bool valid;
		bool none;		/* no stale fact overlaps [lo, hi] */
		uint64_t gen;		/* pt_machine_facts_gen() when it was found: the answer holds while it does */
		uint64_t lo, hi;
	} facts_memo;
	/* the last user-table store check_lock() found covered by a lock, with what that answer
	 * depends on: the stores of a run, to one table under one lock, look the locks up once */
	struct lock_memo {
		uint64_t gen;		/* pt_machine_locks_gen(); UINT64_MAX: none */
		uint32_t frame, tid;
		uint16_t asid;
		int8_t level;
	} lock_memo;
	/* table_info() of a table with a position, found last: it reads only the table's positions,
	 * which stay while pt_machine_pos_gen() does (and so does the table: a table's release
	 * removes its positions first) */
	struct tinfo_memo {
		uint64_t gen;		/* pt_machine_pos_gen() when found; UINT64_MAX: none */
		uint32_t frame;
		struct tinfo ti;
	} tinfo_memo;
	/* the run of stores pt_machine_write_run() is making (on_pt_store_run()): what the hooks of
	 * each of its stores would find the same, found once */
	struct store_run {
		uint32_t frame;
		unsigned idx;
		unsigned cpu;
		bool level_known;
		int level;
		struct tinfo ti;	/* table_info() of the frame */
		const uint64_t *latest;	/* pt_machine_table_latest() of the frame */
		/* 1 + the CONT group of the frame that the CPU's groups[] is known to hold for its
		 * operation (0: none yet): the run's operation and the groups stay while it lasts, so
		 * the next stores to that group need not look it up again */
		unsigned group_held;
		/* check_lock() / unmap_stores() found nothing to do for the run's stores, nor can they
		 * until it ends: the locks, the lock memo, the operation and the I8 snapshots stay */
		bool lock_quiet, unmap_quiet;
	} run;
};

/* ---- reporting ---- */

static const char *site_of(struct pt_checker *c, unsigned cpu)
{
	if (c->site)
		return c->site;
	const struct pt_opctx *op = pt_machine_op(c->m, cpu);
	return op->open ? pt_op_name(PT_EV_BEGIN, op->kind) : "arch";
}

static int vreport(struct pt_checker *c, unsigned id, unsigned cpu, const char *tag, const char *rule,
		   uint64_t va, uint64_t pa, uint64_t old_desc, uint64_t new_desc, const struct pt_stale *stale,
		   const char *fmt, va_list ap)
{
	char sig[96];
	snprintf(sig, sizeof(sig), "I%u/%s/%s/%s", id, pt_inv_kind(id), tag, site_of(c, cpu));
	for (unsigned i = 0; i < c->n; i++) {
		if (!strcmp(c->v[i].signature, sig)) {
			c->v[i].repeats++;
			return 0;
		}
	}
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 8;
		c->v = realloc(c->v, c->cap * sizeof(*c->v));
		if (!c->v)
			abort();
	}
	struct pt_violation *v = &c->v[c->n++];
	memset(v, 0, sizeof(*v));
	v->id = id;
	memcpy(v->signature, sig, sizeof(sig));
	v->event = pt_machine_event_index(c->m);
	v->cpu = cpu;
	v->va = va;
	v->pa = pa;
	v->old_desc = old_desc;
	v->new_desc = new_desc;
	if (stale)
		v->stale = *stale;
	v->rule = rule;
	vsnprintf(v->what, sizeof(v->what), fmt, ap);
	return 1;
}

static int report(struct pt_checker *c, unsigned id, unsigned cpu, const char *tag, const char *rule,
		  uint64_t va, uint64_t pa, uint64_t old_desc, uint64_t new_desc, const struct pt_stale *stale,
		  const char *fmt, ...) __attribute__((format(printf, 11, 12)));
static int report(struct pt_checker *c, unsigned id, unsigned cpu, const char *tag, const char *rule,
		  uint64_t va, uint64_t pa, uint64_t old_desc, uint64_t new_desc, const struct pt_stale *stale,
		  const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vreport(c, id, cpu, tag, rule, va, pa, old_desc, new_desc, stale, fmt, ap);
	va_end(ap);
	return r;
}

int pt_checker_report(struct pt_checker *c, unsigned id, const char *tag, const char *rule, uint64_t va,
		      uint64_t pa, uint64_t old_desc, uint64_t new_desc, const struct pt_stale *stale,
		      const char *fmt, ...)
{
	const struct pt_event *ev = pt_machine_current_event(c->m);
	va_list ap;
	va_start(ap, fmt);
	int r = vreport(c, id, ev ? ev->cpu : pt_machine_last_cpu(c->m), tag, rule, va, pa, old_desc, new_desc, stale,
			fmt, ap);
	va_end(ap);
	return r;
}

void pt_checker_set_site(struct pt_checker *c, const char *site) { c->site = site; }

static unsigned cur_cpu(struct pt_checker *c)
{
	const struct pt_event *ev = pt_machine_current_event(c->m);
	return ev ? ev->cpu : 0;
}

/* The first CPU from k on that may hold a record (c->held), or one past the last CPU: for the
 * scans of the records of all CPUs, in the order of the CPUs. */
static inline unsigned held_from(const struct pt_checker *c, unsigned k)
{
	_Static_assert(PT_MAX_CPUS <= 64, "a CPU per bit of held");
	uint64_t h = k < 64 ? c->held >> k : 0;
	return h ? k + (unsigned)__builtin_ctzll(h) : c->ncpu;
}

static void stale_from_fact(struct pt_stale *s, const struct pt_fact *f)
{
	memset(s, 0, sizeof(*s));
	s->present = 1;
	s->walk = 0;
	s->asid = f->asid;
	s->global = f->global;
	s->level = f->level;
	s->va = f->va;
	s->size = pt_level_size(f->level);
	s->desc = f->desc;
	s->since = f->since;
}

static void stale_from_pos(struct pt_checker *c, struct pt_stale *s, const struct pt_pos *p)
{
	const struct pt_frame *fr = pt_machine_frame(c->m, p->frame);
	memset(s, 0, sizeof(*s));
	s->present = 1;
	s->walk = 1;
	s->asid = p->asid;
	s->global = p->global;
	s->level = fr->level > 0 ? fr->level - 1u : 0;
	s->va = p->va;
	/* a root covers the whole region: 2^48, or 2^52 for a level -1 root */
	s->size = fr->level > 0 ? pt_level_size(fr->level - 1u) : 1ull << (fr->level ? 52 : 48);
	s->desc = (fr->pfn << PT_PAGE_SHIFT) | 3;	/* the table descriptor it caches */
	s->since = p->since;
}

static const char *tagname(bool global, uint16_t asid, char *buf, size_t n)
{
	if (global)
		snprintf(buf, n, "global");
	else
		snprintf(buf, n, "asid %u", asid);
	return buf;
}

/* ---- helpers over the machine ---- */

static bool kernel_va(const struct pt_machine *m, uint64_t va) { return va >= pt_machine_kernel_base(m); }

/* The output address of a descriptor in the trace's format (FEAT_LPA2: OA[51:50] in bits [9:8]).
 * A contiguous group's entries share those bits, so the group checks compare OA[47:12] alone. */
static inline uint64_t oa(const struct pt_machine *m, uint64_t d)
{
	return pt_desc_oa_fmt(d, pt_machine_lpa2(m));
}

/* The kernel's linear map (4K): [PAGE_OFFSET, PAGE_END), from TTBR1's first VA (-2^va_bits) to
 * _PAGE_END(VA_BITS_MIN), 48 bits whatever VA_BITS is (arch/arm64/include/asm/memory.h) */
#define PT_LINEAR_MAP_END 0xffff800000000000ull

/* Permission-like bits: AF, dirty state, write permission, EL0 access, execute-never, software. */
#define PERM_BITS (PT_DESC_RDONLY | PT_DESC_DBM | PT_DESC_USER | PT_DESC_PXN | PT_DESC_UXN | PT_DESC_AF | \
		   PT_DESC_DIRTY | PT_DESC_SPECIAL | (0xfull << 55))

/*
 * May a live entry go from old to new without break-before-make?  The kernel's rule
 * (pgattr_change_is_safe), and one thing arm64's contpte code relies on beyond it: the
 * permissions of a whole contiguous block may change entry by entry without an unfold
 * (contpte_wrprotect_ptes: "Until the flush, the page may or may not be wrprotected") —
 * the output address, CONT, memory type and the rest stay.
 */
static bool change_is_safe(uint64_t old, uint64_t new)
{
	if (pt_pgattr_change_is_safe(old, new))
		return true;
	return pt_desc_valid(old) && pt_desc_valid(new) && (old & new & PT_DESC_CONT) &&
	       !((old ^ new) & ~PERM_BITS);
}

/*
 * May an old translation still be cached beside a new one for the same VA and level
 * without a TLB conflict?  A break-then-make without the TLBI between leaves both
 * cacheable; the Arm ARM (D8.16.1) asks for the full break-before-make sequence only
 * when the output address, the block size, the contiguous hint or the memory type
 * changes (or an entry turns global).  A difference in permissions only (AP, PXN,
 * UXN, AF, dirty) is a stale-permission question (I2 at the op's return), not a
 * conflict: mprotect()'s modify_prot_start/commit pairs flush once at the end.
 */
static bool conflict_free(uint64_t old, uint64_t new)
{
	if (change_is_safe(old, new))
		return true;
	if (!pt_desc_valid(old) || !pt_desc_valid(new) || pt_desc_oa(old) != pt_desc_oa(new))
		return false;
	if ((old ^ new) & PT_DESC_CONT || old & ~new & PT_DESC_NG)
		return false;
	uint64_t ao = (old & PT_DESC_ATTR_MASK) >> PT_DESC_ATTR_SHIFT, an = (new & PT_DESC_ATTR_MASK) >> PT_DESC_ATTR_SHIFT;
	if (ao != an && !(ao <= 1 && an <= 1))
		return false;
	return !((old ^ new) & ~(PERM_BITS | PT_DESC_NG | PT_DESC_ATTR_MASK));
}

/* Attributes that must be identical across a contiguous group (AF and dirty state may differ: Arm ARM D8.6.1). */
static uint64_t cont_attrs(uint64_t d, bool complete)
{
	/* AF and dirty state differ entry by entry (hardware updates) */
	uint64_t ign = PT_DESC_OA_MASK | PT_DESC_AF | PT_DESC_DIRTY;
	/* with DBM the hardware clears RDONLY entry by entry (without a branch: a loop of
	 * cont_group_whole() stays branch-free) */
	ign |= (d >> __builtin_ctzll(PT_DESC_DBM) & 1) * PT_DESC_RDONLY;
	/* while an operation runs, a whole block's permissions change entry by entry
	 * (contpte_wrprotect_ptes); when it returns they must agree again: "we can't have a case
	 * where CONT_PTE is set but wrprotect applies to a subset of the PTEs" (contpte.c) */
	if (!complete)
		ign |= PERM_BITS;
	return d & ~ign;
}

/*
 * cont_group_ok()'s answer in one pass over the group, without a culprit: true exactly when
 * no leaf of it has CONT, or every leaf has CONT, the first leaf's attributes and output base,
 * that base is group-aligned, and (complete) all 16 are leaves.  Almost every store to a
 * contiguous group leaves it consistent; only a group that is not needs the slow pass that
 * finds the entry to blame.
 */
static bool cont_group_agrees(const uint64_t *e, unsigned level, unsigned n, uint64_t size, bool complete)
{
	uint64_t attrs = 0, base = 0, diff = 0, cont_or = 0, cont_and = PT_DESC_CONT;
	unsigned nvalid = 0;
	for (unsigned i = 0; i < n; i++) {
		uint64_t d = e[i];
		if (!pt_desc_is_leaf(d, level))
			continue;
		uint64_t a = cont_attrs(d, complete), b = pt_desc_oa(d) - i * size;
		if (!nvalid++) {
			attrs = a;
			base = b;
		}
		diff |= (a ^ attrs) | (b ^ base);
		cont_or |= d;
		cont_and &= d;
	}
	if (!(cont_or & PT_DESC_CONT))
		return true;
	return (cont_and & PT_DESC_CONT) && !diff && !(base & (n * size - 1)) && (!complete || nvalid == n);
}

/* Check a contiguous group's valid entries agree; complete=true also requires all 16 valid. */
static bool cont_group_ok(struct pt_checker *c, uint32_t f, unsigned level, unsigned group, bool complete,
			  unsigned *bad_idx)
{
	const unsigned n = level == 3 ? PT_CONT_PTES : PT_CONT_PMDS;
	uint64_t size = pt_level_size(level);
	bool any_cont = false, first = true;
	uint64_t attrs = 0, base = 0;
	unsigned nvalid = 0;
	const uint64_t *e = pt_machine_table_latest(c->m, f);
	if (!e || !pt_machine_cont_group(c->m, f, group))
		return true;
	if (cont_group_agrees(e + group * n, level, n, size, complete))
		return true;
	for (unsigned i = 0; i < n; i++) {
		uint64_t d = e[group * n + i];
		if (pt_desc_is_leaf(d, level) && (d & PT_DESC_CONT))
			any_cont = true;
	}
	if (!any_cont)
		return true;
	for (unsigned i = 0; i < n; i++) {
		uint64_t d = e[group * n + i];
		if (!pt_desc_is_leaf(d, level))
			continue;
		nvalid++;
		*bad_idx = group * n + i;
		if (!(d & PT_DESC_CONT))
			return false;
		uint64_t b = pt_desc_oa(d) - i * size;
		if (first) {
			attrs = cont_attrs(d, complete);
			base = b;
			first = false;
			if (base & (n * size - 1))
				return false;
		} else if (cont_attrs(d, complete) != attrs || b != base) {
			return false;
		}
	}
	if (complete && nvalid != n) {
		for (unsigned i = 0; i < n; i++)
			if (!pt_desc_is_leaf(e[group * n + i], level)) {
				*bad_idx = group * n + i;
				break;
			}
		return false;
	}
	return true;
}

/* Add a leaf at index i of its group to a memo's summary. */
static void memo_add_leaf(struct cont_memo *mo, uint64_t d, unsigned i, uint64_t size)
{
	uint64_t a = cont_attrs(d, false), b = pt_desc_oa(d) - i * size;
	if (!mo->nleaf++) {
		mo->attrs = a;
		mo->base = b;
	}
	/* all leaves agree iff every one equals the first: the order they come in does not matter */
	mo->diff |= (a ^ mo->attrs) | (b ^ mo->base);
	mo->cont_or |= d;
	mo->cont_and &= d;
}

/* The ORs of a span d[0..cnt), of the entries w[0..cnt) it replaces and of their visible
 * values v[0..cnt) */
struct span {
	uint64_t any, wany, vany;
};

/* The ORs of d[0..n), w[0..n) and v[0..n) (n even) into acc[0..2], two entries a vector (an OR's
 * operands may come in any order and grouping: the result is the same).  Called with n a
 * constant, a whole group, the loop is unrolled whole. */
static inline __attribute__((always_inline)) void ors_by_pairs(const uint64_t *d, const uint64_t *w,
								const uint64_t *v, unsigned n, u64x2 acc[3])
{
#pragma GCC unroll 8
	for (unsigned j = 0; j < n; j += 2) {
		acc[0] |= u64x2_load(d + j);
		acc[1] |= u64x2_load(w + j);
		acc[2] |= u64x2_load(v + j);
	}
}

/*
 * One pass over a span d[0..cnt) (cnt >= 1), and w and v, which the caller reads in the same
 * pass (either may be d): their ORs alone, three an entry.  Whether a span steps
 * (span_steps()) is asked after, of the few spans whose ORs leave the answer open: most are
 * of groups with no CONT entry, or have no valid entry, and need no more.  Most spans are a
 * whole group: for them the loop is one of a known count.
 */
static inline __attribute__((always_inline)) void span_ors(const uint64_t *d, const uint64_t *w, const uint64_t *v,
							    unsigned cnt, struct span *s)
{
	u64x2 acc[3] = { { 0, 0 }, { 0, 0 }, { 0, 0 } };
	unsigned j = cnt & ~1u;
	if (cnt == PT_CONT_PTES)
		ors_by_pairs(d, w, v, PT_CONT_PTES, acc);
	else
		ors_by_pairs(d, w, v, j, acc);
	s->any = acc[0][0] | acc[0][1];
	s->wany = acc[1][0] | acc[1][1];
	s->vany = acc[2][0] | acc[2][1];
	if (j < cnt) {
		s->any |= d[j];
		s->wany |= w[j];
		s->vany |= v[j];
	}
}

/* The OR of d[j] ^ (d[0] + j * size) for j in [0, n) (n even) into *acc, two entries a vector:
 * x holds d[0] and d[0] + size, and returns as it is for j = n (sums modulo 2^64, as one running
 * sum would make them).  Called with n a constant, a whole group, the loop is unrolled whole. */
static inline __attribute__((always_inline)) u64x2 steps_by_pairs(const uint64_t *d, unsigned n, uint64_t size,
								  u64x2 x, u64x2 *acc)
{
	u64x2 step = { 2 * size, 2 * size };
#pragma GCC unroll 8
	for (unsigned j = 0; j < n; j += 2, x += step)
		*acc |= u64x2_load(d + j) ^ x;
	return x;
}

/*
 * Do the entries of a span d[0..cnt) (cnt >= 1) step: are they d[0] + j * size, the level's
 * size apart, with no carry out of the output address (the bits outside it stay d[0]'s up to
 * the last: they only grow)?  Most spans are a whole group: for them the loop is one of a known
 * count.
 */
static bool span_steps(const uint64_t *d, unsigned cnt, uint64_t size)
{
	u64x2 other = { 0, 0 }, x = { d[0], d[0] + size };
	unsigned j = cnt & ~1u;
	if (cnt == PT_CONT_PTES)
		x = steps_by_pairs(d, PT_CONT_PTES, size, x, &other);
	else
		x = steps_by_pairs(d, j, size, x, &other);
	uint64_t o = other[0] | other[1];
	if (j < cnt)
		o |= d[j] ^ x[0];
	return !o && !(((d[0] + (cnt - 1) * size) ^ d[0]) & ~PT_DESC_OA_MASK);
}

/*
 * Add the leaves among d[0..cnt), entries i0.. of their group, to a memo's summary; any: the
 * OR of d's entries.  Two kinds of span are summarized at once: one with no valid entry (a
 * table being filled, a group cleared), and one whose entries step by the level's size
 * (set_ptes() of a folio, a THP split's PTEs): every leaf of it adds to the summary what d[0]
 * adds (the same attributes, the same base).  Such a span counts as one leaf in nleaf, which
 * only tells whether a first leaf was seen (memo_agrees() reads the summary alone).  The steps
 * are asked only of a span whose first entry is a leaf: the other span takes the loop either
 * way.
 */
static void memo_add_span(struct cont_memo *mo, const uint64_t *d, unsigned i0, unsigned cnt, unsigned level,
			  uint64_t size, uint64_t any)
{
	if (!(any & PT_DESC_VALID))
		return;
	if (pt_desc_is_leaf(d[0], level) && span_steps(d, cnt, size)) {
		memo_add_leaf(mo, d[0], i0, size);
		return;
	}
	for (unsigned j = 0; j < cnt; j++)
		if (pt_desc_is_leaf(d[j], level))
			memo_add_leaf(mo, d[j], i0 + j, size);
}

/* memo_add_span() of d[0..cnt), after its span_ors() */
static inline void memo_add_leaves(struct cont_memo *mo, const uint64_t *d, unsigned i0, unsigned cnt,
				   unsigned level, uint64_t size)
{
	struct span sp;
	span_ors(d, d, d, cnt, &sp);
	memo_add_span(mo, d, i0, cnt, level, size, sp.any);
}

/* Do the leaves a memo summarizes agree as cont_group_agrees() (complete=false) asks: no CONT
 * leaf, or all CONT with the same attributes and the same aligned base?  Then so does any
 * subset of them. */
static bool memo_agrees(const struct cont_memo *mo, unsigned n, uint64_t size)
{
	return !(mo->cont_or & PT_DESC_CONT) ||
	       ((mo->cont_and & PT_DESC_CONT) && !mo->diff && !(mo->base & (n * size - 1)));
}

/*
 * cont_group_ok(..., complete=false, ...) after the store old -> new to entry i of the group:
 * the same answer (and, when false, the same culprit: the slow pass finds it), from the memo of
 * the group when it held the entries just before this store and old was no leaf.  e: the
 * table's latest entries, pt_machine_table_latest(c->m, f).
 */
static bool cont_group_ok_store(struct pt_checker *c, const uint64_t *e, uint32_t f, unsigned level, unsigned group,
				unsigned i, uint64_t old, uint64_t new, unsigned *bad_idx)
{
	const unsigned n = level == 3 ? PT_CONT_PTES : PT_CONT_PMDS;
	uint64_t size = pt_level_size(level);
	if (!e || !pt_machine_cont_group(c->m, f, group))
		return true;
	e += group * n;
	struct cont_memo *mo = &c->memo;
	uint64_t gen = pt_machine_latest_gen(c->m);
	bool hit = false;
	if (mo->valid && mo->frame == f && mo->group == group && mo->level == level && mo->e[i] == old) {
		mo->e[i] = new;
		/* this store the only change since the memo was made: no need to compare */
		hit = mo->gen + 1 == gen || !memcmp(mo->e, e, n * sizeof(*e));
		if (hit && pt_desc_is_leaf(old, level))
			mo->superset = true;	/* old stays in the summary */
		if (hit && pt_desc_is_leaf(new, level))
			memo_add_leaf(mo, new, i, size);
	}
	for (;;) {
		mo->gen = gen;
		if (!hit) {
			/* field by field: e[] is copied whole next, not zero-filled first */
			mo->valid = true;
			mo->superset = false;
			mo->level = (uint8_t)level;
			mo->group = (uint16_t)group;
			mo->frame = f;
			mo->nleaf = 0;
			mo->attrs = mo->base = mo->diff = mo->cont_or = 0;
			mo->cont_and = PT_DESC_CONT;
			memcpy(mo->e, e, n * sizeof(*e));
			for (unsigned k = 0; k < n; k++)
				if (pt_desc_is_leaf(e[k], level))
					memo_add_leaf(mo, e[k], k, size);
		}
		if (memo_agrees(mo, n, size))
			return true;
		if (!mo->superset)
			return cont_group_ok(c, f, level, group, false, bad_idx);
		hit = false;	/* the leaves left may agree: summarize them alone */
	}
}

static uint64_t entry_va(struct pt_checker *c, uint32_t f, unsigned idx, bool *found)
{
	uint32_t p = pt_machine_first_pos(c->m, f);
	const struct pt_frame *fr = pt_machine_frame(c->m, f);
	*found = p != UINT32_MAX;
	if (!*found)
		return fr->latest_space ? fr->latest_va + idx * pt_level_size(fr->level) : 0;
	return pt_machine_pos(c->m, p)->va + idx * pt_level_size(fr->level);
}

static void table_info(struct pt_checker *c, uint32_t f, struct tinfo *ti)
{
	struct tinfo_memo *tm = &c->tinfo_memo;
	uint64_t gen = pt_machine_pos_gen(c->m);
	if (tm->gen == gen && tm->frame == f) {
		*ti = tm->ti;
		return;
	}
	const struct pt_frame *fr = pt_machine_frame(c->m, f);
	uint32_t p = pt_machine_first_pos(c->m, f);
	if (p == UINT32_MAX) {
		*ti = (struct tinfo){ .kernel = fr->latest_space == 2, .user = fr->latest_space == 1,
				      .asid = fr->latest_asid, .va = fr->latest_space ? fr->latest_va : 0 };
		return;
	}
	*ti = (struct tinfo){ .found = true, .va = pt_machine_pos(c->m, p)->va };
	for (; p != UINT32_MAX; p = pt_machine_pos(c->m, p)->next) {
		const struct pt_pos *pp = pt_machine_pos(c->m, p);
		if (pp->global) {
			ti->kernel = true;
		} else {
			ti->user = true;
			ti->asid = pp->asid;
		}
	}
	*tm = (struct tinfo_memo){ gen, f, *ti };
}

/* Does [va, va+size) overlap a vmap area on the purge list? */
static bool overlaps_lazy_area(const struct pt_machine *m, uint64_t va, uint64_t size)
{
	for (uint32_t i = 0; i < pt_machine_nlazy_areas(m); i++) {
		uint64_t s, e;
		pt_machine_lazy_area(m, i, &s, &e);
		if (va < e && s - va < size)
			return true;
	}
	return false;
}

/* Is a stale kernel translation of [va, va+size) one the purge list defers (the vmap area it
 * belongs to is reserved until __purge_vmap_area_lazy() flushes it)?  (The areas are asked
 * newest first: a vfree()'s clears and pages are asked of the area it just put there.) */
static bool lazily_flushed(const struct pt_machine *m, uint64_t va, uint64_t size)
{
	return kernel_va(m, va) && pt_machine_va_lazy(m, va, size);
}

/* ---- hooks ---- */

/* I12 under the trace's lock rules (LOCK_RULE): the lock that owns the tables under the table's
 * root.  True if a rule applies (then nothing else is asked). */
static __attribute__((noinline)) bool check_lock_rule(struct pt_checker *c, unsigned cpu, uint32_t f, unsigned idx,
						      uint64_t old, uint64_t new, const struct tinfo *ti)
{
	struct pt_machine *m = c->m;
	const struct pt_frame *fr = pt_machine_frame(m, f);
	uint32_t tid = pt_machine_tid(m, cpu);
	uint64_t pa = fr->pfn << PT_PAGE_SHIFT;
	unsigned cls;
	uint64_t key;
	uint32_t root = pt_machine_table_root(m, f);
	if (root == PT_NO_FRAME || !pt_machine_lock_rule(m, root, &cls, &key))
		return false;
	uint64_t va = ti->va + idx * pt_level_size(fr->level);
	if (pt_machine_lock_holder(m, cls, key, NULL) != tid)
		report(c, PT_I12, cpu, "write-without-owner-lock", RULE_LOCK, va, pa + idx * 8, old, new, NULL,
		       "entry 0x%llx (va 0x%llx) written by thread %u without holding the %s lock 0x%llx "
		       "that owns its tables",
		       (unsigned long long)(pa + idx * 8), (unsigned long long)va, tid, pt_op_name(PT_EV_LOCK, cls),
		       (unsigned long long)key);
	return true;
}

/* I12 for a user table's entry: the locks the kernel takes for its level, looked up (the lock
 * memo did not know the answer); when held, the lock memo now answers the next store */
static __attribute__((noinline)) bool check_lock_lookup(struct pt_checker *c, uint32_t f, const struct tinfo *ti,
							uint32_t tid, uint64_t gen)
{
	struct pt_machine *m = c->m;
	const struct pt_frame *fr = pt_machine_frame(m, f);
	uint64_t pa = fr->pfn << PT_PAGE_SHIFT;
	uint16_t asid = ti->asid;
	bool w = false;
	/* the lookups are queries, their order is no matter: above level 3 the locks a fault takes
	 * there (pmd_lock, page_table_lock) come first, each asked once */
	bool upper = fr->level < 3;
	if ((upper && (pt_machine_lock_holder(m, PT_LOCK_PMD, pa, NULL) == tid ||
		       pt_machine_lock_holder(m, PT_LOCK_PUD, asid, NULL) == tid)) ||
	    pt_machine_lock_holder(m, PT_LOCK_PTL, pa, NULL) == tid ||
	    (upper && pt_machine_lock_holder(m, PT_LOCK_MMAP, asid, &w) == tid && w)) {
		c->lock_memo = (struct lock_memo){ gen, f, tid, asid, fr->level };
		return true;
	}
	return false;
}

/* I12 for an entry of a hooked table f of level `level`, outside the lock rules: does the CPU
 * hold what the kernel takes to write it?  Kernel tables need no lock (the vmap_area owns the
 * VA range), nor does any table of a trace that records no locks.  A run of stores under the
 * same locks asks only the lock memo, here. */
static bool check_lock_held(struct pt_checker *c, unsigned cpu, uint32_t f, unsigned level, const struct tinfo *ti)
{
	struct pt_machine *m = c->m;
	if (ti->kernel || !ti->user || !pt_machine_locks_recorded(m))
		return true;
	uint32_t tid = pt_machine_tid(m, cpu);
	const struct lock_memo *lm = &c->lock_memo;
	uint64_t gen = pt_machine_locks_gen(m);
	if (lm->gen == gen && lm->frame == f && lm->tid == tid && lm->asid == ti->asid && lm->level == (int8_t)level)
		return true;	/* the same question as the last one, with the same locks held */
	return check_lock_lookup(c, f, ti, tid, gen);
}

static __attribute__((noinline)) void check_lock_report(struct pt_checker *c, unsigned cpu, uint32_t f, unsigned idx,
							uint64_t old, uint64_t new, const struct tinfo *ti)
{
	struct pt_machine *m = c->m;
	const struct pt_frame *fr = pt_machine_frame(m, f);
	uint64_t pa = fr->pfn << PT_PAGE_SHIFT;
	uint64_t va = ti->va + idx * pt_level_size(fr->level);
	report(c, PT_I12, cpu, fr->level == 3 ? "pte-without-ptl" : "pmd-without-lock", RULE_LOCK, va,
	       pa + idx * 8, old, new, NULL,
	       "level-%u entry for va 0x%llx (asid %u) written by thread %u without its %s", fr->level,
	       (unsigned long long)va, ti->asid, pt_machine_tid(m, cpu), fr->level == 3 ?
	       "PTE table lock (ptl key=table)" : "pmd_lock / page_table_lock / mmap_lock for write");
}

/* I12 at a store to a table of level `level` (its frame's); the lookups are out of line.  True
 * when it reports nothing for any store to the table by the CPU (and to no entry asks a lock
 * rule) until the locks or the lock memo change: the rest of a run of stores need not ask. */
static bool check_lock(struct pt_checker *c, unsigned cpu, uint32_t f, unsigned idx, unsigned level, uint64_t old,
		       uint64_t new, const struct tinfo *ti)
{
	struct pt_machine *m = c->m;
	bool has_rules = pt_machine_has_lock_rules(m);
	if (!pt_machine_locks_recorded(m) && !has_rules)
		return true;	/* the trace records no locks: nothing to judge */
	if (!ti->found)
		return true;	/* not hooked anywhere: a table being prepared needs no lock */
	if (has_rules && check_lock_rule(c, cpu, f, idx, old, new, ti))
		return false;
	if (check_lock_held(c, cpu, f, level, ti))
		return !has_rules;
	check_lock_report(c, cpu, f, idx, old, new, ti);
	return false;
}

static void unmap_stores(struct pt_checker *c, unsigned cpu, const struct tinfo *ti, const uint64_t *old,
			 unsigned n, uint64_t va, unsigned level);
static bool is_unmap(const struct pt_opctx *op);
static bool refill_before_deferred_flush(struct pt_checker *c, uint32_t clearer, bool global, unsigned by_cpu);
static uint32_t pending_clearer(const struct pt_checker *c, uint32_t f, unsigned idx);
static inline void check_leaf_conflict(struct pt_checker *c, struct pt_machine *m, uint64_t va, unsigned level,
				       uint16_t asid, bool global, uint64_t desc, unsigned by_cpu, bool no_facts);
static void check_table_conflict(struct pt_checker *c, struct pt_machine *m, uint64_t va, unsigned level,
				 uint16_t asid, bool global, uint32_t child, unsigned by_cpu);

/* Does the facts memo answer for [va, last]: made of a range holding it, no fact come or gone since? */
static inline bool facts_memo_covers(const struct facts_memo *fm, const struct pt_machine *m, uint64_t va,
				     uint64_t last)
{
	return fm->valid && fm->gen == pt_machine_facts_gen(m) && va >= fm->lo && last <= fm->hi;
}

/*
 * At a store's hook: is it known that no stale fact overlaps [va, va + size of level), the
 * VAs of an entry of a table whose first VA is base?  Then pt_machine_facts_overlapping()
 * would find none there.  When there are few facts (pt_machine_facts_overlapping() then scans
 * them all, for one entry as for a whole table), one query of the whole table's VAs answers for
 * the next stores to the table too, as long as no fact came or went (pt_machine_facts_gen()).
 */
static bool facts_none_near(struct pt_checker *c, struct pt_machine *m, uint64_t base, uint64_t va, unsigned level)
{
	struct facts_memo *fm = &c->facts_memo;
	uint64_t size = pt_level_size(level);
	uint32_t n = pt_machine_nfacts(m);
	if (!n)
		return true;
	if (facts_memo_covers(fm, m, va, va + (size - 1)))
		return fm->none;
	if (n >= 64)
		return false;
	uint64_t hi = base + (size * PT_PTRS - 1);
	uint32_t hit;
	*fm = (struct facts_memo){ true, !pt_machine_facts_overlapping(m, base, size * PT_PTRS, &hit, 1),
				   pt_machine_facts_gen(m), base, hi < base ? UINT64_MAX : hi };
	return fm->none;
}

/* I4: what a change of a live entry of a level-`level` table from old to new (both valid,
 * different) breaks without break-before-make, or NULL */
static const char *live_change_tag(const struct pt_machine *m, unsigned level, uint64_t old, uint64_t new)
{
	if (pt_desc_is_table(old, level) != pt_desc_is_table(new, level))
		return "block-table-change";
	if (pt_desc_is_table(old, level))
		return oa(m, old) != oa(m, new) ? "table-address-change" : NULL;
	if (!change_is_safe(old, new))
		return oa(m, old) != oa(m, new) ? "live-oa-change" :
		       ((old | new) & PT_DESC_CONT) ? "live-cont-change" : "live-attr-change";
	return NULL;
}

/* I4: a live entry changed in a way that needs break-before-make (old and new valid, different) */
static __attribute__((noinline)) void check_live_change(struct pt_checker *c, struct pt_machine *m, unsigned cpu,
							uint32_t f, unsigned idx, uint64_t old, uint64_t new,
							const struct tinfo *ti)
{
	const struct pt_frame *fr = pt_machine_frame(m, f);
	unsigned level = fr->level;
	const char *tag = live_change_tag(m, level, old, new);
	if (!tag)
		return;
	uint64_t pa = (fr->pfn << PT_PAGE_SHIFT) + idx * 8;
	report(c, PT_I4, cpu, tag, RULE_BBM_LIVE, ti->va + idx * pt_level_size(level), pa, old, new, NULL,
	       "valid level-%u entry 0x%llx%s changed in place without break-before-make", level,
	       (unsigned long long)pa, ti->found ? "" : " (not yet hooked)");
}

/* I4 "break-not-visible" at the store of new (valid) over old in entry idx of table f (level
 * `level`, with a position) by cpu, vis the entry's visible value: is new made where the break
 * of a valid entry it conflicts with is not yet visible?  (It reads the machine and changes
 * nothing.) */
static inline bool make_before_break_visible(struct pt_checker *c, struct pt_machine *m, unsigned cpu, uint32_t f,
					     unsigned idx, unsigned level, uint64_t old, uint64_t new, uint64_t vis,
					     const struct tinfo *ti)
{
	return !pt_desc_valid(old) && pt_desc_valid(vis) && vis != new &&
	       (pt_desc_is_table(vis, level) != pt_desc_is_table(new, level) ||
		(pt_desc_is_table(vis, level) ? oa(m, vis) != oa(m, new) : !conflict_free(vis, new))) &&
	       !(pt_desc_is_leaf(vis, level) &&
		 refill_before_deferred_flush(c, pending_clearer(c, f, idx), ti->kernel, cpu));
}

/* I4 at the store of a valid entry into a table with a position: a walker may see a store before
 * its DSB, so the make is judged now against what may be cached, and against an old value whose
 * break is not yet visible */
static void check_make(struct pt_checker *c, struct pt_machine *m, unsigned cpu, uint32_t f, unsigned idx,
		       unsigned level, uint64_t old, uint64_t new, const struct tinfo *ti)
{
	uint64_t vis = pt_machine_entry_visible(m, f, idx);
	if (make_before_break_visible(c, m, cpu, f, idx, level, old, new, vis, ti)) {
		uint64_t pa = (pt_machine_frame(m, f)->pfn << PT_PAGE_SHIFT) + idx * 8;
		report(c, PT_I4, cpu, "break-not-visible", RULE_BBM_LIVE, ti->va + idx * pt_level_size(level), pa, vis,
		       new, NULL,
		       "level-%u entry 0x%llx made valid again before its invalidation was visible (no DSB "
		       "after the break, no TLBI)", level, (unsigned long long)pa);
	}
	bool leaf = pt_desc_is_leaf(new, level);
	/* without stale facts, check_leaf_conflict() finds nothing for a page, nor for a block
	 * without stale positions, and check_table_conflict() nothing for a table without either
	 * (nor is a child table looked up for it): the common make of a run, or of a table, asked
	 * nothing per position */
	if (!pt_machine_nfacts(m) && ((leaf && level == 3) || !pt_machine_nstale_pos(m)))
		return;
	for (uint32_t p = pt_machine_first_pos(m, f); p != UINT32_MAX; p = pt_machine_pos(m, p)->next) {
		const struct pt_pos *pp = pt_machine_pos(m, p);
		uint64_t eva = pp->va + idx * pt_level_size(level);
		if (leaf)
			check_leaf_conflict(c, m, eva, level, pp->asid, pp->global, new, cpu,
					    facts_none_near(c, m, pp->va, eva, level));
		else if (pt_desc_is_table(new, level)) {
			uint32_t child = pt_machine_lookup(m, oa(m, new));
			if (child != PT_NO_FRAME)
				check_table_conflict(c, m, eva, level, pp->asid, pp->global, child, cpu);
		}
	}
}

/* I2 and I6 at the store of a leaf into a kernel table */
static __attribute__((noinline)) void kernel_leaf_store(struct pt_checker *c, struct pt_machine *m, unsigned cpu,
							uint64_t va, unsigned level, uint64_t old, uint64_t new)
{
	/* I2: the VA of an area on the purge list is mapped again before the purge flushed it */
	if (overlaps_lazy_area(m, va, pt_level_size(level)))
		report(c, PT_I2, cpu, "lazy-area-remapped", RULE_PURGE, va, oa(m, new), old, new, NULL,
		       "kernel va 0x%llx mapped again while its vmap area is on the purge list (its old "
		       "translations are not flushed before __purge_vmap_area_lazy())", (unsigned long long)va);

	/* I6: a new valid kernel mapping starts owing DSB + ISB */
	if (!pt_desc_valid(old) && c->nkmaps < MAX_KMAPS) {
		struct kmap k = { va, new, pt_machine_event_index(m), pt_machine_context(m, cpu), (uint16_t)cpu,
				  KM_NEED_DSB, (uint8_t)level };
		c->kmaps[c->nkmaps++] = k;
	}
}

/* The checks at a store to entry idx of table f (of a known level) by cpu, before it is applied. */
static inline __attribute__((always_inline)) void store_checks(struct pt_checker *c, struct pt_machine *m,
							       unsigned cpu, uint32_t f, unsigned idx,
							       unsigned level, const struct tinfo *ti,
							       uint64_t old, uint64_t new)
{
	/* the entry's VA (ti->va + idx * size) and PA are worked out only where a check needs them */
	if (pt_desc_valid(old) && pt_desc_valid(new) && old != new)
		check_live_change(c, m, cpu, f, idx, old, new, ti);
	if (pt_desc_valid(new) && ti->found)
		check_make(c, m, cpu, f, idx, level, old, new, ti);
	if (pt_desc_is_leaf(new, level) && ti->kernel)
		kernel_leaf_store(c, m, cpu, ti->va + idx * pt_level_size(level), level, old, new);
	/* a table without a position (being filled before it is hooked) needs no lock (check_lock())
	 * and is no unmap's */
	if (!ti->found)
		return;

	/* I12 */
	if (!c->run.lock_quiet)
		c->run.lock_quiet = check_lock(c, cpu, f, idx, level, old, new, ti);

	/* I8: what an unmap removes outside its range */
	if (!c->run.unmap_quiet)
		unmap_stores(c, cpu, ti, &old, 1, ti->va + idx * pt_level_size(level), level);
}

/* A run of stores to one table (pt_machine_write_run()): during it the table's level, positions
 * and program-order place stay, so its stores' hooks share what they find of them. */
static void run_begin(struct pt_checker *c, struct pt_machine *m, uint32_t f, unsigned idx, unsigned cpu)
{
	const struct pt_frame *fr = pt_machine_frame(m, f);
	struct store_run *r = &c->run;
	r->frame = f;
	r->idx = idx;
	r->cpu = cpu;
	r->level_known = fr->level_known;
	r->level = fr->level;
	r->group_held = 0;
	if (!r->level_known)
		return;		/* its stores' hooks return at once */
	table_info(c, f, &r->ti);
	r->lock_quiet = false;
	/* outside an unmap, with no I8 snapshot held, unmap_stores() does nothing, and none of the
	 * run's stores takes a snapshot */
	r->unmap_quiet = !c->nsnap_all && !is_unmap(pt_machine_op(m, cpu));
	r->latest = pt_machine_table_latest(m, f);
}

/* (Not inlined: the one copy of store_checks(), for the runs' stores and the others'.) */
static __attribute__((noinline)) void run_store_checks(struct pt_checker *c, struct pt_machine *m, unsigned k,
						       uint64_t old, uint64_t new)
{
	const struct store_run *r = &c->run;
	store_checks(c, m, r->cpu, r->frame, r->idx + k, (unsigned)r->level, &r->ti, old, new);
}

/* May store_checks() judge anything of the run's store old -> new?  Not if the table's level is
 * unknown; and into a table with no position and no kernel's (one being filled before it is
 * hooked, as a THP split's) it judges only a live change: the common store of such a run is
 * asked that here, without its frame. */
static inline bool run_store_asks(const struct store_run *r, uint64_t old, uint64_t new)
{
	return r->level_known &&
	       (r->ti.found || r->ti.kernel || (pt_desc_valid(old) && pt_desc_valid(new) && old != new));
}

static __attribute__((noinline)) void on_run_store(void *ctx, struct pt_machine *m, unsigned k, uint64_t old,
						   uint64_t new)
{
	struct pt_checker *c = ctx;
	if (run_store_asks(&c->run, old, new))
		run_store_checks(c, m, k, old, new);
}

/* A store outside a run is a run of one (its pt_stored follows with nothing between). */
static void on_pt_store(void *ctx, struct pt_machine *m, uint32_t f, unsigned idx, uint64_t old, uint64_t new)
{
	struct pt_checker *c = ctx;
	run_begin(c, m, f, idx, cur_cpu(c));
	if (run_store_asks(&c->run, old, new))
		run_store_checks(c, m, 0, old, new);
}

static inline bool group_is(const struct group_ref *g, uint32_t op, uint32_t f, unsigned group)
{
	return g->op == op && g->frame == f && g->group == group;
}

/* Make sure the CPU's groups[] holds group `group` of table f (of level `level`) for operation
 * op, for the op-end check of I5; false when it does not (the array is full). */
static bool group_hold(struct pt_checker *c, unsigned cpu, const struct pt_opctx *op, uint32_t f, unsigned group,
		       int level)
{
	struct cpu_state *cs = &c->cpu[cpu];
	/* the group found last, then newest first: a run of stores to one group finds it at once */
	unsigned h = cs->group_hint;
	if (h < cs->ngroups && group_is(&cs->groups[h], op->id, f, group))
		return true;
	for (unsigned i = cs->ngroups; i-- > 0;)
		if (group_is(&cs->groups[i], op->id, f, group)) {
			cs->group_hint = i;
			return true;
		}
	if (cs->ngroups == MAX_GROUPS)
		return false;
	struct group_ref g = { op->id, f, (uint16_t)group, (uint8_t)level };
	cs->group_hint = cs->ngroups;
	cs->groups[cs->ngroups++] = g;
	c->held |= 1ull << cpu;
	return true;
}

/* group_hold() of each group of `groups` (bit g: group g of table f, of level `level`), lowest
 * first: one scan of the CPU's groups[] finds those it holds already, the others are added in
 * that order while there is room.  (group_hint only speeds up group_hold(): it is checked before
 * use, so where it points changes nothing.) */
static void group_hold_run(struct pt_checker *c, unsigned cpu, const struct pt_opctx *op, uint32_t f,
			   uint32_t groups, int level)
{
	struct cpu_state *cs = &c->cpu[cpu];
	for (unsigned i = 0; i < cs->ngroups && groups; i++)
		if (cs->groups[i].op == op->id && cs->groups[i].frame == f && cs->groups[i].group < 32)
			groups &= ~(1u << cs->groups[i].group);
	for (; groups && cs->ngroups < MAX_GROUPS; groups &= groups - 1) {
		struct group_ref g = { op->id, f, (uint16_t)__builtin_ctz(groups), (uint8_t)level };
		cs->group_hint = cs->ngroups;
		cs->groups[cs->ngroups++] = g;
		c->held |= 1ull << cpu;
	}
}

/* I5: valid entries of a contiguous group must agree at every moment; remember the group
 * so that the operation's end can check it is complete.  The store old -> new to entry idx of
 * the run's table (of a known level, 2 or 3) has been applied; old or new has CONT, or another
 * entry of the group does (on_run_stored() asked). */
static __attribute__((noinline)) void stored_checks(struct pt_checker *c, struct pt_machine *m, unsigned idx,
						    uint64_t old, uint64_t new)
{
	const struct store_run *r = &c->run;
	unsigned cpu = r->cpu;
	uint32_t f = r->frame;
	int level = r->level;
	unsigned n = level == 3 ? PT_CONT_PTES : PT_CONT_PMDS, bad = idx;
	const struct pt_opctx *op = pt_machine_op(m, cpu);
	if (((old | new) & PT_DESC_CONT) && op->open && c->run.group_held != idx / n + 1 &&
	    group_hold(c, cpu, op, f, idx / n, level))
		c->run.group_held = idx / n + 1;
	if (!cont_group_ok_store(c, r->latest, f, (unsigned)level, idx / n, idx % n, old, new, &bad)) {
		const struct pt_frame *fr = pt_machine_frame(m, f);
		bool found;
		uint64_t va = entry_va(c, f, bad, &found);
		uint64_t pa = (fr->pfn << PT_PAGE_SHIFT) + bad * 8;
		report(c, PT_I5, cpu, "group-mismatch", RULE_CONT, va, pa, 0,
		       pt_machine_entry_latest(c->m, f, bad), NULL,
		       "valid entries of the contiguous group at level %u (entry 0x%llx) disagree: CONT, "
		       "attributes or consecutive output addresses", fr->level, (unsigned long long)pa);
	}
}

/* stored_checks() of store k of the run, past the tests that end most stores' checks there (a
 * table above level 2, a group with no CONT entry before or after the store): they are made
 * here, before a call whose entry saves registers */
static void on_run_stored(void *ctx, struct pt_machine *m, unsigned k, uint64_t old, uint64_t new)
{
	struct pt_checker *c = ctx;
	const struct store_run *r = &c->run;
	if (!r->level_known || r->level < 2)
		return;
	unsigned idx = r->idx + k, n = r->level == 3 ? PT_CONT_PTES : PT_CONT_PMDS;
	if (!((old | new) & PT_DESC_CONT) && !pt_machine_cont_group(m, r->frame, idx / n))
		return;		/* no CONT entry in the group, before or after */
	stored_checks(c, m, idx, old, new);
}

/* the store on_pt_store() made a run of one */
static void on_pt_stored(void *ctx, struct pt_machine *m, uint32_t f, unsigned idx, uint64_t old, uint64_t new)
{
	(void)f;
	(void)idx;
	on_run_stored(ctx, m, 0, old, new);
}

/*
 * I5 for a run whose stores none reports otherwise: would stored_checks() report nothing at
 * any of them?  Each entry is stored to once, so at every moment of the run the leaves of a
 * group it touches are among its leaves before the run and the run's new ones; when those all
 * agree (no CONT leaf, or all CONT with one set of attributes and one aligned base) so does
 * every subset of them, and cont_group_ok_store() finds each store's group consistent.  (The
 * cont memo it would update is a cache: it is checked against the entries before use.)  When
 * true, *ors has the ORs of the run's new values, of the entries they replace and of those
 * entries' visible values (visible: the visible values of entries idx..).
 */
static bool run_groups_agree(struct pt_checker *c, struct pt_machine *m, unsigned n, const uint64_t *vals,
			     const uint64_t *visible, uint32_t *touched, struct span *ors)
{
	const struct store_run *r = &c->run;
	const unsigned gn = r->level == 3 ? PT_CONT_PTES : PT_CONT_PMDS;
	uint64_t size = pt_level_size(r->level);
	_Static_assert(PT_PTRS / PT_CONT_PTES <= 32 && PT_CONT_PTES == PT_CONT_PMDS, "a group per bit");
	const uint64_t *old = r->latest + r->idx;
	uint32_t t = 0;
	*ors = (struct span){ 0 };
	for (unsigned g = r->idx / gn; g <= (r->idx + n - 1) / gn; g++) {
		const uint64_t *e = r->latest + g * gn;
		unsigned k0 = g * gn > r->idx ? g * gn - r->idx : 0, k1 = (g + 1) * gn - r->idx;
		unsigned cnt = (k1 < n ? k1 : n) - k0;
		/* the run's new values for the group, its old ones and their visible values */
		struct span sp;
		span_ors(vals + k0, old + k0, visible + k0, cnt, &sp);
		ors->any |= sp.any;
		ors->wany |= sp.wany;
		ors->vany |= sp.vany;
		if ((sp.any | sp.wany) & PT_DESC_CONT)
			t |= 1u << g;
		else if (!pt_machine_cont_group(m, r->frame, g))
			continue;	/* no CONT entry in the group, before or after any store */
		/* the summary alone: memo_add_span() and memo_agrees() read no other field (an
		 * initializer would zero-fill the entries too) */
		struct cont_memo u;
		u.nleaf = 0;
		u.attrs = u.base = u.diff = u.cont_or = 0;
		u.cont_and = PT_DESC_CONT;
		/* the group's entries before the run: the old ones the span read, when it is whole */
		if (cnt == gn)
			memo_add_span(&u, e, 0, gn, (unsigned)r->level, size, sp.wany);
		else
			memo_add_leaves(&u, e, 0, gn, (unsigned)r->level, size);
		memo_add_span(&u, vals + k0, (r->idx + k0) % gn, cnt, (unsigned)r->level, size, sp.any);
		if (!memo_agrees(&u, gn, size))
			return false;
	}
	*touched = t;
	return true;
}

/* No stale fact overlaps the VAs of entries idx..idx+n-1 of table f (level `level`) at any of
 * its positions: check_leaf_conflict() then asks none for a leaf made there.  facts_none_near()
 * answers for a span its memo covers; asked of the first entry, then of the last: either the
 * first answer's memo covers the last entry too, or the second answer is the table's whole (its
 * memo, made then), and no fact comes or goes between the two.  (Asking it changes no answer.) */
static bool leaf_facts_none(struct pt_checker *c, struct pt_machine *m, uint32_t f, unsigned idx, unsigned n,
			    unsigned level)
{
	uint64_t size = pt_level_size(level);
	for (uint32_t p = pt_machine_first_pos(m, f); p != UINT32_MAX; p = pt_machine_pos(m, p)->next) {
		const struct pt_pos *pp = pt_machine_pos(m, p);
		if (!facts_none_near(c, m, pp->va, pp->va + idx * size, level) ||
		    !facts_none_near(c, m, pp->va, pp->va + (idx + n - 1) * size, level))
			return false;
	}
	return true;
}

/*
 * What the stores of a run into table f (entries idx..idx+n-1, of level `level`, table_info()
 * ti) ask of a leaf they make, the same for each of its leaves (it reads no entry, and no fact
 * or position comes or goes during the run): true when none reports or keeps a record.  None
 * is made into a kernel table (kernel_leaf_store(): I6's record holds the store's event), and
 * into a table with a position check_make() asks nothing per position: below level 3 there is
 * no stale position (walks: there may be), and no stale fact is near any of the run's entries.
 */
static bool run_leaf_ok(struct pt_checker *c, struct pt_machine *m, uint32_t f, unsigned idx, unsigned n,
			unsigned level, const struct tinfo *ti, bool walks)
{
	if (ti->kernel)
		return false;
	if (!ti->found)
		return true;
	return !walks && (!pt_machine_nfacts(m) || leaf_facts_none(c, m, f, idx, n, level));
}

/* unmap_stores() rounds an unmap's end up to a page: [op->va, op->va + op->len) is inside the
 * range it leaves alone where that rounded end does not pass the top of the VA space. */
static bool run_inside_unmap(const struct pt_opctx *op, uint64_t lo, uint64_t hi)
{
	return lo >= op->va && op->len <= UINT64_MAX - 0xfff - op->va && hi <= op->va + op->len;
}

/* Are all the I8 snapshots held operation by_op's own, or foreign already?  Then
 * unmap_foreign_store() marks none of them for a store of by_op. */
static bool snaps_all_own(const struct pt_checker *c, uint32_t by_op)
{
	for (unsigned k = held_from(c, 0); k < c->ncpu; k = held_from(c, k + 1))
		for (unsigned i = 0; i < c->cpu[k].nsnap; i++)
			if (c->cpu[k].snap[i].op != by_op && !c->cpu[k].snap[i].foreign)
				return false;
	return true;
}

/*
 * The run pt_machine_write_run() is about to make, judged whole when that is quick and its
 * stores' hooks would report nothing: true when it has made what those hooks would change
 * (store_checks(), stored_checks(): the lock memo, I8's snapshots, I5's groups) and the
 * stores need no hook.  Otherwise the stores go through their hooks, each as it comes.
 * A new check in store_checks() or stored_checks() must be proved absent here too (or make
 * this return false where it may fire): bench/equiv.sh shows a miss as a lost report.
 */
static bool on_pt_store_run(void *ctx, struct pt_machine *m, uint32_t f, unsigned idx, unsigned n, unsigned cpu,
			    const uint64_t *vals)
{
	struct pt_checker *c = ctx;
	const struct store_run *r = &c->run;
	run_begin(c, m, f, idx, cpu);
	if (!r->level_known)
		return true;		/* its stores' hooks return at once */
	const struct tinfo *ti = &r->ti;
	unsigned level = (unsigned)r->level;
	const uint64_t *old = r->latest + idx, *visible = pt_machine_table_visible(m, f) + idx;
	if (ti->found && pt_machine_has_lock_rules(m))
		return false;		/* check_lock_rule() at every store */

	/* the CONT groups (of 16 entries at either level) with CONT in an old or new value of the
	 * run, and the ORs of its new values, of the entries they replace and of those entries'
	 * visible values (not known below level 2: all bits taken as set) */
	uint32_t touched = 0;
	struct span ors = { UINT64_MAX, UINT64_MAX, UINT64_MAX };
	if (r->level >= 2 && !run_groups_agree(c, m, n, vals, visible, &touched, &ors))
		return false;

	/* store_checks(): none asks anything of a store of an invalid entry but I12 and I8; of a
	 * valid one (a leaf, or neither leaf nor table: the run has no table descriptor)
	 * check_make() asks nothing per position of a leaf made without stale facts near it,
	 * and (below level 3) without stale positions.  A live change needs a valid old value
	 * where the new one is valid, check_make()'s "break-not-visible" a valid visible one
	 * (with a position): when the ORs say no entry has both, the stores past the first leaf
	 * ask nothing, and a run of no valid value nothing at all. */
	bool walks = level != 3 && pt_machine_nstale_pos(m), leaf_asked = false;
	bool made = ors.any & PT_DESC_VALID;
	bool each = (ors.any & ors.wany & PT_DESC_VALID) || (ti->found && (ors.any & ors.vany & PT_DESC_VALID));
	for (unsigned k = 0; made && k < n && (each || !leaf_asked); k++) {
		uint64_t o = old[k], v = vals[k];
		if (!pt_desc_valid(v))
			continue;
		if (pt_desc_valid(o) && o != v && live_change_tag(m, level, o, v))
			return false;
		/* what a leaf asks is the same for each of the run's leaves: asked at the first */
		if (!leaf_asked && pt_desc_is_leaf(v, level)) {
			if (!run_leaf_ok(c, m, f, idx, n, level, ti, walks))
				return false;
			leaf_asked = true;
		}
		if (!ti->found)
			continue;
		/* check_make()'s "break-not-visible", asked as the store's hook would: the run's
		 * earlier stores are to other entries, and no store drains during the run, so the
		 * entry's visible value and the stores pending to it are those the hook would see */
		if (make_before_break_visible(c, m, cpu, f, idx + k, level, o, v, visible[k], ti))
			return false;
	}

	/* I8: in an unmap the run is inside its range, so none of its stores takes a snapshot,
	 * and no snapshot held is one unmap_foreign_store() would mark (none meets the run's VAs,
	 * or all are the run's operation's own): unmap_stores() does nothing at any store.  Else
	 * it is called for the run's stores, unless it would read what a table descriptor it
	 * clears points to (perhaps this very table). */
	const struct pt_opctx *op = pt_machine_op(m, cpu);
	uint64_t size = pt_level_size(level), lo = ti->va + idx * size, hi = lo + n * size;
	bool unmaps = ti->found && !r->unmap_quiet &&
		      !(hi > lo && (!is_unmap(op) || run_inside_unmap(op, lo, hi)) &&
			(!c->nsnap_all || hi <= c->snap_lo || lo >= c->snap_hi ||
			 snaps_all_own(c, op->open ? op->id : 0)));
	for (unsigned k = 0; unmaps && k < n; k++)
		if (pt_desc_is_table(old[k], level))
			return false;
	/* I12: check_lock() of the first store answers for all (and fills the lock memo) */
	if (ti->found && !check_lock_held(c, cpu, f, level, ti))
		return false;

	/* nothing reports: what the hooks change, in their order (none of it reads another's) */
	if (unmaps)
		unmap_stores(c, cpu, ti, old, n, lo, level);
	if (r->level >= 2 && op->open && touched)
		group_hold_run(c, cpu, op, f, touched, r->level);
	return true;
}

static bool op_in_flight(const struct pt_checker *c, uint32_t id)
{
	for (unsigned i = 0; i < c->nopen; i++)
		if (c->open_ops[i] == id)
			return true;
	return false;
}

/*
 * One rule for a user page-table entry that another operation, still in flight, cleared and
 * whose TLB flush that operation has deferred (zap_pte_range() under mmap_lock for read, for
 * MADV_DONTNEED/MADV_FREE: the DSB, the TLBI and the freeing all come at tlb_finish_mmu()),
 * made valid again by a concurrent fault before that flush.  The zap clears the entry under
 * the PTL and drops it; the fault takes the PTL, finds pte_none() and do_anonymous_page()
 * maps a page there with no flush (pgattr_change_is_safe(): creating a mapping is always
 * safe; a user mapping needs no DSB, a fault is retried).  Until the zap's flush, a walker
 * may still see the old entry (the clear is not yet visible: the PTL handoff orders the two
 * stores for the CPUs, not for the walkers) and a TLB may still hold it, beside the new one.
 * The old page is not freed before the flush (I1 still holds), and the zap's return is judged
 * as any (I2).  Whether the architecture tolerates the two translations meanwhile is an open
 * question (docs/open-findings.md); the checkers follow the kernel: the make is no I4
 * (tlb-conflict, break-not-visible) and the fault's return no I2 for what the zap owes.
 * Still violations: the clearing operation remaking the entry itself before its flush, a
 * kernel (global) entry (a lazily freed vmap area's: the purge list judges them), and an
 * entry whose clearing operation has returned.  clearer: the id of the operation that
 * cleared the entry (0: none known); by_cpu: the CPU making it valid.
 */
static bool refill_before_deferred_flush(struct pt_checker *c, uint32_t clearer, bool global, unsigned by_cpu)
{
	const struct pt_opctx *maker = pt_machine_op(c->m, by_cpu);
	return !global && clearer && !(maker->open && maker->id == clearer) && op_in_flight(c, clearer);
}

/* The operation whose store clearing entry (f, idx), still in a store buffer, keeps its old
 * value visible to walkers (0: none) */
static uint32_t pending_clearer(const struct pt_checker *c, uint32_t f, unsigned idx)
{
	for (unsigned k = 0; k < pt_machine_cpus(c->m); k++)
		for (uint32_t i = pt_machine_npending(c->m, k); i-- > 0;) {
			uint32_t pf;
			unsigned pidx;
			uint64_t val;
			pt_machine_pending(c->m, k, i, &pf, &pidx, &val);
			if (pf == f && pidx == idx && !pt_desc_valid(val))
				return pt_machine_pending_op(c->m, k, i);
		}
	return 0;
}

/* conflict_free() of the last pair of descriptors asked, and its answer */
struct cf_memo {
	bool valid, free;
	uint64_t old, new;
};

/*
 * conflict_free(old, new), from the memo cm when it holds a pair with the bits outside the
 * output address of old and new and output addresses the same distance from theirs (the leaves
 * of a run step together with the stale facts of the entries they replace): conflict_free()
 * reads the output addresses only in comparing old's with new's (old == new among them), the
 * other bits as they are, so it gives such pairs one answer.
 */
static inline bool conflict_free_memo(struct cf_memo *cm, uint64_t old, uint64_t new)
{
	if (!cm->valid || (((old ^ cm->old) | (new ^ cm->new)) & ~PT_DESC_OA_MASK) || old - cm->old != new - cm->new)
		*cm = (struct cf_memo){ true, conflict_free(old, new), old, new };
	return cm->free;
}

/* I4: may stale fact f, which overlaps the VAs of a new leaf desc at va, be cached beside it?
 * cm: the memo of conflict_free_memo(), the caller's, for the leaves it asks about. */
static inline bool fact_leaf_conflicts(struct pt_checker *c, const struct pt_fact *f, uint64_t va, unsigned level,
				       uint16_t asid, bool global, uint64_t desc, unsigned by_cpu, struct cf_memo *cm)
{
	if (!(f->global || global || f->asid == asid))
		return false;
	if (f->desc == desc && f->va == va && f->level == level)
		return false;
	if (f->va == va && f->level == level && conflict_free_memo(cm, f->desc, desc))
		return false;
	return !refill_before_deferred_flush(c, f->op, f->global || global, by_cpu);
}

/* I4: an old translation for va may still be cached beside a new leaf.  True if it reported. */
static bool leaf_fact_conflict(struct pt_checker *c, struct pt_machine *m, uint64_t va, unsigned level,
			       uint16_t asid, bool global, uint64_t desc, unsigned by_cpu)
{
	uint32_t hits[MAX_HITS];
	uint64_t size = pt_level_size(level);
	uint32_t n = pt_machine_facts_overlapping(m, va, size, hits, MAX_HITS);
	char tb[32];
	struct cf_memo cm = { 0 };

	for (uint32_t i = 0; i < n; i++) {
		const struct pt_fact *f = pt_machine_fact(m, hits[i]);
		if (!fact_leaf_conflicts(c, f, va, level, asid, global, desc, by_cpu, &cm))
			continue;
		struct pt_stale s;
		stale_from_fact(&s, f);
		report(c, PT_I4, by_cpu, "tlb-conflict", RULE_BBM_CONFLICT, va, oa(m, desc), f->desc, desc, &s,
		       "new level-%u translation for va 0x%llx (%s) became visible while the old one (stale "
		       "since event %llu) may still be cached", level, (unsigned long long)va,
		       tagname(global, asid, tb, sizeof(tb)), (unsigned long long)f->since);
		return true;
	}
	return false;
}

/* I4: a block replaced a table whose walk-cache entry may survive */
static void leaf_walk_conflict(struct pt_checker *c, struct pt_machine *m, uint64_t va, unsigned level,
			       uint16_t asid, bool global, uint64_t desc, unsigned by_cpu)
{
	for (uint32_t i = 0; i < pt_machine_nstale_pos(m); i++) {
		const struct pt_pos *p = pt_machine_stale_pos(m, i);
		const struct pt_frame *fr = pt_machine_frame(m, p->frame);
		if (fr->level == (int)level + 1 && p->va == va && (p->global || global || p->asid == asid)) {
			struct pt_stale s;
			stale_from_pos(c, &s, p);
			report(c, PT_I4, by_cpu, "table-to-block", RULE_BBM_CONFLICT, va, oa(m, desc), s.desc, desc,
			       &s,
			       "level-%u block for va 0x%llx became visible while a walk-cache entry for the "
			       "table it replaced may survive", level, (unsigned long long)va);
			return;
		}
	}
}

/* I4: a new leaf for va while an old, different translation of it may still be cached.
 * no_facts: the caller knows no stale fact overlaps the leaf's VAs (facts_memo). */
static inline void check_leaf_conflict(struct pt_checker *c, struct pt_machine *m, uint64_t va, unsigned level,
				       uint16_t asid, bool global, uint64_t desc, unsigned by_cpu, bool no_facts)
{
	/* without stale facts, pt_machine_facts_overlapping() finds none */
	if (!no_facts && pt_machine_nfacts(m) &&
	    leaf_fact_conflict(c, m, va, level, asid, global, desc, by_cpu))
		return;
	if (level < 3 && pt_machine_nstale_pos(m))
		leaf_walk_conflict(c, m, va, level, asid, global, desc, by_cpu);
}

/* The leaf translating va inside the subtree of table f (level, covering base..). */
static bool subtree_leaf(struct pt_machine *m, uint32_t f, uint64_t base, uint64_t va, uint64_t *desc,
			 unsigned *level)
{
	int prev = -1;
	for (;;) {
		const struct pt_frame *fr = pt_machine_frame(m, f);
		if (fr->state != PT_FS_TABLE || !fr->level_known || (int)fr->level <= prev)
			return false;	/* levels only go down: a cycle or a table at two levels ends here */
		prev = fr->level;
		uint64_t size = pt_level_size(fr->level);
		unsigned idx = (unsigned)((va - base) / size);
		if (idx >= PT_PTRS)
			return false;
		uint64_t d = pt_machine_entry_visible(m, f, idx);
		if (pt_desc_is_leaf(d, fr->level)) {
			*desc = d;
			*level = fr->level;
			return true;
		}
		if (!pt_desc_is_table(d, fr->level))
			return false;
		base += idx * size;
		f = pt_machine_lookup(m, oa(m, d));
		if (f == PT_NO_FRAME)
			return false;
	}
}

/* I4: a new table for a VA range while an old translation (block, or another table) may be cached */
static void check_table_conflict(struct pt_checker *c, struct pt_machine *m, uint64_t va, unsigned level,
				 uint16_t asid, bool global, uint32_t child, unsigned by_cpu)
{
	uint32_t hits[MAX_HITS];
	/* another table's walk-cache entry for the same slot: the table address changed without BBM */
	for (uint32_t i = 0; i < pt_machine_nstale_pos(m); i++) {
		const struct pt_pos *p = pt_machine_stale_pos(m, i);
		const struct pt_frame *fr = pt_machine_frame(m, p->frame);
		if (p->frame == child || fr->level != (int)level + 1 || p->va != va ||
		    !(p->global || global || p->asid == asid))
			continue;
		struct pt_stale s;
		stale_from_pos(c, &s, p);
		report(c, PT_I4, by_cpu, "table-replaced-without-tlbi", RULE_BBM_CONFLICT, va,
		       pt_machine_frame(m, child)->pfn << PT_PAGE_SHIFT, s.desc, 0, &s,
		       "level-%u table descriptor for va 0x%llx now points at table 0x%llx while a walk-cache "
		       "entry for the old table 0x%llx (stale since event %llu) may survive", level,
		       (unsigned long long)va, (unsigned long long)(pt_machine_frame(m, child)->pfn << PT_PAGE_SHIFT),
		       (unsigned long long)(fr->pfn << PT_PAGE_SHIFT), (unsigned long long)p->since);
		return;
	}
	uint32_t n = pt_machine_facts_overlapping(m, va, pt_level_size(level), hits, MAX_HITS);
	for (uint32_t i = 0; i < n; i++) {
		const struct pt_fact *f = pt_machine_fact(m, hits[i]);
		if (!(f->global || global || f->asid == asid))
			continue;
		uint64_t d;
		unsigned l;
		const char *tag = NULL;
		if (f->level <= level)
			tag = "block-to-table";	/* a stale block covers the range the new table translates */
		else if (subtree_leaf(m, child, va, f->va, &d, &l) && !(d == f->desc && l == f->level) &&
			 !(l == f->level && conflict_free(f->desc, d)))
			tag = "tlb-conflict";
		if (!tag)
			continue;
		struct pt_stale s;
		stale_from_fact(&s, f);
		report(c, PT_I4, by_cpu, tag, RULE_BBM_CONFLICT, f->va, 0, f->desc, 0, &s,
		       "a table hooked at level %u for va 0x%llx gives new translations where an old one (va "
		       "0x%llx, stale since event %llu) may still be cached", level, (unsigned long long)va,
		       (unsigned long long)f->va, (unsigned long long)f->since);
		return;
	}
}

static void on_leaf_live(void *ctx, struct pt_machine *m, uint64_t va, unsigned level, uint16_t asid, bool global,
			 uint64_t desc, unsigned by_cpu)
{
	check_leaf_conflict(ctx, m, va, level, asid, global, desc, by_cpu, false);
}

/*
 * on_leaf_live() of each leaf descs[k] at va + k * size, in order.  The facts a leaf's query
 * finds overlap the run's VAs: where one query of the run (which changes nothing) finds them
 * all, a leaf that none of them may conflict with gets no report from its own
 * leaf_fact_conflict(), and asks none; a leaf that one may conflict with asks its own, which
 * reports the first conflicting fact in its own query's order.  Without any such fact, at level
 * 3 or without stale positions, check_leaf_conflict() has nothing to ask for any leaf.
 */
static void on_leaf_live_run(void *ctx, struct pt_machine *m, uint64_t va, unsigned n, unsigned level,
			     uint16_t asid, bool global, const uint64_t *descs, unsigned by_cpu)
{
	struct pt_checker *c = ctx;
	uint64_t size = pt_level_size(level);
	uint32_t hits[PT_PTRS + 1];
	uint64_t ask[PT_PTRS / 64] = { 0 };
	bool asks = false;	/* a bit of ask[] is set */
	struct cf_memo cm = { 0 };
	/* the facts memo, made at the stores of these leaves, mostly knows the query finds none
	 * (reading it changes nothing) */
	const struct facts_memo *fm = &c->facts_memo;
	uint32_t nh = pt_machine_nfacts(m) && !(fm->none && facts_memo_covers(fm, m, va, va + (n * size - 1))) ?
		      pt_machine_facts_overlapping(m, va, n * size, hits, PT_PTRS + 1) : 0;

	if (nh == PT_PTRS + 1) {
		/* maybe not all: each leaf asks its own */
		memset(ask, 0xff, sizeof(ask));
		asks = true;
		nh = 0;
	} else if (!nh && (level == 3 || !pt_machine_nstale_pos(m))) {
		return;
	}
	for (uint32_t i = 0; i < nh; i++) {
		const struct pt_fact *f = pt_machine_fact(m, hits[i]);
		uint64_t last = f->va + (pt_level_size(f->level) - 1);	/* >= va: it overlaps the run */
		unsigned k = f->va > va ? (unsigned)((f->va - va) / size) : 0;
		unsigned k1 = (last - va) / size < n ? (unsigned)((last - va) / size) : n - 1;
		for (; k <= k1; k++)
			if (pt_desc_is_leaf(descs[k], level) &&
			    fact_leaf_conflicts(c, f, va + k * size, level, asid, global, descs[k], by_cpu, &cm)) {
				ask[k / 64] |= 1ull << (k % 64);
				asks = true;
			}
	}
	/* no leaf asks its facts: as without any, nothing to ask at level 3 or without stale positions */
	if (!asks && (level == 3 || !pt_machine_nstale_pos(m)))
		return;
	for (unsigned k = 0; k < n; k++)
		if (pt_desc_is_leaf(descs[k], level))
			check_leaf_conflict(c, m, va + k * size, level, asid, global, descs[k], by_cpu,
					    !(ask[k / 64] >> (k % 64) & 1));
}

static void on_table_live(void *ctx, struct pt_machine *m, uint64_t va, unsigned level, uint16_t asid, bool global,
			  uint32_t child, unsigned by_cpu)
{
	/* check_table_conflict() finds nothing without stale positions or facts */
	if (pt_machine_nstale_pos(m) || pt_machine_nfacts(m))
		check_table_conflict(ctx, m, va, level, asid, global, child, by_cpu);
}

static void on_zero_publish(void *ctx, struct pt_machine *m, uint32_t parent, unsigned idx, uint32_t child)
{
	struct pt_checker *c = ctx;
	const struct pt_frame *cf = pt_machine_frame(m, child);
	const struct pt_frame *pf = pt_machine_frame(m, parent);
	if (cf->zero == PT_ZS_ORDERED)
		return;
	bool found;
	uint64_t va = entry_va(c, parent, idx, &found);
	report(c, PT_I7, cur_cpu(c), cf->zero == PT_ZS_GARBAGE ? "published-unzeroed" : "published-before-zero-visible",
	       RULE_ZERO, va, cf->pfn << PT_PAGE_SHIFT, 0, pt_machine_current_event(m)->val, NULL,
	       "table 0x%llx published in entry 0x%llx %s", (unsigned long long)(cf->pfn << PT_PAGE_SHIFT),
	       (unsigned long long)((pf->pfn << PT_PAGE_SHIFT) + idx * 8),
	       cf->zero == PT_ZS_GARBAGE ? "without ever being zeroed" :
	       "before a barrier on the zeroing CPU made its zeroing visible");
}

/*
 * Is entry (f, idx), mapping kernel va, cleared in program order inside a vmap area on the
 * purge list?  The clear, still in some CPU's store buffer, needs no barrier of its own
 * (__set_pte_complete(): only valid kernel entries get dsb+isb), and vfree() frees the pages
 * right after it: until __purge_vmap_area_lazy() flushes the VA, nothing may use it, so the
 * page may be freed, reused and freed again meanwhile, by any CPU and any later operation
 * (mm/vmalloc.c: free_vmap_area_noflush()).  The purge checks the clear is visible.
 */
static bool lazily_cleared(const struct pt_machine *m, uint32_t f, unsigned idx, uint64_t va, unsigned level)
{
	return !pt_desc_valid(pt_machine_entry_latest(m, f, idx)) && lazily_flushed(m, va, pt_level_size(level));
}

/* Pending store i of cpu k: its table frame, entry and value, and the entry's VA (found: known). */
static uint64_t pending_entry(struct pt_checker *c, const struct pt_machine *m, unsigned k, uint32_t i, uint32_t *f,
			      unsigned *idx, uint64_t *val, bool *found)
{
	pt_machine_pending(m, k, i, f, idx, val);
	return entry_va(c, *f, *idx, found);
}

/* I1: the report of free_store_pending(), for pending store i of cpu k.  True if it reported
 * (not for a leaf of the linear map). */
static __attribute__((noinline)) bool free_store_report(struct pt_checker *c, struct pt_machine *m, uint32_t f,
							unsigned cpu, unsigned k, uint32_t i)
{
	const struct pt_frame *fr = pt_machine_frame(m, f);
	uint64_t pa = fr->pfn << PT_PAGE_SHIFT;
	uint32_t pf;
	unsigned idx;
	uint64_t val;
	bool found;
	uint64_t va = pending_entry(c, m, k, i, &pf, &idx, &val, &found);
	const struct pt_frame *pfr = pt_machine_frame(m, pf);
	if (found && !pt_desc_is_table(val, pfr->level) && va >= pt_machine_kernel_base(m) && va < PT_LINEAR_MAP_END)
		return false;	/* the linear map aliases all of RAM, allocated or free */
	report(c, PT_I1, cpu, "freed-store-pending", RULE_FREE, va, pa, val, 0, NULL,
	       "%s 0x%llx freed while cpu%u's store of entry 0x%llx (va 0x%llx), which %s it, may "
	       "already have been walked (no DSB since the store)",
	       fr->state == PT_FS_TABLE ? "table" : "page", (unsigned long long)pa, k,
	       (unsigned long long)((pfr->pfn << PT_PAGE_SHIFT) + idx * 8), (unsigned long long)va,
	       pt_desc_is_table(val, pfr->level) ? "hooks" : "maps");
	return true;
}

/* The PAs [*o, *o + *size) that pending store i of cpu k hooks or maps, and its table frame:
 * false for a store of an invalid value, or into a table of unknown level (neither). */
static inline bool pending_span(struct pt_machine *m, unsigned k, uint32_t i, uint32_t *pf, uint64_t *o,
				uint64_t *size)
{
	unsigned idx;
	uint64_t val;
	pt_machine_pending(m, k, i, pf, &idx, &val);
	if (!pt_desc_valid(val))
		return false;
	const struct pt_frame *pfr = pt_machine_frame(m, *pf);
	if (!pfr->level_known)
		return false;
	*size = pt_desc_is_table(val, pfr->level) ? PT_PTRS * 8ull : pt_level_size(pfr->level);
	*o = oa(m, val);
	return true;
}

/*
 * May a pending store hook or map pa, freed by the page_free now applied?  The pend memo
 * answers when it was made or used at this event or the one just before: page_free events
 * that follow each other with nothing between add no store, drain none, and a frame's release
 * only drops leaves, positions and the levels of frames, so the spans of the pending stores
 * stay within those it found.
 */
static bool pending_may_map(struct pt_checker *c, struct pt_machine *m, uint64_t pa)
{
	const struct pt_event *ev = pt_machine_current_event(m);
	struct pend_memo *pm = &c->pend_memo;
	uint64_t e = pt_machine_event_index(m);
	if (!ev || ev->kind != PT_EV_PAGE_FREE)
		return true;
	if (!pm->valid || (pm->event != e && pm->event + 1 != e)) {
		*pm = (struct pend_memo){ true, e, UINT64_MAX, 0 };
		for (unsigned k = 0; k < pt_machine_cpus(m); k++)
			for (uint32_t i = 0; i < pt_machine_npending(m, k); i++) {
				uint32_t pf;
				uint64_t o, size;
				if (!pending_span(m, k, i, &pf, &o, &size))
					continue;
				pm->lo = o < pm->lo ? o : pm->lo;
				pm->hi = o + size > pm->hi ? o + size : pm->hi;
			}
	}
	pm->event = e;
	return pa >= pm->lo && pa < pm->hi;
}

/* I1: a store not yet followed by a DSB may already be visible: a pending value that hooks or
 * maps the frame may have been walked and cached.  True if it reported.  (The tests of a pending
 * store have no side effects: the cheapest go first, a clear fails the first.) */
static bool free_store_pending(struct pt_checker *c, struct pt_machine *m, uint32_t f, unsigned cpu)
{
	uint64_t pa = pt_machine_frame(m, f)->pfn << PT_PAGE_SHIFT;
	if (!pending_may_map(c, m, pa))
		return false;
	for (unsigned k = 0; k < pt_machine_cpus(m); k++) {
		for (uint32_t i = 0; i < pt_machine_npending(m, k); i++) {
			uint32_t pf;
			uint64_t o, size;
			if (!pending_span(m, k, i, &pf, &o, &size))
				continue;
			if (pa < o || pa >= o + size || pt_machine_first_pos(m, pf) == UINT32_MAX)
				continue;
			if (free_store_report(c, m, f, cpu, k, i))
				return true;
		}
	}
	return false;
}

/* I1, I6: a table freed while it may still be walked, or before the ISB after its walk-cache
 * invalidation */
static __attribute__((noinline)) void free_table(struct pt_checker *c, struct pt_machine *m, uint32_t f,
						 unsigned cpu)
{
	const struct pt_frame *fr = pt_machine_frame(m, f);
	uint64_t pa = fr->pfn << PT_PAGE_SHIFT;
	char tb[32];

	if (fr->latest_space == 2 && c->cpu[cpu].kinv_isb_event) {
		/* kernel commit 51696d346c49: the ISB after walk-cache invalidation, before the
		 * table can be reused */
		report(c, PT_I6, cpu, "table-freed-before-isb", RULE_KINV_ISB, 0, pa, 0, 0, NULL,
		       "kernel table 0x%llx freed after the walk-cache invalidation completed at event %llu "
		       "but before the ISB", (unsigned long long)pa,
		       (unsigned long long)(c->cpu[cpu].kinv_isb_event - 1));
	}
	/* the first position is reported: one report per table */
	uint32_t p = pt_machine_first_pos(m, f);
	if (p == UINT32_MAX)
		return;
	const struct pt_pos *pp = pt_machine_pos(m, p);
	struct pt_stale s;
	stale_from_pos(c, &s, pp);
	if (pp->live)
		report(c, PT_I1, cpu, "table-freed-while-hooked", RULE_FREE_LIVE, pp->va, pa, 0, 0, &s,
		       "level-%d table 0x%llx freed while still hooked at va 0x%llx (%s)", fr->level,
		       (unsigned long long)pa, (unsigned long long)pp->va,
		       tagname(pp->global, pp->asid, tb, sizeof(tb)));
	else
		report(c, PT_I1, cpu, "table-freed-walk-cached", RULE_FREE, pp->va, pa, 0, 0, &s,
		       "level-%d table 0x%llx freed while a walk-cache entry for va 0x%llx (%s, stale "
		       "since event %llu) may still point at it", fr->level, (unsigned long long)pa,
		       (unsigned long long)pp->va, tagname(pp->global, pp->asid, tb, sizeof(tb)),
		       (unsigned long long)pp->since);
}

/* I1: a page freed while a TLB may still map it.  True if it reported. */
static bool free_page_tlb_cached(struct pt_checker *c, struct pt_machine *m, uint32_t f, unsigned cpu)
{
	const struct pt_frame *fr = pt_machine_frame(m, f);
	uint64_t pa = fr->pfn << PT_PAGE_SHIFT;
	char tb[32];
	uint32_t hits[MAX_HITS];
	uint32_t n = pt_machine_facts_mapping(m, pa, hits, MAX_HITS);
	for (uint32_t i = 0; i < n; i++) {
		const struct pt_fact *fa = pt_machine_fact(m, hits[i]);
		if (lazily_flushed(m, fa->va, pt_level_size(fa->level)))
			continue;	/* vmalloc's lazy purge flushes before the VA is reused */
		struct pt_stale s;
		stale_from_fact(&s, fa);
		report(c, PT_I1, cpu, "page-freed-tlb-cached", RULE_FREE, fa->va, pa, fa->desc, 0, &s,
		       "page 0x%llx freed while a TLB entry for va 0x%llx (%s, stale since event %llu) may still "
		       "map it", (unsigned long long)pa, (unsigned long long)fa->va,
		       tagname(fa->global, fa->asid, tb, sizeof(tb)), (unsigned long long)fa->since);
		return true;
	}
	return false;
}

/* I1: a page freed while a table still maps it */
static void free_page_mapped(struct pt_checker *c, struct pt_machine *m, uint32_t f, unsigned cpu)
{
	const struct pt_frame *fr = pt_machine_frame(m, f);
	uint64_t pa = fr->pfn << PT_PAGE_SHIFT;
	char tb[32];
	uint64_t leaves[MAX_HITS];
	uint32_t n = pt_machine_leaves_mapping(m, pa, leaves, MAX_HITS);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t tf = (uint32_t)(leaves[i] >> 9);
		unsigned idx = leaves[i] & (PT_PTRS - 1);
		const struct pt_frame *t = pt_machine_frame(m, tf);
		uint64_t d = pt_machine_entry_visible(m, tf, idx);
		if (!pt_desc_is_leaf(d, t->level) || pa < oa(m, d) || pa >= oa(m, d) + pt_level_size(t->level))
			continue;
		/* the VA at its first position (table_info(): the table of a vfree()'s pages is
		 * the one its clears went to last) */
		struct tinfo ti;
		table_info(c, tf, &ti);
		if (!ti.found)
			continue;	/* mapped only by a table nothing can walk */
		uint64_t va = ti.va + idx * pt_level_size(t->level);
		struct pt_stale s = { 0 };
		if (va >= pt_machine_kernel_base(m) && va < PT_LINEAR_MAP_END)
			continue;	/* the linear map aliases all of RAM, allocated or free */
		if (lazily_cleared(m, tf, idx, va, t->level))
			continue;	/* vfree: unmapped without a flush, freed; the lazy purge flushes */
		const struct pt_pos *pp = pt_machine_pos(m, pt_machine_first_pos(m, tf));
		if (!pp->live) {
			stale_from_pos(c, &s, pp);
			report(c, PT_I1, cpu, "page-freed-walk-cached", RULE_FREE, va, pa, d, 0, &s,
			       "page 0x%llx freed while still mapped at va 0x%llx by a table reachable through a "
			       "stale walk-cache entry", (unsigned long long)pa, (unsigned long long)va);
		} else {
			report(c, PT_I1, cpu, "page-freed-while-mapped", RULE_FREE_LIVE, va, pa, d, 0, NULL,
			       "page 0x%llx freed while still mapped at va 0x%llx (%s)", (unsigned long long)pa,
			       (unsigned long long)va, tagname(pp->global, pp->asid, tb, sizeof(tb)));
		}
		return;
	}
}

/*
 * For the pages [lo, hi) of a page_free: what free_store_pending(), free_page_tlb_cached() and
 * free_page_mapped() could find in any of them, asked once for the whole range (each a
 * superset of what they look for; false means none of them finds anything).  Freeing the
 * frames one by one changes none of it: a frame's release only drops leaves, positions and
 * the levels of frames, so the answer holds through the page_free events that follow each
 * other with no other event between.
 */
static __attribute__((noinline)) const struct free_memo *free_memo_make(struct pt_checker *c, struct pt_machine *m,
									uint64_t lo, uint64_t hi)
{
	struct free_memo *fm = &c->free_memo;
	*fm = (struct free_memo){ true, pt_machine_event_index(m), lo, hi, pt_machine_facts_gen(m), false, false, false };
	for (unsigned k = 0; k < pt_machine_cpus(m) && !fm->pending; k++)
		for (uint32_t i = 0; i < pt_machine_npending(m, k) && !fm->pending; i++) {
			uint32_t pf;
			uint64_t o, size;
			if (pending_span(m, k, i, &pf, &o, &size))
				fm->pending = o < hi && lo < o + size;
		}
	for (uint32_t i = 0; i < pt_machine_nfacts(m) && !fm->facts; i++) {
		const struct pt_fact *fa = pt_machine_fact(m, i);
		fm->facts = oa(m, fa->desc) < hi && lo < oa(m, fa->desc) + pt_level_size(fa->level);
	}
	fm->leaves = pt_machine_leaves_maybe_in(m, lo, hi);
	return fm;
}

/*
 * A page_free of fewer than 16 pages: the memo of the page_free just before, if it covers these
 * pages; else, if that one freed the pages just below, a memo of these pages to the end of their
 * 2 MiB (munmap() of a split THP frees its pages one by one, in order).
 */
static inline const struct free_memo *page_run_memo(struct pt_checker *c, struct pt_machine *m,
						    const struct pt_event *ev)
{
	struct free_memo *fm = &c->free_memo;
	uint64_t e = pt_machine_event_index(m);
	uint64_t lo = ev->pa & ~((1ull << PT_PAGE_SHIFT) - 1), hi = lo + (1ull << (PT_PAGE_SHIFT + ev->order));
	bool run = c->free_run_event + 1 == e && c->free_run_next == lo;
	c->free_run_event = e;
	c->free_run_next = hi;
	if (fm->valid && fm->event + 1 == e && fm->facts_gen == pt_machine_facts_gen(m) && fm->lo <= lo &&
	    hi <= fm->hi && hi > lo) {
		fm->event = e;
		return fm;
	}
	if (!run || hi <= lo)
		return NULL;
	uint64_t end = (lo | (pt_level_size(2) - 1)) + 1;
	return free_memo_make(c, m, lo, end > hi ? end : hi);
}

static inline const struct free_memo *folio_free_memo(struct pt_checker *c, struct pt_machine *m)
{
	const struct pt_event *ev = pt_machine_current_event(m);
	if (!ev || ev->kind != PT_EV_PAGE_FREE)
		return NULL;
	struct free_memo *fm = &c->free_memo;
	if (fm->valid && fm->event == pt_machine_event_index(m))
		return fm;
	if (ev->order < 4)
		return page_run_memo(c, m, ev);
	uint64_t lo = ev->pa & ~((1ull << PT_PAGE_SHIFT) - 1);
	return free_memo_make(c, m, lo, lo + (1ull << (PT_PAGE_SHIFT + ev->order)));
}

/* on_frame_free() of a frame that the memo fm (NULL: none) does not tell apart */
static __attribute__((noinline)) void frame_free_judge(struct pt_checker *c, struct pt_machine *m, uint32_t f,
						       const struct free_memo *fm)
{
	const struct pt_frame *fr = pt_machine_frame(m, f);
	unsigned cpu = cur_cpu(c);

	if ((!fm || fm->pending) && free_store_pending(c, m, f, cpu))
		return;
	if (fr->state == PT_FS_TABLE) {
		free_table(c, m, f, cpu);
		return;
	}
	if (fr->state != PT_FS_DATA)
		return;
	/* without stale facts, pt_machine_facts_mapping() finds none */
	if ((fm ? fm->facts : pt_machine_nfacts(m) != 0) && free_page_tlb_cached(c, m, f, cpu))
		return;
	if (!fm || fm->leaves)
		free_page_mapped(c, m, f, cpu);
}

static void on_frame_free(void *ctx, struct pt_machine *m, uint32_t f)
{
	struct pt_checker *c = ctx;
	const struct free_memo *fm = folio_free_memo(c, m);
	/* a page of a free whose memo finds nothing (a table is judged whatever it says): most
	 * frees, out of a call that has the checks' cost */
	if (fm && !(fm->pending | fm->facts | fm->leaves) && pt_machine_frame(m, f)->state != PT_FS_TABLE)
		return;
	frame_free_judge(c, m, f, fm);
}

/*
 * A run of page frees, [lo, hi) in order: one memo for all of it, which the first free takes up
 * (it is made at its event).  When it finds nothing, each page that is not a table would leave
 * on_frame_free() at its first test: its calls can go.
 */
static bool on_frame_free_run(void *ctx, struct pt_machine *m, uint64_t lo, uint64_t hi)
{
	const struct free_memo *fm = free_memo_make(ctx, m, lo, hi);
	return !(fm->pending | fm->facts | fm->leaves);
}

static void on_barrier(void *ctx, struct pt_machine *m, const struct pt_event *ev)
{
	struct pt_checker *c = ctx;
	/* (the CPU's state only where it is asked: not at a DSB, the most common barrier) */
	if (ev->kind == PT_EV_DSB || (ev->kind == PT_EV_SWITCH && !(ev->flags & PT_SWITCH_NO_DSB))) {
		/* the DSB drains this CPU's store buffer, whichever context stored */
		for (unsigned i = 0; i < c->nkmaps; i++)
			if (c->kmaps[i].state == KM_NEED_DSB && c->kmaps[i].store_cpu == ev->cpu)
				c->kmaps[i].state = KM_NEED_ISB;
	} else if (ev->kind == PT_EV_ISB) {
		/* the ISB is the running context's: it may run on another CPU than its stores */
		uint32_t me = pt_machine_context(m, ev->cpu);
		unsigned keep = 0;
		for (unsigned i = 0; i < c->nkmaps; i++)
			if (!(c->kmaps[i].state == KM_NEED_ISB && c->kmaps[i].ctx == me))
				c->kmaps[keep++] = c->kmaps[i];
		c->nkmaps = keep;
		c->cpu[ev->cpu].kinv_isb_event = 0;
	} else if (ev->kind == PT_EV_IRQ_ENTER) {
		/*
		 * An exception entry is a context synchronization event (Arm ARM: "Context
		 * synchronization event", taking an exception when SCTLR_EL1.EIS is 1, which
		 * Linux sets; the exception return too, SCTLR_EL1.EOS): the handler, and the
		 * interrupted routine when it resumes, run after it, as after an ISB.  The kernel
		 * TLBI completed on this CPU (by its DSB ISH) owes no ISB any more.  An access of
		 * the interrupted routine itself before its ISB, with no exception between, is
		 * still I6 (corpus/regressions/arch/I6-kernel-inval-irq-entry.{good,bad}.ptt).
		 */
		c->cpu[ev->cpu].kinv_isb_event = 0;
	}
	if (ev->kind == PT_EV_SWITCH && pt_machine_tid(m, ev->cpu) != ev->tid &&
	    !(pt_machine_context(m, ev->cpu) & (1u << 31))) {
		/*
		 * The ISB is owed by the routine that invalidated, for its own later instructions
		 * (tlbflush.h: flush_tlb_kernel_range, __flush_tlb_kernel_pgtable).  A thread leaves
		 * the CPU between its kernel TLBI and that ISB only by preemption (the flushes take
		 * no lock): the interrupt's exception entry, __switch_to()'s dsb(ish), which
		 * completes the TLBI, and the incoming thread resumes through the exception return
		 * of its own preemption, or returns to user space: a context synchronization event
		 * on this CPU (Arm ARM: ERET; Linux sets SCTLR_EL1.EOS).  The incoming context owes
		 * nothing for it; the preempted routine issues its ISB when it runs again, wherever.
		 */
		c->cpu[ev->cpu].kinv_isb_event = 0;
	}
}

static void on_tlbi_done(void *ctx, struct pt_machine *m, unsigned cpu, unsigned op, uint64_t va, uint64_t size)
{
	struct pt_checker *c = ctx;
	unsigned base = op >= PT_TLBI_VAE1 ? op - PT_TLBI_VAE1 : op;
	(void)size;
	if ((size && kernel_va(m, va)) || base == PT_TLBI_VMALLE1IS) {
		if (!c->cpu[cpu].kinv_isb_event)
			c->cpu[cpu].kinv_isb_event = pt_machine_event_index(m) + 1;
	}
}

static void kmap_report(struct pt_checker *c, unsigned cpu, const struct kmap *k, const char *tag, const char *when)
{
	report(c, PT_I6, cpu, tag, RULE_KMAP, k->va, oa(c->m, k->desc), 0, k->desc, NULL,
	       "kernel mapping of va 0x%llx created at event %llu %s before the creating CPU's %s",
	       (unsigned long long)k->va, (unsigned long long)k->event, when,
	       k->state == KM_NEED_DSB ? "DSB and ISB" : "ISB");
}

/* an access to a kernel VA (the machine calls the hook for no other) */
static void on_access(void *ctx, struct pt_machine *m, const struct pt_event *ev)
{
	struct pt_checker *c = ctx;
	uint32_t me = pt_machine_context(m, ev->cpu);
	for (unsigned i = 0; i < c->nkmaps; i++) {
		const struct kmap *k = &c->kmaps[i];
		/* the page or block that the pending mapping covers (k->va is the leaf's first VA) */
		if (ev->va - k->va >= pt_level_size(k->level))
			continue;
		/* its creator must have done both barriers; anyone else needs at least the DSB */
		if (k->ctx == me || k->state == KM_NEED_DSB) {
			kmap_report(c, ev->cpu, k, "used-before-barrier", "used");
			return;
		}
	}
	struct cpu_state *cs = &c->cpu[ev->cpu];
	if (cs->kinv_isb_event)
		report(c, PT_I6, ev->cpu, "kernel-inval-no-isb", RULE_KINV_ISB, ev->va, 0, 0, 0, NULL,
		       "cpu%u accessed va 0x%llx after a kernel TLB invalidation completed at event %llu without "
		       "an ISB", ev->cpu, (unsigned long long)ev->va, (unsigned long long)(cs->kinv_isb_event - 1));
}

/* A leaf outside an unmap's range that one of its stores removed, to probe when it returns. */
static void snap_leaf(struct cpu_state *cs, const struct pt_opctx *op, uint64_t va, unsigned level, uint64_t desc)
{
	if (cs->nsnap >= MAX_SNAP || cs->op_snaps >= MAX_SNAP)
		return;
	struct snap_leaf s = { va, desc, op->id, op->asid, (uint8_t)level, false };
	cs->snap[cs->nsnap++] = s;
	cs->op_snaps++;
}

static bool is_unmap(const struct pt_opctx *op)
{
	return op->open && (op->kind == PT_OP_MUNMAP || op->kind == PT_OP_VUNMAP) && op->len;
}

/* The leaves of a table's subtree that lie outside [lo, hi), for I8. */
static void subtree_outside(struct pt_checker *c, struct cpu_state *cs, const struct pt_opctx *op, uint32_t f,
			    uint64_t base, uint64_t lo, uint64_t hi)
{
	const struct pt_frame *fr = pt_machine_frame(c->m, f);
	if (fr->state != PT_FS_TABLE || !fr->level_known)
		return;
	int flevel = fr->level;
	uint64_t size = pt_level_size(fr->level);
	const uint64_t *e = pt_machine_table_latest(c->m, f);	/* a table: not NULL */
	const uint64_t *st = pt_machine_table_stored(c->m, f);	/* (read once, not the frame at every entry) */
	for (unsigned i = pt_stored_next(st, 0); i < PT_PTRS && cs->nsnap < MAX_SNAP && cs->op_snaps < MAX_SNAP;
	     i = pt_stored_next(st, i + 1)) {
		uint64_t d = e[i], va = base + i * size;
		if (va >= lo && va + size <= hi) {
			/* so are the entries after it up to the one holding hi - 1 (VAs rise with the index;
			 * hi == 0, the top of the VA space, only when this is the table's last entry): go on
			 * from the first entry past hi - 1, the next one that may lie outside */
			uint64_t past = (hi - base) / size;
			i = (unsigned)(past < PT_PTRS ? past : PT_PTRS) - 1;
			continue;
		}
		if (!d)
			continue;	/* neither a leaf nor a table */
		if (pt_desc_is_leaf(d, fr->level)) {
			snap_leaf(cs, op, va, fr->level, d);
		} else if (pt_desc_is_table(d, fr->level)) {
			uint32_t child = pt_machine_lookup(c->m, oa(c->m, d));
			if (child != PT_NO_FRAME && pt_machine_frame(c->m, child)->level_known &&
			    pt_machine_frame(c->m, child)->level == flevel + 1)
				subtree_outside(c, cs, op, child, va, lo, hi);
		}
	}
}

/*
 * A store into what an unmap on another CPU (or a thread parked there) removed outside its
 * range is that other operation's doing, not the unmap's: reclaim (try_to_unmap() of the
 * whole folio, under the rmap lock and the PTL only) may unmap the rest of a large folio
 * that a munmap split, after the munmap dropped the PTL and before its TLB flush.  Such a
 * leaf is no longer the unmap's to keep.
 */
static void unmap_foreign_store(struct pt_checker *c, uint32_t by_op, const struct tinfo *ti, uint64_t va,
				uint64_t size)
{
	for (unsigned k = held_from(c, 0); k < c->ncpu; k = held_from(c, k + 1)) {
		struct cpu_state *cs = &c->cpu[k];
		for (unsigned i = 0; i < cs->nsnap; i++) {
			struct snap_leaf *s = &cs->snap[i];
			bool kernel = kernel_va(c->m, s->va);
			if (s->op == by_op || s->foreign || (kernel ? !ti->kernel : !ti->user || ti->asid != s->asid))
				continue;
			if (va < s->va + pt_level_size(s->level) && s->va < va + size)
				s->foreign = true;
		}
	}
}

/*
 * I8 bookkeeping at each store of an unmap: what it removes outside its range (a block or
 * contpte group torn down whole, a table unhooked while it still maps pages outside) must
 * still be mapped the same way when the unmap returns.  The stores of old[k] at va + k * size
 * (k < n) of a table of level `level`, in order, by cpu: no event comes between them, so the
 * CPU's operation is the same for each.
 */
static void unmap_stores(struct pt_checker *c, unsigned cpu, const struct tinfo *ti, const uint64_t *old,
			 unsigned n, uint64_t va, unsigned level)
{
	const struct pt_opctx *op = pt_machine_op(c->m, cpu);
	uint64_t size = pt_level_size(level);
	uint32_t by_op = op->open ? op->id : 0;
	bool unmapping = is_unmap(op);
	/* the kernel unmaps whole pages: the length rounds up */
	uint64_t lo = op->va, hi = (op->va + op->len + 0xfff) & ~0xfffull;
	struct cpu_state *cs = &c->cpu[cpu];
	for (unsigned k = 0; k < n; k++, va += size) {
		if (c->nsnap_all && va < c->snap_hi && c->snap_lo < va + size)
			unmap_foreign_store(c, by_op, ti, va, size);
		if (!pt_desc_valid(old[k]) || !unmapping)
			continue;
		if (va >= lo && va + size <= hi)
			continue;	/* entirely inside: what the unmap is for */
		unsigned before = cs->nsnap;
		if (pt_desc_is_leaf(old[k], level)) {
			snap_leaf(cs, op, va, level, old[k]);
		} else if (pt_desc_is_table(old[k], level)) {
			uint32_t child = pt_machine_lookup(c->m, oa(c->m, old[k]));
			if (child != PT_NO_FRAME)
				subtree_outside(c, cs, op, child, va, lo, hi);
		}
		bool empty = !c->nsnap_all;
		for (unsigned i = before; i < cs->nsnap; i++) {
			uint64_t s_lo = cs->snap[i].va, s_hi = s_lo + pt_level_size(cs->snap[i].level);
			if (!s_hi)
				continue;	/* unmap_foreign_store() finds no store below its end */
			c->snap_lo = empty || s_lo < c->snap_lo ? s_lo : c->snap_lo;
			c->snap_hi = empty || s_hi > c->snap_hi ? s_hi : c->snap_hi;
			empty = false;
		}
		c->nsnap_all += cs->nsnap - before;
		if (cs->nsnap > before)
			c->held |= 1ull << cpu;
	}
}

static void on_op_begin(void *ctx, struct pt_machine *m, unsigned cpu, const struct pt_opctx *op)
{
	struct pt_checker *c = ctx;
	(void)m;
	c->cpu[cpu].op_snaps = 0;
	if (c->nopen == c->capopen) {
		c->capopen = c->capopen ? 2 * c->capopen : 16;
		c->open_ops = realloc(c->open_ops, c->capopen * sizeof(*c->open_ops));
		if (!c->open_ops)
			abort();
	}
	c->open_ops[c->nopen++] = op->id;
}

struct inside_ctx { uint64_t va, desc; unsigned level; bool found; };

static bool inside_leaf(void *ctx, uint64_t va, unsigned level, uint64_t desc)
{
	struct inside_ctx *x = ctx;
	x->va = va;
	x->desc = desc;
	x->level = level;
	x->found = true;
	return false;
}

/* The PTE table a walk of check_unmap() ended in last (pte: its latest entries, NULL: none),
 * for the VAs [lo, lo + 2M): a walk of any page there takes the same path to the table and ends
 * in its entry, for all the walks of the unmap's return (its checks change no table). */
struct pte_memo {
	const uint64_t *pte;
	uint32_t frame;
	uint64_t lo;
};

/* The parts of a removed leaf outside [start, end) must still translate the same way: probe
 * their first and last pages.  False once one was reported. */
static bool check_snap(struct pt_checker *c, unsigned cpu, const struct pt_opctx *op, const struct snap_leaf *s,
		       uint64_t start, uint64_t end, struct pte_memo *pm)
{
	bool kernel = kernel_va(c->m, op->va);
	uint64_t size = pt_level_size(s->level), base = kernel ? pt_machine_kernel_base(c->m) : 0;
	uint64_t probes[4] = { s->va, start - pt_level_size(3), end, s->va + size - pt_level_size(3) };
	for (unsigned k = 0; k < 4; k++) {
		uint64_t va = probes[k];
		if (va < s->va || va >= s->va + size || (va >= start && va < end))
			continue;
		struct pt_walk_result r;
		uint64_t want = oa(c->m, s->desc) + (va - s->va);
		bool mapped;
		if (pm->pte && va - pm->lo < pt_level_size(2)) {
			/* pt_walk()'s answer */
			unsigned idx = (unsigned)((va - base) >> PT_PAGE_SHIFT) & (PT_PTRS - 1);
			r = (struct pt_walk_result){ .level = 3, .desc = pm->pte[idx], .frame = pm->frame, .idx = idx };
			mapped = pt_desc_is_leaf(r.desc, 3);
			if (mapped)
				r.pa = oa(c->m, r.desc) + ((va - base) & (pt_level_size(3) - 1));
		} else {
			mapped = pt_walk(c->m, kernel, op->asid, va, false, &r);
			const uint64_t *pte;
			if (r.level == 3 && (pte = pt_machine_table_latest(c->m, r.frame)))
				*pm = (struct pte_memo){ pte, r.frame, base + ((va - base) & ~(pt_level_size(2) - 1)) };
		}
		if (!mapped || r.pa != want) {
			report(c, PT_I8, cpu, "collateral-unmap", RULE_UNMAP, va, want, s->desc, r.desc, NULL,
			       "%s of [0x%llx, 0x%llx) lost the mapping of va 0x%llx outside the range (it "
			       "was part of a level-%u entry at 0x%llx)", pt_op_name(PT_EV_BEGIN, op->kind),
			       (unsigned long long)start, (unsigned long long)end, (unsigned long long)va,
			       s->level, (unsigned long long)s->va);
			return false;
		}
	}
	return true;
}

static void check_unmap(struct pt_checker *c, unsigned cpu, const struct pt_opctx *op)
{
	struct pt_machine *m = c->m;
	bool kernel = kernel_va(m, op->va);
	uint64_t start = op->va, end = (op->va + op->len + 0xfff) & ~0xfffull;	/* whole pages */
	struct inside_ctx x = { 0 };
	struct pte_memo pm = { NULL, PT_NO_FRAME, 0 };

	pt_walk_range(m, kernel, op->asid, start, end, inside_leaf, &x);
	if (x.found) {
		report(c, PT_I8, cpu, "left-mapped", RULE_UNMAP, x.va, oa(m, x.desc), x.desc, 0, NULL,
		       "%s of [0x%llx, 0x%llx) returned with va 0x%llx still mapped (level %u)",
		       pt_op_name(PT_EV_BEGIN, op->kind), (unsigned long long)start, (unsigned long long)end,
		       (unsigned long long)(x.va < start ? start : x.va), x.level);
		return;
	}
	for (unsigned k = held_from(c, 0); k < c->ncpu; k = held_from(c, k + 1)) {
		const struct cpu_state *cs = &c->cpu[k];
		for (unsigned i = 0; i < cs->nsnap; i++)
			if (cs->snap[i].op == op->id && !cs->snap[i].foreign &&
			    !check_snap(c, cpu, op, &cs->snap[i], start, end, &pm))
				return;
	}
}

/*
 * Has another operation, still in flight, also stored into the group of g?  Then the group
 * is that operation's now, half way through its own change (a zap clearing it, a reclaim's
 * contpte_convert() unfolding it, under the PTL the first operation dropped: a fault that
 * built the block returns meanwhile on another CPU), and it is judged when that operation
 * returns, under its name (it was I5 group-incomplete/zap_pte_range and .../contpte_convert
 * at a fault's return, fuzzing the default model, issue 7).  A group left broken is still
 * reported, by the last of the operations that touched it to return.
 */
static bool group_taken_over(const struct pt_checker *c, const struct group_ref *g)
{
	for (unsigned k = held_from(c, 0); k < c->ncpu; k = held_from(c, k + 1))
		for (unsigned i = 0; i < c->cpu[k].ngroups; i++) {
			const struct group_ref *h = &c->cpu[k].groups[i];
			if (h->op != g->op && h->frame == g->frame && h->group == g->group && h->level == g->level &&
			    op_in_flight(c, h->op))
				return true;
		}
	return false;
}

/*
 * A proof that cont_group_agrees(e, level, n, size, complete=true) holds for the n entries e
 * of a level-2 or level-3 group, in one pass without branches: all n are leaves with CONT, the
 * attributes of e[0] and the output addresses from e[0]'s on, which is group-aligned - its
 * every test, with e[0] the first leaf.  False says nothing: cont_group_ok() judges the group.
 * A contiguous group that an operation leaves in place is whole.
 */
static bool cont_group_whole(const uint64_t *e, unsigned level, uint64_t size)
{
	_Static_assert(PT_CONT_PTES == PT_CONT_PMDS, "one group size for both levels");
	const unsigned n = PT_CONT_PTES;
	const uint64_t leaf = level == 3 ? 3 : 1;	/* bits[1:0] of a page, of a block */
	uint64_t attrs = cont_attrs(e[0], true), base = pt_desc_oa(e[0]), diff = 0;
	/* a group whose entries step (set_ptes() of a folio): each is e[0] but for its output
	 * address, e[0]'s + i * size, so the pass below finds each the same as e[0] */
	if (span_steps(e, n, size))
		return (e[0] & 3) == leaf && (e[0] & PT_DESC_CONT) && !(base & (n * size - 1));
	for (unsigned i = 0; i < n; i++) {
		uint64_t d = e[i];
		diff |= (cont_attrs(d, true) ^ attrs) | ((pt_desc_oa(d) - i * size) ^ base) | ((d & 3) ^ leaf) | (~d & PT_DESC_CONT);
	}
	return !diff && !(base & (n * size - 1));
}

/* I5 at an operation's return: the contiguous groups its stores touched, wherever it ran, are
 * complete. */
static void check_groups(struct pt_checker *c, unsigned cpu, const struct pt_opctx *op)
{
	struct pt_machine *m = c->m;
	for (unsigned k = held_from(c, 0); k < c->ncpu; k = held_from(c, k + 1)) {
		for (unsigned i = 0; i < c->cpu[k].ngroups; i++) {
			const struct group_ref *g = &c->cpu[k].groups[i];
			const struct pt_frame *fr = pt_machine_frame(m, g->frame);
			unsigned bad = 0;
			if (g->op != op->id || fr->state != PT_FS_TABLE)
				continue;
			/* cont_group_ok()'s first tests (a group without CONT entries is fine), then the
			 * proof that its slow pass would find nothing: most groups end one way or the other */
			const uint64_t *e = pt_machine_table_latest(m, g->frame);
			if (!e || !pt_machine_cont_group(m, g->frame, g->group) ||
			    ((g->level == 2 || g->level == 3) &&
			     cont_group_whole(e + g->group * PT_CONT_PTES, g->level, pt_level_size(g->level))) ||
			    cont_group_ok(c, g->frame, g->level, g->group, true, &bad) || group_taken_over(c, g))
				continue;
			bool found;
			uint64_t va = entry_va(c, g->frame, bad, &found);
			report(c, PT_I5, cpu, "group-incomplete", RULE_CONT, va, (fr->pfn << PT_PAGE_SHIFT) + bad * 8, 0,
			       pt_machine_entry_latest(m, g->frame, bad), NULL,
			       "%s returned with the contiguous group of va 0x%llx half built or half torn down "
			       "(entry %u of the group)", pt_op_name(PT_EV_BEGIN, op->kind), (unsigned long long)va,
			       bad % (g->level == 3 ? PT_CONT_PTES : PT_CONT_PMDS));
			return;
		}
	}
}

/* The end of an operation: drop what it recorded, wherever it ran. */
static void op_records_drop(struct pt_checker *c, uint32_t id)
{
	for (unsigned k = held_from(c, 0); k < c->ncpu; k = held_from(c, k + 1)) {
		struct cpu_state *cs = &c->cpu[k];
		unsigned keep = 0;
		for (unsigned i = 0; i < cs->ngroups; i++)
			if (cs->groups[i].op != id)
				cs->groups[keep++] = cs->groups[i];
		cs->ngroups = keep;
		keep = 0;
		for (unsigned i = 0; i < cs->nsnap; i++)
			if (cs->snap[i].op != id)
				cs->snap[keep++] = cs->snap[i];
		c->nsnap_all -= cs->nsnap - keep;
		cs->nsnap = keep;
		if (!cs->ngroups && !cs->nsnap)
			c->held &= ~(1ull << k);
	}
}

/* I6: kernel mappings this context created must be usable when it returns, and a kernel TLB
 * invalidation it completed needs its ISB */
static void end_kmaps(struct pt_checker *c, struct pt_machine *m, unsigned cpu, const struct pt_opctx *op)
{
	struct cpu_state *cs = &c->cpu[cpu];
	uint32_t me = pt_machine_context(m, cpu);
	unsigned keep = 0;
	bool reported = false;
	for (unsigned i = 0; i < c->nkmaps; i++) {
		if (c->kmaps[i].ctx != me) {
			c->kmaps[keep++] = c->kmaps[i];
			continue;
		}
		if (!reported)
			kmap_report(c, cpu, &c->kmaps[i], "return-before-barrier",
				    "still pending when the operation returned,");
		reported = true;
	}
	c->nkmaps = keep;
	if (cs->kinv_isb_event) {
		report(c, PT_I6, cpu, "kernel-inval-no-isb", RULE_KINV_ISB, 0, 0, 0, 0, NULL,
		       "%s returned after a kernel TLB invalidation completed at event %llu without an ISB",
		       pt_op_name(PT_EV_BEGIN, op->kind), (unsigned long long)(cs->kinv_isb_event - 1));
		cs->kinv_isb_event = 0;
	}
}

/* I2: translations this operation removed or reduced may still be cached */
static void end_stale_tlb(struct pt_checker *c, struct pt_machine *m, unsigned cpu, const struct pt_opctx *op)
{
	char tb[32];
	for (uint32_t i = 0; i < pt_machine_nfacts(m); i++) {
		const struct pt_fact *f = pt_machine_fact(m, i);
		if (f->op != op->id || lazily_flushed(m, f->va, pt_level_size(f->level)))
			continue;
		struct pt_stale s;
		stale_from_fact(&s, f);
		report(c, PT_I2, cpu, "returned-with-stale-tlb", RULE_PERM, f->va, oa(m, f->desc), f->desc, 0, &s,
		       "%s returned while the old translation of va 0x%llx (%s, level %u) may still be cached "
		       "(no completed TLBI since event %llu)", pt_op_name(PT_EV_BEGIN, op->kind),
		       (unsigned long long)f->va, tagname(f->global, f->asid, tb, sizeof(tb)), f->level,
		       (unsigned long long)f->since);
		break;
	}
}

/* I2/I3: stores still in the store buffer at return: the old entry is walkable, let alone cached */
static void end_pending(struct pt_checker *c, struct pt_machine *m, unsigned cpu, const struct pt_opctx *op)
{
	/* nothing changes during the scan: the first VA of the table asked last (entry_va() of its
	 * entry 0: of entry idx, idx entries of its level on) answers for its next stores the same
	 * (a lazy vunmap's clears are stores to one table after another) */
	uint32_t base_f = PT_NO_FRAME;
	uint64_t base = 0;
	bool found = false;
	for (uint32_t i = 0; i < pt_machine_npending(m, cpu); i++) {
		uint32_t f;
		unsigned idx;
		uint64_t val;
		pt_machine_pending(m, cpu, i, &f, &idx, &val);
		if (pt_machine_pending_op(m, cpu, i) != op->id)
			continue;	/* an earlier operation's store (a lazy vunmap's): judged there */
		const struct pt_frame *fr = pt_machine_frame(m, f);
		if (fr->state != PT_FS_TABLE || !fr->level_known)
			continue;
		/* what the store leaves walkable first (the tests have no side effects: the cheapest
		 * go first); an invalid entry is neither leaf nor table (most stores pending at a
		 * return make an entry a fault found empty): the latest value is not read for it */
		uint64_t vis = pt_machine_entry_visible(m, f, idx);
		if (!pt_desc_valid(vis))
			continue;
		uint64_t now = pt_machine_entry_latest(m, f, idx);
		bool leaf = pt_desc_is_leaf(vis, fr->level) &&
			    !pt_stale_is_harmless(vis, now, (unsigned)fr->level, pt_machine_lpa2(m));
		bool table = pt_desc_is_table(vis, fr->level) && vis != now;
		if (!leaf && !table)
			continue;
		if (f != base_f) {
			base = entry_va(c, f, 0, &found);
			base_f = f;
		}
		uint64_t va = base + idx * pt_level_size(fr->level);
		if (!found || lazily_flushed(m, va, pt_level_size(fr->level)))
			continue;	/* on the purge list: the purge flushes before the VA is reused */
		if (leaf && !(pt_desc_valid(now) &&
			      refill_before_deferred_flush(c, pending_clearer(c, f, idx), kernel_va(m, va), cpu))) {
			report(c, PT_I2, cpu, "returned-before-store-visible", RULE_PERM, va, oa(m, vis), vis, now, NULL,
			       "%s returned with its store to entry 0x%llx (va 0x%llx) not yet visible: no DSB, no "
			       "TLB flush, the old translation is still walked", pt_op_name(PT_EV_BEGIN, op->kind),
			       (unsigned long long)((fr->pfn << PT_PAGE_SHIFT) + idx * 8), (unsigned long long)va);
			break;
		}
		if (table) {
			report(c, PT_I3, cpu, "returned-before-store-visible", RULE_WALK, va, oa(m, vis), vis, now, NULL,
			       "%s returned with the unhooking of table 0x%llx (va 0x%llx) not yet visible: no DSB, no "
			       "TLB flush", pt_op_name(PT_EV_BEGIN, op->kind), (unsigned long long)oa(m, vis),
			       (unsigned long long)va);
			break;
		}
	}
}

/* I3: tables this operation unhooked or moved may still be walk-cached */
static void end_stale_walk(struct pt_checker *c, struct pt_machine *m, unsigned cpu, const struct pt_opctx *op)
{
	char tb[32];
	for (uint32_t i = 0; i < pt_machine_nstale_pos(m); i++) {
		const struct pt_pos *p = pt_machine_stale_pos(m, i);
		if (p->op != op->id)
			continue;
		struct pt_stale s;
		stale_from_pos(c, &s, p);
		if (lazily_flushed(m, s.va, s.size))
			continue;
		report(c, PT_I3, cpu, "returned-with-stale-walk", RULE_WALK, p->va, s.desc & PT_DESC_OA_MASK, 0, 0, &s,
		       "%s returned while a walk-cache entry for va 0x%llx (%s) may still point at table 0x%llx "
		       "(unhooked at event %llu)", pt_op_name(PT_EV_BEGIN, op->kind), (unsigned long long)p->va,
		       tagname(p->global, p->asid, tb, sizeof(tb)),
		       (unsigned long long)(s.desc & PT_DESC_OA_MASK), (unsigned long long)p->since);
		break;
	}
}

static void on_op_end(void *ctx, struct pt_machine *m, unsigned cpu, const struct pt_opctx *op)
{
	struct pt_checker *c = ctx;
	end_kmaps(c, m, cpu, op);
	end_stale_tlb(c, m, cpu, op);
	end_pending(c, m, cpu, op);
	end_stale_walk(c, m, cpu, op);
	/* I5: contiguous groups touched must be complete when the operation returns */
	check_groups(c, cpu, op);
	/* I8: an unmap that failed (EINVAL ...) unmapped nothing, by contract */
	if ((op->kind == PT_OP_MUNMAP || op->kind == PT_OP_VUNMAP) && op->len && !op->err)
		check_unmap(c, cpu, op);
	op_records_drop(c, op->id);
	for (unsigned i = 0; i < c->nopen; i++)
		if (c->open_ops[i] == op->id) {
			c->open_ops[i] = c->open_ops[--c->nopen];
			break;
		}
}

static void on_step(void *ctx, struct pt_machine *m, unsigned cpu, const struct pt_opctx *op)
{
	struct pt_checker *c = ctx;
	(void)m;
	if (op->steps > op->bound && c->cpu[cpu].hang_op != op->id) {
		c->cpu[cpu].hang_op = op->id;
		report(c, PT_I11, cpu, "step-bound", RULE_HANG, op->va, 0, 0, 0, NULL,
		       "%s of [0x%llx, +0x%llx) exceeded its bound of %llu steps (begun at event %llu)",
		       pt_op_name(PT_EV_BEGIN, op->kind), (unsigned long long)op->va, (unsigned long long)op->len,
		       (unsigned long long)op->bound, (unsigned long long)op->begin_event);
	}
}

/*
 * I2 at __purge_vmap_area_lazy(): the lazily freed areas inside [start, end) go back to the
 * allocator.  Its flush must have removed whatever their unmapping left cached, and the clears
 * (made on any CPU, ordered before the purge's DSB through vn->lazy.lock) must be visible.
 */
static void purge_area(struct pt_checker *c, unsigned cpu, uint64_t a, uint64_t e)
{
	struct pt_machine *m = c->m;
	char tb[32];
	for (uint32_t i = 0; i < pt_machine_nfacts(m); i++) {
		const struct pt_fact *f = pt_machine_fact(m, i);
		if (!kernel_va(m, f->va) || f->va >= e || f->va + pt_level_size(f->level) <= a)
			continue;
		struct pt_stale s;
		stale_from_fact(&s, f);
		report(c, PT_I2, cpu, "purged-with-stale-tlb", RULE_PURGE, f->va, oa(m, f->desc), f->desc, 0, &s,
		       "vmap area [0x%llx, 0x%llx) purged while the translation of va 0x%llx (%s, level %u, stale "
		       "since event %llu) may still be cached", (unsigned long long)a, (unsigned long long)e,
		       (unsigned long long)f->va, tagname(f->global, f->asid, tb, sizeof(tb)), f->level,
		       (unsigned long long)f->since);
		return;
	}
	for (unsigned k = 0; k < pt_machine_cpus(m); k++) {
		for (uint32_t i = 0; i < pt_machine_npending(m, k); i++) {
			uint32_t f;
			unsigned idx;
			uint64_t val;
			bool found;
			uint64_t va = pending_entry(c, m, k, i, &f, &idx, &val, &found);
			const struct pt_frame *fr = pt_machine_frame(m, f);
			if (fr->state != PT_FS_TABLE || !fr->level_known || !found || !kernel_va(m, va) || va >= e ||
			    va + pt_level_size(fr->level) <= a)
				continue;
			uint64_t vis = pt_machine_entry_visible(m, f, idx);
			if (!pt_desc_is_leaf(vis, fr->level))
				continue;
			report(c, PT_I2, cpu, "purged-before-clear-visible", RULE_PURGE, va, oa(m, vis), vis, val,
			       NULL,
			       "vmap area [0x%llx, 0x%llx) purged while cpu%u's clear of va 0x%llx is not yet visible "
			       "(no DSB after it, and none ordered before the purge's flush)", (unsigned long long)a,
			       (unsigned long long)e, k, (unsigned long long)va);
			return;
		}
	}
	struct inside_ctx x = { 0 };
	pt_walk_range(m, true, 0, a, e, inside_leaf, &x);
	if (x.found)
		report(c, PT_I2, cpu, "purged-while-mapped", RULE_PURGE, x.va, oa(m, x.desc), x.desc, 0, NULL,
		       "vmap area [0x%llx, 0x%llx) purged while va 0x%llx is still mapped (level %u)",
		       (unsigned long long)a, (unsigned long long)e, (unsigned long long)(x.va < a ? a : x.va),
		       x.level);
}

static void on_vmap_purge(void *ctx, struct pt_machine *m, unsigned cpu, uint64_t start, uint64_t end)
{
	struct pt_checker *c = ctx;
	for (uint32_t i = 0; i < pt_machine_nlazy_areas(m); i++) {
		uint64_t a, e;
		pt_machine_lazy_area(m, i, &a, &e);
		if (a >= start && e <= end)
			purge_area(c, cpu, a, e);
	}
}

static void on_lock(void *ctx, struct pt_machine *m, const struct pt_event *ev, bool contended)
{
	struct pt_checker *c = ctx;
	if (!contended)
		return;
	bool w = false;
	uint32_t holder = pt_machine_lock_holder(m, ev->op, ev->pa, &w);
	report(c, PT_I12, ev->cpu, "lock-held-twice", RULE_LOCK, 0, ev->pa, 0, 0, NULL,
	       "thread %u on cpu%u acquired the %s lock 0x%llx while thread %u held it", pt_machine_tid(m, ev->cpu),
	       ev->cpu, pt_op_name(PT_EV_LOCK, ev->op), (unsigned long long)ev->pa, holder);
}

static const struct pt_observer checker_observer = {
	.pt_store = on_pt_store,
	.pt_stored = on_pt_stored,
	.pt_store_run = on_pt_store_run,
	.run_store = on_run_store,
	.run_stored = on_run_stored,
	.leaf_live = on_leaf_live,
	.table_live = on_table_live,
	.frame_free = on_frame_free,
	.barrier = on_barrier,
	.tlbi_done = on_tlbi_done,
	.access = on_access,
	.op_begin = on_op_begin,
	.op_end = on_op_end,
	.lock = on_lock,
	.table_zero_publish = on_zero_publish,
	.step = on_step,
	.vmap_purge = on_vmap_purge,
	.frame_free_run = on_frame_free_run,
	.leaf_live_run = on_leaf_live_run,
};

/* The per-CPU states of a machine with ncpus CPUs, as calloc() leaves them. */
static void cpus_reset(struct pt_checker *c, unsigned ncpus)
{
	if (ncpus > c->capcpu) {
		free(c->cpu);
		c->cpu = malloc(ncpus * sizeof(*c->cpu));
		if (!c->cpu)
			abort();
		c->capcpu = ncpus;
		c->ncpu = ncpus;
	}
	/* the arrays are read only below their counts: the scalars are the whole state */
	for (unsigned i = 0; i < c->ncpu || i < ncpus; i++) {
		struct cpu_state *cs = &c->cpu[i];
		cs->kinv_isb_event = 0;
		cs->ngroups = 0;
		cs->group_hint = 0;
		cs->nsnap = 0;
		cs->op_snaps = 0;
		cs->hang_op = 0;
	}
	c->ncpu = ncpus;
	c->nsnap_all = 0;
	c->held = 0;
}

struct pt_checker *pt_checker_new(struct pt_machine *m)
{
	struct pt_checker *c = calloc(1, sizeof(*c));
	if (!c)
		abort();
	c->m = m;
	c->lock_memo.gen = UINT64_MAX;
	c->tinfo_memo.gen = UINT64_MAX;
	cpus_reset(c, pt_machine_cpus(m));
	pt_machine_set_observer(m, &checker_observer, c);
	return c;
}

void pt_checker_reset(struct pt_checker *c)
{
	c->n = 0;
	c->site = NULL;
	c->nkmaps = 0;
	c->memo.valid = false;
	c->lock_memo.gen = UINT64_MAX;
	c->tinfo_memo.gen = UINT64_MAX;
	c->free_memo.valid = false;
	c->free_run_event = c->free_run_next = 0;	/* as pt_checker_new() leaves them */
	c->pend_memo.valid = false;
	c->facts_memo.valid = false;
	c->nopen = 0;
	cpus_reset(c, pt_machine_cpus(c->m));
	pt_machine_set_observer(c->m, &checker_observer, c);
}

void pt_checker_free(struct pt_checker *c)
{
	if (!c)
		return;
	free(c->cpu);
	free(c->open_ops);
	free(c->v);
	free(c);
}

unsigned pt_checker_count(const struct pt_checker *c) { return c->n; }
const struct pt_violation *pt_checker_get(const struct pt_checker *c, unsigned i) { return &c->v[i]; }
struct pt_violation *pt_checker_get_mut(struct pt_checker *c, unsigned i) { return &c->v[i]; }
