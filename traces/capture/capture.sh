#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# capture.sh - capture an ops-level page-table trace from the running arm64
# kernel with ftrace, around a command or a shipped workload, and import it
# with `ptfuzz import-ftrace`.  Run it as root on the arm64 machine whose
# kernel you want to trace (record-ftrace.sh runs it inside a QEMU guest).
#
# usage: traces/capture/capture.sh [OPTIONS] -w WORKLOAD
#        traces/capture/capture.sh [OPTIONS] -- COMMAND [ARG...]
#
#   -w WORKLOAD    a shipped workload: ftrace (traces/capture/ftrace-workload.c,
#                  built with $CC, default cc, unless PTFUZZ_WORKLOAD_BIN names it)
#   -- COMMAND     trace COMMAND (and the processes it forks) instead
#   -o OUT         the trace to write (.ptt text, .ptt.zst binary; default
#                  build/capture/ftrace-RELEASE.ptt in the repository); the raw
#                  ftrace text goes beside it as OUT without .ptt[.zst] + .ftrace
#   -f             overwrite OUT and its .ftrace if they exist (default: refuse)
#   -b KB          per-CPU ring buffer in KiB (default 16384)
#   -p FILE        provenance: each line of FILE becomes a trace marker before
#                  the command runs (`ptfuzz kernel: ...`, `ptfuzz machine: ...`,
#                  free text); default: kernel and machine from uname and sysfs
#   -K, --no-kprobes   syscall events and markers only (no kernel evidence)
#   -n, --no-import    write the .ftrace only
#   -c, --check    check this kernel (tracefs, syscall events, kprobes, BTF, the
#                  probed functions) and say what a capture would record;
#                  nothing is written to tracefs
#   -h, --help     this help
#
# What it checks, each with its own message: tracefs (mounted, or mountable
# at /sys/kernel/tracing), the syscall events (CONFIG_FTRACE_SYSCALLS),
# kprobe events (CONFIG_KPROBE_EVENTS), BTF (/sys/kernel/btf/vmlinux, read
# with bpftool for argument positions; without it a default table of 6.1
# signatures).  Each kprobe target that this kernel does not list in
# available_filter_functions (inlined or absent) is skipped with a note.
# Every tracefs write is checked; a failure stops the capture with a message
# naming the file.  It restores what it changed on exit and never reboots or
# powers off anything.
#
# environment: PTFUZZ_TRACEFS (the tracefs root; when set nothing is mounted
#              and root is not required - tests point it at a fake tree),
#              PTFUZZ_BTF (default /sys/kernel/btf/vmlinux), BPFTOOL (bpftool),
#              PTFUZZ_BTF_DUMP (a file holding what `bpftool btf dump file BTF
#              format raw` prints for this kernel, made elsewhere: read instead
#              of running bpftool; record-ftrace.sh makes it on the host from
#              the kernel image with btf-dump.py, the guest has no bpftool),
#              PTFUZZ (the ptfuzz binary; default build/release/tools/ptfuzz,
#              built with the release preset if missing), PTFUZZ_WORKLOAD_BIN, CC.
#
# exit status: 0 captured (and imported); 1 the capture, the command or the
# import failed; 2 bad usage; 3 this kernel or machine cannot be traced (not
# root, no tracefs, no syscall events).
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
me=capture.sh

say() { printf '%s: %s\n' "$me" "$*" >&2; }
note() { printf '%s: note: %s\n' "$me" "$*" >&2; }
die() { code=$1; shift; printf '%s: %s\n' "$me" "$*" >&2; exit "$code"; }
usage() { die 2 "$*  (see $me --help)"; }

out= force=0 buf=16384 prov= kprobes=1 import=1 workload= check=0
while [ $# -gt 0 ]; do
	case $1 in
	-o) [ $# -ge 2 ] || usage "-o needs a file"; out=$2; shift 2 ;;
	-w) [ $# -ge 2 ] || usage "-w needs a workload"; workload=$2; shift 2 ;;
	-b) [ $# -ge 2 ] || usage "-b needs a size in KiB"; buf=$2; shift 2 ;;
	-p) [ $# -ge 2 ] || usage "-p needs a file"; prov=$2; shift 2 ;;
	-f) force=1; shift ;;
	-K|--no-kprobes) kprobes=0; shift ;;
	-n|--no-import) import=0; shift ;;
	-c|--check) check=1; shift ;;
	-h|--help) sed -n '3,48p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	--) shift; break ;;
	*) usage "unknown option '$1'" ;;
	esac
