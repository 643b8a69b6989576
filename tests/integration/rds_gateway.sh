#!/bin/bash
# ibgwd bridging RDS and UDP: an RDS endpoint on an IB host (rdspeer, the
# kernel's RDS/IB on the wire) reaches a UDP echo server on a LAN host
# through the gateway, and a LAN UDP client reaches an RDS echo on the IB
# host through an export.
#
#   ib4 10.43.0.1 (P_Key 0xffff) == gw: router, ib8003 10.43.0.254,
#                                       v3 10.44.0.254 -- lan3 10.44.0.1
#
# ib4 runs ipoibd (its IPoIB, which the gateway's ARP finds; --no-rds) and rdspeer
# on the same node (port GID), routing 10.44.0.1 to the gateway's GID, as
# the kernel's RDS resolves the next hop.  The default partition: rdspeer
# makes its queue pairs at P_Key index 0 (it has no --pkey).  Then the
# partition is reloaded in transparent mode (gwtap1 in br1, lan1
# 10.43.0.50 on the IB host's subnet): the same both ways.  Proved: echo replies verified
# byte for byte, 300 datagrams none lost, 65507 bytes passed and 65508
# dropped (drop_oversize), the export both ways with the gateway's
# address and the export's port as the source the LAN client sees; the
# same over IPv6 (fd43::1 <-> fd44::1); rds_max_peers = 1 (drop_limit);
# counters in ibgwctl show stats (text and JSON), the RDS keys in show
# partitions, the configuration check (file:line).  And with unmodified
# programs on ib5 10.43.0.2 (ipoibd with its RDS service): python3
# AF_RDS under libibgw_preload.so to the LAN's UDP echo (7 sizes up to
# 65507), and a LAN UDP client through export 9002 to a preloaded
# AF_RDS echo server.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
command -v python3 >/dev/null || skip "python3 not installed"
PEER=$BIN/tests/rdspeer
[ -x "$PEER" ] || fail "$PEER not built (make $BIN/tests/rdspeer)"

cat >"$T/partitions.conf" <<'CONF'
Default=0x7fff, ipoib : ALL=full;
p9=0x8009, ipoib : ib4=full, ib6=full, gw=full;

CONF
start_fabric -P "$T/partitions.conf"

ns_add ib4
# ib4: rdspeer is its RDS endpoint (one per node listens), so its
# ipoibd runs no RDS service
ns_bg IB4_PID ib4 "$BIN/ipoibd" -f -F "soft:$SOCK" -n ib4 -p 0xffff \
	-i ib0 --address 10.43.0.1/24 --address fd43::1/64 --no-rds >"$T/ib4.log" 2>&1
# ib5: an IB host as users run one, ipoibd with its RDS service, and
# unmodified python3 AF_RDS programs under libibgw_preload.so
ns_add ib5
ns_bg IB5_PID ib5 "$BIN/ipoibd" -f -F "soft:$SOCK" -n ib5 -p 0xffff \
	-i ib0 --address 10.43.0.2/24 >"$T/ib5.log" 2>&1
ns_add gw
ns_add lan3
ns_veth gw v3 lan3 eth0
ns gw ip addr add 10.44.0.254/24 dev v3
ns lan3 ip addr add 10.44.0.1/24 dev eth0
ns lan3 ip route add default via 10.44.0.254
ns gw ip addr add fd44::254/64 dev v3 nodad
ns lan3 ip addr add fd44::1/64 dev eth0 nodad
ns lan3 ip -6 route add default via fd44::254

conf() {	# [RDS_MAX_PEERS]
	cat <<CONF
[gateway]
fabric = soft:$SOCK
node = gw
control = $T/ibgwd.sock
metrics = 127.0.0.1:9478

[partition p3]
pkey = 0xffff
mode = router
ifname = ib8003
address = 10.43.0.254/24
address6 = fd43::254/64
rds = on
rds_max_peers = ${1:-64}
rds_exports = 9000=10.43.0.1:7000, 9001=[fd43::1]:7000, 9002=10.43.0.2:7000
CONF
}

