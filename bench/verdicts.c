/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * verdicts.c - every verdict of the ops-level harness's path, printed, so that two
 * builds of the model can be compared for equivalence (bench/equiv.sh).
 *
 *   ptfuzz-verdicts [--random N] [--seed N] [--variants] [FILE...]
 *
 * Each input (a file given, or N random byte strings from a fixed-seed PRNG, 1..1024
 * bytes) is decoded by the harnesses' decoder (pt_program_decode()) and run the way
 * fuzzers/ops_invariants.c runs it: a session kept across inputs and reset in between,
 * the events, pt_session_finish().  One line per run: the input, the variant, the state
 * hash, a hash of the counters, then every violation with all its fields.  With
 * --variants, every input also runs under every other variant (bugs and baselines), with caller-contract
 * breaks allowed (PTFUZZ_CONTRACTS=allow), the way a campaign on a variant decodes.
 * Random inputs under the variants: one in ten of the N (the variants' verdicts are the
 * ones with violations in them, so they are compared in full too).
 *
 * The output is deterministic; `diff` of two builds' outputs is the equivalence check.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm.h"
#include "program.h"
#include "session.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t fnv(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static struct pt_session *kept[2];

static void run(const char *name, const uint8_t *data, size_t size, const char *variant)
{
	static struct pt_program prog;
	static bool init;
	struct pt_program_opts o = { .allow_contract = variant != NULL };
	if (!init) {
		pt_program_init(&prog);
		init = true;
	}
	pt_program_decode(data, size, &o, &prog);
	struct pt_session **slot = &kept[variant != NULL];
	if (!*slot)
		*slot = pt_session_new(&prog.h);
	else if (pt_session_reset(*slot, &prog.h))
		*slot = NULL;
	struct pt_session *s = *slot;
	if (!s) {
		fprintf(stderr, "ptfuzz-verdicts: %s: the decoder made an unusable header\n", name);
		exit(2);
	}
	if (variant && pt_session_set_variant(s, variant)) {
		fprintf(stderr, "ptfuzz-verdicts: unknown variant '%s'\n", variant);
		exit(2);
	}
	for (unsigned i = 0; i < prog.n; i++)
		pt_session_event(s, &prog.ev[i]);
	pt_session_finish(s);
	unsigned nv = pt_session_nviolations(s);
	printf("%s %s ops=%u state=%016" PRIx64 " counters=%016" PRIx64 " violations=%u\n", name,
	       variant ? variant : "default", prog.n, pt_session_hash(s),
	       fnv(pt_session_counters(s), sizeof(struct pt_counters)), nv);
	for (unsigned i = 0; i < nv; i++) {
		const struct pt_violation *v = pt_session_violation(s, i);
		printf("  I%u %s ev=%" PRIu64 " arch=%" PRIu64 " cpu=%u va=%" PRIx64 " pa=%" PRIx64
		       " old=%" PRIx64 " new=%" PRIx64 " stale=%d/%d/%u/%d/%u/%" PRIx64 "/%" PRIx64 "/%" PRIx64
		       "/%" PRIu64 " repeats=%u what=%s rule=%s\n",
		       v->id, v->signature, v->event, v->arch_event, v->cpu, v->va, v->pa, v->old_desc,
		       v->new_desc, v->stale.present, v->stale.walk, v->stale.asid, v->stale.global,
		       v->stale.level, v->stale.va, v->stale.size, v->stale.desc, v->stale.since, v->repeats,
		       v->what, v->rule ? v->rule : "-");
	}
}

static void run_all(const char *name, const uint8_t *data, size_t size, bool variants)
{
	run(name, data, size, NULL);
	if (!variants)
		return;
	for (unsigned k = 1; k < mm_variant_count(); k++)
		run(name, data, size, mm_variant_info(k)->name);
}

static uint8_t *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "ptfuzz-verdicts: %s: cannot open\n", path);
		exit(2);
	}
	size_t cap = 4096, n = 0;
	uint8_t *b = malloc(cap);
	size_t got;
	while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap)
			b = realloc(b, cap *= 2);
	}
	fclose(f);
	if (!b) {
		fprintf(stderr, "ptfuzz-verdicts: out of memory\n");
		exit(2);
	}
	*size = n;
	return b;
}

int main(int argc, char **argv)
{
	unsigned long random = 0;
	uint64_t seed = 1;
	bool variants = false;
	int i;
	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "--random") && i + 1 < argc)
			random = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--variants"))
			variants = true;
		else {
			fprintf(stderr, "usage: ptfuzz-verdicts [--random N] [--seed N] [--variants] [FILE...]\n");
			return 2;
		}
	}
	for (; i < argc; i++) {
		size_t size;
		uint8_t *b = slurp(argv[i], &size);
		run_all(argv[i], b, size, variants);
		free(b);
	}
	static uint8_t buf[1024];
	rng_state = seed;
	for (unsigned long n = 0; n < random; n++) {
		size_t size = 1 + rnd() % sizeof(buf);
		for (size_t j = 0; j < size; j += 8) {
			uint64_t r = rnd();
			memcpy(buf + j, &r, size - j < 8 ? size - j : 8);
		}
		char name[32];
		snprintf(name, sizeof(name), "random-%lu", n);
		run_all(name, buf, size, variants && n % 10 == 0);
	}
	for (unsigned k = 0; k < 2; k++)
		if (kept[k])
			pt_session_free(kept[k]);
	return 0;
}
