/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * trace_replay.c - property: `ptfuzz replay` survives any bytes.
 *
 * Whatever the reader accepts - arch-level events in any order, ops-level
 * events with any addresses, sizes, flags and schedules - runs through the
 * machine model, the mm model and the checkers to a verdict: violations or
 * none, never a crash, an assertion, a hang or a leak.  The same input twice
 * gives the same violations and the same state hash.
 */
#include <stdint.h>

#include "fuzz_common.h"
#include "session.h"

#define MAX_EVENTS 4096
/*
 * The model's limits for one exec (README "Limits"), smaller than replay's defaults so
 * that no input, whatever sizes it names, costs more than a few seconds under ASan: a
 * capacity of 256 MiB of 4K pages, 2^18 loop steps plus 256 per ops-level event.  The
 * paths are the same (ENOMEM past the capacity, the trace rejected past its budget), only
 * reached sooner.
 */
#define FUZZ_CAPACITY (1ull << 16)
#define FUZZ_ALLOWANCE (1ull << 18)
#define FUZZ_PER_OP 256ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t replay(const uint8_t *data, size_t size, unsigned *nviol)
{
	struct pt_error err = { 0 };
	struct pt_reader *r = pt_reader_open_mem(data, size, FUZZ_NAME, &err);
	struct pt_event ev;
	unsigned n = 0;

	if (!r)
		return 0;
	struct pt_session *s = pt_session_new(pt_reader_header(r));
	if (!s) {
		pt_reader_close(r);
		return 0;
	}
	pt_session_set_limits(s, FUZZ_CAPACITY, FUZZ_ALLOWANCE, FUZZ_PER_OP);
	while (n++ < MAX_EVENTS && !pt_session_error(s) && pt_reader_next(r, &ev, &err) == 1)
		pt_session_event(s, &ev);
	pt_session_finish(s);
	*nviol = pt_session_nviolations(s);
	uint64_t h = pt_session_hash(s);
	for (unsigned i = 0; i < *nviol; i++) {
		const struct pt_violation *v = pt_session_violation(s, i);
		FUZZ_CHECK(v->id >= 1 && v->id < PT_INV_COUNT && v->rule && v->signature[0], "violation %u", i);
		h ^= (uint64_t)v->id << (i % 60);
	}
	pt_session_free(s);
	pt_reader_close(r);
	return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned a = 0, b = 0;
	uint64_t ha = replay(data, size, &a);
	uint64_t hb = replay(data, size, &b);
	FUZZ_CHECK(a == b && ha == hb, "two replays differ: %u/%u violations", a, b);
	return 0;
}
