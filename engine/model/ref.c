/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ref.c - the reference semantics (I10): a plain per-page model of what each
 * op means (page identity and permissions per address space), against which
 * the page tables are compared after each op.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_internal.h"
#include "vec2.h"

static const char RULE_SEMANTICS[] =
	"The page tables after an operation must match what the call means: mremap moves the same pages, "
	"mprotect changes the permissions of exactly the range, munmap removes exactly the range, vmap maps "
	"exactly the pages given (reference model, DESIGN.md I10).";

#define REF_FLAGS 0xfffull
#define NO_CHUNK UINT32_MAX
#define LOG2_REF_CHUNKS 4

/* ---- the map: 2 MiB chunks of words ---- */

void ref_map_init(struct ref_map *r)
{
	memset(r, 0, sizeof(*r));
	hmap_init(&r->by_key, LOG2_REF_CHUNKS);
	r->last = NO_CHUNK;
}

void ref_map_reset(struct ref_map *r)
{
	/* the chunks in use join the free ones past nchunk; a word is read only if present */
	r->nchunk = 0;
	r->count = 0;
	hmap_reset(&r->by_key, LOG2_REF_CHUNKS);
	r->last = NO_CHUNK;
	r->nwatch = 0;
	r->wc = (struct walk_cache){ 0 };	/* a space taken again: none of its walks holds */
}

void ref_map_destroy(struct ref_map *r)
{
	for (uint32_t i = 0; i < r->capchunk; i++)
		free(r->chunk[i]);
	free(r->chunk);
	hmap_destroy(&r->by_key);
}

static struct ref_chunk *chunk_find(const struct ref_map *r, uint64_t key)
{
	if (r->last != NO_CHUNK && r->chunk[r->last]->key == key)
		return r->chunk[r->last];
	uint64_t i = hmap_get(&r->by_key, key, HMAP_EMPTY);
	if (i == HMAP_EMPTY)
		return NULL;
	((struct ref_map *)r)->last = (uint32_t)i;	/* only the cache changes */
	return r->chunk[i];
}

static struct ref_chunk *chunk_get(struct ref_map *r, uint64_t key)
{
	struct ref_chunk *c = chunk_find(r, key);
	if (c)
		return c;
	if (r->nchunk == r->capchunk) {
		r->chunk = realloc(r->chunk, (r->capchunk + 1) * sizeof(*r->chunk));
		if (!r->chunk || !(r->chunk[r->capchunk] = malloc(sizeof(struct ref_chunk))))
			abort();
		r->capchunk++;
	}
	c = r->chunk[r->nchunk];
	c->key = key;
	memset(c->present, 0, sizeof(c->present));
	c->linear = false;
	c->lazy = false;
	hmap_insert(&r->by_key, key, r->nchunk);
	r->last = r->nchunk++;
	return c;
}

static inline bool word_present(const struct ref_chunk *c, unsigned i)
{
	return c->present[i / 64] >> (i % 64) & 1;
}

/* Word i of chunk c, if present. */
static inline uint64_t word_get(const struct ref_chunk *c, unsigned i)
{
	return c->lazy ? c->first + (uint64_t)i * PAGE_SIZE : c->word[i];
}

/*
 * Write out the words of a lazy chunk (ref_set_run()), before its words are changed or read in
 * place: each the one before plus a page, as ref_set_run() would have written them.  A fault
 * that maps a 2M folio sets its chunk's 512 words; most are never read one by one (the
 * reference check compares the chunk at once, an unmap clears it).
 */
static inline void chunk_fill(struct ref_chunk *c)
{
	if (!c->lazy)
		return;
	uint64_t v = c->first;
	for (unsigned i = 0; i < PTRS_PER_PTE; i++, v += PAGE_SIZE)
		c->word[i] = v;
	c->lazy = false;
}

/* Word i of chunk c (of map r) becomes w. */
static inline void word_put(struct ref_map *r, struct ref_chunk *c, unsigned i, uint64_t w)
{
	chunk_fill(c);
	if (!word_present(c, i)) {
		c->present[i / 64] |= 1ull << (i % 64);
		r->count++;
	}
	c->word[i] = w;
	c->linear = false;
}

static void word_set(struct ref_map *r, uint64_t va, uint64_t w)
{
	word_put(r, chunk_get(r, va >> PMD_SHIFT), pt_index(va, 3), w);
}

uint64_t ref_map_hash(const struct ref_map *r)
{
	/* the hash of the former hash map's (page, word) pairs: state hashes did not change */
	uint64_t x = 0;
	for (uint32_t ci = 0; ci < r->nchunk; ci++) {
		const struct ref_chunk *c = r->chunk[ci];
		for (unsigned w = 0; w < PTRS_PER_PTE / 64; w++)
			for (uint64_t b = c->present[w]; b; b &= b - 1) {
				unsigned i = w * 64 + (unsigned)__builtin_ctzll(b);
				uint64_t page = (c->key << (PMD_SHIFT - PAGE_SHIFT)) + i;
				x += hmap_mix(page ^ hmap_mix(word_get(c, i)));
			}
	}
	return x;
}

/* Are the values of n pages from output address (pa & OA) on, each (its address & OA) | flags,
 * each the one before plus a page?  So where the flags stay outside the field and the addresses
 * below its top (then a loop adds a page, a 2M chunk's are described by its first). */
static inline bool oa_linear(uint64_t pa, uint64_t flags, uint64_t n)
{
	return !(flags & PT_DESC_OA_MASK) && (pa & PT_DESC_OA_MASK) + n * PAGE_SIZE <= PT_DESC_OA_MASK + PAGE_SIZE;
}

/* The number of bits set in x: a whole present word or none (a 2M folio, a clear of it) without
 * the library call that __builtin_popcountll() is on the baseline x86-64. */
static inline uint64_t bits_count(uint64_t x)
{
	return !x ? 0 : !~x ? 64 : (uint64_t)__builtin_popcountll(x);
}

/* The bits of entries [lo, hi) of a chunk (lo < hi) that fall in its 64-bit present word w. */
static inline uint64_t word_bits(unsigned w, unsigned lo, unsigned hi)
{
	uint64_t bits = ~0ull;
	if (w == lo / 64)
		bits &= ~0ull << (lo % 64);
	if (w == (hi - 1) / 64 && hi % 64)
		bits &= ~(~0ull << (hi % 64));
	return bits;
}

