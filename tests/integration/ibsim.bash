# ibsim + OpenSM for integration tests (sourced after lib.bash).
#
#   ibsim_require                 fail unless ibsim, opensm, umad2sim
#                                 and the infiniband-diags tools are there
#   ibsim_start NETFILE PARTS     ibsim on NETFILE, then OpenSM as node "sm"
#                                 with partitions file PARTS; waits for
#                                 "SUBNET UP"
#   ibsim_run NODE CMD...         run CMD as ibsim node NODE (umad2sim
#                                 preload, SIM_HOST=NODE), bounded by
#                                 IBSIM_RUN_TIMEOUT seconds (default 20)
#   ibsim_bg NAME NODE CMD...     the same in the background, output in
#                                 $T/NAME.out, pid in NAME_PID and PIDS
#   ibsim_stop                    clients, OpenSM, then ibsim; fails if
#                                 OpenSM or ibsim had died
#
# After ibsim_start: OPENSM_START_MS (spawn to "SUBNET UP" seen, polled
# every 50 ms) and IBSIM_NET, the default topology (ibsim/fabric.net).
#
# Each fabric gets its own IBSIM_SOCKNAME (abstract unix sockets, so
# parallel tests do not meet).  It is never exported to the test shell:
# only the processes of this fabric carry it in their environment, which
# is how ibsim_cleanup finds clients that escaped (started in a subshell,
# or left behind by a timeout).  ibsim_cleanup runs on EXIT before
# lib.bash's cleanup and escalates to SIGKILL after 5 s: OpenSM, for one,
# handles SIGTERM with a flag that nobody looks at while umad2sim retries
# its connection to an ibsim that is gone (every 2 s, forever).
#
# What ibsim 0.10 / umad2sim impose (seen on Debian 12): at most 10 clients at a time, OpenSM included, and a client
# killed by a signal keeps its slot until ibsim exits; a client blocks
# forever without ibsim (hence the timeouts); each client writes
# ./sys-<pid> into its working directory, so clients run in $T/ibsim/NODE;
# a client sees the port as it was when it started (its sysfs is a copy
# made then), so start clients after ibsim_start has returned.

# shellcheck disable=SC2034	# IBSIM_NET, OPENSM_START_MS: for the tests
IBSIM_UMAD2SIM=${IBSIM_UMAD2SIM:-/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so}
IBSIM_NET=$TOP/tests/integration/ibsim/fabric.net
IBSIM_RUN_TIMEOUT=${IBSIM_RUN_TIMEOUT:-20}
IBSIM_SOCKNAME=""
IBSIM_PID=""
OPENSM_PID=""
OPENSM_START_MS=""

# make deps installs them, and the OpenSM tests must not be skipped
# silently in CI: a missing tool fails, unless IBGW_ALLOW_SKIP=1 (77)
ibsim_require() {
	local t miss=""
	for t in ibsim opensm ibstat smpquery saquery timeout; do
		command -v "$t" >/dev/null || miss="$miss $t"
	done
	[ -r "$IBSIM_UMAD2SIM" ] || miss="$miss $IBSIM_UMAD2SIM"
	[ -z "$miss" ] && return 0
	[ "${IBGW_ALLOW_SKIP:-}" = 1 ] && skip "not installed:$miss"
	fail "not installed:$miss (make deps installs them)"
}

_ibsim_now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# umad2sim 0.10's read() copies 64 + 256 bytes out of a 288-byte heap
# buffer (bytes 224-255 of every MAD it delivers are garbage), which ASan
# reports from its memcpy interceptor.  Not ours to fix: suppressed.
printf 'interceptor_via_lib:libumad2sim.so\n' >"$T/ibsim-asan.supp"

# The environment every process of this fabric runs with.  A sanitizer
# build cannot have its runtime first in the library list under a preload;
# umad2sim's overreads are not ours to report.
_ibsim_env() {	# NODE
	echo "IBSIM_SOCKNAME=$IBSIM_SOCKNAME" "SIM_HOST=$1" \
		"LD_PRELOAD=$IBSIM_UMAD2SIM" \
		"ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:suppressions=$T/ibsim-asan.supp"
}

