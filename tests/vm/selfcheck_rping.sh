#!/bin/bash
# Guest tier self-check: librdmacm's rping (rdmacm-utils) between two guests
# over Soft-RoCE, through the kernel's rdma_cm (rdma_ucm).  A program no one
# here wrote; if this fails the harness is wrong.
. "$(dirname "$0")/lib.bash"
vm_guest a --addr 10.77.0.1/24 --modprobe rdma_ucm --modprobe rdma_rxe \
	--rxe rxe0:eth0 --script "tests/vm/guest/rping.sh server 10.77.0.1"
vm_guest b --addr 10.77.0.2/24 --modprobe rdma_ucm --modprobe rdma_rxe \
	--rxe rxe0:eth0 --script "tests/vm/guest/rping.sh client 10.77.0.1"
vm_link a b
vm_run_checked
for g in a b; do
	vm_output $g | grep -q "^ok($g): rping .*: 10 pings$" ||
		fail "$g: rping did not report 10 pings"
done
ok "rping over rdma_cm, 10 pings, counted on both sides"
