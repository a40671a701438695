/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * minimize.c - delta debugging (Zeller and Hildebrandt, "Simplifying and
 * Isolating Failure-Inducing Input", TSE 2002) of a trace that shows a
 * violation, judged by replaying each candidate through a fresh session.
 *
 * A round runs, in order:
 *  0. whole groups: the events of one CPU, of one address space;
 *  1. ddmin over events: chunks of the trace removed at halving granularity;
 *     a thread's sched and migrate events go with its thread event, so that
 *     no candidate schedules a thread it never created;
 *  2. single events, each one alone (no closure: that is what 1-minimal
 *     means to a reader, who deletes one line);
 *  3. the schedule: each sched's steps= lowered (1, half, one less);
 *  4. arguments: lengths shrunk toward 4K / 64K / 2M / 1G, addresses aligned
 *     down to 1G / 2M / 64K / 4K (never to 0), flag bits dropped, folio order
 *     and node to 0, optional keys left out (a len= of one page where that
 *     is the default; prot= and asid= stay: a write-only mapping is no
 *     simpler to read, asid 0 is another address space);
 *  5. the CPUs: renumbered 0.. in order, and the header's cpus= lowered to
 *     those used.
 * Rounds repeat until one changes nothing, so the result is 1-minimal:
 * removing any one event, or applying any one simplification of 3-5, loses
 * the target.  Every choice follows the trace's order: the same input always
 * gives the same output.
 */
#include "minimize.h"

#include <stdlib.h>
#include <string.h>

#define SZ_4K (4ull << 10)
#define SZ_64K (64ull << 10)
#define SZ_2M (2ull << 20)
#define SZ_1G (1ull << 30)
#define MAX_SIMPLER 64	/* simplifications of one event */

struct mz {
	const struct mz_config *c;
	struct mz_stats *st;
	struct mz_trace cur;	/* the smallest trace found that shows the target */
	struct mz_trace cand;	/* the candidate being built */
	size_t cap;
	bool *keep;		/* [cap] events kept by a ddmin candidate */
	size_t *idx;		/* [cap] ddmin's events left */
	size_t *owner;		/* [cap] the thread event a sched or migrate belongs to, or SIZE_MAX */
};

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		abort();
	return p;
}

void mz_trace_free(struct mz_trace *t)
{
	free(t->ev);
	t->ev = NULL;
	t->n = 0;
}

bool mz_matches(const struct mz_target *tg, const struct pt_violation *v)
{
	return tg->same_invariant ? v->id == tg->id : !strcmp(v->signature, tg->signature);
}

/* A new violation of s (from *seen on) matches tg. */
static bool shows_new(const struct pt_session *s, unsigned *seen, const struct mz_target *tg)
{
	bool hit = false;
	for (unsigned n = pt_session_nviolations(s); *seen < n; ++*seen)
		hit |= mz_matches(tg, pt_session_violation(s, *seen));
	return hit;
}

/*
 * The single place a candidate runs.  A fresh session per candidate: a later
 * pt_session_reset() (cheaper than new + free) replaces the two calls here.
 * Violations are never withdrawn, so a replay can stop feeding events at the
 * first match.
 */
bool mz_replay(const struct mz_trace *t, const char *variant, const struct mz_target *tg,
	       struct pt_session **keep)
{
	struct pt_session *s = pt_session_new(&t->h);
	unsigned seen = 0;
	bool hit = false;

	if (keep)
		*keep = s;
	if (!s)
		return false;
	if (variant && pt_session_set_variant(s, variant) < 0)
		abort();	/* the command checked the name */
	for (size_t i = 0; i < t->n && (keep || !hit); i++)
		if (pt_session_event(s, &t->ev[i]) && tg)
			hit |= shows_new(s, &seen, tg);
	/* even after a match: a thread suspended inside an op holds memory only its end frees */
	pt_session_finish(s);
	if (tg)
		hit |= shows_new(s, &seen, tg);
	if (!keep)
		pt_session_free(s);
	return hit;
}

/* The machine refuses what the reader would refuse: a CPU outside the header, a field out of range. */
static bool trace_valid(const struct mz_trace *t)
{
	if (t->h.cpus < 1 || t->h.cpus > PT_MAX_CPUS)
		return false;
	for (size_t i = 0; i < t->n; i++)
		if (!pt_event_valid(&t->ev[i], t->h.cpus))
			return false;
	return true;
}