/* Does the map hold a word for any page of [start, end)? */
static bool ref_any(const struct ref_map *r, uint64_t start, uint64_t end)
{
	for (uint64_t va = start; va < end;) {
		uint64_t next = pmd_addr_end(va, end);
		const struct ref_chunk *c = chunk_find(r, va >> PMD_SHIFT);
		if (c) {
			unsigned lo = pt_index(va, 3), hi = next - (va & PMD_MASK) >= PMD_SIZE ? PTRS_PER_PTE :
							   pt_index(next, 3);
			for (unsigned w = lo / 64; w <= (hi - 1) / 64; w++)
				if (c->present[w] & word_bits(w, lo, hi))
					return true;
		}
		va = next;
	}
	return false;
}

/* ---- the reference ---- */

void ref_set(struct mm_space *s, uint64_t va, uint64_t pa, uint64_t flags)
{
	word_set(&s->ref, va, (pa & PT_DESC_OA_MASK) | flags);
}

void ref_set_run(struct mm_space *s, uint64_t va, uint64_t n, uint64_t pa, uint64_t flags)
{
	/* n calls of ref_set() for consecutive pages, with a chunk lookup per 2M chunk */
	struct ref_map *r = &s->ref;
	while (n) {
		struct ref_chunk *c = chunk_get(r, va >> PMD_SHIFT);
		unsigned lo = pt_index(va, 3);
		unsigned hi = n < PTRS_PER_PTE - lo ? lo + (unsigned)n : PTRS_PER_PTE;
		uint64_t v = (pa & PT_DESC_OA_MASK) | flags;
		c->linear = false;
		if (oa_linear(pa, flags, hi - lo)) {
			/* the output addresses stay below the top of the field and the flags outside
			 * it: each word is the one before plus a page */
			if (hi - lo == PTRS_PER_PTE) {
				/* all of them, present below: written out when needed (chunk_fill()) */
				c->lazy = c->linear = true;
				c->first = v;
			} else {
				chunk_fill(c);
				for (unsigned i = lo; i < hi; i++, v += PAGE_SIZE)
					c->word[i] = v;
			}
			pa += (uint64_t)(hi - lo) * PAGE_SIZE;
		} else {
			chunk_fill(c);
			for (unsigned i = lo; i < hi; i++, pa += PAGE_SIZE)
				c->word[i] = (pa & PT_DESC_OA_MASK) | flags;
		}
		for (unsigned w = lo / 64; w <= (hi - 1) / 64; w++) {
			uint64_t bits = word_bits(w, lo, hi);
			r->count += bits_count(bits & ~c->present[w]);
			c->present[w] |= bits;
		}
		va += (uint64_t)(hi - lo) * PAGE_SIZE;
		n -= hi - lo;
	}
}

uint64_t ref_get(const struct mm_space *s, uint64_t va)
{
	const struct ref_chunk *c = chunk_find(&s->ref, va >> PMD_SHIFT);
	unsigned i = pt_index(va, 3);
	return c && word_present(c, i) ? word_get(c, i) : 0;
}

/* Clear the words of [start, end) in chunk c (which covers its part of the range). */
static void chunk_clear(struct ref_map *r, struct ref_chunk *c, uint64_t start, uint64_t end)
{
	uint64_t base = c->key << PMD_SHIFT;
	uint64_t lo = start > base ? start : base, hi = end - base < PMD_SIZE ? end : base + PMD_SIZE;
	if (lo >= hi)
		return;
	c->linear = false;
	/* the pages lo, lo + PAGE_SIZE, ... below hi are entries [i0, i1) of the chunk: their
	 * present bits go a 64-bit word at a time */
	unsigned i0 = pt_index(lo, 3), i1 = i0 + (unsigned)((hi - lo + PAGE_SIZE - 1) >> PAGE_SHIFT);
	for (unsigned w = i0 / 64; w <= (i1 - 1) / 64; w++) {
		uint64_t bits = c->present[w] & word_bits(w, i0, i1);
		r->count -= bits_count(bits);
		c->present[w] &= ~bits;
	}
}

void ref_watch(struct ref_map *r, struct ref_snapshot *x)
{
	if (r->nwatch == REF_WATCH_MAX)
		abort();	/* one zap per thread at most */
	r->watch[r->nwatch++] = x;
}

void ref_unwatch(struct ref_map *r, struct ref_snapshot *x)
{
	for (unsigned i = 0; i < r->nwatch; i++)
		if (r->watch[i] == x) {
			r->watch[i] = r->watch[--r->nwatch];
			return;
		}
}

/* the watched snapshots forget their words in [start, end) */
static void watch_clear(struct ref_map *r, uint64_t start, uint64_t end)
{
	for (unsigned i = 0; i < r->nwatch; i++) {
		struct ref_snapshot *x = r->watch[i];
		uint64_t a = 0, b = x->n;
		while (a < b) {		/* the first pair at or past start */
			uint64_t m = a + (b - a) / 2;
			if (x->w[2 * m] < start)
				a = m + 1;
			else
				b = m;
		}
		for (; a < x->n && x->w[2 * a] < end; a++)
			x->w[2 * a + 1] = 0;
	}
}

void ref_clear_range(struct mm_space *s, uint64_t start, uint64_t end)
{
	struct ref_map *r = &s->ref;
	if (end <= start)
		return;
	if (r->nwatch)
		watch_clear(r, start, end);
	uint64_t first = start >> PMD_SHIFT, last = (end - 1) >> PMD_SHIFT;
	if (last - first >= r->nchunk) {
		/* sparse: walk the chunks rather than the range */
		for (uint32_t ci = 0; ci < r->nchunk; ci++)
			if (r->chunk[ci]->key >= first && r->chunk[ci]->key <= last)
				chunk_clear(r, r->chunk[ci], start, end);
		return;
	}
	for (uint64_t k = first; k <= last; k++) {
		struct ref_chunk *c = chunk_find(r, k);
		if (c)
			chunk_clear(r, c, start, end);
	}
}

/*
 * fn(ctx, c, i, va) for each word the map holds in [start, end): word i of chunk c, at va, in
 * ref_for_each()'s order.  Inlined into each caller, so that a known fn is inlined in turn.
 */
