#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The layers only look downwards (STYLE.md): what each one may include.
#   traces/       its own headers and system headers
#   engine/machine  its own, traces/event.h
#   engine/check    its own, engine/machine (incl. ptdebug.h, vec2.h), traces/event.h
#   the model       engine/mm, engine/arm64 and engine/model (one library): one
#                   another's headers, engine/check, engine/machine, traces/event.h
# Include paths already keep other headers out of reach by name; this also
# catches relative paths ("../mm/mm.h") that a static link would let through.
set -eu
root=${1:?usage: layering.sh REPO}
fail=0
check() {	# check DIR ALLOWED-HEADER...
	dir=$1; shift
	for f in "$root/$dir"/*.c "$root/$dir"/*.h; do
		[ -e "$f" ] || continue
		grep -o '^#include "[^"]*"' "$f" | sed 's/#include "\(.*\)"/\1/' | while read -r inc; do
			base=$(basename "$inc")
			[ -e "$root/$dir/$base" ] && [ "$inc" = "$base" ] && continue
			ok=no
			for a in "$@"; do [ "$inc" = "$a" ] && ok=yes; done
			[ $ok = yes ] && continue
			echo "layering: $dir/$(basename "$f") includes \"$inc\", which its layer may not use" >&2
			echo x
		done
	done
}
model="event.h machine.h hmap.h vec2.h ptdebug.h check.h violation.h mm.h coro.h mm_internal.h contpte.h hugetlb.h tlb.h"
bad=$( { check traces ptfuzz.pb-c.h; check engine/machine event.h; check engine/check event.h machine.h hmap.h vec2.h ptdebug.h;
	 for d in engine/mm engine/arm64 engine/model; do check $d $model; done; } | wc -l)
[ "$bad" -eq 0 ] || exit 1
echo "layering: ok"
