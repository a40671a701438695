/* SPDX-License-Identifier: GPL-2.0-only */
/* event.c - the event schema: names, keys, field access, descriptor text. */
#include "event.h"

#include <stdio.h>
#include <string.h>

void pt_header_default(struct pt_header *h)
{
	memset(h, 0, sizeof(*h));
	h->version = PT_FORMAT_VERSION;
	h->granule = 4096;
	h->va_bits = 48;
	h->cpus = 4;
	strcpy(h->method, "hand");
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *const bar_ops[] = { "sy", "ish", "ishst", "nsh", "ishld" };
static const char *const tlbi_ops[] = {
	"vae1is", "vale1is", "vaae1is", "vaale1is", "aside1is", "vmalle1is",
	"rvae1is", "rvale1is", "rvaae1is", "rvaale1is",
	"vae1", "vale1", "vaae1", "vaale1", "aside1", "vmalle1",
	"rvae1", "rvale1", "rvaae1", "rvaale1",
};
static const char *const frame_ops[] = { "data", "table" };
static const char *const lock_ops[] = { "mmap", "ptl", "pmd", "pud", "rmap", "other" };
static const char *const opkind_ops[] = {
	"other", "mmap", "munmap", "mremap", "mprotect", "madvise", "fault", "vmalloc",
	"vmap", "vunmap", "vfree", "pageout", "map_mem", "hugetlb",
};
static const char *const advice_ops[] = { "dontneed", "free", "pageout", "cold", "hugepage",
					   "nohugepage" };
static const char *const huge_ops[] = { "set", "clear", "wrprotect", "access_flags" };
/* kernel: what a captured kernel did (enum pt_kernel_ev) */
static const char *const kernel_ops[] = { "result", "move_page_tables", "move_page_tables_ret", "move_huge_pmd",
					  "move_huge_pud", "split_huge_pmd", "change_huge_pmd", "zap_huge_pmd",
					  "huge_pmd_fault", "free_pgtables", "tlb_finish_mmu", "pte_alloc",
					  "pmd_alloc", "vmalloc", "vmalloc_ret", "vmap", "vmap_ret", "vunmap",
					  "vfree" };
/* vmap_area: free_vmap_area_noflush() / __purge_vmap_area_lazy() (enum pt_vmap_area_ev) */
static const char *const vmap_area_ops[] = { "lazy", "purge" };
/* sched: which scheduling points `steps` counts */
static const char *const sched_ops[] = { "any", "read", "pt_write", "tlbi", "dsb", "dmb", "isb", "lock",
					 "unlock", "page_alloc", "page_free", "access" };

#define K(n, f, r) { n, PT_F_##f, PT_KEY_##r }
#define END { NULL, 0, 0 }

static const struct pt_key k_none[] = { END };
static const struct pt_key k_pt_write[] = { K("pa", PA, REQ), K("val", VAL, REQ), END };
static const struct pt_key k_pa[] = { K("pa", PA, REQ), END };
static const struct pt_key k_tlbi[] = { K("va", VA, OPT), K("asid", ASID, OPT), K("ttl", LEVEL, OPT),
					K("num", NUM, OPT), K("scale", SCALE, OPT), END };
static const struct pt_key k_ttbr0[] = { K("pa", PA, REQ), K("asid", ASID, OPT), END };
static const struct pt_key k_access[] = { K("va", VA, REQ), K("asid", ASID, OPT), K("flags", FLAGS, OPT),
					  END };
static const struct pt_key k_alloc[] = { K("pa", PA, REQ), K("order", ORDER, OPT), K("node", NODE, OPT),
					 K("level", LEVEL, OPT), K("flags", FLAGS, OPT), END };
static const struct pt_key k_free[] = { K("pa", PA, REQ), K("order", ORDER, OPT), END };
static const struct pt_key k_lock[] = { K("key", PA, REQ), K("flags", FLAGS, OPT), END };
static const struct pt_key k_unlock[] = { K("key", PA, REQ), END };
static const struct pt_key k_switch[] = { K("tid", TID, REQ), K("flags", FLAGS, OPT), END };
static const struct pt_key k_migrate[] = { K("tid", TID, REQ), K("to", LEN, REQ), END };
static const struct pt_key k_begin[] = { K("va", VA, OPT), K("len", LEN, OPT), K("asid", ASID, OPT),
					 K("bound", LEN2, OPT), END };
static const struct pt_key k_end[] = { K("err", LEN, OPT), END };
static const struct pt_key k_asid[] = { K("asid", ASID, REQ), END };
static const struct pt_key k_lock_rule[] = { K("root", PA, REQ), K("key", VA, REQ), END };
static const struct pt_key k_mmap[] = { K("va", VA, REQ), K("len", LEN, REQ), K("prot", PROT, OPT),
					K("asid", ASID, OPT), K("flags", FLAGS, OPT), K("order", ORDER, OPT),
					END };
static const struct pt_key k_range[] = { K("va", VA, REQ), K("len", LEN, REQ), K("asid", ASID, OPT), END };
static const struct pt_key k_mremap[] = { K("va", VA, REQ), K("len", LEN, REQ), K("new_va", VA2, OPT),
					  K("new_len", LEN2, OPT), K("asid", ASID, OPT),
					  K("flags", FLAGS, OPT), END };
static const struct pt_key k_mprotect[] = { K("va", VA, REQ), K("len", LEN, REQ), K("prot", PROT, OPT),
					    K("asid", ASID, OPT), K("flags", FLAGS, OPT), END };
static const struct pt_key k_touch[] = { K("va", VA, REQ), K("len", LEN, OPT), K("asid", ASID, OPT),
					 K("flags", FLAGS, OPT), K("order", ORDER, OPT), END };
static const struct pt_key k_vmalloc[] = { K("va", VA, REQ), K("len", LEN, REQ), K("flags", FLAGS, OPT),
					   K("node", NODE, OPT), END };
static const struct pt_key k_vmap[] = { K("va", VA, REQ), K("len", LEN, REQ), K("pa", PA, REQ),
					K("prot", PROT, OPT), K("flags", FLAGS, OPT), END };
static const struct pt_key k_vunmap[] = { K("va", VA, REQ), K("len", LEN, REQ), END };
static const struct pt_key k_vfree[] = { K("va", VA, REQ), END };
static const struct pt_key k_pageout[] = { K("va", VA, REQ), K("asid", ASID, OPT), END };
static const struct pt_key k_map_mem[] = { K("pa", PA, REQ), K("len", LEN, REQ), K("va", VA, OPT),
					   K("flags", FLAGS, OPT), END };
static const struct pt_key k_thread[] = { K("tid", TID, REQ), K("asid", ASID, OPT), END };
static const struct pt_key k_sched[] = { K("tid", TID, REQ), K("steps", LEN, OPT), END };
static const struct pt_key k_irq[] = { K("va", VA, OPT), K("len", LEN, OPT), K("pa", PA, OPT), END };
static const struct pt_key k_hugetlb[] = { K("va", VA, REQ), K("len", LEN, REQ), K("pa", PA, OPT),
					   K("prot", PROT, OPT), K("asid", ASID, OPT), END };

static const struct pt_key k_kernel[] = { K("va", VA, OPT), K("new_va", VA2, OPT), K("len", LEN, OPT),
					  K("ret", PA, OPT), K("asid", ASID, OPT), END };

#define S_OPS(name, ops, keys, ol) { name, ops, N(ops), keys, ol }

static const struct pt_kind_schema schemas[PT_EV_KIND_COUNT] = {
	[PT_EV_PT_WRITE] = { "pt_write", NULL, 0, k_pt_write, false },
	[PT_EV_PT_ZERO] = { "pt_zero", NULL, 0, k_pa, false },
	[PT_EV_DSB] = S_OPS("dsb", bar_ops, k_none, false),
	[PT_EV_DMB] = S_OPS("dmb", bar_ops, k_none, false),
	[PT_EV_ISB] = { "isb", NULL, 0, k_none, false },
	[PT_EV_TLBI] = S_OPS("tlbi", tlbi_ops, k_tlbi, false),
	[PT_EV_TTBR0] = { "ttbr0", NULL, 0, k_ttbr0, false },
	[PT_EV_TTBR1] = { "ttbr1", NULL, 0, k_pa, false },
	[PT_EV_ACCESS] = { "access", NULL, 0, k_access, false },
	[PT_EV_PAGE_ALLOC] = S_OPS("page_alloc", frame_ops, k_alloc, false),
	[PT_EV_PAGE_FREE] = { "page_free", NULL, 0, k_free, false },
	[PT_EV_LOCK] = S_OPS("lock", lock_ops, k_lock, false),
	[PT_EV_UNLOCK] = S_OPS("unlock", lock_ops, k_unlock, false),
	[PT_EV_IRQ_ENTER] = { "irq_enter", NULL, 0, k_none, false },
	[PT_EV_IRQ_EXIT] = { "irq_exit", NULL, 0, k_none, false },
	[PT_EV_SWITCH] = { "switch", NULL, 0, k_switch, false },
	[PT_EV_MIGRATE] = { "migrate", NULL, 0, k_migrate, false },
	[PT_EV_BEGIN] = S_OPS("begin", opkind_ops, k_begin, false),
	[PT_EV_END] = { "end", NULL, 0, k_end, false },
	[PT_EV_MM_EXIT] = { "mm_exit", NULL, 0, k_asid, false },
	[PT_EV_LOCK_RULE] = S_OPS("lock_rule", lock_ops, k_lock_rule, false),
	[PT_EV_COMMENT] = { "#", NULL, 0, k_none, false },
	[PT_EV_VMAP_AREA] = S_OPS("vmap_area", vmap_area_ops, k_vunmap, false),
	[PT_EV_MMAP] = { "mmap", NULL, 0, k_mmap, true },
	[PT_EV_MUNMAP] = { "munmap", NULL, 0, k_range, true },
	[PT_EV_MREMAP] = { "mremap", NULL, 0, k_mremap, true },
	[PT_EV_MPROTECT] = { "mprotect", NULL, 0, k_mprotect, true },
	[PT_EV_MADVISE] = S_OPS("madvise", advice_ops, k_range, true),
	[PT_EV_TOUCH] = { "touch", NULL, 0, k_touch, true },
	[PT_EV_VMALLOC] = { "vmalloc", NULL, 0, k_vmalloc, true },
	[PT_EV_VMAP] = { "vmap", NULL, 0, k_vmap, true },
	[PT_EV_VUNMAP] = { "vunmap", NULL, 0, k_vunmap, true },
	[PT_EV_VFREE] = { "vfree", NULL, 0, k_vfree, true },
	[PT_EV_PAGEOUT] = { "pageout", NULL, 0, k_pageout, true },
	[PT_EV_MAP_MEM] = { "map_mem", NULL, 0, k_map_mem, true },
	[PT_EV_THREAD] = { "thread", NULL, 0, k_thread, true },
	[PT_EV_SCHED] = S_OPS("sched", sched_ops, k_sched, true),
	[PT_EV_IRQ] = S_OPS("irq", opkind_ops, k_irq, true),
	[PT_EV_HUGETLB] = S_OPS("hugetlb", huge_ops, k_hugetlb, true),
	[PT_EV_KERNEL] = S_OPS("kernel", kernel_ops, k_kernel, true),
};

const struct pt_kind_schema *pt_kind_schema(unsigned kind)
{
	if (kind >= PT_EV_KIND_COUNT || !schemas[kind].name)
		return NULL;
	return &schemas[kind];
}

unsigned pt_kind_by_name(const char *name, size_t len)
{
	for (unsigned k = 1; k < PT_EV_KIND_COUNT; k++) {
		const char *n = schemas[k].name;
		if (n && k != PT_EV_COMMENT && strlen(n) == len && !memcmp(n, name, len))
			return k;
	}
	return PT_EV_NONE;
}

const char *pt_kind_name(unsigned kind)
{
	const struct pt_kind_schema *s = pt_kind_schema(kind);
	return s ? s->name : "?";
}

const char *pt_op_name(unsigned kind, unsigned op)
{
	const struct pt_kind_schema *s = pt_kind_schema(kind);
	if (!s || !s->ops)
		return "";
	return op < s->nops ? s->ops[op] : "?";
}

uint64_t pt_event_get(const struct pt_event *ev, enum pt_field f)
{
	switch (f) {
	case PT_F_VA: return ev->va;
	case PT_F_PA: return ev->pa;
	case PT_F_VAL: return ev->val;
	case PT_F_LEN: return ev->len;
	case PT_F_VA2: return ev->va2;
	case PT_F_LEN2: return ev->len2;
	case PT_F_ASID: return ev->asid;
	case PT_F_LEVEL: return ev->level;
	case PT_F_NUM: return ev->num;
	case PT_F_SCALE: return ev->scale;
	case PT_F_ORDER: return ev->order;
	case PT_F_NODE: return ev->node;
	case PT_F_TID: return ev->tid;
	case PT_F_PROT: return ev->prot;
	case PT_F_FLAGS: return ev->flags;
	case PT_F_COUNT: break;
	}
	return 0;
}

void pt_event_set(struct pt_event *ev, enum pt_field f, uint64_t v)
{
	switch (f) {
	case PT_F_VA: ev->va = v; break;
	case PT_F_PA: ev->pa = v; break;
	case PT_F_VAL: ev->val = v; break;
	case PT_F_LEN: ev->len = v; break;
	case PT_F_VA2: ev->va2 = v; break;
	case PT_F_LEN2: ev->len2 = v; break;
	case PT_F_ASID: ev->asid = (uint16_t)v; break;
	case PT_F_LEVEL: ev->level = (uint8_t)v; break;
	case PT_F_NUM: ev->num = (uint8_t)v; break;
	case PT_F_SCALE: ev->scale = (uint8_t)v; break;
	case PT_F_ORDER: ev->order = (uint8_t)v; break;
	case PT_F_NODE: ev->node = (uint8_t)v; break;
	case PT_F_TID: ev->tid = (uint32_t)v; break;
	case PT_F_PROT: ev->prot = (uint8_t)v; break;
	case PT_F_FLAGS: ev->flags = (uint32_t)v; break;
	case PT_F_COUNT: break;
	}
}

uint64_t pt_field_max(enum pt_field f)
{
	switch (f) {
	case PT_F_ASID: return 0xffff;
	case PT_F_LEVEL: return 3;
	case PT_F_NUM: return 31;
	case PT_F_SCALE: return 3;
	case PT_F_ORDER: return 18;	/* 1 GiB of 4K pages */
	case PT_F_NODE: return 63;
	case PT_F_PROT: return 7;
	case PT_F_TID: return 0xffffffffu;
	case PT_F_FLAGS: return 0xffffffffu;
	default: return UINT64_MAX;
	}
}

bool pt_event_valid(const struct pt_event *ev, unsigned cpus)
{
	const struct pt_kind_schema *s = pt_kind_schema(ev->kind);
	if (!s || ev->cpu >= cpus)
		return false;
	if (s->ops ? ev->op >= s->nops : ev->op != 0)
		return false;
	/* a field the kind does not use must be zero */
	bool used[PT_F_COUNT] = { false };
	for (const struct pt_key *k = s->keys; k->name; k++)
		used[k->field] = true;
	for (int f = 0; f < PT_F_COUNT; f++) {
		uint64_t v = pt_event_get(ev, f);
		if (!used[f] && v)
			return false;
		if (v > pt_field_max(f))
			return false;
	}
	return true;
}

/* ---- descriptors ---- */

static const struct { const char *name; uint64_t bit; } desc_flags[] = {
	{ "user", PT_DESC_USER }, { "ro", PT_DESC_RDONLY }, { "af", PT_DESC_AF },
	{ "ng", PT_DESC_NG }, { "dbm", PT_DESC_DBM }, { "cont", PT_DESC_CONT },
	{ "pxn", PT_DESC_PXN }, { "uxn", PT_DESC_UXN }, { "dirty", PT_DESC_DIRTY },
	{ "special", PT_DESC_SPECIAL }, { "protnone", PT_DESC_PROTNONE },
};

size_t pt_desc_format(uint64_t d, char *buf, size_t size)
{
	size_t n;
	uint64_t rest;

	if (!(d & PT_DESC_VALID)) {
		n = (size_t)snprintf(buf, size, "inv");
		rest = d;
	} else {
		const char *t = !(d & PT_DESC_TABLE) ? "blk" : (d & 0xffcull) ? "pg" : "tbl";
		n = (size_t)snprintf(buf, size, "%s@0x%llx", t, (unsigned long long)(d & PT_DESC_OA_MASK));
		rest = d & ~(PT_DESC_OA_MASK | PT_DESC_VALID | PT_DESC_TABLE);
		uint64_t attr = (rest & PT_DESC_ATTR_MASK) >> PT_DESC_ATTR_SHIFT;
		uint64_t sh = (rest & PT_DESC_SH_MASK) >> PT_DESC_SH_SHIFT;
		if (attr && n < size)
			n += (size_t)snprintf(buf + n, size - n, ",attr=%llu", (unsigned long long)attr);
		if (sh && n < size)
			n += (size_t)snprintf(buf + n, size - n, ",sh=%llu", (unsigned long long)sh);
		rest &= ~(PT_DESC_ATTR_MASK | PT_DESC_SH_MASK);
	}
	for (size_t i = 0; i < N(desc_flags); i++) {
		if ((rest & desc_flags[i].bit) && n < size) {
			n += (size_t)snprintf(buf + n, size - n, ",%s", desc_flags[i].name);
			rest &= ~desc_flags[i].bit;
		}
	}
	if (rest && n < size)
		n += (size_t)snprintf(buf + n, size - n, ",x=0x%llx", (unsigned long long)rest);
	if (n >= size && size)
		n = size - 1;
	return n;
}

int pt_parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0, mul = 1;
	size_t i = 0;
	int base = 10;

	if (len && (s[len - 1] == 'K' || s[len - 1] == 'M' || s[len - 1] == 'G' || s[len - 1] == 'T')) {
		int sh = s[len - 1] == 'K' ? 10 : s[len - 1] == 'M' ? 20 : s[len - 1] == 'G' ? 30 : 40;
		mul = 1ull << sh;
		len--;
	}
	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i >= len)
		return -1;
	for (; i < len; i++) {
		unsigned d;
		char c = s[i];
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -1;
		if (v > (UINT64_MAX - d) / (uint64_t)base)
			return -2;
		v = v * (uint64_t)base + d;
	}
	if (mul > 1 && v > UINT64_MAX / mul)
		return -2;
	*out = v * mul;
	return 0;
}

