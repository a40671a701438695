/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mutants.c - N one-step mutants of a fuzz input, of one mutation kind, each in a
 * file of its own: what bench/window_rate.sh replays to measure how often one step of
 * the structure-aware mutator (fuzzers/ops_mutator.h) makes a finding.
 *
 *   ptfuzz-bench-mutants [--seed S] INPUT N OUTDIR [KIND]
 *
 * KIND is a mutation name (ptm_name(): insert, window, ...) or absent for any.
 * Deterministic: the same arguments give the same files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops_mutator.h"

#define MAX_INPUT (1u << 16)

static int usage(void)
{
	fprintf(stderr, "usage: ptfuzz-bench-mutants [--seed S] INPUT N OUTDIR [KIND]\n");
	return 2;
}

int main(int argc, char **argv)
{
	static uint8_t in[MAX_INPUT], buf[MAX_INPUT];
	uint64_t rng = 12345;
	int a = 1;
	if (argc > 2 && !strcmp(argv[1], "--seed")) {
		rng = strtoull(argv[2], NULL, 0);
		a = 3;
	}
	if (argc - a < 3 || argc - a > 4)
		return usage();
	int want = -1;
	if (argc - a == 4) {
		for (int k = 0; k < PTM_COUNT; k++)
			if (!strcmp(argv[a + 3], ptm_name((enum ptm_kind)k)))
				want = k;
		if (want < 0) {
			fprintf(stderr, "ptfuzz-bench-mutants: no mutation '%s'\n", argv[a + 3]);
			return 2;
		}
	}
	FILE *f = fopen(argv[a], "rb");
	if (!f) {
		fprintf(stderr, "ptfuzz-bench-mutants: %s: cannot open\n", argv[a]);
		return 2;
	}
	size_t n = fread(in, 1, sizeof(in), f);
	fclose(f);
	long count = strtol(argv[a + 1], NULL, 10);
	for (long i = 0; i < count;) {
		memcpy(buf, in, n);
		enum ptm_kind k;
		size_t m = ptm_mutate(buf, n, sizeof(buf), &rng, &k);
		if (want >= 0 && (int)k != want)
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/m%05ld", argv[a + 2], i++);
		f = fopen(path, "wb");
		if (!f || fwrite(buf, 1, m, f) != m) {
			fprintf(stderr, "ptfuzz-bench-mutants: %s: cannot write\n", path);
			return 2;
		}
		fclose(f);
	}
	return 0;
}
