#!/bin/bash
# ibgwd restarted (SIGTERM, as systemctl restart does, and SIGKILL, as a
# crash) under traffic between IB hosts and LAN hosts: IB hosts hold the
# gateway's 20-byte address (its QPN) for every LAN host, and a new ibgwd
# has a new QPN.
#
#   ib1 (P_Key 0x8001) == gw: transparent, tap gwtap1 in br1 == lan1, lan2
#   ib4 (P_Key 0x8003) == gw: router, ib8003 10.63.0.254 -- lan3
#
# - transparent: the gateway asks its segment again for the LAN hosts its
#   predecessor knew (the file beside the control socket) and announces
#   each that answers to the IB side (for IPv6 with Override: ib1's
#   ipoibd, as Linux, keeps the address it has on an advertisement
#   without it): ib1 reaches lan1 over IPv4 and IPv6 within 5 s of the
#   restart (before, a minute and more: until ib1's neighbour entries aged
#   out); a LAN host gone meanwhile is not announced, and is dropped from
#   the file;
# - router: the gateway's own address is announced when its carrier comes
#   up (ipoibd's link): ib4 reaches lan3 within 5 s;
# - the LAN reaches the IB hosts again as well.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
for t in ping python3 tshark; do
	command -v $t >/dev/null || fail "$t not installed (make deps)"
done

cat >"$T/partitions.conf" <<'CONF'
Default=0x7fff, ipoib : ALL=full;
p1=0x8001, ipoib : ALL=full;
p3=0x8003, ipoib : ALL=full;
CONF
start_fabric -P "$T/partitions.conf" --pcap "$T/fabric.pcap"
ns_add ib1
ns_bg IB1 ib1 "$BIN/ipoibd" -f -F "soft:$SOCK" -n ib1 -p 0x8001 -i ib0 \
	--address 10.61.0.1/24 --address fd61::1/64 >"$T/ib1.log" 2>&1
ns_add ib4
ns_bg IB4 ib4 "$BIN/ipoibd" -f -F "soft:$SOCK" -n ib4 -p 0x8003 -i ib0 \
	--address 10.63.0.1/24 --address fd63::1/64 >"$T/ib4.log" 2>&1
ns_add gw
for n in lan1 lan2 lan3; do ns_add $n; done
ns gw ip link add br1 type bridge
ns gw ip link set br1 up
ns_veth gw v1 lan1 eth0
ns_veth gw v2 lan2 eth0
ns_veth gw v3 lan3 eth0
ns gw ip link set v1 master br1
ns gw ip link set v2 master br1
ns lan1 ip addr add 10.61.0.50/24 dev eth0
ns lan1 ip addr add fd61::50/64 dev eth0 nodad
ns lan2 ip addr add 10.61.0.51/24 dev eth0
ns gw ip addr add 10.64.0.254/24 dev v3
ns lan3 ip addr add 10.64.0.1/24 dev eth0
ns lan3 ip route add default via 10.64.0.254
for h in ib1 ib4; do
	hr() { grep -q "ready:" "$T/$h.log"; }
	eventually hr || fail "ipoibd $h"
done
ns ib4 ip route add default via 10.63.0.254

cat >"$T/ibgw.conf" <<CONF
[gateway]
fabric = soft:$SOCK
node = gw
control = $T/run/ctl.sock

[partition p1]
pkey = 0x8001
tap = gwtap1
bridge = br1

[partition p3]
pkey = 0x8003
mode = router
address = 10.63.0.254/24
address6 = fd63::fe/64
CONF
mkdir -p "$T/run"
start_gw() {
	: >"$T/gw.log"
	ns_bg GW gw "$BIN/ibgwd" -f -c "$T/ibgw.conf" >"$T/gw.log" 2>&1
	gw_ready() { grep -q "ready: " "$T/gw.log"; }
	eventually gw_ready || { cat "$T/gw.log"; fail "ibgwd not ready"; }
}
start_gw
# the LAN hosts learnt: ib1 talks to lan1 (v4, v6) and lan2
for d in 10.61.0.50 fd61::50 10.61.0.51; do
	ns ib1 ping -c 2 -W 2 "$d" >/dev/null || fail "ib1 -> $d before the restart"
done
ns ib4 ping -c 2 -W 2 10.64.0.1 >/dev/null || fail "ib4 -> lan3 before the restart"
v6gw() { ns ib4 ping -6 -c 1 -W 1 fd63::fe >/dev/null 2>&1; }
eventually v6gw || fail "ib4 -> the gateway's fd63::fe"

# within_5s NS DST: one ping a second, the first answered within 5 s
within_5s() {
	local i
	for i in 1 2 3 4 5; do
		ns "$1" ping -c 1 -W 1 "$2" >/dev/null 2>&1 && return 0
	done
	return 1
}
restart() {	# SIGNAL
	kill "-$1" "$GW"
	wait "$GW" 2>/dev/null
	start_gw
	for d in 10.61.0.50 fd61::50; do
		within_5s ib1 "$d" || { tail -20 "$T/gw.log"; fail "$1: ib1 -> $d not within 5 s of the restart"; }
	done
	within_5s ib4 10.64.0.1 || fail "$1: ib4 -> lan3 (routed) not within 5 s of the restart"
	within_5s lan1 10.61.0.1 || fail "$1: lan1 -> ib1 not within 5 s of the restart"
	within_5s lan1 fd61::1 || fail "$1: lan1 -> ib1 over IPv6 not within 5 s of the restart"
	grep -q "partition p1: asking the segment for [0-9]* LAN host(s) known before the restart" "$T/gw.log" ||
		fail "$1: no seeding logged"
}
restart TERM
ok "SIGTERM: ib1 reaches lan1 (IPv4, IPv6) and ib4 reaches lan3 within 5 s of the restart, the LAN reaches ib1"

