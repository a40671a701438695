/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_replay.c - `ptfuzz replay`: every event of each trace through a fresh
 * replay session, then a summary line per file and a report per violation.
 * Also the per-file driver that `ptfuzz stats` shares.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ftrace.h"
#include "mm.h"

/*
 * The last RING events, so that a report can show the trace leading to the
 * violation without formatting every event of a long trace as text.
 */
#define RING 16u
#define PROGRESS_EVERY (1u << 20)

struct ring_slot {
	struct pt_event ev;
	char text[PT_MAX_LINE + 1];	/* a comment's text outlives the reader's buffer */
};

static struct ring_slot ring[RING];

static void ring_put(uint64_t index, const struct pt_event *ev)
{
	struct ring_slot *slot = &ring[index % RING];

	slot->ev = *ev;
	slot->ev.text = NULL;	/* an event's end-of-line comment is not part of a report */
	if (ev->text && ev->kind == PT_EV_COMMENT) {
		size_t n = strnlen(ev->text, PT_MAX_LINE);
		memcpy(slot->text, ev->text, n);
		slot->text[n] = '\0';
		slot->ev.text = slot->text;
	}
}

/* The last ARING arch-level events the machine ran, model events included. */
#define ARING 64u
static struct ring_slot aring[ARING];
static uint64_t aring_n;

static void context_tap(struct replay_run *run, const struct pt_event *ev)
{
	(void)run;
	struct ring_slot *slot = &aring[aring_n++ % ARING];
	slot->ev = *ev;
	slot->ev.text = NULL;
	if (ev->kind == PT_EV_COMMENT)
		slot->ev.text = "";
}

/* Grow run's context arrays to hold one more. */
static void ctx_grow(struct replay_run *run)
{
	if (run->nctx == run->ctx_cap) {
		unsigned cap = run->ctx_cap ? 2 * run->ctx_cap : 8;
		struct vctx *c = realloc(run->ctx, cap * sizeof(*c));
		struct vctx *a = c ? realloc(run->actx, cap * sizeof(*a)) : NULL;
		if (!c || !a) {
			perror("ptfuzz");
			exit(EXIT_BAD);
		}
		run->ctx = c;
		run->actx = a;
		run->ctx_cap = cap;
	}
}

static void ctx_line(struct vctx *c, uint64_t index, const struct pt_event *ev)
{
	char buf[PT_MAX_LINE + 256];
	pt_event_format_text(ev, buf, sizeof(buf));
	c->index[c->n] = index;
	c->cpu[c->n] = ev->cpu;
	c->line[c->n] = strdup(buf);
	if (!c->line[c->n]) {
		perror("ptfuzz");
		exit(EXIT_BAD);
	}
	c->n++;
}

/* The interleaving of arch events up to the violating one, when the model produced some:
 * that is where a race shows (one column per CPU, time downwards). */
static void capture_arch(struct replay_run *run, struct vctx *c, const struct pt_violation *v)
{
	memset(c, 0, sizeof(*c));
	if (!pt_session_counters(run->s)->model_events)
		return;
	c->title = "interleaving (arch events, those of the mm model included; arch event index)";
	c->mark = v->arch_event;
	uint64_t hi = v->arch_event < aring_n ? v->arch_event + 1 : aring_n;
	uint64_t lo = hi > ACTX_BEFORE + 1 ? hi - (ACTX_BEFORE + 1) : 0;
	if (aring_n > ARING && lo < aring_n - ARING)
		lo = aring_n - ARING;
	for (uint64_t i = lo; i < hi; i++) {
		const struct pt_event *ev = &aring[i % ARING].ev;
		if (ev->kind == PT_EV_COMMENT || ev->kind == PT_EV_DMB)
			continue;
		ctx_line(c, i, ev);
	}
}

/*
 * Capture the events around v: the violating event and the CTX_BEFORE
 * before it, or the last CTX_BEFORE events when v points past the end (an
 * end-of-trace check).  fed = events fed so far; the ring holds the last RING.
 */
