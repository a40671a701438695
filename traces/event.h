/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * event.h - the ptfuzz event vocabulary, shared by the trace format
 * (traces/), the machine model (engine/machine), the mm model (engine/mm, engine/arm64, engine/model) and
 * the fuzzers.  One flat struct per event; which fields a kind uses is
 * given by the schema table in event.c (pt_kind_schema()), which also
 * drives the text syntax, so the text reader, the text writer, the .proto
 * and the model cannot disagree.
 *
 * Text form (one event per line, `#` starts a comment):
 *
 *   cpu1 tlbi vale1is va=0xffff800008000000 asid=3 ttl=3
 *   ^cpu ^kind ^op     ^key=value ...
 *
 * Numbers are decimal or 0x-hex; lengths/addresses also take size
 * suffixes K M G T (powers of two: 2M = 0x200000).
 */
#ifndef PTFUZZ_EVENT_H
#define PTFUZZ_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PT_FORMAT_VERSION 1u
#define PT_MAX_CPUS 64u
#define PT_MAX_THREADS 64u	/* `thread` events per trace (each is a stackful thread of the model) */
#define PT_TID_IDLE 0x7fffffffu	/* the tid of no thread: what a CPU runs once its thread migrated away */

/* Event kinds.  The numeric values are the wire values of the .proto enum
 * EventKind; never renumber, only append. */
enum pt_kind {
	PT_EV_NONE = 0,
	/* ---- arch level: what a CPU or the page allocator does ---- */
	PT_EV_PT_WRITE = 1,	/* store to a page-table entry: pa (entry address), val (new descriptor) */
	PT_EV_PT_ZERO = 2,	/* clear_page() of a table frame: pa (frame) */
	PT_EV_DSB = 3,		/* op: barrier domain */
	PT_EV_DMB = 4,		/* op: barrier domain */
	PT_EV_ISB = 5,
	PT_EV_TLBI = 6,		/* op: tlbi op; va, asid, level (TTL hint, 0 = none), num/scale (range forms) */
	PT_EV_TTBR0 = 7,	/* TTBR0_EL1 write: pa (root table), asid */
	PT_EV_TTBR1 = 8,	/* TTBR1_EL1 write: pa (root table) */
	PT_EV_ACCESS = 9,	/* a load/store/fetch by the CPU: va, asid, flags (PT_ACC_*) */
	PT_EV_PAGE_ALLOC = 10,	/* op: frame type; pa, order, node, level (tables), flags (PT_ALLOC_ZERO) */
	PT_EV_PAGE_FREE = 11,	/* pa, order */
	PT_EV_LOCK = 12,	/* op: lock class; pa (lock key: table pa, mm id, ...), flags (PT_LOCK_WRITE) */
	PT_EV_UNLOCK = 13,	/* op: lock class; pa */
	PT_EV_IRQ_ENTER = 14,
	PT_EV_IRQ_EXIT = 15,
	PT_EV_SWITCH = 16,	/* context switch on this CPU to thread tid (implies __switch_to()'s dsb(ish)); flags */
	PT_EV_MIGRATE = 17,	/* thread tid leaves this CPU for CPU `len` (to=) */
	PT_EV_BEGIN = 18,	/* op: operation kind; va, len, asid: an operation (syscall, vmap, ...) starts */
	PT_EV_END = 19,		/* the operation this CPU began returns; err (len): the errno it returns, 0 = success */
	PT_EV_MM_EXIT = 20,	/* address space asid is torn down; its ASID is not reused before rollover */
	PT_EV_LOCK_RULE = 21,	/* hint: tables under root pa require lock (op class, key va) to be written */
	PT_EV_COMMENT = 22,	/* a `#` comment line, kept so that conversion is lossless */
	PT_EV_VMAP_AREA = 23,	/* op: what happens to the vmap area [va, va+len) (enum pt_vmap_area_ev) */
	/* ---- ops level: what a thread asks of the kernel ---- */
	PT_EV_MMAP = 40,	/* va, len, prot, asid, flags (PT_MAP_*), order (folio order for touches) */
	PT_EV_MUNMAP = 41,	/* va, len, asid */
	PT_EV_MREMAP = 42,	/* va, len, va2 (new address), len2 (new length), asid, flags (PT_MREMAP_*) */
	PT_EV_MPROTECT = 43,	/* va, len, prot, asid, flags (PT_MPROT_NUMA) */
	PT_EV_MADVISE = 44,	/* op: advice; va, len, asid */
	PT_EV_TOUCH = 45,	/* va, len, asid, flags (PT_ACC_*), order (folio order to fault in) */
	PT_EV_VMALLOC = 46,	/* va, len, flags (PT_MAP_HUGE), node */
	PT_EV_VMAP = 47,	/* va, len, pa (physically contiguous source), prot, flags (PT_MAP_HUGE) */
	PT_EV_VUNMAP = 48,	/* va, len */
	PT_EV_VFREE = 49,	/* va */
	PT_EV_PAGEOUT = 50,	/* va, asid: reclaim the page mapped at va */
	PT_EV_MAP_MEM = 51,	/* pa, len, va (linear-map address), flags (PT_MAP_*) */
	PT_EV_THREAD = 52,	/* create thread tid (>= the header's cpus: 0..cpus-1 are the CPUs' own) in
				 * address space asid */
	PT_EV_SCHED = 53,	/* op: what to count (enum pt_sched_on); thread tid runs `steps` (len) such scheduling
				 * points, then stops (steps=0: until its queued ops are done) */
	PT_EV_IRQ = 54,		/* inject an IRQ whose handler performs op (an ops-level kind) at va/len */
	PT_EV_HUGETLB = 55,	/* op: hugetlb action; va, len (huge page size), pa, prot, asid */
	/* ---- evidence: what a captured kernel did (the model does not run these) ---- */
	PT_EV_KERNEL = 56,	/* op: what (enum pt_kernel_ev); for the ops event before it of the same
				 * address space: va, va2, len, pa (ret=: a return value), asid */
	PT_EV_KIND_COUNT
};

