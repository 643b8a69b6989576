#!/bin/bash
# The umad provider (fabric/prov_umad.c) on Soft-RoCE between two guests,
# with only rdma_rxe and ib_umad loaded: fab_query_port() against sysfs and
# ibstat; CM-class (0x07) MADs from guest a's QP1 to guest b's and back,
# with a GRH each way (madtest ping / echo): Get/GetResp between IPv6
# GIDs, Send/Send between IPv4 GIDs, TransactionID, payload and GIDs
# checked; what RoCE cannot do (no GRH, SA, SMPs) failing clearly; what
# the kernel drops (CM Gets but ClassPortInfo, responses between IPv4
# GIDs); the kernel's ib_cm owning the CM class's Send.  Guest a's capture is
# decoded on the host by tshark: RoCEv2, UD to QP1, the MADs, nothing
# malformed.
. "$(dirname "$0")/lib.bash"
for g in a:10.77.0.1:ping:10.77.0.2 b:10.77.0.2:echo:10.77.0.1; do
	IFS=: read -r n addr role peer <<<"$g"
	vm_guest "$n" --addr "$addr/24" --modprobe rdma_rxe --modprobe ib_umad \
		--rxe rxe0:eth0 --timeout 200 \
		--script "tests/vm/guest/umad_rxe.sh $role $peer"
done
vm_link a b
vm_run_checked 260
for line in "port: state 4, lid 0" "a MAD without GRH" "an SA agent is refused" \
	"SMP classes (QP0) are refused" "smpquery: no QP0 agent" \
	"a CM-class Get of attribute 0xff01 gets no answer" \
	"a response over IPv4 RoCE v2 is not delivered" \
	"Set(ClassPortInfo) nobody serves" "Get -> GetResp" "Send -> Send"; do
	vm_output a | grep -q "^ok(a): $line" || fail "a: no '$line'"
done
for line in "port: state 4, lid 0" "madtest echo answered 2" \
	"with ib_cm loaded, the CM class's Send is refused" \
	"with ib_cm loaded, a responses-only"; do
	vm_output b | grep -q "^ok(b): $line" || fail "b: no '$line'"
done
# the echo saw the requests come from a's GIDs, to its own entries
for g in "fe80::5054:ff:fe12:1 sgid_index 0" "::ffff:10.77.0.1 sgid_index 1"; do
	vm_output b | grep -q "^mad rx from lid 0x0000 qpn 0x000001 qkey 0x80010000 .* grh 1 gid $g " ||
		fail "b: no request from a's GID ${g% sgid*}"
done
ok "umad on rxe: port query, CM-class Get (IPv6) and Send (IPv4) round trips with GRH, RoCE limits"

pcap=$VM_DIR/a/mad.pcap
[ -s "$pcap" ] || fail "no capture at $pcap"
# (tshark's stderr has its "Running as user root" warning)
bad=$(tshark -r "$pcap" -Y _ws.malformed 2>"$VM_DIR/tshark.err") ||
	fail "tshark: $(cat "$VM_DIR/tshark.err")"
[ -z "$bad" ] || fail "malformed packets in the capture: $bad"
tshark -r "$pcap" -Y infiniband.mad -T fields -E separator=, \
	-e ip.src -e ipv6.src -e ip.dst -e ipv6.dst -e udp.dstport \
	-e infiniband.bth.opcode -e infiniband.bth.destqp \
	-e infiniband.deth.q_key -e infiniband.deth.srcqp \
	-e infiniband.mad.mgmtclass -e infiniband.mad.classversion \
	-e infiniband.mad.method -e infiniband.mad.status \
	-e infiniband.mad.transactionid >"$VM_DIR/mads.csv" \
	2>"$VM_DIR/tshark.err" ||
	fail "tshark: $(cat "$VM_DIR/tshark.err")"
# one line a MAD: src dst port opcode dqp qkey sqp class version method
# status tid (IPv4 or IPv6 addresses, whichever the packet has)
awk -F, '{ $1 = $1 $2; $2 = $3 $4; $3 = ""; $4 = ""; print }' \
	"$VM_DIR/mads.csv" | tr -s ' ' >"$VM_DIR/mads.txt"
sed 's/^/  /' "$VM_DIR/mads.txt"
A4=10.77.0.1 B4=10.77.0.2 A6=fe80::5054:ff:fe12:1 B6=fe80::5054:ff:fe12:2
# UD SEND_ONLY (0x64 = 100) to QP1, Q_Key 0x80010000, from QP1, CM v2
want() {	# SRC DST METHOD STATUS TID-LOW32 WHAT
	grep -Eq "^$1 $2 4791 100 (1|0x0*1) 0x0*80010000 (1|0x0*1) 0x0*7 (2|0x0*2) $3 $4 0x[0-9a-f]{8}$5$" \
		"$VM_DIR/mads.txt" || fail "tshark: no $6"
}
want $A4 $B4 0x0*1 0x0000 00001110 "dropped Get a -> b"
want $A4 $B4 0x0*2 0x0000 00001111 "Set a -> b (IPv4)"
want $B4 $A4 0x0*81 0x000c 00001111 "GetResp(0x000c) b -> a (IPv4, not delivered)"
want $A6 $B6 0x0*2 0x0000 00001112 "Set a -> b (IPv6)"
want $B6 $A6 0x0*81 0x000c 00001112 "GetResp(0x000c) b -> a (IPv6)"
want $A6 $B6 0x0*1 0x0000 12345678 "Get a -> b"
want $B6 $A6 0x0*81 0x0000 12345678 "GetResp b -> a"
want $A4 $B4 0x0*3 0x0000 cafe5e4d "Send a -> b"
want $B4 $A4 0x0*3 0x0000 cafe5e4d "Send b -> a"
ok "tshark: $(wc -l <"$VM_DIR/mads.txt") MADs as RoCEv2 UD QP1 -> QP1 over IPv4 and IPv6, Get/Set/GetResp/Send with their TIDs, none malformed"
