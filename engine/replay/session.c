/* SPDX-License-Identifier: GPL-2.0-only */
/* session.c - one replay: machine model + checkers (+ the mm model, next issue). */
#include "session.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "machine.h"
#include "mm.h"
#include "ptdebug.h"
#include "vec2.h"

struct pt_session {
	struct pt_machine *m;
	struct pt_checker *c;
	struct mm_model *mm;
	struct pt_counters k;
	struct pt_op_costs *op;		/* costs of the ops-level event running, or &no_op */
	struct pt_op_costs no_op;	/* what is counted outside one: never read (no test per count) */
	uint32_t ops_run;		/* bit k - PT_EV_MMAP: k.per_op[k] counted since the last reset */
	uint64_t trace_index;		/* index of the trace event being run */
	void (*tap)(void *, const struct pt_event *);
	void *tap_ctx;
	bool finished;
	uint64_t run_events;		/* model events that went in runs (pt_session_run_events()) */
	bool no_checkers;		/* pt_session_set_checkers(false): the machine has no observer */
	bool over_budget;		/* the model stopped (mm_model_over_budget()): no verdict */
	unsigned nkept;			/* violations before the event that went over */
	char error[160];
};

static inline void count_kind(struct pt_session *s, const struct pt_event *ev, unsigned kind);
static inline void count(struct pt_session *s, const struct pt_event *ev);
static void count_free(struct pt_session *s, const struct pt_event *ev);
static void count_frees(struct pt_session *s, unsigned order, unsigned pages, unsigned tables);

/* The mm model's arch events: run them on the machine, attribute their cost to the op. */
static void model_emit(void *ctx, const struct pt_event *ev)
{
	struct pt_session *s = ctx;
	s->k.model_events++;
	count(s, ev);
	if (s->tap)
		s->tap(s->tap_ctx, ev);
	pt_machine_event(s->m, ev);
}

/*
 * model_emit() of an event of a kind (ev->kind) the machine has an entry point for (run): the
 * same counts, tap and machine event, with the kind's tests made by the compiler.
 */
static inline __attribute__((always_inline)) void model_emit_of(void *ctx, const struct pt_event *ev, unsigned kind,
								void (*run)(struct pt_machine *,
									    const struct pt_event *))
{
	struct pt_session *s = ctx;
	s->k.model_events++;
	count_kind(s, ev, kind);
	if (s->tap)
		s->tap(s->tap_ctx, ev);
	run(s->m, ev);
}

#define MODEL_EMIT_OF(name, kind, run) \
	static void name(void *ctx, const struct pt_event *ev) { model_emit_of(ctx, ev, kind, run); }
MODEL_EMIT_OF(model_emit_lock, PT_EV_LOCK, pt_machine_lock_event)
MODEL_EMIT_OF(model_emit_unlock, PT_EV_UNLOCK, pt_machine_unlock_event)
MODEL_EMIT_OF(model_emit_dsb, PT_EV_DSB, pt_machine_dsb_event)
MODEL_EMIT_OF(model_emit_dmb, PT_EV_DMB, pt_machine_dmb_event)
MODEL_EMIT_OF(model_emit_isb, PT_EV_ISB, pt_machine_isb_event)
MODEL_EMIT_OF(model_emit_begin, PT_EV_BEGIN, pt_machine_begin_event)
MODEL_EMIT_OF(model_emit_end, PT_EV_END, pt_machine_end_event)
MODEL_EMIT_OF(model_emit_alloc, PT_EV_PAGE_ALLOC, pt_machine_alloc_event)
MODEL_EMIT_OF(model_emit_write, PT_EV_PT_WRITE, pt_machine_write_event)
MODEL_EMIT_OF(model_emit_tlbi, PT_EV_TLBI, pt_machine_tlbi_event)
MODEL_EMIT_OF(model_emit_access, PT_EV_ACCESS, pt_machine_access_event)

