#!/bin/bash
# SDP beside TCP over IPoIB on the same topology, measured in the same run
# (issue 14, item 7).
#   tests/bench/sdp_bench.sh [--build DIR] [--seconds N] [--runs N]
#                                                      (build, 3, 3)
#
# One software subnet: ibfabricd; IB hosts h1, h2 (ipoibd, each with its
# SDP service); a gateway g (ibgwd, router mode, sdp = on) with a LAN host
# l behind it on a veth:
#
#   h1 10.90.0.1 ---+--- h2 10.90.0.2
#                   +--- g 10.90.0.254 (router, sdp = on)
#                          10.91.0.254 --veth-- l 10.91.0.1
#
# Alternating, --runs times (the order of each pair swapped every other
# run), each measurement for --seconds:
#   iperf3 h1 -> h2: SDP (client and server under libibgw_preload.so) vs
#     TCP over IPoIB (no preload);
#   tcp_rr h1 -> h2 (64-byte messages, one at a time): the same two ways;
#   tcp_rr -C h1 -> h2 (a connection per 64-byte message: connect, the
#     message and its echo, close): the same two ways;
#   iperf3 h1 -> l: SDP to the gateway, TCP from it to l (the client under
#     the preload, l's server plain) vs TCP over IPoIB routed by the gateway;
#   tcp_rr h1 -> l: the same two ways.
# Prints every figure, a table per measurement (runs, median, ratio
# SDP/TCP), the aims (SDP throughput at least twice TCP over IPoIB, SDP
# round-trip latency at most half) as met or not, and the byte counters
# showing SDP carried the SDP runs (and not the TCP ones): ipoibd's
# sdp.tx_bytes/sdp.rx_bytes and IPoIB tx_bytes, the gateway's SDP
# rx_bytes.  A benchmark, not a test: it exits non-zero only when a
# measurement could not be made.  Needs root, iperf3, iproute2, python3.
set -u
cd "$(dirname "$0")/../.." || exit 1
build=build secs=3 runs=3
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$2; shift 2 ;;
	--seconds) secs=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	-h|--help) sed -n '2,31s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "sdp_bench.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
die() { echo "sdp_bench.sh: $*" >&2; exit 1; }
case "$secs" in ''|*[!0-9]*|0) die "--seconds wants a positive integer" ;; esac
case "$runs" in ''|*[!0-9]*|0) die "--runs wants a positive integer" ;; esac
for t in ip iperf3 python3 ss; do command -v $t >/dev/null || die "$t not installed"; done
for p in ibfabricd ipoibd ibgwd ibgwctl tests/tcp_rr libibgw_preload.so; do
	[ -e "$build/$p" ] || die "$build/$p missing (make)"
