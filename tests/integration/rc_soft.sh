#!/bin/bash
# RC queue pairs and the CM on the software subnet: rctest, the program
# and the assertions of the guest tier's rc_verbs.sh, between two soft
# nodes; the soft provider runs the RC transport, ibfabricd the nodes' CMs.
# The --pcap capture is decoded by tshark: CM attributes, BTH opcodes,
# RETH and AETH where they belong, nothing malformed.  Then the CM's own
# cases: a REQ to a GID nobody has, a REQ that times out (a port down),
# two processes of one node listening and connecting independently, a
# second listener on a taken service ID.
. "$(dirname "$0")/lib.bash"
command -v tshark >/dev/null || fail "no tshark (run 'make deps')"
RT=$BIN/tests/rctest
[ -x "$RT" ] || fail "no $RT (make all)"

# MTU 1024 as rxe has it, so that the sizes are multi-packet as there
start_fabric --pcap "$T/rc.pcap" --mtu 1024
SPEC=soft:$SOCK
gid_of() { fabtest info "$1" | sed -n 's/^gid //p'; }
srv_gid=$(gid_of srv)
[ -n "$srv_gid" ] || fail "no GID for node srv"

"$RT" -F "$SPEC" --node srv server --conns 1 --timeout 60000 >"$T/srv.out" 2>&1 &
SPID=$!
PIDS+=("$SPID")
listening() { grep -q '^listening port 7471$' "$T/srv.out"; }
eventually listening || { cat "$T/srv.out"; fail "server does not listen"; }
C=("$RT" -F "$SPEC" --node cli client --dst "$srv_gid" --timeout 20000)

# 1: rejected with private data
"${C[@]}" --pdata reject-me >"$T/c1.out" 2>&1
rc=$?
cat "$T/c1.out"
[ $rc -eq 2 ] || fail "1: exit $rc, expected 2 (rejected)"
grep -q "^rejected reason 28 pdata 'rejected-by-server'\$" "$T/c1.out" ||
	fail "1: no REJ reason 28 with the server's private data"
ok "1: rejected reason 28 pdata 'rejected-by-server'"

# 2: nobody listens on the port: REJ 8 (invalid service ID), at once
t0=$(date +%s%N)
"${C[@]}" --port 7999 >"$T/c2.out" 2>&1
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
cat "$T/c2.out"
[ $rc -eq 2 ] || fail "2: exit $rc, expected 2"
grep -q '^rejected reason 8 ' "$T/c2.out" || fail "2: not REJ reason 8"
[ $ms -lt 2000 ] || fail "2: the REJ took $ms ms"
ok "2: port nobody listens on: rejected reason 8 in $ms ms"

# 2b: a GID no port has: unreachable, no REQ leaves
"$RT" -F "$SPEC" --node cli client --dst fe80::2:c903:dead:beef \
	--timeout 20000 >"$T/c2b.out" 2>&1
rc=$?
cat "$T/c2b.out"
[ $rc -eq 1 ] || [ $rc -eq 2 ] || fail "2b: exit $rc"
grep -Eq '^(unreachable|connect refused) .*(No route to host|EHOSTUNREACH)' "$T/c2b.out" ||
	fail "2b: no 'No route to host' for a GID nobody has"
ok "2b: no such GID: $(head -n1 "$T/c2b.out")"

# 3: a REQ carries 92 bytes of private data (no rdma_cm header here)
"${C[@]}" --pdata-len 93 >"$T/c3.out" 2>&1
rc=$?
cat "$T/c3.out"
[ $rc -eq 1 ] || fail "3: exit $rc, expected 1"
grep -q '^connect refused EINVAL: ' "$T/c3.out" || fail "3: 93 bytes not refused"
ok "3: 93 bytes of REQ private data: EINVAL"

# 4: the connection
"${C[@]}" >"$T/c4.out" 2>&1 || { cat "$T/c4.out" "$T/srv.out"; fail "4: client failed"; }
cat "$T/c4.out"
grep -Eq "^established pdata 'hello-from-server' len 196 peer_qpn 0x[0-9a-f]{6} rkey 0x[0-9a-f]{8} bytes 65536\$" "$T/c4.out" ||
	fail "4: REP private data wrong"
grep -q '^sent 140 bytes 344200$' "$T/c4.out" || fail "4: not 140 sent"
grep -q '^write ok bytes 65536 imm 0x1234abcd$' "$T/c4.out" || fail "4: write not ok"
grep -q '^read ok bytes 65536 ' "$T/c4.out" || fail "4: read not ok"
grep -q '^disconnected$' "$T/c4.out" || fail "4: no DISCONNECTED"
wait "$SPID" || { cat "$T/srv.out"; fail "server failed"; }
cat "$T/srv.out"
cli_gid=$(gid_of cli)
grep -q "^request pdata 'reject-me' len 92 peer $cli_gid " "$T/srv.out" ||
	fail "server: no REQ 'reject-me' with 92 bytes from $cli_gid"
