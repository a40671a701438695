// SPDX-License-Identifier: GPL-2.0-only
/*
 * ptt_plugin.c - a QEMU TCG plugin (plugin API v4, QEMU >= 10.0, system mode,
 * arm64 guest) that records what a running Linux kernel does to its page
 * tables, as ptfuzz arch-level text events (traces/event.h):
 *
 *   pt_write pa= val=       every store to a page-table page, with the value in
 *                           memory after the store (STP: two entries)
 *   dsb/dmb <dom>, isb      every barrier, in the order the vCPU executes it
 *   tlbi <op> va= asid= ttl= [num= scale=]   decoded from Xt
 *   ttbr0 pa= asid= / ttbr1 pa=   root changes of the recorded address space
 *   page_alloc table ...    a new table, placed at its observed zeroing (DC ZVA)
 *   page_free pa=           a table frame unhooked earlier and now published
 *                           again as a fresh, zeroed table
 *   begin/end               the workload's operations (marker instructions)
 *   vmap_area lazy/purge    mm/vmalloc.c's purge list: free_vmap_area_noflush() entered,
 *                           purge_vmap_node() entered (after the purge's TLB flush)
 *
 * Recording starts and stops at marker instructions executed by the workload
 * (an unallocated HINT, a NOP on hardware, see MARKER below) and follows
 * one address space (the workload's TTBR0 root) plus the kernel's (TTBR1).
 * Page-table pages are found by walking from the roots when recording starts
 * (the contents found are emitted as a snapshot, see README) and then by
 * following every table descriptor stored.
 *
 * Arguments (-plugin ptt_plugin.so,out=FILE[,lin=0xOFF][,ram=0x40000000][,ramsize=SIZE]):
 *   out      text trace to write (.ptt)
 *   lin      linear-map offset: VA = PA + lin (default 0xffff000000000000 - ram)
 *   ram      guest RAM base (virt: 0x40000000); ramsize guest RAM size
 *   vmap_lazy, vmap_purge   the addresses of free_vmap_area_noflush() and purge_vmap_node()
 *            (from the guest's /proc/kallsyms, nokaslr); with them the byte offsets
 *            va_start, va_end, va_list (struct vmap_area) and vn_purge_list, vn_purge_work
 *            (struct vmap_node), from the kernel's BTF; without them no vmap_area events
 *
 * Build: cc -shared -fPIC -O2 -I<qemu>/include/qemu $(pkg-config --cflags glib-2.0) ptt_plugin.c -o ptt_plugin.so
 */
#include <glib.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_VCPUS 64
#define PAGE_SHIFT 12
#define OA_MASK 0x0000fffffffff000ull
#define OA_MASK_LPA2 0x0003fffffffff000ull	/* FEAT_LPA2: OA[49:12]; OA[51:50] in bits [9:8] */
#define TTBR_BADDR 0x0000fffffffffffeull
#define TTBR_BADDR_LPA2 0x0000ffffffffffc0ull	/* BADDR[47:6]; BADDR[51:48] in TTBR[5:2] */
#define KERNEL_VA 0xffff000000000000ull	/* traces/event.h PT_KERNEL_VA_BASE: the plugin builds against QEMU's headers alone */

/* The marker: HINT #0x6a (unallocated hint space: executes as a NOP).
 * x0 = MAGIC, x1 = command, x2.. = arguments. */
#define MARKER_INSN (0xd503201fu | (0x6au << 5))
#define MAGIC 0x7074666dull	/* "ptfm" */
enum { CMD_START = 1, CMD_STOP = 2, CMD_BEGIN = 3, CMD_END = 4, CMD_NOTE = 5 };

static const char *out_path;
static uint64_t ram_base = 0x40000000ull, ram_size = 4ull << 30, lin_off;
static bool lin_given;

static GMutex lock;
enum { ST_WAIT = 0, ST_PENDING, ST_REC, ST_DONE };
static volatile int state;
static int start_cpu = -1;
static uint64_t user_root, user_asid, kern_root, user_ttbr0;
/* the translation regime, from TCR_EL1 when recording starts: TCR_EL1.DS (FEAT_LPA2), VA bits
 * (64 - T0SZ), the level of the roots (0, or -1 with 52-bit VAs: 16 entries, 128 bytes, which
 * need not be page-aligned: Linux takes a user pgd smaller than a page from a kmem_cache) */
static bool lpa2;
static unsigned va_bits = 48;
static int root_level;
static uint64_t kern_va = KERNEL_VA;	/* TTBR1's first VA: -2^va_bits */

static inline uint64_t desc_oa(uint64_t d)
{
	return lpa2 ? (d & OA_MASK_LPA2) | (d & 0x300) << 42 : d & OA_MASK;
}

/* TTBRn_EL1 -> the root table's address (with TCR_EL1.DS = ds) */
static inline uint64_t ttbr_root(uint64_t v, bool ds)
{
	return ds ? (v & TTBR_BADDR_LPA2) | (v & 0x3c) << 46 : v & TTBR_BADDR;
}

static inline unsigned table_entries(int level) { return level < 0 ? 1u << (va_bits - 48) : 512; }

/* per-vCPU register handles */
struct vcpu {
	struct qemu_plugin_register *x[31], *pc, *ttbr0, *ttbr1, *tcr;
	GByteArray *buf;
};
static struct vcpu vcpus[MAX_VCPUS];
static int nvcpus_seen;

/* ---- output: lines kept in memory until the end, so that a table's
 * page_alloc can be placed where its zeroing was observed ---- */
static GPtrArray *lines;
struct insert { guint pos; guint seq; char *line; };
static GArray *inserts;
static uint64_t n_ev[16];
static uint64_t n_vmap_lazy, n_vmap_purge;	/* vmap_area events (see vmap_instrument()) */
enum { C_WRITE, C_DSB, C_DMB, C_ISB, C_TLBI, C_TTBR, C_ALLOC, C_FREE, C_OP, C_SNAP, C_NOZERO, C_HIDDEN };

