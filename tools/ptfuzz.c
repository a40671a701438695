/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ptfuzz.c - the `ptfuzz` command: subcommand dispatch, help, version, and
 * what every subcommand shares (one-line usage errors, checked output).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#ifndef PTFUZZ_VERSION
#define PTFUZZ_VERSION "0.0.0"
#endif

struct command {
	const char *name;
	const char *synopsis;
	const char *summary;
	int (*run)(int argc, char **argv);
	void (*help)(FILE *f);
};

static const struct command commands[] = {
	{ "replay", "replay [--json] [-q] [--variant V] [--record OUT] FILE...",
	  "replay traces, report invariant violations", cmd_replay, help_replay },
	{ "convert", "convert [-f] [--binary|--text] IN [-o] OUT", "text .ptt <-> binary .ptt.zst, losslessly",
	  cmd_convert, help_convert },
	{ "stats", "stats [--json] [-q] [--variant V] FILE...", "events by kind, TLBIs, barriers, table writes, model costs",
	  cmd_stats, help_stats },
	{ "minimize", "minimize IN -o OUT [-f] [-q] [--json] [--variant V] [--signature SIG | --same-invariant]",
	  "shrink a trace to a 1-minimal one that shows the same violation", cmd_minimize, help_minimize },
	{ "campaign", "campaign --engine afl|libfuzzer --jobs N --time T -o DIR [--variant V] [--json] [-q]",
	  "a fuzz campaign: resumable, triaged, deduplicated, minimized, plotted", cmd_campaign, help_campaign },
	{ "triage", "triage [--json] [-q] [--variant V] DIR", "re-triage a campaign's crashes: which findings still reproduce",
	  cmd_triage, help_triage },
	{ "compare", "compare [--json] --variant A [--variant B] TRACE...",
	  "model costs per op kind under two variants, and the deltas", cmd_compare, help_compare },
	{ "import-ftrace", "import-ftrace [-f] [--json] TRACE -o OUT", "ftrace text (tracefs, trace-cmd report) -> ops-level trace",
	  cmd_import_ftrace, help_import_ftrace },
	{ "variants", "variants [--json]", "the patched default, the bug variants and the baselines",
	  cmd_variants, help_variants },
#ifdef PTFUZZ_HAVE_CASEMATE
	{ "import-casemate", "import-casemate [-f] [--json] LOG -o OUT", "a Casemate trace log -> ptfuzz trace",
	  cmd_import_casemate, help_import_casemate },
#endif
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void help_main(FILE *f)
{
	fputs("usage: ptfuzz [--help | --version] COMMAND [ARGS...]\n"
	      "\n"
	      "Replay arm64 page-table operation traces (what Linux mm does to page\n"
	      "tables, TLBs and barriers) against a model of the machine, and report the\n"
	      "invariants they break: stale TLB and walk-cache entries, break-before-make,\n"
	      "missed barriers, partial unmaps, misprogrammed contiguous ranges.\n"
	      "\n"
	      "commands:\n",
	      f);
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strlen(commands[i].synopsis) > 36)
			fprintf(f, "  %s\n  %-36s %s\n", commands[i].synopsis, "", commands[i].summary);
		else
			fprintf(f, "  %-36s %s\n", commands[i].synopsis, commands[i].summary);
	fprintf(f, "  %-36s %s\n", "help [COMMAND]", "this help, or a command's");
	fputs("\n"
	      "`ptfuzz COMMAND --help` tells a command's options.  Traces are text (.ptt,\n"
	      "one event per line) or binary (.ptt.zst); - is standard input.\n"
	      "\n"
	      "options:\n"
	      "  -h, --help      this help\n"
	      "  -V, --version   the version\n"
	      "\n"
	      "exit status: 0 no violation, 1 violations found, 2 bad input or usage\n"
	      "(2 wins over 1).\n",
	      f);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "ptfuzz%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see ptfuzz%s%s --help)\n", cmd ? " " : "", cmd ? cmd : "");
	return EXIT_BAD;
}

