/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * test_ftrace.c - the ftrace importer (traces/import/ftrace.c): both input forms
 * (tracefs `trace`, `trace-cmd report`), the mapping onto ops events
 * (returned addresses, failed calls, address spaces, markers), what is kept
 * as a comment, malformed input, and that an imported trace replays clean.
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <glob.h>

#include "ftrace.h"
#include "session.h"
#include "trace.h"

#ifndef CAPTURE_DATA
#define CAPTURE_DATA "tests/data/capture"
#endif
#ifndef FTRACE_EXAMPLES
#define FTRACE_EXAMPLES ""
#endif

/* Import txt as text; the whole output (NUL-terminated, caller frees). */
static char *import_opts(const char *txt, const struct pt_ftrace_opts *opts, struct pt_ftrace_info *info)
{
	struct pt_error err = { PT_OK, "" };
	void *data = NULL;
	size_t size = 0;
	int rc = pt_import_ftrace_mem(txt, strlen(txt), "t.trace", opts, PT_ENC_TEXT, &data, &size, info, &err);
	if (rc)
		fail_msg("import failed: %s", err.msg);
	char *s = malloc(size + 1);
	assert_non_null(s);
	memcpy(s, data, size);
	s[size] = '\0';
	free(data);
	return s;
}

static char *import(const char *txt)
{
	return import_opts(txt, NULL, NULL);
}

/* The event lines of a text trace (no header, no comments; `kernel` evidence only if
 * with_evidence), joined by '\n'. */
static char *events_of(const char *trace, bool with_evidence)
{
	char *out = calloc(1, strlen(trace) + 1);
	assert_non_null(out);
	size_t o = 0;
	for (const char *p = trace; *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const char *sp = memchr(p, ' ', n);
		bool evidence = sp && (size_t)(p + n - sp) > 8 && !memcmp(sp, " kernel ", 8);
		if (n && p[0] != '#' && p[0] != '@' && (with_evidence || !evidence)) {
			memcpy(out + o, p, n);
			o += n;
			out[o++] = '\n';
		}
		p += n + (e ? 1 : 0);
	}
	out[o] = '\0';
	return out;
}

/* The ops events of a text trace (no header, comments or evidence). */
static char *ops_of(const char *trace)
{
	return events_of(trace, false);
}

static void assert_ops(const char *txt, const char *want)
{
	char *t = import(txt);
	char *ops = ops_of(t);
	if (strcmp(ops, want))
		fail_msg("ops differ\n--- got:\n%s--- want:\n%s--- whole output:\n%s", ops, want, t);
	free(ops);
	free(t);
}

/* Import must fail with PT_ERR_IMPORT and a message starting with `where`. */
static void assert_import_error(const char *txt, const char *where, const char *why)
{
	struct pt_error err = { PT_OK, "" };
	void *data = (void *)1;
	size_t size = 1;
	int rc = pt_import_ftrace_mem(txt, strlen(txt), "bad.trace", NULL, PT_ENC_TEXT, &data, &size, NULL, &err);
	assert_int_equal(rc, -1);
	assert_null(data);
	assert_int_equal(err.code, PT_ERR_IMPORT);
	if (strncmp(err.msg, where, strlen(where)) || (why && !strstr(err.msg, why)))
		fail_msg("error message '%s' does not start with '%s' (and contain '%s')", err.msg, where,
			 why ? why : "");
	assert_null(strchr(err.msg, '\n'));
}

#define TRACEFS_HEAD                                                                   \
	"# tracer: nop\n"                                                              \
	"#\n"                                                                          \
	"# entries-in-buffer/entries-written: 12/12   #P:2\n"                          \
	"#\n"                                                                          \
	"#                                _-----=> irqs-off/BH-disabled\n"             \
	"#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"                  \
	"#              | |         |   |||||     |         |\n"

static const char tracefs_session[] =
	TRACEFS_HEAD
	"   ftrace-workloa-75      [001] .....     3.100000: tracing_mark_write: ptfuzz kernel: linux-image-6.1.0-57-arm64-unsigned 6.1.192-1\n"
	"   ftrace-workloa-75      [001] .....     3.100001: tracing_mark_write: BEGIN mmap 4M\n"
	"   ftrace-workloa-75      [001] .....     3.100010: sys_mmap(addr: 0, len: 400000, prot: 3, flags: 22, fd: ffffffffffffffff, off: 0)\n"
	"   ftrace-workloa-75      [001] .....     3.100020: sys_mmap -> 0xffff9a000000\n"
	"   ftrace-workloa-75      [001] .....     3.100030: tracing_mark_write: ptfuzz touch 0xffff9a000000 0x400000 w\n"
	"   ftrace-workloa-75      [000] d..1.     3.100040: sys_mprotect(start: ffff9a000000, len: 200000, prot: 1)\n"
	"   ftrace-workloa-75      [000] .....     3.100050: sys_mprotect -> 0x0\n"
	"   ftrace-workloa-75      [000] .....     3.100060: sys_madvise(start: ffff9a200000, len_in: 10000, behavior: 4)\n"
	"   ftrace-workloa-75      [000] .....     3.100070: sys_madvise -> 0x0\n"
	"   ftrace-workloa-75      [000] .....     3.100080: sys_mremap(addr: ffff9a200000, old_len: 200000, new_len: 400000, flags: 1, new_addr: 0)\n"
	"   ftrace-workloa-75      [000] .....     3.100090: sys_mremap -> 0xffff99a00000\n"
	"   ftrace-workloa-75      [000] .....     3.100100: sys_munmap(addr: ffff99a00000, len: 1000)\n"
	"   ftrace-workloa-75      [000] .....     3.100110: sys_munmap -> 0x0\n"
	"   ftrace-workloa-75      [000] .....     3.100120: tracing_mark_write: END mmap 4M\n";