static void emit(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static void emit(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_ptr_array_add(lines, g_strdup_vprintf(fmt, ap));
	va_end(ap);
}

/* ---- tracked page-table pages ---- */
struct table {
	uint64_t pa;		/* the table's first entry (a level -1 root may start inside its page) */
	unsigned n;		/* entries: 512, or 16 for a level -1 root */
	int level;
	bool kernel;
	bool live;		/* hooked (tracked): stores to it are recorded */
	unsigned refs;		/* tracked entries (or roots) that point at it */
	uint64_t e[512];	/* shadow: what the trace has written so far */
};
static GHashTable *tables;	/* pfn -> struct table */
static uint8_t *live_bm;	/* bitmap over RAM pfns: a live table (read lock-free on every store) */

static inline bool pfn_in_ram(uint64_t pfn)
{
	return pfn >= (ram_base >> PAGE_SHIFT) && pfn < ((ram_base + ram_size) >> PAGE_SHIFT);
}
static inline bool bm_test(uint64_t pfn)
{
	if (!pfn_in_ram(pfn))
		return false;
	uint64_t i = pfn - (ram_base >> PAGE_SHIFT);
	return __atomic_load_n(&live_bm[i >> 3], __ATOMIC_RELAXED) & (1u << (i & 7));
}
static inline void bm_set(uint64_t pfn, bool on)
{
	if (!pfn_in_ram(pfn))
		return;
	uint64_t i = pfn - (ram_base >> PAGE_SHIFT);
	if (on)
		__atomic_fetch_or(&live_bm[i >> 3], (uint8_t)(1u << (i & 7)), __ATOMIC_RELAXED);
	else
		__atomic_fetch_and(&live_bm[i >> 3], (uint8_t)~(1u << (i & 7)), __ATOMIC_RELAXED);
}

static struct table *table_find(uint64_t pa)
{
	return g_hash_table_lookup(tables, GUINT_TO_POINTER((guint)(pa >> PAGE_SHIFT)));
}

/* Read guest physical memory through the kernel's linear map (only valid in an EL1 context). */
static bool read_phys(uint64_t pa, void *out, size_t len)
{
	static GByteArray *b;
	if (!b)
		b = g_byte_array_new();
	if (pa < ram_base || pa + len > ram_base + ram_size)
		return false;
	if (!qemu_plugin_read_memory_vaddr(pa + lin_off, b, len))
		return false;
	memcpy(out, b->data, len);
	return true;
}

static uint64_t reg(unsigned cpu, struct qemu_plugin_register *h)
{
	struct vcpu *v = &vcpus[cpu];
	if (!h)
		return 0;
	g_byte_array_set_size(v->buf, 0);
	int n = qemu_plugin_read_register(h, v->buf);
	uint64_t x = 0;
	if (n > 0)
		memcpy(&x, v->buf->data, n < 8 ? (size_t)n : 8);
	return x;
}

static inline bool is_table_desc(uint64_t d, int level) { return level < 3 && (d & 3) == 3; }

/* ---- DC ZVA tracking: where was each page last zeroed (line index, cpu) ---- */
#define ZSLOTS 65536
struct zslot { uint64_t pfn; guint pos; unsigned cpu; bool valid; };
static struct zslot zva[ZSLOTS];
static uint64_t n_zva;


/* A table descriptor pointing at pa (level `level`) is now in a tracked table. */
static void child_ref(uint64_t pa, int level, bool kernel, unsigned cpu, bool snapshot)
{
	struct table *t = table_find(pa);
	uint64_t cur[512] = { 0 };
	unsigned n = table_entries(level);
	bool have = read_phys(pa, cur, n * 8);
	if (t) {
		t->refs++;
		if (t->live)
			return;
		/* an unhooked table published again: moved (contents as we left them) or freed and reused */
		bool same = have && !memcmp(cur, t->e, sizeof(cur));
		t->live = true;
		t->level = level;
		bm_set(pa >> PAGE_SHIFT, true);
		if (same)
			return;
		/* the free itself is not observed: place it just before the observed zeroing of the
		 * new allocation if there is one, else here */
		emit("# table 0x%" PRIx64 " (unhooked earlier) published again with new contents: freed and reused",
		     pa);
		struct zslot *zr = &zva[(pa >> PAGE_SHIFT) % ZSLOTS];
		if (zr->valid && zr->pfn == pa >> PAGE_SHIFT) {
			struct insert ins = { zr->pos, inserts->len,
					      g_strdup_printf("cpu%u page_free pa=0x%" PRIx64, zr->cpu, pa) };
			g_array_append_val(inserts, ins);
		} else {
			emit("cpu%u page_free pa=0x%" PRIx64, cpu, pa);
		}
		n_ev[C_FREE]++;
		memset(t->e, 0, sizeof(t->e));
	} else {
		t = g_new0(struct table, 1);
		t->pa = pa;
		t->n = n;
		t->level = level;
		t->kernel = kernel;
		t->live = true;
		t->refs = 1;
		g_hash_table_insert(tables, GUINT_TO_POINTER((guint)(pa >> PAGE_SHIFT)), t);
		bm_set(pa >> PAGE_SHIFT, true);
	}
	if (!have) {
		emit("# table 0x%" PRIx64 " level %d: contents unreadable", pa, level);
		return;
	}
	bool zero = true;
	for (int i = 0; i < 512; i++)
		zero &= !cur[i];
	if (snapshot) {
		/* recording starts: what is there is the past, written long ago */
		memcpy(t->e, cur, sizeof(cur));
		return;
	}
	struct zslot *z = &zva[(pa >> PAGE_SHIFT) % ZSLOTS];
	if (zero) {
		if (z->valid && z->pfn == pa >> PAGE_SHIFT) {
			struct insert ins = { z->pos, inserts->len, g_strdup_printf("cpu%u page_alloc table pa=0x%" PRIx64
								      " level=%d flags=0x1", z->cpu, pa, level) };
			g_array_append_val(inserts, ins);
			z->valid = false;
		} else {
			emit("# table 0x%" PRIx64 " level %d: zeroing not observed (assumed zeroed and ordered)", pa,
			     level);
			n_ev[C_NOZERO]++;
		}
		n_ev[C_ALLOC]++;
		return;
	}
	/* filled while not reachable (e.g. a deposited THP table, or a table filled before it is
	 * hooked): its stores were not seen as page-table stores; emit its contents now, as
	 * stores of this CPU, before the store that publishes it */
	emit("# table 0x%" PRIx64 " level %d published with contents written while unhooked", pa, level);
	if (z->valid && z->pfn == pa >> PAGE_SHIFT) {
		struct insert ins = { z->pos, inserts->len, g_strdup_printf("cpu%u page_alloc table pa=0x%" PRIx64
							      " level=%d flags=0x1", z->cpu, pa, level) };
		g_array_append_val(inserts, ins);
		z->valid = false;
		n_ev[C_ALLOC]++;
	}
	for (int i = 0; i < 512; i++) {
		if (!cur[i])
			continue;
		t->e[i] = cur[i];
		emit("cpu%u pt_write pa=0x%" PRIx64 " val=0x%" PRIx64, cpu, pa + i * 8, cur[i]);
		n_ev[C_WRITE]++;
		if (is_table_desc(cur[i], level))
			child_ref(desc_oa(cur[i]), level + 1, kernel, cpu, false);
	}
}

static void child_unref(uint64_t pa)
{
	struct table *t = table_find(pa);
	if (!t || !t->refs)
		return;
	if (--t->refs)
		return;
	/* unhooked: stop following it (it will be freed, and may become anything); its
	 * children stay referenced by its (frozen) entries until it is reused */
	t->live = false;
	bm_set(pa >> PAGE_SHIFT, false);
}

/* Emit the snapshot of a tree (recording start). */
static void snapshot(struct table *t, unsigned cpu)
{
	for (unsigned i = 0; i < t->n; i++) {
		uint64_t d = t->e[i];
		if (!d)
			continue;
		emit("cpu%u pt_write pa=0x%" PRIx64 " val=0x%" PRIx64, cpu, t->pa + i * 8, d);
		n_ev[C_SNAP]++;
		if (is_table_desc(d, t->level)) {
			uint64_t c = desc_oa(d);
			bool fresh = !table_find(c);
			child_ref(c, t->level + 1, t->kernel, cpu, true);
			if (fresh)
				snapshot(table_find(c), cpu);
		}
	}
}

static uint64_t asid_of(unsigned cpu, uint64_t ttbr0)
{
	uint64_t tcr = reg(cpu, vcpus[cpu].tcr);
	uint64_t src = (tcr >> 22) & 1 ? reg(cpu, vcpus[cpu].ttbr1) : ttbr0;	/* TCR_EL1.A1 */
	uint64_t asid = src >> 48;
	if (!((tcr >> 36) & 1))	/* TCR_EL1.AS: 8-bit ASIDs */
		asid &= 0xff;
	return asid;
}

/* Recording starts on `cpu`, now at EL1. */
static void start_recording(unsigned cpu)
{
	uint64_t tcr = reg(cpu, vcpus[cpu].tcr);
	unsigned t0sz = tcr & 63, t1sz = (tcr >> 16) & 63;
	uint64_t ttbr1 = reg(cpu, vcpus[cpu].ttbr1);
	lpa2 = (tcr >> 59) & 1;	/* TCR_EL1.DS */
	/* TG0/TG1 are 4K in every Debian arm64 kernel but the 16K/64K flavours, which the
	 * plugin refuses here: 48-bit VAs (4 levels, with or without LPA2) or 52-bit with LPA2 */
	if (t0sz != t1sz || (t0sz != 16 && t0sz != 12) || (t0sz == 12 && !lpa2) || ((tcr >> 14) & 3) != 0) {
		fprintf(stderr, "ptt: TCR_EL1=0x%" PRIx64 ": not a 4K-granule regime with 48-bit VAs, or "
			"52-bit VAs with LPA2 (DS=1)\n", tcr);
		state = ST_DONE;
		return;
	}
	va_bits = 64 - t0sz;
	root_level = va_bits == 52 ? -1 : 0;
	kern_va = 0 - (1ull << va_bits);
	kern_root = ttbr_root(ttbr1, lpa2);
	user_root = ttbr_root(user_ttbr0, lpa2);
	if (!lin_given)
		lin_off = kern_va - ram_base;	/* PAGE_OFFSET = -2^va_bits, memstart_addr = RAM base */
	/* check the linear-map guess: the kernel root read through it must translate its own address */
	uint64_t d = 0, va = kern_root + lin_off, pa = kern_root;
	bool ok = true;
	for (int l = root_level; l < 4 && ok; l++) {
		unsigned shift = PAGE_SHIFT + 9 * (3 - l);
		unsigned idx = (va >> shift) & (table_entries(l) - 1);
		if (!read_phys(pa + idx * 8, &d, 8) || !(d & 1)) {
			ok = false;
			break;
		}
		if (l == 3 || (d & 3) == 1) {
			uint64_t sz = 1ull << shift;
			pa = (desc_oa(d) & ~(sz - 1)) | (va & (sz - 1));
			break;
		}
		pa = desc_oa(d);
	}
	if (!ok || pa != kern_root) {
		fprintf(stderr, "ptt: linear map offset 0x%" PRIx64 " does not map the kernel root 0x%" PRIx64
			" (got 0x%" PRIx64 "); give lin=\n", lin_off, kern_root, pa);
		state = ST_DONE;
		return;
	}
	emit("# recording starts: snapshot of the tables reachable from TTBR1 (kernel) and the workload's TTBR0");
	emit("cpu%u ttbr1 pa=0x%" PRIx64, cpu, kern_root);
	emit("cpu%u ttbr0 pa=0x%" PRIx64 " asid=%" PRIu64, cpu, user_root, user_asid);
	n_ev[C_TTBR] += 2;
	child_ref(kern_root, root_level, true, cpu, true);
	child_ref(user_root, root_level, false, cpu, true);
	snapshot(table_find(kern_root), cpu);
	snapshot(table_find(user_root), cpu);
	emit("cpu%u dsb sy", cpu);
	emit("cpu%u isb", cpu);
	emit("# snapshot ends (%" PRIu64 " entries, %u tables); what follows is recorded as executed",
	     n_ev[C_SNAP], g_hash_table_size(tables));
	state = ST_REC;
}

static void write_out(void)
{
	FILE *f = fopen(out_path, "w");
	if (!f) {
		perror(out_path);
		return;
	}
	/* merge the inserts (page_alloc at the zeroing position), sorted by insert_cmp */
	guint k = 0;
	unsigned cpus = (unsigned)qemu_plugin_num_vcpus();
	fprintf(f, "@ptt version=1 granule=4K va_bits=%u%s cpus=%u method=qemu-plugin kernel=\"%s\" machine=\"%s\"\n",
		va_bits, lpa2 ? " lpa2=1" : "", cpus, g_getenv("PTT_KERNEL") ? g_getenv("PTT_KERNEL") : "",
		g_getenv("PTT_MACHINE") ? g_getenv("PTT_MACHINE") : "qemu-system-aarch64");
	for (guint i = 0; i < lines->len; i++) {
		fputs(g_ptr_array_index(lines, i), f);
		fputc('\n', f);
		for (; k < inserts->len; k++) {
			struct insert *in = &g_array_index(inserts, struct insert, k);
			if (in->pos != i)
				break;
			fputs(in->line, f);
			fputc('\n', f);
		}
	}
	fclose(f);
	fprintf(stderr, "ptt: wrote %s: %u lines; pt_write %" PRIu64 " (snapshot %" PRIu64 "), dsb %" PRIu64
		", dmb %" PRIu64 ", isb %" PRIu64 ", tlbi %" PRIu64 ", ttbr %" PRIu64 ", page_alloc %" PRIu64
		" (zeroing not seen: %" PRIu64 "), page_free %" PRIu64 ", ops %" PRIu64 ", pages zeroed (dc zva/setp) %" PRIu64 "\n",
		out_path, lines->len + inserts->len, n_ev[C_WRITE], n_ev[C_SNAP], n_ev[C_DSB], n_ev[C_DMB],
		n_ev[C_ISB], n_ev[C_TLBI], n_ev[C_TTBR], n_ev[C_ALLOC], n_ev[C_NOZERO], n_ev[C_FREE], n_ev[C_OP],
		n_zva);
	fprintf(stderr, "ptt: vmap_area lazy %" PRIu64 ", purge %" PRIu64 "\n", n_vmap_lazy, n_vmap_purge);
}

static gint insert_cmp(gconstpointer a, gconstpointer b)
{
	const struct insert *x = a, *y = b;
	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* ---- callbacks ---- */

/* An EL1 point on the CPU that asked to start: take the snapshot there. */
static inline void maybe_start(unsigned cpu)
{
	if (state == ST_PENDING && (int)cpu == start_cpu) {
		g_mutex_lock(&lock);
		if (state == ST_PENDING)
			start_recording(cpu);
		g_mutex_unlock(&lock);
	}
}

static void on_marker(unsigned cpu, void *ud)
{
	(void)ud;
	struct vcpu *v = &vcpus[cpu];
	if (reg(cpu, v->x[0]) != MAGIC)
		return;
	uint64_t cmd = reg(cpu, v->x[1]);
	g_mutex_lock(&lock);
	switch (cmd) {
	case CMD_START:
		if (state == ST_WAIT) {
			uint64_t t0 = reg(cpu, v->ttbr0);
			user_ttbr0 = t0;	/* decoded with TCR_EL1 when recording starts */
			user_asid = asid_of(cpu, t0);
			start_cpu = (int)cpu;
			state = ST_PENDING;
		}
		break;
	case CMD_STOP:
		if (state == ST_REC) {
			emit("# recording stops");
			state = ST_DONE;
			g_array_sort(inserts, insert_cmp);
			write_out();
		}
		break;
	case CMD_BEGIN:
		if (state == ST_REC) {
			static const char *const kinds[] = { "other", "mmap", "munmap", "mremap", "mprotect",
							     "madvise", "fault" };
			uint64_t k = reg(cpu, v->x[2]);
			uint64_t va = reg(cpu, v->x[3]), len = reg(cpu, v->x[4]), bound = reg(cpu, v->x[5]);
			uint64_t asid = asid_of(cpu, reg(cpu, v->ttbr0));
			if (bound)
				emit("cpu%u begin %s va=0x%" PRIx64 " len=0x%" PRIx64 " asid=%" PRIu64
				     " bound=%" PRIu64, cpu, kinds[k < 7 ? k : 0], va, len, asid, bound);
			else
				emit("cpu%u begin %s va=0x%" PRIx64 " len=0x%" PRIx64 " asid=%" PRIu64, cpu,
				     kinds[k < 7 ? k : 0], va, len, asid);
			n_ev[C_OP]++;
		}
		break;
	case CMD_END:
		if (state == ST_REC)
			emit("cpu%u end", cpu);
		break;
	case CMD_NOTE:
		if (state == ST_REC) {
			char s[64] = { 0 };
			uint64_t w[4] = { reg(cpu, v->x[2]), reg(cpu, v->x[3]), reg(cpu, v->x[4]), reg(cpu, v->x[5]) };
			memcpy(s, w, sizeof(w));
			emit("# %s", s);
		}
		break;
	}
	g_mutex_unlock(&lock);
}

static const char *const bar_dom[16] = {
	/* CRm: 15 SY, 14 ST, 13 LD, 11 ISH, 10 ISHST, 9 ISHLD, 7 NSH, 6 NSHST, 5 NSHLD,
	 * 3 OSH, 2 OSHST, 1 OSHLD (outer shareable covers the inner shareable domain) */
	[15] = "sy", [14] = "ishst", [13] = "ishld", [11] = "ish", [10] = "ishst", [9] = "ishld",
	[7] = "nsh", [6] = "nsh", [5] = "nsh", [3] = "ish", [2] = "ishst", [1] = "ishld",
};

#define INSN_CB(name) static void name(unsigned cpu, void *ud)

INSN_CB(on_dsb)
{
	maybe_start(cpu);
	if (state != ST_REC)
		return;
	g_mutex_lock(&lock);
	if (state == ST_REC) {
		emit("cpu%u dsb %s", cpu, (const char *)ud);
		n_ev[C_DSB]++;
	}
	g_mutex_unlock(&lock);
}
INSN_CB(on_dmb)
{
	maybe_start(cpu);
	if (state != ST_REC)
		return;
	g_mutex_lock(&lock);
	if (state == ST_REC) {
		emit("cpu%u dmb %s", cpu, (const char *)ud);
		n_ev[C_DMB]++;
	}
	g_mutex_unlock(&lock);
}
INSN_CB(on_isb)
{
	(void)ud;
	maybe_start(cpu);
	if (state != ST_REC)
		return;
	g_mutex_lock(&lock);
	if (state == ST_REC) {
		emit("cpu%u isb", cpu);
		n_ev[C_ISB]++;
	}
	g_mutex_unlock(&lock);
}

/* TLBI: userdata = insn word */
INSN_CB(on_tlbi)
{
	maybe_start(cpu);
	if (state != ST_REC)
		return;
	uint32_t insn = (uint32_t)(uintptr_t)ud;
	unsigned rt = insn & 31, op2 = (insn >> 5) & 7, crm = (insn >> 8) & 15, op1 = (insn >> 16) & 7;
	uint64_t xt = rt == 31 ? 0 : reg(cpu, vcpus[cpu].x[rt]);
	static const char *const base[8] = { "vmalle1", "vae1", "aside1", "vaae1", NULL, "vale1", NULL, "vaale1" };
	static const char *const rbase[8] = { NULL, "rvae1", NULL, "rvaae1", NULL, "rvale1", NULL, "rvaale1" };
	const char *name = NULL;
	bool is = false, range = false;
	if (op1 == 0) {
		switch (crm) {
		case 1: case 3: name = base[op2]; is = true; break;	/* OS / IS */
		case 7: name = base[op2]; break;
		case 5: case 2: name = rbase[op2]; is = true; range = true; break;
		case 6: name = rbase[op2]; range = true; break;
		}
	}
	g_mutex_lock(&lock);
	if (state != ST_REC) {
		g_mutex_unlock(&lock);
		return;
	}
	if (!name) {
		emit("# cpu%u tlbi (op1=%u CRm=%u op2=%u) Xt=0x%" PRIx64 ": not an EL1&0 operation ptfuzz models",
		     cpu, op1, crm, op2, xt);
		g_mutex_unlock(&lock);
		return;
	}
	char nm[16];
	snprintf(nm, sizeof(nm), "%s%s", name, is ? "is" : "");
	uint64_t asid = xt >> 48;
	bool all_asid = op2 == 3 || op2 == 7 || op2 == 0;
	if (!range && op2 == 0) {
		emit("cpu%u tlbi %s", cpu, nm);
	} else if (!range && op2 == 2) {
		emit("cpu%u tlbi %s asid=%" PRIu64, cpu, nm, asid);
	} else if (!range) {
		/* Xt[43:0] = VA[55:12], TTL Xt[47:44] = TG[3:2] (01: 4K) : level[1:0] (D8.17.4.1) */
		uint64_t va = (xt & 0xfffffffffffull) << 12;
		if (va & (1ull << 55))
			va |= 0xff00000000000000ull;
		unsigned ttl = (xt >> 44) & 15, lvl = (ttl >> 2) == 1 ? ttl & 3 : 0;
		char a[32] = "", t[16] = "";
		if (ttl == 4 && lpa2)	/* FEAT_LPA2: TTL 0b0100 names level 0; the trace has no way to say it */
			emit("# cpu%u tlbi %s: TTL hint level 0 (LPA2) dropped: replayed without a hint", cpu, nm);
		if (!all_asid)
			snprintf(a, sizeof(a), " asid=%" PRIu64, asid);
		if (lvl)
			snprintf(t, sizeof(t), " ttl=%u", lvl);
		emit("cpu%u tlbi %s va=0x%" PRIx64 "%s%s", cpu, nm, va, a, t);
	} else {
		/* ASID[63:48] TG[47:46] SCALE[45:44] NUM[43:39] TTL[38:37] BADDR[36:0]: VA[48:12] in
		 * pages, or with TCR_EL1.DS=1 VA[52:16] in 64 KiB units (D8.17.6.1) */
		unsigned tg = (xt >> 46) & 3, scale = (xt >> 44) & 3, num = (xt >> 39) & 31, ttl = (xt >> 37) & 3;
		unsigned top = lpa2 ? 52 : 48;
		uint64_t va = (xt & 0x1fffffffffull) << (lpa2 ? 16 : 12);
		if (va & (1ull << top))
			va |= ~((2ull << top) - 1);
		if (tg != 1)
			emit("# cpu%u range tlbi with TG=%u (not 4K)", cpu, tg);
		char a[32] = "";
		if (!all_asid)
			snprintf(a, sizeof(a), " asid=%" PRIu64, asid);
		char t[16] = "";
		if (ttl)
			snprintf(t, sizeof(t), " ttl=%u", ttl);
		emit("cpu%u tlbi %s va=0x%" PRIx64 "%s%s num=%u scale=%u", cpu, nm, va, a, t, num, scale);
	}
	n_ev[C_TLBI]++;
	g_mutex_unlock(&lock);
}

/* MSR TTBR0_EL1 / TTBR1_EL1: userdata = insn word (bit 5: TTBR1) */
INSN_CB(on_msr_ttbr)
{
	maybe_start(cpu);
	if (state != ST_REC)
		return;
	uint32_t insn = (uint32_t)(uintptr_t)ud;
	unsigned rt = insn & 31;
	uint64_t v = rt == 31 ? 0 : reg(cpu, vcpus[cpu].x[rt]);
	g_mutex_lock(&lock);
	if (state == ST_REC) {
		uint64_t root = ttbr_root(v, lpa2);
		if (insn & 0x20) {
			if (root != kern_root) {
				emit("# cpu%u TTBR1_EL1 <- 0x%" PRIx64 " (not the kernel root: ignored)", cpu, v);
			}
		} else if (root == user_root) {
			/* the recorded address space is loaded again: its ASID may have changed */
			uint64_t asid = asid_of(cpu, v);
			if (asid != user_asid) {
				user_asid = asid;
				emit("cpu%u ttbr0 pa=0x%" PRIx64 " asid=%" PRIu64, cpu, root, asid);
				n_ev[C_TTBR]++;
			}
		}
	}
	g_mutex_unlock(&lock);
}

INSN_CB(on_zva)
{
	uint32_t insn = (uint32_t)(uintptr_t)ud;
	if (state != ST_REC)
		return;
	unsigned rt = insn & 31;
	uint64_t va = reg(cpu, vcpus[cpu].x[rt]);
	if (va < kern_va)
		return;
	uint64_t pa = va - lin_off;
	if (pa < ram_base || pa >= ram_base + ram_size)
		return;
	g_mutex_lock(&lock);
	struct zslot *z = &zva[(pa >> PAGE_SHIFT) % ZSLOTS];
	z->pfn = pa >> PAGE_SHIFT;
	z->pos = lines->len ? lines->len - 1 : 0;
	z->cpu = cpu;
	z->valid = true;
	n_zva++;
	g_mutex_unlock(&lock);
}

/* SETP/SETPN (FEAT_MOPS memset prologue; clear_page() uses SETPN/SETMN/SETEN when the CPU has
 * MOPS): the stores are done by a helper that plugins do not see, so note the zeroed pages here.
 * userdata = insn word: Rd [4:0] destination, Rn [9:5] size, Rs [20:16] value */
INSN_CB(on_setp)
{
	uint32_t insn = (uint32_t)(uintptr_t)ud;
	if (state != ST_REC)
		return;
	unsigned rd = insn & 31, rn = (insn >> 5) & 31, rs = (insn >> 16) & 31;
	if (rs != 31 && (reg(cpu, vcpus[cpu].x[rs]) & 0xff))
		return;
	uint64_t va = reg(cpu, vcpus[cpu].x[rd]), n = reg(cpu, vcpus[cpu].x[rn]);
	if (va < kern_va || n < (1ull << PAGE_SHIFT) || n > (1ull << 30))
		return;
	uint64_t pa = va - lin_off;
	if (pa < ram_base || pa + n > ram_base + ram_size)
		return;
	g_mutex_lock(&lock);
	for (uint64_t p = (pa + 4095) & ~4095ull; p + 4096 <= pa + n; p += 4096) {
		struct zslot *z = &zva[(p >> PAGE_SHIFT) % ZSLOTS];
		z->pfn = p >> PAGE_SHIFT;
		z->pos = lines->len ? lines->len - 1 : 0;
		z->cpu = cpu;
		z->valid = true;
		n_zva++;
	}
	g_mutex_unlock(&lock);
}

/* A store to a page-table page: userdata = 1 if the instruction is an atomic/exclusive */
static void on_store(unsigned cpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *ud)
{
	if (state != ST_REC)
		return;
	struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
	if (!hw || qemu_plugin_hwaddr_is_io(hw))
		return;
	uint64_t pa = qemu_plugin_hwaddr_phys_addr(hw);
	if (!bm_test(pa >> PAGE_SHIFT))
		return;
	unsigned size = 1u << qemu_plugin_mem_size_shift(info);
	bool atomic = ud != NULL;
	qemu_plugin_mem_value mv = qemu_plugin_mem_get_value(info);
	g_mutex_lock(&lock);
	struct table *t = table_find(pa);
	if (state != ST_REC || !t || !t->live) {
		g_mutex_unlock(&lock);
		return;
	}
	for (uint64_t ea = pa & ~7ull; ea < pa + size; ea += 8) {
		if (ea < t->pa || ea >= t->pa + t->n * 8)
			continue;	/* beside a level -1 root in its page: another address space's */
		unsigned idx = (unsigned)((ea - t->pa) >> 3);
		uint64_t val;
		if (!atomic && size == 8 && mv.type == QEMU_PLUGIN_MEM_VALUE_U64) {
			val = mv.data.u64;
		} else if (!atomic && size == 16 && mv.type == QEMU_PLUGIN_MEM_VALUE_U128) {
			val = ea == pa ? mv.data.u128.low : mv.data.u128.high;	/* STP: two entries */
		} else {
			/* atomics (a failed CAS/STXR is reported too), partial stores: read memory back */
			GByteArray *b = vcpus[cpu].buf;
			uint64_t eva = vaddr - (pa - ea);
			if (!qemu_plugin_read_memory_vaddr(eva, b, 8)) {
				emit("# cpu%u store to 0x%" PRIx64 ": cannot read back", cpu, ea);
				continue;
			}
			memcpy(&val, b->data, 8);
		}
		uint64_t old = t->e[idx];
		if (val == old)
			continue;
		t->e[idx] = val;
		if (is_table_desc(old, t->level) && (!is_table_desc(val, t->level) || desc_oa(old) != desc_oa(val)))
			child_unref(desc_oa(old));
		if (is_table_desc(val, t->level) && (!is_table_desc(old, t->level) || desc_oa(old) != desc_oa(val)))
			child_ref(desc_oa(val), t->level + 1, t->kernel, cpu, false);
		emit("cpu%u pt_write pa=0x%" PRIx64 " val=0x%" PRIx64, cpu, ea, val);
		n_ev[C_WRITE]++;
	}
	g_mutex_unlock(&lock);
}

/* ---- the purge list of mm/vmalloc.c, from the kernel's own functions ----
 * free_vmap_area_noflush(struct vmap_area *va): the unmapped area [va_start, va_end) goes on the
 * purge list with its TLB flush deferred.  purge_vmap_node(struct work_struct *work): called by
 * __purge_vmap_area_lazy() (directly or as vn->purge_work) after its flush_tlb_kernel_range()
 * of the lazy areas; it hands every area of vn->purge_list back to the allocator. */
static uint64_t vmap_lazy_fn, vmap_purge_fn;
static int64_t off_va_start = -1, off_va_end = -1, off_va_list = -1, off_vn_purge_list = -1,
	       off_vn_purge_work = -1;

static bool read_u64(unsigned cpu, uint64_t va, uint64_t *out)
{
	GByteArray *b = vcpus[cpu].buf;
	g_byte_array_set_size(b, 0);
	if (va < kern_va || !qemu_plugin_read_memory_vaddr(va, b, 8))
		return false;
	memcpy(out, b->data, 8);
	return true;
}

static bool read_area(unsigned cpu, uint64_t va, uint64_t *start, uint64_t *end)
{
	return read_u64(cpu, va + off_va_start, start) && read_u64(cpu, va + off_va_end, end) && *end > *start &&
	       *start >= kern_va;
}

INSN_CB(on_vmap_lazy)
{
	(void)ud;
	if (state != ST_REC)
		return;
	uint64_t va = reg(cpu, vcpus[cpu].x[0]), start, end;
	g_mutex_lock(&lock);
	if (state == ST_REC) {
		if (read_area(cpu, va, &start, &end)) {
			emit("cpu%u vmap_area lazy va=0x%" PRIx64 " len=0x%" PRIx64, cpu, start, end - start);
			n_vmap_lazy++;
		} else {
			emit("# cpu%u free_vmap_area_noflush(0x%" PRIx64 "): vmap_area unreadable", cpu, va);
		}
	}
	g_mutex_unlock(&lock);
}

INSN_CB(on_vmap_purge)
{
	(void)ud;
	if (state != ST_REC)
		return;
	uint64_t head = reg(cpu, vcpus[cpu].x[0]) - off_vn_purge_work + off_vn_purge_list, p, start, end;
	g_mutex_lock(&lock);
	if (state != ST_REC) {
		g_mutex_unlock(&lock);
		return;
	}
	unsigned n = 0;
	bool ok = read_u64(cpu, head, &p);
	for (; ok && p != head && n < 1000000; n++) {
		uint64_t va = p - off_va_list;
		ok = read_area(cpu, va, &start, &end) && read_u64(cpu, p, &p);
		if (ok) {
			emit("cpu%u vmap_area purge va=0x%" PRIx64 " len=0x%" PRIx64, cpu, start, end - start);
			n_vmap_purge++;
		}
	}
	if (!ok || p != head)
		emit("# cpu%u purge_vmap_node(): purge list 0x%" PRIx64 " unreadable after %u areas", cpu, head, n);
	g_mutex_unlock(&lock);
}

/* Instrument the entries of the two functions (called for every kernel instruction translated). */
static void vmap_instrument(struct qemu_plugin_insn *insn, uint64_t pc)
{
	if (pc == vmap_lazy_fn)
		qemu_plugin_register_vcpu_insn_exec_cb(insn, on_vmap_lazy, QEMU_PLUGIN_CB_R_REGS, NULL);
	else if (pc == vmap_purge_fn)
		qemu_plugin_register_vcpu_insn_exec_cb(insn, on_vmap_purge, QEMU_PLUGIN_CB_R_REGS, NULL);
}

/* vmap_lazy=, vmap_purge=, va_start=, ...: true if k is one of them */
static bool vmap_arg(const char *k, const char *val)
{
	static const struct { const char *k; int64_t *off; } offs[] = {
		{ "va_start", &off_va_start }, { "va_end", &off_va_end }, { "va_list", &off_va_list },
		{ "vn_purge_list", &off_vn_purge_list }, { "vn_purge_work", &off_vn_purge_work },
	};
	if (!strcmp(k, "vmap_lazy")) {
		vmap_lazy_fn = strtoull(val, NULL, 0);
		return true;
	}
	if (!strcmp(k, "vmap_purge")) {
		vmap_purge_fn = strtoull(val, NULL, 0);
		return true;
	}
	for (size_t i = 0; i < G_N_ELEMENTS(offs); i++) {
		if (!strcmp(k, offs[i].k)) {
			*offs[i].off = strtoll(val, NULL, 0);
			return true;
		}
	}
	return false;
}

/* The arguments given agree: both functions and every offset, or none of them. */
static bool vmap_args_ok(void)
{
	bool any = vmap_lazy_fn || vmap_purge_fn || off_va_start >= 0 || off_va_end >= 0 || off_va_list >= 0 ||
		   off_vn_purge_list >= 0 || off_vn_purge_work >= 0;
	/* TCR_EL1 is not read yet: any TTBR1 address, down to a 52-bit VA space's first. */
	bool all = vmap_lazy_fn >= 0 - (1ull << 52) && vmap_purge_fn >= 0 - (1ull << 52) && off_va_start >= 0 &&
		   off_va_end >= 0 && off_va_list >= 0 && off_vn_purge_list >= 0 && off_vn_purge_work >= 0;
	if (any && !all) {
		fprintf(stderr, "ptt: vmap_lazy=, vmap_purge= (kernel addresses), va_start=, va_end=, va_list=, "
			"vn_purge_list= and vn_purge_work= go together\n");
		return false;
	}
	if (!any)
		fprintf(stderr, "ptt: no vmap_lazy=/vmap_purge=: the trace will not name lazily freed vmap areas\n");
	return true;
}

static bool insn_is_atomic(uint32_t i)
{
	return (i & 0x3f000000u) == 0x08000000u	/* load/store exclusive, CAS */
	       || (i & 0x3b200c00u) == 0x38200000u;	/* LSE atomic memory operations (SWP, LD<op>) */
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	size_t n = qemu_plugin_tb_n_insns(tb);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint32_t w = 0;
		if (qemu_plugin_insn_data(insn, &w, 4) != 4)
			continue;
		uint64_t pc = qemu_plugin_insn_vaddr(insn);
		bool kernel = (int64_t)pc < 0;	/* TTBR1 (-2^va_bits and up): the kernel */
		if (w == MARKER_INSN && !kernel) {
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker, QEMU_PLUGIN_CB_R_REGS, NULL);
			continue;
		}
		if (!kernel)
			continue;	/* user space does not touch page tables or issue TLBIs */
		vmap_instrument(insn, pc);
		if ((w & 0xfffff0ffu) == 0xd503309fu && bar_dom[(w >> 8) & 15])
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_dsb, QEMU_PLUGIN_CB_R_REGS,
							       (void *)bar_dom[(w >> 8) & 15]);
		else if ((w & 0xfffff0ffu) == 0xd50330bfu && bar_dom[(w >> 8) & 15])
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_dmb, QEMU_PLUGIN_CB_R_REGS,
							       (void *)bar_dom[(w >> 8) & 15]);
		else if ((w & 0xfffff0ffu) == 0xd50330dfu)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_isb, QEMU_PLUGIN_CB_R_REGS, NULL);
		else if ((w & 0xfff8f000u) == 0xd5088000u)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_tlbi, QEMU_PLUGIN_CB_R_REGS,
							       (void *)(uintptr_t)w);
		else if ((w & 0xffffffc0u) == 0xd5182000u)	/* MSR TTBR0_EL1 / TTBR1_EL1, Xt */
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_msr_ttbr, QEMU_PLUGIN_CB_R_REGS,
							       (void *)(uintptr_t)w);
		else if ((w & 0xffe0cc00u) == 0x19c00400u)	/* SETP, SETPT, SETPN, SETPTN */
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_setp, QEMU_PLUGIN_CB_R_REGS,
							       (void *)(uintptr_t)w);
		else if ((w & 0xffffffe0u) == 0xd50b7420u)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_zva, QEMU_PLUGIN_CB_R_REGS,
							       (void *)(uintptr_t)w);
		else
			qemu_plugin_register_vcpu_mem_cb(insn, on_store, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_W,
							 insn_is_atomic(w) ? (void *)1 : NULL);
	}
}

