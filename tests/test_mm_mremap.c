/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_mm_mremap.c - which move path mremap() takes (engine/mm/mremap.c:
 * get_extent() in move_page_tables()), read from the arch events the model
 * emits: page-table entries cleared, re-hooked or freshly installed at each
 * level, tables allocated, TLBIs by op.
 *
 * The 13 test_cases of tools/testing/selftests/mm/mremap_test.c are the
 * traces of corpus/mm/mremap-test/ (the directory is argv[1]).  Each is
 * replayed as written (no violation; the expected success or failure), and
 * once more with MREMAP_DONTUNMAP added to its mremap: the same move
 * (mremap_to() -> move_vma() -> move_page_tables()) without the munmap of
 * the source after it, so that every event counted is the move's own.
 *
 * Then the cost claim of seed 004 #11 ("mremap HAVE_MOVE_PMD/PUD
 * optimization time comparison for 1GB region"): a 1 GiB move writes
 * 262,144 PTE pairs, 512 PMD pairs or 1 PUD pair for PTE-, PMD- or
 * PUD-aligned ends, and 262,144 PTE pairs whatever the alignment before
 * MOVE_PMD/MOVE_PUD (the mremap-no-move-pmd baseline).  The default run
 * keeps it cheap: the PTE case over 64 MiB (16,384 PTEs), the others over
 * THP-backed GiBs (512 blocks moved whole by move_huge_pmd(), or their PMD
 * table by one PUD; the baseline still moves the 512 blocks).  `--full`
 * (ctest mm_mremap_1g, label slow) runs them over a GiB written wholly in 4K
 * pages, as the selftest's perf cases do with `-t 0`: about 5 s in a
 * release build, 12 s under ASan+UBSan.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "hmap.h"
#include "session.h"
#include "trace.h"

#define M (1ull << 20)
#define G (1ull << 30)

static const char *corpus_dir;
static bool full;

/* ---- the tap: what the model's events do to the page tables ---- */

struct moves {
	uint64_t cleared[4];	/* a valid entry made invalid */
	uint64_t set[4];	/* a valid entry written: a moved pte/block/table */
	uint64_t installed[4];	/* a table allocated in this op hooked (pte_alloc, pmd_alloc, ...) */
	uint64_t tlbi[PT_TLBI_COUNT];
	uint64_t tables;	/* tables allocated */
	struct pt_event tlbis[8];	/* the first TLBIs, for their addresses and NUM/SCALE */
	unsigned ntlbis;
};

struct tap {
	struct hmap level;	/* table frame pa -> level */
	struct hmap val;	/* entry pa -> current value */
	struct hmap fresh;	/* tables allocated during the counted op */
	bool counting;
	struct moves m;
};

static void tap_init(struct tap *tp)
{
	memset(tp, 0, sizeof(*tp));
	hmap_init(&tp->level, 10);
	hmap_init(&tp->val, 16);
	hmap_init(&tp->fresh, 6);
}

static void tap_destroy(struct tap *tp)
{
	hmap_destroy(&tp->level);
	hmap_destroy(&tp->val);
	hmap_destroy(&tp->fresh);
}

static void tap_event(void *ctx, const struct pt_event *ev)
{
	struct tap *tp = ctx;
	struct moves *m = &tp->m;

	switch (ev->kind) {
	case PT_EV_BEGIN:
		if (ev->op == PT_OP_MREMAP)
			tp->counting = true;
		break;
	case PT_EV_END:
		tp->counting = false;
		break;
	case PT_EV_PAGE_ALLOC:
		if (ev->op != PT_FRAME_TABLE)
			break;
		hmap_set(&tp->level, ev->pa, ev->level);
		if (tp->counting) {
			m->tables++;
			hmap_set(&tp->fresh, ev->pa, 1);
		}
		break;
	case PT_EV_PT_WRITE: {
		uint64_t level = hmap_get(&tp->level, ev->pa & ~0xfffull, HMAP_EMPTY);
		uint64_t old = hmap_get(&tp->val, ev->pa, 0);
		hmap_set(&tp->val, ev->pa, ev->val);
		if (!tp->counting || level > 3)
			break;
		bool was = old & PT_DESC_VALID, is = ev->val & PT_DESC_VALID;
		bool table = level < 3 && (ev->val & 3) == 3;
		if (was && !is)
			m->cleared[level]++;
		else if (is && table && hmap_get(&tp->fresh, ev->val & PT_DESC_OA_MASK, 0))
			m->installed[level]++;
		else if (is)
			m->set[level]++;
		break;
	}
	case PT_EV_TLBI:
		if (!tp->counting)
			break;
		if (ev->op < PT_TLBI_COUNT)
			m->tlbi[ev->op]++;
		if (m->ntlbis < 8)
			m->tlbis[m->ntlbis++] = *ev;
		break;
	default:
		break;
	}
}

