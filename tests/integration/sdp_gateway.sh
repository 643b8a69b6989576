#!/bin/bash
# ibgwd terminating SDP: unmodified programs on an IB host under
# libibgw_preload.so reach a LAN host through the gateway over SDP, and a
# LAN host reaches an IB host's server through an export.
#
#   ib4 10.43.0.1 (P_Key 0x8003) == gw: router, ib8003 10.43.0.254,
#                                       v3 10.44.0.254 -- lan3 10.44.0.1
#   ib1 10.41.0.1 (P_Key 0x8001) == gw: transparent, gwtap1 in br1
#                                       (br1 10.41.0.254) -- lan1 10.41.0.50
#
# Router mode first (sdp on p3), then the file is rewritten with sdp on p1
# and reloaded: transparent mode; last, reloaded with sdp on both (each
# partition's endpoint listens on every SDP service ID in its own
# partition: CM listeners by P_Key).  In each: curl with
# a file's sha256, iperf3, socat with a half-close, a LAN server's reset,
# a closed LAN port (connect() ECONNREFUSED, as TCP; in router mode a LAN
# address nobody has, EHOSTUNREACH, and a network the gateway has no route
# to, ENETUNREACH; a LAN server whose accept queue is full past the
# program's deadline sees no connection of the gateway's: abandoned),
# an export (curl from the LAN to an http.server on the IB host started
# under the preload); a destination on the gateway itself refused; in
# transparent mode, reloaded with
# sdp_max_conns = 1, the limit (the second connection falls back to TCP
# over IPoIB).  Evidence that SDP carried the data: the gateway's byte
# counters and ibfabricd's CM connections on service 0x10000|port.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
for t in iperf3 curl python3 socat sha256sum; do
	command -v $t >/dev/null || skip "$t not installed (make deps)"
done
PRELOAD=$BIN/libibgw_preload.so
[ -f "$PRELOAD" ] || fail "$PRELOAD not built"

cat >"$T/partitions.conf" <<'CONF'
Default=0x7fff, ipoib : ALL=full;
p1=0x8001, ipoib : ib1=full, gw=full;
p3=0x8003, ipoib : ib4=full, gw=full;
CONF
start_fabric -P "$T/partitions.conf"

ib() {	# NAME PKEY ADDR [ADDR]
	local a=()
	[ -n "${4:-}" ] && a=(--address "$4")
	ns_add "$1"
	ns_bg "${1}_PID" "$1" "$BIN/ipoibd" -f -F "soft:$SOCK" -n "$1" \
		-p "$2" -i ib0 --address "$3" "${a[@]}" >"$T/$1.log" 2>&1
}
ib ib1 0x8001 10.41.0.1/24
ib ib4 0x8003 10.43.0.1/24 fd43::4/64
ns_add gw
ns_add lan1
ns_add lan3
ns gw ip link add br1 type bridge
ns gw ip link set br1 up
ns_veth gw v1 lan1 eth0
ns_veth gw v3 lan3 eth0
ns gw ip link set v1 master br1
ns gw ip addr add 10.41.0.254/24 dev br1	# the gateway's own, on the LAN
ns lan1 ip addr add 10.41.0.50/24 dev eth0
ns gw ip addr add 10.44.0.254/24 dev v3
ns lan3 ip addr add 10.44.0.1/24 dev eth0
ns lan3 ip route add default via 10.44.0.254

conf() {	# SDP-PARTITION [SDP_MAX_CONNS of p1]
	local s1=off s3=off max=${2:-16}
	[ "$1" = p1 ] || [ "$1" = both ] && s1=on
	[ "$1" = p3 ] || [ "$1" = both ] && s3=on
	cat <<CONF
[gateway]
fabric = soft:$SOCK
node = gw
control = $T/ibgwd.sock

[partition p1]
pkey = 0x8001
tap = gwtap1
bridge = br1
sdp = $s1
CONF
	[ "$s1" = on ] && printf 'sdp_max_conns = %s\nsdp_exports = 81=10.41.0.1:8000\n' "$max"
	cat <<CONF

[partition p3]
pkey = 0x8003
mode = router
ifname = ib8003
address = 10.43.0.254/24
address6 = fd43::fe/64
sdp = $s3
CONF
	[ "$s3" = on ] && printf 'sdp_exports = 8080=10.43.0.1:8000, 8090=[fd43::1]:80, 8091=[fd43::4]:8001\n'
}