done
case $buf in ''|*[!0-9]*) usage "-b: expected a size in KiB, got '$buf'" ;; esac
[ "$buf" -ge 1 ] 2>/dev/null || usage "-b: expected a size in KiB, got '$buf'"
[ -z "$prov" ] || [ -r "$prov" ] || usage "-p: cannot read '$prov'"
if [ -n "$workload" ]; then
	[ $# -eq 0 ] || usage "give either -w WORKLOAD or -- COMMAND, not both"
	case $workload in
	ftrace|ftrace-workload) workload=ftrace ;;
	*) usage "-w: unknown workload '$workload' (known: ftrace)" ;;
	esac
elif [ $# -eq 0 ] && [ $check = 0 ]; then
	usage "nothing to trace: give -w WORKLOAD or -- COMMAND"
fi
[ $check = 0 ] || [ $# -eq 0 ] || usage "-c checks this kernel only: no command"

# ---- the outputs: never overwrite without -f ----
release=$(uname -r)
[ -n "$out" ] || out=$repo/build/capture/ftrace-$release.ptt
case $out in
*.ptt.zst) raw=${out%.ptt.zst}.ftrace ;;
*.ptt) raw=${out%.ptt}.ftrace ;;
*) raw=$out.ftrace ;;
esac
if [ $force = 0 ] && [ $check = 0 ]; then
	[ ! -e "$raw" ] || usage "$raw exists (use -f to overwrite it)"
	[ $import = 0 ] || [ ! -e "$out" ] || usage "$out exists (use -f to overwrite it)"
fi
if [ $check = 0 ]; then
	mkdir -p "$(dirname "$raw")" "$(dirname "$out")" || die 1 "cannot create the directory of $out"
	out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
	raw=$(cd "$(dirname "$raw")" && pwd)/$(basename "$raw")
fi

# ---- tracefs ----
if [ -n "${PTFUZZ_TRACEFS:-}" ]; then
	T=$PTFUZZ_TRACEFS
	[ -d "$T" ] || die 3 "PTFUZZ_TRACEFS=$T is not a directory"
else
	[ "$(id -u)" = 0 ] || die 3 "must run as root (tracefs, kprobes): sudo $0 ..."
	T=
	for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
		[ -e "$d/trace" ] && { T=$d; break; }
	done
	if [ -z "$T" ] && [ -d /sys/kernel/tracing ]; then
		mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null && [ -e /sys/kernel/tracing/trace ] &&
			T=/sys/kernel/tracing
	fi
	if [ -z "$T" ] && [ -d /sys/kernel/debug ]; then
		mount -t debugfs nodev /sys/kernel/debug 2>/dev/null && [ -e /sys/kernel/debug/tracing/trace ] &&
			T=/sys/kernel/debug/tracing
	fi
	[ -n "$T" ] || die 3 "no tracefs: neither /sys/kernel/tracing nor /sys/kernel/debug/tracing has a" \
		"'trace' file and mounting tracefs failed (the kernel needs CONFIG_FTRACE; try" \
		"'mount -t tracefs nodev /sys/kernel/tracing')"
fi
for f in trace tracing_on trace_marker set_event_pid buffer_size_kb; do
	[ -e "$T/$f" ] || die 3 "$T/$f is missing: not a tracefs directory, or the kernel lacks ftrace (CONFIG_FTRACE)"
done

# ---- syscall events (CONFIG_FTRACE_SYSCALLS) ----
syscalls="mmap mremap mprotect munmap madvise"
missing=
for s in $syscalls; do
	for d in enter exit; do
		[ -e "$T/events/syscalls/sys_${d}_$s/enable" ] || missing="$missing sys_${d}_$s"
	done
done
[ -z "$missing" ] || die 3 "no syscall events in $T/events/syscalls (missing:$missing): the kernel" \
	"needs CONFIG_FTRACE_SYSCALLS=y"
exits=
for s in exit_group exit; do
	[ -e "$T/events/syscalls/sys_enter_$s/enable" ] && exits="$exits $s"
done
[ -n "$exits" ] || note "no sys_enter_exit_group event: process exits are not marked"

