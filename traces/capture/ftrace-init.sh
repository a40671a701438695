#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# ftrace-init.sh - /init of the initramfs record-ftrace.sh boots: mount proc,
# sysfs and tracefs, run the same capture script a user runs on real arm64
# hardware (/capture.sh = traces/capture/capture.sh: syscall events, kprobes,
# record-tgid, markers) around /ftrace-workload, and print the ftrace text on
# the console between two marker lines.  The import happens on the host.
# This is the guest's init: when it is done the (virtual) machine powers off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /tmp
echo "ptfuzz-ftrace: running the workload under /capture.sh"
# the kernel's BTF as bpftool would print it, read from the image on the host (no bpftool here)
[ -r /btf-raw.txt ] && export PTFUZZ_BTF_DUMP=/btf-raw.txt
PTFUZZ_WORKLOAD_BIN=/ftrace-workload sh /capture.sh -n -f -b 16384 -p /provenance -o /tmp/ftrace.ptt -w ftrace
echo "ptfuzz-ftrace: capture exit $?"
echo "===PTFUZZ-FTRACE-BEGIN==="
cat /tmp/ftrace.ftrace
echo "===PTFUZZ-FTRACE-END==="
sync
poweroff -f
