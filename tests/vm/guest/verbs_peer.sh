# Inside one of two guests (a 10.77.0.1, b 10.77.0.2, rxe0 on eth0 each):
# the verbs provider between them through fabtest.  verbs_peer.sh a|b PEER
#   1 a -> b unicast, 5 "uc-n"          2 b -> a unicast, 5 "bu-n"
#   3 a -> ::ffff:239.1.2.3, 3 "mc-n"   4 a -> b 2000 x 1000 bytes, batched
#   5 (a) port events: eth0 down and up
# b captures its eth0 (UDP 4791) into /ibgw-run/roce.pcap for the host.
# Each receiver serves its QPN file on TCP port 7000+phase once its QP is
# up; the sender fetches it, so nothing is sent before a QP can take it.
. "$(dirname "$0")/../guest.bash"
. "$(dirname "$0")/verbs_lib.bash"
role=$1 peer=$2
T=$(mktemp -d)
wait_peer "$peer"
wait_active rxe0
me=$($FT -F verbs:rxe0 info $role | sed -n 's/^sgid //p')
gok "sgid $me"

# recv_phase N ARGS...: a receiver in the background, its QPN served
recv_phase() {
	local n=$1
	shift
	rm -f $T/q$n
	$FT -F verbs:rxe0 recv $role --qpn-file $T/q$n "$@" >$T/r$n.out 2>&1 &
	RPID=$!
	wait_file $T/q$n
	serve $((7000 + n)) $T/q$n
}

recv_done() {	# N WHAT
	wait $RPID || { cat $T/r$1.out; gfail "phase $1: recv failed"; }
}

# send_phase N [mc] ARGS...: to the QPN the peer serves for phase N, or
# with mc (a multicast group: QPN 0xffffff) once the peer's QP is up
send_phase() {
	local n=$1 q dq
	shift
	q=$(fetch "$peer" $((7000 + n)) | cut -d' ' -f1)
	dq=(--dqpn "$q")
	[ "$1" = mc ] && { dq=(); shift; }
	$FT -F verbs:rxe0 send $role "${dq[@]}" "$@" >$T/s$n.out 2>&1 ||
		{ cat $T/s$n.out; gfail "phase $n: send failed"; }
	cat $T/s$n.out
	gok "phase $n: sent to ${dq[1]:-the group}"
}

if [ "$role" = b ]; then
	tcpdump -i eth0 -B 32768 -U -w /ibgw-run/roce.pcap udp port 4791 \
		2>$T/tcpdump.err &
	TPID=$!
	for i in $(seq 1 50); do
		grep -q 'listening on' $T/tcpdump.err && break
		sleep 0.2
	done
	recv_phase 1 --count 5 --timeout 60000
	recv_done 1
	cat $T/r1.out
	for n in 0 1 2 3 4; do
		expect $T/r1.out "^rx slid=0x0000 src_qp=0x[0-9a-f]{6} pkey_index=0 grh=1 sgid=::ffff:10.77.0.1 dgid=::ffff:10.77.0.2 len=4 data=uc-$n\$" \
			"phase 1: datagram $n missing or wrong"
	done
	expect $T/r1.out '^received 5$' "phase 1: not 5 received"
	gok "phase 1: 5 unicast from ::ffff:10.77.0.1 qpn $(qpn_of $T/q1) src_qp $(sed -n 's/^rx .*src_qp=\(0x[0-9a-f]*\) .*/\1/p' $T/r1.out | head -n1)"
	send_phase 2 --dgid ::ffff:10.77.0.1 --data 'bu-%n' --count 5
	recv_phase 3 --count 3 --timeout 60000 --mcast ::ffff:239.1.2.3@0xc001
	recv_done 3
	cat $T/r3.out
	for n in 0 1 2; do
		expect $T/r3.out "^rx .* grh=1 sgid=::ffff:10.77.0.1 dgid=::ffff:239.1.2.3 len=4 data=mc-$n\$" \
			"phase 3: datagram $n missing or wrong"
	done
	gok "phase 3: 3 multicast to ::ffff:239.1.2.3"
	recv_phase 4 --count 2000 --depth 4096 --verify --timeout 120000
	recv_done 4
	cat $T/r4.out
	ip -s link show eth0
	grep . /sys/class/infiniband/rxe0/ports/1/hw_counters/* | grep -v ":0$"
	cat /proc/net/softnet_stat
	nstat -az 2>/dev/null | grep -iE 'InDiscards|InErrors|RcvbufErrors|NoPorts' | grep -v ' 0 '
	expect $T/r4.out '^verify ok 2000 bad 0 dup 0 missing 0 bytes 2000000$' \
		"phase 4: not every datagram arrived intact"
	gok "phase 4: qpn $(qpn_of $T/q4) $(grep '^verify' $T/r4.out)"
	sleep 1
	kill -INT $TPID
	wait $TPID
	cat $T/tcpdump.err
	gok "capture: $(grep -o '[0-9]* packets captured' $T/tcpdump.err)"
else
	send_phase 1 --dgid ::ffff:10.77.0.2 --data 'uc-%n' --count 5
	recv_phase 2 --count 5 --timeout 60000
	recv_done 2
	cat $T/r2.out
	for n in 0 1 2 3 4; do
		expect $T/r2.out "^rx .* grh=1 sgid=::ffff:10.77.0.2 dgid=::ffff:10.77.0.1 len=4 data=bu-$n\$" \
			"phase 2: datagram $n missing or wrong"
	done
	gok "phase 2: 5 unicast from ::ffff:10.77.0.2"
	send_phase 3 mc --mgid ::ffff:239.1.2.3 --data 'mc-%n' --count 3
	send_phase 4 --dgid ::ffff:10.77.0.2 --pattern --size 1000 \
		--count 2000 --batch 32 --depth 1024 --linger 5000
	expect $T/s4.out '^sent 2000$' "phase 4: not 2000 sent"
	tc -s qdisc show dev eth0	# where a lost datagram would show
	ip -s link show eth0
	grep . /sys/class/infiniband/rxe0/ports/1/hw_counters/* | grep -v ":0$"
	# b is done with us; now the port events
	$FT -F verbs:rxe0 recv $role --timeout 9000 >$T/ev.out 2>&1 &
	sleep 2
	ip link set eth0 down
	sleep 2
	ip link set eth0 up
	wait $!
	cat $T/ev.out
	seq=$(grep '^event' $T/ev.out | tr '\n' ' ')
	echo "$seq" | grep -Eq '^event PORT_ERR (event PORT_ACTIVE )+$' ||
		gfail "events not PORT_ERR then PORT_ACTIVE: $seq"
	gok "phase 5: events PORT_ERR then PORT_ACTIVE"
fi
