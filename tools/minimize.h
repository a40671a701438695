/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * minimize.h - delta debugging of a trace that shows a violation: the
 * shortest, simplest trace that still shows it (`ptfuzz minimize`).
 * Internal to tools/.
 */
#ifndef PTFUZZ_MINIMIZE_H
#define PTFUZZ_MINIMIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "session.h"
#include "violation.h"

/* A trace held in memory: the header and its events, comments left out. */
struct mz_trace {
	struct pt_header h;
	struct pt_event *ev;
	size_t n;
};

/* What must survive: a violation signature, or only its invariant. */
struct mz_target {
	char signature[sizeof(((struct pt_violation *)0)->signature)];
	unsigned id;
	bool same_invariant;	/* any violation of invariant `id` will do */
};

struct mz_stats {
	const char *pass;	/* the pass running: "events", "single events", "schedule", ... */
	size_t events;		/* events left */
	uint64_t replays;	/* candidates replayed so far */
	unsigned rounds;	/* rounds of all passes (the last one changed nothing) */
	bool capped;		/* stopped at max_replays: the result shows the target, may not be 1-minimal */
};

struct mz_config {
	const char *variant;		/* run the mm model as this variant, or NULL */
	struct mz_target target;
	/* with a variant: a candidate must not show the target under the default model either
	 * (it reproduces the variant's bug, not something the default also gets wrong) */
	bool clean_by_default;
	uint64_t max_replays;
	void (*progress)(void *ctx, const struct mz_stats *st);	/* after each replay, or NULL */
	void *progress_ctx;
};

/*! mz_trace_free() : free t's events. */
void mz_trace_free(struct mz_trace *t);

/*! mz_matches() : v is the target (same signature, or same invariant). */
bool mz_matches(const struct mz_target *tg, const struct pt_violation *v);

/*!
 * mz_replay() : the one place a trace is replayed: t through a fresh session
 * under variant (NULL: default).  With tg, stops at the first violation that
 * matches it and returns true (false: none, or the machine cannot run t's
 * header).  With *keep, replays everything, finishes, and hands the session
 * over (the caller frees it; NULL if the header is unusable).
 */
bool mz_replay(const struct mz_trace *t, const char *variant, const struct mz_target *tg,
	       struct pt_session **keep);

/*!
 * mz_minimize() : replace t by a 1-minimal trace that still shows c->target
 * (t must show it): delta debugging over events (a thread's sched and migrate
 * events go with it), then single events, schedule steps, arguments and the
 * CPUs, repeated until a round changes nothing.  Deterministic.
 * @return : 0, or 1 when c->max_replays stopped it (t then shows the target
 *           but may not be 1-minimal).
 */
int mz_minimize(const struct mz_config *c, struct mz_trace *t, struct mz_stats *st);

#endif