# ---- writes, each checked ----
# tw FILE TEXT [> | >>]: write TEXT to $T/FILE or stop naming the file
tw() {
	if [ "${3:->}" = ">>" ]; then
		e=$( { printf '%s\n' "$2" >>"$T/$1"; } 2>&1 ) && return 0
	else
		e=$( { printf '%s\n' "$2" >"$T/$1"; } 2>&1 ) && return 0
	fi
	e=$(printf '%s' "$e" | sed -n '$s/.*: //p')
	die 1 "cannot write '$2' to $T/$1${e:+: $e}"
}
# tw_try: the same, false (with the reason in $e) instead of stopping
tw_try() {
	e=$( { printf '%s\n' "$2" >>"$T/$1"; } 2>&1 ) && return 0
	e=$(printf '%s' "$e" | sed -n '$s/.*: //p')
	return 1
}

# ---- restore what we changed, whatever happens ----
probes=
tgid_was=$(cat "$T/options/record-tgid" 2>/dev/null || true)
fork_was=$(cat "$T/options/event-fork" 2>/dev/null || true)
cleanup() {
	trap - EXIT INT TERM HUP
	[ $check = 0 ] || return 0	# -c changed nothing
	printf '0\n' >"$T/tracing_on" 2>/dev/null
	for s in $syscalls $exits; do
		for d in enter exit; do
			[ -e "$T/events/syscalls/sys_${d}_$s/enable" ] &&
				printf '0\n' >"$T/events/syscalls/sys_${d}_$s/enable" 2>/dev/null
		done
	done
	for ev in sched/sched_process_exec task/task_newtask; do
		[ -e "$T/events/$ev/enable" ] && printf '0\n' >"$T/events/$ev/enable" 2>/dev/null
	done
	for ev in $probes; do
		[ -e "$T/events/ptfuzz/$ev/enable" ] && printf '0\n' >"$T/events/ptfuzz/$ev/enable" 2>/dev/null
		printf '%s\n' "-:ptfuzz/$ev" >>"$T/kprobe_events" 2>/dev/null
	done
	printf '\n' >"$T/set_event_pid" 2>/dev/null
	[ -z "$tgid_was" ] || printf '%s\n' "$tgid_was" >"$T/options/record-tgid" 2>/dev/null
	[ -z "$fork_was" ] || printf '%s\n' "$fork_was" >"$T/options/event-fork" 2>/dev/null
	[ -z "${tmp:-}" ] || rm -rf "$tmp"
	:
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ptfuzz-capture.XXXXXX") || die 1 "cannot create a temporary directory"

# ---- kprobes (CONFIG_KPROBE_EVENTS) and BTF ----
BTF=${PTFUZZ_BTF:-/sys/kernel/btf/vmlinux}
BPFTOOL=${BPFTOOL:-bpftool}
# The non-inlined mm functions whose calls are evidence, with the arguments
# recorded: NAME=%xN is the default position (the 6.1 signature); with BTF the
# parameter called NAME is looked up instead, and failing that the
# alternatives after `|`, PARAM->STRUCT.FIELD: that member of the struct
# PARAM points to (BTF only; a default of `-` means BTF only), or
# deref:PARAM, the 8 bytes PARAM points to.  `ret` adds a return probe.
probe_table() {
	cat <<'EOF'
move_page_tables old_addr=%x1|pmc->pagetable_move_control.old_addr new_addr=%x3|pmc->pagetable_move_control.new_addr len=%x4|pmc->pagetable_move_control.len_in ret
move_huge_pmd old_addr=%x1 new_addr=%x2
move_huge_pud old_addr=%x1 new_addr=%x2
__split_huge_pmd address=%x2 pmdval=+0(%x1)|deref:pmd
change_huge_pmd addr=%x3
zap_huge_pmd addr=%x3
do_huge_pmd_anonymous_page
free_pgtables floor=%x3 ceiling=%x4
tlb_finish_mmu start=-|tlb->mmu_gather.start end=-|tlb->mmu_gather.end
__pte_alloc pmd=%x1
__pmd_alloc address=%x2
__vmalloc_node_range size=%x0 ret
__vmalloc_node_range_noprof size=%x0 ret
vmap count=%x1 ret
vunmap addr=%x0
vfree addr=%x0
EOF
}
# a probe of ours left by an earlier run that did not finish: disable and remove it
forget_probe() {
	[ -e "$T/events/ptfuzz/$1" ] || return 0
	if [ -e "$T/events/ptfuzz/$1/enable" ]; then
		e=$( { printf '0\n' >"$T/events/ptfuzz/$1/enable"; } 2>&1 ) || return 1
	fi
	tw_try kprobe_events "-:ptfuzz/$1"
}
if [ $kprobes = 1 ]; then
	if [ ! -e "$T/kprobe_events" ]; then
		note "no $T/kprobe_events: the kernel lacks CONFIG_KPROBE_EVENTS; capturing syscalls only (no kernel evidence)"
		kprobes=0
	fi
fi
if [ $kprobes = 1 ]; then
	params=
	if [ -n "${PTFUZZ_BTF_DUMP:-}" ] && [ ! -r "$PTFUZZ_BTF_DUMP" ]; then
		note "PTFUZZ_BTF_DUMP=$PTFUZZ_BTF_DUMP is not readable: kprobe arguments at their 6.1 positions"
	elif [ -z "${PTFUZZ_BTF_DUMP:-}" ] && [ ! -r "$BTF" ]; then
		note "no BTF ($BTF; CONFIG_DEBUG_INFO_BTF): kprobe arguments at their 6.1 positions"
	elif [ -z "${PTFUZZ_BTF_DUMP:-}" ] && ! command -v "$BPFTOOL" >/dev/null 2>&1; then
		note "bpftool not found: kprobe arguments at their 6.1 positions (install bpftool to read them from $BTF)"
	else
		# "FUNC p0 p1 ...": the parameter names of each function in the table, and
		# "STRUCT.FIELD BYTES": the offsets of the struct members it names, from BTF
		want=$(probe_table | awk '{print $1}' | tr '\n' ' ')
		wants=$(probe_table | tr ' |' '\n\n' | sed -n 's/^[a-z_]*->\([a-z_]*\)\..*/\1/p' | sort -u | tr '\n' ' ')
		btf_dump() {
			if [ -n "${PTFUZZ_BTF_DUMP:-}" ]; then
				cat "$PTFUZZ_BTF_DUMP"
			else
				"$BPFTOOL" btf dump file "$BTF" format raw 2>/dev/null
			fi
		}
		params=$(btf_dump | awk -v want="$want" -v wants="$wants" '
			BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) wanted[w[i]] = 1
				n = split(wants, w, " "); for (i = 1; i <= n; i++) wstruct[w[i]] = 1 }
			/^\[[0-9]+\] FUNC_PROTO / { id = substr($1, 2, length($1) - 2); cur = id; st = ""; np[id] = 0; next }
			/^\[[0-9]+\] FUNC / {
				cur = ""; st = ""; name = $3; gsub("\047", "", name)
				if (name in wanted) { t = $4; sub("type_id=", "", t); fn[name] = t }
				next }
			/^\[[0-9]+\] STRUCT / {
				cur = ""; st = $3; gsub("\047", "", st); if (!(st in wstruct) || (st in seen)) st = ""
				if (st != "") seen[st] = 1
				next }
			/^\[/ { cur = ""; st = ""; next }
			cur != "" && /^[ \t]+\047/ { p = $1; gsub("\047", "", p); pn[cur, np[cur]++] = p; next }
			st != "" && /^[ \t]+\047/ {
				m = $1; gsub("\047", "", m)
				for (i = 2; i <= NF; i++) if ($i ~ /^bits_offset=/) { o = $i; sub("bits_offset=", "", o) }
				if (o % 8 == 0) off[st "." m] = o / 8 }
			END { for (f in fn) { s = f; id = fn[f]; for (i = 0; i < np[id]; i++) s = s " " pn[id, i]; print s }
			      for (k in off) print k " " off[k] }')
		[ -n "$params" ] || note "bpftool read no functions from ${PTFUZZ_BTF_DUMP:-$BTF}: kprobe arguments at their 6.1 positions"
	fi
	avail=$T/available_filter_functions
	[ -r "$avail" ] || note "no $avail (CONFIG_FUNCTION_TRACER): kprobe targets are tried without checking"
	if [ -r "$avail" ]; then
		# read it once (the kernel formats tens of thousands of lines at each read: slow
		# under TCG), keeping the functions of the table
		probe_table | awk '{ print $1 }' >"$tmp/wanted"
		awk 'NR == FNR { w[$1] = 1; next } ($1 in w) { print $1 }' "$tmp/wanted" "$avail" >"$tmp/avail" ||
			die 1 "cannot read $avail"
		avail=$tmp/avail
	fi
	tab=$(probe_table)
	while read -r fn rest; do
		[ -n "$fn" ] || continue
		if [ -r "$avail" ] && ! awk -v f="$fn" '$1 == f { found = 1; exit } END { exit !found }' "$avail"; then
			note "kprobe on $fn skipped: not in available_filter_functions (inlined or absent in this kernel)"
			continue
		fi
		args= ret=0
		sig=$(printf '%s\n' "$params" | awk -v f="$fn" '$1 == f { print; exit }')
		for a in $rest; do
			[ "$a" = ret ] && { ret=1; continue; }
			name=${a%%=*} spec=${a#*=}
			pos=${spec%%|*}
			alts=
			case $spec in *"|"*) alts=$(printf '%s' "${spec#*|}" | tr '|' ' ') ;; esac
			if [ -n "$sig" ]; then
				# param_reg P: the register of parameter P of this function, or nothing
				pos=$(printf '%s\n' "$sig" | awk -v p="$name" '{ for (i = 2; i <= NF && i <= 9; i++) if ($i == p) { print "%x" i - 2; exit } }')
				for alt in $alts; do
					[ -z "$pos" ] || break
					case $alt in
					deref:*)	# what the parameter points to
						r=$(printf '%s\n' "$sig" | awk -v p="${alt#deref:}" '{ for (i = 2; i <= NF && i <= 9; i++) if ($i == p) { print "%x" i - 2; exit } }')
						[ -z "$r" ] || pos=+0\($r\)
						continue ;;
					esac
					pp=${alt%%->*} sf=${alt#*->}
					r=$(printf '%s\n' "$sig" | awk -v p="$pp" '{ for (i = 2; i <= NF && i <= 9; i++) if ($i == p) { print "%x" i - 2; exit } }')
					o=$(printf '%s\n' "$params" | awk -v k="$sf" '$1 == k && NF == 2 { print $2; exit }')
					[ -n "$r" ] && [ -n "$o" ] && pos=+$o\($r\)
				done
				if [ -z "$pos" ]; then
					note "$fn: BTF has no parameter '$name' in registers (signature changed): not recorded"
					continue
				fi
			elif [ "$pos" = - ]; then
				note "$fn: '$name' needs BTF (a struct member): not recorded"
				continue
			fi
			args="$args $name=$pos:x64"
		done
		ev=ptk_$fn
		if [ $check = 1 ]; then
			say "kprobe ptfuzz/$ev: $fn$args${ret:+$( [ $ret = 1 ] && echo ' (+ return probe)')}"
			probes="$probes $ev"
			continue
		fi
		if ! forget_probe "$ev" || ! forget_probe "${ev}_ret"; then
			note "kprobe on $fn skipped: ptfuzz/$ev is left from an earlier run and $T/kprobe_events refused to remove it${e:+: $e}"
			continue
		fi
		if ! tw_try kprobe_events "p:ptfuzz/$ev $fn$args"; then
			note "kprobe on $fn skipped: $T/kprobe_events refused 'p:ptfuzz/$ev $fn$args'${e:+: $e}"
			continue
		fi
		probes="$probes $ev"
		if [ $ret = 1 ]; then
			if tw_try kprobe_events "r:ptfuzz/${ev}_ret $fn ret=\$retval:x64"; then
				probes="$probes ${ev}_ret"
			else
				note "return probe on $fn skipped: $T/kprobe_events refused it${e:+: $e}"
			fi
		fi
	done <<EOF
$tab
EOF
	[ -n "$probes" ] || note "no kprobe could be placed: capturing syscalls only"
fi
if [ $check = 1 ]; then
	say "tracefs $T: syscall events $syscalls$exits; record-tgid $([ -e "$T/options/record-tgid" ] && echo yes || echo no);" \
		"kprobes:${probes:- none}"
	say "check only: nothing was changed; this kernel can be captured"
	probes=
	exit 0
fi

# ---- set up ----
tw tracing_on 0
[ ! -e "$T/current_tracer" ] || tw current_tracer nop
tw buffer_size_kb "$buf"
tw trace ""
if [ -e "$T/options/record-tgid" ]; then
	tw options/record-tgid 1
else
	note "no $T/options/record-tgid: threads of one process are told apart by PID only"
fi
[ ! -e "$T/options/event-fork" ] || tw options/event-fork 1
for s in $syscalls $exits; do
	for d in enter exit; do
		[ -e "$T/events/syscalls/sys_${d}_$s/enable" ] && tw "events/syscalls/sys_${d}_$s/enable" 1
	done
done
if [ -e "$T/events/sched/sched_process_exec/enable" ]; then
	tw events/sched/sched_process_exec/enable 1
else
	note "no sched_process_exec event: an exec'd program's address space is not told apart"
fi
# clone flags of new tasks: threads (CLONE_VM) share their parent's address space
# in the import even where the TGID column is missing
[ ! -e "$T/events/task/task_newtask/enable" ] || tw events/task/task_newtask/enable 1
for ev in $probes; do
	[ -e "$T/events/ptfuzz/$ev/enable" ] ||
		die 1 "$T/kprobe_events took ptfuzz/$ev but $T/events/ptfuzz/$ev/enable did not appear"
	tw "events/ptfuzz/$ev/enable" 1
done
say "tracefs $T: syscalls $syscalls$exits; kprobes:${probes:- none}"

# ---- provenance markers ----
if [ -n "$prov" ]; then
	cp "$prov" "$tmp/markers" || die 1 "cannot read $prov"
else
	model=$(tr -d '\0' 2>/dev/null </proc/device-tree/model ||
		cat /sys/devices/virtual/dmi/id/product_name 2>/dev/null || echo "unknown machine")
	ncpu=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo "?")
	{
		echo "ptfuzz kernel: Linux $release $(uname -v)"
		echo "ptfuzz machine: $model, $(uname -m), $ncpu CPUs"
		echo "provenance: recorded $(date -u +%Y-%m-%dT%H:%M:%SZ) by traces/capture/capture.sh"
	} >"$tmp/markers"
