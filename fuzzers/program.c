/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * program.c - the ops-level fuzz input decoder and encoder (program.h).
 *
 * The decoder is a small interpreter over the input bytes with a shadow of
 * what the program has made so far.  The shadow is a pure function of the
 * bytes (never of the model's results), so that the same bytes give the same
 * program whatever the variant under test does with it.
 */
#include "program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K4 0x1000ull
#define K64 0x10000ull
#define M1 0x100000ull
#define M2 0x200000ull
#define M32 0x2000000ull
#define G1 0x40000000ull

#define RW (PT_PROT_READ | PT_PROT_WRITE)
#define VMALLOC_START 0xffff800008000000ull	/* the model's vmalloc space (engine/mm) */
#define VMALLOC_END 0xfffffbfff0000000ull

/* Where the decoder puts things.  User space: a few bases with the alignments
 * that matter (PMD, PUD); hugetlb pages in a zone of their own; kernel areas
 * in 8M slots of the vmalloc space (VMALLOC_START is 0xffff800008000000). */
#define KSLOT_BASE 0xffff800010000000ull
#define KSLOT_SIZE (8ull << 20)
#define KSLOTS 32u
#define KHUGE_BASE 0xffff800200000000ull	/* kernel hugetlb (ioremap-like block mappings) */
#define UHUGE_BASE 0x600000000000ull
#define VMAP_PA_BASE 0x40000000ull		/* device-like memory, below the allocator's PHYS_BASE */
#define ALLOC_PA_BASE 0x80000000ull		/* the mm model's PHYS_BASE: pages it hands out */
#define BANK_PA_BASE 0x300000000ull		/* RAM the allocator never reaches: hotplugged banks */
#define BANK_SIZE (64ull << 20)

#define MAX_REGIONS 32u
#define MAX_AREAS 64u
#define MAX_THREADS 4u
#define MAX_BANKS 16u
#define HUGE_CLASSES 4u
#define HUGE_SLOTS 8u
#define MAX_HUGE 16u
#define TID_BASE 16u			/* above any CPU count (tids below it name the CPUs' own threads) */
#define MAX_KTABLES 16u			/* 2M kernel ranges whose PTE table is known to exist */
#define MAX_KUSED 96u			/* vm area ranges ever handed out */

struct region { uint64_t va, len; uint8_t asid, prot, order; bool live; };
struct area {
	uint64_t va, len;
	uint32_t owner;		/* the context that made it */
	uint32_t last;		/* the context of its last op (made, freed), 0 once it surely ran */
	bool alloc, huge, live, reserved;
};
struct thread { uint32_t tid; uint16_t cpu; };
struct bank { uint64_t pa, len; uint32_t owner; bool gone; };

struct dec {
	const uint8_t *p, *end;
	const struct pt_program_opts *o;
	struct pt_program *prog;
	unsigned cpus;
	struct region reg[MAX_REGIONS];
	unsigned nreg;
	struct area area[MAX_AREAS];
	unsigned narea;
	struct thread thr[MAX_THREADS];
	unsigned nthr;
	struct bank bank[MAX_BANKS];
	unsigned nbank;
	struct bank hset[MAX_HUGE];	/* hugetlb pages set and not cleared (va, size) */
	unsigned nhset;
	unsigned ntid;
	uint64_t ktab[MAX_KTABLES];	/* 2M kernel ranges (va >> 21) with a PTE table (see irq_vmap_ok()) */
	unsigned nktab;
	struct bank kused[MAX_KUSED];	/* every vm area's VA (va, len): live, lazily freed or gone */
	unsigned nkused;
	bool kused_full;
	unsigned max;			/* events to emit at most */
	bool literal;			/* decoding a literal record: its CPU is kept */
	bool implicit_ops;		/* an op was issued to a CPU with no thread while threads ran */
};

static const uint64_t huge_size[HUGE_CLASSES] = { K64, M2, M32, G1 };

/* ---- the program being built ---- */

int pt_program_opts_from_env(struct pt_program_opts *o, char *why, size_t why_size)
{
	memset(o, 0, sizeof(*o));
	const char *c = getenv("PTFUZZ_CONTRACTS");
	if (c && *c && strcmp(c, "strict")) {
		if (strcmp(c, "allow")) {
			snprintf(why, why_size, "PTFUZZ_CONTRACTS: expected 'strict' or 'allow', got '%s'", c);
			return -1;
		}
		o->allow_contract = true;
	}
	const char *m = getenv("PTFUZZ_MAX_OPS");
	if (m && *m) {
		char *end;
		unsigned long n = strtoul(m, &end, 10);
		if (*end || n < 1 || n > 4096) {
			snprintf(why, why_size, "PTFUZZ_MAX_OPS: expected 1..4096, got '%s'", m);
			return -1;
		}
		o->max_ops = (unsigned)n;
	}
	return 0;
}

void pt_program_init(struct pt_program *p)
{
	memset(p, 0, sizeof(*p));
	pt_header_default(&p->h);
}

void pt_program_free(struct pt_program *p)
{
	free(p->ev);
	memset(p, 0, sizeof(*p));
}

/*
 * The context an op issued on cpu runs in: the thread scheduled there (its ops queue and
 * run when the schedule says), or the CPU itself.  Before the program has any thread an op
 * on a CPU runs at once (context 0); after, it may have to wait for a lock a suspended
 * thread holds, with that CPU's later ops queued behind it (engine/model/sched.c): the CPU is
 * then a context of its own, IMPLICIT | cpu.
 */
#define IMPLICIT 0x80000000u

static uint32_t context_of(struct dec *d, unsigned cpu, bool irq);

static void emit(struct dec *d, const struct pt_event *ev)
{
	struct pt_program *p = d->prog;
	/* an op in a CPU's implicit context may wait for a lock, and hold another meanwhile (see
	 * sched_done()); an IRQ's op runs at once and takes none */
	if (ev->kind >= PT_EV_MMAP && ev->kind != PT_EV_THREAD && ev->kind != PT_EV_SCHED &&
	    ev->kind != PT_EV_IRQ && ev->kind != PT_EV_KERNEL && (context_of(d, ev->cpu, false) & IMPLICIT))
		d->implicit_ops = true;
	if (p->n == p->cap) {
		unsigned cap = p->cap ? p->cap * 2 : 64;
		struct pt_event *n = realloc(p->ev, cap * sizeof(*n));
		if (!n)
			abort();
		p->ev = n;
		p->cap = cap;
	}
	p->ev[p->n++] = *ev;
}

/* ---- choices ---- */

static uint64_t pow2_pick(uint8_t b, const uint64_t *tab, unsigned n) { return tab[b % n]; }

/* An offset inside [0, len): the boundaries that matter, or any page. */
static uint64_t offset_in(uint64_t len, uint8_t b, uint8_t any)
{
	static const uint64_t tab[] = { 0, 0, K4, K64 - K4, K64, K64 + K4, M1, M2 - K4, M2, M2 + K4,
					M32, G1 };
	uint64_t off;
	unsigned n = sizeof(tab) / sizeof(tab[0]);
	if (b % 16 < n)
		off = tab[b % 16];
	else if (b % 16 == n)
		off = (len / 2) & ~(K4 - 1);
	else if (b % 16 == n + 1)
		off = len > K64 ? len - K64 : 0;
	else if (b % 16 == n + 2)
		off = len > K4 ? len - K4 : 0;
	else
		off = (uint64_t)any * K4;
	return off < len ? off : 0;
}

/* A length: page, contpte, PMD, CONT_PMD sizes and their neighbours, or what is left. */
static uint64_t length_pick(uint64_t left, uint8_t b, uint8_t any)
{
	static const uint64_t tab[] = { K4, 2 * K4, K64 - K4, K64, K64 + K4, 2 * K64, M1, M2 - K4, M2,
					M2 + K4, 2 * M2 };
	unsigned n = sizeof(tab) / sizeof(tab[0]);
	uint64_t len;
	if (b % 16 < n)
		len = tab[b % 16];
	else if (b % 16 == n)
		len = left;			/* to the end */
	else if (b % 16 == n + 1)
		len = (left / 2 + K4 - 1) & ~(K4 - 1);
	else
		len = (uint64_t)(any % 64 + 1) * K4;
	return len < left ? len : left;
}

static unsigned cpu_of(struct dec *d, uint8_t b) { return b % d->cpus; }

static struct thread *thread_on(struct dec *d, unsigned cpu)
{
	for (unsigned i = 0; i < d->nthr; i++)
		if (d->thr[i].cpu == cpu)
			return &d->thr[i];
	return NULL;
}

/* The context an op issued on cpu runs in (IMPLICIT, above emit()). */
static uint32_t context_of(struct dec *d, unsigned cpu, bool irq)
{
	struct thread *t = irq ? NULL : thread_on(d, cpu);
	if (t)
		return t->tid;
	return d->nthr && !irq ? IMPLICIT | cpu : 0;
}

/*
 * An op that needs what an earlier op made (a vfree its vmalloc, a hugetlb clear its
 * set) must run after it.  Ops of one context run in order, and an op that ran at once
 * ran before anything issued later; an op of another context might overtake a queued or
 * waiting creator, so the dependent op is issued to the creator's context (its thread,
 * wherever it runs now, or its CPU while no thread sits there).  An interrupt runs at
 * once: it may use only what ran already.
 */
static bool order_after(struct dec *d, uint32_t owner, struct pt_event *e, bool irq)
{
	if (!owner || context_of(d, e->cpu, irq) == owner)
		return true;
	if (irq || d->literal)
		return false;	/* a literal keeps its CPU */
	if (owner & IMPLICIT) {
		unsigned cpu = owner & ~IMPLICIT;
		if (context_of(d, cpu, false) != owner)
			return false;	/* a thread sits on that CPU now: no order to rely on */
		e->cpu = (uint16_t)cpu;
		return true;
	}
	for (unsigned i = 0; i < d->nthr; i++)
		if (d->thr[i].tid == owner) {
			e->cpu = d->thr[i].cpu;
			return true;
		}
	return false;
}

/* ---- user space ---- */

static const uint64_t user_base[] = {
	0x10000000ull, 0x20000000ull, 0x30000000ull, 0x40000000ull,	/* 256M steps; 0x40000000: 1G */
	0x80000000ull, 0xc0000000ull, 0x100000000ull, 0x7f0000000000ull,
};

static uint64_t user_addr(struct dec *d, uint8_t b, uint8_t sub)
{
	static const uint64_t skew[] = { 0, 0, 0, K4, K64, M2, M2 + K4, M32 - K4, M32, 3 * M2 };
	uint64_t base;
	if (b & 0x80 && d->nreg) {
		/* next to, or inside, a region the program made: overlaps and reuse */
		struct region *r = &d->reg[b % d->nreg];
		base = sub & 1 ? r->va + r->len : r->va + offset_in(r->len, sub >> 1, 0);
		return base < PT_USER_VA_END - PT_PROG_MAX_LEN ? base : user_base[0];
	}
	base = user_base[b % 8];
	return base + skew[sub % 10];
}

static void region_add(struct dec *d, uint8_t asid, uint64_t va, uint64_t len, uint8_t prot, uint8_t order)
{
	unsigned i = d->nreg < MAX_REGIONS ? d->nreg++ : (unsigned)(va >> 12) % MAX_REGIONS;
	d->reg[i] = (struct region){ va, len, asid, prot, order, true };
}

static uint8_t asid_of(uint8_t b) { return b % 8 == 7 ? 2 : 1; }

/* A range inside a region the program made (live or not: stale addresses matter), or at a base. */
static bool user_range(struct dec *d, const uint8_t *r, uint8_t *asid, uint64_t *va, uint64_t *len,
		       struct region **out)
{
	if (!d->nreg)
		return false;
	struct region *g = &d->reg[r[2] % d->nreg];
	uint64_t off = offset_in(g->len, r[3], r[5]);
	*asid = g->asid;
	*va = g->va + off;
	*len = length_pick(g->len - off, r[4], r[5]);
	if (out)
		*out = g;
	return *len != 0;
}

static unsigned prot_pick(uint8_t b)
{
	static const uint8_t tab[] = { RW, PT_PROT_READ, RW, 0, RW | PT_PROT_EXEC, PT_PROT_READ | PT_PROT_EXEC,
				       RW, PT_PROT_WRITE };
	return tab[b % 8];
}

static unsigned order_pick(uint8_t b)
{
	static const uint8_t tab[] = { 0, 4, 4, 9, 0, 4, 9, 9 };
	return tab[b % 8];
}

/* hugetlb pages live in hugetlb VMAs of their own: no anonymous mapping goes over them */
static bool over_huge(const struct dec *d, uint64_t va, uint64_t len)
{
	for (unsigned i = 0; i < d->nhset; i++)
		if (va < d->hset[i].pa + d->hset[i].len && d->hset[i].pa < va + len)
			return true;
	return false;
}

/* A munmap or madvise over hugetlb pages may zap them: later hugetlb ops do not count on them. */
static void forget_huge(struct dec *d, uint64_t va, uint64_t len)
{
	for (unsigned i = 0; i < d->nhset;)
		if (va < d->hset[i].pa + d->hset[i].len && d->hset[i].pa < va + len)
			d->hset[i] = d->hset[--d->nhset];
		else
			i++;
}

static void op_mmap(struct dec *d, const uint8_t *r)
{
	static const uint64_t lens[] = { K4, K64, K64 + K4, M1, M2, M2 + K4, 2 * M2, M32, 64 * M1, 2 * M2,
					 K64, M2, 4 * K64, G1, 2 * G1, M2 };
	struct pt_event e = { .kind = PT_EV_MMAP, .cpu = (uint16_t)cpu_of(d, r[1]) };
	e.asid = asid_of(r[7]);
	e.va = user_addr(d, r[2], r[3]);
	e.len = pow2_pick(r[4], lens, 16);
	if (e.len >= G1 && (r[4] & 0x30))	/* a 1G or 2G mapping only now and then: PUD moves */
		e.len = M2;
	e.prot = (uint8_t)prot_pick(r[5]);
	e.order = (uint8_t)order_pick(r[6]);
	if (r[6] & 0x08)
		e.flags |= PT_MAP_FIXED;
	if ((r[6] & 0x30) == 0x30 && e.len <= M2)
		e.flags |= PT_MAP_POPULATE;
	if (over_huge(d, e.va, e.len)) {
		d->prog->dropped++;
		return;
	}
	emit(d, &e);
	region_add(d, e.asid, e.va, e.len, e.prot, e.order);
}

/* The start of a user op on a range of a region the program made: kind, CPU, address space,
 * range; without a region yet, the record maps one instead (false). */
static bool user_op(struct dec *d, const uint8_t *r, uint8_t kind, struct pt_event *e, struct region **g)
{
	uint8_t asid = 1;
	*e = (struct pt_event){ .kind = kind, .cpu = (uint16_t)cpu_of(d, r[1]) };
	if (!user_range(d, r, &asid, &e->va, &e->len, g)) {
		op_mmap(d, r);
		return false;
	}
	e->asid = asid;
	return true;
}

static void op_munmap(struct dec *d, const uint8_t *r)
{
	struct pt_event e;
	struct region *g;
	if (!user_op(d, r, PT_EV_MUNMAP, &e, &g))
		return;
	emit(d, &e);
	forget_huge(d, e.va, e.len);
	if (e.va == g->va && e.len == g->len)
		g->live = false;
}

static void op_mremap(struct dec *d, const uint8_t *r)
{
	struct pt_event e;
	struct region *g;
	if (!user_op(d, r, PT_EV_MREMAP, &e, &g))
		return;
	if (r[6] & 0x80) {	/* the whole region: the moves the seeds are about */
		e.va = g->va;
		e.len = g->len;
	}
	switch (r[6] % 8) {
	case 0: case 1: case 2: e.len2 = e.len; break;
	case 3: e.len2 = e.len * 2 <= PT_PROG_MAX_LEN ? e.len * 2 : e.len; break;
	case 4: e.len2 = e.len > K4 ? (e.len / 2 + K4 - 1) & ~(K4 - 1) : e.len; break;
	case 5: e.len2 = e.len + K4 <= PT_PROG_MAX_LEN ? e.len + K4 : e.len; break;
	case 6: e.len2 = e.len + M2 <= PT_PROG_MAX_LEN ? e.len + M2 : e.len; break;
	default: e.len2 = e.len > K4 ? e.len - K4 : e.len; break;
	}
	switch (r[7] % 8) {
	case 0: case 1: case 2: case 3: e.flags = PT_MREMAP_MAYMOVE | PT_MREMAP_FIXED; break;
	case 4: e.flags = PT_MREMAP_MAYMOVE; break;
	case 5: e.flags = 0; break;	/* in place: shrink or grow where it is */
	case 6: e.flags = PT_MREMAP_MAYMOVE | PT_MREMAP_FIXED | PT_MREMAP_DONTUNMAP; e.len2 = e.len; break;
	default: e.flags = PT_MREMAP_MAYMOVE | PT_MREMAP_DONTUNMAP; e.len2 = e.len; break;
	}
	if (e.flags & PT_MREMAP_MAYMOVE)
		e.va2 = user_addr(d, r[5], r[7] >> 3);
	if (over_huge(d, e.va2, e.len2) || over_huge(d, e.va, e.len2)) {
		d->prog->dropped++;
		return;
	}
	emit(d, &e);
	if (e.flags & PT_MREMAP_MAYMOVE)
		region_add(d, e.asid, e.va2, e.len2, g->prot, g->order);
}

static void op_mprotect(struct dec *d, const uint8_t *r)
{
	struct pt_event e;
	struct region *g;
	if (!user_op(d, r, PT_EV_MPROTECT, &e, &g))
		return;
	if ((r[6] & 3) == 3) {
		e.flags = PT_MPROT_NUMA;	/* the NUMA scan (task_numa_work): PROT_NONE hinting */
	} else {
		e.prot = (uint8_t)prot_pick(r[7]);
		if (e.va == g->va && e.len == g->len)
			g->prot = e.prot;
	}
	emit(d, &e);
}

static void op_madvise(struct dec *d, const uint8_t *r)
{
	static const uint8_t adv[] = { PT_ADV_DONTNEED, PT_ADV_DONTNEED, PT_ADV_FREE, PT_ADV_PAGEOUT,
				       PT_ADV_PAGEOUT, PT_ADV_COLD, PT_ADV_HUGEPAGE, PT_ADV_NOHUGEPAGE };
	struct pt_event e;
	if (!user_op(d, r, PT_EV_MADVISE, &e, NULL))
		return;
	e.op = adv[r[6] % 8];
	emit(d, &e);
	forget_huge(d, e.va, e.len);
}

static void op_touch(struct dec *d, const uint8_t *r)
{
	struct pt_event e;
	struct region *g;
	if (!user_op(d, r, PT_EV_TOUCH, &e, &g))
		return;
	if (e.len > 4 * M1)
		e.len = 4 * M1;
	if (g->order == 0 && e.len > M1 && !(r[6] & 0x40))
		e.len = r[6] & 1 ? K64 : M1;	/* 4K faults cost a page each: keep most touches small */
	e.flags = r[6] & 0x80 ? 0 : PT_ACC_WRITE;
	emit(d, &e);
}

static void op_pageout(struct dec *d, const uint8_t *r)
{
	struct pt_event e;
	if (!user_op(d, r, PT_EV_PAGEOUT, &e, NULL))
		return;
	e.len = 0;	/* pageout names a page: va only */
	emit(d, &e);
	forget_huge(d, e.va, K4);
}

/*
 * The window of an IRQ or a kernel access record: with the record's bit 0x80 of byte 7,
 * the CPU's thread first runs 1..32 stores (or any scheduling points; 1..8 before an
 * IRQ: a lazy-MMU section is a few stores in) into its queued work and stops there, in
 * the middle of a routine (a lazy-MMU section, a break-before-make sequence), and what
 * the record does comes then.  The same events as a sched record before it; one
 * record, so that the fuzzer finds the window in one step.
 */
static void preempt(struct dec *d, unsigned cpu, uint8_t b, unsigned most)
{
	struct thread *t = thread_on(d, cpu);
	if (!(b & 0x80) || !t || d->prog->n + 2 > d->max)
		return;	/* the program keeps to max_ops events */
	struct pt_event e = { .kind = PT_EV_SCHED, .cpu = t->cpu, .tid = t->tid,
			      .op = b & 0x40 ? PT_SCHED_ANY : PT_SCHED_PT_WRITE, .len = 1 + (b & 0x1f) % most };
	emit(d, &e);
}

/* An access to kernel VA (a literal, or one op_access() made): not through an area or
 * kernel huge page an op that may not have run yet is making, changing or freeing. */
static bool kernel_access_ok(const struct dec *d, const struct pt_event *e)
{
	if (e->va < PT_KERNEL_VA_BASE)
		return true;
	for (unsigned i = 0; i < d->narea; i++)
		if (d->area[i].last && e->va >= d->area[i].va && e->va - d->area[i].va < d->area[i].len)
			return false;
	for (unsigned i = 0; i < d->nhset; i++)
		if (d->hset[i].owner && e->va >= d->hset[i].pa && e->va - d->hset[i].pa < d->hset[i].len)
			return false;
	return true;
}

static void op_access(struct dec *d, const uint8_t *r)
{
	struct pt_event e = { .kind = PT_EV_ACCESS, .cpu = (uint16_t)cpu_of(d, r[1]) };
	if (r[6] & 0x80) {
		/* a kernel access: through an area the program made (live or gone) whose
		 * making or freeing surely ran: a kernel address is used only once the
		 * vmalloc that maps it returned (nothing orders an access after an op
		 * still queued: it runs at once) */
		struct area *a = NULL;
		for (unsigned i = 0; i < d->narea && !a; i++)
			if (!d->area[(r[2] + i) % d->narea].last)
				a = &d->area[(r[2] + i) % d->narea];
		if (!a)
			return;
		if (r[7] & 0x80 && d->nthr) {
			/* on the CPU of a thread stopped mid-op (preempt()), through an area
			 * that op cannot be making: one an op that ran made.  Nothing but an
			 * interrupt runs there then: the model emits it as a handler's access,
			 * inside irq_enter/irq_exit (mm_model_interrupt()) */
			struct thread *t = &d->thr[r[4] % d->nthr];
			a = NULL;
			for (unsigned i = 0; i < d->narea && !a; i++) {
				struct area *c = &d->area[(r[2] + i) % d->narea];
				if (c->live && !c->last)
					a = c;
			}
			if (!a)
				return;
			e.cpu = t->cpu;
		}
		e.va = a->va + offset_in(a->len, r[3], r[5]);
		/* a gone area's VA that an op which may not have run yet maps again: no caller
		 * holds that address before the op returns (a default-model I6 used-before-
		 * barrier found by fuzzing: a stale pointer into a vfree'd area, its VA re-used
		 * by another thread's vmalloc stopped before its barriers) */
		if (!kernel_access_ok(d, &e))
			return;
		preempt(d, e.cpu, r[7], 32);	/* nothing without the window bit or a thread */
	} else {
		uint64_t len;
		uint8_t asid = 1;
		if (!user_range(d, r, &asid, &e.va, &len, NULL))
			return;
		e.asid = asid;
	}
	e.flags = r[6] & 1 ? PT_ACC_WRITE : 0;
	emit(d, &e);
}

/* ---- the kernel: vmalloc space, hugetlb, the linear map ---- */

static uint64_t kslot_va(unsigned slot) { return KSLOT_BASE + (uint64_t)slot * KSLOT_SIZE; }

/*
 * What an interrupt handler may do to kernel page tables.  vmalloc() and vmap() sleep
 * (might_sleep(), GFP_KERNEL table and page allocations, init_mm.page_table_lock),
 * vunmap() is BUG_ON(in_interrupt()), and vfree() in interrupt context only queues the
 * area for a worker (vfree_atomic()): none of them runs in a handler.  What a handler
 * really does is change entries of kernel page tables that exist already, without
 * allocating and without init_mm's page-table lock: apply_to_existing_page_range() and
 * set_memory_valid() of the linear map under DEBUG_PAGEALLOC (a GFP_ATOMIC allocation
 * maps its pages back in), __set_fixmap() from GHES: each a __set_pte() and its
 * queue_pte_barriers(), the store Catalin Marinas' counter-example on seed 000 #11 is
 * about.  The grammar's IRQ record stands for that: an interrupt's vmap of a few 4K
 * pages (no blocks) at VA no area ever had (so no lazy purge and no lock: the VA
 * allocator's tree is not what is modelled here), all inside 2M ranges whose PTE table
 * an op that has run already made: a 4K or contpte vmalloc / vmap issued before the
 * program had threads (it ran at once, to the end), and that no huge mapping issued
 * since may have replaced (pmd_free_pte_page()).  Kernel page tables are never freed
 * otherwise.  The model's handler then takes no lock at all and allocates nothing.
 */
static bool ktable_has(const struct dec *d, uint64_t va)
{
	for (unsigned i = 0; i < d->nktab; i++)
		if (d->ktab[i] == va >> 21)
			return true;
	return false;
}

static void ktables_note(struct dec *d, const struct pt_event *e, bool irq)
{
	uint64_t first = e->va >> 21, last = (e->va + e->len - 1) >> 21;
	if (d->nkused < MAX_KUSED)
		d->kused[d->nkused++] = (struct bank){ e->va, e->len, 0 };
	else
		d->kused_full = true;	/* no more interrupts: the VA they would use is not known free */
	if (e->flags & PT_MAP_HUGE) {
		/* a huge mapping may free an empty PTE table it replaces with a block */
		for (unsigned i = 0; i < d->nktab;)
			if (d->ktab[i] >= first && d->ktab[i] <= last)
				d->ktab[i] = d->ktab[--d->nktab];
			else
				i++;
		return;
	}
	if (irq || context_of(d, e->cpu, false) != 0)
		return;	/* it may not have run yet */
	for (uint64_t r = first; r <= last && d->nktab < MAX_KTABLES; r++)
		if (!ktable_has(d, r << 21))
			d->ktab[d->nktab++] = r;
}

/* May an interrupt's handler map [va, va + len) (see above)? */
static bool irq_vmap_ok(const struct dec *d, const struct pt_event *e)
{
	if (d->kused_full || e->kind != PT_EV_VMAP || e->flags & PT_MAP_HUGE)
		return false;
	if (!e->len || e->len > K64 || e->va & (K4 - 1) || e->va < VMALLOC_START ||
	    e->va + e->len > VMALLOC_END || e->va + e->len < e->va)
		return false;
	if (!ktable_has(d, e->va) || !ktable_has(d, e->va + e->len - 1))
		return false;
	for (unsigned i = 0; i < d->nkused; i++)
		if (e->va < d->kused[i].pa + d->kused[i].len && d->kused[i].pa < e->va + e->len)
			return false;
	return true;
}

/* A new vm area [va, va + len): the allocator hands out free VA only (lazily freed VA is
 * purged first: alloc_vmap_area()'s purge-and-retry). */
static bool area_new(struct dec *d, const struct pt_event *e, bool irq)
{
	unsigned slot = d->narea;
	if (e->va & (K4 - 1) || e->va < VMALLOC_START || e->len > VMALLOC_END - e->va || !e->len)
		return false;	/* what vmalloc's allocator can hand out */
	if (irq && !irq_vmap_ok(d, e))
		return false;
	for (unsigned i = 0; i < d->nhset; i++)
		if (e->va < d->hset[i].pa + d->hset[i].len && d->hset[i].pa < e->va + e->len)
			return false;	/* a kernel huge mapping holds that VA */
	for (unsigned i = 0; i < d->narea; i++) {
		struct area *a = &d->area[i];
		if ((a->live || a->reserved) && e->va < a->va + a->len && a->va < e->va + e->len)
			return false;
		if (!a->live && !a->reserved && (a->va == e->va || slot == d->narea))
			slot = i;	/* a dead one gives its entry */
	}
	if (slot == MAX_AREAS)
		return false;
	if (slot == d->narea)
		d->narea++;
	uint32_t ctx = context_of(d, e->cpu, irq);
	d->area[slot] = (struct area){ e->va, e->len, ctx, ctx, e->kind == PT_EV_VMALLOC,
				       e->flags & PT_MAP_HUGE, true, false };
	ktables_note(d, e, irq);
	return true;
}

static bool kernel_area(struct dec *d, const uint8_t *r, bool irq, struct pt_event *e)
{
	static const uint64_t lens[] = { K4, 4 * K4, K64 - K4, K64, 2 * K64, M1, M2, 2 * M2 };
	unsigned slot = r[2] % KSLOTS;
	e->len = lens[r[3] % 8];
	if (irq && e->len > K64)
		e->len = K4;
	e->flags = r[4] & 1 ? PT_MAP_HUGE : 0;
	e->va = kslot_va(slot);
	if (!(e->flags & PT_MAP_HUGE) && (r[4] & 6) == 6)
		e->va += r[4] & 8 ? K64 : K4;	/* page-aligned only */
	return area_new(d, e, irq);
}

static bool op_vmalloc(struct dec *d, const uint8_t *r, bool irq, struct pt_event *e)
{
	e->kind = PT_EV_VMALLOC;
	if (!kernel_area(d, r, irq, e))
		return false;
	e->node = r[5] & 1;
	return true;
}

static bool op_vmap(struct dec *d, const uint8_t *r, bool irq, struct pt_event *e)
{
	static const uint64_t pa_skew[] = { 0, 0, K4, K64, M2, M2 + K64 };
	e->kind = PT_EV_VMAP;
	if (!kernel_area(d, r, irq, e))
		return false;
	e->pa = VMAP_PA_BASE + (uint64_t)(r[5] % 16) * 2 * M2 + pa_skew[r[6] % 6];
	e->prot = r[7] & 1 ? PT_PROT_READ : RW;
	return true;
}

/* The area is freed by e.  Freed by a queued op, it is gone only when its thread runs
 * that op, which the decoder cannot know: its VA is never handed out again. */
static void area_gone(struct dec *d, struct area *a, const struct pt_event *e, bool irq)
{
	a->live = false;
	a->last = context_of(d, e->cpu, irq);
	a->reserved = a->last != 0;
}

/* A live area of the kind asked for (vmap for vunmap, vmalloc for vfree), or any with allow_contract. */
static struct area *live_area(struct dec *d, uint8_t b, bool alloc)
{
	for (unsigned i = 0; i < d->narea; i++) {
		struct area *a = &d->area[(b + i) % d->narea];
		if (a->live && (a->alloc == alloc || d->o->allow_contract))
			return a;
	}
	return NULL;
}

static bool op_vunmap(struct dec *d, const uint8_t *r, bool irq, struct pt_event *e)
{
	struct area *a = live_area(d, r[2], false);
	if (!a || !order_after(d, a->owner, e, irq))
		return false;
	e->kind = PT_EV_VUNMAP;
	e->va = a->va;
	e->len = a->len;
	if (d->o->allow_contract && (r[3] & 1)) {
		/* vunmap_range() of a part, which may cut a contpte or PMD block: the caller's bug */
		uint64_t off = offset_in(a->len, r[4], r[5]);
		e->va = a->va + off;
		e->len = length_pick(a->len - off, r[6], r[5]);
	}
	if (e->va == a->va)
		area_gone(d, a, e, irq);
	return true;
}

static bool op_vfree(struct dec *d, const uint8_t *r, bool irq, struct pt_event *e)
{
	struct area *a = live_area(d, r[2], true);
	if (!a || !order_after(d, a->owner, e, irq))
		return false;
	e->kind = PT_EV_VFREE;
	e->va = a->va;
	area_gone(d, a, e, irq);
	return true;
}

static void op_kernel(struct dec *d, const uint8_t *r, unsigned what)
{
	struct pt_event e = { .cpu = (uint16_t)cpu_of(d, r[1]) };
	bool ok;
	switch (what) {
	case 0: ok = op_vmalloc(d, r, false, &e); break;
	case 1: ok = op_vmap(d, r, false, &e); break;
	case 2: ok = op_vunmap(d, r, false, &e); break;
	default: ok = op_vfree(d, r, false, &e); break;
	}
	if (ok)
		emit(d, &e);
	else
		d->prog->dropped++;
}

/*
 * An interrupt on a CPU whose handler maps a few kernel pages into page tables that exist
 * (irq_vmap_ok(): what a handler can do, Catalin Marinas' counter-example on seed 000
 * #11).  Its VA is picked inside the 2M ranges known to have a table, at an offset no
 * area ever had, so that most IRQ records land; the interrupted thread may be anywhere,
 * in the middle of a lazy-MMU section in particular.
 *
 * Such a handler takes no lock and allocates nothing, so it never waits for what a
 * thread suspended on any CPU holds: an interrupt may come on any CPU.  A biased record
 * sends it to the CPU of one of the program's threads, if it has any (whatever its CPU
 * byte says): on top of that thread is where Catalin's interleaving is.
 */

static void op_irq(struct dec *d, const uint8_t *r)
{
	static const uint64_t lens[] = { K4, K4, 2 * K4, 4 * K4, K4, 8 * K4, K64 - K4, K64 };
	static const uint64_t pa_skew[] = { 0, 0, K4, K64, M2, M2 + K64 };
	struct pt_event e = { .kind = PT_EV_VMAP, .cpu = (uint16_t)cpu_of(d, r[1]) };
	if (d->nthr)
		e.cpu = d->thr[r[1] % d->nthr].cpu;	/* on top of a thread */
	if (!d->nktab) {
		d->prog->dropped++;
		return;
	}
	uint64_t region = d->ktab[r[2] % d->nktab] << 21;
	e.len = lens[r[4] % 8];
	e.pa = VMAP_PA_BASE + (uint64_t)(r[5] % 16) * 2 * M2 + pa_skew[r[6] % 6];
	/* the first free offset from the one the record names: 64K steps, then a page or two in */
	bool ok = false;
	for (unsigned i = 0; i < 32 && !ok; i++) {
		e.va = region + ((uint64_t)((r[3] & 31) + i) % 32) * K64 + (uint64_t)(r[3] >> 5) % 4 * K4;
		ok = e.va + e.len <= region + M2 && area_new(d, &e, true);
	}
	if (!ok) {
		d->prog->dropped++;
		return;
	}
	e.op = PT_OP_VMAP;
	e.kind = PT_EV_IRQ;	/* the IRQ record carries va, len, pa */
	preempt(d, e.cpu, r[7], 8);
	emit(d, &e);
}

/*
 * A kernel huge page has one owner at a time: nothing serializes two ops on one
 * init_mm range (no mmap lock, no fault mutex), so a clear and a set racing on it would
 * be the caller's bug (the default model reports I5 / I10 on one: a contpte range half
 * cleared and set meanwhile).  Each op on it makes its context the owner, and the next
 * op goes after it (order_after()).  User hugetlb ops are serialized by their locks.
 */
static void huge_owner(struct dec *d, struct bank *h, const struct pt_event *e)
{
	if (h->pa >= PT_KERNEL_VA_BASE)
		h->owner = context_of(d, e->cpu, false);
}

/* hugetlb: the kernel sets its own huge pages and changes only those it set (and did not clear). */
static bool huge_ok(struct dec *d, struct pt_event *e)
{
	unsigned i;
	/* on init_mm only set_huge_pte_at() and clear_flush() have callers (vmap of huge
	 * pages, seed 000 #09); wrprotect and access flags are for user hugetlb faults */
	if (e->va >= PT_KERNEL_VA_BASE && (e->op == PT_HUGE_WRPROTECT || e->op == PT_HUGE_ACCESS_FLAGS))
		return false;
	for (i = 0; i < d->nhset; i++)
		if (d->hset[i].pa == e->va && d->hset[i].len == e->len)
			break;
	for (unsigned j = 0; j < d->nhset && i == d->nhset; j++)
		if (e->va < d->hset[j].pa + d->hset[j].len && d->hset[j].pa < e->va + e->len)
			return false;	/* another size over the same VA */
	if (e->op == PT_HUGE_SET) {
		if (i == d->nhset) {
			if (d->nhset == MAX_HUGE || e->va & (e->len - 1))
				return false;
			for (unsigned j = 0; j < d->narea; j++)
				if ((d->area[j].live || d->area[j].reserved) &&
				    e->va < d->area[j].va + d->area[j].len && d->area[j].va < e->va + e->len)
					return false;	/* a vm area holds that VA (or a queued free of it) */
			for (unsigned j = 0; j < d->nreg; j++)
				if (e->va < d->reg[j].va + d->reg[j].len && d->reg[j].va < e->va + e->len)
					return false;	/* an anonymous mapping does */
			d->hset[d->nhset++] = (struct bank){ e->va, e->len, context_of(d, e->cpu, false) };
			return true;
		}
		if (!order_after(d, d->hset[i].owner, e, false))
			return false;
		huge_owner(d, &d->hset[i], e);
		d->hset[i].gone = false;
		return true;
	}
	if (i == d->nhset || d->hset[i].gone || !order_after(d, d->hset[i].owner, e, false))
		return false;
	huge_owner(d, &d->hset[i], e);
	if (e->op == PT_HUGE_CLEAR) {
		if (d->hset[i].owner)
			d->hset[i].gone = true;	/* a set of it again waits for this clear */
		else
			d->hset[i] = d->hset[--d->nhset];
	}
	return true;
}

static void op_hugetlb(struct dec *d, const uint8_t *r)
{
	struct pt_event e = { .kind = PT_EV_HUGETLB, .cpu = (uint16_t)cpu_of(d, r[1]) };
	unsigned kernel = (r[2] & 0x80) ? 1 : 0, cls = r[3] % HUGE_CLASSES, slot = r[4] % HUGE_SLOTS;
	if (cls == 3 && kernel)
		cls = 2;	/* no 1G kernel blocks: they would cover the vmalloc slots */
	if (cls == 3)
		slot %= 2;
	uint64_t sz = huge_size[cls];
	uint64_t base = kernel ? KHUGE_BASE : UHUGE_BASE;
	e.va = base + (uint64_t)cls * 4 * G1 + (uint64_t)slot * sz;
	e.len = sz;
	if (!kernel)
		e.asid = 1;
	if (r[6] & 0x80 && d->nhset) {
		/* a page the program set (and did not clear): a CoW replacement, a clear, a
		 * wrprotect of it, wherever it is: what most hugetlb ops are about */
		const struct bank *h = &d->hset[r[4] % d->nhset];
		e.va = h->pa;
		e.len = h->len;
		e.asid = h->pa >= PT_KERNEL_VA_BASE ? 0 : 1;
		if (d->nthr)
			e.cpu = d->thr[r[1] % d->nthr].cpu;	/* by a thread: it may stop mid-op */
	}
	switch (r[5] % 8) {
	case 0: case 1: case 2:
		e.op = PT_HUGE_SET;	/* a fault, or (when present) a CoW replacement: set_huge_pte_at() */
		break;
	case 3: case 4:
		e.op = PT_HUGE_CLEAR;
		break;
	case 5:
		e.op = PT_HUGE_WRPROTECT;
		break;
	default:
		e.op = PT_HUGE_ACCESS_FLAGS;
		e.prot = RW;
		break;
	}
	bool present = false;
	for (unsigned i = 0; i < d->nhset; i++)
		present |= d->hset[i].pa == e.va && d->hset[i].len == e.len;
	/* a new page over a live contiguous range (64K, 32M): set_huge_pte_at() breaks it
	 * itself (clear_flush()); over a single PMD or PUD entry only after the caller's
	 * huge_ptep_clear_flush(), as hugetlb_wp() does, which a set record is not */
	if (e.op == PT_HUGE_SET && present && r[7] & 1 && (e.len == K64 || e.len == M32))
		e.pa = VMAP_PA_BASE + (uint64_t)(r[7] >> 1 & 1) * e.len;
	if (!huge_ok(d, &e)) {
		d->prog->dropped++;
		return;
	}
	emit(d, &e);
}

static void op_map_mem(struct dec *d, const uint8_t *r)
{
	static const uint64_t lens[] = { M2, 2 * M2 + K4, K64, M2 + K64, M32, BANK_SIZE, 2 * K4, M1 };
	static const uint64_t skew[] = { 0, 0, K4, K64, M2, M2 + K4, M2 - K4, K64 + K4 };
	struct pt_event e = { .kind = PT_EV_MAP_MEM, .cpu = (uint16_t)cpu_of(d, r[1]) };
	unsigned bank = r[2] % MAX_BANKS;
	e.pa = BANK_PA_BASE + (uint64_t)bank * BANK_SIZE + skew[r[3] % 8];
	e.len = lens[r[4] % 8];
	e.flags = r[5] % 4 == 0 ? 0 : r[5] % 4 == 3 ? PT_MAP_HUGE | PT_MAP_NOCONT : PT_MAP_HUGE;
	if (!(e.flags & PT_MAP_HUGE) && e.len > 2 * M2)
		e.len = M2;	/* page by page: keep it cheap */
	if (e.pa + e.len > BANK_PA_BASE + (uint64_t)(bank + 1) * BANK_SIZE)
		e.len = BANK_PA_BASE + (uint64_t)(bank + 1) * BANK_SIZE - e.pa;
	/* memory is added once (boot, hotplug); the linear map of live memory is never remapped */
	for (unsigned i = 0; i < d->nbank; i++)
		if (e.pa < d->bank[i].pa + d->bank[i].len && d->bank[i].pa < e.pa + e.len) {
			d->prog->dropped++;
			return;
		}
	if (d->nbank == MAX_BANKS) {
		d->prog->dropped++;
		return;
	}
	d->bank[d->nbank++] = (struct bank){ e.pa, e.len, 0 };
	emit(d, &e);
}

/* ---- threads and the schedule ---- */

static void op_thread(struct dec *d, const uint8_t *r)
{
	unsigned cpu = cpu_of(d, r[1]);
	if (d->nthr == MAX_THREADS || thread_on(d, cpu)) {
		d->prog->dropped++;
		return;
	}
	struct pt_event e = { .kind = PT_EV_THREAD, .cpu = (uint16_t)cpu, .asid = asid_of(r[7]) };
	e.tid = TID_BASE + d->ntid++;
	d->thr[d->nthr++] = (struct thread){ e.tid, (uint16_t)cpu };
	emit(d, &e);
}

static void sched_done(struct dec *d, const struct pt_event *e);

static void op_sched(struct dec *d, const uint8_t *r)
{
	static const uint8_t on[] = { PT_SCHED_ANY, PT_SCHED_ANY, PT_SCHED_PT_WRITE, PT_SCHED_PT_WRITE,
				      PT_SCHED_LOCK, PT_SCHED_READ, PT_SCHED_TLBI, PT_SCHED_DSB,
				      PT_SCHED_UNLOCK, PT_SCHED_PAGE_FREE, PT_SCHED_PAGE_ALLOC, PT_SCHED_ISB,
				      PT_SCHED_ACCESS, PT_SCHED_DMB, PT_SCHED_ANY, PT_SCHED_PT_WRITE };
	if (!d->nthr) {
		d->prog->dropped++;
		return;
	}
	struct thread *t = &d->thr[r[2] % d->nthr];
	struct pt_event e = { .kind = PT_EV_SCHED, .cpu = t->cpu, .tid = t->tid, .op = on[r[3] % 16] };
	/* a few steps, a window into the middle of a routine; 0: to the end of its queue */
	e.len = r[4] % 4 == 0 ? 0 : r[4] % 4 == 1 ? 1 + r[5] % 4 : 1 + r[5] % 32;
	emit(d, &e);
	sched_done(d, &e);
}

static void op_migrate(struct dec *d, const uint8_t *r)
{
	if (!d->nthr || d->cpus < 2) {
		d->prog->dropped++;
		return;
	}
	struct thread *t = &d->thr[r[2] % d->nthr];
	unsigned to = (t->cpu + 1 + r[3] % (d->cpus - 1)) % d->cpus;
	if (thread_on(d, to)) {
		d->prog->dropped++;	/* one scheduled thread per CPU */
		return;
	}
	struct pt_event e = { .kind = PT_EV_MIGRATE, .cpu = t->cpu, .tid = t->tid, .len = to };
	t->cpu = (uint16_t)to;
	emit(d, &e);
}

/* ---- literal records ---- */

static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (unsigned s = 0; s < 64 && *p < end; s += 7) {
		uint8_t b = *(*p)++;
		*v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* A sched to the end of its queue (steps=0) of the program's only thread: what it was
 * making or freeing has run (no other thread can hold a lock it would wait for).  Not once an
 * op was issued directly on another CPU while the thread existed: that op may have waited for
 * a lock the thread held, as the CPU's implicit thread, and hold a lock the thread then waits
 * for, so the thread stops short of its queue's end (a default-model I6 used-before-barrier
 * found by fuzzing, session 19: a direct mremap took the mmap lock and waited for the PTL of
 * the thread's stopped pageout; the thread's munmap then waited for the mmap lock, and its
 * vmalloc, queued behind, had not run when the access came). */
static void sched_done(struct dec *d, const struct pt_event *e)
{
	if (e->kind != PT_EV_SCHED || e->len || d->nthr != 1 || d->implicit_ops)
		return;
	for (unsigned i = 0; i < d->narea; i++)
		if (d->area[i].last == e->tid)
			d->area[i].last = 0;
	for (unsigned i = 0; i < d->nhset; i++)
		if (d->hset[i].owner == e->tid)
			d->hset[i].owner = 0;
}

static bool user_kind(unsigned k)
{
	return k == PT_EV_MMAP || k == PT_EV_MUNMAP || k == PT_EV_MREMAP || k == PT_EV_MPROTECT ||
	       k == PT_EV_MADVISE || k == PT_EV_TOUCH || k == PT_EV_PAGEOUT;
}

/* Would the decoder's grammar emit e (a literal)?  Updates the shadow if so. */
static bool literal_ok(struct dec *d, struct pt_event *e, bool irq)
{
	if (!pt_event_valid(e, d->cpus))
		return false;
	if (user_kind(e->kind)) {
		if (e->asid == 0 || e->va >= PT_USER_VA_END || e->len > PT_PROG_MAX_LEN || e->len2 > PT_PROG_MAX_LEN ||
		    e->va2 >= PT_USER_VA_END)
			return false;
		if (e->kind == PT_EV_TOUCH && e->len > PT_PROG_MAX_TOUCH)
			return false;
		if (e->kind == PT_EV_MMAP && (e->flags & PT_MAP_POPULATE) && e->len > PT_PROG_MAX_TOUCH)
			return false;
		if ((e->kind == PT_EV_MMAP && over_huge(d, e->va, e->len)) ||
		    (e->kind == PT_EV_MREMAP && (over_huge(d, e->va2, e->len2) || over_huge(d, e->va, e->len2))))
			return false;
		if (e->kind == PT_EV_MMAP)
			region_add(d, (uint8_t)e->asid, e->va, e->len, e->prot, e->order);
		if (e->kind == PT_EV_MUNMAP || e->kind == PT_EV_MADVISE || e->kind == PT_EV_PAGEOUT)
			forget_huge(d, e->va, e->kind == PT_EV_PAGEOUT ? K4 : e->len);
		if (e->kind == PT_EV_MREMAP && (e->flags & PT_MREMAP_MAYMOVE) && e->va2)
			region_add(d, (uint8_t)e->asid, e->va2, e->len2, RW, 0);
		return true;
	}
	switch (e->kind) {
	case PT_EV_ACCESS:
		return kernel_access_ok(d, e);
	case PT_EV_VMALLOC:
	case PT_EV_VMAP: {
		if (e->kind == PT_EV_VMAP && e->pa & (K4 - 1))
			return false;
		/* vmap() maps pages its caller owns: device-like memory below the page allocator's
		 * range or a hotplugged bank it never reaches, never a page the allocator may hand
		 * out again (and free under the vmap's mapping) */
		if (e->kind == PT_EV_VMAP && !(e->pa + e->len <= ALLOC_PA_BASE || e->pa >= BANK_PA_BASE))
			return false;
		if (e->len == 0 || e->len > (e->flags & PT_MAP_HUGE ? PT_PROG_MAX_KHUGE : PT_PROG_MAX_KLEN) ||
		    e->va < PT_KERNEL_VA_BASE)
			return false;
		return area_new(d, e, irq);
	}
	case PT_EV_VUNMAP:
	case PT_EV_VFREE: {
		bool alloc = e->kind == PT_EV_VFREE;
		for (unsigned i = 0; i < d->narea; i++) {
			struct area *a = &d->area[i];
			if (!a->live || a->va != e->va)
				continue;
			if (alloc ? !a->alloc && !d->o->allow_contract
				  : (a->alloc || e->len != a->len) && !d->o->allow_contract)
				return false;
			if (!order_after(d, a->owner, e, irq))
				return false;
			area_gone(d, a, e, irq);
			return true;
		}
		return d->o->allow_contract;
	}
	case PT_EV_MAP_MEM:
		if (e->pa & (K4 - 1) || e->va & (K4 - 1) || e->len & (K4 - 1))
			return false;	/* memblock ranges are page-aligned */
		if (e->len == 0 || e->len > (e->flags & PT_MAP_HUGE ? PT_PROG_MAX_KHUGE : PT_PROG_MAX_KLEN) ||
		    d->nbank == MAX_BANKS)
			return false;
		for (unsigned i = 0; i < d->nbank; i++)
			if (e->pa < d->bank[i].pa + d->bank[i].len && d->bank[i].pa < e->pa + e->len)
				return false;
		d->bank[d->nbank++] = (struct bank){ e->pa, e->len, 0 };
		return true;
	case PT_EV_HUGETLB:
		return e->len <= G1 && huge_ok(d, e);
	case PT_EV_THREAD:
		/* a tid the grammar could give: not a CPU's own thread, and not one that reads as
		 * a CPU's implicit context (IMPLICIT | cpu), which order_after() would route by */
		if (e->tid < d->cpus || e->tid & IMPLICIT || d->nthr == MAX_THREADS || thread_on(d, e->cpu))
			return false;
		for (unsigned i = 0; i < d->nthr; i++)
			if (d->thr[i].tid == e->tid)
				return false;
		d->thr[d->nthr++] = (struct thread){ e->tid, e->cpu };
		if (e->tid >= TID_BASE && e->tid - TID_BASE >= d->ntid)
			d->ntid = e->tid - TID_BASE + 1;
		return true;
	case PT_EV_SCHED:
	case PT_EV_MIGRATE:
		for (unsigned i = 0; i < d->nthr; i++) {
			struct thread *t = &d->thr[i];
			if (t->tid != e->tid)
				continue;
			if (e->kind == PT_EV_SCHED) {
				sched_done(d, e);
				return true;
			}
			if (e->cpu != t->cpu || e->len >= d->cpus || thread_on(d, (unsigned)e->len))
				return false;
			t->cpu = (uint16_t)e->len;
			return true;
		}
		return false;
	case PT_EV_IRQ: {
		/* the handler's op obeys the rules of the op */
		if (e->op != PT_OP_VMAP)
			return false;	/* a handler maps into tables that exist, nothing else */
		struct pt_event in = *e;
		in.kind = PT_EV_VMAP;
		in.op = 0;
		return literal_ok(d, &in, true);
	}
	default:
		return false;
	}
}

static void op_literal(struct dec *d, const uint8_t *q, const uint8_t *end)
{
	struct pt_event e = { 0 };
	if (end - q < 3)
		goto drop;
	e.kind = q[0];
	e.cpu = q[1];
	e.op = q[2];
	q += 3;
	const struct pt_kind_schema *s = pt_kind_schema(e.kind);
	if (!s || e.kind == PT_EV_COMMENT)
		goto drop;
	for (const struct pt_key *k = s->keys; k->name; k++) {
		uint64_t v;
		if (!varint(&q, end, &v) || v > pt_field_max(k->field))
			goto drop;
		pt_event_set(&e, k->field, v);
	}
	d->literal = true;
	bool ok = q == end && literal_ok(d, &e, false);
	d->literal = false;
	if (!ok)
		goto drop;
	emit(d, &e);
	return;
drop:
	d->prog->dropped++;
}

/* ---- the decoder ---- */

size_t pt_program_record_len(const uint8_t *data, size_t size, size_t pos)
{
	size_t len = data[pos] == PT_PROG_LITERAL ? (pos + 1 < size ? 2u + data[pos + 1] : 1u) : PT_PROG_RECORD;
	return len < size - pos ? len : size - pos;
}

static void record(struct dec *d, const uint8_t *r)
{
	/* tag % 32: the common ops weighted up */
	switch (r[0] % 32) {
	case 0: case 1: case 2: op_mmap(d, r); break;
	case 3: case 4: op_munmap(d, r); break;
	case 5: case 6: case 7: op_mremap(d, r); break;
	case 8: case 9: op_mprotect(d, r); break;
	case 10: op_madvise(d, r); break;
	case 11: case 12: case 13: op_touch(d, r); break;
	case 14: op_pageout(d, r); break;
	case 15: case 16: op_kernel(d, r, 0); break;	/* vmalloc */
	case 17: op_kernel(d, r, 1); break;		/* vmap */
	case 18: op_kernel(d, r, 2); break;		/* vunmap */
	case 19: op_kernel(d, r, 3); break;		/* vfree */
	case 20: op_hugetlb(d, r); break;
	case 21: op_map_mem(d, r); break;
	case 22: case 23: op_thread(d, r); break;
	case 24: case 25: case 26: op_sched(d, r); break;
	case 27: op_migrate(d, r); break;
	case 28: op_irq(d, r); break;
	default: op_access(d, r); break;	/* 29, 30, 31 (not 0xff: literal) */
	}
}

void pt_program_decode(const uint8_t *data, size_t size, const struct pt_program_opts *o, struct pt_program *p)
{
	static const struct pt_program_opts defaults = { 0 };
	struct dec *d = calloc(1, sizeof(*d));
	if (!d)
		abort();
	d->o = o ? o : &defaults;
	d->prog = p;
	p->n = 0;
	p->dropped = 0;
	pt_header_default(&p->h);
	snprintf(p->h.method, sizeof(p->h.method), "fuzz");
	d->cpus = size ? 1u + (data[0] & 3u) : 1u;
	p->h.cpus = d->cpus;
	unsigned max = d->o->max_ops ? d->o->max_ops : PT_PROG_MAX_OPS;
	size_t pos = 1;
	d->max = max;
	for (unsigned nrec = 0; pos < size && nrec < max && p->n < max; nrec++) {
		size_t len = pt_program_record_len(data, size, pos);
		if (data[pos] == PT_PROG_LITERAL) {
			op_literal(d, data + pos + 2 > data + size ? data + size : data + pos + 2, data + pos + len);
		} else {
			uint8_t r[PT_PROG_RECORD] = { 0 };
			memcpy(r, data + pos, len);
			record(d, r);
		}
		pos += len;
	}
	free(d);
}

/* ---- the encoder ---- */

static void put_varint(uint8_t *buf, size_t *n, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		buf[(*n)++] = b | (v ? 0x80 : 0);
	} while (v);
}