# --- the configuration check ---------------------------------------------------
conf p3 >"$T/ibgw.conf"
"$BIN/ibgwd" -n -c "$T/ibgw.conf" >"$T/check.out" 2>&1 || { cat "$T/check.out"; fail "ibgwd -n"; }
grep -qx "configuration OK" "$T/check.out" || fail "ibgwd -n: $(cat "$T/check.out")"
{ conf none | sed 's/^sdp = off$/sdp = on/'; echo "sdp_max_conns = 0"; echo "sdp_exports = 80=10.0.0.1"; } >"$T/bad.conf"
"$BIN/ibgwd" -n -c "$T/bad.conf" >"$T/bad.out" 2>&1 && fail "ibgwd -n took a bad SDP configuration"
grep -q "bad.conf:[0-9]*: \[partition p3\] sdp_max_conns:" "$T/bad.out" || { cat "$T/bad.out"; fail "sdp_max_conns = 0 not reported"; }
grep -q "bad.conf:[0-9]*: \[partition p3\] sdp_exports: '80=10.0.0.1'" "$T/bad.out" || { cat "$T/bad.out"; fail "bad export not reported"; }
grep -q "SDP is on in partition" "$T/bad.out" && { cat "$T/bad.out"; fail "sdp = on in two partitions refused"; }
conf both >"$T/both.conf"
"$BIN/ibgwd" -n -c "$T/both.conf" >"$T/both.out" 2>&1 || { cat "$T/both.out"; fail "ibgwd -n: sdp = on in two partitions"; }
# but not one LAN port exported by both
sed 's/^sdp_exports = 81=/sdp_exports = 8080=/' "$T/both.conf" >"$T/bad3.conf"
"$BIN/ibgwd" -n -c "$T/bad3.conf" >"$T/bad3.out" 2>&1 && fail "ibgwd -n took LAN port 8080 exported by two partitions"
grep -q "bad3.conf:[0-9]*: \[partition p3\] sdp_exports: LAN port 8080 is exported by partition p1 already" "$T/bad3.out" ||
	{ cat "$T/bad3.out"; fail "a LAN port exported by two partitions: not reported"; }
{ conf none; echo "sdp_max_conns = 5"; } >"$T/bad2.conf"
"$BIN/ibgwd" -n -c "$T/bad2.conf" >"$T/bad2.out" 2>&1 && fail "sdp_max_conns without sdp taken"
grep -q "sdp_max_conns: only with sdp = on" "$T/bad2.out" || { cat "$T/bad2.out"; fail "sdp_max_conns without sdp"; }
ok "ibgwd -n: SDP keys checked (file:line), SDP in two partitions taken"

ns_bg GW_PID gw "$BIN/ibgwd" -f -v -c "$T/ibgw.conf" >"$T/gw.log" 2>&1
gw_ready() { grep -q "ready: 2 partition" "$T/gw.log"; }
eventually gw_ready || { cat "$T/gw.log"; fail "ibgwd not ready"; }
grep -q "partition p3: SDP on" "$T/gw.log" || { cat "$T/gw.log"; fail "no SDP on p3"; }
for h in ib1 ib4; do
	hr() { grep -q "ready:" "$T/$h.log"; }
	eventually hr || { cat "$T/$h.log"; fail "ipoibd $h not ready"; }
done
ns ib4 ip route replace default via 10.43.0.254 || fail "route on ib4"
C() { "$BIN/ibgwctl" -s "$T/ibgwd.sock" "$@"; }
C show partitions | grep -q "^p3 .* on$" || { C show partitions; fail "show partitions: SDP on p3"; }
C show partitions | grep -q "^p1 .* off$" || { C show partitions; fail "show partitions: SDP off on p1"; }
ok "gateway up, SDP on p3 (router)"

