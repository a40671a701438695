/* SPDX-License-Identifier: GPL-2.0-only */
/* cmd_import_ftrace.c - `ptfuzz import-ftrace`: ftrace text -> ops-level .ptt / .ptt.zst. */
#include <string.h>

#include "cli.h"
#include "ftrace.h"

void help_import_ftrace(FILE *f)
{
	fputs("usage: ptfuzz import-ftrace [-f] [--json] [--thp always|never|trace] [--no-evidence] TRACE -o OUT\n"
	      "\n"
	      "Import ftrace text -- the tracefs `trace` file, `trace_pipe`, or the output\n"
	      "of `trace-cmd report` -- as an ops-level ptfuzz trace.  The syscall events\n"
	      "of mmap, mremap, mprotect, munmap and madvise (enter and exit) become one\n"
	      "ops event per successful call, at the address the kernel returned; failed\n"
	      "calls are kept as comments.  Each process becomes an address space (ASID\n"
	      "1, 2, ...), the CPU is the trace line's.  trace_marker lines of the form\n"
	      "`ptfuzz touch VA LEN [w|r]` become touches; `ptfuzz kernel: ...`,\n"
	      "`ptfuzz machine: ...` and `ptfuzz thp: ...` fill the header and the THP\n"
	      "policy.  Operations on memory no traced mmap mapped are kept as comments.\n"
	      "Each op is the call as the kernel was asked; the kernel's evidence follows\n"
	      "it as `kernel` events: `kernel result ret=...` (the syscall's return\n"
	      "value) and the kprobe events of traces/capture/capture.sh (ptk_FUNC:\n"
	      "move_page_tables, move_huge_pmd, __split_huge_pmd, free_pgtables, ...).\n"
	      "OUT's encoding follows its name: binary if it ends in .zst, text\n"
	      "otherwise; - writes text to standard output.\n"
	      "\n"
	      "options:\n"
	      "  -o, --output OUT   the trace to write (required)\n"
	      "  -f, --force        replace an existing OUT\n"
	      "      --thp MODE     transparent hugepages of the traced kernel: always\n"
	      "                     (mmaps get order=9), never, or trace (default: what a\n"
	      "                     `ptfuzz thp:` marker says, never without one)\n"
	      "      --no-evidence  write the ops only, no `kernel` evidence events\n"
	      "      --json         what the import saw, as one JSON document on standard\n"
	      "                     output (OUT must then be a file): {\"input\", \"output\",\n"
	      "                     \"lines\", \"events\", \"syscalls\", \"ops\", \"failed\",\n"
	      "                     \"skipped\" (kept as comments), \"unpaired\", \"ignored\"\n"
	      "                     (other events), \"lost\", \"evidence\", \"cpus\", \"asids\"}:\n"
	      "                     the counts of OUT's first comment line\n"
	      "  -h, --help         this help\n"
	      "\n"
	      "Nothing is printed on success without --json (there is no -q).\n"
	      "\n"
	      "exit status: 0 imported, 2 bad input or usage.\n",
	      f);
}

static void info_json(const char *in, const char *out, const struct pt_ftrace_info *info)
{
	const struct {
		const char *key;
		uint64_t v;
	} counts[] = {
		{ "lines", info->lines }, { "events", info->events }, { "syscalls", info->syscalls },
		{ "ops", info->ops }, { "failed", info->failed }, { "skipped", info->skipped },
		{ "unpaired", info->unpaired }, { "ignored", info->ignored }, { "lost", info->lost },
		{ "evidence", info->evidence }, { "cpus", info->cpus }, { "asids", info->asids },
	};
	struct json j;

	import_json_begin(&j, in, out);
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		json_key(&j, counts[i].key);
		json_u64(&j, counts[i].v);
	}
	json_object_end(&j);
	json_end(&j);
}

int cmd_import_ftrace(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "thp", required_argument, NULL, 't' },
		{ "no-evidence", no_argument, NULL, 'E' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct pt_ftrace_opts opts = { PT_FTRACE_THP_TRACE, false };
	const char *out = NULL;
	bool force = false, as_json = false;
	struct pt_ftrace_info info;
	struct pt_error err = { PT_OK, "" };
	int c;

	while ((c = cli_getopt("import-ftrace", argc, argv, "o:fh", longopts)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'f': force = true; break;
		case 't':
			if (!strcmp(optarg, "always"))
				opts.thp = PT_FTRACE_THP_ALWAYS;
			else if (!strcmp(optarg, "never"))
				opts.thp = PT_FTRACE_THP_NEVER;
			else if (!strcmp(optarg, "trace"))
				opts.thp = PT_FTRACE_THP_TRACE;
			else
				return cli_usage_error("import-ftrace", "--thp: expected always, never or trace, got '%s'",
						       optarg);
			break;
		case 'E': opts.no_evidence = true; break;
		case 'j': as_json = true; break;
		case 'h': help_import_ftrace(stdout); return EXIT_CLEAN;
		default: return EXIT_BAD;
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("import-ftrace", "expected one TRACE, got %d", argc - optind);
	if (!out)
		return cli_usage_error("import-ftrace", "no output given (-o OUT)");
	if (as_json && !strcmp(out, "-"))
		return cli_usage_error("import-ftrace", "--json: standard output is OUT (give -o FILE)");
	if (cli_refuse_overwrite("import-ftrace", out, force))
		return EXIT_BAD;
	memset(&info, 0, sizeof(info));
	if (pt_import_ftrace_opts(argv[optind], out, &opts, &info, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return EXIT_BAD;
	}
	if (as_json)
		info_json(cli_display_name(argv[optind]), out, &info);
	return EXIT_CLEAN;
}
