/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_stats.c - `ptfuzz stats`: what a trace costs, as the session counts
 * it: events by kind, TLBIs by op, barriers, page-table writes, table and
 * page allocations.
 */
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

void help_stats(FILE *f)
{
	fputs("usage: ptfuzz stats [--json] [-q] [--kernel PROFILE] [--variant NAME]... FILE...\n"
	      "\n"
	      "Replay traces (- reads standard input) and print what they cost: events\n"
	      "by kind, TLBIs by operation, DSBs by domain, DMBs, ISBs, page-table\n"
	      "writes, tables and pages allocated and freed; for ops-level events, the\n"
	      "mm model's costs per op kind.  With several files, a total follows.\n"
	      "\n"
	      "options:\n"
	      "  --json        one JSON document: {\"files\": [{\"file\", \"events\", \"state\",\n"
	      "                \"error\", \"violations\", \"counters\": {...}}], \"total\": {...}};\n"
	      "                the counters list every kind, TLBI op and DSB domain,\n"
	      "                zero or not\n"
	      "  --kernel PROFILE  the mm model as of that kernel (6.1, default, or auto:\n"
	      "                from the header's kernel release; see ptfuzz replay --help)\n"
	      "  --variant NAME  run the mm model as a variant (ptfuzz variants)\n"
	      "  -q, --quiet   no progress on standard error (shown when it is a terminal)\n"
	      "  -h, --help    this help\n"
	      "\n"
	      "exit status: 0 no violation, 1 violations found (see ptfuzz replay),\n"
	      "2 bad input or usage (2 wins over 1).\n",
	      f);
}

static void counters_add(struct pt_counters *sum, const struct pt_counters *c)
{
	sum->events += c->events;
	for (unsigned k = 0; k < PT_EV_KIND_COUNT; k++)
		sum->by_kind[k] += c->by_kind[k];
	for (unsigned op = 0; op < PT_TLBI_COUNT; op++)
		sum->tlbi_by_op[op] += c->tlbi_by_op[op];
	for (unsigned d = 0; d < PT_BAR_COUNT; d++)
		sum->dsb_by_dom[d] += c->dsb_by_dom[d];
	sum->dmb += c->dmb;
	sum->isb += c->isb;
	sum->pt_writes += c->pt_writes;
	sum->tables_alloc += c->tables_alloc;
	sum->tables_freed += c->tables_freed;
	sum->pages_alloc += c->pages_alloc;
	sum->pages_freed += c->pages_freed;
	sum->model_events += c->model_events;
	for (unsigned k = 0; k < PT_EV_KIND_COUNT; k++)
		pt_op_costs_add(&sum->per_op[k], &c->per_op[k]);
}

/* ---- text: a two-column table, labels left, counts right; the lines
 * under a counter (indented) break it down ---- */

struct row {
	unsigned indent;	/* 2: a counter; 4: its breakdown */
	const char *label;
	uint64_t value;
};

#define MAX_ROWS (PT_EV_KIND_COUNT + PT_TLBI_COUNT + PT_BAR_COUNT + 16)

struct table {
	struct row rows[MAX_ROWS];
	unsigned n;
};

static void row(struct table *t, unsigned indent, const char *label, uint64_t value)
{
	t->rows[t->n++] = (struct row){ indent, label, value };
}

static void table_print(const struct table *t)
{
	int lw = 0, vw = 1;
	char num[24];

	for (unsigned i = 0; i < t->n; i++) {
		const struct row *r = &t->rows[i];
		int w = (int)(r->indent + strlen(r->label));
		int n = snprintf(num, sizeof(num), "%" PRIu64, r->value);
		if (w > lw)
			lw = w;
		if (n > vw)
			vw = n;
	}
	for (unsigned i = 0; i < t->n; i++) {
		const struct row *r = &t->rows[i];
		printf("%*s%-*s  %*" PRIu64 "\n", (int)r->indent, "", lw - (int)r->indent, r->label, vw, r->value);
	}
}

