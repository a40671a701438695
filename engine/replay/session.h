/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * session.h - one replay: the machine model, (later) the mm model, and the
 * checkers, fed one event at a time.  What `ptfuzz replay` and the fuzz
 * harnesses drive.
 */
#ifndef PTFUZZ_SESSION_H
#define PTFUZZ_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"
#include "violation.h"

struct pt_session;

/* What the model's routines cost for one ops-level kind (`ptfuzz stats`, `compare`). */
struct pt_op_costs {
	uint64_t ops;			/* how many ops of the kind ran */
	uint64_t failed;		/* of which the kernel would have failed (EINVAL, ...) */
	uint64_t pt_writes;
	uint64_t cont_writes;		/* of which wrote a valid CONT descriptor (TLB reach: 16 pages per entry) */
	uint64_t tlbi_by_op[PT_TLBI_COUNT];
	uint64_t dsb, dmb, isb;
	uint64_t tables_alloc, tables_freed;
	uint64_t pages_alloc, pages_freed;
};

/* Per-event-kind and per-op cost counters (`ptfuzz stats`). */
struct pt_counters {
	uint64_t events;
	uint64_t by_kind[PT_EV_KIND_COUNT];
	uint64_t tlbi_by_op[PT_TLBI_COUNT];
	uint64_t dsb_by_dom[PT_BAR_COUNT];
	uint64_t dmb, isb;
	uint64_t pt_writes;
	uint64_t tables_alloc, tables_freed;
	uint64_t pages_alloc, pages_freed;
	uint64_t model_events;		/* arch events produced by the mm model for ops-level events */
	struct pt_op_costs per_op[PT_EV_KIND_COUNT];	/* indexed by the ops-level kind */
};

/*! pt_op_costs_add() : dst += src, field by field. */
void pt_op_costs_add(struct pt_op_costs *dst, const struct pt_op_costs *src);

/*! pt_session_new() : a fresh machine for a trace with header h; NULL if h is unusable. */
struct pt_session *pt_session_new(const struct pt_header *h);
void pt_session_free(struct pt_session *s);
/*!
 * pt_session_reset() : bring s back to exactly the state pt_session_new(h) would return
 * (default variant, no violations, no tap), keeping its allocations: what a persistent-mode
 * fuzz harness does between execs.  A reset session gives the verdict, violations and state
 * hash of a fresh one.  @return : 0, or -1 if h is unusable (s is then unchanged).
 */
int pt_session_reset(struct pt_session *s, const struct pt_header *h);
/*! pt_session_set_variant() : run the mm model as variant `name` (before any event); -1 if unknown. */
int pt_session_set_variant(struct pt_session *s, const char *name);
/*! pt_session_event() : run one event; returns the number of new violations it revealed. */
unsigned pt_session_event(struct pt_session *s, const struct pt_event *ev);
/*! pt_session_finish() : end of trace (end-of-trace checks); returns new violations. */
unsigned pt_session_finish(struct pt_session *s);
unsigned pt_session_nviolations(const struct pt_session *s);
const struct pt_violation *pt_session_violation(const struct pt_session *s, unsigned i);
const struct pt_counters *pt_session_counters(const struct pt_session *s);
/*!
 * pt_session_set_tap() : every arch event the machine runs (from the trace or produced by
 * the mm model) is also passed to fn, in order: `replay --record`.
 */
void pt_session_set_tap(struct pt_session *s, void (*fn)(void *ctx, const struct pt_event *ev), void *ctx);
struct mm_op_result;
/*!
 * pt_session_op_result() : what the mm model did for the last ops-level event
 * (engine/model/mm.h: ran at once or not, errno, returned address, kernel functions called).
 */
const struct mm_op_result *pt_session_op_result(const struct pt_session *s);

/*!
 * pt_session_error() : NULL, or why the session stopped running the trace: it exceeded the
 * model's loop-step budget (README "Limits").  From that event on no op runs, the
 * violations are those found before it, and the caller rejects the trace (exit 2, with
 * the event's location).
 */
const char *pt_session_error(const struct pt_session *s);
/*!
 * pt_session_set_limits() : the mm model's capacity (units of mm_internal.h's MM_CAPACITY)
 * and its trace budget (`allowance` loop steps, plus `per_op` per ops-level event), before
 * any event; pt_session_reset() restores the defaults.  For harnesses that need a smaller
 * bound than the defaults (the fuzzers).
 */
/*!
 * pt_session_set_runs() : whether the mm model may hand runs of stores and accesses to the
 * machine at once (the default; the verdicts, counters and state are those of the events one
 * by one) or every event goes on its own (for the test that says so).  Kept across resets.
 */
void pt_session_set_runs(struct pt_session *s, bool on);
/*!
 * pt_session_set_checkers() : with false, the machine's checkers (I1-I8, I12) observe
 * nothing: what is left is the cost of the mm model and the machine (ptfuzz-bench-exec
 * --no-checkers); the model's own checks (I9-I11) stay.  Kept across resets; true again
 * starts the checkers afresh.  Not for verdicts.
 */
void pt_session_set_checkers(struct pt_session *s, bool on);
/*! pt_session_run_events() : the model's events that went in runs since the session was made or reset. */
uint64_t pt_session_run_events(const struct pt_session *s);
void pt_session_set_limits(struct pt_session *s, uint64_t capacity, uint64_t allowance, uint64_t per_op);
/*! pt_session_hash() : a hash of the whole machine state (page tables, caches, locks); deterministic. */
uint64_t pt_session_hash(const struct pt_session *s);

#endif
