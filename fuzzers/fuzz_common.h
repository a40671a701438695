/* SPDX-License-Identifier: GPL-2.0-only */
/* fuzz_common.h - helpers the trace fuzz targets share (header-only). */
#ifndef PTFUZZ_FUZZ_COMMON_H
#define PTFUZZ_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "trace.h"

#define FUZZ_NAME "fuzz-input"

/* A property failed: say which, then abort() so the fuzzer keeps the input. */
#define FUZZ_CHECK(cond, ...)                                                      \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "%s:%d: property failed: %s: ", __FILE__,  \
				__LINE__, #cond);                                  \
			fprintf(stderr, __VA_ARGS__);                              \
			fputc('\n', stderr);                                       \
			abort();                                                   \
		}                                                                  \
	} while (0)

static inline bool fuzz_digits(const char **p)
{
	const char *s = *p;
	while (**p >= '0' && **p <= '9')
		(*p)++;
	return *p > s;
}

/*
 * A reader error is one of the numbered codes and one line naming the
 * input and the place: "NAME: byte N (compressed|decompressed): ..." or
 * "NAME:LINE:COL: ...", saying what was expected.
 */
static inline void fuzz_check_error(const struct pt_error *err)
{
	const char *p = err->msg;
	size_t n = strlen(FUZZ_NAME);
	bool where = false;

	FUZZ_CHECK(err->code > PT_OK && err->code <= PT_ERR_REF, "code %d: %s", err->code, err->msg);
	FUZZ_CHECK(!strchr(err->msg, '\n'), "%s", err->msg);
	if (!strncmp(p, FUZZ_NAME, n)) {
		p += n;
		if (!strncmp(p, ": byte ", 7)) {
			p += 7;
			where = fuzz_digits(&p) &&
				(!strncmp(p, " (compressed): ", 15) || !strncmp(p, " (decompressed): ", 17));
		} else if (*p == ':') {
			p++;
			where = fuzz_digits(&p) && *p++ == ':' && fuzz_digits(&p) && !strncmp(p, ": ", 2);
		}
	}
	FUZZ_CHECK(where, "the message does not name the input and the place: %s", err->msg);
	FUZZ_CHECK(strstr(err->msg, "expected"), "the message does not say what was expected: %s",
		   err->msg);
}

/*
 * The input as the content of a zstd frame, or NULL if it is zstd already.
 * Each target also runs on this, so that mutations reach the records and
 * messages of the binary encoding directly instead of first breaking the
 * compressed bytes (or the frame checksum).  The buffer is reused.
 */
static inline const uint8_t *fuzz_as_zstd(const uint8_t *data, size_t size, size_t *out_size)
{
	static ZSTD_CCtx *cc;
	static uint8_t *buf;
	static size_t cap;

	if (size >= 4 && !memcmp(data, "\x28\xb5\x2f\xfd", 4))
		return NULL;
	if (!cc)
		cc = ZSTD_createCCtx();
	size_t need = ZSTD_compressBound(size);
	if (need > cap) {
		free(buf);
		buf = malloc(need);
		cap = need;
	}
	FUZZ_CHECK(cc && buf, "out of memory");
	size_t n = ZSTD_compressCCtx(cc, buf, cap, data, size, 1);
	FUZZ_CHECK(!ZSTD_isError(n), "%s", ZSTD_getErrorName(n));
	*out_size = n;
	return buf;
}

#endif
