#!/bin/bash
# DHCP over IPoIB (RFC 4390): ipoibd --dhcp against dnsmasq, a real DHCP
# server, as the oracle.
#  a) dnsmasq on the IB host srv: h1 gets an address of the range with its
#     prefix and the default route from the router option (proto dhcp),
#     pings srv; dnsmasq's lease names h1 by its client-identifier
#     ff:00:00:00:00:00:02:00:00:02:c9:00:GUID; tshark decodes the
#     capture's DISCOVER and REQUEST as RFC 4390 wants them: hardware type
#     32 (0x20), length 0, the broadcast flag, and the identifier (IAID 0,
#     DUID-EN 713, 00 and the port GUID); nothing malformed
#  b) the renewal at T1 (6 s, dnsmasq's option 58): a REQUEST from the
#     address to the server, unicast, ACKed (dnsmasq's log, our counters);
#     b2) the address deleted by hand comes back with the next renewal
#  c) dhcp-host=id:CLIENT-ID: h2 gets the address reserved for it
#  d) replies broadcast to port 68 that are malformed (short, no magic
#     cookie) are counted (dhcp.rx_bad), the lease kept
#  e) dnsmasq restarted, authoritative for another range: h1's renewal is
#     refused (DHCPNAK), it drops its address and takes one of the new range
#  f) through ibgwd in transparent mode, dnsmasq on a LAN host: an IB host
#     of the partition gets an address of the LAN's range and pings it;
#     f2) the same with Kea, which answers to the query's source MAC (the
#     gateway's)
#  g) through ibgwd in router mode, dnsmasq as a relay on the gateway host
#     (giaddr: the gateway's IB-side address) and as the server on a routed
#     LAN: an IB host gets an address of its own subnet's range, and its
#     default route via the gateway reaches the LAN server
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
. "$(dirname "$0")/sdp.bash"
for t in dnsmasq kea-dhcp4 tshark python3 ping; do
	command -v $t >/dev/null || fail "$t not installed (make deps)"
done

cat >"$T/partitions.conf" <<'CONF'
Default=0x7fff, ipoib : ALL=full;
p1=0x8001, ipoib : ib1=full, ib2=full, gw=full;
p3=0x8003, ipoib : ib4=full, gw=full;
CONF
start_fabric -P "$T/partitions.conf" --pcap "$T/cap.pcap"

# dnsmasq NS NAME ARGS...: a DHCP server (no DNS) in NS, its log in
# $T/NAME.log, its leases in $T/NAME.leases, its PID in NAME_PID
dnsmasq_bg() {
	local n=$1 name=$2
	shift 2
	ns_bg "${name}_PID" "$n" dnsmasq --no-daemon --port=0 --user=root \
		--log-dhcp --log-facility=- --dhcp-leasefile="$T/$name.leases" \
		--pid-file="$T/$name.pid" "$@" >>"$T/$name.log" 2>&1
}

# v4 HOST: its IPv4 address on ib0, if any
v4() {
	ns "$1" ip -4 -o addr show dev ib0 | sed -n 's/.* inet \([0-9.]*\)\/.*/\1/p' | head -n1
}

# guid HOST: its port GUID, from ipoibd's ready line (the last 8 bytes of
# the 20-byte address)
guid() {
	sed -n 's/.*ready: .* address \(.*\)$/\1/p' "$T/$1.log" | head -n1 |
		cut -d: -f13-20
}

sdp_host srv --address 10.9.0.1/24 --no-sdp --no-rds
dnsmasq_bg srv dm --interface=ib0 --bind-interfaces \
	--dhcp-range=10.9.0.100,10.9.0.150,255.255.255.0,2m \
	--dhcp-option=option:router,10.9.0.1 \
	--dhcp-option=option:T1,6 --dhcp-option=option:T2,9
dm_up() { grep -q "DHCP, IP range 10.9.0.100" "$T/dm.log"; }
eventually dm_up || { cat "$T/dm.log"; fail "dnsmasq did not start"; }