uint8_t *pt_program_encode(const struct pt_header *h, const struct pt_event *ev, unsigned n, size_t *size,
			   unsigned *dropped, char *why, size_t why_size)
{
	if (h->cpus < 1 || h->cpus > PT_PROG_MAX_CPUS) {
		snprintf(why, why_size, "the trace has %u CPUs: a fuzz input has 1 to %u", h->cpus, PT_PROG_MAX_CPUS);
		return NULL;
	}
	/* each literal: 2 + 3 + at most 10 bytes per key */
	size_t cap = 1 + (size_t)n * (5 + 10 * PT_F_COUNT), len = 0;
	uint8_t *buf = malloc(cap);
	if (!buf)
		abort();
	buf[len++] = (uint8_t)(h->cpus - 1);
	for (unsigned i = 0; i < n; i++) {
		const struct pt_event *e = &ev[i];
		if (e->kind == PT_EV_COMMENT)
			continue;
		const struct pt_kind_schema *s = pt_kind_schema(e->kind);
		if (!s || (!s->ops_level && e->kind != PT_EV_ACCESS && e->kind != PT_EV_MIGRATE)) {
			snprintf(why, why_size, "event %u (%s) is arch-level: a fuzz input holds ops-level events, "
				 "threads, sched, migrate, irq and access only", i, s ? s->name : "?");
			free(buf);
			return NULL;
		}
		size_t start = len;
		len += 2;
		buf[len++] = e->kind;
		buf[len++] = (uint8_t)e->cpu;
		buf[len++] = e->op;
		for (const struct pt_key *k = s->keys; k->name; k++)
			put_varint(buf, &len, pt_event_get(e, k->field));
		buf[start] = PT_PROG_LITERAL;
		buf[start + 1] = (uint8_t)(len - start - 2);
	}
	/* what the decoder keeps of it */
	if (dropped) {
		struct pt_program p;
		pt_program_init(&p);
		pt_program_decode(buf, len, &(struct pt_program_opts){ .max_ops = n + 1 }, &p);
		*dropped = p.dropped;
		pt_program_free(&p);
	}
	*size = len;
	return buf;
}