/* n model events of a kind (a valid one), counted as model_emit() counts each before its
 * kind's own counts (count_kind()) */
static inline void count_model_events(struct pt_session *s, unsigned kind, unsigned n)
{
	s->k.model_events += n;
	s->k.events += n;
	s->k.by_kind[kind] += n;
}

/*
 * model_emit() of a page_free: counted by what its first page was before it (count_free()), which
 * the machine tells once it is freed, without a look-up of its own (a frame made for the look-up
 * of a lazy page, where no hook sees it).  Nothing reads the counts in between; a tap could, and
 * sees the event counted first, as model_emit() does it.
 */
static void model_emit_free(void *ctx, const struct pt_event *ev)
{
	struct pt_session *s = ctx;
	if (s->tap) {
		model_emit(s, ev);
		return;
	}
	count_model_events(s, PT_EV_PAGE_FREE, 1);
	bool table = pt_machine_free_event(s->m, ev);
	count_frees(s, ev->order, !table, table);
}

/* The i-th event of a run (mm_sink.emit_run): a store to the next entry, an access to the next
 * page, or the free of the next block. */
static void run_event(struct pt_event *ev, const struct pt_event *first, const uint64_t *vals, unsigned i)
{
	if (vals) {
		ev->pa = first->pa + 8ull * i;
		ev->val = vals[i];
	} else if (first->kind == PT_EV_PAGE_FREE) {
		ev->pa = first->pa + ((uint64_t)i << (PT_PAGE_SHIFT + first->order));
	} else {
		ev->va = first->va + ((uint64_t)i << PT_PAGE_SHIFT);
	}
}

/*
 * How many of vals[0..n) have PT_DESC_VALID and PT_DESC_CONT both set (count() of each pt_write
 * of a run counts those): (v >> the CONT bit) & (v >> the VALID bit) & 1 of each, summed two at a
 * time in 128-bit vectors (SSE2, the x86-64 baseline: a shift, two ands and an add a pair), the
 * odd one last.
 */
static unsigned count_cont(const uint64_t *vals, unsigned n)
{
	const unsigned cs = (unsigned)__builtin_ctzll(PT_DESC_CONT), vs = (unsigned)__builtin_ctzll(PT_DESC_VALID);
	u64x2 sum = { 0, 0 };
	unsigned i = 0;
	for (; i + 2 <= n; i += 2) {
		u64x2 v = u64x2_load(vals + i);
		sum += (v >> cs) & (v >> vs) & 1;
	}
	uint64_t c = sum[0] + sum[1];
	if (i < n)
		c += (vals[i] >> cs) & (vals[i] >> vs) & 1;
	return (unsigned)c;
}

/*
 * A run of the model's pt_writes (or accesses, or page frees) of one CPU: counted and run as
 * model_emit() would each one, without the per-event dispatch.  A tap sees them one by one.
 */
static void model_emit_run(void *ctx, const struct pt_event *first, const uint64_t *vals, unsigned n)
{
	struct pt_session *s = ctx;
	struct pt_event ev = *first;
	if (s->tap) {
		for (unsigned i = 0; i < n; i++) {
			run_event(&ev, first, vals, i);
			model_emit(s, &ev);
		}
		return;
	}
	struct pt_counters *k = &s->k;
	s->run_events += n;
	count_model_events(s, first->kind, n);
	if (vals) {
		k->pt_writes += n;
		s->op->pt_writes += n;
		s->op->cont_writes += count_cont(vals, n);
	}
	if (vals) {
		pt_machine_write_run(s->m, first, vals, n);
	} else if (first->kind == PT_EV_PAGE_FREE) {
		/* each free is counted by what its frame was before it (count_free()) */
		unsigned tables = pt_machine_free_run(s->m, first, n);
		count_frees(s, first->order, n - tables, tables);
	} else {
		pt_machine_access_run(s->m, first, n);
	}
}