grep -Eq "^request pdata 'hello-from-client' len 92 peer $cli_gid peer_qpn 0x[0-9a-f]{6}\$" "$T/srv.out" ||
	fail "server: no REQ 'hello-from-client'"
for l in '^established$' '^recv ok 140 bad 0 bytes 344200$' \
	'^write ok imm 0x1234abcd bytes 65536$' '^disconnected$' \
	'^flushed 64 receives$' \
	'^post-in-error: completion work request flushed recv 0$'; do
	grep -Eq "$l" "$T/srv.out" || fail "server: no line $l"
done
ok "4: REQ/REP private data, 140 messages, write+imm, read, DISCONNECTED both sides, receives flushed, post in error flushed"

# the capture, decoded by tshark
ctl capture off >/dev/null
P=$T/rc.pcap
ts() {
	tshark --disable-heuristic rpcrdma_infiniband \
		--disable-heuristic eth_over_ib -r "$P" "$@" 2>/dev/null
}
cnt() { ts -Y "$1" | wc -l; }
sleep 1.2	# the capture is flushed every second
bad=$(cnt '_ws.malformed || _ws.expert.severity == error')
[ "$bad" -eq 0 ] || { ts -Y '_ws.malformed || _ws.expert.severity == error' | head; fail "capture: $bad malformed or erroneous packets"; }
cm() { cnt "infiniband.mad.mgmtclass == 0x07 && infiniband.mad.attributeid == $1"; }
req=$(cm 0x0010) rej=$(cm 0x0012) rep=$(cm 0x0013) rtu=$(cm 0x0014)
dreq=$(cm 0x0015) drep=$(cm 0x0016)
echo "capture: CM REQ $req REJ $rej REP $rep RTU $rtu DREQ $dreq DREP $drep"
[ "$req" -ge 3 ] || fail "capture: $req REQs, expected 3"
[ "$rej" -ge 2 ] || fail "capture: $rej REJs, expected 2"
[ "$rep" -ge 1 ] && [ "$rtu" -ge 1 ] && [ "$dreq" -ge 1 ] && [ "$drep" -ge 1 ] ||
	fail "capture: REP $rep RTU $rtu DREQ $dreq DREP $drep"
n=$(cnt 'infiniband.cm.req.serviceid.dport == 7471')
[ "$n" -ge 2 ] || fail "capture: $n REQs to port 7471"
n=$(cnt 'infiniband.cm.rej.reason == 8')
[ "$n" -ge 1 ] || fail "capture: no REJ reason 8"
rp=$(ts -Y 'infiniband.cm.rej.reason == 28' -T fields -e infiniband.cm.rej.private | head -n1)
echo "$rp" | tr -d ':' | xxd -r -p | grep -aq 'rejected-by-server' ||
	fail "capture: REJ private data $rp"
for op in 0 1 2 4 6 7 8 9 12 13 14 15 17; do
	n=$(cnt "infiniband.bth.opcode == $op")
	[ "$n" -ge 1 ] || fail "capture: no BTH opcode $op"
done
rkey=$(sed -n 's/^established .* rkey \(0x[0-9a-f]*\) .*/\1/p' "$T/c4.out")
n=$(cnt "infiniband.bth.opcode == 6 && infiniband.reth.r_key == $rkey && infiniband.reth.dmalen == 32768")
[ "$n" -ge 2 ] || fail "capture: $n RDMA WRITE First with RETH rkey $rkey len 32768"
n=$(cnt "infiniband.bth.opcode == 12 && infiniband.reth.r_key == $rkey && infiniband.reth.dmalen == 65536")
[ "$n" -ge 1 ] || fail "capture: no READ Request with RETH rkey $rkey len 65536"
n=$(cnt 'infiniband.bth.opcode <= 5 && infiniband.reth')
[ "$n" -eq 0 ] || fail "capture: $n SEND packets with a RETH"
n=$(cnt 'infiniband.bth.opcode == 9 && infiniband.immdt == 12:34:ab:cd')
[ "$n" -ge 1 ] || fail "capture: no RDMA WRITE Last with Immediate 0x1234abcd"
n=$(cnt 'infiniband.bth.opcode == 17 && !infiniband.aeth')
[ "$n" -eq 0 ] || fail "capture: $n ACKs without AETH"
n=$(cnt '(infiniband.bth.opcode == 13 || infiniband.bth.opcode == 15) && infiniband.aeth')
[ "$n" -ge 2 ] || fail "capture: read responses First/Last without AETH"
n=$(cnt 'infiniband.bth.opcode == 14 && infiniband.aeth')
[ "$n" -eq 0 ] || fail "capture: $n read responses Middle with an AETH"
data=$(cnt 'infiniband.bth.opcode <= 16')
acks=$(cnt 'infiniband.bth.opcode == 17')
echo "capture: $data RC request/response packets, $acks ACKs"
[ "$acks" -lt "$data" ] || fail "capture: ACKs are not coalesced ($acks for $data packets)"
ok "capture: CM REQ/REJ(8, 28 + private data)/REP/RTU/DREQ/DREP, RC opcodes, RETH and AETH where they belong, $acks ACKs for $data packets, none malformed"
ctl capture on >/dev/null

