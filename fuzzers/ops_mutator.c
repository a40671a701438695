/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ops_mutator.c - structure-aware mutation of ops-level fuzz inputs
 * (ops_mutator.h), and, in the libFuzzer build, the LLVMFuzzerCustomMutator /
 * LLVMFuzzerCustomCrossOver hooks over it.
 */
#include "ops_mutator.h"

#include <stdlib.h>
#include <string.h>

#include "program.h"

#define MAX_RECORDS 512

static const char *const names[PTM_COUNT] = {
	"insert", "delete", "duplicate", "swap", "split", "retarget", "move-cpu", "schedule", "cpus", "tweak",
	"window",
};

const char *ptm_name(enum ptm_kind k) { return k < PTM_COUNT ? names[k] : "?"; }

static uint64_t next(uint64_t *s)
{
	/* xorshift64*: deterministic from the engine's seed */
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x ? x : 0x9e3779b97f4a7c15ull;
	return x * 0x2545f4914f6cdd1dull;
}

static size_t below(uint64_t *s, size_t n) { return n ? (size_t)(next(s) % n) : 0; }

size_t ptm_records(const uint8_t *data, size_t size, size_t *off, size_t max)
{
	size_t n = 0;
	for (size_t pos = 1; pos < size && n < max; pos += pt_program_record_len(data, size, pos))
		off[n++] = pos;
	return n;
}

static size_t rec_len(size_t size, const size_t *off, size_t n, size_t i)
{
	return (i + 1 < n ? off[i + 1] : size) - off[i];
}

/* The tags of program.c's record table: one per kind of record. */
static const uint8_t tag_of_kind[] = {
	0, 3, 5, 8, 10, 11, 14, 15, 17, 18, 19, 20, 21, 22, 24, 27, 28, 29,
};
#define TAG_VMALLOC 15
#define TAG_VMAP 17
#define TAG_HUGETLB 20
#define TAG_THREAD 22
#define TAG_SCHED 24
#define TAG_MIGRATE 27
#define TAG_IRQ 28
#define TAG_ACCESS 29
#define NKINDS (sizeof(tag_of_kind) / sizeof(tag_of_kind[0]))

static bool is_sched(uint8_t tag) { return tag != PT_PROG_LITERAL && tag % 32 >= 24 && tag % 32 <= 26; }

/* Byte values that select boundaries in program.c's tables (offset_in, length_pick, user_addr). */
static uint8_t boundary_byte(uint64_t *s)
{
	static const uint8_t b[] = { 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };
	return b[below(s, sizeof(b))];
}

static size_t insert_at(uint8_t *data, size_t size, size_t max, size_t pos, const uint8_t *rec, size_t len)
{
	if (size + len > max)
		return size;
	memmove(data + pos + len, data + pos, size - pos);
	memcpy(data + pos, rec, len);
	return size + len;
}

static size_t delete_at(uint8_t *data, size_t size, size_t pos, size_t len)
{
	memmove(data + pos, data + pos + len, size - pos - len);
	return size - len;
}

/* ---- windows inside kernel ops ---- */

/* The va of a literal record of kind (its first schema key is va for every kernel kind), or 0. */
static uint64_t literal_va(const uint8_t *r, size_t len)
{
	const struct pt_kind_schema *s = len > 5 ? pt_kind_schema(r[2]) : NULL;
	if (!s || !s->keys[0].name || s->keys[0].field != PT_F_VA)
		return 0;
	uint64_t v = 0;
	for (size_t i = 5, sh = 0; i < len && sh < 64; i++, sh += 7) {
		v |= (uint64_t)(r[i] & 0x7f) << sh;
		if (!(r[i] & 0x80))
			return v;
	}
	return 0;
}

/* What a record is to a window: a kernel op (and its CPU byte), a kernel hugetlb set, a
 * biased 2M or 4M vmalloc / vmap with huge mappings (and its slot byte), a small kernel
 * mapping, a thread. */
