#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# record-ftrace.sh - record an ops-level trace from a real Debian arm64 kernel
# without arm64 hardware: download Debian's arm64 6.1 kernel and busybox-static
# (into a cache outside the repository; nothing is installed from them),
# build the static aarch64 workload (ftrace-workload.c), boot it under
# qemu-system-aarch64 (TCG) with an initramfs whose /init (ftrace-init.sh)
# runs capture.sh - the script for real arm64 hardware - around the
# workload, fetch the ftrace text from the serial console, import it with
# `ptfuzz import-ftrace`, and replay it.
#
# usage: traces/capture/record-ftrace.sh [-o OUT.ptt] [-k KERNEL-ABI] [-f] [--no-install]
#   -o OUT.ptt      the trace to write (default build/capture/ftrace-X.Y-workload.ptt,
#                   X.Y the kernel's version); the raw ftrace text goes beside it as
#                   OUT without .ptt + .ftrace
#   -f              overwrite OUT and its .ftrace if they exist (default: refuse)
#   -k KERNEL-ABI   e.g. 6.1.0-57 (default: the newest linux-image-6.1.0-*-arm64-unsigned
#                   of bookworm); `sid` or a sid ABI such as 7.2.13+deb14: Debian
#                   sid's arm64 kernel, downloaded by fetch.sh (what record-qemu.sh boots)
#   --no-install    do not apt-get install the host tools (they must be there)
#
# The kprobe arguments are placed by the kernel's own BTF: the guest has no
# bpftool, so btf-dump.py reads the BTF out of the kernel image on the host
# (python3) and capture.sh reads that dump (PTFUZZ_BTF_DUMP) - the positions
# of 7.x, whose move_page_tables() takes a struct, included.
#
# environment: PTFUZZ_CAPTURE_CACHE (default ~/.cache/ptfuzz-capture),
#              PTFUZZ (the ptfuzz binary; default build/release/tools/ptfuzz,
#              built with the release preset if missing),
#              QEMU (default qemu-system-aarch64), SMP (2), MEM (1024).
#
# On Debian 12 (bookworm) x86-64, as root or with sudo; the only packages it
# installs are gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, qemu-system-arm
# and cpio, through apt-install.sh, which refuses to upgrade or remove a host
# package (traces/capture/README.md).  Timings there: download ~ 5 s, boot +
# workload + trace dump ~ 10-40 s.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${PTFUZZ_CAPTURE_CACHE:-$HOME/.cache/ptfuzz-capture}
out=
abi=
install=1
force=0
while [ $# -gt 0 ]; do
	case $1 in
	-o) [ $# -ge 2 ] || { echo "record-ftrace.sh: -o needs a file (see --help)" >&2; exit 2; }; out=$2; shift 2 ;;
	-k) [ $# -ge 2 ] || { echo "record-ftrace.sh: -k needs a kernel ABI (see --help)" >&2; exit 2; }; abi=$2; shift 2 ;;
	-f) force=1; shift ;;
	--no-install) install=0; shift ;;
	-h|--help) sed -n '3,37p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "record-ftrace.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
case ${out:-x.ptt} in *.ptt) ;; *) echo "record-ftrace.sh: -o: expected a name ending in .ptt, got '$out'" >&2; exit 2 ;; esac
sid=0
case $abi in
''|6.1.0-[0-9]*) ;;
sid) sid=1 abi= ;;
[0-9]*.[0-9]*.[0-9]*+deb[0-9]*) sid=1 ;;
*) echo "record-ftrace.sh: -k: expected a 6.1 kernel ABI like 6.1.0-57, 'sid' or a sid ABI like 7.2.13+deb14, got '$abi'" >&2; exit 2 ;;
esac
if [ -z "$out" ]; then
	case $abi in
	6.1.0-*|'') [ $sid = 1 ] || out=$repo/build/capture/ftrace-6.1-workload.ptt ;;
	*) out=$repo/build/capture/ftrace-$(echo "$abi" | cut -d. -f1,2)-workload.ptt ;;
	esac
fi
raw=${out%.ptt}.ftrace
no_clobber() {
	[ $force = 1 ] && return 0
	for f in "$out" "$raw"; do
		[ ! -e "$f" ] || { echo "record-ftrace.sh: $f exists (use -f to overwrite it)" >&2; exit 2; }
	done
}
[ -z "$out" ] || no_clobber
QEMU=${QEMU:-qemu-system-aarch64}
SMP=${SMP:-2}
MEM=${MEM:-1024}
say() { echo "record-ftrace: $*" >&2; }
PTFUZZ=${PTFUZZ:-$repo/build/release/tools/ptfuzz}
t0=$(date +%s)

