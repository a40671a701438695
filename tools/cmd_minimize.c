/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_minimize.c - `ptfuzz minimize`: a trace that shows a violation in, the
 * 1-minimal text trace that still shows it out, with a header that lets it
 * replay by itself (`# variant:`, `# expect:`, as corpus/regressions/ files
 * have) and the violation's report as comments.  The algorithm is in
 * minimize.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "minimize.h"

#define CMD "minimize"
#define DEFAULT_MAX_REPLAYS 100000u
#define MAX_COMMENTS 256u		/* header and report lines */

void help_minimize(FILE *f)
{
	fputs("usage: ptfuzz minimize IN -o OUT [--variant NAME] [--signature SIG | --same-invariant]\n"
	      "                       [--max-replays N] [--input] [-f] [-q] [--json]\n"
	      "\n"
	      "Shrink a trace that shows a violation (text .ptt or binary .ptt.zst; - reads\n"
	      "standard input), or a fuzz input of the ops_invariants harness (named\n"
	      "*.bin, crash-*, leak-*, timeout-*, oom-*, id:*, or with --input: the\n"
	      "program it decodes to, as ptfuzz convert shows it), to a 1-minimal text\n"
	      "trace that still shows it: removing any one event, or any one of the\n"
	      "simplifications below, loses it.\n"
	      "\n"
	      "The target is the signature of IN's first violation (ptfuzz replay prints\n"
	      "signatures), or the one --signature names.  A candidate is kept when its\n"
	      "replay still shows the target; with --variant, it must also not show it\n"
	      "under the default model (unless IN does): it reproduces the variant's bug.\n"
	      "\n"
	      "The events of one CPU, or of one address space, at a time; delta\n"
	      "debugging over events (a thread's sched and migrate events go with it);\n"
	      "each event alone; the schedule (sched steps= lowered); the arguments\n"
	      "(lengths toward 4K, 64K, 2M, 1G; addresses aligned down to 1G, 2M, 64K,\n"
	      "4K; flag bits dropped; order= and node= to 0); the CPUs (renumbered\n"
	      "from 0, cpus= lowered): repeated until nothing changes.  Comments of IN\n"
	      "are dropped.  The same IN gives the same OUT, but for the time on its\n"
	      "first comment line.\n"
	      "\n"
	      "OUT starts with comments:\n"
	      "  # minimized by ptfuzz minimize from IN (N events -> M events, K replays, T s)\n"
	      "  # variant: NAME          (with --variant)\n"
	      "  # expect: I3             (every invariant OUT shows; with --variant, under it)\n"
	      "  # expect-default: I9     (with --variant, if the default model shows any)\n"
	      "  # target: SIG            (what was kept)\n"
	      "then the report of the target violation in OUT, as `ptfuzz replay` prints\n"
	      "it: OUT replays by itself and can go into corpus/regressions/ as it is.\n"
	      "\n"
	      "options:\n"
	      "  -o, --output OUT   the minimized trace (text; - is standard output);\n"
	      "                     written beside OUT and renamed over it at the end\n"
	      "  -f, --force        replace an existing OUT\n"
	      "  --variant NAME     replay as a bug variant or baseline (ptfuzz variants)\n"
	      "  --signature SIG    the violation to keep (default: IN's first)\n"
	      "  --same-invariant   keep only the invariant (I3, ...) of the target:\n"
	      "                     any violation of it will do\n"
	      "  --max-replays N    stop after N candidate replays (default 100000) and\n"
	      "                     write the smallest trace found, which then still shows\n"
	      "                     the target but may not be 1-minimal (said on stderr\n"
	      "                     and in OUT)\n"
	      "  --input            IN is a fuzz input whatever its name\n"
	      "  -q, --quiet        no progress, no summary line (errors and the replay\n"
	      "                     cap are still said)\n"
	      "  --json             the summary as one JSON document on standard output\n"
	      "                     (OUT must then be a file): {\"input\", \"output\",\n"
	      "                     \"variant\", \"invariant\", \"signature\" (null with\n"
	      "                     --same-invariant), \"events_in\", \"events_out\",\n"
	      "                     \"replays\", \"rounds\", \"one_minimal\"}; no time, so\n"
	      "                     the same IN gives the same document\n"
	      "  -h, --help         this help\n"
	      "\n"
	      "Progress (pass, events left, replays) goes to standard error when it is a\n"
	      "terminal; a summary line to standard output (standard error when OUT is -).\n"
	      "\n"
	      "exit status: 0 OUT written (also at the replay cap), 2 bad input or\n"
	      "usage, or IN shows no such violation (OUT is then left as it was).\n",
	      f);
}