struct rec_class { bool kernel, huge_set, huge_map, kmap, thread; uint8_t cpu, slot; };

static struct rec_class classify(const uint8_t *r, size_t len)
{
	struct rec_class c = { 0 };
	if (r[0] == PT_PROG_LITERAL) {
		if (len < 5)
			return c;
		uint8_t kind = r[2];
		c.cpu = r[3];
		c.kmap = kind == PT_EV_VMALLOC || kind == PT_EV_VMAP;
		c.kernel = c.kmap || kind == PT_EV_VUNMAP || kind == PT_EV_VFREE ||
			   (kind == PT_EV_HUGETLB && literal_va(r, len) >= PT_KERNEL_VA_BASE);
		c.huge_set = c.kernel && kind == PT_EV_HUGETLB && r[4] == PT_HUGE_SET;
		c.thread = kind == PT_EV_THREAD;
		return c;
	}
	uint8_t t = r[0] % 32;
	c.cpu = len > 1 ? r[1] : 0;
	c.kmap = t >= TAG_VMALLOC && t <= TAG_VMAP && !(len > 4 && r[4] & 1);	/* not huge: a PTE table */
	c.kernel = (t >= TAG_VMALLOC && t <= 19) || (t == TAG_HUGETLB && len > 2 && r[2] & 0x80);
	c.huge_set = t == TAG_HUGETLB && c.kernel && len > 5 && r[5] % 8 < 3;
	c.huge_map = t >= TAG_VMALLOC && t <= TAG_VMAP && len > 4 && r[4] & 1 && r[3] % 8 >= 6;
	c.slot = len > 2 ? r[2] : 0;
	c.thread = t == TAG_THREAD || t == TAG_THREAD + 1;
	return c;
}

/* A fresh kernel op of the kinds whose middle matters: a 4K-64K vmalloc (a lazy-MMU
 * section), a 2M huge vmalloc (a PTE table freed for a block), a 64K or 32M kernel hugetlb
 * set (a contiguous range). */
static void fresh_kernel_op(uint8_t *rec, uint64_t *rng)
{
	for (unsigned b = 0; b < PT_PROG_RECORD; b++)
		rec[b] = (uint8_t)next(rng);
	switch (below(rng, 3)) {
	case 0:
		rec[0] = TAG_VMALLOC;
		rec[3] = (uint8_t)below(rng, 4);	/* 4K, 16K, 60K, 64K */
		rec[4] &= ~1u;
		break;
	case 1:
		rec[0] = TAG_VMALLOC;
		rec[3] = 6;				/* 2M */
		rec[4] |= 1;
		break;
	default:
		rec[0] = TAG_HUGETLB;
		rec[2] |= 0x80;
		rec[3] = next(rng) & 1 ? 0 : 2;		/* 64K or 32M */
		rec[5] = 0;				/* set */
		rec[6] &= 0x7f;
		break;
	}
}

/*
 * Open a window in the middle of a kernel op K (one of the input's, or a fresh one): a
 * thread record right before it, so that a thread on K's CPU runs K; right after it what
 * that CPU does while the thread is stopped a few stores into K (an IRQ, or a kernel access
 * through an area that surely exists, each with its record's stop-the-thread bit); and, if
 * no small kernel mapping comes before the program's first thread, one at the start, which
 * gives the IRQ its existing PTE table and the access its area.  A kernel hugetlb set K may
 * first get a set again over it with a new page (set_huge_pte_at() breaking a live
 * contiguous range), which the thread then runs.  A huge vmalloc / vmap K gets a 4K vmap
 * and its vunmap in its first 2M at the start, so that a PTE table is there for K to free
 * (pmd_free_pte_page()), and an access that stops the thread a store or few in.  Each
 * piece is a record random mutation makes too; together, four to six records in one step
 * (the windows of lazy-mmu-irq and switch-to-no-dsb, which random inputs hit about once
 * in thousands, and the paths of hugetlb-user-flush-for-kernel and kernel-pgtable-flush-no-isb:
 * a live range set again, a table to free, each caught in the routine's own context; the
 * access that stops the thread is an interrupt's, whose exception entry owes no ISB).  The
 * decoder's contracts still apply to every record.
 */
