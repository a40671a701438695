/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_engine.c - every trace in a corpus directory states its verdict in a
 * comment line `# expect: I4` (or `# expect: I2 I3`, or `# expect: clean`);
 * replaying it must give exactly that set of invariant IDs, twice, with the
 * same violations and the same state hash.  A variant's reproducer
 * (`# variant: NAME`) gives that set under the variant and nothing under the
 * default model, or exactly `# expect-default: I9 ...` when the variant's
 * decision point lies behind a WARN of the kernel (a contract only a broken
 * caller reaches).  Plus unit tests of the rules the checkers encode.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "machine.h"
#include "session.h"
#include "trace.h"

#define MAX_COSTS 16

/* `# expect-cost: KIND FIELD=N FIELD<=N FIELD>=N ...`: the model's costs for an ops-level kind */
struct cost_expect {
	unsigned kind;
	char field[32];
	char cmp;		/* '=', '<', '>' (<=, >=) */
	uint64_t value;
};

struct verdict {
	struct cost_expect costs[MAX_COSTS];
	unsigned ncosts;
	struct pt_counters k;
	unsigned ids;		/* bit i: invariant Ii reported */
	unsigned n;
	uint64_t hash;
	char sigs[2048];
	bool have_expect;
	unsigned expect;
	char variant[64];	/* `# variant: NAME`: the expectation holds under that variant */
	unsigned expect_default;	/* `# expect-default: I9 ...`: the default's verdict on it */
};

static void parse_costs(const char *path, const char *text, struct verdict *v)
{
	char kind[32];
	int n = 0;
	if (sscanf(text, " %31s%n", kind, &n) != 1)
		fail_msg("%s: expect-cost needs a kind", path);
	unsigned k = pt_kind_by_name(kind, strlen(kind));
	if (!k)
		fail_msg("%s: expect-cost: unknown kind %s", path, kind);
	text += n;
	char item[64];
	while (sscanf(text, " %63s%n", item, &n) == 1) {
		text += n;
		if (v->ncosts == MAX_COSTS)
			fail_msg("%s: too many expect-cost items", path);
		struct cost_expect *c = &v->costs[v->ncosts++];
		char *op = strpbrk(item, "<>=");
		if (!op)
			fail_msg("%s: expect-cost item %s: expected FIELD=N, FIELD<=N or FIELD>=N", path, item);
		c->kind = k;
		c->cmp = *op;
		snprintf(c->field, sizeof(c->field), "%.*s", (int)(op - item), item);
		c->value = strtoull(op + (op[1] == '=' ? 2 : 1), NULL, 0);
	}
}

static uint64_t cost_field(const char *path, const struct pt_op_costs *o, const char *f)
{
	uint64_t tlbi = 0;
	for (unsigned i = 0; i < PT_TLBI_COUNT; i++) {
		tlbi += o->tlbi_by_op[i];
		char name[40];
		snprintf(name, sizeof(name), "tlbi_%s", pt_op_name(PT_EV_TLBI, i));
		if (!strcmp(f, name))
			return o->tlbi_by_op[i];
	}
#define F(x) if (!strcmp(f, #x)) return o->x
	F(ops); F(failed); F(pt_writes); F(dsb); F(dmb); F(isb); F(tables_alloc); F(tables_freed);
	F(pages_alloc); F(pages_freed);
#undef F
	if (!strcmp(f, "tlbi"))
		return tlbi;
	fail_msg("%s: expect-cost: unknown field %s", path, f);
	return 0;
}

static void check_costs(const char *path, const struct verdict *v)
{
	for (unsigned i = 0; i < v->ncosts; i++) {
		const struct cost_expect *c = &v->costs[i];
		uint64_t got = cost_field(path, &v->k.per_op[c->kind], c->field);
		bool ok = c->cmp == '=' ? got == c->value : c->cmp == '<' ? got <= c->value : got >= c->value;
		if (!ok)
			fail_msg("%s: %s %s: expected %s%s%llu, got %llu", path, pt_kind_name(c->kind), c->field,
				 c->cmp == '=' ? "" : c->cmp == '<' ? "<=" : ">=", c->cmp == '=' ? "=" : "",
				 (unsigned long long)c->value, (unsigned long long)got);
	}
}

