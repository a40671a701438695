/* SPDX-License-Identifier: GPL-2.0-only */
/* mmu.c - WORK IN PROGRESS: being written; returns ENOSYS until then. */
#include "mm_internal.h"

int mm_do_map_mem(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	(void)mm; (void)t; (void)ev;
	return ENOSYS;
}

