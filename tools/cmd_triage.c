/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_triage.c - `ptfuzz triage DIR`: replay every crash a campaign kept, and
 * every finding's crash.bin and repro.ptt, with the model as it is now (after
 * a fix, say), and tell which findings still reproduce.  Read-only.
 *
 * `ptfuzz triage --merge OUT DIR...`: the findings of several campaigns
 * (other variants, other hosts, other nights) as one directory per
 * signature: a signature found under two variants, or by two campaigns, is
 * one finding that records every campaign and variant it was found under.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "campaign.h"
#include "cli.h"
#include "mm.h"

void help_triage(FILE *f)
{
	fputs("usage: ptfuzz triage [--variant V] DIR\n"
	      "       ptfuzz triage --merge OUT DIR...\n"
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
	      "With --merge, the findings of every campaign DIR are written as one\n"
	      "finding per signature to OUT/SIGNATURE/ (repro.ptt, crash.bin, report.txt,\n"
	      "report.json of the shortest reproducer, and found.json: every campaign,\n"
	      "engine and variant it was found under, its crashes there, and whether the\n"
	      "kept repro.ptt replays to the signature under that variant), with\n"
	      "OUT/index.json.  A signature found under two variants, or by two\n"
	      "campaigns, is one finding.  OUT is created, or must be an earlier merge;\n"
	      "every file is written atomically.  The DIRs are not changed.\n"
	      "\n"
	      "options:\n"
	      "  --variant V   re-triage under another variant (default: the campaign's)\n"
	      "  --merge OUT   merge the campaigns' findings into OUT\n"
	      "  -h, --help    this help\n"
	      "\n"
	      "exit status: 0 no finding reproduces any more, 1 some still do (or kept\n"
	      "crashes show a new one), 2 bad usage or DIR is not a campaign.  With\n"
	      "--merge: 0 no findings, 1 findings merged, 2 bad usage.\n",
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

/* ---- --merge ---- */

struct merged_src {
	const char *dir;		/* the campaign */
	struct campaign_meta m;
	const struct finding *f;
	bool replays;			/* the kept repro.ptt shows the signature under this variant */
};

struct merged {
	char sig[CAMPAIGN_SIG];
	char dir[CAMPAIGN_SIG];
	unsigned inv;
	struct merged_src *src;
	unsigned nsrc;
	unsigned best;			/* the source whose repro.ptt is kept: fewest ops */
};

static int copy_into(const char *from, const char *to)
{
	size_t len;
	char *data = read_file(from, &len);
	if (!data)
		return -1;
	FILE *f = fopen(to, "wb");
	size_t w = f ? fwrite(data, 1, len, f) : 0;
	int rc = !f || fclose(f) || w != len ? -1 : 0;
	free(data);
	return rc;
}

static void remove_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char sub[CAMPAIGN_PATH];
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		unlink(sub);
	}
	if (d)
		closedir(d);
	rmdir(path);
}

