/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_trace_roundtrip.c - conversion is lossless, for every trace we ship.
 *
 * For each *.ptt and *.ptt.zst found (at run time, recursively) under the
 * directories given: text -> binary -> text gives the canonical text, and
 * binary -> text -> binary gives the same bytes, with the same header and
 * events all the way.  The --samples directory must also use every event
 * kind at least once.
 *
 * usage: test_trace_roundtrip --samples DIR [DIR...]
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "trace.h"

struct trace {
	struct pt_header h;
	struct pt_event *ev;
	size_t n, cap;
};

static void trace_free(struct trace *t)
{
	for (size_t i = 0; i < t->n; i++)
		free((char *)t->ev[i].text);
	free(t->ev);
	memset(t, 0, sizeof(*t));
}

/* Read a trace from a file (data NULL) or memory; fails the test on any error. */
static void trace_read(const char *path, const void *data, size_t size, struct trace *t)
{
	struct pt_error err = { 0 };
	struct pt_reader *r = data ? pt_reader_open_mem(data, size, path, &err) : pt_reader_open(path, &err);
	struct pt_event ev;
	int rc;

	memset(t, 0, sizeof(*t));
	if (!r)
		fail_msg("%s", err.msg);
	t->h = *pt_reader_header(r);
	while ((rc = pt_reader_next(r, &ev, &err)) == 1) {
		if (t->n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 256;
			t->ev = realloc(t->ev, t->cap * sizeof(*t->ev));
			assert_non_null(t->ev);
		}
		if (ev.text)
			ev.text = strdup(ev.text);
		t->ev[t->n++] = ev;
	}
	pt_reader_close(r);
	if (rc < 0)
		fail_msg("%s", err.msg);
}

static void trace_write(const struct trace *t, enum pt_encoding enc, void **data, size_t *size)
{
	struct pt_error err = { 0 };
	struct pt_writer *w = pt_writer_open_mem(enc, &t->h, &err);

	if (!w)
		fail_msg("%s", err.msg);
	for (size_t i = 0; i < t->n; i++)
		if (pt_writer_put(w, &t->ev[i], &err))
			fail_msg("event %zu: %s", i, err.msg);
	if (pt_writer_close_mem(w, data, size, &err))
		fail_msg("%s", err.msg);
}

static bool header_eq(const struct pt_header *a, const struct pt_header *b)
{
	return a->version == b->version && a->granule == b->granule && a->va_bits == b->va_bits && a->lpa2 == b->lpa2 &&
	       a->cpus == b->cpus && !strcmp(a->kernel, b->kernel) && !strcmp(a->machine, b->machine) &&
	       !strcmp(a->method, b->method);
}

static bool event_eq(const struct pt_event *a, const struct pt_event *b)
{
	return a->kind == b->kind && a->op == b->op && a->cpu == b->cpu && a->asid == b->asid &&
	       a->level == b->level && a->order == b->order && a->num == b->num &&
	       a->scale == b->scale && a->node == b->node && a->prot == b->prot && a->tid == b->tid &&
	       a->flags == b->flags && a->va == b->va && a->pa == b->pa && a->val == b->val &&
	       a->len == b->len && a->va2 == b->va2 && a->len2 == b->len2 &&
	       !strcmp(a->text ? a->text : "", b->text ? b->text : "");
}

static void assert_same(const char *path, const char *how, const struct trace *a, const struct trace *b)
{
	char la[PT_MAX_LINE + 64], lb[PT_MAX_LINE + 64];

	if (!header_eq(&a->h, &b->h))
		fail_msg("%s: %s: the header changed", path, how);
	if (a->n != b->n)
		fail_msg("%s: %s: %zu events became %zu", path, how, a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		if (event_eq(&a->ev[i], &b->ev[i]))
			continue;
		pt_event_format_text(&a->ev[i], la, sizeof(la));
		pt_event_format_text(&b->ev[i], lb, sizeof(lb));
		fail_msg("%s: %s: event %zu changed:\n  %s\n  %s", path, how, i, la, lb);
	}
}