# ---- 1. host tools (bookworm): cross compiler, static arm64 libc, QEMU ----
if [ $install = 1 ]; then
	need=
	command -v aarch64-linux-gnu-gcc >/dev/null || need="$need gcc-aarch64-linux-gnu"
	[ -e /usr/aarch64-linux-gnu/lib/libc.a ] || need="$need libc6-dev-arm64-cross"
	command -v "$QEMU" >/dev/null || need="$need qemu-system-arm"
	command -v cpio >/dev/null || need="$need cpio"
	if [ -n "$need" ]; then
		sh "$here/apt-install.sh" $need || exit 1
	fi
fi

# ---- 2. Debian's arm64 kernel and busybox-static, downloaded, not installed ----
# private lists, cache and status: the host's apt state is neither read for
# installed packages nor written, and no lock of the host's apt is taken
if [ $sid = 1 ]; then
	# Debian sid's kernel: the download record-qemu.sh uses (its private apt state, the cache's dl/)
	PTFUZZ_CAPTURE_CACHE=$cache PTFUZZ_KERNEL_ABI=$abi bash "$here/fetch.sh" --kernel-only >&2 || {
		say "cannot download Debian sid's arm64 kernel (fetch.sh)"; exit 1; }
	abi=$(cat "$cache/kernel-abi")
	if [ -z "$out" ]; then
		out=$repo/build/capture/ftrace-$(echo "$abi" | cut -d. -f1,2)-workload.ptt
		raw=${out%.ptt}.ftrace
		no_clobber
	fi
	kdeb=$(ls "$cache"/dl/linux-binary-unsigned-"$abi"-arm64_*_arm64.deb "$cache"/dl/linux-binary-"$abi"-arm64_*_arm64.deb \
		"$cache"/dl/linux-image-"$abi"-arm64-unsigned_*_arm64.deb 2>/dev/null | tail -1)
	bdeb=$(ls "$cache"/dl/busybox-static_*_arm64.deb | tail -1)
	kpkg=$(dpkg-deb -f "$kdeb" Package)
	kroot=$cache/root-$abi
	[ -d "$kroot/usr" ] || [ -d "$kroot/boot" ] || dpkg -x "$kdeb" "$kroot"
	image=$(ls "$kroot"/usr/lib/modules/"$abi"-arm64/vmlinuz* "$kroot"/boot/vmlinuz-"$abi"-arm64 2>/dev/null | head -n1)
else
mkdir -p "$cache/apt-lists-arm64/partial" "$cache/apt-cache-arm64/archives/partial" "$cache/debs"
aopt="-oAPT::Architecture=arm64 -oAPT::Architectures=arm64 -oDir::State::Lists=$cache/apt-lists-arm64"
aopt="$aopt -oDir::Cache=$cache/apt-cache-arm64 -oDir::State::status=/dev/null -oDebug::NoLocking=1"
[ "$(id -u)" = 0 ] && aopt="$aopt -oAPT::Sandbox::User=root"	# _apt cannot write into $HOME/.cache
if [ -z "$(ls "$cache/apt-lists-arm64" | grep -i packages || true)" ] || [ -z "$abi" ]; then
	say "apt-get update (arm64 lists in $cache/apt-lists-arm64)"
	apt-get $aopt update -q >/dev/null
fi
if [ -z "$abi" ]; then
	abi=$(apt-cache $aopt search --names-only '^linux-image-6\.1\.0-[0-9]+-arm64-unsigned$' |
		sed -n 's/^linux-image-\(6\.1\.0-[0-9]*\)-arm64-unsigned .*/\1/p' | sort -V | tail -1)
	[ -n "$abi" ] || { say "no linux-image-6.1.0-*-arm64-unsigned in Debian's archive"; exit 1; }
fi
kpkg=linux-image-$abi-arm64-unsigned
(cd "$cache/debs" && ls ${kpkg}_*_arm64.deb >/dev/null 2>&1 || apt-get $aopt download "$kpkg" >/dev/null)
(cd "$cache/debs" && ls busybox-static_*_arm64.deb >/dev/null 2>&1 || apt-get $aopt download busybox-static >/dev/null)
kdeb=$(ls "$cache"/debs/${kpkg}_*_arm64.deb | tail -1)
bdeb=$(ls "$cache"/debs/busybox-static_*_arm64.deb | tail -1)
kroot=$cache/root-$abi
[ -e "$kroot/boot/vmlinuz-$abi-arm64" ] || dpkg -x "$kdeb" "$kroot"
image=$kroot/boot/vmlinuz-$abi-arm64
fi
kver=$(dpkg-deb -f "$kdeb" Version)
bver=$(dpkg-deb -f "$bdeb" Version)
broot=$cache/root-busybox
[ "$(cat "$broot/.version" 2>/dev/null)" = "$bver" ] ||
	{ rm -rf "$broot"; dpkg -x "$bdeb" "$broot" && echo "$bver" >"$broot/.version"; }
busybox=$(ls "$broot"/bin/busybox "$broot"/usr/bin/busybox 2>/dev/null | head -n1)	# sid's is in usr/bin
[ -n "$busybox" ] || { say "no busybox in $bdeb"; exit 1; }
[ -r "$image" ] || { say "no kernel image in $kdeb"; exit 1; }
say "kernel $kpkg $kver, busybox-static $bver"

