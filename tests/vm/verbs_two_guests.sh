#!/bin/bash
# The verbs provider on Soft-RoCE between two guests (rxe0 on each one's
# eth0): unicast both ways, multicast, 2000 batched datagrams checked one
# by one, port events; guest b's capture of its link decoded here by
# tshark as RoCE v2 carrying those datagrams, nothing malformed.
. "$(dirname "$0")/lib.bash"
[ -x "$BIN/tests/fabtest" ] || fail "no $BIN/tests/fabtest (make all)"
command -v tshark >/dev/null || fail "no tshark (run 'make deps')"
vm_guest a --addr 10.77.0.1/24 --modprobe rdma_rxe --rxe rxe0:eth0 \
	--script "tests/vm/guest/verbs_peer.sh a 10.77.0.2" --timeout 400
vm_guest b --addr 10.77.0.2/24 --modprobe rdma_rxe --rxe rxe0:eth0 \
	--script "tests/vm/guest/verbs_peer.sh b 10.77.0.1" --timeout 400
vm_link a b
vm_run_checked 450
A=$(vm_output a) B=$(vm_output b)
has() {	# OUTPUT REGEXP
	echo "$1" | grep -Eq "$2" || fail "guest did not report: $2"
}
has "$A" '^ok\(a\): sgid ::ffff:10\.77\.0\.1$'
has "$B" '^ok\(b\): sgid ::ffff:10\.77\.0\.2$'
has "$B" '^ok\(b\): phase 1: 5 unicast from ::ffff:10\.77\.0\.1 '
has "$A" '^ok\(a\): phase 2: 5 unicast from ::ffff:10\.77\.0\.2$'
has "$B" '^ok\(b\): phase 3: 3 multicast to ::ffff:239\.1\.2\.3$'
has "$B" '^ok\(b\): phase 4: qpn 0x[0-9a-f]+ verify ok 2000 bad 0 dup 0 missing 0 bytes 2000000$'
has "$A" '^ok\(a\): phase 5: events PORT_ERR then PORT_ACTIVE$'
ok "two guests: unicast both ways, multicast, 2000 batched datagrams verified, port events"

# the capture: RoCE v2 (UDP 4791) as tshark's InfiniBand dissector sees it
P=$VM_DIR/b/roce.pcap
[ -s "$P" ] || fail "no capture at $P"
# tshark decodes UDP port 4791 as RoCE v2 ("RRoCE") by itself, no -d
ts() { tshark -r "$P" "$@" 2>/dev/null; }
q1=$(echo "$B" | sed -n 's/^ok(b): phase 1: .* qpn \(0x[0-9a-f]*\) src_qp \(0x[0-9a-f]*\)$/\1/p')
s1=$(echo "$B" | sed -n 's/^ok(b): phase 1: .* qpn \(0x[0-9a-f]*\) src_qp \(0x[0-9a-f]*\)$/\2/p')
q4=$(echo "$B" | sed -n 's/^ok(b): phase 4: qpn \(0x[0-9a-f]*\) .*/\1/p')
[ -n "$q1" ] && [ -n "$s1" ] && [ -n "$q4" ] || fail "no QPNs in b's output"
total=$(ts -Y 'udp.dstport == 4791' | wc -l)
[ "$total" -eq 2013 ] || fail "capture: $total RoCE v2 packets, expected 5+5+3+2000"
ib=$(ts -T fields -e frame.protocols | grep -c '^eth:ethertype:ip:udp:infiniband:data$')
[ "$ib" -eq 2013 ] || fail "capture: $ib of 2013 decoded as eth:ip:udp:infiniband:data"
ud=$(ts -Y 'infiniband.bth.opcode == 100' | wc -l)	# UD SEND Only
[ "$ud" -eq 2013 ] || fail "capture: $ud UD SEND Only packets of 2013"
bad=$(ts -Y '_ws.malformed || _ws.expert.severity == error' | wc -l)
[ "$bad" -eq 0 ] || { ts -Y '_ws.malformed || _ws.expert.severity == error' | head; fail "capture: $bad malformed or erroneous packets"; }
# phase 1: to b's QP from a's, Q_Key 0x0b1b, payloads uc-0..uc-4 in order
f1=$(ts -Y "ip.src == 10.77.0.1 && infiniband.bth.destqp == $q1 && infiniband.deth.srcqp == $s1 && infiniband.deth.q_key == 0x0b1b" \
	-T fields -e data.data)
[ "$(echo "$f1" | wc -l)" -eq 5 ] || fail "capture: phase 1 packets: $f1"
[ "$(echo "$f1" | xxd -r -p)" = "uc-0uc-1uc-2uc-3uc-4" ] ||
	fail "capture: phase 1 payloads: $f1"
# phase 2: b -> a, bu-0..bu-4
f2=$(ts -Y 'ip.src == 10.77.0.2 && ip.dst == 10.77.0.1' -T fields -e data.data |
	xxd -r -p)
[ "$f2" = "bu-0bu-1bu-2bu-3bu-4" ] || fail "capture: phase 2 payloads: $f2"
# phase 3: to the IPv4 group (and its Ethernet multicast MAC), QPN 0xffffff
f3=$(ts -Y 'ip.dst == 239.1.2.3 && eth.dst == 01:00:5e:01:02:03 && infiniband.bth.destqp == 0xffffff' \
	-T fields -e data.data | xxd -r -p)
[ "$f3" = "mc-0mc-1mc-2" ] || fail "capture: phase 3 payloads: $f3"
# phase 4: 2000 datagrams of 1000 bytes to q4, SEQ00000000 .. SEQ00001999
n4=$(ts -Y "infiniband.bth.destqp == $q4 && data.len == 1000" | wc -l)
[ "$n4" -eq 2000 ] || fail "capture: phase 4: $n4 1000-byte datagrams"
h4=$(ts -Y "infiniband.bth.destqp == $q4" -T fields -e data.data |
	cut -c1-22 | xxd -r -p | fold -w 11 | sort -u | wc -l)
[ "$h4" -eq 2000 ] || fail "capture: phase 4: $h4 distinct sequence headers"
last=$(ts -Y "infiniband.bth.destqp == $q4" -T fields -e data.data | tail -n1 |
	cut -c1-22 | xxd -r -p)
[ "$last" = "SEQ00001999" ] || fail "capture: phase 4: last header $last"
ok "capture: 2013 RoCE v2 UD SEND Only packets (tshark infiniband), payloads uc/bu/mc/SEQ as sent, none malformed"