# --- a) an address, a route, the wire -----------------------------------------
sdp_host h1 --dhcp --no-sdp --no-rds
got() { [ -n "$(v4 h1)" ]; }
eventually got || { tail -n 20 "$T/h1.log" "$T/dm.log"; fail "a) h1 got no address"; }
A1=$(v4 h1)
case $A1 in
10.9.0.1[0-4][0-9]|10.9.0.150) ;;
*) fail "a) h1's address $A1 is not of the range" ;;
esac
ns h1 ip -4 -o addr show dev ib0 | grep -q "inet $A1/24 " || fail "a) $A1 without its /24"
ns h1 ip route show default | grep -q "default via 10.9.0.1 dev ib0 proto dhcp" ||
	fail "a) no default route from the router option: $(ns h1 ip route)"
ns h1 ping -c 2 -W 2 10.9.0.1 >/dev/null || fail "a) h1 ($A1) cannot ping srv"
G1=$(guid h1)
[ -n "$G1" ] || fail "a) no GUID in h1's ready line"
CID1="ff:00:00:00:00:00:02:00:00:02:c9:00:$G1"
grep -q " $A1 .* $CID1\$" "$T/dm.leases" ||
	fail "a) dnsmasq's lease of $A1 does not name $CID1: $(cat "$T/dm.leases")"
grep -q "DHCPACK(ib0) $A1 $CID1" "$T/dm.log" || fail "a) no DHCPACK in dnsmasq's log"
tshark -r "$T/cap.pcap" -Y 'dhcp.option.dhcp == 1 || dhcp.option.dhcp == 3' \
	-T fields -e dhcp.option.dhcp -e dhcp.hw.type -e dhcp.hw.len \
	-e dhcp.flags.bc -e dhcp.hw.mac_addr -e dhcp.client_id.iaid \
	-e dhcp.client_id.duid_type -e dhcp.client_id.enterprise_num \
	-e dhcp.client_id >"$T/fields" 2>"$T/tshark.err" ||
	{ cat "$T/tshark.err"; fail "a) tshark"; }
g=$(echo "$G1" | tr -d :)
grep -q "^1	0x20	0	1		00000000	2	713	00$g\$" "$T/fields" ||
	fail "a) no DISCOVER as RFC 4390's in the capture: $(head -n 3 "$T/fields")"
grep -q "^3	0x20	0	1		00000000	2	713	00$g\$" "$T/fields" ||
	fail "a) no REQUEST as RFC 4390's in the capture: $(head -n 3 "$T/fields")"
n=$(tshark -r "$T/cap.pcap" -Y 'dhcp && _ws.malformed' 2>/dev/null | wc -l)
expect_eq "a) malformed DHCP frames in the capture" "$n" 0
ok "a) h1 took $A1/24 and the default route from dnsmasq on IPoIB, as $CID1"

# --- b) the renewal at T1 --------------------------------------------------------
r0=$(stat_of h1 dhcp.renewals)
renewed() { [ "$(stat_of h1 dhcp.renewals)" -gt "$r0" ]; }
for i in $(seq 1 30); do renewed && break; sleep 0.5; done
renewed || { tail "$T/dm.log"; fail "b) no renewal within 15 s (T1 is 6 s)"; }
grep -q "DHCPREQUEST(ib0) $A1 $CID1" "$T/dm.log" || fail "b) dnsmasq saw no REQUEST for $A1"
tshark -r "$T/cap.pcap" -Y "dhcp.option.dhcp == 3 && ip.src == $A1 && ip.dst == 10.9.0.1" \
	-T fields -e dhcp.ip.client -e dhcp.flags.bc 2>/dev/null | grep -q "^$A1	0\$" ||
	fail "b) the renewal is not a unicast REQUEST with ciaddr $A1"
expect_eq "b) h1 keeps $A1" "$(v4 h1)" "$A1"
ok "b) renewed at T1: unicast REQUEST from $A1, ACKed"