static inline __attribute__((always_inline)) void each_word(const struct ref_map *r, uint64_t start, uint64_t end,
							     void (*fn)(void *ctx, struct ref_chunk *c, unsigned i,
									uint64_t va),
							     void *ctx)
{
	if (end <= start)
		return;
	uint64_t first = start >> PMD_SHIFT, last = (end - 1) >> PMD_SHIFT;
	/* the chunks of the range, or all chunks if there are fewer: min(range, mapped) */
	bool sparse = last - first >= r->nchunk;
	uint64_t n = sparse ? r->nchunk : last - first + 1;
	for (uint64_t ci = 0; ci < n; ci++) {
		struct ref_chunk *c = sparse ? r->chunk[ci] : chunk_find(r, first + ci);
		if (!c || c->key < first || c->key > last)
			continue;
		/* its words [lo, hi) are those whose page is in [start, end): the present bits
		 * there, a 64-bit word at a time, in the order of their index */
		uint64_t base = c->key << PMD_SHIFT;
		unsigned lo = start > base ? (unsigned)((start - base + PAGE_SIZE - 1) >> PAGE_SHIFT) : 0;
		unsigned hi = end - base < PMD_SIZE ? (unsigned)((end - base + PAGE_SIZE - 1) >> PAGE_SHIFT) :
						      PTRS_PER_PTE;
		for (unsigned w = lo / 64; lo < hi && w <= (hi - 1) / 64; w++)
			for (uint64_t b = c->present[w] & word_bits(w, lo, hi); b; b &= b - 1) {
				unsigned i = w * 64 + (unsigned)__builtin_ctzll(b);
				fn(ctx, c, i, base + (uint64_t)i * PAGE_SIZE);
			}
	}
}

struct for_each_ctx {
	void (*fn)(void *ctx, uint64_t va, uint64_t word);
	void *ctx;
};

static void for_each_word(void *ctx, struct ref_chunk *c, unsigned i, uint64_t va)
{
	struct for_each_ctx *x = ctx;
	x->fn(x->ctx, va, word_get(c, i));
}

void ref_for_each(const struct mm_space *s, uint64_t start, uint64_t end,
		  void (*fn)(void *ctx, uint64_t va, uint64_t word), void *ctx)
{
	struct for_each_ctx x = { fn, ctx };
	each_word(&s->ref, start, end, for_each_word, &x);
}

/* The words of a range, copied out (ref_move()). */
struct ref_words {
	uint64_t n, cap;
	uint64_t *va, *word;
};

static void ref_words_add(void *ctx, struct ref_chunk *c, unsigned i, uint64_t va)
{
	struct ref_words *w = ctx;
	uint64_t word = word_get(c, i);
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 64;
		w->va = realloc(w->va, w->cap * sizeof(*w->va));
		w->word = realloc(w->word, w->cap * sizeof(*w->word));
		if (!w->va || !w->word)
			abort();
	}
	w->va[w->n] = va;
	w->word[w->n++] = word;
}

/*
 * ref_move() of one whole 2M chunk's pages to another 2M (a PMD move): the same word_set()s,
 * in the same order (the source's, by index; the destination chunk made at the first), the
 * words copied to the stack instead of to two arrays.
 */
static void ref_move_chunk(struct mm_space *s, uint64_t old, uint64_t new)
{
	struct ref_map *r = &s->ref;
	const struct ref_chunk *c = chunk_find(r, old >> PMD_SHIFT);
	if (c && c->linear && word_get(c, 0)) {
		/* every word present, none zero, each the one before plus a page: the word_put()s
		 * below leave the destination chunk with all of them, the count up by those it
		 * lacked; it takes them as a lazy chunk (ref_set_run() of all of it) */
		const uint64_t first = word_get(c, 0);
		ref_clear_range(s, old, old + PMD_SIZE);
		struct ref_chunk *d = chunk_get(r, new >> PMD_SHIFT);
		for (unsigned w = 0; w < PTRS_PER_PTE / 64; w++) {
			r->count += bits_count(~d->present[w]);
			d->present[w] = ~0ull;
		}
		d->lazy = d->linear = true;
		d->first = first;
		return;
	}
	uint64_t present[PTRS_PER_PTE / 64] = { 0 }, word[PTRS_PER_PTE];
	for (unsigned w = 0; c && w < PTRS_PER_PTE / 64; w++)
		for (uint64_t b = present[w] = c->present[w]; b; b &= b - 1) {
			unsigned i = w * 64 + (unsigned)__builtin_ctzll(b);
			word[i] = word_get(c, i);
		}
	ref_clear_range(s, old, old + PMD_SIZE);
	struct ref_chunk *d = NULL;
	for (unsigned w = 0; w < PTRS_PER_PTE / 64; w++)
		for (uint64_t b = present[w]; b; b &= b - 1) {
			unsigned i = w * 64 + (unsigned)__builtin_ctzll(b);
			if (!word[i])
				continue;
			if (!d)
				d = chunk_get(r, new >> PMD_SHIFT);
			word_put(r, d, i, word[i]);
		}
}

