/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * variants.c - the bug zoo and the pre-patch baselines (DESIGN.md "Variants").
 * Each variant switches one decision point of one routine (grep for its
 * MMV_ name); the default model is the patched logic.
 */
#include <stdio.h>
#include <string.h>

#include "mm_internal.h"

static const struct mm_variant_info variants[MMV_COUNT] = {
	[MMV_NONE] = { "default", false, "the patched kernel logic of the seeds", "-", "-" },
	[MMV_MREMAP_PMD_NO_RMAP_LOCK] = { "mremap-pmd-no-rmap-lock", false,
		"MOVE_PMD without the rmap lock, racing pageout (the CPU 1 / CPU 2 / CPU 3 diagram)",
		"004 (Speedup mremap on ppc64), Hugh Dickins' answer on take_rmap_locks", "I1" },
	[MMV_MREMAP_PUD_NO_RMAP_LOCK] = { "mremap-pud-no-rmap-lock", false,
		"MOVE_PUD without the rmap lock, racing pageout", "004 (move_normal_pud)", "I1" },
	[MMV_MREMAP_LEAF_ONLY_FLUSH] = { "mremap-leaf-only-flush", false,
		"a moved page table flushed with the last-level hint only (walk cache survives)",
		"004 (page-walk-cache flush on moves)", "I3" },
	[MMV_MREMAP_DST_NOT_NONE] = { "mremap-dst-not-none", false,
		"move_normal_pmd/move_normal_pud over a live destination entry (no pmd_none check)",
		"004 (WARN_ON_ONCE(!pmd_none(*new_pmd)))", "I3, I4 (the default WARNs: I9)" },
	[MMV_MREMAP_FLUSH_AFTER_PTL_DROP] = { "mremap-flush-after-ptl-drop", false,
		"move_ptes drops the PTL before its TLB flush while the old page can be freed through "
		"the new mapping", "CVE-2018-18281 (2018 mremap fix, mm/mremap.c move_ptes)", "I1" },
	[MMV_VUNMAP_CONTPTE_SINGLE_CLEAR] = { "vunmap-contpte-single-clear", false,
		"a contpte vmap torn down with per-PTE clears", "000 #08 (Gracefully unmap huge ptes)", "I5, I8" },
	[MMV_VUNMAP_NO_ALIGN_DOWN] = { "vunmap-no-align-down", false,
		"a sub-range vunmap inside a contpte block not aligned down", "000 #08", "I5, I8" },
	[MMV_LAZY_MMU_NO_FLUSH_ON_LEAVE] = { "lazy-mmu-no-flush-on-leave", false,
		"arch_leave_lazy_mmu_mode() drops the pending barriers", "000 #11 (Batch barriers)", "I6" },
	[MMV_LAZY_MMU_IRQ] = { "lazy-mmu-irq", false,
		"a set_pte in IRQ context during lazy mode is deferred (Catalin Marinas' counter-example)",
		"000 #11 review", "I6" },
	[MMV_SWITCH_TO_NO_DSB] = { "switch-to-no-dsb", false,
		"context switch without __switch_to()'s dsb(ish) while the thread migrates", "000 #11 review",
		"I6" },
	[MMV_SET_PTES_NO_BARRIER] = { "set-ptes-no-barrier", false,
		"the hoisted barrier lost from set_ptes_anysz()", "000 #06 (Hoist barriers)", "I6" },
	[MMV_HUGETLB_BBM_ELIDE_FIRST_ONLY] = { "hugetlb-bbm-elide-first-only", false,
		"set_huge_pte_at elides the break when the first entry is invalid but others are valid",
		"000 #02 (Refine tlb maintenance scope)", "I4" },
	[MMV_HUGETLB_USER_FLUSH_FOR_KERNEL] = { "hugetlb-user-flush-for-kernel", false,
		"clear_flush on init_mm with the user-range flush (no ISB after the kernel invalidation)",
		"000 #09 (huge pte-mapped pages in vmap)", "I6" },
	[MMV_KERNEL_PGTABLE_FLUSH_NO_ISB] = { "kernel-pgtable-flush-no-isb", false,
		"__flush_tlb_kernel_pgtable() without its trailing ISB when a huge vmap frees a kernel table",
		"kernel commit 51696d346c49 (2019)", "I6" },
	[MMV_HUGETLB_WRONG_STRIDE] = { "hugetlb-wrong-stride", false,
		"TLBI stride/level hint wider than the entry size", "000 #02", "I2" },
	[MMV_MPROTECT_NUMA_ZERO_STEP] = { "mprotect-numa-zero-step", false,
		"the access-time path returns 0 PTEs and the loop does not advance", "001 (prot_numa_skip_ptes)",
		"I11" },
	[MMV_MPROTECT_BATCH_OVERRUN] = { "mprotect-batch-overrun", false,
		"the batch is not bounded by end / the folio", "001 (mprotect_folio_pte_batch)", "I10" },
	[MMV_PGTABLE_NO_ZERO_DSB] = { "pgtable-no-zero-dsb", false,
		"no dsb(ishst) after zeroing a new table", "003 (init_clear_pgtable)", "I7" },
	[MMV_PGTABLE_FIXMAP_NO_FLUSH] = { "pgtable-fixmap-no-flush", false,
		"a fixmap slot reused without its TLBI", "003", "I1/I4" },
	[MMV_CONTPTE_NO_UNFOLD] = { "contpte-no-unfold", false,
		"a subset of a contpte block modified without unfolding it first", "000 / arm64 contpte.c",
		"I5 (I4 when the output or CONT changes)" },
	[MMV_TLB_TTL_FREED_TABLES] = { "tlb-ttl-freed-tables", false,
		"tlb_get_level() keeps the leaf level as TTL hint while page tables are freed",
		"arm64 tlb.h (\"arm64: tlb: fix the TTL value of tlb_get_level\", 2020)", "I1" },
	[MMV_ANON_FOLIO_PAST_VMA] = { "anon-folio-past-vma", false,
		"a large-folio anonymous fault maps a folio that does not fit its VMA (past vm_end)",
		"mm/memory.c alloc_anon_folio (thp_vma_suitable_order)", "I10" },
	[MMV_VMALLOC_PRE_CONTPTE] = { "vmalloc-pre-contpte", true,
		"vmap maps 4K PTEs only (before contpte vmap)", "000 #09", "-" },
	[MMV_VMALLOC_NO_LAZY_MMU] = { "vmalloc-no-lazy-mmu", true,
		"a DSB+ISB per kernel PTE (before lazy-MMU barrier batching)", "000 #10, #11", "-" },
	[MMV_PGTABLE_FIXMAP_TWICE] = { "pgtable-fixmap-twice", true,
		"each new linear-map table mapped through the fixmap twice (allocate and populate)", "003",
		"-" },
	[MMV_MREMAP_NO_MOVE_PMD] = { "mremap-no-move-pmd", true,
		"mremap moves PTE by PTE (no MOVE_PMD / MOVE_PUD)", "004", "-" },
	[MMV_MPROTECT_NO_BATCH] = { "mprotect-no-batch", true,
		"change_pte_range visits PTEs one by one (no folio batches)", "001", "-" },
	[MMV_USER_PRE_CONTPTE] = { "user-pre-contpte", true,
		"user mappings without contpte: set_ptes() and faults write no CONT bit, nothing folds",
		"arch/arm64/mm/contpte.c (Ryan Roberts, 2024; not in 6.1)", "-" },
	[MMV_MREMAP_NO_REALIGN] = { "mremap-no-realign", true,
		"move_page_tables() starts where it is asked (before try_realign_addr())",
		"mm/mremap.c try_realign_addr() (Joel Fernandes, 2023; not in 6.1)", "-" },
	[MMV_UNMAPPED_AREA_NO_THP_ALIGN] = { "unmapped-area-no-thp-align", true,
		"get_unmapped_area() places a PMD-multiple anonymous mapping in the highest gap, not "
		"PMD-congruent (before THP-aligned anonymous mappings)",
		"mm/mmap.c thp_get_unmapped_area() for anonymous memory (Rik van Riel, 2023; not in 6.1)", "-" },
};

