// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_rule_coverage.c - every checker rule has a trace that needs it.
 *
 *   test_rule_coverage ROOT
 *
 * The rules are pt_checker_rules() (invariant id + tag, the stable part of a
 * signature).  The list is held against the source: every tag literal of
 * engine/check/check.c and every literal tag the model reports through
 * pt_checker_report() (engine/mm/) is a listed rule, and every listed rule is
 * reported somewhere.  Then each rule must fire on some bad trace of
 * corpus/regressions/arch/ (replayed with the default model) that has a clean
 * twin: NAME.good.ptt beside NAME.bad.ptt, or the file a `# twin: FILE` line
 * names.  A rule that no trace exercises could be loosened without any
 * verdict changing; the test lists each one and fails.  The allow-list below
 * holds, with the reason, the rules no arch-level trace can reach.
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

/* Rules that no arch-level trace can fire, each with the reason. */
static const struct {
	unsigned id;
	const char *tag;
	const char *why;
} allowed[] = {
	/* the model's own checks: they compare the mm model's reference with its page tables, and
	 * an arch-level trace runs no model routine (corpus/mm/ and the variants exercise them) */
	{ PT_I10, "reference-mismatch", "ops level only: the reference is the mm model's (corpus/mm, variants)" },
	{ PT_I11, "deadlock", "ops level only: threads waiting on each other's locks in the mm model's scheduler" },
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
 * need_dash, only kebab-case ones (check.c's other literals are sentences and formats). */
static size_t tag_literal(const char *p, bool need_dash)
{
	if (*p != '"')
		return 0;
	size_t i = 1;
	bool dash = false;
	for (; p[i] && p[i] != '"'; i++) {
		if (p[i] == '-' && i > 1 && p[i - 1] != '-')
			dash = true;
		else if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9')))
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

/* engine/mm/: the model's checks, pt_checker_report(mm->c, PT_In, "tag", ...) */
static void scan_mm(const char *root, struct rule_state *r, unsigned n)
{
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s/engine/mm", root);
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
		char path[1400];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
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
				continue;	/* a tag passed in (mm_warn's I9 WARN sites) */
			struct rule_state *x = find_rule(r, n, id, t + 1, len);
			char tag[128];
			snprintf(tag, sizeof(tag), "I%u/%.*s", id, (int)len, t + 1);
			if (!x)
				fail("engine/mm/%s reports %s, which pt_checker_rules() does not list", e->d_name, tag);
			else
				x->in_source = true;
		}
		free(s);
	}
	closedir(d);
}

static bool file_exists(const char *dir, const char *name)
{
	char path[1400];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	if (f)
		fclose(f);
	return f != NULL;
}

/* Replay one bad trace; mark the rules it fires if it has a clean twin. */
static void replay_bad(const char *dir, const char *name, struct rule_state *r, unsigned n)
{
	char path[1400], twin[300] = "";
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	struct pt_error err;
	struct pt_event ev;
	struct pt_reader *rd = pt_reader_open(path, &err);
	if (!rd) {
		fail("%s%s", err.msg, "");
		return;
	}
	struct pt_session *s = pt_session_new(pt_reader_header(rd));
	int rc;
	while ((rc = pt_reader_next(rd, &ev, &err)) == 1) {
		if (ev.kind == PT_EV_COMMENT && ev.text && !strncmp(ev.text, "twin:", 5))
			sscanf(ev.text + 5, " %255s", twin);
		pt_session_event(s, &ev);
	}
	if (rc < 0)
		fail("%s%s", err.msg, "");
	pt_session_finish(s);
	if (!twin[0]) {
		snprintf(twin, sizeof(twin), "%.*s.good.ptt", (int)(strlen(name) - strlen(".bad.ptt")), name);
	}
	bool paired = file_exists(dir, twin);
	for (unsigned i = 0; i < pt_session_nviolations(s); i++) {
		const struct pt_violation *v = pt_session_violation(s, i);
		/* I<id>/<kind>/<tag>/<site>; the kind has a slash of its own */
		const char *t = strchr(v->signature, '/');
		if (!t)
			continue;
		t += 1 + strlen(pt_inv_kind(v->id));
		if (*t != '/')
			continue;
		t++;
		const char *end = strchr(t, '/');
		struct rule_state *x = find_rule(r, n, v->id, t, end ? (size_t)(end - t) : strlen(t));
		if (!x) {
			fail("%s fires %s, a rule pt_checker_rules() does not list", name, v->signature);
			continue;
		}
		if (paired && !x->by[0])
			snprintf(x->by, sizeof(x->by), "%s (twin %s)", name, twin);
	}
	if (!paired)
		printf("note %s has no clean twin (%s): it covers nothing\n", name, twin);
	pt_session_free(s);
	pt_reader_close(rd);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

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

	char dir[1024];
	snprintf(dir, sizeof(dir), "%s/corpus/regressions/arch", root);
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "test_rule_coverage: cannot open %s\n", dir);
		return 2;
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
	qsort(names, nf, sizeof(names[0]), cmp_str);
	for (unsigned i = 0; i < nf; i++) {
		replay_bad(dir, names[i], r, n);
		free(names[i]);
	}

	unsigned covered = 0, uncovered = 0;
	for (unsigned i = 0; i < n; i++) {
		const char *why = NULL;
		for (unsigned k = 0; k < sizeof(allowed) / sizeof(allowed[0]); k++)
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
			printf("FAIL I%u/%s: no bad trace of corpus/regressions/arch (with a clean twin) fires it\n",
			       r[i].id, r[i].tag);
			failures++;
		}
	}
	printf("%u rules: %u covered by a bad/good pair, %u uncovered, %zu allow-listed\n", n, covered, uncovered,
	       sizeof(allowed) / sizeof(allowed[0]));
	return failures ? 1 : 0;
}