static void capture(struct replay_run *run, uint64_t fed, const struct pt_violation *v)
{
	struct vctx *c;
	uint64_t hi = v->event < fed ? v->event + 1 : fed;
	uint64_t want = v->event < fed ? CTX_BEFORE + 1 : CTX_BEFORE;
	uint64_t lo = hi > want ? hi - want : 0;

	if (fed > RING && lo < fed - RING)
		lo = fed - RING;
	ctx_grow(run);
	capture_arch(run, &run->actx[run->nctx], v);
	c = &run->ctx[run->nctx++];
	memset(c, 0, sizeof(*c));
	c->mark = v->event;
	for (uint64_t i = lo; i < hi; i++)
		if (ring[i % RING].ev.kind != PT_EV_COMMENT)	/* comments have no CPU: not a column */
			ctx_line(c, i, &ring[i % RING].ev);
}

static void capture_new(struct replay_run *run)
{
	unsigned nv = pt_session_nviolations(run->s);

	while (run->nctx < nv)
		capture(run, run->events, pt_session_violation(run->s, run->nctx));
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress_show(const struct replay_run *run, double start)
{
	double t = now() - start;
	double m = (double)run->events / 1e6;

	fprintf(stderr, "\r\033[K  %s: %.1f M events, %.1f M ev/s", run->name, m, t > 0 ? m / t : 0.0);
}

/* --record: every arch event the machine runs, from the trace or from the mm model */
static void record_tap(void *ctx, const struct pt_event *ev)
{
	struct replay_run *run = ctx;
	if (run->context)
		context_tap(run, ev);
	if (run->rec && !run->rec_failed && pt_writer_put(run->rec, ev, &run->rec_err) < 0)
		run->rec_failed = true;
}

/* Verdicts judged at the ops level (I9, I10, the model's step bound) cannot be re-derived from
 * arch events: the recording carries them as comments. */
static void record_model_verdicts(struct replay_run *run, unsigned before)
{
	char text[400];
	for (unsigned i = before; i < pt_session_nviolations(run->s); i++) {
		const struct pt_violation *v = pt_session_violation(run->s, i);
		if (v->id != PT_I9 && v->id != PT_I10 && strncmp(v->signature, "I11/hang/step-bound", 19))
			continue;
		snprintf(text, sizeof(text), "model verdict: %s: %s", v->signature, v->what);
		struct pt_event c = { .kind = PT_EV_COMMENT, .text = text };
		if (!run->rec_failed && pt_writer_put(run->rec, &c, &run->rec_err) < 0)
			run->rec_failed = true;
	}
}

/* an ops-level event the mm model runs as an operation (not a thread or schedule directive) */
static bool is_op(const struct pt_event *ev)
{
	const struct pt_kind_schema *k = pt_kind_schema(ev->kind);
	return k && k->ops_level && ev->kind != PT_EV_KERNEL && ev->kind != PT_EV_THREAD && ev->kind != PT_EV_SCHED;
}

/* --record keeps each op's return value: the model's, as a comment after the op's arch events */
static void record_result(struct replay_run *run, const struct pt_event *ev)
{
	const struct mm_op_result *r = pt_session_op_result(run->s);
	char text[200];
	if (!r->ran)
		snprintf(text, sizeof(text), "model result: %s: queued (its thread is scheduled)", pt_kind_name(ev->kind));
	else if (r->rc)
		snprintf(text, sizeof(text), "model result: %s = -%s", pt_kind_name(ev->kind), pt_errno_name(r->rc));
	else if (ev->kind == PT_EV_MMAP || ev->kind == PT_EV_MREMAP)
		snprintf(text, sizeof(text), "model result: %s = 0x%" PRIx64, pt_kind_name(ev->kind), r->addr);
	else
		snprintf(text, sizeof(text), "model result: %s = 0", pt_kind_name(ev->kind));
	struct pt_event c = { .kind = PT_EV_COMMENT, .text = text };
	if (!run->rec_failed && pt_writer_put(run->rec, &c, &run->rec_err) < 0)
		run->rec_failed = true;
}

/* The session for r's trace, with its kernel profile and variants, and the recording if asked; false: run->err or run->rec_err says why. */
static bool replay_open(struct replay_run *run, struct pt_reader *r)
{
	run->s = pt_session_new(pt_reader_header(r));
	run->profile = 0;
	run->release[0] = '\0';
	run->named_variant[0] = '\0';
	if (run->kernel) {
		/* the kernel's profile: --kernel NAME (checked at parse time), or from the header */
		int p = mm_profile_lookup(run->kernel);
		unsigned from_header = mm_profile_for_kernel(pt_reader_header(r)->kernel, run->release,
							     sizeof(run->release));
		run->profile = p >= 0 ? (unsigned)p : from_header;
	}
	const char *const *pv = mm_profile_info(run->profile)->variants;
	for (unsigned i = 0; run->s && pv[i]; i++)
		pt_session_set_variant(run->s, pv[i]);
	for (unsigned i = 0; run->s && run->variants && run->variants[i]; i++)
		pt_session_set_variant(run->s, run->variants[i]);	/* names were checked at parse time */
	if (!run->s) {
		const struct pt_header *h = pt_reader_header(r);
		pt_error_set(&run->err, PT_ERR_HEADER,
			     "%s: header: the model cannot run this machine (cpus %u, granule %u, va_bits %u)",
			     run->name, h->cpus, h->granule, h->va_bits);
		run->failed = true;
		return false;
	}
	if (run->record) {
		struct pt_header h = *pt_reader_header(r);
		snprintf(h.method, sizeof(h.method), "model");
		run->rec = pt_writer_open(run->record, pt_encoding_for_path(run->record), &h, &run->rec_err);
		if (!run->rec) {
			run->rec_failed = true;
			return false;
		}
	}
	return true;
}

/* One event of r's trace through the session; -1 (run->err set) if it took the model over its budget. */
static int replay_event(struct replay_run *run, struct pt_reader *r, const struct pt_event *ev)
{
	if (run->context)
		ring_put(run->events, ev);
	unsigned before = pt_session_nviolations(run->s);
	uint64_t pt_writes = pt_session_counters(run->s)->pt_writes;
	unsigned found = pt_session_event(run->s, ev);
	if (pt_session_error(run->s)) {
		/* the model's budget (README "Limits"): the trace is rejected where it went over */
		pt_error_set(&run->err, PT_ERR_LIMIT, "%s: %s: %s", run->name, pt_reader_where(r),
			     pt_session_error(run->s));
		return -1;
	}
	if (found && run->rec)
		record_model_verdicts(run, before);
	if (is_op(ev)) {
		if (run->fidelity)
			fid_op_done(&run->fid, run->s, ev, run->events,
				    pt_session_counters(run->s)->pt_writes - pt_writes);
		if (run->rec)
			record_result(run, ev);
	} else if (ev->kind == PT_EV_COMMENT && ev->text && !run->named_variant[0] &&
		   !strncmp(ev->text, "variant: ", 9)) {
		/* a minimized reproducer or a corpus trace says which model shows its finding */
		snprintf(run->named_variant, sizeof(run->named_variant), "%.*s",
			 (int)strcspn(ev->text + 9, " \t"), ev->text + 9);
	} else if (ev->kind == PT_EV_KERNEL) {
		if (run->fidelity)
			fid_evidence(&run->fid, ev);
		/* the kernel's evidence stays beside the model's results */
		if (run->rec && !run->rec_failed && pt_writer_put(run->rec, ev, &run->rec_err) < 0)
			run->rec_failed = true;
	}
	run->events++;
	if (found && run->context)
		capture_new(run);
	return 0;
}

/* The end of r's trace (rc < 0: it stopped at an error): its checks, the fidelity verdict, r closed, the recording. */
static void replay_close(struct replay_run *run, struct pt_reader *r, int rc)
{
	if (rc < 0) {
		/* what was valid before the bad spot is still reported, but a
		 * truncated trace gets no end-of-trace checks */
		run->failed = true;
	} else if (pt_session_finish(run->s) && run->context) {
		capture_new(run);
	}
	if (run->fidelity)
		fid_judge(&run->fid, pt_session_counters(run->s)->pt_writes);
	cli_reader_close(r);
	if (run->rec) {
		/* a failed replay or write leaves no half-written recording */
		if (run->failed || run->rec_failed)
			pt_writer_abort(run->rec);
		else if (pt_writer_close(run->rec, &run->rec_err) < 0)
			run->rec_failed = true;
		run->rec = NULL;
	}
}

void replay_file(struct replay_run *run)
{
	struct pt_reader *r;
	struct pt_event ev;
	double start = run->progress ? now() : 0;
	bool shown = false;
	int rc;

	run->name = cli_display_name(run->path);
	r = cli_reader_open(run->path, false, &run->err);
	if (!r) {
		run->failed = true;
		return;
	}
	if (!replay_open(run, r)) {
		cli_reader_close(r);
		return;
	}
	aring_n = 0;
	if (run->record || run->context)
		pt_session_set_tap(run->s, record_tap, run);
	while ((rc = pt_reader_next(r, &ev, &run->err)) > 0) {
		if (replay_event(run, r, &ev) < 0) {
			rc = -1;
			break;
		}
		if (run->progress && !(run->events % PROGRESS_EVERY)) {
			progress_show(run, start);
			shown = true;
		}
	}
	if (shown)
		fputs("\r\033[K", stderr);
	replay_close(run, r, rc);
}

void replay_run_free(struct replay_run *run)
{
	for (unsigned i = 0; i < run->nctx; i++) {
		for (unsigned k = 0; k < run->ctx[i].n; k++)
			free(run->ctx[i].line[k]);
		for (unsigned k = 0; k < run->actx[i].n; k++)
			free(run->actx[i].line[k]);
	}
	free(run->ctx);
	free(run->actx);
	run->ctx = NULL;
	run->actx = NULL;
	run->nctx = run->ctx_cap = 0;
	if (run->s)
		pt_session_free(run->s);
	run->s = NULL;
	fid_free(&run->fid);
}

/* "I4 x1, I2 x3" into buf, ids ascending */
static void violation_counts(const struct pt_session *s, char *buf, size_t size)
{
	uint64_t count[PT_INV_COUNT] = { 0 };
	unsigned nv = pt_session_nviolations(s);
	size_t n = 0;

	for (unsigned i = 0; i < nv; i++) {
		unsigned id = pt_session_violation(s, i)->id;
		count[id < PT_INV_COUNT ? id : 0]++;
	}
	buf[0] = '\0';
	for (unsigned id = 0; id < PT_INV_COUNT && n < size; id++) {
		if (!count[id])
			continue;
		n += (size_t)snprintf(buf + n, size - n, "%sI%u x%" PRIu64, n ? ", " : "", id, count[id]);
	}
}

/* ---- the command ---- */

void help_replay(FILE *f)
{
	fputs("usage: ptfuzz replay [--json] [-q] [--strict] [--kernel PROFILE]\n"
	      "                     [--variant NAME]... [--record OUT] FILE...\n"
	      "\n"
	      "Replay traces (text .ptt or binary .ptt.zst, told apart by their first\n"
	      "bytes; - reads standard input) against the arm64 machine model and report\n"
	      "every invariant violation the checkers find.  The model is the default\n"
	      "(patched) one unless --variant or --kernel says otherwise; a trace that\n"
	      "names its variant (`# variant: NAME`, as minimized reproducers do) gets a\n"
	      "line saying so when it ran without it.\n"
	      "\n"
	      "For each file: one summary line\n"
	      "  FILE: N events, K violations (I4 x1), state 0x<hash of the final state>\n"
	      "then, per violation, its invariant, what happened, the rule, the\n"
	      "descriptors, the stale TLB or walk-cache entry if any, and the events\n"
	      "leading to it (the violating one marked >).\n"
	      "\n"
	      "options:\n"
	      "  --json        one JSON document for the whole run on standard output:\n"
	      "                {\"files\": [{\"file\", \"events\", \"state\", \"error\",\n"
	      "                \"violations\": [{\"id\", \"kind\", \"signature\", \"event\", \"cpu\",\n"
	      "                \"va\", \"pa\", \"old\", \"new\", \"what\", \"rule\", \"stale\"}],\n"
	      "                \"profile\", \"release\", \"populated\", \"warnings\": [text],\n"
	      "                \"evidence\", \"divergences\": [{\"what\", \"event\", \"op\", \"text\"}],\n"
	      "                \"ops\": [{\"event\", \"op\", \"cpu\", \"asid\", \"va\", \"len\", \"ran\",\n"
	      "                \"error\", \"addr\", \"pt_writes\", \"kernel\": {\"ret\", \"calls\"}}]}],\n"
	      "                \"violations\": total, \"divergences\": total}\n"
	      "  -q, --quiet   summary lines only: no reports, no progress\n"
	      "  --strict      divergences from the kernel's evidence fail the run (exit 1)\n"
	      "  --kernel PROFILE  run the mm model's routines as of that kernel: 6.1 or\n"
	      "                default (the newest); auto (the default) takes it from the\n"
	      "                header's kernel release (kernel=\"... 6.1.192-3\": 6.1 up to\n"
	      "                6.6; 6.7 on, or none: default)\n"
	      "  --variant NAME  run the mm model as a bug variant or baseline (ptfuzz\n"
	      "                variants lists them); may be repeated, on top of the profile\n"
	      "  --record OUT  write the arch-level trace that ran (the trace's arch\n"
	      "                events and those the mm model produced for its ops-level\n"
	      "                events) to OUT (.zst: binary); it replays to the same\n"
	      "                arch-level verdict; ops-level verdicts (I9, I10) are\n"
	      "                kept in it as comments, so are the model's op results\n"
	      "                (# model result: mmap = 0x...) beside the trace's kernel\n"
	      "                evidence.  One FILE only.\n"
	      "  -h, --help    this help\n"
	      "\n"
	      "Kernel evidence (`kernel` events an importer put after the ops of a real\n"
	      "kernel's capture: results, kprobe calls) is compared with what the model\n"
	      "did, and each disagreement is a divergence (result, errno, address,\n"
	      "move_page_tables, moved, move_huge_pmd, __split_huge_pmd), reported\n"
	      "after the summary line:\n"
	      "  FILE: kernel evidence: E events for N of M ops, D divergences (result x1)\n"
	      "A trace whose ops wrote no page-table entry gets a warning line: its\n"
	      "clean verdict proves nothing.\n"
	      "\n"
	      "A read error stops that file: the violations found before it are\n"
	      "reported, the error (file and byte offset or line) goes to standard\n"
	      "error, and the next file is replayed.  Progress goes to standard error\n"
	      "when it is a terminal.\n"
	      "\n"
	      "exit status: 0 no violation, 1 violations found (or, with --strict,\n"
	      "divergences), 2 bad input or usage (2 wins over 1).\n",
	      f);
}

void replay_summary(const struct replay_run *run)
{
	unsigned nv = pt_session_nviolations(run->s);
	char counts[256];

	printf("%s: %" PRIu64 " events%s, %u violation%s", run->name, run->events,
	       !run->failed ? "" : run->err.code == PT_ERR_LIMIT ? " before the model's budget ran out" :
	       " before a read error", nv, nv == 1 ? "" : "s");
	if (nv) {
		violation_counts(run->s, counts, sizeof(counts));
		printf(" (%s)", counts);
	}
	printf(", state 0x%016" PRIx64 "\n", pt_session_hash(run->s));
}

static void file_text(const struct replay_run *run, bool quiet)
{
	if (!run->s)
		return;
	replay_summary(run);
	if (run->profile)
		printf("%s: the mm model ran as kernel profile %s (%s)\n", run->name, mm_profile_info(run->profile)->name,
		       run->kernel && strcmp(run->kernel, "auto") ? "--kernel" : "the header's kernel release");
	fid_text(stdout, run->name, &run->fid, !quiet);
	if (run->named_variant[0] && !(run->variants && run->variants[0]))
		printf("%s: the trace names the variant %s (`# variant:`); this ran the default model: "
		       "replay with --variant %s for its finding\n",
		       run->name, run->named_variant, run->named_variant);
	if (quiet)
		return;
	for (unsigned i = 0; i < pt_session_nviolations(run->s); i++) {
		fputc('\n', stdout);
		report_text(stdout, pt_session_violation(run->s, i), i < run->nctx ? &run->ctx[i] : NULL,
			    i < run->nctx ? &run->actx[i] : NULL);
	}
	if (pt_session_nviolations(run->s))
		fputc('\n', stdout);
}

void replay_json_head(struct json *j, const struct replay_run *run)
{
	json_key(j, "file");
	json_string(j, run->name);
	json_key(j, "events");
	json_u64(j, run->events);
	json_key(j, "state");
	if (run->s)
		json_hex(j, pt_session_hash(run->s));
	else
		json_null(j);
	json_key(j, "error");
	json_string(j, run->failed ? run->err.msg : NULL);
}

static void file_json(struct json *j, const struct replay_run *run)
{
	json_object_begin(j);
	replay_json_head(j, run);
	json_key(j, "violations");
	json_array_begin(j);
	for (unsigned i = 0; run->s && i < pt_session_nviolations(run->s); i++)
		report_json(j, pt_session_violation(run->s, i), i < run->nctx ? &run->ctx[i] : NULL,
			    i < run->nctx ? &run->actx[i] : NULL);
	json_array_end(j);
	json_key(j, "profile");
	json_string(j, mm_profile_info(run->profile)->name);
	json_key(j, "release");
	json_string(j, run->release[0] ? run->release : NULL);
	fid_json(j, &run->fid);
	json_key(j, "ops");
	fid_ops_json(j, &run->fid);
	json_object_end(j);
}

struct replay_opts {
	bool json, quiet, strict;
	const char *record, *kernel;
	const char *variants[MAX_VARIANTS + 1];
	unsigned nvariants;
};

/* @return : -1 to go on, or the exit status (help, a usage error) */
static int replay_parse(int argc, char **argv, struct replay_opts *o)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "record", required_argument, NULL, 'r' },
		{ "variant", required_argument, NULL, 'v' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "strict", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->kernel = "auto";
	while ((c = cli_getopt("replay", argc, argv, "qh", longopts)) != -1) {
		switch (c) {
		case 'j': o->json = true; break;
		case 'q': o->quiet = true; break;
		case 'r': o->record = optarg; break;
		case 's': o->strict = true; break;
		case 'k':
			if (cli_kernel_arg("replay", optarg))
				return EXIT_BAD;
			o->kernel = optarg;
			break;
		case 'v':
			if (cli_variant_arg("replay", o->variants, &o->nvariants, optarg))
				return EXIT_BAD;
			break;
		case 'h': help_replay(stdout); return EXIT_CLEAN;
		default: return EXIT_BAD;
		}
	}
	if (optind == argc)
		return cli_usage_error("replay", "no trace file given");
	if (o->record && argc - optind != 1)
		return cli_usage_error("replay", "--record takes exactly one trace file");
	return -1;
}

