#!/bin/bash
# ibgwd between IB hosts (ipoibd) and LAN hosts, with real programs.
#
#   ib1, ib2 (P_Key 0x8001) == gw: transparent, tap gwtap1 in br1 == lan1
#   ib3      (P_Key 0x8002) == gw: transparent, tap gwtap2 in br2 == lan2
#   ib5      (P_Key 0x8005) == gw: transparent, VLAN 100 on trunk0 == tr
#   ib4      (P_Key 0x8003) == gw: router, ib8003 10.43.0.254 -- lan3
#
# - transparent: ping v4/v6 both ways, iperf3 TCP both ways and UDP, curl
#   to an HTTP server on the LAN and from the LAN to one on an IB host,
#   a multicast stream from the LAN to the IB host that joined only, the
#   segment's directed broadcast both ways, IPv6 multicast above the
#   LAN's MTU (Packet Too Big from the gateway's link-local), ARP
#   answered with the MAC derived from the IB host's address
# - MTU: ping -M do -s 2000 to the LAN gets fragmentation-needed, without
#   DF it is fragmented; SYNs crossing carry MSS 1460
# - isolation: a LAN host on the other segment with an address in p1's
#   subnet reaches nobody in p1; IB hosts of different partitions neither
# - the trunk: tagged ARP and ICMP to an IB host on VLAN 100 are answered
#   tagged (a raw-socket client in Python), VLAN 200 is counted unmapped
# - router: ping, iperf3, curl both ways, frag-needed from the gateway; an
#   MTU set above the link's on the router interface is put back and
#   logged; the gateway's port down shows NO-CARRIER on it, up again the
#   carrier and the routed pings come back
# - malformed frames on the segment are counted; ibgwd stops cleanly and
#   removes its taps and interfaces
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
for t in ping iperf3 curl python3 tcpdump; do
	command -v $t >/dev/null || fail "$t not installed (make deps)"
done

cat >"$T/partitions.conf" <<'CONF'
Default=0x7fff, ipoib : ALL=full;
p1=0x8001, ipoib : ib1=full, ib2=full, gw=full;
p2=0x8002, ipoib : ib3=full, gw=full;
p3=0x8003, ipoib : ib4=full, gw=full;
p5=0x8005, ipoib : ib5=full, gw=full;
CONF
start_fabric -P "$T/partitions.conf"

# ib NAME PKEY ADDR...: an IB host
ib() {
	local name=$1 pkey=$2 args=() a
	shift 2
	for a in "$@"; do args+=(--address "$a"); done
	ns_add "$name"
	ns_bg "${name}_PID" "$name" "$BIN/ipoibd" -f -F "soft:$SOCK" -n "$name" \
		-p "$pkey" -i ib0 "${args[@]}" >"$T/$name.log" 2>&1
}
ib ib1 0x8001 10.41.0.1/24 fd41::1/64
ib ib2 0x8001 10.41.0.2/24 fd41::2/64
ib ib3 0x8002 10.42.0.3/24
ib ib4 0x8003 10.43.0.1/24
ib ib5 0x8005 10.45.0.5/24

# the gateway's namespace: two bridges with a LAN host each, a trunk, a
# routed LAN
ns_add gw
ns_add lan1
ns_add lan2
ns_add lan3
ns_add tr
for b in br1 br2; do ns gw ip link add $b type bridge; ns gw ip link set $b up; done
ns_veth gw v1 lan1 eth0
ns_veth gw v2 lan2 eth0
ns_veth gw v3 lan3 eth0
ns_veth gw trunk0 tr eth0
ns gw ip link set v1 master br1
ns gw ip link set v2 master br2
ns lan1 ip addr add 10.41.0.50/24 dev eth0
ns lan1 ip addr add fd41::50/64 dev eth0 nodad
ns lan2 ip addr add 10.42.0.50/24 dev eth0
ns lan2 ip addr add 10.41.0.60/24 dev eth0	# p1's subnet, wrong segment
ns gw ip addr add 10.44.0.254/24 dev v3
ns lan3 ip addr add 10.44.0.1/24 dev eth0
ns lan3 ip route add default via 10.44.0.254
ns ib4 ip route add default via 10.43.0.254 2>/dev/null || true

cat >"$T/ibgw.conf" <<CONF
[gateway]
fabric = soft:$SOCK
node = gw
trunk = trunk0
control = $T/ibgwd.sock

[partition p1]
pkey = 0x8001
tap = gwtap1
bridge = br1

[partition p2]
pkey = 0x8002
tap = gwtap2
bridge = br2

