#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# fetch.sh - download (never install) what record-qemu.sh needs into $CACHE:
#   - Debian sid's arm64 kernel (linux-binary-*-arm64 / linux-image-*-arm64-unsigned,
#     linux-modules-*-arm64) and busybox-static:arm64,
#   - QEMU 10.0.x (qemu-system-arm/-common/-data) from bookworm-backports,
#   - qemu-plugin.h from the matching qemu_*.orig.tar.xz.
#   fetch.sh --kernel-only: the kernel and busybox only (record-ftrace.sh -k sid).
#   fetch.sh --qemu-libs PKG...: download the named library packages (QEMU's
#     runtime dependencies that the host lacks) from bookworm (+ backports)
#     into $CACHE/dl/libs, to be unpacked beside QEMU - never installed.
# Uses separate apt lists/sources/cache/status: the system's apt state is untouched.
set -euo pipefail
CACHE=${PTFUZZ_CAPTURE_CACHE:-$HOME/.cache/ptfuzz-capture}
MIRROR=${PTFUZZ_DEBIAN_MIRROR:-http://deb.debian.org/debian}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
mkdir -p "$CACHE/dl" "$CACHE/apt"
cd "$CACHE/dl"

aptq() {	# aptq NAME ARCH SOURCES-LINE... : apt-get with private state
	local name=$1 arch=$2; shift 2
	local d="$CACHE/apt/$name"
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
	printf '%s\n' "$@" > "$d/sources.list"
	APTO=(-o APT::Architecture="$arch" -o APT::Architectures="$arch"
	      -o Dir::State::Lists="$d/lists" -o Dir::Etc::SourceList="$d/sources.list"
	      -o Dir::Etc::SourceParts=/dev/null -o Dir::Cache="$d/cache"
	      -o Dir::State::status=/dev/null -o Debug::NoLocking=1)
	# as root apt drops to the _apt user, which cannot write into $HOME/.cache
	[ "$(id -u)" != 0 ] || APTO+=(-o APT::Sandbox::User=root)
}

if [ "${1:-}" = --qemu-libs ]; then
	shift
	aptq libs amd64 "deb [signed-by=$KEYRING] $MIRROR bookworm main" \
		"deb [signed-by=$KEYRING] $MIRROR bookworm-updates main" \
		"deb [signed-by=$KEYRING] $MIRROR bookworm-backports main"
	[ -f "$CACHE/apt/libs/.updated" ] || { apt-get -q "${APTO[@]}" update >/dev/null && touch "$CACHE/apt/libs/.updated"; }
	mkdir -p "$CACHE/dl/libs"
	cd "$CACHE/dl/libs"
	apt-get -q "${APTO[@]}" download "$@"
	exit 0
fi

# ---- kernel + busybox (arm64, sid) ----
aptq sid arm64 "deb [arch=arm64 signed-by=$KEYRING] $MIRROR sid main"
[ -f "$CACHE/apt/sid/.updated" ] || { apt-get -q "${APTO[@]}" update && touch "$CACHE/apt/sid/.updated"; }
KVER=${PTFUZZ_KERNEL_ABI:-$(apt-cache "${APTO[@]}" search --names-only '^linux-modules-[0-9].*-arm64$' \
	| awk '{print $1}' | sed -e 's/^linux-modules-//' -e 's/-arm64$//' \
	| grep -E '^[0-9][0-9.]*(-[0-9]+)?(\+deb[0-9]+)?$' | sort -V | tail -n1)}
[ -n "$KVER" ] || { echo "no arm64 kernel found in sid" >&2; exit 1; }
echo "kernel ABI: $KVER"
echo "$KVER" > "$CACHE/kernel-abi"
pkgs=(busybox-static linux-modules-$KVER-arm64)
# the image: sid splits it into linux-binary[-unsigned]-VER-arm64; older suites: linux-image-VER-arm64-unsigned
for p in linux-binary-unsigned-$KVER-arm64 linux-binary-$KVER-arm64 linux-image-$KVER-arm64-unsigned; do
	if apt-cache "${APTO[@]}" show "$p" >/dev/null 2>&1; then pkgs+=("$p"); break; fi
done
echo "downloading: ${pkgs[*]}"
apt-get -q "${APTO[@]}" download "${pkgs[@]}"
for p in "${pkgs[@]}"; do
	apt-cache "${APTO[@]}" show "$p" | awk -v p="$p" '/^Version:/{print p, $2; exit}'
done > "$CACHE/kernel-packages"

[ "${1:-}" != --kernel-only ] || exit 0

# ---- QEMU 10.0 (amd64, bookworm-backports) ----
aptq bpo amd64 "deb [signed-by=$KEYRING] $MIRROR bookworm-backports main" \
	"deb-src [signed-by=$KEYRING] $MIRROR bookworm-backports main"
[ -f "$CACHE/apt/bpo/.updated" ] || { apt-get -q "${APTO[@]}" update && touch "$CACHE/apt/bpo/.updated"; }
QVER=${PTFUZZ_QEMU_VERSION:-$(apt-cache "${APTO[@]}" madison qemu-system-arm | awk '$5 ~ /backports/ || 1 {print $3}' | grep -E '^1:10\.' | sort -V | tail -n1)}
echo "qemu: $QVER"
echo "$QVER" > "$CACHE/qemu-version"
apt-get -q "${APTO[@]}" download qemu-system-arm="$QVER" qemu-system-common="$QVER" qemu-system-data="$QVER"
# the plugin header: only the upstream tarball is needed.  apt-get source also
# asks for the .dsc and .debian.tar.xz, which the archive may answer with 404:
# harmless, so its output goes to a log and only the tarball is checked.
UP=${QVER#*:}; UP=${UP%%-*}
if ! ls qemu_"$UP".orig.tar.xz >/dev/null 2>&1; then
	echo "downloading qemu_$UP.orig.tar.xz (for qemu-plugin.h; a missing .dsc or .debian.tar.xz is fine)"
	apt-get -q "${APTO[@]}" source --download-only qemu="$QVER" >"$CACHE/apt/bpo/source.log" 2>&1 || true
fi
[ -e qemu_"$UP".orig.tar.xz ] || {
	echo "fetch.sh: could not download qemu_$UP.orig.tar.xz (log: $CACHE/apt/bpo/source.log)" >&2; exit 1; }
