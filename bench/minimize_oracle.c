/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * minimize_oracle.c - the question `ptfuzz minimize` asks of a candidate, as
 * a program that crashes when the answer is yes, so that byte-level
 * minimizers (afl-tmin) can be compared with it on the same crashes:
 *
 *   ptfuzz-minimize-oracle [--variant V] SIGNATURE FILE
 *
 * abort()s when FILE replays to a violation with SIGNATURE (under V, and
 * then not under the default model); exits 0 otherwise, also when FILE does
 * not parse (a byte-level minimizer must not mistake a syntax error for the
 * crash).  bench/bench_minimize.sh --afl-tmin drives it.
 *
 * Built with -DORACLE_LIBFUZZER (and -fsanitize=fuzzer) it is the same
 * question as a libFuzzer target, for `-minimize_crash=1`: the input is the
 * trace, PTFUZZ_ORACLE_SIGNATURE and PTFUZZ_ORACLE_VARIANT the question
 * (bench/bench_minimize.sh --libfuzzer).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "trace.h"

/* data[0..size): a trace in memory; NULL: the file at path */
static bool shows(const char *path, const void *data, size_t size, const char *variant, const char *sig)
{
	struct pt_error err;
	struct pt_event ev;
	struct pt_reader *r = data ? pt_reader_open_mem(data, size, "input", &err) : pt_reader_open(path, &err);
	bool hit = false;
	int rc;

	if (!r)
		return false;
	struct pt_session *s = pt_session_new(pt_reader_header(r));
	if (!s) {
		pt_reader_close(r);
		return false;
	}
	if (variant && pt_session_set_variant(s, variant) < 0) {
		fprintf(stderr, "ptfuzz-minimize-oracle: unknown variant %s\n", variant);
		exit(2);
	}
	while ((rc = pt_reader_next(r, &ev, &err)) > 0)
		pt_session_event(s, &ev);
	if (rc == 0) {
		pt_session_finish(s);
		for (unsigned i = 0; i < pt_session_nviolations(s) && !hit; i++)
			hit = !strcmp(pt_session_violation(s, i)->signature, sig);
	}
	pt_session_free(s);
	pt_reader_close(r);
	return hit;
}

#ifdef ORACLE_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *variant, *sig;

	if (!sig) {
		sig = getenv("PTFUZZ_ORACLE_SIGNATURE");
		variant = getenv("PTFUZZ_ORACLE_VARIANT");
		if (!sig) {
			fprintf(stderr, "ptfuzz-minimize-oracle-fuzz: set PTFUZZ_ORACLE_SIGNATURE (and PTFUZZ_ORACLE_VARIANT)\n");
			exit(2);
		}
	}
	if (!size)	/* an empty buffer is an empty reader */
		return 0;
	if (shows(NULL, data, size, variant, sig) && !(variant && shows(NULL, data, size, NULL, sig)))
		abort();
	return 0;
}
#else
int main(int argc, char **argv)
{
	const char *variant = NULL;

	if (argc > 2 && !strcmp(argv[1], "--variant")) {
		variant = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: ptfuzz-minimize-oracle [--variant V] SIGNATURE FILE\n");
		return 2;
	}
	if (shows(argv[2], NULL, 0, variant, argv[1]) && !(variant && shows(argv[2], NULL, 0, NULL, argv[1])))
		abort();
	return 0;
}
#endif