# b2) the address deleted by hand (the kernel takes the default route
# through it along): the next renewal puts both back, as dhclient does
ns h1 ip addr del "$A1/24" dev ib0 || fail "b2) ip addr del"
r1=$(stat_of h1 dhcp.renewals)
back() { ns h1 ip -4 -o addr show dev ib0 | grep -q "inet $A1/24 " &&
	 ns h1 ip route show default | grep -q "default via 10.9.0.1 dev ib0 proto dhcp"; }
for i in $(seq 1 30); do back && break; sleep 0.5; done
back || fail "b2) $A1 and its route not back after a renewal: $(ns h1 ip -4 addr show dev ib0; ns h1 ip route)"
[ "$(stat_of h1 dhcp.renewals)" -gt "$r1" ] || fail "b2) back without a renewal?"
ns h1 ping -c 1 -W 2 10.9.0.1 >/dev/null || fail "b2) h1 cannot ping srv"
ok "b2) $A1 deleted by hand: the next renewal added it and the default route again"

# --- c) a reservation by client-identifier ----------------------------------------
# (h2's GUID is its node's: read from a first run without --dhcp)
sdp_host h2 --no-sdp --no-rds
G2=$(guid h2)
[ -n "$G2" ] || fail "c) no GUID in h2's ready line"
kill "$h2_PID"
wait "$h2_PID" 2>/dev/null
ns_del_h2() { ip netns del "$(_ns_real h2)"; }
ns_del_h2
CID2="ff:00:00:00:00:00:02:00:00:02:c9:00:$G2"
echo "id:$CID2,10.9.0.77" >"$T/hosts"
kill "$dm_PID"
wait "$dm_PID" 2>/dev/null
dnsmasq_bg srv dm --interface=ib0 --bind-interfaces \
	--dhcp-range=10.9.0.100,10.9.0.150,255.255.255.0,2m \
	--dhcp-option=option:router,10.9.0.1 \
	--dhcp-option=option:T1,6 --dhcp-option=option:T2,9 \
	--dhcp-hostsfile="$T/hosts"
sleep 0.5
sdp_host h2 --dhcp --no-sdp --no-rds
got2() { [ -n "$(v4 h2)" ]; }
eventually got2 || { tail -n 20 "$T/h2.log" "$T/dm.log"; fail "c) h2 got no address"; }
expect_eq "c) h2's address, reserved for its client-identifier" "$(v4 h2)" 10.9.0.77
ok "c) dhcp-host=id:$CID2 gave h2 10.9.0.77"

# --- d) malformed replies --------------------------------------------------------
b0=$(stat_of h1 dhcp.rx_bad)
ns srv python3 - <<'PY'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b"ib0")
s.sendto(b"\x02" * 40, ("255.255.255.255", 68))                # short
s.sendto(b"\x02\x20" + bytes(234) + b"nope" + b"\xff", ("255.255.255.255", 68))
PY
bad() { [ "$(stat_of h1 dhcp.rx_bad)" -ge $((b0 + 2)) ]; }
eventually bad || fail "d) malformed replies not counted: $(stat_of h1 dhcp.rx_bad)"
expect_eq "d) h1 keeps $A1" "$(v4 h1)" "$A1"
ok "d) malformed replies to port 68 counted (dhcp.rx_bad), the lease kept"

# --- e) refused: DHCPNAK ---------------------------------------------------------
n0=$(stat_of h1 dhcp.rx_nak)
kill "$dm_PID"
wait "$dm_PID" 2>/dev/null
# (no router option: dnsmasq would give its own address; the default
# route of the old lease must go with it)
dnsmasq_bg srv dm --interface=ib0 --bind-interfaces --dhcp-authoritative \
	--dhcp-range=10.9.0.200,10.9.0.210,255.255.255.0,2m --dhcp-option=3 \
	--dhcp-option=option:T1,6 --dhcp-option=option:T2,9
