/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gen_arch_trace.c - ptfuzz-gen-arch: write a large, clean arch-level trace
 * for the replay benchmark.
 *
 * The trace imitates what the patched arm64 kernel emits at instruction
 * level (oracle-semantics.md, "What a real patched kernel does"): one user
 * address space (ASID 1, TTBR0) on CPUs 0-1 and the kernel's vmalloc area
 * (TTBR1) on CPUs 2-3, cycling through
 *
 *   mmap     fault-around populate: data pages allocated, PTEs written,
 *            DSB ISHST (user mappings need no ISB: a spurious fault retries);
 *   mprotect modify_prot_start()/commit() pairs per PTE (clear, write with the
 *            new AP[2]), then flush_tlb_range(): DSB ISHST, TLBI RVAE1IS, DSB ISH;
 *   munmap   zap_pte_range(): PTE clears, DSB ISHST, TLBI VALE1IS per page,
 *            DSB ISH, and only then the mmu_gather frees the pages;
 *   vmalloc  vmap_pte_range(): PTEs written, then DSB ISHST; ISB (a new kernel
 *            mapping must be usable when vmalloc returns);
 *   vunmap   PTE clears, flush_tlb_kernel_range(): DSB ISHST, TLBI VAALE1IS per
 *            page, DSB ISH, ISB; then the pages are freed.
 *
 * Every operation is bracketed by begin/end so the checkers judge it at its
 * completion.  Addresses and frames come from bounded pools (fixed VA slots,
 * a LIFO free list of frames), so the model's state, and the replay's peak
 * RSS, do not grow with the trace length.  Everything random comes from
 * --seed: the same arguments give the same bytes.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "trace.h"

#define PAGE_SIZE 4096ull
#define PTRS 512u

/* User half: a 1 GiB-aligned mmap area; NUTAB PTE tables under one PMD table. */
#define USER_VA 0x0000ffff80000000ull
#define USER_ASID 1u
#define USER_MM_KEY 1u		/* mmap lock key of the one mm */
#define NUTAB 4u
/* Kernel half: the vmalloc area (VMALLOC_START for 48-bit VAs), NKTAB PTE tables. */
#define KERN_VA 0xffff800080000000ull
#define NKTAB 2u

#define SLOT_PAGES 16u		/* an operation covers up to 16 pages (64K) */
#define SLOTS_PER_TABLE (PTRS / SLOT_PAGES)
#define NUSLOTS (NUTAB * SLOTS_PER_TABLE)
#define NKSLOTS (NKTAB * SLOTS_PER_TABLE)

/* Physical memory (QEMU virt RAM starts at 1 GiB): tables, then data frames. */
#define TABLE_PA 0x48000000ull
#define FRAME_PA 0x50000000ull
#define NFRAMES ((NUSLOTS + NKSLOTS) * SLOT_PAGES)

#define NCPUS 4u
#define USER_CPU0 0u		/* user operations run on CPUs 0 and 1 */
#define KERN_CPU0 2u		/* kernel operations on CPUs 2 and 3 */

#define MT_NORMAL 0ull		/* AttrIndx of MT_NORMAL in Linux's MAIR */
#define SH_INNER (3ull << PT_DESC_SH_SHIFT)
/* PAGE_SHARED-like user data page: never executable (PXN is always set for user pages). */
#define USER_PAGE (PT_DESC_VALID | PT_DESC_TABLE | PT_DESC_AF | PT_DESC_NG | PT_DESC_USER | SH_INNER | \
		   (MT_NORMAL << PT_DESC_ATTR_SHIFT) | PT_DESC_PXN | PT_DESC_UXN)
/* PAGE_KERNEL: global, not executable at either level. */
#define KERN_PAGE (PT_DESC_VALID | PT_DESC_TABLE | PT_DESC_AF | SH_INNER | \
		   (MT_NORMAL << PT_DESC_ATTR_SHIFT) | PT_DESC_PXN | PT_DESC_UXN)
#define TABLE_DESC (PT_DESC_VALID | PT_DESC_TABLE)

#define OP_MAX_EVENTS (16 + 6 * SLOT_PAGES)

