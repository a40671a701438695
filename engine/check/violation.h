/* SPDX-License-Identifier: GPL-2.0-only */
/* violation.h - what a checker reports. */
#ifndef PTFUZZ_VIOLATION_H
#define PTFUZZ_VIOLATION_H

#include <stdint.h>

/* Invariant IDs of the catalogue (DESIGN.md), I1..I12. */
enum pt_inv {
	PT_I1 = 1,	/* stale-tlb/free */
	PT_I2,		/* stale-tlb/perm */
	PT_I3,		/* stale-tlb/walk */
	PT_I4,		/* bbm */
	PT_I5,		/* contig */
	PT_I6,		/* missed-barrier/kernel-map */
	PT_I7,		/* missed-barrier/table-zero */
	PT_I8,		/* partial-unmap */
	PT_I9,		/* contract */
	PT_I10,		/* semantics */
	PT_I11,		/* hang */
	PT_I12,		/* lock */
	PT_INV_COUNT
};

/*! pt_inv_kind() : "stale-tlb/free", ... for an invariant id. */
const char *pt_inv_kind(unsigned id);

/* The stale TLB / walk-cache entry a violation is about, if any. */
struct pt_stale {
	int present;		/* 0: no stale entry involved */
	int walk;		/* 1: walk-cache (table) entry; 0: leaf TLB entry */
	uint16_t asid;
	int global;
	unsigned level;		/* level of the descriptor (0..3) */
	uint64_t va;		/* first VA the entry translates */
	uint64_t size;		/* bytes it covers */
	uint64_t desc;		/* the descriptor as it was cached */
	uint64_t since;		/* event index at which it became stale */
};

struct pt_violation {
	unsigned id;		/* enum pt_inv */
	char signature[96];	/* kind + rule + path; no addresses: stable for dedup */
	uint64_t event;		/* index of the trace event (0-based, counting every event of the trace) */
	uint64_t arch_event;	/* index in the arch-level stream (differs for ops-level traces: see --record) */
	unsigned cpu;		/* the CPU whose event revealed it */
	uint64_t va;		/* the address involved (0 if none) */
	uint64_t pa;		/* the page / table / entry physical address involved */
	uint64_t old_desc, new_desc;	/* descriptors involved (0 if none) */
	struct pt_stale stale;
	char what[256];		/* one sentence: what happened, with addresses */
	const char *rule;	/* one sentence citing the rule (Arm ARM / kernel contract) */
	unsigned repeats;	/* further occurrences with the same signature, folded into this one */
};

#endif