/* Does t still show the target?  Every replay is counted against the cap. */
static bool interesting(struct mz *z, const struct mz_trace *t)
{
	const struct mz_config *c = z->c;
	bool yes;

	if (!t->n || !trace_valid(t))
		return false;
	if (z->st->replays >= c->max_replays) {
		z->st->capped = true;
		return false;
	}
	z->st->replays++;
	yes = mz_replay(t, c->variant, &c->target, NULL);
	if (yes && c->variant && c->clean_by_default) {
		if (z->st->replays >= c->max_replays) {
			z->st->capped = true;
			return false;
		}
		z->st->replays++;
		yes = !mz_replay(t, NULL, &c->target, NULL);
	}
	z->st->events = z->cur.n;
	if (c->progress)
		c->progress(c->progress_ctx, z->st);
	return yes;
}

/* The candidate becomes the current trace. */
static void accept(struct mz *z)
{
	struct mz_trace t = z->cur;
	z->cur = z->cand;
	z->cand = t;
	z->st->events = z->cur.n;
}

/* ---- 1. ddmin over events ---- */

static bool is_sched(const struct pt_event *ev)
{
	return ev->kind == PT_EV_SCHED || ev->kind == PT_EV_MIGRATE;
}

static bool has_key(const struct pt_event *ev, enum pt_field f)
{
	const struct pt_kind_schema *s = pt_kind_schema(ev->kind);
	for (const struct pt_key *k = s ? s->keys : NULL; k && k->name; k++)
		if (k->field == f)
			return true;
	return false;
}

/* owner[i]: the latest thread event before a sched / migrate for its tid */
static void find_owners(struct mz *z)
{
	for (size_t i = 0; i < z->cur.n; i++) {
		z->owner[i] = SIZE_MAX;
		if (!is_sched(&z->cur.ev[i]))
			continue;
		for (size_t j = i; j-- > 0;)
			if (z->cur.ev[j].kind == PT_EV_THREAD && z->cur.ev[j].tid == z->cur.ev[i].tid) {
				z->owner[i] = j;
				break;
			}
	}
}

/* cand = the events of cur that keep[] names, a removed thread taking its sched / migrate along
 * (keep[] is updated to what was really kept) */
static void build_kept(struct mz *z)
{
	z->cand.h = z->cur.h;
	z->cand.n = 0;
	for (size_t i = 0; i < z->cur.n; i++) {
		if (z->keep[i] && z->owner[i] != SIZE_MAX && !z->keep[z->owner[i]])
			z->keep[i] = false;
		if (z->keep[i])
			z->cand.ev[z->cand.n++] = z->cur.ev[i];
	}
}

/*
 * Before ddmin: whole groups at once, the events of one CPU, then those of one
 * address space (asid=): a fuzzer's or a recording's unrelated work often
 * runs on CPUs or in address spaces of its own, and one replay removes it.
 */
static bool drop_group(struct mz *z, bool by_cpu, unsigned value)
{
	for (size_t i = 0; i < z->cur.n; i++) {
		const struct pt_event *ev = &z->cur.ev[i];
		bool in = by_cpu ? ev->cpu == value : has_key(ev, PT_F_ASID) && ev->asid == value;
		z->keep[i] = !in;
	}
	build_kept(z);
	if (z->cand.n == z->cur.n || !interesting(z, &z->cand))
		return false;
	accept(z);
	find_owners(z);
	return true;
}

static bool pass_groups(struct mz *z)
{
	bool any = false;

	z->st->pass = "cpus and address spaces";
	find_owners(z);
	for (unsigned cpu = 0; cpu < PT_MAX_CPUS && z->cur.n > 1 && !z->st->capped; cpu++)
		any |= drop_group(z, /* by_cpu= */true, cpu);
	static uint64_t used[(UINT16_MAX + 1) / 64];
	memset(used, 0, sizeof(used));
	for (size_t i = 0; i < z->cur.n; i++)
		if (has_key(&z->cur.ev[i], PT_F_ASID))
			used[z->cur.ev[i].asid / 64] |= 1ull << (z->cur.ev[i].asid % 64);
	for (unsigned asid = 0; asid <= UINT16_MAX && z->cur.n > 1 && !z->st->capped; asid++)
		if (used[asid / 64] & (1ull << (asid % 64)))
			any |= drop_group(z, /* by_cpu= */false, asid);
	return any;
}

/*
 * Remove chunks of the events left, at granularity 2, 4, 8, ... (complements
 * of Zeller's partition); a removal keeps the granularity, so the chunks
 * shrink with the trace; at chunk size 1 sweep until nothing goes.
 */
