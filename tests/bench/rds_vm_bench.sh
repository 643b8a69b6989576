#!/bin/bash
# RDS in the guest tier: our RDS between two guests beside the kernel's
# RDS/IB between the same two, in the same run.
#   tests/bench/rds_vm_bench.sh [--build DIR] [--count N] [--size B]
#                               [--rtts N] [--runs N]  (build, 5000, 64, 300, 3)
#                               [--verbose]  (both guests' output after)
#                               [--ways LIST]  (a subset of "ours kernel
#                               ksock psock"; the ratios of absent ways: -)
#                               [--profile]  (psock: ipoibd under strace -c
#                               on both guests, the table in --verbose)
#                               [--cpu]  (every step: each guest's CPU time
#                               by user, system, softirq and idle, and
#                               its context switches, from
#                               /proc/stat, in --verbose; perf cannot
#                               sample under QEMU's software emulation)
#                               [--trace]  (psock: ipoibd on both guests
#                               and a's round-trip program under
#                               strace -f -tt -T, every line in --verbose:
#                               use small --count and --rtts)
#
# Two guests over Soft-RoCE as tests/vm/rds_kernel.sh boots them (a
# 10.77.0.1, b 10.77.0.2, rxe0 on each one's eth0, one virtio link).  a
# measures against b, RUNS times, ours then the kernel's (the order
# swapped every run; one RDS at a time, both want rdma_cm's port 18634):
# datagrams per second, COUNT messages of SIZE bytes from the first send
# until the last is acknowledged (ours: rdspeer --send to rdspeer
# --expect; the kernel: rds_kpeer.py on AF_RDS to the same), and round
# trips, RTTS messages of 64 bytes one at a time through an echo port
# (ours: bench_rds_rr to rdspeer --echo; the kernel: rds_kpeer.py --rtt
# to rds_kpeer.py --echo).  Prints every figure, the medians and the
# ratio ours / kernel.  The kernel's side is driven from Python (one
# system call per message), ours from C over libibverbs: the figures
# compare the two stacks as programs use them, under QEMU's software
# emulation, not hardware.  Two more ways in the same run make it fair
# and take the user's path: ksock, the kernel's RDS under one C program
# on the AF_RDS socket API (tests/rds_sock_bench: sink/echo on b, rr then
# send on a), and psock, the same binary under libibgw_preload.so with
# ipoibd --sdp-only --fabric verbs:rxe0 on both guests (the host's RDS
# service over rdma_cm on RoCE, no rds module loaded); their ratio
# psock / ksock compares the stacks with the program held fixed.  A
# benchmark, not a test: it exits non-zero only when a measurement could
# not be made.  Needs root, QEMU and the guest kernel package
# (docs/guest-tier.md).
set -u
cd "$(dirname "$0")/../.." || exit 1
build=build count=5000 size=64 rtts=300 runs=3 verbose=0
ways="ours kernel ksock psock" profile=0
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$2; shift 2 ;;
	--count) count=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--rtts) rtts=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--verbose) verbose=1; shift ;;
	--ways) ways=$2; shift 2 ;;
	--profile) profile=1; shift ;;
	--cpu) profile=2; shift ;;
	--trace) profile=3; shift ;;
	--seconds) shift 2 ;;	# tests/bench/run's; counts here
	-h|--help) sed -n '2,30s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "rds_vm_bench.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
die() { echo "rds_vm_bench.sh: $*" >&2; exit 1; }
for w in $ways; do
	case $w in ours|kernel|ksock|psock) ;; *) die "--ways: unknown way '$w'" ;; esac
done
nways=$(echo $ways | wc -w)
[ "$nways" -gt 0 ] || die "--ways: none"
for v in "$count" "$size" "$rtts" "$runs"; do
	case "$v" in ''|*[!0-9]*|0) die "counts and sizes are positive integers" ;; esac
done
[ "$size" -ge 16 ] && [ "$size" -le 1048576 ] || die "--size 16..1048576"
for p in tests/rdspeer tests/bench_rds_rr tests/rds_sock_bench libibgw_preload.so ipoibd; do
	[ -e "$build/$p" ] || die "$build/$p missing (make)"
done
for t in socat python3; do command -v $t >/dev/null || die "$t not installed"; done
IBGW_BIN=$(cd "$build" && pwd)
export IBGW_BIN
# the guest tier's harness: root, QEMU, the kernel (fails without them)
. tests/vm/lib.bash

