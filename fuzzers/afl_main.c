/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * afl_main.c - an LLVMFuzzerTestOneInput() target under AFL++ persistent mode
 * with shared-memory test cases (built with afl-clang-fast: the `afl` preset).
 * Outside afl-fuzz it runs the input read from stdin once, so a crash file
 * reproduces with `ops_invariants_afl < crash`.
 */
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__AFL_FUZZ_INIT();

int main(int argc, char **argv)
{
	LLVMFuzzerInitialize(&argc, &argv);
#ifdef __AFL_HAVE_MANUAL_CONTROL
	__AFL_INIT();	/* the fork server starts after the configuration is read */
#endif
	unsigned char *buf = __AFL_FUZZ_TESTCASE_BUF;
	while (__AFL_LOOP(100000)) {
		size_t len = (size_t)__AFL_FUZZ_TESTCASE_LEN;
		LLVMFuzzerTestOneInput(buf, len);
	}
	return 0;
}