void ref_move(struct mm_space *s, uint64_t old, uint64_t new, uint64_t len)
{
	if (len == PMD_SIZE && !(old & ~PMD_MASK) && !(new & ~PMD_MASK)) {
		ref_move_chunk(s, old, new);
		return;
	}
	/* copy out first (the ranges may overlap), only the words there are: the work is
	 * that of the pages mapped, not of the length */
	struct ref_words w = { 0 };
	each_word(&s->ref, old, old + len, ref_words_add, &w);
	ref_clear_range(s, old, old + len);
	/* word_set() of each, with a chunk lookup per run of words in one chunk */
	struct ref_chunk *c = NULL;
	for (uint64_t i = 0; i < w.n; i++) {
		uint64_t va = new + (w.va[i] - old);
		if (!w.word[i])
			continue;
		if (!c || c->key != va >> PMD_SHIFT)
			c = chunk_get(&s->ref, va >> PMD_SHIFT);
		word_put(&s->ref, c, pt_index(va, 3), w.word[i]);
	}
	free(w.va);
	free(w.word);
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

/* A present page's word takes the flags *ctx: word_set() of a word the chunk holds already,
 * in place. */
static void ref_protect_word(void *ctx, struct ref_chunk *c, unsigned i, uint64_t va)
{
	const uint64_t *f = ctx;
	(void)va;
	chunk_fill(c);
	if (c->word[i] & REF_PRESENT) {
		c->word[i] = (c->word[i] & ~(REF_READ | REF_WRITE | REF_EXEC | REF_NUMA)) | *f;
		c->linear = false;
	}
}

void ref_protect(struct mm_space *s, uint64_t start, uint64_t end, unsigned prot)
{
	/* the words there are, not every page of the range (a PROT_NONE reservation of
	 * terabytes with a few pages in it) */
	uint64_t f = ref_prot(prot);
	each_word(&s->ref, start, end, ref_protect_word, &f);
}

/* What a valid descriptor grants, in REF_* terms, without branches: kuser is PT_DESC_USER for
 * the kernel's space (always readable) and 0 for a user's, xn its execute-never bit (PXN, UXN). */
static inline uint64_t valid_desc_flags(uint64_t d, uint64_t kuser, uint64_t xn)
{
	return REF_PRESENT | ((d | kuser) & PT_DESC_USER ? REF_READ : 0) |
	       ((~d & PT_DESC_RDONLY) | (d & PT_DESC_DBM) ? REF_WRITE : 0) | (d & xn ? 0 : REF_EXEC);
}

/* What a descriptor grants, in REF_* terms (an invalid one: a NUMA hint). */
static inline uint64_t desc_flags(uint64_t d, bool kernel)
{
	if (!(d & PT_DESC_VALID))
		return REF_PRESENT | REF_NUMA;
	return valid_desc_flags(d, kernel ? PT_DESC_USER : 0, kernel ? PT_DESC_PXN : PT_DESC_UXN);
}

/* pt_walk() of va in s over the latest tables, as pt_walk() answers it. */
static bool walk_page(struct mm_model *mm, struct mm_space *s, uint64_t va, struct walk_cache *wc,
		      struct pt_walk_result *r)
{
	uint64_t base = s->kernel ? PAGE_OFFSET : 0;
	if (va >= wc->lo && va < wc->hi) {
		*r = wc->r;
		if (wc->mapped)
			r->pa = pt_desc_oa(r->desc) + ((va - base) & (pt_level_size(r->level) - 1));
		return wc->mapped;
	}
	if (wc->pte && va - wc->pte_lo < PMD_SIZE) {
		unsigned idx = (unsigned)((va - base) >> PAGE_SHIFT) & (PT_PTRS - 1);
		uint64_t d = wc->pte[idx];
		*r = (struct pt_walk_result){ .level = 3, .desc = d, .frame = wc->pte_frame, .idx = idx };
		if (!pt_desc_is_leaf(d, 3))
			return false;
		r->pa = pt_desc_oa(d) + ((va - base) & (PAGE_SIZE - 1));
		return true;
	}
	bool mapped = pt_walk(mm->m, s->kernel, s->asid, va, /*visible=*/false, r);
	if (va - base >= 1ull << VA_BITS)
		return mapped;	/* outside the address space: nothing to cache */
	if (r->level == 3 && pt_machine_table_latest(mm->m, r->frame)) {
		wc->pte = pt_machine_table_latest(mm->m, r->frame);
		wc->pte_stored = pt_machine_table_stored(mm->m, r->frame);
		wc->pte_lo = ALIGN_DOWN(va, PMD_SIZE);
		wc->pte_frame = r->frame;
		return mapped;
	}
	/* the walk ended at (r->level, r->desc): a block, an invalid entry, a table the walk
	 * cannot enter (then r is that table's entry), or no usable root (level 0, desc 0);
	 * every page that entry covers ends there alike */
	uint64_t size = pt_level_size(r->level);
	wc->lo = base + ALIGN_DOWN(va - base, size);
	wc->hi = wc->lo + size;
	wc->r = *r;
	wc->mapped = mapped;
	return mapped;
}

/* Whether walk_page() answers for va from wc, without a walk (ref_check_run() runs only then). */
static inline bool walk_held(const struct walk_cache *wc, uint64_t va)
{
	return (va >= wc->lo && va < wc->hi) || (wc->pte && va - wc->pte_lo < PMD_SIZE);
}

/* walk_page() of va for its effect on wc only (a walk reads and changes nothing else): whether
 * wc holds va's walk after it (not outside the address space) */
static bool walk_fill(struct mm_model *mm, struct mm_space *s, uint64_t va, struct walk_cache *wc)
{
	struct pt_walk_result r;
	walk_page(mm, s, va, wc, &r);
	return walk_held(wc, va);
}

/*
 * The ranges of s that other ops are in the middle of changing.  Ops that share the mmap lock
 * for read (faults, MADV_DONTNEED/FREE/PAGEOUT, the NUMA scan, pageout) run side by side; the
 * reference of a page another op is still working on is what that op makes of it, known only
 * when it returns, and its own check at its end judges the page.  An op's range counts out to
 * whole PMDs (a THP it splits or pages out), for mremap the destination too, and for a
 * pageout the whole folio around its address.
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
	uint64_t len = ev->len ? ev->len : PAGE_SIZE, va = ev->va;
	if (ev->kind == PT_EV_PAGEOUT) {
		/* reclaim takes the whole folio mapped at va, and a folio that an mremap moved off
		 * the PMD size straddles two PMDs: any folio holding va lies in this range */
		va = va > PMD_SIZE ? va - (PMD_SIZE - PAGE_SIZE) : 0;
		len = ev->va - va + PMD_SIZE;
	}
	x->lo[x->n] = ALIGN_DOWN(va, PMD_SIZE);
	x->hi[x->n++] = ALIGN_UP(va + len, PMD_SIZE);
	if (ev->kind == PT_EV_MREMAP) {
		x->lo[x->n] = ALIGN_DOWN(ev->va2, PMD_SIZE);
		x->hi[x->n++] = ALIGN_UP(ev->va2 + ev->len2, PMD_SIZE);
	}
}

