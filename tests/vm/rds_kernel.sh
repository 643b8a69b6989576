#!/bin/bash
# Our RDS against the kernel's RDS/IB between two guests over Soft-RoCE.
# a (10.77.0.1): rdma_rxe and rdma_ucm, no rds module (rdspeer owns
# rdma_cm's RDS ports 18634/16385; socket(AF_RDS) does not auto-load rds:
# no module claims net-pf-21), tests/rdspeer --fabric verbs:rxe0.  b
# (10.77.0.2): the kernel's rds_rdma driven by tests/vm/guest/rds_kpeer.py
# (socket.AF_RDS, the same payload and checks).  Cases (guest script
# tests/vm/guest/rds_kernel_peer.sh): messages of 16 B to 1 MiB both ways
# (up to 256 fragments), 16 ports each way, 10,000 messages on
# two of them (200 on the others), none lost, duplicated, reordered or corrupt; a burst of
# 1000 messages (6 MB) into a kernel socket with a 16 KiB SO_RCVBUF that
# reads nothing for 3 s (the kernel marks the port congested, our
# endpoint hears it: cong_rx, then every message arrives); pings both
# ways; the kernel's modules removed and loaded again under one rdspeer
# (what was acknowledged arrived before; round trips through our echo
# port and 500 messages from the new kernel after).  b's capture of the
# guest link decoded here by tshark: RoCE v2 RC SENDs, CM REQs to
# rdma_cm's TCP port space port 18634 with the RDS/IB private
# data (dp_saddr, dp_daddr, version 3.1), REPs, nothing malformed; b's
# dmesg "RDS/IB: ... conn connected ... version 3.1".
#   rds_kernel.sh [--kernel|--preload]
#     --kernel: the kernel's RDS on a too (the harness checking itself);
#     --preload: on a the same rds_kpeer.py under libibgw_preload.so, the
#     host's RDS service being ipoibd --sdp-only on verbs:rxe0, no rds
#     module (tests/vm/rds_preload_kernel.sh: the user's path)
. "$(dirname "$0")/lib.bash"
mode=ours
[ "${1:-}" = --kernel ] && mode=kernel
[ "${1:-}" = --preload ] && mode=preload
command -v tshark >/dev/null || fail "no tshark (run 'make deps')"
if [ $mode != kernel ]; then
	[ -x "$BIN/tests/rdspeer" ] || fail "no $BIN/tests/rdspeer (make all)"
	[ -f "$BIN/libibgw_preload.so" ] || fail "no $BIN/libibgw_preload.so (make all)"
	amods="--modprobe rdma_ucm --modprobe rdma_rxe"
else
	amods="--modprobe rds_rdma --modprobe rdma_rxe"
fi
S=tests/vm/guest/rds_kernel_peer.sh
# shellcheck disable=SC2086
vm_guest a --addr 10.77.0.1/24 $amods --rxe rxe0:eth0 \
	--script "$S a 10.77.0.2 $BIN $mode" --timeout 420
vm_guest b --addr 10.77.0.2/24 --modprobe rds_rdma --modprobe rdma_rxe \
	--rxe rxe0:eth0 --script "$S b 10.77.0.1 $BIN $mode" --timeout 420
vm_link a b
vm_run_checked 480
A=$(vm_output a) B=$(vm_output b)
has() {	# OUTPUT REGEXP WHAT
	echo "$1" | grep -Eq -- "$2" || fail "$3"
}
has "$A" '^ok\(a\): phase 1 in ' "a: phase 1 did not pass"
has "$B" '^ok\(b\): phase 1: rds_kpeer: ok ' "b: phase 1 did not pass"
has "$B" '^ok\(b\): burst: rds_kpeer: ok expected 1000 msgs \(1 flows\)' "b: the burst did not arrive"
kc() {	# NAME: b's kernel counter after the burst
	echo "$B" | sed -n "s/^ok(b): p1 kernel .*\<$1 \([0-9]*\).*/\1/p"
}
echo "b's kernel after the burst: $(echo "$B" | sed -n 's/^ok(b): p1 kernel //p')"
[ "$(kc cong_update_queued)" -ge 2 ] ||
	fail "b's kernel queued $(kc cong_update_queued) congestion updates (congested, then clear: 2 at least)"
