/* SPDX-License-Identifier: GPL-2.0-only */
/* memory.c - WORK IN PROGRESS: being written; returns ENOSYS until then. */
#include "mm_internal.h"

int mm_do_munmap(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	(void)mm; (void)t; (void)ev;
	return ENOSYS;
}

int mm_do_madvise(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	(void)mm; (void)t; (void)ev;
	return ENOSYS;
}

int do_munmap(struct mm_model *mm, struct mm_thread *t, struct mm_space *s, uint64_t start, uint64_t len)
{
	(void)mm; (void)t; (void)s; (void)start; (void)len;
	return ENOSYS;
}