static uint64_t tlbi_total(const struct moves *m)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < PT_TLBI_COUNT; i++)
		n += m->tlbi[i];
	return n;
}

/* ---- replay ---- */

struct run {
	struct moves m;
	unsigned violations;
	char sigs[1024];
	uint64_t mremap_ops, mremap_failed;
	double mremap_seconds;
};

/* Replay a trace (a file, or text when path is NULL) through the tap. */
static void replay(const char *path, const char *text, const char *variant, bool dontunmap, struct run *r)
{
	struct pt_error err;
	struct pt_event ev;
	struct tap tp;
	memset(r, 0, sizeof(*r));
	tap_init(&tp);
	struct pt_reader *rd = path ? pt_reader_open(path, &err) :
			       pt_reader_open_mem(text, strlen(text), "inline", &err);
	if (!rd)
		fail_msg("%s", err.msg);
	struct pt_session *s = pt_session_new(pt_reader_header(rd));
	assert_non_null(s);
	if (variant)
		assert_int_equal(pt_session_set_variant(s, variant), 0);
	pt_session_set_tap(s, tap_event, &tp);
	int rc;
	while ((rc = pt_reader_next(rd, &ev, &err)) == 1) {
		if (ev.kind == PT_EV_MREMAP && dontunmap)
			ev.flags |= PT_MREMAP_DONTUNMAP;
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		pt_session_event(s, &ev);
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (ev.kind == PT_EV_MREMAP)
			r->mremap_seconds += (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
	}
	if (rc < 0)
		fail_msg("%s", err.msg);
	pt_session_finish(s);
	r->violations = pt_session_nviolations(s);
	for (unsigned i = 0; i < r->violations; i++) {
		size_t l = strlen(r->sigs);
		snprintf(r->sigs + l, sizeof(r->sigs) - l, "%s ", pt_session_violation(s, i)->signature);
	}
	const struct pt_op_costs *o = &pt_session_counters(s)->per_op[PT_EV_MREMAP];
	r->mremap_ops = o->ops;
	r->mremap_failed = o->failed;
	r->m = tp.m;
	pt_session_free(s);
	pt_reader_close(rd);
	tap_destroy(&tp);
}

static void replay_case(const char *name, bool dontunmap, struct run *r)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", corpus_dir, name);
	replay(path, NULL, NULL, dontunmap, r);
	if (r->violations)
		fail_msg("%s: %u violation(s): %s", name, r->violations, r->sigs);
	assert_int_equal(r->mremap_ops, 1);
}

/* the moved entries: as many set as cleared at each level (a move, nothing lost or made up) */
static void assert_pairs(const struct moves *m, uint64_t pte, uint64_t pmd, uint64_t pud)
{
	assert_int_equal(m->cleared[3], pte);
	assert_int_equal(m->set[3], pte);
	assert_int_equal(m->cleared[2], pmd);
	assert_int_equal(m->set[2], pmd);
	assert_int_equal(m->cleared[1], pud);
	assert_int_equal(m->set[1], pud);
	assert_int_equal(m->cleared[0] + m->set[0], 0);
}

