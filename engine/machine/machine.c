/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * machine.c - the arm64 machine model (see machine.h for the cache model).
 *
 * Names follow the Arm ARM; rule references are to Arm DDI 0487
 * (K.a): D8.16 "Translation Lookaside Buffers", D8.17 "TLB maintenance",
 * B2.3 (ordering of stores and DSB), D8.2 (VMSAv8-64 descriptors).
 */
#include "machine.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "vec2.h"

#define NO_POS UINT32_MAX
#define POS_STALE_NONE UINT32_MAX
#define LEVEL_UNKNOWN INT8_MIN		/* make_table(): the level is not known (yet) */
/* A level -1 table (52-bit VAs, 4K granule) has 16 entries, 128 bytes, and need not be a page:
 * Linux takes a user pgd from a kmem_cache when it is smaller than a page (pgd_alloc(),
 * arch/arm64/mm/pgd.c), so one page holds several.  Each is a frame of its own, at a pseudo
 * page number above every physical one (root_frame_pa()); stores to a page that holds one go
 * to it once a TTBR has named a root there (a store before that is a store to an unknown
 * table: the QEMU plugin names the roots first). */
#define ROOT_PFN_BASE (1ull << 48)

struct pt_table {
	uint64_t latest[PT_PTRS];	/* program order: what the kernel reads back */
	uint64_t visible[PT_PTRS];	/* what the walker is guaranteed to see */
	uint64_t vis_sseq[PT_PTRS];	/* store order of the visible value */
	uint16_t npending[PT_PTRS];	/* stores to the entry still in some CPU's store buffer */
	uint32_t first_pos;
	uint32_t cont_groups;		/* bit g: latest[16g..16g+15] holds a CONT entry */
	uint8_t ncont[PT_PTRS / PT_CONT_PTES];	/* how many: cont_groups without a rescan per store */
	/* bit i: entry i was stored to since the table was last cleared.  Every value in the
	 * arrays above starts as a store (pt_write, pt_zero), so the clear bits are entries still
	 * zero everywhere, and re-using a table from the pool clears only what its last use
	 * touched (a user PTE table holds a few dozen entries; a memset of all is 13 KiB) */
	uint64_t dirty[PT_PTRS / 64];
	/* bit i: visible[i] is a table descriptor (0b11; at level 3 a page): the children
	 * for_each_child() visits, without a scan of all 512 entries of every table hooked.
	 * Not kept once the table's level is known to be 3 (set_visible()): for_each_child()
	 * reads no level-3 table's, and a table keeps its level until it goes back to the pool,
	 * where table_new() clears them */
	uint64_t vis_tables[PT_PTRS / 64];
};

/* The first entry from i on that was stored to since the table was cleared (PT_PTRS: none). */
static inline unsigned next_stored(const struct pt_table *t, unsigned i)
{
	return pt_stored_next(t->dirty, i);
}

struct pend_store {
	uint32_t frame;
	uint32_t idx;
	uint64_t val;
	uint64_t sseq;		/* global store order: the coherence order of stores to one entry */
	uint32_t op;		/* the operation that made the store (stale entries are its doing) */
	uint8_t op_open;
};

/* The op a store's stale entries are stamped with (stamp()): the operation that made it, if one
 * was open. */
static inline uint32_t store_op(const struct pend_store *ps)
{
	return ps->op_open ? ps->op : 0;
}

/* cpu's stores up to store sequence `upto`, observed by another CPU */
struct drain {
	uint16_t cpu;
	uint64_t upto;
};

/* What a lock release publishes: the releasing CPU's stores, and those it observed itself
 * (through locks it took) and has not completed with a DSB since: cumulativity, transitively */
struct release_set {
	struct drain own;	/* the releasing CPU's stores (n != 0) */
	struct drain *e;	/* then e[0..n - 1), those of other CPUs it observed (room for cap) */
	uint32_t n, cap;
};

/* A lock the trace took or released (a record of the lock table, found through locks). */
struct lock_state {
	uint64_t key;			/* lock_key(class, key) */
	uint64_t cur;			/* holder tid << 32 | write << 16 | readers; HMAP_EMPTY if free */
	struct release_set rel;		/* its last release (n = 0: none yet) */
};

struct pend_tlbi {
	uint8_t op;
	uint8_t ttl;
	uint16_t asid;
	uint64_t va, size;	/* VA range; size 0 = all VAs */
	uint64_t seq;		/* visibility sequence at issue */
};

#define VEC(T) struct { T *v; uint32_t n, cap; }
/* Room for k more elements: the capacity doubles (from 16) until they fit. */
#define VEC_RESERVE(vec, k) do {					\
	if ((vec).n + (k) > (vec).cap) {				\
		while ((vec).n + (k) > (vec).cap)			\
			(vec).cap = (vec).cap ? (vec).cap * 2 : 16;	\
		(vec).v = realloc((vec).v, (vec).cap * sizeof(*(vec).v)); \
		if (!(vec).v)						\
			abort();					\
	}								\
} while (0)
#define VEC_PUSH(vec, x) do {						\
	VEC_RESERVE(vec, 1);						\
	(vec).v[(vec).n++] = (x);					\
} while (0)

struct cpu {
	VEC(struct pend_store) stores;
	VEC(struct pend_tlbi) tlbis;
	VEC(uint32_t) zeroes;		/* table frames zeroed, not yet ordered */
	uint16_t asid;
	uint32_t tid;
	struct pt_opctx op;
	VEC(struct pt_opctx) irq_saved;	/* the ops interrupted by nested IRQs, any depth */
	unsigned irq_depth;
	/* stores of other CPUs observed through lock handoff: drained by this CPU's next DSB; one
	 * entry per releasing CPU (the furthest store observed), so no handoff is ever dropped */
	struct drain drain[PT_MAX_CPUS];
	uint32_t ndrain;
};

#define FCACHE_SIZE 64u
#define FCHUNK_SHIFT 9
#define FCHUNK_FRAMES (1u << FCHUNK_SHIFT)
#define NO_CHUNK_KEY UINT64_MAX		/* no pfn >> FCHUNK_SHIFT */
#define NO_RMAP UINT32_MAX

/*
 * A lazy page: a page of a data folio whose frame no one has asked for since its allocation
 * (most of a folio's pages: an exec maps and frees them by ranges).  Its chunk slot holds
 * LAZY_PAGE | the index of its folio's record in m->folios, LAZY_FREED added once the page is
 * freed, instead of a frame index: what the frame would hold is in the record (struct
 * lazy_folio), and the frame is made from it, with those values, when someone asks for it
 * (lazy_frame()).  Frame indexes stay below LAZY_PAGE (2^31 frames of 56 bytes would not fit
 * in memory), folio indexes below LAZY_FOLIOS; PT_NO_FRAME has every bit set and is none of them.
 */
#define LAZY_PAGE (1u << 31)
#define LAZY_FREED (1u << 30)
#define LAZY_FOLIOS (LAZY_FREED - 1)

/* A data folio's allocation: its page pfn + i is a PT_FS_DATA frame of these order, node and
 * alloc_event, page id page_id + i (PT_FS_FREE once freed), everything else zero. */
struct lazy_folio {
	uint64_t pfn, page_id, alloc_event;
	uint8_t order, node;
};

struct frame_chunk {
	uint64_t key;			/* pfn >> FCHUNK_SHIFT */
	uint32_t idx[FCHUNK_FRAMES];	/* frame index, PT_NO_FRAME if none, or a lazy page */
	/* bit w clear: the 64 slots of idx from w * 64 on are all PT_NO_FRAME (set wherever a slot
	 * gets a frame or a lazy page).  Re-using the chunk after a reset clears only those words */
	uint8_t idx_used;
	/* the reverse map of the leaves whose output lies here (see struct rmap_node): for each
	 * page's level-3 leaves, and for the level-2 blocks of the chunk's 2 MiB, RMAP_ONE | the
	 * leaf if it is the only one, else the last-inserted node, NO_RMAP if none */
	uint32_t rmap[FCHUNK_FRAMES];
	uint32_t rmap_block;
	/* bit k: rmap[k] is not NO_RMAP.  A range query tests words, not slots, and re-using the
	 * chunk after a reset clears only the slots still set */
	uint64_t rmap_used[FCHUNK_FRAMES / 64];
};

/*
 * A visible valid leaf (frame << 9 | index) in the reverse map.  The leaves with one output
 * page (level 3) or one 2 MiB block base (level 2) form a circular list in insertion order,
 * reached through the chunk slot that holds its last node (the first is that one's next):
 * an insert appends at once and a removal keeps the order of the others, as the hash map
 * that was the rmap did, without a hash, a probe or a growth.
 * Most pages are mapped by one leaf: a list that would be that leaf alone is the slot itself,
 * RMAP_ONE | the leaf (if it is below RMAP_ONE_MAX: node indexes stay below RMAP_ONE, and
 * NO_RMAP is no such slot), so its insert and its removal touch the slot and no node.  A
 * second leaf makes the one a node first, then appends: the same list, in the same order.
 */
#define RMAP_ONE (1u << 31)
#define RMAP_ONE_MAX (NO_RMAP & ~RMAP_ONE)

struct rmap_node {
	uint64_t val;
	uint32_t next;
};

/* A vmap area on the purge list (mm/vmalloc.c: free_vmap_area_noflush()): [start, end) */
struct lazy_area {
	uint64_t start, end;
};

struct lock_rule {
	uint32_t root;
	uint8_t cls;
	uint64_t key;
};

#define ASID_CHUNK 256u
#define FACT_REGION_SHIFT 21	/* pt_level_size(2) */
#define FACT_REGION_BITS 8
#define FACT_REGIONS (1u << FACT_REGION_BITS)

/* see pt_machine.walk_memo */
struct walk_memo {
	uint64_t gen, prefix;
	uint32_t frame;
	uint16_t asid;
	int8_t level;
	bool kernel, visible, valid;
};

struct pt_machine {
	unsigned ncpus;
	uint64_t allmask;
	struct cpu cpu[PT_MAX_CPUS];

	VEC(struct pt_frame) frames;
	/* the data folios allocated since the reset, and the lazy pages the chunks hold: frames
	 * has room for that many more (frames.cap >= frames.n + nlazy), so that making a lazy
	 * page's frame never moves frames.v, even in a lookup (a checker may hold a frame's
	 * pointer across pt_machine_lookup(), which never made a frame before there were lazy
	 * pages) */
	VEC(struct lazy_folio) folios;
	uint32_t nlazy;
	/* pfn -> frame index: a directory of 2 MiB chunks of physical memory, each a direct
	 * array.  Allocators hand out pages (the model's own bump allocator, a real kernel's
	 * buddy) in runs, so a walk or a fault finds its frames in one or two chunks, by index
	 * rather than by hashing every page. */
	VEC(struct frame_chunk *) chunks;	/* in use, by index */
	VEC(struct frame_chunk *) chunk_pool;	/* free, for re-use after a reset */
	struct hmap chunk_by_key;	/* pfn >> FCHUNK_SHIFT -> index in chunks */
	/* the chunk found last and its key, NO_CHUNK_KEY if none: a cache, emptied by a reset, which
	 * alone takes chunks out of use.  Its hit test reads m alone, not the chunk's own key
	 * through chunks.v (two dependent loads) */
	uint64_t last_chunk_key;
	struct frame_chunk *last_chunk;
	VEC(struct pt_table *) table_pool;
	VEC(struct pt_table *) tables;		/* every table allocated: the pool or a frame's */

	VEC(struct pt_pos) pos;		/* slab; free slots have in_use = 0 */
	VEC(uint32_t) pos_free;
	VEC(uint32_t) stale_pos;	/* dense list of stale positions */

	VEC(struct pt_fact) facts;	/* dense: index = fact id */
	struct hmap facts_by_va;	/* key(va base, level) -> fact index */
	struct hmap facts_by_oa;	/* key(oa base, level) -> fact index */
	uint32_t facts_tail;		/* facts[facts_tail..n) are not in the two yet (the tail, see fact_append()) */
	/* the reverse map, output -> frame << 9 | idx of the visible valid leaves: levels 2 and 3
	 * in the frame chunks of their output (rmap_nodes, the free ones a list from rmap_free),
	 * level 1 (rare) in rmap, key(oa base, 1) */
	VEC(struct rmap_node) rmap_nodes;
	uint32_t rmap_free;
	struct hmap rmap;
	/* entries of facts_by_va (and facts_by_oa) and of rmap by leaf level (1..3): a lookup by
	 * level skips the levels nothing is at (most sessions have no 1G and few 2M leaves) */
	uint32_t nfacts_at[PT_LEVELS], nrmap_at[PT_LEVELS];
	/* stale facts of levels 2 and 3 by the 2 MiB VA region they lie in (fact_region()): a
	 * query of at most 2 MiB touches at most two regions, and where both count none it finds
	 * no such fact, without a scan of the facts or a hash lookup */
	uint32_t nfacts_in[FACT_REGIONS];
	/* the stale facts of each VA half (fact_half(): TTBR0's and TTBR1's VAs), nfacts_half[h]
	 * of them, lie in VAs [facts_lo[h], facts_hi[h]] since the half last had none (a bound,
	 * not shrunk as facts go): the kernel's lazily flushed facts do not widen the user half's */
	uint64_t facts_lo[2], facts_hi[2];
	uint32_t nfacts_half[2];

	/* root frame per ASID, in chunks of ASID_CHUNK allocated on first use: a session sees one
	 * or a few ASIDs, and 256 KiB to fill for each one would be most of a fuzzer's exec */
	uint32_t *asid_root[65536 / ASID_CHUNK];
	/* bit i: chunk asid_root[i] had a slot set since the last reset (asid_root_slot()); the
	 * others hold PT_NO_FRAME throughout, and a reset refills only these */
	uint64_t asid_touched[65536 / ASID_CHUNK / 64];
	uint32_t kernel_root;

	/* the lock table: lock_key(class, key) -> index in lock_states, one record per lock seen,
	 * so that a lock or unlock finds its holder and its last release with one lookup */
	struct hmap locks;
	VEC(struct lock_state) lock_states;
	/* lock_states.v[0..lock_bufs) hold release-set buffers (rel.e, rel.cap), kept through a
	 * reset for the records that take their places (a trace's locks are much the same each time) */
	uint32_t lock_bufs;
	/* the last lock lock_state() found or made: its class, key and record (UINT32_MAX: none).
	 * A lock is mostly released, or waited for and taken again, right after it was taken: one
	 * compare instead of a hash and a probe (the same (class, key) is the same lock_key()) */
	uint8_t lock_memo_cls;
	uint64_t lock_memo_key;
	uint32_t lock_memo;
	struct hmap parked;		/* tid -> index in parked_ops: the open op of a switched-out thread */
	VEC(struct pt_opctx) parked_ops;
	unsigned last_cpu;		/* the CPU of the last event applied */
	/* frames found last, by the low bits of their pfn: a walk alternates between tables and
	 * data pages, a fault or an unmap runs through consecutive pages (a cache: an entry is used
	 * only if its frame has that pfn, and a pfn has one frame) */
	uint32_t frame_cache[FCACHE_SIZE];
	VEC(struct lock_rule) rules;
	bool locks_recorded;
	uint64_t locks_gen;		/* bumped whenever the lock table may change (never reset) */
	uint64_t latest_gen;		/* bumped whenever a table's latest entries may change (never reset) */
	uint64_t facts_gen;		/* bumped whenever a stale fact comes or goes (never reset) */
	uint64_t pos_gen;		/* bumped whenever a position comes or goes (never reset) */
	VEC(struct lazy_area) lazy_areas;	/* vmap areas whose TLB flush waits for the purge */

	uint64_t seq;			/* visibility sequence */
	uint64_t sseq;			/* store sequence */
	const struct pend_store *applying;	/* the store being made visible, for stamps */
	uint64_t event_index;		/* index of the event being applied */
	const struct pt_event *cur;
	uint32_t next_op_id;
	uint64_t next_page_id;

	const struct pt_observer *obs;
	void *obs_ctx;

	/* the translation regime, from the header (read once per session): the first level (0 for
	 * 48-bit VAs, -1 for 52-bit), VA bits, the descriptor format (FEAT_LPA2) and TTBR1's base */
	int start_level;
	unsigned va_bits;
	bool lpa2;
	uint64_t kernel_base;
	struct hmap root_pages;		/* pfn -> 1: the pages holding level -1 tables */

	/* pt_walk()'s memo of the deepest table its last walk reached: a walk of another VA under
	 * that table (the same higher-level indexes) reaches it through the same entries as long
	 * as no event changed a table, a root or a frame since (walk_gen counts those events), so
	 * it starts there.  The faults and I10 checks of one op walk neighbouring pages. */
	uint64_t walk_gen;
	struct walk_memo walk_memo;
};

/* The output (or next-level table) address of a descriptor in the trace's format. */
static inline uint64_t desc_oa(const struct pt_machine *m, uint64_t d)
{
	return pt_desc_oa_fmt(d, m->lpa2);
}

#define OBS(m, hook, ...) do { if ((m)->obs && (m)->obs->hook) (m)->obs->hook((m)->obs_ctx, (m), __VA_ARGS__); } while (0)

static inline uint32_t asid_root(const struct pt_machine *m, uint16_t asid)
{
	const uint32_t *c = m->asid_root[asid / ASID_CHUNK];
	return c ? c[asid % ASID_CHUNK] : PT_NO_FRAME;
}

static uint32_t *asid_root_slot(struct pt_machine *m, uint16_t asid)
{
	uint32_t **c = &m->asid_root[asid / ASID_CHUNK];
	m->asid_touched[asid / ASID_CHUNK / 64] |= 1ull << (asid / ASID_CHUNK % 64);
	if (!*c) {
		if (!(*c = malloc(ASID_CHUNK * sizeof(**c))))
			abort();
		memset(*c, 0xff, ASID_CHUNK * sizeof(**c));	/* PT_NO_FRAME */
	}
	return &(*c)[asid % ASID_CHUNK];
}

/* ~(pt_level_size(level) - 1) of levels 0..3, without the shift's arithmetic per key */
static const uint64_t level_base_mask[PT_LEVELS] = {
	~((1ull << 39) - 1), ~((1ull << 30) - 1), ~((1ull << 21) - 1), ~((1ull << 12) - 1),
};

/* The key of a leaf level's entry (levels 1..3) covering va, in facts_by_va, facts_by_oa, rmap. */
static inline uint64_t va_key(uint64_t va, unsigned level)
{
	assert(level < PT_LEVELS);
	return (va & level_base_mask[level]) | 0x800 | level;
}

/* ---- frames ---- */

/* chunk_find() past its cache: a call of its own (see frame_get_uncached()) */
static __attribute__((noinline)) struct frame_chunk *chunk_find_uncached(const struct pt_machine *m, uint64_t key)
{
	uint64_t ci = hmap_get(&m->chunk_by_key, key, HMAP_EMPTY);
	if (ci == HMAP_EMPTY)
		return NULL;
	((struct pt_machine *)m)->last_chunk_key = key;
	return ((struct pt_machine *)m)->last_chunk = m->chunks.v[ci];
}

/* The chunk holding pfn, or NULL.  Only the cache changes: lookups stay logically const. */
static inline struct frame_chunk *chunk_find(const struct pt_machine *m, uint64_t pfn)
{
	uint64_t key = pfn >> FCHUNK_SHIFT;
	if (m->last_chunk_key == key)
		return m->last_chunk;
	return chunk_find_uncached(m, key);
}

/* A chunk for pfn, which has none: from the pool (cleared) or new. */
static __attribute__((noinline)) struct frame_chunk *chunk_new(struct pt_machine *m, uint64_t pfn)
{
	struct frame_chunk *c;
	if (m->chunk_pool.n) {
		c = m->chunk_pool.v[--m->chunk_pool.n];
		for (unsigned w = 0; w < FCHUNK_FRAMES / 64; w++) {
			for (uint64_t b = c->rmap_used[w]; b; b &= b - 1)
				c->rmap[w * 64 + (unsigned)__builtin_ctzll(b)] = NO_RMAP;
			c->rmap_used[w] = 0;
		}
		for (unsigned b = c->idx_used; b; b &= b - 1)
			memset(&c->idx[(unsigned)__builtin_ctz(b) * 64], 0xff, 64 * sizeof(c->idx[0]));
	} else {
		if (!(c = malloc(sizeof(*c))))
			abort();
		memset(c->rmap, 0xff, sizeof(c->rmap));	/* NO_RMAP */
		memset(c->rmap_used, 0, sizeof(c->rmap_used));
		memset(c->idx, 0xff, sizeof(c->idx));	/* PT_NO_FRAME */
	}
	c->idx_used = 0;
	c->key = pfn >> FCHUNK_SHIFT;
	c->rmap_block = NO_RMAP;
	VEC_PUSH(m->chunks, c);
	hmap_insert(&m->chunk_by_key, c->key, m->chunks.n - 1);
	m->last_chunk_key = c->key;
	m->last_chunk = c;
	return c;
}

static inline struct frame_chunk *chunk_get(struct pt_machine *m, uint64_t pfn)
{
	struct frame_chunk *c = chunk_find(m, pfn);
	return c ? c : chunk_new(m, pfn);
}

/* The frame of pfn if frame_cache holds it, else PT_NO_FRAME. */
static inline uint32_t frame_cached(const struct pt_machine *m, uint64_t pfn)
{
	uint32_t f = m->frame_cache[pfn % FCACHE_SIZE];
	return f < m->frames.n && m->frames.v[f].pfn == pfn ? f : PT_NO_FRAME;
}

/* A new frame of page pfn, all else zero, with room kept for the lazy pages' frames. */
static uint32_t frame_new(struct pt_machine *m, uint64_t pfn)
{
	VEC_RESERVE(m->frames, m->nlazy + 1);
	m->frames.v[m->frames.n] = (struct pt_frame){ .pfn = pfn };
	return m->frames.n++;
}

/*
 * The frame of lazy page k of chunk c, made now, with those of the other lazy pages of its
 * group of PT_CONT_PTES (a folio's pages are looked at by CONT group, in turn): in the room kept
 * for them (frames.v stays where it is), each with what its folio's record says the page's frame
 * holds, and in the frame cache.  Whoever asks first gets them; m changes only where no query
 * looks (which frame index a page has is no part of its state), so a lookup stays logically const.
 */
static __attribute__((noinline)) uint32_t lazy_frame(const struct pt_machine *cm, struct frame_chunk *c, unsigned k)
{
	struct pt_machine *m = (struct pt_machine *)cm;
	unsigned g = k & ~(PT_CONT_PTES - 1);
	for (unsigned j = g; j < g + PT_CONT_PTES; j++) {
		uint32_t tag = c->idx[j];
		if (tag == PT_NO_FRAME || !(tag & LAZY_PAGE))
			continue;
		const struct lazy_folio *lf = &m->folios.v[tag & LAZY_FOLIOS];
		uint64_t pfn = c->key << FCHUNK_SHIFT | j;
		uint32_t f = m->frames.n++;
		assert(f < m->frames.cap && m->nlazy);
		m->frames.v[f] = (struct pt_frame){ .pfn = pfn, .state = tag & LAZY_FREED ? PT_FS_FREE : PT_FS_DATA,
						    .order = lf->order, .node = lf->node,
						    .page_id = lf->page_id + (pfn - lf->pfn),
						    .alloc_event = lf->alloc_event };
		m->nlazy--;
		c->idx[j] = f;
		m->frame_cache[pfn % FCACHE_SIZE] = f;
	}
	return c->idx[k];
}

