/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ops_invariants.c - property: the model's mm operations never break an
 * invariant.
 *
 * The input is a program (program.h: CPUs, threads, mm ops, schedule, IRQs,
 * migrations); it runs through the mm model, the machine and every checker.
 * A violation is a finding: the harness prints one line naming the invariant
 * and the signature and abort()s, so that libFuzzer and AFL++ keep the input.
 *
 * Configuration (environment; the input never chooses the variant):
 *   PTFUZZ_VARIANT=NAME     the model under test (default: the patched model).
 *                           Under a variant, a finding is a violation whose
 *                           signature the default model does not also show on
 *                           the same input (differential), so that what the
 *                           variant is found by is its own bug.
 *   PTFUZZ_CONTRACTS=allow  the decoder may also emit caller-contract breaks
 *                           (for the variants that sit behind a WARN).
 *   PTFUZZ_EXPECT=I1,I3     only these invariants are findings (time-to-bug).
 *   PTFUZZ_MAX_OPS=N        records decoded per input (default 64).
 *   PTFUZZ_KNOWN=off|FILE   the known findings (default: fuzzers/known-findings.txt
 *                           of the source tree): on the default model, a violation
 *                           listed there is a documented question about the real
 *                           kernel (docs/open-findings.md), not a model bug; it is
 *                           printed ("ptfuzz known finding: ...", once per signature
 *                           and process) and does not stop the campaign, as
 *                           syzkaller's ignores.  `off`: every violation is a finding.
 *
 * Built three ways (fuzzers/CMakeLists.txt): ops_invariants_fuzz (libFuzzer; its
 * default flags, before the user's: -entropic=0, see libfuzzer_defaults()),
 * ops_invariants_afl (AFL++ persistent mode, afl_main.c) and
 * ops_invariants_regress (driver.c: files and directories, no fuzzer; it also
 * checks that every input replays twice to the same verdict and state hash).
 */
#include <fnmatch.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm.h"
#include "program.h"
#include "session.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SIGS 64
#define MAX_KNOWN 32

/* A known finding: a signature, and optionally what the descriptors must show for it to be
 * the documented case ("refold": the new descriptor sets CONT over an old one without it) */
struct known {
	char sig[96];
	bool refold;
	bool printed;
};

static struct {
	bool ready;
	const char *variant;		/* NULL: the default model */
	struct pt_program_opts opts;
	uint32_t expect;		/* bit per invariant id; 0: all */
	bool check_twice;		/* the regression driver: determinism too */
	struct pt_program prog;
	struct known known[MAX_KNOWN];
	unsigned nknown;
} cfg;

struct verdict {
	unsigned n;
	char sig[MAX_SIGS][96];
	unsigned id[MAX_SIGS];
	uint64_t old[MAX_SIGS], new[MAX_SIGS];
	uint64_t hash;		/* the state hash, when cfg.check_twice compares two runs */
};

static void fail_config(const char *what, const char *value)
{
	fprintf(stderr, "ops_invariants: %s: '%s'\n", what, value);
	exit(2);
}

/*
 * The known-findings file: one signature a line (a shell pattern: `*` matches the routine a
 * violation is named after), optionally followed by `refold`, then anything (the reference
 * into docs/open-findings.md); `#` starts a comment.  The default
 * file missing (a build outside the source tree) leaves the list empty, with a note: every
 * violation is then a finding, nothing is hidden.
 */
static void load_known(const char *path, bool must_exist)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		if (must_exist)
			fail_config("PTFUZZ_KNOWN names no readable file", path);
		fprintf(stderr, "ops_invariants: no known-findings file %s: every violation is a finding\n", path);
		return;
	}
	char line[512];
	unsigned lineno = 0;
	while (fgets(line, sizeof(line), f)) {
		char sig[96], qual[32];
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		int n = sscanf(line, "%95s %31s", sig, qual);
		if (n < 1)
			continue;
		if (cfg.nknown == MAX_KNOWN || !strchr(sig, '/') || sig[0] != 'I') {
			fprintf(stderr, "ops_invariants: %s:%u: not a signature, or more than %u of them\n", path,
				lineno, MAX_KNOWN);
			exit(2);
		}
		struct known *k = &cfg.known[cfg.nknown++];
		memcpy(k->sig, sig, sizeof(k->sig));
		k->refold = n == 2 && !strcmp(qual, "refold");
	}
	fclose(f);
}