fi
thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || true)
[ -z "$thp" ] || echo "ptfuzz thp: $thp" >>"$tmp/markers"

# ---- the command ----
if [ "$workload" = ftrace ]; then
	bin=${PTFUZZ_WORKLOAD_BIN:-}
	if [ -z "$bin" ]; then
		bin=$repo/build/capture/ftrace-workload
		if [ ! -x "$bin" ] || [ "$here/ftrace-workload.c" -nt "$bin" ]; then
			say "building $bin with ${CC:-cc}"
			mkdir -p "$(dirname "$bin")" &&
				${CC:-cc} -O2 -Wall -o "$bin" "$here/ftrace-workload.c" ||
				die 1 "cannot build the workload (set CC, or PTFUZZ_WORKLOAD_BIN to a built ftrace-workload)"
		fi
	fi
	[ -x "$bin" ] || die 1 "workload $bin is not executable"
	set -- "$bin" "$T"
fi
# The wrapper turns tracing on for itself only (set_event_pid; event-fork adds
# its children), writes the markers and becomes the command.
say "running: $*"
sh -c '
	T=$1 m=$2; shift 2
	printf "%s\n" $$ >"$T/set_event_pid" || exit 125
	printf "1\n" >"$T/tracing_on" || exit 125
	while IFS= read -r l; do
		[ -z "$l" ] || printf "%s\n" "$l" >>"$T/trace_marker" || exit 125
	done <"$m"
	exec "$@"' capture "$T" "$tmp/markers" "$@"
