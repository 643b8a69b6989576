#!/bin/bash
# ibgwd bridging RDS and UDP with the kernel's RDS/IB as the IB host, over
# Soft-RoCE between two guests (issue 15, item 4's last clause).
#   a 10.77.0.1: rds_rdma over rxe0, python3 socket.AF_RDS
#       (tests/vm/guest/rds_gw_ib.py); 10.2.0.0/24 via b
#   b 10.77.0.2: ibgwd, fabric verbs:rxe0, a router partition with
#       rds = on and rds_exports = 9000=10.77.0.1:7000; its LAN a veth
#       (10.2.0.1) into a namespace with the LAN host 10.2.0.2, 10.2.0.3:
#       python3 UDP (tests/vm/guest/rds_gw_lan.py) and socat
# Proved (guest script tests/vm/guest/rds_gateway_kernel_peer.sh):
# (a) a's AF_RDS to 10.2.0.2:5000 (python3's UDP echo) and :5001 (socat's):
#     300 + 40 datagrams of 16 B to 65507 (up to 16 RDS fragments), each
#     received on the LAN intact and in order from 10.2.0.1:4000 / :4001
#     (the gateway's LAN address, the IB sender's port), each answer back
#     at a's socket from 10.2.0.2:5000 / :5001, byte for byte, in order;
# (b) the export: python3 (200 datagrams) and socat (10, up to 60 KB)
#     from 10.2.0.3 to 10.2.0.1:9000 reach a's AF_RDS socket on 7000 from
#     10.2.0.3 (the LAN client's address as the RDS source), its answers
#     reach the clients from 10.2.0.1:9000;
# (c) 65508 and 100000 bytes from a: counted (drop_oversize 2, in
#     ibgwctl show stats and the metrics) and dropped, the flow goes on;
# the counters of the rds side agree (udp_tx, udp_rx, exported,
# conns_passive/conns_active, rx_msgs, tx_msgs), UDP from the IB side to
# a mapping's port is dropped (drop_not_lan), a's dmesg shows the
# kernel's RDS/IB connections to the LAN addresses (version 3.1), and b's
# capture of the guest link, decoded here by tshark, shows what RoCE needs
# of the gateway: a's CM REQ to port 18634 names 10.2.0.2 in the IP
# destination (the DGID) and in the RDS private data (dp_daddr), and the
# RC traffic both ways carries the LAN addresses.
. "$(dirname "$0")/lib.bash"
for f in ibgwd ibgwctl; do
	[ -x "$BIN/$f" ] || fail "no $BIN/$f (make all)"
done
for t in tshark socat tcpdump python3; do
	command -v $t >/dev/null || fail "no $t (run 'make deps')"
done
S=tests/vm/guest/rds_gateway_kernel_peer.sh
vm_guest a --addr 10.77.0.1/24 --modprobe rds_rdma --modprobe rdma_rxe \
	--rxe rxe0:eth0 --script "$S a 10.77.0.2 $BIN" --timeout 300
vm_guest b --addr 10.77.0.2/24 --modprobe rdma_ucm --modprobe rdma_rxe \
	--modprobe veth --rxe rxe0:eth0 --script "$S b 10.77.0.1 $BIN" \
	--timeout 300
vm_link a b
vm_run_checked 360
A=$(vm_output a) B=$(vm_output b)
has() {	# OUTPUT REGEXP WHAT
	echo "$1" | grep -Eq -- "$2" || fail "$3"
}
has "$B" '^ok\(b\): rds_gids: 10\.2\.0\.2 and 10\.2\.0\.3 are GIDs of rxe0 \(ibgwd made them\)' "b: the LAN addresses' GIDs (rds_gids)"
has "$B" '^ok\(b\): ibgwd stopped: the GIDs, addresses, rule and routes of rds_gids are gone' "b: rds_gids undone at stop"
has "$B" '^ok\(b\): ibgwd: partition p1: RoCE port' "b: ibgwd's RoCE partition"
has "$A" '^ok\(a\): flow 10\.77\.0\.1:4000 -> 10\.2\.0\.2:5000: 300 datagrams .* from 10\.2\.0\.2:5000, 2 oversize sent' "a: the flow to python3's echo"
has "$A" '^ok\(a\): flow 10\.77\.0\.1:4001 -> 10\.2\.0\.2:5001: 40 datagrams' "a: the flow to socat's echo"
has "$A" '^ok\(a\): export 10\.77\.0\.1:7000: 210 datagrams from 10\.2\.0\.3:6000 10\.2\.0\.3:6100 echoed' "a: the export's datagrams"
has "$B" '^ok\(b\): lan: echo 10\.2\.0\.2:5000: 300 datagrams from 10\.2\.0\.1:4000 intact and in order' "b: the LAN echo"
has "$B" '^ok\(b\): lan: client 10\.2\.0\.3:6000 -> 10\.2\.0\.1:9000: 200 datagrams answered' "b: the LAN client"
has "$B" '^ok\(b\): socat 10\.2\.0\.3:6100 -> export 10\.2\.0\.1:9000: 10 of 10' "b: socat through the export"
ok "(a) a's AF_RDS -> 10.2.0.2:5000 (python3) and :5001 (socat): 300 + 40 datagrams of 16 B .. 65507 received intact and in order from 10.2.0.1:4000 / :4001, every answer back at a's socket from 10.2.0.2:5000 / :5001"
ok "(b) the export 10.2.0.1:9000 -> 10.77.0.1:7000: 200 (python3) + 10 (socat) datagrams reached a's AF_RDS socket from 10.2.0.3, the answers reached the clients from 10.2.0.1:9000"

