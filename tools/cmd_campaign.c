/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_campaign.c - `ptfuzz campaign`: run AFL++ (-M main, -S s1..) or
 * libFuzzer (-fork=N) on the ops_invariants harness for a time, triage every
 * crash as it arrives (campaign.c), and keep DIR/status.json, DIR/plot_data
 * and DIR/plot.svg; `ptfuzz campaign --status DIR`.
 *
 * The engines run in a process group of their own, so that a SIGINT on the
 * terminal reaches this process only: it stops the whole group (SIGINT, then
 * SIGKILL after a grace period), triages what is left and writes the summary.
 * One campaign at a time per DIR (a lock on DIR/campaign.lock).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "campaign.h"
#include "cli.h"
#include "mm.h"

#ifndef PTFUZZ_SOURCE_DIR
#define PTFUZZ_SOURCE_DIR "."
#endif
#ifndef PTFUZZ_VERSION
#define PTFUZZ_VERSION "0.0.0"
#endif

#define POLL_MS 2000
#define STATUS_EVERY 5		/* seconds between status lines / plot points */
#define STOP_GRACE 10		/* seconds between SIGINT and SIGKILL of the engines */
#define TRIAGE_TIMEOUT 60

void help_campaign(FILE *f)
{
	fputs("usage: ptfuzz campaign --engine afl|libfuzzer --jobs N --time T -o DIR\n"
	      "                       [--variant V] [--contracts allow] [--resume]\n"
	      "                       [--until N] [--host NAME] [--fuzzer BIN] [--mutator SO]\n"
	      "                       [--seeds DIR] [--dict FILE] [--json] [-q]\n"
	      "       ptfuzz campaign --status DIR [--json]\n"
	      "       ptfuzz campaign --plot DIR     (draw DIR/plot.svg again from DIR/plot_data)\n"
	      "\n"
	      "Fuzz the mm model (the ops_invariants harness) for T (90s, 30m, 8h, 1d;\n"
	      "a number is seconds) with N jobs, and triage every crash as it arrives:\n"
	      "replayed under the variant (a signature the default model also shows on\n"
	      "that input is not the variant's), deduplicated by signature, minimized\n"
	      "with ptfuzz minimize, and kept as\n"
	      "  DIR/findings/SIGNATURE/{crash.bin,repro.ptt,report.txt,report.json}\n"
	      "with DIR/findings/index.json (first seen, crashes per signature).\n"
	      "\n"
	      "  libfuzzer  build/fuzz-fast/fuzzers/ops_invariants_fuzz -fork=N over DIR/corpus\n"
	      "             (cmake --preset fuzz-fast && cmake --build --preset fuzz-fast)\n"
	      "  afl        afl-fuzz -M main -S s1 .. s(N-1) over DIR/sync with the custom\n"
	      "             mutator build/release/fuzzers/libptfuzz_afl_mutator.so and\n"
	      "             build/afl/fuzzers/ops_invariants_afl\n"
	      "             (cmake --preset afl && cmake --build --preset afl)\n"
	      "Both start from corpus/fuzz/ops_invariants (copied to DIR/seeds; with a\n"
	      "variant, without the variant reproducers) and fuzzers/ops.dict.\n"
	      "\n"
	      "DIR also holds campaign.json (what the campaign is), status.json (where it\n"
	      "stands, rewritten every few seconds), plot_data and plot.svg (coverage and\n"
	      "unique findings over time), logs/ (the engines' output).  Every file is\n"
	      "written under a temporary name and renamed: a kill at any moment leaves\n"
	      "whole files.  Re-running on the same DIR (or --resume) continues its\n"
	      "corpus and keeps its findings; each run lasts T.  SIGINT or SIGTERM stop\n"
	      "the engines, finish the triage and print the summary.\n"
	      "\n"
	      "options:\n"
	      "  --engine E        afl or libfuzzer (with --resume: the campaign's)\n"
	      "  --jobs N          fuzzing processes (default 1)\n"
	      "  --time T          how long this run fuzzes\n"
	      "  -o, --out DIR     the campaign directory (created if absent)\n"
	      "  --variant V       fuzz a bug variant (ptfuzz variants), differentially\n"
	      "  --contracts allow the decoder may break caller contracts (PTFUZZ_CONTRACTS)\n"
	      "  --resume          continue DIR's campaign (its engine, variant, jobs, time)\n"
	      "  --fuzzer BIN      the harness binary (default: found next to this ptfuzz)\n"
	      "  --mutator SO      the AFL++ custom mutator library\n"
	      "  --seeds DIR       seed corpus (default corpus/fuzz/ops_invariants)\n"
	      "  --dict FILE       dictionary (default fuzzers/ops.dict)\n"
	      "  --until N         stop this run once DIR holds N findings (time to bug)\n"
	      "  --host NAME       AFL++ on several machines: this host's instances are\n"
	      "                    NAME-s0, NAME-s1, ... (all -S); the host without\n"
	      "                    --host runs the one -M main (README: Campaigns)\n"
	      "  --status DIR      print where DIR's campaign stands and exit\n"
	      "  --json            the summary (or --status) as one JSON document on\n"
	      "                    standard output: {\"dir\", \"state\", \"engine\", \"jobs\",\n"
	      "                    \"variant\", \"elapsed_s\", \"execs\", \"corpus\", \"coverage\",\n"
	      "                    \"crashes\", \"unreproduced\", \"findings\": [{\"signature\",\n"
	      "                    \"invariant\", \"crashes\", \"first_seen_utc\", \"ops\",\n"
	      "                    \"minimized\", \"dir\"}]}; --status has \"started_utc\", \"pid\"\n"
	      "                    (null when not running) and \"this_run\": {\"elapsed_s\",\n"
	      "                    \"remaining_s\", \"execs\", \"execs_per_s\", \"corpus\",\n"
	      "                    \"coverage\"} (null before a first run) instead of the run's\n"
	      "                    figures\n"
	      "  -q, --quiet       no status line, no \"new finding\" lines (errors still are)\n"
	      "  -h, --help        this help\n"
	      "\n"
	      "A one-line status goes to standard error when it is a terminal (not with\n"
	      "-q), a line per new finding too; the summary table of findings to\n"
	      "standard output.\n"
	      "\n"
	      "exit status: 0 no finding, 1 findings in DIR, 2 bad usage (unknown engine,\n"
	      "a DIR that holds something else, an engine binary or afl-fuzz missing) or\n"
	      "an engine that failed before its time (its log is named on stderr).\n",
	      f);
}

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static uint64_t now_s(void)
{
	return (uint64_t)time(NULL);
}

/* ---- arguments ---- */

static int parse_time(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s || errno || *s == '-')
		return -1;
	uint64_t mul = 1;
	if (!strcmp(end, "") || !strcmp(end, "s"))
		mul = 1;
	else if (!strcmp(end, "m"))
		mul = 60;
	else if (!strcmp(end, "h"))
		mul = 3600;
	else if (!strcmp(end, "d"))
		mul = 86400;
	else
		return -1;
	if (!v || v > UINT64_MAX / mul / 2)
		return -1;
	*out = v * mul;
	return 0;
}

struct campaign {
	const char *dir;
	struct campaign_meta m;
	char self[CAMPAIGN_PATH];	/* this ptfuzz */
	char fuzzer[CAMPAIGN_PATH], mutator[CAMPAIGN_PATH], seeds[CAMPAIGN_PATH], dict[CAMPAIGN_PATH];
	char afl_fuzz[CAMPAIGN_PATH];
	pid_t pgid;			/* the engines' process group */
	pid_t pids[64];
	int early[64];			/* an engine's exit status when it ended by itself before the time */
	unsigned npids;
	bool stopping;
	struct findings_index idx;
	uint64_t run_start, elapsed_before;	/* this run; earlier runs' fuzzing time */
	/* engine statistics */
	uint64_t execs, execs_per_s, corpus, coverage;
	uint64_t rate_t, rate_execs;	/* AFL++: the last total read, and when */
	off_t log_off;
	char *plot;			/* plot_data so far */
	size_t plot_len;
	bool tty;			/* a status line is shown on stderr */
	bool quiet;			/* -q: no status line, no new-finding lines */
	unsigned until;			/* stop at this many findings (0: run for the time) */
};

static void exe_dir(char *out, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", out, size - 1);
	out[n > 0 ? n : 0] = 0;
}