struct slot {
	uint64_t va;
	uint64_t pte_table;	/* PA of the PTE table holding the slot's entries */
	unsigned npages;	/* 0: unmapped */
	bool ro;
	uint64_t frame[SLOT_PAGES];
};

struct gen {
	uint64_t rng;
	/* LIFO free list of data frames, as the per-CPU page lists hand them out */
	uint64_t free_frames[NFRAMES];
	unsigned nfree;
	struct slot uslot[NUSLOTS], kslot[NKSLOTS];
	uint64_t next_table;
	/* the operation being built */
	struct pt_event buf[OP_MAX_EVENTS];
	unsigned nbuf;
	unsigned cpu;
	struct slot *slot;	/* the slot it works on */
	unsigned opkind;
	/* output */
	struct pt_writer *w;
	uint64_t written;
	uint64_t ops[PT_OP_KIND_COUNT];
};

static uint64_t rnd(struct gen *g)	/* splitmix64 */
{
	uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned rnd_below(struct gen *g, unsigned n)
{
	return (unsigned)(rnd(g) % n);
}

static unsigned level_index(uint64_t va, unsigned level)
{
	return (unsigned)(va >> (12 + 9 * (3 - level))) & (PTRS - 1);
}

/* PA of the level-3 entry for va in the PTE table at `table`. */
static uint64_t pte_entry(uint64_t table, uint64_t va)
{
	return table + 8ull * level_index(va, 3);
}

static struct pt_event *ev(struct gen *g, unsigned kind)
{
	if (g->nbuf >= OP_MAX_EVENTS) {
		fprintf(stderr, "ptfuzz-gen-arch: internal error: operation longer than %u events\n",
			OP_MAX_EVENTS);
		abort();
	}
	struct pt_event *e = &g->buf[g->nbuf++];
	memset(e, 0, sizeof(*e));
	e->kind = (uint8_t)kind;
	e->cpu = (uint16_t)g->cpu;
	return e;
}

static void dsb(struct gen *g, unsigned dom)
{
	ev(g, PT_EV_DSB)->op = (uint8_t)dom;
}

static void isb(struct gen *g)
{
	ev(g, PT_EV_ISB);
}

static void pt_write(struct gen *g, uint64_t entry_pa, uint64_t val)
{
	struct pt_event *e = ev(g, PT_EV_PT_WRITE);
	e->pa = entry_pa;
	e->val = val;
}

static void tlbi(struct gen *g, unsigned op, uint64_t va, unsigned asid, unsigned ttl)
{
	struct pt_event *e = ev(g, PT_EV_TLBI);
	e->op = (uint8_t)op;
	e->va = va;
	e->asid = (uint16_t)asid;
	e->level = (uint8_t)ttl;
}

static void page_alloc(struct gen *g, unsigned type, uint64_t pa, unsigned level, uint32_t flags)
{
	struct pt_event *e = ev(g, PT_EV_PAGE_ALLOC);
	e->op = (uint8_t)type;
	e->pa = pa;
	e->level = (uint8_t)level;
	e->flags = flags;
}

static void page_free(struct gen *g, uint64_t pa)
{
	ev(g, PT_EV_PAGE_FREE)->pa = pa;
}

static void lock(struct gen *g, unsigned cls, uint64_t key, uint32_t flags)
{
	struct pt_event *e = ev(g, PT_EV_LOCK);
	e->op = (uint8_t)cls;
	e->pa = key;
	e->flags = flags;
}

static void unlock(struct gen *g, unsigned cls, uint64_t key)
{
	struct pt_event *e = ev(g, PT_EV_UNLOCK);
	e->op = (uint8_t)cls;
	e->pa = key;
}

static void touch(struct gen *g, uint64_t va, unsigned asid, uint32_t flags)
{
	struct pt_event *e = ev(g, PT_EV_ACCESS);
	e->va = va;
	e->asid = (uint16_t)asid;
	e->flags = flags;
}

static void begin(struct gen *g, unsigned opkind, uint64_t va, uint64_t len, unsigned asid)
{
	struct pt_event *e = ev(g, PT_EV_BEGIN);
	e->op = (uint8_t)opkind;
	e->va = va;
	e->len = len;
	e->asid = (uint16_t)asid;
	g->opkind = opkind;
}

static void end(struct gen *g)
{
	ev(g, PT_EV_END);
}

static uint64_t alloc_frame(struct gen *g)
{
	/* The pools are sized for every slot fully mapped: never empty. */
	if (!g->nfree)
		abort();
	return g->free_frames[--g->nfree];
}

static void free_frame(struct gen *g, uint64_t pa)
{
	g->free_frames[g->nfree++] = pa;
}

static uint64_t alloc_table_pa(struct gen *g)
{
	uint64_t pa = g->next_table;
	g->next_table += PAGE_SIZE;
	return pa;
}

static int flush(struct gen *g, struct pt_error *err)
{
	for (unsigned i = 0; i < g->nbuf; i++)
		if (pt_writer_put(g->w, &g->buf[i], err))
			return -1;
	g->written += g->nbuf;
	g->nbuf = 0;
	return 0;
}

/*
 * __flush_tlb_range_op() (arch/arm64/include/asm/tlbflush.h): cover `pages`
 * pages from va with range TLBIs of growing SCALE, a single-page TLBI for
 * an odd page.  A range op covers (NUM + 1) << (5 * SCALE + 1) pages.
 */
static void flush_tlb_range_op(struct gen *g, unsigned op, unsigned rop, uint64_t va, unsigned pages,
			       unsigned asid, unsigned ttl)
{
	unsigned scale = 0;

	while (pages > 0) {
		if (pages == 1) {
			tlbi(g, op, va, asid, ttl);
			va += PAGE_SIZE;
			pages--;
			continue;
		}
		int num = (int)((pages >> (5 * scale + 1)) & 0x1f) - 1;
		if (num >= 0) {
			unsigned covered = (unsigned)(num + 1) << (5 * scale + 1);
			struct pt_event *e = ev(g, PT_EV_TLBI);
			e->op = (uint8_t)rop;
			e->va = va;
			e->asid = (uint16_t)asid;
			e->level = (uint8_t)ttl;
			e->num = (uint8_t)num;
			e->scale = (uint8_t)scale;
			va += (uint64_t)covered * PAGE_SIZE;
			pages -= covered;
		}
		scale++;
	}
}

/* ---- the address spaces, built once ---- */

/*
 * Build a 4-level tree for `base`: root, one level-1 and one level-2 table,
 * and `nptes` PTE tables for consecutive 2 MiB regions.  New tables are
 * allocated zeroed, and a DSB ISHST orders the zeroing before the table
 * descriptors that publish them (seed 003, init_clear_pgtable()).
 */
static uint64_t build_tree(struct gen *g, uint64_t base, unsigned nptes, uint64_t *ptes)
{
	uint64_t root = alloc_table_pa(g), l1 = alloc_table_pa(g), l2 = alloc_table_pa(g);

	page_alloc(g, PT_FRAME_TABLE, root, 0, PT_ALLOC_ZERO);
	page_alloc(g, PT_FRAME_TABLE, l1, 1, PT_ALLOC_ZERO);
	page_alloc(g, PT_FRAME_TABLE, l2, 2, PT_ALLOC_ZERO);
	for (unsigned i = 0; i < nptes; i++) {
		ptes[i] = alloc_table_pa(g);
		page_alloc(g, PT_FRAME_TABLE, ptes[i], 3, PT_ALLOC_ZERO);
	}
	dsb(g, PT_BAR_ISHST);
	pt_write(g, root + 8ull * level_index(base, 0), TABLE_DESC | l1);
	pt_write(g, l1 + 8ull * level_index(base, 1), TABLE_DESC | l2);
	for (unsigned i = 0; i < nptes; i++)
		pt_write(g, l2 + 8ull * level_index(base + i * (PTRS * PAGE_SIZE), 2), TABLE_DESC | ptes[i]);
	dsb(g, PT_BAR_ISHST);
	return root;
}

static void setup(struct gen *g)
{
	uint64_t uptes[NUTAB], kptes[NKTAB];

	g->cpu = 0;
	g->next_table = TABLE_PA;
	uint64_t kroot = build_tree(g, KERN_VA, NKTAB, kptes);
	isb(g);
	uint64_t uroot = build_tree(g, USER_VA, NUTAB, uptes);
	for (unsigned c = 0; c < NCPUS; c++) {
		g->cpu = c;
		ev(g, PT_EV_SWITCH)->tid = 100 + c;
		ev(g, PT_EV_TTBR1)->pa = kroot;
		if (c < KERN_CPU0) {
			struct pt_event *e = ev(g, PT_EV_TTBR0);
			e->pa = uroot;
			e->asid = USER_ASID;
		}
		isb(g);
	}

	for (unsigned i = 0; i < NUSLOTS; i++) {
		g->uslot[i].va = USER_VA + (uint64_t)i * SLOT_PAGES * PAGE_SIZE;
		g->uslot[i].pte_table = uptes[i / SLOTS_PER_TABLE];
	}
	for (unsigned i = 0; i < NKSLOTS; i++) {
		g->kslot[i].va = KERN_VA + (uint64_t)i * SLOT_PAGES * PAGE_SIZE;
		g->kslot[i].pte_table = kptes[i / SLOTS_PER_TABLE];
	}
	/* shuffled free list, so that frames are reused at other addresses */
	for (unsigned i = 0; i < NFRAMES; i++)
		g->free_frames[i] = FRAME_PA + (uint64_t)i * PAGE_SIZE;
	for (unsigned i = NFRAMES - 1; i > 0; i--) {
		unsigned j = rnd_below(g, i + 1);
		uint64_t t = g->free_frames[i];
		g->free_frames[i] = g->free_frames[j];
		g->free_frames[j] = t;
	}
	g->nfree = NFRAMES;
}

/* ---- user operations (CPUs 0-1, ASID 1) ---- */

static uint64_t user_pte(const struct slot *s, unsigned i)
{
	return USER_PAGE | (s->ro ? PT_DESC_RDONLY : 0) | s->frame[i];
}

/* A populating mmap: each page faulted in and its PTE set under the PTL. */
static void op_mmap(struct gen *g, struct slot *s)
{
	s->npages = 1 + rnd_below(g, SLOT_PAGES);
	s->ro = false;
	begin(g, PT_OP_MMAP, s->va, s->npages * PAGE_SIZE, USER_ASID);
	lock(g, PT_LOCK_MMAP, USER_MM_KEY, PT_LOCK_WRITE);
	lock(g, PT_LOCK_PTL, s->pte_table, 0);
	for (unsigned i = 0; i < s->npages; i++) {
		s->frame[i] = alloc_frame(g);
		page_alloc(g, PT_FRAME_DATA, s->frame[i], 0, 0);
		pt_write(g, pte_entry(s->pte_table, s->va + i * PAGE_SIZE), user_pte(s, i));
	}
	dsb(g, PT_BAR_ISHST);
	unlock(g, PT_LOCK_PTL, s->pte_table);
	unlock(g, PT_LOCK_MMAP, USER_MM_KEY);
	end(g);
	/* the program writes what it mapped */
	for (unsigned i = 0; i < s->npages; i++)
		touch(g, s->va + i * PAGE_SIZE, USER_ASID, PT_ACC_WRITE);
}

/*
 * mprotect(): change_pte_range() does ptep_modify_prot_start() (clear) and
 * ptep_modify_prot_commit() (write with the new permission) per PTE; the
 * range flush at the end is legal because only permissions change and it
 * completes before the syscall returns.
 */
static void op_mprotect(struct gen *g, struct slot *s)
{
	s->ro = !s->ro;
	begin(g, PT_OP_MPROTECT, s->va, s->npages * PAGE_SIZE, USER_ASID);
	lock(g, PT_LOCK_MMAP, USER_MM_KEY, PT_LOCK_WRITE);
	lock(g, PT_LOCK_PTL, s->pte_table, 0);
	for (unsigned i = 0; i < s->npages; i++) {
		uint64_t e = pte_entry(s->pte_table, s->va + i * PAGE_SIZE);
		pt_write(g, e, 0);
		pt_write(g, e, user_pte(s, i));
	}
	unlock(g, PT_LOCK_PTL, s->pte_table);
	/* flush_tlb_range(): not last-level only, no level hint */
	dsb(g, PT_BAR_ISHST);
	flush_tlb_range_op(g, PT_TLBI_VAE1IS, PT_TLBI_RVAE1IS, s->va, s->npages, USER_ASID, 0);
	dsb(g, PT_BAR_ISH);
	unlock(g, PT_LOCK_MMAP, USER_MM_KEY);
	end(g);
	touch(g, s->va, USER_ASID, s->ro ? 0 : PT_ACC_WRITE);
}

/* munmap(): zap_pte_range() clears; the mmu_gather flushes, then frees the pages. */
static void op_munmap(struct gen *g, struct slot *s)
{
	begin(g, PT_OP_MUNMAP, s->va, s->npages * PAGE_SIZE, USER_ASID);
	lock(g, PT_LOCK_MMAP, USER_MM_KEY, PT_LOCK_WRITE);
	lock(g, PT_LOCK_PTL, s->pte_table, 0);
	for (unsigned i = 0; i < s->npages; i++)
		pt_write(g, pte_entry(s->pte_table, s->va + i * PAGE_SIZE), 0);
	unlock(g, PT_LOCK_PTL, s->pte_table);
	dsb(g, PT_BAR_ISHST);
	for (unsigned i = 0; i < s->npages; i++)
		tlbi(g, PT_TLBI_VALE1IS, s->va + i * PAGE_SIZE, USER_ASID, 3);
	dsb(g, PT_BAR_ISH);
	for (unsigned i = 0; i < s->npages; i++) {
		page_free(g, s->frame[i]);
		free_frame(g, s->frame[i]);
	}
	unlock(g, PT_LOCK_MMAP, USER_MM_KEY);
	end(g);
	s->npages = 0;
}

/* ---- kernel operations (CPUs 2-3, global mappings) ---- */

/* vmalloc(): pages allocated, vmap_pte_range() sets the PTEs; DSB ISHST + ISB before returning. */
static void op_vmalloc(struct gen *g, struct slot *s)
{
	s->npages = 1 + rnd_below(g, SLOT_PAGES);
	begin(g, PT_OP_VMALLOC, s->va, s->npages * PAGE_SIZE, 0);
	for (unsigned i = 0; i < s->npages; i++) {
		s->frame[i] = alloc_frame(g);
		page_alloc(g, PT_FRAME_DATA, s->frame[i], 0, 0);
		pt_write(g, pte_entry(s->pte_table, s->va + i * PAGE_SIZE), KERN_PAGE | s->frame[i]);
	}
	dsb(g, PT_BAR_ISHST);
	isb(g);
	end(g);
	for (unsigned i = 0; i < s->npages; i++)
		touch(g, s->va + i * PAGE_SIZE, 0, PT_ACC_WRITE);
}

/* vfree(): vunmap_range_noflush(), flush_tlb_kernel_range() (DSB ISHST, TLBI VAALE1IS, DSB ISH, ISB), free. */
static void op_vunmap(struct gen *g, struct slot *s)
{
	begin(g, PT_OP_VUNMAP, s->va, s->npages * PAGE_SIZE, 0);
	for (unsigned i = 0; i < s->npages; i++)
		pt_write(g, pte_entry(s->pte_table, s->va + i * PAGE_SIZE), 0);
	dsb(g, PT_BAR_ISHST);
	for (unsigned i = 0; i < s->npages; i++)
		tlbi(g, PT_TLBI_VAALE1IS, s->va + i * PAGE_SIZE, 0, 3);
	dsb(g, PT_BAR_ISH);
	isb(g);
	for (unsigned i = 0; i < s->npages; i++) {
		page_free(g, s->frame[i]);
		free_frame(g, s->frame[i]);
	}
	end(g);
	s->npages = 0;
}

/* One operation into g->buf: 3 in 4 are user operations. */
static void next_op(struct gen *g)
{
	if (rnd_below(g, 4)) {
		struct slot *s = g->slot = &g->uslot[rnd_below(g, NUSLOTS)];
		g->cpu = USER_CPU0 + rnd_below(g, 2);
		if (!s->npages)
			op_mmap(g, s);
		else if (rnd_below(g, 2))
			op_mprotect(g, s);
		else
			op_munmap(g, s);
	} else {
		struct slot *s = g->slot = &g->kslot[rnd_below(g, NKSLOTS)];
		g->cpu = KERN_CPU0 + rnd_below(g, 2);
		if (!s->npages)
			op_vmalloc(g, s);
		else
			op_vunmap(g, s);
	}
}

/*
 * Top up to exactly the requested count with reads of mapped user pages.
 * `skip` is the slot of the operation that did not fit (and was dropped):
 * its bookkeeping already ran, so it is not to be trusted.
 */
static void fill(struct gen *g, uint64_t n, const struct slot *skip)
{
	unsigned k = 0;

	g->cpu = USER_CPU0;
	while (n--) {
		const struct slot *s = NULL;
		for (unsigned tries = 0; tries < NUSLOTS && !s; tries++, k++) {
			const struct slot *t = &g->uslot[k % NUSLOTS];
			if (t->npages && t != skip)
				s = t;
		}
		if (s)
			touch(g, s->va, USER_ASID, 0);
		else
			isb(g);
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ptfuzz-gen-arch [-n EVENTS] [-o FILE] [--seed S]\n"
		"  Write a clean arch-level trace of exactly EVENTS events (default 10000000)\n"
		"  imitating the patched arm64 kernel: mmap/mprotect/munmap on ASID 1 and\n"
		"  vmalloc/vfree in the kernel.  FILE ending in .zst is binary, else text\n"
		"  (default: trace.ptt.zst).  The same seed gives the same trace.\n");
}

static int parse_u64(const char *s, uint64_t *v)
{
	return pt_parse_u64(s, strlen(s), v);
}

int main(int argc, char **argv)
{
	static struct gen g;	/* large: keep it off the stack */
	const char *out = "trace.ptt.zst";
	uint64_t n = 10000000, seed = 1;
	static const struct option longopts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "n:o:s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_u64(optarg, &n)) {
				fprintf(stderr, "ptfuzz-gen-arch: -n: not a number: %s\n", optarg);
				return 2;
			}
			break;
		case 'o':
			out = optarg;
			break;
		case 's':
			if (parse_u64(optarg, &seed)) {
				fprintf(stderr, "ptfuzz-gen-arch: --seed: not a number: %s\n", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}

	struct pt_header h;
	struct pt_error err;
	pt_header_default(&h);
	h.cpus = NCPUS;
	snprintf(h.method, sizeof(h.method), "model");
	snprintf(h.machine, sizeof(h.machine), "ptfuzz-gen-arch -n %" PRIu64 " --seed %" PRIu64, n, seed);

	g.rng = seed;
	setup(&g);
	if (g.nbuf > n) {
		fprintf(stderr, "ptfuzz-gen-arch: -n %" PRIu64 ": the address-space set-up alone takes %u events\n",
			n, g.nbuf);
		return 2;
	}
	g.w = pt_writer_open(out, pt_encoding_for_path(out), &h, &err);
	if (!g.w) {
		fprintf(stderr, "ptfuzz-gen-arch: %s\n", err.msg);
		return 2;
	}
	if (flush(&g, &err))
		goto fail;
	for (;;) {
		next_op(&g);
		if (g.written + g.nbuf > n) {
			/* the operation does not fit: top up with reads instead */
			g.nbuf = 0;
			fill(&g, n - g.written, g.slot);
			if (flush(&g, &err))
				goto fail;
			break;
		}
		g.ops[g.opkind]++;
		if (flush(&g, &err))
			goto fail;
	}
	if (pt_writer_close(g.w, &err)) {
		fprintf(stderr, "ptfuzz-gen-arch: %s\n", err.msg);
		return 2;
	}
	fprintf(stderr, "ptfuzz-gen-arch: %s: %" PRIu64 " events (seed %" PRIu64 "): mmap %" PRIu64
		", mprotect %" PRIu64 ", munmap %" PRIu64 ", vmalloc %" PRIu64 ", vunmap %" PRIu64 "\n",
		out, g.written, seed, g.ops[PT_OP_MMAP], g.ops[PT_OP_MPROTECT], g.ops[PT_OP_MUNMAP],
		g.ops[PT_OP_VMALLOC], g.ops[PT_OP_VUNMAP]);
	return 0;
fail:
	fprintf(stderr, "ptfuzz-gen-arch: %s\n", err.msg);
	pt_writer_abort(g.w);
	return 2;
}
