/* SPDX-License-Identifier: GPL-2.0-only */
/* cmd_variants.c - `ptfuzz variants`: the default, the bug zoo and the baselines. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mm.h"

int cli_variant_arg(const char *cmd, const char **list, unsigned *n, const char *name)
{
	if (mm_variant_lookup(name) < 0) {
		cli_usage_error(cmd, "unknown variant '%s'; ptfuzz variants lists them", name);
		return 2;
	}
	if (*n == MAX_VARIANTS) {
		cli_usage_error(cmd, "at most %d --variant options", MAX_VARIANTS);
		return 2;
	}
	list[(*n)++] = name;
	list[*n] = NULL;
	return 0;
}

void help_variants(FILE *f)
{
	fputs("usage: ptfuzz variants [--json]\n"
	      "\n"
	      "List the mm model's variants: the patched default, the bug variants (each\n"
	      "switches one decision point of one routine to a known-bad behaviour from\n"
	      "the seeds, with the invariant expected to catch it) and the pre-patch\n"
	      "baselines (correct but costlier, for ptfuzz compare).  Select one with\n"
	      "--variant NAME on replay, stats and compare.\n"
	      "\n"
	      "options:\n"
	      "  --json        one JSON document: {\"variants\": [{\"name\", \"kind\", \"description\",\n"
	      "                \"seed\", \"caught_by\"}]}\n"
	      "  -h, --help    this help\n"
	      "\n"
	      "exit status: 0, or 2 on bad usage.\n",
	      f);
}

static void variants_json(void)
{
	struct json j;

	json_init(&j, stdout);
	json_object_begin(&j);
	json_key(&j, "variants");
	json_array_begin(&j);
	for (unsigned i = 0; i < mm_variant_count(); i++) {
		const struct mm_variant_info *v = mm_variant_info(i);
		json_object_begin(&j);
		json_key(&j, "name");
		json_string(&j, v->name);
		json_key(&j, "kind");
		json_string(&j, i == 0 ? "default" : v->baseline ? "baseline" : "bug");
		json_key(&j, "description");
		json_string(&j, v->desc);
		json_key(&j, "seed");
		json_string(&j, v->seed);
		json_key(&j, "caught_by");
		json_string(&j, v->catches);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	json_end(&j);
}

/* three sections: the default, the bug variants, the baselines */
static void variants_text(void)
{
	const char *sections[3] = { "default", "bug variants", "baselines (pre-patch, correct, costlier)" };

	for (int sec = 0; sec < 3; sec++) {
		printf("%s%s:\n", sec ? "\n" : "", sections[sec]);
		for (unsigned i = 0; i < mm_variant_count(); i++) {
			const struct mm_variant_info *v = mm_variant_info(i);
			int kind = i == 0 ? 0 : v->baseline ? 2 : 1;
			if (kind != sec)
				continue;
			printf("  %-30s %s\n", v->name, v->desc);
			printf("  %-30s seed: %s%s%s\n", "", v->seed, kind == 1 ? "; caught by " : "",
			       kind == 1 ? v->catches : "");
		}
	}
}

int cmd_variants(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool as_json = false;
	int c;

	while ((c = cli_getopt("variants", argc, argv, "h", longopts)) != -1) {
		switch (c) {
		case 'j': as_json = true; break;
		case 'h': help_variants(stdout); return EXIT_CLEAN;
		default: return EXIT_BAD;
		}
	}
	if (optind != argc)
		return cli_usage_error("variants", "unexpected argument '%s'", argv[optind]);
	if (as_json)
		variants_json();
	else
		variants_text();
	cli_check_stdout();
	return EXIT_CLEAN;
}