struct pt_session *pt_session_new(const struct pt_header *h)
{
	struct pt_machine *m = pt_machine_new(h);
	if (!m)
		return NULL;
	struct pt_session *s = calloc(1, sizeof(*s));
	if (!s)
		abort();
	s->m = m;
	s->op = &s->no_op;
	s->c = pt_checker_new(m);
	struct mm_sink sink = { model_emit, s, model_emit_run, .emit_kind = {
		[PT_EV_LOCK] = model_emit_lock, [PT_EV_UNLOCK] = model_emit_unlock, [PT_EV_DSB] = model_emit_dsb,
		[PT_EV_DMB] = model_emit_dmb, [PT_EV_ISB] = model_emit_isb, [PT_EV_BEGIN] = model_emit_begin,
		[PT_EV_END] = model_emit_end, [PT_EV_PAGE_ALLOC] = model_emit_alloc, [PT_EV_PAGE_FREE] = model_emit_free,
		[PT_EV_PT_WRITE] = model_emit_write, [PT_EV_TLBI] = model_emit_tlbi, [PT_EV_ACCESS] = model_emit_access } };
	s->mm = mm_model_new(m, s->c, &sink);
	pt_dbg(PT_DBG_TRACE, "session: %u cpus", h->cpus);
	return s;
}

int pt_session_reset(struct pt_session *s, const struct pt_header *h)
{
	if (!pt_machine_supports(h))
		return -1;	/* an unusable header leaves s as it was */
	if (!s->finished) {
		/* threads suspended in the middle of an op hold what the op allocated on their
		 * stacks: let them run to completion (as pt_session_finish() does) before their
		 * stacks are dropped; what they do is discarded with the rest */
		s->tap = NULL;
		mm_model_finish(s->mm);
	}
	/* the machine first: the checkers and the model size themselves by its CPUs */
	if (pt_machine_reset(s->m, h))
		return -1;
	pt_checker_reset(s->c);
	if (s->no_checkers)
		pt_machine_set_observer(s->m, NULL, NULL);
	mm_model_reset(s->mm);
	/* per_op is indexed by ops-level kinds only (pt_session_event()), and only those of the ops
	 * run since the last reset were counted: the rest stays zero */
	memset(&s->k, 0, offsetof(struct pt_counters, per_op));
	for (uint32_t b = s->ops_run; b; b &= b - 1)
		memset(&s->k.per_op[PT_EV_MMAP + __builtin_ctz(b)], 0, sizeof(s->k.per_op[0]));
	s->ops_run = 0;
	s->op = &s->no_op;
	s->trace_index = 0;
	s->tap = NULL;
	s->tap_ctx = NULL;
	s->finished = false;
	s->over_budget = false;
	s->run_events = 0;
	s->nkept = 0;
	s->error[0] = 0;
	return 0;
}

int pt_session_set_variant(struct pt_session *s, const char *name)
{
	int id = mm_variant_lookup(name);
	if (id < 0)
		return -1;
	mm_model_set_variant(s->mm, (unsigned)id);
	return 0;
}

void pt_session_free(struct pt_session *s)
{
	if (!s)
		return;
	mm_model_free(s->mm);
	pt_checker_free(s->c);
	pt_machine_free(s->m);
	free(s);
}

void pt_op_costs_add(struct pt_op_costs *d, const struct pt_op_costs *o)
{
	d->ops += o->ops;
	d->failed += o->failed;
	d->pt_writes += o->pt_writes;
	d->cont_writes += o->cont_writes;
	for (unsigned op = 0; op < PT_TLBI_COUNT; op++)
		d->tlbi_by_op[op] += o->tlbi_by_op[op];
	d->dsb += o->dsb;
	d->dmb += o->dmb;
	d->isb += o->isb;
	d->tables_alloc += o->tables_alloc;
	d->tables_freed += o->tables_freed;
	d->pages_alloc += o->pages_alloc;
	d->pages_freed += o->pages_freed;
}

/* An event's counts, the session's and the running op's (o): one switch for both (inline: a call
 * per event costs as much as the counting; kind is ev->kind, a constant where the caller has one) */