/* a move never flushes last-level only: the old VA's walk-cache entries must go too (#10) */
static void assert_walk_cache_flushed(const struct moves *m)
{
	assert_int_equal(m->tlbi[PT_TLBI_VALE1IS] + m->tlbi[PT_TLBI_RVALE1IS], 0);
	assert_true(tlbi_total(m) > 0);
}

/* ---- mremap_test.c: the expected failures ---- */

static void expect_failure(const char *name)
{
	struct run r;
	replay_case(name, false, &r);
	assert_int_equal(r.mremap_failed, 1);
	assert_pairs(&r.m, 0, 0, 0);
	assert_int_equal(tlbi_total(&r.m), 0);
	assert_int_equal(r.m.tables, 0);
}

static void test_overlapping_ranges_fail(void **state)
{
	(void)state;
	expect_failure("00-overlapping.ptt");
}

static void test_misaligned_destination_fails(void **state)
{
	(void)state;
	expect_failure("01-dest-misaligned-1k.ptt");
}

static void test_misaligned_source_fails(void **state)
{
	(void)state;
	expect_failure("02-src-misaligned-1k.ptt");
}

/* ---- mremap_test.c: the moves ---- */

/* Replay as written (succeeds, clean), then isolated (DONTUNMAP) for the move's own events. */
static void move_of(const char *name, struct moves *m)
{
	struct run r;
	replay_case(name, false, &r);
	assert_int_equal(r.mremap_failed, 0);
	replay_case(name, true, &r);
	assert_int_equal(r.mremap_failed, 0);
	*m = r.m;
	assert_walk_cache_flushed(m);
}

static void test_8k_pte_aligned_moves_two_ptes_under_one_ptl(void **state)
{
	(void)state;
	struct moves m;
	move_of("03-8k-pte-pte.ptt", &m);
	/* source and destination share a PTE table: nothing allocated */
	assert_pairs(&m, 2, 0, 0);
	assert_int_equal(m.tables, 0);
	/* one flush of the 2 old pages: RVAE1IS NUM=0 SCALE=0 */
	assert_int_equal(tlbi_total(&m), 1);
	assert_int_equal(m.tlbi[PT_TLBI_RVAE1IS], 1);
	assert_true(m.tlbis[0].va == 0x10001000 && m.tlbis[0].num == 0 && m.tlbis[0].scale == 0);
}

static void test_2m_src_1m_dst_pte_moves_512_ptes(void **state)
{
	(void)state;
	struct moves m;
	move_of("04-2m-1m-pte.ptt", &m);
	assert_pairs(&m, 512, 0, 0);
	/* the destination's first PTE table is the source's second one: one new table */
	assert_int_equal(m.installed[2], 1);
	assert_int_equal(m.tables, 1);
	/* three extents (1M-4K, 4K, 1M: the next PMD boundary of either side), one flush each:
	 * 255 pages = RVAE1IS 192 + RVAE1IS 62 + VAE1IS, 1 page = VAE1IS, 256 pages = RVAE1IS */
	assert_int_equal(m.tlbi[PT_TLBI_RVAE1IS], 3);
	assert_int_equal(m.tlbi[PT_TLBI_VAE1IS], 2);
}

static void test_2m_mutually_1m_aligned_realigns_to_a_pmd_move(void **state)
{
	(void)state;
	struct moves m;
	move_of("05-2m-1m-1m.ptt", &m);
	/* try_realign_addr(): the first PMD (with its 256 ptes) moves as one table, from the PMD
	 * boundary below the source; the last 1M goes pte by pte into one new PTE table */
	assert_int_equal(m.cleared[2], 1);
	assert_int_equal(m.set[2], 1);
	assert_int_equal(m.cleared[3], 256);
	assert_int_equal(m.set[3], 256);
	assert_int_equal(m.installed[2], 1);
	assert_int_equal(m.tables, 1);
	assert_int_equal(m.tlbi[PT_TLBI_RVAE1IS], 2);
	assert_true(m.tlbis[0].va == 0x10000000);	/* the realigned PMD, flushed whole */
}