static void utc_text(uint64_t t, char *out, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/*
 * The kept reproducer's report.txt (json: report.json) with its "found:" line
 * (json: its "found" member) replaced by every campaign the signature was
 * found by.
 */
static int copy_report(const char *from, const char *to, const struct merged *g, bool json)
{
	char *s = read_file(from, NULL), when[32];
	if (!s)
		return -1;
	const char *key = json ? "\n\"found\": [" : "\nfound: ";
	char *at = strstr(s, key);
	FILE *f = fopen(to, "w");
	if (!f) {
		free(s);
		return -1;
	}
	if (!at) {
		fputs(s, f);
	} else {
		char *eol = strchr(at + 1, '\n');
		fprintf(f, "%.*s\n", (int)(at - s), s);
		if (json)
			fputs("\"found\": [", f);
		for (unsigned i = 0; i < g->nsrc; i++) {
			const struct merged_src *x = &g->src[i];
			utc_text(x->f->first_seen, when, sizeof(when));
			if (json)
				fprintf(f, "%s{\"campaign\": \"%s\", \"engine\": \"%s\", \"variant\": \"%s\", \"crashes\": %llu, "
					   "\"first_seen_utc\": \"%s\", \"repro_replays\": %s}", i ? ", " : "", x->dir,
					campaign_engine_name(x->m.engine), x->m.variant[0] ? x->m.variant : "default",
					(unsigned long long)x->f->count, when, x->replays ? "true" : "false");
			else
				fprintf(f, "found: %s campaign %s, variant %s, first seen %s, %llu crashes%s\n",
					campaign_engine_name(x->m.engine), x->dir, x->m.variant[0] ? x->m.variant : "default",
					when, (unsigned long long)x->f->count,
					x->replays ? "" : " (the kept repro.ptt does not show it under this variant)");
		}
		if (json)
			fputs("],", f);
		if (eol)
			fputs(json ? eol : eol + 1, f);
	}
	free(s);
	return fclose(f) ? -1 : 0;
}

/* OUT/SAFE/ for one merged finding, built under a temporary name and renamed whole */
static int merge_write(const char *out, const struct merged *g, char *why, size_t why_size)
{
	char tmp[CAMPAIGN_PATH], final[CAMPAIGN_PATH], from[CAMPAIGN_PATH], to[CAMPAIGN_PATH], when[32];
	const struct merged_src *b = &g->src[g->best];
	static const char *const files[] = { "repro.ptt", "crash.bin", "report.txt", "report.json" };

	snprintf(tmp, sizeof(tmp), "%s/.tmp-%s-%ld", out, g->dir, (long)getpid());
	snprintf(final, sizeof(final), "%s/%s", out, g->dir);
	remove_dir(tmp);
	if (mkdir(tmp, 0755)) {
		snprintf(why, why_size, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	for (unsigned i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		campaign_path(from, sizeof(from), "%s/findings/%s/%s", b->dir, b->f->dir, files[i]);
		campaign_path(to, sizeof(to), "%s/%s", tmp, files[i]);
		if (i >= 2 ? copy_report(from, to, g, i == 3) : copy_into(from, to)) {
			snprintf(why, why_size, "%s: %s", from, strerror(errno));
			goto fail;
		}
	}
	campaign_path(to, sizeof(to), "%s/found.json", tmp);
	FILE *f = fopen(to, "w");
	if (!f) {
		snprintf(why, why_size, "%s: %s", to, strerror(errno));
		goto fail;
	}
	uint64_t crashes = 0;
	for (unsigned i = 0; i < g->nsrc; i++)
		crashes += g->src[i].f->count;
	fprintf(f, "{\n\"signature\": \"%s\",\n\"invariant\": \"I%u\",\n\"crashes\": %llu,\n\"repro_from\": \"%s\",\n"
		   "\"found\": [\n", g->sig, g->inv, (unsigned long long)crashes, b->dir);
	for (unsigned i = 0; i < g->nsrc; i++) {
		const struct merged_src *x = &g->src[i];
		utc_text(x->f->first_seen, when, sizeof(when));
		fprintf(f, "{\"campaign\": \"%s\", \"engine\": \"%s\", \"variant\": \"%s\", \"crashes\": %llu, "
			   "\"first_seen_utc\": \"%s\", \"ops\": %u, \"repro_replays\": %s}%s\n",
			x->dir, campaign_engine_name(x->m.engine), x->m.variant[0] ? x->m.variant : "default",
			(unsigned long long)x->f->count, when, x->f->ops, x->replays ? "true" : "false",
			i + 1 < g->nsrc ? "," : "");
	}
	fputs("]\n}\n", f);
	if (fclose(f)) {
		snprintf(why, why_size, "%s: %s", to, strerror(errno));
		goto fail;
	}
	/* the old merge of this signature goes only once the new one is whole */
	snprintf(from, sizeof(from), "%s/.old-%s-%ld", out, g->dir, (long)getpid());
	if (!access(final, F_OK) && rename(final, from)) {
		snprintf(why, why_size, "%s: %s", final, strerror(errno));
		goto fail;
	}
	if (rename(tmp, final)) {
		snprintf(why, why_size, "%s: %s", final, strerror(errno));
		rename(from, final);
		goto fail;
	}
	remove_dir(from);
	return 0;
fail:
	remove_dir(tmp);
	return -1;
}

static int cmd_merge(const char *self, const char *out, int ndirs, char **dirs)
{
	struct campaign_meta *metas = calloc((size_t)ndirs, sizeof(*metas));
	struct findings_index *idx = calloc((size_t)ndirs, sizeof(*idx));
	struct merged *g = NULL;
	unsigned ng = 0;
	char why[600], path[CAMPAIGN_PATH];
	int rc = EXIT_BAD;

	if (!metas || !idx)
		abort();
	for (int i = 0; i < ndirs; i++) {
		if (campaign_meta_read(dirs[i], &metas[i], why, sizeof(why))) {
			fprintf(stderr, "ptfuzz triage: %s is not a campaign directory (%s)\n", dirs[i], why);
			goto out;
		}
	}
	/* OUT: new, empty, or an earlier merge (its index.json says "merged") */
	snprintf(path, sizeof(path), "%s/index.json", out);
	char *old = read_file(path, NULL);
	bool is_merge = old && strstr(old, "\"merged\": true");
	free(old);
	DIR *od = opendir(out);
	if (od) {
		struct dirent *e;
		bool empty = true;
		while ((e = readdir(od)))
			empty &= !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
		closedir(od);
		if (!empty && !is_merge) {
			fprintf(stderr, "ptfuzz triage: %s holds something else than a merge of findings (no index.json with \"merged\": true)\n", out);
			goto out;
		}
	} else if (mkdir(out, 0755)) {
		fprintf(stderr, "ptfuzz triage: %s: %s\n", out, strerror(errno));
		goto out;
	}
	campaign_clean_temps(out);

	for (int i = 0; i < ndirs; i++) {
		index_load(dirs[i], &idx[i]);
		for (unsigned k = 0; k < idx[i].n; k++) {
			const struct finding *f = &idx[i].f[k];
			snprintf(path, sizeof(path), "%s/findings/%s/repro.ptt", dirs[i], f->dir);
			if (access(path, R_OK))	/* counted, but its directory never became whole */
				continue;
			struct merged *x = NULL;
			for (unsigned j = 0; j < ng && !x; j++)
				if (!strcmp(g[j].sig, f->sig))
					x = &g[j];
			if (!x) {
				g = realloc(g, (ng + 1) * sizeof(*g));
				if (!g)
					abort();
				x = &g[ng++];
				memset(x, 0, sizeof(*x));
				snprintf(x->sig, sizeof(x->sig), "%s", f->sig);
				snprintf(x->dir, sizeof(x->dir), "%s", f->dir);
				x->inv = f->inv;
			}
			x->src = realloc(x->src, (x->nsrc + 1) * sizeof(*x->src));
			if (!x->src)
				abort();
			struct merged_src *src = &x->src[x->nsrc++];
			src->dir = dirs[i];
			src->m = metas[i];
			src->f = f;
			const struct finding *best = x->src[x->best].f;
			/* minimized first, then the fewest ops, then the first campaign named */
			if (f->minimized > best->minimized || (f->minimized == best->minimized && f->ops < best->ops))
				x->best = x->nsrc - 1;
		}
	}
	/* does the kept reproducer show the signature under each variant it was found under? */
	for (unsigned j = 0; j < ng; j++) {
		const struct merged_src *b = &g[j].src[g[j].best];
		snprintf(path, sizeof(path), "%s/findings/%s/repro.ptt", b->dir, b->f->dir);
		for (unsigned i = 0; i < g[j].nsrc; i++)
			g[j].src[i].replays = g[j].inv && repro_shows(self, path, &g[j].src[i].m, g[j].sig);
	}

	unsigned failed = 0;
	for (unsigned j = 0; j < ng; j++) {
		if (merge_write(out, &g[j], why, sizeof(why))) {
			fprintf(stderr, "ptfuzz triage: %s\n", why);
			failed++;
		}
	}
	/* OUT/index.json */
	size_t cap = 256, n = 0;
	for (unsigned j = 0; j < ng; j++)
		cap += 256 + g[j].nsrc * 160;
	char *buf = malloc(cap);
	if (!buf)
		abort();
	n += (size_t)snprintf(buf + n, cap - n, "{\n\"merged\": true,\n\"findings\": [\n");
	for (unsigned j = 0; j < ng; j++) {
		uint64_t crashes = 0;
		for (unsigned i = 0; i < g[j].nsrc; i++)
			crashes += g[j].src[i].f->count;
		n += (size_t)snprintf(buf + n, cap - n, "{\"signature\": \"%s\", \"invariant\": \"I%u\", \"dir\": \"%s\", "
				      "\"crashes\": %llu, \"variants\": [", g[j].sig, g[j].inv, g[j].dir,
				      (unsigned long long)crashes);
		for (unsigned i = 0; i < g[j].nsrc; i++) {
			bool dup = false;
			for (unsigned k = 0; k < i; k++)
				dup |= !strcmp(g[j].src[k].m.variant, g[j].src[i].m.variant);
			if (!dup)
				n += (size_t)snprintf(buf + n, cap - n, "%s\"%s\"", i ? ", " : "",
						      g[j].src[i].m.variant[0] ? g[j].src[i].m.variant : "default");
		}
		n += (size_t)snprintf(buf + n, cap - n, "], \"campaigns\": %u}%s\n", g[j].nsrc, j + 1 < ng ? "," : "");
	}
	n += (size_t)snprintf(buf + n, cap - n, "]\n}\n");
	snprintf(path, sizeof(path), "%s/index.json", out);
	if (write_atomic(path, buf, n)) {
		fprintf(stderr, "ptfuzz triage: %s: %s\n", path, strerror(errno));
		failed++;
	}
	free(buf);

	printf("merge %s: %d campaigns, %u findings\n", out, ndirs, ng);
	printf("%-4s %-5s %-8s %-9s %-40s %s\n", "#", "inv", "crashes", "campaigns", "variants (repro.ptt replays)",
	       "signature");
	for (unsigned j = 0; j < ng; j++) {
		char vars[512] = "";
		size_t vl = 0;
		uint64_t crashes = 0;
		for (unsigned i = 0; i < g[j].nsrc; i++) {
			const struct merged_src *x = &g[j].src[i];
			crashes += x->f->count;
			vl += (size_t)snprintf(vars + vl, vl < sizeof(vars) ? sizeof(vars) - vl : 0, "%s%s(%s)", i ? "," : "",
					       x->m.variant[0] ? x->m.variant : "default", x->replays ? "yes" : "no");
		}
		char inv[8];
		snprintf(inv, sizeof(inv), "I%u", g[j].inv);
		printf("%-4u %-5s %-8llu %-9u %-40s %s\n", j + 1, inv, (unsigned long long)crashes, g[j].nsrc, vars,
		       g[j].sig);
	}
	cli_check_stdout();
	rc = failed ? EXIT_BAD : ng ? EXIT_VIOLATION : EXIT_CLEAN;
out:
	for (unsigned j = 0; j < ng; j++)
		free(g[j].src);
	free(g);
	for (int i = 0; i < ndirs; i++)
		index_free(&idx[i]);
	free(idx);
	free(metas);
	return rc;
}

int cmd_triage(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "variant", required_argument, NULL, 'v' },
		{ "merge", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *variant = NULL, *merge = NULL;
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
		case 'm':
			merge = optarg;
			break;
		default:
			return EXIT_BAD;
		}
	}
	if (optind == argc)
		return cli_usage_error("triage", "no DIR given");
	char self[CAMPAIGN_PATH];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[sl > 0 ? sl : 0] = 0;
	if (merge) {
		if (variant)
			return cli_usage_error("triage", "--merge keeps each campaign's variant: no --variant with it");
		return cmd_merge(self, merge, argc - optind, argv + optind);
	}
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