#define S(n) ((n) == 1 ? "" : "s")	/* "1 event", "2 events" */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- IN ---- */

/* Read all of path (a trace, or the program a fuzz input decodes to) into t; 0, or -1 with err set. */
static int load(const char *path, bool fuzz_input, struct mz_trace *t, struct pt_error *err)
{
	struct pt_reader *r = cli_reader_open(path, fuzz_input, err);
	struct pt_event ev;
	size_t cap = 0;
	int rc;

	memset(t, 0, sizeof(*t));
	if (!r)
		return -1;
	t->h = *pt_reader_header(r);
	while ((rc = pt_reader_next(r, &ev, err)) > 0) {
		if (ev.kind == PT_EV_COMMENT)
			continue;	/* dropped: their text would outlive the reader's buffer anyway */
		if (t->n == cap) {
			cap = cap ? 2 * cap : 256;
			struct pt_event *p = realloc(t->ev, cap * sizeof(*p));
			if (!p) {
				perror("ptfuzz");
				exit(EXIT_BAD);
			}
			t->ev = p;
		}
		ev.text = NULL;
		t->ev[t->n++] = ev;
	}
	cli_reader_close(r);
	if (rc < 0) {
		mz_trace_free(t);
		return -1;
	}
	return 0;
}

/* ---- progress ---- */

struct progress {
	double start, last;
	bool shown;
};

static void progress_show(void *ctx, const struct mz_stats *st)
{
	struct progress *p = ctx;
	double t = now();

	if (t - p->last < 0.1)
		return;
	p->last = t;
	p->shown = true;
	fprintf(stderr, "\r\033[K  minimize: round %u, %s: %zu events left, %" PRIu64 " replays, %.1f s",
		st->rounds + 1, st->pass, st->events, st->replays, t - p->start);
}

/* ---- OUT ---- */

struct comments {
	char *line[MAX_COMMENTS];
	unsigned n;
};

/* a comment line; what the text format cannot carry in one (control characters) becomes '?' */
static void comment_add(struct comments *c, const char *text)
{
	if (c->n == MAX_COMMENTS)
		return;
	char *s = strndup(text, PT_MAX_COMMENT);
	if (!s) {
		perror("ptfuzz");
		exit(EXIT_BAD);
	}
	for (char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 && *p != '\t')
			*p = '?';
	c->line[c->n++] = s;
}

static void comments_free(struct comments *c)
{
	for (unsigned i = 0; i < c->n; i++)
		free(c->line[i]);
	c->n = 0;
}

/* Write the comments, then t's events, to path (atomically: pt_writer_open); 0 or -1 with err. */
static int write_trace(const char *path, const struct mz_trace *t, const struct comments *c,
		       struct pt_error *err)
{
	struct pt_header h = t->h;
	struct pt_writer *w;

	snprintf(h.method, sizeof(h.method), "minimize");
	w = pt_writer_open(path, PT_ENC_TEXT, &h, err);
	if (!w)
		return -1;
	for (unsigned i = 0; i < c->n; i++) {
		struct pt_event ev = { .kind = PT_EV_COMMENT, .text = c->line[i] };
		if (pt_writer_put(w, &ev, err) < 0) {
			pt_writer_abort(w);
			return -1;
		}
	}
	for (size_t i = 0; i < t->n; i++)
		if (pt_writer_put(w, &t->ev[i], err) < 0) {
			pt_writer_abort(w);
			return -1;
		}
	return pt_writer_close(w, err);
}

/* "I1 I3" into buf: the invariants s shows */
static void ids_text(const struct pt_session *s, char *buf, size_t size)
{
	unsigned ids = 0;
	size_t n = 0;

	for (unsigned i = 0; s && i < pt_session_nviolations(s); i++)
		ids |= 1u << pt_session_violation(s, i)->id;
	buf[0] = '\0';
	for (unsigned id = 1; id < PT_INV_COUNT && n < size; id++)
		if (ids & (1u << id))
			n += (size_t)snprintf(buf + n, size - n, "%sI%u", n ? " " : "", id);
}

/*
 * The report of the target as `ptfuzz replay` prints it, for t preceded by c's comments (the
 * report's event indices count them).  Appended to r; the number of lines, or -1 with err.
 */
