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
 * split THP (the kernel changes the block's permission without unfolding);
 * mode "mremap-test": the 13 configurations of the kernel's
 * tools/testing/selftests/mm/mremap_test.c, done as the selftest does them
 * (remap_region(): MAP_SHARED anonymous sources placed with
 * MAP_FIXED_NOREPLACE at an odd multiple of their alignment, the first 4 MiB
 * written, MREMAP_MAYMOVE | MREMAP_FIXED to a free destination of the
 * requested alignment, read back, unmapped): PTE, PMD and PUD moves, 2 GiB
 * ones included (vm.overcommit_memory is set to 1 first: a 2 GiB MAP_SHARED
 * mapping is more than the heuristic lets a 1 GiB guest reserve);
 * mode "mprotect-sizes": mprotect of part of, one block of and all of 4K
 * pages, 64 KiB mTHP folios (contpte; sysfs hugepages-64kB enabled for it)
 * and a 2 MiB THP (change_huge_pmd, then a split);
 * mode "unmap-madvise": partial munmap and madvise(DONTNEED, FREE, PAGEOUT)
 * of the same three kinds of memory (no swap in the guest: PAGEOUT discards
 * lazily freed pages only);
 * mode "fork-cow": fork with 4K, mTHP and THP memory (copy_page_range()
 * write-protects the parent's entries, dup_mmap() flushes the parent's ASID),
 * copy-on-write faults in the parent while the child lives, and the reuse
 * after it exited (only the parent's address space is recorded);
 * mode "vmalloc": kernel vmalloc / vfree driven from user space: BPF array
 * maps (bpf_map_area_alloc(): vmalloc; freed from a workqueue: vfree), an
 * mmapable one mapped into user space (remap_vmalloc_range()), enough of them
 * freed to make the kernel purge its lazily freed areas (a kernel TLB flush),
 * and a module loaded and removed (/ts_kmp.ko from Debian's modules: module
 * memory is vmalloc'ed, made read-only, and vfree'd on removal).
 *
 * Every operation is bracketed by marker instructions (HINT #0x6a, a NOP on
 * hardware) that the plugin turns into `begin <op> va= len= asid=` / `end`;
 * the first marker starts the recording, the last one stops it.  The
 * process pins itself to CPU 0 so that an operation begins and ends on the
 * CPU that runs it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAGIC 0x7074666dul
enum { CMD_START = 1, CMD_STOP = 2, CMD_BEGIN = 3, CMD_END = 4, CMD_NOTE = 5 };
enum { OP_OTHER = 0, OP_MMAP, OP_MUNMAP, OP_MREMAP, OP_MPROTECT, OP_MADVISE, OP_FAULT };

#define K 1024ul
#define M (1024ul * K)
#define G (1024ul * M)
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
	memcpy(w, s, strnlen(s, sizeof(w) - 1));
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

/* one iteration of modes basic and contpte-mprotect */
static void basic(int whole_block)
{
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

/* ---- mode mremap-test: tools/testing/selftests/mm/mremap_test.c ---- */

#define THRESHOLD (4 * M)	/* VALIDATION_DEFAULT_THRESHOLD: the part written and checked */

struct mremap_config {
	const char *name;
	unsigned long src_align, dest_align, size;
	int overlapping, expect_failure;
};

/* is_remap_region_valid(): no mapping of /proc/self/maps meets [addr, addr + size) */
static int region_free(unsigned long addr, unsigned long size)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int ok = 1;
	if (!f)
		die("/proc/self/maps");
	while (ok && fgets(line, sizeof(line), f)) {
		unsigned long s, e;
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < addr + size && addr < e)
			ok = 0;
	}
	fclose(f);
	return ok;
}

/* get_source_mapping(): MAP_SHARED anonymous, at the first odd multiple of the alignment above
 * mmap_min_addr + 40 MiB that is free (MAP_FIXED_NOREPLACE); NULL if the mmap fails otherwise */
static char *mremap_source(const struct mremap_config *c)
{
	unsigned long addr = 0, min = 65536 + 10 * 4 * M;
	for (;;) {
		addr += c->src_align;
		if (addr < min)
			continue;
		BEGIN(OP_MMAP, addr, c->size);
		char *p = mmap((void *)addr, c->size, PROT_READ | PROT_WRITE,
			       MAP_FIXED_NOREPLACE | MAP_ANONYMOUS | MAP_SHARED, -1, 0);
		END();
		if (p == MAP_FAILED) {
			if (errno == EPERM || errno == EEXIST)
				continue;
			return NULL;
		}
		if (((unsigned long)p & (c->src_align - 1)) || !((unsigned long)p & c->src_align)) {
			unmap(p, c->size);
			continue;
		}
		return p;
	}
}

/* remap_region() */
static void mremap_case(const struct mremap_config *c, const char *pattern)
{
	note(c->name);
	char *src = mremap_source(c);
	if (!src) {
		printf("workload: %s: source mmap failed (%s), as in the selftest\n", c->name, strerror(errno));
		return;
	}
	unsigned long threshold = c->size < THRESHOLD ? c->size : THRESHOLD;
	BEGIN(OP_FAULT, src, threshold);
	memcpy(src, pattern, threshold);
	END();
	unsigned long mask = ~(c->dest_align - 1);
	long offset = c->overlapping ? -(long)c->dest_align : (long)c->dest_align;
	unsigned long addr = ((unsigned long)src + c->size + offset) & mask;
	if (!(addr & c->dest_align))
		addr |= c->dest_align;
	while (!c->overlapping && !region_free(addr, c->size))
		addr += c->dest_align;
	BEGIN(OP_MREMAP, src, c->size);
	char *d = mremap(src, c->size, c->size, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)addr);
	END();
	int failed = d == MAP_FAILED;
	if (failed != c->expect_failure)
		printf("workload: %s: mremap %s, expected %s\n", c->name, failed ? strerror(errno) : "succeeded",
		       c->expect_failure ? "a failure" : "success");
	if (!failed && memcmp(d, pattern, threshold))
		printf("workload: %s: data lost\n", c->name);
	if (!failed)
		unmap(d, c->size);
	else
		unmap(src, c->size);
}

