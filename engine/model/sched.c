/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sched.c - deterministic interleaving of model threads.
 *
 * A `cpuN thread tid=T` event makes T a scheduled thread on CPU N: the
 * ops-level events that follow for CPU N are queued to it instead of running
 * at once.  T runs its queue on its own stack (coro.h) and is suspended at
 * every scheduling point: each shared page-table read, and each arch event
 * it emits (store, TLBI, barrier, lock, page alloc/free, access).  A
 * `sched [KIND] tid=T steps=K` event resumes T until it has passed K
 * scheduling points of KIND (any kind if omitted; K=0: until its queue is
 * empty); it stops right after the K-th.  The schedule is therefore part of
 * the trace, and every run of it is the same.
 *
 * Switching a thread in on a CPU emits `switch` (__switch_to(): dsb(ish)
 * unless the switch-to-no-dsb variant); `migrate` switches it out of its CPU
 * so that it resumes elsewhere.  A lock held by another thread makes a
 * thread wait: it yields, and resumes only when the lock is free, so a
 * schedule cannot break mutual exclusion.  At the end of the trace every
 * queued op runs to completion, threads taking turns in tid order.
 *
 * An op issued directly on a CPU (no scheduled thread there) runs at once, to
 * its end, on the main stack — unless another thread is suspended in the
 * middle of an op, and so may hold a lock the direct op needs.  Then it runs
 * on the CPU's built-in thread, now *implicit*, on its own stack, as far as
 * it can: if it has to wait for a lock, it stays queued, with the ops the
 * trace issues on that CPU after it, and resumes as soon as the lock is free
 * (after the `sched` slice or `migrate` that freed it, or at the end of the
 * trace; a cycle of waits is the I11 deadlock verdict).  A real CPU would
 * block in the same place; the lock is never broken.  Waiting direct ops run
 * one at a time, each to its end (or its next wait), the earliest issued
 * first, so direct ops never interleave with each other.  Once its queue is
 * empty the thread is a plain built-in thread again.
 */
#include <stdlib.h>
#include <string.h>

#include "coro.h"
#include "mm_internal.h"

#define STACK_SIZE (256u << 10)
#define DRAIN_SLICE 64

static struct mm_thread *find_thread(struct mm_model *mm, uint32_t tid)
{
	if (tid < mm->ncpus)
		return &mm->thread[tid];
	for (unsigned i = 0; i < mm->nextra; i++)
		if (mm->extra[i]->tid == tid)
			return mm->extra[i];
	return NULL;
}

static void yield(struct mm_model *mm, struct mm_thread *t)
{
	mm->running = NULL;
	coro_switch(t->co, mm->main_co);
	mm->running = t;
	/* the routine it resumes in names what it reports, not the last one another thread ran */
	pt_checker_set_site(mm->c, t->site);
}

/* The body of a scheduled thread: run what is queued, then wait for more. */
static void thread_body(void *arg)
{
	struct mm_thread *t = arg;
	struct mm_model *mm = t->owner;
	for (;;) {
		while (t->qhead < t->qn) {
			t->cur_seq = t->qseq[t->qhead];
			struct pt_event ev = t->queue[t->qhead++];
			t->busy = true;
			mm->nbusy++;
			t->rc = mm_run_op(mm, t, &ev);
			t->busy = false;
			mm->nbusy--;
			if (t->implicit)
				yield(mm, t);	/* direct ops run one at a time, in issue order */
		}
		t->qhead = t->qn = 0;
		yield(mm, t);
	}
}

static void start_thread(struct mm_model *mm, struct mm_thread *t)
{
	t->owner = mm;
	if (!t->co) {	/* an implicit thread keeps its stack, parked in thread_body() */
		if (mm->nco_pool) {
			t->co = mm->co_pool[--mm->nco_pool];
			coro_reinit(t->co, thread_body, t);
		} else {
			if (!(t->co = malloc(sizeof(*t->co))))
				abort();
			coro_init(t->co, STACK_SIZE, thread_body, t);
		}
	}
	t->scheduled = true;
	mm->started = true;
	t->budget = 0;
}

