#!/bin/bash
# Guest tier self-check: the kernel's RDS over IB (rds_rdma) between two
# guests over Soft-RoCE, driven by python3's socket.AF_RDS: datagrams of
# 4 to 20000 bytes both ways, contents and sender checked, and dmesg's
# RDS/IB connection line on both.  Code no one here wrote; if this fails
# the harness is wrong.
. "$(dirname "$0")/lib.bash"
vm_guest a --addr 10.77.0.1/24 --modprobe rds_rdma --modprobe rdma_rxe \
	--rxe rxe0:eth0 \
	--script "tests/vm/guest/rds.sh initiator 10.77.0.1 10.77.0.2"
vm_guest b --addr 10.77.0.2/24 --modprobe rds_rdma --modprobe rdma_rxe \
	--rxe rxe0:eth0 \
	--script "tests/vm/guest/rds.sh responder 10.77.0.2 10.77.0.1"
vm_link a b
vm_run_checked
for g in a b; do
	vm_output $g | grep -q "^ok($g): received 7 datagrams from .*contents checked" ||
		fail "$g: not every datagram arrived intact"
	vm_output $g | grep -q "^ok($g): FIN both ways" ||
		fail "$g: the exchange did not end"
	vm_output $g | grep -q "^ok($g): dmesg: RDS/IB conn connected" ||
		fail "$g: no RDS/IB connection in dmesg"
done
ok "RDS/IB datagrams both ways (4..20000 bytes), senders and contents checked, connection in dmesg"
