// SPDX-License-Identifier: GPL-2.0-only
/* test_debug_off.c - pt_dbg() at every level in a default (PTFUZZ_DEBUG 0) unit. */
#undef PTFUZZ_DEBUG
#include "ptdebug.h"

void debug_off_all_levels(void);

void debug_off_all_levels(void)
{
	pt_dbg(PT_DBG_TRACE, "trace %d", 1);
	pt_dbg(PT_DBG_OP, "op %s", "mremap");
	pt_dbg(PT_DBG_LEVEL, "level %d", 3);
	pt_dbg(PT_DBG_ENTRY, "entry %#x", 0x10);
}
