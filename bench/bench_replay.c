/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bench_replay.c - ptfuzz-bench-replay: how fast a trace replays, against
 * how fast it merely decodes.
 *
 *   decode  pt_reader_next() over the whole trace (zstd + protobuf-c), no model;
 *   replay  the same reader feeding pt_session_event() (machine + checkers).
 *
 * Each phase runs in a fork()ed child so that its peak RSS (wait4()'s
 * ru_maxrss) is its own; each is repeated (--reps, default 3) and the best
 * run is kept, since the machine is noisy.  The replay must report no
 * violation: the benchmark traces are clean (ptfuzz-gen-arch), so a
 * violation is a bug in the generator or in the engine, and fails the run.
 *
 * Output: a table on stdout and one `RESULT key=value ...` line for scripts.
 * Exit: 0 clean, 1 violations, 2 bad input or usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "session.h"
#include "trace.h"

#define MAX_REPS 20
#define SHOW_VIOLATIONS 5

enum phase { PH_BASELINE, PH_DECODE, PH_REPLAY, PH_COUNT };
static const char *const phase_name[PH_COUNT] = { "baseline", "decode", "replay" };

/* What a child reports back through its pipe. */
struct run {
	int ok;
	uint64_t events;
	uint64_t violations;
	double seconds;		/* wall clock */
	double cpu_seconds;	/* this process's CPU time: less sensitive to a busy machine */
	uint64_t checksum;	/* keeps the decode loop honest */
	char error[sizeof(((struct pt_error *)0)->msg)];
};