unsigned mm_variant_count(void)
{
	return MMV_COUNT;
}

const struct mm_variant_info *mm_variant_info(unsigned id)
{
	return id < MMV_COUNT ? &variants[id] : NULL;
}

int mm_variant_lookup(const char *name)
{
	for (unsigned i = 0; i < MMV_COUNT; i++)
		if (!strcmp(variants[i].name, name))
			return (int)i;
	return -1;
}

void mm_model_set_variant(struct mm_model *mm, unsigned id)
{
	if (id > MMV_NONE && id < MMV_COUNT)
		mm->variant[id] = true;
}

/* ---- kernel-version profiles ---- */

static const char *const profile_6_1[] = {
	"user-pre-contpte", "mremap-no-realign", "unmapped-area-no-thp-align", "mprotect-no-batch",
	"vmalloc-pre-contpte", "vmalloc-no-lazy-mmu", "pgtable-fixmap-twice", NULL,
};
static const char *const profile_default[] = { NULL };

/* by the kernel releases they stand for, oldest last: mm_profile_for_kernel() takes the
 * first whose `from` the release reaches */
static const struct {
	struct mm_profile_info info;
	unsigned from;			/* MAJOR * 1000 + MINOR */
} profiles[] = {
	{ { "default", "the newest logic the model has (7.x, every seed patch in; "
		       "kernels from 6.7 get it too, though some of it came later)", profile_default }, 6007 },
	{ { "6.1", "6.1 up to 6.6: no user contpte, no try_realign_addr(), no THP-aligned anonymous "
		   "placement, no mprotect folio batches, no vmalloc contpte or lazy-MMU batching",
	    profile_6_1 }, 0 },
};
#define NPROFILES (sizeof(profiles) / sizeof(profiles[0]))

