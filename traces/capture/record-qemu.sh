#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# record-qemu.sh - record an instruction-level page-table trace of a real
# Debian arm64 kernel running the workload (workload.c) under
# qemu-system-aarch64 (TCG) with the ptt_plugin.so QEMU plugin, and convert
# it to ptfuzz's binary format.
#
#   traces/capture/record-qemu.sh [-o OUT.ptt.zst] [-f] [-i ITERATIONS] [-w MODE] [-s SMP] [-m MEM_MB] [-c CPU] [-k]
#
#   -o  output trace (default: build/capture/qemu-<kernel>-<mode>.ptt.zst)
#   -f  overwrite the output if it exists (default: refuse)
#   -i  workload iterations (default 1)
#   -w  workload mode (see workload.c): basic (default), contpte-mprotect,
#       mremap-test, mprotect-sizes, unmap-madvise, fork-cow, vmalloc
#   -s  vCPUs (default 2); -m guest memory in MiB (default 1024)
#   -c  QEMU CPU model (default max: FEAT_LPA2, so the kernel runs 52-bit VAs, 5 levels;
#       max,lpa2=off: 48-bit VAs, 4 levels, as the traces recorded before LPA2 support)
#   -k  keep the text .ptt next to the output
#
# From a fresh Debian 12 (x86-64) machine: installs the named build
# dependencies that are missing (gcc-aarch64-linux-gnu, libc6-dev-arm64-cross,
# gcc, cpio, xz-utils, zstd, python3; with sudo when not root), downloads - never
# installs - Debian sid's arm64 kernel, busybox-static:arm64, QEMU 10.0 from bookworm-backports, the runtime
# libraries that QEMU needs and the host lacks (unpacked beside QEMU in the
# cache, used through LD_LIBRARY_PATH by QEMU alone) and QEMU's source
# tarball (for qemu-plugin.h; glib's headers come from libglib2.0-dev,
# unpacked likewise, unless pkg-config finds them installed) into
# $PTFUZZ_CAPTURE_CACHE (default ~/.cache/ptfuzz-capture), builds the
# plugin, the workload and the initramfs, boots, records, converts with `ptfuzz convert` and replays with
# `ptfuzz replay`.  No host package is upgraded.
#
# Environment: PTFUZZ_CAPTURE_CACHE, PTFUZZ_DEBIAN_MIRROR, PTFUZZ_KERNEL_ABI
# (e.g. 7.2.13+deb14), PTFUZZ_QEMU_VERSION, PTFUZZ (path of the ptfuzz binary).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=${PTFUZZ_CAPTURE_CACHE:-$HOME/.cache/ptfuzz-capture}
OUT= ITERS=1 SMP=2 MEM=1024 KEEP=0 MODE=basic FORCE=0 CPU=max
bad() { echo "record-qemu.sh: $* (see -h)" >&2; exit 2; }
while getopts ":o:i:w:s:m:c:kfh" o; do
	case $o in
	o) OUT=$OPTARG ;;
	i) ITERS=$OPTARG ;;
	w) MODE=$OPTARG ;;
	s) SMP=$OPTARG ;;
	m) MEM=$OPTARG ;;
	c) CPU=$OPTARG ;;
	k) KEEP=1 ;;
	f) FORCE=1 ;;
	h) sed -n '4,34p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	:) bad "-$OPTARG needs a value" ;;
	*) bad "unknown option '-$OPTARG'" ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || bad "unexpected argument '$1'"
MODES="basic contpte-mprotect mremap-test mprotect-sizes unmap-madvise fork-cow vmalloc"
case " $MODES " in *" $MODE "*) ;; *) bad "-w: unknown workload mode '$MODE' (one of: $MODES)" ;; esac
[[ $ITERS =~ ^[1-9][0-9]{0,5}$ ]] || bad "-i: expected a number of iterations, got '$ITERS'"
[[ $SMP =~ ^[1-9][0-9]?$ ]] && [ "$SMP" -le 64 ] || bad "-s: expected 1..64 vCPUs, got '$SMP'"
[[ $MEM =~ ^[1-9][0-9]{2,5}$ ]] || bad "-m: expected guest memory in MiB (>= 100), got '$MEM'"
[[ $CPU =~ ^[a-z0-9][a-z0-9.,=_+-]*$ ]] || bad "-c: expected a QEMU CPU model (e.g. max or max,lpa2=off), got '$CPU'"
case ${OUT:-x.ptt.zst} in *.ptt.zst) ;; *) bad "-o: expected a name ending in .ptt.zst, got '$OUT'" ;; esac
[ -z "$OUT" ] || [ $FORCE = 1 ] || [ ! -e "$OUT" ] || bad "$OUT exists (use -f to overwrite it)"
log() { printf '== %s\n' "$*" >&2; }

