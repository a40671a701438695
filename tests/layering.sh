#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The layers only look downwards (STYLE.md): what each one may include.
#   traces/       its own headers and system headers
#   engine/arch   its own, traces/event.h
#   engine/check  its own, engine/arch (incl. ptdebug.h), traces/event.h
#   engine/mm     its own, engine/check, engine/arch, traces/event.h
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
bad=$( { check traces ptfuzz.pb-c.h; check engine/arch event.h; check engine/check event.h machine.h hmap.h ptdebug.h;
	 check engine/mm event.h machine.h hmap.h ptdebug.h check.h violation.h; } | wc -l)
[ "$bad" -eq 0 ] || exit 1
echo "layering: ok"