static int report_lines(const struct mz_trace *t, const struct comments *c, const char *variant,
			const struct mz_target *tg, struct comments *r, struct pt_error *err)
{
	const char *tmpdir = getenv("TMPDIR");
	const char *variants[2] = { variant, NULL };
	char tmp[4096];

	snprintf(tmp, sizeof(tmp), "%s/ptfuzz-minimize-XXXXXX.ptt", tmpdir && *tmpdir ? tmpdir : "/tmp");
	int fd = mkstemps(tmp, 4);
	int lines = 0;

	if (fd < 0)
		return pt_error_set(err, PT_ERR_IO, "%s: %s", tmp, strerror(errno));
	close(fd);
	if (write_trace(tmp, t, c, err) < 0) {
		unlink(tmp);
		return -1;
	}
	struct replay_run run = { .path = tmp, .context = true, .variants = variant ? variants : NULL };
	replay_file(&run);
	unlink(tmp);
	for (unsigned i = 0; run.s && !run.failed && i < pt_session_nviolations(run.s); i++) {
		const struct pt_violation *v = pt_session_violation(run.s, i);
		if (!mz_matches(tg, v))
			continue;
		char *buf = NULL;
		size_t size = 0;
		FILE *f = open_memstream(&buf, &size);
		if (!f) {
			perror("ptfuzz");
			exit(EXIT_BAD);
		}
		report_text(f, v, i < run.nctx ? &run.ctx[i] : NULL, i < run.nctx ? &run.actx[i] : NULL);
		fclose(f);
		for (char *line = buf, *nl; *line; line = nl + 1) {
			nl = strchr(line, '\n');
			if (!nl)
				nl = line + strlen(line) - 1;
			else
				*nl = '\0';
			comment_add(r, line);
			lines++;
		}
		free(buf);
		break;
	}
	if (run.failed) {
		*err = run.err;
		lines = -1;
	}
	replay_run_free(&run);
	return lines;
}

struct outcome {
	const char *in_name;
	size_t events_in;
	const char *variant;
	const struct mz_target *tg;
	const struct mz_stats *st;
	double seconds;
};

/* The header comments of OUT. */
static void header_comments(struct comments *c, const struct mz_trace *t, const struct outcome *o)
{
	char line[PT_MAX_COMMENT], ids[64];
	struct pt_session *s;

	snprintf(line, sizeof(line),
		 "minimized by ptfuzz minimize from %s (%zu event%s -> %zu event%s, %" PRIu64 " replay%s, %.1f s)",
		 o->in_name, o->events_in, S(o->events_in), t->n, S(t->n), o->st->replays, S(o->st->replays),
		 o->seconds);
	comment_add(c, line);
	if (o->st->capped)
		comment_add(c, "not 1-minimal: stopped at the replay cap (--max-replays)");
	if (o->variant) {
		snprintf(line, sizeof(line), "variant: %s", o->variant);
		comment_add(c, line);
	}
	mz_replay(t, o->variant, NULL, &s);
	ids_text(s, ids, sizeof(ids));
	pt_session_free(s);
	snprintf(line, sizeof(line), "expect: %s", ids);
	comment_add(c, line);
	if (o->variant) {
		mz_replay(t, NULL, NULL, &s);
		ids_text(s, ids, sizeof(ids));
		pt_session_free(s);
		if (ids[0]) {
			snprintf(line, sizeof(line), "expect-default: %s", ids);
			comment_add(c, line);
		}
	}
	if (o->tg->same_invariant)
		snprintf(line, sizeof(line), "target: I%u (--same-invariant)", o->tg->id);
	else
		snprintf(line, sizeof(line), "target: %s", o->tg->signature);
	comment_add(c, line);
	comment_add(c, "");
}

/*
 * Write OUT: the header, the report, the events.  The report's event indices count the comments
 * before the events, and how many lines it has can depend on them: iterate until the report
 * fits the room left for it.
 */
static int write_out(const char *out, const struct mz_trace *t, const struct outcome *o, struct pt_error *err)
{
	struct comments c = { .n = 0 }, r = { .n = 0 };
	int want = 0, got = 0;

	for (unsigned tries = 0; tries < 8; tries++) {
		comments_free(&c);
		header_comments(&c, t, o);
		unsigned base = c.n;
		for (int i = 0; i < want; i++)
			comment_add(&c, "");
		comments_free(&r);
		got = report_lines(t, &c, o->variant, o->tg, &r, err);
		if (got < 0) {
			comments_free(&c);
			return -1;
		}
		if (got == want) {
			for (int i = 0; i < got; i++) {
				free(c.line[base + i]);
				c.line[base + i] = r.line[i];
				r.line[i] = NULL;
			}
			r.n = 0;
			break;
		}
		want = got;
	}
	int rc = write_trace(out, t, &c, err);
	comments_free(&c);
	comments_free(&r);
	return rc;
}

/* ---- the command ---- */

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || end == s || *end || *s == '-' ? -1 : 0;
}