static void on_vcpu_init(qemu_plugin_id_t id, unsigned cpu)
{
	(void)id;
	if (cpu >= MAX_VCPUS)
		return;
	struct vcpu *v = &vcpus[cpu];
	v->buf = g_byte_array_new();
	GArray *regs = qemu_plugin_get_registers();
	for (guint i = 0; i < regs->len; i++) {
		qemu_plugin_reg_descriptor *r = &g_array_index(regs, qemu_plugin_reg_descriptor, i);
		const char *n = r->name;
		if (n[0] == 'x' && n[1] >= '0' && n[1] <= '9') {
			int k = atoi(n + 1);
			if (k >= 0 && k < 31)
				v->x[k] = r->handle;
		} else if (!strcmp(n, "pc")) {
			v->pc = r->handle;
		} else if (!g_ascii_strcasecmp(n, "TTBR0_EL1")) {
			v->ttbr0 = r->handle;
		} else if (!g_ascii_strcasecmp(n, "TTBR1_EL1")) {
			v->ttbr1 = r->handle;
		} else if (!g_ascii_strcasecmp(n, "TCR_EL1")) {
			v->tcr = r->handle;
		}
	}
	g_array_free(regs, TRUE);
	if (!v->ttbr0 || !v->ttbr1 || !v->tcr || !v->x[0])
		fprintf(stderr, "ptt: vcpu %u: TTBR0_EL1/TTBR1_EL1/TCR_EL1/x0 not readable\n", cpu);
	nvcpus_seen++;
}