static bool tok_is(const char *s, size_t len, const char *word)
{
	return strlen(word) == len && !memcmp(s, word, len);
}

int pt_desc_parse(const char *s, size_t len, uint64_t *out)
{
	uint64_t d = 0, v;
	size_t i = 0, j;

	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return pt_parse_u64(s, len, out) ? -1 : 0;
	/* head: inv | tbl@PA | pg@PA | blk@PA */
	for (j = 0; j < len && s[j] != ',' && s[j] != '@'; j++)
		;
	if (tok_is(s, j, "inv")) {
		if (j < len && s[j] == '@')
			return -1;
	} else if (tok_is(s, j, "tbl") || tok_is(s, j, "pg") || tok_is(s, j, "blk")) {
		d = PT_DESC_VALID | (s[0] == 'b' ? 0 : PT_DESC_TABLE);
		if (j >= len || s[j] != '@')
			return -1;
		size_t k = ++j;
		while (j < len && s[j] != ',')
			j++;
		if (pt_parse_u64(s + k, j - k, &v) || (v & ~PT_DESC_OA_MASK))
			return -1;
		d |= v;
	} else {
		return -1;
	}
	i = j;
	while (i < len) {
		if (s[i] != ',')
			return -1;
		size_t k = ++i;
		while (i < len && s[i] != ',')
			i++;
		const char *f = s + k;
		size_t fl = i - k;
		bool found = false;
		for (size_t n = 0; n < N(desc_flags); n++) {
			if (tok_is(f, fl, desc_flags[n].name)) {
				d |= desc_flags[n].bit;
				found = true;
			}
		}
		if (found)
			continue;
		if (fl > 5 && !memcmp(f, "attr=", 5)) {
			if (pt_parse_u64(f + 5, fl - 5, &v) || v > 7)
				return -1;
			d |= v << PT_DESC_ATTR_SHIFT;
		} else if (fl > 3 && !memcmp(f, "sh=", 3)) {
			if (pt_parse_u64(f + 3, fl - 3, &v) || v > 3)
				return -1;
			d |= v << PT_DESC_SH_SHIFT;
		} else if (fl > 2 && !memcmp(f, "x=", 2)) {
			if (pt_parse_u64(f + 2, fl - 2, &v))
				return -1;
			d |= v;
		} else {
			return -1;
		}
	}
	*out = d;
	return 0;
}

bool pt_event_eq(const struct pt_event *a, const struct pt_event *b)
{
	return a->kind == b->kind && a->op == b->op && a->cpu == b->cpu && a->asid == b->asid &&
	       a->level == b->level && a->order == b->order && a->num == b->num &&
	       a->scale == b->scale && a->node == b->node && a->prot == b->prot && a->tid == b->tid &&
	       a->flags == b->flags && a->va == b->va && a->pa == b->pa && a->val == b->val &&
	       a->len == b->len && a->va2 == b->va2 && a->len2 == b->len2 &&
	       !strcmp(a->text ? a->text : "", b->text ? b->text : "");
}

bool pt_header_eq(const struct pt_header *a, const struct pt_header *b)
{
	return a->version == b->version && a->granule == b->granule && a->va_bits == b->va_bits && a->lpa2 == b->lpa2 &&
	       a->cpus == b->cpus && !strcmp(a->kernel, b->kernel) && !strcmp(a->machine, b->machine) &&
	       !strcmp(a->method, b->method);
}