/* the invariant IDs named in `I2 I3 ...` */
static unsigned parse_ids(const char *p)
{
	unsigned ids = 0;
	for (; *p; p++)
		if (*p == 'I')
			ids |= 1u << atoi(p + 1);
	return ids;
}

static void replay_file(const char *path, const char *variant, struct verdict *v)
{
	struct pt_error err;
	struct pt_event ev;
	memset(v, 0, sizeof(*v));
	struct pt_reader *r = pt_reader_open(path, &err);
	if (!r)
		fail_msg("%s", err.msg);
	struct pt_session *s = pt_session_new(pt_reader_header(r));
	assert_non_null(s);
	if (variant && pt_session_set_variant(s, variant) < 0)
		fail_msg("%s: unknown variant %s", path, variant);
	int rc;
	while ((rc = pt_reader_next(r, &ev, &err)) == 1) {
		if (ev.kind == PT_EV_COMMENT && ev.text && !strncmp(ev.text, "expect:", 7)) {
			v->have_expect = true;
			v->expect |= parse_ids(ev.text + 7);
		}
		if (ev.kind == PT_EV_COMMENT && ev.text && !strncmp(ev.text, "expect-default:", 15))
			v->expect_default |= parse_ids(ev.text + 15);
		if (ev.kind == PT_EV_COMMENT && ev.text && !strncmp(ev.text, "variant:", 8))
			sscanf(ev.text + 8, " %63s", v->variant);
		if (ev.kind == PT_EV_COMMENT && ev.text && !strncmp(ev.text, "expect-cost:", 12))
			parse_costs(path, ev.text + 12, v);
		pt_session_event(s, &ev);
	}
	if (rc < 0)
		fail_msg("%s", err.msg);
	pt_session_finish(s);
	v->n = pt_session_nviolations(s);
	for (unsigned i = 0; i < v->n; i++) {
		const struct pt_violation *x = pt_session_violation(s, i);
		v->ids |= 1u << x->id;
		size_t l = strlen(v->sigs);
		snprintf(v->sigs + l, sizeof(v->sigs) - l, "%s@%llu ", x->signature, (unsigned long long)x->event);
	}
	v->hash = pt_session_hash(s);
	v->k = *pt_session_counters(s);
	pt_session_free(s);
	pt_reader_close(r);
}

static void test_corpus_file(void **state)
{
	const char *path = *state;
	struct verdict a, b;
	replay_file(path, NULL, &a);
	if (!a.have_expect)
		fail_msg("%s: no '# expect:' line", path);
	if (a.variant[0]) {
		/* a variant's reproducer: silent under the default model (or exactly its expect-default
		 * set), its invariants under the variant, and the two verdicts differ */
		unsigned dflt = a.expect_default;
		if (a.ids != dflt)
			fail_msg("%s: the default model must give ids 0x%x, got 0x%x: %s", path, dflt, a.ids, a.sigs);
		char variant[64];
		memcpy(variant, a.variant, sizeof(variant));
		replay_file(path, variant, &a);
		if (a.ids != a.expect || !a.ids || a.ids == dflt)
			fail_msg("%s: under %s expected ids 0x%x, got 0x%x: %s", path, variant, a.expect, a.ids, a.sigs);
		check_costs(path, &a);
		replay_file(path, variant, &b);
		assert_string_equal(a.sigs, b.sigs);
		assert_true(a.hash == b.hash);
		return;
	}
	if (a.ids != a.expect)
		fail_msg("%s: expected ids 0x%x, got 0x%x: %s", path, a.expect, a.ids, a.sigs);
	check_costs(path, &a);
	/* determinism: the same verdict, report and state hash */
	replay_file(path, NULL, &b);
	assert_int_equal(a.ids, b.ids);
	assert_string_equal(a.sigs, b.sigs);
	assert_true(a.hash == b.hash);
}

/* ---- unit tests of the rules ---- */

#define UPG(pa) ((pa) | PT_DESC_VALID | PT_DESC_TABLE | PT_DESC_AF | PT_DESC_NG | PT_DESC_USER | (3ull << 8))

