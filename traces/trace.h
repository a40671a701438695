/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * trace.h - reading and writing ptfuzz traces.
 *
 * Two encodings of one event stream (see event.h for the vocabulary):
 *  - binary `.ptt.zst`: a zstd stream of varint-length-delimited protobuf
 *    messages (traces/ptfuzz.proto): one Header, then Event messages; written
 *    as zstd frames of at most 64 KiB of records, each with its checksum,
 *    and a frame is verified before any of its events is read (binary.c);
 *  - text `.ptt`: one event per line (event.h), header line `@ptt ...`.
 *
 * Readers and writers stream: memory use does not depend on trace length.
 * The reader detects the encoding from the first bytes (zstd magic
 * 28 b5 2f fd => binary, anything else => text).
 */
#ifndef PTFUZZ_TRACE_H
#define PTFUZZ_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include "event.h"

/* Stable, numbered error codes (never renumber; append only). */
enum pt_err {
	PT_OK = 0,
	PT_ERR_IO = 1,		/* cannot open / read / write */
	PT_ERR_ZSTD = 2,	/* corrupt zstd frame */
	PT_ERR_TRUNCATED = 3,	/* input ends inside a frame, a varint or a message */
	PT_ERR_VARINT = 4,	/* malformed length varint */
	PT_ERR_LENGTH = 5,	/* message length over the limit */
	PT_ERR_PROTOBUF = 6,	/* message does not unpack */
	PT_ERR_VERSION = 7,	/* unsupported format version */
	PT_ERR_HEADER = 8,	/* header missing or invalid */
	PT_ERR_UNKNOWN_KIND = 9,	/* unknown event kind */
	PT_ERR_UNKNOWN_OP = 10,	/* unknown sub-operation */
	PT_ERR_FIELD = 11,	/* field not allowed for the kind, or out of range */
	PT_ERR_SYNTAX = 12,	/* text line malformed */
	PT_ERR_MISSING = 13,	/* required key missing */
	PT_ERR_NUMBER = 14,	/* malformed or overflowing number */
	PT_ERR_CPU = 15,	/* cpu number outside the header's CPU count */
	PT_ERR_IMPORT = 16,	/* importer: input in a foreign format is malformed */
	PT_ERR_USAGE = 17,	/* bad command-line usage */
	PT_ERR_REF = 18,	/* a CPU, thread or IRQ the trace does not have (pt_reader_next()) */
	PT_ERR_LIMIT = 19,	/* the trace exceeds the model's budget (pt_session_error()) */
};

#define PT_MAX_MESSAGE 4096u	/* largest Event/Header message accepted, bytes */
#define PT_MAX_LINE 4096u	/* longest text line accepted, bytes */
#define PT_MAX_COMMENT 4000u	/* longest comment text (PT_EV_COMMENT), bytes: fits both encodings */

/*
 * An error: code, and a one-line message of the form
 *   "FILE: byte N: expected ..." (binary) or "FILE:LINE:COL: expected ..." (text)
 */
struct pt_error {
	enum pt_err code;
	char msg[512];
};

