// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_rule_coverage.c - every checker rule has a trace that needs it.
 *
 *   test_rule_coverage ROOT
 *
 * The rules are pt_checker_rules() (invariant id + tag, the stable part of a
 * signature).  The list is held against the source: every tag literal of
 * engine/check/check.c, every literal tag the model reports through
 * pt_checker_report() (engine/mm, engine/arm64, engine/model: I10, I11) and every I9 contract tag of an
 * mm_warn() call (the same three) is a listed rule, and every listed rule is
 * reported somewhere.  Then each rule must fire on some bad trace (replayed
 * with the default model) that has a clean twin: NAME.good.ptt beside
 * NAME.bad.ptt, or the file a `# twin: FILE` line names, on which that rule
 * does not fire.  The pairs are arch-level in corpus/regressions/arch/ and
 * ops-level in corpus/mm/contract/ (a caller breaking a contract of the
 * model's routines, the I9 WARNs, I10 and I11).  A rule that no pair
 * exercises could be loosened without any verdict changing; the test lists
 * each one and fails.  The allow-list below would hold, with the reason, a
 * rule no trace can reach; it is empty.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "session.h"
#include "trace.h"

#define MAX_FILES 512
#define MAX_RULES 128
#define TWIN_MAX 300		/* a twin's file name, with its NUL */

/* The directories of bad/good pairs, under ROOT. */
static const char *const pair_dirs[] = { "corpus/regressions/arch", "corpus/mm/contract" };

/* Rules that no trace can fire, each with the reason; ends with a NULL tag. */
static const struct {
	unsigned id;
	const char *tag;
	const char *why;
} allowed[] = {
	/* none: the I10 reference and the I11 deadlock, once allowed here (an arch-level trace
	 * runs no model routine), have ops-level pairs in corpus/mm/contract/ */
	{ 0, NULL, NULL },
};

struct rule_state {
	unsigned id;
	const char *tag;
	char by[256];		/* the bad trace that fires it */
	bool in_source;
};

static int failures;

static void fail(const char *fmt, const char *a, const char *b)
{
	printf("FAIL ");
	printf(fmt, a, b);
	printf("\n");
	failures++;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	if (!s || fread(s, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(s);
		return NULL;
	}
	s[n] = 0;
	fclose(f);
	return s;
}

static struct rule_state *find_rule(struct rule_state *r, unsigned n, unsigned id, const char *tag, size_t len)
{
	for (unsigned i = 0; i < n; i++)
		if ((!id || r[i].id == id) && strlen(r[i].tag) == len && !strncmp(r[i].tag, tag, len))
			return &r[i];
	return NULL;
}

static bool is_inv_kind(const char *s, size_t len)
{
	for (unsigned i = 1; i < PT_INV_COUNT; i++)
		if (strlen(pt_inv_kind(i)) == len && !strncmp(pt_inv_kind(i), s, len))
			return true;
	return false;
}

/* A tag literal at p ("word" or "word-word..."): its length inside the quotes, or 0; with
 * need_dash, only kebab-case ones (check.c's other literals are sentences and formats);
 * without, an underscore is a letter too (the model's tags name routines: map_mem-...). */
static size_t tag_literal(const char *p, bool need_dash)
{
	if (*p != '"')
		return 0;
	size_t i = 1;
	bool dash = false;
	for (; p[i] && p[i] != '"'; i++) {
		if (p[i] == '-' && i > 1 && p[i - 1] != '-')
			dash = true;
		else if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9') ||
			   (p[i] == '_' && !need_dash)))
			return 0;
	}
	return p[i] == '"' && i > 1 && (dash || !need_dash) && p[i - 1] != '-' ? i - 1 : 0;
}

static size_t kebab(const char *p) { return tag_literal(p, true); }

