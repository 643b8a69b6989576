# Inside one of two guests for tests/bench/rds_vm_bench.sh: a (10.77.0.1)
# measures against b (10.77.0.2), RUNS times, our RDS and the kernel's in
# turn (the order swapped every run; one RDS at a time on each guest, as
# both want rdma_cm's port 18634):
#   ours    b: rdspeer --expect (COUNT from a) --echo 5002; a: bench_rds_rr
#           --to b:5002 (RTTS round trips of 64 bytes, one at a time), then
#           rdspeer --send COUNT messages of SIZE bytes
#   kernel  both modprobe rds_rdma; b: rds_kpeer.py --expect --echo 5002;
#           a: rds_kpeer.py --rtt (the same round trips), then --send
#           --wait-acked; both rmmod rds_rdma rds after
#   ksock   the kernel's RDS (rds_rdma on both) under one C program on the
#           AF_RDS socket API, tests/rds_sock_bench: b sink 5001, echo
#           5002; a rr (the same round trips), then send COUNT x SIZE
#   psock   the same rds_sock_bench, under LD_PRELOAD=libibgw_preload.so,
#           with ipoibd --sdp-only --fabric verbs:rxe0 -f on both (the
#           host's RDS service over rdma_cm on RoCE; no rds module loaded,
#           so a socket the service did not make fails: EAFNOSUPPORT)
# The rate is the sender's: COUNT messages from the first send until the
# last is acknowledged (rds_sock_bench: until the sink's answer to a FIN
# after them says it has all COUNT).  a prints
#   "ok(a): m WAY RUN MSGS_PER_S RTT_US P99_US" (P99 "-" where not measured).
# WAYS (default all four, comma-separated) is the subset to run; PROFILE 1 runs ipoibd
# under strace -c -f in psock steps and prints its table; 2 records every
# step's CPU time and context switches from /proc/stat (user, system,
# softirq, idle); 3 runs
# ipoibd and a's round-trip program under strace -f -tt -T and prints
# every line.
#   rds_bench_peer.sh a|b PEER BIN COUNT SIZE RTTS RUNS [WAYS [PROFILE]]
. "$(dirname "$0")/../guest.bash"
FETCH_TRIES=600
role=$1 peer=$2 BIN=$3 count=$4 size=$5 rtts=$6 runs=$7
all=$(echo "${8:-ours,kernel,ksock,psock}" | tr , " ") profile=${9:-0}
KP="python3 $G_TOP/tests/vm/guest/rds_kpeer.py"
RP="$BIN/tests/rdspeer --fabric verbs:rxe0"
RR="$BIN/tests/bench_rds_rr --fabric verbs:rxe0"
SB="$BIN/tests/rds_sock_bench"
PRE=$BIN/libibgw_preload.so
[ -x "$SB" ] && [ -f "$PRE" ] || gfail "no $SB or $PRE"
T=$(mktemp -d)
A=10.77.0.1 B=10.77.0.2
wait_peer "$peer"
wait_active rxe0
kernel_rds() {	# on|off
	if [ "$1" = on ]; then
		modprobe rds_rdma || gfail "modprobe rds_rdma"
		return
	fi
	for i in $(seq 1 20); do
		rmmod rds_rdma rds 2>/dev/null && return
		grep -q '^rds ' /proc/modules || return
		sleep 0.5
	done
	gfail "rmmod rds_rdma rds"
}
# ipoibd_on / ipoibd_off: the host's RDS service (psock's steps only)
IPID=
ipoibd_on() {
	grep -q '^rds ' /proc/modules && gfail "psock: the kernel's rds is loaded"
	if [ "$profile" = 1 ]; then
		strace -c -f -o $T/strace.$step $BIN/ipoibd --sdp-only \
			--fabric verbs:rxe0 -f >$T/ipoibd.$step.log 2>&1 &
	elif [ "$profile" = 3 ]; then
		strace -f -tt -T -o $T/trace.$step $BIN/ipoibd --sdp-only \
			--fabric verbs:rxe0 -f >$T/ipoibd.$step.log 2>&1 &
	else
		"$BIN/ipoibd" --sdp-only --fabric verbs:rxe0 -f >$T/ipoibd.$step.log 2>&1 &
	fi
	IPID=$! SPID=
	if [ "$profile" = 1 ] || [ "$profile" = 3 ]; then	# signals go to ipoibd, not strace
		SPID=$IPID
		for i in $(seq 1 50); do
			IPID=$(pgrep -n -x ipoibd) && break
			sleep 0.1
		done
	fi
	for i in $(seq 1 100); do
		grep -q 'ready: SDP only' $T/ipoibd.$step.log && break
		kill -0 $IPID 2>/dev/null || break
		sleep 0.2
	done
	grep -q 'RDS service on .*over rdma_cm on RoCE' $T/ipoibd.$step.log ||
		{ sed 's/^/    | /' $T/ipoibd.$step.log; gfail "ipoibd: no RDS service"; }
}
ipoibd_off() {
	kill -USR1 $IPID 2>/dev/null
	sleep 1
	grep -E 'stats rds(_service)?\.[a-z_.0-9]+ [1-9]' \
		$T/ipoibd.$step.log | sed "s/^/  | ipoibd($role): /" | head -n 40
	kill $IPID 2>/dev/null
	wait $IPID 2>/dev/null
	[ -n "$SPID" ] && wait $SPID 2>/dev/null
	IPID=
	[ -f $T/strace.$step ] && sed "s/^/  | strace($role): /" $T/strace.$step | head -n 30
	[ -f $T/trace.$step ] && sed "s/^/  | trace($role): /" $T/trace.$step
}
pre() {
	env LD_PRELOAD="$PRE" "$@"
}
CPU0=
# cpu_on / cpu_off (PROFILE 2): the guest's CPU time over the step, from
# the cpu line of /proc/stat (user nice system idle iowait irq softirq)
HWC=/sys/class/infiniband/rxe0/ports/1/hw_counters
cpu_on() {
	[ "$profile" = 2 ] || return 0
	CPU0=$(sed -n 's/^cpu  //p' /proc/stat)
	CTXT0=$(sed -n 's/^ctxt //p' /proc/stat)
	grep -H . $HWC/* 2>/dev/null | sed 's|.*/||' >$T/hwc0
}
cpu_off() {
	[ -n "$CPU0" ] || return 0
	echo "$CPU0 $(sed -n 's/^cpu  //p' /proc/stat)" | awk -v w="$w" -v r="$role" '{
		n = 7; for (i = 1; i <= n; i++) d[i] = $(i + 10) - $i
		t = 0; for (i = 1; i <= n; i++) t += d[i]
		if (t <= 0) t = 1
		printf "  | cpu(%s, %s): user %.0f%% system %.0f%% softirq %.0f%% idle %.0f%%",
			r, w, 100 * (d[1] + d[2]) / t, 100 * (d[3] + d[6]) / t,
			100 * d[7] / t, 100 * (d[4] + d[5]) / t }'
	echo ", $(( $(sed -n 's/^ctxt //p' /proc/stat) - CTXT0 )) context switches"
	grep -H . $HWC/* 2>/dev/null | sed 's|.*/||' >$T/hwc1
	echo "  | rxe0($role, $w): $(awk -F: 'NR == FNR { v[$1] = $2; next }
		$2 - v[$1] != 0 { printf "%s %d ", $1, $2 - v[$1] }' $T/hwc0 $T/hwc1)"
	CPU0=
}
tmo=$((60 + count / 100))
step=0
for r in $(seq 1 "$runs"); do
	if [ $((r % 2)) = 1 ]; then ways=$all
	else ways=$(echo $all | tr ' ' '\n' | tac | tr '\n' ' '); fi
	for w in $ways; do
		step=$((step + 1))
		# p: b's receiver is up; p + 1: a's sender is done; p + 2: b
		# has unloaded the kernel's RDS (a's next step may begin)
		p=$((7100 + 3 * step))
		W=
		case $w in
		kernel|ksock) kernel_rds on ;;
		psock) ipoibd_on; W=pre ;;
		esac
		cpu_on
		if [ "$role" = b ] && { [ $w = ksock ] || [ $w = psock ]; }; then
			$W $SB -t $tmo sink $B 5001 >$T/b$step.out 2>&1 &
			pid=$!
			$W $SB -t $tmo echo $B 5002 >$T/b$step.echo 2>&1 &
			pid2=$!
			sleep 1
			tell $p ready
			wait $pid || { cat $T/b$step.out; gfail "$w run $r: the sink failed"; }
			wait $pid2 || { cat $T/b$step.echo; gfail "$w run $r: the echo failed"; }
			sed 's/^/  | /' $T/b$step.out $T/b$step.echo
			cpu_off
			fetch $A $((p + 1)) >/dev/null
			[ $w = ksock ] && kernel_rds off
			[ $w = psock ] && ipoibd_off
			tell $((p + 2)) done
			continue
		fi
		if [ "$role" = b ]; then
			if [ $w = kernel ]; then
				$KP --addr $B --expect $A:5000:5001:$count --echo 5002 \
					--timeout $tmo --ready $T/r$step >$T/b$step.out 2>&1 &
				pid=$!
				for i in $(seq 1 100); do
					[ -s $T/r$step ] && break
					sleep 0.1
				done
			else
				$RP --addr $B --expect $A:5000:5001:$count --echo 5002 \
					--timeout $tmo --linger 2 >$T/b$step.out 2>&1 &
				pid=$!
				sleep 1
			fi
			tell $p ready
			wait $pid || { cat $T/b$step.out; gfail "$w run $r: the receiver failed"; }
			cpu_off
			# the kernel stays until a's sender is through: gone
			# earlier, it would leave a's kernel an unacknowledged
			# tail to resend to whatever listens next
			fetch $A $((p + 1)) >/dev/null
			[ $w = kernel ] && kernel_rds off
			tell $((p + 2)) done
			continue
		fi
		fetch $B $p >/dev/null
		p99=-
		if [ $w = ksock ] || [ $w = psock ]; then
			ST=; [ "$profile" = 3 ] && ST="strace -f -tt -T -o $T/prog.$step"
			$W $ST $SB -t $tmo rr $A $B 5002 $rtts 64 >$T/a$step.out 2>&1 ||
				{ cat $T/a$step.out; gfail "$w run $r: round trips failed"; }
			rtt=$(sed -n 's/.* median_us \([0-9]*\).*/\1/p' $T/a$step.out)
			p99=$(sed -n 's/.* p99_us \([0-9]*\).*/\1/p' $T/a$step.out)
			$W $SB -t $tmo send $A $B 5001 $count $size >>$T/a$step.out 2>&1 ||
				{ cat $T/a$step.out; gfail "$w run $r: sends failed"; }
		elif [ $w = kernel ]; then
			$KP --addr $A --rtt $B:5002:5003:$rtts:64 \
				--send $B:5001:5000:$count:$size --wait-acked \
				--timeout $tmo >$T/a$step.out 2>&1 ||
				{ cat $T/a$step.out; gfail "kernel run $r failed"; }
			rtt=$(sed -n 's/.* rtt .*median_us \([0-9]*\).*/\1/p' $T/a$step.out)
		else
			$RR --addr $A --to $B:5002 --count $rtts --size 64 \
				--timeout $tmo >$T/a$step.out 2>&1 ||
				{ cat $T/a$step.out; gfail "ours run $r: round trips failed"; }
			rtt=$(sed -n 's/.* median_us \([0-9]*\).*/\1/p' $T/a$step.out)
			$RP --addr $A --send $B:5001:5000:$count:$size \
				--timeout $tmo >>$T/a$step.out 2>&1 ||
				{ cat $T/a$step.out; gfail "ours run $r: sends failed"; }
		fi
		# (no process substitution: the guest's /dev has no /dev/fd)
		rate=$(sed -n 's/.*: sent \([0-9]*\) msgs [0-9]* bytes in \([0-9.]*\) s.*/\1 \2/p' $T/a$step.out |
			awk '{ printf "%d", $1 / $2 }')
		sed 's/^/  | /' $T/a$step.out
		[ -f $T/prog.$step ] && sed "s/^/  | prog(a): /" $T/prog.$step
		cpu_off
		gok "m $w $r $rate $rtt $p99"
		tell $((p + 1)) done
		case $w in
		kernel|ksock) kernel_rds off ;;
		psock) ipoibd_off ;;
		esac
		fetch $B $((p + 2)) >/dev/null
	done
done
[ "$role" = a ] && tell 7099 finished && sleep 2
[ "$role" = b ] && fetch $A 7099 >/dev/null
exit 0