static void test_pgattr_change_is_safe_follows_mmu_c(void **state)
{
	(void)state;
	uint64_t a = UPG(0x50000000ull), b = UPG(0x50001000ull);
	assert_true(pt_pgattr_change_is_safe(0, a));			/* create */
	assert_true(pt_pgattr_change_is_safe(a, 0));			/* remove */
	assert_false(pt_pgattr_change_is_safe(a, b));			/* output address */
	assert_true(pt_pgattr_change_is_safe(a, a | PT_DESC_RDONLY));	/* permission */
	assert_true(pt_pgattr_change_is_safe(a, a | PT_DESC_PXN));
	assert_false(pt_pgattr_change_is_safe(a, a | PT_DESC_CONT));	/* contiguous */
	assert_false(pt_pgattr_change_is_safe(a, a & ~PT_DESC_NG));	/* nG -> global */
	assert_true(pt_pgattr_change_is_safe(a & ~PT_DESC_NG, a));	/* global -> nG */
	assert_true(pt_pgattr_change_is_safe(a, a | (1ull << 2)));	/* Normal -> Normal-Tagged */
	assert_false(pt_pgattr_change_is_safe(a, a | (3ull << 2)));	/* Normal -> Device */
	assert_false(pt_pgattr_change_is_safe(a, a | PT_DESC_UXN));	/* UXN is not in the mask */
}

static struct pt_machine *machine(void)
{
	struct pt_header h;
	pt_header_default(&h);
	return pt_machine_new(&h);
}

static void ev(struct pt_machine *m, unsigned kind, unsigned op, uint64_t pa, uint64_t val)
{
	struct pt_event e = { .kind = (uint8_t)kind, .op = (uint8_t)op, .pa = pa, .val = val };
	if (kind == PT_EV_PAGE_ALLOC) {
		e.level = (uint8_t)val;
		e.val = 0;
		e.flags = PT_ALLOC_ZERO;
	}
	if (kind == PT_EV_TTBR0)
		e.asid = 1;
	if (kind == PT_EV_TLBI) {
		e.va = val;
		e.pa = 0;
		e.val = 0;
		e.asid = 1;
		e.num = (uint8_t)(pa & 31);
		e.scale = (uint8_t)(pa >> 5);
	}
	assert_int_equal(pt_machine_event(m, &e), 0);
}

/* A 4-level user tree mapping va 0x400000 + i*4K for i < n. */
static struct pt_machine *user_tree(unsigned n)
{
	struct pt_machine *m = machine();
	for (unsigned l = 0; l < 4; l++)
		ev(m, PT_EV_PAGE_ALLOC, PT_FRAME_TABLE, 0x40000000ull + l * 0x1000, l);
	ev(m, PT_EV_DSB, PT_BAR_ISHST, 0, 0);
	ev(m, PT_EV_PT_WRITE, 0, 0x40000000, 0x40001003);
	ev(m, PT_EV_PT_WRITE, 0, 0x40001000, 0x40002003);
	ev(m, PT_EV_PT_WRITE, 0, 0x40002010, 0x40003003);
	ev(m, PT_EV_TTBR0, 0, 0x40000000, 0);
	for (unsigned i = 0; i < n; i++)
		ev(m, PT_EV_PT_WRITE, 0, 0x40003000 + i * 8, UPG(0x50000000ull + i * 0x1000));
	ev(m, PT_EV_DSB, PT_BAR_ISH, 0, 0);
	return m;
}

static void unmap_all(struct pt_machine *m, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		ev(m, PT_EV_PT_WRITE, 0, 0x40003000 + i * 8, 0);
	ev(m, PT_EV_DSB, PT_BAR_ISHST, 0, 0);
}

static void test_range_tlbi_covers_exactly_num_scale_pages(void **state)
{
	(void)state;
	/* RVALE1IS NUM=7 SCALE=1: (7+1) * 2^(5*1+1) = 512 pages */
	struct pt_machine *m = user_tree(512);
	unmap_all(m, 512);
	assert_int_equal(pt_machine_nfacts(m), 512);
	ev(m, PT_EV_TLBI, PT_TLBI_RVALE1IS, 7 | 1 << 5, 0x400000);
	ev(m, PT_EV_DSB, PT_BAR_ISH, 0, 0);
	assert_int_equal(pt_machine_nfacts(m), 0);
	pt_machine_free(m);

	/* NUM=0 SCALE=0: 2 pages; the third stays cached */
	m = user_tree(3);
	unmap_all(m, 3);
	ev(m, PT_EV_TLBI, PT_TLBI_RVALE1IS, 0, 0x400000);
	ev(m, PT_EV_DSB, PT_BAR_ISH, 0, 0);
	assert_int_equal(pt_machine_nfacts(m), 1);
	assert_true(pt_machine_fact(m, 0)->va == 0x402000);
	pt_machine_free(m);
}