# --- the configuration check ---------------------------------------------------
conf >"$T/ibgw.conf"
"$BIN/ibgwd" -n -c "$T/ibgw.conf" >"$T/check.out" 2>&1 || { cat "$T/check.out"; fail "ibgwd -n"; }
grep -qx "configuration OK" "$T/check.out" || fail "ibgwd -n: $(cat "$T/check.out")"
{ conf 0; echo "rds_exports = 80=10.0.0.1"; printf '\n[partition p4]\npkey = 0x8004\nmode = router\naddress = 10.45.0.254/24\nrds = on\n'; } >"$T/bad.conf"
"$BIN/ibgwd" -n -c "$T/bad.conf" >"$T/bad.out" 2>&1 && fail "ibgwd -n took a bad RDS configuration"
grep -q "bad.conf:[0-9]*: \[partition p3\] rds_max_peers:" "$T/bad.out" || { cat "$T/bad.out"; fail "rds_max_peers = 0 not reported"; }
grep -q "bad.conf:[0-9]*: \[partition p3\] rds_exports: '80=10.0.0.1'" "$T/bad.out" || { cat "$T/bad.out"; fail "bad export not reported"; }
grep -q "partition p4" "$T/bad.out" && { cat "$T/bad.out"; fail "rds = on in a second partition refused"; }
conf | grep -v '^rds = on' >"$T/bad2.conf"
"$BIN/ibgwd" -n -c "$T/bad2.conf" >"$T/bad2.out" 2>&1 && fail "rds_max_peers without rds taken"
grep -q "rds_max_peers: only with rds = on" "$T/bad2.out" || { cat "$T/bad2.out"; fail "rds_max_peers without rds"; }
ok "ibgwd -n: RDS keys checked (file:line; RDS in a second partition taken)"
# rds_gids (RoCE ports only): entries checked, then refused on this port
for bad in "10.2.0.1/24|host bits set" "10.2.0.0/23|more than 256 addresses" \
	"224.0.0.5|not a LAN host's address" "fe80::1|not a LAN host's address" \
	"10.2.0.4/30, 10.2.0.5|overlaps an earlier entry" "x.y|an address or ADDR/LEN wanted" \
	"10.2.0.1/33|'10.2.0.1/33'"; do
	{ conf; echo "rds_gids = ${bad%%|*}"; } >"$T/gids.conf"
	"$BIN/ibgwd" -n -c "$T/gids.conf" >"$T/gids.out" 2>&1 && fail "ibgwd -n took rds_gids = ${bad%%|*}"
	grep -q "gids.conf:[0-9]*: \[partition p3\] rds_gids: .*${bad#*|}" "$T/gids.out" ||
		{ cat "$T/gids.out"; fail "rds_gids = ${bad%%|*}: not '${bad#*|}'"; }
done
{ conf | grep -v '^rds'; echo "rds_gids = 10.2.0.2"; } >"$T/gids.conf"
"$BIN/ibgwd" -n -c "$T/gids.conf" >"$T/gids.out" 2>&1 && fail "rds_gids without rds taken"
grep -q "rds_gids: only with rds = on" "$T/gids.out" || { cat "$T/gids.out"; fail "rds_gids without rds: $(cat "$T/gids.out")"; }
{ conf; echo "rds_gids = 10.2.0.2, 10.2.0.8/29, fd02::/124"; } >"$T/gids.conf"
"$BIN/ibgwd" -n -c "$T/gids.conf" >"$T/gids.out" 2>&1 || { cat "$T/gids.out"; fail "ibgwd -n: good rds_gids refused"; }
ns_add gidgw
timeout 20 ip netns exec "$NS_NAME" "$BIN/ibgwd" -f -c "$T/gids.conf" >"$T/gids.log" 2>&1 &&
	fail "ibgwd ran with rds_gids on the soft fabric (InfiniBand)"
grep -q "rds_gids is for a RoCE port only; this one is InfiniBand" "$T/gids.log" ||
	{ cat "$T/gids.log"; fail "rds_gids on InfiniBand: not refused clearly"; }
ok "rds_gids: bad entries reported with file:line, and refused on an InfiniBand port"

ns_bg GW_PID gw "$BIN/ibgwd" -f -v -c "$T/ibgw.conf" >"$T/gw.log" 2>&1
gw_ready() { grep -q "ready: 1 partition" "$T/gw.log"; }
eventually gw_ready || { cat "$T/gw.log"; fail "ibgwd not ready"; }
grep -q "partition p3: RDS on, up to 64 peers, 3 export(s)" "$T/gw.log" || { cat "$T/gw.log"; fail "no RDS on p3"; }
ibr() { grep -q "ready:" "$T/ib4.log"; }
eventually ibr || { cat "$T/ib4.log"; fail "ipoibd ib4 not ready"; }
ns ib4 ip route replace default via 10.43.0.254 || fail "route on ib4"
ib5r() { grep -q "ready:" "$T/ib5.log"; }
eventually ib5r || { cat "$T/ib5.log"; fail "ipoibd ib5 not ready"; }
grep -q "RDS service on @ibgw-rds" "$T/ib5.log" || { cat "$T/ib5.log"; fail "ib5 has no RDS service"; }
ns ib5 ip route replace default via 10.43.0.254 || fail "route on ib5"
v6ok() { [ -z "$(ns ib4 ip -6 addr show dev ib0 tentative)" ] && [ -z "$(ns gw ip -6 addr show dev ib8003 tentative)" ]; }
eventually v6ok || fail "IPv6 addresses stay tentative"
C() { "$BIN/ibgwctl" -s "$T/ibgwd.sock" "$@"; }
C show partitions | grep -q "^p3 .* on  *off$" || { C show partitions; fail "show partitions: RDS on, SDP off"; }
C -j show partitions | python3 -c '
import json, sys
p = json.load(sys.stdin)["partitions"][0]
want = {"rds": True, "rds_running": True, "rds_max_peers": 64, "rds_exports": 3}
got = {k: p.get(k) for k in want}
sys.exit(0 if got == want else "show partitions JSON: %r" % got)' || fail "JSON RDS keys"
ok "gateway up, RDS on p3 (router): show partitions text and JSON"
GWGID=$(C -j show summary | python3 -c 'import json,sys; print(json.load(sys.stdin)["gid"])')
[ -n "$GWGID" ] || fail "no gateway GID"

