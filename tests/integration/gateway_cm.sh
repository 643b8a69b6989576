#!/bin/bash
# The gateway with ipoib_mode = connected (issue 13, item 5):
#
#   ib1 (ipoibd --mode connected), ib2 (datagram) == gw: transparent,
#   ipoib_mode = connected, eth_mtu 9000, tap gwtap1 in br1 == lan1 (MTU 9000)
#
# - ibgwctl shows the partition in connected mode with IPoIB MTU 65520
#   and the RC flag in its address;
# - 8000-byte pings with DF between ib1 and the jumbo LAN, both ways, go
#   over RC connections (the gateway's counters), and iperf3 ib1 -> lan1
#   runs;
# - ib2, in datagram mode, reaches the LAN through the same gateway by
#   datagrams; a packet to it above its MTU gets ICMP too big from the
#   gateway's side (2044).
# - a second connected-mode partition on the same gateway (router, P_Key
#   0x8002) takes ib3's connection too: the partitions share the
#   gateway's node and its CM events, and each REQ goes to the partition
#   it was meant for (8000-byte pings with DF to the gateway's address).
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
for t in ping iperf3 python3; do
	command -v $t >/dev/null || fail "$t not installed (make deps)"
done
printf 'Default=0x7fff, ipoib : ALL=full;\np2=0x8002, ipoib : ALL=full;\n' >"$T/parts.conf"
start_fabric -P "$T/parts.conf"

ib() {	# NAME MODE ADDR [PKEY]
	ns_add "$1"
	ns_bg "${1}_PID" "$1" "$BIN/ipoibd" -f -F "soft:$SOCK" -n "$1" \
		-p "${4:-0xffff}" -i ib0 --mode "$2" --address "$3" >"$T/$1.log" 2>&1
}
ib ib1 connected 10.41.0.1/24
ib ib2 datagram 10.41.0.2/24
ib ib3 connected 10.41.2.1/24 0x8002
ns_add gw
ns_add lan1
ns gw ip link add br1 type bridge
ns gw ip link set br1 up
ns_veth gw v1 lan1 eth0
ns gw ip link set v1 mtu 9000
ns lan1 ip link set eth0 mtu 9000
ns gw ip link set v1 master br1
ns lan1 ip addr add 10.41.0.50/24 dev eth0

cat >"$T/ibgw.conf" <<CONF
[gateway]
fabric = soft:$SOCK
node = gw
control = $T/ibgwd.sock

[partition p1]
pkey = 0xffff
tap = gwtap1
bridge = br1
eth_mtu = 9000
ipoib_mode = connected

[partition p2]
pkey = 0x8002
mode = router
address = 10.41.2.254/24
ipoib_mode = connected
CONF
ns_bg GW_PID gw "$BIN/ibgwd" -f -c "$T/ibgw.conf" >"$T/gw.log" 2>&1
gw_ready() { grep -q "ready: 2 partition" "$T/gw.log"; }
eventually gw_ready || { cat "$T/gw.log"; fail "ibgwd not ready"; }
for h in ib1 ib2 ib3; do
	hr() { grep -q "ready:" "$T/$h.log"; }
	eventually hr || { cat "$T/$h.log"; fail "ipoibd $h not ready"; }
done
gwctl() { "$BIN/ibgwctl" -s "$T/ibgwd.sock" "$@"; }
gwctl show partitions >"$T/parts"
cat "$T/parts"
grep -Eq '^p1 .* up +65520 +9000 +80:[0-9a-f:]+ +connected( +(on|off|failed))?$' "$T/parts" ||
	fail "the partition is not shown up, MTU 65520, RC flag, connected"
gwctl -j show partitions | python3 -c 'import json,sys; p=json.load(sys.stdin)["partitions"][0]; assert p["ipoib_mode"] == "connected" and p["mtu"] == 65520, p' ||
	fail "JSON: ipoib_mode/mtu"
ok "gateway partition in connected mode: MTU 65520, address with the RC flag"

gw_counter() { gwctl show stats | sed -n "s/^p1 $1 \\([0-9]*\\)$/\\1/p; s/^$1 \\([0-9]*\\)$/\\1/p" | head -n1; }
ns ib1 ping -c 3 -W 3 -s 8000 -M do 10.41.0.50 >"$T/p1" 2>&1 ||
	{ cat "$T/p1" "$T/gw.log"; fail "ib1 -> lan1, 8000 bytes with DF"; }
ns lan1 ping -c 3 -W 3 -s 8000 -M do 10.41.0.1 >"$T/p2" 2>&1 ||
	{ cat "$T/p2"; fail "lan1 -> ib1, 8000 bytes with DF"; }
