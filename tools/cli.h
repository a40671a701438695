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

/*!
 * cli_refuse_overwrite() : the convention of every command that writes a file OUT: an
 * existing regular OUT is replaced only with -f (a FIFO, a device, - are written to as
 * they are).  @return : 0 go on, or EXIT_BAD after a usage error naming OUT.
 */
int cli_refuse_overwrite(const char *cmd, const char *out, bool force);

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

struct json;
/*
 * replay_fidelity.c: the model compared with a captured kernel's evidence (`kernel`
 * events after the ops they describe): one record per ops-level event, the
 * evidence attached to it, and the divergences found at the end of the trace.
 */
enum fid_what { FID_RESULT = 0, FID_ERRNO, FID_ADDRESS, FID_MOVE_PAGE_TABLES, FID_MOVED, FID_MOVE_HUGE_PMD,
		FID_SPLIT_HUGE_PMD, FID_WHAT_COUNT };

struct fid_op {
	struct pt_event ev;		/* the op (text NULL) */
	uint64_t index;			/* its trace event index */
	bool ran;			/* its model result is known (not queued for a scheduled thread) */
	int rc;				/* the model's errno, 0 = done */
	uint64_t addr;			/* mmap / mremap: the model's returned address */
	uint64_t pt_writes;		/* page-table stores the model made for it */
	uint32_t mcalls[PT_KEV_COUNT];
	uint64_t mpt_old, mpt_new, mpt_len, mpt_ret;
	/* the kernel's evidence */
	bool has_result;
	uint64_t kret;			/* ret= of `kernel result` (two's complement errno if negative) */
	uint32_t kcalls[PT_KEV_COUNT];
	uint64_t kmpt_old, kmpt_new, kmpt_len, kmpt_ret;
	bool kmpt_ret_seen;
};

struct fid_div {
	size_t op;			/* index into fidelity.ops */
	enum fid_what what;
	char text[320];			/* "the kernel returned 0x..., the model 0x..." */
};

struct fidelity {
	struct fid_op *ops;
	size_t nops, capops;
	uint64_t evidence;		/* `kernel` events */
	uint64_t unattached;		/* of which followed no op of their address space */
	uint64_t with_evidence;		/* ops with evidence attached */
	bool kind_seen[PT_KEV_COUNT];	/* the capture recorded this kind (its probe was on) */
	struct fid_div *div;
	size_t ndiv, capdiv;
	uint64_t count[FID_WHAT_COUNT];
	uint64_t ops_pt_writes;		/* page-table stores the model made for all the ops */
	uint64_t trace_pt_writes;	/* every page-table store the machine ran */
	bool judged;
};

/*! fid_op_done() : record ev (an ops-level event just run by s) and what the model did. */
void fid_op_done(struct fidelity *f, const struct pt_session *s, const struct pt_event *ev, uint64_t index,
		 uint64_t pt_writes);
/*! fid_evidence() : a `kernel` event: attach it to the last op of its address space. */
void fid_evidence(struct fidelity *f, const struct pt_event *ev);
/*! fid_judge() : compare every op with its evidence (end of trace); total_pt_writes: the machine's. */
void fid_judge(struct fidelity *f, uint64_t total_pt_writes);
/*! fid_populated_nothing() : the trace's ops ran, and no page-table entry was ever written. */
bool fid_populated_nothing(const struct fidelity *f);
const char *fid_what_name(enum fid_what w);
void fid_free(struct fidelity *f);
/*! cli_kernel_arg() : check --kernel NAME (a profile or "auto"); a usage error (2) if unknown, 0 ok. */
int cli_kernel_arg(const char *cmd, const char *name);
void fid_text(FILE *out, const char *name, const struct fidelity *f, bool list);
void fid_json(struct json *j, const struct fidelity *f);
/*! fid_ops_json() : the per-op results, as a JSON array. */
void fid_ops_json(struct json *j, const struct fidelity *f);

struct replay_run {
	const char *path;		/* as given; "-" = stdin */
	const char *name;		/* as shown */
	bool context;			/* capture struct vctx per violation */
	bool progress;			/* progress on stderr (a terminal) */
	const char *record;		/* --record OUT: write the arch-level events run, or NULL */
	const char *const *variants;	/* --variant NAMEs (validated), NULL-terminated, or NULL */
	const char *kernel;		/* --kernel PROFILE, "auto" (from the header), or NULL: the default model */
	bool fidelity;			/* compare the model with the trace's kernel evidence */
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
	unsigned profile;		/* the kernel profile the model ran as (mm.h) */
	char release[16];		/* the header's kernel MAJOR.MINOR, "" if none */
	char named_variant[64];		/* the trace's own `# variant: NAME` comment, "" if none */
	struct fidelity fid;		/* when fidelity */
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
/*! import_json_begin() : (cmd_import.c) open an importer's --json document on stdout with its
 * "input" and "output" members; the importer adds its counts and closes it. */
void import_json_begin(struct json *j, const char *in, const char *out);

/* ---- report.c: how a violation reads ---- */

/*! report_text() : the readable report of v (ctx may be NULL). */
void report_text(FILE *f, const struct pt_violation *v, const struct vctx *ctx, const struct vctx *actx);
/*! report_json() : v as one JSON object. */
void report_json(struct json *j, const struct pt_violation *v, const struct vctx *ctx, const struct vctx *actx);

#endif
