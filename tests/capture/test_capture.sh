#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# test_capture.sh PTFUZZ REPO WORK CASE - traces/capture/capture.sh against
# fake tracefs trees (PTFUZZ_TRACEFS): the checks and their messages, the
# kprobe set-up, checked writes, usage errors, the cleanup, and the import of
# what it saves.  Registered by tests/ftrace.cmake (ctest -L capture).
#
# By hand:  sh tests/capture/test_capture.sh build/release/tools/ptfuzz . /tmp/cap CASE
# (CAPTURE_SH="busybox sh" or bash: capture.sh under that shell)
set -u

PTFUZZ=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
REPO=$(cd "$2" && pwd)
WORK=$3
CASE=$4
CAP=$REPO/traces/capture/capture.sh
SAMPLE=$REPO/tests/data/capture/captured.ftrace
CAPTURE_SH=${CAPTURE_SH:-sh}	# the shell that runs capture.sh (busybox sh in the QEMU guest)

rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
WORK=$(pwd)

RUNNER_CMD=capture.sh
. "$REPO/tests/runner.sh"	# fail, expect_rc, err_has

# fake_tracefs DIR: what capture.sh looks at in a 6.1-like tracefs
fake_tracefs() {
	T=$1
	mkdir -p "$T/options" "$T/events/sched/sched_process_exec" "$T/events/task/task_newtask" "$T/events/ptfuzz"
	echo 0 >"$T/events/task/task_newtask/enable"
	for f in trace tracing_on trace_marker set_event_pid buffer_size_kb current_tracer kprobe_events; do
		: >"$T/$f"
	done
	echo 0 >"$T/options/record-tgid"
	echo 0 >"$T/options/event-fork"
	echo 0 >"$T/events/sched/sched_process_exec/enable"
	for s in mmap mremap mprotect munmap madvise exit_group; do
		for d in enter exit; do
			[ "$s$d" = exit_groupexit ] && continue
			mkdir -p "$T/events/syscalls/sys_${d}_$s"
			echo 0 >"$T/events/syscalls/sys_${d}_$s/enable"
		done
	done
	# inlined in this "kernel": move_huge_pud (no HAVE_MOVE_PUD), vmap; the rest is there
	for f in move_page_tables move_huge_pmd __split_huge_pmd change_huge_pmd zap_huge_pmd \
		do_huge_pmd_anonymous_page free_pgtables tlb_finish_mmu __pte_alloc __pmd_alloc \
		__vmalloc_node_range vunmap vfree; do
		echo "$f"
		# the kernel creates events/ptfuzz/EV when a probe is defined; the fake has them already
		mkdir -p "$T/events/ptfuzz/ptk_$f"
		echo 0 >"$T/events/ptfuzz/ptk_$f/enable"
	done >"$T/available_filter_functions"
	echo "__vmalloc_node_range [vmalloc]" >>"$T/available_filter_functions"
	for r in move_page_tables __vmalloc_node_range; do
		mkdir -p "$T/events/ptfuzz/ptk_${r}_ret"
		echo 0 >"$T/events/ptfuzz/ptk_${r}_ret/enable"
	done
}

# a "workload" that does what the kernel would: the trace appears in the buffer
cat >"$WORK/workload" <<EOF
#!/bin/sh
cp "$SAMPLE" "\$1/trace"
EOF
chmod +x "$WORK/workload"

# cap ARGS...: run capture.sh on the fake tree $T, status in $rc
cap() {
	last="$*"
	PTFUZZ_TRACEFS=$T PTFUZZ_BTF=$WORK/no-btf PTFUZZ=$PTFUZZ PTFUZZ_WORKLOAD_BIN=$WORK/workload \
		BPFTOOL=${BPFTOOL:-$WORK/no-bpftool} $CAPTURE_SH "$CAP" "$@" >out 2>err
	rc=$?
}
err_lacks() { ! grep -q -e "$1" err || fail "'capture.sh $last': stderr has '$1'"; }
has() { grep -q -e "$2" "$1" || fail "'capture.sh $last': $1 lacks '$2'"; }
lacks() { ! grep -q -e "$2" "$1" || fail "'capture.sh $last': $1 has '$2'"; }
one_line_usage() {
	expect_rc 2
	[ "$(wc -l <err)" -eq 1 ] || fail "'capture.sh $last': expected one line on stderr"
	err_has '^capture.sh: '
}

