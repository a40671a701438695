/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * trace_parse.c - property: the trace reader survives any bytes.
 *
 * Any input - binary (zstd magic) or text, and any input taken as the
 * decompressed content of a binary trace - either yields events that
 * fit the schema and format as text, or stops with one numbered error
 * naming the input and the place; never a crash, a hang, a leak or an
 * allocation sized by the input's claims.  After an error the reader
 * stays stopped.
 */
#include <stdint.h>

#include "fuzz_common.h"

#define MAX_EVENTS (1u << 16)	/* a zstd bomb decodes fast, but not forever */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void parse(const uint8_t *data, size_t size)
{
	struct pt_error err = { 0 };
	struct pt_reader *r = pt_reader_open_mem(data, size, FUZZ_NAME, &err);
	static char line[PT_MAX_LINE + 256];
	struct pt_event ev;
	unsigned n = 0;
	int rc;

	if (!r) {
		fuzz_check_error(&err);
		return;
	}
	const struct pt_header *h = pt_reader_header(r);
	FUZZ_CHECK(h->version == PT_FORMAT_VERSION && h->cpus >= 1 && h->cpus <= PT_MAX_CPUS,
		   "header version %u cpus %u", h->version, h->cpus);
	while (n < MAX_EVENTS && (rc = pt_reader_next(r, &ev, &err)) == 1) {
		n++;
		FUZZ_CHECK(pt_event_valid(&ev, h->cpus), "event %u kind %u", n, ev.kind);
		FUZZ_CHECK(ev.kind != PT_EV_COMMENT || ev.text, "comment without text");
		size_t len = pt_event_format_text(&ev, line, sizeof(line));
		FUZZ_CHECK(len == strlen(line) && len <= PT_MAX_LINE, "line of %zu bytes", len);
		pt_reader_where(r);
	}
	if (n < MAX_EVENTS && rc < 0) {
		struct pt_error again = { 0 };
		fuzz_check_error(&err);
		FUZZ_CHECK(pt_reader_next(r, &ev, &again) == -1 && again.code == err.code,
			   "the reader went on after: %s", err.msg);
	}
	pt_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t zsize;
	const uint8_t *z = fuzz_as_zstd(data, size, &zsize);

	parse(data, size);
	if (z)
		parse(z, zsize);	/* the same bytes as a binary record stream */
	return 0;
}
