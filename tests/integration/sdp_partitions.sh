#!/bin/bash
# SDP and RDS services of two partitions on one node: a host that is a
# member of two partitions runs an ipoibd for each (ib1 in 0x8001, ib2 in
# 0x8002), each with its SDP and RDS services on sockets of their own
# (--sdp-socket, --rds-socket; programs pick one with IBGW_SDP_SOCKET or
# IBGW_RDS_SOCKET).  Each service's CM listeners take only the REQs of its
# partition (the listen's P_Key), as rdma_cm's listener on an IPoIB
# interface's address does, so both listen on SDP's and RDS's service IDs
# at once.  Checked:
#  a) all four services on (before, the second of a node found RDS's
#     service IDs taken: "no RDS"), and ibfabricctl cm shows h2's RDS
#     listeners with P_Keys 0x0001 and 0x0002;
#  b) socat over SDP (SDP only by libsdp.conf) in each partition, h1 -> h2,
#     served by the service of that partition (its listener's P_Key, its
#     counters);
#  c) python3 AF_RDS in partition 0x8002, h1 -> h2's echo server and back;
#  d) a program bound to partition 0x8001's service cannot reach an
#     address of 0x8002: connect fails, nothing goes to 0x8002's service;
#  e) a program given both services (IBGW_SDP_SOCKET=A,B) listens and
#     connects in both partitions over SDP;
#  f) AF_RDS the same way (IBGW_RDS_SOCKET=A,B): sockets move to the
#     service of the address they bind; f2) by the scope for the one
#     link-local address of both interfaces;
#  g) the first partition's ipoibd stopped: the second still serves.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/netns.bash"
. "$(dirname "$0")/sdp.bash"
command -v socat >/dev/null || skip "socat not installed (make deps)"
command -v python3 >/dev/null || skip "python3 not installed (make deps)"

cat >"$T/partitions.conf" <<'CONF'
Default=0x7fff, ipoib : ALL=full;
p1=0x8001, ipoib : h1=full, h2=full;
p2=0x8002, ipoib : h1=full, h2=full;
CONF
start_fabric -P "$T/partitions.conf"