static const char tracefs_ops[] =
	"cpu1 mmap va=0xffff9a000000 len=4M prot=rw asid=1\n"
	"cpu1 touch va=0xffff9a000000 len=4M asid=1 flags=0x1\n"
	"cpu1 switch tid=0\n"
	"cpu0 mprotect va=0xffff9a000000 len=2M prot=r asid=1\n"
	"cpu0 madvise dontneed va=0xffff9a200000 len=64K asid=1\n"
	"cpu0 mremap va=0xffff9a200000 len=2M new_va=0xffff99a00000 new_len=4M asid=1 flags=0x1\n"
	"cpu0 munmap va=0xffff99a00000 len=4K asid=1\n";

static void test_tracefs_syscalls_become_ops(void **state)
{
	(void)state;
	assert_ops(tracefs_session, tracefs_ops);
}

static void test_header_cpus_kernel_and_method(void **state)
{
	struct pt_ftrace_info info;
	(void)state;
	char *t = import_opts(tracefs_session, NULL, &info);
	assert_non_null(strstr(t, "cpus=2"));
	assert_non_null(strstr(t, "method=ftrace"));
	assert_non_null(strstr(t, "linux-image-6.1.0-57-arm64-unsigned"));
	assert_non_null(strstr(t, "cpu1 pid 75: marker: BEGIN mmap 4M"));
	/* the kernel moved a growing mremap: kept as asked (no MREMAP_FIXED), a comment says where it went */
	assert_non_null(strstr(t, "the kernel moved it to 0xffff99a00000 (new_va=): kept as asked, without MREMAP_FIXED"));
	assert_int_equal(info.syscalls, 5);
	assert_int_equal(info.ops, 6);
	assert_int_equal(info.failed, 0);
	assert_int_equal(info.asids, 1);
	assert_int_equal(info.cpus, 2);
	free(t);
}

static void test_trace_cmd_report_form(void **state)
{
	(void)state;
	assert_ops("cpus=4\n"
		   "CPU 2 is empty\n"
		   "  workload-80    [003] .....   5.000001: print:                tracing_mark_write: ptfuzz thp: [always] madvise never\n"
		   "  workload-80    [003] .....   5.000010: sys_enter_mmap:       addr: 0x00000000, len: 0x00200000, prot: 0x00000003, flags: 0x00000022, fd: 0xffffffff, off: 0x00000000\n"
		   "  workload-80    [003] .....   5.000020: sys_exit_mmap:        0xffff80000000\n"
		   "  workload-80    [003]   5.000030: print:  tracing_mark_write: ptfuzz touch ffff80000000 200000\n"
		   "  workload-80    [003]   5.000040: sys_enter_munmap:     addr: 0xffff80000000, len: 0x00200000\n"
		   "  workload-80    [003]   5.000050: sys_exit_munmap:      0x0\n",
		   "cpu3 mmap va=0xffff80000000 len=2M prot=rw asid=1 order=9\n"
		   "cpu3 touch va=0xffff80000000 len=2M asid=1 flags=0x1\n"
		   "cpu3 munmap va=0xffff80000000 len=2M asid=1\n");
}

static void test_thp_option_overrides_the_marker(void **state)
{
	struct pt_ftrace_opts never = { PT_FTRACE_THP_NEVER }, always = { PT_FTRACE_THP_ALWAYS };
	const char *txt =
		"  w-1 [000] 1.0: tracing_mark_write: ptfuzz thp: always\n"
		"  w-1 [000] 1.1: sys_mmap(addr: 0, len: 1000, prot: 3, flags: 22, fd: ffffffffffffffff, off: 0)\n"
		"  w-1 [000] 1.2: sys_mmap -> 0x10000000\n";
	(void)state;
	char *t = import_opts(txt, &never, NULL);
	assert_null(strstr(t, "order="));
	free(t);
	t = import_opts(strchr(txt, '\n') + 1, &always, NULL);	/* without the marker */
	assert_non_null(strstr(t, "order=9"));
	free(t);
}

static void test_failed_calls_are_comments(void **state)
{
	struct pt_ftrace_info info;
	(void)state;
	const char *txt =
		"  w-7 [000] 1.0: sys_mmap(addr: 0, len: 1000, prot: 3, flags: 22, fd: ffffffffffffffff, off: 0)\n"
		"  w-7 [000] 1.1: sys_mmap -> 0x20000000\n"
		"  w-7 [000] 1.2: sys_mremap(addr: 20000000, old_len: 1000, new_len: 2000, flags: 0, new_addr: 0)\n"
		"  w-7 [000] 1.3: sys_mremap -> 0xfffffffffffffff4\n"
		"  w-7 [000] 1.4: sys_mprotect(start: 20000000, len: 2000, prot: 1)\n"
		"  w-7 [000] 1.5: sys_mprotect -> 0xfffffffffffffff4\n"
		"  w-7 [000] 1.6: sys_mmap(addr: 1, len: 1000, prot: 3, flags: 32, fd: ffffffffffffffff, off: 0)\n"
		"  w-7 [000] 1.7: sys_mmap -> 0xffffffffffffffea\n";
	char *t = import_opts(txt, NULL, &info);
	char *ops = ops_of(t);
	assert_string_equal(ops, "cpu0 mmap va=0x20000000 len=4K prot=rw asid=1\n");
	assert_non_null(strstr(t, "mremap(addr=0x20000000, old_len=0x1000, new_len=0x2000, flags=0x0, new_addr=0x0) = -ENOMEM: failed in the kernel"));
	assert_non_null(strstr(t, "= -EINVAL: failed in the kernel"));
	assert_int_equal(info.failed, 3);
	assert_int_equal(info.syscalls, 4);
	free(ops);
	free(t);
}

