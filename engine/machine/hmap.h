/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hmap.h - an open-addressing multimap u64 key -> u64 value (linear probing,
 * backward-shift deletion), the one index structure of the machine model.
 * Key UINT64_MAX is reserved.
 */
#ifndef PTFUZZ_HMAP_H
#define PTFUZZ_HMAP_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define HMAP_EMPTY UINT64_MAX

struct hmap_slot {
	uint64_t key;
	uint64_t val;
};

struct hmap {
	struct hmap_slot *slot;
	uint64_t mask;		/* capacity - 1 */
	uint64_t count;
};

static inline uint64_t hmap_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

void hmap_init(struct hmap *h, unsigned log2cap);
void hmap_destroy(struct hmap *h);
/*! hmap_reset() : empty, and exactly as hmap_init(h, log2cap) leaves it; free if already so. */
void hmap_reset(struct hmap *h, unsigned log2cap);
/*! hmap_set() : set the unique value of key (insert or overwrite). */
void hmap_set(struct hmap *h, uint64_t key, uint64_t val);
bool hmap_del(struct hmap *h, uint64_t key);
/*!
 * hmap_clear_run() : empty the slots from key's home on, up to the first empty one, and count
 * them out.  Called for every key the map holds, in any order, it empties the map and keeps its
 * capacity: a key's values lie from its home on with no empty slot between, and each call
 * empties the rest of the run of full slots it starts in.  The cost is what the map holds.
 */
void hmap_clear_run(struct hmap *h, uint64_t key);
#define HMAP_REMAP_DEL UINT32_MAX
/*!
 * hmap_remap() : every pair's value v (each one below the length of map) becomes map[v], or the
 * pair goes if map[v] is HMAP_REMAP_DEL.  A key's remaining values keep their order, as after
 * hmap_remove() of each pair that goes and hmap_replace() of each renamed one, in one pass over
 * the slots: for many removals at once, each of which would shift a chain back on its own.
 */
void hmap_remap(struct hmap *h, const uint32_t *map);

/* The parts of the operations below that are not inline (hmap.c): the machine's per-event
 * inserts, removals and lookups are inline, without a call's cost, and the rare growth and
 * the deletion's backward shift are calls. */
void hmap_grow(struct hmap *h);
void hmap_delete_at(struct hmap *h, uint64_t i);

/* Iterate the values of key: for (uint64_t it = hmap_first(h, key); it != HMAP_END; it = hmap_next(h, key, it)) */
#define HMAP_END UINT64_MAX
static inline uint64_t hmap_next(const struct hmap *h, uint64_t key, uint64_t pos)
{
	for (uint64_t i = (pos + 1) & h->mask;; i = (i + 1) & h->mask) {
		if (h->slot[i].key == HMAP_EMPTY)
			return HMAP_END;
		if (h->slot[i].key == key)
			return i;
	}
}
static inline uint64_t hmap_first(const struct hmap *h, uint64_t key)
{
	uint64_t i = hmap_mix(key) & h->mask;
	if (h->slot[i].key == key)
		return i;
	if (h->slot[i].key == HMAP_EMPTY)
		return HMAP_END;
	return hmap_next(h, key, i);
}
static inline uint64_t hmap_val(const struct hmap *h, uint64_t it) { return h->slot[it].val; }

static inline void hmap_insert(struct hmap *h, uint64_t key, uint64_t val)
{
	assert(key != HMAP_EMPTY);
	if ((h->count + 1) * 2 > h->mask + 1)
		hmap_grow(h);
	uint64_t i = hmap_mix(key) & h->mask;
	while (h->slot[i].key != HMAP_EMPTY)
		i = (i + 1) & h->mask;
	h->slot[i].key = key;
	h->slot[i].val = val;
	h->count++;
}

/*! hmap_remove() : remove one (key, val) pair; returns false if absent. */
static inline bool hmap_remove(struct hmap *h, uint64_t key, uint64_t val)
{
	for (uint64_t it = hmap_first(h, key); it != HMAP_END; it = hmap_next(h, key, it)) {
		if (h->slot[it].val == val) {
			hmap_delete_at(h, it);
			return true;
		}
	}
	return false;
}

/*! hmap_replace() : change the value of pair (key, old) to new; returns false if absent. */
static inline bool hmap_replace(struct hmap *h, uint64_t key, uint64_t old, uint64_t new)
{
	for (uint64_t it = hmap_first(h, key); it != HMAP_END; it = hmap_next(h, key, it)) {
		if (h->slot[it].val == old) {
			h->slot[it].val = new;
			return true;
		}
	}
	return false;
}

/*! hmap_get() : the value of the first pair with key, or def. (For maps with unique keys.) */
static inline uint64_t hmap_get(const struct hmap *h, uint64_t key, uint64_t def)
{
	uint64_t it = hmap_first(h, key);
	return it == HMAP_END ? def : h->slot[it].val;
}

#endif
