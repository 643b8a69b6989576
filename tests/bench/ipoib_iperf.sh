#!/bin/bash
# IPoIB throughput beside kernel IP forwarding, measured in the same run.
#   tests/bench/ipoib_iperf.sh [--build DIR] [--seconds N] [--runs N]
#                                                      (build, 5, 3)
#
# (a) baseline: namespaces A --veth-- R --veth-- B, ip_forward=1 in R,
#     iperf3 TCP, one stream, A -> B for N seconds;
# (b) IPoIB: ibfabricd, and ipoibd in two namespaces (h1, h2) on the
#     software fabric, iperf3 TCP, one stream, h1 -> h2 for N seconds;
#     datagram mode (MTU 2044, and 4092 in a partition with mtu=5), and
#     connected mode (both ipoibd --mode connected, MTU 65520, RC).
# The measurements alternate, --runs times each; prints every rate, the
# medians, the ratios of medians to kernel (the baseline's veths stay at
# MTU 1500; the aim: connected mode at least kernel forwarding at 1500,
# printed as met or not), ipoibd's and ibfabricd's non-zero drop counters,
# the connected-mode hosts' RC counters.  A benchmark, not a test: it exits
# non-zero only when something could not run.  Needs root, iperf3,
# iproute2, python3.
set -u
cd "$(dirname "$0")/../.." || exit 1
build=build secs=5 runs=3
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$2; shift 2 ;;
	--seconds) secs=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	-h|--help) sed -n '2,18s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "ipoib_iperf.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
case "$secs" in ''|*[!0-9]*|0) echo "ipoib_iperf.sh: --seconds wants a positive integer" >&2; exit 2 ;; esac
case "$runs" in ''|*[!0-9]*|0) echo "ipoib_iperf.sh: --runs wants a positive integer" >&2; exit 2 ;; esac

die() {
	echo "ipoib_iperf.sh: $*" >&2
	exit 1
}
for t in ip iperf3 python3; do
	command -v $t >/dev/null || die "$t not installed"
done
for p in ibfabricd ipoibd ibfabricctl; do
	[ -x "$build/$p" ] || die "$build/$p missing (make)"