static void test_processes_are_address_spaces(void **state)
{
	(void)state;
	/* pid 10 and 11 are processes; 12 is a thread of 10 (TGID column) */
	assert_ops("  a-10    (     10) [000] 1.0: sys_mmap(addr: 0, len: 1000, prot: 3, flags: 22, fd: ffffffffffffffff, off: 0)\n"
		   "  b-11    (     11) [001] 1.1: sys_mmap(addr: 0, len: 2000, prot: 1, flags: 22, fd: ffffffffffffffff, off: 0)\n"
		   "  a-10    (     10) [000] 1.2: sys_mmap -> 0x30000000\n"
		   "  b-11    (     11) [001] 1.3: sys_mmap -> 0x30000000\n"
		   "  a-12    (     10) [001] 1.4: sys_munmap(addr: 30000000, len: 1000)\n"
		   "  a-12    (     10) [001] 1.5: sys_munmap -> 0x0\n"
		   "  b-11    (     11) [000] 1.6: sched_process_exec: filename=/x pid=11 old_pid=11\n"
		   "  b-11    (     11) [000] 1.7: sys_mmap(addr: 0, len: 1000, prot: 7, flags: 22, fd: ffffffffffffffff, off: 0)\n"
		   "  b-11    (     11) [000] 1.8: sys_mmap -> 0x40000000\n",
		   "cpu0 mmap va=0x30000000 len=4K prot=rw asid=1\n"
		   "cpu1 mmap va=0x30000000 len=8K prot=r asid=2\n"
		   "cpu1 switch tid=12\n"
		   "cpu1 munmap va=0x30000000 len=4K asid=1\n"
		   "cpu0 switch tid=11\n"
		   "cpu0 mmap va=0x40000000 len=4K prot=rwx asid=3\n");
}

/* Without the TGID column: task_newtask's CLONE_VM makes a thread share its creator's address space */
static void test_threads_without_tgid_from_clone_flags(void **state)
{
	(void)state;
	assert_ops("  a-10 [000] 1.0: sys_mmap(addr: 0, len: 1000, prot: 3, flags: 22, fd: ffffffffffffffff, off: 0)\n"
		   "  a-10 [000] 1.1: sys_mmap -> 0x30000000\n"
		   /* a thread (CLONE_VM | CLONE_THREAD | ...) and a forked child */
		   "  a-10 [000] 1.2: task_newtask: pid=12 comm=a clone_flags=3d0f00 oom_score_adj=0\n"
		   "  a-10 [000] 1.3: task_newtask: pid=13 comm=a clone_flags=1200011 oom_score_adj=0\n"
		   "  a-12 [001] 1.4: sys_madvise(start: 30000000, len_in: 1000, behavior: 4)\n"
		   "  a-12 [001] 1.5: sys_madvise -> 0x0\n"
		   "  a-13 [001] 1.6: sys_mmap(addr: 0, len: 1000, prot: 3, flags: 22, fd: ffffffffffffffff, off: 0)\n"
		   "  a-13 [001] 1.7: sys_mmap -> 0x50000000\n"
		   /* a vfork child (CLONE_VM | CLONE_VFORK) that execs: its own space, the parent keeps its */
		   "  a-10 [000] 1.8: task_newtask: pid=14 comm=a clone_flags=4111 oom_score_adj=0\n"
		   "  a-14 [001] 1.9: sched_process_exec: filename=/x pid=14 old_pid=14\n"
		   "  a-14 [001] 2.0: sys_mmap(addr: 0, len: 1000, prot: 3, flags: 22, fd: ffffffffffffffff, off: 0)\n"
		   "  a-14 [001] 2.1: sys_mmap -> 0x60000000\n"
		   "  a-10 [000] 2.2: sys_munmap(addr: 30000000, len: 1000)\n"
		   "  a-10 [000] 2.3: sys_munmap -> 0x0\n",
		   "cpu0 mmap va=0x30000000 len=4K prot=rw asid=1\n"
		   "cpu1 madvise dontneed va=0x30000000 len=4K asid=1\n"
		   "cpu1 switch tid=13\n"
		   "cpu1 mmap va=0x50000000 len=4K prot=rw asid=2\n"
		   "cpu1 switch tid=14\n"
		   "cpu1 mmap va=0x60000000 len=4K prot=rw asid=3\n"
		   "cpu0 munmap va=0x30000000 len=4K asid=1\n");
}

