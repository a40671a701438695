/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * check.h - the invariant checkers (DESIGN.md catalogue I1-I12).  They
 * observe the machine through its observer hooks and queries, and never
 * change it.  I9 and I10 need the ops layer: the mm model reports them
 * through pt_checker_report().
 */
#ifndef PTFUZZ_CHECK_H
#define PTFUZZ_CHECK_H

#include <stdarg.h>

#include "machine.h"
#include "violation.h"

struct pt_checker;

/*! pt_checker_new() : checkers attached to m (installs itself as m's observer). */
struct pt_checker *pt_checker_new(struct pt_machine *m);
void pt_checker_free(struct pt_checker *c);
/*! pt_checker_reset() : back to the state of pt_checker_new() on the (reset) machine, keeping allocations. */
void pt_checker_reset(struct pt_checker *c);
unsigned pt_checker_count(const struct pt_checker *c);
const struct pt_violation *pt_checker_get(const struct pt_checker *c, unsigned i);
struct pt_violation *pt_checker_get_mut(struct pt_checker *c, unsigned i);

/*!
 * pt_checker_report() : record a violation found outside the arch checkers
 * (the mm model's I9/I10).  tag is the stable part of the signature.
 * Violations with a signature already reported are folded into it.
 * @return : 1 if a new violation was recorded, 0 if folded.
 */
int pt_checker_report(struct pt_checker *c, unsigned id, const char *tag, const char *rule, uint64_t va,
		      uint64_t pa, uint64_t old_desc, uint64_t new_desc, const struct pt_stale *stale,
		      const char *fmt, ...) __attribute__((format(printf, 10, 11)));

/* A rule: invariant id and tag, as in a signature I<id>/<kind>/<tag>/<site>. */
struct pt_rule {
	unsigned id;
	const char *tag;
};
/*! pt_checker_rules() : every rule the checkers (and the model's checks) can report; *n gets the count. */
const struct pt_rule *pt_checker_rules(unsigned *n);
/*! pt_checker_set_site() : the model routine now running (part of signatures), NULL for none. */
void pt_checker_set_site(struct pt_checker *c, const char *site);

#endif