gwctl show stats >"$T/stats"
rx=$(grep -E '(^| )cm_rx_packets ' "$T/stats" | grep -Eo '[0-9]+$' | head -n1)
tx=$(grep -E '(^| )cm_tx_packets ' "$T/stats" | grep -Eo '[0-9]+$' | head -n1)
[ "${rx:-0}" -ge 3 ] && [ "${tx:-0}" -ge 3 ] || { cat "$T/stats"; fail "the gateway's RC frames: rx $rx tx $tx"; }
ok "8000-byte pings with DF between ib1 and the jumbo LAN, both ways, over RC (gateway: $rx frames in, $tx out)"

ns_bg S1 lan1 iperf3 -s -1 -p 5201 >"$T/iperf_s.log" 2>&1
sleep 0.5
ns ib1 iperf3 -c 10.41.0.50 -p 5201 -t 2 -J >"$T/iperf.json" 2>"$T/iperf.err" ||
	{ tail -20 "$T/iperf.json" "$T/iperf.err"; fail "iperf3 ib1 -> lan1"; }
bps=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]))' "$T/iperf.json")
[ "$bps" -gt 0 ] || fail "iperf3: nothing received"
ok "iperf3 ib1 -> lan1 through the connected-mode gateway: $((bps / 1000000)) Mbit/s"

# lan1 -> ib1 in 1400-byte segments: the gateway reads them from its tap
# faster than one connection's window takes them; what waits beyond it
# stops the tap's reads (the frames wait in the kernel) and none is dropped
# at the link (drop.cm_queue_full), where a fixed queue of 64 dropped them
p1_counter() { gwctl show stats | sed -n "s/^p1 \\+ib \\+$1 \\+\\([0-9]*\\)$/\\1/p" | head -n1; }
q0=$(p1_counter drop.cm_queue_full) st0=$(p1_counter cm_tx_stops)
[ -n "$q0" ] && [ -n "$st0" ] || { gwctl show stats | grep '^p1 '; fail "no drop.cm_queue_full or cm_tx_stops for p1 in ibgwctl show stats"; }
ns_bg S2 lan1 iperf3 -s -1 -p 5202 >"$T/iperf2_s.log" 2>&1
sleep 0.5
ns ib1 iperf3 -c 10.41.0.50 -p 5202 -t 2 -R -M 1400 -J >"$T/iperf2.json" 2>"$T/iperf2.err" ||
	{ tail -20 "$T/iperf2.json" "$T/iperf2.err"; fail "iperf3 -R lan1 -> ib1"; }
bps=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]))' "$T/iperf2.json")
[ "$bps" -gt 0 ] || fail "iperf3 -R: nothing received"
expect_eq "frames the gateway's link dropped for a full connection queue (lan1 -> ib1)" \
	"$(( $(p1_counter drop.cm_queue_full) - q0 ))" 0
ok "iperf3 lan1 -> ib1 (-M 1400) through the connected-mode gateway: $((bps / 1000000)) Mbit/s, tap reads stopped $(( $(p1_counter cm_tx_stops) - st0 )) times"

ns ib2 ping -c 3 -W 3 10.41.0.50 >"$T/p3" || { cat "$T/p3"; fail "ib2 (datagram) -> lan1"; }
ns lan1 ping -c 1 -W 3 -s 3000 -M do 10.41.0.2 >"$T/p4" 2>&1
ns lan1 ping -c 2 -W 3 -s 3000 -M do 10.41.0.2 >"$T/p4" 2>&1 &&
	fail "3000 bytes with DF reached ib2, whose datagram MTU is 2044"
grep -Eq 'mtu ?= ?2044|Frag needed' "$T/p4" || { cat "$T/p4"; fail "no ICMP too big towards ib2"; }
ok "ib2 in datagram mode through the same gateway; 3000 bytes with DF to it: $(grep -m1 -E 'mtu|Frag' "$T/p4")"
ns ib3 ping -c 1 -W 3 10.41.2.254 >/dev/null || fail "ib3 -> the gateway's p2 address"
ns ib3 ping -c 3 -W 3 -s 8000 -M do 10.41.2.254 >"$T/p5" 2>&1 ||
	{ cat "$T/p5" "$T/ib3.log"; fail "ib3 -> the gateway's p2, 8000 bytes with DF"; }
acc=$(gwctl show stats | sed -n 's/^p2 \+ib \+cm_accepts \+\([0-9]*\)$/\1/p')
kill -USR1 "$ib3_PID"; sleep 0.3
f3=$(sed -n 's/.*\bcm_failures \([0-9]*\).*/\1/p' "$T/ib3.log" | tail -n1)
[ "${acc:-0}" -ge 1 ] && [ "${f3:-0}" -eq 0 ] ||
	{ gwctl show stats | grep -E '^p[12] +ib +cm_'; fail "p2 accepted $acc connection(s), ib3 saw $f3 failure(s)"; }
ok "a second connected-mode partition on the gateway takes its own connections (p2 accepted $acc, ib3 failures 0)"
fabric_alive
