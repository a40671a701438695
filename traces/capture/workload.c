// SPDX-License-Identifier: GPL-2.0-only
/*
 * workload.c - the guest program whose page-table operations ptt_plugin.so
 * records.  Static aarch64 binary, run as the initramfs's workload:
 *
 *   workload [iterations [mode]]
 *
 * mode "basic" (default): PMD-aligned and unaligned mremap, mprotect,
 * munmap, madvise(DONTNEED), mremap growth, a THP (huge PMD) moved by
 * mremap, a THP split by an mprotect of one page (its PTEs come back as
 * contpte blocks, the block holding the page is unfolded);
 * mode "contpte-mprotect": also mprotect a whole 64 KiB contpte block of the
 * split THP (the kernel changes the block's permission without unfolding).
 *
 * Every operation is bracketed by marker instructions (HINT #0x6a, a NOP on
 * hardware) that the plugin turns into `begin <op> va= len= asid=` / `end`;
 * the first marker starts the recording, the last one stops it.  The
 * process pins itself to CPU 0 so that an operation begins and ends on the
 * CPU that runs it.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAGIC 0x7074666dul
enum { CMD_START = 1, CMD_STOP = 2, CMD_BEGIN = 3, CMD_END = 4, CMD_NOTE = 5 };
enum { OP_OTHER = 0, OP_MMAP, OP_MUNMAP, OP_MREMAP, OP_MPROTECT, OP_MADVISE, OP_FAULT };

#define K 1024ul
#define M (1024ul * K)
#define PAGE 4096ul

static void marker(unsigned long cmd, unsigned long a, unsigned long b, unsigned long c, unsigned long d)
{
	register unsigned long x0 __asm__("x0") = MAGIC;
	register unsigned long x1 __asm__("x1") = cmd;
	register unsigned long x2 __asm__("x2") = a;
	register unsigned long x3 __asm__("x3") = b;
	register unsigned long x4 __asm__("x4") = c;
	register unsigned long x5 __asm__("x5") = d;
	__asm__ volatile("hint #0x6a" : : "r"(x0), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
}

/* a comment in the trace: up to 32 characters */
static void note(const char *s)
{
	unsigned long w[4] = { 0 };
	strncpy((char *)w, s, sizeof(w) - 1);
	marker(CMD_NOTE, w[0], w[1], w[2], w[3]);
}

#define BEGIN(k, va, len) marker(CMD_BEGIN, (k), (unsigned long)(va), (len), 0)
#define END() marker(CMD_END, 0, 0, 0, 0)

static void die(const char *what)
{
	perror(what);
	marker(CMD_STOP, 0, 0, 0, 0);
	exit(1);
}