/* The frame of slot k of chunk c (page pfn), made if there is none or it is lazy. */
static inline uint32_t chunk_slot_frame(struct pt_machine *m, struct frame_chunk *c, unsigned k, uint64_t pfn)
{
	if (c->idx[k] == PT_NO_FRAME) {
		c->idx[k] = frame_new(m, pfn);
		c->idx_used |= (uint8_t)(1u << (k / 64));
	} else if (c->idx[k] & LAZY_PAGE)
		return lazy_frame(m, c, k);
	return c->idx[k];
}

/* The frame of pfn in chunk c (which holds it), created if there is none. */
static uint32_t chunk_frame(struct pt_machine *m, struct frame_chunk *c, uint64_t pfn)
{
	uint32_t f = chunk_slot_frame(m, c, pfn & (FCHUNK_FRAMES - 1), pfn);
	m->frame_cache[pfn % FCACHE_SIZE] = f;
	return f;
}

/* frame_get() past the frame cache: a call of its own, so that the lookups the cache answers
 * (most) cost no more than the cache's test (no registers saved for the chunk search) */
static __attribute__((noinline)) uint32_t frame_get_uncached(struct pt_machine *m, uint64_t pfn, bool create)
{
	struct frame_chunk *c = create ? chunk_get(m, pfn) : chunk_find(m, pfn);
	if (!c)
		return PT_NO_FRAME;
	if (!create && c->idx[pfn & (FCHUNK_FRAMES - 1)] == PT_NO_FRAME)
		return PT_NO_FRAME;
	return chunk_frame(m, c, pfn);
}

static inline uint32_t frame_get(struct pt_machine *m, uint64_t pa, bool create)
{
	uint64_t pfn = pa >> PT_PAGE_SHIFT;
	uint32_t hit = frame_cached(m, pfn);
	return hit != PT_NO_FRAME ? hit : frame_get_uncached(m, pfn, create);
}

/* The pseudo address of the level -1 table holding the entry at pa (see ROOT_PFN_BASE). */
static uint64_t root_frame_pa(const struct pt_machine *m, uint64_t pa)
{
	uint64_t bytes = 8ull << (m->va_bits - 48);	/* 2^(va_bits - 48) entries */
	return (ROOT_PFN_BASE | pa / bytes) << PT_PAGE_SHIFT | (pa & (bytes - 1));
}

static bool is_root_page(const struct pt_machine *m, uint64_t pfn)
{
	return hmap_get(&m->root_pages, pfn, 0);
}

/* The frame of the root table a TTBR names: with 52-bit VAs, the 16-entry table at pa. */
static uint32_t root_frame(struct pt_machine *m, uint64_t pa)
{
	if (m->start_level >= 0)
		return frame_get(m, pa, true);
	hmap_set(&m->root_pages, pa >> PT_PAGE_SHIFT, 1);
	return frame_get(m, root_frame_pa(m, pa), true);
}

static struct pt_table *table_new(struct pt_machine *m)
{
	struct pt_table *t;
	m->latest_gen++;
	if (m->table_pool.n) {
		t = m->table_pool.v[--m->table_pool.n];
		for (unsigned w = 0; w < PT_PTRS / 64; w++) {
			if (t->dirty[w] == ~0ull) {
				/* all 64 stored to (a split block's table): clear them as a block */
				memset(&t->latest[w * 64], 0, 64 * sizeof(t->latest[0]));
				memset(&t->visible[w * 64], 0, 64 * sizeof(t->visible[0]));
				memset(&t->vis_sseq[w * 64], 0, 64 * sizeof(t->vis_sseq[0]));
				memset(&t->npending[w * 64], 0, 64 * sizeof(t->npending[0]));
				t->dirty[w] = 0;
			}
			for (uint64_t b = t->dirty[w]; b; b &= b - 1) {
				unsigned i = w * 64 + (unsigned)__builtin_ctzll(b);
				t->latest[i] = t->visible[i] = t->vis_sseq[i] = 0;
				t->npending[i] = 0;
			}
			t->dirty[w] = 0;
			t->vis_tables[w] = 0;
		}
		t->cont_groups = 0;
		memset(t->ncont, 0, sizeof(t->ncont));
	} else {
		if (!(t = malloc(sizeof(*t))))
			abort();
		memset(t, 0, sizeof(*t));
		VEC_PUSH(m->tables, t);
	}
	t->first_pos = NO_POS;
	return t;
}

/* Make frame f a table (if it is not one), at level if known. */
static struct pt_frame *make_table(struct pt_machine *m, uint32_t f, int level)
{
	struct pt_frame *fr = &m->frames.v[f];
	if (fr->state != PT_FS_TABLE) {
		fr->state = PT_FS_TABLE;
		fr->tbl = table_new(m);
		fr->zero = PT_ZS_ORDERED;	/* never seen allocated: assume it was prepared */
		fr->level_known = 0;
	}
	if (level != LEVEL_UNKNOWN && !fr->level_known) {
		fr->level = (int8_t)level;
		fr->level_known = 1;
	}
	return fr;
}

/* ---- positions ---- */

static uint64_t pos_size(const struct pt_machine *m, const struct pt_pos *p)
{
	const struct pt_frame *fr = &m->frames.v[p->frame];
	return fr->level == m->start_level ? 1ull << m->va_bits : pt_level_size(fr->level - 1);
}

static bool same_tag(const struct pt_pos *a, bool global, uint16_t asid)
{
	return a->global == global && (global || a->asid == asid);
}

static void stale_list_add(struct pt_machine *m, uint32_t p)
{
	m->pos.v[p].stale_idx = m->stale_pos.n;
	VEC_PUSH(m->stale_pos, p);
}

static void stale_list_del(struct pt_machine *m, uint32_t p)
{
	uint32_t i = m->pos.v[p].stale_idx;
	uint32_t last = m->stale_pos.v[--m->stale_pos.n];
	m->stale_pos.v[i] = last;
	m->pos.v[last].stale_idx = i;
	m->pos.v[p].stale_idx = POS_STALE_NONE;
}

static void pos_unlink(struct pt_machine *m, uint32_t p)
{
	struct pt_pos *pp = &m->pos.v[p];
	struct pt_table *t = m->frames.v[pp->frame].tbl;
	uint32_t *link = &t->first_pos;
	while (*link != p)
		link = &m->pos.v[*link].next;
	*link = pp->next;
	m->pos_gen++;
	if (pp->stale_idx != POS_STALE_NONE)
		stale_list_del(m, p);
	pp->in_use = 0;
	VEC_PUSH(m->pos_free, p);
}

static void add_pos(struct pt_machine *m, uint32_t f, uint64_t va, bool global, uint16_t asid, bool live,
		    unsigned by_cpu);

/* The op a CPU is inside, for stamping stale entries: the operation that made the store, not
 * the one running when a DSB made it visible. */
static uint32_t stamp(const struct pt_machine *m, unsigned cpu)
{
	const struct pend_store *ps = m->applying;
	const struct pt_opctx *o = &m->cpu[cpu].op;
	if (ps)
		return store_op(ps);
	return o->open ? o->id : 0;
}

/* Visit the table descriptors of a table's visible entries. */
static void for_each_child(struct pt_machine *m, uint32_t f,
			   void (*fn)(struct pt_machine *, uint32_t child, unsigned idx, void *), void *ctx)
{
	struct pt_frame *fr = &m->frames.v[f];
	if (!fr->level_known || fr->level >= 3 || !fr->tbl)
		return;
	const struct pt_table *t = fr->tbl;
	for (unsigned w = 0; w < PT_PTRS / 64; w++) {
		for (uint64_t b = t->vis_tables[w]; b; b &= b - 1) {
			unsigned i = w * 64 + (unsigned)__builtin_ctzll(b);
			uint64_t d = t->visible[i];
			uint32_t c = frame_get(m, desc_oa(m, d), false);
			/* fn may add frames (and move m->frames.v), never another table's entries */
			fr = &m->frames.v[f];
			if (c != PT_NO_FRAME && m->frames.v[c].state == PT_FS_TABLE && c != f &&
			    (!m->frames.v[c].level_known || m->frames.v[c].level == fr->level + 1))
				fn(m, c, i, ctx);
		}
	}
}

static void make_stale(struct pt_machine *m, uint32_t p, unsigned by_cpu);

struct stale_walk { uint32_t parent; unsigned by_cpu; };

static void stale_child(struct pt_machine *m, uint32_t child, unsigned idx, void *ctx)
{
	struct stale_walk *w = ctx;
	const struct pt_pos *pp = &m->pos.v[w->parent];
	uint64_t va = pp->va + idx * pt_level_size(m->frames.v[pp->frame].level);
	for (uint32_t c = m->frames.v[child].tbl->first_pos; c != NO_POS; c = m->pos.v[c].next) {
		struct pt_pos *cp = &m->pos.v[c];
		if (cp->live && cp->va == va && same_tag(cp, pp->global, pp->asid))
			make_stale(m, c, w->by_cpu);
	}
}

/* A live position stops being walkable from the tables: it survives in walk caches. */
static void make_stale(struct pt_machine *m, uint32_t p, unsigned by_cpu)
{
	struct pt_pos *pp = &m->pos.v[p];
	if (!pp->live)
		return;
	pp->live = 0;
	pp->since = m->event_index;
	pp->seq = ++m->seq;
	pp->cpumask = m->allmask;
	pp->by_cpu = (uint16_t)by_cpu;
	pp->op = stamp(m, by_cpu);
	stale_list_add(m, p);
	struct stale_walk w = { p, by_cpu };
	for_each_child(m, pp->frame, stale_child, &w);
}

struct add_walk { uint32_t parent; };

static void add_child(struct pt_machine *m, uint32_t child, unsigned idx, void *ctx)
{
	struct add_walk *w = ctx;
	const struct pt_pos pp = m->pos.v[w->parent];
	const struct pt_frame *fr = &m->frames.v[pp.frame];
	struct pt_frame *cf = make_table(m, child, fr->level + 1);
	if (cf->level != fr->level + 1)
		return;		/* a table at two levels at once: not a tree the walker can use */
	add_pos(m, child, pp.va + idx * pt_level_size(fr->level), pp.global, pp.asid, pp.live, pp.by_cpu);
}

static void add_pos(struct pt_machine *m, uint32_t f, uint64_t va, bool global, uint16_t asid, bool live,
		    unsigned by_cpu)
{
	struct pt_table *t = m->frames.v[f].tbl;
	for (uint32_t q = t->first_pos; q != NO_POS; q = m->pos.v[q].next) {
		struct pt_pos *qp = &m->pos.v[q];
		if (qp->va == va && same_tag(qp, global, asid)) {
			if (live && !qp->live) {
				/* hooked again where it was: live again (its stale entry is now harmless) */
				stale_list_del(m, q);
				qp->live = 1;
			}
			return;
		}
	}
	uint32_t p;
	if (m->pos_free.n) {
		p = m->pos_free.v[--m->pos_free.n];
	} else {
		struct pt_pos z = { 0 };
		VEC_PUSH(m->pos, z);
		p = m->pos.n - 1;
	}
	struct pt_pos *pp = &m->pos.v[p];
	memset(pp, 0, sizeof(*pp));
	pp->frame = f;
	pp->parent = UINT32_MAX;
	pp->va = va;
	pp->global = global;
	pp->asid = global ? 0 : asid;
	pp->in_use = 1;
	pp->stale_idx = POS_STALE_NONE;
	pp->next = t->first_pos;
	t->first_pos = p;
	m->pos_gen++;
	if (live) {
		pp->live = 1;
	} else {
		pp->live = 0;
		pp->since = m->event_index;
		pp->seq = ++m->seq;
		pp->cpumask = m->allmask;
		pp->by_cpu = (uint16_t)by_cpu;
		pp->op = stamp(m, by_cpu);
		stale_list_add(m, p);
	}
	struct add_walk w = { p };
	for_each_child(m, f, add_child, &w);
}

/* ---- stale leaf facts ---- */

/* The slot of nfacts_in[] for va's 2 MiB region: the region number's Fibonacci hash, which
 * neighbouring regions do not share.  (Its low bits alone put regions 512 MiB apart in one slot:
 * user mappings at 256 MiB multiples and the vmalloc area's start, whose facts then made every
 * fact_append() of the other look for an equal fact.)  Any slot function counts each region's
 * facts in one slot, which is all its users need: a slot counting none has none in its regions. */
static inline unsigned fact_region(uint64_t va)
{
	return (unsigned)((va >> FACT_REGION_SHIFT) * 0x9e3779b97f4a7c15ull >> (64 - FACT_REGION_BITS));
}

/* false only if no stale fact can overlap [va, va + size): none is at level 1, size is 1..2 MiB
 * (so [va, va + size) meets at most two 2 MiB regions) and none of level 2 or 3 is in them */
static bool facts_maybe_in(const struct pt_machine *m, uint64_t va, uint64_t size)
{
	uint64_t last = va + (size - 1);
	if (m->nfacts_at[1] || !size || size > pt_level_size(2) || last < va)
		return true;
	return m->nfacts_in[fact_region(va)] || m->nfacts_in[fact_region(last)];
}

/* The VA half va is in: a fact (at most 1 GiB, aligned) lies in one */
static inline unsigned fact_half(uint64_t va)
{
	return (unsigned)(va >> 63);
}

/* The half's bound goes once it has no fact (an empty bound meets no range but the whole VA space). */
static inline void facts_half_empty(struct pt_machine *m, unsigned h)
{
	m->facts_lo[h] = UINT64_MAX;
	m->facts_hi[h] = 0;
}

/* k facts of half h go. */
static inline void facts_half_uncount(struct pt_machine *m, unsigned h, uint32_t k)
{
	m->nfacts_half[h] -= k;
	if (!m->nfacts_half[h])
		facts_half_empty(m, h);
}

/* Might a stale fact overlap VAs [va, last] (va <= last)?  Not if, in each half the range
 * meets, it misses the half's bound, which holds every fact of the half. */
static inline bool facts_bound_meets(const struct pt_machine *m, uint64_t va, uint64_t last)
{
	for (unsigned h = fact_half(va); h <= fact_half(last); h++)
		if (va <= m->facts_hi[h] && last >= m->facts_lo[h])
			return true;
	return false;
}

/* Are the tail's facts the only level 2 and 3 facts in VAs [va, last]?  They are if the range
 * and the tail (of level 2 or 3) lie in one 2 MiB region, whose slot in nfacts_in[] counts no
 * more facts than the tail has: none of the indexed facts is in the region. */
static inline bool facts_only_tail_in(const struct pt_machine *m, uint64_t va, uint64_t last)
{
	uint32_t tail_n = m->facts.n - m->facts_tail;
	uint64_t r = va >> FACT_REGION_SHIFT;
	if (!tail_n || last >> FACT_REGION_SHIFT != r || m->nfacts_in[fact_region(va)] != tail_n)
		return false;
	const struct pt_fact *first = &m->facts.v[m->facts_tail], *tl = &m->facts.v[m->facts.n - 1];
	return first->level >= 2 && first->va >> FACT_REGION_SHIFT == r && tl->va >> FACT_REGION_SHIFT == r;
}

/* Fact i leaves the fact counters (not the indexes). */
static void fact_uncount(struct pt_machine *m, uint32_t i)
{
	const struct pt_fact *f = &m->facts.v[i];
	m->facts_gen++;
	m->nfacts_at[f->level]--;
	if (f->level >= 2)
		m->nfacts_in[fact_region(f->va)]--;
	facts_half_uncount(m, fact_half(f->va), 1);
}

/* fact_uncount() of each fact of the tail (see facts_index_tail()), at once: they share a level
 * and lie level-size apart from the first, so the facts of each 2 MiB region are a stretch of
 * the tail, counted by arithmetic */
static void facts_uncount_tail(struct pt_machine *m)
{
	const struct pt_fact *first = &m->facts.v[m->facts_tail];
	uint32_t n = m->facts.n - m->facts_tail;
	uint64_t size = pt_level_size(first->level);

	m->facts_gen += n;
	m->nfacts_at[first->level] -= n;
	/* the halves' shares: first->va + i * size is below 2^63 for i < (2^63 - first->va) / size,
	 * rounded up */
	uint64_t below = fact_half(first->va) ? 0 : ((1ull << 63) - first->va + (size - 1)) / size;
	uint32_t low = below < n ? (uint32_t)below : n;
	if (low)
		facts_half_uncount(m, 0, low);
	if (n - low)
		facts_half_uncount(m, 1, n - low);
	if (first->level < 2)
		return;
	for (uint32_t i = 0, k; i < n; i += k) {
		uint64_t va = first->va + i * size;
		/* the facts from va to the end of its region (which may be the top of the VA space) */
		uint64_t in_region = ((va | (pt_level_size(2) - 1)) - va) / size + 1;
		k = in_region < n - i ? (uint32_t)in_region : n - i;
		m->nfacts_in[fact_region(va)] -= k;
	}
}

/* Fact i leaves the indexes (its pairs, one by one), and the counters. */
static void fact_unindex(struct pt_machine *m, uint32_t i)
{
	const struct pt_fact *f = &m->facts.v[i];
	bool a = hmap_remove(&m->facts_by_va, va_key(f->va, f->level), i);
	bool b = hmap_remove(&m->facts_by_oa, va_key(desc_oa(m, f->desc), f->level), i);
	assert(a && b);
	(void)a;
	(void)b;
	fact_uncount(m, i);
}

/*
 * The tail.  A drain that clears a run of a table's leaves (a munmap() of half a split THP clears
 * 256) makes a stale fact of each, and the TLBI that follows removes them all, most of them never
 * looked up by VA or output address in between.  So facts that fact_append() adds at consecutive
 * VAs of one level, alike but for their VAs, descriptors and stamps (seq not going down),
 * facts[facts_tail..n), join facts_by_va and facts_by_oa only when something needs them there
 * (facts_index_tail()): before any other fact comes or goes, when a TLBI reaches some of them
 * without removing all, or looks one up.  A query by VA finds the tail's fact at a VA by arithmetic
 * (fact_tail_at()), one by output address scans the tail.  Nothing enters the indexes while there
 * is a tail, and they keep each key's values in order through removals and growth, so each key's
 * values come out as if the tail had been inserted all along: after every other value, in index
 * order.
 */
static void facts_index_tail(struct pt_machine *m)
{
	for (uint32_t i = m->facts_tail; i < m->facts.n; i++) {
		const struct pt_fact *f = &m->facts.v[i];
		hmap_insert(&m->facts_by_va, va_key(f->va, f->level), i);
		hmap_insert(&m->facts_by_oa, va_key(desc_oa(m, f->desc), f->level), i);
	}
	m->facts_tail = m->facts.n;
}

/* The index of the tail's fact at va, a level-`level` base, or UINT32_MAX: facts_by_va's last
 * value for va_key(va, level) once the tail is in it. */
static inline uint32_t fact_tail_at(const struct pt_machine *m, uint64_t va, unsigned level)
{
	if (m->facts_tail == m->facts.n)
		return UINT32_MAX;
	const struct pt_fact *first = &m->facts.v[m->facts_tail], *last = &m->facts.v[m->facts.n - 1];
	if (first->level != level || va < first->va || va > last->va)
		return UINT32_MAX;
	return m->facts_tail + (uint32_t)((va - first->va) / pt_level_size((int)level));
}

/* Does a fact of the tail cover va? */
static bool fact_tail_covers(const struct pt_machine *m, uint64_t va)
{
	if (m->facts_tail == m->facts.n)
		return false;
	const struct pt_fact *first = &m->facts.v[m->facts_tail], *last = &m->facts.v[m->facts.n - 1];
	return va >= first->va && va - first->va <= last->va - first->va + (pt_level_size(last->level) - 1);
}

/* Would a new fact keep the tail as it is (see above), or start it? */
static inline bool fact_extends_tail(const struct pt_machine *m, uint64_t va, unsigned level, bool global,
				     uint16_t asid, uint64_t cpumask, uint64_t seq)
{
	if (m->facts_tail == m->facts.n)
		return true;
	const struct pt_fact *last = &m->facts.v[m->facts.n - 1];
	return va - last->va == pt_level_size((int)level) && va > last->va && last->level == level &&
	       seq >= last->seq && cpumask == last->cpumask && asid == last->asid && global == last->global;
}

/* Is no indexed fact of level at va?  Every fact of the level is the tail's; or, at level 3, the
 * tail lies in va's 2 MiB region (it runs from there up to va) and is all that region counts. */
static inline bool fact_none_indexed_at(const struct pt_machine *m, uint64_t va, unsigned level)
{
	uint32_t tail_n = m->facts.n - m->facts_tail;
	if (m->nfacts_at[level] == tail_n)
		return true;
	return level >= 2 && m->nfacts_in[fact_region(va)] == tail_n &&
	       (!tail_n || m->facts.v[m->facts_tail].va >> FACT_REGION_SHIFT == va >> FACT_REGION_SHIFT);
}

static void fact_del(struct pt_machine *m, uint32_t i)
{
	facts_index_tail(m);	/* (the last fact moves into slot i) */
	uint32_t last = m->facts.n - 1;
	fact_unindex(m, i);
	if (i != last) {
		const struct pt_fact *l = &m->facts.v[last];
		hmap_replace(&m->facts_by_va, va_key(l->va, l->level), last, i);
		hmap_replace(&m->facts_by_oa, va_key(desc_oa(m, l->desc), l->level), last, i);
		m->facts.v[i] = *l;
	}
	m->facts_tail = --m->facts.n;
}

/* The tag a stale leaf `desc` found at (asid|global) is cached under: a global leaf is cached
 * for every ASID (D8.16.1: nG), as ASID 0. */
static inline bool fact_global(uint64_t desc, bool global)
{
	return global || (desc & PT_DESC_NG) == 0;
}

/* A new fact at the end of facts[], not yet counted (facts_count()): fact_append()'s record. */
static inline __attribute__((always_inline)) void fact_put(struct pt_machine *m, uint64_t va, unsigned level,
							    uint64_t desc, bool global, uint16_t asid,
							    uint64_t cpumask, uint64_t since, uint64_t seq,
							    unsigned by_cpu, uint32_t op)
{
	VEC_RESERVE(m->facts, 1);
	m->facts.v[m->facts.n++] = (struct pt_fact){
		.va = va, .desc = desc, .since = since, .seq = seq, .cpumask = cpumask, .asid = asid,
		.global = global, .level = (uint8_t)level, .in_use = 1,
		.by_cpu = (uint16_t)by_cpu, .op = op,
	};
}

/* k facts put at VAs va, va + size, ..., last of level `level` (level-size apart, rising, at
 * level 2 or 3 all in va's 2 MiB region) join the counters: what k counts of one each give, as
 * the lowest is va and the highest last, in one VA half. */
static inline __attribute__((always_inline)) void facts_count(struct pt_machine *m, uint64_t va, uint64_t last,
							       unsigned level, uint32_t k)
{
	m->facts_gen += k;
	m->nfacts_at[level] += k;
	if (level >= 2)
		m->nfacts_in[fact_region(va)] += k;
	unsigned h = fact_half(va);
	m->nfacts_half[h] += k;
	if (va < m->facts_lo[h])
		m->facts_lo[h] = va;
	if (last + (pt_level_size((int)level) - 1) > m->facts_hi[h])
		m->facts_hi[h] = last + (pt_level_size((int)level) - 1);
}

/*
 * Stale leaf `desc` at (asid|global, va, level), merged into an equal fact if there is one, else
 * appended to facts[] and counted, as the tail's last (the tail indexed first unless it extends).
 * next: the tail's last fact is the caller's previous one, at va - pt_level_size(level), of this
 * level, cpumask and tag (fact_global()) and an older seq: it extends the tail.
 * (Inline: each caller's loop passes its arguments without a call's cost.)
 */
