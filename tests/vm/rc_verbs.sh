#!/bin/bash
# RC queue pairs and the CM through the verbs provider (librdmacm on
# Soft-RoCE) between two guests, with rctest: a REJ with private data, a
# REQ to a port nobody listens on, private data over the limit, then
# REQ/REP private data both ways, 140 SENDs of 1 to 10000 bytes (multi-
# packet past the MTU of 1024) checked, RDMA WRITE with and without
# immediate, RDMA READ, DREQ/DREP seen on both sides, flushed receives and
# a send to a QP in error.  b's capture decoded here by tshark: the CM
# MADs and the RC opcodes, RETH and AETH where they belong, nothing
# malformed.
. "$(dirname "$0")/lib.bash"
[ -x "$BIN/tests/rctest" ] || fail "no $BIN/tests/rctest (make all)"
command -v tshark >/dev/null || fail "no tshark (run 'make deps')"
vm_guest a --addr 10.77.0.1/24 --modprobe rdma_ucm --modprobe rdma_rxe \
	--rxe rxe0:eth0 --script "tests/vm/guest/rc_peer.sh a 10.77.0.2" \
	--timeout 300
vm_guest b --addr 10.77.0.2/24 --modprobe rdma_ucm --modprobe rdma_rxe \
	--rxe rxe0:eth0 --script "tests/vm/guest/rc_peer.sh b 10.77.0.1" \
	--timeout 300
vm_link a b
vm_run_checked 350
A=$(vm_output a) B=$(vm_output b)
has() {	# OUTPUT REGEXP
	echo "$1" | grep -Eq "$2" || fail "guest did not report: $2"
}
has "$A" '^ok\(a\): server: REQ private data, REJ, 140 messages'
has "$B" "^ok\(b\): 1: rejected reason 28 pdata 'rejected-by-server'$"
has "$B" '^ok\(b\): 2: port nobody listens on: (rejected reason|unreachable)'
has "$B" '^ok\(b\): 2b: no such host: unreachable '
has "$B" '^ok\(b\): 3: 57 bytes of REQ private data: EINVAL$'
has "$B" '^ok\(b\): 4: established with REP private data'
ok "rc over rxe: REJ with private data, no listener -> $(echo "$B" | sed -n 's/^ok(b): 2: port nobody listens on: //p'), no host -> $(echo "$B" | sed -n 's/^ok(b): 2b: no such host: //p'), 57 bytes EINVAL, sends/write+imm/read verified, disconnect both sides"

capture $VM_DIR/b/rc.pcap
# The RC payloads are rctest's bytes, no protocol (ts turns off the
# heuristics that would take short ones for theirs)
no_malformed '_ws.malformed || _ws.expert.severity == error'
# CM MADs (class 0x07 on QP1): REQ 0x10, REJ 0x12, REP 0x13, RTU 0x14,
# DREQ 0x15, DREP 0x16
cm() { cnt "infiniband.mad.mgmtclass == 0x07 && infiniband.mad.attributeid == $1"; }
req=$(cm 0x0010) rej=$(cm 0x0012) rep=$(cm 0x0013) rtu=$(cm 0x0014)
dreq=$(cm 0x0015) drep=$(cm 0x0016)
echo "capture: CM REQ $req REJ $rej REP $rep RTU $rtu DREQ $dreq DREP $drep"
[ "$req" -ge 3 ] || fail "capture: $req REQs, expected 3 (reject-me, port 7999, the connection)"
[ "$rej" -ge 2 ] || fail "capture: $rej REJs, expected 2"
[ "$rep" -ge 1 ] && [ "$rtu" -ge 1 ] && [ "$dreq" -ge 1 ] && [ "$drep" -ge 1 ] ||
	fail "capture: REP $rep RTU $rtu DREQ $dreq DREP $drep"
# the REQ's service ID: RDMA_PS_TCP port 7471 (0x1d2f); the REJ reason 28
# with the server's private data
n=$(cnt 'infiniband.cm.req.serviceid.dport == 7471')
[ "$n" -ge 2 ] || fail "capture: $n REQs to port 7471"
n=$(cnt 'infiniband.cm.rej.reason == 28')
[ "$n" -ge 1 ] || fail "capture: no REJ with reason 28"
rp=$(ts -Y 'infiniband.cm.rej.reason == 28' -T fields -e infiniband.cm.rej.private | head -n1)
echo "$rp" | tr -d ':' | xxd -r -p | grep -aq 'rejected-by-server' ||
	fail "capture: REJ private data $rp"
rq=$(ts -Y 'infiniband.cm.rej.reason != 28' -T fields -e infiniband.cm.rej.reason | head -n1)
echo "capture: REJ for port 7999: reason $rq"
# RC opcodes: SEND First 0 Middle 1 Last 2 Only 4; RDMA WRITE First 6
# Middle 7 Last 8 Last-with-Immediate 9; READ Request 12, Response First
# 13 Middle 14 Last 15; ACK 17
for op in 0 1 2 4 6 7 8 9 12 13 14 15 17; do
	n=$(cnt "infiniband.bth.opcode == $op")
	echo "capture: BTH opcode $op: $n"
	[ "$n" -ge 1 ] || fail "capture: no BTH opcode $op"
done
n=$(cnt 'infiniband.bth.opcode == 4 && !infiniband.reth')
[ "$n" -ge 80 ] || fail "capture: $n SEND Only packets (expected 4 sizes x 20 at least)"
# RETH in the first packet of a write and in the read request, with the
# server's rkey and 32768 / 65536 bytes; none in a SEND
rkey=$(echo "$B" | sed -n 's/^established .* rkey \(0x[0-9a-f]*\) .*/\1/p' | head -n1)
[ -n "$rkey" ] || fail "no rkey in b's output"
n=$(cnt "infiniband.bth.opcode == 6 && infiniband.reth.r_key == $rkey && infiniband.reth.dmalen == 32768")
[ "$n" -eq 2 ] || fail "capture: $n RDMA WRITE First with RETH rkey $rkey len 32768 (expected 2)"
n=$(cnt "infiniband.bth.opcode == 12 && infiniband.reth.r_key == $rkey && infiniband.reth.dmalen == 65536")
[ "$n" -ge 1 ] || fail "capture: no READ Request with RETH rkey $rkey len 65536"
n=$(cnt 'infiniband.bth.opcode <= 5 && infiniband.reth')
[ "$n" -eq 0 ] || fail "capture: $n SEND packets with a RETH"
# the immediate, AETH in ACKs and in read responses First/Last, not Middle
n=$(cnt 'infiniband.bth.opcode == 9 && infiniband.immdt == 12:34:ab:cd')
[ "$n" -eq 1 ] || fail "capture: $n RDMA WRITE Last with Immediate 0x1234abcd"
n=$(cnt 'infiniband.bth.opcode == 17 && !infiniband.aeth')
[ "$n" -eq 0 ] || fail "capture: $n ACKs without AETH"
n=$(cnt '(infiniband.bth.opcode == 13 || infiniband.bth.opcode == 15) && infiniband.aeth')
[ "$n" -ge 2 ] || fail "capture: read responses First/Last without AETH"
n=$(cnt 'infiniband.bth.opcode == 14 && infiniband.aeth')
[ "$n" -eq 0 ] || fail "capture: $n read responses Middle with an AETH"
ok "capture: CM REQ/REJ(28, private data)/REP/RTU/DREQ/DREP, RC SEND/WRITE(+imm)/READ opcodes, RETH and AETH where they belong, none malformed"
