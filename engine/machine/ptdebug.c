// SPDX-License-Identifier: GPL-2.0-only
/* ptdebug.c - where pt_dbg() lines go (ptdebug.h). */
#include "ptdebug.h"

FILE *pt_dbg_stream;
