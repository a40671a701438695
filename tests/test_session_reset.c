/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_session_reset.c - a reset session is a fresh session.
 *
 *   test_session_reset DIR|FILE...
 *
 * Every trace found under the arguments (files the trace reader accepts;
 * the parser's malformed seeds are not traces and are skipped) is replayed
 * in a fresh session and again in one long-lived session that
 * pt_session_reset() brought back after running a different trace; under
 * the default model and, for a variant's reproducer, under its variant.
 * Both runs must give the same violations (invariant, signature, event),
 * the same counters and the same state hash.  The long-lived session is
 * also left in the middle of a trace (threads suspended inside an op, an
 * IRQ's op queued, no pt_session_finish()) before it is reset.  And every trace
 * gives the same with the model's runs of stores and accesses as with its events
 * one by one (pt_session_set_runs()).
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "session.h"
#include "trace.h"

struct trace {
	char *path;
	struct pt_header h;
	struct pt_event *ev;
	unsigned n;
	char variant[64];
	bool concurrent;	/* has thread, sched or irq events */
};

static struct trace *traces;
static unsigned ntraces, captraces;

static bool load(const char *path, struct trace *t)
{
	struct pt_error err;
	struct pt_reader *r = pt_reader_open(path, &err);
	if (!r)
		return false;
	memset(t, 0, sizeof(*t));
	t->h = *pt_reader_header(r);
	unsigned cap = 0;
	struct pt_event ev;
	int rc;
	while ((rc = pt_reader_next(r, &ev, &err)) == 1) {
		if (t->n == cap) {
			cap = cap ? cap * 2 : 64;
			t->ev = realloc(t->ev, cap * sizeof(*t->ev));
			assert_non_null(t->ev);
		}
		if (ev.kind == PT_EV_COMMENT && ev.text && !strncmp(ev.text, "variant:", 8))
			sscanf(ev.text + 8, " %63s", t->variant);
		if (ev.text)
			ev.text = strdup(ev.text);	/* the reader owns its copy (comments, end-of-line text) */
		if (ev.kind == PT_EV_THREAD || ev.kind == PT_EV_SCHED || ev.kind == PT_EV_IRQ)
			t->concurrent = true;
		t->ev[t->n++] = ev;
	}
	pt_reader_close(r);
	if (rc < 0) {
		for (unsigned i = 0; i < t->n; i++)
			free((char *)t->ev[i].text);
		free(t->ev);
		return false;	/* not a trace: a malformed seed of the parser's fuzz corpus */
	}
	t->path = strdup(path);
	return true;
}

static void add_path(const char *path)
{
	struct stat st;
	if (stat(path, &st))
		fail_msg("%s: cannot stat", path);
	if (S_ISDIR(st.st_mode)) {
		struct dirent **names;
		int n = scandir(path, &names, NULL, alphasort);
		assert_true(n >= 0);
		for (int i = 0; i < n; i++) {
			if (names[i]->d_name[0] != '.') {
				char sub[4096];
				snprintf(sub, sizeof(sub), "%s/%s", path, names[i]->d_name);
				add_path(sub);
			}
			free(names[i]);
		}
		free(names);
		return;
	}
	if (ntraces == captraces) {
		captraces = captraces ? captraces * 2 : 64;
		traces = realloc(traces, captraces * sizeof(*traces));
		assert_non_null(traces);
	}
	if (load(path, &traces[ntraces]))
		ntraces++;
}

/* What a run leaves: the violations, the counters and the state hash. */
struct outcome {
	unsigned n;
	char report[4096];
	struct pt_counters k;
	uint64_t hash;
};

static void run(struct pt_session *s, const struct trace *t, const char *variant, unsigned upto, bool finish)
{
	if (variant && pt_session_set_variant(s, variant) < 0)
		fail_msg("%s: unknown variant %s", t->path, variant);
	for (unsigned i = 0; i < upto && i < t->n; i++)
		pt_session_event(s, &t->ev[i]);
	if (finish)
		pt_session_finish(s);
}

static void outcome(const struct pt_session *s, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	o->n = pt_session_nviolations(s);
	for (unsigned i = 0; i < o->n; i++) {
		const struct pt_violation *v = pt_session_violation(s, i);
		size_t l = strlen(o->report);
		snprintf(o->report + l, sizeof(o->report) - l, "I%u %s @%llu/%llu x%u; ", v->id, v->signature,
			 (unsigned long long)v->event, (unsigned long long)v->arch_event, v->repeats);
	}
	o->k = *pt_session_counters(s);
	o->hash = pt_session_hash(s);
}

static void fresh(const struct trace *t, const char *variant, struct outcome *o)
{
	struct pt_session *s = pt_session_new(&t->h);
	assert_non_null(s);
	run(s, t, variant, t->n, true);
	outcome(s, o);
	pt_session_free(s);
}

static void same(const struct trace *t, const char *variant, const char *before, const struct outcome *a,
		 const struct outcome *b)
{
	if (a->n != b->n || strcmp(a->report, b->report))
		fail_msg("%s (%s), reset after %s: violations differ:\n fresh: %s\n reset: %s", t->path,
			 variant ? variant : "default", before, a->report, b->report);
	if (memcmp(&a->k, &b->k, sizeof(a->k)))
		fail_msg("%s (%s), reset after %s: counters differ", t->path, variant ? variant : "default", before);
	if (a->hash != b->hash)
		fail_msg("%s (%s), reset after %s: state hash 0x%016llx fresh, 0x%016llx reset", t->path,
			 variant ? variant : "default", before, (unsigned long long)a->hash,
			 (unsigned long long)b->hash);
}

/* Trace i after a reset of a session that ran trace i - 1 (under its own variant) to the end. */
static void test_reset_after_a_whole_trace_is_a_fresh_session(void **state)
{
	(void)state;
	assert_true(ntraces > 1);
	struct pt_session *s = pt_session_new(&traces[ntraces - 1].h);
	assert_non_null(s);
	const struct trace *prev = &traces[ntraces - 1];
	run(s, prev, prev->variant[0] ? prev->variant : NULL, prev->n, true);
	unsigned with_violations = 0;
	for (unsigned i = 0; i < ntraces; i++) {
		const struct trace *t = &traces[i];
		for (int pass = 0; pass < (t->variant[0] ? 2 : 1); pass++) {
			const char *variant = pass ? t->variant : NULL;
			struct outcome a, b;
			fresh(t, variant, &a);
			assert_int_equal(pt_session_reset(s, &t->h), 0);
			run(s, t, variant, t->n, true);
			outcome(s, &b);
			same(t, variant, prev->path, &a, &b);
			with_violations += a.n != 0;
			prev = t;
		}
	}
	pt_session_free(s);
	/* the comparison means something only if some runs report violations */
	assert_true(with_violations > 0);
	print_message("%u traces, %u runs with violations, each the same fresh and after a reset\n", ntraces,
		      with_violations);
}

/*
 * A session left in the middle of a concurrent trace: scheduled threads
 * suspended inside their ops (their coroutine stacks in use, locks held),
 * no end-of-trace drain.  Every trace must still replay as in a fresh
 * session after the reset.
 */
static void test_reset_with_threads_mid_flight_is_a_fresh_session(void **state)
{
	(void)state;
	unsigned nconc = 0;
	for (unsigned c = 0; c < ntraces; c++) {
		const struct trace *mid = &traces[c];
		if (!mid->concurrent)
			continue;
		nconc++;
		/* stop right after the first slice that leaves a thread part-way through its op */
		unsigned upto = mid->n / 2;
		for (unsigned i = 0; i < mid->n; i++)
			if (mid->ev[i].kind == PT_EV_SCHED && mid->ev[i].len) {
				upto = i + 1;
				break;
			}
		/* six traces of the corpus after this one, spread over it: a sample keeps the test
		 * quick as the corpus grows (every 8th trace made it quadratic: 15 minutes under
		 * ASan with 399 traces), and each trace still follows several mid-flight sessions */
		const unsigned step = ntraces / 6 + 1;
		for (unsigned i = 0; i < ntraces; i += step) {
			const struct trace *t = &traces[(c + 1 + i) % ntraces];
			struct pt_session *s = pt_session_new(&mid->h);
			assert_non_null(s);
			run(s, mid, mid->variant[0] ? mid->variant : NULL, upto, false);
			struct outcome a, b;
			fresh(t, NULL, &a);
			assert_int_equal(pt_session_reset(s, &t->h), 0);
			run(s, t, NULL, t->n, true);
			outcome(s, &b);
			same(t, NULL, mid->path, &a, &b);
			pt_session_free(s);
		}
	}
	assert_true(nconc > 0);
}

/*
 * The mm model hands runs of stores and accesses (set_ptes(), a cleared batch, a touch of a
 * mapped block) to the machine at once, when no other thread could run in between: every
 * trace, under the default model and its own variant, gives the same violations, counters and
 * state with runs and with every event on its own.
 */
static void test_runs_are_the_events_one_by_one(void **state)
{
	(void)state;
	uint64_t in_runs = 0;
	unsigned concurrent_runs = 0;
	for (unsigned i = 0; i < ntraces; i++) {
		const struct trace *t = &traces[i];
		for (int pass = 0; pass < (t->variant[0] ? 2 : 1); pass++) {
			const char *variant = pass ? t->variant : NULL;
			struct outcome a, b;
			struct pt_session *s = pt_session_new(&t->h);
			assert_non_null(s);
			run(s, t, variant, t->n, true);
			outcome(s, &a);
			uint64_t r = pt_session_run_events(s);
			in_runs += r;
			concurrent_runs += t->concurrent && r;
			assert_int_equal(pt_session_reset(s, &t->h), 0);
			pt_session_set_runs(s, false);
			run(s, t, variant, t->n, true);
			outcome(s, &b);
			assert_int_equal(pt_session_run_events(s), 0);
			same(t, variant, "runs off (one by one)", &a, &b);
			pt_session_free(s);
		}
	}
	/* the comparison means something only if runs happened, with threads scheduled too */
	assert_true(in_runs > 0);
	assert_true(concurrent_runs > 0);
	print_message("%u traces: %llu events in runs, the same one by one (%u concurrent traces with runs)\n",
		      ntraces, (unsigned long long)in_runs, concurrent_runs);
}

/* An unusable header leaves the session as it was. */
static void test_reset_refuses_an_unusable_header(void **state)
{
	(void)state;
	const struct trace *t = &traces[0];
	struct pt_session *s = pt_session_new(&t->h);
	assert_non_null(s);
	run(s, t, NULL, t->n, true);
	struct outcome a, b;
	outcome(s, &a);
	struct pt_header bad = t->h;
	bad.cpus = 0;
	assert_int_equal(pt_session_reset(s, &bad), -1);
	outcome(s, &b);
	same(t, NULL, "a refused reset", &a, &b);
	pt_session_free(s);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		add_path(argv[i]);
	if (!ntraces) {
		fprintf(stderr, "test_session_reset: no traces under the arguments\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reset_after_a_whole_trace_is_a_fresh_session),
		cmocka_unit_test(test_reset_with_threads_mid_flight_is_a_fresh_session),
		cmocka_unit_test(test_reset_refuses_an_unusable_header),
		cmocka_unit_test(test_runs_are_the_events_one_by_one),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	for (unsigned i = 0; i < ntraces; i++) {
		for (unsigned j = 0; j < traces[i].n; j++)
			free((char *)traces[i].ev[j].text);
		free(traces[i].ev);
		free(traces[i].path);
	}
	free(traces);
	return rc;
}
