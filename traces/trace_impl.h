/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * trace_impl.h - what the reader, the writer and the two encodings share
 * inside traces/.  Not installed, not included outside traces/.
 */
#ifndef PTFUZZ_TRACE_IMPL_H
#define PTFUZZ_TRACE_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "trace.h"

/* Format one error into err with a "FILE: byte N (decompressed|compressed): "
 * or "FILE:LINE:COL: " prefix; both return -1. */
int pt_err_at_byte(struct pt_error *err, enum pt_err code, const char *file, uint64_t off,
		   bool compressed, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
int pt_err_at_line(struct pt_error *err, enum pt_err code, const char *file, uint64_t line,
		   uint64_t col, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* ---- the byte source a reader pulls from: a FILE or a memory buffer ---- */

struct pt_src {
	FILE *f;		/* NULL for memory */
	bool own;		/* fclose f on close */
	const uint8_t *mem;
	size_t mem_size, mem_pos;
	uint8_t pushback[4];	/* bytes peeked for encoding detection */
	size_t pb_len, pb_pos;
	bool eof;
	int err_no;		/* errno of a failed read, 0 if none */
};

/*! pt_src_read() : up to n bytes into buf; 0 at end of input or on a read error (err_no). */
size_t pt_src_read(struct pt_src *s, void *buf, size_t n);

/*! pt_src_end() : nothing more to read (the peeked bytes included). */
static inline bool pt_src_end(const struct pt_src *s)
{
	return s->eof && s->pb_pos == s->pb_len;
}

/* ---- strings: header strings and comment text ---- */

/*! pt_text_ok() : s[0..len) is valid UTF-8 without control characters other than tab. */
bool pt_text_ok(const char *s, size_t len);

/*!
 * pt_header_check() : the header's values are ones this version reads.
 * @return : PT_OK, or PT_ERR_VERSION / PT_ERR_HEADER with why ("expected ...")
 *           filled in and *key (if key) naming the offending header field.
 */
enum pt_err pt_header_check(const struct pt_header *h, char *why, size_t size, const char **key);

/*! pt_comment_check() : a comment text the formats can carry; PT_OK or PT_ERR_FIELD with why (if why). */
enum pt_err pt_comment_check(const char *text, char *why, size_t size);

/* ---- text encoding (text.c) ---- */

/*! pt_header_format_text() : the canonical `@ptt ...` line (no newline); returns length. */
size_t pt_header_format_text(const struct pt_header *h, char *buf, size_t size);

struct pt_text_rd;
struct pt_text_rd *pt_text_open(struct pt_src *src, const char *name, struct pt_header *h,
				struct pt_error *err);
int pt_text_next(struct pt_text_rd *t, struct pt_event *ev, struct pt_error *err);
uint64_t pt_text_line(const struct pt_text_rd *t);
/*! pt_text_col() : column of key= in the last event line (its kind if key is NULL or absent). */
uint64_t pt_text_col(const struct pt_text_rd *t, const char *key);
void pt_text_close(struct pt_text_rd *t);

/* ---- binary encoding (binary.c) ---- */

struct pt_bin_rd;
struct pt_bin_rd *pt_bin_open(struct pt_src *src, const char *name, struct pt_header *h,
			      struct pt_error *err);
int pt_bin_next(struct pt_bin_rd *b, struct pt_event *ev, struct pt_error *err);
uint64_t pt_bin_offset(const struct pt_bin_rd *b);
void pt_bin_close(struct pt_bin_rd *b);

struct pt_bin_wr;
struct pt_bin_wr *pt_bin_wr_open(FILE *f, const struct pt_header *h);
/*! pt_bin_wr_put() : 0, or -1 on a write error (errno set) */
int pt_bin_wr_put(struct pt_bin_wr *w, const struct pt_event *ev);
/*! pt_bin_wr_finish() : end the zstd frame and flush it to the FILE; 0 or -1 */
int pt_bin_wr_finish(struct pt_bin_wr *w);
void pt_bin_wr_free(struct pt_bin_wr *w);

#endif
