# Inside one of two guests of tests/vm/rds_slow_destroy.sh: the host's
# RDS service keeps answering while a queue pair takes long to destroy.
#   a  10.77.0.1: no rds module; ipoibd --sdp-only --fabric verbs:rxe0
#      with libslow_destroy.so (its first RC ibv_destroy_qp waits 20 s
#      before destroying, as rxe's can for up to 50 s after a retry
#      failure), and two echoes (rds_sock_bench under
#      libibgw_preload.so) on ports 5002 and 5003
#   b  10.77.0.2: the kernel's rds_rdma: round trips through a's echo on
#      5002 (the connection made); rmmod rds_rdma rds, which disconnects
#      it (a destroys its queue pair: 20 s); modprobe rds_rdma; round
#      trips through a's echo on 5003, which must be through within 10 s
#      of starting (the new connection's REQ answered at once)
# a checks its log: the slow destroy happened, the connection came up
# twice.
#   rds_slow_destroy_peer.sh a|b BIN
. "$(dirname "$0")/../guest.bash"
FETCH_TRIES=400
role=$1 BIN=$2
A=10.77.0.1 B=10.77.0.2
SB=$BIN/tests/rds_sock_bench
PRE=$BIN/libibgw_preload.so
SLOW=$BIN/tests/libslow_destroy.so
[ -x "$SB" ] && [ -f "$PRE" ] && [ -f "$SLOW" ] || gfail "no $SB, $PRE or $SLOW"
T=$(mktemp -d)
wait_peer "$([ "$role" = a ] && echo $B || echo $A)"
wait_active rxe0

if [ "$role" = a ]; then
	grep -Eq '^rds(_rdma)? ' /proc/modules && gfail "rds is loaded on a"
	export SLOW_DESTROY_S=20 SLOW_DESTROY_N=1 LD_PRELOAD=$SLOW
	sdp_only "$BIN" $T/ipoibd.log
	unset LD_PRELOAD
	rds_service_up $T/ipoibd.log
	for p in 5002 5003; do
		env LD_PRELOAD=$PRE $SB -t 200 echo $A $p >$T/echo.$p.out 2>&1 &
	done
	sleep 1
	tell 7001 ready
	fetch $B 7002 >/dev/null	# b is through
	kill $IPID
	wait $IPID
	rc=$?
	sed 's/^/  ipoibd| /' $T/ipoibd.log | grep -E 'RDS|slow_destroy|error|warn'
	[ $rc -eq 0 ] || gfail "ipoibd exited $rc"
	grep -q '^slow_destroy: QP [0-9]*: 20 s' $T/ipoibd.log ||
		gfail "no queue pair was destroyed slowly (the case did not happen)"
	gok "ipoibd: a queue pair's destroy took 20 s"
	n=$(grep -Ec "RDS <$A,$B,0>: (passive|active) connection up" $T/ipoibd.log)
	[ "$n" -ge 2 ] || gfail "ipoibd: the connection came up $n times (2: before and after b's restart)"
	gok "ipoibd: the connection came up $n times"
	exit 0
fi

modprobe rds_rdma || gfail "modprobe rds_rdma"
fetch $A 7001 >/dev/null
$SB -t 60 rr $B $A 5002 20 64 >$T/rr1.out 2>&1 || { cat $T/rr1.out; gfail "round trips before the restart"; }
gok "before: $(grep 'round trips' $T/rr1.out)"
for i in $(seq 1 20); do
	rmmod rds_rdma rds 2>$T/rmmod.err && break
	sleep 0.5
done
grep -Eq '^rds(_rdma)? ' /proc/modules && gfail "rmmod rds_rdma rds: $(cat $T/rmmod.err)"
gok "rmmod rds_rdma rds (a's queue pair disconnected)"
sleep 2
modprobe rds_rdma || gfail "modprobe rds_rdma"
t0=$(date +%s%N)
if ! $SB -t 10 rr $B $A 5003 20 64 >$T/rr2.out 2>&1; then
	cat $T/rr2.out
	dmesg | grep -i 'rds' | tail -n 5
	tell 7002 failed	# a need not wait for its timeout
	wait $!
	gfail "no round trips within 10 s of the restart (a answered late)"
fi
t=$((($(date +%s%N) - t0) / 1000000))
gok "after the restart: $(grep 'round trips' $T/rr2.out), all within $t ms"
tell 7002 done
wait $!		# until a has it: this guest powers off when the script ends
exit 0