# two ipoibd per host namespace, one per partition: their PIDs in h1_p1_PID,
# h1_p2_PID ..., their logs in $T/h1.p1.log ...
for h in h1:1 h2:2; do
	n=${h%%:*} x=${h#*:}
	ns_add "$n"
	ns_bg "${n}_p1_PID" "$n" "$BIN/ipoibd" -f -F "soft:$SOCK" -n "$n" \
		-p 0x8001 -i ib1 --address "10.61.0.$x/24" >"$T/$n.p1.log" 2>&1
	ns_bg "${n}_p2_PID" "$n" "$BIN/ipoibd" -f -F "soft:$SOCK" -n "$n" \
		-p 0x8002 -i ib2 --address "10.62.0.$x/24" \
		--sdp-socket @ibgw-sdp-p2 --rds-socket @ibgw-rds-p2 >"$T/$n.p2.log" 2>&1
done
for l in h1.p1 h1.p2 h2.p1 h2.p2; do
	r() { grep -q "ready:" "$T/$l.log"; }
	eventually r || { cat "$T/$l.log"; fail "ipoibd $l not ready"; }
	grep -q "SDP service on" "$T/$l.log" || { cat "$T/$l.log"; fail "a) $l: no SDP service"; }
	grep -q "RDS service on" "$T/$l.log" || { cat "$T/$l.log"; fail "a) $l: no RDS service"; }
done
h2lid=$(ctl nodes | awk '$1 == "h2" { print $3 }')
[ -n "$h2lid" ] || { ctl nodes; fail "a) no LID for h2 in ibfabricctl nodes"; }
ctl cm >"$T/cm"
for k in 0x0001 0x0002; do
	grep -q "^listen port $h2lid .*service 0x00000000010648ca .* pkey $k$" "$T/cm" ||
		{ cat "$T/cm"; fail "a) h2 ($h2lid): no RDS listener for P_Key $k"; }
done
ok "a) two partitions' SDP and RDS services on each node, RDS listeners by P_Key"

# b) SDP in each partition; SO NS PART PROGRAM...: SDP only, that
# partition's service
printf 'use sdp server * *:*\nuse sdp client * *:*\n' >"$T/sdp_only.conf"
SO() {
	local n=$1 s=@ibgw-sdp
	[ "$2" = p2 ] && s=@ibgw-sdp-p2
	shift 2
	LIBSDP_CONFIG_FILE="$T/sdp_only.conf" pre "$n" env IBGW_SDP_SOCKET="$s" "$@"
}
# pstat HOST PART NAME: a counter of that ipoibd (SIGUSR1 report)
pstat() {
	local pid log=$T/$1.$2.log n
	pid=$(eval echo \$${1}_${2}_PID)
	n=$(grep -c "stats $3 " "$log")
	kill -USR1 "$pid"
	for _ in $(seq 1 50); do
		[ "$(grep -c "stats $3 " "$log")" -gt "$n" ] && break
		sleep 0.1
	done
	sed -n "s/.*stats $3 \\([0-9]*\\)\$/\\1/p" "$log" | tail -n1
}
head -c 2000000 /dev/urandom >"$T/data"
want=$(sha256sum <"$T/data" | cut -d' ' -f1)
for p in p1 p2; do
	x=1
	[ $p = p2 ] && x=2
	r0=$(pstat h2 $p sdp.rx_bytes)
	o0=$(pstat h2 $([ $p = p1 ] && echo p2 || echo p1) sdp.rx_bytes)
	SO h2 $p socat -u "TCP-LISTEN:700$x,bind=10.6$x.0.2" "OPEN:$T/got.$p,creat,trunc" &
	S=$!
	# its SDP listener (SDP only: no TCP one): service 0x10000 | port,
	# in its partition alone
	sid=$(printf '0x%016x' $((0x10000 + 7000 + x)))
	lst() { ctl cm | grep -q "^listen port $h2lid .*service $sid .* pkey 0x000$x$"; }
	eventually lst || { ctl cm; fail "b) $p: no SDP listener on $sid for P_Key 0x000$x"; }
	SO h1 $p socat -u "OPEN:$T/data" "TCP:10.6$x.0.2:700$x" || fail "b) $p: socat h1 -> h2 over SDP"
	wait "$S" || fail "b) $p: the server failed"
	expect_eq "b) $p: sha256 of 2 MB over SDP" "$(sha256sum <"$T/got.$p" | cut -d' ' -f1)" "$want"
	[ "$(pstat h2 $p sdp.rx_bytes)" -ge $((r0 + 2000000)) ] || fail "b) $p: not carried by $p's SDP service"
	expect_eq "b) $p: the other partition's service carried nothing" \
		"$(pstat h2 $([ $p = p1 ] && echo p2 || echo p1) sdp.rx_bytes)" "$o0"
done
ok "b) socat over SDP in each partition, each by its partition's service"

# c) RDS in partition 0x8002
PY=$TOP/tests/integration/rds_progs.py
RP() { local n=$1; shift; pre "$n" env IBGW_RDS_SOCKET=@ibgw-rds-p2 "$@"; }
RP h2 python3 "$PY" echo-server 10.62.0.2 7000 0 >"$T/rds_srv.out" 2>&1 &
E=$!
PIDS+=("$E")
bound() { grep -q "^bound" "$T/rds_srv.out"; }
eventually bound || { cat "$T/rds_srv.out"; fail "c) AF_RDS echo server in p2"; }
RP h1 python3 "$PY" echo-client 10.62.0.1 10.62.0.2 7000 100 4000 70000 >"$T/rds_cli.out" 2>&1 ||
	{ cat "$T/rds_cli.out" "$T/rds_srv.out"; tail "$T/h1.p2.log"; fail "c) AF_RDS client in p2"; }
grep -q "^echoed 3 sizes from 10.62.0.1 port " "$T/rds_cli.out" || fail "c) $(cat "$T/rds_cli.out")"
kill "$E" 2>/dev/null
wait "$E" 2>/dev/null
ok "c) AF_RDS in partition 0x8002: 3 sizes up to 70000 bytes echoed"

# d) p1's service has no way to p2's addresses
c0=$(pstat h2 p2 sdp_service.accepted_sdp)
out=$(SO h1 p1 python3 -c '
import errno, socket, sys
s = socket.socket()
s.settimeout(15)
try:
    s.connect(("10.62.0.2", 7009))
    print("connected")
except OSError as e:
    print("refused", errno.errorcode.get(e.errno, e))
')
case "$out" in
refused*) ;;
*) fail "d) p1's service reached an address of p2: $out" ;;
esac
expect_eq "d) p2's service's accepted_sdp, unchanged" "$(pstat h2 p2 sdp_service.accepted_sdp)" "$c0"
ok "d) through p1's service, p2's address is not reached ($out)"