# rdsc NAME [PARTITION]: a counter of a partition's rds side (JSON; p3 unless named)
rdsc() {
	C -j show stats | python3 -c '
import json, sys
p = {x["name"]: x for x in json.load(sys.stdin)["partitions"]}[sys.argv[2]]
print(p.get("rds", {}).get(sys.argv[1], 0))' "$1" "${2:-p3}"
}

cat >"$T/udp_echo.py" <<'PY'
# a UDP echo server: every datagram back to its sender; one line per
# datagram in the log: SRC_IP SRC_PORT LENGTH
# (IPv6 only with a third argument "6")
import socket, sys
v6 = len(sys.argv) > 3
s = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
if v6:
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
s.bind(("::" if v6 else "0.0.0.0", int(sys.argv[1])))
log = open(sys.argv[2], "w", buffering=1)
while True:
    b, a = s.recvfrom(65535)
    log.write("%s %d %d\n" % (a[0], a[1], len(b)))
    if b[:4] == b"RDSP":	# rdspeer's payload names the ports: swapped
        b = b[:4] + b[6:8] + b[4:6] + b[8:]
    s.sendto(b, a)
PY
cat >"$T/udp_client.py" <<'PY'
# udp_client.py HOST PORT SIZE COUNT: COUNT datagrams of SIZE bytes (a
# distinct pattern each), one at a time; each answer must come from
# HOST:PORT with the same bytes.  Prints "ok N" or why not.
import os, socket, sys
host, port, size, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
for i in range(count):
    b = bytes((i + j) & 0xff for j in range(size)) if size < 4096 else os.urandom(size)
    s.sendto(b, (host, port))
    s.settimeout(3 if i else 10)	# the first waits for the connection
    try:
        r, a = s.recvfrom(65535)
    except socket.timeout:
        sys.exit("no answer to datagram %d" % i)
    if a[:2] != (host, port):
        sys.exit("answer from %s:%d" % a[:2])
    if r != b:
        sys.exit("answer %d differs (%d bytes, want %d)" % (i, len(r), len(b)))
print("ok", count)
PY

# an IPv4 client to the export of an IPv6 IB host: an RDS connection joins
# one family; dropped, counted
f0=$(rdsc drop_family)
ns lan3 python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x" * 10, ("10.44.0.254", 9001))'
fam() { [ "$(rdsc drop_family)" -gt "$f0" ]; }
eventually fam || fail "IPv4 client of an IPv6 export: drop_family not counted"
ok "export of an IPv6 IB host from an IPv4 client dropped (drop_family)"

# --- IB -> LAN: rdspeer on ib4 to the UDP echo server on lan3 ------------------------
ns_bg E lan3 python3 "$T/udp_echo.py" 5000 "$T/echo.log"
# peer TIMEOUT ARGS...: rdspeer on ib4, 10.44.0.1 (the LAN) routed to the
# gateway's GID as the IB host's next hop
peer() {
	local to=$1
	shift
	ns ib4 "$PEER" --fabric "soft:$SOCK" --node ib4 --addr 10.43.0.1 \
		--route "10.44.0.1=$GWGID" --timeout "$to" "$@"
}
echo_up() { ns lan3 ss -uln "sport = :5000" | grep -q ':5000'; }
eventually echo_up || fail "the UDP echo server is not up"
peer 20 --bind 4000 --send 10.44.0.1:5000:4000:300:16-1400 \
	--expect 10.44.0.1:5000:4000:300 >"$T/peer1.out" 2>&1 ||
	{ cat "$T/peer1.out"; tail -20 "$T/gw.log"; C show stats | grep " rds " | grep -v " 0$"; ctl cm; fail "rdspeer: 300 datagrams to the LAN echo and back"; }