# sdpc PART NAME: a counter of the partition's sdp side
sdpc() {
	C -j show stats | python3 -c '
import json, sys
p = {x["name"]: x for x in json.load(sys.stdin)["partitions"]}[sys.argv[1]]
print(p.get("sdp", {}).get(sys.argv[2], 0))' "$1" "$2"
}
P() { ns "$1" env LD_PRELOAD="$PRELOAD" "${@:2}"; }

mkdir -p "$T/www" "$T/ibwww"
head -c 8000000 /dev/urandom >"$T/www/file"
head -c 3000000 /dev/urandom >"$T/ibwww/file"
want=$(sha256sum <"$T/www/file" | cut -d' ' -f1)
ibwant=$(sha256sum <"$T/ibwww/file" | cut -d' ' -f1)

cat >"$T/halfclose.py" <<'PY'
# read to EOF, then answer with what came: the reply after the peer's FIN
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(8)
while True:
    c, _ = s.accept()
    n = 0
    while True:
        b = c.recv(65536)
        if not b:
            break
        n += len(b)
    c.sendall(b"got %d bytes after EOF\n" % n)
    c.close()
PY
cat >"$T/resetter.py" <<'PY'
# take a line, then close with SO_LINGER 0: a reset
import socket, struct, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(8)
while True:
    c, _ = s.accept()
    c.recv(100)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()
PY
cat >"$T/reset_client.py" <<'PY'
# exit 0 when the connection is reset (or fails) before 5 s
import socket, sys, time
c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
c.sendall(b"hello\n")
t = time.time() + 5
try:
    while time.time() < t:
        b = c.recv(100)
        if not b:
            # EOF instead of a reset: writing must fail then
            time.sleep(0.2)
            c.sendall(b"more\n")
        time.sleep(0.05)
except (ConnectionResetError, BrokenPipeError, OSError) as e:
    print("error:", e.__class__.__name__)
    sys.exit(0)
print("no reset seen")
sys.exit(1)
PY
cat >"$T/connect_errno.py" <<'PY'
# connect() once; print the errno's name it failed with, or "connected"
# (TIMEOUT: s, or none for a blocking connect)
import errno, socket, sys
c = socket.socket()
if sys.argv[3] != "none":
    c.settimeout(float(sys.argv[3]))
try:
    c.connect((sys.argv[1], int(sys.argv[2])))
    print("connected")
except socket.timeout:
    print("timeout")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
PY
# SDP only: no TCP to fall back on, the gateway's answer is the program's
printf 'use sdp client * *:*\n' >"$T/sdp_only.conf"
SO() { P "$1" env LIBSDP_CONFIG_FILE="$T/sdp_only.conf" "${@:2}"; }

