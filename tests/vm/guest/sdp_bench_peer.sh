# Inside one of the two guests of tests/bench/sdp_vm_bench.sh (a 10.77.0.1
# the servers, b 10.77.0.2 the clients; rxe0 on eth0 each).
#   sdp_bench_peer.sh a|b PEER BIN SECONDS RUNS
#   both  ipoibd --sdp-only --fabric verbs:rxe0 (sdp_service)
#   a     iperf3 -s and tcp_rr -s three ways: plain kernel TCP (ports 5301,
#         5302), under libibgw_preload.so (5401, 5402; 'both' servers),
#         under rdma-core's librspreload (5501, 5502); "ready" on TCP
#         7001; stays until b serves "done" on TCP 7012
#   b     RUNS times, the order of the three ways rotated every run:
#         iperf3 -c for SECONDS each way, then tcp_rr -c (64 bytes) each
#         way; our clients are SDP only by libsdp.conf (no TCP fallback
#         to hide a failure).  One line per measurement,
#           m iperf|rr tcp|sdp|rs RUN VALUE AMOUNT PKTS
#         VALUE bits/s (iperf) or median RTT us (rr), AMOUNT the bytes
#         received (iperf) or round trips (rr), PKTS what rxe0 sent
#         meanwhile (sent_pkts); or VALUE "fail:WHY" and AMOUNT 0.
. "$(dirname "$0")/../guest.bash"
role=$1 peer=$2 BIN=$3 secs=$4 runs=$5
export IBGW_BIN=$BIN
. "$(dirname "$0")/verbs_lib.bash"
PRE=$BIN/libibgw_preload.so
RR=$BIN/tests/tcp_rr
[ -f "$PRE" ] || gfail "no $PRE"
[ -x "$RR" ] || gfail "no $RR"
RS=$(dpkg -L librdmacm1 2>/dev/null | grep '/librspreload\.so$' | head -n1)
T=$(mktemp -d)
wait_peer "$peer"
wait_active rxe0
sdp_service $T
gok "service: $(sed -n 's/.*\(SDP service on .*\)/\1/p' $T/ipoibd.log)"
gok "rsockets: ${RS:-none}"
cat >$T/sdp.conf <<-CONF
	use sdp client * 10.77.0.0/24:*
	use both server * *:*
CONF
# w MODE CMD...: CMD plain (tcp), under our preload (sdp) or rsockets' (rs);
# W=exec: in its place (a server in a subshell of its own)
w() {
	local m=$1
	shift
	case $m in
	tcp) ${W:-} "$@" ;;
	sdp) ${W:-} env LD_PRELOAD="$PRE" LIBSDP_CONFIG_FILE=$T/sdp.conf "$@" ;;
	rs) ${W:-} env LD_PRELOAD="$RS" "$@" ;;
	esac
}
base() {	# MODE: its ports' base
	case $1 in tcp) echo 5300 ;; sdp) echo 5400 ;; rs) echo 5500 ;; esac
}

if [ "$role" = a ]; then
	for m in tcp sdp rs; do
		[ $m = rs ] && [ -z "$RS" ] && continue
		p=$(base $m)
		(W=exec w $m iperf3 -s -p $((p + 1))) >$T/iperf-$m.log 2>&1 &
		SP="${SP:-} $!"
		(W=exec w $m "$RR" -s -p $((p + 2))) >$T/rr-$m.log 2>&1 &
		SP="$SP $!"
	done
	for p in 5301 5302 5401 5402; do
		for i in $(seq 1 100); do
			ss -ltn "sport = :$p" | grep -q LISTEN && break
			sleep 0.2
		done
	done
	sleep 3	# rsockets' listeners are rdma_cm's: ss need not show them
	echo ready >$T/ready
	serve 7001 $T/ready
	out=$(fetch "$peer" 7012 $((runs * 6 * (secs + 40) * 2 + 240)))
	gok "b is done ($out)"
	for m in tcp sdp rs; do
		echo "--- servers $m"
		tail -n 5 $T/iperf-$m.log $T/rr-$m.log 2>/dev/null
	done
	kill $SP $IPID
	exit 0
fi

fetch "$peer" 7001 >/dev/null || gfail "servers never ready"
# why RC OUT: a short reason for a failed measurement
why() {
	case $1 in
	124) echo "fail:timeout" ;;
	139) echo "fail:segfault" ;;
	*) echo "fail:exit-$1:$(echo "$2" | grep -v '^ *$' | tail -n1 | tr -c 'A-Za-z0-9.,:()/-' '_' | cut -c1-50)" ;;
	esac
}
# attempt KIND MODE: one try; sets V (the figure, or fail:WHY), A, OUT
attempt() {
	local k=$1 m=$2 p rc
	p=$(base $m)
	if [ $k = iperf ]; then
		OUT=$(w $m timeout $((secs + 15)) iperf3 -c $peer -p $((p + 1)) -t $secs -J 2>$T/iperf.err)
		rc=$?
		set -- $(echo "$OUT" | python3 -c 'import json,sys
e = json.load(sys.stdin)["end"]["sum_received"]
print(int(e["bits_per_second"]), int(e["bytes"]))' 2>/dev/null)
		# the reason, if it failed: iperf3's JSON "error", or its stderr
		OUT="$(cat $T/iperf.err)
$(echo "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("error", ""))' 2>/dev/null)"
	else
		OUT=$(w $m timeout $((secs + 15)) "$RR" -c $peer -p $((p + 2)) -n 1000000 -S 64 -t $secs 2>&1)
		rc=$?
		# tcp_rr: n N size S median_us M ...
		set -- $(echo "$OUT" | sed -n 's/^tcp_rr: n \([0-9]*\) size [0-9]* median_us \([0-9.]*\) .*/\2 \1/p')
	fi
	V=${1:-} A=${2:-0}
	if [ $rc -ne 0 ] || [ -z "$V" ] || [ "$A" = 0 ]; then
		[ $rc -eq 0 ] && rc=none
		V=$(why $rc "$OUT") A=0
	fi
}
# measure KIND MODE RUN: one measurement, its line; a failure other than a
# timeout is tried once more, 2 s later (a server between two clients)
measure() {
	local k=$1 m=$2 r=$3 p0
	if [ $m = rs ] && [ -z "$RS" ]; then
		gok "m $k $m $r fail:no-librspreload 0 0"
		return
	fi
	p0=$(rxe_counter rxe0 sent_pkts)
	attempt $k $m
	case $V in
	fail:timeout) ;;
	fail:*)
		echo "$k $m run $r: $V, tried again: $OUT" | tail -n 5 >>$T/detail.log
		sleep 2
		p0=$(rxe_counter rxe0 sent_pkts)
		attempt $k $m ;;
	esac
	case $V in fail:*) echo "$k $m run $r: $OUT" | tail -n 5 >>$T/detail.log ;; esac
	gok "m $k $m $r $V $A $(($(rxe_counter rxe0 sent_pkts) - p0))"
}
modes=(tcp sdp rs)
for r in $(seq 1 "$runs"); do
	i=$(((r - 1) % 3))
	order="${modes[*]:$i} ${modes[*]:0:$i}"
	for k in iperf rr; do
		for m in $order; do
			measure $k $m $r
		done
	done
done
[ -s $T/detail.log ] && sed 's/^/  detail: /' $T/detail.log | head -n 30
echo done >$T/done
serve 7012 $T/done
DPID=$!
for i in $(seq 1 60); do	# until a has fetched it
	kill -0 $DPID 2>/dev/null || break
	sleep 0.5
done
kill $IPID
exit 0