st() {	# NAME: b's ibgwctl show stats, side rds
	echo "$B" | sed -n 's/^ok(b): stats rds: //p' | tr ';' '\n' |
		awk -v n="$1" '$1 == n { print $2 }'
}
me() {	# NAME: b's metric ibgw_rds_NAME_total
	echo "$B" | sed -n 's/^ok(b): metrics: //p' | tr ';' '\n' |
		awk -v n="ibgw_rds_$1_total" '$1 == n { print $2 }'
}
echo "b's rds counters: $(echo "$B" | sed -n 's/^ok(b): stats rds: //p')"
eq() {	# NAME WANT
	local v
	v=$(st "$1")
	[ "$v" = "$2" ] || fail "show stats: rds $1 is '${v}', not $2"
}
ge() {	# NAME MIN
	local v
	v=$(st "$1")
	[ -n "$v" ] && [ "$v" -ge "$2" ] || fail "show stats: rds $1 is '${v}', not at least $2"
}
# IB -> LAN: 300 + 40 to the echoes and 210 export answers; LAN -> IB:
# 300 + 40 echoes and 210 through the export
eq udp_tx 550
eq udp_rx 550
eq exported 210
eq drop_oversize 2
for n in drop_malformed drop_limit drop_congested drop_udp_tx drop_rds_tx drop_family; do
	eq $n 0
done
# a's UDP datagram from 10.77.0.1 to the mapping's port: the IB side
eq drop_not_lan 1
ge conns_passive 1	# a connected to 10.2.0.2
ge conns_active 1	# the export's flow from 10.2.0.3
ge rx_msgs 552
ge tx_msgs 550
[ "$(me drop_oversize)" = 2 ] || fail "metrics: ibgw_rds_drop_oversize_total is '$(me drop_oversize)', not 2"
[ "$(me udp_tx)" = 550 ] || fail "metrics: ibgw_rds_udp_tx_total is '$(me udp_tx)'"
ok "(c) 65508 and 100000 bytes from a counted and dropped (drop_oversize 2 in show stats and the metrics), the flow went on; rds side: udp_tx 550, udp_rx 550, exported 210, conns_passive $(st conns_passive), conns_active $(st conns_active), rx_msgs $(st rx_msgs), tx_msgs $(st tx_msgs), no other drop"
ok "a UDP datagram from the IB side (10.77.0.1) to the mapping's port 4000: drop_not_lan 1 (on RoCE the IB side is what the kernel routes from the port's own address)"
has "$A" '^ok\(a\): dmesg: ' "a: no RDS/IB connections in dmesg"
ok "a's dmesg: $(echo "$A" | sed -n 's/^ok(a): dmesg: //p')"

capture $VM_DIR/b/gw.pcap
no_malformed
q='infiniband.mad.mgmtclass == 0x07 && infiniband.mad.attributeid == 0x0010 && infiniband.cm.req.serviceid.dport == 18634'
echo "capture: CM REQs to port 18634 (IP source, destination, RDS private data):"
ts -Y "$q" -T fields -e ip.src -e ip.dst -e infiniband.cm.req.ip_cm.dip4 \
	-e infiniband.cm.req.ip_cm.private | cut -c1-120 | sort | uniq -c | sed 's/^/  /'
n=$(cnt "$q && ip.src == 10.77.0.1 && ip.dst == 10.2.0.2 && infiniband.cm.req.ip_cm.dip4 == 10.2.0.2")
[ "$n" -ge 1 ] || fail "capture: no CM REQ from a to 10.2.0.2 (the LAN address in the IP header / DGID and in rdma_cm's header)"
pd=$(ts -Y "$q && ip.src == 10.77.0.1" -T fields -e infiniband.cm.req.ip_cm.private | head -n1 | tr -d ':')
case "$pd" in
0a4d00010a0200020301*) ;;
*) fail "capture: a's REQ's RDS private data is not dp_saddr 10.77.0.1, dp_daddr 10.2.0.2, version 3.1: ${pd:0:40}" ;;
esac
n2=$(cnt "$q && ip.src == 10.77.0.2 && ip.dst == 10.77.0.1")
pd2=$(ts -Y "$q && ip.src == 10.77.0.2" -T fields -e infiniband.cm.req.ip_cm.private | head -n1 | tr -d ':')
case "$pd2" in
0a0200030a4d00010301*) ;;
*) fail "capture: the gateway's REQ (the export's flow) is not dp_saddr 10.2.0.3, dp_daddr 10.77.0.1, version 3.1: ${pd2:0:40}" ;;
esac
to_lan=$(cnt 'udp.dstport == 4791 && ip.src == 10.77.0.1 && ip.dst == 10.2.0.2 && infiniband.bth.opcode <= 4')
from_lan=$(cnt 'udp.dstport == 4791 && ip.src == 10.2.0.2 && ip.dst == 10.77.0.1')
[ "$to_lan" -ge 300 ] || fail "capture: $to_lan RC SENDs from a to 10.2.0.2"
[ "$from_lan" -ge 300 ] || fail "capture: $from_lan RoCE packets from 10.2.0.2 (the gateway, for the LAN host) to a"
ok "capture: a's CM REQ to 18634 for 10.2.0.2 carries it as the IP destination (the DGID), in rdma_cm's header and as dp_daddr (version 3.1); $n2 REQ(s) of the gateway for the export's flow (dp_saddr 10.2.0.3, from its own address); $to_lan RC SENDs a -> 10.2.0.2 and $from_lan packets 10.2.0.2 -> a terminated and sent by the gateway; none malformed"