static double now(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void print_violation(const struct pt_violation *v)
{
	fprintf(stderr, "  I%u %s  event %" PRIu64 " cpu%u  %s\n    %s\n", v->id, v->signature, v->event,
		v->cpu, v->what, v->rule ? v->rule : "");
}

static void run_phase(enum phase ph, const char *path, struct run *r)
{
	struct pt_error err = { 0 };
	struct pt_event ev;
	struct pt_session *s = NULL;
	int rc;

	if (ph == PH_BASELINE) {
		r->ok = 1;
		return;
	}
	double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
	struct pt_reader *rd = pt_reader_open(path, &err);
	if (!rd) {
		snprintf(r->error, sizeof(r->error), "%s", err.msg);
		return;
	}
	if (ph == PH_REPLAY) {
		s = pt_session_new(pt_reader_header(rd));
		if (!s) {
			snprintf(r->error, sizeof(r->error), "%s: header not usable by the replay session", path);
			pt_reader_close(rd);
			return;
		}
	}
	while ((rc = pt_reader_next(rd, &ev, &err)) == 1) {
		r->events++;
		if (s)
			r->violations += pt_session_event(s, &ev);
		else
			r->checksum += ev.kind + ev.pa + ev.va;
	}
	if (s)
		r->violations += pt_session_finish(s);
	r->seconds = now(CLOCK_MONOTONIC) - t0;
	r->cpu_seconds = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
	if (rc < 0) {
		snprintf(r->error, sizeof(r->error), "%s", err.msg);
	} else {
		r->ok = 1;
	}
	if (s) {
		unsigned n = pt_session_nviolations(s);
		for (unsigned i = 0; i < n && i < SHOW_VIOLATIONS; i++)
			print_violation(pt_session_violation(s, i));
		if (n > SHOW_VIOLATIONS)
			fprintf(stderr, "  ... and %u more\n", n - SHOW_VIOLATIONS);
		pt_session_free(s);
	}
	pt_reader_close(rd);
}

/* Run one phase in a child; its result and its own peak RSS (KiB). */
static int fork_phase(enum phase ph, const char *path, struct run *r, long *maxrss_kib)
{
	int fd[2];

	memset(r, 0, sizeof(*r));
	if (pipe(fd)) {
		perror("pipe");
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return -1;
	}
	if (pid == 0) {
		close(fd[0]);
		run_phase(ph, path, r);
		const char *p = (const char *)r;
		size_t left = sizeof(*r);
		while (left) {
			ssize_t k = write(fd[1], p, left);
			if (k <= 0)
				_exit(3);
			p += k;
			left -= (size_t)k;
		}
		_exit(0);
	}
	close(fd[1]);
	char *p = (char *)r;
	size_t got = 0;
	while (got < sizeof(*r)) {
		ssize_t k = read(fd[0], p + got, sizeof(*r) - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd[0]);
	int st;
	struct rusage ru;
	while (wait4(pid, &st, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("wait4");
			return -1;
		}
	}
	if (got != sizeof(*r) || !WIFEXITED(st) || WEXITSTATUS(st)) {
		memset(r, 0, sizeof(*r));
		if (WIFSIGNALED(st))
			snprintf(r->error, sizeof(r->error), "%s phase killed by signal %d", phase_name[ph],
				 WTERMSIG(st));
		else
			snprintf(r->error, sizeof(r->error), "%s phase exited abnormally", phase_name[ph]);
		return -1;
	}
	*maxrss_kib = ru.ru_maxrss;
	return 0;
}

struct best {
	double eps;		/* best events/s (wall clock) */
	double cpu_eps;		/* best events/s of CPU time */
	double all[MAX_REPS];
	long rss_kib;		/* largest peak RSS over the runs */
	uint64_t events, violations;
};

static int measure(enum phase ph, const char *path, int reps, struct best *b)
{
	memset(b, 0, sizeof(*b));
	for (int i = 0; i < reps; i++) {
		struct run r;
		long rss = 0;
		if (fork_phase(ph, path, &r, &rss) || !r.ok) {
			fprintf(stderr, "ptfuzz-bench-replay: %s\n", r.error[0] ? r.error : "phase failed");
			return -1;
		}
		double eps = r.seconds > 0 ? (double)r.events / r.seconds : 0;
		b->all[i] = eps;
		if (eps > b->eps)
			b->eps = eps;
		if (r.cpu_seconds > 0 && (double)r.events / r.cpu_seconds > b->cpu_eps)
			b->cpu_eps = (double)r.events / r.cpu_seconds;
		if (rss > b->rss_kib)
			b->rss_kib = rss;
		b->events = r.events;
		b->violations = r.violations;
		if (ph == PH_REPLAY && r.violations)
			break;	/* the reports are out; once is enough */
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: ptfuzz-bench-replay [--reps N] FILE\n"
		   "       ptfuzz-bench-replay --profile decode|replay FILE\n"
		   "  Decode-only and full-replay throughput of FILE (best of N runs, default 3),\n"
		   "  each phase's peak RSS, and the replay's violations (must be 0).\n"
		   "  --profile runs one phase once, in this process, for perf record.\n");
}

/* One phase, in-process, once: what to put under `perf record`. */
static int profile_phase(const char *name, const char *path)
{
	enum phase ph = !strcmp(name, "decode") ? PH_DECODE : !strcmp(name, "replay") ? PH_REPLAY : PH_COUNT;
	struct run r = { 0 };

	if (ph == PH_COUNT) {
		usage(stderr);
		return 2;
	}
	run_phase(ph, path, &r);
	if (!r.ok) {
		fprintf(stderr, "ptfuzz-bench-replay: %s\n", r.error);
		return 2;
	}
	printf("%s %s: %" PRIu64 " events in %.2f s: %.2f M events/s, %" PRIu64 " violations\n", name, path,
	       r.events, r.seconds, r.seconds > 0 ? (double)r.events / r.seconds / 1e6 : 0.0, r.violations);
	return r.violations ? 1 : 0;
}

int main(int argc, char **argv)
{
	int reps = 3;
	const char *path = NULL, *profile = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
			if (reps < 1 || reps > MAX_REPS) {
				fprintf(stderr, "ptfuzz-bench-replay: --reps: 1..%d\n", MAX_REPS);
				return 2;
			}
		} else if (!strcmp(argv[i], "--profile") && i + 1 < argc) {
			profile = argv[++i];
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!path && (argv[i][0] != '-' || !argv[i][1])) {
			path = argv[i];
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (!path || !strcmp(path, "-")) {
		usage(stderr);	/* each phase re-reads the file: stdin will not do */
		return 2;
	}
	struct stat st;
	if (stat(path, &st)) {
		fprintf(stderr, "ptfuzz-bench-replay: %s: %s\n", path, strerror(errno));
		return 2;
	}
	if (profile)
		return profile_phase(profile, path);

	struct best b[PH_COUNT];
	if (measure(PH_BASELINE, path, 1, &b[PH_BASELINE]) || measure(PH_DECODE, path, reps, &b[PH_DECODE]) ||
	    measure(PH_REPLAY, path, reps, &b[PH_REPLAY]))
		return 2;

	const struct best *d = &b[PH_DECODE], *r = &b[PH_REPLAY];
	double ratio = d->eps > 0 ? r->eps / d->eps : 0;
	printf("%s: %" PRIu64 " events, %.1f MB (%.2f B/event)\n", path, d->events, (double)st.st_size / 1e6,
	       d->events ? (double)st.st_size / (double)d->events : 0.0);
	printf("%-8s %11s %10s %10s   %s\n", "phase", "best Mev/s", "(CPU time)", "peak RSS", "runs (Mev/s)");
	for (int ph = PH_DECODE; ph < PH_COUNT; ph++) {
		printf("%-8s %11.2f %10.2f %6.1f MiB  ", phase_name[ph], b[ph].eps / 1e6, b[ph].cpu_eps / 1e6,
		       (double)b[ph].rss_kib / 1024);
		for (int i = 0; i < reps && b[ph].all[i] > 0; i++)
			printf(" %.2f", b[ph].all[i] / 1e6);
		printf("\n");
	}
	printf("baseline peak RSS (fork, no work): %.1f MiB\n", (double)b[PH_BASELINE].rss_kib / 1024);
	printf("replay/decode: %.1f %%   violations: %" PRIu64 "\n", ratio * 100, r->violations);
	printf("RESULT file=%s bytes=%lld events=%" PRIu64 " decode_eps=%.0f replay_eps=%.0f ratio=%.3f "
	       "decode_cpu_eps=%.0f replay_cpu_eps=%.0f violations=%" PRIu64 " decode_rss_kib=%ld "
	       "replay_rss_kib=%ld baseline_rss_kib=%ld reps=%d\n",
	       path, (long long)st.st_size, d->events, d->eps, r->eps, ratio, d->cpu_eps, r->cpu_eps,
	       r->violations, d->rss_kib, r->rss_kib, b[PH_BASELINE].rss_kib, reps);
	if (r->events != d->events) {
		fprintf(stderr, "ptfuzz-bench-replay: replay saw %" PRIu64 " events, decode %" PRIu64 "\n",
			r->events, d->events);
		return 2;
	}
	if (r->violations) {
		fprintf(stderr, "ptfuzz-bench-replay: FAIL: %" PRIu64 " violation(s) on a trace meant to be clean\n",
			r->violations);
		return 1;
	}
	return 0;
}