static bool pass_ddmin(struct mz *z)
{
	size_t n = z->cur.n, k = n, gran = 2;
	bool any = false;

	z->st->pass = "events";
	find_owners(z);
	for (size_t i = 0; i < n; i++)
		z->idx[i] = i;
	while (k >= 2 && !z->st->capped) {
		size_t chunk = (k + gran - 1) / gran;
		bool removed = false;

		for (size_t i = 0; i < k && !z->st->capped;) {
			size_t m = chunk < k - i ? chunk : k - i;
			memset(z->keep, 0, n * sizeof(*z->keep));
			for (size_t j = 0; j < k; j++)
				z->keep[z->idx[j]] = j < i || j >= i + m;
			build_kept(z);
			if (!interesting(z, &z->cand)) {
				i += m;
				continue;
			}
			/* the events before i stay: a chunk takes along only scheds that follow it */
			k = 0;
			for (size_t j = 0; j < n; j++)
				if (z->keep[j])
					z->idx[k++] = j;
			removed = any = true;
		}
		if (!removed) {
			if (chunk == 1)
				break;
			gran = gran * 2 < k ? gran * 2 : k;
		}
	}
	if (any) {
		memset(z->keep, 0, n * sizeof(*z->keep));
		for (size_t j = 0; j < k; j++)
			z->keep[z->idx[j]] = true;
		z->cand.h = z->cur.h;
		z->cand.n = 0;
		for (size_t i = 0; i < n; i++)
			if (z->keep[i])
				z->cand.ev[z->cand.n++] = z->cur.ev[i];
		accept(z);
	}
	return any;
}

/* ---- 2. single events ---- */

static bool pass_singles(struct mz *z)
{
	bool any = false;

	z->st->pass = "single events";
	/* from the end: a removal does not move the events still to try */
	for (size_t i = z->cur.n; i-- > 0 && z->cur.n > 1 && !z->st->capped;) {
		z->cand.h = z->cur.h;
		memcpy(z->cand.ev, z->cur.ev, i * sizeof(*z->cur.ev));
		memcpy(z->cand.ev + i, z->cur.ev + i + 1, (z->cur.n - i - 1) * sizeof(*z->cur.ev));
		z->cand.n = z->cur.n - 1;
		if (interesting(z, &z->cand)) {
			accept(z);
			any = true;
		}
	}
	return any;
}

/* ---- 3, 4. the schedule and the arguments ---- */

struct simpler {
	struct pt_event ev[MAX_SIMPLER];
	unsigned n;
};

static void add(struct simpler *s, const struct pt_event *ev, enum pt_field f, uint64_t v)
{
	struct pt_event e = *ev;

	if (s->n == MAX_SIMPLER || v == pt_event_get(ev, f))
		return;
	pt_event_set(&e, f, v);
	for (unsigned i = 0; i < s->n; i++)	/* once each */
		if (!memcmp(&s->ev[i], &e, sizeof(e)))
			return;
	s->ev[s->n++] = e;
}

/* sizes a length shrinks to, smallest first: the granule, a contpte block, a PMD, a PUD, and
 * itself rounded down to each */
static void shrink_len(struct simpler *s, const struct pt_event *ev, enum pt_field f)
{
	static const uint64_t sizes[] = { SZ_4K, SZ_64K, SZ_2M, SZ_1G };
	uint64_t len = pt_event_get(ev, f), c[8];
	unsigned n = 0;

	for (unsigned i = 0; i < 4; i++) {
		c[n++] = sizes[i];
		c[n++] = len & ~(sizes[i] - 1);
	}
	for (unsigned i = 0; i < n; i++)	/* ascending: insertion sort of 8 */
		for (unsigned j = i; j > 0 && c[j] < c[j - 1]; j--) {
			uint64_t t = c[j];
			c[j] = c[j - 1];
			c[j - 1] = t;
		}
	for (unsigned i = 0; i < n; i++)
		if (c[i] && c[i] < len)
			add(s, ev, f, c[i]);
}

/* an address aligned down to a PUD, a PMD, a contpte block, a page: the most aligned first;
 * never to 0, which is no address a reader expects there */
static void align_addr(struct simpler *s, const struct pt_event *ev, enum pt_field f)
{
	static const uint64_t sizes[] = { SZ_1G, SZ_2M, SZ_64K, SZ_4K };
	uint64_t a = pt_event_get(ev, f);

	for (unsigned i = 0; i < 4; i++)
		if ((a & ~(sizes[i] - 1)) && (a & ~(sizes[i] - 1)) != a)
			add(s, ev, f, a & ~(sizes[i] - 1));
}

