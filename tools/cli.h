/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cli.h - what the pieces of the ptfuzz command share: exit statuses, usage
 * errors, output checks, the per-file replay driver, the violation report
 * and the JSON emitter.  Internal to tools/.
 */
#ifndef PTFUZZ_CLI_H
#define PTFUZZ_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "session.h"
#include "trace.h"

/* Exit statuses (DESIGN.md "Command line"); 2 dominates 1. */
enum {
	EXIT_CLEAN = 0,		/* no violation */
	EXIT_VIOLATION = 1,	/* violation(s) found */
	EXIT_BAD = 2,		/* bad input or usage */
};

static inline int exit_merge(int a, int b)
{
	return a > b ? a : b;
}

/* ---- ptfuzz.c: usage errors and output ---- */

/*! cli_usage_error() : one line "ptfuzz CMD: WHY (see ptfuzz CMD --help)" on stderr; returns EXIT_BAD. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*!
 * cli_getopt() : getopt_long() for subcommand cmd, with one-line usage
 * errors instead of getopt's own messages.
 * @return : the option, -1 at the end of the options, or '?' after a usage
 *           error was printed (the caller returns EXIT_BAD).
 */
int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts, const struct option *longopts);

/*!
 * cli_check_stdout() : flush stdout; on a write error exit(EXIT_BAD), silently
 * if the reader went away (EPIPE: `ptfuzz replay x | head -1`).
 */
void cli_check_stdout(void);

/*! cli_display_name() : the name a path is shown under ("-" is stdin). */
const char *cli_display_name(const char *path);

/* ---- fuzz_input.c: ops-level fuzz inputs (fuzzers/program.h) where traces go ---- */

/*! cli_is_fuzz_input() : path names a fuzz input (*.bin, crash-*, leak-*, timeout-*, oom-*, id:*). */
bool cli_is_fuzz_input(const char *path);
/*! cli_reader_open() : a reader over a trace, or over the program a fuzz input decodes to. */
struct pt_reader *cli_reader_open(const char *path, bool fuzz_input, struct pt_error *err);
void cli_reader_close(struct pt_reader *r);
/*! cli_write_fuzz_input() : encode the trace (or fuzz input) in as a fuzz input at out, atomically. */
int cli_write_fuzz_input(const char *in, bool in_fuzz, const char *out, unsigned *dropped, struct pt_error *err);

/* ---- the subcommands ---- */

int cmd_replay(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_import_casemate(int argc, char **argv);
int cmd_import_ftrace(int argc, char **argv);
void help_import_ftrace(FILE *f);
int cmd_variants(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_campaign(int argc, char **argv);
void help_campaign(FILE *f);
int cmd_triage(int argc, char **argv);
void help_triage(FILE *f);
void help_compare(FILE *f);
void help_variants(FILE *f);
int cmd_minimize(int argc, char **argv);
void help_minimize(FILE *f);

#define MAX_VARIANTS 8
/*! cli_variant_arg() : add --variant NAME to list (n so far); a usage error (2) if unknown, 0 ok. */
int cli_variant_arg(const char *cmd, const char **list, unsigned *n, const char *name);
void help_replay(FILE *f);
void help_stats(FILE *f);
void help_convert(FILE *f);
void help_import_casemate(FILE *f);

/* ---- cmd_replay.c: one file through a session ---- */

#define CTX_BEFORE 5u	/* trace events shown before the violating one */
#define ACTX_BEFORE 23u	/* arch events shown before the violating one (the interleaving) */
#define CTX_MAX (ACTX_BEFORE + 1)

/* The events around one violation, captured when it was found. */
struct vctx {
	unsigned n;
	uint64_t mark;			/* the index of the violating event (marked >) */
	const char *title;
	uint64_t index[CTX_MAX];
	unsigned cpu[CTX_MAX];
	char *line[CTX_MAX];		/* pt_event_format_text() */
};

struct replay_run {
	const char *path;		/* as given; "-" = stdin */
	const char *name;		/* as shown */
	bool context;			/* capture struct vctx per violation */
	bool progress;			/* progress on stderr (a terminal) */
	const char *record;		/* --record OUT: write the arch-level events run, or NULL */
	const char *const *variants;	/* --variant NAMEs (validated), NULL-terminated, or NULL */
	struct pt_writer *rec;
	bool rec_failed;
	struct pt_error rec_err;
	/* results */
	uint64_t events;		/* events fed to the session */
	bool failed;			/* open, header or read error: err says what */
	struct pt_error err;
	struct pt_session *s;		/* NULL when the file could not be opened */
	struct vctx *ctx;		/* [pt_session_nviolations()] when context */
	struct vctx *actx;		/* the arch-level interleaving, when the mm model produced events */
	unsigned nctx, ctx_cap;
};

/*!
 * replay_file() : replay run->path through a new session: every event, then
 * pt_session_finish() if the whole trace was read.  A read error leaves the
 * violations found before it in the session, and run->failed set.
 */
void replay_file(struct replay_run *run);
void replay_run_free(struct replay_run *run);
/*! replay_summary() : "NAME: N events, K violations (I4 x1), state 0x..." on stdout (run->s set). */
void replay_summary(const struct replay_run *run);
struct json;
/*! replay_json_head() : the "file", "events", "state" and "error" members of run's JSON object. */
void replay_json_head(struct json *j, const struct replay_run *run);

/* ---- json.c: a minimal streaming JSON emitter ---- */

struct json {
	FILE *f;
	unsigned depth;
	bool first;		/* the next value is the first of its container */
	bool after_key;		/* the next value follows "key": */
};

void json_init(struct json *j, FILE *f);
void json_object_begin(struct json *j);
void json_object_end(struct json *j);
void json_array_begin(struct json *j);
void json_array_end(struct json *j);
void json_key(struct json *j, const char *key);
void json_string(struct json *j, const char *s);	/* NULL => null */
void json_u64(struct json *j, uint64_t v);
void json_i64(struct json *j, int64_t v);
void json_hex(struct json *j, uint64_t v);		/* "0x..." */
void json_bool(struct json *j, bool v);
void json_null(struct json *j);
/*! json_end() : finish the document (newline). */
void json_end(struct json *j);

/* ---- report.c: how a violation reads ---- */

/*! report_text() : the readable report of v (ctx may be NULL). */
void report_text(FILE *f, const struct pt_violation *v, const struct vctx *ctx, const struct vctx *actx);
/*! report_json() : v as one JSON object. */
void report_json(struct json *j, const struct pt_violation *v, const struct vctx *ctx, const struct vctx *actx);

#endif