/* path relative to the build tree this ptfuzz is in: build/release/tools/ptfuzz -> build/REL */
static void build_path(const char *self, const char *rel, char *out, size_t size)
{
	char tmp[CAMPAIGN_PATH];
	snprintf(tmp, sizeof(tmp), "%s", self);
	for (int up = 0; up < 3; up++) {
		char *s = strrchr(tmp, '/');
		if (s)
			*s = 0;
	}
	snprintf(out, size, "%s/%s", tmp, rel);
}

static bool find_in_path(const char *name, char *out, size_t size)
{
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		snprintf(out, size, "%.*s/%s", (int)n, path, name);
		if (n && !access(out, X_OK))
			return true;
		path += n + (path[n] == ':');
	}
	return false;
}

/* Is dir absent or empty? */
static bool dir_empty(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT;
	struct dirent *e;
	bool empty = true;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = false;
	closedir(d);
	return empty;
}

static int mkdirs(const char *dir, const char *sub)
{
	char p[CAMPAIGN_PATH];
	snprintf(p, sizeof(p), "%s/%s", dir, sub);
	return mkdir(p, 0755) && errno != EEXIST ? -1 : 0;
}

/* DIR/seeds: the seed corpus, copied once (a variant's campaign leaves out the variant reproducers) */
static int copy_seeds(struct campaign *c)
{
	char dst[CAMPAIGN_PATH], tmp[CAMPAIGN_PATH];
	snprintf(dst, sizeof(dst), "%s/seeds", c->dir);
	if (!access(dst, F_OK))
		return 0;
	snprintf(tmp, sizeof(tmp), "%s/.tmp-seeds-%ld", c->dir, (long)getpid());
	if (mkdir(tmp, 0755))
		return -1;
	DIR *d = opendir(c->seeds);
	if (!d)
		return -1;
	struct dirent *e;
	unsigned n = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (c->m.variant[0] && !strncmp(e->d_name, "regressions-variants-", 21))
			continue;
		char src[CAMPAIGN_PATH], out[CAMPAIGN_PATH];
		campaign_path(src, sizeof(src), "%s/%s", c->seeds, e->d_name);
		campaign_path(out, sizeof(out), "%s/%s", tmp, e->d_name);
		size_t len;
		char *data = read_file(src, &len);
		if (!data)
			continue;
		FILE *f = fopen(out, "wb");
		if (f) {
			fwrite(data, 1, len, f);
			n += !fclose(f);
		}
		free(data);
	}
	closedir(d);
	if (!n) {
		errno = ENOENT;
		return -1;
	}
	return rename(tmp, dst);
}

/* ---- the engines ---- */

static pid_t spawn(struct campaign *c, char *const argv[], const char *log, char *const env[])
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		/* the engines' own group: the terminal's SIGINT reaches ptfuzz only */
		setpgid(0, c->pgid);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		int null = open("/dev/null", O_RDONLY);
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		dup2(null, STDIN_FILENO);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		for (unsigned i = 0; env[i]; i++)
			putenv(env[i]);
		execv(argv[0], argv);
		_exit(127);
	}
	setpgid(pid, c->pgid ? c->pgid : pid);
	if (!c->pgid)
		c->pgid = pid;
	c->pids[c->npids++] = pid;
	return pid;
}

/* the engines' arguments and environment: kept until the campaign ends (xfree_all()) */
static char *xstrings[128];
static unsigned nxstrings;

static char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0 || nxstrings == sizeof(xstrings) / sizeof(xstrings[0]))
		abort();
	va_end(ap);
	xstrings[nxstrings++] = s;
	return s;
}

static void xfree_all(void)
{
	while (nxstrings)
		free(xstrings[--nxstrings]);
}

/*
 * AFL++ instance j: main (-M) and s1.. (-S); on a host that joins another's
 * sync directory (--host NAME), NAME-s0, NAME-s1, ... all -S: one -M in all.
 */
static void instance_name(const struct campaign *c, unsigned j, char *out, size_t size)
{
	if (c->m.host[0])
		snprintf(out, size, "%s-s%u", c->m.host, j);
	else if (j)
		snprintf(out, size, "s%u", j);
	else
		snprintf(out, size, "main");
}

static int start_engines(struct campaign *c)
{
	char *env[16];
	unsigned ne = 0;
	if (c->m.variant[0])
		env[ne++] = xprintf("PTFUZZ_VARIANT=%s", c->m.variant);
	if (c->m.contracts)
		env[ne++] = xprintf("PTFUZZ_CONTRACTS=allow");
	if (c->m.engine == ENGINE_LIBFUZZER) {
		/* its -fork working directory: inside DIR, removed with the temporaries */
		char *tmp = xprintf("%s/.tmp-libfuzzer", c->dir);
		mkdir(tmp, 0755);
		env[ne++] = xprintf("TMPDIR=%s", tmp);
		env[ne] = NULL;
		char *argv[16];
		unsigned n = 0;
		argv[n++] = c->fuzzer;
		argv[n++] = xprintf("-fork=%u", c->m.jobs);
		argv[n++] = "-ignore_crashes=1";
		argv[n++] = xprintf("-max_total_time=%llu", (unsigned long long)c->m.time_s);
		argv[n++] = xprintf("-artifact_prefix=%s/crashes/", c->dir);
		argv[n++] = "-max_len=1024";
		argv[n++] = "-timeout=30";
		argv[n++] = xprintf("-dict=%s", c->dict);
		argv[n++] = xprintf("%s/corpus", c->dir);
		argv[n++] = xprintf("%s/seeds", c->dir);
		argv[n] = NULL;
		char *log = xprintf("%s/logs/libfuzzer.log", c->dir);
		struct stat st;
		c->log_off = stat(log, &st) ? 0 : st.st_size;
		return spawn(c, argv, log, env) < 0 ? -1 : 0;
	}
	env[ne++] = "AFL_NO_UI=1";
	env[ne++] = "AFL_SKIP_CPUFREQ=1";
	env[ne++] = "AFL_AUTORESUME=1";
	env[ne++] = "AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1";
	env[ne++] = "AFL_SKIP_CRASHES=1";
	/* each start imports the peers' queues before fuzzing its own (a host that joins or resumes) */
	env[ne++] = "AFL_IMPORT_FIRST=1";
	env[ne++] = xprintf("AFL_CUSTOM_MUTATOR_LIBRARY=%s", c->mutator);
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	if ((long)c->m.jobs > cores)
		env[ne++] = "AFL_NO_AFFINITY=1";
	env[ne] = NULL;
	for (unsigned j = 0; j < c->m.jobs; j++) {
		char name[48];
		instance_name(c, j, name, sizeof(name));
		char *argv[] = { c->afl_fuzz, "-i", xprintf("%s/seeds", c->dir), "-o", xprintf("%s/sync", c->dir),
				 j || c->m.host[0] ? "-S" : "-M", name, "-x", c->dict, "-t", "30000", "--", c->fuzzer, NULL };
		char *log = xprintf("%s/logs/afl-%s.log", c->dir, name);
		if (spawn(c, argv, log, env) < 0)
			return -1;
	}
	return 0;
}

