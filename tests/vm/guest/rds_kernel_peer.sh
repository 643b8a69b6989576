# Inside one of two guests: our RDS (a, 10.77.0.1: tests/rdspeer on
# verbs:rxe0, no rds module loaded) against the kernel's RDS/IB (b,
# 10.77.0.2: rds_rdma, rds_kpeer.py).  rds_kernel_peer.sh a|b PEER BIN MODE
# MODE "ours" runs rdspeer on a; "preload" runs rds_kpeer.py there under
# libibgw_preload.so, with ipoibd --sdp-only on verbs:rxe0 as the host's
# RDS service (still no rds module: the user's path on a host without
# the kernel's RDS); "kernel" runs rds_kpeer.py there on the kernel's
# RDS (rds_rdma loaded on a as well): the harness checking itself.
#   phase 1  every data case at once, one rdspeer process on a against two
#            rds_kpeer.py on b (the second with a small SO_RCVBUF that
#            holds its queue for 3 s: the burst beyond the buffer):
#            small and multi-fragment messages up to 1 MiB both ways,
#            16 ports each way, 10,000 messages on two of them (100 on the
#            others), pings both ways.  b serves "ready1" on TCP 7001 when bound.
#   phase 3  the kernel restarted: b's rds_kpeer.py takes a's 500 and
#            sends 500 (waiting until the kernel holds nothing
#            unacknowledged), closes; rmmod rds_rdma rds; modprobe rds_rdma;
#            a new rds_kpeer.py sends round trips through a's echo port and
#            500 more from a new port.  One rdspeer process on a through
#            all of it ("ready3" on TCP 7003).
# b captures eth0 (UDP 4791) into /ibgw-run/rds.pcap; each side prints
# its peer's output and counters, lines "ok(x): ...".
. "$(dirname "$0")/../guest.bash"
FETCH_TRIES=400
role=$1 peer=$2 BIN=$3 mode=$4
KP="python3 $G_TOP/tests/vm/guest/rds_kpeer.py"
T=$(mktemp -d)
# a 1 MiB message needs a send buffer over 2 MiB: sendmsg refuses one
# larger than half of sk_sndbuf (send.c, rds_sendmsg: EMSGSIZE), and
# SO_SNDBUF is capped by wmem_max (212992 by default)
sysctl -qw net.core.wmem_max=8388608 net.core.rmem_max=8388608
KBUF="--sndbuf 4194304"
# many ports: 16 each way, the first two with 10,000 messages, the
# others 100
NPORTS=16
count() {
	if [ "$1" -lt 2 ]; then echo 10000; else echo 100; fi
}
wait_peer "$peer"
wait_active rxe0

rds_loaded() {
	grep -Eq '^rds(_rdma)? ' /proc/modules
}