[partition p5]
pkey = 0x8005
vlan = 100

[partition p3]
pkey = 0x8003
mode = router
ifname = ib8003
address = 10.43.0.254/24
CONF
"$BIN/ibgwd" -n -c "$T/ibgw.conf" >"$T/check.out" 2>&1 || { cat "$T/check.out"; fail "ibgwd -n"; }
grep -qx "configuration OK" "$T/check.out" || fail "ibgwd -n said: $(cat "$T/check.out")"
ns_bg GW_PID gw "$BIN/ibgwd" -f -c "$T/ibgw.conf" >"$T/gw.log" 2>&1
gw_ready() { grep -q "ready: 4 partition" "$T/gw.log"; }
eventually gw_ready || { cat "$T/gw.log"; fail "ibgwd not ready"; }
for h in ib1 ib2 ib3 ib4 ib5; do
	hr() { grep -q "ready:" "$T/$h.log"; }
	eventually hr || { cat "$T/$h.log"; fail "ipoibd $h not ready"; }
done
ns ib4 ip route replace default via 10.43.0.254 || fail "route on ib4"
ns gw ip link show gwtap1 | grep -q "master br1" || fail "gwtap1 not in br1"
ok "gateway up: 3 transparent partitions (2 taps, 1 VLAN), 1 router"

# --- transparent: ping both ways, IPv4 and IPv6 --------------------------------
# (the first request from a side may be spent resolving the other: -c 3)
ns lan1 ping -c 3 -W 2 10.41.0.1 >"$T/p" || { cat "$T/p" "$T/gw.log"; fail "lan1 -> ib1"; }
ns ib2 ping -c 2 -W 2 10.41.0.50 >/dev/null || fail "ib2 -> lan1"
ns lan1 ping -c 3 -W 2 fd41::2 >/dev/null || fail "lan1 -> ib2 IPv6"
ns ib1 ping -c 2 -W 2 fd41::50 >/dev/null || fail "ib1 -> lan1 IPv6"
ns ib3 ping -c 3 -W 2 10.42.0.50 >/dev/null || fail "ib3 -> lan2"
ok "transparent: ping both ways, IPv4 and IPv6"

# the gateway's neighbour solicitations on the segment come from its own
# link-local address (modified EUI-64 of its MAC, which is derived from
# its port GID and the P_Key): a LAN host that answered one confirms it
# later (NUD), so a solicitation for it is answered, with the MAC
gwll=$(python3 - "$("$BIN/ibgwctl" -s "$T/ibgwd.sock" -j show summary)" <<'PY'
import ipaddress, json, sys
gid = ipaddress.IPv6Address(json.loads(sys.argv[1])["gid"]).packed
b = bytes([0, 0, 0x80, 0x01]) + gid          # flags, QPN = P_Key | 0x8000
h = 0xcbf29ce484222325
for c in b[1:20]:
    h = ((h ^ c) * 0x100000001b3) & (2**64 - 1)
m = [((h >> 56) & 0xfc) | 2] + [(h >> (56 - 8 * i)) & 0xff for i in range(1, 6)]
iid = bytes([m[0] ^ 2, m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]])
print("%s %s" % (ipaddress.IPv6Address(b"\xfe\x80" + bytes(6) + iid),
                 ":".join("%02x" % x for x in m)))
PY
)
cat >"$T/ns.py" <<'PY'
# ns.py IFNAME TARGET: a Neighbour Solicitation for TARGET to its
# solicited-node group (with our MAC as source link-layer option); prints
# the target link-layer address of the advertisement that answers
import ipaddress, socket, struct, sys, time
ifn, tgt = sys.argv[1], ipaddress.IPv6Address(sys.argv[2])
idx = socket.if_nametoindex(ifn)
mac = bytes.fromhex(open("/sys/class/net/%s/address" % ifn).read().strip().replace(":", ""))
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, idx)
sn = ipaddress.IPv6Address("ff02::1:ff00:0").packed[:13] + tgt.packed[13:]
s.sendto(struct.pack("!BBHI", 135, 0, 0, 0) + tgt.packed + bytes([1, 1]) + mac,
         (str(ipaddress.IPv6Address(sn)), 0, 0, idx))
s.settimeout(0.5)
end = time.time() + 3
while time.time() < end:
    try:
        m, a = s.recvfrom(2000)
    except socket.timeout:
        continue
    if m[0] == 136 and m[8:24] == tgt.packed and len(m) >= 32 and m[24] == 2:
        print("NA flags %02x tlla %s" % (m[4], ":".join("%02x" % x for x in m[26:32])))
        sys.exit(0)
