#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# install.sh BUILD PTFUZZ WORK: `cmake --install BUILD --prefix WORK/root`
# installs the command, its manual page and the dictionaries; the page has a
# section for every command `ptfuzz --help` lists, with that command's own
# help text, and (where groff is present) formats without a warning.
set -eu
build=$1 bin=$2 work=$3
root=$work/root
rm -rf "$work" && mkdir -p "$work"
fail() { echo "install: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$root" >"$work/install.log" 2>&1 ||
	{ cat "$work/install.log" >&2; fail "cmake --install failed"; }
for f in bin/ptfuzz share/man/man1/ptfuzz.1 share/ptfuzz/ops.dict share/ptfuzz/trace.dict; do
	[ -s "$root/$f" ] || fail "$f not installed"
done
page=$root/share/man/man1/ptfuzz.1
"$root/bin/ptfuzz" --version >/dev/null || fail "installed ptfuzz does not run"

n=0
for c in $("$bin" --help | awk '/^commands:/{on=1;next} on&&/^$/{exit} on&&/^  [a-z]/{print $1}' | grep -vx help); do
	grep -qx ".SS $c" "$page" || fail "no section for '$c' in ptfuzz.1"
	# the command's exit-status line and first option line are in its section
	first=$("$bin" help "$c" | sed -n 3p | sed -e 's/\\/\\e/g' -e 's/-/\\-/g')
	[ -z "$first" ] || grep -qF -- "$first" "$page" || fail "'$c' section lacks its help text ($first)"
	# and every option the command's help lists (a flag added since the page was made shows here)
	"$bin" help "$c" | grep -e '^  *-' | sed -e 's/\\/\\e/g' -e 's/-/\\-/g' | while IFS= read -r opt; do
		grep -qF -- "$opt" "$page" || { echo "install: '$c' section lacks the option line '$opt'" >&2; exit 1; }
	done || exit 1
	n=$((n + 1))
done
[ "$n" -ge 8 ] || fail "only $n commands found in ptfuzz --help"

if command -v groff >/dev/null 2>&1; then
	warn=$(groff -man -ww -z "$page" 2>&1) || fail "groff failed: $warn"
	[ -z "$warn" ] || fail "groff warns: $warn"
	# no help line may turn into a roff request (a line starting with . or ')
	groff -man -Tutf8 "$page" 2>/dev/null | grep -q "ptfuzz replay" || fail "formatted page lacks 'ptfuzz replay'"
fi
echo "install: ptfuzz, ptfuzz.1 ($n commands) and the dictionaries installed"
