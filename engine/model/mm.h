/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mm.h - the mm model: C re-implementations of the (patched) Linux kernel
 * routines the seeds touch, run over the arm64 machine model.  An ops-level
 * event (mmap, mremap, vmalloc, ...) goes in; the arch events the kernel
 * would perform come out through the sink, which runs them on the machine
 * (and the checkers) and may record them.
 */
#ifndef PTFUZZ_MM_H
#define PTFUZZ_MM_H

#include <stdbool.h>
#include <stdint.h>

#include "check.h"
#include "event.h"
#include "machine.h"

struct mm_model;

/* Where the model's arch events go: the session runs them on the machine. */
struct mm_sink {
	void (*emit)(void *ctx, const struct pt_event *ev);
	void *ctx;
	/* optional: n events of first's kind and CPU as n emit() calls, the i-th a pt_write of
	 * vals[i] to entry first->pa + 8 * i, or (vals NULL) an access of page first->va + 4K * i
	 * or a page_free of the block at first->pa + i * (4K << first->order) */
	void (*emit_run)(void *ctx, const struct pt_event *first, const uint64_t *vals, unsigned n);
	/* optional: emit() for the events of one arch-level kind, the same (NULL: emit()) */
	void (*emit_kind[PT_EV_MMAP])(void *ctx, const struct pt_event *ev);
};

/*! mm_model_new() : a model over machine m (reporting I9/I10 through c), emitting through sink. */
struct mm_model *mm_model_new(struct pt_machine *m, struct pt_checker *c, const struct mm_sink *sink);
void mm_model_free(struct mm_model *mm);
/*! mm_model_reset() : back to the state of mm_model_new() over the (reset) machine, keeping allocations. */
void mm_model_reset(struct mm_model *mm);
/*! mm_model_set_runs() : whether runs of stores and accesses may go through sink.emit_run (the
 * default, when the sink has one) or every event through sink.emit; kept across resets. */
void mm_model_set_runs(struct mm_model *mm, bool on);

/*!
 * mm_model_op() : run one ops-level event as the kernel would.
 * @return : 0 done; a positive errno value (EINVAL, ENOMEM, EFAULT ...) if the
 *           kernel would fail the call (not a violation: mremap of an overlapping
 *           range fails, as mremap_test.c expects).
 */
int mm_model_op(struct mm_model *mm, const struct pt_event *ev);

/*
 * What the last mm_model_op() did, for comparing the model with a captured kernel's
 * evidence (`ptfuzz replay` on a trace with `kernel` events).  calls[] counts the
 * kernel functions of enum pt_kernel_ev that the model's routines ran meanwhile:
 * move_page_tables, move_huge_pmd, __split_huge_pmd (a split it made) so far.
 */
struct mm_op_result {
	bool ran;			/* the op ran at once (false: queued for a scheduled thread) */
	int rc;				/* 0, or the errno the model's routine returned */
	uint64_t addr;			/* mmap, mremap: the address the call returned */
	uint32_t calls[PT_KEV_COUNT];
	uint64_t mpt_old, mpt_new, mpt_len;	/* the first move_page_tables() call's arguments */
	uint64_t mpt_ret;		/* and what it returned (bytes moved) */
};
/*! mm_model_op_result() : the result record of the last mm_model_op(). */
const struct mm_op_result *mm_model_op_result(const struct mm_model *mm);

/*!
 * mm_model_migrate() : `migrate tid=T to=M` of a model thread: switch it out of its CPU
 * (__switch_to) and move it.  @return : false if T is not a model thread (an arch event).
 */
bool mm_model_migrate(struct mm_model *mm, const struct pt_event *ev);
/*!
 * mm_model_interrupt() : an arch-level access of the trace on a CPU whose model thread is
 * stopped mid-op is an interrupt handler's: emitted inside irq_enter/irq_exit.
 * @return : false if it is not (run it on the machine as it is).
 */
bool mm_model_interrupt(struct mm_model *mm, const struct pt_event *ev);
/*
 * The model's limits (README "Limits"): its capacity (mm_internal.h, MM_CAPACITY: what it
 * holds at once; an op past it fails with ENOMEM) and the loop steps a whole trace may take:
 * `allowance` plus `per_op` for every ops-level event run so far.  Past that the model
 * stops: every further op is refused and mm_model_over_budget() says so, for the caller to
 * reject the trace (exit 2), never to report a verdict on it.  mm_model_reset() restores
 * the defaults.
 */
#define MM_TRACE_ALLOWANCE (1ull << 24)	/* loop steps any trace may take, ≈ 16 capacity-sized ops */
#define MM_TRACE_PER_OP 4096ull		/* and per ops-level event on top */
void mm_model_set_limits(struct mm_model *mm, uint64_t capacity, uint64_t allowance, uint64_t per_op);
/*! mm_model_over_budget() : the trace went past its loop-step budget (the model stopped). */
bool mm_model_over_budget(const struct mm_model *mm);
/*! mm_model_finish() : end of trace: run every thread's queued ops to completion (round robin). */
void mm_model_finish(struct mm_model *mm);

/* The bug zoo and the baselines (variants.c). */
struct mm_variant_info {
	const char *name;	/* e.g. "mremap-leaf-only-flush" */
	bool baseline;		/* a correct but costlier pre-patch logic, not a bug */
	const char *desc;	/* one line */
	const char *seed;	/* the seed (file, patch) or commit it comes from */
	const char *catches;	/* the invariant expected to catch it ("-" for baselines) */
};
unsigned mm_variant_count(void);
const struct mm_variant_info *mm_variant_info(unsigned id);	/* id 0 is the default */
/*! mm_variant_lookup() : the id of a variant name, -1 if unknown. */
int mm_variant_lookup(const char *name);
/*! mm_model_set_variant() : switch the variant's decision point on (before the first event). */
void mm_model_set_variant(struct mm_model *mm, unsigned id);

/*
 * Kernel-version profiles (variants.c): the model's routines as of an older kernel, as a
 * set of the baselines above (each the logic before one change).  Profile 0 is the
 * default (the newest logic); a trace's header names its kernel, replay picks the profile.
 */
struct mm_profile_info {
	const char *name;		/* "6.1" */
	const char *desc;		/* one line: which kernels it stands for */
	const char *const *variants;	/* baseline names, NULL-terminated */
};
unsigned mm_profile_count(void);
const struct mm_profile_info *mm_profile_info(unsigned id);
/*! mm_profile_lookup() : the id of a profile name, -1 if unknown. */
int mm_profile_lookup(const char *name);
/*!
 * mm_profile_for_kernel() : the profile for a trace header's kernel string (e.g. "Debian
 * linux-image-6.1.0-57-arm64-unsigned 6.1.192-3"): its first MAJOR.MINOR decides; the
 * default when there is none.  release (size bytes) gets "MAJOR.MINOR", "" if none.
 */
unsigned mm_profile_for_kernel(const char *kernel, char *release, unsigned size);

/*! mm_model_hash() : hash of the model's own state (VMAs, reference maps, allocator). */
uint64_t mm_model_hash(const struct mm_model *mm);

#endif
