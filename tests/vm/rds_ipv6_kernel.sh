#!/bin/bash
# RDS over IPv6 between our RDS and the kernel's RDS/IB, two guests over
# Soft-RoCE (issue 15): on a (fd00:77::1) the host's RDS service (ipoibd
# --sdp-only --fabric verbs:rxe0:1:ipv6, no rds module) and tests/rds_sock_bench
# under libibgw_preload.so; on b (fd00:77::2) the kernel's rds_rdma and
# the same rds_sock_bench without it (python3's socket module gives
# AF_RDS IPv4 addresses only).  Both ways (guest script
# tests/vm/guest/rds_ipv6_peer.sh): round trips of 64 B, 9000 B and 1 MiB,
# each echo from the echo's IPv6 address and port, and 2000 messages of
# 3000 B all counted by the sink.  b's capture decoded here by tshark:
# CM REQs to rdma_cm's TCP port space port 16385 (RDS_CM_PORT) with
# rdma_cm's IPv6 header and the 56-byte RDS/IB private data (dp_saddr,
# dp_daddr as in6_addr, then the version), REPs, nothing malformed; b's
# dmesg names the connection by the IPv6 addresses.
. "$(dirname "$0")/lib.bash"
for t in tshark; do
	command -v $t >/dev/null || fail "no $t (run 'make deps')"
done
[ -x "$BIN/tests/rds_sock_bench" ] || fail "no $BIN/tests/rds_sock_bench (make all)"
[ -f "$BIN/libibgw_preload.so" ] || fail "no $BIN/libibgw_preload.so (make all)"
S=tests/vm/guest/rds_ipv6_peer.sh
vm_guest a --addr 10.77.0.1/24 --modprobe rdma_ucm --modprobe rdma_rxe \
	--rxe rxe0:eth0 --script "$S a $BIN" --timeout 400
vm_guest b --addr 10.77.0.2/24 --modprobe rdma_ucm --modprobe rdma_rxe \
	--rxe rxe0:eth0 --script "$S b $BIN" --timeout 400
vm_link a b
vm_run_checked 460
A=$(vm_output a) B=$(vm_output b)
has() {	# OUTPUT REGEXP WHAT
	echo "$1" | grep -Eq -- "$2" || fail "$3"
}
for p in 1 2; do
	[ $p = 1 ] && c="$A" s="$B" cn=a sn=b
	[ $p = 2 ] && c="$B" s="$A" cn=b sn=a
	for sz in 64 9000 1048576; do
		has "$c" "^ok\\($cn\\): phase $p: rds_sock_bench: [0-9]+ round trips of $sz bytes" \
			"$cn: no round trips of $sz bytes through $sn's echo"
	done
	has "$c" "^ok\\($cn\\): phase $p: rds_sock_bench: sent 2000 msgs .* received 2000" \
		"$cn: $sn's sink did not count 2000 messages"
	has "$s" "^ok\\($sn\\): phase $p: served" "$sn: phase $p"
done
ok "a (ours, under the preload) -> b (kernel): round trips of 64 B, 9000 B, 1 MiB; 2000 x 3000 B all counted"
ok "b (kernel) -> a (ours, under the preload): the same"
tx=$(echo "$A" | sed -n 's/.*rds_service\.tx_msgs \([0-9]*\).*/\1/p')
rx=$(echo "$A" | sed -n 's/.*rds_service\.rx_msgs \([0-9]*\).*/\1/p')
[ "${tx:-0}" -ge 2405 ] && [ "${rx:-0}" -ge 2405 ] ||
	fail "a: the service carried tx ${tx:-none} rx ${rx:-none} messages (2405 each way at least)"
ok "a: the host's RDS service carried $tx messages out and $rx in"
has "$B" '^ok\(b\): dmesg: RDS/IB conn connected <fd00:77::2,fd00:77::1,0>' "b: no IPv6 RDS/IB connection in dmesg"
ok "b's dmesg: $(echo "$B" | sed -n 's/^ok(b): dmesg: //p')"

capture $VM_DIR/b/rds6.pcap
echo "capture: $(cnt 'udp.dstport == 4791') RoCE v2 packets"
no_malformed
q='infiniband.mad.mgmtclass == 0x07 && infiniband.mad.attributeid == 0x0010 && infiniband.cm.req.serviceid.protocol == 6 && infiniband.cm.req.serviceid.dport == 16385'
# an IPv6 address as the 32 hex digits of its in6_addr
hex6() {
	python3 -c 'import ipaddress,sys; print(ipaddress.IPv6Address(sys.argv[1]).packed.hex())' "$1"
}
nreq=0
while read -r sip dip ipv pd; do
	pd=$(echo "$pd" | tr -d ':')
	echo "REQ $sip -> $dip (rdma_cm IP version $ipv): ${pd:0:72}"
	case "$ipv" in 6|0x6|0x06) ;; *) fail "capture: the REQ's rdma_cm header says IP version $ipv" ;; esac
	case "$pd" in
	"$(hex6 "$sip")$(hex6 "$dip")"0[34]0?*) ;;
	*) fail "capture: the REQ $sip -> $dip does not carry dp_saddr $sip, dp_daddr $dip (in6_addr) and a version: ${pd:0:72}" ;;
	esac
	[ $((${#pd} / 2)) -ge 56 ] || fail "capture: the REQ's RDS private data is $((${#pd} / 2)) bytes (56 for IPv6)"
	nreq=$((nreq + 1))
done < <(ts -Y "$q" -T fields -e infiniband.cm.req.ip_cm.sip6 \
	-e infiniband.cm.req.ip_cm.dip6 -e infiniband.cm.req.ip_cm.ipv \
	-e infiniband.cm.req.ip_cm.private)
[ "$nreq" -ge 1 ] || fail "capture: no CM REQ to RDMA_PS_TCP port 16385"
nrep=$(cnt 'infiniband.mad.mgmtclass == 0x07 && infiniband.mad.attributeid == 0x0013')
[ "$nrep" -ge 1 ] || fail "capture: no CM REP"
sends=$(cnt 'infiniband.bth.opcode == 4 || infiniband.bth.opcode == 0')
[ "$sends" -ge 4000 ] || fail "capture: $sends RC SENDs"
ok "capture: $nreq CM REQ(s) to port 16385 with dp_saddr/dp_daddr as in6_addr (56 bytes), $nrep REP(s), $sends RC SENDs, nothing malformed"