static void test_untraced_memory_and_other_events_are_skipped(void **state)
{
	struct pt_ftrace_info info;
	(void)state;
	const char *txt =
		"  w-5 [000] 1.0: sys_mprotect(start: 400000, len: 1000, prot: 1)\n"	/* the program's image */
		"  w-5 [000] 1.1: sys_mprotect -> 0x0\n"
		"  w-5 [000] 1.2: sys_openat(dfd: ffffff9c, filename: 4a2f10, flags: 0, mode: 0)\n"
		"  w-5 [000] 1.3: sys_openat -> 0x3\n"
		"  w-5 [000] 1.4: sys_mmap(addr: 0, len: 1000, prot: 1, flags: 2, fd: 3, off: 0)\n"	/* a file */
		"  w-5 [000] 1.5: sys_mmap -> 0x50000000\n"
		"  w-5 [000] 1.6: sys_munmap(addr: 50000000, len: 1000)\n"
		"  w-5 [000] 1.7: sys_munmap -> 0x0\n"
		"  w-5 [000] 1.8: sys_madvise(start: 60000000, len_in: 1000, behavior: 3)\n"
		"  w-5 [000] 1.9: sys_madvise -> 0x0\n"
		"  w-5 [000] 2.0: tracing_mark_write: ptfuzz touch 0x70000000 0x1000\n"
		"  w-5 [000] 2.1: sched_switch: prev_comm=w prev_pid=5 ==> next_comm=swapper next_pid=0\n"
		"CPU:0 [LOST 3 EVENTS]\n"
		"  w-5 [000] 2.2: sys_mmap(addr: 0, len: 1000, prot: 3, flags: 22, fd: ffffffffffffffff, off: 0)\n";
	char *t = import_opts(txt, NULL, &info);
	char *ops = ops_of(t);
	assert_string_equal(ops, "");
	assert_int_equal(info.skipped, 5);
	assert_int_equal(info.ignored, 3);
	assert_int_equal(info.lost, 3);
	assert_int_equal(info.unpaired, 1);
	assert_non_null(strstr(t, "a file mapping"));
	assert_non_null(strstr(t, "an advice the model does not take"));
	free(ops);
	free(t);
}

static void test_mremap_bookkeeping(void **state)
{
	(void)state;
	/* grow in place, then the grown part is known: an mprotect of it is replayed;
	 * after a move the old range is unknown: its mprotect is a comment */
	assert_ops("  w-9 [000] 1.0: sys_mmap(addr: 0, len: 2000, prot: 3, flags: 22, fd: ffffffffffffffff, off: 0)\n"
		   "  w-9 [000] 1.1: sys_mmap -> 0x10000000\n"
		   "  w-9 [000] 1.2: sys_mremap(addr: 10000000, old_len: 2000, new_len: 4000, flags: 0, new_addr: 0)\n"
		   "  w-9 [000] 1.3: sys_mremap -> 0x10000000\n"
		   "  w-9 [000] 1.4: sys_mprotect(start: 10002000, len: 2000, prot: 1)\n"
		   "  w-9 [000] 1.5: sys_mprotect -> 0x0\n"
		   "  w-9 [000] 1.6: sys_mremap(addr: 10000000, old_len: 4000, new_len: 4000, flags: 3, new_addr: 20000000)\n"
		   "  w-9 [000] 1.7: sys_mremap -> 0x20000000\n"
		   "  w-9 [000] 1.8: sys_mprotect(start: 10000000, len: 1000, prot: 1)\n"
		   "  w-9 [000] 1.9: sys_mprotect -> 0x0\n"
		   "  w-9 [000] 2.0: sys_mprotect(start: 20003000, len: 1000, prot: 0)\n"
		   "  w-9 [000] 2.1: sys_mprotect -> 0x0\n",
		   "cpu0 mmap va=0x10000000 len=8K prot=rw asid=1\n"
		   "cpu0 mremap va=0x10000000 len=8K new_va=0x10000000 new_len=16K asid=1\n"
		   "cpu0 mprotect va=0x10002000 len=8K prot=r asid=1\n"
		   "cpu0 mremap va=0x10000000 len=16K new_va=0x20000000 new_len=16K asid=1 flags=0x3\n"
		   "cpu0 mprotect va=0x20003000 len=4K asid=1\n");
}

/* Replay an encoded trace through a session: no violation, and `failed` ops the model failed. */
static void assert_replays(const void *data, size_t size, const char *name, uint64_t failed)
{
	struct pt_error err = { PT_OK, "" };
	struct pt_event ev;
	struct pt_reader *r = pt_reader_open_mem(data, size, name, &err);
	assert_non_null(r);
	struct pt_session *s = pt_session_new(pt_reader_header(r));
	assert_non_null(s);
	int rc;
	while ((rc = pt_reader_next(r, &ev, &err)) == 1)
		pt_session_event(s, &ev);
	if (rc)
		fail_msg("%s: %s", name, err.msg);
	pt_session_finish(s);
	if (pt_session_nviolations(s))
		fail_msg("%s: %u violation(s)", name, pt_session_nviolations(s));
	const struct pt_counters *c = pt_session_counters(s);
	uint64_t n = 0;
	for (unsigned k = 0; k < PT_EV_KIND_COUNT; k++) {
		if (c->per_op[k].failed && !failed)
			fail_msg("%s: the model failed %llu %s op(s) the kernel did not", name,
				 (unsigned long long)c->per_op[k].failed, pt_kind_name(k));
		n += c->per_op[k].failed;
	}
	if (n != failed)
		fail_msg("%s: the model failed %llu ops the kernel did not, expected %llu (traces/examples/FINDINGS.md)",
			 name, (unsigned long long)n, (unsigned long long)failed);
	pt_session_free(s);
	pt_reader_close(r);
}

static void assert_replays_clean(const void *data, size_t size, const char *name)
{
	assert_replays(data, size, name, 0);
}

static void test_imported_trace_replays_clean(void **state)
{
	struct pt_error err = { PT_OK, "" };
	void *data = NULL;
	size_t size = 0;
	(void)state;
	assert_int_equal(pt_import_ftrace_mem(tracefs_session, strlen(tracefs_session), "t", NULL, PT_ENC_BINARY,
					      &data, &size, NULL, &err), 0);
	assert_replays_clean(data, size, "tracefs_session");
	free(data);
}