static inline __attribute__((always_inline)) void count_kind(struct pt_session *s, const struct pt_event *ev,
							     unsigned kind)
{
	struct pt_counters *k = &s->k;
	struct pt_op_costs *o = s->op;
	k->events++;
	if (kind < PT_EV_KIND_COUNT)
		k->by_kind[kind]++;
	switch (kind) {
	case PT_EV_TLBI:
		if (ev->op < PT_TLBI_COUNT) {
			k->tlbi_by_op[ev->op]++;
			o->tlbi_by_op[ev->op]++;
		}
		break;
	case PT_EV_DSB:
		if (ev->op < PT_BAR_COUNT)
			k->dsb_by_dom[ev->op]++;
		o->dsb++;
		break;
	case PT_EV_DMB:
		k->dmb++;
		o->dmb++;
		break;
	case PT_EV_ISB:
		k->isb++;
		o->isb++;
		break;
	case PT_EV_PT_WRITE:
		k->pt_writes++;
		o->pt_writes++;
		if ((ev->val & (PT_DESC_VALID | PT_DESC_CONT)) == (PT_DESC_VALID | PT_DESC_CONT))
			o->cont_writes++;
		break;
	case PT_EV_PAGE_ALLOC:
		if (ev->op == PT_FRAME_TABLE) {
			k->tables_alloc++;
			o->tables_alloc++;
		} else {
			k->pages_alloc += 1ull << ev->order;
			o->pages_alloc += 1ull << ev->order;
		}
		break;
	case PT_EV_PAGE_FREE:
		count_free(s, ev);
		break;
	default: break;
	}
}

static inline __attribute__((always_inline)) void count(struct pt_session *s, const struct pt_event *ev)
{
	count_kind(s, ev, ev->kind);
}

/* Frees of `pages` blocks of 2^order pages and of `tables` tables. */
static void count_frees(struct pt_session *s, unsigned order, unsigned pages, unsigned tables)
{
	uint64_t np = (uint64_t)pages << order;
	s->k.tables_freed += tables;
	s->k.pages_freed += np;
	s->op->tables_freed += tables;
	s->op->pages_freed += np;
}

/* A page_free is a table's free if its first page is a table before it. */
static void count_free(struct pt_session *s, const struct pt_event *ev)
{
	uint32_t f = pt_machine_lookup(s->m, ev->pa);
	bool table = f != PT_NO_FRAME && pt_machine_frame(s->m, f)->state == PT_FS_TABLE;
	count_frees(s, ev->order, !table, table);
}

unsigned pt_session_event(struct pt_session *s, const struct pt_event *ev)
{
	unsigned before = pt_checker_count(s->c);
	if (ev->kind == PT_EV_KERNEL) {
		/* a captured kernel's evidence: nothing for the model to run (counted only) */
		s->k.events++;
		s->k.by_kind[ev->kind]++;
	} else if (ev->kind >= PT_EV_MMAP && s->over_budget) {
		/* the trace was rejected (pt_session_error()): no op runs any more, and what the
		 * arch-level events after it reveal is not counted (pt_session_nviolations()) */
	} else if (ev->kind >= PT_EV_MMAP) {	/* ops-level kinds (event.h) */
		/* the mm model runs the kernel's routine; its arch events come back through model_emit */
		s->k.events++;
		s->k.by_kind[ev->kind]++;
		_Static_assert(PT_EV_KIND_COUNT - PT_EV_MMAP <= 32, "a bit of ops_run per ops-level kind");
		s->op = &s->k.per_op[ev->kind];
		s->ops_run |= 1u << (ev->kind - PT_EV_MMAP);
		s->op->ops++;
		if (mm_model_op(s->mm, ev))
			s->op->failed++;
		s->op = &s->no_op;
		if (mm_model_over_budget(s->mm)) {
			/* what this op left half done is no verdict: its reports are dropped */
			s->over_budget = true;
			s->nkept = before;
			snprintf(s->error, sizeof(s->error),
				 "the trace exceeds the model's loop-step budget at this event (by default "
				 "%llu steps and %llu per ops-level event; README \"Limits\")",
				 (unsigned long long)MM_TRACE_ALLOWANCE, (unsigned long long)MM_TRACE_PER_OP);
			s->trace_index++;
			return 0;
		}
	} else if (ev->kind == PT_EV_MIGRATE && mm_model_migrate(s->mm, ev)) {
		count(s, ev);	/* a model thread moves: the model switches it out of its CPU */
	} else if (mm_model_interrupt(s->mm, ev)) {
		/* an access while the CPU's thread is stopped mid-op: an interrupt's, which the
		 * model emitted (counted there) inside irq_enter/irq_exit */
	} else {
		count(s, ev);
		if (s->tap)
			s->tap(s->tap_ctx, ev);
		pt_machine_event(s->m, ev);
	}
	/* report violations at the trace's own event index (the machine counts model events too) */
	for (unsigned i = before; i < pt_checker_count(s->c); i++) {
		struct pt_violation *v = pt_checker_get_mut(s->c, i);
		v->arch_event = v->event;
		v->event = s->trace_index;
	}
	s->trace_index++;
	return pt_checker_count(s->c) - before;
}