expect_eq "datagrams at the LAN echo server" "$(wc -l <"$T/echo.log")" 300
src=$(cut -d' ' -f1,2 "$T/echo.log" | sort -u)
expect_eq "the LAN sees the gateway's address and the sender's port" "$src" "10.44.0.254 4000"
[ "$(rdsc udp_tx)" -ge 300 ] || fail "udp_tx $(rdsc udp_tx) < 300"
[ "$(rdsc udp_rx)" -ge 300 ] || fail "udp_rx $(rdsc udp_rx) < 300"
[ "$(rdsc conns_passive)" -ge 1 ] || fail "no passive RDS connection at the gateway"
[ "$(rdsc mappings_now)" -ge 1 ] || fail "no mapping"
expect_eq "the kernel's drops at the gateway's UDP sockets" "$(rdsc drop_udp_rx_overflow)" 0
ok "IB -> LAN: 300 RDS datagrams echoed by a UDP server, none lost, in order (udp_tx $(rdsc udp_tx), udp_rx $(rdsc udp_rx))"

# the mapping's socket is the LAN's: UDP to it from the IB side is dropped
n0=$(rdsc drop_not_lan)
ns ib4 python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"RDSP" + bytes(20), ("10.43.0.254", 4000))'
notlan() { [ "$(rdsc drop_not_lan)" -gt "$n0" ]; }
eventually notlan || fail "UDP from the IB side to a mapping: drop_not_lan not counted"
ok "UDP from an IB host to a mapping's socket dropped (drop_not_lan)"

# sizes: the LAN's UDP limit passes, one byte more is dropped and counted
o0=$(rdsc drop_oversize)
peer 20 --bind 4001 --send 10.44.0.1:5000:4001:3:65507 \
	--expect 10.44.0.1:5000:4001:3 >"$T/peer2.out" 2>&1 ||
	{ cat "$T/peer2.out"; fail "rdspeer: 65507-byte datagrams"; }
expect_eq "65507-byte datagrams at the echo server" "$(grep -c ' 4001 65507$' "$T/echo.log")" 3
peer 20 --bind 4002 --send 10.44.0.1:5000:4002:2:65508 --linger 1 >"$T/peer3.out" 2>&1 ||
	{ cat "$T/peer3.out"; fail "rdspeer: 65508-byte datagrams not taken by the gateway's RDS"; }
expect_eq "drop_oversize" "$(rdsc drop_oversize)" $((o0 + 2))
expect_eq "65508-byte datagrams on the LAN" "$(grep -c ' 4002 ' "$T/echo.log")" 0
ok "sizes: 65507 bytes passed both ways, 65508 counted and dropped"

# --- LAN -> IB: an export to rdspeer --echo on ib4 ------------------------------------
ns_bg P ib4 "$PEER" --fabric "soft:$SOCK" --node ib4 --addr 10.43.0.1 \
	--route "10.44.0.1=$GWGID" --echo 7000 --linger 100 --timeout 110 --log "$T/peer_echo.log"
sleep 0.5
x0=$(rdsc exported)
ns lan3 python3 "$T/udp_client.py" 10.44.0.254 9000 100 50 >"$T/client.out" 2>&1 ||
	{ cat "$T/client.out"; tail -20 "$T/gw.log"; fail "export: LAN client -> 9000 -> rdspeer --echo"; }
ns lan3 python3 "$T/udp_client.py" 10.44.0.254 9000 60000 5 >>"$T/client.out" 2>&1 ||
	{ cat "$T/client.out"; fail "export: 60000-byte datagrams"; }
expect_eq "export: the client's answers" "$(cat "$T/client.out" | tr '\n' ' ')" "ok 50 ok 5 "
[ "$(rdsc exported)" -ge $((x0 + 55)) ] || fail "exported $(rdsc exported), want $((x0 + 55))"
src=$(cut -d' ' -f1 "$T/peer_echo.log" | sort -u)
expect_eq "the IB host sees the LAN client as the source" "$src" "10.44.0.1"
[ "$(rdsc flows_now)" -ge 1 ] || fail "no export flow"
[ "$(rdsc conns_active)" -ge 1 ] || fail "no active RDS connection from the gateway"
ok "export: LAN 10.44.0.1 -> 10.44.0.254:9000 -> RDS 10.43.0.1:7000 --echo -> back from 9000 (exported $(rdsc exported))"

# --- the same with unmodified programs: python3 AF_RDS under the preload on ib5 -------
PRE=$BIN/libibgw_preload.so
PY=$TOP/tests/integration/rds_progs.py
pre() {	# NS PROGRAM...
	local n=$1
	shift
	ns "$n" env LD_PRELOAD="$PRE" "$@"
}
u0=$(rdsc udp_tx)
pre ib5 python3 "$PY" echo-client 10.43.0.2 10.44.0.1 5000 1 100 1400 4096 8000 30000 65507 \
	>"$T/pre1.out" 2>&1 || { cat "$T/pre1.out"; tail "$T/ib5.log"; fail "preloaded AF_RDS client on ib5 -> LAN UDP echo"; }