static size_t window(uint8_t *data, size_t size, size_t max, size_t *off, size_t n, uint64_t *rng)
{
	uint8_t rec[PT_PROG_RECORD];
	size_t k = n;
	/* K among the first records (a program decodes PT_PROG_MAX_OPS of them at most) */
	size_t span = n < PT_PROG_MAX_OPS / 2 ? n : PT_PROG_MAX_OPS / 2;
	if (span && below(rng, 3)) {
		size_t i0 = below(rng, span);
		for (size_t t = 0; t < span && k == n; t++) {
			size_t i = (i0 + t) % span;
			if (classify(data + off[i], rec_len(size, off, n, i)).kernel)
				k = i;
		}
	}
	if (k == n) {
		fresh_kernel_op(rec, rng);
		size_t pos = span ? off[below(rng, span)] : size;
		size_t m = insert_at(data, size, max, pos, rec, PT_PROG_RECORD);
		if (m == size)
			return size;
		size = m;
		n = ptm_records(data, size, off, MAX_RECORDS);
		for (k = 0; k < n && off[k] != pos; k++)
			;
		if (k == n)
			return size;
	}
	size_t klen = rec_len(size, off, n, k), kpos = off[k], after = kpos + klen;
	struct rec_class c = classify(data + kpos, klen);
	bool front = true;
	for (size_t i = 0; i < k && front; i++) {
		struct rec_class p = classify(data + off[i], rec_len(size, off, n, i));
		if (p.thread)
			break;
		front = !p.kmap;
	}

	/* what the CPU does meanwhile (inserted first: the highest offset) */
	for (unsigned b = 0; b < PT_PROG_RECORD; b++)
		rec[b] = (uint8_t)next(rng);
	if (c.huge_set || next(rng) & 1) {
		rec[0] = TAG_ACCESS;
		rec[6] |= 0x80;		/* a kernel access ... */
		rec[7] |= 0x80;		/* ... after stopping the thread */
	} else {
		rec[0] = TAG_IRQ;
		rec[7] |= 0x80;
	}
	if (c.huge_set && next(rng) & 1)
		rec[7] = (uint8_t)((rec[7] & ~0x5fu) | 0x80 | (16 + below(rng, 16)));	/* past the clears */
	if (c.huge_map) {
		rec[0] = TAG_ACCESS;
		rec[6] |= 0x80;
		rec[7] = (uint8_t)(0x80 | below(rng, 4));	/* 1-4 stores in: the table's pmd cleared */
	}
	size_t m = insert_at(data, size, max, after, rec, PT_PROG_RECORD);
	if (m == size)
		return size;
	size = m;
	if (!c.huge_set && !c.huge_map && !below(rng, 4)) {
		/* or the thread, stopped a store or few in, migrates and finishes on another
		 * CPU, which then uses what it mapped (__switch_to()'s dsb(ish) is what makes
		 * the stores visible there): sched, migrate, sched to the end, access, each
		 * inserted at the same offset before the one inserted before it */
		rec[0] = TAG_ACCESS;
		rec[6] |= 0x80;
		rec[7] = (uint8_t)(rec[7] | 0x80);
		memcpy(data + after, rec, PT_PROG_RECORD);	/* the access comes last */
		static const uint8_t steps[3][PT_PROG_RECORD] = {
			{ TAG_SCHED, 0, 0, 2, 1, 0, 0, 0 },	/* sched pt_write, 1 + byte 5 % 4 steps */
			{ TAG_MIGRATE, 0, 0, 0, 0, 0, 0, 0 },	/* to another CPU */
			{ TAG_SCHED, 0, 0, 0, 0, 0, 0, 0 },	/* to the end of its queue */
		};
		uint8_t who = rec[4];	/* the same thread in all four: byte % threads */
		for (int i = 2; i >= 0; i--) {
			memcpy(rec, steps[i], PT_PROG_RECORD);
			rec[2] = who;
			if (i == 0)
				rec[5] = (uint8_t)below(rng, 4);
			if (i == 1)
				rec[3] = (uint8_t)next(rng);
			size = insert_at(data, size, max, after, rec, PT_PROG_RECORD);
		}
		if ((data[0] & 3) == 0)
			data[0] |= 1;	/* a CPU to migrate to */
	}
	size_t tpos = kpos;
	if (c.huge_set && next(rng) & 1) {
		/* set it again with a new page: the thread runs that set */
		for (unsigned b = 0; b < PT_PROG_RECORD; b++)
			rec[b] = (uint8_t)next(rng);
		rec[0] = TAG_HUGETLB;
		rec[2] |= 0x80;
		rec[5] = 0;
		rec[6] |= 0x80;		/* a page the program set */
		rec[7] |= 1;		/* a new page */
		size = insert_at(data, size, max, after, rec, PT_PROG_RECORD);
		tpos = after;
	}
	memset(rec, 0, sizeof(rec));
	rec[0] = TAG_THREAD;
	rec[1] = c.cpu;
	rec[7] = (uint8_t)next(rng);
	size = insert_at(data, size, max, tpos, rec, PT_PROG_RECORD);
	if (front || c.huge_map) {
		for (unsigned b = 0; b < PT_PROG_RECORD; b++)
			rec[b] = (uint8_t)next(rng);
		rec[0] = TAG_VMAP;
		rec[3] = (uint8_t)below(rng, 2);	/* 4K or 16K */
		rec[4] &= ~7u;				/* pages, slot-aligned */
		if (c.huge_map)
			rec[2] = (uint8_t)(c.slot + 1);	/* not in K's slot */
		size = insert_at(data, size, max, 1, rec, PT_PROG_RECORD);
	}
	if (c.huge_map) {
		/* before it: a page mapped in K's first 2M and unmapped, its PTE table left */
		memset(rec, 0, sizeof(rec));
		rec[0] = TAG_VMAP + 1;	/* vunmap of the one area there is */
		size = insert_at(data, size, max, 1, rec, PT_PROG_RECORD);
		rec[0] = TAG_VMAP;
		rec[2] = c.slot;
		size = insert_at(data, size, max, 1, rec, PT_PROG_RECORD);
	}
	return size;
}

