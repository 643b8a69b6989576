#!/bin/bash
# rds_gids (ibgwd on a RoCE port: LAN addresses as GIDs of the port,
# gateway/gw_gids.c) checked for what it must do to the kernel's routing,
# through tests/nltest gids-add/gids-del, with no RoCE device: three
# namespaces, an IB host h (10.77.0.1, fd77::1) on the gateway g's port
# netdev eth9 (10.77.0.2, fd77::2), and the LAN l (10.2.0.2, fd02::2)
# behind g (lan0: 10.2.0.1, fd02::1), g forwarding.  Before: UDP to
# 10.2.0.2 port 4791 from h goes on to l.  With rds_gids = 10.2.0.2,
# 10.2.0.8/30, fd02::2: the addresses are on eth9 (where rdma_rxe and RoCE
# NICs take their GIDs from) and UDP 4791 arriving there for them is
# delivered in g (to the RoCE device), while UDP to any other port, pings
# and g's own traffic to them still go to l, and g answers no ARP for
# them on eth9.  Again (the state a killed gateway leaves): accepted.
# After gids-del nothing of it is left and 4791 goes to l again.  IPv6
# likewise.  Traffic stays inside the namespaces.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
NLTEST=$BIN/tests/nltest
[ -x "$NLTEST" ] || fail "no $NLTEST (make)"
[ "$(id -u)" -eq 0 ] || skip "needs root"
for t in ip python3 arping; do
	command -v $t >/dev/null || fail "no $t (run 'make deps')"
done

ns_add h
ns_add g
ns_add l
ns_veth h eth8 g eth9
ns_veth g lan0 l eth0
ns h ip addr add 10.77.0.1/24 dev eth8
ns h ip -6 addr add fd77::1/64 dev eth8 nodad
ns h ip route add 10.2.0.0/24 via 10.77.0.2
ns h ip -6 route add fd02::/64 via fd77::2
ns g ip addr add 10.77.0.2/24 dev eth9
ns g ip -6 addr add fd77::2/64 dev eth9 nodad
ns g ip addr add 10.2.0.1/24 dev lan0
ns g ip -6 addr add fd02::1/64 dev lan0 nodad
ns g sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
ns l ip addr add 10.2.0.2/24 dev eth0
ns l ip addr add 10.2.0.9/24 dev eth0
ns l ip -6 addr add fd02::2/64 dev eth0 nodad
ns l ip route add default via 10.2.0.1
ns l ip -6 route add default via fd02::1

# udp_sink NS PORT FILE: every datagram to PORT (IPv4 and IPv6) as
# "DST PAYLOAD" lines in FILE
cat >"$T/sink.py" <<'PY'
import socket, sys
port, out = int(sys.argv[1]), sys.argv[2]
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RECVPKTINFO, 1)
s.bind(("::", port))
open(out + ".ready", "w").close()
while True:
    data, anc, _, src = s.recvmsg(2048, 256)
    dst = "?"
    for lvl, typ, d in anc:
        if lvl == socket.IPPROTO_IPV6 and typ == socket.IPV6_PKTINFO:
            dst = socket.inet_ntop(socket.AF_INET6, d[:16])
            if dst.startswith("::ffff:"):
                dst = dst[7:]
    with open(out, "a") as f:
        f.write("%s %s\n" % (dst, data.decode()))
PY
sinks=0
for n in g l; do
	for p in 4791 5000; do
		ns_bg _P $n python3 "$T/sink.py" $p "$T/$n.$p"
		sinks=$((sinks + 1))
	done
done
sinks_ready() { [ "$(ls "$T"/*.ready 2>/dev/null | wc -l)" -eq $sinks ]; }
eventually sinks_ready || fail "UDP sinks not ready"