grep -q "^echoed 7 sizes from 10.43.0.2 port " "$T/pre1.out" || fail "preload: $(cat "$T/pre1.out")"
[ "$(rdsc udp_tx)" -ge $((u0 + 7)) ] || fail "preload: the gateway's udp_tx grew by $(( $(rdsc udp_tx) - u0 )), not 7"
pport=$(sed -n 's/^echoed 7 sizes from 10.43.0.2 port //p' "$T/pre1.out")
# its own port, unless that is privileged (port 0 takes any RDS port)
want=$pport
[ "$pport" -lt 1024 ] && want='[0-9]*'
[ "$(grep -c "^10.44.0.254 $want " "$T/echo.log")" -ge 7 ] ||
	{ tail -8 "$T/echo.log"; C show stats | grep rds >&2; fail "the LAN did not see the preloaded program's 7 datagrams from the gateway, port $want (its RDS port $pport)"; }
ok "the LAN saw the preloaded program's datagrams from the gateway, port $pport"
# a privileged RDS port is not the gateway's to use on the LAN
pre ib5 python3 "$PY" echo-client 10.43.0.2:600 10.44.0.1 5000 100 >"$T/pre600.out" 2>&1 ||
	{ cat "$T/pre600.out"; fail "preloaded AF_RDS client bound to port 600 -> LAN UDP echo"; }
lport=$(tail -1 "$T/echo.log" | cut -d' ' -f2)
[ "$(tail -1 "$T/echo.log" | cut -d' ' -f1)" = 10.44.0.254 ] && [ "$lport" -ge 1024 ] ||
	{ tail -3 "$T/echo.log"; fail "RDS port 600 reached the LAN from the gateway's $(tail -1 "$T/echo.log")"; }
ok "an IB program's privileged RDS port 600 reached the LAN from the gateway's port $lport"
ok "IB -> LAN with an unmodified program: python3 AF_RDS under the preload on ib5, 7 sizes up to 65507 echoed by the LAN's UDP server"
ns_bg PS ib5 env LD_PRELOAD="$PRE" python3 "$PY" echo-server 10.43.0.2 7000 0 >"$T/pre_srv.out" 2>&1
bound() { grep -q "^bound" "$T/pre_srv.out"; }
eventually bound || { cat "$T/pre_srv.out"; fail "preloaded AF_RDS echo server on ib5"; }
ns lan3 python3 "$T/udp_client.py" 10.44.0.254 9002 1000 30 >"$T/client5.out" 2>&1 ||
	{ cat "$T/client5.out" "$T/pre_srv.out"; tail -20 "$T/gw.log"; fail "export 9002 -> preloaded AF_RDS echo on ib5"; }
expect_eq "export to ib5: the client's answers" "$(cat "$T/client5.out")" "ok 30"
expect_eq "the preloaded server saw the LAN client as the sender" \
	"$(sed -n 's/^from \([0-9.]*\):[0-9]* .*/\1/p' "$T/pre_srv.out" | sort -u)" "10.44.0.1"
kill "$PS" 2>/dev/null
wait "$PS" 2>/dev/null
ok "LAN -> IB with an unmodified program: a LAN UDP client -> export 9002 -> python3 AF_RDS echo server under the preload on ib5 -> back"

# --- the counters in text, the metrics ---------------------------------------------
C show stats >"$T/stats.txt"
for n in udp_tx udp_rx exported drop_oversize mappings_now tx_msgs rx_msgs; do
	grep -q "^p3 *rds *$n " "$T/stats.txt" || { cat "$T/stats.txt"; fail "show stats: no rds $n"; }
done
ok "show stats: side rds with the gateway's and the endpoint's counters"
kill -USR1 "$GW_PID"
sleep 0.3
grep -q "stats p3 *rds *udp_tx" "$T/gw.log" || fail "SIGUSR1 report without the rds counters"
ns gw python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:9478/metrics", timeout=5).read().decode())' >"$T/metrics.txt" ||
	fail "GET /metrics"
python3 "$TOP/tests/integration/prom_check.py" "$T/metrics.txt" ||
	{ cat "$T/metrics.txt"; fail "metrics: not Prometheus's text format"; }
for m in 'ibgw_rds_udp_tx_total\{partition="p3"\} [34][0-9]{2}$' 'ibgw_rds_exported_total\{partition="p3"\} 85$' 'ibgw_rds_rx_msgs_total\{partition="p3"\} [1-9]'; do
	grep -qE "$m" "$T/metrics.txt" || { grep rds "$T/metrics.txt"; fail "metrics: no '$m'"; }