moved() { case $(v4 h1) in 10.9.0.2[01][0-9]) return 0 ;; esac; return 1; }
for i in $(seq 1 40); do moved && break; sleep 0.5; done
moved || { tail -n 20 "$T/h1.log" "$T/dm.log"; fail "e) h1 did not move to the new range: $(v4 h1)"; }
[ "$(stat_of h1 dhcp.rx_nak)" -gt "$n0" ] || fail "e) no DHCPNAK counted"
grep -q "DHCPNAK(ib0) $A1 $CID1" "$T/dm.log" || fail "e) dnsmasq sent no DHCPNAK for $A1"
ns h1 ip -4 -o addr show dev ib0 | grep -q "inet $A1/" && fail "e) $A1 still on h1"
ns h1 ip route show default | grep -q default && fail "e) a default route is left: $(ns h1 ip route)"
ok "e) refused by the new authoritative server: $A1 dropped, $(v4 h1) taken"
kill "$dm_PID"
wait "$dm_PID" 2>/dev/null

# --- f), g) through the gateway ----------------------------------------------------
#   ib1 (0x8001) == gw: transparent, tap gwtap1 in br1 == lan1 (dnsmasq)
#   ib4 (0x8003) == gw: router, ib8003 10.43.0.254 (dnsmasq relay) -- lan3
ns_add gw
ns_add lan1
ns_add lan3
ns gw ip link add br1 type bridge
ns gw ip link set br1 up
ns_veth gw v1 lan1 eth0
ns_veth gw v3 lan3 eth0
ns gw ip link set v1 master br1
ns lan1 ip addr add 10.41.0.50/24 dev eth0
ns gw ip addr add 10.44.0.254/24 dev v3
ns lan3 ip addr add 10.44.0.1/24 dev eth0
ns lan3 ip route add default via 10.44.0.254
cat >"$T/ibgw.conf" <<CONF
[gateway]
fabric = soft:$SOCK
node = gw
control = $T/ibgwd.sock

[partition p1]
pkey = 0x8001
tap = gwtap1
bridge = br1

[partition p3]
pkey = 0x8003
mode = router
ifname = ib8003
address = 10.43.0.254/24
CONF
ns_bg GW_PID gw "$BIN/ibgwd" -f -c "$T/ibgw.conf" >"$T/gw.log" 2>&1
gw_ready() { grep -q "ready: 2 partition" "$T/gw.log"; }
eventually gw_ready || { cat "$T/gw.log"; fail "ibgwd not ready"; }

dnsmasq_bg lan1 dml --interface=eth0 --bind-interfaces \
	--dhcp-range=10.41.0.100,10.41.0.150,255.255.255.0,2m
dml_up() { grep -q "DHCP, IP range 10.41.0.100" "$T/dml.log"; }
eventually dml_up || { cat "$T/dml.log"; fail "f) dnsmasq on lan1 did not start"; }
sdp_host ib1 --dhcp -p 0x8001 --no-sdp --no-rds
got_ib1() { [ -n "$(v4 ib1)" ]; }
eventually got_ib1 || { tail -n 20 "$T/ib1.log" "$T/dml.log" "$T/gw.log"; fail "f) ib1 got no address through the transparent gateway"; }
AI=$(v4 ib1)
case $AI in
10.41.0.1[0-4][0-9]|10.41.0.150) ;;
*) fail "f) ib1's address $AI is not of lan1's range" ;;
esac
grep -q "DHCPACK(eth0) $AI ff:00:00:00:00:00:02:00:00:02:c9:00:$(guid ib1)" "$T/dml.log" ||
	fail "f) dnsmasq on lan1 did not ACK $AI for ib1's client-identifier"
ns ib1 ping -c 3 -W 2 10.41.0.50 >/dev/null || fail "f) ib1 ($AI) cannot ping lan1"
ok "f) transparent gateway: ib1 took $AI from dnsmasq on the LAN, and reaches it"