if [ "$role" = a ]; then
	A=10.77.0.1 B=$peer
	STATS=--stats
	if [ "$mode" != kernel ]; then
		rds_loaded && gfail "rds is loaded on a: $(grep '^rds' /proc/modules)"
		# socket(AF_RDS) asks for net-pf-21, which no module claims
		# (af_rds.c leaves MODULE_ALIAS_NETPROTO(PF_RDS) commented out)
		python3 -c 'import socket; socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET)' \
			2>/dev/null && gfail "AF_RDS works on a without rds_rdma"
		rds_loaded && gfail "socket(AF_RDS) loaded rds on a"
		gok "no rds module on a, none auto-loaded by socket(AF_RDS)"
	fi
	if [ "$mode" = ours ]; then
		RP=$BIN/tests/rdspeer
		[ -x "$RP" ] || gfail "no $RP"
		PEER="$RP --fabric verbs:rxe0"
	elif [ "$mode" = preload ]; then
		[ -f "$BIN/libibgw_preload.so" ] || gfail "no $BIN/libibgw_preload.so"
		sdp_only "$BIN" $T/ipoibd.log
		rds_service_up $T/ipoibd.log
		# no --wait-acked, no --stats: RDS_INFO is the kernel's only
		# (docs/rds.md); --linger gives the service the time instead.
		# --rcvbuf: python3 reads slower than b's kernel sends, and a
		# port of a's left congested when the stall below stops the
		# service would stop b's sends to it (no RNR NAK to see): the
		# two 10,000-message ports and port 6000's 6 MB fit in 8 MiB
		PEER="env LD_PRELOAD=$BIN/libibgw_preload.so $KP $KBUF --rcvbuf 4194304"
		STATS=
	else
		PEER="$KP $KBUF --wait-acked"
	fi
	# svc_stats NAME (preload): the service's counters, as
	# "name value" lines after the peer's output, as rdspeer --stats
	# prints its own (rds.* and rds_service.*)
	svc_stats() {
		[ "$mode" = preload ] || return 0
		kill -USR1 $IPID
		sleep 1
		sed -n 's/.*stats \(rds[a-z_]*\.[a-z_.0-9]*\) \([0-9]*\)$/\1 \2/p' \
			$T/ipoibd.log | awk '{ v[$1] = $2; if (!($1 in o)) { o[$1] = ++n; k[n] = $1 } }
			END { for (i = 1; i <= n; i++) print k[i], v[k[i]] }' >>$T/$1.out
	}
	# run_a NAME PORT ARGS...: the peer, its output in $T/NAME.*, exit
	# status in rc; the kernel's, once bound, says so on TCP PORT (b's
	# sends wait for it: a kernel answers pings before any socket binds;
	# rdspeer binds before its endpoint answers any)
	#
	# With STALL set, our receiving end (rdspeer, or the service's
	# ipoibd) is stopped while b's kernel sends: once rxe0 has taken
	# 1000 SENDs (b is mid-stream; under the preload from when a says it
	# is bound), until rxe0 has answered 5 RNR NAKs (its receive queue
	# full; 20 s at most).  Their timer code is our min_rnr_timer, which
	# b's capture shows (rds_kernel.sh checks it).  Counters, not a
	# clock: b's pace depends on the machine's load.
	stall() {	# PID
		(c=/sys/class/infiniband/rxe0/ports/1/hw_counters
		 r0=$(cat $c/rdma_recvs)
		 for i in $(seq 1 600); do
			[ $(($(cat $c/rdma_recvs) - r0)) -ge 1000 ] && break
			sleep 0.2
		 done
		 n0=$(cat $c/send_rnr_err)
		 kill -STOP "$1" 2>/dev/null
		 for i in $(seq 1 100); do
			[ $(($(cat $c/send_rnr_err) - n0)) -ge 5 ] && break
			sleep 0.2
		 done
		 kill -CONT "$1" 2>/dev/null
		 echo "stalled $1 for $((i / 5)) s, rxe0 answered $(($(cat $c/send_rnr_err) - n0)) RNR NAKs" >$T/stalled) &
	}
	run_a() {
		local n=$1 port=$2 pid
		shift 2
		if [ "$mode" = ours ]; then
			$PEER "$@" >$T/$n.out 2>$T/$n.err &
			pid=$!
			[ -n "${STALL:-}" ] && stall $pid
			wait $pid
			rc=$?
			return
		fi
		$PEER "$@" --ready $T/$n.ready >$T/$n.out 2>$T/$n.err &
		pid=$!
		wait_file $T/$n.ready $pid
		tell "$port" ready
		# b sends once it has this and its pings are answered
		[ -n "${STALL:-}" ] && [ "$mode" = preload ] && stall $IPID
		wait $pid
		rc=$?
	}
	fetch "$B" 7001 >/dev/null
	args=(--addr $A --send $B:5001:5000:200:16-20000
		--send $B:5002:5000:4:900000-1048576
		--send $B:5301:5300:1000:4000-8000
		--expect $B:6000:6001:200 --expect $B:6000:6002:4
		--ping $B:5900)
	for i in $(seq 0 $((NPORTS - 1))); do
		args+=(--send $B:$((5100 + i)):$((5200 + i)):$(count $i):16-200)
		args+=(--expect $B:$((6100 + i)):$((6200 + i)):$(count $i))
	done
	t0=$(date +%s)
	# --linger: b's kernel waits until what it sent is acknowledged or
	# its unacknowledged tail (never flagged ACK_REQUIRED) has stood for
	# 2 s; a peer gone before that leaves the tail queued for a
	# retransmission that never comes
	STALL=1 run_a p1 7002 "${args[@]}" --timeout 200 --linger 6 $STATS
	[ "$mode" = kernel ] || [ -s $T/stalled ] || gfail "phase 1: the stall did not happen"
	[ "$mode" = kernel ] || gok "phase 1: $(cat $T/stalled) (our receiver)"
	svc_stats p1
	sed 's/^/  p1| /' $T/p1.out
	tail -n 20 $T/p1.err | sed 's/^/  p1 err| /'
	[ $rc -eq 0 ] || gfail "phase 1: the peer on a exited $rc"
	gok "phase 1 in $(($(date +%s) - t0)) s: $(grep -E ': (ok( |$)|sent |pong )' $T/p1.out | tr '\n' ' ')"
	sed -n 's/^\([a-z_.]*\) \([0-9]*\)$/\1 \2/p' $T/p1.out | tr '\n' ' ' |
		sed 's/^/ok(a): p1 counters /; s/ $/\n/'
	# b's next peer starts once this one is gone: lingering, it would
	# answer b's pings and drop b's messages to ports it has not bound
	tell 7006 p1-gone
	fetch "$B" 7003 >/dev/null
	run_a p3 7005 --addr $A --send $B:7001:7000:500:16-9000 \
		--expect $B:7101:7100:500 --expect $B:7102:7100:500 \
		--echo 7200 --timeout 200 --linger 6 $STATS
	svc_stats p3
	sed 's/^/  p3| /' $T/p3.out
	tail -n 20 $T/p3.err | sed 's/^/  p3 err| /'
	[ $rc -eq 0 ] || gfail "phase 3: the peer on a exited $rc"
	gok "phase 3: $(grep -E ': (ok( |$)|sent |pong )' $T/p3.out | tr '\n' ' ')"
	sed -n 's/^\([a-z_.]*\) \([0-9]*\)$/\1 \2/p' $T/p3.out | tr '\n' ' ' |
		sed 's/^/ok(a): p3 counters /; s/ $/\n/'
	if [ "$mode" != kernel ]; then
		rds_loaded && gfail "rds got loaded on a meanwhile"
		gok "still no rds module on a"
	fi
	fetch "$B" 7004 >/dev/null	# b is done with us
	tell 7007 bye		# and b may go
	sleep 3
	exit 0
