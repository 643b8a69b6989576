#!/bin/bash
# The gateway: throughput through ibgwd beside kernel IP forwarding, and
# the translation path alone.
#   tests/bench/gateway_bench.sh [--build DIR] [--seconds N] [--runs N]
#                                                          (build, 5, 5)
#
# (a) bench_gw: packets per second of gw_bridge alone on synthetic frames
#     (no system calls), beside copying the same bytes once; instructions
#     per packet counted by callgrind (two runs, the difference per packet).
# (b) iperf3 TCP, one stream, IB host -> LAN host: through ibgwd in router
#     mode and in transparent mode (IPoIB 2044, LAN MTU 1500), and kernel
#     forwarding between two namespaces through a router namespace over
#     veth (MTU 1500), alternating, --runs times each; then the same for a
#     jumbo setup (router mode, IPoIB 4092, LAN MTU 9000, against kernel
#     forwarding at MTU 9000); and in connected mode (ipoibd --mode
#     connected, ipoib_mode = connected, IPoIB 65520): router and
#     transparent to the LAN at 1500, router to the LAN at 9000, in the same
#     runs; prints every rate, the medians, a table with the ratios, and
#     whether the aim (connected mode to the 9000 LAN at 0.8 of kernel
#     forwarding at 9000) is met.  The LAN host's MSS, not the IPoIB MTU,
#     sizes the TCP segments towards it (1460 at 1500, 8960 at 9000).
# A benchmark, not a test: it exits non-zero only when something could not
# run.  Needs root, iperf3, iproute2, python3; valgrind for (a)'s counts.
set -u
cd "$(dirname "$0")/../.." || exit 1
build=build secs=5 runs=5
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$2; shift 2 ;;
	--seconds) secs=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	-h|--help) sed -n '2,22s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "gateway_bench.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
die() { echo "gateway_bench.sh: $*" >&2; exit 1; }
case "$secs$runs" in *[!0-9]*) die "--seconds and --runs want positive integers" ;; esac
for p in ibfabricd ibfabricctl ipoibd ibgwd tests/bench_gw; do
	[ -x "$build/$p" ] || die "$build/$p missing (make)"
done

# --- (a) the translation path alone -----------------------------------------------
echo "== ibgwd's translation path alone (gw_bridge, synthetic frames, no system calls)"
"$build/tests/bench_gw" --seconds 1 || die "bench_gw"
if command -v valgrind >/dev/null; then
	echo "   instructions per packet (callgrind, 20000 - 10000 packets):"
	for m in eth-tcp ib-tcp eth-udp ib-udp; do
		c=()
		for n in 10000 20000; do
			c+=("$(valgrind --tool=callgrind --callgrind-out-file=/dev/null \
				"$build/tests/bench_gw" --count $n $m 2>&1 |
				sed -n 's/.*Collected : \([0-9]*\).*/\1/p')")
		done
		printf '   %-8s %s\n' "$m" "$(( (c[1] - c[0]) / 10000 ))"
	done
else
	echo "   (valgrind not installed: no instruction counts)"
fi

