/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mmu.c - creation of the kernel linear map: arch/arm64/mm/mmu.c
 * __create_pgd_mapping() and its per-level helpers, as patched by seed 003
 * (Ryan Roberts, "arm64: mm: Don't remap pgtables for allocate vs populate",
 * 6.1 stable 3/3, upstream 0e9df1c905d8) on top of its two predecessors in
 * the same series ("Don't remap pgtables per-cont(pte|pmd) block",
 * "Batch dsb and isb when populating pgtables"), and the fixmap slots those
 * helpers write new tables through (arch/arm64/mm/fixmap.c).
 *
 * The patched logic: a new table is mapped at its level's fixmap slot once,
 * zeroed there (init_clear_pgtable(): clear_page, then dsb(ishst) so that the
 * walker sees zeroes before the table descriptor that publishes it), published,
 * filled through the same mapping, and unmapped (clear_fixmap: the slot's TLBI).
 * Before the patch the allocator zeroed it through the FIX_PTE slot and unmapped
 * it, and the populate step mapped it again: two fixmap TLBIs per table.
 *
 * Simplifications: the kernel (TTBR1) pgd is live while the linear map is built
 * (paging_init() builds it through the FIX_PGD mapping of swapper_pg_dir before
 * switching TTBR1: one map/unmap per boot, the same before and after the patch,
 * not modelled); p4d is folded into the pgd (4 levels); the linear map has
 * PAGE_KERNEL attributes (no MTE tagging).  Without PT_MAP_HUGE in the event's
 * flags the mapping is made with NO_BLOCK_MAPPINGS, as the kernel does when
 * can_set_direct_map() (rodata_full, debug_pagealloc, kfence); PT_MAP_NOCONT is
 * NO_CONT_MAPPINGS.
 */
#include "mm_internal.h"

/* __create_pgd_mapping() flags */
#define NO_BLOCK_MAPPINGS	(1u << 0)
#define NO_CONT_MAPPINGS	(1u << 1)
#define NO_EXEC_MAPPINGS	(1u << 2)

/* Table descriptor attributes (arch/arm64/include/asm/pgtable-hwdef.h) */
#define PMD_TABLE_PXN		(1ull << 59)
#define PMD_TABLE_UXN		(1ull << 60)

/*
 * The fixmap slots used to write page tables (arch/arm64/include/asm/fixmap.h:
 * FIX_PTE, FIX_PMD, FIX_PUD, FIX_PGD at the top of enum fixed_addresses; the
 * indices here are the model's, the order is the kernel's).  All of them lie in
 * the 2M below FIXADDR_TOP, so one fixmap PTE table (mm->fixmap_pte) holds them.
 */
enum fixed_addresses { FIX_HOLE = 0, FIX_PTE = 8, FIX_PMD, FIX_PUD, FIX_PGD };
#define __fix_to_virt(x) (FIXADDR_TOP - ((uint64_t)(x) << PAGE_SHIFT))

/* fixmap_lock, the mutex __create_pgd_mapping() holds (PT_LOCK_OTHER, keyed by the fixmap) */
#define FIXMAP_LOCK_KEY FIXADDR_TOP

/* One __create_pgd_mapping() call: what every level passes down. */
struct map_op {
	struct mm_model *mm;
	struct mm_thread *t;
	struct mm_space *k;	/* init_mm */
	uint64_t prot;		/* leaf attributes without the output address (PAGE_KERNEL) */
	unsigned flags;		/* NO_BLOCK_MAPPINGS | NO_CONT_MAPPINGS | NO_EXEC_MAPPINGS */
};

static uint64_t pte_cont_addr_end(uint64_t addr, uint64_t end) { return pt_next_addr(addr, end, CONT_PTE_SIZE); }
static uint64_t pmd_cont_addr_end(uint64_t addr, uint64_t end) { return pt_next_addr(addr, end, CONT_PMD_SIZE); }

/* ---- the fixmap (arch/arm64/mm/fixmap.c) ---- */

/*
 * early_fixmap_init(): the tables that hold the fixmap slots.  The kernel's are
 * static (bm_pud/bm_pmd/bm_pte in the image) and hooked early in setup_arch();
 * the model allocates them on the first use, zeroed, and hooks them with the
 * usual publish ordering.
 */
static uint64_t early_fixmap_init(struct mm_model *mm, struct mm_thread *t, struct mm_space *k)
{
	if (mm->fixmap_pte)
		return mm->fixmap_pte;
	uint64_t va = __fix_to_virt(FIX_PTE), table = k->pgd;
	for (unsigned level = 0; level < 3; level++) {
		uint64_t ep = pt_entry_pa(table, level, va);
		uint64_t e = mm_read(mm, t, ep);
		table = pte_none(e) ? mm_table_alloc_install(mm, t, k, ep, level + 1) : desc_pa(e);
	}
	mm->fixmap_pte = table;
	return table;
}

/*
 * __set_fixmap(): map phys at the slot, or (phys == 0, clear_fixmap()) unmap it
 * and invalidate the slot's translation.  A set is a new valid kernel pte:
 * __set_pte() gives it its dsb(ishst) + isb; a clear must be followed by the
 * TLBI before the slot maps anything else, or a CPU may still translate the
 * slot to the previous table (and the next set would be a TLB conflict).
 */
static void __set_fixmap(struct map_op *op, enum fixed_addresses idx, uint64_t phys)
{
	struct mm_model *mm = op->mm;
	struct mm_thread *t = op->t;
	uint64_t addr = __fix_to_virt(idx);
	uint64_t ptep = pt_entry_pa(early_fixmap_init(mm, t, op->k), 3, addr);

	if (phys) {
		__set_pte(mm, t, ptep, mk_kernel_pte(phys & PAGE_MASK));
		/* the table is written through the slot from now on */
		struct pt_event acc = { .kind = PT_EV_ACCESS, .va = addr, .flags = PT_ACC_WRITE };
		mm_emit(mm, t, &acc);
		return;
	}
	mm_write(mm, t, ptep, 0);			/* __pte_clear() */
	/* bug zoo: the slot is reused while its old translation may still be cached */
	if (mm_variant(mm, MMV_PGTABLE_FIXMAP_NO_FLUSH))
		return;
	flush_tlb_kernel_range(mm, t, addr, addr + PAGE_SIZE);
}

static void clear_fixmap(struct map_op *op, enum fixed_addresses idx) { __set_fixmap(op, idx, 0); }

/* pte_set_fixmap() / pmd_set_fixmap() / pud_set_fixmap() and their clears: the slot of each level */
static const enum fixed_addresses fixmap_slot[4] = { FIX_PGD, FIX_PUD, FIX_PMD, FIX_PTE };

static void set_fixmap_table(struct map_op *op, unsigned level, uint64_t table)
{
	__set_fixmap(op, fixmap_slot[level], table);
}

static void clear_fixmap_table(struct map_op *op, unsigned level)
{
	clear_fixmap(op, fixmap_slot[level]);
}

/* ---- table allocation and zeroing ---- */

/*
 * init_clear_pgtable() (seed 003): clear_page() through the fixmap, then
 * dsb(ishst): the zeroes must be visible to table walks before the table is
 * published, or a walker may follow garbage entries of the new table.
 */
static void init_clear_pgtable(struct map_op *op, uint64_t table)
{
	mm_zero_table(op->mm, op->t, table);
	/* bug zoo: the table is published with its zeroing still in the store buffer */
	if (mm_variant(op->mm, MMV_PGTABLE_NO_ZERO_DSB))
		return;
	mm_dsb(op->mm, op->t, PT_BAR_ISHST);
}

/*
 * early_pgtable_alloc(): a page from memblock, not zeroed (seed 003 also drops
 * __GFP_ZERO from the late allocator: init_clear_pgtable() zeroes it).  The
 * pre-patch allocator zeroed the page itself through the FIX_PTE slot (free at
 * every level while the others may be in use), relying on the slot's unmap for
 * the barriers that make the zeroing visible.
 */
static uint64_t pgtable_alloc(struct map_op *op, unsigned level)
{
	uint64_t phys = mm_alloc_table_nozero(op->mm, op->t, level);
	if (mm_variant(op->mm, MMV_PGTABLE_FIXMAP_TWICE)) {
		__set_fixmap(op, FIX_PTE, phys);
		mm_zero_table(op->mm, op->t, phys);	/* memset(ptr, 0, PAGE_SIZE) */
		clear_fixmap(op, FIX_PTE);
	}
	return phys;
}

/*
 * A new table at `level` for the entry at entryp: allocated, zeroed through its
 * fixmap slot (left mapped for the caller to fill), published.  The pre-patch
 * form publishes the table the allocator zeroed and maps it again afterwards.
 */
static uint64_t alloc_publish_table(struct map_op *op, uint64_t entryp, unsigned level, uint64_t tblattr)
{
	uint64_t phys = pgtable_alloc(op, level);
	bool twice = mm_variant(op->mm, MMV_PGTABLE_FIXMAP_TWICE);
	if (!twice) {
		set_fixmap_table(op, level, phys);
		init_clear_pgtable(op, phys);
	}
	/* __pmd_populate() / __pud_populate() / __p4d_populate(): set_p?d() emits dsb(ishst) + isb */
	uint64_t desc = phys | PMD_TYPE_TABLE | tblattr;
	if (level == 1)
		set_pgd(op->mm, op->t, entryp, desc);
	else
		set_pmd(op->mm, op->t, entryp, desc);
	if (twice)
		set_fixmap_table(op, level, phys);	/* p?d_set_fixmap_offset() */
	return phys;
}

static uint64_t table_attrs(const struct map_op *op)
{
	return PMD_TABLE_UXN | ((op->flags & NO_EXEC_MAPPINGS) ? PMD_TABLE_PXN : 0);
}

/* ---- the levels ---- */

/*
 * init_pte(): the ptes of one contiguous chunk.  The barriers that make them
 * visible are deferred to the fixmap unmap at the end of alloc_init_cont_pte()
 * (__set_pte_nosync(), "Batch dsb and isb when populating pgtables").
 */
static void init_pte(struct map_op *op, uint64_t ptep, uint64_t addr, uint64_t end, uint64_t phys, uint64_t prot)
{
	do {
		if (!mm_step(op->mm, op->t))
			return;
		uint64_t old_pte = mm_read(op->mm, op->t, ptep);
		uint64_t pte = phys | prot;
		/* after a pte was populated once, only its permissions may change (BUG_ON) */
		if (!pt_pgattr_change_is_safe(old_pte, pte))
			mm_warn(op->mm, op->t, "map_mem-live-remap", addr,
				"linear map: live pte of 0x%llx changed other than in its permissions",
				(unsigned long long)addr);
		__set_pte_nosync(op->mm, op->t, ptep, pte);
		phys += PAGE_SIZE;
	} while (ptep += 8, addr += PAGE_SIZE, addr != end);
}

/* alloc_init_cont_pte(): the PTE table under pmdp, contiguous (64K) chunks where aligned. */
static void alloc_init_cont_pte(struct map_op *op, uint64_t pmdp, uint64_t addr, uint64_t end, uint64_t phys,
				uint64_t prot)
{
	struct mm_model *mm = op->mm;
	struct mm_thread *t = op->t;
	uint64_t pmd = mm_read(mm, t, pmdp), table;

	if (pmd_sect(pmd)) {	/* BUG_ON(pmd_sect(pmd)): a block where a table is needed */
		mm_warn(mm, t, "map_mem-block-in-the-way", addr, "linear map: a PMD block covers 0x%llx",
			(unsigned long long)addr);
		return;
	}
	if (pte_none(pmd)) {
		table = alloc_publish_table(op, pmdp, 3, table_attrs(op));
	} else {
		table = desc_pa(pmd);
		set_fixmap_table(op, 3, table);		/* pte_set_fixmap_offset() */
	}
	uint64_t ptep = pt_entry_pa(table, 3, addr);
	do {
		uint64_t next = pte_cont_addr_end(addr, end);
		uint64_t __prot = prot;
		/* a contiguous mapping if the chunk is suitably aligned */
		if (((addr | next | phys) & ~CONT_PTE_MASK) == 0 && !(op->flags & NO_CONT_MAPPINGS))
			__prot |= PT_DESC_CONT;
		init_pte(op, ptep, addr, next, phys, __prot);
		ptep = pt_entry_pa(table, 3, next);	/* ptep += pte_index(next) - pte_index(addr) */
		phys += next - addr;
		addr = next;
	} while (addr != end && !t->hung);
	/* the unmap's barriers and TLBI also make the ptes written above visible to the walker */
	clear_fixmap_table(op, 3);
}

/* pmd_set_huge(): a 2M block, if the entry holds nothing else than the same block. */
static void pmd_set_huge(struct map_op *op, uint64_t pmdp, uint64_t phys, uint64_t prot)
{
	uint64_t new_pmd = (phys | prot) & ~PT_DESC_TABLE;	/* mk_pmd_sect_prot() */
	uint64_t old = mm_read(op->mm, op->t, pmdp);
	/* only permission changes of a live block (pgattr_change_is_safe) */
	if (!pt_pgattr_change_is_safe(old, new_pmd)) {
		mm_warn(op->mm, op->t, "map_mem-live-remap", 0, "linear map: live PMD 0x%llx changed other than "
			"in its permissions", (unsigned long long)pmdp);
		return;
	}
	set_pmd(op->mm, op->t, pmdp, new_pmd);
}

/* init_pmd(): 2M blocks where aligned, PTE tables elsewhere. */
static void init_pmd(struct map_op *op, uint64_t pmdp, uint64_t addr, uint64_t end, uint64_t phys, uint64_t prot)
{
	uint64_t next;
	do {
		if (!mm_step(op->mm, op->t))
			return;
		next = pmd_addr_end(addr, end);
		uint64_t old_pmd = mm_read(op->mm, op->t, pmdp);
		/* try a section mapping first */
		if (((addr | next | phys) & ~PMD_MASK) == 0 && !(op->flags & NO_BLOCK_MAPPINGS)) {
			pmd_set_huge(op, pmdp, phys, prot);
		} else {
			alloc_init_cont_pte(op, pmdp, addr, next, phys, prot & ~PT_DESC_CONT);
			/* BUG_ON: a table once there stays the same table */
			if (old_pmd && old_pmd != mm_read(op->mm, op->t, pmdp))
				mm_warn(op->mm, op->t, "map_mem-table-replaced", addr,
					"linear map: the PMD of 0x%llx changed under alloc_init_cont_pte",
					(unsigned long long)addr);
		}
		phys += next - addr;
	} while (pmdp += 8, addr = next, addr != end);
}

/* alloc_init_cont_pmd(): the PMD table under pudp, contiguous (32M) groups of blocks where aligned. */
static void alloc_init_cont_pmd(struct map_op *op, uint64_t pudp, uint64_t addr, uint64_t end, uint64_t phys)
{
	struct mm_model *mm = op->mm;
	struct mm_thread *t = op->t;
	uint64_t pud = mm_read(mm, t, pudp), table;

	if (pmd_sect(pud)) {	/* BUG_ON(pud_sect(pud)) */
		mm_warn(mm, t, "map_mem-block-in-the-way", addr, "linear map: a PUD block covers 0x%llx",
			(unsigned long long)addr);
		return;
	}
	if (pte_none(pud)) {
		table = alloc_publish_table(op, pudp, 2, table_attrs(op));
	} else {
		table = desc_pa(pud);
		set_fixmap_table(op, 2, table);		/* pmd_set_fixmap_offset() */
	}
	uint64_t pmdp = pt_entry_pa(table, 2, addr);
	do {
		uint64_t next = pmd_cont_addr_end(addr, end);
		uint64_t __prot = op->prot;
		if (((addr | next | phys) & ~CONT_PMD_MASK) == 0 && !(op->flags & NO_CONT_MAPPINGS))
			__prot |= PT_DESC_CONT;
		init_pmd(op, pmdp, addr, next, phys, __prot);
		pmdp = pt_entry_pa(table, 2, next);	/* pmdp += pmd_index(next) - pmd_index(addr) */
		phys += next - addr;
		addr = next;
	} while (addr != end && !t->hung);
	clear_fixmap_table(op, 2);
}

/* pud_set_huge(): a 1G block (4K granule), permission changes only if one is there. */
static void pud_set_huge(struct map_op *op, uint64_t pudp, uint64_t phys)
{
	uint64_t new_pud = (phys | op->prot) & ~PT_DESC_TABLE;
	if (!pt_pgattr_change_is_safe(mm_read(op->mm, op->t, pudp), new_pud)) {
		mm_warn(op->mm, op->t, "map_mem-live-remap", 0, "linear map: live PUD 0x%llx changed other than "
			"in its permissions", (unsigned long long)pudp);
		return;
	}
	set_pud(op->mm, op->t, pudp, new_pud);
}

/* alloc_init_pud(): the PUD table under the pgd (= p4d) entry, 1G blocks where aligned. */
static void alloc_init_pud(struct map_op *op, uint64_t pgdp, uint64_t addr, uint64_t end, uint64_t phys)
{
	struct mm_model *mm = op->mm;
	struct mm_thread *t = op->t;
	uint64_t p4d = mm_read(mm, t, pgdp), table;

	if (pte_none(p4d)) {
		table = alloc_publish_table(op, pgdp, 1, table_attrs(op));
	} else {
		table = desc_pa(p4d);
		set_fixmap_table(op, 1, table);		/* pud_set_fixmap_offset() */
	}
	uint64_t pudp = pt_entry_pa(table, 1, addr), next;
	do {
		if (!mm_step(mm, t))
			break;
		next = pud_addr_end(addr, end);
		uint64_t old_pud = mm_read(mm, t, pudp);
		if (((addr | next | phys) & ~PUD_MASK) == 0 && !(op->flags & NO_BLOCK_MAPPINGS)) {
			pud_set_huge(op, pudp, phys);
		} else {
			alloc_init_cont_pmd(op, pudp, addr, next, phys);
			if (old_pud && old_pud != mm_read(mm, t, pudp))
				mm_warn(mm, t, "map_mem-table-replaced", addr,
					"linear map: the PUD of 0x%llx changed under alloc_init_cont_pmd",
					(unsigned long long)addr);
		}
		phys += next - addr;
	} while (pudp += 8, addr = next, addr != end);
	clear_fixmap_table(op, 1);
}

/* __create_pgd_mapping(): [virt, virt + size) -> [phys, ...) in init_mm, under fixmap_lock. */
static void __create_pgd_mapping(struct map_op *op, uint64_t phys, uint64_t virt, uint64_t size)
{
	struct mm_model *mm = op->mm;
	struct mm_thread *t = op->t;
	const char *prev = mm_site(mm, t, "__create_pgd_mapping");

	/* the virtual and physical address must have the same offset in a page (WARN_ON) */
	if ((phys ^ virt) & ~PAGE_MASK) {
		mm_warn(mm, t, "map_mem-misaligned", virt, "linear map: va 0x%llx and pa 0x%llx differ in their page "
			"offset", (unsigned long long)virt, (unsigned long long)phys);
		mm_site(mm, t, prev);
		return;
	}
	mm_lock(mm, t, PT_LOCK_OTHER, FIXMAP_LOCK_KEY, true);
	phys &= PAGE_MASK;
	uint64_t addr = virt & PAGE_MASK, end = ALIGN_UP(virt + size, PAGE_SIZE);
	uint64_t pgdp = mm_pgd_entry(op->k, addr), next;
	do {
		next = pgd_addr_end(addr, end);
		alloc_init_pud(op, pgdp, addr, next, phys);
		phys += next - addr;
	} while (pgdp += 8, addr = next, addr != end && !t->hung);
	mm_unlock(mm, t, PT_LOCK_OTHER, FIXMAP_LOCK_KEY);
	mm_site(mm, t, prev);
}

/* ---- the op ---- */

/*
 * The reference: [va, va + len) maps [pa, pa + len) with kernel permissions.
 * Up to 64M every page is recorded and checked; a larger range records and
 * checks the first and the last page of every 2M (the ends of every block,
 * contiguous group and PTE table the routine may get wrong), keeping a 16G
 * map at 16K reference entries.
 */
#define REF_FULL_LIMIT (64ull << 20)

static void map_mem_reference(struct mm_model *mm, struct mm_thread *t, struct mm_space *k, uint64_t va,
			      uint64_t pa, uint64_t len)
{
	const uint64_t flags = REF_PRESENT | REF_READ | REF_WRITE;
	if (len <= REF_FULL_LIMIT) {
		for (uint64_t off = 0; off < len; off += PAGE_SIZE)
			ref_set(k, va + off, pa + off, flags);
		ref_check(mm, t, k, va, va + len, "map_mem");
		return;
	}
	for (uint64_t a = va; a < va + len;) {
		uint64_t next = pmd_addr_end(a, va + len);
		uint64_t last = next - PAGE_SIZE;
		ref_set(k, a, pa + (a - va), flags);
		ref_set(k, last, pa + (last - va), flags);
		if (!ref_check(mm, t, k, a, a + PAGE_SIZE, "map_mem") ||
		    !ref_check(mm, t, k, last, last + PAGE_SIZE, "map_mem"))
			return;
		a = next;
	}
}

int mm_do_map_mem(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	struct mm_space *k = mm_kernel(mm, t);
	uint64_t pa = ev->pa, len = ev->len, va = ev->va;

	if (!va) {
		if (pa < PHYS_BASE)
			return EINVAL;
		va = PAGE_OFFSET + (pa - PHYS_BASE);	/* __phys_to_virt() */
	}
	if (!len || va < PAGE_OFFSET || va + len < va || pa + len < pa)
		return EINVAL;
	struct map_op op = {
		.mm = mm, .t = t, .k = k,
		.prot = PTE_TYPE_PAGE | PAGE_KERNEL,
		.flags = NO_EXEC_MAPPINGS,	/* map_mem(): the linear map is never executable */
	};
	if (!(ev->flags & PT_MAP_HUGE))
		op.flags |= NO_BLOCK_MAPPINGS | NO_CONT_MAPPINGS;
	if (ev->flags & PT_MAP_NOCONT)
		op.flags |= NO_CONT_MAPPINGS;
	/* the model's memory (MM_CAPACITY): the tables of the mapping (PTE tables wherever no
	 * PMD block can map: without blocks, or VA and PA not congruent mod 2M) and its
	 * reference (every page up to REF_FULL_LIMIT, two per 2M past it); past it the
	 * mapping fails before anything is written (the kernel's early_pgtable_alloc() would
	 * panic) */
	bool blocks = !(op.flags & NO_BLOCK_MAPPINGS) && !((va ^ pa) & (PMD_SIZE - 1));
	uint64_t units = mm_map_units(0, PMD_SIZE) +
			 PTRS_PER_PTE * (blocks ? len / PUD_SIZE + 2 : len / PMD_SIZE + 1) +
			 (len <= REF_FULL_LIMIT ? len >> PAGE_SHIFT : 2 * (len / PMD_SIZE + 1));
	if (!mm_capacity_ok(mm, units))
		return ENOMEM;
	__create_pgd_mapping(&op, pa, va, len);
	/* a misaligned va and pa: __create_pgd_mapping() WARNed and mapped nothing */
	if (t->hung || ((va ^ pa) & ~PAGE_MASK))
		return 0;
	uint64_t start = va & PAGE_MASK, end = ALIGN_UP(va + len, PAGE_SIZE);
	map_mem_reference(mm, t, k, start, pa & PAGE_MASK, end - start);
	return 0;
}