static char *map(unsigned long len, int hugepage)
{
	BEGIN(OP_MMAP, 0, len);
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	END();
	if (p == MAP_FAILED)
		die("mmap");
	BEGIN(OP_MADVISE, p, len);
	madvise(p, len, hugepage ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	END();
	return p;
}

/* an aligned region of len inside a fresh mapping of len + align */
static char *map_aligned(unsigned long len, unsigned long align, int hugepage)
{
	char *p = map(len + align, hugepage);
	char *a = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	return a;
}

static void touch(char *p, unsigned long len, int v)
{
	BEGIN(OP_FAULT, p, len);
	for (unsigned long o = 0; o < len; o += PAGE)
		p[o] = (char)v;
	END();
}

static void unmap(void *p, unsigned long len)
{
	BEGIN(OP_MUNMAP, p, len);
	if (munmap(p, len))
		die("munmap");
	END();
}

static void *remap(void *old, unsigned long olen, unsigned long nlen, int flags, void *dst)
{
	BEGIN(OP_MREMAP, old, olen);
	void *r = mremap(old, olen, nlen, flags, dst);
	END();
	if (r == MAP_FAILED)
		die("mremap");
	return r;
}

static void protect(void *p, unsigned long len, int prot)
{
	BEGIN(OP_MPROTECT, p, len);
	if (mprotect(p, len, prot))
		die("mprotect");
	END();
}

static void advise(void *p, unsigned long len, int adv)
{
	BEGIN(OP_MADVISE, p, len);
	if (madvise(p, len, adv))
		die("madvise");
	END();
}

static void check(const char *p, int v, const char *what)
{
	if (*p != (char)v) {
		fprintf(stderr, "workload: %s: content lost\n", what);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 1;
	int whole_block = argc > 2 && !strcmp(argv[2], "contpte-mprotect");
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");

	/* warm up, then start: the plugin takes its snapshot at the next kernel barrier,
	 * which the unbracketed munmap below provides */
	char *warm = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(warm, 1, 16 * PAGE);
	marker(CMD_START, 0, 0, 0, 0);
	munmap(warm, 16 * PAGE);
	sched_yield();

	for (int it = 0; it < iters; it++) {
		/* 1. PMD-aligned 2 MiB mremap of PTE-mapped memory (MOVE_PMD) */
		note("pmd-aligned 2M mremap");
		char *src = map_aligned(2 * M, 2 * M, 0);
		char *dst = map_aligned(2 * M, 2 * M, 0);
		unmap(dst, 2 * M);	/* leave a hole at an aligned destination */
		touch(src, 2 * M, 1);
		char *moved = remap(src, 2 * M, 2 * M, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
		check(moved + M, 1, "pmd mremap");

		/* 2. unaligned mremap: 5 pages from 3 pages in, to a new place */
		note("unaligned mremap");
		char *u = remap(moved + 3 * PAGE, 5 * PAGE, 5 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
				moved + M + 7 * PAGE);
		check(u, 1, "unaligned mremap");

		/* 3. mprotect read-only of 1 MiB, then back */
		note("mprotect 1M");
		protect(moved + M, M, PROT_READ);
		protect(moved + M, M, PROT_READ | PROT_WRITE);
		touch(moved + M, M, 2);

		/* 4. munmap 64 KiB in the middle of a touched region */
		note("munmap 64K");
		unmap(moved + 256 * K, 64 * K);

		/* 5. madvise(DONTNEED) 256 KiB, touch again */
		note("madvise dontneed 256K");
		advise(moved + 512 * K, 256 * K, MADV_DONTNEED);
		touch(moved + 512 * K, 256 * K, 3);

		/* 6. grow in place / move on grow */
		note("mremap grow");
		char *g = map(64 * K, 0);
		touch(g, 64 * K, 4);
		g = remap(g, 64 * K, 256 * K, MREMAP_MAYMOVE, NULL);
		touch(g, 256 * K, 5);

		/* 7. THP: a huge PMD moved by mremap (move_huge_pmd) */
		note("thp mremap");
		char *h = map_aligned(2 * M, 2 * M, 1);
		touch(h, 2 * M, 6);
		char *hd = map_aligned(2 * M, 2 * M, 0);
		unmap(hd, 2 * M);
		h = remap(h, 2 * M, 2 * M, MREMAP_MAYMOVE | MREMAP_FIXED, hd);
		check(h + M, 6, "thp mremap");

		/* 7b. the THP split by an mprotect of one page: the PMD becomes a PTE table (contpte
		 * blocks), the block holding the page is unfolded; then back */
		note("thp split, mprotect 4K");
		protect(h + 68 * K, 4 * K, PROT_READ);
		protect(h + 68 * K, 4 * K, PROT_READ | PROT_WRITE);
		touch(h + 64 * K, 64 * K, 7);
		if (whole_block) {
			/* 7c. a whole contpte block read-only and back */
			note("contpte block mprotect 64K");
			protect(h + 128 * K, 64 * K, PROT_READ);
			protect(h + 128 * K, 64 * K, PROT_READ | PROT_WRITE);
			touch(h + 128 * K, 64 * K, 8);
		}

		/* 8. tear everything down */
		note("teardown");
		unmap(h, 2 * M);
		unmap(g, 256 * K);
		unmap(moved, 2 * M);
	}
	marker(CMD_STOP, 0, 0, 0, 0);
	printf("workload: %d iteration(s) done\n", iters);
	return 0;
}