static void test_4m_pmd_src_pte_dst_moves_1024_ptes(void **state)
{
	(void)state;
	struct moves m;
	move_of("06-4m-pmd-pte.ptt", &m);
	assert_pairs(&m, 1024, 0, 0);
	assert_int_equal(m.installed[2], 3);	/* 4M 4K past a PMD boundary spans 3 PTE tables */
	assert_int_equal(m.tables, 3);
	/* extents 511, 1, 511, 1 pages */
	assert_int_equal(m.tlbi[PT_TLBI_RVAE1IS], 4);
	assert_int_equal(m.tlbi[PT_TLBI_VAE1IS], 4);
}

static void test_4m_pmd_src_1m_dst_moves_1024_ptes(void **state)
{
	(void)state;
	struct moves m;
	move_of("07-4m-pmd-1m.ptt", &m);
	/* the source is aligned, the destination is not: no realign, no table moves */
	assert_pairs(&m, 1024, 0, 0);
	assert_int_equal(m.installed[2], 3);
	/* four extents of 1M */
	assert_int_equal(m.tlbi[PT_TLBI_RVAE1IS], 4);
	assert_int_equal(tlbi_total(&m), 4);
}

static void test_4m_pmd_aligned_moves_two_pte_tables(void **state)
{
	(void)state;
	struct moves m;
	move_of("08-4m-pmd-pmd.ptt", &m);
	/* move_normal_pmd() twice: 2 PMD entries cleared, 2 set, no PTE written */
	assert_pairs(&m, 0, 2, 0);
	assert_int_equal(m.tables, 0);
	/* one RVAE1IS per moved table, 512 pages each (NUM=7 SCALE=1), not last-level */
	assert_int_equal(m.tlbi[PT_TLBI_RVAE1IS], 2);
	assert_int_equal(tlbi_total(&m), 2);
	assert_true(m.tlbis[0].va == 0x10200000 && m.tlbis[0].num == 7 && m.tlbis[0].scale == 1);
	assert_true(m.tlbis[1].va == 0x10400000);
}

static void test_2g_pud_src_pte_dst_moves_the_touched_ptes(void **state)
{
	(void)state;
	struct moves m;
	move_of("09-2g-pud-pte.ptt", &m);
	assert_pairs(&m, 1024, 0, 0);
	/* a PMD table for the destination's GB, then 3 PTE tables */
	assert_int_equal(m.installed[1], 1);
	assert_int_equal(m.installed[2], 3);
	assert_int_equal(m.tables, 4);
	assert_int_equal(m.tlbi[PT_TLBI_RVAE1IS], 4);
	assert_int_equal(m.tlbi[PT_TLBI_VAE1IS], 4);
}

static void test_2g_pud_src_1m_dst_moves_the_touched_ptes(void **state)
{
	(void)state;
	struct moves m;
	move_of("10-2g-pud-1m.ptt", &m);
	assert_pairs(&m, 1024, 0, 0);
	assert_int_equal(m.installed[1], 1);
	assert_int_equal(m.installed[2], 3);
	assert_int_equal(m.tlbi[PT_TLBI_RVAE1IS], 4);
	assert_int_equal(tlbi_total(&m), 4);
}

static void test_2g_pud_src_pmd_dst_moves_pte_tables(void **state)
{
	(void)state;
	struct moves m;
	move_of("11-2g-pud-pmd.ptt", &m);
	/* the PUD extent is 1G-2M (the destination is 2M past a GB): PMD moves */
	assert_pairs(&m, 0, 2, 0);
	assert_int_equal(m.installed[1], 1);
	assert_int_equal(m.tables, 1);
	assert_int_equal(m.tlbi[PT_TLBI_RVAE1IS], 2);
	assert_int_equal(tlbi_total(&m), 2);
}

static void test_2g_pud_aligned_moves_one_pmd_table(void **state)
{
	(void)state;
	struct moves m;
	move_of("12-2g-pud-pud.ptt", &m);
	/* move_normal_pud(): 1 PUD entry cleared, 1 set; nothing below written or allocated */
	assert_pairs(&m, 0, 0, 1);
	assert_int_equal(m.tables, 0);
	/* one RVAE1IS over the old GB: NUM=3 SCALE=3 = 4 << 16 pages */
	assert_int_equal(tlbi_total(&m), 1);
	assert_int_equal(m.tlbi[PT_TLBI_RVAE1IS], 1);
	assert_true(m.tlbis[0].va == 0x40000000 && m.tlbis[0].num == 3 && m.tlbis[0].scale == 3);
}

