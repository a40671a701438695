/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cmd_convert.c - `ptfuzz convert`: text .ptt <-> binary .ptt.zst, streaming,
 * lossless.  The writer commits OUT only when the whole input was read, so a
 * bad input never leaves a half-written file behind (nor clobbers OUT).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

void help_convert(FILE *f)
{
	fputs("usage: ptfuzz convert [-f] [--binary | --text] [--input] IN [-o] OUT\n"
	      "\n"
	      "Convert a trace between its text (.ptt) and binary (.ptt.zst) encodings,\n"
	      "losslessly (comments included: a full-line `#` comment is a comment event,\n"
	      "one after an event on its line is kept with the event).  The encoding of\n"
	      "IN is detected from its\n"
	      "first bytes; that of OUT follows its name: binary if it ends in .zst, text\n"
	      "otherwise.  - as IN reads standard input; - as OUT writes to standard\n"
	      "output (text, unless --binary).\n"
	      "\n"
	      "Fuzz inputs of the ops_invariants harness convert both ways: an IN named\n"
	      "*.bin, crash-*, leak-*, timeout-*, oom-*, slow-unit-* or id:* (or any IN\n"
	      "with --input) is decoded into the program the harness ran, as a trace;\n"
	      "an OUT named *.bin is written as a fuzz input that decodes to IN's events\n"
	      "(ops-level events, threads, sched, migrate, irq and access only; what\n"
	      "the fuzzer's grammar would not emit is dropped and counted on stderr).\n"
	      "The decoder follows PTFUZZ_CONTRACTS and PTFUZZ_MAX_OPS as the harness does.\n"
	      "\n"
	      "An existing OUT is replaced only with -f, and keeps its mode; a symlink\n"
	      "OUT is written through (its target is replaced, the link stays); a FIFO\n"
	      "or device is written to as it is.  OUT is written beside its final name\n"
	      "and renamed over it only once the whole input was read: on an error or\n"
	      "an interruption (SIGINT, SIGTERM, SIGHUP) an existing OUT is left as it\n"
	      "was and nothing is left behind.\n"
	      "\n"
	      "options:\n"
	      "  -o, --output OUT  the trace to write (or OUT after IN)\n"
	      "  -f, --force   replace an existing OUT\n"
	      "  --binary      write the binary encoding whatever OUT's name\n"
	      "  --text        write the text encoding whatever OUT's name\n"
	      "  --input       IN is a fuzz input whatever its name\n"
	      "  -h, --help    this help\n"
	      "\n"
	      "exit status: 0 converted, 2 bad input or usage.\n",
	      f);
}

/* IN's events into OUT in enc, committed only if all of IN was read; -1 with err set if not. */
static int convert_stream(const char *in, bool in_fuzz, const char *out, enum pt_encoding enc,
			  struct pt_error *err)
{
	struct pt_reader *r;
	struct pt_writer *w;
	struct pt_event ev;
	int rc;

	r = cli_reader_open(in, in_fuzz, err);
	if (!r)
		return -1;
	w = pt_writer_open(out, enc, pt_reader_header(r), err);
	if (!w) {
		cli_reader_close(r);
		return -1;
	}
	while ((rc = pt_reader_next(r, &ev, err)) > 0) {
		if (pt_writer_put(w, &ev, err)) {
			rc = -1;
			break;
		}
	}
	cli_reader_close(r);
	if (rc < 0) {
		pt_writer_abort(w);
		return -1;
	}
	errno = 0;
	return pt_writer_close(w, err) ? -1 : 0;
}

/* a trace (or fuzz input) in as the fuzz input out; the events the decoder drops are counted on stderr */
static int to_fuzz_input(const char *in, bool in_fuzz, const char *out, struct pt_error *err)
{
	unsigned dropped = 0;

	if (cli_write_fuzz_input(in, in_fuzz, out, &dropped, err))
		return -1;
	if (dropped)
		fprintf(stderr, "ptfuzz convert: %s: %u event%s outside the fuzz grammar (contracts, bounds) "
			"dropped by the decoder\n", cli_display_name(in), dropped, dropped == 1 ? "" : "s");
	return 0;
}

struct convert_opts {
	int forced;			/* --binary / --text: the encoding, -1 = OUT's name says */
	bool in_fuzz, force;
	const char *in, *out;
};

/* @return : -1 to go on, or the exit status (help, a usage error) */
static int convert_parse(int argc, char **argv, struct convert_opts *o)
{
	static const struct option longopts[] = {
		{ "binary", no_argument, NULL, 'b' },
		{ "text", no_argument, NULL, 't' },
		{ "input", no_argument, NULL, 'i' },
		{ "force", no_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->forced = -1;
	while ((c = cli_getopt("convert", argc, argv, "fo:h", longopts)) != -1) {
		switch (c) {
		case 'f': o->force = true; break;
		case 'o': o->out = optarg; break;
		case 'b':
		case 't':
			if (o->forced != -1 && o->forced != (c == 'b' ? PT_ENC_BINARY : PT_ENC_TEXT))
				return cli_usage_error("convert", "--binary and --text exclude each other");
			o->forced = c == 'b' ? PT_ENC_BINARY : PT_ENC_TEXT;
			break;
		case 'i': o->in_fuzz = true; break;
		case 'h': help_convert(stdout); return EXIT_CLEAN;
		default: return EXIT_BAD;
		}
	}
	if (o->out && argc - optind != 1)
		return cli_usage_error("convert", "expected IN and -o OUT, got %d argument%s", argc - optind,
				       argc - optind == 1 ? "" : "s");
	if (!o->out && argc - optind != 2)
		return cli_usage_error("convert", "expected IN and OUT, got %d argument%s", argc - optind,
				       argc - optind == 1 ? "" : "s");
	o->in = argv[optind];
	if (!o->out)
		o->out = argv[optind + 1];
	return -1;
}

int cmd_convert(int argc, char **argv)
{
	struct convert_opts o = { .in = NULL };
	struct pt_error err = { PT_OK, "" };
	int rc = convert_parse(argc, argv, &o);

	if (rc >= 0)
		return rc;
	const char *in = o.in, *out = o.out;
	int forced = o.forced;
	bool in_fuzz = o.in_fuzz;
	bool to_stdout = !strcmp(out, "-");
	enum pt_encoding enc = forced != -1 ? (enum pt_encoding)forced
			       : to_stdout   ? PT_ENC_TEXT
					     : pt_encoding_for_path(out);

	if (to_stdout && enc == PT_ENC_BINARY && isatty(STDOUT_FILENO))
		return cli_usage_error("convert", "refusing to write binary to a terminal");
	if (cli_refuse_overwrite("convert", out, o.force))
		return EXIT_BAD;

	if (forced == -1 && !to_stdout && cli_is_fuzz_input(out))
		rc = to_fuzz_input(in, in_fuzz, out, &err);
	else
		rc = convert_stream(in, in_fuzz, out, enc, &err);
	if (!rc)
		return EXIT_CLEAN;
	/* a reader that went away (`... - | head`) is not worth a message */
	if (!(to_stdout && err.code == PT_ERR_IO && errno == EPIPE))
		fprintf(stderr, "%s\n", err.msg);
	return EXIT_BAD;
}