/* One file: replayed, reported (text, or as an element of j's "files"), counted; its exit status. */
static int replay_one(const struct replay_opts *o, const char *path, struct json *j, uint64_t *violations,
		      uint64_t *divergences)
{
	struct replay_run run = {
		.path = path,
		.context = !o->quiet,
		.progress = !o->quiet && isatty(STDERR_FILENO),
		.record = o->record,
		.variants = o->variants,
		.kernel = o->kernel,
		.fidelity = true,
	};
	int status = EXIT_CLEAN;

	replay_file(&run);
	if (o->json)
		file_json(j, &run);
	else
		file_text(&run, o->quiet);
	cli_check_stdout();
	if (run.failed)
		fprintf(stderr, "%s\n", run.err.msg);
	if (run.rec_failed) {
		fprintf(stderr, "%s\n", run.rec_err.msg);
		status = EXIT_BAD;
	}
	if (run.s && pt_session_nviolations(run.s)) {
		*violations += pt_session_nviolations(run.s);
		status = exit_merge(status, EXIT_VIOLATION);
	}
	*divergences += run.fid.ndiv;
	if (o->strict && run.fid.ndiv)
		status = exit_merge(status, EXIT_VIOLATION);
	if (run.failed)
		status = EXIT_BAD;
	replay_run_free(&run);
	return status;
}

int cmd_replay(int argc, char **argv)
{
	struct replay_opts o;
	uint64_t total = 0, total_div = 0;
	int status = EXIT_CLEAN;
	struct json j;

	memset(&o, 0, sizeof(o));
	status = replay_parse(argc, argv, &o);
	if (status >= 0)
		return status;
	status = EXIT_CLEAN;
	if (o.json) {
		json_init(&j, stdout);
		json_object_begin(&j);
		json_key(&j, "files");
		json_array_begin(&j);
	}
	for (int i = optind; i < argc; i++)
		status = exit_merge(status, replay_one(&o, argv[i], &j, &total, &total_div));
	if (o.json) {
		json_array_end(&j);
		json_key(&j, "violations");
		json_u64(&j, total);
		json_key(&j, "divergences");
		json_u64(&j, total_div);
		json_object_end(&j);
		json_end(&j);
	}
	cli_check_stdout();
	return status;
}
