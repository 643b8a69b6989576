# Shared helpers for integration tests (sourced).  Each test gets its own
# directory, ibfabricd socket and cleanup, so tests can run twice in a row
# and side by side.
set -u

BIN=${IBGW_BIN:-build}
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
case "$BIN" in /*) ;; *) BIN=$TOP/$BIN ;; esac
T=$(mktemp -d /tmp/ibgw-test.XXXXXX)
SOCK=$T/fabric.sock
PIDS=()
# ASan's leak check runs at exit of every tool; keep it, but quiet
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	if [ -n "${KEEP_TEST_DIR:-}" ]; then
		echo "test dir kept: $T"
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT
# a test stopped by the runner's timeout (TERM) or ^C still cleans up
trap 'exit 143' TERM
trap 'exit 130' INT

fail() {
	echo "FAIL: $*"
	exit 1
}

skip() {
	echo "SKIP: $*"
	exit 77
}

ok() {
	echo "ok: $*"
}

# start_fabric [ibfabricd options...]: starts it in the foreground mode,
# logs to $T/fabric.log, waits for its ready line.
start_fabric() {
	# emptied here, not by the child's redirection: a restarted fabric's
	# old "ready" line must not be read before the child truncates it
	: >"$T/fabric.log"
	"$BIN/ibfabricd" -f -s "$SOCK" "$@" >>"$T/fabric.log" 2>&1 &
	FABRIC_PID=$!
	PIDS+=("$FABRIC_PID")
	local i
	for i in $(seq 1 100); do
		grep -q "ready" "$T/fabric.log" 2>/dev/null && return 0
		kill -0 "$FABRIC_PID" 2>/dev/null || break
		sleep 0.05
	done
	cat "$T/fabric.log"
	fail "ibfabricd did not become ready"
}

# stop_fabric: SIGTERM and check it exited cleanly (sanitizers included)
stop_fabric() {
	kill -TERM "$FABRIC_PID"
	wait "$FABRIC_PID"
	local rc=$?
	[ "$rc" -eq 0 ] || { cat "$T/fabric.log"; fail "ibfabricd exited $rc"; }
}

fabric_alive() {
	kill -0 "$FABRIC_PID" 2>/dev/null || { cat "$T/fabric.log"; fail "ibfabricd died"; }
}

ctl() {
	"$BIN/ibfabricctl" -s "$SOCK" "$@"
}

counter() {
	ctl get "$1"
}

fabtest() {
	"$BIN/tests/fabtest" -s "$SOCK" "$@"
}

# start_recv NAME NODE [fabtest recv options...]: background receiver whose
# output is $T/NAME.out; waits until its QP exists (and its --join groups
# are joined), sets NAME_QPN, NAME_LID and, with --join, NAME_MLID.
start_recv() {
	local name=$1 node=$2
	shift 2
	rm -f "$T/$name.qpn"	# a file left by an earlier receiver of that name
	"$BIN/tests/fabtest" -s "$SOCK" recv "$node" --qpn-file "$T/$name.qpn" "$@" >"$T/$name.out" 2>&1 &
	PIDS+=("$!")
	eval "${name}_PID=$!"
	local i
	for i in $(seq 1 100); do
		[ -s "$T/$name.qpn" ] && break
		sleep 0.05
	done
	[ -s "$T/$name.qpn" ] || { cat "$T/$name.out"; fail "receiver $name did not start"; }
	local qpn lid mlid
	read -r qpn lid mlid <"$T/$name.qpn"
	eval "${name}_QPN=$qpn ${name}_LID=$lid ${name}_MLID=${mlid:-}"
}

# wait_recv NAME: wait for the receiver to finish, print its output
wait_recv() {
	local pid
	eval "pid=\$${1}_PID"
	wait "$pid"
	local rc=$?
	[ "$rc" -eq 0 ] || { cat "$T/$1.out"; fail "receiver $1 exited $rc"; }
}

# stop_recv NAME: end a receiver that would otherwise wait for its timeout
stop_recv() {
	local pid
	eval "pid=\$${1}_PID"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

# rx_count NAME: datagrams a receiver printed so far (works after stop_recv)
rx_count() {
	grep -c '^rx ' "$T/$1.out"
}

# wait_counter COUNTER WANT: poll a switch counter until it reaches WANT
# (10 s at most), then compare; for drops that happen asynchronously
wait_counter() {
	local i v
	for i in $(seq 1 200); do
		v=$(counter "$1")
		[ "$v" = "$2" ] && break
		sleep 0.05
	done
	[ "$v" = "$2" ] || ctl stats | grep -v ' 0$' >&2
	expect_eq "$1" "$v" "$2"
}

# eventually CMD...: true once CMD succeeds, retried for up to 10 s
eventually() {
	local i
	for i in $(seq 1 200); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}

received() {
	sed -n 's/^received //p' "$T/$1.out"
}

expect_eq() {	# what got want
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
	ok "$1 = $3"
}
