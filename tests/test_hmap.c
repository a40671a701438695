/* SPDX-License-Identifier: GPL-2.0-only */
/* test_hmap.c - the machine's multimap against a brute-force reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "hmap.h"

#define N 4000

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_multimap_matches_reference_under_random_ops(void **state)
{
	(void)state;
	struct hmap h;
	static uint64_t keys[N], vals[N];
	static int live[N];
	hmap_init(&h, 2);
	for (int round = 0; round < 200000; round++) {
		int i = (int)(next() % N);
		if (!live[i]) {
			keys[i] = next() % 64;	/* few keys: many duplicates, long chains */
			vals[i] = (uint64_t)i;
			hmap_insert(&h, keys[i], vals[i]);
			live[i] = 1;
		} else {
			assert_true(hmap_remove(&h, keys[i], vals[i]));
			live[i] = 0;
		}
		if (round % 997 == 0) {
			for (uint64_t k = 0; k < 64; k++) {
				unsigned want = 0, got = 0;
				for (int j = 0; j < N; j++)
					want += live[j] && keys[j] == k;
				for (uint64_t it = hmap_first(&h, k); it != HMAP_END; it = hmap_next(&h, k, it)) {
					uint64_t v = hmap_val(&h, it);
					assert_true(live[v] && keys[v] == k);
					got++;
				}
				assert_int_equal(want, got);
			}
		}
	}
	hmap_destroy(&h);
}

/*
 * A key's values come in the order they were inserted, whatever the map's capacity and however
 * often it grew: the machine's results (which stale fact a report names first, the order of the
 * facts array) follow that order, so it must not depend on where a key's chain lay in the slots
 * when the map grew (a chain wrapping past the last slot came out first after a growth that
 * reinserted in slot order).
 */
static void test_values_come_in_insertion_order(void **state)
{
	(void)state;
	struct hmap small, big;
	static uint64_t keys[N], order[N];
	static int live[N];
	uint64_t seq = 0;
	hmap_init(&small, 2);
	hmap_init(&big, 14);	/* never grows */
	for (int round = 0; round < 100000; round++) {
		int i = (int)(next() % N);
		if (!live[i]) {
			keys[i] = next() % 8;	/* long chains of one key, wrapping past the end */
			order[i] = seq++;
			hmap_insert(&small, keys[i], (uint64_t)i);
			hmap_insert(&big, keys[i], (uint64_t)i);
			live[i] = 1;
		} else {
			assert_true(hmap_remove(&small, keys[i], (uint64_t)i));
			assert_true(hmap_remove(&big, keys[i], (uint64_t)i));
			live[i] = 0;
		}
		if (round % 499 == 0) {
			for (uint64_t k = 0; k < 8; k++) {
				uint64_t a = hmap_first(&small, k), b = hmap_first(&big, k), last = 0;
				bool first = true;
				for (; a != HMAP_END; a = hmap_next(&small, k, a), b = hmap_next(&big, k, b)) {
					assert_true(b != HMAP_END);
					uint64_t v = hmap_val(&small, a);
					assert_int_equal(v, hmap_val(&big, b));
					assert_true(first || order[v] > last);
					last = order[v];
					first = false;
				}
				assert_true(b == HMAP_END);
			}
		}
	}
	hmap_destroy(&small);
	hmap_destroy(&big);
}

/*
 * hmap_clear_run() called for every key a map holds, in any order and a key more than once,
 * empties the map and keeps its capacity (the machine's reset clears the fact indexes so):
 * every slot empty, count 0, and the map then behaves as a new one of that capacity.
 */
static void test_clear_run_of_every_key_empties_the_map(void **state)
{
	(void)state;
	static uint64_t keys[N];
	static int live[N];
	for (int trial = 0; trial < 50; trial++) {
		struct hmap h, fresh;
		hmap_init(&h, 2);
		for (int i = 0; i < N; i++)
			live[i] = 0;
		int n = 1 + (int)(next() % N);
		for (int round = 0; round < 3 * n; round++) {
			int i = (int)(next() % (uint64_t)n);
			if (!live[i]) {
				/* few keys, some far apart: long chains that wrap past the last slot */
				keys[i] = trial % 2 ? next() % 16 : next();
				hmap_insert(&h, keys[i], (uint64_t)i);
				live[i] = 1;
			} else {
				assert_true(hmap_remove(&h, keys[i], (uint64_t)i));
				live[i] = 0;
			}
		}
		uint64_t mask = h.mask;
		/* every live key, from a random start, each live entry's key once (keys repeat) */
		int start = (int)(next() % (uint64_t)n);
		for (int j = 0; j < n; j++) {
			int i = (start + j) % n;
			if (live[i])
				hmap_clear_run(&h, keys[i]);
		}
		assert_int_equal(h.count, 0);
		assert_int_equal(h.mask, mask);
		for (uint64_t s = 0; s <= h.mask; s++)
			assert_true(h.slot[s].key == HMAP_EMPTY);
		/* and it works as a new map of that capacity */
		hmap_init(&fresh, 2);
		for (int i = 0; i < 64; i++) {
			uint64_t k = next() % 8;
			hmap_insert(&h, k, (uint64_t)i);
			hmap_insert(&fresh, k, (uint64_t)i);
		}
		for (uint64_t k = 0; k < 8; k++) {
			uint64_t a = hmap_first(&h, k), b = hmap_first(&fresh, k);
			for (; a != HMAP_END; a = hmap_next(&h, k, a), b = hmap_next(&fresh, k, b)) {
				assert_true(b != HMAP_END);
				assert_int_equal(hmap_val(&h, a), hmap_val(&fresh, b));
			}
			assert_true(b == HMAP_END);
		}
		hmap_destroy(&h);
		hmap_destroy(&fresh);
	}
}

