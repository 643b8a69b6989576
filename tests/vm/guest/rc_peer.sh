# Inside one of two guests (a 10.77.0.1 the server, b 10.77.0.2 the client;
# rxe0 on eth0 each): RC and the CM through rctest over the verbs provider
# (librdmacm).  rc_peer.sh a|b PEER
#   a  rctest server: serves one connection, rejects "reject-me"
#   b  captures its eth0 (UDP 4791) into /ibgw-run/rc.pcap, then as client:
#      1 a REQ the server rejects with private data
#      2 a REQ to a port nobody listens on (7999); 2b one to an address
#        nobody has (10.77.0.99): no REQ at all, UNREACHABLE
#      3 a REQ with 57 bytes of private data (over rdma_cm's 56): EINVAL
#      4 the whole exchange (sends, RDMA write [with immediate], read,
#        disconnect)
# a serves "ready" on TCP port 7001 once it listens.
. "$(dirname "$0")/../guest.bash"
. "$(dirname "$0")/verbs_lib.bash"
RT=$(dirname "$FT")/rctest
[ -x "$RT" ] || gfail "no $RT (make all first)"
role=$1 peer=$2
T=$(mktemp -d)
wait_peer "$peer"
wait_active rxe0

if [ "$role" = a ]; then
	$RT -F verbs:rxe0 server --conns 1 --timeout 90000 >$T/srv.out 2>&1 &
	SPID=$!
	for i in $(seq 1 100); do
		grep -q '^listening' $T/srv.out && break
		sleep 0.2
	done
	expect $T/srv.out '^listening port 7471$' "server does not listen"
	echo ready >$T/ready
	serve 7001 $T/ready
	wait $SPID || { cat $T/srv.out; gfail "server failed"; }
	cat $T/srv.out
	expect $T/srv.out "^request pdata 'reject-me' len 56 peer ::ffff:10\.77\.0\.2 " \
		"no REQ 'reject-me' with 56 bytes of private data"
	expect $T/srv.out "^rejected request pdata 'reject-me'\$" "no REJ sent"
	expect $T/srv.out "^request pdata 'hello-from-client' len 56 peer ::ffff:10\.77\.0\.2 peer_qpn 0x[0-9a-f]{6}\$" \
		"no REQ 'hello-from-client'"
	expect $T/srv.out '^established$' "server: not established"
	expect $T/srv.out '^recv ok 140 bad 0 bytes 344200$' "server: messages not all intact"
	expect $T/srv.out '^write ok imm 0x1234abcd bytes 65536$' "server: RDMA writes not seen"
	expect $T/srv.out '^disconnected$' "server: no DISCONNECTED"
	expect $T/srv.out '^flushed 64 receives$' "server: receives not flushed"
	expect $T/srv.out '^post-in-error: completion work request flushed recv 0$' \
		"server: a send to the QP in error did not complete flushed"
	gok "server: REQ private data, REJ, 140 messages, write+imm, DISCONNECTED, 64 flushed, post in error flushed"
	exit 0
fi

tcpdump -i eth0 -B 32768 -U -w /ibgw-run/rc.pcap udp port 4791 2>$T/tcpdump.err &
TPID=$!
for i in $(seq 1 50); do
	grep -q 'listening on' $T/tcpdump.err && break
	sleep 0.2
done
fetch "$peer" 7001 >/dev/null || gfail "server never ready"
C="$RT -F verbs:rxe0 client --dst ::ffff:$peer --timeout 30000"

$C --pdata reject-me >$T/c1.out 2>&1
rc=$?
cat $T/c1.out
[ $rc -eq 2 ] || gfail "1: exit $rc, expected 2 (rejected)"
expect $T/c1.out "^rejected reason 28 pdata 'rejected-by-server'\$" \
	"1: no REJ reason 28 with the server's private data"
gok "1: rejected reason 28 pdata 'rejected-by-server'"

$C --port 7999 >$T/c2.out 2>&1
rc=$?
cat $T/c2.out
[ $rc -eq 2 ] || gfail "2: exit $rc, expected 2 (rejected/unreachable)"
expect $T/c2.out '^(rejected reason [0-9]+|unreachable .*)' "2: no REJ/UNREACHABLE"
gok "2: port nobody listens on: $(head -n1 $T/c2.out)"

$RT -F verbs:rxe0 client --dst ::ffff:10.77.0.99 --timeout 30000 >$T/c2b.out 2>&1
rc=$?
cat $T/c2b.out
[ $rc -eq 2 ] || gfail "2b: exit $rc, expected 2 (unreachable)"
expect $T/c2b.out '^unreachable ' "2b: no UNREACHABLE for a host that is not there"
gok "2b: no such host: $(head -n1 $T/c2b.out)"

$C --pdata-len 57 >$T/c3.out 2>&1
rc=$?
cat $T/c3.out
[ $rc -eq 1 ] || gfail "3: exit $rc, expected 1"
expect $T/c3.out '^connect refused EINVAL: ' "3: 57 bytes not refused with EINVAL"
gok "3: 57 bytes of REQ private data: EINVAL"

$C >$T/c4.out 2>&1 || { cat $T/c4.out; gfail "4: client failed"; }
cat $T/c4.out
expect $T/c4.out "^established pdata 'hello-from-server' len 196 peer_qpn 0x[0-9a-f]{6} rkey 0x[0-9a-f]{8} bytes 65536\$" \
	"4: REP private data wrong"
expect $T/c4.out '^sent 140 bytes 344200$' "4: not 140 sent"
expect $T/c4.out '^write ok bytes 65536 imm 0x1234abcd$' "4: write not ok"
expect $T/c4.out '^read ok bytes 65536 ' "4: read not ok"
expect $T/c4.out '^disconnected$' "4: no DISCONNECTED"
gok "4: established with REP private data, 140 sent, write+imm ok, read ok, disconnected"
gok "4: peer_qpn $(sed -n 's/^established .* peer_qpn \(0x[0-9a-f]*\) .*/\1/p' $T/c4.out)"
sleep 1
kill -INT $TPID
wait $TPID
cat $T/tcpdump.err
gok "capture: $(grep -o '[0-9]* packets captured' $T/tcpdump.err)"