# two processes of one node listen on their own ports, and a third cannot
# take a port already listened on; clients of one node connect to each
"$RT" -F "$SPEC" --node srv server --port 7001 --count 2 --timeout 30000 >"$T/s1.out" 2>&1 &
S1=$!
PIDS+=("$S1")
"$RT" -F "$SPEC" --node srv server --port 7002 --count 2 --timeout 30000 >"$T/s2.out" 2>&1 &
S2=$!
PIDS+=("$S2")
l1() { grep -q '^listening port 7001$' "$T/s1.out"; }
l2() { grep -q '^listening port 7002$' "$T/s2.out"; }
eventually l1 && eventually l2 || { cat "$T/s1.out" "$T/s2.out"; fail "servers do not listen"; }
"$RT" -F "$SPEC" --node srv server --port 7001 --timeout 5000 >"$T/s3.out" 2>&1 &&
	fail "a second listener on port 7001 was accepted"
grep -q 'error cm_listen: .*' "$T/s3.out" || { cat "$T/s3.out"; fail "no error for the second listener"; }
grep -qi 'in use\|already' "$T/s3.out" || { cat "$T/s3.out"; fail "second listener: not EADDRINUSE"; }
"${C[@]}" --port 7001 --count 2 >"$T/k1.out" 2>&1 &
K1=$!
"${C[@]}" --port 7002 --count 2 >"$T/k2.out" 2>&1 &
K2=$!
wait $K1 || { cat "$T/k1.out" "$T/s1.out"; fail "client of port 7001"; }
wait $K2 || { cat "$T/k2.out" "$T/s2.out"; fail "client of port 7002"; }
wait $S1 || { cat "$T/s1.out"; fail "server on port 7001"; }
wait $S2 || { cat "$T/s2.out"; fail "server on port 7002"; }
grep -q '^recv ok 14 bad 0' "$T/s1.out" && grep -q '^recv ok 14 bad 0' "$T/s2.out" ||
	fail "two listeners of one node: messages not intact"
ok "two processes of one node listen on their own service IDs; a third on a taken one: $(sed -n 's/^error cm_listen: //p' "$T/s3.out")"

# a destination whose port is down has no path: refused at once, as the
# SA answers no PathRecord for it
ctl port srv down >/dev/null
"${C[@]}" --port 7003 >"$T/c5.out" 2>&1
rc=$?
ctl port srv up >/dev/null
cat "$T/c5.out"
grep -q 'No route to host' "$T/c5.out" || fail "5: a port that is down is not refused as unreachable"
ok "5: a destination port that is down: $(head -n1 "$T/c5.out")"

fabric_alive
ctl cm >"$T/cm.txt" || fail "ibfabricctl cm"
cat "$T/cm.txt"
stop_fabric

# every REQ lost (--loss 1): sent again after each response timeout, then
# UNREACHABLE ETIMEDOUT when the CM's retries are spent
start_fabric --loss 1
srv_gid=$(gid_of srv)
"$RT" -F "$SPEC" --node srv server --port 7004 --timeout 60000 >"$T/s6.out" 2>&1 &
S6=$!
PIDS+=("$S6")
l6() { grep -q '^listening port 7004$' "$T/s6.out"; }
eventually l6 || fail "server 7004 does not listen"
t0=$(date +%s)
"$RT" -F "$SPEC" --node cli client --dst "$srv_gid" --port 7004 \
	--timeout 60000 >"$T/c6.out" 2>&1
rc=$?
secs=$(($(date +%s) - t0))
cat "$T/c6.out"
[ $rc -eq 2 ] || fail "6: exit $rc"
grep -q '^unreachable Connection timed out' "$T/c6.out" || fail "6: not UNREACHABLE ETIMEDOUT"
sent=$(counter cm_mads_sent)
[ "$sent" -ge 9 ] || fail "6: $sent CM MADs sent (a REQ and 8 retries expected)"
[ $secs -ge 8 ] && [ $secs -le 20 ] || fail "6: gave up after $secs s (9 x 1.07 s expected)"
ok "6: every REQ lost: $sent CM MADs sent, unreachable (ETIMEDOUT) after $secs s"
kill "$S6" 2>/dev/null
wait "$S6" 2>/dev/null
fabric_alive
stop_fabric