/* __switch_to() on t's CPU when t is not the thread the machine last saw there. */
static void switch_in(struct mm_model *mm, struct mm_thread *t)
{
	if (mm->cpu_tid[t->cpu] == t->tid)
		return;
	struct pt_event ev = { .kind = PT_EV_SWITCH, .cpu = (uint16_t)t->cpu, .tid = t->tid };
	if (mm_variant(mm, MMV_SWITCH_TO_NO_DSB))
		ev.flags = PT_SWITCH_NO_DSB;
	mm->sink.emit(mm->sink.ctx, &ev);
	mm->cpu_tid[t->cpu] = t->tid;
}

static bool has_work(const struct mm_thread *t)
{
	return t->busy || t->qhead < t->qn;
}

/* Resume t for one slice; returns the number of scheduling points it passed. */
static uint64_t run_slice(struct mm_model *mm, struct mm_thread *t, unsigned on, uint64_t steps)
{
	if (!has_work(t))
		return 0;
	switch_in(mm, t);
	t->budget_on = on;
	t->budget = steps ? steps : UINT64_MAX;
	uint64_t before = t->steps_total;
	mm->running = t;
	coro_switch(mm->main_co, t->co);
	mm->running = NULL;
	return t->steps_total - before;
}

/* mm_sched_point() of a thread on its own stack: a call of its own, so that the point of one
 * that is not (the common case: every arch event passes one) costs its callers no registers */
static __attribute__((noinline)) void sched_point_scheduled(struct mm_model *mm, struct mm_thread *t, unsigned on)
{
	while (t->budget == 0)
		yield(mm, t);
	t->steps_total++;
	if (t->budget != UINT64_MAX && (t->budget_on == PT_SCHED_ANY || t->budget_on == on))
		t->budget--;
}

void mm_sched_point(struct mm_model *mm, struct mm_thread *t, unsigned on)
{
	if (mm->running != t)
		return;		/* not on its own stack: an op run to completion, or an IRQ */
	sched_point_scheduled(mm, t, on);
}

/*
 * Take `total` points at once, `counted` of them against the budget, if one by one none would
 * find the budget used up: it must cover the counted points if the last point is one of them
 * (it may end there), and outlast them if not (a thread with budget 0 stops at a point of any
 * kind).  An unlimited budget counts none (counted 0, last_counted true).
 */
static bool sched_take(struct mm_thread *t, uint64_t total, uint64_t counted, bool last_counted)
{
	if (last_counted ? t->budget < counted : t->budget <= counted)
		return false;
	t->steps_total += total;
	t->budget -= counted;
	return true;
}

/*
 * n scheduling points of kind `on` in a row, with nothing between them but the events they
 * precede and loop steps: when no thread could run at any of them (the thread is not on its
 * own stack, or its budget covers all of them), they are taken at once, as mm_sched_point()
 * would take them one by one, and the answer is true; otherwise nothing is taken.
 */
bool mm_sched_points(struct mm_model *mm, struct mm_thread *t, unsigned on, uint64_t n)
{
	if (mm->running != t)
		return true;
	uint64_t counted = 0;
	if (t->budget != UINT64_MAX)
		counted = t->budget_on == PT_SCHED_ANY || t->budget_on == on ? n : 0;
	return sched_take(t, n, counted, counted != 0);
}

/*
 * n points of kind `on` and nlast of kind `last`, the last of all one of kind `last`: one by one
 * the thread would stop at the first point that finds its budget used up, so all of them go at
 * once if the budget outlasts every point but the last, whatever their order (it is less by the
 * points it counts before each): sched_take() with the last point's kind.
 */
bool mm_sched_points_last(struct mm_model *mm, struct mm_thread *t, unsigned on, uint64_t n, unsigned last,
			  uint64_t nlast)
{
	if (mm->running != t)
		return true;
	uint64_t counted = 0;
	bool last_counted = true;
	if (t->budget != UINT64_MAX) {
		last_counted = t->budget_on == PT_SCHED_ANY || t->budget_on == last;
		counted = t->budget_on == PT_SCHED_ANY ? n + nlast :
			  (t->budget_on == on ? n : 0) + (t->budget_on == last ? nlast : 0);
	}
	return sched_take(t, n + nlast, counted, last_counted);
}

