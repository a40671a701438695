// SPDX-License-Identifier: GPL-2.0-only
/*
 * ftrace-workload.c - the workload record-ftrace.sh runs inside a real arm64
 * kernel under QEMU: mremap / mprotect / munmap / madvise sequences after
 * tools/testing/selftests/mm/mremap_test.c and mprotect loops over THP and
 * 4K pages, each bracketed by `BEGIN name` / `END name` trace markers, every
 * touch announced by a `ptfuzz touch VA LEN w` marker (ftrace.h), and the
 * mappings that exist before the first traced call (its image, heap, [vvar],
 * [vdso], [stack]) announced by `ptfuzz mapped START END NAME` markers, so that
 * the model holds the space they take (a grow in place that the kernel could
 * not make, the model cannot either).
 *
 * It turns tracing on for itself only (set_event_pid, tracing_on) so that
 * neither libc start-up nor the init script shows up in the trace.  Build:
 * aarch64-linux-gnu-gcc -static -O2 -o ftrace-workload ftrace-workload.c
 *
 * usage: ftrace-workload [TRACEFS] [PROVENANCE-FILE]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define KB (1ul << 10)
#define MB (1ul << 20)
#define GB (1ul << 30)
#define PAGE (4 * KB)
#define PMD (2 * MB)
#define PUD (1 * GB)

static const char *tracefs = "/sys/kernel/tracing";
static int marker_fd = -1;

static void put_file(const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", tracefs, name);
	int fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0 || write(fd, text, strlen(text)) < 0) {
		fprintf(stderr, "ftrace-workload: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	close(fd);
}

static void marker(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(marker_fd, buf, (size_t)n) < 0)
		perror("trace_marker");
}

static void touch(void *p, size_t len)
{
	marker("ptfuzz touch %p 0x%zx w", p, len);
	for (size_t o = 0; o < len; o += PAGE)
		((volatile char *)p)[o] = 1;
}

static void *xmmap(void *addr, size_t len, int prot, int flags)
{
	void *p = mmap(addr, len, prot, flags | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "ftrace-workload: mmap(%p, 0x%zx): %s\n", addr, len, strerror(errno));
		exit(1);
	}
	return p;
}

/* len bytes aligned to align (plus `skew`), the rest of the reservation unmapped (munmap of sub-ranges) */
static char *aligned_map(size_t len, size_t align, size_t skew)
{
	size_t span = len + align + skew;
	/* a GiB-sized reservation is more than heuristic overcommit grants a 1 GiB guest */
	char *p = xmmap(NULL, span, PROT_READ | PROT_WRITE, len >= PUD ? MAP_NORESERVE : 0);
	char *a = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1)) + skew;
	if (a > p)
		munmap(p, (size_t)(a - p));
	if (p + span > a + len)
		munmap(a + len, (size_t)(p + span - (a + len)));
	return a;
}

/* a free destination of len bytes aligned to align (+ skew): reserve, then give it back */
static char *free_dest(size_t len, size_t align, size_t skew)
{
	char *d = aligned_map(len, align, skew);
	munmap(d, len);
	return d;
}