/* ---- the baseline: before MOVE_PMD/MOVE_PUD every pte moves (mremap-no-move-pmd) ---- */

static void test_no_move_pmd_baseline_moves_ptes(void **state)
{
	(void)state;
	char path[1024];
	struct run r;
	snprintf(path, sizeof(path), "%s/%s", corpus_dir, "08-4m-pmd-pmd.ptt");
	replay(path, NULL, "mremap-no-move-pmd", true, &r);
	assert_int_equal(r.violations, 0);
	assert_pairs(&r.m, 1024, 0, 0);
	assert_int_equal(r.m.installed[2], 2);
}

/* ---- seed 004 #11: a 1 GiB region, PTE / PMD / PUD aligned ---- */

struct gib_case {
	const char *name;
	const char *variant;
	uint64_t src, dst, len;
	unsigned order;		/* folio order the region is touched with */
	uint64_t pte, pmd, pud;	/* entries moved */
};

static void run_gib(const struct gib_case *c)
{
	char text[1024];
	struct run r;
	snprintf(text, sizeof(text),
		 "@ptt version=1 granule=4K va_bits=48 cpus=1 method=hand\n"
		 "cpu0 mmap va=%#llx len=%#llx prot=rw asid=1 order=%u\n"
		 "cpu0 touch va=%#llx len=%#llx asid=1 flags=0x1\n"
		 "cpu0 mremap va=%#llx len=%#llx new_va=%#llx new_len=%#llx asid=1 flags=0x7\n",
		 (unsigned long long)c->src, (unsigned long long)c->len, c->order, (unsigned long long)c->src,
		 (unsigned long long)c->len, (unsigned long long)c->src, (unsigned long long)c->len,
		 (unsigned long long)c->dst, (unsigned long long)c->len);
	replay(NULL, text, c->variant, false, &r);
	if (r.violations)
		fail_msg("%s: %s", c->name, r.sigs);
	assert_int_equal(r.mremap_failed, 0);
	printf("  %-60s %6llu PTE %3llu PMD %llu PUD pairs, %4llu TLBIs, %3llu tables, replay %4.0f ms\n",
	       c->name, (unsigned long long)r.m.set[3], (unsigned long long)r.m.set[2],
	       (unsigned long long)r.m.set[1], (unsigned long long)tlbi_total(&r.m), (unsigned long long)r.m.tables,
	       r.mremap_seconds * 1e3);
	assert_pairs(&r.m, c->pte, c->pmd, c->pud);
	assert_walk_cache_flushed(&r.m);
}

/*
 * The addresses follow mremap_test.c for perf_test_cases[]: src an odd multiple of the
 * alignment, dest = (src + 1G + align) & ~(align - 1) with the alignment bit set.  The move
 * is MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP so that only move_page_tables() counts.
 */
static void test_1g_pte_aligned_moves_every_pte(void **state)
{
	(void)state;
	const struct gib_case c = { "1GB mremap - Source PTE-aligned, Destination PTE-aligned", NULL,
				    0x40001000, 0x80003000, G, 0, 262144, 0, 0 };
	const struct gib_case scaled = { "64MB mremap - Source PTE-aligned, Destination PTE-aligned", NULL,
					 0x40001000, 0x44003000, 64 * M, 0, 16384, 0, 0 };
	run_gib(full ? &c : &scaled);
}

static void test_1g_pmd_aligned_moves_512_pmds(void **state)
{
	(void)state;
	/* 4K pages: 512 PTE tables re-hooked (move_normal_pmd()); THP: 512 blocks, each with its
	 * deposited table (move_huge_pmd()) */
	const struct gib_case c = { "1GB mremap - Source PMD-aligned, Destination PMD-aligned", NULL,
				    0x40200000, 0x80600000, G, 0, 0, 512, 0 };
	const struct gib_case thp = { "1GB THP mremap - Source PMD-aligned, Destination PMD-aligned", NULL,
				      0x40200000, 0x80600000, G, 9, 0, 512, 0 };
	run_gib(full ? &c : &thp);
}