# ---- 3. ptfuzz (before the boot: nothing fails after it) ----
if [ ! -x "$PTFUZZ" ]; then
	command -v "$PTFUZZ" >/dev/null 2>&1 || {
		say "building ptfuzz (cmake --preset release)"
		(cd "$repo" && cmake --preset release >/dev/null && cmake --build --preset release --target ptfuzz >/dev/null) ||
			{ say "cannot build ptfuzz (README.md: Build), or set PTFUZZ"; exit 1; }
	}
fi

# ---- 4. the workload and the initramfs ----
work=$cache/work
rm -rf "$work"
mkdir -p "$work/initrd/bin" "$work/initrd/proc" "$work/initrd/sys" "$work/initrd/dev" "$work/initrd/tmp"
aarch64-linux-gnu-gcc -static -O2 -Wall -o "$work/initrd/ftrace-workload" "$here/ftrace-workload.c"
cp "$busybox" "$work/initrd/bin/busybox"
ln -s busybox "$work/initrd/bin/sh"
cp "$here/ftrace-init.sh" "$work/initrd/init"
cp "$here/capture.sh" "$work/initrd/capture.sh"
# the kernel's BTF, read on the host: the functions capture.sh probes and the structs it reads
funcs=$(sed -n '/^probe_table() {/,/^EOF$/p' "$here/capture.sh" | sed '1,2d;$d' | awk '{print $1}')
structs=$(sed -n '/^probe_table() {/,/^EOF$/p' "$here/capture.sh" | grep -o '[a-z_]*->[a-z_]*\.' | sed 's/.*->//; s/\.$//' | sort -u)
if python3 "$here/btf-dump.py" "$image" $funcs --structs $structs >"$work/initrd/btf-raw.txt"; then
	say "BTF of $(basename "$image"): $(grep -c '^\[' "$work/initrd/btf-raw.txt") records for the kprobes"
else
	rm -f "$work/initrd/btf-raw.txt"
	say "no BTF read from the image: kprobe arguments at their 6.1 positions"
fi
chmod +x "$work/initrd/init" "$work/initrd/capture.sh"
qver=$("$QEMU" --version | sed -n '1s/.*version \([^ ]*\).*/\1/p')
qpkg=$(dpkg-query -W -f '${Version}' qemu-system-arm 2>/dev/null || echo "?")
machine="qemu-system-aarch64 $qver (Debian $qpkg) -M virt -cpu max -smp $SMP -m $MEM, TCG"
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
cat > "$work/initrd/provenance" <<EOF
ptfuzz kernel: Debian $kpkg $kver
ptfuzz machine: $machine
provenance: recorded $date by traces/capture/record-ftrace.sh (capture.sh in the guest); workload traces/capture/ftrace-workload.c; busybox-static $bver
EOF
(cd "$work/initrd" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initrd.gz"

# ---- 5. boot and run ----
say "booting $kpkg under $QEMU (TCG)"
t1=$(date +%s)
timeout 600 "$QEMU" -M virt -cpu max -smp "$SMP" -m "$MEM" -nographic -no-reboot -nic none \
	-kernel "$image" -initrd "$work/initrd.gz" \
	-append "console=ttyAMA0 nokaslr panic=-1 quiet loglevel=1" </dev/null >"$work/console.log" 2>&1 || {
	say "QEMU failed (console in $work/console.log)"; tail -20 "$work/console.log" >&2; exit 1; }
t2=$(date +%s)
tr -d '\r' <"$work/console.log" | sed -n '/^===PTFUZZ-FTRACE-BEGIN===$/,/^===PTFUZZ-FTRACE-END===$/p' |
	sed '1d;$d' >"$work/ftrace.txt"
grep -q 'sys_mremap' "$work/ftrace.txt" || { say "no syscall events in the trace (console in $work/console.log)"; exit 1; }
tr -d '\r' <"$work/console.log" | grep -E '^(ptfuzz-ftrace|capture\.sh):' >&2 || true
say "trace: $(wc -l <"$work/ftrace.txt") lines in $work/ftrace.txt (boot + run $((t2 - t1)) s)"

# ---- 6. import and replay ----
# the raw ftrace text is kept beside the trace (OUT without .ptt, + .ftrace), and
# imported from there under its own name so that the trace does not name the cache
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
raw=${out%.ptt}.ftrace
case $PTFUZZ in */*) PTFUZZ=$(cd "$(dirname "$PTFUZZ")" && pwd)/$(basename "$PTFUZZ") ;; esac
cp "$work/ftrace.txt" "$raw"
(cd "$(dirname "$raw")" && "$PTFUZZ" import-ftrace -f "$(basename "$raw")" -o "$out")
say "wrote $out ($(grep -vc '^[#@]' "$out") events)"
"$PTFUZZ" replay "$out" || say "replay reported violations or errors (exit $?)"
say "done in $(( $(date +%s) - t0 )) s"