static void on_plugin_exit(qemu_plugin_id_t id, void *p)
{
	(void)id; (void)p;
	g_mutex_lock(&lock);
	if (state == ST_REC) {
		emit("# recording cut short: the guest stopped before the stop marker");
		g_array_sort(inserts, insert_cmp);
		write_out();
		state = ST_DONE;
	} else if (state != ST_DONE) {
		fprintf(stderr, "ptt: the start marker was never executed: nothing recorded\n");
	}
	g_mutex_unlock(&lock);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	if (!info->system_emulation || strcmp(info->target_name, "aarch64")) {
		fprintf(stderr, "ptt: needs qemu-system-aarch64\n");
		return -1;
	}
	for (int i = 0; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		if (!eq)
			continue;
		*eq = 0;
		const char *k = argv[i], *val = eq + 1;
		if (!strcmp(k, "out"))
			out_path = g_strdup(val);
		else if (!strcmp(k, "lin")) {
			lin_off = strtoull(val, NULL, 0);
			lin_given = true;
		} else if (!strcmp(k, "ram"))
			ram_base = strtoull(val, NULL, 0);
		else if (!strcmp(k, "ramsize"))
			ram_size = strtoull(val, NULL, 0);
		else if (vmap_arg(k, val))
			;
		else {
			fprintf(stderr, "ptt: unknown argument %s\n", k);
			return -1;
		}
	}
	if (!out_path) {
		fprintf(stderr, "ptt: out=FILE is required\n");
		return -1;
	}
	if (!vmap_args_ok())
		return -1;
	live_bm = g_malloc0((ram_size >> PAGE_SHIFT) / 8 + 1);
	tables = g_hash_table_new(g_direct_hash, g_direct_equal);
	lines = g_ptr_array_new();
	inserts = g_array_new(FALSE, FALSE, sizeof(struct insert));
	qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_atexit_cb(id, on_plugin_exit, NULL);
	return 0;
}