static inline __attribute__((always_inline)) void fact_append(struct pt_machine *m, uint64_t va, unsigned level,
							       uint64_t desc, bool global, uint16_t asid,
							       uint64_t cpumask, uint64_t since, uint64_t seq,
							       unsigned by_cpu, uint32_t op, bool next)
{
	global = fact_global(desc, global);
	if (global)
		asid = 0;
	if (!next && !fact_extends_tail(m, va, level, global, asid, cpumask, seq))
		facts_index_tail(m);
	/* an equal fact has this VA: not the tail's, so an indexed one */
	if (!fact_none_indexed_at(m, va, level)) {
		uint64_t key = va_key(va, level);
		for (uint64_t it = hmap_first(&m->facts_by_va, key); it != HMAP_END;
		     it = hmap_next(&m->facts_by_va, key, it)) {
			struct pt_fact *f = &m->facts.v[hmap_val(&m->facts_by_va, it)];
			if (f->va == va && f->desc == desc && f->global == global && f->asid == asid) {
				f->cpumask |= cpumask;
				if (seq > f->seq) {
					f->seq = seq;
					f->since = since;
					f->by_cpu = (uint16_t)by_cpu;
					f->op = op;
				}
				return;
			}
		}
	}
	fact_put(m, va, level, desc, global, asid, cpumask, since, seq, by_cpu, op);
	facts_count(m, va, va, level, 1);
}

/* fact_append(), indexed at once (and the tail before it). */
static void fact_add(struct pt_machine *m, uint64_t va, unsigned level, uint64_t desc, bool global,
		     uint16_t asid, uint64_t cpumask, uint64_t since, uint64_t seq, unsigned by_cpu, uint32_t op)
{
	facts_index_tail(m);
	fact_append(m, va, level, desc, global, asid, cpumask, since, seq, by_cpu, op, false);
	facts_index_tail(m);
}

/* Permissions a leaf grants, to tell a harmless change (more permissive or equal) from a reducing one. */
static bool more_permissive_or_equal(uint64_t newd, uint64_t oldd)
{
	bool old_w = !(oldd & PT_DESC_RDONLY) || (oldd & PT_DESC_DBM);
	bool new_w = !(newd & PT_DESC_RDONLY) || (newd & PT_DESC_DBM);
	if (old_w && !new_w)
		return false;
	if ((oldd & PT_DESC_USER) && !(newd & PT_DESC_USER))
		return false;
	if (!(oldd & PT_DESC_PXN) && (newd & PT_DESC_PXN))
		return false;
	if (!(oldd & PT_DESC_UXN) && (newd & PT_DESC_UXN))
		return false;
	return true;
}

/* Would a TLB entry for `oldd` still be correct, if less permissive, once `newd` is live? */
bool pt_stale_is_harmless(uint64_t oldd, uint64_t newd, unsigned level, bool lpa2)
{
	if (!pt_desc_is_leaf(newd, (int)level))
		return false;
	if (pt_desc_oa_fmt(oldd, lpa2) != pt_desc_oa_fmt(newd, lpa2))
		return false;
	const uint64_t same = PT_DESC_ATTR_MASK | PT_DESC_CONT | PT_DESC_NG | 3;
	if ((oldd ^ newd) & same)
		return false;
	return more_permissive_or_equal(newd, oldd);
}

/* ---- applying a store the walker can now see ---- */

/* A node for the rmap: from the free list, or a new one. */
static inline uint32_t rmap_node_new(struct pt_machine *m)
{
	uint32_t n = m->rmap_free;
	if (n != NO_RMAP) {
		m->rmap_free = m->rmap_nodes.v[n].next;
	} else {
		VEC_RESERVE(m->rmap_nodes, 1);
		n = m->rmap_nodes.n++;
		assert(n < RMAP_ONE);
	}
	return n;
}

/* rmap_link() to a list of nodes, or of a leaf not below RMAP_ONE_MAX: a call of its own, so
 * that the common case (a page's one leaf) is all that is inlined into the drain */
static __attribute__((noinline)) void rmap_link_list(struct pt_machine *m, uint32_t *last, uint64_t val)
{
	struct rmap_node *nd;
	if (*last != NO_RMAP && (*last & RMAP_ONE)) {
		/* the second leaf: the first one becomes the list's one node */
		uint32_t one = rmap_node_new(m);
		nd = m->rmap_nodes.v;
		nd[one].val = *last & ~RMAP_ONE;
		nd[one].next = one;
		*last = one;
	}
	uint32_t n = rmap_node_new(m);
	nd = m->rmap_nodes.v;
	nd[n].val = val;
	if (*last == NO_RMAP) {
		nd[n].next = n;
	} else {
		nd[n].next = nd[*last].next;
		nd[*last].next = n;
	}
	*last = n;
}

/* Append val to the rmap list whose slot is *last (see struct rmap_node). */
static inline __attribute__((always_inline)) void rmap_link(struct pt_machine *m, uint32_t *last, uint64_t val)
{
	if (*last == NO_RMAP && val < RMAP_ONE_MAX)
		*last = RMAP_ONE | (uint32_t)val;	/* the only leaf */
	else
		rmap_link_list(m, last, val);
}

/* rmap_unlink() of a list of nodes (*last names its last): a call of its own, as rmap_link_list() */
static __attribute__((noinline)) bool rmap_unlink_list(struct pt_machine *m, uint32_t *last, uint64_t val)
{
	struct rmap_node *nd = m->rmap_nodes.v;
	for (uint32_t prev = *last, i = nd[prev].next;; prev = i, i = nd[i].next) {
		if (nd[i].val == val) {
			if (i == prev)
				*last = NO_RMAP;	/* its only node */
			else if ((nd[prev].next = nd[i].next, i == *last))
				*last = prev;
			nd[i].next = m->rmap_free;
			m->rmap_free = i;
			return true;
		}
		if (i == *last)
			return false;
	}
}

/* Take the first node of val out of the rmap list whose slot is *last; false if none.  (A list
 * left with one node stays one: the same list.)  (Inline into rmap_del(), as that is into its
 * callers.) */
static inline __attribute__((always_inline)) bool rmap_unlink(struct pt_machine *m, uint32_t *last, uint64_t val)
{
	if (*last == NO_RMAP)
		return false;
	if (!(*last & RMAP_ONE))
		return rmap_unlink_list(m, last, val);
	if ((*last & ~RMAP_ONE) != val)
		return false;
	*last = NO_RMAP;	/* the only leaf */
	return true;
}

/* The reverse map of 1 GiB blocks (few sessions have any): a call of its own, so that the
 * hash map's code is not in the path of the other levels */
static __attribute__((noinline)) void rmap_update_1g(struct pt_machine *m, uint64_t oa, uint64_t val, bool add)
{
	uint64_t key = va_key(oa, 1);
	if (add) {
		hmap_insert(&m->rmap, key, val);
		m->nrmap_at[1]++;
	} else if (hmap_remove(&m->rmap, key, val)) {
		m->nrmap_at[1]--;
	}
}

static inline __attribute__((always_inline)) void rmap_add(struct pt_machine *m, uint64_t oa, unsigned level,
							   uint64_t val)
{
	uint64_t pfn = oa >> PT_PAGE_SHIFT;
	/* a chunk made here holds no frame: only the reverse map's lists, invisible elsewhere */
	struct frame_chunk *c = chunk_get(m, pfn);
	unsigned k = (unsigned)(pfn & (FCHUNK_FRAMES - 1));
	rmap_link(m, level == 2 ? &c->rmap_block : &c->rmap[k], val);
	if (level == 3)
		c->rmap_used[k / 64] |= 1ull << (k % 64);
	m->nrmap_at[level]++;
}

static inline __attribute__((always_inline)) void rmap_del(struct pt_machine *m, uint64_t oa, unsigned level,
							   uint64_t val)
{
	uint64_t pfn = oa >> PT_PAGE_SHIFT;
	struct frame_chunk *c = chunk_find(m, pfn);
	if (!c)
		return;
	unsigned k = (unsigned)(pfn & (FCHUNK_FRAMES - 1));
	uint32_t *last = level == 2 ? &c->rmap_block : &c->rmap[k];
	if (!rmap_unlink(m, last, val))
		return;
	if (level == 3 && *last == NO_RMAP)
		c->rmap_used[k / 64] &= ~(1ull << (k % 64));
	m->nrmap_at[level]--;
}

/* (Inline, with rmap_add() and rmap_del(): each visible leaf store makes one, without a call's cost.) */
static inline __attribute__((always_inline)) void rmap_update(struct pt_machine *m, uint64_t d, unsigned level,
							      uint32_t f, unsigned idx, bool add)
{
	uint64_t oa = desc_oa(m, d);
	uint64_t val = (uint64_t)f << 9 | idx;
	if (level == 1)
		rmap_update_1g(m, oa, val, add);
	else if (add)
		rmap_add(m, oa, level, val);
	else
		rmap_del(m, oa, level, val);
}

/* The one position of a table, as a run of stores to it (drain_run()) sees it throughout: no
 * store of a run changes a position.  What leaf_gone() makes its stale facts with, read once. */
struct run_pos {
	uint64_t va, cpumask;	/* a live position's facts may be cached by every CPU */
	uint16_t asid;
	bool global;
};

static inline struct run_pos run_pos_of(const struct pt_machine *m, const struct pt_pos *pp)
{
	return (struct run_pos){ pp->va, pp->live ? m->allmask : pp->cpumask, pp->asid, pp->global };
}

/* A run's tail mark (see leaf_gone()): m->facts.n as a store's fact left it on the tail's end,
 * with the fact's tag (fact_global()); NO_TAIL, which no mark is, for none. */
#define NO_TAIL UINT64_MAX
static inline uint64_t tail_mark(uint32_t n, bool global)
{
	return (uint64_t)n << 1 | global;
}

/* A visible leaf of table t (frame f) at a known level goes from `old` to `new` by store s: it
 * leaves the rmap, and unless a cached `old` stays harmless it becomes a stale fact at each
 * position, stamped with s's op (stamp(), m->applying being s or, in a run, not set) and the
 * visibility sequence seq (m->seq, or in a run what it will be).
 * In a run (drain_run(), whose stores go to consecutive entries, with nothing between two of
 * them that adds, removes or indexes a fact): rp is t's one position, read at the run's start
 * (NULL: read here, and t may have any number); prev_tail is the tail mark the run's previous
 * store left if its fact went onto the tail's end (entry idx - 1's, of t's one position: a fact
 * at the VA before, of the same level and cpumask, and seq lower, as m->seq grows with each
 * store), NO_TAIL if not; *run_tail is set for this store's.  A fact whose mark matches
 * prev_tail's (the tail as that fact left it, and the same tag) extends the tail.
 * (This and leaf_live() are inline: apply_visible()'s common case, without a call's cost.) */
static inline __attribute__((always_inline)) void leaf_gone(struct pt_machine *m, const struct pt_table *t,
							    uint32_t f, unsigned idx, uint64_t old,
							    uint64_t new, int level, unsigned by_cpu,
							    const struct pend_store *s, uint64_t seq,
							    const struct run_pos *rp, uint64_t prev_tail,
							    uint64_t *run_tail)
{
	rmap_update(m, old, level, f, idx, false);
	/* (pt_stale_is_harmless() of a new value that is no leaf, a clear's, is false: not called;
	 * a run's rp is a position of t's) */
	if ((!rp && t->first_pos == NO_POS) ||
	    (pt_desc_is_leaf(new, level) && pt_stale_is_harmless(old, new, (unsigned)level, m->lpa2)))
		return;
	uint64_t size = pt_level_size(level);
	uint32_t op = store_op(s);
	struct run_pos one;
	if (!rp) {
		const struct pt_pos *pp = &m->pos.v[t->first_pos];
		if (pp->next != NO_POS) {
			for (uint32_t p = t->first_pos; p != NO_POS; p = m->pos.v[p].next) {
				pp = &m->pos.v[p];
				fact_add(m, pp->va + idx * size, (unsigned)level, old, pp->global, pp->asid,
					 pp->live ? m->allmask : pp->cpumask, m->event_index, seq, by_cpu, op);
			}
			return;
		}
		one = run_pos_of(m, pp);
		rp = &one;
	}
	/* one position (a process's table): a run of such leaves grows one tail */
	uint32_t n = m->facts.n;
	bool global = fact_global(old, rp->global);
	fact_append(m, rp->va + idx * size, (unsigned)level, old, global, rp->asid, rp->cpumask, m->event_index,
		    seq, by_cpu, op, prev_tail == tail_mark(n, global));
	if (run_tail && m->facts.n != n)
		*run_tail = tail_mark(m->facts.n, global);
}

/* A valid leaf `new` becomes visible in table t (frame f) at a known level. */
static inline __attribute__((always_inline)) void leaf_live(struct pt_machine *m, const struct pt_table *t,
							    uint32_t f, unsigned idx, uint64_t new, int level,
							    unsigned by_cpu)
{
	rmap_update(m, new, level, f, idx, true);
	uint64_t size = pt_level_size(level);
	for (uint32_t p = t->first_pos; p != NO_POS; p = m->pos.v[p].next) {
		const struct pt_pos *pp = &m->pos.v[p];
		OBS(m, leaf_live, pp->va + idx * size, level, pp->asid, pp->global, new, by_cpu);
	}
}

/* apply_visible() of a change from or to a table descriptor: positions through the old child
 * go stale, the new child gets positions (frames may be made, and m->frames.v move). */
static __attribute__((noinline)) void apply_visible_table(struct pt_machine *m, uint32_t f, unsigned idx,
							  uint64_t old, uint64_t new, unsigned by_cpu)
{
	struct pt_frame *fr = &m->frames.v[f];
	struct pt_table *t = fr->tbl;
	int level = fr->level;
	uint64_t size = pt_level_size(level);

	if (pt_desc_is_table(old, level)) {
		uint32_t c = frame_get(m, desc_oa(m, old), false);
		if (c != PT_NO_FRAME && m->frames.v[c].state == PT_FS_TABLE) {
			for (uint32_t p = t->first_pos; p != NO_POS; p = m->pos.v[p].next) {
				struct stale_walk w = { p, by_cpu };
				stale_child(m, c, idx, &w);
			}
		}
	} else if (pt_desc_is_leaf(old, level)) {
		leaf_gone(m, t, f, idx, old, new, level, by_cpu, m->applying, m->seq, NULL, NO_TAIL, NULL);
	}

	if (pt_desc_is_table(new, level)) {
		uint32_t c = frame_get(m, desc_oa(m, new), true);
		struct pt_frame *cf = make_table(m, c, level + 1);
		if (c == f || cf->level != level + 1)
			return;	/* points at itself, or at a table of another level: nothing to walk */
		for (uint32_t p = t->first_pos; p != NO_POS; p = m->pos.v[p].next) {
			struct pt_pos pp = m->pos.v[p];
			add_pos(m, c, pp.va + idx * size, pp.global, pp.asid, pp.live, by_cpu);
			OBS(m, table_live, pp.va + idx * size, level, pp.asid, pp.global, c, by_cpu);
		}
	} else if (pt_desc_is_leaf(new, level)) {
		leaf_live(m, t, f, idx, new, level, by_cpu);
	}
}

/* Entry idx of table t shows `new` to the walker: the entry and its table bit (not for a table
 * known to be of level 3, leaf3: see vis_tables).  The caller moves the visibility sequence. */
static inline __attribute__((always_inline)) void set_visible(struct pt_table *t, unsigned idx, uint64_t new,
							      bool leaf3)
{
	t->visible[idx] = new;
	/* (the bit cleared, then set if new is one: no branch) */
	if (!leaf3)
		t->vis_tables[idx / 64] = (t->vis_tables[idx / 64] & ~(1ull << (idx % 64))) |
					  (uint64_t)((new & 3) == 3) << (idx % 64);
}

/* Entry idx of table frame f (a table: the callers check) becomes `new` for the walker.  (Inline:
 * the drain's per-store step, without a call's cost.) */
static inline __attribute__((always_inline)) void apply_visible(struct pt_machine *m, uint32_t f, unsigned idx, uint64_t new, unsigned by_cpu)
{
	const struct pt_frame *fr = &m->frames.v[f];
	struct pt_table *t = fr->tbl;
	uint64_t old = t->visible[idx];
	if (old == new)
		return;
	set_visible(t, idx, new, false);
	m->seq++;
	OBS(m, pt_visible, f, idx, old, new, by_cpu);
	if (!fr->level_known)
		return;		/* not reachable from anything known: no translation changed */
	int level = fr->level;
	if (pt_desc_is_table(old, level) || pt_desc_is_table(new, level)) {
		apply_visible_table(m, f, idx, old, new, by_cpu);
		return;
	}
	/* leaves and invalid entries: no position of any table changes, no frame is made */
	if (pt_desc_is_leaf(old, level))
		leaf_gone(m, t, f, idx, old, new, level, by_cpu, m->applying, m->seq, NULL, NO_TAIL, NULL);
	if (pt_desc_is_leaf(new, level))
		leaf_live(m, t, f, idx, new, level, by_cpu);
}

/* ---- barriers and TLB maintenance ---- */

static bool tlbi_is_local(unsigned op) { return op >= PT_TLBI_VAE1; }
static unsigned tlbi_base(unsigned op) { return tlbi_is_local(op) ? op - PT_TLBI_VAE1 : op; }
static bool tlbi_last_level(unsigned op)
{
	op = tlbi_base(op);
	return op == PT_TLBI_VALE1IS || op == PT_TLBI_VAALE1IS || op == PT_TLBI_RVALE1IS ||
	       op == PT_TLBI_RVAALE1IS;
}
static bool tlbi_all_asids(unsigned op)
{
	op = tlbi_base(op);
	return op == PT_TLBI_VAAE1IS || op == PT_TLBI_VAALE1IS || op == PT_TLBI_RVAAE1IS ||
	       op == PT_TLBI_RVAALE1IS || op == PT_TLBI_VMALLE1IS;
}

/* The last VA of [va, va + size), size > 0: the top of the VA space if the range reaches past it. */
static inline uint64_t range_last(uint64_t va, uint64_t size)
{
	uint64_t last = va + (size - 1);
	return last < va ? UINT64_MAX : last;
}

/* What a TLBI matches among leaf entries, with what depends on the TLBI alone worked out once:
 * a range TLBI's completion asks it of every stale fact. */
struct tlbi_leaf_match {
	uint64_t seq;		/* the TLBI's */
	uint64_t va, last;	/* its VA range, last VA included (any VA: all_vas) */
	bool all_vas, asid_only, all_asids;
	uint16_t asid;
	uint8_t ttl;
};

static inline __attribute__((always_inline)) void tlbi_leaf_match_init(struct tlbi_leaf_match *lm,
								      const struct pend_tlbi *t)
{
	unsigned op = tlbi_base(t->op);
	lm->seq = t->seq;
	lm->all_vas = !t->size;
	lm->va = t->va;
	lm->last = t->size ? range_last(t->va, t->size) : UINT64_MAX;
	lm->asid_only = op == PT_TLBI_ASIDE1IS;
	lm->all_asids = tlbi_all_asids(op);
	lm->asid = t->asid;
	lm->ttl = t->ttl;
}

static inline bool tlbi_leaf_matches(const struct tlbi_leaf_match *lm, bool global, uint16_t asid, uint64_t va,
				     uint64_t size, unsigned level)
{
	if (lm->asid_only)
		return !global && asid == lm->asid;
	if (!lm->all_asids && !global && asid != lm->asid)
		return false;
	/* by last addresses: an entry or a range may end at the top of the VA space (va + size = 2^64) */
	if (!lm->all_vas && (va + (size - 1) < lm->va || va > lm->last))
		return false;
	/* TTL hint: "if the level is wrong, no invalidation may take place" (tlbflush.h).  It names
	 * the level of the leaf, and "the TTL field is only valid for the leaf entry" (tlb_get_level()
	 * in arch/arm64/include/asm/tlb.h passes TLBI_TTL_UNKNOWN whenever tables were freed): a
	 * hinted TLBI guarantees the removal of leaf entries at its level only, never of walk-cache
	 * entries (oracle-semantics.md, TTL) */
	return !lm->ttl || level == lm->ttl;
}

/* Does TLBI t remove the entry for (asid|global, [va, va + size)) at level: a leaf (TLB) entry, or
 * a walk-cache entry (walk)? */
static bool tlbi_matches(const struct pend_tlbi *t, bool global, uint16_t asid, uint64_t va, uint64_t size,
			 unsigned level, bool walk)
{
	/* "last level": walk-cache entries survive (D8.17.3); a TTL hint guarantees leaves only */
	if (walk && (tlbi_last_level(tlbi_base(t->op)) || t->ttl))
		return false;
	struct tlbi_leaf_match lm;
	tlbi_leaf_match_init(&lm, t);
	return tlbi_leaf_matches(&lm, global, asid, va, size, level);
}

/* A stale walk entry is removed by a TLBI that does not remove every leaf cached through it:
 * those it leaves (outside its VA range, or of another level than its TTL hint) stay cached. */
static void materialize_leaves(struct pt_machine *m, uint32_t p, const struct pend_tlbi *t, uint64_t mask)
{
	const struct pt_pos pp = m->pos.v[p];
	const struct pt_frame *fr = &m->frames.v[pp.frame];
	if (!fr->level_known || !fr->tbl)
		return;
	const struct pt_table *tbl = fr->tbl;
	int level = fr->level;
	uint64_t size = pt_level_size(level);
	struct tlbi_leaf_match lm;
	tlbi_leaf_match_init(&lm, t);
	/* in index order, the entries stored to only (the others are zero), by their bits, word by
	 * word: fact_add() changes no frame and no table, so the table, its level and its bits are
	 * what they were at the start throughout */
	for (unsigned w = 0; w < PT_PTRS / 64; w++) {
		for (uint64_t b = tbl->dirty[w]; b; b &= b - 1) {
			unsigned i = w * 64 + (unsigned)__builtin_ctzll(b);
			uint64_t d = tbl->visible[i];
			if (!pt_desc_is_leaf(d, level))
				continue;
			uint64_t va = pp.va + i * size;
			bool global = pp.global || !(d & PT_DESC_NG);
			/* a block is removed whole by a TLBI whose VA falls anywhere inside it */
			if (tlbi_leaf_matches(&lm, global, pp.asid, va, size, (unsigned)level))
				continue;
			fact_add(m, va, level, d, pp.global, pp.asid, mask, pp.since, pp.seq, pp.by_cpu, pp.op);
		}
	}
}

/* A TLBI of `clear`'s CPUs reaching fact i: whether it removes the fact (from the last CPU
 * that may cache it); a fact it matches that stays cached elsewhere loses those CPUs. */
static inline bool tlbi_reaches_fact(const struct tlbi_leaf_match *lm, const struct pt_fact *f)
{
	return f->seq < lm->seq && tlbi_leaf_matches(lm, f->global, f->asid, f->va, pt_level_size(f->level), f->level);
}

/*
 * The tail goes first if the TLBI removes every fact of it (what it changes in them goes with
 * them).  It is the end of facts[] and in no index, and with its facts at the end, all going,
 * the compaction of the others is the one it would be with them: they are popped first.  Its
 * facts differ in VA, consecutive, and seq, not going down, and a TLBI matches a range of VAs:
 * it reaches them all if it reaches the first and the last, and removes them all if it leaves
 * none of the CPUs they share.
 */
static void tlbi_clear_tail(struct pt_machine *m, const struct tlbi_leaf_match *lm, uint64_t clear)
{
	if (m->facts_tail == m->facts.n)
		return;
	const struct pt_fact *first = &m->facts.v[m->facts_tail], *last = &m->facts.v[m->facts.n - 1];
	if (!tlbi_reaches_fact(lm, first) || !tlbi_reaches_fact(lm, last) || (first->cpumask & ~clear))
		return;
	facts_uncount_tail(m);
	m->facts.n = m->facts_tail;
}

/* Facts removed by one TLBI from which the fact indexes are cleared in one pass (hmap_remap())
 * rather than pair by pair: with at least one per this many of an index's slots */