/* ---- races around a user op ---- */

/* Insert e as a literal record at pos (pt_program_encode()'s record, without its header). */
static size_t insert_event(uint8_t *data, size_t size, size_t max, size_t pos, const struct pt_event *e,
			   unsigned cpus)
{
	struct pt_header h;
	char why[128];
	size_t n;
	pt_header_default(&h);
	h.cpus = cpus;
	uint8_t *lit = pt_program_encode(&h, e, 1, &n, NULL, why, sizeof(why));
	if (!lit)
		return size;
	size = n > 1 ? insert_at(data, size, max, pos, lit + 1, n - 1) : size;
	free(lit);
	return size;
}

/*
 * A race around a user op U (an mremap, munmap or mprotect of the input, or a fresh
 * mapping, touch and move of a page, a PMD or a PUD): the shapes of the seed-004 races.  The prefix of the input up to U is decoded, so that
 * what comes in names U's exact range and the threads by tid, as literal records: a
 * thread on U's CPU (so that U runs in one) and one on another CPU, then either
 * (a) a pageout of U's range on the other thread, stopped inside its rmap walk (half the
 * time after two locks and the pte read, else 1-3 locks or reads and maybe a read more), U and its thread to the end, a write through U's new range on
 * a third CPU, and the pageout to the end; or (b) a read of U's range on the third CPU
 * first, U stopped after one unlock (past its PTL), a pageout of U's new range on the
 * other thread to the end, then U to the end.  Four CPUs.  The decoder's contracts
 * apply to every record.
 */
