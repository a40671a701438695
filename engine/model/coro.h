/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * coro.h - stackful coroutines for model threads: each thread runs its
 * kernel routines as plain C on its own stack and is suspended at the
 * scheduling points (the mm_* primitives).  A switch saves the callee-saved
 * registers and the stack pointer only (x86-64 and AArch64 in assembly;
 * ucontext elsewhere), and tells ASan about the stack change.
 */
#ifndef PTFUZZ_CORO_H
#define PTFUZZ_CORO_H

#include <stdbool.h>
#include <stddef.h>

struct coro {
	void *sp;		/* saved stack pointer while suspended */
	void *stack;		/* base of the allocated stack (NULL: the caller's own stack) */
	size_t size;
	void (*fn)(void *);
	void *arg;
	bool done;
	void *asan_fake;	/* ASan's fake-stack handle across switches */
	void *uctx;		/* ucontext fallback */
};

/*! coro_main() : turn the calling context into a coroutine others can switch back to. */
void coro_main(struct coro *c);
/*! coro_init() : a coroutine that will run fn(arg) on a fresh stack of `size` bytes. */
void coro_init(struct coro *c, size_t size, void (*fn)(void *), void *arg);
/*!
 * coro_reinit() : run fn(arg) from the start on c's stack again, whatever c was doing
 * (a suspended c is abandoned: nothing on its stack is unwound).
 */
void coro_reinit(struct coro *c, void (*fn)(void *), void *arg);
/*! coro_switch() : suspend `from`, resume `to`. */
void coro_switch(struct coro *from, struct coro *to);
void coro_free(struct coro *c);

#endif