static void mremap_test(void)
{
	const unsigned long P = PAGE, PMD = 2 * M, PUD = G;
	const struct mremap_config cases[] = {
		{ "00 overlapping", P, P, P, 1, 1 },
		{ "01 dest misaligned 1K", P, P / 4, P, 0, 1 },
		{ "02 src misaligned 1K", P / 4, P, P, 0, 1 },
		{ "03 8K pte pte", P, P, 2 * P, 0, 0 },
		{ "04 2M 1M pte", M, P, 2 * M, 0, 0 },
		{ "05 2M 1M 1M", M, M, 2 * M, 0, 0 },
		{ "06 4M pmd pte", PMD, P, 4 * M, 0, 0 },
		{ "07 4M pmd 1M", PMD, M, 4 * M, 0, 0 },
		{ "08 4M pmd pmd", PMD, PMD, 4 * M, 0, 0 },
		{ "09 2G pud pte", PUD, P, 2 * G, 0, 0 },
		{ "10 2G pud 1M", PUD, M, 2 * G, 0, 0 },
		{ "11 2G pud pmd", PUD, PMD, 2 * G, 0, 0 },
		{ "12 2G pud pud", PUD, PUD, 2 * G, 0, 0 },
	};
	char *pattern = malloc(THRESHOLD);
	if (!pattern)
		die("malloc");
	srand(1);	/* the selftest seeds with the time; a fixed pattern keeps runs alike */
	for (unsigned long i = 0; i < THRESHOLD; i++)
		pattern[i] = (char)rand();
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		mremap_case(&cases[i], pattern);
	free(pattern);
}

/* ---- sysfs: THP sizes ---- */

