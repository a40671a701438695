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
	fputs("usage: ptfuzz convert [-f] [--binary | --text] IN OUT\n"
	      "\n"
	      "Convert a trace between its text (.ptt) and binary (.ptt.zst) encodings,\n"
	      "losslessly (comments included: a full-line `#` comment is a comment event,\n"
	      "one after an event on its line is kept with the event).  The encoding of\n"
	      "IN is detected from its\n"
	      "first bytes; that of OUT follows its name: binary if it ends in .zst, text\n"
	      "otherwise.  - as IN reads standard input; - as OUT writes to standard\n"
	      "output (text, unless --binary).\n"
	      "\n"
	      "An existing OUT is replaced only with -f, and keeps its mode; a symlink\n"
	      "OUT is written through (its target is replaced, the link stays); a FIFO\n"
	      "or device is written to as it is.  OUT is written beside its final name\n"
	      "and renamed over it only once the whole input was read: on an error or\n"
	      "an interruption (SIGINT, SIGTERM, SIGHUP) an existing OUT is left as it\n"
	      "was and nothing is left behind.\n"
	      "\n"
	      "options:\n"
	      "  -f, --force   replace an existing OUT\n"
	      "  --binary      write the binary encoding whatever OUT's name\n"
	      "  --text        write the text encoding whatever OUT's name\n"
	      "  -h, --help    this help\n"
	      "\n"
	      "exit status: 0 converted, 2 bad input or usage.\n",
	      f);
}

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "binary", no_argument, NULL, 'b' },
		{ "text", no_argument, NULL, 't' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int forced = -1, c, rc;
	bool force = false;
	struct pt_error err = { PT_OK, "" };
	struct pt_reader *r;
	struct pt_writer *w;
	struct pt_event ev;

	while ((c = cli_getopt("convert", argc, argv, "fh", longopts)) != -1) {
		switch (c) {
		case 'f': force = true; break;
		case 'b':
		case 't':
			if (forced != -1 && forced != (c == 'b' ? PT_ENC_BINARY : PT_ENC_TEXT))
				return cli_usage_error("convert", "--binary and --text exclude each other");
			forced = c == 'b' ? PT_ENC_BINARY : PT_ENC_TEXT;
			break;
		case 'h': help_convert(stdout); return EXIT_CLEAN;
		default: return EXIT_BAD;
		}
	}
	if (argc - optind != 2)
		return cli_usage_error("convert", "expected IN and OUT, got %d argument%s", argc - optind,
				       argc - optind == 1 ? "" : "s");
	const char *in = argv[optind], *out = argv[optind + 1];
	bool to_stdout = !strcmp(out, "-");
	enum pt_encoding enc = forced != -1 ? (enum pt_encoding)forced
			       : to_stdout   ? PT_ENC_TEXT
					     : pt_encoding_for_path(out);

	if (to_stdout && enc == PT_ENC_BINARY && isatty(STDOUT_FILENO))
		return cli_usage_error("convert", "refusing to write binary to a terminal");
	struct stat st;
	if (!to_stdout && !force && !stat(out, &st) && S_ISREG(st.st_mode))
		return cli_usage_error("convert", "%s exists; -f replaces it", out);

	r = pt_reader_open(in, &err);
	if (!r)
		goto fail;
	w = pt_writer_open(out, enc, pt_reader_header(r), &err);
	if (!w) {
		pt_reader_close(r);
		goto fail;
	}
	while ((rc = pt_reader_next(r, &ev, &err)) > 0) {
		if (pt_writer_put(w, &ev, &err)) {
			rc = -1;
			break;
		}
	}
	pt_reader_close(r);
	if (rc < 0) {
		pt_writer_abort(w);
		goto fail;
	}
	errno = 0;
	if (pt_writer_close(w, &err))
		goto fail;
	return EXIT_CLEAN;

fail:
	/* a reader that went away (`... - | head`) is not worth a message */
	if (!(to_stdout && err.code == PT_ERR_IO && errno == EPIPE))
		fprintf(stderr, "%s\n", err.msg);
	return EXIT_BAD;
}