/* PT_EV_DSB / PT_EV_DMB domains (Arm ARM: DSB <option>) */
enum pt_barrier { PT_BAR_SY = 0, PT_BAR_ISH = 1, PT_BAR_ISHST = 2, PT_BAR_NSH = 3,
		  PT_BAR_ISHLD = 4, PT_BAR_COUNT };

/* PT_EV_TLBI operations, as Linux uses them on arm64 (EL1&0 regime). */
enum pt_tlbi {
	PT_TLBI_VAE1IS = 0, PT_TLBI_VALE1IS, PT_TLBI_VAAE1IS, PT_TLBI_VAALE1IS,
	PT_TLBI_ASIDE1IS, PT_TLBI_VMALLE1IS, PT_TLBI_RVAE1IS, PT_TLBI_RVALE1IS,
	PT_TLBI_RVAAE1IS, PT_TLBI_RVAALE1IS,
	PT_TLBI_VAE1, PT_TLBI_VALE1, PT_TLBI_VAAE1, PT_TLBI_VAALE1,
	PT_TLBI_ASIDE1, PT_TLBI_VMALLE1, PT_TLBI_RVAE1, PT_TLBI_RVALE1,
	PT_TLBI_RVAAE1, PT_TLBI_RVAALE1,
	PT_TLBI_COUNT
};

/* A range form (RVA*): its operand is BaseADDR, NUM, SCALE rather than one VA. */
static inline bool pt_tlbi_is_range(unsigned op)
{
	unsigned b = op >= PT_TLBI_VAE1 ? op - PT_TLBI_VAE1 : op;
	return b >= PT_TLBI_RVAE1IS && b <= PT_TLBI_RVAALE1IS;
}

/* PT_EV_PAGE_ALLOC frame types */
enum pt_frame_type { PT_FRAME_DATA = 0, PT_FRAME_TABLE = 1, PT_FRAME_TYPE_COUNT };

/* PT_EV_LOCK / PT_EV_UNLOCK classes */
enum pt_lock_class { PT_LOCK_MMAP = 0, PT_LOCK_PTL, PT_LOCK_PMD, PT_LOCK_PUD, PT_LOCK_RMAP,
		     PT_LOCK_OTHER, PT_LOCK_CLASS_COUNT };

/* PT_EV_BEGIN operation kinds (what an arch-level trace says it is inside) */
enum pt_op_kind { PT_OP_OTHER = 0, PT_OP_MMAP, PT_OP_MUNMAP, PT_OP_MREMAP, PT_OP_MPROTECT,
		  PT_OP_MADVISE, PT_OP_FAULT, PT_OP_VMALLOC, PT_OP_VMAP, PT_OP_VUNMAP, PT_OP_VFREE,
		  PT_OP_PAGEOUT, PT_OP_MAP_MEM, PT_OP_HUGETLB, PT_OP_KIND_COUNT };

