/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_input.c - ops-level fuzz inputs (fuzzers/program.h) where the CLI
 * takes traces: `ptfuzz replay crash-...` and `ptfuzz convert crash.bin
 * crash.ptt` decode a crash file into the very program the harness ran;
 * `ptfuzz convert trace.ptt seed.bin` encodes a trace into a fuzz input.
 *
 * A file is taken for a fuzz input by its name: `*.bin`, or the names the
 * engines give their findings (libFuzzer's crash-*, leak-*, timeout-*,
 * oom-*, slow-unit-*; AFL++'s id:*), or with --input.  The decoder's options
 * come from the same environment as the harness's (PTFUZZ_CONTRACTS,
 * PTFUZZ_MAX_OPS), so the conversion sees what the fuzzer saw.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "program.h"

#define MAX_FUZZ_INPUT (16u << 20)

bool cli_is_fuzz_input(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	/* libFuzzer's names come after its -artifact_prefix; AFL++'s queue and crash names start with id: */
	static const char *const mark[] = { "crash-", "leak-", "timeout-", "oom-", "slow-unit-" };
	for (unsigned i = 0; i < sizeof(mark) / sizeof(mark[0]); i++)
		if (strstr(base, mark[i]))
			return true;
	if (!strncmp(base, "id:", 3))
		return true;
	size_t n = strlen(base);
	return n > 4 && !strcmp(base + n - 4, ".bin");
}

/* The decoder options of the harness's environment; -1 with err set if they are malformed. */
static int fuzz_opts(struct pt_program_opts *o, struct pt_error *err)
{
	char why[160];

	if (pt_program_opts_from_env(o, why, sizeof(why)))
		return pt_error_set(err, PT_ERR_USAGE, "%s", why);
	return 0;
}