static size_t race_window(uint8_t *data, size_t size, size_t max, size_t *off, size_t n, uint64_t *rng)
{
	size_t span = n < PT_PROG_MAX_OPS / 2 ? n : PT_PROG_MAX_OPS / 2, k = n;
	size_t i0 = below(rng, span ? span : 1);
	for (size_t t = 0; t < span && k == n; t++) {
		size_t i = (i0 + t) % span;
		const uint8_t *r = data + off[i];
		unsigned tag = r[0] == PT_PROG_LITERAL ? 0 : r[0] % 32u;
		unsigned kind = r[0] == PT_PROG_LITERAL && rec_len(size, off, n, i) > 2 ? r[2] : 0;
		if ((tag >= 3 && tag <= 9) || kind == PT_EV_MREMAP || kind == PT_EV_MUNMAP || kind == PT_EV_MPROTECT)
			k = i;
	}
	if (k == n || !below(rng, 3)) {
		/* a fresh U: a page, a PMD or a PUD mapped, one page touched, the whole moved
		 * to an address of the same alignment (the seed-004 races' own shapes) */
		static const uint64_t va[3] = { 0x10000000, 0x10000000, 0x40000000 };
		static const uint64_t len[3] = { 0x1000, 0x200000, 0x40000000 };
		static const uint64_t to[3] = { 0x10004000, 0x10400000, 0xc0000000 };
		unsigned w = (unsigned)below(rng, 3);
		struct pt_event e[3] = {
			{ .kind = PT_EV_MMAP, .va = va[w], .len = len[w], .prot = PT_PROT_READ | PT_PROT_WRITE,
			  .asid = 1, .flags = PT_MAP_FIXED },
			{ .kind = PT_EV_TOUCH, .va = va[w], .len = 0x1000, .asid = 1, .flags = PT_ACC_WRITE },
			{ .kind = PT_EV_MREMAP, .va = va[w], .len = len[w], .va2 = to[w], .len2 = len[w], .asid = 1,
			  .flags = PT_MREMAP_MAYMOVE | PT_MREMAP_FIXED },
		};
		size_t pos = span ? off[below(rng, span)] : size, m = size, at[3];
		for (int i = 2; i >= 0; i--) {
			size_t before = m;
			m = insert_event(data, m, max, pos, &e[i], 4);
			at[i] = m - before;
			if (!at[i])
				return m;
		}
		size = m;
		n = ptm_records(data, size, off, MAX_RECORDS);
		for (k = 0; k < n && off[k] != pos + at[0] + at[1]; k++)
			;
		if (k == n)
			return size;
	}
	data[0] |= 3;	/* four CPUs: U's, the racing thread's, the one that touches */
	struct pt_program p;
	pt_program_init(&p);
	size_t upos = off[k], ulen = rec_len(size, off, n, k);
	pt_program_decode(data, upos, NULL, &p);
	unsigned before = p.n;
	uint32_t tid_of[PT_PROG_MAX_CPUS] = { 0 }, next_tid = 16;
	for (unsigned i = 0; i < p.n; i++) {
		const struct pt_event *e = &p.ev[i];
		if (e->kind == PT_EV_THREAD || e->kind == PT_EV_MIGRATE) {
			unsigned cpu = e->kind == PT_EV_THREAD ? e->cpu : (unsigned)e->len;
			for (unsigned c = 0; c < PT_PROG_MAX_CPUS; c++)
				if (tid_of[c] == e->tid)
					tid_of[c] = 0;
			if (cpu < PT_PROG_MAX_CPUS)
				tid_of[cpu] = e->tid;
		}
		if (e->kind == PT_EV_THREAD && e->tid >= next_tid)
			next_tid = e->tid + 1;
	}
	pt_program_decode(data, upos + ulen, NULL, &p);
	struct pt_event u = p.n > before ? p.ev[p.n - 1] : (struct pt_event){ 0 };
	pt_program_free(&p);
	if (u.kind != PT_EV_MREMAP && u.kind != PT_EV_MUNMAP && u.kind != PT_EV_MPROTECT)
		return size;
	unsigned a = u.cpu % PT_PROG_MAX_CPUS, b = (a + 1) % PT_PROG_MAX_CPUS, c = (a + 2) % PT_PROG_MAX_CPUS;
	uint64_t dst = u.kind == PT_EV_MREMAP && u.va2 ? u.va2 : u.va;
	struct pt_event mk[2] = { { 0 } };
	unsigned nmk = 0;
	for (unsigned i = 0; i < 2; i++) {
		unsigned cpu = i ? b : a;
		if (tid_of[cpu])
			continue;
		tid_of[cpu] = next_tid++;
		mk[nmk++] = (struct pt_event){ .kind = PT_EV_THREAD, .cpu = (uint16_t)cpu, .tid = tid_of[cpu],
					      .asid = u.asid };
	}
	struct pt_event sched_a = { .kind = PT_EV_SCHED, .cpu = (uint16_t)a, .tid = tid_of[a], .op = PT_SCHED_ANY };
	struct pt_event sched_b = { .kind = PT_EV_SCHED, .cpu = (uint16_t)b, .tid = tid_of[b], .op = PT_SCHED_ANY };
	struct pt_event pageout = { .kind = PT_EV_PAGEOUT, .cpu = (uint16_t)b, .asid = u.asid };
	struct pt_event touch = { .kind = PT_EV_ACCESS, .cpu = (uint16_t)c, .asid = u.asid };
	/* inserted back to front: after U first, then before it */
	size_t after = upos + ulen;
	if (next(rng) & 1) {
		/* (a) pageout stopped inside its rmap walk, U, a write through the new range */
		size = insert_event(data, size, max, after, &sched_b, 4);
		touch.va = dst;
		touch.flags = PT_ACC_WRITE;
		size = insert_event(data, size, max, after, &touch, 4);
		size = insert_event(data, size, max, after, &sched_a, 4);
		struct pt_event stop = sched_b;
		bool walk = next(rng) & 1;	/* two locks, then the pte read: inside its rmap walk */
		if (walk || next(rng) & 1) {
			stop.op = PT_SCHED_READ;	/* and then a read: past the pte it found */
			stop.len = 1;
			size = insert_event(data, size, max, upos, &stop, 4);
		}
		stop.op = walk || next(rng) & 1 ? PT_SCHED_LOCK : PT_SCHED_READ;
		stop.len = walk ? 2 : 1 + below(rng, 3);
		size = insert_event(data, size, max, upos, &stop, 4);
		pageout.va = u.va;
		size = insert_event(data, size, max, upos, &pageout, 4);
	} else {
		/* (b) U stopped past its PTL, a pageout of the new range meanwhile */
		size = insert_event(data, size, max, after, &sched_a, 4);
		size = insert_event(data, size, max, after, &sched_b, 4);
		pageout.va = dst;
		size = insert_event(data, size, max, after, &pageout, 4);
		struct pt_event stop = sched_a;
		stop.op = PT_SCHED_UNLOCK;
		stop.len = 1;
		size = insert_event(data, size, max, after, &stop, 4);
		touch.va = u.va;
		size = insert_event(data, size, max, upos, &touch, 4);
	}
	for (unsigned i = nmk; i-- > 0;)
		size = insert_event(data, size, max, upos, &mk[i], 4);
	return size;
}