/* mremap_test.c's pattern: a source of `size` at `src_align` (+skew), touched, moved to a dest at `dst_align` */
static void move_case(const char *name, size_t size, size_t src_align, size_t src_skew, size_t dst_align,
		      size_t dst_skew, size_t touch_len)
{
	marker("BEGIN %s", name);
	char *src = aligned_map(size, src_align, src_skew);
	char *dst = free_dest(size, dst_align, dst_skew);
	touch(src, touch_len ? touch_len : size);
	char *r = mremap(src, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (r == MAP_FAILED)
		fprintf(stderr, "ftrace-workload: %s: mremap: %s\n", name, strerror(errno));
	else
		touch(r, PAGE);
	munmap(r == MAP_FAILED ? src : r, size);
	marker("END %s", name);
}

int main(int argc, char **argv)
{
	char path[256], buf[1024];

	if (argc > 1)
		tracefs = argv[1];
	snprintf(path, sizeof(path), "%s/trace_marker", tracefs);
	marker_fd = open(path, O_WRONLY);
	if (marker_fd < 0) {
		fprintf(stderr, "ftrace-workload: %s: %s\n", path, strerror(errno));
		return 1;
	}
	snprintf(buf, sizeof(buf), "%d\n", getpid());
	put_file("set_event_pid", buf);
	put_file("tracing_on", "1\n");

	/* provenance: one `ptfuzz ...:` marker per line of the file */
	FILE *pf = argc > 2 ? fopen(argv[2], "r") : NULL;
	while (pf && fgets(buf, sizeof(buf), pf)) {
		buf[strcspn(buf, "\n")] = '\0';
		if (*buf)
			marker("%s", buf);
	}
	if (pf)
		fclose(pf);
	FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (thp && fgets(buf, sizeof(buf), thp)) {
		buf[strcspn(buf, "\n")] = '\0';
		marker("ptfuzz thp: %s", buf);
	}
	if (thp)
		fclose(thp);
	FILE *maps = fopen("/proc/self/maps", "r");
	while (maps && fgets(buf, sizeof(buf), maps)) {
		unsigned long s, e;
		char name[256] = "";
		if (sscanf(buf, "%lx-%lx %*s %*s %*s %*s %255[^\n]", &s, &e, name) >= 2)
			marker("ptfuzz mapped 0x%lx 0x%lx %s", s, e, name);
	}
	if (maps)
		fclose(maps);

	/* ---- mremap moves (mremap_test.c test cases) ---- */
	move_case("mremap 8K PTE->PTE", 8 * KB, PAGE, 0, PAGE, 0, 0);
	move_case("mremap 2M->1M-aligned PTE", 2 * MB, PMD, 0, MB, 0, 0);
	move_case("mremap 2M PMD-aligned (MOVE_PMD)", 2 * MB, PMD, 0, PMD, 0, 0);
	move_case("mremap 4M PMD->PMD", 4 * MB, PMD, 0, PMD, 0, 0);
	move_case("mremap 4M PMD->1M-aligned", 4 * MB, PMD, 0, MB, 0, 0);
	move_case("mremap 1M src+4K misaligned", 1 * MB, PMD, PAGE, PMD, 0, 0);
	move_case("mremap 1G PUD-aligned (MOVE_PUD), 4M touched", 1 * GB, PUD, 0, PUD, 0, 4 * MB);

	/* overlapping source and destination: EINVAL (kept as a comment) */
	marker("BEGIN mremap overlapping (fails)");
	{
		char *p = aligned_map(3 * PAGE, PAGE, 0);
		touch(p, 3 * PAGE);
		if (mremap(p, 2 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, p + PAGE) != MAP_FAILED)
			fprintf(stderr, "ftrace-workload: overlapping mremap succeeded\n");
		munmap(p, 3 * PAGE);
	}
	marker("END mremap overlapping (fails)");

	/* ---- grow and shrink ---- */
	marker("BEGIN mremap grow/shrink");
	{
		char *p = aligned_map(64 * KB, PMD, 0);
		touch(p, 64 * KB);
		char *q = mremap(p, 64 * KB, 128 * KB, MREMAP_MAYMOVE);	/* in place if free */
		touch(q, 128 * KB);
		char *r = mremap(q, 128 * KB, 4 * MB, MREMAP_MAYMOVE);
		touch(r, 4 * MB);
		char *s = mremap(r, 4 * MB, 1 * MB, 0);			/* shrink in place */
		touch(s, 1 * MB);
		munmap(s, 1 * MB);
	}
	marker("END mremap grow/shrink");

	/* ---- mprotect loops over a THP and over 4K pages (seed 001's loop) ---- */
	marker("BEGIN mprotect loop THP");
	{
		char *p = aligned_map(2 * MB, PMD, 0);
		touch(p, 2 * MB);
		for (int i = 0; i < 4; i++) {
			mprotect(p, 2 * MB, PROT_READ);
			mprotect(p, 2 * MB, PROT_READ | PROT_WRITE);
		}
		mprotect(p + 64 * KB, 64 * KB, PROT_READ);		/* splits the PMD */
		mprotect(p + 64 * KB, 64 * KB, PROT_READ | PROT_WRITE);
		munmap(p, 2 * MB);
	}
	marker("END mprotect loop THP");
	marker("BEGIN mprotect loop 4K");
	{
		char *p = aligned_map(64 * KB, PAGE, 0);
		touch(p, 64 * KB);
		for (int i = 0; i < 16; i++)
			mprotect(p + i * PAGE, PAGE, PROT_READ);
		mprotect(p, 64 * KB, PROT_READ | PROT_WRITE);
		mprotect(p, 64 * KB, PROT_NONE);
		mprotect(p, 64 * KB, PROT_READ | PROT_WRITE);
		touch(p, 64 * KB);
		munmap(p, 64 * KB);
	}
	marker("END mprotect loop 4K");

	/* ---- munmap of sub-ranges of a THP ---- */
	marker("BEGIN munmap sub-ranges of a THP");
	{
		char *p = aligned_map(4 * MB, PMD, 0);
		touch(p, 4 * MB);
		munmap(p + 64 * KB, 64 * KB);		/* a hole: splits the first PMD */
		munmap(p, PAGE);			/* the head */
		munmap(p + 4 * MB - PAGE, PAGE);	/* the tail */
		munmap(p + 2 * MB, 2 * MB - PAGE);	/* the rest of the second PMD */
		munmap(p, 2 * MB);			/* what is left (and holes) */
	}
	marker("END munmap sub-ranges of a THP");

	/* ---- madvise(MADV_DONTNEED) ---- */
	marker("BEGIN madvise DONTNEED");
	{
		char *p = aligned_map(4 * MB, PMD, 0);
		touch(p, 4 * MB);
		madvise(p, 2 * MB, MADV_DONTNEED);		/* a whole PMD */
		madvise(p + 2 * MB + 64 * KB, 64 * KB, MADV_DONTNEED);	/* part of one: split */
		touch(p, 4 * MB);
		char *q = aligned_map(64 * KB, PAGE, 0);
		touch(q, 64 * KB);
		madvise(q + PAGE, 2 * PAGE, MADV_DONTNEED);
		touch(q, 64 * KB);
		munmap(q, 64 * KB);
		munmap(p, 4 * MB);
	}
	marker("END madvise DONTNEED");

	put_file("tracing_on", "0\n");
	return 0;
}
