/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ptdebug.h - debug output by level, tied to the lifetime of what it
 * describes (STYLE.md §6), compiled out by default.
 *
 *	PT_DBG_TRACE	once per trace (a session starts, ends, is reset)
 *	PT_DBG_OP	once per ops-level event (an mm routine starts, returns)
 *	PT_DBG_LEVEL	once per table level a routine walks
 *	PT_DBG_ENTRY	once per entry stored, invalidated or checked
 *
 * Build with -DPTFUZZ_DEBUG=N (cmake -DPTFUZZ_DEBUG=N) to keep the levels up
 * to N; the default 0 leaves `if (0)` behind, which the compiler drops while
 * still type-checking the format and its arguments, so a debug line cannot
 * rot.  Output goes to pt_dbg_stream (standard error unless a test points it
 * elsewhere), indented by level.  Debug lines are not part of any verdict,
 * report or state hash.
 */
#ifndef PTFUZZ_ENGINE_ARCH_PTDEBUG_H
#define PTFUZZ_ENGINE_ARCH_PTDEBUG_H

#include <stdarg.h>
#include <stdio.h>

#ifndef PTFUZZ_DEBUG
#define PTFUZZ_DEBUG 0
#endif

enum pt_dbg_level {
	PT_DBG_TRACE = 1,
	PT_DBG_OP = 2,
	PT_DBG_LEVEL = 3,
	PT_DBG_ENTRY = 4,
};

/* Where debug lines go; NULL means standard error. */
extern FILE *pt_dbg_stream;

__attribute__((format(printf, 2, 3))) static inline void pt_dbg_printf(enum pt_dbg_level level,
									const char *fmt, ...)
{
	FILE *f = pt_dbg_stream ? pt_dbg_stream : stderr;
	va_list ap;

	fprintf(f, "ptdbg%d %*s", (int)level, 2 * ((int)level - 1), "");
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
}

/* pt_dbg(PT_DBG_OP, "mremap %#llx -> %#llx", old, new): one line, no '\n'. */
#define pt_dbg(level, ...)                                    \
	do {                                                  \
		if (PTFUZZ_DEBUG >= (level))                  \
			pt_dbg_printf((level), __VA_ARGS__);  \
	} while (0)

#endif /* PTFUZZ_ENGINE_ARCH_PTDEBUG_H */