#define FACTS_REMAP_RATIO 16u

/*
 * A TLBI's facts go, out of facts[] and of the indexes.  Each fact is judged once, in any order
 * (whether it goes depends on it alone, and so does what the TLBI changes in it); facts[] is then
 * compacted as the removal in index order always did it: the facts going at the end are popped,
 * and the last one kept moves into the slot of a fact going.  map[] is that compaction: a fact's
 * new index, or HMAP_REMAP_DEL.  The indexes keep each key's values in order either way, and
 * facts[] moves last, so the keys of the facts that go are still there.
 */
static void tlbi_clear_facts(struct pt_machine *m, const struct tlbi_leaf_match *lm, uint64_t clear)
{
	tlbi_clear_tail(m, lm, clear);
	/* a TLBI by VA reaches only facts that overlap its VAs (tlbi_leaf_matches()): where none can
	 * (facts_bound_meets(), facts_maybe_in()), it reaches none, and nothing below changes */
	if (!lm->all_vas && !lm->asid_only &&
	    (!facts_bound_meets(m, lm->va, lm->last) || !facts_maybe_in(m, lm->va, lm->last - lm->va + 1)))
		return;
	uint32_t n = m->facts.n, tail = m->facts_tail, gone = 0, stack_map[512];
	bool tail_reached = false;
	uint32_t *map = n <= 512 ? stack_map : malloc(n * sizeof(*map));
	if (!map)
		abort();
	for (uint32_t i = 0; i < n; i++) {
		/* a fact reached by a TLBI of `clear`'s CPUs goes with the last CPU that may cache it */
		struct pt_fact *f = &m->facts.v[i];
		map[i] = i;
		if (!tlbi_reaches_fact(lm, f))
			continue;
		tail_reached |= i >= tail;
		f->cpumask &= ~clear;
		if (!f->cpumask) {
			map[i] = HMAP_REMAP_DEL;
			gone++;
		}
	}
	/* a tail that goes whole never joins the indexes (tlbi_clear_tail() took it); one that the
	 * TLBI reached (its facts now differ in CPUs), or whose facts the compaction below moves, is
	 * indexed, as it would have been all along */
	if (tail != n && (tail_reached || gone))
		facts_index_tail(m);
	if (!gone)
		goto out;
	/* fact_del() of each fact that goes, in index order, the last ones popped */
	uint32_t last = n;
	for (uint32_t i = 0; i < last; i++) {
		if (map[i] != HMAP_REMAP_DEL)
			continue;
		do
			last--;
		while (last > i && map[last] == HMAP_REMAP_DEL);
		if (last == i)
			break;
		map[last] = i;
	}
	bool bulk = gone * FACTS_REMAP_RATIO > m->facts_by_va.mask;
	if (bulk) {
		hmap_remap(&m->facts_by_va, map);
		hmap_remap(&m->facts_by_oa, map);
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct pt_fact *f = &m->facts.v[i];
		if (map[i] == HMAP_REMAP_DEL) {
			if (bulk)
				fact_uncount(m, i);
			else
				fact_unindex(m, i);
		} else if (map[i] != i && !bulk) {
			hmap_replace(&m->facts_by_va, va_key(f->va, f->level), i, map[i]);
			hmap_replace(&m->facts_by_oa, va_key(desc_oa(m, f->desc), f->level), i, map[i]);
		}
	}
	/* a fact moves from the end (last on) into the slot of one that goes */
	for (uint32_t i = last; i < n; i++)
		if (map[i] != HMAP_REMAP_DEL)
			m->facts.v[map[i]] = m->facts.v[i];
	m->facts.n = m->facts_tail = last;
out:
	if (map != stack_map)
		free(map);
}

static void tlbi_complete(struct pt_machine *m, unsigned cpu, const struct pend_tlbi *t)
{
	uint64_t clear = tlbi_is_local(t->op) ? 1ull << cpu : m->allmask;

	/* leaves: single-page forms by lookup, the rest by scan */
	if (t->size == pt_level_size(3)) {
		if (fact_tail_covers(m, t->va))
			facts_index_tail(m);	/* its fact there is looked up below */
		for (unsigned level = 1; level <= 3; level++) {
			if (!m->nfacts_at[level] || (level >= 2 && !m->nfacts_in[fact_region(t->va)]))
				continue;	/* (a fact of level 2 or 3 at t->va is in its region) */
			uint64_t key = va_key(t->va, level);
			uint64_t it = hmap_first(&m->facts_by_va, key);
			while (it != HMAP_END) {
				uint32_t i = (uint32_t)hmap_val(&m->facts_by_va, it);
				struct pt_fact *f = &m->facts.v[i];
				if (f->seq < t->seq &&
				    tlbi_matches(t, f->global, f->asid, f->va, pt_level_size(f->level), f->level, false)) {
					f->cpumask &= ~clear;
					if (!f->cpumask) {
						fact_del(m, i);
						it = hmap_first(&m->facts_by_va, key);	/* table changed */
						continue;
					}
				}
				it = hmap_next(&m->facts_by_va, key, it);
			}
		}
	} else {
		struct tlbi_leaf_match lm;
		tlbi_leaf_match_init(&lm, t);
		tlbi_clear_facts(m, &lm, clear);
	}

	/* walk-cache entries */
	for (uint32_t s = 0; s < m->stale_pos.n;) {
		uint32_t p = m->stale_pos.v[s];
		struct pt_pos *pp = &m->pos.v[p];
		uint64_t size = pos_size(m, pp);
		unsigned dlevel = m->frames.v[pp->frame].level ? m->frames.v[pp->frame].level - 1u : 0;
		if (pp->seq < t->seq && (pp->cpumask & clear) &&
		    tlbi_matches(t, pp->global, pp->asid, pp->va, size, dlevel, true)) {
			materialize_leaves(m, p, t, pp->cpumask & clear);
			pp->cpumask &= ~clear;
			if (!pp->cpumask) {
				pos_unlink(m, p);
				continue;	/* the list was compacted into slot s */
			}
		}
		s++;
	}
	OBS(m, tlbi_done, cpu, t->op, t->va, t->size);
}

/* Other CPUs' pending stores to (frame, idx) older than sseq become visible now, in order. */
static void drain_older(struct pt_machine *m, unsigned self, uint32_t frame, unsigned idx, uint64_t sseq)
{
	for (;;) {
		/* the oldest such store first */
		unsigned best_cpu = UINT32_MAX;
		uint32_t best = 0;
		uint64_t best_seq = sseq;
		for (unsigned c = 0; c < m->ncpus; c++) {
			if (c == self)
				continue;
			struct cpu *cp = &m->cpu[c];
			for (uint32_t i = 0; i < cp->stores.n; i++) {
				const struct pend_store *ps = &cp->stores.v[i];
				if (ps->frame == frame && ps->idx == idx && ps->sseq < best_seq) {
					best_cpu = c;
					best = i;
					best_seq = ps->sseq;
				}
			}
		}
		if (best_cpu == UINT32_MAX)
			return;
		struct cpu *cp = &m->cpu[best_cpu];
		struct pend_store ps = cp->stores.v[best];
		memmove(&cp->stores.v[best], &cp->stores.v[best + 1], (cp->stores.n - best - 1) * sizeof(ps));
		cp->stores.n--;
		struct pt_frame *fr = &m->frames.v[frame];
		if (fr->state != PT_FS_TABLE)
			return;
		fr->tbl->npending[idx]--;
		if (fr->tbl->vis_sseq[idx] > ps.sseq)
			continue;
		const struct pend_store *saved = m->applying;
		m->applying = &ps;
		apply_visible(m, frame, idx, ps.val, best_cpu);
		m->applying = saved;
		if (m->frames.v[frame].state == PT_FS_TABLE)
			m->frames.v[frame].tbl->vis_sseq[idx] = ps.sseq;
	}
}

/* Has a CPU other than cpu a pending store? */
static bool other_stores(const struct pt_machine *m, unsigned cpu)
{
	for (unsigned k = 0; k < m->ncpus; k++)
		if (k != cpu && m->cpu[k].stores.n)
			return true;
	return false;
}

/* other_stores() for drain_stores(), found when a store first asks (*others -1: not yet; most
 * drains have no entry with two stores pending, and never ask).  Other CPUs' store buffers
 * change in a drain only in drain_older(), which sets *others back to -1: any time in between,
 * other_stores() gives what it gave at the start, or after the last drain_older(). */
static inline bool others_pending(const struct pt_machine *m, unsigned cpu, int *others)
{
	if (*others < 0)
		*others = other_stores(m, cpu);
	return *others;
}

/*
 * drain_run()'s run in a table of level 3 that no store of it finds a leaf in (a run of makes:
 * a fault's set_ptes, a THP split's new table), where either the table has no position or its
 * leaves' hook is leaf_live_run: drain_run()'s first loop with the level and "makes" constant,
 * so with no leaf_gone() (the run ends at an old leaf) and no table descriptor (none at level
 * 3).  A call of its own, with its chunk, lpa2 flag and counts in registers rather than on the
 * stack of drain_stores() and in m: the chunk found for the last leaf (chunks go only at a
 * reset) is the one chunk_get() would give while its key matches, and nrmap_at[3], which
 * nothing in the run reads, gets its sum at the end.
 */
static __attribute__((noinline)) uint32_t drain_makes(struct pt_machine *m, struct pt_table *t, uint32_t f,
						  const struct pend_store *ps, uint32_t max, unsigned cpu,
						  int *others)
{
	struct frame_chunk *c = NULL;
	uint64_t key = NO_CHUNK_KEY, seq = m->seq, next = 0;
	uint32_t n, adds = 0;
	unsigned idx0 = ps->idx;	/* (read once: the compiler cannot tell the stores below miss it) */
	unsigned k = FCHUNK_FRAMES - 1;	/* the last leaf's page's slot in c (none: no next) */
	bool lpa2 = m->lpa2;

	for (n = 0; n < max; n++) {
		const struct pend_store *s = &ps[n];
		unsigned idx = s->idx;
		uint64_t old = t->visible[idx], new = s->val;
		if (s->frame != f || idx != idx0 + n ||
		    (t->npending[idx] > 1 && others_pending(m, cpu, others)) ||
		    t->vis_sseq[idx] > s->sseq || pt_desc_is_leaf(old, 3))
			break;
		if (t->npending[idx])
			t->npending[idx]--;
		t->vis_sseq[idx] = s->sseq;
		/* (old is no leaf: a leaf as new is a change, without old != new's test) */
		if (new == next && k < FCHUNK_FRAMES - 1) {
			/* the last leaf plus a page (a folio's next page): a leaf (the same low bits)
			 * whose output is the last one's next page, slot k + 1 of c (the page number's
			 * low bits, below FCHUNK_FRAMES - 1, take the carry), without the decoding */
			k++;
		} else if (pt_desc_is_leaf(new, 3)) {
			uint64_t pfn = pt_desc_oa_fmt(new, lpa2) >> PT_PAGE_SHIFT;
			k = (unsigned)(pfn & (FCHUNK_FRAMES - 1));
			if (pfn >> FCHUNK_SHIFT != key) {
				c = chunk_get(m, pfn);
				key = pfn >> FCHUNK_SHIFT;
			}
		} else {
			if (old != new) {
				set_visible(t, idx, new, true);
				seq++;
			}
			continue;
		}
		/* rmap_add() */
		set_visible(t, idx, new, true);
		seq++;
		next = new + (1ull << PT_PAGE_SHIFT);
		/* rmap_link(), its common case told by the slot's bit (clear: the slot is empty), whose
		 * word a run of makes reads again and again, rather than by the slot, which it then
		 * writes without a read (one cache line for the chunk's bits, not one per 16 slots, to
		 * wait for) */
		uint64_t *used = &c->rmap_used[k / 64], bit = 1ull << (k % 64), val = (uint64_t)f << 9 | idx;
		if (!(*used & bit) && val < RMAP_ONE_MAX)
			c->rmap[k] = RMAP_ONE | (uint32_t)val;	/* the only leaf */
		else
			rmap_link(m, &c->rmap[k], val);
		*used |= bit;
		adds++;
	}
	m->seq = seq;
	m->nrmap_at[3] += adds;
	return n;
}

/* drain_zaps()' fact_append() of a store's stale leaf, of a process's PTE table's one position rp:
 * may the next clear's fact, if of this tag, be put alone (see there)?  A call of its own (a run's
 * first fact and a change of tag), whose registers the loop does not keep. */
static __attribute__((noinline)) bool zap_fact(struct pt_machine *m, uint64_t va, uint64_t old, bool global,
					       const struct run_pos *rp, uint64_t since, uint64_t seq,
					       unsigned by_cpu, uint32_t op)
{
	uint32_t n = m->facts.n;
	fact_append(m, va, 3, old, global, rp->asid, rp->cpumask, since, seq, by_cpu, op, false);
	return m->facts.n != n && fact_none_indexed_at(m, va, 3);
}

/*
 * drain_run()'s run in a table of level 3 with one position, rp (a process's PTE table), from
 * ps[0] on while each store clears a leaf (its old value a leaf, its new one none: a munmap()'s
 * zap): drain_run()'s last loop with the level constant and each store's kind known, so
 * leaf_gone() without the harmless test (a new value that is no leaf is never harmless) and no
 * leaf_live() (nothing in the run calls out or reads m->seq, stored at the end).  Its stale facts
 * lie at consecutive VAs in the position's 2 MiB region (a level-3 table's VA is 2 MiB aligned),
 * of one level and cpumask, with rising seq: once one of them went onto the tail's end with none
 * indexed at the next VA (fact_none_indexed_at(), which counts level-3 facts against the tail,
 * in that region), each next one of the same tag (fact_global()) extends the tail
 * (fact_extends_tail()) and finds none indexed at its VA either, as each put adds one to both
 * sides.  So fact_append() has nothing to find or decide for them: they are put (fact_put()) and
 * counted together (facts_count()) before anything looks at the counters again, at a change of
 * tag (zap_fact() of the next) and at the run's end.  A call of its own, as drain_makes().
 */
static __attribute__((noinline)) uint32_t drain_zaps(struct pt_machine *m, struct pt_table *t, uint32_t f,
						 const struct pend_store *ps, uint32_t max, unsigned cpu,
						 int *others, unsigned by_cpu, const struct run_pos *rp)
{
	const uint64_t size = pt_level_size(3), since = m->event_index, cpumask = rp->cpumask;
	uint64_t seq = m->seq, va = rp->va + (uint64_t)ps->idx * size;
	uint32_t n, batch = 0;	/* the facts up to the last store's, batch of them, are put, not counted */
	unsigned idx0 = ps->idx;
	uint16_t asid = rp->asid;
	bool pglobal = rp->global;
	int tag = -1;		/* the tag of the facts to put alone, -1 if none */

	for (n = 0; n < max; n++, va += size) {
		const struct pend_store *s = &ps[n];
		unsigned idx = s->idx;
		uint64_t old = t->visible[idx], new = s->val;
		if (s->frame != f || idx != idx0 + n ||
		    (t->npending[idx] > 1 && others_pending(m, cpu, others)) ||
		    t->vis_sseq[idx] > s->sseq || !pt_desc_is_leaf(old, 3) || pt_desc_is_leaf(new, 3))
			break;
		if (t->npending[idx])
			t->npending[idx]--;
		set_visible(t, idx, new, true);
		seq++;
		rmap_update(m, old, 3, f, idx, false);	/* leaf_gone() */
		bool global = fact_global(old, pglobal);
		if (global == tag) {
			fact_put(m, va, 3, old, global, global ? 0 : asid, cpumask, since, seq, by_cpu, store_op(s));
			batch++;
		} else {
			if (batch)
				facts_count(m, va - batch * size, va - size, 3, batch);
			batch = 0;
			tag = zap_fact(m, va, old, global, rp, since, seq, by_cpu, store_op(s)) ? global : -1;
		}
		t->vis_sseq[idx] = s->sseq;
	}
	if (batch)
		facts_count(m, va - batch * size, va - size, 3, batch);
	m->seq = seq;
	return n;
}

/*
 * drain_stores() of cpu's stores from ps on (at most max, all with sseq <= upto), ps[0] drained,
 * to table frame f at level `level` (3 if not known: no table is looked for) while they form a
 * run; the number drained, 0 if ps[0] starts none.  *others: another CPU has a pending store
 * (see others_pending()).
 * A run: stores to entries idx, idx + 1, ... of the table, no other CPU's store pending to its
 * entry (npending 1 or 0, or no other CPU with a pending store: the others to it are cpu's own,
 * later ones, and drain_older() finds nothing), no later store to it visible (vis_sseq) and no
 * table descriptor as its old or new
 * value at a known level (no apply_visible_table(): no frame is made, no position changes);
 * none if an observer watches every visible store (pt_visible).  Each store changes its own
 * entry only, so a store is judged when its turn comes as it would have been before the run's
 * first, and made visible with the same steps as drain_stores()', store by store, with what the
 * run proves left out (drain_older(), the later visible store, apply_visible_table(), the
 * pt_visible hook).
 *
 * A run of makes (no old value a leaf) into a table with one position (a fault's set_ptes) tells
 * the observer of its new leaves in one leaf_live_run call, after the run: leaf_live depends on
 * stale facts and positions alone, which a make changes neither of.  Such a run ends before a
 * store whose old value is a leaf (the stores from there are a run of their own, whose hooks
 * come store by store, right where they would have in one run with the makes before them).
 *
 * In a table of known level hooked nowhere (no position: a THP split's new table before the
 * PMD that hooks it is visible, a new vmalloc PTE table), leaf_gone() makes no stale fact and
 * leaf_live() calls no hook, having no position to do it for: a store there changes the rmap
 * alone.  So does a store of a run of makes, whose leaf_live() is the hook after the run.  Both
 * take a loop of their own.  (Its run test is the other loop's, written out: made a helper of
 * both, it left LTO inlining the rmap and chunk helpers no more, +4 % per exec.)
 */
static inline __attribute__((always_inline)) uint32_t drain_run(struct pt_machine *m, uint32_t f,
							     const struct pend_store *ps, uint32_t max,
							     unsigned cpu, int *others, unsigned by_cpu, bool known,
							     int level)
{
	struct pt_table *t = m->frames.v[f].tbl;
	bool one_call;
	struct run_pos one_pos;
	const struct run_pos *rp = NULL;	/* t's one position, if it has one (see leaf_gone()) */
	uint32_t n;
	uint64_t run_tail = NO_TAIL;
	/* m->seq, moved here store by store: in the run only leaf_gone() reads it, from here, and
	 * it is stored back before leaf_live() (whose hooks see m) and at the end */
	uint64_t seq = m->seq;

	if (m->obs && m->obs->pt_visible)
		return 0;
	/* a table descriptor as ps[0]'s old or new value (a set_pmd()'s) ends either loop below
	 * before its first store, with nothing done but others_pending()'s answer found (found
	 * when asked, the same): none starts here, without the loops' set-up */
	if (known && (pt_desc_is_table(t->visible[ps->idx], level) || pt_desc_is_table(ps->val, level)))
		return 0;
	if (known && t->first_pos != NO_POS && m->pos.v[t->first_pos].next == NO_POS) {
		one_pos = run_pos_of(m, &m->pos.v[t->first_pos]);
		rp = &one_pos;
	}
	/* (ps[0] is entry ps->idx of t: if it starts a run, it starts one of makes unless that
	 * entry's visible value is a leaf) */
	one_call = rp && m->obs && m->obs->leaf_live_run && !pt_desc_is_leaf(t->visible[ps->idx], level);
	if (known && (t->first_pos == NO_POS || one_call)) {
		/* ps[0]'s entry holding no leaf at level 3 (as one_call's never does): a run of makes */
		if (level == 3 && !pt_desc_is_leaf(t->visible[ps->idx], 3)) {
			n = drain_makes(m, t, f, ps, max, cpu, others);
		} else {
			for (n = 0; n < max; n++) {
				const struct pend_store *s = &ps[n];
				unsigned idx = s->idx;
				uint64_t old = t->visible[idx], new = s->val;
				if (s->frame != f || idx != ps->idx + n ||
				    (t->npending[idx] > 1 && others_pending(m, cpu, others)) ||
				    t->vis_sseq[idx] > s->sseq || pt_desc_is_table(old, level) ||
				    pt_desc_is_table(new, level) || (one_call && pt_desc_is_leaf(old, level)))
					break;
				if (t->npending[idx])
					t->npending[idx]--;
				if (old != new) {
					set_visible(t, idx, new, level == 3);
					seq++;
					if (pt_desc_is_leaf(old, level))
						rmap_update(m, old, level, f, idx, false);	/* leaf_gone() */
					if (pt_desc_is_leaf(new, level))
						rmap_update(m, new, level, f, idx, true);	/* leaf_live(), its hook after */
				}
				t->vis_sseq[idx] = s->sseq;
			}
			m->seq = seq;
		}
		if (one_call && n)
			m->obs->leaf_live_run(m->obs_ctx, m, rp->va + ps->idx * pt_level_size(level), n, level,
					      rp->asid, rp->global, &t->visible[ps->idx], by_cpu);
		return n;
	}
	/* a run from a clear of a leaf at level 3 of a process: its clears first (see drain_zaps()),
	 * then what else the run holds (the next store's fact finds out for itself if it extends the
	 * tail: fact_append() of next false gives what true gives) */
	n = 0;
	if (known && level == 3 && rp && pt_desc_is_leaf(t->visible[ps->idx], 3) && !pt_desc_is_leaf(ps->val, 3)) {
		n = drain_zaps(m, t, f, ps, max, cpu, others, by_cpu, rp);
		seq = m->seq;
	}
	for (; n < max; n++) {
		const struct pend_store *s = &ps[n];
		uint64_t prev_tail = run_tail;	/* (see leaf_gone()) */
		run_tail = NO_TAIL;
		unsigned idx = s->idx;
		uint64_t old = t->visible[idx], new = s->val;
		if (s->frame != f || idx != ps->idx + n || (t->npending[idx] > 1 && others_pending(m, cpu, others)) ||
		    t->vis_sseq[idx] > s->sseq || pt_desc_is_table(old, level) || pt_desc_is_table(new, level))
			break;
		if (t->npending[idx])
			t->npending[idx]--;
		if (old != new) {
			set_visible(t, idx, new, known && level == 3);
			seq++;
			/* (the store makes the stamps of stale facts, which leaf_gone() alone makes,
			 * from s: m->applying, which stamp() reads, is not needed) */
			if (known && pt_desc_is_leaf(old, level))
				leaf_gone(m, t, f, idx, old, new, level, by_cpu, s, seq, rp, prev_tail, &run_tail);
			if (known && pt_desc_is_leaf(new, level)) {
				m->seq = seq;
				leaf_live(m, t, f, idx, new, level, by_cpu);
			}
		}
		t->vis_sseq[idx] = s->sseq;
	}
	m->seq = seq;
	return n;
}

