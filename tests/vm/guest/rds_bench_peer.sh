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
# The rate is the sender's: COUNT messages from the first send until the
# last is acknowledged.  a prints "ok(a): m WAY RUN MSGS_PER_S RTT_US".
#   rds_bench_peer.sh a|b PEER BIN COUNT SIZE RTTS RUNS
. "$(dirname "$0")/../guest.bash"
role=$1 peer=$2 BIN=$3 count=$4 size=$5 rtts=$6 runs=$7
KP="python3 $G_TOP/tests/vm/guest/rds_kpeer.py"
RP="$BIN/tests/rdspeer --fabric verbs:rxe0"
RR="$BIN/tests/bench_rds_rr --fabric verbs:rxe0"
T=$(mktemp -d)
A=10.77.0.1 B=10.77.0.2
wait_peer "$peer"
for i in $(seq 1 50); do
	grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null && break
	sleep 0.2
done
serve() {	# PORT WORD
	echo "$2" >$T/serve.$1
	socat -u "OPEN:$T/serve.$1" "TCP-LISTEN:$1,reuseaddr" >/dev/null 2>&1 &
}
fetch() {	# PEER PORT
	local i out
	for i in $(seq 1 600); do
		out=$(socat -u "TCP:$1:$2" STDOUT 2>/dev/null) && [ -n "$out" ] &&
			{ echo "$out"; return 0; }
		sleep 0.5
	done
	gfail "nothing from $1:$2"
}
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
tmo=$((60 + count / 100))
step=0
for r in $(seq 1 "$runs"); do
	if [ $((r % 2)) = 1 ]; then ways="ours kernel"; else ways="kernel ours"; fi
	for w in $ways; do
		step=$((step + 1))
		# p: b's receiver is up; p + 1: a's sender is done; p + 2: b
		# has unloaded the kernel's RDS (a's next step may begin)
		p=$((7100 + 3 * step))
		[ $w = kernel ] && kernel_rds on
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
			serve $p ready
			wait $pid || { cat $T/b$step.out; gfail "$w run $r: the receiver failed"; }
			# the kernel stays until a's sender is through: gone
			# earlier, it would leave a's kernel an unacknowledged
			# tail to resend to whatever listens next
			fetch $A $((p + 1)) >/dev/null
			[ $w = kernel ] && kernel_rds off
			serve $((p + 2)) done
			continue
		fi
		fetch $B $p >/dev/null
		if [ $w = kernel ]; then
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
		gok "m $w $r $rate $rtt"
		serve $((p + 1)) done
		[ $w = kernel ] && kernel_rds off
		fetch $B $((p + 2)) >/dev/null
	done
done
[ "$role" = a ] && serve 7099 finished && sleep 2
[ "$role" = b ] && fetch $A 7099 >/dev/null
exit 0
