/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_compare.c - `ptfuzz compare --variant A --variant B TRACE...`: what the
 * mm model's routines cost under two variants, per ops-level kind, with the
 * deltas: what a seed patch saves against its pre-patch baseline.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mm.h"

void help_compare(FILE *f)
{
	fputs("usage: ptfuzz compare [--json] --variant A [--variant B] TRACE...\n"
	      "\n"
	      "Replay ops-level traces under two variants of the mm model (B defaults to\n"
	      "the patched default when one --variant is given: then A is compared with\n"
	      "the default) and print, per op kind, what the model's routines cost under\n"
	      "each: ops, page-table writes, TLBIs (in all and by operation), DSBs, DMBs,\n"
	      "ISBs, tables allocated and freed, and the delta B - A.  `ptfuzz variants`\n"
	      "lists the variants; the baselines are the pre-patch logic of the seeds.\n"
	      "\n"
	      "options:\n"
	      "  --variant NAME  a variant to compare (once or twice)\n"
	      "  --json        one JSON document: {\"a\", \"b\", \"traces\", \"ops\": {KIND:\n"
	      "                {METRIC: {\"a\", \"b\", \"delta\"}}}, \"violations\": {\"a\", \"b\"}}\n"
	      "  -h, --help    this help\n"
	      "\n"
	      "exit status: 0, 2 on bad input or usage.  Violations found under either\n"
	      "variant are counted in the output, not reported (see ptfuzz replay).\n",
	      f);
}

struct side {
	const char *name;
	struct pt_counters k;
	uint64_t violations;
};

static void add_costs(struct pt_counters *sum, const struct pt_counters *c)
{
	for (unsigned k = 0; k < PT_EV_KIND_COUNT; k++)
		pt_op_costs_add(&sum->per_op[k], &c->per_op[k]);
}

/* The metrics compared, in order. */
#define NBASE 10
#define NMETRIC (NBASE + PT_TLBI_COUNT)
static const char *metric_name(unsigned i)
{
	static const char *const base[NBASE] = { "ops", "pt_writes", "cont_writes", "tlbi", "dsb", "dmb", "isb",
						  "tables_alloc", "tables_freed", "pages_alloc" };
	static char names[PT_TLBI_COUNT][24];
	if (i < NBASE)
		return base[i];
	snprintf(names[i - NBASE], sizeof(names[i - NBASE]), "  tlbi %s", pt_op_name(PT_EV_TLBI, i - NBASE));
	return names[i - NBASE];
}

static uint64_t metric(const struct pt_op_costs *o, unsigned i)
{
	uint64_t tlbi = 0;
	for (unsigned op = 0; op < PT_TLBI_COUNT; op++)
		tlbi += o->tlbi_by_op[op];
	switch (i) {
	case 0: return o->ops;
	case 1: return o->pt_writes;
	case 2: return o->cont_writes;
	case 3: return tlbi;
	case 4: return o->dsb;
	case 5: return o->dmb;
	case 6: return o->isb;
	case 7: return o->tables_alloc;
	case 8: return o->tables_freed;
	case 9: return o->pages_alloc;
	default: return o->tlbi_by_op[i - NBASE];
	}
}

static int run_side(struct side *sd, char **files, int n)
{
	const char *variants[2] = { sd->name, NULL };
	int status = EXIT_CLEAN;
	for (int i = 0; i < n; i++) {
		struct replay_run run = { .path = files[i], .variants = strcmp(sd->name, "default") ? variants : NULL };
		replay_file(&run);
		if (run.failed) {
			fprintf(stderr, "%s\n", run.err.msg);
			status = EXIT_BAD;
		}
		if (run.s) {
			add_costs(&sd->k, pt_session_counters(run.s));
			sd->violations += pt_session_nviolations(run.s);
		}
		replay_run_free(&run);
	}
	return status;
}