size_t ptm_mutate(uint8_t *data, size_t size, size_t max_size, uint64_t *rng, enum ptm_kind *done)
{
	static size_t off[MAX_RECORDS];
	uint8_t rec[256 + 2];
	if (!*rng)
		*rng = 1;
	if (size == 0) {
		if (!max_size)
			return 0;
		data[0] = (uint8_t)below(rng, 4);
		size = 1;
	}
	size_t n = ptm_records(data, size, off, MAX_RECORDS);
	enum ptm_kind k = (enum ptm_kind)below(rng, PTM_COUNT);
	if (n == 0 && k != PTM_CPUS && k != PTM_WINDOW)
		k = PTM_INSERT;
	size_t i = below(rng, n), j = below(rng, n);
	uint8_t *r = n ? data + off[i] : NULL;
	size_t ri = n ? rec_len(size, off, n, i) : 0;
	bool literal = r && r[0] == PT_PROG_LITERAL;
	if (literal && (k == PTM_SPLIT || k == PTM_RETARGET || k == PTM_SCHEDULE || k == PTM_TWEAK))
		k = PTM_DUPLICATE;	/* literals move as units; byte havoc reaches inside them */
	/* the last record may be cut short by the end of the input: what writes at fixed offsets
	 * inside a record (a literal's cpu byte, a record's address and length bytes) would write
	 * past the input, past the engine's buffer when the input fills it */
	if (r && (k == PTM_SPLIT || k == PTM_RETARGET || k == PTM_MOVE_CPU) && ri < (literal ? 4u : PT_PROG_RECORD))
		k = literal ? PTM_DUPLICATE : PTM_TWEAK;
	switch (k) {
	case PTM_INSERT: {
		for (unsigned b = 0; b < PT_PROG_RECORD; b++)
			rec[b] = (uint8_t)next(rng);
		rec[0] = tag_of_kind[below(rng, NKINDS)];
		size_t pos = n ? (below(rng, n + 1) < n ? off[below(rng, n)] : size) : size;
		size = insert_at(data, size, max_size, pos, rec, PT_PROG_RECORD);
		break;
	}
	case PTM_DELETE:
		size = delete_at(data, size, off[i], ri);
		break;
	case PTM_DUPLICATE:
		memcpy(rec, r, ri);
		size = insert_at(data, size, max_size, j < n ? off[j] : size, rec, ri);
		break;
	case PTM_SWAP: {
		if (i == j)
			break;
		if (i > j) {
			size_t t = i;
			i = j;
			j = t;
		}
		size_t li = rec_len(size, off, n, i), lj = rec_len(size, off, n, j);
		size_t mid = off[j] - off[i] - li;
		uint8_t ri_copy[258], rj_copy[258];
		memcpy(ri_copy, data + off[i], li);
		memcpy(rj_copy, data + off[j], lj);
		memmove(data + off[i] + lj, data + off[i] + li, mid);
		memcpy(data + off[i], rj_copy, lj);
		memcpy(data + off[i] + lj + mid, ri_copy, li);
		break;
	}
	case PTM_SPLIT:
		/* the op twice, each over half: the first from the start, the second from the middle */
		memcpy(rec, r, ri);
		r[4] = 12;	/* length_pick: half of what is left */
		rec[3] = 13;	/* offset_in: the middle */
		rec[4] = 11;	/* to the end */
		size = insert_at(data, size, max_size, off[i] + ri, rec, ri);
		break;
	case PTM_RETARGET:
		r[2 + below(rng, 3)] = next(rng) & 1 ? boundary_byte(rng) : (uint8_t)(0x80 | below(rng, 32));
		break;
	case PTM_MOVE_CPU:
		if (literal)
			r[3] = (uint8_t)below(rng, PT_PROG_MAX_CPUS);	/* the literal's cpu byte */
		else
			r[1] = (uint8_t)(r[1] + 1 + below(rng, 3));
		break;
	case PTM_SCHEDULE: {
		/* a sched record's window moves by one step, or a new slice / migration comes in,
		 * or, right after a slice that may leave a thread suspended mid-op, what its CPU
		 * does meanwhile: an interrupt, or a kernel access (the windows of lazy-mmu-irq
		 * and of a missing ISB after a kernel TLBI) */
		size_t s = n;
		for (size_t t = 0; t < n; t++)
			if (is_sched(data[off[(i + t) % n]])) {
				s = (i + t) % n;
				break;
			}
		if (s < n && next(rng) & 1) {
			uint8_t *q = data + off[s];
			if (rec_len(size, off, n, s) >= 6) {
				q[5] = (uint8_t)(q[5] + (next(rng) & 1 ? 1 : -1));
				if (next(rng) & 1)
					q[3] = (uint8_t)next(rng);	/* what the steps count */
			}
		} else {
			for (unsigned b = 0; b < PT_PROG_RECORD; b++)
				rec[b] = (uint8_t)next(rng);
			size_t pos = off[i];
			switch (below(rng, 8)) {
			case 0: case 1: case 2: case 3: rec[0] = TAG_SCHED; break;
			case 4: rec[0] = TAG_MIGRATE; break;
			default:
				rec[0] = next(rng) & 1 ? TAG_IRQ : TAG_ACCESS;
				rec[6] |= rec[0] == TAG_ACCESS ? 0x80 : 0;	/* a kernel access */
				if (next(rng) & 1)
					rec[7] |= 0x80;	/* after stopping the CPU's thread mid-op */
				if (s < n)
					pos = off[s] + rec_len(size, off, n, s);
				break;
			}
			size = insert_at(data, size, max_size, pos, rec, PT_PROG_RECORD);
		}
		break;
	}
	case PTM_CPUS:
		data[0] = (uint8_t)((data[0] & ~3u) | below(rng, 4));
		break;
	case PTM_WINDOW: {
		/* a kernel op stopped inside, or (a third of the time) a race around a user op */
		size_t m = below(rng, 3) ? size : race_window(data, size, max_size, off, n, rng);
		size = m != size ? m : window(data, size, max_size, off, n, rng);
		break;
	}
	case PTM_TWEAK:
		if (ri > 1)
			r[1 + below(rng, ri - 1)] ^= (uint8_t)(1u << below(rng, 8));
		break;
	default:
		break;
	}
	if (done)
		*done = k;
	return size;
}