print("no answer")
sys.exit(1)
PY
ns lan1 python3 "$T/ns.py" eth0 "${gwll% *}" >"$T/ns.out" 2>&1 ||
	{ cat "$T/ns.out"; fail "a solicitation for the gateway's link-local ${gwll% *} (its NS source) was not answered"; }
grep -q "tlla ${gwll#* }\$" "$T/ns.out" || { cat "$T/ns.out"; fail "the gateway's link-local not answered with its MAC ${gwll#* }"; }
ok "the gateway's link-local ${gwll% *} answered on the segment: $(cat "$T/ns.out")"

# the LAN sees IB hosts at the MACs derived from their addresses
mac=$(ns lan1 ip neigh show 10.41.0.1 | sed -n 's/.*lladdr \([0-9a-f:]*\).*/\1/p')
ib1hw=$(sed -n 's/.*ready: .* address \(.*\)$/\1/p' "$T/ib1.log")
want=$(python3 - "$ib1hw" <<'PY'
import sys
b = bytes(int(x, 16) for x in sys.argv[1].split(":"))
h = 0xcbf29ce484222325
for c in b[1:4] + b[4:20]:          # QPN (3 bytes) and GID, no flags
    h = ((h ^ c) * 0x100000001b3) & (2**64 - 1)
m = [((h >> 56) & 0xfc) | 2] + [(h >> (56 - 8 * i)) & 0xff for i in range(1, 6)]
print(":".join("%02x" % x for x in m))
PY
)
expect_eq "ib1's MAC on the LAN" "$mac" "$want"

# --- iperf3 TCP both ways, UDP -------------------------------------------------------
iperf_rate() {	# JSON file -> bits per second received
	python3 -c "import json,sys; print(int(json.load(open(sys.argv[1]))['end']['sum_received']['bits_per_second']))" "$1"
}
ns_bg S1 lan1 iperf3 -s -p 5201 >/dev/null 2>&1
ns_bg S2 ib2 iperf3 -s -p 5202 >/dev/null 2>&1
sleep 0.5
ns ib1 iperf3 -c 10.41.0.50 -p 5201 -t 2 -J >"$T/i1.json" || { cat "$T/i1.json"; fail "iperf3 ib1 -> lan1"; }
r1=$(iperf_rate "$T/i1.json")
ns lan1 iperf3 -c 10.41.0.2 -p 5202 -t 2 -J >"$T/i2.json" || { cat "$T/i2.json"; fail "iperf3 lan1 -> ib2"; }
r2=$(iperf_rate "$T/i2.json")
ns lan1 iperf3 -u -b 50M -c 10.41.0.2 -p 5202 -t 2 -J >"$T/i3.json" || { cat "$T/i3.json"; fail "iperf3 UDP lan1 -> ib2"; }
r3=$(iperf_rate "$T/i3.json")
[ "$r1" -gt 0 ] && [ "$r2" -gt 0 ] && [ "$r3" -gt 0 ] || fail "iperf3 rates $r1 $r2 $r3"
ok "iperf3: TCP ib1->lan1 $((r1 / 1000000)) Mb/s, lan1->ib2 $((r2 / 1000000)) Mb/s, UDP $((r3 / 1000000)) Mb/s"

# --- HTTP both ways, and the MSS of SYNs crossing --------------------------------------
mkdir -p "$T/www"
echo "hello from the lan" >"$T/www/index.html"
ns_bg H1 lan1 python3 -m http.server -d "$T/www" -b 10.41.0.50 8080
ns_bg H2 ib2 python3 -m http.server -d "$T/www" -b 10.41.0.2 8081
ns_bg TD lan1 tcpdump -l -n -v -i eth0 'tcp[tcpflags] & tcp-syn != 0' >"$T/syn.txt" 2>/dev/null
sleep 1
ns ib1 curl -sf --max-time 10 http://10.41.0.50:8080/ >"$T/c1" || fail "curl ib1 -> lan1"
grep -q "hello from the lan" "$T/c1" || fail "curl ib1 -> lan1: $(cat "$T/c1")"
ns lan1 curl -sf --max-time 10 http://10.41.0.2:8081/ >"$T/c2" || fail "curl lan1 -> ib2"
grep -q "hello from the lan" "$T/c2" || fail "curl lan1 -> ib2"
sleep 0.5
kill "$TD" 2>/dev/null; wait "$TD" 2>/dev/null
grep -q "10.41.0.1\.[0-9]* > 10.41.0.50.8080: Flags \[S\].*mss 1460" "$T/syn.txt" || { cat "$T/syn.txt"; fail "ib1's SYN did not arrive with MSS 1460"; }
ok "curl both ways; ib1's SYN (MSS 2004 on IPoIB) reached the LAN clamped to 1460"

