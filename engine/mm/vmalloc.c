/* SPDX-License-Identifier: GPL-2.0-only */
/* vmalloc.c - WORK IN PROGRESS: being written; returns ENOSYS until then. */
#include "mm_internal.h"

int mm_do_vmalloc(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	(void)mm; (void)t; (void)ev;
	return ENOSYS;
}

int mm_do_vmap(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	(void)mm; (void)t; (void)ev;
	return ENOSYS;
}

int mm_do_vunmap(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	(void)mm; (void)t; (void)ev;
	return ENOSYS;
}

int mm_do_vfree(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	(void)mm; (void)t; (void)ev;
	return ENOSYS;
}

