#!/bin/bash
# SDP in the guest tier beside rsockets and TCP (issue 14, item 7).
#   tests/bench/sdp_vm_bench.sh [--build DIR] [--seconds N] [--runs N]
#                                                      (build, 3, 3)
#
# Two guests over Soft-RoCE as tests/vm/sdp_verbs.sh boots them (a
# 10.77.0.1, b 10.77.0.2, rxe0 on each one's eth0, one virtio link), each
# running ipoibd --sdp-only --fabric verbs:rxe0.  b measures against a,
# RUNS times, the order of the three ways rotated every run, each for
# SECONDS: iperf3 b -> a, then tests/tcp_rr b -> a (64-byte messages, one
# at a time), (1) over plain kernel TCP on the guest link, (2) under our
# libibgw_preload.so (SDP; the client SDP only by libsdp.conf), (3) under
# rdma-core's librspreload (rsockets).  Prints every figure, a table per
# measurement (runs, median, ratio to TCP) and whether each way went over
# RDMA: the packets b's rxe0 sent during it (hw_counters sent_pkts)
# against the data moved; for rsockets "fell back to TCP" or the failure.
# The guests run under QEMU's software emulation: the figures compare the
# three ways with one another, not with hardware.  A benchmark, not a
# test: it exits non-zero only when our SDP or the TCP measurement could
# not be made (rsockets failing is a result).  Needs root, QEMU and the
# guest kernel package (docs/guest-tier.md).
set -u
cd "$(dirname "$0")/../.." || exit 1
build=build secs=3 runs=3
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$2; shift 2 ;;
	--seconds) secs=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	-h|--help) sed -n '2,23s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "sdp_vm_bench.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
die() { echo "sdp_vm_bench.sh: $*" >&2; exit 1; }
case "$secs" in ''|*[!0-9]*|0) die "--seconds wants a positive integer" ;; esac
case "$runs" in ''|*[!0-9]*|0) die "--runs wants a positive integer" ;; esac
for p in ipoibd libibgw_preload.so tests/tcp_rr tests/fabtest; do
	[ -e "$build/$p" ] || die "$build/$p missing (make)"
done
for t in iperf3 socat python3; do command -v $t >/dev/null || die "$t not installed"; done
IBGW_BIN=$(cd "$build" && pwd)
export IBGW_BIN
# the guest tier's harness: root, QEMU, the kernel (fails without them)
. tests/vm/lib.bash

tmo=$((180 + runs * 6 * (secs + 35)))
S="tests/vm/guest/sdp_bench_peer.sh"
vm_guest a --addr 10.77.0.1/24 --modprobe rdma_ucm --modprobe rdma_rxe \
	--rxe rxe0:eth0 --script "$S a 10.77.0.2 $BIN $secs $runs" --timeout $tmo
vm_guest b --addr 10.77.0.2/24 --modprobe rdma_ucm --modprobe rdma_rxe \
	--rxe rxe0:eth0 --script "$S b 10.77.0.1 $BIN $secs $runs" --timeout $tmo
vm_link a b
echo "== SDP (ours) vs rsockets vs kernel TCP between two QEMU guests over Soft-RoCE (rxe0),"
echo "   ${secs}s per measurement, $runs runs, alternating (iperf3 1 stream b -> a; tcp_rr 64 bytes)"
vm_run $((tmo + 60))
vrc=$?
B=$(vm_output b)
M=$(echo "$B" | sed -n 's/^ok(b): m //p')
if [ $vrc -ne 0 ] || [ -z "$M" ]; then
	for n in a b; do
		echo "--- guest $n (exit $(cat "$VM_DIR/$n/rc" 2>/dev/null || echo none))"
		vm_output $n | sed 's/^/  /'
	done
fi
[ -n "$M" ] || fail "guest b measured nothing"
echo "$B" | sed -n 's/^ok(b): \(service\|rsockets\): /  b: \1: /p'
echo "$M" | while read -r k m r v a p; do
	case $k:$v in
	iperf:fail*) echo "  run $r: iperf3 $m: $v (rxe0 sent_pkts +$p)" ;;
	iperf:*) echo "  run $r: iperf3 $m: $((v / 1000000)) Mb/s, $a bytes, rxe0 sent_pkts +$p" ;;
	rr:fail*) echo "  run $r: tcp_rr $m: $v (rxe0 sent_pkts +$p)" ;;
	*) echo "  run $r: tcp_rr $m: median $v us, $a round trips, rxe0 sent_pkts +$p" ;;
	esac
done
echo "$B" | grep '^  detail: ' | head -n 20
echo "$M" | python3 -c '
import statistics, sys
rows = [l.split() for l in sys.stdin if l.strip()]
name = {"tcp": "kernel TCP", "sdp": "SDP (libibgw_preload)", "rs": "rsockets (librspreload)"}
bad = []
def carried(k, amount, pkts):
    # over RDMA, b sent at least a packet per 1 KiB MTU of iperf3 data
    # (counted loosely: 8 KiB) and one per tcp_rr request (loosely: two)
    need = amount / 8192 if k == "iperf" else amount / 2
    return pkts >= need
for k, title, unit in (("iperf", "throughput, iperf3 b -> a", "Mb/s"),
                       ("rr", "round trip, tcp_rr b -> a, 64 bytes", "us, median RTT")):
    print("== %s" % title)
    print("  %-24s %-28s %-10s %-8s %s" % ("", "runs (%s)" % unit, "median", "/TCP", "over RDMA (rxe0 sent_pkts)"))
    med = {}
    for m in ("tcp", "sdp", "rs"):
        rs = [x for x in rows if x[0] == k and x[1] == m]
        ok = [x for x in rs if not x[3].startswith("fail")]
        vals = [float(x[3]) / (1e6 if k == "iperf" else 1) for x in ok]
        figs = " ".join("%g" % round(float(x[3]) / (1e6 if k == "iperf" else 1), 1)
                        if not x[3].startswith("fail") else "-" for x in rs)
        if vals:
            med[m] = statistics.median(vals)
        via = [carried(k, int(x[4]), int(x[5])) for x in ok]
        pk = " ".join(x[5] for x in rs)
        if not ok:
            how = "failed: " + ", ".join(sorted(set(x[3][5:] for x in rs)))
        elif all(via):
            how = "yes (" + pk + ")"
        elif not any(via):
            how = ("no, fell back to TCP (" if m == "rs" else "no (") + pk + ")"
        else:
            how = "partly (" + pk + ")"
        if len(ok) < len(rs) and ok:
            how += "; %d of %d failed: %s" % (len(rs) - len(ok), len(rs),
                ", ".join(sorted(set(x[3][5:] for x in rs if x[3].startswith("fail")))))
        if m in ("tcp", "sdp") and len(ok) < len(rs):
            bad.append("%s %s" % (k, m))
        ratio = ("%.3f" % (med[m] / med["tcp"])) if m in med and med.get("tcp") else "-"
        print("  %-24s %-28s %-10s %-8s %s" % (name[m], figs, ("%g" % round(med[m], 1)) if m in med else "-", ratio, how))
if bad:
    print("not measured: " + ", ".join(bad))
    sys.exit(1)
' || fail "our SDP or the TCP measurement could not be made"
exit 0