# --- MTU: frag-needed with DF, fragments without ------------------------------------------
# without DF first: ib1 does not know the path MTU yet, the gateway cuts
ns ib1 ping -M dont -s 2000 -c 2 -W 2 10.41.0.50 >/dev/null || fail "2000-byte ping without DF"
ns ib2 ping -M do -s 2000 -c 1 -W 2 10.41.0.50 >"$T/df" 2>&1
grep -q "Frag needed and DF set (mtu = 1500)\|message too long, mtu=1500" "$T/df" || { cat "$T/df"; fail "no fragmentation-needed for DF"; }
ok "MTU: DF gets fragmentation-needed (1500), no DF is fragmented"

# --- multicast from the LAN to the IB host that joined --------------------------------------
# recv.py ADDR PORT [join]: counts datagrams to ADDR:PORT until 4 s pass
# without one; join: joins ADDR, a group
cat >"$T/recv.py" <<'PY'
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
if sys.argv[3:] == ["join"]:
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                 struct.pack("4s4s", socket.inet_aton(sys.argv[1]), socket.inet_aton("0.0.0.0")))
print("listening", flush=True)
s.settimeout(4)
n = 0
try:
    while True:
        s.recv(2000); n += 1
except socket.timeout:
    pass
print("received", n, flush=True)
PY
for h in ib1 ib2 lan1; do ns $h ip route add 224.0.0.0/4 dev $( [ $h = lan1 ] && echo eth0 || echo ib0); done
ns_bg MJ ib1 python3 "$T/recv.py" 239.1.1.1 6000 join >"$T/mj.out"
ns_bg MN ib2 python3 "$T/recv.py" 239.1.1.1 6000 >"$T/mn.out"
listening() { grep -q listening "$T/mj.out" && grep -q listening "$T/mn.out"; }
eventually listening || fail "multicast receivers"
sleep 1.5	# ib1's report, and its join
ns lan1 python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 2)
for i in range(10):
    s.sendto(b"stream-%d" % i, ("239.1.1.1", 6000)); time.sleep(0.1)'
wait "$MJ"; wait "$MN"
got=$(sed -n 's/^received //p' "$T/mj.out")
[ "${got:-0}" -ge 8 ] || fail "ib1 received $got of 10 multicast datagrams"
expect_eq "multicast to ib2, which did not join" "$(sed -n 's/^received //p' "$T/mn.out")" 0
ok "multicast stream lan1 -> ib1 ($got/10)"

# the other way: lan1 joins 239.2.2.2 (its report makes the gateway join on
# IB), ib2 sends; lan2, on the other segment, hears nothing; and an IB
# host's membership report reaches the LAN
ns lan2 ip route add 224.0.0.0/4 dev eth0
ns_bg TDI lan1 tcpdump -l -n -i eth0 igmp >"$T/igmp.txt" 2>/dev/null
ns_bg MJ lan1 python3 "$T/recv.py" 239.2.2.2 6000 join >"$T/mj2.out"
ns_bg MN lan2 python3 "$T/recv.py" 239.2.2.2 6000 join >"$T/mn2.out"
listening2() { grep -q listening "$T/mj2.out" && grep -q listening "$T/mn2.out"; }
eventually listening2 || fail "multicast receivers on the LAN"
ns_bg MI ib1 python3 "$T/recv.py" 239.2.2.2 6000 join >"$T/mi2.out"	# an IB member too
sleep 1.5
ns ib2 python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 2)
for i in range(10):
    s.sendto(b"ib-stream-%d" % i, ("239.2.2.2", 6000)); time.sleep(0.1)'
wait "$MJ"; wait "$MN"; wait "$MI"
kill "$TDI" 2>/dev/null; wait "$TDI" 2>/dev/null
got=$(sed -n 's/^received //p' "$T/mj2.out")
[ "${got:-0}" -ge 8 ] || fail "lan1 received $got of 10 multicast datagrams from ib2"
expect_eq "multicast from p1 to lan2, on p2's segment" "$(sed -n 's/^received //p' "$T/mn2.out")" 0
grep -q "10.41.0.1 > 224.0.0.22: igmp v3 report" "$T/igmp.txt" || { cat "$T/igmp.txt"; fail "ib1's membership report did not reach the LAN"; }
ok "multicast stream ib2 -> lan1 ($got/10); ib1's IGMP report seen on the LAN"