/* engine/check/check.c: every tag literal is a listed rule (the table itself included) */
static void scan_check_c(const char *root, struct rule_state *r, unsigned n)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/engine/check/check.c", root);
	char *s = slurp(path);
	if (!s) {
		fail("cannot read %s%s", path, "");
		return;
	}
	for (char *p = s; *p; p++) {
		size_t len = kebab(p);
		if (!len || is_inv_kind(p + 1, len))
			continue;
		struct rule_state *x = find_rule(r, n, 0, p + 1, len);
		char tag[128];
		snprintf(tag, sizeof(tag), "%.*s", (int)len, p + 1);
		if (!x)
			fail("engine/check/check.c reports tag \"%s\" that pt_checker_rules() does not list%s", tag, "");
		p += len + 1;
	}
	free(s);
	/* reported somewhere: beyond the table, the tag appears again in the file */
	s = slurp(path);
	for (unsigned i = 0; i < n; i++) {
		char q[140];
		snprintf(q, sizeof(q), "\"%s\"", r[i].tag);
		const char *first = strstr(s, q);
		if (first && strstr(first + 1, q))
			r[i].in_source = true;
	}
	free(s);
}

/* A listed rule id/tag reported by FILE of the model (engine/{mm,arm64,model}): mark it, or fail */
static void mm_reports(struct rule_state *r, unsigned n, const char *file, unsigned id, const char *t, size_t len)
{
	struct rule_state *x = find_rule(r, n, id, t, len);
	char tag[128];
	snprintf(tag, sizeof(tag), "I%u/%.*s", id, (int)len, t);
	if (!x)
		fail("%s reports %s, which pt_checker_rules() does not list", file, tag);
	else
		x->in_source = true;
}

/* the model: mm_warn(mm, t, "tag", ...), the I9 contract WARNs; the tag is the third argument */
static void scan_mm_warn(const char *file, const char *s, struct rule_state *r, unsigned n)
{
	static const char call[] = "mm_warn(";
	for (const char *p = strstr(s, call); p; p = strstr(p + 1, call)) {
		const char *a = p + strlen(call);
		if (!strncmp(a, "struct ", 7))
			continue;	/* the definition */
		for (unsigned commas = 0; *a && *a != ';' && commas < 2; a++)
			commas += *a == ',';
		while (*a == ' ' || *a == '\t' || *a == '\n')
			a++;
		size_t len = tag_literal(a, false);
		if (!len) {
			fail("%s: an mm_warn() call whose tag is no literal (%.40s)", file, p);
			continue;
		}
		mm_reports(r, n, file, PT_I9, a + 1, len);
	}
}

/* One directory of the model: its checks, pt_checker_report(mm->c, PT_In, "tag", ...), and its WARNs */
static void scan_model_dir(const char *root, const char *sub, struct rule_state *r, unsigned n)
{
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s/%s", root, sub);
	DIR *d = opendir(dir);
	if (!d) {
		fail("cannot read %s%s", dir, "");
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l < 3 || strcmp(e->d_name + l - 2, ".c"))
			continue;
		char path[1400], file[300];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		snprintf(file, sizeof(file), "%s/%s", sub, e->d_name);
		char *s = slurp(path);
		for (char *p = s ? strstr(s, "pt_checker_report(") : NULL; p; p = strstr(p + 1, "pt_checker_report(")) {
			char *q = strstr(p, "PT_I");
			if (!q)
				break;
			unsigned id = (unsigned)atoi(q + 4);
			char *t = strchr(q, ',');
			while (t && (*t == ',' || *t == ' ' || *t == '\t' || *t == '\n'))
				t++;
			size_t len = t ? tag_literal(t, false) : 0;
			if (!len)
				continue;	/* a tag passed in: mm_warn()'s, scanned below */
			mm_reports(r, n, file, id, t + 1, len);
		}
		if (s)
			scan_mm_warn(file, s, r, n);
		free(s);
	}
	closedir(d);
}