/*
 * hmap_remap() gives every key the values, in the order, that hmap_remove() of each pair it drops
 * and hmap_replace() of each it renames give (the machine's range TLBI removes its stale facts
 * so): on maps of few keys with long, wrapping chains, and of many keys in short runs.
 */
static void test_remap_matches_remove_and_replace(void **state)
{
	(void)state;
	static uint64_t keys[N];
	static uint32_t map[N];
	for (int trial = 0; trial < 60; trial++) {
		struct hmap a, b;
		hmap_init(&a, 2);
		hmap_init(&b, 2);
		int n = 1 + (int)(next() % N);
		uint64_t nkeys = trial % 3 == 0 ? 8 : trial % 3 == 1 ? 64 : UINT32_MAX;
		for (int i = 0; i < n; i++) {
			keys[i] = next() % nkeys;
			hmap_insert(&a, keys[i], (uint64_t)i);
			hmap_insert(&b, keys[i], (uint64_t)i);
		}
		/* drop some, rename the others to distinct new values (a permutation of 0..n-1) */
		unsigned drop = (unsigned)(next() % 4);
		for (int i = 0; i < n; i++)
			map[i] = (uint32_t)i;
		for (int i = n - 1; i > 0; i--) {
			int j = (int)(next() % (uint64_t)(i + 1));
			uint32_t t = map[i];
			map[i] = map[j];
			map[j] = t;
		}
		for (int i = 0; i < n; i++)
			if (next() % 4 < drop)
				map[i] = HMAP_REMAP_DEL;
		/* one by one: the renamed values go through values no pair holds (n and up) */
		for (int i = 0; i < n; i++) {
			if (map[i] == HMAP_REMAP_DEL)
				assert_true(hmap_remove(&b, keys[i], (uint64_t)i));
			else
				assert_true(hmap_replace(&b, keys[i], (uint64_t)i, (uint64_t)n + map[i]));
		}
		for (int i = 0; i < n; i++)
			if (map[i] != HMAP_REMAP_DEL)
				assert_true(hmap_replace(&b, keys[i], (uint64_t)n + map[i], map[i]));
		hmap_remap(&a, map);
		assert_int_equal(a.count, b.count);
		for (int i = 0; i < n; i++) {
			uint64_t k = keys[i];
			uint64_t x = hmap_first(&a, k), y = hmap_first(&b, k);
			for (; x != HMAP_END; x = hmap_next(&a, k, x), y = hmap_next(&b, k, y)) {
				assert_true(y != HMAP_END);
				assert_int_equal(hmap_val(&a, x), hmap_val(&b, y));
			}
			assert_true(y == HMAP_END);
		}
		/* and the map goes on as one that never was remapped */
		for (int i = 0; i < 64; i++) {
			uint64_t k = next() % nkeys, v = (uint64_t)N + (uint64_t)i;
			hmap_insert(&a, k, v);
			hmap_insert(&b, k, v);
			uint64_t x = hmap_first(&a, k), y = hmap_first(&b, k);
			for (; x != HMAP_END; x = hmap_next(&a, k, x), y = hmap_next(&b, k, y)) {
				assert_true(y != HMAP_END);
				assert_int_equal(hmap_val(&a, x), hmap_val(&b, y));
			}
			assert_true(y == HMAP_END);
		}
		hmap_destroy(&a);
		hmap_destroy(&b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_multimap_matches_reference_under_random_ops),
					    cmocka_unit_test(test_values_come_in_insertion_order),
					    cmocka_unit_test(test_clear_run_of_every_key_empties_the_map),
					    cmocka_unit_test(test_remap_matches_remove_and_replace) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
