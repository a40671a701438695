/* SPDX-License-Identifier: GPL-2.0-only */
/* hmap.c - open-addressing multimap (see hmap.h). */
#include "hmap.h"

#include <string.h>

static void alloc_slots(struct hmap *h, uint64_t cap)
{
	h->slot = malloc(cap * sizeof(*h->slot));
	if (!h->slot)
		abort();
	memset(h->slot, 0xff, cap * sizeof(*h->slot));
	h->mask = cap - 1;
	h->count = 0;
}

void hmap_init(struct hmap *h, unsigned log2cap)
{
	alloc_slots(h, 1ull << log2cap);
}

void hmap_destroy(struct hmap *h)
{
	free(h->slot);
	h->slot = NULL;
}

void hmap_reset(struct hmap *h, unsigned log2cap)
{
	if (h->mask + 1 != 1ull << log2cap) {
		/* grown: back to the size a new map has, so that probe orders (and so the order of a
		 * key's values) are those of a fresh map */
		free(h->slot);
		alloc_slots(h, 1ull << log2cap);
	} else if (h->count) {
		memset(h->slot, 0xff, (h->mask + 1) * sizeof(*h->slot));
		h->count = 0;
	}
}

/*
 * Twice the slots, the pairs inserted again in probe order: from an empty slot (at most half the
 * slots are used, and a chain never crosses an empty one) once around.  A key's values lie on one
 * chain in the order they were inserted (an insert goes past all of them, a backward-shift
 * deletion moves them together), and go in again in that order, so a growth keeps it: in slot
 * order, a chain that wrapped past the last slot put its wrapped values first.
 */
void hmap_grow(struct hmap *h)
{
	struct hmap_slot *old = h->slot;
	uint64_t cap = h->mask + 1, count = h->count, start = 0;
	while (old[start].key != HMAP_EMPTY)
		start++;
	alloc_slots(h, cap * 2);
	for (uint64_t n = 1; n <= cap; n++) {
		const struct hmap_slot *o = &old[(start + n) & (cap - 1)];
		if (o->key == HMAP_EMPTY)
			continue;
		uint64_t j = hmap_mix(o->key) & h->mask;
		while (h->slot[j].key != HMAP_EMPTY)
			j = (j + 1) & h->mask;
		h->slot[j] = *o;
	}
	h->count = count;
	free(old);
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
void hmap_delete_at(struct hmap *h, uint64_t i)
{
	uint64_t j = i;
	for (;;) {
		j = (j + 1) & h->mask;
		if (h->slot[j].key == HMAP_EMPTY)
			break;
		uint64_t home = hmap_mix(h->slot[j].key) & h->mask;
		/* can slot j move to i?  only if its home is not in (i, j] cyclically */
		bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (!between) {
			h->slot[i] = h->slot[j];
			i = j;
		}
	}
	h->slot[i].key = HMAP_EMPTY;
	h->slot[i].val = HMAP_EMPTY;
	h->count--;
}

void hmap_set(struct hmap *h, uint64_t key, uint64_t val)
{
	uint64_t it = hmap_first(h, key);
	if (it != HMAP_END)
		h->slot[it].val = val;
	else
		hmap_insert(h, key, val);
}

bool hmap_del(struct hmap *h, uint64_t key)
{
	uint64_t it = hmap_first(h, key);
	if (it == HMAP_END)
		return false;
	hmap_delete_at(h, it);
	return true;
}

void hmap_clear_run(struct hmap *h, uint64_t key)
{
	for (uint64_t i = hmap_mix(key) & h->mask; h->slot[i].key != HMAP_EMPTY; i = (i + 1) & h->mask) {
		h->slot[i].key = HMAP_EMPTY;
		h->slot[i].val = HMAP_EMPTY;
		h->count--;
	}
}

/*
 * In probe order from an empty slot once around, as hmap_grow() reinserts: a pair that stays goes
 * to the first empty slot from its home, which is where reinserting the pairs in that order would
 * put it, so a key's values keep their order.  Its home lies between that empty slot and it (its
 * chain did not cross an empty slot), so the probe meets only slots already done.  Where nothing
 * went since the last empty slot, the run before a pair is full and it stays where it is.
 */
static inline void remap_slot(struct hmap *h, const uint32_t *map, uint64_t j, bool *hole)
{
	struct hmap_slot *s = &h->slot[j];
	if (s->key == HMAP_EMPTY) {
		*hole = false;
		return;
	}
	uint32_t v = map[s->val];
	if (v == HMAP_REMAP_DEL) {
		s->key = HMAP_EMPTY;
		s->val = HMAP_EMPTY;
		h->count--;
		*hole = true;
		return;
	}
	s->val = v;
	if (!*hole)
		return;
	uint64_t i = hmap_mix(s->key) & h->mask;
	while (i != j && h->slot[i].key != HMAP_EMPTY)
		i = (i + 1) & h->mask;
	if (i != j) {
		h->slot[i] = *s;
		s->key = HMAP_EMPTY;
		s->val = HMAP_EMPTY;
	}
}

void hmap_remap(struct hmap *h, const uint32_t *map)
{
	uint64_t start = 0;
	while (h->slot[start].key != HMAP_EMPTY)
		start++;
	bool hole = false;	/* a slot emptied since the last empty one */
	/* (start + 1 .. the last slot, then 0 .. start - 1: no wrap-around per slot) */
	for (uint64_t j = start + 1; j <= h->mask; j++)
		remap_slot(h, map, j, &hole);
	for (uint64_t j = 0; j < start; j++)
		remap_slot(h, map, j, &hole);
}