/* Make cpu's pending stores with sseq <= upto visible, in order. */
static void drain_stores(struct pt_machine *m, unsigned cpu, uint64_t upto, unsigned by_cpu)
{
	struct cpu *c = &m->cpu[cpu];
	/* a store buffer is in store order (each store comes at its end with the next sseq, and
	 * stores leave it without a change in the others' order): those with sseq <= upto are
	 * its first lim, and the others stay */
	uint32_t lim = c->stores.n;
	while (lim && c->stores.v[lim - 1].sseq > upto)
		lim--;
	int others = -1;	/* (see others_pending()) */
	/* nothing below adds to this CPU's stores (drain_older() takes other CPUs' only), so ps
	 * stays put while it is applied */
	for (uint32_t i = 0; i < lim; i++) {
		const struct pend_store *ps = &c->stores.v[i];
		const struct pt_frame *fr = &m->frames.v[ps->frame];
		if (fr->state != PT_FS_TABLE)
			continue;	/* freed since the store: nothing to see */
		/* the level a constant in each copy, where leaves are: its leaf and size tests fold */
		uint32_t n, max = lim - i;
		if (!fr->level_known)
			n = drain_run(m, ps->frame, ps, max, cpu, &others, by_cpu, false, 3);
		else if (fr->level == 3)
			n = drain_run(m, ps->frame, ps, max, cpu, &others, by_cpu, true, 3);
		else if (fr->level == 2)
			n = drain_run(m, ps->frame, ps, max, cpu, &others, by_cpu, true, 2);
		else
			n = drain_run(m, ps->frame, ps, max, cpu, &others, by_cpu, true, fr->level);
		if (n) {
			i += n - 1;
			continue;
		}
		/* a table stays one, with the same entries, while stores are applied: t outlives
		 * whatever apply_visible() and drain_older() add to m->frames */
		struct pt_table *t = fr->tbl;
		unsigned idx = ps->idx;
		if (t->npending[idx] && --t->npending[idx]) {
			/* coherence: stores to this entry that come before this one in coherence order
			 * (other CPUs' older stores, which this CPU's program observed) reach the walker
			 * first */
			drain_older(m, cpu, ps->frame, idx, ps->sseq);
			others = -1;	/* (it may have taken their last) */
		}
		/* a later store to the entry already visible wins over this one */
		if (t->vis_sseq[idx] > ps->sseq)
			continue;
		m->applying = ps;
		apply_visible(m, ps->frame, idx, ps->val, by_cpu);
		t->vis_sseq[idx] = ps->sseq;
		m->applying = NULL;
	}
	if (lim < c->stores.n)
		memmove(c->stores.v, c->stores.v + lim, (c->stores.n - lim) * sizeof(*c->stores.v));
	c->stores.n -= lim;
}

static void dsb(struct pt_machine *m, unsigned cpu, unsigned dom)
{
	struct cpu *c = &m->cpu[cpu];
	/* B2.3: a DSB completes the CPU's prior stores, so the walker sees them; it is cumulative:
	 * stores of other CPUs this one has observed (through a lock they released and it took)
	 * complete too (drain_stores() of an empty store buffer does nothing: not called, as about
	 * half the DSBs find the buffer empty, and its set-up is a big function's) */
	for (uint32_t i = 0; i < c->ndrain; i++) {
		if (m->cpu[c->drain[i].cpu].stores.n)
			drain_stores(m, c->drain[i].cpu, c->drain[i].upto, c->drain[i].cpu);
	}
	c->ndrain = 0;
	if (c->stores.n)
		drain_stores(m, cpu, UINT64_MAX, cpu);
	for (uint32_t i = 0; i < c->zeroes.n; i++) {
		struct pt_frame *fr = &m->frames.v[c->zeroes.v[i]];
		if (fr->zero == PT_ZS_PENDING && fr->zero_cpu == cpu)
			fr->zero = PT_ZS_ORDERED;
	}
	c->zeroes.n = 0;
	/* D8.17.5: a TLBI is complete once the issuing PE's following DSB completes;
	 * broadcast forms need the DSB's domain to include the Inner Shareable domain */
	if (dom == PT_BAR_ISHST || dom == PT_BAR_ISHLD)
		return;
	uint32_t keep = 0;
	for (uint32_t i = 0; i < c->tlbis.n; i++) {
		struct pend_tlbi t = c->tlbis.v[i];
		if (dom == PT_BAR_NSH && !tlbi_is_local(t.op)) {
			c->tlbis.v[keep++] = t;
			continue;
		}
		tlbi_complete(m, cpu, &t);
	}
	c->tlbis.n = keep;
}

static void dmb(struct pt_machine *m, unsigned cpu)
{
	struct cpu *c = &m->cpu[cpu];
	/* a DMB orders the zeroing stores before the store that publishes the table (smp_wmb in pmd_install) */
	for (uint32_t i = 0; i < c->zeroes.n; i++) {
		struct pt_frame *fr = &m->frames.v[c->zeroes.v[i]];
		if (fr->zero == PT_ZS_PENDING && fr->zero_cpu == cpu)
			fr->zero = PT_ZS_ORDERED;
	}
	c->zeroes.n = 0;
}

static void tlbi_issue(struct pt_machine *m, const struct pt_event *ev)
{
	struct pend_tlbi t = { .op = ev->op, .ttl = ev->level, .asid = ev->asid, .seq = ++m->seq };
	unsigned op = tlbi_base(ev->op);
	switch (op) {
	case PT_TLBI_ASIDE1IS:
	case PT_TLBI_VMALLE1IS:
		t.va = 0;
		t.size = 0;
		t.ttl = 0;
		break;
	case PT_TLBI_RVAE1IS:
	case PT_TLBI_RVALE1IS:
	case PT_TLBI_RVAAE1IS:
	case PT_TLBI_RVAALE1IS:
		/* range = (NUM+1) * 2^(5*SCALE+1) pages from BADDR (D8.17.6); with TCR_EL1.DS=1 BaseADDR
		 * holds VA[52:16], in 64 KiB units (the reader refuses a VA it cannot encode) */
		t.va = ev->va & ~((1ull << (m->lpa2 ? 16 : PT_PAGE_SHIFT)) - 1);
		t.size = ((uint64_t)ev->num + 1) << (5 * ev->scale + 1) << PT_PAGE_SHIFT;
		break;
	default:
		t.va = ev->va & ~((1ull << PT_PAGE_SHIFT) - 1);
		t.size = 1ull << PT_PAGE_SHIFT;
		break;
	}
	VEC_PUSH(m->cpu[ev->cpu].tlbis, t);
}

/* ---- roots ---- */

static void set_root(struct pt_machine *m, uint32_t *slot, uint32_t f, bool global, uint16_t asid, unsigned cpu)
{
	struct pt_frame *rf = make_table(m, f, m->start_level);
	rf->latest_space = global ? 2 : 1;
	rf->latest_asid = asid;
	rf->latest_va = global ? m->kernel_base : 0;
	if (*slot != PT_NO_FRAME && *slot != f && m->frames.v[*slot].state == PT_FS_TABLE) {
		/* the old root's cached walks stay until the ASID is invalidated */
		struct pt_table *t = m->frames.v[*slot].tbl;
		for (uint32_t p = t->first_pos; p != NO_POS; p = m->pos.v[p].next)
			if (same_tag(&m->pos.v[p], global, asid))
				make_stale(m, p, cpu);
	}
	*slot = f;
	add_pos(m, f, global ? m->kernel_base : 0, global, asid, true, cpu);
}

/* mm_exit: the address space is gone; its ASID is not reused before a rollover flush (asids.c). */
static void drop_asid(struct pt_machine *m, uint16_t asid)
{
	for (uint32_t s = 0; s < m->stale_pos.n;) {
		uint32_t p = m->stale_pos.v[s];
		if (!m->pos.v[p].global && m->pos.v[p].asid == asid) {
			pos_unlink(m, p);
			continue;
		}
		s++;
	}
	for (uint32_t i = 0; i < m->facts.n;) {
		if (!m->facts.v[i].global && m->facts.v[i].asid == asid) {
			fact_del(m, i);
			continue;
		}
		i++;
	}
	for (uint32_t p = 0; p < m->pos.n; p++)
		if (m->pos.v[p].in_use && !m->pos.v[p].global && m->pos.v[p].asid == asid)
			pos_unlink(m, p);
	if (asid_root(m, asid) != PT_NO_FRAME)
		*asid_root_slot(m, asid) = PT_NO_FRAME;
}

/* ---- frames allocation ---- */

static void frame_release(struct pt_machine *m, uint32_t f);

/*
 * for_each_page_frame(): the frames of the n pages from pfn on, created where there are none,
 * in order (as n calls of frame_get() would create them), with a chunk lookup per chunk
 * rather than per page: fn(m, f, ctx) for each.  The frame cache is left as it was (it
 * only ever saves a lookup; frame_cached() checks what it holds), so a 2M or 1G folio costs
 * no cache write per page.
 */
/* The frames of pages pfn, pfn + 1, ... that one chunk holds: slots [*lo, return) of chunk c
 * (the first page's), for n pages from pfn. */
static inline unsigned chunk_span(uint64_t pfn, unsigned n, unsigned *lo)
{
	*lo = (unsigned)(pfn & (FCHUNK_FRAMES - 1));
	return n < FCHUNK_FRAMES - *lo ? *lo + n : FCHUNK_FRAMES;
}

/* four chunk slots in a 128-bit vector (SSE2, the x86-64 baseline) */
typedef uint32_t u32x4 __attribute__((vector_size(16)));

/*
 * How many of the PT_CONT_PTES slots of chunk c from k on hold no frame (PT_NO_FRAME), if k
 * starts a group of them that lies below hi and none of the group holds a frame (each holds
 * PT_NO_FRAME or a lazy page, both with LAZY_PAGE set); -1 if not.  A folio of 64 KiB or more
 * covers whole groups, which the loops over its pages take at once.  The slots are ANDed and
 * counted four at a time, in vectors (gcc made 16 scalar steps of the loop per slot), the lanes
 * summed or ANDed at the end: the same AND of all and the same count.
 */
static inline int group_unframed(const struct frame_chunk *c, unsigned k, unsigned hi)
{
	if (k % PT_CONT_PTES || hi - k < PT_CONT_PTES)
		return -1;
	_Static_assert(PT_CONT_PTES % 4 == 0, "a group is whole vectors");
	const uint32_t *s = &c->idx[k];
	const u32x4 no_frame = { PT_NO_FRAME, PT_NO_FRAME, PT_NO_FRAME, PT_NO_FRAME };
	u32x4 all = ~(u32x4){ 0, 0, 0, 0 }, none = { 0, 0, 0, 0 };
	for (unsigned j = 0; j < PT_CONT_PTES; j += 4) {
		u32x4 v;
		memcpy(&v, s + j, sizeof(v));
		all &= v;
		none -= (u32x4)(v == no_frame);	/* a true compare is all ones: minus -1 */
	}
	uint32_t a = all[0] & all[1] & all[2] & all[3];
	return a & LAZY_PAGE ? (int)(none[0] + none[1] + none[2] + none[3]) : -1;
}

/* Whether k starts a group of PT_CONT_PTES slots of chunk c below hi that all hold the same: lazy
 * pages of one folio, none or all freed, or pages without a frame (a frame is in one slot only). */
static inline bool group_same(const struct frame_chunk *c, unsigned k, unsigned hi)
{
	if (k % PT_CONT_PTES || hi - k < PT_CONT_PTES)
		return false;
	const uint32_t *s = &c->idx[k];
	uint32_t diff = 0;
	for (unsigned j = 0; j < PT_CONT_PTES; j++)
		diff |= s[j] ^ s[0];
	return !diff;
}

static void for_each_page_frame(struct pt_machine *m, uint64_t pfn, unsigned n,
				void (*fn)(struct pt_machine *m, uint32_t f, const void *ctx),
				const void *ctx)
{
	for (unsigned i = 0; i < n;) {
		struct frame_chunk *c = chunk_get(m, pfn + i);
		unsigned lo, hi = chunk_span(pfn + i, n - i, &lo);
		for (unsigned k = lo; k < hi; k++, i++)
			fn(m, chunk_slot_frame(m, c, k, pfn + i), ctx);
	}
}

/* page_alloc() of a data page */
static void data_page_alloc(struct pt_machine *m, uint32_t f, const void *ctx)
{
	const struct pt_event *ev = ctx;
	struct pt_frame *fr = &m->frames.v[f];
	if (fr->state == PT_FS_TABLE && fr->tbl) {
		/*
		 * allocated while still a table: forget it as a free would, its walk-cache
		 * entries with it (they name its table), the checker judges the free that is
		 * missing
		 */
		frame_release(m, f);
		fr = &m->frames.v[f];
	}
	fr->order = ev->order;
	fr->node = ev->node;
	fr->page_id = ++m->next_page_id;
	fr->alloc_event = m->event_index;
	fr->state = PT_FS_DATA;
}

/* page_alloc() of a page-table page */
static void table_page_alloc(struct pt_machine *m, uint32_t f, const void *ctx)
{
	const struct pt_event *ev = ctx;
	data_page_alloc(m, f, ctx);	/* PT_FS_DATA: so that make_table installs a fresh table */
	m->frame_cache[m->frames.v[f].pfn % FCACHE_SIZE] = f;	/* its stores come next */
	make_table(m, f, LEVEL_UNKNOWN);
	struct pt_frame *fr = &m->frames.v[f];
	fr->level = (int8_t)ev->level;
	fr->level_known = 1;
	fr->latest_space = 0;
	if (ev->flags & PT_ALLOC_ZERO) {
		fr->zero = PT_ZS_PENDING;
		fr->zero_cpu = ev->cpu;
		VEC_PUSH(m->cpu[ev->cpu].zeroes, f);
	} else {
		fr->zero = PT_ZS_GARBAGE;
	}
}

/*
 * for_each_page_frame() with data_page_alloc(), where a page with no frame (most of a fresh
 * folio's) or a lazy one becomes a lazy page of this folio: the record gives it what
 * data_page_alloc() would leave in its frame (a lazy page's frame holds nothing else, and the
 * i-th page's id is the i-th of the folio's), without a frame per page.
 */
static void data_pages_alloc(struct pt_machine *m, const struct pt_event *ev)
{
	uint64_t pfn = ev->pa >> PT_PAGE_SHIFT;
	unsigned n = 1u << ev->order;
	if (m->folios.n == LAZY_FOLIOS)
		abort();
	struct lazy_folio lf = { .pfn = pfn, .page_id = m->next_page_id + 1, .alloc_event = m->event_index,
				 .order = ev->order, .node = ev->node };
	VEC_PUSH(m->folios, lf);
	const uint32_t tag = LAZY_PAGE | (m->folios.n - 1);
	for (unsigned i = 0; i < n;) {
		struct frame_chunk *c = chunk_get(m, pfn + i);
		unsigned lo, hi = chunk_span(pfn + i, n - i, &lo);
		/* room for the frames of the lazy pages this part may add (data_page_alloc() adds
		 * no frame, nor looks one up) */
		VEC_RESERVE(m->frames, m->nlazy + (hi - lo));
		for (unsigned k = lo; k < hi; k++, i++) {
			/* a group without a frame: what the loop does to each of its slots, at once */
			int none = group_unframed(c, k, hi);
			if (none >= 0) {
				uint32_t *s = &c->idx[k];
				m->nlazy += (unsigned)none;
				for (unsigned j = 0; j < PT_CONT_PTES; j++)
					s[j] = tag;
				/* k is a group's first slot: the group lies in one word */
				c->idx_used |= (uint8_t)(1u << (k / 64));
				k += PT_CONT_PTES - 1;
				i += PT_CONT_PTES - 1;
				continue;
			}
			uint32_t f = c->idx[k];
			if (f == PT_NO_FRAME)
				m->nlazy++;
			else if (!(f & LAZY_PAGE)) {
				m->next_page_id = lf.page_id + i - 1;
				data_page_alloc(m, f, ev);
				continue;
			}
			c->idx[k] = tag;
			c->idx_used |= (uint8_t)(1u << (k / 64));
		}
	}
	m->next_page_id = lf.page_id + n - 1;
}

static void page_alloc(struct pt_machine *m, const struct pt_event *ev)
{
	if (ev->op == PT_FRAME_TABLE)
		for_each_page_frame(m, ev->pa >> PT_PAGE_SHIFT, 1u << ev->order, table_page_alloc, ev);
	else
		data_pages_alloc(m, ev);
}

static void frame_release(struct pt_machine *m, uint32_t f)
{
	struct pt_frame *fr = &m->frames.v[f];
	if (fr->state == PT_FS_TABLE && fr->tbl) {
		struct pt_table *t = fr->tbl;
		while (t->first_pos != NO_POS)
			pos_unlink(m, t->first_pos);
		if (fr->level_known)
			for (unsigned i = next_stored(t, 0); i < PT_PTRS; i = next_stored(t, i + 1))
				if (pt_desc_is_leaf(t->visible[i], fr->level))
					rmap_update(m, t->visible[i], fr->level, f, i, false);
		VEC_PUSH(m->table_pool, t);
		fr = &m->frames.v[f];
		fr->tbl = NULL;
	}
	fr->state = PT_FS_FREE;
	fr->level_known = 0;
	fr->latest_space = 0;
}

/* The free of the PT_CONT_PTES lazy pages of chunk c from slot k on, if group_unframed() finds
 * them all lazy (none without a frame): true if so.  (A call of its own: free_pages() is inlined
 * in the callers of the runs of events, whose loops kept their registers better without it.) */
static __attribute__((noinline)) bool lazy_group_free(struct frame_chunk *c, unsigned k, unsigned hi)
{
	if (group_unframed(c, k, hi))
		return false;
	uint32_t *s = &c->idx[k];
	for (unsigned j = 0; j < PT_CONT_PTES; j++)
		s[j] |= LAZY_FREED;
	return true;
}

/*
 * The n = 2^order pages from ev->pa on, freed one by one in order (a checker judges each as it
 * goes, the tables among them released before the next page is judged): a frame made where
 * there is none, as for_each_page_frame() would, but with a chunk lookup per 2 MiB and the
 * release of a data page (all of a folio's) in the loop, not a call per page.  With
 * tables_only, the frame_free hook is called for the tables among them only (the observer's
 * frame_free_run() vouched for the others).  True if the first page was a table's before it.
 */
static inline __attribute__((always_inline)) bool free_pages(struct pt_machine *m, const struct pt_event *ev,
							     bool tables_only)
{
	uint64_t pfn = ev->pa >> PT_PAGE_SHIFT;
	unsigned n = 1u << ev->order;
	void (*hook)(void *, struct pt_machine *, uint32_t) = m->obs ? m->obs->frame_free : NULL;
	bool first_table = false;
	for (unsigned i = 0; i < n;) {
		struct frame_chunk *c = chunk_get(m, pfn + i);
		unsigned lo, hi = chunk_span(pfn + i, n - i, &lo);
		for (unsigned k = lo; k < hi; k++, i++) {
			/* a lazy page is no table: where no hook would see its frame, its free is
			 * what frame_release() leaves in one without a table, kept as the record's
			 * values with the state free (a group of them at once: lazy_group_free()) */
			if ((!hook || tables_only) && !(k % PT_CONT_PTES) && lazy_group_free(c, k, hi)) {
				k += PT_CONT_PTES - 1;
				i += PT_CONT_PTES - 1;
				continue;
			}
			if (c->idx[k] != PT_NO_FRAME && (c->idx[k] & LAZY_PAGE) && (!hook || tables_only)) {
				c->idx[k] |= LAZY_FREED;
				continue;
			}
			uint32_t f = chunk_slot_frame(m, c, k, pfn + i);
			/* the hooks only read: the frame stays where it is */
			struct pt_frame *fr = &m->frames.v[f];
			if (i == 0)
				first_table = fr->state == PT_FS_TABLE;
			if (hook && (!tables_only || fr->state == PT_FS_TABLE))
				hook(m->obs_ctx, m, f);
			if (fr->state == PT_FS_TABLE && fr->tbl) {
				frame_release(m, f);
				continue;
			}
			fr->state = PT_FS_FREE;		/* frame_release() of a frame without a table */
			fr->level_known = 0;
			fr->latest_space = 0;
		}
	}
	return first_table;
}

/* The observer's frame_free_run() for the n pages from pa on, about to be freed: true if it
 * vouches for those that are not tables.  (None for a range that wraps past the top.) */
static bool free_run_vouched(struct pt_machine *m, uint64_t pa, uint64_t n)
{
	const struct pt_observer *obs = m->obs;
	uint64_t lo = pa >> PT_PAGE_SHIFT << PT_PAGE_SHIFT, hi = lo + (n << PT_PAGE_SHIFT);
	return obs && obs->frame_free_run && lo < hi && obs->frame_free_run(m->obs_ctx, m, lo, hi);
}

/* (true if the first page was a table's before it) */
static bool page_free(struct pt_machine *m, const struct pt_event *ev)
{
	/* a folio of 16 pages or more is a run of its own, judged at once (a smaller one is
	 * mostly part of a run of page_free events, pt_machine_free_run()) */
	return free_pages(m, ev, ev->order >= 4 && free_run_vouched(m, ev->pa, 1u << ev->order));
}

/* ---- stores ---- */

/* Entry idx of t goes from old to val in t's latest entries: its CONT group's count follows the
 * CONT bit.  True if the count moved (then cont_group_bit() of the group is due). */
static inline bool cont_count_move(struct pt_table *t, unsigned idx, uint64_t old, uint64_t val)
{
	if (!((old ^ val) & PT_DESC_CONT))
		return false;
	if (val & PT_DESC_CONT)
		t->ncont[idx / PT_CONT_PTES]++;
	else
		t->ncont[idx / PT_CONT_PTES]--;
	return true;
}

/* Group g's bit in t->cont_groups: set while its CONT count is not zero. */
static inline void cont_group_bit(struct pt_table *t, unsigned g)
{
	t->cont_groups = t->ncont[g] ? t->cont_groups | 1u << g : t->cont_groups & ~(1u << g);
}

/* A store of val to entry idx of table t (frame f) goes into a store buffer, pending, as record
 * *ps, with store sequence sseq and operation (op, open). */
static inline void pend_store_put(struct pend_store *ps, struct pt_table *t, uint32_t f, unsigned idx, uint64_t val,
				  uint64_t sseq, uint32_t op, bool open)
{
	t->npending[idx]++;
	*ps = (struct pend_store){ f, idx, val, sseq, op, open };
}

/* The store of val to entry idx of table t (frame f) by CPU c, with room for it in c's store
 * buffer (pt_write() past the frame lookup, and past a table descriptor's child setup).  The
 * hooks are the observer's (the observer is set between events, never inside one): its run
 * hooks for store k of a run (in_run; pt_machine_write_run() checks obs has them), else its
 * per-store ones.  (store_run_at() is the same for a run with no hook.) */
static inline __attribute__((always_inline)) void store_entry_at(struct pt_machine *m, const struct pt_observer *obs,
								 struct pt_table *t, uint32_t f, unsigned idx,
								 uint64_t val, struct cpu *c, bool in_run, unsigned k)
{
	uint64_t old = t->latest[idx];
	if (in_run)
		obs->run_store(m->obs_ctx, m, k, old, val);
	else if (obs && obs->pt_store)
		obs->pt_store(m->obs_ctx, m, f, idx, old, val);
	t->latest[idx] = val;
	m->latest_gen++;
	t->dirty[idx / 64] |= 1ull << (idx % 64);
	if (cont_count_move(t, idx, old, val))
		cont_group_bit(t, idx / PT_CONT_PTES);
	if (in_run)
		obs->run_stored(m->obs_ctx, m, k, old, val);
	else if (obs && obs->pt_stored)
		obs->pt_stored(m->obs_ctx, m, f, idx, old, val);
	pend_store_put(&c->stores.v[c->stores.n++], t, f, idx, val, ++m->sseq, c->op.id, c->op.open);
}

static void store_entry(struct pt_machine *m, uint32_t f, unsigned idx, uint64_t val, unsigned cpu)
{
	struct cpu *c = &m->cpu[cpu];
	VEC_RESERVE(c->stores, 1);
	store_entry_at(m, m->obs, m->frames.v[f].tbl, f, idx, val, c, false, 0);
}