/* mm_wait_lock() of a thread on its own stack (a call of its own, as sched_point_scheduled()) */
static __attribute__((noinline)) void wait_lock_scheduled(struct mm_model *mm, struct mm_thread *t,
							  enum pt_lock_class cls, uint64_t key, bool write)
{
	for (;;) {
		bool held_w = false;
		uint32_t holder = pt_machine_lock_holder(mm->m, cls, key, &held_w);
		if (holder == UINT32_MAX || (held_w && holder == t->tid))
			return;
		if (cls == PT_LOCK_MMAP && !write && !held_w)
			return;	/* readers share */
		/* held for read by others (or by this thread: an upgrade would deadlock), or for
		 * write by another thread: wait */
		t->blocked = true;
		yield(mm, t);
		t->blocked = false;
	}
}

void mm_wait_lock(struct mm_model *mm, struct mm_thread *t, enum pt_lock_class cls, uint64_t key, bool write)
{
	/* outside a schedule (not on its own stack) nobody could release it, whoever holds it: no
	 * need to ask the machine who does (a lookup that changes nothing); a yield comes back with
	 * the thread on its own stack again */
	if (mm->running != t)
		return;
	wait_lock_scheduled(mm, t, cls, key, write);
}

/* The issue order of the op an implicit thread runs next (or waits in). */
static uint64_t next_seq(const struct mm_thread *t)
{
	return t->busy ? t->cur_seq : t->qseq[t->qhead];
}

/* Run an implicit thread's next op to its end, or until it waits for a lock; with nothing left
 * it is a plain built-in thread again.  True if it got anywhere. */
static bool run_implicit(struct mm_model *mm, struct mm_thread *t)
{
	uint32_t qhead = t->qhead;
	bool busy = t->busy;
	bool moved = run_slice(mm, t, PT_SCHED_ANY, 0) || t->qhead != qhead || t->busy != busy;
	if (!has_work(t))
		t->scheduled = t->implicit = false;
	return moved;
}

/* Direct ops that wait run as soon as they can, one op at a time, the earliest issued first,
 * until every implicit thread left waits for a lock.  True if any got anywhere. */
static bool resume_implicit(struct mm_model *mm)
{
	bool any = false;
	for (uint64_t after = 0;;) {
		/* the earliest op, issued after `after`, of an implicit thread */
		struct mm_thread *best = NULL;
		for (unsigned i = 0; i < mm->ncpus; i++) {
			struct mm_thread *t = &mm->thread[i];
			if (t->implicit && has_work(t) && next_seq(t) >= after &&
			    (!best || next_seq(t) < next_seq(best)))
				best = t;
		}
		if (!best)
			return any;
		uint64_t seq = next_seq(best);
		if (run_implicit(mm, best)) {
			any = true;
			after = 0;	/* an op ran: the earliest may go on now */
		} else {
			after = seq + 1;	/* it waits: try the next one */
		}
	}
}

static bool other_busy(const struct mm_model *mm, const struct mm_thread *self)
{
	if (!mm->started)
		return false;	/* no thread was scheduled since the reset: none is */
	for (unsigned i = 0; i < mm->ncpus; i++)
		if (&mm->thread[i] != self && mm->thread[i].scheduled && has_work(&mm->thread[i]))
			return true;
	for (unsigned i = 0; i < mm->nextra; i++)
		if (mm->extra[i]->scheduled && has_work(mm->extra[i]))
			return true;
	return false;
}

int mm_queue_op(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev);

