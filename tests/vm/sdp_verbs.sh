#!/bin/bash
# SDP between two guests over Soft-RoCE (issue 14, item 5's last
# sentence): in each, ipoibd --sdp-only --fabric verbs:rxe0 (the SDP
# service alone, rdma_cm's profile: RDMA_PS_TCP service IDs, the 56-byte
# Hello), and unmodified programs under libibgw_preload.so, clients
# SDP-only by libsdp.conf: socat both ways with sha256 compared, iperf3
# a <- b, and the evidence that SDP carried it: both services' counters
# (SIGUSR1) against the bytes moved, and b's capture of the guest link
# decoded here by tshark: RoCE v2 RC traffic, the CM REQs to rdma_cm's TCP
# port space with rdma_cm's own header (the addresses) and our Hello
# after it, the REP's HelloAck, nothing malformed.  Then, in the same
# run, the compatibility table (issue 14, item 6): unmodified programs
# (socat, iperf3, curl against python3's http.server, a python3 asyncio
# server and client, a forking server with a threaded client, lighttpd
# with wget, node's http server and client) under
# rdma-core's librspreload (rsockets) and under ours; ours must work in
# every row, over RDMA (rxe0's packet counters during the row; our
# clients are SDP-only by libsdp.conf, rsockets may fall back to TCP).
. "$(dirname "$0")/lib.bash"
for f in ipoibd libibgw_preload.so; do
	[ -e "$BIN/$f" ] || fail "no $BIN/$f (make all)"
done
for t in tshark socat iperf3; do
	command -v $t >/dev/null || fail "no $t (run 'make deps')"
done
vm_guest a --addr 10.77.0.1/24 --modprobe rdma_ucm --modprobe rdma_rxe \
	--rxe rxe0:eth0 --script "tests/vm/guest/sdp_peer.sh a 10.77.0.2 $BIN" \
	--timeout 420
vm_guest b --addr 10.77.0.2/24 --modprobe rdma_ucm --modprobe rdma_rxe \
	--rxe rxe0:eth0 --script "tests/vm/guest/sdp_peer.sh b 10.77.0.1 $BIN" \
	--timeout 420
vm_link a b
vm_run_checked 480
A=$(vm_output a) B=$(vm_output b)
val() {	# OUTPUT SED-EXPR
	echo "$1" | sed -n "$2" | head -n1
}
has() {	# OUTPUT REGEXP
	echo "$1" | grep -Eq "$2" || fail "guest did not report: $2"
}
has "$A" '^ok\(a\): service: SDP service on @ibgw-sdp, over rdma_cm on RoCE from 10\.77\.0\.1 '
has "$B" '^ok\(b\): service: SDP service on @ibgw-sdp, over rdma_cm on RoCE from 10\.77\.0\.2 '
for d in up down; do
	sa=$(val "$A" "s/^ok(a): sha256 $d \([0-9a-f]*\) bytes \([0-9]*\)\$/\1 \2/p")
	sb=$(val "$B" "s/^ok(b): sha256 $d \([0-9a-f]*\) bytes \([0-9]*\)\$/\1 \2/p")
	[ -n "$sa" ] && [ "$sa" = "$sb" ] || fail "socat $d: a has '$sa', b has '$sb'"
done
ok "socat both ways under the preload over SDP: sha256 equal (b -> a $(val "$B" 's/^ok(b): sha256 up .* bytes //p') bytes, a -> b $(val "$B" 's/^ok(b): sha256 down .* bytes //p'))"
read -r bytes bps dtx < <(val "$B" 's/^ok(b): iperf3 bytes \([0-9]*\) bps \([0-9]*\) sdp.tx_bytes during it \([0-9]*\)$/\1 \2 \3/p')
[ -n "${bytes:-}" ] && [ "$bytes" -gt 0 ] || fail "no iperf3 result from b"
[ "$dtx" -ge "$bytes" ] || fail "iperf3 moved $bytes bytes, b's SDP sent $dtx meanwhile"
# counters: b made every connection over SDP (none failed), a took them
# all as SDP (no TCP accepted)
cb=$(val "$B" 's/^ok(b): counters //p') ca=$(val "$A" 's/^ok(a): counters //p')
echo "counters a: $ca"
echo "counters b: $cb"
c() {	# "LIST" NAME
	echo "$1" | tr ' ' '\n' | sed -n "/^$2\$/{n;p}"
}
[ "$(c "$cb" sdp.conns_active)" -ge 4 ] || fail "b made $(c "$cb" sdp.conns_active) SDP connections, expected 4 at least (socat x2, iperf3 control and data)"
[ "$(c "$cb" sdp.connect_failed)" -eq 0 ] || fail "b: SDP connects failed"
[ "$(c "$ca" sdp.conns_passive)" -ge 4 ] || fail "a took $(c "$ca" sdp.conns_passive) SDP connections"
[ "$(c "$ca" sdp_service.accepted_tcp)" -eq 0 ] || fail "a accepted TCP connections"
# --sdp-keepalive 1 and an idle connection (b's first socat waits 3 s
# before its data): probes went out over rxe, and none found a live
# connection dead (the sums above show the data after them intact)
[ "$(c "$cb" sdp.keepalive_probes)" -ge 1 ] || fail "b sent no keepalive probe over its idle connection"
[ "$(c "$cb" sdp.keepalive_dead)" -eq 0 ] && [ "$(c "$ca" sdp.keepalive_dead)" -eq 0 ] ||
	fail "keepalive found live connections dead (a $(c "$ca" sdp.keepalive_dead), b $(c "$cb" sdp.keepalive_dead))"