int cli_refuse_overwrite(const char *cmd, const char *out, bool force)
{
	struct stat st;

	if (!force && strcmp(out, "-") && !stat(out, &st) && S_ISREG(st.st_mode))
		return cli_usage_error(cmd, "%s exists; -f replaces it", out);
	return 0;
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts, const struct option *longopts)
{
	char spec[32];
	int c;

	/* leading ':': a missing value is reported as ':' rather than '?' */
	snprintf(spec, sizeof(spec), ":%s", shortopts);
	opterr = 0;
	c = getopt_long(argc, argv, spec, longopts, NULL);
	if (c == '?') {
		const char *arg = argv[optind - 1];

		/* getopt_long() sets optopt to a known long option's value */
		if (!strncmp(arg, "--", 2) && optopt)
			cli_usage_error(cmd, "option '%.*s' takes no value", (int)strcspn(arg, "="), arg);
		else if (!strncmp(arg, "--", 2) || !optopt)
			cli_usage_error(cmd, "unknown option '%s'", arg);
		else
			cli_usage_error(cmd, "unknown option '-%c'", optopt);
		return '?';
	}
	if (c == ':') {
		cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
		return '?';
	}
	return c;
}

/* stdout is a pipe or socket nobody reads any more */
static bool stdout_widowed(void)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}

void cli_check_stdout(void)
{
	errno = 0;
	if (!fflush(stdout) && !ferror(stdout))
		return;
	/* the errno of an earlier failed write may be gone: ask the pipe */
	if (errno != EPIPE && !stdout_widowed())
		fprintf(stderr, "ptfuzz: cannot write to standard output: %s\n",
			errno ? strerror(errno) : "write error");
	/* stdout is broken: do not try to flush it again on the way out */
	_exit(EXIT_BAD);
}

const char *cli_display_name(const char *path)
{
	return strcmp(path, "-") ? path : "<stdin>";
}

static const struct command *command_find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static int cmd_help(int argc, char **argv)
{
	const struct command *cmd;

	if (argc < 2) {
		help_main(stdout);
		return EXIT_CLEAN;
	}
	if (argc > 2)
		return cli_usage_error(NULL, "help takes one COMMAND, got %d", argc - 1);
	cmd = command_find(argv[1]);
	if (!cmd)
		return cli_usage_error(NULL, "unknown command '%s'", argv[1]);
	cmd->help(stdout);
	return EXIT_CLEAN;
}

static int run(int argc, char **argv)
{
	const struct command *cmd;
	const char *arg = argc > 1 ? argv[1] : NULL;

	if (!arg)
		return cli_usage_error(NULL, "no command given");
	if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
		help_main(stdout);
		return EXIT_CLEAN;
	}
	if (!strcmp(arg, "-V") || !strcmp(arg, "--version")) {
		printf("ptfuzz %s\n", PTFUZZ_VERSION);
		return EXIT_CLEAN;
	}
	if (arg[0] == '-')
		return cli_usage_error(NULL, "unknown option '%s'", arg);
	if (!strcmp(arg, "help"))
		return cmd_help(argc - 1, argv + 1);
	cmd = command_find(arg);
	if (!cmd)
		return cli_usage_error(NULL, "unknown command '%s'", arg);
	return cmd->run(argc - 1, argv + 1);
}

/* An interrupted convert or replay --record leaves no OUT.tmp.XXXXXX behind; then the signal's
 * own fate (its default action re-raised), so the caller sees how the process ended. */
static void on_fatal_signal(int sig)
{
	pt_writer_unlink_temps();
	signal(sig, SIG_DFL);
	raise(sig);
}

int main(int argc, char **argv)
{
	static const int fatal[] = { SIGINT, SIGTERM, SIGHUP };
	int status;

	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
		struct sigaction sa = { .sa_handler = on_fatal_signal }, old;
		if (!sigaction(fatal[i], NULL, &old) && old.sa_handler == SIG_IGN)
			continue;	/* nohup, a background job: leave it ignored */
		sigemptyset(&sa.sa_mask);
		for (size_t k = 0; k < sizeof(fatal) / sizeof(fatal[0]); k++)
			sigaddset(&sa.sa_mask, fatal[k]);	/* one cleanup at a time */
		sigaction(fatal[i], &sa, NULL);
	}
	/* a closed pipe is an EPIPE write error, handled in cli_check_stdout() */
	signal(SIGPIPE, SIG_IGN);
	status = run(argc, argv);
	cli_check_stdout();
	return status;
}