done
ok "metrics: the ibgw_rds_ families (udp_tx, exported, the endpoint's rx_msgs)"

# --- a burst beyond an export socket's buffer: every datagram is either taken or
# counted as the kernel's drop, a burst's last drops included (before, those came
# with the next datagram only, and the counter read 0 here)
r0=$(rdsc udp_rx)
d0=$(rdsc drop_udp_rx_overflow)
kill -STOP "$GW_PID"
ns lan3 python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(12000):
    s.sendto(b"b" * 1400, ("10.44.0.254", 9000))'
kill -CONT "$GW_PID"
settled() {
	local a b
	a=$(rdsc udp_rx)
	sleep 0.5
	b=$(rdsc udp_rx)
	[ "$a" = "$b" ]
}
eventually settled || fail "the burst did not drain"
dr=$(( $(rdsc drop_udp_rx_overflow) - d0 ))
rx=$(( $(rdsc udp_rx) - r0 ))
[ "$dr" -gt 0 ] || fail "12000 datagrams into a stopped gateway: no drop counted (udp_rx +$rx)"
expect_eq "a burst: datagrams taken + the kernel's drops" "$((rx + dr))" 12000
ok "a burst of 12000 datagrams at a stopped gateway: $rx taken, $dr counted as the kernel's drops (drop_udp_rx_overflow)"

kill "$P" 2>/dev/null	# one RDS endpoint per node listens
wait "$P" 2>/dev/null

# --- IPv6: both ways (RDS_CM_PORT's service ID) -------------------------------------
ns_bg E6 lan3 python3 "$T/udp_echo.py" 5006 "$T/echo6.log" 6
echo6_up() { ns lan3 ss -uln "sport = :5006" | grep -q ':5006'; }
eventually echo6_up || fail "the IPv6 UDP echo server is not up"
ns ib4 "$PEER" --fabric "soft:$SOCK" --node ib4 --addr fd43::1 \
	--route "fd44::1=$GWGID" --timeout 20 --bind 4006 \
	--send "[fd44::1]:5006:4006:50:16-1400" --expect "[fd44::1]:5006:4006:50" >"$T/peer6a.out" 2>&1 ||
	{ cat "$T/peer6a.out"; tail "$T/gw.log"; fail "IPv6: rdspeer to the LAN echo and back"; }
expect_eq "IPv6: the LAN sees the gateway's address and the sender's port" "$(cut -d' ' -f1,2 "$T/echo6.log" | sort -u)" "fd44::254 4006"
ns_bg P ib4 "$PEER" --fabric "soft:$SOCK" --node ib4 --addr fd43::1 \
	--route "fd44::1=$GWGID" --echo 7000 --linger 60 --timeout 70
sleep 0.5
ns lan3 python3 "$T/udp_client.py" fd44::254 9001 1000 20 >"$T/client6.out" 2>&1 ||
	{ cat "$T/client6.out"; tail "$T/gw.log"; fail "IPv6: export [fd44::254]:9001 -> [fd43::1]:7000"; }
kill "$P" "$E6" 2>/dev/null
wait "$P" "$E6" 2>/dev/null
ok "IPv6: 50 datagrams IB -> LAN echoed; an export [fd44::254]:9001 -> RDS [fd43::1]:7000 -> back"

# --- the limit: rds_max_peers = 1 by a reload ---------------------------------------
conf 1 >"$T/ibgw.conf"
kill -HUP "$GW_PID"
max1() { C -j show partitions | python3 -c 'import json,sys; p=json.load(sys.stdin)["partitions"][0]; sys.exit(0 if p["rds_max_peers"] == 1 and p["rds_running"] and p["carrier"] else 1)'; }
eventually max1 || { C show partitions; tail "$T/gw.log"; fail "reload to rds_max_peers = 1"; }
peer 20 --bind 4010 --send 10.44.0.1:5000:4010:5:100 \
	--expect 10.44.0.1:5000:4010:5 >"$T/peer4.out" 2>&1 ||
	{ cat "$T/peer4.out"; fail "rdspeer: the one mapping of rds_max_peers = 1"; }
peer 20 --bind 4011 --send 10.44.0.1:5000:4011:3:100 --linger 1 >"$T/peer5.out" 2>&1 ||
	{ cat "$T/peer5.out"; fail "rdspeer: over the limit, the gateway's RDS still takes the datagrams"; }