unsigned mm_profile_count(void)
{
	return NPROFILES;
}

const struct mm_profile_info *mm_profile_info(unsigned id)
{
	return id < NPROFILES ? &profiles[id].info : NULL;
}

int mm_profile_lookup(const char *name)
{
	for (unsigned i = 0; i < NPROFILES; i++)
		if (!strcmp(profiles[i].info.name, name))
			return (int)i;
	return -1;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

unsigned mm_profile_for_kernel(const char *kernel, char *release, unsigned size)
{
	if (size)
		release[0] = '\0';
	for (const char *p = kernel; p && *p; p++) {
		/* MAJOR.MINOR, not inside a longer word or number (a "deb12" or "1:7.2+dfsg") */
		if (!is_digit(*p) || (p > kernel && (is_digit(p[-1]) || p[-1] == '.' || p[-1] == ':' ||
						      ((p[-1] | 0x20) >= 'a' && (p[-1] | 0x20) <= 'z' &&
						       p[-1] != 'v'))))
			continue;
		const char *q = p;
		unsigned major = 0, minor = 0;
		while (is_digit(*q) && major < 100)
			major = major * 10 + (unsigned)(*q++ - '0');
		if (*q != '.' || !is_digit(q[1]) || major < 2 || major >= 100)
			continue;
		q++;
		while (is_digit(*q) && minor < 1000)
			minor = minor * 10 + (unsigned)(*q++ - '0');
		if (minor >= 1000)
			continue;
		if (size)
			snprintf(release, size, "%u.%u", major, minor);
		for (unsigned i = 0; i < NPROFILES; i++)
			if (major * 1000 + minor >= profiles[i].from)
				return i;
		return 0;
	}
	return 0;
}