/* The raw ftrace text of the shipped captures (traces/examples/ftrace-*.ftrace) imports and replays clean. */
static void test_shipped_captures_import_and_replay_clean(void **state)
{
	glob_t g;
	char pat[1024];
	(void)state;
	if (!*FTRACE_EXAMPLES)
		skip();
	snprintf(pat, sizeof(pat), "%s/ftrace-*.ftrace", FTRACE_EXAMPLES);
	if (glob(pat, 0, NULL, &g)) {
		print_message("no %s\n", pat);
		skip();
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "rb");
		assert_non_null(f);
		fseek(f, 0, SEEK_END);
		long n = ftell(f);
		rewind(f);
		char *buf = malloc((size_t)n + 1);
		assert_non_null(buf);
		assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
		fclose(f);
		struct pt_error err = { PT_OK, "" };
		struct pt_ftrace_info info;
		void *data = NULL;
		size_t size = 0;
		if (pt_import_ftrace_mem(buf, (size_t)n, g.gl_pathv[i], NULL, PT_ENC_BINARY, &data, &size, &info, &err))
			fail_msg("%s", err.msg);
		assert_true(info.ops > 0);
		assert_int_equal(info.unpaired, 0);
		assert_int_equal(info.lost, 0);
		/* no op the model fails where the kernel succeeded (the captures announce the
		 * mappings made before them: traces/examples/FINDINGS.md) */
		assert_replays_clean(data, size, g.gl_pathv[i]);
		free(data);
		free(buf);
	}
	globfree(&g);
}

/* A growing mremap the kernel moved stays as asked; the kernel's result follows it. */
static void test_moved_grow_is_kept_as_asked(void **state)
{
	(void)state;
	const char *txt =
		"  w-9 [000] 1.0: sys_mmap(addr: 0, len: 10000, prot: 3, flags: 22, fd: ffffffffffffffff, off: 0)\n"
		"  w-9 [000] 1.1: sys_mmap -> 0x10000000\n"
		"  w-9 [000] 1.2: sys_mremap(addr: 10000000, old_len: 10000, new_len: 400000, flags: 1, new_addr: 0)\n"
		"  w-9 [000] 1.3: sys_mremap -> 0x30000000\n";
	char *t = import(txt);
	char *ev = events_of(t, true);
	assert_string_equal(ev, "cpu0 mmap va=0x10000000 len=64K prot=rw asid=1\n"
				"cpu0 kernel result ret=0x10000000 asid=1\n"
				"cpu0 mremap va=0x10000000 len=64K new_va=0x30000000 new_len=4M asid=1 flags=0x1\n"
				"cpu0 kernel result ret=0x30000000 asid=1\n");
	assert_null(strstr(t, "flags=0x3"));
	assert_non_null(strstr(t, "the kernel moved it to 0x30000000 (new_va=): kept as asked, without MREMAP_FIXED"));
	free(ev);
	free(t);
}

/* Mappings made before the trace (`ptfuzz mapped`): held by the model, never touched; the
 * model then fails to grow into them as the kernel did, and follows the kernel's address. */
static void test_mapped_before_the_trace(void **state)
{
	(void)state;
	const char *txt =
		"  w-9 [000] 1.0: tracing_mark_write: ptfuzz mapped 0x10420000-0x10424000 [vdso]\n"
		"  w-9 [000] 1.1: tracing_mark_write: ptfuzz mapped 0xffffffffff600000 0xffffffffff601000 [vsyscall]\n"
		"  w-9 [000] 1.2: sys_mmap(addr: 0, len: 10000, prot: 3, flags: 22, fd: ffffffffffffffff, off: 0)\n"
		"  w-9 [000] 1.3: sys_mmap -> 0x10400000\n"
		"  w-9 [000] 1.4: tracing_mark_write: ptfuzz mapped 0x10400000 0x10401000\n"
		"  w-9 [000] 1.5: sys_mprotect(start: 10420000, len: 1000, prot: 1)\n"
		"  w-9 [000] 1.6: sys_mprotect -> 0x0\n";
	char *t = import(txt);
	char *ev = ops_of(t);
	assert_string_equal(ev, "cpu0 mmap va=0x10420000 len=16K asid=1\n"
				"cpu0 mmap va=0x10400000 len=64K prot=rw asid=1\n");
	assert_non_null(strstr(t, "# line 1: mapped before the trace: [vdso] 0x10420000-0x10424000 (held by the model, "
				  "never touched)"));
	assert_non_null(strstr(t, "[vsyscall] 0xffffffffff600000-0xffffffffff601000: skipped: beyond the user "
				  "address space"));
	assert_non_null(strstr(t, "(anonymous) 0x10400000-0x10401000: skipped: a traced mmap mapped part of it"));
	/* not a traced mapping: calls on it stay comments */
	assert_non_null(strstr(t, "mprotect(start=0x10420000, len=0x1000, prot=0x1) = 0x0: skipped"));
	free(ev);
	free(t);
	assert_import_error("  w-1 [000] 1.0: tracing_mark_write: ptfuzz mapped 1000\n", "bad.trace:1:", "the end of");
	assert_import_error("  w-1 [000] 1.0: tracing_mark_write: ptfuzz mapped 2000 1000\n", "bad.trace:1:",
			    "not a page-aligned range");
	assert_import_error("  w-1 [000] 1.0: tracing_mark_write: ptfuzz mapped x\n", "bad.trace:1:52:", "the start of");
}