/* OUT is written beside its name and renamed: its directory must take a new file (errno set) */
static bool out_dir_unwritable(const char *out)
{
	const char *slash = strrchr(out, '/');
	char dir[4096];

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == out ? 1 : (int)(slash - out), out);
	return access(dir, W_OK | X_OK) != 0;
}

/* The target in IN's violations: SIG, or the first one. */
static int pick_target(const struct pt_session *s, const char *sig, bool same_invariant, struct mz_target *tg)
{
	for (unsigned i = 0; i < pt_session_nviolations(s); i++) {
		const struct pt_violation *v = pt_session_violation(s, i);
		if (sig && strcmp(v->signature, sig))
			continue;
		memset(tg, 0, sizeof(*tg));
		snprintf(tg->signature, sizeof(tg->signature), "%s", v->signature);
		tg->id = v->id;
		tg->same_invariant = same_invariant;
		return 0;
	}
	return -1;
}

struct minimize_opts {
	const char *out, *sig;
	const char *variants[MAX_VARIANTS + 1];
	unsigned nvariants;
	bool force, same_invariant, quiet, fuzz_input, json;
	uint64_t max_replays;
};

/* the options and OUT's checks; @return : -1 to go on, or the exit status (help, a usage error) */
static int minimize_parse(int argc, char **argv, struct minimize_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "variant", required_argument, NULL, 'v' },
		{ "signature", required_argument, NULL, 's' },
		{ "same-invariant", no_argument, NULL, 'i' },
		{ "max-replays", required_argument, NULL, 'm' },
		{ "input", no_argument, NULL, 'I' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->max_replays = DEFAULT_MAX_REPLAYS;
	while ((c = cli_getopt(CMD, argc, argv, "o:fqh", longopts)) != -1) {
		switch (c) {
		case 'o': o->out = optarg; break;
		case 'f': o->force = true; break;
		case 'v':
			if (o->nvariants)
				return cli_usage_error(CMD, "one --variant only");
			if (cli_variant_arg(CMD, o->variants, &o->nvariants, optarg))
				return EXIT_BAD;
			break;
		case 's': o->sig = optarg; break;
		case 'i': o->same_invariant = true; break;
		case 'm':
			if (parse_u64(optarg, &o->max_replays) || !o->max_replays)
				return cli_usage_error(CMD, "--max-replays takes a positive number, not '%s'", optarg);
			break;
		case 'I': o->fuzz_input = true; break;
		case 'q': o->quiet = true; break;
		case 'j': o->json = true; break;
		case 'h': help_minimize(stdout); return EXIT_CLEAN;
		default: return EXIT_BAD;
		}
	}
	if (optind == argc)
		return cli_usage_error(CMD, "no trace file given");
	if (argc - optind > 1)
		return cli_usage_error(CMD, "one trace file only, got %d", argc - optind);
	if (!o->out)
		return cli_usage_error(CMD, "no output given (-o OUT)");
	if (o->sig && o->same_invariant)
		return cli_usage_error(CMD, "--signature and --same-invariant exclude each other");
	if (!*o->out)
		return cli_usage_error(CMD, "empty output name");
	if (o->json && !strcmp(o->out, "-"))
		return cli_usage_error(CMD, "--json: standard output is OUT (give -o FILE)");
	struct stat sb;
	if (strcmp(o->out, "-") && !o->force && !lstat(o->out, &sb))
		return cli_usage_error(CMD, "%s exists (-f replaces it)", o->out);
	if (strcmp(o->out, "-") && out_dir_unwritable(o->out))
		return cli_usage_error(CMD, "cannot write beside %s: %s", o->out, strerror(errno));
	return -1;
}

/* the violation of t to keep (--signature, --same-invariant, or the first); EXIT_BAD after saying why not */
static int find_target(const struct mz_trace *t, const char *in_name, const struct minimize_opts *o,
		       struct mz_target *tg)
{
	const char *variant = o->variants[0];
	struct pt_session *s;

	mz_replay(t, variant, NULL, &s);
	if (!s) {
		fprintf(stderr, "%s: header: the model cannot run this machine (cpus %u, granule %u, va_bits %u)\n",
			in_name, t->h.cpus, t->h.granule, t->h.va_bits);
		return EXIT_BAD;
	}
	int found = pick_target(s, o->sig, o->same_invariant, tg);
	unsigned nv = pt_session_nviolations(s);
	pt_session_free(s);
	if (found >= 0)
		return 0;
	if (o->sig)
		fprintf(stderr, "%s: no violation with signature %s to minimize (%u other%s)\n", in_name, o->sig, nv,
			nv == 1 ? "" : "s");
	else
		fprintf(stderr, "%s: no violation to minimize%s%s\n", in_name, variant ? " under " : "",
			variant ? variant : "");
	return EXIT_BAD;
}