void pt_session_set_tap(struct pt_session *s, void (*fn)(void *ctx, const struct pt_event *ev), void *ctx)
{
	s->tap = fn;
	s->tap_ctx = ctx;
}

unsigned pt_session_finish(struct pt_session *s)
{
	if (s->over_budget) {
		if (!s->finished)
			mm_model_finish(s->mm);	/* the threads unwind (every step is refused) */
		s->finished = true;
		return 0;
	}
	unsigned before = pt_checker_count(s->c);
	if (!s->finished) {
		mm_model_finish(s->mm);	/* queued ops of scheduled threads run to completion */
		for (unsigned i = before; i < pt_checker_count(s->c); i++) {
			struct pt_violation *v = pt_checker_get_mut(s->c, i);
			v->arch_event = v->event;
			v->event = s->trace_index;	/* past the last event: an end-of-trace check */
		}
	}
	s->finished = true;
	pt_dbg(PT_DBG_TRACE, "session: finished, %u violations, state %#llx", pt_checker_count(s->c),
	       (unsigned long long)pt_session_hash(s));
	return pt_checker_count(s->c) - before;
}

unsigned pt_session_nviolations(const struct pt_session *s)
{
	return s->over_budget ? s->nkept : pt_checker_count(s->c);
}
const struct pt_violation *pt_session_violation(const struct pt_session *s, unsigned i)
{
	return pt_checker_get(s->c, i);
}
const struct pt_counters *pt_session_counters(const struct pt_session *s) { return &s->k; }
const struct mm_op_result *pt_session_op_result(const struct pt_session *s) { return mm_model_op_result(s->mm); }
uint64_t pt_session_hash(const struct pt_session *s)
{
	return pt_machine_hash(s->m) ^ (mm_model_hash(s->mm) * 0x9e3779b97f4a7c15ull);
}

const char *pt_session_error(const struct pt_session *s)
{
	return s->over_budget ? s->error : NULL;
}

void pt_session_set_runs(struct pt_session *s, bool on) { mm_model_set_runs(s->mm, on); }

void pt_session_set_checkers(struct pt_session *s, bool on)
{
	s->no_checkers = !on;
	if (on)
		pt_checker_reset(s->c);	/* observing again, from a clean slate */
	else
		pt_machine_set_observer(s->m, NULL, NULL);
}
uint64_t pt_session_run_events(const struct pt_session *s) { return s->run_events; }

void pt_session_set_limits(struct pt_session *s, uint64_t capacity, uint64_t allowance, uint64_t per_op)
{
	mm_model_set_limits(s->mm, capacity, allowance, per_op);
}