/* __split_huge_pmd() with the PMD it was called on (capture.sh's pmdval): on a huge PMD (a
 * block, or a non-present migration entry) it is a split; on an empty PMD or a PTE table it
 * splits nothing and is a comment, not evidence. */
static void test_split_huge_pmd_pmdval(void **state)
{
	struct pt_ftrace_info info;
	(void)state;
	const char *txt =
		"  w-9 (9) [000] 0.8: sys_mmap(addr: 0, len: 1000000, prot: 3, flags: 22, fd: ffffffffffffffff, off: 0)\n"
		"  w-9 (9) [000] 0.9: sys_mmap -> 0x10000000\n"
		"  w-9 (9) [000] 1.0: sys_munmap(addr: 10100000, len: 100000)\n"
		"  w-9 (9) [000] d.... 1.1: ptk___split_huge_pmd: (__split_huge_pmd+0x0/0x300) address=0x10100000 pmdval=0x0\n"
		"  w-9 (9) [000] d.... 1.2: ptk___split_huge_pmd: (__split_huge_pmd+0x0/0x300) address=0x10200000 pmdval=0x80000044a00003\n"
		"  w-9 (9) [000] d.... 1.3: ptk___split_huge_pmd: (__split_huge_pmd+0x0/0x300) address=0x10400000 pmdval=0xe8000045a00f41\n"
		"  w-9 (9) [000] d.... 1.4: ptk___split_huge_pmd: (__split_huge_pmd+0x0/0x300) address=0x10600000 pmdval=0x44a00004\n"
		"  w-9 (9) [000] d.... 1.5: ptk___split_huge_pmd: (__split_huge_pmd+0x0/0x300) address=0x10800000\n"
		"  w-9 (9) [000] 1.6: sys_munmap -> 0x0\n";
	char *t = import_opts(txt, NULL, &info);
	char *ev = events_of(t, true);
	assert_string_equal(ev, "cpu0 mmap va=0x10000000 len=16M prot=rw asid=1\n"
				"cpu0 kernel result ret=0x10000000 asid=1\n"
				"cpu0 munmap va=0x10100000 len=1M asid=1\n"
				"cpu0 kernel result asid=1\n"
				"cpu0 kernel split_huge_pmd va=0x10400000 asid=1\n"
				"cpu0 kernel split_huge_pmd va=0x10600000 asid=1\n"
				"cpu0 kernel split_huge_pmd va=0x10800000 asid=1\n");
	assert_non_null(strstr(t, "ptk___split_huge_pmd at 0x10100000 on pmd 0x0 (empty): nothing split"));
	assert_non_null(strstr(t, "ptk___split_huge_pmd at 0x10200000 on pmd 0x80000044a00003 (a PTE table): nothing split"));
	assert_int_equal(info.evidence, 5);
	assert_int_equal(info.ignored, 2);
	free(ev);
	free(t);
	assert_import_error("  w-1 [000] 1.0: ptk___split_huge_pmd: (__split_huge_pmd+0x0/0x300) pmdval=zz\n", "bad.trace:1:",
			    "for pmdval of ptk___split_huge_pmd");
}

/* Each op's result, and the kprobe evidence inside and outside calls. */
static void test_kernel_evidence(void **state)
{
	struct pt_ftrace_info info;
	(void)state;
	const char *txt =
		"  w-9 (9) [000] 1.0: sys_mmap(addr: 0, len: 400000, prot: 3, flags: 22, fd: ffffffffffffffff, off: 0)\n"
		"  w-9 (9) [000] 1.1: sys_mmap -> 0x10000000\n"
		"  w-9 (9) [000] 1.2: tracing_mark_write: ptfuzz touch 0x10000000 0x200000 w\n"
		"  w-9 (9) [000] d.... 1.25: ptk_do_huge_pmd_anonymous_page: (do_huge_pmd_anonymous_page+0x0/0x5a0) vmf=0xffff80000a2b3d58\n"
		"  w-9 (9) [000] 1.3: sys_mremap(addr: 10000000, old_len: 200000, new_len: 200000, flags: 3, new_addr: 20000000)\n"
		/* another thread of the process, inside the call: not this call's */
		"  w-10 (9) [001] d.... 1.31: ptk___pte_alloc: (__pte_alloc+0x0/0x1a0) pmd=0xffff000012345000\n"
		"  w-9 (9) [000] d.... 1.32: ptk_move_page_tables: (move_page_tables+0x0/0x6a0) old_addr=0x10000000 new_addr=0x20000000 len=0x200000\n"
		"  w-9 (9) [000] d.... 1.33: ptk_move_huge_pmd: (move_huge_pmd+0x0/0x2d0) old_addr=0x10000000 new_addr=0x20000000\n"
		"  w-9 (9) [000] d.... 1.34: ptk_move_page_tables_ret: (move_vma+0x170/0x3f0 <- move_page_tables) ret=0x200000\n"
		"  w-9 (9) [000] 1.4: sys_mremap -> 0x20000000\n"
		/* a failed call: its evidence is a comment */
		"  w-9 (9) [000] 1.5: sys_mprotect(start: 30000000, len: 1000, prot: 1)\n"
		"  w-9 (9) [000] d.... 1.51: ptk___split_huge_pmd: (__split_huge_pmd+0x0/0x300) address=0x30000000\n"
		"  w-9 (9) [000] 1.6: sys_mprotect -> -12\n"
		/* a kernel function: asid 0; an unknown ptk_ event: ignored */
		"  w-9 (9) [000] d.... 1.7: ptk_vfree: (vfree+0x0/0x90) addr=0xffff800008000000\n"
		"  w-9 (9) [000] d.... 1.8: ptk_something_else: (x+0x0/0x10) arg1=0x1\n"
		"  w-9 (9) [000] 1.9: sys_munmap(addr: 20000000, len: 200000)\n"
		"  w-9 (9) [000] 2.0: sys_munmap -> 0x0\n";
	char *t = import_opts(txt, NULL, &info);
	char *ev = events_of(t, true);
	assert_string_equal(ev, "cpu0 mmap va=0x10000000 len=4M prot=rw asid=1\n"
				"cpu0 kernel result ret=0x10000000 asid=1\n"
				"cpu0 touch va=0x10000000 len=2M asid=1 flags=0x1\n"
				"cpu0 kernel huge_pmd_fault asid=1\n"
				"cpu1 kernel pte_alloc asid=1\n"
				"cpu0 mremap va=0x10000000 len=2M new_va=0x20000000 new_len=2M asid=1 flags=0x3\n"
				"cpu0 kernel result ret=0x20000000 asid=1\n"
				"cpu0 kernel move_page_tables va=0x10000000 new_va=0x20000000 len=2M asid=1\n"
				"cpu0 kernel move_huge_pmd va=0x10000000 new_va=0x20000000 asid=1\n"
				"cpu0 kernel move_page_tables_ret ret=0x200000 asid=1\n"
				"cpu0 kernel vfree va=0xffff800008000000\n"
				"cpu0 munmap va=0x20000000 len=2M asid=1\n"
				"cpu0 kernel result asid=1\n");
	assert_non_null(strstr(t, "evidence of the call above, not replayed: kernel split_huge_pmd va=0x30000000"));
	assert_int_equal(info.evidence, 9);
	assert_int_equal(info.ignored, 1);
	free(ev);
	free(t);
	/* --no-evidence: the ops only */
	struct pt_ftrace_opts no = { PT_FTRACE_THP_TRACE, true };
	t = import_opts(txt, &no, &info);
	ev = events_of(t, true);
	char *ops = ops_of(t);
	assert_string_equal(ev, ops);
	assert_int_equal(info.evidence, 0);
	free(ops);
	free(ev);
	free(t);
}