/* The model, engine/mm, engine/arm64 and engine/model */
static void scan_mm(const char *root, struct rule_state *r, unsigned n)
{
	static const char *const dirs[] = { "engine/mm", "engine/arm64", "engine/model" };
	for (unsigned i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		scan_model_dir(root, dirs[i], r, n);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool file_exists(const char *dir, const char *name)
{
	char path[1400];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	if (f)
		fclose(f);
	return f != NULL;
}

/* Replay dir/name with the default model; the session (NULL if unreadable), the `# twin:` file
 * into twin (TWIN_MAX bytes) if there is such a line and twin is not NULL. */
static struct pt_session *replay(const char *dir, const char *name, char *twin)
{
	char path[1400];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	struct pt_error err;
	struct pt_event ev;
	struct pt_reader *rd = pt_reader_open(path, &err);
	if (!rd) {
		fail("%s%s", err.msg, "");
		return NULL;
	}
	struct pt_session *s = pt_session_new(pt_reader_header(rd));
	int rc;
	while ((rc = pt_reader_next(rd, &ev, &err)) == 1) {
		if (twin && ev.kind == PT_EV_COMMENT && ev.text && !strncmp(ev.text, "twin:", 5))
			sscanf(ev.text + 5, " %299s", twin);	/* TWIN_MAX - 1 */
		pt_session_event(s, &ev);
	}
	if (rc < 0)
		fail("%s%s", err.msg, "");
	pt_session_finish(s);
	pt_reader_close(rd);
	return s;
}

/* The rule violation v fires: its tag, the third part of I<id>/<kind>/<tag>/<site> (the kind
 * has a slash of its own), as *len bytes at the return; NULL if the signature has no tag. */
static const char *violation_tag(const struct pt_violation *v, size_t *len)
{
	const char *t = strchr(v->signature, '/');
	if (!t)
		return NULL;
	t += 1 + strlen(pt_inv_kind(v->id));
	if (*t != '/')
		return NULL;
	t++;
	const char *end = strchr(t, '/');
	*len = end ? (size_t)(end - t) : strlen(t);
	return t;
}

static bool session_fires(const struct pt_session *s, const struct rule_state *x)
{
	for (unsigned i = 0; s && i < pt_session_nviolations(s); i++) {
		const struct pt_violation *v = pt_session_violation(s, i);
		size_t len;
		const char *t = violation_tag(v, &len);
		if (t && v->id == x->id && strlen(x->tag) == len && !strncmp(x->tag, t, len))
			return true;
	}
	return false;
}

/* Replay one bad trace; mark the rules it fires if it has a twin on which they do not fire. */
static void replay_bad(const char *dir, const char *rel, const char *name, struct rule_state *r, unsigned n)
{
	char twin[TWIN_MAX] = "";
	struct pt_session *s = replay(dir, name, twin);
	if (!s)
		return;
	if (!twin[0]) {
		snprintf(twin, sizeof(twin), "%.*s.good.ptt", (int)(strlen(name) - strlen(".bad.ptt")), name);
	}
	bool paired = file_exists(dir, twin);
	struct pt_session *good = paired ? replay(dir, twin, NULL) : NULL;
	for (unsigned i = 0; i < pt_session_nviolations(s); i++) {
		const struct pt_violation *v = pt_session_violation(s, i);
		size_t len;
		const char *t = violation_tag(v, &len);
		if (!t)
			continue;
		struct rule_state *x = find_rule(r, n, v->id, t, len);
		if (!x) {
			fail("%s fires %s, a rule pt_checker_rules() does not list", name, v->signature);
			continue;
		}
		if (good && session_fires(good, x)) {
			printf("FAIL %s fires I%u/%s, and so does its twin %s\n", name, x->id, x->tag, twin);
			failures++;
			continue;
		}
		/* the first pair that fires it, or the pair named after it (TAG.bad.ptt, In-TAG.bad.ptt) */
		char own[160];
		snprintf(own, sizeof(own), "I%u-%s.bad.ptt", x->id, x->tag);
		bool named = !strcmp(name, own) || (!strncmp(name, x->tag, strlen(x->tag)) &&
						     !strcmp(name + strlen(x->tag), ".bad.ptt"));
		if (good && (!x->by[0] || named))
			snprintf(x->by, sizeof(x->by), "%s/%s (twin %s)", rel, name, twin);
	}
	if (!paired)
		printf("note %s has no clean twin (%s): it covers nothing\n", name, twin);
	if (good)
		pt_session_free(good);
	pt_session_free(s);
}

/* Every NAME.bad.ptt of ROOT/rel, in name order */
static void replay_dir(const char *root, const char *rel, struct rule_state *r, unsigned n)
{
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s/%s", root, rel);
	DIR *d = opendir(dir);
	if (!d) {
		fail("cannot open %s%s", dir, "");
		return;
	}
	char *names[MAX_FILES];
	unsigned nf = 0;
	struct dirent *e;
	while ((e = readdir(d)) && nf < MAX_FILES) {
		size_t l = strlen(e->d_name);
		if (l > 8 && !strcmp(e->d_name + l - 8, ".bad.ptt"))
			names[nf++] = strdup(e->d_name);
	}
	closedir(d);
	if (!nf)
		fail("%s holds no bad trace%s", dir, "");
	qsort(names, nf, sizeof(names[0]), cmp_str);
	for (unsigned i = 0; i < nf; i++) {
		replay_bad(dir, rel, names[i], r, n);
		free(names[i]);
	}
}


int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_rule_coverage ROOT\n");
		return 2;
	}
	const char *root = argv[1];
	unsigned n;
	const struct pt_rule *rules = pt_checker_rules(&n);
	static struct rule_state r[MAX_RULES];
	if (n > MAX_RULES)
		return 2;
	for (unsigned i = 0; i < n; i++) {
		r[i].id = rules[i].id;
		r[i].tag = rules[i].tag;
		for (unsigned j = 0; j < i; j++)
			if (r[j].id == r[i].id && !strcmp(r[j].tag, r[i].tag))
				fail("pt_checker_rules() lists %s twice%s", r[i].tag, "");
	}
	scan_check_c(root, r, n);
	scan_mm(root, r, n);
	for (unsigned i = 0; i < n; i++)
		if (!r[i].in_source)
			fail("pt_checker_rules() lists %s, which nothing reports%s", r[i].tag, "");

	for (unsigned i = 0; i < sizeof(pair_dirs) / sizeof(pair_dirs[0]); i++)
		replay_dir(root, pair_dirs[i], r, n);

	unsigned covered = 0, uncovered = 0;
	for (unsigned i = 0; i < n; i++) {
		const char *why = NULL;
		for (unsigned k = 0; allowed[k].tag; k++)
			if (allowed[k].id == r[i].id && !strcmp(allowed[k].tag, r[i].tag))
				why = allowed[k].why;
		if (r[i].by[0]) {
			covered++;
			printf("ok   I%u/%s: %s\n", r[i].id, r[i].tag, r[i].by);
			if (why)
				printf("FAIL I%u/%s is allow-listed but covered: drop it from the allow-list\n", r[i].id,
				       r[i].tag), failures++;
		} else if (why) {
			printf("skip I%u/%s: %s\n", r[i].id, r[i].tag, why);
		} else {
			uncovered++;
			printf("FAIL I%u/%s: no bad trace of corpus/regressions/arch or corpus/mm/contract (with a "
			       "clean twin) fires it\n", r[i].id, r[i].tag);
			failures++;
		}
	}
	printf("%u rules: %u covered by a bad/good pair, %u uncovered, %zu allow-listed\n", n, covered, uncovered,
	       sizeof(allowed) / sizeof(allowed[0]) - 1);
	return failures ? 1 : 0;
}