# IPv6 to a group, above the LAN's MTU: the gateway's Packet Too Big comes
# from its link-local address on IB (from the group's address, the IB
# host's kernel drops it and never fragments), so ib2's next datagrams
# cross in fragments
ns_bg MJ lan1 python3 "$TOP/tests/integration/mcast6_recv.py" ff15::4141 6002 eth0 1800 >"$T/mj6.out"
listening6() { grep -q listening "$T/mj6.out"; }
eventually listening6 || fail "IPv6 multicast receiver on the LAN"
ns_bg TD6 ib2 tcpdump -l -n -i ib0 'icmp6 and ip6[40] == 2' >"$T/ptb6.txt" 2>/dev/null
sleep 1.5	# lan1's MLD report, the gateway's join; tcpdump up
ns ib2 python3 -c '
import socket, time
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, socket.if_nametoindex("ib0"))
for i in range(5):
    try:
        s.sendto(b"m" * 1800, ("ff15::4141", 6002))
    except OSError:
        pass
    time.sleep(0.3)'
wait "$MJ"
sleep 0.3
kill "$TD6" 2>/dev/null; wait "$TD6" 2>/dev/null
got=$(sed -n 's/^received //p' "$T/mj6.out")
grep -q "packet too big, mtu 1500" "$T/ptb6.txt" || { cat "$T/ptb6.txt"; fail "ib2: no Packet Too Big for 1800 bytes to ff15::4141"; }
grep -q "^[0-9:.]* IP6 ff" "$T/ptb6.txt" && { cat "$T/ptb6.txt"; fail "Packet Too Big from a multicast address"; }
[ "${got:-0}" -ge 3 ] || { cat "$T/ptb6.txt"; fail "lan1 received ${got:-0} of 5 IPv6 datagrams of 1800 bytes from ib2"; }
ok "IPv6 multicast above the LAN's MTU: Packet Too Big from $(sed -n 's/^[0-9:.]* IP6 \([^ ]*\) >.*/\1/p' "$T/ptb6.txt" | head -n1), $got of 5 reached lan1 in fragments"

# --- the segment's directed broadcast (10.41.0.255), both ways -------------------------------
# IPoIB sends it to the broadcast group; a bridge floods it: the gateway
# puts it on the segment as Ethernet broadcast, not ARPing for .255
bsend() {	# NS: five datagrams to 10.41.0.255:6100
	ns "$1" python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
for i in range(5):
    s.sendto(b"bcast-%d" % i, ("10.41.0.255", 6100)); time.sleep(0.1)'
}
for dir in "ib1 lan1" "lan1 ib2"; do
	set -- $dir
	ns_bg BR "$2" python3 "$T/recv.py" 0.0.0.0 6100 >"$T/br-$2.out"
	eventually grep -q listening "$T/br-$2.out" || fail "broadcast receiver on $2"
	bsend "$1"
	wait "$BR"
	got=$(sed -n 's/^received //p' "$T/br-$2.out")
	[ "${got:-0}" -ge 4 ] || fail "$2 received $got of 5 datagrams $1 sent to 10.41.0.255"
done
ok "directed broadcast 10.41.0.255: ib1 -> lan1 and lan1 -> ib2"

# --- isolation ---------------------------------------------------------------------------
ns lan2 ping -c 2 -W 1 10.41.0.1 >/dev/null 2>&1 && fail "lan2 (segment of p2) reached ib1 (p1)"
ns ib3 ping -c 2 -W 1 10.41.0.50 >/dev/null 2>&1 && fail "ib3 (p2) reached lan1 (p1's segment)"
ns ib1 ping -c 2 -W 1 10.42.0.50 >/dev/null 2>&1 && fail "ib1 reached lan2"
ok "partitions and segments isolated"