# suite IBHOST LANHOST LANIP PART GWIP EXPORTPORT IBADDR
suite() {
	local ib=$1 lan=$2 ip=$3 part=$4 gwip=$5 xport=$6 ibaddr=$7 mode=$8
	local b0 got S W H R X t0 t1

	(cd "$T/www" && exec ip netns exec "$(_ns_real "$lan")" python3 -m http.server 8000 --bind 0.0.0.0) >"$T/http.$lan.log" 2>&1 &
	W=$!; PIDS+=("$W")
	ns_bg S "$lan" iperf3 -s -p 5201 >/dev/null 2>&1
	ns_bg H "$lan" python3 "$T/halfclose.py" 7000
	ns_bg R "$lan" python3 "$T/resetter.py" 7002
	up() { ns "$lan" python3 -c 'import socket; [socket.create_connection(("127.0.0.1", p), 1).close() for p in (8000, 5201, 7000, 7002)]' 2>/dev/null; }
	eventually up || fail "$mode: LAN servers not up"

	b0=$(sdpc "$part" rx_bytes)
	t0=$(sdpc "$part" terminated)
	P "$ib" curl -s -m 20 -o "$T/got" "http://$ip:8000/file" || { tail "$T/gw.log"; fail "$mode: curl $ib -> $lan"; }
	got=$(sha256sum <"$T/got" | cut -d' ' -f1)
	expect_eq "$mode: sha256 of 8 MB through the gateway" "$got" "$want"
	[ "$(sdpc "$part" terminated)" -gt "$t0" ] || fail "$mode: curl not terminated by the gateway (TCP over IPoIB?)"
	[ "$(sdpc "$part" tx_bytes)" -ge 8000000 ] || fail "$mode: SDP tx_bytes $(sdpc "$part" tx_bytes) < 8 MB"
	ok "$mode: curl over SDP to the LAN: sha256 equal, SDP tx_bytes $(sdpc "$part" tx_bytes)"

	# iperf3, and the CM's view while it runs
	P "$ib" iperf3 -c "$ip" -p 5201 -t 3 -J >"$T/iperf.json" 2>"$T/iperf.err" &
	X=$!
	sleep 1.5
	ctl cm >"$T/cm.$mode"
	wait "$X" || { cat "$T/iperf.json"; fail "$mode: iperf3 $ib -> $lan"; }
	python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['end']['sum_received']['bits_per_second']; print('iperf3 %.0f Mbit/s' % (r/1e6)); sys.exit(0 if r > 0 else 1)" "$T/iperf.json" || fail "$mode: iperf3 result"
	grep -q "service 0x0000000000011451" "$T/cm.$mode" || { cat "$T/cm.$mode"; fail "$mode: no CM connection on SDP's service of port 5201"; }
	[ "$(sdpc "$part" rx_bytes)" -gt $((b0 + 10000000)) ] || fail "$mode: iperf3's bytes not in the gateway's SDP rx_bytes"
	ok "$mode: iperf3 over SDP (CM connection on service 0x0000000000011451, rx_bytes $(sdpc "$part" rx_bytes))"

	# socat: the reply comes after our EOF
	got=$(printf 'hello world' | P "$ib" socat -t 5 - "TCP:$ip:7000")
	expect_eq "$mode: socat half-close, reply after EOF" "$got" "got 11 bytes after EOF"

	# the LAN server resets
	P "$ib" python3 "$T/reset_client.py" "$ip" 7002 >"$T/reset.out" 2>&1 || { cat "$T/reset.out"; fail "$mode: LAN reset not seen by the IB program"; }
	ok "$mode: the LAN server's reset seen by the IB program ($(cat "$T/reset.out"))"

	# nobody listening on the LAN: the IB program's connect() fails as
	# TCP's would, ECONNREFUSED (the gateway holds the SDP request until
	# its TCP connect is over, then refuses it naming the errno)
	t1=$(sdpc "$part" tcp_connect_failed)
	t0=$(sdpc "$part" terminated)
	got=$(SO "$ib" python3 "$T/connect_errno.py" "$ip" 7999 10)
	expect_eq "$mode: connect() to a closed LAN port, SDP only" "$got" ECONNREFUSED
	[ "$(sdpc "$part" tcp_connect_failed)" -gt "$t1" ] || fail "$mode: tcp_connect_failed not counted"
	[ "$(sdpc "$part" terminated)" = "$t0" ] || fail "$mode: a failed TCP connect counted as terminated"
	# 'both' (no libsdp.conf): curl says it could not connect (7), not
	# that the connection broke after it was made (56)
	P "$ib" curl -s -m 10 -o /dev/null "http://$ip:7999/"
	expect_eq "$mode: curl's exit to a closed LAN port" "$?" 7
	ok "$mode: a closed LAN port: connect() ECONNREFUSED, curl exit 7 (tcp_connect_failed)"

	# a destination on the gateway itself is not the gateway's to terminate
	t1=$(sdpc "$part" refused_local)
	P "$ib" curl -s -m 5 -o /dev/null "http://$gwip:9/" 2>/dev/null
	[ "$(sdpc "$part" refused_local)" -gt "$t1" ] || fail "$mode: SDP to the gateway's own address not refused"
	ok "$mode: SDP to the gateway's own address refused (refused_local)"

	# the export: the LAN reaches the IB host's server (under the preload)
	(cd "$T/ibwww" && exec ip netns exec "$(_ns_real "$ib")" env LD_PRELOAD="$PRELOAD" python3 -m http.server 8000 --bind 0.0.0.0) >"$T/ibhttp.$ib.log" 2>&1 &
	X=$!; PIDS+=("$X")
	sleep 1
	t1=$(sdpc "$part" exported)
	ns "$lan" curl -s -m 20 -o "$T/gotx" "http://$gwip:$xport/file" || { tail "$T/gw.log"; fail "$mode: curl $lan -> export $xport"; }
	got=$(sha256sum <"$T/gotx" | cut -d' ' -f1)
	expect_eq "$mode: sha256 of 3 MB from the IB host through the export" "$got" "$ibwant"
	[ "$(sdpc "$part" exported)" -gt "$t1" ] || fail "$mode: export not counted"
	ok "$mode: export $gwip:$xport -> $ibaddr:8000 over SDP"

	kill "$W" "$S" "$H" "$R" "$X" 2>/dev/null
	wait "$W" "$S" "$H" "$R" "$X" 2>/dev/null
}