/*
 * PT_EV_VMAP_AREA: the lazy-free bookkeeping of mm/vmalloc.c.  LAZY is
 * free_vmap_area_noflush(): the unmapped area [va, va+len) goes on the purge
 * list, its VA still reserved, its TLB flush deferred; PURGE is
 * __purge_vmap_area_lazy() handing the lazily freed areas inside [va, va+len)
 * back to the allocator, after its flush_tlb_kernel_range().
 */
enum pt_vmap_area_ev { PT_VMAP_AREA_LAZY = 0, PT_VMAP_AREA_PURGE, PT_VMAP_AREA_COUNT };

/* PT_EV_MADVISE advice */
enum pt_advice { PT_ADV_DONTNEED = 0, PT_ADV_FREE, PT_ADV_PAGEOUT, PT_ADV_COLD,
		 PT_ADV_HUGEPAGE, PT_ADV_NOHUGEPAGE, PT_ADV_COUNT };

/* PT_EV_SCHED: the scheduling points `steps` counts */
enum pt_sched_on { PT_SCHED_ANY = 0, PT_SCHED_READ, PT_SCHED_PT_WRITE, PT_SCHED_TLBI, PT_SCHED_DSB,
		   PT_SCHED_DMB, PT_SCHED_ISB, PT_SCHED_LOCK, PT_SCHED_UNLOCK, PT_SCHED_PAGE_ALLOC,
		   PT_SCHED_PAGE_FREE, PT_SCHED_ACCESS, PT_SCHED_COUNT };

/* PT_EV_HUGETLB actions */
enum pt_hugetlb_op { PT_HUGE_SET = 0, PT_HUGE_CLEAR, PT_HUGE_WRPROTECT, PT_HUGE_ACCESS_FLAGS,
		     PT_HUGE_OP_COUNT };

/*
 * PT_EV_KERNEL: evidence a capture recorded (traces/import/ftrace.c: syscall exits and
 * kprobes).  RESULT is the syscall's return value as the kernel returned it
 * (ret=: an address, 0, or a negative errno in two's complement); the others
 * are calls of the kernel function of that name: va, va2 (new_va=), len their
 * address, second address and length arguments, ret= a return probe's value.
 */
enum pt_kernel_ev { PT_KEV_RESULT = 0, PT_KEV_MOVE_PAGE_TABLES, PT_KEV_MOVE_PAGE_TABLES_RET,
		    PT_KEV_MOVE_HUGE_PMD, PT_KEV_MOVE_HUGE_PUD, PT_KEV_SPLIT_HUGE_PMD, PT_KEV_CHANGE_HUGE_PMD,
		    PT_KEV_ZAP_HUGE_PMD, PT_KEV_HUGE_PMD_FAULT, PT_KEV_FREE_PGTABLES, PT_KEV_TLB_FINISH_MMU,
		    PT_KEV_PTE_ALLOC, PT_KEV_PMD_ALLOC, PT_KEV_VMALLOC, PT_KEV_VMALLOC_RET, PT_KEV_VMAP,
		    PT_KEV_VMAP_RET, PT_KEV_VUNMAP, PT_KEV_VFREE, PT_KEV_COUNT };

/* flags */
#define PT_ACC_WRITE	0x1u	/* access: store */
#define PT_ACC_EXEC	0x2u	/* access: instruction fetch */
#define PT_ALLOC_ZERO	0x1u	/* page_alloc: __GFP_ZERO, zeroed by the allocating CPU */
#define PT_LOCK_WRITE	0x1u	/* lock: taken for write (mmap lock) */
#define PT_SWITCH_NO_DSB 0x1u	/* switch: a __switch_to() without its dsb(ish) (bug variant) */
#define PT_MAP_HUGE	0x1u	/* vmalloc/vmap/map_mem: huge mappings allowed */
#define PT_MAP_FIXED	0x2u
#define PT_MAP_POPULATE	0x4u
#define PT_MAP_NOCONT	0x8u	/* map_mem: NO_CONT_MAPPINGS */
#define PT_MREMAP_MAYMOVE	0x1u
#define PT_MREMAP_FIXED		0x2u
#define PT_MREMAP_DONTUNMAP	0x4u
#define PT_MPROT_NUMA	0x1u	/* mprotect: the MM_CP_PROT_NUMA scan */

