#!/bin/bash
# RDS beside UDP over IPoIB between two IB hosts of the software subnet,
# python3 programs on both ends (tests/integration/rds_progs.py), the RDS
# ones under LD_PRELOAD=libibgw_preload.so: one-way datagram rate and
# bandwidth at 1 KiB, 64 KiB and 1 MiB (UDP: 1 KiB and 60000 B, what an
# IP datagram carries; it drops what the receiver cannot take, RDS does
# not), and round-trip latency.  A benchmark, not a test: figures only.
#   tests/bench/rds_bench.sh [--build DIR] [--seconds N]
set -u
secs=3 build=build
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$2; shift 2 ;;
	--seconds) secs=$2; shift 2 ;;
	*) echo "rds_bench.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
export IBGW_BIN=$build
. "$(dirname "$0")/../integration/lib.bash"
. "$(dirname "$0")/../integration/netns.bash"
. "$(dirname "$0")/../integration/sdp.bash"
PY=$TOP/tests/integration/rds_progs.py
A1=10.6.0.1 A2=10.6.0.2
start_fabric
sdp_host h1 --address $A1/24 --no-sdp
sdp_host h2 --address $A2/24 --no-sdp
sleep 0.5
ns h1 ping -c 1 -W 5 $A2 >/dev/null || fail "no IPoIB between h1 and h2"

one() {	# KIND SIZE PORT
	local run=ns
	[ "$1" = rds ] && run=pre
	ns_bg R h2 timeout $((secs + 60)) \
		$([ "$1" = rds ] && echo env LD_PRELOAD="$PRE") \
		python3 "$PY" bench-recv "$1" $A2 "$3" >"$T/r$3.log" 2>&1
	for i in $(seq 1 50); do grep -q bound "$T/r$3.log" && break; sleep 0.1; done
	$run h1 timeout $((secs + 60)) python3 "$PY" bench-send "$1" $A1 $A2 "$3" \
		"$secs" "$2" >"$T/s$3.log" 2>&1
	wait "$R"
	printf '  %-4s %8s B: %s (%s)\n' "$1" "$2" \
		"$(sed 's/^[a-z]*: //' "$T/r$3.log" | tail -n1)" \
		"$(sed 's/^[a-z]*: //' "$T/s$3.log" | tail -n1)"
}
echo "== RDS vs UDP over IPoIB, python3 both ends, ${secs}s per point"
one rds 1024 6100
one udp 1024 6101
one rds 65536 6102
one udp 60000 6103
one rds 1048576 6104
echo "== round trips (1000 each)"
pre_bg E h2 python3 "$PY" echo-server $A2 5000 0 >"$T/e.log" 2>&1
ns_bg U h2 python3 "$PY" udp-echo $A2 5001 >"$T/u.log" 2>&1
sleep 1
pre h1 timeout 60 python3 "$PY" bench-rr rds $A1 $A2 5000 1000 | sed 's/^/  /'
ns h1 timeout 60 python3 "$PY" bench-rr udp $A1 $A2 5001 1000 | sed 's/^/  /'
echo "== counters"
echo "  h1 rds.tx_msgs $(stat_of h1 rds.tx_msgs), h2 rds_service.rx_msgs $(stat_of h2 rds_service.rx_msgs), h2 rds_service.cong_set $(stat_of h2 rds_service.cong_set)"
