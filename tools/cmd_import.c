/* SPDX-License-Identifier: GPL-2.0-only */
/* cmd_import.c - `ptfuzz import-casemate`: a Casemate trace log -> .ptt / .ptt.zst. */
#include "casemate.h"
#include "cli.h"

void help_import_casemate(FILE *f)
{
	fputs("usage: ptfuzz import-casemate [-f] LOG -o OUT\n"
	      "\n"
	      "Import a trace log of Casemate (an offline checker of Arm page-table\n"
	      "protocols: one s-expression per event) as a ptfuzz trace.  OUT's encoding\n"
	      "follows its name: binary if it ends in .zst, text otherwise; - writes text\n"
	      "to standard output.  OUT is only replaced once the whole log was read.\n"
	      "\n"
	      "options:\n"
	      "  -o, --output OUT   the trace to write (required)\n"
	      "  -f, --force        replace an existing OUT\n"
	      "  -h, --help         this help\n"
	      "\n"
	      "exit status: 0 imported, 2 bad input or usage.\n",
	      f);
}

int cmd_import_casemate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	bool force = false;
	struct pt_error err = { PT_OK, "" };
	int c;

	while ((c = cli_getopt("import-casemate", argc, argv, "o:fh", longopts)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'f': force = true; break;
		case 'h': help_import_casemate(stdout); return EXIT_CLEAN;
		default: return EXIT_BAD;
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("import-casemate", "expected one LOG, got %d", argc - optind);
	if (!out)
		return cli_usage_error("import-casemate", "no output given (-o OUT)");
	if (cli_refuse_overwrite("import-casemate", out, force))
		return EXIT_BAD;
	if (pt_import_casemate(argv[optind], out, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return EXIT_BAD;
	}
	return EXIT_CLEAN;
}