/* prot bits (ops level) */
#define PT_PROT_READ	0x1u
#define PT_PROT_WRITE	0x2u
#define PT_PROT_EXEC	0x4u

/* Which field a schema key names. */
enum pt_field {
	PT_F_VA = 0, PT_F_PA, PT_F_VAL, PT_F_LEN, PT_F_VA2, PT_F_LEN2, PT_F_ASID,
	PT_F_LEVEL, PT_F_NUM, PT_F_SCALE, PT_F_ORDER, PT_F_NODE, PT_F_TID,
	PT_F_PROT, PT_F_FLAGS, PT_F_COUNT
};

/*
 * The event.  Unused fields are zero; zero is also every field's default,
 * so "absent" and "0" are the same thing on the wire and in text (the
 * writer omits optional keys that are 0).
 */
struct pt_event {
	uint8_t kind;		/* enum pt_kind */
	uint8_t op;		/* per-kind sub-operation (see each enum above) */
	uint16_t cpu;		/* the CPU performing the event */
	uint16_t asid;
	uint8_t level;		/* table level (0..3) of a page_alloc'd table; TTL hint for tlbi */
	uint8_t order;		/* folio / allocation order */
	uint8_t num;		/* range TLBI NUM (0..31) */
	uint8_t scale;		/* range TLBI SCALE (0..3) */
	uint8_t node;		/* NUMA node */
	uint8_t prot;		/* PT_PROT_* */
	uint32_t tid;
	uint32_t flags;
	uint64_t va;
	uint64_t pa;
	uint64_t val;
	uint64_t len;
	uint64_t va2;
	uint64_t len2;
	const char *text;	/* PT_EV_COMMENT only; owned by whoever produced the event */
};

/* The header every trace starts with. */
struct pt_header {
	uint32_t version;	/* PT_FORMAT_VERSION */
	uint32_t granule;	/* bytes: 4096 */
	uint32_t va_bits;	/* 48, or 52 (needs lpa2) */
	uint32_t lpa2;		/* 1: FEAT_LPA2 (TCR_EL1.DS=1) descriptors and TLBI operands; 0: without */
	uint32_t cpus;		/* number of CPUs, 1..PT_MAX_CPUS */
	char kernel[128];	/* source kernel (package and version), "" if hand-written */
	char machine[128];	/* source machine (e.g. "qemu-system-aarch64 10.0.2 -M virt") */
	char method[64];	/* capture method: "hand", "model", "qemu-plugin", "ftrace", "casemate", "fuzz" */
};

void pt_header_default(struct pt_header *h);

/* ---- the schema: names and keys ---- */

enum pt_key_req { PT_KEY_OPT = 0, PT_KEY_REQ = 1 };

struct pt_key {
	const char *name;	/* text key, e.g. "va" */
	enum pt_field field;
	enum pt_key_req req;
};

struct pt_kind_schema {
	const char *name;		/* text keyword, e.g. "tlbi" */
	const char *const *ops;		/* names of the sub-operation (NULL: the kind has none) */
	unsigned nops;
	const struct pt_key *keys;	/* terminated by a NULL name */
	bool ops_level;			/* an ops-level (syscall) event rather than an arch event */
};

/*! pt_kind_schema() : the schema of a kind, or NULL if kind is not a known kind. */
const struct pt_kind_schema *pt_kind_schema(unsigned kind);
/*! pt_kind_by_name() : kind for a text keyword, or PT_EV_NONE. */
unsigned pt_kind_by_name(const char *name, size_t len);
const char *pt_kind_name(unsigned kind);
/*! pt_op_name() : the sub-operation name of ev (e.g. "vale1is"), "" if the kind has none. */
const char *pt_op_name(unsigned kind, unsigned op);

uint64_t pt_event_get(const struct pt_event *ev, enum pt_field f);
void pt_event_set(struct pt_event *ev, enum pt_field f, uint64_t v);
/*! pt_field_max() : the largest value field f can hold. */
uint64_t pt_field_max(enum pt_field f);

/*! pt_event_valid() : true if ev's kind/op are known and its fields fit the schema. */
bool pt_event_valid(const struct pt_event *ev, unsigned cpus);