ok "keepalive over rxe: b sent $(c "$cb" sdp.keepalive_probes) probes (a $(c "$ca" sdp.keepalive_probes)), zero-length RDMA WRITEs without an R_Key, no live connection found dead"
rx=$(c "$ca" sdp.rx_bytes)
[ "$rx" -ge $((bytes + 4000000)) ] || fail "a's SDP received $rx bytes; b sent $bytes by iperf3 and 4000000 by socat"
ok "iperf3 b -> a under the preload: $bytes bytes at $((bps / 1000000)) Mb/s; SDP counters: b tx +$dtx during it, a rx $rx in all, $(c "$cb" sdp.conns_active) connections, none by TCP"

capture $VM_DIR/b/sdp.pcap
echo "capture: $(cnt 'udp.dstport == 4791') RoCE v2 packets"
no_malformed
# the REQs: rdma_cm's TCP port space (service ID 0x0000000001060000 |
# port), its IP header with the addresses, then our 56-byte Hello (MID 0,
# BSDH len 56, version 0x22, IPv4)
q='infiniband.mad.mgmtclass == 0x07 && infiniband.mad.attributeid == 0x0010'
for port in 7000 7002 5201; do
	n=$(cnt "$q && infiniband.cm.req.serviceid.protocol == 6 && infiniband.cm.req.serviceid.dport == $port && infiniband.cm.req.ip_cm.sip4 == 10.77.0.2 && infiniband.cm.req.ip_cm.dip4 == 10.77.0.1")
	[ "$n" -ge 1 ] || fail "capture: no CM REQ to RDMA_PS_TCP port $port from 10.77.0.2 to 10.77.0.1"
done
sid=$(ts -Y "$q" -T fields -e infiniband.cm.req.serviceid | head -n1)
hello=$(ts -Y "$q && infiniband.cm.req.serviceid.dport == 7000" -T fields -e infiniband.cm.req.ip_cm.private | head -n1 | tr -d ':')
echo "capture: REQ service ID $sid, consumer private data ${hello:0:112}"
case "$hello" in
00??????00000038????????????????224?00??????????????????????*) ;;
*) fail "capture: the REQ's private data is not a 56-byte SDP Hello: $hello" ;;
esac
n=$(cnt 'infiniband.mad.mgmtclass == 0x07 && infiniband.mad.attributeid == 0x0013 && infiniband.cm.rep.private[0:1] == 01')
[ "$n" -ge 4 ] || fail "capture: $n REPs carrying a HelloAck"
# RC traffic: SENDs (First/Middle/Last/Only) and ACKs
tot=0
for op in 0 1 2 4 17; do
	n=$(cnt "udp.dstport == 4791 && infiniband.bth.opcode == $op")
	echo "capture: BTH opcode $op: $n"
	tot=$((tot + n))
done
[ "$(cnt 'infiniband.bth.opcode == 4 || infiniband.bth.opcode == 0')" -ge 100 ] ||
	fail "capture: too few RC SENDs"
[ "$(cnt 'infiniband.bth.opcode == 17')" -ge 10 ] || fail "capture: too few RC ACKs"
# the keepalive probes: RDMA WRITE Only (opcode 10) of DMA length 0
ka=$(cnt 'udp.dstport == 4791 && infiniband.bth.opcode == 10 && infiniband.reth.dmalen == 0')
[ "$ka" -ge 1 ] || fail "capture: no zero-length RDMA WRITE (keepalive probe)"
echo "capture: $ka zero-length RDMA WRITEs (keepalive probes)"
ok "capture: $tot RoCE v2 RC packets (SEND, ACK); CM REQs to RDMA_PS_TCP ports 7000, 7002, 5201 with rdma_cm's header (10.77.0.2 -> 10.77.0.1) and the 56-byte Hello; REPs with the HelloAck; none malformed"

# the compatibility table
printf '\n%-10s %-40s %s\n' program rsockets ours
rows=0
while read -r prog rsr our; do
	printf '%-10s %-40s %s\n' "$prog" "$rsr" "$our"
	rows=$((rows + 1))
	case $our in ok,RDMA:*) ;; *) fail "compat: $prog under libibgw_preload.so: $our" ;; esac
done < <(echo "$B" | sed -n 's/^ok(b): compat \([a-z0-9]*\) rsockets \(.*\) ours \(.*\)$/\1 \2 \3/p')
[ "$rows" -eq 7 ] || fail "compat: $rows rows, expected 7"
ok "compatibility table: ours works in all $rows rows; rsockets in $(echo "$B" | grep -c '^ok(b): compat [a-z0-9]* rsockets ok,RDMA') over RDMA, $(echo "$B" | grep -c '^ok(b): compat [a-z0-9]* rsockets ok,TCP') by its TCP fallback"
