#!/bin/bash
# The cases of tests/integration/rds_semantics.sh (tests/rds_semantics,
# which runs there under libibgw_preload.so on our RDS) run against the
# kernel's RDS/IB between two guests over Soft-RoCE, without the preload:
# what the cases expect is what Linux 6.1 does, not only what we read in
# its source (linklocal with the guests' fe80:: addresses on eth0).
# sndtimeo is left out (it stops the peer's ipoibd; the
# kernel has no process to stop).  Then rds_preload.sh's python3
# programs (rds_progs.py: errors, echoes up to 1 MiB, readiness, fork,
# exec, ping) the same way.  Guest script:
# tests/vm/guest/rds_semantics_kernel.sh.
. "$(dirname "$0")/lib.bash"
[ -x "$BIN/tests/rds_semantics" ] || fail "no $BIN/tests/rds_semantics (make all)"
S=tests/vm/guest/rds_semantics_kernel.sh
vm_guest a --addr 10.77.0.1/24 --modprobe rds_rdma --modprobe rdma_rxe \
	--rxe rxe0:eth0 --script "$S a 10.77.0.2 $BIN" --timeout 420
vm_guest b --addr 10.77.0.2/24 --modprobe rds_rdma --modprobe rdma_rxe \
	--rxe rxe0:eth0 --script "$S b 10.77.0.1 $BIN" --timeout 420
vm_link a b
vm_run_checked 480
A=$(vm_output a)
bad=$(echo "$A" | grep "^FAIL(a) ")
[ -z "$bad" ] || fail "cases that the kernel's RDS does otherwise than expected:
$bad"
echo "$A" | grep -q "^ok(a): cases done" || fail "a did not finish its cases"
n=$(echo "$A" | grep -c "^ok(a): [a-z0-9-]*:")
[ "$n" -eq 28 ] || fail "$n cases passed, not 28"
ok "the 22 cases of rds_semantics and 6 of rds_progs.py as the kernel's RDS/IB does them (over rxe, no preload)"