static void fail_env(const char *why)
{
	fprintf(stderr, "ops_invariants: %s\n", why);
	exit(2);
}

static void configure(void)
{
	const char *v = getenv("PTFUZZ_VARIANT");
	if (v && *v && strcmp(v, "default")) {
		if (mm_variant_lookup(v) < 0)
			fail_config("PTFUZZ_VARIANT names no variant (ptfuzz variants lists them)", v);
		cfg.variant = v;
	}
	char why[160];
	if (pt_program_opts_from_env(&cfg.opts, why, sizeof(why)))
		fail_env(why);
	const char *e = getenv("PTFUZZ_EXPECT");
	for (const char *p = e; p && *p;) {
		char *end;
		if (*p == 'I')
			p++;
		unsigned long id = strtoul(p, &end, 10);
		if (end == p || id < 1 || id >= PT_INV_COUNT || (*end && *end != ',' && *end != ' '))
			fail_config("PTFUZZ_EXPECT is a list of invariants such as I1,I3", e);
		cfg.expect |= 1u << id;
		p = *end ? end + 1 : end;
	}
	const char *k = getenv("PTFUZZ_KNOWN");
	if (k && *k) {
		if (strcmp(k, "off"))
			load_known(k, true);
	} else {
#ifdef PTFUZZ_KNOWN_FINDINGS
		load_known(PTFUZZ_KNOWN_FINDINGS, false);
#endif
	}
	pt_program_init(&cfg.prog);
#ifdef PTFUZZ_REGRESS
	cfg.check_twice = true;	/* the regression driver: determinism too */
#endif
	cfg.ready = true;
}

#ifdef PTFUZZ_LIBFUZZER
/*
 * libFuzzer's flags for this harness, put before the user's: libFuzzer reads its flags
 * after LLVMFuzzerInitialize() and a later flag wins, so `-entropic=1` on the command
 * line gives entropic back.  -entropic=0: on this harness entropic's feature bookkeeping
 * was half of libFuzzer's CPU, and from an empty corpus the five slowest variants were found
 * as soon or up to 8x sooner without it (bench/RESULTS.md, "libFuzzer's flags").
 */
static char **libfuzzer_argv;

static void libfuzzer_defaults(int *argc, char ***argv)
{
	static char entropic_off[] = "-entropic=0";
	char *defaults[] = { entropic_off };
	int nd = (int)(sizeof(defaults) / sizeof(defaults[0]));
	if (*argc < 1)
		return;
	libfuzzer_argv = calloc((size_t)(*argc + nd + 1), sizeof(char *));
	if (!libfuzzer_argv)
		abort();
	libfuzzer_argv[0] = (*argv)[0];
	memcpy(libfuzzer_argv + 1, defaults, sizeof(defaults));
	memcpy(libfuzzer_argv + 1 + nd, *argv + 1, (size_t)(*argc - 1) * sizeof(char *));
	*argc += nd;
	*argv = libfuzzer_argv;
}
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
#ifdef PTFUZZ_LIBFUZZER
	libfuzzer_defaults(argc, argv);
#else
	(void)argc;
	(void)argv;
#endif
	configure();
	return 0;
}

/*
 * One run of the decoded program under a variant (NULL: the default), in a session kept
 * across execs and reset in between (pt_session_reset(): what the exec touched, nothing
 * more; a reset session gives a fresh one's verdict and state hash, tests/test_session_reset.c).
 */