int mm_run_direct(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	if (!t->scheduled && !other_busy(mm, t))
		return mm_run_op(mm, t, ev);	/* nobody can hold a lock it needs: run it here */
	if (!t->scheduled) {
		start_thread(mm, t);
		t->implicit = true;
	}
	mm_queue_op(mm, t, ev);
	if (t->blocked)
		return 0;	/* behind an op that waits: it runs when that one can go on */
	resume_implicit(mm);
	return t->implicit ? 0 : t->rc;
}

int mm_queue_op(struct mm_model *mm, struct mm_thread *t, const struct pt_event *ev)
{
	if (!has_work(t))
		t->qhead = t->qn = 0;
	if (t->qn == t->qcap) {
		t->qcap = t->qcap ? t->qcap * 2 : 16;
		t->queue = realloc(t->queue, t->qcap * sizeof(*t->queue));
		t->qseq = realloc(t->qseq, t->qcap * sizeof(*t->qseq));
		if (!t->queue || !t->qseq)
			abort();
	}
	t->queue[t->qn] = *ev;
	t->queue[t->qn].text = NULL;
	t->qseq[t->qn] = ++mm->op_seq;
	t->qn++;
	return 0;
}

int mm_sched_event(struct mm_model *mm, const struct pt_event *ev)
{
	if (ev->kind == PT_EV_THREAD) {
		struct mm_thread *t = find_thread(mm, ev->tid);
		if (!t) {
			if (mm->nextra == MM_MAX_THREADS || ev->tid == MM_IDLE_TID)
				return EINVAL;
			t = calloc(1, sizeof(*t));
			if (!t)
				abort();
			t->tid = ev->tid;
			mm->extra[mm->nextra++] = t;
		}
		if (t->scheduled && !t->implicit)
			return EEXIST;
		t->implicit = false;	/* a built-in thread with direct ops left: they stay its own */
		t->cpu = ev->cpu;
		mm->on_cpu[ev->cpu] = t;
		start_thread(mm, t);
		return 0;
	}
	/* PT_EV_SCHED */
	struct mm_thread *t = find_thread(mm, ev->tid);
	if (!t || !t->scheduled)
		return EINVAL;
	run_slice(mm, t, ev->op, ev->len);
	resume_implicit(mm);	/* direct ops the slice unblocked */
	return 0;
}

bool mm_model_migrate(struct mm_model *mm, const struct pt_event *ev)
{
	struct mm_thread *t = find_thread(mm, ev->tid);
	if (!t || !t->scheduled || ev->len >= mm->ncpus)
		return false;
	/* switched out where it ran: __switch_to() completes its stores and TLB maintenance there */
	if (mm->cpu_tid[t->cpu] == t->tid) {
		struct pt_event out = { .kind = PT_EV_SWITCH, .cpu = (uint16_t)t->cpu, .tid = MM_IDLE_TID };
		if (mm_variant(mm, MMV_SWITCH_TO_NO_DSB))
			out.flags = PT_SWITCH_NO_DSB;
		mm->sink.emit(mm->sink.ctx, &out);
		mm->cpu_tid[t->cpu] = MM_IDLE_TID;
	}
	if (mm->on_cpu[t->cpu] == t)
		mm->on_cpu[t->cpu] = &mm->thread[t->cpu];
	t->cpu = (unsigned)ev->len;
	mm->on_cpu[t->cpu] = t;
	resume_implicit(mm);
	return true;
}

/*
 * An arch-level record of the trace (an access) on a CPU whose thread is stopped in the
 * middle of an op: nothing runs there then but an interrupt (a switch is a `sched` of
 * another thread, a `migrate`).  The routine's next instruction is its own, never the
 * trace's: the record is the handler's, on top of the stopped routine, inside
 * irq_enter/irq_exit (issue 7: an access between flush_tlb_kernel_range()'s DSB ISH and
 * its ISB, in __purge_vmap_area_lazy(), read as the routine's own was an I6).
 */