# send DST PORT TAG: one datagram from h; arrived NS PORT DST TAG: it
# reached NS's sink on PORT
send() {
	ns h python3 -c 'import socket, sys
a = sys.argv[1]
s = socket.socket(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(sys.argv[3].encode(), (a, int(sys.argv[2])))' "$1" "$2" "$3"
}
arrived() { grep -qx "$3 $4" "$T/$1.$2" 2>/dev/null; }
# where DST PORT TAG WANT(g|l): sent from h, arrives at WANT and not at the
# other
where() {
	local other=l
	[ "$4" = l ] && other=g
	send "$1" "$2" "$3"
	eventually arrived "$4" "$2" "$1" "$3" ||
		fail "UDP $2 to $1 ($3) did not arrive at $4"
	arrived $other "$2" "$1" "$3" && fail "UDP $2 to $1 ($3) arrived at $other too"
	return 0
}

where 10.2.0.2 4791 before l
where fd02::2 4791 before6 l
ok "before: UDP 4791 to 10.2.0.2 and fd02::2 from the IB side is forwarded to the LAN"

out=$(ns g "$NLTEST" gids-add eth9 10.2.0.2/32 10.2.0.8/30 fd02::2/128) ||
	fail "gids-add: $out"
expect_eq "gids-add: addresses" "$out" "gids-add n=6"
addrs=$(ns g ip -o addr show dev eth9 | awk '{print $4}' | sort | tr '\n' ' ')
expect_eq "eth9's addresses (the GIDs a RoCE device would take)" "$addrs" \
	"10.2.0.10/32 10.2.0.11/32 10.2.0.2/32 10.2.0.8/32 10.2.0.9/32 10.77.0.2/24 fd02::2/128 fd77::2/64 fe80::$(ns g ip -6 -o addr show dev eth9 scope link | sed 's/.*fe80::\([^ ]*\).*/\1/') "
ns g ip route show table local | grep -E -q 'local 10\.2\.0\.(2|8|9|10|11) ' &&
	fail "a GID's address still in the local table: $(ns g ip route show table local | grep '10\.2\.0\.')"
ns g ip -6 route show table local | grep -q 'fd02::2 ' &&
	fail "fd02::2 still in the local table"
for a in 10.2.0.2 10.2.0.9 fd02::2; do
	ns g ip route get $a | grep -q 'dev lan0' ||
		fail "g routes $a elsewhere than the LAN: $(ns g ip route get $a)"
done
ok "gids-add: 6 addresses on eth9, none local, g routes them to the LAN"

where 10.2.0.2 4791 gid g
where 10.2.0.9 4791 gid-prefix g
where fd02::2 4791 gid6 g
ok "RoCE v2 (UDP 4791) from the port for 10.2.0.2, 10.2.0.9 (of 10.2.0.8/30) and fd02::2 is delivered in the gateway"
where 10.2.0.2 5000 other-port l
where 10.2.0.9 5000 other-port-prefix l
where fd02::2 5000 other-port6 l
ns h ping -c1 -W2 10.2.0.2 >/dev/null || fail "h cannot ping 10.2.0.2 through g"
ns h ping -6 -c1 -W2 fd02::2 >/dev/null || fail "h cannot ping fd02::2 through g"
ns g ping -c1 -W2 10.2.0.9 >/dev/null || fail "g cannot ping 10.2.0.9 on the LAN"
ok "other UDP ports, pings from the IB side and from the gateway still reach the LAN host"
ns h ip neigh flush dev eth8
ns h arping -c 2 -w 3 -I eth8 10.2.0.2 >"$T/arping.out" 2>&1 &&
	fail "g answers ARP for 10.2.0.2 on its port: $(cat "$T/arping.out")"
ok "g answers no ARP for 10.2.0.2 on the port (the address is not local there)"

out=$(ns g "$NLTEST" gids-add eth9 10.2.0.2/32 10.2.0.8/30 fd02::2/128) ||
	fail "gids-add again (after a killed gateway): $out"
where 10.2.0.2 4791 again g
ok "gids-add again over what is there: accepted, same effect"

out=$(ns g "$NLTEST" gids-del eth9 10.2.0.2/32 10.2.0.8/30 fd02::2/128) ||
	fail "gids-del: $out"
ns g ip -o addr show dev eth9 | grep -E -q '10\.2\.0\.|fd02::' &&
	fail "addresses left on eth9: $(ns g ip -o addr show dev eth9)"
[ -z "$(ns g ip route show table 18634)$(ns g ip -6 route show table 18634)" ] ||
	fail "routes left in table 18634"
ns g ip rule | grep -q 18634 && fail "IPv4 rule left: $(ns g ip rule)"
ns g ip -6 rule | grep -q 18634 && fail "IPv6 rule left: $(ns g ip -6 rule)"
where 10.2.0.2 4791 after l
where fd02::2 4791 after6 l
ok "gids-del: addresses, routes and rules gone; UDP 4791 goes to the LAN again"
out=$(ns g "$NLTEST" gids-del eth9 10.2.0.2/32) || fail "gids-del of what is gone: $out"
ok "gids-del of what is not there: nothing to do, no error"
ok "rds_gids"
