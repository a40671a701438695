/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report.c - how one violation reads: a text report for people (what, the
 * rule, the descriptors, the stale entry, the trace around it) and a JSON
 * object for tools.  Both carry the same facts, in the same order.
 */
#include <inttypes.h>
#include <string.h>

#include "cli.h"

#define DESC_TEXT 128

static const char *desc_text(uint64_t d, char *buf)
{
	pt_desc_format(d, buf, DESC_TEXT);
	return buf;
}

static void stale_text(FILE *f, const struct pt_stale *st)
{
	char desc[DESC_TEXT];

	fprintf(f, "  stale: %s entry", st->walk ? "walk-cache" : "TLB");
	if (st->global)
		fputs(" (global)", f);
	else
		fprintf(f, " (asid %u)", (unsigned)st->asid);
	fprintf(f, ", level %u, va 0x%" PRIx64, st->level, st->va);
	if (st->size)
		fprintf(f, "-0x%" PRIx64, st->va + (st->size - 1));
	fprintf(f, " -> %s, stale since event %" PRIu64 "\n", desc_text(st->desc, desc), st->since);
}

static unsigned digits(uint64_t v)
{
	unsigned n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* The event text without its "cpuN " prefix (the column says which CPU). */
static const char *without_cpu(const char *line)
{
	const char *sp = strchr(line, ' ');

	return !strncmp(line, "cpu", 3) && sp ? sp + 1 : line;
}

/*
 * The events leading to v, one line each, the violating one marked >.  When
 * they come from several CPUs, each CPU gets a column, time downwards, the
 * way races are drawn in kernel commit messages.
 */
static void context_text(FILE *f, const struct vctx *ctx)
{
	int width[64] = { 0 }, ncols = 0;
	unsigned col[CTX_MAX];
	uint64_t cpus = 0;
	bool seen = false;

	if (!ctx || !ctx->n)
		return;
	for (unsigned i = 0; i < ctx->n; i++)
		cpus |= ctx->cpu[i] < 64 ? 1ull << ctx->cpu[i] : 0;
	for (unsigned i = 0; i < ctx->n; i++) {
		/* column = rank of the CPU among those present */
		col[i] = ctx->cpu[i] < 64 ? (unsigned)__builtin_popcountll(cpus & ((1ull << ctx->cpu[i]) - 1)) : 0;
		int n = (int)strlen(without_cpu(ctx->line[i]));
		if (n > width[col[i]])
			width[col[i]] = n;
	}
	ncols = __builtin_popcountll(cpus);

	int w = (int)digits(ctx->index[ctx->n - 1]);
	fprintf(f, "  %s:\n", ctx->title ? ctx->title : "trace");
	if (ncols > 1) {
		fprintf(f, "%*s", w + 6, "");
		for (int c = 0; cpus; c++, cpus &= cpus - 1) {
			int cpu = __builtin_ctzll(cpus);
			if (c + 1 < ncols)
				fprintf(f, "cpu%-*d", width[c] + 3 - 3, cpu);
			else
				fprintf(f, "cpu%d\n", cpu);
		}
	}
	for (unsigned i = 0; i < ctx->n; i++) {
		bool here = ctx->index[i] == ctx->mark;
		seen |= here;
		fprintf(f, "  %s %*" PRIu64 "  ", here ? ">" : " ", w, ctx->index[i]);
		if (ncols <= 1) {
			fprintf(f, "%s\n", ctx->line[i]);
			continue;
		}
		for (unsigned c = 0; c < col[i]; c++)
			fprintf(f, "%*s", width[c] + 3, "");
		fprintf(f, "%s\n", without_cpu(ctx->line[i]));
	}
	/* end-of-trace checks point past the last event */
	if (!seen)
		fprintf(f, "  > %*s  (end of trace)\n", w, "");
}

void report_text(FILE *f, const struct pt_violation *v, const struct vctx *ctx, const struct vctx *actx)
{
	char d1[DESC_TEXT], d2[DESC_TEXT];

	fprintf(f, "I%u %s at event %" PRIu64 " (cpu%u): %s\n", v->id, pt_inv_kind(v->id), v->event, v->cpu,
		v->what);
	if (v->rule)
		fprintf(f, "  rule: %s\n", v->rule);
	fprintf(f, "  signature: %s\n", v->signature);
	if (v->va || v->pa)
		fprintf(f, "  va 0x%" PRIx64 ", pa 0x%" PRIx64 "\n", v->va, v->pa);
	if (v->old_desc || v->new_desc)
		fprintf(f, "  old: %s\n  new: %s\n", desc_text(v->old_desc, d1), desc_text(v->new_desc, d2));
	if (v->stale.present)
		stale_text(f, &v->stale);
	context_text(f, ctx);
	context_text(f, actx);
}

static void stale_json(struct json *j, const struct pt_stale *st)
{
	char desc[DESC_TEXT];

	if (!st->present) {
		json_null(j);
		return;
	}
	json_object_begin(j);
	json_key(j, "cache");
	json_string(j, st->walk ? "walk" : "tlb");
	json_key(j, "global");
	json_bool(j, st->global);
	json_key(j, "asid");
	json_u64(j, st->asid);
	json_key(j, "level");
	json_u64(j, st->level);
	json_key(j, "va");
	json_hex(j, st->va);
	json_key(j, "size");
	json_hex(j, st->size);
	json_key(j, "desc");
	json_string(j, desc_text(st->desc, desc));
	json_key(j, "since");
	json_u64(j, st->since);
	json_object_end(j);
}

/* The events around a violation as JSON: [{"index", "cpu", "event"}...], the violating one last
 * unless the check ran at the end of the trace. */
static void context_json(struct json *j, const struct vctx *ctx)
{
	json_array_begin(j);
	for (unsigned i = 0; ctx && i < ctx->n; i++) {
		json_object_begin(j);
		json_key(j, "index");
		json_u64(j, ctx->index[i]);
		json_key(j, "cpu");
		json_u64(j, ctx->cpu[i]);
		json_key(j, "event");
		json_string(j, ctx->line[i]);
		json_key(j, "violating");
		json_bool(j, ctx->index[i] == ctx->mark);
		json_object_end(j);
	}
	json_array_end(j);
}

void report_json(struct json *j, const struct pt_violation *v, const struct vctx *ctx, const struct vctx *actx)
{
	char buf[DESC_TEXT];

	json_object_begin(j);
	snprintf(buf, sizeof(buf), "I%u", v->id);
	json_key(j, "id");
	json_string(j, buf);
	json_key(j, "kind");
	json_string(j, pt_inv_kind(v->id));
	json_key(j, "signature");
	json_string(j, v->signature);
	json_key(j, "event");
	json_u64(j, v->event);
	json_key(j, "cpu");
	json_u64(j, v->cpu);
	json_key(j, "va");
	json_hex(j, v->va);
	json_key(j, "pa");
	json_hex(j, v->pa);
	json_key(j, "old");
	json_string(j, desc_text(v->old_desc, buf));
	json_key(j, "new");
	json_string(j, desc_text(v->new_desc, buf));
	json_key(j, "what");
	json_string(j, v->what);
	json_key(j, "rule");
	json_string(j, v->rule);
	json_key(j, "stale");
	stale_json(j, &v->stale);
	json_key(j, "arch_event");
	json_u64(j, v->arch_event);
	json_key(j, "repeats");
	json_u64(j, v->repeats);
	json_key(j, "trace");
	context_json(j, ctx);
	/* the arch-level interleaving (with the mm model's events), one entry per event, each with
	 * its CPU: what the text report draws in columns */
	json_key(j, "interleaving");
	context_json(j, actx && actx->n ? actx : NULL);
	json_object_end(j);
}
