/* SPDX-License-Identifier: GPL-2.0-only */
/* test_hmap.c - the machine's multimap against a brute-force reference. */
#include <setjmp.h>
#include <stdarg.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_multimap_matches_reference_under_random_ops) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