# f2) the same with Kea (raw sockets, its default), which answers a
# broadcast query to the query's source MAC, the gateway's own: the
# gateway hands it to the broadcast group (it dropped it as not ours)
kill "$dml_PID"
wait "$dml_PID" 2>/dev/null
cat >"$T/kea.json" <<JSON
{"Dhcp4": {"interfaces-config": {"interfaces": ["eth0"]},
 "lease-database": {"type": "memfile", "persist": false},
 "valid-lifetime": 120,
 "subnet4": [{"id": 1, "subnet": "10.41.0.0/24",
              "pools": [{"pool": "10.41.0.160 - 10.41.0.170"}]}],
 "loggers": [{"name": "kea-dhcp4", "severity": "INFO",
              "output_options": [{"output": "stdout"}]}]}}
JSON
ns_bg KEA_PID lan1 env \
	KEA_LOCKFILE_DIR="$T" KEA_PIDFILE_DIR="$T" kea-dhcp4 -c "$T/kea.json" >"$T/kea.log" 2>&1
kea_up() { grep -q "DHCP4_STARTED" "$T/kea.log"; }
eventually kea_up || { cat "$T/kea.log"; fail "f2) kea-dhcp4 did not start"; }
sdp_host ib2 --dhcp -p 0x8001 --no-sdp --no-rds
got_ib2() { [ -n "$(v4 ib2)" ]; }
for i in $(seq 1 3); do got_ib2 && break; eventually got_ib2; done
got_ib2 || { tail -n 20 "$T/ib2.log" "$T/kea.log"; fail "f2) ib2 got no address from Kea through the transparent gateway"; }
case $(v4 ib2) in
10.41.0.1[67][0-9]) ;;
*) fail "f2) ib2's address $(v4 ib2) is not of Kea's pool" ;;
esac
grep -q "DHCP4_LEASE_ALLOC.*hwtype=32" "$T/kea.log" ||
	fail "f2) Kea logged no lease for hardware type 32: $(tail -n 5 "$T/kea.log")"
ns ib2 ping -c 3 -W 2 10.41.0.50 >/dev/null || fail "f2) ib2 cannot ping lan1"
ok "f2) transparent gateway: ib2 took $(v4 ib2) from Kea on the LAN (its answer to the gateway's MAC went to the broadcast group)"
kill "$KEA_PID"
wait "$KEA_PID" 2>/dev/null

# g) router mode: a relay on the gateway host, the server on lan3
dnsmasq_bg lan3 dm3 --interface=eth0 --bind-interfaces \
	--dhcp-range=10.43.0.100,10.43.0.150,255.255.255.0,2m \
	--dhcp-option=option:router,10.43.0.254
dnsmasq_bg gw relay --interface=ib8003 --bind-interfaces \
	--dhcp-relay=10.43.0.254,10.44.0.1
rl_up() { grep -q "DHCP relay" "$T/relay.log" && grep -q "DHCP, IP range 10.43.0.100" "$T/dm3.log"; }
eventually rl_up || { cat "$T/relay.log" "$T/dm3.log"; fail "g) dnsmasq relay or server did not start"; }
sdp_host ib4 --dhcp -p 0x8003 --no-sdp --no-rds
got_ib4() { [ -n "$(v4 ib4)" ]; }
eventually got_ib4 || { tail -n 20 "$T/ib4.log" "$T/relay.log" "$T/dm3.log"; fail "g) ib4 got no address through the relay"; }
A4=$(v4 ib4)
case $A4 in
10.43.0.1[0-4][0-9]|10.43.0.150) ;;
*) fail "g) ib4's address $A4 is not of its subnet's range" ;;
esac
grep -q "DHCPACK(eth0) $A4 ff:00:00:00:00:00:02:00:00:02:c9:00:$(guid ib4)" "$T/dm3.log" ||
	fail "g) the server on lan3 did not ACK $A4 for ib4"
ns ib4 ip route show default | grep -q "default via 10.43.0.254 dev ib0 proto dhcp" ||
	fail "g) no default route via the gateway: $(ns ib4 ip route)"
ns ib4 ping -c 3 -W 2 10.44.0.1 >/dev/null || fail "g) ib4 ($A4) cannot reach lan3 through the gateway"
ok "g) router gateway: ib4 took $A4 through dnsmasq's relay on the gateway host, and reaches the server's LAN by its default route"
