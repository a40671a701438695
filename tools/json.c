/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * json.c - a minimal streaming JSON emitter for `--json`: two-space
 * indentation, strings escaped per RFC 8259, bytes that are not UTF-8
 * (file names can hold anything) replaced by U+FFFD so the document always
 * parses.
 */
#include <inttypes.h>
#include <string.h>

#include "cli.h"

void json_init(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first = true;
}

/* Separator and indentation before a value or a key. */
static void json_prelude(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!j->first)
		fputc(',', j->f);
	if (j->depth)
		fprintf(j->f, "\n%*s", (int)(2 * j->depth), "");
	j->first = false;
}

static void json_open(struct json *j, char c)
{
	json_prelude(j);
	fputc(c, j->f);
	j->depth++;
	j->first = true;
}

static void json_close(struct json *j, char c)
{
	j->depth--;
	if (!j->first)
		fprintf(j->f, "\n%*s", (int)(2 * j->depth), "");
	fputc(c, j->f);
	j->first = false;
}

void json_object_begin(struct json *j) { json_open(j, '{'); }
void json_object_end(struct json *j) { json_close(j, '}'); }
void json_array_begin(struct json *j) { json_open(j, '['); }
void json_array_end(struct json *j) { json_close(j, ']'); }

static void json_quoted(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', f);
	while (*s) {
		unsigned char c = *s;
		size_t n;

		switch (c) {
		case '"': fputs("\\\"", f); s++; continue;
		case '\\': fputs("\\\\", f); s++; continue;
		case '\n': fputs("\\n", f); s++; continue;
		case '\r': fputs("\\r", f); s++; continue;
		case '\t': fputs("\\t", f); s++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			s++;
			continue;
		}
		n = pt_utf8_len((const char *)s, 4);	/* s is NUL-terminated */
		if (!n) {
			fputs("\\ufffd", f);
			s++;
			continue;
		}
		fwrite(s, 1, n, f);
		s += n;
	}
	fputc('"', f);
}

void json_key(struct json *j, const char *key)
{
	json_prelude(j);
	json_quoted(j->f, key);
	fputs(": ", j->f);
	j->after_key = true;
}

void json_string(struct json *j, const char *s)
{
	json_prelude(j);
	if (s)
		json_quoted(j->f, s);
	else
		fputs("null", j->f);
}

void json_u64(struct json *j, uint64_t v)
{
	json_prelude(j);
	fprintf(j->f, "%" PRIu64, v);
}

void json_i64(struct json *j, int64_t v)
{
	json_prelude(j);
	fprintf(j->f, "%" PRId64, v);
}

void json_hex(struct json *j, uint64_t v)
{
	json_prelude(j);
	fprintf(j->f, "\"0x%" PRIx64 "\"", v);
}

void json_bool(struct json *j, bool v)
{
	json_prelude(j);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j)
{
	json_prelude(j);
	fputs("null", j->f);
}

void json_end(struct json *j)
{
	fputc('\n', j->f);
}