/* What capture.sh saves (tests/data/capture/captured.ftrace) imports: threads share
 * their process's address space (record-tgid), evidence follows each op. */
static void test_captured_sample(void **state)
{
	char path[1024];
	struct pt_error err = { PT_OK, "" };
	struct pt_ftrace_info info;
	void *data = NULL;
	size_t size = 0;
	(void)state;
	snprintf(path, sizeof(path), "%s/captured.ftrace", CAPTURE_DATA);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char buf[16384];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *t = import_opts(buf, NULL, &info);
	assert_non_null(strstr(t, "kernel=\"Linux 6.1.0-57-arm64"));
	assert_non_null(strstr(t, "cpu1 madvise dontneed va=0xffff9f800000 len=64K asid=1\n"));	/* thread 413 */
	assert_non_null(strstr(t, "cpu0 kernel move_huge_pmd va=0xffffa0000000 new_va=0xffff9fe00000 asid=1\n"));
	assert_int_equal(info.asids, 1);
	assert_int_equal(info.syscalls, 10);
	assert_int_equal(info.failed, 1);
	assert_int_equal(info.evidence, 17);
	assert_int_equal(info.unpaired, 0);
	free(t);
	assert_int_equal(pt_import_ftrace_mem(buf, n, "captured.ftrace", NULL, PT_ENC_BINARY, &data, &size, NULL, &err), 0);
	/* the grow the kernel moved (64K -> 4M) grows in place in the model: the touch,
	 * madvise and mprotect at the kernel's address then fail there (FINDINGS.md) */
	assert_replays(data, size, "captured.ftrace", 3);
	free(data);
}

static void test_empty_input(void **state)
{
	(void)state;
	char *t = import("");
	assert_non_null(strstr(t, "cpus=1"));
	free(t);
	t = import(TRACEFS_HEAD);
	assert_non_null(strstr(t, "cpus=2"));
	free(t);
}