done
[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"

D=$(mktemp -d /tmp/ibgw-ipoib-bench.XXXXXX) || die "mktemp"
SOCK=$D/fabric.sock
NSP=ibgwb$$		# namespace prefix: ours only
NS_LIST=()
FABRIC_PID=""

cleanup() {
	local n p
	trap - EXIT INT TERM
	# TERM first so ipoibd leaves its groups, then KILL what remains
	for n in "${NS_LIST[@]}"; do
		for p in $(ip netns pids "$n" 2>/dev/null); do
			kill -TERM "$p" 2>/dev/null
		done
	done
	for p in $(seq 1 20); do
		n=""
		for n in "${NS_LIST[@]}"; do
			[ -n "$(ip netns pids "$n" 2>/dev/null)" ] && break
			n=""
		done
		[ -z "$n" ] && break
		sleep 0.1
	done
	for n in "${NS_LIST[@]}"; do
		for p in $(ip netns pids "$n" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null
		done
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
ns() {
	local n=$NSP-$1
	shift
	ip netns exec "$n" "$@"
}
# veth A IFA B IFB: a veth pair between namespaces A and B, both ends up
veth() {
	ip link add "$2" netns "$NSP-$1" type veth peer name "$4" \
		netns "$NSP-$3" || die "veth $1:$2 - $3:$4"
	ns "$1" ip link set "$2" up || die "veth up"
	ns "$3" ip link set "$4" up || die "veth up"
}

# iperf NAME SRV_NS CLI_NS DST: one TCP stream for $secs, prints bits/s
iperf() {
	local name=$1 srv=$2 cli=$3 dst=$4
	ip netns exec "$NSP-$srv" iperf3 -s -1 >"$D/$name-srv.log" 2>&1 &
	for _ in $(seq 1 100); do
		ns "$srv" ss -Hltn 'sport = :5201' 2>/dev/null | grep -q . && break
		sleep 0.05
	done
	if ! ns "$cli" timeout $((secs + 30)) iperf3 -c "$dst" -t "$secs" -J \
		>"$D/$name.json" 2>"$D/$name.err"; then
		cat "$D/$name.json" "$D/$name.err" "$D/$name-srv.log" >&2
		die "iperf3 $name failed"
	fi
	python3 -c 'import json,sys
print(int(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]))' \
		"$D/$name.json" || die "no rate in $D/$name.json"
}

gbps() {
	python3 -c 'import sys; print("%.3f" % (int(sys.argv[1]) / 1e9))' "$1"
}

# --- (a) kernel IP forwarding over veth -------------------------------------
ns_add a
ns_add r
ns_add b
veth a eth0 r ra
veth r rb b eth0
ns a ip addr add 10.78.1.1/24 dev eth0 || die "address in a"
ns r ip addr add 10.78.1.254/24 dev ra || die "address in r"
ns r ip addr add 10.78.2.254/24 dev rb || die "address in r"
ns b ip addr add 10.78.2.1/24 dev eth0 || die "address in b"
ns a ip route add default via 10.78.1.254 || die "route in a"
ns b ip route add default via 10.78.2.254 || die "route in b"
ns r sysctl -qw net.ipv4.ip_forward=1 || die "ip_forward in r"
ns a ping -c 1 -W 3 10.78.2.1 >/dev/null || die "a cannot reach b through r"
# --- (b) IPoIB on the software fabric ---------------------------------------
# the default partition (OpenSM's MTU 2048: IPoIB 2044) and one with
# mtu=5 (4096: IPoIB 4092), as HPC sites usually configure it
# and one for the connected-mode hosts (their MTU is 65520 whatever the
# partition's; its broadcast group carries only ARP and multicast)
printf 'Default=0x7fff, ipoib : ALL=full;\nbig=0x8001, ipoib, mtu=5 : ALL=full;\ncm=0x8002, ipoib : ALL=full;\n' >"$D/parts.conf"
"$build/ibfabricd" -f -s "$SOCK" -P "$D/parts.conf" >"$D/fabric.log" 2>&1 &
FABRIC_PID=$!
for _ in $(seq 1 100); do
	grep -q "ready" "$D/fabric.log" 2>/dev/null && break
	kill -0 "$FABRIC_PID" 2>/dev/null || break
	sleep 0.05
done
grep -q "ready" "$D/fabric.log" || { cat "$D/fabric.log" >&2; die "ibfabricd did not become ready"; }

# host N [PKEY NET [MODE]]: namespace hN with ipoibd as node hN, ib0 at
# NET.N/24, in datagram (default) or connected mode
declare -A IPOIBD
host() {
	local h=h$1 pkey=${2:-0xffff} net=${3:-10.77.0} mode=${4:-datagram}
	ns_add "$h"
	# ip netns exec execs: $! is ipoibd itself (not a subshell, as with ns)
	ip netns exec "$NSP-$h" "$build/ipoibd" -f -F "soft:$SOCK" -n "$h" \
		-p "$pkey" -i ib0 --mode "$mode" --address "$net.$1/24" \
		>"$D/$h.log" 2>&1 &
	IPOIBD[$h]=$!
	for _ in $(seq 1 100); do
		grep -q "ready:" "$D/$h.log" && return 0
		kill -0 "${IPOIBD[$h]}" 2>/dev/null || break
		sleep 0.05
	done
	cat "$D/$h.log" >&2
	die "ipoibd $h did not become ready"
}
host 1
host 2
ns h1 ping -c 1 -W 3 10.77.0.2 >/dev/null || { cat "$D/h1.log" "$D/h2.log" >&2; die "h1 cannot reach h2 over IPoIB"; }
host 3 0x8001 10.76.0
host 4 0x8001 10.76.0
ns h3 ping -c 1 -W 3 10.76.0.4 >/dev/null || { cat "$D/h3.log" "$D/h4.log" >&2; die "h3 cannot reach h4 over IPoIB"; }
host 5 0x8002 10.75.0 connected
host 6 0x8002 10.75.0 connected
# a full-size ping with DF: only an RC connection carries it
ns h5 ping -c 1 -W 3 -s 60000 -M do 10.75.0.6 >/dev/null ||
	{ cat "$D/h5.log" "$D/h6.log" >&2; die "h5 cannot reach h6 over IPoIB-CM (60000 bytes, DF)"; }

# --- the runs, alternating ------------------------------------------------------
median() {	# numbers on stdin -> the median
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
echo "== IPoIB vs kernel IP forwarding, iperf3 TCP, 1 stream, ${secs}s each, $runs runs (the baseline's veths at MTU $(ns a cat /sys/class/net/eth0/mtu))"
: >"$D/kern.all"; : >"$D/ipoib.all"; : >"$D/ipoib4k.all"; : >"$D/ipoibcm.all"
for r in $(seq 1 "$runs"); do
	k=$(iperf kernel b a 10.78.2.1) || exit 1
	i=$(iperf ipoib h2 h1 10.77.0.2) || exit 1
	j=$(iperf ipoib4k h4 h3 10.76.0.4) || exit 1
	c=$(iperf ipoibcm h6 h5 10.75.0.6) || exit 1
	echo "$k" >>"$D/kern.all"; echo "$i" >>"$D/ipoib.all"; echo "$j" >>"$D/ipoib4k.all"
	echo "$c" >>"$D/ipoibcm.all"
	printf '  run %d: kernel %s, IPoIB 2044 %s, IPoIB 4092 %s, IPoIB-CM 65520 %s Gb/s\n' "$r" \
		"$(gbps "$k")" "$(gbps "$i")" "$(gbps "$j")" "$(gbps "$c")"
done
kern=$(median <"$D/kern.all")
ipoib=$(median <"$D/ipoib.all")
ipoib4k=$(median <"$D/ipoib4k.all")
ipoibcm=$(median <"$D/ipoibcm.all")
echo "== medians"
printf '  kernel forwarding (veth, A -> R -> B, MTU %s): %s Gb/s\n' \
	"$(ns a cat /sys/class/net/eth0/mtu)" "$(gbps "$kern")"
printf '  IPoIB (ipoibd h1 -> ibfabricd -> ipoibd h2, MTU %s): %s Gb/s\n' \
	"$(ns h1 cat /sys/class/net/ib0/mtu)" "$(gbps "$ipoib")"
python3 -c 'import sys
k, i = int(sys.argv[1]), int(sys.argv[2])
print("  ratio IPoIB / kernel: %s  (target 0.25, project goal 0.5)"
      % ("%.3f" % (i / k) if k else "n/a"))' "$kern" "$ipoib"
printf '  IPoIB, partition with mtu=5 (MTU %s): %s Gb/s\n' \
	"$(ns h3 cat /sys/class/net/ib0/mtu)" "$(gbps "$ipoib4k")"
python3 -c 'import sys
k, i = int(sys.argv[1]), int(sys.argv[2])
print("  ratio IPoIB 4092 / kernel: %s" % ("%.3f" % (i / k) if k else "n/a"))' "$kern" "$ipoib4k"
printf '  IPoIB connected mode (ipoibd --mode connected both, RC, MTU %s): %s Gb/s\n' \
	"$(ns h5 cat /sys/class/net/ib0/mtu)" "$(gbps "$ipoibcm")"
python3 -c 'import sys
k, d, c = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
r = lambda x: "%.3f" % (x / k) if k else "n/a"
print("  ratio connected / kernel: %s, datagram (2044) / kernel: %s, connected / datagram: %s"
      % (r(c), r(d), "%.3f" % (c / d) if d else "n/a"))
print("  aim: IB to IB in connected mode at least kernel forwarding at MTU %s: %s"
      % (sys.argv[4], "met" if k and c >= k else "not met"))' \
	"$kern" "$ipoib" "$ipoibcm" "$(ns a cat /sys/class/net/eth0/mtu)"

# --- drops --------------------------------------------------------------------
echo "== drops (non-zero)"
for h in h1 h2 h3 h4 h5 h6; do
	n=$(grep -c "stats drop\." "$D/$h.log")
	kill -USR1 "${IPOIBD[$h]}" 2>/dev/null || die "ipoibd $h is gone"
	for _ in $(seq 1 100); do
		[ "$(grep -c "stats drop\." "$D/$h.log")" -gt "$n" ] && break
		sleep 0.05
	done
	# the counters from this report only: the last block of drop lines
	sed -n 's/^ipoibd: stats \(drop\.[^ ]* [0-9]*\)$/\1/p' "$D/$h.log" |
		tail -n +$((n + 1)) | awk -v h="$h" '$2 != 0 { print "  ipoibd " h ": " $0; z = 1 }
		END { if (!z) print "  ipoibd " h ": none" }'
done
"$build/ibfabricctl" -s "$SOCK" stats >"$D/fabric.stats" || die "ibfabricctl stats"
awk '($1 == "dropped" || $1 ~ /^drop\./) && $2 != 0 { print "  ibfabricd: " $0; z = 1 }
	END { if (!z) print "  ibfabricd: none" }' "$D/fabric.stats"
# the connected-mode hosts' RC counters (the last report's): the stream
# went over a connection, not datagrams
echo "== connected mode (h5 -> h6): RC counters"
for h in h5 h6; do
	printf '  ipoibd %s:' "$h"
	for c in cm_tx_packets cm_rx_packets cm_connects cm_accepts cm_failures; do
		printf ' %s %s' "$c" "$(sed -n "s/^ipoibd: stats $c \([0-9]*\)$/\1/p" "$D/$h.log" | tail -n 1)"
	done
	echo
done
