/* SPDX-License-Identifier: GPL-2.0-only */
/* cmd_import.c - `ptfuzz import-casemate`: a Casemate trace log -> .ptt / .ptt.zst. */
#include <string.h>

#include "casemate.h"
#include "cli.h"

void help_import_casemate(FILE *f)
{
	fputs("usage: ptfuzz import-casemate [-f] [--json] LOG -o OUT\n"
	      "\n"
	      "Import a trace log of Casemate (an offline checker of Arm page-table\n"
	      "protocols: one s-expression per event) as a ptfuzz trace.  OUT's encoding\n"
	      "follows its name: binary if it ends in .zst, text otherwise; - writes text\n"
	      "to standard output.  OUT is only replaced once the whole log was read.\n"
	      "\n"
	      "options:\n"
	      "  -o, --output OUT   the trace to write (required)\n"
	      "  -f, --force        replace an existing OUT\n"
	      "      --json         what the import saw, as one JSON document on standard\n"
	      "                     output (OUT must then be a file): {\"input\", \"output\",\n"
	      "                     \"records\", \"events\" (comments included), \"cpus\",\n"
	      "                     \"verdict\" (the log's `!` line, null if none)}\n"
	      "  -h, --help         this help\n"
	      "\n"
	      "Nothing is printed on success without --json (there is no -q).\n"
	      "\n"
	      "exit status: 0 imported, 2 bad input or usage.\n",
	      f);
}

void import_json_begin(struct json *j, const char *in, const char *out)
{
	json_init(j, stdout);
	json_object_begin(j);
	json_key(j, "input");
	json_string(j, in);
	json_key(j, "output");
	json_string(j, out);
}

static void info_json(const char *in, const char *out, const struct pt_casemate_info *info)
{
	struct json j;

	import_json_begin(&j, in, out);
	json_key(&j, "records");
	json_u64(&j, info->records);
	json_key(&j, "events");
	json_u64(&j, info->events);
	json_key(&j, "cpus");
	json_u64(&j, info->cpus);
	json_key(&j, "verdict");
	json_string(&j, info->verdict[0] ? info->verdict : NULL);
	json_object_end(&j);
	json_end(&j);
}

int cmd_import_casemate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	bool force = false, as_json = false;
	struct pt_casemate_info info;
	struct pt_error err = { PT_OK, "" };
	int c;

	while ((c = cli_getopt("import-casemate", argc, argv, "o:fh", longopts)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'f': force = true; break;
		case 'j': as_json = true; break;
		case 'h': help_import_casemate(stdout); return EXIT_CLEAN;
		default: return EXIT_BAD;
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("import-casemate", "expected one LOG, got %d", argc - optind);
	if (!out)
		return cli_usage_error("import-casemate", "no output given (-o OUT)");
	if (as_json && !strcmp(out, "-"))
		return cli_usage_error("import-casemate", "--json: standard output is OUT (give -o FILE)");
	if (cli_refuse_overwrite("import-casemate", out, force))
		return EXIT_BAD;
	memset(&info, 0, sizeof(info));
	if (pt_import_casemate_info(argv[optind], out, &info, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return EXIT_BAD;
	}
	if (as_json)
		info_json(cli_display_name(argv[optind]), out, &info);
	return EXIT_CLEAN;
}