ok "b: 1000 messages (4000-8000 B) into a 16 KiB SO_RCVBUF held 3 s: the kernel queued $(kc cong_update_queued) congestion map updates, then took every message in order"
if [ $mode != kernel ]; then
	has "$A" '^ok\(a\): no rds module on a, none auto-loaded' "a: rds loaded"
	has "$A" '^ok\(a\): still no rds module on a' "a: rds loaded during the run"
	ac() {	# PHASE NAME: a counter of rdspeer's
		echo "$A" | sed -n "s/^ok(a): $1 counters .*\<$2 \([0-9]*\).*/\1/p" | head -n1
	}
	echo "a's counters, phase 1: $(echo "$A" | sed -n 's/^ok(a): p1 counters //p')"
	echo "a's counters, phase 3: $(echo "$A" | sed -n 's/^ok(a): p3 counters //p')"
	cr=$(ac p1 rds.cong_rx)
	[ -z "$cr" ] && cr=$(ac p1 cong_rx)
	[ "${cr:-0}" -ge 2 ] || fail "a: cong_rx ${cr:-none} in phase 1 (the map on connect and the burst's updates)"
	ok "a: $([ $mode = ours ] && echo rdspeer || echo "the host's RDS service") heard $cr congestion map updates from b's kernel"
	if [ $mode = preload ]; then
		# what a's program sent and took went through the service
		tx=$(ac p1 rds_service.tx_msgs) rx=$(ac p1 rds_service.rx_msgs)
		[ "${tx:-0}" -ge 22604 ] && [ "${rx:-0}" -ge 21604 ] ||
			fail "a: the service carried tx ${tx:-none} rx ${rx:-none} messages in phase 1 (22604 and 21604 at least)"
		ok "a: the host's RDS service carried the program's $tx messages out and $rx in"
	fi
fi
ok "messages of 16 B to 1 MiB both ways, 16 ports each way (10,000 messages on two of them), 1000 past b's receive buffer: none lost, duplicated, reordered or corrupt; pings answered both ways"
has "$B" '^ok\(b\): before the restart: rds_kpeer: ok ' "b: phase 3 before the restart"
has "$B" '^ok\(b\): rmmod rds_rdma rds' "b: rmmod"
has "$B" '^ok\(b\): after the restart: rds_kpeer: ok ' "b: nothing after the restart"
has "$A" '^ok\(a\): phase 3: ' "a: phase 3 did not pass"
rtt=$(echo "$B" | sed -n 's/^ok(b): rds_kpeer: rtt \([0-9]*\) msgs.*median_us \([0-9]*\).*/\1 round trips through the echo port on a (median \2 us)/p')
resent=$(echo "$B" | sed -n 's/.*after the restart: rds_kpeer: ok .*, \([0-9]*\) resent).*/\1/p')
[ -n "$rtt" ] || fail "b: no round trips after the restart"
ok "the kernel restarted (rmmod rds_rdma rds; modprobe rds_rdma) under one peer on a: 500 a -> b and 500 b -> a, acknowledged before, all arrived; after it $rtt and 500 more b -> a on the new connection; ${resent:-0} of a's messages resent to the new kernel (already had: tolerated)"
has "$B" '^ok\(b\): dmesg: [0-9]+ RDS/IB conn connected' "b: no RDS/IB connection in dmesg"
ok "b's dmesg: $(echo "$B" | sed -n 's/^ok(b): dmesg: //p')"

capture $VM_DIR/b/rds.pcap
echo "capture: $(cnt 'udp.dstport == 4791') RoCE v2 packets"
no_malformed
# CM REQs to rdma_cm's TCP port space, port 18634 (RDS_PORT), rdma_cm's
# header, then the RDS/IB private data (IPv4, 32 bytes big-endian):
# 0 dp_saddr, 4 dp_daddr, 8 major 3, 9 minor 1, 10 minor_mask, 12 tos,
# 16 ack_seq, 24 credit
q='infiniband.mad.mgmtclass == 0x07 && infiniband.mad.attributeid == 0x0010 && infiniband.cm.req.serviceid.protocol == 6 && infiniband.cm.req.serviceid.dport == 18634'
hex() {	# dotted IPv4 -> 8 hex digits
	printf '%02x' $(echo "$1" | tr . ' ')
}
nreq=0 dirs=""
while read -r sip dip pd; do
	pd=$(echo "$pd" | tr -d ':')
	echo "$sip -> $dip ${pd:0:64}" >>"$VM_DIR/reqs"
	case "$pd" in
	"$(hex $sip)$(hex $dip)0301"*) ;;
	*) fail "capture: the REQ $sip -> $dip does not carry dp_saddr $sip, dp_daddr $dip, version 3.1: ${pd:0:64}" ;;
	esac
	nreq=$((nreq + 1))
	case " $dirs " in *" $sip "*) ;; *) dirs="$dirs $sip" ;; esac
done < <(ts -Y "$q" -T fields -e infiniband.cm.req.ip_cm.sip4 \
	-e infiniband.cm.req.ip_cm.dip4 -e infiniband.cm.req.ip_cm.private)
echo "capture: CM REQs to port 18634, RDS private data (dp_saddr dp_daddr major minor minor_mask tos pad ack_seq credit):"
sort "$VM_DIR/reqs" | uniq -c | sed 's/^/  /'
[ "$nreq" -ge 2 ] || fail "capture: $nreq CM REQs to RDMA_PS_TCP port 18634 (2 at least: before and after the restart)"
# the CM's fields as each side sets them, for the report (ours is a on
# 10.77.0.1, the kernel b): device limits (responder resources,
# initiator depth) may differ, the rest is the protocol's
echo "capture: CM REQ fields by sender (responder_res init_depth e2e_fc retry rnr_retry mtu srq resp_tout local_tout max_cm_retries ack_tout):"
ts -Y 'infiniband.mad.mgmtclass == 0x07 && infiniband.mad.attributeid == 0x0010' -T fields \
	-e ip.src -e infiniband.cm.req.responderres -e infiniband.cm.req.initdepth \
	-e infiniband.cm.req.e2eflowctrl -e infiniband.cm.req.retrcount \
	-e infiniband.cm.req.rnrretrcount -e infiniband.cm.req.pppmtu \
	-e infiniband.cm.req.srq -e infiniband.cm.req.remoteresptout \
	-e infiniband.cm.req.localresptout -e infiniband.cm.req.maxcmretr \
	-e infiniband.cm.req.prim_localacktout | sort | uniq -c | sed 's/^/  /'