suite ib4 lan3 10.44.0.1 p3 10.43.0.254 8080 10.43.0.1 router

# a LAN address nobody has: the gateway's ARP fails, its TCP connect says
# EHOSTUNREACH after some 3 s, and so does the IB program's connect()
t1=$(sdpc p3 tcp_connect_failed)
got=$(SO ib4 python3 "$T/connect_errno.py" 10.44.0.99 80 20)
expect_eq "router: connect() to a LAN address nobody has, SDP only" "$got" EHOSTUNREACH
[ "$(sdpc p3 tcp_connect_failed)" -gt "$t1" ] || fail "router: tcp_connect_failed not counted for the unreachable host"
ok "router: a LAN host that does not answer ARP: connect() EHOSTUNREACH"

# a destination the gateway has no route to: its TCP connect fails at
# once (ENETUNREACH), and the REJ names that as it names a later failure:
# the IB program's connect() says what a TCP one routed by the gateway
# says, not ECONNREFUSED
tcp=$(ns ib4 python3 "$T/connect_errno.py" 10.99.0.1 80 10)
expect_eq "router: connect() to an unrouted network, plain TCP" "$tcp" ENETUNREACH
t1=$(sdpc p3 tcp_connect_failed)
got=$(SO ib4 python3 "$T/connect_errno.py" 10.99.0.1 80 10)
expect_eq "router: connect() to an unrouted network, SDP only" "$got" ENETUNREACH
[ "$(sdpc p3 tcp_connect_failed)" -gt "$t1" ] || fail "router: tcp_connect_failed not counted for the unrouted network"
ok "router: no route on the gateway: connect() ENETUNREACH over SDP as over TCP"

# a LAN server that does not answer the gateway's SYNs past the IB
# program's deadline (IBGW_SDP_TIMEOUT_MS, short here; its SYN-ACKs to the
# gateway's address blackholed, a route deterministic where a full accept
# queue is not: a SYN cookie can complete the gateway's connect): the
# program gives up, its CM's REJ reaches the gateway, which cancels its
# TCP connect (abandoned, not terminated). Once the server answers again
# it sees no connection of the gateway's: none for an 'sdp' program, only
# the program's own TCP fallback (from 10.43.0.1, not blackholed) for a
# 'both' one.
cat >"$T/lateaccept.py" <<'PY'
# log each connection's peer and the bytes it sent
import socket, sys, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(8)
print("listening", flush=True)
def serve(c, a):
    n = 0
    c.settimeout(5)
    try:
        while True:
            b = c.recv(65536)
            if not b:
                break
            n += len(b)
    except OSError:
        pass
    print("conn %s %d" % (a[0], n), flush=True)
while True:
    c, a = s.accept()
    print("accepted %s" % a[0], flush=True)
    threading.Thread(target=serve, args=(c, a), daemon=True).start()
PY
cat >"$T/send_hi.py" <<'PY'
# connect (timeout 30 s), send 3 bytes, close; print how it went
import errno, socket, sys
c = socket.socket()
c.settimeout(30)
try:
    c.connect((sys.argv[1], int(sys.argv[2])))
    c.sendall(b"hi\n")
    c.close()
    print("sent")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
