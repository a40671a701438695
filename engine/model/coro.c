/* SPDX-License-Identifier: GPL-2.0-only */
/* coro.c - stackful coroutines (see coro.h). */
#include "coro.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CORO_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CORO_ASAN 1
#endif

#ifdef CORO_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old, size_t *size_old);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#endif

static __thread struct coro *current;

#if defined(__x86_64__) || defined(__aarch64__)
#define CORO_ASM 1
void ptfuzz_coro_swap(void **save_sp, void *new_sp);
#if defined(__x86_64__)
/* callee-saved: rbx rbp r12-r15 (System V AMD64 ABI) */
__asm__(".text\n"
	".globl ptfuzz_coro_swap\n"
	".type ptfuzz_coro_swap,@function\n"
	"ptfuzz_coro_swap:\n"
	"	pushq %rbp\n	pushq %rbx\n	pushq %r12\n	pushq %r13\n	pushq %r14\n	pushq %r15\n"
	"	movq %rsp, (%rdi)\n"
	"	movq %rsi, %rsp\n"
	"	popq %r15\n	popq %r14\n	popq %r13\n	popq %r12\n	popq %rbx\n	popq %rbp\n"
	"	ret\n"
	".size ptfuzz_coro_swap,.-ptfuzz_coro_swap\n"
	".section .note.GNU-stack,\"\",@progbits\n"
	".text\n");
#else
/* callee-saved: x19-x29, x30 (lr), d8-d15 (AAPCS64) */
__asm__(".text\n"
	".globl ptfuzz_coro_swap\n"
	".type ptfuzz_coro_swap,%function\n"
	"ptfuzz_coro_swap:\n"
	"	sub sp, sp, #160\n"
	"	stp x19, x20, [sp, #0]\n	stp x21, x22, [sp, #16]\n	stp x23, x24, [sp, #32]\n"
	"	stp x25, x26, [sp, #48]\n	stp x27, x28, [sp, #64]\n	stp x29, x30, [sp, #80]\n"
	"	stp d8, d9, [sp, #96]\n	stp d10, d11, [sp, #112]\n	stp d12, d13, [sp, #128]\n"
	"	stp d14, d15, [sp, #144]\n"
	"	mov x2, sp\n	str x2, [x0]\n	mov sp, x1\n"
	"	ldp x19, x20, [sp, #0]\n	ldp x21, x22, [sp, #16]\n	ldp x23, x24, [sp, #32]\n"
	"	ldp x25, x26, [sp, #48]\n	ldp x27, x28, [sp, #64]\n	ldp x29, x30, [sp, #80]\n"
	"	ldp d8, d9, [sp, #96]\n	ldp d10, d11, [sp, #112]\n	ldp d12, d13, [sp, #128]\n"
	"	ldp d14, d15, [sp, #144]\n"
	"	add sp, sp, #160\n"
	"	ret\n"
	".size ptfuzz_coro_swap,.-ptfuzz_coro_swap\n"
	".section .note.GNU-stack,\"\",%progbits\n"
	".text\n");
#endif
#else
#include <ucontext.h>
#endif

static void coro_entry(void)
{
	struct coro *c = current;
#ifdef CORO_ASAN
	__sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
	c->fn(c->arg);
	/* fn must switch away for good; a coroutine never returns into nothing */
	abort();
}

void coro_main(struct coro *c)
{
	memset(c, 0, sizeof(*c));
#ifdef CORO_ASAN
	pthread_attr_t a;
	if (!pthread_getattr_np(pthread_self(), &a)) {
		pthread_attr_getstack(&a, &c->stack, &c->size);
		pthread_attr_destroy(&a);
	}
	c->stack = NULL;	/* not ours to free; the bounds are looked up again at switch */
#endif
	current = c;
}

void coro_init(struct coro *c, size_t size, void (*fn)(void *), void *arg)
{
	memset(c, 0, sizeof(*c));
	c->size = size;
	c->stack = malloc(size);
	if (!c->stack)
		abort();
	coro_reinit(c, fn, arg);
}

void coro_reinit(struct coro *c, void (*fn)(void *), void *arg)
{
	size_t size = c->size;
#ifdef CORO_ASAN
	/* frames abandoned on the stack left their redzones poisoned */
	__asan_unpoison_memory_region(c->stack, size);
#endif
	free(c->uctx);
	c->uctx = NULL;
	c->done = false;
	c->asan_fake = NULL;
	c->fn = fn;
	c->arg = arg;
#ifdef CORO_ASM
	uintptr_t top = ((uintptr_t)c->stack + size) & ~(uintptr_t)15;
	uint64_t *sp = (uint64_t *)top;
#if defined(__x86_64__)
	*--sp = 0;				/* fake return address of coro_entry: keeps the ABI alignment */
	*--sp = (uint64_t)(uintptr_t)coro_entry;	/* where the first swap "returns" */
	for (int i = 0; i < 6; i++)
		*--sp = 0;			/* rbp rbx r12-r15 */
#else
	sp -= 20;				/* x19-x30, d8-d15 */
	memset(sp, 0, 160);
	sp[11] = (uint64_t)(uintptr_t)coro_entry;	/* x30: the first swap returns there */
#endif
	c->sp = sp;
#else
	ucontext_t *u = calloc(1, sizeof(*u));
	if (!u || getcontext(u))
		abort();
	u->uc_stack.ss_sp = c->stack;
	u->uc_stack.ss_size = size;
	makecontext(u, coro_entry, 0);
	c->uctx = u;
#endif
}

void coro_switch(struct coro *from, struct coro *to)
{
#ifdef CORO_ASAN
	const void *bottom = to->stack;
	size_t size = to->size;
	if (!bottom) {	/* the main stack */
		pthread_attr_t a;
		void *b = NULL;
		if (!pthread_getattr_np(pthread_self(), &a)) {
			pthread_attr_getstack(&a, &b, &size);
			pthread_attr_destroy(&a);
		}
		bottom = b;
	}
	__sanitizer_start_switch_fiber(from->done ? NULL : &from->asan_fake, bottom, size);
#endif
	current = to;
#ifdef CORO_ASM
	ptfuzz_coro_swap(&from->sp, to->sp);
#else
	if (!from->uctx) {
		from->uctx = calloc(1, sizeof(ucontext_t));
		if (!from->uctx)
			abort();
	}
	swapcontext(from->uctx, to->uctx);
#endif
#ifdef CORO_ASAN
	__sanitizer_finish_switch_fiber(from->asan_fake, NULL, NULL);
#endif
}

void coro_free(struct coro *c)
{
	free(c->stack);
	free(c->uctx);
	c->stack = NULL;
	c->uctx = NULL;
}
