/* SPDX-License-Identifier: GPL-2.0-only */
/* error.c - the one-line, numbered errors of the trace format. */
#include <stdarg.h>
#include <stdio.h>

#include "trace_impl.h"

static const char *const err_names[] = {
	[PT_OK] = "ok",
	[PT_ERR_IO] = "io",
	[PT_ERR_ZSTD] = "zstd",
	[PT_ERR_TRUNCATED] = "truncated",
	[PT_ERR_VARINT] = "varint",
	[PT_ERR_LENGTH] = "length",
	[PT_ERR_PROTOBUF] = "protobuf",
	[PT_ERR_VERSION] = "version",
	[PT_ERR_HEADER] = "header",
	[PT_ERR_UNKNOWN_KIND] = "unknown-kind",
	[PT_ERR_UNKNOWN_OP] = "unknown-op",
	[PT_ERR_FIELD] = "field",
	[PT_ERR_SYNTAX] = "syntax",
	[PT_ERR_MISSING] = "missing",
	[PT_ERR_NUMBER] = "number",
	[PT_ERR_CPU] = "cpu",
	[PT_ERR_IMPORT] = "import",
	[PT_ERR_USAGE] = "usage",
	[PT_ERR_REF] = "reference",
	[PT_ERR_LIMIT] = "limit",
};

const char *pt_err_name(enum pt_err code)
{
	if ((unsigned)code < sizeof(err_names) / sizeof(err_names[0]) && err_names[code])
		return err_names[code];
	return "?";
}

static int verr(struct pt_error *err, enum pt_err code, int n, const char *fmt, va_list ap)
{
	if (n < 0)
		n = 0;
	if ((size_t)n < sizeof(err->msg))
		vsnprintf(err->msg + n, sizeof(err->msg) - (size_t)n, fmt, ap);
	err->code = code;
	return -1;
}

int pt_error_set(struct pt_error *err, enum pt_err code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	verr(err, code, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int pt_err_at_byte(struct pt_error *err, enum pt_err code, const char *file, uint64_t off,
		   bool compressed, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	int n = snprintf(err->msg, sizeof(err->msg), "%s: byte %llu (%s): ", file,
			 (unsigned long long)off, compressed ? "compressed" : "decompressed");
	va_start(ap, fmt);
	verr(err, code, n, fmt, ap);
	va_end(ap);
	return -1;
}

int pt_err_at_line(struct pt_error *err, enum pt_err code, const char *file, uint64_t line,
		   uint64_t col, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	int n = snprintf(err->msg, sizeof(err->msg), "%s:%llu:%llu: ", file, (unsigned long long)line,
			 (unsigned long long)col);
	va_start(ap, fmt);
	verr(err, code, n, fmt, ap);
	va_end(ap);
	return -1;
}