PY
ns_bg LA lan3 python3 "$T/lateaccept.py" 7004 >"$T/late_sdp.log"
ns_bg LB lan3 python3 "$T/lateaccept.py" 7005 >"$T/late_both.log"
lup() { grep -q listening "$T/late_sdp.log" && grep -q listening "$T/late_both.log"; }
eventually lup || fail "router: LAN servers for the abandoned connects not up"
ns lan3 ip route add blackhole 10.44.0.254/32 || fail "router: blackhole route on lan3"
a0=$(sdpc p3 abandoned)
t0=$(sdpc p3 terminated)
P ib4 env IBGW_SDP_TIMEOUT_MS=1000 python3 "$T/send_hi.py" 10.44.0.1 7005 >"$T/late_both.out" 2>&1 &
X=$!
got=$(SO ib4 env IBGW_SDP_TIMEOUT_MS=1500 timeout 20 python3 "$T/connect_errno.py" 10.44.0.1 7004 none)
# ETIMEDOUT: python's socket.timeout since 3.10
case $got in timeout|ETIMEDOUT) ;; *) ns lan3 ip route del blackhole 10.44.0.254/32; fail "router: connect() past the program's deadline, SDP only: $got" ;; esac
# both IB connects given up: no TCP connect of the gateway's is left
ab() { [ "$(sdpc p3 abandoned)" -ge $((a0 + 2)) ]; }
eventually ab || { tail -20 "$T/gw.log"; fail "router: the gateway's TCP connects not abandoned (abandoned $(sdpc p3 abandoned), was $a0)"; }
left=$(ns gw ss -tnH state syn-sent "( dport = :7004 or dport = :7005 )")
[ -z "$left" ] || fail "router: the gateway still connects to the LAN server after the IB program gave up: $left"
wait "$X"
expect_eq "router: a 'both' program past its SDP deadline, over TCP" "$(cat "$T/late_both.out")" sent
ns lan3 ip route del blackhole 10.44.0.254/32
acc() { grep -q "^conn " "$T/late_both.log"; }
eventually acc || fail "router: the 'both' program's TCP connection not seen by the LAN server"
sleep 8		# a SYN of the gateway's, were it left, would be sent again by now
kill "$LA" "$LB" 2>/dev/null
wait "$LA" "$LB" 2>/dev/null
grep -q "^accepted " "$T/late_sdp.log" && { cat "$T/late_sdp.log"; fail "router: the LAN server took a connection of the gateway's after the 'sdp' program gave up"; }
expect_eq "router: connections the LAN server took for a 'both' program" "$(grep "^accepted " "$T/late_both.log")" "accepted 10.43.0.1"
grep -qx "conn 10.43.0.1 3" "$T/late_both.log" || { cat "$T/late_both.log"; fail "router: the 'both' program's bytes not at the LAN server"; }
expect_eq "router: terminated by connects the IB side gave up" "$(sdpc p3 terminated)" "$t0"
ok "router: a LAN server silent past the program's deadline: the gateway's connect abandoned ($(sdpc p3 abandoned)), the server sees only the 'both' program's TCP"

# an export to an IB host nobody answers for: the LAN connection is reset
ns lan3 curl -s -m 10 -o /dev/null "http://10.44.0.254:8090/" && fail "export to nobody answered"
[ "$(sdpc p3 export_unresolved)" -ge 1 ] || fail "export_unresolved not counted"
ok "router: export to an unresolved IB host reset (export_unresolved)"
# an IPv4 LAN client through an export to an IPv6 IB host: the program sees
# it IPv4-mapped, as a dual-stack TCP listener would (before: '::')
cat >"$T/peer6.py" <<'PY'
import socket
s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("::", 8001))
s.listen()
print("listening", flush=True)
c, a = s.accept()
print("peer %s" % a[0], flush=True)
c.sendall(a[0].encode() + b"\n")
c.close()
PY
pre6() { grep -q listening "$T/peer6.out"; }
P ib4 python3 "$T/peer6.py" >"$T/peer6.out" 2>&1 &
X6=$!
eventually pre6 || { cat "$T/peer6.out"; fail "the IPv6 server on ib4 did not start"; }
got=$(ns lan3 python3 -c 'import socket; s = socket.create_connection(("10.44.0.254", 8091), 10); print(s.makefile().readline().strip())' 2>&1)
wait "$X6"
expect_eq "export 8091 -> [fd43::4]:8001: the IB program's peer for LAN client 10.44.0.1" "$got" "::ffff:10.44.0.1"
ok "router: an IPv4 LAN client through an export to an IPv6 IB host is seen IPv4-mapped"
C show stats | grep -q "^p3 *sdp *terminated" || { C show stats; fail "show stats: no sdp lines"; }
C show stats | grep -q "^p3 *sdp *proto_error" || true