size_t ptm_crossover(const uint8_t *a, size_t asize, const uint8_t *b, size_t bsize, uint8_t *out,
		     size_t max_size, uint64_t *rng)
{
	static size_t oa[MAX_RECORDS], ob[MAX_RECORDS];
	if (!asize || !max_size)
		return 0;
	size_t na = ptm_records(a, asize, oa, MAX_RECORDS), nb = ptm_records(b, bsize, ob, MAX_RECORDS);
	size_t cut_a = na ? oa[below(rng, na + 1) < na ? below(rng, na) : 0] : asize;
	if (na && below(rng, 4) == 0)
		cut_a = asize;
	size_t cut_b = nb ? ob[below(rng, nb)] : bsize;
	size_t len = cut_a < max_size ? cut_a : max_size;
	memcpy(out, a, len);
	size_t tail = bsize - cut_b;
	if (len + tail > max_size)
		tail = max_size - len;
	memcpy(out + len, b + cut_b, tail);
	return len + tail;
}

#ifdef PTFUZZ_LIBFUZZER_MUTATOR
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1, const uint8_t *data2, size_t size2,
				 uint8_t *out, size_t max_out_size, unsigned int seed);

/* Structure first; a quarter of the time libFuzzer's own byte mutations (CMP-guided values too). */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ seed;
	if (rng % 4 == 0)
		return LLVMFuzzerMutate(data, size, max_size);
	unsigned rounds = 1 + (unsigned)((rng >> 8) % 3);
	for (unsigned i = 0; i < rounds; i++)
		size = ptm_mutate(data, size, max_size, &rng, NULL);
	return size;
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1, const uint8_t *data2, size_t size2,
				 uint8_t *out, size_t max_out_size, unsigned int seed)
{
	uint64_t rng = 0x2545f4914f6cdd1dull ^ seed;
	return ptm_crossover(data1, size1, data2, size2, out, max_out_size, &rng);
}
#endif