bool mm_model_interrupt(struct mm_model *mm, const struct pt_event *ev)
{
	if (ev->kind != PT_EV_ACCESS || ev->cpu >= mm->ncpus)
		return false;
	struct mm_thread *t = mm_thread_of(mm, ev);
	if (!t->busy || mm->running == t)
		return false;
	struct pt_event in = { .kind = PT_EV_IRQ_ENTER, .cpu = ev->cpu };
	struct pt_event out = { .kind = PT_EV_IRQ_EXIT, .cpu = ev->cpu };
	mm->sink.emit(mm->sink.ctx, &in);
	mm->sink.emit(mm->sink.ctx, ev);
	mm->sink.emit(mm->sink.ctx, &out);
	return true;
}

static void for_each_thread(struct mm_model *mm, void (*fn)(struct mm_model *, struct mm_thread *, void *),
			    void *ctx)
{
	for (unsigned i = 0; i < mm->ncpus; i++)
		fn(mm, &mm->thread[i], ctx);
	for (unsigned i = 0; i < mm->nextra; i++)
		fn(mm, mm->extra[i], ctx);
}

struct drain { uint64_t progress; bool work; };

static void drain_one(struct mm_model *mm, struct mm_thread *t, void *ctx)
{
	struct drain *d = ctx;
	if (t->implicit && has_work(t))
		d->work = true;	/* resume_implicit() runs them */
	if (!t->scheduled || t->implicit || !has_work(t))
		return;
	d->work = true;
	/* progress: scheduling points passed, or queued ops done (an op that finds nothing to do,
	 * e.g. pageout of an unmapped address, may end without passing one) */
	uint32_t qhead = t->qhead, qn = t->qn;
	d->progress += run_slice(mm, t, PT_SCHED_ANY, DRAIN_SLICE);
	if (!has_work(t) || t->qhead != qhead || t->qn != qn)
		d->progress++;
}

void mm_model_finish(struct mm_model *mm)
{
	for (;;) {
		struct drain d = { 0, false };
		if (resume_implicit(mm))
			d.progress++;
		for_each_thread(mm, drain_one, &d);
		if (!d.work)
			return;
		if (!d.progress) {
			/* every thread with work waits for a lock another one holds */
			pt_checker_report(mm->c, PT_I11, "deadlock",
					  "A page-table routine makes progress: every remaining thread waits for a lock "
					  "another one holds.",
					  0, 0, 0, 0, NULL, "the threads left at the end of the trace deadlock on locks");
			return;
		}
	}
}

static void free_thread(struct mm_model *mm, struct mm_thread *t, void *ctx)
{
	(void)mm;
	(void)ctx;
	if (t->co) {
		coro_free(t->co);
		free(t->co);
	}
	free(t->queue);
	free(t->qseq);
}

void mm_sched_free(struct mm_model *mm)
{
	for_each_thread(mm, free_thread, NULL);
	for (unsigned i = 0; i < mm->nextra; i++)
		free(mm->extra[i]);
	if (mm->main_co)
		free(mm->main_co);
	for (unsigned i = 0; i < mm->nco_pool; i++) {
		coro_free(mm->co_pool[i]);
		free(mm->co_pool[i]);
	}
}

/* A reset: the thread goes, its coroutine waits in the pool for the next session's threads. */
static void pool_thread(struct mm_model *mm, struct mm_thread *t, void *ctx)
{
	(void)ctx;
	if (t->co && mm->nco_pool < sizeof(mm->co_pool) / sizeof(mm->co_pool[0])) {
		mm->co_pool[mm->nco_pool++] = t->co;
		t->co = NULL;
	}
	free_thread(mm, t, NULL);
}

void mm_sched_reset(struct mm_model *mm)
{
	for_each_thread(mm, pool_thread, NULL);
	for (unsigned i = 0; i < mm->nextra; i++)
		free(mm->extra[i]);
	mm->nextra = 0;
	memset(mm->thread, 0, mm->ncpus * sizeof(mm->thread[0]));
	mm->nbusy = 0;	/* a thread that never finished (a deadlock) went with the rest */
	mm->started = false;
}

void mm_sched_init(struct mm_model *mm)
{
	mm->main_co = malloc(sizeof(*mm->main_co));
	if (!mm->main_co)
		abort();
	coro_main(mm->main_co);
}