/* The mm model's costs per ops-level kind: one row per kind, one column per cost. */
static void op_costs_text(const struct pt_counters *c)
{
	static const char *const head[] = { "op", "ops", "failed", "pt_writes", "tlbi", "dsb", "dmb", "isb",
					    "tables+", "tables-", "pages+", "pages-" };
	bool any = false;
	for (unsigned k = 0; k < PT_EV_KIND_COUNT; k++)
		any |= c->per_op[k].ops != 0;
	if (!any)
		return;
	printf("\n  model costs per op (%" PRIu64 " arch events produced by the mm model)\n", c->model_events);
	printf("  %-10s", head[0]);
	for (unsigned i = 1; i < sizeof(head) / sizeof(head[0]); i++)
		printf(" %10s", head[i]);
	printf("   tlbi by op\n");
	for (unsigned k = 0; k < PT_EV_KIND_COUNT; k++) {
		const struct pt_op_costs *o = &c->per_op[k];
		if (!o->ops)
			continue;
		uint64_t tlbi = 0;
		for (unsigned op = 0; op < PT_TLBI_COUNT; op++)
			tlbi += o->tlbi_by_op[op];
		printf("  %-10s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64
		       " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "  ",
		       pt_kind_name(k), o->ops, o->failed, o->pt_writes, tlbi, o->dsb, o->dmb, o->isb,
		       o->tables_alloc, o->tables_freed, o->pages_alloc, o->pages_freed);
		for (unsigned op = 0; op < PT_TLBI_COUNT; op++)
			if (o->tlbi_by_op[op])
				printf(" %s=%" PRIu64, pt_op_name(PT_EV_TLBI, op), o->tlbi_by_op[op]);
		printf("\n");
	}
}

static void counters_text(const struct pt_counters *c)
{
	struct table t = { .n = 0 };

	row(&t, 2, "events", c->events);
	for (unsigned k = 0; k < PT_EV_KIND_COUNT; k++)
		if (c->by_kind[k])
			row(&t, 4, k == PT_EV_COMMENT ? "comment" : pt_kind_name(k), c->by_kind[k]);
	row(&t, 2, "tlbi", c->by_kind[PT_EV_TLBI]);
	for (unsigned op = 0; op < PT_TLBI_COUNT; op++)
		if (c->tlbi_by_op[op])
			row(&t, 4, pt_op_name(PT_EV_TLBI, op), c->tlbi_by_op[op]);
	row(&t, 2, "dsb", c->by_kind[PT_EV_DSB]);
	for (unsigned d = 0; d < PT_BAR_COUNT; d++)
		if (c->dsb_by_dom[d])
			row(&t, 4, pt_op_name(PT_EV_DSB, d), c->dsb_by_dom[d]);
	row(&t, 2, "dmb", c->dmb);
	row(&t, 2, "isb", c->isb);
	row(&t, 2, "pt writes", c->pt_writes);
	row(&t, 2, "tables allocated", c->tables_alloc);
	row(&t, 2, "tables freed", c->tables_freed);
	row(&t, 2, "pages allocated", c->pages_alloc);
	row(&t, 2, "pages freed", c->pages_freed);
	table_print(&t);
	op_costs_text(c);
}

/* ---- JSON ---- */

static void kv(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_u64(j, v);
}

static void counters_json(struct json *j, const struct pt_counters *c)
{
	json_object_begin(j);
	kv(j, "events", c->events);
	json_key(j, "by_kind");
	json_object_begin(j);
	for (unsigned k = 0; k < PT_EV_KIND_COUNT; k++)
		if (pt_kind_schema(k))
			kv(j, k == PT_EV_COMMENT ? "comment" : pt_kind_name(k), c->by_kind[k]);
	json_object_end(j);
	json_key(j, "tlbi_by_op");
	json_object_begin(j);
	for (unsigned op = 0; op < PT_TLBI_COUNT; op++)
		kv(j, pt_op_name(PT_EV_TLBI, op), c->tlbi_by_op[op]);
	json_object_end(j);
	json_key(j, "dsb_by_domain");
	json_object_begin(j);
	for (unsigned d = 0; d < PT_BAR_COUNT; d++)
		kv(j, pt_op_name(PT_EV_DSB, d), c->dsb_by_dom[d]);
	json_object_end(j);
	kv(j, "dmb", c->dmb);
	kv(j, "isb", c->isb);
	kv(j, "pt_writes", c->pt_writes);
	kv(j, "tables_allocated", c->tables_alloc);
	kv(j, "tables_freed", c->tables_freed);
	kv(j, "pages_allocated", c->pages_alloc);
	kv(j, "pages_freed", c->pages_freed);
	kv(j, "model_events", c->model_events);
	json_key(j, "per_op");
	json_object_begin(j);
	for (unsigned k = 0; k < PT_EV_KIND_COUNT; k++) {
		const struct pt_op_costs *o = &c->per_op[k];
		if (!o->ops)
			continue;
		json_key(j, pt_kind_name(k));
		json_object_begin(j);
		kv(j, "ops", o->ops);
		kv(j, "failed", o->failed);
		kv(j, "pt_writes", o->pt_writes);
		json_key(j, "tlbi_by_op");
		json_object_begin(j);
		for (unsigned op = 0; op < PT_TLBI_COUNT; op++)
			if (o->tlbi_by_op[op])
				kv(j, pt_op_name(PT_EV_TLBI, op), o->tlbi_by_op[op]);
		json_object_end(j);
		kv(j, "dsb", o->dsb);
		kv(j, "dmb", o->dmb);
		kv(j, "isb", o->isb);
		kv(j, "tables_allocated", o->tables_alloc);
		kv(j, "tables_freed", o->tables_freed);
		kv(j, "pages_allocated", o->pages_alloc);
		kv(j, "pages_freed", o->pages_freed);
		json_object_end(j);
	}
	json_object_end(j);
	json_object_end(j);
}