fake_tracefs "$WORK/tfs"

case $CASE in
usage)
	cap --bogus -w ftrace; one_line_usage; err_has "unknown option '--bogus'"
	cap -w nosuch; one_line_usage; err_has "unknown workload 'nosuch'"
	cap; one_line_usage; err_has "nothing to trace"
	cap -w ftrace -- true; one_line_usage
	cap -c -- true; one_line_usage
	cap -b 12x -w ftrace; one_line_usage
	cap -o; one_line_usage
	cap -p "$WORK/none" -w ftrace; one_line_usage
	cap --help; expect_rc 0; grep -q 'usage: traces/capture/capture.sh' out || fail "--help lacks the usage"
	;;
capture_and_import)
	cap -o "$WORK/o/t.ptt" -w ftrace
	expect_rc 0
	[ -s "$WORK/o/t.ftrace" ] || fail "no $WORK/o/t.ftrace"
	cmp -s "$WORK/o/t.ftrace" "$SAMPLE" || fail "the saved ftrace text is not the buffer's"
	has "$WORK/o/t.ptt" '^@ptt .*method=ftrace kernel="Linux 6.1.0-57-arm64'
	has "$WORK/o/t.ptt" '^cpu0 mremap va=0xffffa0000000 len=2M new_va=0xffff9fe00000'
	has "$WORK/o/t.ptt" '^cpu1 madvise dontneed va=0xffff9f800000 len=64K asid=1'
	"$PTFUZZ" replay --quiet "$WORK/o/t.ptt" >/dev/null 2>&1 || fail "the imported trace does not replay clean"
	# set-up: the syscalls, tgid, buffer, markers; the kprobes with their default (6.1) arguments
	has "$T/buffer_size_kb" '^16384$'
	has "$T/kprobe_events" '^p:ptfuzz/ptk_move_page_tables move_page_tables old_addr=%x1:x64 new_addr=%x3:x64 len=%x4:x64$'
	has "$T/kprobe_events" '^r:ptfuzz/ptk_move_page_tables_ret move_page_tables ret=\$retval:x64$'
	has "$T/kprobe_events" '^p:ptfuzz/ptk___split_huge_pmd __split_huge_pmd address=%x2:x64 pmdval=+0(%x1):x64$'
	has "$T/kprobe_events" '^p:ptfuzz/ptk___vmalloc_node_range __vmalloc_node_range size=%x0:x64$'
	has "$T/kprobe_events" '^p:ptfuzz/ptk_tlb_finish_mmu tlb_finish_mmu$'	# its range needs BTF
	err_has "tlb_finish_mmu: 'start' needs BTF"
	has "$T/trace_marker" '^ptfuzz kernel: Linux '
	has "$T/trace_marker" '^provenance: recorded .* by traces/capture/capture.sh'
	err_has "note: no BTF"
	# missing kprobe targets: skipped with a note, never defined
	err_has "kprobe on move_huge_pud skipped: not in available_filter_functions"
	err_has "kprobe on vmap skipped"
	lacks "$T/kprobe_events" '^p:ptfuzz/ptk_move_huge_pud '
	# restored afterwards: tracing off, events off, probes removed, options as they were
	has "$T/tracing_on" '^0$'
	has "$T/events/syscalls/sys_enter_mremap/enable" '^0$'
	has "$T/events/ptfuzz/ptk_move_page_tables/enable" '^0$'
	has "$T/kprobe_events" '^-:ptfuzz/ptk_move_page_tables$'
	has "$T/options/record-tgid" '^0$'
	has "$T/events/task/task_newtask/enable" '^0$'
	# an existing output is refused without -f, overwritten with it
	cap -o "$WORK/o/t.ptt" -w ftrace; one_line_usage; err_has "t.ftrace exists (use -f"
	cap -f -o "$WORK/o/t.ptt" -w ftrace; expect_rc 0
	# binary output, and a command instead of a workload
	cap -o "$WORK/o/b.ptt.zst" -- "$WORK/workload" "$T"; expect_rc 0
	[ -s "$WORK/o/b.ptt.zst" ] && [ -s "$WORK/o/b.ftrace" ] || fail "no b.ptt.zst / b.ftrace"
	"$PTFUZZ" replay --quiet "$WORK/o/b.ptt.zst" >/dev/null 2>&1 || fail "b.ptt.zst does not replay clean"
	# the command's failure is reported, the trace still saved
	cap -n -o "$WORK/o/f.ptt" -- sh -c 'exit 3'; expect_rc 1; err_has "exited with status 3"
	[ -e "$WORK/o/f.ftrace" ] || fail "no f.ftrace"
	;;