/* NULL if no other op on s is in flight (the common case: nothing to skip) */
static const struct flux *flux_of(struct mm_model *mm, const struct mm_thread *self, const struct mm_space *s,
				  struct flux *x)
{
	/* flux_add_op() adds only ops of busy threads other than self: with none, nothing */
	if (mm->nbusy == (self->busy ? 1u : 0u))
		return NULL;
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

/* The reference's word want and the page tables' got made comparable (page_words()). */
static inline void words_comparable(uint64_t *wantp, uint64_t *gotp)
{
	uint64_t want = *wantp, got = *gotp;
	if ((want & REF_NUMA) && (got & REF_NUMA))
		got = want;	/* a NUMA hint keeps the page, not its permissions */
	else if ((want & REF_NUMA) && (want & (REF_READ | REF_WRITE | REF_EXEC)) && got == (want & ~REF_NUMA))
		got = want;	/* a hint fault (do_numa_page) may restore it at any time, as it was */
	if (want && !(want & REF_PRESENT))
		want = 0;
	*wantp = want;
	*gotp = got;
}

/* What the page tables give for va (the walk r, mapped or not), in the reference's terms, with
 * the reference's word want made comparable; the page agrees if *got == *want. */
static inline void page_words(const struct mm_space *s, uint64_t va, bool mapped, const struct pt_walk_result *r,
			      uint64_t *wantp, uint64_t *gotp)
{
	uint64_t want = *wantp, got = 0;
	if (mapped) {
		got = (r->pa & PT_DESC_OA_MASK) | desc_flags(r->desc, s->kernel);
	} else if (r->level >= 1 && (r->desc & PT_DESC_PROTNONE)) {
		/* PAGE_NONE / a NUMA hint, of a page or of a block */
		uint64_t size = pt_level_size(r->level);
		got = (desc_pa(r->desc) + ((va - (s->kernel ? PAGE_OFFSET : 0)) & (size - 1))) |
		      REF_PRESENT | REF_NUMA;
	}
	words_comparable(&want, &got);
	*wantp = want;
	*gotp = got;
}

/*
 * What the syscalls asked for at a user va: a page only inside a VMA, with at most the VMA's
 * permissions (mmap, mprotect), whatever the model's own routines wrote in the reference (a
 * fault writes its words itself: a folio mapped past vm_end would agree with them).  The
 * reference word gives the page's identity, and a NUMA hint that keeps it inaccessible.
 */
static inline uint64_t want_in_prot(uint64_t want, uint64_t vp)
{
	if (!(want & REF_PRESENT))
		return want;
	/* the VMA's permissions bound the page's: fewer is legal (a hugetlb page write-protected
	 * for fork's COW), more never */
	const uint64_t perm = REF_READ | REF_WRITE | REF_EXEC;
	return (want & ~(perm & ~vp)) | (vp & REF_NUMA);
}

static uint64_t want_in_vma(uint64_t want, const struct mm_vma *v)
{
	if (!v)
		return 0;	/* outside every VMA nothing may be mapped */
	return want_in_prot(want, ref_prot(v->prot));	/* vp: the VMA's permissions */
}

static uint64_t ref_want(struct mm_space *s, uint64_t va, struct walk_cache *wc)
{
	uint64_t want = ref_get(s, va);
	if (s->kernel)
		return want;	/* init_mm's vm areas: vmalloc/vmap give page and protection */
	const struct mm_vma *v = wc->vma;
	if (!v || va < v->start || va >= v->end)
		v = wc->vma = find_vma(s, va);
	return want_in_vma(want, v);
}

/* One page: the reference against what the page tables give; reports I10 and returns false on a
 * mismatch. */
static bool ref_check_page(struct mm_model *mm, struct mm_space *s, uint64_t va, const char *opname,
			   struct walk_cache *wc, const struct flux *fx)
{
	if (in_flux(fx, va))
		return true;
	uint64_t want = ref_want(s, va, wc);
	struct pt_walk_result r;
	bool mapped = walk_page(mm, s, va, wc, &r);
	uint64_t got;
	page_words(s, va, mapped, &r, &want, &got);
	if (got == want)
		return true;
	const char *what = !want && !find_vma(s, va) && !s->kernel ? "is mapped outside every VMA" :
			   !want ? "is mapped where the call left nothing" :
			   !got ? "is not mapped where the call left a page" :
			   (got & PT_DESC_OA_MASK) != (want & PT_DESC_OA_MASK) ? "maps another page" :
			   "has other permissions";
	pt_checker_report(mm->c, PT_I10, "reference-mismatch", RULE_SEMANTICS, va, want & PT_DESC_OA_MASK, want, got,
			  NULL, "after %s, va 0x%llx %s (expected 0x%llx, page tables give 0x%llx)", opname,
			  (unsigned long long)va, what, (unsigned long long)want, (unsigned long long)got);
	return false;
}

/* find_vma(s, va), and [*lo, *hi) around va where find_vma() gives the same answer: the VMA,
 * or the gap between two VMAs (the VMAs are sorted and do not overlap).  A check asks for the
 * spans of a range in turn: the VMA of the hint, or the one after it, is most often
 * vma_index_above()'s answer, which is the first VMA that ends above va (their ends go up). */
static const struct mm_vma *vma_span(struct mm_space *s, uint64_t va, uint64_t *lo, uint64_t *hi)
{
	uint32_t h = s->vma_hint, a;
	if (h < s->nvma && s->vma[h].end > va && (!h || s->vma[h - 1].end <= va))
		a = h;
	else if (h < s->nvma && s->vma[h].end <= va && (h + 1 == s->nvma || s->vma[h + 1].end > va))
		a = h + 1;
	else
		a = vma_index_above(s, va);
	if (a < s->nvma)
		s->vma_hint = a;
	if (a < s->nvma && s->vma[a].start <= va) {
		*lo = s->vma[a].start;
		*hi = s->vma[a].end;
		return &s->vma[a];
	}
	*lo = a ? s->vma[a - 1].end : 0;
	*hi = a < s->nvma ? s->vma[a].start : UINT64_MAX;
	return NULL;
}

/* How many pages from va on, below stop, chunk c has words for, the first of them va's, under the
 * 64-bit present word of va's page; stop is at most the end of c's 2M. */
static inline unsigned present_run(const struct ref_chunk *c, uint64_t va, uint64_t stop)
{
	unsigned i0 = pt_index(va, 3);
	uint64_t more = ~(c->present[i0 / 64] >> (i0 % 64)), n = (stop - va) >> PAGE_SHIFT;
	unsigned m = more ? (unsigned)__builtin_ctzll(more) : 64;	/* the shift brings in zeros */
	return m < n ? m : (unsigned)n;
}

/* Nonzero unless each of the n words w[k], as (w[k] & keep) | add, equals the block's value for
 * its page, at offset off + k * PAGE_SIZE into the block at oa (n is 64 for a whole present word:
 * a fixed count the compiler can unroll; gcc 12 at -O2 does not vectorize it). */
static inline uint64_t block_diff(const uint64_t *w, unsigned n, uint64_t off, uint64_t oa, uint64_t flags,
				  uint64_t keep, uint64_t add)
{
	uint64_t diff = 0, v = ((oa + off) & PT_DESC_OA_MASK) | flags;
	if (oa_linear(v, flags, n)) {
		/* as in ref_set_run(): each page's value is the one before plus a page */
		for (unsigned k = 0; k < n; k++, v += PAGE_SIZE)
			diff |= ((w[k] & keep) | add) ^ v;
		return diff;
	}
	for (unsigned k = 0; k < n; k++)
		diff |= ((w[k] & keep) | add) ^ (((oa + off + (uint64_t)k * PAGE_SIZE) & PT_DESC_OA_MASK) | flags);
	return diff;
}

/* The OR over k < n of (p[k] ^ (d0 + k * PAGE_SIZE)) | (((w[k] & keep) | add) ^ (got0 + k * PAGE_SIZE)),
 * two entries to a 128-bit vector (SSE2, which gcc 12 at -O2 does not find itself), the odd one
 * last: an OR is the same in any order, and d0 + k * PAGE_SIZE modulo 2^64 however it is summed. */
static inline uint64_t pte_linear_diff(const uint64_t *w, const uint64_t *p, unsigned n, uint64_t d0, uint64_t got0,
				       uint64_t keep, uint64_t add)
{
	u64x2 dv = { d0, d0 + PAGE_SIZE }, gv = { got0, got0 + PAGE_SIZE }, acc = { 0, 0 };
	unsigned k = 0;
	for (; k + 2 <= n; k += 2, dv += 2 * PAGE_SIZE, gv += 2 * PAGE_SIZE)
		acc |= (u64x2_load(p + k) ^ dv) | (((u64x2_load(w + k) & keep) | add) ^ gv);
	uint64_t diff = acc[0] | acc[1];
	if (k < n)
		diff |= (p[k] ^ dv[0]) | (((w[k] & keep) | add) ^ gv[0]);
	return diff;
}

/* Nonzero unless each of the n PTEs p[k] is a leaf whose value, as page_words() gives it for a page
 * in_page bytes into it, equals (w[k] & keep) | add; kuser and xn as for valid_desc_flags(). */
static inline uint64_t pte_diff(const uint64_t *w, const uint64_t *p, unsigned n, uint64_t in_page, uint64_t keep,
				uint64_t add, uint64_t kuser, uint64_t xn)
{
	uint64_t diff = 0;
	const uint64_t d0 = p[0];
	if (oa_linear(d0, 0, n)) {
		/* the common run, a folio's PTEs: each PTE the first plus a page, which stays inside
		 * the output address field, so its other bits, and with them its flags, are the
		 * first's, and its value below is the first's plus a page (in_page and the flags sit
		 * under the page bits); where every PTE and word goes so, zero is the loop's answer
		 * below, and any other run is judged by that loop */
		const uint64_t got0 = pt_desc_oa(d0) | valid_desc_flags(d0, kuser, xn);
		diff = pte_linear_diff(w, p, n, d0, got0, keep, add);
		if (!(diff | (~d0 & 3)))
			return 0;
		diff = 0;
	}
	for (unsigned k = 0; k < n; k++) {
		uint64_t d = p[k];
		uint64_t got = ((pt_desc_oa(d) + in_page) & PT_DESC_OA_MASK) | valid_desc_flags(d, kuser, xn);
		diff |= (((w[k] & keep) | add) ^ got) | (~d & 3);	/* not 0b11: no page */
	}
	return diff;
}

/*
 * The first page from va on, below stop (both in the PTE table wc caches), whose PTE maps a page
 * or holds a PAGE_NONE / NUMA hint, else stop: the pages before it agree where the reference
 * wants nothing of them (page_words() gives 0 for such a PTE, and a word of 0 stays 0).
 */
static inline uint64_t pte_none_until(const struct walk_cache *wc, uint64_t va, uint64_t stop, uint64_t base)
{
	while (va < stop) {
		unsigned i = (unsigned)((va - base) >> PAGE_SHIFT) & (PT_PTRS - 1);
		uint64_t more = wc->pte_stored[i / 64] >> (i % 64);
		if (!more) {
			/* entries never stored to are zero: on to the first later word with an
			 * entry stored to, or the table's end (the 2M's, which stop is not past):
			 * where the loop stepped a word at a time to there, or to stop first */
			unsigned w = i / 64 + 1;
			while (w < PT_PTRS / 64 && !wc->pte_stored[w])
				w++;
			va += ((uint64_t)w * 64 - i) * PAGE_SIZE;
			continue;
		}
		/* the entries stored to, a run of consecutive ones at a time (a clear leaves
		 * hundreds in a row): their OR first, which has both low bits or PT_DESC_PROTNONE
		 * set if any of them has (the common run, all zero, passes at once); one by one
		 * only then */
		unsigned t = (unsigned)__builtin_ctzll(more);
		more >>= t;
		uint64_t r = ~more ? (unsigned)__builtin_ctzll(~more) : 64, any = 0;
		va += (uint64_t)t * PAGE_SIZE;
		if (va >= stop)
			break;
		if (r > (stop - va + PAGE_SIZE - 1) >> PAGE_SHIFT)
			r = (stop - va + PAGE_SIZE - 1) >> PAGE_SHIFT;	/* the pages below stop */
		const uint64_t *p = &wc->pte[i + t];
		for (uint64_t k = 0; k < r; k++)
			any |= p[k];
		if ((any & 3) == 3 || (any & PT_DESC_PROTNONE))
			for (uint64_t k = 0; k < r; k++)
				if ((p[k] & 3) == 3 || (p[k] & PT_DESC_PROTNONE))
					return va + k * PAGE_SIZE;
		va += r * PAGE_SIZE;
	}
	return stop;
}

/* How many pages from va on, below stop, chunk c (NULL: none) has no word for, under the 64-bit
 * present word of va's page (all of them to stop without a chunk); stop is at most the end of the
 * 2M of va. */
static inline uint64_t absent_run(const struct ref_chunk *c, uint64_t va, uint64_t stop)
{
	uint64_t n = (stop - va) >> PAGE_SHIFT;
	if (!c)
		return n;
	unsigned i0 = pt_index(va, 3);
	uint64_t bits = c->present[i0 / 64] >> (i0 % 64);
	uint64_t m = bits ? (uint64_t)__builtin_ctzll(bits) : 64 - i0 % 64;
	return m < n ? m : n;
}

/*
 * The pages from va on, up to end, as ref_check_page() judges them one by one (the same walk
 * results, the same words), without a lookup per page: for ops no other op is in flight with
 * (fx NULL).  A run keeps to what does not change from page to page: the walk cache entry
 * walk_page() would answer from (the range of a block or an invalid entry, or the PTE table),
 * the VMA or the gap between VMAs that bounds the reference (ref_want()), and one 2M chunk of
 * the reference.  Returns the first page not judged here: end, the end of the run, or a page
 * that does not agree (ref_check_page() then reports it); va itself when walk_page() would
 * have to walk.
 */
static uint64_t ref_check_run(struct mm_space *s, uint64_t va, uint64_t end, struct walk_cache *wc)
{
	uint64_t base = s->kernel ? PAGE_OFFSET : 0;
	bool range = va >= wc->lo && va < wc->hi;
	uint64_t stop;
	if (range) {
		stop = wc->hi;
	} else if (wc->pte && va - wc->pte_lo < PMD_SIZE) {
		stop = wc->pte_lo + PMD_SIZE;
		if (wc->lo != wc->hi && wc->lo > va && wc->lo < stop)
			stop = wc->lo;	/* walk_page() answers from the range cache first */
	} else {
		return va;
	}
	if (stop > end || stop <= va)
		stop = end;
	uint64_t chunk_end = ALIGN_DOWN(va, PMD_SIZE) + PMD_SIZE;
	if (chunk_end > va && chunk_end < stop)
		stop = chunk_end;
	const struct mm_vma *v = NULL;
	if (!s->kernel) {
		/* one VMA, or one gap between VMAs, bounds the run, as ref_want() bounds each page */
		uint64_t vlo, vhi;
		v = vma_span(s, va, &vlo, &vhi);
		if (vhi < stop)
			stop = vhi;
	}
	if (!s->kernel && !v && !range)
		return pte_none_until(wc, va, stop, base);	/* between VMAs the reference wants nothing */
	struct ref_chunk *c = chunk_find(&s->ref, va >> PMD_SHIFT);
	const uint64_t vp = v ? ref_prot(v->prot) : 0;
	/* A stretch of pages with words in c agrees, as page by page, where each
	 * page's (word & keep) | add equals what the page tables give for it mapped: that is
	 * want_in_prot() of a word with REF_PRESENT (the kernel's words are wanted as they are);
	 * of a word without it the value lacks REF_PRESENT too, which a mapped page's value
	 * (desc_flags()) never does; and two equal words stay equal through words_comparable().
	 * In a PTE table, a stretch without words agrees where pte_none_until() passes it.  Any
	 * other stretch (a page not mapped under a word, in a block's range) is judged page by page. */
	const uint64_t perm = REF_READ | REF_WRITE | REF_EXEC;
	const uint64_t keep = s->kernel ? ~0ull : ~(perm & ~vp), add = s->kernel ? 0 : vp & REF_NUMA;
	if (range && wc->mapped && (s->kernel || v)) {
		/* one block maps every page of the run: what page_words() gives for each, with the
		 * block's flags and output address computed once */
		const uint64_t flags = desc_flags(wc->r.desc, s->kernel), oa = pt_desc_oa(wc->r.desc);
		const uint64_t in_block = pt_level_size(wc->r.level) - 1;
		if (c && c->linear && va < stop) {
			/* the words of the whole stretch go up by a page from the first: where the
			 * block's values do too (block_diff()'s first case), every page agrees as
			 * block_diff() judges it if the first does; else the loop below judges it */
			const uint64_t n = (stop - va) >> PAGE_SHIFT;
			const uint64_t first = ((oa + ((va - base) & in_block)) & PT_DESC_OA_MASK) | flags;
			if (oa_linear(first, flags, n) &&
			    ((word_get(c, pt_index(va, 3)) & keep) | add) == first)
				va = stop;
		}
		if (c && va < stop)
			chunk_fill(c);	/* the words themselves below */
		for (unsigned n; c && (n = present_run(c, va, stop));) {
			/* the run stays inside the block: its pages are at off, off + PAGE_SIZE, ... */
			const uint64_t *w = &c->word[pt_index(va, 3)], off = (va - base) & in_block;
			uint64_t diff = n == 64 ? block_diff(w, 64, off, oa, flags, keep, add) :
						  block_diff(w, n, off, oa, flags, keep, add);
			if (diff)
				break;	/* page by page below, from the stretch's first page */
			va += (uint64_t)n * PAGE_SIZE;
		}
		for (; va < stop; va += PAGE_SIZE) {
			unsigned i = pt_index(va, 3);
			uint64_t want = c && word_present(c, i) ? c->word[i] : 0;
			if (!s->kernel)
				want = want_in_prot(want, vp);
			uint64_t got = ((oa + ((va - base) & in_block)) & PT_DESC_OA_MASK) | flags;
			words_comparable(&want, &got);
			if (got != want)
				break;
		}
		return va;
	}
	const uint64_t kuser = s->kernel ? PT_DESC_USER : 0, xn = s->kernel ? PT_DESC_PXN : PT_DESC_UXN;
	if (c)
		chunk_fill(c);
	while (!range && va < stop) {
		unsigned n = c ? present_run(c, va, stop) : 0;
		if (!n) {
			/* pages the reference has no word for: wanted as nothing (ref_want() gives 0
			 * for them, inside a VMA and in the kernel's space alike) */
			uint64_t none = va + absent_run(c, va, stop) * PAGE_SIZE, bad;
			if (none == va)
				break;
			bad = pte_none_until(wc, va, none, base);
			va = bad;
			if (bad != none)
				break;
			continue;
		}
		/* the PTE table's leaves, the entries after va's in the table (the run stays in its
		 * 2M): what page_words() gives for a mapped page */
		const uint64_t *w = &c->word[pt_index(va, 3)];
		const uint64_t *p = &wc->pte[((va - base) >> PAGE_SHIFT) & (PT_PTRS - 1)], in_page = va & (PAGE_SIZE - 1);
		uint64_t diff = n == 64 ? pte_diff(w, p, 64, in_page, keep, add, kuser, xn) :
					  pte_diff(w, p, n, in_page, keep, add, kuser, xn);
		if (diff)
			break;
		va += (uint64_t)n * PAGE_SIZE;
	}
	for (uint64_t first = va; va < stop; va += PAGE_SIZE) {
		if (!s->kernel && !v && va != first)
			return stop;	/* the range's entry gives every page the same answer, 0 wanted */
		unsigned i = pt_index(va, 3);
		uint64_t want = c && word_present(c, i) ? c->word[i] : 0, got;
		if (!s->kernel)
			want = v ? want_in_prot(want, vp) : 0;	/* want_in_vma() */
		struct pt_walk_result r;
		bool mapped;
		if (range) {
			r = wc->r;
			mapped = wc->mapped;
			if (mapped)
				r.pa = pt_desc_oa(r.desc) + ((va - base) & (pt_level_size(r.level) - 1));
		} else {
			unsigned idx = (unsigned)((va - base) >> PAGE_SHIFT) & (PT_PTRS - 1);
			r = (struct pt_walk_result){ .level = 3, .desc = wc->pte[idx], .frame = wc->pte_frame,
						     .idx = idx };
			mapped = pt_desc_is_leaf(r.desc, 3);
			if (mapped)
				r.pa = pt_desc_oa(r.desc) + ((va - base) & (PAGE_SIZE - 1));
		}
		page_words(s, va, mapped, &r, &want, &got);
		if (got != want)
			break;
	}
	return va;
}


struct leaf_scan {
	struct mm_model *mm;
	struct mm_space *s;
	uint64_t start, end;
	const char *opname;
	const struct flux *fx;
	bool ok;
	struct walk_cache *wc;
};

static bool scan_leaf(void *ctx, uint64_t va, unsigned level, uint64_t desc)
{
	struct leaf_scan *x = ctx;
	(void)desc;
	uint64_t lo = va > x->start ? va : x->start, size = pt_level_size(level);
	uint64_t hi = va + size < x->end ? va + size : x->end;
	for (uint64_t a = lo; a < hi; a += PAGE_SIZE)
		if (!ref_check_page(x->mm, x->s, a, x->opname, x->wc, x->fx)) {
			x->ok = false;
			return false;
		}
	return true;
}

/*
 * The walk cache of a check or walk of s: what the space's last ones left in it, while no event has
 * changed a table, a root or a frame since (pt_machine_table_gen(), which a reset starts again;
 * pt_machine_latest_gen() never goes back, so the pair tells a reset machine apart): every
 * walk it holds then gives what pt_walk() gives now, and walk_page() answers as from an empty
 * one.  Else an empty one.  The VMA found last is looked up again: an op changes the VMAs
 * between its checks without a table event.
 */
static struct walk_cache *walks_of(struct mm_model *mm, struct mm_space *s)
{
	struct ref_map *r = &s->ref;
	uint64_t table_gen = pt_machine_table_gen(mm->m), latest_gen = pt_machine_latest_gen(mm->m);
	if (table_gen != r->wc_table_gen || latest_gen != r->wc_latest_gen) {
		/* empty: the cache's other fields are read only inside its range (lo <= va < hi)
		 * or with its PTE table (pte), and walk_page() sets them with those (a store of
		 * the whole cache is a rep stos, dear for its size) */
		r->wc.lo = r->wc.hi = 0;
		r->wc.pte = NULL;
		r->wc_table_gen = table_gen;
		r->wc_latest_gen = latest_gen;
	}
	r->wc.vma = NULL;
	return &r->wc;
}

bool ref_walk(struct mm_model *mm, struct mm_space *s, uint64_t va, struct pt_walk_result *r)
{
	return walk_page(mm, s, va, walks_of(mm, s), r);
}

bool ref_check(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start, uint64_t end,
	       const char *opname)
{
	struct flux fbuf;
	const struct flux *fx = flux_of(mm, t, s, &fbuf);
	uint64_t pages = (end - start) >> PAGE_SHIFT;
	struct walk_cache *wc = walks_of(mm, s);
	if (pages <= s->ref.count + 4096) {
		for (uint64_t va = start; va < end;) {
			/* the rest of an entry that maps nothing agrees wherever the reference has no
			 * word either: skip it at once (the margins of an unmap, a fresh mmap) */
			if (va >= wc->lo && va < wc->hi && !wc->mapped &&
			    !(wc->r.level >= 1 && (wc->r.desc & PT_DESC_PROTNONE))) {
				uint64_t stop = wc->hi < end ? wc->hi : end;
				if (!ref_any(&s->ref, va, stop)) {
					va = stop;
					continue;
				}
			}
			uint64_t next = fx ? va : ref_check_run(s, va, end, wc);
			if (next != va) {
				va = next;	/* [va, next) agree, as they would one by one */
			} else if (!fx && !walk_held(wc, va) && walk_fill(mm, s, va, wc)) {
				/* the walk ref_check_page() would make first: va's run is judged
				 * from it as above, without the page's own look-ups */
				continue;
			} else {
				if (!ref_check_page(mm, s, va, opname, wc, fx))
					return false;
				va += PAGE_SIZE;
			}
		}
		return true;
	}
	/* a range far larger than what is mapped: check what the page tables map in it, then
	 * every page the reference has in it (work proportional to the mappings, not the range) */
	struct leaf_scan x = { mm, s, start, end, opname, fx, true, wc };
	pt_walk_range(mm->m, s->kernel, s->asid, start, end, scan_leaf, &x);
	if (!x.ok)
		return false;
	for (uint32_t ci = 0; ci < s->ref.nchunk; ci++) {
		const struct ref_chunk *c = s->ref.chunk[ci];
		for (unsigned w = 0; w < PTRS_PER_PTE / 64; w++)
			for (uint64_t b = c->present[w]; b; b &= b - 1) {
				uint64_t va = (c->key << PMD_SHIFT) + (w * 64 + (uint64_t)__builtin_ctzll(b)) * PAGE_SIZE;
				if (va >= start && va < end && !ref_check_page(mm, s, va, opname, wc, fx))
					return false;
			}
	}
	return true;
}