fi

A=$peer B=10.77.0.2
go() {	# PORT FILE: FILE once a's kernel peer says it is bound (at once
	# for rdspeer)
	if [ "$mode" = ours ]; then
		touch "$2"
	else
		(fetch "$A" "$1" >"$2.tmp" && mv "$2.tmp" "$2") &
	fi
}
tcpdump -i eth0 -s 512 -B 65536 -U -w /ibgw-run/rds.pcap udp port 4791 2>$T/tcpdump.err &
TPID=$!
for i in $(seq 1 50); do
	grep -q 'listening on' $T/tcpdump.err && break
	sleep 0.2
done
args=(--addr $B --send $A:6001:6000:200:16-20000
	--send $A:6002:6000:4:900000-1048576
	--expect $A:5000:5001:200 --expect $A:5000:5002:4
	--ping $A:6900 --after-pong --wait-acked)
for i in $(seq 0 $((NPORTS - 1))); do
	args+=(--expect $A:$((5200 + i)):$((5100 + i)):$(count $i))
	args+=(--send $A:$((6200 + i)):$((6100 + i)):$(count $i):16-200)
done
go 7002 $T/go1
$KP $KBUF "${args[@]}" --timeout 220 --stats --ready $T/k1.ready --go $T/go1 \
	>$T/k1.out 2>$T/k1.err &
