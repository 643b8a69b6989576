#!/bin/bash
# Guest tier self-check: rdma-core's own ibv_rc_pingpong and ibv_ud_pingpong
# between two guests over Soft-RoCE.  These are programs no one here wrote
# on the kernel's verbs; if this fails the harness is wrong.
. "$(dirname "$0")/lib.bash"
vm_guest a --addr 10.77.0.1/24 --modprobe rdma_rxe --rxe rxe0:eth0 \
	--script "tests/vm/guest/pingpong.sh server 10.77.0.2"
vm_guest b --addr 10.77.0.2/24 --modprobe rdma_rxe --rxe rxe0:eth0 \
	--script "tests/vm/guest/pingpong.sh client 10.77.0.1"
vm_link a b
vm_run_checked
for g in a b; do
	for p in ibv_rc_pingpong ibv_ud_pingpong; do
		vm_output $g | grep -q "^ok($g): $p: 200 iterations" ||
			fail "$g: $p did not report 200 iterations"
	done
done
ok "ibv_rc_pingpong and ibv_ud_pingpong, 200 iterations each way"