# --- (b) through the gateway ---------------------------------------------------------
for t in ip iperf3 python3; do command -v $t >/dev/null || die "$t not installed"; done
[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
D=$(mktemp -d /tmp/ibgw-gw-bench.XXXXXX) || die "mktemp"
NSP=ibgwg$$
NS_LIST=()
FABRIC_PID=""
cleanup() {
	local n p
	trap - EXIT INT TERM
	for n in "${NS_LIST[@]}"; do
		for p in $(ip netns pids "$n" 2>/dev/null); do kill -TERM "$p" 2>/dev/null; done
	done
	sleep 1
	for n in "${NS_LIST[@]}"; do
		for p in $(ip netns pids "$n" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		ip netns delete "$n" 2>/dev/null
	done
	[ -n "$FABRIC_PID" ] && kill -TERM "$FABRIC_PID" 2>/dev/null && wait "$FABRIC_PID" 2>/dev/null
	rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ns_add() {
	ip netns add "$NSP-$1" || die "ip netns add $NSP-$1"
	NS_LIST+=("$NSP-$1")
	ns "$1" ip link set lo up
}
ns() { local n=$NSP-$1; shift; ip netns exec "$n" "$@"; }
veth() {	# A IFA B IFB
	ip link add "$2" netns "$NSP-$1" type veth peer name "$4" netns "$NSP-$3" || die "veth"
	ns "$1" ip link set "$2" up; ns "$3" ip link set "$4" up
}
wait_log() {	# FILE PATTERN
	for _ in $(seq 1 100); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	cat "$1" >&2; die "no '$2' in $1"
}
iperf() {	# NAME SRV_NS CLI_NS DST -> bits/s
	ip netns exec "$NSP-$2" iperf3 -s -1 >"$D/$1-srv.log" 2>&1 &
	for _ in $(seq 1 100); do
		ns "$2" ss -Hltn 'sport = :5201' 2>/dev/null | grep -q . && break; sleep 0.05
	done
	ns "$3" timeout $((secs + 30)) iperf3 -c "$4" -t "$secs" -J >"$D/$1.json" 2>"$D/$1.err" ||
		{ cat "$D/$1.json" "$D/$1.err" >&2; die "iperf3 $1 failed"; }
	python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]))' "$D/$1.json"
}
gbps() { python3 -c 'import sys; print("%.3f" % (int(sys.argv[1]) / 1e9))' "$1"; }
median() { sort -n | awk '{ v[NR] = $1 } END { printf "%.0f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# kernel forwarding: a -- r -- b
ns_add a; ns_add r; ns_add b
veth a eth0 r ra; veth r rb b eth0
ns a ip addr add 10.88.1.1/24 dev eth0; ns r ip addr add 10.88.1.254/24 dev ra
ns r ip addr add 10.88.2.254/24 dev rb; ns b ip addr add 10.88.2.1/24 dev eth0
ns a ip route add default via 10.88.1.254; ns b ip route add default via 10.88.2.254
ns r sysctl -qw net.ipv4.ip_forward=1
ns a ping -c 1 -W 3 10.88.2.1 >/dev/null || die "kernel path"
# the same at MTU 9000: ja -- jr -- jb
ns_add ja; ns_add jr; ns_add jb
veth ja eth0 jr ra; veth jr rb jb eth0
for x in "ja eth0" "jr ra" "jr rb" "jb eth0"; do ns ${x% *} ip link set ${x#* } mtu 9000; done
ns ja ip addr add 10.87.1.1/24 dev eth0; ns jr ip addr add 10.87.1.254/24 dev ra
ns jr ip addr add 10.87.2.254/24 dev rb; ns jb ip addr add 10.87.2.1/24 dev eth0
ns ja ip route add default via 10.87.1.254; ns jb ip route add default via 10.87.2.254
ns jr sysctl -qw net.ipv4.ip_forward=1
ns ja ping -c 1 -W 3 10.87.2.1 >/dev/null || die "kernel jumbo path"

# the fabric, IB hosts i1 (transparent partition) and i2 (router partition),
# the gateway g, LAN host l on a bridged veth and on a routed one
# p4 to p6 for the connected-mode partitions (IPoIB 65520 whatever the
# partition's MTU: that is the broadcast group's, for ARP and multicast)
printf 'Default=0x7fff, ipoib : ALL=full;\np1=0x8001, ipoib : ALL=full;\np2=0x8002, ipoib : ALL=full;\np3=0x8003, ipoib, mtu=5 : ALL=full;\np4=0x8004, ipoib : ALL=full;\np5=0x8005, ipoib : ALL=full;\np6=0x8006, ipoib : ALL=full;\n' >"$D/parts.conf"
"$build/ibfabricd" -f -s "$D/sock" -P "$D/parts.conf" >"$D/fabric.log" 2>&1 &
FABRIC_PID=$!
wait_log "$D/fabric.log" ready
ns_add i1; ns_add i2; ns_add i3; ns_add i4; ns_add i5; ns_add i6; ns_add g; ns_add l
ns g ip link add br0 type bridge; ns g ip link set br0 up
veth l eth0 g v0; ns g ip link set v0 master br0
veth l eth1 g v1
ns l ip addr add 10.89.1.50/24 dev eth0
ns g ip addr add 10.89.3.254/24 dev v1
ns l ip addr add 10.89.3.1/24 dev eth1
ns l ip route add 10.89.2.0/24 via 10.89.3.254
veth l eth2 g v2
ns l ip link set eth2 mtu 9000; ns g ip link set v2 mtu 9000
ns g ip addr add 10.89.4.254/24 dev v2
ns l ip addr add 10.89.4.1/24 dev eth2
ns l ip route add 10.89.5.0/24 via 10.89.4.254
# connected mode: routed at 1500 (i4, via eth1) and at 9000 (i5, via eth2),
# and bridged at 1500 (i6 -- gwtap2 in br1 -- v3 -- l eth3)
ns l ip route add 10.89.6.0/24 via 10.89.3.254
ns l ip route add 10.89.7.0/24 via 10.89.4.254
ns g ip link add br1 type bridge; ns g ip link set br1 up
veth l eth3 g v3; ns g ip link set v3 master br1
ns l ip addr add 10.89.8.50/24 dev eth3
cat >"$D/gw.conf" <<CONF
[gateway]
fabric = soft:$D/sock
node = g
control = $D/ctl.sock
[partition t]
pkey = 0x8001
tap = gwtap
bridge = br0
[partition r]
pkey = 0x8002
mode = router
address = 10.89.2.254/24
[partition j]
pkey = 0x8003
mode = router
address = 10.89.5.254/24
eth_mtu = 9000
[partition rc]
pkey = 0x8004
mode = router
address = 10.89.6.254/24
ipoib_mode = connected
[partition jc]
pkey = 0x8005
mode = router
address = 10.89.7.254/24
eth_mtu = 9000
ipoib_mode = connected
[partition tc]
pkey = 0x8006
tap = gwtap2
bridge = br1
ipoib_mode = connected
CONF
ip netns exec "$NSP-g" "$build/ibgwd" -f -c "$D/gw.conf" >"$D/gw.log" 2>&1 &
ip netns exec "$NSP-i1" "$build/ipoibd" -f -F "soft:$D/sock" -n i1 -p 0x8001 -i ib0 -a 10.89.1.1/24 >"$D/i1.log" 2>&1 &
ip netns exec "$NSP-i2" "$build/ipoibd" -f -F "soft:$D/sock" -n i2 -p 0x8002 -i ib0 -a 10.89.2.1/24 >"$D/i2.log" 2>&1 &
ip netns exec "$NSP-i3" "$build/ipoibd" -f -F "soft:$D/sock" -n i3 -p 0x8003 -i ib0 -a 10.89.5.1/24 >"$D/i3.log" 2>&1 &
for x in "i4 0x8004 10.89.6.1" "i5 0x8005 10.89.7.1" "i6 0x8006 10.89.8.1"; do
	set -- $x
	ip netns exec "$NSP-$1" "$build/ipoibd" -f -F "soft:$D/sock" -n "$1" -p "$2" -i ib0 \
		--mode connected -a "$3/24" >"$D/$1.log" 2>&1 &
done
wait_log "$D/gw.log" "ready:"
for h in i1 i2 i3 i4 i5 i6; do wait_log "$D/$h.log" "ready:"; done
ns i2 ip route add default via 10.89.2.254
ns i3 ip route add default via 10.89.5.254
ns i3 ping -c 2 -W 2 10.89.4.1 >/dev/null || die "i3 -> l through the jumbo router"
ns i1 ping -c 3 -W 2 10.89.1.50 >/dev/null || die "i1 -> l through the transparent gateway"
ns i2 ping -c 2 -W 2 10.89.3.1 >/dev/null || die "i2 -> l through the router"
ns i4 ip route add default via 10.89.6.254
ns i5 ip route add default via 10.89.7.254
ns i4 ping -c 2 -W 2 10.89.3.1 >/dev/null || die "i4 -> l through the connected-mode router"
ns i5 ping -c 2 -W 2 10.89.4.1 >/dev/null || die "i5 -> l through the connected-mode jumbo router"
ns i5 ping -c 2 -W 2 -s 8000 -M do 10.89.4.1 >"$D/p5" 2>&1 || { cat "$D/p5" >&2; die "i5 -> l through the connected-mode jumbo router (8000 bytes, DF)"; }
ns i6 ping -c 3 -W 2 10.89.8.50 >/dev/null || die "i6 -> l through the connected-mode transparent gateway"

echo "== IB host -> LAN host through ibgwd vs kernel IP forwarding, iperf3 TCP, 1 stream, ${secs}s each, $runs runs"
: >"$D/k.all"; : >"$D/r.all"; : >"$D/t.all"; : >"$D/kj.all"; : >"$D/j.all"
: >"$D/rc.all"; : >"$D/tc.all"; : >"$D/jc.all"
for r in $(seq 1 "$runs"); do
	k=$(iperf kernel b a 10.88.2.1) || exit 1
	ro=$(iperf router l i2 10.89.3.1) || exit 1
	tr=$(iperf transparent l i1 10.89.1.50) || exit 1
	kj=$(iperf kernel9000 jb ja 10.87.2.1) || exit 1
	jo=$(iperf jumbo l i3 10.89.4.1) || exit 1
	rc=$(iperf router-cm l i4 10.89.3.1) || exit 1
	tc=$(iperf transparent-cm l i6 10.89.8.50) || exit 1
	jc=$(iperf jumbo-cm l i5 10.89.4.1) || exit 1
	echo "$k" >>"$D/k.all"; echo "$ro" >>"$D/r.all"; echo "$tr" >>"$D/t.all"
	echo "$kj" >>"$D/kj.all"; echo "$jo" >>"$D/j.all"
	echo "$rc" >>"$D/rc.all"; echo "$tc" >>"$D/tc.all"; echo "$jc" >>"$D/jc.all"
	printf '  run %d: kernel %s, router %s, transparent %s; MTU 9000: kernel %s, router (IPoIB 4092) %s Gb/s\n' "$r" \
		"$(gbps "$k")" "$(gbps "$ro")" "$(gbps "$tr")" "$(gbps "$kj")" "$(gbps "$jo")"
	printf '         connected mode (IPoIB 65520): router %s, transparent %s; MTU 9000: router %s Gb/s\n' \
		"$(gbps "$rc")" "$(gbps "$tc")" "$(gbps "$jc")"
done
k=$(median <"$D/k.all"); ro=$(median <"$D/r.all"); tr=$(median <"$D/t.all")
kj=$(median <"$D/kj.all"); jo=$(median <"$D/j.all")
rc=$(median <"$D/rc.all"); tc=$(median <"$D/tc.all"); jc=$(median <"$D/jc.all")
echo "== the gateway's connected-mode counters (frames over RC, by partition)"
"$build/ibgwctl" -s "$D/ctl.sock" show stats | grep -E '^(rc|jc|tc) +ib +cm_(tx_packets|rx_packets|failures) ' | sed 's/^/  /'
echo "== fabric drops during the runs (UD receivers that fell behind lose packets; TCP resends)"
"$build/ibfabricctl" -s "$D/sock" stats | grep -E '^(delivered|drop\.rx_overrun|drop\.fault)' | sed 's/^/  /'
echo "== medians"
printf '  kernel forwarding (veth, a -> r -> b): %s Gb/s\n' "$(gbps "$k")"
python3 - "$k" "$ro" "$tr" "$kj" "$jo" <<'PY'
import sys
k, r, t, kj, j = (int(x) for x in sys.argv[1:])
print("  router mode (IPoIB 2044 -> ibgwd -> kernel -> veth): %.3f Gb/s, ratio %.3f  (target 0.25, goal 0.5)" % (r / 1e9, r / k))
print("  transparent mode (IPoIB 2044 -> ibgwd -> tap -> bridge -> veth): %.3f Gb/s, ratio %.3f" % (t / 1e9, t / k))
print("  kernel forwarding at MTU 9000: %.3f Gb/s" % (kj / 1e9))
print("  router mode, IPoIB 4092 -> LAN MTU 9000: %.3f Gb/s, ratio %.3f (to kernel at 9000), %.3f (to kernel at 1500)" % (j / 1e9, j / kj, j / k))
PY
python3 - "$k" "$ro" "$tr" "$rc" "$tc" "$kj" "$jo" "$jc" <<'PY'
import sys
k, r, t, rc, tc, kj, j, jc = (int(x) for x in sys.argv[1:])
g = lambda x: "%.3f" % (x / 1e9)
q = lambda x, b: "%.3f" % (x / b) if b else "n/a"
print("== connected mode beside datagram mode and kernel forwarding at the same LAN MTU (medians, Gb/s)")
print("  %-9s %-12s %-9s %-8s %-8s %s" % ("LAN MTU", "path", "IPoIB", "Gb/s", "/kernel", "/datagram"))
rows = [("1500", "kernel", "-", k, k, None),
        ("1500", "router", "2044", r, k, None),
        ("1500", "router", "65520 CM", rc, k, r),
        ("1500", "transparent", "2044", t, k, None),
        ("1500", "transparent", "65520 CM", tc, k, t),
        ("9000", "kernel", "-", kj, kj, None),
        ("9000", "router", "4092", j, kj, None),
        ("9000", "router", "65520 CM", jc, kj, j)]
for mtu, path, ib, v, base, dg in rows:
    print("  %-9s %-12s %-9s %-8s %-8s %s" % (mtu, path, ib, g(v), q(v, base), q(v, dg) if dg else ""))
print("  (TCP segments towards the LAN host are sized by the MSS it announces, 1460 at")
print("   MTU 1500 and 8960 at 9000, not by the IPoIB MTU: connected mode's 65520 does")
print("   not make them larger)")
print("  aim: connected mode to the 9000-MTU LAN at 0.8 of kernel forwarding at 9000: %s (%s)"
      % ("met" if kj and jc >= 0.8 * kj else "not met", q(jc, kj)))
PY