# what was written beside the control socket
# (with the link-local addresses the LAN hosts and the bridge used)
saved() {
	local a
	for a in 10.61.0.50 fd61::50 10.61.0.51; do
		grep -qx "p1 $a" "$T/run/ibgwd.neigh" 2>/dev/null || return 1
	done
}
eventually saved || { cat "$T/run/ibgwd.neigh"; fail "the LAN hosts not written beside the control socket"; }
grep -v "^p1 " "$T/run/ibgwd.neigh" && fail "ibgwd.neigh: a line not of p1 (the router partition has no LAN hosts of its own)"
ok "the gateway's LAN hosts in ibgwd.neigh beside the control socket: $(grep -c . "$T/run/ibgwd.neigh") lines"

# lan2 leaves before the next restart: asked for, no answer, not announced,
# and gone from the file
ns lan2 ip link set eth0 down
sleep 6		# the file is written every 5 s: a SIGKILL loses nothing older
kill -KILL "$GW"
wait "$GW" 2>/dev/null
grep -qx "p1 10.61.0.51" "$T/run/ibgwd.neigh" || fail "lan2 not in the file the killed gateway left"
# a damaged file: its bad lines are skipped and said so, the rest taken
printf 'p1 not-an-address\njunk\n\001\002\003\np1 10.61.0.999\n%0300d\n' 0 >>"$T/run/ibgwd.neigh"
start_gw
grep -q "ibgwd.neigh: [0-9]* line(s) not understood, skipped" "$T/gw.log" ||
	{ cat "$T/gw.log"; fail "bad lines of ibgwd.neigh not reported"; }
for d in 10.61.0.50 fd61::50; do
	within_5s ib1 "$d" || fail "KILL: ib1 -> $d not within 5 s of the restart"
done
within_5s ib4 10.64.0.1 || fail "KILL: ib4 -> lan3 (routed) not within 5 s of the restart"
gone() { ! grep -q "^p1 10.61.0.51$" "$T/run/ibgwd.neigh"; }
eventually gone || fail "lan2, silent, still in the file"
ok "SIGKILL: the file of 5 s before was enough; a LAN host that did not answer is dropped from it"

# on the wire: the new gateway's announcements for lan1, with its new QPN
stop_fabric
tshark -r "$T/fabric.pcap" -Y 'arp.src.proto_ipv4 == 10.61.0.50 && arp.dst.proto_ipv4 == 10.61.0.50' \
	-T fields -e frame.number >"$T/garp.txt" 2>/dev/null
tshark -r "$T/fabric.pcap" -Y 'icmpv6.type == 136 && icmpv6.nd.na.target_address == fd61::50 && ipv6.dst == ff02::1' \
	-T fields -e icmpv6.nd.na.flag.o >"$T/na.txt" 2>/dev/null
[ "$(wc -l <"$T/garp.txt")" -ge 2 ] || fail "tshark: fewer than 2 gratuitous ARPs for lan1 (one per start after the first)"
[ "$(wc -l <"$T/na.txt")" -ge 2 ] || fail "tshark: fewer than 2 unsolicited NAs for fd61::50"
# with Override: a neighbour that follows RFC 4861 7.2.5 (Linux, and
# ipoibd) keeps the old QPN on an advertisement without it and gives it
# up only after its unreachability detection, about 8 s
grep -qv '^True$\|^1$' "$T/na.txt" && fail "tshark: an unsolicited NA for fd61::50 without Override: $(sort -u "$T/na.txt" | tr '\n' ' ')"
ok "tshark: gratuitous ARPs for 10.61.0.50 and unsolicited NAs (Override set) for fd61::50 from the gateway"
# a router's advertisements say so (RFC 4861 7.2.4; a Linux host that had it
# as its router would drop its routes through it on one without R), a host's
# do not
tshark -r "$T/fabric.pcap" -Y 'icmpv6.type == 136 && icmpv6.nd.na.target_address == fd63::fe' \
	-T fields -e icmpv6.nd.na.flag.r >"$T/na_r.txt" 2>/dev/null
tshark -r "$T/fabric.pcap" -Y 'icmpv6.type == 136 && icmpv6.nd.na.target_address == fd63::1' \
	-T fields -e icmpv6.nd.na.flag.r >"$T/na_h.txt" 2>/dev/null
[ -s "$T/na_r.txt" ] && [ -s "$T/na_h.txt" ] || fail "tshark: no NAs for fd63::fe or fd63::1"
grep -qv '^True$\|^1$' "$T/na_r.txt" && fail "tshark: an NA of the router partition's fd63::fe without the Router flag: $(sort | uniq -c <"$T/na_r.txt" | tr '\n' ' ')"
grep -q '^True$\|^1$' "$T/na_h.txt" && fail "tshark: an NA of the host ib4 with the Router flag"
ok "tshark: the router partition's NAs carry the Router flag ($(wc -l <"$T/na_r.txt")), the IB host's do not ($(wc -l <"$T/na_h.txt"))"
kill "$GW" 2>/dev/null
ok "gateway_restart"