static bool engines_alive(struct campaign *c)
{
	bool any = false;
	for (unsigned i = 0; i < c->npids; i++) {
		if (!c->pids[i])
			continue;
		int st;
		if (waitpid(c->pids[i], &st, WNOHANG) == c->pids[i]) {
			c->pids[i] = 0;
			if (!c->stopping && (!WIFEXITED(st) || WEXITSTATUS(st)) && now_s() - c->run_start < c->m.time_s)
				c->early[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
		else
			any = true;
	}
	return any;
}

static void stop_engines(struct campaign *c)
{
	if (!c->pgid)
		return;
	c->stopping = true;
	/*
	 * afl-fuzz stops on SIGINT (and writes its stats); libFuzzer's -fork parent
	 * goes on starting jobs after a SIGINT, but exits on SIGTERM.
	 */
	if (c->m.engine == ENGINE_AFL)
		kill(-c->pgid, SIGINT);
	else if (c->pids[0])
		kill(c->pids[0], SIGTERM);
	for (int i = 0; i < STOP_GRACE * 10 && engines_alive(c); i++)
		usleep(100000);
	/* whatever is left of the group (libFuzzer's jobs, AFL++'s fork servers) */
	kill(-c->pgid, SIGKILL);
	while (engines_alive(c))
		usleep(10000);
}

/* ---- statistics ---- */

/* libFuzzer: the last "#N: cov: C ft: F corp: K exec/s E ..." (fork mode) line of its log */
static void libfuzzer_stats(struct campaign *c)
{
	char path[CAMPAIGN_PATH];
	snprintf(path, sizeof(path), "%s/logs/libfuzzer.log", c->dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	if (fseeko(f, c->log_off, SEEK_SET)) {
		fclose(f);
		return;
	}
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		if (!strchr(line, '\n'))
			break;	/* a line being written: read it whole next time */
		c->log_off += (off_t)strlen(line);
		unsigned long long runs, cov, ft, corp, eps;
		if (sscanf(line, "#%llu: cov: %llu ft: %llu corp: %llu exec/s %llu", &runs, &cov, &ft, &corp, &eps) ==
		    5) {
			c->execs = runs;
			c->coverage = cov;
			c->corpus = corp;
			c->execs_per_s = eps;
		}
	}
	fclose(f);
}

static uint64_t stat_field(const char *s, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\n%s", key);
	const char *p = strstr(s, pat);
	if (!p)
		return 0;
	p = strchr(p, ':');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

static unsigned count_prefix(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned n = 0;
	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	if (d)
		closedir(d);
	return n;
}

/* AFL++: every instance's fuzzer_stats (written once a minute), the main queue otherwise */
static void afl_stats(struct campaign *c)
{
	char path[CAMPAIGN_PATH];
	uint64_t execs = 0, eps = 0, cov = 0;
	char name[48];
	for (unsigned j = 0; j < c->m.jobs; j++) {
		instance_name(c, j, name, sizeof(name));
		snprintf(path, sizeof(path), "%s/sync/%s/fuzzer_stats", c->dir, name);
		char *s = read_file(path, NULL);
		if (!s)
			continue;
		char *body = NULL;
		if (asprintf(&body, "\n%s", s) < 0)
			body = NULL;
		free(s);
		if (!body)
			continue;
		execs += stat_field(body, "execs_done");
		eps += stat_field(body, "execs_per_sec");
		uint64_t e = stat_field(body, "edges_found");
		cov = e > cov ? e : cov;
		free(body);
	}
	instance_name(c, 0, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/sync/%s/queue", c->dir, name);
	c->corpus = count_prefix(path, "id:");
	(void)eps;	/* AFL++'s own rate is wild in the first minute: ours, from the totals */
	uint64_t t = now_s();
	if (execs > c->execs) {
		if (c->rate_t && t > c->rate_t)
			c->execs_per_s = (execs - c->rate_execs) / (t - c->rate_t);
		c->rate_t = t;
		c->rate_execs = execs;
		c->execs = execs;
	}
	if (cov > c->coverage)
		c->coverage = cov;
}

/* "I3 x1, I1 x2" (engine crashes: "engine x1") */
static void by_invariant(const struct findings_index *idx, char *out, size_t size)
{
	size_t n = 0;
	out[0] = 0;
	for (unsigned inv = 0; inv <= 12 && n < size; inv++) {
		unsigned k = 0;
		for (unsigned i = 0; i < idx->n; i++)
			k += idx->f[i].inv == inv;
		if (!k)
			continue;
		if (inv)
			n += (size_t)snprintf(out + n, size - n, "%sI%u x%u", n ? ", " : "", inv, k);
		else
			n += (size_t)snprintf(out + n, size - n, "%sengine x%u", n ? ", " : "", k);
	}
}

static void hms(uint64_t s, char *out, size_t size)
{
	snprintf(out, size, "%02llu:%02llu:%02llu", (unsigned long long)(s / 3600),
		 (unsigned long long)(s / 60 % 60), (unsigned long long)(s % 60));
}

static void write_status(struct campaign *c, const char *state)
{
	char buf[4096], path[CAMPAIGN_PATH], when[32];
	uint64_t el = now_s() - c->run_start;
	uint64_t left = el < c->m.time_s ? c->m.time_s - el : 0;
	size_t n = 0;
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n,
			      "{\n\"state\": \"%s\",\n\"pid\": %ld,\n\"engine_pgid\": %ld,\n\"engine\": \"%s\",\n"
			      "\"variant\": \"%s\",\n\"jobs\": %u,\n\"updated\": \"%s\",\n\"run_start\": %llu,\n"
			      "\"elapsed_s\": %llu,\n\"remaining_s\": %llu,\n\"total_fuzzing_s\": %llu,\n"
			      "\"execs\": %llu,\n\"execs_per_s\": %llu,\n\"corpus\": %llu,\n\"coverage\": %llu,\n"
			      "\"crashes\": %llu,\n\"unreproduced\": %llu,\n\"findings\": %u,\n\"by_invariant\": {",
			      state, (long)getpid(), (long)c->pgid, campaign_engine_name(c->m.engine),
			      c->m.variant[0] ? c->m.variant : "default", c->m.jobs, when,
			      (unsigned long long)c->run_start, (unsigned long long)el, (unsigned long long)left,
			      (unsigned long long)(c->elapsed_before + el), (unsigned long long)c->execs,
			      (unsigned long long)c->execs_per_s, (unsigned long long)c->corpus,
			      (unsigned long long)c->coverage, (unsigned long long)c->idx.nc,
			      (unsigned long long)c->idx.unreproduced, c->idx.n);
	bool first = true;
	for (unsigned v = 0; v <= 12; v++) {
		unsigned k = 0;
		for (unsigned i = 0; i < c->idx.n; i++)
			k += c->idx.f[i].inv == v;
		if (!k)
			continue;
		if (v)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s\"I%u\": %u", first ? "" : ", ", v, k);
		else
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s\"engine-crash\": %u", first ? "" : ", ", k);
		first = false;
	}
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "}\n}\n");
	snprintf(path, sizeof(path), "%s/status.json", c->dir);
	write_atomic(path, buf, n < sizeof(buf) ? n : sizeof(buf) - 1);
}

static void status_line(struct campaign *c)
{
	char inv[256], el[16], left[16];
	uint64_t e = now_s() - c->run_start;
	hms(e, el, sizeof(el));
	hms(e < c->m.time_s ? c->m.time_s - e : 0, left, sizeof(left));
	by_invariant(&c->idx, inv, sizeof(inv));
	fprintf(stderr, "\r\033[K%s %s: %llu exec/s, %llu execs, corpus %llu, cov %llu, findings %u%s%s%s, elapsed %s, left %s",
		campaign_engine_name(c->m.engine), c->m.variant[0] ? c->m.variant : "default",
		(unsigned long long)c->execs_per_s, (unsigned long long)c->execs, (unsigned long long)c->corpus,
		(unsigned long long)c->coverage, c->idx.n, inv[0] ? " (" : "", inv, inv[0] ? ")" : "", el, left);
}

/* ---- plots ---- */

static void plot_point(struct campaign *c)
{
	char line[256];
	int n = snprintf(line, sizeof(line), "%llu, %llu, %llu, %llu, %llu, %llu, %u\n", (unsigned long long)now_s(),
			 (unsigned long long)(c->elapsed_before + now_s() - c->run_start), (unsigned long long)c->execs,
			 (unsigned long long)c->execs_per_s, (unsigned long long)c->corpus,
			 (unsigned long long)c->coverage, c->idx.n);
	char *p = realloc(c->plot, c->plot_len + (size_t)n + 1);
	if (!p)
		return;
	c->plot = p;
	memcpy(c->plot + c->plot_len, line, (size_t)n + 1);
	c->plot_len += (size_t)n;
	char path[CAMPAIGN_PATH];
	snprintf(path, sizeof(path), "%s/plot_data", c->dir);
	write_atomic(path, c->plot, c->plot_len);
}

/* a round step (1, 2 or 5 times a power of ten) that cuts span into about n parts */
static uint64_t nice_step(uint64_t span, unsigned n)
{
	uint64_t raw = span / n ? span / n : 1, p = 1;
	while (p * 10 <= raw)
		p *= 10;
	return raw <= p ? p : raw <= 2 * p ? 2 * p : raw <= 5 * p ? 5 * p : 10 * p;
}

struct plot_pt {
	uint64_t t, cov;
	unsigned f;
};

/* plot_data's points and the scales they are drawn on */
struct plot {
	struct plot_pt *pt;
	unsigned np, cap;
	uint64_t tmax, cmin, cmax;
	unsigned fmax;
	uint64_t cstep, clo, chi, tstep;
	unsigned fstep, ftop;
	bool minutes;
	double pw, ph;
};