/* One op kind's metrics under A and B as {METRIC: {"a", "b", "delta"}}. */
static void json_kind(struct json *j, const struct pt_op_costs *oa, const struct pt_op_costs *ob)
{
	json_object_begin(j);
	for (unsigned m = 0; m < NMETRIC; m++) {
		uint64_t va = metric(oa, m), vb = metric(ob, m);
		if (m >= NBASE && !va && !vb)
			continue;
		json_key(j, m >= NBASE ? metric_name(m) + 2 : metric_name(m));
		json_object_begin(j);
		json_key(j, "a");
		json_u64(j, va);
		json_key(j, "b");
		json_u64(j, vb);
		json_key(j, "delta");
		json_i64(j, (int64_t)(vb - va));
		json_object_end(j);
	}
	json_object_end(j);
}

static void print_json(const struct side *a, const struct side *b, int ntraces)
{
	struct json j;

	json_init(&j, stdout);
	json_object_begin(&j);
	json_key(&j, "a");
	json_string(&j, a->name);
	json_key(&j, "b");
	json_string(&j, b->name);
	json_key(&j, "traces");
	json_u64(&j, (uint64_t)ntraces);
	json_key(&j, "ops");
	json_object_begin(&j);
	for (unsigned k = 0; k < PT_EV_KIND_COUNT; k++) {
		const struct pt_op_costs *oa = &a->k.per_op[k], *ob = &b->k.per_op[k];
		if (!oa->ops && !ob->ops)
			continue;
		json_key(&j, pt_kind_name(k));
		json_kind(&j, oa, ob);
	}
	json_object_end(&j);
	json_key(&j, "violations");
	json_object_begin(&j);
	json_key(&j, "a");
	json_u64(&j, a->violations);
	json_key(&j, "b");
	json_u64(&j, b->violations);
	json_object_end(&j);
	json_object_end(&j);
	json_end(&j);
}

/* One op kind's rows of the table: a metric a line, the kind named on the first. */
static void print_kind(unsigned k, const struct pt_op_costs *oa, const struct pt_op_costs *ob)
{
	for (unsigned m = 0; m < NMETRIC; m++) {
		uint64_t va = metric(oa, m), vb = metric(ob, m);
		if (m >= NBASE && !va && !vb)
			continue;
		char ratio[16] = "-";
		if (va)
			snprintf(ratio, sizeof(ratio), "%.2f", (double)vb / (double)va);
		printf("  %-10s %-18s %12" PRIu64 " %12" PRIu64 " %+12" PRId64 " %8s\n",
		       m == 0 ? pt_kind_name(k) : "", metric_name(m), va, vb, (int64_t)(vb - va), ratio);
	}
}

static void print_table(const struct side *a, const struct side *b, int ntraces)
{
	printf("compare: A = %s, B = %s, %d trace%s\n", a->name, b->name, ntraces, ntraces == 1 ? "" : "s");
	printf("  %-10s %-18s %12s %12s %12s %8s\n", "op", "metric", "A", "B", "B - A", "B / A");
	for (unsigned k = 0; k < PT_EV_KIND_COUNT; k++) {
		const struct pt_op_costs *oa = &a->k.per_op[k], *ob = &b->k.per_op[k];
		if (oa->ops || ob->ops)
			print_kind(k, oa, ob);
	}
	printf("  violations: A %" PRIu64 ", B %" PRIu64 "\n", a->violations, b->violations);
}

int cmd_compare(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "variant", required_argument, NULL, 'v' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *names[MAX_VARIANTS + 1] = { NULL };
	unsigned n = 0;
	bool as_json = false;
	int c;

	while ((c = cli_getopt("compare", argc, argv, "h", longopts)) != -1) {
		switch (c) {
		case 'v':
			if (cli_variant_arg("compare", names, &n, optarg))
				return EXIT_BAD;
			break;
		case 'j': as_json = true; break;
		case 'h': help_compare(stdout); return EXIT_CLEAN;
		default: return EXIT_BAD;
		}
	}
	if (n == 0 || n > 2)
		return cli_usage_error("compare", "give one or two --variant options");
	if (optind == argc)
		return cli_usage_error("compare", "no trace file given");

	static struct side a, b;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.name = names[0];
	b.name = n == 2 ? names[1] : "default";
	int status = run_side(&a, argv + optind, argc - optind);
	status = exit_merge(status, run_side(&b, argv + optind, argc - optind));

	if (as_json)
		print_json(&a, &b, argc - optind);
	else
		print_table(&a, &b, argc - optind);
	cli_check_stdout();
	return status;
}
