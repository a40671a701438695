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
	fputs("usage: ptfuzz triage [--json] [-q] [--variant V] DIR\n"
	      "       ptfuzz triage [--json] [-q] --merge OUT DIR...\n"
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
	      "  --json        one JSON document on standard output instead of the table:\n"
	      "                {\"dir\", \"engine\", \"variant\", \"crashes\", \"findings\":\n"
	      "                [{\"signature\", \"invariant\", \"dir\", \"state\": \"still\"|\"fixed\",\n"
	      "                \"crash_bin\", \"repro_ptt\" (true, false, null: none), \"crashes_now\",\n"
	      "                \"crashes\"}], \"new\": [{\"signature\", \"crashes_now\"}], \"still\",\n"
	      "                \"no_finding\"}; with --merge {\"out\", \"campaigns\", \"findings\":\n"
	      "                [{\"signature\", \"invariant\", \"dir\", \"crashes\", \"repro_from\",\n"
	      "                \"found\": [{\"campaign\", \"engine\", \"variant\", \"crashes\",\n"
	      "                \"repro_replays\"}]}], \"write_errors\"}\n"
	      "  -q, --quiet   the verdict line only (\"N of M findings still reproduce\";\n"
	      "                with --merge the first line); errors are still printed\n"
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
			if (json) {
				fprintf(f, "%s{\"campaign\": ", i ? ", " : "");
				campaign_json_text(f, x->dir);
				fprintf(f, ", \"engine\": \"%s\", \"variant\": \"%s\", \"crashes\": %llu, "
					   "\"first_seen_utc\": \"%s\", \"repro_replays\": %s}",
					campaign_engine_name(x->m.engine), x->m.variant[0] ? x->m.variant : "default",
					(unsigned long long)x->f->count, when, x->replays ? "true" : "false");
			} else
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

/* the crashes of every campaign that found g */
static uint64_t merged_crashes(const struct merged *g)
{
	uint64_t crashes = 0;

	for (unsigned i = 0; i < g->nsrc; i++)
		crashes += g->src[i].f->count;
	return crashes;
}

static const char *variant_name(const struct campaign_meta *m)
{
	return m->variant[0] ? m->variant : "default";
}

/* found.json of one merged finding: every campaign it was found by */
static int write_found_json(const char *path, const struct merged *g)
{
	const struct merged_src *b = &g->src[g->best];
	char when[32];
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, "{\n\"signature\": \"%s\",\n\"invariant\": \"I%u\",\n\"crashes\": %llu,\n\"repro_from\": ", g->sig,
		g->inv, (unsigned long long)merged_crashes(g));
	campaign_json_text(f, b->dir);	/* a campaign directory's name can hold anything */
	fputs(",\n\"found\": [\n", f);
	for (unsigned i = 0; i < g->nsrc; i++) {
		const struct merged_src *x = &g->src[i];
		utc_text(x->f->first_seen, when, sizeof(when));
		fputs("{\"campaign\": ", f);
		campaign_json_text(f, x->dir);
		fprintf(f, ", \"engine\": \"%s\", \"variant\": \"%s\", \"crashes\": %llu, "
			   "\"first_seen_utc\": \"%s\", \"ops\": %u, \"repro_replays\": %s}%s\n",
			campaign_engine_name(x->m.engine), variant_name(&x->m),
			(unsigned long long)x->f->count, when, x->f->ops, x->replays ? "true" : "false",
			i + 1 < g->nsrc ? "," : "");
	}
	fputs("]\n}\n", f);
	return fclose(f) ? -1 : 0;
}

/* OUT/NAME replaced by the whole directory tmp; the old one goes only once the new one is in place */
static int replace_dir(const char *out, const char *name, const char *tmp, char *why, size_t why_size)
{
	char final[CAMPAIGN_PATH], old[CAMPAIGN_PATH];

	snprintf(final, sizeof(final), "%s/%s", out, name);
	snprintf(old, sizeof(old), "%s/.old-%s-%ld", out, name, (long)getpid());
	if (!access(final, F_OK) && rename(final, old)) {
		snprintf(why, why_size, "%s: %s", final, strerror(errno));
		return -1;
	}
	if (rename(tmp, final)) {
		snprintf(why, why_size, "%s: %s", final, strerror(errno));
		rename(old, final);
		return -1;
	}
	remove_dir(old);
	return 0;
}