static void run(const struct pt_program *p, const char *variant, struct verdict *out)
{
	static struct pt_session *kept[2];
	struct pt_session **slot = &kept[variant != NULL];
	if (!*slot)
		*slot = pt_session_new(&p->h);
	else if (pt_session_reset(*slot, &p->h))
		abort();	/* the decoder makes only valid headers */
	struct pt_session *s = *slot;
	if (!s)
		abort();
	if (variant && pt_session_set_variant(s, variant))
		abort();
	for (unsigned i = 0; i < p->n; i++)
		pt_session_event(s, &p->ev[i]);
	pt_session_finish(s);
	out->n = 0;
	for (unsigned i = 0; i < pt_session_nviolations(s) && out->n < MAX_SIGS; i++) {
		const struct pt_violation *v = pt_session_violation(s, i);
		out->id[out->n] = v->id;
		out->old[out->n] = v->old_desc;
		out->new[out->n] = v->new_desc;
		memcpy(out->sig[out->n], v->signature, sizeof(out->sig[0]));
		out->n++;
	}
	/* the hash walks the whole state (4 % of an exec): only the determinism check reads it */
	out->hash = cfg.check_twice ? pt_session_hash(s) : 0;
}

static bool has_sig(const struct verdict *v, const char *sig)
{
	for (unsigned i = 0; i < v->n; i++)
		if (!strcmp(v->sig[i], sig))
			return true;
	return false;
}

/* Is violation i of the default model a known finding?  Printed the first time it is met. */
static bool known_finding(const struct verdict *v, unsigned i)
{
	for (unsigned j = 0; j < cfg.nknown; j++) {
		struct known *k = &cfg.known[j];
		if (fnmatch(k->sig, v->sig[i], 0))
			continue;
		if (k->refold && !((v->new[i] & PT_DESC_CONT) && !(v->old[i] & PT_DESC_CONT)))
			continue;
		if (!k->printed)
			fprintf(stderr, "ptfuzz known finding: I%u %s%s (listed in the known findings, "
				"docs/open-findings.md; PTFUZZ_KNOWN=off makes it a finding)\n", v->id[i], v->sig[i],
				k->refold ? " refold" : "");
		k->printed = true;
		return true;
	}
	return false;
}

static void finding(const struct verdict *v, unsigned i, unsigned nops)
{
	/* one line, then abort(): both engines keep the input as a crash */
	fprintf(stderr, "ptfuzz finding: I%u %s (variant %s, %u ops)\n", v->id[i], v->sig[i],
		cfg.variant ? cfg.variant : "default", nops);
	fflush(stderr);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct verdict a, b, def;
	if (!cfg.ready)
		configure();
	pt_program_decode(data, size, &cfg.opts, &cfg.prog);
	run(&cfg.prog, cfg.variant, &a);
	if (cfg.check_twice) {
		run(&cfg.prog, cfg.variant, &b);
		if (a.n != b.n || a.hash != b.hash) {
			fprintf(stderr, "ptfuzz finding: nondeterminism: %u/%u violations, state %#llx/%#llx\n", a.n,
				b.n, (unsigned long long)a.hash, (unsigned long long)b.hash);
			abort();
		}
	}
	if (!a.n)
		return 0;
	bool ran_default = false;
	for (unsigned i = 0; i < a.n; i++) {
		if (cfg.expect && !(cfg.expect & (1u << a.id[i])))
			continue;
		if (cfg.variant) {
			if (!ran_default) {
				run(&cfg.prog, NULL, &def);
				ran_default = true;
			}
			if (has_sig(&def, a.sig[i]))
				continue;	/* the default shows it too: not the variant's bug */
		} else if (known_finding(&a, i)) {
			continue;	/* a documented kernel question, printed */
		}
		finding(&a, i, cfg.prog.n);
	}
	return 0;
}