# --- the trunk: tagged frames ------------------------------------------------------------------
cat >"$T/vlan.py" <<'PY'
# A host on VLAN 100 of the trunk, in raw frames (no 8021q needed): ARP for
# the IB host, then an ICMP echo to the MAC it answered with; then a frame
# on VLAN 200, which nobody maps.
import socket, struct, sys, time
me_mac = bytes.fromhex("020000000064"); me_ip = socket.inet_aton("10.45.0.99")
ib_ip = socket.inet_aton("10.45.0.5")
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind(("eth0", 0))
s.setsockopt(263, 8, 1)   # SOL_PACKET, PACKET_AUXDATA
s.settimeout(0.5)
def tag(vid, etype): return struct.pack("!HHH", 0x8100, vid, etype)
def recv_tagged(want_type, until):
    while time.time() < until:
        try:
            data, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(20))
        except socket.timeout:
            continue
        vid = None
        for lvl, typ, cd in anc:
            if lvl == 263 and typ == 8:      # SOL_PACKET, PACKET_AUXDATA
                st, ln, sl, mac, net, tci, tpid = struct.unpack("IIIHHHH", cd[:20])
                if st & 0x10: vid = tci & 0xfff   # TP_STATUS_VLAN_VALID
        et = struct.unpack("!H", data[12:14])[0]
        body = data[14:]
        if et == 0x8100:
            vid = struct.unpack("!H", data[14:16])[0] & 0xfff
            et = struct.unpack("!H", data[16:18])[0]; body = data[18:]
        if data[0:6] == me_mac and et == want_type:
            return vid, data[6:12], body
    return None