/*! pt_event_eq() : a and b are the same event: every field, and the text (NULL is ""). */
bool pt_event_eq(const struct pt_event *a, const struct pt_event *b);
/*! pt_header_eq() : a and b are the same header, every field a trace carries. */
bool pt_header_eq(const struct pt_header *a, const struct pt_header *b);

/* ---- the 48-bit VA layout ---- */

/* Every layer's one spelling of the 48-bit VA space (va_bits=48 in the header; an lpa2 trace,
 * 52-bit, holds arch-level events only): user addresses below PT_USER_VA_END (TTBR0's
 * 2^48 bytes, the kernel's TASK_SIZE), kernel ones from PT_KERNEL_VA_BASE (TTBR1's). */
#define PT_VA_BITS		48u
#define PT_USER_VA_END		(1ull << PT_VA_BITS)
#define PT_KERNEL_VA_BASE	(0ull - PT_USER_VA_END)

/* ---- arm64 descriptors (VMSAv8-64, 4K granule, stage 1) ---- */

#define PT_DESC_VALID	(1ull << 0)
#define PT_DESC_TABLE	(1ull << 1)	/* table (levels 0-2) or page (level 3) */
#define PT_DESC_ATTR_SHIFT 2		/* AttrIndx[2:0] */
#define PT_DESC_ATTR_MASK (7ull << 2)
#define PT_DESC_USER	(1ull << 6)	/* AP[1]: EL0 access */
#define PT_DESC_RDONLY	(1ull << 7)	/* AP[2] */
#define PT_DESC_SH_SHIFT 8
#define PT_DESC_SH_MASK	(3ull << 8)
#define PT_DESC_AF	(1ull << 10)
#define PT_DESC_NG	(1ull << 11)
#define PT_DESC_OA_MASK	0x0000fffffffff000ull	/* OA[47:12] */
/* FEAT_LPA2 (TCR_EL1.DS=1, header lpa2=1): OA[49:12] in bits [49:12], OA[51:50] in bits [9:8]
 * (the SH field moves to TCR_EL1); the same for the next-level table address of a table
 * descriptor (D8.3.1) */
#define PT_DESC_OA_MASK_LPA2 0x0003fffffffff000ull	/* OA[49:12] */
#define PT_DESC_OA_HI_LPA2 (3ull << 8)			/* OA[51:50] */
#define PT_DESC_DBM	(1ull << 51)
#define PT_DESC_CONT	(1ull << 52)
#define PT_DESC_PXN	(1ull << 53)
#define PT_DESC_UXN	(1ull << 54)
#define PT_DESC_DIRTY	(1ull << 55)	/* Linux software bit PTE_DIRTY */
#define PT_DESC_SPECIAL	(1ull << 56)	/* Linux software bit PTE_SPECIAL */
#define PT_DESC_PROTNONE (1ull << 58)	/* Linux software bit PTE_PROT_NONE (invalid entries) */

/*
 * Descriptor text syntax (the `val=` of pt_write, also accepted anywhere a
 * descriptor is expected):
 *
 *   0x...                         raw 64-bit value
 *   inv[,flag...]                 invalid (valid bit clear), with software bits
 *   tbl@PA[,flag...]              table descriptor (bits[1:0] = 0b11)
 *   pg@PA[,flag...]               page descriptor (level 3; bits[1:0] = 0b11)
 *   blk@PA[,flag...]              block descriptor (levels 1-2; bits[1:0] = 0b01)
 *
 * flags: attr=N sh=N user ro af ng dbm cont pxn uxn dirty special protnone
 * x=0xBITS (any remaining bits).  tbl and pg are the same bits; the writer
 * prints pg when any of bits [11:2] is set, tbl otherwise.
 */
/*! pt_desc_format() : write the canonical text form of d into buf; returns length. */
size_t pt_desc_format(uint64_t d, char *buf, size_t size);
/*! pt_desc_parse() : parse s[0..len) as a descriptor; 0 on success, -1 if malformed. */
int pt_desc_parse(const char *s, size_t len, uint64_t *out);

/*! pt_parse_u64() : parse a number with an optional K/M/G/T suffix; 0 ok, -1 malformed, -2 overflow. */
int pt_parse_u64(const char *s, size_t len, uint64_t *out);

#endif