expect_eq "drop_limit" "$(rdsc drop_limit)" 3
expect_eq "datagrams from 4011 on the LAN" "$(grep -c ' 4011 ' "$T/echo.log")" 0
grep -q "partition p3: RDS: 1 mappings (rds_max_peers): datagrams of new senders dropped" "$T/gw.log" ||
	{ tail "$T/gw.log"; fail "no log line for the limit"; }
ok "rds_max_peers = 1: a second IB sender's datagrams dropped (drop_limit), logged"

# --- transparent mode: the same partition bridged, by a reload -------------------------
#   ib4 10.43.0.1 == gw: gwtap1 in br1 (10.43.0.253) -- lan1 10.43.0.50
ns_add lan1
ns gw ip link add br1 type bridge
ns gw ip link set br1 up
ns_veth gw v1 lan1 eth0
ns gw ip link set v1 master br1
ns gw ip addr add 10.43.0.253/24 dev br1
ns lan1 ip addr add 10.43.0.50/24 dev eth0
conf | sed 's/^mode = router$/tap = gwtap1\nbridge = br1/; /^ifname = /d; /^address6* = /d' >"$T/ibgw.conf"
kill -HUP "$GW_PID"
tp() { C -j show partitions | python3 -c 'import json,sys; p=json.load(sys.stdin)["partitions"][0]; sys.exit(0 if p["mode"] == "transparent" and p["rds_running"] and p["carrier"] else 1)'; }
eventually tp || { C show partitions; tail "$T/gw.log"; fail "reload to transparent mode"; }
ns_bg E2 lan1 python3 "$T/udp_echo.py" 5000 "$T/echo1.log"
echo1_up() { ns lan1 ss -uln "sport = :5000" | grep -q ':5000'; }
eventually echo1_up || fail "the UDP echo server on lan1 is not up"
# the IB host's ARP makes the bridge learn the LAN host (proxy ARP)
eventually ns ib4 ping -c 1 -W 1 10.43.0.50 >/dev/null || fail "transparent: ib4 -> lan1 over IPoIB"
ns ib4 "$PEER" --fabric "soft:$SOCK" --node ib4 --addr 10.43.0.1 \
	--route "10.43.0.50=$GWGID" --timeout 20 --bind 4020 \
	--send 10.43.0.50:5000:4020:100:16-1400 --expect 10.43.0.50:5000:4020:100 >"$T/peer6.out" 2>&1 ||
	{ cat "$T/peer6.out"; tail "$T/gw.log"; fail "transparent: rdspeer to the LAN echo and back"; }
expect_eq "transparent: datagrams at the LAN echo" "$(wc -l <"$T/echo1.log")" 100
expect_eq "transparent: the LAN sees the gateway's bridge address" "$(cut -d' ' -f1,2 "$T/echo1.log" | sort -u)" "10.43.0.253 4020"
ns_bg P ib4 "$PEER" --fabric "soft:$SOCK" --node ib4 --addr 10.43.0.1 \
	--route "10.43.0.50=$GWGID" --echo 7000 --linger 60 --timeout 70
sleep 0.5
ns lan1 python3 "$T/udp_client.py" 10.43.0.253 9000 500 20 >"$T/client1.out" 2>&1 ||
	{ cat "$T/client1.out"; fail "transparent: export"; }
kill "$P" 2>/dev/null
wait "$P" 2>/dev/null
ok "transparent: 100 datagrams IB -> LAN echoed, an export LAN -> IB echoed (rds exported $(rdsc exported))"

# --- a second RDS partition: p9 (router) beside p3 --------------------------------------
#   ib6 10.46.0.1 (P_Key 0x8009, ipoibd with its RDS service) == gw: ib8009
#   10.46.0.254 -- v3 -- lan3 10.44.0.1
# Each partition's endpoint listens on RDS's port in its own partition
# (CM listeners by P_Key): ib6's datagrams are p9's, ib4's stay p3's.
ns_add ib6
ns_bg IB6_PID ib6 "$BIN/ipoibd" -f -F "soft:$SOCK" -n ib6 -p 0x8009 \
	-i ib0 --address 10.46.0.1/24 >"$T/ib6.log" 2>&1
{ cat "$T/ibgw.conf"; printf '\n[partition p9]\npkey = 0x8009\nmode = router\nifname = ib8009\naddress = 10.46.0.254/24\nrds = on\nrds_exports = 9010=10.46.0.1:7000\n'; } >"$T/ibgw2.conf"
# one LAN port exported by two partitions is refused
sed 's/^rds_exports = 9010=/rds_exports = 9001=/' "$T/ibgw2.conf" >"$T/bad9.conf"
"$BIN/ibgwd" -n -c "$T/bad9.conf" >"$T/bad9.out" 2>&1 && fail "ibgwd -n took LAN port 9001 exported by two partitions"
grep -q "bad9.conf:[0-9]*: \[partition p9\] rds_exports: LAN port 9001 is exported by partition p3 already" "$T/bad9.out" ||
	{ cat "$T/bad9.out"; fail "a LAN port exported by two partitions: not reported"; }
