#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# mremap_cases.sh PTFUZZ REPO WORK - the kernel and the model move page tables
# alike (ctest examples.mremap_cases): for each of the 13 configurations of
# the kernel's mremap_test.c, the page-table stores and TLBIs the CPU running
# the mremap made in the recorded 7.2 kernel
# (traces/examples/qemu-7.2.13+deb14-mremap-test.ptt.zst, between its
# `begin mremap` and `end`) equal the model's for the same case
# (corpus/mm/mremap-test/NN-*.ptt, `ptfuzz stats`: the mremap op's pt_writes
# and TLBIs).  Stores of other CPUs inside the bracket (the page aging of the
# other vCPU clearing an access flag) are not the mremap's and are left out.
PTFUZZ=$1 REPO=$2 WORK=$3
CASE=mremap_cases
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
. "$REPO/tests/runner.sh"

pf convert "$REPO/traces/examples/qemu-7.2.13+deb14-mremap-test.ptt.zst" kernel.ptt
expect_rc 0
for f in "$REPO"/corpus/mm/mremap-test/[0-9][0-9]-*.ptt; do
	pf stats --json "$f"
	expect_rc 0
	cp out "model-$(basename "$f" .ptt).json"
done
python3 - kernel.ptt model-*.json <<'PY' >table || { cat table >&2; fail "the kernel and the model differ (table above)"; }
import json, sys, os
kernel, cases, cur, op = {}, None, None, None
for line in open(sys.argv[1]):
    t = line.split()
    if line.startswith('# ') and len(t) > 1 and t[1].isdigit() and len(t[1]) == 2:
        cur = t[1]
    elif len(t) > 2 and t[1] == 'begin' and t[2] == 'mremap':
        op, k = t[0], kernel.setdefault(cur, [0, 0])
    elif op and t[:2] == [op, 'end']:
        op = None
    elif op and t[0] == op and t[1] == 'pt_write':
        k[0] += 1
    elif op and t[0] == op and t[1] == 'tlbi':
        k[1] += 1
bad = 0
for j in sorted(sys.argv[2:]):
    nn = os.path.basename(j)[6:8]
    m = json.load(open(j))["files"][0]["counters"]["per_op"].get("mremap", {})
    model = [m.get("pt_writes", 0), sum(m.get("tlbi_by_op", {}).values())]
    kern = kernel.get(nn, [0, 0])	# 02: the source mmap fails, the selftest makes no mremap
    print("%s  kernel %5d stores %2d TLBIs   model %5d stores %2d TLBIs  %s" % (
        os.path.basename(j)[6:-5], kern[0], kern[1], model[0], model[1], "" if kern == model else "DIFFERENT"))
    bad += kern != model
assert len(sys.argv) - 2 == 13 and len(kernel) == 12, (len(sys.argv) - 2, sorted(kernel))
sys.exit(1 if bad else 0)
PY
cat table