/* The facts of a run of cleared pages (machine.c: the tail) are found by VA and by output page
 * as indexed facts are, and a single-page TLBI takes one of them out. */
static void test_facts_of_a_cleared_run_are_found_until_their_tlbi(void **state)
{
	(void)state;
	uint32_t hits[4];
	struct pt_machine *m = user_tree(100);
	unmap_all(m, 100);
	assert_int_equal(pt_machine_nfacts(m), 100);
	/* 64 facts or more: the lookup by key */
	assert_int_equal(pt_machine_facts_overlapping(m, 0x403000, 0x1000, hits, 4), 1);
	assert_true(pt_machine_fact(m, hits[0])->va == 0x403000);
	assert_int_equal(pt_machine_facts_mapping(m, 0x50005000, hits, 4), 1);
	assert_true(pt_machine_fact(m, hits[0])->va == 0x405000);
	ev(m, PT_EV_TLBI, PT_TLBI_VALE1IS, 0, 0x402000);
	ev(m, PT_EV_DSB, PT_BAR_ISH, 0, 0);
	assert_int_equal(pt_machine_nfacts(m), 99);
	assert_int_equal(pt_machine_facts_overlapping(m, 0x402000, 0x1000, hits, 4), 0);
	assert_int_equal(pt_machine_facts_mapping(m, 0x50002000, hits, 4), 0);
	assert_int_equal(pt_machine_facts_overlapping(m, 0x463000, 0x1000, hits, 4), 1);
	assert_true(pt_machine_fact(m, hits[0])->va == 0x463000);
	/* NUM=3 SCALE=1: 256 pages, the rest */
	ev(m, PT_EV_TLBI, PT_TLBI_RVALE1IS, 3 | 1 << 5, 0x400000);
	ev(m, PT_EV_DSB, PT_BAR_ISH, 0, 0);
	assert_int_equal(pt_machine_nfacts(m), 0);
	pt_machine_free(m);
}

/* 52-bit VA, LPA2: a 5-level user tree from a 16-entry level -1 root at 0x40000080 (a pgd from
 * a kmem_cache, in a page with others) mapping va 0x400000 + i*4K for i < n to pages whose
 * descriptors carry OA[51:50] = 0b10 in bits [9:8]: 2^51 + 0x50000000 + i*4K. */
#define LPG(pa) (((pa) & PT_DESC_OA_MASK_LPA2) | ((pa) >> 42 & PT_DESC_OA_HI_LPA2) | PT_DESC_VALID | \
		 PT_DESC_TABLE | PT_DESC_AF | PT_DESC_NG | PT_DESC_USER)
#define LPA2_PAGE (1ull << 51 | 0x50000000ull)

static struct pt_machine *lpa2_tree(unsigned n)
{
	struct pt_header h;
	pt_header_default(&h);
	h.va_bits = 52;
	h.lpa2 = 1;
	struct pt_machine *m = pt_machine_new(&h);
	assert_non_null(m);
	assert_int_equal(pt_machine_start_level(m), -1);
	assert_true(pt_machine_kernel_base(m) == 0xfff0000000000000ull);
	ev(m, PT_EV_TTBR0, 0, 0x40000080, 0);
	for (unsigned l = 0; l < 4; l++)
		ev(m, PT_EV_PAGE_ALLOC, PT_FRAME_TABLE, 0x40001000ull + l * 0x1000, l);
	ev(m, PT_EV_DSB, PT_BAR_ISHST, 0, 0);
	ev(m, PT_EV_PT_WRITE, 0, 0x40000080, 0x40001003);	/* pgd[0] (level -1) -> level 0 */
	ev(m, PT_EV_PT_WRITE, 0, 0x40000008, 0x40009003);	/* another mm's pgd in the same page */
	ev(m, PT_EV_PT_WRITE, 0, 0x40001000, 0x40002003);
	ev(m, PT_EV_PT_WRITE, 0, 0x40002000, 0x40003003);
	ev(m, PT_EV_PT_WRITE, 0, 0x40003010, 0x40004003);
	for (unsigned i = 0; i < n; i++)
		ev(m, PT_EV_PT_WRITE, 0, 0x40004000 + i * 8, LPG(LPA2_PAGE + i * 0x1000));
	ev(m, PT_EV_DSB, PT_BAR_ISH, 0, 0);
	return m;
}

