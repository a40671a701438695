/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_triage.c - `ptfuzz triage DIR`: replay every crash a campaign kept, and
 * every finding's crash.bin and repro.ptt, with the model as it is now (after
 * a fix, say), and tell which findings still reproduce.  Read-only.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "campaign.h"
#include "cli.h"
#include "mm.h"

void help_triage(FILE *f)
{
	fputs("usage: ptfuzz triage [--variant V] DIR\n"
	      "\n"
	      "Re-triage the campaign in DIR (ptfuzz campaign --out DIR) with the model\n"
	      "as it is now: every crash the engine kept is replayed again under the\n"
	      "campaign's variant (the harness's rule: a signature the default model\n"
	      "also shows is not the variant's), and so is each finding's crash.bin and\n"
	      "repro.ptt.  One line per finding: whether crash.bin and repro.ptt still\n"
	      "show its signature, and how many of the kept crashes do; then the\n"
	      "signatures kept crashes show now that are no finding yet.  DIR is not\n"
	      "changed.\n"
	      "\n"
	      "options:\n"
	      "  --variant V   re-triage under another variant (default: the campaign's)\n"
	      "  -h, --help    this help\n"
	      "\n"
	      "exit status: 0 no finding reproduces any more, 1 some still do (or kept\n"
	      "crashes show a new one), 2 bad usage or DIR is not a campaign.\n",
	      f);
}

struct tally {
	char sig[CAMPAIGN_SIG];
	unsigned now;			/* kept crashes showing it now */
};

static struct tally *tally_get(struct tally **t, unsigned *n, const char *sig)
{
	for (unsigned i = 0; i < *n; i++)
		if (!strcmp((*t)[i].sig, sig))
			return &(*t)[i];
	*t = realloc(*t, (*n + 1) * sizeof(**t));
	if (!*t)
		abort();
	struct tally *x = &(*t)[(*n)++];
	snprintf(x->sig, sizeof(x->sig), "%s", sig);
	x->now = 0;
	return x;
}

/* Does repro.ptt still show sig under the variant? (`ptfuzz replay` prints "signature: SIG") */
static bool repro_shows(const char *self, const char *path, const struct campaign_meta *m, const char *sig)
{
	char out[CAMPAIGN_PATH];
	snprintf(out, sizeof(out), "%s/ptfuzz-triage-%ld.txt", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		 (long)getpid());
	static char contracts_env[] = "PTFUZZ_CONTRACTS=allow";
	const char *env[] = { m->contracts ? contracts_env : NULL, NULL };
	char *argv[] = { (char *)self, "replay", (char *)path, m->variant[0] ? "--variant" : NULL,
			 (char *)m->variant, NULL };
	int st = run_command(NULL, argv, out, env, 120);
	char *s = read_file(out, NULL);
	unlink(out);
	char pat[CAMPAIGN_SIG + 16];
	snprintf(pat, sizeof(pat), "signature: %s\n", sig);
	bool yes = st == 1 && s && strstr(s, pat);
	free(s);
	return yes;
}

int cmd_triage(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "variant", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *variant = NULL;
	int opt;

	optind = 1;
	while ((opt = cli_getopt("triage", argc, argv, "h", longopts)) != -1) {
		switch (opt) {
		case 'h':
			help_triage(stdout);
			return EXIT_CLEAN;
		case 'v':
			if (strcmp(optarg, "default") && mm_variant_lookup(optarg) < 0)
				return cli_usage_error("triage", "unknown variant '%s' (ptfuzz variants lists them)", optarg);
			variant = optarg;
			break;
		default:
			return EXIT_BAD;
		}
	}
	if (optind == argc)
		return cli_usage_error("triage", "no DIR given");
	if (optind + 1 != argc)
		return cli_usage_error("triage", "one DIR, got %d arguments", argc - optind);
	const char *dir = argv[optind];
	struct campaign_meta m;
	char why[512];
	if (campaign_meta_read(dir, &m, why, sizeof(why))) {
		fprintf(stderr, "ptfuzz triage: %s is not a campaign directory (%s)\n", dir, why);
		return EXIT_BAD;
	}
	if (variant)
		snprintf(m.variant, sizeof(m.variant), "%s", strcmp(variant, "default") ? variant : "");
	char self[CAMPAIGN_PATH];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[sl > 0 ? sl : 0] = 0;

	struct findings_index idx;
	index_load(dir, &idx);
	struct tally *t = NULL;
	unsigned nt = 0, ncrash;
	char **list = crash_list(dir, &m, &ncrash);
	unsigned none = 0;
	for (unsigned i = 0; i < ncrash; i++) {
		size_t len;
		char *data = read_file(list[i], &len);
		if (!data)
			continue;
		struct triage_result r;
		triage_crash(&m, (uint8_t *)data, len, 60, &r);
		free(data);
		if (r.kind == TRIAGE_FINDING || r.kind == TRIAGE_ENGINE_CRASH)
			tally_get(&t, &nt, r.sig)->now++;
		else
			none++;
	}
	crash_list_free(list, ncrash);

	printf("triage %s: %s, variant %s: %u crashes kept, %u findings\n", dir, campaign_engine_name(m.engine),
	       m.variant[0] ? m.variant : "default", ncrash, idx.n);
	printf("%-6s %-9s %-9s %-9s  %s\n", "state", "crash.bin", "repro.ptt", "crashes", "signature");
	unsigned still = 0;
	for (unsigned i = 0; i < idx.n; i++) {
		const struct finding *f = &idx.f[i];
		char path[CAMPAIGN_PATH], ratio[32];
		snprintf(path, sizeof(path), "%s/findings/%s/crash.bin", dir, f->dir);
		size_t len;
		char *data = read_file(path, &len);
		bool crash_ok = false;
		if (data) {
			struct triage_result r;
			triage_crash(&m, (uint8_t *)data, len, 60, &r);
			crash_ok = (r.kind == TRIAGE_FINDING || r.kind == TRIAGE_ENGINE_CRASH) && !strcmp(r.sig, f->sig);
			free(data);
		}
		snprintf(path, sizeof(path), "%s/findings/%s/repro.ptt", dir, f->dir);
		bool repro_ok = f->inv && !access(path, R_OK) && repro_shows(self, path, &m, f->sig);
		unsigned now = 0;
		for (unsigned k = 0; k < nt; k++)
			if (!strcmp(t[k].sig, f->sig))
				now = t[k].now;
		snprintf(ratio, sizeof(ratio), "%u/%llu", now, (unsigned long long)f->count);
		bool repro = crash_ok || repro_ok || now;
		still += repro;
		printf("%-6s %-9s %-9s %-9s  %s\n", repro ? "STILL" : "fixed", data ? (crash_ok ? "yes" : "no") : "missing",
		       f->inv ? (repro_ok ? "yes" : "no") : "-", ratio, f->sig);
	}
	unsigned fresh = 0;
	for (unsigned k = 0; k < nt; k++) {
		if (index_find(&idx, t[k].sig))
			continue;
		printf("%-6s %-9s %-9s %-9u  %s\n", "NEW", "-", "-", t[k].now, t[k].sig);
		fresh++;
	}
	printf("%u of %u findings still reproduce%s", still, idx.n, fresh ? "" : "\n");
	if (fresh)
		printf("; %u signatures are new (rerun ptfuzz campaign on DIR to triage them into findings)\n", fresh);
	if (none)
		printf("%u kept crashes show no finding now\n", none);
	free(t);
	index_free(&idx);
	cli_check_stdout();
	return still || fresh ? EXIT_VIOLATION : EXIT_CLEAN;
}