_ibsim_logs() {
	local f
	for f in "$T/ibsim.log" "$T/opensm.out" "$T/osm.log"; do
		[ -s "$f" ] || continue
		echo "--- $f (last lines)"
		tail -n 15 "$f"
	done
}

# ibsim is listening once its control socket is bound (an abstract name,
# shown as @NAME:ctl followed by @s for the NUL padding).
_ibsim_bound() {
	grep -q "@$IBSIM_SOCKNAME:ctl\(@\|\$\)" /proc/net/unix
}

ibsim_start() {	# NETFILE PARTITIONS_FILE
	local net=$1 parts=$2 i t0
	[ -r "$net" ] || fail "ibsim_start: no topology file $net"
	[ -r "$parts" ] || fail "ibsim_start: no partitions file $parts"
	[ -z "$IBSIM_PID" ] || fail "ibsim_start: a fabric is running already"
	IBSIM_SOCKNAME=ibgw-$$-$RANDOM$RANDOM
	echo "$IBSIM_SOCKNAME" >"$T/ibsim.sock"
	mkdir -p "$T/ibsim" "$T/osm"

	# -s: start the network at once; -n: no console (stdin unused)
	env IBSIM_SOCKNAME="$IBSIM_SOCKNAME" ibsim -s -n "$net" \
		</dev/null >"$T/ibsim.log" 2>&1 &
	IBSIM_PID=$!
	PIDS+=("$IBSIM_PID")
	echo "$IBSIM_PID" >"$T/ibsim.pid"
	for i in $(seq 1 100); do
		_ibsim_bound && break
		kill -0 "$IBSIM_PID" 2>/dev/null || break
		sleep 0.05
	done
	_ibsim_bound ||
		{ _ibsim_logs; fail "ibsim did not start (socket $IBSIM_SOCKNAME)"; }

	# An empty config file: an /etc/opensm/opensm.conf must not leak in.
	# -d2 flushes the log after each line (else it looks hung), -e
	# starts it afresh; OSM_TMP_DIR/OSM_CACHE_DIR keep dumps and
	# guid2lid out of /var.
	: >"$T/opensm.conf"
	t0=$(_ibsim_now_ms)
	(
		cd "$T/ibsim" || exit 1
		# shellcheck disable=SC2046
		exec env $(_ibsim_env sm) OSM_TMP_DIR="$T/osm" \
			OSM_CACHE_DIR="$T/osm" opensm -F "$T/opensm.conf" \
			-d2 -f "$T/osm.log" -e -P "$parts" \
			--dump_files_dir "$T/osm"
	) </dev/null >"$T/opensm.out" 2>&1 &
	OPENSM_PID=$!
	PIDS+=("$OPENSM_PID")
	echo "$OPENSM_PID" >"$T/opensm.pid"
	for i in $(seq 1 200); do
		grep -q 'SUBNET UP' "$T/osm.log" 2>/dev/null && break
		kill -0 "$OPENSM_PID" 2>/dev/null || break
		sleep 0.05
	done
	grep -q 'SUBNET UP' "$T/osm.log" 2>/dev/null ||
		{ _ibsim_logs; fail "OpenSM did not bring the subnet up within 10 s"; }
	OPENSM_START_MS=$(($(_ibsim_now_ms) - t0))
}

ibsim_run() {	# NODE CMD...
	local node=$1
	shift
	[ -n "$IBSIM_SOCKNAME" ] || fail "ibsim_run: no fabric (ibsim_start)"
	mkdir -p "$T/ibsim/$node"
	(
		cd "$T/ibsim/$node" || exit 1
		# shellcheck disable=SC2046
		exec timeout -k 2 "$IBSIM_RUN_TIMEOUT" env $(_ibsim_env "$node") "$@"
	)
}