static uint8_t *read_all(const char *path, size_t *size, struct pt_error *err)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f) {
		pt_error_set(err, PT_ERR_IO, "%s: %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 4096, n = 0;
	uint8_t *buf = malloc(cap);
	while (buf) {
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
		if (n == cap) {
			if (cap >= MAX_FUZZ_INPUT) {
				pt_error_set(err, PT_ERR_LENGTH, "%s: byte %zu: expected a fuzz input of at most %u bytes",
					     path, n, MAX_FUZZ_INPUT);
				free(buf);
				buf = NULL;
				break;
			}
			uint8_t *nb = realloc(buf, cap *= 2);
			if (!nb)
				free(buf);
			buf = nb;
		}
	}
	bool bad = ferror(f);
	if (f != stdin)
		fclose(f);
	if (buf && bad) {
		pt_error_set(err, PT_ERR_IO, "%s: byte %zu: read error, expected the rest of the input", path, n);
		free(buf);
		return NULL;
	}
	if (!buf && err->code == PT_OK)
		pt_error_set(err, PT_ERR_IO, "%s: out of memory", path);
	*size = n;
	return buf;
}

/* Readers over decoded fuzz inputs own their text; remembered here to free it at close. */
static struct owned { struct pt_reader *r; void *text; } owned[16];

struct pt_reader *cli_reader_open(const char *path, bool fuzz_input, struct pt_error *err)
{
	if (!fuzz_input && !cli_is_fuzz_input(path))
		return pt_reader_open(path, err);
	struct pt_program_opts o;
	if (fuzz_opts(&o, err))
		return NULL;
	size_t size;
	uint8_t *data = read_all(path, &size, err);
	if (!data)
		return NULL;
	struct pt_program p;
	pt_program_init(&p);
	pt_program_decode(data, size, &o, &p);
	free(data);

	struct pt_writer *w = pt_writer_open_mem(PT_ENC_TEXT, &p.h, err);
	void *text = NULL;
	size_t tsize = 0;
	int rc = w ? 0 : -1;
	char note[PT_MAX_COMMENT];
	snprintf(note, sizeof(note), " fuzz input %s: %zu bytes, %u events, %u records dropped by the decoder%s",
		 cli_display_name(path), size, p.n, p.dropped, o.allow_contract ? " (PTFUZZ_CONTRACTS=allow)" : "");
	struct pt_event c = { .kind = PT_EV_COMMENT, .text = note };
	if (!rc)
		rc = pt_writer_put(w, &c, err);
	for (unsigned i = 0; !rc && i < p.n; i++)
		rc = pt_writer_put(w, &p.ev[i], err);
	pt_program_free(&p);
	if (w && rc)
		pt_writer_abort(w);
	if (rc || pt_writer_close_mem(w, &text, &tsize, err))
		return NULL;
	struct pt_reader *r = pt_reader_open_mem(text, tsize, path, err);
	for (unsigned i = 0; r && i < sizeof(owned) / sizeof(owned[0]); i++)
		if (!owned[i].r) {
			owned[i] = (struct owned){ r, text };
			return r;
		}
	if (r)
		pt_reader_close(r);
	free(text);
	if (r)
		pt_error_set(err, PT_ERR_USAGE, "%s: too many fuzz inputs open at once", path);
	return NULL;
}

void cli_reader_close(struct pt_reader *r)
{
	if (!r)
		return;
	pt_reader_close(r);
	for (unsigned i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
		if (owned[i].r == r) {
			free(owned[i].text);
			owned[i] = (struct owned){ NULL, NULL };
		}
}

/* Write data to path atomically: a temporary beside it, renamed over it once complete. */
static int write_atomic(const char *path, const uint8_t *data, size_t size, struct pt_error *err)
{
	if (!strcmp(path, "-")) {
		if (fwrite(data, 1, size, stdout) != size || fflush(stdout))
			return pt_error_set(err, PT_ERR_IO, "-: write error: %s", strerror(errno));
		return 0;
	}
	char *dup = strdup(path), *tmp = NULL;
	if (!dup || asprintf(&tmp, "%s/.%s.tmp.XXXXXX", dirname(dup), strrchr(path, '/') ? strrchr(path, '/') + 1
											   : path) < 0) {
		free(dup);
		return pt_error_set(err, PT_ERR_IO, "%s: out of memory", path);
	}
	free(dup);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		pt_error_set(err, PT_ERR_IO, "%s: cannot create a temporary beside it: %s", path, strerror(errno));
		free(tmp);
		return -1;
	}
	size_t done = 0;
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	mode_t um = umask(0);
	umask(um);
	if (fchmod(fd, 0666 & ~um))
		done = 0;
	if (done != size || fsync(fd) || close(fd) || rename(tmp, path)) {
		pt_error_set(err, PT_ERR_IO, "%s: write error: %s", path, strerror(errno));
		unlink(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
}

int cli_write_fuzz_input(const char *in, bool in_fuzz, const char *out, unsigned *dropped, struct pt_error *err)
{
	struct pt_reader *r = cli_reader_open(in, in_fuzz, err);
	if (!r)
		return -1;
	struct pt_header h = *pt_reader_header(r);
	struct pt_event ev, *evs = NULL;
	unsigned n = 0, cap = 0;
	int rc;
	while ((rc = pt_reader_next(r, &ev, err)) > 0) {
		if (ev.kind == PT_EV_COMMENT)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			struct pt_event *ne = realloc(evs, cap * sizeof(*ne));
			if (!ne)
				abort();
			evs = ne;
		}
		evs[n++] = ev;
	}
	cli_reader_close(r);
	if (rc < 0) {
		free(evs);
		return -1;
	}
	char why[256];
	size_t size;
	uint8_t *data = pt_program_encode(&h, evs, n, &size, dropped, why, sizeof(why));
	free(evs);
	if (!data)
		return pt_error_set(err, PT_ERR_FIELD, "%s: %s", cli_display_name(in), why);
	rc = write_atomic(out, data, size, err);
	free(data);
	return rc;
}