done
[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
build=$(cd "$build" && pwd)
PRE=$build/libibgw_preload.so
RR=$build/tests/tcp_rr

D=$(mktemp -d /tmp/ibgw-sdp-bench.XXXXXX) || die "mktemp"
SOCK=$D/fabric.sock
NSP=ibgws$$		# namespace prefix: ours only
NS_LIST=()
FABRIC_PID=""
cleanup() {
	local n p
	trap - EXIT INT TERM
	for n in "${NS_LIST[@]}"; do
		for p in $(ip netns pids "$n" 2>/dev/null); do kill -TERM "$p" 2>/dev/null; done
	done
	for _ in $(seq 1 20); do
		n=""
		for n in "${NS_LIST[@]}"; do
			[ -n "$(ip netns pids "$n" 2>/dev/null)" ] && break
			n=""
		done
		[ -z "$n" ] && break
		sleep 0.1
	done
	for n in "${NS_LIST[@]}"; do
		for p in $(ip netns pids "$n" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		ip netns delete "$n" 2>/dev/null
	done
	if [ -n "$FABRIC_PID" ]; then
		kill -TERM "$FABRIC_PID" 2>/dev/null
		wait "$FABRIC_PID" 2>/dev/null
	fi
	rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ns_add() {
	ip netns add "$NSP-$1" || die "ip netns add $NSP-$1"
	NS_LIST+=("$NSP-$1")
	ns "$1" ip link set lo up || die "lo up in $NSP-$1"
}
ns() { local n=$NSP-$1; shift; ip netns exec "$n" "$@"; }
# pre NS CMD...: under the preload, no libsdp.conf (every TCP socket 'both')
pre() { local n=$NSP-$1; shift; ip netns exec "$n" env LD_PRELOAD="$PRE" LIBSDP_CONFIG_FILE="$D/none.conf" "$@"; }
wait_log() {	# FILE PATTERN
	for _ in $(seq 1 100); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	cat "$1" >&2; die "no '$2' in $1"
}
wait_port() {	# NS PORT
	for _ in $(seq 1 100); do
		ns "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q . && return 0
		sleep 0.05
	done
	die "nothing listens on $1:$2"
}

# --- the subnet ------------------------------------------------------------------
printf 'Default=0x7fff, ipoib : ALL=full;\np1=0x8001, ipoib : ALL=full;\n' >"$D/parts.conf"
"$build/ibfabricd" -f -s "$SOCK" -P "$D/parts.conf" >"$D/fabric.log" 2>&1 &
FABRIC_PID=$!
wait_log "$D/fabric.log" ready
declare -A IPOIBD
for x in "h1 10.90.0.1" "h2 10.90.0.2"; do
	set -- $x
	ns_add "$1"
	# ip netns exec execs: $! is ipoibd itself
	ip netns exec "$NSP-$1" "$build/ipoibd" -f -F "soft:$SOCK" -n "$1" -p 0x8001 \
		-i ib0 --address "$2/24" >"$D/$1.log" 2>&1 &
	IPOIBD[$1]=$!
done
ns_add g; ns_add l
ip link add v0 netns "$NSP-g" type veth peer name eth0 netns "$NSP-l" || die "veth"
ns g ip link set v0 up; ns l ip link set eth0 up
ns g ip addr add 10.91.0.254/24 dev v0
ns l ip addr add 10.91.0.1/24 dev eth0
ns l ip route add default via 10.91.0.254
ns g sysctl -qw net.ipv4.ip_forward=1
cat >"$D/gw.conf" <<CONF
[gateway]
fabric = soft:$SOCK
node = g
control = $D/ctl.sock
[partition r]
pkey = 0x8001
mode = router
ifname = ib8001
address = 10.90.0.254/24
sdp = on
CONF
ip netns exec "$NSP-g" "$build/ibgwd" -f -c "$D/gw.conf" >"$D/gw.log" 2>&1 &
wait_log "$D/gw.log" "ready:"
grep -q "partition r: SDP on" "$D/gw.log" || { cat "$D/gw.log" >&2; die "no SDP on the gateway's partition"; }
for h in h1 h2; do
	wait_log "$D/$h.log" "ready:"
	grep -q "SDP service on" "$D/$h.log" || { cat "$D/$h.log" >&2; die "$h has no SDP service"; }
done
ns h1 ip route add 10.91.0.0/24 via 10.90.0.254 || die "route on h1"
ns h1 ping -c 2 -W 3 10.90.0.2 >/dev/null || die "h1 cannot reach h2 over IPoIB"
ns h1 ping -c 2 -W 3 10.91.0.1 >/dev/null || die "h1 cannot reach l through the gateway"

# --- counters ----------------------------------------------------------------------
# hstat HOST NAME: the value in a fresh SIGUSR1 report of ipoibd on HOST
hstat() {
	local n
	n=$(grep -c "stats $2 " "$D/$1.log")
	kill -USR1 "${IPOIBD[$1]}" 2>/dev/null || die "ipoibd $1 is gone"
	for _ in $(seq 1 100); do
		[ "$(grep -c "stats $2 " "$D/$1.log")" -gt "$n" ] && break
		sleep 0.02
	done
	sed -n "s/.*stats $2 \\([0-9]*\\)\$/\\1/p" "$D/$1.log" | tail -n 1
}
# gstat NAME: the gateway's SDP counter NAME (partition r)
gstat() {
	"$build/ibgwctl" -s "$D/ctl.sock" -j show stats | python3 -c '
import json, sys
p = {x["name"]: x for x in json.load(sys.stdin)["partitions"]}["r"]
print(p.get("sdp", {}).get(sys.argv[1], 0))' "$1"
}
# snap: the counters the evidence is made of, on one line
snap() {
	echo "$(hstat h1 sdp.tx_bytes) $(hstat h2 sdp.rx_bytes) $(hstat h1 tx_bytes) $(gstat rx_bytes)" \
		"$("$build/ibfabricctl" -s "$SOCK" stats | sed -n 's/^delivered \([0-9]*\)$/\1/p')"
}

# --- the measurements ------------------------------------------------------------------
# a port of its own for every server (the measurements run in subshells)
echo 6000 >"$D/port"
next_port() { local p; p=$(($(cat "$D/port") + 1)); echo "$p" >"$D/port"; echo "$p"; }
# iperf NAME SRV_NS CLI_NS DST MODE(sdp|tcp) [SRV_MODE]: bits/s on stdout
iperf() {
	local name=$1 srv=$2 cli=$3 dst=$4 m=$5 sm=${6:-$5} p
	local run=ns srun=ns
	[ "$m" = sdp ] && run=pre
	[ "$sm" = sdp ] && srun=pre
	p=$(next_port)
	$srun "$srv" iperf3 -s -1 -p "$p" >"$D/$name-srv.log" 2>&1 &
	wait_port "$srv" "$p"
	sleep 0.2	# a 'both' listener: its SDP side right after the TCP one
	if ! $run "$cli" timeout $((secs + 30)) iperf3 -c "$dst" -p "$p" -t "$secs" -J \
		>"$D/$name.json" 2>"$D/$name.err"; then
		cat "$D/$name.json" "$D/$name.err" "$D/$name-srv.log" >&2
		die "iperf3 $name failed"
	fi
	wait
	python3 -c 'import json,sys
e = json.load(open(sys.argv[1]))["end"]["sum_received"]
print(int(e["bits_per_second"]), int(e["bytes"]))' "$D/$name.json" ||
		{ cat "$D/$name.json" "$D/$name-srv.log" >&2; die "no rate in $D/$name.json"; }
}
# rr NAME SRV_NS CLI_NS DST MODE [SRV_MODE]: "median_us p90 p99 tps bytes"
# (CRR=1: a connection per message, tcp_rr -C)
rr() {
	local name=$1 srv=$2 cli=$3 dst=$4 m=$5 sm=${6:-$5} p out sp
	local run=ns srun=ns once=-1 crr=""
	[ "$m" = sdp ] && run=pre
	[ "$sm" = sdp ] && srun=pre
	[ -n "${CRR:-}" ] && once="" crr=-C
	p=$(next_port)
	$srun "$srv" "$RR" -s $once -p "$p" >"$D/$name-srv.log" 2>&1 &
	sp=$!
	wait_port "$srv" "$p"
	sleep 0.2
	out=$($run "$cli" timeout $((secs + 30)) "$RR" -c "$dst" -p "$p" -n 10000000 \
		-S 64 -t "$secs" $crr 2>"$D/$name.err") ||
		{ cat "$D/$name.err" "$D/$name-srv.log" >&2; die "tcp_rr $name failed"; }
	[ -n "$crr" ] && kill "$sp" 2>/dev/null
	wait
	echo "$out" >"$D/$name.rr"
	set -- $out
	# tcp_rr: n N size S median_us M p90_us P p99_us Q min_us A mean_us B tps T
	echo "$7 $9 ${11} ${17} $(( $3 * $5 ))"
}
# measure KIND NAME SRV CLI DST MODE SRVMODE: one measurement, its figure
# appended to $D/NAME.all, and the counters' change to $D/NAME.ev
measure() {
	local kind=$1 name=$2 before after v
	shift 2
	before=$(snap)
	if [ "$kind" = iperf ]; then
		v=$(iperf "$name" "$@") || exit 1
	elif [ "$kind" = crr ]; then
		v=$(CRR=1 rr "$name" "$@") || exit 1
	else
		v=$(rr "$name" "$@") || exit 1
	fi
	after=$(snap)
	echo "$v" >>"$D/$name.all"
	set -- $v
	# the bytes the program moved, then the counters' deltas
	python3 -c 'import sys
b, a = sys.argv[2].split(), sys.argv[3].split()
print(sys.argv[1], *(int(y) - int(x) for x, y in zip(b, a)))' "${!#}" "$before" "$after" >>"$D/$name.ev"
	echo "$v"
}
gbps() { python3 -c 'import sys; print("%.3f" % (int(sys.argv[1]) / 1e9))' "$1"; }

echo "== SDP vs TCP over IPoIB on the software subnet, ${secs}s per measurement, $runs runs, alternating"
echo "   (iperf3 1 stream; tcp_rr 64-byte messages one at a time, TCP_NODELAY)"
for r in $(seq 1 "$runs"); do
	order="sdp tcp"
	[ $((r % 2)) = 0 ] && order="tcp sdp"
	line=""
	for m in $order; do
		v=$(measure iperf "ib_iperf_$m" h2 h1 10.90.0.2 "$m") || exit 1
		line="$line IB-IB iperf3 $m $(gbps "${v%% *}") Gb/s;"
	done
	for m in $order; do
		v=$(measure rr "ib_rr_$m" h2 h1 10.90.0.2 "$m") || exit 1
		line="$line IB-IB tcp_rr $m ${v%% *} us;"
	done
	for m in $order; do
		v=$(measure crr "ib_crr_$m" h2 h1 10.90.0.2 "$m") || exit 1
		line="$line IB-IB tcp_rr -C $m ${v%% *} us;"
	done
	for m in $order; do
		v=$(measure iperf "gw_iperf_$m" l h1 10.91.0.1 "$m" tcp) || exit 1
		line="$line gateway iperf3 $m $(gbps "${v%% *}") Gb/s;"
	done
	for m in $order; do
		v=$(measure rr "gw_rr_$m" l h1 10.91.0.1 "$m" tcp) || exit 1
		line="$line gateway tcp_rr $m ${v%% *} us;"
	done
	echo "  run $r:$line" | sed 's/;$//; s/; /\n         /g'
done

# --- the tables --------------------------------------------------------------------------
python3 - "$D" <<'PY'
import os, statistics, sys
d = sys.argv[1]
def col(name, i):
    return [float(l.split()[i]) for l in open(os.path.join(d, name + ".all")) if l.strip()]
med = statistics.median
aims = []
def table(title, unit, conv, s, t, i, better_low, extra=None):
    vs, vt = [conv(x) for x in col(s, i)], [conv(x) for x in col(t, i)]
    ms, mt = med(vs), med(vt)
    ratio = ms / mt if mt else float("nan")
    print("== %s" % title)
    print("  %-26s %-32s %-10s %s" % ("", "runs (%s)" % unit, "median", "SDP/TCP"))
    print("  %-26s %-32s %-10s %.3f" % ("SDP", " ".join("%g" % round(x, 3) for x in vs), "%g" % round(ms, 3), ratio))
    print("  %-26s %-32s %-10s" % ("TCP over IPoIB", " ".join("%g" % round(x, 3) for x in vt), "%g" % round(mt, 3)))
    if extra:
        for lab, j, cv, u in extra:
            a, b = med([cv(x) for x in col(s, j)]), med([cv(x) for x in col(t, j)])
            print("  %-26s SDP %-8g TCP %-8g %s, SDP/TCP %.3f" % (lab + " (median)", round(a, 1), round(b, 1), u, a / b if b else float("nan")))
    return ratio
ident = lambda x: x
g = lambda x: x / 1e9
r1 = table("IB <-> IB throughput, iperf3 h1 -> h2", "Gb/s", g, "ib_iperf_sdp", "ib_iperf_tcp", 0, False)
r2 = table("IB <-> IB round trip, tcp_rr h1 -> h2, 64 bytes", "us, median RTT", ident, "ib_rr_sdp", "ib_rr_tcp", 0, True,
           [("p90 RTT", 1, ident, "us"), ("p99 RTT", 2, ident, "us"), ("transactions/s", 3, ident, "/s")])
table("IB <-> IB connections, tcp_rr -C h1 -> h2: connect, 64 bytes and back, close", "us, median", ident, "ib_crr_sdp", "ib_crr_tcp", 0, True,
      [("p90", 1, ident, "us"), ("p99", 2, ident, "us"), ("connections/s", 3, ident, "/s")])
r3 = table("IB -> LAN through the gateway, iperf3 h1 -> l (SDP to ibgwd, TCP on)", "Gb/s", g, "gw_iperf_sdp", "gw_iperf_tcp", 0, False)
r4 = table("IB -> LAN round trip through the gateway, tcp_rr h1 -> l, 64 bytes", "us, median RTT", ident, "gw_rr_sdp", "gw_rr_tcp", 0, True,
           [("p90 RTT", 1, ident, "us"), ("p99 RTT", 2, ident, "us"), ("transactions/s", 3, ident, "/s")])
def aim(kind, ok, r, where):
    print("aim: %s: %s (ratio %.3f), %s" % (kind, "met" if ok else "not met", r, where))
print("== the aims (issue 14: throughput at least twice TCP over IPoIB, latency at most half)")
aim("SDP throughput >= 2x TCP over IPoIB", r1 >= 2, r1, "IB <-> IB")
aim("SDP latency <= 0.5x", r2 <= 0.5, r2, "IB <-> IB")
aim("SDP throughput >= 2x TCP over IPoIB", r3 >= 2, r3, "IB -> LAN through the gateway")
aim("SDP latency <= 0.5x", r4 <= 0.5, r4, "IB -> LAN through the gateway")
print("== what carried the runs (sums over the runs, bytes: the programs', then the counters' change)")
print("  %-14s %-12s %-12s %-12s %-12s %-14s %s" % ("measurement", "program", "h1 sdp.tx", "h2 sdp.rx", "h1 IPoIB tx", "gateway sdp rx", "fabric packets"))
for n in ("ib_iperf_sdp", "ib_iperf_tcp", "ib_rr_sdp", "ib_rr_tcp", "ib_crr_sdp", "ib_crr_tcp", "gw_iperf_sdp", "gw_iperf_tcp", "gw_rr_sdp", "gw_rr_tcp"):
    rows = [[int(x) for x in l.split()] for l in open(os.path.join(d, n + ".ev")) if l.strip()]
    s = [sum(c) for c in zip(*rows)]
    per = ""
    if "_rr_" in n:	# packets through the switch per round trip
        per = " (%.1f per round trip)" % (s[5] / (s[0] / 64)) if s[0] else ""
    print("  %-14s %-12d %-12d %-12d %-12d %-14d %d%s" % (n, *s, per))
PY
[ $? = 0 ] || die "the tables"
echo "  (iperf3: the bytes received; tcp_rr: messages x 64, each way. The SDP runs' bytes"
echo "   appear in the SDP counters and not on the IPoIB link, the TCP runs' the other way)"
echo "== the SDP services' message counters (whole run: Data messages, credit-only updates among them)"
for h in h1 h2; do
	printf '  ipoibd %s:' "$h"
	for c in sdp.tx_msgs sdp.credit_updates_tx sdp.rx_msgs sdp.credit_updates_rx; do
		printf ' %s %s' "$c" "$(hstat "$h" "$c")"
	done
	echo
done
echo "== SDP connections h1 made (whole run; a failed one goes TCP under 'both')"
echo "  ipoibd h1: sdp_service.connects $(hstat h1 sdp_service.connects) connect_failures $(hstat h1 sdp_service.connect_failures)"
echo "== ibfabricd: what it delivered, what it dropped (non-zero)"
"$build/ibfabricctl" -s "$SOCK" stats | grep -E '^(delivered|dropped|drop\.)' | awk '$2 != 0' | sed 's/^/  /'
exit 0