default_output)
	# the default output is under build/capture of the repository, never traces/examples
	cap -n -w ftrace; expect_rc 0
	f=$(sed -n 's/^capture.sh: saved \(.*\) ([0-9]* lines)$/\1/p' err)
	case $f in "$REPO"/build/capture/ftrace-*.ftrace) rm -f "$f" ;; *) fail "default output '$f'" ;; esac
	;;
check)
	# -c: every check and what would be probed, and not one write to tracefs
	find "$T" -type f -exec md5sum {} + | sort >"$WORK/before"
	cap -c; expect_rc 0
	err_has "kprobe ptfuzz/ptk_move_page_tables: move_page_tables old_addr=%x1:x64 new_addr=%x3:x64 len=%x4:x64 (+ return probe)"
	err_has "kprobe on move_huge_pud skipped: not in available_filter_functions"
	err_has "check only: nothing was changed"
	find "$T" -type f -exec md5sum {} + | sort >"$WORK/after"
	cmp -s "$WORK/before" "$WORK/after" || fail "-c wrote to tracefs"
	[ ! -d "$REPO/build/capture/none" ] || fail "-c created an output directory"
	rm -rf "$T/events/syscalls"
	cap -c; expect_rc 3; err_has "CONFIG_FTRACE_SYSCALLS"
	;;
no_tracefs)
	mkdir "$WORK/empty"; T=$WORK/empty
	cap -w ftrace; expect_rc 3; err_has "trace is missing: not a tracefs directory"
	;;
no_syscall_events)
	rm -rf "$T/events/syscalls/sys_enter_mremap" "$T/events/syscalls/sys_exit_mremap"
	cap -o "$WORK/o/t.ptt" -w ftrace; expect_rc 3
	err_has "missing: sys_enter_mremap sys_exit_mremap"; err_has "CONFIG_FTRACE_SYSCALLS"
	[ ! -e "$WORK/o/t.ftrace" ] || fail "wrote a trace without syscall events"
	rm -rf "$T/events/syscalls"
	cap -o "$WORK/o/t.ptt" -w ftrace; expect_rc 3; err_has "CONFIG_FTRACE_SYSCALLS"
	;;
no_kprobes)
	rm -f "$T/kprobe_events"
	cap -o "$WORK/o/t.ptt" -w ftrace; expect_rc 0; err_has "CONFIG_KPROBE_EVENTS"
	cap -f -K -o "$WORK/o/t.ptt" -w ftrace; expect_rc 0; err_lacks "CONFIG_KPROBE_EVENTS"
	;;