/* OUT/SAFE/ for one merged finding, built under a temporary name and renamed whole */
static int merge_write(const char *out, const struct merged *g, char *why, size_t why_size)
{
	char tmp[CAMPAIGN_PATH], from[CAMPAIGN_PATH], to[CAMPAIGN_PATH];
	const struct merged_src *b = &g->src[g->best];
	static const char *const files[] = { "repro.ptt", "crash.bin", "report.txt", "report.json" };

	snprintf(tmp, sizeof(tmp), "%s/.tmp-%s-%ld", out, g->dir, (long)getpid());
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
	if (write_found_json(to, g)) {
		snprintf(why, why_size, "%s: %s", to, strerror(errno));
		goto fail;
	}
	if (replace_dir(out, g->dir, tmp, why, why_size))
		goto fail;
	return 0;
fail:
	remove_dir(tmp);
	return -1;
}

/* OUT: new, empty, or an earlier merge (its index.json says "merged"); created if new */
static int merge_out_check(const char *out)
{
	char path[CAMPAIGN_PATH];

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
			return -1;
		}
	} else if (mkdir(out, 0755)) {
		fprintf(stderr, "ptfuzz triage: %s: %s\n", out, strerror(errno));
		return -1;
	}
	return 0;
}

/* the merged finding of sig, added if new */
static struct merged *merged_get(struct merged **g, unsigned *ng, const struct finding *f)
{
	for (unsigned j = 0; j < *ng; j++)
		if (!strcmp((*g)[j].sig, f->sig))
			return &(*g)[j];
	*g = realloc(*g, (*ng + 1) * sizeof(**g));
	if (!*g)
		abort();
	struct merged *x = &(*g)[(*ng)++];
	memset(x, 0, sizeof(*x));
	snprintf(x->sig, sizeof(x->sig), "%s", f->sig);
	snprintf(x->dir, sizeof(x->dir), "%s", f->dir);
	x->inv = f->inv;
	return x;
}

/* campaign dir's finding f as one more source of its merged finding x */
static void merged_add(struct merged *x, const char *dir, const struct campaign_meta *m, const struct finding *f)
{
	x->src = realloc(x->src, (x->nsrc + 1) * sizeof(*x->src));
	if (!x->src)
		abort();
	struct merged_src *src = &x->src[x->nsrc++];
	src->dir = dir;
	src->m = *m;
	src->f = f;
	src->replays = false;
	const struct finding *best = x->src[x->best].f;
	/* minimized first, then the fewest ops, then the first campaign named */
	if (f->minimized > best->minimized || (f->minimized == best->minimized && f->ops < best->ops))
		x->best = x->nsrc - 1;
}

/* every whole finding of every campaign, grouped by signature */
static void merge_collect(int ndirs, char **dirs, const struct campaign_meta *metas,
			  const struct findings_index *idx, struct merged **g, unsigned *ng)
{
	char path[CAMPAIGN_PATH];

	for (int i = 0; i < ndirs; i++) {
		for (unsigned k = 0; k < idx[i].n; k++) {
			const struct finding *f = &idx[i].f[k];
			snprintf(path, sizeof(path), "%s/findings/%s/repro.ptt", dirs[i], f->dir);
			if (access(path, R_OK))	/* counted, but its directory never became whole */
				continue;
			merged_add(merged_get(g, ng, f), dirs[i], &metas[i], f);
		}
	}
}

/* does the kept reproducer show the signature under each variant it was found under? */
static void merge_check_replays(const char *self, struct merged *g, unsigned ng)
{
	char path[CAMPAIGN_PATH];

	for (unsigned j = 0; j < ng; j++) {
		const struct merged_src *b = &g[j].src[g[j].best];
		snprintf(path, sizeof(path), "%s/findings/%s/repro.ptt", b->dir, b->f->dir);
		for (unsigned i = 0; i < g[j].nsrc; i++)
			g[j].src[i].replays = g[j].inv && repro_shows(self, path, &g[j].src[i].m, g[j].sig);
	}
}

