#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# ftrace-init.sh - /init of the initramfs record-ftrace.sh boots: mount
# tracefs, enable the syscall events of mmap / mremap / mprotect / munmap /
# madvise (and sched_process_exec), run /ftrace-workload (which turns
# tracing on for its own PID), and print the trace on the console between
# two marker lines; then power off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || mount -t debugfs nodev /sys/kernel/debug
T=/sys/kernel/tracing
[ -e $T/trace ] || T=/sys/kernel/debug/tracing
echo 0 > $T/tracing_on
echo 16384 > $T/buffer_size_kb
echo 1 > $T/options/record-tgid 2>/dev/null
for s in mmap mremap mprotect munmap madvise; do
	echo 1 > $T/events/syscalls/sys_enter_$s/enable
	echo 1 > $T/events/syscalls/sys_exit_$s/enable
done
echo 1 > $T/events/sched/sched_process_exec/enable
echo > $T/trace
echo "ptfuzz-ftrace: running the workload"
/ftrace-workload $T /provenance
echo "ptfuzz-ftrace: workload exit $?"
echo 0 > $T/tracing_on
echo "===PTFUZZ-FTRACE-BEGIN==="
cat $T/trace
echo "===PTFUZZ-FTRACE-END==="
sync
poweroff -f
