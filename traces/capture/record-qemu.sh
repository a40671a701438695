#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# record-qemu.sh - record an instruction-level page-table trace of a real
# Debian arm64 kernel running the workload (workload.c) under
# qemu-system-aarch64 (TCG) with the ptt_plugin.so QEMU plugin, and convert
# it to ptfuzz's binary format.
#
#   traces/capture/record-qemu.sh [-o OUT.ptt.zst] [-i ITERATIONS] [-w MODE] [-s SMP] [-m MEM_MB] [-k]
#
#   -o  output trace (default: traces/examples/qemu-<kernel>-workload.ptt.zst)
#   -i  workload iterations (default 1)
#   -w  workload mode: basic (default) or contpte-mprotect (see workload.c)
#   -s  vCPUs (default 2); -m guest memory in MiB (default 1024)
#   -k  keep the text .ptt next to the output
#
# From a fresh Debian 12 (x86-64) machine: installs build dependencies with
# apt-get (cross compiler, glib headers, cpio...), downloads - never
# installs - Debian sid's arm64 kernel, busybox-static:arm64, QEMU 10.0 from
# bookworm-backports and QEMU's source tarball (for qemu-plugin.h) into
# $PTFUZZ_CAPTURE_CACHE (default ~/.cache/ptfuzz-capture), builds the
# plugin, the workload and the initramfs, boots, records, converts with
# `ptfuzz convert` and replays with `ptfuzz replay`.
#
# Environment: PTFUZZ_CAPTURE_CACHE, PTFUZZ_DEBIAN_MIRROR, PTFUZZ_KERNEL_ABI
# (e.g. 7.2.13+deb14), PTFUZZ_QEMU_VERSION, PTFUZZ (path of the ptfuzz binary).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=${PTFUZZ_CAPTURE_CACHE:-$HOME/.cache/ptfuzz-capture}
OUT= ITERS=1 SMP=2 MEM=1024 KEEP=0 MODE=basic
while getopts "o:i:w:s:m:kh" o; do
	case $o in
	o) OUT=$OPTARG ;;
	i) ITERS=$OPTARG ;;
	w) MODE=$OPTARG ;;
	s) SMP=$OPTARG ;;
	m) MEM=$OPTARG ;;
	k) KEEP=1 ;;
	*) sed -n '4,27p' "$0"; exit 2 ;;
	esac
done
log() { printf '== %s\n' "$*" >&2; }