ibsim_bg() {	# NAME NODE CMD...
	local name=$1 node=$2
	shift 2
	[ -n "$IBSIM_SOCKNAME" ] || fail "ibsim_bg: no fabric (ibsim_start)"
	mkdir -p "$T/ibsim/$node"
	(
		cd "$T/ibsim/$node" || exit 1
		# shellcheck disable=SC2046
		exec timeout -k 2 "$IBSIM_RUN_TIMEOUT" env $(_ibsim_env "$node") "$@"
	) >"$T/$name.out" 2>&1 &
	PIDS+=("$!")
	eval "${name}_PID=$!"
}

# _ibsim_reap PID...: SIGTERM, up to 5 s, then SIGKILL; works for
# processes that are not children of this shell too
_ibsim_reap() {
	local p i alive
	[ $# -gt 0 ] || return 0
	kill -TERM "$@" 2>/dev/null
	for i in $(seq 1 100); do
		alive=""
		for p in "$@"; do
			kill -0 "$p" 2>/dev/null && alive="$alive $p"
		done
		[ -z "$alive" ] && break
		sleep 0.05
	done
	# shellcheck disable=SC2086
	[ -z "$alive" ] || kill -KILL $alive 2>/dev/null
	for p in "$@"; do
		wait "$p" 2>/dev/null
	done
	return 0
}

# Processes carrying this fabric's IBSIM_SOCKNAME in their environment,
# except this shell.
_ibsim_members() {
	local e p
	[ -n "$IBSIM_SOCKNAME" ] || return 0
	for e in /proc/[0-9]*/environ; do
		p=${e#/proc/}
		p=${p%/environ}
		[ "$p" = "$$" ] || [ "$p" = "$BASHPID" ] && continue
		grep -qxzF "IBSIM_SOCKNAME=$IBSIM_SOCKNAME" "$e" 2>/dev/null &&
			echo "$p"
	done
	return 0
}

# _ibsim_down: clients first (they would lose ibsim under them), then
# OpenSM, then ibsim.  Pids come from the pid files (a fabric started in a
# subshell leaves no variables here) and count only while the process
# still carries this fabric's socket name: a recycled pid is left alone.
_ibsim_down() {
	local members sm="" sim="" p
	[ -r "$T/opensm.pid" ] && sm=$(cat "$T/opensm.pid")
	[ -r "$T/ibsim.pid" ] && sim=$(cat "$T/ibsim.pid")
	[ -n "$IBSIM_SOCKNAME" ] || IBSIM_SOCKNAME=$(cat "$T/ibsim.sock" 2>/dev/null)
	members=$(_ibsim_members)
	# shellcheck disable=SC2046
	_ibsim_reap $(echo "$members" | grep -vx -e "${sm:-x}" -e "${sim:-x}")
	for p in "$sm" "$sim"; do
		[ -n "$p" ] && echo "$members" | grep -qx "$p" && _ibsim_reap "$p"
	done
	rm -f "$T/opensm.pid" "$T/ibsim.pid" "$T/ibsim.sock"
	return 0
}

ibsim_stop() {
	local left p
	[ -n "$IBSIM_PID" ] || return 0
	kill -0 "$OPENSM_PID" 2>/dev/null || { _ibsim_logs; fail "OpenSM died"; }
	kill -0 "$IBSIM_PID" 2>/dev/null || { _ibsim_logs; fail "ibsim died"; }
	_ibsim_down
	left=$(_ibsim_members)
	[ -z "$left" ] || fail "ibsim_stop: processes left: $left"
	# reaped: lib.bash's cleanup must not signal these pids again
	left=()
	for p in "${PIDS[@]}"; do
		[ "$p" = "$IBSIM_PID" ] || [ "$p" = "$OPENSM_PID" ] || left+=("$p")
	done
	PIDS=("${left[@]}")
	IBSIM_PID="" OPENSM_PID="" IBSIM_SOCKNAME=""
}

ibsim_cleanup() {
	_ibsim_down
}
trap 'ibsim_cleanup; cleanup' EXIT
