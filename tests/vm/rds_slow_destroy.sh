#!/bin/bash
# The host's RDS service answers while a queue pair takes long to
# destroy.  Linux 6.1's rxe can spend 50 s in ibv_destroy_qp after a
# retry failure (rxe_pool.c, __rxe_cleanup; seen in the guest tier, a
# kernel RDS peer's reconnect going unanswered meanwhile); ipoibd
# destroys queue pairs on a thread of its own.  Guest a runs
# ipoibd --sdp-only --fabric verbs:rxe0 with tests/libslow_destroy.so
# (its first RC ibv_destroy_qp sleeps 20 s) and two RDS echoes under
# libibgw_preload.so; guest b the kernel's rds_rdma: round trips, the
# modules reloaded (the connection dropped: a's queue pair destroyed
# slowly), then round trips again, through within 10 s.  Guest script:
# tests/vm/guest/rds_slow_destroy_peer.sh.
. "$(dirname "$0")/lib.bash"
for f in tests/rds_sock_bench libibgw_preload.so tests/libslow_destroy.so; do
	[ -e "$BIN/$f" ] || fail "no $BIN/$f (make all)"
done
S=tests/vm/guest/rds_slow_destroy_peer.sh
vm_guest a --addr 10.77.0.1/24 --modprobe rdma_ucm --modprobe rdma_rxe \
	--rxe rxe0:eth0 --script "$S a $BIN" --timeout 240
vm_guest b --addr 10.77.0.2/24 --modprobe rdma_ucm --modprobe rdma_rxe \
	--rxe rxe0:eth0 --script "$S b $BIN" --timeout 240
vm_link a b
vm_run_checked 300
A=$(vm_output a) B=$(vm_output b)
echo "$B" | grep -q '^ok(b): after the restart: .*round trips' ||
	fail "b: no round trips after the restart"
echo "$A" | grep -q '^ok(a): ipoibd: a queue pair.s destroy took 20 s' ||
	fail "a: no slow destroy"
ok "a's queue pair took 20 s to destroy; b's round trips after its restart: $(echo "$B" | sed -n 's/^ok(b): after the restart: //p')"