static void put(const char *path, const char *val, char *old, size_t oldlen)
{
	int fd;
	if (old) {
		ssize_t n = -1;
		fd = open(path, O_RDONLY);
		if (fd >= 0)
			n = read(fd, old, oldlen - 1);
		if (fd >= 0)
			close(fd);
		old[n > 0 ? n : 0] = 0;
		/* "always [madvise] never" -> "madvise" */
		char *a = strchr(old, '['), *b = a ? strchr(a, ']') : NULL;
		if (a && b) {
			memmove(old, a + 1, (size_t)(b - a - 1));
			old[b - a - 1] = 0;
		}
	}
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, val, strlen(val)) < 0) {
		printf("workload: %s <- %s: %s\n", path, val, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
}

#define THP_DIR "/sys/kernel/mm/transparent_hugepage/"
static char old64[64], old2m[64];

/* anonymous faults allocate 64 KiB folios (mapped as contpte blocks), not 2 MiB ones */
static void mthp_64k_only(void)
{
	put(THP_DIR "hugepages-64kB/enabled", "always", old64, sizeof(old64));
	put(THP_DIR "hugepages-2048kB/enabled", "never", old2m, sizeof(old2m));
}

static void thp_sizes_restore(void)
{
	put(THP_DIR "hugepages-64kB/enabled", old64[0] ? old64 : "never", NULL, 0);
	put(THP_DIR "hugepages-2048kB/enabled", old2m[0] ? old2m : "inherit", NULL, 0);
}

/* the three kinds of anonymous memory: 4K pages, 64 KiB mTHP (contpte), a 2 MiB THP */
enum { MEM_4K, MEM_64K, MEM_THP };
static char *map_kind(int kind, unsigned long len)
{
	char *p = map_aligned(len, 2 * M, kind != MEM_4K);
	touch(p, len, kind + 1);
	return p;
}

static void mprotect_sizes(void)
{
	static const char *const what[] = { "4K pages", "64K mTHP", "2M THP" };
	for (int kind = MEM_4K; kind <= MEM_THP; kind++) {
		char buf[32];
		snprintf(buf, sizeof(buf), "mprotect %s", what[kind]);
		note(buf);
		unsigned long len = kind == MEM_4K ? 256 * K : kind == MEM_64K ? 512 * K : 2 * M;
		if (kind == MEM_64K)
			mthp_64k_only();
		char *p = map_kind(kind, len);
		/* all of it read-only and back (a THP: change_huge_pmd) */
		protect(p, len, PROT_READ);
		protect(p, len, PROT_READ | PROT_WRITE);
		touch(p, len, 0x11);
		/* one 64 KiB block (a whole contpte block of mTHP; a THP: split) */
		protect(p + 64 * K, 64 * K, PROT_READ);
		protect(p + 64 * K, 64 * K, PROT_READ | PROT_WRITE);
		touch(p + 64 * K, 64 * K, 0x12);
		/* one page inside a block (an mTHP block unfolded) */
		protect(p + 132 * K, 4 * K, PROT_READ);
		protect(p + 132 * K, 4 * K, PROT_NONE);
		protect(p + 132 * K, 4 * K, PROT_READ | PROT_WRITE);
		touch(p + 128 * K, 64 * K, 0x13);
		check(p + 136 * K, 0x13, "mprotect");
		unmap(p, len);
		if (kind == MEM_64K)
			thp_sizes_restore();
	}
}

static void unmap_madvise(void)
{
	static const char *const what[] = { "4K pages", "64K mTHP", "2M THP" };
	for (int kind = MEM_4K; kind <= MEM_THP; kind++) {
		char buf[32];
		unsigned long len = kind == MEM_THP ? 2 * M : 512 * K;
		if (kind == MEM_64K)
			mthp_64k_only();
		snprintf(buf, sizeof(buf), "munmap part of %s", what[kind]);
		note(buf);
		char *p = map_kind(kind, len);
		unmap(p + 4 * K, 4 * K);	/* a page inside the first block (THP: split) */
		unmap(p + 64 * K, 64 * K);	/* a whole block */
		unmap(p + len - 96 * K, 96 * K);	/* the tail: a block and a half */
		check(p, kind + 1, "partial munmap");

		snprintf(buf, sizeof(buf), "dontneed %s", what[kind]);
		note(buf);
		char *q = map_kind(kind, len);
		advise(q + 36 * K, 4 * K, MADV_DONTNEED);
		advise(q + 128 * K, 64 * K, MADV_DONTNEED);
		touch(q + 128 * K, 64 * K, 0x21);
		advise(q, len, MADV_DONTNEED);
		touch(q, 64 * K, 0x22);

		snprintf(buf, sizeof(buf), "free+pageout %s", what[kind]);
		note(buf);
		char *r = map_kind(kind, len);
		advise(r + 64 * K, 128 * K, MADV_FREE);	/* lazily freed: reclaim may discard them */
		touch(r + 64 * K, 16 * K, 0x31);	/* written again: kept */
		advise(r + 64 * K, 128 * K, MADV_PAGEOUT);	/* the clean lazyfree pages are discarded */
		advise(r + 256 * K, 64 * K, MADV_PAGEOUT);	/* dirty anonymous, no swap: kept */
		check(r + 256 * K, kind + 1, "pageout");
		touch(r + 64 * K, 128 * K, 0x32);

		unmap(p, len);
		unmap(q, len);
		unmap(r, len);
		if (kind == MEM_64K)
			thp_sizes_restore();
	}
}

static void fork_cow(void)
{
	char *m[3];
	unsigned long len[3] = { 64 * K, 256 * K, 2 * M };
	m[MEM_THP] = map_kind(MEM_THP, len[MEM_THP]);
	mthp_64k_only();	/* until the end: no fault below makes a 2 MiB folio */
	m[MEM_64K] = map_kind(MEM_64K, len[MEM_64K]);
	m[MEM_4K] = map_kind(MEM_4K, len[MEM_4K]);
	int go[2], done[2];
	if (pipe(go) || pipe(done))
		die("pipe");
	note("fork");
	BEGIN(OP_OTHER, 0, 0);
	pid_t pid = fork();
	if (pid == 0) {
		/* the child: no markers (its address space is not recorded); write to its copies
		 * once the parent has made its own, then exit */
		char c;
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		for (int kind = MEM_4K; kind <= MEM_THP; kind++)
			m[kind][8 * K] = 'c';
		if (write(done[1], "x", 1) != 1)
			_exit(1);
		_exit(0);
	}
	END();
	if (pid < 0)
		die("fork");
	/* copy-on-write in the parent while the child shares the pages */
	note("cow while shared");
	for (int kind = MEM_4K; kind <= MEM_THP; kind++) {
		touch(m[kind] + 4 * K, 4 * K, 0x41);	/* one page */
		touch(m[kind] + 32 * K, 8 * K, 0x42);	/* two more */
	}
	char c = 'g';
	if (write(go[1], &c, 1) != 1 || read(done[0], &c, 1) != 1)
		die("pipe");
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		printf("workload: fork child: status 0x%x\n", st);
	/* the child is gone: the pages are the parent's alone again (reuse, no copy) */
	note("write after child exit");
	for (int kind = MEM_4K; kind <= MEM_THP; kind++) {
		touch(m[kind], len[kind], 0x43);
		check(m[kind] + 8 * K, 0x43, "fork");
	}
	for (int kind = MEM_4K; kind <= MEM_THP; kind++)
		unmap(m[kind], len[kind]);
	thp_sizes_restore();
}

/* ---- mode vmalloc ---- */

static int bpf_map(unsigned value_size, unsigned entries, unsigned flags)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = value_size;
	a.max_entries = entries;
	a.map_flags = flags;
	BEGIN(OP_OTHER, 0, (unsigned long)value_size * entries);
	int fd = (int)syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a));
	END();
	if (fd < 0)
		printf("workload: bpf(BPF_MAP_CREATE, %u x %u): %s\n", entries, value_size, strerror(errno));
	return fd;
}

