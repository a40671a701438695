/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * program.h - the ops-level fuzz input: bytes -> a program of mm operations on
 * several CPUs and threads (a trace of ops-level events), and back.
 *
 * One decoder for every harness (libFuzzer, AFL++, the regression driver),
 * for `ptfuzz convert` (a crash file becomes a readable trace) and for the
 * custom mutators, so that what a fuzzer found is exactly what a user
 * replays.
 *
 * Encoding (all of it total: any byte string decodes to a valid program):
 *
 *   byte 0          CPU count - 1 (low 2 bits: 1..4 CPUs); the rest reserved
 *   then records    one after another until the input ends:
 *     biased        8 bytes: [tag][cpu][a][b][c][d][e][f]; tag % 32 picks what
 *                   the record does (mmap, munmap, mremap, mprotect, madvise,
 *                   touch, pageout, vmalloc, vmap, vunmap, vfree, hugetlb,
 *                   map_mem, thread, sched, migrate, irq, access), cpu % CPUs
 *                   where it is issued, a..f choose among addresses and sizes
 *                   that matter (contpte 64K, PMD 2M, CONT_PMD 32M, PUD 1G
 *                   boundaries, +-1 page, the regions and areas the program
 *                   made before, overlaps, reuse).
 *     literal       0xff, L, then L bytes: kind, cpu, op, and one LEB128
 *                   varint per key of the kind's schema (event.h), in schema
 *                   order: any ops-level event with exact values.  What
 *                   pt_program_encode() writes, so corpus traces seed the
 *                   fuzzer.
 *   A record cut by the end of the input reads its missing bytes as 0.
 *
 * The decoder keeps a shadow of what the program created (user regions,
 * vmalloc / vmap areas, hugetlb pages, linear-map banks, threads) and only
 * emits what a real caller of the kernel could do: vfree of a live vmalloc
 * area, vunmap of a whole vmap area, map_mem of memory not yet mapped,
 * hugetlb on its own pages, threads with fresh tids above the CPU count,
 * sched / migrate of threads that exist, bounded sizes, and interrupts whose
 * handler only does what a handler can: map a few 4K pages into kernel page
 * tables that exist, at VA no area had (set_memory_valid() / __set_fixmap()-like
 * pte stores; never vmalloc, vmap of new tables, vunmap or vfree, which sleep or
 * BUG in IRQ context).  An IRQ or kernel-access record with bit 0x80 of its byte
 * 7 first lets the CPU's thread run 1..32 steps into its queued work (a sched
 * event before it), so that it lands inside a routine.  A record (biased or
 * literal) that would break such a contract is dropped, so a finding is a bug
 * in a routine, not an I9 contract break.  With `allow_contract` the decoder
 * also emits what only a buggy caller does (a vunmap that cuts a vmap area,
 * a vfree of any area): for differential runs of the variants that sit
 * behind a WARN.
 */
#ifndef PTFUZZ_PROGRAM_H
#define PTFUZZ_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define PT_PROG_MAX_CPUS 4u
#define PT_PROG_MAX_OPS 64u		/* records decoded at most (default) */
#define PT_PROG_RECORD 8u		/* bytes of a biased record */
#define PT_PROG_LITERAL 0xffu		/* tag of a literal record */
#define PT_PROG_MAX_LEN (2ull << 30)	/* largest user mapping (mremap_test.c's 2G PUD cases) */
#define PT_PROG_MAX_TOUCH (8ull << 20)	/* largest touch: faults cost per page */
#define PT_PROG_MAX_KLEN (64ull << 20)	/* largest vmalloc / vmap / map_mem by pages */
#define PT_PROG_MAX_KHUGE (4ull << 30)	/* largest with huge mappings allowed (blocks are cheap) */

struct pt_program_opts {
	unsigned max_ops;		/* records to decode and events to emit at most; 0 = PT_PROG_MAX_OPS */
	bool allow_contract;		/* also emit caller-contract breaks (see above) */
};

struct pt_program {
	struct pt_header h;
	struct pt_event *ev;		/* the program, in trace order */
	unsigned n, cap;
	unsigned dropped;		/* records dropped: contract, bounds or grammar */
};

/*! pt_program_init() / pt_program_free() : an empty program; reusable across decodes. */
void pt_program_init(struct pt_program *p);
void pt_program_free(struct pt_program *p);

/*!
 * pt_program_opts_from_env() : the decoder options of the fuzz harness's environment, read
 * the same way wherever a program is decoded (the harness, `ptfuzz convert/replay` of a
 * fuzz input): PTFUZZ_CONTRACTS=strict|allow (unset or empty: strict), PTFUZZ_MAX_OPS=1..4096
 * (unset or empty: PT_PROG_MAX_OPS).
 * @return : 0, or -1 with why ("PTFUZZ_X: expected ..., got '...'") filled in.
 */
int pt_program_opts_from_env(struct pt_program_opts *o, char *why, size_t why_size);

/*!
 * pt_program_decode() : decode data[0..size) into p (its previous content is
 * replaced; its memory reused).  Total: every input decodes.  o may be NULL.
 * Deterministic: a pure function of the bytes and the options.
 */
void pt_program_decode(const uint8_t *data, size_t size, const struct pt_program_opts *o,
		       struct pt_program *p);

/*!
 * pt_program_encode() : the input that decodes to exactly events ev[0..n) on
 * h->cpus CPUs: a header byte and one literal record per event.  Comments are
 * skipped.  @return : the malloc'd input and its size in *size, or NULL with a
 * one-line reason in why[0..why_size) when an event cannot be a fuzz input
 * (an arch-level event, more than PT_PROG_MAX_CPUS CPUs); events the decoder
 * would drop (contracts, bounds) are counted in *dropped, when not NULL.
 */
uint8_t *pt_program_encode(const struct pt_header *h, const struct pt_event *ev, unsigned n, size_t *size,
			   unsigned *dropped, char *why, size_t why_size);

/*!
 * pt_program_record_len() : length of the record starting at data[pos] (the
 * last one may be cut by the end of the input); the custom mutators use it to
 * move whole records.
 */
size_t pt_program_record_len(const uint8_t *data, size_t size, size_t pos);

#endif