static void test_1g_pud_aligned_moves_one_pud(void **state)
{
	(void)state;
	const struct gib_case c = { "1GB mremap - Source PUD-aligned, Destination PUD-aligned", NULL,
				    0x40000000, 0xc0000000, G, 0, 0, 0, 1 };
	const struct gib_case thp = { "1GB THP mremap - Source PUD-aligned, Destination PUD-aligned", NULL,
				      0x40000000, 0xc0000000, G, 9, 0, 0, 1 };
	run_gib(full ? &c : &thp);
}

static void test_1g_no_move_pmd_baseline_moves_every_entry(void **state)
{
	(void)state;
	/* what seed 004 saves: before MOVE_PMD/MOVE_PUD the PUD-aligned GB goes pte by pte (THPs
	 * still move whole, as they did long before) */
	const struct gib_case c = { "1GB mremap - PUD-aligned, baseline mremap-no-move-pmd", "mremap-no-move-pmd",
				    0x40000000, 0xc0000000, G, 0, 262144, 0, 0 };
	const struct gib_case thp = { "1GB THP mremap - PUD-aligned, baseline mremap-no-move-pmd",
				      "mremap-no-move-pmd", 0x40000000, 0xc0000000, G, 9, 0, 512, 0 };
	run_gib(full ? &c : &thp);
}

int main(int argc, char **argv)
{
	int i = 1;
	if (i < argc && !strcmp(argv[i], "--full")) {
		full = true;
		i++;
	}
	if (i + 1 != argc) {
		fprintf(stderr, "usage: test_mm_mremap [--full] CORPUS_DIR (corpus/mm/mremap-test)\n");
		return 2;
	}
	corpus_dir = argv[i];
	const struct CMUnitTest paths[] = {
		cmocka_unit_test(test_overlapping_ranges_fail),
		cmocka_unit_test(test_misaligned_destination_fails),
		cmocka_unit_test(test_misaligned_source_fails),
		cmocka_unit_test(test_8k_pte_aligned_moves_two_ptes_under_one_ptl),
		cmocka_unit_test(test_2m_src_1m_dst_pte_moves_512_ptes),
		cmocka_unit_test(test_2m_mutually_1m_aligned_realigns_to_a_pmd_move),
		cmocka_unit_test(test_4m_pmd_src_pte_dst_moves_1024_ptes),
		cmocka_unit_test(test_4m_pmd_src_1m_dst_moves_1024_ptes),
		cmocka_unit_test(test_4m_pmd_aligned_moves_two_pte_tables),
		cmocka_unit_test(test_2g_pud_src_pte_dst_moves_the_touched_ptes),
		cmocka_unit_test(test_2g_pud_src_1m_dst_moves_the_touched_ptes),
		cmocka_unit_test(test_2g_pud_src_pmd_dst_moves_pte_tables),
		cmocka_unit_test(test_2g_pud_aligned_moves_one_pmd_table),
		cmocka_unit_test(test_no_move_pmd_baseline_moves_ptes),
	};
	const struct CMUnitTest gib[] = {
		cmocka_unit_test(test_1g_pte_aligned_moves_every_pte),
		cmocka_unit_test(test_1g_pmd_aligned_moves_512_pmds),
		cmocka_unit_test(test_1g_pud_aligned_moves_one_pud),
		cmocka_unit_test(test_1g_no_move_pmd_baseline_moves_every_entry),
	};
	if (full)
		return cmocka_run_group_tests_name("mremap_1g", gib, NULL, NULL);
	int rc = cmocka_run_group_tests_name("mremap_test", paths, NULL, NULL);
	return rc | cmocka_run_group_tests_name("mremap_1g_scaled", gib, NULL, NULL);
}
