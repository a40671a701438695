#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# apt-install.sh PKG... - install the named Debian packages for the capture
# scripts (record-qemu.sh, record-ftrace.sh), and nothing else: with sudo
# when not root; `apt-get install --no-upgrade --no-install-recommends`; and
# first a simulation: if installing them would upgrade or remove any package
# already on the host, it stops and says which (set PTFUZZ_ALLOW_UPGRADES=1
# to allow it).  Exit status: 0 installed, 1 refused or failed.
set -u
me=apt-install.sh
[ $# -gt 0 ] || { echo "$me: no package named" >&2; exit 1; }
if [ "$(id -u)" = 0 ]; then
	as_root() { "$@"; }
elif command -v sudo >/dev/null 2>&1; then
	as_root() { sudo "$@"; }
else
	echo "$me: not root and no sudo: install them as root: apt-get install $*" >&2
	exit 1
fi
echo "$me: installing $*" >&2
as_root apt-get update -q >/dev/null || { echo "$me: apt-get update failed" >&2; exit 1; }
sim=$(LC_ALL=C apt-get install -s -q --no-install-recommends --no-upgrade "$@" 2>&1) || {
	printf '%s\n' "$sim" | tail -n 5 >&2
	echo "$me: apt-get cannot install $*" >&2
	exit 1
}
# "Inst NAME [OLD] (NEW ...)": an installed package would be upgraded; "Remv NAME": removed
changed=$(printf '%s\n' "$sim" | awk '/^Inst [^ ]+ \[/ { print $2 } /^Remv / { print $2 }' | tr '\n' ' ')
if [ -n "$changed" ] && [ "${PTFUZZ_ALLOW_UPGRADES:-0}" != 1 ]; then
	echo "$me: installing $* would upgrade or remove host packages: $changed- refused" \
		"(install the packages yourself, or set PTFUZZ_ALLOW_UPGRADES=1)" >&2
	exit 1
fi
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends --no-upgrade "$@" ||
	{ echo "$me: apt-get install $* failed" >&2; exit 1; }