static void test_lpa2_walks_five_levels_from_a_sub_page_root(void **state)
{
	(void)state;
	struct pt_machine *m = lpa2_tree(1);
	struct pt_walk_result r;
	assert_true(pt_walk(m, false, 1, 0x400123, true, &r));
	assert_int_equal(r.level, 3);
	assert_true(r.pa == LPA2_PAGE + 0x123);		/* bits [9:8] are OA[51:50] */
	/* pgd[1] (va 2^48..) is empty: the store at 0x40000008 went to the other pgd */
	assert_false(pt_walk(m, false, 1, (1ull << 48) + 0x400000, true, &r));
	assert_int_equal((int)r.level, -1);
	assert_false(pt_walk(m, false, 1, 1ull << 52, true, &r));	/* outside TTBR0's 52 bits */
	pt_machine_free(m);
}

static void test_lpa2_range_tlbi_base_is_in_64k_units(void **state)
{
	(void)state;
	/* BaseADDR holds VA[52:16]: an operand naming 0x401000 starts at 0x400000 (RVALE1IS NUM=0
	 * SCALE=0: 2 pages), so 0x402000 stays cached; without LPA2 it would be 0x400000 */
	struct pt_machine *m = lpa2_tree(3);
	for (unsigned i = 0; i < 3; i++)
		ev(m, PT_EV_PT_WRITE, 0, 0x40004000 + i * 8, 0);
	ev(m, PT_EV_DSB, PT_BAR_ISHST, 0, 0);
	assert_int_equal(pt_machine_nfacts(m), 3);
	ev(m, PT_EV_TLBI, PT_TLBI_RVALE1IS, 0, 0x401000);
	ev(m, PT_EV_DSB, PT_BAR_ISH, 0, 0);
	assert_int_equal(pt_machine_nfacts(m), 1);
	assert_true(pt_machine_fact(m, 0)->va == 0x402000);
	uint32_t hit;
	assert_int_equal(pt_machine_facts_mapping(m, LPA2_PAGE + 0x2000, &hit, 1), 1);
	assert_int_equal(pt_machine_facts_mapping(m, 0x50002000, &hit, 1), 0);
	pt_machine_free(m);
}

static void test_tlbi_completes_only_at_dsb_ish(void **state)
{
	(void)state;
	struct pt_machine *m = user_tree(1);
	unmap_all(m, 1);
	ev(m, PT_EV_TLBI, PT_TLBI_VALE1IS, 0, 0x400000);
	ev(m, PT_EV_DSB, PT_BAR_ISHST, 0, 0);	/* ISHST orders stores only */
	assert_int_equal(pt_machine_nfacts(m), 1);
	ev(m, PT_EV_DSB, PT_BAR_ISH, 0, 0);
	assert_int_equal(pt_machine_nfacts(m), 0);
	pt_machine_free(m);
}

static void test_tlbi_before_store_visible_does_not_remove(void **state)
{
	(void)state;
	/* store; TLBI; DSB ISH without the DSB ISHST in between: the walker may refill the old entry
	 * after the TLBI executed, so it stays stale */
	struct pt_machine *m = user_tree(1);
	ev(m, PT_EV_PT_WRITE, 0, 0x40003000, 0);
	ev(m, PT_EV_TLBI, PT_TLBI_VALE1IS, 0, 0x400000);
	ev(m, PT_EV_DSB, PT_BAR_ISH, 0, 0);
	assert_int_equal(pt_machine_nfacts(m), 1);
	pt_machine_free(m);
}