static void bpf_put(int fd, unsigned key, unsigned long val)
{
	union bpf_attr a;
	unsigned long v[512] = { val };
	memset(&a, 0, sizeof(a));
	a.map_fd = (unsigned)fd;
	a.key = (unsigned long)&key;
	a.value = (unsigned long)v;
	if (syscall(SYS_bpf, BPF_MAP_UPDATE_ELEM, &a, sizeof(a)))
		printf("workload: bpf(BPF_MAP_UPDATE_ELEM): %s\n", strerror(errno));
}

/* the map is freed from a workqueue after its last reference goes: let it run outside any bracket */
static void bpf_close(int fd)
{
	BEGIN(OP_OTHER, 0, 0);
	close(fd);
	END();
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	nanosleep(&ts, NULL);
}

static void vmalloc_mode(void)
{
	/* 1. a 1 MiB array map: vmalloc'ed, written, freed (vfree: a lazy vunmap) */
	note("bpf array 1M");
	int fd = bpf_map(4096, 256, 0);
	if (fd >= 0) {
		bpf_put(fd, 7, 0x1234);
		bpf_close(fd);
	}
	/* 2. an mmapable array: its pages mapped into user space as well (remap_vmalloc_range) */
	note("bpf mmapable array 256K");
	fd = bpf_map(4096, 64, BPF_F_MMAPABLE);
	if (fd >= 0) {
		BEGIN(OP_MMAP, 0, 256 * K);
		char *u = mmap(NULL, 256 * K, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		END();
		if (u == MAP_FAILED) {
			printf("workload: mmap of the bpf map: %s\n", strerror(errno));
		} else {
			touch(u, 256 * K, 0x51);
			unmap(u, 256 * K);
		}
		bpf_close(fd);
	}
	/* 3. a module loaded and removed: its memory vmalloc'ed, made read-only / executable, vfree'd */
	note("module load + unload");
	int mfd = open("/ts_kmp.ko", O_RDONLY);
	if (mfd < 0) {
		printf("workload: /ts_kmp.ko: %s\n", strerror(errno));
	} else {
		BEGIN(OP_OTHER, 0, 0);
		long r = syscall(SYS_finit_module, mfd, "", 0);
		END();
		if (r)
			printf("workload: finit_module(ts_kmp): %s\n", strerror(errno));
		close(mfd);
		if (!r) {
			BEGIN(OP_OTHER, 0, 0);
			r = syscall(SYS_delete_module, "ts_kmp", O_NONBLOCK);
			END();
			if (r)
				printf("workload: delete_module(ts_kmp): %s\n", strerror(errno));
		}
	}
	/* 4. more than lazy_max_pages() (32 MiB x fls(CPUs)) freed lazily: the kernel purges the
	 * lazily freed areas, with one kernel TLB flush for all of them */
	note("bpf arrays 9 x 8M: lazy purge");
	int fds[9];
	for (int i = 0; i < 9; i++)
		fds[i] = bpf_map(4096, 2048, 0);
	for (int i = 0; i < 9; i++)
		if (fds[i] >= 0)
			bpf_close(fds[i]);
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 1;
	const char *mode = argc > 2 ? argv[2] : "basic";
	static const char *const modes[] = { "basic", "contpte-mprotect", "mremap-test", "mprotect-sizes",
					     "unmap-madvise", "fork-cow", "vmalloc" };
	int k = -1;
	for (unsigned i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(mode, modes[i]))
			k = (int)i;
	if (k < 0) {
		fprintf(stderr, "workload: unknown mode '%s'\n", mode);
		return 2;
	}
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");
	if (k == 2) {
		/* 2 GiB MAP_SHARED sources: more than the heuristic overcommit lets a 1 GiB guest reserve */
		put("/proc/sys/vm/overcommit_memory", "1", NULL, 0);
	}

	/* warm up, then start: the plugin takes its snapshot at the next kernel barrier,
	 * which the unbracketed munmap below provides */
	char *warm = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(warm, 1, 16 * PAGE);
	marker(CMD_START, 0, 0, 0, 0);
	munmap(warm, 16 * PAGE);
	sched_yield();

	for (int it = 0; it < iters; it++) {
		switch (k) {
		case 0: case 1: basic(k == 1); break;
		case 2: mremap_test(); break;
		case 3: mprotect_sizes(); break;
		case 4: unmap_madvise(); break;
		case 5: fork_cow(); break;
		case 6: vmalloc_mode(); break;
		}
	}
	marker(CMD_STOP, 0, 0, 0, 0);
	printf("workload: %d iteration(s) of %s done\n", iters, mode);
	return 0;
}