# ---- build dependencies (the only system-wide installs) ----
need=()
command -v aarch64-linux-gnu-gcc >/dev/null || need+=(gcc-aarch64-linux-gnu)
[ -e /usr/aarch64-linux-gnu/lib/libc.a ] || need+=(libc6-dev-arm64-cross)
command -v gcc >/dev/null || need+=(gcc)
command -v cpio >/dev/null || need+=(cpio)
command -v xz >/dev/null || need+=(xz-utils)
command -v zstd >/dev/null || need+=(zstd)
command -v python3 >/dev/null || need+=(python3)	# btf-dump.py: the vmap_area offsets
if [ ${#need[@]} -gt 0 ]; then
	# only these named packages (and what they need); it refuses if any installed package would change
	sh "$HERE/apt-install.sh" "${need[@]}" || exit 1
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
# QEMU from bookworm-backports may need libraries the host lacks: they are
# downloaded and unpacked under the cache and found through LD_LIBRARY_PATH
# by QEMU alone - never installed, so no host package changes.
LIBS=$ROOT/qemu-libs
libpath() { { [ ! -d "$LIBS" ] || find "$LIBS" -name '*.so*' -printf '%h\n'; } | sort -u | paste -sd: -; }
QLD=$(libpath)
missing=$( { LD_LIBRARY_PATH=$QLD ldd "$QEMU" || true; } | awk '/not found/ {print $1}' | sort -u)
if [ -n "$missing" ]; then
	deps=$(for f in "$CACHE"/dl/qemu-system-arm_*"${QUP}"*.deb "$CACHE"/dl/qemu-system-common_*"${QUP}"*.deb; do
		dpkg-deb -f "$f" Depends; done | tr ',|' '\n\n' | sed -e 's/(.*//' -e 's/ //g' -e 's/:any$//' | awk '/^lib/' | sort -u)
	norm() { tr -d '.-' <<<"$1"; }
	pick=()
	for so in $missing; do	# libfdt.so.1 -> libfdt1, libglib-2.0.so.0 -> libglib2.0-0, ...
		b=$(norm "${so%%.so*}")
		for d in $deps; do [[ $(norm "$d") == "$b"* ]] && pick+=("$d"); done
	done
	if [ ${#pick[@]} -eq 0 ]; then	# no name matched: every dependency the host does not have
		for d in $deps; do dpkg-query -W -f '${Status}' "$d" 2>/dev/null | grep -q 'ok installed' || pick+=("$d"); done
	fi
	log "QEMU needs $(echo $missing): downloading ${pick[*]} into the cache (not installed)"
	bash "$HERE/fetch.sh" --qemu-libs "${pick[@]}" >&2
	for p in "${pick[@]}"; do
		for f in "$CACHE"/dl/libs/"${p}"_*.deb; do [ -e "$f" ] && dpkg -x "$f" "$LIBS"; done
	done
	QLD=$(libpath)
	still=$( { LD_LIBRARY_PATH=$QLD ldd "$QEMU" || true; } | awk '/not found/ {print $1}' | sort -u)
	[ -z "$still" ] || { log "QEMU still lacks $(echo $still); install them, or report it"; exit 1; }
fi
KERNEL=$(ls "$ROOT"/kernel/usr/lib/modules/"$KABI"-arm64/vmlinuz* "$ROOT"/kernel/boot/vmlinuz-"$KABI"-arm64 2>/dev/null | head -n1 || true)
HDR=$(dirname "$(ls "$ROOT"/qemu-*/include/qemu/qemu-plugin.h | head -n1)")
KPKG=$(awk '/^linux-(binary|image)/{print $1 " " $2}' "$CACHE/kernel-packages" | head -n1)

# ---- glib's headers for the plugin: installed ones, else libglib2.0-dev unpacked in the cache ----
if pkg-config --exists glib-2.0 2>/dev/null; then
	GLIB_CFLAGS=$(pkg-config --cflags glib-2.0)
else
	GDEV=$ROOT/glib-dev
	if [ ! -e "$GDEV/usr/include/glib-2.0/glib.h" ]; then
		log "downloading libglib2.0-dev for glib's headers (unpacked in the cache, not installed)"
		bash "$HERE/fetch.sh" --qemu-libs libglib2.0-dev >&2
		dpkg -x "$(ls "$CACHE"/dl/libs/libglib2.0-dev_*.deb | tail -n1)" "$GDEV"
	fi
	GLIB_CFLAGS="-I$GDEV/usr/include/glib-2.0 -I$(dirname "$(ls "$GDEV"/usr/lib/*/glib-2.0/include/glibconfig.h | head -n1)")"
fi

# ---- build ----
BUILD=$CACHE/build
mkdir -p "$BUILD/initramfs/bin" "$BUILD/initramfs/proc" "$BUILD/initramfs/sys" "$BUILD/initramfs/dev"
log "building the plugin against $HDR/qemu-plugin.h"
gcc -std=gnu11 -shared -fPIC -O2 -Wall -I"$HDR" $GLIB_CFLAGS \
	"$HERE/ptt_plugin.c" -o "$BUILD/ptt_plugin.so"
log "building the workload and the initramfs"
aarch64-linux-gnu-gcc -static -O2 -Wall -o "$BUILD/initramfs/workload" "$HERE/workload.c"
cp "$ROOT/kernel/usr/bin/busybox" "$BUILD/initramfs/bin/busybox"
rm -f "$BUILD/initramfs/ts_kmp.ko"
if [ "$MODE" = vmalloc ]; then	# a module the workload loads and removes: Debian's own, no dependencies
	xz -dc "$ROOT/kernel/usr/lib/modules/$KABI-arm64/kernel/lib/ts_kmp.ko.xz" > "$BUILD/initramfs/ts_kmp.ko"
fi
install -m 755 "$HERE/init" "$BUILD/initramfs/init"
(cd "$BUILD/initramfs" && find . | cpio -o -H newc --quiet | gzip -1 > "$BUILD/initrd.gz")

PTFUZZ=${PTFUZZ:-$REPO/build/release/tools/ptfuzz}
if [ ! -x "$PTFUZZ" ]; then
	log "building ptfuzz"
	(cd "$REPO" && cmake --preset release >/dev/null && cmake --build --preset release --target ptfuzz >/dev/null)
fi

# ---- record ----
if [ -z "$OUT" ]; then
	OUT=$REPO/build/capture/qemu-$KABI-$MODE.ptt.zst
	[ $FORCE = 1 ] || [ ! -e "$OUT" ] || bad "$OUT exists (use -f to overwrite it, -o to write elsewhere)"
fi
mkdir -p "$(dirname "$OUT")"
TXT=$BUILD/$(basename "${OUT%.zst}")
APPEND="console=ttyAMA0 nokaslr panic=-1 ptt_iters=$ITERS ptt_mode=$MODE"
# The plugin's vmap_area events (mm/vmalloc.c's purge list) hook free_vmap_area_noflush() and
# purge_vmap_node(): their addresses from the guest's own /proc/kallsyms (a short boot without
# the plugin, ptt_mode=kallsyms, cached per kernel; nokaslr keeps them), the offsets of the
# struct vmap_area / vmap_node fields it reads from the kernel's BTF (btf-dump.py).
VMAP=
SYMS=$CACHE/kallsyms-$KABI
if [ ! -s "$SYMS" ]; then
	log "symbol boot: free_vmap_area_noflush and purge_vmap_node from the guest's /proc/kallsyms"
	LD_LIBRARY_PATH=$QLD timeout 600 "$QEMU" -L "$ROOT/qemu/usr/share/qemu" -M virt -cpu "$CPU" -smp 1 -m "$MEM" \
		-nographic -no-reboot -nic none -kernel "$KERNEL" -initrd "$BUILD/initrd.gz" \
		-append "console=ttyAMA0 nokaslr panic=-1 ptt_mode=kallsyms" > "$BUILD/kallsyms.log" 2>&1 || true
	sed -n 's/^ptt-sym: \([0-9a-f]*\) [tT] \([a-z_]*\).*/\2 0x\1/p' "$BUILD/kallsyms.log" > "$SYMS.new"
	if [ "$(wc -l < "$SYMS.new")" = 2 ]; then mv "$SYMS.new" "$SYMS"; else rm -f "$SYMS.new"; fi
fi
btfoff() {	# btfoff STRUCT MEMBER: the byte offset of MEMBER in the BTF dump $BUILD/vmap-btf.txt
	awk -v s="'$1'" -v m="'$2'" '$2 == "STRUCT" { in_s = $3 == s; next } /^\[/ { in_s = 0 }
		in_s && $1 == m { sub("bits_offset=", "", $3); print $3 / 8; exit }' "$BUILD/vmap-btf.txt"
}
python3 "$HERE/btf-dump.py" "$KERNEL" --structs vmap_area vmap_node > "$BUILD/vmap-btf.txt" 2>&1 || true
lazy=$(awk '$1 == "free_vmap_area_noflush" {print $2}' "$SYMS" 2>/dev/null || true)
purge=$(awk '$1 == "purge_vmap_node" {print $2}' "$SYMS" 2>/dev/null || true)
offs=
for f in vmap_area:va_start vmap_area:va_end vmap_area:list:va_list vmap_node:purge_list:vn_purge_list \
	 vmap_node:purge_work:vn_purge_work; do
	IFS=: read -r st mb arg <<<"$f"
	o=$(btfoff "$st" "$mb")
	[ -n "$o" ] && offs+=",${arg:-$mb}=$o"
done
if [ -n "$lazy" ] && [ -n "$purge" ] && [ "$(tr -cd , <<<"$offs" | wc -c)" = 5 ]; then
	VMAP=",vmap_lazy=$lazy,vmap_purge=$purge$offs"
	log "vmap_area events: free_vmap_area_noflush $lazy, purge_vmap_node $purge${offs//,/ }"
else
	log "warning: no vmap_area events (kallsyms: '${lazy:-?}' '${purge:-?}', BTF offsets: '${offs:-?}'; $BUILD/kallsyms.log, $BUILD/vmap-btf.txt): a lazy vfree() will look like a missing TLBI"
fi
CMD=("$QEMU" -L "$ROOT/qemu/usr/share/qemu" -M virt -cpu "$CPU" -smp "$SMP" -m "$MEM" -nographic
     -no-reboot -nic none -kernel "$KERNEL" -initrd "$BUILD/initrd.gz" -append "$APPEND"
     -plugin "$BUILD/ptt_plugin.so,out=$TXT,ramsize=$((MEM << 20))$VMAP")
log "booting ($KPKG, QEMU $QVER, -cpu $CPU -smp $SMP -m $MEM)"
rm -f "$TXT"
t0=$(date +%s%N)
PTT_KERNEL="$KPKG ($KABI-arm64)" PTT_MACHINE="qemu-system-aarch64 $QUP -M virt -cpu $CPU -smp $SMP -m $MEM" \
	LD_LIBRARY_PATH=$QLD timeout 1200 "${CMD[@]}" > "$BUILD/console.log" 2>&1 || true
t1=$(date +%s%N)
grep -E "^ptt|workload" "$BUILD/console.log" >&2 || true
[ -s "$TXT" ] || { log "no trace recorded; console log: $BUILD/console.log"; exit 1; }
log "converting"
mkdir -p "$(dirname "$OUT")"
"$PTFUZZ" convert $([ $FORCE = 1 ] && echo -f) "$TXT" "$OUT"
[ $KEEP = 1 ] && cp "$TXT" "${OUT%.zst}"
printf 'capture: %s s (boot + workload + writing), %s events, %s bytes\n' "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')" \
	"$(grep -vc '^#' "$TXT")" "$(stat -c %s "$OUT")" >&2
"$PTFUZZ" stats "$OUT" >&2 || true
log "replaying"
"$PTFUZZ" replay "$OUT"
