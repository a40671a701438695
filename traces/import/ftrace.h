/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ftrace.h - import ftrace text (the tracefs `trace` / `trace_pipe` format,
 * or `trace-cmd report` output) as an ops-level ptfuzz trace.
 *
 * What is read (docs: traces/examples/README-ftrace.md):
 *
 *  - syscall events of mmap, mremap, mprotect, munmap and madvise, enter and
 *    exit, in either form:
 *      tracefs:    `sys_mmap(addr: 0, len: 200000, prot: 3, ...)`  `sys_mmap -> 0xffff9a400000`
 *      trace-cmd:  `sys_enter_mmap: addr: 0x00000000, len: 0x00200000, ...`  `sys_exit_mmap: 0xffff9a400000`
 *    An enter and the next exit of the same thread (PID) make one operation,
 *    written when the exit is seen, on the CPU of the enter.  A successful
 *    call becomes one ops event (mmap at the address the kernel returned,
 *    mremap to the address it returned); a failed one becomes a comment.
 *  - trace_marker lines (`tracing_mark_write: TEXT`, trace-cmd `print: ...`)
 *    that start with `ptfuzz `:
 *      ptfuzz touch VA LEN [w|r]   the workload is about to touch [VA, VA+LEN)
 *      ptfuzz mapped START END [NAME]
 *                                  a mapping that existed before the trace
 *                                  (a line of the workload's /proc/self/maps:
 *                                  its image, [vvar], [vdso], [stack]): an
 *                                  `mmap prot=none` the model holds and never
 *                                  touches, so that the space it takes is
 *                                  taken in the model too; later calls on it
 *                                  stay comments (not a traced mapping)
 *      ptfuzz thp: always|madvise|never
 *                                  /sys/kernel/mm/transparent_hugepage/enabled:
 *                                  `always` gives the following mmaps order=9
 *      ptfuzz kernel: TEXT         the header's kernel (first one wins)
 *      ptfuzz machine: TEXT        the header's machine (first one wins)
 *    Any other marker text is kept as a comment (`BEGIN op ...` / `END op`).
 *  - kprobe events of traces/capture/capture.sh, `ptk_FUNC: (SYM+OFF/SIZE)
 *    NAME=0x... ...` (return probes `ptk_FUNC_ret: (CALLER <- FUNC) ret=0x...`),
 *    for the functions of enum pt_kernel_ev: `kernel` evidence events (va from
 *    old_addr/address/addr/floor/start, va2 from new_addr/ceiling/end, len from
 *    len/size/count, ret from ret; other arguments are dropped).
 *
 * Evidence: each op is the call as the kernel was asked (no op is rewritten
 * to make the model agree), then `kernel result ret=RET` (the syscall's
 * return value), then the kprobe evidence seen between the call's enter and
 * exit on the same thread.  Kprobe events outside a traced call follow the
 * op before them; those of a call that is not replayed become comments.
 *  - `sched_process_exec` for a PID: its next operations get a new address
 *    space.
 *  - `task_newtask` (pid=CHILD clone_flags=HEX), without the TGID column: a
 *    child created with CLONE_VM (a thread, a vfork child until it execs)
 *    shares its creator's address space.
 *
 * Address spaces: each process (the TGID column when the trace has one
 * (options/record-tgid), else the PID) gets ASID 1, 2, ... in order of
 * appearance.  The importer keeps the set of ranges that traced mmaps
 * mapped; an mprotect, madvise, mremap or touch of memory outside that set
 * (the program's image, its stack, memory mapped before tracing began)
 * cannot be replayed by the model and is kept as a comment instead.
 * A thread whose operation runs on another CPU than its last one was
 * switched out there: a `switch tid=0` (to idle) on the old CPU comes first,
 * and a CPU whose last operation was another thread's gets `switch
 * tid=PID` (both imply __switch_to()'s dsb(ish)).
 * Anything else in the trace (other events, header comments, lost-events
 * notes) is skipped; a line that does not have the shape of a trace line,
 * or a known event whose fields do not parse, is an error naming
 * FILE:LINE:COL.
 */
#ifndef PTFUZZ_FTRACE_H
#define PTFUZZ_FTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "event.h"
#include "trace.h"

enum pt_ftrace_thp { PT_FTRACE_THP_TRACE = 0, PT_FTRACE_THP_NEVER, PT_FTRACE_THP_ALWAYS };

struct pt_ftrace_opts {
	enum pt_ftrace_thp thp;	/* TRACE: what a `ptfuzz thp:` marker says (never when none) */
	bool no_evidence;	/* write no `kernel` evidence events (an ops-only trace) */
};

/* What an import saw. */
struct pt_ftrace_info {
	uint64_t lines;		/* input lines */
	uint64_t events;	/* trace lines (events of any kind) */
	uint64_t syscalls;	/* enter/exit pairs of the five syscalls */
	uint64_t ops;		/* ops events written (syscalls and touches) */
	uint64_t failed;	/* syscalls that failed in the kernel (kept as comments) */
	uint64_t skipped;	/* successful syscalls / touches kept as comments (not replayable) */
	uint64_t unpaired;	/* an enter without its exit or the reverse */
	uint64_t ignored;	/* trace lines of other events */
	uint64_t lost;		/* events the trace says were lost */
	uint64_t evidence;	/* `kernel` evidence events written (results, kprobes) */
	unsigned cpus;		/* the header's CPU count */
	unsigned asids;		/* address spaces */
};

/*!
 * pt_import_ftrace() : read the ftrace text in ("-" = stdin) and write an
 * ops-level trace to out in the encoding its name asks for
 * (pt_encoding_for_path()).  Nothing is left under out on error.
 * @return : 0, or -1 with err set: PT_ERR_IMPORT with "FILE:LINE:COL: ..."
 *           for malformed input, PT_ERR_IO, or the writer's error.
 */
int pt_import_ftrace(const char *in, const char *out, struct pt_error *err);

/*! pt_errno_name() : "ENOMEM" for 12 (the errnos mm syscalls return), "E?" for others. */
const char *pt_errno_name(int64_t e);
/*! pt_import_ftrace_opts() : the same with options (NULL = defaults) and what it saw (info may be NULL). */
int pt_import_ftrace_opts(const char *in, const char *out, const struct pt_ftrace_opts *opts,
			  struct pt_ftrace_info *info, struct pt_error *err);

/*!
 * pt_import_ftrace_mem() : the same from and into memory (tests, fuzzers):
 * *data (malloc'd, the caller frees it) and *size get the trace in enc.
 * @return : 0, or -1 with err set (*data is then NULL).
 */
int pt_import_ftrace_mem(const void *buf, size_t size, const char *name, const struct pt_ftrace_opts *opts,
			 enum pt_encoding enc, void **data, size_t *dsize, struct pt_ftrace_info *info,
			 struct pt_error *err);

#endif
