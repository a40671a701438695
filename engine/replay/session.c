/* SPDX-License-Identifier: GPL-2.0-only */
/* session.c - one replay: machine model + checkers (+ the mm model, next issue). */
#include "session.h"

#include <stdlib.h>

#include "check.h"
#include "machine.h"

struct pt_session {
	struct pt_machine *m;
	struct pt_checker *c;
	struct pt_counters k;
	bool finished;
};

struct pt_session *pt_session_new(const struct pt_header *h)
{
	struct pt_machine *m = pt_machine_new(h);
	if (!m)
		return NULL;
	struct pt_session *s = calloc(1, sizeof(*s));
	if (!s)
		abort();
	s->m = m;
	s->c = pt_checker_new(m);
	return s;
}

void pt_session_free(struct pt_session *s)
{
	if (!s)
		return;
	pt_checker_free(s->c);
	pt_machine_free(s->m);
	free(s);
}

static void count(struct pt_counters *k, const struct pt_event *ev)
{
	k->events++;
	if (ev->kind < PT_EV_KIND_COUNT)
		k->by_kind[ev->kind]++;
	switch (ev->kind) {
	case PT_EV_TLBI: if (ev->op < PT_TLBI_COUNT) k->tlbi_by_op[ev->op]++; break;
	case PT_EV_DSB: if (ev->op < PT_BAR_COUNT) k->dsb_by_dom[ev->op]++; break;
	case PT_EV_DMB: k->dmb++; break;
	case PT_EV_ISB: k->isb++; break;
	case PT_EV_PT_WRITE: k->pt_writes++; break;
	case PT_EV_PAGE_ALLOC:
		if (ev->op == PT_FRAME_TABLE)
			k->tables_alloc++;
		else
			k->pages_alloc += 1ull << ev->order;
		break;
	default: break;
	}
}

unsigned pt_session_event(struct pt_session *s, const struct pt_event *ev)
{
	unsigned before = pt_checker_count(s->c);
	count(&s->k, ev);
	if (ev->kind == PT_EV_PAGE_FREE) {
		uint32_t f = pt_machine_lookup(s->m, ev->pa);
		bool table = f != PT_NO_FRAME && pt_machine_frame(s->m, f)->state == PT_FS_TABLE;
		if (table)
			s->k.tables_freed++;
		else
			s->k.pages_freed += 1ull << ev->order;
	}
	/* ops-level events need the mm model (engine/mm, next issue): counted, not executed */
	pt_machine_event(s->m, ev);
	return pt_checker_count(s->c) - before;
}

unsigned pt_session_finish(struct pt_session *s)
{
	unsigned before = pt_checker_count(s->c);
	if (!s->finished)
		pt_machine_finish(s->m);
	s->finished = true;
	return pt_checker_count(s->c) - before;
}

unsigned pt_session_nviolations(const struct pt_session *s) { return pt_checker_count(s->c); }
const struct pt_violation *pt_session_violation(const struct pt_session *s, unsigned i)
{
	return pt_checker_get(s->c, i);
}
const struct pt_counters *pt_session_counters(const struct pt_session *s) { return &s->k; }
uint64_t pt_session_hash(const struct pt_session *s) { return pt_machine_hash(s->m); }