static void pt_write(struct pt_machine *m, const struct pt_event *ev)
{
	uint64_t pa = ev->pa;
	if (m->root_pages.count && is_root_page(m, pa >> PT_PAGE_SHIFT))
		pa = root_frame_pa(m, pa);
	uint32_t f = frame_get(m, pa, true);
	struct pt_frame *fr = make_table(m, f, LEVEL_UNKNOWN);
	unsigned idx = (unsigned)((pa >> 3) & (PT_PTRS - 1));

	if (fr->level_known && pt_desc_is_table(ev->val, fr->level)) {
		int level = fr->level;
		uint8_t space = fr->latest_space;
		uint16_t asid = fr->latest_asid;
		uint64_t va = fr->latest_va + idx * pt_level_size((unsigned)level);
		uint32_t c = frame_get(m, desc_oa(m, ev->val), true);
		struct pt_frame *cf = make_table(m, c, level + 1);
		if (space) {
			cf->latest_space = space;
			cf->latest_asid = asid;
			cf->latest_va = va;
		}
		OBS(m, table_zero_publish, f, idx, c);
	}
	store_entry(m, f, idx, ev->val, ev->cpu);
}

/*
 * The purge list of mm/vmalloc.c.  free_vmap_area_noflush() puts an unmapped area on it with
 * its TLB flush deferred: its VA stays reserved, so stale kernel entries for it harm nothing
 * until __purge_vmap_area_lazy() flushes the VA and hands it back to the allocator.  The
 * checkers are told of a purge before its areas leave the list.
 */
static void vmap_area(struct pt_machine *m, const struct pt_event *ev)
{
	uint64_t start = ev->va, end = ev->va + ev->len < ev->va ? UINT64_MAX : ev->va + ev->len;
	if (ev->op == PT_VMAP_AREA_LAZY) {
		if (end > start) {
			struct lazy_area a = { start, end };
			VEC_PUSH(m->lazy_areas, a);
		}
		return;
	}
	OBS(m, vmap_purge, ev->cpu, start, end);
	uint32_t keep = 0;
	for (uint32_t i = 0; i < m->lazy_areas.n; i++) {
		const struct lazy_area a = m->lazy_areas.v[i];
		if (a.start < start || a.end > end)
			m->lazy_areas.v[keep++] = a;
	}
	m->lazy_areas.n = keep;
}

static void pt_zero(struct pt_machine *m, const struct pt_event *ev)
{
	uint32_t f = frame_get(m, ev->pa, true);
	struct pt_frame *fr = make_table(m, f, LEVEL_UNKNOWN);
	fr->tbl->cont_groups = 0;
	memset(fr->tbl->ncont, 0, sizeof(fr->tbl->ncont));
	for (unsigned i = 0; i < PT_PTRS; i++) {
		if (fr->tbl->latest[i]) {
			OBS(m, pt_store, f, i, fr->tbl->latest[i], 0);
			fr->tbl->latest[i] = 0;
			m->latest_gen++;
			const struct pt_opctx *o = &m->cpu[ev->cpu].op;
			struct pend_store s = { f, i, 0, ++m->sseq, o->id, o->open };
			fr->tbl->npending[i]++;
			VEC_PUSH(m->cpu[ev->cpu].stores, s);
			fr = &m->frames.v[f];
		}
	}
	fr->zero = PT_ZS_PENDING;
	fr->zero_cpu = ev->cpu;
	VEC_PUSH(m->cpu[ev->cpu].zeroes, f);
}

/* ---- locks ---- */

static uint64_t lock_key(unsigned cls, uint64_t key)
{
	return hmap_mix(key) ^ ((uint64_t)cls << 56) ^ 0x5a5a;
}

/* Last release of a lock: who released it, and how far its stores went (cumulativity). */
/* Add (cpu, upto) to a set of observed stores: one entry per CPU (a later handoff from the
 * same CPU covers an earlier one); false if the set is full. */
static bool drain_add(struct drain *set, uint32_t *n, uint32_t cap, uint16_t cpu, uint64_t upto)
{
	for (uint32_t i = 0; i < *n; i++) {
		if (set[i].cpu == cpu) {
			if (upto > set[i].upto)
				set[i].upto = upto;
			return true;
		}
	}
	if (*n == cap)
		return false;
	set[*n].cpu = cpu;
	set[*n].upto = upto;
	(*n)++;
	return true;
}

/* Room for n entries in a release set's buffer (a release after handoffs from many CPUs: rare) */
static __attribute__((noinline)) void release_set_grow(struct release_set *rs, uint32_t n)
{
	while (rs->cap < n)
		rs->cap = rs->cap ? 2 * rs->cap : 4;
	rs->e = realloc(rs->e, rs->cap * sizeof(*rs->e));
	if (!rs->e)
		abort();
}

/* True if the lock memo holds lock (cls, key). */
static inline bool lock_memo_hit(const struct pt_machine *m, unsigned cls, uint64_t key)
{
	return m->lock_memo != UINT32_MAX && m->lock_memo_key == key && m->lock_memo_cls == cls;
}

/* The index in lock_states of lock (cls, key), HMAP_EMPTY if it has no record. */
static inline uint64_t lock_find(const struct pt_machine *m, unsigned cls, uint64_t key)
{
	if (lock_memo_hit(m, cls, key))
		return m->lock_memo;
	return hmap_get(&m->locks, lock_key(cls, key), HMAP_EMPTY);
}

/* A record for the lock of key k (lock_key()), which has none: free, never released; its index
 * in lock_states.  (Out of line: a lock's first use only, and inline its register saves were a
 * third of every lookup's cost.) */
static __attribute__((noinline)) uint64_t lock_state_new(struct pt_machine *m, uint64_t k)
{
	struct lock_state z = { .key = k, .cur = HMAP_EMPTY };
	if (m->lock_states.n < m->lock_bufs) {
		/* the buffer of the record this one replaces, emptied (n = 0) */
		z.rel.e = m->lock_states.v[m->lock_states.n].rel.e;
		z.rel.cap = m->lock_states.v[m->lock_states.n].rel.cap;
	}
	VEC_PUSH(m->lock_states, z);
	uint64_t i = m->lock_states.n - 1;
	if (m->lock_bufs < m->lock_states.n)
		m->lock_bufs = m->lock_states.n;
	hmap_insert(&m->locks, k, i);
	return i;
}

/* The record of lock (cls, key), made (free, never released) if there is none and create is set. */
static inline struct lock_state *lock_state(struct pt_machine *m, unsigned cls, uint64_t key, bool create)
{
	if (lock_memo_hit(m, cls, key))
		return &m->lock_states.v[m->lock_memo];	/* (the memo stays as it is) */
	/* lock_find() past its memo, the key it looks up kept for a new record */
	uint64_t k = lock_key(cls, key);
	uint64_t i = hmap_get(&m->locks, k, HMAP_EMPTY);
	if (i == HMAP_EMPTY) {
		if (!create)
			return NULL;
		i = lock_state_new(m, k);
	}
	m->lock_memo_cls = (uint8_t)cls;
	m->lock_memo_key = key;
	m->lock_memo = (uint32_t)i;
	return &m->lock_states.v[i];
}

/* (inline, once for both kinds: the call and its register saves were more than a tenth of a
 * lock event's cost, and a lock or unlock is every third or fourth event) */
static inline __attribute__((always_inline)) void do_lock(struct pt_machine *m, const struct pt_event *ev, bool lock)
{
	uint32_t tid = m->cpu[ev->cpu].tid;
	struct lock_state *ls = lock_state(m, ev->op, ev->pa, lock);
	uint64_t cur = ls ? ls->cur : HMAP_EMPTY;
	bool write = ev->op != PT_LOCK_MMAP || (ev->flags & PT_LOCK_WRITE);
	m->locks_recorded = true;
	m->locks_gen++;
	if (lock) {
		bool contended = false;
		if (cur == HMAP_EMPTY) {
			cur = (uint64_t)tid << 32 | (write ? 1u << 16 : 0) | (write ? 0 : 1);
		} else {
			uint32_t readers = cur & 0xffff;
			bool held_w = cur & (1u << 16);
			if (held_w || write)
				contended = true;
			else
				cur = (cur & ~0xffffull) | (readers + 1);
		}
		OBS(m, lock, ev, contended);
		if (!contended) {
			ls->cur = cur;
			/* acquire after another CPU's release: its earlier stores, and those it had
			 * observed itself, are observed by this CPU, so this CPU's DSB completes them
			 * too (DSB cumulativity, Arm ARM B2.3) */
			struct cpu *c = &m->cpu[ev->cpu];
			const struct release_set *rs = &ls->rel;
			if (rs->n && rs->own.cpu != ev->cpu)
				drain_add(c->drain, &c->ndrain, PT_MAX_CPUS, rs->own.cpu, rs->own.upto);
			for (uint32_t i = 0; i + 1 < rs->n; i++)
				if (rs->e[i].cpu != ev->cpu)
					drain_add(c->drain, &c->ndrain, PT_MAX_CPUS, rs->e[i].cpu, rs->e[i].upto);
		}
	} else {
		if (cur == HMAP_EMPTY)
			return;
		uint32_t readers = cur & 0xffff;
		if (!(cur & (1u << 16)) && readers > 1)
			ls->cur = (cur & ~0xffffull) | (readers - 1);
		else
			ls->cur = HMAP_EMPTY;
		/* what this CPU stored and what it observed from others before the release: the
		 * entries drain_add() of each would leave, in that order, without its search, as
		 * c->drain holds one entry per CPU and none of this one (an acquire adds others' only);
		 * the first is kept in the record, most sets having no other (one CPU, or a DSB since) */
		const struct cpu *c = &m->cpu[ev->cpu];
		struct release_set *rs = &ls->rel;
		rs->own = (struct drain){ .cpu = (uint16_t)ev->cpu, .upto = m->sseq };
		if (c->ndrain) {
			if (c->ndrain > rs->cap)
				release_set_grow(rs, c->ndrain);
			memcpy(rs->e, c->drain, c->ndrain * sizeof(*rs->e));
		}
		rs->n = 1 + c->ndrain;
		OBS(m, lock, ev, false);
	}
}

/* ---- the event loop ---- */

/* initial sizes (log2) of the indexes; pt_machine_reset() returns them to these */
#define LOG2_CHUNKS 6
#define LOG2_FACTS 8
#define LOG2_RMAP 4		/* level 1 only */
#define LOG2_LOCKS 6
#define LOG2_PARKED 4
#define LOG2_ROOTS 2

bool pt_machine_supports(const struct pt_header *h)
{
	return h->granule == 4096 && (h->va_bits == 48 || (h->va_bits == 52 && h->lpa2)) && h->lpa2 <= 1 &&
	       h->cpus != 0 && h->cpus <= PT_MAX_CPUS;
}

/* The translation regime of header h: the 4K granule resolves 9 VA bits per level below the
 * 12 of the page offset, so 48 bits take levels 0..3 and 52 bits add level -1 (D8.2.6). */
static void set_regime(struct pt_machine *m, const struct pt_header *h)
{
	unsigned levels = (h->va_bits - PT_PAGE_SHIFT + 8) / 9;	/* ceil((va_bits - 12) / 9) */
	m->va_bits = h->va_bits;
	m->start_level = 4 - (int)levels;
	m->lpa2 = h->lpa2;
	m->kernel_base = 0 - (1ull << h->va_bits);
}

static void set_cpus(struct pt_machine *m, unsigned ncpus)
{
	m->ncpus = ncpus;
	m->allmask = ncpus == 64 ? UINT64_MAX : (1ull << ncpus) - 1;
	for (unsigned i = 0; i < m->ncpus; i++)
		m->cpu[i].tid = i;
}

struct pt_machine *pt_machine_new(const struct pt_header *h)
{
	if (!pt_machine_supports(h))
		return NULL;
	struct pt_machine *m = calloc(1, sizeof(*m));
	if (!m)
		abort();
	set_cpus(m, h->cpus);
	set_regime(m, h);
	hmap_init(&m->chunk_by_key, LOG2_CHUNKS);
	m->last_chunk_key = NO_CHUNK_KEY;
	facts_half_empty(m, 0);
	facts_half_empty(m, 1);
	hmap_init(&m->facts_by_va, LOG2_FACTS);
	hmap_init(&m->facts_by_oa, LOG2_FACTS);
	hmap_init(&m->rmap, LOG2_RMAP);
	m->rmap_free = NO_RMAP;
	hmap_init(&m->locks, LOG2_LOCKS);
	m->lock_memo = UINT32_MAX;
	hmap_init(&m->parked, LOG2_PARKED);
	hmap_init(&m->root_pages, LOG2_ROOTS);
	m->kernel_root = PT_NO_FRAME;
	memset(m->frame_cache, 0xff, sizeof(m->frame_cache));	/* PT_NO_FRAME */
	return m;
}

int pt_machine_reset(struct pt_machine *m, const struct pt_header *h)
{
	if (!pt_machine_supports(h))
		return -1;
	bool lpa2 = m->lpa2;	/* the descriptor format the facts were indexed in */
	/* only CPUs below ncpus ever ran an event (pt_machine_event() asserts it) */
	for (unsigned i = 0; i < m->ncpus; i++) {
		struct cpu *c = &m->cpu[i];
		c->stores.n = c->tlbis.n = c->zeroes.n = 0;
		c->asid = 0;
		c->tid = 0;
		memset(&c->op, 0, sizeof(c->op));
		c->irq_saved.n = 0;
		c->irq_depth = 0;
		/* entries past ndrain were never written: zero, as calloc() left them */
		memset(c->drain, 0, c->ndrain * sizeof(c->drain[0]));
		c->ndrain = 0;
	}
	set_cpus(m, h->cpus);
	set_regime(m, h);
	/* every table goes back to the pool (table_new() clears one when it is used again): the
	 * list of them all, rather than a walk over every frame of the last exec */
	m->table_pool.n = 0;
	for (uint32_t i = 0; i < m->tables.n; i++)
		VEC_PUSH(m->table_pool, m->tables.v[i]);
	m->frames.n = 0;
	m->folios.n = m->nlazy = 0;
	for (uint32_t i = 0; i < m->chunks.n; i++)
		VEC_PUSH(m->chunk_pool, m->chunks.v[i]);
	m->chunks.n = 0;
	hmap_reset(&m->chunk_by_key, LOG2_CHUNKS);
	m->last_chunk_key = NO_CHUNK_KEY;
	m->pos.n = m->pos_free.n = m->stale_pos.n = 0;
	m->pos_gen++;
	/* a region counts only facts there are: zeroing those of the facts left clears them all; and
	 * their keys' slots are all the fact indexes hold, so these are emptied at the capacity they
	 * grew to (the order of a key's values does not depend on it: hmap_grow()), without a memset
	 * of every slot, and without growing again next session */
	assert(m->facts_by_va.count == m->facts_tail && m->facts_by_oa.count == m->facts_tail);
	for (uint32_t i = 0; i < m->facts.n; i++) {
		const struct pt_fact *f = &m->facts.v[i];
		m->nfacts_in[fact_region(f->va)] = 0;
		if (i >= m->facts_tail)
			continue;
		hmap_clear_run(&m->facts_by_va, va_key(f->va, f->level));
		hmap_clear_run(&m->facts_by_oa, va_key(pt_desc_oa_fmt(f->desc, lpa2), f->level));
	}
	assert(!m->facts_by_va.count && !m->facts_by_oa.count);
	m->facts.n = m->facts_tail = 0;
	m->facts_gen++;
	facts_half_empty(m, 0);
	facts_half_empty(m, 1);
	m->nfacts_half[0] = m->nfacts_half[1] = 0;
	memset(m->nfacts_at, 0, sizeof(m->nfacts_at));
	memset(m->nrmap_at, 0, sizeof(m->nrmap_at));
	hmap_reset(&m->rmap, LOG2_RMAP);
	/* the chunks clear their slots when they are used again (chunk_get()) */
	m->rmap_nodes.n = 0;
	m->rmap_free = NO_RMAP;
	for (unsigned w = 0; w < 65536 / ASID_CHUNK / 64; w++) {
		for (uint64_t b = m->asid_touched[w]; b; b &= b - 1) {
			unsigned i = w * 64 + (unsigned)__builtin_ctzll(b);
			memset(m->asid_root[i], 0xff, ASID_CHUNK * sizeof(*m->asid_root[i]));
		}
		m->asid_touched[w] = 0;
	}
	m->kernel_root = PT_NO_FRAME;
	hmap_reset(&m->locks, LOG2_LOCKS);
	m->lock_memo = UINT32_MAX;
	m->lock_states.n = 0;	/* their release buffers stay for the next records (lock_bufs) */
	hmap_reset(&m->parked, LOG2_PARKED);
	hmap_reset(&m->root_pages, LOG2_ROOTS);
	m->parked_ops.n = 0;
	m->last_cpu = 0;
	memset(m->frame_cache, 0xff, sizeof(m->frame_cache));
	m->rules.n = 0;
	m->locks_recorded = false;
	m->locks_gen++;
	m->latest_gen++;
	m->lazy_areas.n = 0;
	m->seq = m->sseq = 0;
	m->applying = NULL;
	m->event_index = 0;
	m->cur = NULL;
	m->next_op_id = 0;
	m->next_page_id = 0;
	m->walk_gen = 0;
	m->walk_memo.valid = false;
	/* the observer stays: the checkers attached to m are reset with it */
	return 0;
}

void pt_machine_free(struct pt_machine *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->tables.n; i++)
		free(m->tables.v[i]);
	free(m->tables.v);
	for (unsigned i = 0; i < PT_MAX_CPUS; i++) {
		free(m->cpu[i].stores.v);
		free(m->cpu[i].tlbis.v);
		free(m->cpu[i].zeroes.v);
		free(m->cpu[i].irq_saved.v);
	}
	free(m->frames.v);
	free(m->folios.v);
	free(m->table_pool.v);
	free(m->pos.v);
	free(m->pos_free.v);
	free(m->stale_pos.v);
	free(m->facts.v);
	free(m->rules.v);
	free(m->lazy_areas.v);
	for (unsigned i = 0; i < 65536 / ASID_CHUNK; i++)
		free(m->asid_root[i]);
	for (uint32_t i = 0; i < m->chunks.n; i++)
		free(m->chunks.v[i]);
	for (uint32_t i = 0; i < m->chunk_pool.n; i++)
		free(m->chunk_pool.v[i]);
	free(m->chunks.v);
	free(m->chunk_pool.v);
	hmap_destroy(&m->chunk_by_key);
	hmap_destroy(&m->facts_by_va);
	hmap_destroy(&m->facts_by_oa);
	hmap_destroy(&m->rmap);
	free(m->rmap_nodes.v);
	hmap_destroy(&m->locks);
	for (uint32_t i = 0; i < m->lock_bufs; i++)
		free(m->lock_states.v[i].rel.e);
	free(m->lock_states.v);
	hmap_destroy(&m->parked);
	hmap_destroy(&m->root_pages);
	free(m->parked_ops.v);
	free(m);
}

void pt_machine_set_observer(struct pt_machine *m, const struct pt_observer *obs, void *ctx)
{
	m->obs = obs;
	m->obs_ctx = ctx;
}

/* Events that change no table entry, root, frame or store buffer (pt_walk()'s memo holds).  An
 * arch-level kind (below PT_EV_MMAP, event.h): a bit of a mask, with no test of the range. */
static bool event_keeps_tables(unsigned kind)
{
	const uint64_t keeps = 1ull << PT_EV_ACCESS | 1ull << PT_EV_COMMENT | 1ull << PT_EV_LOCK |
			       1ull << PT_EV_UNLOCK | 1ull << PT_EV_BEGIN | 1ull << PT_EV_END | 1ull << PT_EV_ISB;
	return keeps >> kind % 64 & 1;
}

/* ---- the events without a section of their own ---- */

static void ttbr0(struct pt_machine *m, const struct pt_event *ev)
{
	m->cpu[ev->cpu].asid = ev->asid;
	uint32_t f = root_frame(m, ev->pa);
	set_root(m, asid_root_slot(m, ev->asid), f, false, ev->asid, ev->cpu);
}

/* An interrupt handler runs its own operations on top of the interrupted one. */
static void irq_enter(struct pt_machine *m, const struct pt_event *ev)
{
	struct cpu *c = &m->cpu[ev->cpu];
	/* the exception entry, a context synchronization event, in the interrupted context */
	OBS(m, barrier, ev);
	/* an interrupt handler runs its own operations on top of the interrupted one */
	VEC_PUSH(c->irq_saved, c->op);
	c->irq_depth++;
	memset(&c->op, 0, sizeof(c->op));
}

static void irq_exit(struct pt_machine *m, const struct pt_event *ev)
{
	struct cpu *c = &m->cpu[ev->cpu];
	if (!c->irq_depth)
		return;
	if (c->op.open)
		OBS(m, op_end, ev->cpu, &c->op);
	c->irq_depth--;
	c->op = c->irq_saved.v[--c->irq_saved.n];
}

static void context_switch(struct pt_machine *m, const struct pt_event *ev)
{
	struct cpu *c = &m->cpu[ev->cpu];
	/* __switch_to(): dsb(ish) so that the outgoing thread's stores are visible to the walker
	 * (and its TLB maintenance complete) wherever it runs next */
	if (!(ev->flags & PT_SWITCH_NO_DSB))
		dsb(m, ev->cpu, PT_BAR_ISH);
	OBS(m, barrier, ev);
	if (c->tid != ev->tid && !c->irq_depth) {
		/* the operation a thread is inside goes with it: park the outgoing thread's,
		 * take up the incoming thread's (a thread can migrate in the middle of an op) */
		uint64_t slot = hmap_get(&m->parked, c->tid, HMAP_EMPTY);
		if (slot == HMAP_EMPTY && c->op.open) {
			VEC_PUSH(m->parked_ops, c->op);
			hmap_set(&m->parked, c->tid, m->parked_ops.n - 1);
		} else if (slot != HMAP_EMPTY) {
			m->parked_ops.v[slot] = c->op;
		}
		slot = hmap_get(&m->parked, ev->tid, HMAP_EMPTY);
		if (slot != HMAP_EMPTY) {
			c->op = m->parked_ops.v[slot];
			m->parked_ops.v[slot].open = false;
		} else {
			memset(&c->op, 0, sizeof(c->op));
		}
	}
	c->tid = ev->tid;
}

static void migrate(struct pt_machine *m, const struct pt_event *ev)
{
	if (ev->len < m->ncpus)
		m->cpu[ev->len].tid = ev->tid;
}

static void op_begin(struct pt_machine *m, const struct pt_event *ev)
{
	struct cpu *c = &m->cpu[ev->cpu];
	if (c->op.open)
		OBS(m, op_end, ev->cpu, &c->op);	/* an unterminated op ends where the next begins */
	memset(&c->op, 0, sizeof(c->op));
	c->op.open = true;
	c->op.kind = ev->op;
	c->op.asid = ev->asid;
	c->op.id = ++m->next_op_id;
	c->op.va = ev->va;
	c->op.len = ev->len;
	c->op.begin_event = m->event_index;
	c->op.bound = ev->len2 ? ev->len2 : 64 * ((ev->len >> PT_PAGE_SHIFT) + 1) + 4096;
	OBS(m, op_begin, ev->cpu, &c->op);
}

static void op_end(struct pt_machine *m, const struct pt_event *ev)
{
	struct cpu *c = &m->cpu[ev->cpu];
	if (!c->op.open)
		return;
	c->op.err = (uint32_t)ev->len;
	OBS(m, op_end, ev->cpu, &c->op);
	c->op.open = false;
}

static void lock_rule(struct pt_machine *m, const struct pt_event *ev)
{
	struct lock_rule r = { root_frame(m, ev->pa), ev->op, ev->va };
	VEC_PUSH(m->rules, r);
}

/* Apply an arch-level event of a kind the machine knows; false if it does not.  kind is ev->kind
 * (inline: a caller that has it as a constant gets only its case) */