/* OUT/index.json: one line per merged finding, its variants once each */
static int merge_index_write(const char *out, const struct merged *g, unsigned ng)
{
	char path[CAMPAIGN_PATH];
	size_t cap = 256, n = 0;

	for (unsigned j = 0; j < ng; j++)
		cap += 256 + g[j].nsrc * 160;
	char *buf = malloc(cap);
	if (!buf)
		abort();
	n += (size_t)snprintf(buf + n, cap - n, "{\n\"merged\": true,\n\"findings\": [\n");
	for (unsigned j = 0; j < ng; j++) {
		n += (size_t)snprintf(buf + n, cap - n, "{\"signature\": \"%s\", \"invariant\": \"I%u\", \"dir\": \"%s\", "
				      "\"crashes\": %llu, \"variants\": [", g[j].sig, g[j].inv, g[j].dir,
				      (unsigned long long)merged_crashes(&g[j]));
		for (unsigned i = 0; i < g[j].nsrc; i++) {
			bool dup = false;
			for (unsigned k = 0; k < i; k++)
				dup |= !strcmp(g[j].src[k].m.variant, g[j].src[i].m.variant);
			if (!dup)
				n += (size_t)snprintf(buf + n, cap - n, "%s\"%s\"", i ? ", " : "",
						      variant_name(&g[j].src[i].m));
		}
		n += (size_t)snprintf(buf + n, cap - n, "], \"campaigns\": %u}%s\n", g[j].nsrc, j + 1 < ng ? "," : "");
	}
	n += (size_t)snprintf(buf + n, cap - n, "]\n}\n");
	snprintf(path, sizeof(path), "%s/index.json", out);
	int rc = write_atomic(path, buf, n);
	if (rc)
		fprintf(stderr, "ptfuzz triage: %s: %s\n", path, strerror(errno));
	free(buf);
	return rc;
}

static void merge_text(const char *out, int ndirs, const struct merged *g, unsigned ng, bool quiet)
{
	printf("merge %s: %d campaigns, %u findings\n", out, ndirs, ng);
	if (quiet)
		return;
	printf("%-4s %-5s %-8s %-9s %-40s %s\n", "#", "inv", "crashes", "campaigns", "variants (repro.ptt replays)",
	       "signature");
	for (unsigned j = 0; j < ng; j++) {
		char vars[512] = "", inv[8];
		size_t vl = 0;
		for (unsigned i = 0; i < g[j].nsrc; i++) {
			const struct merged_src *x = &g[j].src[i];
			vl += (size_t)snprintf(vars + vl, vl < sizeof(vars) ? sizeof(vars) - vl : 0, "%s%s(%s)", i ? "," : "",
					       variant_name(&x->m), x->replays ? "yes" : "no");
		}
		snprintf(inv, sizeof(inv), "I%u", g[j].inv);
		printf("%-4u %-5s %-8llu %-9u %-40s %s\n", j + 1, inv, (unsigned long long)merged_crashes(&g[j]),
		       g[j].nsrc, vars, g[j].sig);
	}
}

/* "I3", or "engine-crash" for a crash of the harness itself (as status.json names it) */
static void json_invariant(struct json *j, unsigned inv)
{
	char s[8];

	snprintf(s, sizeof(s), "I%u", inv);
	json_string(j, inv ? s : "engine-crash");
}