# e) one program, both partitions: IBGW_SDP_SOCKET names both services.
# A server listening on every address takes SDP connections from each
# partition (the first service made the listener, the second adopted it),
# and a client reaches each partition's address over SDP through that
# partition's service (the first says ENETUNREACH at once for the other's
# address, counted in connects_elsewhere).  SO_KEEPALIVE on a connection
# p2's service handed over is told to p2's service, found by the PID in
# the stream's name (the N alone would name another connection, or none,
# at p1's).
printf 'use sdp server * *:*\nuse sdp client * *:*\nlog min-level 3 destination file %s\n' \
	"$T/both.log" >"$T/sdp_both.conf"
SB() {
	local n=$1
	shift
	LIBSDP_CONFIG_FILE="$T/sdp_both.conf" pre "$n" env IBGW_SDP_SOCKET=@ibgw-sdp,@ibgw-sdp-p2 "$@"
}
a1=$(pstat h2 p1 sdp_service.accepted_sdp)
a2=$(pstat h2 p2 sdp_service.accepted_sdp)
ad2=$(pstat h2 p2 sdp_service.listens_adopted)
el1=$(pstat h1 p1 sdp_service.connects_elsewhere)
f1=$(pstat h1 p1 sdp_service.connect_failures)
c1=$(pstat h1 p1 sdp_service.connects)
c2=$(pstat h1 p2 sdp_service.connects)
SB h2 python3 -c '
import hashlib, socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 7100))
s.listen(4)
print("listening", flush=True)
for _ in range(2):
    c, peer = s.accept()
    c.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    h = hashlib.sha256()
    while True:
        b = c.recv(65536)
        if not b:
            break
        h.update(b)
    c.sendall(h.hexdigest().encode())
    c.close()
    print("from", peer[0], flush=True)