static inline __attribute__((always_inline)) bool apply_event(struct pt_machine *m, const struct pt_event *ev,
							      unsigned kind)
{
	switch (kind) {
	case PT_EV_PT_WRITE: pt_write(m, ev); break;
	case PT_EV_PT_ZERO: pt_zero(m, ev); break;
	case PT_EV_DSB:
		dsb(m, ev->cpu, ev->op);
		OBS(m, barrier, ev);
		break;
	case PT_EV_DMB:
		dmb(m, ev->cpu);
		OBS(m, barrier, ev);
		break;
	case PT_EV_ISB: OBS(m, barrier, ev); break;
	case PT_EV_TLBI: tlbi_issue(m, ev); break;
	case PT_EV_TTBR0: ttbr0(m, ev); break;
	case PT_EV_TTBR1: set_root(m, &m->kernel_root, root_frame(m, ev->pa), true, 0, ev->cpu); break;
	case PT_EV_ACCESS:
		if (ev->va >= m->kernel_base)
			OBS(m, access, ev);	/* the hook is for the kernel's address space */
		break;
	case PT_EV_PAGE_ALLOC: page_alloc(m, ev); break;
	case PT_EV_PAGE_FREE: page_free(m, ev); break;
	case PT_EV_LOCK:
	case PT_EV_UNLOCK: do_lock(m, ev, kind == PT_EV_LOCK); break;
	case PT_EV_IRQ_ENTER: irq_enter(m, ev); break;
	case PT_EV_IRQ_EXIT: irq_exit(m, ev); break;
	case PT_EV_SWITCH: context_switch(m, ev); break;
	case PT_EV_MIGRATE: migrate(m, ev); break;
	case PT_EV_BEGIN: op_begin(m, ev); break;
	case PT_EV_END: op_end(m, ev); break;
	case PT_EV_MM_EXIT: drop_asid(m, ev->asid); break;
	case PT_EV_LOCK_RULE: lock_rule(m, ev); break;
	case PT_EV_VMAP_AREA: vmap_area(m, ev); break;
	case PT_EV_COMMENT: break;
	default: return false;
	}
	return true;
}

/* What every applied event does before and after what is its own (pt_machine_event()). */
/* n events of ev's kind (kind: ev->kind, a constant where the caller has one) and CPU begin (n >
 * 1: a run, whose events nothing between sees one by one) */
static inline void kind_enter(struct pt_machine *m, const struct pt_event *ev, unsigned kind, unsigned n)
{
	m->cur = ev;
	if (!event_keeps_tables(kind))
		m->walk_gen += n;
}

/* ... and end: the step hook if the op passes its bound (a run of n > 1 is taken at once only
 * where it stays within it, or there is no observer) */
static inline void kind_leave(struct pt_machine *m, const struct pt_event *ev, unsigned kind, unsigned n)
{
	unsigned cpu = ev->cpu;
	struct pt_opctx *op = &m->cpu[cpu].op;	/* (its address once: the compiler made it twice) */
	m->last_cpu = cpu;
	if (op->open && kind != PT_EV_BEGIN && kind != PT_EV_COMMENT && (op->steps += n) > op->bound)
		OBS(m, step, cpu, op);
	m->event_index += n;
	m->cur = NULL;
}

/* May n events of an op's CPU run at once, kind_leave()'s step hook not due within them (op
 * closed, or n more steps stay within its bound)? */
static inline bool op_in_bound(const struct pt_opctx *op, unsigned n)
{
	return !op->open || (op->steps <= op->bound && op->bound - op->steps >= n);
}

int pt_machine_event(struct pt_machine *m, const struct pt_event *ev)
{
	/* arch-level kinds are below the ops-level ones (event.h) */
	if (ev->kind == PT_EV_NONE || ev->kind >= PT_EV_MMAP)
		return -1;
	assert(ev->cpu < m->ncpus);
	kind_enter(m, ev, ev->kind, 1);
	if (!apply_event(m, ev, ev->kind)) {
		m->cur = NULL;	/* no event is current once this one is refused */
		return -1;
	}
	kind_leave(m, ev, ev->kind, 1);
	return 0;
}

/*
 * pt_machine_event() of an event of an arch-level kind the machine knows, kind (ev->kind) a
 * constant: the same steps in the same order, the kind's tests made by the compiler (the
 * typed entry points below).
 */
static inline __attribute__((always_inline)) void event_of(struct pt_machine *m, const struct pt_event *ev,
							   unsigned kind)
{
	assert(ev->kind == kind && ev->cpu < m->ncpus);
	kind_enter(m, ev, kind, 1);
	apply_event(m, ev, kind);
	kind_leave(m, ev, kind, 1);
}

void pt_machine_lock_event(struct pt_machine *m, const struct pt_event *ev) { event_of(m, ev, PT_EV_LOCK); }
void pt_machine_unlock_event(struct pt_machine *m, const struct pt_event *ev) { event_of(m, ev, PT_EV_UNLOCK); }
void pt_machine_dsb_event(struct pt_machine *m, const struct pt_event *ev) { event_of(m, ev, PT_EV_DSB); }
void pt_machine_dmb_event(struct pt_machine *m, const struct pt_event *ev) { event_of(m, ev, PT_EV_DMB); }
void pt_machine_isb_event(struct pt_machine *m, const struct pt_event *ev) { event_of(m, ev, PT_EV_ISB); }
void pt_machine_begin_event(struct pt_machine *m, const struct pt_event *ev) { event_of(m, ev, PT_EV_BEGIN); }
void pt_machine_end_event(struct pt_machine *m, const struct pt_event *ev) { event_of(m, ev, PT_EV_END); }
void pt_machine_alloc_event(struct pt_machine *m, const struct pt_event *ev) { event_of(m, ev, PT_EV_PAGE_ALLOC); }
void pt_machine_write_event(struct pt_machine *m, const struct pt_event *ev) { event_of(m, ev, PT_EV_PT_WRITE); }
void pt_machine_tlbi_event(struct pt_machine *m, const struct pt_event *ev) { event_of(m, ev, PT_EV_TLBI); }
void pt_machine_access_event(struct pt_machine *m, const struct pt_event *ev) { event_of(m, ev, PT_EV_ACCESS); }

/*
 * The free of the n pages from pfn on where every one is a lazy page (a frame of none of them, a
 * chunk for each): each slot gets LAZY_FREED, all that free_pages() changes for a lazy page whose
 * frame no hook sees (no frame made, the frame cache as it was), and true.  False, with nothing
 * changed, if one is not lazy: all are checked before any is freed.
 */
static bool lazy_pages_free(struct pt_machine *m, uint64_t pfn, uint64_t n)
{
	for (int set = 0; set < 2; set++) {
		for (uint64_t i = 0; i < n;) {
			struct frame_chunk *c = chunk_find(m, pfn + i);
			if (!c)
				return false;
			unsigned lo, hi = chunk_span(pfn + i, n - i < FCHUNK_FRAMES ? (unsigned)(n - i) : FCHUNK_FRAMES,
						     &lo);
			uint32_t *s = c->idx;
			bool lazy = true;
			/* lazy: LAZY_PAGE set, and not PT_NO_FRAME (no folio index is LAZY_FOLIOS) */
			for (unsigned k = lo; k < hi; k++) {
				if (set)
					s[k] |= LAZY_FREED;
				else
					lazy &= s[k] - LAZY_PAGE < PT_NO_FRAME - LAZY_PAGE;
			}
			if (!lazy)
				return false;
			i += hi - lo;
		}
	}
	return true;
}

/* event_of() of a page_free, which tells what page_free() found of its first page */
bool pt_machine_free_event(struct pt_machine *m, const struct pt_event *ev)
{
	assert(ev->kind == PT_EV_PAGE_FREE && ev->cpu < m->ncpus);
	kind_enter(m, ev, PT_EV_PAGE_FREE, 1);
	bool table = page_free(m, ev);
	kind_leave(m, ev, PT_EV_PAGE_FREE, 1);
	return table;
}

unsigned pt_machine_free_run(struct pt_machine *m, const struct pt_event *first, unsigned n)
{
	assert(first->kind == PT_EV_PAGE_FREE && first->cpu < m->ncpus);
	bool tables_only = free_run_vouched(m, first->pa, (uint64_t)n << first->order);
	bool in_bound = op_in_bound(&m->cpu[first->cpu].op, n);
	if (n && (!m->obs || ((!m->obs->frame_free || tables_only) && in_bound)) &&
	    lazy_pages_free(m, first->pa >> PT_PAGE_SHIFT, (uint64_t)n << first->order)) {
		/* pages all lazy, no hook to see one of them (no frame_free, which would be for
		 * tables only, and no step): the n events enter and leave at once, as in
		 * write_run_unobserved(); none of the pages was a table's */
		kind_enter(m, first, PT_EV_PAGE_FREE, n);
		kind_leave(m, first, PT_EV_PAGE_FREE, n);
		return 0;
	}
	struct pt_event ev = *first;
	unsigned tables = 0;
	for (unsigned i = 0; i < n; i++) {
		ev.pa = first->pa + ((uint64_t)i << (PT_PAGE_SHIFT + first->order));
		kind_enter(m, &ev, PT_EV_PAGE_FREE, 1);
		tables += free_pages(m, &ev, tables_only);
		kind_leave(m, &ev, PT_EV_PAGE_FREE, 1);
	}
	return tables;
}

void pt_machine_access_run(struct pt_machine *m, const struct pt_event *first, unsigned n)
{
	assert(first->kind == PT_EV_ACCESS && first->cpu < m->ncpus);
	struct cpu *c = &m->cpu[first->cpu];
	uint64_t last = first->va + ((uint64_t)(n ? n - 1 : 0) << PT_PAGE_SHIFT);
	bool in_bound = op_in_bound(&c->op, n);
	if (n && last >= first->va && last < m->kernel_base && in_bound) {
		/* user accesses within the op's bound: what n events would leave, at once (no hook
		 * sees a user access, none changes a table) */
		if (c->op.open)
			c->op.steps += n;
		m->last_cpu = first->cpu;
		m->event_index += n;
		return;
	}
	struct pt_event ev = *first;
	for (unsigned i = 0; i < n; i++) {
		ev.va = first->va + ((uint64_t)i << PT_PAGE_SHIFT);
		pt_machine_event(m, &ev);
	}
}

/* pt_machine_write_run()'s n stores to table t (frame f) from entry idx on, ev their event (its pa and val
 * set per store), with room for them in c's store buffer.  (Inline, once for each kind of hooks.) */
static inline __attribute__((always_inline)) void write_run_stores(struct pt_machine *m,
								   const struct pt_observer *obs,
								   struct pt_event *ev, const uint64_t *vals,
								   unsigned n, struct pt_table *t, uint32_t f,
								   unsigned idx, struct cpu *c, bool in_run)
{
	uint64_t pa = ev->pa;
	for (unsigned i = 0; i < n; i++) {
		ev->pa = pa + 8ull * i;
		ev->val = vals[i];
		kind_enter(m, ev, PT_EV_PT_WRITE, 1);
		store_entry_at(m, obs, t, f, idx + i, ev->val, c, in_run, i);
		kind_leave(m, ev, PT_EV_PT_WRITE, 1);
	}
}

/* What store_entry_at() does for n stores of vals to t (frame f) from entry idx on (idx + n <=
 * PT_PTRS) by CPU c, with room for them in c's store buffer and no hook between them: at once.
 * Only the end state can be seen, and it is the same: the generation moves by n, the dirty bits
 * are those of the range, a group's CONT count moves by the CONT bits its stores set less those
 * they cleared (what cont_count_move() of each would leave) and, if it moved, its bit in
 * cont_groups follows it (a count that did not move has its bit already: every store moves a
 * group's count by its CONT bit, here or in cont_count_move(), and a table starts, from
 * table_new(), or is zeroed, by pt_zero(), with no entry, a zero count and no bit; the CONT
 * bits are counted from the values, not read back from the entries just stored, whose wider
 * loads would wait for the stores), and the stores' records take the next n store sequence
 * numbers in order, with c's op, which nothing changes between them (kept in locals: the
 * records' stores cannot change them). */
static inline void store_run_at(struct pt_machine *m, struct pt_table *t, uint32_t f, unsigned idx,
				const uint64_t *vals, unsigned n, struct cpu *c)
{
	struct pend_store *ps = &c->stores.v[c->stores.n];
	uint64_t sseq = m->sseq;
	uint32_t op = c->op.id;
	bool open = c->op.open;
	for (unsigned i = 0; i < n;) {
		/* the stores to one CONT group: the CONT bits they set and those they clear, each
		 * summed (at most PT_CONT_PTES of bit 52: no carry out) */
		unsigned g = (idx + i) / PT_CONT_PTES, end = (g + 1) * PT_CONT_PTES - idx;
		uint64_t set = 0, cleared = 0;
		for (end = end < n ? end : n; i < end; i++) {
			uint64_t old = t->latest[idx + i];
			t->latest[idx + i] = vals[i];
			set += vals[i] & PT_DESC_CONT;
			cleared += old & PT_DESC_CONT;
			pend_store_put(&ps[i], t, f, idx + i, vals[i], ++sseq, op, open);
		}
		if (set != cleared) {
			t->ncont[g] = (uint8_t)(t->ncont[g] + set / PT_DESC_CONT - cleared / PT_DESC_CONT);
			cont_group_bit(t, g);
		}
	}
	c->stores.n += n;
	m->sseq = sseq;
	m->latest_gen += n;
	for (unsigned i = idx; i < idx + n;) {
		unsigned w = i / 64, lo = i % 64, k = idx + n - i < 64 - lo ? idx + n - i : 64 - lo;
		t->dirty[w] |= (k == 64 ? ~0ull : (1ull << k) - 1) << lo;
		i += k;
	}
}

/* write_run_stores() with no hook to call between its stores: no store hook, and no step hook
 * (the op, if one is open, stays within its step bound).  Its n events enter and leave at
 * once: nothing in between sees the current event, the walk generation or the step count, nor
 * t's latest entries or c's store buffer, which take all n at once. */
static void write_run_unobserved(struct pt_machine *m, const struct pt_event *first, const uint64_t *vals,
				 unsigned n, struct pt_table *t, uint32_t f, unsigned idx, struct cpu *c)
{
	kind_enter(m, first, PT_EV_PT_WRITE, n);
	store_run_at(m, t, f, idx, vals, n, c);
	kind_leave(m, first, PT_EV_PT_WRITE, n);
}

void pt_machine_write_run(struct pt_machine *m, const struct pt_event *first, const uint64_t *vals, unsigned n)
{
	assert(first->kind == PT_EV_PT_WRITE && first->cpu < m->ncpus);
	uint64_t pa = first->pa;
	unsigned idx = (unsigned)((pa >> 3) & (PT_PTRS - 1));
	bool one_table = n && !(pa & 7) && idx + n <= PT_PTRS &&
			 !(m->root_pages.count && is_root_page(m, pa >> PT_PAGE_SHIFT));
	uint32_t f = one_table ? frame_get(m, pa, true) : PT_NO_FRAME;
	struct pt_frame *fr = one_table ? make_table(m, f, LEVEL_UNKNOWN) : NULL;
	/* (a level 3 entry is never a table descriptor: its values need no look) */
	if (one_table && fr->level_known && fr->level < 3) {
		int level = fr->level;
		for (unsigned i = 0; one_table && i < n; i++)
			one_table = !pt_desc_is_table(vals[i], level);
	}
	struct pt_event ev = *first;
	if (!one_table) {
		for (unsigned i = 0; i < n; i++) {
			ev.pa = pa + 8ull * i;
			ev.val = vals[i];
			pt_machine_event(m, &ev);
		}
		return;
	}
	/* pt_machine_event() of stores to the same table, whose frame is known: no table descriptor
	 * among them, so no frame is created and the frames do not move; the store buffer has room
	 * for them all */
	struct cpu *c = &m->cpu[first->cpu];
	struct pt_table *t = fr->tbl;
	const struct pt_observer *obs = m->obs;
	VEC_RESERVE(c->stores, n);
	if (obs && obs->pt_store_run) {
		if (!obs->pt_store_run(m->obs_ctx, m, f, idx, n, first->cpu, vals)) {
			write_run_stores(m, obs, &ev, vals, n, t, f, idx, c, true);
			return;
		}
		obs = NULL;	/* judged whole: no store hook */
	}
	bool in_bound = op_in_bound(&c->op, n);
	if ((!obs || (!obs->pt_store && !obs->pt_stored)) && (!m->obs || in_bound))
		write_run_unobserved(m, first, vals, n, t, f, idx, c);
	else
		write_run_stores(m, obs, &ev, vals, n, t, f, idx, c, false);
}

/* ---- queries ---- */

bool pt_machine_lpa2(const struct pt_machine *m) { return m->lpa2; }
int pt_machine_start_level(const struct pt_machine *m) { return m->start_level; }
uint64_t pt_machine_kernel_base(const struct pt_machine *m) { return m->kernel_base; }

unsigned pt_machine_cpus(const struct pt_machine *m) { return m->ncpus; }
uint64_t pt_machine_event_index(const struct pt_machine *m) { return m->event_index; }
uint64_t pt_machine_table_gen(const struct pt_machine *m) { return m->walk_gen; }
const struct pt_event *pt_machine_current_event(const struct pt_machine *m) { return m->cur; }
struct pt_frame *pt_machine_frame(struct pt_machine *m, uint32_t idx) { return &m->frames.v[idx]; }

/* pt_machine_lookup() past the frame cache (a call of its own: see frame_get_uncached()) */
static __attribute__((noinline)) uint32_t lookup_uncached(const struct pt_machine *m, uint64_t pfn)
{
	struct frame_chunk *c = chunk_find(m, pfn);
	uint32_t f = c ? c->idx[pfn & (FCHUNK_FRAMES - 1)] : PT_NO_FRAME;
	if (f == PT_NO_FRAME)
		return f;
	if (f & LAZY_PAGE)
		f = lazy_frame(m, c, pfn & (FCHUNK_FRAMES - 1));
	((struct pt_machine *)m)->frame_cache[pfn % FCACHE_SIZE] = f;	/* only the cache changes */
	return f;
}

uint32_t pt_machine_lookup(const struct pt_machine *m, uint64_t pa)
{
	uint64_t pfn = pa >> PT_PAGE_SHIFT;
	uint32_t f = frame_cached(m, pfn);
	return f != PT_NO_FRAME ? f : lookup_uncached(m, pfn);
}

/* What pt_machine_frame() says of the page a chunk slot (or the frame cache) holds, f, read where
 * it is: a lazy page's folio record holds its frame's state (LAZY_FREED), order and node, so no
 * frame is made for a question about them (a lookup's frame changes no answer, only where one is
 * kept).  True for a data page, with its order and node. */
static inline bool slot_data_page(const struct pt_machine *m, uint32_t f, unsigned *order, unsigned *node)
{
	if (f == PT_NO_FRAME)
		return false;
	if (f & LAZY_PAGE) {
		const struct lazy_folio *lf = &m->folios.v[f & LAZY_FOLIOS];
		*order = lf->order;
		*node = lf->node;
		return !(f & LAZY_FREED);
	}
	const struct pt_frame *fr = &m->frames.v[f];
	*order = fr->order;
	*node = fr->node;
	return fr->state == PT_FS_DATA;
}

bool pt_machine_data_page(const struct pt_machine *m, uint64_t pa, unsigned *order, unsigned *node)
{
	uint64_t pfn = pa >> PT_PAGE_SHIFT;
	uint32_t f = frame_cached(m, pfn);
	if (f == PT_NO_FRAME) {
		const struct frame_chunk *c = chunk_find(m, pfn);
		f = c ? c->idx[pfn & (FCHUNK_FRAMES - 1)] : PT_NO_FRAME;
	}
	return slot_data_page(m, f, order, node);
}

/* How many of the n pages from pa on, the first ones, pt_machine_data_page() finds data pages of
 * `order`: read in the chunks (whose slots the frame cache only copies), a chunk looked up once. */
unsigned pt_machine_data_pages(const struct pt_machine *m, uint64_t pa, unsigned n, unsigned order)
{
	uint64_t pfn = pa >> PT_PAGE_SHIFT;
	for (unsigned i = 0; i < n;) {
		const struct frame_chunk *c = chunk_find(m, pfn + i);
		if (!c)
			return i;
		unsigned lo, hi = chunk_span(pfn + i, n - i, &lo);
		for (unsigned k = lo; k < hi; k++, i++) {
			unsigned o, node;
			if (!slot_data_page(m, c->idx[k], &o, &node) || o != order)
				return i;
			/* a group whose slots all hold this one's (a folio's lazy pages): each the same */
			if (group_same(c, k, hi)) {
				k += PT_CONT_PTES - 1;
				i += PT_CONT_PTES - 1;
			}
		}
	}
	return n;
}

uint64_t pt_machine_entry_latest(const struct pt_machine *m, uint32_t f, unsigned idx)
{
	const struct pt_frame *fr = &m->frames.v[f];
	return fr->state == PT_FS_TABLE ? fr->tbl->latest[idx] : 0;
}

uint64_t pt_machine_entry_visible(const struct pt_machine *m, uint32_t f, unsigned idx)
{
	const struct pt_frame *fr = &m->frames.v[f];
	return fr->state == PT_FS_TABLE ? fr->tbl->visible[idx] : 0;
}

uint32_t pt_machine_first_pos(const struct pt_machine *m, uint32_t f)
{
	const struct pt_frame *fr = &m->frames.v[f];
	return fr->state == PT_FS_TABLE ? fr->tbl->first_pos : UINT32_MAX;
}

const struct pt_pos *pt_machine_pos(const struct pt_machine *m, uint32_t p) { return &m->pos.v[p]; }
uint32_t pt_machine_nfacts(const struct pt_machine *m) { return m->facts.n; }
const struct pt_fact *pt_machine_fact(const struct pt_machine *m, uint32_t i) { return &m->facts.v[i]; }
uint32_t pt_machine_nstale_pos(const struct pt_machine *m) { return m->stale_pos.n; }
const struct pt_pos *pt_machine_stale_pos(const struct pt_machine *m, uint32_t i)
{
	return &m->pos.v[m->stale_pos.v[i]];
}

const struct pt_opctx *pt_machine_op(const struct pt_machine *m, unsigned cpu) { return &m->cpu[cpu].op; }
uint32_t pt_machine_tid(const struct pt_machine *m, unsigned cpu) { return m->cpu[cpu].tid; }

uint32_t pt_machine_context(const struct pt_machine *m, unsigned cpu)
{
	const struct cpu *c = &m->cpu[cpu];
	return c->irq_depth ? (1u << 31) | (c->irq_depth & 0x7f) << 24 | (c->tid & 0xffffff) : c->tid;
}

uint32_t pt_machine_lock_holder(const struct pt_machine *m, unsigned cls, uint64_t key, bool *write)
{
	uint64_t i = lock_find(m, cls, key);
	uint64_t cur = i == HMAP_EMPTY ? HMAP_EMPTY : m->lock_states.v[i].cur;
	if (cur == HMAP_EMPTY)
		return UINT32_MAX;
	if (write)
		*write = cur & (1u << 16);
	return (uint32_t)(cur >> 32);
}

bool pt_machine_lock_rule(const struct pt_machine *m, uint32_t root, unsigned *cls, uint64_t *key)
{
	for (uint32_t i = 0; i < m->rules.n; i++) {
		if (m->rules.v[i].root == root) {
			*cls = m->rules.v[i].cls;
			*key = m->rules.v[i].key;
			return true;
		}
	}
	return false;
}

bool pt_machine_locks_recorded(const struct pt_machine *m) { return m->locks_recorded; }
uint64_t pt_machine_locks_gen(const struct pt_machine *m) { return m->locks_gen; }
uint64_t pt_machine_latest_gen(const struct pt_machine *m) { return m->latest_gen; }
uint64_t pt_machine_facts_gen(const struct pt_machine *m) { return m->facts_gen; }