enum { PLOT_W = 800, PLOT_H = 400, PLOT_L = 70, PLOT_R = 60, PLOT_T = 40, PLOT_B = 50 };

/* plot_data's lines "unix_time, fuzzing_s, execs, execs_per_s, corpus, coverage, findings"; -1 out of memory */
static int plot_read(const char *plot, struct plot *p)
{
	memset(p, 0, sizeof(*p));
	p->tmax = 1;
	p->cmin = UINT64_MAX;
	p->fmax = 1;
	for (const char *l = plot; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		unsigned long long ut, el, ex, eps, corp, cov;
		unsigned f;
		if (*l == '#' || sscanf(l, "%llu, %llu, %llu, %llu, %llu, %llu, %u", &ut, &el, &ex, &eps, &corp, &cov, &f) != 7)
			continue;
		if (p->np == p->cap) {
			p->cap = p->cap ? 2 * p->cap : 256;
			struct plot_pt *q = realloc(p->pt, p->cap * sizeof(*p->pt));
			if (!q) {
				free(p->pt);
				return -1;
			}
			p->pt = q;
		}
		p->pt[p->np++] = (struct plot_pt){ el, cov, f };
		p->tmax = el > p->tmax ? el : p->tmax;
		if (cov) {
			p->cmin = cov < p->cmin ? cov : p->cmin;
			p->cmax = cov > p->cmax ? cov : p->cmax;
		}
		p->fmax = f > p->fmax ? f : p->fmax;
	}
	return 0;
}

/* round ticks: coverage from the first value the engine reported, time in s or min, findings from 0 */
static void plot_scale(struct plot *p)
{
	if (p->cmin == UINT64_MAX)
		p->cmin = p->cmax = 0;
	p->cstep = nice_step(p->cmax - p->cmin ? p->cmax - p->cmin : p->cmax ? p->cmax : 1, 4);
	p->clo = p->cmin / p->cstep * p->cstep;
	p->chi = (p->cmax / p->cstep + 1) * p->cstep;
	p->minutes = p->tmax > 600;
	p->tstep = p->minutes ? 60 * nice_step(p->tmax / 60, 6) : nice_step(p->tmax, 6);
	p->fstep = (unsigned)nice_step(p->fmax, 4);
	p->ftop = (p->fmax + p->fstep - 1) / p->fstep * p->fstep;
	p->pw = PLOT_W - PLOT_L - PLOT_R;
	p->ph = PLOT_H - PLOT_T - PLOT_B;
}

static double plot_x(const struct plot *p, uint64_t t)
{
	return PLOT_L + (double)t / (double)p->tmax * p->pw;
}

static double plot_yc(const struct plot *p, uint64_t c)
{
	return (PLOT_H - PLOT_B) - (double)(c - p->clo) / (double)(p->chi - p->clo) * p->ph;
}

static double plot_yf(const struct plot *p, unsigned f)
{
	return (PLOT_H - PLOT_B) - (double)f / (double)p->ftop * p->ph;
}

/* the SVG being written; n may pass cap (then nothing is written out) */
struct svg {
	char *s;
	size_t n, cap;
};