/* "OUT: N events -> M events (K replays, R rounds, T s), SIG" on stdout (stderr when OUT is -) */
static void summary_text(const char *out, const struct mz_trace *t, const struct outcome *o)
{
	FILE *f = strcmp(out, "-") ? stdout : stderr;
	const struct mz_target *tg = o->tg;
	char what[sizeof(tg->signature) + 32];

	if (tg->same_invariant)
		snprintf(what, sizeof(what), "I%u (any signature)", tg->id);
	else
		snprintf(what, sizeof(what), "%s", tg->signature);
	fprintf(f, "%s: %zu event%s -> %zu event%s (%" PRIu64 " replay%s, %u round%s, %.1f s), %s\n",
		cli_display_name(out), o->events_in, S(o->events_in), t->n, S(t->n), o->st->replays, S(o->st->replays),
		o->st->rounds, S(o->st->rounds), o->seconds, what);
}

/* --json: the same facts but the time (the document is the same for the same IN) */
static void summary_json(const char *out, const struct mz_trace *t, const struct outcome *o)
{
	char inv[8];
	struct json j;

	snprintf(inv, sizeof(inv), "I%u", o->tg->id);
	json_init(&j, stdout);
	json_object_begin(&j);
	json_key(&j, "input");
	json_string(&j, o->in_name);
	json_key(&j, "output");
	json_string(&j, out);
	json_key(&j, "variant");
	json_string(&j, o->variant);
	json_key(&j, "invariant");
	json_string(&j, inv);
	json_key(&j, "signature");	/* null with --same-invariant */
	json_string(&j, o->tg->same_invariant ? NULL : o->tg->signature);
	json_key(&j, "events_in");
	json_u64(&j, o->events_in);
	json_key(&j, "events_out");
	json_u64(&j, t->n);
	json_key(&j, "replays");
	json_u64(&j, o->st->replays);
	json_key(&j, "rounds");
	json_u64(&j, o->st->rounds);
	json_key(&j, "one_minimal");
	json_bool(&j, !o->st->capped);
	json_object_end(&j);
	json_end(&j);
}

/* t minimized for the target tg (progress on a terminal unless -q); 1 if stopped at the replay cap */
static int shrink(struct mz_trace *t, const struct mz_target *tg, const struct minimize_opts *o, double start,
		  struct mz_stats *st)
{
	const char *variant = o->variants[0];
	struct progress p = { .start = start, .last = start };
	struct mz_config cfg = {
		.variant = variant,
		.target = *tg,
		.clean_by_default = variant && !mz_replay(t, NULL, tg, NULL),
		.max_replays = o->max_replays,
		.progress = !o->quiet && isatty(STDERR_FILENO) ? progress_show : NULL,
		.progress_ctx = &p,
	};
	int capped = mz_minimize(&cfg, t, st);

	if (p.shown)
		fputs("\r\033[K", stderr);
	return capped;
}

int cmd_minimize(int argc, char **argv)
{
	struct minimize_opts o;
	struct pt_error err;
	struct mz_trace t;
	struct mz_target tg;
	int rc;

	memset(&o, 0, sizeof(o));
	rc = minimize_parse(argc, argv, &o);
	if (rc >= 0)
		return rc;

	const char *in = argv[optind], *in_name = cli_display_name(in);
	const char *variant = o.variants[0];
	double start = now();

	if (load(in, o.fuzz_input, &t, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return EXIT_BAD;
	}
	size_t events_in = t.n;
	if (find_target(&t, in_name, &o, &tg)) {
		mz_trace_free(&t);
		return EXIT_BAD;
	}

	struct mz_stats st;
	int capped = shrink(&t, &tg, &o, start, &st);
	struct outcome oc = {
		.in_name = in_name, .events_in = events_in, .variant = variant, .tg = &tg, .st = &st,
		.seconds = now() - start,
	};
	if (write_out(o.out, &t, &oc, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		mz_trace_free(&t);
		return EXIT_BAD;
	}
	if (capped)
		fprintf(stderr, "ptfuzz minimize: %s: stopped at the replay cap (%" PRIu64
			" replays, --max-replays): %s still shows the target but may not be 1-minimal\n",
			in_name, st.replays, cli_display_name(o.out));
	if (o.json)
		summary_json(o.out, &t, &oc);
	else if (!o.quiet)
		summary_text(o.out, &t, &oc);
	mz_trace_free(&t);
	cli_check_stdout();
	return EXIT_CLEAN;
}