# ---- build dependencies (the only system-wide installs) ----
need=()
command -v aarch64-linux-gnu-gcc >/dev/null || need+=(gcc-aarch64-linux-gnu)
[ -e /usr/aarch64-linux-gnu/lib/libc.a ] || need+=(libc6-dev-arm64-cross)
command -v gcc >/dev/null || need+=(gcc)
pkg-config --exists glib-2.0 2>/dev/null || need+=(libglib2.0-dev pkg-config)
command -v cpio >/dev/null || need+=(cpio)
command -v xz >/dev/null || need+=(xz-utils)
command -v zstd >/dev/null || need+=(zstd)
if [ ${#need[@]} -gt 0 ]; then
	log "installing build dependencies: ${need[*]}"
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}"
fi

# ---- downloads ----
bash "$HERE/fetch.sh"
KABI=$(cat "$CACHE/kernel-abi")
QVER=$(cat "$CACHE/qemu-version")
QUP=${QVER#*:}; QUP=${QUP%%-*}
ROOT=$CACHE/root
if [ ! -e "$ROOT/.done-$KABI-$QUP" ]; then
	log "unpacking"
	rm -rf "$ROOT"; mkdir -p "$ROOT/qemu" "$ROOT/kernel"
	for f in "$CACHE"/dl/qemu-system-*"${QUP}"*.deb; do dpkg -x "$f" "$ROOT/qemu"; done
	for f in "$CACHE"/dl/linux-*"$KABI"-arm64_*.deb "$CACHE"/dl/busybox-static_*_arm64.deb; do dpkg -x "$f" "$ROOT/kernel"; done
	tar -C "$ROOT" -xJf "$CACHE/dl/qemu_${QUP}.orig.tar.xz" --wildcards '*/include/qemu/qemu-plugin.h'
	touch "$ROOT/.done-$KABI-$QUP"
fi
QEMU=$ROOT/qemu/usr/bin/qemu-system-aarch64
# QEMU from bookworm-backports needs only libraries that bookworm has: install any missing
if ldd "$QEMU" | grep -q "not found"; then
	libs=$(dpkg-deb -f "$CACHE"/dl/qemu-system-arm_*"${QUP}"*.deb Depends | tr ',' '\n' |
	       sed -e 's/(.*//' -e 's/ //g' | grep '^lib')
	log "installing QEMU's runtime libraries: $libs"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $libs
fi
KERNEL=$(ls "$ROOT"/kernel/usr/lib/modules/"$KABI"-arm64/vmlinuz* "$ROOT"/kernel/boot/vmlinuz-"$KABI"-arm64 2>/dev/null | head -n1 || true)
HDR=$(dirname "$(ls "$ROOT"/qemu-*/include/qemu/qemu-plugin.h | head -n1)")
KPKG=$(awk '/^linux-(binary|image)/{print $1 " " $2}' "$CACHE/kernel-packages" | head -n1)

# ---- build ----
BUILD=$CACHE/build
mkdir -p "$BUILD/initramfs/bin" "$BUILD/initramfs/proc" "$BUILD/initramfs/sys" "$BUILD/initramfs/dev"
log "building the plugin against $HDR/qemu-plugin.h"
gcc -std=gnu11 -shared -fPIC -O2 -Wall -I"$HDR" $(pkg-config --cflags glib-2.0) \
	"$HERE/ptt_plugin.c" -o "$BUILD/ptt_plugin.so"
log "building the workload and the initramfs"
aarch64-linux-gnu-gcc -static -O2 -Wall -o "$BUILD/initramfs/workload" "$HERE/workload.c"
cp "$ROOT/kernel/usr/bin/busybox" "$BUILD/initramfs/bin/busybox"
install -m 755 "$HERE/init" "$BUILD/initramfs/init"
(cd "$BUILD/initramfs" && find . | cpio -o -H newc --quiet | gzip -1 > "$BUILD/initrd.gz")

PTFUZZ=${PTFUZZ:-$REPO/build/release/tools/ptfuzz}
if [ ! -x "$PTFUZZ" ]; then
	log "building ptfuzz"
	(cd "$REPO" && cmake --preset release >/dev/null && cmake --build --preset release --target ptfuzz >/dev/null)
fi

# ---- record ----
[ -n "$OUT" ] || OUT=$REPO/traces/examples/qemu-$KABI-$MODE.ptt.zst
TXT=$BUILD/$(basename "${OUT%.zst}")
CPU="max,lpa2=off"	# 48-bit VA, 4 levels (with LPA2 the kernel runs 52-bit VA, 5 levels)
APPEND="console=ttyAMA0 nokaslr panic=-1 ptt_iters=$ITERS ptt_mode=$MODE"
CMD=("$QEMU" -L "$ROOT/qemu/usr/share/qemu" -M virt -cpu "$CPU" -smp "$SMP" -m "$MEM" -nographic
     -no-reboot -nic none -kernel "$KERNEL" -initrd "$BUILD/initrd.gz" -append "$APPEND"
     -plugin "$BUILD/ptt_plugin.so,out=$TXT,ramsize=$((MEM << 20))")
log "booting ($KPKG, QEMU $QVER, -cpu $CPU -smp $SMP -m $MEM)"
rm -f "$TXT"
t0=$(date +%s.%N)
PTT_KERNEL="$KPKG ($KABI-arm64)" PTT_MACHINE="qemu-system-aarch64 $QUP -M virt -cpu $CPU -smp $SMP -m $MEM" \
	timeout 1200 "${CMD[@]}" > "$BUILD/console.log" 2>&1 || true
t1=$(date +%s.%N)
grep -E "^ptt|workload" "$BUILD/console.log" >&2 || true
[ -s "$TXT" ] || { log "no trace recorded; console log: $BUILD/console.log"; exit 1; }
log "converting"
mkdir -p "$(dirname "$OUT")"
"$PTFUZZ" convert "$TXT" "$OUT"
[ $KEEP = 1 ] && cp "$TXT" "${OUT%.zst}"
printf 'capture: %.1f s (boot + workload + writing), %s events, %s bytes\n' "$(echo "$t1 - $t0" | bc)" \
	"$(grep -vc '^#' "$TXT")" "$(stat -c %s "$OUT")" >&2
"$PTFUZZ" stats "$OUT" >&2 || true
log "replaying"
"$PTFUZZ" replay "$OUT"