static void drop_bits(struct simpler *s, const struct pt_event *ev, enum pt_field f)
{
	uint64_t v = pt_event_get(ev, f);

	for (unsigned b = 0; b < 64; b++)
		if (v & (1ull << b))
			add(s, ev, f, v & ~(1ull << b));
}

/* The simplifications of ev, in the order they are tried. */
static void simplifications(const struct pt_event *ev, bool schedule, struct simpler *s)
{
	s->n = 0;
	if (schedule) {
		uint64_t steps = ev->len;
		if (ev->kind != PT_EV_SCHED || steps <= 1)
			return;
		add(s, ev, PT_F_LEN, 1);
		add(s, ev, PT_F_LEN, steps / 2);
		add(s, ev, PT_F_LEN, steps - 1);
		return;
	}
	if (ev->kind == PT_EV_SCHED || ev->kind == PT_EV_THREAD || ev->kind == PT_EV_COMMENT)
		return;
	bool ops = pt_kind_schema(ev->kind) && pt_kind_schema(ev->kind)->ops_level;
	/* arch events are what a CPU did: only their flags are the trace author's choice */
	if (ops) {
		/*
		 * an optional key left out (0 is every field's default, and the writer omits it):
		 * the shortest text first.  Not an address (never 0), not prot= (see above), not
		 * asid= (asid 0 is another address space: one left out here and kept on a
		 * thread reads as two), not flags= (bit by bit below); a length only once it is
		 * a page (touch's default).
		 */
		for (const struct pt_key *k = pt_kind_schema(ev->kind)->keys; k->name; k++) {
			enum pt_field f = k->field;
			if (k->req != PT_KEY_OPT || f == PT_F_VA || f == PT_F_VA2 || f == PT_F_PA || f == PT_F_PROT ||
			    f == PT_F_ASID || f == PT_F_FLAGS)
				continue;
			if ((f == PT_F_LEN || f == PT_F_LEN2) && pt_event_get(ev, f) != SZ_4K)
				continue;
			add(s, ev, f, 0);
		}
		if (has_key(ev, PT_F_LEN))
			shrink_len(s, ev, PT_F_LEN);
		if (has_key(ev, PT_F_LEN2))
			shrink_len(s, ev, PT_F_LEN2);
		if (has_key(ev, PT_F_VA))
			align_addr(s, ev, PT_F_VA);
		if (has_key(ev, PT_F_VA2))
			align_addr(s, ev, PT_F_VA2);
		if (has_key(ev, PT_F_PA))
			align_addr(s, ev, PT_F_PA);
		if (has_key(ev, PT_F_ORDER))
			add(s, ev, PT_F_ORDER, 0);
		if (has_key(ev, PT_F_NODE))
			add(s, ev, PT_F_NODE, 0);
	}
	if (has_key(ev, PT_F_FLAGS))
		drop_bits(s, ev, PT_F_FLAGS);
}

/* Each event's simplifications in turn; an accepted one is tried further at once. */
static bool pass_simplify(struct mz *z, bool schedule)
{
	struct simpler s;
	bool any = false;

	z->st->pass = schedule ? "schedule" : "arguments";
	for (size_t i = 0; i < z->cur.n && !z->st->capped; i++) {
		simplifications(&z->cur.ev[i], schedule, &s);
		for (unsigned k = 0; k < s.n && !z->st->capped; k++) {
			z->cand.h = z->cur.h;
			memcpy(z->cand.ev, z->cur.ev, z->cur.n * sizeof(*z->cur.ev));
			z->cand.n = z->cur.n;
			z->cand.ev[i] = s.ev[k];
			if (!interesting(z, &z->cand))
				continue;
			accept(z);
			any = true;
			simplifications(&z->cur.ev[i], schedule, &s);
			k = (unsigned)-1;	/* from the simplest again */
		}
	}
	return any;
}

/* ---- 5. the CPUs ---- */