static void merge_json(const char *out, int ndirs, const struct merged *g, unsigned ng, unsigned failed)
{
	struct json j;

	json_init(&j, stdout);
	json_object_begin(&j);
	json_key(&j, "out");
	json_string(&j, out);
	json_key(&j, "campaigns");
	json_u64(&j, (uint64_t)ndirs);
	json_key(&j, "findings");
	json_array_begin(&j);
	for (unsigned k = 0; k < ng; k++) {
		json_object_begin(&j);
		json_key(&j, "signature");
		json_string(&j, g[k].sig);
		json_key(&j, "invariant");
		json_invariant(&j, g[k].inv);
		json_key(&j, "dir");
		json_string(&j, g[k].dir);
		json_key(&j, "crashes");
		json_u64(&j, merged_crashes(&g[k]));
		json_key(&j, "repro_from");
		json_string(&j, g[k].src[g[k].best].dir);
		json_key(&j, "found");
		json_array_begin(&j);
		for (unsigned i = 0; i < g[k].nsrc; i++) {
			const struct merged_src *x = &g[k].src[i];
			json_object_begin(&j);
			json_key(&j, "campaign");
			json_string(&j, x->dir);
			json_key(&j, "engine");
			json_string(&j, campaign_engine_name(x->m.engine));
			json_key(&j, "variant");
			json_string(&j, variant_name(&x->m));
			json_key(&j, "crashes");
			json_u64(&j, x->f->count);
			json_key(&j, "repro_replays");
			json_bool(&j, x->replays);
			json_object_end(&j);
		}
		json_array_end(&j);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_key(&j, "write_errors");
	json_u64(&j, failed);
	json_object_end(&j);
	json_end(&j);
}

static int cmd_merge(const char *self, const char *out, int ndirs, char **dirs, bool as_json, bool quiet)
{
	struct campaign_meta *metas = calloc((size_t)ndirs, sizeof(*metas));
	struct findings_index *idx = calloc((size_t)ndirs, sizeof(*idx));
	struct merged *g = NULL;
	unsigned ng = 0, failed = 0;
	char why[600];
	int rc = EXIT_BAD;

	if (!metas || !idx)
		abort();
	for (int i = 0; i < ndirs; i++) {
		if (campaign_meta_read(dirs[i], &metas[i], why, sizeof(why))) {
			fprintf(stderr, "ptfuzz triage: %s is not a campaign directory (%s)\n", dirs[i], why);
			goto out;
		}
	}
	if (merge_out_check(out))
		goto out;
	campaign_clean_temps(out);
	for (int i = 0; i < ndirs; i++)
		index_load(dirs[i], &idx[i]);
	merge_collect(ndirs, dirs, metas, idx, &g, &ng);
	merge_check_replays(self, g, ng);
	for (unsigned j = 0; j < ng; j++) {
		if (merge_write(out, &g[j], why, sizeof(why))) {
			fprintf(stderr, "ptfuzz triage: %s\n", why);
			failed++;
		}
	}
	if (merge_index_write(out, g, ng))
		failed++;
	if (as_json)
		merge_json(out, ndirs, g, ng, failed);
	else
		merge_text(out, ndirs, g, ng, quiet);
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

/* ---- re-triage ---- */

struct retriaged {
	const struct finding *f;
	bool have_crash;		/* its crash.bin could be read */
	bool crash_ok;			/* and shows its signature now */
	bool repro_ok;			/* its repro.ptt does */
	unsigned now;			/* kept crashes that do */
	bool still;			/* it reproduces one way or another */
};

struct retriage {
	const char *dir;
	struct campaign_meta m;		/* the variant it is re-triaged under */
	struct findings_index idx;
	unsigned ncrash;		/* crashes the engine kept */
	unsigned none;			/* of which show no finding now */
	struct tally *t;		/* the signatures the kept crashes show now */
	unsigned nt;
	struct retriaged *r;		/* [idx.n] */
	unsigned still, fresh;		/* findings that still reproduce; signatures no finding has */
};

static bool shows_finding(const struct triage_result *r)
{
	return r->kind == TRIAGE_FINDING || r->kind == TRIAGE_ENGINE_CRASH;
}

/* replay the crash file path under m into r; false if it cannot be read */
static bool triage_file(const struct campaign_meta *m, const char *path, struct triage_result *r)
{
	size_t len;
	char *data = read_file(path, &len);

	if (!data)
		return false;
	triage_crash(m, (uint8_t *)data, len, 60, r);
	free(data);
	return true;
}

/* what every crash the engine kept shows now */
static void tally_crashes(struct retriage *rt)
{
	char **list = crash_list(rt->dir, &rt->m, &rt->ncrash);

	for (unsigned i = 0; i < rt->ncrash; i++) {
		struct triage_result r;
		if (!triage_file(&rt->m, list[i], &r))
			continue;
		if (shows_finding(&r))
			tally_get(&rt->t, &rt->nt, r.sig)->now++;
		else
			rt->none++;
	}
	crash_list_free(list, rt->ncrash);
}

static unsigned tally_now(const struct retriage *rt, const char *sig)
{
	for (unsigned k = 0; k < rt->nt; k++)
		if (!strcmp(rt->t[k].sig, sig))
			return rt->t[k].now;
	return 0;
}

/* does finding f still reproduce: its crash.bin, its repro.ptt, the kept crashes? */
static void retriage_finding(const struct retriage *rt, const char *self, const struct finding *f,
			     struct retriaged *x)
{
	char path[CAMPAIGN_PATH];
	struct triage_result r;

	x->f = f;
	snprintf(path, sizeof(path), "%s/findings/%s/crash.bin", rt->dir, f->dir);
	x->have_crash = triage_file(&rt->m, path, &r);
	x->crash_ok = x->have_crash && shows_finding(&r) && !strcmp(r.sig, f->sig);
	snprintf(path, sizeof(path), "%s/findings/%s/repro.ptt", rt->dir, f->dir);
	x->repro_ok = f->inv && !access(path, R_OK) && repro_shows(self, path, &rt->m, f->sig);
	x->now = tally_now(rt, f->sig);
	x->still = x->crash_ok || x->repro_ok || x->now;
}

static void retriage_run(struct retriage *rt, const char *self)
{
	tally_crashes(rt);
	rt->r = calloc(rt->idx.n ? rt->idx.n : 1, sizeof(*rt->r));
	if (!rt->r)
		abort();
	for (unsigned i = 0; i < rt->idx.n; i++) {
		retriage_finding(rt, self, &rt->idx.f[i], &rt->r[i]);
		rt->still += rt->r[i].still;
	}
	for (unsigned k = 0; k < rt->nt; k++)
		rt->fresh += !index_find(&rt->idx, rt->t[k].sig);
}

/* -q: the verdict line only */
static void retriage_text(struct retriage *rt, bool quiet)
{
	if (!quiet) {
		printf("triage %s: %s, variant %s: %u crashes kept, %u findings\n", rt->dir,
		       campaign_engine_name(rt->m.engine), variant_name(&rt->m), rt->ncrash, rt->idx.n);
		printf("%-6s %-9s %-9s %-9s  %s\n", "state", "crash.bin", "repro.ptt", "crashes", "signature");
		for (unsigned i = 0; i < rt->idx.n; i++) {
			const struct retriaged *x = &rt->r[i];
			char ratio[32];
			snprintf(ratio, sizeof(ratio), "%u/%llu", x->now, (unsigned long long)x->f->count);
			printf("%-6s %-9s %-9s %-9s  %s\n", x->still ? "STILL" : "fixed",
			       x->have_crash ? (x->crash_ok ? "yes" : "no") : "missing",
			       x->f->inv ? (x->repro_ok ? "yes" : "no") : "-", ratio, x->f->sig);
		}
		for (unsigned k = 0; k < rt->nt; k++)
			if (!index_find(&rt->idx, rt->t[k].sig))
				printf("%-6s %-9s %-9s %-9u  %s\n", "NEW", "-", "-", rt->t[k].now, rt->t[k].sig);
	}
	printf("%u of %u findings still reproduce%s", rt->still, rt->idx.n, rt->fresh ? "" : "\n");
	if (rt->fresh)
		printf("; %u signatures are new (rerun ptfuzz campaign on DIR to triage them into findings)\n", rt->fresh);
	if (rt->none && !quiet)
		printf("%u kept crashes show no finding now\n", rt->none);
}

static void retriaged_json(struct json *j, const struct retriaged *x)
{
	json_object_begin(j);
	json_key(j, "signature");
	json_string(j, x->f->sig);
	json_key(j, "invariant");
	json_invariant(j, x->f->inv);
	json_key(j, "dir");
	json_string(j, x->f->dir);
	json_key(j, "state");
	json_string(j, x->still ? "still" : "fixed");
	json_key(j, "crash_bin");		/* null: missing */
	if (x->have_crash)
		json_bool(j, x->crash_ok);
	else
		json_null(j);
	json_key(j, "repro_ptt");		/* null: an engine crash has none */
	if (x->f->inv)
		json_bool(j, x->repro_ok);
	else
		json_null(j);
	json_key(j, "crashes_now");
	json_u64(j, x->now);
	json_key(j, "crashes");
	json_u64(j, x->f->count);
	json_object_end(j);
}

static void retriage_json(struct retriage *rt)
{
	struct json j;

	json_init(&j, stdout);
	json_object_begin(&j);
	json_key(&j, "dir");
	json_string(&j, rt->dir);
	json_key(&j, "engine");
	json_string(&j, campaign_engine_name(rt->m.engine));
	json_key(&j, "variant");
	json_string(&j, variant_name(&rt->m));
	json_key(&j, "crashes");
	json_u64(&j, rt->ncrash);
	json_key(&j, "findings");
	json_array_begin(&j);
	for (unsigned i = 0; i < rt->idx.n; i++)
		retriaged_json(&j, &rt->r[i]);
	json_array_end(&j);
	json_key(&j, "new");
	json_array_begin(&j);
	for (unsigned k = 0; k < rt->nt; k++) {
		if (index_find(&rt->idx, rt->t[k].sig))
			continue;
		json_object_begin(&j);
		json_key(&j, "signature");
		json_string(&j, rt->t[k].sig);
		json_key(&j, "crashes_now");
		json_u64(&j, rt->t[k].now);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_key(&j, "still");
	json_u64(&j, rt->still);
	json_key(&j, "no_finding");
	json_u64(&j, rt->none);
	json_object_end(&j);
	json_end(&j);
}

struct triage_opts {
	const char *variant;		/* --variant V, NULL: the campaign's */
	const char *merge;		/* --merge OUT */
	bool json, quiet;
};

/* @return : -1 to go on, or the exit status (help, a usage error) */
static int triage_parse(int argc, char **argv, struct triage_opts *o)
{
	static const struct option longopts[] = {
		{ "variant", required_argument, NULL, 'v' },
		{ "merge", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	optind = 1;
	while ((opt = cli_getopt("triage", argc, argv, "qh", longopts)) != -1) {
		switch (opt) {
		case 'h':
			help_triage(stdout);
			return EXIT_CLEAN;
		case 'v':
			if (strcmp(optarg, "default") && mm_variant_lookup(optarg) < 0)
				return cli_usage_error("triage", "unknown variant '%s' (ptfuzz variants lists them)", optarg);
			o->variant = optarg;
			break;
		case 'm':
			o->merge = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		default:
			return EXIT_BAD;
		}
	}
	if (optind == argc)
		return cli_usage_error("triage", "no DIR given");
	if (o->merge && o->variant)
		return cli_usage_error("triage", "--merge keeps each campaign's variant: no --variant with it");
	if (!o->merge && optind + 1 != argc)
		return cli_usage_error("triage", "one DIR, got %d arguments", argc - optind);
	return -1;
}

int cmd_triage(int argc, char **argv)
{
	struct triage_opts o = { .variant = NULL };
	struct retriage rt = { .dir = NULL };
	char self[CAMPAIGN_PATH], why[512];
	int rc = triage_parse(argc, argv, &o);

	if (rc >= 0)
		return rc;
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[sl > 0 ? sl : 0] = 0;
	if (o.merge)
		return cmd_merge(self, o.merge, argc - optind, argv + optind, o.json, o.quiet);
	rt.dir = argv[optind];
	if (campaign_meta_read(rt.dir, &rt.m, why, sizeof(why))) {
		fprintf(stderr, "ptfuzz triage: %s is not a campaign directory (%s)\n", rt.dir, why);
		return EXIT_BAD;
	}
	if (o.variant)
		snprintf(rt.m.variant, sizeof(rt.m.variant), "%s", strcmp(o.variant, "default") ? o.variant : "");
	index_load(rt.dir, &rt.idx);
	retriage_run(&rt, self);
	if (o.json)
		retriage_json(&rt);
	else
		retriage_text(&rt, o.quiet);
	free(rt.r);
	free(rt.t);
	index_free(&rt.idx);
	cli_check_stdout();
	return rt.still || rt.fresh ? EXIT_VIOLATION : EXIT_CLEAN;
}