failed_write)
	# a tracefs file the kernel refuses to write: the error names it
	rm -f "$T/events/syscalls/sys_enter_mprotect/enable"
	ln -s /dev/full "$T/events/syscalls/sys_enter_mprotect/enable"
	cap -o "$WORK/o/t.ptt" -w ftrace; expect_rc 1
	err_has "cannot write '1' to $T/events/syscalls/sys_enter_mprotect/enable"
	[ ! -e "$WORK/o/t.ftrace" ] || fail "went on after a failed write"
	has "$T/tracing_on" '^0$'
	has "$T/kprobe_events" '^-:ptfuzz/ptk_move_page_tables$'	# cleaned up
	# a refused kprobe definition: that probe is skipped with the file named
	rm -f "$T/kprobe_events"; ln -s /dev/full "$T/kprobe_events"
	rm -rf "$T"/events/ptfuzz/*	# no probes left from before: the definitions themselves fail
	rm "$T/events/syscalls/sys_enter_mprotect/enable"; echo 0 >"$T/events/syscalls/sys_enter_mprotect/enable"
	cap -o "$WORK/o/t.ptt" -w ftrace; expect_rc 0
	err_has "kprobe on move_page_tables skipped: $T/kprobe_events refused 'p:ptfuzz/ptk_move_page_tables "
	err_has "no kprobe could be placed"
	# buffer_size_kb refused
	rm "$T/buffer_size_kb"; mkdir "$T/buffer_size_kb"
	cap -f -o "$WORK/o/t.ptt" -w ftrace; expect_rc 1; err_has "cannot write '16384' to $T/buffer_size_kb"
	;;
btf)
	# bpftool's raw dump of a kernel whose move_page_tables takes a pmc (6.15+) and
	# whose __split_huge_pmd has address third: names decide the registers
	echo btf >"$WORK/btf"
	cat >"$WORK/bpftool" <<'EOF'
#!/bin/sh
cat <<'X'
[1] INT 'long unsigned int' size=8 bits_offset=0 nr_bits=64 encoding=(none)
[5] STRUCT 'pagetable_move_control' size=56 vlen=8
	'old' type_id=1 bits_offset=0
	'new' type_id=1 bits_offset=64
	'old_addr' type_id=1 bits_offset=128
	'old_end' type_id=1 bits_offset=192
	'new_addr' type_id=1 bits_offset=256
	'len_in' type_id=1 bits_offset=320
	'need_rmap_locks' type_id=1 bits_offset=384
	'for_stack' type_id=1 bits_offset=392
[6] STRUCT 'mmu_gather' size=72 vlen=4
	'mm' type_id=1 bits_offset=0
	'batch' type_id=1 bits_offset=64
	'start' type_id=1 bits_offset=128
	'end' type_id=1 bits_offset=192
[7] STRUCT 'mmu_gather' size=8 vlen=1
	'start' type_id=1 bits_offset=0
[10] FUNC_PROTO '(anon)' ret_type_id=1 vlen=1
	'pmc' type_id=1
[11] FUNC 'move_page_tables' type_id=10 linkage=static
[12] FUNC_PROTO '(anon)' ret_type_id=0 vlen=1
	'tlb' type_id=1
[13] FUNC 'tlb_finish_mmu' type_id=12 linkage=static
[20] FUNC_PROTO '(anon)' ret_type_id=0 vlen=5
	'vma' type_id=1
	'pmd' type_id=1
	'address' type_id=1
	'freeze' type_id=1
	'folio' type_id=1
[21] FUNC '__split_huge_pmd' type_id=20 linkage=static
[30] FUNC_PROTO '(anon)' ret_type_id=0 vlen=6
	'tlb' type_id=1
	'mas' type_id=1
	'vma' type_id=1
	'floor' type_id=1
	'ceiling' type_id=1
	'mm_wr_locked' type_id=1
[31] FUNC 'free_pgtables' type_id=30 linkage=static
[40] FUNC_PROTO '(anon)' ret_type_id=0 vlen=2
	'addr' type_id=1
	'size' type_id=1
[41] FUNC 'vfree' type_id=40 linkage=static
X
EOF
	chmod +x "$WORK/bpftool"
	PTFUZZ_BTF=$WORK/btf BPFTOOL=$WORK/bpftool PTFUZZ_TRACEFS=$T PTFUZZ=$PTFUZZ \
		PTFUZZ_WORKLOAD_BIN=$WORK/workload $CAPTURE_SH "$CAP" -o "$WORK/o/t.ptt" -w ftrace >out 2>err
	rc=$?; last="(with BTF)"
	expect_rc 0
	err_lacks "note: no BTF"
	# move_page_tables(pmc): its arguments are members of *pmc; tlb_finish_mmu's range of *tlb
	has "$T/kprobe_events" '^p:ptfuzz/ptk_move_page_tables move_page_tables old_addr=+16(%x0):x64 new_addr=+32(%x0):x64 len=+40(%x0):x64$'
	has "$T/kprobe_events" '^p:ptfuzz/ptk_tlb_finish_mmu tlb_finish_mmu start=+16(%x0):x64 end=+24(%x0):x64$'
	err_lacks "BTF has no parameter 'old_addr'"
	has "$T/kprobe_events" '^p:ptfuzz/ptk___split_huge_pmd __split_huge_pmd address=%x2:x64 pmdval=+0(%x1):x64$'
	has "$T/kprobe_events" '^p:ptfuzz/ptk_free_pgtables free_pgtables floor=%x3:x64 ceiling=%x4:x64$'
	has "$T/kprobe_events" '^p:ptfuzz/ptk_vfree vfree addr=%x0:x64$'
	# not in BTF: the default table
	has "$T/kprobe_events" '^p:ptfuzz/ptk_zap_huge_pmd zap_huge_pmd addr=%x3:x64$'
	;;
btf_dump)
	# btf-dump.py reads the BTF out of a kernel image (here a made-up one: BTF of a
	# 7.x-like kernel inside other bytes) into bpftool's text, and capture.sh places
	# its kprobe arguments from that text (PTFUZZ_BTF_DUMP), with neither BTF nor
	# bpftool on the machine: what record-ftrace.sh does for its guest
	python3 - "$WORK/Image" <<'PY'
import struct, sys
strs = [b""]
def s(x):
    off = sum(len(y) + 1 for y in strs)
    strs.append(x.encode())
    return off
t = b""
def ty(name, kind, vlen, st, kflag=0, extra=b""):
    global t
    t += struct.pack("<III", s(name) if name else 0, (kflag << 31) | (kind << 24) | vlen, st) + extra
ty("long unsigned int", 1, 0, 8, extra=struct.pack("<I", 64))                          # [1] INT
members = ["old", "new", "old_addr", "old_end", "new_addr", "len_in"]
ty("pagetable_move_control", 4, len(members), 56,
   extra=b"".join(struct.pack("<III", s(m), 1, 64 * i) for i, m in enumerate(members)))  # [2] STRUCT
ty("", 13, 1, 1, extra=struct.pack("<II", s("pmc"), 2))                                 # [3] FUNC_PROTO
ty("move_page_tables", 12, 0, 3)                                                        # [4] FUNC
ty("mmu_gather", 4, 4, 128, kflag=1, extra=struct.pack("<IIIIIIIIIIII",
   s("mm"), 1, 0, s("start"), 1, 128, s("end"), 1, 192, s("fullmm"), 1, (1 << 24) | 256)) # [5] STRUCT, bitfields
ty("", 13, 1, 0, extra=struct.pack("<II", s("tlb"), 5))                                 # [6] FUNC_PROTO
ty("tlb_finish_mmu", 12, 1, 6)                                                          # [7] FUNC (global)
ty("", 13, 3, 0, extra=struct.pack("<IIIIII", s("pmd"), 1, s("vma"), 1, s("address"), 1))  # [8] pmd first
ty("__split_huge_pmd", 12, 0, 8)                                                        # [9] FUNC
ty("", 3, 0, 0, extra=struct.pack("<III", 1, 1, 4))                                     # [10] ARRAY
sb = b"\0".join(strs) + b"\0"
btf = struct.pack("<HBBIIIII", 0xeb9f, 1, 0, 24, 0, len(t), len(t), len(sb)) + t + sb
open(sys.argv[1], "wb").write(b"\x4d\x5a" + b"\0" * 4094 + btf + b"\0" * 512)
open(sys.argv[1] + ".none", "wb").write(b"\x4d\x5a" + b"\0" * 8190)
PY
	last="btf-dump.py"
	python3 "$REPO/traces/capture/btf-dump.py" "$WORK/Image" move_page_tables tlb_finish_mmu __split_huge_pmd vfree \
		--structs pagetable_move_control mmu_gather >"$WORK/dump" 2>err || fail "btf-dump.py failed"
	cp "$WORK/dump" out
	has "$WORK/dump" "^\[4\] FUNC 'move_page_tables' type_id=3 linkage=static$"
	has "$WORK/dump" "^\[7\] FUNC 'tlb_finish_mmu' type_id=6 linkage=global$"
	has "$WORK/dump" "^\[3\] FUNC_PROTO '(anon)' ret_type_id=1 vlen=1$"
	has "$WORK/dump" "^	'pmc' type_id=2$"
	has "$WORK/dump" "^	'new_addr' type_id=1 bits_offset=256$"
	has "$WORK/dump" "^	'fullmm' type_id=1 bits_offset=256 bitfield_size=1$"
	lacks "$WORK/dump" "vfree\|INT\|ARRAY"
	python3 "$REPO/traces/capture/btf-dump.py" "$WORK/Image.none" move_page_tables >out 2>err
	rc=$?; last="btf-dump.py (no BTF)"
	expect_rc 1
	[ "$(wc -l <err)" -eq 1 ] || fail "btf-dump.py without BTF: expected one line on stderr"
	err_has "Image.none: no BTF"
	T=$WORK/tfs
	PTFUZZ_BTF_DUMP=$WORK/dump cap -o "$WORK/o/t.ptt" -w ftrace
	expect_rc 0
	err_lacks "note: no BTF"
	err_lacks "bpftool not found"
	has "$T/kprobe_events" '^p:ptfuzz/ptk_move_page_tables move_page_tables old_addr=+16(%x0):x64 new_addr=+32(%x0):x64 len=+40(%x0):x64$'
	has "$T/kprobe_events" '^p:ptfuzz/ptk_tlb_finish_mmu tlb_finish_mmu start=+16(%x0):x64 end=+24(%x0):x64$'
	has "$T/kprobe_events" '^p:ptfuzz/ptk___split_huge_pmd __split_huge_pmd address=%x2:x64 pmdval=+0(%x0):x64$'
	# a dump that is not there: said, and the 6.1 positions
	PTFUZZ_BTF_DUMP=$WORK/missing cap -o "$WORK/o2/t.ptt" -w ftrace
	expect_rc 0
	err_has "PTFUZZ_BTF_DUMP=$WORK/missing is not readable"
	has "$T/kprobe_events" '^p:ptfuzz/ptk_move_page_tables move_page_tables old_addr=%x1:x64 new_addr=%x3:x64 len=%x4:x64$'
	;;
record_scripts_usage)
	# the QEMU capture scripts: bad options and outputs end before anything is
	# downloaded or installed, with one line and exit 2
	rq() { last="record-qemu.sh $*"; bash "$REPO/traces/capture/record-qemu.sh" "$@" >out 2>err; rc=$?; }
	rf() { last="record-ftrace.sh $*"; sh "$REPO/traces/capture/record-ftrace.sh" "$@" >out 2>err; rc=$?; }
	one() { expect_rc 2; [ "$(wc -l <err)" -eq 1 ] || fail "'$last': expected one line on stderr"; }
	rq -x; one; err_has "unknown option '-x'"
	rq -w anything; one; err_has "unknown workload mode 'anything'"
	rq -i abc; one
	rq -s 0; one
	rq -o out.ptt; one
	rq -o; one
	rq extra; one
	touch "$WORK/exists.ptt.zst"; rq -o "$WORK/exists.ptt.zst"; one; err_has "exists (use -f"
	rq -h; expect_rc 0
	rf --bogus; one; err_has "unknown argument '--bogus'"
	rf -o x.txt; one
	rf -k 7.2; one
	rf -o; one
	touch "$WORK/exists.ptt"; rf -o "$WORK/exists.ptt"; one; err_has "exists (use -f"
	rf -h; expect_rc 0
	;;
apt_install)
	# apt-install.sh against a fake apt-get: new packages are installed, an upgrade
	# or removal of a host package is refused before anything is installed
	mkdir -p "$WORK/bin"
	cat >"$WORK/bin/apt-get" <<'EOF'
#!/bin/sh
echo "apt-get $*" >>"$APTLOG"
case " $* " in
*" -s "*) cat "$APTSIM" ;;
esac
exit 0
EOF
	chmod +x "$WORK/bin/apt-get"
	printf 'Inst cpio (2.13+dfsg-7.1 Debian:12/stable [amd64])\nConf cpio (2.13+dfsg-7.1 Debian:12/stable [amd64])\n' >"$WORK/new"
	printf 'Inst libudev1 [252.30-1~deb12u2] (252.31-1~deb12u1 Debian:12/stable [amd64])\nInst cpio (2.13 Debian:12/stable [amd64])\nRemv libfoo [1.0]\n' >"$WORK/upgrade"
	ai() { last="apt-install.sh cpio"; PATH=$WORK/bin:$PATH APTLOG=$WORK/log APTSIM=$1 sh "$REPO/traces/capture/apt-install.sh" cpio >out 2>err; rc=$?; }
	: >"$WORK/log"; ai "$WORK/new"; expect_rc 0
	has "$WORK/log" '^apt-get install -y -q --no-install-recommends --no-upgrade cpio$'
	: >"$WORK/log"; ai "$WORK/upgrade"; expect_rc 1
	err_has "would upgrade or remove host packages: libudev1 libfoo"
	lacks "$WORK/log" '^apt-get install -y'
	;;
*)
	fail "unknown case"
	;;
esac
exit 0