/*! pt_error_set() : format msg into err (printf-style); returns -1 for `return pt_error_set(...)`. */
int pt_error_set(struct pt_error *err, enum pt_err code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*! pt_err_name() : a short stable name for code ("truncated", "varint", ...), "?" if unknown. */
const char *pt_err_name(enum pt_err code);

enum pt_encoding { PT_ENC_TEXT = 0, PT_ENC_BINARY = 1 };

struct pt_reader;

/*!
 * pt_reader_open() : open path ("-" = stdin) and read its header.
 * A text trace without a header line gets pt_header_default().
 * @return : a reader, or NULL with err set.
 */
struct pt_reader *pt_reader_open(const char *path, struct pt_error *err);
/*! pt_reader_open_mem() : the same over a memory buffer (fuzzers, tests); name is used in messages. */
struct pt_reader *pt_reader_open_mem(const void *buf, size_t size, const char *name, struct pt_error *err);
const struct pt_header *pt_reader_header(const struct pt_reader *r);
enum pt_encoding pt_reader_encoding(const struct pt_reader *r);
/*!
 * pt_reader_next() : read the next event into ev.  ev->text (comments) stays
 * valid until the next call.  Events are validated against the schema
 * (pt_event_valid()) and the header's CPU count, and the references that
 * only the trace so far can settle are checked (PT_ERR_REF):
 *  - `thread tid=T` declares a scheduled thread: T at least the header's
 *    cpus (tids 0..cpus-1 are the CPUs' own threads), not PT_TID_IDLE,
 *    declared once, at most PT_MAX_THREADS of them;
 *  - `sched tid=T` resumes a thread declared by an earlier `thread`;
 *  - `migrate tid=T to=N`: N is a CPU of the header, T a CPU's own thread,
 *    a declared thread or one an earlier `switch` ran;
 *  - `irq_exit` on a CPU closes an `irq_enter` of that CPU.
 * @return : 1 an event, 0 end of trace, -1 error (err set; the reader is
 *           then finished: further calls return -1).
 */
int pt_reader_next(struct pt_reader *r, struct pt_event *ev, struct pt_error *err);
/*! pt_reader_where() : "byte N" / "line N" of the last event read, for messages. */
const char *pt_reader_where(const struct pt_reader *r);
void pt_reader_close(struct pt_reader *r);

struct pt_writer;

/*!
 * pt_writer_open() : create path for writing in enc ("-" = stdout).  Output
 * goes to a temporary file beside path and is renamed over it only by a
 * successful pt_writer_close(): a failed or interrupted write never leaves
 * a half-written file under the final name.  An existing path keeps its
 * mode; a symlink is written through (its target is replaced, the link
 * stays); a device or FIFO is written in place.
 */
struct pt_writer *pt_writer_open(const char *path, enum pt_encoding enc, const struct pt_header *h,
				 struct pt_error *err);
/*!
 * pt_writer_put() : append ev.  An event the format cannot carry (unknown
 * kind or op, a field its kind does not use or out of range, cpu >= the
 * header's cpus, a comment with a cpu or unfit text) is refused with -1
 * and err set, and the writer stays usable; a write error also returns -1,
 * and then pt_writer_close() fails and commits nothing.
 */
int pt_writer_put(struct pt_writer *w, const struct pt_event *ev, struct pt_error *err);
/*! pt_writer_close() : finish and commit; 0 ok, -1 error (nothing committed). */
int pt_writer_close(struct pt_writer *w, struct pt_error *err);
/*! pt_writer_abort() : discard everything written. */
void pt_writer_abort(struct pt_writer *w);
/*!
 * pt_writer_unlink_temps() : remove the temporary files of every open file
 * writer.  Async-signal-safe: for a SIGINT/SIGTERM handler, which then
 * ends the process.
 */
void pt_writer_unlink_temps(void);

/*!
 * pt_writer_open_mem() : a writer into memory (fuzzers, tests, converters
 * that post-process).  Finish it with pt_writer_close_mem(); pt_writer_abort()
 * also works.
 */
struct pt_writer *pt_writer_open_mem(enum pt_encoding enc, const struct pt_header *h, struct pt_error *err);
/*!
 * pt_writer_close_mem() : finish a memory writer; *data (malloc'd, the caller
 * frees it) and *size get the encoded trace.
 * @return : 0, or -1 with err set (*data is then NULL).
 */
int pt_writer_close_mem(struct pt_writer *w, void **data, size_t *size, struct pt_error *err);

/*! pt_encoding_for_path() : binary if path ends in ".zst", else text. */
enum pt_encoding pt_encoding_for_path(const char *path);

/*! pt_event_format_text() : the canonical text line of ev (no newline); returns length. */
size_t pt_event_format_text(const struct pt_event *ev, char *buf, size_t size);

/*!
 * pt_trace_differs() : whether trace b (header hb, nb events) differs from a, as a
 * lossless conversion would keep it (pt_header_eq(), pt_event_eq()); the first
 * difference in why: "the header differs", "N events became M", or "event I
 * differs:" and the two events' text lines.
 * @return : false if they are the same.
 */
bool pt_trace_differs(const struct pt_header *ha, const struct pt_event *a, size_t na,
		      const struct pt_header *hb, const struct pt_event *b, size_t nb,
		      char *why, size_t size);

/*!
 * pt_utf8_len() : the length (1..4) of the well-formed UTF-8 sequence at s, of at most
 * avail bytes, or 0 if there is none (a stray continuation byte, an overlong form, a
 * surrogate, past U+10FFFF, or cut short).  It reads no byte past the first one that
 * does not continue the sequence, so a NUL-terminated string may pass avail = 4.
 */
size_t pt_utf8_len(const char *s, size_t avail);

#endif
