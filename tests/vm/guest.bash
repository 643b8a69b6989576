# Helpers for the scripts that run inside a guest (sourced there).
set -u
G_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# A failure; when the peer of wait_peer no longer answers a ping, the
# guest link itself has stopped (QEMU 7.2's virtio-net under TCG now and
# then stops taking a guest's transmit ring: docs/guest-tier.md), which
# the line LINK-STALLED tells tests/run (it runs such a test once more)
gfail() {
	echo "FAIL($VM_NAME): $*"
	if [ -n "${G_PEER:-}" ] && ! ping -c 3 -W 2 "$G_PEER" >/dev/null 2>&1; then
		echo "LINK-STALLED($VM_NAME): no ping crosses the guest link to $G_PEER"
	fi
	exit 1
}

gok() {
	echo "ok($VM_NAME): $*"
}

# wait_peer ADDR: until the peer answers a ping (both guests boot at once)
wait_peer() {
	local i
	G_PEER=$1
	for i in $(seq 1 60); do
		ping -c1 -W1 "$1" >/dev/null 2>&1 && return 0
	done
	gfail "peer $1 never answered a ping"
}

# retry N CMD...: run CMD until it exits 0, at most N times, 0.5 s apart
# (a client started before its server is listening)
retry() {
	local n=$1 i
	shift
	for i in $(seq 1 "$n"); do
		"$@" && return 0
		sleep 0.5
	done
	return 1
}

# gid_index DEV TYPE FAMILY: the GID table index of DEV port 1 whose type is
# TYPE ("RoCE v2", "RoCE v1", "IB") and whose address is IPv4-mapped (4) or
# not (6), read from sysfs
gid_index() {
	local d=/sys/class/infiniband/$1/ports/1 f i t g
	for f in "$d"/gid_attrs/types/*; do
		i=${f##*/}
		t=$(cat "$f" 2>/dev/null) || continue
		[ "$t" = "$2" ] || continue
		g=$(cat "$d/gids/$i")
		case "$3:$g" in
		4:0000:0000:0000:0000:0000:ffff:*) echo "$i"; return 0 ;;
		6:0000:0000:0000:0000:0000:ffff:*) ;;
		6:0000:0000:0000:0000:0000:0000:0000:0000) ;;
		6:*) echo "$i"; return 0 ;;
		esac
	done
	return 1
}

# rxe_counter DEV NAME: DEV port 1's hw counter NAME (sent_pkts,
# rcvd_pkts...), 0 when it has none
rxe_counter() {
	cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null || echo 0
}

# wait_active DEV: until DEV's port 1 is ACTIVE (10 s at most)
wait_active() {
	local i
	for i in $(seq 1 50); do
		grep -q ACTIVE /sys/class/infiniband/$1/ports/1/state 2>/dev/null &&
			return 0
		sleep 0.2
	done
	gfail "$1 port 1 never became ACTIVE"
}

# wait_file FILE [PID]: until FILE exists and is not empty (30 s at most,
# less if the program PID that writes it dies); else its FILE.err's last
# lines (FILE without .ready) and the kernel's word on a crash
wait_file() {
	local i
	for i in $(seq 1 300); do
		[ -s "$1" ] && return 0
		[ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null && break
		sleep 0.1
	done
	tail -n 20 "${1%.ready}.err" 2>/dev/null | sed 's/^/  err| /'
	dmesg | grep -E 'segfault|general protection|trap' | tail -n 5 |
		sed 's/^/  dmesg| /'
	gfail "no $1"
}

# serve PORT FILE: let the peer fetch FILE once, over TCP (background)
serve() {
	socat -u "OPEN:$2" "TCP-LISTEN:$1,reuseaddr" >/dev/null 2>&1 &
}

# tell PORT WORD: let the peer fetch WORD once (background)
tell() {
	local f
	f=$(mktemp)
	echo "$2" >"$f"
	serve "$1" "$f"
}

# fetch PEER PORT [TRIES]: what the peer serves on PORT (retried, 0.5 s
# apart, TRIES times ($FETCH_TRIES, else 120, unless told) while it is not
# listening yet)
fetch() {
	local i out
	for i in $(seq 1 "${3:-${FETCH_TRIES:-120}}"); do
		out=$(socat -u "TCP:$1:$2" STDOUT 2>/dev/null) && [ -n "$out" ] &&
			{ echo "$out"; return 0; }
		sleep 0.5
	done
	gfail "nothing from $1:$2"
}

# sdp_only BIN LOG [IPOIBD-ARGS...]: BIN/ipoibd --sdp-only -f with ARGS
# (--fabric verbs:rxe0 when none) in the background, its log in LOG, its
# PID in IPID; returns once it says it is ready, or has exited, or after
# 20 s (the caller checks LOG for the services it wants)
sdp_only() {
	local bin=$1 log=$2 i
	shift 2
	[ $# -gt 0 ] || set -- --fabric verbs:rxe0
	"$bin/ipoibd" --sdp-only -f "$@" >"$log" 2>&1 &
	IPID=$!
	for i in $(seq 1 100); do
		grep -q 'ready: SDP only' "$log" && return 0
		kill -0 $IPID 2>/dev/null || return 0
		sleep 0.2
	done
}

# rds_service_up LOG: gfail unless ipoibd's log in LOG says its RDS service
# runs over rdma_cm (then say where)
rds_service_up() {
	grep -q 'RDS service on .*over rdma_cm on RoCE' "$1" ||
		{ sed 's/^/  ipoibd| /' "$1"; gfail "ipoibd: no RDS service"; }
	gok "ipoibd: $(grep -o 'RDS service on .*' "$1" | head -n1)"
}

# cap_stop PID FILE ERR: stop tcpdump PID, writing FILE, once FILE has not
# grown for 2 s (what tcpdump has not read when stopped is lost:
# "received by filter" above "captured"), 2 minutes at most; then say
# what it captured (its stderr is in ERR)
cap_stop() {
	local last=-1 sz i
	for i in $(seq 1 60); do
		sz=$(stat -c %s "$2" 2>/dev/null || echo 0)
		[ "$sz" = "$last" ] && break
		last=$sz
		sleep 2
	done
	kill -INT "$1"
	wait "$1"
	cat "$3"
	gok "capture: $(grep -o '[0-9]* packets captured' "$3")"
}
