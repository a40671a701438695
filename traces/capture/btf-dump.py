#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""btf-dump.py IMAGE FUNC... [--structs STRUCT...]

The part of `bpftool btf dump file /sys/kernel/btf/vmlinux format raw` that
capture.sh reads (traces/capture/capture.sh, kprobe argument positions), made
on the host from an uncompressed arm64 kernel Image, for a guest without
bpftool: the FUNC records of the functions named, their FUNC_PROTO with the
parameter names, and the STRUCT records named, with their members' bit
offsets, in bpftool's text form.

The kernel's BTF (.BTF, what /sys/kernel/btf/vmlinux exposes) is in the
Image as it is: found by its header (magic 0xeb9f, version 1, a 24-byte
header, the type section first and the strings right after it).  Exit status
1 (one line on stderr) when the Image holds no BTF or the BTF has a kind this
reader does not know.
"""
import struct
import sys

# bytes after the 12-byte btf_type, by kind: a constant, or per vlen entry
FIXED = {1: 4, 2: 0, 3: 12, 7: 0, 8: 0, 9: 0, 10: 0, 11: 0, 12: 0, 14: 4, 16: 0, 17: 4, 18: 0}
PER_VLEN = {4: 12, 5: 12, 6: 8, 13: 8, 15: 12, 19: 12}


def find_btf(img):
    i = 0
    while True:
        i = img.find(b'\x9f\xeb\x01\x00\x18\x00\x00\x00', i)
        if i < 0:
            return None
        hl, toff, tlen, soff, slen = struct.unpack_from('<IIIII', img, i + 4)
        base = i + hl
        if toff == 0 and soff == tlen and tlen and base + soff + slen <= len(img) and \
                img[base + soff] == 0 and b'\0move_page_tables\0' in img[base + soff:base + soff + slen]:
            return img[base:base + tlen], img[base + soff:base + soff + slen]
        i += 1


def main(argv):
    if len(argv) < 2:
        sys.stderr.write('usage: btf-dump.py IMAGE FUNC... [--structs STRUCT...]\n')
        return 2
    img = open(argv[1], 'rb').read()
    rest = argv[2:]
    funcs = set(rest[:rest.index('--structs')] if '--structs' in rest else rest)
    structs = set(rest[rest.index('--structs') + 1:] if '--structs' in rest else [])
    found = find_btf(img)
    if not found:
        sys.stderr.write('btf-dump.py: %s: no BTF (.BTF) found in the image\n' % argv[1])
        return 1
    types, strs = found

    def name(off):
        return strs[off:strs.index(b'\0', off)].decode() or '(anon)'

    recs = [None]	# type id -> (kind, name, vlen, kflag, size_or_type, entries)
    pos = 0
    while pos < len(types):
        noff, info, st = struct.unpack_from('<III', types, pos)
        kind, vlen, kflag = (info >> 24) & 0x1f, info & 0xffff, info >> 31
        pos += 12
        if kind in FIXED:
            n = FIXED[kind]
        elif kind in PER_VLEN:
            n = PER_VLEN[kind] * vlen
        else:
            sys.stderr.write('btf-dump.py: %s: BTF kind %d (type %d) unknown to this reader\n'
                             % (argv[1], kind, len(recs)))
            return 1
        ent = []
        if kind in (4, 5):
            for k in range(vlen):
                ent.append(struct.unpack_from('<III', types, pos + 12 * k))
        elif kind == 13:
            for k in range(vlen):
                ent.append(struct.unpack_from('<II', types, pos + 8 * k))
        recs.append((kind, noff, vlen, kflag, st, ent))
        pos += n
    protos = set()
    out = []
    for tid in range(1, len(recs)):
        kind, noff, vlen, kflag, st, ent = recs[tid]
        if kind == 12 and name(noff) in funcs:
            out.append("[%d] FUNC '%s' type_id=%d linkage=%s" %
                       (tid, name(noff), st, ('static', 'global', 'extern')[vlen] if vlen < 3 else vlen))
            protos.add(st)
        elif kind == 4 and name(noff) in structs:
            out.append("[%d] STRUCT '%s' size=%d vlen=%d" % (tid, name(noff), st, vlen))
            for moff, mtype, off in ent:
                bits = off & 0xffffff if kflag else off
                tail = ' bitfield_size=%d' % (off >> 24) if kflag and off >> 24 else ''
                out.append("\t'%s' type_id=%d bits_offset=%d%s" % (name(moff), mtype, bits, tail))
    for tid in sorted(protos):
        kind, noff, vlen, kflag, st, ent = recs[tid]
        if kind != 13:
            continue
        out.append("[%d] FUNC_PROTO '(anon)' ret_type_id=%d vlen=%d" % (tid, st, vlen))
        for poff, ptype in ent:
            out.append("\t'%s' type_id=%d" % (name(poff), ptype))
    print('\n'.join(out))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