rc=$?
tw tracing_on 0
[ $rc != 125 ] || die 1 "could not start tracing for the command (a write to $T/set_event_pid, tracing_on or trace_marker failed)"
[ $rc = 0 ] || say "the command exited with status $rc (the trace is still saved)"

# ---- save and import ----
cat "$T/trace" >"$tmp/trace" || die 1 "cannot read $T/trace"
cp "$tmp/trace" "$raw" || die 1 "cannot write $raw"
lines=$(wc -l <"$raw")
say "saved $raw ($lines lines)"
grep -q 'LOST' "$raw" && note "the trace lost events: raise -b (now $buf KiB per CPU)"
if [ $import = 1 ]; then
	if [ -z "${PTFUZZ:-}" ]; then
		PTFUZZ=$repo/build/release/tools/ptfuzz
		if [ ! -x "$PTFUZZ" ]; then
			say "building ptfuzz (cmake --preset release)"
			(cd "$repo" && cmake --preset release >/dev/null && cmake --build --preset release --target ptfuzz >/dev/null) ||
				die 1 "cannot build ptfuzz: build it (README.md) or set PTFUZZ; the ftrace text is in $raw"
		fi
	fi
	(cd "$(dirname "$raw")" && "$PTFUZZ" import-ftrace -f "$(basename "$raw")" -o "$out") ||
		die 1 "import failed; the ftrace text is in $raw"
	say "wrote $out"
fi
[ $rc = 0 ] || exit 1
exit 0