tmo=$((180 + runs * nways * (60 + count / 100 + rtts / 20)))
S="tests/vm/guest/rds_bench_peer.sh"
for g in a b; do
	[ $g = a ] && ip=10.77.0.1 peer=10.77.0.2 || { ip=10.77.0.2 peer=10.77.0.1; }
	vm_guest $g --addr $ip/24 --modprobe rdma_ucm --modprobe rdma_rxe \
		--rxe rxe0:eth0 --script "$S $g $peer $BIN $count $size $rtts $runs $(echo $ways | tr ' ' ,) $profile" \
		--timeout $tmo
done
vm_link a b
echo "== RDS: ours vs the kernel's RDS/IB between two QEMU guests over Soft-RoCE (rxe0),"
echo "   $runs runs, alternating: $count datagrams of $size bytes a -> b; $rtts round trips of 64 bytes"
vm_run $((tmo + 60))
vrc=$?
M=$(vm_output a | sed -n 's/^ok(a): m //p')
if [ $verbose = 1 ]; then
	for n in a b; do
		echo "--- guest $n"
		vm_output $n | sed 's/^/  /'
	done
fi
if [ $vrc -ne 0 ] || [ "$(echo "$M" | grep -c .)" -ne $((nways * runs)) ]; then
	for n in a b; do
		echo "--- guest $n"
		vm_output $n | tail -n 40 | sed 's/^/  /'
	done
	die "the measurements did not complete"
fi
prog() {	# WAY: what drove it
	case $1 in
	ours) echo "rdspeer+bench_rds_rr (C, our endpoint on verbs)" ;;
	kernel) echo "rds_kpeer.py (python3, AF_RDS)" ;;
	ksock) echo "rds_sock_bench (C, AF_RDS, kernel rds_rdma)" ;;
	psock) echo "rds_sock_bench (C, AF_RDS, preload+ipoibd)" ;;
	esac
}
printf '%-7s %3s %10s %8s %8s %8s  %s\n' way run "msgs/s" "MB/s" "rtt_us" "p99_us" program
echo "$M" | while read -r w r rate rtt p99; do
	printf '%-7s %3s %10s %8s %8s %8s  %s\n' "$w" "$r" "$rate" \
		"$(awk -v a="$rate" -v s="$size" 'BEGIN { printf "%.2f", a * s / 1e6 }')" \
		"$rtt" "${p99:--}" "$(prog "$w")"
done
med() {	# WAY FIELD: the median of that way's figures
	echo "$M" | awk -v w="$1" -v f="$2" '$1 == w { print $f }' | sort -n |
		awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
echo "medians ($runs runs; $count x $size B, $rtts round trips of 64 B):"
printf '  %-7s %10s %8s %8s %8s  %s\n' way "msgs/s" "MB/s" "rtt_us" "p99_us" program
for w in $ways; do
	printf '  %-7s %10s %8s %8s %8s  %s\n' $w "$(med $w 3)" \
		"$(awk -v a="$(med $w 3)" -v s="$size" 'BEGIN { printf "%.2f", a * s / 1e6 }')" \
		"$(med $w 4)" "$(med $w 5)" "$(prog $w)"
done
ratio() {	# A B: rate and rtt of A over B
	case " $ways " in *" $1 "*) ;; *) echo "ratio $1/$2: -"; return ;; esac
	case " $ways " in *" $2 "*) ;; *) echo "ratio $1/$2: -"; return ;; esac
	awk -v a="$(med $1 3)" -v b="$(med $2 3)" -v c="$(med $1 4)" -v d="$(med $2 4)" \
		-v n="$1/$2" 'BEGIN { printf "ratio %-13s rate %.2f, rtt %.2f", n, a / b, c / d }'
	# the same ratios run by run (each run measures both ways back to
	# back; the machine's speed drifts between runs), and their medians
	local per
	per=$(echo "$M" | awk -v x="$1" -v y="$2" '
		$1 == x { ra[$2] = $3; ta[$2] = $4 }
		$1 == y { rb[$2] = $3; tb[$2] = $4 }
		END { for (r in ra) if ((r in rb) && rb[r] > 0 && tb[r] > 0)
			printf "%d %.2f %.2f\n", r, ra[r] / rb[r], ta[r] / tb[r] }' |
		sort -n | cut -d' ' -f2-)
	[ -n "$per" ] || { echo; return; }
	printf '; run by run rate %s, rtt %s (medians %s, %s)\n' \
		"$(echo "$per" | awk '{ print $1 }' | tr '\n' ' ' | sed 's/ $//')" \
		"$(echo "$per" | awk '{ print $2 }' | tr '\n' ' ' | sed 's/ $//')" \
		"$(echo "$per" | awk '{ print $1 }' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')" \
		"$(echo "$per" | awk '{ print $2 }' | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
}
ratio ours kernel
ratio psock ksock
ratio ksock kernel
echo "(rtt below 1: the first is faster; psock/ksock: the same C program on both stacks)"
