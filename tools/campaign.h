/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * campaign.h - what `ptfuzz campaign` and `ptfuzz triage` share: the campaign
 * directory (campaign.json, findings/, the findings index), atomic files, and
 * the triage of one crash file.  Internal to tools/.
 *
 * DIR/campaign.json      engine, variant, jobs, time, start, version: marks DIR
 * DIR/seeds/             the seeds the engines start from (copied at creation)
 * DIR/corpus/            libFuzzer's shared corpus     DIR/crashes/  its artifacts
 * DIR/sync/              AFL++'s sync directory (main, s1 .. s(N-1))
 * DIR/findings/index.json  one entry per signature (first seen, crashes), and
 *                        every crash triaged (content hash -> signature)
 * DIR/findings/SAFE/     crash.bin, repro.ptt, report.txt, report.json
 * DIR/status.json, DIR/plot_data, DIR/plot.svg, DIR/logs/
 *
 * Every file is written under a temporary name starting with ".tmp-" and
 * renamed into place; a finding directory is built as findings/.tmp-SAFE-PID
 * and renamed whole.  campaign_clean_temps() removes what a kill left.
 */
#ifndef PTFUZZ_CAMPAIGN_H
#define PTFUZZ_CAMPAIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CAMPAIGN_SIG 128		/* a signature (pt_violation.signature is shorter) */
#define CAMPAIGN_PATH 4096

/*
 * campaign_path() : snprintf for a path under a campaign directory.  A path that
 * does not fit CAMPAIGN_PATH would name another file; it is a usage error
 * (one line naming the path, exit 2), never a truncated name.
 */
__attribute__((format(printf, 3, 4))) void campaign_path(char *buf, size_t size, const char *fmt, ...);

enum campaign_engine { ENGINE_LIBFUZZER, ENGINE_AFL };

struct campaign_meta {
	enum campaign_engine engine;
	char variant[64];		/* "" = the default model */
	char host[32];			/* AFL++ on several hosts: this one's instance names (HOST-sJ); "" = main, sJ */
	bool contracts;			/* PTFUZZ_CONTRACTS=allow */
	unsigned jobs;
	uint64_t time_s;		/* of each run */
	uint64_t start;			/* unix time of the first run */
	char version[32];
};

struct finding {
	char sig[CAMPAIGN_SIG];
	char dir[CAMPAIGN_SIG];		/* name under DIR/findings */
	unsigned inv;			/* 1..12; 0 for an engine crash */
	uint64_t first_seen;		/* unix time */
	uint64_t count;			/* crashes with this signature */
	bool minimized;
	unsigned ops;			/* events of repro.ptt */
};

struct crash_seen {
	uint64_t hash;
	char sig[CAMPAIGN_SIG];		/* "" when it showed no finding */
};

struct findings_index {
	struct finding *f;
	unsigned n, cap;
	struct crash_seen *c;
	unsigned nc, ccap;
	uint64_t unreproduced;		/* crashes that replay to no finding */
};

/* The verdict of one crash file. */
enum triage_kind {
	TRIAGE_FINDING,			/* sig: a violation of the variant, the harness's first */
	TRIAGE_NONE,			/* replays clean (or only what the default shows too) */
	TRIAGE_ENGINE_CRASH,		/* the replay itself died: sig engine-crash/SIGNAME */
	TRIAGE_TIMEOUT,			/* the replay took too long */
	TRIAGE_UNREADABLE,
};

struct triage_result {
	enum triage_kind kind;
	char sig[CAMPAIGN_SIG];
	unsigned inv;
	unsigned ops;			/* events the input decodes to */
};

/*! campaign_engine_name() : "afl" or "libfuzzer". */
const char *campaign_engine_name(enum campaign_engine e);
/*! campaign_meta_read() : DIR/campaign.json; -1 if DIR has none (or it is malformed: why says so). */
int campaign_meta_read(const char *dir, struct campaign_meta *m, char *why, size_t why_size);
/*! campaign_meta_write() : DIR/campaign.json, atomically; -1 with errno. */
int campaign_meta_write(const char *dir, const struct campaign_meta *m);

/*! campaign_json_field() : the value of "key": in the one-member-per-line JSON written here; false if absent. */
bool campaign_json_field(const char *s, const char *key, char *out, size_t size);

/*! campaign_json_text() : s as a JSON string ("...", quotes, backslashes and control bytes escaped). */
void campaign_json_text(FILE *f, const char *s);

/*! write_atomic() : data[0..len) at path through a ".tmp-" name and rename(); -1 with errno. */
int write_atomic(const char *path, const void *data, size_t len);
/*! read_file() : the malloc'd, NUL-terminated content of path (size in *len); NULL with errno. */
char *read_file(const char *path, size_t *len);
/*! campaign_clean_temps() : remove the ".tmp-*" files and directories a killed run left in DIR. */
void campaign_clean_temps(const char *dir);
/*! sig_to_dirname() : a signature as a file name: [A-Za-z0-9._-], '/' -> '-'. */
void sig_to_dirname(const char *sig, char *out, size_t size);
/*! content_hash() : FNV-1a 64 of data (crash identity across engine renames). */
uint64_t content_hash(const void *data, size_t len);

/*! index_load() : DIR/findings/index.json into idx (empty if none); findings dirs it misses are added. */
void index_load(const char *dir, struct findings_index *idx);
/*! index_save() : idx as DIR/findings/index.json, atomically; -1 with errno. */
int index_save(const char *dir, const struct findings_index *idx);
void index_free(struct findings_index *idx);
struct finding *index_find(struct findings_index *idx, const char *sig);
const struct crash_seen *index_crash(const struct findings_index *idx, uint64_t hash);
void index_add_crash(struct findings_index *idx, uint64_t hash, const char *sig);
struct finding *index_add_finding(struct findings_index *idx, const char *sig, unsigned inv, uint64_t when);

/*!
 * triage_crash() : decode the fuzz input data[0..len) as the harness does and
 * replay it under m's variant (and the default, differentially), in a child
 * process so that an engine crash or hang cannot take the caller down.
 */
void triage_crash(const struct campaign_meta *m, const uint8_t *data, size_t len, unsigned timeout_s,
		  struct triage_result *r);

/*!
 * finding_create() : DIR/findings/SAFE/ for a new signature: crash.bin, repro.ptt
 * (`ptfuzz minimize` keeping the signature; the converted trace if that fails),
 * report.txt and report.json, built under a temporary name and renamed into
 * place.  self is the ptfuzz executable.  0, or -1 with a one-line reason in why.
 */
int finding_create(const char *self, const char *dir, const struct campaign_meta *m, struct finding *f,
		   const uint8_t *data, size_t len, char *why, size_t why_size);

/*! finding_summary() : the one-line summary of a finding ("FUNCTION: what, without the details in parentheses"). */
void finding_summary(const char *sig, const char *what, char *out, size_t size);

/*!
 * run_command() : run argv in cwd (NULL: here) with stdout to out_path (relative to cwd; NULL:
 * /dev/null) and env added; its exit status, or -1 on a timeout or a signal.
 */
int run_command(const char *cwd, char *const argv[], const char *out_path, const char *const env[], unsigned timeout_s);

/*! crash_list() : the crash files the engine left in DIR (malloc'd paths, *n of them). */
char **crash_list(const char *dir, const struct campaign_meta *m, unsigned *n);
void crash_list_free(char **list, unsigned n);

#endif