static void test_last_level_tlbi_keeps_walk_cache(void **state)
{
	(void)state;
	struct pt_machine *m = user_tree(1);
	ev(m, PT_EV_PT_WRITE, 0, 0x40002010, 0);	/* unhook the PTE table */
	ev(m, PT_EV_DSB, PT_BAR_ISHST, 0, 0);
	assert_int_equal(pt_machine_nstale_pos(m), 1);
	ev(m, PT_EV_TLBI, PT_TLBI_VALE1IS, 0, 0x400000);
	ev(m, PT_EV_DSB, PT_BAR_ISH, 0, 0);
	assert_int_equal(pt_machine_nstale_pos(m), 1);
	ev(m, PT_EV_TLBI, PT_TLBI_VAE1IS, 0, 0x400000);
	ev(m, PT_EV_DSB, PT_BAR_ISH, 0, 0);
	assert_int_equal(pt_machine_nstale_pos(m), 0);
	/* the leaf the walk entry led to was cleared by neither: it stays... no: the table still maps
	 * va 0x400000, and a TLB entry from a walk through the stale entry survives the VAE1IS of the
	 * same page only if outside its range; here it is inside, so nothing is left */
	assert_int_equal(pt_machine_nfacts(m), 0);
	pt_machine_free(m);
}

static void test_partial_walk_invalidation_keeps_other_leaves(void **state)
{
	(void)state;
	/* a stale walk entry removed by a one-page VAE1IS: leaves cached through it for other pages survive */
	struct pt_machine *m = user_tree(4);
	ev(m, PT_EV_PT_WRITE, 0, 0x40002010, 0);
	ev(m, PT_EV_DSB, PT_BAR_ISHST, 0, 0);
	ev(m, PT_EV_TLBI, PT_TLBI_VAE1IS, 0, 0x400000);
	ev(m, PT_EV_DSB, PT_BAR_ISH, 0, 0);
	assert_int_equal(pt_machine_nstale_pos(m), 0);
	assert_int_equal(pt_machine_nfacts(m), 3);
	pt_machine_free(m);
}

static void test_aside1is_spares_global_leaves(void **state)
{
	(void)state;
	struct pt_machine *m = user_tree(1);
	ev(m, PT_EV_PT_WRITE, 0, 0x40003008, UPG(0x50001000ull) & ~PT_DESC_NG);	/* a global user leaf */
	ev(m, PT_EV_DSB, PT_BAR_ISHST, 0, 0);
	unmap_all(m, 2);
	assert_int_equal(pt_machine_nfacts(m), 2);
	ev(m, PT_EV_TLBI, PT_TLBI_ASIDE1IS, 0, 0);
	ev(m, PT_EV_DSB, PT_BAR_ISH, 0, 0);
	assert_int_equal(pt_machine_nfacts(m), 1);
	assert_true(pt_machine_fact(m, 0)->global);
	pt_machine_free(m);
}

static void test_local_tlbi_clears_only_issuing_cpu(void **state)
{
	(void)state;
	struct pt_machine *m = user_tree(1);
	unmap_all(m, 1);
	ev(m, PT_EV_TLBI, PT_TLBI_VALE1, 0, 0x400000);	/* non-IS on cpu0 */
	ev(m, PT_EV_DSB, PT_BAR_NSH, 0, 0);
	assert_int_equal(pt_machine_nfacts(m), 1);
	assert_true(pt_machine_fact(m, 0)->cpumask == 0xe);
	pt_machine_free(m);
}

static void test_ttl_hint_of_wrong_level_invalidates_nothing(void **state)
{
	(void)state;
	struct pt_machine *m = user_tree(1);
	unmap_all(m, 1);
	struct pt_event e = { .kind = PT_EV_TLBI, .op = PT_TLBI_VALE1IS, .va = 0x400000, .asid = 1, .level = 2 };
	assert_int_equal(pt_machine_event(m, &e), 0);
	ev(m, PT_EV_DSB, PT_BAR_ISH, 0, 0);
	assert_int_equal(pt_machine_nfacts(m), 1);
	e.level = 3;
	assert_int_equal(pt_machine_event(m, &e), 0);
	ev(m, PT_EV_DSB, PT_BAR_ISH, 0, 0);
	assert_int_equal(pt_machine_nfacts(m), 0);
	pt_machine_free(m);
}

/* "The TTL field is only valid for the leaf entry" (tlb_get_level(), asm/tlb.h): a hinted TLBI
 * guarantees leaf entries at its level only; walk-cache entries above it survive any hint */