uint32_t pt_machine_table_root(const struct pt_machine *m, uint32_t f)
{
	uint32_t p = pt_machine_first_pos(m, f);
	for (; p != UINT32_MAX; p = m->pos.v[p].next) {
		const struct pt_pos *pp = &m->pos.v[p];
		uint32_t r = pp->global ? m->kernel_root : asid_root(m, pp->asid);
		if (r != PT_NO_FRAME)
			return r;
	}
	return PT_NO_FRAME;
}

bool pt_walk(const struct pt_machine *m, bool kernel, uint16_t asid, uint64_t va, bool visible,
	     struct pt_walk_result *res)
{
	uint32_t f = kernel ? m->kernel_root : asid_root(m, asid);
	uint64_t base = kernel ? m->kernel_base : 0;
	memset(res, 0, sizeof(*res));
	if (f == PT_NO_FRAME || va - base >= (1ull << m->va_bits))
		return false;
	/* inside an event that changes tables, a walk neither uses nor leaves the memo */
	bool memo = !m->cur || event_keeps_tables(m->cur->kind);
	struct walk_memo *wm = (struct walk_memo *)&m->walk_memo;	/* only the memo changes: logically const */
	int level = m->start_level;
	if (memo && wm->valid && wm->gen == m->walk_gen && wm->kernel == kernel && wm->visible == visible &&
	    (kernel || wm->asid == asid) && (va - base) >> (PT_PAGE_SHIFT + 9 * (4 - wm->level)) == wm->prefix) {
		f = wm->frame;
		level = wm->level;
	}
	bool mapped = false;
	for (; level < PT_LEVELS; level++) {
		const struct pt_frame *fr = &m->frames.v[f];
		if (fr->state != PT_FS_TABLE)
			return false;
		unsigned idx = (unsigned)(((va - base) >> (PT_PAGE_SHIFT + 9 * (3 - level))) & (PT_PTRS - 1));
		uint64_t d = visible ? fr->tbl->visible[idx] : fr->tbl->latest[idx];
		res->level = (unsigned)level;
		res->desc = d;
		res->frame = f;
		res->idx = idx;
		if (pt_desc_is_leaf(d, level)) {
			res->pa = desc_oa(m, d) + ((va - base) & (pt_level_size(level) - 1));
			mapped = true;
			break;
		}
		if (!pt_desc_is_table(d, level))
			break;
		uint32_t next = pt_machine_lookup(m, desc_oa(m, d));
		if (next == PT_NO_FRAME)
			break;
		f = next;
	}
	if (memo && level >= 1 && level < PT_LEVELS) {
		wm->gen = m->walk_gen;
		wm->prefix = (va - base) >> (PT_PAGE_SHIFT + 9 * (4 - level));
		wm->frame = f;
		wm->asid = asid;
		wm->level = (int8_t)level;
		wm->kernel = kernel;
		wm->visible = visible;
		wm->valid = true;
	}
	return mapped;
}

/* The first index in [i, end) of a page (pt_desc_is_leaf() at level 3: 0b11) among PTEs e[], or
 * end: eight entries at a time hold none when no lane of their d & d >> 1 has bit 0 set (a
 * range walk over a PTE table mostly finds few pages, an unmap's return none). */
static inline unsigned next_page(const uint64_t *e, unsigned i, unsigned end)
{
	for (; i + 8 <= end; i += 8) {
		u64x2 a = { 0, 0 };
		for (unsigned k = 0; k < 8; k += 2) {
			u64x2 v = u64x2_load(e + i + k);
			a |= v & (v >> 1);
		}
		if ((a[0] | a[1]) & 1)
			break;
	}
	for (; i < end; i++)
		if (pt_desc_is_leaf(e[i], 3))
			break;
	return i;
}

static bool walk_range_rec(const struct pt_machine *m, uint32_t f, int level, uint64_t tbase, uint64_t vbase,
			   uint64_t start, uint64_t end, pt_leaf_fn fn, void *ctx)
{
	const struct pt_frame *fr = &m->frames.v[f];
	if (fr->state != PT_FS_TABLE)
		return true;
	uint64_t size = pt_level_size(level);
	unsigned first = start > tbase ? (unsigned)((start - tbase) / size) : 0;
	if (level == 3) {
		/* a PTE table, the loop below with its level known: an entry is a page or nothing to
		 * visit (pt_desc_is_table() is false at level 3); from entry first on, each ends above
		 * start, and those from lim on begin at or past end */
		const uint64_t *e = fr->tbl->latest;
		unsigned lim = end - tbase >= PT_PTRS * size ? PT_PTRS : (unsigned)((end - tbase + size - 1) / size);
		for (unsigned i = next_page(e, first, lim); i < lim; i = next_page(e, i + 1, lim))
			if (!fn(ctx, vbase + tbase + i * size, 3, e[i]))
				return false;
		return true;
	}
	for (unsigned i = first; i < PT_PTRS; i++) {
		uint64_t lo = tbase + i * size, hi = lo + size;
		if (lo >= end)
			break;
		if (hi <= start)
			continue;
		uint64_t d = fr->tbl->latest[i];
		if (pt_desc_is_leaf(d, level)) {
			if (!fn(ctx, vbase + lo, (unsigned)level, d))
				return false;
		} else if (pt_desc_is_table(d, level)) {
			uint32_t c = pt_machine_lookup(m, desc_oa(m, d));
			if (c != PT_NO_FRAME && !walk_range_rec(m, c, level + 1, lo, vbase, start, end, fn, ctx))
				return false;
		}
	}
	return true;
}

/*
 * pt_walk_range() of [start, end) inside one 2 MiB (an unmap's range, mostly): every level above
 * 3 meets it in one entry, the one pt_walk() of start reads (from its memo, often), asking what
 * walk_range_rec() asks in the same order (a table frame, a leaf, a table descriptor, the
 * child's lookup).  A leaf there holds the whole range; a PTE table's pages in it come in order.
 */
static void walk_range_2m(const struct pt_machine *m, bool kernel, uint16_t asid, uint64_t start, uint64_t end,
			  pt_leaf_fn fn, void *ctx)
{
	struct pt_walk_result r;
	bool mapped = pt_walk(m, kernel, asid, start, false, &r);
	if (r.level != 3) {
		/* (levels' VA bases: base is 2 MiB aligned and more) */
		if (mapped)
			fn(ctx, start & ~(pt_level_size((int)r.level) - 1), r.level, r.desc);
		return;
	}
	const uint64_t *e = m->frames.v[r.frame].tbl->latest;
	unsigned lim = (unsigned)((end - 1) >> PT_PAGE_SHIFT & (PT_PTRS - 1)) + 1;
	uint64_t tva = start & ~(pt_level_size(2) - 1);
	for (unsigned i = next_page(e, r.idx, lim); i < lim; i = next_page(e, i + 1, lim))
		if (!fn(ctx, tva + ((uint64_t)i << PT_PAGE_SHIFT), 3, e[i]))
			return;
}

void pt_walk_range(const struct pt_machine *m, bool kernel, uint16_t asid, uint64_t start, uint64_t end,
		   pt_leaf_fn fn, void *ctx)
{
	uint32_t f = kernel ? m->kernel_root : asid_root(m, asid);
	uint64_t base = kernel ? m->kernel_base : 0;
	if (f == PT_NO_FRAME || end <= start)
		return;
	if ((start ^ (end - 1)) < pt_level_size(2))
		walk_range_2m(m, kernel, asid, start, end, fn, ctx);
	else
		walk_range_rec(m, f, m->start_level, 0, base, start - base, end - base, fn, ctx);
}

bool pt_pgattr_change_is_safe(uint64_t old, uint64_t new)
{
	/* arch/arm64/mm/mmu.c: pgattr_change_is_safe(), which __check_safe_pte_update() applies */
	const uint64_t mask = PT_DESC_PXN | PT_DESC_RDONLY | PT_DESC_DBM | PT_DESC_NG | PT_DESC_AF |
			      PT_DESC_DIRTY | PT_DESC_SPECIAL | (0xfull << 55);
	if (!pt_desc_valid(old) || !pt_desc_valid(new) || old == new)
		return true;
	if (pt_desc_oa(old) != pt_desc_oa(new))
		return false;
	if ((old | new) & PT_DESC_CONT)
		return false;
	if (old & ~new & PT_DESC_NG)
		return false;
	uint64_t ao = (old & PT_DESC_ATTR_MASK) >> PT_DESC_ATTR_SHIFT, an = (new & PT_DESC_ATTR_MASK) >> PT_DESC_ATTR_SHIFT;
	/* MT_NORMAL (0) <-> MT_NORMAL_TAGGED (1) is a permission change for MTE */
	if (ao != an && !(ao <= 1 && an <= 1))
		return false;
	return ((old ^ new) & ~(mask | PT_DESC_ATTR_MASK)) == 0;
}

/* ---- state hash ---- */

static uint64_t mix2(uint64_t a, uint64_t b) { return hmap_mix(a * 0x9e3779b97f4a7c15ull ^ hmap_mix(b)); }

uint64_t pt_machine_hash(const struct pt_machine *m)
{
	/* order-independent sums of per-object hashes, so the hash depends on state, not history */
	uint64_t h = 0;
	for (uint32_t i = 0; i < m->frames.n; i++) {
		const struct pt_frame *fr = &m->frames.v[i];
		if (fr->state == PT_FS_FREE)
			continue;
		uint64_t x = mix2(fr->pfn, fr->state | (uint8_t)fr->level << 4 | fr->zero << 8 | (uint64_t)fr->order << 16);
		if (fr->tbl)
			for (unsigned j = next_stored(fr->tbl, 0); j < PT_PTRS; j = next_stored(fr->tbl, j + 1))
				if (fr->tbl->latest[j] | fr->tbl->visible[j])
					x += mix2(j, mix2(fr->tbl->latest[j], fr->tbl->visible[j]));
		h += hmap_mix(x);
	}
	/* the lazy pages' frames, PT_FS_DATA ones with their folio's order (lazy_frame()): those
	 * of folio j still hold its tag (a page allocated again holds a later folio's) */
	for (uint32_t j = 0; j < m->folios.n; j++) {
		const struct lazy_folio *lf = &m->folios.v[j];
		for (unsigned i = 0; i < 1u << lf->order; i++) {
			uint64_t pfn = lf->pfn + i;
			if (chunk_find(m, pfn)->idx[pfn & (FCHUNK_FRAMES - 1)] == (LAZY_PAGE | j))
				h += hmap_mix(mix2(pfn, PT_FS_DATA | (uint64_t)lf->order << 16));
		}
	}
	for (uint32_t i = 0; i < m->facts.n; i++) {
		const struct pt_fact *f = &m->facts.v[i];
		h += mix2(0xfac7, mix2(f->va ^ f->level, mix2(f->desc, f->cpumask ^ ((uint64_t)f->asid << 1 | f->global))));
	}
	for (uint32_t i = 0; i < m->pos.n; i++) {
		const struct pt_pos *p = &m->pos.v[i];
		if (p->in_use)
			h += mix2(0x9055, mix2(m->frames.v[p->frame].pfn ^ p->va,
					      p->live | (uint64_t)p->global << 1 | (uint64_t)p->asid << 2 |
						      (p->live ? 0 : p->cpumask << 20)));
	}
	for (unsigned c = 0; c < m->ncpus; c++) {
		const struct cpu *cp = &m->cpu[c];
		uint64_t x = mix2(c, cp->asid | (uint64_t)cp->tid << 16);
		for (uint32_t i = 0; i < cp->stores.n; i++)
			x = mix2(x, mix2(m->frames.v[cp->stores.v[i].frame].pfn << 9 | cp->stores.v[i].idx,
					 cp->stores.v[i].val));
		for (uint32_t i = 0; i < cp->tlbis.n; i++)
			x = mix2(x, mix2(cp->tlbis.v[i].op | (uint64_t)cp->tlbis.v[i].asid << 8, cp->tlbis.v[i].va ^ cp->tlbis.v[i].size));
		x = mix2(x, cp->op.open | (uint64_t)cp->op.kind << 1);
		h += hmap_mix(x);
	}
	for (uint32_t i = 0; i < m->lock_states.n; i++)
		if (m->lock_states.v[i].cur != HMAP_EMPTY)
			h += mix2(m->lock_states.v[i].key, m->lock_states.v[i].cur);
	for (uint32_t i = 0; i < m->lazy_areas.n; i++)
		h = mix2(h, mix2(m->lazy_areas.v[i].start, m->lazy_areas.v[i].end));
	h = mix2(h, m->kernel_root == PT_NO_FRAME ? 0 : m->frames.v[m->kernel_root].pfn);
	return h;
}

/* Does fact f's output cover pa? */
static bool fact_maps(const struct pt_machine *m, const struct pt_fact *f, uint64_t pa)
{
	return desc_oa(m, f->desc) <= pa && pa < desc_oa(m, f->desc) + pt_level_size(f->level);
}

uint32_t pt_machine_facts_mapping(const struct pt_machine *m, uint64_t pa, uint32_t *out, uint32_t max)
{
	uint32_t n = 0;
	for (unsigned level = 1; level <= 3; level++) {
		if (!m->nfacts_at[level])
			continue;
		uint64_t key = va_key(pa, level);
		for (uint64_t it = hmap_first(&m->facts_by_oa, key); it != HMAP_END;
		     it = hmap_next(&m->facts_by_oa, key, it)) {
			uint32_t i = (uint32_t)hmap_val(&m->facts_by_oa, it);
			if (fact_maps(m, &m->facts.v[i], pa) && n < max)
				out[n++] = i;
		}
		/* the key's values in the tail come last, in index order */
		for (uint32_t i = m->facts_tail; i < m->facts.n; i++) {
			const struct pt_fact *f = &m->facts.v[i];
			if (va_key(desc_oa(m, f->desc), f->level) == key && fact_maps(m, f, pa) && n < max)
				out[n++] = i;
		}
	}
	return n;
}

/* Does chunk c hold an rmap list of a level 2 or 3 key that a page of [lo, hi) has? */
static bool chunk_rmap_in(const struct pt_machine *m, const struct frame_chunk *c, uint64_t lo, uint64_t hi)
{
	if (m->nrmap_at[2] && c->rmap_block != NO_RMAP)
		return true;
	uint64_t first = c->key << FCHUNK_SHIFT, pfn_lo = lo >> PT_PAGE_SHIFT, pfn_hi = (hi - 1) >> PT_PAGE_SHIFT;
	unsigned k0 = pfn_lo > first ? (unsigned)(pfn_lo - first) : 0;
	unsigned k1 = pfn_hi < first + FCHUNK_FRAMES - 1 ? (unsigned)(pfn_hi - first) : FCHUNK_FRAMES - 1;
	for (unsigned w = k0 / 64; w <= k1 / 64; w++) {
		uint64_t b = c->rmap_used[w];
		if (w == k0 / 64)
			b &= ~0ull << (k0 % 64);
		if (w == k1 / 64)
			b &= ~0ull >> (63 - k1 % 64);
		if (b)
			return true;
	}
	return false;
}

bool pt_machine_leaves_maybe_in(const struct pt_machine *m, uint64_t lo, uint64_t hi)
{
	if (!(m->nrmap_at[1] | m->nrmap_at[2] | m->nrmap_at[3]))
		return false;
	if (hi <= lo)
		return true;	/* (a range to the top of the address space) */
	/* the keys pt_machine_leaves_mapping() would look up, exactly */
	if (m->nrmap_at[1])
		for (uint64_t b = lo & level_base_mask[1]; b < hi && b >= (lo & level_base_mask[1]);
		     b += pt_level_size(1))
			if (hmap_first(&m->rmap, va_key(b, 1)) != HMAP_END)
				return true;
	if (!(m->nrmap_at[2] | m->nrmap_at[3]))
		return false;
	uint64_t k0 = lo >> (PT_PAGE_SHIFT + FCHUNK_SHIFT), k1 = (hi - 1) >> (PT_PAGE_SHIFT + FCHUNK_SHIFT);
	if (k1 - k0 >= m->chunks.n) {
		/* more chunks in the range than there are: look at each of them */
		for (uint32_t i = 0; i < m->chunks.n; i++)
			if (m->chunks.v[i]->key >= k0 && m->chunks.v[i]->key <= k1 &&
			    chunk_rmap_in(m, m->chunks.v[i], lo, hi))
				return true;
		return false;
	}
	for (uint64_t k = k0; k <= k1; k++) {
		const struct frame_chunk *c = chunk_find(m, k << FCHUNK_SHIFT);
		if (c && chunk_rmap_in(m, c, lo, hi))
			return true;
	}
	return false;
}

uint32_t pt_machine_leaves_mapping(const struct pt_machine *m, uint64_t pa, uint64_t *out, uint32_t max)
{
	uint32_t n = 0;
	if (m->nrmap_at[1]) {
		uint64_t key = va_key(pa, 1);
		for (uint64_t it = hmap_first(&m->rmap, key); it != HMAP_END; it = hmap_next(&m->rmap, key, it))
			if (n < max)
				out[n++] = hmap_val(&m->rmap, it);
	}
	if (!(m->nrmap_at[2] | m->nrmap_at[3]))
		return n;
	uint64_t pfn = pa >> PT_PAGE_SHIFT;
	const struct frame_chunk *c = chunk_find(m, pfn);
	if (!c)
		return n;
	const struct rmap_node *nd = m->rmap_nodes.v;
	uint32_t lasts[2] = { c->rmap_block, c->rmap[pfn & (FCHUNK_FRAMES - 1)] };
	for (unsigned l = 0; l < 2; l++) {
		uint32_t last = lasts[l];
		if (last == NO_RMAP)
			continue;
		if (last & RMAP_ONE) {
			if (n < max)
				out[n++] = last & ~RMAP_ONE;
			continue;
		}
		for (uint32_t i = nd[last].next;; i = nd[i].next) {
			if (n < max)
				out[n++] = nd[i].val;
			if (i == last)
				break;
		}
	}
	return n;
}

/* The tail's facts of level `level` at VAs [lo, hi] (level bases), in index order (their VAs'),
 * after out[0..n) and up to max in all; the new count. */
static uint32_t facts_tail_in(const struct pt_machine *m, unsigned level, uint64_t lo, uint64_t hi,
			      uint32_t *out, uint32_t n, uint32_t max)
{
	if (m->facts_tail == m->facts.n)
		return n;
	const struct pt_fact *first = &m->facts.v[m->facts_tail], *tl = &m->facts.v[m->facts.n - 1];
	if (first->level != level || hi < first->va || lo > tl->va)
		return n;
	uint64_t size = pt_level_size((int)level);
	uint32_t i = lo > first->va ? (uint32_t)((lo - first->va) / size) : 0;
	uint32_t end = (uint32_t)(((hi < tl->va ? hi : tl->va) - first->va) / size);
	for (; i <= end && n < max; i++)
		out[n++] = m->facts_tail + i;
	return n;
}

uint32_t pt_machine_facts_overlapping(const struct pt_machine *m, uint64_t va, uint64_t size, uint32_t *out,
				      uint32_t max)
{
	uint32_t n = 0;
	if (!size)
		return 0;
	uint64_t last = range_last(va, size);
	if (!m->facts.n || !facts_bound_meets(m, va, last) || !facts_maybe_in(m, va, size))
		return 0;	/* no facts, or none in reach of these VAs */
	if (size > pt_level_size(2) || m->facts.n < 64) {
		for (uint32_t i = 0; i < m->facts.n && n < max; i++) {
			const struct pt_fact *f = &m->facts.v[i];
			if (f->va <= last && va <= f->va + (pt_level_size(f->level) - 1))
				out[n++] = i;
		}
		return n;
	}
	/* facts at the levels of blocks containing va, then every page inside */
	bool only_tail = facts_only_tail_in(m, va, last);
	for (unsigned level = 1; level <= 3; level++) {
		if (!m->nfacts_at[level])
			continue;
		uint64_t lsize = pt_level_size(level);
		uint64_t step = lsize >= size ? 0 : lsize;
		uint64_t start = va & ~(lsize - 1);
		if (level >= 2 && only_tail) {
			/* the index holds no fact of the level in reach (a block or page at a level 2
			 * or 3 base in [start, last] lies in va's region): the loop below would give the
			 * tail's facts from start on, up to last's entry (start alone if !step) */
			n = facts_tail_in(m, level, start, step ? last & ~(lsize - 1) : start, out, n, max);
			continue;
		}
		for (uint64_t a = start;; a += step) {
			uint64_t key = va_key(a, level);
			for (uint64_t it = hmap_first(&m->facts_by_va, key); it != HMAP_END;
			     it = hmap_next(&m->facts_by_va, key, it))
				if (n < max)
					out[n++] = (uint32_t)hmap_val(&m->facts_by_va, it);
			uint32_t i = fact_tail_at(m, a, level);
			if (i != UINT32_MAX && n < max)
				out[n++] = i;
			if (!step || a + step - 1 >= last)
				break;	/* the level's last entry in reach, the top of the VA space included */
		}
	}
	return n;
}

uint32_t pt_machine_npending(const struct pt_machine *m, unsigned cpu) { return m->cpu[cpu].stores.n; }

void pt_machine_pending(const struct pt_machine *m, unsigned cpu, uint32_t i, uint32_t *frame, unsigned *idx,
			uint64_t *val)
{
	const struct pend_store *ps = &m->cpu[cpu].stores.v[i];
	*frame = ps->frame;
	*idx = ps->idx;
	*val = ps->val;
}

const uint64_t *pt_machine_table_latest(const struct pt_machine *m, uint32_t f)
{
	const struct pt_frame *fr = &m->frames.v[f];
	return fr->state == PT_FS_TABLE ? fr->tbl->latest : NULL;
}

const uint64_t *pt_machine_table_visible(const struct pt_machine *m, uint32_t f)
{
	const struct pt_frame *fr = &m->frames.v[f];
	return fr->state == PT_FS_TABLE ? fr->tbl->visible : NULL;
}

const uint64_t *pt_machine_table_stored(const struct pt_machine *m, uint32_t f)
{
	const struct pt_frame *fr = &m->frames.v[f];
	return fr->state == PT_FS_TABLE ? fr->tbl->dirty : NULL;
}

bool pt_machine_cont_group(const struct pt_machine *m, uint32_t f, unsigned group)
{
	const struct pt_frame *fr = &m->frames.v[f];
	return fr->state == PT_FS_TABLE && (fr->tbl->cont_groups >> group & 1);
}

bool pt_machine_has_lock_rules(const struct pt_machine *m) { return m->rules.n != 0; }

uint32_t pt_machine_pending_op(const struct pt_machine *m, unsigned cpu, uint32_t i)
{
	const struct pend_store *ps = &m->cpu[cpu].stores.v[i];
	return ps->op_open ? ps->op : 0;
}

bool pt_machine_va_lazy(const struct pt_machine *m, uint64_t va, uint64_t size)
{
	/* newest first (any area answers): what the checkers ask of is mostly the area a vfree()
	 * just put on the list, last */
	for (uint32_t i = m->lazy_areas.n; i-- > 0;) {
		const struct lazy_area *a = &m->lazy_areas.v[i];
		if (va >= a->start && va - a->start < a->end - a->start && size <= a->end - va)
			return true;
	}
	return false;
}

uint32_t pt_machine_nlazy_areas(const struct pt_machine *m) { return m->lazy_areas.n; }

void pt_machine_lazy_area(const struct pt_machine *m, uint32_t i, uint64_t *start, uint64_t *end)
{
	*start = m->lazy_areas.v[i].start;
	*end = m->lazy_areas.v[i].end;
}

unsigned pt_machine_last_cpu(const struct pt_machine *m) { return m->last_cpu; }

uint64_t pt_machine_pos_gen(const struct pt_machine *m) { return m->pos_gen; }