static void svg_put(struct svg *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void svg_put(struct svg *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	b->n += (size_t)vsnprintf(b->s + b->n, b->n < b->cap ? b->cap - b->n : 0, fmt, ap);
	va_end(ap);
}

/* the frame, the title and the three axes; a light grid on the coverage ticks */
static void plot_axes(struct svg *b, const struct plot *p, const struct campaign_meta *m)
{
	const int W = PLOT_W, H = PLOT_H, L = PLOT_L, R = PLOT_R, T = PLOT_T, B = PLOT_B;

	svg_put(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
		"font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H);
	svg_put(b, "<text x=\"%d\" y=\"18\">ptfuzz campaign: %s x%u, %s: coverage (blue, left) and unique findings "
		"(red, right)</text>\n", L, campaign_engine_name(m->engine), m->jobs,
		m->variant[0] ? m->variant : "default model");
	svg_put(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"black\"/>\n", L, T,
		W - L - R, H - T - B);
	for (uint64_t t = 0; t <= p->tmax; t += p->tstep) {
		svg_put(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\"/>", plot_x(p, t), H - B,
			plot_x(p, t), H - B + 5);
		svg_put(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%llu</text>\n", plot_x(p, t), H - B + 18,
			(unsigned long long)(p->minutes ? t / 60 : t));
	}
	svg_put(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">fuzzing time (%s), %llu s in all</text>\n",
		(W + L - R) / 2, H - 10, p->minutes ? "min" : "s", (unsigned long long)p->tmax);
	for (uint64_t cv = p->clo; cv <= p->chi; cv += p->cstep) {
		svg_put(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#dddddd\"/>", L, plot_yc(p, cv),
			W - R, plot_yc(p, cv));
		svg_put(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#1f77b4\">%llu</text>\n", L - 4,
			plot_yc(p, cv) + 4, (unsigned long long)cv);
	}
	for (unsigned f = 0; f <= p->ftop; f += p->fstep)
		svg_put(b, "<text x=\"%d\" y=\"%.1f\" fill=\"#d62728\">%u</text>\n", W - R + 6, plot_yf(p, f) + 4, f);
}

/* coverage (blue), findings as a step line (red) with a dot where each appears */
static void plot_curves(struct svg *b, const struct plot *p)
{
	svg_put(b, "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"");
	for (unsigned i = 0; i < p->np; i++)
		if (p->pt[i].cov)
			svg_put(b, "%.1f,%.1f ", plot_x(p, p->pt[i].t), plot_yc(p, p->pt[i].cov));
	svg_put(b, "\"/>\n<polyline fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\" points=\"");
	for (unsigned i = 0; i < p->np; i++) {
		if (i)
			svg_put(b, "%.1f,%.1f ", plot_x(p, p->pt[i].t), plot_yf(p, p->pt[i - 1].f));
		svg_put(b, "%.1f,%.1f ", plot_x(p, p->pt[i].t), plot_yf(p, p->pt[i].f));
	}
	svg_put(b, "\"/>\n");
	for (unsigned i = 0; i < p->np; i++)
		if (p->pt[i].f > (i ? p->pt[i - 1].f : 0))
			svg_put(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#d62728\"/>\n", plot_x(p, p->pt[i].t),
				plot_yf(p, p->pt[i].f));
	svg_put(b, "</svg>\n");
}

/*
 * DIR/plot.svg from plot_data: coverage (left axis, from the first coverage
 * the engine reported, not from 0: it starts high on the seeds) and unique
 * findings (right axis, a step line, a dot where each appears) against
 * fuzzing time, drawn here (no gnuplot needed).
 */
static void plot_draw(const char *dir, const struct campaign_meta *m, const char *plot)
{
	struct plot p;
	char path[CAMPAIGN_PATH];

	if (plot_read(plot, &p))
		return;
	plot_scale(&p);
	struct svg b = { .cap = 8192 + (size_t)p.np * 40 };
	b.s = malloc(b.cap);
	if (!b.s) {
		free(p.pt);
		return;
	}
	plot_axes(&b, &p, m);
	plot_curves(&b, &p);
	snprintf(path, sizeof(path), "%s/plot.svg", dir);
	if (b.n < b.cap)
		write_atomic(path, b.s, b.n);
	free(b.s);
	free(p.pt);
}

/* plot.svg, and afl-plot's pages for AFL++ when gnuplot is installed */
static void plot_svg(struct campaign *c)
{
	plot_draw(c->dir, &c->m, c->plot);
	if (c->m.engine == ENGINE_AFL) {
		char gp[CAMPAIGN_PATH], out[CAMPAIGN_PATH], in[CAMPAIGN_PATH], fin[CAMPAIGN_PATH];
		if (!find_in_path("gnuplot", gp, sizeof(gp)) || !find_in_path("afl-plot", gp, sizeof(gp)))
			return;
		char name[48];
		instance_name(c, 0, name, sizeof(name));
		snprintf(in, sizeof(in), "%s/sync/%s", c->dir, name);
		snprintf(out, sizeof(out), "%s/.tmp-afl-plot-%ld", c->dir, (long)getpid());
		snprintf(fin, sizeof(fin), "%s/afl-plot", c->dir);
		char *argv[] = { gp, in, out, NULL };
		if (!run_command(NULL, argv, NULL, NULL, 60)) {
			char old[CAMPAIGN_PATH];
			snprintf(old, sizeof(old), "%s/.tmp-afl-plot-old-%ld", c->dir, (long)getpid());
			rename(fin, old);
			rename(out, fin);
			char *rm[] = { "/bin/rm", "-rf", old, NULL };
			run_command(NULL, rm, NULL, NULL, 30);
		}
	}
}

/* ---- triage as findings arrive ---- */

/*
 * The first crash of signature r->sig: its finding directory (unless an
 * earlier run left it whole) and its index entry; NULL if the directory could
 * not be made (the crash is kept for the next triage).
 */
static struct finding *finding_new(struct campaign *c, const struct triage_result *r, const char *crash,
				   const uint8_t *data, size_t len)
{
	struct finding nf, *f;
	char why[512], path[CAMPAIGN_PATH];

	memset(&nf, 0, sizeof(nf));
	snprintf(nf.sig, sizeof(nf.sig), "%s", r->sig);
	sig_to_dirname(r->sig, nf.dir, sizeof(nf.dir));
	nf.inv = r->inv;
	nf.first_seen = now_s();
	snprintf(path, sizeof(path), "%s/findings/%s", c->dir, nf.dir);
	if (access(path, F_OK) && finding_create(c->self, c->dir, &c->m, &nf, data, len, why, sizeof(why))) {
		fprintf(stderr, "%sptfuzz campaign: %s: %s (kept for the next triage)\n", c->tty ? "\n" : "", crash,
			why);
		return NULL;
	}
	f = index_add_finding(&c->idx, r->sig, r->inv, nf.first_seen);
	f->minimized = nf.minimized;
	f->ops = nf.ops;
	if (c->quiet)
		return f;
	if (c->tty)
		fprintf(stderr, "\r\033[K");
	fprintf(stderr, "ptfuzz campaign: new finding %s (%u ops%s): %s/findings/%s\n", r->sig, f->ops,
		f->minimized ? ", minimized" : ", not minimized", c->dir, f->dir);
	return f;
}

/* one crash file not triaged yet: counted under its finding, or as showing none; false if kept for later */
static bool triage_one(struct campaign *c, const char *crash, const uint8_t *data, size_t len, uint64_t h)
{
	struct triage_result r;
	struct finding *f;

	triage_crash(&c->m, data, len, TRIAGE_TIMEOUT, &r);
	if (r.kind != TRIAGE_FINDING && r.kind != TRIAGE_ENGINE_CRASH) {
		index_add_crash(&c->idx, h, "");
		c->idx.unreproduced++;
		return true;
	}
	f = index_find(&c->idx, r.sig);
	if (!f)
		f = finding_new(c, &r, crash, data, len);
	if (!f)
		return false;
	f->count++;
	index_add_crash(&c->idx, h, r.sig);
	return true;
}

/* returns true when the index changed */
static bool triage_new(struct campaign *c, bool final)
{
	unsigned n;
	char **list = crash_list(c->dir, &c->m, &n);
	bool changed = false;
	for (unsigned i = 0; i < n && (final || !stop_requested); i++) {
		struct stat st;
		/* an engine may still be writing it: take it once it is a second old */
		if (stat(list[i], &st) || (!final && (time_t)now_s() - st.st_mtime < 1))
			continue;
		size_t len;
		char *data = read_file(list[i], &len);
		if (!data)
			continue;
		uint64_t h = content_hash(data, len);
		if (!index_crash(&c->idx, h)) {
			triage_one(c, list[i], (uint8_t *)data, len, h);
			changed = true;
		}
		free(data);
	}
	crash_list_free(list, n);
	if (changed)
		index_save(c->dir, &c->idx);
	return changed;
}

static void utc_text(uint64_t t, const char *fmt, char *out, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(out, size, fmt, &tm);
}

static const char *variant_name(const struct campaign_meta *m)
{
	return m->variant[0] ? m->variant : "default";
}

/* "I3", or "engine-crash" for a crash of the harness itself (as status.json names it) */
static void json_invariant(struct json *j, unsigned inv)
{
	char s[8];

	snprintf(s, sizeof(s), "I%u", inv);
	json_string(j, inv ? s : "engine-crash");
}

static void summary(struct campaign *c, FILE *out)
{
	char el[16];
	hms(now_s() - c->run_start, el, sizeof(el));
	fprintf(out, "campaign %s: %s x%u, %s, %s: %llu execs, corpus %llu, coverage %llu, %llu crashes, %u findings\n",
		c->dir, campaign_engine_name(c->m.engine), c->m.jobs, c->m.variant[0] ? c->m.variant : "default model",
		el, (unsigned long long)c->execs, (unsigned long long)c->corpus, (unsigned long long)c->coverage,
		(unsigned long long)c->idx.nc, c->idx.n);
	if (!c->idx.n)
		return;
	fprintf(out, "%-4s %-9s %8s %-20s %5s  %s\n", "#", "invariant", "crashes", "first seen (UTC)", "ops", "signature");
	for (unsigned i = 0; i < c->idx.n; i++) {
		const struct finding *f = &c->idx.f[i];
		char when[32], inv[16];
		utc_text(f->first_seen, "%Y-%m-%d %H:%M:%S", when, sizeof(when));
		if (f->inv)
			snprintf(inv, sizeof(inv), "I%u", f->inv);
		else
			snprintf(inv, sizeof(inv), "engine");
		fprintf(out, "%-4u %-9s %8llu %-20s %5u%s %s\n", i + 1, inv, (unsigned long long)f->count, when, f->ops,
			f->minimized ? " " : "*", f->sig);
	}
	bool any = false;
	for (unsigned i = 0; i < c->idx.n; i++)
		any |= !c->idx.f[i].minimized;
	if (any)
		fprintf(out, "(* not minimized: repro.ptt is the converted crash)\n");
	fprintf(out, "reproducers: %s/findings/SIGNATURE/repro.ptt\n", c->dir);
}

/* the findings of idx as a JSON array */
static void findings_json(struct json *j, const struct findings_index *idx)
{
	char when[32];

	json_array_begin(j);
	for (unsigned i = 0; i < idx->n; i++) {
		const struct finding *f = &idx->f[i];
		json_object_begin(j);
		json_key(j, "signature");
		json_string(j, f->sig);
		json_key(j, "invariant");
		json_invariant(j, f->inv);
		json_key(j, "crashes");
		json_u64(j, f->count);
		json_key(j, "first_seen_utc");
		utc_text(f->first_seen, "%Y-%m-%dT%H:%M:%SZ", when, sizeof(when));
		json_string(j, when);
		json_key(j, "ops");
		json_u64(j, f->ops);
		json_key(j, "minimized");
		json_bool(j, f->minimized);
		json_key(j, "dir");
		json_string(j, f->dir);
		json_object_end(j);
	}
	json_array_end(j);
}

/* what a findings index holds, as the keys of the status document: crashes, unreproduced, findings */
static void index_json(struct json *j, const struct findings_index *idx)
{
	json_key(j, "crashes");
	json_u64(j, idx->nc);
	json_key(j, "unreproduced");
	json_u64(j, idx->unreproduced);
	json_key(j, "findings");
	findings_json(j, idx);
}

/* --json: the summary as one document */
static void summary_json(struct campaign *c, const char *state)
{
	struct json j;

	json_init(&j, stdout);
	json_object_begin(&j);
	json_key(&j, "dir");
	json_string(&j, c->dir);
	json_key(&j, "state");
	json_string(&j, state);
	json_key(&j, "engine");
	json_string(&j, campaign_engine_name(c->m.engine));
	json_key(&j, "jobs");
	json_u64(&j, c->m.jobs);
	json_key(&j, "variant");
	json_string(&j, variant_name(&c->m));
	json_key(&j, "elapsed_s");
	json_u64(&j, now_s() - c->run_start);
	json_key(&j, "execs");
	json_u64(&j, c->execs);
	json_key(&j, "corpus");
	json_u64(&j, c->corpus);
	json_key(&j, "coverage");
	json_u64(&j, c->coverage);
	index_json(&j, &c->idx);
	json_object_end(&j);
	json_end(&j);
}

/* ---- the lock: one campaign per DIR ---- */

static int lock_dir(const char *dir, pid_t *holder)
{
	char path[CAMPAIGN_PATH];
	snprintf(path, sizeof(path), "%s/campaign.lock", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	if (fcntl(fd, F_SETLK, &fl)) {
		if (holder && !fcntl(fd, F_GETLK, &fl))
			*holder = fl.l_pid;
		close(fd);
		return -1;
	}
	return fd;
}

static pid_t lock_holder(const char *dir)
{
	char path[CAMPAIGN_PATH];
	snprintf(path, sizeof(path), "%s/campaign.lock", dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	pid_t pid = 0;
	if (!fcntl(fd, F_GETLK, &fl) && fl.l_type != F_UNLCK)
		pid = fl.l_pid;
	close(fd);
	return pid;
}

/* a process of group pgid still runs whose command line names what ours do */
static bool group_is_ours(pid_t pgid, const char *dir, const struct campaign_meta *m)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	bool ours = false;
	while (d && !ours && (e = readdir(d))) {
		char path[64];
		pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
		if (pid <= 1 || getpgid(pid) != pgid)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)pid);
		size_t len = 0;
		char *cmd = read_file(path, &len);
		if (!cmd)
			continue;
		for (size_t i = 0; i < len; i++)
			if (!cmd[i])
				cmd[i] = ' ';
		ours = strstr(cmd, dir) && strstr(cmd, m->engine == ENGINE_AFL ? "afl-fuzz" : "ops_invariants");
		/* libFuzzer's jobs name the parent's working directory, which is inside DIR */
		free(cmd);
	}
	if (d)
		closedir(d);
	return ours;
}

/*
 * The engines of a campaign killed with -9 may outlive it (libFuzzer's -fork
 * jobs run on after their parent): stop their group, once it is checked to be
 * ours by the command lines in it.
 */
static void reap_orphans(const char *dir, const struct campaign_meta *m)
{
	char path[CAMPAIGN_PATH];
	snprintf(path, sizeof(path), "%s/status.json", dir);
	char *s = read_file(path, NULL);
	if (!s)
		return;
	char *p = strstr(s, "\"engine_pgid\":");
	long pgid = p ? strtol(p + 14, NULL, 10) : 0;
	free(s);
	if (pgid > 1 && group_is_ours((pid_t)pgid, dir, m)) {
		kill(-(pid_t)pgid, SIGKILL);
		usleep(200000);
	}
}

/* ---- --status ---- */

/* --plot DIR: draw DIR/plot.svg again from DIR/plot_data (after a change to the drawing, say) */
static int campaign_plot(const char *dir)
{
	struct campaign_meta m;
	char why[512], path[CAMPAIGN_PATH];
	if (campaign_meta_read(dir, &m, why, sizeof(why))) {
		fprintf(stderr, "ptfuzz campaign: %s is not a campaign directory (%s)\n", dir, why);
		return EXIT_BAD;
	}
	snprintf(path, sizeof(path), "%s/plot_data", dir);
	char *plot = read_file(path, NULL);
	if (!plot) {
		fprintf(stderr, "ptfuzz campaign: %s: %s\n", path, strerror(errno));
		return EXIT_BAD;
	}
	plot_draw(dir, &m, plot);
	free(plot);
	printf("%s/plot.svg\n", dir);
	cli_check_stdout();
	return EXIT_CLEAN;
}

/* where a campaign stands: DIR/campaign.json, status.json (if a run wrote one), the lock, the index */
struct standing {
	const char *dir;
	struct campaign_meta m;
	char *status;			/* DIR/status.json, or NULL */
	pid_t holder;			/* the running campaign's pid, 0 if none */
	char state[32];
	struct findings_index idx;
};

static int standing_read(const char *dir, struct standing *st)
{
	char why[512], path[CAMPAIGN_PATH];

	memset(st, 0, sizeof(*st));
	st->dir = dir;
	if (campaign_meta_read(dir, &st->m, why, sizeof(why))) {
		fprintf(stderr, "ptfuzz campaign: %s is not a campaign directory (%s)\n", dir, why);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/status.json", dir);
	st->status = read_file(path, NULL);
	st->holder = lock_holder(dir);
	index_load(dir, &st->idx);
	snprintf(st->state, sizeof(st->state), "new");
	if (st->status)
		campaign_json_field(st->status, "state", st->state, sizeof(st->state));
	if (!st->holder && !strcmp(st->state, "running"))
		snprintf(st->state, sizeof(st->state), "killed");
	return 0;
}

static void standing_free(struct standing *st)
{
	free(st->status);
	index_free(&st->idx);
}

/* a number of status.json, 0 if absent */
static uint64_t status_u64(const struct standing *st, const char *key)
{
	char buf[64];

	if (!st->status || !campaign_json_field(st->status, key, buf, sizeof(buf)))
		return 0;
	return strtoull(buf, NULL, 10);
}

static void standing_text(const struct standing *st)
{
	char el[16], left[16], started[32], running[48];

	hms(status_u64(st, "elapsed_s"), el, sizeof(el));
	hms(status_u64(st, "remaining_s"), left, sizeof(left));
	utc_text(st->m.start, "%Y-%m-%d %H:%M:%S", started, sizeof(started));
	if (st->holder)
		snprintf(running, sizeof(running), "running (pid %ld)", (long)st->holder);
	else
		snprintf(running, sizeof(running), "not running");
	printf("%s: %s campaign, %s x%u, variant %s, started %s UTC, %s\n", st->dir, st->state,
	       campaign_engine_name(st->m.engine), st->m.jobs, variant_name(&st->m), started, running);
	if (st->status) {
		char ex[32], eps[32], corp[32], cov[32];
		campaign_json_field(st->status, "execs", ex, sizeof(ex));
		campaign_json_field(st->status, "execs_per_s", eps, sizeof(eps));
		campaign_json_field(st->status, "corpus", corp, sizeof(corp));
		campaign_json_field(st->status, "coverage", cov, sizeof(cov));
		printf("  this run: elapsed %s, remaining %s; %s execs, %s exec/s, corpus %s, coverage %s\n", el, left,
		       ex, eps, corp, cov);
	}
	printf("  crashes triaged %u (%llu replay to no finding), findings %u\n", st->idx.nc,
	       (unsigned long long)st->idx.unreproduced, st->idx.n);
	for (unsigned i = 0; i < st->idx.n; i++)
		printf("  %-40s %6llu crashes  %s/findings/%s\n", st->idx.f[i].sig,
		       (unsigned long long)st->idx.f[i].count, st->dir, st->idx.f[i].dir);
}

static void standing_json(const struct standing *st)
{
	static const char *const run_keys[] = { "elapsed_s", "remaining_s", "execs", "execs_per_s", "corpus",
						"coverage" };
	char started[32];
	struct json j;

	json_init(&j, stdout);
	json_object_begin(&j);
	json_key(&j, "dir");
	json_string(&j, st->dir);
	json_key(&j, "state");
	json_string(&j, st->state);
	json_key(&j, "engine");
	json_string(&j, campaign_engine_name(st->m.engine));
	json_key(&j, "jobs");
	json_u64(&j, st->m.jobs);
	json_key(&j, "variant");
	json_string(&j, variant_name(&st->m));
	json_key(&j, "started_utc");
	utc_text(st->m.start, "%Y-%m-%dT%H:%M:%SZ", started, sizeof(started));
	json_string(&j, started);
	json_key(&j, "pid");		/* of the running campaign */
	if (st->holder)
		json_u64(&j, (uint64_t)st->holder);
	else
		json_null(&j);
	json_key(&j, "this_run");
	if (st->status) {
		json_object_begin(&j);
		for (unsigned i = 0; i < sizeof(run_keys) / sizeof(run_keys[0]); i++) {
			json_key(&j, run_keys[i]);
			json_u64(&j, status_u64(st, run_keys[i]));
		}
		json_object_end(&j);
	} else {
		json_null(&j);
	}
	index_json(&j, &st->idx);
	json_object_end(&j);
	json_end(&j);
}

static int campaign_status(const char *dir, bool as_json)
{
	struct standing st;

	if (standing_read(dir, &st))
		return EXIT_BAD;
	if (as_json)
		standing_json(&st);
	else
		standing_text(&st);
	int rc = st.idx.n ? EXIT_VIOLATION : EXIT_CLEAN;
	standing_free(&st);
	cli_check_stdout();
	return rc;
}

/* ---- the command ---- */

static int bad(const char *fmt, const char *a, const char *b) __attribute__((format(printf, 1, 0)));
static int bad(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "ptfuzz campaign: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	return EXIT_BAD;
}

enum { O_ENGINE = 256, O_JOBS, O_TIME, O_OUT, O_VARIANT, O_CONTRACTS, O_RESUME, O_STATUS, O_FUZZER,
       O_MUTATOR, O_SEEDS, O_DICT, O_UNTIL, O_HOST, O_PLOT, O_JSON };

/* the command line, as given */
struct campaign_args {
	const char *dir, *engine, *variant, *status_dir, *plot_dir;
	const char *fuzzer, *mutator, *seeds, *dict, *host;
	bool resume, contracts, have_jobs, have_time, json, quiet;
	unsigned jobs, until;
	uint64_t time_s;
};

/* n in 1..max, or -1 */
static long parse_count(const char *s, unsigned long max)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	return *end || !*s || v < 1 || v > max ? -1 : (long)v;
}

/* one option; @return : 0, or EXIT_BAD after a usage error */
static int campaign_option(int opt, const char *arg, struct campaign_args *a)
{
	long n;

	switch (opt) {
	case O_ENGINE: a->engine = arg; break;
	case O_JOBS:
		if ((n = parse_count(arg, 64)) < 0)
			return cli_usage_error("campaign", "--jobs is 1..64, got '%s'", arg);
		a->jobs = (unsigned)n;
		a->have_jobs = true;
		break;
	case O_TIME:
		if (parse_time(arg, &a->time_s))
			return cli_usage_error("campaign", "--time is a duration such as 90s, 30m, 8h, got '%s'", arg);
		a->have_time = true;
		break;
	case 'o':
	case O_OUT: a->dir = arg; break;
	case O_VARIANT:
		if (strcmp(arg, "default") && mm_variant_lookup(arg) < 0)
			return cli_usage_error("campaign", "unknown variant '%s' (ptfuzz variants lists them)", arg);
		a->variant = strcmp(arg, "default") ? arg : NULL;
		break;
	case O_CONTRACTS:
		if (strcmp(arg, "allow") && strcmp(arg, "strict"))
			return cli_usage_error("campaign", "--contracts is 'allow' or 'strict', got '%s'", arg);
		a->contracts = !strcmp(arg, "allow");
		break;
	case O_RESUME: a->resume = true; break;
	case O_PLOT: a->plot_dir = arg; break;
	case O_STATUS: a->status_dir = arg; break;
	case O_FUZZER: a->fuzzer = arg; break;
	case O_MUTATOR: a->mutator = arg; break;
	case O_SEEDS: a->seeds = arg; break;
	case O_DICT: a->dict = arg; break;
	case O_HOST:
		if (!*arg || strlen(arg) > 24 || arg[strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")])
			return cli_usage_error("campaign", "--host is a name of up to 24 letters, digits or _, got '%s'",
					       arg);
		a->host = arg;
		break;
	case O_UNTIL:
		if ((n = parse_count(arg, 100000)) < 0)
			return cli_usage_error("campaign", "--until is a number of findings, got '%s'", arg);
		a->until = (unsigned)n;
		break;
	case O_JSON: a->json = true; break;
	case 'q': a->quiet = true; break;
	default: return EXIT_BAD;
	}
	return 0;
}

/* @return : -1 to go on, or the exit status (help, a usage error) */
static int campaign_parse(int argc, char **argv, struct campaign_args *a)
{
	static const struct option longopts[] = {
		{ "engine", required_argument, NULL, O_ENGINE }, { "jobs", required_argument, NULL, O_JOBS },
		{ "time", required_argument, NULL, O_TIME },	 { "out", required_argument, NULL, O_OUT },
		{ "variant", required_argument, NULL, O_VARIANT }, { "contracts", required_argument, NULL, O_CONTRACTS },
		{ "resume", no_argument, NULL, O_RESUME },	 { "status", required_argument, NULL, O_STATUS },
		{ "fuzzer", required_argument, NULL, O_FUZZER }, { "mutator", required_argument, NULL, O_MUTATOR },
		{ "seeds", required_argument, NULL, O_SEEDS },	 { "dict", required_argument, NULL, O_DICT },
		{ "until", required_argument, NULL, O_UNTIL },	 { "host", required_argument, NULL, O_HOST },
		{ "plot", required_argument, NULL, O_PLOT },	 { "json", no_argument, NULL, O_JSON },
		{ "quiet", no_argument, NULL, 'q' },		 { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int opt;

	a->jobs = 1;
	optind = 1;
	while ((opt = cli_getopt("campaign", argc, argv, "o:qh", longopts)) != -1) {
		if (opt == 'h') {
			help_campaign(stdout);
			return EXIT_CLEAN;
		}
		if (campaign_option(opt, optarg, a))
			return EXIT_BAD;
	}
	if (optind < argc)
		return cli_usage_error("campaign", "unexpected argument '%s'", argv[optind]);
	return -1;
}

/* c->m: DIR's campaign (resumed, with the options that may change) or a new one; *existing says which */
static int campaign_setup_meta(struct campaign *c, const struct campaign_args *a, bool *existing)
{
	struct campaign_meta old;
	char why[512];

	*existing = !campaign_meta_read(c->dir, &old, why, sizeof(why));
	if (!*existing && !dir_empty(c->dir))
		return bad("%s holds something else (no campaign.json): give an empty or new directory%s", c->dir, "");
	if (!*existing && a->resume)
		return bad("--resume: %s is not a campaign directory%s", c->dir, "");
	if (*existing) {
		if (a->engine && strcmp(a->engine, campaign_engine_name(old.engine)))
			return bad("%s is a campaign of engine %s: resume it with the same engine", c->dir,
				   campaign_engine_name(old.engine));
		if ((a->variant || !a->resume) && strcmp(a->variant ? a->variant : "", old.variant))
			return bad("%s is a campaign of variant %s: resume it with the same variant", c->dir,
				   old.variant[0] ? old.variant : "default");
		c->m = old;
		if (a->have_jobs)
			c->m.jobs = a->jobs;
		if (a->have_time)
			c->m.time_s = a->time_s;
		if (a->contracts)
			c->m.contracts = true;
		if (a->host && strcmp(a->host, old.host))
			return bad("%s is the campaign of host '%s': resume it with the same --host", c->dir,
				   old.host[0] ? old.host : "(none)");
	} else {
		if (!a->engine)
			return cli_usage_error("campaign", "--engine afl|libfuzzer is required");
		if (!a->have_time)
			return cli_usage_error("campaign", "--time T is required (such as 90s or 8h)");
		c->m.engine = strcmp(a->engine, "afl") ? ENGINE_LIBFUZZER : ENGINE_AFL;
		snprintf(c->m.variant, sizeof(c->m.variant), "%s", a->variant ? a->variant : "");
		c->m.contracts = a->contracts;
		snprintf(c->m.host, sizeof(c->m.host), "%s", a->host ? a->host : "");
		c->m.jobs = a->jobs;
		c->m.time_s = a->time_s;
		c->m.start = now_s();
	}
	snprintf(c->m.version, sizeof(c->m.version), "%s", PTFUZZ_VERSION);
	if (!c->m.time_s)
		return cli_usage_error("campaign", "--time T is required (such as 90s or 8h)");
	return 0;
}

/* path given, or rel to the build tree this ptfuzz is in */
static void given_or_built(const struct campaign *c, const char *given, const char *rel, char *out, size_t size)
{
	if (given)
		snprintf(out, size, "%s", given);
	else
		build_path(c->self, rel, out, size);
}

/* the engine and its pieces: the harness, afl-fuzz and the mutator, the seeds, the dictionary */
static int campaign_find_engine(struct campaign *c, const struct campaign_args *a, bool existing)
{
	exe_dir(c->self, sizeof(c->self));
	if (c->m.engine == ENGINE_LIBFUZZER) {
		given_or_built(c, a->fuzzer, "fuzz-fast/fuzzers/ops_invariants_fuzz", c->fuzzer, sizeof(c->fuzzer));
		if (access(c->fuzzer, X_OK))
			return bad("no libFuzzer harness %s: build it with `cmake --preset fuzz-fast && cmake --build "
				   "--preset fuzz-fast` (or give --fuzzer BIN)%s",
				   c->fuzzer, "");
	} else {
		given_or_built(c, a->fuzzer, "afl/fuzzers/ops_invariants_afl", c->fuzzer, sizeof(c->fuzzer));
		if (!find_in_path("afl-fuzz", c->afl_fuzz, sizeof(c->afl_fuzz)))
			return bad("afl-fuzz is not installed: apt-get install afl++ (AFL++ 4.04c)%s%s", "", "");
		if (access(c->fuzzer, X_OK))
			return bad("no AFL++ harness %s: build it with `cmake --preset afl && cmake --build --preset "
				   "afl` (or give --fuzzer BIN)%s",
				   c->fuzzer, "");
		given_or_built(c, a->mutator, "release/fuzzers/libptfuzz_afl_mutator.so", c->mutator,
			       sizeof(c->mutator));
		if (access(c->mutator, R_OK))
			return bad("no AFL++ custom mutator %s: build it with `cmake --build --preset release` (or "
				   "give --mutator SO)%s",
				   c->mutator, "");
	}
	snprintf(c->seeds, sizeof(c->seeds), "%s", a->seeds ? a->seeds : PTFUZZ_SOURCE_DIR "/corpus/fuzz/ops_invariants");
	snprintf(c->dict, sizeof(c->dict), "%s", a->dict ? a->dict : PTFUZZ_SOURCE_DIR "/fuzzers/ops.dict");
	if (access(c->dict, R_OK))
		return bad("%s: %s (give --dict FILE)", c->dict, strerror(errno));
	if (!existing && access(c->seeds, R_OK))
		return bad("%s: %s (give --seeds DIR)", c->seeds, strerror(errno));
	return 0;
}

/* DIR locked (*lock), cleaned, with its subdirectories, seeds and campaign.json */
static int campaign_prepare_dir(struct campaign *c, bool existing, int *lock)
{
	pid_t holder = 0;

	if (mkdir(c->dir, 0755) && errno != EEXIST)
		return bad("%s: %s", c->dir, strerror(errno));
	*lock = lock_dir(c->dir, &holder);
	if (*lock < 0) {
		char pid[32];
		snprintf(pid, sizeof(pid), "%ld", (long)holder);
		return bad("%s: a campaign is running there (pid %s)", c->dir, pid);
	}
	if (existing)
		reap_orphans(c->dir, &c->m);
	campaign_clean_temps(c->dir);
	if (mkdirs(c->dir, "findings") || mkdirs(c->dir, "logs") ||
	    mkdirs(c->dir, c->m.engine == ENGINE_AFL ? "sync" : "corpus") ||
	    (c->m.engine == ENGINE_LIBFUZZER && mkdirs(c->dir, "crashes")))
		return bad("%s: %s", c->dir, strerror(errno));
	if (copy_seeds(c))
		return bad("%s: cannot copy the seeds from %s", c->dir, c->seeds);
	if (campaign_meta_write(c->dir, &c->m))
		return bad("%s/campaign.json: %s", c->dir, strerror(errno));
	return 0;
}

/* plot_data so far, and the earlier runs' fuzzing time: the plot continues where they stopped */
static void plot_load(struct campaign *c)
{
	char path[CAMPAIGN_PATH];

	snprintf(path, sizeof(path), "%s/plot_data", c->dir);
	c->plot = read_file(path, &c->plot_len);
	if (!c->plot || !c->plot_len) {
		free(c->plot);
		c->plot = strdup("# unix_time, fuzzing_s, execs, execs_per_s, corpus, coverage, findings\n");
		c->plot_len = strlen(c->plot);
	}
	char *last = NULL;
	for (char *l = c->plot; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
		if (*l != '#')
			last = l;
	unsigned long long ut, el;
	if (last && sscanf(last, "%llu, %llu", &ut, &el) == 2)
		c->elapsed_before = el;
}

static void catch_stop_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static void engine_stats(struct campaign *c)
{
	if (c->m.engine == ENGINE_LIBFUZZER)
		libfuzzer_stats(c);
	else
		afl_stats(c);
}

/* fuzz until the time is up, the engines end, --until findings, or a stop; true if stopped by a signal */
static bool campaign_loop(struct campaign *c)
{
	uint64_t next_status = 0;

	for (;;) {
		if (stop_requested)
			return true;
		if (!engines_alive(c))
			return false;
		if (now_s() - c->run_start >= c->m.time_s + 5)
			return false;	/* the engines' own timers failed to stop them */
		engine_stats(c);
		triage_new(c, false);
		if (now_s() >= next_status) {
			next_status = now_s() + STATUS_EVERY;
			write_status(c, "running");
			plot_point(c);
			if (c->tty)
				status_line(c);
		}
		if (c->m.engine == ENGINE_AFL && now_s() - c->run_start >= c->m.time_s)
			return false;
		if (c->until && c->idx.n >= c->until)
			return false;
		for (int i = 0; i < POLL_MS / 100 && !stop_requested; i++)
			usleep(100000);
	}
}

/* an engine that ended by itself before the time, named with its log; true if any did */
static bool report_early_ends(const struct campaign *c)
{
	bool any = false;

	for (unsigned i = 0; i < c->npids; i++) {
		char name[48];
		if (!c->early[i])
			continue;
		any = true;
		if (c->m.engine == ENGINE_AFL)
			instance_name(c, i, name, sizeof(name));
		fprintf(stderr, "ptfuzz campaign: %s%s%s ended early with status %d (see %s/logs/%s%s.log)\n",
			c->m.engine == ENGINE_AFL ? "afl-fuzz " : "libFuzzer", c->m.engine == ENGINE_AFL ? name : "", "",
			c->early[i], c->dir, c->m.engine == ENGINE_AFL ? "afl-" : "libfuzzer",
			c->m.engine == ENGINE_AFL ? name : "");
	}
	return any;
}

/* one run on a prepared DIR: the engines, the triage as crashes arrive, the last triage, the summary */
static int campaign_run(struct campaign *c, bool as_json)
{
	catch_stop_signals();
	c->run_start = now_s();
	/* a finding the last run had not triaged yet */
	triage_new(c, false);
	if (start_engines(c)) {
		stop_engines(c);
		return bad("cannot start the engine: %s%s", strerror(errno), "");
	}
	write_status(c, "running");
	bool interrupted = campaign_loop(c);
	if (c->tty)
		fprintf(stderr, "\r\033[K");
	stop_engines(c);
	bool early = report_early_ends(c);
	engine_stats(c);
	triage_new(c, true);
	campaign_clean_temps(c->dir);
	plot_point(c);
	plot_svg(c);
	const char *state = interrupted ? "interrupted" : "finished";
	write_status(c, state);
	if (as_json)
		summary_json(c, state);
	else
		summary(c, stdout);
	cli_check_stdout();
	/* an engine failed: the run is not what was asked */
	return early ? EXIT_BAD : c->idx.n ? EXIT_VIOLATION : EXIT_CLEAN;
}

int cmd_campaign(int argc, char **argv)
{
	static struct campaign c;
	struct campaign_args a;
	bool existing;
	int lock, rc;

	memset(&a, 0, sizeof(a));
	rc = campaign_parse(argc, argv, &a);
	if (rc >= 0)
		return rc;
	if (a.status_dir)
		return campaign_status(a.status_dir, a.json);
	if (a.plot_dir && a.json)
		return cli_usage_error("campaign", "--plot draws DIR/plot.svg: no --json with it");
	if (a.plot_dir)
		return campaign_plot(a.plot_dir);
	if (!a.dir)
		return cli_usage_error("campaign", "--out DIR is required");
	if (a.engine && strcmp(a.engine, "afl") && strcmp(a.engine, "libfuzzer"))
		return cli_usage_error("campaign", "unknown engine '%s' (afl or libfuzzer)", a.engine);
	if (a.host && a.engine && strcmp(a.engine, "afl"))
		return cli_usage_error("campaign", "--host is for AFL++ campaigns that share a sync directory");
	c.dir = a.dir;
	c.until = a.until;
	c.quiet = a.quiet;
	if (campaign_setup_meta(&c, &a, &existing) || campaign_find_engine(&c, &a, existing) ||
	    campaign_prepare_dir(&c, existing, &lock))
		return EXIT_BAD;
	index_load(c.dir, &c.idx);
	plot_load(&c);
	c.tty = !c.quiet && isatty(STDERR_FILENO);
	rc = campaign_run(&c, a.json);
	close(lock);
	index_free(&c.idx);
	free(c.plot);
	xfree_all();
	return rc;
}