static void test_round_trip(void **state)
{
	const char *path = *state;
	struct trace t0, t1, t2;
	void *text, *bin, *text2, *bin2;
	size_t ntext, nbin, ntext2, nbin2;

	trace_read(path, NULL, 0, &t0);
	trace_write(&t0, PT_ENC_TEXT, &text, &ntext);	/* the canonical text */
	trace_write(&t0, PT_ENC_BINARY, &bin, &nbin);

	/* text -> binary -> text */
	trace_read(path, bin, nbin, &t1);
	assert_same(path, "to binary and back", &t0, &t1);
	trace_write(&t1, PT_ENC_TEXT, &text2, &ntext2);
	if (ntext != ntext2 || memcmp(text, text2, ntext))
		fail_msg("%s: text -> binary -> text is not the canonical text", path);

	/* binary -> text -> binary */
	trace_read(path, text, ntext, &t2);
	assert_same(path, "to text and back", &t0, &t2);
	trace_write(&t2, PT_ENC_BINARY, &bin2, &nbin2);
	if (nbin != nbin2 || memcmp(bin, bin2, nbin))
		fail_msg("%s: binary -> text -> binary changed the bytes", path);

	trace_free(&t0);
	trace_free(&t1);
	trace_free(&t2);
	free(text);
	free(bin);
	free(text2);
	free(bin2);
}

/* ---- collecting the files ---- */

static char **files;
static size_t nfiles;
static const char *samples;

static bool is_trace(const char *name)
{
	size_t n = strlen(name);
	return (n > 4 && !strcmp(name + n - 4, ".ptt")) || (n > 8 && !strcmp(name + n - 8, ".ptt.zst"));
}

static void collect(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *p;
		struct stat st;
		if (e->d_name[0] == '.' || asprintf(&p, "%s/%s", dir, e->d_name) < 0)
			continue;
		if (!stat(p, &st) && S_ISDIR(st.st_mode)) {
			collect(p);
			free(p);
		} else if (is_trace(e->d_name)) {
			files = realloc(files, (nfiles + 1) * sizeof(*files));
			files[nfiles++] = p;
		} else {
			free(p);
		}
	}
	closedir(d);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_samples_use_every_event_kind(void **state)
{
	bool seen[PT_EV_KIND_COUNT] = { false };
	size_t n = strlen(samples);
	(void)state;

	for (size_t i = 0; i < nfiles; i++) {
		if (strncmp(files[i], samples, n))
			continue;
		struct trace t;
		trace_read(files[i], NULL, 0, &t);
		for (size_t k = 0; k < t.n; k++)
			seen[t.ev[k].kind] = true;
		trace_free(&t);
	}
	for (unsigned k = 0; k < PT_EV_KIND_COUNT; k++)
		if (pt_kind_schema(k) && !seen[k])
			fail_msg("no sample under %s uses kind %s", samples, pt_kind_name(k));
}

int main(int argc, char **argv)
{
	if (argc < 3 || strcmp(argv[1], "--samples")) {
		fprintf(stderr, "usage: %s --samples DIR [DIR...]\n", argv[0]);
		return 2;
	}
	samples = argv[2];
	for (int i = 2; i < argc; i++)
		collect(argv[i]);
	qsort(files, nfiles, sizeof(*files), by_name);

	struct CMUnitTest *tests = calloc(nfiles + 1, sizeof(*tests));
	for (size_t i = 0; i < nfiles; i++) {
		tests[i].name = files[i];
		tests[i].test_func = test_round_trip;
		tests[i].initial_state = files[i];
	}
	tests[nfiles] = (struct CMUnitTest)cmocka_unit_test(test_samples_use_every_event_kind);
	int rc = _cmocka_run_group_tests("trace_roundtrip", tests, nfiles + 1, NULL, NULL);
	for (size_t i = 0; i < nfiles; i++)
		free(files[i]);
	free(files);
	free(tests);
	return rc;
}