static void test_ttl_hint_keeps_walk_cache(void **state)
{
	(void)state;
	struct pt_machine *m = user_tree(1);
	ev(m, PT_EV_PT_WRITE, 0, 0x40002010, 0);	/* unhook the PTE table */
	ev(m, PT_EV_DSB, PT_BAR_ISHST, 0, 0);
	assert_int_equal(pt_machine_nstale_pos(m), 1);
	for (unsigned ttl = 1; ttl <= 3; ttl++) {
		struct pt_event e = { .kind = PT_EV_TLBI, .op = PT_TLBI_VAE1IS, .va = 0x400000, .asid = 1,
				      .level = (uint8_t)ttl };
		assert_int_equal(pt_machine_event(m, &e), 0);
		ev(m, PT_EV_DSB, PT_BAR_ISH, 0, 0);
		assert_int_equal(pt_machine_nstale_pos(m), 1);
	}
	struct pt_event e = { .kind = PT_EV_TLBI, .op = PT_TLBI_VAE1IS, .va = 0x400000, .asid = 1 };
	assert_int_equal(pt_machine_event(m, &e), 0);	/* no hint: all levels */
	ev(m, PT_EV_DSB, PT_BAR_ISH, 0, 0);
	assert_int_equal(pt_machine_nstale_pos(m), 0);
	pt_machine_free(m);
}

static void test_permission_increase_leaves_nothing_stale(void **state)
{
	(void)state;
	struct pt_machine *m = user_tree(1);
	ev(m, PT_EV_PT_WRITE, 0, 0x40003000, UPG(0x50000000ull) | PT_DESC_RDONLY);
	ev(m, PT_EV_DSB, PT_BAR_ISHST, 0, 0);
	assert_int_equal(pt_machine_nfacts(m), 1);	/* RW -> RO: the RW entry is stale */
	ev(m, PT_EV_TLBI, PT_TLBI_VALE1IS, 0, 0x400000);
	ev(m, PT_EV_DSB, PT_BAR_ISH, 0, 0);
	ev(m, PT_EV_PT_WRITE, 0, 0x40003000, UPG(0x50000000ull));
	ev(m, PT_EV_DSB, PT_BAR_ISHST, 0, 0);
	assert_int_equal(pt_machine_nfacts(m), 0);	/* RO -> RW: a stale RO entry only faults */
	pt_machine_free(m);
}

static int run_corpus(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "test_engine: cannot open %s\n", dir);
		return 2;
	}
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 5 || strcmp(de->d_name + l - 4, ".ptt"))
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		names[n] = malloc(strlen(dir) + l + 2);
		sprintf(names[n], "%s/%s", dir, de->d_name);
		n++;
	}
	closedir(d);
	for (size_t i = 0; i + 1 < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(names[i], names[j]) > 0) {
				char *t = names[i];
				names[i] = names[j];
				names[j] = t;
			}
	struct CMUnitTest *tests = calloc(n + 16, sizeof(*tests));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		tests[k].name = strrchr(names[i], '/') + 1;
		tests[k].test_func = test_corpus_file;
		tests[k].initial_state = names[i];
		k++;
	}
#define UNIT(f) tests[k++] = (struct CMUnitTest)cmocka_unit_test(f)
	UNIT(test_pgattr_change_is_safe_follows_mmu_c);
	UNIT(test_range_tlbi_covers_exactly_num_scale_pages);
	UNIT(test_facts_of_a_cleared_run_are_found_until_their_tlbi);
	UNIT(test_tlbi_completes_only_at_dsb_ish);
	UNIT(test_tlbi_before_store_visible_does_not_remove);
	UNIT(test_last_level_tlbi_keeps_walk_cache);
	UNIT(test_partial_walk_invalidation_keeps_other_leaves);
	UNIT(test_aside1is_spares_global_leaves);
	UNIT(test_local_tlbi_clears_only_issuing_cpu);
	UNIT(test_ttl_hint_of_wrong_level_invalidates_nothing);
	UNIT(test_ttl_hint_keeps_walk_cache);
	UNIT(test_permission_increase_leaves_nothing_stale);
	UNIT(test_lpa2_walks_five_levels_from_a_sub_page_root);
	UNIT(test_lpa2_range_tlbi_base_is_in_64k_units);
	int rc = _cmocka_run_group_tests("engine", tests, k, NULL, NULL);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(tests);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_engine CORPUS_DIR\n");
		return 2;
	}
	return run_corpus(argv[1]);
}
