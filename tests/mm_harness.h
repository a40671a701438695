/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mm_harness.h - a test harness that owns the machine, the checkers and the mm model
 * directly (so tests can reach struct mm_model and force a variant), and records every
 * arch event the model emits.  Include after <cmocka.h>.
 */
#ifndef PTFUZZ_MM_HARNESS_H
#define PTFUZZ_MM_HARNESS_H

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "machine.h"
#include "mm_internal.h"
#include "trace.h"

struct harness {
	struct pt_machine *m;
	struct pt_checker *c;
	struct mm_model *mm;
	struct pt_event *rec;	/* every arch event the model emitted, in order */
	size_t nrec, cap;
};

static inline void h_emit(void *ctx, const struct pt_event *ev)
{
	struct harness *h = ctx;
	if (h->nrec == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 1024;
		h->rec = realloc(h->rec, h->cap * sizeof(*h->rec));
		assert_non_null(h->rec);
	}
	h->rec[h->nrec] = *ev;
	h->rec[h->nrec].text = NULL;
	h->nrec++;
	pt_machine_event(h->m, ev);
}

static inline struct harness *h_new(unsigned cpus)
{
	struct harness *h = calloc(1, sizeof(*h));
	assert_non_null(h);
	struct pt_header hd;
	pt_header_default(&hd);
	hd.cpus = cpus;
	h->m = pt_machine_new(&hd);
	h->c = pt_checker_new(h->m);
	struct mm_sink sink = { h_emit, h };
	h->mm = mm_model_new(h->m, h->c, &sink);
	return h;
}

static inline void h_free(struct harness *h)
{
	mm_model_free(h->mm);
	pt_checker_free(h->c);
	pt_machine_free(h->m);
	free(h->rec);
	free(h);
}

/* test-only accessor: switch a variant's decision point on in this model */
static inline void h_force_variant(struct harness *h, enum mm_variant_id v)
{
	h->mm->variant[v] = true;
}

/* run the events of an inline text trace: ops-level ones through the model */
static inline void h_run(struct harness *h, const char *text)
{
	struct pt_error err;
	struct pt_reader *r = pt_reader_open_mem(text, strlen(text), "inline", &err);
	if (!r)
		fail_msg("%s", err.msg);
	struct pt_event ev;
	int rc;
	while ((rc = pt_reader_next(r, &ev, &err)) == 1) {
		if (ev.kind == PT_EV_COMMENT)
			continue;
		const struct pt_kind_schema *s = pt_kind_schema(ev.kind);
		if (s && s->ops_level)
			mm_model_op(h->mm, &ev);
		else
			pt_machine_event(h->m, &ev);
	}
	if (rc < 0)
		fail_msg("%s", err.msg);
	pt_reader_close(r);
}

#endif