def csum(b):
    if len(b) % 2: b += b"\0"
    t = sum(struct.unpack("!%dH" % (len(b) // 2), b)); t = (t >> 16) + (t & 0xffff); t += t >> 16
    return ~t & 0xffff
arp = struct.pack("!HHBBH", 1, 0x800, 6, 4, 1) + me_mac + me_ip + b"\0" * 6 + ib_ip
for attempt in range(4):
    s.send(b"\xff" * 6 + me_mac + tag(100, 0x806) + arp)
    r = recv_tagged(0x806, time.time() + 1)
    if r: break
if not r: print("no ARP reply"); sys.exit(1)
vid, src, body = r
if vid != 100: print("ARP reply not on VLAN 100:", vid); sys.exit(1)
if struct.unpack("!H", body[6:8])[0] != 2 or body[14:18] != ib_ip: print("bad ARP reply"); sys.exit(1)
ib_mac = body[8:14]
icmp = struct.pack("!BBHHH", 8, 0, 0, 7, 1) + b"trunk-ping"
icmp = icmp[:2] + struct.pack("!H", csum(icmp)) + icmp[4:]
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(icmp), 1, 0, 64, 1, 0, me_ip, ib_ip)
ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
s.send(ib_mac + me_mac + tag(100, 0x800) + ip + icmp)
r = recv_tagged(0x800, time.time() + 3)
if not r: print("no echo reply"); sys.exit(1)
vid, src, body = r
if vid != 100 or body[9] != 1 or body[20] != 0 or b"trunk-ping" not in body:
    print("bad echo reply", vid); sys.exit(1)
s.send(b"\xff" * 6 + me_mac + tag(200, 0x806) + arp)
print("vlan ok", ":".join("%02x" % c for c in ib_mac))
PY
ns tr ip link set eth0 up
ns tr python3 "$T/vlan.py" >"$T/vlan.out" 2>&1 || { cat "$T/vlan.out" "$T/gw.log"; fail "tagged frames on the trunk"; }
grep -q "vlan ok" "$T/vlan.out" || fail "trunk: $(cat "$T/vlan.out")"
ok "trunk: tagged ARP and ICMP echo on VLAN 100 answered tagged"

# --- router mode --------------------------------------------------------------------------------
ns lan3 ping -c 2 -W 2 10.43.0.1 >/dev/null || fail "lan3 -> ib4 through the router"
ns ib4 ping -c 2 -W 2 10.44.0.1 >/dev/null || fail "ib4 -> lan3"
ns_bg S4 lan3 iperf3 -s -p 5204 >/dev/null 2>&1
ns_bg H4 ib4 python3 -m http.server -d "$T/www" -b 10.43.0.1 8084
sleep 0.5
ns ib4 iperf3 -c 10.44.0.1 -p 5204 -t 2 -J >"$T/i4.json" || { cat "$T/i4.json"; fail "iperf3 ib4 -> lan3"; }
ns lan3 curl -sf --max-time 10 http://10.43.0.1:8084/ | grep -q "hello from the lan" || fail "curl lan3 -> ib4"
ns ib4 ping -M do -s 2000 -c 1 -W 2 10.44.0.1 >"$T/df4" 2>&1
grep -q "Frag needed and DF set (mtu = 1500)\|message too long, mtu=1500" "$T/df4" || { cat "$T/df4"; fail "router: no fragmentation-needed"; }
ok "router: ping, iperf3 $(( $(iperf_rate "$T/i4.json") / 1000000 )) Mb/s, curl, frag-needed"
# the router interface is ipoibd's TUN path: the same MTU and carrier rules
ns gw ip link set ib8003 mtu 4000 || fail "ip link set ib8003 mtu 4000"
r_mtu_back() { [ "$(ns gw cat /sys/class/net/ib8003/mtu)" = 2044 ]; }
for _ in $(seq 1 40); do r_mtu_back && break; sleep 0.05; done
r_mtu_back || fail "router: MTU 4000 not put back within 2 s: $(ns gw cat /sys/class/net/ib8003/mtu)"
grep -q "ib8003: MTU 4000 refused: the link carries at most 2044 (datagram mode); MTU 2044 again" "$T/gw.log" ||
	{ tail "$T/gw.log"; fail "router: no log line for the refused MTU"; }
ctl port gw down >/dev/null || fail "port gw down"
r_carrier() { [ "$(ns gw cat /sys/class/net/ib8003/carrier 2>&1)" = "$1" ]; }
eventually r_carrier 0 || fail "router: ib8003's carrier with the port down: $(ns gw cat /sys/class/net/ib8003/carrier 2>&1)"
ns gw ip link show dev ib8003 | grep -q NO-CARRIER || fail "router: ib8003 without NO-CARRIER with the port down"
ctl port gw up >/dev/null || fail "port gw up"
eventually r_carrier 1 || { tail "$T/gw.log"; fail "router: ib8003's carrier after the port came back"; }
r_back() { ns lan3 ping -c 1 -W 1 10.43.0.1 >/dev/null 2>&1; }
eventually r_back || fail "router: lan3 -> ib4 after the gateway's port came back"
t_back() { ns lan1 ping -c 1 -W 1 10.41.0.1 >/dev/null 2>&1; }
eventually t_back || fail "transparent: lan1 -> ib1 after the gateway's port came back"
ok "router: MTU 4000 put back to 2044; NO-CARRIER while the port is down, traffic after"

# --- malformed frames on a segment; counters -------------------------------------------------------
ns lan1 python3 - <<'PY'
import socket, os
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("eth0", 0))
me = bytes.fromhex("020000000077")
bc = b"\xff" * 6
frames = [bc + me + b"\x08\x00" + b"\x45\x00\x05\xdc" + os.urandom(16),  # IPv4 longer than the frame
          bc + me + b"\x08\x06" + b"\x99\x99" + os.urandom(26),            # ARP, unknown hardware
          bc + me + b"\x86\xdd" + b"\x60\0\0\0\xff\xff" + os.urandom(34),  # IPv6 longer than the frame
          bc + me + b"\x81\x00\x00\x05\x08\x00" + os.urandom(40)]        # tagged on an access tap
for f in frames * 5:
    s.send(f.ljust(60, b"\0"))
PY
sleep 0.5
kill -USR1 "$GW_PID"
# the SIGUSR1 report: ibgwctl's tables, "stats PARTITION SIDE NAME VALUE"
rep() {	# PARTITION SIDE NAME -> the latest value
	awk -v p="$1" -v s="$2" -v n="$3" '$2 == "stats" && $3 == p && $4 == s && $5 == n { v = $6 } END { print v }' "$T/gw.log"
}
stat() { [ -n "$(rep p1 eth drop.eth_vlan)" ]; }
eventually stat || fail "no report"
bad=$(rep p1 eth drop.eth_malformed)
vl=$(rep p1 eth drop.eth_vlan)
um=$(rep trunk eth drop.unmapped_vlan)
frag=$(rep p1 eth fragmented)
clamped=$(rep p1 eth mss_clamped)
[ "${frag:-0}" -ge 2 ] || fail "the gateway fragmented $frag packets (2 pings without DF)"
[ "${clamped:-0}" -ge 1 ] || fail "no SYN clamped"
# (a bridge with br_netfilter drops bad IP headers before the tap; the
# ARP ones always arrive)
[ "${bad:-0}" -ge 5 ] || fail "malformed frames counted: $bad"
[ "${vl:-0}" -ge 5 ] || fail "tagged frames on an access tap counted: $vl"
[ "${um:-0}" -ge 1 ] || fail "VLAN 200 on the trunk counted: $um"
kill -0 "$GW_PID" || fail "ibgwd died"
ns lan1 ping -c 1 -W 2 10.41.0.1 >/dev/null || fail "lan1 -> ib1 after the garbage"
ok "malformed: $bad counted, $vl with a tag on a tap, $um on unmapped VLANs; still forwarding"

# --- ibgwctl ------------------------------------------------------------------------------
C() { "$BIN/ibgwctl" -s "$T/ibgwd.sock" "$@"; }
C show summary >"$T/sum" || fail "ibgwctl show summary"
grep -q "partitions 4, 4 with carrier" "$T/sum" || { cat "$T/sum"; fail "summary"; }
C show partitions | grep -q "^p5 *0x8005 transparent trunk0.100 *up" || { C show partitions; fail "show partitions"; }
C -j show partitions >"$T/parts.json" || fail "ibgwctl -j show partitions"
python3 - "$T/parts.json" <<'PY' || fail "partitions JSON"
import json, sys
d = json.load(open(sys.argv[1]))["partitions"]
by = {p["name"]: p for p in d}
assert set(by) == {"p1", "p2", "p3", "p5"}, by.keys()
assert by["p1"]["pkey"] == "0x8001" and by["p1"]["mode"] == "transparent"
assert by["p1"]["interface"] == "gwtap1" and by["p1"]["bridge"] == "br1"
assert by["p3"]["mode"] == "router" and by["p3"]["interface"] == "ib8003"
assert by["p5"]["vlan"] == 100 and all(p["carrier"] for p in d)
assert all(p["mtu"] == 2044 and p["eth_mtu"] == 1500 for p in d)
PY
C -j show stats >"$T/stats.json" || fail "ibgwctl -j show stats"
python3 - "$T/stats.json" <<'PY' || fail "stats JSON"
import json, sys
d = json.load(open(sys.argv[1]))
p = {x["name"]: x for x in d["partitions"]}
assert p["p1"]["eth"]["arp_answered"] >= 1
assert p["p1"]["eth"]["to_ib_packets"] > 1000 and p["p1"]["eth"]["from_ib_packets"] > 1000
assert p["p1"]["eth"]["drop.eth_malformed"] >= 5 and p["p1"]["eth"]["mss_clamped"] >= 1
assert p["p1"]["ib"]["tx_packets"] > 1000 and "drop.rx_malformed" in p["p1"]["ib"]
assert p["p3"]["eth"]["tx_super_packets"] >= 0 and d["trunk"]["drop.unmapped_vlan"] >= 1
PY
C -j show neighbors >"$T/neigh.json" || fail "ibgwctl -j show neighbors"
python3 - "$T/neigh.json" "$mac" <<'PY' || fail "neighbors JSON"
import json, sys
n = json.load(open(sys.argv[1]))["neighbors"]
assert any(x["side"] == "ib" and x["ip"] == "10.41.0.1" and x["state"] == "REACHABLE" for x in n)
assert any(x["side"] == "eth" and x["ip"] == "10.41.0.50" for x in n)
assert any(x["side"] == "mac" and x["mac"] == sys.argv[2] for x in n)
PY
C -j show groups | python3 -c 'import json,sys; g = json.load(sys.stdin)["groups"]; assert any(x["partition"] == "p1" and x["mgid"] == "ff12:401b:8001::ffff:ffff" and x["state"] == "joined" for x in g)' || fail "groups JSON"
C show frob >"$T/out" 2>"$T/err"
rc=$?
# a usage error, said by ibgwctl itself (exit 2) before asking ibgwd
[ "$rc" = 2 ] || fail "ibgwctl show frob: exit $rc, want 2"
grep -q "^ibgwctl: usage: show summary|partitions|neighbors|groups|stats" "$T/err" ||
	fail "ibgwctl show frob: $(cat "$T/err")"
# the daemon's own refusals come through as it says them (exit 1)
C partition del frob >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" = 1 ] || fail "ibgwctl partition del frob: exit $rc, want 1"
grep -q "^ibgwctl: no partition frob" "$T/err" || fail "the daemon's error: $(cat "$T/err")"
ok "ibgwctl: show summary, partitions, stats, neighbors, groups (text and JSON); errors come through"

# --- clean stop ---------------------------------------------------------------------------------
kill -TERM "$GW_PID"
wait "$GW_PID"
st=$?
[ "$st" = 0 ] || { tail -40 "$T/gw.log"; fail "ibgwd exit status $st"; }
for i in gwtap1 gwtap2 ib8003; do
	ns gw ip link show "$i" >/dev/null 2>&1 && fail "$i left behind"
done
[ -e "$T/ibgwd.sock" ] && fail "control socket left behind"
grep -q "stopped" "$T/gw.log" || fail "no 'stopped' in the log"
ok "gateway"