static void test_malformed_input_names_file_line_col(void **state)
{
	(void)state;
	assert_import_error("# tracer: nop\nhello world\n", "bad.trace:2:1: expected a trace line", NULL);
	assert_import_error("  w-1 [000] x.0: sys_munmap(addr: 0, len: 1000)\n", "bad.trace:1:18:", "timestamp");
	assert_import_error("  w-1 [000] 1.0 sys_munmap(addr: 0, len: 1000)\n", "bad.trace:1:16:", "':'");
	assert_import_error("  w-1 [000] 1.0: sys_munmap(addr: zz, len: 1000)\n", "bad.trace:1:35:",
			    "hexadecimal");
	assert_import_error("  w-1 [000] 1.0: sys_munmap(addr: 0)\n", "bad.trace:1:", "expected 2 arguments");
	assert_import_error("  w-1 [000] 1.0: sys_munmap(addr: 0, len: 1, x: 2)\n", "bad.trace:1:", "got more");
	assert_import_error("  w-1 [000] 1.0: sys_munmap(addr: 0, len: 1000\n", "bad.trace:1:", "')'");
	assert_import_error("  w-1 [000] 1.0: sys_munmap -> banana\n", "bad.trace:1:32:", "return value");
	assert_import_error("  w-1 [000] 1.0: sys_munmap => 0\n", "bad.trace:1:29:", "'->'");
	assert_import_error("  w-1 [000] 1.0: sys_exit_munmap: 0x0 junk\n", "bad.trace:1:39:", "end of the line");
	assert_import_error("  w-1 [000] 1.0: tracing_mark_write: ptfuzz touch nowhere 1\n", "bad.trace:1:51:",
			    "address");
	assert_import_error("  w-1 [000] 1.0: tracing_mark_write: ptfuzz touch 1000 1000 x\n", "bad.trace:1:61:",
			    "end of");
	assert_import_error("cpus=0\n", "bad.trace:1:6:", "CPU count");
	/* kprobe evidence of capture.sh */
	assert_import_error("  w-1 [000] 1.0: ptk_move_huge_pmd: (move_huge_pmd+0x0/0x2d0) old_addr\n", "bad.trace:1:", "NAME=VALUE");
	assert_import_error("  w-1 [000] 1.0: ptk_vfree: (vfree+0x0/0x90) addr=0xzz\n", "bad.trace:1:51:",
			    "expected a number (0x...) for addr of ptk_vfree");
	assert_import_error("  w-1 [000] 1.0: ptk_vfree: (vfree+0x0/0x90 addr=1\n", "bad.trace:1:29:", "')'");
	assert_import_error("ok\n  w-1 [000] 1.0: sys_munmap(addr: 0, len: 1000)\n", "bad.trace:1:1:", NULL);
	assert_import_error("  w-1 [000] 1.0: sys_munmap(addr: 0, len: 10000000000000000)\n", "bad.trace:1:", "hexadecimal");
	/* a NUL byte */
	{
		struct pt_error err = { PT_OK, "" };
		void *data;
		size_t size;
		static const char nul[] = "  w-1 [000] 1.0: sys_munmap(a\0ddr: 0, len: 1000)\n";
		assert_int_equal(pt_import_ftrace_mem(nul, sizeof(nul) - 1, "bad.trace", NULL, PT_ENC_TEXT, &data,
						      &size, NULL, &err), -1);
		assert_string_equal(err.msg, "bad.trace:1:30: expected text, got a NUL byte");
	}
}

static void test_file_api_and_missing_file(void **state)
{
	struct pt_error err = { PT_OK, "" };
	char in[] = "/tmp/test_ftrace_inXXXXXX";
	(void)state;
	int fd = mkstemp(in);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs(tracefs_session, f);
	fclose(f);
	char out[64];
	snprintf(out, sizeof(out), "%s.ptt", in);
	assert_int_equal(pt_import_ftrace(in, out, &err), 0);
	struct pt_reader *r = pt_reader_open(out, &err);
	assert_non_null(r);
	assert_string_equal(pt_reader_header(r)->method, "ftrace");
	pt_reader_close(r);
	remove(out);
	/* a malformed input leaves no output */
	f = fopen(in, "w");
	fputs("garbage\n", f);
	fclose(f);
	assert_int_equal(pt_import_ftrace(in, out, &err), -1);
	assert_int_equal(err.code, PT_ERR_IMPORT);
	assert_null(fopen(out, "r"));
	remove(in);
	assert_int_equal(pt_import_ftrace("/nonexistent/x.trace", out, &err), -1);
	assert_int_equal(err.code, PT_ERR_IO);
}

/* Every prefix of a valid trace, and every single-byte corruption of it, imports or fails cleanly. */
static void test_prefixes_and_corruptions_do_not_crash(void **state)
{
	size_t n = strlen(tracefs_session);
	char *buf = malloc(n + 1);
	(void)state;
	assert_non_null(buf);
	for (size_t i = 0; i <= n; i += 7) {
		struct pt_error err = { PT_OK, "" };
		void *data = NULL;
		size_t size;
		if (!pt_import_ftrace_mem(tracefs_session, i, "p", NULL, PT_ENC_TEXT, &data, &size, NULL, &err))
			free(data);
		else
			assert_int_equal(err.code, PT_ERR_IMPORT);
		memcpy(buf, tracefs_session, n);
		buf[i < n ? i : 0] ^= (char)0x5a;
		data = NULL;
		if (!pt_import_ftrace_mem(buf, n, "c", NULL, PT_ENC_TEXT, &data, &size, NULL, &err))
			free(data);
		else
			assert_int_equal(err.code, PT_ERR_IMPORT);
	}
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tracefs_syscalls_become_ops),
		cmocka_unit_test(test_header_cpus_kernel_and_method),
		cmocka_unit_test(test_trace_cmd_report_form),
		cmocka_unit_test(test_thp_option_overrides_the_marker),
		cmocka_unit_test(test_failed_calls_are_comments),
		cmocka_unit_test(test_processes_are_address_spaces),
		cmocka_unit_test(test_threads_without_tgid_from_clone_flags),
		cmocka_unit_test(test_untraced_memory_and_other_events_are_skipped),
		cmocka_unit_test(test_mremap_bookkeeping),
		cmocka_unit_test(test_imported_trace_replays_clean),
		cmocka_unit_test(test_shipped_captures_import_and_replay_clean),
		cmocka_unit_test(test_moved_grow_is_kept_as_asked),
		cmocka_unit_test(test_kernel_evidence),
		cmocka_unit_test(test_split_huge_pmd_pmdval),
		cmocka_unit_test(test_mapped_before_the_trace),
		cmocka_unit_test(test_captured_sample),
		cmocka_unit_test(test_empty_input),
		cmocka_unit_test(test_malformed_input_names_file_line_col),
		cmocka_unit_test(test_file_api_and_missing_file),
		cmocka_unit_test(test_prefixes_and_corruptions_do_not_crash),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
