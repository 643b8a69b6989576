#!/bin/bash
# make demo: IB hosts and a LAN host talking through the gateway, on the
# software InfiniBand subnet, in network namespaces.
#
#   ib1, ib2 (ipoibd, P_Key 0x8001) -- ibfabricd -- gw (ibgwd) -- lan1
#   one IP subnet, 10.77.0.0/24: ibgwd in transparent mode, its tap in a
#   bridge with lan1's veth
#
#   tools/demo.sh [BUILD]            run it, then remove everything
#   tools/demo.sh --keep [BUILD]     leave it running to explore
#   tools/demo.sh --remove           remove a kept demo
set -u
keep=0
case "${1:-}" in
--keep) keep=1; shift ;;
--remove) remove_only=1; shift ;;
esac
BIN=${1:-build}
NS=ibgw-demo
STATE=/run/ibgw-demo
if [ "$(id -u)" != 0 ]; then
	echo "demo: needs root (network namespaces): sudo make demo" >&2
	exit 1
fi

remove() {
	local n p
	for n in ib1 ib2 gw lan1; do
		for p in $(ip netns pids "$NS-$n" 2>/dev/null); do kill -TERM "$p" 2>/dev/null; done
	done
	sleep 1
	for n in ib1 ib2 gw lan1; do
		for p in $(ip netns pids "$NS-$n" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		ip netns delete "$NS-$n" 2>/dev/null
	done
	if [ -f "$STATE/fabric.pid" ]; then
		kill -TERM "$(cat "$STATE/fabric.pid")" 2>/dev/null
	fi
	rm -rf "$STATE"
	echo "demo: removed"
}
if [ "${remove_only:-0}" = 1 ]; then
	remove
	exit 0
fi
[ -d "$STATE" ] && { echo "demo: a kept demo runs; remove it first: sudo tools/demo.sh --remove" >&2; exit 1; }
for p in ibfabricd ipoibd ibgwd ibgwctl ibfabricctl; do
	[ -x "$BIN/$p" ] || { echo "demo: $BIN/$p missing (make)" >&2; exit 1; }
done
mkdir -p "$STATE"
if [ "$keep" = 0 ]; then
	trap remove EXIT
fi
trap 'exit 130' INT TERM
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }
ns() { local n=$1; shift; ip netns exec "$NS-$n" "$@"; }
die() { echo "demo: $*" >&2; exit 1; }
wait_for() {	# FILE PATTERN
	local i
	for i in $(seq 1 100); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	cat "$1" >&2
	die "no '$2' in $1"
}

step "the software InfiniBand subnet: ibfabricd, partition 0x8001 with IPoIB"
printf 'Default=0x7fff, ipoib : ALL=full;\ncluster=0x8001, ipoib : ALL=full;\n' >"$STATE/partitions.conf"
"$BIN/ibfabricd" -f -s "$STATE/fabric.sock" -P "$STATE/partitions.conf" 2>"$STATE/fabric.log" &
echo $! >"$STATE/fabric.pid"
wait_for "$STATE/fabric.log" ready
cat "$STATE/fabric.log"

step "namespaces: IB hosts ib1 and ib2, the gateway gw, the LAN host lan1"
for n in ib1 ib2 gw lan1; do
	ip netns add "$NS-$n" || die "ip netns add"
	ns $n ip link set lo up
done
ns gw ip link add br-lan type bridge
ns gw ip link set br-lan up
ip link add eth0 netns "$NS-lan1" type veth peer name lan1 netns "$NS-gw"
ns gw ip link set lan1 master br-lan
ns gw ip link set lan1 up
ns lan1 ip link set eth0 up
ns lan1 ip addr add 10.77.0.100/24 dev eth0
echo "lan1: 10.77.0.100/24 on a veth bridged (br-lan) in the gateway's namespace"

step "IB hosts: ipoibd joins the partition's broadcast group and brings ib0 up"
for i in 1 2; do
	ns ib$i "$BIN/ipoibd" -f -F "soft:$STATE/fabric.sock" -n ib$i -p 0x8001 \
		-i ib0 -a 10.77.0.$i/24 >"$STATE/ib$i.log" 2>&1 &
	wait_for "$STATE/ib$i.log" "ready:"
	grep "ready:" "$STATE/ib$i.log"
done

step "the gateway: ibgwd, transparent mode (partition 0x8001 = the bridge's segment)"
cat >"$STATE/ibgw.conf" <<CONF
[gateway]
fabric = soft:$STATE/fabric.sock
node = gw
control = $STATE/ibgwd.sock

[partition cluster]
pkey = 0x8001
mode = transparent
tap = ibgw0
bridge = br-lan
CONF
cat "$STATE/ibgw.conf"
run "$BIN/ibgwd" -n -c "$STATE/ibgw.conf"
ns gw "$BIN/ibgwd" -f -c "$STATE/ibgw.conf" >"$STATE/gw.log" 2>&1 &
wait_for "$STATE/gw.log" "ready:"
grep -v "joining" "$STATE/gw.log"

step "the subnet: nodes and IPoIB groups (ibfabricctl)"
run "$BIN/ibfabricctl" -s "$STATE/fabric.sock" nodes
run "$BIN/ibfabricctl" -s "$STATE/fabric.sock" groups | head -6

step "ping across the gateway, both ways"
run ns lan1 ping -c 3 -W 2 10.77.0.1 || die "lan1 -> ib1"
run ns ib2 ping -c 2 -W 2 10.77.0.100 || die "ib2 -> lan1"
echo
echo "lan1's neighbours: the IB hosts at MACs the gateway derives from their 20-byte addresses"
ns lan1 ip neigh show dev eth0
echo "(the first request took a second: the gateway resolved ib1 on IB first,"
echo " and answered lan1's retry)"

step "iperf3: TCP from ib1 to lan1 for 2 seconds"
if command -v iperf3 >/dev/null; then
	ns lan1 iperf3 -s -1 >/dev/null 2>&1 &
	sleep 0.5
	ns ib1 iperf3 -c 10.77.0.100 -t 2 | grep -E "sender|receiver"
else
	echo "(iperf3 not installed)"
fi

step "the gateway's view: ibgwctl"
run "$BIN/ibgwctl" -s "$STATE/ibgwd.sock" show summary
run "$BIN/ibgwctl" -s "$STATE/ibgwd.sock" show partitions
run "$BIN/ibgwctl" -s "$STATE/ibgwd.sock" show neighbors
"$BIN/ibgwctl" -s "$STATE/ibgwd.sock" show stats | grep -E " (rx_frames|tx_frames|to_ib_packets|from_ib_packets|arp_answered|mss_clamped) " |
	sed 's/^/  /'

if [ "$keep" = 1 ]; then
	step "left running"
	cat <<EOF
Namespaces: $NS-ib1, $NS-ib2, $NS-gw, $NS-lan1, for instance:
  sudo ip netns exec $NS-lan1 ping 10.77.0.2
  sudo ip netns exec $NS-ib1 bash
Logs and configuration: $STATE
Remove it with: sudo tools/demo.sh --remove
EOF
	trap - EXIT
fi
exit 0