# --- transparent: SDP moves to p1 by a reload --------------------------------------
conf p1 >"$T/ibgw.conf"
kill -HUP "$GW_PID"
p1sdp() { C show partitions | grep -q "^p1 .* on$"; }
eventually p1sdp || { C show partitions; tail -20 "$T/gw.log"; fail "SDP not on p1 after the reload"; }
p1up() { C -j show partitions | python3 -c 'import json,sys; p={x["name"]: x for x in json.load(sys.stdin)["partitions"]}; sys.exit(0 if p["p1"]["carrier"] else 1)'; }
eventually p1up || fail "p1 no carrier after the reload"
ns lan1 ping -c 3 -W 2 10.41.0.1 >/dev/null || fail "lan1 -> ib1"
ok "reload: SDP on p1 (transparent), off on p3"

# its export, port 81, bound by a partition the reload restarted: ibgwd
# kept CAP_NET_BIND_SERVICE for it
suite ib1 lan1 10.41.0.50 p1 10.41.0.254 81 10.41.0.1 transparent

# the limit: sdp_max_conns = 1, one connection held, the second falls back
conf p1 1 >"$T/ibgw.conf"
kill -HUP "$GW_PID"
p1max() { C -j show partitions | python3 -c 'import json,sys; p={x["name"]: x for x in json.load(sys.stdin)["partitions"]}["p1"]; sys.exit(0 if p["sdp_max_conns"] == 1 and p["sdp_running"] and p["carrier"] else 1)'; }
eventually p1max || { C show partitions; fail "reload to sdp_max_conns = 1"; }
ns lan1 ping -c 3 -W 2 10.41.0.1 >/dev/null || fail "lan1 -> ib1 after the reload"
ns_bg H lan1 python3 "$T/halfclose.py" 7000
(cd "$T/www" && exec ip netns exec "$(_ns_real lan1)" python3 -m http.server 8000 --bind 0.0.0.0) >/dev/null 2>&1 &
W=$!; PIDS+=("$W")
# both listening first: a held connection refused by the LAN would not be
# held (python3 may take more than a second to start on a loaded machine)
l1up() { ns lan1 python3 -c 'import socket; [socket.create_connection(("127.0.0.1", p), 1).close() for p in (7000, 8000)]' 2>/dev/null; }
eventually l1up || fail "transparent: LAN servers for the limit not up"
(sleep 30) | P ib1 socat -t 1 - TCP:10.41.0.50:7000 >/dev/null 2>&1 &
X=$!
held() { [ "$(sdpc p1 gw_conns_now)" -ge 1 ]; }
eventually held || { tail -30 "$T/gw.log"; ctl cm; C show stats | grep " sdp " | grep -v " 0$"; fail "transparent: held connection not over SDP"; }
r0=$(sdpc p1 refused_limit)
t0=$(sdpc p1 terminated)
P ib1 curl -s -m 20 -o "$T/got2" "http://10.41.0.50:8000/file" || fail "transparent: second connection did not fall back to TCP"
got=$(sha256sum <"$T/got2" | cut -d' ' -f1)
expect_eq "transparent: sha256 of the second connection (TCP over IPoIB)" "$got" "$want"
[ "$(sdpc p1 refused_limit)" -gt "$r0" ] || fail "transparent: refused_limit not counted"
expect_eq "transparent: connections terminated while at the limit" "$(sdpc p1 terminated)" "$t0"
ok "transparent: over sdp_max_conns = 1 refused (refused_limit $(sdpc p1 refused_limit)), fell back to TCP"
kill "$X" "$H" "$W" 2>/dev/null
wait "$X" "$H" "$W" 2>/dev/null

