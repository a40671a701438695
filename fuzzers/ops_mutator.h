/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ops_mutator.h - structure-aware mutation of ops-level fuzz inputs
 * (program.h), shared by the libFuzzer hooks (LLVMFuzzerCustomMutator,
 * LLVMFuzzerCustomCrossOver) and the AFL++ custom mutator library.
 *
 * Mutations act on whole records: insert / delete / duplicate / swap / split
 * an op, retarget an address to a boundary or to a region the program made,
 * move an op to another CPU (and so to the thread running there), perturb the
 * schedule (a sched record's steps, a new sched or migrate), change the CPU
 * count, or open a window: inside a kernel op (a thread runs it and is stopped
 * some stores in while its CPU takes an interrupt or touches kernel memory, or
 * migrates), or around a user op (a pageout on another thread stopped inside its
 * rmap walk, or the op stopped past its PTL, and a third CPU touching the range).  Every result is a valid input, because every input is.
 */
#ifndef PTFUZZ_OPS_MUTATOR_H
#define PTFUZZ_OPS_MUTATOR_H

#include <stddef.h>
#include <stdint.h>

/* The mutations, for statistics and afl_custom_describe(). */
enum ptm_kind { PTM_INSERT, PTM_DELETE, PTM_DUPLICATE, PTM_SWAP, PTM_SPLIT, PTM_RETARGET, PTM_MOVE_CPU,
		PTM_SCHEDULE, PTM_CPUS, PTM_TWEAK, PTM_WINDOW, PTM_COUNT };

/*! ptm_name() : a short name of a mutation ("insert", "retarget" ...). */
const char *ptm_name(enum ptm_kind k);

/*!
 * ptm_mutate() : mutate data[0..size) in place (data has room for max_size
 * bytes); rng is the state of a deterministic generator (never 0).
 * @return : the new size (<= max_size); *done (may be NULL) says which mutation ran.
 */
size_t ptm_mutate(uint8_t *data, size_t size, size_t max_size, uint64_t *rng, enum ptm_kind *done);

/*! ptm_crossover() : a header and a record prefix of a, then a record suffix of b, into out. */
size_t ptm_crossover(const uint8_t *a, size_t asize, const uint8_t *b, size_t bsize, uint8_t *out,
		     size_t max_size, uint64_t *rng);

/*! ptm_records() : record start offsets of data (at most max); returns how many. */
size_t ptm_records(const uint8_t *data, size_t size, size_t *off, size_t max);

#endif
