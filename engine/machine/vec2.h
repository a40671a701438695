/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vec2.h - two 64-bit entries in a 128-bit vector (GCC's vector extension; SSE2, the x86-64
 * baseline), for the loops over table entries that gcc 12 at -O2 does not vectorise itself:
 * CONT counts, span ORs, a run's compare.  Each user sums or ORs lanes, so the order of the
 * entries does not matter; the odd entry of a run is the user's, last.
 */
#ifndef PTFUZZ_VEC2_H
#define PTFUZZ_VEC2_H

#include <stdint.h>
#include <string.h>

typedef uint64_t u64x2 __attribute__((vector_size(16)));

/* p[0] and p[1], p aligned to 8 bytes only */
static inline u64x2 u64x2_load(const uint64_t *p)
{
	u64x2 v;
	memcpy(&v, p, sizeof(v));
	return v;
}

#endif
