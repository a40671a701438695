/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vmalloc.c - vmalloc(), vmap(), vunmap() and vfree() (mm/vmalloc.c, with the
 * arm64 hooks of arch/arm64/include/asm/vmalloc.h and arch/arm64/mm/mmu.c) as
 * patched by seed 000:
 *
 *   #07  vunmap of a sub-range of a PMD/PUD block WARNs (and unmaps the block);
 *   #08  vunmap_pte_range() tears a contpte block down whole
 *        (arch_vmap_pte_range_unmap_size() + huge_ptep_get_and_clear()), WARNing
 *        when the range starts or ends inside one;
 *   #09  vmap_pte_range() maps naturally aligned 64K chunks with the CONT bit
 *        (arch_vmap_pte_range_map_size(), set_huge_pte_at(&init_mm, ...)), and a
 *        huge vmalloc below PMD_SIZE uses 64K pages (arch_vmap_pte_supported_shift());
 *   #10  the PTE loops run in lazy MMU mode, so #11 (core.c) emits one dsb+isb
 *        for the whole loop instead of one per entry.
 *
 * The kernel VA of each call comes from the event (the VA a real kernel's
 * alloc_vmap_area() returned): it must be page aligned and inside
 * [VMALLOC_START, VMALLOC_END).  Every vm area is recorded as a VMA of init_mm
 * (the kernel's vmap_area + vm_struct): VM_AREA_ALLOC for vmalloc() (the page
 * order in vma.order; the pages are found again through the reference map),
 * VM_AREA_MAP for vmap() (the caller's pages, never freed here), and, once
 * unmapped, VM_AREA_LAZY until the purge: free_vmap_area_noflush() defers the
 * TLB flush, vfree() frees the pages right away, and the VA cannot be
 * allocated again before __purge_vmap_area_lazy() flushed it.  The purge runs
 * where the kernel runs it: when an allocation finds its range taken by
 * lazily freed areas (alloc_vmap_area()'s purge-and-retry), and when the lazy
 * total exceeds lazy_max_pages() (scaled down 64 times: fls(ncpus) * 128
 * pages instead of fls(ncpus) * 32M; the drain worker is run at once, by the
 * freeing thread).
 *
 * The ops: `vmalloc va len [flags=huge] [node]` is __vmalloc_node_range();
 * `vmap va len pa [prot] [flags]` maps the caller's physically contiguous
 * [pa, pa+len): vmap() of its pages (4K PTEs) or, with flags=huge,
 * vmap_range()/ioremap_page_range() (contpte, PMD and PUD blocks as size and
 * alignment allow); `vunmap va len` is vunmap() when [va, va+len) is exactly a
 * vm area (lazy), else vunmap_range() (flushed at once, the area stays);
 * `vfree va` is vfree().
 *
 * Simplifications: no guard page after an area; huge vmalloc pages are freed
 * at their allocation order (the kernel splits them and frees 4K pages); a
 * huge vmalloc whose VA is not aligned to its page size falls back to the
 * largest page size the VA allows (the kernel would have picked an aligned
 * VA); vmalloc and vmap fail for memory (ENOMEM, before anything is
 * mapped) only when the call would take the model past its capacity (MM_CAPACITY:
 * 4 GiB of 4K pages with their tables, all address spaces together); vfree in interrupt context runs at once
 * (the kernel defers it to a worker, vfree_atomic()); pages of a vm area that
 * vunmap_range() removed before vfree() are not freed (not found again).
 */
#include <stdlib.h>

#include "hugetlb.h"

/* VMA flags of init_mm's vm areas */
#define VM_AREA_ALLOC		0x10000u	/* vmalloc(): vfree() frees its pages */
#define VM_AREA_MAP		0x20000u	/* vmap(): the caller's pages */
#define VM_AREA_UNLINKED	0x40000u	/* being unmapped: in neither the busy nor the lazy tree */
#define VM_AREA_LAZY		0x80000u	/* unmapped, not yet flushed: not allocatable before the purge */
#define VM_AREA_BUSY		(VM_AREA_ALLOC | VM_AREA_MAP)

/* vmap_purge_lock, the mutex that serializes purges (PT_LOCK_OTHER key "vmappurg"), and
 * vn->lazy.lock, the spinlock of the lazily freed areas (key "vmaplazy": one vmap node) */
#define VMAP_PURGE_LOCK		0x766d617070757267ull
#define VMAP_LAZY_LOCK		0x766d61706c617a79ull

struct vmap_op {
	struct mm_model *mm;
	struct mm_thread *t;
	struct mm_space *k;		/* init_mm */
	uint64_t prot;			/* descriptor bits of the mapping (pgprot) */
	unsigned max_page_shift;	/* the largest mapping vmap_range_noflush() may use */
	const uint64_t *pages;		/* vmap_pages_*(): the physical address of each 4K page */
	uint64_t nr;			/* the next one */
};

static unsigned ilog2_u64(uint64_t x)
{
	unsigned r = 0;
	while (x >>= 1)
		r++;
	return r;
}

static bool vmalloc_range_ok(uint64_t va, uint64_t size)
{
	return size && IS_ALIGNED(va, PAGE_SIZE) && va >= VMALLOC_START && va + size > va && va + size <= VMALLOC_END;
}

/* ---- arm64 hooks (arch/arm64/include/asm/vmalloc.h) ---- */

/* !CONFIG_PTDUMP_DEBUGFS (and pud_sect_supported() with 4K pages) */
static bool arch_vmap_pud_supported(void) { return true; }
static bool arch_vmap_pmd_supported(void) { return true; }

/* seed 000 #09: a huge vmalloc of at least 64K uses 64K pages (contpte) below PMD_SIZE */
static unsigned arch_vmap_pte_supported_shift(const struct mm_model *mm, uint64_t size)
{
	if (size >= CONT_PTE_SIZE && !mm_variant(mm, MMV_VMALLOC_PRE_CONTPTE))
		return CONT_PTE_SHIFT;
	return PAGE_SHIFT;
}

/* seed 000 #09: a chunk of at least 64K, naturally aligned in VA and PA, is one contpte block */
static uint64_t arch_vmap_pte_range_map_size(const struct mm_model *mm, uint64_t addr, uint64_t end, uint64_t pa,
					     unsigned max_page_shift)
{
	if (mm_variant(mm, MMV_VMALLOC_PRE_CONTPTE))
		return PAGE_SIZE;	/* baseline: before #09 arm64 had no such hook */
	if (max_page_shift < CONT_PTE_SHIFT)
		return PAGE_SIZE;
	if (end - addr < CONT_PTE_SIZE)
		return PAGE_SIZE;
	if (!IS_ALIGNED(addr, CONT_PTE_SIZE) || !IS_ALIGNED(pa, CONT_PTE_SIZE))
		return PAGE_SIZE;
	return CONT_PTE_SIZE;
}

/* seed 000 #08/#09: the size of the (present) mapping at ptep; the caller handles alignment */
static uint64_t arch_vmap_pte_range_unmap_size(struct vmap_op *op, uint64_t ptep)
{
	if (mm_variant(op->mm, MMV_VUNMAP_CONTPTE_SINGLE_CLEAR))
		return PAGE_SIZE;	/* the bug: ptep_get_and_clear() on each entry of a block */
	return pte_valid_cont(__ptep_get(op->mm, op->t, ptep)) ? CONT_PTE_SIZE : PAGE_SIZE;
}

/* ---- mapping ---- */

/*
 * p?d_alloc_track(&init_mm, ...), pte_alloc_kernel_track(): the table under entry_pa,
 * allocated zeroed and populated under init_mm.page_table_lock if there is none (its
 * set_pgd/set_pmd emits dsb+isb: outside lazy mode).  0 if a block is there: never while
 * the VA range belongs to the caller.
 */
static uint64_t kernel_table_alloc(struct vmap_op *op, uint64_t entry_pa, unsigned child_level)
{
	uint64_t e = __ptep_get(op->mm, op->t, entry_pa);
	if (pte_none(e))
		return mm_table_alloc_install(op->mm, op->t, op->k, entry_pa, child_level);
	return pmd_table(e) ? desc_pa(e) : 0;
}

/* set_pte_at(&init_mm, ...): the contpte layer leaves init_mm alone (mm_is_user()), so
 * it is __set_ptes() = set_ptes_anysz(nr = 1): the store, then its barriers (queued in
 * lazy MMU mode) */
static void set_kernel_pte(struct vmap_op *op, uint64_t addr, uint64_t ptep, uint64_t pte)
{
	(void)addr;
	set_ptes_anysz(op->mm, op->t, op->k, ptep, pte, 1, PAGE_SIZE);
}

/* vmap_pte_range() (mm/vmalloc.c, seed 000 #09, #10): 64K contpte blocks where size and VA/PA
 * alignment allow, 4K ptes elsewhere, all in one lazy MMU section */
static int vmap_pte_range(struct vmap_op *op, uint64_t pmdp, uint64_t addr, uint64_t end, uint64_t pa)
{
	struct mm_model *mm = op->mm;
	struct mm_thread *t = op->t;
	uint64_t table = kernel_table_alloc(op, pmdp, 3);
	uint64_t size = PAGE_SIZE;
	int err = 0;

	if (!table)
		return ENOMEM;
	uint64_t ptep = pt_entry_pa(table, 3, addr);
	/* seed 000 #10: the barriers of the stores below are batched until we leave */
	arch_enter_lazy_mmu_mode(mm, t);
	do {
		if (!mm_step(mm, t))
			break;
		if (!pte_none(__ptep_get(mm, t, ptep))) {
			/* BUG() in the kernel: the VA range was handed out while still mapped */
			mm_warn(mm, t, "vmap-remap-mapped", addr, "vmap_pte_range: remapping already mapped va 0x%llx",
				(unsigned long long)addr);
			err = EBUSY;
			break;
		}
		size = arch_vmap_pte_range_map_size(mm, addr, end, pa, op->max_page_shift);
		if (size != PAGE_SIZE) {
			uint64_t entry = arch_make_huge_pte(pa | op->prot, ilog2_u64(size));
			set_huge_pte_at(mm, t, op->k, addr, ptep, entry, size);
			pa += size;
			continue;
		}
		set_kernel_pte(op, addr, ptep, pa | op->prot);
		pa += PAGE_SIZE;
	} while (ptep += 8 * (size >> PAGE_SHIFT), addr += size, addr != end);
	arch_leave_lazy_mmu_mode(mm, t);
	return err;
}

/*
 * pmd_free_pte_page() (arch/arm64/mm/mmu.c): a block is about to replace a (now empty)
 * PTE table: unhook it, invalidate the walk caches that may still hold it (VAAE1IS, all
 * levels; its ISB: kernel commit 51696d346c49), then free it.
 */
static bool pmd_free_pte_page(struct vmap_op *op, uint64_t pmdp, uint64_t addr)
{
	uint64_t pmd = __ptep_get(op->mm, op->t, pmdp);
	if (MM_WARN_ON(op->mm, op->t, !pmd_table(pmd), "pmd-free-not-table", addr,
		       "pmd_free_pte_page on a non-table entry"))
		return true;
	pmd_clear(op->mm, op->t, pmdp);
	__flush_tlb_kernel_pgtable(op->mm, op->t, addr);
	mm_free_table(op->mm, op->t, desc_pa(pmd));	/* pte_free_kernel() */
	return true;
}

/* pud_free_pmd_page(): the same for a PMD table, and the PTE tables under it */
static bool pud_free_pmd_page(struct vmap_op *op, uint64_t pudp, uint64_t addr)
{
	uint64_t pud = __ptep_get(op->mm, op->t, pudp);
	if (MM_WARN_ON(op->mm, op->t, !pmd_table(pud), "pmd-free-not-table", addr,
		       "pud_free_pmd_page on a non-table entry"))
		return true;
	uint64_t pmdp = desc_pa(pud), next = addr;
	for (unsigned i = 0; i < PTRS_PER_PTE; i++, pmdp += 8, next += PMD_SIZE)
		if (pte_present(__ptep_get(op->mm, op->t, pmdp)))
			pmd_free_pte_page(op, pmdp, next);
	pud_clear(op->mm, op->t, pudp);
	__flush_tlb_kernel_pgtable(op->mm, op->t, addr);
	mm_free_table(op->mm, op->t, desc_pa(pud));	/* pmd_free() */
	return true;
}

/* pmd_set_huge() / pud_set_huge(): only permission changes of a live entry are allowed */
static bool set_huge_block(struct vmap_op *op, uint64_t entry_pa, uint64_t pa, bool pud)
{
	uint64_t new = (pa | op->prot) & ~PT_DESC_TABLE;	/* mk_pmd_sect_prot(): a block */
	if (!pt_pgattr_change_is_safe(__ptep_get(op->mm, op->t, entry_pa), new))
		return false;
	if (pud)
		set_pud(op->mm, op->t, entry_pa, new);
	else
		set_pmd(op->mm, op->t, entry_pa, new);
	return true;
}

static bool vmap_try_huge_pmd(struct vmap_op *op, uint64_t pmdp, uint64_t addr, uint64_t end, uint64_t pa)
{
	if (op->max_page_shift < PMD_SHIFT || !arch_vmap_pmd_supported())
		return false;
	if (end - addr != PMD_SIZE || !IS_ALIGNED(addr, PMD_SIZE) || !IS_ALIGNED(pa, PMD_SIZE))
		return false;
	if (pte_present(__ptep_get(op->mm, op->t, pmdp)) && !pmd_free_pte_page(op, pmdp, addr))
		return false;
	return set_huge_block(op, pmdp, pa, /*pud=*/false);
}

static bool vmap_try_huge_pud(struct vmap_op *op, uint64_t pudp, uint64_t addr, uint64_t end, uint64_t pa)
{
	if (op->max_page_shift < PUD_SHIFT || !arch_vmap_pud_supported())
		return false;
	if (end - addr != PUD_SIZE || !IS_ALIGNED(addr, PUD_SIZE) || !IS_ALIGNED(pa, PUD_SIZE))
		return false;
	if (pte_present(__ptep_get(op->mm, op->t, pudp)) && !pud_free_pmd_page(op, pudp, addr))
		return false;
	return set_huge_block(op, pudp, pa, /*pud=*/true);
}

/* vmap_pmd_range(): a PMD block per aligned 2M if allowed, else a PTE table */
static int vmap_pmd_range(struct vmap_op *op, uint64_t pudp, uint64_t addr, uint64_t end, uint64_t pa)
{
	uint64_t table = kernel_table_alloc(op, pudp, 2), next;
	if (!table)
		return ENOMEM;
	uint64_t pmdp = pt_entry_pa(table, 2, addr);
	do {
		next = pmd_addr_end(addr, end);
		if (vmap_try_huge_pmd(op, pmdp, addr, next, pa))
			continue;
		int err = vmap_pte_range(op, pmdp, addr, next, pa);
		if (err)
			return err;
	} while (pmdp += 8, pa += next - addr, addr = next, addr != end);
	return 0;
}

/* vmap_pud_range(): a PUD block per aligned 1G if allowed, else a PMD table */
static int vmap_pud_range(struct vmap_op *op, uint64_t pgdp, uint64_t addr, uint64_t end, uint64_t pa)
{
	uint64_t table = kernel_table_alloc(op, pgdp, 1), next;
	if (!table)
		return ENOMEM;
	uint64_t pudp = pt_entry_pa(table, 1, addr);
	do {
		next = pud_addr_end(addr, end);
		if (vmap_try_huge_pud(op, pudp, addr, next, pa))
			continue;
		int err = vmap_pmd_range(op, pudp, addr, next, pa);
		if (err)
			return err;
	} while (pudp += 8, pa += next - addr, addr = next, addr != end);
	return 0;
}

/* vmap_range_noflush(): map the physically contiguous [pa, ...) at [addr, end) with the
 * largest mappings size and alignment allow, up to 1 << max_page_shift (p4d is folded) */
static int vmap_range_noflush(struct vmap_op *op, uint64_t addr, uint64_t end, uint64_t pa)
{
	const char *prev = mm_site(op->mm, op->t, "vmap_range_noflush");
	uint64_t pgdp = mm_pgd_entry(op->k, addr), next;
	int err = 0;
	do {
		next = pgd_addr_end(addr, end);
		err = vmap_pud_range(op, pgdp, addr, next, pa);
		if (err)
			break;
	} while (pgdp += 8, pa += next - addr, addr = next, addr != end);
	mm_site(op->mm, op->t, prev);
	return err;
}

/*
 * vmap_pages_pte_range()'s loop over the entries from ptep on, below end, as one run of stores:
 * each iteration a step and the read that finds its entry none, then set_kernel_pte(), which is
 * set_ptes_anysz() of one entry: a step, the read of __check_safe_pte_update() (of a none
 * entry: no warning), the store, and __set_pte_complete(), whose barriers may only be left
 * pending (lazy MMU mode), with no event.  The run ends before the first entry that is not
 * none (the loop warns there and stops).  Returns how many entries went, 0 if none did (then
 * *runs false if no run will go in this loop).
 */
static unsigned vmap_pages_pte_run(struct vmap_op *op, uint64_t ptep, uint64_t addr, uint64_t end, bool *runs)
{
	struct mm_model *mm = op->mm;
	uint64_t old[PTRS_PER_PTE], vals[PTRS_PER_PTE];
	unsigned max = (unsigned)((end - addr) >> PAGE_SHIFT), n = 0;
	bool barriers = !mm_variant(mm, MMV_SET_PTES_NO_BARRIER), queued = false;
	mm_peek(mm, ptep, old, max);
	for (; n < max && pte_none(old[n]); n++) {
		vals[n] = op->pages[op->nr + n] | op->prot;
		queued |= barriers && pte_valid_not_user(vals[n]);
	}
	if (n < 2)
		return 0;
	if ((queued && !pte_barriers_deferred(mm, op->t)) || !mm_write_run(mm, op->t, ptep, vals, n, 2 * n, 2 * n)) {
		*runs = false;
		return 0;
	}
	if (queued)
		op->t->lazy_pending = true;	/* queue_pte_barriers() in lazy MMU mode */
	op->nr += n;
	return n;
}

/* vmap_pages_pte_range(): 4K pages of a page array, no contpte (vmap(), small vmalloc) */
static int vmap_pages_pte_range(struct vmap_op *op, uint64_t pmdp, uint64_t addr, uint64_t end)
{
	struct mm_model *mm = op->mm;
	struct mm_thread *t = op->t;
	uint64_t table = kernel_table_alloc(op, pmdp, 3);
	bool runs = true;
	int err = 0;

	if (!table)
		return ENOMEM;
	uint64_t ptep = pt_entry_pa(table, 3, addr);
	arch_enter_lazy_mmu_mode(mm, t);	/* seed 000 #10 */
	unsigned n;
	do {
		n = runs ? vmap_pages_pte_run(op, ptep, addr, end, &runs) : 0;
		if (n)
			continue;	/* n iterations of the loop, as one run */
		n = 1;
		if (!mm_step(mm, t))
			break;
		if (!pte_none(__ptep_get(mm, t, ptep))) {
			mm_warn(mm, t, "vmap-remap-mapped", addr, "vmap_pages_pte_range: va 0x%llx is already mapped",
				(unsigned long long)addr);
			err = EBUSY;
			break;
		}
		set_kernel_pte(op, addr, ptep, op->pages[op->nr] | op->prot);
		op->nr++;
	} while (ptep += 8ull * n, addr += (uint64_t)n * PAGE_SIZE, addr != end);
	arch_leave_lazy_mmu_mode(mm, t);
	return err;
}

/* vmap_pages_pmd_range() / vmap_pages_pud_range() / vmap_small_pages_range_noflush(): the
 * table walk for 4K pages of a page array (no blocks) */
static int vmap_pages_pmd_range(struct vmap_op *op, uint64_t pudp, uint64_t addr, uint64_t end)
{
	uint64_t table = kernel_table_alloc(op, pudp, 2), next;
	if (!table)
		return ENOMEM;
	uint64_t pmdp = pt_entry_pa(table, 2, addr);
	do {
		next = pmd_addr_end(addr, end);
		int err = vmap_pages_pte_range(op, pmdp, addr, next);
		if (err)
			return err;
	} while (pmdp += 8, addr = next, addr != end);
	return 0;
}

static int vmap_pages_pud_range(struct vmap_op *op, uint64_t pgdp, uint64_t addr, uint64_t end)
{
	uint64_t table = kernel_table_alloc(op, pgdp, 1), next;
	if (!table)
		return ENOMEM;
	uint64_t pudp = pt_entry_pa(table, 1, addr);
	do {
		next = pud_addr_end(addr, end);
		int err = vmap_pages_pmd_range(op, pudp, addr, next);
		if (err)
			return err;
	} while (pudp += 8, addr = next, addr != end);
	return 0;
}

static int vmap_small_pages_range_noflush(struct vmap_op *op, uint64_t addr, uint64_t end)
{
	const char *prev = mm_site(op->mm, op->t, "vmap_small_pages_range_noflush");
	uint64_t pgdp = mm_pgd_entry(op->k, addr), next;
	int err = 0;
	do {
		next = pgd_addr_end(addr, end);
		err = vmap_pages_pud_range(op, pgdp, addr, next);
		if (err)
			break;
	} while (pgdp += 8, addr = next, addr != end);
	mm_site(op->mm, op->t, prev);
	return err;
}

/* ---- unmapping ---- */

/*
 * vunmap_pte_range()'s loop over the 4K entries from ptep on, below end, as one run of stores of
 * 0: each iteration a step, the read of arch_vmap_pte_range_unmap_size() (none with the
 * variant), then ptep_get_and_clear(): the read for contpte_try_unfold() (which never unfolds
 * init_mm's) and the xchg, a read and the store.  The run ends before an entry the loop treats
 * otherwise: a contpte block (but with the variant, which clears its entries one by one like
 * any other), or an entry it warns about (neither none nor present), so that the warning comes
 * in its place.  Returns how many entries went, 0 if none did (then *runs false if no run will
 * go in this loop).
 */
static unsigned vunmap_pte_run(struct vmap_op *op, uint64_t ptep, uint64_t addr, uint64_t end, bool *runs)
{
	static const uint64_t zeros[PTRS_PER_PTE];
	uint64_t old[PTRS_PER_PTE];
	unsigned max = (unsigned)((end - addr) >> PAGE_SHIFT), n = 0;
	bool single = mm_variant(op->mm, MMV_VUNMAP_CONTPTE_SINGLE_CLEAR);
	/* read a block at a time: a run ends early at a contpte block, and blocks come in a row */
	for (unsigned k = 0; n == k && k < max; k += CONT_PTES) {
		unsigned c = max - k < CONT_PTES ? max - k : CONT_PTES;
		mm_peek(op->mm, ptep + 8ull * k, old + k, c);
		while (n < k + c && (single || !pte_valid_cont(old[n])) && (pte_none(old[n]) || pte_present(old[n])))
			n++;
	}
	if (n < 2)
		return 0;
	if (!mm_write_run(op->mm, op->t, ptep, zeros, n, n, (single ? 2 : 3) * n)) {
		*runs = false;
		return 0;
	}
	return n;
}

/* vunmap_pte_range() (mm/vmalloc.c, seed 000 #08, #10): each contpte block cleared whole with
 * huge_ptep_get_and_clear(), 4K ptes one by one; no TLB maintenance (the caller's).
 * The vunmap_*() walkers take the child table where the kernel's (and the model's vmap_*())
 * take the parent entry: the kernel reads that entry twice (pmd_none_or_clear_bad(), then
 * pte_offset_kernel()), the model once in the caller, since each read is a scheduling point
 * and the range's owner is the only writer of its kernel tables. */
static void vunmap_pte_range(struct vmap_op *op, uint64_t table, uint64_t addr, uint64_t end)
{
	struct mm_model *mm = op->mm;
	struct mm_thread *t = op->t;
	uint64_t ptep = pt_entry_pa(table, 3, addr), size = PAGE_SIZE;
	bool runs = true;

	arch_enter_lazy_mmu_mode(mm, t);	/* seed 000 #10 */
	do {
		unsigned n = runs ? vunmap_pte_run(op, ptep, addr, end, &runs) : 0;
		if (n) {
			size = (uint64_t)n << PAGE_SHIFT;	/* n iterations of the loop, as one run */
			continue;
		}
		if (!mm_step(mm, t))
			break;
		uint64_t ptent;
		size = arch_vmap_pte_range_unmap_size(op, ptep);
		if (size != PAGE_SIZE) {
			/* seed 000 #08: a contpte block goes whole, or the group would be left
			 * half valid ("Misprogramming of the Contiguous bit"); a range that starts
			 * or ends inside it is a caller's error the kernel WARNs about, and the
			 * whole block is unmapped, like a PMD/PUD block */
			if (!IS_ALIGNED(addr, size)) {
				mm_warn(mm, t, "vunmap-splits-contpte", addr,
					"vunmap_pte_range: range starts at 0x%llx inside a contpte block",
					(unsigned long long)addr);
				if (!mm_variant(mm, MMV_VUNMAP_NO_ALIGN_DOWN)) {
					addr = ALIGN_DOWN(addr, size);
					ptep = ALIGN_DOWN(ptep, 8 * (size >> PAGE_SHIFT));
				}
			}
			ptent = huge_ptep_get_and_clear(mm, t, op->k, addr, ptep, size);
			if (end - addr < size) {
				mm_warn(mm, t, "vunmap-splits-contpte", end,
					"vunmap_pte_range: range ends at 0x%llx inside a contpte block",
					(unsigned long long)end);
				size = end - addr;
			}
		} else {
			ptent = ptep_get_and_clear(mm, t, op->k, addr, ptep);
		}
		if (!pte_none(ptent) && !pte_present(ptent))
			mm_warn(mm, t, "vunmap-bad-pte", addr, "vunmap_pte_range: a non-present, non-none entry");
	} while (ptep += 8 * (size >> PAGE_SHIFT), addr += size, addr != end);
	arch_leave_lazy_mmu_mode(mm, t);
}

/* pmd_clear_huge() / pud_clear_huge(): clear a block entry; 0 if it is none or a table */
static bool clear_huge(struct vmap_op *op, uint64_t entry_pa, bool pud)
{
	if (!pmd_sect(__ptep_get(op->mm, op->t, entry_pa)))
		return false;
	if (pud)
		pud_clear(op->mm, op->t, entry_pa);
	else
		pmd_clear(op->mm, op->t, entry_pa);
	return true;
}

/* vunmap_pmd_range() (seed 000 #07): a PMD block goes whole, with a WARN if the range is less */
static void vunmap_pmd_range(struct vmap_op *op, uint64_t table, uint64_t addr, uint64_t end)
{
	uint64_t pmdp = pt_entry_pa(table, 2, addr), next;
	do {
		next = pmd_addr_end(addr, end);
		if (clear_huge(op, pmdp, /*pud=*/false)) {
			/* seed 000 #07: the whole 2M went, also what lies outside the range */
			if (next - addr < PMD_SIZE)
				mm_warn(op->mm, op->t, "vunmap-splits-pmd-block", addr,
					"vunmap_pmd_range: [0x%llx, 0x%llx) is a sub-range of a PMD block",
					(unsigned long long)addr, (unsigned long long)next);
			continue;
		}
		uint64_t pmd = __ptep_get(op->mm, op->t, pmdp);
		if (!pmd_table(pmd))
			continue;	/* pmd_none_or_clear_bad() */
		vunmap_pte_range(op, desc_pa(pmd), addr, next);
	} while (pmdp += 8, addr = next, addr != end);
}

/* vunmap_pud_range() (seed 000 #07): the same for PUD blocks */
static void vunmap_pud_range(struct vmap_op *op, uint64_t table, uint64_t addr, uint64_t end)
{
	uint64_t pudp = pt_entry_pa(table, 1, addr), next;
	do {
		next = pud_addr_end(addr, end);
		if (clear_huge(op, pudp, /*pud=*/true)) {
			if (next - addr < PUD_SIZE)
				mm_warn(op->mm, op->t, "vunmap-splits-pud-block", addr,
					"vunmap_pud_range: [0x%llx, 0x%llx) is a sub-range of a PUD block",
					(unsigned long long)addr, (unsigned long long)next);
			continue;
		}
		uint64_t pud = __ptep_get(op->mm, op->t, pudp);
		if (!pmd_table(pud))
			continue;	/* pud_none_or_clear_bad() */
		vunmap_pmd_range(op, desc_pa(pud), addr, next);
	} while (pudp += 8, addr = next, addr != end);
}

/* vunmap_range_noflush(): clear [start, end); the TLB flush is the caller's (p4d folded) */
static void vunmap_range_noflush(struct vmap_op *op, uint64_t start, uint64_t end)
{
	const char *prev = mm_site(op->mm, op->t, "vunmap_range_noflush");
	uint64_t addr = start, pgdp = mm_pgd_entry(op->k, addr), next;
	do {
		next = pgd_addr_end(addr, end);
		uint64_t pgd = __ptep_get(op->mm, op->t, pgdp);
		if (!pmd_table(pgd))
			continue;	/* pgd_none_or_clear_bad() */
		vunmap_pud_range(op, desc_pa(pgd), addr, next);
	} while (pgdp += 8, addr = next, addr != end);
	mm_site(op->mm, op->t, prev);
}

/* ---- the vmap areas: allocation, lazy free, purge ---- */

/* lazy_max_pages(): fls(num_online_cpus()) * 32M worth of pages in the kernel, 64 times less here */
static uint64_t lazy_max_pages(const struct mm_model *mm)
{
	unsigned fls = 0;
	for (unsigned n = mm->ncpus; n; n >>= 1)
		fls++;
	return (uint64_t)fls * ((32ull << 20) / PAGE_SIZE) / 64;
}

/* What [start, end) overlaps: 0 nothing, 1 only lazily freed areas, 2 something in use. */
static int area_overlap(const struct mm_space *k, uint64_t start, uint64_t end)
{
	int r = 0;
	for (uint32_t i = 0; i < k->nvma; i++) {
		const struct mm_vma *v = &k->vma[i];
		if (v->end <= start || v->start >= end)
			continue;
		if (!(v->flags & VM_AREA_LAZY))
			return 2;
		r = 1;
	}
	return r;
}

/*
 * __purge_vmap_area_lazy(): one flush_tlb_kernel_range() over the span of every lazily
 * freed area, then (only then) they can be allocated again.  Serialized by vmap_purge_lock
 * (not taken in interrupt context, where the model may run it: a mutex cannot be).
 */
static void __purge_vmap_area_lazy(struct vmap_op *op)
{
	struct mm_model *mm = op->mm;
	struct mm_thread *t = op->t;
	struct mm_space *k = op->k;
	const char *prev = mm_site(mm, t, "__purge_vmap_area_lazy");
	bool lock = !t->irq_depth;

	if (lock)
		mm_lock(mm, t, PT_LOCK_OTHER, VMAP_PURGE_LOCK, true);
	/* the areas this purge covers: those lazy now (later ones were not cleared before our
	 * TLBI).  Taking vn->lazy.lock is what orders their freeing CPUs' pte clears before our
	 * dsb (DSB cumulativity): the drain worker may run on any CPU. */
	uint64_t start = UINT64_MAX, end = 0, n = 0;
	uint64_t *span = malloc(2 * sizeof(*span) * (k->nvma + 1));
	if (!span)
		abort();
	mm_lock(mm, t, PT_LOCK_OTHER, VMAP_LAZY_LOCK, true);
	for (uint32_t i = 0; i < k->nvma; i++) {
		const struct mm_vma *v = &k->vma[i];
		if (!(v->flags & VM_AREA_LAZY))
			continue;
		span[2 * n] = v->start;
		span[2 * n + 1] = v->end;
		n++;
		start = v->start < start ? v->start : start;
		end = v->end > end ? v->end : end;
	}
	mm_unlock(mm, t, PT_LOCK_OTHER, VMAP_LAZY_LOCK);
	if (n) {
		flush_tlb_kernel_range(mm, t, start, end);
		for (uint64_t i = 0; i < n; i++) {
			struct mm_vma *v = find_vma(k, span[2 * i]);
			if (v && v->start == span[2 * i] && v->end == span[2 * i + 1] && (v->flags & VM_AREA_LAZY)) {
				mm_vmap_area(mm, t, PT_VMAP_AREA_PURGE, v->start, v->end - v->start);
				vma_remove_range(k, v->start, v->end);	/* back to the free tree */
			}
		}
	}
	free(span);
	if (lock)
		mm_unlock(mm, t, PT_LOCK_OTHER, VMAP_PURGE_LOCK);
	mm_site(mm, t, prev);
}

/* alloc_vmap_area() for the VA the event gives: if lazily freed areas hold it, purge them
 * and retry (the kernel's "overflow" path); if it is in use, fail */
static int alloc_vmap_area(struct vmap_op *op, uint64_t va, uint64_t size, unsigned order, uint32_t flags)
{
	for (bool purged = false;; purged = true) {
		int busy = area_overlap(op->k, va, va + size);
		if (!busy) {
			vma_insert(op->k, va, va + size, PT_PROT_READ | PT_PROT_WRITE, order, flags, 0);
			return 0;
		}
		if (busy == 2 || purged)
			return ENOMEM;	/* the model does not pick another VA */
		__purge_vmap_area_lazy(op);
	}
}

/* free_vmap_area_noflush(): the unmapped area waits for the purge; a purge is due when the
 * lazy total exceeds lazy_max_pages() (the drain worker, run here) */
static void free_vmap_area_noflush(struct vmap_op *op, uint64_t va)
{
	mm_lock(op->mm, op->t, PT_LOCK_OTHER, VMAP_LAZY_LOCK, true);
	struct mm_vma *v = find_vma(op->k, va);
	uint64_t nr_lazy = 0;
	if (v && v->start == va) {
		v->flags = VM_AREA_LAZY;
		mm_vmap_area(op->mm, op->t, PT_VMAP_AREA_LAZY, v->start, v->end - v->start);
		for (uint32_t i = 0; i < op->k->nvma; i++)
			if (op->k->vma[i].flags & VM_AREA_LAZY)
				nr_lazy += (op->k->vma[i].end - op->k->vma[i].start) >> PAGE_SHIFT;
	}
	mm_unlock(op->mm, op->t, PT_LOCK_OTHER, VMAP_LAZY_LOCK);
	if (nr_lazy > lazy_max_pages(op->mm))
		__purge_vmap_area_lazy(op);
}

/* find_unlink_vmap_area() + free_unmap_vmap_area(): take the busy area that starts at addr
 * out of use, clear its page tables, and leave its TLB flush to the purge.  *area gets a
 * copy of it; false if there is none. */
static bool remove_vm_area(struct vmap_op *op, uint64_t addr, struct mm_vma *area)
{
	struct mm_vma *v = find_vma(op->k, addr);
	if (!v || v->start != addr || !(v->flags & VM_AREA_BUSY) || (v->flags & VM_AREA_UNLINKED))
		return false;
	v->flags |= VM_AREA_UNLINKED;
	*area = *v;
	vunmap_range_noflush(op, area->start, area->end);
	free_vmap_area_noflush(op, area->start);
	return true;
}

static struct vmap_op vmap_op_new(struct mm_model *mm, struct mm_thread *t, uint64_t prot, unsigned max_page_shift)
{
	struct vmap_op op = { mm, t, mm_kernel(mm, t), prot, max_page_shift, NULL, 0 };
	return op;
}

/* ---- the ops ---- */

/* an area's page array: room_get() of the caller's room for this many (a small area's) */
#define PAGES_ROOM 64

/* __vmalloc_area_node(): the pages (of the area's page order), then vmap_pages_range() */
static int __vmalloc_area_node(struct vmap_op *op, uint64_t va, uint64_t size, unsigned shift, unsigned node)
{
	uint64_t chunk = 1ull << shift, nr = size >> shift;
	uint64_t room[PAGES_ROOM], *pages = room_get(room, PAGES_ROOM, nr, sizeof(*pages));
	int err = 0;
	/* vm_area_alloc_pages() */
	uint64_t got = 0;
	for (; got < nr && mm_step(op->mm, op->t); got++)
		pages[got] = mm_alloc_pages(op->mm, op->t, shift - PAGE_SHIFT, node);
	/* vmap_pages_range(): 4K pages through the small-page loops, else chunk by chunk */
	if (shift == PAGE_SHIFT) {
		op->pages = pages;
		op->nr = 0;
		if (got == nr)
			err = vmap_small_pages_range_noflush(op, va, va + size);
	} else {
		op->max_page_shift = shift;
		for (uint64_t i = 0; i < got && !err; i++)
			err = vmap_range_noflush(op, va + i * chunk, va + (i + 1) * chunk, pages[i]);
	}
	for (uint64_t i = 0; i < got && !err; i++)
		ref_set_run(op->k, va + i * chunk, chunk >> PAGE_SHIFT, pages[i], REF_PRESENT | REF_READ | REF_WRITE);
	room_free(pages, room);
	return err;
}

/*
 * An ops-level trace names a vmalloc by the VA it asks for, and the vfree of that area by the
 * same VA; a caller whose vmalloc() returned NULL (EINVAL, ENOMEM: the model's capacity, an
 * area in the way) passes NULL to vfree(), which is no error.  The model keeps the VAs of the
 * failed calls so that such a vfree is vfree(NULL), not the WARN of a nonexistent area (it
 * was I9 contract/vfree-nonexistent-area/vfree, fuzzing the default model, issue 7).
 */
static bool vmalloc_null_slot(struct mm_model *mm, uint64_t va, unsigned *slot)
{
	unsigned n = mm->nvmalloc_null < 64 ? mm->nvmalloc_null : 64;
	for (unsigned i = 0; i < n; i++)
		if (mm->vmalloc_null[i] == va) {
			*slot = i;
			return true;
		}
	return false;
}

/* One entry per failed call, not per VA: each caller that got NULL passes it to its own
 * vfree() (three failed vmallocs of one VA, then three vfrees of it: three vfree(NULL)s; it
 * was I9 vfree-nonexistent-area at the second, fuzzing the default model).  A vmalloc of the
 * VA that succeeds later takes none of them: its area is what the next vfree frees. */
static void vmalloc_returned(struct mm_model *mm, uint64_t va, int rc)
{
	if (!rc || !va)
		return;
	unsigned i;
	if (vmalloc_null_slot(mm, 0, &i))
		mm->vmalloc_null[i] = va;	/* a slot a vfree(NULL) used */
	else
		mm->vmalloc_null[mm->nvmalloc_null++ % 64] = va;
}

/* Did the caller get NULL from the vmalloc of va?  Then this vfree is vfree(NULL). */
static bool vmalloc_was_null(struct mm_model *mm, uint64_t va)
{
	unsigned i;
	if (!vmalloc_null_slot(mm, va, &i))
		return false;
	mm->vmalloc_null[i] = 0;
	return true;
}

int mm_do_vmalloc(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	const char *prev = mm_site(mm, t, "__vmalloc_node_range");
	struct vmap_op op = vmap_op_new(mm, t, pgprot_kernel(PT_PROT_READ | PT_PROT_WRITE), PAGE_SHIFT);
	uint64_t va = ev->va, size = ALIGN_UP(ev->len, PAGE_SIZE);
	unsigned shift = PAGE_SHIFT;
	int rc = EINVAL;

	if (!ev->len) {
		mm_warn(mm, t, "vmalloc-zero-size", va, "__vmalloc_node_range: WARN_ON_ONCE(!size)");
		goto out;
	}
	if (!vmalloc_range_ok(va, size))
		goto out;
	if (ev->flags & PT_MAP_HUGE) {
		/* VM_ALLOW_HUGE_VMAP: 2M pages from PMD_SIZE up, 64K (contpte, #09) from 64K up */
		if (arch_vmap_pmd_supported() && size >= PMD_SIZE)
			shift = PMD_SHIFT;
		else
			shift = arch_vmap_pte_supported_shift(mm, size);
		size = ALIGN_UP(size, 1ull << shift);
		if (shift == PMD_SHIFT && !IS_ALIGNED(va, PMD_SIZE))
			shift = arch_vmap_pte_supported_shift(mm, size);
		if (shift == CONT_PTE_SHIFT && !IS_ALIGNED(va, CONT_PTE_SIZE))
			shift = PAGE_SHIFT;
		if (!vmalloc_range_ok(va, size))
			goto out;
	}
	/* the model's memory: a call past its capacity fails, as one past the free memory does */
	rc = ENOMEM;
	if (!mm_capacity_ok(mm, mm_map_units(size, shift >= PMD_SHIFT ? PUD_SIZE : PMD_SIZE)))
		goto out;
	rc = alloc_vmap_area(&op, va, size, shift - PAGE_SHIFT, VM_AREA_ALLOC);
	if (rc)
		goto out;
	rc = __vmalloc_area_node(&op, va, size, shift, ev->node);
	ref_check(mm, t, op.k, va, va + size, "vmalloc");
out:
	vmalloc_returned(mm, va, rc);
	mm_site(mm, t, prev);
	return rc;
}

int mm_do_vmap(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	const char *prev = mm_site(mm, t, "vmap");
	bool huge = ev->flags & PT_MAP_HUGE;
	/* vmap(), vmap_range(), ioremap_page_range(): never executable (pgprot_nx()) */
	unsigned prot = ev->prot ? ev->prot & ~PT_PROT_EXEC : PT_PROT_READ | PT_PROT_WRITE;
	struct vmap_op op = vmap_op_new(mm, t, pgprot_kernel(prot ? prot : PT_PROT_READ), huge ? PUD_SHIFT : PAGE_SHIFT);
	uint64_t va = ev->va, pa = ev->pa, size = ALIGN_UP(ev->len, PAGE_SIZE);
	uint64_t *pages = NULL;
	int rc = EINVAL;

	if (!vmalloc_range_ok(va, size) || !IS_ALIGNED(pa, PAGE_SIZE) || pa + size < pa)
		goto out;
	/* the model's memory: the PTEs (blocks where size and alignment allow them) and the
	 * reference of every page; a call past its capacity fails (vmap() returns NULL) */
	rc = ENOMEM;
	if (!mm_capacity_ok(mm, mm_map_units(size, huge && IS_ALIGNED(va | pa, PMD_SIZE) ? PUD_SIZE : PMD_SIZE)))
		goto out;
	rc = alloc_vmap_area(&op, va, size, 0, VM_AREA_MAP);
	if (rc)
		goto out;
	if (huge) {
		rc = vmap_range_noflush(&op, va, va + size, pa);
	} else {
		pages = malloc((size >> PAGE_SHIFT) * sizeof(*pages));
		if (!pages)
			abort();
		for (uint64_t i = 0; i < size >> PAGE_SHIFT; i++)
			pages[i] = pa + i * PAGE_SIZE;
		op.pages = pages;
		rc = vmap_small_pages_range_noflush(&op, va, va + size);
	}
	if (!rc) {
		uint64_t f = REF_PRESENT | REF_READ | (prot & PT_PROT_WRITE ? REF_WRITE : 0);
		ref_set_run(op.k, va, (size + PAGE_SIZE - 1) >> PAGE_SHIFT, pa, f);
	}
	free(pages);
	ref_check(mm, t, op.k, va, va + size, "vmap");
out:
	mm_site(mm, t, prev);
	return rc;
}

int mm_do_vunmap(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	const char *prev = mm_site(mm, t, "vunmap");
	struct vmap_op op = vmap_op_new(mm, t, 0, PAGE_SHIFT);
	uint64_t va = ev->va, end = va + ALIGN_UP(ev->len, PAGE_SIZE);
	struct mm_vma area;
	int rc = EINVAL;

	if (!vmalloc_range_ok(va, end - va))
		goto out;
	rc = 0;
	struct mm_vma *v = find_vma(op.k, va);
	if (v && v->start == va && v->end == end && (v->flags & VM_AREA_BUSY) && !(v->flags & VM_AREA_UNLINKED)) {
		/* vunmap(addr): the whole area; its TLB flush waits for the purge (the pages of a
		 * vmalloc area are not freed: vunmap() does not know them) */
		remove_vm_area(&op, va, &area);
	} else {
		/* vunmap_range(addr, end): a part (or what is not an area): flushed at once */
		vunmap_range_noflush(&op, va, end);
		flush_tlb_kernel_range(mm, t, va, end);
	}
	ref_clear_range(op.k, va, end);
	ref_check(mm, t, op.k, va, end, "vunmap");
out:
	mm_site(mm, t, prev);
	return rc;
}

int mm_do_vfree(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	const char *prev = mm_site(mm, t, "vfree");
	struct vmap_op op = vmap_op_new(mm, t, 0, PAGE_SHIFT);
	uint64_t va = ev->va, room[PAGES_ROOM], *pages = room, npages = 0;
	struct mm_vma area;
	int rc = 0;

	if (!va)
		goto out;	/* vfree(NULL) */
	if (!IS_ALIGNED(va, PAGE_SIZE)) {
		mm_warn(mm, t, "vfree-bad-address", va, "remove_vm_area: Trying to vfree() bad address (0x%llx)",
			(unsigned long long)va);
		rc = EINVAL;
		goto out;
	}
	struct mm_vma *v = find_vma(op.k, va);
	if (v && v->start == va && (v->flags & VM_AREA_ALLOC) && !(v->flags & VM_AREA_UNLINKED)) {
		/* vm->pages: one per page of the area's order, found again in the reference map */
		uint64_t chunk = PAGE_SIZE << v->order;
		pages = room_get(room, PAGES_ROOM, (v->end - v->start) / chunk + 1, sizeof(*pages));
		for (uint64_t a = v->start; a < v->end; a += chunk) {
			uint64_t r = ref_get(op.k, a);
			if (r & REF_PRESENT)
				pages[npages++] = r & PT_DESC_OA_MASK;
		}
		/* the event has no length: the step bound follows the area */
		t->bound += 64 * ((v->end - v->start) >> PAGE_SHIFT);
	}
	if (!remove_vm_area(&op, va, &area)) {
		if (vmalloc_was_null(mm, va))
			goto out;	/* vfree(NULL) */
		mm_warn(mm, t, "vfree-nonexistent-area", va, "vfree: Trying to vfree() nonexistent vm area (0x%llx)",
			(unsigned long long)va);
		rc = EINVAL;
		goto out;
	}
	/* __free_page() of each page now: a TLB entry may still map it until the purge, and that
	 * is allowed, because nothing can use the VA before the purge flushes it */
	for (uint64_t i = 0; i < npages; i++) {
		if (!mm_step(mm, t))
			break;
		mm_free_pages(mm, t, pages[i], area.order);
	}
	ref_clear_range(op.k, area.start, area.end);
	ref_check(mm, t, op.k, area.start, area.end, "vfree");
out:
	room_free(pages, room);
	mm_site(mm, t, prev);
	return rc;
}
