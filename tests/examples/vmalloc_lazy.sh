#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# vmalloc_lazy.sh PTFUZZ REPO WORK - the vmalloc trace's one I2 is the lazy
# vunmap FINDINGS.md says it is (ctest examples.vmalloc_lazy): with the two
# events the plugin cannot see - `vmap_area lazy` where vfree() put the area
# of finit_module()'s copy on the purge list (after its 4 PTE clears), and
# `vmap_area purge` after the flush that purged it (delete_module()'s
# vm_reset_perms(): _vm_unmap_aliases(), `tlbi vmalle1is`, `dsb ish`) - the
# recording replays clean; with the purge placed before that flush it is
# I2 purged-with-stale-tlb.
PTFUZZ=$1 REPO=$2 WORK=$3
CASE=vmalloc_lazy
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
. "$REPO/tests/runner.sh"

pf convert "$REPO/traces/examples/qemu-7.2.13+deb14-vmalloc.ptt.zst" v.ptt
expect_rc 0
lazy='cpu0 vmap_area lazy va=0xffff8000833c3000 len=16K'
purge='cpu0 vmap_area purge va=0xffff8000833c3000 len=16K'
# the vfree: the last of the copy's 4 PTE clears inside the finit_module() bracket (the 5th
# `begin other`: 2 maps created and closed before it)
awk -v lazy="$lazy" -v purge="$purge" '
	{ print }
	/^cpu0 begin other / { ops++ }
	ops == 5 && !a && /^cpu0 pt_write pa=0x43c29e30 val=inv$/ { print lazy; a = 1 }
	a && !p && /^cpu0 tlbi vmalle1is$/ { t = 1 }
	t && /^cpu0 dsb ish$/ { print purge; t = 0; p = 1 }
	END { if (!p) exit 1 }' v.ptt >after.ptt || fail "the vfree or the flush after it not found"
pf replay after.ptt
expect_rc 0
out_has '^after.ptt: 314342 events, 0 violations'
awk -v lazy="$lazy" -v purge="$purge" '
	/^cpu0 begin other / { ops++ }
	a && !p && /^cpu0 tlbi vmalle1is$/ { print purge; p = 1 }
	{ print }
	ops == 5 && !a && /^cpu0 pt_write pa=0x43c29e30 val=inv$/ { print lazy; a = 1 }' v.ptt >before.ptt
pf replay before.ptt
expect_rc 1
out_has '^  signature: I2/stale-tlb/perm/purged-with-stale-tlb/other$'
out_lacks 'returned-with-stale-tlb'
echo "ok: the I2 is the lazy vunmap, purged by delete_module()'s flush"