/* cand = cur on CPUs map[] (old -> new), with cpus CPUs */
static void build_cpus(struct mz *z, const unsigned *map, unsigned cpus)
{
	z->cand.h = z->cur.h;
	z->cand.h.cpus = cpus;
	z->cand.n = z->cur.n;
	for (size_t i = 0; i < z->cur.n; i++) {
		struct pt_event *ev = &z->cand.ev[i];
		*ev = z->cur.ev[i];
		if (ev->kind == PT_EV_COMMENT)
			continue;
		ev->cpu = (uint16_t)map[ev->cpu];
		if (ev->kind == PT_EV_MIGRATE && ev->len < PT_MAX_CPUS)	/* to= is a CPU */
			ev->len = map[ev->len];
	}
}

static bool pass_cpus(struct mz *z)
{
	unsigned map[PT_MAX_CPUS], used = 0, top = 0;
	bool in_use[PT_MAX_CPUS] = { false }, any = false;

	z->st->pass = "cpus";
	for (size_t i = 0; i < z->cur.n; i++) {
		const struct pt_event *ev = &z->cur.ev[i];
		if (ev->kind == PT_EV_COMMENT)
			continue;
		if (ev->cpu < PT_MAX_CPUS)
			in_use[ev->cpu] = true;
		if (ev->kind == PT_EV_MIGRATE && ev->len < PT_MAX_CPUS)
			in_use[ev->len] = true;
	}
	for (unsigned c = 0; c < PT_MAX_CPUS; c++) {
		map[c] = c;
		if (in_use[c]) {
			map[c] = used++;
			top = c + 1;
		}
	}
	if (!used)
		return false;
	/* the used CPUs renumbered 0..used-1, then (if that loses it) only the unused top ones gone */
	if (used < z->cur.h.cpus) {
		build_cpus(z, map, used);
		if (interesting(z, &z->cand)) {
			accept(z);
			return true;
		}
	}
	if (top < z->cur.h.cpus && top != used) {
		for (unsigned c = 0; c < PT_MAX_CPUS; c++)
			map[c] = c;
		build_cpus(z, map, top);
		if (interesting(z, &z->cand)) {
			accept(z);
			any = true;
		}
	}
	return any;
}

/* ---- the rounds ---- */

/* Cut after the event that showed the target: nothing after it can matter. */
static void truncate_after_target(struct mz *z)
{
	struct pt_session *s;
	size_t last = SIZE_MAX;

	mz_replay(&z->cur, z->c->variant, NULL, &s);
	for (unsigned i = 0; s && i < pt_session_nviolations(s); i++) {
		const struct pt_violation *v = pt_session_violation(s, i);
		if (mz_matches(&z->c->target, v)) {
			last = v->event;
			break;
		}
	}
	pt_session_free(s);
	if (last == SIZE_MAX || last + 1 >= z->cur.n)
		return;	/* an end-of-trace check, or the last event */
	z->cand.h = z->cur.h;
	z->cand.n = last + 1;
	memcpy(z->cand.ev, z->cur.ev, z->cand.n * sizeof(*z->cur.ev));
	z->st->pass = "cut after the violation";
	if (interesting(z, &z->cand))
		accept(z);
}

int mz_minimize(const struct mz_config *c, struct mz_trace *t, struct mz_stats *st)
{
	struct mz z = { .c = c, .st = st, .cap = t->n ? t->n : 1 };

	memset(st, 0, sizeof(*st));
	z.cur.h = t->h;
	z.cur.ev = xmalloc(z.cap * sizeof(*z.cur.ev));
	z.cand.ev = xmalloc(z.cap * sizeof(*z.cand.ev));
	z.keep = xmalloc(z.cap * sizeof(*z.keep));
	z.idx = xmalloc(z.cap * sizeof(*z.idx));
	z.owner = xmalloc(z.cap * sizeof(*z.owner));
	/* comments do not run: they go, and with them the text they point at */
	for (size_t i = 0; i < t->n; i++)
		if (t->ev[i].kind != PT_EV_COMMENT)
			z.cur.ev[z.cur.n++] = t->ev[i];
	st->events = z.cur.n;

	truncate_after_target(&z);
	for (bool changed = true; changed && !st->capped;) {
		changed = pass_groups(&z);
		changed |= pass_ddmin(&z);
		changed |= pass_singles(&z);
		changed |= pass_simplify(&z, /* schedule= */true);
		changed |= pass_simplify(&z, /* schedule= */false);
		changed |= pass_cpus(&z);
		st->rounds++;
	}

	free(t->ev);
	t->h = z.cur.h;
	t->ev = z.cur.ev;
	t->n = z.cur.n;
	free(z.cand.ev);
	free(z.keep);
	free(z.idx);
	free(z.owner);
	st->events = t->n;
	return st->capped ? 1 : 0;
}