' >"$T/both_srv.out" 2>&1 &
S=$!
PIDS+=("$S")
lsn() { grep -q "^listening" "$T/both_srv.out"; }
eventually lsn || { cat "$T/both_srv.out"; fail "e) the server"; }
adopted() { [ "$(pstat h2 p2 sdp_service.listens_adopted)" -gt "$ad2" ]; }
eventually adopted || { cat "$T/both.log" "$T/h2.p2.log"; fail "e) p2's service did not adopt the listener"; }
for x in 1 2; do
	got=$(SB h1 python3 -c '
import socket, sys
s = socket.create_connection((sys.argv[1], 7100), timeout=20)
s.sendall(open(sys.argv[2], "rb").read())
s.shutdown(socket.SHUT_WR)
print(s.recv(100).decode())
' "10.6$x.0.2" "$T/data") || { cat "$T/both.log"; fail "e) client to 10.6$x.0.2"; }
	expect_eq "e) 2 MB to 10.6$x.0.2 (partition p$x) over SDP, sha256 at the server" "$got" "$want"
done
wait "$S" || { cat "$T/both_srv.out"; fail "e) the server failed"; }
expect_eq "e) h2: accepted by p1's service" "$(pstat h2 p1 sdp_service.accepted_sdp)" $((a1 + 1))
expect_eq "e) h2: accepted by p2's service" "$(pstat h2 p2 sdp_service.accepted_sdp)" $((a2 + 1))
expect_eq "e) h1: connected by p1's service" "$(pstat h1 p1 sdp_service.connects)" $((c1 + 1))
expect_eq "e) h1: connected by p2's service" "$(pstat h1 p2 sdp_service.connects)" $((c2 + 1))
expect_eq "e) h1: p1's service left p2's address to the next (connects_elsewhere)" \
	"$(pstat h1 p1 sdp_service.connects_elsewhere)" $((el1 + 1))
expect_eq "e) h1: p1's service counted no failure for it" \
	"$(pstat h1 p1 sdp_service.connect_failures)" "$f1"
n=$(grep -c "SO_KEEPALIVE 1, TCP_KEEPIDLE 7200: told the service" "$T/both.log")
expect_eq "e) SO_KEEPALIVE told the service of each accepted connection" "$n" 2
ok "e) one program with both services: its listener takes SDP from both partitions, its connects reach both, each by its partition's service"

# f) AF_RDS with both services named (IBGW_RDS_SOCKET=A,B): socket()
# is made at the first; a bind to partition 0x8002's address moves it to
# the second (the first has no such address: EADDRNOTAVAIL there), one
# to 0x8001's stays.  Echoes in both partitions from one client program
# each, carried by the services of the partitions (their binds and
# rx_msgs), the first counting the bind it refused.
RB() { local n=$1; shift; pre "$n" env IBGW_RDS_SOCKET=@ibgw-rds,@ibgw-rds-p2 "$@"; }
b1=$(pstat h2 p1 rds_service.binds)
b2=$(pstat h2 p2 rds_service.binds)
bf1=$(pstat h2 p1 rds_service.bind_failures)
r1=$(pstat h2 p1 rds_service.rx_msgs)
r2=$(pstat h2 p2 rds_service.rx_msgs)
for x in 1 2; do
	RB h2 python3 "$PY" echo-server "10.6$x.0.2" 7200 0 >"$T/rdsb_srv.$x" 2>&1 &
	eval "E$x=\$!"
	PIDS+=("$!")
done
for x in 1 2; do
	bnd() { grep -q "^bound" "$T/rdsb_srv.$x"; }
	eventually bnd || { cat "$T/rdsb_srv.$x"; fail "f) AF_RDS echo server on 10.6$x.0.2"; }
done
for x in 1 2; do
	RB h1 python3 "$PY" echo-client "10.6$x.0.1" "10.6$x.0.2" 7200 100 4000 70000 >"$T/rdsb_cli.$x" 2>&1 ||
		{ cat "$T/rdsb_cli.$x" "$T/rdsb_srv.$x"; fail "f) AF_RDS client in p$x"; }
	grep -q "^echoed 3 sizes from 10.6$x.0.1 port " "$T/rdsb_cli.$x" || fail "f) p$x: $(cat "$T/rdsb_cli.$x")"
done
kill "$E1" "$E2" 2>/dev/null
wait "$E1" "$E2" 2>/dev/null
expect_eq "f) h2: p1's service bound its server" "$(pstat h2 p1 rds_service.binds)" $((b1 + 1))
expect_eq "f) h2: p2's service bound the other (moved there)" "$(pstat h2 p2 rds_service.binds)" $((b2 + 1))
expect_eq "f) h2: p1's service refused p2's address once" \
	"$(pstat h2 p1 rds_service.bind_failures)" $((bf1 + 1))
expect_eq "f) h2: p1's service took its 3 datagrams" "$(pstat h2 p1 rds_service.rx_msgs)" $((r1 + 3))
expect_eq "f) h2: p2's service took its 3 datagrams" "$(pstat h2 p2 rds_service.rx_msgs)" $((r2 + 3))
ok "f) AF_RDS with both services: sockets bound in each partition, each carried by its partition's service"

# f2) the same with link-local names: both interfaces of a node have the
# one fe80:: address (the port GUID's), so the scope alone says which
# partition: bound scoped to ib2, sockets move to p2's service (p1's
# refuses another interface's scope), and rds_semantics' linklocal case
# (errors, names, echoes) passes between h1 and h2 in partition 0x8002
RS=$BIN/tests/rds_semantics
ll() { ns "$1" ip -6 addr show dev ib2 scope link | sed -n 's/.*inet6 \(fe80[^/]*\).*/\1/p'; }
L1=$(ll h1) L2=$(ll h2)
[ -n "$L1" ] && [ -n "$L2" ] || fail "f2) no link-local addresses on ib2"
b2=$(pstat h2 p2 rds_service.binds)
RB h2 "$RS" echo "$L2%ib2" 7201 >"$T/rdsll_srv" 2>&1 &
E=$!
PIDS+=("$E")
bnd() { grep -q "^bound" "$T/rdsll_srv"; }
eventually bnd || { cat "$T/rdsll_srv"; fail "f2) AF_RDS echo on $L2%ib2"; }
expect_eq "f2) h2: p2's service bound the link-local echo" "$(pstat h2 p2 rds_service.binds)" $((b2 + 1))
out=$(RB h1 timeout 60 "$RS" linklocal "$L1%ib2" "$L2%ib2" 7201 2>&1)
echo "$out" | grep -q "^ok: linklocal:" || fail "f2) $out"
kill "$E" 2>/dev/null
wait "$E" 2>/dev/null
ok "f2) AF_RDS link-local names with both services: each scope's partition"

# g) the first partition's ipoibd stopped on h1: the program with both
# services named still reaches partition 0x8002 over SDP and RDS (the
# first control socket refuses, the second service takes the connect and
# makes the AF_RDS socket).
kill "$h1_p1_PID"
wait "$h1_p1_PID" 2>/dev/null
c2=$(pstat h1 p2 sdp_service.connects)
SB h2 socat -u TCP-LISTEN:7300,bind=10.62.0.2 "OPEN:$T/got.g,creat,trunc" &
S=$!
PIDS+=("$S")
sid=$(printf '0x%016x' $((0x10000 + 7300)))
lst() { ctl cm | grep -q "^listen port $h2lid .*service $sid .* pkey 0x0002$"; }
eventually lst || { ctl cm; fail "g) no SDP listener on $sid for P_Key 0x0002"; }
SB h1 socat -u "OPEN:$T/data" "TCP:10.62.0.2:7300" || { cat "$T/both.log"; fail "g) socat h1 -> h2 with p1's service gone"; }
wait "$S" || fail "g) the server failed"
expect_eq "g) sha256 of 2 MB over SDP with the first service gone" "$(sha256sum <"$T/got.g" | cut -d' ' -f1)" "$want"
expect_eq "g) h1: connected by p2's service" "$(pstat h1 p2 sdp_service.connects)" $((c2 + 1))
RB h2 python3 "$PY" echo-server 10.62.0.2 7201 0 >"$T/rdsg_srv" 2>&1 &
E=$!
PIDS+=("$E")
bnd() { grep -q "^bound" "$T/rdsg_srv"; }
eventually bnd || { cat "$T/rdsg_srv"; fail "g) AF_RDS echo server"; }
RB h1 python3 "$PY" echo-client 10.62.0.1 10.62.0.2 7201 100 4000 >"$T/rdsg_cli" 2>&1 ||
	{ cat "$T/rdsg_cli" "$T/rdsg_srv"; fail "g) AF_RDS client with p1's service gone"; }
grep -q "^echoed 2 sizes from 10.62.0.1 port " "$T/rdsg_cli" || fail "g) $(cat "$T/rdsg_cli")"
kill "$E" 2>/dev/null
wait "$E" 2>/dev/null
ok "g) with the first partition's ipoibd stopped, the program reaches the second over SDP and RDS"