mv "$T/ibgw2.conf" "$T/ibgw.conf"
kill -HUP "$GW_PID"
p9up() { C -j show partitions | python3 -c 'import json,sys; p={x["name"]: x for x in json.load(sys.stdin)["partitions"]}; sys.exit(0 if p["p9"]["rds_running"] and p["p9"]["carrier"] and p["p3"]["rds_running"] else 1)'; }
eventually p9up || { C show partitions; tail "$T/gw.log"; fail "p9 with RDS beside p3"; }
ib6r() { grep -q "RDS service on" "$T/ib6.log"; }
eventually ib6r || { cat "$T/ib6.log"; fail "ib6 has no RDS service"; }
ns ib6 ip route replace default via 10.46.0.254 || fail "route on ib6"
ctl cm >"$T/cm.rds2"
gwlid=$(C -j show summary | python3 -c 'import json,sys; print("0x%04x" % json.load(sys.stdin)["lid"])')
for k in 0x0009 0x7fff; do
	grep -q "^listen port $gwlid .*service 0x00000000010648ca .* pkey $k$" "$T/cm.rds2" ||
		{ cat "$T/cm.rds2"; fail "no CM listener of the gateway ($gwlid) on RDS's port for P_Key $k"; }
done
a9=$(rdsc udp_tx p9) a3=$(rdsc udp_tx p3)
pre ib6 python3 "$PY" echo-client 10.46.0.1 10.44.0.1 5000 100 1400 8000 >"$T/pre9.out" 2>&1 ||
	{ cat "$T/pre9.out"; tail "$T/ib6.log" "$T/gw.log"; fail "p9: preloaded AF_RDS client on ib6 -> LAN UDP echo"; }
grep -q "^echoed 3 sizes from 10.46.0.1 port " "$T/pre9.out" || fail "p9: $(cat "$T/pre9.out")"
[ "$(rdsc udp_tx p9)" -ge $((a9 + 3)) ] || fail "p9: udp_tx grew by $(( $(rdsc udp_tx p9) - a9 )), not 3"
expect_eq "p3's udp_tx while p9 carried ib6's datagrams" "$(rdsc udp_tx p3)" "$a3"
# and p3's transparent segment still works beside it
ns ib4 "$PEER" --fabric "soft:$SOCK" --node ib4 --addr 10.43.0.1 \
	--route "10.43.0.50=$GWGID" --timeout 20 --bind 4021 \
	--send 10.43.0.50:5000:4021:20:16-1400 --expect 10.43.0.50:5000:4021:20 >"$T/peer7.out" 2>&1 ||
	{ cat "$T/peer7.out"; tail "$T/gw.log"; fail "p3 beside p9: rdspeer to the LAN echo and back"; }
[ "$(rdsc udp_tx p3)" -ge $((a3 + 20)) ] || fail "p3: udp_tx grew by $(( $(rdsc udp_tx p3) - a3 )), not 20"
# p9's export: LAN -> 10.44.0.254:9010 -> RDS 10.46.0.1:7000 (preloaded echo)
ns_bg PS ib6 env LD_PRELOAD="$PRE" python3 "$PY" echo-server 10.46.0.1 7000 0 >"$T/pre_srv9.out" 2>&1
bound9() { grep -q "^bound" "$T/pre_srv9.out"; }
eventually bound9 || { cat "$T/pre_srv9.out"; fail "preloaded AF_RDS echo server on ib6"; }
x9=$(rdsc exported p9)
ns lan3 python3 "$T/udp_client.py" 10.44.0.254 9010 700 10 >"$T/client9.out" 2>&1 ||
	{ cat "$T/client9.out" "$T/pre_srv9.out"; tail -20 "$T/gw.log"; fail "p9: export 9010 -> AF_RDS echo on ib6"; }
expect_eq "p9's export: the client's answers" "$(cat "$T/client9.out")" "ok 10"
[ "$(rdsc exported p9)" -ge $((x9 + 10)) ] || fail "p9: exported $(rdsc exported p9)"
kill "$PS" 2>/dev/null
wait "$PS" 2>/dev/null
ok "two RDS partitions: p9's ib6 reached the LAN and was reached through its export, p3's ib4 beside it, each counted in its own partition"

kill "$E" "$E2" 2>/dev/null
wait "$E" "$E2" 2>/dev/null
kill -TERM "$GW_PID"
wait "$GW_PID"
rc=$?
[ "$rc" -eq 0 ] || { tail -30 "$T/gw.log"; fail "ibgwd exited $rc"; }
ok "ibgwd stopped cleanly"