K1=$!
# the burst: a small receive buffer, nothing read for 3 s
$KP --addr $B --expect $A:5300:5301:1000 --rcvbuf 16384 --hold 3 \
	--timeout 220 --stats --ready $T/k2.ready >$T/k2.out 2>$T/k2.err &
K2=$!
wait_file $T/k1.ready $K1
wait_file $T/k2.ready $K2
tell 7001 ready1
wait $K1
rc1=$?
wait $K2
rc2=$?
for k in k1 k2; do
	grep -v '^[a-z_]* [0-9]*$' $T/$k.out | sed "s/^/  $k| /"
	tail -n 20 $T/$k.err | sed "s/^/  $k err| /"
done
[ $rc1 -eq 0 ] || gfail "phase 1: rds_kpeer.py (data) exited $rc1"
[ $rc2 -eq 0 ] || gfail "phase 1: rds_kpeer.py (burst) exited $rc2"
gok "phase 1: $(grep ': ok ' $T/k1.out)"
gok "burst: $(grep ': ok ' $T/k2.out)"
for c in cong_update_queued cong_update_received cong_send_blocked recv_drop_no_sock recv_drop_old_seq; do
	echo "$c $(sed -n "s/^$c \([0-9]*\)\$/\1/p" $T/k2.out)"
done | tr '\n' ' ' | sed 's/^/ok(b): p1 kernel /; s/ $/\n/'

# phase 3: the kernel restarted under traffic
fetch "$A" 7006 >/dev/null
$KP --addr $B --expect $A:7000:7001:500 --send $A:7100:7101:500:16-9000 \
	--ping $A:7150 --after-pong --wait-acked --timeout 200 --ready $T/k3.ready \
	--go $T/go3 \
	>$T/k3.out 2>$T/k3.err &
K3=$!
go 7005 $T/go3
wait_file $T/k3.ready $K3
tell 7003 ready3
wait $K3 || { cat $T/k3.out $T/k3.err; gfail "phase 3: rds_kpeer.py before the restart"; }
gok "before the restart: $(grep ': ok ' $T/k3.out)"
for i in $(seq 1 20); do
	rmmod rds_rdma rds 2>$T/rmmod.err && break
	sleep 0.5
done
rds_loaded && gfail "rmmod rds_rdma rds: $(cat $T/rmmod.err)"
gok "rmmod rds_rdma rds"
sleep 2
modprobe rds_rdma || gfail "modprobe rds_rdma"
gok "modprobe rds_rdma"
$KP --addr $B --expect $A:7000:7001:500:500 --rtt $A:7200:7201:200:3000 \
	--send $A:7100:7102:500:16-9000 --wait-acked --linger 2 --timeout 200 \
	--stats >$T/k4.out 2>$T/k4.err
rc=$?
grep -v '^[a-z_]* [0-9]*$' $T/k4.out | sed 's/^/  k4| /'
tail -n 20 $T/k4.err | sed 's/^/  k4 err| /'
[ $rc -eq 0 ] || gfail "phase 3: rds_kpeer.py after the restart exited $rc"
gok "after the restart: $(grep ': ok ' $T/k4.out)"
gok "$(grep ': rtt ' $T/k4.out)"
tell 7004 done
cap_stop $TPID /ibgw-run/rds.pcap $T/tcpdump.err
dmesg | grep 'RDS/IB' | sed 's/^/  dmesg| /'
n=$(dmesg | grep -Ec "RDS/IB: (Active|Passive) conn connected <::ffff:$B,::ffff:$A,0> version 3\.1")
[ "$n" -ge 2 ] || gfail "dmesg: $n RDS/IB connections $B <-> $A version 3.1 (2 expected: before and after the restart)"
gok "dmesg: $n RDS/IB conn connected <::ffff:$B,::ffff:$A,0> version 3.1"
fetch "$A" 7007 >/dev/null	# a has heard "done" (its peer lingers)