static void file_json(struct json *j, const struct replay_run *run)
{
	json_object_begin(j);
	replay_json_head(j, run);
	kv(j, "violations", run->s ? pt_session_nviolations(run->s) : 0);
	json_key(j, "counters");
	if (run->s)
		counters_json(j, pt_session_counters(run->s));
	else
		json_null(j);
	json_object_end(j);
}

struct stats_opts {
	bool json, quiet;
	const char *kernel;
	const char *variants[MAX_VARIANTS + 1];
	unsigned nvariants;
};

/* @return : -1 to go on, or the exit status (help, a usage error) */
static int stats_parse(int argc, char **argv, struct stats_opts *o)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "variant", required_argument, NULL, 'v' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->kernel = "auto";
	while ((c = cli_getopt("stats", argc, argv, "qh", longopts)) != -1) {
		switch (c) {
		case 'j': o->json = true; break;
		case 'q': o->quiet = true; break;
		case 'k':
			if (cli_kernel_arg("stats", optarg))
				return EXIT_BAD;
			o->kernel = optarg;
			break;
		case 'v':
			if (cli_variant_arg("stats", o->variants, &o->nvariants, optarg))
				return EXIT_BAD;
			break;
		case 'h': help_stats(stdout); return EXIT_CLEAN;
		default: return EXIT_BAD;
		}
	}
	if (optind == argc)
		return cli_usage_error("stats", "no trace file given");
	return -1;
}

/* One file: replayed, its counters printed (text, or as an element of j's "files") and added to total. */
static int stats_one(const struct stats_opts *o, const char *path, struct json *j, struct pt_counters *total,
		     unsigned *nread)
{
	struct replay_run run = { .path = path, .progress = !o->quiet && isatty(STDERR_FILENO),
				  .variants = o->variants, .kernel = o->kernel };
	int status = EXIT_CLEAN;

	replay_file(&run);
	if (o->json) {
		file_json(j, &run);
	} else if (run.s) {
		if (*nread)
			putchar('\n');
		replay_summary(&run);
		counters_text(pt_session_counters(run.s));
	}
	if (run.s) {
		counters_add(total, pt_session_counters(run.s));
		(*nread)++;
		if (pt_session_nviolations(run.s))
			status = EXIT_VIOLATION;
	}
	cli_check_stdout();
	if (run.failed) {
		fprintf(stderr, "%s\n", run.err.msg);
		status = EXIT_BAD;
	}
	replay_run_free(&run);
	return status;
}

int cmd_stats(int argc, char **argv)
{
	struct stats_opts o;
	struct pt_counters total;
	unsigned nread = 0;
	int status;
	struct json j;

	memset(&o, 0, sizeof(o));
	status = stats_parse(argc, argv, &o);
	if (status >= 0)
		return status;
	status = EXIT_CLEAN;
	memset(&total, 0, sizeof(total));
	if (o.json) {
		json_init(&j, stdout);
		json_object_begin(&j);
		json_key(&j, "files");
		json_array_begin(&j);
	}
	for (int i = optind; i < argc; i++)
		status = exit_merge(status, stats_one(&o, argv[i], &j, &total, &nread));
	if (o.json) {
		json_array_end(&j);
		json_key(&j, "total");
		counters_json(&j, &total);
		json_object_end(&j);
		json_end(&j);
	} else if (argc - optind > 1) {
		printf("\ntotal: %u file%s read, %" PRIu64 " events\n", nread, nread == 1 ? "" : "s", total.events);
		counters_text(&total);
	}
	cli_check_stdout();
	return status;
}
