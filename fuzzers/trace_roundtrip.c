/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * trace_roundtrip.c - property: conversion is lossless.
 *
 * If the input parses cleanly (text or binary, or taken as the decompressed
 * content of a binary trace), writing its events as
 * text and as binary and reading each back gives the same header and the
 * same events; and both outputs are canonical: reading and writing them
 * again reproduces them byte for byte.
 */
#include <stdint.h>

#include "fuzz_common.h"

#define MAX_EVENTS (1u << 14)	/* more events add time, not coverage */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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

/* 0 the whole trace read, -1 an error (or too long to bother with) */
static int trace_read(const void *data, size_t size, struct trace *t, struct pt_error *err)
{
	struct pt_reader *r = pt_reader_open_mem(data, size, FUZZ_NAME, err);
	struct pt_event ev;
	int rc;

	memset(t, 0, sizeof(*t));
	if (!r)
		return -1;
	t->h = *pt_reader_header(r);
	while ((rc = pt_reader_next(r, &ev, err)) == 1) {
		if (t->n == MAX_EVENTS) {
			rc = -1;
			break;
		}
		if (t->n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 64;
			t->ev = realloc(t->ev, t->cap * sizeof(*t->ev));
			FUZZ_CHECK(t->ev, "out of memory");
		}
		if (ev.text) {
			ev.text = strdup(ev.text);
			FUZZ_CHECK(ev.text, "out of memory");
		}
		t->ev[t->n++] = ev;
	}
	pt_reader_close(r);
	return rc;
}

static void trace_write(const struct trace *t, enum pt_encoding enc, void **out, size_t *size)
{
	struct pt_error err = { 0 };
	struct pt_writer *w = pt_writer_open_mem(enc, &t->h, &err);

	FUZZ_CHECK(w, "a header that was read cannot be written: %s", err.msg);
	for (size_t i = 0; i < t->n; i++)
		FUZZ_CHECK(!pt_writer_put(w, &t->ev[i], &err), "event %zu that was read cannot be written: %s",
			   i, err.msg);
	FUZZ_CHECK(!pt_writer_close_mem(w, out, size, &err), "%s", err.msg);
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

static void check_same(const struct trace *a, const struct trace *b, const char *what)
{
	char la[PT_MAX_LINE + 256], lb[PT_MAX_LINE + 256];

	FUZZ_CHECK(header_eq(&a->h, &b->h), "%s: header differs", what);
	FUZZ_CHECK(a->n == b->n, "%s: %zu events became %zu", what, a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		if (event_eq(&a->ev[i], &b->ev[i]))
			continue;
		pt_event_format_text(&a->ev[i], la, sizeof(la));
		pt_event_format_text(&b->ev[i], lb, sizeof(lb));
		FUZZ_CHECK(0, "%s: event %zu differs:\n  %s\n  %s", what, i, la, lb);
	}
}

/* Encode t in enc, read it back (must equal t), encode that again (same bytes). */
static void roundtrip(const struct trace *t, enum pt_encoding enc)
{
	const char *what = enc == PT_ENC_TEXT ? "text" : "binary";
	struct pt_error err = { 0 };
	struct trace back, again;
	void *out, *out2;
	size_t size, size2;

	trace_write(t, enc, &out, &size);
	FUZZ_CHECK(!trace_read(out, size, &back, &err), "%s output does not read back: %s", what, err.msg);
	check_same(t, &back, what);
	trace_write(&back, enc, &out2, &size2);
	FUZZ_CHECK(size == size2 && !memcmp(out, out2, size), "%s output is not canonical", what);
	FUZZ_CHECK(!trace_read(out2, size2, &again, &err), "%s", err.msg);
	trace_free(&again);
	trace_free(&back);
	free(out);
	free(out2);
}

static void check(const uint8_t *data, size_t size)
{
	struct pt_error err = { 0 };
	struct trace t;

	if (trace_read(data, size, &t, &err) == 0) {
		roundtrip(&t, PT_ENC_TEXT);
		roundtrip(&t, PT_ENC_BINARY);
	}
	trace_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t zsize;
	const uint8_t *z = fuzz_as_zstd(data, size, &zsize);

	check(data, size);
	if (z)
		check(z, zsize);	/* the same bytes as a binary record stream */
	return 0;
}