# --- both partitions: SDP on p1 and p3 at once ------------------------------------
conf both >"$T/ibgw.conf"
kill -HUP "$GW_PID"
p3sdp() { C show partitions | grep -q "^p3 .* on$" && C show partitions | grep -q "^p1 .* on$"; }
eventually p3sdp || { C show partitions; tail -20 "$T/gw.log"; fail "SDP not on p1 and p3 after the reload"; }
eventually p1up || fail "p1 no carrier after the reload"
ns lan1 ping -c 3 -W 2 10.41.0.1 >/dev/null || fail "lan1 -> ib1 after the reload"
ns_bg H lan1 python3 "$T/halfclose.py" 7000
ns_bg H3 lan3 python3 "$T/halfclose.py" 7000
ctl cm >"$T/cm.both"
gwlid=$(C -j show summary | python3 -c 'import json,sys; print("0x%04x" % json.load(sys.stdin)["lid"])')
for k in 0x0001 0x0003; do
	grep -q "^listen port $gwlid .*service 0x0000000000010000 mask 0xffffffffffff0000 .* pkey $k$" "$T/cm.both" ||
		{ cat "$T/cm.both"; fail "both: no CM listener of the gateway ($gwlid) on SDP's service IDs for P_Key $k"; }
done
t1=$(sdpc p1 terminated) t3=$(sdpc p3 terminated)
hc() { [ "$(printf 'hello %s' "$2" | SO "$1" socat -t 5 - "TCP:$3:7000")" = "got $((6 + ${#2})) bytes after EOF" ]; }
eventually hc ib1 p1 10.41.0.50 || fail "both: socat ib1 -> lan1 over SDP"
eventually hc ib4 p3 10.44.0.1 || fail "both: socat ib4 -> lan3 over SDP"
[ "$(sdpc p1 terminated)" -gt "$t1" ] || fail "both: p1's connection not terminated in p1"
[ "$(sdpc p3 terminated)" -gt "$t3" ] || fail "both: p3's connection not terminated in p3"
# at once: an 8 MB curl in each partition
(cd "$T/www" && exec ip netns exec "$(_ns_real lan1)" python3 -m http.server 8000 --bind 0.0.0.0) >/dev/null 2>&1 &
W=$!; PIDS+=("$W")
(cd "$T/www" && exec ip netns exec "$(_ns_real lan3)" python3 -m http.server 8000 --bind 0.0.0.0) >/dev/null 2>&1 &
W3=$!; PIDS+=("$W3")
hup() { for n in lan1 lan3; do ns $n python3 -c 'import socket; socket.create_connection(("127.0.0.1", 8000), 1).close()' 2>/dev/null || return 1; done; }
eventually hup || fail "both: LAN http servers not up"
SO ib1 curl -s -m 30 -o "$T/got.both1" "http://10.41.0.50:8000/file" &
X=$!
SO ib4 curl -sS -m 30 -o "$T/got.both3" "http://10.44.0.1:8000/file" ||
	{ r=$?; tail -20 "$T/gw.log"; fail "both: curl ib4 -> lan3 (exit $r)"; }
wait "$X" || { r=$?; tail -20 "$T/gw.log"; fail "both: curl ib1 -> lan1 (exit $r)"; }
for f in got.both1 got.both3; do
	expect_eq "both: sha256 of 8 MB ($f)" "$(sha256sum <"$T/$f" | cut -d' ' -f1)" "$want"
done
kill "$H" "$H3" "$W" "$W3" 2>/dev/null
wait "$H" "$H3" "$W" "$W3" 2>/dev/null
ok "both: SDP terminated in p1 and p3 at once (CM listeners by P_Key; terminated p1 $(sdpc p1 terminated), p3 $(sdpc p3 terminated))"

# metrics text: the Prometheus families render (via SIGUSR1's report)
kill -USR1 "$GW_PID"
sleep 0.3
grep -q "stats p1 *sdp *terminated" "$T/gw.log" || fail "SIGUSR1 report without the sdp counters"

kill -TERM "$GW_PID"
wait "$GW_PID"
rc=$?
[ "$rc" -eq 0 ] || { tail -30 "$T/gw.log"; fail "ibgwd exited $rc"; }
ok "ibgwd stopped cleanly"
