# SPDX-License-Identifier: GPL-2.0-only
#
# runner.sh - what the shell test runners share (tests/cli/run.sh,
# tests/fidelity/run.sh, tests/minimize/run.sh, tests/capture/test_capture.sh):
# sourced after PTFUZZ and CASE are set and the runner has cd'ed into its work
# directory.  The messages name the command under test as $RUNNER_CMD (default
# ptfuzz; test_capture.sh sets capture.sh).
#   pf ARGS...      run ptfuzz: stdout to ./out, stderr to ./err, status to $rc
#   expect_rc N     the last pf exited N
#   out_has RE, err_has RE, out_lacks RE
#   fail MSG        report, with the heads of ./out and ./err, and exit 1

fail() {
	echo "FAIL [$CASE]: $*" >&2
	for f in out err; do
		[ -s "$f" ] && { echo "--- $f:" >&2; head -n 60 "$f" >&2; }
	done
	exit 1
}

pf() {
	last="$*"
	"$PTFUZZ" "$@" >out 2>err
	rc=$?
}

expect_rc() {
	[ "$rc" -eq "$1" ] || fail "'${RUNNER_CMD:-ptfuzz} $last' exited $rc, expected $1"
}

out_has() {
	grep -q -e "$1" out || fail "'${RUNNER_CMD:-ptfuzz} $last': stdout lacks '$1'"
}

err_has() {
	grep -q -e "$1" err || fail "'${RUNNER_CMD:-ptfuzz} $last': stderr lacks '$1'"
}

out_lacks() {
	grep -q -e "$1" out && fail "'${RUNNER_CMD:-ptfuzz} $last': stdout has '$1'"
	return 0
}
