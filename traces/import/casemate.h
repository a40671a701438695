/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * casemate.h - import a Casemate log (rems-project/casemate, the offline
 * break-before-make / lock-discipline checker) as a ptfuzz arch-level
 * trace, so that both checkers can be run on the same execution.
 *
 * Casemate records are s-expressions, one per event, keyed or positional:
 *
 *   (mem-write (id 11) (tid 0) (mem-order plain) (address 23f000) (value 240003) (src "f.c:33"))
 *   (barrier (id 16) (tid 0) dsb (kind ish) (src "f.c:41"))
 *   (mem-write 1 1 "f.c:3" release 42 93)
 *
 * Addresses, values and sizes are hexadecimal with or without 0x; id and
 * tid are decimal.  A line starting with `!` is the verdict Casemate printed
 * (the expected logs of its examples end with one).
 *
 * The mapping onto ptfuzz events, and what does not map, is documented in
 * docs/casemate.md.  In short: Casemate's tid is the CPU; VTTBR_EL2 (stage
 * 2, VMID) becomes `ttbr0 asid=VMID`; TTBR0_EL2 (the hypervisor's own stage
 * 1) becomes `ttbr1` with VAs rebased into the TTBR1 region; EL2 TLBIs
 * become their nearest EL1 operation; set_root_lock becomes `lock_rule`
 * once the root is installed; mem-init becomes `page_alloc` (table frames
 * at the level their use in the log gives them); release_table becomes
 * `page_free`.  Every Casemate record is kept as a comment before the
 * events it became.
 */
#ifndef PTFUZZ_CASEMATE_H
#define PTFUZZ_CASEMATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "event.h"
#include "trace.h"

/* What an import saw. */
struct pt_casemate_info {
	uint64_t records;	/* Casemate records read */
	uint64_t events;	/* ptfuzz events produced, comments included */
	unsigned cpus;		/* CPUs of the trace header (highest tid + 1) */
	char verdict[256];	/* text of the log's first `!` line without the "! ", "" if none */
};

/*
 * Where converted events go.  header() is called once, before the first
 * event (the CPU count is only known after reading the whole log); either
 * callback returns 0, or -1 with err set to stop the import.
 */
struct pt_casemate_sink {
	int (*header)(void *ctx, const struct pt_header *h, struct pt_error *err);
	int (*event)(void *ctx, const struct pt_event *ev, struct pt_error *err);
	void *ctx;
};

/*!
 * pt_import_casemate() : read the Casemate log in_path ("-" = stdin) and
 * write it as a ptfuzz trace to out_path, in the encoding its name asks
 * for (pt_encoding_for_path()).  Nothing is left under out_path on error.
 * @return : 0, or -1 with err set: PT_ERR_IMPORT with
 *           "FILE:LINE:COL: expected ..." for malformed or unsupported
 *           input, PT_ERR_IO, or the trace writer's error.
 */
int pt_import_casemate(const char *in_path, const char *out_path, struct pt_error *err);
/*! pt_import_casemate_info() : the same, and what the import saw into info (may be NULL). */
int pt_import_casemate_info(const char *in_path, const char *out_path, struct pt_casemate_info *info,
			    struct pt_error *err);

/*!
 * pt_import_casemate_stream() : convert the log read from in (which must be
 * seekable: it is read twice) into sink.  name is used in messages; info
 * may be NULL.
 * @return : 0, or -1 with err set.
 */
int pt_import_casemate_stream(FILE *in, const char *name, const struct pt_casemate_sink *sink,
			      struct pt_casemate_info *info, struct pt_error *err);

/*! pt_import_casemate_mem() : the same over a memory buffer (tests, fuzzers). */
int pt_import_casemate_mem(const void *buf, size_t size, const char *name,
			   const struct pt_casemate_sink *sink, struct pt_casemate_info *info,
			   struct pt_error *err);

#endif