echo "capture: CM REP fields by sender (resp_res init_depth e2e_fc rnr_retry srq failover target_ack_delay, RDS private data):"
ts -Y 'infiniband.mad.mgmtclass == 0x07 && infiniband.mad.attributeid == 0x0013' -T fields \
	-e ip.src -e infiniband.cm.rep.respres -e infiniband.cm.rep.initdepth \
	-e infiniband.cm.rep.e2eflowctrl -e infiniband.cm.rep.rnrretrcount \
	-e infiniband.cm.rep.srq -e infiniband.cm.rep.failoveracc \
	-e infiniband.cm.rep.tgtackdelay -e infiniband.cm.rep.private |
	awk '{ $NF = substr($NF, 1, 95); print }' | sort | uniq -c | sed 's/^/  /'
while read -r sip dip pd; do
	case "$pd" in
	"$(hex $sip)$(hex $dip)0301"*) ;;
	*) fail "capture: the REP $sip -> $dip does not carry dp_saddr $sip, dp_daddr $dip, version 3.1: ${pd:0:64}" ;;
	esac
done < <(ts -Y 'infiniband.mad.mgmtclass == 0x07 && infiniband.mad.attributeid == 0x0013' \
	-T fields -e ip.src -e ip.dst -e infiniband.cm.rep.private | tr -d ':')
echo "capture: CM REJs: $(cnt 'infiniband.mad.mgmtclass == 0x07 && infiniband.mad.attributeid == 0x0012'), DREQs: $(cnt 'infiniband.mad.mgmtclass == 0x07 && infiniband.mad.attributeid == 0x0015')"
nrep=$(cnt 'infiniband.mad.mgmtclass == 0x07 && infiniband.mad.attributeid == 0x0013')
[ "$nrep" -ge 2 ] || fail "capture: $nrep CM REPs"
tot=0
for op in 0 1 2 4 17; do
	n=$(cnt "udp.dstport == 4791 && infiniband.bth.opcode == $op")
	echo "capture: BTH opcode $op: $n"
	tot=$((tot + n))
done
[ "$(cnt 'infiniband.bth.opcode == 4 || infiniband.bth.opcode == 0')" -ge 25000 ] ||
	fail "capture: too few RC SENDs"
# SE (solicited event) on every whole-message SEND: the kernel sleeps
# on solicited completions only (ib_cm.c, IB_CQ_SOLICITED)
n=$(cnt 'infiniband.bth.opcode == 4 && infiniband.bth.se == 0')
[ "$n" -eq 0 ] || fail "capture: $n SEND ONLY packets without SE"
se=$(cnt 'ip.src == 10.77.0.1 && infiniband.bth.opcode == 4 && infiniband.bth.se == 1')
[ "$se" -ge 1000 ] || fail "capture: a sent $se SEND ONLY packets with SE"
# RNR NAKs: a's receiver stalled in phase 1 (mode ours/preload) until rxe0 answered 5,
# its receive queue full; the RNR timer its NAKs carry is how long b's
# kernel waits before it sends again: IB_RNR_TIMER_000_32 (code 10, as
# the kernel's RDS sets with rdma_set_min_rnr_timer), not rdma_cm's
# default 0 (655.36 ms, which made the guest benchmark's psock rows wait)
if [ $mode != kernel ]; then
	rnr=$(ts -Y 'ip.src == 10.77.0.1 && infiniband.bth.opcode == 17 && infiniband.aeth.syndrome.opcode == 1' \
		-T fields -e infiniband.aeth.syndrome.timer | sort | uniq -c | tr -s ' ')
	echo "capture: a's RNR NAKs by timer code: ${rnr:-none}"
	[ -n "$rnr" ] || fail "capture: no RNR NAK from a while its receiver was stalled"
	echo "$rnr" | awk '$2 != 10 { bad = 1 } END { exit bad }' ||
		fail "capture: a's RNR NAKs carry timer codes other than 10 (0.32 ms): $rnr"
	ok "capture: a's stalled receiver answered $(echo "$rnr" | awk '{ n += $1 } END { print n }') RNR NAKs, every one with timer code 10 (0.32 ms, the kernel's RDS's), not rdma_cm's 0 (655 ms)"
fi
ok "capture: $tot RoCE v2 RC packets (SEND, ACK), SE on every SEND ONLY ($se of them a's); $nreq CM REQs to RDMA_PS_TCP port 18634 (from$dirs) with rdma_cm's header and the RDS/IB private data (addresses, version 3.1); $nrep REPs; none malformed"
